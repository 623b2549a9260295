//! Parsing one `todo` tool call (a JSON object) into an [`Op`].
//!
//! Repair before rejection (DESIGN.md §2): models make the same few mistakes, and
//! each rejection costs them a turn. What cannot change which tasks a call
//! touches is repaired, and every repair is reported in the result: a number
//! where text is expected, one text where a list is expected, JSON sent as a
//! string, a field the op does not use given empty, a `reason` on an op that
//! takes none. What could change the targets stays an error that names the
//! field and the accepted ones: an unknown field (it may be a misspelt
//! target), `task` together with `phase`, an empty target, and any other
//! field the op does not use. A missing `op` is inferred only when the
//! payload is unambiguous (DESIGN.md §2.2).

mod init;
mod op;

use serde_json::{Map, Value};

pub use op::{Note, Op, PhaseItems, Release, Target, ViewPage};

pub use op::OpKind;

use super::model::TodoList;
use super::text;
use super::text::MAX_CALL_BYTES;

/// A call that could not be parsed: every problem found, the op name when
/// it was readable (for the result's `details.op`), and what was repaired
/// on the way (reported even though the call was rejected).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallError {
    /// The op named or inferred, if any.
    pub op: Option<OpKind>,
    /// Every problem, each a sentence fragment without a final period.
    pub errors: Vec<String>,
    /// What was repaired or ignored before the problems were found.
    pub repairs: Vec<String>,
}

/// A call read into an op, with every repair that reading it took.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Parsed {
    /// The op.
    pub op: Op,
    /// What was repaired or ignored, each a sentence fragment without a
    /// final period; empty when the call was written as documented.
    pub repairs: Vec<String>,
}

/// Every field a todo call may carry, `op` first (the tool schema's
/// properties are checked against this list).
pub(crate) const CALL_FIELDS: [&str; 8] = [
    "op", "list", "task", "phase", "items", "reason", "after", "page",
];
const FIELD_LIST: &str = "op, list, task, phase, items, reason, after, page";
const OP_LIST: &str = "init, start, done, drop, rm, block, unblock, append, view";

/// Parses a JSON document into an [`Op`]. `list` is the current list, which
/// op inference needs (bare `items` means `init` only while it is empty).
pub(crate) fn parse_call(json: &str, list: &TodoList) -> Result<Parsed, CallError> {
    parse_call_on(json, list.is_empty())
}

/// [`parse_call`] knowing only whether the list is `empty` (no tasks): all
/// that reading a call takes of the list.
pub(crate) fn parse_call_on(json: &str, empty: bool) -> Result<Parsed, CallError> {
    if json.len() > MAX_CALL_BYTES {
        return Err(CallError {
            op: None,
            errors: vec![format!(
                "the call is {} bytes; the limit is {MAX_CALL_BYTES} bytes (1 MiB), so split it into several calls",
                json.len()
            )],
            repairs: Vec::new(),
        });
    }
    let value: Value = serde_json::from_str(json).map_err(|e| CallError {
        op: None,
        errors: vec![format!(
            "the call is not valid JSON ({e}); send one object such as {{\"op\": \"view\"}}"
        )],
        repairs: Vec::new(),
    })?;
    parse_value_on(&value, empty)
}

/// Parses an already-decoded JSON value into an [`Op`]; see [`parse_call`].
pub fn parse_value(value: &Value, list: &TodoList) -> Result<Parsed, CallError> {
    parse_value_on(value, list.is_empty())
}

/// [`parse_value`] knowing only whether the list is `empty`.
pub(crate) fn parse_value_on(value: &Value, empty: bool) -> Result<Parsed, CallError> {
    let mut reader = Reader::default();
    let decoded;
    let value = match value {
        Value::String(text) => match decode_json(text) {
            Some(object @ Value::Object(_)) => {
                reader.repair("decoded the call, a JSON object sent as a string".into());
                decoded = object;
                &decoded
            }
            _ => value,
        },
        _ => value,
    };
    if let Some(field) = crate::call::nul_field(value) {
        let op = value
            .get("op")
            .and_then(Value::as_str)
            .and_then(|name| OpKind::parse(name.trim()));
        return Err(CallError {
            op,
            errors: vec![crate::call::nul_refusal(&field)],
            repairs: reader.repairs,
        });
    }
    let Some(object) = value.as_object() else {
        return Err(CallError {
            op: None,
            errors: vec![format!(
                "the call must be a JSON object such as {{\"op\": \"view\"}}, not {}",
                kind_of(value)
            )],
            repairs: reader.repairs,
        });
    };
    for key in object.keys() {
        if !CALL_FIELDS.contains(&key.as_str()) {
            reader.errors.push(format!(
                "unknown field `{key}`; the accepted fields are {FIELD_LIST}"
            ));
        }
    }
    let kind = match object.get("op").filter(|v| !v.is_null()) {
        Some(v) => reader.op(v),
        None => reader.infer(object, empty),
    };
    let Some(kind) = kind else {
        return Err(CallError {
            op: None,
            errors: reader.errors,
            repairs: reader.repairs,
        });
    };
    let op = reader.build(kind, object);
    match op {
        Some(op) if reader.errors.is_empty() => Ok(Parsed {
            op,
            repairs: reader.repairs,
        }),
        _ => Err(CallError {
            op: Some(kind),
            errors: reader.errors,
            repairs: reader.repairs,
        }),
    }
}

