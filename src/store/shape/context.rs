//! The part of a list a bounded `<todo_context>` block shows, read from
//! the kept shape and the rows of the tasks it lists.

use serde::Deserialize;

use super::{load_as, phase_rows_of};
use crate::SessionId;
use crate::error::Result;
use crate::store::rows::{self, corrupt_list};
use crate::store::sql::{Tx, params};
use crate::todo::{self, Status, Tally};

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

pub(super) const SHOWN_ROWS: &str = "SELECT status, content FROM tasks
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
/// three statuses in SQL is an ephemeral index probed per row, and even
/// two cost more per row than skipping it), and the phases read are the ones with
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
            let status = rows::status_column(r, 0, session)?;
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
                        status,
                        ..todo::Task::pending(r.get::<String>(1)?)
                    },
                ));
            }
            Ok(ip_left || open_left > 0)
        },
    )?;
    Ok((wanted.0 && !ip_left, wanted.1 - open_left))
}
