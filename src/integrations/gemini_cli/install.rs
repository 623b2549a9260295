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

use std::path::{Path, PathBuf};

use serde_json::json;

use crate::error::{Error, Result};
use crate::integrations::adapter::{InstallRequest, Installed};
use crate::integrations::host_session::Host;
use crate::integrations::install::{
    Executable, FileReport, InstallReport, object_at, open_project, read_object, write_if_changed,
};
use crate::user_files::UserDir;
use crate::user_files::json::{Json, Object};

/// The host's name in `hook` and `--session-from`.
const HOST: &str = Host::GeminiCli.as_str();

/// The events the hooks handle, with the tool matcher where one applies:
/// `BeforeTool` only for the `goal` tool, to count the usage before a call
/// that may complete the goal; `AfterTool` only for the shell tool, for a
/// verify run's record.
pub const HOOK_EVENTS: [(&str, Option<&str>); 7] = [
    ("SessionStart", None),
    ("BeforeAgent", None),
    ("BeforeModel", None),
    ("BeforeTool", Some(Host::GeminiCli.model_tool_names()[1])),
    ("AfterTool", Some(SHELL_TOOL)),
    ("AfterAgent", None),
    ("SessionEnd", None),
];

/// Gemini CLI's shell tool.
pub const SHELL_TOOL: &str = "run_shell_command";

/// How long Gemini CLI waits for one hook run, in milliseconds. The hooks
/// bound their own database wait well below this.
pub const HOOK_TIMEOUT_MS: u64 = 30_000;

/// The MCP server's arguments.
const SERVER_ARGS: [&str; 3] = ["mcp", "--session-from", HOST];

/// The hook command for executable `word` (a shell word).
fn hook_command(word: &str) -> String {
    format!("{word} hook {HOST}")
}

/// One hook group: `matcher`, when there is one, and the handler running
/// `hook`, named and with the timeout.
fn hook_group(matcher: Option<&str>, hook: &str) -> Json {
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
    Json::Object(group)
}

/// The variables a user may set for the extension (`gemini extensions
/// config goalkeeper`), which Gemini CLI then passes to its MCP server and
/// hooks: an extension's processes get Gemini CLI's environment filtered,
/// and only a listed setting reaches them for sure.
const EXTENSION_SETTINGS: [(&str, &str, &str); 2] = [
    (
        "Database",
        "GOALKEEPER_DB",
        "goalkeeper's database, a SQLite file or a postgres:// URL (empty: the default file)",
    ),
    (
        "Settings file",
        "GOALKEEPER_CONFIG",
        "goalkeeper's settings file (empty: the default)",
    ),
];

/// `gemini-extension.json`'s parts goalkeeper decides, from the same server
/// `install gemini-cli` writes into a project: the MCP server (the
/// extension's binary, through the `${extensionPath}` Gemini CLI fills
/// in) and the settings. An extension's server cannot be trusted by the
/// extension itself (Gemini CLI drops its `trust`): the user's policy
/// allows its tools ([`user_policy`]).
pub(crate) fn extension_manifest(name: &str, version: &str, description: &str) -> String {
    let settings: Vec<serde_json::Value> = EXTENSION_SETTINGS
        .iter()
        .map(|(name, var, about)| json!({"name": name, "description": about, "envVar": var}))
        .collect();
    let manifest = json!({
        "name": name,
        "version": version,
        "description": description,
        "mcpServers": {"goalkeeper": {
            "command": "${extensionPath}/bin/goalkeeper",
            "args": SERVER_ARGS,
        }},
        "settings": settings,
    });
    Json::from(manifest).to_pretty()
}

/// The extension's `hooks/hooks.json` and `commands/goal.toml`, from the
/// same events and timeouts `install gemini-cli` writes into a project.
/// The `/goal` command runs the installed extension's binary, in Gemini
/// CLI's home (`$GEMINI_CLI_HOME`, else `$HOME`; Gemini CLI fills in no
/// variable in a command) through a shell that splits the
/// words Gemini CLI passes as one, and asks the user before it runs.
pub(crate) fn extension_files() -> Vec<(&'static str, String)> {
    let hook = hook_command("\"${extensionPath}/bin/goalkeeper\"");
    let mut events = Object::new();
    for (event, matcher) in HOOK_EVENTS {
        events.insert(event, Json::Array(vec![hook_group(matcher, &hook)]));
    }
    let mut hooks = Object::new();
    hooks.insert("hooks", Json::Object(events));
    let goal = format!(
        r#"description = "Steer this session's goal (goalkeeper): set OBJECTIVE [--budget N] [--check CMD]..., show, check add CMD|rm N|list, pause, resume, budget N|none, drop"
prompt = """!{{sh -c 'set -f; exec "${{GEMINI_CLI_HOME:-$HOME}}/.gemini/extensions/goalkeeper/bin/goalkeeper" --session-from {HOST} goal $1' goal {{{{args}}}}}}

The user changed this session's goal with `/goal`; goalkeeper's answer is above. Acknowledge it in one short sentence and carry on. Only the user sets, pauses, budgets or drops the goal, and adds or removes its checks."""
"#
    );
    vec![
        ("hooks/hooks.json", Json::Object(hooks).to_pretty()),
        ("commands/goal.toml", goal),
    ]
}

/// Gemini CLI's user folder: `$GEMINI_CLI_HOME/.gemini`, else
/// `$HOME/.gemini`, as Gemini CLI finds it.
pub fn gemini_dir() -> Result<PathBuf> {
    ["GEMINI_CLI_HOME", "HOME"]
        .into_iter()
        .find_map(|var| std::env::var_os(var).filter(|v| !v.is_empty()))
        .map(|home| PathBuf::from(home).join(".gemini"))
        .ok_or_else(|| {
            Error::Usage(
                "cannot find Gemini CLI's folder: neither GEMINI_CLI_HOME nor HOME is set".into(),
            )
        })
}

