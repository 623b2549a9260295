//! Proving done in each host's package (README "Proving done"): the
//! package installed with the README's command in a fresh home, no
//! goalkeeper and no Rust on `PATH`; the goal and its check set from a
//! terminal with the package's own binary before the session, as a user
//! does; the scripted model runs verify through the host's shell tool
//! exactly as goalkeeper's last message to it words the command; the runs
//! are recorded and `complete` is accepted.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::json;

use super::ok_with;
use crate::World;
use crate::mock::{Api, MockModel, Request, Step};
use crate::proving::{self, CHECK};

/// The verify command in the latest of goalkeeper's messages the request
/// shows the model: the last "run `COMMAND` in your shell" (the goal
/// prompt's, the refusal's) or "run `COMMAND` again" (verify's report).
fn verify_command_in(request: &Request) -> Option<String> {
    let text = request.body.to_string();
    let ends = ["` in your shell", "` again"];
    let (end, _) = ends
        .iter()
        .filter_map(|e| text.rfind(e).map(|at| (at, e)))
        .filter(|&(at, _)| {
            text[..at]
                .rfind('`')
                .is_some_and(|start| text[start + 1..at].contains(" verify"))
        })
        .max()?;
    let start = text[..end].rfind('`')? + 1;
    // The body is JSON: a quote in the command arrives escaped.
    Some(text[start..end].replace("\\\"", "\""))
}

/// What the scripted model ran through the shell tool, and the project
/// the script edits.
pub struct Verifying {
    pub model: MockModel,
    pub project: Arc<OnceLock<PathBuf>>,
    pub ran: Arc<Mutex<Vec<String>>>,
}

/// A model speaking `api` that calls `complete` (refused: no run yet),
/// runs verify through `shell` as the request words it (the check
/// fails), runs it again after the project's `state.txt` is fixed, calls
/// `complete` again and stops.
pub fn verifying_model(api: Api, shell: fn(&str) -> Step, complete: Step) -> Verifying {
    let project = Arc::new(OnceLock::<PathBuf>::new());
    let ran = Arc::new(Mutex::new(Vec::new()));
    let (dir, log) = (Arc::clone(&project), Arc::clone(&ran));
    let mut served = 0;
    let model = MockModel::scripted(api, move |request| {
        served += 1;
        match served {
            1 | 4 => complete.clone(),
            2 | 3 => {
                if served == 3 {
                    proving::write(dir.get().expect("the project"), "state.txt", "ok\n")();
                }
                let command = verify_command_in(request).unwrap_or_else(|| {
                    panic!("no verify command reached the model: {}", request.body)
                });
                log.lock().unwrap().push(command.clone());
                shell(&command)
            }
            _ => Step::text("Done: the check passes."),
        }
    });
    Verifying {
        model,
        project,
        ran,
    }
}

/// Sets the goal with the check from a terminal in the project, with the
/// package's binary `exe`, before `host` ran there: it is queued.
pub fn set_goal(world: &World, exe: &Path, host: &str) {
    let out = ok_with(world.command(exe).args([
        "--session-from",
        host,
        "goal",
        "set",
        "Ship the parser",
        "--check",
        CHECK,
    ]));
    assert!(out.contains("Queued for"), "{out}");
}

/// Asserts the run as the model saw it and as the store keeps it: the
/// refusal, the failing and the passing run, `complete` accepted, both
/// runs recorded as the agent's; every command the model ran was
/// `expected`, and no message named a `goalkeeper` the shell cannot find.
pub fn assert_proven(world: &World, verifying: &Verifying, expected: &str, via: &str) {
    let bodies = proving::bodies(&verifying.model.calls());
    proving::assert_fix_then_complete(&bodies);
    let ran = verifying.ran.lock().unwrap().clone();
    assert_eq!(ran, [expected, expected]);
    if expected != proving::VERIFY {
        for body in &bodies {
            assert!(!body.contains("`goalkeeper verify"), "{body}");
        }
    }
    let (session, goal, _) = world.only_session();
    assert_eq!(
        proving::verify_runs(world, session.as_str()),
        [
            (via.to_owned(), false, "agent".to_owned()),
            (via.to_owned(), true, "agent".to_owned())
        ]
    );
    assert_eq!(goal.expect("the goal").status.as_str(), "complete");
}

/// `exe` as goalkeeper's messages name it: its canonical path, as the
/// running executable knows itself.
fn canonical(exe: &Path) -> String {
    std::fs::canonicalize(exe)
        .expect("the package's binary")
        .display()
        .to_string()
}

