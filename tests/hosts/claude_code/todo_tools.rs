//! Claude Code's own todo tools beside goalkeeper's: off for the newest
//! models, back with `CLAUDE_CODE_ENABLE_TODO_TOOLS=1`. Whichever way,
//! goalkeeper's reminders name only goalkeeper's `todo` tool.

use serde_json::json;

use super::host::{Project, new_session_id, require_claude};
use super::model::{self, Step};

/// Claude Code's own todo tools, by the names it offers them under (2.1.332
/// offers its task tools deferred, behind its tool search, and names them
/// in the request).
const HOST_TODO_TOOLS: [&str; 5] = [
    "TaskCreate",
    "TaskUpdate",
    "TaskList",
    "TaskGet",
    "TodoWrite",
];

#[test]
#[ignore = "needs Claude Code from npm: scripts/install-host.sh claude-code (.ci/run runs it)"]
fn the_eager_reminder_names_goalkeepers_tool_with_or_without_the_hosts() {
    let claude = require_claude!();
    for host_tools in [false, true] {
        let model = model::queue(vec![
            Step::todo(json!({"op": "init", "items": ["Planned first"]})),
            Step::text("Planned."),
        ]);
        let mut project = Project::new(claude.clone(), &model);
        let config = project.home().join(".config/goalkeeper");
        std::fs::create_dir_all(&config).unwrap();
        std::fs::write(config.join("config.toml"), "[todo]\neager = \"always\"\n").unwrap();
        if host_tools {
            project
                .env
                .push(("CLAUDE_CODE_ENABLE_TODO_TOOLS".into(), "1".into()));
        }
        let session = new_session_id();
        let run = project.prompt(&session, "Fix the parser.");
        run.assert_hooks_succeeded();

        let first = &model.calls()[0];
        let offered = first.tool_names();
        assert!(
            offered.iter().any(|t| t == "mcp__goalkeeper__todo"),
            "{offered:?}"
        );
        let body = first.body.to_string();
        let named = HOST_TODO_TOOLS.iter().any(|t| body.contains(t));
        assert_eq!(
            named,
            host_tools,
            "CLAUDE_CODE_ENABLE_TODO_TOOLS={host_tools}, yet the host's todo tools are {}offered",
            if named { "" } else { "not " }
        );
        let text = first.all_text();
        let start = text.find("<todo_plan>").expect("the eager reminder");
        let end = text[start..].find("</todo_plan>").expect("its end") + start;
        let reminder = &text[start..end];
        assert!(reminder.contains("`mcp__goalkeeper__todo`"), "{reminder}");
        for host in HOST_TODO_TOOLS {
            assert!(!reminder.contains(host), "{reminder}");
        }
        assert_eq!(project.todos(&session).counts().total, 1);
    }
}
