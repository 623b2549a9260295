//! Claude Code hooks (DESIGN.md §9): one hook event as JSON on stdin, the reply
//! as JSON on stdout. The session is the event's `session_id`.
//!
//! Every event first records the session as the one Claude Code runs in
//! its directory (a goal queued there is adopted by a new session), then
//! counts the token usage written to the transcripts since the last event
//! (the session's and its subagents'), so every response is counted once,
//! by the end of the session at the latest.
//!
//! - `SessionStart`: after `compact` or `resume`, the goal-mode context (or
//!   the bare `<todo_context>` without an active goal) as additional
//!   context, so the todos survive compaction; after `clear` or `fork`, the
//!   goal and the list carry over from the session cleared or forked, then
//!   the same context. A subagent's compaction (its events carry
//!   `agent_id`) gets nothing: the context is the main session's.
//! - `UserPromptSubmit`: the eager-todo reminder on the first prompt, a
//!   pending todo-error reminder, and the goal-mode context when the goal or
//!   the list changed since it was last injected.
//! - `PreToolUse` on `Bash`: refuses the agent's shell commands that run
//!   a goalkeeper command acting as the person ([`guard`]). On goalkeeper's own
//!   tools: records a subagent's call as that agent's, for the MCP
//!   server's call to act as it ([`subagent`]); as a plugin, which cannot
//!   allow its tools through settings, it also allows the call.
//! - `PostToolUse` and `PostToolUseFailure` on `Bash` (Claude Code sends
//!   the second for a nonzero exit, `error` starting `Exit code N`): a
//!   plain `goalkeeper verify` call's record, from the output Claude Code
//!   captured, is stored as evidence ([`shell_record`]), for a sandboxed
//!   shell that could not write the database.
//! - `Stop`: continues an active goal (`{"decision": "block"}`), delivers
//!   the budget-limit wrap-up once, or reminds about open todos (no live
//!   goal) up to `todo.reminders.max` times until the list changes. After
//!   the wrap-up, or once the goal is paused, nothing asks for more work.
//!   At Claude Code's cap on blocks in a row it does not block ([`block_cap`]).
//! - `SubagentStop`, `PreCompact`, `SessionEnd`: usage only (`SessionEnd`
//!   of a `/clear` also remembers the session the next one continues). A
//!   subagent is never continued nor sent the wrap-up: `Stop` is the main
//!   agent's alone.
//!
//! A hook must never break the agent: malformed input, an unknown event, a
//! missing transcript or a storage error print nothing on stdout, exit 0,
//! and explain themselves on stderr.

mod block_cap;
mod guard;
mod install;
mod subagent;
mod transcript;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::Value;

pub use super::command_line::{Acts, ReadLine, Reading};
pub use block_cap::{CAP_VAR, cap_from};
#[cfg(test)]
pub(crate) use guard::{Refusal, refusal};
pub(crate) use install::plugin_files;
pub use install::{CLAUDE_CODE_NEXT, install_claude_code};

/// Claude Code's adapter.
pub struct ClaudeCode;

impl Adapter for ClaudeCode {
    fn handle(
        &self,
        store: &mut Store,
        injector: &Injector,
        input: &str,
        env: &HookEnv<'_>,
    ) -> HookReply {
        // Claude Code's own cap, from the environment it passes its hooks;
        // as a plugin, it names goalkeeper's parts otherwise.
        let run = Run {
            now_ms: env.now_ms,
            read_time: env.read_time,
            block_cap: cap_from((env.var)(CAP_VAR).as_deref()),
            wiring: Wiring::of_env(Host::ClaudeCode, env.var),
            read: env.read,
        };
        handle_within(store, env.caller, injector, input, &run)
    }

    fn install_flags(&self) -> &'static [&'static str] {
        &["--project"]
    }

    fn install(&self, request: &InstallRequest<'_>) -> Result<Installed> {
        let report = install_claude_code(&request.project()?, request.command, request.now_ms)?;
        Ok(Installed {
            report,
            notes: vec![CLAUDE_CODE_NEXT.to_owned()],
            packaged: false,
        })
    }
}
#[cfg_attr(not(feature = "mcp"), expect(unused_imports))]
pub use subagent::TOOL_USE_META;
pub use transcript::{Cursor, read_all_until};

