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

use crate::common;

use crate::fuzz_checks::todo_call::check_blocked_not_promoted;
use common::strategies::{Step, actor, calls, steps};
use common::{NOW, json_of, session};
use goalkeeper::Store;
use goalkeeper::store::Caller;
use goalkeeper::todo::{self, Call, Op, Status, TodoList};
use proptest::prelude::*;

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
    matches!(outcome.op, Some(Op::View(_)))
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
    /// bumps the version (and logs an event) exactly on successful calls
    /// that changed the list: a no-op writes nothing (DESIGN.md §2.2).
    #[test]
    fn store_sequences_keep_every_invariant(steps in steps()) {
        let mut store = Store::open_in_memory().unwrap();
        let s = session();
        for (i, step) in steps.iter().enumerate() {
            let (before, version) = store.read(&s, |tx| tx.todo_list()).unwrap();
            let context = format!("step {i} {step:?}");
            match step {
                Step::Call(actor, text) => {
                    let expected = todo::run(before.clone(), Call::Json(text), *actor);
                    let events = store.read(&s, |tx| tx.event_log(100_000)).unwrap().len();
                    let result = store.todo(&s, Call::Json(text), *actor, &mut Caller::default(), NOW).unwrap();
                    let (after, version_after) = store.read(&s, |tx| tx.todo_list()).unwrap();

                    prop_assert_eq!(result.is_error, !expected.errors.is_empty(), "{}", context);
                    prop_assert_eq!(&result.details.phases, &expected.list, "{}", context);
                    prop_assert_eq!(&after, &expected.list, "{}", context);
                    prop_assert_eq!(result.details.version, version_after, "{}", context);
                    if result.is_error || is_view(&expected) {
                        prop_assert_eq!(json_of(&after), json_of(&before), "{}", context);
                        prop_assert_eq!(version_after, version, "{}", context);
                        prop_assert!(result.details.completed_tasks.is_empty(), "{}", context);
                    } else if expected.is_no_op() {
                        prop_assert_eq!(json_of(&after), json_of(&before), "{}", context);
                        prop_assert_eq!(version_after, version, "{}", context);
                        prop_assert_eq!(store.read(&s, |tx| tx.event_log(100_000)).unwrap().len(), events, "{}", context);
                        prop_assert!(result.text().contains("No change: "), "{}", context);
                    } else {
                        prop_assert_ne!(json_of(&after), json_of(&before), "{}", context);
                        prop_assert_eq!(version_after, version + 1, "{}", context);
                        prop_assert_eq!(store.read(&s, |tx| tx.event_log(100_000)).unwrap().len(), events + 1, "{}", context);
                    }
                    check_list(&after, &context)?;
                }
                Step::Undo => {
                    match store.write(&s, |tx| tx.todo_undo(NOW)) {
                        Ok(result) => {
                            let (after, version_after) = store.read(&s, |tx| tx.todo_list()).unwrap();
                            prop_assert_eq!(version_after, version + 1, "{}", context);
                            prop_assert_eq!(&result.details.phases, &after, "{}", context);
                            check_list(&after, &context)?;
                        }
                        Err(e) => {
                            prop_assert!(e.to_string().starts_with("nothing to undo"), "{}: {}", context, e);
                            let (after, version_after) = store.read(&s, |tx| tx.todo_list()).unwrap();
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
                // A mutation is exactly a call that changed the list.
                let changed = json_of(&outcome.list) != bytes;
                prop_assert_eq!(outcome.is_mutation(), changed, "{}", context);
                prop_assert_eq!(outcome.is_no_op(), !changed, "{}", context);
                prop_assert_eq!(outcome.changed.is_empty() && !changed, !changed, "{}", context);
            }
            check_completed_report(&list, &outcome, &context)?;
            if let Some(op) = &outcome.op {
                check_blocked_not_promoted(&list, &outcome.list, op, || context.clone());
            }
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
            store.todo(&s, Call::Json(text), *actor, &mut Caller::default(), NOW).unwrap();
            let before = store.read(&s, |tx| tx.todo_list()).unwrap();
            let log = store.read(&s, |tx| tx.event_log(1_000)).unwrap();
            let error = store.read(&s, |tx| tx.pending_todo_error()).unwrap();
            let result = store.todo(&s, Call::Json(r#"{"op":"view"}"#), viewer, &mut Caller::default(), NOW).unwrap();
            prop_assert!(!result.is_error);
            prop_assert_eq!(&result.details.phases, &before.0);
            prop_assert_eq!(result.details.version, before.1);
            let after = store.read(&s, |tx| tx.todo_list()).unwrap();
            prop_assert_eq!(json_of(&after.0), json_of(&before.0));
            prop_assert_eq!(after.1, before.1);
            prop_assert_eq!(store.read(&s, |tx| tx.event_log(1_000)).unwrap(), log);
            prop_assert_eq!(store.read(&s, |tx| tx.pending_todo_error()).unwrap(), error);
        }
    }
}
