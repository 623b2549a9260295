//! The statements behind a session's list and its undo history: the
//! `phases` and `tasks` rows, and the `todo_undo` steps. Plain SQL with
//! `?N` placeholders and no SQLite-only syntax, so a second backend can run
//! the same texts; the diff and the replay are in [`super::patch`].

use super::patch::{Fields, KeyedList, Patch, TaskRow, UndoStep};
use super::sql::{Row, Tx, params};
use crate::SessionId;
use crate::error::{Error, Result};
use crate::todo::{Counts, DroppedBy, Status, Task};

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
pub(crate) fn load(tx: &Tx<'_>, session: &SessionId) -> Result<KeyedList> {
    let corrupt = |why: String| corrupt_list(session, why);
    let phases = tx.query_all(
        "SELECT pos, name FROM phases WHERE session_id = ?1 ORDER BY pos",
        params![session.as_str()],
        |r| Ok((r.get::<i64>(0)?, r.get::<String>(1)?)),
    )?;
    // Each row becomes a task as it is read, the status and the dropped
    // mark looked at in place: one allocation per task (its text), which
    // is most of what a command on a long list costs.
    let tasks = tx.query_all(
        "SELECT phase_pos, pos, content, status, blocker, dropped_by, agent, since_ms, after_task,
                check_cmd
         FROM tasks WHERE session_id = ?1 ORDER BY phase_pos, pos",
        params![session.as_str()],
        |r| {
            let status = status_column(r, 3, session)?;
            let dropped_by = dropped_column(r, 5, session)?;
            Ok(TaskRow {
                key: (r.get::<i64>(0)?, r.get::<i64>(1)?),
                content: r.get::<String>(2)?,
                fields: Fields {
                    status,
                    blocker: r.get::<Option<String>>(4)?,
                    dropped_by,
                    agent: r.get::<Option<String>>(6)?,
                    since_ms: r.get::<Option<i64>>(7)?,
                    after: r.get::<Option<String>>(8)?,
                    check: r.get::<Option<String>>(9)?,
                },
            })
        },
    )?;
    KeyedList::from_rows(phases, tasks).ok_or_else(|| corrupt("a task outside its phases".into()))
}

/// The counts of a session's list (all zero when it has none), counted by
/// the database: nothing of the list is read into memory.
pub(crate) fn counts(tx: &Tx<'_>, session: &SessionId) -> Result<Counts> {
    let rows = tx.query_all(
        "SELECT status, count(*) FROM tasks WHERE session_id = ?1 GROUP BY status",
        params![session.as_str()],
        |r| Ok((r.get::<String>(0)?, r.get::<i64>(1)?)),
    )?;
    let mut counts = Counts::default();
    for (status, n) in rows {
        let status = parse_status(&status)
            .ok_or_else(|| corrupt_list(session, format!("status {status:?}")))?;
        let n = usize::try_from(n).unwrap_or(0);
        counts.total += n;
        match status {
            Status::Completed => {
                counts.closed += n;
                counts.completed += n;
            }
            Status::Abandoned => counts.closed += n,
            Status::Blocked => counts.blocked += n,
            Status::Pending | Status::InProgress => {}
        }
    }
    counts.open = counts.total - counts.closed;
    Ok(counts)
}

/// Column `i` of a `tasks` row read in place as a status; a value no
/// status has is a corrupt list of `session`.
pub(crate) fn status_column(r: &Row<'_>, i: usize, session: &SessionId) -> Result<Status> {
    r.with_text(i, |text| {
        text.and_then(parse_status)
            .ok_or_else(|| corrupt_list(session, format!("status {:?}", text.unwrap_or("NULL"))))
    })?
}

/// Column `i` of a `tasks` row read in place as its dropped mark; a value
/// no mark has is a corrupt list of `session`.
pub(crate) fn dropped_column(
    r: &Row<'_>,
    i: usize,
    session: &SessionId,
) -> Result<Option<DroppedBy>> {
    r.with_text(i, |text| match text {
        None => Ok(None),
        Some("user") => Ok(Some(DroppedBy::User)),
        Some(other) => Err(corrupt_list(session, format!("dropped_by {other:?}"))),
    })?
}

