//! The phased todo list: data model, the `todo` tool's operations, the
//! summary text and the markdown round-trip. Everything here is pure.

mod apply;
mod call;
#[cfg(test)]
pub(crate) use call::CALL_FIELDS;
mod markdown;
mod model;
mod part;
mod summary;
mod team;
pub(crate) mod text;

pub use crate::actor::Actor;
pub use apply::{Applied, ChangedTask, CompletedTask, apply, apply_as, normalize};
pub(crate) use apply::{edit_task, normalize_import, start};
pub use call::{Note, Op, PhaseItems, Release, Target, ViewPage, parse_value};
pub(crate) use call::{OpKind, Parsed, parse_call, parse_call_on, parse_value_on};
pub use markdown::{MarkdownError, from_markdown, to_markdown};
pub(crate) use model::TaskState;
pub use model::{Counts, DroppedBy, Phase, Status, Task, TodoList};
pub use part::{ListPart, Listed, Listing, PartPhase};
pub(crate) use part::{bounded, shown_tasks};
pub(crate) use summary::page_count;
pub(crate) use summary::{
    BLOCKED_SHOWN, Bounded, NEXT_SHOWN, PageParts, PageTasks, Tally, page_starts, render_bounded,
    render_page, whole_floor,
};
pub use summary::{CHANGED_SHOWN, PAGE_BYTES, Report, SUMMARY_BYTES, SummaryKind, summary};
pub(crate) use team::settle;
pub use team::{Caller, MAIN, Team, holder_label};
pub use text::{MAX_BLOCKER_CHARS, MAX_CALL_BYTES, MAX_PHASE_CHARS, MAX_TASK_CHARS, MAX_TASKS};

use serde::Serialize;
use serde_json::Value;

use crate::tool_result::ToolResult;

/// The name agents call the todo tool by.
pub(crate) const TOOL_NAME: &str = "todo";

/// One `todo` call as it arrives (the shape both tools share, see
/// [`crate::call`]): JSON text of at most [`MAX_CALL_BYTES`], a decoded
/// JSON value, or a typed [`Op`].
pub type Call<'a> = crate::call::Call<'a, Op>;

impl crate::call::OpJson for Op {
    fn to_json(&self) -> Value {
        Op::to_json(self)
    }
}

/// What running one call against a list produced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// The op, when the call parsed.
    pub op: Option<Op>,
    /// The op's name, when it was readable even if the call did not parse.
    pub kind: Option<OpKind>,
    /// The list after the call, or as it was when the call was rejected.
    pub list: TodoList,
    /// Tasks that moved into `completed`.
    pub completed: Vec<CompletedTask>,
    /// Every task the call changed.
    pub changed: Vec<ChangedTask>,
    /// False when a successful mutation left the list exactly as it was
    /// (DESIGN.md §2.2); true for a changed list. Always false for `view` and
    /// rejected calls.
    pub list_changed: bool,
    /// What was repaired or ignored to read the call (DESIGN.md §2).
    pub repairs: Vec<String>,
    /// Every problem; empty on success.
    pub errors: Vec<String>,
}

impl Outcome {
    /// True when the call changed state: it succeeded, was not `view`, and
    /// left the list different. Only then is a new version stored, an
    /// event logged, and progress counted.
    pub fn is_mutation(&self) -> bool {
        self.errors.is_empty() && self.list_changed
    }

    /// True when a mutating op succeeded without changing anything.
    pub fn is_no_op(&self) -> bool {
        self.errors.is_empty() && !self.list_changed && self.op.as_ref().is_some_and(Op::mutates)
    }

    /// The tool result for this outcome at the given stored version, the
    /// outcome kept ([`Outcome::into_result`] moves the list instead of
    /// copying it: copying a 1,000-task list costs a good part of what
    /// reading it from the database does).
    pub fn to_result(&self, version: i64) -> TodoResult {
        self.clone().into_result(version)
    }

