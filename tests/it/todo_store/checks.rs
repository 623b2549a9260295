//! Checks (DESIGN.md §13) through the store: set only by a person, run by
//! `verify` as real processes, recorded as evidence, and the gate of an
//! agent's `complete` and `done` on the files as they are now. These run
//! on both backends.

use std::path::Path;
use std::time::Duration;

use goalkeeper::check::{Evidence, RunBy, Scope};
use goalkeeper::goal::{GoalOp, GoalStatus};
use goalkeeper::store::Caller;
use goalkeeper::store::GoalCall;
use goalkeeper::todo::{Actor, Call, Op, Status};
use goalkeeper::tree::Tree;
use goalkeeper::verify::process::Limits;
use goalkeeper::verify::record::{self, ShellCall};
use goalkeeper::{SessionId, Store};

use super::common::{self, NOW, session};

/// A store and a caller that judges checks in a project directory.
struct Judged {
    db: Store,
    caller: Caller,
}

/// A project directory and a store whose caller judges checks in it.
fn project() -> (tempfile::TempDir, Judged) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("main.rs"), "fn main() {}").unwrap();
    let mut caller = Caller::default();
    caller.judge_in(Some(dir.path().to_owned()), None);
    let store = Judged {
        db: common::store(),
        caller,
    };
    (dir, store)
}

fn set(store: &mut Judged, checks: &[&str]) {
    let op = GoalOp::Set {
        objective: "Ship the parser".into(),
        budget: None,
        checks: checks.iter().map(|c| (*c).to_owned()).collect(),
    };
    let result = store
        .db
        .write(&session(), |tx| {
            tx.goal_call(GoalCall::Op(&op), Actor::User, &mut store.caller, NOW)
        })
        .unwrap();
    assert!(!result.is_error, "{}", result.text());
}

fn agent_by() -> RunBy {
    RunBy {
        actor: "agent".into(),
        agent: None,
        host: None,
    }
}

/// What `goalkeeper verify [--task]` does: the checks of `scope` run in
/// `dir`, the run recorded.
fn verify(store: &mut Judged, dir: &Path, scope: Scope, at_ms: i64) -> Evidence {
    let commands = store
        .db
        .read(&session(), |tx| tx.checks_to_run(&scope))
        .unwrap();
    assert!(!commands.is_empty());
    let limits = Limits {
        timeout: Duration::from_secs(60),
        tail_bytes: 1024,
    };
    let tree = Tree::new(dir).unwrap();
    let evidence =
        goalkeeper::verify::run_checks(scope, &commands, &tree, limits, agent_by(), at_ms)
            .unwrap()
            .evidence;
    assert!(
        store
            .db
            .write(&session(), |tx| tx.record_run(&evidence, "verify", at_ms))
            .unwrap()
    );
    evidence
}

