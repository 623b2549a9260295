//! Goal mode: the goal, its lifecycle and budget accounting, and the agent's
//! `goal` tool. Everything here is pure; the store persists it.

pub mod continuation;
mod lifecycle;
mod model;
mod run;
mod tool;

pub use lifecycle::{GoalOp, MAX_TOKENS, Transition, Usage, apply, describe, objective};
pub use model::{
    BudgetNotice, Goal, GoalStatus, MAX_OBJECTIVE_CHARS, format_duration, format_tokens,
};
pub use run::{Call, Outcome, run};
pub use tool::{AGENT_OPS, GoalDetails, GoalResult, GoalView, parse_goal_call};

/// The name agents call the goal tool by.
pub const TOOL_NAME: &str = "goal";
