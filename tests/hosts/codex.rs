//! Codex, the real one from npm, headless (`codex exec`) against the
//! scripted model (OpenAI Responses API), after `goalkeeper install codex`
//! and nothing else (the user's own choice of model provider aside: the
//! mock, written to config.toml before the install).

use std::process::Output;

use serde_json::Value;
use serde_json::json;

use crate::mock::{Api, MockModel, Step, Usage, text, tool};
use crate::{Host, World, count, show};

const CODEX: Host = Host {
    name: "codex",
    package: "@openai/codex",
    version: "0.171.0",
    bin: "codex",
    bin_var: "GOALKEEPER_CODEX_BIN",
};

const TODO: &str = "mcp__goalkeeper__todo";
const GOAL: &str = "mcp__goalkeeper__goal";

fn usage(input: u64, cached: u64, output: u64) -> Usage {
    Usage {
        input,
        cached,
        output,
    }
}

fn codex_home(world: &World) -> std::path::PathBuf {
    world.home().join(".codex")
}

/// A world whose Codex talks to `mock`, with goalkeeper installed.
fn world(mock: &MockModel) -> World {
    let world = World::new();
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
    let out = world.goalkeeper(&["install", "codex"]);
    assert!(out.contains("mcp_servers.goalkeeper: added"), "{out}");
    let config = std::fs::read_to_string(home.join("config.toml")).unwrap();
    assert!(
        config.starts_with("# my settings\nmodel = \"mock-model\"\n"),
        "{config}"
    );
    world
}

/// Runs `codex exec ARGS` in the project.
fn run(world: &World, args: &[&str]) -> Output {
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
fn input(body: &Value) -> &Vec<Value> {
    body["input"].as_array().expect("input")
}

fn text_of(item: &Value) -> String {
    match &item["content"] {
        Value::Array(parts) => parts.iter().filter_map(|p| p["text"].as_str()).collect(),
        other => other.as_str().unwrap_or("").to_owned(),
    }
}

/// The developer messages carrying goalkeeper's goal-mode context.
fn contexts(body: &Value) -> Vec<String> {
    input(body)
        .iter()
        .filter(|i| i["type"] == "message" && i["role"] == "developer")
        .map(text_of)
        .filter(|t| t.contains("<goal>\n"))
        .collect()
}

/// The output the model was shown for each function call, in order.
fn tool_outputs(body: &Value) -> Vec<String> {
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
fn latest_context(body: &Value, objective: &str) -> String {
    let all = contexts(body);
    let last = all.last().expect("a goal-mode context").clone();
    assert!(last.contains(objective), "{last}");
    assert_eq!(count(&last, "</goal>"), 1, "{last}");
    assert!(!last.contains("&lt;"), "tags were escaped:\n{last}");
    if last.contains("<todo_context>") {
        assert_eq!(count(&last, "</todo_context>"), 1, "{last}");
    }
    last
}

#[test]
#[ignore = "needs Codex from npm: scripts/install-host.sh codex"]
fn goal_mode_runs_through_codex() {
    let objective = "Ship the parser";
    let steps: Vec<Step> = vec![
        tool(
            GOAL,
            json!({"op": "create", "objective": objective}),
            usage(1000, 400, 20),
        ),
        tool(
            TODO,
            json!({"op": "init", "list": [{"phase": "Build", "items": ["Lexer", "Parser"]}]}),
            usage(1100, 900, 30),
        ),
        tool(
            TODO,
            json!({"op": "done", "task": "Nope"}),
            usage(1200, 1000, 10),
        ),
        tool(
            TODO,
            json!({"op": "done", "task": "Lexer"}),
            usage(1300, 1100, 10),
        ),
        text("The lexer is done; stopping here.", usage(1400, 1200, 15)),
        // The continuation.
        tool(
            TODO,
            json!({"op": "done", "task": "Parser"}),
            usage(1500, 1300, 10),
        ),
        tool(GOAL, json!({"op": "complete"}), usage(1600, 1400, 10)),
        text("The parser ships.", usage(1700, 1500, 5)),
    ];
    // Counted: the responses after the one that created the goal, up to
    // the one that completed it.
    let counted: u64 = steps[1..7].iter().map(|s| s.usage.counted()).sum();
    let mock = MockModel::start(Api::Responses, steps);
    let world = world(&mock);
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
    let (session, goal, list) = world.only_session();
    let goal = goal.expect("the goal");
    assert_eq!(goal.status.as_str(), "complete");
    let statuses: Vec<_> = list.phases[0]
        .tasks
        .iter()
        .map(|t| (t.content.as_str(), t.status.as_str()))
        .collect();
    assert_eq!(statuses, [("Lexer", "completed"), ("Parser", "completed")]);
    assert_eq!(
        world
            .store()
            .pointer(&format!("codex:{}", world.project().display()))
            .unwrap()
            .as_deref(),
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
    let (_, version) = world.store().todo_list(&session).unwrap();
    assert_eq!(version, 1, "the repeated init wrote nothing");
}

#[test]
#[ignore = "needs Codex from npm: scripts/install-host.sh codex"]
fn a_goal_set_beforehand_is_adopted_and_its_wrap_up_comes_once() {
    let steps = vec![
        tool(
            TODO,
            json!({"op": "init", "items": ["Lexer", "Parser"]}),
            usage(800, 300, 20),
        ),
        tool(
            TODO,
            json!({"op": "done", "task": "Lexer"}),
            usage(900, 400, 20),
        ),
        text("The lexer is done.", usage(1000, 500, 10)),
        // The wrap-up.
        text(
            "Stopping: the lexer is done, the parser is left.",
            usage(1100, 600, 10),
        ),
    ];
    let counted: u64 = steps.iter().map(|s| s.usage.counted()).sum();
    let mock = MockModel::start(Api::Responses, steps);
    let world = world(&mock);
    // Before Codex ever ran here: the goal is queued for its next session.
    let out = world.goalkeeper(&[
        "--session-from",
        "codex",
        "goal",
        "set",
        "Ship the parser",
        "--budget",
        "1000",
    ]);
    assert!(out.contains("Queued for"), "{out}");
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

    let (_, goal, list) = world.only_session();
    let goal = goal.expect("the adopted goal");
    assert_eq!(
        (goal.objective.as_str(), goal.token_budget),
        ("Ship the parser", Some(1000))
    );
    assert_eq!(goal.status.as_str(), "budget-limited");
    assert_eq!(goal.tokens_used, counted);
    assert_eq!(
        list.phases[0].tasks[1].status.as_str(),
        "in_progress",
        "left as it was"
    );
}
