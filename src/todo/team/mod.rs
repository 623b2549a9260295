//! Several agents on one list (DESIGN.md §2.5): who makes a call, who holds
//! which task, when a claim has lapsed, and the `after` links between
//! tasks. Pure, like the rest of the engine: the store passes in the clock,
//! the lease and when each agent last called.
//!
//! The session's own agent (the host's main conversation, or a caller
//! that names no agent) and a person are the same holder, `None`, so a list
//! only one agent works on keeps every rule and every byte it had before
//! agents were named.

use std::collections::HashSet;

use super::call::{Op, Target};
use super::model::{Status, Task, TodoList};
use super::text::MAX_BLOCKER_CHARS;
use crate::actor::Actor;

/// The shared facts of a list's agents at the time of a call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Team {
    /// The caller's clock at the call, in milliseconds since the epoch:
    /// when a claim it makes is recorded.
    pub now_ms: i64,
    /// The database's clock at the call: a claim lapses only once this
    /// clock too has passed its lease's end, so a caller whose clock runs
    /// fast takes nothing early. `i64::MAX` when there is none to ask.
    pub clock_ms: i64,
    /// The caller's own lease (`todo.claim.lease`): what its calls are
    /// granted, and how long a claim lasts that no grant covers (rows
    /// written from outside goalkeeper).
    pub lease_ms: i64,
    /// When each named agent of the list's lease ends, as granted at its
    /// calls (its own lease from its own clock, never shortened).
    pub leases: Vec<(String, i64)>,
}

impl Default for Team {
    fn default() -> Team {
        Team {
            now_ms: 0,
            clock_ms: i64::MAX,
            lease_ms: 0,
            leases: Vec::new(),
        }
    }
}

impl Team {
    /// When `agent`'s lease ends, if it was ever granted one.
    fn granted(&self, agent: &str) -> Option<i64> {
        self.leases
            .iter()
            .find(|(name, _)| name == agent)
            .map(|(_, end)| *end)
    }

    /// True when the claim on `task` has lapsed: its holder is a named
    /// agent whose lease, as granted, has ended by the caller's clock and
    /// by the database's. The session's own agent's claims never lapse.
    pub(crate) fn lapsed(&self, task: &Task) -> bool {
        self.lease_end(task)
            .is_some_and(|end| self.decided_at() >= end)
    }

    /// The time a claim's lapse is judged at: the earlier of the caller's
    /// clock and the database's, so neither running fast takes a task.
    fn decided_at(&self) -> i64 {
        self.now_ms.min(self.clock_ms)
    }

    /// When the claim of a named agent on `task` lapses: when its
    /// holder's lease ends, as granted (DESIGN.md §2.5); for a holder
    /// never granted one, the caller's lease after the claim.
    pub(crate) fn lease_end(&self, task: &Task) -> Option<i64> {
        let agent = task.agent.as_deref()?;
        self.granted(agent).or_else(|| {
            task.since_ms
                .map(|since| since.saturating_add(self.lease_ms))
        })
    }
}

/// Who makes a call, with the team it acts in.
#[derive(Clone, Copy, Debug)]
pub struct Caller<'a> {
    /// An agent or a person.
    pub actor: Actor,
    /// The named agent; `None` for the session's own agent and a person.
    pub agent: Option<&'a str>,
    /// The list's agents.
    pub team: &'a Team,
}

/// The team of a list no named agent works on.
static NOBODY: Team = Team {
    now_ms: 0,
    clock_ms: i64::MAX,
    lease_ms: 0,
    leases: Vec::new(),
};

impl Caller<'static> {
    /// `actor` as the session's own agent (or a person), with no named
    /// agent around: the rules as they are for a list one agent works on.
    pub fn solo(actor: Actor) -> Caller<'static> {
        Caller {
            actor,
            agent: None,
            team: &NOBODY,
        }
    }
}

impl Caller<'_> {
    /// True for a call made by an agent (or goalkeeper), not a person.
    fn is_agent(&self) -> bool {
        self.actor != Actor::User
    }

    /// True when `task` is in progress for someone else whose claim holds:
    /// this caller, if an agent, must leave it alone.
    pub(crate) fn blocked_by_claim(&self, task: &Task) -> bool {
        self.is_agent()
            && task.status == Status::InProgress
            && task.agent.as_deref() != self.agent
            && !self.team.lapsed(task)
    }

    /// The error for an agent's `start` or `done` (`finishes`) or other
    /// targeted change of `task` that is another agent's.
    fn conflict(&self, task: &Task, finishes: bool) -> Option<String> {
        if self.blocked_by_claim(task) {
            // By the time the decision was made at, so the time left is
            // the one that kept the claim.
            let at = self.team.decided_at();
            let lease = match self.team.lease_end(task) {
                Some(end) => format!(
                    " (claimed {} ago; the claim lapses in {} unless it calls again)",
                    span(at - task.since_ms.unwrap_or(at), false),
                    span(end - at, true)
                ),
                None => String::new(),
            };
            return Some(format!(
                "task \"{}\" is held by {}{lease}; work on another task, or ask the user to release it",
                task.content,
                holder(task.agent.as_deref())
            ));
        }
        let theirs = task.status == Status::Completed && task.agent.as_deref() != self.agent;
        (finishes && self.is_agent() && theirs).then(|| {
            format!(
                "task \"{}\" was completed by {}; reopening or finishing another agent's work is the user's call",
                task.content,
                holder(task.agent.as_deref())
            )
        })
    }
}

