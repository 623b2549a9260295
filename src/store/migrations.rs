//! Versioned schema migrations, tracked in `PRAGMA user_version`. Each step
//! runs in its own immediate transaction and re-reads the version inside it,
//! so processes racing to open a new database migrate it exactly once.

use std::path::Path;

use rusqlite::{Connection, Transaction, TransactionBehavior};

use super::APPLICATION_ID;
use super::patch::KeyedList;
use super::rows;
use super::shape::{self, Shape};
use super::sql::Tx;
use crate::SessionId;
use crate::error::{Error, Result};
use crate::todo::TodoList;

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
];

/// The schema version this build writes.
pub(crate) const LATEST: i64 = STEPS.len() as i64;

/// Brings the database to [`LATEST`].
pub(crate) fn migrate(conn: &Connection, path: Option<&Path>) -> Result<()> {
    let version = |c: &Connection| -> rusqlite::Result<i64> {
        c.query_row("PRAGMA user_version", [], |r| r.get(0))
    };
    if version(conn)? == LATEST {
        return Ok(());
    }
    let before = version(conn)?;
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
    Ok(())
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
    Ok(tx.execute_batch(
        "CREATE TABLE goals (
            id               INTEGER PRIMARY KEY AUTOINCREMENT,
            session_id       TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            objective        TEXT NOT NULL,
            status           TEXT NOT NULL,
            token_budget     INTEGER,
            tokens_used      INTEGER NOT NULL DEFAULT 0,
            time_used_ms     INTEGER NOT NULL DEFAULT 0,
            active_since_ms  INTEGER,
            revision         INTEGER NOT NULL DEFAULT 0,
            budget_notice    TEXT NOT NULL DEFAULT 'none',
            created_ms       INTEGER NOT NULL,
            updated_ms       INTEGER NOT NULL
        ) STRICT;
        CREATE INDEX goals_by_session ON goals(session_id, id);
        ALTER TABLE sessions ADD COLUMN idle_continuations INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE sessions ADD COLUMN progress_mark TEXT;",
    )?)
}

/// Small facts the integrations remember between processes: per session,
/// what was last injected, how many reminders went out, how far a
/// transcript was read, whether the memory file was delivered; and global
/// pointers such as the Claude Code session last seen in a project.
fn v3_session_marks(tx: &Transaction<'_>) -> Result<()> {
    Ok(tx.execute_batch(
        "CREATE TABLE session_marks (
            session_id  TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            key         TEXT NOT NULL,
            value       TEXT NOT NULL,
            PRIMARY KEY (session_id, key)
        ) STRICT, WITHOUT ROWID;
        CREATE TABLE pointers (
            key         TEXT PRIMARY KEY,
            value       TEXT NOT NULL,
            updated_ms  INTEGER NOT NULL
        ) STRICT, WITHOUT ROWID;",
    )?)
}

