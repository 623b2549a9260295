//! Gemini CLI, the real one from npm, headless (`gemini -p`) against the
//! scripted model, after `goalkeeper install gemini-cli` and nothing else
//! (the user's own auth setting aside: an API key for the mock).

use std::process::Output;

use serde_json::{Value, json};

use crate::mock::{Api, MockModel, Step, text, tool, usage};
use crate::{
    HookLog, Host, World, assert_goal_complete, assert_intact_context, assert_wrapped_up, count,
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
    world_of(World::new())
}

/// `world` set up as [`world`] says.
fn world_of(world: World) -> World {
    let world = bare_world_of(world);
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
    bare_world_of(World::new())
}

/// `world` with its Gemini CLI set up for the mock, and nothing of
/// goalkeeper's installed.
fn bare_world_of(world: World) -> World {
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

// The shell tool.

/// A call to Gemini CLI's shell tool, `run_shell_command`, running
/// `command`.
pub fn shell(command: &str) -> Step {
    Step::tool("run_shell_command", json!({"command": command}))
}

/// A user policy (`~/.gemini/policies/goalkeeper.toml`) that lets the
/// shell tool run commands starting with `prefix` without asking; without
/// one, `gemini -p` does not offer the tool at all. (The same file in the
/// project's `.gemini/policies/` had no effect in 0.61.)
fn allow_shell(world: &World, prefix: &str) {
    let dir = world.home().join(".gemini/policies");
    std::fs::create_dir_all(&dir).unwrap();
    let rule = format!(
        "[[rule]]\ntoolName = \"run_shell_command\"\ncommandPrefix = {}\ndecision = \"allow\"\npriority = 100\n",
        json!(prefix)
    );
    std::fs::write(dir.join("goalkeeper.toml"), rule).unwrap();
}

/// Adds hooks to the project's settings that save each `BeforeTool` and
/// `AfterTool` event of the shell tool in `log`.
fn log_shell_hooks(world: &World, log: &HookLog) {
    let path = world.project().join(".gemini/settings.json");
    let mut settings: Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    for event in ["BeforeTool", "AfterTool"] {
        let hook = json!({"matcher": "run_shell_command", "hooks": [
            {"type": "command", "command": log.command(event), "name": "log", "timeout": 30000}]});
        match settings["hooks"][event].as_array_mut() {
            Some(groups) => groups.push(hook),
            None => settings["hooks"][event] = json!([hook]),
        }
    }
    std::fs::write(&path, settings.to_string()).unwrap();
}

/// The function responses of a request, in order.
fn function_responses(body: &Value) -> Vec<Value> {
    body["contents"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|c| c["parts"].as_array().cloned().unwrap_or_default())
        .filter_map(|p| p.get("functionResponse").map(|r| r["response"].clone()))
        .collect()
}

const TODO_APPLY: &str = "goalkeeper --session-from gemini-cli todo apply";

/// The shell runs unsandboxed and writes the store; a policy on a command
/// prefix refuses a compound command that starts with it; `AfterTool`
/// sees the command and the output with Gemini CLI's `Exit Code: N` line
/// (none for 0), but no call id.
#[test]
#[ignore = "needs Gemini CLI from npm: scripts/install-host.sh gemini-cli"]
fn the_shell_writes_the_store_and_after_tool_sees_each_run() {
    let init = format!(r#"{TODO_APPLY} '{{"op":"init","items":["Lexer"]}}'"#);
    let rejected = format!(r#"{TODO_APPLY} '{{"op":"done","task":"Nope"}}'"#);
    let done = format!(r#"{TODO_APPLY} '{{"op":"done","task":"Lexer"}}'"#);
    let world = world_of(World::new().with_goalkeeper_on_path());
    allow_shell(&world, TODO_APPLY);
    let log = HookLog::new(&world);
    log_shell_hooks(&world, &log);
    let mock = MockModel::start(
        Api::Gemini,
        vec![
            shell(&init),
            shell(&rejected),
            shell(&format!("{done} && echo more")),
            shell(&done),
            Step::text("Done."),
        ],
    );
    run(&world, &mock, "Plan.", &[]);

    let responses = function_responses(&mock.model_calls()[4]);
    assert_eq!(
        responses[2],
        json!({"error": "Tool execution denied by policy."})
    );
    let (session, _, list) = world.only_session();
    assert_eq!(list.counts().closed, 1, "{responses:#?}");

    assert_eq!(log.events("BeforeTool").len(), 4);
    let after = log.events("AfterTool");
    assert_eq!(after.len(), 3, "{after:#?}");
    assert_eq!(after[0]["session_id"], session.as_str());
    assert_eq!(after[0]["tool_input"], json!({"command": init}));
    let ok = after[0]["tool_response"]["llmContent"].as_str().unwrap();
    assert!(
        ok.starts_with("<untrusted_context>\nOutput: Remaining (1):\n"),
        "{ok}"
    );
    assert!(!ok.contains("Exit Code"), "{ok}");
    let failed = after[1]["tool_response"]["llmContent"].as_str().unwrap();
    assert!(
        failed.contains("\nExit Code: 1\nProcess Group PGID: "),
        "{failed}"
    );
    assert!(after[1].get("tool_use_id").is_none(), "{:#}", after[1]);
}

#[test]
#[ignore = "needs Gemini CLI from npm: scripts/install-host.sh gemini-cli"]
fn without_a_policy_the_shell_tool_is_not_offered() {
    let world = world_of(World::new().with_goalkeeper_on_path());
    let mock = MockModel::start(Api::Gemini, vec![Step::text("Done.")]);
    run(&world, &mock, "Plan.", &[]);
    let tools = mock.model_calls()[0]["tools"].to_string();
    assert!(tools.contains("mcp_goalkeeper_todo"), "{tools}");
    assert!(!tools.contains("run_shell_command"), "{tools}");
}

// Proving done.

/// `complete` is refused with the check named until a passing run is
/// stored: the model runs verify through `run_shell_command` (allowed by
/// the README's policy), sees the failure, the files are fixed, verify
/// passes, `complete` goes through. Unsandboxed, verify records its runs
/// itself; the `AfterTool` hook finds each run stored already and adds
/// none.
#[test]
#[ignore = "needs Gemini CLI from npm: scripts/install-host.sh gemini-cli"]
fn complete_waits_for_a_passing_verify_run_through_the_shell() {
    use crate::proving::{self, VERIFY};
    let steps =
        proving::fix_then_complete(Step::tool(GOAL, json!({"op": "complete"})), shell(VERIFY));
    let (mock, dir) = proving::mock(Api::Gemini, steps, 2, "state.txt", "ok\n");
    let world = world_of(World::new().with_goalkeeper_on_path());
    dir.set(world.project()).unwrap();
    allow_shell(&world, VERIFY);
    proving::set_goal(&world, &["--session-from", "gemini-cli"]);
    run(&world, &mock, "Ship it.", &[]);

    let bodies = proving::bodies(&mock.calls());
    proving::assert_fix_then_complete(&bodies);
    let (session, goal, _) = world.only_session();
    assert_eq!(
        proving::verify_runs(&world, session.as_str()),
        [
            ("verify".to_owned(), false, "agent".to_owned()),
            ("verify".to_owned(), true, "agent".to_owned())
        ]
    );
    assert_eq!(goal.expect("the goal").status.as_str(), "complete");
}

/// A file edited after a passing verify: `complete` is refused as stale
/// until verify runs again.
#[test]
#[ignore = "needs Gemini CLI from npm: scripts/install-host.sh gemini-cli"]
fn an_edit_after_a_passing_verify_keeps_complete_refused_until_verify_runs_again() {
    use crate::proving::{self, VERIFY};
    let steps =
        proving::stale_then_complete(Step::tool(GOAL, json!({"op": "complete"})), shell(VERIFY));
    let (mock, dir) = proving::mock(Api::Gemini, steps, 1, "notes.txt", "edited\n");
    let world = world_of(World::new().with_goalkeeper_on_path());
    dir.set(world.project()).unwrap();
    std::fs::write(world.project().join("state.txt"), "ok\n").unwrap();
    allow_shell(&world, VERIFY);
    proving::set_goal(&world, &["--session-from", "gemini-cli"]);
    run(&world, &mock, "Ship it.", &[]);

    proving::assert_stale_then_complete(&proving::bodies(&mock.calls()));
    let (session, goal, _) = world.only_session();
    assert_eq!(
        proving::verify_runs(&world, session.as_str()),
        [
            ("verify".to_owned(), true, "agent".to_owned()),
            ("verify".to_owned(), true, "agent".to_owned())
        ]
    );
    assert_eq!(goal.expect("the goal").status.as_str(), "complete");
}
