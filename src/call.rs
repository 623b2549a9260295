//! One tool call as it arrives, the same shape for the `todo` and the
//! `goal` tool: raw JSON text (a CLI argument or stdin), an already-decoded
//! JSON value (MCP), or a typed op (the user subcommands and the library).
//! `todo::Call` and `goal::Call` name it for their op type.

use std::fmt;

use serde_json::Value;

/// One call of a tool whose typed ops are `O`.
pub enum Call<'a, O> {
    /// JSON text (a todo call may be at most `todo::MAX_CALL_BYTES`).
    Json(&'a str),
    /// A decoded JSON value.
    Value(&'a Value),
    /// A typed op.
    Op(&'a O),
}

/// A typed op as the JSON call that would send it.
pub trait OpJson {
    /// The op as a JSON call object.
    fn to_json(&self) -> Value;
}

impl<O: OpJson> Call<'_, O> {
    /// The call as it arrived, as text: what the event log records when
    /// the call is rejected.
    pub fn raw_payload(&self) -> String {
        match self {
            Call::Json(text) => (*text).to_owned(),
            Call::Value(value) => value.to_string(),
            Call::Op(op) => op.to_json().to_string(),
        }
    }
}

// By hand: a call is a reference, so it is `Copy` whatever `O` is.
impl<O> Clone for Call<'_, O> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<O> Copy for Call<'_, O> {}

impl<O: fmt::Debug> fmt::Debug for Call<'_, O> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Call::Json(text) => f.debug_tuple("Json").field(text).finish(),
            Call::Value(value) => f.debug_tuple("Value").field(value).finish(),
            Call::Op(op) => f.debug_tuple("Op").field(op).finish(),
        }
    }
}
