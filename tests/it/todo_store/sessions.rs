//! Sessions: isolated from each other, listed with their counts, removable.

use goalkeeper::ErrorKind;
use goalkeeper::SessionId;
use goalkeeper::store::Caller;
use goalkeeper::todo::Actor::{Agent, User};
use goalkeeper::todo::{Call, TodoList};

use super::common::*;
use super::{log, sid};

#[test]
fn sessions_are_isolated() {
    let mut s = store();
    let (one, two) = (sid("one"), sid("two"));
    s.todo(
        &one,
        Call::Json(r#"{"op":"init","items":["a"]}"#),
        Agent,
        &mut Caller::default(),
        NOW,
    )
    .unwrap();
    s.todo(
        &two,
        Call::Json(r#"{"op":"init","items":["b","c"]}"#),
        User,
        &mut Caller::default(),
        NOW,
    )
    .unwrap();
    s.todo(
        &two,
        Call::Json(r#"{"op":"done","task":"b"}"#),
        User,
        &mut Caller::default(),
        NOW,
    )
    .unwrap();
    s.todo(
        &one,
        Call::Json(r#"{"op":"done","task":"b"}"#),
        Agent,
        &mut Caller::default(),
        NOW,
    )
    .unwrap();

    let (list_one, version_one) = s.read(&one, |tx| tx.todo_list()).unwrap();
    let (list_two, version_two) = s.read(&two, |tx| tx.todo_list()).unwrap();
    assert_eq!(show(&list_one), "Tasks: [/] a");
    assert_eq!(show(&list_two), "Tasks: [x] b, [/] c");
    assert_eq!((version_one, version_two), (1, 2));
    assert_eq!(s.read(&one, |tx| tx.event_log(100)).unwrap().len(), 2);
    assert_eq!(s.read(&two, |tx| tx.event_log(100)).unwrap().len(), 2);
    assert!(
        s.read(&one, |tx| tx.pending_todo_error())
            .unwrap()
            .is_some()
    );
    assert_eq!(s.read(&two, |tx| tx.pending_todo_error()).unwrap(), None);

    // Undo in one session leaves the other alone.
    s.write(&two, |tx| tx.todo_undo(NOW)).unwrap();
    assert_eq!(
        show(&s.read(&one, |tx| tx.todo_list()).unwrap().0),
        "Tasks: [/] a"
    );
    assert_eq!(
        show(&s.read(&two, |tx| tx.todo_list()).unwrap().0),
        "Tasks: [/] b, [ ] c"
    );
}

#[test]
fn sessions_lists_each_session_with_its_counts() {
    let mut s = store();
    s.todo(
        &sid("early"),
        Call::Json(r#"{"op":"init","items":["a","b"]}"#),
        Agent,
        &mut Caller::default(),
        NOW,
    )
    .unwrap();
    s.todo(
        &sid("late"),
        Call::Json(r#"{"op":"init","items":["c"]}"#),
        Agent,
        &mut Caller::default(),
        NOW + 10,
    )
    .unwrap();
    s.todo(
        &sid("late"),
        Call::Json(r#"{"op":"done","task":"c"}"#),
        Agent,
        &mut Caller::default(),
        NOW + 20,
    )
    .unwrap();
    let sessions = s.admin().sessions().unwrap();
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
    assert_eq!(
        s.read(&sid("early"), |tx| tx.info())
            .unwrap()
            .unwrap()
            .events,
        1
    );
    assert_eq!(s.read(&sid("nobody"), |tx| tx.info()).unwrap(), None);
}

#[test]
fn remove_session_deletes_its_list_and_log_only() {
    let mut s = planned();
    let other = sid("other");
    s.todo(
        &other,
        Call::Json(r#"{"op":"init","items":["x"]}"#),
        Agent,
        &mut Caller::default(),
        NOW,
    )
    .unwrap();
    s.admin().remove_session(&session()).unwrap();
    assert_eq!(
        s.read(&session(), |tx| tx.todo_list()).unwrap(),
        (TodoList::default(), 0)
    );
    assert!(log(&mut s).is_empty());
    assert_eq!(s.read(&other, |tx| tx.todo_list()).unwrap().1, 1);
    let ids: Vec<_> = s
        .admin()
        .sessions()
        .unwrap()
        .into_iter()
        .map(|i| i.id)
        .collect();
    assert_eq!(ids, ["other"]);

    let err = s.admin().remove_session(&session()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Rejected);
    assert_eq!(err.to_string(), "session s not found");

    // The id can be used again from scratch.
    agent(&mut s, r#"{"op":"init","items":["again"]}"#);
    assert_eq!(version(&mut s), 1);
}

#[test]
fn a_session_id_outside_the_alphabet_is_refused() {
    let long = "x".repeat(129);
    // Beyond 128 characters the id is echoed cut, with its length.
    let cut = format!("\"{}\"\u{2026} (129 characters)", "x".repeat(128));
    for (id, shown) in [
        ("", "\"\"".to_owned()),
        ("a b", "\"a b\"".to_owned()),
        ("a/b", "\"a/b\"".to_owned()),
        ("é", "\"é\"".to_owned()),
        (long.as_str(), cut),
    ] {
        let err = SessionId::parse(id).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Usage);
        assert_eq!(
            err.to_string(),
            format!(
                "invalid session id {shown}: use 1-128 characters from A-Z, a-z, 0-9, '.', '_', ':' and '-'"
            )
        );
    }
    assert!(SessionId::parse(&"x".repeat(128)).is_ok());
    assert!(SessionId::parse("claude:0f8e-1.2_x").is_ok());
}
