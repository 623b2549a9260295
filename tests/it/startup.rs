//! Start-up short cuts keep clap's behaviour: `--version` alone is answered
//! before the command tree is built, with the same bytes clap prints when
//! it parses the flag among others.

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
/// code, a spoilt variable still leaves a hook lenient, and an argument
/// that is not UTF-8 is a path, not a crash.
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
    // An empty GOALKEEPER_DB: clap's error for a command, a note for a hook.
    let output = env
        .cmd(&["todo", "view"])
        .env("GOALKEEPER_DB", "")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
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
        .std_cmd(&["todo", "view"])
        .arg("--db")
        .arg(name)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert!(env.dir().join(name).exists());
}

/// The binary's heap is a 2 MiB arena in front of `malloc` (`src/heap.rs`):
/// a command that allocates several times that, in blocks that grow
/// (reading a 1 MB file, writing a 10,000-task list, printing it back),
/// goes on in `malloc` once the arena is used up, and no byte is lost.
#[test]
fn commands_that_outgrow_the_heap_arena_keep_every_byte() {
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
