//! Property tests of the todo state machine: random sequences of calls from
//! both actors, well-formed and malformed, over a small vocabulary of task
//! and phase names so that calls hit and miss. Each sequence runs through the
//! store and, in lockstep, through the pure `todo::run`.
//!
//! After every call: at most one task is `in_progress`; with none, no task is
//! `pending` (auto-advance holds); no blocked task was promoted; the list
//! passes `validate()`; `completed_tasks` names exactly the tasks that became
//! completed. A rejected call and a `view` leave the list byte-identical and
//! the version unchanged; every successful mutation bumps the version by
//! exactly one.

mod common;

use common::{NOW, json_of, session};
use goalkeeper::Store;
use goalkeeper::todo::{self, Actor, Call, Op, Status, TodoList};
use proptest::prelude::*;
use proptest::sample::select;
use serde_json::{Map, Value, json};

// ---- the vocabulary ------------------------------------------------------

/// Task names that hit once the list holds them.
const TASKS: &[&str] = &[
    "Build core",
    "Add edge cases",
    "Run tests",
    "Write docs",
    "Ship",
    "Tag",
    "Announce",
    "Celebrate",
];
/// Names that trim to a known one, differ only in case, look like an id,
/// or are empty.
const ODD_TASKS: &[&str] = &[" Ship ", "build core", "task-3", "", "  "];
const PHASES: &[&str] = &["Foundation", "Verification", "Release"];
const ODD_PHASES: &[&str] = &[" Release ", "", "release"];
const REASONS: &[&str] = &["waiting", "  on\n review ", "needs\tkey", ""];
const OPS: &[&str] = &[
    "init", "start", "done", "drop", "rm", "block", "unblock", "append", "view",
];
const GARBAGE: &[&str] = &[
    "",
    "{",
    "not json",
    "[]",
    "null",
    "42",
    r#"{"op":"view""#,
    r#"{"op":"finish"}"#,
    r#"{"op":7}"#,
    r#"{"op":"done","task":["Ship"]}"#,
    r#"{"op":"append","phase":"Release","items":"Ship"}"#,
    r#"{"op":"init","list":[{"phase":"Foundation","items":[1]}]}"#,
    r#"{"op":"init","list":[{"items":["Ship"]}]}"#,
    r#"{"op":"block","task":"Ship","reason":3}"#,
];

fn task_str() -> impl Strategy<Value = &'static str> {
    prop_oneof![8 => select(TASKS), 1 => select(ODD_TASKS)]
}

fn phase_str() -> impl Strategy<Value = &'static str> {
    prop_oneof![8 => select(PHASES), 1 => select(ODD_PHASES)]
}

fn task_name() -> impl Strategy<Value = Value> {
    task_str().prop_map(Value::from)
}

fn phase_name() -> impl Strategy<Value = Value> {
    phase_str().prop_map(Value::from)
}

/// Up to three task names; empty now and then.
fn items() -> impl Strategy<Value = Value> {
    prop_oneof![
        8 => prop::collection::vec(task_str(), 1..4),
        1 => Just(Vec::new()),
    ]
    .prop_map(|v| json!(v))
}

/// `task`, `phase` or neither, as fields to merge into a call.
fn target() -> impl Strategy<Value = Map<String, Value>> {
    prop_oneof![
        4 => task_name().prop_map(|t| obj(json!({"task": t}))),
        2 => phase_name().prop_map(|p| obj(json!({"phase": p}))),
        1 => Just(Map::new()),
    ]
}

fn obj(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => unreachable!(),
    }
}

fn with_op(op: &str, mut fields: Map<String, Value>) -> Value {
    fields.insert("op".into(), op.into());
    Value::Object(fields)
}

/// Calls shaped the way the tool documents them (they still miss when a
/// name is not in the list, or repeat a content).
/// An `init` list: one to three phases of up to three items each.
fn phase_list() -> impl Strategy<Value = Value> {
    prop::collection::vec((phase_str(), items()), 1..4).prop_map(|phases| {
        let list: Vec<Value> = phases
            .into_iter()
            .map(|(phase, items)| json!({"phase": phase, "items": items}))
            .collect();
        json!(list)
    })
}

