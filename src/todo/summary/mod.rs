//! The text summary a `todo` call returns (DESIGN.md §2.4): errors, repairs,
//! what remains, what is blocked, the counts, the active phase, then the
//! list with markdown markers.
//!
//! What reaches the model is bounded, whatever the list holds. A summary
//! that fits in [`SUMMARY_BYTES`] is the whole picture above. A longer one
//! keeps the information and drops the repetition: the exact counts, the
//! active pointer, the tasks the call changed (up to [`CHANGED_SHOWN`]), a
//! window of the next open and the blocked tasks, and one line saying how
//! `view` pages through the rest. `view` prints the whole list only while
//! it fits one page ([`PAGE_TASKS`] tasks, [`PAGE_BYTES`] of listing);
//! beyond that it prints one page at a time, each saying how to get the
//! next.
//!
//! Task text is shown as one line: line breaks and control characters are
//! escaped the way prompts escape them, so a summary line is always one task.

mod page;
mod tally;

use std::fmt::Write;

use super::apply::ChangedTask;
use super::call::ViewPage;
use super::model::{Counts, Status, Task, TodoList};
use crate::sanitize::one_line;
pub(crate) use page::page_count;
use page::push_page;
pub(crate) use page::{PageParts, PageTasks, page_starts, render_page};
pub(crate) use tally::Tally;
use tally::tallies;

/// The size a summary may take beyond the tasks the call changed.
pub const SUMMARY_BYTES: usize = 2048;
/// At most this many changed tasks are listed one by one.
pub const CHANGED_SHOWN: usize = 50;
/// A `view` page holds at most this many tasks…
pub(crate) const PAGE_TASKS: usize = 100;
/// …and about this many bytes of task lines (always at least one task).
pub const PAGE_BYTES: usize = 8192;

/// The share of a bounded summary the error line may take.
const ERROR_BYTES: usize = 1024;
/// The share the repairs line may take.
const REPAIR_BYTES: usize = 512;
/// At most this many next open tasks in a bounded summary.
pub(crate) const NEXT_SHOWN: usize = 10;
/// At most this many blocked tasks in a bounded summary.
pub(crate) const BLOCKED_SHOWN: usize = 5;

/// What the summary follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SummaryKind {
    /// After `view` (or a rejected call): an empty list reads "Todo list is
    /// empty."
    View,
    /// After a successful mutation: an empty list reads "Todo list
    /// cleared."
    Mutation,
    /// After a call that changed nothing (DESIGN.md §2.2), at this version.
    Unchanged(i64),
}

/// Everything one summary shows. [`summary`] covers the common case.
#[derive(Clone, Copy, Debug)]
pub struct Report<'a> {
    /// The list after the call (before it, on error).
    pub list: &'a TodoList,
    /// Every problem; the call was rejected when there is any.
    pub errors: &'a [String],
    /// What was repaired or ignored to read the call.
    pub repairs: &'a [String],
    /// The tasks the call changed.
    pub changed: &'a [ChangedTask],
    /// What the summary follows.
    pub kind: SummaryKind,
    /// The page a `view` asked for; `None` for every other call.
    pub view: Option<&'a ViewPage>,
}

impl<'a> Report<'a> {
    /// A report of `list` with nothing else to say.
    pub fn new(list: &'a TodoList, kind: SummaryKind) -> Report<'a> {
        Report {
            list,
            errors: &[],
            repairs: &[],
            changed: &[],
            kind,
            view: None,
        }
    }

    /// The summary text.
    pub fn render(&self) -> String {
        let mut out = String::new();
        push_head(&mut out, self.errors, self.repairs, self.kind);
        if self.list.is_empty() {
            out.push_str(match self.kind {
                SummaryKind::View | SummaryKind::Unchanged(_) => "Todo list is empty.",
                SummaryKind::Mutation => "Todo list cleared.",
            });
            return out;
        }
        let view = self
            .view
            .filter(|v| self.errors.is_empty() && **v != ViewPage::first());
        match view {
            Some(view) => push_page(&mut out, self.list, view),
            None => {
                let budget = if self.view.is_some() {
                    PAGE_BYTES
                } else {
                    SUMMARY_BYTES
                };
                if !push_whole(&mut out, self.list, budget) {
                    if self.view.is_some() && self.errors.is_empty() {
                        push_page(&mut out, self.list, &ViewPage::first());
                    } else {
                        let parts = BoundedParts::of(self.list);
                        push_bounded_summary(&mut out, &parts.parts(), self.changed);
                    }
                }
            }
        }
        out.truncate(out.trim_end().len());
        out
    }
}

/// The lines above every summary: the errors, the repairs, and the
/// no-change notice.
fn push_head(out: &mut String, errors: &[String], repairs: &[String], kind: SummaryKind) {
    if !errors.is_empty() {
        out.push_str("Errors: ");
        push_bounded(out, errors, ERROR_BYTES, "problems");
        out.push('\n');
    }
    if !repairs.is_empty() {
        out.push_str("Repaired: ");
        push_bounded(out, repairs, REPAIR_BYTES, "repairs");
        out.push_str(".\n");
    }
    if let SummaryKind::Unchanged(version) = kind {
        let _ = writeln!(
            out,
            "No change: the list was already in that state, so it stays at version {version} and this call is not progress."
        );
    }
}

/// What the summary of a list too long to repeat shows of it
/// ([`push_bounded_summary`]), borrowed: the phases' names and tallies,
/// and the first open and blocked tasks in list order, each with the
/// index of its phase. The store fills it from the rows it reads
/// (`store::in_place`); [`Report`] from the whole list.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Bounded<'a> {
    /// Every phase's name, in order.
    pub names: &'a [&'a str],
    /// Every phase's tally, in order.
    pub tallies: &'a [Tally],
    /// The first [`NEXT_SHOWN`] (or fewer) `pending` and `in_progress`
    /// tasks.
    pub next: &'a [(usize, &'a Task)],
    /// The first [`BLOCKED_SHOWN`] (or fewer) `blocked` tasks.
    pub blocked: &'a [(usize, &'a Task)],
}

