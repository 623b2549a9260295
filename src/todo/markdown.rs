//! Markdown export and import of the todo list (SPEC §4): a `#` heading per
//! phase, a `- [m] content` checkbox per task, and the two notes a task can
//! carry as a trailing HTML comment (`<!-- blocker: NOTE -->` on a blocked
//! task, `<!-- dropped-by: user -->` on an abandoned one).
//!
//! Export writes one canonical form; import accepts what people and editors
//! tend to write, but never guesses: a line it cannot read is an error with
//! its line number, every error is reported, and nothing is imported.
//! Import does not normalize (the store does that); it only parses.
//!
//! Text is escaped so it can never be read back as structure: `&` → `&amp;`,
//! `<!--` → `&lt;!--`, `-->` → `--&gt;`, LF → `&#10;`, CR → `&#13;`. Import
//! decodes exactly those five entities; any other `&` stays as written.
//!
//! Decisions where the spec is silent:
//! - An empty list renders as an empty string (no headings, no newline).
//! - Only the notes that belong to a status are rendered: a blocker note on a
//!   task that is not blocked, or `dropped_by` on one that is not abandoned,
//!   is left out (a valid list never has either).
//! - Leading indentation is ignored, so nested checkboxes join their phase in
//!   order; CRLF line endings and a leading byte-order mark are accepted.
//! - A heading keeps everything after its `#`s: a trailing `#` sequence is
//!   part of the name (`# Learn C#`), not a closing sequence.
//! - The space after the checkbox may be left out (`- [x]done`).
//! - A bullet without a checkbox (`- plain`) is an error, not a pending task.
//! - An HTML comment line is ignored only when it opens and closes on that
//!   line; a multi-line comment is an error rather than a silent swallow.
//! - A raw `<!--` inside text (anywhere but the one trailing comment) is an
//!   error, since a markdown viewer would hide what follows; a raw `-->`
//!   without an opener is unambiguous and kept as text.
//! - A heading may not carry a trailing comment.
//! - A duplicate of the implicit `Todos` phase (tasks before any heading,
//!   then a `# Todos` heading) is a duplicate phase name.

use std::collections::HashMap;

use super::model::{DroppedBy, Phase, Status, Task, TodoList};
use super::text;
use super::text::MAX_TASKS;

/// Where tasks go when they come before any heading.
const DEFAULT_PHASE: &str = "Todos";

/// The entities import decodes; each is produced by [`escape`].
const ENTITIES: [(&str, char); 5] = [
    ("&amp;", '&'),
    ("&lt;", '<'),
    ("&gt;", '>'),
    ("&#10;", '\n'),
    ("&#13;", '\r'),
];

/// One problem found while importing markdown, on a 1-based line.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct MarkdownError {
    /// The 1-based line the problem is on.
    pub line: usize,
    /// What is wrong and what is accepted instead.
    pub message: String,
}

/// Renders the list as markdown (SPEC §4): one `# Phase` heading per phase
/// (an empty phase is just its heading), one `- [m] content` line per task,
/// phases separated by one blank line, ending with a single newline. The
/// result reads back to the same list through [`from_markdown`] for every
/// list that passes [`TodoList::validate`].
pub fn to_markdown(list: &TodoList) -> String {
    let mut out = String::new();
    for (i, phase) in list.phases.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str("# ");
        out.push_str(&escape(&phase.name));
        out.push('\n');
        for task in &phase.tasks {
            out.push_str("- [");
            out.push(task.status.marker());
            out.push_str("] ");
            out.push_str(&escape(&task.content));
            match (task.status, &task.blocker, task.dropped_by) {
                (Status::Blocked, Some(note), _) => {
                    out.push_str(" <!-- blocker: ");
                    out.push_str(&escape(note));
                    out.push_str(" -->");
                }
                (Status::Abandoned, _, Some(DroppedBy::User)) => {
                    out.push_str(" <!-- dropped-by: user -->");
                }
                _ => {}
            }
            out.push('\n');
        }
    }
    out
}

