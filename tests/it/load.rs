//! Load: many real processes running a mix of commands (agent todo calls
//! `append`, `done` and `view`, the `context` message, `goal usage`) against
//! one database, on one shared session and on a session each. Every call
//! must succeed with nothing on stderr (no `SQLITE_BUSY`, no "database is
//! locked"), and the final state must count exactly what was done: every
//! task appended, every `done` applied, every token reported, one list
//! version per mutation. Throughput and latencies go to stderr.
//!
//! The default run is small (8 processes × 25 operations) so `cargo test`
//! stays quick on two cores. The full size, 16 × 200, is ignored by
//! default; run it with
//!
//! ```text
//! cargo test --release --test it load -- --ignored --nocapture --test-threads=1
//! ```
//!
//! `--release` so the numbers are the release binary's (without it the
//! test runs the debug build), one test at a time so the two do not share
//! the cores.

use crate::common;

use std::thread;
use std::time::{Duration, Instant};

use common::TestEnv;
use serde_json::Value;

/// One operation of the mix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Append,
    Done,
    View,
    Context,
    Usage,
}

/// The repeating mix: two appends, one `done` of the worker's oldest open
/// task, two usage reports, two views, one context.
const MIX: [Kind; 8] = [
    Kind::Append,
    Kind::Usage,
    Kind::View,
    Kind::Append,
    Kind::Context,
    Kind::Done,
    Kind::Usage,
    Kind::View,
];

/// Tokens one `goal usage` call counts: input + output + cache writes
/// (the cache reads it also reports do not count).
const TOKENS_PER_USAGE: u64 = 100 + 20 + 5;

/// Where the workers write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Sessions {
    /// Every worker on the same session.
    Shared,
    /// Worker `w` on session `load-w`.
    OnePerWorker,
}

fn session_of(sessions: Sessions, worker: usize) -> String {
    match sessions {
        Sessions::Shared => "load".to_owned(),
        Sessions::OnePerWorker => format!("load-{worker}"),
    }
}

fn item(worker: usize, n: usize) -> String {
    format!("worker {worker} item {n}")
}

/// How many operations of each kind `ops` operations of the mix hold.
fn count(ops: usize, kind: Kind) -> usize {
    (0..ops).filter(|i| MIX[i % MIX.len()] == kind).count()
}

/// Runs one command and fails the test, showing everything, unless it
/// succeeded with nothing on stderr.
fn ok(env: &TestEnv, args: &[&str]) -> String {
    let output = env.cmd(args).output().expect("run goalkeeper");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        !stderr.contains("locked") && !stderr.contains("BUSY"),
        "a busy database surfaced: {}",
        common::render(args, &output)
    );
    assert!(
        output.status.success() && output.stderr.is_empty(),
        "{}",
        common::render(args, &output)
    );
    String::from_utf8(output.stdout).expect("utf-8 stdout")
}

/// What one worker saw: each operation's kind and latency.
type Timings = Vec<(Kind, Duration)>;

fn worker(env: &TestEnv, worker: usize, ops: usize, sessions: Sessions) -> Timings {
    let session = session_of(sessions, worker);
    let (mut appended, mut done) = (0, 0);
    let mut timings = Vec::with_capacity(ops);
    for i in 0..ops {
        let kind = MIX[i % MIX.len()];
        let call;
        let args: Vec<&str> = match kind {
            Kind::Append => {
                call = serde_json::json!({
                    "op": "append",
                    "phase": format!("Worker {worker}"),
                    "items": [item(worker, appended)],
                })
                .to_string();
                appended += 1;
                vec!["todo", "apply", &call]
            }
            Kind::Done => {
                call = serde_json::json!({"op": "done", "task": item(worker, done)}).to_string();
                done += 1;
                vec!["todo", "apply", &call]
            }
            Kind::View => vec!["todo", "apply", r#"{"op":"view"}"#],
            Kind::Context => vec!["context"],
            Kind::Usage => vec![
                "goal",
                "usage",
                "--input",
                "100",
                "--output",
                "20",
                "--cache-write",
                "5",
                "--cache-read",
                "1000",
            ],
        };
        let mut full = vec!["--session", &session];
        full.extend(&args);
        let started = Instant::now();
        let stdout = ok(env, &full);
        timings.push((kind, started.elapsed()));
        match kind {
            Kind::View => assert!(stdout.contains("Overall: "), "{stdout}"),
            Kind::Context => assert!(
                stdout.contains("<todo_context>") && stdout.contains("</todo_context>"),
                "{stdout}"
            ),
            _ => {}
        }
    }
    timings
}

/// Runs `workers` processes × `ops` operations and checks the final state.
fn load(workers: usize, ops: usize, sessions: Sessions) {
    let env = TestEnv::new();
    let env = &env;
    let session_ids: Vec<String> = match sessions {
        Sessions::Shared => vec![session_of(sessions, 0)],
        Sessions::OnePerWorker => (0..workers).map(|w| session_of(sessions, w)).collect(),
    };
    for session in &session_ids {
        ok(
            env,
            &[
                "--session",
                session,
                "goal",
                "set",
                "Survive the load",
                "--budget",
                "1000000000",
            ],
        );
    }

    let started = Instant::now();
    let timings: Vec<Timings> = thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|w| scope.spawn(move || worker(env, w, ops, sessions)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("worker"))
            .collect()
    });
    let elapsed = started.elapsed();

    for (s, session) in session_ids.iter().enumerate() {
        let workers_here: Vec<usize> = match sessions {
            Sessions::Shared => (0..workers).collect(),
            Sessions::OnePerWorker => vec![s],
        };
        check_session(env, session, &workers_here, ops);
    }

    report(workers, ops, sessions, elapsed, &timings);
}

