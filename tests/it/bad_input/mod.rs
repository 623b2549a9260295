//! The bad-input catalogue (RELIABILITY.md lists it): hostile input across
//! the CLI, the tool JSON, the markdown importer, settings files and hook
//! stdin. Each case asserts its exit code, a clear message, and that the
//! stored state did not change (a rejected *agent* call is logged as
//! rejected, by design, and changes nothing else).

mod variables;

use crate::common;

use std::ffi::OsString;
use std::fs;
use std::os::unix::ffi::OsStringExt;

use common::TestEnv;
use serde_json::Value;

/// How a case should end.
struct Case {
    name: &'static str,
    args: Vec<String>,
    stdin: Vec<u8>,
    exit: i32,
    /// Fragments of stdout + stderr that name the problem and the fix.
    message: Vec<String>,
    /// Variables set for the command besides the test's own.
    env: Vec<(&'static str, OsString)>,
    /// A rejected agent call: one rejected event is logged.
    logged: bool,
    /// Files written into the test directory first.
    files: Vec<(&'static str, Vec<u8>)>,
}

fn case(name: &'static str, args: &[&str], exit: i32, message: &str) -> Case {
    Case {
        name,
        args: args.iter().map(|a| (*a).to_owned()).collect(),
        stdin: Vec::new(),
        exit,
        message: vec![message.to_owned()],
        env: Vec::new(),
        logged: false,
        files: Vec::new(),
    }
}

impl Case {
    fn stdin(mut self, bytes: impl Into<Vec<u8>>) -> Case {
        self.stdin = bytes.into();
        self
    }

    /// Another fragment the output must contain.
    fn also(mut self, message: &str) -> Case {
        self.message.push(message.to_owned());
        self
    }

    fn env(mut self, name: &'static str, value: &'static str) -> Case {
        self.env.push((name, value.into()));
        self
    }

    /// A variable set to bytes that need not be UTF-8.
    fn env_bytes(mut self, name: &'static str, value: &[u8]) -> Case {
        self.env.push((name, OsString::from_vec(value.to_vec())));
        self
    }

    fn logged(mut self) -> Case {
        self.logged = true;
        self
    }

    fn file(mut self, name: &'static str, bytes: impl Into<Vec<u8>>) -> Case {
        self.files.push((name, bytes.into()));
        self
    }
}

fn apply(name: &'static str, json: &str, message: &str) -> Case {
    case(name, &["todo", "apply", json], 1, message).logged()
}

fn goal_apply(name: &'static str, json: &str, message: &str) -> Case {
    case(name, &["goal", "apply", json], 1, message).logged()
}

fn import(name: &'static str, markdown: &str, message: &str) -> Case {
    case(name, &["todo", "import", "bad.md"], 1, message).file("bad.md", markdown)
}

fn settings(name: &'static str, toml: &str, message: &str) -> Case {
    case(name, &["--config", "bad.toml", "context"], 2, message).file("bad.toml", toml)
}

fn hook(name: &'static str, stdin: impl Into<Vec<u8>>, message: &str) -> Case {
    case(name, &["hook", "claude-code"], 0, message).stdin(stdin)
}

fn catalogue() -> Vec<Case> {
    let nested = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    let many: Vec<String> = (0..10_001).map(|i| format!("\"t{i}\"")).collect();
    let too_many = format!(r#"{{"op":"init","items":[{}]}}"#, many.join(","));
    let long_task = format!(
        r#"{{"op":"append","phase":"P","items":["{}"]}}"#,
        "x".repeat(1001)
    );
    let long_phase = format!(
        r#"{{"op":"append","phase":"{}","items":["x"]}}"#,
        "p".repeat(201)
    );
    let long_reason = format!(
        r#"{{"op":"block","task":"Build core","reason":"{}"}}"#,
        "r".repeat(1001)
    );
    let two_mib = format!(r#"{{"op":"view","pad":"{}"}}"#, "x".repeat(2 * 1024 * 1024));
    vec![
        // The command line.
        case(
            "session id with a slash",
            &["--session", "a/b", "todo", "view"],
            2,
            "invalid session id \"a/b\"",
        ),
        case(
            "session id of 129 characters",
            &["--session", &"s".repeat(129), "todo", "view"],
            2,
            "use 1-128 characters",
        ),
        case(
            "unknown subcommand",
            &["todo", "frob"],
            2,
            "unrecognized subcommand 'frob'",
        ),
        case(
            "negative budget",
            &["goal", "budget", "-5"],
            2,
            "the budget must be a positive whole number of tokens",
        ),
        case(
            "zero budget",
            &["goal", "budget", "0"],
            2,
            "the budget must be a positive whole number of tokens",
        ),
        case(
            "budget beyond 2^63",
            &["goal", "budget", "99999999999999999999"],
            2,
            "is too large; the limit is 9223372036854775807",
        ),
        case(
            "negative usage",
            &["goal", "usage", "--input", "-1"],
            2,
            "a token count must be a whole number of 0 or more",
        ),
        case(
            "usage that is not a number",
            &["goal", "usage", "--output", "12k"],
            2,
            "a token count must be a whole number",
        ),
        case(
            "empty objective",
            &["goal", "set", " \n "],
            2,
            "the objective is empty",
        ),
        case(
            "objective over 4,000 characters",
            &["goal", "set", &"o".repeat(4001)],
            2,
            "the objective is 4001 characters; the limit is 4000",
        ),
        case(
            "import of a missing file",
            &["todo", "import", "nope.md"],
            2,
            "cannot read nope.md",
        ),
        case(
            "import of a file that is not UTF-8",
            &["todo", "import", "latin1.md"],
            1,
            "it is not UTF-8 text",
        )
        .file("latin1.md", b"# Caf\xe9\n- [ ] x\n".to_vec()),
        case(
            "a directory as the database",
            &["--db", "dir.db", "todo", "view"],
            2,
            "is a directory; give the path of a database file",
        ),
        case(
            "a text file as the database",
            &["--db", "notes.txt", "todo", "view"],
            3,
            "is not a goalkeeper database (it does not start with the SQLite header)",
        )
        .file("notes.txt", "shopping list\n"),
        case(
            "a corrupt database file",
            &["--db", "corrupt.db", "todo", "view"],
            3,
            "is not a goalkeeper database",
        )
        .file(
            "corrupt.db",
            [b"SQLite format 3\0".as_slice(), &[0x5a; 4080]].concat(),
        ),
        case(
            "a prompts.dir that does not exist",
            &["--set", "prompts.dir=missing-prompts", "context"],
            2,
            "missing-prompts is not a directory",
        ),
        // The todo tool's JSON, as the agent sends it.
        apply(
            "truncated JSON",
            r#"{"op":"done","task":"Bui"#,
            "the call is not valid JSON",
        ),
        apply("deeply nested JSON", &nested, "recursion limit exceeded"),
        case(
            "a 2 MiB call on stdin",
            &["todo", "apply", "-"],
            2,
            "larger than 1048576 bytes",
        )
        .stdin(two_mib),
        case(
            "invalid UTF-8 on stdin",
            &["todo", "apply"],
            2,
            "not UTF-8 text",
        )
        .stdin(vec![b'{', 0xc3, 0x28, b'}']),
        case(
            "a raw NUL byte inside a string",
            &["todo", "apply", "-"],
            1,
            "control character",
        )
        .stdin("{\"op\":\"done\",\"task\":\"a\0b\"}")
        .logged(),
        apply(
            "a huge number where text belongs",
            r#"{"op":"done","task":1e999}"#,
            "the call is not valid JSON",
        ),
        apply(
            "a boolean where text belongs",
            r#"{"op":"done","task":true}"#,
            "field `task` must be a string, not a boolean",
        ),
        apply(
            "a number naming no task (read as text, then not found)",
            r#"{"op":"done","task":12345678901234567890}"#,
            "Repaired: read `task` 12345678901234567890, a number, as the text \"12345678901234567890\".",
        ),
        apply(
            "an unknown op",
            r#"{"op":"finish"}"#,
            "unknown op `finish`; use one of init, start",
        ),
        apply(
            "an unknown field",
            r#"{"op":"view","id":3}"#,
            "unknown field `id`; the accepted fields are op, list, task, phase, items, reason",
        ),
        apply(
            "op of the wrong type",
            r#"{"op":["done"]}"#,
            "field `op` must be a string",
        ),
        apply(
            "list that is not an array",
            r#"{"op":"init","list":"Build"}"#,
            "field `list` must be an array",
        ),
        apply(
            "items holding an object",
            r#"{"op":"append","phase":"P","items":["ok",{"a":1}]}"#,
            "field `items[1]` must be a string, not an object",
        ),
        apply(
            "task content over 1,000 characters",
            &long_task,
            "is 1001 characters; the limit is 1000",
        ),
        apply(
            "phase name over 200 characters",
            &long_phase,
            "is 201 characters; the limit is 200",
        ),
        apply(
            "blocker note over 1,000 characters",
            &long_reason,
            "is 1001 characters; the limit is 1000",
        ),
        apply(
            "duplicate items in init",
            r#"{"op":"init","items":["a","a"]}"#,
            "task \"a\" appears twice",
        ),
        apply(
            "append of an existing task",
            r#"{"op":"append","phase":"P","items":["Build core"]}"#,
            "task \"Build core\" already exists",
        ),
        apply("an empty object", "{}", "field `op` is missing"),
        apply("a JSON array", "[]", "the call must be a JSON object"),
        apply(
            "a JSON string",
            "\"done\"",
            "the call must be a JSON object",
        ),
        apply(
            "more than 10,000 tasks (with the 2 open tasks an agent init keeps)",
            &too_many,
            "the list would hold 10003 tasks; the limit is 10000",
        ),
        apply(
            "a generated id for a task",
            r#"{"op":"done","task":"task-3"}"#,
            "tasks have no ids or numbers",
        ),
        apply(
            "task and phase together",
            r#"{"op":"done","task":"Build core","phase":"P"}"#,
            "takes either `task` or `phase`, not both",
        ),
        // The goal tool's JSON, as the agent sends it.
        goal_apply(
            "an agent replacing the goal",
            r#"{"op":"set","objective":"mine now"}"#,
            "only the user can replace the goal",
        ),
        goal_apply(
            "an agent changing the budget",
            r#"{"op":"budget"}"#,
            "only the user can change the token budget",
        ),
        goal_apply(
            "an agent creating with a budget",
            r#"{"op":"create","objective":"x","token_budget":10}"#,
            "only the user can set a budget",
        ),
        goal_apply(
            "an agent dropping the goal",
            r#"{"op":"drop"}"#,
            "only the user can drop the goal",
        ),
        // The markdown importer.
        import(
            "an unknown marker",
            "# P\n- [?] x\n",
            "line 2: unknown marker `?`",
        ),
        import(
            "an unrecognised line",
            "# P\nhello\n",
            "line 2: unrecognised line `hello`",
        ),
        import(
            "the same task twice",
            "# P\n- [ ] x\n- [x] x\n",
            "line 3: task \"x\" is already on line 2",
        ),
        import(
            "a blocker on an open task",
            "# P\n- [ ] x <!-- blocker: y -->\n",
            "line 2:",
        ),
        import(
            "a seven-hash heading",
            "####### P\n",
            "line 1: unrecognised line",
        ),
        // Settings files.
        settings(
            "an unknown key",
            "[todo]\nenbled = true\n",
            "unknown key \"todo.enbled\"",
        ),
        settings(
            "a wrong type",
            "[todo]\nenabled = \"yes\"\n",
            "todo.enabled: expected",
        ),
        settings(
            "malformed TOML",
            "[todo\nenabled = true\n",
            "invalid TOML at line 1",
        ),
        settings(
            "an out-of-range number",
            "goal.continuation.max_idle = 0\n",
            "expected an integer >= 1, got 0",
        ),
        // A command is what clap reads, never a word anywhere in the line:
        // `hook`, `statusline` or `mcp` as a value leaves the command as
        // strict as without it.
        case(
            "the word hook as a task, with a spoilt GOALKEEPER_SESSION",
            &["todo", "append", "--phase", "P", "--item", "hook"],
            2,
            "invalid session id \"bad id!\": use 1-128 characters",
        )
        .env("GOALKEEPER_SESSION", "bad id!"),
        case(
            "the word statusline as a task, with a spoilt GOALKEEPER_SESSION",
            &["todo", "append", "--phase", "P", "--item", "statusline"],
            2,
            "invalid session id \"bad id!\": use 1-128 characters",
        )
        .env("GOALKEEPER_SESSION", "bad id!"),
        case(
            "the word hook after a budget that is no number",
            &["goal", "budget", "abc", "hook"],
            2,
            "unexpected argument 'hook' found",
        )
        .also("Usage: goalkeeper goal budget [OPTIONS] <BUDGET>"),
        case(
            "the word mcp as a goal, with --session-from and a spoilt GOALKEEPER_SESSION",
            &["--session-from", "claude-code", "goal", "set", "mcp"],
            2,
            "invalid session id \"bad id!\": use 1-128 characters",
        )
        .env("GOALKEEPER_SESSION", "bad id!"),
        // A variable that is not UTF-8 is named, as its own problem.
        case(
            "GOALKEEPER_AGENT that is not UTF-8",
            &["todo", "apply", r#"{"op":"done","task":"Build core"}"#],
            2,
            "goalkeeper: GOALKEEPER_AGENT is not UTF-8 text (\"w\u{fffd}1\"); set it to an agent name, or unset it\n[exit status: 2]",
        )
        .env_bytes("GOALKEEPER_AGENT", b"w\xff1"),
        case(
            "GOALKEEPER_SESSION that is not UTF-8",
            &["todo", "done", "Build core"],
            2,
            "goalkeeper: GOALKEEPER_SESSION is not UTF-8 text (\"s\u{fffd}\"); set it to a session id, or unset it\n[exit status: 2]",
        )
        .env_bytes("GOALKEEPER_SESSION", b"s\xff"),
        case(
            "GOALKEEPER_NOW that is not UTF-8",
            &["todo", "done", "Build core"],
            2,
            "goalkeeper: GOALKEEPER_NOW=\"1\u{fffd}\" is not a number; give milliseconds since the epoch, or unset it\n",
        )
        .env_bytes("GOALKEEPER_NOW", b"1\xff"),
        case(
            "GOALKEEPER_AGENT that is no agent name",
            &["todo", "apply", r#"{"op":"done","task":"Build core"}"#],
            2,
            "goalkeeper: GOALKEEPER_AGENT: invalid agent name \"user\": use 1-64 characters",
        )
        .env("GOALKEEPER_AGENT", "user"),
        case(
            "GOALKEEPER_AGENT that is not UTF-8, for the MCP server",
            &["mcp"],
            2,
            "goalkeeper: GOALKEEPER_AGENT is not UTF-8 text (\"\u{fffd}\"); set it to an agent name, or unset it\n",
        )
        .env_bytes("GOALKEEPER_AGENT", b"\xff"),
        // A hook's own line with a mistake: noted, exit 0, nothing done.
        case(
            "a hook with an unknown option",
            &["hook", "claude-code", "--bogus"],
            0,
            "unexpected argument '--bogus' found; nothing was done",
        ),
        case(
            "a hook for a host that does not exist",
            &["hook", "vim"],
            0,
            "invalid value 'vim' for '<HOST>' [possible values: claude-code, gemini-cli, codex, pi]; nothing was done",
        ),
        case(
            "a hook with no host",
            &["hook"],
            0,
            "nothing was done (`goalkeeper hook --help` lists the arguments)",
        ),
        case(
            "the status line with an argument",
            &["statusline", "extra"],
            0,
            "unexpected argument 'extra' found; nothing was done",
        ),
        // Hook stdin: never fails the agent, never stores anything.
        hook(
            "truncated hook JSON",
            r#"{"hook_event_name":"Stop","session_id":"#,
            "hook input is not JSON",
        ),
        hook(
            "hook stdin that is not UTF-8",
            vec![0xff, 0xfe, 0xfd],
            "stdin is not UTF-8 text",
        ),
        hook(
            "a hook session id with a path",
            r#"{"hook_event_name":"Stop","session_id":"../../x"}"#,
            "invalid session id",
        ),
        hook(
            "a hook event with a NUL byte",
            "{\"hook_event_name\":\"Stop\",\"session_id\":\"a\0\"}",
            "hook input is not JSON",
        ),
    ]
}

/// What must not change: the list with its version, the goal, the
/// successful events, and the goal queued for a host's next session here.
fn state(env: &TestEnv) -> (Value, Value, usize, usize, String) {
    let view: Value = serde_json::from_str(&env.ok(&["--json", "todo", "view"])).unwrap();
    let goal: Value = serde_json::from_str(&env.ok(&["--json", "goal", "get"])).unwrap();
    let log: Vec<Value> =
        serde_json::from_str(&env.ok(&["--json", "todo", "log", "--limit", "100000"])).unwrap();
    let ok = log.iter().filter(|e| e["ok"] == true).count();
    let queued = env.ok(&["--session-from", "claude-code", "goal"]);
    (
        view["details"].clone(),
        goal["details"].clone(),
        ok,
        log.len() - ok,
        queued,
    )
}

#[test]
fn every_hostile_input_is_refused_clearly_and_changes_nothing() {
    let cases = catalogue();
    assert!(cases.len() >= 40, "the catalogue has {} cases", cases.len());
    let env = TestEnv::new();
    fs::create_dir(env.dir().join("dir.db")).unwrap();
    env.ok(&["goal", "set", "Keep this goal", "--budget", "5000"]);
    env.ok(&[
        "todo",
        "init",
        "--phase",
        "P",
        "--item",
        "Build core",
        "--item",
        "Run tests",
    ]);
    for case in cases {
        for (name, bytes) in &case.files {
            fs::write(env.dir().join(name), bytes).unwrap();
        }
        let (list, goal, ok, rejected, queued) = state(&env);
        let args: Vec<&str> = case.args.iter().map(String::as_str).collect();
        let output = env
            .cmd(&args)
            .envs(case.env.iter().map(|(name, value)| (name, value)))
            .write_stdin(case.stdin.clone())
            .output()
            .unwrap();
        let rendered = common::render(&args, &output);
        assert_eq!(
            output.status.code(),
            Some(case.exit),
            "{}: {rendered}",
            case.name
        );
        for message in &case.message {
            assert!(
                rendered.contains(message),
                "{}: expected {message:?} in\n{rendered}",
                case.name,
            );
        }
        if case.exit == 0 {
            assert!(output.stdout.is_empty(), "{}: {rendered}", case.name);
        }
        let after = state(&env);
        assert_eq!(after.0, list, "{}: the list changed", case.name);
        assert_eq!(after.1, goal, "{}: the goal changed", case.name);
        assert_eq!(after.2, ok, "{}: a mutation was logged", case.name);
        let expected_rejected = rejected + usize::from(case.logged);
        assert_eq!(after.3, expected_rejected, "{}: rejected events", case.name);
        assert_eq!(after.4, queued, "{}: a goal was queued", case.name);
    }
}