/// The owned pieces a [`Bounded`] of a whole list borrows.
struct BoundedParts<'a> {
    names: Vec<&'a str>,
    tallies: Vec<Tally>,
    next: Vec<(usize, &'a Task)>,
    blocked: Vec<(usize, &'a Task)>,
}

impl<'a> BoundedParts<'a> {
    fn of(list: &'a TodoList) -> BoundedParts<'a> {
        BoundedParts {
            names: list.phases.iter().map(|p| p.name.as_str()).collect(),
            tallies: tallies(list),
            next: list
                .tasks()
                .filter(|(_, t)| workable(t.status))
                .take(NEXT_SHOWN)
                .collect(),
            blocked: list
                .tasks()
                .filter(|(_, t)| t.status == Status::Blocked)
                .take(BLOCKED_SHOWN)
                .collect(),
        }
    }

    fn parts(&self) -> Bounded<'_> {
        Bounded {
            names: &self.names,
            tallies: &self.tallies,
            next: &self.next,
            blocked: &self.blocked,
        }
    }
}

/// The summary of a successful call on a list too long to repeat (its
/// whole summary is over [`SUMMARY_BYTES`] by [`whole_floor`]), from what
/// `parts` shows of it: what [`Report::render`] prints for that call on
/// the whole list.
pub(crate) fn render_bounded(
    repairs: &[String],
    changed: &[ChangedTask],
    kind: SummaryKind,
    parts: &Bounded<'_>,
) -> String {
    let mut out = String::new();
    push_head(&mut out, &[], repairs, kind);
    push_bounded_summary(&mut out, parts, changed);
    out.truncate(out.trim_end().len());
    out
}

/// Renders the summary of `list`, headed by `errors` when there are any.
pub fn summary(list: &TodoList, errors: &[String], kind: SummaryKind) -> String {
    Report {
        errors,
        ..Report::new(list, kind)
    }
    .render()
}

/// `items` joined by "; ", one line, cut after about `budget` bytes with a
/// count of the rest.
fn push_bounded(out: &mut String, items: &[String], budget: usize, what: &str) {
    let start = out.len();
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            if out.len() - start > budget {
                let _ = write!(out, "; … and {} more {what}", items.len() - i);
                return;
            }
            out.push_str("; ");
        }
        out.push_str(&one_line(item));
    }
}

/// The whole summary (remaining, blocked, counts, active phase, the list),
/// appended only when it takes at most `budget` bytes. Returns whether it
/// was.
fn push_whole(out: &mut String, list: &TodoList, budget: usize) -> bool {
    if whole_floor(list) > budget {
        return false;
    }
    let start = out.len();
    let phase_names: Vec<_> = list.phases.iter().map(|p| one_line(&p.name)).collect();
    let remaining = list.tasks().filter(|(_, t)| workable(t.status)).count();
    if remaining > 0 {
        let _ = writeln!(out, "Remaining ({remaining}):");
        for (p, task) in list.tasks().filter(|(_, t)| workable(t.status)) {
            push_open(out, task, &phase_names[p]);
        }
    }
    let counts = list.counts();
    if counts.blocked > 0 {
        let _ = writeln!(out, "Blocked ({}):", counts.blocked);
        for (p, task) in list.tasks().filter(|(_, t)| t.status == Status::Blocked) {
            push_blocked(out, task, &phase_names[p]);
        }
    }
    push_counts(out, list, &counts);
    for (phase, name) in list.phases.iter().zip(&phase_names) {
        push_all(out, &[name, ":\n"]);
        for task in &phase.tasks {
            push_marked(out, task);
        }
    }
    if out.len() - start > budget {
        out.truncate(start);
        return false;
    }
    true
}

