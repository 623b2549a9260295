//! pi, the real one from npm, headless (`pi -p`) against the scripted model
//! (OpenAI chat completions), after `goalkeeper install pi` and nothing else
//! (the user's own model choice aside: the mock, in models.json).

use std::process::Output;

use serde_json::{Value, json};

use crate::mock::{Api, MockModel, Step, usage};
use crate::{
    Host, World, assert_goal_complete, assert_intact_context, assert_wrapped_up, count,
    goal_mode_counted, goal_mode_script, show, wrap_up_script,
};

pub const PI: Host = Host {
    name: "pi",
    package: "@mariozechner/pi-coding-agent",
    version: "0.73.1",
    bin: "pi",
    bin_var: "GOALKEEPER_PI_BIN",
};

pub fn agent_dir(world: &World) -> std::path::PathBuf {
    world.home().join(".pi/agent")
}

/// A world whose pi talks to `mock`, with goalkeeper installed.
fn world(mock: &MockModel) -> World {
    world_of(World::new(), mock)
}

/// `world` with pi talking to `mock` and goalkeeper installed.
fn world_of(world: World, mock: &MockModel) -> World {
    let world = bare_world_of(world, mock);
    let out = world.goalkeeper_ok(&["install", "pi"]);
    assert!(out.contains("extension: written"), "{out}");
    world
}

/// A world whose pi talks to `mock`, with nothing of goalkeeper's
/// installed.
pub fn bare_world(mock: &MockModel) -> World {
    bare_world_of(World::new(), mock)
}

/// `world` with pi talking to `mock`, and nothing of goalkeeper's
/// installed.
fn bare_world_of(world: World, mock: &MockModel) -> World {
    let dir = agent_dir(&world);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("models.json"),
        json!({"providers": {"mock": {
            "baseUrl": format!("{}/v1", mock.base_url()),
            "api": "openai-completions",
            "apiKey": "test-key",
            "compat": {"supportsDeveloperRole": false, "supportsReasoningEffort": false},
            "models": [{"id": "mock-model"}],
        }}})
        .to_string(),
    )
    .unwrap();
    world
}

pub fn run(world: &World, prompt: &str) -> Output {
    run_with(world, prompt, &[])
}

/// [`run`] with more environment for pi.
fn run_with(world: &World, prompt: &str, env: &[(&str, &std::path::Path)]) -> Output {
    let output = world
        .command(PI.executable())
        .envs(env.iter().copied())
        .args(["--provider", "mock", "--model", "mock-model", "-p", prompt])
        .env("PI_CODING_AGENT_DIR", agent_dir(world))
        .env("PI_OFFLINE", "1")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run pi");
    assert!(output.status.success(), "pi failed:\n{}", show(&output));
    output
}

fn messages(body: &Value) -> &Vec<Value> {
    body["messages"].as_array().expect("messages")
}

fn content(message: &Value) -> String {
    match &message["content"] {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts.iter().filter_map(|p| p["text"].as_str()).collect(),
        _ => String::new(),
    }
}

/// The last message of a request (where the extension puts the context).
fn last(body: &Value) -> String {
    content(messages(body).last().expect("a message"))
}

fn assert_goal_context(body: &Value, objective: &str, with_todos: bool) {
    let last = last(body);
    assert!(
        last.starts_with("<goal>\n"),
        "the last message is not the goal-mode context:\n{last}"
    );
    assert_intact_context(&last, objective, Some(with_todos));
}

#[test]
#[ignore = "needs pi from npm: scripts/install-host.sh pi"]
fn goal_mode_runs_through_pi() {
    goal_mode(world);
}

