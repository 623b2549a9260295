//! The part of a long list that a bounded `<todo_context>` block shows
//! (`todo.context.max_tasks`): the counts of every phase, and the tasks it
//! lists (the `in_progress` task, then the earliest open ones). The store
//! reads just this from a long list (`store::shape`); [`ListPart::of`]
//! takes it from a whole list, and the block renders the same text from
//! either (`prompt::todo_context`).

use super::model::{Counts, Status, Task, TodoList};

/// What a bounded block shows of a list of more than `max_tasks` tasks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ListPart {
    /// The bound it was taken for (more than 0, less than the list's
    /// tasks).
    pub max_tasks: usize,
    /// Every phase, in order.
    pub phases: Vec<PartPhase>,
}

/// One phase of a [`ListPart`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PartPhase {
    /// Its name.
    pub name: String,
    /// The counts of all its tasks.
    pub counts: Counts,
    /// The tasks the block lists, in order, as it shows them: status and
    /// text, without a blocker note (`blocker` and `dropped_by` are
    /// `None`; a block lists no closed task).
    pub tasks: Vec<Task>,
}

impl ListPart {
    /// The part of `list` a block bounded to `max_tasks` shows; `None`
    /// when the block is not bounded (`max_tasks` is 0, or the list is no
    /// longer than that), so it lists every task.
    pub fn of(list: &TodoList, max_tasks: usize) -> Option<ListPart> {
        if !bounded(list.counts().total, max_tasks) {
            return None;
        }
        let shown = shown_tasks(list, max_tasks);
        Some(ListPart {
            max_tasks,
            phases: list
                .phases
                .iter()
                .enumerate()
                .map(|(p, phase)| PartPhase {
                    name: phase.name.clone(),
                    counts: Counts::of(&phase.tasks),
                    tasks: phase
                        .tasks
                        .iter()
                        .enumerate()
                        .filter(|(t, _)| shown.binary_search(&(p, *t)).is_ok())
                        .map(|(_, task)| Task {
                            status: task.status,
                            agent: task.agent.clone(),
                            ..Task::pending(task.content.clone())
                        })
                        .collect(),
                })
                .collect(),
        })
    }

    /// The counts of the whole list.
    pub fn counts(&self) -> Counts {
        let mut all = Counts::default();
        for phase in &self.phases {
            let c = phase.counts;
            all.total += c.total;
            all.closed += c.closed;
            all.open += c.open;
            all.completed += c.completed;
            all.blocked += c.blocked;
        }
        all
    }
}

/// True when a block bounded to `max_tasks` leaves tasks of a list of
/// `total` out.
pub(crate) fn bounded(total: usize, max_tasks: usize) -> bool {
    max_tasks > 0 && total > max_tasks
}

/// The positions of the tasks a bounded block lists: the `in_progress`
/// task always, then the earliest open tasks until `max` are chosen. Closed
/// tasks are only counted.
pub(crate) fn shown_tasks(list: &TodoList, max: usize) -> Vec<(usize, usize)> {
    let mut shown = Vec::with_capacity(max);
    let positions = || {
        list.phases.iter().enumerate().flat_map(|(p, phase)| {
            phase
                .tasks
                .iter()
                .enumerate()
                .map(move |(t, task)| (p, t, task))
        })
    };
    if let Some((p, t, _)) = positions().find(|(_, _, task)| task.status == Status::InProgress) {
        shown.push((p, t));
    }
    for (p, t, task) in positions() {
        if shown.len() >= max {
            break;
        }
        if task.status.is_open() && task.status != Status::InProgress {
            shown.push((p, t));
        }
    }
    shown.sort_unstable();
    shown
}

/// A list as a message is rendered from: whole, or the part of it a
/// bounded block shows.
#[derive(Clone, Copy, Debug)]
pub enum Listing<'a> {
    /// The whole list.
    Whole(&'a TodoList),
    /// Only what a bounded block shows.
    Part(&'a ListPart),
}

impl Listing<'_> {
    /// The counts of the whole list.
    pub fn counts(&self) -> Counts {
        match self {
            Listing::Whole(list) => list.counts(),
            Listing::Part(part) => part.counts(),
        }
    }
}

impl<'a> From<&'a TodoList> for Listing<'a> {
    fn from(list: &'a TodoList) -> Listing<'a> {
        Listing::Whole(list)
    }
}

impl<'a> From<&'a ListPart> for Listing<'a> {
    fn from(part: &'a ListPart) -> Listing<'a> {
        Listing::Part(part)
    }
}

/// A list as the store read it for a block: whole, or only the part a
/// bounded block shows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Listed {
    /// The whole list.
    Whole(TodoList),
    /// Only what a bounded block shows.
    Part(ListPart),
}

impl<'a> From<&'a Listed> for Listing<'a> {
    fn from(listed: &'a Listed) -> Listing<'a> {
        match listed {
            Listed::Whole(list) => Listing::Whole(list),
            Listed::Part(part) => Listing::Part(part),
        }
    }
}
