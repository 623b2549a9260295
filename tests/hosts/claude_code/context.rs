//! The goal-mode context through the real CLI (DESIGN.md §3.4, §9): what the
//! model receives on prompt submit, resume and compaction is byte for byte
//! `goalkeeper context`, and never twice in one request; a rejected call's
//! error reminder comes once; a subagent's compaction gets no context.

use serde_json::json;

use super::host::{Project, new_session_id, require_claude};
use super::model::{self, Request, Step};

/// Replies that spend nothing, so the context (which shows the tokens
/// used) stays what `goalkeeper context` prints afterwards.
fn free(reply: Step) -> Step {
    reply.messages_usage(0, 0, 0, 0)
}

/// The clock of every goalkeeper process in the context test.
const NOW: &str = "1764441600000";
/// The tool names Claude Code shows the model; the hooks name them so.
const CLAUDE_TOOLS: &str = "mcp__goalkeeper__todo,mcp__goalkeeper__goal";

fn occurrences(haystack: &str, needle: &str) -> usize {
    haystack.matches(needle).count()
}

#[test]
#[ignore = "needs Claude Code from npm: scripts/install-host.sh claude-code (.ci/run runs it)"]
fn the_context_is_goalkeepers_own_once_per_request_on_submit_resume_and_compaction() {
    let claude = require_claude!();
    let model = model::scripted(|request| {
        if request.last_message_text().contains("Plan it.") {
            free(Step::todo(
                json!({"op": "init", "items": ["Write", "Check"]}),
            ))
        } else {
            free(Step::text("Noted."))
        }
    });
    let mut project = Project::new(claude, &model);
    // A fixed clock, so the time on the goal reads the same everywhere.
    project.env.push(("GOALKEEPER_NOW".into(), NOW.into()));
    let session = new_session_id();
    let gk = |args: &[&str]| {
        let mut all = vec!["--session", session.as_str()];
        all.extend_from_slice(args);
        let mut cmd = project.goalkeeper_cmd(&all);
        cmd.env("GOALKEEPER_NOW", NOW);
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap().trim_end().to_owned()
    };
    let first_request_of = |run_start: usize| model.calls()[run_start].all_text();

    // Prompt submit: the goal-mode context as `goalkeeper context` prints it.
    gk(&["goal", "set", "Write and check"]);
    let submitted = gk(&["context", "--active-tools", CLAUDE_TOOLS]);
    project
        .prompt(&session, "Plan it.")
        .assert_hooks_succeeded();
    assert_eq!(occurrences(&first_request_of(0), &submitted), 1);
    // Each run continues until the runaway guard pauses the goal; the user
    // resumes it before the next.
    assert_eq!(project.goal(&session).unwrap().status.as_str(), "paused");

    // Resume: the context with the list, once.
    gk(&["goal", "resume"]);
    let resumed = gk(&["context", "--active-tools", CLAUDE_TOOLS]);
    assert!(resumed.contains("<todo_context>"), "{resumed}");
    // The prompts name the tools as Claude Code shows them (DESIGN.md §3.4).
    assert!(resumed.contains("`mcp__goalkeeper__todo`"), "{resumed}");
    assert!(!resumed.contains("call `todo`"), "{resumed}");
    let start = model.calls().len();
    project.resume(&session, "Go on.").assert_hooks_succeeded();
    assert_eq!(occurrences(&first_request_of(start), &resumed), 1);

    // Compaction, then a resumed prompt: the context once, after the summary.
    gk(&["goal", "resume"]);
    let compacted = gk(&["context", "--active-tools", CLAUDE_TOOLS]);
    let start = model.calls().len();
    project
        .run(&["/compact", "--resume", &session])
        .assert_hooks_succeeded();
    assert!(
        model.calls().len() > start,
        "no compaction request was made"
    );
    let start = model.calls().len();
    project
        .resume(&session, "After compaction.")
        .assert_hooks_succeeded();
    let after = first_request_of(start);
    assert!(after.contains("After compaction."));
    assert_eq!(occurrences(&after, &compacted), 1, "{after}");
    // (The context of the first prompt, without a list, is the start of
    // the later ones, so only those are counted here.)
    for request in model.calls() {
        for context in [&resumed, &compacted] {
            assert!(
                occurrences(&request.all_text(), context) <= 1,
                "the context arrived twice in one request: {}",
                request.all_text()
            );
        }
    }
}

