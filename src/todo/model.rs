//! The todo data model: statuses, tasks, phases and the list.
//!
//! The types are plain data with public fields so hosts can build and read
//! them freely; the invariants (unique contents, one `in_progress`, limits)
//! are established by [`apply`](crate::todo::apply) and checked by
//! [`TodoList::validate`].

use std::fmt;

use serde::{Deserialize, Serialize};

use super::text::MAX_TASKS;

/// Where a task stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Not started yet.
    Pending,
    /// The one task being worked on.
    InProgress,
    /// Finished.
    Completed,
    /// Given up; kept so the decision stays visible.
    Abandoned,
    /// Waiting on something outside the agent's control; still open.
    Blocked,
}

impl Status {
    /// Every status, in declaration order.
    pub const ALL: [Status; 5] = [
        Status::Pending,
        Status::InProgress,
        Status::Completed,
        Status::Abandoned,
        Status::Blocked,
    ];

    /// `completed` and `abandoned` are closed; everything else is open.
    pub fn is_closed(self) -> bool {
        matches!(self, Status::Completed | Status::Abandoned)
    }

    /// The negation of [`Status::is_closed`]: `blocked` counts as open.
    pub fn is_open(self) -> bool {
        !self.is_closed()
    }

    /// The wire name (`in_progress`, ...), as used in JSON and prompts.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pending => "pending",
            Status::InProgress => "in_progress",
            Status::Completed => "completed",
            Status::Abandoned => "abandoned",
            Status::Blocked => "blocked",
        }
    }

    /// The character between the brackets of a markdown checkbox.
    pub fn marker(self) -> char {
        match self {
            Status::Pending => ' ',
            Status::InProgress => '/',
            Status::Completed => 'x',
            Status::Abandoned => '-',
            Status::Blocked => '!',
        }
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Who abandoned a task, when it was a person. Only the user is recorded:
/// an agent's drop leaves the field empty.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DroppedBy {
    /// A person dropped the task; an agent may not bring it back in bulk.
    User,
}

/// One task. Its `content` is its identity: unique in the list, matched exactly.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Task {
    /// The task text, trimmed, 1–1,000 characters.
    pub content: String,
    /// Where it stands.
    pub status: Status,
    /// What the task waits for; only kept while `blocked`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocker: Option<String>,
    /// Set when a person abandoned the task; only kept while `abandoned`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dropped_by: Option<DroppedBy>,
    /// The named agent that holds the task (while `in_progress`) or
    /// completed it (while `completed`); `None` is the session's own agent,
    /// or a person (DESIGN.md §2.5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// When the named agent holding the task claimed it, in milliseconds
    /// since the epoch; only kept while `in_progress` with an `agent`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since_ms: Option<i64>,
    /// The task this one waits for (`block` with `after`); only kept while
    /// `blocked`. Completing that task unblocks this one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<String>,
    /// The check a person set on the task (DESIGN.md §13): a shell command
    /// that must pass for an agent's `done` of it. It stays whatever the
    /// status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check: Option<String>,
}

impl Task {
    /// A new `pending` task with no notes.
    pub fn pending(content: impl Into<String>) -> Task {
        Task {
            content: content.into(),
            status: Status::Pending,
            blocker: None,
            dropped_by: None,
            agent: None,
            since_ms: None,
            after: None,
            check: None,
        }
    }

    /// Moves the task to `status`, dropping the notes that only belong to
    /// another status (a blocker or an `after` outside `blocked`,
    /// `dropped_by` outside `abandoned`) and whoever held or completed it:
    /// the caller names the new holder ([`Task::claim`]).
    pub fn set_status(&mut self, status: Status) {
        self.status = status;
        if status != Status::Blocked {
            self.blocker = None;
            self.after = None;
        }
        if status != Status::Abandoned {
            self.dropped_by = None;
        }
        self.agent = None;
        self.since_ms = None;
    }

    /// Records `agent` as the one holding (in progress) or having
    /// completed the task, claimed at `now_ms`. The session's own agent
    /// and a person are `None`, and keep no claim time.
    pub(crate) fn claim(&mut self, agent: Option<&str>, now_ms: i64) {
        self.agent = agent.map(str::to_owned);
        self.since_ms = (agent.is_some() && self.status == Status::InProgress).then_some(now_ms);
    }

    /// True for an abandoned task that no person dropped: an agent gave it up.
    pub fn is_agent_abandoned(&self) -> bool {
        self.status == Status::Abandoned && self.dropped_by.is_none()
    }
}

/// Everything of a task but its text: what a change in place rewrites,
/// and what tells whether a call changed a task.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct TaskState {
    pub status: Status,
    pub blocker: Option<String>,
    pub dropped_by: Option<DroppedBy>,
    pub agent: Option<String>,
    pub since_ms: Option<i64>,
    pub after: Option<String>,
    pub check: Option<String>,
}

