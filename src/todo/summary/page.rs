//! `view` pages: how a long list (or one of its phases) is cut into pages
//! of at most [`PAGE_TASKS`] tasks and about [`PAGE_BYTES`] of text, and
//! the text of one page, whether the store read the whole list or only
//! the page's rows.

use std::fmt::Write;

use super::tally::{Tally, tallies};
use super::{
    PAGE_BYTES, PAGE_TASKS, REPAIR_BYTES, push_all, push_bounded, push_counts_of, push_marked,
};
use crate::sanitize::one_line;
use crate::todo::call::ViewPage;
use crate::todo::model::{Phase, Task, TodoList};

/// The number of `view` pages of `list`, or of one of its phases.
pub(crate) fn page_count(list: &TodoList, phase: Option<usize>) -> usize {
    pages(list, phase).len().max(1)
}

/// One `view` page: the counts, the active phase, where the page sits and
/// how to get the next one, then its tasks under their phase names.
pub(super) fn push_page(out: &mut String, list: &TodoList, view: &ViewPage) {
    let phase = view.phase.as_deref().and_then(|name| list.find_phase(name));
    let names: Vec<&str> = list.phases.iter().map(|p| p.name.as_str()).collect();
    let tallies = tallies(list);
    let pages = pages(list, phase);
    let count = pages.len().max(1);
    let index = view.page.clamp(1, count) - 1;
    let tasks = pages.get(index).map(|range| PageTasks {
        first: range.first,
        total: range.total,
        tasks: range
            .tasks
            .iter()
            .map(|&(p, t)| (p, &list.phases[p].tasks[t]))
            .collect(),
    });
    push_page_of(
        out,
        &PageParts {
            names: &names,
            tallies: &tallies,
            phase,
            count,
            index,
            tasks,
        },
        view,
    );
}

/// What one `view` page shows of a list, however it was read: the whole
/// list in memory ([`push_page`]), or only the page's rows and the counts
/// the store keeps (`store::shape`). Both render through [`push_page_of`],
/// so the text is the same.
pub(crate) struct PageParts<'a> {
    /// Every phase's name, in order.
    pub names: &'a [&'a str],
    /// Every phase's tasks by status, in order.
    pub tallies: &'a [Tally],
    /// The phase the view is limited to, if any.
    pub phase: Option<usize>,
    /// The number of pages of the scope (at least 1).
    pub count: usize,
    /// The page shown, from 0, below `count`.
    pub index: usize,
    /// Its tasks; `None` when the scope has none.
    pub tasks: Option<PageTasks<'a>>,
}

/// The tasks of one `view` page with their phase indexes, the position of
/// the first in the scope, and the number of tasks in the scope.
pub(crate) struct PageTasks<'a> {
    pub first: usize,
    pub total: usize,
    pub tasks: Vec<(usize, &'a Task)>,
}

/// The text of a `view` page that `Report::render` prints for a call
/// without errors whose list is not empty and does not fit one page:
/// the repairs line, then the page.
pub(crate) fn render_page(repairs: &[String], parts: &PageParts<'_>, view: &ViewPage) -> String {
    let mut out = String::new();
    if !repairs.is_empty() {
        out.push_str("Repaired: ");
        push_bounded(&mut out, repairs, REPAIR_BYTES, "repairs");
        out.push_str(".\n");
    }
    push_page_of(&mut out, parts, view);
    out.truncate(out.trim_end().len());
    out
}

fn push_page_of(out: &mut String, parts: &PageParts<'_>, view: &ViewPage) {
    let counts = Tally::sum(parts.tallies).counts();
    push_counts_of(out, parts.names, parts.tallies, &counts);
    let (count, index) = (parts.count, parts.index);
    let scope = match parts.phase {
        Some(p) => format!("phase \"{}\"", one_line(parts.names[p])),
        None => "the list".to_owned(),
    };
    let Some(range) = &parts.tasks else {
        let _ = writeln!(out, "{} has no tasks.", capitalize(&scope));
        if let Some(p) = parts.phase {
            let _ = writeln!(out, "{}:", one_line(parts.names[p]));
        }
        return;
    };
    let total = range.total;
    let _ = write!(
        out,
        "Page {}/{count} of {scope}: tasks {}-{} of {total}.",
        index + 1,
        range.first + 1,
        range.first + range.tasks.len(),
    );
    if index + 1 < count {
        let phase_field = match &view.phase {
            Some(name) => format!(", \"phase\": {}", serde_json::Value::from(one_line(name))),
            None => String::new(),
        };
        let _ = write!(
            out,
            " Next: {{\"op\": \"view\"{phase_field}, \"page\": {}}}.",
            index + 2
        );
    }
    out.push('\n');
    let mut current = usize::MAX;
    for &(p, task) in &range.tasks {
        if p != current {
            push_all(out, &[&one_line(parts.names[p]), ":\n"]);
            current = p;
        }
        push_marked(out, task);
        if let Some(note) = &task.blocker {
            out.truncate(out.len() - 1);
            push_all(out, &[" (blocked: ", &one_line(note), ")\n"]);
        }
    }
}

/// The pages of the whole list, or of phase `only`, as the store keeps
/// them: each page's first task `(phase, task)` and its number of tasks.
pub(crate) fn page_starts(list: &TodoList, only: Option<usize>) -> Vec<((usize, usize), usize)> {
    pages(list, only)
        .into_iter()
        .map(|page| (page.tasks[0], page.tasks.len()))
        .collect()
}

/// One `view` page: its tasks as `(phase, task)` positions, the position
/// of its first task in the scope, and the number of tasks in the scope.
struct PageRange {
    first: usize,
    tasks: Vec<(usize, usize)>,
    total: usize,
}

/// The pages of the whole list, or of phase `only`: each up to
/// [`PAGE_TASKS`] tasks and about [`PAGE_BYTES`] of task text.
fn pages(list: &TodoList, only: Option<usize>) -> Vec<PageRange> {
    let scope: Vec<(usize, &Phase)> = list
        .phases
        .iter()
        .enumerate()
        .filter(|(p, _)| only.is_none_or(|o| o == *p))
        .collect();
    let total: usize = scope.iter().map(|(_, phase)| phase.tasks.len()).sum();
    let mut pages: Vec<PageRange> = Vec::new();
    let mut bytes = 0;
    let mut seen = 0;
    for (p, phase) in scope {
        for (t, task) in phase.tasks.iter().enumerate() {
            let size = task.content.len() + 8;
            let full = pages
                .last()
                .is_none_or(|page| page.tasks.len() >= PAGE_TASKS || bytes + size > PAGE_BYTES);
            if full {
                pages.push(PageRange {
                    first: seen,
                    tasks: Vec::new(),
                    total,
                });
                bytes = 0;
            }
            bytes += size;
            seen += 1;
            pages.last_mut().expect("a page").tasks.push((p, t));
        }
    }
    pages
}

fn capitalize(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}
