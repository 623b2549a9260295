//! `Store::todo_answer`, which the CLI's `todo apply` prints: on a list too
//! long to repeat, a call that names one task is run on the rows it
//! touches (`store::in_place`). Whatever path it takes, its text, the
//! list, the versions, the event log, the pending error and undo are
//! those of `Store::todo` given the same calls.

use goalkeeper::Store;
use goalkeeper::store::Caller;
use goalkeeper::todo::Actor::{self, Agent, User};
use goalkeeper::todo::{Call, Phase, Status, Task, TodoList};
use serde_json::{Value, json};

use crate::common::*;

fn task(i: usize) -> String {
    format!("Task {i:04}: update the parser and its tests for case {i}")
}

/// Four phases of 60 tasks, the first 70 completed, some blocked; in the
/// last phase, two tasks whose texts differ only after 80 characters
/// (the store indexes the first 64).
fn long_list() -> TodoList {
    let mut list = TodoList::new(
        (0..4)
            .map(|p| Phase {
                name: format!("Phase {p}"),
                tasks: (0..60)
                    .map(|t| {
                        let i = p * 60 + t;
                        let mut task = Task::pending(task(i));
                        if i < 70 {
                            task.set_status(Status::Completed);
                        } else if i % 11 == 0 {
                            task.set_status(Status::Blocked);
                            task.blocker = Some(format!("waits for review {i}"));
                        }
                        task
                    })
                    .collect(),
            })
            .collect(),
    );
    list.phases[3].tasks.push(Task::pending(twin('a')));
    list.phases[3].tasks.push(Task::pending(twin('b')));
    list
}

/// A text of 80 characters and `end`.
fn twin(end: char) -> String {
    format!(
        "{}{end}",
        "Refactor the session store so that every write path shares one".repeat(2)
    )
}

/// What a user or a model can see of the session.
fn seen(store: &mut Store) -> impl PartialEq + std::fmt::Debug {
    let s = session();
    let (list, version) = store.read(&s, |tx| tx.todo_list()).unwrap();
    let error = store.read(&s, |tx| tx.pending_todo_error()).unwrap();
    (
        list,
        version,
        error,
        store.read(&s, |tx| tx.event_log(1_000)).unwrap(),
    )
}

#[test]
fn the_text_of_a_call_is_the_text_of_the_whole_call() {
    let s = session();
    let mut narrow = store();
    let mut wide = store();
    narrow
        .write(&s, |tx| {
            tx.todo_import(long_list(), "test", &Caller::default(), NOW)
        })
        .unwrap();
    wide.write(&s, |tx| {
        tx.todo_import(long_list(), "test", &Caller::default(), NOW)
    })
    .unwrap();
    let calls: Vec<(Value, Actor)> = vec![
        (json!({"op": "start", "task": task(100)}), Agent),
        (json!({"op": "done", "task": task(100)}), Agent),
        (json!({"op": "done", "task": task(100)}), Agent),
        (
            json!({"op": "block", "task": task(71), "reason": "needs a key"}),
            Agent,
        ),
        (json!({"op": "unblock", "task": task(77)}), User),
        (json!({"op": "drop", "task": task(72)}), User),
        (json!({"op": "rm", "task": task(73)}), Agent),
        (json!({"op": "done", "task": "task 74"}), Agent),
        (
            json!({"op": "start", "task": task(200), "reason": "now"}),
            Agent,
        ),
        (json!({"op": "rm", "task": task(75)}), User),
        (
            json!({"op": "append", "phase": "Phase 3", "items": ["one more"]}),
            Agent,
        ),
        (json!({"op": "done", "phase": "Phase 1"}), User),
        (json!({"op": "view"}), Agent),
        (json!({"op": "start", "task": twin('b')}), Agent),
        (json!({"op": "done", "task": twin('a')}), Agent),
        (
            json!({"op": "block", "task": twin('b'), "reason": "review"}),
            Agent,
        ),
    ];
    for (i, (call, actor)) in calls.iter().enumerate() {
        let now = NOW + i as i64;
        let (text, is_error) = narrow
            .todo_answer(&s, Call::Value(call), *actor, &mut Caller::default(), now)
            .map(|a| (a.text, a.is_error))
            .unwrap();
        let expected = wide
            .todo(&s, Call::Value(call), *actor, &mut Caller::default(), now)
            .unwrap();
        assert_eq!(text, expected.text(), "{call}");
        assert_eq!(is_error, expected.is_error, "{call}");
        assert_eq!(seen(&mut narrow), seen(&mut wide), "{call}");
    }
    // The one rejected call (a task not named exactly) left its reminder
    // until the next agent call that worked.
    let rejected = wide.read(&s, |tx| tx.event_log(1_000)).unwrap();
    assert_eq!(rejected.iter().filter(|e| !e.ok).count(), 1);
    let (list, _) = narrow.read(&s, |tx| tx.todo_list()).unwrap();
    let status = |end| {
        list.tasks()
            .find(|(_, t)| t.content == twin(end))
            .unwrap()
            .1
            .status
    };
    assert_eq!(
        (status('a'), status('b')),
        (Status::Completed, Status::Blocked)
    );
    for _ in 0..calls.len() {
        let a = narrow
            .write(&s, |tx| tx.todo_undo(NOW))
            .map(|r| r.text().to_owned());
        let b = wide
            .write(&s, |tx| tx.todo_undo(NOW))
            .map(|r| r.text().to_owned());
        let (a, b) = (a.map_err(|e| e.to_string()), b.map_err(|e| e.to_string()));
        assert_eq!(a, b);
        assert_eq!(seen(&mut narrow), seen(&mut wide));
        if a.is_err() {
            break;
        }
    }
}
