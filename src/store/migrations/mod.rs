//! Versioned schema migrations, tracked in `PRAGMA user_version`. Each step
//! runs in its own immediate transaction and re-reads the version inside it,
//! so processes racing to open a new database migrate it exactly once.
//!
//! The steps that move data live in files of their own: [`v4`] (lists as
//! rows, undo as patches) and [`v5`] (kept shapes); the others are DDL.
//! The DDL PostgreSQL's steps share is written once in [`super::ddl`];
//! what is SQLite's alone (its history before v4, v5's triggers) is here.
//! No step calls the store's row writers: a step must mean what it meant
//! when it shipped, whatever they become.

mod v4;
#[cfg(test)]
mod v4_tests;
mod v5;

use std::path::Path;

use rusqlite::{Connection, Transaction, TransactionBehavior};

use super::APPLICATION_ID;
use super::ddl::{self, Column, Dialect};
use crate::error::{Error, Result};
use v4::v4_tasks_as_rows;
use v5::v5_kept_shapes;

type Step = fn(&Transaction<'_>) -> Result<()>;

/// The migrations, in order; step `i` brings the schema to version `i + 1`.
const STEPS: &[Step] = &[
    v1_sessions_and_events,
    v2_goals,
    v3_session_marks,
    v4_tasks_as_rows,
    v5_kept_shapes,
    v6_tasks_by_prefix,
    v7_early_v6_index,
    v8_agents,
    v9_granted_leases,
    v10_checks,
    v11_check_run_ends,
];

/// The schema version this build writes.
pub(crate) const LATEST: i64 = STEPS.len() as i64;

/// Brings the database to [`LATEST`]; returns the version it found.
pub(crate) fn migrate(conn: &Connection, path: Option<&Path>) -> Result<i64> {
    let version = |c: &Connection| -> rusqlite::Result<i64> {
        c.query_row("PRAGMA user_version", [], |r| r.get(0))
    };
    let before = version(conn)?;
    if before == LATEST {
        return Ok(before);
    }
    for (i, step) in STEPS.iter().enumerate() {
        let target = i as i64 + 1;
        let tx = Transaction::new_unchecked(conn, TransactionBehavior::Immediate)?;
        let current = version(&tx)?;
        if current > LATEST {
            return Err(Error::NewerSchema {
                path: path.map(Path::to_path_buf).unwrap_or_default(),
                found: current,
                known: LATEST,
            });
        }
        if current >= target {
            continue;
        }
        step(&tx)?;
        tx.pragma_update(None, "application_id", APPLICATION_ID)?;
        tx.pragma_update(None, "user_version", target)?;
        tx.commit()?;
    }
    if before > 0 && before < 4 && path.is_some() {
        reclaim_space(conn);
    }
    Ok(before)
}

/// After v4 drops the lists that every v3 event kept, most of an old
/// database is free pages: give them back to the file system. Best effort
/// (another process may hold a transaction open); the database is whole
/// either way.
fn reclaim_space(conn: &Connection) {
    let count = |pragma: &str| -> i64 {
        conn.query_row(&format!("PRAGMA {pragma}"), [], |r| r.get(0))
            .unwrap_or(0)
    };
    let (free, total) = (count("freelist_count"), count("page_count"));
    if free > 16 && free * 4 > total {
        let _ = conn.execute_batch("VACUUM");
    }
}

/// Sessions with their todo list, and the append-only event log. Each
/// successful todo mutation stores the resulting list in its event, which
/// is what `todo undo` restores from.
fn v1_sessions_and_events(tx: &Transaction<'_>) -> Result<()> {
    Ok(tx.execute_batch(
        "CREATE TABLE sessions (
            id            TEXT PRIMARY KEY,
            created_ms    INTEGER NOT NULL,
            updated_ms    INTEGER NOT NULL,
            todo_version  INTEGER NOT NULL DEFAULT 0,
            todos         TEXT NOT NULL DEFAULT '[]',
            todo_error    TEXT
        ) STRICT;
        CREATE TABLE events (
            id          INTEGER PRIMARY KEY AUTOINCREMENT,
            session_id  TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            at_ms       INTEGER NOT NULL,
            actor       TEXT NOT NULL,
            kind        TEXT NOT NULL,
            op          TEXT,
            payload     TEXT NOT NULL,
            ok          INTEGER NOT NULL,
            error       TEXT,
            version     INTEGER,
            undo_to     INTEGER,
            state       TEXT
        ) STRICT;
        CREATE INDEX events_by_session ON events(session_id, id);
        CREATE UNIQUE INDEX events_by_version ON events(session_id, version)
            WHERE kind = 'todo' AND version IS NOT NULL;",
    )?)
}

/// Goals (the current one is a session's latest row; older ones are its
/// history) and the runaway guard's per-session counters.
fn v2_goals(tx: &Transaction<'_>) -> Result<()> {
    tx.execute_batch(&Dialect::Sqlite.render(ddl::GOALS))?;
    Ok(tx.execute_batch(
        "ALTER TABLE sessions ADD COLUMN idle_continuations INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE sessions ADD COLUMN progress_mark TEXT;",
    )?)
}

