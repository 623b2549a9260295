//! The user steering from inside Claude Code: the `/goal` command, goals
//! queued before the first session, `/clear`, a second session in the
//! same directory, and the Bash guard that keeps the agent from doing the
//! user's part.

use serde_json::json;

use super::host::{Project, new_session_id, require_claude};
use super::model::{self, Step, result_text};

#[test]
#[ignore = "needs Claude Code from npm: scripts/install-host.sh claude-code (.ci/run runs it)"]
fn the_goal_command_sets_and_budgets_the_sessions_goal() {
    let claude = require_claude!();
    let model = model::queue(vec![]);
    let project = Project::new(claude, &model);
    let file = std::fs::read_to_string(project.project().join(".claude/commands/goal.md")).unwrap();
    assert!(file.contains("disable-model-invocation: true"), "{file}");
    let session = new_session_id();
    project
        .prompt(&session, "/goal set Ship the release --budget 5000")
        .assert_hooks_succeeded();
    let goal = project.goal(&session).expect("/goal set made no goal");
    assert_eq!(
        (goal.objective.as_str(), goal.token_budget),
        ("Ship the release", Some(5000))
    );
    project
        .resume(&session, "/goal budget 9000")
        .assert_hooks_succeeded();
    assert_eq!(project.goal(&session).unwrap().token_budget, Some(9000));
    // What the model read is goalkeeper's answer, as the user's message.
    let last = model.calls().last().unwrap().last_message_text();
    assert!(last.contains("9000"), "{last}");
}

/// Claude Code puts the arguments into the command's shell line as typed:
/// an objective holding shell characters (parentheses) goes in quotes, as
/// the command's hint says, and arrives whole; the reply quotes it whole.
#[test]
#[ignore = "needs Claude Code from npm: scripts/install-host.sh claude-code (.ci/run runs it)"]
fn a_quoted_objective_with_parentheses_arrives_whole() {
    let claude = require_claude!();
    let model = model::queue(vec![]);
    let project = Project::new(claude, &model);
    let objective = "Fix the parser (nested groups) so long objectives survive intact";
    let session = new_session_id();
    project
        .prompt(
            &session,
            &format!("/goal set \"{objective}\" --budget 5000"),
        )
        .assert_hooks_succeeded();
    let goal = project.goal(&session).expect("/goal set made no goal");
    assert_eq!(goal.objective, objective);
    // goalkeeper's answer, as the user's message of the first request.
    let first = model.calls().first().unwrap().last_message_text();
    assert!(
        first.contains(&format!(
            "Goal #1 set: \"{objective}\", budget 5000 tokens."
        )),
        "{first}"
    );
}

#[test]
#[ignore = "needs Claude Code from npm: scripts/install-host.sh claude-code (.ci/run runs it)"]
fn clear_carries_the_goal_and_the_list_to_the_new_session() {
    let claude = require_claude!();
    let model = model::scripted(|request| {
        let text = request.last_message_text();
        if text.contains("Plan it.") {
            Step::todo(json!({"op": "init", "items": ["First", "Second"]}))
        } else if text.contains("Show the list.") {
            Step::todo(json!({"op": "view"}))
        } else {
            Step::text("Noted.")
        }
    });
    let project = Project::new(claude, &model);
    project.set_goal("Carry me", None);
    let session = new_session_id();
    // The first turn continues until the runaway guard pauses the goal;
    // `/clear` then moves the client to a new session id.
    let run = project.conversation(
        &session,
        &["Plan it.", "/clear", "Show the list.", "/goal resume"],
    );
    run.assert_hooks_succeeded();
    let new = run.last_session_id().unwrap();
    assert_ne!(new, session, "/clear kept the session id");
    let goal = project.goal(&new).expect("the goal did not follow /clear");
    assert_eq!(goal.objective, "Carry me");
    assert_eq!(project.todos(&new).counts().total, 2);
    let requests = model.calls();
    // After /clear the model sees the list, and the MCP server (started
    // for the old session) acts on the new one.
    let shown = requests
        .iter()
        .find(|r| r.last_message_text().contains("Show the list."))
        .unwrap();
    assert!(
        shown.last_message_text().contains("- [in_progress] First"),
        "{}",
        shown.last_message_text()
    );
    let view = requests
        .iter()
        .flat_map(|r| r.tool_results())
        .map(|r| result_text(&r))
        .find(|t| t.contains("Active phase"))
        .unwrap();
    assert!(view.contains("Overall: 0/2 done"), "{view}");
    // `/goal resume` acts on the new session: its goal continues again.
    let shown_at = requests
        .iter()
        .position(|r| r.last_message_text().contains("Show the list."))
        .unwrap();
    let continued = requests[shown_at..]
        .iter()
        .filter(|r| r.last_message_text().contains("<goal_continuation>"))
        .count();
    assert!(continued > 0, "the resumed goal did not continue");
    assert_eq!(project.goal(&new).unwrap().id, goal.id);
}

