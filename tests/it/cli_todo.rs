//! End-to-end: the todo commands through the real binary, as a realistic
//! session and as a catalogue of failures (exit codes, messages, and that
//! nothing changed).

use crate::common;

use common::TestEnv;

fn transcript(env: &TestEnv, steps: &[&[&str]]) -> String {
    steps
        .iter()
        .map(|args| env.run(args))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn a_realistic_todo_session() {
    let env = TestEnv::new();
    let init = r#"{"op":"init","list":[{"phase":"Design","items":["Read the spec","Sketch the API"]},{"phase":"Build","items":["Write the parser","Write the store"]},{"phase":"Ship","items":["Tag the release"]}]}"#;
    let out = transcript(
        &env,
        &[
            &["todo", "apply", init],
            &["todo", "start", "Sketch the API"],
            &["todo", "done", "Write the parser"],
            &["todo", "apply", r#"{"op":"done","task":"Sketch the API"}"#],
            &[
                "todo",
                "block",
                "Write the store",
                "--reason",
                "waiting for the schema review\n(ask Dana)",
            ],
            &["todo", "unblock", "Write the store"],
            &[
                "todo",
                "append",
                "--phase",
                "Ship",
                "--item",
                "Write the changelog",
                "--item",
                "Announce it",
            ],
            &["todo", "apply", r#"{"op":"rm","task":"Announce it"}"#],
            &["todo", "rm", "Read the spec"],
            &["todo", "undo"],
            &["todo", "export"],
        ],
    );
    let exported = std::fs::read_to_string(env.dir().join("TODO.md")).unwrap();
    let edited = exported.replace("- [ ] Tag the release", "- [x] Tag the release");
    std::fs::write(env.dir().join("TODO.md"), edited).unwrap();
    let imported = transcript(
        &env,
        &[&["todo", "import"], &["todo", "log"], &["session", "list"]],
    );
    assert_snapshot!(
        "cli_todo_session",
        format!(
            "{out}\n--- TODO.md as exported ---\n{exported}--- after editing it ---\n{imported}"
        )
    );
}

#[test]
fn init_interleaves_phases_and_items() {
    let env = TestEnv::new();
    let out = env.run(&[
        "todo",
        "init",
        "--item",
        "Loose task",
        "--phase",
        "A",
        "--item",
        "a1",
        "--item",
        "a2",
        "--phase",
        "Empty",
        "--phase",
        "B",
        "--item",
        "b1",
    ]);
    assert_snapshot!("cli_todo_init_interleaved", out);
}

#[test]
fn rejected_calls_print_the_result_exit_1_and_change_nothing() {
    let env = TestEnv::new();
    env.ok(&[
        "todo",
        "init",
        "--phase",
        "P",
        "--item",
        "Run tests",
        "--item",
        "Build core",
    ]);
    let before = env.ok(&["--json", "todo", "view"]);
    let out = transcript(
        &env,
        &[
            &["todo", "apply", r#"{"op":"done","task":"task-3"}"#],
            &["todo", "apply", r#"{"op":"done","task":"run tests"}"#],
            &["todo", "apply", r#"{"op":"explode"}"#],
            &[
                "todo",
                "apply",
                r#"{"op":"done","task":"Run tests","because":"yes"}"#,
            ],
            &[
                "todo",
                "apply",
                r#"{"op":"append","phase":"P","items":["Build core","New","New"]}"#,
            ],
            &["todo", "apply", r#"{"op":"done""#],
            &["todo", "apply", r#"["done"]"#],
            &["todo", "apply", r#"{"items":["x"]}"#],
            &["todo", "start", "Nope"],
            &["todo", "block", "--phase", "Nope"],
        ],
    );
    assert_snapshot!("cli_todo_rejections", out);
    assert_eq!(env.ok(&["--json", "todo", "view"]), before);
}

#[test]
fn usage_and_storage_errors_have_their_exit_codes() {
    let env = TestEnv::new();
    std::fs::create_dir(env.dir().join("dir.db")).unwrap();
    std::fs::write(env.dir().join("notes.txt"), "not a database at all\n").unwrap();
    let out = transcript(
        &env,
        &[
            &["--session", "bad id", "todo", "view"],
            &["todo", "frobnicate"],
            &["todo", "block"],
            &["--db", "dir.db", "todo", "view"],
            &["--db", "notes.txt", "todo", "view"],
            &["todo", "import", "missing.md"],
            &["todo", "undo"],
            &["session", "rm", "nobody"],
        ],
    );
    assert_snapshot!("cli_todo_errors", out);
    assert_eq!(
        std::fs::read_to_string(env.dir().join("notes.txt")).unwrap(),
        "not a database at all\n"
    );
}

#[test]
fn a_bad_markdown_import_changes_nothing() {
    let env = TestEnv::new();
    env.ok(&["todo", "init", "--item", "Keep me"]);
    std::fs::write(
        env.dir().join("TODO.md"),
        "# A\n- [x] one\n- [?] two\nhello\n- [ ] one\n",
    )
    .unwrap();
    let out = env.run(&["todo", "import"]);
    assert_snapshot!("cli_todo_bad_import", out);
    assert!(env.ok(&["todo", "view"]).contains("Keep me"));
    assert!(env.ok(&["todo", "log"]).lines().count() == 1);
}

#[test]
fn stdin_calls_are_limited_and_must_be_utf8() {
    let env = TestEnv::new();
    let big = format!(r#"{{"op":"view","pad":"{}"}}"#, "x".repeat(2 * 1024 * 1024));
    let out = env.run_stdin(&["todo", "apply", "-"], &big);
    assert!(out.contains("larger than 1048576 bytes"), "{out}");
    assert!(out.ends_with("[exit status: 2]\n"), "{out}");
    let output = env
        .cmd(&["todo", "apply"])
        .write_stdin(vec![b'{', 0xff, b'}'])
        .output()
        .unwrap();
    let rendered = common::render(&["todo", "apply"], &output);
    assert_snapshot!("cli_todo_stdin_not_utf8", rendered);
    assert!(!env.db().exists() || env.ok(&["todo", "log"]).starts_with("No events"));
}

#[test]
fn sessions_are_listed_shown_and_removed() {
    let env = TestEnv::new();
    env.ok(&["--session", "alpha", "todo", "init", "--item", "One"]);
    env.ok(&["--session", "beta", "goal", "set", "Beta's goal"]);
    let out = transcript(
        &env,
        &[
            &["session", "list"],
            &["session", "show", "alpha"],
            &["--session", "beta", "session", "show"],
            &["session", "rm", "alpha"],
            &["session", "list"],
            &["session", "show", "alpha"],
        ],
    );
    assert_snapshot!("cli_sessions", out);
    assert!(
        env.ok(&["--session", "alpha", "todo", "view"])
            .contains("Todo list is empty.")
    );
}
