//! proptest strategies for todo calls: a small vocabulary of task and phase
//! names so that random calls hit and miss, well-formed and malformed calls,
//! and sequences of them from both actors.

use goalkeeper::todo::Actor;
use proptest::prelude::*;
use proptest::sample::select;
use serde_json::{Map, Value, json};

// ---- the vocabulary ------------------------------------------------------

/// Task names that hit once the list holds them.
pub const TASKS: &[&str] = &[
    "Build core",
    "Add edge cases",
    "Run tests",
    "Write docs",
    "Ship",
    "Tag",
    "Announce",
    "Celebrate",
];
/// Names that trim to a known one, differ only in case, look like an id,
/// or are empty.
pub const ODD_TASKS: &[&str] = &[" Ship ", "build core", "task-3", "", "  "];
pub const PHASES: &[&str] = &["Foundation", "Verification", "Release"];
pub const ODD_PHASES: &[&str] = &[" Release ", "", "release"];
pub const REASONS: &[&str] = &["waiting", "  on\n review ", "needs\tkey", ""];
pub const OPS: &[&str] = &[
    "init", "start", "done", "drop", "rm", "block", "unblock", "append", "view",
];
pub const GARBAGE: &[&str] = &[
    "",
    "{",
    "not json",
    "[]",
    "null",
    "42",
    r#"{"op":"view""#,
    r#"{"op":"finish"}"#,
    r#"{"op":7}"#,
    r#"{"op":"done","task":["Ship"]}"#,
    r#"{"op":"append","phase":"Release","items":"Ship"}"#,
    r#"{"op":"init","list":[{"phase":"Foundation","items":[1]}]}"#,
    r#"{"op":"init","list":[{"items":["Ship"]}]}"#,
    r#"{"op":"block","task":"Ship","reason":3}"#,
];

pub fn task_str() -> impl Strategy<Value = &'static str> {
    prop_oneof![8 => select(TASKS), 1 => select(ODD_TASKS)]
}

pub fn phase_str() -> impl Strategy<Value = &'static str> {
    prop_oneof![8 => select(PHASES), 1 => select(ODD_PHASES)]
}

pub fn task_name() -> impl Strategy<Value = Value> {
    task_str().prop_map(Value::from)
}

pub fn phase_name() -> impl Strategy<Value = Value> {
    phase_str().prop_map(Value::from)
}

/// Up to three task names; empty now and then.
pub fn items() -> impl Strategy<Value = Value> {
    prop_oneof![
        8 => prop::collection::vec(task_str(), 1..4),
        1 => Just(Vec::new()),
    ]
    .prop_map(|v| json!(v))
}

/// `task`, `phase` or neither, as fields to merge into a call.
pub fn target() -> impl Strategy<Value = Map<String, Value>> {
    prop_oneof![
        4 => task_name().prop_map(|t| obj(json!({"task": t}))),
        2 => phase_name().prop_map(|p| obj(json!({"phase": p}))),
        1 => Just(Map::new()),
    ]
}

pub fn obj(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => unreachable!(),
    }
}

pub fn with_op(op: &str, mut fields: Map<String, Value>) -> Value {
    fields.insert("op".into(), op.into());
    Value::Object(fields)
}

/// Calls shaped the way the tool documents them (they still miss when a
/// name is not in the list, or repeat a content).
/// An `init` list: one to three phases of up to three items each.
pub fn phase_list() -> impl Strategy<Value = Value> {
    prop::collection::vec((phase_str(), items()), 1..4).prop_map(|phases| {
        let list: Vec<Value> = phases
            .into_iter()
            .map(|(phase, items)| json!({"phase": phase, "items": items}))
            .collect();
        json!(list)
    })
}

