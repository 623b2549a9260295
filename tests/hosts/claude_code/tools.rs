//! The `todo` and `goal` tools inside Claude Code: offered, allowed, and
//! answering with the summary the model can read.

use serde_json::json;

use super::host::{Project, new_session_id, require_claude};
use super::model::{self, Step, result_text};

#[test]
#[ignore = "needs Claude Code from npm: scripts/install-host.sh claude-code (.ci/run runs it)"]
fn the_tools_are_offered_allowed_and_answer_with_the_summary() {
    let claude = require_claude!();
    let model = model::queue(vec![
        Step::todo(json!({"op": "init", "list": [
            {"phase": "Build", "items": ["Write the parser", "Write the printer"]},
            {"phase": "Check", "items": ["Run the tests"]}]})),
        Step::todo(json!({"op": "done", "task": "Write the parsr"})),
        Step::text("Planned."),
    ]);
    let project = Project::new(claude, &model);
    let session = new_session_id();
    let run = project.prompt(&session, "Plan the work.");
    run.assert_hooks_succeeded();

    let requests = model.calls();
    let first = &requests[0];
    for tool in ["mcp__goalkeeper__todo", "mcp__goalkeeper__goal"] {
        assert!(
            first.tool_names().iter().any(|t| t == tool),
            "{tool} is not offered with its schema: {:?}",
            first.tool_names()
        );
    }
    let results = requests[2].tool_results();
    assert_eq!(results.len(), 2, "{results:#?}");
    let init = result_text(&results[0]);
    assert!(
        init.contains("Overall: 0/3 done, 3 open.") && !init.trim_start().starts_with('{'),
        "the model got this instead of the summary: {init}"
    );
    assert_ne!(results[0]["is_error"], true);
    let rejected = result_text(&results[1]);
    assert_eq!(results[1]["is_error"], true, "{:#}", results[1]);
    assert!(
        rejected.contains("\"Write the parsr\" not found"),
        "the reason did not reach the model: {rejected}"
    );
    let list = project.todos(&session);
    assert_eq!(list.counts().total, 3);
    assert_eq!(list.counts().closed, 0);
}

#[test]
#[ignore = "needs Claude Code from npm: scripts/install-host.sh claude-code (.ci/run runs it)"]
fn a_thousand_task_list_reaches_the_model_as_a_bounded_summary() {
    let claude = require_claude!();
    let items: Vec<String> = (1..=1000).map(|i| format!("Task number {i}")).collect();
    let model = model::queue(vec![
        Step::todo(json!({"op": "init", "items": items})),
        Step::todo(json!({"op": "done", "task": "Task number 1"})),
        Step::text("Planned."),
    ]);
    let project = Project::new(claude, &model);
    let session = new_session_id();
    project
        .prompt(&session, "Plan a thousand tasks.")
        .assert_hooks_succeeded();
    let results = model.calls()[2].tool_results();
    assert_eq!(results.len(), 2);
    for result in &results {
        let text = result_text(result);
        assert!(
            text.len() < 4096,
            "{} bytes reached the model: {}",
            text.len(),
            &text[..300.min(text.len())]
        );
        assert!(
            !text.contains("\"phases\"") && !text.trim_start().starts_with('{'),
            "the list reached the model as JSON: {text}"
        );
    }
    let done = result_text(&results[1]);
    assert!(done.contains("Overall: 1/1000 done, 999 open."), "{done}");
    assert_eq!(project.todos(&session).counts().closed, 1);
}
