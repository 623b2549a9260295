//! DESIGN.md §2.2: atomic errors, the single-active-task rule with auto-advance,
//! op inference, and the `completed_tasks` report.

use goalkeeper::store::Caller;
use goalkeeper::todo::Actor::{Agent, User};
use goalkeeper::todo::{self, Call, Status, TodoList};

use super::common::*;

// ---- atomicity -----------------------------------------------------------

#[test]
fn an_error_applies_nothing_and_reports_every_problem() {
    let mut s = planned();
    let before = tasks(&mut s);
    // Two fresh tasks, one existing one and one repeated one: nothing is
    // appended, and both problems are reported.
    let errors = rejected(
        &mut s,
        r#"{"op":"append","phase":"Verification","items":["Ship","Build core","Tag","Tag"]}"#,
        Agent,
    );
    assert_eq!(
        errors,
        [
            "task \"Build core\" already exists in phase \"Foundation\"; task contents must be unique",
            "task \"Tag\" appears twice in `items`; task contents must be unique",
        ]
    );
    assert_eq!(tasks(&mut s), before);
}

#[test]
fn parse_errors_are_all_reported_together() {
    let mut s = planned();
    let errors = rejected(
        &mut s,
        r#"{"op":"done","task":false,"force":true,"why":"x"}"#,
        User,
    );
    assert_eq!(
        errors,
        [
            "unknown field `force`; the accepted fields are op, list, task, phase, items, reason, after, page",
            "unknown field `why`; the accepted fields are op, list, task, phase, items, reason, after, page",
            "field `task` must be a string, not a boolean",
        ]
    );
}

#[test]
fn init_errors_are_all_reported_together() {
    let mut s = planned();
    let errors = rejected(
        &mut s,
        r#"{"op":"init","list":[{"phase":"A","items":["x","y"]},{"phase":"A","items":["y","x"]}]}"#,
        Agent,
    );
    assert_eq!(
        errors,
        [
            "phase \"A\" appears twice in `list`; phase names must be unique",
            "task \"y\" appears twice; task contents must be unique across the list",
            "task \"x\" appears twice; task contents must be unique across the list",
        ]
    );
}

