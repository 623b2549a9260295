//! Undo over the stored history (DESIGN.md §7): every mutation keeps
//! the patch that undoes it, for the last `UNDO_DEPTH` versions. Undo to
//! any depth within that bound gives exactly the list of the version it
//! restores, whatever the operations were and whoever reopened the file in
//! between; beyond it, undo is refused and nothing changes.

use std::path::Path;

use crate::common;
use common::strategies::{Step, steps};
use common::{NOW, session};
use goalkeeper::store::Caller;
use goalkeeper::store::UNDO_DEPTH;
use goalkeeper::todo::{self, Actor, Call, TodoList};
use goalkeeper::{SessionId, Store};
use proptest::prelude::*;

/// What the store should hold: the list of every version and where an
/// undo at that version goes (`None`: the first state).
struct Model {
    states: Vec<TodoList>,
    undo_to: Vec<Option<usize>>,
}

impl Model {
    fn new() -> Model {
        Model {
            states: vec![TodoList::default()],
            undo_to: vec![None],
        }
    }

    fn current(&self) -> usize {
        self.states.len() - 1
    }

    fn push(&mut self, list: TodoList, undo_to: Option<usize>) {
        self.states.push(list);
        self.undo_to.push(undo_to);
    }
}

/// One step in a store opened for it, as a separate process would.
fn reopen(db: &Path) -> Store {
    Store::open(db).expect("the database reopens")
}

fn undo_step(
    db: &Path,
    s: &SessionId,
    model: &mut Model,
    context: &str,
) -> Result<(), TestCaseError> {
    let mut store = reopen(db);
    let before = store.read(s, |tx| tx.todo_list()).unwrap();
    let current = model.current();
    let outcome = store.write(s, |tx| tx.todo_undo(NOW));
    match model.undo_to[current] {
        None => {
            let e = outcome.map(|_| ()).unwrap_err();
            prop_assert!(
                e.to_string().starts_with("nothing to undo"),
                "{}: {}",
                context,
                e
            );
            prop_assert_eq!(
                store.read(s, |tx| tx.todo_list()).unwrap(),
                before,
                "{}",
                context
            );
        }
        Some(target) if (target as i64) < current as i64 - UNDO_DEPTH => {
            let e = outcome.map(|_| ()).unwrap_err();
            prop_assert!(
                e.to_string().starts_with("nothing more to undo"),
                "{}: {}",
                context,
                e
            );
            prop_assert_eq!(
                store.read(s, |tx| tx.todo_list()).unwrap(),
                before,
                "{}",
                context
            );
        }
        Some(target) => {
            let result = outcome.map_err(|e| TestCaseError::fail(format!("{context}: {e}")))?;
            prop_assert_eq!(&result.details.phases, &model.states[target], "{}", context);
            drop(store);
            let (after, version) = reopen(db).read(s, |tx| tx.todo_list()).unwrap();
            prop_assert_eq!(&after, &model.states[target], "{} (reopened)", context);
            prop_assert_eq!(version as usize, current + 1, "{}", context);
            let next = model.undo_to[target];
            model.push(after, next);
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Random calls and undos, each in a freshly opened store, then a run
    /// of undos: each undo restores exactly the version the model says.
    #[test]
    fn undo_restores_exactly_each_version_across_reopens(steps in steps(), tail in 1usize..40) {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("undo.db");
        let s = session();
        let mut model = Model::new();
        for (i, step) in steps.iter().enumerate() {
            let context = format!("step {i} {step:?}");
            match step {
                Step::Call(actor, text) => {
                    let expected = todo::run(model.states[model.current()].clone(), Call::Json(text), *actor);
                    let result = reopen(&db).todo(&s, Call::Json(text), *actor, &mut Caller::default(), NOW).unwrap();
                    prop_assert_eq!(&result.details.phases, &expected.list, "{}", context);
                    if expected.is_mutation() {
                        let previous = model.current();
                        model.push(expected.list, Some(previous));
                    }
                    prop_assert_eq!(result.details.version as usize, model.current(), "{}", context);
                }
                Step::Undo => undo_step(&db, &s, &mut model, &context)?,
            }
        }
        for k in 0..tail {
            undo_step(&db, &s, &mut model, &format!("undo {k} of the tail"))?;
        }
        prop_assert_eq!(reopen(&db).admin().integrity_check().unwrap(), "ok");
    }
}

/// A run of undos walks back `UNDO_DEPTH / 2` changes (each undo is a
/// version too); the next one is refused with the bound in the message
/// and changes nothing.
#[test]
fn a_run_of_undos_stops_at_the_bound_with_a_clear_refusal() {
    let mut store = Store::open_in_memory().unwrap();
    let s = session();
    let mut lists = vec![TodoList::default()];
    let changes = UNDO_DEPTH as usize / 2 + 20;
    for i in 0..changes {
        let call = format!(r#"{{"op":"append","phase":"Work","items":["task {i}"]}}"#);
        let result = store
            .todo(
                &s,
                Call::Json(&call),
                Actor::Agent,
                &mut Caller::default(),
                NOW,
            )
            .unwrap();
        assert!(!result.is_error, "{}", result.text());
        lists.push(result.details.phases);
    }
    for k in 1..=UNDO_DEPTH as usize / 2 {
        let undone = store.write(&s, |tx| tx.todo_undo(NOW)).unwrap();
        assert_eq!(undone.details.phases, lists[changes - k], "undo #{k}");
    }
    let before = store.read(&s, |tx| tx.todo_list()).unwrap();
    let refused = store
        .write(&s, |tx| tx.todo_undo(NOW))
        .map(|_| ())
        .unwrap_err();
    assert_eq!(
        refused.to_string(),
        format!(
            "nothing more to undo in session s: undo reaches back {UNDO_DEPTH} versions of the list and version {}, which it would restore, is older; nothing was changed",
            changes - UNDO_DEPTH as usize / 2 - 1
        )
    );
    assert_eq!(refused.kind(), goalkeeper::ErrorKind::Rejected);
    assert_eq!(store.read(&s, |tx| tx.todo_list()).unwrap(), before);
}
