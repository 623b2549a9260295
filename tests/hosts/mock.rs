//! A scripted model server on 127.0.0.1 for the real-host tests.
//!
//! The server answers each model request with the next [`Step`] of its
//! script, encoded in the wire format of the host's API ([`Api`]), and logs
//! every request (path and JSON body) so a test can assert on exactly what
//! the model received. When the script runs out it answers with a short
//! text reply ("Nothing more to do.") so a host that keeps going is seen in
//! the log rather than hanging. Side requests a host makes besides the
//! conversation (Gemini's model-routing classifier on `:generateContent`)
//! are answered with a fixed reply and logged, but do not consume a step.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

/// Which wire format the server speaks.
#[allow(dead_code)] // each host's suite uses one
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Api {
    /// Gemini `POST /v1beta/models/<model>:streamGenerateContent?alt=sse`.
    Gemini,
    /// OpenAI Responses `POST /v1/responses`, SSE.
    Responses,
    /// OpenAI chat completions `POST /v1/chat/completions`, SSE.
    ChatCompletions,
}

/// Token usage the model reports for one response.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Usage {
    /// Prompt tokens, cache reads included (as every API reports them).
    pub input: u64,
    /// Of `input`, the tokens read from the cache.
    pub cached: u64,
    /// Output tokens.
    pub output: u64,
}

impl Usage {
    /// What goalkeeper must count for this response: input without the
    /// cache reads, plus output.
    pub fn counted(&self) -> u64 {
        self.input - self.cached + self.output
    }
}

/// What the model does in one response.
#[derive(Clone, Debug)]
pub enum Reply {
    /// Calls one tool with these arguments.
    Tool(String, Value),
    /// Answers with text and ends its turn.
    Text(String),
}

/// One scripted model response.
#[derive(Clone, Debug)]
pub struct Step {
    /// What the model says or calls.
    pub reply: Reply,
    /// The usage it reports.
    pub usage: Usage,
}

/// A tool call step with the given usage.
pub fn tool(name: &str, args: Value, usage: Usage) -> Step {
    Step {
        reply: Reply::Tool(name.to_owned(), args),
        usage,
    }
}

/// A text step with the given usage.
pub fn text(text: &str, usage: Usage) -> Step {
    Step {
        reply: Reply::Text(text.to_owned()),
        usage,
    }
}

/// One logged request.
#[derive(Clone, Debug)]
pub struct Request {
    /// The request path with its query.
    pub path: String,
    /// The body as JSON (`Value::Null` when it was not JSON).
    pub body: Value,
    /// True when the request consumed a step of the script.
    pub scripted: bool,
}

struct State {
    steps: VecDeque<Step>,
    log: Vec<Request>,
    served: usize,
}

/// The running server; it stops when dropped (its threads are detached and
/// idle on a closed listener).
pub struct MockModel {
    port: u16,
    state: Arc<Mutex<State>>,
}

impl MockModel {
    /// Starts a server on an ephemeral port of 127.0.0.1.
    pub fn start(api: Api, steps: Vec<Step>) -> MockModel {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
        let port = listener.local_addr().expect("local addr").port();
        let state = Arc::new(Mutex::new(State {
            steps: steps.into(),
            log: Vec::new(),
            served: 0,
        }));
        let shared = Arc::clone(&state);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let state = Arc::clone(&shared);
                std::thread::spawn(move || {
                    let _ = serve(stream, api, &state);
                });
            }
        });
        MockModel { port, state }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Every request so far, in arrival order.
    pub fn requests(&self) -> Vec<Request> {
        self.state.lock().unwrap().log.clone()
    }

    /// The requests that consumed a step (the conversation's model calls).
    pub fn model_calls(&self) -> Vec<Value> {
        self.requests()
            .into_iter()
            .filter(|r| r.scripted)
            .map(|r| r.body)
            .collect()
    }

    /// How many scripted steps are left unused.
    pub fn steps_left(&self) -> usize {
        self.state.lock().unwrap().steps.len()
    }

    /// How many scripted responses the server sent (script and fallback).
    pub fn served(&self) -> usize {
        self.state.lock().unwrap().served
    }
}

