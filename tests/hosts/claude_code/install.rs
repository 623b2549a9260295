//! `goalkeeper install claude-code` as Claude Code reads it: portable
//! files, a path with a space, bad environment variables that must not
//! break a hook.

use serde_json::{Value, json};

use super::host::{Project, new_session_id, require_claude};
use super::model::{self, Step, result_text};

fn read_json(path: &std::path::Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
#[ignore = "needs Claude Code from npm: scripts/install-host.sh claude-code (.ci/run runs it)"]
fn the_installed_files_name_no_machine_path() {
    let claude = require_claude!();
    let model = model::queue(vec![]);
    let project = Project::new(claude, &model);
    let settings =
        std::fs::read_to_string(project.project().join(".claude/settings.json")).unwrap();
    let mcp = read_json(&project.project().join(".mcp.json"));
    let goal = std::fs::read_to_string(project.project().join(".claude/commands/goal.md")).unwrap();
    for text in [&settings, &mcp.to_string(), &goal] {
        assert!(!text.contains(&*project.home().to_string_lossy()), "{text}");
        assert!(!text.contains(crate::BIN_DIR), "{text}");
    }
    assert_eq!(mcp["mcpServers"]["goalkeeper"]["command"], "goalkeeper");
    let settings: Value = serde_json::from_str(&settings).unwrap();
    assert_eq!(
        settings["permissions"]["allow"],
        json!(["mcp__goalkeeper__todo", "mcp__goalkeeper__goal"])
    );
    for event in [
        "SessionStart",
        "UserPromptSubmit",
        "PreToolUse",
        "Stop",
        "SubagentStop",
        "SessionEnd",
    ] {
        let hook = &settings["hooks"][event][0]["hooks"][0];
        assert_eq!(hook["command"], "goalkeeper hook claude-code", "{event}");
        assert!(hook["timeout"].as_u64().is_some_and(|t| t > 0), "{event}");
    }
}

#[test]
#[ignore = "needs Claude Code from npm: scripts/install-host.sh claude-code (.ci/run runs it)"]
fn installed_from_a_path_with_a_space_everything_runs() {
    let claude = require_claude!();
    let model = model::queue(vec![
        Step::todo(json!({"op": "init", "items": ["One"]})),
        Step::text("Done."),
    ]);
    // goalkeeper is not on PATH: the installer writes its path, quoted.
    let project = Project::bare(claude, &model, false);
    let output = project.install();
    let report = String::from_utf8_lossy(&output.stdout);
    assert!(report.contains("not on PATH"), "{report}");
    let settings = read_json(&project.project().join(".claude/settings.json"));
    let hook = settings["hooks"]["Stop"][0]["hooks"][0]["command"]
        .as_str()
        .unwrap();
    assert!(
        hook.starts_with('\'') && hook.contains(crate::BIN_DIR),
        "{hook}"
    );
    let session = new_session_id();
    let run = project.prompt(&session, "Plan one task.");
    run.assert_hooks_succeeded();
    assert!(
        run.hooks_run().iter().any(|h| h == "Stop"),
        "{:?}",
        run.hooks_run()
    );
    let result = &model.calls()[1].tool_results()[0];
    assert!(
        result_text(result).contains("Overall: 0/1 done"),
        "{result:#}"
    );
    assert_eq!(project.todos(&session).counts().total, 1);
}

#[test]
#[ignore = "needs Claude Code from npm: scripts/install-host.sh claude-code (.ci/run runs it)"]
fn bad_goalkeeper_variables_never_fail_a_hook() {
    let claude = require_claude!();
    let model = model::queue(vec![
        Step::todo(json!({"op": "init", "items": ["One"]})),
        Step::text("Done."),
    ]);
    let mut project = Project::new(claude, &model);
    project.set_goal("Survive bad variables", None);
    for (key, value) in [
        ("GOALKEEPER_SESSION", "my project"),
        ("GOALKEEPER_NOW", "abc"),
        ("GOALKEEPER_DB", ""),
    ] {
        project.env.push((key.into(), value.into()));
    }
    let session = new_session_id();
    let run = project.prompt(&session, "Plan one task.");
    run.assert_hooks_succeeded();
    let requests = model.calls();
    assert!(
        !requests.is_empty(),
        "the prompt was blocked: {:#?}",
        run.events
    );
    assert!(requests[0].all_text().contains("Survive bad variables"));
    assert_eq!(project.todos(&session).counts().total, 1);
}