/// `agent "NAME"`, or the session's own agent.
pub(crate) fn holder(agent: Option<&str>) -> String {
    match agent {
        Some(name) => format!("agent \"{name}\""),
        None => "the session's main agent".to_owned(),
    }
}

/// "45 s", "7 min", "3 h": rounded down, or `up` (a time left that has
/// not run out is never "0 s").
fn span(ms: i64, up: bool) -> String {
    let div = |n: u64, by: u64| if up { n.div_ceil(by) } else { n / by };
    let s = div(u64::try_from(ms).unwrap_or(0), 1000);
    match s {
        0..60 => format!("{s} s"),
        60..7200 => format!("{} min", div(s, 60)),
        _ => format!("{} h", div(s, 3600)),
    }
}

/// The note of a task blocked `after` the task `content`: one line within
/// the note limit.
pub(crate) fn after_note(content: &str) -> String {
    let mut note = format!(
        "after {}",
        content.split_whitespace().collect::<Vec<_>>().join(" ")
    );
    if let Some((cut, _)) = note.char_indices().nth(MAX_BLOCKER_CHARS) {
        note.truncate(cut);
    }
    note
}

/// Everything a call must not do because of who holds what, or because
/// of an `after` that cannot be: the errors, before anything changes.
pub(crate) fn check(list: &TodoList, op: &Op, caller: &Caller<'_>) -> Result<(), Vec<String>> {
    let task = |content: &str| {
        list.find_task(content)
            .map(|(p, t)| &list.phases[p].tasks[t])
    };
    let mut errors = Vec::new();
    match op {
        Op::Start(content) | Op::Done(Target::Task(content)) => {
            let finishes = true;
            errors.extend(task(content).and_then(|t| caller.conflict(t, finishes)));
        }
        Op::Drop(Target::Task(content))
        | Op::Rm(Target::Task(content))
        | Op::Block(Target::Task(content), _) => {
            errors.extend(task(content).and_then(|t| caller.conflict(t, false)));
        }
        Op::Init(_) if caller.is_agent() => {
            let held: Vec<String> = list
                .tasks()
                .map(|(_, t)| t)
                .filter(|t| caller.blocked_by_claim(t))
                .map(|t| format!("\"{}\" ({})", t.content, holder(t.agent.as_deref())))
                .collect();
            if !held.is_empty() {
                errors.push(format!(
                    "`init` would take away tasks other agents hold: {}; use `append`, or wait until they are done",
                    held.join(", ")
                ));
            }
        }
        Op::Check(..) if caller.is_agent() => errors.push(
            "`check` is a person's command (`goalkeeper todo check`): a check is a command that runs with the user's rights, and the definition of done the task is measured by".into(),
        ),
        // goalkeeper itself releases the tasks of an agent that ended.
        Op::Release(_) if caller.actor == Actor::Agent => errors.push(
            "`release` is a person's command (`goalkeeper todo release`); an agent finishes, drops or blocks its own task instead".into(),
        ),
        _ => {}
    }
    if let Op::Block(target, Some(super::call::Note::After(blocker))) = op {
        check_after(list, target, blocker, &mut errors);
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

/// `block` with `after`: the blocker exists, is still open, and waiting
/// for it closes no loop.
fn check_after(list: &TodoList, target: &Target, blocker: &str, errors: &mut Vec<String>) {
    let Some((p, t)) = list.find_task(blocker) else {
        errors.push(format!(
            "`after` names task \"{blocker}\", which is not in the list; name an existing task by its exact content"
        ));
        return;
    };
    let found = &list.phases[p].tasks[t];
    if found.status.is_closed() {
        errors.push(format!(
            "`after` names task \"{blocker}\", which is already {}; there is nothing to wait for",
            found.status
        ));
        return;
    }
    let targets: Vec<&str> = match target {
        Target::Task(content) => vec![content.as_str()],
        Target::Phase(name) => list
            .find_phase(name)
            .map(|p| {
                list.phases[p]
                    .tasks
                    .iter()
                    .map(|t| t.content.as_str())
                    .collect()
            })
            .unwrap_or_default(),
        Target::All => list.tasks().map(|(_, t)| t.content.as_str()).collect(),
    };
    if targets.contains(&blocker) {
        errors.push(format!(
            "task \"{blocker}\" cannot wait for itself; name another task in `after`"
        ));
        return;
    }
    // Follow the blocker's own `after` links: reaching a target is a loop.
    let mut seen = HashSet::new();
    let mut next = Some(blocker);
    while let Some(content) = next {
        if !seen.insert(content) {
            break;
        }
        let waits = list
            .find_task(content)
            .and_then(|(p, t)| list.phases[p].tasks[t].after.as_deref());
        if let Some(waits) = waits
            && targets.contains(&waits)
        {
            errors.push(format!(
                "task \"{blocker}\" already waits for \"{waits}\"; blocking it after \"{blocker}\" would wait in a circle"
            ));
            return;
        }
        next = waits;
    }
}

/// After a call changed the list: a task waiting for one that is now
/// completed becomes pending; one waiting for a task dropped or removed
/// stays blocked with a note saying so. Returns the position (in list
/// order) of the first task the call unblocked.
pub(crate) fn follow_afters(list: &mut TodoList) -> Option<usize> {
    if list.tasks().all(|(_, t)| t.after.is_none()) {
        return None;
    }
    let status_of = |list: &TodoList, content: &str| {
        list.find_task(content)
            .map(|(p, t)| list.phases[p].tasks[t].status)
    };
    let mut first = None;
    let mut updates = Vec::new();
    for (i, (_, task)) in list.tasks().enumerate() {
        let Some(blocker) = task.after.as_deref() else {
            continue;
        };
        match status_of(list, blocker) {
            Some(Status::Completed) => {
                first.get_or_insert(i);
                updates.push((i, None));
            }
            Some(Status::Abandoned) => updates.push((i, Some("dropped"))),
            None => updates.push((i, Some("removed"))),
            Some(_) => {}
        }
    }
    let tasks: Vec<&mut Task> = list
        .phases
        .iter_mut()
        .flat_map(|p| p.tasks.iter_mut())
        .collect();
    let mut tasks = tasks;
    for (i, why) in updates {
        let task = &mut *tasks[i];
        match why {
            None => task.set_status(Status::Pending),
            Some(why) => {
                let blocker = task.after.take().unwrap_or_default();
                let mut note = format!(
                    "{}, which was {why}: unblock or drop this task",
                    after_note(&blocker)
                );
                if let Some((cut, _)) = note.char_indices().nth(MAX_BLOCKER_CHARS) {
                    note.truncate(cut);
                }
                task.blocker = Some(note);
            }
        }
    }
    first
}

/// The holder an in-progress line names (DESIGN.md §2.5): the named
/// agent holding the task, at most 64 characters (as names are; a longer
/// one written from outside is cut). `None` for every other line, and for
/// the session's own agent, so a list only it works on reads as it always
/// did. Callers sanitize it like every stored text.
pub fn holder_label(task: &Task) -> Option<&str> {
    let name = task
        .agent
        .as_deref()
        .filter(|_| task.status == Status::InProgress)?;
    Some(match name.char_indices().nth(64) {
        Some((cut, _)) => &name[..cut],
        None => name,
    })
}

/// The name that stands for the session's own agent.
pub const MAIN: &str = "main";

/// At most one task in progress per holder, and the caller's next task
/// (DESIGN.md §2.2, §2.5), on `tasks` given in list order: of one holder's
/// tasks in progress only the earliest stays; then, when the caller (an
/// agent) holds nothing, the task at `prefer` if it is pending, else the
/// earliest task that is pending or whose claim lapsed, goes in progress
/// for it. A person's call promotes only while nothing is in progress and
/// no named agent works on the list (`named`). Blocked tasks are never
/// promoted. The store's in-place path runs it on the rows it read:
/// every task in progress and the earliest pending one.
pub(crate) fn settle<'t>(
    tasks: impl IntoIterator<Item = &'t mut Task>,
    caller: &Caller<'_>,
    named: bool,
    prefer: Option<usize>,
) {
    let mut held: HashSet<Option<String>> = HashSet::new();
    let mut mine = false;
    let mut pick: Option<&'t mut Task> = None;
    let mut preferred: Option<&'t mut Task> = None;
    for (i, task) in tasks.into_iter().enumerate() {
        match task.status {
            Status::InProgress if held.contains(&task.agent) => task.set_status(Status::Pending),
            Status::InProgress => {
                if task.agent.as_deref() == caller.agent {
                    mine = true;
                } else if caller.is_agent() && pick.is_none() && caller.team.lapsed(task) {
                    // Taken over below only if it is the earliest choice;
                    // until then it stays its holder's.
                    held.insert(task.agent.clone());
                    pick = Some(task);
                    continue;
                }
                held.insert(task.agent.clone());
            }
            Status::Pending if prefer == Some(i) => preferred = Some(task),
            Status::Pending if pick.is_none() => pick = Some(task),
            _ => {}
        }
    }
    let advance = if caller.is_agent() {
        !mine
    } else {
        held.is_empty() && !named
    };
    if advance && let Some(task) = preferred.or(pick) {
        task.set_status(Status::InProgress);
        task.claim(caller.agent, caller.team.now_ms);
    }
}

#[cfg(test)]
mod tests;
