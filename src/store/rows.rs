//! The statements behind a session's list and its undo history: the
//! `phases` and `tasks` rows, and the `todo_undo` steps. Plain SQL with
//! `?N` placeholders and no SQLite-only syntax, so a second backend can run
//! the same texts; the diff and the replay are in [`super::patch`].

use rusqlite::{OptionalExtension, Transaction, params};

use super::patch::{KeyedList, Patch, UndoStep};
use crate::SessionId;
use crate::error::{Error, Result};
use crate::todo::{DroppedBy, Status};

/// How far back `todo undo` reaches, in versions of the list: it restores
/// any of the last `UNDO_DEPTH` versions, and refuses an older one. The
/// undo steps of older versions are deleted as new versions are written.
/// Every undo is a version too, so a run of undos walks back
/// `UNDO_DEPTH / 2` changes.
pub const UNDO_DEPTH: i64 = 200;

/// `undo_to` of a version whose predecessor is older than the kept
/// history (it was restored by an undo after its own step was deleted).
pub(crate) const UNDO_TO_UNKNOWN: i64 = -1;

/// A session's list with the keys of its rows; empty when it has none.
pub(crate) fn load(tx: &Transaction<'_>, session: &SessionId) -> Result<KeyedList> {
    let corrupt = |why: String| Error::Corrupt {
        what: format!("todo list of session {session}"),
        why,
    };
    let phases = {
        let mut stmt =
            tx.prepare_cached("SELECT pos, name FROM phases WHERE session_id = ?1 ORDER BY pos")?;
        let rows = stmt.query_map([session.as_str()], |r| Ok((r.get(0)?, r.get(1)?)))?;
        rows.collect::<rusqlite::Result<Vec<(i64, String)>>>()?
    };
    let mut stmt = tx.prepare_cached(
        "SELECT phase_pos, pos, content, status, blocker, dropped_by FROM tasks
         WHERE session_id = ?1 ORDER BY phase_pos, pos",
    )?;
    let mut rows = stmt.query([session.as_str()])?;
    let mut tasks = Vec::new();
    while let Some(r) = rows.next()? {
        let status = r.get_ref(3)?.as_str().map_err(rusqlite::Error::from)?;
        let status = parse_status(status).ok_or_else(|| corrupt(format!("status {status:?}")))?;
        let dropped_by = match r
            .get_ref(5)?
            .as_str_or_null()
            .map_err(rusqlite::Error::from)?
        {
            None => None,
            Some("user") => Some(DroppedBy::User),
            Some(other) => return Err(corrupt(format!("dropped_by {other:?}"))),
        };
        tasks.push((
            r.get(0)?,
            r.get(1)?,
            r.get(2)?,
            status,
            r.get(4)?,
            dropped_by,
        ));
    }
    KeyedList::from_rows(phases, tasks).ok_or_else(|| corrupt("a task outside its phases".into()))
}

fn parse_status(text: &str) -> Option<Status> {
    Status::ALL.into_iter().find(|s| s.as_str() == text)
}

fn dropped(d: Option<DroppedBy>) -> Option<&'static str> {
    d.map(|DroppedBy::User| "user")
}

