//! Adapters that wire goalkeeper into real agents. [`tools`] defines the
//! `todo` and `goal` tools once (name, description, schema, [`execute`]);
//! [`mcp`] serves them over the Model Context Protocol; [`claude_code`]
//! handles Claude Code's hook events, [`gemini_cli`] Gemini CLI's, [`statusline`] renders its status
//! line, and [`install`] wires all of it into a project.

pub mod claude_code;
pub mod gemini_cli;
pub mod install;
#[cfg(feature = "mcp")]
pub mod mcp;
pub mod statusline;
mod tools;

pub use tools::{ExecResult, GOAL, TODO, TOOL_NAMES, ToolSpec, execute, unknown_tool};
