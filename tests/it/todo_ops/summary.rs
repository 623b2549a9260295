//! DESIGN.md §2.4: the summary text, asserted as whole strings.

use goalkeeper::todo::Actor::{Agent, User};
use goalkeeper::todo::{SummaryKind, TodoList, summary};

use super::common::*;

/// The example of DESIGN.md §2.4, with the `Setup` phase listed last.
fn example() -> goalkeeper::Store {
    let mut s = store();
    agent(
        &mut s,
        r#"{"op":"init","list":[
            {"phase":"Foundation","items":["Build core","Add edge cases"]},
            {"phase":"Verification","items":["Run tests"]},
            {"phase":"Setup","items":["Get API key"]}]}"#,
    );
    agent(&mut s, r#"{"op":"done","task":"Build core"}"#);
    s
}

const EXAMPLE: &str = "\
Remaining (2):
  - Add edge cases [in_progress] (Foundation)
  - Run tests [pending] (Verification)
Blocked (1):
  - Get API key (Setup): waiting for credentials
Overall: 1/4 done, 3 open.
Active phase 1/3 \"Foundation\" (1/2 done).
Foundation:
  - [x] Build core
  - [/] Add edge cases
Verification:
  - [ ] Run tests
Setup:
  - [!] Get API key";

#[test]
fn the_summary_lists_remaining_blocked_counts_active_phase_and_the_list() {
    let mut s = example();
    let result = agent(
        &mut s,
        r#"{"op":"block","task":"Get API key","reason":"waiting for credentials"}"#,
    );
    assert_eq!(result.text(), EXAMPLE);
    let view = user(&mut s, r#"{"op":"view"}"#);
    assert_eq!(view.text(), EXAMPLE);
}

#[test]
fn errors_come_first_and_the_list_is_shown_as_before() {
    let mut s = example();
    agent(
        &mut s,
        r#"{"op":"block","task":"Get API key","reason":"waiting for credentials"}"#,
    );
    let result = call(&mut s, r#"{"op":"done","task":"Ship"}"#, Agent);
    assert_eq!(
        result.text(),
        format!(
            "Errors: task \"Ship\" not found; tasks are matched by their exact content (see `view`)\n{EXAMPLE}"
        )
    );
}

#[test]
fn several_errors_are_joined_on_one_line() {
    let mut s = example();
    let result = call(&mut s, r#"{"op":"done","task":true,"x":2}"#, User);
    assert!(
        result.text().starts_with(
            "Errors: unknown field `x`; the accepted fields are op, list, task, phase, items, reason, after, page; \
             field `task` must be a string, not a boolean\nRemaining (3):\n"
        ),
        "{}",
        result.text()
    );
}

#[test]
fn a_blocked_task_without_a_note_and_an_abandoned_task() {
    let mut s = example();
    agent(&mut s, r#"{"op":"block","task":"Get API key"}"#);
    let result = agent(&mut s, r#"{"op":"drop","task":"Run tests"}"#);
    assert_eq!(
        result.text(),
        "\
Remaining (1):
  - Add edge cases [in_progress] (Foundation)
Blocked (1):
  - Get API key (Setup)
Overall: 2/4 done, 2 open.
Active phase 1/3 \"Foundation\" (1/2 done). Later phases already have closed tasks; the pointer stays on this earliest open phase, and nothing was reopened.
Foundation:
  - [x] Build core
  - [/] Add edge cases
Verification:
  - [-] Run tests
Setup:
  - [!] Get API key"
    );
}

#[test]
fn the_active_phase_line_says_nothing_was_reopened_when_later_work_is_closed() {
    let mut s = planned();
    let result = agent(&mut s, r#"{"op":"done","task":"Run tests"}"#);
    assert_eq!(
        result.text(),
        "\
Remaining (3):
  - Build core [in_progress] (Foundation)
  - Add edge cases [pending] (Foundation)
  - Write docs [pending] (Verification)
Overall: 1/4 done, 3 open.
Active phase 1/2 \"Foundation\" (0/2 done). Later phases already have closed tasks; the pointer stays on this earliest open phase, and nothing was reopened.
Foundation:
  - [/] Build core
  - [ ] Add edge cases
Verification:
  - [x] Run tests
  - [ ] Write docs"
    );
}

#[test]
fn the_active_phase_moves_on_when_a_phase_is_closed() {
    let mut s = planned();
    let result = agent(&mut s, r#"{"op":"done","phase":"Foundation"}"#);
    assert_eq!(
        result.text(),
        "\
Remaining (2):
  - Run tests [in_progress] (Verification)
  - Write docs [pending] (Verification)
Overall: 2/4 done, 2 open.
Active phase 2/2 \"Verification\" (0/2 done).
Foundation:
  - [x] Build core
  - [x] Add edge cases
Verification:
  - [/] Run tests
  - [ ] Write docs"
    );
}

#[test]
fn the_active_phase_is_where_work_can_happen_and_blocked_phases_are_named() {
    let mut s = planned();
    agent(
        &mut s,
        r#"{"op":"block","phase":"Foundation","reason":"spec"}"#,
    );
    let result = agent(&mut s, r#"{"op":"view"}"#);
    assert_eq!(
        result.text(),
        "\
Remaining (2):
  - Run tests [in_progress] (Verification)
  - Write docs [pending] (Verification)
Blocked (2):
  - Build core (Foundation): spec
  - Add edge cases (Foundation): spec
Overall: 0/4 done, 4 open.
Active phase 2/2 \"Verification\" (0/2 done). Earlier phases still open: \"Foundation\" (2 blocked).
Foundation:
  - [!] Build core
  - [!] Add edge cases
Verification:
  - [/] Run tests
  - [ ] Write docs"
    );
}

#[test]
fn when_every_task_is_closed_no_phase_is_active() {
    let mut s = planned();
    agent(&mut s, r#"{"op":"drop","task":"Write docs"}"#);
    let result = agent(&mut s, r#"{"op":"done"}"#);
    assert_eq!(
        result.text(),
        "\
Overall: 4/4 done, 0 open.
Every task is closed; no phase is active.
Foundation:
  - [x] Build core
  - [x] Add edge cases
Verification:
  - [x] Run tests
  - [-] Write docs"
    );
}

#[test]
fn an_empty_phase_is_listed_by_name() {
    let mut s = planned();
    let result = user(&mut s, r#"{"op":"rm","phase":"Foundation"}"#);
    assert_eq!(
        result.text(),
        "\
Remaining (2):
  - Run tests [in_progress] (Verification)
  - Write docs [pending] (Verification)
Overall: 0/2 done, 2 open.
Active phase 2/2 \"Verification\" (0/2 done).
Foundation:
Verification:
  - [/] Run tests
  - [ ] Write docs"
    );
}

#[test]
fn task_text_stays_on_one_line() {
    let mut s = store();
    let result = agent(
        &mut s,
        r#"{"op":"init","list":[{"phase":"Odd\tphase","items":["line one\nline two","bell\u0007 & <tag>"]}]}"#,
    );
    assert_eq!(
        result.text(),
        "\
Remaining (2):
  - line one\\nline two [in_progress] (Odd\\tphase)
  - bell  & <tag> [pending] (Odd\\tphase)
Overall: 0/2 done, 2 open.
Active phase 1/1 \"Odd\\tphase\" (0/2 done).
Odd\\tphase:
  - [/] line one\\nline two
  - [ ] bell  & <tag>"
    );
}

// ---- empty lists ---------------------------------------------------------

#[test]
fn an_empty_list_reads_empty_on_view() {
    let mut s = store();
    assert_eq!(
        agent(&mut s, r#"{"op":"view"}"#).text(),
        "Todo list is empty."
    );
    user(&mut s, r#"{"op":"init","items":["a"]}"#);
    user(&mut s, r#"{"op":"rm"}"#);
    assert_eq!(
        user(&mut s, r#"{"op":"view"}"#).text(),
        "Todo list is empty."
    );
}

#[test]
fn an_empty_list_reads_cleared_after_a_mutation() {
    let mut s = planned();
    assert_eq!(user(&mut s, r#"{"op":"rm"}"#).text(), "Todo list cleared.");
    let mut s = store();
    user(&mut s, r#"{"op":"init","items":["a"]}"#);
    assert_eq!(
        user(&mut s, r#"{"op":"rm","task":"a"}"#).text(),
        "Todo list cleared."
    );
}

#[test]
fn a_rejected_call_on_an_empty_list_reads_empty() {
    let mut s = store();
    assert_eq!(
        call(&mut s, r#"{"op":"start","task":"a"}"#, Agent).text(),
        "Errors: task \"a\" not found: the todo list is empty; create it with `init`\nTodo list is empty."
    );
}

#[test]
fn the_summary_function_is_the_same_text_for_hosts() {
    let mut s = example();
    let result = agent(
        &mut s,
        r#"{"op":"block","task":"Get API key","reason":"waiting for credentials"}"#,
    );
    let list = result.details.phases.clone();
    assert_eq!(summary(&list, &[], SummaryKind::Mutation), EXAMPLE);
    assert_eq!(summary(&list, &[], SummaryKind::View), EXAMPLE);
    assert_eq!(
        summary(&TodoList::default(), &["bad".into()], SummaryKind::View),
        "Errors: bad\nTodo list is empty."
    );
    assert_eq!(
        summary(&TodoList::default(), &[], SummaryKind::Mutation),
        "Todo list cleared."
    );
}
