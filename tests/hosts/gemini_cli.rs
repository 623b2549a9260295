//! Gemini CLI, the real one from npm, headless (`gemini -p`) against the
//! scripted model, after `goalkeeper install gemini-cli` and nothing else
//! (the user's own auth setting aside: an API key for the mock).

use std::process::Output;

use serde_json::{Value, json};

use crate::mock::{Api, MockModel, text, tool, usage};
use crate::{
    Host, World, assert_goal_complete, assert_intact_context, assert_wrapped_up, count,
    goal_mode_counted, goal_mode_script, show, wrap_up_script,
};

pub const GEMINI: Host = Host {
    name: "gemini-cli",
    package: "@google/gemini-cli",
    version: "0.61.0",
    bin: "gemini",
    bin_var: "GOALKEEPER_GEMINI_BIN",
};

pub const TODO: &str = "mcp_goalkeeper_todo";
pub const GOAL: &str = "mcp_goalkeeper_goal";

/// A world with goalkeeper installed into the project and the user's Gemini
/// CLI set up for the mock (API-key auth).
fn world() -> World {
    let world = bare_world();
    let out = world.goalkeeper_ok(&[
        "install",
        "gemini-cli",
        "--project",
        world.project().to_str().unwrap(),
    ]);
    assert!(out.contains("mcpServers.goalkeeper: added"), "{out}");
    world
}

/// A world whose Gemini CLI is set up for the mock (API-key auth), with
/// nothing of goalkeeper's installed.
pub fn bare_world() -> World {
    let world = World::new();
    let user = world.home().join(".gemini");
    std::fs::create_dir_all(&user).unwrap();
    std::fs::write(
        user.join("settings.json"),
        json!({"security": {"auth": {"selectedType": "gemini-api-key"}}}).to_string(),
    )
    .unwrap();
    world
}

/// Runs `gemini -p PROMPT` in the project against `mock`.
pub fn run(world: &World, mock: &MockModel, prompt: &str, extra: &[&str]) -> Output {
    let output = world
        .command(GEMINI.executable())
        .args(["-m", "gemini-2.5-flash", "-p", prompt])
        .args(extra)
        .env("GEMINI_API_KEY", "test-key")
        .env("GOOGLE_GEMINI_BASE_URL", mock.base_url())
        // The folder-trust decision is the user's (README); tests make it
        // for the temporary project.
        .env("GEMINI_CLI_TRUST_WORKSPACE", "true")
        .output()
        .expect("run gemini");
    assert!(output.status.success(), "gemini failed:\n{}", show(&output));
    output
}

/// The text of the last content of a model request (where the BeforeModel
/// hook puts the goal-mode context).
fn last_text(body: &Value) -> String {
    let contents = body["contents"].as_array().expect("contents");
    let last = contents.last().expect("a content");
    last["parts"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| p["text"].as_str())
        .collect()
}

/// Every text, function response and function call of a request, as one
/// string, to search for what the model was shown.
fn all_text(body: &Value) -> String {
    body["contents"].to_string()
}

fn assert_goal_context(body: &Value, objective: &str, with_todos: bool) {
    let last = last_text(body);
    assert!(
        last.starts_with("<goal>\n"),
        "the last message is not the goal-mode context:\n{last}"
    );
    assert_intact_context(&last, objective, Some(with_todos));
}

#[test]
#[ignore = "needs Gemini CLI from npm: scripts/install-host.sh gemini-cli"]
fn goal_mode_runs_through_gemini_cli() {
    goal_mode(world());
}

