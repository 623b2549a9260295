//! The evidence of one `goalkeeper verify` run: what ran, where, on which
//! files, how each check ended and who ran it. Stored as the run's event
//! (DESIGN.md §13); the rows the gate reads are derived from it.

use serde::{Deserialize, Serialize};

use super::{Exit, Scope};

/// One check of a run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckRun {
    /// The command.
    pub command: String,
    /// How it ended.
    pub exit: Exit,
    /// How long it ran, in milliseconds.
    pub ms: u64,
}

/// Who ran a verify.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunBy {
    /// `agent` or `user`.
    pub actor: String,
    /// The named agent; `None`: the session's own agent, or a person.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// The host whose shell ran it, when one did (`claude-code`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
}

/// One verify run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Evidence {
    /// The run's random id (32 hexadecimal digits): a run recorded twice
    /// lands once.
    pub run: String,
    /// Whose checks ran.
    pub scope: Scope,
    /// The directory they ran in (canonical).
    pub dir: String,
    /// The fingerprint of its files as the run started.
    pub fingerprint: String,
    /// When the run started, in milliseconds since the epoch.
    pub started_ms: i64,
    /// Who ran it.
    pub by: RunBy,
    /// Each check, in the order it ran.
    pub checks: Vec<CheckRun>,
}

impl Evidence {
    /// True when every check passed.
    pub fn passed(&self) -> bool {
        self.checks.iter().all(|c| c.exit.passed())
    }

    /// The event payload that records it: the op `verify`, how it came in
    /// (`via`: `verify` itself, or a host's `hook`), and the run.
    pub fn payload(&self, via: &str) -> serde_json::Value {
        let mut payload = serde_json::json!({
            "op": "verify",
            "run": self.run,
        });
        match &self.scope {
            Scope::Goal => payload["scope"] = "goal".into(),
            Scope::Task(task) => payload["task"] = task.as_str().into(),
        }
        payload["dir"] = self.dir.as_str().into();
        payload["fingerprint"] = self.fingerprint.as_str().into();
        payload["started_ms"] = self.started_ms.into();
        if let Some(agent) = &self.by.agent {
            payload["agent"] = agent.as_str().into();
        }
        if let Some(host) = &self.by.host {
            payload["host"] = host.as_str().into();
        }
        payload["via"] = via.into();
        payload["passed"] = self.passed().into();
        payload["checks"] = serde_json::to_value(&self.checks).expect("checks serialize");
        payload
    }
}
