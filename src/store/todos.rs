//! Todo commands against the store: one call, import, undo, the log.
//!
//! A mutation is one write transaction: read the list's rows, apply the
//! call (pure), write only the rows that changed, bump the version, append
//! the event (the call), and keep the inverse patch that `todo undo`
//! replays (see [`super::patch`]). What it writes follows the change, not
//! the list. `view` and the other reads take no write lock.

use serde_json::json;

use super::claims::{agent_leases, database_clock, grant, record_seen};
use super::events::{self, EventKind};
use super::kept_list::{ListCache, current, stamp};
use super::patch::{self, KeyedList, Rebuild};
use super::rows::{self, UNDO_DEPTH, UNDO_TO_UNKNOWN};
use super::sessions;
use super::shape::{self, Shape};
use super::sql::Tx;
use super::tool_use::Who;
use super::versions::{
    Logged, Version, read_todo_error, set_agent_todo_error, set_todo_error, store_version,
};
use super::{Caller, SessionRef, Store};
use crate::check::Scope;
use crate::error::{Error, Result};
use crate::todo::{
    self, Actor, Call, Op, Outcome, SummaryKind, Team, TodoDetails, TodoList, TodoResult, ViewPage,
};
use crate::tool_result::ToolResult;
use crate::tree::Look;
use crate::{AgentName, SessionId};

/// A todo call's result without the list (see [`Store::todo_answer`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TodoAnswer {
    /// The result's text, as [`TodoResult::text`].
    pub text: String,
    /// True when the call was rejected.
    pub is_error: bool,
    /// The op that ran or was attempted; `None` when unreadable.
    pub op: Option<String>,
    /// The list's version after the call.
    pub version: i64,
    /// How many tasks the call moved into `completed`.
    pub completed_tasks: usize,
}

impl TodoAnswer {
    /// The answer of a whole result.
    fn of(result: &TodoResult) -> TodoAnswer {
        TodoAnswer {
            text: result.text().to_owned(),
            is_error: result.is_error,
            op: result.details.op.clone(),
            version: result.details.version,
            completed_tasks: result.details.completed_tasks.len(),
        }
    }
}

impl Store {
    /// Runs one todo call for `session` by `caller` as `actor`.
    ///
    /// A successful mutation bumps the list's version, appends an event
    /// holding the call and keeps the patch that undoes it; a call that
    /// changes nothing (DESIGN.md §2.2) writes none of these. A rejected call
    /// changes nothing, except that a rejected *agent* call is logged and
    /// left pending as a todo-error reminder. `view` writes nothing and
    /// takes no write lock.
    /// `session` is a [`SessionId`], or a [`SessionRef`] read in the
    /// call's own transaction.
    pub fn todo(
        &mut self,
        session: &(impl SessionRef + ?Sized),
        call: Call<'_>,
        actor: Actor,
        caller: &mut Caller,
        now_ms: i64,
    ) -> Result<TodoResult> {
        // The kept list is current only on the connection it came from.
        let keep = caller.keeps_lists.then_some(self.id);
        let cache = caller.kept.take();
        let who = caller.who_for_call();
        // A named agent's view is a call that keeps its claims (DESIGN.md
        // §2.5): it takes the write path, which records it.
        let cache = if is_view(&call) && (actor == Actor::User || !who.names_agent()) {
            let stx = self.open_read(session)?;
            let (tx, session, look) = (&stx.tx, &stx.session, stx.look(caller));
            let (keyed, version) = load_kept(tx, session, current(tx, self.id, session, cache)?)?;
            let KeyedList {
                list,
                phase_keys,
                task_keys,
            } = keyed;
            let outcome = todo::run(list, call, actor);
            if !needs_write(&outcome, actor) {
                // The list goes into the result, copied only when it is
                // also kept for the next call.
                let section = match outcome.errors.is_empty() {
                    true => super::checks::task_section(tx, session, &outcome.list, look, now_ms)?,
                    false => None,
                };
                let (mut result, cache) = if let Some(store) = keep {
                    let result = outcome.to_result(version);
                    let keyed = KeyedList {
                        list: outcome.list,
                        phase_keys,
                        task_keys,
                    };
                    (result, ListCache::of(store, tx, session, version, keyed)?)
                } else {
                    (outcome.into_result(version), None)
                };
                add_section(&mut result, section);
                stx.commit()?;
                caller.kept = cache;
                return Ok(result);
            }
            // A `view` with a mistake in it, by an agent: logged below.
            None
        } else {
            cache
        };
        let id = self.id;
        let stx = self.open_write(session)?;
        let (tx, session, look) = (&stx.tx, &stx.session, stx.look(caller));
        let cache = current(tx, id, session, cache)?;
        let who = &super::tool_use::settle(tx, session, who)?;
        let (result, cache) = call_in_tx(tx, session, cache, keep, call, actor, who, now_ms, look)?;
        stx.commit()?;
        caller.kept = cache;
        Ok(result)
    }