fn well_formed() -> impl Strategy<Value = Value> {
    prop_oneof![
        2 => phase_list().prop_map(|list| json!({"op": "init", "list": list})),
        1 => (items(), prop::option::of(phase_name())).prop_map(|(items, phase)| {
            let mut call = json!({"op": "init", "items": items});
            if let Some(phase) = phase {
                call["phase"] = phase;
            }
            call
        }),
        3 => task_name().prop_map(|t| json!({"op": "start", "task": t})),
        4 => target().prop_map(|t| with_op("done", t)),
        2 => target().prop_map(|t| with_op("drop", t)),
        2 => target().prop_map(|t| with_op("rm", t)),
        2 => (target(), prop::option::of(select(REASONS))).prop_map(|(mut t, reason)| {
            if let Some(reason) = reason {
                t.insert("reason".into(), reason.into());
            }
            with_op("block", t)
        }),
        2 => target().prop_map(|t| with_op("unblock", t)),
        3 => (phase_name(), items()).prop_map(|(p, i)| json!({"op": "append", "phase": p, "items": i})),
        1 => Just(json!({"op": "view"})),
        // Op inference: `list` → init, `items` + `phase` → append, bare
        // `items` → init only while the list is empty.
        1 => phase_list().prop_map(|list| json!({"list": list})),
        1 => (phase_name(), items()).prop_map(|(p, i)| json!({"phase": p, "items": i})),
        1 => items().prop_map(|i| json!({"items": i})),
    ]
}

/// Calls that must be refused, or are refused most of the time: garbage
/// text, an unknown op, an unknown field, another op's fields, a field of
/// the wrong type, a null or missing op.
fn malformed() -> impl Strategy<Value = String> {
    prop_oneof![
        2 => select(GARBAGE).prop_map(String::from),
        1 => (well_formed(), select(&["force", "id", "status"][..])).prop_map(|(mut call, key)| {
            call[key] = json!(true);
            call.to_string()
        }),
        1 => (well_formed(), select(&["finish", "DONE", " done ", "add"][..])).prop_map(|(mut call, op)| {
            call["op"] = op.into();
            call.to_string()
        }),
        // Another op's fields: sometimes fine, mostly a field that does
        // not apply or one that is missing.
        2 => (well_formed(), select(OPS)).prop_map(|(mut call, op)| {
            call["op"] = op.into();
            call.to_string()
        }),
        1 => (well_formed(), select(&["task", "phase", "items", "reason", "list"][..]), task_name())
            .prop_map(|(mut call, key, value)| {
                call[key] = value;
                call.to_string()
            }),
        1 => (well_formed(), any::<bool>()).prop_map(|(mut call, null)| {
            let object = call.as_object_mut().unwrap();
            if null {
                object.insert("op".into(), Value::Null);
            } else {
                object.remove("op");
            }
            call.to_string()
        }),
    ]
}

fn call_text() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => well_formed().prop_map(|v| v.to_string()),
        1 => malformed(),
    ]
}

fn actor() -> impl Strategy<Value = Actor> {
    select(&[Actor::Agent, Actor::User][..])
}

#[derive(Clone, Debug)]
enum Step {
    Call(Actor, String),
    Undo,
}

/// The plan most sequences start from, so that early calls have targets.
const SEED: &str = r#"{"op":"init","list":[
    {"phase":"Foundation","items":["Build core","Add edge cases"]},
    {"phase":"Verification","items":["Run tests","Write docs"]},
    {"phase":"Release","items":["Ship","Tag"]}]}"#;

/// Up to 40 calls, usually after the seed plan, sometimes from nothing.
fn calls() -> impl Strategy<Value = Vec<(Actor, String)>> {
    (
        prop::option::weighted(0.8, actor()),
        prop::collection::vec((actor(), call_text()), 1..40),
    )
        .prop_map(|(seed, mut calls)| {
            if let Some(actor) = seed {
                calls.insert(0, (actor, SEED.to_owned()));
            }
            calls
        })
}

