//! Codex, the real one from npm, headless (`codex exec`) against the
//! scripted model (OpenAI Responses API), after `goalkeeper install codex`
//! and nothing else (the user's own choice of model provider aside: the
//! mock, written to config.toml before the install).

pub mod shell;
mod subagent;

pub use subagent::subagent_claims;

use std::process::Output;

use serde_json::Value;
use serde_json::json;

use crate::mock::{Api, MockModel, text, tool, usage};
use crate::{
    Host, World, assert_goal_complete, assert_intact_context, assert_wrapped_up, count,
    goal_mode_counted, goal_mode_script, show, wrap_up_script,
};

pub const CODEX: Host = Host {
    name: "codex",
    package: "@openai/codex",
    version: "0.171.0",
    bin: "codex",
    bin_var: "GOALKEEPER_CODEX_BIN",
};

pub const TODO: &str = "mcp__goalkeeper__todo";
pub const GOAL: &str = "mcp__goalkeeper__goal";

pub fn codex_home(world: &World) -> std::path::PathBuf {
    world.home().join(".codex")
}

/// A world whose Codex talks to `mock`, with goalkeeper installed.
fn world(mock: &MockModel) -> World {
    world_in(World::new(), mock)
}

/// `world` with Codex set up to talk to `mock` and goalkeeper installed.
fn world_in(world: World, mock: &MockModel) -> World {
    let world = bare_world_in(world, mock);
    let out = world.goalkeeper_ok(&["install", "codex"]);
    assert!(out.contains("mcp_servers.goalkeeper: added"), "{out}");
    let config = std::fs::read_to_string(codex_home(&world).join("config.toml")).unwrap();
    assert!(
        config.starts_with("# my settings\nmodel = \"mock-model\"\n"),
        "{config}"
    );
    world
}

/// A world whose Codex talks to `mock`, with nothing of goalkeeper's
/// installed.
pub fn bare_world(mock: &MockModel) -> World {
    bare_world_in(World::new(), mock)
}

/// `world` with Codex set up to talk to `mock`, and nothing of
/// goalkeeper's installed.
pub fn bare_world_in(world: World, mock: &MockModel) -> World {
    let home = codex_home(&world);
    std::fs::create_dir_all(&home).unwrap();
    // The user's own configuration: the model provider (the mock), with a
    // comment that must survive the install.
    std::fs::write(
        home.join("config.toml"),
        format!(
            "# my settings\nmodel = \"mock-model\"\nmodel_provider = \"mock\"\n\n[model_providers.mock]\nname = \"mock\"\nbase_url = \"{}/v1\"\nwire_api = \"responses\"\nenv_key = \"MOCK_API_KEY\"\n",
            mock.base_url()
        ),
    )
    .unwrap();
    world
}

/// Runs `codex exec ARGS` in the project.
pub fn run(world: &World, args: &[&str]) -> Output {
    let output = world
        .command(CODEX.executable())
        .arg("exec")
        .arg("--skip-git-repo-check")
        .args(args)
        .env("CODEX_HOME", codex_home(world))
        .env("MOCK_API_KEY", "test-key")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run codex");
    assert!(output.status.success(), "codex failed:\n{}", show(&output));
    output
}

/// The input items of a request.
pub fn input(body: &Value) -> &Vec<Value> {
    body["input"].as_array().expect("input")
}

pub fn text_of(item: &Value) -> String {
    match &item["content"] {
        Value::Array(parts) => parts.iter().filter_map(|p| p["text"].as_str()).collect(),
        other => other.as_str().unwrap_or("").to_owned(),
    }
}

/// The developer messages carrying goalkeeper's goal-mode context.
pub fn contexts(body: &Value) -> Vec<String> {
    input(body)
        .iter()
        .filter(|i| i["type"] == "message" && i["role"] == "developer")
        .map(text_of)
        .filter(|t| t.contains("<goal>\n"))
        .collect()
}

