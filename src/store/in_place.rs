//! A todo call that changes tasks in place, run on the rows it touches:
//! what a mutation costs follows the call, not the list (DESIGN.md §7).
//!
//! The calls an agent makes at every step name one task: `start`, `done`,
//! `drop`, `block`, `unblock`, an agent's `rm`. On a list too long to
//! repeat, such a call reads the kept shape ([`super::shape`]), the named
//! task (by the index of the start of task texts, schema v6) and the task in progress
//! (in the one phase that has it), at most the earliest pending task when the call leaves nothing in
//! progress, and after writing, the few rows its summary shows. It never
//! reads the list into memory. The state changes are the pure engine's own
//! rules run on those rows ([`todo::start`], [`todo::edit_task`],
//! [`todo::settle`]), and the summary is the engine's renderer fed
//! from them ([`todo::render_bounded`]).
//!
//! Everything else goes the whole way, as [`Store::todo`](super::Store::todo)
//! runs it: any other op, a phase or the whole list as target, a task that
//! is not there (the error's hints look at the whole list), a list whose
//! summary may fit whole, a list without a kept shape, a shape that does
//! not say the list is normalized, a list named agents have called on, a
//! named agent's call, a `block` with `after` (DESIGN.md §2.5). The answer
//! comes back as `None` before anything is written, so the caller runs the
//! call on the whole list in the same transaction. A property test holds this path to the whole-list
//! one: the same text, rows, shape, versions and undo, call after call.

use super::patch::{self, Patch, TaskSet};
use super::rows;
use super::shape::{self, Shape};
use super::sql::{Dialect, Row, Tx, params};
use super::versions::{Logged, Version, set_todo_error, store_version};
use crate::SessionId;
use crate::error::Result;
use crate::todo::{
    self, Actor, Call, Caller, ChangedTask, Note, Op, OpKind, Parsed, Status, SummaryKind, Tally,
    Target, Task,
};

/// The rows of the task named `?2` and of the task in progress (in phase
/// `?3`, `NULL` for none) of session `?1`. The first half is answered by
/// the index of the start of task texts (schema v6).
#[cfg(feature = "postgres")]
const NAMED_AND_ACTIVE: &str =
    "SELECT phase_pos, pos, content, status, blocker, dropped_by FROM tasks
     WHERE session_id = ?1 AND substr(content, 1, 64) = substr(?2, 1, 64) AND content = ?2
     UNION ALL
     SELECT phase_pos, pos, content, status, blocker, dropped_by FROM tasks
     WHERE session_id = ?1 AND phase_pos = ?3 AND status = 'in_progress'";

/// [`NAMED_AND_ACTIVE`] for SQLite, which is told to use that index:
/// without statistics its planner prefers stepping through the session's
/// rows by their primary key (it estimates both at ten rows), which reads
/// every task of the session.
const NAMED_AND_ACTIVE_SQLITE: &str = "SELECT phase_pos, pos, content, status, blocker, dropped_by
     FROM tasks INDEXED BY tasks_by_prefix
     WHERE session_id = ?1 AND substr(content, 1, 64) = substr(?2, 1, 64) AND content = ?2
     UNION ALL
     SELECT phase_pos, pos, content, status, blocker, dropped_by FROM tasks
     WHERE session_id = ?1 AND phase_pos = ?3 AND status = 'in_progress'";

/// A task row the call reads: its key, the index of its phase, and the
/// task before and after the call.
struct Touched {
    key: (i64, i64),
    phase: usize,
    before: Task,
    after: Task,
}

impl Touched {
    /// The row of `task`, at `key` in phase `phase`, before the call
    /// changes it.
    fn new(key: (i64, i64), phase: usize, task: Task) -> Touched {
        Touched {
            key,
            phase,
            after: task.clone(),
            before: task,
        }
    }
}

/// A call run in place: it succeeded (every rejected call goes the whole
/// way).
pub(super) struct Placed {
    /// The text of its result.
    pub text: String,
    /// Its op.
    pub op: OpKind,
    /// The list's version after it.
    pub version: i64,
    /// How many tasks it moved into `completed` (0 or 1).
    pub completed: usize,
    /// The rows it rewrote, as they are now (empty for a no-op).
    pub sets: Vec<TaskSet>,
}