fn serve(stream: TcpStream, api: Api, state: &Mutex<State>) -> std::io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(30)))?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut stream = stream;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 {
            return Ok(());
        }
        let request_line = line.trim_end().to_owned();
        if request_line.is_empty() {
            continue;
        }
        let mut parts = request_line.split(' ');
        let method = parts.next().unwrap_or("").to_owned();
        let path = parts.next().unwrap_or("").to_owned();
        let mut length = 0usize;
        let mut chunked = false;
        loop {
            let mut header = String::new();
            if reader.read_line(&mut header)? == 0 {
                return Ok(());
            }
            let header = header.trim_end();
            if header.is_empty() {
                break;
            }
            if let Some((name, value)) = header.split_once(':') {
                let value = value.trim();
                match name.to_ascii_lowercase().as_str() {
                    "content-length" => length = value.parse().unwrap_or(0),
                    "transfer-encoding" => chunked = value.eq_ignore_ascii_case("chunked"),
                    _ => {}
                }
            }
        }
        let body = if chunked {
            read_chunked(&mut reader)?
        } else {
            let mut body = vec![0; length];
            reader.read_exact(&mut body)?;
            body
        };
        let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        let (status, content_type, payload) = respond(api, &method, &path, &body, state);
        let head = format!(
            "HTTP/1.1 {status}\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\ncache-control: no-cache\r\n\r\n",
            payload.len()
        );
        stream.write_all(head.as_bytes())?;
        stream.write_all(payload.as_bytes())?;
        stream.flush()?;
    }
}

fn read_chunked(reader: &mut impl BufRead) -> std::io::Result<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let mut size = String::new();
        reader.read_line(&mut size)?;
        let size =
            usize::from_str_radix(size.trim().split(';').next().unwrap_or("0"), 16).unwrap_or(0);
        let mut chunk = vec![0; size + 2];
        reader.read_exact(&mut chunk)?;
        if size == 0 {
            return Ok(body);
        }
        body.extend_from_slice(&chunk[..size]);
    }
}

fn respond(
    api: Api,
    method: &str,
    path: &str,
    body: &Value,
    state: &Mutex<State>,
) -> (&'static str, &'static str, String) {
    let mut state = state.lock().unwrap();
    let conversation = method == "POST"
        && match api {
            Api::Gemini => path.contains(":streamGenerateContent"),
            Api::Responses => path.ends_with("/responses"),
            Api::ChatCompletions => path.ends_with("/chat/completions"),
        };
    state.log.push(Request {
        path: path.to_owned(),
        body: body.clone(),
        scripted: conversation,
    });
    if !conversation {
        if api == Api::Gemini && path.contains(":generateContent") {
            // The model router's classifier: any valid answer will do.
            let answer = json!({"candidates": [{"content": {"role": "model", "parts": [
                {"text": "{\"complexity_reasoning\": \"scripted\", \"complexity_score\": 10}"}]},
                "finishReason": "STOP"}]});
            return ("200 OK", "application/json", answer.to_string());
        }
        return ("404 Not Found", "application/json", "{}".to_owned());
    }
    let step = state.steps.pop_front().unwrap_or_else(|| {
        text(
            "Nothing more to do.",
            Usage {
                input: 10,
                cached: 0,
                output: 1,
            },
        )
    });
    state.served += 1;
    let id = state.served;
    let payload = match api {
        Api::Gemini => gemini(&step, id),
        Api::Responses => responses(&step, id),
        Api::ChatCompletions => chat(&step, id),
    };
    ("200 OK", "text/event-stream", payload)
}

fn gemini(step: &Step, id: usize) -> String {
    let part = match &step.reply {
        Reply::Tool(name, args) => json!({"functionCall": {"name": name, "args": args}}),
        Reply::Text(text) => json!({"text": text}),
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
    let item = match &step.reply {
        Reply::Tool(name, args) => {
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
        Reply::Text(text) => json!({
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
    let (delta, finish) = match &step.reply {
        Reply::Tool(name, args) => (
            json!({"role": "assistant", "tool_calls": [{"index": 0, "id": format!("call_{id}"), "type": "function",
                   "function": {"name": name, "arguments": args.to_string()}}]}),
            "tool_calls",
        ),
        Reply::Text(text) => (json!({"role": "assistant", "content": text}), "stop"),
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
