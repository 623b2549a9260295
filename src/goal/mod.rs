//! Goal mode: the goal, its lifecycle and budget accounting, and the agent's
//! `goal` tool. Everything here is pure; the store persists it.

pub mod continuation;
mod lifecycle;
mod model;
mod run;
mod tool;

pub use lifecycle::{GoalOp, Usage, apply, describe, objective};

pub(crate) use lifecycle::MAX_TOKENS;
pub(crate) use model::{BudgetNotice, MAX_OBJECTIVE_CHARS, format_duration, format_tokens};
pub use model::{Goal, GoalStatus};
pub use run::{Call, Outcome, run};
pub(crate) use tool::{AGENT_OPS, GoalResult, GoalView};

/// The name agents call the goal tool by.
pub(crate) const TOOL_NAME: &str = "goal";
