//! Acceptance tests for the todo store (SPEC §7): versions, the event log
//! with failed agent calls, the pending todo error, undo, import, session
//! isolation and removal, and how database files are created and refused.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use common::*;
use goalkeeper::todo::Actor::{Agent, User};
use goalkeeper::todo::{Phase, Status, Task, TodoList};
use goalkeeper::{Error, ErrorKind, SessionId, Store};
use serde_json::json;

fn sid(id: &str) -> SessionId {
    SessionId::parse(id).unwrap()
}

fn log(store: &mut Store) -> Vec<goalkeeper::store::Event> {
    store.todo_log(&session(), 1_000).unwrap()
}

// ---- versions ------------------------------------------------------------

#[test]
fn the_version_counts_successful_mutations_only() {
    let mut s = store();
    assert_eq!(version(&mut s), 0);
    let steps: [(&str, goalkeeper::todo::Actor, i64); 9] = [
        (r#"{"op":"init","items":["a","b","c"]}"#, Agent, 1),
        (r#"{"op":"view"}"#, Agent, 1),
        (r#"{"op":"done","task":"a"}"#, Agent, 2),
        (r#"{"op":"done","task":"zzz"}"#, Agent, 2),
        (r#"{"op":"view"}"#, User, 2),
        (r#"{"op":"bogus"}"#, User, 2),
        (r#"{"op":"block","task":"b"}"#, User, 3),
        // A call that succeeds without changing anything is still a write.
        (r#"{"op":"done","task":"a"}"#, Agent, 4),
        (r#"{"op":"rm","task":"c"}"#, User, 5),
    ];
    for (body, actor, expected) in steps {
        let result = call(&mut s, body, actor);
        assert_eq!(result.details.version, expected, "{body}");
        assert_eq!(version(&mut s), expected, "{body}");
    }
}

#[test]
fn undo_and_import_are_versions_too() {
    let mut s = planned();
    s.todo_import(&session(), TodoList::default(), "TODO.md", NOW)
        .unwrap();
    assert_eq!(version(&mut s), 2);
    let undone = s.todo_undo(&session(), NOW).unwrap();
    assert_eq!(undone.details.version, 3);
    assert_eq!(version(&mut s), 3);
}

// ---- the event log -------------------------------------------------------

#[test]
fn a_successful_mutation_is_logged_with_its_canonical_payload() {
    let mut s = store();
    agent(&mut s, r#"{"items":[" a ","b"]}"#);
    user(&mut s, r#"{"op":"block","task":"b","reason":"  later  "}"#);
    let log = log(&mut s);
    assert_eq!(log.len(), 2);
    assert_eq!(log[0].actor, Agent);
    assert_eq!(log[0].op.as_deref(), Some("init"));
    assert_eq!(
        log[0].payload,
        json!({"op": "init", "list": [{"phase": "Tasks", "items": ["a", "b"]}]})
    );
    assert!(log[0].ok);
    assert_eq!(log[0].error, None);
    assert_eq!(log[0].version, Some(1));
    assert_eq!(log[0].at_ms, NOW);
    assert_eq!(log[1].actor, User);
    assert_eq!(
        log[1].payload,
        json!({"op": "block", "task": "b", "reason": "later"})
    );
    assert_eq!(log[1].version, Some(2));
    assert!(log[0].id < log[1].id);
}

#[test]
fn view_is_not_logged() {
    let mut s = planned();
    let before = log(&mut s);
    agent(&mut s, r#"{"op":"view"}"#);
    user(&mut s, r#"{"op":"view"}"#);
    assert_eq!(log(&mut s), before);
}

#[test]
fn a_rejected_agent_call_is_logged_and_left_pending() {
    let mut s = planned();
    let body = r#"{"op":"done","task":"Ship"}"#;
    let result = call(&mut s, body, Agent);
    assert!(result.is_error);
    let message = "task \"Ship\" not found; tasks are matched by their exact content (see `view`)";
    let last = log(&mut s).pop().unwrap();
    assert!(!last.ok);
    assert_eq!(last.actor, Agent);
    assert_eq!(last.op.as_deref(), Some("done"));
    assert_eq!(last.payload, json!({"op": "done", "task": "Ship"}));
    assert_eq!(last.error.as_deref(), Some(message));
    assert_eq!(last.version, None);
    assert_eq!(
        s.pending_todo_error(&session()).unwrap().as_deref(),
        Some(message)
    );
}

#[test]
fn a_rejected_agent_call_that_is_not_json_is_logged_as_text() {
    let mut s = planned();
    call(&mut s, "{oops", Agent);
    let last = log(&mut s).pop().unwrap();
    assert!(!last.ok);
    assert_eq!(last.op, None);
    assert_eq!(last.payload, json!("{oops"));
    assert!(
        last.error
            .as_deref()
            .unwrap()
            .starts_with("the call is not valid JSON")
    );
}

#[test]
fn every_error_of_a_rejected_call_is_logged() {
    let mut s = planned();
    call(&mut s, r#"{"op":"done","task":1,"x":2}"#, Agent);
    assert_eq!(
        log(&mut s).pop().unwrap().error.as_deref(),
        Some(
            "unknown field `x`; the accepted fields are op, list, task, phase, items, reason; \
             field `task` must be a string, not a number"
        )
    );
}

#[test]
fn the_next_successful_agent_call_clears_the_pending_error() {
    let mut s = planned();
    call(&mut s, r#"{"op":"start"}"#, Agent);
    call(&mut s, r#"{"op":"start","task":"x"}"#, Agent);
    assert_eq!(
        s.pending_todo_error(&session()).unwrap().as_deref(),
        Some("task \"x\" not found; tasks are matched by their exact content (see `view`)"),
        "the latest failure is the one pending"
    );
    // A read is not a fix: view writes nothing, so the error stays pending.
    agent(&mut s, r#"{"op":"view"}"#);
    assert!(s.pending_todo_error(&session()).unwrap().is_some());
    agent(&mut s, r#"{"op":"start","task":"Run tests"}"#);
    assert_eq!(s.pending_todo_error(&session()).unwrap(), None);
}

#[test]
fn a_rejected_user_call_logs_nothing_and_leaves_nothing_pending() {
    let mut s = planned();
    let before = log(&mut s);
    for body in [r#"{"op":"done","task":"Ship"}"#, "{oops", r#"{"op":"x"}"#] {
        let result = call(&mut s, body, User);
        assert!(result.is_error, "{body}");
    }
    assert_eq!(log(&mut s), before);
    assert_eq!(s.pending_todo_error(&session()).unwrap(), None);
}

#[test]
fn a_rejected_user_call_does_not_create_a_session() {
    let mut s = store();
    call(&mut s, r#"{"op":"done","task":"x"}"#, User);
    assert!(s.sessions().unwrap().is_empty());
    // An agent's failure is remembered, so its session exists.
    call(&mut s, r#"{"op":"done","task":"x"}"#, Agent);
    let sessions = s.sessions().unwrap();
    assert_eq!(sessions.len(), 1);
    assert_eq!(sessions[0].todo_version, 0);
    assert_eq!(sessions[0].events, 1);
}

#[test]
fn the_log_limit_keeps_the_latest_events_oldest_first() {
    let mut s = store();
    agent(&mut s, r#"{"op":"init","items":["a","b","c"]}"#);
    agent(&mut s, r#"{"op":"done","task":"a"}"#);
    agent(&mut s, r#"{"op":"done","task":"b"}"#);
    let last_two = s.todo_log(&session(), 2).unwrap();
    let versions: Vec<_> = last_two.iter().map(|e| e.version).collect();
    assert_eq!(versions, [Some(2), Some(3)]);
}

// ---- undo ----------------------------------------------------------------

#[test]
fn undo_walks_back_through_the_versions() {
    let mut s = planned();
    let v1 = tasks(&mut s);
    agent(&mut s, r#"{"op":"done","task":"Build core"}"#);
    let v2 = tasks(&mut s);
    user(&mut s, r#"{"op":"rm","task":"Run tests"}"#);

    let undone = s.todo_undo(&session(), NOW).unwrap();
    assert!(!undone.is_error);
    assert_eq!(undone.details.op.as_deref(), Some("undo"));
    assert_eq!(undone.details.version, 4);
    assert_eq!(tasks(&mut s), v2);
    assert_eq!(undone.details.phases, list(&mut s));

    s.todo_undo(&session(), NOW).unwrap();
    assert_eq!(tasks(&mut s), v1);
    assert_eq!(version(&mut s), 5);

    let to_empty = s.todo_undo(&session(), NOW).unwrap();
    assert!(list(&mut s).phases.is_empty());
    assert_eq!(to_empty.text(), "Todo list cleared.");
    assert_eq!(version(&mut s), 6);

    let refused = match s.todo_undo(&session(), NOW) {
        Ok(r) => panic!("undo past the start succeeded: {}", r.text()),
        Err(e) => e,
    };
    assert_eq!(refused.kind(), ErrorKind::Rejected);
    assert_eq!(
        refused.to_string(),
        "nothing to undo in session s: the todo list is at its first state"
    );
    assert_eq!(version(&mut s), 6);
}

#[test]
fn each_undo_is_recorded_as_a_new_event() {
    let mut s = planned();
    agent(&mut s, r#"{"op":"done","task":"Build core"}"#);
    s.todo_undo(&session(), NOW + 5).unwrap();
    let last = log(&mut s).pop().unwrap();
    assert_eq!(last.actor, User);
    assert_eq!(last.op.as_deref(), Some("undo"));
    assert_eq!(last.payload, json!({"op": "undo", "restored_version": 1}));
    assert!(last.ok);
    assert_eq!(last.version, Some(3));
    assert_eq!(last.at_ms, NOW + 5);
}

#[test]
fn a_change_after_an_undo_is_undone_first_then_history_continues() {
    let mut s = planned();
    let v1 = tasks(&mut s);
    agent(&mut s, r#"{"op":"done","task":"Build core"}"#);
    s.todo_undo(&session(), NOW).unwrap(); // back to v1, as v3
    agent(&mut s, r#"{"op":"start","task":"Write docs"}"#); // v4
    s.todo_undo(&session(), NOW).unwrap(); // undoes the start
    assert_eq!(tasks(&mut s), v1);
    // The earlier undo is not undone; the walk continues to the start.
    s.todo_undo(&session(), NOW).unwrap();
    assert!(list(&mut s).phases.is_empty());
}

#[test]
fn undo_of_a_session_without_history_is_refused_and_changes_nothing() {
    let mut s = store();
    let err = s.todo_undo(&session(), NOW).map(|_| ()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "nothing to undo in session s: the todo list is at its first state"
    );
    assert!(s.sessions().unwrap().is_empty());
    assert!(log(&mut s).is_empty());
}

#[test]
fn a_failed_agent_call_is_not_something_to_undo() {
    let mut s = planned();
    agent(&mut s, r#"{"op":"done","task":"Build core"}"#);
    let v2 = tasks(&mut s);
    call(&mut s, r#"{"op":"done","task":"Ship"}"#, Agent);
    s.todo_undo(&session(), NOW).unwrap();
    assert_ne!(tasks(&mut s), v2, "undo skipped back over the failure");
    assert!(tasks(&mut s).starts_with("Foundation: [/] Build core"));
}

// ---- import --------------------------------------------------------------

fn task(content: &str, status: Status) -> Task {
    let mut task = Task::pending(content);
    task.status = status;
    task
}

#[test]
fn import_replaces_the_list_normalized_and_is_logged() {
    let mut s = planned();
    let imported = TodoList::new(vec![Phase {
        name: "Imported".into(),
        tasks: vec![
            task("i1", Status::Completed),
            task("i2", Status::Pending),
            task("i3", Status::InProgress),
            task("i4", Status::InProgress),
        ],
    }]);
    let result = s.todo_import(&session(), imported, "TODO.md", NOW).unwrap();
    assert!(!result.is_error);
    assert_eq!(result.details.op.as_deref(), Some("import"));
    assert_eq!(result.details.version, 2);
    assert_eq!(tasks(&mut s), "Imported: [x] i1, [ ] i2, [/] i3, [ ] i4");
    let last = log(&mut s).pop().unwrap();
    assert_eq!(last.actor, User);
    assert_eq!(last.op.as_deref(), Some("import"));
    assert_eq!(last.payload, json!({"op": "import", "source": "TODO.md"}));
}

#[test]
fn import_promotes_when_nothing_is_in_progress() {
    let mut s = store();
    let imported = TodoList::new(vec![Phase {
        name: "P".into(),
        tasks: vec![task("a", Status::Blocked), task("b", Status::Pending)],
    }]);
    s.todo_import(&session(), imported, "TODO.md", NOW).unwrap();
    assert_eq!(tasks(&mut s), "P: [!] a, [/] b");
}

#[test]
fn import_refuses_an_invalid_list_and_changes_nothing() {
    let mut s = planned();
    let before = (list(&mut s), version(&mut s), log(&mut s));
    let mut noted = task("n", Status::Pending);
    noted.blocker = Some("stale".into());
    let cases = [
        (
            TodoList::new(vec![
                Phase {
                    name: "A".into(),
                    tasks: vec![Task::pending("x")],
                },
                Phase {
                    name: "B".into(),
                    tasks: vec![Task::pending("x")],
                },
            ]),
            "cannot import TODO.md: task \"x\" appears twice; nothing was imported",
        ),
        (
            TodoList::new(vec![Phase::new("A"), Phase::new("A")]),
            "cannot import TODO.md: phase \"A\" appears twice; nothing was imported",
        ),
        (
            TodoList::new(vec![Phase {
                name: " A".into(),
                tasks: vec![Task::pending(""), noted],
            }]),
            "cannot import TODO.md: phase name \" A\" has surrounding whitespace; \
             task content is empty; give some text; \
             task \"n\" has a blocker note but is pending; nothing was imported",
        ),
    ];
    for (list_in, message) in cases {
        let err = s
            .todo_import(&session(), list_in, "TODO.md", NOW)
            .map(|_| ())
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Rejected);
        assert_eq!(err.to_string(), message);
        assert_eq!((list(&mut s), version(&mut s), log(&mut s)), before);
    }
}

// ---- sessions ------------------------------------------------------------

#[test]
fn sessions_are_isolated() {
    let mut s = store();
    let (one, two) = (sid("one"), sid("two"));
    s.todo(
        &one,
        goalkeeper::todo::Call::Json(r#"{"op":"init","items":["a"]}"#),
        Agent,
        NOW,
    )
    .unwrap();
    s.todo(
        &two,
        goalkeeper::todo::Call::Json(r#"{"op":"init","items":["b","c"]}"#),
        User,
        NOW,
    )
    .unwrap();
    s.todo(
        &two,
        goalkeeper::todo::Call::Json(r#"{"op":"done","task":"b"}"#),
        User,
        NOW,
    )
    .unwrap();
    s.todo(
        &one,
        goalkeeper::todo::Call::Json(r#"{"op":"done","task":"b"}"#),
        Agent,
        NOW,
    )
    .unwrap();

    let (list_one, version_one) = s.todo_list(&one).unwrap();
    let (list_two, version_two) = s.todo_list(&two).unwrap();
    assert_eq!(show(&list_one), "Tasks: [/] a");
    assert_eq!(show(&list_two), "Tasks: [x] b, [/] c");
    assert_eq!((version_one, version_two), (1, 2));
    assert_eq!(s.todo_log(&one, 100).unwrap().len(), 2);
    assert_eq!(s.todo_log(&two, 100).unwrap().len(), 2);
    assert!(s.pending_todo_error(&one).unwrap().is_some());
    assert_eq!(s.pending_todo_error(&two).unwrap(), None);

    // Undo in one session leaves the other alone.
    s.todo_undo(&two, NOW).unwrap();
    assert_eq!(show(&s.todo_list(&one).unwrap().0), "Tasks: [/] a");
    assert_eq!(show(&s.todo_list(&two).unwrap().0), "Tasks: [/] b, [ ] c");
}

#[test]
fn sessions_lists_each_session_with_its_counts() {
    let mut s = store();
    s.todo(
        &sid("early"),
        goalkeeper::todo::Call::Json(r#"{"op":"init","items":["a","b"]}"#),
        Agent,
        NOW,
    )
    .unwrap();
    s.todo(
        &sid("late"),
        goalkeeper::todo::Call::Json(r#"{"op":"init","items":["c"]}"#),
        Agent,
        NOW + 10,
    )
    .unwrap();
    s.todo(
        &sid("late"),
        goalkeeper::todo::Call::Json(r#"{"op":"done","task":"c"}"#),
        Agent,
        NOW + 20,
    )
    .unwrap();
    let sessions = s.sessions().unwrap();
    let summary: Vec<_> = sessions
        .iter()
        .map(|i| {
            (
                i.id.as_str(),
                i.created_ms,
                i.updated_ms,
                i.todo_version,
                i.todos.total,
                i.todos.closed,
                i.events,
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            ("late", NOW + 10, NOW + 20, 2, 1, 1, 2),
            ("early", NOW, NOW, 1, 2, 0, 1)
        ]
    );
    assert_eq!(s.session(&sid("early")).unwrap().unwrap().events, 1);
    assert_eq!(s.session(&sid("nobody")).unwrap(), None);
}

#[test]
fn remove_session_deletes_its_list_and_log_only() {
    let mut s = planned();
    let other = sid("other");
    s.todo(
        &other,
        goalkeeper::todo::Call::Json(r#"{"op":"init","items":["x"]}"#),
        Agent,
        NOW,
    )
    .unwrap();
    s.remove_session(&session()).unwrap();
    assert_eq!(s.todo_list(&session()).unwrap(), (TodoList::default(), 0));
    assert!(log(&mut s).is_empty());
    assert_eq!(s.todo_list(&other).unwrap().1, 1);
    let ids: Vec<_> = s.sessions().unwrap().into_iter().map(|i| i.id).collect();
    assert_eq!(ids, ["other"]);

    let err = s.remove_session(&session()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Rejected);
    assert_eq!(
        err.to_string(),
        "session s not found; `session list` shows the sessions"
    );

    // The id can be used again from scratch.
    agent(&mut s, r#"{"op":"init","items":["again"]}"#);
    assert_eq!(version(&mut s), 1);
}

#[test]
fn a_session_id_outside_the_alphabet_is_refused() {
    for id in ["", "a b", "a/b", "é", &"x".repeat(129)] {
        let err = SessionId::parse(id).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Usage);
        assert_eq!(
            err.to_string(),
            format!(
                "invalid session id {id:?}: use 1-128 characters from A-Z, a-z, 0-9, '.', '_', ':' and '-'"
            )
        );
    }
    assert!(SessionId::parse(&"x".repeat(128)).is_ok());
    assert!(SessionId::parse("claude:0f8e-1.2_x").is_ok());
}

// ---- database files ------------------------------------------------------

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
    let path = dir.path().join("nested/dir/goalkeeper.db");
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
    assert_eq!(s.integrity_check().unwrap(), "ok");
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
             it was left untouched. Point --db or GOALKEEPER_DB at another file",
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
            "{} is not a goalkeeper database (SQLite cannot read it as a database); \
             it was left untouched. Point --db or GOALKEEPER_DB at another file",
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
             it was left untouched. Point --db or GOALKEEPER_DB at another file",
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
    let mut s = Store::open(&live.path().join("gk.db")).unwrap();
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

    let mut s = Store::open(&crashed.path().join("gk.db")).unwrap();
    assert_eq!(tasks(&mut s), "Tasks: [/] survives the crash");
    agent(&mut s, r#"{"op":"done"}"#);
    assert_eq!(version(&mut s), 2);
}

#[test]
#[ignore = "a read-write connection rolls back another program's hot journal before \
            goalkeeper can look at the file; refusing it untouched needs a read-only probe \
            and a decision on what to say about a file that cannot be read without recovery"]
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
