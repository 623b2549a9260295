//! Markdown import: the line-by-line parser behind
//! [`from_markdown`](super::from_markdown).

use std::collections::HashMap;

use super::{DEFAULT_PHASE, ENTITIES, MarkdownError};
use crate::todo::model::{DroppedBy, Phase, Status, Task, TodoList};
use crate::todo::text;
use crate::todo::text::MAX_TASKS;

/// Decodes the five entities of [`escape`] in one left-to-right pass, so
/// `&amp;lt;` becomes `&lt;` and not `<`. Any other `&` is kept as written.
pub(super) fn unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        match ENTITIES.iter().find(|(entity, _)| rest.starts_with(entity)) {
            Some((entity, decoded)) => {
                out.push(*decoded);
                rest = &rest[entity.len()..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// Splits a trailing `<!-- ... -->` off `text`, returning the text before it
/// and the comment's body. The opener is the last `<!--`, and the body may
/// not contain `-->`, so `a <!-- b --> c -->` has no trailing comment.
pub(super) fn split_comment(text: &str) -> (&str, Option<&str>) {
    let text = text.trim_end();
    if let Some(head) = text.strip_suffix("-->")
        && let Some(open) = head.rfind("<!--")
    {
        let body = &head[open + "<!--".len()..];
        if !body.contains("-->") {
            return (&text[..open], Some(body));
        }
    }
    (text, None)
}

/// The status a checkbox marker stands for, alternatives included.
pub(super) fn status_of(marker: &str) -> Option<Status> {
    match marker {
        "" | " " => Some(Status::Pending),
        "/" | ">" => Some(Status::InProgress),
        "x" | "X" => Some(Status::Completed),
        "-" | "~" => Some(Status::Abandoned),
        "!" => Some(Status::Blocked),
        _ => None,
    }
}

/// Where a phase name was first seen, for duplicate messages.
#[derive(Clone, Copy)]
pub(super) enum PhaseOrigin {
    /// A heading on this line.
    Heading(usize),
    /// The implicit phase of tasks before any heading, first task on this line.
    BeforeHeadings(usize),
}

/// The import state: what has been read so far and every error found.
#[derive(Default)]
pub(super) struct Parser {
    phases: Vec<Phase>,
    phase_origins: HashMap<String, PhaseOrigin>,
    task_lines: HashMap<String, usize>,
    /// Task lines seen, valid or not, for the task limit.
    tasks: usize,
    /// The line of the first task past [`MAX_TASKS`].
    over_limit: Option<usize>,
    errors: Vec<MarkdownError>,
    /// The task on the last line read, when that line was a task (where a
    /// `check` comment line below it belongs): its phase and position.
    last_task: Option<(usize, usize)>,
}

impl Parser {
    fn error(&mut self, line: usize, message: impl Into<String>) {
        self.errors.push(MarkdownError {
            line,
            message: message.into(),
        });
    }

    /// Reads one line, already trimmed.
    pub(super) fn line(&mut self, n: usize, line: &str) {
        if line.is_empty() {
            self.last_task = None;
            return;
        }
        let after_task = self.last_task.take();
        if line.starts_with("<!--") {
            let closed = line.len() >= "<!---->".len()
                && line.ends_with("-->")
                && !line[4..line.len() - 3].contains("-->");
            if !closed {
                self.error(
                    n,
                    "an HTML comment line must open and close on the same line, \
                     with nothing after `-->`",
                );
                return;
            }
            if let Some(command) = line[4..line.len() - 3].trim().strip_prefix("check:") {
                self.check(n, command, after_task);
            }
            return;
        }
        let hashes = line.bytes().take_while(|&b| b == b'#').count();
        if (1..=6).contains(&hashes) && separated(&line[hashes..]) {
            self.heading(n, &line[hashes..]);
        } else if line.starts_with(['-', '*', '+']) && separated(&line[1..]) {
            self.item(n, line[1..].trim_start());
        } else {
            self.error(
                n,
                format!(
                    "unrecognised line `{}`; expected a `# Phase` heading (1 to 6 `#`), \
                     a `- [ ] task` item, an HTML comment or a blank line",
                    text::preview(line)
                ),
            );
        }
    }

    fn heading(&mut self, n: usize, rest: &str) {
        let (raw, comment) = split_comment(rest);
        if comment.is_some() {
            self.error(
                n,
                "a heading takes no comment; only tasks end with `<!-- ... -->`",
            );
        }
        let name = self
            .text(n, raw)
            .and_then(|raw| match text::phase_name(&raw) {
                Ok(name) => Some(name),
                Err(e) => {
                    self.error(n, e);
                    None
                }
            });
        let Some(name) = name else {
            // Keep a phase so the tasks under this heading are still checked.
            self.phases.push(Phase::new(String::new()));
            return;
        };
        match self.phase_origins.get(&name) {
            Some(PhaseOrigin::Heading(first)) => {
                let message = format!(
                    "phase \"{}\" is already on line {first}; phase names must be unique",
                    text::preview(&name)
                );
                self.error(n, message);
            }
            Some(PhaseOrigin::BeforeHeadings(first)) => {
                let message = format!(
                    "phase \"{name}\" already holds the tasks before the first heading \
                     (from line {first}); phase names must be unique"
                );
                self.error(n, message);
            }
            None => {
                self.phase_origins
                    .insert(name.clone(), PhaseOrigin::Heading(n));
            }
        }
        self.phases.push(Phase::new(name));
    }

    /// Reads a list item; `rest` follows the bullet and its whitespace.
    fn item(&mut self, n: usize, rest: &str) {
        let checkbox = rest.strip_prefix('\\').unwrap_or(rest);
        let Some((marker, after)) = checkbox
            .strip_prefix('[')
            .and_then(|inside| inside.split_once(']'))
        else {
            self.error(n, "a list item needs a checkbox, as in `- [ ] task`");
            return;
        };
        self.tasks += 1;
        if self.tasks == MAX_TASKS + 1 {
            self.over_limit = Some(n);
        }
        let marker = marker.strip_suffix('\\').unwrap_or(marker);
        let Some(status) = status_of(marker) else {
            self.error(
                n,
                format!(
                    "unknown marker `{}`; use one of `[ ]` or `[]` (pending), \
                     `[/]` or `[>]` (in_progress), `[x]` or `[X]` (completed), \
                     `[-]` or `[~]` (abandoned), `[!]` (blocked)",
                    text::preview(marker)
                ),
            );
            return;
        };

        let (raw, comment) = split_comment(after);
        let content = self
            .text(n, raw)
            .and_then(|raw| match text::task_content(&raw) {
                Ok(content) => Some(content),
                Err(e) => {
                    self.error(n, e);
                    None
                }
            });
        let mut task = Task {
            status,
            ..Task::pending(String::new())
        };
        if let Some(body) = comment {
            self.note(n, &mut task, body);
        }
        let Some(content) = content else {
            return;
        };
        if let Some(first) = self.task_lines.get(&content) {
            let message = format!(
                "task \"{}\" is already on line {first}; task contents must be unique",
                text::preview(&content)
            );
            self.error(n, message);
            return;
        }
        self.task_lines.insert(content.clone(), n);
        task.content = content;
        if self.phases.is_empty() {
            self.phases.push(Phase::new(DEFAULT_PHASE));
            self.phase_origins
                .insert(DEFAULT_PHASE.to_owned(), PhaseOrigin::BeforeHeadings(n));
        }
        if let Some(phase) = self.phases.last_mut() {
            phase.tasks.push(task);
            self.last_task = Some((
                self.phases.len() - 1,
                self.phases[self.phases.len() - 1].tasks.len() - 1,
            ));
        }
    }

    /// Reads a `<!-- check: COMMAND -->` line into the check of the task on
    /// the line before it (`task`).
    fn check(&mut self, n: usize, command: &str, task: Option<(usize, usize)>) {
        let Some((p, t)) = task else {
            self.error(
                n,
                "a `check` comment belongs on the line right after its task's line, as in \
                 `- [ ] Run the tests` then `  <!-- check: cargo test -->`",
            );
            return;
        };
        match crate::check::command(&unescape(command)) {
            Ok(command) => self.phases[p].tasks[t].check = Some(command),
            Err(e) => self.error(n, e),
        }
    }

    /// Reads a task's trailing comment into its note fields.
    fn note(&mut self, n: usize, task: &mut Task, body: &str) {
        let body = body.trim();
        let (key, value) = match body.split_once(':') {
            Some((key, value)) => (key.trim(), value.trim()),
            None => (body, ""),
        };
        match key {
            "blocker" if task.status != Status::Blocked => self.error(
                n,
                format!(
                    "a `blocker` comment belongs on a blocked `[!]` task; this task is {}",
                    task.status
                ),
            ),
            "blocker" => match text::blocker(&unescape(value)) {
                Ok(note) => task.blocker = Some(note),
                Err(e) => self.error(n, e),
            },
            "dropped-by" if task.status != Status::Abandoned => self.error(
                n,
                format!(
                    "a `dropped-by` comment belongs on an abandoned `[-]` task; this task is {}",
                    task.status
                ),
            ),
            "dropped-by" if value == "user" => task.dropped_by = Some(DroppedBy::User),
            "dropped-by" => self.error(
                n,
                format!(
                    "`dropped-by: {}` is not accepted; the only form is `<!-- dropped-by: user -->`",
                    text::preview(value)
                ),
            ),
            _ => self.error(
                n,
                format!(
                    "unknown comment `<!-- {} -->`; a task may end with \
                     `<!-- blocker: NOTE -->` when blocked `[!]` \
                     or `<!-- dropped-by: user -->` when abandoned `[-]`",
                    text::preview(body)
                ),
            ),
        }
    }

    /// Decodes the text of a heading or task, refusing a raw `<!--`.
    fn text(&mut self, n: usize, raw: &str) -> Option<String> {
        if raw.contains("<!--") {
            self.error(
                n,
                "`<!--` inside the text; only one trailing `<!-- ... -->` comment \
                 is allowed, write a literal `<!--` as `&lt;!--`",
            );
            return None;
        }
        Some(unescape(raw))
    }

    pub(super) fn finish(mut self) -> Result<TodoList, Vec<MarkdownError>> {
        if let Some(line) = self.over_limit {
            let message = format!(
                "the list holds {} tasks; the limit is {MAX_TASKS}",
                self.tasks
            );
            self.error(line, message);
            // Stable, so the errors of one line keep their order.
            self.errors.sort_by_key(|e| e.line);
        }
        if self.errors.is_empty() {
            Ok(TodoList::new(self.phases))
        } else {
            Err(self.errors)
        }
    }
}

/// True when `rest` (what follows a heading's `#`s or a bullet) is empty or
/// starts with whitespace, as markdown requires.
pub(super) fn separated(rest: &str) -> bool {
    rest.chars().next().is_none_or(char::is_whitespace)
}
