//! Parsing one `todo` tool call (a JSON object) into an [`Op`].
//!
//! Parsing is strict so a model learns the contract from the error: an
//! unknown field names itself and the accepted ones, a field the op does not
//! use says which fields it does use, and a missing `op` is inferred only
//! when the payload is unambiguous (SPEC §2.2). `null` counts as absent.

use std::fmt;

use serde::Serialize;
use serde_json::{Map, Value};

use super::model::TodoList;
use super::text;
use super::text::MAX_CALL_BYTES;

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
        }
    }

    fn parse(name: &str) -> Option<OpKind> {
        OpKind::ALL.into_iter().find(|k| k.as_str() == name)
    }

    /// The fields this op accepts besides `op`, as written in errors.
    fn fields(self) -> &'static str {
        match self {
            OpKind::Init => "list, or items with an optional phase",
            OpKind::Start => "task",
            OpKind::Done | OpKind::Drop | OpKind::Rm => "task or phase, or neither for every task",
            OpKind::Block => "task or phase, and an optional reason",
            OpKind::Unblock => "task or phase",
            OpKind::Append => "phase and items",
            OpKind::View => "no other field",
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
    /// Block the target, with an optional one-line note.
    Block(Target, Option<String>),
    /// Unblock the target.
    Unblock(Target),
    /// Append tasks to a phase, creating it at the end if missing.
    Append(String, Vec<String>),
    /// Read only.
    View,
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
            Op::View => OpKind::View,
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
            Op::Block(t, reason) => {
                target(&mut map, t);
                if let Some(reason) = reason {
                    map.insert("reason".into(), reason.as_str().into());
                }
            }
            Op::Append(phase, items) => {
                map.insert("phase".into(), phase.as_str().into());
                map.insert("items".into(), items.clone().into());
            }
            Op::View => {}
        }
        Value::Object(map)
    }

    /// True for every op except `view`.
    pub fn mutates(&self) -> bool {
        !matches!(self, Op::View)
    }
}

/// A call that could not be parsed: every problem found, and the op name
/// when it was readable (for the result's `details.op`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallError {
    /// The op named or inferred, if any.
    pub op: Option<OpKind>,
    /// Every problem, each a sentence fragment without a final period.
    pub errors: Vec<String>,
}

/// Every field a todo call may carry, `op` first (the tool schema's
/// properties are checked against this list).
pub const CALL_FIELDS: [&str; 6] = ["op", "list", "task", "phase", "items", "reason"];
const FIELD_LIST: &str = "op, list, task, phase, items, reason";
const OP_LIST: &str = "init, start, done, drop, rm, block, unblock, append, view";

/// Parses a JSON document into an [`Op`]. `list` is the current list, which
/// op inference needs (bare `items` means `init` only while it is empty).
pub fn parse_call(json: &str, list: &TodoList) -> Result<Op, CallError> {
    if json.len() > MAX_CALL_BYTES {
        return Err(CallError {
            op: None,
            errors: vec![format!(
                "the call is {} bytes; the limit is {MAX_CALL_BYTES} bytes (1 MiB), so split it into several calls",
                json.len()
            )],
        });
    }
    let value: Value = serde_json::from_str(json).map_err(|e| CallError {
        op: None,
        errors: vec![format!(
            "the call is not valid JSON ({e}); send one object such as {{\"op\": \"view\"}}"
        )],
    })?;
    parse_value(&value, list)
}

/// Parses an already-decoded JSON value into an [`Op`]; see [`parse_call`].
pub fn parse_value(value: &Value, list: &TodoList) -> Result<Op, CallError> {
    let Some(object) = value.as_object() else {
        return Err(CallError {
            op: None,
            errors: vec![format!(
                "the call must be a JSON object such as {{\"op\": \"view\"}}, not {}",
                kind_of(value)
            )],
        });
    };
    let mut fields = Fields::read(object);
    let op = match fields.op.take() {
        Some(kind) => Some(kind),
        // An `op` that was given but unreadable is reported, not guessed at.
        None if object.get("op").is_some_and(|v| !v.is_null()) => None,
        None => fields.infer(list),
    };
    let Some(kind) = op else {
        return Err(CallError {
            op: None,
            errors: fields.errors,
        });
    };
    let op = fields.build(kind);
    match op {
        Some(op) if fields.errors.is_empty() => Ok(op),
        _ => Err(CallError {
            op: Some(kind),
            errors: fields.errors,
        }),
    }
}

