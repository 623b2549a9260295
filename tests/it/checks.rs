//! Checks from the command line (DESIGN.md §13): a person sets them, the
//! agent's `goalkeeper verify` runs them as real processes, the gate holds
//! an agent's `complete` and `done`, and every bad input and fault is
//! refused with a clear error and nothing lost.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use crate::common::{TestEnv, render};

/// A project directory beside the test's database (so the database is not
/// one of the files a fingerprint reads), where the commands run.
pub(crate) struct Project {
    pub(crate) env: TestEnv,
    pub(crate) dir: PathBuf,
}

impl Project {
    pub(crate) fn new() -> Project {
        let env = TestEnv::new();
        let dir = env.dir().join("project");
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join("main.rs"), "fn main() {}\n").unwrap();
        Project { env, dir }
    }

    pub(crate) fn cmd(&self, args: &[&str]) -> assert_cmd::Command {
        let mut cmd = self.env.cmd(args);
        cmd.current_dir(&self.dir);
        cmd
    }

    pub(crate) fn std_cmd(&self, args: &[&str]) -> std::process::Command {
        let mut cmd = self.env.std_cmd(args);
        cmd.current_dir(&self.dir);
        cmd
    }

    /// Runs a command and renders it for a snapshot, with what changes
    /// from run to run (a run's id, how long a check took) written as a
    /// placeholder.
    pub(crate) fn run(&self, args: &[&str]) -> String {
        let output = self.cmd(args).output().unwrap();
        redact(&self.env.normalize(&render(args, &output)))
    }

    pub(crate) fn ok(&self, args: &[&str]) -> String {
        let output = self.cmd(args).output().unwrap();
        assert!(output.status.success(), "{}", render(args, &output));
        String::from_utf8(output.stdout).unwrap()
    }

    pub(crate) fn write(&self, path: &str, text: &str) {
        std::fs::write(self.dir.join(path), text).unwrap();
    }
}

/// `text` with each run id, duration in milliseconds and duration in
/// seconds replaced by a placeholder.
pub(crate) fn redact(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    loop {
        let next = ["\"run\":\"", "\"ms\":"]
            .iter()
            .filter_map(|key| rest.find(key).map(|at| (at, *key)))
            .min();
        let Some((at, key)) = next else { break };
        out.push_str(&rest[..at + key.len()]);
        rest = &rest[at + key.len()..];
        let end = rest
            .find(|c: char| !c.is_ascii_hexdigit())
            .unwrap_or(rest.len());
        out.push_str(if key == "\"ms\":" { "<ms>" } else { "<run>" });
        rest = &rest[end..];
    }
    out.push_str(rest);
    // `12.3 s` in reports.
    let words: Vec<String> = out
        .split('\n')
        .map(|line| {
            let tokens: Vec<&str> = line.split(' ').collect();
            let mut shown = Vec::with_capacity(tokens.len());
            for (i, t) in tokens.iter().enumerate() {
                let seconds = tokens.get(i + 1).is_some_and(|n| n.starts_with('s'))
                    && t.split_once('.').is_some_and(|(a, b)| {
                        !a.is_empty()
                            && a.bytes().all(|c| c.is_ascii_digit())
                            && b.len() == 1
                            && b.bytes().all(|c| c.is_ascii_digit())
                    });
                shown.push(if seconds { "<t>" } else { t });
            }
            shown.join(" ")
        })
        .collect();
    words.join("\n")
}

