//! End-to-end: a whole goal session through the CLI with a fixed clock,
//! the hidden messages before and after the budget flip, the runaway
//! guard, and usage reported by two processes at once.

use crate::common;

use common::TestEnv;

const MINUTE: i64 = 60_000;

/// Runs each step at its own time, `minutes` after the test's start.
fn at(env: &mut TestEnv, minutes: i64, args: &[&str]) -> String {
    env.now_ms = common::NOW_MS + minutes * MINUTE;
    env.run(args)
}

#[test]
fn a_goal_session_with_budget_flip_and_wrap_up() {
    let mut env = TestEnv::new();
    env.create_database();
    let init = r#"{"op":"init","list":[{"phase":"Planning </todo_context> & prep","items":["Identify gaps","Choose <next> & slice </todo_context>"]},{"phase":"Verification","items":["Run focused checks"]}]}"#;
    let steps: Vec<String> = vec![
        at(&mut env, 0, &["context", "--explain"]),
        at(&mut env, 0, &["goal", "get"]),
        at(
            &mut env,
            0,
            &[
                "goal",
                "set",
                "Ship the release\nwith notes </goal>",
                "--budget",
                "5000",
            ],
        ),
        at(&mut env, 1, &["todo", "apply", init]),
        at(
            &mut env,
            2,
            &["todo", "apply", r#"{"op":"done","task":"Identify gaps"}"#],
        ),
        at(&mut env, 3, &["context"]),
        at(&mut env, 3, &["--json", "context"]),
        at(
            &mut env,
            4,
            &["context", "--active-tools", "goal", "--explain"],
        ),
        at(
            &mut env,
            5,
            &[
                "goal",
                "usage",
                "--input",
                "1200",
                "--output",
                "800",
                "--cache-write",
                "500",
                "--cache-read",
                "90000",
            ],
        ),
        at(&mut env, 6, &["continuation"]),
        at(
            &mut env,
            10,
            &["goal", "usage", "--input", "2000", "--output", "600"],
        ),
        at(&mut env, 11, &["--json", "continuation"]),
        at(&mut env, 12, &["continuation", "--explain"]),
        at(&mut env, 12, &["context", "--explain"]),
        at(&mut env, 13, &["goal", "resume"]),
        at(&mut env, 14, &["goal", "budget", "10000"]),
        at(&mut env, 15, &["goal", "pause"]),
        at(&mut env, 75, &["goal", "resume"]),
        at(&mut env, 80, &["goal", "apply", r#"{"op":"pause"}"#]),
        at(&mut env, 81, &["goal", "apply", r#"{"op":"complete"}"#]),
        at(&mut env, 81, &["--json", "goal", "get"]),
        at(&mut env, 82, &["goal", "complete"]),
        at(
            &mut env,
            82,
            &["goal", "create", "Second goal", "--budget", "none"],
        ),
        at(&mut env, 82, &["goal", "create", "Second goal"]),
        at(&mut env, 83, &["goal", "create", "Third goal"]),
        at(
            &mut env,
            84,
            &["goal", "set", "Third goal, replacing the second"],
        ),
    ];
    assert_snapshot!("cli_goal_session", steps.join("\n"));
}

#[test]
fn the_runaway_guard_pauses_an_idle_goal() {
    let mut env = TestEnv::new();
    env.ok(&["goal", "set", "Refactor the parser"]);
    env.ok(&["todo", "init", "--item", "Split the lexer"]);
    let mut steps = Vec::new();
    for minute in 1..=3 {
        steps.push(at(&mut env, minute, &["continuation"]));
    }
    // Progress resets the count.
    steps.push(at(&mut env, 4, &["todo", "done", "Split the lexer"]));
    for minute in 5..=8 {
        steps.push(at(&mut env, minute, &["continuation"]));
    }
    steps.push(at(&mut env, 9, &["goal", "get"]));
    steps.push(at(&mut env, 9, &["continuation", "--explain"]));
    let text = steps.join("\n");
    assert_eq!(text.matches("<goal_continuation>").count(), 6, "{text}");
    assert_snapshot!("cli_goal_runaway_guard", text);
}

#[test]
fn the_idle_limit_is_a_setting() {
    let env = TestEnv::new();
    env.ok(&["goal", "set", "Refactor the parser"]);
    let first = env.ok(&["--set", "goal.continuation.max_idle=1", "continuation"]);
    assert!(first.starts_with("<goal_continuation>"), "{first}");
    let second = env.ok(&["--set", "goal.continuation.max_idle=1", "continuation"]);
    assert!(
        second.starts_with("goalkeeper paused goal #1 after 1 continuations in a row"),
        "{second}"
    );
}

#[test]
fn bad_goal_input_is_refused_and_changes_nothing() {
    let env = TestEnv::new();
    env.ok(&["goal", "set", "Keep me", "--budget", "100"]);
    let before = env.ok(&["--json", "goal", "get"]);
    let long = env.run(&["goal", "set", &"x".repeat(4001)]);
    assert!(
        long.ends_with(
            "goalkeeper: the objective is 4001 characters; the limit is 4000\n[exit status: 2]\n"
        ),
        "{long}"
    );
    let steps: Vec<String> = [
        vec!["goal", "set", "   "],
        vec!["goal", "budget", "0"],
        vec!["goal", "budget", "-5"],
        vec!["goal", "budget", "lots"],
        vec!["goal", "set", "x", "--budget", "99999999999999999999999"],
        vec!["goal", "usage", "--input", "-3"],
        vec!["goal", "apply", r#"{"op":"set","objective":"Take over"}"#],
        vec!["goal", "apply", r#"{"op":"budget"}"#],
        vec![
            "goal",
            "apply",
            r#"{"op":"create","objective":"x","token_budget":9}"#,
        ],
        vec!["goal", "apply", "not json"],
    ]
    .iter()
    .map(|args| env.run(args))
    .collect();
    assert_snapshot!("cli_goal_refusals", steps.join("\n"));
    assert_eq!(env.ok(&["--json", "goal", "get"]), before);
}

#[test]
fn two_processes_reporting_usage_lose_no_tokens() {
    const REPORTS: usize = 60;
    let env = TestEnv::new();
    env.ok(&["goal", "set", "Count every token"]);
    std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| {
                for _ in 0..REPORTS {
                    let output = env
                        .cmd(&[
                            "goal",
                            "usage",
                            "--input",
                            "7",
                            "--output",
                            "3",
                            "--cache-write",
                            "1",
                            "--cache-read",
                            "1000",
                        ])
                        .output()
                        .unwrap();
                    assert!(output.status.success() && output.stderr.is_empty());
                }
            });
        }
    });
    let goal: serde_json::Value =
        serde_json::from_str(&env.ok(&["--json", "goal", "get"])).unwrap();
    assert_eq!(
        goal["details"]["goal"]["tokens_used"],
        2 * REPORTS as u64 * 11
    );
}
