//! One cold render, as a CLI process or a hook event pays it, for counting
//! instructions with callgrind (BENCHMARKS.md reports them):
//!
//! ```text
//! render_cold goal-mode-context|goal-continuation|none
//! ```
//!
//! Each case builds a fresh injector with the built-in templates and
//! default settings and renders its message once for a 10-task list (the
//! criterion bench's `render/cold_*` cases, once instead of in a loop).
//! The work is inside `cold`, which is never inlined, so
//! `callgrind_annotate --inclusive=yes` shows its cost apart from the
//! process around it.

use std::hint::black_box;

use goalkeeper::goal::Goal;
use goalkeeper::prompt::{Injector, Templates};
use goalkeeper::settings::Settings;
use goalkeeper::todo::{Phase, Status, Task, TodoList, normalize};

const NOW_MS: i64 = 1_764_441_600_000;

/// Ten tasks in one phase: four completed, the first pending one in progress.
fn list() -> TodoList {
    let mut phase = Phase::new("Phase 1: milestone".to_owned());
    for i in 0..10 {
        let mut task = Task::pending(format!(
            "Task {i:05}: update the parser and its tests for case {i}"
        ));
        if i < 4 {
            task.set_status(Status::Completed);
        }
        phase.tasks.push(task);
    }
    let mut list = TodoList::new(vec![phase]);
    normalize(&mut list);
    list
}

#[inline(never)]
fn cold(case: &str, goal: &Goal, list: &TodoList, tools: &[String]) -> usize {
    let injector = Injector::new(Templates::builtin(), Settings::default());
    let message = match case {
        "goal-mode-context" => injector.goal_mode_context(Some(goal), list, tools, NOW_MS),
        "goal-continuation" => injector.continuation(Some(goal), list, tools, NOW_MS),
        "none" => return 0,
        other => panic!("unknown case {other:?}"),
    };
    message.expect("renders").expect("gates open").content.len()
}

fn main() {
    let case = std::env::args().nth(1).unwrap_or_else(|| "none".to_owned());
    let goal = Goal::new(
        1,
        "Ship the release: parser, CLI and docs".into(),
        Some(200_000),
        NOW_MS - 600_000,
    );
    let tools = vec!["todo".to_owned(), "goal".to_owned()];
    let list = list();
    println!("{}", cold(black_box(&case), &goal, &list, &tools));
}
