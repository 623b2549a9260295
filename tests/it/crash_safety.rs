//! Crash safety (DESIGN.md §7): a process killed with SIGKILL at a random
//! point, mid-transaction included, leaves a sound database holding every
//! write it acknowledged and nothing half-applied, on which the next
//! command works. Three writers are killed this way:
//!
//! - `goalkeeper todo apply` (the list is the last acknowledged state or
//!   that plus the killed call, and the event log agrees with it);
//! - the MCP server with a burst of calls in flight (every answered call is
//!   there, each call is there whole or not at all, in the order sent, and
//!   versions stay contiguous);
//! - a Claude Code `Stop` hook counting a transcript (the tokens counted
//!   are exactly those of the transcript up to the stored cursor, the
//!   usage events add up to them, and the event's other write, the
//!   directory's session pointer, is there exactly when the cursor moved).
//!
//! Each round runs a short stream of writes that are waited for (the
//! acknowledged ones), then starts one more (or a burst) and kills it after
//! a random delay capped near the measured length of a call, so that most
//! kills hit a live process, and inspects the file. Rounds continue until
//! enough kills have hit a live process. The seed of the delays is
//! printed; `CRASH_SEED=N` replays a run.

use crate::common;

use std::process::{Child, Output, Stdio};
use std::time::{Duration, Instant};

use common::TestEnv;
use goalkeeper::store::EventKind;
use goalkeeper::todo::{Status, TodoList};
use goalkeeper::{SessionId, Store};

const SESSION: &str = "crash";
const PHASE: &str = "Stream";
/// Kills that must land on a live process; rounds whose call finished
/// before the signal do not count.
const KILLS: usize = 24;
/// A bound on rounds, so a machine where every call outruns the delay
/// fails instead of looping.
const MAX_ROUNDS: usize = 200;
const MAX_DELAY: Duration = Duration::from_millis(15);
/// SIGKILL's number, 9 on every Unix.
const SIGKILL: i32 = 9;

/// A small xorshift generator: enough randomness for delays, and a seed
/// that can be printed and replayed.
struct Rng(u64);

