//! The `<todo_context>` block (DESIGN.md §3.3): its gates, its counts, and the
//! two variants beyond the source — read-only when the `todo` tool is not
//! active, and bounded for very long lists.

use std::fmt;

use serde::Serialize;

use super::templates::Templates;
use crate::error::Result;
use crate::sanitize::{sanitize, sanitize_into};
use crate::todo::{self, ListPart, Listing, Status, TodoList};

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
    /// True when the block goes under an active goal (the source's wording,
    /// which speaks of the goal); false for the bare block (`todo context`,
    /// a session start without a goal), whose instruction lines do not.
    pub goal: bool,
}

impl Default for ContextOptions {
    fn default() -> ContextOptions {
        ContextOptions {
            enabled: true,
            tool_active: true,
            read_only_when_inactive: false,
            max_tasks: 0,
            goal: true,
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
    /// Every open task is blocked, and the agent was already asked for what
    /// they need in this same state: it may stop until something changes.
    AllBlocked,
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
            Gate::AllBlocked => {
                "every open task is blocked and the agent was already asked for what they need; nothing is sent until the list or the goal changes"
            }
        })
    }
}

#[derive(Serialize)]
struct PromptTask {
    /// The status, and the holder of a task in progress when the list
    /// names holders (`in_progress: w1`, DESIGN.md §2.5).
    status: String,
    content: String,
}

#[derive(Serialize)]
struct PromptPhase {
    name: String,
    tasks: Vec<PromptTask>,
    hidden: String,
}

#[derive(Clone, Copy, Serialize)]
struct Data<'a> {
    closed: &'a str,
    total: &'a str,
    open: &'a str,
    phases: &'a [PromptPhase],
    read_only: bool,
    bounded: bool,
    shown: &'a str,
    max_tasks: &'a str,
    goal: bool,
}

/// Renders the block for `list` (whole, or the part of it a bounded block
/// shows, read with `options.max_tasks`), or says which gate is closed.
pub fn todo_context<'a>(
    templates: &Templates,
    list: impl Into<Listing<'a>>,
    options: &ContextOptions,
) -> Result<std::result::Result<String, Gate>> {
    if !options.enabled {
        return Ok(Err(Gate::TodoDisabled));
    }
    if !options.tool_active && !options.read_only_when_inactive {
        return Ok(Err(Gate::TodoToolInactive));
    }
    let list = list.into();
    let counts = list.counts();
    if counts.total == 0 {
        return Ok(Err(Gate::NoTasks));
    }
    let bounded = todo::bounded(counts.total, options.max_tasks);
    let phases = match list {
        Listing::Whole(list) => whole_phases(list, bounded, options.max_tasks),
        Listing::Part(part) => {
            debug_assert!(bounded && part.max_tasks == options.max_tasks);
            part_phases(part)
        }
    };
    let shown_count: usize = phases.iter().map(|p| p.tasks.len()).sum();
    let (closed, total, open) = (
        counts.closed.to_string(),
        counts.total.to_string(),
        counts.open.to_string(),
    );
    let (shown_count, max_tasks) = (shown_count.to_string(), options.max_tasks.to_string());
    let data = Data {
        closed: &closed,
        total: &total,
        open: &open,
        phases: &[],
        read_only: !options.tool_active,
        bounded,
        shown: &shown_count,
        max_tasks: &max_tasks,
        goal: options.goal,
    };
    // The exact source template whenever neither extension is in play and
    // a goal is active; the bare block has its own instruction lines.
    let name = match (options.tool_active && !bounded, options.goal) {
        (true, true) => SOURCE,
        (true, false) => "todo-context",
        (false, _) => "goal-todo-context-extended",
    };
    if templates.is_builtin(name) {
        let block = direct_block(templates, name, &data, &phases)?;
        return Ok(Ok(name_the_tool(templates, name, block)));
    }
    let prompt_phases: Vec<PromptPhase> = phases.iter().map(BlockPhase::to_prompt).collect();
    Ok(Ok(templates.render(
        name,
        &Data {
            phases: &prompt_phases,
            ..data
        },
    )?))
}

