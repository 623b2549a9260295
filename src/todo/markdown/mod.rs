//! Markdown export and import of the todo list (DESIGN.md §4): a `#` heading per
//! phase, a `- [m] content` checkbox per task, and the notes a task can
//! carry as trailing HTML comments, one per note (`<!-- blocker: NOTE -->`
//! on a blocked task, `<!-- dropped-by: user -->` on an abandoned one, and
//! the comments of several agents, [`team`]).
//!
//! A task's check (DESIGN.md §13) is a comment line of its own right after
//! the task's line, `  <!-- check: COMMAND -->`, so that it never meets the
//! task's trailing comment; an older goalkeeper reads it as a comment line
//! and leaves it out.
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
//! Decisions where the design leaves a choice:
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

mod parse;
mod team;

use super::model::{DroppedBy, Status, TodoList};
use parse::Parser;

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

/// Renders the list as markdown (DESIGN.md §4): one `# Phase` heading per phase
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
            team::render(task, &mut out);
            out.push('\n');
            if let Some(check) = &task.check {
                out.push_str("  <!-- check: ");
                out.push_str(&escape(check));
                out.push_str(" -->\n");
            }
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

#[cfg(test)]
mod tests;
