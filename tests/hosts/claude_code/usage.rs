//! Token usage through the real CLI (DESIGN.md §5): the goal's count equals the
//! sum of the scripted usage (input + output + cache writes), at each
//! `Stop`, with a subagent, and in the turn that completes the goal.

use serde_json::json;

use super::host::{Project, new_session_id, require_claude};
use super::model::{self, Step};

/// The `Budget: N of …` figure of the continuation the request carries.
fn budget_line(text: &str) -> Option<u64> {
    let at = text.rfind("Budget: ")?;
    text[at + 8..].split_whitespace().next()?.parse().ok()
}

#[test]
#[ignore = "needs Claude Code from npm: scripts/install-host.sh claude-code (.ci/run runs it)"]
fn every_response_is_counted_once_at_each_stop_and_in_the_completing_turn() {
    let claude = require_claude!();
    let model = model::queue(vec![
        Step::todo(json!({"op": "init", "items": ["Build it", "Test it"]}))
            .messages_usage(1000, 50, 200, 5000),
        Step::text("Built, testing next.").messages_usage(1100, 60, 0, 5200),
        // The continuation's turn.
        Step::todo(json!({"op": "done"})).messages_usage(1300, 70, 10, 5400),
        Step::goal(json!({"op": "complete"})).messages_usage(1400, 80, 0, 5600),
        Step::text("All done.").messages_usage(1500, 90, 30, 5800),
    ]);
    let project = Project::new(claude, &model);
    project.set_goal("Ship the release", Some(1000000));
    let session = new_session_id();
    let run = project.prompt(&session, "Build and test it.");
    run.assert_hooks_succeeded();
    let requests = model.calls();
    assert_eq!(requests.len(), 5, "{:#?}", run.events);
    // The continuation is the next turn, and its budget line counts both
    // responses of the first turn.
    let continuation = requests[2].last_message_text();
    assert!(
        continuation.contains("Stop hook feedback") && continuation.contains("<goal_continuation>"),
        "{continuation}"
    );
    assert_eq!(
        budget_line(&continuation),
        Some(1000 + 50 + 200 + 1100 + 60)
    );
    let goal = project.goal(&session).expect("the queued goal was adopted");
    assert_eq!(goal.objective, "Ship the release");
    assert_eq!(goal.status.as_str(), "complete");
    assert_eq!(goal.tokens_used, model.counted_usage());
    assert_eq!(goal.tokens_used, 1250 + 1160 + 1380 + 1480 + 1620);
}

#[test]
#[ignore = "needs Claude Code from npm: scripts/install-host.sh claude-code (.ci/run runs it)"]
fn a_subagents_responses_are_counted() {
    const PROMPT: &str = "Ask a subagent to say hello.";
    let claude = require_claude!();
    // The subagent runs in the foreground (its requests do not carry
    // the user's prompt), so each is scripted by who asks.
    let mut main = vec![
        Step::tool(
            "Agent",
            json!({"description": "Look around", "prompt": "Say hello.", "subagent_type": "general-purpose", "run_in_background": false}),
        )
        .messages_usage(1000, 10, 0, 0),
        Step::goal(json!({"op": "complete"})).messages_usage(1200, 30, 0, 0),
    ]
    .into_iter();
    let model = model::scripted(move |request| {
        if request.all_text().contains(PROMPT) {
            main.next()
                .unwrap_or_else(|| Step::text("Done.").messages_usage(1300, 40, 0, 0))
        } else {
            Step::text("Hello from the subagent.").messages_usage(300, 20, 7, 0)
        }
    });
    let project = Project::new(claude, &model);
    project.set_goal("Greet", None);
    let session = new_session_id();
    let run = project.prompt(&session, PROMPT);
    run.assert_hooks_succeeded();
    assert!(
        run.hooks_run().iter().any(|h| h == "SubagentStop"),
        "{:?}",
        run.hooks_run()
    );
    let requests = model.calls();
    let subagent = requests
        .iter()
        .filter(|r| !r.all_text().contains(PROMPT))
        .count();
    assert_eq!(subagent, 1, "the subagent made no request");
    let goal = project.goal(&session).unwrap();
    assert_eq!(goal.status.as_str(), "complete");
    assert_eq!(
        goal.tokens_used,
        model.counted_usage(),
        "{:?}",
        run.hooks_run()
    );
}