/// Runs `call` on the rows it touches, inside the write transaction `tx`;
/// `None`, with nothing written, when the call must run on the whole list
/// (see the module doc). It reads the rows, decides their new states by
/// the engine's rules, writes the version and renders the summary.
pub(super) fn run(
    tx: &Tx<'_>,
    session: &SessionId,
    call: Call<'_>,
    actor: Actor,
    now_ms: i64,
) -> Result<Option<Placed>> {
    let Some(mut read) = read(tx, session, call, actor)? else {
        return Ok(None);
    };
    let Some(completed) = decide(tx, session, &mut read, actor)? else {
        return Ok(None);
    };
    let Read {
        version,
        mut shape,
        op,
        repairs,
        mut touched,
        ..
    } = read;
    touched.sort_by_key(|t| t.key);
    let changes: Vec<&Touched> = touched.iter().filter(|t| t.before != t.after).collect();
    let phases = shape::phase_rows(tx, session, &shape)?;
    let changed: Vec<ChangedTask> = changes
        .iter()
        .map(|t| ChangedTask {
            phase: phases[t.phase].1.clone(),
            content: t.after.content.clone(),
            before: Some(t.before.status),
            after: Some(t.after.status),
        })
        .collect();
    let (kind, placed_version, sets) = write(
        tx, session, &mut shape, &changes, version, &op, actor, now_ms,
    )?;
    let names: Vec<&str> = phases.iter().map(|(_, name)| name.as_str()).collect();
    let text = render(tx, session, &shape, &names, &repairs, &changed, kind)?;
    Ok(Some(Placed {
        text,
        op: op.kind(),
        version: placed_version,
        completed: usize::from(completed),
        sets,
    }))
}

/// What [`read`] found: the list's version and kept shape, the call, and
/// the rows it touches, of which `target` is the one it names.
struct Read {
    version: i64,
    shape: Shape,
    op: Op,
    repairs: Vec<String>,
    touched: Vec<Touched>,
    target: usize,
}

/// The index of the phase whose key is `key`, if the shape has it.
fn phase_of(shape: &Shape, key: i64) -> Option<usize> {
    shape.phases.binary_search_by_key(&key, |p| p.key).ok()
}

/// Reads what the call needs: the kept shape, the call itself, the named
/// task's row and the row of the task in progress. `None` when the call
/// must go the whole way (see the module doc).
fn read(tx: &Tx<'_>, session: &SessionId, call: Call<'_>, actor: Actor) -> Result<Option<Read>> {
    let (version, Some(shape)) = shape::load(tx, session)? else {
        return Ok(None);
    };
    // A list named agents work on follows their rules (DESIGN.md §2.5),
    // which this path does not read: a person's call there promotes no task.
    let agents = tx.query_opt(
        "SELECT 1 FROM agents WHERE session_id = ?1 LIMIT 1",
        params![session.as_str()],
        |r| r.get::<i64>(0),
    )?;
    if agents.is_some() {
        return Ok(None);
    }
    let all = Tally::sum(&shape.tallies());
    let in_progress = all.get(Status::InProgress);
    let normalized = in_progress == 1 || (in_progress == 0 && all.get(Status::Pending) == 0);
    if all.counts().total == 0 || shape.floor <= todo::SUMMARY_BYTES || !normalized {
        return Ok(None);
    }
    // The list has tasks, which is all that reading a call takes of it.
    let parsed = match call {
        Call::Json(text) => todo::parse_call_on(text, false),
        Call::Value(value) => todo::parse_value_on(value, false),
        Call::Op(op) => Ok(Parsed {
            op: op.clone(),
            repairs: Vec::new(),
        }),
    };
    let Ok(Parsed { op, repairs }) = parsed else {
        return Ok(None);
    };
    let content = match &op {
        Op::Start(content)
        | Op::Done(Target::Task(content))
        | Op::Drop(Target::Task(content))
        | Op::Block(Target::Task(content), None | Some(Note::Reason(_)))
        | Op::Unblock(Target::Task(content)) => content.clone(),
        Op::Rm(Target::Task(content)) if actor != Actor::User => content.clone(),
        _ => return Ok(None),
    };

    // The named task (found by the index of task texts) and the one in
    // progress (in the one phase whose tally counts it), in one statement.
    let active_phase = shape
        .phases
        .iter()
        .find(|p| p.tally.get(Status::InProgress) > 0)
        .map(|p| p.key);
    let sql = match tx.dialect() {
        Dialect::Sqlite => NAMED_AND_ACTIVE_SQLITE,
        #[cfg(feature = "postgres")]
        Dialect::Postgres => NAMED_AND_ACTIVE,
    };
    let rows = tx.query_all(
        sql,
        params![session.as_str(), content.as_str(), active_phase],
        |r| task_row(r, session),
    )?;
    let mut touched: Vec<Touched> = Vec::with_capacity(3);
    for (key, task) in rows {
        if touched.iter().any(|t| t.key == key) {
            continue;
        }
        let Some(phase) = phase_of(&shape, key.0) else {
            return Ok(None);
        };
        touched.push(Touched::new(key, phase, task));
    }
    let named: Vec<usize> = (0..touched.len())
        .filter(|&i| touched[i].before.content == content)
        .collect();
    let active = touched
        .iter()
        .filter(|t| t.before.status == Status::InProgress)
        .count();
    let [target] = named[..] else {
        return Ok(None);
    };
    if active != in_progress {
        return Ok(None);
    }
    Ok(Some(Read {
        version,
        shape,
        op,
        repairs,
        touched,
        target,
    }))
}

