//! A NUL (U+0000) in a hook event or an MCP call, through the real binary,
//! on SQLite here and on the PostgreSQL server of the test run
//! (`postgres::nul`): no text goalkeeper stores holds one (DESIGN.md §1),
//! so the field that holds it is left out, and the rest of the event is
//! kept. The hook exits 0 and says what it left out.

use serde_json::{Value, json};

use crate::common::{TestEnv, render};
use crate::mcp::Server;

const SESSION: &str = "cc-nul";

/// Runs one Claude Code hook event; returns stdout and stderr, asserting
/// exit 0.
fn hook(env: &TestEnv, event: &Value) -> (String, String) {
    let args = ["hook", "claude-code"];
    let output = env
        .cmd(&args)
        .write_stdin(event.to_string())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", render(&args, &output));
    (
        String::from_utf8(output.stdout).unwrap(),
        String::from_utf8(output.stderr).unwrap(),
    )
}

/// A subagent's `PreToolUse` of goalkeeper's todo tool.
fn pre_tool_use(cwd: &str, tool_use_id: &str) -> Value {
    json!({"hook_event_name": "PreToolUse", "session_id": SESSION, "cwd": cwd,
        "transcript_path": "/nonexistent/t.jsonl", "tool_name": "mcp__goalkeeper__todo",
        "tool_input": {"op": "start", "task": "b"}, "tool_use_id": tool_use_id,
        "agent_id": "a1f", "agent_type": "general-purpose"})
}

/// The holder of task `b`.
fn holder_of_b(env: &TestEnv) -> Value {
    let list = env.view_json(SESSION)["details"]["phases"].clone();
    list[0]["tasks"][1]["agent"].clone()
}

/// A `PreToolUse` whose tool-use id holds a NUL records no call, but
/// still records the session for its directory; one whose `cwd` holds a
/// NUL records no directory, but still records the subagent's call. An
/// MCP call naming a tool-use id with a NUL acts as the main agent. Each
/// event exits 0 and says what it left out.
pub(crate) fn a_hook_event_with_a_nul_keeps_the_rest(env: &TestEnv) {
    env.ok(&[
        "--session",
        SESSION,
        "todo",
        "init",
        "--item",
        "a",
        "--item",
        "b",
    ]);
    let dir = env.dir().display().to_string();

    let (stdout, stderr) = hook(env, &pre_tool_use(&dir, "toolu_\u{0}1"));
    assert_eq!(stdout, "");
    assert_eq!(
        stderr,
        "goalkeeper: tool_use_id \"toolu_\\01\" is not a tool call's id; the subagent's call acts as the main agent\n"
    );
    let found = env.ok(&["--session-from", "claude-code", "session", "show"]);
    assert!(found.contains(SESSION), "{found}");

    let (stdout, stderr) = hook(env, &pre_tool_use("/p\u{0}q", "toolu_2"));
    assert_eq!(stdout, "");
    assert_eq!(
        stderr,
        "goalkeeper: cwd holds a NUL character, so it names no directory; the session is not recorded for one\n"
    );
    // A server Claude Code started for its session reads `_meta`.
    let mut server = Server::spawn(env, &["mcp", "--session-from", "claude-code"], &[]);
    server.initialize();
    let call = |server: &mut Server, id: &str, op: Value| {
        let response = server.request(
            "tools/call",
            json!({"name": "todo", "arguments": op, "_meta": {"claudecode/toolUseId": id}}),
        );
        assert_eq!(response["result"]["isError"], false, "{response}");
    };
    call(&mut server, "toolu_2", json!({"op": "start", "task": "b"}));
    assert_eq!(holder_of_b(env), "a1f", "the subagent's call was kept");
    call(
        &mut server,
        "toolu_\u{0}3",
        json!({"op": "done", "task": "a"}),
    );
    let log: Value =
        serde_json::from_str(&env.ok(&["--session", SESSION, "--json", "todo", "log"])).unwrap();
    let last = log.as_array().unwrap().last().unwrap().clone();
    assert_eq!(
        (&last["op"], &last["ok"], last["payload"].get("agent")),
        (&json!("done"), &json!(true), None),
        "the main agent's call: {last}"
    );
}

/// A prompt and a transcript path holding NUL are read, never stored:
/// the hook answers as for any other prompt, and says it could not read
/// the transcript.
pub(crate) fn a_prompt_with_a_nul_is_answered(env: &TestEnv) {
    env.ok(&["--session", SESSION, "goal", "set", "Ship", "it"]);
    let dir = env.dir().display().to_string();
    let event = json!({"hook_event_name": "UserPromptSubmit", "session_id": SESSION,
        "cwd": dir, "transcript_path": "/none/\u{0}.jsonl", "prompt": "go\u{0}on"});
    let (stdout, stderr) = hook(env, &event);
    assert!(
        stdout.contains("<objective>\\nShip it\\n</objective>"),
        "{stdout}"
    );
    assert_eq!(
        stderr,
        "goalkeeper: cannot read /none/ .jsonl: file name contained an unexpected NUL byte; usage not counted\n"
    );
}

#[test]
fn a_hook_event_with_a_nul_keeps_the_rest_on_sqlite() {
    a_hook_event_with_a_nul_keeps_the_rest(&TestEnv::new());
}

#[test]
fn a_prompt_with_a_nul_is_answered_on_sqlite() {
    a_prompt_with_a_nul_is_answered(&TestEnv::new());
}
