//! Claude Code hooks (SPEC §9): one hook event as JSON on stdin, the reply
//! as JSON on stdout. The session is the event's `session_id`.
//!
//! - `SessionStart` after `compact` or `resume`: the goal-mode context (or
//!   the bare `<todo_context>` without an active goal) as additional
//!   context, so the todos survive compaction.
//! - `UserPromptSubmit`: the eager-todo reminder on the first prompt, a
//!   pending todo-error reminder, and the goal-mode context when the goal or
//!   the list changed since it was last injected.
//! - `Stop`: counts the transcript's new token usage, then continues an
//!   active goal (`{"decision": "block"}`), delivers the budget-limit
//!   wrap-up once, or reminds about open todos (no active goal) up to
//!   `todo.reminders.max` times until the list changes.
//!
//! A hook must never break the agent: malformed input, an unknown event, a
//! missing transcript or a storage error print nothing on stdout, exit 0,
//! and explain themselves on stderr.

mod transcript;

use serde_json::{Value, json};

pub use transcript::{Cursor, TranscriptRead, read_usage};

use crate::SessionId;
use crate::error::Result;
use crate::goal::GoalOp;
use crate::goal::continuation::progress_mark;
use crate::prompt::Injector;
use crate::settings::Eager;
use crate::store::{Continuation, GoalCall, SessionTx, Store};
use crate::todo::Actor;

/// What the hook prints: JSON for stdout (if any) and notes for stderr.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HookReply {
    /// The reply to print on stdout, if any.
    pub stdout: Option<Value>,
    /// Problems and explanations, one per line, for stderr.
    pub notes: Vec<String>,
}

/// Marks remembered per session between hook runs.
const CONTEXT_MARK: &str = "claude-code.context";
const EAGER_MARK: &str = "claude-code.eager";
const REMINDER_MARK: &str = "claude-code.reminders";
const TRANSCRIPT_MARK: &str = "claude-code.transcript";

/// Handles one hook event. Never fails: every problem becomes a note and
/// an empty reply.
pub fn handle(store: &mut Store, injector: &Injector, input: &str, now_ms: i64) -> HookReply {
    let mut reply = HookReply::default();
    let event: Value = match serde_json::from_str(input) {
        Ok(event) => event,
        Err(e) => {
            reply
                .notes
                .push(format!("hook input is not JSON ({e}); ignored"));
            return reply;
        }
    };
    let name = event
        .get("hook_event_name")
        .and_then(Value::as_str)
        .unwrap_or("");
    let session = match event.get("session_id").and_then(Value::as_str) {
        Some(id) => match SessionId::parse(id) {
            Ok(session) => session,
            Err(e) => {
                reply.notes.push(format!("{e}; ignored"));
                return reply;
            }
        },
        None => {
            reply
                .notes
                .push(format!("hook event {name:?} has no session_id; ignored"));
            return reply;
        }
    };
    // The whole event is one transaction: it commits only when every step
    // succeeded, and a failure anywhere leaves nothing half-applied. Two
    // hooks of one session run one after the other, so a transcript's
    // usage is counted once.
    let tx = match store.begin(&session) {
        Ok(tx) => tx,
        Err(e) => {
            reply.notes.push(format!("{name} hook failed: {e}"));
            return reply;
        }
    };
    let hook = Hook {
        tx,
        injector,
        now_ms,
        notes: Vec::new(),
    };
    hook.dispatch(name, &event)
}

struct Hook<'a> {
    tx: SessionTx<'a>,
    injector: &'a Injector,
    now_ms: i64,
    notes: Vec<String>,
}

