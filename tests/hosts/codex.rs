//! Codex, the real one from npm, headless (`codex exec`) against the
//! scripted model (OpenAI Responses API), after `goalkeeper install codex`
//! and nothing else (the user's own choice of model provider aside: the
//! mock, written to config.toml before the install).

use std::path::PathBuf;
use std::process::Output;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use serde_json::Value;
use serde_json::json;

use crate::mock::{Api, MockModel, Step, text, tool, usage};
use crate::{
    HookLog, Host, World, assert_goal_complete, assert_intact_context, assert_wrapped_up, bin_dir,
    count, goal_mode_counted, goal_mode_script, show, statuses, wrap_up_script,
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
fn bare_world_in(world: World, mock: &MockModel) -> World {
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
    let log = world
        .store()
        .read(&session, |tx| tx.event_log(100))
        .unwrap();
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

/// A CLI agent named like a Codex thread, so that Codex takes the id: the
/// model's `wait_agent` on it gets `not_found`, which it would get for a
/// subagent that ended.
const CLI_AGENT: &str = "01a24309-0000-7000-8000-0000000000c1";

/// The ids `wait_agent` and `close_agent` name are the model's to choose:
/// a model that waits on (and tries to close) the CLI agent holding
/// `Docs` leaves its claim alone, since this session's Codex never
/// spawned it, while the subagent it did spawn has its task freed when
/// `wait_agent` reports it completed.
#[test]
#[ignore = "needs Codex from npm: scripts/install-host.sh codex"]
fn only_a_spawned_subagents_tasks_are_freed() {
    // Where the CLI agent's goalkeeper runs, set once the world exists.
    let place: Arc<OnceLock<(PathBuf, PathBuf, PathBuf)>> = Arc::new(OnceLock::new());
    let claimed = Arc::new(AtomicBool::new(false));
    let (at, once) = (place.clone(), claimed.clone());
    let mock = MockModel::scripted(Api::Responses, move |request| {
        let body = &request.body;
        let done = tool_outputs(body);
        if of_subagent(body) {
            return match done.len() {
                0 => Step::tool(TODO, json!({"op": "start", "task": "Parser"})),
                _ => Step::text("Started the parser."),
            };
        }
        match done.len() {
            0 => Step::tool(
                TODO,
                json!({"op": "init", "items": ["Lexer", "Parser", "Docs"]}),
            ),
            1 => {
                if !once.swap(true, Ordering::SeqCst) {
                    let (db, config, project) = at.get().expect("the world");
                    let start = json!({"op": "start", "task": "Docs"}).to_string();
                    let output = std::process::Command::new(env!("CARGO_BIN_EXE_goalkeeper"))
                        .args(["--session-from", "codex", "--agent", CLI_AGENT])
                        .args(["todo", "apply", &start])
                        .current_dir(project)
                        .env_clear()
                        .env("GOALKEEPER_DB", db)
                        .env("GOALKEEPER_CONFIG", config)
                        .output()
                        .expect("run goalkeeper");
                    assert!(output.status.success(), "{}", show(&output));
                }
                Step::tool(
                    "multi_agent_v1__spawn_agent",
                    json!({"message": SUB_PROMPT}),
                )
            }
            2 => wait_for(&done[1]),
            3 => Step::tool(
                "multi_agent_v1__wait_agent",
                json!({"targets": [CLI_AGENT], "timeout_ms": 1000}),
            ),
            4 => Step::tool("multi_agent_v1__close_agent", json!({"target": CLI_AGENT})),
            _ => Step::text("Done for now."),
        }
    });
    let world = world(&mock);
    let config = world.root().join("config.toml");
    place
        .set((world.db(), config, world.project()))
        .expect("set once");
    run(&world, &["Build the parser."]);
    assert!(claimed.load(Ordering::SeqCst), "the CLI agent claimed Docs");

    // What Codex answered the model: the subagent completed, the CLI
    // agent not found (so a hook that trusted the model's ids would free
    // its task), and no agent to close.
    let calls = mock.model_calls();
    let last = calls.iter().rfind(|b| !of_subagent(b)).unwrap();
    let outputs = tool_outputs(last);
    assert_eq!(outputs.len(), 5, "{outputs:#?}");
    assert!(outputs[2].contains("\"completed\""), "{}", outputs[2]);
    assert_eq!(
        outputs[3],
        format!(r#"{{"status":{{"{CLI_AGENT}":"not_found"}},"timed_out":false}}"#)
    );
    assert!(outputs[4].contains("not found"), "{}", outputs[4]);
    let thread = spawned_agent(&outputs[1]);

    // The store: the CLI agent still holds Docs; the subagent's Parser
    // went back to pending, released by goalkeeper once.
    let (session, _, list) = world.only_session();
    assert_eq!(
        statuses(&list),
        [
            ("Lexer", "in_progress"),
            ("Parser", "pending"),
            ("Docs", "in_progress")
        ]
    );
    let docs = list
        .tasks()
        .map(|(_, t)| t)
        .find(|t| t.content == "Docs")
        .unwrap();
    assert_eq!(docs.agent.as_deref(), Some(CLI_AGENT));
    let log = world
        .store()
        .read(&session, |tx| tx.event_log(100))
        .unwrap();
    let releases: Vec<Option<&str>> = log
        .iter()
        .filter(|e| e.op.as_deref() == Some("release"))
        .map(|e| e.payload["agent"].as_str())
        .collect();
    assert_eq!(releases, [Some(thread.as_str())]);
}

/// A subagent's rejected todo call is its own: the main agent is never
/// reminded of it, and the subagent is, once, when the main agent's
/// `send_input` gives it its next message (its `UserPromptSubmit`).
#[test]
#[ignore = "needs Codex from npm: scripts/install-host.sh codex"]
fn a_subagents_rejected_call_reminds_the_subagent_only() {
    let mock = MockModel::scripted(Api::Responses, move |request| {
        let body = &request.body;
        let done = tool_outputs(body);
        if of_subagent(body) {
            return match done.len() {
                0 => Step::tool(TODO, json!({"op": "done", "task": "Nope"})),
                _ => Step::text("Tried."),
            };
        }
        match done.len() {
            0 => Step::tool(TODO, json!({"op": "init", "items": ["Lexer", "Parser"]})),
            1 => Step::tool(
                "multi_agent_v1__spawn_agent",
                json!({"message": SUB_PROMPT}),
            ),
            2 => wait_for(&done[1]),
            3 => Step::tool(
                "multi_agent_v1__send_input",
                json!({"target": spawned_agent(&done[1]), "message": "SECOND-MESSAGE: go on."}),
            ),
            4 => wait_for(&done[1]),
            _ => Step::text("Done for now."),
        }
    });
    let world = world(&mock);
    run(&world, &["Build the parser."]);

    let calls = mock.model_calls();
    // Codex's hooks name the tools as goalkeeper does (`todo`).
    let reminder = "Your last `todo` call was rejected and changed nothing:";
    let (subs, mains): (Vec<&Value>, Vec<&Value>) = calls.iter().partition(|b| of_subagent(b));
    let outputs = tool_outputs(mains.last().unwrap());
    assert_eq!(outputs.len(), 5, "{outputs:#?}");
    for main in &mains {
        assert!(!main.to_string().contains(reminder), "{main}");
    }
    // The subagent's requests: its first turn (the refused call, then its
    // end), then its second turn, which carries the reminder once.
    assert_eq!(subs.len(), 3, "{subs:#?}");
    let refusal = &tool_outputs(subs[1])[0];
    assert!(
        refusal.contains("\nErrors: task \"Nope\" not found"),
        "{refusal}"
    );
    let reminded: Vec<usize> = subs
        .iter()
        .map(|b| count(&b.to_string(), reminder))
        .collect();
    assert_eq!(reminded, [0, 0, 1]);
    let second = subs[2].to_string();
    assert!(second.contains("SECOND-MESSAGE"), "{second}");
    let (session, _, _) = world.only_session();
    assert_eq!(
        world
            .store()
            .read(&session, |tx| tx.pending_todo_error())
            .unwrap(),
        None
    );
}

// The shell tool.

/// A call to Codex's shell tool, `exec_command`, running `cmd`.
fn shell(cmd: &str) -> Step {
    Step::tool("exec_command", json!({"cmd": cmd}))
}

/// A world for running goalkeeper through Codex's shell: outside the
/// system's temporary directory (under it Codex refuses to set up its
/// sandbox helper, and every sandboxed command fails with `bwrap: execvp
/// codex-linux-sandbox: No such file or directory`), goalkeeper on `PATH`
/// in the login shell `exec_command` starts (`bash -lc`, whose
/// `/etc/profile` resets `PATH`) as a user's `~/.profile` puts it, Codex
/// talking to `mock` and goalkeeper installed.
fn shell_world(mock: &MockModel) -> World {
    let world = world_in(World::outside_tmp().with_goalkeeper_on_path(), mock);
    let profile = format!("export PATH=\"{}:$PATH\"\n", bin_dir().display());
    std::fs::write(world.home().join(".profile"), profile).unwrap();
    world
}

/// Adds hooks on `PreToolUse` and `PostToolUse` that save each event, and
/// the rollout file as it was then, in `log`; trusted as `install` trusts
/// goalkeeper's own.
fn log_hooks(world: &World, log: &HookLog) {
    let home = codex_home(world);
    let path = home.join("hooks.json");
    let mut hooks: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let mut config = std::fs::read_to_string(home.join("config.toml")).unwrap();
    for (event, snake) in [
        ("PreToolUse", "pre_tool_use"),
        ("PostToolUse", "post_tool_use"),
    ] {
        let command = log.command_with_transcript(event);
        let groups = hooks["hooks"][event].as_array_mut().expect("installed");
        groups.push(json!({"hooks": [{"type": "command", "command": command, "timeout": 30}]}));
        let hash = trusted_hash(snake, &command);
        config.push_str(&format!(
            "\n[hooks.state.\"{}:{snake}:{}:0\"]\ntrusted_hash = \"{hash}\"\n",
            path.display(),
            groups.len() - 1
        ));
    }
    std::fs::write(&path, hooks.to_string()).unwrap();
    std::fs::write(home.join("config.toml"), config).unwrap();
}

/// The trust hash Codex 0.171 requires for a hook handler with a 30 s
/// timeout: the sha256 of its compact, key-sorted JSON (the recipe
/// `install codex` follows; without it Codex silently skips the hook).
fn trusted_hash(event_snake: &str, command: &str) -> String {
    use sha2::{Digest, Sha256};
    let handler = json!({"event_name": event_snake, "hooks": [
        {"async": false, "command": command, "timeout": 30, "type": "command"}]});
    let digest = Sha256::digest(handler.to_string().as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

/// The `CommandExecution` item of the call `id` in a rollout file.
fn command_execution(rollout: &str, id: &str) -> Option<Value> {
    rollout.lines().find_map(|line| {
        let record: Value = serde_json::from_str(line).ok()?;
        let item = &record["payload"]["item"];
        (record["payload"]["type"] == "item_completed"
            && item["type"] == "CommandExecution"
            && item["id"] == id)
            .then(|| item.clone())
    })
}

/// An init in the session Codex's hooks recorded for the project.
const INIT: &str =
    r#"goalkeeper --session-from codex todo apply '{"op":"init","items":["Lexer"]}'"#;

/// `codex exec` runs every command in a read-only sandbox: goalkeeper can
/// read its database there but not write it. `PostToolUse` shows the
/// command as written and the output the model got, not the exit status;
/// the rollout file, already written when the hook runs, has the status,
/// the whole output and the shell that ran it. The shell's environment
/// names the session and the call.
#[test]
#[ignore = "needs Codex from npm: scripts/install-host.sh codex"]
fn the_sandboxed_shell_cannot_write_the_store_and_post_tool_use_sees_each_run() {
    let mock = MockModel::start(
        Api::Responses,
        vec![
            shell(INIT),
            shell("printenv CODEX_SESSION_ID CODEX_TOOL_CALL_ID"),
            Step::text("Done."),
        ],
    );
    let world = shell_world(&mock);
    let log = HookLog::new(&world);
    log_hooks(&world, &log);
    run(&world, &["Plan."]);

    let readonly = "goalkeeper: database error: attempt to write a readonly database";
    let outputs = tool_outputs(&mock.model_calls()[2]);
    assert!(
        outputs[0].contains("Process exited with code 3\n"),
        "{outputs:#?}"
    );
    assert!(outputs[0].contains(readonly), "{outputs:#?}");
    let (session, _, list) = world.only_session();
    assert_eq!(list.counts().total, 0, "nothing was written");

    let post = log.events("PostToolUse");
    assert_eq!(post.len(), 2, "{post:#?}");
    assert_eq!(post[0]["tool_name"], "Bash");
    assert_eq!(post[0]["tool_input"], json!({"command": INIT}));
    assert_eq!(post[0]["session_id"], session.as_str());
    let response = post[0]["tool_response"].as_str().unwrap();
    assert!(response.starts_with(readonly), "{response}");
    assert!(!response.contains("code 3"), "{response}");
    let id = post[0]["tool_use_id"].as_str().unwrap();
    let rollout = &log.transcripts("PostToolUse")[0];
    let item =
        command_execution(rollout, id).expect("the run is in the rollout when the hook runs");
    assert_eq!(item["exit_code"], 3, "{item:#}");
    assert_eq!(item["command"], json!(["/bin/bash", "-lc", INIT]));
    assert!(
        item["aggregated_output"]
            .as_str()
            .unwrap()
            .starts_with(readonly),
        "{item:#}"
    );

    let printed = post[1]["tool_response"].as_str().unwrap();
    let expected = format!(
        "{}\n{}\n",
        session.as_str(),
        post[1]["tool_use_id"].as_str().unwrap()
    );
    assert_eq!(printed, expected);
}

/// A command that outlives `yield_time_ms` answers with a process session
/// id and fires no `PostToolUse` then; when the model polls it to its end
/// with `write_stdin`, `PostToolUse` fires for the first call with the
/// last chunk of output only, while the rollout has it all.
#[test]
#[ignore = "needs Codex from npm: scripts/install-host.sh codex"]
fn a_run_longer_than_its_yield_reports_once_polled_to_its_end() {
    let command = "echo started; sleep 2; echo finished; exit 4";
    let mock = MockModel::scripted(Api::Responses, move |request| {
        let outputs = tool_outputs(&request.body);
        match outputs.len() {
            0 => Step::tool(
                "exec_command",
                json!({"cmd": command, "yield_time_ms": 500}),
            ),
            1 => {
                let process: u64 = outputs[0]
                    .split("Process running with session ID ")
                    .nth(1)
                    .and_then(|rest| rest.split_whitespace().next())
                    .and_then(|n| n.parse().ok())
                    .expect("a running process");
                Step::tool(
                    "write_stdin",
                    json!({"session_id": process, "chars": "", "yield_time_ms": 10000}),
                )
            }
            _ => Step::text("Done."),
        }
    });
    let world = shell_world(&mock);
    let log = HookLog::new(&world);
    log_hooks(&world, &log);
    run(&world, &["Plan."]);

    let outputs = tool_outputs(&mock.model_calls()[2]);
    assert!(
        outputs[1].contains("Process exited with code 4"),
        "{outputs:#?}"
    );
    let post = log.events("PostToolUse");
    assert_eq!(post.len(), 1, "{post:#?}");
    let first = log.events("PreToolUse")[0]["tool_use_id"].clone();
    assert_eq!(post[0]["tool_use_id"], first);
    assert_eq!(post[0]["tool_input"], json!({"command": command}));
    assert_eq!(post[0]["tool_response"], "finished\n");
    let rollout = &log.transcripts("PostToolUse")[0];
    let item = command_execution(rollout, first.as_str().unwrap()).expect("the run");
    assert_eq!(item["aggregated_output"], "started\nfinished\n");
    assert_eq!(item["exit_code"], 4);
}

/// An execpolicy rule that allows a command runs it outside the sandbox,
/// without asking: it writes the store. A command that only starts with
/// it stays in the sandbox.
#[test]
#[ignore = "needs Codex from npm: scripts/install-host.sh codex"]
fn an_allow_rule_runs_its_command_outside_the_sandbox() {
    let mock = MockModel::start(
        Api::Responses,
        vec![
            shell(&format!("{INIT} && echo more")),
            shell(INIT),
            Step::text("Done."),
        ],
    );
    let world = shell_world(&mock);
    let rules = codex_home(&world).join("rules");
    std::fs::create_dir_all(&rules).unwrap();
    std::fs::write(
        rules.join("default.rules"),
        r#"prefix_rule(pattern = ["goalkeeper", "--session-from", "codex", "todo", "apply"], decision = "allow")"#,
    )
    .unwrap();
    run(&world, &["Plan."]);

    let outputs = tool_outputs(&mock.model_calls()[2]);
    assert!(
        outputs[0].contains("attempt to write a readonly database"),
        "{outputs:#?}"
    );
    assert!(outputs[1].contains("Overall: 0/1 done"), "{outputs:#?}");
    let (_, _, list) = world.only_session();
    assert_eq!(list.counts().total, 1);
}

// Proving done.

/// In Codex's default sandbox verify cannot write the database; its
/// record reaches the store through goalkeeper's `PostToolUse` hook, read
/// from the rollout file's record of the call. `complete` is refused with
/// the check named until a passing run is stored. Nothing needs allowing:
/// `codex exec` runs the command in its sandbox without asking.
#[test]
#[ignore = "needs Codex from npm: scripts/install-host.sh codex"]
fn sandboxed_verify_reaches_the_store_through_post_tool_use_and_opens_the_gate() {
    use crate::proving::{self, VERIFY};
    let steps =
        proving::fix_then_complete(Step::tool(GOAL, json!({"op": "complete"})), shell(VERIFY));
    let (mock, dir) = proving::mock(Api::Responses, steps, 2, "state.txt", "ok\n");
    let world = shell_world(&mock);
    dir.set(world.project()).unwrap();
    proving::set_goal(&world, &["--session-from", "codex"]);
    run(&world, &["Ship it."]);

    let bodies = proving::bodies(&mock.calls());
    proving::assert_fix_then_complete(&bodies);
    assert!(
        bodies[2].contains("cannot be written from here"),
        "{}",
        bodies[2]
    );
    let (session, goal, _) = world.only_session();
    assert_eq!(
        proving::verify_runs(&world, session.as_str()),
        [
            ("hook".to_owned(), false, "agent".to_owned()),
            ("hook".to_owned(), true, "agent".to_owned())
        ]
    );
    assert_eq!(goal.expect("the goal").status.as_str(), "complete");
}

/// A file edited after a passing verify: `complete` is refused as stale
/// until verify runs again.
#[test]
#[ignore = "needs Codex from npm: scripts/install-host.sh codex"]
fn an_edit_after_a_passing_verify_keeps_complete_refused_until_verify_runs_again() {
    use crate::proving::{self, VERIFY};
    let steps =
        proving::stale_then_complete(Step::tool(GOAL, json!({"op": "complete"})), shell(VERIFY));
    let (mock, dir) = proving::mock(Api::Responses, steps, 1, "notes.txt", "edited\n");
    let world = shell_world(&mock);
    dir.set(world.project()).unwrap();
    std::fs::write(world.project().join("state.txt"), "ok\n").unwrap();
    proving::set_goal(&world, &["--session-from", "codex"]);
    run(&world, &["Ship it."]);

    proving::assert_stale_then_complete(&proving::bodies(&mock.calls()));
    let (session, goal, _) = world.only_session();
    assert_eq!(
        proving::verify_runs(&world, session.as_str()),
        [
            ("hook".to_owned(), true, "agent".to_owned()),
            ("hook".to_owned(), true, "agent".to_owned())
        ]
    );
    assert_eq!(goal.expect("the goal").status.as_str(), "complete");
}
