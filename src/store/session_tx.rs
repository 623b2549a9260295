//! One host event, command or tool call on one session, in one immediate
//! transaction: [`Store::begin`] starts it, the steps of the event run on
//! the [`SessionTx`], and [`SessionTx::commit`] ends it. Dropping it
//! instead rolls every step back, so a failing or killed hook leaves
//! nothing half-applied, and two hooks of one session at once run one
//! after the other (the second sees what the first wrote: a transcript is
//! counted once).
//!
//! The steps that react to a host event live here, around the pure parts:
//! the memory file's one-time delivery, the goal-mode context, and the
//! continuation (decided by [`goal::continuation::decide`], rendered by
//! [`Injector`]).

use serde_json::json;

use super::events::{self, EventKind, NewEvent};
use super::sessions::SessionInfo;
use super::sql::{Tx, params};
use super::{Store, goals, sessions, todos};
use crate::SessionId;
use crate::actor::Actor;
use crate::error::Result;
use crate::goal::continuation::{self, Quiet, Send};
use crate::goal::{Goal, GoalOp, GoalResult, GoalStatus, MAX_TOKENS, Usage};
use crate::prompt::{Gate, HiddenMessage, Injector};
use crate::resources::file::{Loaded, load};
use crate::store::GoalCall;
use crate::todo::{Listed, TodoList};

/// The session mark recording when the memory file was delivered.
const MEMORY_MARK: &str = "memory.delivered";

/// What a continuation produced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Continuation {
    /// A message to inject: the continuation, or the budget-limit wrap-up.
    Message(HiddenMessage),
    /// The runaway guard paused the goal; the text says why.
    Paused(String),
    /// Nothing to send, and why.
    Closed(Gate),
}

/// The memory file's message when it is delivered now, and a note when it
/// cannot be (no file, or an unusable one).
pub type Memory = (Option<HiddenMessage>, Option<String>);

/// The longest pointer key (a host prefix and a working directory) and
/// value kept: a path longer than Linux's 4,096-byte PATH_MAX, with room
/// for the prefix, is not a directory anyone works in.
pub const MAX_POINTER_KEY_BYTES: usize = 4_200;

/// How many directory pointers are kept (the most recently set).
pub const MAX_POINTERS: i64 = 1_000;

/// A pointer not set for 90 days is dropped.
pub const POINTER_TTL_MS: i64 = 90 * 24 * 60 * 60 * 1000;

/// How old a pointer set to the same value again must be before it is
/// written again (see [`SessionTx::set_pointer`]).
pub const POINTER_REFRESH_MS: i64 = 60 * 60 * 1000;

/// One session's steps inside one immediate transaction. See the module
/// doc.
pub struct SessionTx<'s> {
    tx: Tx<'s>,
    session: SessionId,
}

impl Store {
    /// Starts one immediate transaction for the steps of one event on
    /// `session`. It waits (up to the busy timeout) while another process
    /// holds the database's write lock (SQLite) or the session's lock
    /// (PostgreSQL).
    pub fn begin(&mut self, session: &SessionId) -> Result<SessionTx<'_>> {
        let tx = self.immediate()?;
        tx.lock_session(session)?;
        Ok(SessionTx {
            tx,
            session: session.clone(),
        })
    }

    /// Starts a read-only transaction for steps that only read (the
    /// goal-mode context without a memory file to deliver, the status
    /// line): one snapshot of the last commit, no write lock, no waiting
    /// behind a writer. A step that writes must not run on it.
    pub fn begin_read(&self, session: &SessionId) -> Result<SessionTx<'_>> {
        Ok(SessionTx {
            tx: self.read_tx()?,
            session: session.clone(),
        })
    }

    /// The memory file's message for `session`: delivered the first time
    /// it is asked for and never again, even across processes. One
    /// transaction; see [`SessionTx::memory`].
    pub fn memory(
        &mut self,
        session: &SessionId,
        injector: &Injector,
        now_ms: i64,
    ) -> Result<Memory> {
        self.one(session, |tx| tx.memory(injector, now_ms))
    }

    /// The goal-mode context for `session`, from its stored state.
    pub fn goal_mode_context(
        &mut self,
        session: &SessionId,
        injector: &Injector,
        active_tools: &[String],
        now_ms: i64,
    ) -> Result<std::result::Result<HiddenMessage, Gate>> {
        self.one(session, |tx| {
            tx.goal_mode_context(injector, active_tools, now_ms)
        })
    }

    /// The next continuation for `session`, decided and recorded in one
    /// transaction; see [`SessionTx::continuation`].
    pub fn continuation(
        &mut self,
        session: &SessionId,
        injector: &Injector,
        active_tools: &[String],
        now_ms: i64,
    ) -> Result<Continuation> {
        self.one(session, |tx| {
            tx.continuation(injector, active_tools, now_ms)
        })
    }

    fn one<T>(
        &mut self,
        session: &SessionId,
        step: impl FnOnce(&SessionTx<'_>) -> Result<T>,
    ) -> Result<T> {
        let tx = self.begin(session)?;
        let value = step(&tx)?;
        tx.commit()?;
        Ok(value)
    }
}

