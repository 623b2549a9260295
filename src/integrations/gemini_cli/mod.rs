//! Gemini CLI hooks (DESIGN.md §9): one hook event as JSON on stdin, the reply
//! as JSON on stdout. The session is the event's `session_id`; every event
//! records it as the Gemini CLI session last seen in its `cwd`, so the MCP
//! server (`mcp --session-from gemini-cli`) and the user's `goalkeeper
//! --session-from gemini-cli …` act on it.
//!
//! - `BeforeModel` appends the goal-mode context as the last user message
//!   of every model request (`hookSpecificOutput.llm_request.messages`):
//!   it reaches the model unescaped, is not stored in the history, and so
//!   survives compression, which no hook reliably signals.
//! - `BeforeAgent` adds the one-time reminders (memory file, eager todos,
//!   a rejected todo call) as `additionalContext` (Gemini CLI shows it to
//!   the model inside `<hook_context>`, `<` and `>` escaped).
//! - `AfterAgent` counts the chat file's new usage, then continues an
//!   active goal with `{"decision": "block", "reason": …}` (the reason is
//!   the next prompt), delivers the budget-limit wrap-up once, or reminds
//!   about open todos when no goal is live. Gemini CLI's
//!   `stop_hook_active` is not relied on (it stayed false on continued
//!   runs): the runaway guard and the budget end a run.
//! - `BeforeTool` (for the `goal` tool only) counts the usage so far, so
//!   the response that completes the goal counts towards it.
//! - `SessionEnd` counts the usage the last `AfterAgent` could not see.
//!
//! A hook never breaks the agent: malformed input, an unknown event, a
//! missing chat file or a storage error print nothing on stdout, exit 0,
//! and explain themselves on stderr.

mod chat_file;
mod install;

use serde_json::{Value, json};

pub use chat_file::response_usage;
pub use install::{HOOK_EVENTS, HOOK_TIMEOUT_MS, install_gemini_cli};

use std::path::Path;

use super::claude_code::HookReply;
use super::hook_event::HookEvent;
use super::host_session::{self, Host};
use super::usage_log::{UsageLog, count_new_usage};
use crate::error::Result;
use crate::prompt::Injector;
use crate::store::{SessionTx, StopOutcome, Store};

/// The host's name in `install`, `hook` and `--session-from`.
pub const HOST: &str = "gemini-cli";

/// The names Gemini CLI shows the model for goalkeeper's MCP tools
/// (`mcp_<server>_<tool>`).
pub const TOOL_NAMES: [&str; 2] = ["mcp_goalkeeper_todo", "mcp_goalkeeper_goal"];

const EAGER_MARK: &str = "gemini-cli.eager";
const REMINDER_MARK: &str = "gemini-cli.reminders";
const CHAT_MARK: &str = "gemini-cli.chat";

/// The pointer key under which the hooks record the Gemini CLI session last
/// seen in a project directory.
pub fn session_pointer(cwd: &str) -> String {
    super::host_session::last_session_key(
        super::host_session::Host::GeminiCli,
        std::path::Path::new(cwd),
    )
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
            // Also adopts a goal queued with `--session-from gemini-cli`.
            let recorded =
                host_session::record_in(self.tx, Host::GeminiCli, Path::new(cwd), self.now_ms)?;
            if let Some(adopted) = recorded.adopted {
                self.notes
                    .push(format!("adopted the queued goal: {}", adopted.text()));
            }
        }
        match name {
            "SessionStart" => Ok(None),
            "BeforeAgent" => self.before_agent(),
            "BeforeModel" => self.before_model(event),
            "AfterAgent" => self.after_agent(event),
            "BeforeTool" | "SessionEnd" => {
                self.count_usage(event)?;
                Ok(None)
            }
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

    fn before_model(&mut self, event: &Value) -> Result<Option<Value>> {
        let tools = self.tools();
        let Ok(message) = self
            .tx
            .goal_mode_context(self.injector, &tools, self.now_ms)?
        else {
            return Ok(None);
        };
        let Some(messages) = event
            .pointer("/llm_request/messages")
            .and_then(Value::as_array)
        else {
            self.notes
                .push("BeforeModel event has no llm_request.messages; nothing added".into());
            return Ok(None);
        };
        let mut messages = messages.clone();
        messages.push(json!({"role": "user", "content": message.content}));
        Ok(Some(json!({"hookSpecificOutput": {
            "hookEventName": "BeforeModel",
            "llm_request": {"messages": messages},
        }})))
    }

    fn before_agent(&mut self) -> Result<Option<Value>> {
        let added = self.tx.on_prompt(self.injector, EAGER_MARK, self.now_ms)?;
        self.notes.extend(added.notes);
        let parts = added.parts;
        if parts.is_empty() {
            return Ok(None);
        }
        Ok(Some(json!({"hookSpecificOutput": {
            "hookEventName": "BeforeAgent",
            "additionalContext": parts.join("\n\n"),
        }})))
    }

    fn after_agent(&mut self, event: &Value) -> Result<Option<Value>> {
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

    /// Counts the chat file's new responses towards the goal.
    fn count_usage(&mut self, event: &Value) -> Result<()> {
        let log = UsageLog {
            mark: CHAT_MARK,
            label: "chat file",
            record: response_usage,
        };
        count_new_usage(self.tx, self.notes, event, &log, self.now_ms)
    }
}

#[cfg(test)]
mod tests;
