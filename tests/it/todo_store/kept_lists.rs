//! A caller that keeps its lists (`Caller::keep_lists`, the MCP server's)
//! answers exactly as one that reads every list back: whatever another
//! connection or another method of the same store wrote in between, the
//! next call sees it.

use goalkeeper::store::Caller;
use goalkeeper::todo::Actor::{Agent, User};
use goalkeeper::todo::{Call, Phase, Task, TodoList};
use goalkeeper::{SessionId, Store};

use super::sid;
use crate::common::*;

/// A connection and a caller that keeps its lists, as an MCP server has.
struct Server {
    store: Store,
    caller: Caller,
}

fn kept(db: &std::path::Path) -> Server {
    let mut caller = Caller::default();
    caller.keep_lists();
    Server {
        store: Store::open(db).unwrap(),
        caller,
    }
}

/// One call, checked against the list a fresh store reads.
fn call(server: &mut Server, db: &std::path::Path, s: &SessionId, json: &str) -> TodoList {
    let result = server
        .store
        .todo(s, Call::Json(json), Agent, &mut server.caller, NOW)
        .unwrap();
    assert!(!result.is_error, "{json}: {}", result.text());
    let (fresh, version) = Store::open(db)
        .unwrap()
        .read(s, |tx| tx.todo_list())
        .unwrap();
    assert_eq!(result.details.phases, fresh, "{json}");
    assert_eq!(result.details.version, version, "{json}");
    fresh
}

