//! `install claude-code`: wires the hooks, the status line, the MCP server
//! and the `/goal` command into a project's Claude Code configuration.
//!
//! - `.claude/settings.json` gets the hooks (`SessionStart`,
//!   `UserPromptSubmit`, `PreToolUse` on `Bash` for the guard and on the
//!   two tools to tell a subagent's calls, `PostToolUse` and
//!   `PostToolUseFailure` on `Bash` for a verify run's record, `Stop`, `SubagentStop`,
//!   `PreCompact`, `SessionEnd`), each with a timeout, the
//!   `statusLine`, `goalkeeper` in `enabledMcpjsonServers`, and the two
//!   tools in `permissions.allow` (so neither `claude -p` nor the
//!   interactive client asks before every todo call; Claude Code honours a
//!   project's `permissions.allow` once the folder is trusted).
//! - `.mcp.json` (where Claude Code reads project MCP servers) gets the
//!   `goalkeeper` server as a command and its arguments (Claude Code starts
//!   it without a shell), with `alwaysLoad` so its tools are not deferred
//!   behind Claude Code's tool search (the todo tool is used every turn).
//! - `.claude/commands/goal.md` is the `/goal` command: it replaces Claude
//!   Code's built-in `/goal` in the project and lets the user set, show,
//!   pause, resume, budget and drop the goal from inside Claude Code. Only
//!   the user runs it (`disable-model-invocation`).
//!
//! Teams commit these files, so the command written is the word
//! `goalkeeper` (found on `PATH` on every machine) whenever that is what
//! runs here; only when goalkeeper is not on `PATH` is this machine's path
//! written, quoted for the shell in hooks, and the report says so.
//!
//! Every key goalkeeper does not own is kept; goalkeeper's own entries
//! from an earlier install are replaced by the current ones; a
//! `statusLine` or a `/goal` command of someone else is left alone, and the
//! report says so. A file that changes is first kept as
//! `<file>.bak-<timestamp>` (or `…-2`, … when taken); a second run changes
//! nothing. A file that is not a JSON object is refused and nothing is
//! written. `.claude` or a file being a symlink is refused too (see
//! [`crate::user_files`]).

use std::path::Path;

use serde_json::json;

use crate::error::{Error, Result};
use crate::integrations::host_session::{Host, Wiring};
use crate::integrations::install::{
    Executable, FileReport, InstallReport, object_at, open_project, read_object, write_if_changed,
};
use crate::user_files::json::{Json, Object};

/// The hook events goalkeeper handles; `PreToolUse` with its matcher
/// ([`pre_tool_use_matcher`]), the two after a tool call on `Bash` alone
/// (a verify run's record, DESIGN.md §13).
const HOOK_EVENTS: [&str; 9] = [
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "Stop",
    "SubagentStop",
    "PreCompact",
    "SessionEnd",
];

/// The tools `PreToolUse` runs for: `Bash` (the guard) and goalkeeper's
/// two, as Claude Code names them when wired as `wiring`. Claude Code
/// reads a matcher with `|` as a list of tool names.
fn pre_tool_use_matcher(wiring: Wiring) -> String {
    let names = Host::ClaudeCode.names(wiring);
    format!("Bash|{}|{}", names.todo, names.goal)
}

/// Each hook event with its matcher, when it has one.
fn hook_events(wiring: Wiring) -> impl Iterator<Item = (&'static str, Option<String>)> {
    HOOK_EVENTS.into_iter().map(move |event| {
        let matcher = match event {
            "PreToolUse" => Some(pre_tool_use_matcher(wiring)),
            "PostToolUse" | "PostToolUseFailure" => Some("Bash".to_owned()),
            _ => None,
        };
        (event, matcher)
    })
}

/// One hook handler running `command`, with the timeout.
fn hook_handler(command: &str) -> Json {
    Json::from(json!({"type": "command", "command": command, "timeout": HOOK_TIMEOUT_SECONDS}))
}

/// A hook group: `matcher`, when there is one, and the handler running
/// `command`.
fn hook_group(matcher: Option<&str>, command: &str) -> Json {
    let mut group = Object::new();
    if let Some(matcher) = matcher {
        group.insert("matcher", matcher);
    }
    group.insert("hooks", Json::Array(vec![hook_handler(command)]));
    Json::Object(group)
}

/// The MCP server entry running `command` (Claude Code starts it without
/// a shell), with `alwaysLoad` so its tools are not deferred behind
/// Claude Code's tool search (the todo tool is used every turn).
fn mcp_server(command: &str) -> Json {
    Json::from(json!({
        "command": command,
        "args": ["mcp", "--session-from", Host::ClaudeCode.as_str()],
        "alwaysLoad": true,
    }))
}

