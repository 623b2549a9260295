//! Applying an [`Op`] to a [`TodoList`]: the pure state transition of the
//! todo tool (DESIGN.md §2.1–§2.3). No I/O happens here.
//!
//! Every op first checks everything it needs (targets exist, no duplicates,
//! limits) and only then changes the list, so an error leaves the list
//! exactly as it was.
//!
//! Decisions where the design leaves a choice (also in the README):
//! - A bulk `done` (a phase, or every task) completes the *open* tasks in
//!   scope; closed tasks keep their status, so a bulk `done` never turns
//!   dropped work into finished work. A targeted `done` completes its task
//!   whatever its status.
//! - A bulk user `drop` abandons every task in scope except completed ones
//!   and stamps them `dropped_by: user`; finished work stays finished.
//! - `block` without a `reason` keeps a blocked task's existing note.
//! - `rm` without a target empties every phase but keeps the phase names.
//! - A call that leaves the list exactly as it was (`start` on the task in
//!   progress, `done` on a completed task, an agent `rm` of closed work) is
//!   a no-op: it succeeds, and [`Applied::list_changed`] is false.

use std::collections::HashSet;

use serde::Serialize;

use super::call::{Note, Op, PhaseItems, Release, Target};
use super::model::{DroppedBy, Phase, Status, Task, TodoList};
use super::team::{self, Caller};
use super::text::MAX_TASKS;
use crate::actor::Actor;

/// A task that moved into `completed` during a call.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CompletedTask {
    /// The phase it sits in.
    pub phase: String,
    /// Its content.
    pub content: String,
}

/// A task the call changed: added, removed, or given another status or
/// note (auto-advance included).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ChangedTask {
    /// The phase it sits in (sat in, when removed).
    pub phase: String,
    /// Its content.
    pub content: String,
    /// Its status before the call; `None` when the call added it.
    pub before: Option<Status>,
    /// Its status after the call; `None` when the call removed it.
    pub after: Option<Status>,
}

/// What a successful call did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Applied {
    /// Tasks that moved into `completed`.
    pub completed: Vec<CompletedTask>,
    /// Every task the call changed, in list order (removed tasks first).
    pub changed: Vec<ChangedTask>,
    /// False when the list is exactly as it was: a no-op (DESIGN.md §2.2),
    /// which is stored as no new version and counts as no progress.
    pub list_changed: bool,
}

/// Applies `op` for `actor`. On success the list holds the new state,
/// normalized (one `in_progress` at most, auto-advanced), and the result
/// says what changed. On error the list is untouched and every problem is
/// returned. `view` changes nothing and does not normalize.
pub fn apply(list: &mut TodoList, op: &Op, actor: Actor) -> Result<Applied, Vec<String>> {
    apply_as(list, op, &Caller::solo(actor))
}

/// [`apply`] for `caller`, one of possibly several agents on the list
/// (DESIGN.md §2.5): another agent's claim is refused or skipped, the
/// caller's own next task is the one it is advanced to, and tasks waiting
/// `after` a task the call completed are unblocked.
pub fn apply_as(list: &mut TodoList, op: &Op, caller: &Caller<'_>) -> Result<Applied, Vec<String>> {
    if matches!(op, Op::View(_)) {
        return Ok(Applied::default());
    }
    team::check(list, op, caller)?;
    let actor = caller.actor;
    // An op that changes which tasks exist is compared by content; every
    // other op by a snapshot of the states (see `OpKind::reshapes`).
    let before = if op.kind().reshapes(actor) {
        Before::List(list.clone())
    } else {
        Before::States(states(list))
    };
    let completed = change(list, op, caller)?;
    let unblocked = team::follow_afters(list);
    // A person's call promotes the next task only where no named agent
    // works; a release hands the freed tasks to nobody.
    let named = caller.agent.is_some()
        || !caller.team.leases.is_empty()
        || list.tasks().any(|(_, t)| t.agent.is_some());
    if !matches!(op, Op::Release(_) | Op::Check(..)) {
        team::settle(
            list.phases.iter_mut().flat_map(|p| p.tasks.iter_mut()),
            caller,
            named,
            unblocked,
        );
    }
    let (changed, list_changed) = match before {
        Before::List(before) => {
            let changed = diff_by_content(&before, list);
            let list_changed = before != *list;
            (changed, list_changed)
        }
        Before::States(before) => {
            let changed = diff_in_place(&before, list);
            let list_changed = !changed.is_empty() || list.phases.len() != before.len();
            (changed, list_changed)
        }
    };
    Ok(Applied {
        completed,
        changed,
        list_changed,
    })
}