use super::adapter::{Adapter, HookEnv, InstallRequest, Installed};
use super::hook_event::{self, Hook, HookEvent, HookReply, additional_context};
use super::host_session::{self, Host, HostNames, Wiring};
use crate::SessionId;
use crate::error::Result;
use crate::prompt::Injector;
use crate::store::{Caller, Store};
use subagent::SubagentCall;

/// Marks remembered per session between hook runs (besides the core's).
const TRANSCRIPT_MARK: &str = "claude-code.transcript";
const TURN_MARK: &str = "claude-code.turn-goal";

/// How long `Stop` waits for Claude Code to write the turn's last response
/// to the transcript before counting without it (the next event counts it).
const STOP_WAIT: Duration = Duration::from_millis(1500);

/// How one hook event runs.
pub struct Run {
    /// The event's time.
    pub now_ms: i64,
    /// How long the transcripts may be read; what is left is counted by
    /// the next event.
    pub read_time: Duration,
    /// Claude Code's cap on Stop-hook blocks in a row ([`cap_from`]).
    pub block_cap: Option<u64>,
    /// How goalkeeper is wired: its tools' and its command's names follow.
    pub wiring: Wiring,
    /// Reads a goalkeeper command line for the guard on the `Bash` tool
    /// ([`guard`]).
    pub read: ReadLine,
}

/// Handles one hook event as `run` says. Never fails: every problem
/// becomes a note and an empty reply.
pub fn handle_within(
    store: &mut Store,
    caller: &Caller,
    injector: &Injector,
    input: &str,
    run: &Run,
) -> HookReply {
    let Run {
        now_ms,
        read_time,
        block_cap,
        wiring,
        read,
    } = *run;
    let event = match HookEvent::parse(input) {
        Ok(event) => event,
        Err(reply) => return reply,
    };
    let names = Host::ClaudeCode.names(wiring);
    if event.name == "PreToolUse" {
        if names.is_tool(event.str_field("tool_name").unwrap_or("")) {
            return own_tool(&event, store, caller, injector, now_ms, wiring);
        }
        // The guard reads nothing stored: it answers even when the store
        // is unusable, and costs no transaction.
        return HookReply {
            stdout: guard::pre_tool_use(&event.json, read, &names),
            notes: Vec::new(),
        };
    }
    if event.name == "Stop" {
        // Outside the transaction: the wait holds no lock.
        wait_for_last_response(&event.json);
    }
    // One transaction for the whole event: two hooks of one session run
    // one after the other, so a transcript's usage is counted once.
    event.run(Host::ClaudeCode, store, caller, injector, now_ms, |hook| {
        steps(hook, read_time, block_cap, &names)
    })
}

/// `PreToolUse` of goalkeeper's own `todo` or `goal` tool: a subagent's
/// call is recorded as its agent's ([`subagent`]); as a plugin, the call
/// is allowed, the one way a plugin can let its own tools run without the
/// user's approval (its settings cannot list them in `permissions.allow`).
fn own_tool(
    event: &HookEvent,
    store: &mut Store,
    caller: &Caller,
    injector: &Injector,
    now_ms: i64,
    wiring: Wiring,
) -> HookReply {
    let mut reply = match SubagentCall::of(&event.json) {
        Some(call) => event.run(Host::ClaudeCode, store, caller, injector, now_ms, |hook| {
            call.record(hook)
        }),
        None => HookReply::default(),
    };
    if wiring == Wiring::Plugin {
        reply.stdout = Some(serde_json::json!({"hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "allow",
            "permissionDecisionReason": "goalkeeper's own tool",
        }}));
    }
    reply
}

