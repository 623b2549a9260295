//! The in-place path against the whole-list one: two stores get the same
//! calls, one through [`Store::todo_answer`], one through [`Store::todo`],
//! and must agree on everything a user or a model can see.

use std::cell::Cell;

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use serde_json::{Value, json};

use crate::store::patch::KeyedList;
use crate::store::shape::{self, Shape};
use crate::todo::{Actor, Call, Phase, Status, Task, TodoList};
use crate::{SessionId, Store};

fn session() -> SessionId {
    SessionId::parse("s").unwrap()
}

/// A list of `phases` phases of tasks whose texts are `width` characters
/// or more, with the given statuses, some blockers with notes.
fn list_of(phases: &[Vec<(Status, bool)>], width: usize) -> TodoList {
    let mut n = 0;
    TodoList::new(
        phases
            .iter()
            .enumerate()
            .map(|(p, tasks)| Phase {
                name: format!("Phase {p}: {}", "é\n".repeat(p % 2))
                    .trim()
                    .to_owned(),
                tasks: tasks
                    .iter()
                    .map(|&(status, note)| {
                        n += 1;
                        let mut task = Task::pending(format!("task {n} {}", "x".repeat(width)));
                        task.set_status(status);
                        if status == Status::Blocked && note {
                            task.blocker = Some(format!("waits for <{n}>"));
                        }
                        task
                    })
                    .collect(),
            })
            .collect(),
    )
}

/// Random lists, most too long for their summary to fit whole, some short
/// enough that it may (those go the whole way).
fn list() -> impl Strategy<Value = TodoList> {
    let task = (prop::sample::select(Status::ALL.to_vec()), any::<bool>());
    let phases = prop::collection::vec(prop::collection::vec(task, 0..60), 1..5);
    (phases, prop_oneof![4 => Just(60usize), 1 => Just(3usize)])
        .prop_map(|(phases, width)| list_of(&phases, width))
}

/// One call: what it does, which task or phase it picks, and who sends it.
fn steps() -> impl Strategy<Value = Vec<(u8, prop::sample::Index, bool)>> {
    prop::collection::vec(
        (0u8..16, any::<prop::sample::Index>(), any::<bool>()),
        1..14,
    )
}

/// The call for step `kind` on `list`.
fn call_for(kind: u8, pick: &prop::sample::Index, list: &TodoList) -> Value {
    let tasks: Vec<&Task> = list.tasks().map(|(_, t)| t).collect();
    let task = if tasks.is_empty() {
        "none".to_owned()
    } else {
        tasks[pick.index(tasks.len())].content.clone()
    };
    let phase = list
        .phases
        .get(pick.index(list.phases.len().max(1)))
        .map_or("none".to_owned(), |p| p.name.clone());
    match kind {
        0 | 1 => json!({"op": "start", "task": task}),
        2 | 3 => json!({"op": "done", "task": task}),
        4 => json!({"op": "drop", "task": task}),
        5 => json!({"op": "rm", "task": task}),
        6 => json!({"op": "block", "task": task, "reason": "needs a key"}),
        7 => json!({"op": "block", "task": task}),
        8 => json!({"op": "unblock", "task": task}),
        // Repaired on the way: an ignored note and an empty field.
        9 => json!({"op": "done", "task": task, "reason": "finished", "items": []}),
        10 => json!({"op": "done", "task": format!("{task} (missing)")}),
        11 => json!({"op": "done", "task": task.to_uppercase()}),
        12 => json!({"op": "block", "phase": phase}),
        13 => json!({"op": "append", "phase": phase, "items": ["one more"]}),
        14 => json!({"op": "view"}),
        _ => json!({"op": "start"}),
    }
}

