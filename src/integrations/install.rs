//! `install claude-code`: wires the hooks, the status line and the MCP
//! server into a project's Claude Code configuration.
//!
//! - `.claude/settings.json` gets the three hooks (`SessionStart` for
//!   `compact|resume`, `UserPromptSubmit`, `Stop`), the `statusLine`, and
//!   `goalkeeper` in `enabledMcpjsonServers`.
//! - `.mcp.json` (where Claude Code reads project MCP servers) gets the
//!   `goalkeeper` server, started so its session follows the hooks'.
//!
//! Every existing key is kept; an entry already present is left alone (a
//! `statusLine` of another tool is not replaced, and the report says so);
//! a file that changes is first copied to `<file>.bak-<timestamp>`; a
//! second run changes nothing. A file that is not a JSON object is refused
//! and nothing is written.

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::error::{Error, Result};

/// What an install did, file by file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct InstallReport {
    /// One entry per file looked at.
    pub files: Vec<FileReport>,
}

/// What happened to one file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FileReport {
    /// The file.
    pub path: PathBuf,
    /// Where the previous version was copied, when it existed and changed.
    pub backup: Option<PathBuf>,
    /// What was added or left alone, one line each.
    pub changes: Vec<String>,
    /// True when the file was written.
    pub written: bool,
}

impl InstallReport {
    /// Human-readable lines.
    pub fn lines(&self) -> Vec<String> {
        let mut lines = Vec::new();
        for file in &self.files {
            let verdict = if file.written { "updated" } else { "unchanged" };
            lines.push(format!("{} ({verdict})", file.path.display()));
            for change in &file.changes {
                lines.push(format!("  {change}"));
            }
            if let Some(backup) = &file.backup {
                lines.push(format!("  previous version saved as {}", backup.display()));
            }
        }
        lines
    }
}

/// Installs into `project` with `command` as the goalkeeper executable.
pub fn install_claude_code(project: &Path, command: &str, now_ms: i64) -> Result<InstallReport> {
    if !project.is_dir() {
        return Err(Error::Usage(format!(
            "{} is not a directory; give the project directory with --project",
            project.display()
        )));
    }
    let settings_path = project.join(".claude").join("settings.json");
    let mcp_path = project.join(".mcp.json");
    // Read and check both before writing either.
    let mut settings = read_object(&settings_path)?;
    let mut mcp = read_object(&mcp_path)?;
    let hook = format!("{command} hook claude-code");
    let mut settings_changes = Vec::new();
    for (event, matcher) in [
        ("SessionStart", Some("compact|resume")),
        ("UserPromptSubmit", None),
        ("Stop", None),
    ] {
        settings_changes.push(add_hook(&mut settings, event, matcher, &hook)?);
    }
    let status = format!("{command} statusline");
    settings_changes.push(match settings.get("statusLine") {
        None => {
            settings.insert(
                "statusLine".into(),
                json!({"type": "command", "command": status}),
            );
            "statusLine: added".to_owned()
        }
        Some(existing) if existing.get("command").and_then(Value::as_str) == Some(&status) => {
            "statusLine: already set".to_owned()
        }
        Some(existing) => format!(
            "statusLine: left alone, another one is set ({}); to use goalkeeper's, set its command to `{status}`",
            existing.get("command").and_then(Value::as_str).unwrap_or("not a command")
        ),
    });
    settings_changes.push(add_to_list(
        &mut settings,
        "enabledMcpjsonServers",
        "goalkeeper",
    )?);

    let servers = object_at(&mut mcp, "mcpServers", &mcp_path)?;
    let mcp_change = if servers.contains_key("goalkeeper") {
        "mcpServers.goalkeeper: already present".to_owned()
    } else {
        servers.insert(
            "goalkeeper".into(),
            json!({"command": command, "args": ["mcp", "--session-from", "claude-code"]}),
        );
        "mcpServers.goalkeeper: added".to_owned()
    };

    let files = vec![
        write_if_changed(&settings_path, settings, settings_changes, now_ms)?,
        write_if_changed(&mcp_path, mcp, vec![mcp_change], now_ms)?,
    ];
    Ok(InstallReport { files })
}