fn steps(
    hook: &mut Hook<'_, '_>,
    read_time: Duration,
    block_cap: Option<u64>,
    names: &HostNames,
) -> Result<Option<Value>> {
    let source = hook.event.str_field("source").unwrap_or("");
    if hook.event.name == "SessionStart" && matches!(source, "clear" | "fork") && !of_subagent(hook)
    {
        // Before counting: the new session's transcript holds none of
        // its own responses yet.
        carry_over(hook, source)?;
    }
    count_usage(hook, read_time)?;
    match hook.event.name.as_str() {
        "SessionStart" => session_start(hook, source),
        "UserPromptSubmit" => user_prompt_submit(hook),
        "Stop" => stop(hook, block_cap, names),
        "SessionEnd" => {
            if hook.event.str_field("reason") == Some("clear")
                && let Some(dir) = &hook.dir
            {
                let session = hook.tx.session().as_str().to_owned();
                hook.tx
                    .set_pointer(&cleared_key(dir), &session, hook.now_ms)?;
            }
            Ok(None)
        }
        "SubagentStop" => {
            subagent::stopped(hook)?;
            Ok(None)
        }
        "PreCompact" => Ok(None),
        "PostToolUse" | "PostToolUseFailure" => {
            shell_call(hook)?;
            Ok(None)
        }
        _ => hook.unhandled(),
    }
}

/// After a `Bash` call: takes a verify run's record from what Claude Code
/// captured of it (`tool_response.stdout` for an exit 0; for any other,
/// the failure event's `error`: `Exit code N`, a line break, the output).
fn shell_call(hook: &mut Hook<'_, '_>) -> Result<()> {
    let event = hook.event;
    let json = &event.json;
    if json.get("tool_name").and_then(Value::as_str) != Some("Bash") {
        return Ok(());
    }
    let Some(command) = json.pointer("/tool_input/command").and_then(Value::as_str) else {
        return Ok(());
    };
    let (output, exit) = if hook.event.name == "PostToolUse" {
        let stdout = json
            .pointer("/tool_response/stdout")
            .and_then(Value::as_str);
        (stdout.unwrap_or(""), Some(0))
    } else {
        let error = json.get("error").and_then(Value::as_str).unwrap_or("");
        match error
            .strip_prefix("Exit code ")
            .and_then(|rest| rest.split_once('\n').or(Some((rest, ""))))
            .and_then(|(code, output)| Some((output, code.trim().parse::<i32>().ok()?)))
        {
            Some((output, code)) => (output, Some(code)),
            // Interrupted, or refused before it ran: no run to take.
            None => return Ok(()),
        }
    };
    let call = crate::verify::record::ShellCall {
        command,
        output,
        exit,
        call: None,
    };
    super::shell_record::take(hook, call)
}

/// The event is a subagent's (Claude Code names the agent): a subagent's
/// compaction starts it again with `source` `compact`.
fn of_subagent(hook: &Hook<'_, '_>) -> bool {
    hook.event
        .json
        .get("agent_id")
        .is_some_and(|a| !a.is_null())
}

/// `/clear` or a fork (`--fork-session`) moved the conversation to this
/// new session: the goal and the list of the session it came from come
/// along (copied: a forked session goes on as well). After `/clear`, the
/// MCP server started for the cleared session follows to this one.
fn carry_over(hook: &mut Hook<'_, '_>, source: &str) -> Result<()> {
    let Some(dir) = &hook.dir else {
        return Ok(());
    };
    let cleared = match source {
        "clear" => hook.tx.take_pointer(&cleared_key(dir))?,
        _ => None,
    };
    // A fork's event names no parent, and its transcript is written later:
    // the session Claude Code ran here last is the one it forked.
    let from = match cleared {
        Some(id) => SessionId::parse(&id).ok(),
        None => hook.previous.clone(),
    };
    let Some(from) = from.filter(|f| f != hook.tx.session()) else {
        return Ok(());
    };
    // A fork runs in a client of its own, whose MCP server starts for the
    // fork, while the session forked may still run in another: only
    // `/clear` moves a running client's server along.
    if source == "clear" {
        host_session::record_successor_in(hook.tx, Host::ClaudeCode, &from, hook.now_ms)?;
    }
    let how = if source == "clear" {
        "cleared"
    } else {
        "forked"
    };
    if let Some(goal) = hook.tx.carry_from(&from, how, hook.now_ms)? {
        hook.notes
            .push(format!("carried goal #{} over from {from}", goal.id));
    }
    Ok(())
}

