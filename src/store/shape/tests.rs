//! Reads from the kept shape against the pure engine on the whole list:
//! random lists and writes, every page and bound.

use proptest::prelude::*;

use super::context::SHOWN_ROWS;
use super::view::PAGE_ROWS;
use super::*;
use crate::Store;
use crate::todo::{Actor, Call, Op, Phase, Status, Task, ViewPage};

fn session() -> SessionId {
    SessionId::parse("s").unwrap()
}

/// A task text that is unique (its index), trimmed, and `pad` long
/// beyond that, in characters of one to three bytes and line breaks.
fn content(i: usize, pad: &[u8]) -> String {
    let mut text = format!("t{i}");
    for &b in pad {
        text.push(match b % 6 {
            0 => 'a',
            1 => ' ',
            2 => 'é',
            3 => '—',
            4 => '\n',
            _ => 'z',
        });
    }
    text.push('x');
    text
}

fn status() -> impl Strategy<Value = Status> {
    prop::sample::select(Status::ALL.to_vec())
}

/// Random lists: up to 6 phases (some empty) of up to 120 tasks, task
/// texts from 3 to about 300 characters, every status, blockers with
/// and without notes.
fn list() -> impl Strategy<Value = TodoList> {
    let task = (
        status(),
        prop::collection::vec(any::<u8>(), 0..300),
        any::<bool>(),
    );
    let phase = prop::collection::vec(task, 0..120);
    prop::collection::vec(phase, 0..6).prop_map(|phases| {
        let mut n = 0;
        TodoList::new(
            phases
                .into_iter()
                .enumerate()
                .map(|(p, tasks)| Phase {
                    name: format!("Phase {p}: {}", "ph\nase é ".repeat(p % 3))
                        .trim()
                        .to_owned(),
                    tasks: tasks
                        .into_iter()
                        .map(|(status, pad, note)| {
                            n += 1;
                            let mut task = Task::pending(content(n, &pad));
                            task.set_status(status);
                            if status == Status::Blocked && note {
                                task.blocker = Some(format!("waits for review {n} <é>"));
                            }
                            task
                        })
                        .collect(),
                })
                .collect(),
        )
    })
}

fn views() -> impl Strategy<Value = Vec<ViewPage>> {
    let phase = prop_oneof![
        3 => Just(None),
        3 => (0usize..6).prop_map(Some),
        1 => Just(Some(99)),
    ];
    prop::collection::vec((phase, 0usize..14), 1..8).prop_map(|views| {
        views
            .into_iter()
            .map(|(phase, page)| ViewPage {
                phase: phase.map(|p| {
                    if p == 99 {
                        "No such phase".to_owned()
                    } else {
                        format!("Phase {p}: {}", "ph\nase é ".repeat(p % 3))
                            .trim()
                            .to_owned()
                    }
                }),
                page,
            })
            .collect()
    })
}

/// The kept shape is the shape of the rows.
fn check_kept(store: &Store, s: &SessionId, context: &str) -> Result<(), TestCaseError> {
    let (version, kept, keyed) = store
        .read(s, |t| {
            let (version, kept) = load(&t.tx, s)?;
            Ok((version, kept, super::super::rows::load(&t.tx, s)?))
        })
        .unwrap();
    if version > 0 {
        prop_assert_eq!(kept, Some(Shape::of_keyed(&keyed)), "{}", context);
    } else {
        prop_assert_eq!(kept, None, "{}", context);
    }
    Ok(())
}

