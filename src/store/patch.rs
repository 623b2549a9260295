//! A todo list as the store keeps it (rows with sort keys) and the patches
//! between two versions of it. Pure: the backends read and write rows; the
//! diff, the inverse patch that `todo undo` keeps, and the replay of those
//! patches live here, shared by every backend.
//!
//! Every phase has a position and every task a `(phase position, position)`
//! key. Keys are sort keys, not indexes: gaps are fine, and a task keeps its
//! key for as long as it stays where it is. That is what makes a mutation
//! cheap to store: `done` on one task of 10,000 changes one row, and the
//! patch that undoes it names that row and its old status. Only a change
//! that reorders what was kept (an `init` that rewrites the list, an import)
//! rewrites the list.

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};

use crate::todo::{Phase, Task, TodoList};

mod wire;

/// A list with the keys its rows have in the store: `phase_keys[i]` is the
/// position of `list.phases[i]`, `task_keys[i][j]` that of its `j`th task.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct KeyedList {
    pub list: TodoList,
    pub phase_keys: Vec<i64>,
    pub task_keys: Vec<Vec<i64>>,
}

/// What a change can rewrite of a task row: everything but its key and
/// text.
pub(crate) use crate::todo::TaskState as Fields;

/// True when no agent and no `after` is recorded: the row is stored in
/// the shorter form every list had before agents were named.
fn solo(f: &Fields) -> bool {
    f.agent.is_none() && f.since_ms.is_none() && f.after.is_none()
}

/// A task row: its key `(phase position, position)`, text and fields.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct TaskRow {
    pub key: (i64, i64),
    pub content: String,
    pub fields: Fields,
}

/// The part of a task row a status change rewrites: its key and fields.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct TaskSet {
    pub key: (i64, i64),
    pub fields: Fields,
}

/// Row changes that turn one version of a list into another, applied in
/// field order: `clear` (every row of the list goes), the deletions, the
/// insertions, then the updates. Stored as JSON text by every backend.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Patch {
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub clear: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub phases_del: Vec<i64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tasks_del: Vec<(i64, i64)>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub phases_put: Vec<(i64, String)>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tasks_put: Vec<TaskRow>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tasks_set: Vec<TaskSet>,
}

impl Patch {
    /// The JSON text the store keeps.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a patch serializes")
    }

    /// Reads a stored patch.
    pub(crate) fn from_json(text: &str) -> Result<Patch, String> {
        serde_json::from_str(text).map_err(|e| e.to_string())
    }
}

/// What storing a new version of a list takes: the rows to write, the
/// patch that brings the old version back, and the keys of the new list's
/// rows (`phase_keys[i]`, `task_keys[i][j]`, as in [`KeyedList`]).
#[derive(Debug)]
pub(crate) struct Change {
    pub forward: Patch,
    pub inverse: Patch,
    pub phase_keys: Vec<i64>,
    pub task_keys: Vec<Vec<i64>>,
}

impl Change {
    /// The new list with its keys.
    pub(crate) fn keyed(self, list: TodoList) -> KeyedList {
        KeyedList {
            list,
            phase_keys: self.phase_keys,
            task_keys: self.task_keys,
        }
    }
}

impl KeyedList {
    /// A list whose keys are its indexes (as a new list or a migrated one
    /// is first written).
    pub(crate) fn positional(list: TodoList) -> KeyedList {
        let phase_keys = (0..list.phases.len() as i64).collect();
        let task_keys = list
            .phases
            .iter()
            .map(|p| (0..p.tasks.len() as i64).collect())
            .collect();
        KeyedList {
            list,
            phase_keys,
            task_keys,
        }
    }

    /// Builds the list from rows read in key order. `None` when a task
    /// belongs to no phase or the rows are out of order.
    pub(crate) fn from_rows(
        phases: Vec<(i64, String)>,
        tasks: impl IntoIterator<Item = TaskRow>,
    ) -> Option<KeyedList> {
        let mut keyed = KeyedList::default();
        for (pos, name) in phases {
            if keyed.phase_keys.last().is_some_and(|&last| last >= pos) {
                return None;
            }
            keyed.phase_keys.push(pos);
            keyed.task_keys.push(Vec::new());
            keyed.list.phases.push(Phase::new(name));
        }
        let mut phase = 0;
        for TaskRow {
            key: (phase_pos, pos),
            content,
            fields,
        } in tasks
        {
            while keyed.phase_keys.get(phase).is_some_and(|&p| p < phase_pos) {
                phase += 1;
            }
            if keyed.phase_keys.get(phase) != Some(&phase_pos) {
                return None;
            }
            keyed.task_keys[phase].push(pos);
            keyed.list.phases[phase].tasks.push(fields.task(content));
        }
        Some(keyed)
    }

