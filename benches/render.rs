//! Prompt rendering on lists of 10 / 1,000 / 10,000 tasks: the bare
//! `<todo_context>` block (and its read-only variant, the extended
//! template) and the whole goal-mode-context message (the
//! active-goal prompt with the block), with the built-in templates and
//! default settings; and once more from a fresh injector, as in a CLI call
//! or a hook event, where the templates it uses are parsed first: the
//! goal-mode-context message and the goal-continuation (the Stop hook's).

mod common;

use std::hint::black_box;

use common::{SIZES, list};
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use goalkeeper::goal::Goal;
use goalkeeper::prompt::Injector;
use goalkeeper::prompt::{ContextOptions, Templates, todo_context};
use goalkeeper::settings::Settings;

const NOW_MS: i64 = 1_764_441_600_000;

fn bench_render(c: &mut Criterion) {
    let templates = Templates::builtin();
    let injector = Injector::new(Templates::builtin(), Settings::default());
    let goal = Goal::new(
        1,
        "Ship the release: parser, CLI and docs".into(),
        Some(200_000),
        NOW_MS - 600_000,
    );
    let tools = vec!["todo".to_owned(), "goal".to_owned()];
    let options = ContextOptions::default();
    // The read-only variant (todo tool inactive): the extended template.
    let read_only = ContextOptions {
        tool_active: false,
        read_only_when_inactive: true,
        ..ContextOptions::default()
    };

    let mut group = c.benchmark_group("render");
    for n in SIZES {
        let list = list(n);
        group.bench_with_input(BenchmarkId::new("todo_context", n), &list, |b, list| {
            b.iter(|| {
                todo_context(&templates, black_box(list), &options)
                    .expect("renders")
                    .expect("gates open")
            })
        });
        group.bench_with_input(
            BenchmarkId::new("read_only_context", n),
            &list,
            |b, list| {
                b.iter(|| {
                    todo_context(&templates, black_box(list), &read_only)
                        .expect("renders")
                        .expect("gates open")
                })
            },
        );
        group.bench_with_input(
            BenchmarkId::new("goal_mode_context", n),
            &list,
            |b, list| {
                b.iter(|| {
                    injector
                        .goal_mode_context(Some(&goal), black_box(list), &tools, NOW_MS)
                        .expect("renders")
                        .expect("gates open")
                })
            },
        );
    }
    group.finish();

    // What one CLI call pays: a fresh injector (templates are parsed on
    // first use) rendering the message once, here for a 10-task list.
    let small = list(10);
    c.bench_function("render/cold_goal_mode_context/10", |b| {
        b.iter(|| {
            Injector::new(Templates::builtin(), Settings::default())
                .goal_mode_context(Some(&goal), black_box(&small), &tools, NOW_MS)
                .expect("renders")
                .expect("gates open")
        })
    });
    c.bench_function("render/cold_goal_continuation/10", |b| {
        b.iter(|| {
            Injector::new(Templates::builtin(), Settings::default())
                .continuation(Some(&goal), black_box(&small), &tools, NOW_MS)
                .expect("renders")
                .expect("gates open")
        })
    });
}

criterion_group!(benches, bench_render);
criterion_main!(benches);
