//! The `todo` and `goal` tools as an agent host sees them: a name, a
//! description, a JSON Schema for the arguments, and [`execute`], which
//! runs one call whose arguments arrive as JSON (the MCP server's path; the
//! CLI's `todo apply` and `goal apply` call the store directly).
//!
//! The schemas are generated from small argument structs that mirror the
//! fields the engine accepts. They guide the model; they do not gate the
//! call: arguments reach the engine's own parser as they were sent, so a
//! malformed call gets the engine's error, which names the problem and the
//! accepted fields.

use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde_json::{Value, json};

use crate::Store;
use crate::error::Result;
use crate::goal::{AGENT_OPS, GoalResult, MAX_OBJECTIVE_CHARS};
use crate::prompt::Templates;
use crate::store::{GoalCall, SessionRef, TodoAnswer};
use crate::todo::{
    Actor, Call, MAX_BLOCKER_CHARS, MAX_CALL_BYTES, MAX_PHASE_CHARS, MAX_TASK_CHARS, OpKind,
    TodoResult,
};
use crate::tool_result::ToolResult;

/// The name of the todo tool.
pub const TODO: &str = crate::todo::TOOL_NAME;
/// The name of the goal tool.
pub const GOAL: &str = crate::goal::TOOL_NAME;
/// Every tool, in the order hosts list them.
pub const TOOL_NAMES: [&str; 2] = [TODO, GOAL];

/// One tool as a host advertises it.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolSpec {
    /// The tool name the model calls.
    pub name: &'static str,
    /// What the tool does and how to call it (from `prompts/tools/<name>.md`).
    pub description: String,
    /// The JSON Schema (draft 2020-12) of the arguments object.
    pub input_schema: Value,
}

impl ToolSpec {
    /// Both tools, `todo` then `goal`, with their descriptions rendered from
    /// `templates` (so `prompts.dir` overrides apply).
    pub fn all(templates: &Templates) -> Result<Vec<ToolSpec>> {
        TOOL_NAMES
            .into_iter()
            .map(|name| ToolSpec::new(name, templates))
            .collect()
    }

    /// The tool called `name`, which must be one of [`TOOL_NAMES`].
    fn new(name: &'static str, templates: &Templates) -> Result<ToolSpec> {
        let input_schema = match name {
            TODO => input_schema::<TodoArguments>(),
            _ => input_schema::<GoalArguments>(),
        };
        Ok(ToolSpec {
            name,
            description: templates.render(&format!("tools/{name}"), &json!({}))?,
            input_schema,
        })
    }
}

/// The arguments of a `todo` call. Schema only: the engine parses calls.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
#[expect(
    dead_code,
    reason = "describes the schema; calls are parsed by the engine"
)]
struct TodoArguments {
    /// The operation.
    #[schemars(schema_with = "todo_ops")]
    op: String,
    /// `init`: the whole list, phase by phase.
    list: Option<Vec<PhaseArguments>>,
    /// The task, named by its exact text (`start`, `done`, `drop`, `rm`, `block`, `unblock`).
    #[schemars(length(max = MAX_TASK_CHARS))]
    task: Option<String>,
    /// The phase, named exactly (`append`, `done`, `drop`, `rm`, `block`, `unblock`, `view`; with flat `items` in `init`).
    #[schemars(length(max = MAX_PHASE_CHARS))]
    phase: Option<String>,
    /// `append`, or a flat `init`: task texts, unique across the list.
    #[schemars(inner(length(max = MAX_TASK_CHARS)))]
    items: Option<Vec<String>>,
    /// `block`: what the task waits for, one line.
    #[schemars(length(max = MAX_BLOCKER_CHARS))]
    reason: Option<String>,
    /// `view`: the page of a long list, from 1.
    #[schemars(range(min = 1))]
    page: Option<u64>,
}

/// One phase of an `init` list.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
#[expect(
    dead_code,
    reason = "describes the schema; calls are parsed by the engine"
)]
struct PhaseArguments {
    /// The phase name, unique in the list.
    #[schemars(length(max = MAX_PHASE_CHARS))]
    phase: String,
    /// Its tasks in order; every text is unique across the list.
    #[schemars(inner(length(max = MAX_TASK_CHARS)))]
    items: Vec<String>,
}

/// The `op` of a todo call: one of [`OpKind::ALL`].
fn todo_ops(_: &mut SchemaGenerator) -> Schema {
    let names: Vec<&str> = OpKind::ALL.iter().map(|k| k.as_str()).collect();
    json_schema!({"type": "string", "enum": names})
}