    /// One todo call for `session` as `actor`, answered without the list:
    /// what it stores is what [`Store::todo`] stores, and the answer is its
    /// result's text and facts. A targeted `start`, `done`, `drop`,
    /// `block`, `unblock` or agent's `rm` on a list too long to repeat is
    /// run on the rows it touches ([`super::in_place`]); every other call
    /// on the whole list, in the same one transaction. A list the caller
    /// keeps ([`Caller::keep_lists`]) is kept up to date either way. For the
    /// MCP server, which sends the model the text and a few facts.
    pub fn todo_answer(
        &mut self,
        session: &(impl SessionRef + ?Sized),
        call: Call<'_>,
        actor: Actor,
        caller: &mut Caller,
        now_ms: i64,
    ) -> Result<TodoAnswer> {
        Ok(self.answer(session, call, actor, caller, now_ms)?.0)
    }

    /// [`Store::todo_answer`], and whether the call was run in place.
    pub(super) fn answer(
        &mut self,
        session: &(impl SessionRef + ?Sized),
        call: Call<'_>,
        actor: Actor,
        caller: &mut Caller,
        now_ms: i64,
    ) -> Result<(TodoAnswer, bool)> {
        if is_view(&call) {
            let result = self.todo(session, call, actor, caller, now_ms)?;
            return Ok((TodoAnswer::of(&result), false));
        }
        // The kept list is current only on the connection it came from.
        let keep = caller.keeps_lists.then_some(self.id);
        let cache = caller.kept.take();
        let who = caller.who_for_call();
        let id = self.id;
        let stx = self.open_write(session)?;
        let (tx, session, look) = (&stx.tx, &stx.session, stx.look(caller));
        let cache = current(tx, id, session, cache)?;
        let who = super::tool_use::settle(tx, session, who)?;
        let solo = actor == Actor::User || who.agent.is_none();
        if solo && let Some(placed) = super::in_place::run(tx, session, call, actor, now_ms)? {
            // The kept list gets the rows the call rewrote, and the stamp
            // of what this transaction leaves.
            let cache = match (cache, stamp(tx)?) {
                (Some(mut cache), Some(stamp)) => cache.keyed.set_rows(&placed.sets).then(|| {
                    cache.version = placed.version;
                    cache.stamp = stamp;
                    cache
                }),
                _ => None,
            };
            stx.commit()?;
            caller.kept = cache;
            let answer = TodoAnswer {
                text: placed.text,
                is_error: false,
                op: Some(placed.op.as_str().to_owned()),
                version: placed.version,
                completed_tasks: placed.completed,
            };
            return Ok((answer, true));
        }
        let (result, cache) =
            call_in_tx(tx, session, cache, keep, call, actor, &who, now_ms, look)?;
        stx.commit()?;
        caller.kept = cache;
        Ok((TodoAnswer::of(&result), false))
    }
}

