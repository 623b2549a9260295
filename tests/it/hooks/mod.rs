//! End-to-end: the Claude Code hooks, the status line and the installer
//! through the real binary.

mod evidence;
mod install;

use crate::common;

use std::io::Write;
use std::path::Path;

use common::TestEnv;
use serde_json::{Value, json};

const SESSION: &str = "0f6c2d1e-claude";

fn event(name: &str, extra: Value) -> String {
    let mut event = json!({
        "session_id": SESSION,
        "hook_event_name": name,
        // Relative: under the test's directory, where the hook runs and
        // where nothing is at either path.
        "cwd": "project",
        "transcript_path": "missing/transcript.jsonl",
    });
    for (k, v) in extra.as_object().unwrap() {
        event[k] = v.clone();
    }
    event.to_string()
}

/// Runs one hook event and returns (stdout JSON or Null, stderr), asserting
/// the hook exited 0 whatever happened.
fn hook(env: &TestEnv, args: &[&str], input: &str) -> (Value, String) {
    let mut all = args.to_vec();
    all.extend(["hook", "claude-code"]);
    let output = env.cmd(&all).write_stdin(input).output().unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        common::render(&all, &output)
    );
    let stdout = String::from_utf8(output.stdout).unwrap();
    let value = if stdout.trim().is_empty() {
        Value::Null
    } else {
        serde_json::from_str(&stdout).unwrap()
    };
    (value, String::from_utf8(output.stderr).unwrap())
}

