//! Gemini CLI with goalkeeper's extension: `gemini extensions install`
//! from the packaged folder, then the extension's own `goalkeeper install
//! gemini-cli --policy` writes the one user policy the README gives; no
//! goalkeeper on `PATH`, nothing written into the project.

use std::io::Write;
use std::process::Stdio;

use super::{ok, packages};
use crate::World;
use crate::gemini_cli::{GEMINI, bare_world, goal_mode, run};
use crate::mock::{Api, MockModel, text, usage};

pub(super) fn extension_world() -> World {
    let world = bare_world().with_path(super::SYSTEM_PATH, env!("CARGO_BIN_EXE_goalkeeper").into());
    let extension = packages().join("gemini-cli");
    let extension = extension.to_str().unwrap();
    let validated = ok(
        &world,
        GEMINI.executable(),
        &["extensions", "validate", extension],
    );
    assert!(validated.contains("successfully validated"), "{validated}");
    // Installing from a folder asks whether to trust it (the user's
    // answer), then installs without the settings (their defaults).
    let mut install = world
        .command(GEMINI.executable())
        .args([
            "extensions",
            "install",
            extension,
            "--consent",
            "--skip-settings",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run gemini extensions install");
    install.stdin.take().unwrap().write_all(b"y\n").unwrap();
    let output = install.wait_with_output().unwrap();
    assert!(output.status.success(), "{}", crate::show(&output));
    let installed = world.home().join(".gemini/extensions/goalkeeper");
    let policy = ok(
        &world,
        installed.join("bin/goalkeeper"),
        &["install", "gemini-cli", "--policy"],
    );
    assert!(policy.contains("policy: written"), "{policy}");
    assert_eq!(std::fs::read_dir(world.project()).unwrap().count(), 0);
    world
}

#[test]
#[ignore = "needs Gemini CLI from npm: scripts/install-host.sh gemini-cli"]
fn goal_mode_runs_through_the_gemini_cli_extension() {
    let world = goal_mode(extension_world());

    // The user's `/goal` command. Gemini CLI asks before it runs the
    // command's shell line (the line, and each command of the script it
    // runs), and refuses it in `gemini -p`, where nobody answers; a policy
    // of the user's that allows them (here, the test's) lets it run. It
    // runs the extension's binary on the session Gemini CLI runs.
    let prefixes = serde_json::json!(["sh -c", "set", "exec"]);
    std::fs::write(
        world.home().join(".gemini/policies/test-goal-command.toml"),
        format!("[[rule]]\ntoolName = \"run_shell_command\"\ncommandPrefix = {prefixes}\ndecision = \"allow\"\npriority = 200\n"),
    )
    .unwrap();
    let mock = MockModel::start(Api::Gemini, vec![text("Noted.", usage(100, 0, 5))]);
    run(&world, &mock, "/goal set Ship the docs --budget 5000", &[]);
    let session = world.last_session("gemini-cli").expect("the hooks ran");
    let goal = world.goal(&session).expect("the command set the goal");
    assert_eq!(
        (goal.objective.as_str(), goal.token_budget),
        ("Ship the docs", Some(5000))
    );
    let prompt = mock.model_calls()[0].to_string();
    assert!(prompt.contains("Ship the docs"), "{prompt}");

    // Uninstalled through Gemini CLI: no hook records the next session,
    // and no tool of goalkeeper's is offered.
    ok(
        &world,
        GEMINI.executable(),
        &["extensions", "uninstall", "goalkeeper"],
    );
    let mock = MockModel::start(Api::Gemini, vec![text("Nothing to do.", usage(100, 0, 5))]);
    run(&world, &mock, "Anything left?", &[]);
    let calls = mock.model_calls();
    assert_eq!(calls.len(), 1);
    assert!(!calls[0]["tools"].to_string().contains("goalkeeper"));
    assert_eq!(
        world.last_session("gemini-cli").as_deref(),
        Some(session.as_str())
    );
    assert!(!world.home().join(".gemini/extensions/goalkeeper").exists());
}