/// Seconds Claude Code waits for one hook before giving up on it: far
/// above a hook's usual milliseconds, below Claude Code's own 60-second
/// default, so a stuck database never holds a turn for long.
pub const HOOK_TIMEOUT_SECONDS: u64 = 15;

/// The line in the `/goal` command's front matter that marks it as
/// goalkeeper's (so a later install may replace it).
const GOAL_COMMAND_MARK: &str = "# written by `goalkeeper install claude-code`";

/// What `install claude-code` tells the user last. Claude Code honours the
/// project's `permissions.allow` only in a folder the user trusted, so in
/// an untrusted one (a fresh clone, CI) `claude -p` asks for a permission
/// nobody can grant, and the first `todo` call fails. And its own task
/// tools, off for its newest models, would keep a second list.
pub const CLAUDE_CODE_NEXT: &str = "\
next: Claude Code runs goalkeeper's tools without asking only in a folder you trusted:
  run `claude` here once and accept the trust prompt;
  headless in an untrusted folder (CI), allow them on the command line:
  claude -p \"PROMPT\" --allowedTools mcp__goalkeeper__todo,mcp__goalkeeper__goal
note: Claude Code's own task tools are off for its newest models, so the model keeps one list, goalkeeper's;
  CLAUDE_CODE_ENABLE_TODO_TOOLS=1 brings them back beside it: goalkeeper's messages still name only
  mcp__goalkeeper__todo, and only that list is continued, reminded and shown
