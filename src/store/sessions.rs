//! Session rows: creation on first write, listing, removal.

use std::collections::HashMap;

use serde::Serialize;

use super::Admin;
use super::sql::{Tx, params};
use crate::SessionId;
use crate::error::{Error, Result};
use crate::todo::{Counts, TodoList};

/// A session as `session list` shows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SessionInfo {
    /// The id.
    pub id: String,
    /// First write, milliseconds since the epoch.
    pub created_ms: i64,
    /// Last write, milliseconds since the epoch.
    pub updated_ms: i64,
    /// The todo list's version.
    pub todo_version: i64,
    /// Counts over the todo list.
    pub todos: Counts,
    /// Entries in the event log.
    pub events: i64,
}

/// The stored todo state of a session.
pub(crate) struct TodoRow {
    pub list: TodoList,
    pub version: i64,
}

/// Reads a session's list; a session never written reads as empty, version 0.
pub(crate) fn load_todos(tx: &Tx<'_>, session: &SessionId) -> Result<TodoRow> {
    let version = todo_version(tx, session)?;
    let list = if version == 0 {
        TodoList::default()
    } else {
        super::rows::load(tx, session)?.list
    };
    Ok(TodoRow { list, version })
}

/// The version of a session's list (0 if the session was never written).
pub(crate) fn todo_version(tx: &Tx<'_>, session: &SessionId) -> Result<i64> {
    Ok(tx
        .query_opt(
            "SELECT todo_version FROM sessions WHERE id = ?1",
            params![session.as_str()],
            |r| r.get(0),
        )?
        .unwrap_or(0))
}

/// Records `version` as the session's list version (creating the session
/// row if needed) and bumps `updated_ms`; `clear_error` also drops a
/// pending todo-error reminder (a successful agent call). One statement.
pub(crate) fn save_todo_version(
    tx: &Tx<'_>,
    session: &SessionId,
    version: i64,
    clear_error: bool,
    now_ms: i64,
) -> Result<()> {
    let sql = if clear_error {
        "INSERT INTO sessions (id, created_ms, updated_ms, todo_version) VALUES (?1, ?2, ?2, ?3)
         ON CONFLICT(id) DO UPDATE SET updated_ms = excluded.updated_ms,
            todo_version = excluded.todo_version, todo_error = NULL"
    } else {
        "INSERT INTO sessions (id, created_ms, updated_ms, todo_version) VALUES (?1, ?2, ?2, ?3)
         ON CONFLICT(id) DO UPDATE SET updated_ms = excluded.updated_ms,
            todo_version = excluded.todo_version"
    };
    tx.execute(sql, params![session.as_str(), now_ms, version])?;
    Ok(())
}

/// Creates the session row if missing; bumps `updated_ms` either way.
pub(crate) fn touch(tx: &Tx<'_>, session: &SessionId, now_ms: i64) -> Result<()> {
    tx.execute(
        "INSERT INTO sessions (id, created_ms, updated_ms) VALUES (?1, ?2, ?2)
         ON CONFLICT(id) DO UPDATE SET updated_ms = excluded.updated_ms",
        params![session.as_str(), now_ms],
    )?;
    Ok(())
}

/// The runaway guard's state: idle continuations in a row and the progress
/// mark seen at the last continuation.
pub(crate) fn idle_state(tx: &Tx<'_>, session: &SessionId) -> Result<(u64, Option<String>)> {
    Ok(tx
        .query_opt(
            "SELECT idle_continuations, progress_mark FROM sessions WHERE id = ?1",
            params![session.as_str()],
            |r| Ok((r.get::<i64>(0)?.max(0) as u64, r.get(1)?)),
        )?
        .unwrap_or((0, None)))
}

pub(crate) fn set_idle_state(
    tx: &Tx<'_>,
    session: &SessionId,
    idle: u64,
    mark: Option<&str>,
) -> Result<()> {
    tx.execute(
        "UPDATE sessions SET idle_continuations = ?2, progress_mark = ?3 WHERE id = ?1",
        params![session.as_str(), idle as i64, mark],
    )?;
    Ok(())
}

/// A remembered per-session fact, if set.
pub(crate) fn mark(tx: &Tx<'_>, session: &SessionId, key: &str) -> Result<Option<String>> {
    tx.query_opt(
        "SELECT value FROM session_marks WHERE session_id = ?1 AND key = ?2",
        params![session.as_str(), key],
        |r| r.get(0),
    )
}

