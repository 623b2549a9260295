//! DESIGN.md §1: input text is trimmed, empty text is an error, blocker notes are
//! collapsed to one line, and each limit is enforced with an error naming it.

use goalkeeper::todo::Actor::{Agent, User};
use goalkeeper::todo::{
    MAX_BLOCKER_CHARS, MAX_CALL_BYTES, MAX_PHASE_CHARS, MAX_TASK_CHARS, MAX_TASKS,
};

use super::common::*;

/// A JSON string literal holding `text`.
fn lit(text: &str) -> String {
    serde_json::to_string(text).unwrap()
}

#[test]
fn the_limits_are_the_documented_ones() {
    assert_eq!(MAX_TASK_CHARS, 1_000);
    assert_eq!(MAX_PHASE_CHARS, 200);
    assert_eq!(MAX_BLOCKER_CHARS, 1_000);
    assert_eq!(MAX_TASKS, 10_000);
    assert_eq!(MAX_CALL_BYTES, 1_048_576);
}

// ---- trimming ------------------------------------------------------------

#[test]
fn contents_and_phase_names_are_trimmed_on_the_way_in() {
    let mut s = store();
    agent(
        &mut s,
        r#"{"op":"init","list":[{"phase":"  Plan \n","items":["  Build core  ","\tRun tests\n"]}]}"#,
    );
    assert_eq!(tasks(&mut s), "Plan: [/] Build core, [ ] Run tests");
    agent(
        &mut s,
        r#"{"op":"append","phase":" Plan","items":[" Write docs "]}"#,
    );
    assert_eq!(
        tasks(&mut s),
        "Plan: [/] Build core, [ ] Run tests, [ ] Write docs"
    );
}

