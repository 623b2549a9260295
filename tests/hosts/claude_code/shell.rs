//! Claude Code's shell tool, `Bash`, running goalkeeper, and what its hooks
//! see of the run: the command as the model wrote it, the output, and the
//! exit status (`PostToolUse` for 0, `PostToolUseFailure` otherwise).

use serde_json::{Value, json};

use super::host::{Project, new_session_id, require_claude};
use super::model::{self, Step, result_text};
use crate::HookLog;

/// An init in the session Claude Code's hooks recorded for the project.
/// (A variable in the command, e.g. `--session "$CLAUDE_CODE_SESSION_ID"`,
/// is refused under a prefix rule: "A variable in this command can't be
/// checked before it runs".)
const INIT: &str =
    r#"goalkeeper --session-from claude-code todo apply '{"op":"init","items":["Lexer"]}'"#;

/// A call goalkeeper rejects: it prints its report and exits 1.
const REJECTED: &str =
    r#"goalkeeper --session-from claude-code todo apply '{"op":"done","task":"Nope"}'"#;

/// The session id Claude Code gives the shell.
const SESSION_VAR: &str = "printenv CLAUDE_CODE_SESSION_ID";

/// The permission `claude -p` needs to run goalkeeper through `Bash`.
const ALLOW: &str = "Bash(goalkeeper:*)";

/// Adds hooks to the project's settings that save each `Bash` event of
/// `PreToolUse`, `PostToolUse` and `PostToolUseFailure` in `log`, and
/// `sandbox` when given.
fn log_bash_hooks(project: &Project, log: &HookLog, sandbox: Option<Value>) {
    let path = project.project().join(".claude/settings.json");
    let mut settings: Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    for event in ["PreToolUse", "PostToolUse", "PostToolUseFailure"] {
        let hook = json!({"matcher": "Bash", "hooks": [{"type": "command", "command": log.command(event)}]});
        match settings["hooks"][event].as_array_mut() {
            Some(groups) => groups.push(hook),
            None => settings["hooks"][event] = json!([hook]),
        }
    }
    if let Some(sandbox) = sandbox {
        settings["sandbox"] = sandbox;
    }
    std::fs::write(&path, settings.to_string()).unwrap();
}

#[test]
#[ignore = "needs Claude Code from npm: scripts/install-host.sh claude-code (.ci/run runs it)"]
fn bash_writes_the_store_of_its_session_and_the_hooks_see_each_run() {
    let claude = require_claude!();
    let model = model::queue(vec![
        Step::bash(INIT),
        Step::bash(REJECTED),
        Step::bash(SESSION_VAR),
        Step::text("Done."),
    ]);
    let project = Project::new(claude, &model);
    let log = HookLog::new(&project);
    log_bash_hooks(&project, &log, None);
    let session = new_session_id();
    let print_session = format!("Bash({SESSION_VAR})");
    let run = project.run(&[
        "Plan.",
        "--session-id",
        &session,
        "--allowedTools",
        ALLOW,
        &print_session,
    ]);
    run.assert_hooks_succeeded();

    // Unsandboxed, the shell wrote the store; the shell's environment
    // names the session.
    let results = model.calls()[3].tool_results();
    assert_eq!(project.todos(&session).counts().total, 1, "{results:#?}");
    assert!(
        result_text(&results[0]).contains("Overall: 0/1 done"),
        "{results:#?}"
    );
    assert_eq!(results[1]["is_error"], true, "{results:#?}");
    assert_eq!(result_text(&results[2]).trim(), session, "{results:#?}");

    let pre = log.events("PreToolUse");
    let post = log.events("PostToolUse");
    let failed = log.events("PostToolUseFailure");
    assert_eq!((pre.len(), post.len(), failed.len()), (3, 2, 1), "{pre:#?}");
    // Exit 0: the command as written, the output, the model's call id.
    assert_eq!(post[0]["tool_input"]["command"], INIT);
    assert_eq!(post[0]["tool_use_id"], pre[0]["tool_use_id"]);
    assert_eq!(post[0]["session_id"], session.as_str());
    let stdout = post[0]["tool_response"]["stdout"].as_str().unwrap();
    assert!(stdout.starts_with("Remaining (1):\n"), "{stdout}");
    // Exit 1: the status only as text, then the output.
    assert_eq!(failed[0]["tool_input"]["command"], REJECTED);
    assert_eq!(failed[0]["tool_use_id"], pre[1]["tool_use_id"]);
    let error = failed[0]["error"].as_str().unwrap();
    assert!(
        error.starts_with("Exit code 1\nErrors: task \"Nope\" not found"),
        "{error}"
    );
}

/// Claude Code's sandbox needs bubblewrap and socat on Linux (`.ci/run`
/// installs them); without them it runs the command unsandboxed.
#[test]
#[ignore = "needs Claude Code from npm: scripts/install-host.sh claude-code (.ci/run runs it)"]
fn sandboxed_bash_cannot_write_the_store_but_its_hooks_can() {
    let claude = require_claude!();
    for tool in ["bwrap", "socat"] {
        let found = std::process::Command::new("sh")
            .args(["-c", &format!("command -v {tool}")])
            .output()
            .is_ok_and(|o| o.status.success());
        assert!(found, "{tool} is missing: apt-get install bubblewrap socat");
    }
    let model = model::queue(vec![Step::bash(INIT), Step::text("Done.")]);
    let project = Project::new(claude, &model);
    let log = HookLog::new(&project);
    log_bash_hooks(&project, &log, Some(json!({"enabled": true})));
    let session = new_session_id();
    let run = project.run(&["Plan.", "--session-id", &session, "--allowedTools", ALLOW]);
    run.assert_hooks_succeeded();
    assert!(!run.stderr.contains("Sandbox disabled"), "{}", run.stderr);

    // The database is read-only inside the sandbox: nothing was written.
    let failed = log.events("PostToolUseFailure");
    assert_eq!(failed.len(), 1, "{failed:#?}");
    let error = failed[0]["error"].as_str().unwrap();
    assert!(
        error.starts_with(
            "Exit code 3\ngoalkeeper: database error: attempt to write a readonly database"
        ),
        "{error}"
    );
    assert_eq!(project.todos(&session).counts().total, 0);
    // goalkeeper's own hooks ran outside it and recorded the session.
    assert_eq!(
        project.last_session("claude-code").as_deref(),
        Some(session.as_str())
    );
}
