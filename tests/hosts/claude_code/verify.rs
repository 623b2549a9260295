//! Proving done in Claude Code: the model's `complete` waits for the
//! goal's check, which the model runs as `goalkeeper verify` through
//! `Bash`, allowed as the README says (`Bash(goalkeeper verify:*)` in
//! the project's `permissions.allow`).

use serde_json::{Value, json};

use super::host::{Project, new_session_id, require_claude};
use super::model::{self, Step};
use crate::proving::{self, VERIFY};

/// The rule the README gives for letting the agent run verify.
const ALLOW_VERIFY: &str = "Bash(goalkeeper verify:*)";

/// Adds the README's rule to the project's `permissions.allow`, and
/// `sandbox` settings when given.
fn allow_verify_in(project: &Project, sandbox: Option<Value>) {
    let path = project.project().join(".claude/settings.json");
    let mut settings: Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    settings["permissions"]["allow"]
        .as_array_mut()
        .expect("install allows goalkeeper's tools")
        .push(json!(ALLOW_VERIFY));
    if let Some(sandbox) = sandbox {
        settings["sandbox"] = sandbox;
    }
    std::fs::write(&path, settings.to_string()).unwrap();
}

/// Adds the README's rule to the project's `permissions.allow`.
fn allow_verify(project: &Project) {
    allow_verify_in(project, None);
}

/// `complete` is refused with the check named until a passing run is
/// stored: the model runs verify, sees the failure, the files are fixed,
/// verify passes, `complete` goes through. Unsandboxed (Claude Code's
/// default), verify records its runs itself.
#[test]
#[ignore = "needs Claude Code from npm: scripts/install-host.sh claude-code (.ci/run runs it)"]
fn complete_waits_for_a_passing_verify_run_through_bash() {
    let claude = require_claude!();
    let complete = Step::goal(json!({"op": "complete"}));
    let steps = proving::fix_then_complete(complete, Step::bash(VERIFY));
    // The project's directory is known once the model exists: the script
    // finds it through a cell.
    let dir = std::sync::Arc::new(std::sync::OnceLock::<std::path::PathBuf>::new());
    let in_script = std::sync::Arc::clone(&dir);
    let model = model::scripted(proving::script_editing(steps, 2, move || {
        proving::write(in_script.get().expect("the project"), "state.txt", "ok\n")();
    }));
    let project = Project::new(claude, &model);
    dir.set(project.project()).unwrap();
    allow_verify(&project);
    let session = new_session_id();
    proving::set_goal(&project, &["--session", &session]);
    let run = project.run(&["Ship it.", "--session-id", &session]);
    run.assert_hooks_succeeded();

    let bodies = proving::bodies(&model.calls());
    proving::assert_fix_then_complete(&bodies);
    assert!(bodies[2].contains("The run is recorded"), "{}", bodies[2]);
    let runs = proving::verify_runs(&project, &session);
    assert_eq!(
        runs,
        [
            ("verify".to_owned(), false, "agent".to_owned()),
            ("verify".to_owned(), true, "agent".to_owned())
        ]
    );
    let goal = project.goal(&session).expect("the goal");
    assert_eq!(goal.status.as_str(), "complete", "{goal:?}");
}

/// A file edited after a passing verify: `complete` is refused as stale
/// until verify runs again. Unsandboxed (Claude Code's default), verify
/// records its runs itself.
#[test]
#[ignore = "needs Claude Code from npm: scripts/install-host.sh claude-code (.ci/run runs it)"]
fn an_edit_after_a_passing_verify_keeps_complete_refused_until_verify_runs_again() {
    let claude = require_claude!();
    let complete = Step::goal(json!({"op": "complete"}));
    let steps = proving::stale_then_complete(complete, Step::bash(VERIFY));
    let dir = std::sync::Arc::new(std::sync::OnceLock::<std::path::PathBuf>::new());
    let in_script = std::sync::Arc::clone(&dir);
    let model = model::scripted(proving::script_editing(steps, 1, move || {
        proving::write(
            in_script.get().expect("the project"),
            "notes.txt",
            "edited\n",
        )();
    }));
    let project = Project::new(claude, &model);
    dir.set(project.project()).unwrap();
    std::fs::write(project.project().join("state.txt"), "ok\n").unwrap();
    allow_verify(&project);
    let session = new_session_id();
    proving::set_goal(&project, &["--session", &session]);
    let run = project.run(&["Ship it.", "--session-id", &session]);
    run.assert_hooks_succeeded();

    proving::assert_stale_then_complete(&proving::bodies(&model.calls()));
    let runs = proving::verify_runs(&project, &session);
    assert_eq!(
        runs,
        [
            ("verify".to_owned(), true, "agent".to_owned()),
            ("verify".to_owned(), true, "agent".to_owned())
        ]
    );
    let goal = project.goal(&session).expect("the goal");
    assert_eq!(goal.status.as_str(), "complete", "{goal:?}");
}

/// With Claude Code's sandbox on (bubblewrap and socat installed, as
/// `.ci/run` does), verify cannot write the database: its record reaches
/// the store through goalkeeper's `PostToolUseFailure` and `PostToolUse`
/// hooks, from what Claude Code captured of each `Bash` call, and the
/// passing run opens the gate (the sandbox's device files over the paths
/// it hides are no part of the fingerprint).
#[test]
#[ignore = "needs Claude Code from npm: scripts/install-host.sh claude-code (.ci/run runs it)"]
fn sandboxed_verify_reaches_the_store_through_the_hooks_and_opens_the_gate() {
    let claude = require_claude!();
    let complete = Step::goal(json!({"op": "complete"}));
    let steps = proving::fix_then_complete(complete, Step::bash(VERIFY));
    let dir = std::sync::Arc::new(std::sync::OnceLock::<std::path::PathBuf>::new());
    let in_script = std::sync::Arc::clone(&dir);
    let model = model::scripted(proving::script_editing(steps, 2, move || {
        proving::write(in_script.get().expect("the project"), "state.txt", "ok\n")();
    }));
    let project = Project::new(claude, &model);
    dir.set(project.project()).unwrap();
    allow_verify_in(&project, Some(json!({"enabled": true})));
    let session = new_session_id();
    proving::set_goal(&project, &["--session", &session]);
    let run = project.run(&["Ship it.", "--session-id", &session]);
    run.assert_hooks_succeeded();
    assert!(!run.stderr.contains("Sandbox disabled"), "{}", run.stderr);

    let bodies = proving::bodies(&model.calls());
    proving::assert_fix_then_complete(&bodies);
    // Inside the sandbox verify said it could not record the run.
    assert!(
        bodies[2].contains("cannot be written from here"),
        "{}",
        bodies[2]
    );
    assert_eq!(
        proving::verify_runs(&project, &session),
        [
            ("hook".to_owned(), false, "agent".to_owned()),
            ("hook".to_owned(), true, "agent".to_owned())
        ]
    );
    let goal = project.goal(&session).expect("the goal");
    assert_eq!(goal.status.as_str(), "complete", "{goal:?}");
}