#[test]
fn another_connections_writes_are_seen() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("g.db");
    let s = session();
    let mut server = kept(&db);
    call(
        &mut server,
        &db,
        &s,
        r#"{"op":"init","items":["a","b","c"]}"#,
    );
    call(&mut server, &db, &s, r#"{"op":"start","task":"a"}"#);
    // Another process finishes `a` and removes `c`.
    let mut other = Store::open(&db).unwrap();
    other
        .todo(
            &s,
            Call::Json(r#"{"op":"done","task":"a"}"#),
            User,
            &mut Caller::default(),
            NOW,
        )
        .unwrap();
    other
        .todo(
            &s,
            Call::Json(r#"{"op":"rm","task":"c"}"#),
            User,
            &mut Caller::default(),
            NOW,
        )
        .unwrap();
    drop(other);
    let list = call(&mut server, &db, &s, r#"{"op":"view"}"#);
    assert_eq!(show(&list), "Tasks: [x] a, [/] b");
    let list = call(&mut server, &db, &s, r#"{"op":"done","task":"b"}"#);
    assert_eq!(show(&list), "Tasks: [x] a, [x] b");
    // Removed and written again elsewhere up to the same version: the
    // version alone cannot tell the lists apart.
    let (_, version) = server.store.read(&s, |tx| tx.todo_list()).unwrap();
    let mut other = Store::open(&db).unwrap();
    other.admin().remove_session(&s).unwrap();
    other
        .todo(
            &s,
            Call::Json(r#"{"op":"init","items":["z"]}"#),
            User,
            &mut Caller::default(),
            NOW,
        )
        .unwrap();
    for i in 2..=version {
        let append = format!(r#"{{"op":"append","phase":"Tasks","items":["z{i}"]}}"#);
        other
            .todo(&s, Call::Json(&append), User, &mut Caller::default(), NOW)
            .unwrap();
    }
    assert_eq!(other.read(&s, |tx| tx.todo_list()).unwrap().1, version);
    drop(other);
    let list = call(&mut server, &db, &s, r#"{"op":"view"}"#);
    assert_eq!(list.phases[0].tasks[0].content, "z");
}

#[test]
fn the_same_stores_other_writes_are_seen() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("g.db");
    let s = session();
    let mut server = kept(&db);
    call(&mut server, &db, &s, r#"{"op":"init","items":["a","b"]}"#);
    call(&mut server, &db, &s, r#"{"op":"done","task":"a"}"#);
    server.store.write(&s, |tx| tx.todo_undo(NOW)).unwrap();
    let list = call(&mut server, &db, &s, r#"{"op":"view"}"#);
    assert_eq!(show(&list), "Tasks: [/] a, [ ] b");
    // Removed and written again by this store, not by a todo call, up to
    // the version the kept list had: the version alone cannot tell.
    let (_, version) = server.store.read(&s, |tx| tx.todo_list()).unwrap();
    server.store.admin().remove_session(&s).unwrap();
    let other = TodoList::new(vec![Phase {
        name: "Other".into(),
        tasks: vec![Task::pending("x")],
    }]);
    for _ in 0..version {
        server
            .store
            .write(&s, |tx| {
                tx.todo_import(other.clone(), "test", &Caller::default(), NOW)
            })
            .unwrap();
    }
    assert_eq!(
        server.store.read(&s, |tx| tx.todo_list()).unwrap().1,
        version
    );
    let list = call(&mut server, &db, &s, r#"{"op":"view"}"#);
    assert_eq!(show(&list), "Other: [/] x");
    // A rejected call leaves the list; the next one still sees it.
    let rejected = server
        .store
        .todo(
            &s,
            Call::Json(r#"{"op":"done","task":"nope"}"#),
            Agent,
            &mut server.caller,
            NOW,
        )
        .unwrap();
    assert!(rejected.is_error);
    let list = call(
        &mut server,
        &db,
        &s,
        r#"{"op":"append","phase":"Other","items":["y"]}"#,
    );
    assert_eq!(show(&list), "Other: [/] x, [ ] y");
}

#[test]
fn sessions_do_not_share_a_kept_list() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("g.db");
    let (one, two) = (sid("one"), sid("two"));
    let mut server = kept(&db);
    call(&mut server, &db, &one, r#"{"op":"init","items":["a"]}"#);
    let list = call(&mut server, &db, &two, r#"{"op":"view"}"#);
    assert_eq!(list, TodoList::default());
    call(&mut server, &db, &two, r#"{"op":"init","items":["b"]}"#);
    let list = call(&mut server, &db, &one, r#"{"op":"done","task":"a"}"#);
    assert_eq!(show(&list), "Tasks: [x] a");
}

/// A kept list stays right when calls are answered without it
/// (`Store::todo_answer`, as the MCP server sends them): on a long list
/// those run on the rows they touch, and the kept list takes their rows;
/// another connection's write in between is still seen.
#[test]
fn calls_answered_without_the_list_keep_it_right() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("g.db");
    let s = session();
    let mut server = kept(&db);
    let task = |i: usize| format!("Task {i:03}: a text long enough to keep the summary bounded");
    let items: Vec<String> = (0..120).map(task).collect();
    let init = serde_json::json!({"op": "init", "items": items}).to_string();
    call(&mut server, &db, &s, &init);
    let answer = |server: &mut Server, json: String| {
        let answer = server
            .store
            .todo_answer(&s, Call::Json(&json), Agent, &mut server.caller, NOW)
            .unwrap();
        assert!(!answer.is_error, "{json}: {}", answer.text);
        answer
    };
    let done = answer(
        &mut server,
        format!(r#"{{"op":"done","task":"{}"}}"#, task(0)),
    );
    assert_eq!(
        (done.op.as_deref(), done.version, done.completed_tasks),
        (Some("done"), 2, 1)
    );
    answer(
        &mut server,
        format!(r#"{{"op":"block","task":"{}"}}"#, task(5)),
    );
    // Another process starts task 9.
    let mut other = Store::open(&db).unwrap();
    let start = format!(r#"{{"op":"start","task":"{}"}}"#, task(9));
    other
        .todo(&s, Call::Json(&start), User, &mut Caller::default(), NOW)
        .unwrap();
    drop(other);
    answer(
        &mut server,
        format!(r#"{{"op":"drop","task":"{}"}}"#, task(2)),
    );
    // The kept list answers the view; `call` checks it against the rows.
    let list = call(&mut server, &db, &s, r#"{"op":"view"}"#);
    let status = |i: usize| list.phases[0].tasks[i].status;
    use goalkeeper::todo::Status::*;
    assert_eq!(
        [status(0), status(1), status(2), status(5), status(9)],
        [Completed, Pending, Abandoned, Blocked, InProgress]
    );
}
