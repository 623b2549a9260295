//! `view` pages, the status line's counts and the part of a long list a
//! bounded `<todo_context>` shows, read from the list's kept shape and the
//! rows they show: the same as the pure engine takes from the
//! whole list, after every kind of write.

use goalkeeper::Store;
use goalkeeper::goal::GoalOp;
use goalkeeper::prompt::{Injector, Templates};
use goalkeeper::settings::Settings;
use goalkeeper::store::Caller;
use goalkeeper::store::GoalCall;
use goalkeeper::todo::{
    self, Actor, Call, ListPart, Listed, Op, Phase, Status, Task, TodoList, ViewPage,
};
use serde_json::json;

use super::common::*;

/// The text of task `t` of phase `p` of [`long_list`].
fn name(p: usize, t: usize) -> String {
    format!("task {p}.{t:03} {} end", "é".repeat((t * 7 + p * 3) % 40))
}

/// Three phases of 120 tasks of 60-odd bytes (pages of 100 tasks and
/// pages cut by bytes both happen), some closed and blocked.
fn long_list() -> TodoList {
    TodoList::new(
        (0..3)
            .map(|p| Phase {
                name: format!("Phase {p}"),
                tasks: (0..120)
                    .map(|t| {
                        let mut task = Task::pending(name(p, t));
                        match (p, t % 9) {
                            (0, _) => task.set_status(Status::Completed),
                            (_, 4) => {
                                task.set_status(Status::Blocked);
                                task.blocker = Some(format!("waits for {t}"));
                            }
                            (_, 7) => task.set_status(Status::Abandoned),
                            _ => {}
                        }
                        task
                    })
                    .collect(),
            })
            .collect(),
    )
}

fn views() -> Vec<ViewPage> {
    let mut views = Vec::new();
    for phase in [None, Some("Phase 0"), Some("Phase 2"), Some("Phase 9")] {
        for page in 0..9 {
            views.push(ViewPage {
                phase: phase.map(str::to_owned),
                page,
            });
        }
    }
    views
}

/// Every view of [`views`] and the status line's counts agree with the
/// pure engine on the whole list.
fn check(store: &mut Store, context: &str) {
    let (list, version) = store.read(&session(), |tx| tx.todo_list()).unwrap();
    assert_eq!(
        store.read(&session(), |tx| tx.status()).unwrap().1,
        list.counts(),
        "{context}"
    );
    for view in views() {
        let op = Op::View(view.clone());
        let expected = todo::run(list.clone(), Call::Op(&op), Actor::User).into_result(version);
        let (text, is_error) = store
            .read(&session(), |tx| tx.todo_view(&view, &Caller::default(), 0))
            .unwrap();
        assert_eq!(text, expected.text(), "{context}: {view:?}");
        assert_eq!(is_error, expected.is_error, "{context}: {view:?}");
    }
    for max in [0, 1, 5, 200, 400] {
        let expected = match ListPart::of(&list, max) {
            Some(part) => Listed::Part(part),
            None => Listed::Whole(list.clone()),
        };
        let listed = store.read(&session(), |tx| tx.todo_listed(max)).unwrap();
        assert_eq!(listed, expected, "{context}: max_tasks {max}");
    }
    // The goal-mode context the hooks and the MCP prompt render in their
    // transaction, as the injector renders it from the whole list.
    let injector = Injector::new(Templates::builtin(), Settings::default());
    let goal = store.read(&session(), |tx| tx.goal()).unwrap();
    let tools = ["todo".to_owned(), "goal".to_owned()];
    let expected = injector
        .goal_mode_context(goal.as_ref(), &list, &tools, NOW)
        .unwrap();
    assert_eq!(expected.is_ok(), goal.is_some(), "{context}");
    let message = store
        .write(&session(), |tx| {
            goalkeeper::turn::goal_mode_context(tx, &Default::default(), &injector, &tools, NOW)
        })
        .unwrap();
    assert_eq!(
        format!("{message:?}"),
        format!("{expected:?}"),
        "{context}: goal-mode context"
    );
}

