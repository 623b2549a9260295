//! Copying goalkeeper's data from one database into another, whatever the
//! two backends: `goalkeeper migrate --to URL` (a SQLite file into
//! PostgreSQL) and `backup PATH` of a PostgreSQL database (into a new
//! SQLite file).
//!
//! The copy reads the source in one read transaction (one snapshot) and
//! writes the target in one write transaction: the target gets all of it
//! or, on any error, nothing. A target that already holds one of the
//! copied sessions is refused before anything is written, so a migration
//! never merges two histories of one session.
//!
//! Goal ids are global (unique across sessions). Into a fresh SQLite file
//! (a backup) they are kept; into a database that may already hold other
//! sessions' goals (a migration) each goal gets the target's next id and
//! the goal events that name it (`"goal": N`) are rewritten to match.
//! Event ids are the target's (in the source's order).

use std::collections::HashMap;
#[cfg(feature = "postgres")]
use std::path::Path;

use serde::Serialize;

use super::sql::{Owned, Tx, Value, params};
use super::{Store, goals};
use crate::SessionId;
use crate::error::{Error, Result};

/// What a copy brought over.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub(crate) struct CopyReport {
    /// Sessions (each with its list, undo history and marks).
    pub sessions: usize,
    /// Goals.
    pub goals: usize,
    /// Events of the log.
    pub events: usize,
    /// Per-session marks (integration state).
    pub marks: usize,
    /// Global pointers (integration state); one the target already has
    /// is left as the target has it.
    pub pointers: usize,
}

/// Whether goal ids are kept or drawn anew in the target.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Ids {
    #[cfg_attr(not(feature = "postgres"), allow(dead_code))]
    Keep,
    Renumber,
}

/// The tables copied as they are, in an order that satisfies the foreign
/// keys, with their columns.
const PLAIN: &[(&str, &str, &str)] = &[
    ("phases", "session_id, pos, name", "session_id, pos"),
    (
        "tasks",
        "session_id, phase_pos, pos, content, status, blocker, dropped_by, agent, since_ms, \
         after_task, check_cmd",
        "session_id, phase_pos, pos",
    ),
    (
        "todo_undo",
        "session_id, version, undo_to, restores, patch",
        "session_id, version",
    ),
    ("session_marks", "session_id, key, value", "session_id, key"),
    (
        "agents",
        "session_id, name, seen_ms, lease_until_ms",
        "session_id, name",
    ),
];

const SESSION_COLUMNS: &str =
    "id, created_ms, updated_ms, todo_version, todo_error, idle_continuations, progress_mark";
const GOAL_COLUMNS: &str = "id, session_id, objective, status, token_budget, tokens_used, \
    time_used_ms, active_since_ms, revision, budget_notice, created_ms, updated_ms, checks";
/// The runs of checks, copied without their ids (the target's, in the
/// source's order, as events).
const CHECK_RUN_COLUMNS: &str = "session_id, run, command, dir, fingerprint, exit_code, signal, \
    timeout_s, ms, started_ms, ended_ms";
const EVENT_COLUMNS: &str =
    "session_id, at_ms, actor, kind, op, payload, ok, error, version, agent";

impl super::Admin<'_> {
    /// Copies every session of this store (its list, undo history, goals,
    /// events and marks) and the global pointers into `target`, in one
    /// transaction of each. Refused, with nothing written, when `target`
    /// already holds any of these sessions, or is this very database.
    #[cfg_attr(not(feature = "cli"), expect(dead_code))]
    pub(crate) fn copy_into(&self, target: &mut Store) -> Result<CopyReport> {
        copy(self.store, target, Ids::Renumber)
    }
}

fn copy(source: &Store, target: &mut Store, ids: Ids) -> Result<CopyReport> {
    let from = source.begin_read()?;
    let to = target.begin_write()?;
    let report = copy_tx(&from, &to, ids)?;
    to.commit()?;
    from.commit()?;
    Ok(report)
}

fn select_all(tx: &Tx<'_>, table: &str, columns: &str, order: &str) -> Result<Vec<Vec<Owned>>> {
    let n = columns.split(',').count();
    tx.query_all(
        &format!("SELECT {columns} FROM {table} ORDER BY {order}"),
        &[],
        |r| (0..n).map(|i| r.get::<Owned>(i)).collect(),
    )
}

fn insert_sql(table: &str, columns: &str) -> String {
    let n = columns.split(',').count();
    let marks: Vec<String> = (1..=n).map(|i| format!("?{i}")).collect();
    format!(
        "INSERT INTO {table} ({columns}) VALUES ({})",
        marks.join(", ")
    )
}

fn insert(tx: &Tx<'_>, sql: &str, row: &[Owned]) -> Result<()> {
    let params: Vec<Value<'_>> = row.iter().map(Owned::as_value).collect();
    tx.execute(sql, &params)?;
    Ok(())
}

fn text(value: &Owned) -> &str {
    match value {
        Owned::Text(t) => t,
        _ => "",
    }
}

