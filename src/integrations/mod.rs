//! Adapters that wire goalkeeper into real agents. [`agent_tools`] defines
//! the `todo` and `goal` tools once as a host advertises them (name,
//! description, schema) and runs a call that arrives as JSON ([`execute`]);
//! [`mcp`] serves them over the Model Context Protocol. A host's hook
//! events are handled by its adapter ([`claude_code`], [`gemini_cli`],
//! [`codex`], [`pi`]: its event names and its wire JSON) on the core they
//! share (`hook_event`: one transaction per event, the steps every host
//! takes alike); [`host_session`] names the hosts and the session each
//! last ran in a directory, [`statusline`] renders Claude Code's status
//! line, and [`install`] wires all of it into a project.

mod agent_tools;
pub mod claude_code;
pub mod codex;
pub mod gemini_cli;
mod hook_event;
#[cfg(test)]
mod hook_fixture;
pub mod host_session;
pub mod install;
#[cfg(feature = "mcp")]
pub mod mcp;
pub mod package;
pub mod pi;
pub mod statusline;
pub mod usage_log;

pub use agent_tools::TOOL_NAMES;
pub use hook_event::HookReply;
