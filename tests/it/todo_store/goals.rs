//! Goals in the store: lifecycle ops and usage as events, ids unique across
//! sessions, refusals that change nothing, everything in one transaction.

use goalkeeper::ErrorKind;
use goalkeeper::goal::{GoalOp, GoalStatus, Usage};
use goalkeeper::store::Caller;
use goalkeeper::store::GoalCall;
use goalkeeper::todo::Actor::{Agent, User};
use serde_json::json;

use super::common::*;
use super::{log, sid};

fn set(objective: &str, budget: Option<u64>) -> GoalOp {
    GoalOp::Set {
        objective: objective.parse().unwrap(),
        budget,
        checks: Vec::new(),
    }
}

fn usage(tokens: u64) -> GoalOp {
    GoalOp::Usage(Usage {
        input: tokens,
        output: 0,
        cache_write: 0,
        cache_read: 0,
    })
}

#[test]
fn a_goal_is_set_counts_usage_runs_out_of_budget_and_completes() {
    let mut s = store();
    let me = session();
    let set_result = s
        .write(&me, |tx| {
            tx.goal_call(
                GoalCall::Op(&set("Ship the parser", Some(100))),
                User,
                &mut Caller::default(),
                NOW,
            )
        })
        .unwrap();
    assert!(!set_result.is_error, "{}", set_result.text());
    let id = s.read(&me, |tx| tx.goal()).unwrap().unwrap().id;
    for i in 0..3 {
        s.write(&me, |tx| {
            tx.goal_call(
                GoalCall::Op(&usage(40)),
                Agent,
                &mut Caller::default(),
                NOW + 1 + i,
            )
        })
        .unwrap();
    }
    let goal = s.read(&me, |tx| tx.goal()).unwrap().unwrap();
    assert_eq!((goal.id, goal.tokens_used), (id, 120));
    assert_eq!(goal.status, GoalStatus::BudgetLimited);
    let done = s
        .write(&me, |tx| {
            tx.goal_call(
                GoalCall::Json(r#"{"op":"complete"}"#),
                Agent,
                &mut Caller::default(),
                NOW + 9,
            )
        })
        .unwrap();
    assert!(!done.is_error, "{}", done.text());
    assert_eq!(
        s.read(&me, |tx| tx.goal()).unwrap().unwrap().status,
        GoalStatus::Complete
    );
    let ops: Vec<_> = log(&mut s)
        .into_iter()
        .map(|e| (e.op.unwrap_or_default(), e.payload["goal"].as_i64(), e.ok))
        .collect();
    assert_eq!(
        ops,
        [
            ("set".into(), Some(id), true),
            ("usage".into(), Some(id), true),
            ("usage".into(), Some(id), true),
            ("usage".into(), Some(id), true),
            ("complete".into(), Some(id), true),
        ]
    );
}

#[test]
fn goal_ids_are_unique_across_sessions_and_never_reused() {
    let mut s = store();
    let (a, b) = (sid("a"), sid("b"));
    s.write(&a, |tx| {
        tx.goal_call(
            GoalCall::Op(&set("first of a", None)),
            User,
            &mut Caller::default(),
            NOW,
        )
    })
    .unwrap();
    s.write(&b, |tx| {
        tx.goal_call(
            GoalCall::Op(&set("first of b", None)),
            User,
            &mut Caller::default(),
            NOW + 1,
        )
    })
    .unwrap();
    s.write(&a, |tx| {
        tx.goal_call(
            GoalCall::Op(&set("second of a", None)),
            User,
            &mut Caller::default(),
            NOW + 2,
        )
    })
    .unwrap();
    let ids: Vec<i64> = [&a, &b]
        .into_iter()
        .map(|x| s.read(x, |tx| tx.goal()).unwrap().unwrap().id)
        .collect();
    let first_of_a = s.read(&a, |tx| tx.event_log(10)).unwrap()[0].payload["goal"]
        .as_i64()
        .unwrap();
    assert!(
        first_of_a < ids[1] && ids[1] < ids[0],
        "ids in order of creation: {first_of_a}, {ids:?}"
    );
    assert_eq!(
        s.read(&a, |tx| tx.goal()).unwrap().unwrap().objective,
        "second of a"
    );
}

#[test]
fn a_refused_goal_call_changes_nothing_and_an_agents_is_logged() {
    let mut s = store();
    let me = session();
    s.write(&me, |tx| {
        tx.goal_call(
            GoalCall::Op(&set("Keep this", Some(50))),
            User,
            &mut Caller::default(),
            NOW,
        )
    })
    .unwrap();
    let before = s.read(&me, |tx| tx.goal()).unwrap();
    // The agent may not start a goal while one is live, nor set a budget.
    let refused = s
        .write(&me, |tx| {
            tx.goal_call(
                GoalCall::Json(r#"{"op":"create","objective":"Another"}"#),
                Agent,
                &mut Caller::default(),
                NOW + 1,
            )
        })
        .unwrap();
    assert!(refused.is_error);
    let budget = s
        .write(&me, |tx| {
            tx.goal_call(
                GoalCall::Json(r#"{"op":"get","budget":10}"#),
                Agent,
                &mut Caller::default(),
                NOW + 2,
            )
        })
        .unwrap();
    assert!(budget.is_error);
    assert!(
        budget.text().contains("only the user can set a budget"),
        "{}",
        budget.text()
    );
    assert_eq!(s.read(&me, |tx| tx.goal()).unwrap(), before);
    let logged: Vec<_> = log(&mut s).into_iter().skip(1).collect();
    assert_eq!(logged.len(), 2);
    assert!(logged.iter().all(|e| !e.ok && e.error.is_some()));
    assert_eq!(
        logged[1].payload,
        json!({"op": "get", "budget": 10}),
        "the raw call is kept"
    );
    // A user's refusal is an error result, and not logged.
    let paused_twice = s.write(&me, |tx| {
        tx.goal_call(
            GoalCall::Op(&GoalOp::Resume),
            User,
            &mut Caller::default(),
            NOW + 3,
        )
    });
    match paused_twice {
        Ok(r) => assert!(r.is_error, "{}", r.text()),
        Err(e) => assert_eq!(e.kind(), ErrorKind::Rejected),
    }
    assert_eq!(log(&mut s).len(), 3);
}

#[test]
fn goal_steps_in_one_transaction_are_all_or_nothing() {
    let mut s = store();
    let me = session();
    let failed = s.write(&me, |tx| {
        tx.goal_call(
            GoalCall::Op(&set("Never committed", None)),
            User,
            &mut Caller::default(),
            NOW,
        )
        .unwrap();
        tx.set_mark("m", "v", NOW).unwrap();
        // A later step fails: every step is rolled back.
        Err::<(), _>(goalkeeper::Error::Rejected("a later step failed".into()))
    });
    assert!(failed.is_err());
    assert_eq!(s.read(&me, |tx| tx.goal()).unwrap(), None);
    assert_eq!(s.read(&me, |tx| tx.mark("m")).unwrap(), None);
    assert!(log(&mut s).is_empty());
    s.write(&me, |tx| {
        tx.goal_call(
            GoalCall::Op(&set("Committed", None)),
            User,
            &mut Caller::default(),
            NOW,
        )?;
        tx.set_mark("m", "v", NOW)
    })
    .unwrap();
    assert_eq!(
        s.read(&me, |tx| tx.goal()).unwrap().unwrap().objective,
        "Committed"
    );
    assert_eq!(
        s.read(&me, |tx| tx.mark("m")).unwrap().as_deref(),
        Some("v")
    );
}
