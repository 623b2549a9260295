//! The diff, the inverse patch and their replay.

use super::*;
use crate::todo::Status;

fn list(phases: &[(&str, &[(&str, Status)])]) -> TodoList {
    TodoList::new(
        phases
            .iter()
            .map(|(name, tasks)| Phase {
                name: (*name).into(),
                tasks: tasks
                    .iter()
                    .map(|(c, s)| {
                        let mut task = Task::pending(*c);
                        task.status = *s;
                        task
                    })
                    .collect(),
            })
            .collect(),
    )
}

use Status::{Completed as C, InProgress as I, Pending as P};

impl Change {
    fn keyed_clone(&self, list: &TodoList) -> KeyedList {
        KeyedList {
            list: list.clone(),
            phase_keys: self.phase_keys.clone(),
            task_keys: self.task_keys.clone(),
        }
    }
}

#[test]
fn a_keyed_change_keeps_the_keys_of_the_new_list() {
    let old = KeyedList::positional(list(&[("A", &[("a", I), ("b", P)])]));
    let new = old
        .clone()
        .change_to(&list(&[("A", &[("b", I), ("c", P)])]))
        .keyed(list(&[("A", &[("b", I), ("c", P)])]));
    assert_eq!(new.task_keys, vec![vec![1, 2]]);
    let (forward, inverse) = old.change_to_keyed(&new);
    assert!(!forward.clear);
    assert_eq!(old.clone().apply(&forward).unwrap(), new);
    assert_eq!(new.apply(&inverse).unwrap(), old);
}

#[test]
fn a_status_change_is_one_row_and_its_inverse_one_row() {
    let old = KeyedList::positional(list(&[("A", &[("a", I), ("b", P)]), ("B", &[("c", P)])]));
    let new = list(&[("A", &[("a", C), ("b", I)]), ("B", &[("c", P)])]);
    let change = old.change_to(&new);
    assert_eq!(change.forward.tasks_set.len(), 2);
    assert!(change.forward.tasks_put.is_empty() && !change.forward.clear);
    let keyed = change.keyed_clone(&new);
    assert_eq!(old.clone().apply(&change.forward).unwrap(), keyed);
    assert_eq!(keyed.apply(&change.inverse).unwrap(), old);
}

#[test]
fn appends_removals_and_new_phases_keep_the_other_keys() {
    let old = KeyedList::positional(list(&[("A", &[("a", I), ("b", P), ("c", P)]), ("B", &[])]));
    let new = list(&[("A", &[("a", I), ("c", P), ("d", P)]), ("C", &[("e", P)])]);
    let change = old.change_to(&new);
    assert!(!change.forward.clear);
    assert_eq!(change.task_keys, vec![vec![0, 2, 3], vec![0]]);
    assert_eq!(change.phase_keys, vec![0, 2]);
    let keyed = change.keyed_clone(&new);
    assert_eq!(old.clone().apply(&change.forward).unwrap(), keyed);
    assert_eq!(keyed.apply(&change.inverse).unwrap(), old);
}

#[test]
fn a_reordering_rewrites_the_list_and_undoes_exactly() {
    let old = KeyedList::positional(list(&[("A", &[("a", I), ("b", P)])]));
    for new in [
        list(&[("A", &[("b", I), ("a", P)])]),
        list(&[("A", &[("x", I), ("a", P)])]),
        list(&[("B", &[]), ("A", &[("a", I)])]),
    ] {
        let change = old.change_to(&new);
        assert!(change.forward.clear, "{new:?}");
        let keyed = change.keyed_clone(&new);
        assert_eq!(old.clone().apply(&change.forward).unwrap(), keyed);
        assert_eq!(keyed.apply(&change.inverse).unwrap(), old);
    }
}

#[test]
fn a_patch_that_does_not_fit_is_refused() {
    let keyed = KeyedList::positional(list(&[("A", &[("a", P)])]));
    let patch = Patch {
        tasks_del: vec![(0, 7)],
        ..Patch::default()
    };
    assert_eq!(keyed.apply(&patch), None);
}

#[test]
fn patches_round_trip_through_json() {
    let old = KeyedList::positional(list(&[("A", &[("a", I), ("b", P)])]));
    let change = old.change_to(&list(&[("A", &[("a", C)]), ("Z", &[("z", I)])]));
    let text = change.inverse.to_json();
    assert_eq!(Patch::from_json(&text).unwrap(), change.inverse);
}