/// Small facts the integrations remember between processes: per session,
/// what was last injected, how many reminders went out, how far a
/// transcript was read, whether the memory file was delivered; and global
/// pointers such as the Claude Code session last seen in a project.
fn v3_session_marks(tx: &Transaction<'_>) -> Result<()> {
    Ok(tx.execute_batch(&Dialect::Sqlite.render(ddl::MARKS))?)
}

/// An index of each session's tasks by the start of their text: the
/// in-place path of a call that names one task ([`super::in_place`]) finds
/// its row without stepping through the list (on a long list the scan was
/// a large part of the whole command; BENCHMARKS.md). Only the
/// first 64 characters are indexed (the statements that use the index
/// repeat the expression `substr(content, 1, 64)` exactly, as SQLite
/// requires): texts that long rarely
/// share a start, and indexing the whole text (up to 1,000 characters)
/// nearly doubled what appending long tasks writes (measured by
/// `examples/bench_growth.rs`). A status change
/// leaves the index as it is; a new or removed task writes one entry more.
/// Not `UNIQUE`: the engine keeps texts unique, and rows written from
/// outside that repeat one are read (and refused) as before, not made to
/// fail.
fn v6_tasks_by_prefix(tx: &Transaction<'_>) -> Result<()> {
    Ok(tx.execute_batch(ddl::TASKS_BY_PREFIX)?)
}

/// The index of [`v6_tasks_by_prefix`] for a database that an early build
/// of v6 migrated. That build (never released) indexed the whole text as
/// `tasks_by_content`; a database it brought to v6 has no
/// `tasks_by_prefix`, and every call the in-place path takes failed on it
/// with "no such index: tasks_by_prefix" (SQLite's statement names the
/// index it must use). On any other database this step writes nothing but
/// the version.
fn v7_early_v6_index(tx: &Transaction<'_>) -> Result<()> {
    Ok(tx.execute_batch(ddl::EARLY_V6_INDEX)?)
}

/// Several agents on one list (DESIGN.md §2.5): who holds or completed
/// each task and since when, the task a blocked one waits for, and when
/// each named agent of a session last called (its claims' lease). A list
/// stored before has none of them set, which is what a list one agent
/// works on keeps. A database whose `tasks` has the columns already (an
/// earlier build's [`v4`] created them) keeps them as they are.
fn v8_agents(tx: &Transaction<'_>) -> Result<()> {
    for column in &ddl::TEAM_COLUMNS {
        add_column(tx, column)?;
    }
    Ok(tx.execute_batch(&Dialect::Sqlite.render(ddl::AGENTS))?)
}

/// Claims lapse by the lease their holder was granted, not by the
/// caller's (DESIGN.md §2.5): each named agent's row keeps when its lease
/// ends, as granted at its calls, and an event keeps the named agent that
/// made the call (the only record of it for a refused call). The agents
/// seen before were granted the default lease, 600 s, from their last call.
/// A column already there is left as it is (SQLite has no `ADD COLUMN IF
/// NOT EXISTS`). PostgreSQL's step is the same in its types
/// (`store::pg::schema`).
fn v9_granted_leases(tx: &Transaction<'_>) -> Result<()> {
    if add_column(tx, &ddl::LEASE_COLUMN)? {
        tx.execute_batch("UPDATE agents SET lease_until_ms = seen_ms + 600000;")?;
    }
    add_column(tx, &ddl::EVENT_AGENT_COLUMN)?;
    Ok(())
}

/// Checks (DESIGN.md §13): the checks a person set on a goal (a JSON array
/// of commands, `NULL` for none) and on a task, and the runs of checks
/// that `goalkeeper verify` recorded, by command and directory for the
/// gate. A run's own record (who ran it, every check of the run) is its
/// event in the log; these rows are what the gate looks up. `run` is the
/// run's random id: a run recorded twice (by `verify` itself and from a
/// host hook's record of it) lands once. A database whose `tasks` has the
/// column already (an earlier build's [`v4`] created it) keeps it.
fn v10_checks(tx: &Transaction<'_>) -> Result<()> {
    for column in &ddl::CHECK_COLUMNS {
        add_column(tx, column)?;
    }
    Ok(tx.execute_batch(&Dialect::Sqlite.render(ddl::CHECK_RUNS))?)
}

/// When each check's run was recorded (`ddl::CHECK_RUN_END`), for the rule
/// that decides between runs on the same files that overlapped.
fn v11_check_run_ends(tx: &Transaction<'_>) -> Result<()> {
    add_column(tx, &ddl::CHECK_RUN_END)?;
    Ok(())
}