    /// Every task row, in key order.
    fn rows(&self) -> impl Iterator<Item = TaskRow> + '_ {
        self.list
            .phases
            .iter()
            .zip(&self.phase_keys)
            .zip(&self.task_keys)
            .flat_map(|((phase, &p), keys)| {
                phase
                    .tasks
                    .iter()
                    .zip(keys)
                    .map(move |(t, &k)| row(p, k, t))
            })
    }

    /// The patch that writes this list, keys and all, in place of
    /// whatever the session held.
    pub(crate) fn rebuild(&self) -> Patch {
        Patch {
            clear: true,
            phases_put: self
                .list
                .phases
                .iter()
                .zip(&self.phase_keys)
                .map(|(phase, &p)| (p, phase.name.clone()))
                .collect(),
            tasks_put: self.rows().collect(),
            ..Patch::default()
        }
    }

    /// Rewrites the status and notes of the rows `sets` names, in place
    /// (what a patch of status changes alone does, without rebuilding the
    /// list); false, with nothing changed, when one of them is not here.
    pub(crate) fn set_rows(&mut self, sets: &[TaskSet]) -> bool {
        let mut at = Vec::with_capacity(sets.len());
        for TaskSet { key: (p, k), .. } in sets {
            let Ok(phase) = self.phase_keys.binary_search(p) else {
                return false;
            };
            let Ok(task) = self.task_keys[phase].binary_search(k) else {
                return false;
            };
            at.push((phase, task));
        }
        for ((phase, task), set) in at.into_iter().zip(sets) {
            set.fields.put_on(&mut self.list.phases[phase].tasks[task]);
        }
        true
    }

    /// Applies `patch` in memory, as a backend applies it to its rows.
    /// `None` when the patch names a row that is not there (or puts one
    /// that is): the stored history does not fit this list.
    pub fn apply(self, patch: &Patch) -> Option<KeyedList> {
        let mut phases: BTreeMap<i64, String> = BTreeMap::new();
        let mut tasks: BTreeMap<(i64, i64), (String, Fields)> = BTreeMap::new();
        if !patch.clear {
            for ((phase, p), keys) in self
                .list
                .phases
                .into_iter()
                .zip(self.phase_keys)
                .zip(self.task_keys)
            {
                for (task, k) in phase.tasks.into_iter().zip(keys) {
                    let fields = task.state();
                    tasks.insert((p, k), (task.content, fields));
                }
                phases.insert(p, phase.name);
            }
        }
        for p in &patch.phases_del {
            phases.remove(p)?;
        }
        for key in &patch.tasks_del {
            tasks.remove(key)?;
        }
        for (p, name) in &patch.phases_put {
            if phases.insert(*p, name.clone()).is_some() {
                return None;
            }
        }
        for row in &patch.tasks_put {
            let fields = (row.content.clone(), row.fields.clone());
            if tasks.insert(row.key, fields).is_some() {
                return None;
            }
        }
        for set in &patch.tasks_set {
            tasks.get_mut(&set.key)?.1 = set.fields.clone();
        }
        KeyedList::from_rows(
            phases.into_iter().collect(),
            tasks.into_iter().map(|(key, (content, fields))| TaskRow {
                key,
                content,
                fields,
            }),
        )
    }

    /// The change that stores `new` in place of this list: as few rows as
    /// possible when `new` keeps this list's order (tasks changed, removed,
    /// appended at the end of their phase; phases removed or appended at
    /// the end), else a rewrite of the whole list.
    pub(crate) fn change_to(&self, new: &TodoList) -> Change {
        match self.incremental(new) {
            Some((forward, inverse, phase_keys, task_keys)) => Change {
                forward,
                inverse,
                phase_keys,
                task_keys,
            },
            None => {
                let keyed = KeyedList::positional(new.clone());
                Change {
                    forward: keyed.rebuild(),
                    inverse: self.rebuild(),
                    phase_keys: keyed.phase_keys,
                    task_keys: keyed.task_keys,
                }
            }
        }
    }

    /// The rows that turn this list into `new` keeping `new`'s own keys
    /// (as undo writes a rebuilt version), and the patch back.
    pub(crate) fn change_to_keyed(&self, new: &KeyedList) -> (Patch, Patch) {
        let mut forward = Patch::default();
        let mut inverse = Patch::default();
        let old_phases: BTreeMap<i64, &str> = self
            .phase_keys
            .iter()
            .zip(&self.list.phases)
            .map(|(&p, phase)| (p, phase.name.as_str()))
            .collect();
        let new_phases: BTreeMap<i64, &str> = new
            .phase_keys
            .iter()
            .zip(&new.list.phases)
            .map(|(&p, phase)| (p, phase.name.as_str()))
            .collect();
        for (&p, &name) in &old_phases {
            if new_phases.get(&p) != Some(&name) {
                forward.phases_del.push(p);
                inverse.phases_put.push((p, name.to_owned()));
            }
        }
        for (&p, &name) in &new_phases {
            if old_phases.get(&p) != Some(&name) {
                forward.phases_put.push((p, name.to_owned()));
                inverse.phases_del.push(p);
            }
        }
        let old_rows: BTreeMap<(i64, i64), &Task> = self.keyed_tasks().collect();
        let new_rows: BTreeMap<(i64, i64), &Task> = new.keyed_tasks().collect();
        for (&(p, k), &was) in &old_rows {
            match new_rows.get(&(p, k)) {
                Some(now) if now.content == was.content => {
                    if *now != was {
                        forward.tasks_set.push(set(p, k, now));
                        inverse.tasks_set.push(set(p, k, was));
                    }
                }
                _ => {
                    forward.tasks_del.push((p, k));
                    inverse.tasks_put.push(row(p, k, was));
                }
            }
        }
        for (&(p, k), &now) in &new_rows {
            if old_rows
                .get(&(p, k))
                .is_none_or(|was| was.content != now.content)
            {
                forward.tasks_put.push(row(p, k, now));
                inverse.tasks_del.push((p, k));
            }
        }
        (forward, inverse)
    }

    /// Every task with its key.
    fn keyed_tasks(&self) -> impl Iterator<Item = ((i64, i64), &Task)> {
        self.list
            .phases
            .iter()
            .zip(&self.phase_keys)
            .zip(&self.task_keys)
            .flat_map(|((phase, &p), keys)| {
                phase.tasks.iter().zip(keys).map(move |(t, &k)| ((p, k), t))
            })
    }

    /// `(forward, inverse, phase keys, task keys)` of an in-order change.
    #[allow(clippy::type_complexity)]
    fn incremental(&self, new: &TodoList) -> Option<(Patch, Patch, Vec<i64>, Vec<Vec<i64>>)> {
        let old = &self.list;
        let mut forward = Patch::default();
        let mut inverse = Patch::default();
        let by_name: HashMap<&str, usize> = old
            .phases
            .iter()
            .enumerate()
            .map(|(i, p)| (p.name.as_str(), i))
            .collect();
        let mut kept_phase = vec![false; old.phases.len()];
        let mut last_kept: Option<usize> = None;
        let mut next_phase_key = self.phase_keys.last().map_or(0, |&k| k + 1);
        let mut appended_phase = false;
        let mut phase_keys = Vec::with_capacity(new.phases.len());
        let mut task_keys = Vec::with_capacity(new.phases.len());
        for phase in &new.phases {
            match by_name.get(phase.name.as_str()) {
                Some(&i) => {
                    if appended_phase || last_kept.is_some_and(|l| l >= i) {
                        return None;
                    }
                    last_kept = Some(i);
                    kept_phase[i] = true;
                    let p = self.phase_keys[i];
                    phase_keys.push(p);
                    task_keys.push(diff_phase(
                        p,
                        &old.phases[i].tasks,
                        &self.task_keys[i],
                        &phase.tasks,
                        &mut forward,
                        &mut inverse,
                    )?);
                }
                None => {
                    appended_phase = true;
                    let p = next_phase_key;
                    next_phase_key += 1;
                    forward.phases_put.push((p, phase.name.clone()));
                    inverse.phases_del.push(p);
                    let keys: Vec<i64> = (0..phase.tasks.len() as i64).collect();
                    for (task, &k) in phase.tasks.iter().zip(&keys) {
                        forward.tasks_put.push(row(p, k, task));
                        inverse.tasks_del.push((p, k));
                    }
                    phase_keys.push(p);
                    task_keys.push(keys);
                }
            }
        }
        for (i, kept) in kept_phase.iter().enumerate() {
            if !kept {
                let p = self.phase_keys[i];
                forward.phases_del.push(p);
                inverse.phases_put.push((p, old.phases[i].name.clone()));
                for (task, &k) in old.phases[i].tasks.iter().zip(&self.task_keys[i]) {
                    forward.tasks_del.push((p, k));
                    inverse.tasks_put.push(row(p, k, task));
                }
            }
        }
        Some((forward, inverse, phase_keys, task_keys))
    }
}

