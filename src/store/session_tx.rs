//! One host event, command or tool call on one session, in one
//! transaction, through one of two doors: [`Store::write`] runs the steps
//! of the event on a [`SessionTx`] of an immediate transaction and commits
//! them when they all succeed; an error rolls every step back, so a
//! failing or killed hook leaves nothing half-applied, and two hooks of one
//! session at once run one after the other (the second sees what the first
//! wrote: a transcript is counted once). [`Store::read`] runs steps that
//! only read on one snapshot, without the write lock.
//!
//! The handle only reads and writes the session's rows (list, goal,
//! marks, the runaway guard's counters, events) and the global pointers;
//! what to do with them at each point of a turn is decided above the
//! store, in `turn` (DESIGN.md §7).

use serde_json::json;

use super::events::{self, EventKind, NewEvent};
use super::sessions::SessionInfo;
use super::sql::{Tx, params};
use super::{Caller, SessionRef, Store, goals, sessions, todos, versions};
use crate::SessionId;
use crate::actor::Actor;
use crate::error::Result;
use crate::goal::{Goal, GoalOp, GoalResult, GoalStatus, MAX_TOKENS, Usage};
use crate::store::GoalCall;
use crate::todo::{Listed, TodoList};
use crate::tree::Look;

/// The longest pointer key (a host prefix and a working directory) and
/// value kept: a path longer than Linux's 4,096-byte PATH_MAX, with room
/// for the prefix, is not a directory anyone works in.
pub(crate) const MAX_POINTER_KEY_BYTES: usize = 4_200;

/// How many directory pointers are kept (the most recently set).
pub(crate) const MAX_POINTERS: i64 = 1_000;

/// A pointer not set for 90 days is dropped.
pub(crate) const POINTER_TTL_MS: i64 = 90 * 24 * 60 * 60 * 1000;

/// How old a pointer set to the same value again must be before it is
/// written again (see [`SessionTx::set_pointer`]).
pub(crate) const POINTER_REFRESH_MS: i64 = 60 * 60 * 1000;

/// One session's steps inside one immediate transaction. See the module
/// doc.
pub struct SessionTx<'s> {
    pub(super) tx: Tx<'s>,
    pub(super) session: SessionId,
    /// The files checks are judged on, read at most once: the first
    /// caller's that needs them ([`SessionTx::look`]).
    pub(super) look: std::sync::OnceLock<Look>,
}

impl Store {
    /// The read door: runs `steps` on one read-only transaction of
    /// `target`'s session (a [`SessionId`], or a [`SessionRef`] read in
    /// the same snapshot): one snapshot of the last commit, no write lock,
    /// no waiting behind a writer. A step that writes must not run in it.
    pub fn read<T>(
        &self,
        target: &(impl SessionRef + ?Sized),
        steps: impl FnOnce(&SessionTx<'_>) -> Result<T>,
    ) -> Result<T> {
        let tx = self.open_read(target)?;
        let value = steps(&tx)?;
        tx.commit()?;
        Ok(value)
    }

    /// The write door: runs `steps` on one immediate transaction of
    /// `target`'s session and commits them when they succeed; an error
    /// rolls every step back. It waits (up to the busy timeout) while
    /// another process holds the database's write lock (SQLite) or the
    /// session's lock (PostgreSQL), taken before the first read, so what
    /// the steps read is what they overwrite.
    pub fn write<T>(
        &mut self,
        target: &(impl SessionRef + ?Sized),
        steps: impl FnOnce(&SessionTx<'_>) -> Result<T>,
    ) -> Result<T> {
        let tx = self.open_write(target)?;
        let value = steps(&tx)?;
        tx.commit()?;
        Ok(value)
    }

    /// The transaction behind [`Store::write`], for a call that commits
    /// itself.
    pub(super) fn open_write(
        &mut self,
        target: &(impl SessionRef + ?Sized),
    ) -> Result<SessionTx<'_>> {
        let tx = self.begin_write()?;
        let session = super::session_ref::resolve(&tx, target)?;
        tx.lock_session(&session)?;
        Ok(SessionTx {
            tx,
            session,
            look: std::sync::OnceLock::new(),
        })
    }

    /// The transaction behind [`Store::read`], for a call that ends it
    /// itself.
    pub(super) fn open_read(&self, target: &(impl SessionRef + ?Sized)) -> Result<SessionTx<'_>> {
        let tx = self.begin_read()?;
        let session = super::session_ref::resolve(&tx, target)?;
        Ok(SessionTx {
            tx,
            session,
            look: std::sync::OnceLock::new(),
        })
    }
}

