//! Rows written other than by the store (a hand edit, an older schema, a
//! copy): the kept shape is forgotten, refused, recomputed or carried.

use super::*;
use crate::Store;
use crate::todo::{Actor, Call, ViewPage};

/// A store in a file with session `s` holding [`long_init`]'s list;
/// the directory goes when the first value is dropped.
fn long_store() -> (tempfile::TempDir, std::path::PathBuf, Store, SessionId) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("g.db");
    let mut store = Store::open(&db).unwrap();
    let s = SessionId::parse("s").unwrap();
    store
        .todo(
            &s,
            Call::Json(&long_init()),
            Actor::Agent,
            &mut crate::store::Caller::default(),
            1,
        )
        .unwrap();
    (dir, db, store, s)
}

fn long_init() -> String {
    let items: Vec<String> = (0..300)
        .map(|i| format!("task {i:03} with a text long enough to fill pages"))
        .collect();
    serde_json::json!({"op": "init", "list": [{"phase": "A", "items": items}]}).to_string()
}

/// A row written from outside the store (a hand edit) leaves the
/// session without a kept shape: its reads read the rows, and see the
/// edit, until the store writes the list again.
#[test]
fn a_row_written_from_outside_forgets_the_shape() {
    let (_dir, db, mut store, s) = long_store();
    let kept = |store: &Store| store.read(&s, |t| load(&t.tx, &s)).unwrap().1;
    assert!(kept(&store).is_some());
    rusqlite::Connection::open(&db)
        .unwrap()
        .execute("UPDATE tasks SET status = 'completed' WHERE pos < 5", [])
        .unwrap();
    assert_eq!(kept(&store), None);
    assert_eq!(store.read(&s, |tx| tx.status()).unwrap().1.closed, 5);
    let page = ViewPage {
        phase: None,
        page: 2,
    };
    let (text, _) = store
        .read(&s, |tx| {
            tx.todo_view(&page, &crate::store::Caller::default(), 0)
        })
        .unwrap();
    assert!(text.starts_with("Overall: 5/300 done, 295 open."), "{text}");
    store
        .todo(
            &s,
            Call::Json(r#"{"op":"done","task":"task 005 with a text long enough to fill pages"}"#),
            Actor::Agent,
            &mut crate::store::Caller::default(),
            2,
        )
        .unwrap();
    let shape = kept(&store).expect("written again");
    assert_eq!(shape.counts().closed, 6);
}

/// A phase row added from outside does not fit the kept shape (phase
/// rows have no trigger): the narrow reads refuse, naming the problem,
/// rather than show a list that is not there.
#[test]
fn a_phase_written_from_outside_is_refused_not_shown() {
    let (_dir, db, store, s) = long_store();
    rusqlite::Connection::open(&db)
        .unwrap()
        .execute(
            "INSERT INTO phases (session_id, pos, name) VALUES ('s', 7, 'Z')",
            [],
        )
        .unwrap();
    let page = ViewPage {
        phase: None,
        page: 2,
    };
    let err = store
        .read(&s, |tx| {
            tx.todo_view(&page, &crate::store::Caller::default(), 0)
        })
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("todo list of session s")
            && err.contains("its kept shape names other phases than its rows"),
        "{err}"
    );
    let err = store
        .read(&s, |tx| tx.todo_listed(10))
        .unwrap_err()
        .to_string();
    assert!(err.contains("its kept shape names other phases"), "{err}");
}

/// The migration to v5 computes the shape of every list already stored.
#[test]
fn the_migration_keeps_the_shape_of_every_stored_list() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("g.db");
    let s = SessionId::parse("s").unwrap();
    let expected = {
        let mut store = Store::open(&db).unwrap();
        store
            .todo(
                &s,
                Call::Json(&long_init()),
                Actor::Agent,
                &mut crate::store::Caller::default(),
                1,
            )
            .unwrap();
        store.todo(&s, Call::Json(r#"{"op":"block","task":"task 007 with a text long enough to fill pages","reason":"a key"}"#), Actor::Agent, &mut crate::store::Caller::default(), 2).unwrap();
        store.read(&s, |t| load(&t.tx, &s)).unwrap()
    };
    assert!(expected.1.is_some());
    {
        // Back to schema v4, as an older goalkeeper left it.
        let conn = rusqlite::Connection::open(&db).unwrap();
        for event in ["insert", "update", "delete"] {
            conn.execute_batch(&format!("DROP TRIGGER tasks_{event}_forget_shape"))
                .unwrap();
        }
        conn.execute_batch(
            "ALTER TABLE sessions DROP COLUMN todo_shape; DROP TABLE agents;
             ALTER TABLE events DROP COLUMN agent; PRAGMA user_version = 4;",
        )
        .unwrap();
    }
    let store = Store::open(&db).unwrap();
    assert_eq!(store.read(&s, |t| load(&t.tx, &s)).unwrap(), expected);
}

/// A copy of the database (a migration, a backup) keeps every shape.
#[test]
fn a_copy_keeps_the_shapes() {
    let mut store = Store::open_in_memory().unwrap();
    let s = SessionId::parse("s").unwrap();
    store
        .todo(
            &s,
            Call::Json(&long_init()),
            Actor::Agent,
            &mut crate::store::Caller::default(),
            1,
        )
        .unwrap();
    let mut target = Store::open_in_memory().unwrap();
    store.admin().copy_into(&mut target).unwrap();
    let of = |store: &Store| store.read(&s, |t| load(&t.tx, &s)).unwrap();
    assert!(of(&target).1.is_some());
    assert_eq!(of(&target), of(&store));
}
