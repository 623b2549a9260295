//! The tools and the prompt over MCP: what the server offers, what a call
//! answers, and a rejected or malformed call as a result the model can read.

use serde_json::{Value, json};

use super::{Server, is_error, text};
use crate::common::TestEnv;

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
        include_str!("../../../prompts/tools/todo.md").trim_end()
    );
    assert_eq!(
        tools[1]["description"],
        include_str!("../../../prompts/tools/goal.md").trim_end()
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
