//! Database files: created private, and anything that is not a goalkeeper
//! database of this version refused without being modified.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use goalkeeper::store::Caller;
use goalkeeper::{Error, ErrorKind, Store};

use crate::common::*;

fn open_err(path: &Path) -> Error {
    match Store::open(path) {
        Ok(_) => panic!("{} was opened", path.display()),
        Err(e) => e,
    }
}

/// Every file in `dir` with its bytes, to prove a refusal touched nothing
/// (no journal or WAL file left behind either).
fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect();
    files.sort();
    files
}

/// Asserts that two [`snapshot`]s are the same; on failure, names the files
/// that differ instead of printing their bytes.
fn assert_untouched(after: Vec<(String, Vec<u8>)>, before: &[(String, Vec<u8>)]) {
    let outline = |files: &[(String, Vec<u8>)]| -> Vec<(String, usize)> {
        files.iter().map(|(n, b)| (n.clone(), b.len())).collect()
    };
    let changed: Vec<&str> = before
        .iter()
        .filter(|(name, bytes)| !after.iter().any(|(n, b)| n == name && b == bytes))
        .map(|(name, _)| name.as_str())
        .collect();
    assert!(
        changed.is_empty() && after.len() == before.len(),
        "files changed: {changed:?}; before {:?}, after {:?}",
        outline(before),
        outline(&after)
    );
}

#[test]
fn a_new_database_file_is_private_and_keeps_its_data() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("goalkeeper.db");
    {
        let mut s = Store::open(&path).unwrap();
        assert_eq!(s.path(), Some(path.as_path()));
        agent(&mut s, r#"{"op":"init","items":["persisted"]}"#);
        // SQLite gives its WAL and shared-memory files the database's mode.
        for entry in std::fs::read_dir(path.parent().unwrap()).unwrap() {
            let entry = entry.unwrap();
            let mode = entry.metadata().unwrap().permissions().mode();
            assert_eq!(
                mode & 0o777,
                0o600,
                "{:?}: mode {mode:o}",
                entry.file_name()
            );
        }
    }
    let mode = std::fs::metadata(&path).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600, "mode {mode:o}");

    let mut s = Store::open(&path).unwrap();
    assert_eq!(tasks(&mut s), "Tasks: [/] persisted");
    assert_eq!(version(&mut s), 1);
    assert_eq!(s.admin().integrity_check().unwrap(), "ok");
}

/// A database file is created where it is missing, never a directory (a
/// missing directory means a mistyped path); and a reader creates nothing.
#[test]
fn a_missing_directory_or_file_is_refused_and_nothing_is_created() {
    let dir = tempfile::tempdir().unwrap();
    let nested = dir.path().join("nested/dir/goalkeeper.db");
    for open in [Store::open, Store::open_existing] {
        match open(&nested) {
            Err(goalkeeper::Error::NoDatabaseDir { path, dir: missing }) => {
                assert_eq!(
                    (path, missing),
                    (nested.clone(), dir.path().join("nested/dir"))
                );
            }
            other => panic!("not refused: {:?}", other.map(|_| ())),
        }
    }
    let missing = dir.path().join("goalkeeper.db");
    match Store::open_existing(&missing) {
        Err(goalkeeper::Error::NoDatabase(path)) => assert_eq!(path, missing),
        other => panic!("not refused: {:?}", other.map(|_| ())),
    }
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "something was created"
    );
}

#[test]
fn an_empty_existing_file_becomes_a_database() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("empty.db");
    std::fs::write(&path, b"").unwrap();
    let mut s = Store::open(&path).unwrap();
    agent(&mut s, r#"{"op":"init","items":["a"]}"#);
    assert_eq!(version(&mut s), 1);
}

#[test]
fn random_bytes_are_refused_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("noise.db");
    let bytes: Vec<u8> = (0..4096u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    std::fs::write(&path, &bytes).unwrap();
    let before = snapshot(dir.path());
    let err = open_err(&path);
    assert_eq!(err.kind(), ErrorKind::Storage);
    assert_eq!(
        err.to_string(),
        format!(
            "{} is not a goalkeeper database (it does not start with the SQLite header); \
             it was left untouched",
            path.display()
        )
    );
    assert_untouched(snapshot(dir.path()), &before);
}

#[test]
fn a_text_file_is_refused_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("notes.txt");
    std::fs::write(&path, "# My notes\n- [ ] not a database\n").unwrap();
    let before = snapshot(dir.path());
    let err = open_err(&path);
    assert!(
        err.to_string()
            .contains("is not a goalkeeper database (it does not start with the SQLite header)"),
        "{err}"
    );
    assert_untouched(snapshot(dir.path()), &before);
}

#[test]
fn a_damaged_file_with_a_sqlite_header_is_refused_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("damaged.db");
    let mut bytes = b"SQLite format 3\0".to_vec();
    bytes.extend((0..4080u32).map(|i| (i * 7 + 3) as u8));
    std::fs::write(&path, &bytes).unwrap();
    let before = snapshot(dir.path());
    let err = open_err(&path);
    assert_eq!(err.kind(), ErrorKind::Storage);
    assert_eq!(
        err.to_string(),
        format!(
            "{} is not a goalkeeper database (its application id is 0x6f767d84); \
             it was left untouched",
            path.display()
        )
    );
    assert_untouched(snapshot(dir.path()), &before);
}

