//! The ops a `todo` call can ask for, once read: [`Op`] and its parts,
//! and the canonical JSON each is logged as.

use std::fmt;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::actor::Actor;

/// The operation names of the `todo` tool.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OpKind {
    /// Replace the whole list.
    Init,
    /// Make one task the active one.
    Start,
    /// Complete tasks.
    Done,
    /// Abandon tasks.
    Drop,
    /// Remove tasks (an agent's `rm` abandons instead).
    Rm,
    /// Mark tasks blocked with a note.
    Block,
    /// Clear a block.
    Unblock,
    /// Add tasks to a phase.
    Append,
    /// Read the list.
    View,
    /// Free claimed tasks: a person's command, not the tool's.
    Release,
    /// Set or clear a task's check: a person's command, not the tool's.
    Check,
}

impl OpKind {
    /// Every op, in the order the tool documents them.
    pub const ALL: [OpKind; 9] = [
        OpKind::Init,
        OpKind::Start,
        OpKind::Done,
        OpKind::Drop,
        OpKind::Rm,
        OpKind::Block,
        OpKind::Unblock,
        OpKind::Append,
        OpKind::View,
    ];

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            OpKind::Init => "init",
            OpKind::Start => "start",
            OpKind::Done => "done",
            OpKind::Drop => "drop",
            OpKind::Rm => "rm",
            OpKind::Block => "block",
            OpKind::Unblock => "unblock",
            OpKind::Append => "append",
            OpKind::View => "view",
            OpKind::Release => "release",
            OpKind::Check => "check",
        }
    }

    /// True when this op, made by `actor`, can change which tasks the
    /// list has or what one says (an `init`, a person's `rm`): its result
    /// is found by comparing the lists by content. Every other op changes
    /// tasks in place or appends at the end of a phase, and a snapshot of
    /// the tasks' states tells what it changed. A new op must say which it
    /// is here: one that rewrote a task's text but answered `false` would
    /// report "No change" and be dropped.
    pub(crate) fn reshapes(self, actor: Actor) -> bool {
        match self {
            OpKind::Init => true,
            OpKind::Rm => actor == Actor::User,
            OpKind::Start
            | OpKind::Done
            | OpKind::Drop
            | OpKind::Block
            | OpKind::Unblock
            | OpKind::Append
            | OpKind::View
            | OpKind::Release
            | OpKind::Check => false,
        }
    }

    pub(super) fn parse(name: &str) -> Option<OpKind> {
        OpKind::ALL.into_iter().find(|k| k.as_str() == name)
    }

    /// The fields this op accepts besides `op`, as written in errors.
    pub(super) fn fields(self) -> &'static str {
        match self {
            OpKind::Init => "list, or items with an optional phase",
            OpKind::Start => "task",
            OpKind::Done | OpKind::Drop | OpKind::Rm => "task or phase, or neither for every task",
            OpKind::Block => "task or phase, and an optional reason or after",
            OpKind::Unblock => "task or phase",
            OpKind::Append => "phase and items",
            OpKind::View => "an optional phase and page",
            OpKind::Release => "task or agent",
            OpKind::Check => "task, and a command or none",
        }
    }
}

impl fmt::Display for OpKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a `done`, `drop`, `rm`, `block` or `unblock` acts on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// Every task in the list.
    All,
    /// The task with exactly this content.
    Task(String),
    /// Every task of the phase with exactly this name.
    Phase(String),
}

/// What a blocked task waits for: a note, or another task of the list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Note {
    /// A one-line note.
    Reason(String),
    /// The task with exactly this content: completing it unblocks.
    After(String),
}

/// What a `release` frees.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Release {
    /// The task with exactly this content.
    Task(String),
    /// Every task this agent holds (`main`: the session's own agent).
    Agent(String),
}

/// A phase of an `init` payload: a name and the task contents, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PhaseItems {
    /// The phase name (trimmed).
    pub name: String,
    /// The task contents (trimmed).
    pub items: Vec<String>,
}