/// The fewest bytes the whole summary of `list` can take: every task is
/// listed at least once with its marker, so a list whose text alone is over
/// a budget cannot fit it, and is not rendered whole.
pub(crate) fn whole_floor(list: &TodoList) -> usize {
    list.phases
        .iter()
        .map(|p| p.name.len() + 2 + p.tasks.iter().map(|t| t.content.len() + 7).sum::<usize>())
        .sum()
}

/// The summary of a list too long to repeat: the changed tasks, windows of
/// the next open and the blocked tasks, the counts, the active phase, and
/// how to see the rest.
fn push_bounded_summary(out: &mut String, parts: &Bounded<'_>, changed: &[ChangedTask]) {
    // The lines above (errors, repairs) come out of the same budget.
    let spent = out.len();
    if !changed.is_empty() {
        let _ = writeln!(out, "Changed ({}):", changed.len());
        for task in changed.iter().take(CHANGED_SHOWN) {
            push_changed(out, task);
        }
        if changed.len() > CHANGED_SHOWN {
            let _ = writeln!(out, "  … and {} more", changed.len() - CHANGED_SHOWN);
        }
    }
    let start = out.len();
    let all = Tally::sum(parts.tallies);
    let counts = all.counts();
    let remaining = all.get(Status::Pending) + all.get(Status::InProgress);
    // The window stops where the budget does, after at least one task.
    let budget = SUMMARY_BYTES.saturating_sub(400 + spent);
    if remaining > 0 {
        let shown = remaining.min(NEXT_SHOWN);
        let _ = writeln!(out, "Remaining ({remaining}), the next {shown}:");
        let mut listed = 0;
        for &(p, task) in parts.next.iter().take(shown) {
            if listed > 0 && out.len() - start > budget / 2 {
                break;
            }
            push_open(out, task, &one_line(parts.names[p]));
            listed += 1;
        }
        if listed < shown {
            fix_window_header(out, start, remaining, listed);
        }
    }
    if counts.blocked > 0 {
        let header = out.len();
        let shown = counts.blocked.min(BLOCKED_SHOWN);
        let _ = writeln!(out, "Blocked ({}), the first {shown}:", counts.blocked);
        let mut listed = 0;
        for &(p, task) in parts.blocked.iter().take(shown) {
            if listed > 0 && out.len() - start > budget {
                break;
            }
            push_blocked(out, task, &one_line(parts.names[p]));
            listed += 1;
        }
        if listed < shown {
            let rest = out.split_off(header);
            let body = rest.split_once('\n').map_or("", |(_, body)| body);
            let _ = writeln!(out, "Blocked ({}), the first {listed}:", counts.blocked);
            out.push_str(body);
        }
    }
    push_counts_of(out, parts.names, parts.tallies, &counts);
    let _ = writeln!(
        out,
        "The whole list ({} tasks in {} phases) is not repeated here: {{\"op\": \"view\"}} lists it {PAGE_TASKS} tasks a page, {{\"op\": \"view\", \"phase\": NAME}} one phase.",
        counts.total,
        parts.names.len()
    );
}

/// Rewrites "Remaining (N), the next M:" at `start` to the number of tasks
/// the budget let through.
fn fix_window_header(out: &mut String, start: usize, remaining: usize, listed: usize) {
    let rest = out.split_off(start);
    let body = rest.split_once('\n').map_or("", |(_, body)| body);
    let _ = writeln!(out, "Remaining ({remaining}), the next {listed}:");
    out.push_str(body);
}

/// `pending` or `in_progress`: work that can be picked up now.
fn workable(status: Status) -> bool {
    matches!(status, Status::Pending | Status::InProgress)
}

/// The counts line and the active-phase line.
fn push_counts(out: &mut String, list: &TodoList, counts: &Counts) {
    let names: Vec<&str> = list.phases.iter().map(|p| p.name.as_str()).collect();
    push_counts_of(out, &names, &tallies(list), counts);
}

/// [`push_counts`] from the phases' names and tallies.
fn push_counts_of(out: &mut String, names: &[&str], tallies: &[Tally], counts: &Counts) {
    let _ = writeln!(
        out,
        "Overall: {}/{} done, {} open.",
        counts.closed, counts.total, counts.open
    );
    out.push_str(&active_phase_line(names, tallies, counts));
    out.push('\n');
}

/// "  - Add edge cases [in_progress] (Foundation)", or with the named
/// agent holding it "[in_progress: w1]"
fn push_open(out: &mut String, task: &Task, phase: &str) {
    push_all(
        out,
        &["  - ", &one_line(&task.content), " [", task.status.as_str()],
    );
    push_holder(out, task);
    push_all(out, &["] (", phase, ")\n"]);
}

