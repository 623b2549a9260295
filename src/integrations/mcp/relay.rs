//! The relay between the client and rmcp: it passes the input on line by
//! line, answering itself what rmcp would drop in silence, and moves
//! `tools/call` arguments that are not a JSON object into the request's
//! `_meta` ([`RAW_ARGUMENTS`]), past rmcp's typed parsing, so that the
//! engine answers them with its own error.

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
        match check_line(&line) {
            Checked::Skip => continue,
            Checked::Answer(answer) => {
                let _ = answers.send(answer);
                continue;
            }
            Checked::Pass => {}
        }
        let lifted = lift_arguments(&line);
        let mut bytes = lifted.unwrap_or_else(|| line.clone());
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
    /// A blank line: nothing to answer or pass.
    Skip,
    /// Not something rmcp can read: this answer instead.
    Answer(Vec<u8>),
    /// A JSON object: rmcp's.
    Pass,
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
            .and_then(|m| m.get("id").cloned())
            .unwrap_or(Value::Null);
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
        Ok(Value::Object(_) | Value::Array(_)) => Checked::Pass,
        Ok(_) => Checked::Answer(error_line(
            Value::Null,
            -32600,
            "Invalid Request: a JSON-RPC message is a JSON object",
        )),
    }
}

/// One JSON-RPC error response line.
fn error_line(id: Value, code: i64, message: &str) -> Vec<u8> {
    let mut bytes = serde_json::to_vec(&serde_json::json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": code, "message": message},
    }))
    .expect("an error response serializes");
    bytes.push(b'\n');
    bytes
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

/// A `tools/call` request line whose `arguments` are present but not an
/// object (nor null), rewritten with them under `_meta`; `None` for every
/// other line, which passes unchanged.
fn lift_arguments(line: &[u8]) -> Option<Vec<u8>> {
    let mut message: Value = serde_json::from_slice(line).ok()?;
    if message.get("method")?.as_str()? != "tools/call" {
        return None;
    }
    let params = message.get_mut("params")?.as_object_mut()?;
    if params
        .get("arguments")
        .is_none_or(|a| a.is_object() || a.is_null())
    {
        return None;
    }
    if !params.get("_meta").is_none_or(Value::is_object) {
        return None;
    }
    let arguments = params.remove("arguments")?;
    params
        .entry("_meta")
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()?
        .insert(RAW_ARGUMENTS.into(), arguments);
    let mut bytes = serde_json::to_vec(&message).ok()?;
    bytes.push(b'\n');
    Some(bytes)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn lifted(line: &Value) -> Option<Value> {
        let mut text = line.to_string();
        text.push('\n');
        lift_arguments(text.as_bytes()).map(|b| serde_json::from_slice(&b).unwrap())
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
        assert_eq!(lift_arguments(b"not json\n"), None);
    }
}
