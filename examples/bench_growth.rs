//! How much the database file grows per mutation, for `BENCHMARKS.md`.
//!
//! ```text
//! bench_growth DIR [--tasks N,N,...] [--mutations N]
//! ```
//!
//! For each list size: a new database in `DIR` with one session of that
//! many tasks (phases of 100, 40% completed, as `bench_db` builds), then
//! `--mutations` agent calls through `Store::todo`, each in a store opened
//! for it (as a CLI process would): `start` of two pending tasks in turn,
//! with every tenth call a `done` of the next pending task and every
//! fiftieth an `append` of a new 60-character task. Then a second run
//! appends 1,000-character tasks. Sizes are of the database file after a
//! full checkpoint (`wal_checkpoint(TRUNCATE)`), so nothing sits in the WAL.

use std::path::{Path, PathBuf};

use goalkeeper::store::Caller;
use goalkeeper::todo::{Actor, Call, Op, PhaseItems, Target};
use goalkeeper::{SessionId, Store};

const NOW_MS: i64 = 1_764_441_600_000;

fn task_name(i: usize) -> String {
    format!("Task {i:05}: update the parser and its tests for case {i}")
}

fn checkpointed_size(path: &Path) -> u64 {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
        .unwrap();
    drop(conn);
    std::fs::metadata(path).unwrap().len()
}

fn build(path: &Path, tasks: usize) -> SessionId {
    let session = SessionId::parse("bench").unwrap();
    let mut store = Store::open(path).unwrap();
    let phases = tasks.div_ceil(100);
    let init = Op::Init(
        (0..phases)
            .map(|p| PhaseItems {
                name: format!("Phase {}: milestone", p + 1),
                items: (p * 100..((p + 1) * 100).min(tasks))
                    .map(task_name)
                    .collect(),
            })
            .collect(),
    );
    store
        .todo(
            &session,
            Call::Op(&init),
            Actor::User,
            &mut Caller::default(),
            NOW_MS,
        )
        .unwrap();
    for p in 0..phases * 2 / 5 {
        let done = Op::Done(Target::Phase(format!("Phase {}: milestone", p + 1)));
        store
            .todo(
                &session,
                Call::Op(&done),
                Actor::User,
                &mut Caller::default(),
                NOW_MS,
            )
            .unwrap();
    }
    session
}

fn mutate(path: &Path, session: &SessionId, op: &Op) {
    let mut store = Store::open(path).unwrap();
    let result = store
        .todo(
            session,
            Call::Op(op),
            Actor::Agent,
            &mut Caller::default(),
            NOW_MS,
        )
        .unwrap();
    assert!(
        !result.is_error,
        "{}",
        result.text().lines().next().unwrap_or_default()
    );
}

fn main() {
    let mut args = std::env::args().skip(1);
    let mut dir = None;
    let mut sizes = vec![10, 1_000, 10_000];
    let mut mutations = 1_000;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--tasks" => {
                sizes = args
                    .next()
                    .expect("--tasks N,N")
                    .split(',')
                    .map(|n| n.parse().expect("a number"))
                    .collect()
            }
            "--mutations" => mutations = args.next().and_then(|n| n.parse().ok()).expect("N"),
            other => dir = Some(PathBuf::from(other)),
        }
    }
    let dir = dir.expect("usage: bench_growth DIR [--tasks N,N] [--mutations N]");
    println!(
        "{:>7} {:>10} {:>12} {:>12} {:>14}",
        "tasks", "mutations", "before", "after", "per mutation"
    );
    for &tasks in &sizes {
        let path = dir.join(format!("growth-{tasks}.db"));
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
        }
        let session = build(&path, tasks);
        let before = checkpointed_size(&path);
        // Pending tasks of the builder's list: the middle one and after.
        let first_pending = if tasks >= 100 {
            (tasks.div_ceil(100) * 2 / 5) * 100
        } else {
            0
        };
        let (a, b) = (task_name(first_pending + 1), task_name(first_pending + 2));
        let mut next_done = first_pending + 3;
        for i in 0..mutations {
            // A 10,000-task list is at the limit: no appends there.
            let op = if i % 50 == 49 && tasks + i / 50 < 10_000 {
                Op::Append(
                    "Phase 1: milestone".into(),
                    vec![format!(
                        "Added task {i:05}: one more case found while testing"
                    )],
                )
            } else if i % 10 == 9 && next_done < tasks {
                next_done += 1;
                Op::Done(Target::Task(task_name(next_done - 1)))
            } else {
                Op::Start(if i % 2 == 0 { a.clone() } else { b.clone() })
            };
            mutate(&path, &session, &op);
        }
        let after = checkpointed_size(&path);
        println!(
            "{tasks:>7} {mutations:>10} {before:>12} {after:>12} {:>12.0} B",
            (after as f64 - before as f64) / mutations as f64
        );
    }
    // Appends of 1,000-character tasks to a 1,000-task list.
    let path = dir.join("growth-long-appends.db");
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
    }
    let session = build(&path, 1_000);
    let before = checkpointed_size(&path);
    let appends = mutations.min(1_000);
    for i in 0..appends {
        let mut text = format!("Long task {i:05} ");
        while text.len() < 1_000 {
            text.push_str("with a long description ");
        }
        text.truncate(1_000);
        let op = Op::Append("Long tasks".into(), vec![text]);
        mutate(&path, &session, &op);
    }
    let after = checkpointed_size(&path);
    println!(
        "{:>7} {appends:>10} {before:>12} {after:>12} {:>12.0} B  (appends of 1,000-character tasks)",
        "1000+",
        (after as f64 - before as f64) / appends as f64
    );
}
