//! The agent's `goal` tool: parsing its JSON call and the result shape
//! (the same as the todo tool's: text, details, is_error).

use serde::Serialize;
use serde_json::Value;

use super::lifecycle::{GoalOp, objective};
use super::model::{Goal, GoalStatus};
use crate::tool_result::ToolResult;

/// The ops an agent may send, in the order the tool documents them (the
/// tool schema's `op` enum is built from this list).
pub(crate) const AGENT_OPS: [&str; 4] = ["get", "create", "resume", "complete"];

/// Parses an agent `goal` call: `{"op": "get" | "create" | "resume" |
/// "complete", "objective": "..."}` (`objective` only with `create`). Ops
/// reserved to the user are parsed so the refusal can say why.
pub(crate) fn parse_goal_call(value: &Value) -> Result<GoalOp, Vec<String>> {
    if let Some(field) = crate::call::nul_field(value) {
        return Err(vec![crate::call::nul_refusal(&field)]);
    }
    let Some(object) = value.as_object() else {
        return Err(vec![format!(
            "the call must be a JSON object such as {{\"op\": \"get\"}}"
        )]);
    };
    let mut errors = Vec::new();
    for key in object.keys() {
        if key != "op" && key != "objective" {
            let hint = if key.contains("budget") {
                " (only the user can set a budget)"
            } else {
                ""
            };
            errors.push(format!(
                "unknown field `{key}`{hint}; the accepted fields are op, objective"
            ));
        }
    }
    let op = match object.get("op").filter(|v| !v.is_null()) {
        None => {
            errors.push(format!(
                "field `op` is missing; use one of {}",
                AGENT_OPS.join(", ")
            ));
            None
        }
        Some(Value::String(name)) => Some(name.trim().to_owned()),
        Some(_) => {
            errors.push(format!(
                "field `op` must be a string, one of {}",
                AGENT_OPS.join(", ")
            ));
            None
        }
    };
    let given_objective = object.get("objective").filter(|v| !v.is_null());
    let text = match given_objective {
        None => None,
        Some(Value::String(text)) => match objective(text) {
            Ok(text) => Some(text),
            Err(e) => {
                errors.push(format!("field `objective`: {e}"));
                None
            }
        },
        Some(_) => {
            errors.push("field `objective` must be a string".into());
            None
        }
    };
    let Some(op) = op else {
        return Err(errors);
    };
    let parsed = goal_op(&op, text, given_objective.is_some(), &mut errors);
    if given_objective.is_some() && op != "create" {
        errors.push(format!(
            "field `objective` does not apply to `{op}`; only `create` takes it"
        ));
    }
    match parsed {
        Some(op) if errors.is_empty() => Ok(op),
        _ => Err(errors),
    }
}

/// The op an agent's call names by `op`, with the checked `objective`
/// (`given`: an objective was sent, valid or not); `None` with the reason
/// in `errors` for a user's op or an unknown one.
fn goal_op(
    op: &str,
    objective: Option<String>,
    given: bool,
    errors: &mut Vec<String>,
) -> Option<GoalOp> {
    match op {
        "get" => Some(GoalOp::Get),
        "resume" => Some(GoalOp::Resume),
        "complete" => Some(GoalOp::Complete),
        "pause" => Some(GoalOp::Pause),
        "drop" => Some(GoalOp::Drop),
        "create" => match objective {
            Some(objective) => Some(GoalOp::Create {
                objective,
                budget: None,
                checks: Vec::new(),
            }),
            None => {
                if !given {
                    errors.push("`create` needs `objective`: what the goal should achieve".into());
                }
                None
            }
        },
        "set" => {
            errors.push(
                "only the user can replace the goal; use `create` when no goal is live".into(),
            );
            None
        }
        "budget" => {
            errors.push("only the user can change the token budget".into());
            None
        }
        other => {
            errors.push(format!(
                "unknown op `{other}`; use one of {}",
                AGENT_OPS.join(", ")
            ));
            None
        }
    }
}

/// The public shape of a goal in results and `--json` output.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct GoalView {
    /// The goal id.
    pub id: i64,
    /// The objective.
    pub objective: String,
    /// Its status.
    pub status: GoalStatus,
    /// The token budget, if any.
    pub token_budget: Option<u64>,
    /// Tokens counted so far.
    pub tokens_used: u64,
    /// Tokens left under the budget.
    pub tokens_left: Option<u64>,
    /// Whole seconds spent active.
    pub time_used_seconds: i64,
    /// Creation time, milliseconds since the epoch.
    pub created_at: i64,
    /// Last change, milliseconds since the epoch.
    pub updated_at: i64,
}

impl GoalView {
    /// The view of `goal` at `now_ms` (the running clock included).
    pub fn new(goal: &Goal, now_ms: i64) -> GoalView {
        GoalView {
            id: goal.id,
            objective: goal.objective.clone(),
            status: goal.status,
            token_budget: goal.token_budget,
            tokens_used: goal.tokens_used,
            tokens_left: goal.tokens_left(),
            time_used_seconds: goal.time_used_seconds(now_ms),
            created_at: goal.created_at_ms,
            updated_at: goal.updated_at_ms,
        }
    }
}

/// The structured part of a goal result.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct GoalDetails {
    /// The op that ran or was attempted, when readable.
    pub op: Option<String>,
    /// The current goal after the call (before it, on error).
    pub goal: Option<GoalView>,
}

/// The result of one goal call.
pub(crate) type GoalResult = ToolResult<GoalDetails>;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_four_agent_ops_parse() {
        assert_eq!(parse_goal_call(&json!({"op": "get"})), Ok(GoalOp::Get));
        assert_eq!(
            parse_goal_call(&json!({"op": "resume"})),
            Ok(GoalOp::Resume)
        );
        assert_eq!(
            parse_goal_call(&json!({"op": "complete"})),
            Ok(GoalOp::Complete)
        );
        assert_eq!(
            parse_goal_call(&json!({"op": "create", "objective": "  Ship it "})),
            Ok(GoalOp::Create {
                objective: "Ship it".into(),
                budget: None,
                checks: Vec::new()
            })
        );
    }

    #[test]
    fn user_only_ops_and_budgets_are_refused_with_the_reason() {
        assert_eq!(
            parse_goal_call(&json!({"op": "set", "objective": "x"})).unwrap_err(),
            [
                "only the user can replace the goal; use `create` when no goal is live",
                "field `objective` does not apply to `set`; only `create` takes it"
            ]
        );
        assert_eq!(
            parse_goal_call(&json!({"op": "create", "objective": "x", "token_budget": 5}))
                .unwrap_err(),
            [
                "unknown field `token_budget` (only the user can set a budget); the accepted fields are op, objective"
            ]
        );
    }

    #[test]
    fn malformed_calls_name_the_problem() {
        assert_eq!(
            parse_goal_call(&json!([])).unwrap_err(),
            ["the call must be a JSON object such as {\"op\": \"get\"}"]
        );
        assert_eq!(
            parse_goal_call(&json!({"op": "finish"})).unwrap_err(),
            ["unknown op `finish`; use one of get, create, resume, complete"]
        );
        assert_eq!(
            parse_goal_call(&json!({"op": "create"})).unwrap_err(),
            ["`create` needs `objective`: what the goal should achieve"]
        );
        assert_eq!(
            parse_goal_call(&json!({"op": "create", "objective": " "})).unwrap_err(),
            ["field `objective`: the objective is empty; say what the goal should achieve"]
        );
        assert_eq!(
            parse_goal_call(&json!({})).unwrap_err(),
            ["field `op` is missing; use one of get, create, resume, complete"]
        );
    }
}