#[test]
fn a_person_sets_checks_and_the_agent_proves_them() {
    let p = Project::new();
    let mut transcript = String::new();
    let mut step = |args: &[&str]| transcript.push_str(&format!("{}\n", p.run(args)));
    step(&[
        "goal",
        "set",
        "Ship the parser",
        "--check",
        "test -f parser.rs",
        "--check",
        "true",
    ]);
    step(&["goal", "check", "list"]);
    step(&["todo", "init", "--item", "Lexer", "--item", "Parser"]);
    step(&["todo", "check", "Lexer", "grep", "-q", "lexer", "main.rs"]);
    step(&["goal", "apply", r#"{"op":"complete"}"#]);
    step(&["todo", "apply", r#"{"op":"done","task":"Lexer"}"#]);
    step(&["verify"]);
    p.write("parser.rs", "// the parser\n");
    p.write("main.rs", "fn main() {} // lexer\n");
    step(&["verify", "--task", "Lexer"]);
    step(&["todo", "apply", r#"{"op":"done","task":"Lexer"}"#]);
    step(&["verify"]);
    step(&["goal"]);
    step(&["goal", "apply", r#"{"op":"complete"}"#]);
    step(&["todo", "log", "--limit", "4"]);
    assert_snapshot!("cli_checks_session", transcript);
}

#[test]
fn a_check_a_person_gives_badly_is_refused_and_nothing_changes() {
    let p = Project::new();
    p.ok(&["goal", "set", "Ship", "--check", "true"]);
    p.ok(&["todo", "init", "--item", "Lexer"]);
    let goal_before = p.ok(&["--json", "goal"]);
    let list_before = p.ok(&["--json", "todo", "view"]);
    let long = "x".repeat(100 * 1024);
    let mut transcript = String::new();
    for args in [
        &["goal", "check", "add", ""][..],
        &["goal", "check", "add", "cargo test\nrm -rf /"],
        &["goal", "check", "add", &long],
        &["goal", "set", "Other", "--check", " "],
        &["goal", "check", "rm", "0"],
        &["goal", "check", "rm", "2"],
        &["todo", "check", "Lexer", ""],
        &["todo", "check", "Nope", "true"],
        &["todo", "check", "Lexer"],
        &["verify", "--task", "Lexer"],
    ] {
        let shown: Vec<&str> = args
            .iter()
            .map(|a| if a.len() > 100 { "<100 KB>" } else { a })
            .collect();
        let output = p.cmd(args).output().unwrap();
        transcript.push_str(&redact(&p.env.normalize(&render(&shown, &output))));
        transcript.push('\n');
    }
    assert_snapshot!("cli_checks_refusals", transcript);
    assert_eq!(p.ok(&["--json", "goal"]), goal_before);
    assert_eq!(p.ok(&["--json", "todo", "view"]), list_before);
}

/// Runs `verify` with one check and returns its stdout, its exit code and
/// how long it took.
fn verify_one(p: &Project, check: &str, sets: &[&str]) -> (String, Option<i32>, Duration) {
    p.ok(&["goal", "set", "Ship", "--check", check]);
    let mut args: Vec<&str> = Vec::new();
    for set in sets {
        args.extend(["--set", set]);
    }
    args.push("verify");
    let started = std::time::Instant::now();
    let output = p.cmd(&args).output().unwrap();
    (
        String::from_utf8(output.stdout).expect("verify prints UTF-8"),
        output.status.code(),
        started.elapsed(),
    )
}

#[test]
fn a_check_that_hangs_times_out_with_its_whole_group() {
    let p = Project::new();
    let (out, code, _) = verify_one(
        &p,
        "sleep 300 & echo $! > ../sleeper.pid; echo waiting; sleep 300",
        &["verify.timeout=1"],
    );
    assert_eq!(code, Some(1));
    assert!(
        out.contains("FAIL `sleep 300 & echo $! > ../sleeper.pid; echo waiting; sleep 300` "),
        "{out}"
    );
    assert!(
        out.contains(", timed out after 1 s; its output:\n    | waiting\n"),
        "{out}"
    );
    let pid = std::fs::read_to_string(p.env.dir().join("sleeper.pid")).unwrap();
    let alive = || {
        std::fs::read_to_string(format!("/proc/{}/stat", pid.trim())).is_ok_and(|s| {
            !s.rsplit(')')
                .next()
                .unwrap_or("")
                .trim_start()
                .starts_with('Z')
        })
    };
    for _ in 0..100 {
        if !alive() {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        !alive(),
        "the check's background process outlived the timeout"
    );
    // The run is recorded as failed: the gate says so.
    let refusal = p
        .cmd(&["goal", "apply", r#"{"op":"complete"}"#])
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&refusal.stdout).contains("failed 0s ago (timed out after 1 s)"),
        "{}",
        String::from_utf8_lossy(&refusal.stdout)
    );
}

#[test]
fn a_daemon_left_behind_does_not_keep_verify_waiting() {
    let p = Project::new();
    let (out, code, _) = verify_one(&p, "(sleep 300; echo late) & echo started", &[]);
    assert_eq!(code, Some(0), "{out}");
    assert!(
        out.contains("PASS `(sleep 300; echo late) & echo started` ")
            && out.contains("; it left processes running, which were stopped\n"),
        "{out}"
    );
}

#[test]
fn output_without_newlines_bad_bytes_and_escapes_never_reach_the_terminal_raw() {
    let p = Project::new();
    let (out, code, _) = verify_one(
        &p,
        r"head -c 100000000 /dev/zero | tr '\0' y; printf '\n\377\033[2J\033]0;title\007\342\200\256goalkeeper-evidence 1 {}\n'; exit 3",
        &["verify.tail=2048"],
    );
    assert_eq!(code, Some(1));
    assert!(
        !out.contains('\u{1b}') && !out.contains('\u{7}') && !out.contains('\u{202e}'),
        "{out:?}"
    );
    assert!(out.len() < 4096 + 1024, "{}", out.len());
    let lines: Vec<&str> = out.lines().collect();
    assert!(
        lines[0].starts_with("goalkeeper-evidence 1 {\"run\":"),
        "{}",
        lines[0]
    );
    // The check's own would-be record is one indented line of its output.
    assert_eq!(
        lines
            .iter()
            .filter(|l| l.starts_with("goalkeeper-evidence"))
            .count(),
        1
    );
    assert!(
        out.contains("    | \u{fffd} goalkeeper-evidence 1 {}\n"),
        "{out}"
    );
    assert!(
        out.contains("; the end of its output:\n    | yyyy"),
        "{out}"
    );
}

#[test]
fn verify_in_a_directory_that_vanished_says_so_and_records_nothing() {
    let p = Project::new();
    p.ok(&["goal", "set", "Ship", "--check", "true"]);
    let gone = p.dir.join("gone");
    std::fs::create_dir(&gone).unwrap();
    // A shell whose directory is removed under it runs verify there.
    let output = std::process::Command::new("/bin/sh")
        .arg("-c")
        .arg(format!(
            "cd '{}' && rmdir '{}' && exec '{}' verify",
            gone.display(),
            gone.display(),
            env!("CARGO_BIN_EXE_goalkeeper")
        ))
        .env_clear()
        .env("GOALKEEPER_DB", p.env.location())
        .env("GOALKEEPER_NOW", p.env.now_ms.to_string())
        .env("GOALKEEPER_CONFIG", p.env.dir().join("config.toml"))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(3));
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        "goalkeeper: cannot read the current directory: No such file or directory (os error 2)\n"
    );
    assert!(output.stdout.is_empty());
    let log = p.ok(&["todo", "log"]);
    assert!(!log.contains("verify"), "{log}");
}

#[test]
fn a_non_git_directory_is_fingerprinted_with_its_gitignore() {
    let p = Project::new();
    p.write(".gitignore", "target/\n");
    p.ok(&["goal", "set", "Ship", "--check", "true"]);
    p.ok(&["verify"]);
    std::fs::create_dir(p.dir.join("target")).unwrap();
    p.write("target/out", "built");
    let done = p
        .cmd(&["goal", "apply", r#"{"op":"complete"}"#])
        .output()
        .unwrap();
    assert!(
        done.status.success(),
        "{}",
        String::from_utf8_lossy(&done.stdout)
    );
}

#[test]
fn verify_killed_mid_run_leaves_no_evidence() {
    let p = Project::new();
    p.ok(&[
        "goal",
        "set",
        "Ship",
        "--check",
        "true",
        "--check",
        "echo $$ > check.pid; sleep 300",
    ]);
    let mut child = p
        .std_cmd(&["verify"])
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let pid_file = p.dir.join("check.pid");
    for _ in 0..500 {
        if std::fs::read_to_string(&pid_file).is_ok_and(|s| s.ends_with('\n')) {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    // The check runs on in its own group: end it.
    let pid: i32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(pid > 1);
    let group = rustix::process::Pid::from_raw(pid).unwrap();
    rustix::process::kill_process_group(group, rustix::process::Signal::KILL).unwrap();
    let log = p.ok(&["--json", "todo", "log"]);
    let events: serde_json::Value = serde_json::from_str(&log).unwrap();
    assert!(
        events
            .as_array()
            .unwrap()
            .iter()
            .all(|e| e["kind"] != "check"),
        "{log}"
    );
    assert!(p.ok(&["goal"]).contains("1. `true`: not run yet"));
}

#[test]
fn verify_runs_race_with_a_complete_and_each_lands() {
    let p = Project::new();
    p.ok(&[
        "goal",
        "set",
        "Ship",
        "--check",
        "sleep 0.3",
        "--check",
        "true",
    ]);
    let runs: Vec<_> = (0..3)
        .map(|i| {
            p.std_cmd(&["--agent", &format!("w{i}"), "verify"])
                .stdout(Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    // A complete while they run: refused (nothing has passed yet) or, once
    // one has landed, accepted; never anything half-done.
    let early = p
        .cmd(&["goal", "apply", r#"{"op":"complete"}"#])
        .output()
        .unwrap();
    for mut run in runs {
        assert!(run.wait().unwrap().success());
    }
    let log = p.ok(&["--json", "todo", "log", "--limit", "100"]);
    let events: Vec<serde_json::Value> = serde_json::from_str(&log).unwrap();
    let verified: Vec<&serde_json::Value> =
        events.iter().filter(|e| e["kind"] == "check").collect();
    assert_eq!(verified.len(), 3, "every run lands: {log}");
    let mut agents: Vec<&str> = verified
        .iter()
        .map(|e| e["payload"]["agent"].as_str().unwrap())
        .collect();
    agents.sort_unstable();
    assert_eq!(agents, ["w0", "w1", "w2"]);
    if early.status.success() {
        assert!(p.ok(&["goal"]).contains("(complete)"));
    } else {
        assert!(
            String::from_utf8_lossy(&early.stdout).contains("is refused until its checks pass")
        );
        assert!(
            p.cmd(&["goal", "apply", r#"{"op":"complete"}"#])
                .output()
                .unwrap()
                .status
                .success()
        );
    }
}

#[test]
fn a_check_added_while_verify_runs_waits_for_the_next_run() {
    let p = Project::new();
    // The check says it started, then waits to be let go (both files are
    // outside the project, so the files it runs on stay as they are).
    p.ok(&[
        "goal",
        "set",
        "Ship",
        "--check",
        "touch ../started; while [ ! -e ../go ]; do sleep 0.02; done",
    ]);
    let mut run = p
        .std_cmd(&["verify"])
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let started = p.env.dir().join("started");
    for _ in 0..1000 {
        if started.exists() {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(started.exists(), "the check never started");
    p.ok(&["goal", "check", "add", "true"]);
    assert!(
        run.try_wait().unwrap().is_none(),
        "verify was still running when the check was added"
    );
    std::fs::write(p.env.dir().join("go"), "").unwrap();
    assert!(run.wait().unwrap().success());
    let goal = p.ok(&["goal", "check", "list"]);
    assert!(
        goal.ends_with("passed 0s ago\n2. `true`: not run yet\n"),
        "{goal}"
    );
}

#[test]
fn checks_survive_export_import_and_backup() {
    let p = Project::new();
    p.ok(&["todo", "init", "--item", "Lexer", "--item", "Parser"]);
    p.ok(&[
        "todo",
        "check",
        "Parser",
        "cargo test -- parser && echo '<!-- ok -->'",
    ]);
    p.ok(&["todo", "export", "TODO.md"]);
    let text = std::fs::read_to_string(p.dir.join("TODO.md")).unwrap();
    assert!(
        text.ends_with("- [ ] Parser\n  <!-- check: cargo test -- parser &amp;&amp; echo '&lt;!-- ok --&gt;' -->\n"),
        "{text}"
    );
    p.ok(&["todo", "check", "Parser", "--clear"]);
    p.ok(&["todo", "import", "TODO.md"]);
    let list = p.ok(&["--json", "todo", "view"]);
    assert!(
        list.contains(r#""check": "cargo test -- parser && echo '<!-- ok -->'""#),
        "{list}"
    );
    p.ok(&["goal", "set", "Ship", "--check", "true"]);
    let backup = p.env.dir().join("backup.db");
    p.ok(&["backup", backup.to_str().unwrap()]);
    let copy = |args: &[&str]| {
        let mut cmd = p.cmd(args);
        cmd.env("GOALKEEPER_DB", &backup);
        String::from_utf8(cmd.output().unwrap().stdout).unwrap()
    };
    assert!(copy(&["goal"]).contains("1. `true`: not run yet"));
    assert!(
        copy(&["todo", "view"]).contains(
            "- task \"Parser\": `cargo test -- parser && echo '<!-- ok -->'` not run yet"
        )
    );
}

#[test]
fn a_clear_carries_the_goals_and_the_tasks_checks_over() {
    let p = Project::new();
    let hook = |event: serde_json::Value| {
        let output = p
            .cmd(&["hook", "claude-code"])
            .write_stdin(event.to_string())
            .output()
            .unwrap();
        assert!(output.status.success());
    };
    let cwd = p.dir.display().to_string();
    hook(
        serde_json::json!({"hook_event_name": "SessionStart", "session_id": "old", "source": "startup", "cwd": cwd}),
    );
    p.ok(&["--session", "old", "goal", "set", "Ship", "--check", "true"]);
    p.ok(&["--session", "old", "todo", "init", "--item", "Lexer"]);
    p.ok(&["--session", "old", "todo", "check", "Lexer", "make lexer"]);
    hook(
        serde_json::json!({"hook_event_name": "SessionStart", "session_id": "new", "source": "clear", "cwd": cwd}),
    );
    let goal = p.ok(&["--session", "new", "goal"]);
    assert!(goal.ends_with("1. `true`: not run yet\n"), "{goal}");
    let view = p.ok(&["--session", "new", "todo", "view"]);
    assert!(
        view.contains("- task \"Lexer\": `make lexer` not run yet"),
        "{view}"
    );
}

#[test]
fn the_status_line_shows_where_the_checks_stand() {
    let p = Project::new();
    p.ok(&["goal", "set", "Ship", "--check", "true", "--check", "false"]);
    p.cmd(&["verify"]).output().unwrap();
    let line = p
        .cmd(&["statusline"])
        .write_stdin(
            serde_json::json!({"session_id": "default", "workspace": {"current_dir": p.dir}})
                .to_string(),
        )
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&line.stdout),
        "◎ Ship · checks 1/2 pass, 1 fail · 0 tok · 0s\n"
    );
}

#[test]
fn the_mcp_server_gates_complete_on_the_files_of_its_directory() {
    use crate::mcp::{Server, is_error, text};
    let p = Project::new();
    p.ok(&["goal", "set", "Ship", "--check", "test -f done.txt"]);
    let mut server = Server::spawn_in(&p.env, &p.dir, &["mcp"], &[]);
    server.initialize();
    let complete = serde_json::json!({"op": "complete"});
    let refused = server.call("goal", complete.clone());
    assert!(is_error(&refused));
    assert_eq!(
        text(&refused),
        "Errors: `complete` of goal #1 is refused until its checks pass on the files as they are now: `test -f done.txt` not run yet. Run `goalkeeper verify` in your shell: it runs the checks and records the result; fix what fails, then try again"
    );
    let get = server.call("goal", serde_json::json!({"op": "get"}));
    assert!(
        text(&get).ends_with("1. `test -f done.txt`: not run yet"),
        "{}",
        text(&get)
    );
    p.write("done.txt", "done");
    p.cmd(&["verify"]).output().unwrap();
    // The same server, the files as they are now: accepted.
    let accepted = server.call("goal", complete);
    assert!(!is_error(&accepted), "{}", text(&accepted));
    assert_eq!(server.stop(), "[exit status: 0]");
}

#[cfg(feature = "watch")]
#[test]
fn watch_shows_where_each_check_stands() {
    let p = Project::new();
    p.ok(&["goal", "set", "Ship", "--check", "true", "--check", "false"]);
    p.ok(&["todo", "init", "--item", "Lexer"]);
    p.ok(&["todo", "check", "Lexer", "make lexer"]);
    p.cmd(&["verify"]).output().unwrap();
    let small = p.ok(&["watch", "--once", "--size", "100x30"]);
    assert!(
        small.contains("… 1 more check (`goalkeeper goal check list`, `todo view`)"),
        "{small}"
    );
    let frame = p.ok(&["watch", "--once", "--size", "100x40"]);
    for line in [
        "Check pass `true` passed 0s ago",
        "Check fail `false` failed 0s ago (exit 1)",
        "Check not run task \"Lexer\": `make lexer` not run yet",
    ] {
        assert!(frame.contains(line), "{line}\n{frame}");
    }
}

#[test]
fn where_the_database_is_read_only_verify_prints_the_record_a_hook_stores() {
    use goalkeeper::verify::record::{ShellCall, from_shell_call};
    let p = Project::new();
    p.ok(&["goal", "set", "Ship", "--check", "true"]);
    let db = p.env.db();
    // A sandbox's read-only database.
    let read_only = crate::common::ReadOnlyDatabase::new(&db);
    let output = p.cmd(&["verify"]).output().unwrap();
    drop(read_only);
    let out = String::from_utf8(output.stdout).unwrap();
    assert_eq!(output.status.code(), Some(0), "{out}");
    assert!(
        out.contains("Every check passed on the files as they are now. The session's log cannot be written from here (database error: attempt to write a readonly database (the database file or its directory is read-only; fix the permissions)); the record on the first line is for goalkeeper's hook to store."),
        "{out}"
    );
    assert!(!p.ok(&["todo", "log"]).contains("verify"));
    assert!(
        p.cmd(&["goal", "apply", r#"{"op":"complete"}"#])
            .output()
            .unwrap()
            .status
            .code()
            == Some(1)
    );
    // What a host's hook does with its record of that shell call.
    let call = ShellCall {
        command: "goalkeeper verify",
        output: &out,
        exit: Some(0),
        call: None,
    };
    let record = from_shell_call(call, &["goalkeeper"]).unwrap();
    let mut store = goalkeeper::Store::open(&db).unwrap();
    let session = goalkeeper::SessionId::parse("default").unwrap();
    assert!(
        store
            .write(&session, |tx| tx.record_from_hook(&record, p.env.now_ms))
            .unwrap()
    );
    drop(store);
    let done = p
        .cmd(&["goal", "apply", r#"{"op":"complete"}"#])
        .output()
        .unwrap();
    assert!(
        done.status.success(),
        "{}",
        String::from_utf8_lossy(&done.stdout)
    );
}
