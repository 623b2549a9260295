//! The relay between the client and rmcp: it passes the input on line by
//! line, answering itself what rmcp would drop in silence or answer
//! without the request's id, and moves `tools/call` arguments that are not
//! a JSON object into the request's `_meta` ([`RAW_ARGUMENTS`]), past
//! rmcp's typed parsing, so that the engine answers them with its own
//! error.
//!
//! A request rmcp cannot read (`_meta` that is not an object, no
//! `method`, `jsonrpc` not "2.0") is found by rmcp's own reading of the
//! message type, on the value the relay parsed anyway, and answered here
//! with its id and the rule it breaks.

use serde_json::{Map, Value};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};

/// The `_meta` key that carries `tools/call` arguments which are not a JSON
/// object, past rmcp's typed parsing, to the engine.
pub(super) const RAW_ARGUMENTS: &str = "goalkeeper/arguments";

/// The longest input line the relay passes on (rmcp's own line limit);
/// a longer one is answered with an error and skipped.
const MAX_LINE: usize = 16 * 1024 * 1024;

/// Writes each line from `lines` to `output`, flushing after each.
pub(super) async fn write_lines<W: AsyncWrite + Unpin>(
    mut lines: tokio::sync::mpsc::UnboundedReceiver<Vec<u8>>,
    mut output: W,
) {
    while let Some(line) = lines.recv().await {
        if output.write_all(&line).await.is_err() || output.flush().await.is_err() {
            break;
        }
    }
    let _ = output.shutdown().await;
}

/// Passes rmcp's output on, a whole line at a time.
pub(super) async fn forward_lines<R: AsyncRead + Unpin>(
    input: R,
    lines: tokio::sync::mpsc::UnboundedSender<Vec<u8>>,
) {
    let mut input = BufReader::new(input);
    loop {
        let mut line = Vec::new();
        match input.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {
                if lines.send(line).is_err() {
                    break;
                }
            }
        }
    }
}

/// Copies `input` to `output` line by line, lifting non-object tool
/// arguments into `_meta` ([`lift_arguments`]) and answering on `answers`
/// the lines rmcp cannot read ([`check_line`]).
pub(super) async fn relay<R, W>(
    input: R,
    mut output: W,
    answers: tokio::sync::mpsc::UnboundedSender<Vec<u8>>,
) where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut input = BufReader::new(input);
    let mut line = Vec::new();
    loop {
        line.clear();
        let limit = (MAX_LINE + 1) as u64;
        match (&mut input).take(limit).read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        if line.len() > MAX_LINE && !line.ends_with(b"\n") {
            // Too long: answer from what the first bytes say, and skip the
            // rest of the line without keeping it.
            let id = id_in_prefix(&line);
            if !skip_line(&mut input).await {
                let _ = answers.send(error_line(id, -32600, TOO_LONG));
                break;
            }
            let _ = answers.send(error_line(id, -32600, TOO_LONG));
            continue;
        }
        let mut message = match check_line(&line) {
            Checked::Skip => continue,
            Checked::Answer(answer) => {
                let _ = answers.send(answer);
                continue;
            }
            Checked::Pass(message) => message,
        };
        let lifted = lift_arguments(&mut message);
        if let Some(answer) = unreadable_request(&message) {
            let _ = answers.send(answer);
            continue;
        }
        let mut bytes = if lifted {
            serde_json::to_vec(&message).expect("a JSON value serializes")
        } else {
            line.clone()
        };
        if !bytes.ends_with(b"\n") {
            bytes.push(b'\n');
        }
        if output.write_all(&bytes).await.is_err() {
            break;
        }
    }
    let _ = output.shutdown().await;
}

const TOO_LONG: &str = "Invalid Request: the message is longer than 16 MiB; send smaller calls";

/// Reads up to and including the next newline, keeping nothing. False at
/// the end of the input.
async fn skip_line<R: AsyncRead + Unpin>(input: &mut BufReader<R>) -> bool {
    loop {
        let buffer = match input.fill_buf().await {
            Ok([]) | Err(_) => return false,
            Ok(buffer) => buffer,
        };
        match buffer.iter().position(|&b| b == b'\n') {
            Some(i) => {
                input.consume(i + 1);
                return true;
            }
            None => {
                let n = buffer.len();
                input.consume(n);
            }
        }
    }
}

