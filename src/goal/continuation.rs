//! The continuation decision of goal mode: when the agent stops, what the
//! host should send next and what changes with it. Pure: the store reads
//! the state, calls [`decide`], writes [`Decision`]'s changes and renders
//! what it says to send, all in one transaction.
//!
//! In order: no goal, or goal mode disabled, sends nothing; a pending
//! budget-limit wrap-up is sent once (and marked delivered) while the goal
//! is still budget-limited, and discarded otherwise; a goal that is
//! not active sends nothing; otherwise the active goal gets the
//! continuation steer, unless `max_idle` continuations in a row saw the
//! same [`progress_mark`] (no change to the todo list or the goal), in which
//! case the runaway guard pauses the goal instead. When every open task is
//! blocked, the continuation (which then asks for what they need) is sent
//! once per state: the next continuation that sees the same mark sends
//! nothing and lets the agent stop, without counting towards the guard
//! (waiting for the user is not a runaway; DESIGN.md §3.4).

use super::model::{BudgetNotice, Goal, GoalStatus};

/// What the decision reads.
#[derive(Clone, Copy, Debug)]
pub struct State<'a> {
    /// The session's current goal.
    pub goal: Option<&'a Goal>,
    /// The todo list's version.
    pub todo_version: i64,
    /// Continuations in a row that saw `last_mark`.
    pub idle: u64,
    /// The progress mark seen at the last continuation.
    pub last_mark: Option<&'a str>,
    /// `goal.enabled`.
    pub enabled: bool,
    /// `goal.continuation.max_idle`.
    pub max_idle: u64,
    /// The clock, for the time a paused goal stops counting.
    pub now_ms: i64,
    /// The list has open tasks and every one of them is blocked.
    pub all_blocked: bool,
    /// What the checks' latest runs were ([`checks_mark`]); empty when
    /// nothing carries a check.
    pub checks_mark: &'a str,
}

/// Why nothing is sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Quiet {
    /// The session has no goal.
    NoGoal,
    /// Goal mode is disabled (`goal.enabled = false`).
    Disabled,
    /// The goal is not active (paused, budget-limited, complete, dropped).
    NotActive,
    /// Every open task is blocked and the agent was already asked, in this
    /// same state, for what they need.
    AllBlocked,
}

/// What to send.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Send {
    /// The budget-limit wrap-up for the goal.
    BudgetLimit,
    /// The continuation steer for the active goal.
    Continuation,
    /// The runaway guard paused the goal after `idle` continuations in a
    /// row without progress; tell the person why.
    Paused {
        /// How many continuations saw no progress.
        idle: u64,
    },
    /// Nothing.
    Nothing(Quiet),
}

/// The decision: what to send, and what the store must write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decision {
    /// What to send.
    pub send: Send,
    /// The goal as it must be saved, when it changed: the wrap-up marked
    /// delivered, or the goal paused by the guard. Also the goal the
    /// message is about.
    pub goal: Option<Goal>,
    /// The runaway guard's new state (idle count, progress mark), when it
    /// changes.
    pub idle: Option<(u64, Option<String>)>,
}

impl Decision {
    fn quiet(why: Quiet) -> Decision {
        Decision {
            send: Send::Nothing(why),
            goal: None,
            idle: None,
        }
    }
}

/// What the injected goal context depends on: the list's version and, for
/// an active goal, its identity and revision (`3:7:2`, or `3:-` without an
/// active goal), then `checks` ([`checks_mark`], empty without checks).
/// Token usage alone does not change it: it is not progress; nor does a
/// verify that ran the checks on the same files to the same ends.
pub(crate) fn progress_mark(todo_version: i64, goal: Option<&Goal>, checks: &str) -> String {
    match goal {
        Some(goal) if goal.status == GoalStatus::Active => {
            format!("{todo_version}:{}:{}{checks}", goal.id, goal.revision)
        }
        _ => format!("{todo_version}:-{checks}"),
    }
}

