//! Several agents on one list, as real processes (DESIGN.md §2.5): each
//! call is a whole `goalkeeper --agent NAME` process, or an MCP server
//! acting as one agent. The same scenarios run on SQLite here and on the
//! PostgreSQL server of the test run (`postgres::teams`).

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::common::{TestEnv, render};
use crate::mcp::{Server, is_error};

/// The agents of the fleet and the tasks they share.
const AGENTS: usize = 8;
const TASKS: usize = 100;

/// The phases of `session`'s list, as the JSON result holds them.
fn list_of(env: &TestEnv, session: &str) -> Value {
    env.view_json(session)["details"]["phases"].clone()
}

fn task_name(i: usize) -> String {
    format!("t{i:03}")
}

/// One `todo apply` of `agent` on the session `team`, as JSON: the result
/// and whether it was rejected.
fn apply(env: &TestEnv, agent: &str, call: &Value) -> (Value, bool) {
    let call = call.to_string();
    let args = [
        "--json",
        "--session",
        "team",
        "--agent",
        agent,
        "todo",
        "apply",
        &call,
    ];
    let output = env.cmd(&args).output().expect("run goalkeeper");
    assert!(
        output.stderr.is_empty() && matches!(output.status.code(), Some(0 | 1)),
        "{}",
        render(&args, &output)
    );
    let result: Value = serde_json::from_slice(&output.stdout).expect("JSON result");
    let rejected = result["is_error"].as_bool().expect("is_error");
    assert_eq!(rejected, output.status.code() == Some(1));
    (result, rejected)
}

/// The tasks of a result's list, in order.
fn tasks(result: &Value) -> Vec<Value> {
    result["details"]["phases"]
        .as_array()
        .expect("phases")
        .iter()
        .flat_map(|p| p["tasks"].as_array().expect("tasks").clone())
        .collect()
}

/// The task `agent` holds in a result's list, if any.
fn held_by(result: &Value, agent: &str) -> Option<String> {
    let mine: Vec<String> = tasks(result)
        .iter()
        .filter(|t| t["status"] == "in_progress" && t["agent"] == agent)
        .map(|t| t["content"].as_str().unwrap().to_owned())
        .collect();
    assert!(mine.len() <= 1, "{agent} holds {mine:?}");
    mine.into_iter().next()
}

/// Every in-progress task has one holder, and no holder has two.
fn assert_one_each(result: &Value) {
    let mut holders = BTreeMap::new();
    for task in tasks(result)
        .iter()
        .filter(|t| t["status"] == "in_progress")
    {
        let holder = task["agent"].as_str().unwrap_or("main").to_owned();
        let content = task["content"].as_str().unwrap().to_owned();
        if let Some(other) = holders.insert(holder.clone(), content.clone()) {
            panic!("{holder} holds both {other} and {content}");
        }
    }
}

/// One agent's loop: claim the first pending task it sees, finish it, and
/// go on with the task `done` advances it to, until nothing is left.
/// Returns the tasks it completed.
fn work(env: &TestEnv, agent: &str) -> Vec<String> {
    let mut completed = Vec::new();
    let (mut last, _) = apply(env, agent, &json!({"op": "view"}));
    let mut mine = held_by(&last, agent);
    loop {
        match mine.take() {
            Some(task) => {
                let (result, rejected) = apply(env, agent, &json!({"op": "done", "task": task}));
                assert!(!rejected, "{agent} finishing its own {task}: {result}");
                assert_one_each(&result);
                completed.push(task);
                mine = held_by(&result, agent);
                last = result;
            }
            None => {
                let Some(pick) = tasks(&last)
                    .iter()
                    .find(|t| t["status"] == "pending")
                    .map(|t| t["content"].as_str().unwrap().to_owned())
                else {
                    return completed;
                };
                let (result, rejected) = apply(env, agent, &json!({"op": "start", "task": pick}));
                if rejected {
                    // Another agent was first: the refusal names it.
                    let text = result["content"][0]["text"].as_str().unwrap();
                    assert!(
                        text.contains("is held by agent \"w")
                            || text.contains("was completed by agent \"w"),
                        "{agent} starting {pick}: {text}"
                    );
                } else {
                    assert_eq!(held_by(&result, agent).as_deref(), Some(pick.as_str()));
                    mine = Some(pick);
                }
                assert_one_each(&result);
                last = result;
            }
        }
    }
}

