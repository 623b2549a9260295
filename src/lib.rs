#![doc = include_str!("../README.md")]
#![warn(missing_docs)]

mod actor;
mod call;
#[cfg(feature = "cli")]
pub mod cli;
mod error;
pub mod goal;
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
pub mod turn;
mod user_files;

pub use actor::Actor;
pub use error::{Error, ErrorKind, Result};
pub use session::SessionId;
pub use settings::Settings;
pub use store::Store;
pub use tool_result::{TextContent, ToolResult};