impl TaskState {
    /// The task with `content` and this state.
    pub(crate) fn task(self, content: String) -> Task {
        Task {
            content,
            status: self.status,
            blocker: self.blocker,
            dropped_by: self.dropped_by,
            agent: self.agent,
            since_ms: self.since_ms,
            after: self.after,
            check: self.check,
        }
    }

    /// Writes this state over `task`'s.
    pub(crate) fn put_on(&self, task: &mut Task) {
        task.status = self.status;
        task.blocker.clone_from(&self.blocker);
        task.dropped_by = self.dropped_by;
        task.agent.clone_from(&self.agent);
        task.since_ms = self.since_ms;
        task.after.clone_from(&self.after);
        task.check.clone_from(&self.check);
    }
}

impl Task {
    /// The task's state, without its text.
    pub(crate) fn state(&self) -> TaskState {
        TaskState {
            status: self.status,
            blocker: self.blocker.clone(),
            dropped_by: self.dropped_by,
            agent: self.agent.clone(),
            since_ms: self.since_ms,
            after: self.after.clone(),
            check: self.check.clone(),
        }
    }
}

/// A named, ordered group of tasks.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Phase {
    /// The phase name, trimmed, 1–200 characters, unique in the list.
    pub name: String,
    /// Its tasks, in order.
    #[serde(default)]
    pub tasks: Vec<Task>,
}

impl Phase {
    /// A phase with no tasks yet.
    pub fn new(name: impl Into<String>) -> Phase {
        Phase {
            name: name.into(),
            tasks: Vec::new(),
        }
    }
}

/// Counts over a list or a phase.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    /// Every task.
    pub total: usize,
    /// `completed` + `abandoned`.
    pub closed: usize,
    /// `total - closed`; includes `blocked`.
    pub open: usize,
    /// Just `completed`.
    pub completed: usize,
    /// Just `blocked`.
    pub blocked: usize,
}

impl Counts {
    /// Counts the given tasks.
    pub fn of<'a>(tasks: impl IntoIterator<Item = &'a Task>) -> Counts {
        let mut counts = Counts::default();
        for task in tasks {
            counts.total += 1;
            match task.status {
                Status::Completed => {
                    counts.closed += 1;
                    counts.completed += 1;
                }
                Status::Abandoned => counts.closed += 1,
                Status::Blocked => counts.blocked += 1,
                Status::Pending | Status::InProgress => {}
            }
        }
        counts.open = counts.total - counts.closed;
        counts
    }
}

/// The phased todo list of one session. Order is meaningful: "earliest"
/// means phase order, then task order.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct TodoList {
    /// The phases, in order.
    pub phases: Vec<Phase>,
}

impl TodoList {
    /// A list from phases, taken as they are (no validation).
    pub fn new(phases: Vec<Phase>) -> TodoList {
        TodoList { phases }
    }

    /// Every task with the index of its phase, earliest first.
    pub fn tasks(&self) -> impl Iterator<Item = (usize, &Task)> {
        self.phases
            .iter()
            .enumerate()
            .flat_map(|(p, phase)| phase.tasks.iter().map(move |t| (p, t)))
    }

    /// The number of tasks across all phases.
    pub fn task_count(&self) -> usize {
        self.phases.iter().map(|p| p.tasks.len()).sum()
    }

    /// True when no phase holds a task (empty phases may remain).
    pub fn is_empty(&self) -> bool {
        self.phases.iter().all(|p| p.tasks.is_empty())
    }

    /// Counts over the whole list.
    pub fn counts(&self) -> Counts {
        Counts::of(self.tasks().map(|(_, t)| t))
    }

    /// The position `(phase, task)` of the task with exactly this content.
    pub fn find_task(&self, content: &str) -> Option<(usize, usize)> {
        self.phases.iter().enumerate().find_map(|(p, phase)| {
            phase
                .tasks
                .iter()
                .position(|t| t.content == content)
                .map(|t| (p, t))
        })
    }

    /// The index of the phase with exactly this name.
    pub(crate) fn find_phase(&self, name: &str) -> Option<usize> {
        self.phases.iter().position(|p| p.name == name)
    }

    /// The task being worked on, if any.
    pub fn in_progress(&self) -> Option<(usize, &Task)> {
        self.tasks().find(|(_, t)| t.status == Status::InProgress)
    }

    /// True when the list has open tasks and every one of them is blocked:
    /// nothing can move until someone else acts.
    pub(crate) fn every_open_task_blocked(&self) -> bool {
        let counts = self.counts();
        counts.open > 0 && counts.open == counts.blocked
    }