impl Hook<'_> {
    fn dispatch(mut self, name: &str, event: &Value) -> HookReply {
        if let Some(cwd) = event.get("cwd").and_then(Value::as_str)
            && let Err(e) = self.tx.set_pointer(
                &session_pointer(cwd),
                self.tx.session().as_str(),
                self.now_ms,
            )
        {
            self.notes.push(format!("cannot record the session: {e}"));
        }
        let result = match name {
            "SessionStart" => self.session_start(event),
            "UserPromptSubmit" => self.user_prompt_submit(),
            "Stop" => self.stop(event),
            other => {
                self.notes
                    .push(format!("hook event {other:?} is not handled; ignored"));
                Ok(None)
            }
        };
        let Hook { tx, mut notes, .. } = self;
        match result.and_then(|stdout| tx.commit().map(|()| stdout)) {
            Ok(stdout) => HookReply { stdout, notes },
            Err(e) => {
                notes.push(format!("{name} hook failed: {e}"));
                HookReply {
                    stdout: None,
                    notes,
                }
            }
        }
    }

    fn tools(&self) -> Vec<String> {
        // Claude Code reaches the tools through the MCP server; the hook
        // cannot see which are enabled, so both are assumed active.
        super::TOOL_NAMES.map(str::to_owned).to_vec()
    }

    fn session_start(&mut self, event: &Value) -> Result<Option<Value>> {
        let source = event.get("source").and_then(Value::as_str).unwrap_or("");
        if source != "compact" && source != "resume" {
            return Ok(None);
        }
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
        self.remember_context()?;
        Ok(context.map(|text| additional_context("SessionStart", &text)))
    }

    fn user_prompt_submit(&mut self) -> Result<Option<Value>> {
        let mut parts = Vec::new();
        let (memory, note) = self.tx.memory(self.injector, self.now_ms)?;
        self.notes.extend(note);
        parts.extend(memory.map(|m| m.content));
        let eager = self.injector.settings().todo.eager;
        if eager != Eager::Default && self.tx.mark(EAGER_MARK)?.is_none() {
            let name = if eager == Eager::Always {
                "todo-eager-always"
            } else {
                "todo-eager-preferred"
            };
            parts.push(self.injector.templates().render(name, &json!({}))?);
            self.tx.set_mark(EAGER_MARK, "sent", self.now_ms)?;
        }
        if let Some(error) = self.tx.take_todo_error()? {
            let (list, _) = self.tx.todo_list()?;
            let message = self
                .injector
                .todo_error_reminder(&error, &list, self.now_ms)?;
            parts.push(message.content);
        }
        let mark = self.state_mark()?;
        if self.tx.mark(CONTEXT_MARK)?.as_deref() != Some(&mark)
            && let Some(context) = self.goal_mode_context()?
        {
            parts.push(context);
            self.tx.set_mark(CONTEXT_MARK, &mark, self.now_ms)?;
        }
        if parts.is_empty() {
            return Ok(None);
        }
        Ok(Some(additional_context(
            "UserPromptSubmit",
            &parts.join("\n\n"),
        )))
    }

    fn stop(&mut self, event: &Value) -> Result<Option<Value>> {
        self.count_usage(event)?;
        let tools = self.tools();
        match self.tx.continuation(self.injector, &tools, self.now_ms)? {
            Continuation::Message(message) => {
                return Ok(Some(
                    json!({"decision": "block", "reason": message.content}),
                ));
            }
            Continuation::Paused(text) => {
                return Ok(Some(json!({"systemMessage": text})));
            }
            Continuation::Closed(_) => {}
        }
        let reminders = &self.injector.settings().todo.reminders;
        if !reminders.enabled {
            return Ok(None);
        }
        let (list, version) = self.tx.todo_list()?;
        let Some(message) = self.injector.incomplete_reminder(&list, self.now_ms)? else {
            return Ok(None);
        };
        // Count reminders per list version: a change to the list resets it.
        let sent = match self.tx.mark(REMINDER_MARK)? {
            Some(mark) => match mark.split_once(':') {
                Some((v, n)) if v == version.to_string() => n.parse::<u64>().unwrap_or(0),
                _ => 0,
            },
            None => 0,
        };
        if sent >= reminders.max {
            return Ok(None);
        }
        self.tx.set_mark(
            REMINDER_MARK,
            &format!("{version}:{}", sent + 1),
            self.now_ms,
        )?;
        Ok(Some(
            json!({"decision": "block", "reason": message.content}),
        ))
    }

    /// Counts the transcript's new assistant usage towards the goal.
    fn count_usage(&mut self, event: &Value) -> Result<()> {
        let Some(path) = event.get("transcript_path").and_then(Value::as_str) else {
            self.notes
                .push("Stop event has no transcript_path; usage not counted".into());
            return Ok(());
        };
        let cursor: Cursor = self
            .tx
            .mark(TRANSCRIPT_MARK)?
            .and_then(|text| serde_json::from_str(&text).ok())
            .unwrap_or_default();
        let read = match read_usage(std::path::Path::new(path), &cursor) {
            Ok(read) => read,
            Err(e) => {
                self.notes.push(format!(
                    "cannot read the transcript {path}: {e}; usage not counted"
                ));
                return Ok(());
            }
        };
        if read.bad_lines > 0 {
            self.notes.push(format!(
                "skipped {} transcript lines that are not JSON",
                read.bad_lines
            ));
        }
        if read.messages > 0 {
            self.tx.goal_call(
                GoalCall::Op(&GoalOp::Usage(read.usage)),
                Actor::Agent,
                self.now_ms,
            )?;
        }
        let text = serde_json::to_string(&read.cursor).expect("a cursor serializes");
        self.tx.set_mark(TRANSCRIPT_MARK, &text, self.now_ms)
    }

    fn goal_mode_context(&mut self) -> Result<Option<String>> {
        let tools = self.tools();
        Ok(self
            .tx
            .goal_mode_context(self.injector, &tools, self.now_ms)?
            .ok()
            .map(|m| m.content))
    }

    /// What the injected context depends on: the list's version and the
    /// goal's identity and revision.
    fn state_mark(&mut self) -> Result<String> {
        let (_, version) = self.tx.todo_list()?;
        Ok(progress_mark(version, self.tx.goal()?.as_ref()))
    }

    fn remember_context(&mut self) -> Result<()> {
        let mark = self.state_mark()?;
        self.tx.set_mark(CONTEXT_MARK, &mark, self.now_ms)
    }
}

/// The pointer key under which the hooks record the Claude Code session
/// last seen in a project directory, so an MCP server started there
/// (`--session-from claude-code`) acts on the same session.
pub fn session_pointer(cwd: &str) -> String {
    format!("claude-code:{cwd}")
}

fn additional_context(event: &str, text: &str) -> Value {
    json!({"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}})
}
