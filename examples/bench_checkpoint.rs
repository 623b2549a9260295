//! The checkpoint policy, measured (BENCHMARKS.md): the latency of one
//! CLI-like mutation (open, one `todo` call, close) when commits collect in
//! the write-ahead log (what goalkeeper does) against one that also folds
//! the WAL back into the database file after every command, which is what
//! "the database file alone is a complete copy after every command" costs.
//!
//! ```text
//! bench_checkpoint DIR [--runs N]
//! ```
//!
//! Prints the median, p90, p99 and max per policy, interleaved run by run
//! on two databases of a 1,000-task session.

use std::path::Path;
use std::time::Instant;

use goalkeeper::store::Caller;
use goalkeeper::todo::{Actor, Call, Op, PhaseItems};
use goalkeeper::{SessionId, Store};

fn task(i: usize) -> String {
    format!("Task {i:05}: update the parser and its tests for case {i}")
}

fn build(path: &Path, session: &SessionId) {
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
    }
    let mut store = Store::open(path).unwrap();
    let init = Op::Init(
        (0..10)
            .map(|p| PhaseItems {
                name: format!("Phase {p}"),
                items: (p * 100..(p + 1) * 100).map(task).collect(),
            })
            .collect(),
    );
    store
        .todo(
            session,
            Call::Op(&init),
            Actor::User,
            &mut Caller::default(),
            0,
        )
        .unwrap();
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn main() {
    let mut args = std::env::args().skip(1);
    let dir =
        std::path::PathBuf::from(args.next().expect("usage: bench_checkpoint DIR [--runs N]"));
    let runs: usize = match (args.next().as_deref(), args.next()) {
        (Some("--runs"), Some(n)) => n.parse().expect("a number"),
        _ => 300,
    };
    let session = SessionId::parse("bench").unwrap();
    let (deferred, every) = (dir.join("deferred.db"), dir.join("every.db"));
    build(&deferred, &session);
    build(&every, &session);
    let mut times = [Vec::new(), Vec::new()];
    for i in 0..runs {
        let op = Op::Start(task(500 + i % 2));
        for (k, path) in [&deferred, &every].into_iter().enumerate() {
            let started = Instant::now();
            let mut store = Store::open(path).unwrap();
            store
                .todo(
                    &session,
                    Call::Op(&op),
                    Actor::Agent,
                    &mut Caller::default(),
                    0,
                )
                .unwrap();
            drop(store);
            if k == 1 {
                let conn = rusqlite::Connection::open(path).unwrap();
                conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
                    .unwrap();
            }
            times[k].push(started.elapsed().as_secs_f64() * 1000.0);
        }
    }
    for (name, t) in ["WAL kept (goalkeeper)", "checkpoint every command"]
        .iter()
        .zip(&mut times)
    {
        t.sort_by(f64::total_cmp);
        println!(
            "{name:<26} median {:.3} ms  p90 {:.3}  p99 {:.3}  max {:.3}  ({runs} runs)",
            percentile(t, 0.5),
            percentile(t, 0.9),
            percentile(t, 0.99),
            t[t.len() - 1]
        );
    }
}
