//! What goalkeeper decides at each point of an agent's turn, on the one
//! [`SessionTx`](crate::store::SessionTx) of the hook event, command or
//! MCP call (DESIGN.md §7): the memory file's one-time delivery
//! ([`memory`]), the goal-mode context ([`goal_mode_context`]), the
//! reminders added as the user's prompt arrives ([`on_prompt`]), and what
//! happens as the agent stops ([`continuation`], [`on_stop`]).
//!
//! This layer sits above `store` and `prompt`. Each step reads the
//! session's state through the transaction it is given, calls the pure
//! decision (`goal::continuation::decide`), writes what it changed
//! through the same transaction and renders the messages with the
//! [`Injector`](crate::prompt::Injector). It never begins or commits: the
//! caller runs its steps through one of the store's doors
//! ([`Store::write`](crate::Store::write), or [`Store::read`](crate::Store::read)
//! for steps that only read), which commits once. The store only reads and
//! writes rows; the injector only renders.

mod context;
mod continuation;
mod memory;
mod stop;
mod user_prompt;

pub use context::goal_mode_context;
pub use continuation::{Continuation, continuation};
pub use memory::memory;
#[cfg_attr(not(feature = "cli"), expect(unused_imports))]
pub(crate) use memory::memory_due;
pub use stop::{StopOutcome, on_stop};
pub use user_prompt::{PromptAdditions, on_agent_prompt, on_prompt};