/// Every view, read narrowly, is the pure engine's view of the whole
/// list; returns how many were answered from the kept shape alone.
fn check_views(
    store: &Store,
    s: &SessionId,
    views: &[ViewPage],
    context: &str,
) -> Result<usize, TestCaseError> {
    let (list, version) = store.read(s, |tx| tx.todo_list()).unwrap();
    let mut narrow = 0;
    for view in views {
        let op = Op::View(view.clone());
        let expected = todo::run(list.clone(), Call::Op(&op), Actor::User).into_result(version);
        let got = store
            .read(s, |tx| {
                tx.todo_view(view, &crate::store::Caller::default(), 0)
            })
            .unwrap();
        prop_assert_eq!(&got.0, expected.text(), "{} {:?}", context, view);
        prop_assert_eq!(got.1, expected.is_error, "{} {:?}", context, view);
        if let Ok(text) = store.read(s, |t| view_page(&t.tx, s, view)).unwrap() {
            prop_assert_eq!(&text, expected.text(), "{} {:?}", context, view);
            prop_assert!(!expected.is_error, "{} {:?}", context, view);
            narrow += 1;
        }
    }
    // The part of the list a bounded `<todo_context>` shows.
    for max in [1, 2, 7, 50, 200] {
        let expected = match todo::ListPart::of(&list, max) {
            Some(part) => todo::Listed::Part(part),
            None => todo::Listed::Whole(list.clone()),
        };
        prop_assert_eq!(
            store.read(s, |tx| tx.todo_listed(max)).unwrap(),
            expected,
            "{} max_tasks {}",
            context,
            max
        );
    }
    Ok(narrow)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// A `view` read from the kept shape and one page's rows prints
    /// what the pure engine prints from the whole list, for every
    /// page of the list and of each phase, out-of-range pages and
    /// unknown phases included.
    #[test]
    fn a_view_read_narrowly_is_the_view_of_the_whole_list(list in list(), views in views()) {
        let mut store = Store::open_in_memory().unwrap();
        let s = session();
        check_views(&store, &s, &views, "before any write")?;
        store.write(&s, |tx| tx.todo_import(list, "test", &crate::store::Caller::default(), 1)).unwrap();
        check_kept(&store, &s, "after the import")?;
        check_views(&store, &s, &views, "after the import")?;
    }

    /// Whatever writes the list (an agent's or a user's call,
    /// accepted or refused, an undo, an import), the kept shape is the
    /// shape of its rows, and the views read with it are right.
    #[test]
    fn the_kept_shape_follows_every_write(
        first in list(),
        steps in prop::collection::vec((0u8..12, any::<prop::sample::Index>(), any::<bool>(), list()), 1..12),
        views in views(),
    ) {
        let mut store = Store::open_in_memory().unwrap();
        let s = session();
        store.write(&s, |tx| tx.todo_import(first, "test", &crate::store::Caller::default(), 1)).unwrap();
        for (i, (kind, pick, agent, other)) in steps.into_iter().enumerate() {
            let (list, _) = store.read(&s, |tx| tx.todo_list()).unwrap();
            let tasks: Vec<&Task> = list.tasks().map(|(_, t)| t).collect();
            let task = if tasks.is_empty() {
                "none".to_owned()
            } else {
                tasks[pick.index(tasks.len())].content.clone()
            };
            let phase = if list.phases.is_empty() {
                "none".to_owned()
            } else {
                list.phases[pick.index(list.phases.len())].name.clone()
            };
            let call = match kind {
                0 => serde_json::json!({"op": "start", "task": task}),
                1 => serde_json::json!({"op": "done", "task": task}),
                2 => serde_json::json!({"op": "drop", "task": task}),
                3 => serde_json::json!({"op": "rm", "task": task}),
                4 => serde_json::json!({"op": "block", "task": task, "reason": "needs a key"}),
                5 => serde_json::json!({"op": "unblock", "task": task}),
                6 => serde_json::json!({"op": "append", "phase": phase, "items": [format!("new {i}"), task]}),
                7 => serde_json::json!({"op": "done", "phase": phase}),
                8 => serde_json::json!({"op": "init", "items": [format!("only {i}")]}),
                _ => serde_json::Value::Null,
            };
            let context = format!("step {i}: {call}");
            match kind {
                9 => drop(store.write(&s, |tx| tx.todo_undo(2))),
                10 => {
                    store.write(&s, |tx| tx.todo_import(other, "test", &crate::store::Caller::default(), 2)).unwrap();
                }
                11 => drop(store.write(&s, |tx| tx.todo_undo(2)).and_then(|_| store.write(&s, |tx| tx.todo_undo(2)))),
                _ => {
                    let actor = if agent { Actor::Agent } else { Actor::User };
                    store.todo(&s, Call::Value(&call), actor, &mut crate::store::Caller::default(), 2).unwrap();
                }
            }
            check_kept(&store, &s, &context)?;
            let (list, _) = store.read(&s, |tx| tx.todo_list()).unwrap();
            prop_assert_eq!(store.read(&s, |tx| tx.status()).unwrap().1, list.counts(), "{}", context);
            check_views(&store, &s, &views, &context)?;
        }
    }
}

/// Stores `list` and checks that the part of it read narrowly for every
/// bound in `maxes` is [`todo::ListPart::of`] the list stored (or the
/// whole list); returns the list stored.
fn check_parts(list: TodoList, maxes: impl Iterator<Item = usize>, context: &str) -> TodoList {
    let mut store = Store::open_in_memory().unwrap();
    let s = session();
    store
        .write(&s, |tx| {
            tx.todo_import(list, "test", &crate::store::Caller::default(), 1)
        })
        .unwrap();
    let (list, _) = store.read(&s, |tx| tx.todo_list()).unwrap();
    for max in maxes {
        let expected = match todo::ListPart::of(&list, max) {
            Some(part) => todo::Listed::Part(part),
            None => todo::Listed::Whole(list.clone()),
        };
        let got = store.read(&s, |tx| tx.todo_listed(max)).unwrap();
        assert_eq!(got, expected, "{context}, max_tasks {max}");
    }
    list
}

/// A list of phases of tasks `task 0`, `task 1`, … with these statuses.
fn list_of(statuses: &[Vec<Status>]) -> TodoList {
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
                        let mut task = Task::pending(format!("task {n}"));
                        task.set_status(status);
                        if status == Status::Blocked {
                            task.blocker = Some(format!("waits for {n}"));
                        }
                        n += 1;
                        task
                    })
                    .collect(),
            })
            .collect(),
    )
}

