//! The text summary a `todo` call returns (SPEC §2.4): errors, what remains,
//! what is blocked, the counts, the active phase, then the list with
//! markdown markers.
//!
//! Task text is shown as one line: line breaks and control characters are
//! escaped the way prompts escape them, so a summary line is always one task.

use std::fmt::Write;

use super::model::{Status, TodoList};
use crate::sanitize::one_line;

/// Whether the summary follows a read or a change; only the wording of an
/// empty list differs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SummaryKind {
    /// After `view` (or a rejected call): "Todo list is empty."
    View,
    /// After a successful mutation: "Todo list cleared."
    Mutation,
}

/// Renders the summary of `list`, headed by `errors` when there are any.
///
/// Every todo command prints this, so its per-task lines are appended piece
/// by piece rather than through `write!`, and each phase name is made one
/// line once: on a 1,000-task list the formatting machinery was a fifth of
/// a whole `todo apply` process.
pub fn summary(list: &TodoList, errors: &[String], kind: SummaryKind) -> String {
    let mut out = String::new();
    if !errors.is_empty() {
        let _ = writeln!(out, "Errors: {}", one_line(&errors.join("; ")));
    }
    if list.is_empty() {
        out.push_str(match kind {
            SummaryKind::View => "Todo list is empty.",
            SummaryKind::Mutation => "Todo list cleared.",
        });
        return out;
    }
    let phase_names: Vec<_> = list.phases.iter().map(|p| one_line(&p.name)).collect();
    let open = |s: Status| matches!(s, Status::Pending | Status::InProgress);
    let remaining = list.tasks().filter(|(_, t)| open(t.status)).count();
    out.reserve(
        list.tasks()
            .map(|(_, t)| t.content.len() + 16)
            .sum::<usize>()
            * 2,
    );
    if remaining > 0 {
        let _ = writeln!(out, "Remaining ({remaining}):");
        for (p, task) in list.tasks().filter(|(_, t)| open(t.status)) {
            push_all(
                &mut out,
                &[
                    "  - ",
                    &one_line(&task.content),
                    " [",
                    task.status.as_str(),
                    "] (",
                    &phase_names[p],
                    ")\n",
                ],
            );
        }
    }
    let counts = list.counts();
    if counts.blocked > 0 {
        let _ = writeln!(out, "Blocked ({}):", counts.blocked);
        for (p, task) in list.tasks().filter(|(_, t)| t.status == Status::Blocked) {
            push_all(
                &mut out,
                &["  - ", &one_line(&task.content), " (", &phase_names[p], ")"],
            );
            match &task.blocker {
                Some(note) => push_all(&mut out, &[": ", &one_line(note), "\n"]),
                None => out.push('\n'),
            }
        }
    }
    let _ = writeln!(
        out,
        "Overall: {}/{} done, {} open.",
        counts.closed, counts.total, counts.open
    );
    out.push_str(&active_phase_line(list));
    out.push('\n');
    for (phase, name) in list.phases.iter().zip(&phase_names) {
        push_all(&mut out, &[name, ":\n"]);
        for task in &phase.tasks {
            out.push_str("  - [");
            out.push(task.status.marker());
            push_all(&mut out, &["] ", &one_line(&task.content), "\n"]);
        }
    }
    out.truncate(out.trim_end().len());
    out
}

fn push_all(out: &mut String, parts: &[&str]) {
    for part in parts {
        out.push_str(part);
    }
}

/// "Active phase 1/2 "Foundation" (1/2 done)." plus, when a later phase
/// already has closed tasks, a note that the pointer stays on the earliest
/// open phase and nothing was reopened.
fn active_phase_line(list: &TodoList) -> String {
    let Some(p) = list.active_phase() else {
        return "Every task is closed; no phase is active.".to_owned();
    };
    let phase = &list.phases[p];
    let counts = super::model::Counts::of(&phase.tasks);
    let mut line = format!(
        "Active phase {}/{} \"{}\" ({}/{} done).",
        p + 1,
        list.phases.len(),
        one_line(&phase.name),
        counts.closed,
        counts.total
    );
    let later_closed = list.phases[p + 1..]
        .iter()
        .any(|later| later.tasks.iter().any(|t| t.status.is_closed()));
    if later_closed {
        line.push_str(
            " Later phases already have closed tasks; the pointer stays on this earliest open phase, and nothing was reopened.",
        );
    }
    line
}