checks: goalkeeper does not let the agent run `goalkeeper verify` (your checks) by itself; to allow it,
  add \"Bash(goalkeeper verify:*)\" to permissions.allow in .claude/settings.json
  (headless: claude -p \"PROMPT\" --allowedTools 'Bash(goalkeeper verify:*)')";

/// Installs into `project` with `command` as the goalkeeper executable.
///
/// The files are written through [`UserDir`] (DESIGN.md §12): under a lock on
/// the project directory, read, merged and written, so two installs at once
/// both land; a `.claude` or a file that is a symlink is refused; the
/// replaced file keeps its mode and its values exactly, and the old one is
/// kept under a backup name that is never reused.
pub fn install_claude_code(
    project: &Path,
    command: &Executable,
    now_ms: i64,
) -> Result<InstallReport> {
    let dir = open_project(project)?;
    let settings_rel = Path::new(".claude/settings.json");
    let mcp_rel = Path::new(".mcp.json");
    let goal_rel = Path::new(".claude/commands/goal.md");
    // Read and check every file before writing any.
    let (settings_file, mut settings) = read_object(&dir, settings_rel)?;
    let (mcp_file, mut mcp) = read_object(&dir, mcp_rel)?;
    let goal_file = dir.read(goal_rel)?;
    let word = command.shell_word();
    let settings_changes = edit_settings(&mut settings, &word, &dir.path().join(settings_rel))?;
    let mcp_change = edit_mcp(&mut mcp, command, &dir.path().join(mcp_rel))?;
    let goal_text = goal_command(&word, Wiring::Config);
    let (goal_change, write_goal) = goal_change(
        goal_file.as_ref().map(|f| f.bytes()),
        &goal_text,
        &dir.path().join(goal_rel),
    );

    let stamp = crate::time::utc_stamp(now_ms);
    let mut files = vec![
        write_if_changed(
            &dir,
            settings_rel,
            settings_file.as_ref(),
            settings,
            settings_changes,
            &stamp,
        )?,
        write_if_changed(
            &dir,
            mcp_rel,
            mcp_file.as_ref(),
            mcp,
            vec![mcp_change],
            &stamp,
        )?,
    ];
    files.push(if write_goal {
        let done = dir.replace(goal_rel, goal_text.as_bytes(), goal_file.as_ref(), &stamp)?;
        FileReport {
            path: done.path,
            backup: done.backup,
            changes: vec![goal_change],
            written: done.written,
        }
    } else {
        FileReport {
            path: dir.path().join(goal_rel),
            backup: None,
            changes: vec![goal_change],
            written: false,
        }
    });
    Ok(InstallReport { files })
}

/// Adds the hooks, the status line, the MCP server's enabling and the
/// tools' permissions to Claude Code's settings (at `path`); returns what
/// changed.
fn edit_settings(settings: &mut Object, word: &str, path: &Path) -> Result<Vec<String>> {
    let hook = format!("{word} hook claude-code");
    let mut changes = Vec::new();
    for (event, matcher) in hook_events(Wiring::Config) {
        changes.push(set_hook(settings, event, matcher.as_deref(), &hook)?);
    }
    let status = format!("{word} statusline");
    let existing = settings
        .get("statusLine")
        .map(|s| s.get("command").and_then(Json::as_str).map(str::to_owned));
    changes.push(match existing {
        Some(Some(current)) if current == status => "statusLine: already set".to_owned(),
        Some(current) if !current.as_deref().is_some_and(|c| is_ours(c, "statusline")) => format!(
            "statusLine: left alone, another one is set ({}); to use goalkeeper's, set its command to `{status}`",
            current.as_deref().unwrap_or("not a command")
        ),
        previous => {
            settings.insert(
                "statusLine",
                Json::from(json!({"type": "command", "command": status})),
            );
            let verb = if previous.is_some() { "updated" } else { "added" };
            format!("statusLine: {verb}")
        }
    });
    changes.push(add_to_list(
        settings,
        "enabledMcpjsonServers",
        "goalkeeper",
    )?);
    let permissions = object_at(settings, "permissions", path)?;
    for tool in Host::ClaudeCode.names(Wiring::Config).tools() {
        changes.push(format!(
            "permissions.{}",
            add_to_list(permissions, "allow", tool)?
        ));
    }
    Ok(changes)
}

/// Adds the `goalkeeper` server to `.mcp.json` (at `path`), unless one of
/// that name runs something else; returns what changed.
fn edit_mcp(mcp: &mut Object, command: &Executable, path: &Path) -> Result<String> {
    let server = mcp_server(&command.0);
    let servers = object_at(mcp, "mcpServers", path)?;
    Ok(match servers.get("goalkeeper") {
        Some(existing) if *existing == server => {
            "mcpServers.goalkeeper: already present".to_owned()
        }
        Some(existing)
            if existing
                .get("args")
                .and_then(Json::as_array)
                .and_then(|a| a.first())
                .and_then(Json::as_str)
                != Some("mcp") =>
        {
            "mcpServers.goalkeeper: left alone, it does not run `goalkeeper mcp`".to_owned()
        }
        previous => {
            let verb = if previous.is_some() {
                "updated"
            } else {
                "added"
            };
            servers.insert("goalkeeper", server);
            format!("mcpServers.goalkeeper: {verb}")
        }
    })
}

/// What becomes of the `/goal` command file at `path`, holding `old`:
/// the change to report, and whether to write `text`. Someone else's
/// file is left alone.
fn goal_change(old: Option<&[u8]>, text: &str, path: &Path) -> (String, bool) {
    let old = old.map(String::from_utf8_lossy);
    match old.as_deref() {
        Some(current) if current == text => ("/goal command: already present".to_owned(), false),
        Some(current) if !current.contains(GOAL_COMMAND_MARK) => (
            format!(
                "/goal command: left alone, {} was not written by goalkeeper",
                path.display()
            ),
            false,
        ),
        Some(_) => ("/goal command: updated".to_owned(), true),
        None => ("/goal command: added".to_owned(), true),
    }
}

/// The `/goal` command file for executable `word`, wired as `wiring`.
/// Claude Code runs its `` !`…` `` line itself (no `PreToolUse` hook sees
/// it), with `$ARGUMENTS` and `${CLAUDE_SESSION_ID}` filled in, and sends
/// the output to the model with the rest of the file. The arguments go
/// into the line as typed, and Claude Code refuses a line with a shell
/// group in it: the hint quotes the objective, so parentheses and the
/// like stay in it. As a plugin's
/// command it is `/goalkeeper:goal`, and runs the plugin's own binary.
fn goal_command(word: &str, wiring: Wiring) -> String {
    let command = Host::ClaudeCode
        .names(wiring)
        .goal_command
        .unwrap_or("/goal");
    let mark = match wiring {
        Wiring::Config => format!("{GOAL_COMMAND_MARK}; remove this line to keep your own edits\n"),
        Wiring::Plugin => String::new(),
    };
    format!(
        "---
{mark}description: Steer this session's goal (goalkeeper) - set OBJECTIVE [--budget N] [--check CMD]..., show, check add CMD|rm N|list, pause, resume, budget N|none, drop
argument-hint: set \"OBJECTIVE\" [--budget N] [--check \"CMD\"]... | show | check add CMD | check rm N | check list | pause | resume | budget N|none | drop
allowed-tools: Bash({word} --session:*)
disable-model-invocation: true
---
!`{word} --session \"${{CLAUDE_SESSION_ID}}\" goal $ARGUMENTS`

The user changed this session's goal with `{command}`; goalkeeper's answer is above. Acknowledge it in one short sentence and carry on. Only the user sets, pauses, budgets or drops the goal, and adds or removes its checks.
"
    )
}

/// The executable as a plugin's hooks name it: the plugin's own
/// `bin/goalkeeper`, found through the variable Claude Code sets (and
/// fills in before the shell reads the line).
pub(crate) const PLUGIN_EXECUTABLE: &str = "\"${CLAUDE_PLUGIN_ROOT}/bin/goalkeeper\"";

/// The files of Claude Code's goalkeeper plugin (beside its `bin/`), from
/// the same hooks, server and command `install claude-code` writes into a
/// project: `hooks/hooks.json`, `.mcp.json` and `commands/goal.md`.
/// `plugin.json` and the marketplace are the package's ([`super::package`]).
pub(crate) fn plugin_files() -> Vec<(&'static str, String)> {
    let command = PLUGIN_EXECUTABLE;
    let hook = format!("{command} hook {}", Host::ClaudeCode.as_str());
    let mut events = Object::new();
    for (event, matcher) in hook_events(Wiring::Plugin) {
        events.insert(
            event,
            Json::Array(vec![hook_group(matcher.as_deref(), &hook)]),
        );
    }
    let mut hooks = Object::new();
    hooks.insert("hooks", Json::Object(events));
    // Claude Code fills in `${CLAUDE_PLUGIN_ROOT}` in an MCP server's
    // command; it is started without a shell, so no quotes.
    let server = mcp_server("${CLAUDE_PLUGIN_ROOT}/bin/goalkeeper");
    let mut servers = Object::new();
    servers.insert("goalkeeper", server);
    let mut mcp = Object::new();
    mcp.insert("mcpServers", Json::Object(servers));
    vec![
        ("hooks/hooks.json", Json::Object(hooks).to_pretty()),
        (".mcp.json", Json::Object(mcp).to_pretty()),
        // The plugin's `bin/` is on the `PATH` of the commands Claude Code
        // runs for the user (not on its hooks').
        (
            "commands/goal.md",
            goal_command("goalkeeper", Wiring::Plugin),
        ),
    ]
}

/// Whether a command is goalkeeper's `… <tail>` from an earlier install.
fn is_ours(command: &str, tail: &str) -> bool {
    command.contains("goalkeeper") && command.trim_end().ends_with(tail)
}

/// Makes `hooks.<event>` run `hook` once, in a group of its own with
/// `matcher` and the timeout: goalkeeper's entries from an earlier install
/// (a command naming goalkeeper that ends in `hook claude-code`) are
/// replaced; every other entry is kept as it was.
fn set_hook(
    settings: &mut Object,
    event: &str,
    matcher: Option<&str>,
    hook: &str,
) -> Result<String> {
    let hooks = object_at(settings, "hooks", Path::new(".claude/settings.json"))?;
    let groups = hooks.get_or_insert_with(event, || Json::Array(Vec::new()));
    let Some(groups) = groups.as_array_mut() else {
        return Err(Error::Rejected(format!(
            "`hooks.{event}` in .claude/settings.json is not a list; fix it, then install again (nothing was changed)"
        )));
    };
    let wanted = hook_group(matcher, hook);
    let ours = |entry: &Json| {
        entry
            .get("command")
            .and_then(Json::as_str)
            .is_some_and(|c| is_ours(c, "hook claude-code"))
    };
    let holds_ours = |group: &Json| {
        group
            .get("hooks")
            .and_then(Json::as_array)
            .is_some_and(|entries| entries.iter().any(ours))
    };
    if groups.iter().filter(|g| **g == wanted).count() == 1
        && !groups.iter().any(|g| *g != wanted && holds_ours(g))
    {
        return Ok(format!("hooks.{event}: already present"));
    }
    let mut replaced = false;
    for group in groups.iter_mut() {
        let entries = group
            .as_object_mut()
            .and_then(|g| g.get_mut("hooks"))
            .and_then(Json::as_array_mut);
        if let Some(entries) = entries {
            let before = entries.len();
            entries.retain(|e| !ours(e));
            if entries.len() != before {
                replaced = true;
            }
        }
    }
    // A group left empty by the removal goes too.
    groups.retain(|g| !holds_nothing(g));
    groups.push(wanted);
    Ok(format!(
        "hooks.{event}: {}",
        if replaced { "updated" } else { "added" }
    ))
}

fn holds_nothing(group: &Json) -> bool {
    group
        .get("hooks")
        .and_then(Json::as_array)
        .is_some_and(|entries| entries.is_empty())
}

fn add_to_list(settings: &mut Object, key: &str, item: &str) -> Result<String> {
    let list = settings.get_or_insert_with(key, || Json::Array(Vec::new()));
    let Some(list) = list.as_array_mut() else {
        return Err(Error::Rejected(format!(
            "`{key}` in .claude/settings.json is not a list; fix it, then install again (nothing was changed)"
        )));
    };
    if list.iter().any(|v| v.as_str() == Some(item)) {
        return Ok(format!("{key}: already lists {item}"));
    }
    list.push(item.into());
    Ok(format!("{key}: added {item}"))
}
