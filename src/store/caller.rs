//! Who calls the store, passed into each call that depends on it (DESIGN.md
//! §7): the agent its agent calls act as and that agent's lease, the host's
//! tool call it answers, where its checks are judged, and, for a
//! long-lived process, the list its last todo call left. A [`Store`] is a
//! connection and keeps none of this: two callers on one connection (a
//! CLI command and the hook it runs, an MCP server's calls for several
//! agents) never act as one another.
//!
//! [`Store`]: super::Store

use std::path::PathBuf;

use super::kept_list::ListCache;
use super::tool_use::{CallFrom, Who};
use crate::AgentName;
use crate::tree::Look;

/// The caller of the store's todo and goal calls and of the checks'
/// judgement. [`Caller::default`] is the session's own agent, judging
/// checks on the process's current directory, keeping no list.
#[derive(Default)]
pub struct Caller {
    /// The agent, its lease and the tool call it answers.
    pub(super) who: Who,
    /// Where checks are judged.
    dir: Option<PathBuf>,
    /// The session mark naming the directory to judge checks in instead,
    /// when the session has it ([`Caller::judge_in_marked`]).
    dir_mark: Option<String>,
    /// Where the files' hashes are kept between processes.
    cache_dir: Option<PathBuf>,
    /// Whether its todo calls keep their list ([`Caller::keep_lists`]).
    pub(super) keeps_lists: bool,
    /// The list its last todo call left, for its next one when nothing
    /// has written since.
    pub(super) kept: Option<ListCache>,
}

impl Caller {
    /// A caller whose agent todo and goal calls are those of `agent`
    /// (`None`: the session's own agent, as by default), whose claims last
    /// `lease_secs` after its last call (DESIGN.md §2.5). A person's calls
    /// are a person's whatever this says.
    pub fn act_as(&mut self, agent: Option<AgentName>, lease_secs: u64) {
        self.who.agent = agent;
        self.who.lease_ms = i64::try_from(lease_secs.saturating_mul(1000)).unwrap_or(i64::MAX);
    }

    /// The agent this caller's agent calls act as.
    pub fn agent(&self) -> Option<&AgentName> {
        self.who.agent.as_ref()
    }

    /// Makes this caller's next agent call (todo or goal) act as the agent
    /// `from` names: the one a hook recorded for the host's tool-use id, if
    /// one did (the call takes the record in its own transaction), or the
    /// one the call named. Without a record (or with `None`) the call acts
    /// as [`Caller::act_as`] says. Only the next call: every call takes it,
    /// used or not.
    pub fn act_for_call(&mut self, from: Option<CallFrom>) {
        self.who.call = from;
    }

    /// Keeps the list of this caller's last todo call in memory, for its
    /// next call to use instead of reading it back when nothing has
    /// written to the database since. For a long-lived process such as the
    /// MCP server; a one-call process gains nothing from it.
    pub fn keep_lists(&mut self) {
        self.keeps_lists = true;
    }

    /// Makes this caller's checks judged (DESIGN.md §13) on the files
    /// under `dir` (by default, the process's current directory), reading
    /// the hashes kept under `cache_dir` when given. A run of a check is
    /// evidence only for the directory it ran in: the gate of an agent's
    /// `complete` or `done` asks for a passing run here, on the files as
    /// they are now.
    pub fn judge_in(&mut self, dir: Option<PathBuf>, cache_dir: Option<PathBuf>) {
        self.dir = dir;
        self.cache_dir = cache_dir;
    }

    /// Makes this caller's checks judged on the files of the directory the
    /// session's mark `mark` names, read in each call's own transaction
    /// (an MCP server its host started elsewhere judges in the directory
    /// the host's session runs in); where the session has no such mark,
    /// as [`Caller::judge_in`] said.
    pub fn judge_in_marked(&mut self, mark: String) {
        self.dir_mark = Some(mark);
    }

    /// The caller of one host event in `dir`: this one's agent and lease
    /// and where it keeps the hashes, judging checks in `dir` (this one's
    /// directory when `None`). Keeps no list and answers no tool call.
    #[cfg_attr(not(feature = "cli"), expect(dead_code))]
    pub(crate) fn in_dir(&self, dir: Option<PathBuf>) -> Caller {
        Caller {
            who: Who {
                call: None,
                ..self.who.clone()
            },
            dir: dir.or_else(|| self.dir.clone()),
            dir_mark: None,
            cache_dir: self.cache_dir.clone(),
            keeps_lists: false,
            kept: None,
        }
    }

    /// A look at the files this caller judges checks in (nothing is read
    /// yet); `marked` reads a session mark, for [`Caller::judge_in_marked`].
    pub fn look(&self, marked: impl FnOnce(&str) -> Option<String>) -> Look {
        let dir = self
            .dir_mark
            .as_deref()
            .and_then(marked)
            .map(PathBuf::from)
            .or_else(|| self.dir.clone());
        Look::at(dir, self.cache_dir.clone())
    }

    /// Who the call about to run acts as before its transaction reads the
    /// tool-use record; the record is the next call's no more.
    pub(super) fn who_for_call(&mut self) -> Who {
        let call = self.who.call.take();
        Who {
            call,
            ..self.who.clone()
        }
    }
}
