//! `todo undo`: walks back through the versions, each undo a new event.

use goalkeeper::ErrorKind;
use goalkeeper::todo::Actor::{Agent, User};
use serde_json::json;

use super::common::*;
use super::log;

#[test]
fn undo_walks_back_through_the_versions() {
    let mut s = planned();
    let v1 = tasks(&mut s);
    agent(&mut s, r#"{"op":"done","task":"Build core"}"#);
    let v2 = tasks(&mut s);
    user(&mut s, r#"{"op":"rm","task":"Run tests"}"#);

    let undone = s.write(&session(), |tx| tx.todo_undo(NOW)).unwrap();
    assert!(!undone.is_error);
    assert_eq!(undone.details.op.as_deref(), Some("undo"));
    assert_eq!(undone.details.version, 4);
    assert_eq!(tasks(&mut s), v2);
    assert_eq!(undone.details.phases, list(&mut s));

    s.write(&session(), |tx| tx.todo_undo(NOW)).unwrap();
    assert_eq!(tasks(&mut s), v1);
    assert_eq!(version(&mut s), 5);

    let to_empty = s.write(&session(), |tx| tx.todo_undo(NOW)).unwrap();
    assert!(list(&mut s).phases.is_empty());
    assert_eq!(to_empty.text(), "Todo list cleared.");
    assert_eq!(version(&mut s), 6);

    let refused = match s.write(&session(), |tx| tx.todo_undo(NOW)) {
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
    s.write(&session(), |tx| tx.todo_undo(NOW + 5)).unwrap();
    let last = log(&mut s).pop().unwrap();
    assert_eq!(last.actor, User.as_str());
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
    s.write(&session(), |tx| tx.todo_undo(NOW)).unwrap(); // back to v1, as v3
    agent(&mut s, r#"{"op":"start","task":"Write docs"}"#); // v4
    s.write(&session(), |tx| tx.todo_undo(NOW)).unwrap(); // undoes the start
    assert_eq!(tasks(&mut s), v1);
    // The earlier undo is not undone; the walk continues to the start.
    s.write(&session(), |tx| tx.todo_undo(NOW)).unwrap();
    assert!(list(&mut s).phases.is_empty());
}

#[test]
fn undo_of_a_session_without_history_is_refused_and_changes_nothing() {
    let mut s = store();
    let err = s
        .write(&session(), |tx| tx.todo_undo(NOW))
        .map(|_| ())
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "nothing to undo in session s: the todo list is at its first state"
    );
    assert!(s.admin().sessions().unwrap().is_empty());
    assert!(log(&mut s).is_empty());
}

#[test]
fn a_failed_agent_call_is_not_something_to_undo() {
    let mut s = planned();
    agent(&mut s, r#"{"op":"done","task":"Build core"}"#);
    let v2 = tasks(&mut s);
    call(&mut s, r#"{"op":"done","task":"Ship"}"#, Agent);
    s.write(&session(), |tx| tx.todo_undo(NOW)).unwrap();
    assert_ne!(tasks(&mut s), v2, "undo skipped back over the failure");
    assert!(tasks(&mut s).starts_with("Foundation: [/] Build core"));
}