#[test]
fn views_and_counts_follow_every_write() {
    let mut s = store();
    check(&mut s, "a new session");
    let objective = "Ship the parser".parse().unwrap();
    let set = GoalOp::Set {
        objective,
        budget: None,
        checks: Vec::new(),
    };
    s.write(&session(), |tx| {
        tx.goal_call(GoalCall::Op(&set), Actor::User, &mut Caller::default(), NOW)
    })
    .unwrap();
    check(&mut s, "with a goal");
    s.write(&session(), |tx| {
        tx.todo_import(long_list(), "test", &Caller::default(), NOW)
    })
    .unwrap();
    check(&mut s, "after an import");
    let calls = [
        json!({"op": "done", "task": name(1, 0)}),
        json!({"op": "start", "task": name(2, 5)}),
        json!({"op": "block", "task": name(1, 1), "reason": "a review"}),
        json!({"op": "rm", "task": name(1, 2)}),
        json!({"op": "append", "phase": "Phase 1", "items": ["one more", "and another"]}),
        json!({"op": "done", "phase": "Phase 1"}),
        json!({"op": "drop", "task": "no such task"}),
    ];
    for call in &calls {
        let result = s
            .todo(
                &session(),
                Call::Value(call),
                Actor::Agent,
                &mut Caller::default(),
                NOW,
            )
            .unwrap();
        // Every call but the last changes the list.
        assert_eq!(result.is_error, call["task"] == "no such task", "{call}");
        check(&mut s, &format!("after {call}"));
    }
    for _ in 0..3 {
        s.write(&session(), |tx| tx.todo_undo(NOW)).unwrap();
        check(&mut s, "after an undo");
    }
    s.todo(
        &session(),
        Call::Value(&json!({"op": "init", "items": ["a", "b"]})),
        Actor::User,
        &mut Caller::default(),
        NOW,
    )
    .unwrap();
    check(&mut s, "after an init");
    s.write(&session(), |tx| tx.todo_undo(NOW)).unwrap();
    check(&mut s, "after undoing the init");
}

/// The bounded context's narrow read finds the task in progress wherever
/// it is (before the first open task's phase, among or after the open
/// tasks it lists, in a later phase) and reads a list with none, on both
/// backends: every check of [`check`] after an import of each placement.
#[test]
fn the_task_in_progress_is_read_wherever_it_is() {
    use Status::{Abandoned, Blocked, Completed, InProgress, Pending};
    let statuses = [
        vec![Completed, Abandoned, Completed],
        vec![],
        vec![Pending, Completed, Blocked, Pending],
        vec![Abandoned, Pending, Pending],
        vec![Pending, Completed, Pending, Blocked, Pending],
    ];
    let list = |place: Option<usize>, rest: fn(Status) -> Status| {
        let mut n = 0;
        TodoList::new(
            statuses
                .iter()
                .enumerate()
                .map(|(p, tasks)| Phase {
                    name: format!("Phase {p}"),
                    tasks: tasks
                        .iter()
                        .map(|&status| {
                            let mut task = Task::pending(format!("task {n} of the list"));
                            task.set_status(if place == Some(n) {
                                InProgress
                            } else {
                                rest(status)
                            });
                            n += 1;
                            task
                        })
                        .collect(),
                })
                .collect(),
        )
    };
    let mut s = store();
    let total = statuses.iter().map(Vec::len).sum::<usize>();
    for place in 0..total {
        s.write(&session(), |tx| {
            tx.todo_import(list(Some(place), |s| s), "test", &Caller::default(), NOW)
        })
        .unwrap();
        let (stored, _) = s.read(&session(), |tx| tx.todo_list()).unwrap();
        let at = stored.in_progress().map(|(_, t)| t.content.clone());
        assert_eq!(at, Some(format!("task {place} of the list")));
        check(&mut s, &format!("task {place} in progress"));
    }
    // No task in progress: every open one blocked.
    let blocked = |s| if s == Pending { Blocked } else { s };
    s.write(&session(), |tx| {
        tx.todo_import(list(None, blocked), "test", &Caller::default(), NOW)
    })
    .unwrap();
    assert!(
        s.read(&session(), |tx| tx.todo_list())
            .unwrap()
            .0
            .in_progress()
            .is_none()
    );
    check(&mut s, "every open task blocked");
}