/// The part of the progress mark the checks add (DESIGN.md §13): for each
/// check, its command and the fingerprint and end of its latest run, as a
/// short digest (`:c1a2b3c4d`); empty when there are no checks, so the mark
/// of a session without them is what it always was. A verify that changed
/// something (the files, or how a check ended) changes it; one that ran
/// the same checks on the same files to the same ends does not.
pub fn checks_mark(latest: &[(String, Option<(String, String)>)]) -> String {
    use sha2::{Digest, Sha256};
    if latest.is_empty() {
        return String::new();
    }
    let mut hash = Sha256::new();
    for (command, run) in latest {
        hash.update(command.as_bytes());
        hash.update([0]);
        if let Some((fingerprint, exit)) = run {
            hash.update(fingerprint.as_bytes());
            hash.update([0]);
            hash.update(exit.as_bytes());
        }
        hash.update([b'\n']);
    }
    format!(":c{}", crate::tree::hex(&hash.finalize()[..4]))
}

/// Decides the next continuation from `state` (see the module doc).
pub fn decide(state: &State<'_>) -> Decision {
    let Some(goal) = state.goal else {
        return Decision::quiet(Quiet::NoGoal);
    };
    if !state.enabled {
        return Decision::quiet(Quiet::Disabled);
    }
    if goal.budget_notice == BudgetNotice::Pending {
        let mut goal = goal.clone();
        goal.budget_notice = BudgetNotice::Delivered;
        if goal.status == GoalStatus::BudgetLimited {
            return Decision {
                send: Send::BudgetLimit,
                goal: Some(goal),
                idle: None,
            };
        }
        // The wrap-up's reason is gone (the budget was raised or removed,
        // the goal completed, paused or dropped): discarded, never sent;
        // the rest is decided as for any goal.
        let mut decision = decide(&State {
            goal: Some(&goal),
            ..*state
        });
        decision.goal.get_or_insert(goal);
        return decision;
    }
    if goal.status != GoalStatus::Active {
        return Decision::quiet(Quiet::NotActive);
    }
    let mark = progress_mark(state.todo_version, Some(goal), state.checks_mark);
    if state.all_blocked && state.last_mark == Some(mark.as_str()) {
        return Decision::quiet(Quiet::AllBlocked);
    }
    let idle = if state.last_mark == Some(mark.as_str()) {
        state.idle + 1
    } else {
        0
    };
    if idle >= state.max_idle {
        let mut goal = goal.clone();
        goal.set_status(GoalStatus::Paused, state.now_ms);
        return Decision {
            send: Send::Paused { idle },
            goal: Some(goal),
            idle: Some((0, None)),
        };
    }
    Decision {
        send: Send::Continuation,
        goal: None,
        idle: Some((idle, Some(mark))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wrap_up_whose_reason_is_gone_is_discarded() {
        let mut limited = active();
        limited.tokens_used = 2_000;
        limited.status = GoalStatus::BudgetLimited;
        limited.budget_notice = BudgetNotice::Pending;
        let sent = decide(&state(Some(&limited), 0, None));
        assert_eq!(sent.send, Send::BudgetLimit);
        assert_eq!(sent.goal.unwrap().budget_notice, BudgetNotice::Delivered);
        for status in [
            GoalStatus::Active,
            GoalStatus::Complete,
            GoalStatus::Dropped,
            GoalStatus::Paused,
        ] {
            let mut gone = limited.clone();
            gone.status = status;
            let decision = decide(&state(Some(&gone), 0, None));
            assert_ne!(decision.send, Send::BudgetLimit, "{status:?}");
            let saved = decision.goal.expect("the discarded notice is saved");
            assert_eq!(saved.budget_notice, BudgetNotice::Delivered, "{status:?}");
        }
        // Raised above the usage: the goal simply continues.
        let mut raised = limited.clone();
        raised.status = GoalStatus::Active;
        assert_eq!(
            decide(&state(Some(&raised), 0, None)).send,
            Send::Continuation
        );
    }

    fn active() -> Goal {
        Goal::new(7, "Ship".into(), Some(1_000), 0)
    }

    fn state<'a>(goal: Option<&'a Goal>, idle: u64, last_mark: Option<&'a str>) -> State<'a> {
        State {
            goal,
            todo_version: 3,
            idle,
            last_mark,
            enabled: true,
            max_idle: 3,
            now_ms: 10,
            all_blocked: false,
            checks_mark: "",
        }
    }

    #[test]
    fn when_every_open_task_is_blocked_the_agent_is_asked_once_per_state() {
        let goal = active();
        let mark = progress_mark(3, Some(&goal), "");
        let blocked = |idle, last_mark| State {
            all_blocked: true,
            ..state(Some(&goal), idle, last_mark)
        };
        // A new state: the continuation goes out (it asks for what the
        // blocked tasks need) and the mark is recorded.
        let first = decide(&blocked(0, None));
        assert_eq!(first.send, Send::Continuation);
        assert_eq!(first.idle, Some((0, Some(mark.clone()))));
        // The same state again: nothing, nothing written, never a pause.
        for idle in [0, 1, 2, 5] {
            assert_eq!(
                decide(&blocked(idle, Some(&mark))),
                Decision::quiet(Quiet::AllBlocked)
            );
        }
        // Something changed (a new version): asked again.
        let moved = State {
            todo_version: 4,
            ..blocked(0, Some(&mark))
        };
        assert_eq!(decide(&moved).send, Send::Continuation);
    }

    #[test]
    fn without_a_goal_or_with_goal_mode_off_nothing_is_sent_or_changed() {
        assert_eq!(
            decide(&state(None, 0, None)),
            Decision::quiet(Quiet::NoGoal)
        );
        let goal = active();
        let off = State {
            enabled: false,
            ..state(Some(&goal), 0, None)
        };
        assert_eq!(decide(&off), Decision::quiet(Quiet::Disabled));
    }

    #[test]
    fn a_pending_wrap_up_is_sent_and_marked_delivered() {
        let mut goal = active();
        goal.status = GoalStatus::BudgetLimited;
        goal.budget_notice = BudgetNotice::Pending;
        let decision = decide(&state(Some(&goal), 0, None));
        assert_eq!(decision.send, Send::BudgetLimit);
        let saved = decision.goal.unwrap();
        assert_eq!(saved.budget_notice, BudgetNotice::Delivered);
        assert_eq!(saved.status, GoalStatus::BudgetLimited);
        assert_eq!(decision.idle, None);
    }

    #[test]
    fn an_inactive_goal_gets_nothing() {
        let mut goal = active();
        goal.status = GoalStatus::Paused;
        assert_eq!(
            decide(&state(Some(&goal), 0, None)),
            Decision::quiet(Quiet::NotActive)
        );
    }

    #[test]
    fn progress_resets_the_idle_count_and_the_same_mark_counts_up() {
        let goal = active();
        let fresh = decide(&state(Some(&goal), 2, Some("2:7:0")));
        assert_eq!(fresh.send, Send::Continuation);
        assert_eq!(fresh.idle, Some((0, Some("3:7:0".into()))));
        let same = decide(&state(Some(&goal), 1, Some("3:7:0")));
        assert_eq!(same.send, Send::Continuation);
        assert_eq!(same.idle, Some((2, Some("3:7:0".into()))));
        assert_eq!(same.goal, None);
    }

    #[test]
    fn the_guard_pauses_at_max_idle_and_resets_its_count() {
        let goal = active();
        let decision = decide(&state(Some(&goal), 2, Some("3:7:0")));
        assert_eq!(decision.send, Send::Paused { idle: 3 });
        let paused = decision.goal.unwrap();
        assert_eq!(paused.status, GoalStatus::Paused);
        assert_eq!(decision.idle, Some((0, None)));
    }

    #[test]
    fn the_mark_names_the_active_goal_only() {
        let mut goal = active();
        assert_eq!(progress_mark(4, Some(&goal), ""), "4:7:0");
        goal.status = GoalStatus::Paused;
        assert_eq!(progress_mark(4, Some(&goal), ""), "4:-");
        assert_eq!(progress_mark(0, None, ""), "0:-");
    }

    #[test]
    fn a_verify_that_changed_nothing_leaves_the_mark_as_it_was() {
        let run = |fp: &str, exit: &str| Some((fp.to_owned(), exit.to_owned()));
        assert_eq!(checks_mark(&[]), "");
        let failed = checks_mark(&[("cargo test".into(), run("aa", "exit 101"))]);
        assert!(failed.starts_with(":c") && failed.len() == 10, "{failed}");
        assert_eq!(
            checks_mark(&[("cargo test".into(), run("aa", "exit 101"))]),
            failed,
            "the same files, the same end: no progress"
        );
        for moved in [run("bb", "exit 101"), run("aa", "exit 0"), None] {
            assert_ne!(checks_mark(&[("cargo test".into(), moved)]), failed);
        }
        let goal = active();
        let idle = State {
            checks_mark: &failed,
            ..state(Some(&goal), 1, None)
        };
        let mark = format!("3:7:0{failed}");
        let again = decide(&State {
            last_mark: Some(&mark),
            ..idle
        });
        assert_eq!(again.idle, Some((2, Some(mark.clone()))));
    }
}
