//! One transaction per hook event, with real processes: hooks of one
//! session that run at once count a transcript once, and a hook killed at
//! any moment leaves either all of its event applied or none of it.

use crate::common;

use std::io::Write;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use common::TestEnv;
use serde_json::{Value, json};

const SESSION: &str = "race-claude";

fn stop_event(transcript: &std::path::Path) -> String {
    json!({
        "session_id": SESSION,
        "hook_event_name": "Stop",
        "cwd": "/work/project",
        "transcript_path": transcript.display().to_string(),
        "stop_hook_active": false,
    })
    .to_string()
}

/// Appends `filler` user lines of 1,000 characters (they make reading
/// the transcript take a while, as a long session's does), then assistant
/// messages `first..first + count` of 500 counted tokens each (300 input,
/// 200 output; cache reads never count).
fn append_messages(transcript: &std::path::Path, filler: usize, first: usize, count: usize) {
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(transcript)
        .unwrap();
    let user = json!({"type": "user", "message": {"role": "user", "content": "x".repeat(1000)}});
    for _ in 0..filler {
        writeln!(file, "{user}").unwrap();
    }
    for i in first..first + count {
        let line = json!({"type": "assistant", "message": {"id": format!("msg_{i}"), "role": "assistant",
            "usage": {"input_tokens": 300, "output_tokens": 200, "cache_creation_input_tokens": 0,
                      "cache_read_input_tokens": 7000}}});
        writeln!(file, "{line}").unwrap();
    }
}

/// A hook process waiting for its event on stdin.
fn spawn_hook(env: &TestEnv) -> Child {
    env
        // Continuations without progress would soon pause the goal, and a
        // paused goal counts no usage: keep the runaway guard out of it.
        .std_cmd(&[
            "--set",
            "goal.continuation.max_idle=1000",
            "hook",
            "claude-code",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn the hook")
}

fn send(hook: &mut Child, input: &str) {
    let mut stdin = hook.stdin.take().unwrap();
    stdin.write_all(input.as_bytes()).unwrap();
}

fn tokens_used(env: &TestEnv) -> u64 {
    let text = env.ok(&["--session", SESSION, "--json", "goal", "get"]);
    let result: Value = serde_json::from_str(&text).unwrap();
    result["details"]["goal"]["tokens_used"].as_u64().unwrap()
}

#[test]
fn concurrent_stop_hooks_count_a_transcript_once() {
    const HOOKS: usize = 4;
    let env = TestEnv::new();
    env.ok(&[
        "--session",
        SESSION,
        "goal",
        "set",
        "Ship",
        "--budget",
        "1000000",
    ]);
    let transcript = env.dir().join("transcript.jsonl");
    let stop = stop_event(&transcript);
    for round in 0..2 {
        // 2,000 new tokens after a megabyte of conversation, then four Stop
        // hooks on them at once (started first, then given the event
        // together).
        append_messages(&transcript, 1_000, round * 4, 4);
        let mut hooks: Vec<Child> = (0..HOOKS).map(|_| spawn_hook(&env)).collect();
        for hook in &mut hooks {
            send(hook, &stop);
        }
        for hook in hooks {
            let output = hook.wait_with_output().unwrap();
            assert_eq!(
                output.status.code(),
                Some(0),
                "{}",
                String::from_utf8_lossy(&output.stderr)
            );
            assert!(
                output.stderr.is_empty(),
                "{}",
                String::from_utf8_lossy(&output.stderr)
            );
        }
        assert_eq!(
            tokens_used(&env),
            2_000 * (round as u64 + 1),
            "round {round}"
        );
    }
}

/// A hook stopped in the middle of its event (here: reading a transcript
/// of 64 GiB without a line break, which takes a while in bounded memory)
/// and killed there leaves nothing of the event: not the session pointer
/// its first step records, not a transcript cursor, no usage.
#[test]
fn a_hook_killed_mid_event_leaves_nothing_of_it() {
    let env = TestEnv::new();
    env.ok(&[
        "--session",
        SESSION,
        "goal",
        "set",
        "Ship",
        "--budget",
        "1000000",
    ]);
    // A sparse file: no disk, all zero bytes, no newline anywhere.
    let endless = env.dir().join("transcript.jsonl");
    std::fs::File::create(&endless)
        .unwrap()
        .set_len(64 << 30)
        .unwrap();
    let mut hook = spawn_hook(&env);
    send(&mut hook, &stop_event(&endless));
    // The transcript is read inside the event's transaction: once the hook
    // holds it open (its read position past the start), it is mid-event.
    let fds = format!("/proc/{}/fd", hook.id());
    let deadline = Instant::now() + Duration::from_secs(20);
    let reading = || {
        std::fs::read_dir(&fds)
            .into_iter()
            .flatten()
            .flatten()
            .any(|fd| std::fs::read_link(fd.path()).is_ok_and(|target| target == endless))
    };
    while !reading() {
        assert!(
            Instant::now() < deadline,
            "the hook never opened the transcript"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
    hook.kill().unwrap();
    hook.wait().unwrap();

    let store = goalkeeper::Store::open(&env.db()).unwrap();
    let session = goalkeeper::SessionId::parse(SESSION).unwrap();
    assert_eq!(store.pointer("claude-code:/work/project").unwrap(), None);
    assert_eq!(
        store
            .session_mark(&session, "claude-code.transcript")
            .unwrap(),
        None
    );
    assert_eq!(tokens_used(&env), 0);
    assert_eq!(store.integrity_check().unwrap(), "ok");

    // The next hook, on a real transcript, runs the whole event.
    let transcript = env.dir().join("transcript-2.jsonl");
    append_messages(&transcript, 0, 0, 2);
    let mut hook = spawn_hook(&env);
    send(&mut hook, &stop_event(&transcript));
    assert_eq!(hook.wait().unwrap().code(), Some(0));
    assert_eq!(tokens_used(&env), 1_000);
    assert_eq!(
        store
            .pointer("claude-code:/work/project")
            .unwrap()
            .as_deref(),
        Some(SESSION)
    );
}
