//! A subagent's todo calls through the real CLI (DESIGN.md §9): Claude
//! Code's one MCP server serves the main agent and its subagents, and the
//! `PreToolUse` hook tells goalkeeper which call is whose, so a subagent's
//! calls act as that agent (its `agent_id`). The subagent's responses
//! count towards the goal, and it is never continued: continuations are
//! the main agent's.

use serde_json::{Value, json};

use super::host::{Project, new_session_id, require_claude};
use super::model::{self, Request, Step};
use crate::{count, statuses};

const MAIN_PROMPT: &str = "Split the work with a helper.";
const SUB_PROMPT: &str = "SUBAGENT-MARKER: take the second task.";
const RESUME_PROMPT: &str = "How does the list stand now?";

/// The subagent's usage, the same for each of its responses: input,
/// output, cache writes.
const SUB_USAGE: (u64, u64, u64) = (3_001, 17, 5);

/// True for a request of the subagent: its conversation starts with the
/// prompt given to `Agent`.
fn of_subagent(request: &Request) -> bool {
    let first = &request.body["messages"][0]["content"];
    first.to_string().contains(SUB_PROMPT) && !request.all_text().contains(MAIN_PROMPT)
}

fn holder<'l>(list: &'l goalkeeper::todo::TodoList, task: &str) -> Option<&'l str> {
    let (p, t) = list.find_task(task).expect("the task is listed");
    list.phases[p].tasks[t].agent.as_deref()
}

#[test]
#[ignore = "needs Claude Code from npm: scripts/install-host.sh claude-code (.ci/run runs it)"]
fn a_subagents_todo_calls_act_as_the_subagent() {
    let claude = require_claude!();
    let mut main = vec![
        Step::todo(json!({"op": "init", "items": ["Main task", "Sub task", "Sub other", "Later"]}))
            .messages_usage(1000, 10, 0, 0),
        Step::tool(
            "Agent",
            json!({"description": "Take the second task", "prompt": SUB_PROMPT,
                "subagent_type": "general-purpose", "run_in_background": false}),
        )
        .messages_usage(1100, 20, 0, 0),
    ]
    .into_iter();
    // The subagent starts its task and finishes it, then starts the last
    // one and leaves it in progress.
    let (input, output, cache_write) = SUB_USAGE;
    let mut sub = vec![
        Step::todo(json!({"op": "start", "task": "Sub task"})),
        Step::todo(json!({"op": "done", "task": "Sub task"})),
        Step::todo(json!({"op": "start", "task": "Later"})),
        Step::text("Sub task done; Later started."),
    ]
    .into_iter()
    .map(move |s| s.messages_usage(input, output, cache_write, 0));
    let model = model::scripted(move |request| {
        if request.all_text().contains(MAIN_PROMPT) {
            main.next()
                .unwrap_or_else(|| Step::text("Noted.").messages_usage(1200, 30, 0, 0))
        } else if of_subagent(request) {
            sub.next().unwrap_or_else(|| Step::text("Nothing more."))
        } else {
            Step::text("ok")
        }
    });
    let project = Project::new(claude, &model);
    project.set_goal("Ship with a helper", None);
    let session = new_session_id();
    let run = project.prompt(&session, MAIN_PROMPT);
    run.assert_hooks_succeeded();
    assert!(
        run.hooks_run().iter().any(|h| h == "SubagentStop"),
        "{:?}",
        run.hooks_run()
    );
    let requests = model.calls();
    let subagent: Vec<&Request> = requests.iter().filter(|r| of_subagent(r)).collect();
    assert_eq!(subagent.len(), 4, "{:#?}", run.events);
    // Each of the subagent's todo calls was answered as a success.
    for request in &subagent[1..] {
        let result = request.tool_results().pop().expect("a tool result");
        assert_ne!(result["is_error"], true, "{result:#}");
    }

    // The store: the subagent's calls acted as the subagent, named by the
    // id Claude Code gives it (its transcript is `agent-<id>.jsonl`).
    let list = project.todos(&session);
    assert_eq!(
        statuses(&list),
        [
            ("Main task", "in_progress"),
            ("Sub task", "completed"),
            ("Sub other", "pending"),
            ("Later", "pending"),
        ]
    );
    let agent = holder(&list, "Sub task")
        .expect("the subagent's task was recorded as the main agent's")
        .to_owned();
    // While it ran, the task it started was its own, by name…
    let last = subagent.last().unwrap().all_text();
    assert!(
        last.contains(&format!("  - Later [in_progress: {agent}] (Tasks)")),
        "{last}"
    );
    // …and when it stopped, goalkeeper released it, in the log.
    assert_eq!(holder(&list, "Later"), None);
    let log: Value = serde_json::from_str(&project.goalkeeper_ok(&[
        "--session",
        &session,
        "--json",
        "todo",
        "log",
    ]))
    .unwrap();
    let released = log.as_array().unwrap().iter().any(|e| {
        e["actor"] == "goalkeeper"
            && e["op"] == "release"
            && e["payload"]["agent"] == agent.as_str()
    });
    assert!(released, "{log:#}");
    assert_eq!(
        holder(&list, "Main task"),
        None,
        "the main agent's own task"
    );
    let transcript = format!("subagents/agent-{agent}.jsonl");
    let found = walk(&project.home().join(".claude/projects"))
        .iter()
        .any(|p| p.to_string_lossy().ends_with(&transcript));
    assert!(found, "no subagent transcript names {agent}");
    // `todo view --json` shows the same.
    let view: Value = serde_json::from_str(&project.goalkeeper_ok(&[
        "--session",
        &session,
        "--json",
        "todo",
        "view",
    ]))
    .unwrap();
    let tasks = &view["details"]["phases"][0]["tasks"];
    assert_eq!(tasks[1]["agent"], agent.as_str(), "{view:#}");
    assert!(tasks[0].get("agent").is_none(), "{view:#}");

    // The goal counted every response, the subagent's included.
    let goal = project.goal(&session).unwrap();
    let sub_tokens = 4 * (input + output + cache_write);
    assert!(goal.tokens_used >= sub_tokens + 1010 + 1120, "{goal:?}");
    assert_eq!(goal.tokens_used, model.counted_usage(), "{goal:?}");

    // The main agent was continued; the subagent never was.
    let continued = requests
        .iter()
        .filter(|r| r.last_message_text().contains("<goal_continuation>"))
        .count();
    assert!(continued > 0, "the main agent was never continued");
    for request in &subagent {
        let text = request.all_text();
        assert!(
            !text.contains("<goal_continuation>") && !text.contains("Stop hook feedback"),
            "a subagent was continued: {text}"
        );
    }

    // The next prompt's context shows the subagent's work: its task
    // completed, and the one it left unfinished free again.
    project.goalkeeper_ok(&["--session", &session, "goal", "resume"]);
    let start = model.calls().len();
    let run = project.resume(&session, RESUME_PROMPT);
    run.assert_hooks_succeeded();
    let first = model.calls()[start].all_text();
    let context = &first[first.rfind("<todo_context>").expect("a todo context")..];
    assert!(context.contains("  - [completed] Sub task"), "{context}");
    assert!(context.contains("  - [pending] Later"), "{context}");
    assert!(context.contains("  - [in_progress] Main task"), "{context}");
    assert_eq!(count(context, "in_progress: "), 0, "{context}");
}

/// Every file under `dir`, recursively.
fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else {
            files.push(path);
        }
    }
    files
}
