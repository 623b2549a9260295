//! Codex hooks (DESIGN.md §9): one hook event as JSON on stdin, the reply as JSON
//! on stdout (Claude Code's format). The session is the event's
//! `session_id`; every event records it as the Codex session last seen in
//! its `cwd`, for the MCP server (`mcp --session-from codex`) and the
//! user's `goalkeeper --session-from codex …`.
//!
//! Codex keeps `additionalContext` as a developer message, unescaped, so
//! the goal-mode context is injected when it changes, and stays in the
//! history:
//!
//! - `SessionStart` after `resume` or `compact` re-injects it (or the bare
//!   `<todo_context>` without an active goal);
//! - `UserPromptSubmit` adds the one-time reminders (memory file, eager
//!   todos, a rejected todo call) and the context when the goal or the list
//!   changed since it was last injected;
//! - `PostToolUse` of a goalkeeper tool refreshes the context the same way:
//!   it is the one channel between prompts, so the context stays current
//!   into the turn after a continuation (`UserPromptSubmit` does not fire
//!   for continuations);
//! - `PreToolUse` of the `goal` tool counts the usage so far, so the
//!   response that completes the goal counts towards it;
//! - `Stop` counts the rollout file's new usage (each `response_id` once),
//!   then continues an active goal (`{"decision": "block"}`; Codex escapes
//!   the reason's text, so the continuation carries the todo block itself),
//!   delivers the budget-limit wrap-up once, or reminds about open todos
//!   when no goal is live.
//!
//! A hook never breaks the agent: malformed input, an unknown event, a
//! missing rollout file or a storage error print nothing on stdout, exit 0,
//! and explain themselves on stderr.

mod install;
mod rollout;

use serde_json::{Value, json};

pub use install::{HOOK_EVENTS, HOOK_TIMEOUT_S, codex_home, install_codex, trusted_hash};
pub use rollout::response_usage;

use std::path::Path;

use super::claude_code::HookReply;
use super::hook_event::HookEvent;
use super::host_session::{self, Host};
use super::usage_log::{UsageLog, count_new_usage};
use crate::error::Result;
use crate::goal::continuation::progress_mark;
use crate::prompt::Injector;
use crate::store::{SessionTx, StopOutcome, Store};

/// The host's name in `install`, `hook` and `--session-from`.
pub const HOST: &str = "codex";

/// The names Codex shows the model for goalkeeper's MCP tools.
pub const TOOL_NAMES: [&str; 2] = ["mcp__goalkeeper__todo", "mcp__goalkeeper__goal"];

const CONTEXT_MARK: &str = "codex.context";
const EAGER_MARK: &str = "codex.eager";
const REMINDER_MARK: &str = "codex.reminders";
const ROLLOUT_MARK: &str = "codex.rollout";

/// The pointer key under which the hooks record the Codex session last
/// seen in a project directory (see [`host_session`]).
pub fn session_pointer(cwd: &str) -> String {
    host_session::last_session_key(Host::Codex, Path::new(cwd))
}

/// Handles one hook event. Never fails: every problem becomes a note and
/// an empty reply.
pub fn handle(store: &mut Store, injector: &Injector, input: &str, now_ms: i64) -> HookReply {
    // The whole event is one transaction: it commits only when every step
    // succeeded, and a failure anywhere leaves nothing half-applied.
    HookEvent::handle(store, input, |event, tx, notes| {
        Hook {
            tx,
            injector,
            now_ms,
            notes,
        }
        .dispatch(&event.name, &event.json)
    })
}

struct Hook<'a, 't> {
    tx: &'a SessionTx<'t>,
    injector: &'a Injector,
    now_ms: i64,
    notes: &'a mut Vec<String>,
}

