//! Which host session a command acts on (DESIGN.md §8 `--session-from HOST`),
//! and the goal queued for a host's next session.
//!
//! Every host adapter records the session it runs in, per working
//! directory, with [`record`]; `--session-from HOST` then resolves to the
//! session that host last ran in the current directory ([`last`]), so a
//! user never needs to know a host's session id. With no session seen in a
//! directory yet, `goal set` queues the goal ([`queue_goal`]); the next
//! session [`record`]ed there adopts it as its goal (set by the user).
//!
//! State lives in the store's global pointers: `HOST:DIR` names the last
//! session, `HOST:queued:DIR` holds a queued goal as JSON. `DIR` is the
//! directory's canonical path when it exists (so a symlinked path and its
//! target are one directory), else the path as given.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::actor::Actor;
use crate::error::Result;
use crate::goal::{GoalOp, GoalResult};
use crate::prompt::ToolNames;
use crate::store::{Caller, GoalCall, PointerRead, SessionTx};
use crate::{SessionId, Store};

/// An agent host goalkeeper integrates with: the one list of hosts. The
/// command line takes them by name (`hook HOST`, `install HOST`,
/// `--session-from HOST`), each has its adapter ([`Host::adapter`]), and
/// its names, variables and marks are properties of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Host {
    /// Anthropic's Claude Code CLI.
    ClaudeCode,
    /// Google's Gemini CLI.
    GeminiCli,
    /// OpenAI's Codex CLI.
    Codex,
    /// The pi coding agent.
    Pi,
}

impl Host {
    /// Every host, in the order the CLI lists them.
    pub const ALL: [Host; 4] = [Host::ClaudeCode, Host::GeminiCli, Host::Codex, Host::Pi];