/// Adds `column` unless its table has it (SQLite has no `ADD COLUMN IF
/// NOT EXISTS`); true when it added it.
fn add_column(tx: &Transaction<'_>, column: &Column) -> Result<bool> {
    let has: bool = tx.query_row(
        "SELECT count(*) > 0 FROM pragma_table_info(?1) WHERE name = ?2",
        [column.table, column.name],
        |r| r.get(0),
    )?;
    if !has {
        tx.execute_batch(&Dialect::Sqlite.add_column(column))?;
    }
    Ok(!has)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tables(conn: &Connection) -> Vec<String> {
        let mut stmt = conn
            .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
            .unwrap();
        stmt.query_map([], |r| r.get(0))
            .unwrap()
            .map(|r| r.unwrap())
            .collect()
    }

    /// The tables of the latest schema.
    const EVERY_TABLE: [&str; 11] = [
        "agents",
        "check_runs",
        "events",
        "goals",
        "phases",
        "pointers",
        "session_marks",
        "sessions",
        "sqlite_sequence",
        "tasks",
        "todo_undo",
    ];

    #[test]
    fn a_new_database_gets_every_table() {
        let conn = Connection::open_in_memory().unwrap();
        migrate(&conn, None).unwrap();
        assert_eq!(tables(&conn), EVERY_TABLE);
        let version: i64 = conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap();
        assert_eq!(version, LATEST);
        let app: i64 = conn
            .query_row("PRAGMA application_id", [], |r| r.get(0))
            .unwrap();
        assert_eq!(app, APPLICATION_ID);
    }

    #[test]
    fn each_step_applies_on_top_of_the_previous_one() {
        let conn = Connection::open_in_memory().unwrap();
        let tx = Transaction::new_unchecked(&conn, TransactionBehavior::Immediate).unwrap();
        v1_sessions_and_events(&tx).unwrap();
        tx.execute(
            "INSERT INTO sessions (id, created_ms, updated_ms, todo_version, todos) VALUES ('s', 1, 1, 4, '[]')",
            [],
        )
        .unwrap();
        tx.pragma_update(None, "application_id", APPLICATION_ID)
            .unwrap();
        tx.pragma_update(None, "user_version", 1).unwrap();
        tx.commit().unwrap();
        assert_eq!(tables(&conn), ["events", "sessions", "sqlite_sequence"]);

        migrate(&conn, None).unwrap();
        assert_eq!(tables(&conn), EVERY_TABLE);
        // v1 data survives the later steps, new columns at their defaults.
        let (version, idle): (i64, i64) = conn
            .query_row(
                "SELECT todo_version, idle_continuations FROM sessions WHERE id = 's'",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap();
        assert_eq!((version, idle), (4, 0));
    }

    /// v9 grants the agents a v8 database knew the default lease from
    /// their last call, and logs no agent for the events it had.
    #[test]
    fn v9_grants_the_default_lease_from_the_last_call() {
        let conn = Connection::open_in_memory().unwrap();
        for (i, step) in STEPS[..8].iter().enumerate() {
            let tx = Transaction::new_unchecked(&conn, TransactionBehavior::Immediate).unwrap();
            step(&tx).unwrap();
            tx.pragma_update(None, "user_version", i as i64 + 1)
                .unwrap();
            tx.commit().unwrap();
        }
        conn.execute_batch(
            "INSERT INTO sessions (id, created_ms, updated_ms) VALUES ('s', 1, 1);
             INSERT INTO agents (session_id, name, seen_ms) VALUES ('s', 'w1', 5000);
             INSERT INTO events (session_id, at_ms, actor, kind, payload, ok)
                 VALUES ('s', 1, 'agent', 'todo', '{}', 1);",
        )
        .unwrap();
        migrate(&conn, None).unwrap();
        let lease: i64 = conn
            .query_row("SELECT lease_until_ms FROM agents", [], |r| r.get(0))
            .unwrap();
        assert_eq!(lease, 605_000);
        let agent: Option<String> = conn
            .query_row("SELECT agent FROM events", [], |r| r.get(0))
            .unwrap();
        assert_eq!(agent, None);
    }

    #[test]
    fn migrating_twice_is_a_no_op() {
        let conn = Connection::open_in_memory().unwrap();
        migrate(&conn, None).unwrap();
        conn.execute(
            "INSERT INTO sessions (id, created_ms, updated_ms) VALUES ('s', 1, 1)",
            [],
        )
        .unwrap();
        migrate(&conn, None).unwrap();
        let n: i64 = conn
            .query_row("SELECT count(*) FROM sessions", [], |r| r.get(0))
            .unwrap();
        assert_eq!(n, 1);
    }

    #[test]
    fn a_newer_schema_is_refused() {
        let conn = Connection::open_in_memory().unwrap();
        migrate(&conn, None).unwrap();
        conn.pragma_update(None, "user_version", LATEST + 1)
            .unwrap();
        // The fast path sees a different version and steps through; the
        // check inside the transaction refuses.
        let err = migrate(&conn, None).unwrap_err();
        assert!(
            matches!(err, Error::NewerSchema { found, known, .. } if found == LATEST + 1 && known == LATEST)
        );
    }
}
