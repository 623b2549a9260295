//! The scripted model ([`crate::mock`]) as Claude Code reaches it, through
//! the Anthropic Messages API: steps that call goalkeeper's tools by
//! Claude Code's names, usage as the Messages API reports it, and what a
//! request carries as the model reads it.

use serde_json::Value;

pub use crate::mock::{Api, MockModel, Request, Step};

impl Step {
    /// A call to goalkeeper's `todo` tool as Claude Code names it.
    pub fn todo(input: Value) -> Step {
        Step::tool("mcp__goalkeeper__todo", input)
    }

    /// A call to goalkeeper's `goal` tool as Claude Code names it.
    pub fn goal(input: Value) -> Step {
        Step::tool("mcp__goalkeeper__goal", input)
    }

    /// A call to Claude Code's shell tool, `Bash`, running `command`.
    pub fn bash(command: &str) -> Step {
        Step::tool(
            "Bash",
            serde_json::json!({"command": command, "description": "Run goalkeeper"}),
        )
    }

    /// The same step with the usage the Messages API reports: the input
    /// without the cache, the output, the cache writes and reads.
    pub fn messages_usage(
        self,
        input: u64,
        output: u64,
        cache_write: u64,
        cache_read: u64,
    ) -> Step {
        self.with(crate::mock::Usage {
            input: input + cache_read,
            cached: cache_read,
            output,
            cache_write,
        })
    }
}

/// The scripted model, answering with `steps` in order.
pub fn queue(steps: Vec<Step>) -> MockModel {
    MockModel::start(Api::Messages, steps)
}

/// The scripted model, answering each request with `script(request)`.
pub fn scripted(script: impl FnMut(&Request) -> Step + Send + 'static) -> MockModel {
    MockModel::scripted(Api::Messages, script)
}

impl Request {
    /// Every text the model received in this request: the system prompt,
    /// then each message's text, tool results included, in order.
    pub fn texts(&self) -> Vec<String> {
        let mut texts = Vec::new();
        collect_texts(&self.body["system"], &mut texts);
        if let Some(messages) = self.body["messages"].as_array() {
            for message in messages {
                collect_texts(&message["content"], &mut texts);
            }
        }
        texts
    }

    /// The whole request as the model read it, one text after another.
    pub fn all_text(&self) -> String {
        self.texts().join("\n")
    }

    /// The texts of the messages after the last assistant message: the
    /// newest turn as the model reads it (the user's prompt or tool
    /// results, with the system messages hooks added).
    pub fn last_message_text(&self) -> String {
        let mut texts = Vec::new();
        let messages = self.body["messages"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let start = messages
            .iter()
            .rposition(|m| m["role"] == "assistant")
            .map_or(0, |i| i + 1);
        for message in &messages[start..] {
            collect_texts(&message["content"], &mut texts);
        }
        texts.join("\n")
    }

    /// The `tool_result` blocks of this request, in order.
    pub fn tool_results(&self) -> Vec<Value> {
        let mut results = Vec::new();
        for message in self.body["messages"].as_array().into_iter().flatten() {
            for block in message["content"].as_array().into_iter().flatten() {
                if block["type"] == "tool_result" {
                    results.push(block.clone());
                }
            }
        }
        results
    }

    /// The names of the tools offered with their full schema.
    pub fn tool_names(&self) -> Vec<String> {
        self.body["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|t| t.get("defer_loading") != Some(&Value::Bool(true)))
            .filter_map(|t| t["name"].as_str().map(str::to_owned))
            .collect()
    }
}

/// The text of a tool result's content (a string or text blocks).
pub fn result_text(result: &Value) -> String {
    let mut texts = Vec::new();
    collect_texts(&result["content"], &mut texts);
    texts.join("\n")
}

fn collect_texts(content: &Value, out: &mut Vec<String>) {
    match content {
        Value::String(text) => out.push(text.clone()),
        Value::Array(blocks) => {
            for block in blocks {
                match block["type"].as_str() {
                    Some("text") => {
                        if let Some(text) = block["text"].as_str() {
                            out.push(text.to_owned());
                        }
                    }
                    Some("tool_result") => collect_texts(&block["content"], out),
                    _ => {}
                }
            }
        }
        _ => {}
    }
}