/// What the relay does with one complete line.
enum Checked {
    /// A blank line, or a batch of notifications: nothing to answer or
    /// pass.
    Skip,
    /// Not something rmcp can read: this answer instead.
    Answer(Vec<u8>),
    /// A JSON object, for rmcp once [`unreadable_request`] has seen it.
    Pass(Value),
}

fn check_line(line: &[u8]) -> Checked {
    if line.iter().all(u8::is_ascii_whitespace) {
        return Checked::Skip;
    }
    if let Err(e) = std::str::from_utf8(line) {
        // Read the id from the text with the bad bytes replaced, so the
        // client's request is answered by its id.
        let lossy = String::from_utf8_lossy(line);
        let id = serde_json::from_str::<Value>(&lossy)
            .ok()
            .map_or(Value::Null, |m| readable_id(m.get("id")));
        return Checked::Answer(error_line(
            id,
            -32700,
            &format!(
                "Parse error: the message is not valid UTF-8 (invalid byte at offset {}); send UTF-8 text",
                e.valid_up_to()
            ),
        ));
    }
    match serde_json::from_slice::<Value>(line) {
        Err(e) => Checked::Answer(error_line(
            Value::Null,
            -32700,
            &format!("Parse error: {e}"),
        )),
        Ok(message @ Value::Object(_)) => Checked::Pass(message),
        Ok(Value::Array(batch)) => refuse_batch(&batch),
        Ok(_) => Checked::Answer(error_line(
            Value::Null,
            -32600,
            "Invalid Request: a JSON-RPC message is a JSON object",
        )),
    }
}

/// One JSON-RPC error response line.
fn error_line(id: Value, code: i64, message: &str) -> Vec<u8> {
    let mut bytes = serde_json::to_vec(&error_response(id, code, message))
        .expect("an error response serializes");
    bytes.push(b'\n');
    bytes
}

fn error_response(id: Value, code: i64, message: &str) -> Value {
    serde_json::json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": code, "message": message},
    })
}

/// A message's id as a response carries it: a string or a number, else
/// null (JSON-RPC 2.0: an id that cannot be read is answered as null).
fn readable_id(id: Option<&Value>) -> Value {
    match id {
        Some(id @ (Value::Number(_) | Value::String(_))) => id.clone(),
        _ => Value::Null,
    }
}

/// The answer to a request that rmcp cannot read as an MCP message, which
/// rmcp would answer without its id (so that the client waits for an
/// answer forever): the error, with the request's id. `None` for every
/// other message: one rmcp reads, a notification (never answered), a
/// client's response to the server.
fn unreadable_request(whole: &Value) -> Option<Vec<u8>> {
    use serde::Deserialize;
    let message = whole.as_object()?;
    let id = message.get("id")?;
    if !message.contains_key("method")
        && (message.contains_key("result") || message.contains_key("error"))
    {
        return None;
    }
    // rmcp's own reading of a line, on the value already parsed.
    if rmcp::model::ClientJsonRpcMessage::deserialize(whole).is_ok() {
        return None;
    }
    let (code, why) = request_problem(message);
    Some(error_line(readable_id(Some(id)), code, &why))
}

