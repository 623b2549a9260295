//! What is wrong with a settings file or a `--set`, collected so that one
//! error reports every bad key at once.

use std::path::PathBuf;

use crate::error::{Error, Result};

use super::keys::Key;

/// Where a value came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Origin {
    File(PathBuf),
    Set,
}

impl Origin {
    pub(super) fn problem(&self, kind: ProblemKind) -> Problem {
        Problem {
            origin: self.clone(),
            kind,
        }
    }

    /// How a problem starts: the origin, narrowed to `key` when the
    /// problem is about one key (`settings file /x/config.toml: key`, or
    /// `--set key` as typed). A file named by the previous problem
    /// (`repeat`) is not named again; `--set` always is, as its key is part
    /// of the argument.
    fn lead(&self, key: Option<&str>, repeat: bool) -> Option<String> {
        match (self, key) {
            (Origin::Set, Some(key)) => Some(format!("--set {key}")),
            (Origin::Set, None) => Some("--set".to_owned()),
            (Origin::File(_), key) if repeat => key.map(str::to_owned),
            (Origin::File(path), Some(key)) => {
                Some(format!("settings file {}: {key}", path.display()))
            }
            (Origin::File(path), None) => Some(format!("settings file {}", path.display())),
        }
    }
}

/// One bad key or value.
#[derive(Debug)]
pub(super) struct Problem {
    origin: Origin,
    kind: ProblemKind,
}

#[derive(Debug)]
pub(super) enum ProblemKind {
    /// The document is not TOML; the message has the position.
    Syntax(String),
    /// A key no setting has, as written.
    Unknown(String),
    /// A value the key does not accept.
    Invalid {
        /// The key as written (an alias stays an alias).
        written: String,
        expected: &'static str,
        /// The value as the user wrote it.
        got: String,
    },
    /// One key given twice in a document under two spellings.
    Twice {
        key: &'static str,
        first: String,
        second: String,
    },
    /// A `--set` argument without `=`.
    MissingEquals(String),
}

impl ProblemKind {
    pub(super) fn invalid(key: Key, written: String, got: String) -> ProblemKind {
        ProblemKind::Invalid {
            written,
            expected: key.kind().expected(),
            got,
        }
    }

    /// A TOML parse error as one line with a 1-based line and column.
    pub(super) fn syntax(text: &str, error: &toml::de::Error) -> ProblemKind {
        let message = error.message().trim().replace('\n', "; ");
        let Some(span) = error.span() else {
            return ProblemKind::Syntax(format!("invalid TOML: {message}"));
        };
        let start = span.start.min(text.len());
        let before = &text[..start];
        let at = text.get(start..span.end.min(text.len())).unwrap_or("");
        let message = if message == "duplicate key" {
            explain_duplicate(at, text)
        } else {
            message
        };
        let line = before.matches('\n').count() + 1;
        let column = before
            .rsplit_once('\n')
            .map_or(before, |(_, last)| last)
            .chars()
            .count()
            + 1;
        ProblemKind::Syntax(format!(
            "invalid TOML at line {line}, column {column}: {message}"
        ))
    }
}

/// The parser's "duplicate key" with the key, and the way out of the one
/// duplicate the settings layout invites: `todo.reminders` given as a value
/// and as a table (the document also spells a key below it).
fn explain_duplicate(key: &str, text: &str) -> String {
    let key = key.trim();
    let reminders_table = text.contains("reminders.") || text.contains("reminders]");
    if reminders_table && key.trim_matches(['"', '\'']).ends_with("reminders") {
        format!(
            "duplicate key {key}; todo.reminders cannot be both a value and a table, so \
             write [todo.reminders] with enabled = ... and max = ..."
        )
    } else {
        format!("duplicate key {key}")
    }
}

/// `Ok` when there is nothing to report, else one [`Error::Usage`] listing
/// every problem in the order found, `; `-separated. Unknown keys from one
/// origin are named together, and the known keys are listed once at the
/// end.
pub(super) fn check(problems: Vec<Problem>) -> Result<()> {
    if problems.is_empty() {
        return Ok(());
    }
    let mut parts = Vec::new();
    let mut previous: Option<&Origin> = None;
    let mut any_unknown = false;
    for (i, problem) in problems.iter().enumerate() {
        let origin = &problem.origin;
        let (key, body) = match &problem.kind {
            ProblemKind::Unknown(_) => {
                let unknown_here =
                    |p: &&Problem| matches!(p.kind, ProblemKind::Unknown(_)) && p.origin == *origin;
                if problems[..i].iter().any(|p| unknown_here(&p)) {
                    continue;
                }
                let names: Vec<String> = problems[i..]
                    .iter()
                    .filter(unknown_here)
                    .filter_map(|p| match &p.kind {
                        ProblemKind::Unknown(name) => Some(format!("{name:?}")),
                        _ => None,
                    })
                    .collect();
                any_unknown = true;
                let noun = if names.len() == 1 { "key" } else { "keys" };
                (None, format!("unknown {noun} {}", names.join(", ")))
            }
            ProblemKind::Syntax(message) => (None, message.clone()),
            ProblemKind::Invalid {
                written,
                expected,
                got,
            } => (Some(written.clone()), format!("{expected}, got {got}")),
            ProblemKind::Twice { key, first, second } => (
                None,
                format!("{key} is set twice, as {first} and as {second}; keep one"),
            ),
            ProblemKind::MissingEquals(argument) => (
                Some(format!("{argument:?}")),
                "expected KEY=VALUE, e.g. --set todo.eager=always".to_owned(),
            ),
        };
        let repeat = previous == Some(origin);
        parts.push(match origin.lead(key.as_deref(), repeat) {
            Some(lead) => format!("{lead}: {body}"),
            None => body,
        });
        previous = Some(origin);
    }
    if any_unknown {
        let known: Vec<&str> = Key::ALL.into_iter().map(Key::name).collect();
        parts.push(format!("known keys: {}", known.join(", ")));
    }
    Err(Error::Usage(parts.join("; ")))
}
