//! Who makes a change: the agent through a tool, a person at the CLI, or
//! goalkeeper itself.
//! Shared by the todo list and the goal, so neither depends on the other
//! for it.

use std::fmt;

use serde::{Deserialize, Serialize};

/// Who made a change. Some rules differ by actor (the settle-gaming guard).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Actor {
    /// A model, through the `todo` tool.
    Agent,
    /// A person at the CLI, or a markdown import.
    User,
    /// goalkeeper itself: the runaway guard pausing a goal. It never runs
    /// todo ops; the todo rules treat it as the agent.
    Goalkeeper,
}

impl Actor {
    /// `agent`, `user` or `goalkeeper`: the event log's `actor`.
    pub fn as_str(self) -> &'static str {
        match self {
            Actor::Agent => "agent",
            Actor::User => "user",
            Actor::Goalkeeper => "goalkeeper",
        }
    }
}

impl fmt::Display for Actor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