fn copy_tx(from: &Tx<'_>, to: &Tx<'_>, ids: Ids) -> Result<CopyReport> {
    let mut report = CopyReport::default();
    let sessions = select_all(from, "sessions", SESSION_COLUMNS, "id")?;
    // Every session locked and checked before anything is written.
    let mut taken = Vec::new();
    for row in &sessions {
        let id = SessionId::parse(text(&row[0]))?;
        to.lock_session(&id)?;
        if to
            .query_opt(
                "SELECT 1 FROM sessions WHERE id = ?1",
                params![id.as_str()],
                |_| Ok(()),
            )?
            .is_some()
        {
            taken.push(id.as_str().to_owned());
        }
    }
    if !taken.is_empty() {
        let shown: Vec<&str> = taken.iter().take(5).map(String::as_str).collect();
        return Err(Error::Rejected(format!(
            "the target already holds {} of the sessions to copy ({}{}); nothing was copied. Copy into a database without them, or remove them there first (`session remove ID`)",
            taken.len(),
            shown.join(", "),
            if taken.len() > 5 { ", …" } else { "" }
        )));
    }
    let sql = insert_sql("sessions", SESSION_COLUMNS);
    for row in &sessions {
        insert(to, &sql, row)?;
    }
    report.sessions = sessions.len();
    for (table, columns, order) in PLAIN {
        let sql = insert_sql(table, columns);
        let rows = select_all(from, table, columns, order)?;
        for row in &rows {
            insert(to, &sql, row)?;
        }
        if *table == "session_marks" {
            report.marks = rows.len();
        }
    }
    // Each list's kept shape after its rows, whose writes forget it.
    let shapes = select_all(from, "sessions", "id, todo_shape", "id")?;
    for row in &shapes {
        if !matches!(row[1], Owned::Null) {
            insert(to, "UPDATE sessions SET todo_shape = ?2 WHERE id = ?1", row)?;
        }
    }
    let mut goal_ids: HashMap<i64, i64> = HashMap::new();
    let sql = insert_sql("goals", GOAL_COLUMNS);
    for mut row in select_all(from, "goals", GOAL_COLUMNS, "id")? {
        if ids == Ids::Renumber
            && let Owned::Int(old) = row[0]
        {
            let new = goals::next_goal_id(to)?;
            goal_ids.insert(old, new);
            row[0] = Owned::Int(new);
        }
        insert(to, &sql, &row)?;
        report.goals += 1;
    }
    let sql = insert_sql("events", EVENT_COLUMNS);
    for mut row in select_all(from, "events", EVENT_COLUMNS, "id")? {
        if !goal_ids.is_empty() && text(&row[3]) == "goal" {
            row[5] = Owned::Text(renumber_goal(text(&row[5]), &goal_ids));
        }
        insert(to, &sql, &row)?;
        report.events += 1;
    }
    let sql = insert_sql("check_runs", CHECK_RUN_COLUMNS);
    for row in select_all(from, "check_runs", CHECK_RUN_COLUMNS, "id")? {
        insert(to, &sql, &row)?;
    }
    let pointers = select_all(from, "pointers", "key, value, updated_ms", "key")?;
    for row in &pointers {
        report.pointers += to.execute(
            "INSERT INTO pointers (key, value, updated_ms) VALUES (?1, ?2, ?3)
             ON CONFLICT(key) DO NOTHING",
            &row.iter().map(Owned::as_value).collect::<Vec<_>>(),
        )?;
    }
    Ok(report)
}

/// A goal event's payload with its `"goal": N` renumbered.
fn renumber_goal(payload: &str, ids: &HashMap<i64, i64>) -> String {
    let Ok(mut value) = serde_json::from_str::<serde_json::Value>(payload) else {
        return payload.to_owned();
    };
    let Some(new) = value
        .get("goal")
        .and_then(serde_json::Value::as_i64)
        .and_then(|old| ids.get(&old))
    else {
        return payload.to_owned();
    };
    value["goal"] = (*new).into();
    value.to_string()
}

/// `backup PATH` of a PostgreSQL database: a new SQLite file holding every
/// session, written beside `path` and linked into place complete (see
/// [`super::backup`]).
#[cfg(feature = "postgres")]
pub(crate) fn backup_to_sqlite(source: &Store, path: &Path) -> Result<()> {
    super::backup::write_with(path, |partial| {
        let mut target = Store::open(partial)?;
        copy(source, &mut target, Ids::Keep)?;
        // The copy was committed to the WAL beside the partial file: fold
        // it in and leave WAL mode (as a `VACUUM INTO` copy is), so the file
        // alone holds everything before it is linked into place.
        target.fold_wal_into_file()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_goal_events_id_is_renumbered_and_nothing_else() {
        let ids = HashMap::from([(3, 10)]);
        assert_eq!(
            renumber_goal(r#"{"op":"set","goal":3,"objective":"x"}"#, &ids),
            r#"{"op":"set","goal":10,"objective":"x"}"#
        );
        assert_eq!(renumber_goal(r#"{"op":"get"}"#, &ids), r#"{"op":"get"}"#);
        assert_eq!(renumber_goal("not json", &ids), "not json");
    }
}