/// 8 agents × a 100-task list, each looping start/done until nothing is
/// left: every task is completed exactly once, by the agent that says it
/// completed it, no task is ever held by two agents, and the list's
/// versions are contiguous.
pub(crate) fn eight_agents_share_a_hundred_tasks(env: &TestEnv) {
    let items: Vec<String> = (0..TASKS).map(task_name).collect();
    // The lead writes the plan and starts on its first task.
    let (plan, rejected) = apply(env, "w0", &json!({"op": "init", "items": items}));
    assert!(!rejected, "{plan}");
    let done: Vec<(String, Vec<String>)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..AGENTS)
            .map(|w| {
                scope.spawn(move || {
                    let agent = format!("w{w}");
                    let completed = work(env, &agent);
                    (agent, completed)
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).collect()
    });
    let mut by_task: BTreeMap<String, String> = BTreeMap::new();
    for (agent, completed) in &done {
        for task in completed {
            if let Some(other) = by_task.insert(task.clone(), agent.clone()) {
                panic!("{task} completed by both {other} and {agent}");
            }
        }
    }
    assert_eq!(by_task.keys().cloned().collect::<Vec<_>>(), items);
    let list = list_of(env, "team");
    for phase in list.as_array().unwrap() {
        for task in phase["tasks"].as_array().unwrap() {
            let content = task["content"].as_str().unwrap();
            assert_eq!(task["status"], "completed", "{task}");
            assert_eq!(task["agent"].as_str(), Some(by_task[content].as_str()));
        }
    }
    let log: Value = serde_json::from_str(&env.ok(&[
        "--json",
        "--session",
        "team",
        "todo",
        "log",
        "--limit",
        "100000",
    ]))
    .unwrap();
    let versions: Vec<i64> = log
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "todo" && e["ok"] == true)
        .map(|e| e["version"].as_i64().unwrap())
        .collect();
    let expected: Vec<i64> = (1..=versions.len() as i64).collect();
    assert_eq!(versions, expected, "contiguous versions");
    // The plan and one done per task, plus the starts that won.
    let dones: Vec<&Value> = log
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["op"] == "done" && e["ok"] == true)
        .collect();
    assert_eq!(dones.len(), TASKS);
    // The log names the agent of every change.
    for event in dones {
        let task = event["payload"]["task"].as_str().unwrap();
        assert_eq!(
            event["payload"]["agent"].as_str(),
            Some(by_task[task].as_str())
        );
    }
    let spread: Vec<usize> = done.iter().map(|(_, c)| c.len()).collect();
    assert!(
        spread.iter().filter(|&&n| n > 0).count() > 1,
        "the work was shared: {spread:?}"
    );
}

/// An agent SIGKILLed while it holds a task: before the lease runs out
/// another agent is told who holds it; after, it takes the task over.
pub(crate) fn a_killed_holder_loses_its_task_after_the_lease(env: &TestEnv) {
    env.ok(&[
        "--session",
        "team",
        "todo",
        "init",
        "--item",
        "a",
        "--item",
        "b",
    ]);
    // A person's init gives the first task to the session's own agent;
    // the team frees it.
    env.ok(&["--session", "team", "--agent", "main", "todo", "release"]);
    let now = env.now_ms.to_string();
    let mut server = Server::spawn(
        env,
        &["--session", "team", "--agent", "doomed", "mcp"],
        &[("GOALKEEPER_NOW", now.as_str())],
    );
    server.initialize();
    let result = server.call("todo", json!({"op": "start", "task": "a"}));
    assert!(!is_error(&result), "{result}");
    server.kill();
    let start_a = json!({"op": "start", "task": "a"}).to_string();
    let args = [
        "--session",
        "team",
        "--agent",
        "w1",
        "todo",
        "apply",
        &start_a,
    ];
    let before = list_of(env, "team").to_string();
    let output = env.cmd(&args).output().unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{}", render(&args, &output));
    assert!(
        text.contains("task \"a\" is held by agent \"doomed\""),
        "{text}"
    );
    assert_eq!(
        list_of(env, "team").to_string(),
        before,
        "a refused claim changes nothing"
    );
    // Ten minutes later the claim has lapsed.
    let later = (env.now_ms + 600_000).to_string();
    let output = env
        .cmd(&args)
        .env("GOALKEEPER_NOW", &later)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", render(&args, &output));
    let list = list_of(env, "team");
    let a = &list[0]["tasks"][0];
    assert_eq!(
        (a["status"].as_str(), a["agent"].as_str()),
        (Some("in_progress"), Some("w1"))
    );
}