impl super::SessionTx<'_> {
    /// Replaces the list with an imported one (actor user). The list must
    /// hold the model's invariants; it is normalized before it is stored.
    /// `source` names where it came from, for the event log. A task the
    /// list says a named agent holds stays its, with the lease
    /// `caller` gives ([`Caller::act_as`]), from the claim's time.
    pub fn todo_import(
        &self,
        list: TodoList,
        source: &str,
        caller: &Caller,
        now_ms: i64,
    ) -> Result<TodoResult> {
        if let Err(problems) = list.validate() {
            return Err(Error::Rejected(format!(
                "cannot import {source}: {}; nothing was imported",
                problems.join("; ")
            )));
        }
        let lease_ms = caller.who.lease_ms;
        import_in_tx(&self.tx, &self.session, list, source, lease_ms, now_ms)
    }

    /// The text of a user's `view` of the session (what [`Store::todo`]
    /// returns as the text of that call) and whether it is an error (a
    /// phase or page that does not exist). Reads only what the page shows
    /// when the list's kept shape allows ([`super::shape`]), else the whole
    /// list.
    /// A list with checks ends with where they stand at `now_ms`.
    pub fn todo_view(
        &self,
        view: &ViewPage,
        caller: &Caller,
        now_ms: i64,
    ) -> Result<(String, bool)> {
        let (tx, session, look) = (&self.tx, &self.session, self.look(caller));
        let version = match shape::view_page(tx, session, view)? {
            Ok(text) => return Ok((text, false)),
            Err(version) => version,
        };
        let list = if version == 0 {
            TodoList::default()
        } else {
            rows::load(tx, session)?.list
        };
        let op = Op::View(view.clone());
        let outcome = todo::run(list, Call::Op(&op), Actor::User);
        let section = match outcome.errors.is_empty() {
            true => super::checks::task_section(tx, session, &outcome.list, look, now_ms)?,
            false => None,
        };
        let mut result = outcome.into_result(version);
        add_section(&mut result, section);
        Ok((result.text().to_owned(), result.is_error))
    }

    /// Restores the list as it was before the last change, as a new version.
    /// Repeated undos walk further back, to any of the last [`UNDO_DEPTH`]
    /// versions (every undo is a version too); an
    /// undo is itself never undone by the next one. Refused, with nothing
    /// changed, when there is nothing left to undo or the version to
    /// restore is older than the history kept.
    pub fn todo_undo(&self, now_ms: i64) -> Result<TodoResult> {
        let (tx, session) = (&self.tx, &self.session);
        let (keyed, current) = load(tx, session)?;
        let first_state = || {
            Error::Rejected(format!(
                "nothing to undo in session {session}: the todo list is at its first state"
            ))
        };
        let too_old = |target: Option<i64>| {
            let which = target.map_or_else(
                || "the version before this one".to_owned(),
                |t| format!("version {t}, which it would restore,"),
            );
            Error::Rejected(format!(
                "nothing more to undo in session {session}: undo reaches back {UNDO_DEPTH} versions of the list and {which} is older; nothing was changed"
            ))
        };
        if current == 0 {
            return Err(first_state());
        }
        let target = match rows::undo_to(tx, session, current)? {
            None | Some(Some(UNDO_TO_UNKNOWN)) => return Err(too_old(None)),
            Some(None) => return Err(first_state()),
            Some(Some(target)) => target,
        };
        let steps = rows::steps(tx, session, target, current)?;
        let restored = match patch::rebuild(keyed.clone(), current, target, &steps) {
            Ok(restored) => restored,
            Err(Rebuild::Missing(_)) => return Err(too_old(Some(target))),
            Err(Rebuild::Corrupt(why)) => {
                return Err(Error::Corrupt {
                    what: format!("undo history of session {session}"),
                    why,
                });
            }
        };
        // Where an undo of the restored version would go next.
        let undo_to = if target == 0 {
            None
        } else {
            rows::undo_to(tx, session, target)?.unwrap_or(Some(UNDO_TO_UNKNOWN))
        };
        let (forward, inverse) = keyed.change_to_keyed(&restored);
        let version = current + 1;
        store_version(
            tx,
            session,
            &forward,
            Version {
                number: version,
                shape: Shape::of_keyed(&restored),
                undo_to,
                restores: Some(target),
                inverse: &inverse,
            },
            Logged {
                actor: Actor::User,
                agent: None,
                op: "undo",
                payload: json!({"op": "undo", "restored_version": target}).to_string(),
                at_ms: now_ms,
            },
        )?;
        Ok(result(restored.list, "undo", version))
    }

    /// The pending todo-error text of the session (set by a rejected
    /// agent call, cleared by the next successful one), if any.
    pub fn pending_todo_error(&self) -> Result<Option<String>> {
        read_todo_error(&self.tx, &self.session)
    }
}

