//! Prompt text: the templates, the `<todo_context>` block and
//! its gates, and the hidden messages goalkeeper injects.

mod injector;
mod message;
mod subset;
mod templates;
mod todo_context;

pub use injector::Injector;
pub(crate) use message::{HiddenMessage, MessageKind};
pub use templates::{BUILTIN, Templates, ToolNames};
pub use todo_context::{ContextOptions, Gate, todo_context};
