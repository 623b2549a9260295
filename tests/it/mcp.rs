//! `goalkeeper mcp` end to end: the real binary, spoken to in raw
//! newline-delimited JSON-RPC over its stdin and stdout, as an MCP host does.
//! [`Server`] is that client; the tests are in the files below, by topic.

use crate::common;

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

use common::TestEnv;
use serde_json::{Value, json};

mod failures;
mod input;
mod sessions;
mod tools;

/// How long a test waits for one response before failing.
const TIMEOUT: Duration = Duration::from_secs(30);

/// One running `goalkeeper mcp` and the JSON-RPC client side of it.
pub(crate) struct Server {
    child: Option<Child>,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    next_id: i64,
}

impl Server {
    /// `goalkeeper --db <test db> --session <session> mcp`, initialized.
    pub(crate) fn start(env: &TestEnv, session: &str) -> Server {
        let mut server = Server::spawn(env, &["--session", session, "mcp"], &[]);
        server.initialize();
        server
    }

    /// The server with these arguments and extra environment, not yet
    /// initialized.
    pub(crate) fn spawn(env: &TestEnv, args: &[&str], vars: &[(&str, &str)]) -> Server {
        Server::spawn_in(env, env.dir(), args, vars)
    }

    /// [`Server::spawn`] with `dir` as the server's working directory.
    pub(crate) fn spawn_in(
        env: &TestEnv,
        dir: &std::path::Path,
        args: &[&str],
        vars: &[(&str, &str)],
    ) -> Server {
        let settings = env.dir().join("settings.toml");
        if !settings.exists() {
            std::fs::write(&settings, "").expect("write settings");
        }
        let mut command = env.std_cmd(&["--db", &env.location()]);
        command
            .args(args)
            .env("GOALKEEPER_CONFIG", &settings)
            .env_remove("GOALKEEPER_DB")
            .envs(vars.iter().copied())
            .current_dir(dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = command.spawn().expect("spawn goalkeeper mcp");
        let stdout = child.stdout.take().expect("stdout");
        let (send, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if send.send(line).is_err() {
                    break;
                }
            }
        });
        Server {
            stdin: child.stdin.take(),
            child: Some(child),
            lines,
            next_id: 0,
        }
    }

    pub(crate) fn initialize(&mut self) -> Value {
        let result = self.request("initialize", initialize_params());
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        result["result"].clone()
    }

    pub(crate) fn send(&mut self, message: &Value) {
        self.send_line(&message.to_string());
    }

    pub(crate) fn send_line(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{line}").expect("write to the server");
        stdin.flush().expect("flush");
    }

    /// Writes `text` as it is, without a newline, and flushes it.
    pub(crate) fn send_line_raw(&mut self, text: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin
            .write_all(text.as_bytes())
            .expect("write to the server");
        stdin.flush().expect("flush");
    }

    /// Sends a request and returns the whole response (`result` or `error`).
    pub(crate) fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.response(id)
    }

    /// The next message with this id; every line on stdout must be JSON-RPC.
    pub(crate) fn response(&mut self, id: i64) -> Value {
        loop {
            let Ok(line) = self.lines.recv_timeout(TIMEOUT) else {
                panic!("no response to request {id}; stderr: {}", self.stop());
            };
            let message: Value = serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {line}"));
            assert_eq!(message["jsonrpc"], "2.0", "not JSON-RPC: {line}");
            if message["id"] == id {
                return message;
            }
            // Anything else is the server's notification: every response
            // carries the id of its request (DESIGN.md §9).
            assert!(
                message.get("id").is_none() && message.get("method").is_some(),
                "a response to a request never sent, or without its id: {line}"
            );
        }
    }

    /// `tools/call`, returning the tool result, which must not be a
    /// JSON-RPC error.
    pub(crate) fn call(&mut self, tool: &str, arguments: Value) -> Value {
        let response = self.request("tools/call", json!({"name": tool, "arguments": arguments}));
        assert!(
            response.get("error").is_none(),
            "a tool call must answer with a result: {response}"
        );
        response["result"].clone()
    }

    /// SIGKILLs the server and reaps it.
    pub(crate) fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            child.kill().expect("SIGKILL the server");
            child.wait().expect("reap the server");
        }
    }

    /// Sends a `tools/call` without waiting; returns its request id.
    pub(crate) fn send_call(&mut self, tool: &str, arguments: Value) -> i64 {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments}}));
        id
    }

    /// Every message that arrives within `wait`, as it comes.
    pub(crate) fn drain(&mut self, wait: Duration) -> Vec<Value> {
        let mut out = Vec::new();
        while let Ok(line) = self.lines.recv_timeout(wait) {
            out.push(serde_json::from_str(&line).expect("JSON-RPC on stdout"));
        }
        out
    }

    /// Closes stdin, waits for the exit and returns stderr with the status.
    pub(crate) fn stop(&mut self) -> String {
        drop(self.stdin.take());
        let child = self.child.take().expect("the server is running");
        let output = child.wait_with_output().expect("wait for the server");
        format!(
            "{}[exit status: {}]",
            String::from_utf8_lossy(&output.stderr),
            output
                .status
                .code()
                .map_or("signal".into(), |c| c.to_string())
        )
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// The parameters of the tests' `initialize` request.
pub(crate) fn initialize_params() -> Value {
    json!({
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "goalkeeper-tests", "version": "0"}
    })
}

pub(crate) fn text(result: &Value) -> &str {
    let content = result["content"].as_array().expect("content");
    assert_eq!(content.len(), 1, "one text block: {result}");
    assert_eq!(content[0]["type"], "text");
    content[0]["text"].as_str().expect("text")
}

pub(crate) fn is_error(result: &Value) -> bool {
    result["isError"].as_bool().expect("isError is always set")
}
