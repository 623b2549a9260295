//! Builds a database for `scripts/bench-cli.sh` through the library, in one
//! process: one session with a long list and an active goal, plus any number
//! of other sessions with a small list, a goal and a few events each.
//!
//! ```text
//! cargo run --release --example bench_db -- PATH [--tasks N] [--others N] [--session ID]
//! ```
//!
//! The long list has phases of 100 tasks named `Task 00000: ...` (see
//! [`task_name`]); the first 40% of the phases are completed, so with
//! `--tasks 1000` tasks 500 and 501 are pending — the CLI benchmark
//! alternates `start` between them.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use goalkeeper::goal::{GoalOp, Usage};
use goalkeeper::store::Caller;
use goalkeeper::store::GoalCall;
use goalkeeper::todo::{Actor, Call, Op, PhaseItems, Target};
use goalkeeper::{SessionId, Store};

/// 2025-11-29T18:40:00Z: every write is stamped with this fixed clock.
const NOW_MS: i64 = 1_764_441_600_000;

/// The content of task `i` of the long list.
fn task_name(i: usize) -> String {
    format!("Task {i:05}: update the parser and its tests for case {i}")
}

struct Args {
    path: PathBuf,
    tasks: usize,
    others: usize,
    session: String,
}

fn parse_args() -> Result<Args, String> {
    let mut args = std::env::args().skip(1);
    let mut parsed = Args {
        path: PathBuf::new(),
        tasks: 1_000,
        others: 0,
        session: "bench".into(),
    };
    let number = |flag: &str, value: Option<String>| -> Result<usize, String> {
        value
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| format!("{flag} needs a whole number"))
    };
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--tasks" => parsed.tasks = number("--tasks", args.next())?,
            "--others" => parsed.others = number("--others", args.next())?,
            "--session" => parsed.session = args.next().ok_or("--session needs an id")?,
            flag if flag.starts_with("--") => return Err(format!("unknown flag {flag}")),
            path if parsed.path.as_os_str().is_empty() => parsed.path = path.into(),
            extra => return Err(format!("unexpected argument {extra}")),
        }
    }
    if parsed.path.as_os_str().is_empty() {
        return Err("give the database path".into());
    }
    Ok(parsed)
}

fn build(args: &Args) -> goalkeeper::Result<()> {
    if args.path.exists() {
        return Err(goalkeeper::Error::Usage(format!(
            "{} exists; give a new path",
            args.path.display()
        )));
    }
    let mut store = Store::open(&args.path)?;
    let started = Instant::now();

    // The other sessions first, so the long list's rows are not the only
    // (or the first) ones in the file.
    for s in 0..args.others {
        let session = SessionId::parse(&format!("other-{s:05}"))?;
        let init = Op::Init(vec![PhaseItems {
            name: "Work".into(),
            items: (0..5).map(|t| format!("Session {s} step {t}")).collect(),
        }]);
        store.todo(
            &session,
            Call::Op(&init),
            Actor::Agent,
            &mut Caller::default(),
            NOW_MS,
        )?;
        let done = Op::Done(Target::Task(format!("Session {s} step 0")));
        store.todo(
            &session,
            Call::Op(&done),
            Actor::Agent,
            &mut Caller::default(),
            NOW_MS,
        )?;
        let set = GoalOp::Set {
            objective: format!("Finish the work of session {s}"),
            budget: Some(100_000),
            checks: Vec::new(),
        };
        store.write(&session, |tx| {
            tx.goal_call(
                GoalCall::Op(&set),
                Actor::User,
                &mut Caller::default(),
                NOW_MS,
            )
        })?;
        let usage = GoalOp::Usage(Usage {
            input: 1_000,
            output: 200,
            cache_write: 0,
            cache_read: 5_000,
        });
        store.write(&session, |tx| {
            tx.goal_call(
                GoalCall::Op(&usage),
                Actor::User,
                &mut Caller::default(),
                NOW_MS,
            )
        })?;
    }

    let session = SessionId::parse(&args.session)?;
    let phases = args.tasks.div_ceil(100);
    let init = Op::Init(
        (0..phases)
            .map(|p| PhaseItems {
                name: format!("Phase {}: milestone", p + 1),
                items: (p * 100..((p + 1) * 100).min(args.tasks))
                    .map(task_name)
                    .collect(),
            })
            .collect(),
    );
    store.todo(
        &session,
        Call::Op(&init),
        Actor::User,
        &mut Caller::default(),
        NOW_MS,
    )?;
    // Close the first 40% phase by phase (a few events, not one per task).
    for p in 0..phases * 2 / 5 {
        let done = Op::Done(Target::Phase(format!("Phase {}: milestone", p + 1)));
        store.todo(
            &session,
            Call::Op(&done),
            Actor::User,
            &mut Caller::default(),
            NOW_MS,
        )?;
    }
    let set = GoalOp::Set {
        objective: "Ship the release: parser, CLI and docs".into(),
        budget: Some(10_000_000),
        checks: Vec::new(),
    };
    store.write(&session, |tx| {
        tx.goal_call(
            GoalCall::Op(&set),
            Actor::User,
            &mut Caller::default(),
            NOW_MS,
        )
    })?;

    eprintln!(
        "bench_db: {} with session {} ({} tasks) and {} other sessions in {:.1} s",
        args.path.display(),
        args.session,
        args.tasks,
        args.others,
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(args) => args,
        Err(e) => {
            eprintln!(
                "bench_db: {e}\nusage: bench_db PATH [--tasks N] [--others N] [--session ID]"
            );
            return ExitCode::from(2);
        }
    };
    match build(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bench_db: {e}");
            ExitCode::FAILURE
        }
    }
}
