//! One `goal` call, start to finish, as a pure step mirroring `todo::run`:
//! the call is parsed (an agent's JSON, or a typed op), applied to the
//! current goal by [`apply`](super::apply), and the outcome knows its
//! result text, its details and the event payload. The store reads the
//! current goal, calls [`run`], and writes what the outcome says.

use serde_json::{Value, json};

use super::lifecycle::{GoalOp, Transition, apply};
use super::model::Goal;
use super::tool::{GoalDetails, GoalResult, GoalView, parse_goal_call};
use crate::actor::Actor;
use crate::call::OpJson;
use crate::tool_result::ToolResult;

/// One `goal` call as it arrives (the shape both tools share, see
/// [`crate::call`]).
pub type Call<'a> = crate::call::Call<'a, GoalOp>;

impl OpJson for GoalOp {
    fn to_json(&self) -> Value {
        payload(self, None)
    }
}

/// What running one call against the current goal produced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// The op, when the call parsed.
    pub op: Option<GoalOp>,
    /// The goal before the call.
    pub current: Option<Goal>,
    /// The transition, when the op was allowed.
    pub transition: Option<Transition>,
    /// Every problem; empty on success.
    pub errors: Vec<String>,
    /// The clock of the call, for the goal's view.
    pub now_ms: i64,
}

impl Outcome {
    /// The transition when the call succeeded and something must be
    /// written.
    pub fn change(&self) -> Option<&Transition> {
        self.transition.as_ref().filter(|t| t.changed)
    }

    /// The event payload of a change: the op with its arguments and the
    /// goal's id (`{"op": "set", "objective": …, "budget": …, "goal": 3}`).
    pub(crate) fn payload(&self) -> Option<Value> {
        let (op, transition) = (self.op.as_ref()?, self.change()?);
        let mut payload = payload(op, transition.goal.as_ref());
        if !transition.unverified.is_empty() {
            payload["unverified"] = transition.unverified.clone().into();
        }
        Some(payload)
    }

    /// The tool result: the transition's message and the goal after it, or
    /// `Errors: …` and the goal as it was.
    pub fn to_result(&self) -> GoalResult {
        let view = |goal: Option<&Goal>| goal.map(|g| GoalView::new(g, self.now_ms));
        let op = self.op.as_ref().map(|op| op.name().to_owned());
        match &self.transition {
            Some(transition) => ToolResult::new(
                transition.message.clone(),
                GoalDetails {
                    op,
                    goal: view(transition.goal.as_ref()),
                },
                false,
            ),
            None => ToolResult::new(
                // Field and op names echo the caller's text: one safe
                // line, as the todo tool's errors (DESIGN.md §3.2).
                format!(
                    "Errors: {}",
                    crate::sanitize::one_line(&self.errors.join("; "))
                ),
                GoalDetails {
                    op,
                    goal: view(self.current.as_ref()),
                },
                true,
            ),
        }
    }
}

/// Parses `call` and applies it for `actor` to the session's `current`
/// goal. A goal that the call starts gets the id `next_id` returns, called
/// only then; where the goal's checks stand comes from `proof`, called
/// only when the op reads them (see [`apply`]). Pure but for those: the
/// caller stores the outcome; the error is theirs.
pub fn run<E>(
    current: Option<&Goal>,
    call: Call<'_>,
    actor: Actor,
    now_ms: i64,
    next_id: impl FnOnce() -> std::result::Result<i64, E>,
    proof: impl FnOnce(&Goal) -> std::result::Result<crate::check::Proof, E>,
) -> std::result::Result<Outcome, E> {
    let parsed = match call {
        Call::Op(op) => Ok(op.clone()),
        Call::Value(value) => parse_goal_call(value),
        Call::Json(text) => match serde_json::from_str::<Value>(text) {
            Ok(value) => parse_goal_call(&value),
            Err(e) => Err(vec![format!(
                "the call is not valid JSON ({e}); send one object such as {{\"op\": \"get\"}}"
            )]),
        },
    };
    let (op, transition, errors) = match parsed {
        Ok(op) => match apply(current, &op, actor, now_ms, next_id, proof)? {
            Ok(transition) => (Some(op), Some(transition), Vec::new()),
            Err(error) => (Some(op), None, vec![error]),
        },
        Err(errors) => (None, None, errors),
    };
    Ok(Outcome {
        op,
        current: current.cloned(),
        transition,
        errors,
        now_ms,
    })
}

