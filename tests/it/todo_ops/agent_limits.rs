//! DESIGN.md §2.3: an agent must not be able to make unfinished work disappear.
//! Each rule is checked against the user's behaviour for the same call.

use goalkeeper::todo::DroppedBy;

use super::common::*;

// ---- agent rm abandons ---------------------------------------------------

#[test]
fn agent_rm_task_abandons_open_work_instead_of_deleting_it() {
    let mut s = mixed();
    agent(&mut s, r#"{"op":"rm","task":"d"}"#);
    agent(&mut s, r#"{"op":"rm","task":"o"}"#);
    assert_eq!(
        tasks(&mut s),
        "Work: [x] a, [-] b, [!] c (waiting), [-] d, [/] e, [-] f (dropped by user) | Other: [-] o"
    );
}

#[test]
fn agent_rm_task_leaves_completed_blocked_and_abandoned_tasks_alone() {
    let mut s = mixed();
    for task in ["a", "b", "c", "f"] {
        let result = agent(&mut s, &format!(r#"{{"op":"rm","task":"{task}"}}"#));
        assert!(!result.is_error);
    }
    assert_eq!(tasks(&mut s), MIXED);
}

#[test]
fn agent_rm_phase_abandons_only_its_open_unblocked_tasks() {
    let mut s = mixed();
    agent(&mut s, r#"{"op":"rm","phase":"Work"}"#);
    assert_eq!(
        tasks(&mut s),
        "Work: [x] a, [-] b, [!] c (waiting), [-] d, [-] e, [-] f (dropped by user) | Other: [/] o"
    );
}

#[test]
fn agent_rm_without_target_keeps_every_task_in_the_list() {
    let mut s = mixed();
    let count = list(&mut s).task_count();
    let result = agent(&mut s, r#"{"op":"rm"}"#);
    assert_eq!(
        tasks(&mut s),
        "Work: [x] a, [-] b, [!] c (waiting), [-] d, [-] e, [-] f (dropped by user) | Other: [-] o"
    );
    assert_eq!(list(&mut s).task_count(), count);
    assert_ne!(result.text(), "Todo list cleared.");
}

#[test]
fn user_rm_deletes_what_agent_rm_keeps() {
    let mut s = mixed();
    user(&mut s, r#"{"op":"rm","task":"a"}"#);
    user(&mut s, r#"{"op":"rm","task":"c"}"#);
    user(&mut s, r#"{"op":"rm","task":"f"}"#);
    assert_eq!(tasks(&mut s), "Work: [-] b, [/] d, [ ] e | Other: [ ] o");
    user(&mut s, r#"{"op":"rm","phase":"Work"}"#);
    assert_eq!(tasks(&mut s), "Work: | Other: [/] o");
}

// ---- agent drop ----------------------------------------------------------

#[test]
fn agent_drop_phase_spares_completed_blocked_and_user_dropped_tasks() {
    let mut s = mixed();
    agent(&mut s, r#"{"op":"drop","phase":"Work"}"#);
    assert_eq!(
        tasks(&mut s),
        "Work: [x] a, [-] b, [!] c (waiting), [-] d, [-] e, [-] f (dropped by user) | Other: [/] o"
    );
}

#[test]
fn agent_drop_without_target_spares_the_same_tasks_everywhere() {
    let mut s = mixed();
    agent(&mut s, r#"{"op":"drop"}"#);
    assert_eq!(
        tasks(&mut s),
        "Work: [x] a, [-] b, [!] c (waiting), [-] d, [-] e, [-] f (dropped by user) | Other: [-] o"
    );
    assert_eq!(in_progress_count(&list(&mut s)), 0);
}

#[test]
fn agent_drop_task_abandons_it_whatever_its_status() {
    let mut s = mixed();
    for task in ["a", "c", "d", "e"] {
        agent(&mut s, &format!(r#"{{"op":"drop","task":"{task}"}}"#));
    }
    assert_eq!(
        tasks(&mut s),
        "Work: [-] a, [-] b, [-] c, [-] d, [-] e, [-] f (dropped by user) | Other: [/] o"
    );
}

#[test]
fn agent_drop_task_keeps_the_user_stamp_of_a_user_dropped_task() {
    let mut s = mixed();
    agent(&mut s, r#"{"op":"drop","task":"f"}"#);
    assert_eq!(tasks(&mut s), MIXED);
}

#[test]
fn agent_drop_never_stamps_the_user() {
    let mut s = planned();
    agent(&mut s, r#"{"op":"drop","task":"Write docs"}"#);
    agent(&mut s, r#"{"op":"drop","phase":"Foundation"}"#);
    let list = list(&mut s);
    assert!(list.tasks().all(|(_, t)| t.dropped_by.is_none()));
}

#[test]
fn user_drop_stamps_dropped_by_user() {
    let mut s = planned();
    let result = user(&mut s, r#"{"op":"drop","task":"Write docs"}"#);
    let (p, t) = result.details.phases.find_task("Write docs").unwrap();
    assert_eq!(
        result.details.phases.phases[p].tasks[t].dropped_by,
        Some(DroppedBy::User)
    );
    let json = serde_json::to_string(&result.details.phases).unwrap();
    assert!(
        json.contains(r#"{"content":"Write docs","status":"abandoned","dropped_by":"user"}"#),
        "{json}"
    );
}

// ---- agent init keeps what it leaves out, as abandoned --------------------

#[test]
fn agent_init_keeps_abandoned_and_open_tasks_left_out_of_the_new_list() {
    let mut s = planned();
    agent(&mut s, r#"{"op":"drop","task":"Add edge cases"}"#);
    agent(&mut s, r#"{"op":"drop","task":"Write docs"}"#);
    agent(
        &mut s,
        r#"{"op":"init","list":[{"phase":"Foundation","items":["Build core v2"]},{"phase":"Release","items":["Tag"]}]}"#,
    );
    // `Foundation` exists: the left-out tasks join it, after the new ones;
    // the open `Build core` and `Run tests` are kept abandoned too.
    // `Verification` does not exist: it comes back at the end.
    assert_eq!(
        tasks(&mut s),
        "Foundation: [/] Build core v2, [-] Build core, [-] Add edge cases | Release: [ ] Tag | Verification: [-] Run tests, [-] Write docs"
    );
}

#[test]
fn agent_init_with_flat_items_keeps_them_too() {
    let mut s = planned();
    agent(&mut s, r#"{"op":"rm","task":"Run tests"}"#);
    agent(&mut s, r#"{"op":"init","items":["Fresh start"]}"#);
    assert_eq!(
        tasks(&mut s),
        "Tasks: [/] Fresh start | Foundation: [-] Build core, [-] Add edge cases | Verification: [-] Run tests, [-] Write docs"
    );
}

#[test]
fn agent_init_relisting_an_abandoned_task_restarts_it_once() {
    let mut s = planned();
    agent(&mut s, r#"{"op":"drop","task":"Add edge cases"}"#);
    agent(
        &mut s,
        r#"{"op":"init","list":[{"phase":"Again","items":["Add edge cases"]}]}"#,
    );
    assert_eq!(
        tasks(&mut s),
        "Again: [/] Add edge cases | Foundation: [-] Build core | Verification: [-] Run tests, [-] Write docs"
    );
}

#[test]
fn agent_init_keeps_open_work_but_not_completed_or_user_dropped_tasks() {
    let mut s = mixed();
    let result = agent(&mut s, r#"{"op":"init","items":["z"]}"#);
    // `b` was abandoned by an agent; `c` (blocked), `d`, `e` and `o` were
    // open: all stay on record as abandoned. `a` was completed and `f`
    // dropped by the user: the rewrite lets them go.
    assert_eq!(
        tasks(&mut s),
        "Tasks: [/] z | Work: [-] b, [-] c, [-] d, [-] e | Other: [-] o"
    );
    let (p, t) = result.details.phases.find_task("c").unwrap();
    assert_eq!(result.details.phases.phases[p].tasks[t].blocker, None);
    assert!(
        result
            .text()
            .contains("Work:\n  - [-] b\n  - [-] c\n  - [-] d\n  - [-] e\nOther:\n  - [-] o"),
        "{}",
        result.text()
    );
}

#[test]
fn user_init_keeps_nothing() {
    let mut s = mixed();
    user(&mut s, r#"{"op":"init","items":["z"]}"#);
    assert_eq!(tasks(&mut s), "Tasks: [/] z");
}

#[test]
fn kept_tasks_count_toward_the_task_limit() {
    let mut s = store();
    agent(&mut s, r#"{"op":"init","items":["old"]}"#);
    agent(&mut s, r#"{"op":"drop","task":"old"}"#);
    let items = |n: usize| {
        (0..n)
            .map(|i| format!("\"t{i}\""))
            .collect::<Vec<_>>()
            .join(",")
    };
    agent(
        &mut s,
        &format!(r#"{{"op":"init","items":[{}]}}"#, items(9_999)),
    );
    assert_eq!(list(&mut s).task_count(), 10_000);
    assert_eq!(
        error(
            &mut s,
            &format!(r#"{{"op":"init","items":["new",{}]}}"#, items(9_999)),
            goalkeeper::todo::Actor::Agent
        ),
        "the list would hold 10001 tasks; the limit is 10000, so close out or remove tasks first"
    );
}