    /// The host's name on the command line: `claude-code`, `gemini-cli`,
    /// `codex`, `pi`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Host::ClaudeCode => "claude-code",
            Host::GeminiCli => "gemini-cli",
            Host::Codex => "codex",
            Host::Pi => "pi",
        }
    }

    /// The host called `name`, if any.
    pub fn parse(name: &str) -> Option<Host> {
        Host::ALL.into_iter().find(|h| h.as_str() == name)
    }

    /// The names the host shows the model for goalkeeper's `todo` and
    /// `goal` tools when `goalkeeper install` wired it
    /// ([`Wiring::Config`]; [`Host::names`] for either wiring).
    pub const fn model_tool_names(self) -> [&'static str; 2] {
        let names = self.names(Wiring::Config);
        [names.todo, names.goal]
    }

    /// What the host calls goalkeeper's parts when it is wired as `wiring`:
    /// Claude Code and Codex name an MCP server's tools
    /// `mcp__<server>__<tool>`, and Claude Code a plugin's server
    /// `plugin_<plugin>_<server>` and its commands `/<plugin>:<command>`;
    /// Gemini CLI names them `mcp_<server>_<tool>`; pi's extension
    /// registers the tools under their own names.
    pub const fn names(self, wiring: Wiring) -> HostNames {
        let plugin = matches!(wiring, Wiring::Plugin);
        match self {
            Host::ClaudeCode if plugin => HostNames {
                todo: "mcp__plugin_goalkeeper_goalkeeper__todo",
                goal: "mcp__plugin_goalkeeper_goalkeeper__goal",
                goal_command: Some("/goalkeeper:goal"),
            },
            Host::ClaudeCode => HostNames {
                todo: "mcp__goalkeeper__todo",
                goal: "mcp__goalkeeper__goal",
                goal_command: Some("/goal"),
            },
            Host::Codex => HostNames {
                todo: "mcp__goalkeeper__todo",
                goal: "mcp__goalkeeper__goal",
                goal_command: None,
            },
            Host::GeminiCli => HostNames {
                todo: "mcp_goalkeeper_todo",
                goal: "mcp_goalkeeper_goal",
                // The extension's command; a project wired by `install`
                // has none.
                goal_command: if plugin { Some("/goal") } else { None },
            },
            Host::Pi => HostNames {
                todo: super::agent_tools::TODO,
                goal: super::agent_tools::GOAL,
                goal_command: None,
            },
        }
    }

    /// The environment variable the host sets for the processes of a
    /// plugin it loaded (its hooks and MCP servers), by which goalkeeper
    /// knows it runs as one ([`Wiring::of_env`]). Gemini CLI and pi set
    /// none, and name goalkeeper's parts alike either way.
    pub const fn plugin_var(self) -> Option<&'static str> {
        match self {
            Host::ClaudeCode => Some("CLAUDE_PLUGIN_ROOT"),
            // Codex sets it for a plugin's hooks (and Claude Code's name
            // for it too), not for its MCP servers.
            Host::Codex => Some("PLUGIN_ROOT"),
            Host::GeminiCli | Host::Pi => None,
        }
    }

    /// The environment variable naming the session the host started an
    /// MCP server for, when it sets one (Claude Code's
    /// `CLAUDE_CODE_SESSION_ID`).
    #[cfg_attr(not(feature = "mcp"), expect(dead_code))]
    pub const fn session_var(self) -> Option<&'static str> {
        match self {
            Host::ClaudeCode => Some("CLAUDE_CODE_SESSION_ID"),
            Host::GeminiCli | Host::Codex | Host::Pi => None,
        }
    }

    /// The names the prompts use for the tools (DESIGN.md §3.4): Claude
    /// Code's and Gemini CLI's own ([`Host::names`]); Codex and pi keep
    /// `todo` and `goal` here until their adapters name theirs.
    pub fn tool_names(self, wiring: Wiring) -> ToolNames {
        match self {
            Host::ClaudeCode | Host::GeminiCli => {
                let names = self.names(wiring);
                ToolNames {
                    todo: names.todo.to_owned(),
                    goal: names.goal.to_owned(),
                }
            }
            Host::Codex | Host::Pi => ToolNames::default(),
        }
    }

    /// The environment variable the host's shell tool sets to the id of
    /// the session it runs for, so that `goalkeeper verify` run there acts
    /// on that session without being told (DESIGN.md §13): Claude Code's
    /// Bash sets `CLAUDE_CODE_SESSION_ID` and Codex's `exec_command`
    /// `CODEX_SESSION_ID`, the ids their hooks name; in pi, goalkeeper's
    /// extension sets `GOALKEEPER_PI_SESSION` in pi's environment as a
    /// session starts, which its `bash` passes on. Gemini CLI sets none;
    /// verify then takes the session the host last ran in the directory.
    pub const fn shell_session_variable(self) -> Option<&'static str> {
        match self {
            Host::ClaudeCode => Some("CLAUDE_CODE_SESSION_ID"),
            Host::Codex => Some("CODEX_SESSION_ID"),
            Host::Pi => Some("GOALKEEPER_PI_SESSION"),
            Host::GeminiCli => None,
        }
    }

    /// The environment variable the host's shell tool sets in every
    /// command it runs (the model's shell, not a person's terminal), so a
    /// run of `goalkeeper verify` there is recorded as the agent's.
    pub const fn shell_marker(self) -> &'static str {
        match self {
            Host::ClaudeCode => "CLAUDECODE",
            Host::Codex => "CODEX_SESSION_ID",
            Host::GeminiCli => "GEMINI_CLI",
            Host::Pi => "PI_CODING_AGENT",
        }
    }

    /// The environment variable the host's shell tool sets to the id of
    /// the tool call running the command (Codex's `CODEX_TOOL_CALL_ID`, the
    /// `tool_use_id` its hook names): verify puts it in its record, and the
    /// hook takes the record only from that call.
    pub const fn shell_call_variable(self) -> Option<&'static str> {
        match self {
            Host::Codex => Some("CODEX_TOOL_CALL_ID"),
            Host::ClaudeCode | Host::GeminiCli | Host::Pi => None,
        }
    }

    /// The host (and its wiring) whose own name for the todo tool is
    /// among `active_tools`, so that `context --active-tools
    /// mcp__goalkeeper__todo,…` renders the prompts as that host's hook
    /// does.
    pub fn naming_tools(active_tools: &[String]) -> Option<(Host, Wiring)> {
        let default = ToolNames::default();
        Host::ALL
            .into_iter()
            .flat_map(|h| [(h, Wiring::Config), (h, Wiring::Plugin)])
            .find(|&(h, wiring)| {
                let names = h.tool_names(wiring);
                names != default && active_tools.contains(&names.todo)
            })
    }
}

/// How goalkeeper is wired into a host.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Wiring {
    /// `goalkeeper install` wrote it into the host's configuration.
    #[default]
    Config,
    /// The host loaded it as its own plugin, extension or package, with
    /// the binary inside (`goalkeeper package`).
    Plugin,
}

impl Wiring {
    /// How `host` runs this process, from the variable the host sets for
    /// a plugin's processes ([`Host::plugin_var`]): `var` reads the
    /// environment.
    pub fn of_env(host: Host, var: impl Fn(&str) -> Option<String>) -> Wiring {
        match host.plugin_var().and_then(var) {
            Some(root) if !root.is_empty() => Wiring::Plugin,
            _ => Wiring::Config,
        }
    }
}