/// A task as a summary shows it (no dropped mark), with its phase's
/// position, from the columns `phase_pos, content, status, blocker` of a
/// `tasks` row.
pub(crate) fn shown_task(r: &Row<'_>, session: &SessionId) -> Result<(i64, Task)> {
    let status = status_column(r, 2, session)?;
    Ok((
        r.get::<i64>(0)?,
        Task {
            blocker: r.get::<Option<String>>(3)?,
            status,
            ..Task::pending(r.get::<String>(1)?)
        },
    ))
}

/// The error for a todo list of `session` whose rows or kept shape do not
/// read as one, saying `why`.
pub(crate) fn corrupt_list(session: &SessionId, why: impl Into<String>) -> Error {
    Error::Corrupt {
        what: format!("todo list of session {session}"),
        why: why.into(),
    }
}

pub(crate) fn parse_status(text: &str) -> Option<Status> {
    Status::ALL.into_iter().find(|s| s.as_str() == text)
}

fn dropped(d: Option<DroppedBy>) -> Option<&'static str> {
    d.map(|DroppedBy::User| "user")
}

/// Writes `patch` to the session's rows.
pub(crate) fn write(tx: &Tx<'_>, session: &SessionId, patch: &Patch) -> Result<()> {
    let s = session.as_str();
    if patch.clear {
        tx.execute("DELETE FROM tasks WHERE session_id = ?1", params![s])?;
        tx.execute("DELETE FROM phases WHERE session_id = ?1", params![s])?;
    }
    for p in &patch.phases_del {
        tx.execute(
            "DELETE FROM phases WHERE session_id = ?1 AND pos = ?2",
            params![s, *p],
        )?;
    }
    for (p, k) in &patch.tasks_del {
        tx.execute(
            "DELETE FROM tasks WHERE session_id = ?1 AND phase_pos = ?2 AND pos = ?3",
            params![s, *p, *k],
        )?;
    }
    for (p, name) in &patch.phases_put {
        tx.execute(
            "INSERT INTO phases (session_id, pos, name) VALUES (?1, ?2, ?3)",
            params![s, *p, name],
        )?;
    }
    for TaskRow {
        key: (p, k),
        content,
        fields: f,
    } in &patch.tasks_put
    {
        tx.execute(
            "INSERT INTO tasks (session_id, phase_pos, pos, content, status, blocker, dropped_by,
                                agent, since_ms, after_task, check_cmd)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
            params![
                s,
                *p,
                *k,
                content,
                f.status.as_str(),
                f.blocker.as_deref(),
                dropped(f.dropped_by),
                f.agent.as_deref(),
                f.since_ms,
                f.after.as_deref(),
                f.check.as_deref()
            ],
        )?;
    }
    for set in &patch.tasks_set {
        let ((p, k), f) = (set.key, &set.fields);
        let changed = tx.execute(
            "UPDATE tasks SET status = ?4, blocker = ?5, dropped_by = ?6, agent = ?7,
                              since_ms = ?8, after_task = ?9, check_cmd = ?10
             WHERE session_id = ?1 AND phase_pos = ?2 AND pos = ?3",
            params![
                s,
                p,
                k,
                f.status.as_str(),
                f.blocker.as_deref(),
                dropped(f.dropped_by),
                f.agent.as_deref(),
                f.since_ms,
                f.after.as_deref(),
                f.check.as_deref()
            ],
        )?;
        if changed != 1 {
            return Err(corrupt_list(
                session,
                format!("no task row ({p}, {k}) to update"),
            ));
        }
    }
    Ok(())
}

/// Where `todo undo` at `version` goes: `Ok(Some(t))` restores version
/// `t`, `Ok(None)` means the list is at its first state, and
/// `Err(UNDO_TO_UNKNOWN)`-like values are returned as `Some(-1)`. `None`
/// from the outer option: the version's step is no longer kept.
pub(crate) fn undo_to(
    tx: &Tx<'_>,
    session: &SessionId,
    version: i64,
) -> Result<Option<Option<i64>>> {
    tx.query_opt(
        "SELECT undo_to FROM todo_undo WHERE session_id = ?1 AND version = ?2",
        params![session.as_str(), version],
        |r| r.get(0),
    )
}