/// What a user or a model can see of a store's session.
fn seen(store: &Store) -> (TodoList, i64, Option<String>, Vec<crate::store::Event>) {
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

/// The shape kept for the session is the shape of its rows.
fn check_kept(store: &Store, context: &str) -> Result<(), TestCaseError> {
    let s = session();
    let (version, kept, keyed) = store
        .read(&s, |t| {
            let (version, kept) = shape::load(&t.tx, &s)?;
            Ok((version, kept, crate::store::rows::load(&t.tx, &s)?))
        })
        .unwrap();
    let expected = (version > 0).then(|| Shape::of_keyed(&keyed));
    prop_assert_eq!(kept, expected, "{}", context);
    Ok(())
}

#[test]
fn a_call_run_in_place_is_the_call_run_on_the_whole_list() {
    let in_place = Cell::new(0usize);
    let whole = Cell::new(0usize);
    let mut runner = TestRunner::new(Config::with_cases(96));
    runner
        .run(&(list(), steps(), any::<bool>()), |(first, steps, keep)| {
            let s = session();
            let mut narrow = Store::open_in_memory().unwrap();
            // A caller that keeps its lists (the MCP server's) must keep
            // them right through calls run in place: its `view`s show it.
            let mut kept = crate::store::Caller::default();
            if keep {
                kept.keep_lists();
            }
            let mut wide = Store::open_in_memory().unwrap();
            narrow
                .write(&s, |tx| {
                    tx.todo_import(first.clone(), "test", &crate::store::Caller::default(), 1)
                })
                .unwrap();
            wide.write(&s, |tx| {
                tx.todo_import(first, "test", &crate::store::Caller::default(), 1)
            })
            .unwrap();
            for (i, (kind, pick, agent)) in steps.iter().enumerate() {
                let (list, _) = wide.read(&s, |tx| tx.todo_list()).unwrap();
                let call = call_for(*kind, pick, &list);
                let actor = if *agent { Actor::Agent } else { Actor::User };
                let context = format!("step {i}: {call} by {actor:?}");
                let now = 10 + i as i64;
                if *kind == 15 {
                    // An undo on both, of whatever the last step stored.
                    let a = narrow
                        .write(&s, |tx| tx.todo_undo(now))
                        .map(|r| r.text().to_owned());
                    let b = wide
                        .write(&s, |tx| tx.todo_undo(now))
                        .map(|r| r.text().to_owned());
                    prop_assert_eq!(
                        a.map_err(|e| e.to_string()),
                        b.map_err(|e| e.to_string()),
                        "{}",
                        context
                    );
                } else {
                    let (got, placed) = narrow
                        .answer(&s, Call::Value(&call), actor, &mut kept, now)
                        .unwrap();
                    let expected = wide
                        .todo(
                            &s,
                            Call::Value(&call),
                            actor,
                            &mut crate::store::Caller::default(),
                            now,
                        )
                        .unwrap();
                    prop_assert_eq!(&got.text, expected.text(), "{}", context);
                    prop_assert_eq!(got.is_error, expected.is_error, "{}", context);
                    prop_assert_eq!(&got.op, &expected.details.op, "{}", context);
                    prop_assert_eq!(got.version, expected.details.version, "{}", context);
                    prop_assert_eq!(
                        got.completed_tasks,
                        expected.details.completed_tasks.len(),
                        "{}",
                        context
                    );
                    if placed {
                        in_place.set(in_place.get() + 1);
                    } else {
                        whole.set(whole.get() + 1);
                    }
                }
                prop_assert_eq!(seen(&narrow), seen(&wide), "{}", context);
                check_kept(&narrow, &context)?;
            }
            // Every version the history keeps comes back the same way.
            for i in 0..steps.len() {
                let a = narrow
                    .write(&s, |tx| tx.todo_undo(100))
                    .map(|r| r.text().to_owned());
                let b = wide
                    .write(&s, |tx| tx.todo_undo(100))
                    .map(|r| r.text().to_owned());
                let (a, b) = (a.map_err(|e| e.to_string()), b.map_err(|e| e.to_string()));
                prop_assert_eq!(&a, &b, "undo {}", i);
                prop_assert_eq!(seen(&narrow), seen(&wide), "undo {}", i);
                if a.is_err() {
                    break;
                }
            }
            Ok(())
        })
        .unwrap();
    // Both paths ran, each for a good share of the calls (about a third
    // run in place: a fifth of the lists are short, and a third of the
    // calls are of other kinds or name no task).
    let calls = in_place.get() + whole.get();
    assert!(
        in_place.get() * 10 > calls && whole.get() * 10 > calls,
        "in place {}, whole {}",
        in_place.get(),
        whole.get()
    );
}

/// The list of the benchmarks: 1,000 tasks in 10 phases, the first 400
/// completed, the next in progress.
fn bench_list() -> TodoList {
    let mut list = list_of(&vec![vec![(Status::Pending, false); 100]; 10], 50);
    for (i, task) in list
        .phases
        .iter_mut()
        .flat_map(|p| &mut p.tasks)
        .enumerate()
    {
        if i < 400 {
            task.set_status(Status::Completed);
        }
    }
    list
}

/// Each targeted op on a long list is answered in place, with the text
/// the whole-list path gives, and leaves the rows and the shape it would.
#[test]
fn every_targeted_op_on_a_long_list_runs_in_place() {
    let s = session();
    let mut narrow = Store::open_in_memory().unwrap();
    let mut wide = Store::open_in_memory().unwrap();
    narrow
        .write(&s, |tx| {
            tx.todo_import(bench_list(), "test", &crate::store::Caller::default(), 1)
        })
        .unwrap();
    wide.write(&s, |tx| {
        tx.todo_import(bench_list(), "test", &crate::store::Caller::default(), 1)
    })
    .unwrap();
    let task = |i: usize| format!("task {i} {}", "x".repeat(50));
    let calls = [
        (json!({"op": "start", "task": task(403)}), Actor::Agent),
        (json!({"op": "done", "task": task(403)}), Actor::Agent),
        (
            json!({"op": "block", "task": task(404), "reason": "a key"}),
            Actor::Agent,
        ),
        (json!({"op": "block", "task": task(404)}), Actor::Agent),
        (json!({"op": "unblock", "task": task(404)}), Actor::User),
        (json!({"op": "drop", "task": task(405)}), Actor::User),
        (json!({"op": "drop", "task": task(406)}), Actor::Agent),
        (json!({"op": "rm", "task": task(407)}), Actor::Agent),
        (json!({"op": "done", "task": task(1)}), Actor::Agent),
        (
            json!({"op": "done", "task": task(402), "reason": "x"}),
            Actor::Agent,
        ),
    ];
    for (call, actor) in &calls {
        let (answer, placed) = narrow
            .answer(
                &s,
                Call::Value(call),
                *actor,
                &mut crate::store::Caller::default(),
                5,
            )
            .unwrap();
        let (text, is_error) = (answer.text, answer.is_error);
        let expected = wide
            .todo(
                &s,
                Call::Value(call),
                *actor,
                &mut crate::store::Caller::default(),
                5,
            )
            .unwrap();
        assert!(placed, "{call} went the whole way");
        assert!(!is_error, "{text}");
        assert_eq!(text, expected.text(), "{call}");
        let no_op =
            call["task"] == task(1) || (call["op"] == "block" && call.get("reason").is_none());
        assert_eq!(text.starts_with("No change"), no_op, "{text}");
        assert_eq!(seen(&narrow), seen(&wide), "{call}");
    }
    let (list, version) = narrow.read(&s, |tx| tx.todo_list()).unwrap();
    // One version per call but the two no-ops: a `block` that keeps the
    // note, a `done` of a completed task.
    assert_eq!(version, 9);
    let dropped = &list.phases[4].tasks[4];
    assert_eq!(dropped.content, task(405));
    assert_eq!(
        (dropped.status, dropped.dropped_by),
        (Status::Abandoned, Some(crate::todo::DroppedBy::User))
    );
    let keyed = narrow
        .read(&s, |t| crate::store::rows::load(&t.tx, &s))
        .unwrap();
    let KeyedList { list: rows, .. } = &keyed;
    assert_eq!(*rows, list);
}

/// A list with named agents goes the whole way: a named agent's call
/// (its claims are rows this path does not read), and, once one has
/// called, anyone's, whose rules differ there (a person's `done` advances
/// no one). A `block` with `after` too, which links two tasks.
#[test]
fn a_list_named_agents_work_on_goes_the_whole_way() {
    let s = session();
    let mut store = Store::open_in_memory().unwrap();
    store
        .write(&s, |tx| {
            tx.todo_import(bench_list(), "test", &crate::store::Caller::default(), 1)
        })
        .unwrap();
    let task = |i: usize| format!("task {i} {}", "x".repeat(50));
    let after = json!({"op": "block", "task": task(410), "after": task(411)});
    let (_, placed) = store
        .answer(
            &s,
            Call::Value(&after),
            Actor::Agent,
            &mut crate::store::Caller::default(),
            5,
        )
        .unwrap();
    assert!(!placed, "a block with after went in place");
    let mut w1 = crate::store::Caller::default();
    w1.act_as(crate::AgentName::parse("w1").unwrap(), 600);
    let start = json!({"op": "start", "task": task(403)});
    let (answer, placed) = store
        .answer(&s, Call::Value(&start), Actor::Agent, &mut w1, 5)
        .unwrap();
    assert!(!placed && !answer.is_error, "{}", answer.text);
    let release = crate::todo::Op::Release(crate::todo::Release::Task(task(403)));
    store
        .todo(
            &s,
            Call::Op(&release),
            Actor::User,
            &mut crate::store::Caller::default(),
            6,
        )
        .unwrap();
    let unblock = json!({"op": "unblock", "task": task(410)});
    store
        .answer(
            &s,
            Call::Value(&unblock),
            Actor::User,
            &mut crate::store::Caller::default(),
            6,
        )
        .unwrap();
    // No agent holds anything now, but w1 has called: a person's `done`
    // of the earliest open task goes the whole way, and promotes no one.
    let done = json!({"op": "done", "task": task(401)});
    let (answer, placed) = store
        .answer(
            &s,
            Call::Value(&done),
            Actor::User,
            &mut crate::store::Caller::default(),
            7,
        )
        .unwrap();
    assert!(!placed && !answer.is_error, "{}", answer.text);
    let (list, _) = store.read(&s, |tx| tx.todo_list()).unwrap();
    assert_eq!(list.in_progress(), None, "{}", answer.text);
}

/// What goes the whole way: a missing task (its error looks at the whole
/// list), a phase as target, a user's `rm`, `append`; nothing of those is
/// written before the whole-list path runs.
#[test]
fn what_the_rows_cannot_answer_goes_the_whole_way() {
    let s = session();
    let mut store = Store::open_in_memory().unwrap();
    store
        .write(&s, |tx| {
            tx.todo_import(bench_list(), "test", &crate::store::Caller::default(), 1)
        })
        .unwrap();
    let task = |i: usize| format!("task {i} {}", "x".repeat(50));
    let calls = [
        (
            json!({"op": "done", "task": "TASK 403"}),
            Actor::Agent,
            true,
        ),
        (
            json!({"op": "done", "phase": "Phase 8:"}),
            Actor::Agent,
            false,
        ),
        (json!({"op": "rm", "task": task(403)}), Actor::User, false),
        (
            json!({"op": "append", "phase": "Phase 8:", "items": ["more"]}),
            Actor::Agent,
            false,
        ),
        (
            json!({"op": "init", "items": ["only"]}),
            Actor::Agent,
            false,
        ),
    ];
    for (call, actor, rejected) in &calls {
        let before = seen(&store);
        let (answer, placed) = store
            .answer(
                &s,
                Call::Value(call),
                *actor,
                &mut crate::store::Caller::default(),
                5,
            )
            .unwrap();
        let (text, is_error) = (answer.text, answer.is_error);
        assert!(!placed, "{call}");
        assert_eq!(is_error, *rejected, "{call}: {text}");
        if *rejected {
            assert!(text.contains("not found"), "{text}");
            assert_eq!(
                seen(&store).1,
                before.1,
                "a rejected call stores no version"
            );
        } else {
            assert_eq!(seen(&store).1, before.1 + 1, "{call}");
        }
    }
}

/// A list that is not normalized (two tasks in progress, written from
/// outside) is not answered in place, whether it has no kept shape (the
/// trigger forgot it) or one that counts both: the call goes the whole
/// way, which normalizes it.
#[test]
fn a_list_that_is_not_normalized_goes_the_whole_way() {
    let s = session();
    let task = |i: usize| format!("task {i} {}", "x".repeat(50));
    for shaped in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("g.db");
        let mut store = Store::open(&db).unwrap();
        store
            .write(&s, |tx| {
                tx.todo_import(bench_list(), "test", &crate::store::Caller::default(), 1)
            })
            .unwrap();
        let mut list = bench_list();
        list.phases[4].tasks[0].set_status(Status::InProgress);
        list.phases[9].tasks[0].set_status(Status::InProgress);
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.execute(
            "UPDATE tasks SET status = 'in_progress' WHERE phase_pos = 9 AND pos = 0",
            [],
        )
        .unwrap();
        if shaped {
            let shape = Shape::of_keyed(&KeyedList::positional(list));
            conn.execute("UPDATE sessions SET todo_shape = ?1", [shape.to_json()])
                .unwrap();
        }
        let call = json!({"op": "done", "task": task(1)});
        let (_, placed) = store
            .answer(
                &s,
                Call::Value(&call),
                Actor::Agent,
                &mut crate::store::Caller::default(),
                5,
            )
            .unwrap();
        assert!(!placed, "shaped: {shaped}");
        let (list, _) = store.read(&s, |tx| tx.todo_list()).unwrap();
        let active: Vec<&str> = list
            .tasks()
            .filter(|(_, t)| t.status == Status::InProgress)
            .map(|(_, t)| t.content.as_str())
            .collect();
        assert_eq!(
            active,
            [task(401)],
            "the whole-list path normalized the list"
        );
    }
}