fn session_start(hook: &mut Hook<'_, '_>, source: &str) -> Result<Option<Value>> {
    if !matches!(source, "compact" | "resume" | "clear" | "fork") || of_subagent(hook) {
        return Ok(None);
    }
    // A resumed conversation replays what was injected before: when the
    // state is what was last injected, the model has it already (after a
    // compaction, the compact start injected it again).
    if source == "resume" && hook.context_is_current()? {
        return Ok(None);
    }
    Ok(hook
        .session_context()?
        .map(|text| additional_context("SessionStart", &text)))
}

fn user_prompt_submit(hook: &mut Hook<'_, '_>) -> Result<Option<Value>> {
    hook.tx.begin_turn(TURN_MARK, hook.now_ms)?;
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

fn stop(
    hook: &mut Hook<'_, '_>,
    block_cap: Option<u64>,
    names: &HostNames,
) -> Result<Option<Value>> {
    let blocks = block_cap::count_stop(hook)?;
    if let Some(cap) = block_cap.filter(|&cap| blocks >= cap) {
        return block_cap::at_cap(hook, cap);
    }
    // For the user (the model never reads a systemMessage): how to go on
    // from inside Claude Code.
    let command = names.goal_command.unwrap_or("/goal");
    Ok(hook_event::stop_decision(hook.stop()?, |goal, _| {
        format!(
            "goalkeeper paused goal #{goal}: the last continuations made no progress (no change to the todo list or the goal). Resume it with {command} resume once there is a way forward."
        )
    }))
}

/// Counts the usage written to the transcripts (the session's and its
/// subagents') since the last event, in this event's transaction.
fn count_usage(hook: &mut Hook<'_, '_>, read_time: Duration) -> Result<()> {
    let Some(path) = hook.event.str_field("transcript_path") else {
        return Ok(());
    };
    let path = PathBuf::from(path);
    let extra: Vec<PathBuf> = hook
        .event
        .str_field("agent_transcript_path")
        .map(PathBuf::from)
        .into_iter()
        .collect();
    let mut cursor = hook
        .tx
        .mark(TRANSCRIPT_MARK)?
        .as_deref()
        .map(Cursor::parse)
        .unwrap_or_default();
    let read = read_all_until(&path, &extra, &mut cursor, Instant::now() + read_time);
    if read.bad_lines > 0 {
        hook.notes.push(format!(
            "skipped {} unreadable transcript lines",
            read.bad_lines
        ));
    }
    for problem in read.problems {
        hook.notes.push(format!("{problem}; usage not counted"));
    }
    if read.tool_calls > 0 {
        block_cap::tool_called(hook)?;
    }
    hook.tx.count_usage(read.usage, TURN_MARK, hook.now_ms)?;
    hook.tx
        .set_mark(TRANSCRIPT_MARK, &cursor.to_text(), hook.now_ms)
}

/// The pointer naming the session a `/clear` in `dir` just ended.
fn cleared_key(dir: &Path) -> String {
    format!("claude-code:cleared:{}", host_session::dir_key(dir))
}

/// At `Stop`, waits (at most [`STOP_WAIT`]) until the transcript holds the
/// turn's last response, which Claude Code may write after starting the
/// hook; what still is not there is counted by the next event.
fn wait_for_last_response(event: &Value) {
    let (Some(path), Some(text)) = (
        event.get("transcript_path").and_then(Value::as_str),
        event
            .get("last_assistant_message")
            .and_then(Value::as_str)
            .filter(|t| !t.is_empty()),
    ) else {
        return;
    };
    let needle = serde_json::to_string(text).expect("a string serializes");
    let deadline = Instant::now() + STOP_WAIT;
    while !tail_contains(Path::new(path), needle.as_bytes()) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Whether the last 64 KiB of `path` hold `needle` (true for anything but
/// a regular file, which is never waited for).
fn tail_contains(path: &Path, needle: &[u8]) -> bool {
    use std::io::{Read, Seek, SeekFrom};
    const TAIL: u64 = 64 * 1024;
    let Ok(meta) = std::fs::metadata(path) else {
        return false;
    };
    if !meta.is_file() {
        return true;
    }
    let Ok(mut file) = std::fs::File::open(path) else {
        return false;
    };
    let start = meta.len().saturating_sub(TAIL);
    let mut bytes = Vec::new();
    if file.seek(SeekFrom::Start(start)).is_err() || file.read_to_end(&mut bytes).is_err() {
        return false;
    }
    bytes.windows(needle.len().max(1)).any(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::integrations::hook_fixture::{Fixture, event};

    fn fixture(wiring: Wiring) -> Fixture {
        let handle = match wiring {
            Wiring::Config => config_handle as super::super::hook_fixture::Handle,
            Wiring::Plugin => plugin_handle,
        };
        Fixture::new(handle, "cc-1", None)
    }

    fn config_handle(
        store: &mut Store,
        caller: &Caller,
        injector: &Injector,
        input: &str,
        now: i64,
    ) -> HookReply {
        let run = Run {
            now_ms: now,
            read_time: Duration::ZERO,
            block_cap: None,
            wiring: Wiring::Config,
            read: |_| Reading::Unknown("no command line is read here".into()),
        };
        handle_within(store, caller, injector, input, &run)
    }

    fn plugin_handle(
        store: &mut Store,
        caller: &Caller,
        injector: &Injector,
        input: &str,
        now: i64,
    ) -> HookReply {
        let run = Run {
            now_ms: now,
            read_time: Duration::ZERO,
            block_cap: None,
            wiring: Wiring::Plugin,
            read: |_| Reading::Unknown("no command line is read here".into()),
        };
        handle_within(store, caller, injector, input, &run)
    }

    fn pre_tool_use(tool: &str, agent: Option<&str>) -> String {
        let mut extra = json!({"tool_name": tool, "tool_input": {"op": "view"},
            "tool_use_id": "toolu_1"});
        if let Some(agent) = agent {
            extra["agent_id"] = json!(agent);
        }
        event("PreToolUse", "cc-1", extra)
    }

    /// As a plugin, goalkeeper's hook allows the calls of its own two
    /// tools (a plugin cannot list them in `permissions.allow`), the main
    /// agent's and a subagent's, whose call it still records; it allows
    /// nothing else. Wired by `install`, it allows nothing: the project's
    /// settings do.
    #[test]
    fn as_a_plugin_the_hook_allows_its_own_tools_only() {
        let plugin = Host::ClaudeCode.names(Wiring::Plugin);
        let allow = json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
            "permissionDecision": "allow", "permissionDecisionReason": "goalkeeper's own tool"}});
        let mut fx = fixture(Wiring::Plugin);
        for tool in plugin.tools() {
            let reply = fx.send(&pre_tool_use(tool, None));
            assert_eq!((reply.stdout, reply.notes), (Some(allow.clone()), vec![]));
        }
        let reply = fx.send(&pre_tool_use(plugin.todo, Some("a1f")));
        assert_eq!(reply.stdout, Some(allow.clone()));
        // The MCP server's call with that tool-use id acts as the subagent.
        let append =
            crate::todo::Call::Json(r#"{"op": "append", "phase": "Tasks", "items": ["B"]}"#);
        fx.store
            .todo(
                &fx.session,
                append,
                crate::todo::Actor::User,
                &mut crate::store::Caller::default(),
                1,
            )
            .unwrap();
        let mut caller = crate::store::Caller::default();
        caller.act_for_call(Some(crate::store::CallFrom::ToolUse("toolu_1".into())));
        let start = crate::todo::Call::Json(r#"{"op": "start", "task": "B"}"#);
        let started = fx
            .store
            .todo(
                &fx.session,
                start,
                crate::todo::Actor::Agent,
                &mut caller,
                1,
            )
            .unwrap();
        assert!(!started.is_error, "{}", started.text());
        let (list, _) = fx.store.read(&fx.session, |tx| tx.todo_list()).unwrap();
        assert_eq!(list.phases[0].tasks[1].agent.as_deref(), Some("a1f"));
        // Another tool, or the names of a project install, get nothing.
        for tool in ["Read", "mcp__goalkeeper__todo", "mcp__other__todo"] {
            assert_eq!(fx.send(&pre_tool_use(tool, None)).stdout, None, "{tool}");
        }
        let mut fx = fixture(Wiring::Config);
        let config = Host::ClaudeCode.names(Wiring::Config);
        for tool in config.tools() {
            assert_eq!(fx.send(&pre_tool_use(tool, None)), HookReply::default());
        }
    }
}
