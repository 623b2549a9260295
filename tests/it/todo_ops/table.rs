//! DESIGN.md §2.1: every row of the operations table, with each target form
//! (task, phase, neither) and both actors where the rules do not differ.
//! Where they do differ, the agent's side is in `agent_limits.rs`.

use goalkeeper::todo::Actor::{self, Agent, User};

use super::common::*;

const BOTH: [Actor; 2] = [Agent, User];

const PLANNED: &str =
    "Foundation: [/] Build core, [ ] Add edge cases | Verification: [ ] Run tests, [ ] Write docs";

// ---- init ----------------------------------------------------------------

#[test]
fn init_with_a_list_creates_every_task_pending_and_starts_the_first() {
    for actor in BOTH {
        let mut s = store();
        let result = call(
            &mut s,
            r#"{"op":"init","list":[{"phase":"A","items":["a1","a2"]},{"phase":"B","items":["b1"]}]}"#,
            actor,
        );
        assert!(!result.is_error, "{}", result.text());
        assert_eq!(result.details.op.as_deref(), Some("init"));
        assert_eq!(tasks(&mut s), "A: [/] a1, [ ] a2 | B: [ ] b1");
    }
}

#[test]
fn init_replaces_the_whole_list() {
    for actor in BOTH {
        let mut s = planned();
        agent(&mut s, r#"{"op":"done","task":"Build core"}"#);
        agent(
            &mut s,
            r#"{"op":"block","task":"Run tests","reason":"flaky CI"}"#,
        );
        call(
            &mut s,
            r#"{"op":"init","list":[{"phase":"Next","items":["n1","Run tests"]}]}"#,
            actor,
        );
        // An agent's rewrite keeps the open work it left out, abandoned
        // (DESIGN.md §2.3); the completed `Build core` goes.
        let expected = match actor {
            Actor::Agent => {
                "Next: [/] n1, [ ] Run tests | Foundation: [-] Add edge cases | Verification: [-] Write docs"
            }
            Actor::User => "Next: [/] n1, [ ] Run tests",
            Actor::Goalkeeper => unreachable!("BOTH is the agent and the user"),
        };
        assert_eq!(tasks(&mut s), expected);
    }
}

#[test]
fn init_with_flat_items_goes_to_a_phase_named_tasks() {
    let mut s = store();
    agent(&mut s, r#"{"op":"init","items":["a","b"]}"#);
    assert_eq!(tasks(&mut s), "Tasks: [/] a, [ ] b");
}

#[test]
fn init_with_flat_items_takes_an_optional_phase() {
    let mut s = store();
    user(&mut s, r#"{"op":"init","phase":"Plan","items":["a"]}"#);
    assert_eq!(tasks(&mut s), "Plan: [/] a");
}

#[test]
fn init_keeps_phases_without_items_in_place() {
    let mut s = store();
    agent(
        &mut s,
        r#"{"op":"init","list":[{"phase":"Later"},{"phase":"Now","items":["a"]},{"phase":"Empty","items":[]}]}"#,
    );
    assert_eq!(tasks(&mut s), "Later: | Now: [/] a | Empty:");
}

// ---- start ---------------------------------------------------------------

#[test]
fn start_makes_the_task_active_and_sends_the_previous_one_back_to_pending() {
    for actor in BOTH {
        let mut s = planned();
        call(&mut s, r#"{"op":"start","task":"Run tests"}"#, actor);
        assert_eq!(
            tasks(&mut s),
            "Foundation: [ ] Build core, [ ] Add edge cases | Verification: [/] Run tests, [ ] Write docs"
        );
    }
}

#[test]
fn start_clears_the_blocker_note() {
    let mut s = planned();
    agent(
        &mut s,
        r#"{"op":"block","task":"Run tests","reason":"waiting for CI"}"#,
    );
    agent(&mut s, r#"{"op":"start","task":"Run tests"}"#);
    assert_eq!(
        tasks(&mut s),
        "Foundation: [ ] Build core, [ ] Add edge cases | Verification: [/] Run tests, [ ] Write docs"
    );
}

#[test]
fn start_reopens_a_closed_task() {
    let mut s = planned();
    agent(&mut s, r#"{"op":"done","task":"Build core"}"#);
    user(&mut s, r#"{"op":"drop","task":"Write docs"}"#);
    agent(&mut s, r#"{"op":"start","task":"Build core"}"#);
    agent(&mut s, r#"{"op":"start","task":"Write docs"}"#);
    assert_eq!(
        tasks(&mut s),
        "Foundation: [ ] Build core, [ ] Add edge cases | Verification: [ ] Run tests, [/] Write docs"
    );
}

#[test]
fn start_on_the_active_task_keeps_it_active() {
    let mut s = planned();
    agent(&mut s, r#"{"op":"start","task":"Build core"}"#);
    assert_eq!(tasks(&mut s), PLANNED);
}

// ---- done ----------------------------------------------------------------

#[test]
fn done_task_completes_it_reports_it_and_advances() {
    for actor in BOTH {
        let mut s = planned();
        let result = call(&mut s, r#"{"op":"done","task":"Build core"}"#, actor);
        assert_eq!(completed(&result), ["Foundation/Build core"]);
        assert_eq!(
            tasks(&mut s),
            "Foundation: [x] Build core, [/] Add edge cases | Verification: [ ] Run tests, [ ] Write docs"
        );
    }
}

#[test]
fn done_task_out_of_order_leaves_the_active_task_alone() {
    let mut s = planned();
    agent(&mut s, r#"{"op":"done","task":"Run tests"}"#);
    assert_eq!(
        tasks(&mut s),
        "Foundation: [/] Build core, [ ] Add edge cases | Verification: [x] Run tests, [ ] Write docs"
    );
}

#[test]
fn done_task_clears_the_blocker_note() {
    let mut s = planned();
    agent(
        &mut s,
        r#"{"op":"block","task":"Run tests","reason":"flaky CI"}"#,
    );
    let result = agent(&mut s, r#"{"op":"done","task":"Run tests"}"#);
    assert_eq!(completed(&result), ["Verification/Run tests"]);
    assert_eq!(
        tasks(&mut s),
        "Foundation: [/] Build core, [ ] Add edge cases | Verification: [x] Run tests, [ ] Write docs"
    );
}

#[test]
fn done_task_completes_an_abandoned_task_when_named() {
    let mut s = planned();
    user(&mut s, r#"{"op":"drop","task":"Write docs"}"#);
    let result = agent(&mut s, r#"{"op":"done","task":"Write docs"}"#);
    assert_eq!(completed(&result), ["Verification/Write docs"]);
    assert!(tasks(&mut s).ends_with("[x] Write docs"));
}

#[test]
fn done_phase_completes_the_open_tasks_of_that_phase() {
    for actor in BOTH {
        let mut s = planned();
        let result = call(&mut s, r#"{"op":"done","phase":"Foundation"}"#, actor);
        assert_eq!(
            completed(&result),
            ["Foundation/Build core", "Foundation/Add edge cases"]
        );
        assert_eq!(
            tasks(&mut s),
            "Foundation: [x] Build core, [x] Add edge cases | Verification: [/] Run tests, [ ] Write docs"
        );
    }
}

#[test]
fn done_without_target_completes_every_task() {
    for actor in BOTH {
        let mut s = planned();
        let result = call(&mut s, r#"{"op":"done"}"#, actor);
        assert_eq!(completed(&result).len(), 4);
        assert_eq!(
            tasks(&mut s),
            "Foundation: [x] Build core, [x] Add edge cases | Verification: [x] Run tests, [x] Write docs"
        );
    }
}

#[test]
fn bulk_done_completes_blocked_tasks_but_never_closed_ones() {
    // A bulk `done` completes the open tasks in scope (blocked is open);
    // abandoned work is not turned into finished work.
    for body in [r#"{"op":"done","phase":"Work"}"#, r#"{"op":"done"}"#] {
        let mut s = mixed();
        let result = agent(&mut s, body);
        let mut expected = vec!["Work/c", "Work/d", "Work/e"];
        if body == r#"{"op":"done"}"# {
            expected.push("Other/o");
        }
        assert_eq!(completed(&result), expected, "{body}");
        let after = tasks(&mut s);
        assert!(
            after.starts_with(
                "Work: [x] a, [-] b, [x] c, [x] d, [x] e, [-] f (dropped by user) | Other: "
            ),
            "{body}: {after}"
        );
    }
}

#[test]
fn done_on_a_completed_task_reports_nothing_new() {
    let mut s = planned();
    agent(&mut s, r#"{"op":"done","task":"Build core"}"#);
    let again = agent(&mut s, r#"{"op":"done","task":"Build core"}"#);
    assert!(again.details.completed_tasks.is_empty());
    let all = agent(&mut s, r#"{"op":"done","phase":"Foundation"}"#);
    assert_eq!(completed(&all), ["Foundation/Add edge cases"]);
}

// ---- drop ----------------------------------------------------------------

#[test]
fn user_drop_task_abandons_it_and_stamps_the_user() {
    let mut s = planned();
    user(&mut s, r#"{"op":"drop","task":"Add edge cases"}"#);
    assert_eq!(
        tasks(&mut s),
        "Foundation: [/] Build core, [-] Add edge cases (dropped by user) | Verification: [ ] Run tests, [ ] Write docs"
    );
}

#[test]
fn user_drop_task_abandons_it_whatever_its_status() {
    let mut s = mixed();
    for task in ["a", "c", "d"] {
        user(&mut s, &format!(r#"{{"op":"drop","task":"{task}"}}"#));
    }
    assert_eq!(
        tasks(&mut s),
        "Work: [-] a (dropped by user), [-] b, [-] c (dropped by user), [-] d (dropped by user), [/] e, [-] f (dropped by user) | Other: [ ] o"
    );
}

#[test]
fn user_drop_phase_abandons_everything_but_finished_work() {
    let mut s = mixed();
    user(&mut s, r#"{"op":"drop","phase":"Work"}"#);
    assert_eq!(
        tasks(&mut s),
        "Work: [x] a, [-] b (dropped by user), [-] c (dropped by user), [-] d (dropped by user), [-] e (dropped by user), [-] f (dropped by user) | Other: [/] o"
    );
}

#[test]
fn user_drop_without_target_abandons_every_unfinished_task() {
    let mut s = mixed();
    user(&mut s, r#"{"op":"drop"}"#);
    assert_eq!(
        tasks(&mut s),
        "Work: [x] a, [-] b (dropped by user), [-] c (dropped by user), [-] d (dropped by user), [-] e (dropped by user), [-] f (dropped by user) | Other: [-] o (dropped by user)"
    );
}

#[test]
fn drop_of_the_active_task_advances() {
    for actor in BOTH {
        let mut s = planned();
        call(&mut s, r#"{"op":"drop","task":"Build core"}"#, actor);
        assert!(
            tasks(&mut s).contains("[/] Add edge cases"),
            "{actor}: {}",
            tasks(&mut s)
        );
    }
}

// ---- rm ------------------------------------------------------------------

#[test]
fn user_rm_task_deletes_it() {
    let mut s = planned();
    user(&mut s, r#"{"op":"rm","task":"Add edge cases"}"#);
    assert_eq!(
        tasks(&mut s),
        "Foundation: [/] Build core | Verification: [ ] Run tests, [ ] Write docs"
    );
}

#[test]
fn user_rm_of_the_active_task_advances() {
    let mut s = planned();
    user(&mut s, r#"{"op":"rm","task":"Build core"}"#);
    assert_eq!(
        tasks(&mut s),
        "Foundation: [/] Add edge cases | Verification: [ ] Run tests, [ ] Write docs"
    );
}

#[test]
fn user_rm_phase_empties_it() {
    let mut s = planned();
    user(&mut s, r#"{"op":"rm","phase":"Foundation"}"#);
    assert_eq!(
        tasks(&mut s),
        "Foundation: | Verification: [/] Run tests, [ ] Write docs"
    );
}

#[test]
fn user_rm_without_target_empties_every_phase() {
    let mut s = mixed();
    let result = user(&mut s, r#"{"op":"rm"}"#);
    assert_eq!(tasks(&mut s), "Work: | Other:");
    assert!(list(&mut s).is_empty());
    assert_eq!(result.text(), "Todo list cleared.");
}

// The agent's `rm` (abandon instead of delete) is in agent_limits.rs.

// ---- block ---------------------------------------------------------------

#[test]
fn block_task_with_reason_sets_the_note_and_advances() {
    for actor in BOTH {
        let mut s = planned();
        call(
            &mut s,
            r#"{"op":"block","task":"Build core","reason":"waiting for review"}"#,
            actor,
        );
        assert_eq!(
            tasks(&mut s),
            "Foundation: [!] Build core (waiting for review), [/] Add edge cases | Verification: [ ] Run tests, [ ] Write docs"
        );
    }
}

#[test]
fn block_without_reason_has_no_note() {
    let mut s = planned();
    agent(&mut s, r#"{"op":"block","task":"Run tests"}"#);
    assert_eq!(
        tasks(&mut s),
        "Foundation: [/] Build core, [ ] Add edge cases | Verification: [!] Run tests, [ ] Write docs"
    );
}

#[test]
fn block_without_reason_keeps_the_note_of_a_blocked_task() {
    let mut s = mixed();
    agent(&mut s, r#"{"op":"block","task":"c"}"#);
    assert_eq!(tasks(&mut s), MIXED);
}

#[test]
fn block_with_reason_replaces_the_note_of_a_blocked_task() {
    let mut s = mixed();
    agent(&mut s, r#"{"op":"block","task":"c","reason":"new reason"}"#);
    assert_eq!(tasks(&mut s), MIXED.replace("(waiting)", "(new reason)"));
}

#[test]
fn block_phase_blocks_every_open_task_and_leaves_closed_ones() {
    for actor in BOTH {
        let mut s = mixed();
        call(
            &mut s,
            r#"{"op":"block","phase":"Work","reason":"frozen"}"#,
            actor,
        );
        assert_eq!(
            tasks(&mut s),
            "Work: [x] a, [-] b, [!] c (frozen), [!] d (frozen), [!] e (frozen), [-] f (dropped by user) | Other: [/] o"
        );
    }
}

#[test]
fn block_of_a_closed_task_changes_nothing() {
    let mut s = mixed();
    for task in ["a", "b", "f"] {
        agent(
            &mut s,
            &format!(r#"{{"op":"block","task":"{task}","reason":"x"}}"#),
        );
    }
    assert_eq!(tasks(&mut s), MIXED);
}

#[test]
fn block_note_is_one_line() {
    let mut s = planned();
    agent(
        &mut s,
        "{\"op\":\"block\",\"task\":\"Run tests\",\"reason\":\"  waiting\\n on   the\\tAPI\\r\\nkey  \"}",
    );
    assert!(
        tasks(&mut s).contains("[!] Run tests (waiting on the API key)"),
        "{}",
        tasks(&mut s)
    );
}

// ---- unblock -------------------------------------------------------------

#[test]
fn unblock_task_makes_it_pending_and_clears_the_note() {
    for actor in BOTH {
        let mut s = mixed();
        call(&mut s, r#"{"op":"unblock","task":"c"}"#, actor);
        assert_eq!(tasks(&mut s), MIXED.replace("[!] c (waiting)", "[ ] c"));
    }
}

#[test]
fn unblock_promotes_the_task_when_nothing_is_active() {
    let mut s = store();
    agent(&mut s, r#"{"op":"init","items":["only"]}"#);
    agent(&mut s, r#"{"op":"block","task":"only","reason":"later"}"#);
    assert_eq!(tasks(&mut s), "Tasks: [!] only (later)");
    agent(&mut s, r#"{"op":"unblock","task":"only"}"#);
    assert_eq!(tasks(&mut s), "Tasks: [/] only");
}

#[test]
fn unblock_phase_unblocks_every_blocked_task_of_it() {
    let mut s = planned();
    agent(
        &mut s,
        r#"{"op":"block","phase":"Verification","reason":"no CI"}"#,
    );
    agent(
        &mut s,
        r#"{"op":"block","task":"Add edge cases","reason":"spec"}"#,
    );
    user(&mut s, r#"{"op":"unblock","phase":"Verification"}"#);
    assert_eq!(
        tasks(&mut s),
        "Foundation: [/] Build core, [!] Add edge cases (spec) | Verification: [ ] Run tests, [ ] Write docs"
    );
}

#[test]
fn unblock_of_a_task_that_is_not_blocked_changes_nothing() {
    let mut s = mixed();
    for task in ["a", "b", "d", "e", "f"] {
        agent(&mut s, &format!(r#"{{"op":"unblock","task":"{task}"}}"#));
    }
    assert_eq!(tasks(&mut s), MIXED);
}

// ---- append --------------------------------------------------------------

#[test]
fn append_adds_pending_tasks_to_an_existing_phase() {
    for actor in BOTH {
        let mut s = planned();
        call(
            &mut s,
            r#"{"op":"append","phase":"Foundation","items":["Refactor","Benchmark"]}"#,
            actor,
        );
        assert_eq!(
            tasks(&mut s),
            "Foundation: [/] Build core, [ ] Add edge cases, [ ] Refactor, [ ] Benchmark | Verification: [ ] Run tests, [ ] Write docs"
        );
    }
}

#[test]
fn append_creates_a_missing_phase_at_the_end() {
    let mut s = planned();
    agent(
        &mut s,
        r#"{"op":"append","phase":"Release","items":["Tag","Publish"]}"#,
    );
    assert_eq!(
        tasks(&mut s),
        format!("{PLANNED} | Release: [ ] Tag, [ ] Publish")
    );
}

#[test]
fn append_to_an_empty_list_starts_the_first_task() {
    let mut s = store();
    agent(&mut s, r#"{"op":"append","phase":"P","items":["a","b"]}"#);
    assert_eq!(tasks(&mut s), "P: [/] a, [ ] b");
}

#[test]
fn append_after_everything_is_closed_starts_the_new_task() {
    let mut s = planned();
    agent(&mut s, r#"{"op":"done"}"#);
    agent(
        &mut s,
        r#"{"op":"append","phase":"Foundation","items":["More"]}"#,
    );
    assert!(tasks(&mut s).contains("[x] Add edge cases, [/] More"));
}

// Duplicate contents in `append` are in errors.rs.

// ---- view ----------------------------------------------------------------

#[test]
fn view_shows_the_list_and_changes_nothing() {
    for actor in BOTH {
        let mut s = planned();
        let log = s.read(&session(), |tx| tx.event_log(100)).unwrap();
        let result = call(&mut s, r#"{"op":"view"}"#, actor);
        assert!(!result.is_error);
        assert_eq!(result.details.op.as_deref(), Some("view"));
        assert_eq!(result.details.version, 1);
        assert_eq!(result.details.phases, list(&mut s));
        assert_eq!(version(&mut s), 1);
        assert_eq!(s.read(&session(), |tx| tx.event_log(100)).unwrap(), log);
        assert_eq!(tasks(&mut s), PLANNED);
    }
}

#[test]
fn view_of_an_empty_list() {
    let mut s = store();
    let result = agent(&mut s, r#"{"op":"view"}"#);
    assert_eq!(result.text(), "Todo list is empty.");
    assert_eq!(result.details.version, 0);
    assert!(
        s.admin().sessions().unwrap().is_empty(),
        "view created a session"
    );
}
