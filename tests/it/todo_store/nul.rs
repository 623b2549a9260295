//! NUL (U+0000), one rule on both backends (DESIGN.md §1): no text
//! goalkeeper stores holds one. SQLite would keep it and PostgreSQL
//! refuses it ("invalid byte sequence for encoding UTF8"), so it is
//! refused on the way in, with an error that names the field and does not
//! echo it, and nothing changes; the log keeps the refused call legible.

use goalkeeper::store::Caller;
use goalkeeper::store::{CallFrom, GoalCall};
use goalkeeper::todo::Actor::{Agent, User};
use goalkeeper::todo::{Phase, Task, TodoList};
use goalkeeper::{AgentName, ErrorKind};
use serde_json::json;

use super::common::*;
use super::log;

const REFUSAL: &str = "holds a NUL character (U+0000), which goalkeeper never stores; remove it";

/// A todo call with a NUL in any text, key or value, is refused whole:
/// the error names the field, the list and version stay, and the refused
/// call is logged (each NUL as `\u0000`) and left as the agent's reminder.
#[test]
fn a_todo_call_with_a_nul_is_refused_and_changes_nothing() {
    let mut s = planned();
    let before = log(&mut s).len();
    for (json, field) in [
        (r#"{"op":"done","task":"Build\u0000core"}"#, "`task`"),
        (
            r#"{"op":"append","phase":"P","items":["ok","x\u0000"]}"#,
            "`items[1]`",
        ),
        (
            r#"{"op":"init","list":[{"phase":"P\u0000","items":["a"]}]}"#,
            "`list[0].phase`",
        ),
        (
            r#"{"op":"block","task":"Run tests","reason":"\u0000"}"#,
            "`reason`",
        ),
        (r#"{"op":"view","pa\u0000ge":1}"#, "a field name"),
        (r#"{"op":"do\u0000ne"}"#, "`op`"),
        (r#""{\"op\":\"done\",\"task\":\"a\\u0000\"}""#, "`task`"),
    ] {
        assert_eq!(error(&mut s, json, Agent), format!("{field} {REFUSAL}"));
        assert_eq!(error(&mut s, json, User), format!("{field} {REFUSAL}"));
    }
    // A raw NUL byte is no JSON at all; the log keeps it legible.
    let raw = "{\"op\":\"done\",\"task\":\"a\0b\"}";
    let errors = rejected(&mut s, raw, Agent);
    assert!(errors[0].contains("control character"), "{errors:?}");
    let log = log(&mut s);
    assert_eq!(log.len(), before + 8, "each agent call logged once");
    let last = log.last().unwrap();
    assert!(!last.ok);
    // Written `\u0000`, the raw call reads back as the JSON it meant.
    assert_eq!(last.payload, json!({"op": "done", "task": "a\u{0}b"}));
    let first = &log[before];
    assert_eq!(first.op.as_deref(), Some("done"));
    assert_eq!(first.error.as_deref(), Some(&*format!("`task` {REFUSAL}")));
    assert!(
        s.read(&session(), |tx| tx.pending_todo_error())
            .unwrap()
            .is_some_and(|e| !e.contains('\0'))
    );
}

/// The goal tool and the store's goal calls refuse a NUL objective, and
/// a NUL anywhere in the tool's JSON; no goal is started.
#[test]
fn a_goal_with_a_nul_is_refused_and_changes_nothing() {
    let mut s = store();
    let me = session();
    for json in [
        r#"{"op":"create","objective":"Ship\u0000it"}"#,
        r#"{"op":"create","objective":"Ship","x\u0000":1}"#,
    ] {
        let result = s
            .write(&me, |tx| {
                tx.goal_call(GoalCall::Json(json), Agent, &mut Caller::default(), NOW)
            })
            .unwrap();
        assert!(result.is_error);
        assert!(result.text().contains(REFUSAL), "{}", result.text());
    }
    let typed = goalkeeper::goal::GoalOp::Set {
        objective: "Ship\0it".into(),
        budget: None,
        checks: Vec::new(),
    };
    let result = s
        .write(&me, |tx| {
            tx.goal_call(GoalCall::Op(&typed), User, &mut Caller::default(), NOW)
        })
        .unwrap();
    assert!(result.is_error);
    assert_eq!(result.text(), format!("Errors: the objective {REFUSAL}"));
    assert_eq!(s.read(&me, |tx| tx.goal()).unwrap(), None);
    assert_eq!(
        goalkeeper::goal::objective("Ship\0it"),
        Err(format!("the objective {REFUSAL}"))
    );
}

/// An import holding a NUL is refused whole, naming it; nothing is
/// imported.
#[test]
fn an_import_with_a_nul_is_refused_and_changes_nothing() {
    let mut s = planned();
    let before = (json_of(&list(&mut s)), version(&mut s));
    let list_with_nul = TodoList::new(vec![Phase {
        name: "P".into(),
        tasks: vec![Task::pending("a\0b")],
    }]);
    let err = s
        .write(&session(), |tx| {
            tx.todo_import(list_with_nul, "TODO.md", &Caller::default(), NOW)
        })
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Rejected);
    assert_eq!(
        err.to_string(),
        format!("cannot import TODO.md: task content {REFUSAL}; nothing was imported")
    );
    assert_eq!((json_of(&list(&mut s)), version(&mut s)), before);
}

/// A host's tool-use id with a NUL is never recorded, and a call naming
/// one acts as the session's own agent, as any call without a record.
#[test]
fn a_tool_use_id_with_a_nul_is_not_recorded() {
    let mut s = planned();
    let me = session();
    let w1 = AgentName::parse("w1").unwrap().unwrap();
    let recorded = s.write(&me, |tx| tx.record_tool_use("toolu_\0", &w1, NOW));
    assert!(!recorded.unwrap());
    let mut caller = Caller::default();
    caller.act_for_call(Some(CallFrom::ToolUse("toolu_\0".into())));
    let result = call(&mut s, r#"{"op":"done","task":"Build core"}"#, Agent);
    assert!(!result.is_error, "{}", result.text());
    let log = log(&mut s);
    assert_eq!(log.last().unwrap().payload.get("agent"), None);
}