/// The remembered per-session facts whose keys start with `prefix`, by
/// key.
pub(crate) fn marks_with_prefix(
    tx: &Tx<'_>,
    session: &SessionId,
    prefix: &str,
) -> Result<Vec<(String, String)>> {
    tx.query_all(
        "SELECT key, value FROM session_marks
         WHERE session_id = ?1 AND substr(key, 1, length(?2)) = ?2 ORDER BY key",
        params![session.as_str(), prefix],
        |r| Ok((r.get::<String>(0)?, r.get::<String>(1)?)),
    )
}

/// Forgets a per-session fact; nothing when it was not remembered.
pub(crate) fn remove_mark(tx: &Tx<'_>, session: &SessionId, key: &str) -> Result<()> {
    tx.execute(
        "DELETE FROM session_marks WHERE session_id = ?1 AND key = ?2",
        params![session.as_str(), key],
    )?;
    Ok(())
}

/// Remembers a per-session fact (creating the session row if needed). A
/// fact that is already remembered as it is writes nothing, and does not
/// count as an update of the session: most hook events find their marks
/// as they left them, and then commit no page.
pub(crate) fn set_mark(
    tx: &Tx<'_>,
    session: &SessionId,
    key: &str,
    value: &str,
    now_ms: i64,
) -> Result<()> {
    if mark(tx, session, key)?.as_deref() == Some(value) {
        return Ok(());
    }
    touch(tx, session, now_ms)?;
    tx.execute(
        "INSERT INTO session_marks (session_id, key, value) VALUES (?1, ?2, ?3)
         ON CONFLICT(session_id, key) DO UPDATE SET value = excluded.value",
        params![session.as_str(), key, value],
    )?;
    Ok(())
}

impl Admin<'_> {
    /// Every session, most recently updated first.
    pub fn sessions(&self) -> Result<Vec<SessionInfo>> {
        self.read(|tx| session_rows(tx, None))
    }

    /// Deletes a session with its list and event log. Refused when the
    /// session does not exist.
    pub fn remove_session(&mut self, session: &SessionId) -> Result<()> {
        let tx = self.store.open_write(session)?.tx;
        let removed = tx.execute(
            "DELETE FROM sessions WHERE id = ?1",
            params![session.as_str()],
        )?;
        if removed == 0 {
            return Err(Error::NoSuchSession(session.clone()));
        }
        // The project directories that pointed to it now point nowhere.
        tx.execute(
            "DELETE FROM pointers WHERE value = ?1",
            params![session.as_str()],
        )?;
        tx.commit()?;
        Ok(())
    }
}

/// One session's row in `tx`, if it was ever written.
pub(super) fn session_info(tx: &Tx<'_>, session: &SessionId) -> Result<Option<SessionInfo>> {
    Ok(session_rows(tx, Some(session))?.pop())
}

fn session_rows(tx: &Tx<'_>, only: Option<&SessionId>) -> Result<Vec<SessionInfo>> {
    let only = only.map(SessionId::as_str);
    let mut counts: HashMap<String, Counts> = HashMap::new();
    // `CAST(?1 AS TEXT)`: PostgreSQL cannot infer the type of a
    // parameter that is only compared with NULL.
    let groups = tx.query_all(
        "SELECT session_id, status, count(*) FROM tasks
             WHERE CAST(?1 AS TEXT) IS NULL OR session_id = ?1 GROUP BY session_id, status",
        params![only],
        |r| Ok((r.get::<String>(0)?, r.get::<String>(1)?, r.get::<i64>(2)?)),
    )?;
    for (id, status, n) in groups {
        let counts = counts.entry(id).or_default();
        let n = n.max(0) as usize;
        counts.total += n;
        match status.as_str() {
            "completed" => {
                counts.closed += n;
                counts.completed += n;
            }
            "abandoned" => counts.closed += n,
            "blocked" => counts.blocked += n,
            _ => {}
        }
        counts.open = counts.total - counts.closed;
    }
    let mut sessions = tx.query_all(
        "SELECT s.id, s.created_ms, s.updated_ms, s.todo_version,
                    (SELECT count(*) FROM events e WHERE e.session_id = s.id)
             FROM sessions s WHERE CAST(?1 AS TEXT) IS NULL OR s.id = ?1
             ORDER BY s.updated_ms DESC, s.id",
        params![only],
        |r| {
            Ok(SessionInfo {
                id: r.get(0)?,
                created_ms: r.get(1)?,
                updated_ms: r.get(2)?,
                todo_version: r.get(3)?,
                todos: Counts::default(),
                events: r.get(4)?,
            })
        },
    )?;
    for info in &mut sessions {
        info.todos = counts.remove(&info.id).unwrap_or_default();
    }
    Ok(sessions)
}
