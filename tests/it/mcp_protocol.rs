//! `goalkeeper mcp` answers every request (DESIGN.md §9), malformed ones
//! included: a line that is not JSON, a `tools/call` with an invalid UTF-8
//! byte, a line over 16 MiB, a message that is not an object. Each answer
//! is checked exactly, and the server keeps serving afterwards with the
//! list untouched.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

use serde_json::{Value, json};

use crate::common::TestEnv;

struct Client {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
}

impl Client {
    fn start(env: &TestEnv) -> Client {
        let mut child = env
            .std_cmd(&["mcp"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (send, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if send.send(line).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take().unwrap();
        let mut client = Client {
            child,
            stdin,
            lines,
        };
        client.send(
            json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "t", "version": "0"}}})
            .to_string()
            .as_bytes(),
        );
        assert_eq!(client.next()["id"], 0);
        client.send(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        client
    }

    fn send(&mut self, line: &[u8]) {
        self.stdin.write_all(line).unwrap();
        self.stdin.write_all(b"\n").unwrap();
        self.stdin.flush().unwrap();
    }

    /// The next line on stdout, as JSON; fails after 30 s of silence.
    fn next(&mut self) -> Value {
        let line = self
            .lines
            .recv_timeout(Duration::from_secs(30))
            .expect("an answer within 30 s");
        serde_json::from_str(&line).unwrap()
    }

    fn call(&mut self, id: i64, arguments: Value) -> Value {
        self.send(
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": {"name": "todo", "arguments": arguments}})
            .to_string()
            .as_bytes(),
        );
        self.next()
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn error(id: Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

#[test]
fn every_malformed_request_gets_an_answer() {
    let env = TestEnv::new();
    let mut client = Client::start(&env);
    let created = client.call(1, json!({"op": "init", "items": ["Keep me"]}));
    assert_eq!(created["result"]["isError"], false);

    client.send(b"{this is not json");
    assert_eq!(
        client.next(),
        error(
            Value::Null,
            -32700,
            "Parse error: key must be a string at line 1 column 2"
        )
    );

    let mut bad_utf8 = br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"todo","arguments":{"op":"append","phase":"P","items":["a"#.to_vec();
    bad_utf8.push(0xff);
    bad_utf8.extend_from_slice(br#"b"]}}}"#);
    client.send(&bad_utf8);
    assert_eq!(
        client.next(),
        error(
            json!(7),
            -32700,
            "Parse error: the message is not valid UTF-8 (invalid byte at offset 120); send UTF-8 text"
        )
    );

    let mut huge = br#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"todo","arguments":{"op":"append","phase":"P","items":[""#.to_vec();
    huge.resize(huge.len() + 17 * 1024 * 1024, b'x');
    huge.extend_from_slice(br#""]}}}"#);
    client.send(&huge);
    assert_eq!(
        client.next(),
        error(
            json!(8),
            -32600,
            "Invalid Request: the message is longer than 16 MiB; send smaller calls"
        )
    );

    client.send(b"42");
    assert_eq!(
        client.next(),
        error(
            Value::Null,
            -32600,
            "Invalid Request: a JSON-RPC message is a JSON object"
        )
    );

    // Still serving, in order, and nothing was appended.
    let view = client.call(9, json!({"op": "view"}));
    assert_eq!(view["id"], 9);
    let text = view["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("[/] Keep me") && text.contains("Overall: 0/1 done"),
        "{text}"
    );
    assert_eq!(view["result"]["_meta"]["goalkeeper/result"]["version"], 1);
}

/// A request rmcp cannot read as an MCP message is answered with its id
/// and the rule it breaks, never with an id-less error the client cannot
/// match to its request; a batch gets one error per request in it. The
/// list is untouched and the server goes on serving.
#[test]
fn a_request_that_is_no_mcp_message_is_answered_with_its_id() {
    let env = TestEnv::new();
    let mut client = Client::start(&env);
    let created = client.call(1, json!({"op": "init", "items": ["Keep me"]}));
    assert_eq!(created["result"]["isError"], false);
    let meta = r#"Invalid params: "params._meta" must be an object"#;
    for (line, answer) in [
        (
            r#"{"jsonrpc":"2.0","id":901,"method":"tools/call","params":{"name":"todo","arguments":{"op":"rm"},"_meta":5}}"#,
            error(json!(901), -32602, meta),
        ),
        (
            r#"{"jsonrpc":"2.0","id":902,"method":"tools/call","params":{"name":"todo","arguments":{"op":"rm"},"_meta":"w2"}}"#,
            error(json!(902), -32602, meta),
        ),
        (
            r#"{"jsonrpc":"2.0","id":903}"#,
            error(
                json!(903),
                -32600,
                r#"Invalid Request: the request has no "method""#,
            ),
        ),
        (
            r#"{"jsonrpc":"2.0","id":"s-904","method":"tools/call","params":{"name":"todo","arguments":[1],"_meta":[]}}"#,
            error(json!("s-904"), -32602, meta),
        ),
        (
            r#"{"jsonrpc":"2.0","id":905,"method":"tools/call","params":"rm"}"#,
            error(
                json!(905),
                -32602,
                r#"Invalid params: "params" must be an object"#,
            ),
        ),
        (
            r#"{"jsonrpc":"2.0","id":906,"method":7}"#,
            error(
                json!(906),
                -32600,
                r#"Invalid Request: "method" must be a string"#,
            ),
        ),
        (
            r#"{"jsonrpc":"1.0","id":907,"method":"ping"}"#,
            error(
                json!(907),
                -32600,
                r#"Invalid Request: "jsonrpc" must be "2.0""#,
            ),
        ),
        (
            r#"{"jsonrpc":"2.0","id":908,"method":"tools/call","result":{}}"#,
            error(
                json!(908),
                -32600,
                r#"Invalid Request: a request has no "result" or "error""#,
            ),
        ),
        (
            r#"{"jsonrpc":"2.0","id":{"n":909},"method":"ping"}"#,
            error(
                Value::Null,
                -32600,
                r#"Invalid Request: "id" must be a string or a number"#,
            ),
        ),
    ] {
        client.send(line.as_bytes());
        assert_eq!(client.next(), answer, "{line}");
    }
    let batch = "Invalid Request: batches are not supported; send each message on its own line";
    client.send(
        br#"[{"jsonrpc":"2.0","id":910,"method":"tools/call","params":{"name":"todo","arguments":{"op":"rm"}}},{"jsonrpc":"2.0","method":"notifications/initialized"},5]"#,
    );
    assert_eq!(
        client.next(),
        json!([
            error(json!(910), -32600, batch),
            error(Value::Null, -32600, batch)
        ])
    );
    client.send(b"[]");
    assert_eq!(client.next(), error(Value::Null, -32600, batch));

    let view = client.call(11, json!({"op": "view"}));
    assert_eq!(view["id"], 11);
    let text = view["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("[/] Keep me"), "{text}");
    assert_eq!(view["result"]["_meta"]["goalkeeper/result"]["version"], 1);
}
