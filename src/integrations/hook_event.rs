//! The core every host's hook shares (DESIGN.md §9). [`HookEvent`] parses
//! an event; [`HookEvent::run`] runs a host's steps on one [`SessionTx`]
//! of its session and commits them, turning any failure into a note (a
//! hook never fails the host: nothing on stdout, the reason on stderr,
//! nothing half-applied). Before the host's steps it records the session
//! as the one the host runs in the event's `cwd` (adopting a goal queued
//! there), but at the session's end, which marks it ended. The steps get a [`Hook`]: the event, the transaction, and what
//! every host decides alike (the reminders of a prompt, the goal-mode
//! context and when it changed, the stop's outcome), so an adapter keeps
//! only its event names and its wire JSON.

use std::path::PathBuf;

use serde_json::{Value, json};

use super::agent_tools::TOOL_NAMES;
use super::host_session::{self, Host};
use super::open_session;
use crate::error::Result;
use crate::goal::continuation::progress_mark;
use crate::prompt::{HiddenMessage, Injector};
use crate::store::{Caller, SessionTx};
use crate::turn::{self, StopOutcome};
use crate::{SessionId, Store};

/// What the hook prints: JSON for stdout (if any) and notes for stderr.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HookReply {
    /// The reply to print on stdout, if any.
    pub stdout: Option<Value>,
    /// Problems and explanations, one per line, for stderr.
    pub notes: Vec<String>,
}