/// Parses markdown into a list. On any problem returns every error, each
/// with its 1-based line number, in line order; nothing is imported.
/// Content, phase names and blocker notes are trimmed and checked with the
/// same rules and limits as tool input; blocker notes are collapsed to one
/// line. The list is returned as written, not normalized.
pub fn from_markdown(text: &str) -> Result<TodoList, Vec<MarkdownError>> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut parser = Parser::default();
    for (i, line) in text.lines().enumerate() {
        parser.line(i + 1, line.trim());
    }
    parser.finish()
}

/// Escapes text for one markdown line. The order matters: `&` goes first so
/// the entities added later are not escaped again, and after the `<!--` pass
/// no `<` can start a comment, so the `-->` pass cannot create one.
fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace("<!--", "&lt;!--")
        .replace("-->", "--&gt;")
        .replace('\n', "&#10;")
        .replace('\r', "&#13;")
}

/// Decodes the five entities of [`escape`] in one left-to-right pass, so
/// `&amp;lt;` becomes `&lt;` and not `<`. Any other `&` is kept as written.
fn unescape(text: &str) -> String {
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
fn split_comment(text: &str) -> (&str, Option<&str>) {
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
fn status_of(marker: &str) -> Option<Status> {
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
enum PhaseOrigin {
    /// A heading on this line.
    Heading(usize),
    /// The implicit phase of tasks before any heading, first task on this line.
    BeforeHeadings(usize),
}

/// The import state: what has been read so far and every error found.
#[derive(Default)]
struct Parser {
    phases: Vec<Phase>,
    phase_origins: HashMap<String, PhaseOrigin>,
    task_lines: HashMap<String, usize>,
    /// Task lines seen, valid or not, for the task limit.
    tasks: usize,
    /// The line of the first task past [`MAX_TASKS`].
    over_limit: Option<usize>,
    errors: Vec<MarkdownError>,
}

impl Parser {
    fn error(&mut self, line: usize, message: impl Into<String>) {
        self.errors.push(MarkdownError {
            line,
            message: message.into(),
        });
    }

    /// Reads one line, already trimmed.
    fn line(&mut self, n: usize, line: &str) {
        if line.is_empty() {
            return;
        }
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
            content: String::new(),
            status,
            blocker: None,
            dropped_by: None,
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

    fn finish(mut self) -> Result<TodoList, Vec<MarkdownError>> {
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
fn separated(rest: &str) -> bool {
    rest.chars().next().is_none_or(char::is_whitespace)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::todo::MAX_TASK_CHARS;

    const SPEC_EXAMPLE: &str = "\
# Foundation
- [x] Build core
- [/] Add edge cases
- [ ] Run tests
- [-] Old idea
- [-] Cut by me <!-- dropped-by: user -->
- [!] Get API key <!-- blocker: waiting for credentials -->
";

    fn task(content: &str, status: Status) -> Task {
        Task {
            content: content.to_owned(),
            status,
            blocker: None,
            dropped_by: None,
        }
    }

    fn phase(name: &str, tasks: Vec<Task>) -> Phase {
        Phase {
            name: name.to_owned(),
            tasks,
        }
    }

    fn spec_list() -> TodoList {
        let mut cut = task("Cut by me", Status::Abandoned);
        cut.dropped_by = Some(DroppedBy::User);
        let mut key = task("Get API key", Status::Blocked);
        key.blocker = Some("waiting for credentials".to_owned());
        TodoList::new(vec![phase(
            "Foundation",
            vec![
                task("Build core", Status::Completed),
                task("Add edge cases", Status::InProgress),
                task("Run tests", Status::Pending),
                task("Old idea", Status::Abandoned),
                cut,
                key,
            ],
        )])
    }

    /// The tasks of a one-phase import, as (content, status).
    fn tasks_of(markdown: &str) -> Vec<(String, Status)> {
        let list = from_markdown(markdown).unwrap();
        list.tasks()
            .map(|(_, t)| (t.content.clone(), t.status))
            .collect()
    }

    /// The errors of an import, each as its `Display` text.
    fn errors(markdown: &str) -> Vec<String> {
        from_markdown(markdown)
            .unwrap_err()
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    fn one_task(content: &str) -> TodoList {
        TodoList::new(vec![phase("P", vec![task(content, Status::Pending)])])
    }

    #[test]
    fn spec_example_renders() {
        assert_eq!(to_markdown(&spec_list()), SPEC_EXAMPLE);
    }

    #[test]
    fn spec_example_parses() {
        assert_eq!(from_markdown(SPEC_EXAMPLE), Ok(spec_list()));
    }

    #[test]
    fn phases_are_separated_by_one_blank_line_and_empty_phases_are_headings() {
        let list = TodoList::new(vec![
            phase("A", vec![task("a", Status::Pending)]),
            phase("Empty", vec![]),
            phase("B", vec![task("b", Status::Completed)]),
        ]);
        let markdown = to_markdown(&list);
        assert_eq!(markdown, "# A\n- [ ] a\n\n# Empty\n\n# B\n- [x] b\n");
        assert_eq!(from_markdown(&markdown), Ok(list));
    }

    #[test]
    fn an_empty_list_is_an_empty_document() {
        assert_eq!(to_markdown(&TodoList::default()), "");
        assert_eq!(from_markdown(""), Ok(TodoList::default()));
        assert_eq!(from_markdown("\n  \n\t\n"), Ok(TodoList::default()));
    }

    #[test]
    fn notes_that_do_not_belong_to_the_status_are_not_rendered() {
        let mut stale = task("a", Status::Pending);
        stale.blocker = Some("old".into());
        stale.dropped_by = Some(DroppedBy::User);
        let list = TodoList::new(vec![phase("P", vec![stale])]);
        assert_eq!(to_markdown(&list), "# P\n- [ ] a\n");
    }

    #[test]
    fn alternative_markers_are_accepted() {
        let markdown = "# P\n- [X] big x\n- [>] arrow\n- [~] tilde\n- [] empty\n";
        assert_eq!(
            tasks_of(markdown),
            [
                ("big x".to_owned(), Status::Completed),
                ("arrow".to_owned(), Status::InProgress),
                ("tilde".to_owned(), Status::Abandoned),
                ("empty".to_owned(), Status::Pending),
            ]
        );
    }

    #[test]
    fn star_and_plus_bullets_are_accepted() {
        assert_eq!(
            tasks_of("* [x] star\n+ [ ] plus\n-\t[/] tab\n"),
            [
                ("star".to_owned(), Status::Completed),
                ("plus".to_owned(), Status::Pending),
                ("tab".to_owned(), Status::InProgress),
            ]
        );
    }

    #[test]
    fn headings_of_one_to_six_hashes_are_phases() {
        let markdown = "# One\n## Two\n### Three\n#### Four\n##### Five\n###### Six\n";
        let names: Vec<_> = from_markdown(markdown)
            .unwrap()
            .phases
            .into_iter()
            .map(|p| p.name)
            .collect();
        assert_eq!(names, ["One", "Two", "Three", "Four", "Five", "Six"]);
    }

    #[test]
    fn a_heading_keeps_its_trailing_hashes() {
        let list = from_markdown("# Learn C#\n## Phase 2 ##\n").unwrap();
        assert_eq!(list.phases[0].name, "Learn C#");
        assert_eq!(list.phases[1].name, "Phase 2 ##");
    }

    #[test]
    fn backslash_escaped_brackets_are_accepted() {
        let markdown = "- \\[x\\] escaped\n- \\[ \\] open\n- \\[\\] empty\n- \\[!] half \
                        <!-- blocker: later -->\n";
        let list = from_markdown(markdown).unwrap();
        let tasks = &list.phases[0].tasks;
        assert_eq!(tasks[0], task("escaped", Status::Completed));
        assert_eq!(tasks[1], task("open", Status::Pending));
        assert_eq!(tasks[2], task("empty", Status::Pending));
        assert_eq!(tasks[3].status, Status::Blocked);
        assert_eq!(tasks[3].blocker.as_deref(), Some("later"));
    }

    #[test]
    fn tasks_before_any_heading_go_to_todos() {
        let list = from_markdown("- [ ] first\n\n# Later\n- [ ] second\n").unwrap();
        assert_eq!(
            list,
            TodoList::new(vec![
                phase("Todos", vec![task("first", Status::Pending)]),
                phase("Later", vec![task("second", Status::Pending)]),
            ])
        );
    }

    #[test]
    fn blank_lines_comment_lines_indentation_crlf_and_bom_are_tolerated() {
        let markdown = "\u{feff}<!-- goalkeeper export: session default, version 7 -->\r\n\
                        \r\n\
                        \t# Build   \r\n\
                        <!---->\r\n\
                        - [x] core\r\n\
                        \x20\x20- [ ] nested\r\n\
                        \x20\x20\x20\x20\r\n";
        assert_eq!(
            from_markdown(markdown),
            Ok(TodoList::new(vec![phase(
                "Build",
                vec![
                    task("core", Status::Completed),
                    task("nested", Status::Pending)
                ]
            )]))
        );
    }

    #[test]
    fn the_space_after_the_checkbox_may_be_left_out() {
        assert_eq!(
            tasks_of("- [x]done\n"),
            [("done".to_owned(), Status::Completed)]
        );
    }

    #[test]
    fn import_does_not_normalize() {
        let markdown = "# P\n- [/] one\n- [/] two\n";
        assert_eq!(
            tasks_of(markdown),
            [
                ("one".to_owned(), Status::InProgress),
                ("two".to_owned(), Status::InProgress),
            ]
        );
        assert_eq!(
            tasks_of("- [ ] idle\n"),
            [("idle".to_owned(), Status::Pending)]
        );
    }

    #[test]
    fn text_is_trimmed_and_blocker_notes_collapse_to_one_line() {
        let markdown = "#    Spaced   \n- [!]   Wait   <!--   blocker:  a&#10;b \t c   -->\n";
        let list = from_markdown(markdown).unwrap();
        assert_eq!(list.phases[0].name, "Spaced");
        assert_eq!(list.phases[0].tasks[0].content, "Wait");
        assert_eq!(list.phases[0].tasks[0].blocker.as_deref(), Some("a b c"));
    }

    #[test]
    fn unknown_marker_is_an_error_listing_the_accepted_ones() {
        assert_eq!(
            errors("# P\n- [ ] fine\n- [?] x\n- [xx] y\n"),
            [
                "line 3: unknown marker `?`; use one of `[ ]` or `[]` (pending), \
                 `[/]` or `[>]` (in_progress), `[x]` or `[X]` (completed), \
                 `[-]` or `[~]` (abandoned), `[!]` (blocked)",
                "line 4: unknown marker `xx`; use one of `[ ]` or `[]` (pending), \
                 `[/]` or `[>]` (in_progress), `[x]` or `[X]` (completed), \
                 `[-]` or `[~]` (abandoned), `[!]` (blocked)",
            ]
        );
    }

    #[test]
    fn unrecognised_lines_are_errors() {
        assert_eq!(
            errors("hello\n1. numbered\n####### seven hashes\n#tight\n---\n-[ ] tight\n"),
            [
                expected_unrecognised(1, "hello"),
                expected_unrecognised(2, "1. numbered"),
                expected_unrecognised(3, "####### seven hashes"),
                expected_unrecognised(4, "#tight"),
                expected_unrecognised(5, "---"),
                expected_unrecognised(6, "-[ ] tight"),
            ]
        );
    }

    #[test]
    fn a_bullet_without_a_checkbox_is_an_error() {
        assert_eq!(
            errors("- plain\n- [ unclosed\n-\n"),
            [
                "line 1: a list item needs a checkbox, as in `- [ ] task`",
                "line 2: a list item needs a checkbox, as in `- [ ] task`",
                "line 3: a list item needs a checkbox, as in `- [ ] task`",
            ]
        );
    }

    const UNCLOSED: &str =
        "an HTML comment line must open and close on the same line, with nothing after `-->`";

    #[test]
    fn a_comment_line_must_close_on_the_same_line() {
        assert_eq!(
            errors("<!-- opens\n- [ ] a\n-->\n<!-- a --> b -->\n"),
            [
                format!("line 1: {UNCLOSED}"),
                expected_unrecognised(3, "-->"),
                format!("line 4: {UNCLOSED}"),
            ]
        );
    }

    fn expected_unrecognised(n: usize, line: &str) -> String {
        format!(
            "line {n}: unrecognised line `{line}`; expected a `# Phase` heading \
             (1 to 6 `#`), a `- [ ] task` item, an HTML comment or a blank line"
        )
    }

    #[test]
    fn duplicate_task_contents_name_both_lines() {
        assert_eq!(
            errors("# A\n- [ ] same\n\n# B\n- [x] same\n"),
            ["line 5: task \"same\" is already on line 2; task contents must be unique"]
        );
    }

    #[test]
    fn duplicate_phase_names_name_both_lines() {
        assert_eq!(
            errors("# A\n- [ ] a\n# A\n"),
            ["line 3: phase \"A\" is already on line 1; phase names must be unique"]
        );
        assert_eq!(
            errors("\n- [ ] a\n# Todos\n"),
            [
                "line 3: phase \"Todos\" already holds the tasks before the first heading \
                 (from line 2); phase names must be unique"
            ]
        );
    }

    #[test]
    fn duplicates_compare_the_decoded_trimmed_text() {
        assert_eq!(
            errors("- [ ] a&amp;b\n- [x]   a&b  \n"),
            ["line 2: task \"a&b\" is already on line 1; task contents must be unique"]
        );
    }

    #[test]
    fn more_than_the_task_limit_is_an_error_on_the_first_task_past_it() {
        let mut markdown = String::from("# Big\n");
        for i in 0..MAX_TASKS + 2 {
            markdown.push_str(&format!("- [ ] t{i}\n"));
        }
        markdown.push_str("hello\n");
        let errs = errors(&markdown);
        assert_eq!(
            errs,
            [
                format!(
                    "line {}: the list holds 10002 tasks; the limit is 10000",
                    MAX_TASKS + 2
                ),
                expected_unrecognised(MAX_TASKS + 4, "hello"),
            ]
        );

        let mut at_limit = String::new();
        for i in 0..MAX_TASKS {
            at_limit.push_str(&format!("- [ ] t{i}\n"));
        }
        assert_eq!(from_markdown(&at_limit).unwrap().task_count(), MAX_TASKS);
    }

    #[test]
    fn a_blocker_comment_belongs_on_a_blocked_task() {
        assert_eq!(
            errors("- [ ] a <!-- blocker: later -->\n- [-] b <!-- blocker: later -->\n"),
            [
                "line 1: a `blocker` comment belongs on a blocked `[!]` task; this task is pending",
                "line 2: a `blocker` comment belongs on a blocked `[!]` task; this task is abandoned",
            ]
        );
    }

    #[test]
    fn a_dropped_by_comment_belongs_on_an_abandoned_task_and_only_names_the_user() {
        assert_eq!(
            errors(
                "- [x] a <!-- dropped-by: user -->\n\
                 - [-] b <!-- dropped-by: agent -->\n\
                 - [~] c <!-- dropped-by -->\n"
            ),
            [
                "line 1: a `dropped-by` comment belongs on an abandoned `[-]` task; \
                 this task is completed",
                "line 2: `dropped-by: agent` is not accepted; the only form is \
                 `<!-- dropped-by: user -->`",
                "line 3: `dropped-by: ` is not accepted; the only form is \
                 `<!-- dropped-by: user -->`",
            ]
        );
        let list = from_markdown("- [~] c <!-- dropped-by: user -->\n").unwrap();
        assert_eq!(list.phases[0].tasks[0].dropped_by, Some(DroppedBy::User));
    }

    #[test]
    fn an_unknown_comment_is_an_error() {
        assert_eq!(
            errors("- [!] a <!-- owner: me -->\n"),
            [
                "line 1: unknown comment `<!-- owner: me -->`; a task may end with \
                 `<!-- blocker: NOTE -->` when blocked `[!]` or \
                 `<!-- dropped-by: user -->` when abandoned `[-]`"
            ]
        );
    }

    #[test]
    fn a_heading_takes_no_comment() {
        assert_eq!(
            errors("# P <!-- blocker: x -->\n"),
            ["line 1: a heading takes no comment; only tasks end with `<!-- ... -->`"]
        );
    }

    #[test]
    fn a_raw_comment_opener_inside_text_is_an_error() {
        let message = "`<!--` inside the text; only one trailing `<!-- ... -->` comment \
                       is allowed, write a literal `<!--` as `&lt;!--`";
        assert_eq!(
            errors(
                "# A <!-- b\n\
                 - [ ] a <!-- note --> b\n\
                 - [-] c <!-- dropped-by: user --> <!-- dropped-by: user -->\n"
            ),
            [
                format!("line 1: {message}"),
                format!("line 2: {message}"),
                format!("line 3: {message}"),
            ]
        );
    }

    #[test]
    fn a_raw_comment_closer_without_an_opener_is_text() {
        assert_eq!(
            tasks_of("- [ ] a --> b -->\n"),
            [("a --> b -->".to_owned(), Status::Pending)]
        );
    }

    #[test]
    fn text_rules_and_limits_apply_with_line_numbers() {
        let long = "t".repeat(MAX_TASK_CHARS + 1);
        let markdown = format!(
            "#\n- [ ]\n- [ ] &#10;\n- [!] w <!-- blocker: -->\n- [ ] {long}\n- [ ] {}\n",
            "t".repeat(MAX_TASK_CHARS)
        );
        assert_eq!(
            errors(&markdown),
            [
                "line 1: phase name is empty; give some text".to_owned(),
                "line 2: task content is empty; give some text".to_owned(),
                "line 3: task content is empty; give some text".to_owned(),
                "line 4: blocker note is empty; give some text".to_owned(),
                format!(
                    "line 5: task content \"{}…\" is 1001 characters; the limit is 1000",
                    "t".repeat(40)
                ),
            ]
        );
    }

    #[test]
    fn every_error_is_collected_in_line_order() {
        let errs = from_markdown("# P\nhello\n- [?] a\n- [ ] ok\n# P\n- [x] ok\n").unwrap_err();
        let lines: Vec<_> = errs.iter().map(|e| e.line).collect();
        assert_eq!(lines, [2, 3, 5, 6]);
    }

    #[test]
    fn one_line_can_carry_several_errors() {
        assert_eq!(
            errors("- [ ] <!-- blocker: x -->\n"),
            [
                "line 1: task content is empty; give some text",
                "line 1: a `blocker` comment belongs on a blocked `[!]` task; this task is pending",
            ]
        );
    }

    #[test]
    fn the_error_displays_its_line_and_is_a_std_error() {
        let error = MarkdownError {
            line: 7,
            message: "unknown marker `?`".into(),
        };
        assert_eq!(error.to_string(), "line 7: unknown marker `?`");
        let boxed: Box<dyn std::error::Error> = Box::new(error);
        assert!(boxed.source().is_none());
    }

    #[test]
    fn ampersands_and_comment_delimiters_are_escaped() {
        let list = one_task("a & b <!-- c --> d");
        let markdown = to_markdown(&list);
        assert_eq!(markdown, "# P\n- [ ] a &amp; b &lt;!-- c --&gt; d\n");
        assert_eq!(from_markdown(&markdown), Ok(list));
    }

    #[test]
    fn phase_names_and_blocker_notes_are_escaped() {
        let mut blocked = task("t", Status::Blocked);
        blocked.blocker = Some("wait --> & <!-- see".into());
        let list = TodoList::new(vec![phase("<!-- & -->", vec![blocked])]);
        let markdown = to_markdown(&list);
        assert_eq!(
            markdown,
            "# &lt;!-- &amp; --&gt;\n- [!] t <!-- blocker: wait --&gt; &amp; &lt;!-- see -->\n"
        );
        assert_eq!(from_markdown(&markdown), Ok(list));
    }

    #[test]
    fn newlines_and_carriage_returns_stay_on_one_line() {
        let list = one_task("one\ntwo\r\nthree\rfour");
        let markdown = to_markdown(&list);
        assert_eq!(markdown, "# P\n- [ ] one&#10;two&#13;&#10;three&#13;four\n");
        assert_eq!(from_markdown(&markdown), Ok(list));
    }

    #[test]
    fn overlapping_delimiters_are_escaped() {
        for content in ["<!-->", "<!--->", "a<!---->b", "--->", "<<!--!-->>"] {
            let markdown = to_markdown(&one_task(content));
            let line = markdown.lines().nth(1).unwrap();
            assert!(!line.contains("<!--") && !line.contains("-->"), "{line}");
            assert_eq!(from_markdown(&markdown), Ok(one_task(content)));
        }
        assert_eq!(escape("<!-->"), "&lt;!--&gt;");
    }

    #[test]
    fn already_escaped_text_round_trips_to_itself() {
        for content in [
            "&amp;",
            "&lt;!--",
            "--&gt;",
            "&#10;",
            "&amp;amp;",
            "&#13;&gt;",
        ] {
            let list = one_task(content);
            assert_eq!(from_markdown(&to_markdown(&list)), Ok(list), "{content}");
        }
        assert_eq!(to_markdown(&one_task("&amp;")), "# P\n- [ ] &amp;amp;\n");
    }

    #[test]
    fn only_the_five_entities_are_decoded() {
        assert_eq!(
            tasks_of("- [ ] AT&T &nbsp; &quot; &#60; &LT; & &amp;lt; &lt;&gt;\n"),
            [(
                "AT&T &nbsp; &quot; &#60; &LT; & &lt; <>".to_owned(),
                Status::Pending
            )]
        );
        assert_eq!(unescape("&&amp;&"), "&&&");
    }

    #[test]
    fn hostile_characters_pass_through() {
        let content = "tab\there \u{2028} nul\0 🦀 漢字 [x] # - [ ] \\[";
        let list = one_task(content);
        assert_eq!(from_markdown(&to_markdown(&list)), Ok(list));
    }

    const HOSTILE: &[&str] = &[
        "<!--",
        "-->",
        "<!-->",
        "&",
        "&amp;",
        "&#10;",
        "&#13;",
        "&lt;",
        "&gt;",
        "&nbsp;",
        "[",
        "]",
        "[x]",
        "\\[",
        "\\]",
        "#",
        "# ",
        "- [ ] ",
        "*",
        "+",
        "\r",
        "\n",
        "\r\n",
        "\t",
        " ",
        "  ",
        "\u{2028}",
        "\u{2029}",
        "\u{85}",
        "\u{a0}",
        "\u{feff}",
        "\0",
        "🦀",
        "漢字",
        ":",
        "blocker:",
        "dropped-by: user",
        "!",
        "<",
        ">",
        "-",
        "~",
        "/",
        "\\",
    ];

    fn hostile_text() -> impl Strategy<Value = String> {
        let fragment = prop_oneof![
            3 => proptest::sample::select(HOSTILE).prop_map(str::to_owned),
            2 => "[a-zA-Z0-9]{1,6}",
            1 => any::<char>().prop_map(String::from),
        ];
        proptest::collection::vec(fragment, 1..8).prop_map(|parts| parts.concat())
    }

    fn any_task() -> impl Strategy<Value = Task> {
        (
            hostile_text(),
            proptest::sample::select(Status::ALL.to_vec()),
            proptest::option::of(hostile_text()),
            any::<bool>(),
        )
            .prop_map(|(content, status, note, by_user)| {
                let mut task = task(content.trim(), status);
                if status == Status::Blocked {
                    task.blocker = note.and_then(|n| text::blocker(&n).ok());
                }
                if status == Status::Abandoned && by_user {
                    task.dropped_by = Some(DroppedBy::User);
                }
                task
            })
    }

    /// Random lists that pass `validate()`: duplicates are dropped before
    /// the filter so few cases are rejected.
    fn valid_list() -> impl Strategy<Value = TodoList> {
        let phase = (hostile_text(), proptest::collection::vec(any_task(), 0..6));
        proptest::collection::vec(phase, 0..5)
            .prop_map(|phases| {
                let mut names = std::collections::HashSet::new();
                let mut contents = std::collections::HashSet::new();
                let phases = phases
                    .into_iter()
                    .filter(|(name, _)| names.insert(name.trim().to_owned()))
                    .map(|(name, tasks)| Phase {
                        name: name.trim().to_owned(),
                        tasks: tasks
                            .into_iter()
                            .filter(|t| contents.insert(t.content.clone()))
                            .collect(),
                    })
                    .collect();
                TodoList::new(phases)
            })
            .prop_filter("list must validate", |list| list.validate().is_ok())
    }

    /// Markdown-ish documents: mostly well-formed headings and checkboxes in
    /// every accepted syntax, with hostile text and noise lines mixed in, so
    /// that both the import and the error paths get exercised.
    fn markdownish() -> impl Strategy<Value = String> {
        let text = || prop_oneof![3 => "[a-z]{1,8}( [a-z]{1,8})?", 1 => hostile_text()];
        let item = (
            proptest::sample::select(vec!["- ", "* ", "+ ", "-\t", "  - "]),
            proptest::sample::select(vec!["[", "\\["]),
            proptest::sample::select(vec!["", " ", "x", "X", "/", ">", "-", "~", "!"]),
            proptest::sample::select(vec!["]", "\\]"]),
            text(),
            text(),
            0..8u8,
        )
            .prop_map(|(bullet, open, marker, close, content, note, dice)| {
                let comment = match (marker, dice) {
                    ("!", 0..=3) => format!(" <!-- blocker: {note} -->"),
                    ("-" | "~", 0..=3) => " <!-- dropped-by: user -->".to_owned(),
                    (_, 7) => format!(" <!-- {note} -->"),
                    _ => String::new(),
                };
                format!("{bullet}{open}{marker}{close} {content}{comment}")
            });
        let noise = prop_oneof![
            hostile_text(),
            hostile_text().prop_map(|t| format!("- [?] {t}")),
            hostile_text().prop_map(|t| format!("- [ {t}")),
            hostile_text().prop_map(|t| format!("####### {t}")),
        ];
        let line = prop_oneof![
            2 => ("#{1,6}", text()).prop_map(|(hashes, name)| format!("{hashes} {name}")),
            8 => item,
            1 => noise,
            1 => Just(String::new()),
            1 => Just("<!-- provenance -->".to_owned()),
        ];
        (
            proptest::collection::vec(line, 0..10),
            proptest::sample::select(vec!["\n", "\r\n"]),
        )
            .prop_map(|(lines, end)| lines.join(end))
    }

    proptest! {
        #[test]
        fn every_valid_list_round_trips(list in valid_list()) {
            let markdown = to_markdown(&list);
            prop_assert_eq!(from_markdown(&markdown), Ok(list));
        }

        #[test]
        fn escaped_text_never_holds_a_delimiter_or_line_break(text in hostile_text()) {
            let escaped = escape(&text);
            prop_assert!(!escaped.contains("<!--"));
            prop_assert!(!escaped.contains("-->"));
            prop_assert!(!escaped.contains(['\n', '\r']));
            prop_assert_eq!(unescape(&escaped), text);
        }

        #[test]
        fn any_import_is_valid_and_stable_or_reports_lines(markdown in markdownish()) {
            match from_markdown(&markdown) {
                Ok(list) => {
                    prop_assert_eq!(list.validate(), Ok(()));
                    prop_assert_eq!(from_markdown(&to_markdown(&list)), Ok(list));
                }
                Err(errs) => {
                    prop_assert!(!errs.is_empty());
                    let last = markdown.lines().count();
                    prop_assert!(errs.iter().all(|e| (1..=last).contains(&e.line)));
                    prop_assert!(errs.windows(2).all(|w| w[0].line <= w[1].line));
                }
            }
        }
    }
}