impl Hook<'_, '_> {
    fn dispatch(&mut self, name: &str, event: &Value) -> Result<Option<Value>> {
        if let Some(cwd) = event.get("cwd").and_then(Value::as_str) {
            // Also adopts a goal queued with `--session-from codex`.
            let recorded =
                host_session::record_in(self.tx, Host::Codex, Path::new(cwd), self.now_ms)?;
            if let Some(adopted) = recorded.adopted {
                self.notes
                    .push(format!("adopted the queued goal: {}", adopted.text()));
            }
        }
        match name {
            "SessionStart" => self.session_start(event),
            "UserPromptSubmit" => self.user_prompt_submit(),
            "PreToolUse" => self.pre_tool_use(event),
            "PostToolUse" => self.post_tool_use(event),
            "Stop" => self.stop(event),
            other => {
                self.notes
                    .push(format!("hook event {other:?} is not handled; ignored"));
                Ok(None)
            }
        }
    }

    fn tools(&self) -> Vec<String> {
        // The tools come from the MCP server, which offers both.
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
        let mark = self.state_mark()?;
        self.tx.set_mark(CONTEXT_MARK, &mark, self.now_ms)?;
        Ok(context.map(|text| additional_context("SessionStart", &text)))
    }

    fn user_prompt_submit(&mut self) -> Result<Option<Value>> {
        let added = self.tx.on_prompt(self.injector, EAGER_MARK, self.now_ms)?;
        self.notes.extend(added.notes);
        let mut parts = added.parts;
        parts.extend(self.changed_context()?);
        if parts.is_empty() {
            return Ok(None);
        }
        Ok(Some(additional_context(
            "UserPromptSubmit",
            &parts.join("\n\n"),
        )))
    }

    /// Before a `goal` call, counts the usage so far, so the response that
    /// completes the goal counts towards it.
    fn pre_tool_use(&mut self, event: &Value) -> Result<Option<Value>> {
        if event.get("tool_name").and_then(Value::as_str) == Some(TOOL_NAMES[1]) {
            self.count_usage(event)?;
        }
        Ok(None)
    }

    fn post_tool_use(&mut self, event: &Value) -> Result<Option<Value>> {
        let tool = event.get("tool_name").and_then(Value::as_str).unwrap_or("");
        if !TOOL_NAMES.contains(&tool) {
            return Ok(None);
        }
        Ok(self
            .changed_context()?
            .map(|text| additional_context("PostToolUse", &text)))
    }

    /// The goal-mode context when the goal or the list changed since it was
    /// last injected (and it is not closed), marking it injected.
    fn changed_context(&mut self) -> Result<Option<String>> {
        let mark = self.state_mark()?;
        if self.tx.mark(CONTEXT_MARK)?.as_deref() == Some(&mark) {
            return Ok(None);
        }
        let Some(context) = self.goal_mode_context()? else {
            return Ok(None);
        };
        self.tx.set_mark(CONTEXT_MARK, &mark, self.now_ms)?;
        Ok(Some(context))
    }

    fn stop(&mut self, event: &Value) -> Result<Option<Value>> {
        self.count_usage(event)?;
        let tools = self.tools();
        let outcome = self
            .tx
            .on_stop(self.injector, &tools, REMINDER_MARK, self.now_ms)?;
        Ok(match outcome {
            StopOutcome::Continue(message) | StopOutcome::Remind(message) => {
                Some(json!({"decision": "block", "reason": message.content}))
            }
            StopOutcome::Paused { text, .. } => Some(json!({"systemMessage": text})),
            StopOutcome::Nothing => None,
        })
    }

    /// Counts the rollout file's new responses towards the goal.
    fn count_usage(&mut self, event: &Value) -> Result<()> {
        let log = UsageLog {
            mark: ROLLOUT_MARK,
            label: "rollout file",
            record: response_usage,
        };
        count_new_usage(self.tx, self.notes, event, &log, self.now_ms)
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
        let version = self.tx.todo_version()?;
        Ok(progress_mark(version, self.tx.goal()?.as_ref()))
    }
}

fn additional_context(event: &str, text: &str) -> Value {
    json!({"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}})
}

#[cfg(test)]
mod tests;