/// SQLite finds the named task by the index of the start of task texts, and the task
/// in progress by the primary key within its phase: no statement of the
/// in-place path steps through the whole list.
#[test]
fn the_named_task_is_found_by_its_index() {
    let conn = rusqlite::Connection::open_in_memory().unwrap();
    crate::store::migrations::migrate(&conn, None).unwrap();
    let sql = format!("EXPLAIN QUERY PLAN {}", super::NAMED_AND_ACTIVE_SQLITE);
    let mut stmt = conn.prepare(&sql).unwrap();
    let plan: Vec<String> = stmt
        .query_map(rusqlite::params!["s", "x", 1], |r| r.get::<_, String>(3))
        .unwrap()
        .map(|r| r.unwrap())
        .collect();
    let searches: Vec<&String> = plan.iter().filter(|p| p.starts_with("SEARCH")).collect();
    assert_eq!(
        searches,
        [
            "SEARCH tasks USING INDEX tasks_by_prefix (session_id=? AND <expr>=?)",
            "SEARCH tasks USING PRIMARY KEY (session_id=? AND phase_pos=?)",
        ],
        "{plan:?}"
    );
}

/// A row the kept shape does not know of (written from outside, with the
/// shape put back by hand, so the trigger's forgetting is undone) that the
/// summary would list is a corrupt list: the call is refused with the
/// session named, and its transaction, writes included, is rolled back.
#[test]
fn a_row_outside_the_shapes_phases_is_refused_and_nothing_is_stored() {
    let s = session();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("g.db");
    let mut store = Store::open(&db).unwrap();
    // One phase of 60 long tasks, all completed but the last two.
    let mut list = list_of(&[vec![(Status::Completed, false); 60]], 60);
    for task in &mut list.phases[0].tasks[58..] {
        task.set_status(Status::Pending);
    }
    store
        .write(&s, |tx| {
            tx.todo_import(list, "test", &crate::store::Caller::default(), 1)
        })
        .unwrap();
    let conn = rusqlite::Connection::open(&db).unwrap();
    let shape: String = conn
        .query_row("SELECT todo_shape FROM sessions", [], |r| r.get(0))
        .unwrap();
    conn.execute(
        "INSERT INTO tasks (session_id, phase_pos, pos, content, status) VALUES ('s', 99, 0, 'stray', 'pending')",
        [],
    )
    .unwrap();
    conn.execute("UPDATE sessions SET todo_shape = ?1", [&shape])
        .unwrap();
    let state = |conn: &rusqlite::Connection| -> (i64, String, i64) {
        conn.query_row(
            "SELECT todo_version, todo_shape, (SELECT count(*) FROM events) FROM sessions",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap()
    };
    let statuses = |conn: &rusqlite::Connection| -> Vec<String> {
        let mut stmt = conn
            .prepare("SELECT status FROM tasks ORDER BY phase_pos, pos")
            .unwrap();
        stmt.query_map([], |r| r.get(0))
            .unwrap()
            .map(|r| r.unwrap())
            .collect()
    };
    let (before, rows_before) = (state(&conn), statuses(&conn));
    let call = json!({"op": "done", "task": format!("task 59 {}", "x".repeat(60))});
    let err = store
        .answer(
            &s,
            Call::Value(&call),
            Actor::Agent,
            &mut crate::store::Caller::default(),
            5,
        )
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("todo list of session s") && err.contains("a task outside its phases"),
        "{err}"
    );
    assert_eq!(state(&conn), before);
    assert_eq!(statuses(&conn), rows_before);
}
