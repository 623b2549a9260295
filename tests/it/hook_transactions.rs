//! One transaction per hook event, with real processes: hooks of one
//! session that run at once count a transcript once, and a hook killed at
//! any moment leaves either all of its event applied or none of it.

use crate::common;

use std::io::Write;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use crate::mcp::{Server, is_error};
use common::TestEnv;
use serde_json::{Value, json};

const SESSION: &str = "race-claude";

fn stop_event(transcript: &std::path::Path) -> String {
    json!({
        "session_id": SESSION,
        "hook_event_name": "Stop",
        "cwd": "project",
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

    let mut store = goalkeeper::Store::open(env.db()).unwrap();
    let session = goalkeeper::SessionId::parse(SESSION).unwrap();
    assert_eq!(store.admin().pointer("claude-code:project").unwrap(), None);
    assert_eq!(
        store
            .read(&session, |tx| tx.mark("claude-code.transcript"))
            .unwrap(),
        None
    );
    assert_eq!(tokens_used(&env), 0);
    assert_eq!(store.admin().integrity_check().unwrap(), "ok");

    // The next hook, on a real transcript, runs the whole event.
    let transcript = env.dir().join("transcript-2.jsonl");
    append_messages(&transcript, 0, 0, 2);
    let mut hook = spawn_hook(&env);
    send(&mut hook, &stop_event(&transcript));
    assert_eq!(hook.wait().unwrap().code(), Some(0));
    assert_eq!(tokens_used(&env), 1_000);
    assert_eq!(
        store
            .admin()
            .pointer("claude-code:project")
            .unwrap()
            .as_deref(),
        Some(SESSION)
    );
}

/// Appends `count` Codex usage records `first..first + count` to a rollout
/// file, each counting 120 tokens (100 input of which 30 cache reads not
/// counted and 10 cache writes, 50 output).
fn append_rollout(rollout: &std::path::Path, first: usize, count: usize) {
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(rollout)
        .unwrap();
    let mut text = String::new();
    for i in first..first + count {
        let line = json!({"type": "token_usage_record", "payload": {"response_id": format!("resp_{i}"),
            "usage": {"input_tokens": 100, "cached_input_tokens": 30, "cache_write_input_tokens": 10,
                      "output_tokens": 50, "reasoning_output_tokens": 5}}});
        text.push_str(&format!("{line}\n"));
    }
    file.write_all(text.as_bytes()).unwrap();
}

const CODEX_RECORD_TOKENS: u64 = 120;
const CLAUDE_MESSAGE_TOKENS: u64 = 500;

/// Runs one hook process to its end: exit 0 and nothing on stderr.
fn run_hook(env: &TestEnv, host: &str, event: &Value) {
    let mut hook = env
        .std_cmd(&["--set", "goal.continuation.max_idle=100000", "hook", host])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn the hook");
    send(&mut hook, &event.to_string());
    let output = hook.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{event}");
    assert!(
        output.stderr.is_empty(),
        "{event}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// `rounds` appends and usage reports through the CLI.
fn cli_writes(env: &TestEnv, rounds: usize) {
    for round in 0..rounds {
        let json = format!(r#"{{"op":"append","phase":"Work","items":["cli {round}"]}}"#);
        env.ok(&["--session", SESSION, "todo", "apply", &json]);
        env.ok(&[
            "--session",
            SESSION,
            "goal",
            "usage",
            "--input",
            "4",
            "--output",
            "3",
        ]);
    }
}

/// The texts of the session's tasks, as `todo view` lists them, and the
/// list's version.
fn listed_tasks(env: &TestEnv) -> (Vec<String>, i64) {
    let view = env.view_json(SESSION);
    let tasks = view["details"]["phases"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|p| p["tasks"].as_array().unwrap().clone())
        .map(|t| t["content"].as_str().unwrap().to_owned())
        .collect();
    (tasks, view["details"]["version"].as_i64().unwrap())
}

/// Hook events of every kind and of two hosts on one session, racing CLI
/// writers, `goal usage` and an MCP server, while the transcripts grow:
/// every process succeeds, each response is counted exactly once, every
/// append is there once with versions 1, 2, 3… without a gap, and both
/// hosts' directory pointers name the session.
#[test]
fn hook_events_of_every_kind_racing_other_writers_lose_nothing() {
    const ROUNDS: usize = 10;
    let env = TestEnv::new();
    env.ok(&[
        "--session",
        SESSION,
        "goal",
        "set",
        "Ship",
        "--budget",
        "100000000",
    ]);
    let transcript = env.dir().join("claude.jsonl");
    let rollout = env.dir().join("rollout.jsonl");
    append_messages(&transcript, 200, 0, 10);
    append_rollout(&rollout, 0, 10);
    let claude = |name: &str, extra: Value| {
        let mut event = json!({"session_id": SESSION, "hook_event_name": name,
            "cwd": "claude", "transcript_path": transcript.display().to_string()});
        event
            .as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        event
    };
    let claude_events = [
        claude("UserPromptSubmit", json!({"prompt": "go on"})),
        claude("Stop", json!({"stop_hook_active": false})),
        claude("SubagentStop", json!({"stop_hook_active": false})),
        claude("PreCompact", json!({"trigger": "auto"})),
        claude("SessionStart", json!({"source": "compact"})),
    ];
    let codex = |name: &str| {
        json!({"session_id": SESSION, "hook_event_name": name, "cwd": "codex",
            "transcript_path": rollout.display().to_string(), "prompt": "go on",
            "stop_hook_active": false})
    };
    let codex_events = [codex("UserPromptSubmit"), codex("Stop")];
    let env = &env;
    std::thread::scope(|scope| {
        // Two Claude Code processes' worth of hook events, and Codex's.
        for worker in 0..2 {
            let events = &claude_events;
            scope.spawn(move || {
                for round in 0..ROUNDS {
                    run_hook(env, "claude-code", &events[(worker + round) % events.len()]);
                }
            });
        }
        let events = &codex_events;
        scope.spawn(move || {
            for round in 0..ROUNDS {
                run_hook(env, "codex", &events[round % events.len()]);
            }
        });
        // CLI appends and usage reports.
        scope.spawn(move || cli_writes(env, ROUNDS));
        // An MCP server's appends.
        scope.spawn(move || {
            let mut server = Server::start(env, SESSION);
            for round in 0..ROUNDS {
                let item = format!("mcp {round}");
                let result = server.call(
                    "todo",
                    json!({"op": "append", "phase": "Work", "items": [item]}),
                );
                assert!(!is_error(&result), "{result}");
            }
            assert!(server.stop().ends_with("[exit status: 0]"));
        });
        // The host keeps writing its transcripts meanwhile.
        scope.spawn(|| {
            for round in 1..=ROUNDS {
                std::thread::sleep(Duration::from_millis(20));
                append_messages(&transcript, 20, round * 10, 10);
                append_rollout(&rollout, round * 10, 10);
            }
        });
    });
    // The last events count what is left.
    run_hook(env, "claude-code", &claude_events[1]);
    run_hook(env, "codex", &codex_events[1]);

    let responses = (ROUNDS as u64 + 1) * 10;
    assert_eq!(
        tokens_used(env),
        responses * CLAUDE_MESSAGE_TOKENS + responses * CODEX_RECORD_TOKENS + ROUNDS as u64 * 7
    );
    let (mut tasks, version) = listed_tasks(env);
    tasks.sort();
    let mut expected: Vec<String> = (0..ROUNDS)
        .flat_map(|r| [format!("cli {r}"), format!("mcp {r}")])
        .collect();
    expected.sort();
    assert_eq!(tasks, expected);
    let mut store = goalkeeper::Store::open(env.db()).unwrap();
    let session = goalkeeper::SessionId::parse(SESSION).unwrap();
    let versions: Vec<i64> = store
        .read(&session, |tx| tx.event_log(100_000))
        .unwrap()
        .iter()
        .filter_map(|e| e.version)
        .collect();
    assert_eq!(versions, (1..=2 * ROUNDS as i64).collect::<Vec<_>>());
    assert_eq!(version, 2 * ROUNDS as i64);
    for dir in ["claude-code:claude", "codex:codex"] {
        assert_eq!(
            store.admin().pointer(dir).unwrap().as_deref(),
            Some(SESSION),
            "{dir}"
        );
    }
}
