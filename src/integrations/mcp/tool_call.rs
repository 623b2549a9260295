//! One agent tool call (`todo` or `goal`) run on the store, as the MCP
//! server runs each `tools/call`: the tool's name picks the engine, the
//! arguments go to it as they came, and the result comes back with its
//! details typed ([`Executed`]) or as JSON ([`ExecResult`]).

use serde_json::{Value, json};

use crate::Store;
use crate::error::Result;
use crate::goal::GoalResult;
use crate::integrations::agent_tools::{GOAL, TODO, TOOL_NAMES};
use crate::store::{Caller, GoalCall, SessionRef, TodoAnswer};
use crate::todo::{Actor, Call, MAX_CALL_BYTES, TodoResult};
use crate::tool_result::ToolResult;

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
    let caller = &mut Caller::default();
    run(store, caller, session, tool, arguments, now_ms, false).map(Executed::into_json)
}

/// A tool call's result with its details still typed. `execute` turns
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
    /// The result with its details as JSON, as `execute` returns it.
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

/// `execute`, with the details still typed; a `todo` call's `list_free`
/// (its answer without the list, which is cheaper on a long list) when
/// the caller sends only the text and a few facts.
pub(crate) fn run(
    store: &mut Store,
    caller: &mut Caller,
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
                let answer = store.todo_answer(session, call, Actor::Agent, caller, now_ms)?;
                Executed::TodoAnswer(answer)
            } else {
                Executed::Todo(store.todo(session, call, Actor::Agent, caller, now_ms)?)
            })
        }
        GOAL => Ok(Executed::Goal(store.write(session, |tx| {
            tx.goal_call(GoalCall::Value(arguments), Actor::Agent, caller, now_ms)
        })?)),
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
