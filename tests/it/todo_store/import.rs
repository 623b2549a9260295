//! `todo import`: validated, normalized, logged; refused with nothing changed.

use goalkeeper::ErrorKind;
use goalkeeper::store::Caller;
use goalkeeper::todo::Actor::User;
use goalkeeper::todo::{Phase, Status, Task, TodoList};
use serde_json::json;

use super::common::*;
use super::log;

#[test]
fn import_replaces_the_list_normalized_and_is_logged() {
    let mut s = planned();
    let imported = TodoList::new(vec![Phase {
        name: "Imported".into(),
        tasks: vec![
            task("i1", Status::Completed),
            task("i2", Status::Pending),
            task("i3", Status::InProgress),
            task("i4", Status::InProgress),
        ],
    }]);
    let result = s
        .write(&session(), |tx| {
            tx.todo_import(imported, "TODO.md", &Caller::default(), NOW)
        })
        .unwrap();
    assert!(!result.is_error);
    assert_eq!(result.details.op.as_deref(), Some("import"));
    assert_eq!(result.details.version, 2);
    assert_eq!(tasks(&mut s), "Imported: [x] i1, [ ] i2, [/] i3, [ ] i4");
    let last = log(&mut s).pop().unwrap();
    assert_eq!(last.actor, User.as_str());
    assert_eq!(last.op.as_deref(), Some("import"));
    assert_eq!(last.payload, json!({"op": "import", "source": "TODO.md"}));
}

#[test]
fn import_promotes_when_nothing_is_in_progress() {
    let mut s = store();
    let imported = TodoList::new(vec![Phase {
        name: "P".into(),
        tasks: vec![task("a", Status::Blocked), task("b", Status::Pending)],
    }]);
    s.write(&session(), |tx| {
        tx.todo_import(imported, "TODO.md", &Caller::default(), NOW)
    })
    .unwrap();
    assert_eq!(tasks(&mut s), "P: [!] a, [/] b");
}

#[test]
fn import_refuses_an_invalid_list_and_changes_nothing() {
    let mut s = planned();
    let before = (list(&mut s), version(&mut s), log(&mut s));
    let mut noted = task("n", Status::Pending);
    noted.blocker = Some("stale".into());
    let cases = [
        (
            TodoList::new(vec![
                Phase {
                    name: "A".into(),
                    tasks: vec![Task::pending("x")],
                },
                Phase {
                    name: "B".into(),
                    tasks: vec![Task::pending("x")],
                },
            ]),
            "cannot import TODO.md: task \"x\" appears twice; nothing was imported",
        ),
        (
            TodoList::new(vec![Phase::new("A"), Phase::new("A")]),
            "cannot import TODO.md: phase \"A\" appears twice; nothing was imported",
        ),
        (
            TodoList::new(vec![Phase {
                name: " A".into(),
                tasks: vec![Task::pending(""), noted],
            }]),
            "cannot import TODO.md: phase name \" A\" has surrounding whitespace; \
             task content is empty; give some text; \
             task \"n\" has a blocker note but is pending; nothing was imported",
        ),
    ];
    for (list_in, message) in cases {
        let err = s
            .write(&session(), |tx| {
                tx.todo_import(list_in, "TODO.md", &Caller::default(), NOW)
            })
            .map(|_| ())
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Rejected);
        assert_eq!(err.to_string(), message);
        assert_eq!((list(&mut s), version(&mut s), log(&mut s)), before);
    }
}

/// Runs `json` as the named agent `name` (`None`: the session's own).
fn as_agent(
    s: &mut goalkeeper::Store,
    name: Option<&str>,
    json: &str,
) -> goalkeeper::todo::TodoResult {
    call_by(
        s,
        &mut caller_as(name),
        json,
        goalkeeper::todo::Actor::Agent,
    )
}

