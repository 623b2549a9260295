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
//! - `AfterTool` (for the shell tool only): a plain `goalkeeper verify`
//!   call's record, from the output Gemini CLI captured, is stored as
//!   evidence ([`crate::integrations::shell_record`]); the exit status is
//!   the `Exit Code: N` line Gemini CLI adds for the model (none for 0).
//! - `SessionEnd` counts the usage the last `AfterAgent` could not see,
//!   and marks the session ended (a goal set from a terminal then waits
//!   for the next session).
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
use super::hook_event::{self, Hook, HookReply, SESSION_END, additional_context};
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
            "AfterTool" => {
                shell_call(hook)?;
                Ok(None)
            }
            "BeforeTool" => {
                count_usage(hook)?;
                Ok(None)
            }
            SESSION_END => {
                count_usage(hook)?;
                hook.end_session()?;
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

/// After a shell call: takes a verify run's record from what Gemini CLI
/// captured of it. `returnDisplay` is the output as it came;
/// `llmContent`, what the model got, adds the `Exit Code: N` line for a
/// nonzero exit. A call moved to the background ran nothing yet.
fn shell_call(hook: &mut Hook<'_, '_>) -> Result<()> {
    let event = hook.event;
    let json = &event.json;
    if json.get("tool_name").and_then(Value::as_str) != Some(install::SHELL_TOOL)
        || json
            .pointer("/tool_input/is_background")
            .and_then(Value::as_bool)
            == Some(true)
    {
        return Ok(());
    }
    let Some(command) = json.pointer("/tool_input/command").and_then(Value::as_str) else {
        return Ok(());
    };
    let output = json
        .pointer("/tool_response/returnDisplay")
        .and_then(Value::as_str)
        .unwrap_or("");
    let exit = json
        .pointer("/tool_response/llmContent")
        .and_then(Value::as_str)
        .map(exit_code);
    let call = crate::verify::record::ShellCall {
        command,
        output,
        exit,
        call: None,
    };
    crate::integrations::shell_record::take(hook, call)
}

/// The exit status in the text Gemini CLI gives the model for a shell
/// call: its last `Exit Code: N` line (verify's own output never starts a
/// line so), else 0.
fn exit_code(llm_content: &str) -> i32 {
    llm_content
        .lines()
        .rev()
        .find_map(|line| line.strip_prefix("Exit Code: "))
        .and_then(|code| code.trim().parse().ok())
        .unwrap_or(0)
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