/// Replaces `session`'s list with the checked `list` inside `tx`, as the
/// user's import from `source`; the caller commits. A person's import
/// promotes no task where named agents work (the session has seen one, or
/// the list names one); a task the list says a named agent holds stays
/// its, its claim granted `lease_ms` from the time the list gives, unless
/// the agent was granted a later end already (DESIGN.md §2.5).
pub(crate) fn import_in_tx(
    tx: &Tx<'_>,
    session: &SessionId,
    mut list: TodoList,
    source: &str,
    lease_ms: i64,
    now_ms: i64,
) -> Result<TodoResult> {
    let named = !agent_leases(tx, session)?.is_empty();
    todo::normalize_import(&mut list, named);
    let (keyed, current) = load(tx, session)?;
    let version = current + 1;
    let change = keyed.change_to(&list);
    store_version(
        tx,
        session,
        &change.forward,
        Version {
            number: version,
            shape: Shape::of(&list, &change.phase_keys, &change.task_keys),
            undo_to: Some(current),
            restores: None,
            inverse: &change.inverse,
        },
        Logged {
            actor: Actor::User,
            agent: None,
            op: "import",
            payload: json!({"op": "import", "source": source}).to_string(),
            at_ms: now_ms,
        },
    )?;
    for task in list.tasks().map(|(_, t)| t) {
        if let (todo::Status::InProgress, Some(agent)) = (task.status, &task.agent) {
            let since = task.since_ms.unwrap_or(now_ms);
            grant(tx, session, agent, since, since.saturating_add(lease_ms))?;
        }
    }
    Ok(result(list, "import", version))
}