#[test]
fn a_sqlite_database_of_another_program_is_refused_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("other.db");
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch(
            "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT);
             INSERT INTO notes (body) VALUES ('keep me');",
        )
        .unwrap();
    }
    let before = snapshot(dir.path());
    let err = open_err(&path);
    assert_eq!(err.kind(), ErrorKind::Storage);
    assert_eq!(
        err.to_string(),
        format!(
            "{} is not a goalkeeper database (it is a SQLite database of another program); \
             it was left untouched",
            path.display()
        )
    );
    assert_untouched(snapshot(dir.path()), &before);
}

#[test]
fn a_sqlite_database_with_another_application_id_is_refused_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tagged.db");
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.pragma_update(None, "application_id", 42).unwrap();
    }
    let before = snapshot(dir.path());
    let err = open_err(&path);
    assert!(
        err.to_string()
            .contains("is not a goalkeeper database (its application id is 0x2a)"),
        "{err}"
    );
    assert_untouched(snapshot(dir.path()), &before);
}

#[test]
fn a_database_from_a_newer_goalkeeper_is_refused_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("newer.db");
    {
        let mut s = Store::open(&path).unwrap();
        agent(&mut s, r#"{"op":"init","items":["from the future"]}"#);
    }
    let latest: i64 = {
        let conn = rusqlite::Connection::open(&path).unwrap();
        let latest = conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap();
        conn.pragma_update(None, "user_version", latest + 1)
            .unwrap();
        latest
    };
    let before = snapshot(dir.path());
    let err = open_err(&path);
    assert_eq!(err.kind(), ErrorKind::Storage);
    assert_eq!(
        err.to_string(),
        format!(
            "{} has schema version {}, but this goalkeeper only knows up to {latest}; \
             upgrade goalkeeper (the file was left untouched)",
            path.display(),
            latest + 1
        )
    );
    assert_untouched(snapshot(dir.path()), &before);
}

#[test]
fn a_directory_in_place_of_the_database_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("goalkeeper.db");
    std::fs::create_dir(&path).unwrap();
    let err = open_err(&path);
    assert_eq!(err.kind(), ErrorKind::Usage);
    assert_eq!(
        err.to_string(),
        format!(
            "{p} is a directory; give the path of a database file, e.g. {p}/goalkeeper.db",
            p = path.display()
        )
    );
    assert!(std::fs::read_dir(&path).unwrap().next().is_none());
}

// ---- files another process left mid-write --------------------------------

/// Builds a database with `build` in a scratch directory and copies its
/// files while the connection is still open, as a crash would leave them:
/// committed changes still in the `-wal` file, or an open transaction with
/// its hot `-journal`.
fn crashed_copy(build: impl FnOnce(&rusqlite::Connection)) -> tempfile::TempDir {
    let live = tempfile::tempdir().unwrap();
    let crashed = tempfile::tempdir().unwrap();
    let conn = rusqlite::Connection::open(live.path().join("crashed.db")).unwrap();
    build(&conn);
    for entry in std::fs::read_dir(live.path()).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), crashed.path().join(entry.file_name())).unwrap();
    }
    crashed
}

/// [`snapshot`] without the `-shm` file: that is SQLite's shared-memory
/// index of the WAL, which every reader (re)builds; the data lives in the
/// database and `-wal` files.
fn data_files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files = snapshot(dir);
    files.retain(|(name, _)| !name.ends_with("-shm"));
    files
}

fn wal_mode(conn: &rusqlite::Connection) {
    let mode: String = conn
        .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
}

#[test]
fn another_programs_database_with_an_unmerged_wal_is_refused_untouched() {
    let dir = crashed_copy(|conn| {
        wal_mode(conn);
        conn.execute_batch("CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('keep me');")
            .unwrap();
    });
    let path = dir.path().join("crashed.db");
    let before = data_files(dir.path());
    assert!(
        before
            .iter()
            .any(|(name, bytes)| name == "crashed.db-wal" && !bytes.is_empty())
    );

    let err = open_err(&path);
    assert!(
        err.to_string()
            .contains("is not a goalkeeper database (it is a SQLite database of another program)"),
        "{err}"
    );
    assert_untouched(data_files(dir.path()), &before);
}

#[test]
fn a_newer_database_with_an_unmerged_wal_is_refused_untouched() {
    let dir = crashed_copy(|conn| {
        wal_mode(conn);
        conn.pragma_update(None, "application_id", goalkeeper::store::APPLICATION_ID)
            .unwrap();
        conn.pragma_update(None, "user_version", 1_000).unwrap();
    });
    let path = dir.path().join("crashed.db");
    let before = data_files(dir.path());

    let err = open_err(&path);
    assert!(err.to_string().contains("has schema version 1000"), "{err}");
    assert_untouched(data_files(dir.path()), &before);
}