/// The fields each op reads besides `op`.
fn uses(kind: OpKind) -> &'static [&'static str] {
    match kind {
        OpKind::Init => &["list", "items", "phase"],
        OpKind::Start => &["task"],
        OpKind::Done | OpKind::Drop | OpKind::Rm | OpKind::Unblock => &["task", "phase"],
        OpKind::Block => &["task", "phase", "reason", "after"],
        OpKind::Append => &["phase", "items"],
        OpKind::View => &["phase", "page"],
        OpKind::Release | OpKind::Check => &[],
    }
}

/// `null`, `""` (or only whitespace), `[]` or `{}`: a field given with
/// nothing in it.
fn is_empty(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::String(s) => s.trim().is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        Value::Bool(_) | Value::Number(_) => false,
    }
}

/// A string that holds a JSON array or object, decoded.
fn decode_json(text: &str) -> Option<Value> {
    let trimmed = text.trim();
    if !(trimmed.starts_with('[') || trimmed.starts_with('{')) {
        return None;
    }
    serde_json::from_str::<Value>(trimmed)
        .ok()
        .filter(|v| v.is_array() || v.is_object())
}

/// A text field as given: left out, `null`, or present (parsed, or already
/// reported as an error).
enum Given {
    Absent,
    Null,
    Text(String),
    Bad,
}

/// Reads the fields of one call, collecting repairs and errors.
#[derive(Default)]
struct Reader {
    repairs: Vec<String>,
    errors: Vec<String>,
}

impl Reader {
    fn repair(&mut self, what: String) {
        self.repairs.push(what);
    }

    fn fail<T>(&mut self, message: String) -> Option<T> {
        self.errors.push(message);
        None
    }

    fn op(&mut self, value: &Value) -> Option<OpKind> {
        match value.as_str() {
            Some(name) => match OpKind::parse(name.trim()) {
                Some(kind) => Some(kind),
                None => self.fail(format!("unknown op `{name}`; use one of {OP_LIST}")),
            },
            None => self.fail(format!(
                "field `op` must be a string (one of {OP_LIST}), not {}",
                kind_of(value)
            )),
        }
    }

    /// DESIGN.md §2.2 op inference for a call without `op`, from the fields
    /// given with something in them.
    fn infer(&mut self, object: &Map<String, Value>, empty: bool) -> Option<OpKind> {
        let has = |key: &str| object.get(key).is_some_and(|v| !is_empty(v));
        if has("list") {
            Some(OpKind::Init)
        } else if has("items") && has("phase") {
            Some(OpKind::Append)
        } else if has("items") && empty {
            Some(OpKind::Init)
        } else {
            let why = if has("items") {
                "; bare `items` means init only while the list is empty, so add \"op\": \"append\" with a `phase`, or \"op\": \"init\" to replace the list"
            } else {
                ""
            };
            self.fail(format!("field `op` is missing; use one of {OP_LIST}{why}"))
        }
    }

