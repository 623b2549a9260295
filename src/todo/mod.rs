//! The phased todo list: data model, the `todo` tool's operations, the
//! summary text and the markdown round-trip. Everything here is pure.

mod apply;
mod call;
mod markdown;
mod model;
mod summary;
pub(crate) mod text;

pub use crate::actor::Actor;
pub use apply::{CompletedTask, apply, normalize};
pub use call::{CALL_FIELDS, CallError, Op, OpKind, PhaseItems, Target, parse_call, parse_value};
pub use markdown::{MarkdownError, from_markdown, to_markdown};
pub use model::{Counts, DroppedBy, Phase, Status, Task, TodoList};
pub use summary::{SummaryKind, summary};
pub use text::{MAX_BLOCKER_CHARS, MAX_CALL_BYTES, MAX_PHASE_CHARS, MAX_TASK_CHARS, MAX_TASKS};

use serde::Serialize;
use serde_json::Value;

use crate::tool_result::ToolResult;

/// The name agents call the todo tool by.
pub const TOOL_NAME: &str = "todo";

/// One `todo` call as it arrives: raw JSON text (from a CLI argument or
/// stdin), an already-decoded JSON value (from MCP), or a typed op (from the
/// user subcommands and the library).
#[derive(Clone, Copy, Debug)]
pub enum Call<'a> {
    /// JSON text, at most [`MAX_CALL_BYTES`].
    Json(&'a str),
    /// A decoded JSON value.
    Value(&'a Value),
    /// A typed op.
    Op(&'a Op),
}

impl Call<'_> {
    /// The call as it arrived, as text: what the event log records when
    /// the call is rejected.
    pub fn raw_payload(&self) -> String {
        match self {
            Call::Json(text) => (*text).to_owned(),
            Call::Value(value) => value.to_string(),
            Call::Op(op) => op.to_json().to_string(),
        }
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
    /// Every problem; empty on success.
    pub errors: Vec<String>,
}

impl Outcome {
    /// True when the call changed state: it succeeded and was not `view`.
    pub fn is_mutation(&self) -> bool {
        self.errors.is_empty() && self.op.as_ref().is_some_and(Op::mutates)
    }

    /// The tool result for this outcome at the given stored version.
    pub fn to_result(&self, version: i64) -> TodoResult {
        let kind = if self.is_mutation() {
            SummaryKind::Mutation
        } else {
            SummaryKind::View
        };
        ToolResult::new(
            summary(&self.list, &self.errors, kind),
            TodoDetails {
                op: self.kind.map(|k| k.as_str().to_owned()),
                phases: self.list.clone(),
                completed_tasks: self.completed.clone(),
                version,
            },
            !self.errors.is_empty(),
        )
    }
}

/// Parses and applies one call. Pure: the caller stores the result. On any
/// error the returned list is `list` unchanged.
pub fn run(mut list: TodoList, call: Call<'_>, actor: Actor) -> Outcome {
    let parsed = match call {
        Call::Json(text) => parse_call(text, &list),
        Call::Value(value) => parse_value(value, &list),
        Call::Op(op) => Ok(op.clone()),
    };
    let op = match parsed {
        Ok(op) => op,
        Err(e) => {
            return Outcome {
                op: None,
                kind: e.op,
                list,
                completed: Vec::new(),
                errors: e.errors,
            };
        }
    };
    let kind = Some(op.kind());
    match apply(&mut list, &op, actor) {
        Ok(completed) => Outcome {
            op: Some(op),
            kind,
            list,
            completed,
            errors: Vec::new(),
        },
        Err(errors) => Outcome {
            op: Some(op),
            kind,
            list,
            completed: Vec::new(),
            errors,
        },
    }
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