impl Rng {
    fn from_env() -> Rng {
        let seed = std::env::var("CRASH_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| {
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(1, |d| d.as_nanos() as u64)
            })
            | 1;
        eprintln!("crash_safety: CRASH_SEED={seed}");
        Rng(seed)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// How the killed call ended, as far as the test can tell.
#[derive(Debug, Default)]
struct Tally {
    /// The process was gone before the signal: an acknowledged call.
    finished: usize,
    /// Killed; its change is not in the file.
    killed_before_commit: usize,
    /// Killed; its change is in the file (it died after committing).
    killed_after_commit: usize,
    /// Killed before committing, but with WAL frames of its transaction
    /// written: the kill tore the commit itself.
    torn_commits: usize,
}

/// A task content of about 800 characters, so the stored list (and each
/// event's copy of it) grows by kilobytes per call: later transactions
/// write dozens of pages, which widens the window a kill can land in.
fn padded(label: &str) -> String {
    format!("{label}:{}", " filler text".repeat(66))
}

/// The label of a padded content, for readable failure messages.
fn label(content: &str) -> &str {
    content.split(':').next().unwrap_or(content)
}

fn labels(contents: &[String]) -> Vec<&str> {
    contents.iter().map(|c| label(c)).collect()
}

fn append_json(content: &str) -> String {
    serde_json::json!({"op": "append", "phase": PHASE, "items": [content]}).to_string()
}

fn apply_args(json: &str) -> [&str; 5] {
    ["--session", SESSION, "todo", "apply", json]
}

fn spawn_append(env: &TestEnv, content: &str) -> Child {
    let json = append_json(content);
    env.std_cmd(&apply_args(&json))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn goalkeeper")
}

/// Runs one append to completion; it must be acknowledged.
fn acknowledged_append(env: &TestEnv, content: &str) -> Duration {
    let started = Instant::now();
    let output = spawn_append(env, content)
        .wait_with_output()
        .expect("wait for goalkeeper");
    let took = started.elapsed();
    assert_ack(&output, content);
    took
}

fn assert_ack(output: &Output, content: &str) {
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && stdout.contains(content),
        "append of {content:?} was not acknowledged: {:?}\n{stdout}{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Opens the file the way the next command does and checks it against what
/// was acknowledged; returns the contents the list holds.
fn inspect(env: &TestEnv, acknowledged: &[String], in_flight: Option<&str>) -> Vec<String> {
    let calls: Vec<Vec<String>> = acknowledged.iter().map(|c| vec![c.clone()]).collect();
    let in_flight: Vec<Vec<String>> = in_flight.map(|c| vec![c.to_owned()]).into_iter().collect();
    let applied = inspect_calls(env, &calls, &in_flight);
    calls
        .into_iter()
        .chain(in_flight.into_iter().take(applied))
        .flatten()
        .collect()
}

/// Opens the file the way the next command does and checks it against the
/// append calls acknowledged, in order, each adding its items to the one
/// phase: the list holds them all, followed by the first `n` of the calls
/// in flight (whole calls only), with one successful append event per call
/// and versions 1, 2, 3… without a gap. Returns `n`.
fn inspect_calls(env: &TestEnv, acknowledged: &[Vec<String>], in_flight: &[Vec<String>]) -> usize {
    let session = SessionId::parse(SESSION).unwrap();
    let mut store = Store::open(&env.db()).expect("the database reopens after a kill");
    assert_eq!(store.admin().integrity_check().unwrap(), "ok");
    let (list, version) = store.read(&session, |tx| tx.todo_list()).unwrap();
    assert_eq!(list.validate(), Ok(()));
    let contents = contents(&list);

    let mut expected: Vec<String> = acknowledged.iter().flatten().cloned().collect();
    let mut applied = None;
    for n in 0..=in_flight.len() {
        if n > 0 {
            expected.extend(in_flight[n - 1].iter().cloned());
        }
        if contents == expected {
            applied = Some(n);
            break;
        }
    }
    let Some(applied) = applied else {
        panic!(
            "the list is not the acknowledged calls followed by some of the calls in flight, whole:\n\
             list {:?}\nacknowledged {:?}\nin flight {:?}",
            labels(&contents),
            labels(&acknowledged.concat()),
            labels(&in_flight.concat()),
        );
    };
    let active = list
        .tasks()
        .filter(|(_, t)| t.status == Status::InProgress)
        .count();
    assert_eq!(active, usize::from(!contents.is_empty()));

    // The event log and the list agree: one successful append event per
    // call, versions 1..=n in order, the latest being the list's version.
    let calls = acknowledged.len() + applied;
    let events = store.read(&session, |tx| tx.event_log(1_000_000)).unwrap();
    assert!(
        events
            .iter()
            .all(|e| e.ok && e.kind == EventKind::Todo && e.op.as_deref() == Some("append")),
        "unexpected events: {events:?}"
    );
    assert_eq!(events.len(), calls, "one append event per call");
    let versions: Vec<i64> = events.iter().filter_map(|e| e.version).collect();
    let expected_versions: Vec<i64> = (1..=calls as i64).collect();
    assert_eq!(versions, expected_versions);
    assert_eq!(version, calls as i64);

    // The undo history agrees with the list: undoing the latest version
    // (in a backup copy, so this check writes nothing here) gives the list
    // before the last call.
    if version > 0 {
        let last = acknowledged
            .iter()
            .chain(&in_flight[..applied])
            .last()
            .map_or(0, Vec::len);
        let copy = env.db().with_extension(format!("copy-{version}.db"));
        store
            .admin()
            .backup(&copy)
            .expect("a backup of the reopened database");
        drop(store);
        let mut copy_store = Store::open(&copy).unwrap();
        copy_store
            .write(&session, |tx| tx.todo_undo(0))
            .expect("the latest version can be undone");
        let (before, _) = copy_store.read(&session, |tx| tx.todo_list()).unwrap();
        assert_eq!(
            self::contents(&before),
            contents[..contents.len() - last],
            "undoing the latest version does not give the list before it"
        );
        drop(copy_store);
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", copy.display()));
        }
    } else {
        drop(store);
    }
    applied
}

/// True when a write-ahead log with at least one frame was left behind (a
/// clean exit checkpoints and deletes it).
fn wal_has_frames(env: &TestEnv) -> bool {
    const WAL_HEADER: u64 = 32;
    let mut wal = env.db().into_os_string();
    wal.push("-wal");
    std::fs::metadata(wal).is_ok_and(|m| m.len() > WAL_HEADER)
}

fn contents(list: &TodoList) -> Vec<String> {
    list.tasks().map(|(_, t)| t.content.clone()).collect()
}

/// Spawns an append and SIGKILLs it after `delay`. Returns true when the
/// call finished (and was acknowledged) before the signal.
fn kill_after(env: &TestEnv, content: &str, delay: Duration) -> bool {
    let mut child = spawn_append(env, content);
    std::thread::sleep(delay);
    // `Child::kill` sends SIGKILL on Unix; on a process that already exited
    // it does nothing, and the exit status tells the two cases apart.
    child.kill().expect("send SIGKILL");
    let output = child.wait_with_output().expect("reap goalkeeper");
    if output.status.success() {
        assert_ack(&output, content);
        return true;
    }
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(
        output.status.signal(),
        Some(SIGKILL),
        "the call failed instead of being killed: {output:?}"
    );
    false
}

#[test]
fn sigkill_mid_stream_leaves_a_sound_database() {
    let started = Instant::now();
    let env = TestEnv::new();
    let mut rng = Rng::from_env();
    let mut acknowledged: Vec<String> = Vec::new();
    let mut tally = Tally::default();

    // Calibrate: how long one whole call takes on this machine.
    let mut durations = Vec::new();
    for i in 0..3 {
        let content = padded(&format!("warm-up {i}"));
        durations.push(acknowledged_append(&env, &content));
        acknowledged.push(content);
    }
    durations.sort();
    let cap = (durations[1] * 3 / 2).min(MAX_DELAY);
    eprintln!("crash_safety: a call takes {durations:?}; kill delays 0..={cap:?}");

    let mut round = 0;
    while tally.killed_before_commit + tally.killed_after_commit < KILLS {
        assert!(
            round < MAX_ROUNDS,
            "only {tally:?} after {round} rounds: calls finish before the kill"
        );
        round += 1;
        // The stream: a few calls that run to completion.
        for k in 0..=rng.below(2) {
            let content = padded(&format!("round {round} call {k}"));
            acknowledged_append(&env, &content);
            acknowledged.push(content);
        }
        // The call in flight, killed at a random point.
        let victim = padded(&format!("round {round} killed"));
        let delay = Duration::from_micros(rng.below(cap.as_micros() as u64 + 1));
        let finished = kill_after(&env, &victim, delay);
        let wal_frames = wal_has_frames(&env);
        if finished {
            tally.finished += 1;
            acknowledged.push(victim);
            inspect(&env, &acknowledged, None);
        } else {
            let now = inspect(&env, &acknowledged, Some(&victim));
            if now.len() > acknowledged.len() {
                tally.killed_after_commit += 1;
                acknowledged.push(victim);
            } else {
                tally.killed_before_commit += 1;
                tally.torn_commits += usize::from(wal_frames);
            }
        }
    }

    // The next command works, through the CLI, and sees everything.
    let last = padded("after the last kill");
    acknowledged_append(&env, &last);
    acknowledged.push(last);
    inspect(&env, &acknowledged, None);
    let view = env.view_json(SESSION);
    assert_eq!(view["details"]["version"], acknowledged.len() as i64);

    eprintln!(
        "crash_safety: {round} rounds, {KILLS} kills of a live process in {:?}: {tally:?}",
        started.elapsed()
    );
}

#[test]
fn sigkill_while_creating_the_database_leaves_it_usable() {
    let mut rng = Rng::from_env();
    for round in 0..6 {
        let env = TestEnv::new();
        let victim = format!("first call {round}");
        let delay = Duration::from_micros(rng.below(MAX_DELAY.as_micros() as u64 + 1));
        let finished = kill_after(&env, &victim, delay);
        let acknowledged = if finished {
            vec![victim.clone()]
        } else {
            Vec::new()
        };
        // The file may be missing, empty, or half-migrated; opening it
        // recovers, and the list is empty or holds the one call.
        let held = inspect(&env, &acknowledged, Some(&victim));
        acknowledged_append(&env, "next");
        let mut expected = held;
        expected.push("next".to_owned());
        inspect(&env, &expected, None);
    }
}

/// Kills of the MCP server with calls still unanswered.
const MCP_KILLS: usize = 12;
/// Calls sent at once before each kill, and the items each appends.
const BURST: usize = 6;
const ITEMS_PER_CALL: usize = 4;

/// A `goalkeeper mcp` process past its handshake, its stdout read line by
/// line on a thread.
struct Server {
    child: Child,
    stdin: std::process::ChildStdin,
    lines: std::sync::mpsc::Receiver<String>,
}

impl Server {
    fn start(env: &TestEnv) -> Server {
        let mut child = env
            .std_cmd(&["--session", SESSION, "mcp"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn goalkeeper mcp");
        let stdout = child.stdout.take().unwrap();
        let (send, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            use std::io::BufRead;
            for line in std::io::BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if send.send(line).is_err() {
                    break;
                }
            }
        });
        let mut server = Server {
            stdin: child.stdin.take().unwrap(),
            child,
            lines,
        };
        server.send(&[
            serde_json::json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "crash", "version": "0"}}})
            .to_string(),
        ]);
        let answer = server.answer();
        assert_eq!(answer["id"], 0, "{answer}");
        server.send(&[r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_owned()]);
        server
    }

    /// Writes `lines` in one go.
    fn send(&mut self, lines: &[String]) {
        use std::io::Write;
        let mut bytes = lines.join("\n");
        bytes.push('\n');
        self.stdin.write_all(bytes.as_bytes()).unwrap();
        self.stdin.flush().unwrap();
    }

    fn answer(&self) -> serde_json::Value {
        let line = self
            .lines
            .recv_timeout(Duration::from_secs(60))
            .expect("an answer from the MCP server");
        serde_json::from_str(&line).unwrap()
    }

    /// SIGKILLs the server and returns every answer it wrote before dying.
    fn kill(mut self) -> Vec<serde_json::Value> {
        use std::os::unix::process::ExitStatusExt;
        self.child.kill().expect("send SIGKILL");
        let status = self.child.wait().expect("reap goalkeeper mcp");
        assert_eq!(
            status.signal(),
            Some(SIGKILL),
            "the server exited by itself"
        );
        // The reader thread ends at EOF, which the kill brings.
        self.lines
            .iter()
            .map(|line| serde_json::from_str(&line).unwrap())
            .collect()
    }
}

