//! Adapters that wire goalkeeper into real agents. [`agent_tools`] defines
//! the `todo` and `goal` tools once as a host advertises them (name,
//! description, schema) and runs a call that arrives as JSON ([`execute`]);
//! [`mcp`] serves them over the Model Context Protocol. [`host_session::Host`]
//! is the one list of hosts, with each host's names and variables, and
//! the session each last ran in a directory. Each host's adapter
//! ([`adapter::Adapter`]: [`claude_code`], [`gemini_cli`], [`codex`],
//! [`pi`]) owns its hook events (its event names and wire JSON, on the core
//! they share, `hook_event`: one transaction per event, the steps every
//! host takes alike) and its installer (on the shared steps of
//! [`install`]); [`package`] writes each host's package from them;
//! [`statusline`] renders Claude Code's status line.

pub mod adapter;
mod agent_tools;
pub mod claude_code;
pub mod codex;
pub mod command_line;
mod dispatch;
pub mod gemini_cli;
mod hook_event;
#[cfg(test)]
mod hook_fixture;
pub mod host_process;
pub mod host_session;
pub mod install;
#[cfg(feature = "mcp")]
pub mod mcp;
pub mod open_session;
pub mod package;
pub mod pi;
pub(crate) mod shell_record;
pub mod statusline;
pub mod usage_log;

pub use agent_tools::TOOL_NAMES;
pub use hook_event::HookReply;
