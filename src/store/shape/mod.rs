//! What the store keeps about a list's shape, so that the reads that show
//! only part of a list read only that part (DESIGN.md §7: reads of a long
//! list read what they show): the status line, a `view` page, the bounded
//! `<todo_context>`.
//!
//! The shape of a session's list is its phases' tallies (tasks by status),
//! the fewest bytes its whole summary takes, and where every `view` page
//! starts, of the whole list and of each phase: everything those reads
//! need besides the rows they show. It is JSON text in the session's row
//! (`sessions.todo_shape`, schema v5), written with the list's version by
//! every write of the list (a mutation, an import, an undo; after an
//! upgrade from a schema before v5, the store computes it for the lists
//! already stored), from the list the write leaves, by the same functions
//! the pure engine renders with.
//! `NULL` (a PostgreSQL database migrated from v4, until its next write)
//! means "not known": the reads then read the whole list, as before.
//!
//! Why a kept shape, and not counts in SQL: `GROUP BY status` sorts every
//! row of the list, which on a long list costs more than the rest of the
//! status line's process (BENCHMARKS.md); a `view` page needs the byte size of every task
//! before it (pages are cut at [`PAGE_BYTES`](crate::todo::PAGE_BYTES)),
//! and its page count needs all of them, so even a narrow SQL read of
//! sizes and statuses steps through every row. A write already holds the
//! whole list in memory, so keeping the shape costs it one pass over that
//! list and a few hundred bytes more in the row it rewrites anyway.
//!
//! A `view` page is read in [`view`], the part of the list a bounded block
//! shows in [`context`].

mod context;
#[cfg(test)]
mod outside_writes;
#[cfg(test)]
mod tests;
mod view;

use serde::{Deserialize, Serialize};

use super::patch::KeyedList;
use super::rows::corrupt_list;
use super::sql::{Tx, params};
use crate::SessionId;
use crate::error::Result;
use crate::todo::{self, Counts, Tally, TodoList};

pub(crate) use context::context_part;
pub(crate) use view::view_page;

/// The shape of one list (see the module doc). The field names are short:
/// the text is rewritten with every version.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Shape {
    /// The fewest bytes the whole summary takes ([`todo::whole_floor`]).
    #[serde(rename = "f")]
    pub floor: usize,
    /// Every phase, in order.
    #[serde(rename = "p")]
    pub phases: Vec<PhaseShape>,
    /// The pages of the whole list: the key `(phase position, position)`
    /// of each page's first task, and its number of tasks.
    #[serde(rename = "g")]
    pub pages: Vec<(i64, i64, usize)>,
    /// True for a list some named agent works on, with a task waiting
    /// `after` another, or with a task that carries a check: its shape is
    /// not kept (DESIGN.md §2.5, §13), so every read and write of it takes
    /// the whole list (where an agent's `done` meets the gate).
    #[serde(skip)]
    pub team: bool,
}

/// One phase of a [`Shape`].
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct PhaseShape {
    /// Its row's position.
    #[serde(rename = "k")]
    pub key: i64,
    /// Its tasks by status.
    #[serde(rename = "n")]
    pub tally: Tally,
    /// Its own pages (a `view` of this phase): the position of each page's
    /// first task and its number of tasks.
    #[serde(rename = "g")]
    pub pages: Vec<(i64, usize)>,
}

impl Shape {
    /// The shape of `list` whose rows have the keys `phase_keys` and
    /// `task_keys` (as in [`KeyedList`]).
    pub fn of(list: &TodoList, phase_keys: &[i64], task_keys: &[Vec<i64>]) -> Shape {
        let key = |(p, t): (usize, usize)| (phase_keys[p], task_keys[p][t]);
        Shape {
            floor: todo::whole_floor(list),
            phases: list
                .phases
                .iter()
                .enumerate()
                .map(|(p, phase)| PhaseShape {
                    key: phase_keys[p],
                    tally: Tally::of(&phase.tasks),
                    pages: todo::page_starts(list, Some(p))
                        .into_iter()
                        .map(|(start, n)| (key(start).1, n))
                        .collect(),
                })
                .collect(),
            pages: todo::page_starts(list, None)
                .into_iter()
                .map(|(start, n)| {
                    let (p, t) = key(start);
                    (p, t, n)
                })
                .collect(),
            team: list
                .tasks()
                .any(|(_, t)| t.agent.is_some() || t.after.is_some() || t.check.is_some()),
        }
    }

