//! `install codex`: wires the MCP server and the hooks into the user's
//! Codex configuration (`$CODEX_HOME`, default `~/.codex`).
//!
//! - `config.toml` gets `[mcp_servers.goalkeeper]` (`goalkeeper mcp
//!   --session-from codex`) with `default_tools_approval_mode = "approve"`
//!   (without it `codex exec` refuses every call: "requires approval, but
//!   approval policy is never") and `env_vars` passing goalkeeper's
//!   variables (Codex starts MCP servers with a whitelisted environment,
//!   while hooks get the whole one: without them the tools and the hooks
//!   would use two different databases); `features.goals = false`, so the
//!   model does not see Codex's own goal tools beside goalkeeper's (a value
//!   the user set is left alone); and the trust entries of goalkeeper's
//!   hooks (`[hooks.state."<hooks.json>:<event>:<group>:<handler>"]
//!   trusted_hash`), without which Codex silently never runs them.
//! - `hooks.json` gets `SessionStart`, `UserPromptSubmit`, `PreToolUse`,
//!   `PostToolUse` and `Stop`, each running `goalkeeper hook codex`.
//!
//! When goalkeeper's plugin is installed (`codex plugin add
//! goalkeeper@…`), its hooks and server come with it, and `install codex`
//! only finishes what Codex cannot: the trust entries of the plugin's
//! hooks, once it has checked they are the ones this goalkeeper writes,
//! and `features.goals = false`.
//!
//! `config.toml` is edited in place: comments, layout and every value
//! goalkeeper does not set stay byte for byte. Every existing entry is
//! kept; a file that changes is first backed up; a second run changes
//! nothing. A file that cannot be read as TOML / a JSON object is refused
//! and neither file is written.

use std::path::{Path, PathBuf};

use serde_json::json;
use sha2::{Digest, Sha256};
use toml_edit::{DocumentMut, Item, Table, value};

use crate::error::{Error, Result};
use crate::integrations::adapter::Installed;
use crate::integrations::host_session::Host;
use crate::integrations::install::{
    Executable, FileReport, InstallReport, object_at, read_object, write_if_changed,
};
use crate::user_files::json::{Json, Object};
use crate::user_files::{UserDir, UserFile};

/// The host's name in `hook` and `--session-from`.
const HOST: &str = Host::Codex.as_str();

/// The events the hooks handle, with the names Codex uses in trust keys.
pub const HOOK_EVENTS: [(&str, &str); 5] = [
    ("SessionStart", "session_start"),
    ("UserPromptSubmit", "user_prompt_submit"),
    ("PreToolUse", "pre_tool_use"),
    ("PostToolUse", "post_tool_use"),
    ("Stop", "stop"),
];

/// How long Codex waits for one hook run, in seconds. The hooks bound their
/// own database wait well below this.
pub const HOOK_TIMEOUT_S: u64 = 30;

/// The variables the MCP server needs from the environment Codex was
/// started in (Codex passes the rest of its whitelist, HOME and PATH among
/// them, anyway).
const ENV_VARS: [&str; 4] = [
    "GOALKEEPER_DB",
    "GOALKEEPER_CONFIG",
    "GOALKEEPER_NOW",
    "XDG_DATA_HOME",
];

/// The MCP server's arguments.
const SERVER_ARGS: [&str; 3] = ["mcp", "--session-from", HOST];

/// What a Codex plugin's hooks name goalkeeper: the plugin's own binary,
/// through the variable Codex fills in before the shell reads the line.
pub(crate) const PLUGIN_EXECUTABLE: &str = "\"${PLUGIN_ROOT}/bin/goalkeeper\"";

/// Where a plugin's hooks and server are, relative to the plugin:
/// `.codex-plugin/plugin.json` points Codex at them, so that Claude Code's
/// files (`hooks/hooks.json`, `.mcp.json`) in the same plugin stay
/// Claude Code's.
pub(crate) const PLUGIN_HOOKS: &str = "codex/hooks.json";
pub(crate) const PLUGIN_MCP: &str = "codex/mcp.json";