impl HookReply {
    /// Nothing on stdout, `note` on stderr.
    pub fn ignored(note: String) -> HookReply {
        HookReply {
            stdout: None,
            notes: vec![note],
        }
    }
}

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
        let json: Value = serde_json::from_str(input)
            .map_err(|e| HookReply::ignored(format!("hook input is not JSON ({e}); ignored")))?;
        let name = json
            .get("hook_event_name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        let session = match json.get("session_id").and_then(Value::as_str) {
            Some(id) => {
                SessionId::parse(id).map_err(|e| HookReply::ignored(format!("{e}; ignored")))?
            }
            None => {
                return Err(HookReply::ignored(format!(
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

    /// The event's field `key` when it is a string.
    pub(crate) fn str_field(&self, key: &str) -> Option<&str> {
        self.json.get(key).and_then(Value::as_str)
    }

    /// Runs `host`'s `steps` for this event in one transaction of its
    /// session, after recording the session in the event's `cwd` (see
    /// [`host_session::record_in`]), and commits when they succeed: the
    /// reply is what they return, with their notes. A failure anywhere
    /// rolls every step back and leaves only a note. Two hooks of one
    /// session run one after the other.
    pub(crate) fn run(
        &self,
        host: Host,
        store: &mut Store,
        caller: &Caller,
        injector: &Injector,
        now_ms: i64,
        steps: impl FnOnce(&mut Hook<'_, '_>) -> Result<Option<Value>>,
    ) -> HookReply {
        let mut notes = Vec::new();
        // A path holds no NUL, and no text goalkeeper stores does
        // (DESIGN.md §1): such a `cwd` names no directory to record.
        let dir = self.str_field("cwd").filter(|cwd| {
            let nul = cwd.contains('\0');
            if nul {
                notes.push(
                    "cwd holds a NUL character, so it names no directory; the session is not recorded for one"
                        .to_owned(),
                );
            }
            !nul
        });
        // Checks are judged on the files of the directory the host runs in.
        let caller = caller.in_dir(dir.map(PathBuf::from));
        let stdout = store.write(&self.session, |tx| {
            let mut hook = Hook {
                host,
                event: self,
                tx,
                caller,
                injector,
                now_ms,
                notes: &mut notes,
                dir: dir.map(PathBuf::from),
                previous: None,
            };
            hook.record()?;
            steps(&mut hook)
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

/// A whole hook event for a host that does nothing outside the
/// transaction: [`HookEvent::parse`] `input`, then [`HookEvent::run`].
pub(crate) fn handle(
    host: Host,
    store: &mut Store,
    caller: &Caller,
    injector: &Injector,
    input: &str,
    now_ms: i64,
    steps: impl FnOnce(&mut Hook<'_, '_>) -> Result<Option<Value>>,
) -> HookReply {
    match HookEvent::parse(input) {
        Ok(event) => event.run(host, store, caller, injector, now_ms, steps),
        Err(reply) => reply,
    }
}

/// The event every host's hook receives as a session ends: Claude Code's,
/// Gemini CLI's and Codex's own name, and the one goalkeeper's pi
/// extension sends for pi's `session_shutdown`.
pub(crate) const SESSION_END: &str = "SessionEnd";

/// The session marks the core keeps for a host, named `<host>.<what>`.
struct Marks {
    /// The state (list version, goal revision) last injected as context.
    context: String,
    /// The eager-todo reminder was sent.
    eager: String,
    /// Open-todo reminders sent for the list's version.
    reminders: String,
}

impl Marks {
    fn of(host: Host) -> Marks {
        let mark = |what: &str| format!("{}.{what}", host.as_str());
        Marks {
            context: mark("context"),
            eager: mark("eager"),
            reminders: mark("reminders"),
        }
    }
}

/// One event of one host, inside its transaction: what a host's steps
/// read and decide with.
pub(crate) struct Hook<'a, 't> {
    /// The host that sent the event.
    pub host: Host,
    /// The event.
    pub event: &'a HookEvent,
    /// The event's transaction.
    pub tx: &'a SessionTx<'t>,
    /// Its caller: goalkeeper for the host, judging checks in the event's
    /// directory.
    pub caller: Caller,
    /// The prompts, naming the tools as the host shows them.
    pub injector: &'a Injector,
    /// The event's time.
    pub now_ms: i64,
    /// Notes for stderr.
    pub notes: &'a mut Vec<String>,
    /// The event's `cwd`, when it has one.
    pub dir: Option<PathBuf>,
    /// The session the host ran in `dir` before this one, when another.
    pub previous: Option<SessionId>,
}

impl Hook<'_, '_> {
    /// Records the session as the one the host runs in `dir`; a goal
    /// queued there for the host's next session (`--session-from HOST`)
    /// is adopted. Not at the session's end ([`SESSION_END`]): an ending
    /// session takes no directory from a session still running there, and
    /// no goal meant for the next one.
    fn record(&mut self) -> Result<()> {
        let Some(dir) = &self.dir else {
            return Ok(());
        };
        if self.event.name == SESSION_END {
            return Ok(());
        }
        let recorded =
            host_session::record_in(self.tx, &mut self.caller, self.host, dir, self.now_ms)?;
        open_session::running_in(self.tx, self.host, dir, self.now_ms)?;
        if let Some(adopted) = recorded.adopted {
            self.notes
                .push(format!("adopted the queued goal: {}", adopted.text()));
        }
        self.previous = recorded.previous;
        Ok(())
    }

    /// Marks the session ended: the host said so (its session-end event).
    /// A goal set from a terminal now waits for the next session in the
    /// directory (DESIGN.md §8).
    pub fn end_session(&self) -> Result<()> {
        open_session::end(self.tx, self.host, self.now_ms)
    }

    /// Records the host process this hook runs under as the session's
    /// (for a host whose headless run sends no end event): once it is
    /// gone, the session has ended.
    pub fn record_host_process(&self) -> Result<()> {
        let process = super::host_process::HostProcess::of_hook();
        open_session::running_under(self.tx, self.host, process, self.now_ms)
    }

    /// The tools the model can call: both, in every host (an MCP server
    /// offers both, pi's extension registers both, and Claude Code's hook
    /// cannot see which are enabled, so both are assumed active).
    pub fn tools(&self) -> Vec<String> {
        TOOL_NAMES.map(str::to_owned).to_vec()
    }

    /// Notes that the event is not one the host's hook handles.
    pub fn unhandled(&mut self) -> Result<Option<Value>> {
        self.notes.push(format!(
            "hook event {:?} is not handled; ignored",
            self.event.name
        ));
        Ok(None)
    }

    /// The one-time reminders due as a user's prompt starts a turn
    /// ([`turn::on_prompt`]), their notes added to the hook's.
    pub fn prompt_reminders(&mut self) -> Result<Vec<String>> {
        let eager = Marks::of(self.host).eager;
        let added = turn::on_prompt(self.tx, self.injector, &eager, self.now_ms)?;
        self.notes.extend(added.notes);
        Ok(added.parts)
    }

    /// The goal-mode context while the goal is active (DESIGN.md §3.4).
    pub fn goal_mode_message(&self) -> Result<Option<HiddenMessage>> {
        Ok(turn::goal_mode_context(
            self.tx,
            &self.caller,
            self.injector,
            &self.tools(),
            self.now_ms,
        )?
        .ok())
    }

    /// [`Hook::goal_mode_message`]'s text.
    pub fn goal_mode_context(&self) -> Result<Option<String>> {
        Ok(self.goal_mode_message()?.map(|m| m.content))
    }

    /// The context a session gets again after a compaction or a resume:
    /// the goal-mode context, or the bare `<todo_context>` without an
    /// active goal; remembered as injected.
    pub fn session_context(&self) -> Result<Option<String>> {
        let context = match self.goal_mode_context()? {
            Some(text) => Some(text),
            None => {
                let (list, _) = self.tx.todo_list()?;
                self.injector
                    .todo_context_message(&list, &self.tools(), self.now_ms)?
                    .ok()
                    .map(|m| m.content)
            }
        };
        let mark = self.state_mark()?;
        self.tx
            .set_mark(&Marks::of(self.host).context, &mark, self.now_ms)?;
        Ok(context)
    }

    /// Whether the state is what was last injected as context.
    pub fn context_is_current(&self) -> Result<bool> {
        let mark = self.state_mark()?;
        Ok(self.tx.mark(&Marks::of(self.host).context)?.as_deref() == Some(&mark))
    }

    /// The goal-mode context when the goal or the list changed since it
    /// was last injected (and it is not closed), remembered as injected.
    pub fn context_if_changed(&self) -> Result<Option<String>> {
        let mark = self.state_mark()?;
        let context = Marks::of(self.host).context;
        if self.tx.mark(&context)?.as_deref() == Some(&mark) {
            return Ok(None);
        }
        let Some(text) = self.goal_mode_context()? else {
            return Ok(None);
        };
        self.tx.set_mark(&context, &mark, self.now_ms)?;
        Ok(Some(text))
    }

    /// What happens as the agent stops ([`turn::on_stop`]).
    pub fn stop(&self) -> Result<StopOutcome> {
        turn::on_stop(
            self.tx,
            &self.caller,
            self.injector,
            &self.tools(),
            &Marks::of(self.host).reminders,
            self.now_ms,
        )
    }

    /// What the injected context depends on: the list's version and the
    /// goal's identity and revision.
    fn state_mark(&self) -> Result<String> {
        let version = self.tx.todo_version()?;
        let checks = self.tx.checks_mark()?;
        Ok(progress_mark(version, self.tx.goal()?.as_ref(), &checks))
    }
}

/// The reply that adds `text` to the model's context at `event`, in the
/// format Claude Code defined and Codex and Gemini CLI share.
pub(crate) fn additional_context(event: &str, text: &str) -> Value {
    json!({"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}})
}

/// The stop's reply in the format Claude Code defined and Codex and
/// Gemini CLI share: a continuation or a reminder blocks the stop, its
/// text the reason (the model's next prompt); a pause tells the user, as
/// `paused` words it from the goal's id and the reason.
pub(crate) fn stop_decision(
    outcome: StopOutcome,
    paused: impl FnOnce(i64, String) -> String,
) -> Option<Value> {
    match outcome {
        StopOutcome::Continue(message) | StopOutcome::Remind(message) => {
            Some(json!({"decision": "block", "reason": message.content}))
        }
        StopOutcome::Paused { goal, text } => Some(json!({"systemMessage": paused(goal, text)})),
        StopOutcome::Nothing => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The marks keep the names the stores already hold, for every host.
    #[test]
    fn marks_are_named_by_the_host() {
        let marks = Marks::of(Host::ClaudeCode);
        assert_eq!(
            [marks.context, marks.eager, marks.reminders],
            [
                "claude-code.context",
                "claude-code.eager",
                "claude-code.reminders"
            ]
        );
        for host in Host::ALL {
            assert_eq!(Marks::of(host).context, format!("{host}.context"));
        }
    }
}
