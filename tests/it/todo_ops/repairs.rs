//! DESIGN.md §2, repair before rejection: a call whose mistake cannot change
//! which tasks it touches is repaired and succeeds, and its result says
//! what was repaired in a `Repaired:` line; a mistake that could change the
//! targets stays an error (each asserted with `error`, which also checks
//! that nothing changed).

use goalkeeper::todo::Actor::{Agent, User};

use super::common::*;

/// Runs `json` as the agent, expects success, and returns the result's
/// `Repaired:` line.
fn repaired(s: &mut goalkeeper::Store, json: &str) -> String {
    let result = agent(s, json);
    result
        .text()
        .lines()
        .find(|l| l.starts_with("Repaired: "))
        .unwrap_or_else(|| panic!("{json}: no Repaired line in\n{}", result.text()))
        .to_owned()
}

// ---- repaired --------------------------------------------------------------

#[test]
fn a_number_where_text_belongs_is_read_as_its_digits() {
    let mut s = store();
    agent(&mut s, r#"{"op":"init","items":["1","2","3"]}"#);
    assert_eq!(
        repaired(&mut s, r#"{"op":"done","task":3}"#),
        "Repaired: read `task` 3, a number, as the text \"3\"."
    );
    assert_eq!(tasks(&mut s), "Tasks: [/] 1, [ ] 2, [x] 3");
    assert_eq!(
        repaired(&mut s, r#"{"op":"append","phase":2,"items":["x"]}"#),
        "Repaired: read `phase` 2, a number, as the text \"2\"."
    );
    assert_eq!(
        repaired(&mut s, r#"{"op":"block","task":"x","reason":404}"#),
        "Repaired: read `reason` 404, a number, as the text \"404\"."
    );
    assert_eq!(
        repaired(
            &mut s,
            r#"{"op":"append","phase":"2","items":[4,"five",6.5]}"#
        ),
        "Repaired: read numbers in `items` as text."
    );
    assert_eq!(
        tasks(&mut s),
        "Tasks: [/] 1, [ ] 2, [x] 3 | 2: [!] x (404), [ ] 4, [ ] five, [ ] 6.5"
    );
}

#[test]
fn one_string_where_a_list_belongs_is_a_list_of_one() {
    let mut s = planned();
    assert_eq!(
        repaired(&mut s, r#"{"op":"append","phase":"Release","items":"a9"}"#),
        "Repaired: read `items`, one string, as a list of one task."
    );
    // Text that merely starts with a bracket is a task, not JSON.
    assert_eq!(
        repaired(
            &mut s,
            r#"{"op":"append","phase":"Release","items":"[WIP] docs"}"#
        ),
        "Repaired: read `items`, one string, as a list of one task."
    );
    assert_eq!(
        tasks(&mut s),
        "Foundation: [/] Build core, [ ] Add edge cases | Verification: [ ] Run tests, [ ] Write docs | Release: [ ] a9, [ ] [WIP] docs"
    );
}

#[test]
fn json_sent_as_a_string_is_decoded() {
    let mut s = store();
    assert_eq!(
        repaired(
            &mut s,
            r#"{"op":"init","list":"[{\"phase\":\"A\",\"items\":[\"a1\",\"a2\"]}]"}"#
        ),
        "Repaired: decoded `list`, JSON sent as a string."
    );
    assert_eq!(
        repaired(
            &mut s,
            r#"{"op":"append","phase":"A","items":"[\"a3\", \"a4\"]"}"#
        ),
        "Repaired: decoded `items`, a JSON array sent as a string."
    );
    assert_eq!(
        repaired(
            &mut s,
            r#"{"op":"init","list":["{\"phase\":\"B\",\"items\":[\"b1\"]}"]}"#
        ),
        "Repaired: decoded `list[0]`, a JSON object sent as a string."
    );
    assert_eq!(
        repaired(
            &mut s,
            r#"{"op":"init","list":{"phase":"C","items":["c1"]}}"#
        ),
        "Repaired: read `list`, one phase object, as a list of one phase."
    );
    // The whole call as a JSON string (a double-encoded arguments object).
    assert_eq!(
        repaired(&mut s, r#""{\"op\":\"done\",\"task\":\"c1\"}""#),
        "Repaired: decoded the call, a JSON object sent as a string."
    );
    assert_eq!(
        tasks(&mut s),
        "C: [x] c1 | B: [-] b1 | A: [-] a1, [-] a2, [-] a3, [-] a4"
    );
}

#[test]
fn an_unused_field_given_empty_is_ignored() {
    let mut s = planned();
    assert_eq!(
        repaired(&mut s, r#"{"op":"view","items":[]}"#),
        "Repaired: ignored `items`, given empty and not used by `view`."
    );
    assert_eq!(
        repaired(
            &mut s,
            r#"{"op":"done","task":"Build core","phase":null,"items":[],"list":null,"reason":""}"#
        ),
        "Repaired: ignored `list`, `items` and `reason`, given empty and not used by `done`."
    );
    assert_eq!(
        repaired(&mut s, r#"{"op":"start","task":"Run tests","phase":"  "}"#),
        "Repaired: ignored `phase`, given empty and not used by `start`."
    );
    assert_eq!(
        repaired(
            &mut s,
            r#"{"op":"init","list":[{"phase":"New","items":["n"]}],"items":[],"phase":""}"#
        ),
        "Repaired: ignored `items`, given empty beside `list`; ignored the empty top-level `phase`."
    );
    assert_eq!(
        repaired(&mut s, r#"{"op":"init","items":["m"],"phase":""}"#),
        "Repaired: ignored the empty `phase`; the tasks go to phase \"Tasks\"."
    );
    assert_eq!(
        repaired(&mut s, r#"{"op":"block","task":"m","reason":" "}"#),
        "Repaired: ignored the empty `reason`."
    );
}

#[test]
fn a_reason_on_an_op_without_one_is_ignored() {
    let mut s = planned();
    assert_eq!(
        repaired(
            &mut s,
            r#"{"op":"done","task":"Build core","reason":"finished and tested"}"#
        ),
        "Repaired: ignored `reason`, which only `block` takes (`done` keeps no note)."
    );
    agent(&mut s, r#"{"op":"block","task":"Run tests","reason":"CI"}"#);
    assert_eq!(
        repaired(
            &mut s,
            r#"{"op":"unblock","task":"Run tests","reason":"CI is back"}"#
        ),
        "Repaired: ignored `reason`, which only `block` takes (`unblock` keeps no note)."
    );
    assert_eq!(
        tasks(&mut s),
        "Foundation: [x] Build core, [/] Add edge cases | Verification: [ ] Run tests, [ ] Write docs"
    );
}

#[test]
fn a_page_given_as_digits_is_a_number() {
    let mut s = planned();
    assert_eq!(
        repaired(&mut s, r#"{"op":"view","page":"1"}"#),
        "Repaired: read `page` \"1\", a string, as the number 1."
    );
}

#[test]
fn repairs_are_reported_even_when_the_call_is_rejected() {
    let mut s = planned();
    let result = call(&mut s, r#"{"op":"done","task":7}"#, Agent);
    assert!(result.is_error);
    let mut lines = result.text().lines();
    assert_eq!(
        lines.next(),
        Some(
            "Errors: task \"7\" not found: tasks have no ids or numbers; name a task by its exact content, for example \"Build core\""
        )
    );
    assert_eq!(
        lines.next(),
        Some("Repaired: read `task` 7, a number, as the text \"7\".")
    );
}

#[test]
fn a_call_written_as_documented_has_no_repaired_line() {
    let mut s = planned();
    let result = agent(&mut s, r#"{"op":"done","task":"Build core","phase":null}"#);
    assert!(!result.text().contains("Repaired"), "{}", result.text());
}

// ---- still rejected: anything that could change the targets --------------

#[test]
fn an_unknown_field_stays_an_error_naming_the_accepted_ones() {
    let mut s = planned();
    // Dropping `tasks` would turn a targeted `done` into "every task".
    assert_eq!(
        error(&mut s, r#"{"op":"done","tasks":["Build core"]}"#, Agent),
        "unknown field `tasks`; the accepted fields are op, list, task, phase, items, reason, after, page"
    );
    // Even when it is empty.
    assert_eq!(
        error(&mut s, r#"{"op":"view","filter":""}"#, Agent),
        "unknown field `filter`; the accepted fields are op, list, task, phase, items, reason, after, page"
    );
}

#[test]
fn task_together_with_phase_stays_an_error() {
    let mut s = planned();
    assert_eq!(
        error(
            &mut s,
            r#"{"op":"done","task":3,"phase":"Foundation"}"#,
            Agent
        ),
        "`done` takes either `task` or `phase`, not both"
    );
}

#[test]
fn an_empty_or_whitespace_target_stays_an_error() {
    let mut s = planned();
    for (body, message) in [
        (
            r#"{"op":"done","task":""}"#,
            "field `task`: task content is empty; give some text",
        ),
        (
            r#"{"op":"drop","task":"   "}"#,
            "field `task`: task content is empty; give some text",
        ),
        (
            r#"{"op":"rm","phase":" "}"#,
            "field `phase`: phase name is empty; give some text",
        ),
        (
            r#"{"op":"done","task":null}"#,
            "field `task` is null; name a task by its exact content or a phase by its name, or leave out both `task` and `phase` to done every task",
        ),
        (
            r#"{"op":"drop","phase":null}"#,
            "field `phase` is null; name a task by its exact content or a phase by its name, or leave out both `task` and `phase` to drop every task",
        ),
        (
            r#"{"op":"block","task":null,"reason":"x"}"#,
            "field `task` is null; `block` needs a `task` or `phase` to say what it applies to",
        ),
        (
            r#"{"op":"view","phase":""}"#,
            "field `phase`: phase name is empty; give some text",
        ),
    ] {
        assert_eq!(error(&mut s, body, Agent), message, "{body}");
        assert_eq!(error(&mut s, body, User), message, "{body}");
    }
}

#[test]
fn a_field_the_op_does_not_use_given_with_content_stays_an_error() {
    let mut s = planned();
    // `items` on `done` may be the tasks meant: ignoring it would finish all.
    assert_eq!(
        error(&mut s, r#"{"op":"done","items":["Build core"]}"#, Agent),
        "field `items` does not apply to `done`, which takes task or phase, or neither for every task"
    );
}

#[test]
fn a_list_of_texts_where_one_text_belongs_stays_an_error() {
    let mut s = planned();
    assert_eq!(
        error(&mut s, r#"{"op":"done","task":["Build core"]}"#, Agent),
        "field `task` must be a string, not an array"
    );
}

#[test]
fn a_bad_page_is_an_error() {
    let mut s = planned();
    for (body, message) in [
        (
            r#"{"op":"view","page":0}"#,
            "field `page` must be a whole number from 1, not 0",
        ),
        (
            r#"{"op":"view","page":1.5}"#,
            "field `page` must be a whole number from 1, not 1.5",
        ),
        (
            r#"{"op":"view","page":"two"}"#,
            "field `page` must be a whole number from 1, not a string",
        ),
        (
            r#"{"op":"view","page":2}"#,
            "page 2 does not exist; the list has 1 page",
        ),
        (
            r#"{"op":"view","phase":"Nope"}"#,
            "phase \"Nope\" not found; the phases are \"Foundation\", \"Verification\"",
        ),
    ] {
        assert_eq!(error(&mut s, body, Agent), message, "{body}");
    }
}