#[test]
fn targets_are_trimmed_before_matching() {
    let mut s = planned();
    agent(&mut s, r#"{"op":"done","task":"  Build core\n"}"#);
    agent(
        &mut s,
        r#"{"op":"block","phase":" Verification ","reason":"x"}"#,
    );
    assert_eq!(
        tasks(&mut s),
        "Foundation: [x] Build core, [/] Add edge cases | Verification: [!] Run tests (x), [!] Write docs (x)"
    );
}

#[test]
fn inner_whitespace_of_contents_is_kept() {
    let mut s = store();
    agent(
        &mut s,
        r#"{"op":"init","items":["a  b","line one\nline two"]}"#,
    );
    let list = list(&mut s);
    let contents: Vec<&str> = list.tasks().map(|(_, t)| t.content.as_str()).collect();
    assert_eq!(contents, ["a  b", "line one\nline two"]);
}

#[test]
fn blocker_notes_collapse_every_whitespace_run_to_one_space() {
    let mut s = planned();
    agent(
        &mut s,
        r#"{"op":"block","task":"Run tests","reason":"\n waiting\r\n\r\nfor \t the   API key \n"}"#,
    );
    let list = list(&mut s);
    let (p, t) = list.find_task("Run tests").unwrap();
    assert_eq!(
        list.phases[p].tasks[t].blocker.as_deref(),
        Some("waiting for the API key")
    );
}

#[test]
fn empty_text_after_trimming_is_an_error_naming_the_field() {
    let mut s = planned();
    for (body, message) in [
        (
            r#"{"op":"done","task":"   "}"#,
            "field `task`: task content is empty; give some text",
        ),
        (
            r#"{"op":"done","task":""}"#,
            "field `task`: task content is empty; give some text",
        ),
        (
            r#"{"op":"done","phase":" \n"}"#,
            "field `phase`: phase name is empty; give some text",
        ),
        (
            r#"{"op":"append","phase":"P","items":["a"," \t"]}"#,
            "field `items[1]`: task content is empty; give some text",
        ),
        (
            r#"{"op":"init","list":[{"phase":"","items":["a"]}]}"#,
            "field `list[0].phase`: phase name is empty; give some text",
        ),
        (
            r#"{"op":"init","list":[{"phase":"A","items":["a",""]}]}"#,
            "field `list[0].items[1]`: task content is empty; give some text",
        ),
    ] {
        assert_eq!(error(&mut s, body, Agent), message, "{body}");
    }
}

// ---- text limits ---------------------------------------------------------

#[test]
fn task_content_is_limited_to_1000_characters() {
    let mut s = planned();
    let at_limit = "t".repeat(1_000);
    agent(
        &mut s,
        &format!(
            r#"{{"op":"append","phase":"P","items":[{}]}}"#,
            lit(&at_limit)
        ),
    );
    agent(
        &mut s,
        &format!(r#"{{"op":"done","task":{}}}"#, lit(&at_limit)),
    );

    let over = "u".repeat(1_001);
    let expected = format!(
        "task content \"{}…\" is 1001 characters; the limit is 1000",
        "u".repeat(40)
    );
    assert_eq!(
        error(
            &mut s,
            &format!(r#"{{"op":"append","phase":"P","items":[{}]}}"#, lit(&over)),
            Agent
        ),
        format!("field `items[0]`: {expected}")
    );
    assert_eq!(
        error(
            &mut s,
            &format!(r#"{{"op":"start","task":{}}}"#, lit(&over)),
            User
        ),
        format!("field `task`: {expected}")
    );
    assert_eq!(
        error(
            &mut s,
            &format!(
                r#"{{"op":"init","list":[{{"phase":"A","items":[{}]}}]}}"#,
                lit(&over)
            ),
            Agent
        ),
        format!("field `list[0].items[0]`: {expected}")
    );
}

#[test]
fn limits_count_characters_not_bytes() {
    let mut s = store();
    let wide = "é".repeat(1_000);
    agent(
        &mut s,
        &format!(r#"{{"op":"init","items":[{}]}}"#, lit(&wide)),
    );
    let over = "é".repeat(1_001);
    assert_eq!(
        error(
            &mut s,
            &format!(r#"{{"op":"done","task":{}}}"#, lit(&over)),
            Agent
        ),
        format!(
            "field `task`: task content \"{}…\" is 1001 characters; the limit is 1000",
            "é".repeat(40)
        )
    );
}

#[test]
fn the_limit_applies_after_trimming() {
    let mut s = store();
    let padded = format!("   {}   ", "t".repeat(1_000));
    agent(
        &mut s,
        &format!(r#"{{"op":"init","items":[{}]}}"#, lit(&padded)),
    );
    assert_eq!(list(&mut s).phases[0].tasks[0].content.len(), 1_000);
}

#[test]
fn phase_names_are_limited_to_200_characters() {
    let mut s = planned();
    let at_limit = "p".repeat(200);
    agent(
        &mut s,
        &format!(
            r#"{{"op":"append","phase":{},"items":["x"]}}"#,
            lit(&at_limit)
        ),
    );
    let over = "q".repeat(201);
    let expected = format!(
        "phase name \"{}…\" is 201 characters; the limit is 200",
        "q".repeat(40)
    );
    assert_eq!(
        error(
            &mut s,
            &format!(r#"{{"op":"append","phase":{},"items":["y"]}}"#, lit(&over)),
            Agent
        ),
        format!("field `phase`: {expected}")
    );
    assert_eq!(
        error(
            &mut s,
            &format!(
                r#"{{"op":"init","list":[{{"phase":{},"items":["y"]}}]}}"#,
                lit(&over)
            ),
            User
        ),
        format!("field `list[0].phase`: {expected}")
    );
}

#[test]
fn blocker_notes_are_limited_to_1000_characters_after_collapsing() {
    let mut s = planned();
    // 1,002 characters as sent, 1,000 once the newline run is one space.
    let collapses_to_limit = format!("{}\n\n\n{}", "b".repeat(499), "b".repeat(500));
    agent(
        &mut s,
        &format!(
            r#"{{"op":"block","task":"Run tests","reason":{}}}"#,
            lit(&collapses_to_limit)
        ),
    );
    let over = "c".repeat(1_001);
    assert_eq!(
        error(
            &mut s,
            &format!(
                r#"{{"op":"block","task":"Write docs","reason":{}}}"#,
                lit(&over)
            ),
            Agent
        ),
        format!(
            "field `reason`: blocker note \"{}…\" is 1001 characters; the limit is 1000",
            "c".repeat(40)
        )
    );
}

// ---- list and call limits ------------------------------------------------

fn items(prefix: &str, n: usize) -> String {
    (0..n)
        .map(|i| format!("\"{prefix}{i}\""))
        .collect::<Vec<_>>()
        .join(",")
}

#[test]
fn a_list_holds_at_most_10000_tasks() {
    let mut s = store();
    agent(
        &mut s,
        &format!(r#"{{"op":"init","items":[{}]}}"#, items("t", 10_000)),
    );
    assert_eq!(list(&mut s).task_count(), 10_000);

    let message =
        "the list would hold 10001 tasks; the limit is 10000, so close out or remove tasks first";
    assert_eq!(
        error(
            &mut s,
            r#"{"op":"append","phase":"Tasks","items":["one more"]}"#,
            Agent
        ),
        message
    );
    assert_eq!(
        error(
            &mut s,
            &format!(r#"{{"op":"init","items":[{}]}}"#, items("u", 10_001)),
            User
        ),
        message
    );
}

#[test]
fn a_call_is_at_most_1_mib() {
    let mut s = planned();
    let call = r#"{"op":"view"}"#;
    let at_limit = format!("{call}{}", " ".repeat(MAX_CALL_BYTES - call.len()));
    assert_eq!(at_limit.len(), 1_048_576);
    agent(&mut s, &at_limit);

    let over = format!("{at_limit} ");
    assert_eq!(
        error(&mut s, &over, Agent),
        "the call is 1048577 bytes; the limit is 1048576 bytes (1 MiB), so split it into several calls"
    );
}

#[test]
fn a_rejected_huge_call_is_logged_shortened() {
    let mut s = planned();
    let huge = format!(
        r#"{{"op":"append","phase":"P","items":[{}]}}"#,
        lit(&"x".repeat(MAX_CALL_BYTES))
    );
    call(&mut s, &huge, Agent);
    let log = s.read(&session(), |tx| tx.event_log(1)).unwrap();
    let payload = log[0].payload.as_str().unwrap();
    assert!(payload.len() < 5_000, "{} bytes logged", payload.len());
    assert!(
        payload.ends_with(&format!("… ({} bytes)", huge.len())),
        "{}",
        &payload[payload.len() - 40..]
    );
}
