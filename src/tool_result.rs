//! The result shape shared by the `todo` and `goal` tools (DESIGN.md §2.4): a text
//! summary for the model, structured details for hosts, and an error flag.

use serde::Serialize;

/// One text block of a tool result.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TextContent {
    /// Always `"text"`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// The text.
    pub text: String,
}

/// What a tool call returns: `{"content": [{"type": "text", "text": ...}],
/// "details": ..., "is_error": ...}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ToolResult<D> {
    /// The summary, as one text block.
    pub content: Vec<TextContent>,
    /// Structured details for hosts (the `structuredContent` of MCP).
    pub details: D,
    /// True when the call was rejected; nothing changed then.
    pub is_error: bool,
}

impl<D> ToolResult<D> {
    /// A result with one text block.
    pub fn new(text: String, details: D, is_error: bool) -> ToolResult<D> {
        ToolResult {
            content: vec![TextContent { kind: "text", text }],
            details,
            is_error,
        }
    }

    /// The summary text.
    pub fn text(&self) -> &str {
        self.content.first().map_or("", |c| c.text.as_str())
    }
}
