//! DESIGN.md §3.4, the messages never contradict each other: when every open
//! task is blocked the continuation asks for what they need and lets the
//! agent stop (one such message per state, no runaway-guard pause, no
//! incomplete-todo reminder), and the prompts name the tools as the host
//! shows them to the model.

use crate::common::{self, phase, task};

use common::TestEnv;
use goalkeeper::goal::Goal;
use goalkeeper::prompt::Injector;
use goalkeeper::prompt::{Templates, ToolNames};
use goalkeeper::settings::Settings;
use goalkeeper::todo::{Status, TodoList};

fn at(env: &mut TestEnv, minute: i64, args: &[&str]) -> String {
    env.now_ms = common::NOW_MS + minute * 60_000;
    env.run(args)
}

#[test]
fn when_every_open_task_is_blocked_the_agent_is_asked_once_and_may_stop() {
    let mut env = TestEnv::new();
    at(&mut env, 0, &["goal", "set", "Ship the release"]);
    at(
        &mut env,
        0,
        &["todo", "init", "--item", "Tag", "--item", "Announce"],
    );
    at(&mut env, 1, &["todo", "done", "Tag"]);
    let out = at(&mut env, 1, &["continuation"]);
    assert!(out.contains("Before you act, audit the state:"), "{out}");
    // The agent blocks the last open task: that is progress, and the next
    // continuation asks for what it needs instead of for more work.
    let blocked = at(
        &mut env,
        2,
        &[
            "todo",
            "apply",
            r#"{"op":"block","task":"Announce","reason":"the user must approve the post"}"#,
        ],
    );
    assert!(
        blocked.contains("Every open task is blocked (1 task is waiting); no phase has work that can start until one is unblocked."),
        "{blocked}"
    );
    let asked = at(&mut env, 2, &["continuation"]);
    assert!(
        asked.contains("Every open task on the todo list is blocked:\n- Announce (Tasks): the user must approve the post\n"),
        "{asked}"
    );
    assert!(!asked.contains("Before you act"), "{asked}");
    // Nothing changed since: nothing more is sent, and the goal is not
    // paused (waiting for the user is not a runaway).
    for minute in 3..=7 {
        let out = at(&mut env, minute, &["continuation", "--explain"]);
        assert!(
            out.contains(
                "every open task is blocked and the agent was already asked for what they need"
            ),
            "{out}"
        );
        assert!(!out.contains("<goal_continuation>"), "{out}");
    }
    let goal = at(&mut env, 7, &["goal", "get"]);
    assert!(goal.contains("Goal #1 (active)"), "{goal}");
    // No incomplete-todo reminder either: a Stop hook is silent.
    let stop = serde_json::json!({"session_id": "default", "hook_event_name": "Stop",
        "cwd": "project", "transcript_path": "missing/transcript.jsonl"});
    let output = env
        .cmd(&["hook", "claude-code"])
        .write_stdin(stop.to_string())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    assert!(
        output.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&output.stdout)
    );
    // The user unblocks it: the work continues.
    at(&mut env, 8, &["todo", "unblock", "Announce"]);
    let out = at(&mut env, 8, &["continuation"]);
    assert!(out.contains("Before you act, audit the state:"), "{out}");
    assert_snapshot!("continuation_all_blocked", env.normalize(&asked));
}

#[test]
fn without_a_goal_an_all_blocked_list_gets_no_reminder() {
    let injector = Injector::new(Templates::builtin(), Settings::default());
    let mut blocked = task("Get the key", Status::Blocked);
    blocked.blocker = Some("waiting".into());
    let all_blocked = TodoList::new(vec![phase(
        "Setup",
        vec![task("Read", Status::Completed), blocked.clone()],
    )]);
    assert_eq!(injector.incomplete_reminder(&all_blocked, 0).unwrap(), None);
    let open = TodoList::new(vec![phase(
        "Setup",
        vec![task("Read", Status::InProgress), blocked],
    )]);
    assert!(injector.incomplete_reminder(&open, 0).unwrap().is_some());
}

#[test]
fn the_prompts_name_the_tools_as_the_host_shows_them() {
    let names = ToolNames {
        todo: "mcp__goalkeeper__todo".into(),
        goal: "mcp__goalkeeper__goal".into(),
    };
    let injector = Injector::new(Templates::builtin(), Settings::default()).with_tool_names(names);
    let plain = Injector::new(Templates::builtin(), Settings::default());
    let list = TodoList::new(vec![phase(
        "Work",
        vec![task("Write it", Status::InProgress)],
    )]);
    let goal = Goal::new(1, "Ship".into(), None, 0);
    // The host's name counts as the todo tool being active.
    let host_tools = vec![
        "mcp__goalkeeper__todo".to_owned(),
        "mcp__goalkeeper__goal".to_owned(),
    ];
    let message = injector
        .continuation(Some(&goal), &list, &host_tools, 0)
        .unwrap()
        .unwrap();
    assert!(
        message
            .content
            .contains("call `mcp__goalkeeper__goal` with op `complete`")
    );
    assert!(
        message
            .content
            .contains("keep the todo list current with `mcp__goalkeeper__todo`")
    );
    assert!(
        message
            .content
            .contains("call `mcp__goalkeeper__todo` first")
    );
    assert!(!message.content.contains("`todo`") && !message.content.contains("`goal`"));
    // With the default names, the block is the source's, byte for byte.
    let block = plain
        .todo_block(&list, &["todo".to_owned()])
        .unwrap()
        .unwrap();
    let prefixed = injector.todo_block(&list, &host_tools).unwrap().unwrap();
    assert_eq!(prefixed.replace("`mcp__goalkeeper__todo`", "`todo`"), block);
    assert!(block.contains("call `todo` first: mark done or rewrite list."));
    let reminder = injector.todo_error_reminder("bad", &list, 0).unwrap();
    assert!(
        reminder
            .content
            .contains("Your last `mcp__goalkeeper__todo` call was rejected")
    );
    let wrap_up = injector
        .budget_limit(&Goal::new(1, "Ship".into(), Some(10), 0), 0)
        .unwrap();
    assert!(
        wrap_up
            .content
            .contains("Do not call `mcp__goalkeeper__goal` with op `complete`")
    );
}

#[test]
fn the_bare_block_has_its_own_words_and_the_same_list() {
    let injector = Injector::new(Templates::builtin(), Settings::default());
    let list = TodoList::new(vec![phase(
        "Work",
        vec![task("Write it", Status::InProgress)],
    )]);
    let tools = vec!["todo".to_owned()];
    let bare = injector
        .todo_context_message(&list, &tools, 0)
        .unwrap()
        .unwrap()
        .content;
    let under_goal = injector.todo_block(&list, &tools).unwrap().unwrap();
    assert!(!bare.contains("goal"), "{bare}");
    assert!(under_goal.contains("current goal"));
    let list_part = |text: &str| text[text.find("Overall: ").unwrap()..].to_owned();
    assert_eq!(list_part(&bare), list_part(&under_goal));
}