/// The file's JSON object, or an empty one when the file does not exist.
fn read_object(path: &Path) -> Result<Map<String, Value>> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Map::new()),
        Err(source) => {
            return Err(Error::Io {
                what: format!("cannot read {}", path.display()),
                source,
            });
        }
    };
    if text.trim().is_empty() {
        return Ok(Map::new());
    }
    match serde_json::from_str::<Value>(&text) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(Error::Rejected(format!(
            "{} is not a JSON object; fix or move it, then install again (nothing was changed)",
            path.display()
        ))),
        Err(e) => Err(Error::Rejected(format!(
            "{} is not valid JSON ({e}); fix or move it, then install again (nothing was changed)",
            path.display()
        ))),
    }
}

/// The object under `key`, created when missing; refused when it is
/// something else.
fn object_at<'a>(
    map: &'a mut Map<String, Value>,
    key: &str,
    path: &Path,
) -> Result<&'a mut Map<String, Value>> {
    let value = map
        .entry(key.to_owned())
        .or_insert_with(|| Value::Object(Map::new()));
    value.as_object_mut().ok_or_else(|| {
        Error::Rejected(format!(
            "`{key}` in {} is not an object; fix it, then install again (nothing was changed)",
            path.display()
        ))
    })
}

/// Adds `{"matcher"?, "hooks": [{"type": "command", "command": hook}]}` to
/// `hooks.<event>` unless some entry there already runs `hook`.
fn add_hook(
    settings: &mut Map<String, Value>,
    event: &str,
    matcher: Option<&str>,
    hook: &str,
) -> Result<String> {
    let hooks = object_at(settings, "hooks", Path::new(".claude/settings.json"))?;
    let groups = hooks
        .entry(event.to_owned())
        .or_insert_with(|| Value::Array(Vec::new()));
    let Some(groups) = groups.as_array_mut() else {
        return Err(Error::Rejected(format!(
            "`hooks.{event}` in .claude/settings.json is not a list; fix it, then install again (nothing was changed)"
        )));
    };
    let present = groups.iter().any(|group| {
        group
            .get("hooks")
            .and_then(Value::as_array)
            .is_some_and(|hs| {
                hs.iter()
                    .any(|h| h.get("command").and_then(Value::as_str) == Some(hook))
            })
    });
    if present {
        return Ok(format!("hooks.{event}: already present"));
    }
    let mut group = Map::new();
    if let Some(matcher) = matcher {
        group.insert("matcher".into(), matcher.into());
    }
    group.insert(
        "hooks".into(),
        json!([{"type": "command", "command": hook}]),
    );
    groups.push(Value::Object(group));
    Ok(format!("hooks.{event}: added"))
}

fn add_to_list(settings: &mut Map<String, Value>, key: &str, item: &str) -> Result<String> {
    let list = settings
        .entry(key.to_owned())
        .or_insert_with(|| Value::Array(Vec::new()));
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

/// Writes `map` to `path` when it differs from what is there, after copying
/// the old file to a timestamped backup. Atomic: a temporary file renamed
/// into place.
fn write_if_changed(
    path: &Path,
    map: Map<String, Value>,
    changes: Vec<String>,
    now_ms: i64,
) -> Result<FileReport> {
    let text = serde_json::to_string_pretty(&Value::Object(map)).expect("JSON serializes") + "\n";
    let old = std::fs::read_to_string(path).ok();
    let io = |what: String| move |source| Error::Io { what, source };
    if old
        .as_deref()
        .and_then(|o| serde_json::from_str::<Value>(o).ok())
        == serde_json::from_str::<Value>(&text).ok()
        && old.is_some()
    {
        return Ok(FileReport {
            path: path.to_owned(),
            backup: None,
            changes,
            written: false,
        });
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(io(format!("cannot create {}", dir.display())))?;
    }
    let backup = match old {
        Some(_) => {
            let mut backup = path.as_os_str().to_owned();
            backup.push(format!(".bak-{}", crate::time::utc_stamp(now_ms)));
            let backup = PathBuf::from(backup);
            std::fs::copy(path, &backup)
                .map_err(io(format!("cannot back up {}", path.display())))?;
            Some(backup)
        }
        None => None,
    };
    let mut temp = path.as_os_str().to_owned();
    temp.push(".goalkeeper-tmp");
    let temp = PathBuf::from(temp);
    std::fs::write(&temp, text).map_err(io(format!("cannot write {}", temp.display())))?;
    std::fs::rename(&temp, path).map_err(io(format!("cannot replace {}", path.display())))?;
    Ok(FileReport {
        path: path.to_owned(),
        backup,
        changes,
        written: true,
    })
}
