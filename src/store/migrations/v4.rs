//! Schema v4: lists as rows and undo as inverse patches, moved from the
//! JSON column and the lists v3's events kept.

use rusqlite::Transaction;

use crate::SessionId;
use crate::error::{Error, Result};
use crate::store::patch::KeyedList;
use crate::store::rows;
use crate::store::sql::Tx;
use crate::todo::TodoList;

/// Lists as rows and undo as inverse patches, so that a mutation writes the
/// rows it changed and the database grows by a bounded amount per mutation
/// (DESIGN.md §7): each session's list moves from its JSON column into
/// `phases` and `tasks`; the states that events kept for undo become the
/// patches of the last versions that the new bound keeps
/// ([`rows::UNDO_DEPTH`]); the list columns go.
pub(super) fn v4_tasks_as_rows(tx: &Transaction<'_>) -> Result<()> {
    tx.execute_batch(
        "CREATE TABLE phases (
            session_id  TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            pos         INTEGER NOT NULL,
            name        TEXT NOT NULL,
            PRIMARY KEY (session_id, pos)
        ) STRICT, WITHOUT ROWID;
        CREATE TABLE tasks (
            session_id  TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            phase_pos   INTEGER NOT NULL,
            pos         INTEGER NOT NULL,
            content     TEXT NOT NULL,
            status      TEXT NOT NULL,
            blocker     TEXT,
            dropped_by  TEXT,
            agent       TEXT,
            since_ms    INTEGER,
            after_task  TEXT,
            check_cmd   TEXT,
            PRIMARY KEY (session_id, phase_pos, pos)
        ) STRICT, WITHOUT ROWID;
        CREATE TABLE todo_undo (
            session_id  TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            version     INTEGER NOT NULL,
            undo_to     INTEGER,
            restores    INTEGER,
            patch       TEXT NOT NULL,
            PRIMARY KEY (session_id, version)
        ) STRICT;",
    )?;
    let sessions = {
        let mut stmt = tx.prepare("SELECT id, todos, todo_version FROM sessions")?;
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
        rows.collect::<rusqlite::Result<Vec<(String, String, i64)>>>()?
    };
    for (id, todos, version) in sessions {
        let session = SessionId::parse(&id)?;
        let current = KeyedList::positional(parse_list(&todos, &session, version)?);
        rows::write(&Tx::SqliteIn(tx), &session, &current.rebuild())?;
        migrate_history(tx, &session, current, version)?;
    }
    Ok(tx.execute_batch(
        "DROP INDEX events_by_version;
        ALTER TABLE events DROP COLUMN state;
        ALTER TABLE events DROP COLUMN undo_to;
        ALTER TABLE sessions DROP COLUMN todos;",
    )?)
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
    let oldest = version - rows::UNDO_DEPTH;
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
        rows::record_step(
            &Tx::SqliteIn(tx),
            session,
            v,
            undo_to,
            None,
            &change.forward,
        )?;
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