    /// Checks the structural invariants a stored or imported list must hold:
    /// unique phase names and task contents, trimmed non-empty text within
    /// the limits, notes only on the status they belong to, the task limit.
    /// Returns every violation found.
    pub fn validate(&self) -> Result<(), Vec<String>> {
        let mut problems = Vec::new();
        let mut phases = std::collections::HashSet::new();
        let mut contents = std::collections::HashSet::new();
        for phase in &self.phases {
            if let Err(e) = crate::todo::text::check_phase_name(&phase.name) {
                problems.push(e);
            }
            if !phases.insert(phase.name.as_str()) {
                problems.push(format!("phase \"{}\" appears twice", phase.name));
            }
            for task in &phase.tasks {
                if let Err(e) = crate::todo::text::check_task_content(&task.content) {
                    problems.push(e);
                }
                if !contents.insert(task.content.as_str()) {
                    problems.push(format!("task \"{}\" appears twice", task.content));
                }
                if task.blocker.is_some() && task.status != Status::Blocked {
                    problems.push(format!(
                        "task \"{}\" has a blocker note but is {}",
                        task.content, task.status
                    ));
                }
                if let Some(note) = &task.blocker
                    && let Err(e) = crate::todo::text::check_blocker(note)
                {
                    problems.push(e);
                }
                if task.after.is_some() && task.status != Status::Blocked {
                    problems.push(format!(
                        "task \"{}\" waits for another task but is {}",
                        task.content, task.status
                    ));
                }

                if task.agent.is_some()
                    && !matches!(task.status, Status::InProgress | Status::Completed)
                {
                    problems.push(format!(
                        "task \"{}\" names an agent but is {}",
                        task.content, task.status
                    ));
                }
                if task.dropped_by.is_some() && task.status != Status::Abandoned {
                    problems.push(format!(
                        "task \"{}\" is marked dropped by the user but is {}",
                        task.content, task.status
                    ));
                }
            }
        }
        // Once every text is known: an `after` names another task.
        for task in self.phases.iter().flat_map(|p| &p.tasks) {
            if let Some(after) = &task.after
                && (after == &task.content || !contents.contains(after.as_str()))
            {
                problems.push(format!(
                    "task \"{}\" waits for \"{after}\", which is no other task of the list",
                    task.content
                ));
            }
        }
        if contents.len() > MAX_TASKS {
            problems.push(format!(
                "the list holds {} tasks; the limit is {MAX_TASKS}",
                contents.len()
            ));
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closed_means_completed_or_abandoned() {
        let closed: Vec<_> = Status::ALL.into_iter().filter(|s| s.is_closed()).collect();
        assert_eq!(closed, [Status::Completed, Status::Abandoned]);
        assert!(Status::Blocked.is_open());
    }

    #[test]
    fn counts_treat_blocked_as_open() {
        let mut blocked = Task::pending("b");
        blocked.set_status(Status::Blocked);
        let mut done = Task::pending("c");
        done.set_status(Status::Completed);
        let mut gone = Task::pending("d");
        gone.set_status(Status::Abandoned);
        let counts = Counts::of([&Task::pending("a"), &blocked, &done, &gone]);
        assert_eq!(
            counts,
            Counts {
                total: 4,
                closed: 2,
                open: 2,
                completed: 1,
                blocked: 1
            }
        );
    }

    #[test]
    fn set_status_clears_notes_that_no_longer_apply() {
        let mut task = Task::pending("a");
        task.status = Status::Blocked;
        task.blocker = Some("waiting".into());
        task.set_status(Status::Pending);
        assert_eq!(task.blocker, None);
        task.status = Status::Abandoned;
        task.dropped_by = Some(DroppedBy::User);
        task.set_status(Status::Completed);
        assert_eq!(task.dropped_by, None);
    }

    #[test]
    fn json_shape_omits_empty_notes() {
        let list = TodoList::new(vec![Phase {
            name: "P".into(),
            tasks: vec![Task::pending("a")],
        }]);
        let json = serde_json::to_string(&list).unwrap();
        assert_eq!(
            json,
            r#"[{"name":"P","tasks":[{"content":"a","status":"pending"}]}]"#
        );
    }

    #[test]
    fn validate_reports_every_problem() {
        let mut stale = Task::pending("x");
        stale.blocker = Some("note".into());
        let list = TodoList::new(vec![
            Phase {
                name: "P".into(),
                tasks: vec![stale, Task::pending("x")],
            },
            Phase::new("P"),
        ]);
        let problems = list.validate().unwrap_err();
        assert_eq!(
            problems,
            [
                "task \"x\" has a blocker note but is pending",
                "task \"x\" appears twice",
                "phase \"P\" appears twice",
            ]
        );
    }
}
