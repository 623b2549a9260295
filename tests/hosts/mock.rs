//! The scripted model server on 127.0.0.1 every real-host test talks to.
//!
//! The server answers each model request with the next [`Step`] of its
//! script (a list, or a function of the request), encoded in the wire
//! format of the host's API ([`Api`]), and logs every request (method,
//! path, JSON body and the step it got) so a test can assert on exactly
//! what the model received. When a list runs out it answers with a short
//! text reply ("Nothing more to do.") so a host that keeps going is seen in
//! the log rather than hanging. Side requests a host makes besides the
//! conversation (Gemini's model-routing classifier on `:generateContent`,
//! Claude Code's `count_tokens`) are answered with a fixed reply and
//! logged, but do not consume a step; anything else gets a 404.
//!
//! HTTP/1.1 with `Content-Length` or chunked request bodies and keep-alive,
//! which is all the hosts use here. Each response gets a unique id, so the
//! usage a test scripts can be summed exactly.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

/// Which wire format the server speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Api {
    /// Gemini `POST /v1beta/models/<model>:streamGenerateContent?alt=sse`.
    Gemini,
    /// OpenAI Responses `POST /v1/responses`, SSE.
    Responses,
    /// OpenAI chat completions `POST /v1/chat/completions`, SSE.
    ChatCompletions,
    /// Anthropic Messages `POST /v1/messages`, SSE when the request asks
    /// for a stream, else one JSON message.
    Messages,
}

/// Token usage the model reports for one response.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Usage {
    /// Prompt tokens, cache reads included (as the OpenAI and Gemini APIs
    /// report them; the Messages API gets them without).
    pub input: u64,
    /// Of `input`, the tokens read from the cache.
    pub cached: u64,
    /// Output tokens.
    pub output: u64,
    /// Tokens written to the cache (the Messages API's only).
    pub cache_write: u64,
}

impl Usage {
    /// What goalkeeper must count for this response (DESIGN.md §5): input
    /// without the cache reads, plus output, plus cache writes.
    pub fn counted(&self) -> u64 {
        self.input - self.cached + self.output + self.cache_write
    }
}

/// Usage as the OpenAI and Gemini APIs report it.
pub fn usage(input: u64, cached: u64, output: u64) -> Usage {
    Usage {
        input,
        cached,
        output,
        cache_write: 0,
    }
}

/// What the model does in one response.
#[derive(Clone, Debug)]
pub enum Answer {
    /// Calls one tool with these arguments.
    Tool(String, Value),
    /// Answers with text and ends its turn.
    Text(String),
}

/// One scripted model response.
#[derive(Clone, Debug)]
pub struct Step {
    /// What the model says or calls.
    pub answer: Answer,
    /// The usage it reports.
    pub usage: Usage,
}

impl Step {
    /// A text reply with a small usage.
    pub fn text(text: &str) -> Step {
        Step {
            answer: Answer::Text(text.to_owned()),
            usage: usage(100, 0, 10),
        }
    }

    /// A call of `name` with `args`, with a small usage.
    pub fn tool(name: &str, args: Value) -> Step {
        Step {
            answer: Answer::Tool(name.to_owned(), args),
            ..Step::text("")
        }
    }

    /// The same step with `usage`.
    pub fn with(mut self, usage: Usage) -> Step {
        self.usage = usage;
        self
    }

    fn is_tool(&self) -> bool {
        matches!(self.answer, Answer::Tool(..))
    }
}

/// A tool call step with the given usage.
pub fn tool(name: &str, args: Value, usage: Usage) -> Step {
    Step::tool(name, args).with(usage)
}

/// A text step with the given usage.
pub fn text(text: &str, usage: Usage) -> Step {
    Step::text(text).with(usage)
}

/// One logged request.
#[derive(Clone, Debug)]
pub struct Request {
    pub method: String,
    /// The request path with its query.
    pub path: String,
    /// The body as JSON (`Value::Null` when it was not JSON).
    pub body: Value,
    /// The step it got, when it was a model request of the conversation.
    pub step: Option<Step>,
}

impl Request {
    /// Whether the request consumed a step of the script.
    pub fn scripted(&self) -> bool {
        self.step.is_some()
    }
}

type ScriptFn = dyn FnMut(&Request) -> Step + Send;