/// The hook command for executable `word` (a shell word).
fn hook_command(word: &str) -> String {
    format!("{word} hook {HOST}")
}

/// One hook group: the handler running `hook`, with the timeout.
fn hook_group(hook: &str) -> Json {
    Json::from(json!({"hooks": [
        {"type": "command", "command": hook, "timeout": HOOK_TIMEOUT_S}
    ]}))
}

/// The hooks and the MCP server of Codex's goalkeeper plugin, from the same
/// events, commands and server `install codex` writes into the user's
/// configuration: [`PLUGIN_HOOKS`] and [`PLUGIN_MCP`]. The server runs
/// the plugin's binary from the plugin's folder (Codex does not fill in
/// variables in a server's command), with its tools approved and
/// goalkeeper's variables passed, as `install codex` sets them.
pub(crate) fn plugin_files() -> Vec<(&'static str, String)> {
    let hook = hook_command(PLUGIN_EXECUTABLE);
    let mut events = Object::new();
    for (event, _) in HOOK_EVENTS {
        events.insert(event, Json::Array(vec![hook_group(&hook)]));
    }
    let mut hooks = Object::new();
    hooks.insert("hooks", Json::Object(events));
    let server = Json::from(json!({
        "command": "./bin/goalkeeper",
        "cwd": "./",
        "args": SERVER_ARGS,
        "env_vars": ENV_VARS,
        "default_tools_approval_mode": "approve",
    }));
    let mut servers = Object::new();
    servers.insert("goalkeeper", server);
    let mut mcp = Object::new();
    mcp.insert("mcpServers", Json::Object(servers));
    vec![
        (PLUGIN_HOOKS, Json::Object(hooks).to_pretty()),
        (PLUGIN_MCP, Json::Object(mcp).to_pretty()),
    ]
}

/// Codex's configuration directory: `dir` when given, else `$CODEX_HOME`,
/// else `~/.codex`.
pub fn codex_home(dir: Option<&Path>) -> Result<PathBuf> {
    if let Some(dir) = dir {
        return Ok(dir.to_owned());
    }
    if let Some(dir) = std::env::var_os("CODEX_HOME").filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    match std::env::var_os("HOME").filter(|d| !d.is_empty()) {
        Some(home) => Ok(PathBuf::from(home).join(".codex")),
        None => Err(Error::Usage(
            "cannot find Codex's configuration: neither CODEX_HOME nor HOME is set".into(),
        )),
    }
}

