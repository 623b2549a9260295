//! Migration from v3, where every todo event kept the whole list.

use std::path::Path;

use rusqlite::{Connection, TransactionBehavior};

use super::STEPS;
use crate::SessionId;
use crate::store::{APPLICATION_ID, Store, UNDO_DEPTH};
use crate::todo::{self, Actor, Call, TodoList};

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
    let (list, version) = store.read(&session, |tx| tx.todo_list()).unwrap();
    assert_eq!(version, versions);
    assert_eq!(&list, history.states.last().unwrap());
    assert_eq!(
        store
            .read(&session, |tx| tx.goal())
            .unwrap()
            .unwrap()
            .objective,
        "Ship it"
    );
    assert_eq!(
        store.read(&session, |tx| tx.mark("k")).unwrap().as_deref(),
        Some("v")
    );
    assert_eq!(store.admin().pointer("p").unwrap().as_deref(), Some("s"));
    assert_eq!(
        store.read(&session, |tx| tx.event_log(1000)).unwrap().len(),
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
            .write(&session, |tx| tx.todo_undo(0))
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
    let (before, v) = store.read(&session, |tx| tx.todo_list()).unwrap();
    let refused = store
        .write(&session, |tx| tx.todo_undo(0))
        .map(|_| ())
        .unwrap_err();
    assert!(
        refused.to_string().starts_with(&format!(
            "nothing more to undo in session s: undo reaches back {UNDO_DEPTH} versions of the list"
        )),
        "{refused}"
    );
    assert_eq!(
        store.read(&session, |tx| tx.todo_list()).unwrap(),
        (before, v)
    );
    assert_eq!(store.admin().integrity_check().unwrap(), "ok");
}

/// The steps from v3 write the rows of v4's columns; the later steps add
/// the rest, and the store keeps each list's shape once the schema is up
/// to date: an upgraded database has the tables, columns and kept shapes
/// a database written by this build has.
#[test]
fn an_upgraded_list_has_the_latest_columns_and_its_shape_kept() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("v3.db");
    let history = v3_database(&db, 12);
    let session = SessionId::parse("s").unwrap();
    let columns = |conn: &Connection| -> Vec<String> {
        let mut stmt = conn
            .prepare("SELECT name FROM pragma_table_info('tasks') ORDER BY cid")
            .unwrap();
        stmt.query_map([], |r| r.get(0))
            .unwrap()
            .map(|r| r.unwrap())
            .collect()
    };
    let store = Store::open(&db).unwrap();
    let (list, _) = store.read(&session, |tx| tx.todo_list()).unwrap();
    assert_eq!(&list, history.states.last().unwrap());
    drop(store);
    let upgraded = Connection::open(&db).unwrap();
    let fresh = Connection::open_in_memory().unwrap();
    super::migrate(&fresh, None).unwrap();
    assert_eq!(columns(&upgraded), columns(&fresh));
    assert!(columns(&upgraded).contains(&"check_cmd".to_owned()));
    let shape: Option<String> = upgraded
        .query_row("SELECT todo_shape FROM sessions WHERE id = 's'", [], |r| {
            r.get(0)
        })
        .unwrap();
    let kept: crate::store::shape::Shape =
        serde_json::from_str(&shape.expect("a kept shape")).unwrap();
    let keyed = crate::store::patch::KeyedList::positional(list);
    assert_eq!(kept, crate::store::shape::Shape::of_keyed(&keyed));
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
            let before = store.read(&session, |tx| tx.todo_list()).unwrap();
            proptest::prop_assert_eq!(before.1 as usize, current);
            let outcome = store.write(&session, |tx| tx.todo_undo(0));
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
                    proptest::prop_assert_eq!(store.read(&session, |tx| tx.todo_list()).unwrap(), before);
                    break;
                }
            }
        }
        proptest::prop_assert_eq!(Store::open(&db).unwrap().admin().integrity_check().unwrap(), "ok");
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
