//! Invariants of one `todo` tool call (DESIGN.md §2), checked for any input.
//!
//! The input is taken as the JSON text of a call (invalid UTF-8 is replaced,
//! so every input reaches the parser) and run by both actors against a few
//! seeded lists: empty, one with every status, and one with only blocked and
//! abandoned work. Whatever the input, a rejected call changes nothing, a
//! `view` changes nothing, and a successful mutation leaves a valid,
//! normalized list that round-trips through markdown and JSON.

use std::collections::{HashMap, HashSet};

use goalkeeper::todo::{
    self, Actor, Call, DroppedBy, Op, Outcome, Phase, Status, SummaryKind, Task, TodoList,
};

/// Runs `data` as a call against every seeded list, as both actors, and
/// panics on the first broken invariant.
pub fn check(data: &[u8]) {
    let json = String::from_utf8_lossy(data);
    for list in seeded_lists() {
        for actor in [Actor::Agent, Actor::User] {
            check_call(&list, &json, actor);
        }
    }
}

/// The lists every input is applied to. Each is valid and normalized, as a
/// stored list is. The contents include the shapes the error messages
/// special-case: an id-like text and case variants.
pub fn seeded_lists() -> Vec<TodoList> {
    let small = TodoList::new(vec![
        Phase {
            name: "Foundation".into(),
            tasks: vec![
                task("Build core", Status::Completed),
                task("Add edge cases", Status::InProgress),
                task("Run tests", Status::Pending),
                task("Old idea", Status::Abandoned),
                dropped_by_user("Cut by me"),
                blocked("Get API key", Some("waiting for credentials")),
            ],
        },
        Phase {
            name: "Verification".into(),
            tasks: vec![
                task("Ship It", Status::Pending),
                task("task-3", Status::Pending),
                task("a", Status::Pending),
            ],
        },
        Phase::new("Empty"),
    ]);
    let settled = TodoList::new(vec![
        Phase {
            name: "Later".into(),
            tasks: vec![
                blocked("Blocked one", None),
                blocked("Blocked two", Some("on review")),
                task("Gave up", Status::Abandoned),
                dropped_by_user("User cut"),
            ],
        },
        Phase {
            name: "Done".into(),
            tasks: vec![task("Finished", Status::Completed)],
        },
    ]);
    vec![TodoList::default(), small, settled]
}

fn task(content: &str, status: Status) -> Task {
    let mut task = Task::pending(content);
    task.set_status(status);
    task
}

fn blocked(content: &str, note: Option<&str>) -> Task {
    let mut task = task(content, Status::Blocked);
    task.blocker = note.map(str::to_owned);
    task
}

fn dropped_by_user(content: &str) -> Task {
    let mut task = task(content, Status::Abandoned);
    task.dropped_by = Some(DroppedBy::User);
    task
}

/// Runs one call and checks every invariant of its outcome.
pub fn check_call(before: &TodoList, json: &str, actor: Actor) {
    let before_json = serde_json::to_string(before).expect("a list serializes");
    let outcome = todo::run(before.clone(), Call::Json(json), actor);
    let after_json = serde_json::to_string(&outcome.list).expect("a list serializes");
    let context = || format!("actor {actor}, call {json:?}, list {before_json}");

    check_result(&outcome, context);
    if !outcome.errors.is_empty() {
        assert_eq!(
            after_json,
            before_json,
            "a rejected call changed the list ({})",
            context()
        );
        assert!(
            outcome.completed.is_empty(),
            "a rejected call completed tasks ({})",
            context()
        );
        return;
    }
    let op = outcome
        .op
        .as_ref()
        .unwrap_or_else(|| panic!("a successful call has an op ({})", context()));
    if !op.mutates() {
        assert_eq!(
            after_json,
            before_json,
            "`view` changed the list ({})",
            context()
        );
        assert!(outcome.completed.is_empty(), "`view` completed tasks");
        return;
    }
    let after = &outcome.list;
    if let Err(problems) = after.validate() {
        panic!("invalid list after a success: {problems:?} ({})", context());
    }
    check_normalized(after, context);
    check_completed(before, &outcome, context);
    check_agent_guard(before, after, op, actor, context);
    check_blocked_not_promoted(before, after, op, context);
    check_replay(before, op, actor, after, context);
    let markdown = todo::to_markdown(after);
    assert_eq!(
        todo::from_markdown(&markdown).as_ref(),
        Ok(after),
        "markdown does not round-trip: {markdown:?} ({})",
        context()
    );
}

