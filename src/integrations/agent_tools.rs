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

use crate::error::Result;
use crate::goal::{AGENT_OPS, MAX_OBJECTIVE_CHARS};
use crate::prompt::Templates;
use crate::todo::{MAX_BLOCKER_CHARS, MAX_PHASE_CHARS, MAX_TASK_CHARS, OpKind};

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
    /// `block` instead of `reason`: the exact text of the task it waits for; finishing that task unblocks it.
    #[schemars(length(max = MAX_TASK_CHARS))]
    after: Option<String>,
    /// `view`: the page of a long list, from 1.
    #[schemars(range(min = 1), transform = without_format)]
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

/// Drops the `format` schemars gives an integer (`uint64`): JSON Schema
/// defines no such format, and Gemini CLI's validator warns about it on
/// every request. The bound stays as `minimum`.
fn without_format(schema: &mut Schema) {
    schema.remove("format");
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

#[cfg(test)]
mod tests {
    use super::*;

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

    /// No schema names a `format`: the ones schemars writes for Rust's
    /// integers (`uint64`) are no JSON Schema format, and hosts that
    /// validate the schemas warn about them.
    #[test]
    fn no_schema_names_a_format() {
        for spec in ToolSpec::all(&Templates::builtin()).unwrap() {
            let text = spec.input_schema.to_string();
            assert!(!text.contains("\"format\""), "{}: {text}", spec.name);
        }
        let page = &input_schema::<TodoArguments>()["properties"]["page"];
        assert_eq!(page["minimum"], 1, "{page}");
        assert_eq!(page["type"], json!(["integer", "null"]), "{page}");
    }

    #[test]
    fn the_todo_schema_names_every_field_the_engine_accepts() {
        let schema = input_schema::<TodoArguments>();
        let fields: Vec<&String> = schema["properties"].as_object().unwrap().keys().collect();
        assert_eq!(fields, crate::todo::CALL_FIELDS);
        let phase = &schema["properties"]["list"]["items"];
        assert_eq!(phase["required"], json!(["phase", "items"]));
    }
}