/// One phase with tasks as the block shows it, its text not yet
/// sanitized: its name, the tasks it lists (status and text), and how
/// many of its other tasks are closed and open (counted, not listed).
struct BlockPhase<'l> {
    name: &'l str,
    tasks: Vec<(Status, Option<&'l str>, &'l str)>,
    hidden: (usize, usize),
}

impl BlockPhase<'_> {
    /// The phase as a template sees it, sanitized.
    fn to_prompt(&self) -> PromptPhase {
        PromptPhase {
            name: sanitize(self.name),
            tasks: self
                .tasks
                .iter()
                .map(|&(status, holder, content)| PromptTask {
                    status: match holder {
                        Some(holder) => format!("{status}: {}", sanitize(holder)),
                        None => status.as_str().to_owned(),
                    },
                    content: sanitize(content),
                })
                .collect(),
            hidden: hidden_line(self.hidden),
        }
    }
}

/// The phases with tasks of a whole list, each with the tasks the block
/// lists (all of them unless `bounded`) and the count of the others.
fn whole_phases(list: &TodoList, bounded: bool, max_tasks: usize) -> Vec<BlockPhase<'_>> {
    let shown = if bounded {
        todo::shown_tasks(list, max_tasks)
    } else {
        Vec::new()
    };
    list.phases
        .iter()
        .enumerate()
        .filter(|(_, p)| !p.tasks.is_empty())
        .map(|(p, phase)| {
            let mut tasks = Vec::new();
            let (mut closed_hidden, mut open_hidden) = (0, 0);
            for (t, task) in phase.tasks.iter().enumerate() {
                if !bounded || shown.binary_search(&(p, t)).is_ok() {
                    tasks.push((task.status, todo::holder_label(task), task.content.as_str()));
                } else if task.status.is_closed() {
                    closed_hidden += 1;
                } else {
                    open_hidden += 1;
                }
            }
            BlockPhase {
                name: &phase.name,
                tasks,
                hidden: (closed_hidden, open_hidden),
            }
        })
        .collect()
}

/// [`whole_phases`] of a bounded block from the part of the list it shows.
fn part_phases(part: &ListPart) -> Vec<BlockPhase<'_>> {
    part.phases
        .iter()
        .filter(|p| p.counts.total > 0)
        .map(|phase| {
            let closed_shown = phase.tasks.iter().filter(|t| t.status.is_closed()).count();
            BlockPhase {
                name: &phase.name,
                tasks: phase
                    .tasks
                    .iter()
                    .map(|t| (t.status, todo::holder_label(t), t.content.as_str()))
                    .collect(),
                hidden: (
                    phase.counts.closed - closed_shown,
                    phase.counts.open - (phase.tasks.len() - closed_shown),
                ),
            }
        })
        .collect()
}

/// The closing tag, on the last line of the block.
const CLOSING: &str = "</todo_context>";

/// The template adopted from the source document, word for word.
const SOURCE: &str = "goal-todo-context";

/// The source template names the tool `todo` in its text, not through a
/// variable: when the host shows the model another name, its one mention
/// is replaced, so the block names the tool the model can call. With the
/// default name the block stays the source's, byte for byte.
fn name_the_tool(templates: &Templates, name: &str, block: String) -> String {
    const MENTION: &str = "call `todo` first";
    let tool = &templates.tool_names().todo;
    if name != SOURCE || tool == crate::todo::TOOL_NAME {
        return block;
    }
    block.replacen(MENTION, &format!("call `{tool}` first"), 1)
}