/// The trust hash Codex requires for one hook handler: the sha256 of the
/// compact, key-sorted JSON `{"event_name", "hooks": [{"async", "command",
/// "timeout", "type"}]}`.
pub fn trusted_hash(event_snake: &str, command: &str, timeout_s: u64) -> String {
    let text = format!(
        r#"{{"event_name":{},"hooks":[{{"async":false,"command":{},"timeout":{timeout_s},"type":"command"}}]}}"#,
        serde_json::to_string(event_snake).expect("a string serializes"),
        serde_json::to_string(command).expect("a string serializes"),
    );
    let digest = Sha256::digest(text.as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

/// Installs into the Codex configuration directory `home` with `command`
/// as the goalkeeper executable, or finishes goalkeeper's plugin there.
#[cfg(test)]
pub fn install_codex(home: &Path, command: &Executable, now_ms: i64) -> Result<InstallReport> {
    install(home, command, now_ms).map(|installed| installed.report)
}

/// [`install_codex`], saying whether it finished goalkeeper's plugin.
pub(super) fn install(home: &Path, command: &Executable, now_ms: i64) -> Result<Installed> {
    let home = std::path::absolute(home).map_err(|source| Error::Io {
        what: format!("cannot resolve {}", home.display()),
        source,
    })?;
    if !home.exists() {
        std::fs::create_dir_all(&home).map_err(|source| Error::Io {
            what: format!("cannot create {}", home.display()),
            source,
        })?;
    }
    let dir = UserDir::lock(&home)?;
    let config_rel = Path::new("config.toml");
    let config_path = home.join(config_rel);
    let config_file = dir.read(config_rel)?;
    let mut config = parse_config(config_file.as_ref().map(|f| f.bytes()), &config_path)?;
    let plugins = installed_plugins(&config, &home);
    if !plugins.is_empty() {
        let changes = finish_plugins(&mut config, &plugins, &config_path)?;
        let stamp = crate::time::utc_stamp(now_ms);
        let report = write_config(&dir, config_file.as_ref(), &config, changes, &stamp)?;
        return Ok(Installed {
            report: InstallReport {
                files: vec![report],
            },
            notes: Vec::new(),
            packaged: true,
        });
    }
    let hooks_rel = Path::new("hooks.json");
    let hooks_path = home.join(hooks_rel);
    // Read and check both before writing either.
    let (hooks_file, mut hooks) = read_object(&dir, hooks_rel)?;

    // Codex runs hooks through a shell.
    let hook = hook_command(&command.shell_word());
    let mut hook_changes = Vec::new();
    let mut config_changes = Vec::new();
    for (event, snake) in HOOK_EVENTS {
        let (group, handler, change) = add_hook(&mut hooks, event, &hook, &hooks_path)?;
        hook_changes.push(change);
        let key = format!("{}:{snake}:{group}:{handler}", hooks_path.display());
        config_changes.push(trust(
            &mut config,
            &key,
            &trusted_hash(snake, &hook, HOOK_TIMEOUT_S),
            event,
            &config_path,
        )?);
    }
    config_changes.push(add_server(&mut config, &command.0, &config_path)?);
    config_changes.push(disable_goals(&mut config, &config_path)?);

    let stamp = crate::time::utc_stamp(now_ms);
    let hooks_report = write_if_changed(
        &dir,
        hooks_rel,
        hooks_file.as_ref(),
        hooks,
        hook_changes,
        &stamp,
    )?;
    let config_report = write_config(&dir, config_file.as_ref(), &config, config_changes, &stamp)?;
    Ok(InstallReport {
        files: vec![config_report, hooks_report],
    }
    .into())
}

/// Writes `config` to `config.toml` unless it holds those bytes already.
fn write_config(
    dir: &UserDir,
    read: Option<&UserFile>,
    config: &DocumentMut,
    changes: Vec<String>,
    stamp: &str,
) -> Result<FileReport> {
    let rel = Path::new("config.toml");
    let text = config.to_string();
    if read.is_some_and(|f| f.bytes() == text.as_bytes()) {
        return Ok(FileReport {
            path: dir.path().join(rel),
            backup: None,
            changes,
            written: false,
        });
    }
    let done = dir.replace(rel, text.as_bytes(), read, stamp)?;
    Ok(FileReport {
        path: done.path,
        backup: done.backup,
        changes,
        written: done.written,
    })
}

/// goalkeeper's plugin as Codex installed it: its id (`goalkeeper@<marketplace>`)
/// and the folder Codex copied it to.
struct InstalledPlugin {
    id: String,
    dir: PathBuf,
}

/// The goalkeeper plugins `config.toml` lists (`[plugins."goalkeeper@…"]`),
/// with the folder of each in Codex's plugin cache.
fn installed_plugins(config: &DocumentMut, home: &Path) -> Vec<InstalledPlugin> {
    let Some(plugins) = config.get("plugins").and_then(Item::as_table_like) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for (id, _) in plugins.iter() {
        let Some(marketplace) = id.strip_prefix("goalkeeper@") else {
            continue;
        };
        let versions = home
            .join("plugins/cache")
            .join(marketplace)
            .join("goalkeeper");
        let dirs = std::fs::read_dir(&versions)
            .into_iter()
            .flatten()
            .flatten()
            .map(|entry| entry.path())
            .filter(|path| path.join(PLUGIN_HOOKS).is_file());
        for dir in dirs {
            found.push(InstalledPlugin {
                id: id.to_owned(),
                dir,
            });
        }
    }
    found
}

/// Finishes Codex's install of goalkeeper's plugins, which Codex cannot do
/// itself: the trust entries of the plugin's hooks (Codex silently never
/// runs a hook without one) and `features.goals = false`, as for
/// goalkeeper's own install. Only hooks this goalkeeper would write are
/// trusted: a plugin whose hooks differ (another version's) is refused,
/// and nothing is written. The plugin's server approves its own tools.
fn finish_plugins(
    config: &mut DocumentMut,
    plugins: &[InstalledPlugin],
    path: &Path,
) -> Result<Vec<String>> {
    let ours = plugin_files()
        .into_iter()
        .find(|(rel, _)| *rel == PLUGIN_HOOKS)
        .map(|(_, text)| Json::parse(&text).expect("our hooks parse"))
        .expect("the plugin has hooks");
    let hook = hook_command(PLUGIN_EXECUTABLE);
    let mut changes = Vec::new();
    for plugin in plugins {
        let installed = plugin.dir.join(PLUGIN_HOOKS);
        let same = std::fs::read_to_string(&installed)
            .ok()
            .and_then(|text| Json::parse(&text).ok())
            .is_some_and(|theirs| theirs == ours);
        if !same {
            return Err(Error::Rejected(format!(
                "{} are not the hooks of this goalkeeper ({}), so they are not trusted: run the plugin's own {} install codex, or update the plugin (codex plugin marketplace upgrade), then install again (nothing was changed)",
                installed.display(),
                env!("CARGO_PKG_VERSION"),
                plugin.dir.join("bin/goalkeeper").display()
            )));
        }
        changes.push(format!("plugin {} ({})", plugin.id, plugin.dir.display()));
        for (event, snake) in HOOK_EVENTS {
            let key = format!("{}:{PLUGIN_HOOKS}:{snake}:0:0", plugin.id);
            let trusted = trust(
                config,
                &key,
                &trusted_hash(snake, &hook, HOOK_TIMEOUT_S),
                event,
                path,
            )?;
            changes.push(format!("  {trusted}"));
        }
    }
    changes.push(disable_goals(config, path)?);
    if config
        .get("mcp_servers")
        .and_then(Item::as_table_like)
        .is_some_and(|servers| servers.contains_key("goalkeeper"))
    {
        changes.push(
            "note: [mcp_servers.goalkeeper] from an earlier `goalkeeper install codex` is still there; remove it and goalkeeper's entries in hooks.json, or the tools and hooks run twice".into(),
        );
    }
    Ok(changes)
}

fn parse_config(bytes: Option<&[u8]>, path: &Path) -> Result<DocumentMut> {
    let Some(bytes) = bytes else {
        return Ok(DocumentMut::new());
    };
    let text = std::str::from_utf8(bytes).map_err(|_| {
        Error::Rejected(format!(
            "{} is not UTF-8 text; fix or move it, then install again (nothing was changed)",
            path.display()
        ))
    })?;
    text.parse::<DocumentMut>().map_err(|e| {
        let at = e.span().map_or(0, |span| span.start);
        let line = text[..at].matches('\n').count() + 1;
        let column = text[..at].rsplit('\n').next().unwrap_or("").chars().count() + 1;
        Error::Rejected(format!(
            "{} is not valid TOML (line {line}, column {column}: {}); fix or move it, then install again (nothing was changed)",
            path.display(),
            e.message().trim()
        ))
    })
}

/// The table at `key` of `table`, created (implicit, so an empty parent
/// prints no header) when missing; refused when it is something else.
fn table_at<'a>(
    table: &'a mut Table,
    key: &str,
    dotted: &str,
    path: &Path,
) -> Result<&'a mut Table> {
    let item = table.entry(key).or_insert_with(|| {
        let mut t = Table::new();
        t.set_implicit(true);
        Item::Table(t)
    });
    item.as_table_mut().ok_or_else(|| {
        Error::Rejected(format!(
            "`{dotted}` in {} is not a table; fix it, then install again (nothing was changed)",
            path.display()
        ))
    })
}

