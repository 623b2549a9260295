//! The rules of several agents on one list, on the pure engine.

use super::*;
use crate::todo::{Phase, Release, SummaryKind, apply_as};

fn summary(list: &TodoList) -> String {
    crate::todo::summary(list, &[], SummaryKind::View)
}

const LEASE: i64 = 600_000;

fn list(items: &[&str]) -> TodoList {
    TodoList::new(vec![Phase {
        name: "P".into(),
        tasks: items.iter().map(|t| Task::pending(*t)).collect(),
    }])
}

/// The team at `now_ms` whose agents last called at the times `seen`,
/// each granted [`LEASE`] then.
fn team(now_ms: i64, seen: &[(&str, i64)]) -> Team {
    Team {
        now_ms,
        clock_ms: i64::MAX,
        lease_ms: LEASE,
        leases: seen
            .iter()
            .map(|(n, at)| ((*n).to_owned(), at + LEASE))
            .collect(),
    }
}

fn op(json: &str) -> Op {
    crate::todo::parse_value(&serde_json::from_str(json).unwrap(), &TodoList::default())
        .unwrap()
        .op
}

/// Runs `json` as `agent` (`None`: the session's own agent) at `now`.
fn call(
    list: &mut TodoList,
    agent: Option<&str>,
    team: &Team,
    json: &str,
) -> Result<crate::todo::Applied, Vec<String>> {
    let caller = Caller {
        actor: Actor::Agent,
        agent,
        team,
    };
    apply_as(list, &op(json), &caller)
}

fn person(list: &mut TodoList, team: &Team, op: &Op) -> Result<crate::todo::Applied, Vec<String>> {
    let caller = Caller {
        actor: Actor::User,
        agent: None,
        team,
    };
    apply_as(list, op, &caller)
}

fn task<'l>(list: &'l TodoList, content: &str) -> &'l Task {
    let (p, t) = list.find_task(content).unwrap();
    &list.phases[p].tasks[t]
}

fn held(list: &TodoList) -> Vec<(String, Option<String>)> {
    list.tasks()
        .map(|(_, t)| t)
        .filter(|t| t.status == Status::InProgress)
        .map(|t| (t.content.clone(), t.agent.clone()))
        .collect()
}