/// Lists as rows and undo as inverse patches (issue 14): each session's
/// list moves from its JSON column into `phases` and `tasks`; the states
/// that events kept for undo become the patches of the last versions that
/// the new bound keeps ([`super::rows::UNDO_DEPTH`]); the list columns go.
fn v4_tasks_as_rows(tx: &Transaction<'_>) -> Result<()> {
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

/// Each list's shape kept in its session's row (issue 14, see
/// [`super::shape`]), computed here from the rows of every list already
/// stored; and triggers that forget a session's shape whenever one of its
/// task rows is written, so that a shape is never older than the tasks:
/// the store writes the shape after the rows, and a write from outside
/// (another tool, a hand edit) leaves the session without one, read from
/// its rows until the store writes its list again. (Phase rows have no
/// trigger: every process pays about 30,000 instructions per trigger to
/// parse the schema. A read checks the phases' keys against the shape's,
/// and takes their names from the rows.)
fn v5_kept_shapes(tx: &Transaction<'_>) -> Result<()> {
    let mut ddl = String::from("ALTER TABLE sessions ADD COLUMN todo_shape TEXT;");
    for (event, row) in [("insert", "NEW"), ("update", "NEW"), ("delete", "OLD")] {
        ddl.push_str(&format!(
            "CREATE TRIGGER tasks_{event}_forget_shape AFTER {event} ON tasks
             BEGIN
               UPDATE sessions SET todo_shape = NULL
               WHERE id = {row}.session_id AND todo_shape IS NOT NULL;
             END;"
        ));
    }
    tx.execute_batch(&ddl)?;
    let sessions = {
        let mut stmt = tx.prepare("SELECT id FROM sessions WHERE todo_version > 0")?;
        let rows = stmt.query_map([], |r| r.get(0))?;
        rows.collect::<rusqlite::Result<Vec<String>>>()?
    };
    let tx = Tx::SqliteIn(tx);
    for id in sessions {
        let session = SessionId::parse(&id)?;
        let keyed = rows::load(&tx, &session)?;
        shape::save(&tx, &session, &Shape::of_keyed(&keyed))?;
    }
    Ok(())
}

/// An index of each session's tasks by the start of their text: the
/// in-place path of a call that names one task ([`super::in_place`]) finds
/// its row without stepping through the list (on 1,000 tasks, the scan
/// cost about 1 M instructions, a third of the whole command). Only the
/// first 64 characters are indexed (the statements that use the index
/// repeat the expression `substr(content, 1, 64)` exactly, as SQLite
/// requires): texts that long rarely
/// share a start, and indexing the whole text (up to 1,000 characters)
/// doubled what appending long tasks writes (6.1 → 10.7 KB per append of
/// a 1,000-character task, `examples/bench_growth.rs`). A status change
/// leaves the index as it is; a new or removed task writes one entry more.
/// Not `UNIQUE`: the engine keeps texts unique, and rows written from
/// outside that repeat one are read (and refused) as before, not made to
/// fail.
fn v6_tasks_by_prefix(tx: &Transaction<'_>) -> Result<()> {
    Ok(tx.execute_batch(TASKS_BY_PREFIX)?)
}

/// The text of [`TASKS_BY_PREFIX`], as a literal for `concat!`.
macro_rules! tasks_by_prefix {
    () => {
        "CREATE INDEX IF NOT EXISTS tasks_by_prefix ON tasks (session_id, substr(content, 1, 64));"
    };
}

/// The DDL of [`v6_tasks_by_prefix`], the same text on both backends.
pub(crate) const TASKS_BY_PREFIX: &str = tasks_by_prefix!();

/// The index of [`v6_tasks_by_prefix`] for a database that an early build
/// of v6 migrated. That build (on main for twenty minutes, between
/// 2f24649 and 9a39d87, in no release) indexed the whole text as
/// `tasks_by_content`; a database it brought to v6 has no
/// `tasks_by_prefix`, and every call the in-place path takes failed on it
/// with "no such index: tasks_by_prefix" (SQLite's statement names the
/// index it must use). On any other database this step writes nothing but
/// the version.
fn v7_early_v6_index(tx: &Transaction<'_>) -> Result<()> {
    Ok(tx.execute_batch(EARLY_V6_INDEX)?)
}

/// The DDL of [`v7_early_v6_index`], the same text on both backends.
pub(crate) const EARLY_V6_INDEX: &str =
    concat!("DROP INDEX IF EXISTS tasks_by_content;", tasks_by_prefix!());

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

    #[test]
    fn a_new_database_gets_every_table() {
        let conn = Connection::open_in_memory().unwrap();
        migrate(&conn, None).unwrap();
        assert_eq!(
            tables(&conn),
            [
                "events",
                "goals",
                "phases",
                "pointers",
                "session_marks",
                "sessions",
                "sqlite_sequence",
                "tasks",
                "todo_undo"
            ]
        );
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
        assert_eq!(
            tables(&conn),
            [
                "events",
                "goals",
                "phases",
                "pointers",
                "session_marks",
                "sessions",
                "sqlite_sequence",
                "tasks",
                "todo_undo"
            ]
        );
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

#[cfg(test)]
mod v4_tests {
    //! Migration from v3, where every todo event kept the whole list.
    use super::*;
    use crate::store::{Store, UNDO_DEPTH};
    use crate::todo::{self, Actor, Call};

    /// A v3 history: `states[v]` is the list of version `v`, `undo_to[v]`
    /// where v3's undo at `v` went.
    struct History {
        states: Vec<TodoList>,
        undo_to: Vec<Option<i64>>,
    }

    /// Writes a v3 database at `path` with session `s` holding `versions`
    /// versions (an undo among them), a goal, a mark and a pointer.
    fn v3_database(path: &Path, versions: i64) -> History {
        let choices: Vec<Choice> = (1..=versions)
            .map(|v| {
                if v % 37 == 0 {
                    Choice::Undo
                } else {
                    Choice::Call(v % 5)
                }
            })
            .collect();
        v3_history(path, &choices)
    }

    /// What version `v` of a v3 history is: v3's undo, or a call of one of
    /// five kinds (`kind % 5`).
    #[derive(Clone, Copy, Debug)]
    enum Choice {
        Undo,
        Call(i64),
    }

    /// Writes a v3 database at `path` with session `s` holding one version
    /// per choice, a goal, a mark and a pointer.
    fn v3_history(path: &Path, choices: &[Choice]) -> History {
        let versions = choices.len() as i64;
        let mut conn = Connection::open(path).unwrap();
        conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get::<_, String>(0))
            .unwrap();
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .unwrap();
        for step in &STEPS[..3] {
            step(&tx).unwrap();
        }
        tx.pragma_update(None, "application_id", APPLICATION_ID)
            .unwrap();
        tx.pragma_update(None, "user_version", 3).unwrap();
        tx.execute(
            "INSERT INTO sessions (id, created_ms, updated_ms) VALUES ('s', 1, 2)",
            [],
        )
        .unwrap();
        let mut history = History {
            states: vec![TodoList::default()],
            undo_to: vec![None],
        };
        let mut v = 0;
        while v < versions {
            v += 1;
            let choice = choices[v as usize - 1];
            let (state, undo_to, op, payload) = if let Choice::Undo = choice {
                // v3's undo: the list of an earlier version, as a new one.
                let target = history.undo_to[v as usize - 1].unwrap_or(0);
                (
                    history.states[target as usize].clone(),
                    history.undo_to[target as usize],
                    "undo",
                    format!(r#"{{"op":"undo","restored_version":{target}}}"#),
                )
            } else {
                let last = history.states.last().unwrap().clone();
                let Choice::Call(kind) = choice else {
                    unreachable!()
                };
                let call = match kind % 5 {
                    1 => format!(r#"{{"op":"append","phase":"P{}","items":["t{v}"]}}"#, v % 3),
                    2 => r#"{"op":"done"}"#.to_owned(),
                    3 => format!(r#"{{"op":"append","phase":"P0","items":["u{v}","w{v}"]}}"#),
                    4 => format!(r#"{{"op":"block","task":"u{}","reason":"why {v}"}}"#, v - 1),
                    _ => format!(r#"{{"op":"rm","task":"w{}"}}"#, v - 2),
                };
                let mut out = todo::run(last.clone(), Call::Json(&call), Actor::User);
                let mut call = call;
                if !out.is_mutation() {
                    // Its target went with an undo: add a task instead.
                    call = format!(r#"{{"op":"append","phase":"P1","items":["f{v}"]}}"#);
                    out = todo::run(last, Call::Json(&call), Actor::User);
                }
                assert!(out.is_mutation(), "v{v} {call}: {:?}", out.errors);
                (out.list, Some(v - 1), "x", call)
            };
            tx.execute(
                "INSERT INTO events (session_id, at_ms, actor, kind, op, payload, ok, version, undo_to, state)
                 VALUES ('s', ?1, 'user', 'todo', ?2, ?3, 1, ?1, ?4, ?5)",
                rusqlite::params![v, op, payload, undo_to, serde_json::to_string(&state).unwrap()],
            )
            .unwrap();
            history.states.push(state);
            history.undo_to.push(undo_to);
        }
        let last = serde_json::to_string(history.states.last().unwrap()).unwrap();
        tx.execute(
            "UPDATE sessions SET todos = ?1, todo_version = ?2 WHERE id = 's'",
            rusqlite::params![last, versions],
        )
        .unwrap();
        tx.execute_batch(
            "INSERT INTO goals (session_id, objective, status, created_ms, updated_ms)
                VALUES ('s', 'Ship it', 'active', 1, 1);
             INSERT INTO session_marks VALUES ('s', 'k', 'v');
             INSERT INTO pointers VALUES ('p', 's', 1);",
        )
        .unwrap();
        tx.commit().unwrap();
        history
    }

    #[test]
    fn every_session_goal_mark_and_the_kept_history_survive() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("v3.db");
        let versions = 260;
        let mut history = v3_database(&db, versions);
        let session = SessionId::parse("s").unwrap();
        let mut store = Store::open(&db).unwrap();
        let (list, version) = store.todo_list(&session).unwrap();
        assert_eq!(version, versions);
        assert_eq!(&list, history.states.last().unwrap());
        assert_eq!(
            store.current_goal(&session).unwrap().unwrap().objective,
            "Ship it"
        );
        assert_eq!(
            store.session_mark(&session, "k").unwrap().as_deref(),
            Some("v")
        );
        assert_eq!(store.pointer("p").unwrap().as_deref(), Some("s"));
        assert_eq!(
            store.event_log(&session, 1000).unwrap().len(),
            versions as usize
        );
        // Undo walks back as v3's would have, as far as UNDO_DEPTH versions.
        let mut current = versions as usize;
        let mut undos = 0;
        loop {
            let target = history.undo_to[current].expect("history before the start") as usize;
            if (target as i64) < current as i64 - UNDO_DEPTH {
                break;
            }
            let undone = store
                .todo_undo(&session, 0)
                .unwrap_or_else(|e| panic!("undo to {target} from version {current}: {e}"));
            assert_eq!(
                &undone.details.phases, &history.states[target],
                "undo to {target} from version {current}"
            );
            history.states.push(history.states[target].clone());
            history.undo_to.push(history.undo_to[target]);
            current = history.states.len() - 1;
            undos += 1;
        }
        assert!(undos >= 50, "only {undos} undos");
        let (before, v) = store.todo_list(&session).unwrap();
        let refused = store.todo_undo(&session, 0).map(|_| ()).unwrap_err();
        assert!(
            refused.to_string().starts_with(&format!(
                "nothing more to undo in session s: undo reaches back {UNDO_DEPTH} versions of the list"
            )),
            "{refused}"
        );
        assert_eq!(store.todo_list(&session).unwrap(), (before, v));
        assert_eq!(store.integrity_check().unwrap(), "ok");
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(12))]

        /// For a random v3 history (calls and v3's undos, shorter and
        /// longer than the bound), migrated: a run of undos, each in a
        /// freshly opened store, restores exactly the list of every
        /// version v3's undo would have restored, as long as that version
        /// is within the bound, and is then refused with nothing changed.
        #[test]
        fn after_migration_undo_restores_every_kept_version_across_reopens(
            picks in proptest::collection::vec(proptest::option::weighted(0.9, 0i64..5), 1..260),
        ) {
            let choices: Vec<Choice> = picks
                .iter()
                .map(|p| p.map_or(Choice::Undo, Choice::Call))
                .collect();
            let dir = tempfile::tempdir().unwrap();
            let db = dir.path().join("v3.db");
            let mut history = v3_history(&db, &choices);
            let session = SessionId::parse("s").unwrap();
            let mut current = choices.len();
            loop {
                let mut store = Store::open(&db).unwrap();
                let before = store.todo_list(&session).unwrap();
                proptest::prop_assert_eq!(before.1 as usize, current);
                let outcome = store.todo_undo(&session, 0);
                match history.undo_to[current] {
                    Some(target) if target >= current as i64 - UNDO_DEPTH => {
                        let target = target as usize;
                        let undone = outcome.map_err(|e| {
                            proptest::test_runner::TestCaseError::fail(format!(
                                "undo to {target} from version {current}: {e}"
                            ))
                        })?;
                        proptest::prop_assert_eq!(&undone.details.phases, &history.states[target]);
                        history.states.push(history.states[target].clone());
                        history.undo_to.push(history.undo_to[target]);
                        current = history.states.len() - 1;
                    }
                    expected => {
                        let refused = outcome.map(|_| ()).unwrap_err().to_string();
                        let start = if expected.is_none() {
                            "nothing to undo"
                        } else {
                            "nothing more to undo"
                        };
                        proptest::prop_assert!(refused.starts_with(start), "{}", refused);
                        proptest::prop_assert_eq!(store.todo_list(&session).unwrap(), before);
                        break;
                    }
                }
            }
            proptest::prop_assert_eq!(Store::open(&db).unwrap().integrity_check().unwrap(), "ok");
        }
    }

    #[test]
    fn the_space_the_old_lists_took_is_given_back() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("v3.db");
        v3_database(&db, 400);
        let size = |db: &Path| {
            let conn = Connection::open(db).unwrap();
            conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
                .unwrap();
            std::fs::metadata(db).unwrap().len()
        };
        let before = size(&db);
        drop(Store::open(&db).unwrap());
        let after = size(&db);
        let conn = Connection::open(&db).unwrap();
        let free: i64 = conn
            .query_row("PRAGMA freelist_count", [], |r| r.get(0))
            .unwrap();
        assert_eq!(free, 0);
        assert!(after < before, "{before} -> {after}");
    }
}
