//! A forked session through the real CLI (`claude -p --resume ID
//! --fork-session`, DESIGN.md §9): Claude Code starts it with
//! `SessionStart` source `fork`, and goalkeeper carries the goal and the
//! list over as after `/clear`, while the session forked keeps its own.

use serde_json::json;

use super::host::{Project, new_session_id, require_claude};
use super::model::{self, Step};
use crate::statuses;

const FORK_PROMPT: &str = "Go on in the fork.";

#[test]
#[ignore = "needs Claude Code from npm: scripts/install-host.sh claude-code (.ci/run runs it)"]
fn a_fork_carries_the_goal_and_the_list_and_goes_on_alone() {
    let claude = require_claude!();
    let mut in_fork = vec![
        Step::todo(json!({"op": "done", "task": "One"})).messages_usage(1000, 10, 0, 0),
        Step::todo(json!({"op": "done", "task": "Two"})).messages_usage(1100, 20, 0, 0),
        Step::goal(json!({"op": "complete"})).messages_usage(1200, 30, 0, 0),
        Step::text("Both done.").messages_usage(1300, 40, 0, 0),
    ]
    .into_iter();
    let model = model::scripted(move |request| {
        if request.all_text().contains(FORK_PROMPT) {
            in_fork
                .next()
                .unwrap_or_else(|| Step::text("Nothing more."))
        } else if request.last_message_text().contains("Plan it.") {
            Step::todo(json!({"op": "init", "items": ["One", "Two"]}))
                .messages_usage(5000, 50, 0, 0)
        } else {
            Step::text("Noted.").messages_usage(700, 7, 0, 0)
        }
    });
    let project = Project::new(claude, &model);
    let parent = new_session_id();
    project.prompt(&parent, "Plan it.").assert_hooks_succeeded();
    project.goalkeeper_ok(&["--session", &parent, "goal", "set", "Fork it"]);
    let parent_goal = project.goal(&parent).unwrap();

    let start = model.calls().len();
    let run = project.run(&[FORK_PROMPT, "--resume", &parent, "--fork-session"]);
    run.assert_hooks_succeeded();
    let fork = run.last_session_id().unwrap();
    assert_ne!(fork, parent, "--fork-session kept the session id");
    // The fork's first request has the goal-mode context with the list,
    // from the fork's SessionStart (the copied history had no goal).
    let first = model.calls()[start].all_text();
    assert_eq!(
        first.matches("<objective>\nFork it\n</objective>").count(),
        1,
        "{first}"
    );
    assert!(first.contains("[in_progress] One"), "{first}");

    // The fork's MCP server acted on the fork: its list and goal are done.
    let goal = project
        .goal(&fork)
        .expect("the goal did not follow the fork");
    assert_eq!(goal.objective, "Fork it");
    assert_ne!(goal.id, parent_goal.id);
    assert_eq!(goal.status.as_str(), "complete");
    let list = project.todos(&fork);
    assert_eq!(
        statuses(&list),
        [("One", "completed"), ("Two", "completed")]
    );
    // It counted its own responses, not the history copied from the
    // parent (made and seen there).
    let own: u64 = model.calls()[start..]
        .iter()
        .filter_map(|r| r.step.as_ref())
        .map(|s| s.usage.counted())
        .sum();
    assert_eq!(goal.tokens_used, own);
    assert_eq!(own, 1010 + 1120 + 1230 + 1340);

    // The session forked keeps its goal and its list as they were.
    let kept = project.goal(&parent).unwrap();
    assert_eq!((kept.id, kept.status.as_str()), (parent_goal.id, "active"));
    assert_eq!(kept.tokens_used, parent_goal.tokens_used);
    let list = project.todos(&parent);
    assert_eq!(
        statuses(&list),
        [("One", "in_progress"), ("Two", "pending")]
    );
    assert_eq!(project.last_session("claude-code"), Some(fork));
}
