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
//!   for continuations); after `spawn_agent` the subagent it started is
//!   recorded, and after `wait_agent` or `close_agent` the tasks of the
//!   recorded subagents that ended go back to pending;
//! - `PostToolUse` of the shell tool (Codex names it `Bash` there): a plain
//!   `goalkeeper verify` call's record is stored as evidence
//!   ([`crate::integrations::shell_record`]), read from the rollout file's
//!   record of that call (exit status, whole output, the shell's argv),
//!   never from `tool_response`, which is only what the model was shown
//!   (cut to a size the model picks, and only the last chunk of a long
//!   run); Codex runs the shell in a sandbox where the database is
//!   read-only, and its hooks outside it;
//! - `PreToolUse` of the `goal` tool counts the usage so far, so the
//!   response that completes the goal counts towards it;
//! - `Stop` counts the rollout file's new usage (each `response_id` once),
//!   then continues an active goal (`{"decision": "block"}`; Codex escapes
//!   the reason's text, so the continuation carries the todo block itself),
//!   delivers the budget-limit wrap-up once, or reminds about open todos
//!   when no goal is live.
//!
//! A subagent's events (they carry `agent_id`) count its own rollout file
//! and inject nothing ([`subagent`]); the main agent's `Stop` and `goal`
//! calls count the subagents' files too, as a subagent's last response
//! comes after its last event.
//!
//! A hook never breaks the agent: malformed input, an unknown event, a
//! missing rollout file or a storage error print nothing on stdout, exit 0,
//! and explain themselves on stderr.

mod install;
mod rollout;
mod subagent;

use serde_json::Value;

pub use install::codex_home;
#[cfg(test)]
use install::install_codex;
pub(crate) use install::{PLUGIN_HOOKS, PLUGIN_MCP, plugin_files};
pub use rollout::response_usage;
#[cfg_attr(not(feature = "mcp"), expect(unused_imports))]
pub use subagent::{calling_session, calling_subagent};

use super::adapter::{Adapter, HookEnv, InstallRequest, Installed};
use super::hook_event::{self, Hook, HookReply, additional_context};
use super::host_session::Host;
use super::usage_log::{LogCursor, UsageLog, count_log_usage, count_new_usage};
use crate::error::Result;
use crate::prompt::Injector;
use crate::store::{Caller, Store};

const ROLLOUT_MARK: &str = "codex.rollout";

/// Codex's adapter.
pub struct Codex;

impl Adapter for Codex {
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
        &["--codex-home"]
    }

    fn install(&self, request: &InstallRequest<'_>) -> Result<Installed> {
        let home = codex_home(request.dir)?;
        install::install(&home, request.command, request.now_ms)
    }
}

/// The mark of a subagent's rollout cursor: this, then the agent's id.
const SUBAGENT_ROLLOUT_MARK: &str = "codex.rollout.agent:";

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
        Host::Codex,
        store,
        caller,
        injector,
        input,
        now_ms,
        |hook| match hook.event.name.as_str() {
            _ if let Some(id) = subagent::of_event(&hook.event.json) => {
                let id = id.to_owned();
                subagent::event(hook, &id)
            }
            "SessionStart" => session_start(hook),
            "UserPromptSubmit" => user_prompt_submit(hook),
            "PreToolUse" => pre_tool_use(hook),
            "PostToolUse" => post_tool_use(hook),
            "Stop" => stop(hook),
            _ => hook.unhandled(),
        },
    )
}

fn session_start(hook: &mut Hook<'_, '_>) -> Result<Option<Value>> {
    let source = hook.event.str_field("source").unwrap_or("");
    if source != "compact" && source != "resume" {
        return Ok(None);
    }
    Ok(hook
        .session_context()?
        .map(|text| additional_context("SessionStart", &text)))
}

fn user_prompt_submit(hook: &mut Hook<'_, '_>) -> Result<Option<Value>> {
    let mut parts = hook.prompt_reminders()?;
    parts.extend(hook.context_if_changed()?);
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
fn pre_tool_use(hook: &mut Hook<'_, '_>) -> Result<Option<Value>> {
    let [_, goal] = Host::Codex.model_tool_names();
    if hook.event.str_field("tool_name") == Some(goal) {
        count_usage(hook)?;
    }
    Ok(None)
}

fn post_tool_use(hook: &mut Hook<'_, '_>) -> Result<Option<Value>> {
    let tool = hook.event.str_field("tool_name").unwrap_or("");
    if !Host::Codex.model_tool_names().contains(&tool) {
        if tool == SHELL_TOOL {
            shell_call(hook)?;
        }
        subagent::after_tool(hook)?;
        return Ok(None);
    }
    Ok(hook
        .context_if_changed()?
        .map(|text| additional_context("PostToolUse", &text)))
}

/// The shell tool as Codex names it in its hook events.
const SHELL_TOOL: &str = "Bash";

/// After a shell call: takes a verify run's record from the rollout
/// file's `CommandExecution` item of the call (`id` = the event's
/// `tool_use_id`), when its argv is a shell running exactly the command
/// the event names.
fn shell_call(hook: &mut Hook<'_, '_>) -> Result<()> {
    let event = hook.event;
    let json = &event.json;
    let (Some(command), Some(id), Some(path)) = (
        json.pointer("/tool_input/command").and_then(Value::as_str),
        json.get("tool_use_id").and_then(Value::as_str),
        json.get("transcript_path").and_then(Value::as_str),
    ) else {
        return Ok(());
    };
    let probe = crate::verify::record::ShellCall {
        command,
        output: "",
        exit: None,
        call: None,
    };
    if !crate::integrations::shell_record::is_verify_call(probe) {
        return Ok(());
    }
    let item = match rollout::command_execution(std::path::Path::new(path), id) {
        Ok(Some(item)) => item,
        Ok(None) => {
            hook.notes.push(format!(
                "the rollout file has no record of shell call {}; its verify record was not stored",
                crate::sanitize::one_line(id)
            ));
            return Ok(());
        }
        Err(e) => {
            hook.notes.push(format!(
                "cannot read the rollout file ({e}); the verify record of this shell call was not stored"
            ));
            return Ok(());
        }
    };
    if !item.runs(command) {
        hook.notes.push(
            "the rollout file's record of this shell call ran another command; its verify record was not stored"
                .into(),
        );
        return Ok(());
    }
    let call = crate::verify::record::ShellCall {
        command,
        output: &item.output,
        exit: item.exit,
        call: Some(id),
    };
    crate::integrations::shell_record::take(hook, call)
}

fn stop(hook: &mut Hook<'_, '_>) -> Result<Option<Value>> {
    count_usage(hook)?;
    Ok(hook_event::stop_decision(hook.stop()?, |_, text| text))
}

/// The rollout file, as [`count_new_usage`] reads it.
const ROLLOUT: UsageLog = UsageLog {
    mark: ROLLOUT_MARK,
    label: "rollout file",
    record: response_usage,
};

/// Counts the new responses of the rollout file and of every subagent's
/// towards the goal.
fn count_usage(hook: &mut Hook<'_, '_>) -> Result<()> {
    count_new_usage(hook.tx, hook.notes, &hook.event.json, &ROLLOUT, hook.now_ms)?;
    for (mark, cursor) in hook.tx.marks_with_prefix(SUBAGENT_ROLLOUT_MARK)? {
        // Every cursor was written by a hook; one that is not is skipped.
        if let Ok(cursor) = serde_json::from_str::<LogCursor>(&cursor) {
            count_log_usage(
                hook.tx,
                hook.notes,
                &cursor.path,
                &mark,
                &ROLLOUT,
                hook.now_ms,
            )?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
