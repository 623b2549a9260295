//! A killed `Stop` hook counting a transcript: the tokens counted are
//! those of the transcript up to the stored cursor, and the event's other
//! write is there exactly when the cursor moved.

use super::*;

/// Kills of a `Stop` hook that hit the live process.
const HOOK_KILLS: usize = 12;
/// Tokens each assistant message of the transcript counts.
const MESSAGE_TOKENS: u64 = 500;

/// Appends to the transcript `filler` user lines of 1,000 characters (the
/// hook reads through them, as through a long session's), then assistant
/// messages `first..first + count`, each counting [`MESSAGE_TOKENS`].
fn append_transcript(transcript: &std::path::Path, filler: usize, first: usize, count: usize) {
    use std::io::Write;
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(transcript)
        .unwrap();
    let user = serde_json::json!({"type": "user",
        "message": {"role": "user", "content": "x".repeat(1000)}});
    let mut text = String::new();
    for _ in 0..filler {
        text.push_str(&format!("{user}\n"));
    }
    for i in first..first + count {
        let line = serde_json::json!({"type": "assistant", "message": {"id": format!("msg_{i}"),
            "role": "assistant", "usage": {"input_tokens": 300, "output_tokens": 200,
            "cache_creation_input_tokens": 0, "cache_read_input_tokens": 9000}}});
        text.push_str(&format!("{line}\n"));
    }
    file.write_all(text.as_bytes()).unwrap();
}