/// A refusal of a claimed task tells the time left by the clock the
/// decision used, rounded up: a caller whose clock runs three days ahead
/// is told the lease the database's clock still grants (not "0 s"), and a
/// caller one millisecond before the end (its clock behind the
/// database's) is told 1 s. Neither refusal changes the list.
pub(crate) fn a_refusal_tells_the_time_left_by_the_clock_that_decided(env: &TestEnv) {
    const DAY: i64 = 86_400_000;
    env.ok(&[
        "--session",
        "team",
        "todo",
        "init",
        "--item",
        "a",
        "--item",
        "b",
    ]);
    env.ok(&["--session", "team", "--agent", "main", "todo", "release"]);
    let start = |agent: &str, at: i64, task: &str| {
        let call = json!({"op": "start", "task": task}).to_string();
        let args = [
            "--session",
            "team",
            "--agent",
            agent,
            "todo",
            "apply",
            &call,
        ];
        env.cmd(&args)
            .env("GOALKEEPER_NOW", at.to_string())
            .output()
            .unwrap()
    };
    let refused = |agent: &str, at: i64, task: &str| {
        let before = list_of(env, "team");
        let output = start(agent, at, task);
        assert_eq!(output.status.code(), Some(1), "{output:?}");
        assert_eq!(
            list_of(env, "team"),
            before,
            "a refused claim changes nothing"
        );
        String::from_utf8(output.stdout).unwrap()
    };
    // By the database's clock (the real one) w1's claim has ten minutes.
    let real = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    assert!(start("w1", real, "a").status.success());
    let ahead = refused("w2", real + 3 * DAY, "a");
    assert!(
        ahead.contains("the claim lapses in 10 min unless it calls again"),
        "{ahead}"
    );
    // w3's claim, made on the tests' clock (in the past: the database's
    // clock is later, so the caller's decides), 1 ms before its end.
    assert!(start("w3", env.now_ms, "b").status.success());
    let last = refused("w2", env.now_ms + 600_000 - 1, "b");
    assert!(
        last.contains("(claimed 9 min ago; the claim lapses in 1 s unless it calls again)"),
        "{last}"
    );
}

#[test]
fn a_refusal_tells_the_time_left_by_the_clock_that_decided_on_sqlite() {
    a_refusal_tells_the_time_left_by_the_clock_that_decided(&TestEnv::new());
}

#[test]
fn eight_agents_share_a_hundred_tasks_on_sqlite() {
    eight_agents_share_a_hundred_tasks(&TestEnv::new());
}

#[test]
fn a_killed_holder_loses_its_task_after_the_lease_on_sqlite() {
    a_killed_holder_loses_its_task_after_the_lease(&TestEnv::new());
}

#[test]
fn a_bad_agent_name_is_refused_and_changes_nothing() {
    let env = TestEnv::new();
    env.ok(&["todo", "init", "--item", "a"]);
    let before = list_of(&env, "default").to_string();
    for name in ["user", "a b", "x\u{1b}[31m"] {
        let args = [
            "--agent",
            name,
            "todo",
            "apply",
            r#"{"op":"done","task":"a"}"#,
        ];
        let output = env.cmd(&args).output().unwrap();
        assert_eq!(output.status.code(), Some(2), "{}", render(&args, &output));
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.starts_with("goalkeeper: invalid agent name"),
            "{stderr}"
        );
        assert!(!stderr.contains('\u{1b}'), "{stderr}");
    }
    assert_eq!(list_of(&env, "default").to_string(), before);
}