fn steps() -> impl Strategy<Value = Vec<Step>> {
    let step = prop_oneof![
        12 => (actor(), call_text()).prop_map(|(a, c)| Step::Call(a, c)),
        1 => Just(Step::Undo),
    ];
    (
        prop::option::weighted(0.8, actor()),
        prop::collection::vec(step, 1..40),
    )
        .prop_map(|(seed, mut steps)| {
            if let Some(actor) = seed {
                steps.insert(0, Step::Call(actor, SEED.to_owned()));
            }
            steps
        })
}

// ---- the invariants ------------------------------------------------------

/// The single-active-task rule and auto-advance, plus the structural
/// invariants, as a test failure message.
fn check_list(list: &TodoList, context: &str) -> Result<(), TestCaseError> {
    let active = list
        .tasks()
        .filter(|(_, t)| t.status == Status::InProgress)
        .count();
    prop_assert!(active <= 1, "{context}: {active} tasks in progress");
    if active == 0 {
        prop_assert!(
            !list.tasks().any(|(_, t)| t.status == Status::Pending),
            "{context}: a pending task was not promoted"
        );
    }
    if let Err(problems) = list.validate() {
        return Err(TestCaseError::fail(format!(
            "{context}: invalid list: {problems:?}"
        )));
    }
    Ok(())
}

fn is_view(outcome: &todo::Outcome) -> bool {
    matches!(outcome.op, Some(Op::View))
}

/// Blocked tasks are never promoted: only `start` (or `unblock` followed
/// by auto-advance, or `init` starting afresh) makes one `in_progress`.
fn check_blocked_not_promoted(
    before: &TodoList,
    outcome: &todo::Outcome,
    context: &str,
) -> Result<(), TestCaseError> {
    if matches!(
        outcome.op,
        Some(Op::Start(_) | Op::Unblock(_) | Op::Init(_)) | None
    ) {
        return Ok(());
    }
    for (_, task) in before.tasks().filter(|(_, t)| t.status == Status::Blocked) {
        if let Some((p, t)) = outcome.list.find_task(&task.content) {
            prop_assert_ne!(
                outcome.list.phases[p].tasks[t].status,
                Status::InProgress,
                "{}: blocked task {:?} was promoted",
                context,
                task.content
            );
        }
    }
    Ok(())
}

/// `completed_tasks` names exactly the tasks that are `completed` now and
/// were not before, in list order.
fn check_completed_report(
    before: &TodoList,
    outcome: &todo::Outcome,
    context: &str,
) -> Result<(), TestCaseError> {
    let was_completed = |content: &str| {
        before
            .find_task(content)
            .is_some_and(|(p, t)| before.phases[p].tasks[t].status == Status::Completed)
    };
    let expected: Vec<(String, String)> = outcome
        .list
        .tasks()
        .filter(|(_, t)| t.status == Status::Completed && !was_completed(&t.content))
        .map(|(p, t)| (outcome.list.phases[p].name.clone(), t.content.clone()))
        .collect();
    let reported: Vec<(String, String)> = outcome
        .completed
        .iter()
        .map(|c| (c.phase.clone(), c.content.clone()))
        .collect();
    prop_assert_eq!(reported, expected, "{}", context);
    Ok(())
}

// ---- the properties ------------------------------------------------------

