//! Fixtures shared by the benchmarks: normalized lists of a given size that
//! look like real ones (phases of 100 tasks, sentence-length contents, a mix
//! of statuses with a few blocker notes), and how to batch their clones.

#![allow(dead_code)]

use criterion::BatchSize;
use goalkeeper::todo::{DroppedBy, Phase, Status, Task, TodoList, normalize};

/// The list sizes every benchmark runs on.
pub const SIZES: [usize; 3] = [10, 1_000, 10_000];

/// Tasks per phase in a fixture list.
const PHASE_TASKS: usize = 100;

/// The content of task `i`: about 60 characters, like a real task line.
pub fn task_name(i: usize) -> String {
    format!("Task {i:05}: update the parser and its tests for case {i}")
}

/// A normalized list of `tasks` tasks: the first 40% completed, every 25th
/// of the rest abandoned (every other one by the user), every 50th blocked
/// with a note, the others pending, and then the earliest pending task is
/// in progress. Every task id `i` is at position `i` in list order.
pub fn list(tasks: usize) -> TodoList {
    let mut phases: Vec<Phase> = Vec::new();
    for i in 0..tasks {
        if i % PHASE_TASKS == 0 {
            phases.push(Phase::new(format!(
                "Phase {}: milestone",
                i / PHASE_TASKS + 1
            )));
        }
        let mut task = Task::pending(task_name(i));
        if i < tasks * 2 / 5 {
            task.set_status(Status::Completed);
        } else if i % 50 == 7 {
            task.set_status(Status::Blocked);
            task.blocker = Some(format!("waiting for review of change {i}"));
        } else if i % 25 == 3 {
            task.set_status(Status::Abandoned);
            if i % 50 == 3 {
                task.dropped_by = Some(DroppedBy::User);
            }
        }
        phases.last_mut().expect("a phase").tasks.push(task);
    }
    let mut list = TodoList::new(phases);
    normalize(&mut list);
    assert_eq!(list.validate(), Ok(()), "the fixture is a valid list");
    list
}

/// The content of a pending task in the middle of a list of `tasks`.
pub fn middle_task(list: &TodoList) -> String {
    let tasks: Vec<&Task> = list.tasks().map(|(_, t)| t).collect();
    let middle = tasks.len() / 2;
    tasks[middle..]
        .iter()
        .chain(tasks[..middle].iter().rev())
        .find(|t| t.status == Status::Pending)
        .expect("a pending task")
        .content
        .clone()
}

/// How many cloned inputs criterion may hold at once: few for large lists
/// (a 10,000-task list is about 1.5 MB), so the clones fit in cache-sized
/// batches without exhausting memory.
pub fn batch_size(tasks: usize) -> BatchSize {
    match tasks {
        0..=100 => BatchSize::SmallInput,
        101..=1_000 => BatchSize::LargeInput,
        _ => BatchSize::PerIteration,
    }
}
