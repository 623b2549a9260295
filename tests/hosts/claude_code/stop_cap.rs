//! Claude Code's cap on Stop-hook blocks in a row through the real CLI
//! (DESIGN.md §9): continuations the model answers with a tool call go on
//! past it, and at the cap goalkeeper lets the turn end itself, recording
//! no continuation the model would not see.

use serde_json::{Value, json};

use super::host::{Project, Run, new_session_id, require_claude};
use super::model::{self, Request, Step};

/// Whether the request is a continuation: the model's newest input is
/// goalkeeper's Stop-hook reason.
fn is_continuation(request: &Request) -> bool {
    request.last_message_text().contains("<goal_continuation>")
}

/// Claude Code's warning that it overrode a Stop hook's block.
fn cap_warnings(run: &Run) -> Vec<&Value> {
    run.events
        .iter()
        .filter(|e| {
            e["content"]
                .as_str()
                .or(e["text"].as_str())
                .is_some_and(|t| t.starts_with("A hook blocked the turn from ending"))
        })
        .collect()
}

/// The Stop hook replies that told the user the goal is still active.
fn told_still_active(run: &Run) -> usize {
    run.hook_responses()
        .iter()
        .filter(|h| h["hook_event"] == "Stop")
        .filter(|h| {
            h.to_string()
                .contains("is still active: send a message to go on")
        })
        .count()
}

/// Settings in the project's home: the runaway guard pauses after
/// `max_idle` continuations without progress.
fn guard_after(project: &Project, max_idle: u64) {
    let dir = project.home().join(".config/goalkeeper");
    std::fs::create_dir_all(&dir).unwrap();
    let settings = format!("[goal.continuation]\nmax_idle = {max_idle}\n");
    std::fs::write(dir.join("config.toml"), settings).unwrap();
}

#[test]
#[ignore = "needs Claude Code from npm: scripts/install-host.sh claude-code (.ci/run runs it)"]
fn twelve_continuations_each_with_a_tool_call_reach_the_model_and_complete_the_goal() {
    let claude = require_claude!();
    let tasks: Vec<String> = (1..=12).map(|i| format!("Step {i}")).collect();
    let mut steps = vec![
        Step::todo(json!({"op": "init", "items": tasks})),
        Step::text("Planned."),
    ];
    // Each continuation: one task done, then the turn ends; the last one
    // also completes the goal.
    for i in 1..=12 {
        steps.push(Step::todo(
            json!({"op": "done", "task": format!("Step {i}")}),
        ));
        if i == 12 {
            steps.push(Step::goal(json!({"op": "complete"})));
        }
        steps.push(Step::text(&format!("Step {i} done.")));
    }
    let model = model::queue(steps);
    let project = Project::new(claude, &model);
    project.set_goal("Do twelve steps", None);
    let session = new_session_id();
    let run = project.prompt(&session, "Do the steps.");
    run.assert_hooks_succeeded();
    assert!(cap_warnings(&run).is_empty(), "{:#?}", cap_warnings(&run));
    let requests = model.calls();
    assert_eq!(model.steps_left(), 0, "{:#?}", run.events);
    let continuations: Vec<&Request> = requests.iter().filter(|r| is_continuation(r)).collect();
    assert_eq!(continuations.len(), 12);
    // Each continuation reached the model with the list as it stood.
    for (done, request) in continuations.iter().enumerate() {
        let text = request.last_message_text();
        assert!(text.contains(&format!("Overall: {done}/12 done")), "{text}");
    }
    assert_eq!(requests.len(), 2 + 12 * 2 + 1);
    let goal = project.goal(&session).unwrap();
    assert_eq!(goal.status.as_str(), "complete");
    assert_eq!(goal.tokens_used, model.counted_usage());
    let list = project.todos(&session);
    assert_eq!((list.counts().total, list.counts().closed), (12, 12));
    assert!(
        list.phases[0]
            .tasks
            .iter()
            .all(|t| t.status.as_str() == "completed")
    );
}