fn context_of(reply: &Value) -> &str {
    reply["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap_or_else(|| panic!("no additionalContext in {reply}"))
}

fn as_session(env: &TestEnv, args: &[&str]) -> String {
    let mut all = vec!["--session", SESSION];
    all.extend(args);
    env.ok(&all)
}

fn write_transcript(path: &Path, lines: &[Value]) {
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .unwrap();
    for line in lines {
        writeln!(file, "{line}").unwrap();
    }
}

fn assistant(id: &str, input: u64, output: u64, cache_write: u64, cache_read: u64) -> Value {
    json!({"type": "assistant", "message": {"id": id, "role": "assistant", "usage": {
        "input_tokens": input, "output_tokens": output,
        "cache_creation_input_tokens": cache_write, "cache_read_input_tokens": cache_read}}})
}

#[test]
fn session_start_reinjects_after_compaction() {
    let env = TestEnv::new();
    let (reply, _) = hook(
        &env,
        &[],
        &event("SessionStart", json!({"source": "compact"})),
    );
    assert_eq!(reply, Value::Null, "nothing to re-inject yet");

    as_session(
        &env,
        &[
            "todo",
            "init",
            "--phase",
            "Build",
            "--item",
            "Parse </todo_context>",
            "--item",
            "Test",
        ],
    );
    let (reply, _) = hook(
        &env,
        &[],
        &event("SessionStart", json!({"source": "compact"})),
    );
    let text = context_of(&reply);
    assert!(text.starts_with("<todo_context>"), "{text}");
    assert_eq!(text.matches("</todo_context>").count(), 1);
    assert_eq!(reply["hookSpecificOutput"]["hookEventName"], "SessionStart");

    as_session(&env, &["goal", "set", "Ship it"]);
    let (reply, _) = hook(
        &env,
        &[],
        &event("SessionStart", json!({"source": "resume"})),
    );
    let text = context_of(&reply);
    assert!(text.starts_with("<goal>"), "{text}");
    assert!(text.contains("<todo_context>"), "{text}");

    let (reply, _) = hook(
        &env,
        &[],
        &event("SessionStart", json!({"source": "startup"})),
    );
    assert_eq!(reply, Value::Null);
}

#[test]
fn user_prompt_submit_sends_each_reminder_once_and_context_on_change() {
    let env = TestEnv::new();
    let eager = ["--set", "todo.eager=always"];
    let (reply, _) = hook(
        &env,
        &eager,
        &event("UserPromptSubmit", json!({"prompt": "hi"})),
    );
    assert!(context_of(&reply).starts_with("<todo_plan>"), "{reply}");
    let (reply, _) = hook(
        &env,
        &eager,
        &event("UserPromptSubmit", json!({"prompt": "again"})),
    );
    assert_eq!(reply, Value::Null, "the eager reminder is sent once");

    // A rejected agent call leaves a reminder for the next prompt, once.
    let output = env
        .cmd(&[
            "--session",
            SESSION,
            "todo",
            "apply",
            r#"{"op":"done","task":"task-3"}"#,
        ])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let (reply, _) = hook(
        &env,
        &[],
        &event("UserPromptSubmit", json!({"prompt": "go"})),
    );
    let text = context_of(&reply);
    assert!(text.starts_with("<todo_error>"), "{text}");
    assert!(text.contains("task \"task-3\" not found"), "{text}");
    let (reply, _) = hook(
        &env,
        &[],
        &event("UserPromptSubmit", json!({"prompt": "go"})),
    );
    assert_eq!(reply, Value::Null);

    // The goal-mode context goes in when the goal or the list changed.
    as_session(&env, &["goal", "set", "Ship it"]);
    let (reply, _) = hook(
        &env,
        &[],
        &event("UserPromptSubmit", json!({"prompt": "go"})),
    );
    assert!(context_of(&reply).starts_with("<goal>"));
    let (reply, _) = hook(
        &env,
        &[],
        &event("UserPromptSubmit", json!({"prompt": "go"})),
    );
    assert_eq!(reply, Value::Null, "never the same context twice");
    as_session(&env, &["todo", "init", "--item", "First step"]);
    let (reply, _) = hook(
        &env,
        &[],
        &event("UserPromptSubmit", json!({"prompt": "go"})),
    );
    assert!(context_of(&reply).contains("[in_progress] First step"));
}

#[test]
fn stop_continues_counts_usage_once_and_wraps_up_once() {
    let env = TestEnv::new();
    let transcript = env.dir().join("transcript.jsonl");
    let path = transcript.display().to_string();
    as_session(&env, &["goal", "set", "Ship it", "--budget", "1000"]);
    as_session(&env, &["todo", "init", "--item", "Write code"]);
    write_transcript(
        &transcript,
        &[
            json!({"type": "user", "message": {"role": "user", "content": "go"}}),
            assistant("msg_1", 300, 100, 50, 9000),
            assistant("msg_1", 300, 100, 50, 9000),
        ],
    );
    let stop = event(
        "Stop",
        json!({"transcript_path": path, "stop_hook_active": false}),
    );
    let (reply, _) = hook(&env, &[], &stop);
    assert_eq!(reply["decision"], "block");
    assert!(
        reply["reason"]
            .as_str()
            .unwrap()
            .starts_with("<goal_continuation>")
    );
    assert!(
        reply["reason"]
            .as_str()
            .unwrap()
            .contains("Budget: 450 of 1000 tokens used")
    );

    // The same transcript again: nothing counted twice.
    let (reply, _) = hook(&env, &[], &stop);
    assert!(
        reply["reason"]
            .as_str()
            .unwrap()
            .contains("Budget: 450 of 1000 tokens used")
    );

    // A new message crosses the budget: the wrap-up comes once.
    write_transcript(&transcript, &[assistant("msg_2", 500, 100, 0, 20000)]);
    let (reply, _) = hook(&env, &[], &stop);
    assert_eq!(reply["decision"], "block");
    assert!(
        reply["reason"]
            .as_str()
            .unwrap()
            .starts_with("<goal_budget_limit>")
    );
    // Then the agent may stop: no reminder about the open todo contradicts
    // the wrap-up (DESIGN.md §3.4).
    let (reply, _) = hook(&env, &[], &stop);
    assert_eq!(reply, Value::Null);
    let goal: Value = serde_json::from_str(&as_session(&env, &["--json", "goal", "get"])).unwrap();
    assert_eq!(goal["details"]["goal"]["tokens_used"], 1050);
    assert_eq!(goal["details"]["goal"]["status"], "budget-limited");
}

#[test]
fn stop_reminds_about_open_todos_up_to_the_limit() {
    let env = TestEnv::new();
    let stop = event("Stop", json!({}));
    let (reply, _) = hook(&env, &[], &stop);
    assert_eq!(reply, Value::Null, "no todos, no goal: nothing");
    as_session(&env, &["todo", "init", "--item", "One", "--item", "Two"]);
    let max = ["--set", "todo.reminders.max=2"];
    for _ in 0..2 {
        let (reply, _) = hook(&env, &max, &stop);
        assert!(
            reply["reason"]
                .as_str()
                .unwrap()
                .starts_with("<todo_reminder>")
        );
    }
    let (reply, _) = hook(&env, &max, &stop);
    assert_eq!(reply, Value::Null, "the limit is reached");
    as_session(&env, &["todo", "done", "One"]);
    let (reply, _) = hook(&env, &max, &stop);
    let reason = reply["reason"].as_str().unwrap();
    assert!(
        reason.contains("1 open of 2"),
        "a changed list resets the count: {reason}"
    );
    assert!(!reason.contains("One"), "{reason}");
    let (reply, _) = hook(&env, &["--set", "todo.reminders=false"], &stop);
    assert_eq!(reply, Value::Null);
    as_session(&env, &["todo", "done"]);
    let (reply, _) = hook(&env, &[], &stop);
    assert_eq!(reply, Value::Null, "nothing open: nothing");
}

#[test]
fn bad_hook_input_never_fails_the_agent() {
    let env = TestEnv::new();
    let cases: Vec<(&str, String)> = vec![
        ("not json", "{not json".into()),
        ("unknown event", event("Notification", json!({}))),
        ("no session", json!({"hook_event_name": "Stop"}).to_string()),
        (
            "bad session id",
            json!({"hook_event_name": "Stop", "session_id": "../../etc"}).to_string(),
        ),
        ("missing transcript", event("Stop", json!({}))),
        ("empty stdin", String::new()),
    ];
    let mut rendered = String::new();
    for (name, input) in cases {
        let (reply, stderr) = hook(&env, &[], &input);
        assert_eq!(reply, Value::Null, "{name}");
        rendered.push_str(&format!("## {name}\n{stderr}\n"));
    }
    let output = env
        .cmd(&["hook", "claude-code"])
        .write_stdin(vec![0xff, 0xfe])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    rendered.push_str(&format!(
        "## invalid UTF-8\n{}",
        String::from_utf8_lossy(&output.stderr)
    ));
    let rendered = env.normalize(&rendered);
    assert_snapshot!("hooks_bad_input", rendered);
}

#[test]
fn the_status_line_follows_the_session() {
    let env = TestEnv::new();
    let input = json!({"session_id": SESSION, "model": {"display_name": "Opus"}}).to_string();
    let line = |env: &TestEnv| {
        env.cmd(&["statusline"])
            .write_stdin(input.clone())
            .output()
            .unwrap()
    };
    let output = line(&env);
    assert!(output.status.success() && output.stdout.is_empty());
    as_session(
        &env,
        &["goal", "set", "Ship the release", "--budget", "100000"],
    );
    as_session(
        &env,
        &["todo", "init", "--item", "a", "--item", "b", "--item", "c"],
    );
    as_session(&env, &["todo", "done", "a"]);
    as_session(
        &env,
        &["goal", "usage", "--input", "12000", "--output", "300"],
    );
    let output = line(&env);
    assert_eq!(
        String::from_utf8(output.stdout).unwrap(),
        "◎ Ship the release · todos 1/3 · 12.3k/100k tok · 0s\n"
    );
    let bad = env
        .cmd(&["statusline"])
        .write_stdin("nope")
        .output()
        .unwrap();
    assert!(bad.status.success() && bad.stdout.is_empty());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("status line input is not JSON"));
}

