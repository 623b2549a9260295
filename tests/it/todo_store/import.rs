//! `todo import`: validated, normalized, logged; refused with nothing changed.

use goalkeeper::ErrorKind;
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
    let result = s.todo_import(&session(), imported, "TODO.md", NOW).unwrap();
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
    s.todo_import(&session(), imported, "TODO.md", NOW).unwrap();
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
            .todo_import(&session(), list_in, "TODO.md", NOW)
            .map(|_| ())
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Rejected);
        assert_eq!(err.to_string(), message);
        assert_eq!((list(&mut s), version(&mut s), log(&mut s)), before);
    }
}
