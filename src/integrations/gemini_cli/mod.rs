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
#[cfg(test)]
use install::{POLICY_PATH, install_gemini_cli, install_user_policy, user_policy};
pub(crate) use install::{extension_files, extension_manifest};

use super::adapter::{Adapter, HookEnv, InstallRequest, Installed};
use super::hook_event::{self, Hook, HookReply, additional_context};
use super::host_session::Host;
use super::usage_log::{UsageLog, count_new_usage};
use crate::error::Result;
use crate::prompt::Injector;
use crate::store::{Caller, Store};

const CHAT_MARK: &str = "gemini-cli.chat";

/// Gemini CLI's adapter.
pub struct GeminiCli;

impl Adapter for GeminiCli {
    fn handle(
        &self,
        store: &mut Store,
        injector: &Injector,
        input: &str,
        env: &HookEnv<'_>,
    ) -> HookReply {
        handle(store, env.caller, injector, input, env.now_ms)
    }

    fn install_flags(&self) -> &'static [&'static str] {
        &["--project", "--policy"]
    }

    fn install(&self, request: &InstallRequest<'_>) -> crate::error::Result<Installed> {
        install::install(request)
    }
}

/// Handles one hook event. Never fails: every problem becomes a note and
/// an empty reply.
pub fn handle(
    store: &mut Store,
    caller: &Caller,
    injector: &Injector,
    input: &str,
    now_ms: i64,
) -> HookReply {
    hook_event::handle(
        Host::GeminiCli,
        store,
        caller,
        injector,
        input,
        now_ms,
        |hook| match hook.event.name.as_str() {
            "SessionStart" => Ok(None),
            "BeforeAgent" => before_agent(hook),
            "BeforeModel" => before_model(hook),
            "AfterAgent" => after_agent(hook),
            "BeforeTool" | "SessionEnd" => {
                count_usage(hook)?;
                Ok(None)
            }
            _ => hook.unhandled(),
        },
    )
}

fn before_model(hook: &mut Hook<'_, '_>) -> Result<Option<Value>> {
    let Some(context) = hook.goal_mode_context()? else {
        return Ok(None);
    };
    let Some(messages) = hook
        .event
        .json
        .pointer("/llm_request/messages")
        .and_then(Value::as_array)
    else {
        hook.notes
            .push("BeforeModel event has no llm_request.messages; nothing added".into());
        return Ok(None);
    };
    let mut messages = messages.clone();
    messages.push(json!({"role": "user", "content": context}));
    Ok(Some(json!({"hookSpecificOutput": {
        "hookEventName": "BeforeModel",
        "llm_request": {"messages": messages},
    }})))
}

fn before_agent(hook: &mut Hook<'_, '_>) -> Result<Option<Value>> {
    let parts = hook.prompt_reminders()?;
    if parts.is_empty() {
        return Ok(None);
    }
    Ok(Some(additional_context("BeforeAgent", &parts.join("\n\n"))))
}

fn after_agent(hook: &mut Hook<'_, '_>) -> Result<Option<Value>> {
    count_usage(hook)?;
    Ok(hook_event::stop_decision(hook.stop()?, |_, text| text))
}

/// Counts the chat file's new responses towards the goal.
fn count_usage(hook: &mut Hook<'_, '_>) -> Result<()> {
    let log = UsageLog {
        mark: CHAT_MARK,
        label: "chat file",
        record: response_usage,
    };
    count_new_usage(hook.tx, hook.notes, &hook.event.json, &log, hook.now_ms)
}

#[cfg(test)]
mod tests;