fn spawn_stop_hook(env: &TestEnv, transcript: &std::path::Path, cwd: &str) -> Child {
    use std::io::Write;
    let event = serde_json::json!({"session_id": SESSION, "hook_event_name": "Stop", "cwd": cwd,
        "transcript_path": transcript.display().to_string(), "stop_hook_active": false});
    let mut child = env
        // Continuations without progress would soon pause the goal, and a
        // paused goal counts no usage: keep the runaway guard out of it.
        .std_cmd(&[
            "--set",
            "goal.continuation.max_idle=100000",
            "hook",
            "claude-code",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn the hook");
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(event.to_string().as_bytes()).unwrap();
    child
}

/// An acknowledged hook: exit 0, nothing on stderr, the continuation on
/// stdout.
fn assert_hook_ack(output: &Output) {
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
    assert!(
        String::from_utf8_lossy(&output.stdout).contains(r#""decision":"block""#),
        "{}",
        String::from_utf8_lossy(&output.stdout)
    );
}

/// What the database says about the hooks so far: the transcript offset
/// its cursor stores, and the tokens the goal counted.
struct HookState {
    offset: u64,
    tokens: u64,
}

/// Opens the file and checks that the hooks' writes agree with each other:
/// the goal's tokens are exactly those of the transcript's messages before
/// the stored cursor, and the usage events add up to them. Each directory
/// of `earlier` has its session pointer exactly when its hook committed;
/// `latest` is the directory of the last hook and the cursor before it:
/// its pointer is there exactly when the cursor moved. Returns the state
/// and whether the last hook committed.
fn inspect_hooks(
    env: &TestEnv,
    transcript: &std::path::Path,
    earlier: &[(String, bool)],
    latest: (&str, u64),
) -> (HookState, bool) {
    let session = SessionId::parse(SESSION).unwrap();
    let mut store = Store::open(env.db()).expect("the database reopens after a kill");
    assert_eq!(store.admin().integrity_check().unwrap(), "ok");
    let cursor: serde_json::Value = store
        .read(&session, |tx| tx.mark("claude-code.transcript"))
        .unwrap()
        .map_or(serde_json::Value::Null, |t| {
            serde_json::from_str(&t).unwrap()
        });
    let offset = cursor["files"][transcript.display().to_string()]["offset"]
        .as_u64()
        .unwrap_or(0);
    let bytes = std::fs::read(transcript).unwrap();
    assert!(offset as usize <= bytes.len());
    assert!(
        offset == 0 || bytes[offset as usize - 1] == b'\n',
        "the cursor is not at a line's end"
    );
    let messages = String::from_utf8_lossy(&bytes[..offset as usize])
        .lines()
        .filter(|l| l.contains(r#""type":"assistant""#))
        .count() as u64;
    let goal = store
        .read(&session, |tx| tx.goal())
        .unwrap()
        .expect("the goal");
    assert_eq!(
        goal.tokens_used,
        messages * MESSAGE_TOKENS,
        "tokens counted vs the transcript up to the cursor ({offset} bytes)"
    );
    let events = store.read(&session, |tx| tx.event_log(1_000_000)).unwrap();
    let from_events: u64 = events
        .iter()
        .filter(|e| e.ok && e.kind == EventKind::Goal && e.op.as_deref() == Some("usage"))
        .map(|e| {
            let usage = &e.payload["usage"];
            ["input", "output", "cache_write"]
                .iter()
                .map(|k| usage[k].as_u64().unwrap())
                .sum::<u64>()
        })
        .sum();
    assert_eq!(from_events, goal.tokens_used, "usage events vs the goal");
    let (cwd, before) = latest;
    let committed = offset > before;
    for (cwd, expected) in earlier
        .iter()
        .map(|(c, e)| (c.as_str(), *e))
        .chain([(cwd, committed)])
    {
        let pointer = store
            .admin()
            .pointer(&format!("claude-code:{cwd}"))
            .unwrap();
        assert_eq!(
            pointer.as_deref(),
            expected.then_some(SESSION),
            "the pointer of {cwd} vs its hook's commit (cursor {offset}, before the last hook {before})"
        );
    }
    let state = HookState {
        offset,
        tokens: goal.tokens_used,
    };
    (state, committed)
}

/// Runs a hook in `cwd` to completion: it must be acknowledged and count
/// every message written so far.
fn acknowledged_hook(
    env: &TestEnv,
    transcript: &std::path::Path,
    cwds: &mut Vec<(String, bool)>,
    cwd: String,
    state: &HookState,
    messages: usize,
) -> (HookState, Duration) {
    let started = Instant::now();
    let output = spawn_stop_hook(env, transcript, &cwd)
        .wait_with_output()
        .unwrap();
    let took = started.elapsed();
    assert_hook_ack(&output);
    let (state, committed) = inspect_hooks(env, transcript, cwds, (&cwd, state.offset));
    assert!(committed);
    assert_eq!(state.tokens, messages as u64 * MESSAGE_TOKENS);
    cwds.push((cwd, true));
    (state, took)
}

#[test]
fn sigkill_of_a_hook_mid_event_counts_usage_once_or_not_at_all() {
    let started = Instant::now();
    let env = TestEnv::new();
    let mut rng = Rng::from_env();
    env.ok(&[
        "--session",
        SESSION,
        "goal",
        "set",
        "Ship",
        "--budget",
        "100000000",
    ]);
    let transcript = env.dir().join("transcript.jsonl");
    // Every directory a hook ran in, and whether that hook committed.
    let mut cwds: Vec<(String, bool)> = Vec::new();
    let mut messages = 0;
    let (mut finished, mut before_commit, mut after_commit) = (0, 0, 0);
    let mut state = HookState {
        offset: 0,
        tokens: 0,
    };

    // Calibrate: how long one hook takes, on a round's worth of transcript.
    let mut durations = Vec::new();
    for i in 0..3 {
        append_transcript(&transcript, 300, messages, 10);
        messages += 10;
        let took;
        (state, took) = acknowledged_hook(
            &env,
            &transcript,
            &mut cwds,
            format!("warm-up-{i}"),
            &state,
            messages,
        );
        durations.push(took);
    }
    durations.sort();
    let cap = (durations[1] * 3 / 2).min(Duration::from_millis(400));
    eprintln!("crash_safety: a Stop hook takes {durations:?}; kill delays 0..={cap:?}");

    let mut round = 0;
    while before_commit + after_commit < HOOK_KILLS {
        assert!(
            round < MAX_ROUNDS,
            "only {} kills of a live hook after {round} rounds",
            before_commit + after_commit
        );
        round += 1;
        // A hook that runs to completion counts everything written so far,
        // what a killed hook left included.
        append_transcript(&transcript, 100, messages, 5);
        messages += 5;
        (state, _) = acknowledged_hook(
            &env,
            &transcript,
            &mut cwds,
            format!("round-{round}"),
            &state,
            messages,
        );

        // The hook in flight, killed at a random point.
        append_transcript(&transcript, 300, messages, 10);
        messages += 10;
        let cwd = format!("round-{round}-killed");
        let mut hook = spawn_stop_hook(&env, &transcript, &cwd);
        std::thread::sleep(Duration::from_micros(rng.below(cap.as_micros() as u64 + 1)));
        hook.kill().expect("send SIGKILL");
        let output = hook.wait_with_output().unwrap();
        let committed;
        (state, committed) = inspect_hooks(&env, &transcript, &cwds, (&cwd, state.offset));
        cwds.push((cwd, committed));
        if committed {
            // All of the event: every message so far, once.
            assert_eq!(state.tokens, messages as u64 * MESSAGE_TOKENS);
        }
        if output.status.success() {
            assert_hook_ack(&output);
            assert!(committed);
            finished += 1;
        } else {
            use std::os::unix::process::ExitStatusExt;
            assert_eq!(output.status.signal(), Some(SIGKILL), "{output:?}");
            if committed {
                after_commit += 1;
            } else {
                before_commit += 1;
            }
        }
    }

    // The next hook counts what the killed ones left, once.
    append_transcript(&transcript, 0, messages, 1);
    messages += 1;
    acknowledged_hook(
        &env,
        &transcript,
        &mut cwds,
        "after".to_owned(),
        &state,
        messages,
    );
    eprintln!(
        "crash_safety: {round} hook rounds in {:?}: killed before commit {before_commit}, \
         after commit {after_commit}, finished before the signal {finished}",
        started.elapsed()
    );
}
