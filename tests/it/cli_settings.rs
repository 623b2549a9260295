//! End-to-end: settings from a file, `$GOALKEEPER_CONFIG` and `--set`, and
//! how each gate and option changes what the agent receives.

use crate::common;

use std::fs;

use common::TestEnv;

fn setup(env: &TestEnv) {
    env.ok(&["goal", "set", "Ship it"]);
    env.ok(&[
        "todo", "init", "--item", "One", "--item", "Two", "--item", "Three",
    ]);
}

#[test]
fn bad_settings_are_refused_by_name() {
    let env = TestEnv::new();
    fs::write(
        env.dir().join("config.toml"),
        "[todo]\nenbled = false\neager = \"sometimes\"\n[goal.continuation]\nmax_idle = 0\n",
    )
    .unwrap();
    let steps = [
        env.run(&["context"]),
        env.run(&["--config", "missing.toml", "context"]),
        env.run(&[
            "--config",
            "/dev/null",
            "--set",
            "todo.reminders.max=-1",
            "context",
        ]),
        env.run(&["--config", "/dev/null", "--set", "todo.enabled", "context"]),
        env.run(&[
            "--config",
            "/dev/null",
            "--set",
            "prompts.dir=nowhere",
            "--set",
            "wat=1",
            "context",
        ]),
    ];
    let text = env.normalize(&steps.join("\n"));
    assert_snapshot!("cli_settings_errors", text);
    for step in &steps {
        assert!(step.ends_with("[exit status: 2]\n"), "{step}");
    }
}

#[test]
fn settings_change_what_the_agent_receives() {
    let env = TestEnv::new();
    setup(&env);
    let full = env.ok(&["context"]);
    assert!(full.contains("<todo_context>"));
    let no_todo = env.ok(&["--set", "todo.enabled=false", "context"]);
    assert!(no_todo.starts_with("<goal>") && !no_todo.contains("<todo_context>"));
    assert_eq!(env.ok(&["--set", "goal.enabled=false", "context"]), "");
    let read_only = env.ok(&[
        "--set",
        "todo.context.inactive_tool=read-only",
        "context",
        "--active-tools",
        "goal",
    ]);
    assert!(read_only.contains("shown read-only"), "{read_only}");
    let bounded = env.ok(&["--set", "todo.context.max_tasks=2", "todo", "context"]);
    assert!(bounded.contains("Showing 2 of 3 tasks"), "{bounded}");

    // Legacy boolean `todo.eager` still works, from a file.
    fs::write(env.dir().join("config.toml"), "[todo]\neager = true\n").unwrap();
    let event = r#"{"session_id":"s1","hook_event_name":"UserPromptSubmit","prompt":"hi"}"#;
    let out = env
        .cmd(&["hook", "claude-code"])
        .write_stdin(event)
        .output()
        .unwrap();
    let reply = String::from_utf8(out.stdout).unwrap();
    assert!(
        reply.contains("Before anything else, make one `mcp__goalkeeper__todo` call"),
        "{reply}"
    );
}

#[test]
fn prompts_name_the_tools_as_the_host_shows_them() {
    let env = TestEnv::new();
    setup(&env);
    let plain = env.ok(&["context"]);
    assert!(plain.contains("call `todo` first"), "{plain}");
    let claude = env.ok(&[
        "context",
        "--active-tools",
        "mcp__goalkeeper__todo,mcp__goalkeeper__goal",
    ]);
    assert!(
        claude.contains("call `mcp__goalkeeper__todo` first"),
        "{claude}"
    );
    assert!(!claude.contains("`todo`"), "{claude}");
    // Only the names differ.
    assert_eq!(claude.replace("mcp__goalkeeper__", ""), plain);
}

#[test]
fn prompt_overrides_come_from_prompts_dir() {
    let env = TestEnv::new();
    setup(&env);
    let dir = env.dir().join("prompts");
    fs::create_dir(&dir).unwrap();
    fs::write(
        dir.join("goal-active.md"),
        "GOAL: {{objective}} ({{time_used}})\n",
    )
    .unwrap();
    fs::write(env.dir().join("config.toml"), "prompts.dir = \"prompts\"\n").unwrap();
    let out = env.ok(&["context", "--active-tools", "goal"]);
    assert_eq!(out, "GOAL: Ship it (0s)\n");
    let rendered = env.ok(&[
        "prompt",
        "render",
        "todo-error-reminder",
        "--data",
        r#"{"error":"boom"}"#,
    ]);
    assert!(rendered.starts_with("<todo_error>\nYour last `todo` call was rejected"));
    let bad = env.run(&["prompt", "render", "goal-active", "--data", "{}"]);
    assert!(
        bad.contains("cannot render prompt goal-active") && bad.ends_with("[exit status: 2]\n"),
        "{bad}"
    );
}

/// A subcommand's help: its own options, then the global ones under their
/// own heading.
#[test]
fn a_subcommand_help_lists_the_global_options_apart() {
    let env = TestEnv::new();
    let help = env.run(&["todo", "block", "--help"]);
    assert_snapshot!("cli_help_todo_block", env.normalize(&help));
}
