//! Codex, the real one from npm, headless (`codex exec`) against the
//! scripted model (OpenAI Responses API), after `goalkeeper install codex`
//! and nothing else (the user's own choice of model provider aside: the
//! mock, written to config.toml before the install).

use std::process::Output;

use serde_json::Value;
use serde_json::json;

use crate::mock::{Api, MockModel, Step, text, tool, usage};
use crate::{
    Host, World, assert_goal_complete, assert_intact_context, assert_wrapped_up, count,
    goal_mode_counted, goal_mode_script, show, statuses, wrap_up_script,
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
    let world = bare_world(mock);
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
    let (_, version) = world.store().todo_list(&session).unwrap();
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

/// The prompt the main agent gives its subagent, which starts the
/// subagent's conversation.
const SUB_PROMPT: &str = "SUBAGENT-MARKER: take the parser.";

/// The thread id `spawn_agent` answered with (its output's `agent_id`).
fn spawned_agent(output: &str) -> String {
    let spawned: Value = serde_json::from_str(output).unwrap_or_default();
    spawned["agent_id"].as_str().unwrap_or("missing").to_owned()
}

/// The main agent's `wait_agent` for the subagent `spawn_agent` answered
/// `output` for.
fn wait_for(output: &str) -> Step {
    Step::tool(
        "multi_agent_v1__wait_agent",
        json!({"targets": [spawned_agent(output)], "timeout_ms": 60000}),
    )
}

/// True for a request of a subagent, as Codex marks it in the request's
/// metadata (a forked subagent's conversation starts as the main agent's).
fn of_subagent(body: &Value) -> bool {
    body["client_metadata"]["x-openai-subagent"].is_string()
}

/// A subagent (Codex's `spawn_agent`) runs in an MCP server and hook
/// events of its own: its todo calls act on the main agent's list as the
/// subagent (named by its thread id), never taking over the main agent's
/// task; its responses count towards the goal; it gets no goal-mode
/// context and no continuation; the main agent's next context shows its
/// work done, and the task its last `done` gave it goes back to pending
/// once `wait_agent` reports it completed.
#[test]
#[ignore = "needs Codex from npm: scripts/install-host.sh codex"]
fn a_subagents_todo_calls_act_as_the_subagent() {
    subagent_claims(world);
}

/// The subagent run of [`a_subagents_todo_calls_act_as_the_subagent`] in a
/// world `world_of` sets up for the scripted model.
pub fn subagent_claims(world_of: impl FnOnce(&MockModel) -> World) {
    let sub_usage = usage(500, 100, 20);
    let mock = MockModel::scripted(Api::Responses, move |request| {
        let body = &request.body;
        let done = tool_outputs(body);
        if of_subagent(body) {
            let step = match done.len() {
                0 => Step::tool(TODO, json!({"op": "start", "task": "Parser"})),
                1 => Step::tool(TODO, json!({"op": "done", "task": "Parser"})),
                _ => Step::text("The parser is done."),
            };
            return step.with(sub_usage);
        }
        match done.len() {
            0 => Step::tool(
                GOAL,
                json!({"op": "create", "objective": "Ship the parser"}),
            ),
            1 => Step::tool(
                TODO,
                json!({"op": "init", "items": ["Lexer", "Parser", "Tests"]}),
            ),
            2 => Step::tool(
                "multi_agent_v1__spawn_agent",
                json!({"message": SUB_PROMPT}),
            ),
            3 => wait_for(&done[2]),
            4 => Step::tool(TODO, json!({"op": "done", "task": "Lexer"})),
            5 => Step::tool(TODO, json!({"op": "done", "task": "Tests"})),
            6 => Step::tool(GOAL, json!({"op": "complete"})),
            _ => Step::text("The parser ships."),
        }
    });
    let world = world_of(&mock);
    run(&world, &["Build the parser."]);

    let calls = mock.model_calls();
    let (subs, mains): (Vec<&Value>, Vec<&Value>) = calls.iter().partition(|b| of_subagent(b));
    assert_eq!((mains.len(), subs.len()), (8, 3), "{calls:#?}");
    let spawned: Value = serde_json::from_str(&tool_outputs(mains[3])[2]).unwrap();
    let thread = spawned["agent_id"]
        .as_str()
        .expect("spawn_agent names the agent");

    // The subagent's start took the parser as the subagent: the main
    // agent's lexer stayed its own, and the list names the holder.
    let sub_saw = tool_outputs(subs[1]);
    assert!(
        sub_saw[0].contains("  - Lexer [in_progress] (Build)")
            || sub_saw[0].contains("  - Lexer [in_progress] (Tasks)"),
        "{}",
        sub_saw[0]
    );
    assert!(
        sub_saw[0].contains(&format!("Parser [in_progress: {thread}]")),
        "{}",
        sub_saw[0]
    );
    // Its done gave it the next task nobody held.
    let sub_saw = tool_outputs(subs[2]);
    assert!(
        sub_saw[1].contains(&format!("Tests [in_progress: {thread}]")),
        "{}",
        sub_saw[1]
    );
    // No goal-mode context, no continuation for the subagent.
    for sub in &subs {
        assert!(contexts(sub).is_empty(), "{sub}");
        assert!(
            !sub.to_string()
                .contains("This turn continues the active goal")
        );
    }

    // The main agent's next context: the parser done by the subagent, the
    // tests freed when wait_agent reported the subagent completed, then
    // taken by the main agent's done.
    let context = latest_context(mains[5], "Ship the parser");
    assert!(context.contains("Overall: 2/3 done, 1 open."), "{context}");
    assert!(context.contains("  - [completed] Parser\n"), "{context}");
    assert!(context.contains("  - [in_progress] Tests\n"), "{context}");
    assert!(!context.contains(thread), "{context}");

    // The store: all done, the parser's start and done logged as the
    // subagent's, the tests released by goalkeeper; the goal counted the
    // subagent's three responses and the main agent's while it was live.
    let (session, goal, list) = world.only_session();
    let goal = goal.expect("the goal");
    assert_eq!(goal.status.as_str(), "complete");
    assert_eq!(
        statuses(&list),
        [
            ("Lexer", "completed"),
            ("Parser", "completed"),
            ("Tests", "completed")
        ]
    );
    let log = world.store().event_log(&session, 100).unwrap();
    let by_agent: Vec<(String, Option<String>)> = log
        .iter()
        .filter(|e| e.ok && e.version.is_some())
        .map(|e| {
            let agent = e.payload["agent"].as_str().map(str::to_owned);
            (
                format!("{}:{}", e.actor, e.op.as_deref().unwrap_or("")),
                agent,
            )
        })
        .collect();
    let sub = Some(thread.to_owned());
    assert_eq!(
        by_agent,
        [
            ("agent:init".to_owned(), None),
            ("agent:start".to_owned(), sub.clone()),
            ("agent:done".to_owned(), sub.clone()),
            ("goalkeeper:release".to_owned(), sub),
            ("agent:done".to_owned(), None),
            ("agent:done".to_owned(), None),
        ]
    );
    let main_counted = 6 * usage(100, 0, 10).counted();
    assert_eq!(goal.tokens_used, main_counted + 3 * sub_usage.counted());
}

/// A subagent forked with the main agent's history (`fork_context`) that
/// answers without a tool call: its one response counts once (its rollout
/// file does not repeat the main agent's usage records), found by the
/// main agent's `goal` call.
#[test]
#[ignore = "needs Codex from npm: scripts/install-host.sh codex"]
fn a_forked_subagents_responses_count_once() {
    let sub_usage = usage(700, 0, 7);
    let mock = MockModel::scripted(Api::Responses, move |request| {
        let body = &request.body;
        if of_subagent(body) {
            return Step::text("Nothing to change.").with(sub_usage);
        }
        let done = tool_outputs(body);
        match done.len() {
            0 => Step::tool(
                GOAL,
                json!({"op": "create", "objective": "Ship the parser"}),
            ),
            1 => Step::tool(
                "multi_agent_v1__spawn_agent",
                json!({"message": SUB_PROMPT, "fork_context": true}),
            ),
            2 => wait_for(&done[1]),
            3 => Step::tool(GOAL, json!({"op": "complete"})),
            _ => Step::text("The parser ships."),
        }
    });
    let world = world(&mock);
    run(&world, &["Build the parser."]);
    let subs = mock.model_calls().iter().filter(|b| of_subagent(b)).count();
    assert_eq!(subs, 1);
    let (_, goal, _) = world.only_session();
    let goal = goal.expect("the goal");
    assert_eq!(goal.status.as_str(), "complete");
    assert_eq!(
        goal.tokens_used,
        3 * usage(100, 0, 10).counted() + sub_usage.counted()
    );
}
