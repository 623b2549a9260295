//! DESIGN.md §2.2: a call that changes nothing is not a change. It succeeds,
//! says so, and stores no new version and no event. (That it is no
//! progress for the runaway guard, the reminders and the re-injection is
//! tested end to end in `tests/it/no_progress.rs`.)

use goalkeeper::Store;
use goalkeeper::todo::Actor::{self, Agent, User};

use super::common::*;

/// Runs `json`, expects a no-op, and checks nothing was written.
fn no_op(s: &mut Store, json: &str, actor: Actor) {
    let (before, version) = s.read(&session(), |tx| tx.todo_list()).unwrap();
    let events = s.read(&session(), |tx| tx.event_log(10_000)).unwrap();
    let result = call(s, json, actor);
    assert!(!result.is_error, "{json}:\n{}", result.text());
    assert_eq!(result.details.version, version, "{json}");
    assert!(result.details.completed_tasks.is_empty(), "{json}");
    let (after, version_after) = s.read(&session(), |tx| tx.todo_list()).unwrap();
    assert_eq!(json_of(&after), json_of(&before), "{json}");
    assert_eq!(version_after, version, "{json}");
    assert_eq!(
        s.read(&session(), |tx| tx.event_log(10_000)).unwrap(),
        events,
        "{json}"
    );
    assert!(
        result.text().starts_with(&format!(
            "No change: the list was already in that state, so it stays at version {version} and this call is not progress.\n"
        )),
        "{json}:\n{}",
        result.text()
    );
}

#[test]
fn start_on_the_task_in_progress() {
    let mut s = planned();
    no_op(&mut s, r#"{"op":"start","task":"Build core"}"#, Agent);
    no_op(&mut s, r#"{"op":"start","task":"Build core"}"#, User);
}

#[test]
fn done_on_a_completed_task_or_a_closed_phase() {
    let mut s = planned();
    agent(&mut s, r#"{"op":"done","phase":"Foundation"}"#);
    no_op(&mut s, r#"{"op":"done","task":"Build core"}"#, Agent);
    no_op(&mut s, r#"{"op":"done","phase":"Foundation"}"#, Agent);
}

#[test]
fn unblock_on_a_task_that_is_not_blocked() {
    let mut s = planned();
    no_op(&mut s, r#"{"op":"unblock","task":"Run tests"}"#, Agent);
    no_op(&mut s, r#"{"op":"unblock","phase":"Verification"}"#, User);
}

#[test]
fn block_again_with_the_same_note() {
    let mut s = planned();
    agent(&mut s, r#"{"op":"block","task":"Run tests","reason":"CI"}"#);
    no_op(
        &mut s,
        r#"{"op":"block","task":"Run tests","reason":"CI"}"#,
        Agent,
    );
    no_op(&mut s, r#"{"op":"block","task":"Run tests"}"#, Agent);
    // A new note is a change.
    let before = version(&mut s);
    agent(
        &mut s,
        r#"{"op":"block","task":"Run tests","reason":"CI down"}"#,
    );
    assert_eq!(version(&mut s), before + 1);
}

#[test]
fn an_agent_rm_that_leaves_everything_as_it_was() {
    let mut s = planned();
    agent(&mut s, r#"{"op":"done","task":"Build core"}"#);
    agent(&mut s, r#"{"op":"block","task":"Run tests","reason":"CI"}"#);
    // A completed task, a blocked task: an agent's `rm` leaves both alone.
    no_op(&mut s, r#"{"op":"rm","task":"Build core"}"#, Agent);
    no_op(&mut s, r#"{"op":"rm","task":"Run tests"}"#, Agent);
    agent(&mut s, r#"{"op":"rm","task":"Write docs"}"#);
    no_op(&mut s, r#"{"op":"rm","task":"Write docs"}"#, Agent);
    no_op(&mut s, r#"{"op":"drop","task":"Write docs"}"#, Agent);
}

#[test]
fn an_init_that_rebuilds_the_same_list() {
    let mut s = planned();
    no_op(
        &mut s,
        r#"{"op":"init","list":[
            {"phase":"Foundation","items":["Build core","Add edge cases"]},
            {"phase":"Verification","items":["Run tests","Write docs"]}]}"#,
        Agent,
    );
}

#[test]
fn a_bulk_op_on_an_empty_list() {
    let mut s = store();
    for body in [r#"{"op":"done"}"#, r#"{"op":"drop"}"#, r#"{"op":"rm"}"#] {
        no_op(&mut s, body, Agent);
        no_op(&mut s, body, User);
    }
    assert_eq!(
        call(&mut s, r#"{"op":"done"}"#, Agent).text(),
        "No change: the list was already in that state, so it stays at version 0 and this call is not progress.\nTodo list is empty."
    );
}

#[test]
fn a_no_op_after_a_rejected_call_clears_the_error_reminder() {
    let mut s = planned();
    call(&mut s, r#"{"op":"done","task":"Nope"}"#, Agent);
    assert!(
        s.read(&session(), |tx| tx.pending_todo_error())
            .unwrap()
            .is_some()
    );
    no_op(&mut s, r#"{"op":"start","task":"Build core"}"#, Agent);
    assert_eq!(
        s.read(&session(), |tx| tx.pending_todo_error()).unwrap(),
        None
    );
}

#[test]
fn a_change_is_still_a_change() {
    let mut s = planned();
    let events = s.read(&session(), |tx| tx.event_log(100)).unwrap().len();
    let result = agent(&mut s, r#"{"op":"start","task":"Run tests"}"#);
    assert_eq!(result.details.version, 2);
    assert!(!result.text().contains("No change"), "{}", result.text());
    assert_eq!(
        s.read(&session(), |tx| tx.event_log(100)).unwrap().len(),
        events + 1
    );
}