/// Runs one call that may write inside the write transaction `tx`: read
/// the list (`cache`, when there is one: the kept list, which
/// [`current`] found current in `tx`), apply the call, store what
/// it changed or log what it got wrong. Returns the result and, when the
/// caller keeps its lists (`keep` names the connection), the list to keep
/// for its next call.
#[allow(clippy::too_many_arguments)]
pub(super) fn call_in_tx(
    tx: &Tx<'_>,
    session: &SessionId,
    cache: Option<ListCache>,
    keep: Option<u64>,
    call: Call<'_>,
    actor: Actor,
    who: &Who,
    now_ms: i64,
    look: &Look,
) -> Result<(TodoResult, Option<ListCache>)> {
    let (keyed, version) = load_kept(tx, session, cache)?;
    let leases = agent_leases(tx, session)?;
    // The database's clock bounds the caller's only where some claim could
    // lapse: a list of named agents.
    let clock_ms = if leases.is_empty() {
        i64::MAX
    } else {
        database_clock(tx)?
    };
    let team = Team {
        now_ms,
        clock_ms,
        lease_ms: who.lease_ms,
        leases,
    };
    let agent = who.agent.as_ref().filter(|_| actor != Actor::User);
    let caller = todo::Caller {
        actor,
        agent: agent.map(AgentName::as_str),
        team: &team,
    };
    let outcome = todo::run_as(keyed.list.clone(), call, &caller);
    let (outcome, unverified) = gate(tx, session, outcome, &keyed.list, actor, look, now_ms)?;
    let mut version = version;
    let mut change = None;
    if outcome.is_mutation() {
        version += 1;
        let op = outcome.op.as_ref().expect("a mutation has an op");
        let made = change.insert(keyed.change_to(&outcome.list));
        store_version(
            tx,
            session,
            &made.forward,
            Version {
                number: version,
                shape: Shape::of(&outcome.list, &made.phase_keys, &made.task_keys),
                undo_to: Some(version - 1),
                restores: None,
                inverse: &made.inverse,
            },
            Logged::op_by(actor, caller.agent, op, now_ms).unverified(&unverified),
        )?;
        // The session's own agent's reminder is settled with the version.
        if let Some(agent) = caller.agent {
            set_agent_todo_error(tx, session, agent, None, now_ms)?;
        }
    } else if outcome.is_no_op() && actor == Actor::Agent {
        // A no-op stores nothing (DESIGN.md §2.2), but it is a well-formed
        // call: the reminder about the same agent's earlier rejected call
        // is done.
        match caller.agent {
            None => set_todo_error(tx, session, None)?,
            Some(agent) => set_agent_todo_error(tx, session, agent, None, now_ms)?,
        }
    } else if needs_write(&outcome, actor) {
        let error = outcome.errors.join("; ");
        events::append_rejected(
            tx,
            session,
            EventKind::Todo,
            outcome.kind.map(|k| k.as_str()),
            &call.raw_payload(),
            &error,
            caller.agent,
            now_ms,
        )?;
        // The reminder is for the agent that made the call, at its next
        // prompt, where its host gives it one (DESIGN.md §3.4).
        match caller.agent {
            None => set_todo_error(tx, session, Some(&error))?,
            Some(agent) => set_agent_todo_error(tx, session, agent, Some(&error), now_ms)?,
        }
    }
    if let Some(agent) = agent {
        record_seen(tx, session, agent, now_ms, who.lease_ms)?;
    }
    // A view, and a person's change of a check, end with where the tasks'
    // checks stand.
    let shows_checks =
        outcome.errors.is_empty() && matches!(outcome.op, Some(Op::View(_) | Op::Check(..)));
    let section = match shows_checks {
        true => super::checks::task_section(tx, session, &outcome.list, look, now_ms)?,
        false => None,
    };
    let Some(store) = keep else {
        let mut result = outcome.into_result(version);
        add_section(&mut result, section);
        return Ok((result, None));
    };
    let mut result = outcome.to_result(version);
    add_section(&mut result, section);
    let kept = match change {
        Some(change) => change.keyed(outcome.list),
        None => keyed,
    };
    Ok((result, ListCache::of(store, tx, session, version, kept)?))
}

/// Ends `result`'s text with `section` (the tasks' checks), when there is
/// one.
fn add_section(result: &mut TodoResult, section: Option<String>) {
    if let (Some(section), Some(content)) = (section, result.content.first_mut()) {
        content.text.push('\n');
        content.text.push_str(&section);
    }
}