fn trust(
    config: &mut DocumentMut,
    key: &str,
    hash: &str,
    event: &str,
    path: &Path,
) -> Result<String> {
    let hooks = table_at(config.as_table_mut(), "hooks", "hooks", path)?;
    let state = table_at(hooks, "state", "hooks.state", path)?;
    let entry = table_at(state, key, &format!("hooks.state.\"{key}\""), path)?;
    if entry.get("trusted_hash").and_then(Item::as_str) == Some(hash) {
        return Ok(format!("hooks.state {event}: already trusted"));
    }
    entry.set_implicit(false);
    entry.insert("trusted_hash", value(hash));
    Ok(format!("hooks.state {event}: trusted"))
}

fn add_server(config: &mut DocumentMut, command: &str, path: &Path) -> Result<String> {
    let servers = table_at(config.as_table_mut(), "mcp_servers", "mcp_servers", path)?;
    if servers.contains_key("goalkeeper") {
        return Ok("mcp_servers.goalkeeper: already present".into());
    }
    let mut server = Table::new();
    server.insert("command", value(command));
    let mut args = toml_edit::Array::new();
    for arg in SERVER_ARGS {
        args.push(arg);
    }
    server.insert("args", value(args));
    let mut vars = toml_edit::Array::new();
    for var in ENV_VARS {
        vars.push(var);
    }
    server.insert("env_vars", value(vars));
    server.insert("default_tools_approval_mode", value("approve"));
    servers.insert("goalkeeper", Item::Table(server));
    Ok("mcp_servers.goalkeeper: added (tools approved, goalkeeper's variables passed)".into())
}