    /// Sorts the fields `kind` does not use into ignored (empty, or a
    /// `reason`) and rejected, then builds the op from the rest.
    fn build(&mut self, kind: OpKind, object: &Map<String, Value>) -> Option<Op> {
        let used = uses(kind);
        let mut ignored = Vec::new();
        for field in &CALL_FIELDS[1..] {
            let Some(value) = object.get(*field) else {
                continue;
            };
            if used.contains(field) {
                continue;
            }
            if is_empty(value) {
                ignored.push(*field);
            } else if *field == "reason" {
                self.repair(format!(
                    "ignored `reason`, which only `block` takes (`{kind}` keeps no note)"
                ));
            } else {
                self.errors.push(format!(
                    "field `{field}` does not apply to `{kind}`, which takes {}",
                    kind.fields()
                ));
            }
        }
        if !ignored.is_empty() {
            self.repair(format!(
                "ignored {}, given empty and not used by `{kind}`",
                names(&ignored)
            ));
        }
        let field = |name: &str| object.get(name);
        match kind {
            OpKind::Init => self.init(field("list"), field("items"), field("phase")),
            OpKind::Start => match self.given(field("task"), "task", text::task_content) {
                Given::Text(task) => Some(Op::Start(task)),
                Given::Bad => None,
                Given::Absent | Given::Null => self
                    .fail("`start` needs `task`: the exact content of the task to work on".into()),
            },
            OpKind::Done => self.target(kind, object).map(Op::Done),
            OpKind::Drop => self.target(kind, object).map(Op::Drop),
            OpKind::Rm => self.target(kind, object).map(Op::Rm),
            OpKind::Block => {
                let reason = self.reason(field("reason"));
                let after = match self.given(field("after"), "after", text::task_content) {
                    Given::Text(task) => Some(task),
                    Given::Bad => return None,
                    Given::Absent | Given::Null => None,
                };
                let target = self.target(kind, object);
                let note = match (reason, after) {
                    (Some(_), Some(_)) => {
                        return self.fail(
                            "`block` takes `reason` or `after`, not both: `after` writes the note itself".into(),
                        );
                    }
                    (Some(reason), None) => Some(Note::Reason(reason)),
                    (None, Some(task)) => Some(Note::After(task)),
                    (None, None) => None,
                };
                target.map(|t| Op::Block(t, note))
            }
            // Not tool ops: `OpKind::parse` never reads them.
            OpKind::Release | OpKind::Check => None,
            OpKind::Unblock => self.target(kind, object).map(Op::Unblock),
            OpKind::Append => {
                let phase = self.given(field("phase"), "phase", text::phase_name);
                let items = field("items")
                    .filter(|v| !v.is_null())
                    .map(|v| self.items(v, "items"));
                match (phase, items) {
                    (Given::Absent | Given::Null, _) => {
                        self.fail("`append` needs `phase`: the phase to add the items to".into())
                    }
                    (_, None) => {
                        self.fail("`append` needs `items`: the task contents to add".into())
                    }
                    (Given::Text(_), Some(Some(items))) if items.is_empty() => {
                        self.fail("`append` needs at least one entry in `items`".into())
                    }
                    (Given::Text(phase), Some(Some(items))) => Some(Op::Append(phase, items)),
                    _ => None,
                }
            }
            OpKind::View => {
                let phase = match self.given(field("phase"), "phase", text::phase_name) {
                    Given::Text(phase) => Some(phase),
                    Given::Bad => return None,
                    Given::Absent | Given::Null => None,
                };
                let page = self.page(field("page"))?;
                Some(Op::View(ViewPage { phase, page }))
            }
        }
    }

    /// A text field, with a number read as its digits.
    fn given(
        &mut self,
        value: Option<&Value>,
        field: &str,
        check: fn(&str) -> Result<String, String>,
    ) -> Given {
        match value {
            None => Given::Absent,
            Some(Value::Null) => Given::Null,
            Some(value) => match self.text(value, field, check) {
                Some(text) => Given::Text(text),
                None => Given::Bad,
            },
        }
    }

    /// A string, or a number read as its digits (reported), checked.
    fn text(
        &mut self,
        value: &Value,
        field: &str,
        check: fn(&str) -> Result<String, String>,
    ) -> Option<String> {
        let raw = match value {
            Value::String(s) => s.clone(),
            Value::Number(n) => {
                self.repair(format!("read `{field}` {n}, a number, as the text \"{n}\""));
                n.to_string()
            }
            other => {
                return self.fail(format!(
                    "field `{field}` must be a string, not {}",
                    kind_of(other)
                ));
            }
        };
        match check(&raw) {
            Ok(text) => Some(text),
            Err(e) => self.fail(format!("field `{field}`: {e}")),
        }
    }

