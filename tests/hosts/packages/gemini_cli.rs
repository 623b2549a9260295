//! Gemini CLI with goalkeeper's extension: `gemini extensions install`
//! from the packaged folder, then the extension's own `goalkeeper install
//! gemini-cli --policy` writes the one user policy the README gives; no
//! goalkeeper on `PATH`, nothing written into the project.

use super::{ok, ok_with, packages};
use crate::World;
use crate::gemini_cli::{GEMINI, bare_world, goal_mode, run};
use crate::mock::{Api, MockModel, text, usage};

fn extension_world() -> World {
    let world = bare_world().with_path(super::SYSTEM_PATH, env!("CARGO_BIN_EXE_goalkeeper").into());
    install_extension(&world);
    world
}

/// Installs the extension into `world` with the README's command, stdin
/// closed: it asks nothing (the folder trusted for this run, the
/// settings left at their defaults). Then the extension's own
/// `goalkeeper install gemini-cli --policy`, whose output it returns.
pub fn install_extension(world: &World) -> String {
    let extension = packages().join("gemini-cli");
    let extension = extension.to_str().unwrap();
    let validated = ok(
        world,
        GEMINI.executable(),
        &["extensions", "validate", extension],
    );
    assert!(validated.contains("successfully validated"), "{validated}");
    let installed = ok_with(
        world
            .command(GEMINI.executable())
            .args([
                "extensions",
                "install",
                extension,
                "--consent",
                "--skip-settings",
            ])
            .env("GEMINI_CLI_TRUST_WORKSPACE", "true"),
    );
    assert!(installed.contains("installed successfully"), "{installed}");
    let installed = world.home().join(".gemini/extensions/goalkeeper");
    let policy = ok(
        world,
        installed.join("bin/goalkeeper"),
        &["install", "gemini-cli", "--policy"],
    );
    assert!(policy.contains("policy: written"), "{policy}");
    assert_eq!(std::fs::read_dir(world.project()).unwrap().count(), 0);
    policy
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

/// An install that stopped half way (Gemini CLI creates the extension's
/// folder before it copies the files, so one killed in between leaves it
/// empty) is refused by the next install with Gemini CLI's own words;
/// the README's recovery, removing the folder, lets the README's command
/// run again to the end.
#[test]
#[ignore = "needs Gemini CLI from npm: scripts/install-host.sh gemini-cli"]
fn an_install_stopped_half_way_runs_again_after_the_readmes_recovery() {
    let world = bare_world().with_path(super::SYSTEM_PATH, env!("CARGO_BIN_EXE_goalkeeper").into());
    let folder = world.home().join(".gemini/extensions/goalkeeper");
    std::fs::create_dir_all(&folder).unwrap();
    let extension = packages().join("gemini-cli");
    let refused = world
        .command(GEMINI.executable())
        .args(["extensions", "install", extension.to_str().unwrap()])
        .args(["--consent", "--skip-settings"])
        .env("GEMINI_CLI_TRUST_WORKSPACE", "true")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(!refused.status.success(), "{}", crate::show(&refused));
    assert!(
        crate::show(&refused).contains("a directory with that name already exists"),
        "{}",
        crate::show(&refused)
    );
    std::fs::remove_dir_all(&folder).unwrap();
    install_extension(&world);
    assert!(folder.join("bin/goalkeeper").is_file());
}
