//! One `view` page of a list, read from the kept shape and the rows of
//! the page it shows.

use super::{load, phase_rows};
use crate::SessionId;
use crate::error::Result;
use crate::store::rows::{self, corrupt_list};
use crate::store::sql::{Tx, params};
use crate::todo::{self, Tally};

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

pub(super) const PAGE_ROWS: &str = "SELECT phase_pos, content, status, blocker FROM tasks
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
        |r| rows::shown_task(r, session),
    )
}