/// The keys of `new`'s tasks in phase `p`, recording the row changes from
/// `old`; `None` when `new` does not keep `old`'s order (a kept task after
/// an added one, or two kept tasks swapped).
fn diff_phase(
    p: i64,
    old: &[Task],
    old_keys: &[i64],
    new: &[Task],
    forward: &mut Patch,
    inverse: &mut Patch,
) -> Option<Vec<i64>> {
    let mut keys = Vec::with_capacity(new.len());
    let mut next_key = old_keys.last().map_or(0, |&k| k + 1);
    // Old tasks by content, built only when the two lists stop walking in
    // step (a removed task); the common change keeps every task in place.
    let mut index: Option<HashMap<&str, usize>> = None;
    let mut cursor = 0;
    let mut appending = false;
    let remove = |from: usize, to: usize, forward: &mut Patch, inverse: &mut Patch| {
        for m in from..to {
            forward.tasks_del.push((p, old_keys[m]));
            inverse.tasks_put.push(row(p, old_keys[m], &old[m]));
        }
    };
    for task in new {
        let found = if old.get(cursor).is_some_and(|t| t.content == task.content) {
            Some(cursor)
        } else {
            let index = index.get_or_insert_with(|| {
                old.iter()
                    .enumerate()
                    .map(|(m, t)| (t.content.as_str(), m))
                    .collect()
            });
            index.get(task.content.as_str()).copied()
        };
        match found {
            Some(m) if m >= cursor && !appending => {
                remove(cursor, m, forward, inverse);
                cursor = m + 1;
                let was = &old[m];
                if was.state() != task.state() {
                    forward.tasks_set.push(set(p, old_keys[m], task));
                    inverse.tasks_set.push(set(p, old_keys[m], was));
                }
                keys.push(old_keys[m]);
            }
            Some(_) => return None,
            None => {
                appending = true;
                forward.tasks_put.push(row(p, next_key, task));
                inverse.tasks_del.push((p, next_key));
                keys.push(next_key);
                next_key += 1;
            }
        }
    }
    remove(cursor, old.len(), forward, inverse);
    Some(keys)
}

