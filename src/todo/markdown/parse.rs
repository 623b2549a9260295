//! Markdown import: the line-by-line parser behind
//! [`from_markdown`](super::from_markdown).

use std::collections::{HashMap, HashSet};

use super::{DEFAULT_PHASE, MarkdownError, team, unescape};
use crate::todo::model::{DroppedBy, Phase, Status, Task, TodoList};
use crate::todo::text;
use crate::todo::text::MAX_TASKS;

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

        // Every trailing comment, in the order written.
        let mut raw = after;
        let mut comments = Vec::new();
        while let (head, Some(body)) = split_comment(raw) {
            comments.push(body);
            raw = head;
        }
        comments.reverse();
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
        let mut keys = Vec::new();
        for body in comments {
            self.note(n, &mut task, body, &mut keys);
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

    /// Reads one of a task's trailing comments into its note fields;
    /// `keys` are those of the comments before it on the line.
    fn note(&mut self, n: usize, task: &mut Task, body: &str, keys: &mut Vec<String>) {
        let body = body.trim();
        let (key, value) = match body.split_once(':') {
            Some((key, value)) => (key.trim(), value.trim()),
            None => (body, ""),
        };
        if keys.iter().any(|k| k == key) {
            self.error(
                n,
                format!(
                    "a second `{}` comment; a task carries each note once",
                    text::preview(key)
                ),
            );
            return;
        }
        keys.push(key.to_owned());
        match key {
            key if team::KEYS.contains(&key) => {
                if let Err(e) = team::read(key, value, task) {
                    self.error(n, e);
                }
            }
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
                     `<!-- blocker: NOTE -->` and `<!-- after: TASK -->` when blocked `[!]`, \
                     `<!-- dropped-by: user -->` when abandoned `[-]`, \
                     `<!-- held-by: AGENT since TIME -->` when in progress `[/]` \
                     or `<!-- done-by: AGENT -->` when completed `[x]`",
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
                "`<!--` inside the text; only trailing `<!-- ... -->` comments \
                 are allowed, write a literal `<!--` as `&lt;!--`",
            );
            return None;
        }
        Some(unescape(raw))
    }

    pub(super) fn finish(mut self) -> Result<TodoList, Vec<MarkdownError>> {
        self.check_afters();
        if let Some(line) = self.over_limit {
            let message = format!(
                "the list holds {} tasks; the limit is {MAX_TASKS}",
                self.tasks
            );
            self.error(line, message);
        }
        // Stable, so the errors of one line keep their order.
        self.errors.sort_by_key(|e| e.line);
        if self.errors.is_empty() {
            Ok(TodoList::new(self.phases))
        } else {
            Err(self.errors)
        }
    }
}

impl Parser {
    /// Each `after` names another task of the document, and following the
    /// links from a task never comes back to it: what a `block` with
    /// `after` could have left (DESIGN.md §2.5).
    fn check_afters(&mut self) {
        let waits: HashMap<&str, &str> = self
            .phases
            .iter()
            .flat_map(|p| &p.tasks)
            .filter_map(|t| Some((t.content.as_str(), t.after.as_deref()?)))
            .collect();
        let line = |task: &str| self.task_lines.get(task).copied().unwrap_or(0);
        let mut errors = Vec::new();
        for (&task, &blocker) in &waits {
            if blocker == task {
                errors.push((
                    line(task),
                    format!(
                        "task \"{}\" cannot wait for itself; name another task in `after`",
                        text::preview(task)
                    ),
                ));
            } else if !self.task_lines.contains_key(blocker) {
                errors.push((line(task), format!(
                    "`after` names task \"{}\", which is not in the list; name a task of the list by its exact content",
                    text::preview(blocker)
                )));
            }
        }
        // The tasks on a circle of two or more links, each walk stopping
        // at a task an earlier walk finished: every link is followed once.
        let mut done: HashSet<&str> = HashSet::new();
        for &start in waits.keys() {
            let mut path: Vec<&str> = Vec::new();
            let mut on_path: HashMap<&str, usize> = HashMap::new();
            let mut at = start;
            while !done.contains(at) {
                if let Some(&i) = on_path.get(at) {
                    for &task in &path[i..] {
                        if waits.get(task) != Some(&task) {
                            errors.push((line(task), format!(
                                "task \"{}\" waits, through its `after` links, for itself; the links go in a circle",
                                text::preview(task)
                            )));
                        }
                    }
                    break;
                }
                on_path.insert(at, path.len());
                path.push(at);
                match waits.get(at) {
                    Some(&next) => at = next,
                    None => break,
                }
            }
            done.extend(path);
        }
        for (line, message) in errors {
            self.error(line, message);
        }
    }
}

/// True when `rest` (what follows a heading's `#`s or a bullet) is empty or
/// starts with whitespace, as markdown requires.
pub(super) fn separated(rest: &str) -> bool {
    rest.chars().next().is_none_or(char::is_whitespace)
}