#[test]
fn a_rejected_call_shows_the_list_as_it_was() {
    let mut s = planned();
    agent(&mut s, r#"{"op":"done","task":"Build core"}"#);
    let before = list(&mut s);
    let result = call(&mut s, r#"{"op":"start","task":"Deploy"}"#, Agent);
    assert!(result.is_error);
    assert_eq!(result.details.phases, before);
    assert_eq!(result.details.version, 2);
    assert!(result.text().contains("  - [x] Build core\n"));
}

// ---- single active task --------------------------------------------------

#[test]
fn several_in_progress_keep_only_the_earliest() {
    let mut s = store();
    let imported = TodoList::new(vec![
        phase("A", vec![task("a1", Status::Completed)]),
        phase(
            "B",
            vec![
                task("b1", Status::Pending),
                task("b2", Status::InProgress),
                task("b3", Status::InProgress),
            ],
        ),
        phase("C", vec![task("c1", Status::InProgress)]),
    ]);
    s.write(&session(), |tx| {
        tx.todo_import(imported, "TODO.md", &Caller::default(), NOW)
    })
    .unwrap();
    assert_eq!(
        tasks(&mut s),
        "A: [x] a1 | B: [ ] b1, [/] b2, [ ] b3 | C: [ ] c1"
    );
}

#[test]
fn normalize_is_the_same_rule_for_hosts() {
    let mut list = TodoList::new(vec![
        phase("A", vec![task("a1", Status::Blocked)]),
        phase(
            "B",
            vec![
                task("b1", Status::InProgress),
                task("b2", Status::InProgress),
            ],
        ),
    ]);
    todo::normalize(&mut list);
    assert_eq!(show(&list), "A: [!] a1 | B: [/] b1, [ ] b2");
}

#[test]
fn auto_advance_picks_the_earliest_pending_task_not_the_next_one() {
    let mut s = planned();
    agent(&mut s, r#"{"op":"start","task":"Run tests"}"#);
    agent(&mut s, r#"{"op":"done","task":"Run tests"}"#);
    assert_eq!(
        tasks(&mut s),
        "Foundation: [/] Build core, [ ] Add edge cases | Verification: [x] Run tests, [ ] Write docs"
    );
}

#[test]
fn auto_advance_crosses_into_the_next_phase() {
    let mut s = planned();
    agent(&mut s, r#"{"op":"done","task":"Build core"}"#);
    agent(&mut s, r#"{"op":"done","task":"Add edge cases"}"#);
    assert_eq!(
        tasks(&mut s),
        "Foundation: [x] Build core, [x] Add edge cases | Verification: [/] Run tests, [ ] Write docs"
    );
}

#[test]
fn blocked_tasks_are_never_promoted() {
    let mut s = store();
    agent(&mut s, r#"{"op":"init","items":["x","y","z"]}"#);
    agent(&mut s, r#"{"op":"block","task":"y","reason":"later"}"#);
    agent(&mut s, r#"{"op":"done","task":"x"}"#);
    assert_eq!(tasks(&mut s), "Tasks: [x] x, [!] y (later), [/] z");
    agent(&mut s, r#"{"op":"done","task":"z"}"#);
    assert_eq!(tasks(&mut s), "Tasks: [x] x, [!] y (later), [x] z");
    assert_eq!(in_progress_count(&list(&mut s)), 0);
}

#[test]
fn an_imported_list_with_only_blocked_open_work_stays_without_active_task() {
    let mut s = store();
    let imported = TodoList::new(vec![phase(
        "A",
        vec![task("a1", Status::Blocked), task("a2", Status::Abandoned)],
    )]);
    s.write(&session(), |tx| {
        tx.todo_import(imported, "TODO.md", &Caller::default(), NOW)
    })
    .unwrap();
    assert_eq!(tasks(&mut s), "A: [!] a1, [-] a2");
}

#[test]
fn view_does_not_normalize() {
    let crowded = TodoList::new(vec![phase(
        "A",
        vec![
            task("a1", Status::InProgress),
            task("a2", Status::InProgress),
        ],
    )]);
    let outcome = todo::run(crowded.clone(), Call::Json(r#"{"op":"view"}"#), Agent);
    assert!(outcome.errors.is_empty());
    assert!(!outcome.is_mutation());
    assert_eq!(outcome.list, crowded);

    let idle = TodoList::new(vec![phase("A", vec![task("a1", Status::Pending)])]);
    let outcome = todo::run(idle.clone(), Call::Json(r#"{"op":"view"}"#), User);
    assert_eq!(outcome.list, idle);
}

// ---- op inference --------------------------------------------------------

#[test]
fn a_list_without_op_is_an_init() {
    let mut s = planned();
    let result = agent(&mut s, r#"{"list":[{"phase":"New","items":["n1"]}]}"#);
    assert_eq!(result.details.op.as_deref(), Some("init"));
    // The agent's rewrite keeps the open tasks it left out, abandoned.
    assert_eq!(
        tasks(&mut s),
        "New: [/] n1 | Foundation: [-] Build core, [-] Add edge cases | Verification: [-] Run tests, [-] Write docs"
    );
}

#[test]
fn items_and_phase_without_op_are_an_append() {
    let mut s = planned();
    let result = agent(&mut s, r#"{"phase":"Release","items":["Tag"]}"#);
    assert_eq!(result.details.op.as_deref(), Some("append"));
    assert!(tasks(&mut s).ends_with(" | Release: [ ] Tag"));
}

#[test]
fn bare_items_without_op_are_an_init_while_the_list_is_empty() {
    let mut s = store();
    let result = agent(&mut s, r#"{"items":["a","b"]}"#);
    assert_eq!(result.details.op.as_deref(), Some("init"));
    assert_eq!(tasks(&mut s), "Tasks: [/] a, [ ] b");
}

#[test]
fn bare_items_without_op_on_a_list_with_only_empty_phases_are_an_init() {
    let mut s = planned();
    user(&mut s, r#"{"op":"rm"}"#);
    let result = agent(&mut s, r#"{"items":["a"]}"#);
    assert_eq!(result.details.op.as_deref(), Some("init"));
    assert_eq!(tasks(&mut s), "Tasks: [/] a");
}

#[test]
fn bare_items_without_op_on_a_list_with_tasks_are_ambiguous() {
    let mut s = planned();
    assert_eq!(
        error(&mut s, r#"{"items":["a"]}"#, Agent),
        "field `op` is missing; use one of init, start, done, drop, rm, block, unblock, append, view; \
         bare `items` means init only while the list is empty, so add \"op\": \"append\" with a `phase`, \
         or \"op\": \"init\" to replace the list"
    );
}

#[test]
fn anything_else_without_op_is_an_error() {
    let missing = "field `op` is missing; use one of init, start, done, drop, rm, block, unblock, append, view";
    let mut s = planned();
    for body in [
        r#"{}"#,
        r#"{"task":"Build core"}"#,
        r#"{"phase":"Foundation"}"#,
        r#"{"reason":"x"}"#,
        r#"{"op":null,"task":"Build core"}"#,
    ] {
        assert_eq!(error(&mut s, body, Agent), missing, "{body}");
    }
    let mut empty = store();
    assert_eq!(error(&mut empty, r#"{"phase":"P"}"#, User), missing);
}

#[test]
fn a_null_op_counts_as_missing() {
    let mut s = store();
    let result = agent(&mut s, r#"{"op":null,"items":["a"]}"#);
    assert_eq!(result.details.op.as_deref(), Some("init"));
}

#[test]
fn inference_still_checks_the_inferred_op() {
    let mut s = store();
    assert_eq!(
        error(
            &mut s,
            r#"{"list":[{"phase":"A","items":["a"]}],"task":"a"}"#,
            Agent
        ),
        "field `task` does not apply to `init`, which takes list, or items with an optional phase"
    );
    let errors = rejected(&mut s, r#"{"items":["a"],"extra":1}"#, Agent);
    assert_eq!(
        errors,
        [
            "unknown field `extra`; the accepted fields are op, list, task, phase, items, reason, after, page"
        ]
    );
    let result = call(&mut s, r#"{"items":["a"],"extra":1}"#, Agent);
    assert_eq!(result.details.op.as_deref(), Some("init"));
}

// ---- completed_tasks -----------------------------------------------------

#[test]
fn completed_tasks_lists_each_task_that_moved_into_completed_in_order() {
    let mut s = planned();
    agent(&mut s, r#"{"op":"done","task":"Run tests"}"#);
    let result = agent(&mut s, r#"{"op":"done"}"#);
    assert_eq!(
        completed(&result),
        [
            "Foundation/Build core",
            "Foundation/Add edge cases",
            "Verification/Write docs"
        ]
    );
}

#[test]
fn completed_tasks_is_empty_for_every_other_op() {
    let mut s = mixed();
    for body in [
        r#"{"op":"start","task":"e"}"#,
        r#"{"op":"block","task":"e"}"#,
        r#"{"op":"unblock","task":"e"}"#,
        r#"{"op":"drop","task":"e"}"#,
        r#"{"op":"rm","task":"o"}"#,
        r#"{"op":"append","phase":"Other","items":["p"]}"#,
        r#"{"op":"view"}"#,
        r#"{"op":"init","items":["z"]}"#,
    ] {
        let result = agent(&mut s, body);
        assert!(result.details.completed_tasks.is_empty(), "{body}");
    }
}

#[test]
fn the_result_has_the_documented_json_shape() {
    let mut s = planned();
    let result = agent(&mut s, r#"{"op":"done","task":"Build core"}"#);
    let json = serde_json::to_value(&result).unwrap();
    assert_eq!(
        json,
        serde_json::json!({
            "content": [{"type": "text", "text": result.text()}],
            "details": {
                "op": "done",
                "phases": [
                    {"name": "Foundation", "tasks": [
                        {"content": "Build core", "status": "completed"},
                        {"content": "Add edge cases", "status": "in_progress"},
                    ]},
                    {"name": "Verification", "tasks": [
                        {"content": "Run tests", "status": "pending"},
                        {"content": "Write docs", "status": "pending"},
                    ]},
                ],
                "completed_tasks": [{"phase": "Foundation", "content": "Build core"}],
                "version": 2,
            },
            "is_error": false,
        })
    );
}

#[test]
fn notes_appear_in_the_details() {
    let mut s = planned();
    agent(
        &mut s,
        r#"{"op":"block","task":"Run tests","reason":"no CI"}"#,
    );
    let result = user(&mut s, r#"{"op":"drop","task":"Write docs"}"#);
    let json = serde_json::to_value(&result.details.phases).unwrap();
    assert_eq!(
        json[1],
        serde_json::json!({"name": "Verification", "tasks": [
            {"content": "Run tests", "status": "blocked", "blocker": "no CI"},
            {"content": "Write docs", "status": "abandoned", "dropped_by": "user"},
        ]})
    );
}

#[test]
fn details_op_names_the_op_when_it_was_readable() {
    let mut s = planned();
    let result = call(&mut s, r#"{"op":"done","task":5}"#, Agent);
    assert_eq!(result.details.op.as_deref(), Some("done"));
    let result = call(&mut s, r#"{"op":"finish"}"#, Agent);
    assert_eq!(result.details.op, None);
    let result = call(&mut s, "not json", Agent);
    assert_eq!(result.details.op, None);
}