/// Gemini CLI's extension: verify runs through `run_shell_command` under
/// the README's policy, which the extension's `install gemini-cli` names
/// with the command its messages use, the extension's binary by path
/// (Gemini CLI's shell does not find it by name).
#[test]
#[ignore = "needs Gemini CLI from npm: scripts/install-host.sh gemini-cli"]
fn complete_waits_for_verify_run_as_the_gemini_cli_extension_words_it() {
    use crate::gemini_cli::{GOAL, bare_world, run, shell};
    let verifying = verifying_model(
        Api::Gemini,
        shell,
        Step::tool(GOAL, json!({"op": "complete"})),
    );
    let world = bare_world().with_path(super::SYSTEM_PATH, env!("CARGO_BIN_EXE_goalkeeper").into());
    verifying.project.set(world.project()).unwrap();
    let said = super::gemini_cli::install_extension(&world);
    let exe = world
        .home()
        .join(".gemini/extensions/goalkeeper/bin/goalkeeper");
    let expected = format!("{} verify", canonical(&exe));
    // The rule `install` gives for verify, added to the policy file as
    // the README says.
    let rule = said
        .lines()
        .find(|l| l.contains("commandPrefix"))
        .unwrap_or_else(|| panic!("install names no rule for verify: {said}"));
    assert!(
        rule.contains(&format!("commandPrefix = {}", json!(expected))),
        "{rule}"
    );
    let policy = world.home().join(".gemini/policies/goalkeeper.toml");
    let mut text = std::fs::read_to_string(&policy).unwrap();
    text.push_str(&format!(
        "\n[[rule]]\ntoolName = \"run_shell_command\"\ncommandPrefix = {}\ndecision = \"allow\"\npriority = 100\n",
        json!(expected)
    ));
    std::fs::write(&policy, text).unwrap();
    set_goal(&world, &exe, "gemini-cli");
    let out = run(&world, &verifying.model, "Ship it.", &[]);
    assert_proven(&world, &verifying, &expected, "verify");
    // The prompts name the tools as the model sees them, and Gemini CLI
    // finds nothing to warn about in their schemas.
    let bodies = proving::bodies(&verifying.model.calls());
    assert!(
        bodies[0].contains(&format!("`{GOAL}` with op `complete`")),
        "{}",
        bodies[0]
    );
    let printed = crate::show(&out);
    assert!(!printed.contains("unknown format"), "{printed}");
}

/// pi's package: verify runs through `bash`, the package's binary by its
/// path (pi loads the package from the folder it was installed from, and
/// its `bash` does not find the binary by name); verify records its runs
/// itself, in the session the extension names to `bash`.
#[test]
#[ignore = "needs pi from npm: scripts/install-host.sh pi"]
fn complete_waits_for_verify_run_as_the_pi_package_words_it() {
    use crate::pi::{run, shell};
    let verifying = verifying_model(
        Api::ChatCompletions,
        shell,
        Step::tool("goal", json!({"op": "complete"})),
    );
    let world = super::pi::package_world(&verifying.model);
    verifying.project.set(world.project()).unwrap();
    let exe = super::packages().join("pi/bin/goalkeeper");
    set_goal(&world, &exe, "pi");
    run(&world, "Ship it.");
    let expected = format!("{} verify", canonical(&exe));
    assert_proven(&world, &verifying, &expected, "verify");
}

/// Claude Code's plugin: Claude Code puts the plugin's `bin/` on its
/// shell's `PATH`, so the messages say `goalkeeper verify`, the README's
/// `--allowedTools` rule lets `Bash` run it, and verify records its runs.
#[test]
#[ignore = "needs Claude Code from npm: scripts/install-host.sh claude-code (.ci/run runs it)"]
fn complete_waits_for_verify_run_as_the_claude_code_plugin_words_it() {
    use crate::claude_code::host::{new_session_id, require_claude};
    let claude = require_claude!();
    let goal = "mcp__plugin_goalkeeper_goalkeeper__goal";
    let verifying = verifying_model(
        Api::Messages,
        Step::bash,
        Step::tool(goal, json!({"op": "complete"})),
    );
    let project = super::claude_code::with_plugin(claude, &verifying.model);
    verifying.project.set(project.project()).unwrap();
    let exe = super::files_mentioning(&project.home().join(".claude/plugins"), "")
        .into_iter()
        .find(|p| p.ends_with("bin/goalkeeper"))
        .expect("the plugin's binary");
    set_goal(&project, &exe, "claude-code");
    let session = new_session_id();
    let run = project.run(&[
        "Ship it.",
        "--session-id",
        &session,
        "--allowedTools",
        "Bash(goalkeeper verify:*)",
    ]);
    run.assert_hooks_succeeded();
    assert_proven(&project, &verifying, proving::VERIFY, "verify");
}

/// Codex's plugin: verify runs through `exec_command`, a login shell that
/// sets `PATH` anew, the plugin's binary by its path; in Codex's
/// read-only sandbox the plugin's `PostToolUse` hook stores the record.
/// (Outside the system's temporary directory: under it Codex sets up no
/// sandbox helper and every sandboxed command fails.)
#[test]
#[ignore = "needs Codex from npm: scripts/install-host.sh codex"]
fn complete_waits_for_verify_run_as_the_codex_plugin_words_it() {
    use crate::codex::shell::shell;
    use crate::codex::{GOAL, bare_world_in, run};
    let verifying = verifying_model(
        Api::Responses,
        shell,
        Step::tool(GOAL, json!({"op": "complete"})),
    );
    let world =
        World::outside_tmp().with_path(super::SYSTEM_PATH, env!("CARGO_BIN_EXE_goalkeeper").into());
    let world = bare_world_in(world, &verifying.model);
    verifying.project.set(world.project()).unwrap();
    let plugin = super::codex::install_plugin(&world);
    let exe = plugin.join("bin/goalkeeper");
    set_goal(&world, &exe, "codex");
    run(&world, &["Ship it."]);
    let expected = format!("{} verify", canonical(&exe));
    assert_proven(&world, &verifying, &expected, "hook");
}
