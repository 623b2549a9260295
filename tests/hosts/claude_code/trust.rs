//! Claude Code in a folder the user has not trusted, and the README's
//! `claude mcp add` lines run as written.

use std::ffi::OsString;
use std::path::Path;

use goalkeeper::{SessionId, Store};
use serde_json::json;

use super::host::{Project, new_session_id, require_claude};
use super::model::{self, Step, result_text};

/// Forgets that the project's folder was trusted: a fresh clone, or CI.
fn distrust(project: &Project) {
    std::fs::write(project.home().join(".claude.json"), "{}").unwrap();
}

/// The `--allowedTools` argument of the `claude -p` line `install
/// claude-code` printed.
fn printed_allowed_tools(report: &str) -> String {
    let line = report
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with("claude -p "))
        .unwrap_or_else(|| panic!("install printed no `claude -p` line:\n{report}"));
    let (_, tools) = line
        .split_once("--allowedTools ")
        .unwrap_or_else(|| panic!("no --allowedTools in {line}"));
    tools.trim().to_owned()
}

#[test]
#[ignore = "needs Claude Code from npm: scripts/install-host.sh claude-code (.ci/run runs it)"]
fn an_untrusted_folder_runs_the_tools_with_the_line_install_prints() {
    let claude = require_claude!();
    let model = model::queue(vec![
        Step::todo(json!({"op": "init", "items": ["Asked for"]})),
        Step::text("Could not."),
        Step::todo(json!({"op": "init", "items": ["Allowed"]})),
        Step::text("Planned."),
    ]);
    let project = Project::bare(claude, &model, true);
    distrust(&project);
    let report = String::from_utf8(project.install().stdout).unwrap();
    assert!(
        report.contains("only in a folder you trusted"),
        "install does not say what an untrusted folder needs:\n{report}"
    );

    // Untrusted, the project's allow list is ignored: headless, nobody can
    // grant the permission, so the call fails and nothing is stored.
    let first = new_session_id();
    let run = project.prompt(&first, "Plan one task.");
    run.assert_hooks_succeeded();
    let refused = result_text(&model.calls()[1].tool_results()[0]);
    assert!(
        !refused.contains("Overall:"),
        "the call ran without permission: {refused}"
    );
    assert_eq!(project.todos(&first).counts().total, 0);

    // The line install printed lets it run.
    let tools = printed_allowed_tools(&report);
    let second = new_session_id();
    let run = project.run(&[
        "Plan one task.",
        "--session-id",
        &second,
        "--allowedTools",
        &tools,
    ]);
    run.assert_hooks_succeeded();
    let answer = result_text(&model.calls()[3].tool_results()[0]);
    assert!(answer.contains("Overall: 0/1 done"), "{answer}");
    assert_eq!(project.todos(&second).counts().total, 1);
}

/// The `claude mcp add` lines of the README's "Any MCP client" section.
fn readme_mcp_add_lines() -> Vec<String> {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md"))
        .expect("README.md");
    let lines: Vec<String> = readme
        .lines()
        .filter(|l| l.starts_with("claude mcp add "))
        .map(str::to_owned)
        .collect();
    assert_eq!(lines.len(), 2, "the README's lines changed: {lines:?}");
    lines
}

#[test]
#[ignore = "needs Claude Code from npm: scripts/install-host.sh claude-code (.ci/run runs it)"]
fn the_readme_mcp_add_lines_run_as_written() {
    let claude = require_claude!();
    let claude_dir = claude.parent().unwrap().to_owned();
    for (i, line) in readme_mcp_add_lines().iter().enumerate() {
        let model = model::queue(vec![
            Step::todo(json!({"op": "init", "items": ["Added by hand"]})),
            Step::text("Planned."),
        ]);
        let project = Project::bare(claude.clone(), &model, true);
        // The line as a user types it, with `claude` and goalkeeper on PATH.
        let mut sh = project.command("sh");
        let path = sh
            .get_envs()
            .find_map(|(key, value)| (key == "PATH").then_some(value))
            .flatten()
            .map(ToOwned::to_owned)
            .unwrap_or_default();
        let mut with_claude = OsString::from(&claude_dir);
        with_claude.push(":");
        with_claude.push(path);
        let output = sh
            .args(["-c", line])
            .env("PATH", with_claude)
            .output()
            .expect("run sh");
        assert!(
            output.status.success(),
            "`{line}` failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let session = new_session_id();
        let run = project.run(&[
            "Plan one task.",
            "--session-id",
            &session,
            "--allowedTools",
            "mcp__goalkeeper__todo",
        ]);
        assert!(run.success, "{}", run.stderr);
        let answer = result_text(&model.calls()[1].tool_results()[0]);
        assert!(answer.contains("Overall: 0/1 done"), "`{line}`: {answer}");
        // Without the hooks the server acts on the session it was given:
        // `default`, or the one the line pins, in the database it names.
        let (db, name) = match i {
            0 => (project.db(), "default"),
            _ => (project.home().join("goalkeeper.db"), "my-project"),
        };
        let store = Store::open(&db).expect("the database the line names");
        let list = store
            .read(&SessionId::parse(name).unwrap(), |tx| tx.todo_list())
            .expect("list")
            .0;
        assert_eq!(list.counts().total, 1, "`{line}`: {db:?} {name}");
    }
}
