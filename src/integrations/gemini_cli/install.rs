//! `install gemini-cli`: wires the MCP server and the hooks into a
//! project's `.gemini/settings.json`.
//!
//! - `mcpServers.goalkeeper`: `goalkeeper mcp --session-from gemini-cli`,
//!   with `"trust": true` so the tools run in a headless `gemini -p`
//!   without `-y` (Gemini CLI otherwise asks before every MCP call).
//! - `hooks`: `SessionStart`, `BeforeAgent`, `BeforeModel`, `BeforeTool`
//!   (the `goal` tool), `AfterAgent` and `SessionEnd` run `goalkeeper hook
//!   gemini-cli` (timeouts in milliseconds).
//!
//! Every existing key is kept; an entry already present is left alone; a
//! file that changes is first copied to a timestamped backup; a second run
//! changes nothing. A file that is not a JSON object (or whose `hooks` or
//! `mcpServers` is not an object) is refused and nothing is written.

use std::path::Path;

use serde_json::json;

use crate::error::{Error, Result};
use crate::integrations::host_session::Host;
use crate::integrations::install::{
    Executable, InstallReport, object_at, read_object, write_if_changed,
};
use crate::user_files::UserDir;
use crate::user_files::json::{Json, Object};

/// The host's name in `hook` and `--session-from`.
const HOST: &str = Host::GeminiCli.as_str();

/// The events the hooks handle, with the tool matcher where one applies:
/// `BeforeTool` only for the `goal` tool, to count the usage before a call
/// that may complete the goal.
pub const HOOK_EVENTS: [(&str, Option<&str>); 6] = [
    ("SessionStart", None),
    ("BeforeAgent", None),
    ("BeforeModel", None),
    ("BeforeTool", Some(Host::GeminiCli.model_tool_names()[1])),
    ("AfterAgent", None),
    ("SessionEnd", None),
];

/// How long Gemini CLI waits for one hook run, in milliseconds. The hooks
/// bound their own database wait well below this.
pub const HOOK_TIMEOUT_MS: u64 = 30_000;

/// Installs into `project` with `command` as the goalkeeper executable.
pub fn install_gemini_cli(
    project: &Path,
    command: &Executable,
    now_ms: i64,
) -> Result<InstallReport> {
    if !project.is_dir() {
        return Err(Error::ProjectNotADirectory(project.to_owned()));
    }
    let dir = UserDir::lock(project)?;
    let rel = Path::new(".gemini/settings.json");
    let path = dir.path().join(rel);
    let (file, mut settings) = read_object(&dir, rel)?;
    let mut changes = Vec::new();
    let servers = object_at(&mut settings, "mcpServers", &path)?;
    changes.push(if servers.contains_key("goalkeeper") {
        "mcpServers.goalkeeper: already present".to_owned()
    } else {
        servers.insert(
            "goalkeeper",
            Json::from(
                json!({"command": command.0, "args": ["mcp", "--session-from", HOST], "trust": true}),
            ),
        );
        "mcpServers.goalkeeper: added (trusted, so its tools run without confirmation)".to_owned()
    });
    // Gemini CLI runs hooks through a shell.
    let hook = format!("{} hook {HOST}", command.shell_word());
    for (event, matcher) in HOOK_EVENTS {
        changes.push(add_hook(&mut settings, event, matcher, &hook, &path)?);
    }
    let stamp = crate::time::utc_stamp(now_ms);
    Ok(InstallReport {
        files: vec![write_if_changed(
            &dir,
            rel,
            file.as_ref(),
            settings,
            changes,
            &stamp,
        )?],
    })
}

/// Adds `{"matcher"?, "hooks": [{"type": "command", "command": hook, "name", "timeout"}]}`
/// to `hooks.<event>` unless some entry there already runs `hook`.
fn add_hook(
    settings: &mut Object,
    event: &str,
    matcher: Option<&str>,
    hook: &str,
    path: &Path,
) -> Result<String> {
    let hooks = object_at(settings, "hooks", path)?;
    let groups = hooks.get_or_insert_with(event, || Json::Array(Vec::new()));
    let Some(groups) = groups.as_array_mut() else {
        return Err(Error::Rejected(format!(
            "`hooks.{event}` in {} is not a list; fix it, then install again (nothing was changed)",
            path.display()
        )));
    };
    let present = groups.iter().any(|group| {
        group
            .get("hooks")
            .and_then(Json::as_array)
            .is_some_and(|hs| {
                hs.iter()
                    .any(|h| h.get("command").and_then(Json::as_str) == Some(hook))
            })
    });
    if present {
        return Ok(format!("hooks.{event}: already present"));
    }
    let mut group = Object::new();
    if let Some(matcher) = matcher {
        group.insert("matcher", matcher);
    }
    group.insert(
        "hooks",
        Json::from(
            json!([{"type": "command", "name": "goalkeeper", "command": hook, "timeout": HOOK_TIMEOUT_MS}]),
        ),
    );
    groups.push(Json::Object(group));
    Ok(format!("hooks.{event}: added"))
}
