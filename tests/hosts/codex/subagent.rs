//! Codex's subagents (`spawn_agent`): their todo calls act as the
//! subagent, their responses count once, and only the tasks of a subagent
//! this session spawned are freed when it ends.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use serde_json::{Value, json};

use super::{GOAL, TODO, contexts, latest_context, run, tool_outputs, world};
use crate::mock::{Api, MockModel, Step, usage};
use crate::{World, count, show, statuses};

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