/// Whether goalkeeper's extension is installed in Gemini CLI's folder
/// `gemini` (`gemini extensions install`): its hooks and server then serve
/// every project, and a project needs none of its own.
pub fn extension_installed(gemini: &Path) -> bool {
    gemini
        .join("extensions/goalkeeper/gemini-extension.json")
        .is_file()
}

/// Where the user policy goes, relative to Gemini CLI's folder.
pub const POLICY_PATH: &str = "policies/goalkeeper.toml";

/// How the policy goalkeeper wrote begins.
const POLICY_MARK: &str = "# written by `goalkeeper install gemini-cli --policy`";

/// The user policy that lets the extension's tools run without a
/// confirmation: Gemini CLI ignores an extension's own rule that allows
/// its tools, so the user's must (and `gemini -p` has nobody to ask).
pub fn user_policy() -> String {
    format!(
        "{POLICY_MARK}; remove this line to keep your own edits
# goalkeeper's todo and goal tools run without asking (Gemini CLI ignores an
# extension's own rule that would allow them).
[[rule]]
mcpName = \"goalkeeper\"
toolName = \"*\"
decision = \"allow\"
priority = 100
"
    )
}

/// Writes [`user_policy`] into Gemini CLI's folder `gemini`. A policy file
/// of that name goalkeeper did not write is refused (it may be the user's
/// own); one it wrote is replaced, the previous version backed up; a
/// second run changes nothing.
pub fn install_user_policy(gemini: &Path, now_ms: i64) -> Result<InstallReport> {
    std::fs::create_dir_all(gemini).map_err(|source| Error::Io {
        what: format!("cannot create {}", gemini.display()),
        source,
    })?;
    let dir = UserDir::lock(gemini)?;
    let rel = Path::new(POLICY_PATH);
    let path = dir.path().join(rel);
    let existing = dir.read(rel)?;
    if let Some(file) = &existing
        && !file.bytes().starts_with(POLICY_MARK.as_bytes())
    {
        return Err(Error::Rejected(format!(
            "{} exists and was not written by goalkeeper; add this rule to it yourself, or move it away and install again (nothing was changed):\n{}",
            path.display(),
            user_policy().lines().skip(3).collect::<Vec<_>>().join("\n")
        )));
    }
    let stamp = crate::time::utc_stamp(now_ms);
    let done = dir.replace(rel, user_policy().as_bytes(), existing.as_ref(), &stamp)?;
    let change = if done.written {
        "policy: written (goalkeeper's tools run without asking)"
    } else {
        "policy: already present"
    };
    Ok(InstallReport {
        files: vec![FileReport {
            path: done.path,
            backup: done.backup,
            changes: vec![change.to_owned()],
            written: done.written,
        }],
    })
}

/// `install gemini-cli`: with goalkeeper's extension installed, its hooks
/// and server serve every project, so no project gets its own; what it
/// lacks is the user policy that lets its tools run without asking, which
/// `--policy` writes, and which is offered (`ask`) when there is none.
/// Without the extension, the project is wired ([`install_gemini_cli`]),
/// and `--policy` writes the policy too.
pub(super) fn install(request: &InstallRequest<'_>) -> Result<Installed> {
    // Without a home there is no extension either.
    let gemini = gemini_dir();
    let Some(gemini) = gemini.as_ref().ok().filter(|g| extension_installed(g)) else {
        let mut report = install_gemini_cli(&request.project()?, request.command, request.now_ms)?;
        if request.policy {
            let written = install_user_policy(&gemini?, request.now_ms)?;
            report.files.extend(written.files);
        }
        return Ok(report.into());
    };
    let path = gemini.join(POLICY_PATH);
    let write = request.policy
        || (!path.exists()
            && (request.ask)(&format!(
                "goalkeeper's Gemini CLI extension is installed: its hooks and MCP server serve every project.\n\
                 Gemini CLI asks before each call of an extension's tools (and refuses them in `gemini -p`) unless a policy of yours allows them.\n\
                 Write {} to allow goalkeeper's tools? [y/N] ",
                path.display()
            )));
    let report = if write {
        install_user_policy(gemini, request.now_ms)?
    } else {
        InstallReport { files: Vec::new() }
    };
    let mut notes = vec![format!(
        "goalkeeper's extension is installed in {}: nothing written to the project (the extension serves every project)",
        gemini.join("extensions/goalkeeper").display()
    )];
    if !write && !path.exists() {
        let rule: Vec<String> = user_policy()
            .lines()
            .skip(3)
            .map(|l| format!("  {l}"))
            .collect();
        notes.push(format!(
            "note: Gemini CLI runs the extension's tools without asking only under a policy of yours; `goalkeeper install gemini-cli --policy` writes {}:\n{}",
            path.display(),
            rule.join("\n")
        ));
    }
    Ok(Installed {
        report,
        notes,
        packaged: true,
    })
}

/// Installs into `project` with `command` as the goalkeeper executable.
pub fn install_gemini_cli(
    project: &Path,
    command: &Executable,
    now_ms: i64,
) -> Result<InstallReport> {
    let dir = open_project(project)?;
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
            Json::from(json!({"command": command.0, "args": SERVER_ARGS, "trust": true})),
        );
        "mcpServers.goalkeeper: added (trusted, so its tools run without confirmation)".to_owned()
    });
    // Gemini CLI runs hooks through a shell.
    let hook = hook_command(&command.shell_word());
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
    groups.push(hook_group(matcher, hook));
    Ok(format!("hooks.{event}: added"))
}
