//! Prompt text: the templates, sanitizing, the `<todo_context>` block and
//! its gates, and the hidden messages goalkeeper injects.

mod message;
pub mod sanitize;
mod templates;
mod todo_context;

pub use message::{Form, HiddenMessage, MessageKind, Source};
pub use templates::{BUILTIN, Templates};
pub use todo_context::{ContextOptions, Gate, todo_context};