fn row(p: i64, k: i64, task: &Task) -> TaskRow {
    TaskRow {
        key: (p, k),
        content: task.content.clone(),
        fields: task.state(),
    }
}

pub(crate) fn set(p: i64, k: i64, task: &Task) -> TaskSet {
    TaskSet {
        key: (p, k),
        fields: task.state(),
    }
}

/// One stored step of a list's history, as undo reads it.
#[derive(Clone, Debug)]
pub(crate) struct UndoStep {
    /// The version this step undoes.
    pub version: i64,
    /// For an undo version: the version whose list it holds.
    pub restores: Option<i64>,
    /// The patch from this version's list to the one before it.
    pub patch: String,
}

/// Why the list of a version could not be rebuilt.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Rebuild {
    /// The history of this version is no longer kept.
    Missing(i64),
    /// A stored patch does not read or does not fit.
    Corrupt(String),
}

/// The list of version `target`, rebuilt from `current` (the list of
/// version `version`) and the stored steps of the versions in between
/// (any order). An undo version holds exactly the rows of the version it
/// restored, so the walk jumps there instead of replaying back over it.
pub(crate) fn rebuild(
    current: KeyedList,
    version: i64,
    target: i64,
    steps: &[UndoStep],
) -> Result<KeyedList, Rebuild> {
    let by_version: HashMap<i64, &UndoStep> = steps.iter().map(|s| (s.version, s)).collect();
    let mut keyed = current;
    let mut v = version;
    while v > target {
        let step = by_version.get(&v).ok_or(Rebuild::Missing(v))?;
        match step.restores {
            Some(r) if r >= target && r < v => v = r,
            _ => {
                let patch = Patch::from_json(&step.patch)
                    .map_err(|e| Rebuild::Corrupt(format!("version {v}: {e}")))?;
                keyed = keyed.apply(&patch).ok_or_else(|| {
                    Rebuild::Corrupt(format!("version {v}: the patch does not fit the list"))
                })?;
                v -= 1;
            }
        }
    }
    Ok(keyed)
}

#[cfg(test)]
mod tests;