/// One parsed, validated todo operation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Op {
    /// Replace the whole list; every task starts `pending`.
    Init(Vec<PhaseItems>),
    /// Make this task `in_progress`.
    Start(String),
    /// Complete the target.
    Done(Target),
    /// Abandon the target.
    Drop(Target),
    /// Remove the target (abandon, for an agent).
    Rm(Target),
    /// Block the target, with an optional note or the task it waits for.
    Block(Target, Option<Note>),
    /// Unblock the target.
    Unblock(Target),
    /// Append tasks to a phase, creating it at the end if missing.
    Append(String, Vec<String>),
    /// Read only: one page of the list, or of one phase.
    View(ViewPage),
    /// Free claims; a person's command (`goalkeeper todo release`).
    Release(Release),
    /// Set (`Some`) or clear (`None`) the check of this task; a person's
    /// command (`goalkeeper todo check`; DESIGN.md §13).
    Check(String, Option<String>),
}

/// What a `view` shows: the whole list or one phase, one page at a time.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ViewPage {
    /// Only this phase, when given.
    pub phase: Option<String>,
    /// The page, counted from 1.
    pub page: usize,
}

impl ViewPage {
    /// The first page of the whole list.
    pub fn first() -> ViewPage {
        ViewPage {
            phase: None,
            page: 1,
        }
    }
}

impl Op {
    /// The op's name.
    pub fn kind(&self) -> OpKind {
        match self {
            Op::Init(_) => OpKind::Init,
            Op::Start(_) => OpKind::Start,
            Op::Done(_) => OpKind::Done,
            Op::Drop(_) => OpKind::Drop,
            Op::Rm(_) => OpKind::Rm,
            Op::Block(..) => OpKind::Block,
            Op::Unblock(_) => OpKind::Unblock,
            Op::Append(..) => OpKind::Append,
            Op::View(_) => OpKind::View,
            Op::Release(_) => OpKind::Release,
            Op::Check(..) => OpKind::Check,
        }
    }

    /// The op as a canonical JSON call, as recorded in the event log.
    pub fn to_json(&self) -> Value {
        let mut map = Map::new();
        map.insert("op".into(), self.kind().as_str().into());
        let target = |map: &mut Map<String, Value>, target: &Target| match target {
            Target::All => {}
            Target::Task(t) => {
                map.insert("task".into(), t.as_str().into());
            }
            Target::Phase(p) => {
                map.insert("phase".into(), p.as_str().into());
            }
        };
        match self {
            Op::Init(phases) => {
                let list = phases
                    .iter()
                    .map(|p| serde_json::json!({"phase": p.name, "items": p.items}))
                    .collect::<Vec<_>>();
                map.insert("list".into(), list.into());
            }
            Op::Start(task) => {
                map.insert("task".into(), task.as_str().into());
            }
            Op::Done(t) | Op::Drop(t) | Op::Rm(t) | Op::Unblock(t) => target(&mut map, t),
            Op::Block(t, note) => {
                target(&mut map, t);
                match note {
                    Some(Note::Reason(reason)) => {
                        map.insert("reason".into(), reason.as_str().into());
                    }
                    Some(Note::After(task)) => {
                        map.insert("after".into(), task.as_str().into());
                    }
                    None => {}
                }
            }
            Op::Release(Release::Task(task)) => {
                map.insert("task".into(), task.as_str().into());
            }
            Op::Release(Release::Agent(agent)) => {
                map.insert("agent".into(), agent.as_str().into());
            }
            Op::Check(task, command) => {
                map.insert("task".into(), task.as_str().into());
                map.insert(
                    "command".into(),
                    command.as_deref().map_or(Value::Null, Into::into),
                );
            }
            Op::Append(phase, items) => {
                map.insert("phase".into(), phase.as_str().into());
                map.insert("items".into(), items.clone().into());
            }
            Op::View(view) => {
                if let Some(phase) = &view.phase {
                    map.insert("phase".into(), phase.as_str().into());
                }
                if view.page > 1 {
                    map.insert("page".into(), view.page.into());
                }
            }
        }
        Value::Object(map)
    }

    /// True for every op except `view`.
    pub fn mutates(&self) -> bool {
        !matches!(self, Op::View(_))
    }
}