/// The task in progress is found wherever it is: in a phase before the
/// first open task, among the open tasks a block lists or after the
/// last of them in the same phase, in a phase after the last one read
/// for them (a second run of the statement), alone; and lists with
/// none (every open task blocked, every task closed). With closed,
/// blocked and empty phases around it, for every bound.
#[test]
fn the_task_in_progress_is_read_wherever_it_is() {
    use Status::{Abandoned, Blocked, Completed, InProgress, Pending};
    // Phase 0 closed, phase 1 empty, then open tasks with closed and
    // blocked ones among them.
    let statuses = vec![
        vec![Completed, Abandoned, Completed],
        vec![],
        vec![Pending, Completed, Blocked, Pending],
        vec![Abandoned, Pending, Pending],
        vec![Pending, Completed, Pending],
    ];
    let total: usize = statuses.iter().map(Vec::len).sum();
    for at in 0..total {
        let mut placed = statuses.clone();
        let (p, t) = (0..placed.len())
            .flat_map(|p| (0..placed[p].len()).map(move |t| (p, t)))
            .nth(at)
            .unwrap();
        placed[p][t] = InProgress;
        let list = check_parts(
            list_of(&placed),
            1..total + 1,
            &format!("task {at} in progress"),
        );
        assert_eq!(
            list.in_progress().map(|(_, t)| t.content.as_str()),
            Some(format!("task {at}").as_str())
        );
    }
    // Every open task blocked: none in progress.
    let blocked: Vec<Vec<Status>> = statuses
        .iter()
        .map(|p| {
            p.iter()
                .map(|&s| if s == Pending { Blocked } else { s })
                .collect()
        })
        .collect();
    let list = check_parts(list_of(&blocked), 1..total + 1, "every open task blocked");
    assert!(list.in_progress().is_none());
    // The one open task in progress, the others closed.
    let one = vec![vec![Completed; 3], vec![Abandoned, InProgress, Completed]];
    check_parts(list_of(&one), 1..6, "one open task");
    // Every task closed: none listed.
    let closed = vec![vec![Completed; 3], vec![Abandoned, Completed]];
    check_parts(list_of(&closed), 1..5, "every task closed");
}

/// The narrow reads bind their `LIMIT`, which, without the query
/// planner's stability guarantee that opening a store turns on, makes
/// SQLite prepare each of them a second time at its first step.
#[test]
fn a_bound_limit_does_not_prepare_a_narrow_read_twice() {
    let mut store = Store::open_in_memory().unwrap();
    let s = session();
    let statuses = vec![vec![Status::Pending; 150], vec![Status::Pending; 150]];
    store
        .write(&s, |tx| {
            tx.todo_import(
                list_of(&statuses),
                "test",
                &crate::store::Caller::default(),
                1,
            )
        })
        .unwrap();
    let part = store.read(&s, |tx| tx.todo_listed(10)).unwrap();
    assert!(matches!(part, todo::Listed::Part(_)));
    let page = ViewPage {
        phase: None,
        page: 2,
    };
    store
        .read(&s, |t| view_page(&t.tx, &s, &page))
        .unwrap()
        .expect("read narrowly");
    let super::super::Backend::Sqlite(file) = &store.backend else {
        unreachable!("an in-memory store is SQLite")
    };
    for sql in [SHOWN_ROWS, PAGE_ROWS] {
        let stmt = file.conn.prepare_cached(sql).unwrap();
        assert_eq!(
            stmt.get_status(rusqlite::StatementStatus::RePrepare),
            0,
            "{sql}"
        );
    }
}

/// A list the size of the benchmarks' is read narrowly: its first page,
/// a later one, a phase's page.
#[test]
fn a_long_list_is_viewed_from_its_shape() {
    let mut store = Store::open_in_memory().unwrap();
    let s = session();
    let list = TodoList::new(
        (0..10)
            .map(|p| Phase {
                name: format!("Phase {p}"),
                tasks: (0..100)
                    .map(|t| {
                        let mut task = Task::pending(content(
                            p * 100 + t,
                            b"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
                        ));
                        if p < 4 {
                            task.set_status(Status::Completed);
                        }
                        task
                    })
                    .collect(),
            })
            .collect(),
    );
    store
        .write(&s, |tx| {
            tx.todo_import(list, "test", &crate::store::Caller::default(), 1)
        })
        .unwrap();
    let views = [
        ViewPage::first(),
        ViewPage {
            phase: None,
            page: 7,
        },
        ViewPage {
            phase: Some("Phase 3".into()),
            page: 1,
        },
    ];
    let narrow = check_views(&store, &s, &views, "1,000 tasks").unwrap();
    assert_eq!(narrow, 3);
    let (text, _) = store
        .read(&s, |tx| {
            tx.todo_view(&ViewPage::first(), &crate::store::Caller::default(), 0)
        })
        .unwrap();
    assert!(text.starts_with("Overall: 400/1000 done, 600 open.\nActive phase 5/10 \"Phase 4\" (0/100 done).\nPage 1/"), "{text}");
}
