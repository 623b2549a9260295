//! Which session a server acts on, and servers and calls sharing one:
//! the session from the environment or from a host's hooks, pipelined
//! calls in order, two servers on one list.

use serde_json::{Value, json};

use super::{Server, is_error, text};
use crate::common::TestEnv;

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
    let store = goalkeeper::Store::open(env.db()).unwrap();
    let (list, _) = store
        .read(&goalkeeper::SessionId::parse("shared").unwrap(), |tx| {
            tx.todo_list()
        })
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

/// Codex names each call's session in its `_meta` (`sessionId`): a server
/// that follows Codex acts on it, wherever the server runs (as Codex's
/// plugin it runs in the plugin's folder, where no session was seen), and
/// on the session last seen in its directory only for a call that names
/// none. A server that follows another host, or serves a fixed session,
/// takes no session from a call.
#[test]
fn with_session_from_codex_a_call_acts_on_the_session_it_names() {
    let env = TestEnv::new();
    let cwd = env.dir().canonicalize().unwrap().display().to_string();
    let event = json!({"session_id": "codex-dir", "hook_event_name": "UserPromptSubmit", "cwd": cwd, "prompt": "hi"});
    env.cmd(&["hook", "codex"])
        .write_stdin(event.to_string())
        .assert()
        .success();
    let call = |server: &mut Server, item: &str, meta: Value| {
        let params = json!({"name": "todo", "_meta": meta,
            "arguments": {"op": "append", "phase": "P", "items": [item]}});
        let result = server.request("tools/call", params)["result"].clone();
        assert!(!is_error(&result), "{result}");
    };
    let named = json!({"sessionId": "codex-named", "threadId": "codex-named"});
    let mut codex = Server::spawn(&env, &["mcp", "--session-from", "codex"], &[]);
    codex.initialize();
    call(&mut codex, "named", named.clone());
    call(&mut codex, "unnamed", json!({}));
    let mut claude = Server::spawn(&env, &["mcp", "--session-from", "claude-code"], &[]);
    claude.initialize();
    call(&mut claude, "claude's", named.clone());
    let mut fixed = Server::spawn(&env, &["--session", "fixed", "mcp"], &[]);
    fixed.initialize();
    call(&mut fixed, "fixed's", named);
    let view = |session: &str| env.ok(&["--session", session, "todo", "view"]);
    let tasks = |session: &str| {
        ["named", "unnamed", "claude's", "fixed's"]
            .into_iter()
            .filter(|t| view(session).contains(&format!("] {t}")))
            .collect::<Vec<_>>()
    };
    assert_eq!(tasks("codex-named"), ["named"]);
    assert_eq!(tasks("codex-dir"), ["unnamed"]);
    assert_eq!(tasks("default"), ["claude's"]);
    assert_eq!(tasks("fixed"), ["fixed's"]);
}