/// What is wrong with a request rmcp cannot read, as a JSON-RPC error
/// code and message: the first rule of JSON-RPC 2.0 or MCP it breaks.
fn request_problem(message: &Map<String, Value>) -> (i64, String) {
    let invalid = |why: &str| (-32600, format!("Invalid Request: {why}"));
    let params = |why: &str| (-32602, format!("Invalid params: {why}"));
    if message.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return invalid(r#""jsonrpc" must be "2.0""#);
    }
    if readable_id(message.get("id")).is_null() {
        return invalid(r#""id" must be a string or a number"#);
    }
    let Some(method) = message.get("method") else {
        return invalid(r#"the request has no "method""#);
    };
    if !method.is_string() {
        return invalid(r#""method" must be a string"#);
    }
    if message.contains_key("result") || message.contains_key("error") {
        return invalid(r#"a request has no "result" or "error""#);
    }
    match message.get("params") {
        Some(p) if !p.is_object() => params(r#""params" must be an object"#),
        Some(p) if p.get("_meta").is_some_and(|m| !m.is_object()) => {
            params(r#""params._meta" must be an object"#)
        }
        _ => invalid("the message is not a request MCP defines"),
    }
}

/// The answer to a batch (a JSON array): MCP (2025-06-18) has none, so
/// each request in it gets an error with its id, in one JSON-RPC batch
/// response; an element that is no message gets one with a null id, a
/// notification none. An empty batch is one error (JSON-RPC 2.0).
fn refuse_batch(batch: &[Value]) -> Checked {
    const BATCH: &str =
        "Invalid Request: batches are not supported; send each message on its own line";
    if batch.is_empty() {
        return Checked::Answer(error_line(Value::Null, -32600, BATCH));
    }
    let answers: Vec<Value> = batch
        .iter()
        .filter_map(|message| match message.as_object() {
            Some(m) if !m.contains_key("id") && m.contains_key("method") => None,
            Some(m)
                if !m.contains_key("method")
                    && (m.contains_key("result") || m.contains_key("error")) =>
            {
                None
            }
            other => Some(error_response(
                readable_id(other.and_then(|m| m.get("id"))),
                -32600,
                BATCH,
            )),
        })
        .collect();
    if answers.is_empty() {
        return Checked::Skip;
    }
    let mut bytes = serde_json::to_vec(&answers).expect("a batch response serializes");
    bytes.push(b'\n');
    Checked::Answer(bytes)
}

/// The `"id"` of a message whose line is too long to parse, when it comes
/// early (clients write `jsonrpc`, `id`, `method` first): a number or a
/// plain string after the first `"id"` key of the first 4 KiB; else null.
fn id_in_prefix(line: &[u8]) -> Value {
    let prefix = &line[..line.len().min(4096)];
    let text = String::from_utf8_lossy(prefix);
    let Some(at) = text.find("\"id\"") else {
        return Value::Null;
    };
    let rest = text[at + 4..].trim_start();
    let Some(rest) = rest.strip_prefix(':') else {
        return Value::Null;
    };
    let rest = rest.trim_start();
    let end = rest
        .find(|c: char| c == ',' || c == '}' || c.is_whitespace())
        .unwrap_or(rest.len());
    match serde_json::from_str::<Value>(&rest[..end]) {
        Ok(id @ (Value::Number(_) | Value::String(_))) => id,
        _ => Value::Null,
    }
}

/// Moves the `arguments` of a `tools/call` request that are present but
/// not an object (nor null) under `_meta` ([`RAW_ARGUMENTS`]); true when it
/// did. Every other message stays as it is.
fn lift_arguments(message: &mut Value) -> bool {
    if message.get("method").and_then(Value::as_str) != Some("tools/call") {
        return false;
    }
    let Some(params) = message.get_mut("params").and_then(Value::as_object_mut) else {
        return false;
    };
    if params
        .get("arguments")
        .is_none_or(|a| a.is_object() || a.is_null())
    {
        return false;
    }
    if !params.get("_meta").is_none_or(Value::is_object) {
        return false;
    }
    let Some(arguments) = params.remove("arguments") else {
        return false;
    };
    let meta = params
        .entry("_meta")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Some(meta) = meta.as_object_mut() {
        meta.insert(RAW_ARGUMENTS.into(), arguments);
    }
    true
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn lifted(line: &Value) -> Option<Value> {
        let mut message = line.clone();
        lift_arguments(&mut message).then_some(message)
    }

    #[test]
    fn non_object_arguments_move_into_meta() {
        let call = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
            "params": {"name": "todo", "arguments": [1, 2]}});
        assert_eq!(
            lifted(&call),
            Some(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                "params": {"name": "todo", "_meta": {"goalkeeper/arguments": [1, 2]}}}))
        );
        let with_meta = json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
            "params": {"name": "goal", "arguments": "get", "_meta": {"progressToken": 1}}});
        assert_eq!(
            lifted(&with_meta).unwrap()["params"]["_meta"],
            json!({"progressToken": 1, "goalkeeper/arguments": "get"})
        );
    }

    #[test]
    fn other_lines_pass_unchanged() {
        for line in [
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": "todo", "arguments": {"op": "view"}}}),
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": "todo", "arguments": null}}),
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "todo"}}),
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"arguments": 1}}),
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": "todo", "arguments": 1, "_meta": 5}}),
        ] {
            assert_eq!(lifted(&line), None, "{line}");
        }
    }
}
