//! The goal-mode context (DESIGN.md §3.4): the goal prompt and the bounded
//! `<todo_context>` block, rendered from the session's stored state.

use crate::error::Result;
use crate::prompt::{Gate, HiddenMessage, Injector};
use crate::store::{Caller, SessionTx};

/// The goal-mode context, or the gate that keeps it out. It only reads.
pub fn goal_mode_context(
    tx: &SessionTx<'_>,
    caller: &Caller,
    injector: &Injector,
    active_tools: &[String],
    now_ms: i64,
) -> Result<std::result::Result<HiddenMessage, Gate>> {
    // Of a long list, only what the bounded block shows (as `context`).
    let list = tx.todo_listed(injector.max_tasks())?;
    let goal = tx.goal()?;
    // Where the checks stand matters only while the goal is active.
    let proof = match &goal {
        Some(g) if g.status == crate::goal::GoalStatus::Active => tx.checks(caller)?.proof(),
        _ => crate::check::Proof::default(),
    };
    injector.goal_mode_context_checked(goal.as_ref(), &list, active_tools, &proof, now_ms)
}
