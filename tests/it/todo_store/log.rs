//! Versions count successful mutations; the event log records them and
//! every failed agent call; the pending todo error follows the agent.

use goalkeeper::store::Caller;
use goalkeeper::todo::Actor::{Agent, User};
use goalkeeper::todo::TodoList;
use serde_json::json;

use super::common::*;
use super::log;

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
        // A call that succeeds without changing anything is no new
        // version (DESIGN.md §2.2).
        (r#"{"op":"done","task":"a"}"#, Agent, 3),
        (r#"{"op":"rm","task":"c"}"#, User, 4),
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
    s.write(&session(), |tx| {
        tx.todo_import(TodoList::default(), "TODO.md", &Caller::default(), NOW)
    })
    .unwrap();
    assert_eq!(version(&mut s), 2);
    let undone = s.write(&session(), |tx| tx.todo_undo(NOW)).unwrap();
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
    assert_eq!(log[0].actor, Agent.as_str());
    assert_eq!(log[0].op.as_deref(), Some("init"));
    assert_eq!(
        log[0].payload,
        json!({"op": "init", "list": [{"phase": "Tasks", "items": ["a", "b"]}]})
    );
    assert!(log[0].ok);
    assert_eq!(log[0].error, None);
    assert_eq!(log[0].version, Some(1));
    assert_eq!(log[0].at_ms, NOW);
    assert_eq!(log[1].actor, User.as_str());
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
    assert_eq!(last.actor, Agent.as_str());
    assert_eq!(last.op.as_deref(), Some("done"));
    assert_eq!(last.payload, json!({"op": "done", "task": "Ship"}));
    assert_eq!(last.error.as_deref(), Some(message));
    assert_eq!(last.version, None);
    assert_eq!(
        s.read(&session(), |tx| tx.pending_todo_error())
            .unwrap()
            .as_deref(),
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
    call(&mut s, r#"{"op":"done","task":true,"x":2}"#, Agent);
    assert_eq!(
        log(&mut s).pop().unwrap().error.as_deref(),
        Some(
            "unknown field `x`; the accepted fields are op, list, task, phase, items, reason, after, page; \
             field `task` must be a string, not a boolean"
        )
    );
}

#[test]
fn the_next_successful_agent_call_clears_the_pending_error() {
    let mut s = planned();
    call(&mut s, r#"{"op":"start"}"#, Agent);
    call(&mut s, r#"{"op":"start","task":"x"}"#, Agent);
    assert_eq!(
        s.read(&session(), |tx| tx.pending_todo_error())
            .unwrap()
            .as_deref(),
        Some("task \"x\" not found; tasks are matched by their exact content (see `view`)"),
        "the latest failure is the one pending"
    );
    // A read is not a fix: view writes nothing, so the error stays pending.
    agent(&mut s, r#"{"op":"view"}"#);
    assert!(
        s.read(&session(), |tx| tx.pending_todo_error())
            .unwrap()
            .is_some()
    );
    agent(&mut s, r#"{"op":"start","task":"Run tests"}"#);
    assert_eq!(
        s.read(&session(), |tx| tx.pending_todo_error()).unwrap(),
        None
    );
}

/// Another agent's refused call is its own: the log names it, the main
/// agent gets no reminder for it, and a named agent's success does not
/// settle the main agent's pending one.
#[test]
fn a_refused_call_is_logged_as_its_agents_and_reminds_only_the_main_agent() {
    let mut s = planned();
    let mut caller = caller_as(Some("w2"));
    agent_by(&mut s, &mut caller, r#"{"op":"start","task":"Run tests"}"#);
    caller = caller_as(Some("w3"));
    let refused = r#"{"op":"done","task":"Run tests"}"#;
    let before = (json_of(&list(&mut s)), version(&mut s));
    let result = call_by(&mut s, &mut caller, refused, Agent);
    assert!(result.is_error);
    assert_eq!((json_of(&list(&mut s)), version(&mut s)), before);
    assert_eq!(
        s.read(&session(), |tx| tx.pending_todo_error()).unwrap(),
        None
    );
    // It is w3's, for a host that gives w3 a prompt of its own.
    let w3_mark = "todo-error.agent:w3";
    assert!(s.read(&session(), |tx| tx.mark(w3_mark)).unwrap().is_some());
    let last = log(&mut s).pop().unwrap();
    assert_eq!(
        (last.ok, last.agent.as_deref(), last.op.as_deref()),
        (false, Some("w3"), Some("done"))
    );
    assert_eq!(
        last.error.as_deref(),
        Some(
            "task \"Run tests\" is held by agent \"w2\" (claimed 0 s ago; the claim lapses in 10 min unless it calls again); work on another task, or ask the user to release it"
        )
    );
    // The main agent's own refusal is its reminder, and stays pending
    // through another agent's success and no-op.
    caller = caller_as(None);
    call_by(&mut s, &mut caller, r#"{"op":"start","task":"x"}"#, Agent);
    caller = caller_as(Some("w3"));
    agent_by(
        &mut s,
        &mut caller,
        r#"{"op":"append","phase":"Verification","items":["Lint"]}"#,
    );
    assert_eq!(
        s.read(&session(), |tx| tx.mark(w3_mark)).unwrap(),
        None,
        "w3's own is settled"
    );
    let log = log(&mut s);
    let last = log.last().unwrap();
    assert_eq!((last.ok, last.agent.as_deref()), (true, Some("w3")));
    // The append gave w3 the next free task; starting it again is a no-op.
    let unchanged = version(&mut s);
    agent_by(
        &mut s,
        &mut caller,
        r#"{"op":"start","task":"Add edge cases"}"#,
    );
    assert_eq!(version(&mut s), unchanged);
    assert_eq!(
        s.read(&session(), |tx| tx.pending_todo_error())
            .unwrap()
            .as_deref(),
        Some("task \"x\" not found; tasks are matched by their exact content (see `view`)")
    );
    caller = caller_as(None);
    agent_by(&mut s, &mut caller, r#"{"op":"view"}"#);
    agent_by(&mut s, &mut caller, r#"{"op":"start","task":"Build core"}"#);
    assert_eq!(
        s.read(&session(), |tx| tx.pending_todo_error()).unwrap(),
        None
    );
}

/// A named agent's refused goal call is logged as its own too.
#[test]
fn a_refused_goal_call_names_its_agent() {
    let mut s = planned();
    let mut caller = caller_as(Some("w2"));
    let refused = goalkeeper::store::GoalCall::Json(r#"{"op":"complete"}"#);
    let result = s
        .write(&session(), |tx| {
            tx.goal_call(refused, Agent, &mut caller, NOW)
        })
        .unwrap();
    assert!(result.is_error);
    let last = log(&mut s).pop().unwrap();
    assert_eq!(
        (last.ok, last.agent.as_deref(), last.op.as_deref()),
        (false, Some("w2"), Some("complete"))
    );
    assert_eq!(
        s.read(&session(), |tx| tx.pending_todo_error()).unwrap(),
        None
    );
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
    assert_eq!(
        s.read(&session(), |tx| tx.pending_todo_error()).unwrap(),
        None
    );
}

#[test]
fn a_rejected_user_call_does_not_create_a_session() {
    let mut s = store();
    call(&mut s, r#"{"op":"done","task":"x"}"#, User);
    assert!(s.admin().sessions().unwrap().is_empty());
    // An agent's failure is remembered, so its session exists.
    call(&mut s, r#"{"op":"done","task":"x"}"#, Agent);
    let sessions = s.admin().sessions().unwrap();
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
    let last_two = s.read(&session(), |tx| tx.event_log(2)).unwrap();
    let versions: Vec<_> = last_two.iter().map(|e| e.version).collect();
    assert_eq!(versions, [Some(2), Some(3)]);
}
