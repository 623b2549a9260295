//! A scripted Anthropic Messages API on 127.0.0.1: every request body is
//! logged, and each `POST /v1/messages` is answered by the test's script,
//! streamed (`message_start`, `content_block_*`, `message_delta` with the
//! usage, `message_stop`) when the request asks for it, else as one JSON
//! message. `count_tokens` gets a size estimate; anything else a 404.
//!
//! HTTP/1.1 with `Content-Length` (or chunked) request bodies and
//! keep-alive, which is all the Claude Code CLI uses here. Each reply gets
//! a unique message id, so the usage a test scripts can be summed exactly.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

/// Token usage of one scripted reply.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Usage {
    pub input: u64,
    pub output: u64,
    pub cache_write: u64,
    pub cache_read: u64,
}

impl Usage {
    /// What goalkeeper counts (DESIGN.md §5): input + output + cache writes.
    pub fn counted(&self) -> u64 {
        self.input + self.output + self.cache_write
    }
}

/// One content block of a reply.
#[derive(Clone, Debug)]
pub enum Block {
    Text(String),
    Tool { name: String, input: Value },
}

/// What the model answers to one request.
#[derive(Clone, Debug)]
pub struct Reply {
    pub blocks: Vec<Block>,
    pub usage: Usage,
}

impl Reply {
    /// A reply that ends the turn with `text`.
    pub fn text(text: &str) -> Reply {
        Reply {
            blocks: vec![Block::Text(text.to_owned())],
            usage: Usage {
                input: 100,
                output: 10,
                cache_write: 0,
                cache_read: 0,
            },
        }
    }

    /// A reply that calls `name` with `input`.
    pub fn tool(name: &str, input: Value) -> Reply {
        Reply {
            blocks: vec![Block::Tool {
                name: name.to_owned(),
                input,
            }],
            ..Reply::text("")
        }
    }

    /// A call to goalkeeper's `todo` tool as Claude Code names it.
    pub fn todo(input: Value) -> Reply {
        Reply::tool("mcp__goalkeeper__todo", input)
    }

    /// A call to goalkeeper's `goal` tool as Claude Code names it.
    pub fn goal(input: Value) -> Reply {
        Reply::tool("mcp__goalkeeper__goal", input)
    }

    /// The same reply with this usage.
    pub fn usage(mut self, input: u64, output: u64, cache_write: u64, cache_read: u64) -> Reply {
        self.usage = Usage {
            input,
            output,
            cache_write,
            cache_read,
        };
        self
    }

    fn stop_reason(&self) -> &'static str {
        if self.blocks.iter().any(|b| matches!(b, Block::Tool { .. })) {
            "tool_use"
        } else {
            "end_turn"
        }
    }

    fn content(&self, n: usize) -> Vec<Value> {
        self.blocks
            .iter()
            .enumerate()
            .map(|(k, block)| match block {
                Block::Text(text) => json!({"type": "text", "text": text}),
                Block::Tool { name, input } => {
                    json!({"type": "tool_use", "id": format!("toolu_{n:04}_{k}"), "name": name, "input": input})
                }
            })
            .collect()
    }

    fn usage_json(&self, output: u64) -> Value {
        json!({
            "input_tokens": self.usage.input,
            "output_tokens": output,
            "cache_creation_input_tokens": self.usage.cache_write,
            "cache_read_input_tokens": self.usage.cache_read,
        })
    }

    /// The non-streaming response body.
    fn message(&self, n: usize, model: &str) -> Value {
        json!({
            "id": message_id(n), "type": "message", "role": "assistant", "model": model,
            "content": self.content(n), "stop_reason": self.stop_reason(), "stop_sequence": null,
            "usage": self.usage_json(self.usage.output),
        })
    }

    /// The server-sent events of a streamed response.
    fn events(&self, n: usize, model: &str) -> String {
        let mut events = vec![(
            "message_start",
            json!({"type": "message_start", "message": {
                "id": message_id(n), "type": "message", "role": "assistant", "model": model,
                "content": [], "stop_reason": null, "stop_sequence": null,
                "usage": self.usage_json(1)}}),
        )];
        for (k, block) in self.content(n).into_iter().enumerate() {
            let (start, delta) = match block["type"].as_str() {
                Some("text") => (
                    json!({"type": "text", "text": ""}),
                    json!({"type": "text_delta", "text": block["text"]}),
                ),
                _ => (
                    json!({"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}),
                    json!({"type": "input_json_delta", "partial_json": block["input"].to_string()}),
                ),
            };
            events.push((
                "content_block_start",
                json!({"type": "content_block_start", "index": k, "content_block": start}),
            ));
            events.push((
                "content_block_delta",
                json!({"type": "content_block_delta", "index": k, "delta": delta}),
            ));
            events.push((
                "content_block_stop",
                json!({"type": "content_block_stop", "index": k}),
            ));
        }
        events.push((
            "message_delta",
            json!({"type": "message_delta",
                   "delta": {"stop_reason": self.stop_reason(), "stop_sequence": null},
                   "usage": {"output_tokens": self.usage.output}}),
        ));
        events.push(("message_stop", json!({"type": "message_stop"})));
        events
            .into_iter()
            .map(|(name, data)| format!("event: {name}\ndata: {data}\n\n"))
            .collect()
    }
}

fn message_id(n: usize) -> String {
    format!("msg_scripted_{n:04}")
}

/// One logged request.
#[derive(Clone, Debug)]
pub struct Logged {
    pub method: String,
    pub path: String,
    pub body: Value,
    /// The reply it got (`None` for anything but `POST /v1/messages`).
    pub reply: Option<Reply>,
}

impl Logged {
    /// Whether this is a model request (not `count_tokens`, not a probe).
    pub fn is_message(&self) -> bool {
        self.method == "POST" && self.path.split('?').next() == Some("/v1/messages")
    }

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

type ScriptFn = dyn FnMut(&Logged) -> Reply + Send;

struct State {
    log: Mutex<Vec<Logged>>,
    script: Mutex<Box<ScriptFn>>,
    stop: AtomicBool,
    replies: AtomicUsize,
}

/// The running server; stops when dropped.
pub struct Model {
    addr: SocketAddr,
    state: Arc<State>,
}

impl Model {
    /// Answers model requests with `replies` in order, then with "Done."
    /// for every request after the last.
    pub fn queue(replies: Vec<Reply>) -> Model {
        let mut replies = replies.into_iter();
        Model::scripted(move |_| replies.next().unwrap_or_else(|| Reply::text("Done.")))
    }

    /// Answers each model request with `script(request)`.
    pub fn scripted(script: impl FnMut(&Logged) -> Reply + Send + 'static) -> Model {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
        let addr = listener.local_addr().expect("local address");
        let state = Arc::new(State {
            log: Mutex::new(Vec::new()),
            script: Mutex::new(Box::new(script)),
            stop: AtomicBool::new(false),
            replies: AtomicUsize::new(0),
        });
        let accept_state = Arc::clone(&state);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                if accept_state.stop.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(stream) = stream else { continue };
                let state = Arc::clone(&accept_state);
                std::thread::spawn(move || serve(stream, &state));
            }
        });
        Model { addr, state }
    }

    /// `http://127.0.0.1:PORT`, for `ANTHROPIC_BASE_URL`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Every request so far.
    pub fn log(&self) -> Vec<Logged> {
        self.state.log.lock().unwrap().clone()
    }

    /// The model requests (`POST /v1/messages`) so far.
    pub fn requests(&self) -> Vec<Logged> {
        self.log().into_iter().filter(Logged::is_message).collect()
    }

    /// The usage counted (DESIGN.md §5) over every reply so far.
    pub fn counted_usage(&self) -> u64 {
        self.requests()
            .iter()
            .filter_map(|r| r.reply.as_ref())
            .map(|r| r.usage.counted())
            .sum()
    }
}