/// Applies the call to the rows read, by the engine's rules: `start`, or
/// the edit of the named task, then the rule of one task in progress
/// (reading the earliest pending row when the call leaves none in
/// progress). Returns whether the named task was completed; `None` when
/// the rows do not hold what the shape counts.
fn decide(tx: &Tx<'_>, session: &SessionId, read: &mut Read, actor: Actor) -> Result<Option<bool>> {
    let touched = &mut read.touched;
    let mut completed = false;
    match &read.op {
        Op::Start(_) => todo::start(
            touched.iter_mut().map(|t| &mut t.after),
            read.target,
            &Caller::solo(actor),
        ),
        op => completed = todo::edit_task(&mut touched[read.target].after, op, actor, true),
    }
    let mut tallies = read.shape.tallies();
    for task in touched.iter() {
        tallies[task.phase].moved(task.before.status, task.after.status);
    }
    let now = Tally::sum(&tallies);
    if now.get(Status::InProgress) == 0 && now.get(Status::Pending) > 0 {
        let Some(untouched) = earliest_untouched_pending(tx, session, &read.shape, touched)? else {
            return Ok(None);
        };
        touched.extend(untouched);
        if !touched.iter().any(|t| t.after.status == Status::Pending) {
            return Ok(None);
        }
        touched.sort_by_key(|t| t.key);
        todo::settle(
            touched.iter_mut().map(|t| &mut t.after),
            &Caller::solo(actor),
            false,
            None,
        );
    }
    Ok(Some(completed))
}

/// Writes the changed rows as the list's next version, with their undo
/// step, and updates the kept shape's tallies; a no-op writes nothing
/// (DESIGN.md §2.2). Returns the summary's kind, the list's version after
/// the call and the rows written.
#[allow(clippy::too_many_arguments)]
fn write(
    tx: &Tx<'_>,
    session: &SessionId,
    shape: &mut Shape,
    changes: &[&Touched],
    version: i64,
    op: &Op,
    actor: Actor,
    now_ms: i64,
) -> Result<(SummaryKind, i64, Vec<TaskSet>)> {
    if changes.is_empty() {
        // A no-op stores nothing, but it is a well-formed call: the
        // reminder about an earlier rejected one is done.
        if actor == Actor::Agent {
            set_todo_error(tx, session, None)?;
        }
        return Ok((SummaryKind::Unchanged(version), version, Vec::new()));
    }
    for task in changes {
        shape.phases[task.phase]
            .tally
            .moved(task.before.status, task.after.status);
    }
    let set = |task: &Task, key: (i64, i64)| patch::set(key.0, key.1, task);
    let forward = Patch {
        tasks_set: changes.iter().map(|t| set(&t.after, t.key)).collect(),
        ..Patch::default()
    };
    let inverse = Patch {
        tasks_set: changes.iter().map(|t| set(&t.before, t.key)).collect(),
        ..Patch::default()
    };
    store_version(
        tx,
        session,
        &forward,
        Version {
            number: version + 1,
            shape: shape.clone(),
            undo_to: Some(version),
            restores: None,
            inverse: &inverse,
        },
        Logged::op(actor, op, now_ms),
    )?;
    Ok((SummaryKind::Mutation, version + 1, forward.tasks_set))
}