proptest! {
    /// The store agrees with the pure engine, stores only valid lists, and
    /// bumps the version exactly on successful mutations.
    #[test]
    fn store_sequences_keep_every_invariant(steps in steps()) {
        let mut store = Store::open_in_memory().unwrap();
        let s = session();
        for (i, step) in steps.iter().enumerate() {
            let (before, version) = store.todo_list(&s).unwrap();
            let context = format!("step {i} {step:?}");
            match step {
                Step::Call(actor, text) => {
                    let expected = todo::run(before.clone(), Call::Json(text), *actor);
                    let result = store.todo(&s, Call::Json(text), *actor, NOW).unwrap();
                    let (after, version_after) = store.todo_list(&s).unwrap();

                    prop_assert_eq!(result.is_error, !expected.errors.is_empty(), "{}", context);
                    prop_assert_eq!(&result.details.phases, &expected.list, "{}", context);
                    prop_assert_eq!(&after, &expected.list, "{}", context);
                    prop_assert_eq!(result.details.version, version_after, "{}", context);
                    if result.is_error || is_view(&expected) {
                        prop_assert_eq!(json_of(&after), json_of(&before), "{}", context);
                        prop_assert_eq!(version_after, version, "{}", context);
                        prop_assert!(result.details.completed_tasks.is_empty(), "{}", context);
                    } else {
                        prop_assert_eq!(version_after, version + 1, "{}", context);
                    }
                    check_list(&after, &context)?;
                }
                Step::Undo => {
                    match store.todo_undo(&s, NOW) {
                        Ok(result) => {
                            let (after, version_after) = store.todo_list(&s).unwrap();
                            prop_assert_eq!(version_after, version + 1, "{}", context);
                            prop_assert_eq!(&result.details.phases, &after, "{}", context);
                            check_list(&after, &context)?;
                        }
                        Err(e) => {
                            prop_assert!(e.to_string().starts_with("nothing to undo"), "{}: {}", context, e);
                            let (after, version_after) = store.todo_list(&s).unwrap();
                            prop_assert_eq!(json_of(&after), json_of(&before), "{}", context);
                            prop_assert_eq!(version_after, version, "{}", context);
                        }
                    }
                }
            }
        }
    }

    /// The pure engine on its own: the same invariants, with no store.
    #[test]
    fn pure_sequences_keep_every_invariant(calls in calls()) {
        let mut list = TodoList::default();
        for (i, (actor, text)) in calls.iter().enumerate() {
            let context = format!("call {i} {actor} {text}");
            let bytes = json_of(&list);
            let outcome = todo::run(list.clone(), Call::Json(text), *actor);
            if !outcome.errors.is_empty() {
                prop_assert_eq!(json_of(&outcome.list), bytes, "{}", context);
                prop_assert!(!outcome.is_mutation(), "{}", context);
                prop_assert!(outcome.completed.is_empty(), "{}", context);
            } else if is_view(&outcome) {
                prop_assert_eq!(json_of(&outcome.list), bytes, "{}", context);
                prop_assert!(!outcome.is_mutation(), "{}", context);
            } else {
                prop_assert!(outcome.is_mutation(), "{}", context);
            }
            check_completed_report(&list, &outcome, &context)?;
            check_blocked_not_promoted(&list, &outcome, &context)?;
            check_list(&outcome.list, &context)?;
            list = outcome.list;
        }
    }

    /// `view` from either actor, in any state reached, changes nothing and
    /// writes nothing.
    #[test]
    fn view_never_changes_anything(calls in calls(), viewer in actor()) {
        let mut store = Store::open_in_memory().unwrap();
        let s = session();
        for (actor, text) in &calls {
            store.todo(&s, Call::Json(text), *actor, NOW).unwrap();
            let before = store.todo_list(&s).unwrap();
            let log = store.todo_log(&s, 1_000).unwrap();
            let error = store.pending_todo_error(&s).unwrap();
            let result = store.todo(&s, Call::Json(r#"{"op":"view"}"#), viewer, NOW).unwrap();
            prop_assert!(!result.is_error);
            prop_assert_eq!(&result.details.phases, &before.0);
            prop_assert_eq!(result.details.version, before.1);
            let after = store.todo_list(&s).unwrap();
            prop_assert_eq!(json_of(&after.0), json_of(&before.0));
            prop_assert_eq!(after.1, before.1);
            prop_assert_eq!(store.todo_log(&s, 1_000).unwrap(), log);
            prop_assert_eq!(store.pending_todo_error(&s).unwrap(), error);
        }
    }
}