#[test]
fn a_hook_exits_0_with_spoilt_variables_and_a_closed_stderr() {
    let env = TestEnv::new();
    env.ok(&["--session", "s1", "goal", "set", "Survive"]);
    let event = json!({"session_id": "s1", "hook_event_name": "UserPromptSubmit", "cwd": env.dir(), "prompt": "hi"});
    // GOALKEEPER_SESSION and GOALKEEPER_NOW are not the hook's to use: the
    // session comes from the event, the clock falls back to the system's.
    let output = env
        .cmd(&["hook", "claude-code"])
        .env("GOALKEEPER_SESSION", "my project")
        .env("GOALKEEPER_NOW", "abc")
        .write_stdin(event.to_string())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(stdout.contains("Survive"), "{stdout}");
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(stderr.contains("GOALKEEPER_SESSION ignored"), "{stderr}");
    assert!(stderr.contains("using the system clock"), "{stderr}");
    // An empty GOALKEEPER_DB used to fail argument parsing (exit 2, which
    // Claude Code reads as "block the prompt").
    let output = env
        .cmd(&["hook", "claude-code"])
        .env("GOALKEEPER_DB", "")
        .write_stdin(event.to_string())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    // A closed stderr: the notes have nowhere to go, the exit status stays 0.
    let output = std::process::Command::new("sh")
        .arg("-c")
        .arg("exec 2>&-; exec \"$0\" hook claude-code")
        .arg(env!("CARGO_BIN_EXE_goalkeeper"))
        .env("GOALKEEPER_DB", env.db())
        .env("GOALKEEPER_NOW", "abc")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write;
            child.stdin.take().unwrap().write_all(b"not json")?;
            child.wait_with_output()
        })
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert!(output.stdout.is_empty());
}

