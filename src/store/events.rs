//! The append-only event log: every mutation and every failed agent call.

use serde::Serialize;

use super::sql::{Tx, params};
use crate::SessionId;
use crate::error::Result;

/// What part of the session an event changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    /// The todo list.
    Todo,
    /// The goal.
    Goal,
    /// A run of checks (`goalkeeper verify`; DESIGN.md §13).
    Check,
}

impl EventKind {
    /// The stored name: `todo`, `goal` or `check`.
    pub fn as_str(self) -> &'static str {
        match self {
            EventKind::Todo => "todo",
            EventKind::Goal => "goal",
            EventKind::Check => "check",
        }
    }

    fn parse(text: &str) -> EventKind {
        match text {
            "goal" => EventKind::Goal,
            "check" => EventKind::Check,
            _ => EventKind::Todo,
        }
    }
}

/// One entry of the event log, as `todo log` shows it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Event {
    /// Position in the log (global, increasing).
    pub id: i64,
    /// When it happened, milliseconds since the epoch.
    pub at_ms: i64,
    /// Who acted: `agent`, `user`, or `goalkeeper` for its own guards.
    pub actor: String,
    /// What it changed.
    pub kind: EventKind,
    /// The op name (`done`, `import`, `undo`, ...), if readable.
    pub op: Option<String>,
    /// The call as recorded: the canonical op, or the raw text of a failed call.
    pub payload: serde_json::Value,
    /// False for a rejected agent call.
    pub ok: bool,
    /// Why it was rejected.
    pub error: Option<String>,
    /// The resulting list version, for a successful todo mutation.
    pub version: Option<i64>,
    /// The named agent that made the call (DESIGN.md §2.5); `None` for
    /// the session's own agent, a person and goalkeeper.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
}

impl super::SessionTx<'_> {
    /// The last `limit` events of the session, oldest first: the todo
    /// list's and the goal's, successful and rejected (`todo log`).
    pub fn event_log(&self, limit: usize) -> Result<Vec<Event>> {
        recent(&self.tx, &self.session, limit)
    }
}

/// An event about to be appended.
pub(crate) struct NewEvent<'a> {
    pub session: &'a SessionId,
    pub at_ms: i64,
    pub actor: &'a str,
    pub kind: EventKind,
    pub op: Option<&'a str>,
    pub payload: &'a str,
    pub error: Option<&'a str>,
    pub version: Option<i64>,
    /// The named agent that made the call, if one did.
    pub agent: Option<&'a str>,
}

/// Logs a rejected agent call (of the todo or goal tool) and the named
/// `agent` that made it, if one did: the session is touched, the raw call
/// is kept, cut to 4 KiB so a rejected 1 MiB payload does not bloat the
/// log, and nothing else changes.
#[allow(clippy::too_many_arguments)]
pub(crate) fn append_rejected(
    tx: &Tx<'_>,
    session: &SessionId,
    kind: EventKind,
    op: Option<&str>,
    raw: &str,
    error: &str,
    agent: Option<&str>,
    at_ms: i64,
) -> Result<()> {
    const KEEP: usize = 4096;
    let payload = if raw.len() <= KEEP {
        raw.to_owned()
    } else {
        let cut = (0..=KEEP)
            .rev()
            .find(|&i| raw.is_char_boundary(i))
            .unwrap_or(0);
        format!("{}… ({} bytes)", &raw[..cut], raw.len())
    };
    // A refused call may hold what no stored text may (a raw NUL byte is
    // refused as JSON before any field is read): the log keeps it legible,
    // each NUL written as the JSON escape `\u0000` (DESIGN.md §1).
    let payload = without_nul(&payload);
    let error = without_nul(error);
    super::sessions::touch(tx, session, at_ms)?;
    append(
        tx,
        &NewEvent {
            session,
            at_ms,
            actor: crate::todo::Actor::Agent.as_str(),
            kind,
            op,
            payload: &payload,
            error: Some(&*error),
            version: None,
            agent,
        },
    )
}

/// `text` with each NUL character written as the JSON escape `\u0000`:
/// the text of a refused call or of its error, which a log keeps (no text
/// stored holds a NUL; DESIGN.md §1).
pub(crate) fn without_nul(text: &str) -> std::borrow::Cow<'_, str> {
    if text.contains('\0') {
        text.replace('\0', "\\u0000").into()
    } else {
        text.into()
    }
}

pub(crate) fn append(tx: &Tx<'_>, event: &NewEvent<'_>) -> Result<()> {
    tx.execute(
        "INSERT INTO events (session_id, at_ms, actor, kind, op, payload, ok, error, version, agent)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
        params![
            event.session.as_str(),
            event.at_ms,
            event.actor,
            event.kind.as_str(),
            event.op,
            event.payload,
            event.error.is_none(),
            event.error,
            event.version,
            event.agent,
        ],
    )?;
    Ok(())
}

/// The last `limit` events of a session, oldest first.
pub(crate) fn recent(tx: &Tx<'_>, session: &SessionId, limit: usize) -> Result<Vec<Event>> {
    let mut events = tx.query_all(
        "SELECT id, at_ms, actor, kind, op, payload, ok, error, version, agent FROM events
         WHERE session_id = ?1 ORDER BY id DESC LIMIT ?2",
        params![session.as_str(), limit as i64],
        |r| {
            let kind: String = r.get(3)?;
            let payload: String = r.get(5)?;
            Ok(Event {
                id: r.get(0)?,
                at_ms: r.get(1)?,
                actor: r.get(2)?,
                kind: EventKind::parse(&kind),
                op: r.get(4)?,
                // A rejected call may not be JSON at all; keep its text.
                payload: serde_json::from_str(&payload)
                    .unwrap_or(serde_json::Value::String(payload)),
                ok: r.get(6)?,
                error: r.get(7)?,
                version: r.get(8)?,
                agent: r.get(9)?,
            })
        },
    )?;
    events.reverse();
    Ok(events)
}

#[cfg(test)]
mod tests {
    use crate::SessionId;
    use crate::store::{GoalCall, Store};
    use crate::todo::{Actor, Call};

    #[test]
    fn rejected_calls_of_both_tools_are_logged_cut_to_4_kib() {
        let mut store = Store::open_in_memory().unwrap();
        let session = SessionId::parse("s").unwrap();
        let big = "x".repeat(100_000);
        let todo = format!(r#"{{"op":"done","task":"{big}"}}"#);
        let goal = format!(r#"{{"op":"create","objective":"{big}"}}"#);
        assert!(
            store
                .todo(
                    &session,
                    Call::Json(&todo),
                    Actor::Agent,
                    &mut crate::store::Caller::default(),
                    1
                )
                .unwrap()
                .is_error
        );
        assert!(
            store
                .write(&session, |tx| tx.goal_call(
                    GoalCall::Json(&goal),
                    Actor::Agent,
                    &mut crate::store::Caller::default(),
                    2
                ))
                .unwrap()
                .is_error
        );
        let log = store.read(&session, |tx| tx.event_log(10)).unwrap();
        assert_eq!(log.len(), 2);
        for (event, raw) in log.iter().zip([&todo, &goal]) {
            assert!(!event.ok);
            let payload = event
                .payload
                .as_str()
                .expect("a cut payload is kept as text");
            assert!(payload.starts_with(&raw[..100]), "{payload:.100}");
            assert!(
                payload.ends_with(&format!("… ({} bytes)", raw.len())),
                "{}",
                &payload[4000..]
            );
            assert!(payload.len() < 4200);
        }
    }
}
