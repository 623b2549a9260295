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

mod hook;
mod mcp;

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
    let mut store = Store::open(env.db()).expect("the database reopens after a kill");
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