impl Drop for Model {
    fn drop(&mut self) {
        self.state.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop so it sees the flag.
        let _ = TcpStream::connect(self.addr);
    }
}

/// Serves one keep-alive connection until the client closes it.
fn serve(stream: TcpStream, state: &State) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(120)));
    let Ok(write_half) = stream.try_clone() else {
        return;
    };
    let mut writer = write_half;
    let mut reader = BufReader::new(stream);
    while let Some((method, path, body)) = read_request(&mut reader) {
        if state.stop.load(Ordering::SeqCst) {
            break;
        }
        let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        let mut logged = Logged {
            method,
            path,
            body,
            reply: None,
        };
        let (status, content_type, text) = if logged.is_message() {
            let reply = (state.script.lock().unwrap())(&logged);
            let n = state.replies.fetch_add(1, Ordering::SeqCst);
            let model = logged.body["model"]
                .as_str()
                .unwrap_or("scripted")
                .to_owned();
            let text = if logged.body["stream"] == true {
                ("text/event-stream", reply.events(n, &model))
            } else {
                ("application/json", reply.message(n, &model).to_string())
            };
            logged.reply = Some(reply);
            (200, text.0, text.1)
        } else if logged.method == "POST"
            && logged.path.split('?').next() == Some("/v1/messages/count_tokens")
        {
            let estimate = logged.body.to_string().len() / 4;
            (
                200,
                "application/json",
                json!({"input_tokens": estimate}).to_string(),
            )
        } else {
            (
                404,
                "application/json",
                json!({"type": "error", "error": {"type": "not_found_error", "message": "not scripted"}})
                    .to_string(),
            )
        };
        state.log.lock().unwrap().push(logged);
        let reason = if status == 200 { "OK" } else { "Not Found" };
        let head = format!(
            "HTTP/1.1 {status} {reason}\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\nrequest-id: req_scripted\r\n\r\n",
            text.len()
        );
        if writer.write_all(head.as_bytes()).is_err()
            || writer.write_all(text.as_bytes()).is_err()
            || writer.flush().is_err()
        {
            break;
        }
    }
    let _ = writer.shutdown(Shutdown::Both);
}

/// Reads one request: method, path and body. `None` at end of stream or on
/// a malformed request.
fn read_request(reader: &mut BufReader<TcpStream>) -> Option<(String, String, Vec<u8>)> {
    let mut line = String::new();
    if reader.read_line(&mut line).ok()? == 0 {
        return None;
    }
    let mut parts = line.split_whitespace();
    let method = parts.next()?.to_owned();
    let path = parts.next()?.to_owned();
    let mut length = 0usize;
    let mut chunked = false;
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header).ok()? == 0 {
            return None;
        }
        let header = header.trim_end();
        if header.is_empty() {
            break;
        }
        let (name, value) = header.split_once(':')?;
        let value = value.trim();
        match name.trim().to_ascii_lowercase().as_str() {
            "content-length" => length = value.parse().ok()?,
            "transfer-encoding" => chunked = value.eq_ignore_ascii_case("chunked"),
            _ => {}
        }
    }
    let mut body = Vec::new();
    if chunked {
        loop {
            let mut size = String::new();
            reader.read_line(&mut size).ok()?;
            let size = usize::from_str_radix(size.trim().split(';').next()?, 16).ok()?;
            let mut chunk = vec![0; size + 2];
            reader.read_exact(&mut chunk).ok()?;
            if size == 0 {
                break;
            }
            body.extend_from_slice(&chunk[..size]);
        }
    } else {
        body.resize(length, 0);
        reader.read_exact(&mut body).ok()?;
    }
    Some((method, path, body))
}
