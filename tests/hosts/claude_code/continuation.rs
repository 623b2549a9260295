//! The Stop hook's sequencing through the real CLI (DESIGN.md §3.4): the
//! continuation as the next turn, the runaway guard, the wrap-up exactly
//! once and then a quiet stop, and nothing contradicting either.

use serde_json::json;

use super::host::{Project, new_session_id, require_claude};
use super::model::{self, Step};

#[test]
#[ignore = "needs Claude Code from npm: scripts/install-host.sh claude-code (.ci/run runs it)"]
fn the_runaway_guard_pauses_and_nothing_asks_for_more_work() {
    let claude = require_claude!();
    let model = model::queue(vec![
        Step::todo(json!({"op": "init", "items": ["Think hard"]})),
        Step::text("Thinking."),
    ]);
    let project = Project::new(claude, &model);
    project.set_goal("Solve it", None);
    let session = new_session_id();
    let run = project.prompt(&session, "Solve it.");
    run.assert_hooks_succeeded();
    let requests = model.calls();
    // The first turn, then three continuations without progress; the
    // third pauses the goal and the agent stops.
    let continuations = requests
        .iter()
        .filter(|r| r.last_message_text().contains("<goal_continuation>"))
        .count();
    assert_eq!((requests.len(), continuations), (5, 3), "{:#?}", run.events);
    assert!(
        requests
            .iter()
            .all(|r| !r.all_text().contains("<todo_reminder>")),
        "a reminder contradicted the pause"
    );
    assert_eq!(project.goal(&session).unwrap().status.as_str(), "paused");
    let shown = run
        .events
        .iter()
        .any(|e| e.to_string().contains("Resume it with /goal resume"));
    assert!(
        shown,
        "the user was not told how to resume: {:#?}",
        run.events
    );
}

#[test]
#[ignore = "needs Claude Code from npm: scripts/install-host.sh claude-code (.ci/run runs it)"]
fn the_wrap_up_comes_once_then_the_agent_stops_quietly() {
    let claude = require_claude!();
    let model = model::queue(vec![
        Step::todo(json!({"op": "init", "items": ["Step one", "Step two"]}))
            .messages_usage(400, 100, 0, 0),
        Step::text("Step one underway.").messages_usage(400, 100, 0, 0),
        // The continuation's turn crosses the budget.
        Step::text("Still on step one.").messages_usage(1500, 100, 0, 0),
        // The wrap-up's turn.
        Step::text("Finished: nothing. Left: both steps.").messages_usage(300, 50, 0, 0),
    ]);
    let project = Project::new(claude, &model);
    project.set_goal("Do both steps", Some(2000));
    let session = new_session_id();
    let run = project.prompt(&session, "Do both steps.");
    run.assert_hooks_succeeded();
    let requests = model.calls();
    assert_eq!(requests.len(), 4, "{:#?}", run.events);
    let wrap_ups: Vec<usize> = requests
        .iter()
        .enumerate()
        .filter(|(_, r)| r.last_message_text().contains("<goal_budget_limit>"))
        .map(|(i, _)| i)
        .collect();
    assert_eq!(wrap_ups, [3]);
    // Each Stop saw its turn's usage: the continuation counts the first
    // turn, the wrap-up the crossing turn (not a turn late).
    let continuation = requests[2].last_message_text();
    assert!(
        continuation.contains("Budget: 1000 of 2000 tokens used"),
        "{continuation}"
    );
    let wrap_up = requests[3].last_message_text();
    assert!(
        wrap_up.contains("used up: 2600 of 2000 tokens"),
        "{wrap_up}"
    );
    assert!(!wrap_up.contains("goalkeeper goal budget"), "{wrap_up}");
    for request in &requests {
        let text = request.last_message_text();
        assert!(!text.contains("<todo_reminder>"), "{text}");
    }
    let goal = project.goal(&session).unwrap();
    assert_eq!(goal.status.as_str(), "budget-limited");
    assert_eq!(goal.tokens_used, model.counted_usage());
}