fn disable_goals(config: &mut DocumentMut, path: &Path) -> Result<String> {
    let features = table_at(config.as_table_mut(), "features", "features", path)?;
    if let Some(existing) = features.get("goals") {
        return Ok(match existing.as_bool() {
            Some(false) => "features.goals: already false".into(),
            _ => format!(
                "features.goals: left as you set it ({}); Codex's own goal tools stay beside goalkeeper's",
                existing.to_string().trim()
            ),
        });
    }
    features.set_implicit(false);
    features.insert("goals", value(false));
    Ok("features.goals: set to false (Codex's own goal tools; goalkeeper's replace them)".into())
}

/// Adds `{"hooks": [{"type": "command", "command": hook, "timeout"}]}` to
/// `hooks.<event>` unless some entry there already runs `hook`. Returns
/// the group and handler index of goalkeeper's handler.
fn add_hook(
    settings: &mut Object,
    event: &str,
    hook: &str,
    path: &Path,
) -> Result<(usize, usize, String)> {
    let hooks = object_at(settings, "hooks", path)?;
    let groups = hooks.get_or_insert_with(event, || Json::Array(Vec::new()));
    let Some(groups) = groups.as_array_mut() else {
        return Err(Error::Rejected(format!(
            "`hooks.{event}` in {} is not a list; fix it, then install again (nothing was changed)",
            path.display()
        )));
    };
    for (g, group) in groups.iter().enumerate() {
        let handlers = group.get("hooks").and_then(Json::as_array);
        if let Some(h) = handlers.and_then(|hs| {
            hs.iter()
                .position(|h| h.get("command").and_then(Json::as_str) == Some(hook))
        }) {
            return Ok((g, h, format!("hooks.{event}: already present")));
        }
    }
    groups.push(hook_group(hook));
    Ok((groups.len() - 1, 0, format!("hooks.{event}: added")))
}
