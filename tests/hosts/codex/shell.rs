//! Codex's shell tool, `exec_command`, running goalkeeper: the sandbox
//! it runs in, what `PostToolUse` and the rollout file see of a run, and
//! verify's record of a run reaching the store through that hook.

use serde_json::{Value, json};

use super::{GOAL, codex_home, run, tool_outputs, world_in};
use crate::mock::{Api, MockModel, Step};
use crate::{HookLog, World, bin_dir};

/// A call to Codex's shell tool, `exec_command`, running `cmd`.
pub fn shell(cmd: &str) -> Step {
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