fn payload(op: &GoalOp, goal: Option<&Goal>) -> Value {
    let mut payload = json!({"op": op.name()});
    match op {
        GoalOp::Set {
            objective,
            budget,
            checks,
        }
        | GoalOp::Create {
            objective,
            budget,
            checks,
        } => {
            payload["objective"] = objective.as_str().into();
            payload["budget"] = json!(budget);
            if !checks.is_empty() {
                payload["checks"] = json!(checks);
            }
        }
        GoalOp::CheckAdd(command) => payload["command"] = command.as_str().into(),
        GoalOp::CheckRm(n) => payload["number"] = (*n).into(),
        GoalOp::Budget(budget) => payload["budget"] = json!(budget),
        GoalOp::Usage(usage) => payload["usage"] = json!(usage),
        _ => {}
    }
    if let Some(goal) = goal {
        payload["goal"] = goal.id.into();
    }
    payload
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::goal::GoalStatus;

    /// An id source that gives `id`.
    fn id(id: i64) -> impl FnOnce() -> Result<i64, std::convert::Infallible> {
        move || Ok(id)
    }

    /// No check stands anywhere.
    fn unproven(_: &Goal) -> Result<crate::check::Proof, std::convert::Infallible> {
        Ok(crate::check::Proof::default())
    }

    #[test]
    fn a_set_starts_a_goal_with_the_next_id_and_says_what_to_log() {
        let op = GoalOp::Set {
            objective: "Ship".into(),
            budget: Some(100),
            checks: Vec::new(),
        };
        let outcome = run(None, Call::Op(&op), Actor::User, 5, id(9), unproven).unwrap();
        let goal = outcome.change().unwrap().goal.as_ref().unwrap();
        assert_eq!((goal.id, goal.status), (9, GoalStatus::Active));
        assert_eq!(
            outcome.payload().unwrap(),
            json!({"op": "set", "objective": "Ship", "budget": 100, "goal": 9})
        );
        let result = outcome.to_result();
        assert!(!result.is_error);
        assert_eq!(result.details.op.as_deref(), Some("set"));
        assert_eq!(result.details.goal.unwrap().id, 9);
    }

    #[test]
    fn a_get_changes_nothing_and_logs_nothing() {
        let goal = Goal::new(3, "Ship".into(), None, 0);
        let outcome = run(
            Some(&goal),
            Call::Json(r#"{"op":"get"}"#),
            Actor::Agent,
            5,
            id(4),
            unproven,
        )
        .unwrap();
        assert!(outcome.errors.is_empty());
        assert_eq!(outcome.change(), None);
        assert_eq!(outcome.payload(), None);
        assert_eq!(outcome.to_result().details.goal.unwrap().id, 3);
    }

    #[test]
    fn a_refusal_keeps_the_goal_and_reports_every_error_on_one_line() {
        let goal = Goal::new(3, "Ship".into(), None, 0);
        let call = serde_json::json!({"op": "pause"});
        let outcome = run(
            Some(&goal),
            Call::Value(&call),
            Actor::Agent,
            5,
            id(4),
            unproven,
        )
        .unwrap();
        assert_eq!(outcome.op, Some(GoalOp::Pause));
        assert_eq!(outcome.transition, None);
        let result = outcome.to_result();
        assert!(result.is_error);
        assert!(
            result.text().starts_with("Errors: only the user can pause"),
            "{}",
            result.text()
        );
        assert_eq!(result.details.goal.unwrap().id, 3);

        let outcome = run(None, Call::Json("{"), Actor::Agent, 5, id(4), unproven).unwrap();
        assert_eq!(outcome.op, None);
        assert!(
            outcome
                .to_result()
                .text()
                .starts_with("Errors: the call is not valid JSON")
        );
    }

    #[test]
    fn a_typed_op_is_logged_as_its_json_call() {
        let op = GoalOp::Budget(Some(7));
        assert_eq!(Call::Op(&op).raw_payload(), r#"{"op":"budget","budget":7}"#);
    }
}
