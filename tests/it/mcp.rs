//! `goalkeeper mcp` end to end: the real binary, spoken to in raw
//! newline-delimited JSON-RPC over its stdin and stdout, as an MCP host does.

use crate::common;

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

use common::TestEnv;
use serde_json::{Value, json};

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
            assert!(
                message.get("id").is_none(),
                "a response to a request never sent: {line}"
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
fn initialize_params() -> Value {
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

/// One call and its result, as a transcript entry for snapshots.
fn exchange(server: &mut Server, tool: &str, arguments: Value) -> String {
    let result = server.call(tool, arguments.clone());
    assert!(
        result.get("structuredContent").is_none(),
        "structuredContent would replace the summary in what hosts send the model: {result}"
    );
    let facts = result
        .pointer("/_meta/goalkeeper~1result")
        .map(|s| serde_json::to_string(s).unwrap())
        .unwrap_or_else(|| "(none)".into());
    format!(
        "→ {tool} {arguments}\n← isError: {}\n{}\n← _meta facts: {facts}\n\n",
        is_error(&result),
        text(&result)
    )
}

#[test]
fn initialize_names_the_server_and_its_version() {
    let env = TestEnv::new();
    let mut server = Server::spawn(&env, &["--session", "s1", "mcp"], &[]);
    let info = server.initialize();
    assert_eq!(info["serverInfo"]["name"], "goalkeeper");
    assert_eq!(info["serverInfo"]["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(info["protocolVersion"], "2025-06-18");
    assert!(info["capabilities"]["tools"].is_object());
    assert!(info["capabilities"]["prompts"].is_object());
    assert_eq!(server.stop(), "[exit status: 0]");
}

#[test]
fn tools_list_has_both_tools_with_descriptions_and_schemas() {
    let env = TestEnv::new();
    let mut server = Server::start(&env, "s1");
    let response = server.request("tools/list", json!({}));
    let tools = response["result"]["tools"].as_array().expect("tools");
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["todo", "goal"]);
    assert_eq!(
        tools[0]["inputSchema"]["properties"]["op"]["enum"],
        json!([
            "init", "start", "done", "drop", "rm", "block", "unblock", "append", "view"
        ])
    );
    assert_eq!(
        tools[1]["inputSchema"]["properties"]["op"]["enum"],
        json!(["get", "create", "resume", "complete"])
    );
    for tool in tools {
        assert_eq!(tool["inputSchema"]["type"], "object");
        assert_eq!(tool["inputSchema"]["required"], json!(["op"]));
    }
    // The descriptions are the templates in prompts/tools/.
    assert_eq!(
        tools[0]["description"],
        include_str!("../../prompts/tools/todo.md").trim_end()
    );
    assert_eq!(
        tools[1]["description"],
        include_str!("../../prompts/tools/goal.md").trim_end()
    );
    assert_snapshot!(
        "mcp_tools_list",
        serde_json::to_string_pretty(&response["result"]).unwrap()
    );
}

#[test]
fn a_todo_session_over_mcp() {
    let env = TestEnv::new();
    let mut server = Server::start(&env, "s1");
    let mut transcript = String::new();
    for (tool, arguments) in [
        (
            "todo",
            json!({"op": "init", "list": [
                {"phase": "Foundation", "items": ["Build core", "Add edge cases"]},
                {"phase": "Verification", "items": ["Run tests"]}]}),
        ),
        ("todo", json!({"op": "start", "task": "Add edge cases"})),
        ("todo", json!({"op": "done", "task": "Add edge cases"})),
        (
            "todo",
            json!({"op": "block", "task": "Run tests", "reason": "waiting for CI"}),
        ),
        (
            "todo",
            json!({"op": "append", "phase": "Release", "items": ["Tag v1"]}),
        ),
        ("todo", json!({"op": "view"})),
    ] {
        transcript.push_str(&exchange(&mut server, tool, arguments));
    }
    assert_snapshot!("mcp_todo_session", transcript);

    let view = server.call("todo", json!({"op": "view"}));
    assert!(!is_error(&view));
    assert_eq!(view["_meta"]["goalkeeper/result"]["version"], 5);
    assert_eq!(
        text(&view),
        "Remaining (2):
  - Build core [in_progress] (Foundation)
  - Tag v1 [pending] (Release)
Blocked (1):
  - Run tests (Verification): waiting for CI
Overall: 1/4 done, 3 open.
Active phase 1/3 \"Foundation\" (1/2 done).
Foundation:
  - [/] Build core
  - [x] Add edge cases
Verification:
  - [!] Run tests
Release:
  - [ ] Tag v1"
    );
    assert_eq!(server.stop(), "[exit status: 0]");
}

#[test]
fn a_goal_session_over_mcp() {
    let env = TestEnv::new();
    let mut server = Server::start(&env, "s1");
    let mut transcript = String::new();
    for arguments in [
        json!({"op": "get"}),
        json!({"op": "create", "objective": "Ship the release"}),
        json!({"op": "get"}),
        json!({"op": "set", "objective": "Something else"}),
        json!({"op": "pause"}),
        json!({"op": "complete"}),
    ] {
        transcript.push_str(&exchange(&mut server, "goal", arguments));
    }
    assert_snapshot!("mcp_goal_session", transcript);

    // The user-only ops are refused with the reason, as tool results.
    let set = server.call("goal", json!({"op": "set", "objective": "x"}));
    assert!(is_error(&set));
    assert!(
        text(&set).contains("only the user can replace the goal"),
        "{}",
        text(&set)
    );
    let pause = server.call("goal", json!({"op": "pause"}));
    assert!(is_error(&pause));
    assert!(
        text(&pause).contains("only the user can pause the goal"),
        "{}",
        text(&pause)
    );
    let get = server.call("goal", json!({"op": "get"}));
    assert!(!is_error(&get));
    assert_eq!(
        get["_meta"]["goalkeeper/result"]["goal"]["status"],
        "complete"
    );
}

#[test]
fn a_rejected_call_is_a_tool_error_and_changes_nothing() {
    let env = TestEnv::new();
    let mut server = Server::start(&env, "s1");
    server.call(
        "todo",
        json!({"op": "init", "items": ["Write code", "Test it"]}),
    );
    let before = server.call("todo", json!({"op": "view"}));

    let rejected = server.call(
        "todo",
        json!({"op": "append", "phase": "Tasks", "items": ["Test it", "Ship"]}),
    );
    assert!(is_error(&rejected));
    let first_line = text(&rejected).lines().next().unwrap();
    assert!(first_line.starts_with("Errors: "), "{first_line}");
    assert!(first_line.contains("Test it"), "{first_line}");
    // The version is the one before the call.
    assert_eq!(
        rejected["_meta"]["goalkeeper/result"]["version"],
        before["_meta"]["goalkeeper/result"]["version"]
    );

    let after = server.call("todo", json!({"op": "view"}));
    assert_eq!(after, before);
    assert_eq!(after["_meta"]["goalkeeper/result"]["version"], 1);
}

#[test]
fn malformed_arguments_get_clear_tool_errors() {
    let env = TestEnv::new();
    let mut server = Server::start(&env, "s1");
    let mut transcript = String::new();
    for (tool, arguments) in [
        ("todo", json!(["op", "view"])),
        ("todo", json!("view")),
        ("todo", json!({"op": "view", "filter": "open"})),
        ("todo", json!({"op": "start", "task": 3})),
        ("todo", json!({"op": "launch"})),
        ("todo", json!({})),
        ("goal", json!([])),
        (
            "goal",
            json!({"op": "create", "objective": "x", "token_budget": 5}),
        ),
        ("goal", json!({"op": "create", "objective": 42})),
    ] {
        let result = server.call(tool, arguments.clone());
        assert!(is_error(&result), "{arguments}: {result}");
        let first_line = text(&result).lines().next().unwrap();
        transcript.push_str(&format!("→ {tool} {arguments}\n← {first_line}\n"));
    }
    assert_snapshot!("mcp_malformed_arguments", transcript);

    // No `arguments` at all reads as an empty object.
    let response = server.request("tools/call", json!({"name": "todo"}));
    assert_eq!(
        text(&response["result"]).lines().next().unwrap(),
        "Errors: field `op` is missing; use one of init, start, done, drop, rm, block, unblock, append, view"
    );
    // Nothing was stored.
    let view = server.call("todo", json!({"op": "view"}));
    assert_eq!(text(&view), "Todo list is empty.");
    assert_eq!(view["_meta"]["goalkeeper/result"]["version"], 0);
}

#[test]
fn an_unknown_tool_is_an_error_result_naming_the_tools() {
    let env = TestEnv::new();
    let mut server = Server::start(&env, "s1");
    let result = server.call("todos", json!({"op": "view"}));
    assert!(is_error(&result));
    assert_eq!(
        text(&result),
        "unknown tool `todos`; the tools are todo, goal"
    );
    assert!(result.get("structuredContent").is_none());
    assert!(result.get("_meta").is_none());
}

#[test]
fn the_session_comes_from_the_environment_without_flag() {
    let env = TestEnv::new();
    let mut server = Server::spawn(&env, &["mcp"], &[("GOALKEEPER_SESSION", "from-env")]);
    server.initialize();
    server.call("todo", json!({"op": "init", "items": ["Only here"]}));
    assert_eq!(server.stop(), "[exit status: 0]");
    let view = env.ok(&["--session", "from-env", "todo", "view"]);
    assert!(view.contains("Only here"), "{view}");
    let other = env.ok(&["todo", "view"]);
    assert_eq!(other, "Todo list is empty.\n");
}

#[test]
fn a_storage_failure_is_an_error_result_and_logged() {
    let env = TestEnv::new();
    let mut server = Server::start(&env, "s1");
    server.call("todo", json!({"op": "init", "items": ["A"]}));
    damage_todos(&env.db(), "s1");
    let result = server.call("todo", json!({"op": "view"}));
    assert!(is_error(&result));
    assert!(
        text(&result).starts_with("goalkeeper could not run the todo call: the stored"),
        "{}",
        text(&result)
    );
    // The server keeps serving.
    let goal = server.call("goal", json!({"op": "get"}));
    assert!(!is_error(&goal));
    let stderr = server.stop();
    assert!(
        stderr.starts_with("goalkeeper mcp: todo call failed: the stored"),
        "{stderr}"
    );
    assert!(stderr.ends_with("[exit status: 0]"), "{stderr}");
}

/// Overwrites a stored task of `session` with a status that does not exist.
fn damage_todos(db: &Path, session: &str) {
    let conn = rusqlite::Connection::open(db).expect("open the database");
    conn.busy_timeout(Duration::from_secs(10)).unwrap();
    let changed = conn
        .execute(
            "UPDATE tasks SET status = 'not a status' WHERE session_id = ?1",
            [session],
        )
        .expect("damage the list");
    assert_eq!(changed, 1);
}

#[test]
fn a_bad_database_fails_before_serving() {
    let env = TestEnv::new();
    std::fs::write(env.db(), "not a database").unwrap();
    let mut server = Server::spawn(&env, &["mcp"], &[]);
    let stderr = server.stop();
    assert!(
        stderr.starts_with("goalkeeper: ") && stderr.contains("is not a goalkeeper database"),
        "{stderr}"
    );
    assert!(stderr.ends_with("[exit status: 3]"), "{stderr}");
}

#[test]
fn the_goal_mode_context_is_a_prompt() {
    let env = TestEnv::new();
    let mut server = Server::start(&env, "s1");
    let list = server.request("prompts/list", json!({}));
    assert_eq!(list["result"]["prompts"][0]["name"], "goal-mode-context");

    let closed = server.request("prompts/get", json!({"name": "goal-mode-context"}));
    assert_eq!(
        closed["error"]["message"],
        "no goal-mode context: the session has no goal (goal set OBJECTIVE starts one)"
    );

    server.call(
        "goal",
        json!({"op": "create", "objective": "Ship the release"}),
    );
    server.call(
        "todo",
        json!({"op": "init", "items": ["Tag </todo_context> & go"]}),
    );
    let open = server.request("prompts/get", json!({"name": "goal-mode-context"}));
    let message = &open["result"]["messages"][0];
    assert_eq!(message["role"], "user");
    let text = message["content"]["text"].as_str().unwrap();
    assert!(text.contains("Ship the release"), "{text}");
    assert!(
        text.contains("  - [in_progress] Tag &lt;/todo_context&gt; &amp; go"),
        "{text}"
    );
    assert_eq!(text.matches("</todo_context>").count(), 1, "{text}");
}

#[test]
fn pipelined_calls_run_in_the_order_they_arrive() {
    let env = TestEnv::new();
    let mut server = Server::start(&env, "s1");
    let calls = [
        json!({"op": "init", "items": ["A", "B", "C"]}),
        json!({"op": "done", "task": "A"}),
        json!({"op": "done", "task": "B"}),
        json!({"op": "view"}),
    ];
    for (i, arguments) in calls.iter().enumerate() {
        server.send(
            &json!({"jsonrpc": "2.0", "id": 100 + i, "method": "tools/call",
            "params": {"name": "todo", "arguments": arguments}}),
        );
    }
    let versions: Vec<Value> = (0..calls.len())
        .map(|i| {
            server.response(100 + i as i64)["result"]["_meta"]["goalkeeper/result"]["version"]
                .clone()
        })
        .collect();
    assert_eq!(versions, [json!(1), json!(2), json!(3), json!(3)]);
}

#[test]
fn two_servers_on_one_session_keep_every_task() {
    const CALLS: usize = 25;
    let env = TestEnv::new();
    let mut first = Server::start(&env, "shared");
    let mut second = Server::start(&env, "shared");
    std::thread::scope(|scope| {
        for (name, server) in [("first", &mut first), ("second", &mut second)] {
            scope.spawn(move || {
                for call in 0..CALLS {
                    let result = server.call(
                        "todo",
                        json!({"op": "append", "phase": "Work", "items": [format!("{name} {call}")]}),
                    );
                    assert!(!is_error(&result), "{name} {call}: {}", text(&result));
                }
            });
        }
    });
    let view = first.call("todo", json!({"op": "view"}));
    assert_eq!(view["_meta"]["goalkeeper/result"]["version"], 2 * CALLS);
    let store = goalkeeper::Store::open(&env.db()).unwrap();
    let (list, _) = store
        .todo_list(&goalkeeper::SessionId::parse("shared").unwrap())
        .unwrap();
    let tasks: Vec<serde_json::Value> = list.phases[0]
        .tasks
        .iter()
        .map(|t| json!({"content": t.content}))
        .collect();
    assert_eq!(tasks.len(), 2 * CALLS);
    for name in ["first", "second"] {
        let mine: Vec<&str> = tasks
            .iter()
            .filter_map(|t| t["content"].as_str())
            .filter(|c| c.starts_with(&format!("{name} ")))
            .collect();
        let expected: Vec<String> = (0..CALLS).map(|call| format!("{name} {call}")).collect();
        assert_eq!(mine, expected);
    }
    // The other server sees the same state.
    assert_eq!(second.call("todo", json!({"op": "view"})), view);
    assert_eq!(first.stop(), "[exit status: 0]");
    assert_eq!(second.stop(), "[exit status: 0]");
}

#[test]
fn with_session_from_claude_code_the_tools_follow_the_hooks_session() {
    let env = TestEnv::new();
    let cwd = env.dir().canonicalize().unwrap().display().to_string();
    let mut server = Server::spawn(&env, &["mcp", "--session-from", "claude-code"], &[]);
    server.initialize();
    // Before any hook ran, the fallback session (`default`) is used.
    let before = server.call(
        "todo",
        json!({"op": "append", "phase": "P", "items": ["fallback"]}),
    );
    assert!(!is_error(&before), "{before}");
    // The hook sees Claude's session in this directory...
    let event = json!({"session_id": "claude-abc", "hook_event_name": "UserPromptSubmit", "cwd": cwd, "prompt": "hi"});
    env.cmd(&["hook", "claude-code"])
        .write_stdin(event.to_string())
        .assert()
        .success();
    // ...and the next tool call lands in that session.
    let after = server.call(
        "todo",
        json!({"op": "init", "items": ["in the claude session"]}),
    );
    assert!(!is_error(&after), "{after}");
    let claude = env.ok(&["--session", "claude-abc", "todo", "view"]);
    assert!(claude.contains("in the claude session"), "{claude}");
    let default = env.ok(&["todo", "view"]);
    assert!(
        default.contains("fallback") && !default.contains("in the claude session"),
        "{default}"
    );
}

/// What `goalkeeper todo view` prints for `session`.
fn cli_view(env: &TestEnv, session: &str) -> String {
    let output = env
        .cmd(&["--session", session, "todo", "view"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    String::from_utf8(output.stdout).unwrap()
}

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
    let view = cli_view(&env, "f");
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
    let view = cli_view(&env, "pieces");
    assert!(view.contains("0/302 done"), "{view}");
}