/// The standard goal-mode run in a world `world_of` sets up for the
/// scripted model: the tools, the goal-mode context, the continuation and
/// the usage, as the model and the store saw them.
pub fn goal_mode(world_of: impl FnOnce(&MockModel) -> World) -> World {
    let objective = "Ship the parser";
    let steps = goal_mode_script("todo", "goal");
    // (pi counts each message as it ends.)
    let counted = goal_mode_counted(&steps);
    let mock = MockModel::start(Api::ChatCompletions, steps);
    let world = world_of(&mock);
    let output = run(&world, "Build the parser.");

    let calls = mock.model_calls();
    assert_eq!(
        calls.len(),
        8,
        "the run ended after the goal was complete:\n{}",
        show(&output)
    );
    assert_eq!(mock.steps_left(), 0);

    let (_, goal) = assert_goal_complete(&world);

    // The rejected call's reason reached the model.
    let rejected = messages(&calls[3])
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(content)
        .nth(2)
        .expect("the third tool result");
    assert!(
        rejected.contains(r#"Errors: task "Nope" not found"#),
        "{rejected}"
    );

    // The goal-mode context, last in every model call while the goal was
    // active, with its tags.
    assert!(!last(&calls[0]).contains("<goal>"), "no goal yet");
    assert_goal_context(&calls[1], objective, false);
    for call in &calls[2..7] {
        assert_goal_context(call, objective, true);
    }
    assert!(
        !last(&calls[7]).contains("<goal>\n"),
        "the goal was complete"
    );

    // The continuation, as a hidden follow-up in the same run.
    let continued = calls[5].to_string();
    assert_eq!(count(&continued, "This turn continues the active goal"), 1);
    assert!(
        !calls[4]
            .to_string()
            .contains("This turn continues the active goal")
    );

    assert_eq!(goal.tokens_used, counted);
    world
}

#[test]
#[ignore = "needs pi from npm: scripts/install-host.sh pi"]
fn a_goal_set_beforehand_is_adopted_and_its_wrap_up_comes_once() {
    // pi counts each message as it ends: the budget runs out with the
    // third.
    let steps = wrap_up_script("todo", usage(500, 400, 20));
    let counted: u64 = steps.iter().map(|s| s.usage.counted()).sum();
    let mock = MockModel::start(Api::ChatCompletions, steps);
    let world = world(&mock);
    // Before pi ever ran here: the goal is queued for its next session.
    world.queue_goal("pi");
    run(&world, "Build the parser.");

    let calls = mock.model_calls();
    assert_eq!(calls.len(), 4, "a quiet stop after the wrap-up");
    let wrap_ups: Vec<usize> = calls
        .iter()
        .map(|c| count(&c.to_string(), "<goal_budget_limit>"))
        .collect();
    assert_eq!(wrap_ups, [0, 0, 0, 1], "the wrap-up exactly once");
    for call in &calls[..3] {
        assert_goal_context(call, "Ship the parser", call != &calls[0]);
    }

    assert_wrapped_up(&world, counted);
}

// The shell tool.

/// A call to pi's shell tool, `bash`, running `command`.
pub fn shell(command: &str) -> Step {
    Step::tool("bash", json!({"command": command}))
}

/// A project extension that appends each `tool_call`, `tool_result` and
/// `tool_execution_end` event to the file `$EVENT_LOG` (one JSON line
/// each, `{"name", "event"}`), and puts the session id in the environment
/// of pi's process as `HOST_SESSION`, where `bash` finds it.
const EVENT_LOG_EXTENSION: &str = r#"
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
import { appendFileSync } from "node:fs";

function log(name: string, event: unknown): void {
  appendFileSync(process.env.EVENT_LOG as string, JSON.stringify({ name, event }) + "\n");
}

export default function (pi: ExtensionAPI) {
  pi.on("session_start", (_event, ctx) => {
    process.env.HOST_SESSION = ctx.sessionManager.getSessionId();
  });
  pi.on("tool_call", (event) => log("tool_call", event));
  pi.on("tool_result", (event) => log("tool_result", event));
  pi.on("tool_execution_end", (event) => log("tool_execution_end", event));
}
"#;

/// The events `name` of an event log, in order.
fn logged(log: &std::path::Path, name: &str) -> Vec<Value> {
    std::fs::read_to_string(log)
        .expect("the event log")
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).expect("JSON"))
        .filter(|entry| entry["name"] == name)
        .map(|entry| entry["event"].clone())
        .collect()
}