#[test]
#[ignore = "needs Claude Code from npm: scripts/install-host.sh claude-code (.ci/run runs it)"]
fn at_the_cap_the_turn_ends_and_no_unseen_continuation_is_counted() {
    let claude = require_claude!();
    // The model only ever answers with text: every continuation is a
    // Stop-hook block in a row.
    let model = model::queue(vec![
        Step::todo(json!({"op": "init", "items": ["Think it through"]})),
        Step::text("Thinking."),
    ]);
    let project = Project::new(claude, &model);
    guard_after(&project, 10);
    project.set_goal("Solve it", None);
    let session = new_session_id();
    let run = project.prompt(&session, "Solve it.");
    run.assert_hooks_succeeded();
    // The first turn, then Claude Code's 8 blocks in a row; at the ninth
    // stop goalkeeper does not block, so Claude Code overrides nothing.
    let first = model.calls();
    let seen = first.iter().filter(|r| is_continuation(r)).count();
    assert_eq!((first.len(), seen), (2 + 8, 8), "{:#?}", run.events);
    assert!(cap_warnings(&run).is_empty(), "{:#?}", cap_warnings(&run));
    assert_eq!(told_still_active(&run), 1, "{:#?}", run.hook_responses());
    assert_eq!(project.goal(&session).unwrap().status.as_str(), "active");

    // The next prompt: the history holds the 8 continuations the model
    // answered, and none between its last answer and the new prompt (a
    // block Claude Code overrode would sit there, unanswered).
    let run = project.resume(&session, "Go on.");
    run.assert_hooks_succeeded();
    let resumed = &model.calls()[first.len()..];
    let history = resumed[0].all_text();
    assert_eq!(
        history.matches("Stop hook feedback").count(),
        8,
        "{history}"
    );
    let tail = &history[history.rfind("Nothing more to do.").unwrap()..];
    let before_prompt = &tail[..tail.find("Go on.").unwrap()];
    assert!(!before_prompt.contains("<goal_continuation>"), "{tail}");
    // The runaway guard counted only what the model saw: two more
    // continuations make its 10, then it pauses the goal.
    let again = resumed.iter().filter(|r| is_continuation(r)).count();
    assert_eq!((resumed.len(), again), (3, 2), "{:#?}", run.events);
    let goal = project.goal(&session).unwrap();
    assert_eq!(goal.status.as_str(), "paused");
    let log = project.goalkeeper_ok(&["--session", &session, "todo", "log"]);
    assert!(log.contains(r#""idle_continuations":10"#), "{log}");
}

#[test]
#[ignore = "needs Claude Code from npm: scripts/install-host.sh claude-code (.ci/run runs it)"]
fn a_tool_call_starts_the_count_again_and_the_cap_is_claude_codes_own() {
    let claude = require_claude!();
    let model = model::queue(vec![
        Step::todo(json!({"op": "init", "items": ["Think it through"]})),
        Step::text("Thinking."),
        Step::text("Still thinking."),
        Step::text("Thinking harder."),
        // The third continuation: a tool call, then text.
        Step::todo(json!({"op": "view"})),
        Step::text("Looked at the list."),
        Step::text("Thinking again."),
        Step::text("And again."),
        Step::text("Out of ideas."),
    ]);
    let mut project = Project::new(claude, &model);
    project
        .env
        .push(("CLAUDE_CODE_STOP_HOOK_BLOCK_CAP".into(), "3".into()));
    guard_after(&project, 20);
    project.set_goal("Solve it", None);
    let session = new_session_id();
    let run = project.prompt(&session, "Solve it.");
    run.assert_hooks_succeeded();
    // Three blocks, the tool call, three more; the stop after those is at
    // the cap of 3, and goalkeeper lets the turn end.
    let requests = model.calls();
    let seen = requests.iter().filter(|r| is_continuation(r)).count();
    assert_eq!((requests.len(), seen), (9, 6), "{:#?}", run.events);
    assert_eq!(model.steps_left(), 0);
    assert!(cap_warnings(&run).is_empty(), "{:#?}", cap_warnings(&run));
    assert_eq!(told_still_active(&run), 1, "{:#?}", run.hook_responses());
    let told = run
        .hook_responses()
        .iter()
        .map(|h| h.to_string())
        .find(|h| h.contains("still active"))
        .unwrap();
    assert!(told.contains("after 3 Stop-hook continuations"), "{told}");
    assert_eq!(project.goal(&session).unwrap().status.as_str(), "active");
}

#[test]
#[ignore = "needs Claude Code from npm: scripts/install-host.sh claude-code (.ci/run runs it)"]
fn a_wrap_up_due_at_the_cap_waits_for_the_next_prompt_and_comes_once() {
    let claude = require_claude!();
    let model = model::queue(vec![
        Step::todo(json!({"op": "init", "items": ["Think it through"]}))
            .messages_usage(100, 10, 0, 0),
        Step::text("Thinking.").messages_usage(100, 10, 0, 0),
        Step::text("Still thinking.").messages_usage(100, 10, 0, 0),
        // Crosses the budget; the stop after it is at the cap of 2.
        Step::text("Thinking harder.").messages_usage(5000, 10, 0, 0),
        // The next prompt, then the wrap-up's turn.
        Step::text("Where was I?").messages_usage(100, 10, 0, 0),
        Step::text("Stopping: nothing is done.").messages_usage(100, 10, 0, 0),
    ]);
    let mut project = Project::new(claude, &model);
    project
        .env
        .push(("CLAUDE_CODE_STOP_HOOK_BLOCK_CAP".into(), "2".into()));
    guard_after(&project, 20);
    project.set_goal("Solve it", Some(2000));
    let session = new_session_id();
    let run = project.prompt(&session, "Solve it.");
    run.assert_hooks_succeeded();
    let first = model.calls();
    let seen = first.iter().filter(|r| is_continuation(r)).count();
    assert_eq!((first.len(), seen), (4, 2), "{:#?}", run.events);
    assert!(cap_warnings(&run).is_empty(), "{:#?}", cap_warnings(&run));
    let told = run
        .hook_responses()
        .iter()
        .map(|h| h.to_string())
        .collect::<Vec<_>>();
    assert!(
        told.iter()
            .any(|h| h.contains("its wrap-up comes after your next message")),
        "{told:#?}"
    );
    assert_eq!(
        project.goal(&session).unwrap().status.as_str(),
        "budget-limited"
    );

    let run = project.resume(&session, "Go on.");
    run.assert_hooks_succeeded();
    let requests = model.calls();
    let wrap_ups: Vec<usize> = requests
        .iter()
        .enumerate()
        .filter(|(_, r)| r.last_message_text().contains("<goal_budget_limit>"))
        .map(|(i, _)| i)
        .collect();
    assert_eq!(wrap_ups, [5], "{:#?}", run.events);
    assert_eq!(model.steps_left(), 0);
    let goal = project.goal(&session).unwrap();
    assert_eq!(goal.status.as_str(), "budget-limited");
    assert_eq!(goal.tokens_used, model.counted_usage());
}