/// Writes `patch` to the session's rows.
pub(crate) fn write(tx: &Transaction<'_>, session: &SessionId, patch: &Patch) -> Result<()> {
    let s = session.as_str();
    if patch.clear {
        tx.prepare_cached("DELETE FROM tasks WHERE session_id = ?1")?
            .execute([s])?;
        tx.prepare_cached("DELETE FROM phases WHERE session_id = ?1")?
            .execute([s])?;
    }
    if !patch.phases_del.is_empty() {
        let mut stmt =
            tx.prepare_cached("DELETE FROM phases WHERE session_id = ?1 AND pos = ?2")?;
        for p in &patch.phases_del {
            stmt.execute(params![s, p])?;
        }
    }
    if !patch.tasks_del.is_empty() {
        let mut stmt = tx.prepare_cached(
            "DELETE FROM tasks WHERE session_id = ?1 AND phase_pos = ?2 AND pos = ?3",
        )?;
        for (p, k) in &patch.tasks_del {
            stmt.execute(params![s, p, k])?;
        }
    }
    if !patch.phases_put.is_empty() {
        let mut stmt =
            tx.prepare_cached("INSERT INTO phases (session_id, pos, name) VALUES (?1, ?2, ?3)")?;
        for (p, name) in &patch.phases_put {
            stmt.execute(params![s, p, name])?;
        }
    }
    if !patch.tasks_put.is_empty() {
        let mut stmt = tx.prepare_cached(
            "INSERT INTO tasks (session_id, phase_pos, pos, content, status, blocker, dropped_by)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        )?;
        for (p, k, content, status, blocker, dropped_by) in &patch.tasks_put {
            stmt.execute(params![
                s,
                p,
                k,
                content,
                status.as_str(),
                blocker,
                dropped(*dropped_by)
            ])?;
        }
    }
    if !patch.tasks_set.is_empty() {
        let mut stmt = tx.prepare_cached(
            "UPDATE tasks SET status = ?4, blocker = ?5, dropped_by = ?6
             WHERE session_id = ?1 AND phase_pos = ?2 AND pos = ?3",
        )?;
        for (p, k, status, blocker, dropped_by) in &patch.tasks_set {
            let changed = stmt.execute(params![
                s,
                p,
                k,
                status.as_str(),
                blocker,
                dropped(*dropped_by)
            ])?;
            if changed != 1 {
                return Err(Error::Corrupt {
                    what: format!("todo list of session {session}"),
                    why: format!("no task row ({p}, {k}) to update"),
                });
            }
        }
    }
    Ok(())
}

/// Where `todo undo` at `version` goes: `Ok(Some(t))` restores version
/// `t`, `Ok(None)` means the list is at its first state, and
/// `Err(UNDO_TO_UNKNOWN)`-like values are returned as `Some(-1)`. `None`
/// from the outer option: the version's step is no longer kept.
pub(crate) fn undo_to(
    tx: &Transaction<'_>,
    session: &SessionId,
    version: i64,
) -> Result<Option<Option<i64>>> {
    Ok(tx
        .prepare_cached("SELECT undo_to FROM todo_undo WHERE session_id = ?1 AND version = ?2")?
        .query_row(params![session.as_str(), version], |r| r.get(0))
        .optional()?)
}

/// The kept steps of the versions after `after` up to `upto`.
pub(crate) fn steps(
    tx: &Transaction<'_>,
    session: &SessionId,
    after: i64,
    upto: i64,
) -> Result<Vec<UndoStep>> {
    let mut stmt = tx.prepare_cached(
        "SELECT version, restores, patch FROM todo_undo
         WHERE session_id = ?1 AND version > ?2 AND version <= ?3",
    )?;
    let rows = stmt.query_map(params![session.as_str(), after, upto], |r| {
        Ok(UndoStep {
            version: r.get(0)?,
            restores: r.get(1)?,
            patch: r.get(2)?,
        })
    })?;
    Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
}

/// Keeps the step that undoes `version` and deletes the steps that fell
/// out of the kept history.
pub(crate) fn record_step(
    tx: &Transaction<'_>,
    session: &SessionId,
    version: i64,
    undo_to: Option<i64>,
    restores: Option<i64>,
    inverse: &Patch,
) -> Result<()> {
    tx.prepare_cached(
        "INSERT INTO todo_undo (session_id, version, undo_to, restores, patch)
         VALUES (?1, ?2, ?3, ?4, ?5)",
    )?
    .execute(params![
        session.as_str(),
        version,
        undo_to,
        restores,
        inverse.to_json()
    ])?;
    tx.prepare_cached("DELETE FROM todo_undo WHERE session_id = ?1 AND version <= ?2")?
        .execute(params![session.as_str(), version - UNDO_DEPTH])?;
    Ok(())
}
