//! What every host's installer shares (DESIGN.md §12): the executable the
//! configuration runs, the report of what changed, and the steps of
//! editing a user's JSON file: open the project (checked, locked), read a
//! file as an object (refusing one that is not), find or make an object
//! in it, and write it back only when its values changed, with a backup.
//! Each host's installer is its adapter's (`claude_code/install.rs`,
//! `gemini_cli/install.rs`, `codex/install.rs`, `pi/install.rs`).

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::host_session::Host;
use crate::error::{Error, Result};
use crate::user_files::json::{Json, Object};
use crate::user_files::{UserDir, UserFile};

/// The project directory `project`, checked and locked for an install.
pub(crate) fn open_project(project: &Path) -> Result<UserDir> {
    if !project.is_dir() {
        return Err(Error::ProjectNotADirectory(project.to_owned()));
    }
    UserDir::lock(project)
}

/// The goalkeeper executable the configuration runs: `goalkeeper`, found
/// on `PATH`, or a path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Executable(pub String);

impl Executable {
    /// The executable as one shell word (hooks and the status line run
    /// through `sh -c`): quoted when it holds anything but
    /// `[A-Za-z0-9_./+-]`.
    pub fn shell_word(&self) -> String {
        shell_quote(&self.0)
    }
}

/// `text` as one POSIX shell word.
pub fn shell_quote(text: &str) -> String {
    let plain = !text.is_empty()
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'/' | b'-' | b'+'));
    if plain {
        text.to_owned()
    } else {
        format!("'{}'", text.replace('\'', "'\\''"))
    }
}

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

/// What `install` says about letting the agent run `goalkeeper verify` on
/// the hosts whose own installs say nothing else (DESIGN.md §13): how a
/// person allows it, which goalkeeper never does by itself. The command
/// is named as the agent's shell runs it ([`crate::check::verify_command`]).
pub fn verify_note(host: Host) -> String {
    let verify = crate::check::verify_command(&crate::check::Scope::Goal);
    match host {
        Host::ClaudeCode => String::new(),
        Host::Codex => {
            // The rule matches the command's words, unquoted.
            let program = crate::shell::plain_words(crate::check::program())
                .ok()
                .and_then(|words| words.into_iter().next())
                .unwrap_or_else(|| "goalkeeper".to_owned());
            let pattern = format!("[{}, \"verify\"]", serde_json::Value::from(program));
            format!(
                "checks: Codex runs the agent's `{verify}` (your checks) in its sandbox, where it cannot write
  goalkeeper's database; to let it record its runs, add the database's directory to
  [sandbox_workspace_write] writable_roots in config.toml, or let verify leave the sandbox with
  prefix_rule(pattern = {pattern}, decision = \"allow\") in rules/default.rules
  under CODEX_HOME (its checks then run outside the sandbox too)"
            )
        }
        Host::GeminiCli => {
            let prefix = serde_json::Value::from(verify.as_str());
            format!(
                "checks: Gemini CLI runs the agent's shell commands headless only under a policy; to let it run
  `{verify}` (your checks), write ~/.gemini/policies/goalkeeper.toml:
  [[rule]] toolName = \"run_shell_command\"  commandPrefix = {prefix}  decision = \"allow\"  priority = 100"
            )
        }
        Host::Pi => format!(
            "checks: pi runs every shell command the agent asks for, `{verify}` (your checks) included"
        ),
    }
}