#[test]
fn release_needs_a_task_or_an_agent() {
    let env = TestEnv::new();
    env.ok(&["todo", "init", "--item", "a", "--item", "b"]);
    let output = env.cmd(&["todo", "release"]).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("needs the TASK to free, or --agent NAME"),
        "{stderr}"
    );
    let output = env.cmd(&["todo", "release", "b"]).output().unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.starts_with(
            "Errors: task \"b\" is pending, not in progress; there is no claim to release"
        ),
        "{stdout}"
    );
    env.ok(&["todo", "release", "a"]);
    let list = list_of(&env, "default");
    assert_eq!(list[0]["tasks"][0]["status"], "pending");
}

/// `todo release TASK` frees the task whoever holds it, so an agent named
/// beside it (by `--agent` or `$GOALKEEPER_AGENT`) is refused rather
/// than passed over: nothing is released.
#[test]
fn release_of_a_task_refuses_an_agent_beside_it() {
    let env = TestEnv::new();
    apply(&env, "w1", &json!({"op": "init", "items": ["a", "b"]}));
    let before = list_of(&env, "team").to_string();
    let args = ["--session", "team", "--agent", "w2", "todo", "release", "a"];
    let by_flag = render(&args, &env.cmd(&args).output().unwrap());
    let args = ["--session", "team", "todo", "release", "a"];
    let by_variable = render(
        &args,
        &env.cmd(&args)
            .env("GOALKEEPER_AGENT", "w1")
            .output()
            .unwrap(),
    );
    crate::assert_snapshot!(
        "teams_release_task_and_agent",
        format!("{by_flag}\n# with GOALKEEPER_AGENT=w1\n{by_variable}")
    );
    assert_eq!(list_of(&env, "team").to_string(), before);
    let log = env.ok(&["--session", "team", "todo", "log"]);
    assert!(!log.contains("release"), "{log}");
}

/// A refused agent name of 100 KB is echoed as a bounded excerpt that
/// says how long it was, on the command line and in the MCP server's log
/// of every call that names it.
#[test]
fn a_huge_agent_name_is_echoed_cut() {
    let env = TestEnv::new();
    env.ok(&["todo", "init", "--item", "a"]);
    let before = list_of(&env, "default").to_string();
    let huge = "w".repeat(100_000);
    let excerpt = format!("\"{}\"\u{2026} (100000 characters)", "w".repeat(128));
    let rule = "use 1-64 characters from A-Z, a-z, 0-9, '.', '_', ':' and '-' (\"main\" is the session's own agent; \"user\" is reserved)";
    let output = env
        .cmd(&[
            "--agent",
            &huge,
            "todo",
            "apply",
            r#"{"op":"done","task":"a"}"#,
        ])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        String::from_utf8(output.stderr).unwrap(),
        format!("goalkeeper: invalid agent name {excerpt}: {rule}\n")
    );
    // A Codex subagent's thread id names the agent of an MCP call.
    let mut server = Server::spawn(&env, &["mcp", "--session-from", "codex"], &[]);
    server.initialize();
    for id in 1..=2 {
        let response = server.request(
            "tools/call",
            json!({"name": "todo", "arguments": {"op": "view"}, "_meta": {
                "threadId": huge, "x-codex-turn-metadata": {"thread_source": "subagent"}}}),
        );
        assert!(!is_error(&response["result"]), "call {id}");
    }
    let log = server.stop();
    let line = format!(
        "goalkeeper mcp: invalid agent name {excerpt}: {rule}; the subagent's call acts as the main agent\n"
    );
    assert_eq!(log, format!("{line}{line}[exit status: 0]"));
    assert_eq!(list_of(&env, "default").to_string(), before);
}