/// The standard goal-mode run in `world`: the tools work without any
/// approval flag; the goal-mode context, the continuation and the usage
/// reach the model and the store.
pub fn goal_mode(world: World) -> World {
    let objective = "Ship the parser";
    let steps = goal_mode_script(TODO, GOAL);
    let counted = goal_mode_counted(&steps);
    let mock = MockModel::start(Api::Gemini, steps);
    run(&world, &mock, "Build the parser.", &[]);

    let calls = mock.model_calls();
    // The run ended after the completed goal's last answer: nothing else
    // was asked of the model.
    assert_eq!(calls.len(), 8, "model calls: {calls:#?}");
    assert_eq!((mock.steps_left(), mock.served()), (0, 8));
    assert!(
        mock.requests()
            .iter()
            .filter(|r| r.scripted())
            .all(|r| r.path == "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"),
        "{:?}",
        mock.requests().iter().map(|r| &r.path).collect::<Vec<_>>()
    );

    // The tools worked without any approval flag, and the store has it all.
    let (session, goal) = assert_goal_complete(&world);
    assert_eq!(
        world.last_session("gemini-cli").as_deref(),
        Some(session.as_str()),
        "the hooks recorded the session for --session-from"
    );

    // A rejected call's reason reached the model.
    // (Gemini CLI forwards a failed MCP call as JSON inside JSON.)
    let rejected = all_text(&calls[3]).replace('\\', "");
    assert!(
        rejected.contains(r#"Errors: task "Nope" not found"#),
        "{rejected}"
    );

    // The goal-mode context was the last message of every model call while
    // the goal was active, with its tags, the todo block once there was a list.
    assert!(!last_text(&calls[0]).contains("<goal>"), "no goal yet");
    assert_goal_context(&calls[1], objective, false);
    for call in &calls[2..7] {
        assert_goal_context(call, objective, true);
    }
    assert!(
        !all_text(&calls[7]).contains("<goal>\\n"),
        "the goal was complete"
    );

    // The continuation: the model ended its turn with the goal active, and
    // the continuation came back as the next prompt, with the context last.
    let continued = all_text(&calls[5]);
    assert!(
        continued.contains("This turn continues the active goal"),
        "{continued}"
    );
    assert_eq!(
        count(&all_text(&calls[4]), "This turn continues the active goal"),
        0
    );

    // Usage: each response while the goal was live once (the chat file has
    // some records twice), cache reads out.
    assert_eq!(goal.tokens_used, counted);
    world
}

#[test]
#[ignore = "needs Gemini CLI from npm: scripts/install-host.sh gemini-cli"]
fn a_goal_set_beforehand_is_adopted_and_its_wrap_up_comes_once() {
    let world = world();
    // Before Gemini CLI ever ran here: the goal is queued for its next
    // session in this directory.
    world.queue_goal("gemini-cli");
    let steps = wrap_up_script(TODO, usage(900, 400, 20));
    let counted: u64 = steps.iter().map(|s| s.usage.counted()).sum();
    let mock = MockModel::start(Api::Gemini, steps);
    run(&world, &mock, "Build the parser.", &[]);

    let calls = mock.model_calls();
    assert_eq!(calls.len(), 4, "a quiet stop after the wrap-up: {calls:#?}");
    let wrap_ups: Vec<usize> = calls
        .iter()
        .map(|c| count(&all_text(c), "<goal_budget_limit>"))
        .collect();
    assert_eq!(wrap_ups, [0, 0, 0, 1], "the wrap-up exactly once");
    // Until the budget ran out, the context was there; then it was not.
    for call in &calls[..3] {
        assert_goal_context(call, "Ship the parser", call != &calls[0]);
    }
    assert!(last_text(&calls[3]).starts_with("<goal_budget_limit>"));

    // The session Gemini CLI ran adopted the queued goal.
    assert_wrapped_up(&world, counted);
}

#[test]
#[ignore = "needs Gemini CLI from npm: scripts/install-host.sh gemini-cli"]
fn a_model_that_only_talks_is_paused_by_the_runaway_guard() {
    // Gemini CLI 0.61 was seen to crash after about 16 blocked stops in a
    // row; the guard pauses the goal long before.
    let world = world();
    let mut steps = vec![tool(
        GOAL,
        json!({"op": "create", "objective": "Ship the parser"}),
        usage(100, 0, 10),
    )];
    steps.extend((0..4).map(|_| text("Thinking about it.", usage(100, 0, 5))));
    let mock = MockModel::start(Api::Gemini, steps);
    run(&world, &mock, "Build the parser.", &[]);

    let calls = mock.model_calls();
    assert_eq!(calls.len(), 5, "three continuations, then the guard");
    let continuations: Vec<usize> = calls
        .iter()
        .map(|c| count(&all_text(c), "This turn continues the active goal"))
        .collect();
    assert_eq!(continuations, [0, 0, 1, 2, 3]);
    let (_, goal, _) = world.only_session();
    assert_eq!(goal.expect("the goal").status.as_str(), "paused");
}
