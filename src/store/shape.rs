//! What the store keeps about a list's shape, so that the reads that show
//! only part of a list read only that part (issue 14): the status line, a
//! `view` page, the bounded `<todo_context>`.
//!
//! The shape of a session's list is its phases' tallies (tasks by status),
//! the fewest bytes its whole summary takes, and where every `view` page
//! starts, of the whole list and of each phase: everything those reads
//! need besides the rows they show. It is JSON text in the session's row
//! (`sessions.todo_shape`, schema v5), written with the list's version by
//! every write of the list (a mutation, an import, an undo; the migration
//! to v5 computes it for the lists already stored), from the list the
//! write leaves, by the same functions the pure engine renders with.
//! `NULL` (a PostgreSQL database migrated from v4, until its next write)
//! means "not known": the reads then read the whole list, as before.
//!
//! Why a kept shape, and not counts in SQL: `GROUP BY status` over 1,000
//! rows cost about 2 M instructions (a sort), more than the rest of the
//! status line's process; a `view` page needs the byte size of every task
//! before it (pages are cut at [`PAGE_BYTES`](crate::todo::PAGE_BYTES)),
//! and its page count needs all of them, so even a narrow SQL read of
//! sizes and statuses steps through every row. A write already holds the
//! whole list in memory, so keeping the shape costs it one pass over that
//! list and a few hundred bytes more in the row it rewrites anyway.

use serde::{Deserialize, Serialize};

