//! Schema v4: lists as rows and undo as inverse patches, moved from the
//! JSON column and the lists v3's events kept.
//!
//! The step writes its rows with statements of its own, on the columns v4
//! created, and never through the store's row writers: those follow the
//! latest schema (later versions added columns to `tasks`), and this step
//! must write what it wrote when it shipped, whatever they become. The
//! undo steps it keeps are patches in the stored format every later build
//! reads back ([`Patch::to_json`]).

use rusqlite::{Transaction, params};

use crate::SessionId;
use crate::error::{Error, Result};
use crate::store::ddl::{self, Dialect};
use crate::store::patch::{KeyedList, Patch};
use crate::todo::{DroppedBy, TodoList};

/// How far back `todo undo` reached when v4 shipped, in versions: the
/// history kept for each list.
const UNDO_DEPTH: i64 = 200;

/// Lists as rows and undo as inverse patches, so that a mutation writes the
/// rows it changed and the database grows by a bounded amount per mutation
/// (DESIGN.md §7): each session's list moves from its JSON column into
/// `phases` and `tasks`; the states that events kept for undo become the
/// patches of the last versions that the new bound keeps
/// ([`UNDO_DEPTH`]); the list columns go.
pub(super) fn v4_tasks_as_rows(tx: &Transaction<'_>) -> Result<()> {
    tx.execute_batch(&Dialect::Sqlite.render(ddl::LISTS))?;
    let sessions = {
        let mut stmt = tx.prepare("SELECT id, todos, todo_version FROM sessions")?;
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
        rows.collect::<rusqlite::Result<Vec<(String, String, i64)>>>()?
    };
    for (id, todos, version) in sessions {
        let session = SessionId::parse(&id)?;
        let current = KeyedList::positional(parse_list(&todos, &session, version)?);
        write_rows(tx, &session, &current)?;
        migrate_history(tx, &session, current, version)?;
    }
    Ok(tx.execute_batch(
        "DROP INDEX events_by_version;
        ALTER TABLE events DROP COLUMN state;
        ALTER TABLE events DROP COLUMN undo_to;
        ALTER TABLE sessions DROP COLUMN todos;",
    )?)
}

/// Writes the rows of `keyed`, a list no row of the session holds yet.
fn write_rows(tx: &Transaction<'_>, session: &SessionId, keyed: &KeyedList) -> Result<()> {
    let s = session.as_str();
    let phases = keyed.list.phases.iter().zip(&keyed.phase_keys);
    for ((phase, &p), task_keys) in phases.zip(&keyed.task_keys) {
        tx.execute(
            "INSERT INTO phases (session_id, pos, name) VALUES (?1, ?2, ?3)",
            params![s, p, phase.name],
        )?;
        for (task, &k) in phase.tasks.iter().zip(task_keys) {
            let dropped_by = task.dropped_by.map(|DroppedBy::User| "user");
            tx.execute(
                "INSERT INTO tasks (session_id, phase_pos, pos, content, status, blocker, dropped_by)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                params![
                    s,
                    p,
                    k,
                    task.content,
                    task.status.as_str(),
                    task.blocker,
                    dropped_by
                ],
            )?;
        }
    }
    Ok(())
}

/// Keeps `patch` as the step that undoes `version` to `undo_to`.
fn record_step(
    tx: &Transaction<'_>,
    session: &SessionId,
    version: i64,
    undo_to: Option<i64>,
    patch: &Patch,
) -> Result<()> {
    tx.execute(
        "INSERT INTO todo_undo (session_id, version, undo_to, restores, patch)
         VALUES (?1, ?2, ?3, NULL, ?4)",
        params![session.as_str(), version, undo_to, patch.to_json()],
    )?;
    Ok(())
}

fn parse_list(json: &str, session: &SessionId, version: i64) -> Result<TodoList> {
    serde_json::from_str(json).map_err(|e| Error::Corrupt {
        what: format!("todo list of session {session} (version {version})"),
        why: e.to_string(),
    })
}

/// Turns the list states that v3 events kept into the undo steps of the
/// last versions the new bound keeps, newest first: the step of version
/// `v` is the patch from `v`'s rows to the list of `v - 1`.
fn migrate_history(
    tx: &Transaction<'_>,
    session: &SessionId,
    current: KeyedList,
    version: i64,
) -> Result<()> {
    let oldest = version - UNDO_DEPTH;
    let mut stmt = tx.prepare(
        "SELECT version, undo_to, state FROM events
         WHERE session_id = ?1 AND kind = 'todo' AND version IS NOT NULL AND version >= ?2
         ORDER BY version DESC",
    )?;
    let mut events = stmt.query(rusqlite::params![session.as_str(), oldest.max(0)])?;
    let mut keyed = current;
    let mut v = version;
    // The undo pointer of `v`, once its event has been read.
    let mut undo_to: Option<Option<i64>> = None;
    let step = |keyed: KeyedList, v: i64, undo_to: Option<i64>, before: TodoList| {
        let change = keyed.change_to(&before);
        record_step(tx, session, v, undo_to, &change.forward)?;
        Ok::<_, Error>(change.keyed(before))
    };
    while let Some(row) = events.next()? {
        let (w, pointer, state): (i64, Option<i64>, Option<String>) =
            (row.get(0)?, row.get(1)?, row.get(2)?);
        if w == v {
            undo_to = Some(pointer);
            continue;
        }
        let (Some(pointer_of_v), true, Some(state)) = (undo_to, w == v - 1, state) else {
            // A gap in the log: the history stops here.
            return Ok(());
        };
        keyed = step(keyed, v, pointer_of_v, parse_list(&state, session, w)?)?;
        v = w;
        undo_to = Some(pointer);
    }
    // Version 1 undoes to the empty list, which no event holds.
    if let (1, Some(pointer)) = (v, undo_to)
        && v > oldest
    {
        step(keyed, v, pointer, TodoList::default())?;
    }
    Ok(())
}