/// An export read back by an import hands nobody's task to anyone: w1
/// still holds its task, claimed when it was, and may finish it; the
/// main agent is refused it; the person's import promoted nothing.
#[test]
fn an_exported_list_imported_keeps_each_holder_and_claim() {
    let mut s = store();
    as_agent(&mut s, Some("w1"), r#"{"op":"init","items":["a","b","c"]}"#);
    as_agent(&mut s, Some("w2"), r#"{"op":"start","task":"b"}"#);
    as_agent(&mut s, Some("w2"), r#"{"op":"done","task":"b"}"#);
    let before = list(&mut s);
    let markdown = goalkeeper::todo::to_markdown(&before);
    assert!(
        markdown.contains("- [/] a <!-- held-by: w1 since 2025-11-29T18:40:00Z -->\n"),
        "{markdown}"
    );
    let imported = goalkeeper::todo::from_markdown(&markdown).unwrap();
    s.write(&session(), |tx| {
        tx.todo_import(imported, "TODO.md", &Caller::default(), NOW + 1)
    })
    .unwrap();
    assert_eq!(json_of(&list(&mut s)), json_of(&before));
    let main = as_agent(&mut s, None, r#"{"op":"done","task":"a"}"#);
    assert!(main.is_error, "{}", main.text());
    assert!(
        main.text()
            .starts_with("Errors: task \"a\" is held by agent \"w1\" (claimed 0 s ago"),
        "{}",
        main.text()
    );
    let w1 = as_agent(&mut s, Some("w1"), r#"{"op":"done","task":"a"}"#);
    assert!(!w1.is_error, "{}", w1.text());
}

/// A person's import into a session named agents work on promotes no
/// task, even when the list it brings names none; into a session no
/// named agent ever called, it does as always.
#[test]
fn a_persons_import_where_agents_work_promotes_nothing() {
    let mut s = store();
    as_agent(&mut s, Some("w1"), r#"{"op":"init","items":["a"]}"#);
    let plain = TodoList::new(vec![Phase {
        name: "P".into(),
        tasks: vec![task("x", Status::Pending), task("y", Status::Pending)],
    }]);
    s.write(&session(), |tx| {
        tx.todo_import(plain.clone(), "TODO.md", &Caller::default(), NOW)
    })
    .unwrap();
    assert_eq!(tasks(&mut s), "P: [ ] x, [ ] y");
    let mut fresh = store();
    fresh
        .write(&session(), |tx| {
            tx.todo_import(plain, "TODO.md", &Caller::default(), NOW)
        })
        .unwrap();
    assert_eq!(tasks(&mut fresh), "P: [/] x, [ ] y");
}

/// A claim the file names for an agent the session has not seen is
/// granted the importer's lease from the claim's time.
#[test]
fn an_imported_claim_lasts_the_lease_from_its_time() {
    let mut s = store();
    let markdown = "# P\n- [/] a <!-- held-by: w9 since 2025-11-29T18:40:00Z -->\n- [ ] b\n";
    let imported = goalkeeper::todo::from_markdown(markdown).unwrap();
    s.write(&session(), |tx| {
        tx.todo_import(imported, "TODO.md", &Caller::default(), NOW + 60_000)
    })
    .unwrap();
    let mut w2 = caller_as(Some("w2"));
    let start = r#"{"op":"start","task":"a"}"#;
    let early = s
        .todo(
            &session(),
            goalkeeper::todo::Call::Json(start),
            goalkeeper::todo::Actor::Agent,
            &mut w2,
            NOW + 599_000,
        )
        .unwrap();
    assert!(
        early
            .text()
            .starts_with("Errors: task \"a\" is held by agent \"w9\""),
        "{}",
        early.text()
    );
    let late = s
        .todo(
            &session(),
            goalkeeper::todo::Call::Json(start),
            goalkeeper::todo::Actor::Agent,
            &mut w2,
            NOW + 600_000,
        )
        .unwrap();
    assert!(!late.is_error, "{}", late.text());
}

/// The `after` link comes back with the list: completing the task waited
/// for unblocks the waiting one, as before the export.
#[test]
fn an_after_link_survives_export_and_import() {
    let mut s = store();
    user(&mut s, r#"{"op":"init","items":["a","b"]}"#);
    user(&mut s, r#"{"op":"block","task":"b","after":"a"}"#);
    let markdown = goalkeeper::todo::to_markdown(&list(&mut s));
    assert!(
        markdown.contains("- [!] b <!-- blocker: after a --> <!-- after: a -->\n"),
        "{markdown}"
    );
    let imported = goalkeeper::todo::from_markdown(&markdown).unwrap();
    s.write(&session(), |tx| {
        tx.todo_import(imported, "TODO.md", &Caller::default(), NOW)
    })
    .unwrap();
    agent(&mut s, r#"{"op":"done","task":"a"}"#);
    assert_eq!(tasks(&mut s), "Tasks: [x] a, [/] b");
}

/// A list whose `after` names no other task is refused whole.
#[test]
fn an_after_naming_no_task_is_refused_and_changes_nothing() {
    let mut s = planned();
    let before = (json_of(&list(&mut s)), version(&mut s));
    let mut waits = task("b", Status::Blocked);
    waits.after = Some("gone".into());
    let bad = TodoList::new(vec![Phase {
        name: "P".into(),
        tasks: vec![waits],
    }]);
    let err = s
        .write(&session(), |tx| {
            tx.todo_import(bad, "TODO.md", &Caller::default(), NOW)
        })
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Rejected);
    assert_eq!(
        err.to_string(),
        "cannot import TODO.md: task \"b\" waits for \"gone\", which is no other task of the list; nothing was imported"
    );
    assert_eq!((json_of(&list(&mut s)), version(&mut s)), before);
}