fn change(
    list: &mut TodoList,
    op: &Op,
    caller: &Caller<'_>,
) -> Result<Vec<CompletedTask>, Vec<String>> {
    let actor = caller.actor;
    let mut completed = Vec::new();
    match op {
        Op::View(_) => {}
        Op::Release(what) => release(list, what)?,
        Op::Check(task, command) => {
            if let Some(command) = command {
                match crate::check::command(command) {
                    Ok(checked) if checked == *command => {}
                    Ok(_) => return Err(vec!["the check is not trimmed".into()]),
                    Err(e) => return Err(vec![e]),
                }
            }
            let (p, t) = find_task(list, task).map_err(|e| vec![e])?;
            list.phases[p].tasks[t].check.clone_from(command);
        }
        Op::Init(phases) => init(list, phases, actor)?,
        Op::Start(task) => {
            let (p, t) = find_task(list, task).map_err(|e| vec![e])?;
            let target = list.phases[..p]
                .iter()
                .map(|p| p.tasks.len())
                .sum::<usize>()
                + t;
            start(
                list.phases.iter_mut().flat_map(|p| p.tasks.iter_mut()),
                target,
                caller,
            );
        }
        Op::Done(target) | Op::Drop(target) | Op::Block(target, _) | Op::Unblock(target) => {
            let targeted = matches!(target, Target::Task(_));
            for_each_target(list, target, |phase, task| {
                // A bulk change leaves another agent's task alone.
                if !targeted && caller.blocked_by_claim(task) {
                    return;
                }
                if edit_task(task, op, actor, targeted) {
                    task.claim(caller.agent, caller.team.now_ms);
                    completed.push(CompletedTask {
                        phase: phase.to_owned(),
                        content: task.content.clone(),
                    });
                }
            })?;
        }
        Op::Rm(target) => rm(list, op, target, caller)?,
        Op::Append(phase, items) => append(list, phase, items)?,
    }
    Ok(completed)
}

/// The list before a call, as much of it as the comparison needs.
enum Before {
    List(TodoList),
    States(Vec<Vec<State>>),
}

/// What a call can change about a task in place.
type State = super::model::TaskState;

fn state(task: &Task) -> State {
    task.state()
}

fn states(list: &TodoList) -> Vec<Vec<State>> {
    list.phases
        .iter()
        .map(|p| p.tasks.iter().map(state).collect())
        .collect()
}

/// The tasks whose state differs position by position, and the tasks
/// appended after each phase's old end.
fn diff_in_place(before: &[Vec<State>], list: &TodoList) -> Vec<ChangedTask> {
    let mut changed = Vec::new();
    for (p, phase) in list.phases.iter().enumerate() {
        let old = before.get(p).map_or(&[][..], Vec::as_slice);
        for (t, task) in phase.tasks.iter().enumerate() {
            let was = old.get(t);
            if was.is_some_and(|was| *was == state(task)) {
                continue;
            }
            changed.push(ChangedTask {
                phase: phase.name.clone(),
                content: task.content.clone(),
                before: was.map(|w| w.status),
                after: Some(task.status),
            });
        }
    }
    changed
}

/// The tasks removed, then the tasks added or changed, by content.
fn diff_by_content(before: &TodoList, after: &TodoList) -> Vec<ChangedTask> {
    let old: std::collections::HashMap<&str, (&str, &Task)> = before
        .phases
        .iter()
        .flat_map(|p| {
            p.tasks
                .iter()
                .map(move |t| (t.content.as_str(), (p.name.as_str(), t)))
        })
        .collect();
    let kept: HashSet<&str> = after.tasks().map(|(_, t)| t.content.as_str()).collect();
    let mut changed: Vec<ChangedTask> = before
        .phases
        .iter()
        .flat_map(|p| p.tasks.iter().map(move |t| (p, t)))
        .filter(|(_, t)| !kept.contains(t.content.as_str()))
        .map(|(p, t)| ChangedTask {
            phase: p.name.clone(),
            content: t.content.clone(),
            before: Some(t.status),
            after: None,
        })
        .collect();
    for phase in &after.phases {
        for task in &phase.tasks {
            let was = old.get(task.content.as_str());
            if was.is_some_and(|(name, was)| *name == phase.name && state(was) == state(task)) {
                continue;
            }
            changed.push(ChangedTask {
                phase: phase.name.clone(),
                content: task.content.clone(),
                before: was.map(|(_, w)| w.status),
                after: Some(task.status),
            });
        }
    }
    changed
}