/// The arguments of a `goal` call. Schema only: the engine parses calls.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
#[expect(
    dead_code,
    reason = "describes the schema; calls are parsed by the engine"
)]
struct GoalArguments {
    /// The operation. Only the user can replace, pause or drop a goal, or set its budget.
    #[schemars(schema_with = "goal_ops")]
    op: String,
    /// `create`: what the goal should achieve.
    #[schemars(length(min = 1, max = MAX_OBJECTIVE_CHARS))]
    objective: Option<String>,
}

/// The `op` of a goal call: one of [`AGENT_OPS`].
fn goal_ops(_: &mut SchemaGenerator) -> Schema {
    json_schema!({"type": "string", "enum": AGENT_OPS})
}

/// The schema of `T` as an MCP `inputSchema`: draft 2020-12, subschemas
/// inlined (some hosts do not follow `$ref`), and no `$schema`, `title` or
/// `description` at the top: 2020-12 is MCP's default dialect, and the tool
/// description says the rest.
fn input_schema<T: JsonSchema>() -> Value {
    let generator = SchemaSettings::draft2020_12()
        .with(|s| s.inline_subschemas = true)
        .into_generator();
    let mut schema = generator.into_root_schema_for::<T>().to_value();
    if let Some(object) = schema.as_object_mut() {
        object.remove("$schema");
        object.remove("title");
        object.remove("description");
    }
    schema
}

/// What a tool call returned: the summary text, the details as JSON, and
/// whether the call was rejected.
pub type ExecResult = ToolResult<Value>;

/// Runs one agent tool call (`todo` or `goal`, actor [`Actor::Agent`])
/// against `store`, in one immediate transaction.
///
/// A rejected call, malformed arguments and an unknown tool name are error
/// results (`is_error`), never `Err`; `Err` means the store failed.
/// `arguments` are passed to the engine as they came, whatever their shape.
#[cfg(test)]
pub fn execute(
    store: &mut Store,
    session: &(impl SessionRef + ?Sized),
    tool: &str,
    arguments: &Value,
    now_ms: i64,
) -> Result<ExecResult> {
    run(store, session, tool, arguments, now_ms, false).map(Executed::into_json)
}

/// A tool call's result with its details still typed. [`execute`] turns
/// them into JSON; the MCP server sends only a few facts of them, which it
/// reads from here without first turning a long list into JSON.
pub(crate) enum Executed {
    /// A `todo` call.
    Todo(TodoResult),
    /// A `todo` call answered without its list ([`Store::todo_answer`]).
    TodoAnswer(TodoAnswer),
    /// A `goal` call.
    Goal(GoalResult),
    /// Anything else (an unknown tool, a failure), already as JSON.
    Other(ExecResult),
}

impl Executed {
    /// The result with its details as JSON, as [`execute`] returns it.
    pub(crate) fn into_json(self) -> ExecResult {
        match self {
            Executed::Todo(result) => to_json(result),
            Executed::TodoAnswer(answer) => {
                let facts = json!({
                    "op": answer.op,
                    "version": answer.version,
                    "completed_tasks": answer.completed_tasks,
                });
                ToolResult::new(answer.text, facts, answer.is_error)
            }
            Executed::Goal(result) => to_json(result),
            Executed::Other(result) => result,
        }
    }
}

/// [`execute`], with the details still typed; a `todo` call's `list_free`
/// (its answer without the list, which is cheaper on a long list) when
/// the caller sends only the text and a few facts.
pub(crate) fn run(
    store: &mut Store,
    session: &(impl SessionRef + ?Sized),
    tool: &str,
    arguments: &Value,
    now_ms: i64,
    list_free: bool,
) -> Result<Executed> {
    match tool {
        TODO => {
            // The size limit is checked on the text of a call; a decoded
            // value gets the same check, and the engine's message.
            let text = arguments.to_string();
            let call = if text.len() > MAX_CALL_BYTES {
                Call::Json(&text)
            } else {
                Call::Value(arguments)
            };
            Ok(if list_free {
                Executed::TodoAnswer(store.todo_answer(session, call, Actor::Agent, now_ms)?)
            } else {
                Executed::Todo(store.todo(session, call, Actor::Agent, now_ms)?)
            })
        }
        GOAL => Ok(Executed::Goal(store.goal(
            session,
            GoalCall::Value(arguments),
            Actor::Agent,
            now_ms,
        )?)),
        other => Ok(Executed::Other(unknown_tool(other, &TOOL_NAMES))),
    }
}