/// `w1` holds `a` (claimed at 1,000) and `w2` holds `b` (at 2,000).
fn two_agents() -> (TodoList, Team) {
    let mut list = list(&["a", "b", "c", "d"]);
    let t = team(1_000, &[]);
    call(&mut list, Some("w1"), &t, r#"{"op":"start","task":"a"}"#).unwrap();
    let t = team(2_000, &[("w1", 1_000)]);
    call(&mut list, Some("w2"), &t, r#"{"op":"start","task":"b"}"#).unwrap();
    (list, team(3_000, &[("w1", 1_000), ("w2", 2_000)]))
}

#[test]
fn each_agent_holds_one_task_and_a_claim_is_refused_naming_its_holder() {
    let (mut list, t) = two_agents();
    assert_eq!(
        held(&list),
        [
            ("a".into(), Some("w1".into())),
            ("b".into(), Some("w2".into()))
        ]
    );
    assert_eq!(task(&list, "a").since_ms, Some(1_000));
    let before = list.clone();
    let errors = call(&mut list, Some("w2"), &t, r#"{"op":"start","task":"a"}"#).unwrap_err();
    assert_eq!(
        errors,
        [
            "task \"a\" is held by agent \"w1\" (claimed 2 s ago; the claim lapses in 10 min unless it calls again); work on another task, or ask the user to release it"
        ]
    );
    assert_eq!(list, before, "a refused claim changes nothing");
    let errors = call(&mut list, Some("w2"), &t, r#"{"op":"done","task":"a"}"#).unwrap_err();
    assert!(errors[0].contains("held by agent \"w1\""), "{errors:?}");
    let errors = call(&mut list, None, &t, r#"{"op":"drop","task":"a"}"#).unwrap_err();
    assert!(errors[0].contains("held by agent \"w1\""), "{errors:?}");
    assert_eq!(list, before);
}

/// The time left a refusal tells is the one the decision used (the
/// earlier of the caller's clock and the database's), rounded up: a
/// caller whose clock runs days ahead is told the lease the database's
/// clock still grants, and one a millisecond before the end is told 1 s.
#[test]
fn a_refusal_tells_the_time_left_by_the_clock_that_kept_the_claim() {
    const DAY: i64 = 86_400_000;
    let (list, _) = two_agents();
    // w1's lease ends at 601,000.
    let refusal = |now_ms: i64, clock_ms: i64| {
        let t = Team {
            clock_ms,
            ..team(now_ms, &[("w1", 1_000), ("w2", 2_000)])
        };
        let mut list = list.clone();
        let errors = call(&mut list, Some("w2"), &t, r#"{"op":"start","task":"a"}"#).unwrap_err();
        assert_eq!(list, two_agents().0, "a refused claim changes nothing");
        errors[0].clone()
    };
    let ahead = refusal(601_000 + 3 * DAY, 61_000);
    assert!(
        ahead.contains("(claimed 1 min ago; the claim lapses in 9 min unless it calls again)"),
        "{ahead}"
    );
    let last = refusal(600_999, i64::MAX);
    assert!(
        last.contains("(claimed 9 min ago; the claim lapses in 1 s unless it calls again)"),
        "{last}"
    );
    let behind = refusal(601_000 - 2 * DAY, 601_000);
    assert!(behind.contains("the claim lapses in 48 h"), "{behind}");
    // At the end itself the claim has lapsed: w2 takes the task.
    let t = team(601_000, &[("w1", 1_000), ("w2", 2_000)]);
    let mut taken = list.clone();
    call(&mut taken, Some("w2"), &t, r#"{"op":"start","task":"a"}"#).unwrap();
    assert_eq!(task(&taken, "a").agent.as_deref(), Some("w2"));
}

#[test]
fn done_advances_the_caller_past_tasks_others_hold() {
    let (mut list, t) = two_agents();
    let applied = call(&mut list, Some("w1"), &t, r#"{"op":"done","task":"a"}"#).unwrap();
    assert!(applied.list_changed);
    assert_eq!(
        task(&list, "a").agent.as_deref(),
        Some("w1"),
        "who completed it"
    );
    assert_eq!(
        held(&list),
        [
            ("b".into(), Some("w2".into())),
            ("c".into(), Some("w1".into()))
        ]
    );
    assert_eq!(task(&list, "c").since_ms, Some(3_000));
}

#[test]
fn a_lapsed_claim_is_taken_over_and_auto_advance_picks_it_first() {
    let (mut list, _) = two_agents();
    // w1 last called at 1,000; w2 keeps calling.
    let late = team(1_000 + LEASE, &[("w1", 1_000), ("w2", 1_000 + LEASE)]);
    call(&mut list, Some("w2"), &late, r#"{"op":"done","task":"b"}"#).unwrap();
    assert_eq!(
        held(&list),
        [("a".into(), Some("w2".into()))],
        "the earliest free task is w1's lapsed one"
    );
    // Before the lease runs out, the same call leaves w1's claim alone.
    let (mut list, _) = two_agents();
    let early = team(LEASE, &[("w1", 1_000), ("w2", LEASE)]);
    call(&mut list, Some("w2"), &early, r#"{"op":"done","task":"b"}"#).unwrap();
    assert_eq!(
        held(&list),
        [
            ("a".into(), Some("w1".into())),
            ("c".into(), Some("w2".into()))
        ]
    );
}

#[test]
fn another_agents_finished_work_is_the_users_to_reopen() {
    let (mut list, t) = two_agents();
    call(&mut list, Some("w1"), &t, r#"{"op":"done","task":"a"}"#).unwrap();
    let before = list.clone();
    for json in [
        r#"{"op":"done","task":"a"}"#,
        r#"{"op":"start","task":"a"}"#,
    ] {
        let errors = call(&mut list, Some("w2"), &t, json).unwrap_err();
        assert_eq!(
            errors,
            [
                "task \"a\" was completed by agent \"w1\"; reopening or finishing another agent's work is the user's call"
            ]
        );
        assert_eq!(list, before);
    }
    person(&mut list, &t, &Op::Start("a".into())).unwrap();
    assert_eq!(task(&list, "a").status, Status::InProgress);
    assert_eq!(task(&list, "a").agent, None);
}

#[test]
fn bulk_changes_leave_other_agents_tasks_alone() {
    let (mut list, t) = two_agents();
    call(&mut list, Some("w2"), &t, r#"{"op":"done","phase":"P"}"#).unwrap();
    assert_eq!(task(&list, "a").status, Status::InProgress);
    assert_eq!(task(&list, "b").status, Status::Completed);
    assert_eq!(task(&list, "d").agent.as_deref(), Some("w2"));
    let (mut list, t) = two_agents();
    call(&mut list, Some("w2"), &t, r#"{"op":"drop"}"#).unwrap();
    assert_eq!(task(&list, "a").status, Status::InProgress);
}

#[test]
fn an_agent_cannot_rewrite_the_list_under_another_agents_claims() {
    let (mut list, t) = two_agents();
    let before = list.clone();
    let errors = call(
        &mut list,
        Some("w2"),
        &t,
        r#"{"op":"init","items":["x","y"]}"#,
    )
    .unwrap_err();
    assert_eq!(
        errors,
        [
            "`init` would take away tasks other agents hold: \"a\" (agent \"w1\"); use `append`, or wait until they are done"
        ]
    );
    assert_eq!(list, before);
}

#[test]
fn release_frees_a_task_or_every_task_of_one_agent() {
    let (mut list, t) = two_agents();
    person(&mut list, &t, &Op::Release(Release::Task("a".into()))).unwrap();
    assert_eq!(held(&list), [("b".into(), Some("w2".into()))]);
    assert_eq!(task(&list, "a").agent, None);
    let before = list.clone();
    let errors = person(&mut list, &t, &Op::Release(Release::Task("a".into()))).unwrap_err();
    assert_eq!(
        errors,
        ["task \"a\" is pending, not in progress; there is no claim to release"]
    );
    let errors = person(&mut list, &t, &Op::Release(Release::Agent("w9".into()))).unwrap_err();
    assert_eq!(
        errors,
        ["agent \"w9\" holds no task; there is nothing to release"]
    );
    assert_eq!(list, before);
    person(&mut list, &t, &Op::Release(Release::Agent("w2".into()))).unwrap();
    assert!(
        held(&list).is_empty(),
        "a person's release promotes nothing"
    );
    let agent = Caller {
        actor: Actor::Agent,
        agent: Some("w1"),
        team: &t,
    };
    let errors = apply_as(&mut list, &Op::Release(Release::Agent("w2".into())), &agent);
    assert!(errors.unwrap_err()[0].starts_with("`release` is a person's command"));
}

#[test]
fn after_unblocks_when_its_task_completes() {
    let mut list = list(&["a", "b", "c"]);
    let t = team(1_000, &[]);
    call(&mut list, Some("w1"), &t, r#"{"op":"start","task":"a"}"#).unwrap();
    call(
        &mut list,
        None,
        &t,
        r#"{"op":"block","task":"c","after":"a"}"#,
    )
    .unwrap();
    let c = task(&list, "c");
    assert_eq!(
        (c.status, c.blocker.as_deref(), c.after.as_deref()),
        (Status::Blocked, Some("after a"), Some("a"))
    );
    // The main agent holds b; w1 finishes a and, holding nothing else,
    // takes the task that waited for it.
    call(&mut list, Some("w1"), &t, r#"{"op":"done","task":"a"}"#).unwrap();
    let c = task(&list, "c");
    assert_eq!(
        (
            c.status,
            c.agent.as_deref(),
            c.after.as_deref(),
            c.blocker.as_deref()
        ),
        (Status::InProgress, Some("w1"), None, None)
    );
}

#[test]
fn after_is_refused_for_a_missing_task_a_loop_or_itself() {
    let mut list = list(&["a", "b", "c"]);
    let t = team(1_000, &[]);
    call(
        &mut list,
        None,
        &t,
        r#"{"op":"block","task":"b","after":"c"}"#,
    )
    .unwrap();
    let before = list.clone();
    for (json, error) in [
        (
            r#"{"op":"block","task":"a","after":"zz"}"#,
            "`after` names task \"zz\", which is not in the list; name an existing task by its exact content",
        ),
        (
            r#"{"op":"block","task":"a","after":"a"}"#,
            "task \"a\" cannot wait for itself; name another task in `after`",
        ),
        (
            r#"{"op":"block","task":"c","after":"b"}"#,
            "task \"b\" already waits for \"c\"; blocking it after \"b\" would wait in a circle",
        ),
        (
            r#"{"op":"block","task":"a","after":"b","reason":"x"}"#,
            "`block` takes `reason` or `after`, not both: `after` writes the note itself",
        ),
    ] {
        let parsed = crate::todo::parse_value(&serde_json::from_str(json).unwrap(), &list);
        let errors = match parsed {
            Ok(parsed) => apply_as(&mut list, &parsed.op, &Caller::solo(Actor::Agent)).unwrap_err(),
            Err(e) => e.errors,
        };
        assert_eq!(errors, [error], "{json}");
        assert_eq!(list, before, "{json}");
    }
    call(&mut list, None, &t, r#"{"op":"done","task":"a"}"#).unwrap();
    let errors = call(
        &mut list,
        None,
        &t,
        r#"{"op":"block","task":"c","after":"a"}"#,
    )
    .unwrap_err();
    assert_eq!(
        errors,
        ["`after` names task \"a\", which is already completed; there is nothing to wait for"]
    );
}

#[test]
fn dropping_the_task_waited_for_leaves_a_note_saying_so() {
    let mut list = list(&["a", "b", "c"]);
    let t = team(1_000, &[]);
    call(
        &mut list,
        None,
        &t,
        r#"{"op":"block","task":"c","after":"b"}"#,
    )
    .unwrap();
    call(&mut list, None, &t, r#"{"op":"drop","task":"b"}"#).unwrap();
    let c = task(&list, "c");
    assert_eq!(
        (c.status, c.after.as_deref(), c.blocker.as_deref()),
        (
            Status::Blocked,
            None,
            Some("after b, which was dropped: unblock or drop this task")
        )
    );
    assert!(list.validate().is_ok());
}

#[test]
fn in_progress_lines_name_the_named_agent_holding_them() {
    let (list, _) = two_agents();
    let text = summary(&list);
    assert!(text.contains("  - a [in_progress: w1] (P)\n"), "{text}");
    assert!(text.contains("  - [/: w2] b\n"), "{text}");
    // The session's own agent is never named: a list only it works on
    // reads as it always did.
    let mut solo = super::super::model::TodoList::default();
    solo.phases.push(Phase::new("P"));
    solo.phases[0].tasks.push(Task::pending("a"));
    crate::todo::normalize(&mut solo);
    assert!(summary(&solo).contains("  - a [in_progress] (P)\n"));
}

mod properties {
    use proptest::prelude::*;

    use super::*;

    /// A caller: a person, the session's own agent, or one of two named
    /// agents.
    fn who() -> impl Strategy<Value = (Actor, Option<&'static str>)> {
        prop_oneof![
            Just((Actor::User, None)),
            Just((Actor::Agent, None)),
            Just((Actor::Agent, Some("w1"))),
            Just((Actor::Agent, Some("w2"))),
        ]
    }

    fn name() -> impl Strategy<Value = String> {
        prop::sample::select(vec!["a", "b", "c", "d"]).prop_map(str::to_owned)
    }

    fn an_op() -> impl Strategy<Value = Op> {
        prop_oneof![
            name().prop_map(Op::Start),
            name().prop_map(|t| Op::Done(Target::Task(t))),
            Just(Op::Done(Target::All)),
            name().prop_map(|t| Op::Drop(Target::Task(t))),
            (name(), name()).prop_map(|(t, b)| Op::Block(
                Target::Task(t),
                Some(super::super::super::call::Note::After(b))
            )),
            name().prop_map(|t| Op::Unblock(Target::Task(t))),
            name().prop_map(|t| Op::Release(Release::Task(t))),
            Just(Op::Init(vec![super::super::super::call::PhaseItems {
                name: "P".into(),
                items: vec!["a".into(), "b".into(), "c".into(), "d".into()],
            }])),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// Whatever several agents and a person do, in whatever order and
        /// with whatever pauses: each holder has at most one task in
        /// progress, the list stays valid, a refused call changes nothing,
        /// and an agent's call never changes a task another holder has a
        /// live claim on.
        #[test]
        fn claims_hold_whatever_the_calls(
            calls in prop::collection::vec((who(), an_op(), 0i64..400_000), 1..40)
        ) {
            let mut list = list(&["a", "b", "c", "d"]);
            let mut seen: Vec<(String, i64)> = Vec::new();
            let mut now = 1_000;
            for ((actor, agent), op, pause) in calls {
                now += pause;
                let leases = seen.iter().map(|(n, at)| (n.clone(), at + LEASE)).collect();
                let t = Team { now_ms: now, clock_ms: i64::MAX, lease_ms: LEASE, leases };
                let caller = Caller { actor, agent, team: &t };
                let before = list.clone();
                let guarded: Vec<Task> = before
                    .tasks()
                    .map(|(_, t)| t.clone())
                    .filter(|t| caller.blocked_by_claim(t))
                    .collect();
                match apply_as(&mut list, &op, &caller) {
                    Err(_) => prop_assert_eq!(&list, &before),
                    Ok(_) => {
                        for task in &guarded {
                            let (p, i) = list.find_task(&task.content).expect("kept");
                            prop_assert_eq!(&list.phases[p].tasks[i], task, "{:?} by {:?}", op, agent);
                        }
                    }
                }
                prop_assert!(list.validate().is_ok(), "{:?}", list.validate());
                let mut holders = std::collections::HashSet::new();
                for (_, task) in list.tasks().filter(|(_, t)| t.status == Status::InProgress) {
                    prop_assert!(holders.insert(task.agent.clone()), "two tasks of {:?}", task.agent);
                }
                if let Some(agent) = agent && actor == Actor::Agent {
                    seen.retain(|(n, _)| n != agent);
                    seen.push((agent.to_owned(), now));
                }
            }
        }
    }
}