/// Restores the one-task-in-progress rule as a person's change leaves it
/// (DESIGN.md §2.2): of several `in_progress` tasks of one holder only the
/// earliest stays; with none in progress, the earliest `pending` task is
/// promoted. `blocked` tasks are never promoted.
pub fn normalize(list: &mut TodoList) {
    normalize_import(list, false);
}

/// [`normalize`] for a person's import into a session where named agents
/// already work (`named`) or not: a task waiting `after` one the list
/// has completed is unblocked first (DESIGN.md §2.5), and nothing is
/// promoted where named agents work, which the list may say too (a
/// holder or a finisher it names), as for any other call of a person.
pub(crate) fn normalize_import(list: &mut TodoList, named: bool) {
    team::follow_afters(list);
    let named = named || list.tasks().any(|(_, t)| t.agent.is_some());
    team::settle(
        list.phases.iter_mut().flat_map(|p| p.tasks.iter_mut()),
        &Caller::solo(Actor::User),
        named,
        None,
    );
}

/// `start`: task number `target` of `tasks` goes in progress for the
/// caller, and every other task the caller held goes back to pending. The
/// store's in-place path runs it on the rows it read, which hold every
/// task in progress.
pub(crate) fn start<'t>(
    tasks: impl IntoIterator<Item = &'t mut Task>,
    target: usize,
    caller: &Caller<'_>,
) {
    for (i, task) in tasks.into_iter().enumerate() {
        if i == target {
            let already =
                task.status == Status::InProgress && task.agent.as_deref() == caller.agent;
            if !already {
                task.set_status(Status::InProgress);
                task.claim(caller.agent, caller.team.now_ms);
            }
        } else if task.status == Status::InProgress && task.agent.as_deref() == caller.agent {
            task.set_status(Status::Pending);
        }
    }
}

/// What `done`, `drop`, `block`, `unblock` and an agent's `rm` do to one
/// task in their scope (`targeted`: the call named this task). Returns true
/// when the task moved into `completed`. Every other op leaves the task
/// as it is. The store's in-place path runs the same function on the one
/// row a targeted call names.
pub(crate) fn edit_task(task: &mut Task, op: &Op, actor: Actor, targeted: bool) -> bool {
    match op {
        Op::Done(_) => {
            let completes = task.status != Status::Completed && (targeted || task.status.is_open());
            if completes {
                task.set_status(Status::Completed);
            }
            return completes;
        }
        Op::Drop(_) => drop_task(task, actor, targeted),
        // An agent cannot make work disappear: open work is abandoned in
        // place, and blocked work (waiting on someone else) is kept. (A
        // user's `rm` removes the task; see `rm`.)
        Op::Rm(_) if actor != Actor::User => {
            if matches!(task.status, Status::Pending | Status::InProgress) {
                task.set_status(Status::Abandoned);
            }
        }
        Op::Block(_, Some(Note::After(blocker))) if task.status.is_open() => {
            task.set_status(Status::Blocked);
            task.blocker = Some(team::after_note(blocker));
            task.after = Some(blocker.clone());
        }
        Op::Block(_, note) if task.status.is_open() => {
            let (note, after) = match note {
                Some(Note::Reason(reason)) => (Some(reason.clone()), None),
                _ => (task.blocker.take(), task.after.take()),
            };
            task.set_status(Status::Blocked);
            task.blocker = note;
            task.after = after;
        }
        Op::Unblock(_) if task.status == Status::Blocked => task.set_status(Status::Pending),
        _ => {}
    }
    false
}

fn drop_task(task: &mut Task, actor: Actor, targeted: bool) {
    match actor {
        Actor::User => {
            if targeted || task.status != Status::Completed {
                task.set_status(Status::Abandoned);
                task.dropped_by = Some(DroppedBy::User);
            }
        }
        Actor::Agent | Actor::Goalkeeper => {
            let spared = !targeted
                && (matches!(task.status, Status::Completed | Status::Blocked)
                    || task.dropped_by.is_some());
            if !spared && task.status != Status::Abandoned {
                task.set_status(Status::Abandoned);
            }
        }
    }
}