/// Where the steps come from.
enum Script {
    /// In order, then the fallback.
    Steps(VecDeque<Step>),
    /// A function of the request.
    Function(Box<ScriptFn>),
}

struct State {
    api: Api,
    script: Mutex<Script>,
    log: Mutex<Vec<Request>>,
    served: Mutex<usize>,
    stop: AtomicBool,
}

/// The running server; it stops when dropped.
pub struct MockModel {
    addr: SocketAddr,
    state: Arc<State>,
}

impl MockModel {
    /// Answers the model requests with `steps` in order, then with the
    /// fallback.
    pub fn start(api: Api, steps: Vec<Step>) -> MockModel {
        MockModel::serve(api, Script::Steps(steps.into()))
    }

    /// Answers each model request with `script(request)`.
    pub fn scripted(api: Api, script: impl FnMut(&Request) -> Step + Send + 'static) -> MockModel {
        MockModel::serve(api, Script::Function(Box::new(script)))
    }

    fn serve(api: Api, script: Script) -> MockModel {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
        let addr = listener.local_addr().expect("local address");
        let state = Arc::new(State {
            api,
            script: Mutex::new(script),
            log: Mutex::new(Vec::new()),
            served: Mutex::new(0),
            stop: AtomicBool::new(false),
        });
        let shared = Arc::clone(&state);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                if shared.stop.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(stream) = stream else { continue };
                let state = Arc::clone(&shared);
                std::thread::spawn(move || serve(stream, &state));
            }
        });
        MockModel { addr, state }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Every request so far, in arrival order.
    pub fn requests(&self) -> Vec<Request> {
        self.state.log.lock().unwrap().clone()
    }

    /// The requests that consumed a step (the conversation's model calls).
    pub fn calls(&self) -> Vec<Request> {
        self.requests()
            .into_iter()
            .filter(Request::scripted)
            .collect()
    }

    /// The bodies of [`MockModel::calls`].
    pub fn model_calls(&self) -> Vec<Value> {
        self.calls().into_iter().map(|r| r.body).collect()
    }

    /// How many steps of a list are left unused.
    pub fn steps_left(&self) -> usize {
        match &*self.state.script.lock().unwrap() {
            Script::Steps(steps) => steps.len(),
            Script::Function(_) => 0,
        }
    }

    /// How many scripted responses the server sent (script and fallback).
    pub fn served(&self) -> usize {
        *self.state.served.lock().unwrap()
    }

    /// The usage goalkeeper must count (DESIGN.md §5) over every response
    /// so far.
    pub fn counted_usage(&self) -> u64 {
        self.calls()
            .iter()
            .filter_map(|r| r.step.as_ref())
            .map(|s| s.usage.counted())
            .sum()
    }
}

impl Drop for MockModel {
    fn drop(&mut self) {
        self.state.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop so it sees the flag.
        let _ = TcpStream::connect(self.addr);
    }
}

/// Serves one keep-alive connection until the client closes it.
fn serve(stream: TcpStream, state: &State) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(120)));
    let Ok(mut writer) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(stream);
    while let Some((method, path, body)) = read_request(&mut reader) {
        if state.stop.load(Ordering::SeqCst) {
            break;
        }
        let mut request = Request {
            method,
            path,
            body: serde_json::from_slice(&body).unwrap_or(Value::Null),
            step: None,
        };
        let (status, content_type, payload) = respond(state, &mut request);
        state.log.lock().unwrap().push(request);
        let head = format!(
            "HTTP/1.1 {status}\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\ncache-control: no-cache\r\nrequest-id: req_scripted\r\n\r\n",
            payload.len()
        );
        if writer.write_all(head.as_bytes()).is_err()
            || writer.write_all(payload.as_bytes()).is_err()
            || writer.flush().is_err()
        {
            break;
        }
    }
    let _ = writer.shutdown(Shutdown::Both);
}

