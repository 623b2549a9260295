//! Runs of one check on the same files that overlap in time (DESIGN.md
//! §13): a failure is outvoted only by a pass that started after it
//! ended, whatever order the runs were recorded in. Runs are recorded with
//! explicit start and end times, as `verify` and a host's hook record
//! them. These run on both backends.

use goalkeeper::check::{CheckRun, Evidence, Exit, RunBy, Scope};
use goalkeeper::goal::{GoalOp, GoalStatus};
use goalkeeper::store::{Caller, GoalCall};
use goalkeeper::todo::Actor;
use goalkeeper::tree::{CacheWrite, Tree};

use super::common::{self, NOW, session};

const CHECK: &str = "make test";

/// A run of [`CHECK`] on the files of `dir` that started at `start` and
/// ended with `exit`.
fn run(dir: &std::path::Path, id: u8, start: i64, exit: Exit) -> Evidence {
    let tree = Tree::new(dir).unwrap();
    Evidence {
        run: format!("{id:032x}"),
        scope: Scope::Goal,
        dir: tree.dir().to_string_lossy().into_owned(),
        fingerprint: tree
            .fingerprint(CacheWrite::No)
            .unwrap()
            .fingerprint
            .as_str()
            .to_owned(),
        started_ms: start,
        by: RunBy {
            actor: "agent".into(),
            agent: None,
            host: None,
        },
        checks: vec![CheckRun {
            command: CHECK.into(),
            exit,
            ms: 10,
        }],
    }
}

fn record(db: &mut goalkeeper::Store, evidence: Evidence, ended: i64) {
    assert!(
        db.write(&session(), |tx| tx.record_run(&evidence, "verify", ended))
            .unwrap()
    );
}

fn complete(db: &mut goalkeeper::Store, caller: &mut Caller) -> (bool, String) {
    db.write(&session(), |tx| {
        tx.goal_call(
            GoalCall::Json(r#"{"op":"complete"}"#),
            Actor::Agent,
            caller,
            NOW + 20_000,
        )
    })
    .map(|r| (r.is_error, r.text().to_owned()))
    .unwrap()
}

#[test]
fn a_failure_is_outvoted_only_by_a_pass_that_started_after_it_ended() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("main.rs"), "fn main() {}").unwrap();
    let mut caller = Caller::default();
    caller.judge_in(Some(dir.path().to_owned()), None);
    let mut db = common::store();
    let set = GoalOp::Set {
        objective: "Ship".into(),
        budget: None,
        checks: vec![CHECK.into()],
    };
    db.write(&session(), |tx| {
        tx.goal_call(GoalCall::Op(&set), Actor::User, &mut caller, NOW)
    })
    .unwrap();
    let flaky = Exit::Code(1);
    // A failing run from 1 s to 5 s; a slow passing run that started at
    // 2 s, during it, is recorded last, at 9 s.
    record(&mut db, run(dir.path(), 1, NOW + 1_000, flaky), NOW + 5_000);
    record(
        &mut db,
        run(dir.path(), 2, NOW + 2_000, Exit::Code(0)),
        NOW + 9_000,
    );
    let (refused, text) = complete(&mut db, &mut caller);
    assert!(refused, "{text}");
    assert!(
        text.contains("`make test` failed 19s ago (exit 1)"),
        "{text}"
    );
    // A pass that started as the failure ended is no later than it.
    record(
        &mut db,
        run(dir.path(), 3, NOW + 5_000, Exit::Code(0)),
        NOW + 6_000,
    );
    assert!(complete(&mut db, &mut caller).0);
    let goal = db.read(&session(), |tx| tx.goal()).unwrap().unwrap();
    assert_eq!(goal.status, GoalStatus::Active);
    // One that started after it ended outvotes it.
    record(
        &mut db,
        run(dir.path(), 4, NOW + 5_001, Exit::Code(0)),
        NOW + 7_000,
    );
    let (refused, text) = complete(&mut db, &mut caller);
    assert!(!refused, "{text}");
    let goal = db.read(&session(), |tx| tx.goal()).unwrap().unwrap();
    assert_eq!(goal.status, GoalStatus::Complete);
}
