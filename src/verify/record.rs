//! The evidence record line (DESIGN.md §13): the first line
//! `goalkeeper verify` prints, so a host's hook can store a run that the
//! agent's shell could not (a sandbox where the database is read-only),
//! from the host's own record of that shell call, which the model does not
//! write.
//!
//! The line is `goalkeeper-evidence 1 ` and one JSON object:
//!
//! ```text
//! goalkeeper-evidence 1 {"run":"<32 hex>","session":"<id>","task":null,"dir":"/abs/dir","fp":"<32 hex>","at":1764441600000,"by":"agent","agent":null,"host":"claude-code","checks":[{"c":"<16 hex>","exit":{"code":0},"ms":1234}]}
//! ```
//!
//! `c` is the first 64 bits of the SHA-256 of a check's command: the line
//! stays short whatever the commands (a host keeps only the start of a
//! long output), and the hook finds each command among the session's
//! checks. A check's own output never starts a line of verify's output (it
//! is indented), so only goalkeeper writes a line that starts with the
//! marker.
//!
//! A hook accepts a record ([`from_shell_call`]) only from a shell call
//! whose command is a plain `goalkeeper verify [--task TASK]`: one
//! program, no other command, no redirection, substitution, variable or
//! operator. A record typed by hand (`echo goalkeeper-evidence …`), or
//! appended to verify's output by another command, is refused. It does
//! not stop an agent set on forging one (it can replace the `goalkeeper`
//! its shell finds, or write the database where its shell may): see the
//! threat model in DESIGN.md §13.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::check::{CheckRun, Evidence, Exit, RunBy, Scope};

/// What every record line starts with.
pub const MARKER: &str = "goalkeeper-evidence 1 ";

/// The record of one run as the line carries it: each check by the digest
/// of its command.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LineRecord {
    /// The run's random id.
    pub run: String,
    /// The session whose checks ran.
    pub session: String,
    /// The task whose check ran; `None`: the goal's.
    pub task: Option<String>,
    /// Where they ran (canonical).
    pub dir: String,
    /// The fingerprint of the files as the run started.
    pub fp: String,
    /// When the run started, in milliseconds since the epoch.
    pub at: i64,
    /// `agent` or `user`.
    pub by: String,
    /// The named agent, if any.
    pub agent: Option<String>,
    /// The host whose shell ran it, if any.
    pub host: Option<String>,
    /// The host's id of the tool call that ran it, when the host's shell
    /// says it (Codex's `CODEX_TOOL_CALL_ID`).
    pub call: Option<String>,
    /// Each check.
    pub checks: Vec<LineCheck>,
}

/// One check of a [`LineRecord`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LineCheck {
    /// [`digest`] of the command.
    pub c: String,
    /// How it ended.
    pub exit: Exit,
    /// How long it ran, in milliseconds.
    pub ms: u64,
}

/// The first 64 bits of the SHA-256 of `command`, in hexadecimal: how a
/// record line names a check.
pub fn digest(command: &str) -> String {
    crate::tree::hex(&Sha256::digest(command.as_bytes())[..8])
}

/// The record line of `evidence` for `session`, run by the host's tool
/// call `call` when the host's shell names it.
pub fn to_line(session: &str, evidence: &Evidence, call: Option<&str>) -> String {
    let record = LineRecord {
        run: evidence.run.clone(),
        session: session.to_owned(),
        task: match &evidence.scope {
            Scope::Goal => None,
            Scope::Task(task) => Some(task.clone()),
        },
        dir: evidence.dir.clone(),
        fp: evidence.fingerprint.clone(),
        at: evidence.started_ms,
        by: evidence.by.actor.clone(),
        agent: evidence.by.agent.clone(),
        host: evidence.by.host.clone(),
        call: call.map(str::to_owned),
        checks: evidence
            .checks
            .iter()
            .map(|c| LineCheck {
                c: digest(&c.command),
                exit: c.exit,
                ms: c.ms,
            })
            .collect(),
    };
    let json = serde_json::to_string(&record).expect("a record serializes");
    // ASCII only: a line that passes through a terminal's sanitizing (and
    // any host's) unchanged. Outside strings JSON is ASCII already.
    let mut line = String::with_capacity(MARKER.len() + json.len());
    line.push_str(MARKER);
    for c in json.chars() {
        if c.is_ascii() {
            line.push(c);
        } else {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                line.push_str(&format!("\\u{unit:04x}"));
            }
        }
    }
    line
}