pub fn well_formed() -> impl Strategy<Value = Value> {
    prop_oneof![
        2 => phase_list().prop_map(|list| json!({"op": "init", "list": list})),
        1 => (items(), prop::option::of(phase_name())).prop_map(|(items, phase)| {
            let mut call = json!({"op": "init", "items": items});
            if let Some(phase) = phase {
                call["phase"] = phase;
            }
            call
        }),
        3 => task_name().prop_map(|t| json!({"op": "start", "task": t})),
        4 => target().prop_map(|t| with_op("done", t)),
        2 => target().prop_map(|t| with_op("drop", t)),
        2 => target().prop_map(|t| with_op("rm", t)),
        2 => (target(), prop::option::of(select(REASONS))).prop_map(|(mut t, reason)| {
            if let Some(reason) = reason {
                t.insert("reason".into(), reason.into());
            }
            with_op("block", t)
        }),
        2 => target().prop_map(|t| with_op("unblock", t)),
        3 => (phase_name(), items()).prop_map(|(p, i)| json!({"op": "append", "phase": p, "items": i})),
        1 => Just(json!({"op": "view"})),
        // Op inference: `list` → init, `items` + `phase` → append, bare
        // `items` → init only while the list is empty.
        1 => phase_list().prop_map(|list| json!({"list": list})),
        1 => (phase_name(), items()).prop_map(|(p, i)| json!({"phase": p, "items": i})),
        1 => items().prop_map(|i| json!({"items": i})),
    ]
}

/// Calls that must be refused, or are refused most of the time: garbage
/// text, an unknown op, an unknown field, another op's fields, a field of
/// the wrong type, a null or missing op.
pub fn malformed() -> impl Strategy<Value = String> {
    prop_oneof![
        2 => select(GARBAGE).prop_map(String::from),
        1 => (well_formed(), select(&["force", "id", "status"][..])).prop_map(|(mut call, key)| {
            call[key] = json!(true);
            call.to_string()
        }),
        1 => (well_formed(), select(&["finish", "DONE", " done ", "add"][..])).prop_map(|(mut call, op)| {
            call["op"] = op.into();
            call.to_string()
        }),
        // Another op's fields: sometimes fine, mostly a field that does
        // not apply or one that is missing.
        2 => (well_formed(), select(OPS)).prop_map(|(mut call, op)| {
            call["op"] = op.into();
            call.to_string()
        }),
        1 => (well_formed(), select(&["task", "phase", "items", "reason", "list"][..]), task_name())
            .prop_map(|(mut call, key, value)| {
                call[key] = value;
                call.to_string()
            }),
        1 => (well_formed(), any::<bool>()).prop_map(|(mut call, null)| {
            let object = call.as_object_mut().unwrap();
            if null {
                object.insert("op".into(), Value::Null);
            } else {
                object.remove("op");
            }
            call.to_string()
        }),
    ]
}

pub fn call_text() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => well_formed().prop_map(|v| v.to_string()),
        1 => malformed(),
    ]
}

pub fn actor() -> impl Strategy<Value = Actor> {
    select(&[Actor::Agent, Actor::User][..])
}

#[derive(Clone, Debug)]
pub enum Step {
    Call(Actor, String),
    Undo,
}

/// The plan most sequences start from, so that early calls have targets.
pub const SEED: &str = r#"{"op":"init","list":[
    {"phase":"Foundation","items":["Build core","Add edge cases"]},
    {"phase":"Verification","items":["Run tests","Write docs"]},
    {"phase":"Release","items":["Ship","Tag"]}]}"#;

/// Up to 40 calls, usually after the seed plan, sometimes from nothing.
pub fn calls() -> impl Strategy<Value = Vec<(Actor, String)>> {
    (
        prop::option::weighted(0.8, actor()),
        prop::collection::vec((actor(), call_text()), 1..40),
    )
        .prop_map(|(seed, mut calls)| {
            if let Some(actor) = seed {
                calls.insert(0, (actor, SEED.to_owned()));
            }
            calls
        })
}

pub fn steps() -> impl Strategy<Value = Vec<Step>> {
    let step = prop_oneof![
        12 => (actor(), call_text()).prop_map(|(a, c)| Step::Call(a, c)),
        1 => Just(Step::Undo),
    ];
    (
        prop::option::weighted(0.8, actor()),
        prop::collection::vec(step, 1..40),
    )
        .prop_map(|(seed, mut steps)| {
            if let Some(actor) = seed {
                steps.insert(0, Step::Call(actor, SEED.to_owned()));
            }
            steps
        })
}
