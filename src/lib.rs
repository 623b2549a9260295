#![doc = include_str!("../README.md")]
#![warn(missing_docs)]
// Parts of the store and the engine serve only some commands (`watch`, the
// MCP server, the hooks); a build without those features compiles them
// unused.
#![cfg_attr(
    not(all(feature = "cli", feature = "mcp", feature = "watch")),
    allow(dead_code, unused_imports)
)]

mod actor;
mod call;
pub mod check;
#[cfg(feature = "cli")]
pub mod cli;
mod error;
pub mod goal;
// The host adapters, their installers and the user-file editing they use
// are the command line's (the `hook`, `install` and `mcp` commands).
#[cfg(feature = "cli")]
mod integrations;
pub mod prompt;
mod resources;
pub mod sanitize;
mod session;
pub mod settings;
pub mod store;
mod time;
pub mod todo;
mod tool_result;
pub mod tree;
pub mod turn;
#[cfg(feature = "cli")]
mod user_files;
pub mod verify;

pub use actor::Actor;
pub use error::{Error, ErrorKind, Result};
pub use session::{AgentName, SessionId};
pub use settings::Settings;
pub use store::Store;
pub(crate) use tool_result::ToolResult;