/// ": w1" after the status of a task a named agent holds (DESIGN.md §2.5).
fn push_holder(out: &mut String, task: &Task) {
    if let Some(holder) = super::team::holder_label(task) {
        push_all(out, &[": ", &one_line(holder)]);
    }
}

/// "  - Get API key (Setup): waiting for credentials"
fn push_blocked(out: &mut String, task: &Task, phase: &str) {
    push_all(out, &["  - ", &one_line(&task.content), " (", phase, ")"]);
    match &task.blocker {
        Some(note) => push_all(out, &[": ", &one_line(note), "\n"]),
        None => out.push('\n'),
    }
}

/// "  - [x] Build core"
fn push_marked(out: &mut String, task: &Task) {
    out.push_str("  - [");
    out.push(task.status.marker());
    push_holder(out, task);
    push_all(out, &["] ", &one_line(&task.content), "\n"]);
}

/// "  - [x] Build core (Foundation), was in_progress"
fn push_changed(out: &mut String, task: &ChangedTask) {
    let marker = task.after.map_or(' ', Status::marker);
    let content = one_line(&task.content);
    let phase = one_line(&task.phase);
    match (task.before, task.after) {
        (_, None) => push_all(out, &["  - removed: ", &content, " (", &phase, ")\n"]),
        (None, Some(_)) => {
            out.push_str("  - [");
            out.push(marker);
            push_all(out, &["] ", &content, " (", &phase, "), added\n"]);
        }
        (Some(before), Some(after)) => {
            out.push_str("  - [");
            out.push(marker);
            push_all(out, &["] ", &content, " (", &phase, ")"]);
            if before == after {
                out.push_str(", note changed\n");
            } else {
                push_all(out, &[", was ", before.as_str(), "\n"]);
            }
        }
    }
}

fn push_all(out: &mut String, parts: &[&str]) {
    for part in parts {
        out.push_str(part);
    }
}

/// Where work can happen (DESIGN.md §2.4): the phase of the `in_progress` task,
/// else the earliest phase with a `pending` task. Earlier phases that are
/// still open (their work blocked, or passed over by a `start`) are named;
/// when a later phase already has closed tasks the line says nothing was
/// reopened; when every open task is blocked, the line says so.
fn active_phase_line(names: &[&str], tallies: &[Tally], counts: &Counts) -> String {
    // The phase of the first `in_progress` task, else the first with a
    // `pending` one.
    let workable_phase = tallies
        .iter()
        .position(|t| t.get(Status::InProgress) > 0)
        .or_else(|| tallies.iter().position(|t| t.get(Status::Pending) > 0));
    let Some(p) = workable_phase else {
        if counts.open == 0 {
            return "Every task is closed; no phase is active.".to_owned();
        }
        let tasks = if counts.blocked == 1 {
            "task is"
        } else {
            "tasks are"
        };
        return format!(
            "Every open task is blocked ({} {tasks} waiting); no phase has work that can start until one is unblocked.",
            counts.blocked
        );
    };
    let here = tallies[p].counts();
    let mut line = format!(
        "Active phase {}/{} \"{}\" ({}/{} done).",
        p + 1,
        names.len(),
        one_line(names[p]),
        here.closed,
        here.total
    );
    let earlier: Vec<(usize, Counts)> = tallies[..p]
        .iter()
        .enumerate()
        .map(|(i, tally)| (i, tally.counts()))
        .filter(|(_, c)| c.open > 0)
        .collect();
    if !earlier.is_empty() {
        const NAMED: usize = 3;
        let mut named: Vec<String> = earlier
            .iter()
            .take(NAMED)
            .map(|(i, c)| {
                let pending = c.open - c.blocked;
                let what = match (pending, c.blocked) {
                    (0, b) => format!("{b} blocked"),
                    (n, 0) => format!("{n} pending"),
                    (n, b) => format!("{n} pending, {b} blocked"),
                };
                format!("\"{}\" ({what})", one_line(names[*i]))
            })
            .collect();
        if earlier.len() > NAMED {
            named.push(format!("{} more", earlier.len() - NAMED));
        }
        let _ = write!(line, " Earlier phases still open: {}.", named.join(", "));
    }
    let later_closed = tallies[p + 1..]
        .iter()
        .any(|later| later.counts().closed > 0);
    if later_closed {
        if earlier.is_empty() {
            line.push_str(
                " Later phases already have closed tasks; the pointer stays on this earliest open phase, and nothing was reopened.",
            );
        } else {
            line.push_str(" Later phases already have closed tasks; nothing was reopened.");
        }
    }
    line
}
