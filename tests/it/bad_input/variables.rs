//! Hostile environment variables and a read-only database: the host
//! commands pass over a spoilt variable, a person is told which one, and a
//! storage error changes nothing.

use super::*;

/// The commands a host runs on its events stay lenient with a spoilt
/// variable (the session comes from the event), and so does the MCP
/// server a host starts for its session: each is noted and passed over.
#[test]
fn host_commands_pass_over_a_spoilt_session_variable() {
    let env = TestEnv::new();
    env.ok(&["todo", "init", "--phase", "P", "--item", "Build core"]);
    let status = env.ok(&["statusline"]);
    let spoilt = |args: &[&str], stdin: &str| {
        let output = env
            .cmd(args)
            .env("GOALKEEPER_SESSION", "bad id!")
            .write_stdin(stdin.to_owned())
            .output()
            .unwrap();
        let rendered = common::render(args, &output);
        assert_eq!(output.status.code(), Some(0), "{rendered}");
        assert!(
            rendered.contains("GOALKEEPER_SESSION ignored: invalid session id \"bad id!\""),
            "{rendered}"
        );
        String::from_utf8(output.stdout).unwrap()
    };
    assert_eq!(spoilt(&["statusline"], "{}"), status);
    let start = serde_json::json!({
        "hook_event_name": "SessionStart",
        "session_id": "default",
        "source": "startup",
        "cwd": env.dir(),
    });
    spoilt(&["hook", "claude-code"], &start.to_string());
    let initialize = serde_json::json!({
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "goalkeeper-tests", "version": "0"},
        },
    });
    let served = spoilt(
        &["mcp", "--session-from", "claude-code"],
        &format!("{initialize}\n"),
    );
    assert!(served.contains("\"protocolVersion\""), "{served}");
    assert!(env.ok(&["todo", "view"]).contains("Build core"));
}

/// What a person reads about a spoilt variable: its name, what is wrong,
/// and what to do; the line's option is named as itself.
#[test]
fn a_spoilt_variable_is_named() {
    let env = TestEnv::new();
    let mut shown = String::new();
    for (name, value, args) in [
        ("GOALKEEPER_AGENT", &b"w\xff1"[..], &["todo", "view"][..]),
        ("GOALKEEPER_SESSION", b"\xff", &["todo", "view"]),
        ("GOALKEEPER_SESSION", b"my project", &["todo", "view"]),
        ("GOALKEEPER_AGENT", b"user", &["todo", "view"]),
        ("GOALKEEPER_AGENT", b"w\xff1", &["hook", "claude-code"]),
    ] {
        let output = env
            .cmd(args)
            .env(name, OsString::from_vec(value.to_vec()))
            .write_stdin("{}")
            .output()
            .unwrap();
        let value = String::from_utf8_lossy(value);
        shown.push_str(&format!("# with {name}={value:?}\n"));
        shown.push_str(&common::render(args, &output));
    }
    let args = ["--session", "my project", "hook", "claude-code"];
    let output = env.cmd(&args).write_stdin("{}").output().unwrap();
    shown.push_str(&common::render(&args, &output));
    crate::assert_snapshot!("cli_spoilt_variables", shown);
}

/// A variable that is not UTF-8 text leaves the commands a host runs
/// lenient too: noted, naming the variable, and passed over, with the
/// event handled as without it.
#[test]
fn host_commands_pass_over_a_variable_that_is_not_text() {
    let env = TestEnv::new();
    env.ok(&["todo", "init", "--phase", "P", "--item", "Build core"]);
    env.ok(&["goal", "set", "Ship it"]);
    let stop = serde_json::json!({
        "hook_event_name": "Stop",
        "session_id": "default",
        "cwd": env.dir(),
    });
    for (name, bytes) in [
        ("GOALKEEPER_AGENT", &b"w\xff1"[..]),
        ("GOALKEEPER_SESSION", b"\xff"),
    ] {
        let args = ["hook", "claude-code"];
        let output = env
            .cmd(&args)
            .env(name, OsString::from_vec(bytes.to_vec()))
            .write_stdin(stop.to_string())
            .output()
            .unwrap();
        let rendered = common::render(&args, &output);
        assert_eq!(output.status.code(), Some(0), "{rendered}");
        let lossy = String::from_utf8_lossy(bytes);
        assert_eq!(
            String::from_utf8_lossy(&output.stderr),
            format!("goalkeeper: {name} ignored: it is not UTF-8 text ({lossy:?})\n")
        );
        // The event was handled: the goal goes on.
        let stdout = String::from_utf8(output.stdout).unwrap();
        assert!(
            stdout.contains("\"decision\":\"block\""),
            "{name}: {stdout}"
        );
    }
    assert!(env.ok(&["todo", "view"]).contains("[/] Build core"));
}

/// An empty `GOALKEEPER_*` variable counts as unset (DESIGN.md §8): the
/// session's own agent, the `default` session, the default database. On
/// the command line, in a hook and in the MCP server.
#[test]
fn an_empty_variable_is_unset() {
    let env = TestEnv::new();
    env.ok(&["todo", "init", "--item", "a", "--item", "b"]);
    let empty = |args: &[&str], stdin: &str| {
        let output = env
            .cmd(args)
            .env("GOALKEEPER_AGENT", "")
            .env("GOALKEEPER_SESSION", "")
            .write_stdin(stdin.to_owned())
            .output()
            .unwrap();
        let rendered = common::render(args, &output);
        assert_eq!(output.status.code(), Some(0), "{rendered}");
        assert!(output.stderr.is_empty(), "{rendered}");
        String::from_utf8(output.stdout).unwrap()
    };
    // The session's own agent, on the default session: `a` is its task,
    // so it may finish it (a named agent could not).
    let done = empty(&["todo", "apply", r#"{"op":"done","task":"a"}"#], "");
    assert!(done.contains("  - b [in_progress] (Tasks)"), "{done}");
    let stop = serde_json::json!({
        "hook_event_name": "Stop",
        "session_id": "default",
        "cwd": env.dir(),
    });
    let reminder = empty(&["hook", "claude-code"], &stop.to_string());
    assert!(reminder.contains("\"decision\":\"block\""), "{reminder}");
    let initialize = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "goalkeeper-tests", "version": "0"}}});
    let call = serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "todo", "arguments": {"op": "done", "task": "b"}}});
    let served = empty(&["mcp"], &format!("{initialize}\n{call}\n"));
    assert!(served.contains("Overall: 2/2 done"), "{served}");
    let log = env.ok(&["--json", "todo", "log"]);
    assert!(!log.contains("\"agent\":"), "a named agent acted: {log}");
}

#[test]
fn a_read_only_database_is_a_storage_error_and_changes_nothing() {
    let env = TestEnv::new();
    env.ok(&["todo", "init", "--item", "Keep me"]);
    let db = env.db();
    let read_only = common::ReadOnlyDatabase::new(&db);
    let before = fs::read(&db).unwrap();
    let output = env
        .cmd(&["todo", "apply", r#"{"op":"done"}"#])
        .output()
        .unwrap();
    assert_eq!(fs::read(&db).unwrap(), before);
    drop(read_only);
    let rendered = common::render(&["todo", "apply", r#"{"op":"done"}"#], &output);
    assert_eq!(output.status.code(), Some(3), "{rendered}");
    assert!(rendered.contains("read-only"), "{rendered}");
    assert!(env.ok(&["todo", "view"]).contains("[/] Keep me"));
}