    /// A list of task contents: an array of strings, with one string (or
    /// number) read as a list of one and a JSON array sent as a string
    /// decoded.
    fn items(&mut self, value: &Value, field: &str) -> Option<Vec<String>> {
        let decoded;
        let array = match value {
            Value::Array(array) => array,
            Value::String(text) => match decode_json(text) {
                Some(Value::Array(array)) => {
                    self.repair(format!("decoded `{field}`, a JSON array sent as a string"));
                    decoded = array;
                    &decoded
                }
                _ => {
                    self.repair(format!("read `{field}`, one string, as a list of one task"));
                    return self
                        .text(value, field, text::task_content)
                        .map(|one| vec![one]);
                }
            },
            Value::Number(_) => {
                self.repair(format!("read `{field}`, one value, as a list of one task"));
                return self
                    .text(value, field, text::task_content)
                    .map(|one| vec![one]);
            }
            other => {
                return self.fail(format!(
                    "field `{field}` must be an array of strings, not {}",
                    kind_of(other)
                ));
            }
        };
        let before = self.errors.len();
        let mut numbers = 0;
        let mut items = Vec::with_capacity(array.len());
        for (i, item) in array.iter().enumerate() {
            let name = format!("{field}[{i}]");
            let text = match item {
                Value::Number(n) => {
                    numbers += 1;
                    text::task_content(&n.to_string()).ok()
                }
                Value::String(s) => match text::task_content(s) {
                    Ok(text) => Some(text),
                    Err(e) => self.fail(format!("field `{name}`: {e}")),
                },
                other => self.fail(format!(
                    "field `{name}` must be a string, not {}",
                    kind_of(other)
                )),
            };
            items.extend(text);
        }
        if numbers > 0 {
            let what = if numbers == 1 { "a number" } else { "numbers" };
            self.repair(format!("read {what} in `{field}` as text"));
        }
        (self.errors.len() == before).then_some(items)
    }

    /// `block`'s note: empty counts as none (reported).
    fn reason(&mut self, value: Option<&Value>) -> Option<String> {
        match value {
            None | Some(Value::Null) => None,
            Some(v) if is_empty(v) => {
                self.repair("ignored the empty `reason`".into());
                None
            }
            Some(v) => self.text(v, "reason", text::blocker),
        }
    }

    /// What a `done`, `drop`, `rm`, `block` or `unblock` names. A `null`
    /// target with nothing else named is an error, not "every task": a
    /// model that meant one task must not finish or drop them all.
    fn target(&mut self, kind: OpKind, object: &Map<String, Value>) -> Option<Target> {
        let required = matches!(kind, OpKind::Block | OpKind::Unblock);
        let task = self.given(object.get("task"), "task", text::task_content);
        let phase = self.given(object.get("phase"), "phase", text::phase_name);
        match (task, phase) {
            (Given::Bad, _) | (_, Given::Bad) => None,
            (Given::Text(_), Given::Text(_)) => {
                self.fail(format!("`{kind}` takes either `task` or `phase`, not both"))
            }
            (Given::Text(task), _) => Some(Target::Task(task)),
            (_, Given::Text(phase)) => Some(Target::Phase(phase)),
            (Given::Absent, Given::Absent) if !required => Some(Target::All),
            (Given::Absent, Given::Absent) => self.fail(format!(
                "`{kind}` needs `task` or `phase` to say what it applies to"
            )),
            (task, _) => {
                let field = if matches!(task, Given::Null) {
                    "task"
                } else {
                    "phase"
                };
                if required {
                    self.fail(format!(
                        "field `{field}` is null; `{kind}` needs a `task` or `phase` to say what it applies to"
                    ))
                } else {
                    self.fail(format!(
                        "field `{field}` is null; name a task by its exact content or a phase by its name, or leave out both `task` and `phase` to {kind} every task"
                    ))
                }
            }
        }
    }

    /// `view`'s page: a whole number from 1 (a string of digits is read as
    /// the number); 1 when left out.
    fn page(&mut self, value: Option<&Value>) -> Option<usize> {
        const WHY: &str = "must be a whole number from 1";
        match value {
            None | Some(Value::Null) => Some(1),
            Some(Value::Number(n)) => match n.as_u64().and_then(|n| usize::try_from(n).ok()) {
                Some(page) if page >= 1 => Some(page),
                _ => self.fail(format!("field `page` {WHY}, not {n}")),
            },
            Some(Value::String(s)) => match s.trim().parse::<usize>() {
                Ok(page) if page >= 1 => {
                    self.repair(format!(
                        "read `page` \"{page}\", a string, as the number {page}"
                    ));
                    Some(page)
                }
                _ => self.fail(format!("field `page` {WHY}, not a string")),
            },
            Some(other) => self.fail(format!("field `page` {WHY}, not {}", kind_of(other))),
        }
    }
}

/// "`a`", "`a` and `b`", "`a`, `b` and `c`".
fn names(fields: &[&str]) -> String {
    let quoted: Vec<String> = fields.iter().map(|f| format!("`{f}`")).collect();
    match quoted.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => String::new(),
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
