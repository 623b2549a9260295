//! The continuation as the agent stops (DESIGN.md §3.4, §5): decided by
//! the pure [`decide`] from the stored state, its changes written on the
//! transaction, its message rendered.

use serde_json::json;

use crate::actor::Actor;
use crate::error::Result;
use crate::goal::continuation::{Quiet, Send, State, decide};
use crate::prompt::{Gate, HiddenMessage, Injector};
use crate::store::{Caller, SessionTx};

/// What a continuation produced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Continuation {
    /// A message to inject: the continuation, or the budget-limit wrap-up.
    Message(HiddenMessage),
    /// The runaway guard paused the goal; the text says why.
    Paused(String),
    /// Nothing to send, and why.
    Closed(Gate),
}

/// The next continuation: decided by [`decide`] from the stored goal, list
/// version and runaway-guard state, its changes written on `tx` (the
/// wrap-up marked delivered, the guard's count, a paused goal with its
/// event, actor [`Actor::Goalkeeper`]), and its message rendered by
/// `injector`.
pub fn continuation(
    tx: &SessionTx<'_>,
    caller: &Caller,
    injector: &Injector,
    active_tools: &[String],
    now_ms: i64,
) -> Result<Continuation> {
    let (list, version) = tx.todo_list()?;
    let goal = tx.goal()?;
    let (idle, last_mark) = tx.idle_state()?;
    let checks_mark = tx.checks_mark()?;
    let settings = &injector.settings().goal;
    let decision = decide(&State {
        goal: goal.as_ref(),
        todo_version: version,
        idle,
        last_mark: last_mark.as_deref(),
        enabled: settings.enabled,
        max_idle: settings.continuation.max_idle,
        now_ms,
        all_blocked: list.every_open_task_blocked(),
        checks_mark: &checks_mark,
    });
    if let Some(changed) = &decision.goal {
        tx.save_goal(changed)?;
    }
    if let Some((idle, mark)) = &decision.idle {
        tx.set_idle_state(*idle, mark.as_deref())?;
    }
    let rendered = match decision.send {
        Send::Nothing(Quiet::NoGoal) => Continuation::Closed(Gate::NoGoal),
        Send::Nothing(Quiet::Disabled) => Continuation::Closed(Gate::GoalDisabled),
        Send::Nothing(Quiet::NotActive) => Continuation::Closed(Gate::GoalNotActive),
        Send::Nothing(Quiet::AllBlocked) => Continuation::Closed(Gate::AllBlocked),
        Send::BudgetLimit => {
            let goal = decision.goal.as_ref().expect("the wrap-up names its goal");
            Continuation::Message(injector.budget_limit(goal, now_ms)?)
        }
        Send::Paused { idle } => {
            let goal = decision.goal.as_ref().expect("the guard names its goal");
            tx.log_goal_event(
                Actor::Goalkeeper,
                "pause",
                &json!({"op": "pause", "reason": "runaway guard", "idle_continuations": idle, "goal": goal.id}),
                now_ms,
            )?;
            Continuation::Paused(injector.guard_paused(goal.id, idle))
        }
        Send::Continuation => {
            // Where the checks stand, on the files the caller judges in
            // (read only when there is a check).
            let proof = tx.checks(caller)?.proof();
            match injector.continuation_checked(
                goal.as_ref(),
                &list,
                active_tools,
                &proof,
                now_ms,
            )? {
                Ok(message) => Continuation::Message(message),
                Err(gate) => Continuation::Closed(gate),
            }
        }
    };
    Ok(rendered)
}