/// What a host calls goalkeeper's parts, where a model or a person reads
/// them ([`Host::names`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostNames {
    /// The `todo` tool as the model calls it.
    pub todo: &'static str,
    /// The `goal` tool as the model calls it.
    pub goal: &'static str,
    /// The command a person steers the goal with inside the host, when
    /// it has one.
    pub goal_command: Option<&'static str>,
}

impl HostNames {
    /// Both tools, `todo` then `goal`.
    pub const fn tools(&self) -> [&'static str; 2] {
        [self.todo, self.goal]
    }

    /// Whether `tool` is one of goalkeeper's tools.
    pub fn is_tool(&self, tool: &str) -> bool {
        tool == self.todo || tool == self.goal
    }
}

impl std::fmt::Display for Host {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The directory as pointer keys name it: canonical when it exists.
pub fn dir_key(dir: &Path) -> String {
    std::fs::canonicalize(dir)
        .unwrap_or_else(|_| dir.to_owned())
        .display()
        .to_string()
}

/// The pointer naming the session `host` last ran in `dir`.
pub fn last_session_key(host: Host, dir: &Path) -> String {
    format!("{}:{}", host.as_str(), dir_key(dir))
}

fn queued_key(host: Host, dir: &Path) -> String {
    format!("{}:queued:{}", host.as_str(), dir_key(dir))
}

fn successor_key(host: Host, session: &SessionId) -> String {
    format!("{}:successor:{}", host.as_str(), session.as_str())
}

/// Records, inside the new session's transaction, that `from` continues
/// as it (Claude Code's `/clear` starts a new session id in the same
/// running client).
pub fn record_successor_in(
    tx: &SessionTx<'_>,
    host: Host,
    from: &SessionId,
    now_ms: i64,
) -> Result<()> {
    if from == tx.session() {
        return Ok(());
    }
    tx.set_pointer(&successor_key(host, from), tx.session().as_str(), now_ms)
}

/// [`follow`], reading the pointers with `pointer` (inside a caller's
/// transaction, see [`SessionRef`](crate::store::SessionRef)).
#[cfg(any(feature = "mcp", test))]
pub fn follow_with(
    pointer: &mut PointerRead<'_>,
    host: Host,
    session: &SessionId,
) -> Result<SessionId> {
    let mut current = session.clone();
    for _ in 0..64 {
        match pointer(&successor_key(host, &current))? {
            Some(next) => match SessionId::parse(&next) {
                Ok(next) if next != current => current = next,
                _ => break,
            },
            None => break,
        }
    }
    Ok(current)
}

/// A goal waiting for the next session of a host in a directory.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct QueuedGoal {
    /// The objective, as `goal set` checked it.
    pub objective: String,
    /// The token budget.
    pub budget: Option<u64>,
    /// Its checks (a queue written before checks existed has none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub checks: Vec<String>,
}

/// The session `host` last ran in `dir`, if it ran there.
pub fn last(store: &mut Store, host: Host, dir: &Path) -> Result<Option<SessionId>> {
    store
        .admin()
        .with_pointers(|pointer| last_with(pointer, host, dir))
}

/// [`last`], reading the pointer with `pointer` (inside a caller's
/// transaction, see [`SessionRef`](crate::store::SessionRef)).
pub fn last_with(
    pointer: &mut PointerRead<'_>,
    host: Host,
    dir: &Path,
) -> Result<Option<SessionId>> {
    match pointer(&last_session_key(host, dir))? {
        Some(id) => Ok(Some(SessionId::parse(&id)?)),
        None => Ok(None),
    }
}

/// What [`record`] did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Recorded {
    /// The session `host` ran in `dir` before this one, when it was another.
    pub previous: Option<SessionId>,
    /// The result of adopting a queued goal, when one was waiting.
    pub adopted: Option<GoalResult>,
}

/// Records that `host` runs `session` in `dir`, in one transaction; see
/// [`record_in`].
#[cfg(test)]
pub fn record(
    store: &mut Store,
    host: Host,
    dir: &Path,
    session: &SessionId,
    now_ms: i64,
) -> Result<Recorded> {
    store.write(session, |tx| {
        record_in(tx, &mut Caller::default(), host, dir, now_ms)
    })
}