impl<'s> SessionTx<'s> {
    /// The steps of `session` on `tx`.
    pub(super) fn new(tx: Tx<'s>, session: SessionId) -> SessionTx<'s> {
        SessionTx { tx, session }
    }
}

impl SessionTx<'_> {
    /// The session the steps act on.
    pub fn session(&self) -> &SessionId {
        &self.session
    }

    /// Commits every step. Without it, dropping the handle rolls them back.
    pub fn commit(self) -> Result<()> {
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

    /// The version of the list (0 for a new session), without reading it.
    pub fn todo_version(&self) -> Result<i64> {
        sessions::todo_version(&self.tx, &self.session)
    }

    /// The session's current goal (its latest, whatever the status).
    pub fn goal(&self) -> Result<Option<Goal>> {
        goals::load_goal(&self.tx, &self.session)
    }

    /// Runs one goal call as `actor`, as [`Store::goal`] does.
    pub fn goal_call(&self, call: GoalCall<'_>, actor: Actor, now_ms: i64) -> Result<GoalResult> {
        goals::goal_in_tx(&self.tx, &self.session, call, actor, now_ms)
    }

    /// Takes the pending todo-error text (set by a rejected agent call),
    /// clearing it so the reminder is delivered once.
    pub fn take_todo_error(&self) -> Result<Option<String>> {
        todos::take_todo_error(&self.tx, &self.session)
    }

    /// A remembered per-session fact (integration state), if set.
    pub fn mark(&self, key: &str) -> Result<Option<String>> {
        sessions::mark(&self.tx, &self.session, key)
    }

    /// Remembers a per-session fact (integration state).
    pub fn set_mark(&self, key: &str, value: &str, now_ms: i64) -> Result<()> {
        sessions::set_mark(&self.tx, &self.session, key, value, now_ms)
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
    pub fn count_usage(
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
            return Ok(Some(self.goal_call(
                GoalCall::Op(&op),
                Actor::Agent,
                now_ms,
            )?));
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
            goals::save_goal(&self.tx, &self.session, &goal)?;
            events::append(
                &self.tx,
                &NewEvent {
                    session: &self.session,
                    at_ms: now_ms,
                    actor: Actor::Agent.as_str(),
                    kind: EventKind::Goal,
                    op: Some("usage"),
                    payload: &json!({"op": "usage", "usage": usage, "goal": goal.id, "late": true})
                        .to_string(),
                    error: None,
                    version: None,
                },
            )?;
        }
        Ok(None)
    }

    /// Records which goal is live as a host turn begins (mark
    /// `turn_mark`), for [`SessionTx::count_usage`].
    pub fn begin_turn(&self, turn_mark: &str, now_ms: i64) -> Result<()> {
        let live = self
            .goal()?
            .filter(|g| g.status.is_live())
            .map_or_else(|| "-".to_owned(), |g| g.id.to_string());
        self.set_mark(turn_mark, &live, now_ms)
    }

    /// Carries `from`'s list and live goal over to this session, when this
    /// one has neither (a host moved the conversation to a new session id,
    /// as Claude Code's `/clear` does). The goal gets a new id and keeps
    /// its objective, status, budget, tokens, time and budget notice; the
    /// list is imported as the user's, every status kept. Returns the goal
    /// carried, if any.
    pub fn carry_from(&self, from: &SessionId, now_ms: i64) -> Result<Option<Goal>> {
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
                &format!("session {from} (cleared)"),
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
        goals::save_goal(&self.tx, &self.session, &carried)?;
        events::append(
            &self.tx,
            &NewEvent {
                session: &self.session,
                at_ms: now_ms,
                actor: Actor::User.as_str(),
                kind: EventKind::Goal,
                op: Some("carry"),
                payload: &json!({"op": "carry", "from_session": from.as_str(), "from_goal": goal.id, "goal": carried.id})
                    .to_string(),
                error: None,
                version: None,
            },
        )?;
        Ok(Some(carried))
    }

    /// True when [`SessionTx::memory`] would deliver the memory file now
    /// (one is configured and this session has not had it): only then does
    /// a read of the context need the write lock.
    pub fn memory_due(&self, injector: &Injector) -> Result<bool> {
        Ok(injector.settings().memory.file.is_some() && self.mark(MEMORY_MARK)?.is_none())
    }

    /// The memory file's message: delivered the first time it is asked for
    /// in the session and never again (the check and the mark are in this
    /// transaction, so of two processes one delivers). `(None, note)` when
    /// no memory file is configured, it was already delivered, or the file
    /// cannot be used (the note says why; it is not marked, so a fixed
    /// file is delivered later).
    pub fn memory(&self, injector: &Injector, now_ms: i64) -> Result<Memory> {
        let Some(path) = injector.settings().memory.file.as_deref() else {
            return Ok((None, None));
        };
        // Once delivered, every later call ends here, without reading the file.
        if self.mark(MEMORY_MARK)?.is_some() {
            return Ok((None, None));
        }
        let text = match load(path) {
            Loaded::Text(text) => text,
            Loaded::Absent => {
                let note = format!(
                    "memory file {} does not exist; nothing injected",
                    path.display()
                );
                return Ok((None, Some(note)));
            }
            Loaded::Unusable(why) => {
                return Ok((None, Some(format!("memory file {}: {why}", path.display()))));
            }
        };
        let message = injector.memory(path, &text, now_ms)?;
        self.set_mark(MEMORY_MARK, &now_ms.to_string(), now_ms)?;
        Ok((Some(message), None))
    }

    /// The goal-mode context, or the gate that keeps it out.
    pub fn goal_mode_context(
        &self,
        injector: &Injector,
        active_tools: &[String],
        now_ms: i64,
    ) -> Result<std::result::Result<HiddenMessage, Gate>> {
        // Of a long list, only what the bounded block shows (as `context`).
        let list = self.todo_listed(injector.max_tasks())?;
        let goal = self.goal()?;
        injector.goal_mode_context(goal.as_ref(), &list, active_tools, now_ms)
    }

    /// The next continuation: decided by [`continuation::decide`] from the
    /// stored goal, list version and runaway-guard state, its changes
    /// written here (the wrap-up marked delivered, the guard's count, a
    /// paused goal with its event, actor [`Actor::Goalkeeper`]), and its
    /// message rendered by `injector`.
    pub fn continuation(
        &self,
        injector: &Injector,
        active_tools: &[String],
        now_ms: i64,
    ) -> Result<Continuation> {
        let (list, version) = self.todo_list()?;
        let goal = self.goal()?;
        let (idle, last_mark) = sessions::idle_state(&self.tx, &self.session)?;
        let settings = &injector.settings().goal;
        let decision = continuation::decide(&continuation::State {
            goal: goal.as_ref(),
            todo_version: version,
            idle,
            last_mark: last_mark.as_deref(),
            enabled: settings.enabled,
            max_idle: settings.continuation.max_idle,
            now_ms,
            all_blocked: list.every_open_task_blocked(),
        });
        if let Some(changed) = &decision.goal {
            goals::save_goal(&self.tx, &self.session, changed)?;
        }
        if let Some((idle, mark)) = &decision.idle {
            sessions::set_idle_state(&self.tx, &self.session, *idle, mark.as_deref())?;
        }
        let rendered = match decision.send {
            Send::Nothing(Quiet::NoGoal) => Continuation::Closed(Gate::NoGoal),
            Send::Nothing(Quiet::Disabled) => Continuation::Closed(Gate::GoalDisabled),
            Send::Nothing(Quiet::NotActive) => Continuation::Closed(Gate::GoalNotActive),
            Send::Nothing(Quiet::AllBlocked) => Continuation::Closed(Gate::AllBlocked),
            Send::BudgetLimit => {
                let goal = decision.goal.as_ref().expect("the wrap-up names its goal");
                Continuation::Message(injector.budget_limit(goal, now_ms)?)
            }
            Send::Paused { idle } => {
                let goal = decision.goal.as_ref().expect("the guard names its goal");
                events::append(
                    &self.tx,
                    &NewEvent {
                        session: &self.session,
                        at_ms: now_ms,
                        actor: Actor::Goalkeeper.as_str(),
                        kind: EventKind::Goal,
                        op: Some("pause"),
                        payload: &json!({"op": "pause", "reason": "runaway guard", "idle_continuations": idle, "goal": goal.id}).to_string(),
                        error: None,
                        version: None,
                    },
                )?;
                Continuation::Paused(injector.guard_paused(goal.id, idle))
            }
            Send::Continuation => {
                match injector.continuation(goal.as_ref(), &list, active_tools, now_ms)? {
                    Ok(message) => Continuation::Message(message),
                    Err(gate) => Continuation::Closed(gate),
                }
            }
        };
        Ok(rendered)
    }
}