    /// The shape of a keyed list.
    pub(crate) fn of_keyed(keyed: &KeyedList) -> Shape {
        Shape::of(&keyed.list, &keyed.phase_keys, &keyed.task_keys)
    }

    /// The text kept in the session's row.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a shape serializes")
    }

    /// Every phase's tally, in order.
    pub(crate) fn tallies(&self) -> Vec<Tally> {
        self.phases.iter().map(|p| p.tally).collect()
    }

    /// The counts of the whole list.
    pub fn counts(&self) -> Counts {
        Tally::sum(&self.tallies()).counts()
    }
}

/// The session's list version and kept shape: `(0, None)` for a session
/// never written, `(v, None)` when the shape is not known.
pub(crate) fn load(tx: &Tx<'_>, session: &SessionId) -> Result<(i64, Option<Shape>)> {
    load_as(tx, session)
}

/// [`load`], read as `T`: the whole [`Shape`] or the part of it a read
/// needs.
fn load_as<T: serde::de::DeserializeOwned>(
    tx: &Tx<'_>,
    session: &SessionId,
) -> Result<(i64, Option<T>)> {
    let row = tx.query_opt(
        "SELECT todo_version, todo_shape FROM sessions WHERE id = ?1",
        params![session.as_str()],
        |r| Ok((r.get::<i64>(0)?, r.get::<Option<String>>(1)?)),
    )?;
    let Some((version, text)) = row else {
        return Ok((0, None));
    };
    let shape = match text {
        None => None,
        Some(text) => Some(
            serde_json::from_str(&text)
                .map_err(|e| corrupt_list(session, format!("its kept shape does not read: {e}")))?,
        ),
    };
    Ok((version, shape))
}

/// Writes `shape` as the session's kept shape (the row exists).
pub(crate) fn save(tx: &Tx<'_>, session: &SessionId, shape: &Shape) -> Result<()> {
    let text = (!shape.team).then(|| shape.to_json());
    tx.execute(
        "UPDATE sessions SET todo_shape = ?2 WHERE id = ?1",
        params![session.as_str(), text.as_deref()],
    )?;
    Ok(())
}

/// The session's list as a block bounded to `max_tasks` shows it: only
/// that part when the list is longer ([`context_part`]), else the whole
/// list.
pub(crate) fn listed(tx: &Tx<'_>, session: &SessionId, max_tasks: usize) -> Result<todo::Listed> {
    Ok(match context_part(tx, session, max_tasks)? {
        Ok(part) => todo::Listed::Part(part),
        Err(0) => todo::Listed::Whole(TodoList::default()),
        Err(_) => todo::Listed::Whole(super::rows::load(tx, session)?.list),
    })
}

/// The session's phase rows `(position, name)`, checked against the
/// phases of its kept shape.
pub(crate) fn phase_rows(
    tx: &Tx<'_>,
    session: &SessionId,
    shape: &Shape,
) -> Result<Vec<(i64, String)>> {
    phase_rows_of(tx, session, shape.phases.iter().map(|p| p.key))
}

/// [`phase_rows`], checked against the phase keys `keys` of a kept shape.
fn phase_rows_of(
    tx: &Tx<'_>,
    session: &SessionId,
    keys: impl ExactSizeIterator<Item = i64>,
) -> Result<Vec<(i64, String)>> {
    let phases = tx.query_all(
        "SELECT pos, name FROM phases WHERE session_id = ?1 ORDER BY pos",
        params![session.as_str()],
        |r| Ok((r.get::<i64>(0)?, r.get::<String>(1)?)),
    )?;
    if phases.len() != keys.len() || phases.iter().zip(keys).any(|((k, _), key)| *k != key) {
        return Err(corrupt_list(
            session,
            "its kept shape names other phases than its rows",
        ));
    }
    Ok(phases)
}