/// The kept steps of the versions after `after` up to `upto`.
pub(crate) fn steps(
    tx: &Tx<'_>,
    session: &SessionId,
    after: i64,
    upto: i64,
) -> Result<Vec<UndoStep>> {
    tx.query_all(
        "SELECT version, restores, patch FROM todo_undo
         WHERE session_id = ?1 AND version > ?2 AND version <= ?3",
        params![session.as_str(), after, upto],
        |r| {
            Ok(UndoStep {
                version: r.get(0)?,
                restores: r.get(1)?,
                patch: r.get(2)?,
            })
        },
    )
}

/// Keeps the step that undoes `version` and deletes the steps that fell
/// out of the kept history.
pub(crate) fn record_step(
    tx: &Tx<'_>,
    session: &SessionId,
    version: i64,
    undo_to: Option<i64>,
    restores: Option<i64>,
    inverse: &Patch,
) -> Result<()> {
    tx.execute(
        "INSERT INTO todo_undo (session_id, version, undo_to, restores, patch)
         VALUES (?1, ?2, ?3, ?4, ?5)",
        params![
            session.as_str(),
            version,
            undo_to,
            restores,
            inverse.to_json().as_str()
        ],
    )?;
    tx.execute(
        "DELETE FROM todo_undo WHERE session_id = ?1 AND version <= ?2",
        params![session.as_str(), version - UNDO_DEPTH],
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::todo::{Actor, Call};
    use crate::{SessionId, Store};

    #[test]
    fn the_counted_statuses_are_the_lists_counts() {
        let mut store = Store::open_in_memory().unwrap();
        let s = SessionId::parse("s").unwrap();
        let empty = store.read(&s, |tx| tx.status()).unwrap();
        assert_eq!(empty, (None, Default::default(), Vec::new()));
        let calls = [
            r#"{"op":"init","list":[{"phase":"A","items":["a1","a2","a3"]},{"phase":"B","items":["b1","b2","b3","b4"]}]}"#,
            r#"{"op":"done","task":"a1"}"#,
            r#"{"op":"drop","task":"a2"}"#,
            r#"{"op":"start","task":"a3"}"#,
            r#"{"op":"block","task":"b1","reason":"review"}"#,
        ];
        for call in calls {
            let result = store
                .todo(
                    &s,
                    Call::Json(call),
                    Actor::Agent,
                    &mut crate::store::Caller::default(),
                    1,
                )
                .unwrap();
            assert!(!result.is_error, "{}", result.text());
        }
        let (list, _) = store.read(&s, |tx| tx.todo_list()).unwrap();
        let (_, counts, _) = store.read(&s, |tx| tx.status()).unwrap();
        assert_eq!(counts, list.counts());
        assert_eq!((counts.total, counts.closed, counts.blocked), (7, 2, 1));
    }

    #[test]
    fn a_status_nobody_knows_is_refused_when_counting_as_when_reading() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("g.db");
        let mut store = Store::open(&db).unwrap();
        let s = SessionId::parse("s").unwrap();
        let call = Call::Json(r#"{"op":"init","items":["a","b"]}"#);
        store
            .todo(
                &s,
                call,
                Actor::Agent,
                &mut crate::store::Caller::default(),
                1,
            )
            .unwrap();
        rusqlite::Connection::open(&db)
            .unwrap()
            .execute("UPDATE tasks SET status = 'later' WHERE content = 'b'", [])
            .unwrap();
        let counted = store.read(&s, |tx| tx.status()).unwrap_err().to_string();
        assert!(
            counted.contains("todo list of session s") && counted.contains("status \"later\""),
            "{counted}"
        );
        let read = store.read(&s, |tx| tx.todo_list()).unwrap_err().to_string();
        assert!(read.contains("status \"later\""), "{read}");
    }
}
