//! Inputs that hung, exhausted memory or crashed the real binary, and the
//! terminal rule of DESIGN.md §3.2 for everything it prints. Each
//! case feeds the bad input and checks the exact outcome and that the
//! stored list did not change.

use std::io::Write;
use std::os::unix::fs::symlink;
use std::process::Stdio;
use std::time::Duration;

use crate::common::TestEnv;

/// Every byte of `bytes` is safe for a terminal: no control character but
/// line feed and tab, no C1 control, no line separator.
fn assert_terminal_safe(what: &str, bytes: &[u8]) {
    let text = String::from_utf8_lossy(bytes);
    for c in text.chars() {
        let unsafe_char =
            (c.is_control() && c != '\n' && c != '\t') || c == '\u{2028}' || c == '\u{2029}';
        assert!(
            !unsafe_char,
            "{what} holds U+{:04X} raw: {text:?}",
            c as u32
        );
    }
}

fn stderr(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// The stored list, as `todo view --json` prints it.
fn stored(env: &TestEnv) -> String {
    env.ok(&["--json", "todo", "view"])
}

fn with_list(env: &TestEnv) -> String {
    env.ok(&["todo", "init", "--item", "Keep me", "--item", "And me"]);
    stored(env)
}

fn mkfifo(path: &std::path::Path) {
    rustix::fs::mknodat(
        rustix::fs::CWD,
        path,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
        0,
    )
    .unwrap();
}

#[test]
fn import_reads_regular_files_of_at_most_one_mib() {
    let env = TestEnv::new();
    let before = with_list(&env);
    let fifo = env.dir().join("plan.fifo");
    mkfifo(&fifo);
    let big = env.dir().join("big.md");
    let mut text = String::from("# P\n");
    while text.len() <= 1024 * 1024 {
        text.push_str("- [ ] a task that fills the file up to the limit\n");
    }
    std::fs::write(&big, &text).unwrap();
    let cases = [
        (
            "/dev/zero".to_owned(),
            "goalkeeper: cannot import /dev/zero: it is not a regular file; to import from a pipe, use `todo import -` (nothing was imported)\n"
                .to_owned(),
        ),
        (
            fifo.display().to_string(),
            format!(
                "goalkeeper: cannot import {}: it is not a regular file; to import from a pipe, use `todo import -` (nothing was imported)\n",
                fifo.display()
            ),
        ),
        (
            big.display().to_string(),
            format!(
                "goalkeeper: cannot import {}: it is larger than 1048576 bytes (1 MiB), the limit of an import; split the list (nothing was imported)\n",
                big.display()
            ),
        ),
    ];
    for (path, message) in cases {
        // A FIFO without a writer used to block here forever.
        let out = env
            .cmd(&["todo", "import", &path])
            .timeout(Duration::from_secs(20))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{path}");
        assert_eq!(stderr(&out), message);
        assert!(out.stdout.is_empty());
        assert_eq!(stored(&env), before);
    }
}

#[test]
fn a_deeply_nested_prompt_override_is_an_error_naming_the_file() {
    let env = TestEnv::new();
    env.ok(&["goal", "set", "Ship it"]);
    let before = with_list(&env);
    let prompts = env.dir().join("prompts");
    std::fs::create_dir(&prompts).unwrap();
    let file = prompts.join("goal-continuation.md");
    let set = format!("prompts.dir={}", prompts.display());
    let cases = [
        (
            format!("{}x{}", "{{#if a}}".repeat(8_000), "{{/if}}".repeat(8_000)),
            format!(
                "prompt template {} is larger than 64 KiB; shorten it",
                file.display()
            ),
        ),
        (
            format!("{}x{}", "{{#if a}}".repeat(33), "{{/if}}".repeat(33)),
            format!(
                "prompt template {} is refused: its blocks nest more than 32 levels deep; simplify the template",
                file.display()
            ),
        ),
        (
            format!(
                "{{{{lookup {}x{}}}}}",
                "(lookup ".repeat(40),
                ")".repeat(40)
            ),
            format!(
                "prompt template {} is refused: its subexpressions nest more than 32 levels deep; simplify the template",
                file.display()
            ),
        ),
    ];
    for (template, message) in cases {
        std::fs::write(&file, template).unwrap();
        let out = env
            .cmd(&["--set", &set, "continuation"])
            .timeout(Duration::from_secs(20))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        assert_eq!(stderr(&out), format!("goalkeeper: {message}\n"));
        // The hook says so on stderr and stays out of the host's way.
        let hook = env
            .cmd(&["--set", &set, "hook", "claude-code"])
            .write_stdin(r#"{"hook_event_name":"Stop","session_id":"default"}"#)
            .timeout(Duration::from_secs(20))
            .output()
            .unwrap();
        assert_eq!(hook.status.code(), Some(0));
        assert!(hook.stdout.is_empty());
        assert!(stderr(&hook).contains(&message), "{}", stderr(&hook));
        assert_eq!(stored(&env), before);
    }
}

#[test]
fn a_closed_stdout_is_not_a_panic() {
    let env = TestEnv::new();
    let items: Vec<String> = (0..2_000).map(|i| format!("task {i:05}")).collect();
    let call = serde_json::json!({"op": "init", "items": items}).to_string();
    env.ok(&["todo", "apply", &call]);
    for args in [
        &["todo", "export", "-"][..],
        &["todo", "view"],
        &["--json", "todo", "view"],
        &["todo", "log"],
    ] {
        let mut child = env
            .std_cmd(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // `| head -0`: the reader is gone before the first write.
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
        assert!(!stderr(&out).contains("panicked"), "{args:?}");
    }
}

#[test]
fn a_hook_with_a_closed_or_broken_stderr_exits_zero() {
    let env = TestEnv::new();
    // Input the hook must complain about on stderr.
    let bad = "this is not JSON";
    // stderr a pipe whose reader left.
    let mut child = env
        .std_cmd(&["hook", "claude-code"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stderr.take());
    child
        .stdin
        .take()
        .unwrap()
        .write_all(bad.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty());
    // stderr closed altogether (`2>&-`).
    let mut cmd = env.std_cmd(&[]);
    let program = cmd.get_program().to_owned();
    cmd = std::process::Command::new("/bin/sh");
    cmd.arg("-c")
        .arg("exec 2>&-; \"$0\" hook claude-code; echo \"exit $?\"")
        .arg(program)
        .env_clear()
        .env("GOALKEEPER_DB", env.db())
        .env("GOALKEEPER_CONFIG", env.dir().join("config.toml"))
        .current_dir(env.dir())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(bad.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "exit 0\n");
}

#[test]
fn an_unknown_set_key_is_an_error_in_every_command() {
    let env = TestEnv::new();
    let before = with_list(&env);
    let project = env.dir().join("project");
    std::fs::create_dir(&project).unwrap();
    std::fs::write(project.join("AGENTS.md"), "x").unwrap();
    let p = project.display().to_string();
    let message = "goalkeeper: --set: unknown key \"todo.bogus\"; known keys: todo.enabled, todo.eager, todo.reminders, \
                   todo.reminders.max, todo.context.inactive_tool, todo.context.max_tasks, todo.claim.lease, goal.enabled, \
                   goal.continuation.max_idle, prompts.dir, memory.file, system_prompt.base, postgres.connect.retry, \
                   verify.timeout, verify.tail";
    let commands: [&[&str]; 11] = [
        &["todo", "view"],
        &["verify"],
        &["todo", "log"],
        &["todo", "done", "Keep me"],
        &["goal", "get"],
        &["session", "list"],
        &["workspace", "status", &p],
        &["workspace", "link", &p],
        &["install", "claude-code", "--project", &p, "--command", "gk"],
        &["todo", "export", "out.md"],
        &["prompt", "render", "goal-active", "--data", "{}"],
    ];
    for args in commands {
        let mut full = vec!["--set", "todo.bogus=1"];
        full.extend_from_slice(args);
        let out = env.cmd(&full).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert_eq!(stderr(&out), format!("{message}\n"), "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
    for args in [&["hook", "claude-code"][..], &["statusline"]] {
        let mut full = vec!["--set", "todo.bogus=1"];
        full.extend_from_slice(args);
        let out = env
            .cmd(&full)
            .write_stdin(r#"{"hook_event_name":"Stop","session_id":"default"}"#)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        assert_eq!(stderr(&out), format!("{message}; nothing was done\n"));
        assert!(out.stdout.is_empty());
    }
    // Nothing was written anywhere.
    assert_eq!(stored(&env), before);
    let mut names: Vec<_> = std::fs::read_dir(&project)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    names.sort();
    assert_eq!(names, ["AGENTS.md"]);
    assert!(!env.dir().join("out.md").exists());
}

/// Text with every kind of terminal control: ESC sequences, BEL, a C1 CSI,
/// a carriage return, a line separator.
const HOSTILE: &str = "x\u{1b}]0;owned\u{7}y\u{9b}2Jz\rw\u{2028}v";

#[test]
fn stored_and_supplied_text_reaches_the_terminal_sanitized() {
    let env = TestEnv::new();
    let call = serde_json::json!({"op": "init", "list": [{"phase": HOSTILE, "items": [HOSTILE]}]});
    env.ok(&["todo", "apply", &call.to_string()]);

    // `todo export -`: the markdown, with the controls as spaces.
    let out = env.cmd(&["todo", "export", "-"]).output().unwrap();
    assert!(out.status.success());
    assert_terminal_safe("export -", &out.stdout);
    let text = String::from_utf8(out.stdout).unwrap();
    // (Markdown writes the carriage return as an entity itself.)
    assert!(
        text.contains("# x ]0;owned y 2Jz&#13;w v\n- [/] x ]0;owned y 2Jz&#13;w v\n"),
        "{text}"
    );

    // Everything else that shows the list or echoes text.
    for args in [
        &["todo", "view"][..],
        &["--json", "todo", "view"],
        &["todo", "log"],
        &["todo", "context"],
        &["statusline"],
    ] {
        let out = env.cmd(args).write_stdin("{}").output().unwrap();
        assert_terminal_safe(&format!("{args:?} stdout"), &out.stdout);
        assert_terminal_safe(&format!("{args:?} stderr"), &out.stderr);
    }
    // JSON keeps the data exactly, as escapes.
    let json: serde_json::Value =
        serde_json::from_str(&env.ok(&["--json", "todo", "view"])).unwrap();
    assert_eq!(json["details"]["phases"][0]["name"], HOSTILE);

    // The markdown import error echoes the line.
    let md = env.dir().join("bad.md");
    std::fs::write(&md, format!("# P\n{HOSTILE}\n")).unwrap();
    let out = env.cmd(&["todo", "import", "bad.md"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_terminal_safe("import error", &out.stderr);
    assert!(
        stderr(&out).contains("x ]0;owned y 2Jz w v"),
        "{}",
        stderr(&out)
    );

    // Goal tool errors for an unknown field and an unknown op.
    let call = serde_json::json!({"op": HOSTILE, HOSTILE: 1}).to_string();
    let out = env.cmd(&["goal", "apply", &call]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_terminal_safe("goal tool error", &out.stdout);
    let text = String::from_utf8_lossy(&out.stdout);
    // (A tool result is one line: the carriage return is written `\r`.)
    assert!(
        text.contains("unknown field `x ]0;owned y 2Jz\\rw v`"),
        "{text}"
    );
    assert!(
        text.contains("unknown op `x ]0;owned y 2Jz\\rw v`"),
        "{text}"
    );
}

/// What goalkeeper reports of the user's own files (a link's target,
/// another tool's status line) reaches the terminal sanitized too, and the
/// file keeps the user's value exactly.
#[test]
fn text_from_the_users_files_reaches_the_terminal_sanitized() {
    let env = TestEnv::new();
    // `workspace link` reports where a wrong link pointed.
    let ws = env.dir().join("ws");
    std::fs::create_dir(&ws).unwrap();
    std::fs::write(ws.join("AGENTS.md"), "source").unwrap();
    symlink(HOSTILE, ws.join("CLAUDE.md")).unwrap();
    let out = env
        .cmd(&["workspace", "link", &ws.display().to_string()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_terminal_safe("workspace link", &out.stdout);
    assert!(
        String::from_utf8_lossy(&out.stdout)
            .contains("CLAUDE.md: pointed to x ]0;owned y 2Jz w v; relinked to AGENTS.md")
    );

    // `install` names another tool's status line.
    let project = env.dir().join("project");
    std::fs::create_dir_all(project.join(".claude")).unwrap();
    let settings = serde_json::json!({"statusLine": {"type": "command", "command": HOSTILE}});
    std::fs::write(project.join(".claude/settings.json"), settings.to_string()).unwrap();
    let out = env
        .cmd(&[
            "install",
            "claude-code",
            "--project",
            &project.display().to_string(),
            "--command",
            "gk",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_terminal_safe("install", &out.stdout);
    assert!(
        String::from_utf8_lossy(&out.stdout)
            .contains("statusLine: left alone, another one is set (x ]0;owned y 2Jz w v)")
    );
    // The user's value itself is kept exactly.
    let kept: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(project.join(".claude/settings.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(kept["statusLine"]["command"], HOSTILE);
}

/// A Claude Code event for session `s` with `transcript_path`.
fn stop_with_transcript(path: &std::path::Path) -> String {
    serde_json::json!({"session_id": "s", "hook_event_name": "Stop", "cwd": "p",
        "transcript_path": path.display().to_string(), "stop_hook_active": false})
    .to_string()
}

fn goal_of_s(env: &TestEnv) -> serde_json::Value {
    let text = env.ok(&["--session", "s", "--json", "goal", "get"]);
    serde_json::from_str::<serde_json::Value>(&text).unwrap()["details"]["goal"].clone()
}

fn assistant_line(id: &str, input: u64) -> String {
    serde_json::json!({"type": "assistant", "message": {"id": id, "role": "assistant",
        "usage": {"input_tokens": input, "output_tokens": 0}}})
    .to_string()
}

/// A FIFO nobody writes to and `/dev/zero` as the Stop hook's transcript
/// (the FIFO blocked the hook forever, `/dev/zero` took 1 GiB in under a
/// second): refused before they are opened, with a note naming the file;
/// the rest of the event still runs (the continuation is sent), and the
/// usage counted from the real transcript before stays as it was.
#[test]
fn a_transcript_that_is_not_a_regular_file_is_refused_before_it_is_opened() {
    let env = TestEnv::new();
    env.ok(&[
        "--session",
        "s",
        "goal",
        "set",
        "Ship",
        "--budget",
        "100000",
    ]);
    let real = env.dir().join("transcript.jsonl");
    std::fs::write(&real, assistant_line("m1", 500) + "\n").unwrap();
    let out = env
        .cmd(&["hook", "claude-code"])
        .write_stdin(stop_with_transcript(&real))
        .output()
        .unwrap();
    assert!(out.status.success() && out.stderr.is_empty(), "{out:?}");
    assert_eq!(goal_of_s(&env)["tokens_used"], 500);

    let fifo = env.dir().join("transcript.fifo");
    mkfifo(&fifo);
    for path in [fifo.as_path(), std::path::Path::new("/dev/zero")] {
        let out = env
            .cmd(&[
                "--set",
                "goal.continuation.max_idle=100",
                "hook",
                "claude-code",
            ])
            .write_stdin(stop_with_transcript(path))
            .timeout(Duration::from_secs(20))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", path.display());
        assert_eq!(
            stderr(&out),
            format!(
                "goalkeeper: cannot read {}: not a regular file; usage not counted\n",
                path.display()
            )
        );
        let reply: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(reply["decision"], "block", "{reply}");
        assert_eq!(goal_of_s(&env)["tokens_used"], 500);
    }
}

/// Transcript usage of 2^64 − 1 tokens plus 2 more used to wrap to 1, so
/// the goal stayed under its budget: the sum saturates at the largest
/// count the store holds (2^63 − 1), the goal is budget-limited, and more
/// usage leaves it there.
#[test]
fn transcript_usage_saturates_instead_of_wrapping() {
    let env = TestEnv::new();
    env.ok(&["--session", "s", "goal", "set", "Ship", "--budget", "1000"]);
    let transcript = env.dir().join("transcript.jsonl");
    std::fs::write(
        &transcript,
        format!(
            "{}\n{}\n",
            assistant_line("m1", u64::MAX),
            assistant_line("m2", 2)
        ),
    )
    .unwrap();
    let out = env
        .cmd(&["hook", "claude-code"])
        .write_stdin(stop_with_transcript(&transcript))
        .output()
        .unwrap();
    assert!(out.status.success() && out.stderr.is_empty(), "{out:?}");
    let goal = goal_of_s(&env);
    assert_eq!(goal["tokens_used"], i64::MAX, "{goal}");
    assert_eq!(goal["status"], "budget-limited", "{goal}");
    env.ok(&["--session", "s", "goal", "usage", "--input", "7"]);
    std::fs::write(
        &transcript,
        format!(
            "{}\n{}\n{}\n",
            assistant_line("m1", u64::MAX),
            assistant_line("m2", 2),
            assistant_line("m3", u64::MAX)
        ),
    )
    .unwrap();
    let out = env
        .cmd(&["hook", "claude-code"])
        .write_stdin(stop_with_transcript(&transcript))
        .output()
        .unwrap();
    assert!(out.status.success() && out.stderr.is_empty(), "{out:?}");
    assert_eq!(goal_of_s(&env)["tokens_used"], i64::MAX);
}

/// A transcript of 130 MB that goalkeeper sees for the first time
/// (a long session's; a 1 GB one used to take 7.3 s and 1 GB of memory,
/// and since the hook gives up after its wait, an event that cannot read
/// it all in time would never move the cursor): each event reads for a
/// quarter of the hook's wait (here 4 s, so 1 s) and stops at a line's
/// end, every event exits 0 without a note, and together they count every
/// response exactly once.
#[test]
fn a_huge_transcript_is_counted_over_several_events_each_inside_the_wait() {
    const PAIRS: usize = 60_000;
    let env = TestEnv::new();
    env.ok(&["--session", "s", "goal", "set", "Ship"]);
    let transcript = env.dir().join("transcript.jsonl");
    {
        let mut file = std::io::BufWriter::new(std::fs::File::create(&transcript).unwrap());
        let user = serde_json::json!({"type": "user",
            "message": {"role": "user", "content": "x".repeat(1000)}});
        for i in 0..PAIRS {
            let assistant = serde_json::json!({"type": "assistant", "message": {"id": format!("m{i}"),
                "role": "assistant", "content": [{"type": "text", "text": "y".repeat(1000)}],
                "usage": {"input_tokens": 3, "output_tokens": 2}}});
            writeln!(file, "{user}\n{assistant}").unwrap();
        }
    }
    let event = serde_json::json!({"session_id": "s", "hook_event_name": "SubagentStop",
        "cwd": "p", "transcript_path": transcript.display().to_string()})
    .to_string();
    let expected = PAIRS as u64 * 5;
    let mut counted = Vec::new();
    while counted.last() != Some(&expected) {
        assert!(counted.len() < 100, "counted {counted:?}");
        let out = env
            .cmd(&["hook", "claude-code"])
            .env("GOALKEEPER_HOOK_WAIT_MS", "4000")
            .write_stdin(event.clone())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0));
        assert_eq!(stderr(&out), "", "after {counted:?}");
        let tokens = goal_of_s(&env)["tokens_used"].as_u64().unwrap();
        assert!(
            counted.last().is_none_or(|&last| tokens >= last),
            "counted less: {counted:?} then {tokens}"
        );
        counted.push(tokens);
    }
    assert!(
        counted.len() > 1 && counted[0] < expected,
        "one event read it all: {counted:?}"
    );
    eprintln!(
        "hardening: {} MB counted over {} events: {counted:?}",
        std::fs::metadata(&transcript).unwrap().len() / 1_000_000,
        counted.len()
    );
}

/// Gemini CLI's chat file and Codex's rollout file as a FIFO nobody writes
/// to (the hook used to block until it gave up, losing the whole event)
/// and as `/dev/zero` (it read until memory ran out): refused before they
/// are opened, with a note naming the file; the event's other writes (the
/// directory's session pointer) are there, and no usage is counted.
#[test]
fn a_gemini_or_codex_usage_log_that_is_not_a_regular_file_is_refused_at_once() {
    let env = TestEnv::new();
    env.ok(&["--session", "s", "goal", "set", "Ship"]);
    let fifo = env.dir().join("log.fifo");
    mkfifo(&fifo);
    for (host, event, file) in [
        ("gemini-cli", "AfterAgent", "chat file"),
        ("codex", "Stop", "rollout file"),
    ] {
        for path in [fifo.as_path(), std::path::Path::new("/dev/zero")] {
            let cwd = host.to_string();
            let input = serde_json::json!({"session_id": "s", "hook_event_name": event,
                "cwd": cwd, "transcript_path": path.display().to_string(),
                "stop_hook_active": false, "prompt_response": "done"});
            let out = env
                .cmd(&["--set", "goal.continuation.max_idle=100", "hook", host])
                .write_stdin(input.to_string())
                .timeout(Duration::from_secs(20))
                .output()
                .unwrap();
            assert_eq!(out.status.code(), Some(0), "{host} {}", path.display());
            assert_eq!(
                stderr(&out),
                format!(
                    "goalkeeper: cannot read the {file} {}: not a regular file; usage not counted\n",
                    path.display()
                )
            );
            assert_eq!(goal_of_s(&env)["tokens_used"], 0);
            let mut store = goalkeeper::Store::open(env.db()).unwrap();
            assert_eq!(
                store
                    .admin()
                    .pointer(&format!("{host}:{cwd}"))
                    .unwrap()
                    .as_deref(),
                Some("s"),
                "{host}"
            );
        }
    }
}

/// Started with descriptors 0, 1 and 2 closed, a command that writes files
/// and opens no database (whose SQLite would take the low descriptors
/// itself) still runs and writes them whole, as with them open. Since
/// src/main.rs replaced Rust's start-up, it opens the closed ones on
/// /dev/null itself, as that start-up did.
#[test]
fn a_command_started_without_stdin_stdout_and_stderr_writes_its_files_whole() {
    let env = TestEnv::new();
    let (open, closed) = (env.dir().join("open"), env.dir().join("closed"));
    for project in [&open, &closed] {
        std::fs::create_dir(project).unwrap();
    }
    let program = env.std_cmd(&[]).get_program().to_owned();
    let install = |project: &std::path::Path, redirect: &str| {
        let out = std::process::Command::new("/bin/sh")
            .arg("-c")
            .arg(format!(
                "\"$0\" install claude-code --project \"$1\" --command goalkeeper {redirect}; echo \"exit $?\" > \"$1/status\""
            ))
            .arg(&program)
            .arg(project)
            .env_clear()
            .env("GOALKEEPER_DB", env.db())
            .env("GOALKEEPER_CONFIG", env.dir().join("config.toml"))
            .env("GOALKEEPER_NOW", env.now_ms.to_string())
            .current_dir(env.dir())
            .output()
            .unwrap();
        assert!(out.status.success());
        std::fs::read_to_string(project.join("status")).unwrap()
    };
    assert_eq!(install(&open, ">/dev/null"), "exit 0\n");
    assert_eq!(install(&closed, "<&- >&- 2>&-"), "exit 0\n");
    for file in [".claude/settings.json", ".mcp.json"] {
        let written = std::fs::read_to_string(closed.join(file)).unwrap();
        assert_eq!(
            written,
            std::fs::read_to_string(open.join(file)).unwrap(),
            "{file}"
        );
    }
}