/// A built-in block template rendered with its list written directly: the
/// same text, byte for byte (the tests below compare the two over fixtures
/// and random lists), for a fraction of the cost: Handlebars builds JSON
/// maps and looks paths up for every task line, which made the block of a
/// long list cost far more than writing its lines does.
///
/// `Templates::render` still renders the template, without phases (`frame`
/// has none): the tag, the instructions, the counts, every line but the
/// list. In both built-in templates the list is the last thing before the
/// closing tag, so the phase and task lines (and a bounded block's
/// per-phase "not shown" line) are written there in one pass, each
/// sanitized into the block as it is written and trimmed as
/// `Templates::render` trims every line. An override of a template goes
/// through Handlebars whole.
fn direct_block(
    templates: &Templates,
    name: &str,
    frame: &Data<'_>,
    phases: &[BlockPhase<'_>],
) -> Result<String> {
    let text = templates.render(name, frame)?;
    let head = match text.strip_suffix(CLOSING) {
        Some(head) if head.ends_with('\n') => head,
        // Not the shape written here: let Handlebars render it all.
        _ => {
            let prompt_phases: Vec<PromptPhase> =
                phases.iter().map(BlockPhase::to_prompt).collect();
            return templates.render(
                name,
                &Data {
                    phases: &prompt_phases,
                    ..*frame
                },
            );
        }
    };
    let size = phases
        .iter()
        .map(|p| p.name.len() + 3 + p.tasks.iter().map(|t| t.2.len() + 20).sum::<usize>() + 50)
        .sum::<usize>();
    let mut out = String::with_capacity(text.len() + size);
    out.push_str(head);
    for phase in phases {
        let start = out.len();
        out.push_str("- ");
        sanitize_into(&mut out, phase.name);
        end_line(&mut out, start);
        for &(status, holder, content) in &phase.tasks {
            let start = out.len();
            out.push_str("  - [");
            out.push_str(status.as_str());
            if let Some(holder) = holder {
                out.push_str(": ");
                sanitize_into(&mut out, holder);
            }
            out.push_str("] ");
            sanitize_into(&mut out, content);
            end_line(&mut out, start);
        }
        if phase.hidden != (0, 0) {
            let start = out.len();
            out.push_str("  - (");
            push_hidden(&mut out, phase.hidden);
            out.push(')');
            end_line(&mut out, start);
        }
    }
    out.push_str(CLOSING);
    Ok(out)
}

/// Ends the line that starts at `start`: its trailing whitespace goes,
/// then a newline.
fn end_line(out: &mut String, start: usize) {
    let end = start + out[start..].trim_end().len();
    out.truncate(end);
    out.push('\n');
}

/// The line that counts a phase's `(closed, open)` tasks the block does
/// not list; empty when it lists them all.
fn hidden_line(hidden: (usize, usize)) -> String {
    let mut line = String::new();
    push_hidden(&mut line, hidden);
    line
}

fn push_hidden(out: &mut String, (closed, open): (usize, usize)) {
    use std::fmt::Write as _;
    let tasks = |n: usize| if n == 1 { "task" } else { "tasks" };
    // Writing to a String does not fail.
    let _ = match (closed, open) {
        (0, 0) => Ok(()),
        (c, 0) => write!(out, "{c} closed {} not shown", tasks(c)),
        (0, o) => write!(out, "{o} more open {} not shown", tasks(o)),
        (c, o) => write!(out, "{c} closed and {o} more open tasks not shown"),
    };
}

#[cfg(test)]
mod tests {
    use std::sync::OnceLock;

    use proptest::prelude::*;

    use super::*;
    use crate::todo::{Phase, Task};

    /// The built-in templates, and the same texts loaded as overrides so
    /// that every one of them goes through Handlebars.
    fn both() -> &'static (Templates, Templates) {
        static BOTH: OnceLock<(Templates, Templates)> = OnceLock::new();
        BOTH.get_or_init(|| {
            let dir = tempfile::tempdir().unwrap();
            for (name, text) in crate::prompt::BUILTIN {
                let path = dir.path().join(format!("{name}.md"));
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                std::fs::write(path, text).unwrap();
            }
            let via_handlebars = Templates::load(Some(dir.path())).unwrap();
            assert!(!via_handlebars.is_builtin("goal-todo-context"));
            assert!(!via_handlebars.is_builtin("goal-todo-context-extended"));
            assert!(!via_handlebars.is_builtin("todo-context"));
            (Templates::builtin(), via_handlebars)
        })
    }

    fn list(phases: Vec<(String, Vec<(String, Status)>)>) -> TodoList {
        TodoList::new(
            phases
                .into_iter()
                .map(|(name, tasks)| Phase {
                    name,
                    tasks: tasks
                        .into_iter()
                        .map(|(content, status)| {
                            let mut task = Task::pending(content);
                            task.status = status;
                            task
                        })
                        .collect(),
                })
                .collect(),
        )
    }

    #[test]
    fn the_direct_rendering_matches_handlebars_on_fixtures() {
        let (direct, via_handlebars) = both();
        let hostile = [
            "Planning </todo_context> & prep",
            "one\r\ntwo\rthree\nfour\tfive",
            "trailing bell\u{7}",
            "trailing nbsp\u{a0}",
            "nel\u{85} and separators \u{2028}\u{2029}",
            "bom\u{feff} and bidi \u{202e}override\u{202c} \u{2067}isolate\u{2069}",
            "数据库迁移 🚀 done",
            "fish &amp; chips <system>",
        ];
        let fixture = list(vec![
            (
                hostile[0].into(),
                hostile
                    .iter()
                    .zip(Status::ALL.iter().cycle())
                    .map(|(t, s)| (format!("Task {t}"), *s))
                    .collect(),
            ),
            ("Empty".into(), vec![]),
            (
                "Last \u{7f}".into(),
                vec![("only \u{0}".into(), Status::Pending)],
            ),
        ]);
        for options in [
            ContextOptions::default(),
            ContextOptions {
                tool_active: false,
                read_only_when_inactive: true,
                ..ContextOptions::default()
            },
            ContextOptions {
                max_tasks: 3,
                ..ContextOptions::default()
            },
            ContextOptions {
                goal: false,
                ..ContextOptions::default()
            },
            ContextOptions {
                goal: false,
                tool_active: false,
                read_only_when_inactive: true,
                max_tasks: 3,
                ..ContextOptions::default()
            },
        ] {
            assert_eq!(
                todo_context(direct, &fixture, &options).unwrap(),
                todo_context(via_handlebars, &fixture, &options).unwrap(),
                "{options:?}"
            );
        }
        let empty = TodoList::default();
        assert_eq!(
            todo_context(direct, &empty, &ContextOptions::default()).unwrap(),
            Err(Gate::NoTasks)
        );
    }

    fn status() -> impl Strategy<Value = Status> {
        proptest::sample::select(Status::ALL.to_vec())
    }

    /// Text with what sanitizing and trimming must handle: markup, line
    /// breaks, C0/C1 controls, Unicode spaces and separators, wide chars.
    fn text() -> impl Strategy<Value = String> {
        "[ a-z&<>/\t\r\n\u{0}-\u{1f}\u{7f}-\u{a0}\u{2028}\u{2029}\u{3000}\u{feff}\u{202a}-\u{202e}\u{2066}-\u{2069}数🚀]{1,24}"
    }

    /// The options both proptests vary (the rest as by default).
    fn options(tool_active: bool, max_tasks: usize, goal: bool) -> ContextOptions {
        ContextOptions {
            tool_active,
            read_only_when_inactive: true,
            max_tasks,
            goal,
            ..ContextOptions::default()
        }
    }

    proptest! {
        #[test]
        fn the_direct_rendering_matches_handlebars(
            phases in proptest::collection::vec(
                (text(), proptest::collection::vec((text(), status()), 0..6)),
                1..5,
            ),
            tool_active in any::<bool>(),
            max_tasks in 0usize..5,
            goal in any::<bool>(),
        ) {
            let (direct, via_handlebars) = both();
            let list = list(phases);
            let options = options(tool_active, max_tasks, goal);
            prop_assert_eq!(
                todo_context(direct, &list, &options).unwrap(),
                todo_context(via_handlebars, &list, &options).unwrap()
            );
        }

        /// A bounded block rendered from the part of the list it shows
        /// (what the store reads of a long list) is the block of the whole
        /// list, byte for byte, with the built-in templates and through
        /// Handlebars.
        #[test]
        fn the_part_of_a_list_renders_as_the_whole_list(
            phases in proptest::collection::vec(
                (text(), proptest::collection::vec((text(), status()), 0..12)),
                1..6,
            ),
            tool_active in any::<bool>(),
            max_tasks in 1usize..8,
            goal in any::<bool>(),
        ) {
            let (direct, via_handlebars) = both();
            let list = list(phases);
            let options = options(tool_active, max_tasks, goal);
            match ListPart::of(&list, max_tasks) {
                Some(part) => {
                    for templates in [direct, via_handlebars] {
                        prop_assert_eq!(
                            todo_context(templates, &part, &options).unwrap(),
                            todo_context(templates, &list, &options).unwrap()
                        );
                    }
                }
                None => prop_assert!(list.counts().total <= max_tasks),
            }
        }
    }
}
