//! The todo engine on lists of 10 / 1,000 / 10,000 tasks: one `apply` of a
//! typed op, one `run` of a JSON call (parse + apply), the per-command
//! work around them in the CLI (the summary text, the JSON state the store
//! reads and writes), and a whole call through the store on a file.
//!
//! Each iteration works on a fresh clone of the list; the clone is made
//! outside the timed part (`iter_batched`), and `clone` is measured on its
//! own so the two can be told apart.

mod common;

use std::hint::black_box;

use common::{SIZES, batch_size, list, middle_task};
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use goalkeeper::store::Caller;
use goalkeeper::todo::{Actor, Call, Op, SummaryKind, Target, TodoList, apply, run, summary};
use goalkeeper::{SessionId, Store};

fn bench_apply(c: &mut Criterion) {
    let mut group = c.benchmark_group("apply");
    for n in SIZES {
        let list = list(n);
        let middle = middle_task(&list);
        let ops = [
            ("done_middle", Op::Done(Target::Task(middle.clone()))),
            ("start_middle", Op::Start(middle.clone())),
            (
                "append_one",
                Op::Append("Phase 1: milestone".into(), vec!["A brand new task".into()]),
            ),
        ];
        for (name, op) in &ops {
            group.bench_with_input(BenchmarkId::new(*name, n), &list, |b, list| {
                b.iter_batched(
                    || list.clone(),
                    |mut list| {
                        let completed = apply(&mut list, black_box(op), Actor::Agent);
                        (list, completed)
                    },
                    batch_size(n),
                )
            });
        }
        group.bench_with_input(BenchmarkId::new("clone", n), &list, |b, list| {
            b.iter(|| black_box(list).clone())
        });
    }
    group.finish();
}

fn bench_run(c: &mut Criterion) {
    let mut group = c.benchmark_group("run_json");
    for n in SIZES {
        let list = list(n);
        let call = serde_json::json!({"op": "done", "task": middle_task(&list)}).to_string();
        group.bench_with_input(BenchmarkId::new("done_middle", n), &list, |b, list| {
            b.iter_batched(
                || list.clone(),
                |list| run(list, Call::Json(black_box(&call)), Actor::Agent),
                batch_size(n),
            )
        });
    }
    group.finish();
}

fn bench_cli_work(c: &mut Criterion) {
    let mut group = c.benchmark_group("per_command");
    for n in SIZES {
        let list = list(n);
        let state = serde_json::to_string(&list).expect("serializes");
        group.bench_with_input(BenchmarkId::new("summary", n), &list, |b, list| {
            b.iter(|| summary(black_box(list), &[], SummaryKind::Mutation))
        });
        group.bench_with_input(BenchmarkId::new("state_to_json", n), &list, |b, list| {
            b.iter(|| serde_json::to_string(black_box(list)).expect("serializes"))
        });
        group.bench_with_input(BenchmarkId::new("state_from_json", n), &state, |b, s| {
            b.iter(|| serde_json::from_str::<TodoList>(black_box(s)).expect("parses"))
        });
    }
    group.finish();
}

/// One agent call through `Store::todo` on a database file, as a CLI
/// command makes it but without the process: read the list, apply, write
/// the list and its event, commit. Alternates `start` between two tasks so
/// every call writes.
fn bench_store(c: &mut Criterion) {
    let mut group = c.benchmark_group("store");
    for n in SIZES {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut store = Store::open(dir.path().join("bench.db")).expect("store");
        let session = SessionId::parse("bench").expect("session id");
        let tasks: Vec<String> = list(n).tasks().map(|(_, t)| t.content.clone()).collect();
        let init = serde_json::json!({"op": "init", "items": tasks}).to_string();
        store
            .todo(
                &session,
                Call::Json(&init),
                Actor::User,
                &mut Caller::default(),
                0,
            )
            .expect("init");
        let calls: Vec<String> = [n / 2, n / 2 + 1]
            .iter()
            .map(|&i| serde_json::json!({"op": "start", "task": tasks[i]}).to_string())
            .collect();
        let mut turn = 0;
        group.bench_function(BenchmarkId::new("todo_start", n), |b| {
            b.iter(|| {
                turn += 1;
                let call = &calls[turn % 2];
                store
                    .todo(
                        &session,
                        Call::Json(call),
                        Actor::Agent,
                        &mut Caller::default(),
                        0,
                    )
                    .expect("applies")
            })
        });
        group.bench_function(BenchmarkId::new("todo_view", n), |b| {
            b.iter(|| {
                store
                    .todo(
                        &session,
                        Call::Json(r#"{"op":"view"}"#),
                        Actor::Agent,
                        &mut Caller::default(),
                        0,
                    )
                    .expect("views")
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench_apply, bench_run, bench_cli_work, bench_store);
criterion_main!(benches);
