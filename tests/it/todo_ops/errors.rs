//! Every error message of the todo tool, asserted exactly. Each goes through
//! `rejected`/`error`, which also checks that nothing changed (DESIGN.md §2.2).

use goalkeeper::todo::Actor::{Agent, User};

use super::common::*;

const FIELDS: &str = "op, list, task, phase, items, reason, after, page";
const OPS: &str = "init, start, done, drop, rm, block, unblock, append, view";

// ---- the document --------------------------------------------------------

#[test]
fn malformed_json_says_so_and_shows_a_valid_call() {
    let mut s = planned();
    let message = error(&mut s, r#"{"op": "done","#, Agent);
    assert_eq!(
        message,
        "the call is not valid JSON (EOF while parsing a value at line 1 column 14); \
         send one object such as {\"op\": \"view\"}"
    );
    let message = error(&mut s, "", User);
    assert!(
        message.starts_with("the call is not valid JSON (EOF while parsing a value"),
        "{message}"
    );
}

#[test]
fn a_call_that_is_not_an_object_is_refused() {
    let mut s = planned();
    for (body, kind) in [
        (r#""view""#, "a string"),
        (r#"["view"]"#, "an array"),
        ("null", "null"),
        ("3", "a number"),
        ("true", "a boolean"),
    ] {
        assert_eq!(
            error(&mut s, body, Agent),
            format!("the call must be a JSON object such as {{\"op\": \"view\"}}, not {kind}")
        );
    }
}

#[test]
fn an_unknown_field_names_itself_and_the_accepted_ones() {
    let mut s = planned();
    assert_eq!(
        error(
            &mut s,
            r#"{"op":"done","task":"Build core","force":true}"#,
            Agent
        ),
        format!("unknown field `force`; the accepted fields are {FIELDS}")
    );
    assert_eq!(
        error(&mut s, r#"{"op":"done","Task":"Build core"}"#, User),
        format!("unknown field `Task`; the accepted fields are {FIELDS}")
    );
}

#[test]
fn an_unknown_op_lists_the_ops() {
    let mut s = planned();
    assert_eq!(
        error(&mut s, r#"{"op":"finish","task":"Build core"}"#, Agent),
        format!("unknown op `finish`; use one of {OPS}")
    );
    assert_eq!(
        error(&mut s, r#"{"op":"DONE"}"#, Agent),
        format!("unknown op `DONE`; use one of {OPS}")
    );
}

#[test]
fn an_op_that_is_not_a_string_is_refused() {
    let mut s = planned();
    assert_eq!(
        error(&mut s, r#"{"op":3}"#, Agent),
        format!("field `op` must be a string (one of {OPS}), not a number")
    );
    assert_eq!(
        error(&mut s, r#"{"op":["done"]}"#, Agent),
        format!("field `op` must be a string (one of {OPS}), not an array")
    );
}

// ---- wrong types ---------------------------------------------------------

#[test]
fn each_field_of_the_wrong_type_is_named() {
    let mut s = planned();
    for (body, message) in [
        (
            r#"{"op":"done","task":["Build core"]}"#,
            "field `task` must be a string, not an array",
        ),
        (
            r#"{"op":"done","phase":true}"#,
            "field `phase` must be a string, not a boolean",
        ),
        (
            r#"{"op":"block","task":"Build core","reason":false}"#,
            "field `reason` must be a string, not a boolean",
        ),
        (
            r#"{"op":"append","phase":"P","items":{"a":"x"}}"#,
            "field `items` must be an array of strings, not an object",
        ),
        (
            r#"{"op":"init","list":"A"}"#,
            "field `list` must be an array of {\"phase\": ..., \"items\": [...]} objects, not a string",
        ),
        (
            r#"{"op":"init","list":7}"#,
            "field `list` must be an array of {\"phase\": ..., \"items\": [...]} objects, not a number",
        ),
        (
            r#"{"op":"init","list":["A"]}"#,
            "field `list[0]` must be an object {\"phase\": ..., \"items\": [...]}, not a string",
        ),
        (
            r#"{"op":"init","list":[{"phase":"A","items":[null]}]}"#,
            "field `list[0].items[0]` must be a string, not null",
        ),
        (
            r#"{"op":"init","list":[{"phase":["A"],"items":["a"]}]}"#,
            "field `list[0].phase` must be a string, not an array",
        ),
    ] {
        assert_eq!(error(&mut s, body, Agent), message, "{body}");
    }
}

#[test]
fn every_bad_item_is_reported() {
    let mut s = planned();
    assert_eq!(
        rejected(
            &mut s,
            r#"{"op":"append","phase":"P","items":["ok",false,{}]}"#,
            Agent
        ),
        [
            "field `items[1]` must be a string, not a boolean",
            "field `items[2]` must be a string, not an object",
        ]
    );
}

#[test]
fn a_phase_entry_takes_only_phase_and_items() {
    let mut s = store();
    assert_eq!(
        error(
            &mut s,
            r#"{"op":"init","list":[{"phase":"A","tasks":["a"]}]}"#,
            Agent
        ),
        "unknown field `list[0].tasks`; each phase takes phase and items"
    );
    assert_eq!(
        error(&mut s, r#"{"op":"init","list":[{"items":["a"]}]}"#, Agent),
        "field `list[0].phase` is missing; name the phase"
    );
}

// ---- fields that do not apply, missing fields -----------------------------

#[test]
fn a_field_the_op_does_not_use_is_named_with_the_ones_it_does() {
    let mut s = planned();
    for (body, message) in [
        (
            r#"{"op":"start","task":"Build core","phase":"Foundation"}"#,
            "field `phase` does not apply to `start`, which takes task",
        ),
        (
            r#"{"op":"done","task":"Build core","items":["Add edge cases"]}"#,
            "field `items` does not apply to `done`, which takes task or phase, or neither for every task",
        ),
        (
            r#"{"op":"unblock","task":"Build core","list":[{"phase":"A"}]}"#,
            "field `list` does not apply to `unblock`, which takes task or phase",
        ),
        (
            r#"{"op":"block","task":"Build core","items":["x"]}"#,
            "field `items` does not apply to `block`, which takes task or phase, and an optional reason or after",
        ),
        (
            r#"{"op":"append","phase":"P","items":["x"],"task":"y"}"#,
            "field `task` does not apply to `append`, which takes phase and items",
        ),
        (
            r#"{"op":"view","task":"Build core"}"#,
            "field `task` does not apply to `view`, which takes an optional phase and page",
        ),
        (
            r#"{"op":"init","items":["a"],"task":"fresh"}"#,
            "field `task` does not apply to `init`, which takes list, or items with an optional phase",
        ),
        (
            r#"{"op":"done","page":2}"#,
            "field `page` does not apply to `done`, which takes task or phase, or neither for every task",
        ),
    ] {
        assert_eq!(error(&mut s, body, Agent), message, "{body}");
    }
}

#[test]
fn a_missing_required_field_says_what_to_send() {
    let mut s = planned();
    for (body, message) in [
        (
            r#"{"op":"start"}"#,
            "`start` needs `task`: the exact content of the task to work on",
        ),
        (
            r#"{"op":"block"}"#,
            "`block` needs `task` or `phase` to say what it applies to",
        ),
        (
            r#"{"op":"block","reason":"waiting"}"#,
            "`block` needs `task` or `phase` to say what it applies to",
        ),
        (
            r#"{"op":"unblock"}"#,
            "`unblock` needs `task` or `phase` to say what it applies to",
        ),
        (
            r#"{"op":"append","items":["x"]}"#,
            "`append` needs `phase`: the phase to add the items to",
        ),
        (
            r#"{"op":"append","phase":"P"}"#,
            "`append` needs `items`: the task contents to add",
        ),
        (
            r#"{"op":"append","phase":"P","items":[]}"#,
            "`append` needs at least one entry in `items`",
        ),
        (
            r#"{"op":"init"}"#,
            "`init` needs `list` ([{\"phase\": ..., \"items\": [...]}]) or `items`",
        ),
        (
            r#"{"op":"init","items":[]}"#,
            "`init` needs at least one task; to clear the list use `rm` without a target",
        ),
        (
            r#"{"op":"init","list":[{"phase":"A"},{"phase":"B","items":[]}]}"#,
            "`init` needs at least one task; to clear the list use `rm` without a target",
        ),
    ] {
        assert_eq!(error(&mut s, body, Agent), message, "{body}");
    }
}

#[test]
fn task_and_phase_together_are_refused() {
    let mut s = planned();
    for op in ["done", "drop", "rm", "block", "unblock"] {
        assert_eq!(
            error(
                &mut s,
                &format!(r#"{{"op":"{op}","task":"Build core","phase":"Foundation"}}"#),
                Agent
            ),
            format!("`{op}` takes either `task` or `phase`, not both")
        );
    }
}

#[test]
fn init_takes_list_or_items_not_both() {
    let mut s = planned();
    assert_eq!(
        error(
            &mut s,
            r#"{"op":"init","list":[{"phase":"A","items":["a"]}],"items":["b"]}"#,
            Agent
        ),
        "`init` takes either `list` or `items`, not both"
    );
    assert_eq!(
        error(
            &mut s,
            r#"{"op":"init","list":[{"phase":"A","items":["a"]}],"phase":"B"}"#,
            Agent
        ),
        "`init` with `list` names its phases inside the list; drop the top-level `phase`"
    );
}

// ---- duplicates ----------------------------------------------------------

#[test]
fn duplicate_contents_in_init_are_refused() {
    let mut s = planned();
    assert_eq!(
        error(&mut s, r#"{"op":"init","items":["x","y","x"]}"#, Agent),
        "task \"x\" appears twice; task contents must be unique across the list"
    );
    assert_eq!(
        error(
            &mut s,
            r#"{"op":"init","list":[{"phase":"A","items":["x"]},{"phase":"B","items":["x"]}]}"#,
            User
        ),
        "task \"x\" appears twice; task contents must be unique across the list"
    );
    // Contents are compared after trimming.
    assert_eq!(
        error(&mut s, r#"{"op":"init","items":["x"," x "]}"#, Agent),
        "task \"x\" appears twice; task contents must be unique across the list"
    );
}

#[test]
fn duplicate_phase_names_in_init_are_refused() {
    let mut s = planned();
    assert_eq!(
        error(
            &mut s,
            r#"{"op":"init","list":[{"phase":"A","items":["x"]},{"phase":" A","items":["y"]}]}"#,
            Agent
        ),
        "phase \"A\" appears twice in `list`; phase names must be unique"
    );
}

#[test]
fn append_of_an_existing_content_names_its_phase() {
    let mut s = planned();
    assert_eq!(
        error(
            &mut s,
            r#"{"op":"append","phase":"Foundation","items":["New","Run tests"]}"#,
            Agent
        ),
        "task \"Run tests\" already exists in phase \"Verification\"; task contents must be unique"
    );
    // The same check for a large batch.
    let mut items: Vec<String> = (0..12).map(|i| format!("\"n{i}\"")).collect();
    items.push("\"Build core\"".into());
    assert_eq!(
        error(
            &mut s,
            &format!(
                r#"{{"op":"append","phase":"More","items":[{}]}}"#,
                items.join(",")
            ),
            User
        ),
        "task \"Build core\" already exists in phase \"Foundation\"; task contents must be unique"
    );
}

#[test]
fn append_of_an_abandoned_content_is_still_a_duplicate() {
    let mut s = planned();
    user(&mut s, r#"{"op":"drop","task":"Write docs"}"#);
    assert_eq!(
        error(
            &mut s,
            r#"{"op":"append","phase":"Verification","items":["Write docs"]}"#,
            Agent
        ),
        "task \"Write docs\" already exists in phase \"Verification\"; task contents must be unique"
    );
}

#[test]
fn append_of_the_same_content_twice_is_refused() {
    let mut s = planned();
    assert_eq!(
        error(
            &mut s,
            r#"{"op":"append","phase":"Release","items":["Tag","Tag "]}"#,
            Agent
        ),
        "task \"Tag\" appears twice in `items`; task contents must be unique"
    );
}

// ---- targets that do not exist -------------------------------------------

#[test]
fn a_missing_task_is_named_for_every_op() {
    let message =
        "task \"Deploy\" not found; tasks are matched by their exact content (see `view`)";
    let mut s = planned();
    for op in ["start", "done", "drop", "rm", "block", "unblock"] {
        for actor in [Agent, User] {
            assert_eq!(
                error(
                    &mut s,
                    &format!(r#"{{"op":"{op}","task":"Deploy"}}"#),
                    actor
                ),
                message,
                "{op} as {actor}"
            );
        }
    }
}

#[test]
fn a_task_that_differs_only_in_case_gets_a_suggestion() {
    let mut s = planned();
    assert_eq!(
        error(&mut s, r#"{"op":"done","task":"build core"}"#, Agent),
        "task \"build core\" not found; did you mean \"Build core\"? Tasks are matched by their exact content"
    );
}

#[test]
fn a_task_named_like_an_id_explains_that_tasks_are_named_by_content() {
    let mut s = planned();
    for id in ["task-3", "3", "#2", "Task 1", "todo_12", "item-2"] {
        assert_eq!(
            error(&mut s, &format!(r#"{{"op":"done","task":"{id}"}}"#), Agent),
            format!(
                "task \"{id}\" not found: tasks have no ids or numbers; name a task by its exact content, for example \"Build core\""
            )
        );
    }
}

#[test]
fn a_missing_task_on_an_empty_list_says_the_list_is_empty() {
    let mut s = store();
    for op in ["start", "done", "drop", "rm", "block", "unblock"] {
        for task in ["Build core", "task-3"] {
            assert_eq!(
                error(
                    &mut s,
                    &format!(r#"{{"op":"{op}","task":"{task}"}}"#),
                    Agent
                ),
                format!("task \"{task}\" not found: the todo list is empty; create it with `init`")
            );
        }
    }
}

#[test]
fn a_missing_phase_lists_the_phases() {
    let mut s = planned();
    for op in ["done", "drop", "rm", "block", "unblock"] {
        assert_eq!(
            error(
                &mut s,
                &format!(r#"{{"op":"{op}","phase":"Release"}}"#),
                User
            ),
            "phase \"Release\" not found; the phases are \"Foundation\", \"Verification\""
        );
    }
}

#[test]
fn a_missing_phase_on_an_empty_list_says_the_list_is_empty() {
    let mut s = store();
    assert_eq!(
        error(&mut s, r#"{"op":"done","phase":"Foundation"}"#, Agent),
        "phase \"Foundation\" not found: the todo list is empty; create it with `init`"
    );
}

#[test]
fn a_long_phase_list_is_cut_in_the_message() {
    let mut s = store();
    let phases: Vec<String> = (1..=12)
        .map(|i| format!(r#"{{"phase":"P{i}","items":["t{i}"]}}"#))
        .collect();
    agent(
        &mut s,
        &format!(r#"{{"op":"init","list":[{}]}}"#, phases.join(",")),
    );
    assert_eq!(
        error(&mut s, r#"{"op":"done","phase":"P13"}"#, Agent),
        "phase \"P13\" not found; the phases are \"P1\", \"P2\", \"P3\", \"P4\", \"P5\", \"P6\", \"P7\", \"P8\", \"P9\", \"P10\", and 2 more"
    );
}

#[test]
fn an_empty_phase_can_still_be_targeted() {
    let mut s = planned();
    user(&mut s, r#"{"op":"rm","phase":"Foundation"}"#);
    agent(&mut s, r#"{"op":"done","phase":"Foundation"}"#);
    // With every phase empty, a task is reported against the empty list.
    user(&mut s, r#"{"op":"rm"}"#);
    assert_eq!(
        error(&mut s, r#"{"op":"done","task":"Run tests"}"#, Agent),
        "task \"Run tests\" not found: the todo list is empty; create it with `init`"
    );
}