/// `release`: the tasks it frees go back to pending. An error, with
/// nothing changed, when it frees nothing.
fn release(list: &mut TodoList, what: &Release) -> Result<(), Vec<String>> {
    match what {
        Release::Task(content) => {
            let (p, t) = list
                .find_task(content)
                .ok_or_else(|| vec![task_not_found(list, content)])?;
            let task = &mut list.phases[p].tasks[t];
            if task.status != Status::InProgress {
                return Err(vec![format!(
                    "task \"{content}\" is {}, not in progress; there is no claim to release",
                    task.status
                )]);
            }
            task.set_status(Status::Pending);
        }
        Release::Agent(name) => {
            let key = (name != team::MAIN).then_some(name.as_str());
            let mut freed = 0;
            for phase in &mut list.phases {
                for task in &mut phase.tasks {
                    if task.status == Status::InProgress && task.agent.as_deref() == key {
                        task.set_status(Status::Pending);
                        freed += 1;
                    }
                }
            }
            if freed == 0 {
                return Err(vec![format!(
                    "{} holds no task; there is nothing to release",
                    team::holder(key)
                )]);
            }
        }
    }
    Ok(())
}

fn rm(
    list: &mut TodoList,
    op: &Op,
    target: &Target,
    caller: &Caller<'_>,
) -> Result<(), Vec<String>> {
    let actor = caller.actor;
    match actor {
        Actor::Agent | Actor::Goalkeeper => {
            let targeted = matches!(target, Target::Task(_));
            for_each_target(list, target, |_, task| {
                if targeted || !caller.blocked_by_claim(task) {
                    edit_task(task, op, actor, targeted);
                }
            })
        }
        Actor::User => {
            match target {
                Target::All => list.phases.iter_mut().for_each(|p| p.tasks.clear()),
                Target::Phase(name) => {
                    let p = find_phase(list, name).map_err(|e| vec![e])?;
                    list.phases[p].tasks.clear();
                }
                Target::Task(content) => {
                    let (p, t) = find_task(list, content).map_err(|e| vec![e])?;
                    list.phases[p].tasks.remove(t);
                }
            }
            Ok(())
        }
    }
}

fn init(list: &mut TodoList, phases: &[PhaseItems], actor: Actor) -> Result<(), Vec<String>> {
    let mut errors = Vec::new();
    let mut names = HashSet::new();
    let mut contents = HashSet::new();
    for phase in phases {
        if !names.insert(phase.name.as_str()) {
            errors.push(format!(
                "phase \"{}\" appears twice in `list`; phase names must be unique",
                phase.name
            ));
        }
        for item in &phase.items {
            if !contents.insert(item.as_str()) {
                errors.push(format!(
                    "task \"{item}\" appears twice; task contents must be unique across the list"
                ));
            }
        }
    }
    let mut next = TodoList::new(
        phases
            .iter()
            .map(|p| Phase {
                name: p.name.clone(),
                tasks: p.items.iter().map(Task::pending).collect(),
            })
            .collect(),
    );
    // A task the new list keeps by its text keeps its check: only a person
    // sets or removes one (`todo check`), not a rewrite of the plan.
    for task in next.phases.iter_mut().flat_map(|p| p.tasks.iter_mut()) {
        if let Some((p, t)) = list.find_task(&task.content) {
            task.check.clone_from(&list.phases[p].tasks[t].check);
        }
    }
    if actor == Actor::Agent {
        // Settle-gaming guard: a rewrite may re-plan, but work an agent
        // abandoned, and open work it leaves out, stays on record as
        // abandoned in a phase of the same name.
        for phase in &list.phases {
            for task in &phase.tasks {
                let kept = task.is_agent_abandoned() || task.status.is_open();
                if kept && !contents.contains(task.content.as_str()) {
                    let p = match next.find_phase(&phase.name) {
                        Some(p) => p,
                        None => {
                            next.phases.push(Phase::new(phase.name.clone()));
                            next.phases.len() - 1
                        }
                    };
                    let mut task = task.clone();
                    task.set_status(Status::Abandoned);
                    next.phases[p].tasks.push(task);
                }
            }
        }
    }
    check_limit(next.task_count(), &mut errors);
    if errors.is_empty() {
        *list = next;
        Ok(())
    } else {
        Err(errors)
    }
}