#[test]
#[ignore = "needs Claude Code from npm: scripts/install-host.sh claude-code (.ci/run runs it)"]
fn a_rejected_call_is_reminded_once_on_the_next_prompt() {
    let claude = require_claude!();
    let model = model::scripted(|request| {
        if request.last_message_text().contains("Finish the parser.") {
            Step::todo(json!({"op": "done", "task": "Parser"}))
        } else {
            Step::text("Noted.")
        }
    });
    let project = Project::new(claude, &model);
    let session = new_session_id();
    project.goalkeeper_ok(&[
        "--session",
        &session,
        "todo",
        "init",
        "--phase",
        "Build",
        "--item",
        "Write the parser",
    ]);
    project
        .prompt(&session, "Finish the parser.")
        .assert_hooks_succeeded();
    project.resume(&session, "Next.").assert_hooks_succeeded();
    project
        .resume(&session, "And next.")
        .assert_hooks_succeeded();
    let requests = model.calls();
    let reminded: Vec<usize> = requests
        .iter()
        .map(|r| occurrences(&r.all_text(), "<todo_error>"))
        .collect();
    // Absent before the next prompt, then in the history once.
    assert_eq!(reminded.first(), Some(&0));
    assert_eq!(reminded.last(), Some(&1), "{reminded:?}");
    assert!(reminded.iter().all(|n| *n <= 1), "{reminded:?}");
    let text = requests.last().unwrap().all_text();
    assert!(text.contains("\"Parser\" not found"), "{text}");
}

#[test]
#[ignore = "needs Claude Code from npm: scripts/install-host.sh claude-code (.ci/run runs it)"]
fn a_subagents_compaction_gets_no_goal_mode_context_and_counts_once() {
    const PROMPT: &str = "Ask a subagent to look around.";
    // Claude Code's request for a compaction's summary says so.
    const SUMMARY_ASKED: &str = "followed by a <summary> block";
    let claude = require_claude!();
    let mut main = vec![
        Step::tool(
            "Agent",
            json!({"description": "Look around", "prompt": "Look around.", "subagent_type": "general-purpose", "run_in_background": false}),
        )
        .messages_usage(1000, 10, 0, 0),
        Step::goal(json!({"op": "complete"})).messages_usage(1100, 20, 0, 0),
        Step::text("Done.").messages_usage(1200, 30, 0, 0),
    ]
    .into_iter();
    // The subagent's fourth response reports a context past the
    // auto-compact window: Claude Code compacts the subagent's
    // conversation before its next request.
    let mut calls = 0;
    let summary = Step::text("<analysis>Nothing.</analysis>\n<summary>Looked around.</summary>")
        .messages_usage(777, 7, 0, 0);
    let summary_usage = summary.usage.counted();
    let model = model::scripted(move |request| {
        let text = request.all_text();
        if text.contains(SUMMARY_ASKED) {
            summary.clone()
        } else if text.contains(PROMPT) {
            main.next().unwrap_or_else(|| Step::text("Main done."))
        } else {
            calls += 1;
            match calls {
                1..=3 => Step::todo(json!({"op": "view"})).messages_usage(300, 10, 0, 0),
                4 => Step::todo(json!({"op": "view"})).messages_usage(190_000, 10, 0, 0),
                _ => Step::text("Nothing here.").messages_usage(400, 20, 0, 0),
            }
        }
    });
    let mut project = Project::new(claude, &model);
    project
        .env
        .push(("CLAUDE_CODE_AUTO_COMPACT_WINDOW".into(), "100000".into()));
    project.set_goal("Look around", None);
    let session = new_session_id();
    let run = project.prompt(&session, PROMPT);
    run.assert_hooks_succeeded();
    // Claude Code ran the subagent's compaction: PreCompact, then
    // SessionStart with source `compact`, both naming the subagent.
    // Claude Code compacted the subagent's conversation and started it
    // again with SessionStart `compact` (which, like PreCompact, names the
    // subagent): goalkeeper added nothing.
    let starts: Vec<_> = run
        .hook_responses()
        .into_iter()
        .filter(|h| h["hook_event"] == "SessionStart")
        .collect();
    assert_eq!(starts.len(), 2, "{starts:#?}");
    assert_eq!(starts[1]["hook_name"], "SessionStart:compact");
    assert_eq!(starts[1]["stdout"], "", "{:#}", starts[1]);
    let requests = model.calls();
    let summary_at = requests
        .iter()
        .position(|r| r.all_text().contains(SUMMARY_ASKED))
        .expect("no compaction request was made");
    let of_subagent = |r: &&Request| r.body["system"].to_string().contains("cc_is_subagent=true");
    let subagent: Vec<_> = requests.iter().filter(of_subagent).collect();
    assert!(
        requests[summary_at..].iter().any(|r| of_subagent(&r)),
        "the subagent made no request after its compaction"
    );
    // The goal-mode context is the main session's: the subagent never
    // reads it, before or after its compaction.
    for request in &subagent {
        let text = request.all_text();
        assert!(!text.contains("You are in goal mode"), "{text}");
    }
    assert_eq!(
        occurrences(&requests[0].all_text(), "You are in goal mode"),
        1
    );
    // Every response counts once; the compaction's own response is
    // written to no transcript, so it cannot be counted.
    let goal = project.goal(&session).unwrap();
    assert_eq!(goal.status.as_str(), "complete");
    assert_eq!(goal.tokens_used, model.counted_usage() - summary_usage);
}
