//! The `<todo_context>` block (SPEC §3.3): its gates, its counts, and the
//! two variants beyond the source — read-only when the `todo` tool is not
//! active, and bounded for very long lists.

use std::fmt;

use serde::Serialize;

use super::sanitize::sanitize;
use super::templates::Templates;
use crate::error::Result;
use crate::todo::{Status, TodoList};

/// The settings and caller state the block depends on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContextOptions {
    /// Setting `todo.enabled`.
    pub enabled: bool,
    /// Whether the caller's active tools include `todo`.
    pub tool_active: bool,
    /// Setting `todo.context.inactive_tool = "read-only"`: render a
    /// read-only block instead of nothing when the tool is not active.
    pub read_only_when_inactive: bool,
    /// Setting `todo.context.max_tasks` (0 = unlimited).
    pub max_tasks: usize,
}

impl Default for ContextOptions {
    fn default() -> ContextOptions {
        ContextOptions {
            enabled: true,
            tool_active: true,
            read_only_when_inactive: false,
            max_tasks: 0,
        }
    }
}

/// Why a block (or a whole message) was not rendered.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Gate {
    /// Setting `todo.enabled` is false.
    TodoDisabled,
    /// The `todo` tool is not among the caller's active tools.
    TodoToolInactive,
    /// No phase has a task.
    NoTasks,
    /// Setting `goal.enabled` is false.
    GoalDisabled,
    /// The session has no goal.
    NoGoal,
    /// The goal exists but is not active.
    GoalNotActive,
}

impl fmt::Display for Gate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Gate::TodoDisabled => "setting todo.enabled is false",
            Gate::TodoToolInactive => {
                "the todo tool is not among the active tools (see --active-tools; setting todo.context.inactive_tool = \"read-only\" shows a read-only block instead)"
            }
            Gate::NoTasks => "the todo list has no tasks",
            Gate::GoalDisabled => "setting goal.enabled is false",
            Gate::NoGoal => "the session has no goal (goal set OBJECTIVE starts one)",
            Gate::GoalNotActive => "the goal is not active",
        })
    }
}

#[derive(Serialize)]
struct PromptTask {
    status: Status,
    content: String,
}

#[derive(Serialize)]
struct PromptPhase {
    name: String,
    tasks: Vec<PromptTask>,
    hidden: String,
}

#[derive(Serialize)]
struct Data {
    closed: String,
    total: String,
    open: String,
    phases: Vec<PromptPhase>,
    read_only: bool,
    bounded: bool,
    shown: String,
    max_tasks: String,
}

/// Renders the block for `list`, or says which gate is closed.
pub fn todo_context(
    templates: &Templates,
    list: &TodoList,
    options: &ContextOptions,
) -> Result<std::result::Result<String, Gate>> {
    if !options.enabled {
        return Ok(Err(Gate::TodoDisabled));
    }
    if !options.tool_active && !options.read_only_when_inactive {
        return Ok(Err(Gate::TodoToolInactive));
    }
    let phases: Vec<_> = list.phases.iter().filter(|p| !p.tasks.is_empty()).collect();
    if phases.is_empty() {
        return Ok(Err(Gate::NoTasks));
    }
    let counts = list.counts();
    let bounded = options.max_tasks > 0 && counts.total > options.max_tasks;
    let shown = if bounded {
        shown_tasks(list, options.max_tasks)
    } else {
        Vec::new()
    };
    let mut shown_count = 0;
    let prompt_phases = list
        .phases
        .iter()
        .enumerate()
        .filter(|(_, p)| !p.tasks.is_empty())
        .map(|(p, phase)| {
            let mut tasks = Vec::new();
            let (mut closed_hidden, mut open_hidden) = (0, 0);
            for (t, task) in phase.tasks.iter().enumerate() {
                if !bounded || shown.binary_search(&(p, t)).is_ok() {
                    tasks.push(PromptTask {
                        status: task.status,
                        content: sanitize(&task.content),
                    });
                } else if task.status.is_closed() {
                    closed_hidden += 1;
                } else {
                    open_hidden += 1;
                }
            }
            shown_count += tasks.len();
            PromptPhase {
                name: sanitize(&phase.name),
                tasks,
                hidden: hidden_line(closed_hidden, open_hidden),
            }
        })
        .collect();
    let data = Data {
        closed: counts.closed.to_string(),
        total: counts.total.to_string(),
        open: counts.open.to_string(),
        phases: prompt_phases,
        read_only: !options.tool_active,
        bounded,
        shown: shown_count.to_string(),
        max_tasks: options.max_tasks.to_string(),
    };
    // The exact source template whenever neither extension is in play.
    let name = if options.tool_active && !bounded {
        "goal-todo-context"
    } else {
        "goal-todo-context-extended"
    };
    Ok(Ok(templates.render(name, &data)?))
}

/// The tasks a bounded block lists: the `in_progress` task always, then the
/// earliest open tasks until `max` are chosen. Closed tasks are only counted.
fn shown_tasks(list: &TodoList, max: usize) -> Vec<(usize, usize)> {
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

fn hidden_line(closed: usize, open: usize) -> String {
    let tasks = |n: usize| if n == 1 { "task" } else { "tasks" };
    match (closed, open) {
        (0, 0) => String::new(),
        (c, 0) => format!("{c} closed {} not shown", tasks(c)),
        (0, o) => format!("{o} more open {} not shown", tasks(o)),
        (c, o) => format!("{c} closed and {o} more open tasks not shown"),
    }
}