#[cfg_attr(not(feature = "cli"), expect(dead_code))]
impl SessionTx<'_> {
    /// The files `caller` judges checks on, looked at once in this
    /// transaction: every step of one event judges the same files.
    pub(super) fn look(&self, caller: &Caller) -> &Look {
        // A mark that cannot be read names no directory: the caller's own.
        self.look
            .get_or_init(|| caller.look(|key| self.mark(key).ok().flatten()))
    }

    /// The session the steps act on.
    pub fn session(&self) -> &SessionId {
        &self.session
    }

    /// Commits every step (the doors do). Without it, dropping the handle
    /// rolls them back.
    pub(super) fn commit(self) -> Result<()> {
        self.tx.commit()?;
        Ok(())
    }

    /// The session's row (created, updated, counts), if it was ever
    /// written.
    pub fn info(&self) -> Result<Option<SessionInfo>> {
        sessions::session_info(&self.tx, &self.session)
    }

    /// The current list and its version (empty, 0 for a new session).
    pub fn todo_list(&self) -> Result<(TodoList, i64)> {
        let row = sessions::load_todos(&self.tx, &self.session)?;
        Ok((row.list, row.version))
    }

    /// The list as a `<todo_context>` block bounded to `max_tasks` shows
    /// it: only that part when the list is longer (read from the list's
    /// kept shape and the rows of the tasks it lists), else the whole list.
    pub fn todo_listed(&self, max_tasks: usize) -> Result<Listed> {
        super::shape::listed(&self.tx, &self.session, max_tasks)
    }

    /// Frees every task `agent` holds (DESIGN.md §2.5), as goalkeeper: an
    /// agent that has ended (a host's subagent that stopped) can finish
    /// none of them. Logged like every change; an agent that holds nothing
    /// writes nothing. Returns whether anything was freed.
    pub(crate) fn release_agent(&self, agent: &crate::AgentName, now_ms: i64) -> Result<bool> {
        let op = crate::todo::Op::Release(crate::todo::Release::Agent(agent.as_str().to_owned()));
        let (result, _) = super::todos::call_in_tx(
            &self.tx,
            &self.session,
            None,
            None,
            crate::todo::Call::Op(&op),
            Actor::Goalkeeper,
            &super::tool_use::Who::default(),
            now_ms,
            // A release completes nothing: no gate, no file read.
            &Look::at(None, None),
        )?;
        Ok(!result.is_error)
    }

    /// The version of the list (0 for a new session), without reading it.
    pub(crate) fn todo_version(&self) -> Result<i64> {
        sessions::todo_version(&self.tx, &self.session)
    }

    /// The session's current goal (its latest, whatever the status).
    pub fn goal(&self) -> Result<Option<Goal>> {
        goals::load_goal(&self.tx, &self.session)
    }

    /// Runs one goal op by `caller` as `actor`. A refusal changes nothing
    /// (a refused agent call is logged, with the named agent that made it)
    /// and comes back as an error result. A goal call is nobody's in
    /// particular, but it takes the record of the host's tool call it
    /// answers all the same ([`Caller::act_for_call`]).
    pub fn goal_call(
        &self,
        call: GoalCall<'_>,
        actor: Actor,
        caller: &mut Caller,
        now_ms: i64,
    ) -> Result<GoalResult> {
        let who = super::tool_use::settle(&self.tx, &self.session, caller.who_for_call())?;
        let agent = who.agent.as_ref().filter(|_| actor == Actor::Agent);
        let look = self.look(caller);
        goals::goal_in_tx(&self.tx, &self.session, call, actor, agent, now_ms, look)
    }

    /// Every check of the session that still gates something (the live
    /// goal's, each open task's) and where each stands on the files
    /// `caller` judges in ([`Caller::judge_in`]); the files are read only
    /// when there is a check, and only once in the transaction.
    pub fn checks(&self, caller: &Caller) -> Result<super::SessionChecks> {
        super::checks::session_checks(&self.tx, &self.session, self.look(caller))
    }

    /// The checks' part of the progress mark: what their latest runs were
    /// (empty without checks). Reads no file.
    pub(crate) fn checks_mark(&self) -> Result<String> {
        super::checks::progress_part(&self.tx, &self.session)
    }

    /// Takes the pending todo-error text (set by a rejected agent call),
    /// clearing it so the reminder is delivered once.
    pub(crate) fn take_todo_error(&self) -> Result<Option<String>> {
        versions::take_todo_error(&self.tx, &self.session)
    }

    /// Takes the named `agent`'s pending todo-error text (set by its
    /// rejected call), clearing it so the reminder is delivered once.
    pub(crate) fn take_agent_todo_error(&self, agent: &crate::AgentName) -> Result<Option<String>> {
        versions::take_agent_todo_error(&self.tx, &self.session, agent.as_str())
    }

    /// A remembered per-session fact (integration state), if set.
    pub fn mark(&self, key: &str) -> Result<Option<String>> {
        sessions::mark(&self.tx, &self.session, key)
    }

    /// The remembered per-session facts whose keys start with `prefix`
    /// (integration state), by key.
    pub(crate) fn marks_with_prefix(&self, prefix: &str) -> Result<Vec<(String, String)>> {
        sessions::marks_with_prefix(&self.tx, &self.session, prefix)
    }

    /// Remembers a per-session fact (integration state).
    pub fn set_mark(&self, key: &str, value: &str, now_ms: i64) -> Result<()> {
        sessions::set_mark(&self.tx, &self.session, key, value, now_ms)
    }

    /// Forgets a per-session fact; nothing when it was not remembered.
    pub(crate) fn remove_mark(&self, key: &str) -> Result<()> {
        sessions::remove_mark(&self.tx, &self.session, key)
    }

    /// Records that the host's tool call `tool_use_id` is `agent`'s: the
    /// MCP call with that id acts as it ([`Caller::act_for_call`]).
    /// Drops the records of calls that never came. False, recording
    /// nothing, for an empty id or one too long to be a host's.
    pub fn record_tool_use(
        &self,
        tool_use_id: &str,
        agent: &crate::AgentName,
        now_ms: i64,
    ) -> Result<bool> {
        super::tool_use::record(&self.tx, &self.session, tool_use_id, agent, now_ms)
    }

    /// A global pointer (integration state), such as the host session last
    /// seen in a project directory.
    pub fn pointer(&self, key: &str) -> Result<Option<String>> {
        super::marks::pointer_in(&self.tx, key)
    }

    /// Sets a global pointer (integration state).
    ///
    /// Pointers are bounded, as a host may send a `cwd` of any size: a key
    /// over [`MAX_POINTER_KEY_BYTES`] is refused, and setting one drops the
    /// pointers not set for [`POINTER_TTL_MS`] and all but the
    /// [`MAX_POINTERS`] most recent.
    ///
    /// Setting a pointer to the value it has writes nothing unless it was
    /// last set [`POINTER_REFRESH_MS`] ago or more: a host records its
    /// session on every event, and most events find it recorded already.
    /// So a pointer's age is known to within that time.
    pub fn set_pointer(&self, key: &str, value: &str, now_ms: i64) -> Result<()> {
        if key.len() > MAX_POINTER_KEY_BYTES || value.len() > MAX_POINTER_KEY_BYTES {
            return Err(crate::Error::Rejected(format!(
                "the working directory is longer than {MAX_POINTER_KEY_BYTES} bytes; the session was not recorded for it"
            )));
        }
        let written = self.tx.execute(
            "INSERT INTO pointers (key, value, updated_ms) VALUES (?1, ?2, ?3)
             ON CONFLICT(key) DO UPDATE SET value = excluded.value, updated_ms = excluded.updated_ms
             WHERE pointers.value <> excluded.value OR pointers.updated_ms <= ?4",
            params![
                key,
                value,
                now_ms,
                now_ms.saturating_sub(POINTER_REFRESH_MS)
            ],
        )?;
        if written == 0 {
            // Nothing new: the bounds held before and still hold.
            return Ok(());
        }
        self.tx.execute(
            "DELETE FROM pointers WHERE updated_ms < ?1 OR key NOT IN
               (SELECT key FROM pointers ORDER BY updated_ms DESC, key LIMIT ?2)",
            params![now_ms.saturating_sub(POINTER_TTL_MS), MAX_POINTERS],
        )?;
        Ok(())
    }

    /// Removes a global pointer and returns the value it had.
    pub fn take_pointer(&self, key: &str) -> Result<Option<String>> {
        // One statement, so two takers on PostgreSQL cannot both get it.
        self.tx.query_opt(
            "DELETE FROM pointers WHERE key = ?1 RETURNING value",
            params![key],
            |r| r.get(0),
        )
    }

    /// Counts token usage a host reported for this session (read from its
    /// transcripts): it goes to the goal while the goal is live, and to the
    /// goal that was live when the turn began (mark `turn_mark`, see
    /// [`SessionTx::begin_turn`]) when that turn completed or paused it, so
    /// the turn that finishes a goal still counts. Returns the usage
    /// result when the usage went through the goal's own accounting.
    pub(crate) fn count_usage(
        &self,
        usage: Usage,
        turn_mark: &str,
        now_ms: i64,
    ) -> Result<Option<GoalResult>> {
        if usage == Usage::default() {
            return Ok(None);
        }
        let Some(current) = self.goal()? else {
            return Ok(None);
        };
        if current.status.is_live() {
            let op = GoalOp::Usage(usage);
            // Usage is the session's, whoever reported it; it reads no file.
            let result = goals::goal_in_tx(
                &self.tx,
                &self.session,
                GoalCall::Op(&op),
                Actor::Agent,
                None,
                now_ms,
                &Look::at(None, None),
            )?;
            return Ok(Some(result));
        }
        let turn_goal = self.mark(turn_mark)?;
        if matches!(current.status, GoalStatus::Complete | GoalStatus::Paused)
            && turn_goal.as_deref() == Some(current.id.to_string().as_str())
        {
            let mut goal = current;
            goal.tokens_used = goal
                .tokens_used
                .saturating_add(usage.counted())
                .min(MAX_TOKENS);
            self.save_goal(&goal)?;
            self.log_goal_event(
                Actor::Agent,
                "usage",
                &json!({"op": "usage", "usage": usage, "goal": goal.id, "late": true}),
                now_ms,
            )?;
        }
        Ok(None)
    }

    /// Records which goal is live as a host turn begins (mark
    /// `turn_mark`), for [`SessionTx::count_usage`].
    pub(crate) fn begin_turn(&self, turn_mark: &str, now_ms: i64) -> Result<()> {
        let live = self
            .goal()?
            .filter(|g| g.status.is_live())
            .map_or_else(|| "-".to_owned(), |g| g.id.to_string());
        self.set_mark(turn_mark, &live, now_ms)
    }

    /// Carries `from`'s list and live goal over to this session, when this
    /// one has neither (a host moved the conversation to a new session id,
    /// as Claude Code's `/clear` and forks do; `how` says which, for the
    /// import's provenance). The goal gets a new id and keeps its
    /// objective, status, budget, tokens, time and budget notice; the list
    /// is imported as the user's, every status kept. `from` keeps its own.
    /// Returns the goal carried, if any.
    pub(crate) fn carry_from(
        &self,
        from: &SessionId,
        how: &str,
        now_ms: i64,
    ) -> Result<Option<Goal>> {
        let (list, _) = self.todo_list()?;
        if list.counts().total > 0 || self.goal()?.is_some() || *from == self.session {
            return Ok(None);
        }
        let theirs = sessions::load_todos(&self.tx, from)?.list;
        if theirs.counts().total > 0 {
            todos::import_in_tx(
                &self.tx,
                &self.session,
                theirs,
                &format!("session {from} ({how})"),
                super::tool_use::Who::default().lease_ms,
                now_ms,
            )?;
        }
        let Some(goal) = goals::load_goal(&self.tx, from)?.filter(|g| g.status.is_live()) else {
            return Ok(None);
        };
        let mut carried = goal.clone();
        carried.id = goals::next_goal_id(&self.tx)?;
        carried.updated_at_ms = now_ms;
        sessions::touch(&self.tx, &self.session, now_ms)?;
        self.save_goal(&carried)?;
        self.log_goal_event(
            Actor::User,
            "carry",
            &json!({"op": "carry", "from_session": from.as_str(), "from_goal": goal.id, "goal": carried.id}),
            now_ms,
        )?;
        Ok(Some(carried))
    }

    /// Stores `goal` as the session's goal (a new row for a new id, else
    /// that row updated). It writes no event: the caller logs the change
    /// ([`SessionTx::log_goal_event`]).
    pub(crate) fn save_goal(&self, goal: &Goal) -> Result<()> {
        goals::save_goal(&self.tx, &self.session, goal)
    }

    /// Appends a successful goal change by `actor` to the session's event
    /// log: op `op`, the change as `payload` records it.
    pub(crate) fn log_goal_event(
        &self,
        actor: Actor,
        op: &str,
        payload: &serde_json::Value,
        now_ms: i64,
    ) -> Result<()> {
        events::append(
            &self.tx,
            &NewEvent {
                session: &self.session,
                at_ms: now_ms,
                actor: actor.as_str(),
                kind: EventKind::Goal,
                op: Some(op),
                payload: &payload.to_string(),
                error: None,
                version: None,
                agent: None,
            },
        )
    }

    /// The runaway guard's counters: how many continuations in a row saw
    /// the same progress mark, and that mark (0 and none for a new
    /// session).
    pub(crate) fn idle_state(&self) -> Result<(u64, Option<String>)> {
        sessions::idle_state(&self.tx, &self.session)
    }

    /// Stores the runaway guard's counters (see [`SessionTx::idle_state`]).
    pub(crate) fn set_idle_state(&self, idle: u64, mark: Option<&str>) -> Result<()> {
        sessions::set_idle_state(&self.tx, &self.session, idle, mark)
    }
}