#[test]
#[ignore = "needs Claude Code from npm: scripts/install-host.sh claude-code (.ci/run runs it)"]
fn a_second_session_in_the_same_directory_has_its_own_list() {
    let claude = require_claude!();
    let model = model::scripted(|request| {
        let text = request.last_message_text();
        if text.contains("List A.") {
            Step::todo(json!({"op": "init", "items": ["A1"]}))
        } else if text.contains("List B.") {
            Step::todo(json!({"op": "init", "items": ["B1", "B2"]}))
        } else {
            Step::text("Noted.")
        }
    });
    let project = Project::new(claude, &model);
    let first = new_session_id();
    let second = new_session_id();
    project.prompt(&first, "List A.").assert_hooks_succeeded();
    project.prompt(&second, "List B.").assert_hooks_succeeded();
    project.resume(&first, "Go on.").assert_hooks_succeeded();
    assert_eq!(project.todos(&first).counts().total, 1);
    assert_eq!(project.todos(&second).counts().total, 2);
    // --session-from follows the session that ran last.
    let shown = project.goalkeeper_ok(&["--session-from", "claude-code", "todo", "view"]);
    assert!(shown.contains("A1"), "{shown}");
}

#[test]
#[ignore = "needs Claude Code from npm: scripts/install-host.sh claude-code (.ci/run runs it)"]
fn the_agent_cannot_raise_its_own_budget_through_the_shell() {
    let claude = require_claude!();
    let model = model::queue(vec![
        Step::tool(
            "Bash",
            json!({"command": "goalkeeper --session-from claude-code goal budget 99999999", "description": "Raise the budget"}),
        ),
        Step::goal(json!({"op": "get"})),
        Step::text("I cannot raise it."),
    ]);
    let project = Project::new(claude, &model);
    project.set_goal("Stay within budget", Some(500000));
    let session = new_session_id();
    project
        .prompt(&session, "Raise your budget.")
        .assert_hooks_succeeded();
    let results = model.calls()[1].tool_results();
    let denied = result_text(&results[0]);
    assert!(
        denied.contains("`goalkeeper goal budget` is for the user only"),
        "{denied}"
    );
    assert_eq!(project.goal(&session).unwrap().token_budget, Some(500000));
}

/// An agent's shell never acts as the user, however the goalkeeper command
/// is spelt (`--agent` before it, `sh -c` around it, its name built by a
/// substitution, a script piped into `sh`), while the commands that act
/// as the agent run: what the model reads, and what is stored.
#[test]
#[ignore = "needs Claude Code from npm: scripts/install-host.sh claude-code (.ci/run runs it)"]
fn the_agents_shell_never_acts_as_the_user() {
    let claude = require_claude!();
    let bash = |command: &str| {
        Step::tool(
            "Bash",
            json!({"command": command, "description": "Run goalkeeper"}),
        )
    };
    let model = model::queue(vec![
        Step::todo(json!({"op": "init", "items": ["a", "b"]})),
        bash("goalkeeper --session-from claude-code --agent w1 goal drop"),
        bash("sh -c 'goalkeeper --session-from=claude-code todo release a'"),
        bash(
            r#"GOALKEEPER_AGENT=w1 goalkeeper --session-from claude-code todo apply '{"op":"start","task":"b"}'"#,
        ),
        // What could run goalkeeper out of the guard's sight.
        bash("$(which goalkeeper) --session-from claude-code goal drop"),
        bash("echo 'goalkeeper --session-from claude-code goal drop' | sh"),
        Step::text("Done."),
    ]);
    let project = Project::new(claude, &model);
    project.set_goal("Stay on the goal", Some(500000));
    let session = new_session_id();
    // Bash is allowed outright: the guard's denial is what stops the
    // user's commands.
    project
        .run(&[
            "Work on the list.",
            "--session-id",
            &session,
            "--allowedTools",
            "Bash",
        ])
        .assert_hooks_succeeded();
    // Every tool result, in order, as the model's last request holds them.
    let results = model.calls().last().unwrap().tool_results();
    assert_eq!(results.len(), 6, "{results:?}");
    let read = |i: usize| result_text(&results[i]);
    let dropped = read(1);
    assert!(
        dropped.contains("`goalkeeper goal drop` is for the user only"),
        "{dropped}"
    );
    let released = read(2);
    assert!(
        released.contains("`goalkeeper todo release` is for the user only"),
        "{released}"
    );
    // The agent's own call ran, as w1, from the shell.
    let started = read(3);
    assert!(started.contains("b [in_progress: w1]"), "{started}");
    for (i, program) in [(4, "`$(which goalkeeper)"), (5, "`sh`")] {
        let hidden = read(i);
        assert!(
            hidden.contains(&format!("cannot tell whether {program}"))
                && hidden.contains("ask the user"),
            "{hidden}"
        );
    }
    // Not dropped (the runaway guard may pause it once the script ends).
    let goal = project.goal(&session).unwrap();
    assert_ne!(goal.status.as_str(), "dropped");
    let list = project.todos(&session);
    let a = list.tasks().find(|(_, t)| t.content == "a").unwrap().1;
    assert_eq!(
        (a.status.as_str(), a.agent.as_deref()),
        ("in_progress", None)
    );
}
