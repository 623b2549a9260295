//! How the process starts: Rust's start-up gives a host-started process
//! the descriptors and the SIGPIPE disposition a CLI needs, and the short
//! cuts before clap (`--version` alone, the fast parser) keep clap's
//! behaviour.

use std::io::Read;
use std::process::Stdio;

use crate::common::TestEnv;

#[test]
fn version_alone_prints_what_clap_prints() {
    let env = TestEnv::new();
    let expected = format!("goalkeeper {}\n", env!("CARGO_PKG_VERSION"));
    // Through clap: the flag among other arguments.
    let parsed = env.ok(&["--json", "--version"]);
    assert_eq!(parsed, expected);
    for flag in ["--version", "-V"] {
        let output = env.cmd(&[flag]).output().unwrap();
        assert!(output.status.success());
        assert_eq!(
            String::from_utf8(output.stdout).unwrap(),
            expected,
            "{flag}"
        );
        assert!(output.stderr.is_empty(), "{flag}");
    }
}

/// The lines parsed without clap (`cli::fast`) and their mistakes, as a
/// user and a host meet them: a mistake still gets clap's error and exit
/// code, an empty variable is unset, and an argument that is not UTF-8 is
/// a path, not a crash.
#[test]
fn the_fast_lines_keep_clap_behaviour_at_the_edges() {
    use std::os::unix::ffi::OsStrExt;
    let env = TestEnv::new();
    env.ok(&["todo", "init", "--item", "a"]);
    assert_eq!(
        env.ok(&["todo", "view"]),
        env.ok(&["todo", "view", "--db", env.location().as_str()])
    );
    let output = env.cmd(&["todo", "view", "--jsn"]).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("unexpected argument '--jsn'"), "{stderr}");
    // An empty GOALKEEPER_DB is unset (DESIGN.md §8): `--db` is read as
    // given, and without it the default database is used.
    let output = env
        .cmd(&["todo", "view", "--db", env.location().as_str()])
        .env("GOALKEEPER_DB", "")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert_eq!(output.stdout, env.ok(&["todo", "view"]).into_bytes());
    let data = env.dir().join("data");
    let default_db = data.join("goalkeeper/goalkeeper.db");
    let output = env
        .cmd(&["todo", "view"])
        .env("GOALKEEPER_DB", "")
        .env("XDG_DATA_HOME", &data)
        .env("HOME", env.dir())
        .output()
        .unwrap();
    // A read names the default database, which it does not create.
    assert_eq!(output.status.code(), Some(3), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    let named = format!(
        "there is no goalkeeper database at {}",
        default_db.display()
    );
    assert!(stderr.contains(&named), "{stderr}");
    assert!(!default_db.exists());
    let output = env
        .cmd(&["todo", "init", "--item", "z"])
        .env("GOALKEEPER_DB", "")
        .env("XDG_DATA_HOME", &data)
        .env("HOME", env.dir())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert!(default_db.exists());
    let output = env
        .cmd(&["hook", "claude-code"])
        .env("GOALKEEPER_DB", "")
        .write_stdin("{}")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    assert!(output.stdout.is_empty());
    // A database path that is not UTF-8.
    let name = std::ffi::OsStr::from_bytes(b"db-\xff.db");
    let output = env
        .std_cmd(&["todo", "apply", r#"{"op":"view"}"#])
        .arg("--db")
        .arg(name)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert!(env.dir().join(name).exists());
}

/// A command that allocates a lot, in blocks that grow (reading a 1 MB
/// file, writing a 10,000-task list, printing it back), loses no byte.
#[test]
fn commands_that_allocate_megabytes_keep_every_byte() {
    let env = TestEnv::new();
    let mut markdown = String::from("# Long phase\n");
    for i in 0..10_000 {
        // About 97 bytes a line: the file stays under the 1 MiB import limit.
        let pad = "x".repeat(60 + i % 40);
        markdown.push_str(&format!("- [ ] Task {i:05} {pad}\n"));
    }
    assert!(markdown.len() > 950_000, "{}", markdown.len());
    std::fs::write(env.dir().join("TODO.md"), &markdown).unwrap();
    env.ok(&["todo", "import"]);
    let exported = env.ok(&["todo", "export", "-"]);
    let body = exported
        .split_once("\n\n")
        .map(|(header, body)| {
            assert!(header.starts_with("<!-- goalkeeper export"), "{header}");
            body
        })
        .unwrap();
    // The import starts the first task, as every list keeps one open task
    // in progress; the rest comes back as it went in.
    let expected = markdown.replacen("- [ ] Task 00000", "- [/] Task 00000", 1);
    assert_eq!(body, expected, "the list comes back as it went in");
    let last = format!("Task 09999 {}", "x".repeat(60 + 9_999 % 40));
    let done = env.ok(&["todo", "done", &last]);
    assert!(done.contains("Overall: 1/10000 done, 9999 open."), "{done}");
}

/// `$0 ARGS REDIRECT; echo "exit $?"` through `/bin/sh`: the shell closes
/// or redirects the descriptors before the binary starts.
fn through_shell(env: &TestEnv, args: &str, redirect: &str) -> String {
    let program = env.std_cmd(&[]).get_program().to_owned();
    let out = std::process::Command::new("/bin/sh")
        .arg("-c")
        .arg(format!("\"$0\" {args} {redirect} 2>&1; echo \"exit $?\""))
        .arg(program)
        .env_clear()
        .env("GOALKEEPER_DB", env.db())
        .env("GOALKEEPER_CONFIG", env.dir().join("config.toml"))
        .env("GOALKEEPER_NOW", env.now_ms.to_string())
        .current_dir(env.dir())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// Started with standard input closed, a command reads it as empty, as
/// from `/dev/null`: Rust's start-up opens `/dev/null` on a closed
/// descriptor 0, 1 or 2, so no file the command opens takes its place.
#[test]
fn a_closed_stdin_reads_as_empty() {
    let env = TestEnv::new();
    env.ok(&["todo", "init", "--item", "Keep me"]);
    for args in ["todo apply", "todo apply -", "hook claude-code"] {
        let from_null = through_shell(&env, args, "</dev/null");
        assert_eq!(through_shell(&env, args, "<&-"), from_null, "{args}");
        assert!(!from_null.contains("Bad file descriptor"), "{from_null}");
    }
    assert!(env.ok(&["todo", "view"]).contains("[/] Keep me"));
}

/// A hook and the status line whose reader left before they wrote (the
/// host gave up on them) exit 0, not by SIGPIPE: Rust's start-up ignores
/// the signal, so the write fails with EPIPE, which the CLI passes over.
#[test]
fn a_hook_whose_reader_is_gone_exits_zero() {
    let env = TestEnv::new();
    env.ok(&["goal", "set", "Keep going"]);
    env.ok(&["todo", "init", "--item", "Keep me"]);
    let start = serde_json::json!({
        "hook_event_name": "UserPromptSubmit",
        "session_id": "default",
        "cwd": env.dir(),
        "prompt": "go on",
    });
    // The hook's context is what it writes: check that it has one.
    let context = env
        .cmd(&["hook", "claude-code"])
        .write_stdin(start.to_string())
        .output()
        .unwrap();
    assert!(!context.stdout.is_empty(), "{context:?}");
    for (args, input) in [
        (&["hook", "claude-code"][..], start.to_string()),
        (&["statusline"], "{}".to_owned()),
        (&["todo", "view"], String::new()),
    ] {
        let mut child = env
            .std_cmd(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        std::io::Write::write_all(&mut child.stdin.take().unwrap(), input.as_bytes()).unwrap();
        let mut stderr = String::new();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut stderr)
            .unwrap();
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(0), "{args:?}: {status}; {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
}