/// Records, inside a host event's transaction, that `host` runs the
/// transaction's session in `dir`. When this is a new session there and a
/// goal is queued for the directory, the session adopts it (unless it
/// already has a live goal, which wins; the queued one is then discarded),
/// as the user's call made by `caller`.
pub fn record_in(
    tx: &SessionTx<'_>,
    caller: &mut Caller,
    host: Host,
    dir: &Path,
    now_ms: i64,
) -> Result<Recorded> {
    let key = last_session_key(host, dir);
    let session = tx.session().clone();
    let previous = tx.pointer(&key)?;
    tx.set_pointer(&key, session.as_str(), now_ms)?;
    let mut recorded = Recorded {
        previous: previous
            .filter(|p| p != session.as_str())
            .and_then(|p| SessionId::parse(&p).ok()),
        adopted: None,
    };
    let Some(queued) = tx.take_pointer(&queued_key(host, dir))? else {
        return Ok(recorded);
    };
    let Ok(queued) = serde_json::from_str::<QueuedGoal>(&queued) else {
        return Ok(recorded);
    };
    if !tx.goal()?.is_some_and(|g| g.status.is_live()) {
        let op = GoalOp::Set {
            objective: queued.objective,
            budget: queued.budget,
            checks: queued.checks,
        };
        recorded.adopted = Some(tx.goal_call(GoalCall::Op(&op), Actor::User, caller, now_ms)?);
    }
    Ok(recorded)
}

/// Queues `goal` for the next session `host` starts in `dir`, replacing a
/// goal queued there before.
pub fn queue_goal(
    store: &mut Store,
    host: Host,
    dir: &Path,
    goal: &QueuedGoal,
    now_ms: i64,
) -> Result<()> {
    let text = serde_json::to_string(goal).expect("a queued goal serializes");
    store
        .admin()
        .set_pointer(&queued_key(host, dir), &text, now_ms)
}

/// The goal queued for `host`'s next session in `dir`, if any.
pub fn queued_goal(store: &mut Store, host: Host, dir: &Path) -> Result<Option<QueuedGoal>> {
    Ok(store
        .admin()
        .pointer(&queued_key(host, dir))?
        .and_then(|text| serde_json::from_str(&text).ok()))
}

/// Removes the goal queued for `host`'s next session in `dir`; returns it.
pub fn unqueue_goal(store: &mut Store, host: Host, dir: &Path) -> Result<Option<QueuedGoal>> {
    Ok(store
        .admin()
        .take_pointer(&queued_key(host, dir))?
        .and_then(|text| serde_json::from_str(&text).ok()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_session_follows_each_record() {
        let mut store = Store::open_in_memory().unwrap();
        // Never read: a directory of the test's own, where nothing is.
        let tmp = tempfile::tempdir().unwrap();
        let dir = &tmp.path().join("project");
        assert_eq!(last(&mut store, Host::ClaudeCode, dir).unwrap(), None);
        let a = SessionId::parse("a").unwrap();
        let b = SessionId::parse("b").unwrap();
        assert_eq!(
            record(&mut store, Host::ClaudeCode, dir, &a, 1).unwrap(),
            Recorded::default()
        );
        let second = record(&mut store, Host::ClaudeCode, dir, &b, 2).unwrap();
        assert_eq!(second.previous, Some(a.clone()));
        assert_eq!(last(&mut store, Host::ClaudeCode, dir).unwrap(), Some(b));
        // Another host in the same directory is another pointer.
        assert_eq!(last(&mut store, Host::Codex, dir).unwrap(), None);
    }

    #[test]
    fn a_queued_goal_is_adopted_once_by_the_next_session() {
        let mut store = Store::open_in_memory().unwrap();
        // Never read: a directory of the test's own, where nothing is.
        let tmp = tempfile::tempdir().unwrap();
        let dir = &tmp.path().join("project");
        let goal = QueuedGoal {
            objective: "Ship it".into(),
            budget: Some(5000),
            checks: Vec::new(),
        };
        queue_goal(&mut store, Host::ClaudeCode, dir, &goal, 1).unwrap();
        assert_eq!(
            queued_goal(&mut store, Host::ClaudeCode, dir).unwrap(),
            Some(goal)
        );
        let a = SessionId::parse("a").unwrap();
        let recorded = record(&mut store, Host::ClaudeCode, dir, &a, 2).unwrap();
        assert!(recorded.adopted.is_some_and(|r| !r.is_error));
        let adopted = store.read(&a, |tx| tx.goal()).unwrap().unwrap();
        assert_eq!(
            (adopted.objective.as_str(), adopted.token_budget),
            ("Ship it", Some(5000))
        );
        assert_eq!(
            queued_goal(&mut store, Host::ClaudeCode, dir).unwrap(),
            None
        );
        let b = SessionId::parse("b").unwrap();
        assert!(
            record(&mut store, Host::ClaudeCode, dir, &b, 3)
                .unwrap()
                .adopted
                .is_none()
        );
        assert_eq!(store.read(&b, |tx| tx.goal()).unwrap(), None);
    }

    #[test]
    fn host_names_round_trip() {
        for host in Host::ALL {
            assert_eq!(Host::parse(host.as_str()), Some(host));
        }
        assert_eq!(Host::parse("claude"), None);
    }
}