fn append(list: &mut TodoList, phase: &str, items: &[String]) -> Result<(), Vec<String>> {
    let mut errors = Vec::new();
    let mut fresh = HashSet::new();
    // A set of every content only pays off for larger batches.
    let existing: Option<HashSet<&str>> =
        (items.len() > 8).then(|| list.tasks().map(|(_, t)| t.content.as_str()).collect());
    for item in items {
        let exists = match &existing {
            Some(set) => set.contains(item.as_str()),
            None => list.find_task(item).is_some(),
        };
        if exists {
            let (p, _) = list.find_task(item).expect("the content exists");
            errors.push(format!(
                "task \"{item}\" already exists in phase \"{}\"; task contents must be unique",
                list.phases[p].name
            ));
        } else if !fresh.insert(item.as_str()) {
            errors.push(format!(
                "task \"{item}\" appears twice in `items`; task contents must be unique"
            ));
        }
    }
    check_limit(list.task_count() + items.len(), &mut errors);
    if !errors.is_empty() {
        return Err(errors);
    }
    let p = match list.find_phase(phase) {
        Some(p) => p,
        None => {
            list.phases.push(Phase::new(phase));
            list.phases.len() - 1
        }
    };
    list.phases[p].tasks.extend(items.iter().map(Task::pending));
    Ok(())
}

fn check_limit(count: usize, errors: &mut Vec<String>) {
    if count > MAX_TASKS {
        errors.push(format!(
            "the list would hold {count} tasks; the limit is {MAX_TASKS}, so close out or remove tasks first"
        ));
    }
}

/// Runs `f` on every task the target names, after checking it exists.
fn for_each_target(
    list: &mut TodoList,
    target: &Target,
    mut f: impl FnMut(&str, &mut Task),
) -> Result<(), Vec<String>> {
    match target {
        Target::All => {
            for phase in &mut list.phases {
                for task in &mut phase.tasks {
                    f(&phase.name, task);
                }
            }
        }
        Target::Phase(name) => {
            let p = find_phase(list, name).map_err(|e| vec![e])?;
            let phase = &mut list.phases[p];
            for task in &mut phase.tasks {
                f(&phase.name, task);
            }
        }
        Target::Task(content) => {
            let (p, t) = find_task(list, content).map_err(|e| vec![e])?;
            let phase = &mut list.phases[p];
            f(&phase.name, &mut phase.tasks[t]);
        }
    }
    Ok(())
}

fn find_task(list: &TodoList, content: &str) -> Result<(usize, usize), String> {
    list.find_task(content)
        .ok_or_else(|| task_not_found(list, content))
}

fn find_phase(list: &TodoList, name: &str) -> Result<usize, String> {
    list.find_phase(name)
        .ok_or_else(|| phase_not_found(list, name))
}

/// The message for a task that does not exist, with the most useful hint.
pub(crate) fn task_not_found(list: &TodoList, content: &str) -> String {
    if list.is_empty() {
        return format!(
            "task \"{content}\" not found: the todo list is empty; create it with `init`"
        );
    }
    if looks_like_id(content) {
        let example = list
            .tasks()
            .next()
            .map(|(_, t)| t.content.as_str())
            .unwrap_or("");
        return format!(
            "task \"{content}\" not found: tasks have no ids or numbers; name a task by its exact content, for example \"{example}\""
        );
    }
    let lowered = content.to_lowercase();
    let close: Vec<&str> = list
        .tasks()
        .map(|(_, t)| t.content.as_str())
        .filter(|c| c.to_lowercase() == lowered)
        .collect();
    match close.as_slice() {
        [one] => format!(
            "task \"{content}\" not found; did you mean \"{one}\"? Tasks are matched by their exact content"
        ),
        _ => format!(
            "task \"{content}\" not found; tasks are matched by their exact content (see `view`)"
        ),
    }
}

pub(crate) fn phase_not_found(list: &TodoList, name: &str) -> String {
    if list.phases.is_empty() {
        return format!(
            "phase \"{name}\" not found: the todo list is empty; create it with `init`"
        );
    }
    const SHOWN: usize = 10;
    let mut names: Vec<String> = list
        .phases
        .iter()
        .take(SHOWN)
        .map(|p| format!("\"{}\"", p.name))
        .collect();
    if list.phases.len() > SHOWN {
        names.push(format!("and {} more", list.phases.len() - SHOWN));
    }
    format!(
        "phase \"{name}\" not found; the phases are {}",
        names.join(", ")
    )
}

/// `task-3`, `#3`, `3`, `todo_12`, `item 2`: what a model sends when it
/// assumes tasks have ids.
fn looks_like_id(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    let rest = ["task", "todo", "item", "id", "t"]
        .iter()
        .find_map(|prefix| lower.strip_prefix(prefix))
        .unwrap_or(&lower);
    let rest = rest.trim_start_matches(['-', '_', ' ', '#', ':']);
    !rest.is_empty() && rest.chars().all(|c| c.is_ascii_digit())
}