/// Which agent an MCP call acts as: a server a host started
/// (`--session-from HOST`) takes the host's word in `_meta` for a
/// subagent's call, and its `--agent` for the rest; any other server acts
/// as its `--agent` whatever `_meta` says.
#[test]
fn only_a_host_started_server_takes_its_agent_from_meta() {
    let env = TestEnv::new();
    env.ok(&["todo", "init", "--item", "a", "--item", "b", "--item", "c"]);
    env.ok(&["todo", "release", "a"]);
    let subagent = json!({"threadId": "t-sub",
        "x-codex-turn-metadata": {"thread_source": "subagent"}});
    let start = |server: &mut Server, task: &str, meta: Option<&Value>| {
        let mut params = json!({"name": "todo", "arguments": {"op": "start", "task": task}});
        if let Some(meta) = meta {
            params["_meta"] = meta.clone();
        }
        let response = server.request("tools/call", params);
        assert!(!is_error(&response["result"]), "{response}");
    };
    let mut plain = Server::spawn(&env, &["--agent", "w1", "mcp"], &[]);
    plain.initialize();
    start(&mut plain, "a", Some(&subagent));
    assert_eq!(plain.stop(), "[exit status: 0]");
    let mut hosted = Server::spawn(
        &env,
        &["--agent", "w2", "mcp", "--session-from", "codex"],
        &[],
    );
    hosted.initialize();
    start(&mut hosted, "b", Some(&subagent));
    start(&mut hosted, "c", None);
    assert_eq!(hosted.stop(), "[exit status: 0]");
    let holders: Vec<(String, Value)> = list_of(&env, "default")[0]["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["content"].as_str().unwrap().to_owned(),
                t["agent"].clone(),
            )
        })
        .collect();
    assert_eq!(
        holders,
        [
            ("a".to_owned(), json!("w1")),
            ("b".to_owned(), json!("t-sub")),
            ("c".to_owned(), json!("w2")),
        ]
    );
}

#[test]
fn block_after_from_the_command_line() {
    let env = TestEnv::new();
    env.ok(&["todo", "init", "--item", "a", "--item", "b"]);
    env.ok(&["todo", "block", "b", "--after", "a"]);
    let text = env.ok(&["todo", "view"]);
    assert!(text.contains("  - b (Tasks): after a\n"), "{text}");
    let text = env.ok(&["todo", "done", "a"]);
    assert!(text.contains("  - b [in_progress] (Tasks)"), "{text}");
}

#[test]
fn watch_shows_who_holds_what_and_when_the_lease_runs_out() {
    let env = TestEnv::new();
    apply(&env, "w1", &json!({"op": "init", "items": ["a", "b", "c"]}));
    apply(&env, "w2", &json!({"op": "start", "task": "b"}));
    let later = (env.now_ms + 180_000).to_string();
    let args = ["--session", "team", "watch", "--once", "--size", "100x20"];
    let output = env
        .cmd(&args)
        .env("GOALKEEPER_NOW", &later)
        .output()
        .unwrap();
    let frame = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{}", render(&args, &output));
    assert!(frame.contains("2 in progress"), "{frame}");
    assert!(
        frame.contains("▶ [/] a  · w1 for 3m, lease 7m left"),
        "{frame}"
    );
    assert!(
        frame.contains("▶ [/] b  · w2 for 3m, lease 7m left"),
        "{frame}"
    );
    let args = ["watch", "--all", "--once", "--size", "120x20"];
    let board = String::from_utf8_lossy(&env.cmd(&args).output().unwrap().stdout).into_owned();
    let row = board
        .lines()
        .find(|l| l.contains(" team "))
        .expect("the team's row");
    assert!(board.contains(" agents "), "{board}");
    assert!(row.contains(" 2      "), "{row}");
}