/// The output the model was shown for each function call, in order.
pub fn tool_outputs(body: &Value) -> Vec<String> {
    input(body)
        .iter()
        .filter(|i| i["type"] == "function_call_output")
        .map(|i| match &i["output"] {
            // Text, or (for MCP tools) a list of text parts.
            Value::Array(parts) => parts
                .iter()
                .filter_map(|p| p["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n"),
            other => other.as_str().unwrap_or("").to_owned(),
        })
        .collect()
}

/// The latest goal-mode context of a request, checked for intact tags.
pub fn latest_context(body: &Value, objective: &str) -> String {
    let all = contexts(body);
    let last = all.last().expect("a goal-mode context").clone();
    assert_intact_context(&last, objective, None);
    last
}

#[test]
#[ignore = "needs Codex from npm: scripts/install-host.sh codex"]
fn goal_mode_runs_through_codex() {
    goal_mode(world);
}

/// The standard goal-mode run in a world `world_of` sets up for the
/// scripted model: the tools work without approval flags; the goal-mode
/// context, the continuation and the usage reach the model and the store.
pub fn goal_mode(world_of: impl FnOnce(&MockModel) -> World) -> World {
    let objective = "Ship the parser";
    let steps = goal_mode_script(TODO, GOAL);
    let counted = goal_mode_counted(&steps);
    let mock = MockModel::start(Api::Responses, steps);
    let world = world_of(&mock);
    run(&world, &["Build the parser."]);

    let calls = mock.model_calls();
    assert_eq!(calls.len(), 8, "the run ended after the goal was complete");
    assert_eq!(mock.steps_left(), 0);

    // Codex's own goal tools are off; goalkeeper's are there.
    let tools = calls[0]["tools"].to_string();
    assert!(!tools.contains("\"create_goal\""), "{tools}");
    assert!(tools.contains("goalkeeper"), "{tools}");

    // The tools worked without approval flags; the store has it all, in
    // the session the hooks saw.
    let (session, goal) = assert_goal_complete(&world);
    assert_eq!(
        world.last_session("codex").as_deref(),
        Some(session.as_str())
    );

    // What the model was shown for each call: the summary, and for the
    // rejected one its reason.
    let outputs = tool_outputs(&calls[7]);
    assert_eq!(outputs.len(), 6, "{outputs:#?}");
    assert!(
        outputs.iter().all(|o| !o.contains("\"phases\"")),
        "never the list as JSON: {outputs:#?}"
    );
    assert!(
        outputs[1].contains("Overall: 0/2 done, 2 open."),
        "{}",
        outputs[1]
    );
    assert!(
        outputs[2].contains(r#"Errors: task "Nope" not found"#),
        "the rejected call's reason: {}",
        outputs[2]
    );

    // The goal-mode context, unescaped, refreshed after each todo change,
    // before and after the continuation.
    assert!(contexts(&calls[0]).is_empty(), "no goal yet");
    assert!(!latest_context(&calls[1], objective).contains("<todo_context>"));
    for (call, overall) in [
        (2, "Overall: 0/2 done, 2 open."),
        (3, "Overall: 0/2 done, 2 open."),
        (4, "Overall: 1/2 done, 1 open."),
        (5, "Overall: 1/2 done, 1 open."),
        (6, "Overall: 2/2 done, 0 open."),
    ] {
        let context = latest_context(&calls[call], objective);
        assert!(context.contains(overall), "call {call}: {context}");
    }

    // The continuation: after the model ended its turn with the goal
    // active, Codex sent the Stop hook's reason as the next user message,
    // carrying the todo block (escaped by Codex).
    let prompts: Vec<String> = input(&calls[5])
        .iter()
        .filter(|i| i["role"] == "user")
        .map(text_of)
        .filter(|t| t.contains("This turn continues the active goal"))
        .collect();
    assert_eq!(prompts.len(), 1, "{:#?}", input(&calls[5]));
    assert!(
        prompts[0].contains("Overall: 1/2 done, 1 open."),
        "{}",
        prompts[0]
    );
    assert!(
        !input(&calls[4])
            .iter()
            .any(|i| text_of(i).contains("This turn continues the active goal"))
    );

    // Usage: each response while the goal was live once, cache reads out.
    assert_eq!(goal.tokens_used, counted);
    world
}

#[test]
#[ignore = "needs Codex from npm: scripts/install-host.sh codex"]
fn a_model_that_repeats_init_is_paused_by_the_runaway_guard() {
    let init = || {
        tool(
            TODO,
            json!({"op": "init", "items": ["Lexer", "Parser"]}),
            usage(100, 0, 10),
        )
    };
    let stop = || text("Planned.", usage(100, 0, 5));
    let mut steps = vec![tool(
        GOAL,
        json!({"op": "create", "objective": "Ship the parser"}),
        usage(100, 0, 10),
    )];
    for _ in 0..4 {
        steps.push(init());
        steps.push(stop());
    }
    let mock = MockModel::start(Api::Responses, steps);
    let world = world(&mock);
    run(&world, &["Build the parser."]);

    // Three continuations without progress (the repeated init changes
    // nothing, so it is no progress), then the guard paused the goal and
    // Codex stopped: no fourth continuation, nothing more asked.
    let calls = mock.model_calls();
    assert_eq!(calls.len(), 9, "{}", calls.len());
    assert_eq!(mock.steps_left(), 0);
    let continuations: Vec<usize> = calls
        .iter()
        .map(|c| count(&c.to_string(), "This turn continues the active goal"))
        .collect();
    assert_eq!(continuations, [0, 0, 0, 1, 1, 2, 2, 3, 3]);
    let (session, goal, _) = world.only_session();
    assert_eq!(goal.expect("the goal").status.as_str(), "paused");
    let (_, version) = world.store().read(&session, |tx| tx.todo_list()).unwrap();
    assert_eq!(version, 1, "the repeated init wrote nothing");
}

#[test]
#[ignore = "needs Codex from npm: scripts/install-host.sh codex"]
fn a_goal_set_beforehand_is_adopted_and_its_wrap_up_comes_once() {
    let steps = wrap_up_script(TODO, usage(900, 400, 20));
    let counted: u64 = steps.iter().map(|s| s.usage.counted()).sum();
    let mock = MockModel::start(Api::Responses, steps);
    let world = world(&mock);
    // Before Codex ever ran here: the goal is queued for its next session.
    world.queue_goal("codex");
    run(&world, &["Build the parser."]);

    let calls = mock.model_calls();
    assert_eq!(calls.len(), 4, "a quiet stop after the wrap-up");
    let wrap_ups: Vec<usize> = calls
        .iter()
        .map(|c| count(&c.to_string(), "goal_budget_limit"))
        .collect();
    // Codex escapes the Stop reason: `&lt;goal_budget_limit&gt;` twice.
    assert_eq!(wrap_ups, [0, 0, 0, 2], "the wrap-up exactly once");
    // The adopted goal's context came with the first prompt.
    assert!(latest_context(&calls[0], "Ship the parser").contains("Budget: 0 of 1000 tokens"));

    assert_wrapped_up(&world, counted);
}
