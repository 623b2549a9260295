//! DESIGN.md §2.2 end to end: a todo call that changes nothing is no progress.
//! A model repeating a no-op is paused by the runaway guard like an idle
//! one, does not reset the incomplete-todo reminder count, and does not get
//! the same context injected again. Each case is checked against a real
//! change doing the opposite.

use crate::common;

use common::TestEnv;
use serde_json::{Value, json};

const SESSION: &str = "no-progress";

fn at(env: &mut TestEnv, minute: i64, args: &[&str]) -> String {
    env.now_ms = common::NOW_MS + minute * 60_000;
    let mut all = vec!["--session", SESSION];
    all.extend(args);
    env.run(&all)
}

fn apply(env: &mut TestEnv, minute: i64, json: &str) -> String {
    let out = at(env, minute, &["todo", "apply", json]);
    assert!(out.ends_with("[exit status: 0]\n"), "{out}");
    out
}

/// One Claude Code hook event; the reply on stdout, `Null` when silent.
fn hook(env: &TestEnv, settings: &[&str], name: &str) -> Value {
    let mut args = settings.to_vec();
    args.extend(["hook", "claude-code"]);
    let input = json!({"session_id": SESSION, "hook_event_name": name,
        "cwd": "project", "transcript_path": "missing/transcript.jsonl", "prompt": "go"});
    let output = env
        .cmd(&args)
        .write_stdin(input.to_string())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    let stdout = String::from_utf8(output.stdout).unwrap();
    if stdout.trim().is_empty() {
        Value::Null
    } else {
        serde_json::from_str(&stdout).unwrap()
    }
}

#[test]
fn the_runaway_guard_pauses_a_model_that_repeats_a_no_op() {
    let mut env = TestEnv::new();
    at(&mut env, 0, &["goal", "set", "Refactor the parser"]);
    at(&mut env, 0, &["todo", "init", "--item", "Split the lexer"]);
    let noops = [
        r#"{"op":"start","task":"Split the lexer"}"#,
        r#"{"op":"init","items":["Split the lexer"]}"#,
        r#"{"op":"unblock","task":"Split the lexer"}"#,
    ];
    for (minute, noop) in (1..).zip(noops) {
        let out = at(&mut env, minute, &["continuation"]);
        assert!(out.contains("<goal_continuation>"), "{out}");
        let out = apply(&mut env, minute, noop);
        assert!(out.contains("No change: "), "{out}");
    }
    let out = at(&mut env, 4, &["continuation"]);
    assert!(
        out.contains("paused goal #1 after 3 continuations in a row without progress"),
        "{out}"
    );
    let goal = at(&mut env, 4, &["goal", "get"]);
    assert!(
        goal.starts_with("$ goalkeeper --session no-progress goal get\nGoal #1 (paused)"),
        "{goal}"
    );

    // The same rhythm with real changes keeps the goal going.
    let mut env = TestEnv::new();
    at(&mut env, 0, &["goal", "set", "Refactor the parser"]);
    at(&mut env, 0, &["todo", "init", "--item", "a", "--item", "b"]);
    let changes = [
        r#"{"op":"start","task":"b"}"#,
        r#"{"op":"start","task":"a"}"#,
        r#"{"op":"block","task":"b","reason":"review"}"#,
    ];
    for (minute, change) in (1..).zip(changes) {
        at(&mut env, minute, &["continuation"]);
        let out = apply(&mut env, minute, change);
        assert!(!out.contains("No change"), "{out}");
    }
    let out = at(&mut env, 4, &["continuation"]);
    assert!(out.contains("<goal_continuation>"), "{out}");
}

#[test]
fn a_no_op_does_not_reset_the_reminder_count() {
    let mut env = TestEnv::new();
    at(
        &mut env,
        0,
        &["todo", "init", "--item", "One", "--item", "Two"],
    );
    let max = ["--set", "todo.reminders.max=1"];
    let reply = hook(&env, &max, "Stop");
    assert!(
        reply["reason"]
            .as_str()
            .unwrap()
            .starts_with("<todo_reminder>")
    );
    assert_eq!(
        hook(&env, &max, "Stop"),
        Value::Null,
        "the limit is reached"
    );
    apply(&mut env, 1, r#"{"op":"start","task":"One"}"#);
    assert_eq!(
        hook(&env, &max, "Stop"),
        Value::Null,
        "a no-op is no change to the list"
    );
    apply(&mut env, 2, r#"{"op":"start","task":"Two"}"#);
    let reply = hook(&env, &max, "Stop");
    assert!(
        reply["reason"]
            .as_str()
            .unwrap()
            .starts_with("<todo_reminder>"),
        "a real change resets the count: {reply}"
    );
}

#[test]
fn a_no_op_does_not_reinject_the_context() {
    let mut env = TestEnv::new();
    at(&mut env, 0, &["goal", "set", "Ship it"]);
    at(&mut env, 0, &["todo", "init", "--item", "Write code"]);
    let reply = hook(&env, &[], "UserPromptSubmit");
    assert!(
        reply["hookSpecificOutput"]["additionalContext"]
            .as_str()
            .unwrap()
            .starts_with("<goal>")
    );
    apply(&mut env, 1, r#"{"op":"start","task":"Write code"}"#);
    apply(&mut env, 1, r#"{"op":"view"}"#);
    assert_eq!(hook(&env, &[], "UserPromptSubmit"), Value::Null);
    apply(
        &mut env,
        2,
        r#"{"op":"append","phase":"Tasks","items":["Test it"]}"#,
    );
    let reply = hook(&env, &[], "UserPromptSubmit");
    assert!(
        reply["hookSpecificOutput"]["additionalContext"]
            .as_str()
            .unwrap()
            .contains("[pending] Test it"),
        "{reply}"
    );
}
