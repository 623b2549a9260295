//! What every host's hook does around its own steps: parse the event, find
//! its name and session, run the steps on one [`SessionTx`] and commit
//! them, turning any failure into a note (a hook never fails the host:
//! nothing on stdout, the reason on stderr, nothing half-applied).

use serde_json::Value;

use super::claude_code::HookReply;
use crate::error::Result;
use crate::store::SessionTx;
use crate::{SessionId, Store};

/// One hook event, as every host sends it: JSON with `hook_event_name`
/// and `session_id`.
pub(crate) struct HookEvent {
    /// `hook_event_name` (empty when missing).
    pub name: String,
    /// The session the event belongs to.
    pub session: SessionId,
    /// The whole event.
    pub json: Value,
}

impl HookEvent {
    /// Parses one event; `Err` is the reply for input that is not JSON or
    /// names no valid session (a note, nothing on stdout).
    pub(crate) fn parse(input: &str) -> std::result::Result<HookEvent, HookReply> {
        let ignored = |note: String| HookReply {
            stdout: None,
            notes: vec![note],
        };
        let json: Value = serde_json::from_str(input)
            .map_err(|e| ignored(format!("hook input is not JSON ({e}); ignored")))?;
        let name = json
            .get("hook_event_name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        let session = match json.get("session_id").and_then(Value::as_str) {
            Some(id) => SessionId::parse(id).map_err(|e| ignored(format!("{e}; ignored")))?,
            None => {
                return Err(ignored(format!(
                    "hook event {name:?} has no session_id; ignored"
                )));
            }
        };
        Ok(HookEvent {
            name,
            session,
            json,
        })
    }

    /// A whole hook event for a host that does nothing outside the
    /// transaction: [`HookEvent::parse`] `input`, then
    /// [`HookEvent::in_tx`] the steps, which get the event too.
    pub(crate) fn handle(
        store: &mut Store,
        input: &str,
        steps: impl FnOnce(&HookEvent, &SessionTx<'_>, &mut Vec<String>) -> Result<Option<Value>>,
    ) -> HookReply {
        match HookEvent::parse(input) {
            Ok(event) => event.in_tx(store, |tx, notes| steps(&event, tx, notes)),
            Err(reply) => reply,
        }
    }

    /// Runs `steps` in one transaction of the event's session and commits
    /// it when they succeed: the reply is what they return, with their
    /// notes. A failure anywhere rolls every step back and leaves only a
    /// note. Two hooks of one session run one after the other.
    pub(crate) fn in_tx(
        &self,
        store: &mut Store,
        steps: impl FnOnce(&SessionTx<'_>, &mut Vec<String>) -> Result<Option<Value>>,
    ) -> HookReply {
        let mut notes = Vec::new();
        let stdout = store.begin(&self.session).and_then(|tx| {
            let stdout = steps(&tx, &mut notes)?;
            tx.commit()?;
            Ok(stdout)
        });
        match stdout {
            Ok(stdout) => HookReply { stdout, notes },
            Err(e) => {
                notes.push(format!("{} hook failed: {e}", self.name));
                HookReply {
                    stdout: None,
                    notes,
                }
            }
        }
    }
}