/// The raw fields of a call, type-checked and trimmed, plus the errors met.
#[derive(Default)]
struct Fields {
    op: Option<OpKind>,
    list: Option<Vec<PhaseItems>>,
    task: Option<String>,
    phase: Option<String>,
    items: Option<Vec<String>>,
    reason: Option<String>,
    /// The known fields present with a non-null value, parsed or not.
    given: Vec<&'static str>,
    errors: Vec<String>,
}

impl Fields {
    fn read(object: &Map<String, Value>) -> Fields {
        let mut f = Fields::default();
        for key in object.keys() {
            if !CALL_FIELDS.contains(&key.as_str()) {
                f.errors.push(format!(
                    "unknown field `{key}`; the accepted fields are {FIELD_LIST}"
                ));
            }
        }
        let get = |key: &str| object.get(key).filter(|v| !v.is_null());
        f.given = CALL_FIELDS
            .into_iter()
            .filter(|&key| key != "op" && get(key).is_some())
            .collect();
        if let Some(v) = get("op") {
            match v.as_str() {
                Some(name) => match OpKind::parse(name.trim()) {
                    Some(kind) => f.op = Some(kind),
                    None => f
                        .errors
                        .push(format!("unknown op `{name}`; use one of {OP_LIST}")),
                },
                None => f.errors.push(format!(
                    "field `op` must be a string (one of {OP_LIST}), not {}",
                    kind_of(v)
                )),
            }
        }
        if let Some(v) = get("list") {
            f.list = f.read_list(v);
        }
        if let Some(v) = get("task") {
            f.task = f.read_text(v, "task", text::task_content);
        }
        if let Some(v) = get("phase") {
            f.phase = f.read_text(v, "phase", text::phase_name);
        }
        if let Some(v) = get("items") {
            f.items = f.read_items(v, "items");
        }
        if let Some(v) = get("reason") {
            f.reason = f.read_text(v, "reason", text::blocker);
        }
        f
    }

    fn read_text(
        &mut self,
        value: &Value,
        field: &str,
        check: fn(&str) -> Result<String, String>,
    ) -> Option<String> {
        match value.as_str() {
            Some(raw) => match check(raw) {
                Ok(text) => Some(text),
                Err(e) => {
                    self.errors.push(format!("field `{field}`: {e}"));
                    None
                }
            },
            None => {
                self.errors.push(format!(
                    "field `{field}` must be a string, not {}",
                    kind_of(value)
                ));
                None
            }
        }
    }

    fn read_items(&mut self, value: &Value, field: &str) -> Option<Vec<String>> {
        let Some(array) = value.as_array() else {
            self.errors.push(format!(
                "field `{field}` must be an array of strings, not {}",
                kind_of(value)
            ));
            return None;
        };
        let before = self.errors.len();
        let mut items = Vec::with_capacity(array.len());
        for (i, item) in array.iter().enumerate() {
            if let Some(text) = self.read_text(item, &format!("{field}[{i}]"), text::task_content) {
                items.push(text);
            }
        }
        (self.errors.len() == before).then_some(items)
    }

    fn read_list(&mut self, value: &Value) -> Option<Vec<PhaseItems>> {
        let Some(array) = value.as_array() else {
            self.errors.push(format!(
                "field `list` must be an array of {{\"phase\": ..., \"items\": [...]}} objects, not {}",
                kind_of(value)
            ));
            return None;
        };
        let before = self.errors.len();
        let mut phases = Vec::with_capacity(array.len());
        for (i, entry) in array.iter().enumerate() {
            let Some(object) = entry.as_object() else {
                self.errors.push(format!(
                    "field `list[{i}]` must be an object {{\"phase\": ..., \"items\": [...]}}, not {}",
                    kind_of(entry)
                ));
                continue;
            };
            for key in object.keys() {
                if key != "phase" && key != "items" {
                    self.errors.push(format!(
                        "unknown field `list[{i}].{key}`; each phase takes phase and items"
                    ));
                }
            }
            let name = match object.get("phase").filter(|v| !v.is_null()) {
                Some(v) => self.read_text(v, &format!("list[{i}].phase"), text::phase_name),
                None => {
                    self.errors.push(format!(
                        "field `list[{i}].phase` is missing; name the phase"
                    ));
                    None
                }
            };
            let items = match object.get("items").filter(|v| !v.is_null()) {
                Some(v) => self.read_items(v, &format!("list[{i}].items")),
                None => Some(Vec::new()),
            };
            if let (Some(name), Some(items)) = (name, items) {
                phases.push(PhaseItems { name, items });
            }
        }
        (self.errors.len() == before).then_some(phases)
    }