/// The Bash guard through the real hook: an agent's shell may run the
/// goalkeeper commands that act as the agent or only read, and nothing
/// that acts as the person, however it is spelt; what it cannot read is
/// refused too. The reasons the model reads are snapshotted, and a
/// refused command changes nothing.
#[test]
fn the_bash_guard_refuses_every_command_that_acts_as_the_person() {
    let env = TestEnv::new();
    env.ok(&["goal", "set", "Keep this goal", "--budget", "5000"]);
    env.ok(&["todo", "init", "--item", "a", "--item", "b"]);
    let before = (
        env.ok(&["--json", "todo", "view"]),
        env.ok(&["--json", "goal"]),
    );
    let guard = |command: &str| {
        let event = json!({"hook_event_name": "PreToolUse", "session_id": "s",
            "cwd": env.dir(), "tool_name": "Bash", "tool_use_id": "t1",
            "tool_input": {"command": command}});
        let output = env
            .cmd(&["hook", "claude-code"])
            .write_stdin(event.to_string())
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(0));
        assert!(output.stderr.is_empty(), "{output:?}");
        let stdout = String::from_utf8(output.stdout).unwrap();
        if stdout.is_empty() {
            return None;
        }
        let reply: Value = serde_json::from_str(&stdout).unwrap();
        let out = &reply["hookSpecificOutput"];
        assert_eq!(out["hookEventName"], "PreToolUse");
        assert_eq!(out["permissionDecision"], "deny");
        Some(out["permissionDecisionReason"].as_str().unwrap().to_owned())
    };
    for allowed in [
        r#"goalkeeper --agent w1 todo apply '{"op":"done","task":"a"}'"#,
        "GOALKEEPER_AGENT=w1 goalkeeper --json todo view",
        "goalkeeper goal && goalkeeper context",
        "goalkeeper verify --task a",
        "grep -rn goalkeeper src",
        "sh -c 'cargo test' && git status | grep x",
    ] {
        assert_eq!(guard(allowed), None, "{allowed}");
    }
    let mut reasons = String::new();
    for refused in [
        "goalkeeper --agent w1 goal drop",
        "env X=1 goalkeeper --json --agent=w1 todo release a",
        "sh -c 'goalkeeper todo done a'",
        "goalkeeper goal check add true",
        "goalkeeper goal $WHAT",
        "$(which goalkeeper) hook claude-code < forged.json",
        "\"$(command -v goalkeeper)\" goal complete",
        "{goalkeeper,goal,complete}",
        "env -S 'goalkeeper goal check rm 1'",
        "echo 'goalkeeper goal complete' | sh",
        "bash <(echo goalkeeper goal complete)",
    ] {
        let reason = guard(refused).unwrap_or_else(|| panic!("{refused} was allowed"));
        reasons.push_str(&format!("$ {refused}\n{reason}\n\n"));
    }
    assert_snapshot!("hooks_bash_guard", reasons);
    assert_eq!(
        (
            env.ok(&["--json", "todo", "view"]),
            env.ok(&["--json", "goal"])
        ),
        before
    );
}