/// The final state of `session`, which each of `workers_here` ran `ops`
/// operations on: every task, every `done`, every
/// token counted, one version and one logged event per mutation.
fn check_session(env: &TestEnv, session: &str, workers_here: &[usize], ops: usize) {
    let per_session = workers_here.len();
    let (appends, dones, usages) = (
        count(ops, Kind::Append),
        count(ops, Kind::Done),
        count(ops, Kind::Usage),
    );
    let view = ok(
        env,
        &[
            "--session",
            session,
            "--json",
            "todo",
            "apply",
            r#"{"op":"view"}"#,
        ],
    );
    let view: Value = serde_json::from_str(&view).unwrap();
    let phases = view["details"]["phases"].as_array().unwrap();
    let tasks: Vec<&Value> = phases
        .iter()
        .flat_map(|p| p["tasks"].as_array().unwrap())
        .collect();
    assert_eq!(tasks.len(), per_session * appends, "{session}: tasks");
    let completed = tasks.iter().filter(|t| t["status"] == "completed").count();
    assert_eq!(completed, per_session * dones, "{session}: completed");
    assert_eq!(
        view["details"]["version"],
        (per_session * (appends + dones)) as i64,
        "{session}: one version per mutation"
    );
    // Each worker's tasks are all there, in its own order, the oldest
    // ones completed.
    for &w in workers_here {
        let phase = phases
            .iter()
            .find(|p| p["name"] == format!("Worker {w}"))
            .unwrap_or_else(|| panic!("{session}: no phase of worker {w}"));
        let mine: Vec<(&str, &str)> = phase["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                (
                    t["content"].as_str().unwrap(),
                    t["status"].as_str().unwrap(),
                )
            })
            .collect();
        let expected: Vec<String> = (0..appends).map(|n| item(w, n)).collect();
        let contents: Vec<&str> = mine.iter().map(|(c, _)| *c).collect();
        assert_eq!(contents, expected, "{session}: worker {w}'s tasks");
        assert!(
            mine[..dones].iter().all(|(_, s)| *s == "completed"),
            "{session}: worker {w}'s done tasks"
        );
    }

    let goal = ok(env, &["--session", session, "--json", "goal", "get"]);
    let goal: Value = serde_json::from_str(&goal).unwrap();
    assert_eq!(
        goal["details"]["goal"]["tokens_used"],
        per_session as u64 * usages as u64 * TOKENS_PER_USAGE,
        "{session}: tokens: {goal}"
    );
    assert_eq!(goal["details"]["goal"]["status"], "active", "{session}");

    let log = ok(
        env,
        &[
            "--session",
            session,
            "--json",
            "todo",
            "log",
            "--limit",
            "1000000",
        ],
    );
    let events: Vec<Value> = serde_json::from_str(&log).unwrap();
    assert!(
        events.iter().all(|e| e["ok"] == true),
        "{session}: a rejected call"
    );
    let todo_events = events.iter().filter(|e| e["kind"] == "todo").count();
    assert_eq!(
        todo_events,
        per_session * (appends + dones),
        "{session}: log"
    );
}

/// Throughput and latency percentiles, per kind and overall, on stderr.
fn report(workers: usize, ops: usize, sessions: Sessions, elapsed: Duration, timings: &[Timings]) {
    let total = workers * ops;
    eprintln!(
        "load {sessions:?}: {workers} processes x {ops} ops = {total} ops in {:.2} s: {:.0} ops/s",
        elapsed.as_secs_f64(),
        total as f64 / elapsed.as_secs_f64()
    );
    let all: Vec<(Kind, Duration)> = timings.iter().flatten().copied().collect();
    let line = |name: &str, mut times: Vec<Duration>| {
        times.sort();
        let at = |q: f64| times[((times.len() - 1) as f64 * q).round() as usize];
        let ms = |d: Duration| d.as_secs_f64() * 1000.0;
        eprintln!(
            "  {name:<8} n={:<5} p50 {:>6.1} ms  p95 {:>6.1} ms  max {:>6.1} ms",
            times.len(),
            ms(at(0.5)),
            ms(at(0.95)),
            ms(at(1.0))
        );
    };
    for kind in [
        Kind::Append,
        Kind::Done,
        Kind::View,
        Kind::Context,
        Kind::Usage,
    ] {
        let times: Vec<Duration> = all
            .iter()
            .filter(|(k, _)| *k == kind)
            .map(|(_, d)| *d)
            .collect();
        if !times.is_empty() {
            line(&format!("{kind:?}").to_lowercase(), times);
        }
    }
    line("all", all.iter().map(|(_, d)| *d).collect());
}

#[test]
fn eight_processes_share_one_session() {
    load(8, 25, Sessions::Shared);
}

#[test]
fn eight_processes_each_on_their_own_session() {
    load(8, 25, Sessions::OnePerWorker);
}

#[test]
#[ignore = "3,200 process runs, 10-20 s on two cores; run with --ignored (see the module doc)"]
fn sixteen_processes_x_200_share_one_session() {
    load(16, 200, Sessions::Shared);
}

#[test]
#[ignore = "3,200 process runs, 10-20 s on two cores; run with --ignored (see the module doc)"]
fn sixteen_processes_x_200_each_on_their_own_session() {
    load(16, 200, Sessions::OnePerWorker);
}
