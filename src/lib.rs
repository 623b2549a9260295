#![doc = include_str!("../README.md")]
#![warn(missing_docs)]
// A build without some features (CI builds the library with none) compiles
// items that only those features' code uses. Each such item says which
// feature that is, `#[cfg_attr(not(feature = "cli"), expect(dead_code))]`:
// the expectation warns once the item is used without it, and code that
// no build uses is reported as dead in every build.

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
mod shell;
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
#[cfg_attr(not(feature = "cli"), expect(unused_imports))]
pub(crate) use tool_result::ToolResult;
