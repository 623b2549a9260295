//! Tasks counted by status, phase by phase: what a summary's counts and
//! active-phase line are computed from, and what the store keeps per
//! phase so it can print them without reading every task.

use crate::todo::model::{Counts, Status, Task, TodoList};

/// How many tasks of one phase stand at each status, in [`Status::ALL`]
/// order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(transparent)]
pub(crate) struct Tally(pub [usize; 5]);

impl Tally {
    /// The tally of `tasks`.
    pub fn of<'a>(tasks: impl IntoIterator<Item = &'a Task>) -> Tally {
        let mut tally = Tally::default();
        for task in tasks {
            tally.0[status_index(task.status)] += 1;
        }
        tally
    }

    /// The tasks at `status`.
    pub fn get(&self, status: Status) -> usize {
        self.0[status_index(status)]
    }

    /// Counts one task as moved from `from` to `to` (a tally that had
    /// none at `from` stays at zero there rather than wrapping).
    pub(crate) fn moved(&mut self, from: Status, to: Status) {
        let was = &mut self.0[status_index(from)];
        *was = was.saturating_sub(1);
        self.0[status_index(to)] += 1;
    }

    /// The tally of all of `tallies`.
    pub fn sum(tallies: &[Tally]) -> Tally {
        let mut all = Tally::default();
        for tally in tallies {
            for (a, n) in all.0.iter_mut().zip(tally.0) {
                *a += n;
            }
        }
        all
    }

    /// The counts of these tasks.
    pub fn counts(&self) -> Counts {
        let total: usize = self.0.iter().sum();
        let completed = self.get(Status::Completed);
        let closed = completed + self.get(Status::Abandoned);
        Counts {
            total,
            closed,
            open: total - closed,
            completed,
            blocked: self.get(Status::Blocked),
        }
    }
}

fn status_index(status: Status) -> usize {
    match status {
        Status::Pending => 0,
        Status::InProgress => 1,
        Status::Completed => 2,
        Status::Abandoned => 3,
        Status::Blocked => 4,
    }
}

/// Every phase's tally, in order.
pub(super) fn tallies(list: &TodoList) -> Vec<Tally> {
    list.phases.iter().map(|p| Tally::of(&p.tasks)).collect()
}
