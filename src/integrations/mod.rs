//! Adapters that wire goalkeeper into real agents. [`tools`] defines the
//! `todo` and `goal` tools once (name, description, schema, [`execute`]);
//! [`mcp`] serves them over the Model Context Protocol.

pub mod mcp;
mod tools;

pub use tools::{ExecResult, GOAL, TODO, TOOL_NAMES, ToolSpec, execute, unknown_tool};
