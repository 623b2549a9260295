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
//! a file that changes is first kept as `<file>.bak-<timestamp>` (or
//! `…-2`, … when taken); a second run changes nothing. A file that is not a
//! JSON object is refused and nothing is written. `.claude` or either file
//! being a symlink is refused too (see [`crate::user_files`]).

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::json;

use crate::error::{Error, Result};
use crate::user_files::json::{Json, Object};
use crate::user_files::{UserDir, UserFile};

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
///
/// The files are written through [`UserDir`] (SPEC §12): under a lock on
/// the project directory, read, merged and written, so two installs at once
/// both land; a `.claude` or a file that is a symlink is refused; the
/// replaced file keeps its mode and its values exactly, and the old one is
/// kept under a backup name that is never reused.
pub fn install_claude_code(project: &Path, command: &str, now_ms: i64) -> Result<InstallReport> {
    if !project.is_dir() {
        return Err(Error::Usage(format!(
            "{} is not a directory; give the project directory with --project",
            project.display()
        )));
    }
    let dir = UserDir::lock(project)?;
    let settings_rel = Path::new(".claude/settings.json");
    let mcp_rel = Path::new(".mcp.json");
    // Read and check both before writing either.
    let (settings_file, mut settings) = read_object(&dir, settings_rel)?;
    let (mcp_file, mut mcp) = read_object(&dir, mcp_rel)?;
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
                "statusLine",
                Json::from(json!({"type": "command", "command": status})),
            );
            "statusLine: added".to_owned()
        }
        Some(existing) if existing.get("command").and_then(Json::as_str) == Some(&status) => {
            "statusLine: already set".to_owned()
        }
        Some(existing) => format!(
            "statusLine: left alone, another one is set ({}); to use goalkeeper's, set its command to `{status}`",
            existing.get("command").and_then(Json::as_str).unwrap_or("not a command")
        ),
    });
    settings_changes.push(add_to_list(
        &mut settings,
        "enabledMcpjsonServers",
        "goalkeeper",
    )?);

    let servers = object_at(&mut mcp, "mcpServers", &dir.path().join(mcp_rel))?;
    let mcp_change = if servers.contains_key("goalkeeper") {
        "mcpServers.goalkeeper: already present".to_owned()
    } else {
        servers.insert(
            "goalkeeper",
            Json::from(
                json!({"command": command, "args": ["mcp", "--session-from", "claude-code"]}),
            ),
        );
        "mcpServers.goalkeeper: added".to_owned()
    };

    let stamp = crate::time::utc_stamp(now_ms);
    let files = vec![
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
    Ok(InstallReport { files })
}

/// The file as read (for [`UserDir::replace`]) and its JSON object, or an
/// empty one when the file does not exist.
pub(crate) fn read_object(dir: &UserDir, rel: &Path) -> Result<(Option<UserFile>, Object)> {
    let path = dir.path().join(rel);
    let Some(file) = dir.read(rel)? else {
        return Ok((None, Object::new()));
    };
    let Ok(text) = std::str::from_utf8(file.bytes()) else {
        return Err(Error::Rejected(format!(
            "{} is not UTF-8 text; fix or move it, then install again (nothing was changed)",
            path.display()
        )));
    };
    if text.trim().is_empty() {
        return Ok((Some(file), Object::new()));
    }
    match Json::parse(text) {
        Ok(Json::Object(map)) => Ok((Some(file), map)),
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
pub(crate) fn object_at<'a>(map: &'a mut Object, key: &str, path: &Path) -> Result<&'a mut Object> {
    let value = map.get_or_insert_with(key, || Json::Object(Object::new()));
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
        Json::from(json!([{"type": "command", "command": hook}])),
    );
    groups.push(Json::Object(group));
    Ok(format!("hooks.{event}: added"))
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

/// Writes `map` to `rel` unless the file already holds the same values
/// (its own layout is then left alone too).
pub(crate) fn write_if_changed(
    dir: &UserDir,
    rel: &Path,
    read: Option<&UserFile>,
    map: Object,
    changes: Vec<String>,
    stamp: &str,
) -> Result<FileReport> {
    let path = dir.path().join(rel);
    let new = Json::Object(map);
    let same = read.is_some_and(|file| {
        std::str::from_utf8(file.bytes())
            .ok()
            .and_then(|text| Json::parse(text).ok())
            .is_some_and(|old| old == new)
    });
    if same {
        return Ok(FileReport {
            path,
            backup: None,
            changes,
            written: false,
        });
    }
    let done = dir.replace(rel, new.to_pretty().as_bytes(), read, stamp)?;
    Ok(FileReport {
        path: done.path,
        backup: done.backup,
        changes,
        written: done.written,
    })
}
