//! How the server reads its input: a file to its end, a pipe with a
//! request in pieces and one larger than the pipe's buffer.

use std::time::Duration;

use serde_json::{Value, json};

use super::{Server, initialize_params, is_error};
use crate::common::TestEnv;

/// Standard input that is a regular file (`goalkeeper mcp < requests`)
/// cannot wait in `epoll`: the server reads it on a thread of its own,
/// answers every request in it and stops at its end.
#[test]
fn a_file_as_standard_input_is_served_to_its_end() {
    let env = TestEnv::new();
    let requests = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": initialize_params()}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "todo", "arguments": {"op": "init", "items": ["A", "B"]}}}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
            "name": "todo", "arguments": {"op": "done", "task": "A"}}}),
    ];
    let input = env.dir().join("requests.jsonl");
    let text: String = requests.iter().map(|r| format!("{r}\n")).collect();
    std::fs::write(&input, text).unwrap();
    let output = env
        .std_cmd(&["--session", "f", "mcp"])
        .stdin(std::fs::File::open(&input).unwrap())
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let answers: Vec<Value> = String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let ids: Vec<&Value> = answers.iter().map(|a| &a["id"]).collect();
    assert_eq!(ids, [&json!(1), &json!(2), &json!(3)], "{answers:?}");
    assert!(!is_error(&answers[2]["result"]), "{:?}", answers[2]);
    let view = env.ok(&["--session", "f", "todo", "view"]);
    assert!(view.contains("Overall: 1/2 done"), "{view}");
}

/// On a pipe the server waits for input in its runtime's own event loop.
/// A request split across writes, with a pause between them, and one
/// larger than a pipe's buffer (so that it arrives in many reads) are each
/// answered once, whole; the end of the input ends the server.
#[test]
fn a_request_in_pieces_and_a_large_one_are_each_answered() {
    let env = TestEnv::new();
    let mut server = Server::start(&env, "pieces");
    let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
        "name": "todo", "arguments": {"op": "init", "items": ["first", "second"]}}})
    .to_string();
    let (head, tail) = call.split_at(call.len() / 2);
    server.send_line_raw(head);
    std::thread::sleep(Duration::from_millis(100));
    assert!(server.drain(Duration::from_millis(100)).is_empty());
    server.send_line(tail);
    let first = server.response(7);
    assert_eq!(first["result"]["_meta"]["goalkeeper/result"]["version"], 1);

    // About 300 KB: 300 tasks of 1,000 characters.
    let items: Vec<String> = (0..300)
        .map(|i| format!("{i:03} {}", "x".repeat(996)))
        .collect();
    server.send(
        &json!({"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {
        "name": "todo", "arguments": {"op": "append", "phase": "Big", "items": items}}}),
    );
    let big = server.response(8);
    assert!(!is_error(&big["result"]), "{big}");
    assert_eq!(big["result"]["_meta"]["goalkeeper/result"]["version"], 2);
    assert!(server.drain(Duration::from_millis(100)).is_empty());
    assert_eq!(server.stop(), "[exit status: 0]");
    let view = env.ok(&["--session", "pieces", "todo", "view"]);
    assert!(view.contains("0/302 done"), "{view}");
}