fn mcp_append(id: usize, items: &[String]) -> String {
    serde_json::json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "todo", "arguments": {"op": "append", "phase": PHASE, "items": items}}})
    .to_string()
}

/// An answered call must be a success naming what it appended.
fn assert_mcp_ack(answer: &serde_json::Value, items: &[String]) {
    let result = &answer["result"];
    assert_eq!(result["isError"], false, "{answer}");
    let text = result["content"][0]["text"].as_str().unwrap_or_default();
    assert!(
        text.contains(label(&items[0])),
        "the answer does not name the call's items: {text}"
    );
}

fn call_items(round: usize, call: usize) -> Vec<String> {
    (0..ITEMS_PER_CALL)
        .map(|i| padded(&format!("round {round} call {call} item {i}")))
        .collect()
}

#[test]
fn sigkill_of_the_mcp_server_mid_call_loses_no_acknowledged_call() {
    let started = Instant::now();
    let env = TestEnv::new();
    let mut rng = Rng::from_env();
    let mut acknowledged: Vec<Vec<String>> = Vec::new();
    // Rounds whose burst was all answered before the kill, kills with
    // calls unanswered, and among those the calls committed but never
    // answered.
    let (mut all_answered, mut mid_burst, mut committed_unanswered) = (0, 0, 0);

    // Calibrate: how long one call takes in a running server.
    let mut server = Server::start(&env);
    let mut durations = Vec::new();
    for i in 0..3 {
        let items = call_items(0, i);
        let sent = Instant::now();
        server.send(&[mcp_append(i + 1, &items)]);
        assert_mcp_ack(&server.answer(), &items);
        durations.push(sent.elapsed());
        acknowledged.push(items);
    }
    drop(server.kill());
    durations.sort();
    let cap = (durations[1] * BURST as u32 * 3 / 2).min(Duration::from_millis(300));
    eprintln!("crash_safety: an MCP call takes {durations:?}; kill delays 0..={cap:?}");

    let mut round = 0;
    while mid_burst < MCP_KILLS {
        assert!(
            round < MAX_ROUNDS,
            "only {mid_burst} kills mid-burst after {round} rounds"
        );
        round += 1;
        let mut server = Server::start(&env);
        // One call answered before the burst: the server is past its
        // start-up when the burst arrives.
        let items = call_items(round, 0);
        server.send(&[mcp_append(1, &items)]);
        assert_mcp_ack(&server.answer(), &items);
        acknowledged.push(items);

        let burst: Vec<Vec<String>> = (1..=BURST).map(|k| call_items(round, k)).collect();
        let lines: Vec<String> = burst
            .iter()
            .enumerate()
            .map(|(k, items)| mcp_append(k + 2, items))
            .collect();
        server.send(&lines);
        std::thread::sleep(Duration::from_micros(rng.below(cap.as_micros() as u64 + 1)));
        let answers = server.kill();
        // Calls run one after the other, in the order sent, so the answers
        // are the first calls of the burst.
        for (k, answer) in answers.iter().enumerate() {
            assert_eq!(answer["id"], k + 2, "answers out of order: {answers:?}");
            assert_mcp_ack(answer, &burst[k]);
        }
        let answered = answers.len();
        acknowledged.extend(burst[..answered].iter().cloned());
        let applied = inspect_calls(&env, &acknowledged, &burst[answered..]);
        acknowledged.extend(burst[answered..answered + applied].iter().cloned());
        if answered == BURST {
            all_answered += 1;
        } else {
            mid_burst += 1;
            committed_unanswered += applied;
        }
    }

    // A new server sees everything and goes on from there.
    let mut server = Server::start(&env);
    let items = call_items(round + 1, 0);
    server.send(&[mcp_append(1, &items)]);
    assert_mcp_ack(&server.answer(), &items);
    acknowledged.push(items);
    drop(server.kill());
    inspect_calls(&env, &acknowledged, &[]);
    eprintln!(
        "crash_safety: {round} MCP rounds in {:?}: {mid_burst} kills with calls unanswered \
         ({committed_unanswered} calls committed but not answered), {all_answered} bursts answered whole",
        started.elapsed()
    );
}

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
    let mut store = Store::open(&env.db()).expect("the database reopens after a kill");
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