/// pi runs every command, unsandboxed: `bash` writes the store, in the
/// session an extension put in the environment. An extension sees the
/// command and the real output in `tool_result`, the exit status only as
/// text (and `isError`).
#[test]
#[ignore = "needs pi from npm: scripts/install-host.sh pi"]
fn bash_writes_the_store_and_extensions_see_each_run() {
    let todo = r#"goalkeeper --session "$HOST_SESSION" todo apply"#;
    let init = format!(r#"{todo} '{{"op":"init","items":["Lexer"]}}'"#);
    let rejected = format!(r#"{todo} '{{"op":"done","task":"Nope"}}'"#);
    let mock = MockModel::start(
        Api::ChatCompletions,
        vec![shell(&init), shell(&rejected), Step::text("Done.")],
    );
    let world = world_of(World::new().with_goalkeeper_on_path(), &mock);
    std::fs::write(
        world.project().join(".pi/extensions/log.ts"),
        EVENT_LOG_EXTENSION,
    )
    .unwrap();
    let log = world.root().join("events.jsonl");
    run_with(&world, "Plan.", &[("EVENT_LOG", &log)]);

    let (_, _, list) = world.only_session();
    assert_eq!(list.counts().total, 1, "the list is in pi's session");
    let results = logged(&log, "tool_result");
    assert_eq!(results.len(), 2, "{results:#?}");
    assert_eq!(results[0]["input"], json!({"command": init}));
    assert_eq!(results[0]["isError"], false);
    let text = results[0]["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("Remaining (1):\n"), "{text}");
    assert_eq!(results[1]["isError"], true);
    let text = results[1]["content"][0]["text"].as_str().unwrap();
    assert!(text.ends_with("\n\n\nCommand exited with code 1"), "{text}");
    let calls = logged(&log, "tool_call");
    assert_eq!(results[1]["toolCallId"], calls[1]["toolCallId"]);
    let ends = logged(&log, "tool_execution_end");
    assert!(ends[1].get("input").is_none(), "{:#}", ends[1]);
}

/// goalkeeper's extension names pi's session to `bash` as a session
/// starts (`GOALKEEPER_PI_SESSION`, where verify looks first): what a
/// command in `bash` sees is the session the store holds, not a session
/// found through the directory.
#[test]
#[ignore = "needs pi from npm: scripts/install-host.sh pi"]
fn bash_sees_the_session_goalkeepers_extension_names() {
    let mock = MockModel::start(
        Api::ChatCompletions,
        vec![
            Step::tool("todo", json!({"op": "init", "items": ["Lexer"]})),
            shell(r#"echo "session=[$GOALKEEPER_PI_SESSION]""#),
            Step::text("Done."),
        ],
    );
    let world = world(&mock);
    run(&world, "Which session is this?");

    // The `todo` call wrote the list into pi's session.
    let (session, _, list) = world.only_session();
    assert_eq!(list.counts().total, 1);
    // The request after the bash call carries its output.
    let calls = mock.model_calls();
    let seen: Vec<String> = messages(&calls[2])
        .iter()
        .map(content)
        .filter(|text| text.contains("session=["))
        .collect();
    assert_eq!(seen, [format!("session=[{}]\n", session.as_str())]);
}

// Proving done.

/// `complete` is refused with the check named until a passing run is
/// stored: the model runs verify through `bash` (pi runs every command),
/// sees the failure, the files are fixed, verify passes, `complete` goes
/// through. verify finds pi's session in the variable goalkeeper's
/// extension sets, and records its runs itself.
#[test]
#[ignore = "needs pi from npm: scripts/install-host.sh pi"]
fn complete_waits_for_a_passing_verify_run_through_bash() {
    use crate::proving::{self, VERIFY};
    let steps =
        proving::fix_then_complete(Step::tool("goal", json!({"op": "complete"})), shell(VERIFY));
    let (mock, dir) = proving::mock(Api::ChatCompletions, steps, 2, "state.txt", "ok\n");
    let world = world_of(World::new().with_goalkeeper_on_path(), &mock);
    dir.set(world.project()).unwrap();
    proving::set_goal(&world, &["--session-from", "pi"]);
    run(&world, "Ship it.");

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
#[ignore = "needs pi from npm: scripts/install-host.sh pi"]
fn an_edit_after_a_passing_verify_keeps_complete_refused_until_verify_runs_again() {
    use crate::proving::{self, VERIFY};
    let steps =
        proving::stale_then_complete(Step::tool("goal", json!({"op": "complete"})), shell(VERIFY));
    let (mock, dir) = proving::mock(Api::ChatCompletions, steps, 1, "notes.txt", "edited\n");
    let world = world_of(World::new().with_goalkeeper_on_path(), &mock);
    dir.set(world.project()).unwrap();
    std::fs::write(world.project().join("state.txt"), "ok\n").unwrap();
    proving::set_goal(&world, &["--session-from", "pi"]);
    run(&world, "Ship it.");

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
