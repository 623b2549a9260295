//! Goal mode: the goal, its lifecycle and budget accounting, and the agent's
//! `goal` tool. Everything here is pure; the store persists it.

pub mod continuation;
mod lifecycle;
mod model;
mod run;
mod tool;

pub use lifecycle::{GoalOp, Usage, apply, describe, objective};

pub(crate) use lifecycle::MAX_TOKENS;
pub(crate) use model::{BudgetNotice, format_duration};
pub use model::{Goal, GoalStatus};
#[cfg_attr(not(feature = "cli"), expect(unused_imports))]
pub(crate) use model::{MAX_OBJECTIVE_CHARS, format_tokens};
pub use run::{Call, Outcome, run};
pub(crate) use tool::GoalResult;
#[cfg_attr(not(feature = "cli"), expect(unused_imports))]
pub(crate) use tool::{AGENT_OPS, GoalView};

/// The name agents call the goal tool by.
pub(crate) const TOOL_NAME: &str = "goal";
