//! Reads never take the write lock and never wait behind a writer (DESIGN.md
//! §7): with another process holding the write lock in the middle of a
//! transaction, every read command answers at once, from the last commit.

use std::io::Write;
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::common;
use common::TestEnv;

/// How long a reader may take before the test gives up on it. A reader
/// that waited for the lock would wait the store's 30 s busy timeout and
/// then fail; this only keeps a broken build from hanging the suite.
const GIVE_UP: Duration = Duration::from_secs(20);

fn run_while_locked(env: &TestEnv, args: &[&str], stdin: &str) -> String {
    let mut child = env
        .std_cmd(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start goalkeeper");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > GIVE_UP {
            child.kill().unwrap();
            panic!("{args:?} waited behind the writer");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let output = child.wait_with_output().unwrap();
    assert!(
        output.status.success() && output.stderr.is_empty(),
        "{}",
        common::render(args, &output)
    );
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn readers_answer_at_once_behind_a_stuck_writer() {
    let env = TestEnv::new();
    env.ok(&["goal", "set", "Ship the release"]);
    env.ok(&[
        "todo",
        "init",
        "--item",
        "Build core",
        "--item",
        "Run tests",
    ]);

    // Another process takes the write lock and stops mid-transaction,
    // with a change it has not committed.
    let writer = rusqlite::Connection::open(env.db()).unwrap();
    writer
        .execute_batch("BEGIN IMMEDIATE; UPDATE tasks SET status = 'completed';")
        .unwrap();

    let view = run_while_locked(&env, &["todo", "view"], "");
    assert!(view.contains("[/] Build core"), "{view}");
    assert!(view.contains("Overall: 0/2 done"), "{view}");
    let agent_view = run_while_locked(&env, &["todo", "apply", r#"{"op":"view"}"#], "");
    assert_eq!(agent_view, view);
    let context = run_while_locked(&env, &["context"], "");
    assert!(context.contains("Ship the release"), "{context}");
    assert!(context.contains("</todo_context>"), "{context}");
    let status = run_while_locked(
        &env,
        &["statusline"],
        r#"{"session_id":"default","model":{"display_name":"Opus"}}"#,
    );
    assert!(status.contains("todos 0/2"), "{status}");
    let sessions = run_while_locked(&env, &["session", "list"], "");
    assert!(sessions.contains("default"), "{sessions}");
    let log = run_while_locked(&env, &["todo", "log"], "");
    assert!(log.contains("init"), "{log}");

    // The writer's change was never committed: nobody saw it.
    writer.execute_batch("ROLLBACK").unwrap();
    drop(writer);
    assert!(env.ok(&["todo", "view"]).contains("Overall: 0/2 done"));
}