/// The error result for a call to a tool that is not offered; `offered`
/// lists the tools that are.
pub fn unknown_tool(name: &str, offered: &[&str]) -> ExecResult {
    let text = match offered {
        [] => format!("unknown tool `{name}`: no tool is offered"),
        _ => format!(
            "unknown tool `{name}`; the tools are {}",
            offered.join(", ")
        ),
    };
    ToolResult::new(text, Value::Null, true)
}

fn to_json<D: serde::Serialize>(result: ToolResult<D>) -> ExecResult {
    ToolResult {
        details: serde_json::to_value(&result.details).expect("tool details serialize"),
        content: result.content,
        is_error: result.is_error,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SessionId;

    fn session() -> SessionId {
        SessionId::parse("t").unwrap()
    }

    #[test]
    fn both_tools_have_descriptions_and_object_schemas() {
        let specs = ToolSpec::all(&Templates::builtin()).unwrap();
        let names: Vec<_> = specs.iter().map(|s| s.name).collect();
        assert_eq!(names, ["todo", "goal"]);
        for spec in &specs {
            assert!(!spec.description.is_empty());
            assert_eq!(spec.input_schema["type"], "object");
            assert_eq!(spec.input_schema["additionalProperties"], false);
            assert_eq!(spec.input_schema["required"], json!(["op"]));
            assert!(spec.input_schema.get("$defs").is_none());
        }
        assert_eq!(
            specs[0].input_schema["properties"]["op"]["enum"],
            json!([
                "init", "start", "done", "drop", "rm", "block", "unblock", "append", "view"
            ])
        );
        assert_eq!(
            specs[1].input_schema["properties"]["op"]["enum"],
            json!(["get", "create", "resume", "complete"])
        );
    }

    #[test]
    fn the_todo_schema_names_every_field_the_engine_accepts() {
        let schema = input_schema::<TodoArguments>();
        let fields: Vec<&String> = schema["properties"].as_object().unwrap().keys().collect();
        assert_eq!(fields, crate::todo::CALL_FIELDS);
        let phase = &schema["properties"]["list"]["items"];
        assert_eq!(phase["required"], json!(["phase", "items"]));
    }

    #[test]
    fn execute_runs_both_tools_as_the_agent() {
        let mut store = Store::open_in_memory().unwrap();
        let init = json!({"op": "init", "items": ["Build", "Test"]});
        let result = execute(&mut store, &session(), "todo", &init, 1).unwrap();
        assert!(!result.is_error, "{}", result.text());
        assert_eq!(result.details["version"], 1);
        assert_eq!(result.details["op"], "init");

        let create = json!({"op": "create", "objective": "Ship"});
        let result = execute(&mut store, &session(), "goal", &create, 2).unwrap();
        assert!(!result.is_error, "{}", result.text());
        assert_eq!(result.details["goal"]["objective"], "Ship");

        let pause = json!({"op": "pause"});
        let result = execute(&mut store, &session(), "goal", &pause, 3).unwrap();
        assert!(result.is_error);
        assert!(
            result.text().contains("only the user can pause the goal"),
            "{}",
            result.text()
        );
    }

    #[test]
    fn malformed_arguments_reach_the_engine() {
        let mut store = Store::open_in_memory().unwrap();
        let result = execute(&mut store, &session(), "todo", &json!([1]), 1).unwrap();
        assert!(result.is_error);
        assert!(
            result.text().contains("must be a JSON object"),
            "{}",
            result.text()
        );
        let result = execute(&mut store, &session(), "goal", &json!("get"), 1).unwrap();
        assert!(result.is_error);
        assert!(
            result.text().contains("must be a JSON object"),
            "{}",
            result.text()
        );
    }

    #[test]
    fn an_oversized_call_is_refused_with_the_limit() {
        let mut store = Store::open_in_memory().unwrap();
        let big = json!({"op": "init", "items": ["x".repeat(MAX_CALL_BYTES)]});
        let result = execute(&mut store, &session(), "todo", &big, 1).unwrap();
        assert!(result.is_error);
        assert!(result.text().contains("1 MiB"), "{}", result.text());
    }

    #[test]
    fn an_unknown_tool_names_the_tools() {
        let mut store = Store::open_in_memory().unwrap();
        let result = execute(&mut store, &session(), "todos", &json!({}), 1).unwrap();
        assert!(result.is_error);
        assert_eq!(
            result.text(),
            "unknown tool `todos`; the tools are todo, goal"
        );
        assert_eq!(result.details, Value::Null);
    }
}