/// At most one `in_progress`; none only when nothing is `pending`.
fn check_normalized(list: &TodoList, context: impl Fn() -> String) {
    let count = |status| list.tasks().filter(|(_, t)| t.status == status).count();
    let active = count(Status::InProgress);
    assert!(active <= 1, "{active} tasks in progress ({})", context());
    if active == 0 {
        assert_eq!(
            count(Status::Pending),
            0,
            "pending work but nothing in progress ({})",
            context()
        );
    }
}

/// `completed_tasks` names exactly the tasks that moved into `completed`.
fn check_completed(before: &TodoList, outcome: &Outcome, context: impl Fn() -> String) {
    let was: HashMap<&str, Status> = before
        .tasks()
        .map(|(_, t)| (t.content.as_str(), t.status))
        .collect();
    let reported: HashSet<&str> = outcome
        .completed
        .iter()
        .map(|c| c.content.as_str())
        .collect();
    assert_eq!(
        reported.len(),
        outcome.completed.len(),
        "a task is reported completed twice ({})",
        context()
    );
    for done in &outcome.completed {
        let (p, t) = outcome
            .list
            .find_task(&done.content)
            .unwrap_or_else(|| panic!("reported task {:?} is gone ({})", done.content, context()));
        let phase = &outcome.list.phases[p];
        assert_eq!(
            phase.name,
            done.phase,
            "wrong phase reported ({})",
            context()
        );
        assert_eq!(phase.tasks[t].status, Status::Completed, "{}", context());
    }
    for (_, task) in outcome.list.tasks() {
        let moved = task.status == Status::Completed
            && was
                .get(task.content.as_str())
                .is_some_and(|&s| s != Status::Completed);
        assert_eq!(
            moved,
            reported.contains(task.content.as_str()),
            "task {:?} moved into completed unreported, or was reported without moving ({})",
            task.content,
            context()
        );
    }
}

/// DESIGN.md §2.3: an agent cannot make work disappear. Outside `init` no task
/// leaves the list; through `init`, agent-abandoned tasks stay.
fn check_agent_guard(
    before: &TodoList,
    after: &TodoList,
    op: &Op,
    actor: Actor,
    context: impl Fn() -> String,
) {
    if actor != Actor::Agent {
        return;
    }
    let init = matches!(op, Op::Init(_));
    for (_, task) in before.tasks() {
        if init && !task.is_agent_abandoned() {
            continue;
        }
        assert!(
            after.find_task(&task.content).is_some(),
            "agent {} made task {:?} disappear ({})",
            op.kind(),
            task.content,
            context()
        );
    }
    if !init {
        for (_, task) in before.tasks().filter(|(_, t)| t.dropped_by.is_some()) {
            let (p, t) = after.find_task(&task.content).expect("checked above");
            let now = &after.phases[p].tasks[t];
            // Only an op naming the task itself may touch a user's drop.
            if now.status != Status::Abandoned || now.dropped_by.is_none() {
                assert!(
                    names_task(op, &task.content),
                    "agent {} revived the user-dropped task {:?} ({})",
                    op.kind(),
                    task.content,
                    context()
                );
            }
        }
    }
}

fn names_task(op: &Op, content: &str) -> bool {
    use goalkeeper::todo::Target;
    match op {
        Op::Start(t) => t == content,
        Op::Done(target)
        | Op::Drop(target)
        | Op::Rm(target)
        | Op::Block(target, _)
        | Op::Unblock(target) => matches!(target, Target::Task(t) if t == content),
        _ => false,
    }
}