    /// SPEC §2.2 op inference for a call without `op`.
    fn infer(&mut self, list: &TodoList) -> Option<OpKind> {
        let has_list = self.given.contains(&"list");
        let has_items = self.given.contains(&"items");
        let has_phase = self.given.contains(&"phase");
        if has_list {
            Some(OpKind::Init)
        } else if has_items && has_phase {
            Some(OpKind::Append)
        } else if has_items && list.is_empty() {
            Some(OpKind::Init)
        } else {
            let why = if has_items {
                "; bare `items` means init only while the list is empty, so add \"op\": \"append\" with a `phase`, or \"op\": \"init\" to replace the list"
            } else {
                ""
            };
            self.errors
                .push(format!("field `op` is missing; use one of {OP_LIST}{why}"));
            None
        }
    }

    /// Checks the fields against what `kind` uses and builds the op.
    fn build(&mut self, kind: OpKind) -> Option<Op> {
        let uses: &[&str] = match kind {
            OpKind::Init => &["list", "items", "phase"],
            OpKind::Start => &["task"],
            OpKind::Done | OpKind::Drop | OpKind::Rm | OpKind::Unblock => &["task", "phase"],
            OpKind::Block => &["task", "phase", "reason"],
            OpKind::Append => &["phase", "items"],
            OpKind::View => &[],
        };
        for field in &self.given {
            if !uses.contains(field) {
                self.errors.push(format!(
                    "field `{field}` does not apply to `{kind}`, which takes {}",
                    kind.fields()
                ));
            }
        }
        if !self.errors.is_empty() {
            return None;
        }
        match kind {
            OpKind::Init => self.build_init(),
            OpKind::Start => match self.task.take() {
                Some(task) => Some(Op::Start(task)),
                None => {
                    self.missing("`start` needs `task`: the exact content of the task to work on")
                }
            },
            OpKind::Done => self.target(kind).map(Op::Done),
            OpKind::Drop => self.target(kind).map(Op::Drop),
            OpKind::Rm => self.target(kind).map(Op::Rm),
            OpKind::Block => {
                let reason = self.reason.take();
                self.target(kind).map(|t| Op::Block(t, reason))
            }
            OpKind::Unblock => self.target(kind).map(Op::Unblock),
            OpKind::Append => match (self.phase.take(), self.items.take()) {
                (Some(_), Some(items)) if items.is_empty() => {
                    self.missing("`append` needs at least one entry in `items`")
                }
                (Some(phase), Some(items)) => Some(Op::Append(phase, items)),
                (None, _) => self.missing("`append` needs `phase`: the phase to add the items to"),
                (_, None) => self.missing("`append` needs `items`: the task contents to add"),
            },
            OpKind::View => Some(Op::View),
        }
    }

    fn build_init(&mut self) -> Option<Op> {
        let phases = match (self.list.take(), self.items.take(), self.phase.take()) {
            (Some(_), Some(_), _) => {
                return self.missing("`init` takes either `list` or `items`, not both");
            }
            (Some(_), None, Some(_)) => {
                return self.missing(
                    "`init` with `list` names its phases inside the list; drop the top-level `phase`",
                );
            }
            (Some(list), None, None) => list,
            (None, Some(items), phase) => vec![PhaseItems {
                name: phase.unwrap_or_else(|| "Tasks".to_owned()),
                items,
            }],
            (None, None, _) => {
                return self.missing(
                    "`init` needs `list` ([{\"phase\": ..., \"items\": [...]}]) or `items`",
                );
            }
        };
        if phases.iter().all(|p| p.items.is_empty()) {
            return self.missing(
                "`init` needs at least one task; to clear the list use `rm` without a target",
            );
        }
        Some(Op::Init(phases))
    }

    fn target(&mut self, kind: OpKind) -> Option<Target> {
        let required = matches!(kind, OpKind::Block | OpKind::Unblock);
        match (self.task.take(), self.phase.take()) {
            (Some(_), Some(_)) => self.missing(&format!(
                "`{kind}` takes either `task` or `phase`, not both"
            )),
            (Some(task), None) => Some(Target::Task(task)),
            (None, Some(phase)) => Some(Target::Phase(phase)),
            (None, None) if required => self.missing(&format!(
                "`{kind}` needs `task` or `phase` to say what it applies to"
            )),
            (None, None) => Some(Target::All),
        }
    }

    fn missing<T>(&mut self, message: &str) -> Option<T> {
        self.errors.push(message.to_owned());
        None
    }
}

fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