fn agent_complete(store: &mut Judged, at_ms: i64) -> (bool, String) {
    let result = store
        .db
        .write(&session(), |tx| {
            tx.goal_call(
                GoalCall::Json(r#"{"op":"complete"}"#),
                Actor::Agent,
                &mut store.caller,
                at_ms,
            )
        })
        .unwrap();
    (result.is_error, result.text().to_owned())
}

/// An agent's todo call the gate refuses: its one error, the list and its
/// version as they were.
fn gated(store: &mut Judged, json: &str) -> String {
    let (before, version) = store.db.read(&session(), |tx| tx.todo_list()).unwrap();
    let result = common::call_by(&mut store.db, &mut store.caller, json, Actor::Agent);
    assert!(result.is_error, "{json}: {}", result.text());
    assert_eq!(
        store.db.read(&session(), |tx| tx.todo_list()).unwrap(),
        (before, version)
    );
    let first = result.text().lines().next().unwrap();
    first.strip_prefix("Errors: ").unwrap().to_owned()
}

fn goal_status(store: &mut Judged) -> GoalStatus {
    store
        .db
        .read(&session(), |tx| tx.goal())
        .unwrap()
        .unwrap()
        .status
}

#[test]
fn an_agents_complete_waits_for_every_check_to_pass_on_the_files_as_they_are() {
    let (dir, mut store) = project();
    set(&mut store, &["test -f ready", "true"]);
    let before = super::log(&mut store.db).len();
    assert_eq!(
        agent_complete(&mut store, NOW),
        (
            true,
            "Errors: `complete` of goal #1 is refused until its checks pass on the files as they are now: `test -f ready` not run yet; `true` not run yet. Run `goalkeeper verify` in your shell: it runs the checks and records the result; fix what fails, then try again".into()
        )
    );
    assert_eq!(goal_status(&mut store), GoalStatus::Active);
    let log = super::log(&mut store.db);
    assert_eq!(log.len(), before + 1, "the refusal is logged, nothing else");
    assert!(!log.last().unwrap().ok);

    verify(&mut store, dir.path(), Scope::Goal, NOW + 1_000);
    assert_eq!(
        agent_complete(&mut store, NOW + 61_000).1,
        "Errors: `complete` of goal #1 is refused until its checks pass on the files as they are now: `test -f ready` failed 1m ago (exit 1). Run `goalkeeper verify` in your shell: it runs the checks and records the result; fix what fails, then try again"
    );
    std::fs::write(dir.path().join("ready"), "yes").unwrap();
    assert!(
        agent_complete(&mut store, NOW + 62_000)
            .1
            .contains("`test -f ready` failed 1m ago (exit 1), and the files changed since")
    );
    verify(&mut store, dir.path(), Scope::Goal, NOW + 70_000);
    let (refused, text) = agent_complete(&mut store, NOW + 71_000);
    assert!(!refused, "{text}");
    assert!(
        text.starts_with("Goal #1 complete: \"Ship the parser\"."),
        "{text}"
    );
    assert_eq!(goal_status(&mut store), GoalStatus::Complete);
}

#[test]
fn an_edit_after_a_passing_run_makes_it_stale_until_the_content_is_back() {
    let (dir, mut store) = project();
    set(&mut store, &["true"]);
    verify(&mut store, dir.path(), Scope::Goal, NOW);
    std::fs::write(dir.path().join("main.rs"), "fn main() { todo!() }").unwrap();
    assert_eq!(
        agent_complete(&mut store, NOW + 120_000).1,
        "Errors: `complete` of goal #1 is refused until its checks pass on the files as they are now: `true` passed 2m ago, but the files changed since. Run `goalkeeper verify` in your shell: it runs the checks and records the result; fix what fails, then try again"
    );
    // The fingerprint is of content: the same files pass again.
    std::fs::write(dir.path().join("main.rs"), "fn main() {}").unwrap();
    assert!(!agent_complete(&mut store, NOW + 130_000).0);
}

#[test]
fn evidence_counts_only_for_the_directory_it_was_taken_in() {
    let (dir, mut store) = project();
    set(&mut store, &["true"]);
    let elsewhere = tempfile::tempdir().unwrap();
    verify(&mut store, elsewhere.path(), Scope::Goal, NOW);
    let (here, there) = (
        dir.path().canonicalize().unwrap(),
        elsewhere.path().canonicalize().unwrap(),
    );
    let (refused, text) = agent_complete(&mut store, NOW);
    assert!(refused);
    assert!(
        text.contains(&format!(
            "`true` not run in {} (verify ran it in {}, which proves nothing for another directory: run it in {})",
            here.display(),
            there.display(),
            here.display()
        )),
        "{text}"
    );
    // A directory that vanished: nothing passes, and the refusal says why.
    let gone = dir.path().join("sub");
    std::fs::create_dir(&gone).unwrap();
    store.caller.judge_in(Some(gone.clone()), None);
    verify(&mut store, &gone, Scope::Goal, NOW);
    std::fs::remove_dir(&gone).unwrap();
    let (refused, text) = agent_complete(&mut store, NOW);
    assert!(refused);
    assert!(
        text.contains(&format!(
            "(the files cannot be read: cannot read the directory {}: No such file or directory (os error 2))",
            gone.display()
        )),
        "{text}"
    );
    assert_eq!(goal_status(&mut store), GoalStatus::Active);
}

#[test]
fn a_persons_complete_goes_through_recorded_as_unverified() {
    let (_dir, mut store) = project();
    set(&mut store, &["false"]);
    let result = store
        .db
        .write(&session(), |tx| {
            tx.goal_call(
                GoalCall::Op(&GoalOp::Complete),
                Actor::User,
                &mut store.caller,
                NOW,
            )
        })
        .unwrap();
    assert!(!result.is_error);
    assert!(
        result
            .text()
            .ends_with("Recorded as unverified: `false` not run yet."),
        "{}",
        result.text()
    );
    let event = super::log(&mut store.db).pop().unwrap();
    assert_eq!(
        event.payload["unverified"],
        serde_json::json!(["`false` not run yet"])
    );
}

#[test]
fn an_agents_done_of_a_task_with_a_check_waits_for_it() {
    let (dir, mut store) = project();
    common::agent_by(
        &mut store.db,
        &mut store.caller,
        r#"{"op":"init","items":["Lexer","Parser"]}"#,
    );
    let op = Op::Check("Lexer".into(), Some("test -f lexer.rs".into()));
    let set = store
        .db
        .todo(
            &session(),
            Call::Op(&op),
            Actor::User,
            &mut store.caller,
            NOW,
        )
        .unwrap();
    assert!(!set.is_error, "{}", set.text());
    assert!(
        set.text().ends_with(
            "Task checks (`goalkeeper verify --task TASK` runs one; an agent's `done` of the task needs it to pass on the files as they are now):\n- task \"Lexer\": `test -f lexer.rs` not run yet"
        ),
        "{}",
        set.text()
    );
    assert_eq!(
        gated(&mut store, r#"{"op":"done","task":"Lexer"}"#),
        "`done` of task \"Lexer\" is refused until its checks pass on the files as they are now: task \"Lexer\": `test -f lexer.rs` not run yet. Run `goalkeeper verify --task Lexer` in your shell: it runs the checks and records the result; fix what fails, then try again"
    );
    // A bulk `done` that would complete it is refused whole.
    assert!(
        gated(&mut store, r#"{"op":"done"}"#).starts_with("`done` of task \"Lexer\" is refused")
    );
    std::fs::write(dir.path().join("lexer.rs"), "// lexer").unwrap();
    verify(&mut store, dir.path(), Scope::Task("Lexer".into()), NOW);
    let done = common::agent_by(
        &mut store.db,
        &mut store.caller,
        r#"{"op":"done","task":"Lexer"}"#,
    );
    assert!(!done.is_error, "{}", done.text());
    assert_eq!(
        common::list(&mut store.db).phases[0].tasks[0].status,
        Status::Completed
    );
}

#[test]
fn a_persons_done_goes_through_recorded_as_unverified() {
    let (_dir, mut store) = project();
    common::user(&mut store.db, r#"{"op":"init","items":["Lexer"]}"#);
    let op = Op::Check("Lexer".into(), Some("false".into()));
    store
        .db
        .todo(
            &session(),
            Call::Op(&op),
            Actor::User,
            &mut store.caller,
            NOW,
        )
        .unwrap();
    let done = common::user(&mut store.db, r#"{"op":"done","task":"Lexer"}"#);
    assert!(!done.is_error);
    let event = super::log(&mut store.db).pop().unwrap();
    assert_eq!(
        event.payload["unverified"],
        serde_json::json!(["task \"Lexer\": `false` not run yet"])
    );
}

#[test]
fn the_agents_tools_read_checks_and_never_write_them() {
    let (_dir, mut store) = project();
    set(&mut store, &["cargo test"]);
    common::user(&mut store.db, r#"{"op":"init","items":["Lexer"]}"#);
    let goal = |store: &mut Judged, json: &str| {
        let r = store
            .db
            .write(&session(), |tx| {
                tx.goal_call(GoalCall::Json(json), Actor::Agent, &mut store.caller, NOW)
            })
            .unwrap();
        (r.is_error, r.text().to_owned())
    };
    let before = store.db.read(&session(), |tx| tx.goal()).unwrap();
    assert_eq!(
        goal(&mut store, r#"{"op":"get","checks":[]}"#),
        (
            true,
            "Errors: unknown field `checks`; the accepted fields are op, objective".into()
        )
    );
    assert_eq!(
        goal(&mut store, r#"{"op":"check-add","objective":"true"}"#).1,
        "Errors: unknown op `check-add`; use one of get, create, resume, complete; field `objective` does not apply to `check-add`; only `create` takes it"
    );
    for op in [GoalOp::CheckAdd("true".into()), GoalOp::CheckRm(1)] {
        let r = store
            .db
            .write(&session(), |tx| {
                tx.goal_call(GoalCall::Op(&op), Actor::Agent, &mut store.caller, NOW)
            })
            .unwrap();
        assert_eq!(
            r.text(),
            "Errors: only the user sets or removes checks: a check is a command that runs with the user's rights, and the definition of done the work is measured by"
        );
    }
    assert_eq!(store.db.read(&session(), |tx| tx.goal()).unwrap(), before);
    // The agent's `get` reads them, and where they stand.
    let (_, text) = goal(&mut store, r#"{"op":"get"}"#);
    assert!(
        text.ends_with("Checks (`goalkeeper verify` runs them; an agent's `complete` needs each to pass on the files as they are now):\n1. `cargo test`: not run yet"),
        "{text}"
    );
    assert_eq!(
        common::error(
            &mut store.db,
            r#"{"op":"check","task":"Lexer"}"#,
            Actor::Agent
        ),
        "unknown op `check`; use one of init, start, done, drop, rm, block, unblock, append, view"
    );
    let op = Op::Check("Lexer".into(), Some("true".into()));
    let r = store
        .db
        .todo(
            &session(),
            Call::Op(&op),
            Actor::Agent,
            &mut store.caller,
            NOW,
        )
        .unwrap();
    assert!(r.text().starts_with(
        "Errors: `check` is a person's command (`goalkeeper todo check`): a check is a command that runs with the user's rights, and the definition of done the task is measured by"
    ));
    assert_eq!(common::list(&mut store.db).phases[0].tasks[0].check, None);
}

#[test]
fn a_rewrite_of_the_plan_keeps_each_tasks_check() {
    let (_dir, mut store) = project();
    common::agent_by(
        &mut store.db,
        &mut store.caller,
        r#"{"op":"init","items":["Lexer","Parser"]}"#,
    );
    for (task, check) in [("Lexer", "true"), ("Parser", "make parser")] {
        let op = Op::Check(task.into(), Some(check.into()));
        store
            .db
            .todo(
                &session(),
                Call::Op(&op),
                Actor::User,
                &mut store.caller,
                NOW,
            )
            .unwrap();
    }
    // The agent keeps Lexer and leaves Parser out: Parser stays, abandoned,
    // with its check; Lexer keeps its own.
    common::agent_by(
        &mut store.db,
        &mut store.caller,
        r#"{"op":"init","items":["Lexer","Docs"]}"#,
    );
    let list = common::list(&mut store.db);
    let check = |content: &str| {
        list.tasks()
            .find(|(_, t)| t.content == content)
            .and_then(|(_, t)| t.check.clone())
    };
    assert_eq!(check("Lexer").as_deref(), Some("true"));
    assert_eq!(check("Parser").as_deref(), Some("make parser"));
    assert_eq!(check("Docs"), None);
    // A person's undo takes back a check like any change of the list.
    let op = Op::Check("Docs".into(), Some("make docs".into()));
    store
        .db
        .todo(
            &session(),
            Call::Op(&op),
            Actor::User,
            &mut store.caller,
            NOW,
        )
        .unwrap();
    store.db.write(&session(), |tx| tx.todo_undo(NOW)).unwrap();
    let list = common::list(&mut store.db);
    assert_eq!(
        list.tasks()
            .find(|(_, t)| t.content == "Docs")
            .unwrap()
            .1
            .check,
        None
    );
    assert_eq!(
        list.tasks()
            .find(|(_, t)| t.content == "Lexer")
            .unwrap()
            .1
            .check
            .as_deref(),
        Some("true"),
        "an undo keeps the checks the version it restores had"
    );
}

#[test]
fn a_person_adds_and_removes_goal_checks_with_clear_refusals() {
    let (_dir, mut store) = project();
    let user = |store: &mut Judged, op: GoalOp| {
        let r = store
            .db
            .write(&session(), |tx| {
                tx.goal_call(GoalCall::Op(&op), Actor::User, &mut store.caller, NOW)
            })
            .unwrap();
        (r.is_error, r.text().to_owned())
    };
    assert_eq!(
        user(&mut store, GoalOp::CheckAdd("true".into())).1,
        "Errors: there is no goal to add a check to; start one with `goal set OBJECTIVE`"
    );
    set(&mut store, &["true"]);
    assert_eq!(
        user(&mut store, GoalOp::CheckAdd("true".into())).1,
        "Errors: goal #1 already has the check `true`"
    );
    assert_eq!(
        user(&mut store, GoalOp::CheckAdd("  ".into())).1,
        "Errors: the check is empty; give the shell command that must pass, such as `cargo test`"
    );
    assert_eq!(
        user(&mut store, GoalOp::CheckRm(2)).1,
        "Errors: goal #1 has 1 check; give a number from 1 to 1 (`goal check list` numbers them)"
    );
    for i in 2..=20 {
        assert!(!user(&mut store, GoalOp::CheckAdd(format!("check {i}"))).0);
    }
    assert_eq!(
        user(&mut store, GoalOp::CheckAdd("one more".into())).1,
        "Errors: goal #1 has 20 checks, the most a goal carries; remove one first (`goal check rm N`)"
    );
    let goal = store.db.read(&session(), |tx| tx.goal()).unwrap().unwrap();
    assert_eq!(goal.checks.len(), 20);
    assert_eq!(
        user(&mut store, GoalOp::CheckRm(1))
            .1
            .split(';')
            .next()
            .unwrap(),
        "Removed check 1 of goal #1, `true`"
    );
    assert_eq!(
        goal.revision + 1,
        store
            .db
            .read(&session(), |tx| tx.goal())
            .unwrap()
            .unwrap()
            .revision
    );
}

#[test]
fn a_hook_stores_the_record_verify_printed_once_and_only_for_its_session() {
    let (dir, mut store) = project();
    set(&mut store, &["true", "echo goalkeeper-evidence 1 forged"]);
    let commands = store
        .db
        .read(&session(), |tx| tx.checks_to_run(&Scope::Goal))
        .unwrap();
    let limits = Limits {
        timeout: Duration::from_secs(60),
        tail_bytes: 1024,
    };
    let tree = Tree::new(dir.path()).unwrap();
    let evidence =
        goalkeeper::verify::run_checks(Scope::Goal, &commands, &tree, limits, agent_by(), NOW)
            .unwrap()
            .evidence;
    let line = record::to_line("s", &evidence, None);
    let output = format!("{line}\ngoalkeeper verify: ...\n");
    let shell = ShellCall {
        command: "goalkeeper verify",
        output: &output,
        exit: Some(0),
        call: None,
    };
    let found = record::from_shell_call(shell, &["goalkeeper"]).unwrap();
    assert_eq!(
        store
            .db
            .write(&SessionId::parse("other").unwrap(), |tx| tx
                .record_from_hook(&found, NOW))
            .unwrap_err()
            .to_string(),
        "the record is of session s, not of this session other; it was not stored"
    );
    assert!(
        store
            .db
            .write(&session(), |tx| tx.record_from_hook(&found, NOW))
            .unwrap()
    );
    assert!(
        !store
            .db
            .write(&session(), |tx| tx.record_from_hook(&found, NOW))
            .unwrap()
    );
    assert!(
        !store
            .db
            .write(&session(), |tx| tx.record_run(&evidence, "verify", NOW))
            .unwrap()
    );
    let runs: Vec<_> = super::log(&mut store.db)
        .into_iter()
        .filter(|e| e.op.as_deref() == Some("verify"))
        .collect();
    assert_eq!(runs.len(), 1, "one run, recorded once");
    assert_eq!(runs[0].payload["via"], "hook");
    assert_eq!(runs[0].actor, "agent");
    assert!(!agent_complete(&mut store, NOW).0);
    // A record whose checks are all gone names nothing to store.
    set(&mut store, &["make"]);
    assert_eq!(
        store
            .db
            .write(&session(), |tx| tx.record_from_hook(&found, NOW))
            .unwrap_err()
            .to_string(),
        "the record names no check the session has now; it was not stored"
    );
}

#[test]
fn the_runaway_guard_counts_a_verify_that_changed_nothing_as_no_progress() {
    use goalkeeper::prompt::{Injector, Templates};
    use goalkeeper::turn::{Continuation, continuation};
    let (dir, mut store) = project();
    set(&mut store, &["test -f done"]);
    let mut settings = goalkeeper::Settings::default();
    settings.goal.continuation.max_idle = 2;
    let injector = Injector::new(Templates::builtin(), settings);
    let tools = vec!["todo".to_owned(), "goal".to_owned()];
    let next = |store: &mut Judged| {
        store
            .db
            .write(&session(), |tx| {
                continuation(tx, &store.caller, &injector, &tools, NOW)
            })
            .unwrap()
    };
    assert!(matches!(next(&mut store), Continuation::Message(_)));
    // A first run is progress; the same run again on the same files is not.
    verify(&mut store, dir.path(), Scope::Goal, NOW);
    assert!(matches!(next(&mut store), Continuation::Message(_)));
    verify(&mut store, dir.path(), Scope::Goal, NOW);
    assert!(matches!(next(&mut store), Continuation::Message(_)));
    // An edit and a run on the new files is progress again.
    std::fs::write(dir.path().join("main.rs"), "fn main() { work() }").unwrap();
    verify(&mut store, dir.path(), Scope::Goal, NOW);
    assert!(matches!(next(&mut store), Continuation::Message(_)));
    verify(&mut store, dir.path(), Scope::Goal, NOW);
    assert!(matches!(next(&mut store), Continuation::Message(_)));
    verify(&mut store, dir.path(), Scope::Goal, NOW);
    match next(&mut store) {
        Continuation::Paused(text) => assert!(
            text.contains("after 2 continuations in a row without progress"),
            "{text}"
        ),
        other => panic!("the guard did not pause: {other:?}"),
    }
    assert_eq!(goal_status(&mut store), GoalStatus::Paused);
}

#[test]
fn a_long_list_with_a_check_takes_the_whole_list_path_where_the_gate_is() {
    let (_dir, mut store) = project();
    let items: Vec<String> = (0..300).map(|i| format!("task {i:03}")).collect();
    let init = serde_json::json!({"op": "init", "items": items}).to_string();
    common::agent_by(&mut store.db, &mut store.caller, &init);
    let op = Op::Check("task 150".into(), Some("false".into()));
    store
        .db
        .todo(
            &session(),
            Call::Op(&op),
            Actor::User,
            &mut store.caller,
            NOW,
        )
        .unwrap();
    let done = r#"{"op":"done","task":"task 150"}"#;
    // The MCP server's path: a targeted call on a long list would run in
    // place, where no gate is; a list with a check keeps no shape, so it
    // runs on the whole list and meets the gate.
    let answer = store
        .db
        .todo_answer(
            &session(),
            Call::Json(done),
            Actor::Agent,
            &mut store.caller,
            NOW,
        )
        .unwrap();
    assert!(answer.is_error);
    assert!(
        answer
            .text
            .starts_with("Errors: `done` of task \"task 150\" is refused"),
        "{}",
        answer.text
    );
    let list = common::list(&mut store.db);
    let task = list
        .tasks()
        .find(|(_, t)| t.content == "task 150")
        .unwrap()
        .1;
    assert_eq!(
        (task.status, task.check.as_deref()),
        (Status::Pending, Some("false"))
    );
    // Another task of the list is done as ever.
    let other = store
        .db
        .todo_answer(
            &session(),
            Call::Json(r#"{"op":"done","task":"task 151"}"#),
            Actor::Agent,
            &mut store.caller,
            NOW,
        )
        .unwrap();
    assert!(!other.is_error, "{}", other.text);
}