    /// The tool result for this outcome at the given stored version.
    pub fn into_result(self, version: i64) -> TodoResult {
        let text = self.summary_text(version);
        ToolResult::new(
            text,
            TodoDetails {
                op: self.kind.map(|k| k.as_str().to_owned()),
                phases: self.list,
                completed_tasks: self.completed,
                version,
            },
            !self.errors.is_empty(),
        )
    }

    /// The summary the result's text block holds.
    fn summary_text(&self, version: i64) -> String {
        let kind = if self.is_mutation() {
            SummaryKind::Mutation
        } else if self.is_no_op() {
            SummaryKind::Unchanged(version)
        } else {
            SummaryKind::View
        };
        let view = match &self.op {
            Some(Op::View(page)) => Some(page),
            _ => None,
        };
        Report {
            list: &self.list,
            errors: &self.errors,
            repairs: &self.repairs,
            changed: &self.changed,
            kind,
            view,
        }
        .render()
    }
}

/// Parses and applies one call. Pure: the caller stores the result. On any
/// error the returned list is `list` unchanged.
pub fn run(list: TodoList, call: Call<'_>, actor: Actor) -> Outcome {
    run_as(list, call, &Caller::solo(actor))
}

/// [`run`] for `caller`, one of possibly several agents (DESIGN.md §2.5).
pub fn run_as(mut list: TodoList, call: Call<'_>, caller: &Caller<'_>) -> Outcome {
    let parsed = match call {
        Call::Json(text) => parse_call(text, &list),
        Call::Value(value) => parse_value(value, &list),
        Call::Op(op) => Ok(Parsed {
            op: op.clone(),
            repairs: Vec::new(),
        }),
    };
    let rejected = |list, kind, op, repairs, errors| Outcome {
        op,
        kind,
        list,
        completed: Vec::new(),
        changed: Vec::new(),
        list_changed: false,
        repairs,
        errors,
    };
    let Parsed { op, repairs } = match parsed {
        Ok(parsed) => parsed,
        Err(e) => return rejected(list, e.op, None, e.repairs, e.errors),
    };
    let kind = Some(op.kind());
    if let Op::View(view) = &op
        && let Err(error) = check_view(&list, view)
    {
        return rejected(list, kind, Some(op), repairs, vec![error]);
    }
    match apply_as(&mut list, &op, caller) {
        Ok(applied) => Outcome {
            op: Some(op),
            kind,
            list,
            completed: applied.completed,
            changed: applied.changed,
            list_changed: applied.list_changed,
            repairs,
            errors: Vec::new(),
        },
        Err(errors) => rejected(list, kind, Some(op), repairs, errors),
    }
}

/// A `view` names a phase that exists and a page within it.
fn check_view(list: &TodoList, view: &ViewPage) -> Result<(), String> {
    let phase = match &view.phase {
        Some(name) => Some(
            list.find_phase(name)
                .ok_or_else(|| apply::phase_not_found(list, name))?,
        ),
        None => None,
    };
    let pages = page_count(list, phase);
    if view.page > pages {
        let pages_word = if pages == 1 { "page" } else { "pages" };
        return Err(format!(
            "page {} does not exist; {} has {pages} {pages_word}",
            view.page,
            if phase.is_some() {
                "the phase"
            } else {
                "the list"
            }
        ));
    }
    Ok(())
}

/// The structured part of a todo result.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TodoDetails {
    /// The op that ran or was attempted (`import` and `undo` for those
    /// commands); `null` when unreadable.
    pub op: Option<String>,
    /// The list after the call (before it, on error).
    pub phases: TodoList,
    /// Tasks that moved into `completed` during the call.
    pub completed_tasks: Vec<CompletedTask>,
    /// The list's version in the store.
    pub version: i64,
}

/// The result of one `todo` call.
pub type TodoResult = ToolResult<TodoDetails>;