use super::patch::KeyedList;
use super::rows::corrupt_list;
use super::sql::{Tx, params};
use crate::SessionId;
use crate::error::Result;
use crate::todo::{self, Counts, Status, Tally, TodoList};

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
        }
    }

    /// The shape of a keyed list.
    pub fn of_keyed(keyed: &KeyedList) -> Shape {
        Shape::of(&keyed.list, &keyed.phase_keys, &keyed.task_keys)
    }

    /// The text kept in the session's row.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a shape serializes")
    }

    /// Every phase's tally, in order.
    pub fn tallies(&self) -> Vec<Tally> {
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

/// What a bounded `<todo_context>` needs of a kept shape: each phase's
/// row key and tally. Reading only these skips the pages' lists, which
/// are most of the text.
#[derive(Deserialize)]
struct Tallies {
    #[serde(rename = "p")]
    phases: Vec<PhaseTally>,
}

#[derive(Deserialize)]
struct PhaseTally {
    #[serde(rename = "k")]
    key: i64,
    #[serde(rename = "n")]
    tally: Tally,
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
    tx.execute(
        "UPDATE sessions SET todo_shape = ?2 WHERE id = ?1",
        params![session.as_str(), shape.to_json().as_str()],
    )?;
    Ok(())
}

/// The counts of the session's list, from its kept shape; counted in SQL
/// when the shape is not known.
pub(crate) fn counts(tx: &Tx<'_>, session: &SessionId) -> Result<Counts> {
    match load(tx, session)? {
        (0, _) => Ok(Counts::default()),
        (_, Some(shape)) => Ok(shape.counts()),
        (_, None) => super::rows::counts(tx, session),
    }
}

/// The text of `view` on the session's list read from its kept shape and
/// the rows of the one page it shows: what [`crate::todo::run`] prints for
/// that view on the whole list, byte for byte. `Err(version)` when the
/// kept shape cannot answer it alone: no shape, an empty list, a first page that may
/// fit the whole list, a phase or page that does not exist (its error
/// names the phases and pages); the caller then reads the whole list, at
/// the version returned.
pub(crate) fn view_page(
    tx: &Tx<'_>,
    session: &SessionId,
    view: &todo::ViewPage,
) -> Result<std::result::Result<String, i64>> {
    let (version, shape) = load(tx, session)?;
    let Some(shape) = shape else {
        return Ok(Err(version));
    };
    let tallies = shape.tallies();
    let total = Tally::sum(&tallies).counts().total;
    if total == 0 || (*view == todo::ViewPage::first() && shape.floor <= todo::PAGE_BYTES) {
        return Ok(Err(version));
    }
    let corrupt = |why: String| corrupt_list(session, why);
    let phases = phase_rows(tx, session, &shape)?;
    let names: Vec<&str> = phases.iter().map(|(_, name)| name.as_str()).collect();
    let phase = match &view.phase {
        None => None,
        Some(name) => match names.iter().position(|n| n == name) {
            Some(p) => Some(p),
            None => return Ok(Err(version)),
        },
    };
    // Each page as (phase position, position of its first task, tasks).
    let pages: Vec<(i64, i64, usize)> = match phase {
        Some(p) => {
            let key = shape.phases[p].key;
            shape.phases[p]
                .pages
                .iter()
                .map(|&(t, n)| (key, t, n))
                .collect()
        }
        None => shape.pages.clone(),
    };
    let count = pages.len().max(1);
    if view.page > count {
        return Ok(Err(version));
    }
    let index = view.page.clamp(1, count) - 1;
    let rows;
    let tasks = match pages.get(index) {
        None => None,
        Some(&(phase_key, task_key, n)) => {
            rows = page_rows(tx, session, phase_key, task_key, n)?;
            if rows.len() != n {
                return Err(corrupt(format!(
                    "its kept shape has {n} tasks on a page whose rows hold {}",
                    rows.len()
                )));
            }
            // The rows come in key order, and so do the phases.
            let mut tasks = Vec::with_capacity(n);
            let mut p = 0;
            for (key, task) in &rows {
                while shape.phases.get(p).is_some_and(|phase| phase.key < *key) {
                    p += 1;
                }
                if shape.phases.get(p).is_none_or(|phase| phase.key != *key) {
                    return Err(corrupt("a task outside its phases".into()));
                }
                tasks.push((p, task));
            }
            Some(todo::PageTasks {
                first: pages[..index].iter().map(|&(_, _, n)| n).sum(),
                total: match phase {
                    Some(p) => tallies[p].counts().total,
                    None => total,
                },
                tasks,
            })
        }
    };
    let parts = todo::PageParts {
        names: &names,
        tallies: &tallies,
        phase,
        count,
        index,
        tasks,
    };
    Ok(Ok(todo::render_page(&[], &parts, view)))
}

/// What a `<todo_context>` block bounded to `max_tasks` shows of the
/// session's list, read from its kept shape and the rows of the tasks it
/// lists: [`todo::ListPart::of`] of the whole list. `Err(version)` when
/// the block is not bounded (it lists every task) or the shape is not
/// known; the caller then reads the whole list, at that version.
///
/// The listed tasks are the first `in_progress` task (in the one phase
/// the shape says has it) and the earliest open ones (in the phases from
/// the first with an open task to the one where enough of them are
/// counted): the rows read are those phases', not the list's, by one
/// statement ([`shown_rows`]) that stops at the last task listed; it
/// runs a second time, over its one phase, for a task in progress outside
/// those phases.
pub(crate) fn context_part(
    tx: &Tx<'_>,
    session: &SessionId,
    max_tasks: usize,
) -> Result<std::result::Result<todo::ListPart, i64>> {
    let (version, shape) = load_as::<Tallies>(tx, session)?;
    let Some(shape) = shape else {
        return Ok(Err(version));
    };
    let tallies: Vec<Tally> = shape.phases.iter().map(|p| p.tally).collect();
    if !todo::bounded(Tally::sum(&tallies).counts().total, max_tasks) {
        return Ok(Err(version));
    }
    let corrupt = |why: String| corrupt_list(session, why);
    let phases = phase_rows_of(tx, session, shape.phases.iter().map(|p| p.key))?;
    // The open tasks that are not in progress, by phase.
    let open = |t: &Tally| t.get(Status::Pending) + t.get(Status::Blocked);
    let ip = |t: &Tally| t.get(Status::InProgress);
    let in_progress = tallies.iter().position(|t| ip(t) > 0);
    let wanted = max_tasks.saturating_sub(usize::from(in_progress.is_some()));
    // The phases from the first with an open task to the one where
    // `wanted` of them are counted, and how many that is.
    let mut opens = None;
    if let (Some(first), true) = (tallies.iter().position(|t| open(t) > 0), wanted > 0) {
        let (mut last, mut counted) = (first, 0);
        for (p, tally) in tallies.iter().enumerate().skip(first) {
            if open(tally) > 0 {
                last = p;
                counted += open(tally);
            }
            if counted >= wanted {
                break;
            }
        }
        opens = Some((first, last, wanted.min(counted)));
    }
    // The runs of the statement, in key order: phases `lo..=hi`, whether
    // to look for the task in progress there, how many open tasks.
    let runs = match (in_progress, opens) {
        (None, None) => [None, None],
        (Some(p), None) => [Some((p, p, true, 0)), None],
        (None, Some((first, last, n))) => [Some((first, last, false, n)), None],
        (Some(p), Some((first, last, n))) if (first..=last).contains(&p) => {
            [Some((first, last, true, n)), None]
        }
        (Some(p), Some((first, last, n))) if p < first => {
            [Some((p, p, true, 0)), Some((first, last, false, n))]
        }
        (Some(p), Some((first, last, n))) => [Some((first, last, false, n)), Some((p, p, true, 0))],
    };
    let mut shown = Vec::with_capacity(max_tasks);
    let (mut found_ip, mut open_read) = (false, 0);
    for (lo, hi, with_ip, n) in runs.into_iter().flatten() {
        let run = Run {
            first: lo,
            keys: (shape.phases[lo].key, shape.phases[hi].key),
            totals: tallies[lo..=hi].iter().map(|t| t.counts().total).collect(),
        };
        let (ip, open) = shown_rows(tx, session, &run, (with_ip, n), &mut shown)?;
        found_ip |= ip;
        open_read += open;
    }
    if in_progress.is_some() && !found_ip {
        return Err(corrupt(
            "its kept shape counts a task in progress that its rows do not hold".into(),
        ));
    }
    let open_wanted = opens.map_or(0, |(_, _, n)| n);
    if open_read != open_wanted {
        return Err(corrupt(format!(
            "its kept shape counts {open_wanted} open tasks where its rows hold {open_read}"
        )));
    }
    let mut part = todo::ListPart {
        max_tasks,
        phases: phases
            .into_iter()
            .zip(&tallies)
            .map(|((_, name), tally)| todo::PartPhase {
                name,
                counts: tally.counts(),
                tasks: Vec::new(),
            })
            .collect(),
    };
    for (p, task) in shown {
        part.phases[p].tasks.push(task);
    }
    Ok(Ok(part))
}

/// Phases read by one run of [`shown_rows`]: the position of the first in
/// the list, the row keys of the first and the last, and how many tasks
/// each has (from the kept shape).
struct Run {
    first: usize,
    keys: (i64, i64),
    totals: Vec<usize>,
}

const SHOWN_ROWS: &str = "SELECT status, content FROM tasks
    WHERE session_id = ?1 AND phase_pos >= ?2 AND phase_pos <= ?3
    ORDER BY phase_pos, pos LIMIT ?4";

/// Appends to `shown` the session's tasks in the phases of `run` that a
/// bounded block lists, as `(phase position, task)` in key order: the
/// first `in_progress` one if `wanted.0`, and the first `wanted.1`
/// pending or blocked ones; returns whether it found the one in progress,
/// and how many open ones. The tasks of those phases bound the
/// statement; SQLite steps no further than the last task listed, and a
/// row not listed is looked at only for its status.
///
/// The statement does not filter by status: a row costs less read and
/// skipped here than a status test in SQL costs every row (a list of
/// three statuses in SQL is an ephemeral index probed per row, two cost
/// about 250 instructions a row), and the phases read are the ones with
/// the tasks listed, so what it skips is the closed tasks among them.
/// Nor does it read a row's phase: the rows come in key order, every row
/// of each phase, and the shape says how many each has (it is written
/// with the rows, and a row written any other way forgets it).
fn shown_rows(
    tx: &Tx<'_>,
    session: &SessionId,
    run: &Run,
    wanted: (bool, usize),
    shown: &mut Vec<(usize, todo::Task)>,
) -> Result<(bool, usize)> {
    let rows: usize = run.totals.iter().sum();
    let limit = i64::try_from(rows).unwrap_or(i64::MAX);
    let (mut ip_left, mut open_left) = wanted;
    // The phase of the next row, and how many rows of it are still to come.
    let (mut p, mut left) = (0, run.totals[0]);
    tx.query_each(
        SHOWN_ROWS,
        params![session.as_str(), run.keys.0, run.keys.1, limit],
        |r| {
            while left == 0 {
                // The limit keeps the rows within the phases of the run.
                p += 1;
                left = run.totals[p];
            }
            left -= 1;
            let status = super::rows::status_column(r, 0, session)?;
            let listed = match status {
                Status::InProgress => std::mem::take(&mut ip_left),
                Status::Pending | Status::Blocked if open_left > 0 => {
                    open_left -= 1;
                    true
                }
                _ => false,
            };
            if listed {
                shown.push((
                    run.first + p,
                    todo::Task {
                        content: r.get::<String>(1)?,
                        status,
                        blocker: None,
                        dropped_by: None,
                    },
                ));
            }
            Ok(ip_left || open_left > 0)
        },
    )?;
    Ok((wanted.0 && !ip_left, wanted.1 - open_left))
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

const PAGE_ROWS: &str = "SELECT phase_pos, content, status, blocker FROM tasks
    WHERE session_id = ?1 AND (phase_pos, pos) >= (?2, ?3)
    ORDER BY phase_pos, pos LIMIT ?4";

/// The `n` tasks from key `(phase_key, task_key)` on, in key order, with
/// their phase positions.
fn page_rows(
    tx: &Tx<'_>,
    session: &SessionId,
    phase_key: i64,
    task_key: i64,
    n: usize,
) -> Result<Vec<(i64, todo::Task)>> {
    let limit = i64::try_from(n).unwrap_or(i64::MAX);
    tx.query_all(
        PAGE_ROWS,
        params![session.as_str(), phase_key, task_key, limit],
        |r| super::rows::shown_task(r, session),
    )
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::Store;
    use crate::todo::{Actor, Call, Op, Phase, Status, Task, ViewPage};

    fn session() -> SessionId {
        SessionId::parse("s").unwrap()
    }

    /// A task text that is unique (its index), trimmed, and `pad` long
    /// beyond that, in characters of one to three bytes and line breaks.
    fn content(i: usize, pad: &[u8]) -> String {
        let mut text = format!("t{i}");
        for &b in pad {
            text.push(match b % 6 {
                0 => 'a',
                1 => ' ',
                2 => 'é',
                3 => '—',
                4 => '\n',
                _ => 'z',
            });
        }
        text.push('x');
        text
    }

    fn status() -> impl Strategy<Value = Status> {
        prop::sample::select(Status::ALL.to_vec())
    }

    /// Random lists: up to 6 phases (some empty) of up to 120 tasks, task
    /// texts from 3 to about 300 characters, every status, blockers with
    /// and without notes.
    fn list() -> impl Strategy<Value = TodoList> {
        let task = (
            status(),
            prop::collection::vec(any::<u8>(), 0..300),
            any::<bool>(),
        );
        let phase = prop::collection::vec(task, 0..120);
        prop::collection::vec(phase, 0..6).prop_map(|phases| {
            let mut n = 0;
            TodoList::new(
                phases
                    .into_iter()
                    .enumerate()
                    .map(|(p, tasks)| Phase {
                        name: format!("Phase {p}: {}", "ph\nase é ".repeat(p % 3))
                            .trim()
                            .to_owned(),
                        tasks: tasks
                            .into_iter()
                            .map(|(status, pad, note)| {
                                n += 1;
                                let mut task = Task::pending(content(n, &pad));
                                task.set_status(status);
                                if status == Status::Blocked && note {
                                    task.blocker = Some(format!("waits for review {n} <é>"));
                                }
                                task
                            })
                            .collect(),
                    })
                    .collect(),
            )
        })
    }

    fn views() -> impl Strategy<Value = Vec<ViewPage>> {
        let phase = prop_oneof![
            3 => Just(None),
            3 => (0usize..6).prop_map(Some),
            1 => Just(Some(99)),
        ];
        prop::collection::vec((phase, 0usize..14), 1..8).prop_map(|views| {
            views
                .into_iter()
                .map(|(phase, page)| ViewPage {
                    phase: phase.map(|p| {
                        if p == 99 {
                            "No such phase".to_owned()
                        } else {
                            format!("Phase {p}: {}", "ph\nase é ".repeat(p % 3))
                                .trim()
                                .to_owned()
                        }
                    }),
                    page,
                })
                .collect()
        })
    }

    /// The kept shape is the shape of the rows.
    fn check_kept(store: &Store, s: &SessionId, context: &str) -> Result<(), TestCaseError> {
        let (version, kept, keyed) = store
            .in_read_tx(|tx| {
                let (version, kept) = load(tx, s)?;
                Ok((version, kept, super::super::rows::load(tx, s)?))
            })
            .unwrap();
        if version > 0 {
            prop_assert_eq!(kept, Some(Shape::of_keyed(&keyed)), "{}", context);
        } else {
            prop_assert_eq!(kept, None, "{}", context);
        }
        Ok(())
    }

    /// Every view, read narrowly, is the pure engine's view of the whole
    /// list; returns how many were answered from the kept shape alone.
    fn check_views(
        store: &Store,
        s: &SessionId,
        views: &[ViewPage],
        context: &str,
    ) -> Result<usize, TestCaseError> {
        let (list, version) = store.todo_list(s).unwrap();
        let mut narrow = 0;
        for view in views {
            let op = Op::View(view.clone());
            let expected = todo::run(list.clone(), Call::Op(&op), Actor::User).into_result(version);
            let got = store.todo_view(s, view).unwrap();
            prop_assert_eq!(&got.0, expected.text(), "{} {:?}", context, view);
            prop_assert_eq!(got.1, expected.is_error, "{} {:?}", context, view);
            if let Ok(text) = store.in_read_tx(|tx| view_page(tx, s, view)).unwrap() {
                prop_assert_eq!(&text, expected.text(), "{} {:?}", context, view);
                prop_assert!(!expected.is_error, "{} {:?}", context, view);
                narrow += 1;
            }
        }
        // The part of the list a bounded `<todo_context>` shows.
        for max in [1, 2, 7, 50, 200] {
            let expected = match todo::ListPart::of(&list, max) {
                Some(part) => todo::Listed::Part(part),
                None => todo::Listed::Whole(list.clone()),
            };
            prop_assert_eq!(
                store.todo_listed(s, max).unwrap(),
                expected,
                "{} max_tasks {}",
                context,
                max
            );
        }
        Ok(narrow)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// A `view` read from the kept shape and one page's rows prints
        /// what the pure engine prints from the whole list, for every
        /// page of the list and of each phase, out-of-range pages and
        /// unknown phases included.
        #[test]
        fn a_view_read_narrowly_is_the_view_of_the_whole_list(list in list(), views in views()) {
            let mut store = Store::open_in_memory().unwrap();
            let s = session();
            check_views(&store, &s, &views, "before any write")?;
            store.todo_import(&s, list, "test", 1).unwrap();
            check_kept(&store, &s, "after the import")?;
            check_views(&store, &s, &views, "after the import")?;
        }

        /// Whatever writes the list (an agent's or a user's call,
        /// accepted or refused, an undo, an import), the kept shape is the
        /// shape of its rows, and the views read with it are right.
        #[test]
        fn the_kept_shape_follows_every_write(
            first in list(),
            steps in prop::collection::vec((0u8..12, any::<prop::sample::Index>(), any::<bool>(), list()), 1..12),
            views in views(),
        ) {
            let mut store = Store::open_in_memory().unwrap();
            let s = session();
            store.todo_import(&s, first, "test", 1).unwrap();
            for (i, (kind, pick, agent, other)) in steps.into_iter().enumerate() {
                let (list, _) = store.todo_list(&s).unwrap();
                let tasks: Vec<&Task> = list.tasks().map(|(_, t)| t).collect();
                let task = if tasks.is_empty() {
                    "none".to_owned()
                } else {
                    tasks[pick.index(tasks.len())].content.clone()
                };
                let phase = if list.phases.is_empty() {
                    "none".to_owned()
                } else {
                    list.phases[pick.index(list.phases.len())].name.clone()
                };
                let call = match kind {
                    0 => serde_json::json!({"op": "start", "task": task}),
                    1 => serde_json::json!({"op": "done", "task": task}),
                    2 => serde_json::json!({"op": "drop", "task": task}),
                    3 => serde_json::json!({"op": "rm", "task": task}),
                    4 => serde_json::json!({"op": "block", "task": task, "reason": "needs a key"}),
                    5 => serde_json::json!({"op": "unblock", "task": task}),
                    6 => serde_json::json!({"op": "append", "phase": phase, "items": [format!("new {i}"), task]}),
                    7 => serde_json::json!({"op": "done", "phase": phase}),
                    8 => serde_json::json!({"op": "init", "items": [format!("only {i}")]}),
                    _ => serde_json::Value::Null,
                };
                let context = format!("step {i}: {call}");
                match kind {
                    9 => drop(store.todo_undo(&s, 2)),
                    10 => {
                        store.todo_import(&s, other, "test", 2).unwrap();
                    }
                    11 => drop(store.todo_undo(&s, 2).and_then(|_| store.todo_undo(&s, 2))),
                    _ => {
                        let actor = if agent { Actor::Agent } else { Actor::User };
                        store.todo(&s, Call::Value(&call), actor, 2).unwrap();
                    }
                }
                check_kept(&store, &s, &context)?;
                let (list, _) = store.todo_list(&s).unwrap();
                prop_assert_eq!(store.status(&s).unwrap().1, list.counts(), "{}", context);
                check_views(&store, &s, &views, &context)?;
            }
        }
    }

    /// Stores `list` and checks that the part of it read narrowly for every
    /// bound in `maxes` is [`todo::ListPart::of`] the list stored (or the
    /// whole list); returns the list stored.
    fn check_parts(list: TodoList, maxes: impl Iterator<Item = usize>, context: &str) -> TodoList {
        let mut store = Store::open_in_memory().unwrap();
        let s = session();
        store.todo_import(&s, list, "test", 1).unwrap();
        let (list, _) = store.todo_list(&s).unwrap();
        for max in maxes {
            let expected = match todo::ListPart::of(&list, max) {
                Some(part) => todo::Listed::Part(part),
                None => todo::Listed::Whole(list.clone()),
            };
            let got = store.todo_listed(&s, max).unwrap();
            assert_eq!(got, expected, "{context}, max_tasks {max}");
        }
        list
    }

    /// A list of phases of tasks `task 0`, `task 1`, … with these statuses.
    fn list_of(statuses: &[Vec<Status>]) -> TodoList {
        let mut n = 0;
        TodoList::new(
            statuses
                .iter()
                .enumerate()
                .map(|(p, tasks)| Phase {
                    name: format!("Phase {p}"),
                    tasks: tasks
                        .iter()
                        .map(|&status| {
                            let mut task = Task::pending(format!("task {n}"));
                            task.set_status(status);
                            if status == Status::Blocked {
                                task.blocker = Some(format!("waits for {n}"));
                            }
                            n += 1;
                            task
                        })
                        .collect(),
                })
                .collect(),
        )
    }

    /// The task in progress is found wherever it is: in a phase before the
    /// first open task, among the open tasks a block lists or after the
    /// last of them in the same phase, in a phase after the last one read
    /// for them (a second run of the statement), alone; and lists with
    /// none (every open task blocked, every task closed). With closed,
    /// blocked and empty phases around it, for every bound.
    #[test]
    fn the_task_in_progress_is_read_wherever_it_is() {
        use Status::{Abandoned, Blocked, Completed, InProgress, Pending};
        // Phase 0 closed, phase 1 empty, then open tasks with closed and
        // blocked ones among them.
        let statuses = vec![
            vec![Completed, Abandoned, Completed],
            vec![],
            vec![Pending, Completed, Blocked, Pending],
            vec![Abandoned, Pending, Pending],
            vec![Pending, Completed, Pending],
        ];
        let total: usize = statuses.iter().map(Vec::len).sum();
        for at in 0..total {
            let mut placed = statuses.clone();
            let (p, t) = (0..placed.len())
                .flat_map(|p| (0..placed[p].len()).map(move |t| (p, t)))
                .nth(at)
                .unwrap();
            placed[p][t] = InProgress;
            let list = check_parts(
                list_of(&placed),
                1..total + 1,
                &format!("task {at} in progress"),
            );
            assert_eq!(
                list.in_progress().map(|(_, t)| t.content.as_str()),
                Some(format!("task {at}").as_str())
            );
        }
        // Every open task blocked: none in progress.
        let blocked: Vec<Vec<Status>> = statuses
            .iter()
            .map(|p| {
                p.iter()
                    .map(|&s| if s == Pending { Blocked } else { s })
                    .collect()
            })
            .collect();
        let list = check_parts(list_of(&blocked), 1..total + 1, "every open task blocked");
        assert!(list.in_progress().is_none());
        // The one open task in progress, the others closed.
        let one = vec![vec![Completed; 3], vec![Abandoned, InProgress, Completed]];
        check_parts(list_of(&one), 1..6, "one open task");
        // Every task closed: none listed.
        let closed = vec![vec![Completed; 3], vec![Abandoned, Completed]];
        check_parts(list_of(&closed), 1..5, "every task closed");
    }

    /// The narrow reads bind their `LIMIT`, which, without the query
    /// planner's stability guarantee that opening a store turns on, makes
    /// SQLite prepare each of them a second time at its first step.
    #[test]
    fn a_bound_limit_does_not_prepare_a_narrow_read_twice() {
        let mut store = Store::open_in_memory().unwrap();
        let s = session();
        let statuses = vec![vec![Status::Pending; 150], vec![Status::Pending; 150]];
        store
            .todo_import(&s, list_of(&statuses), "test", 1)
            .unwrap();
        let part = store.todo_listed(&s, 10).unwrap();
        assert!(matches!(part, todo::Listed::Part(_)));
        let page = ViewPage {
            phase: None,
            page: 2,
        };
        store
            .in_read_tx(|tx| view_page(tx, &s, &page))
            .unwrap()
            .expect("read narrowly");
        let super::super::Backend::Sqlite(file) = &store.backend else {
            unreachable!("an in-memory store is SQLite")
        };
        for sql in [SHOWN_ROWS, PAGE_ROWS] {
            let stmt = file.conn.prepare_cached(sql).unwrap();
            assert_eq!(
                stmt.get_status(rusqlite::StatementStatus::RePrepare),
                0,
                "{sql}"
            );
        }
    }

    /// A list the size of the benchmarks' is read narrowly: its first page,
    /// a later one, a phase's page.
    #[test]
    fn a_long_list_is_viewed_from_its_shape() {
        let mut store = Store::open_in_memory().unwrap();
        let s = session();
        let list = TodoList::new(
            (0..10)
                .map(|p| Phase {
                    name: format!("Phase {p}"),
                    tasks: (0..100)
                        .map(|t| {
                            let mut task = Task::pending(content(
                                p * 100 + t,
                                b"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
                            ));
                            if p < 4 {
                                task.set_status(Status::Completed);
                            }
                            task
                        })
                        .collect(),
                })
                .collect(),
        );
        store.todo_import(&s, list, "test", 1).unwrap();
        let views = [
            ViewPage::first(),
            ViewPage {
                phase: None,
                page: 7,
            },
            ViewPage {
                phase: Some("Phase 3".into()),
                page: 1,
            },
        ];
        let narrow = check_views(&store, &s, &views, "1,000 tasks").unwrap();
        assert_eq!(narrow, 3);
        let (text, _) = store.todo_view(&s, &ViewPage::first()).unwrap();
        assert!(text.starts_with("Overall: 400/1000 done, 600 open.\nActive phase 5/10 \"Phase 4\" (0/100 done).\nPage 1/"), "{text}");
    }
}

#[cfg(test)]
mod outside_writes {
    use super::*;
    use crate::Store;
    use crate::todo::{Actor, Call, ViewPage};

    /// A store in a file with session `s` holding [`long_init`]'s list;
    /// the directory goes when the first value is dropped.
    fn long_store() -> (tempfile::TempDir, std::path::PathBuf, Store, SessionId) {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("g.db");
        let mut store = Store::open(&db).unwrap();
        let s = SessionId::parse("s").unwrap();
        store
            .todo(&s, Call::Json(&long_init()), Actor::Agent, 1)
            .unwrap();
        (dir, db, store, s)
    }

    fn long_init() -> String {
        let items: Vec<String> = (0..300)
            .map(|i| format!("task {i:03} with a text long enough to fill pages"))
            .collect();
        serde_json::json!({"op": "init", "list": [{"phase": "A", "items": items}]}).to_string()
    }

    /// A row written from outside the store (a hand edit) leaves the
    /// session without a kept shape: its reads read the rows, and see the
    /// edit, until the store writes the list again.
    #[test]
    fn a_row_written_from_outside_forgets_the_shape() {
        let (_dir, db, mut store, s) = long_store();
        let kept = |store: &Store| store.in_read_tx(|tx| load(tx, &s)).unwrap().1;
        assert!(kept(&store).is_some());
        rusqlite::Connection::open(&db)
            .unwrap()
            .execute("UPDATE tasks SET status = 'completed' WHERE pos < 5", [])
            .unwrap();
        assert_eq!(kept(&store), None);
        assert_eq!(store.status(&s).unwrap().1.closed, 5);
        let page = ViewPage {
            phase: None,
            page: 2,
        };
        let (text, _) = store.todo_view(&s, &page).unwrap();
        assert!(text.starts_with("Overall: 5/300 done, 295 open."), "{text}");
        store
            .todo(
                &s,
                Call::Json(
                    r#"{"op":"done","task":"task 005 with a text long enough to fill pages"}"#,
                ),
                Actor::Agent,
                2,
            )
            .unwrap();
        let shape = kept(&store).expect("written again");
        assert_eq!(shape.counts().closed, 6);
    }

    /// A phase row added from outside does not fit the kept shape (phase
    /// rows have no trigger): the narrow reads refuse, naming the problem,
    /// rather than show a list that is not there.
    #[test]
    fn a_phase_written_from_outside_is_refused_not_shown() {
        let (_dir, db, store, s) = long_store();
        rusqlite::Connection::open(&db)
            .unwrap()
            .execute(
                "INSERT INTO phases (session_id, pos, name) VALUES ('s', 7, 'Z')",
                [],
            )
            .unwrap();
        let page = ViewPage {
            phase: None,
            page: 2,
        };
        let err = store.todo_view(&s, &page).unwrap_err().to_string();
        assert!(
            err.contains("todo list of session s")
                && err.contains("its kept shape names other phases than its rows"),
            "{err}"
        );
        let err = store.todo_listed(&s, 10).unwrap_err().to_string();
        assert!(err.contains("its kept shape names other phases"), "{err}");
    }

    /// The migration to v5 computes the shape of every list already stored.
    #[test]
    fn the_migration_keeps_the_shape_of_every_stored_list() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("g.db");
        let s = SessionId::parse("s").unwrap();
        let expected = {
            let mut store = Store::open(&db).unwrap();
            store
                .todo(&s, Call::Json(&long_init()), Actor::Agent, 1)
                .unwrap();
            store.todo(&s, Call::Json(r#"{"op":"block","task":"task 007 with a text long enough to fill pages","reason":"a key"}"#), Actor::Agent, 2).unwrap();
            store.in_read_tx(|tx| load(tx, &s)).unwrap()
        };
        assert!(expected.1.is_some());
        {
            // Back to schema v4, as an older goalkeeper left it.
            let conn = rusqlite::Connection::open(&db).unwrap();
            for event in ["insert", "update", "delete"] {
                conn.execute_batch(&format!("DROP TRIGGER tasks_{event}_forget_shape"))
                    .unwrap();
            }
            conn.execute_batch(
                "ALTER TABLE sessions DROP COLUMN todo_shape; PRAGMA user_version = 4;",
            )
            .unwrap();
        }
        let store = Store::open(&db).unwrap();
        assert_eq!(store.in_read_tx(|tx| load(tx, &s)).unwrap(), expected);
    }

    /// A copy of the database (a migration, a backup) keeps every shape.
    #[test]
    fn a_copy_keeps_the_shapes() {
        let mut store = Store::open_in_memory().unwrap();
        let s = SessionId::parse("s").unwrap();
        store
            .todo(&s, Call::Json(&long_init()), Actor::Agent, 1)
            .unwrap();
        let mut target = Store::open_in_memory().unwrap();
        store.copy_into(&mut target).unwrap();
        let of = |store: &Store| store.in_read_tx(|tx| load(tx, &s)).unwrap();
        assert!(of(&target).1.is_some());
        assert_eq!(of(&target), of(&store));
    }
}
