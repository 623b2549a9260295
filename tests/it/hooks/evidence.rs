//! A verify run's record reaching the store through Claude Code's hook
//! after the shell call, read from the command as the shell passed it.

use super::{SESSION, as_session, event, hook};
use crate::common::TestEnv;
use serde_json::json;

/// The task `Pay the $5 fee`, written `"Pay the \$5 fee"` in the shell:
/// the hook reads the task verify ran as the shell passed it, takes the
/// record, and the agent's `done` goes through. The same command with the
/// `$` left to the shell (`"Pay the $5 fee"`, where `$5` expands) is not
/// that task's call: its record is dropped with a note and the task stays
/// refused.
#[test]
fn a_task_with_an_escaped_dollar_is_read_as_the_shell_passes_it() {
    const TASK: &str = "Pay the $5 fee";
    let env = TestEnv::new();
    let project = env.dir().join("project");
    std::fs::create_dir(&project).unwrap();
    std::fs::write(project.join("fee.txt"), "5\n").unwrap();
    as_session(&env, &["todo", "init", "--item", TASK]);
    as_session(&env, &["todo", "check", TASK, "test -f fee.txt"]);
    // verify where its shell cannot write this database (a sandbox): it
    // records into a copy, and prints the record for the hook.
    let copy = env.dir().join("copy.db");
    env.ok(&["backup", copy.to_str().unwrap()]);
    let verify = env
        .cmd(&["--session", SESSION, "verify", "--task", TASK])
        .current_dir(&project)
        .env("GOALKEEPER_DB", &copy)
        .output()
        .unwrap();
    assert_eq!(verify.status.code(), Some(0), "{verify:?}");
    let output = String::from_utf8(verify.stdout).unwrap();
    let done = json!({"op": "done", "task": TASK}).to_string();
    let agent_done = || {
        env.cmd(&["--session", SESSION, "todo", "apply", &done])
            .current_dir(&project)
            .output()
            .unwrap()
    };
    let log = || as_session(&env, &["todo", "log"]);
    assert_eq!(agent_done().status.code(), Some(1), "no run recorded yet");
    let before = (log(), as_session(&env, &["--json", "todo", "view"]));
    let post = |command: &str| {
        event(
            "PostToolUse",
            json!({"cwd": project, "tool_name": "Bash", "tool_use_id": "t1",
                "tool_input": {"command": command},
                "tool_response": {"stdout": output, "stderr": ""}}),
        )
    };
    let (reply, note) = hook(
        &env,
        &[],
        &post(r#"goalkeeper verify --task "Pay the $5 fee""#),
    );
    assert_eq!(reply, serde_json::Value::Null);
    assert!(
        note.contains("the verify run's record of this shell call was not stored: the command is not one plain command (a substitution in quotes)"),
        "{note}"
    );
    assert_eq!(
        (log(), as_session(&env, &["--json", "todo", "view"])),
        before,
        "a dropped record changes nothing"
    );
    let (reply, note) = hook(
        &env,
        &[],
        &post(r#"goalkeeper verify --task "Pay the \$5 fee""#),
    );
    assert_eq!((reply, note.as_str()), (serde_json::Value::Null, ""));
    let runs = log().lines().filter(|l| l.contains(" verify {")).count();
    assert_eq!(runs, 1, "{}", log());
    let done = agent_done();
    assert!(done.status.success(), "{done:?}");
}