/// The gate of `done` (DESIGN.md §13): when the call completes tasks that
/// carry a check, each check must have passed on the files `look` sees.
/// An agent's call is then refused (the outcome becomes a rejection that
/// leaves `before` as it was, naming each check); a person's goes through,
/// and each check that did not pass comes back to be logged as unverified.
/// Reads the files only for a completed task with a check.
fn gate(
    tx: &Tx<'_>,
    session: &SessionId,
    outcome: Outcome,
    before: &TodoList,
    actor: Actor,
    look: &Look,
    now_ms: i64,
) -> Result<(Outcome, Vec<String>)> {
    if !outcome.is_mutation() || outcome.completed.is_empty() {
        return Ok((outcome, Vec::new()));
    }
    let wanted: Vec<(Scope, String)> = outcome
        .completed
        .iter()
        .filter_map(|done| {
            let (p, t) = outcome.list.find_task(&done.content)?;
            let check = outcome.list.phases[p].tasks[t].check.clone()?;
            Some((Scope::Task(done.content.clone()), check))
        })
        .collect();
    if wanted.is_empty() {
        return Ok((outcome, Vec::new()));
    }
    let tasks: Vec<String> = wanted
        .iter()
        .filter_map(|(scope, _)| match scope {
            Scope::Task(task) => Some(format!("\"{task}\"")),
            Scope::Goal => None,
        })
        .collect();
    let checked = super::check_runs::checked(tx, session, wanted, look)?;
    let tree_error = look.fingerprint().err();
    if actor == Actor::User {
        let unverified = checked
            .iter()
            .filter(|c| !c.state.is_passing())
            .map(|c| c.describe(now_ms))
            .collect();
        return Ok((outcome, unverified));
    }
    let what = format!(
        "`done` of task{} {}",
        if tasks.len() == 1 { "" } else { "s" },
        tasks.join(", ")
    );
    match crate::check::refusal(&what, &checked, tree_error, now_ms) {
        None => Ok((outcome, Vec::new())),
        Some(refused) => Ok((
            Outcome {
                list: before.clone(),
                completed: Vec::new(),
                changed: Vec::new(),
                list_changed: false,
                errors: vec![refused],
                ..outcome
            },
            Vec::new(),
        )),
    }
}

/// True when the call asks for `view`: it is answered from a read
/// transaction. Anything that is not plainly a `view` takes the write lock
/// first, so what it reads is what it overwrites.
fn is_view(call: &Call<'_>) -> bool {
    const VIEW: &str = "view";
    match call {
        Call::Op(op) => !op.mutates(),
        Call::Value(value) => value.get("op").and_then(|v| v.as_str()) == Some(VIEW),
        // Peeking costs a parse; only a short call can be a plain view.
        Call::Json(text) => {
            text.len() <= 256
                && serde_json::from_str::<serde_json::Value>(text)
                    .is_ok_and(|v| v.get("op").and_then(|v| v.as_str()) == Some(VIEW))
        }
    }
}

/// True when the outcome must be written: a mutation, an agent's rejected
/// call (logged, and left as a reminder), or an agent's no-op (which
/// clears that reminder).
fn needs_write(outcome: &Outcome, actor: Actor) -> bool {
    outcome.is_mutation()
        || (actor == Actor::Agent && (!outcome.errors.is_empty() || outcome.is_no_op()))
}

/// The session's list and version: the kept list `current` (see
/// [`current`]) when there is one, else read from the rows.
fn load_kept(
    tx: &Tx<'_>,
    session: &SessionId,
    current: Option<ListCache>,
) -> Result<(KeyedList, i64)> {
    match current {
        Some(cache) => Ok((cache.keyed, cache.version)),
        None => load(tx, session),
    }
}

/// The session's list with its row keys, and its version.
fn load(tx: &Tx<'_>, session: &SessionId) -> Result<(KeyedList, i64)> {
    let version = sessions::todo_version(tx, session)?;
    let keyed = if version == 0 {
        KeyedList::default()
    } else {
        rows::load(tx, session)?
    };
    Ok((keyed, version))
}

/// The result of a user-level replacement (import, undo), shaped like a
/// tool result so every command prints the same way.
fn result(list: TodoList, op: &str, version: i64) -> TodoResult {
    ToolResult::new(
        todo::summary(&list, &[], SummaryKind::Mutation),
        TodoDetails {
            op: Some(op.to_owned()),
            phases: list,
            completed_tasks: Vec::new(),
            version,
        },
        false,
    )
}