/// The call's summary, from the rows it shows, read after the write: the
/// next open tasks and the first blocked ones.
fn render(
    tx: &Tx<'_>,
    session: &SessionId,
    shape: &Shape,
    names: &[&str],
    repairs: &[String],
    changed: &[ChangedTask],
    kind: SummaryKind,
) -> Result<String> {
    let first = |open: fn(&Tally) -> bool| shape.phases.iter().find(|p| open(&p.tally));
    let next = match first(|t| t.get(Status::Pending) + t.get(Status::InProgress) > 0) {
        None => Vec::new(),
        Some(from) => window(
            tx,
            session,
            "SELECT phase_pos, content, status, blocker FROM tasks
             WHERE session_id = ?1 AND phase_pos >= ?2 AND status IN ('pending', 'in_progress')
             ORDER BY phase_pos, pos LIMIT ?3",
            from.key,
            todo::NEXT_SHOWN,
        )?,
    };
    let blocked = match first(|t| t.get(Status::Blocked) > 0) {
        None => Vec::new(),
        Some(from) => window(
            tx,
            session,
            "SELECT phase_pos, content, status, blocker FROM tasks
             WHERE session_id = ?1 AND phase_pos >= ?2 AND status = 'blocked'
             ORDER BY phase_pos, pos LIMIT ?3",
            from.key,
            todo::BLOCKED_SHOWN,
        )?,
    };
    let in_phases = |rows: &[(i64, Task)]| -> Option<Vec<usize>> {
        rows.iter().map(|(key, _)| phase_of(shape, *key)).collect()
    };
    let (Some(next_phases), Some(blocked_phases)) = (in_phases(&next), in_phases(&blocked)) else {
        return Err(rows::corrupt_list(session, "a task outside its phases"));
    };
    let next = pair(&next_phases, &next);
    let blocked = pair(&blocked_phases, &blocked);
    let parts = todo::Bounded {
        names,
        tallies: &shape.tallies(),
        next: &next,
        blocked: &blocked,
    };
    Ok(todo::render_bounded(repairs, changed, kind, &parts))
}

/// The first pending row the call did not touch, when it comes before
/// every touched pending one (so the rule of one task in progress, run on
/// the touched rows, promotes the list's earliest pending task); `Some(None)`
/// when a touched row comes first or no untouched pending row exists, and
/// `None` when the row found lies outside the shape's phases.
fn earliest_untouched_pending(
    tx: &Tx<'_>,
    session: &SessionId,
    shape: &Shape,
    touched: &[Touched],
) -> Result<Option<Option<Touched>>> {
    // Every untouched pending row was pending before the call, so it sits
    // in a phase whose old tally counts one; at most `touched.len()` of
    // the rows found are touched ones.
    let Some(from) = shape
        .phases
        .iter()
        .find(|p| p.tally.get(Status::Pending) > 0)
    else {
        return Ok(Some(None));
    };
    let limit = i64::try_from(touched.len() + 1).unwrap_or(i64::MAX);
    let rows = tx.query_all(
        "SELECT phase_pos, pos, content, status, blocker, dropped_by FROM tasks
         WHERE session_id = ?1 AND phase_pos >= ?2 AND status = 'pending'
         ORDER BY phase_pos, pos LIMIT ?3",
        params![session.as_str(), from.key, limit],
        |r| task_row(r, session),
    )?;
    let best = touched
        .iter()
        .filter(|t| t.after.status == Status::Pending)
        .map(|t| t.key)
        .min();
    let untouched = rows
        .into_iter()
        .find(|(key, _)| touched.iter().all(|t| t.key != *key));
    let Some((key, task)) = untouched.filter(|(key, _)| best.is_none_or(|b| *key < b)) else {
        return Ok(Some(None));
    };
    Ok(phase_of(shape, key.0).map(|phase| Some(Touched::new(key, phase, task))))
}

/// Each row's task with the index of its phase.
fn pair<'a>(phases: &[usize], rows: &'a [(i64, Task)]) -> Vec<(usize, &'a Task)> {
    phases
        .iter()
        .copied()
        .zip(rows.iter().map(|(_, t)| t))
        .collect()
}

/// A whole task row with its key.
fn task_row(r: &Row<'_>, session: &SessionId) -> Result<((i64, i64), Task)> {
    Ok((
        (r.get::<i64>(0)?, r.get::<i64>(1)?),
        Task {
            status: rows::status_column(r, 3, session)?,
            blocker: r.get::<Option<String>>(4)?,
            dropped_by: rows::dropped_column(r, 5, session)?,
            ..Task::pending(r.get::<String>(2)?)
        },
    ))
}

/// The first `n` tasks `sql` selects from phase position `from` on, with
/// their phase positions.
fn window(
    tx: &Tx<'_>,
    session: &SessionId,
    sql: &str,
    from: i64,
    n: usize,
) -> Result<Vec<(i64, Task)>> {
    let limit = i64::try_from(n).unwrap_or(i64::MAX);
    tx.query_all(sql, params![session.as_str(), from, limit], |r| {
        rows::shown_task(r, session)
    })
}

#[cfg(test)]
mod tests;