/// DESIGN.md §2.2: normalization never promotes a blocked task. Only `start`,
/// `unblock` (the task is pending again, then may be auto-advanced) and
/// `init` (which rebuilds the list) can make one `in_progress`.
pub fn check_blocked_not_promoted(
    before: &TodoList,
    after: &TodoList,
    op: &Op,
    context: impl Fn() -> String,
) {
    if matches!(op, Op::Start(_) | Op::Unblock(_) | Op::Init(_)) {
        return;
    }
    for (_, task) in before.tasks().filter(|(_, t)| t.status == Status::Blocked) {
        if let Some((p, t)) = after.find_task(&task.content) {
            assert_ne!(
                after.phases[p].tasks[t].status,
                Status::InProgress,
                "{} promoted the blocked task {:?} ({})",
                op.kind(),
                task.content,
                context()
            );
        }
    }
}

/// The op as logged (`Op::to_json`) parses back to the same op and applies
/// to the same list: the event log's payload replays the call.
fn check_replay(
    before: &TodoList,
    op: &Op,
    actor: Actor,
    after: &TodoList,
    context: impl Fn() -> String,
) {
    let logged = op.to_json();
    let reparsed = todo::parse_value(&logged, before);
    assert_eq!(
        reparsed.as_ref().map(|p| (&p.op, p.repairs.as_slice())),
        Ok((op, &[][..])),
        "logged payload {logged} does not parse back ({})",
        context()
    );
    let replayed = todo::run(before.clone(), Call::Value(&logged), actor);
    assert_eq!(&replayed.list, after, "replay differs ({})", context());
}

/// The tool result: the error flag, details that read back as the list,
/// and a summary with one line per task and exact counts.
fn check_result(outcome: &Outcome, context: impl Fn() -> String) {
    let result = outcome.to_result(7);
    assert_eq!(result.is_error, !outcome.errors.is_empty(), "{}", context());
    let value = serde_json::to_value(&result).expect("a result serializes");
    let phases: TodoList =
        serde_json::from_value(value["details"]["phases"].clone()).expect("phases read back");
    assert_eq!(phases, outcome.list, "details.phases ({})", context());

    let text = result.text();
    assert!(
        !text.chars().any(|c| c != '\n' && unsafe_char(c)),
        "raw control character in the summary {text:?} ({})",
        context()
    );
    if !outcome.errors.is_empty() {
        assert!(text.starts_with("Errors: "), "{text:?} ({})", context());
    }
    let list = &outcome.list;
    if list.is_empty() {
        let kind = if outcome.is_mutation() {
            SummaryKind::Mutation
        } else {
            SummaryKind::View
        };
        let last = text.lines().last().unwrap_or("");
        let expected = match kind {
            SummaryKind::Mutation => "Todo list cleared.",
            _ => "Todo list is empty.",
        };
        assert_eq!(last, expected, "({})", context());
        return;
    }
    let lines: Vec<&str> = text.lines().collect();
    let overall = lines
        .iter()
        .position(|l| l.starts_with("Overall: "))
        .unwrap_or_else(|| panic!("no Overall line in {text:?} ({})", context()));
    let total = list.task_count();
    let closed = list.tasks().filter(|(_, t)| t.status.is_closed()).count();
    assert_eq!(
        lines[overall],
        format!("Overall: {closed}/{total} done, {} open.", total - closed),
        "({})",
        context()
    );
    // After the counts and the active-phase line: a line per phase, then a
    // line per task.
    let listing = &lines[overall + 2..];
    assert_eq!(
        listing.len(),
        list.phases.len() + total,
        "the summary listing is not one line per phase and task: {text:?} ({})",
        context()
    );
}

/// Characters a prompt or summary line must not carry raw (DESIGN.md §3.2).
fn unsafe_char(c: char) -> bool {
    goalkeeper::sanitize::is_unsafe(c)
}
