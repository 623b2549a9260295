//! Adapters that wire goalkeeper into real agents. [`agent_tools`] defines
//! the `todo` and `goal` tools once as a host advertises them (name,
//! description, schema) and runs a call that arrives as JSON ([`execute`]);
//! [`mcp`] serves them over the Model Context Protocol; [`claude_code`]
//! handles Claude Code's hook events, [`gemini_cli`] Gemini CLI's, [`statusline`] renders its status
//! line, and [`install`] wires all of it into a project.

mod agent_tools;
pub mod claude_code;
pub mod codex;
pub mod gemini_cli;
mod hook_event;
pub mod host_session;
pub mod install;
#[cfg(feature = "mcp")]
pub mod mcp;
pub mod pi;
pub mod statusline;
pub mod usage_log;

pub use agent_tools::{ExecResult, GOAL, TODO, TOOL_NAMES, ToolSpec, execute, unknown_tool};
