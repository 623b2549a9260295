//! A goal set from a terminal after a session ended reaches the next one
//! (DESIGN.md §8), in each host with goalkeeper's package: the first session runs
//! and ends (the host's own session-end event marks it ended), then
//! `goalkeeper --session-from HOST goal set …` from a terminal in the
//! project queues the goal, and the second session adopts it: its first model
//! request carries the goal, and the model's `complete` lands on it.

use serde_json::{Value, json};

use super::claude_code::with_plugin;
use super::codex::plugin_world;
use super::gemini_cli::extension_world;
use super::pi::package_world;
use crate::World;
use crate::claude_code::host::{new_session_id, require_claude};
use crate::claude_code::model;
use crate::mock::{Api, MockModel, Step, text, tool, usage};

const OBJECTIVE: &str = "Ship the parser";

/// The script of both sessions: the first only talks; the second session completes
/// the goal it was given with the tool named `goal`, then stops.
fn script(goal: &str) -> Vec<Step> {
    vec![
        text("Hello.", usage(100, 0, 5)),
        tool(goal, json!({"op": "complete"}), usage(100, 0, 10)),
        text("Done.", usage(100, 0, 5)),
    ]
}

/// After the first session (`first`) ended: the goal set from a terminal is
/// queued, and says it waits because that session ended.
fn set_from_a_terminal(world: &World, host: &str, first: &str) {
    let out = world.goalkeeper_ok(&["--session-from", host, "goal", "set", OBJECTIVE]);
    let expected = format!(
        "Queued for the next {host} session in {} (the last one there, {first}, has ended): {OBJECTIVE} (no budget).",
        world.project().display()
    );
    assert!(out.contains(&expected), "{out}");
    assert_eq!(world.goal(first), None, "the ended session got no goal");
}

/// Session 2 (`second`, recorded by the hooks after `first`) adopted the
/// goal and completed it; the model's requests in the first session (`before`)
/// never carried it, and the second session's first one did.
fn assert_adopted(world: &World, host: &str, first: &str, bodies: &[String], before: usize) {
    let second = world
        .last_session(host)
        .expect("the second session was recorded");
    assert_ne!(second, first, "the second session is a new session");
    let goal = world
        .goal(&second)
        .expect("the second session adopted the goal");
    assert_eq!(
        (goal.objective.as_str(), goal.status.as_str()),
        (OBJECTIVE, "complete")
    );
    assert_eq!(world.goal(first), None);
    assert!(bodies[..before].iter().all(|b| !b.contains(OBJECTIVE)));
    assert!(
        bodies[before].contains(OBJECTIVE),
        "the second session's first request: {}",
        bodies[before]
    );
}

fn texts(calls: &[Value]) -> Vec<String> {
    calls.iter().map(Value::to_string).collect()
}

#[test]
#[ignore = "needs Codex from npm: scripts/install-host.sh codex"]
fn a_terminal_goal_reaches_codexs_next_session() {
    let mock = MockModel::start(Api::Responses, script(crate::codex::GOAL));
    let world = plugin_world(&mock);
    crate::codex::run(&world, &["Say hello."]);
    let first = world
        .last_session("codex")
        .expect("the first session was recorded");
    let before = mock.model_calls().len();
    set_from_a_terminal(&world, "codex", &first);
    crate::codex::run(&world, &["Go on."]);
    assert_eq!(mock.steps_left(), 0);
    assert_adopted(&world, "codex", &first, &texts(&mock.model_calls()), before);
}

#[test]
#[ignore = "needs Gemini CLI from npm: scripts/install-host.sh gemini-cli"]
fn a_terminal_goal_reaches_gemini_clis_next_session() {
    let mock = MockModel::start(Api::Gemini, script(crate::gemini_cli::GOAL));
    let world = extension_world();
    crate::gemini_cli::run(&world, &mock, "Say hello.", &[]);
    let first = world
        .last_session("gemini-cli")
        .expect("the first session was recorded");
    let before = mock.model_calls().len();
    set_from_a_terminal(&world, "gemini-cli", &first);
    crate::gemini_cli::run(&world, &mock, "Go on.", &[]);
    assert_eq!(mock.steps_left(), 0);
    assert_adopted(
        &world,
        "gemini-cli",
        &first,
        &texts(&mock.model_calls()),
        before,
    );
}

#[test]
#[ignore = "needs pi from npm: scripts/install-host.sh pi"]
fn a_terminal_goal_reaches_pis_next_session() {
    let mock = MockModel::start(Api::ChatCompletions, script("goal"));
    let world = package_world(&mock);
    crate::pi::run(&world, "Say hello.");
    let first = world
        .last_session("pi")
        .expect("the first session was recorded");
    let before = mock.model_calls().len();
    set_from_a_terminal(&world, "pi", &first);
    crate::pi::run(&world, "Go on.");
    assert_eq!(mock.steps_left(), 0);
    assert_adopted(&world, "pi", &first, &texts(&mock.model_calls()), before);
}

#[test]
#[ignore = "needs Claude Code from npm: scripts/install-host.sh claude-code (.ci/run runs it)"]
fn a_terminal_goal_reaches_claude_codes_next_session() {
    let claude = require_claude!();
    let model = model::queue(script("mcp__plugin_goalkeeper_goalkeeper__goal"));
    let project = with_plugin(claude, &model);
    let first = new_session_id();
    project
        .prompt(&first, "Say hello.")
        .assert_hooks_succeeded();
    let before = model.calls().len();
    set_from_a_terminal(&project, "claude-code", &first);
    project
        .prompt(&new_session_id(), "Go on.")
        .assert_hooks_succeeded();
    assert_eq!(model.steps_left(), 0);
    let bodies: Vec<String> = model.calls().iter().map(model::Request::all_text).collect();
    assert_adopted(&project, "claude-code", &first, &bodies, before);
}
