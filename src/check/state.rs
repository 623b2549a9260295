//! Where a check stands: from its runs in a directory and the fingerprint
//! of the files there now.

use serde::{Deserialize, Serialize};

use crate::goal::format_duration;
use crate::sanitize::one_line;

/// How a run of a check ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Exit {
    /// It exited with this status (0 passes).
    Code(i32),
    /// A signal ended it.
    Signal(i32),
    /// It ran longer than `verify.timeout` seconds; its process group was
    /// killed.
    TimedOut(u64),
}

impl Exit {
    /// True for exit status 0.
    pub fn passed(&self) -> bool {
        *self == Exit::Code(0)
    }

    /// `exit 101`, `killed by signal 9`, `timed out after 600 s`.
    pub fn describe(&self) -> String {
        match self {
            Exit::Code(code) => format!("exit {code}"),
            Exit::Signal(signal) => format!("killed by signal {signal}"),
            Exit::TimedOut(secs) => format!("timed out after {secs} s"),
        }
    }
}

/// A run of a check as the gate reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunSummary {
    /// The fingerprint of the files as the run started.
    pub fingerprint: String,
    /// How it ended.
    pub exit: Exit,
    /// When it started, in milliseconds since the epoch.
    pub at_ms: i64,
}

/// What a check belongs to.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    /// The session's goal.
    Goal,
    /// The task with this text.
    Task(String),
}

/// Where a check stands on the files as they are now.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "state")]
pub enum CheckState {
    /// It never ran in this directory.
    NotRun,
    /// It never ran in this directory (`here`), but did in another
    /// (`ran_in`, its latest run's): evidence counts only for the
    /// directory it was taken in.
    RanElsewhere {
        /// The directory its latest run was in.
        ran_in: String,
        /// The directory the files are judged in, where it must run.
        here: String,
    },
    /// Its latest run on the files as they are now passed.
    Passed {
        /// When that run started.
        at_ms: i64,
    },
    /// It passed, but on files that have changed since.
    Stale {
        /// When that run started.
        at_ms: i64,
    },
    /// Its latest run failed: on the files as they are now, or
    /// (`changed_since`) on files that have changed since.
    Failed {
        /// When that run started.
        at_ms: i64,
        /// How it ended.
        exit: Exit,
        /// The files changed after it.
        changed_since: bool,
    },
}

impl CheckState {
    /// True when the gate lets it through.
    pub fn is_passing(&self) -> bool {
        matches!(self, CheckState::Passed { .. })
    }

    /// `pass`, `fail`, `stale` or `not run`: the word the status line and
    /// `watch` show.
    pub fn word(&self) -> &'static str {
        match self {
            CheckState::NotRun | CheckState::RanElsewhere { .. } => "not run",
            CheckState::Passed { .. } => "pass",
            CheckState::Stale { .. } => "stale",
            CheckState::Failed { .. } => "fail",
        }
    }

    /// `passed 3m ago`, `failed 4m ago (exit 101)`, `passed 1h ago, but
    /// the files changed since`, `not run yet`.
    pub fn describe(&self, now_ms: i64) -> String {
        let ago = |at_ms: i64| format!("{} ago", format_duration((now_ms - at_ms).max(0) / 1000));
        match self {
            CheckState::NotRun => "not run yet".into(),
            CheckState::RanElsewhere { ran_in, here } => format!(
                "not run in {} (verify ran it in {}, which proves nothing for another directory: run it in {})",
                one_line(here),
                one_line(ran_in),
                one_line(here)
            ),
            CheckState::Passed { at_ms } => format!("passed {}", ago(*at_ms)),
            CheckState::Stale { at_ms } => {
                format!("passed {}, but the files changed since", ago(*at_ms))
            }
            CheckState::Failed {
                at_ms,
                exit,
                changed_since,
            } => format!(
                "failed {} ({}){}",
                ago(*at_ms),
                exit.describe(),
                if *changed_since {
                    ", and the files changed since"
                } else {
                    ""
                }
            ),
        }
    }
}

/// Where a check stands, from its latest run on the files as they are now
/// (`at_current`) and its latest run at all (`latest`), both in the
/// directory the files are in: the latest on these files decides; without
/// one, the latest says what it was before the files changed.
pub fn state(at_current: Option<&RunSummary>, latest: Option<&RunSummary>) -> CheckState {
    match (at_current, latest) {
        (Some(run), _) if run.exit.passed() => CheckState::Passed { at_ms: run.at_ms },
        (Some(run), _) => CheckState::Failed {
            at_ms: run.at_ms,
            exit: run.exit,
            changed_since: false,
        },
        (None, Some(run)) if run.exit.passed() => CheckState::Stale { at_ms: run.at_ms },
        (None, Some(run)) => CheckState::Failed {
            at_ms: run.at_ms,
            exit: run.exit,
            changed_since: true,
        },
        (None, None) => CheckState::NotRun,
    }
}

/// One check, what it belongs to, and where it stands.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Checked {
    /// The goal's, or a task's.
    pub scope: Scope,
    /// The shell command.
    pub command: String,
    /// Where it stands on the files as they are now.
    pub state: CheckState,
}

impl Checked {
    /// `` `cargo test` failed 4m ago (exit 101)``, with the task for a
    /// task's check: `` task "Lexer": `cargo test lexer` not run yet``. One
    /// line, fit for a terminal (a prompt sanitizes it further).
    pub fn describe(&self, now_ms: i64) -> String {
        let check = format!(
            "`{}` {}",
            one_line(&self.command),
            self.state.describe(now_ms)
        );
        match &self.scope {
            Scope::Goal => check,
            Scope::Task(task) => format!("task \"{}\": {check}", one_line(task)),
        }
    }
}