impl LineRecord {
    /// The evidence this record stands for, its checks named by the
    /// commands of `checks` (the session's checks of its scope) whose
    /// digests it carries; a digest no command has is left out (the check
    /// was removed meanwhile). `None` when none is left.
    pub fn evidence(&self, checks: &[String]) -> Option<Evidence> {
        let runs: Vec<CheckRun> = self
            .checks
            .iter()
            .filter_map(|line| {
                let command = checks.iter().find(|c| digest(c) == line.c)?;
                Some(CheckRun {
                    command: command.clone(),
                    exit: line.exit,
                    ms: line.ms,
                })
            })
            .collect();
        if runs.is_empty() {
            return None;
        }
        Some(Evidence {
            run: self.run.clone(),
            scope: match &self.task {
                None => Scope::Goal,
                Some(task) => Scope::Task(task.clone()),
            },
            dir: self.dir.clone(),
            fingerprint: self.fp.clone(),
            started_ms: self.at,
            by: RunBy {
                actor: self.by.clone(),
                agent: self.agent.clone(),
                host: self.host.clone(),
            },
            checks: runs,
        })
    }
}

/// What a host recorded of one shell call, as its hook sees it.
#[derive(Clone, Copy, Debug)]
pub struct ShellCall<'a> {
    /// The command line the model gave the shell tool.
    pub command: &'a str,
    /// What the call printed (stdout and stderr as they came), from its
    /// start.
    pub output: &'a str,
    /// Its exit status, when the host says it.
    pub exit: Option<i32>,
    /// The host's id of the call, when the host names one.
    pub call: Option<&'a str>,
}

/// The record a host's hook may store from one shell call; `programs` are
/// the names the `goalkeeper` program may be called by there
/// (`goalkeeper`, and the path of the running executable). Refused, with
/// the reason, unless the command is a plain `goalkeeper verify [--task
/// TASK]`, the output's first line is a well-formed record of that task (or
/// of the goal), the exit status (when known) is verify's for what the
/// record says (0 only when every check passed), and the record names the
/// call (when both the host and the record do).
pub fn from_shell_call(shell: ShellCall<'_>, programs: &[&str]) -> Result<LineRecord, String> {
    let ShellCall {
        command,
        output,
        exit,
        call,
    } = shell;
    let words = crate::shell::plain_words(command)?;
    let task = match words.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        [program, "verify"] if programs.contains(&program) => None,
        [program, "verify", "--task", task] if programs.contains(&program) => Some(task),
        [program, "verify", flag] if programs.contains(&program) && flag.starts_with("--task=") => {
            Some(&flag["--task=".len()..])
        }
        _ => {
            return Err(
                "the command is not a plain `goalkeeper verify [--task TASK]`; only such a call's record is taken"
                    .into(),
            );
        }
    };
    let first = output
        .lines()
        .next()
        .ok_or_else(|| "the call printed nothing".to_owned())?;
    let json = first.strip_prefix(MARKER).ok_or_else(|| {
        format!(
            "the first line of its output is not a `{}` record",
            MARKER.trim_end()
        )
    })?;
    let record: LineRecord =
        serde_json::from_str(json).map_err(|e| format!("the record does not read: {e}"))?;
    check_record(&record)?;
    if record.task.as_deref() != task {
        return Err("the record's task is not the one the command names".into());
    }
    let passed = record.checks.iter().all(|c| c.exit.passed());
    if let Some(exit) = exit
        && (exit == 0) != passed
    {
        return Err(format!(
            "the call exited with {exit}, which is not what verify exits with for this record"
        ));
    }
    if let (Some(theirs), Some(ours)) = (call, record.call.as_deref())
        && theirs != ours
    {
        return Err("the record names another tool call".into());
    }
    Ok(record)
}

/// The fields of a record are what verify writes.
fn check_record(record: &LineRecord) -> Result<(), String> {
    let hex = |text: &str, len: usize| {
        text.len() == len && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    };
    if !hex(&record.run, 32) {
        return Err("the record's run id is not 32 hexadecimal digits".into());
    }
    if !hex(&record.fp, 32) {
        return Err("the record's fingerprint is not 32 hexadecimal digits".into());
    }
    if !record.dir.starts_with('/') {
        return Err("the record's directory is not an absolute path".into());
    }
    if record.checks.is_empty() || record.checks.iter().any(|c| !hex(&c.c, 16)) {
        return Err("the record names no check, or a check by something but its digest".into());
    }
    if record.by != "agent" && record.by != "user" {
        return Err("the record says neither an agent nor a person ran it".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests;