/// Reads one request: method, path and body. `None` at end of stream or on
/// a malformed request.
fn read_request(reader: &mut impl BufRead) -> Option<(String, String, Vec<u8>)> {
    let mut line = String::new();
    while line.trim().is_empty() {
        line.clear();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
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
        let Some((name, value)) = header.split_once(':') else {
            continue;
        };
        let value = value.trim();
        match name.trim().to_ascii_lowercase().as_str() {
            "content-length" => length = value.parse().unwrap_or(0),
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

/// The status, content type and body of the answer to `request`; a model
/// request of the conversation gets the script's next step.
fn respond(state: &State, request: &mut Request) -> (&'static str, &'static str, String) {
    let api = state.api;
    let path = request.path.split('?').next().unwrap_or("");
    let conversation = request.method == "POST"
        && match api {
            Api::Gemini => path.ends_with(":streamGenerateContent"),
            Api::Responses => path.ends_with("/responses"),
            Api::ChatCompletions => path.ends_with("/chat/completions"),
            Api::Messages => path == "/v1/messages",
        };
    if !conversation {
        return side_answer(api, request);
    }
    let step = match &mut *state.script.lock().unwrap() {
        Script::Steps(steps) => steps
            .pop_front()
            .unwrap_or_else(|| text("Nothing more to do.", usage(10, 0, 1))),
        Script::Function(script) => script(request),
    };
    let id = {
        let mut served = state.served.lock().unwrap();
        *served += 1;
        *served
    };
    let answer = match api {
        Api::Gemini => ("text/event-stream", gemini(&step, id)),
        Api::Responses => ("text/event-stream", responses(&step, id)),
        Api::ChatCompletions => ("text/event-stream", chat(&step, id)),
        Api::Messages => {
            let model = request.body["model"].as_str().unwrap_or("scripted");
            if request.body["stream"] == true {
                ("text/event-stream", message_events(&step, id, model))
            } else {
                let message = message(&step, id, model);
                ("application/json", message.to_string())
            }
        }
    };
    request.step = Some(step);
    ("200 OK", answer.0, answer.1)
}

/// The answer to a request that is not the conversation's.
fn side_answer(api: Api, request: &Request) -> (&'static str, &'static str, String) {
    let ok = |body: Value| ("200 OK", "application/json", body.to_string());
    match api {
        Api::Gemini if request.path.contains(":generateContent") => {
            // The model router's classifier: any valid answer will do.
            ok(
                json!({"candidates": [{"content": {"role": "model", "parts": [
                {"text": "{\"complexity_reasoning\": \"scripted\", \"complexity_score\": 10}"}]},
                "finishReason": "STOP"}]}),
            )
        }
        Api::Messages
            if request.method == "POST"
                && request.path.split('?').next() == Some("/v1/messages/count_tokens") =>
        {
            ok(json!({"input_tokens": request.body.to_string().len() / 4}))
        }
        Api::Messages => (
            "404 Not Found",
            "application/json",
            json!({"type": "error", "error": {"type": "not_found_error", "message": "not scripted"}})
                .to_string(),
        ),
        _ => ("404 Not Found", "application/json", "{}".to_owned()),
    }
}

fn gemini(step: &Step, id: usize) -> String {
    let part = match &step.answer {
        Answer::Tool(name, args) => json!({"functionCall": {"name": name, "args": args}}),
        Answer::Text(text) => json!({"text": text}),
    };
    let u = step.usage;
    let event = json!({
        "candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {
            "promptTokenCount": u.input,
            "cachedContentTokenCount": u.cached,
            "candidatesTokenCount": u.output,
            "totalTokenCount": u.input + u.output,
        },
        "modelVersion": "mock-model",
        "responseId": format!("resp-{id}"),
    });
    format!("data: {event}\r\n\r\n")
}

/// Server-sent events, each named by its `type`.
fn sse(events: &[Value]) -> String {
    let mut out = String::new();
    for event in events {
        let kind = event["type"].as_str().unwrap_or("message");
        out.push_str(&format!("event: {kind}\ndata: {event}\n\n"));
    }
    out
}

fn responses(step: &Step, id: usize) -> String {
    let response_id = format!("resp_{id}");
    let item = match &step.answer {
        Answer::Tool(name, args) => {
            // Codex names an MCP tool `mcp__<server>__<tool>` and expects the
            // call back with the server's namespace.
            let (namespace, tool) = match name.rsplit_once("__") {
                Some((ns, tool)) => (Some(ns.to_owned()), tool.to_owned()),
                None => (None, name.clone()),
            };
            let mut item = json!({
                "type": "function_call", "id": format!("fc_{id}"), "call_id": format!("call_{id}"),
                "name": tool, "arguments": args.to_string(), "status": "completed",
            });
            if let Some(ns) = namespace {
                item["namespace"] = ns.into();
            }
            item
        }
        Answer::Text(text) => json!({
            "type": "message", "id": format!("msg_{id}"), "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}],
        }),
    };
    let u = step.usage;
    sse(&[
        json!({"type": "response.created", "response": {"id": response_id}}),
        json!({"type": "response.output_item.done", "output_index": 0, "item": item}),
        json!({"type": "response.completed", "response": {
        "id": response_id,
        "usage": {
            "input_tokens": u.input,
            "input_tokens_details": {"cached_tokens": u.cached},
            "output_tokens": u.output,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": u.input + u.output,
        }}}),
    ])
}

fn chat(step: &Step, id: usize) -> String {
    let base = |choices: Value, usage: Value| {
        json!({"id": format!("chatcmpl-{id}"), "object": "chat.completion.chunk",
               "created": 1_764_441_600, "model": "mock-model", "choices": choices, "usage": usage})
    };
    let (delta, finish) = match &step.answer {
        Answer::Tool(name, args) => (
            json!({"role": "assistant", "tool_calls": [{"index": 0, "id": format!("call_{id}"), "type": "function",
                   "function": {"name": name, "arguments": args.to_string()}}]}),
            "tool_calls",
        ),
        Answer::Text(text) => (json!({"role": "assistant", "content": text}), "stop"),
    };
    let u = step.usage;
    let chunks = [
        base(
            json!([{"index": 0, "delta": delta, "finish_reason": null}]),
            Value::Null,
        ),
        base(
            json!([{"index": 0, "delta": {}, "finish_reason": finish}]),
            Value::Null,
        ),
        base(
            json!([]),
            json!({"prompt_tokens": u.input, "completion_tokens": u.output,
                   "total_tokens": u.input + u.output,
                   "prompt_tokens_details": {"cached_tokens": u.cached}}),
        ),
    ];
    let mut out = String::new();
    for chunk in chunks {
        out.push_str(&format!("data: {chunk}\n\n"));
    }
    out.push_str("data: [DONE]\n\n");
    out
}

fn message_id(id: usize) -> String {
    format!("msg_scripted_{id:04}")
}

/// The Messages API's content block of a step.
fn message_content(step: &Step, id: usize) -> Value {
    match &step.answer {
        Answer::Text(text) => json!({"type": "text", "text": text}),
        Answer::Tool(name, input) => {
            json!({"type": "tool_use", "id": format!("toolu_{id:04}_0"), "name": name, "input": input})
        }
    }
}

fn stop_reason(step: &Step) -> &'static str {
    if step.is_tool() {
        "tool_use"
    } else {
        "end_turn"
    }
}

/// The Messages API's usage of a step, its input without the cache.
fn message_usage(step: &Step, output: u64) -> Value {
    let u = step.usage;
    json!({
        "input_tokens": u.input - u.cached,
        "output_tokens": output,
        "cache_creation_input_tokens": u.cache_write,
        "cache_read_input_tokens": u.cached,
    })
}

/// A Messages API response as one JSON message.
fn message(step: &Step, id: usize, model: &str) -> Value {
    json!({
        "id": message_id(id), "type": "message", "role": "assistant", "model": model,
        "content": [message_content(step, id)], "stop_reason": stop_reason(step),
        "stop_sequence": null, "usage": message_usage(step, step.usage.output),
    })
}

/// A Messages API response as server-sent events.
fn message_events(step: &Step, id: usize, model: &str) -> String {
    let block = message_content(step, id);
    let (start, delta) = match &step.answer {
        Answer::Text(_) => (
            json!({"type": "text", "text": ""}),
            json!({"type": "text_delta", "text": block["text"]}),
        ),
        Answer::Tool(..) => (
            json!({"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}),
            json!({"type": "input_json_delta", "partial_json": block["input"].to_string()}),
        ),
    };
    sse(&[
        json!({"type": "message_start", "message": {
            "id": message_id(id), "type": "message", "role": "assistant", "model": model,
            "content": [], "stop_reason": null, "stop_sequence": null,
            "usage": message_usage(step, 1)}}),
        json!({"type": "content_block_start", "index": 0, "content_block": start}),
        json!({"type": "content_block_delta", "index": 0, "delta": delta}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_delta",
               "delta": {"stop_reason": stop_reason(step), "stop_sequence": null},
               "usage": {"output_tokens": step.usage.output}}),
        json!({"type": "message_stop"}),
    ])
}