#[test]
fn our_own_database_with_an_unmerged_wal_opens_with_its_data() {
    let live = tempfile::tempdir().unwrap();
    let crashed = tempfile::tempdir().unwrap();
    let mut s = Store::open(live.path().join("gk.db")).unwrap();
    agent(&mut s, r#"{"op":"init","items":["survives the crash"]}"#);
    for entry in std::fs::read_dir(live.path()).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), crashed.path().join(entry.file_name())).unwrap();
    }
    drop(s);
    assert!(
        data_files(crashed.path()).len() == 2,
        "the copy has its -wal"
    );

    let mut s = Store::open(crashed.path().join("gk.db")).unwrap();
    assert_eq!(tasks(&mut s), "Tasks: [/] survives the crash");
    agent(&mut s, r#"{"op":"done"}"#);
    assert_eq!(version(&mut s), 2);
}

#[test]
fn another_programs_database_with_a_hot_journal_is_refused_untouched() {
    let dir = crashed_copy(|conn| {
        // Rollback journal, and a transaction big enough to spill into the
        // database file before it commits.
        conn.execute_batch(
            "PRAGMA journal_mode = DELETE;
             CREATE TABLE notes (body TEXT);
             INSERT INTO notes VALUES ('keep me');
             PRAGMA cache_size = 1;
             BEGIN;
             WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 50)
             INSERT INTO notes SELECT hex(randomblob(3000)) FROM n;",
        )
        .unwrap();
    });
    let path = dir.path().join("crashed.db");
    let before = snapshot(dir.path());
    assert!(before.iter().any(|(name, _)| name == "crashed.db-journal"));

    let err = open_err(&path);
    assert_eq!(err.kind(), ErrorKind::Storage);
    assert_untouched(snapshot(dir.path()), &before);
}

#[test]
fn a_database_whose_creation_was_killed_with_a_journal_behind_opens() {
    // A goalkeeper process killed while switching a new file to WAL leaves a
    // one-page database without an application id and a rollback journal.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("goalkeeper.db");
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.query_row("PRAGMA journal_mode = WAL", [], |_| Ok(()))
            .unwrap();
    }
    assert!(std::fs::metadata(&path).unwrap().len() <= 4096);
    std::fs::write(dir.path().join("goalkeeper.db-journal"), [0u8; 512]).unwrap();
    let mut store = Store::open(&path).expect("a half-created database of ours opens");
    agent(&mut store, r#"{"op":"init","items":["works"]}"#);
}

/// An early build of schema v6 (on main for twenty minutes) indexed whole
/// task texts as `tasks_by_content`. A database it migrated says v6 but
/// has no `tasks_by_prefix`, which the statement of a call on one task
/// names: v7 gives it the index, and the call that failed on it before
/// ("no such index") runs.
#[test]
fn a_database_an_early_v6_build_migrated_gets_the_index_it_lacks() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("early-v6.db");
    let items: Vec<String> = (0..300)
        .map(|i| format!("Task {i:03}: a step of the plan, long enough to keep its list long"))
        .collect();
    {
        let mut s = Store::open(&path).unwrap();
        let init = serde_json::json!({"op": "init", "items": items}).to_string();
        agent(&mut s, &init);
    }
    let indexes = |conn: &rusqlite::Connection| -> Vec<String> {
        let mut stmt = conn
            .prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'tasks' ORDER BY name")
            .unwrap();
        stmt.query_map([], |r| r.get(0))
            .unwrap()
            .map(|r| r.unwrap())
            .collect()
    };
    let version = |conn: &rusqlite::Connection| -> i64 {
        conn.query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap()
    };
    let latest = {
        let conn = rusqlite::Connection::open(&path).unwrap();
        let latest = version(&conn);
        conn.execute_batch(
            "DROP INDEX tasks_by_prefix;
             CREATE INDEX tasks_by_content ON tasks (session_id, content);
             PRAGMA user_version = 6;",
        )
        .unwrap();
        assert_eq!(indexes(&conn), ["tasks_by_content"]);
        latest
    };
    assert!(latest > 6, "{latest}");
    let mut s = Store::open(&path).unwrap();
    let call = format!(r#"{{"op":"done","task":"{}"}}"#, items[150]);
    let (text, is_error) = s
        .todo_answer(
            &session(),
            goalkeeper::todo::Call::Json(&call),
            goalkeeper::todo::Actor::Agent,
            &mut Caller::default(),
            NOW,
        )
        .map(|a| (a.text, a.is_error))
        .unwrap();
    assert!(!is_error, "{text}");
    assert!(text.contains("Overall: 1/300 done"), "{text}");
    assert_eq!(
        list(&mut s).phases[0].tasks[150].status,
        goalkeeper::todo::Status::Completed
    );
    drop(s);
    let conn = rusqlite::Connection::open(&path).unwrap();
    assert_eq!(version(&conn), latest);
    assert_eq!(indexes(&conn), ["tasks_by_prefix"]);
}