/// What the agents read of a list two named agents and the session's own
/// agent work on: a tool result, the goal-mode context, the status line.
#[test]
fn what_a_team_reads() {
    let env = TestEnv::new();
    env.ok(&["--session", "team", "goal", "set", "Ship", "the", "parser"]);
    let main = |call: Value| {
        let call = call.to_string();
        env.ok(&["--session", "team", "todo", "apply", &call])
    };
    main(json!({"op": "init", "list": [
        {"phase": "Core", "items": ["Parse headers", "Parse bodies", "Write tests"]},
        {"phase": "Ship", "items": ["Release notes", "Tag the release"]},
    ]}));
    apply(
        &env,
        "sub-a1b2",
        &json!({"op": "start", "task": "Parse bodies"}),
    );
    apply(&env, "w2", &json!({"op": "start", "task": "Release notes"}));
    let (result, _) = apply(
        &env,
        "w2",
        &json!({"op": "block", "task": "Tag the release", "after": "Release notes"}),
    );
    let summary = result["content"][0]["text"].as_str().unwrap().to_owned();
    let context = env.ok(&["--session", "team", "context"]);
    let status = env
        .cmd(&["statusline"])
        .write_stdin(r#"{"session_id":"team"}"#)
        .output()
        .unwrap();
    crate::assert_snapshot!(
        "teams_what_agents_read",
        format!(
            "--- the tool result ---\n{summary}\n--- the goal-mode context ---\n{context}--- the status line ---\n{}",
            String::from_utf8_lossy(&status.stdout)
        )
    );
}

/// A named agent's refused call is its own: the session's main agent gets
/// no reminder about it at its next prompt, and the log names who made
/// it. The main agent's own refusal still reaches it.
#[test]
fn a_refused_call_reminds_only_the_agent_that_made_it() {
    let env = TestEnv::new();
    apply(&env, "w1", &json!({"op": "init", "items": ["a", "b"]}));
    apply(&env, "w1", &json!({"op": "start", "task": "b"}));
    let (_, rejected) = apply(&env, "w2", &json!({"op": "done", "task": "b"}));
    assert!(rejected);
    let prompt = |env: &TestEnv| {
        let event = json!({"hook_event_name": "UserPromptSubmit", "session_id": "team",
            "cwd": env.dir(), "prompt": "go on"});
        let output = env
            .cmd(&["hook", "claude-code"])
            .write_stdin(event.to_string())
            .output()
            .unwrap();
        assert!(output.status.success());
        String::from_utf8(output.stdout).unwrap()
    };
    let reply = prompt(&env);
    assert!(!reply.contains("todo_error"), "{reply}");
    let log = env.ok(&["--session", "team", "todo", "log"]);
    crate::assert_snapshot!("teams_refused_call_logged_as_its_agent", log);
    // The main agent's own refusal is its reminder.
    let output = env
        .cmd(&[
            "--session",
            "team",
            "todo",
            "apply",
            r#"{"op":"done","task":"b"}"#,
        ])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let reply = prompt(&env);
    assert!(
        reply.contains("Your last `mcp__goalkeeper__todo` call was rejected"),
        "{reply}"
    );
}

/// `todo export` then `todo import` through the command line: w1's task
/// stays w1's (its `done` is accepted), the `after` link still unblocks,
/// and the person's import gave the main agent nothing.
#[test]
fn export_and_import_keep_holders_and_after_links() {
    let env = TestEnv::new();
    apply(&env, "w1", &json!({"op": "init", "items": ["a", "b", "c"]}));
    apply(
        &env,
        "w1",
        &json!({"op": "block", "task": "c", "after": "b"}),
    );
    let file = env.dir().join("TODO.md");
    let file = file.to_str().unwrap();
    env.ok(&["--session", "team", "todo", "export", file]);
    let markdown = std::fs::read_to_string(file).unwrap();
    assert!(
        markdown.ends_with(
            "# Tasks\n- [/] a <!-- held-by: w1 since 2025-11-29T18:40:00Z -->\n- [ ] b\n- [!] c <!-- blocker: after b --> <!-- after: b -->\n"
        ),
        "{markdown}"
    );
    let before = list_of(&env, "team");
    env.ok(&["--session", "team", "todo", "import", file]);
    assert_eq!(list_of(&env, "team"), before);
    let (result, rejected) = apply(&env, "w1", &json!({"op": "done", "task": "a"}));
    assert!(!rejected, "{result}");
    let (result, rejected) = apply(&env, "w1", &json!({"op": "done", "task": "b"}));
    assert!(!rejected, "{result}");
    assert_eq!(held_by(&result, "w1").as_deref(), Some("c"));
}
