//! The `GOALKEEPER_*` variables behind the global options `--db`,
//! `--session` and `--agent`. They are read here, after the line is
//! parsed, and not by clap: so the line means the same to clap and to the
//! fast parser whatever the environment holds, and a spoilt variable gets
//! goalkeeper's own message, naming it, instead of clap's.
//!
//! One rule for every variable (DESIGN.md §8): unset or empty, it gives
//! no value (as `${VAR:-default}` reads it in a shell); a value that is
//! not UTF-8 text is refused, naming the variable, except a database
//! path, which may be any bytes. The line's option wins over the
//! variable, which is then not read at all.

use std::ffi::OsString;
use std::path::PathBuf;

use crate::Error;
use crate::sanitize::quoted_excerpt;

/// `$GOALKEEPER_DB`: the database when `--db` is not given.
pub(super) const DB: &str = "GOALKEEPER_DB";
/// `$GOALKEEPER_SESSION`: the session when `--session` is not given.
pub(super) const SESSION: &str = "GOALKEEPER_SESSION";
/// `$GOALKEEPER_AGENT`: the agent when `--agent` is not given.
pub(super) const AGENT: &str = "GOALKEEPER_AGENT";

/// A variable's value, or why it has none that can be used.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Variable {
    /// Unset, or set to the empty string.
    Unset,
    /// UTF-8 text, not empty.
    Text(String),
    /// Bytes that are not UTF-8 text.
    NotText(OsString),
}

impl Variable {
    /// `name` in the process's environment.
    pub(super) fn read(name: &str) -> Variable {
        Variable::of(std::env::var_os(name))
    }

    /// A value as the environment holds it.
    pub(super) fn of(value: Option<OsString>) -> Variable {
        match value {
            None => Variable::Unset,
            Some(value) if value.is_empty() => Variable::Unset,
            Some(value) => match value.into_string() {
                Ok(text) => Variable::Text(text),
                Err(bytes) => Variable::NotText(bytes),
            },
        }
    }
}

/// The database: `line` (`--db`) when the line gave it, else
/// `$GOALKEEPER_DB` (any bytes but the empty string), read by `parse`.
/// `Ok(None)`: neither gives one.
pub(super) fn db<T>(
    line: Option<PathBuf>,
    parse: impl Fn(PathBuf) -> Result<T, Error>,
) -> Result<Option<T>, Spoilt> {
    let (path, source) = match line {
        Some(path) => (path, Source::Line("--db")),
        None => match std::env::var_os(DB).filter(|value| !value.is_empty()) {
            Some(value) => (PathBuf::from(value), Source::Variable(DB)),
            None => return Ok(None),
        },
    };
    parse(path).map(Some).map_err(|e| Spoilt {
        source,
        problem: Problem::Invalid(e),
    })
}

/// Where a global option's value came from, for the message about a bad
/// one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Source {
    /// The command line (`--db`, `--session`, `--agent`).
    Line(&'static str),
    /// The variable of that name.
    Variable(&'static str),
}

/// A global option's value that cannot be used: the message a strict
/// command fails with, and the note a lenient one leaves as it goes on
/// without the value.
#[derive(Debug)]
pub(super) struct Spoilt {
    source: Source,
    problem: Problem,
}

#[derive(Debug)]
enum Problem {
    /// The value is text, and `parse` refused it.
    Invalid(Error),
    /// The variable holds bytes that are not UTF-8; `what` is what it
    /// should hold ("a session id").
    NotText { lossy: String, what: &'static str },
}

impl Spoilt {
    /// The error a strict command fails with (exit 2).
    pub(super) fn into_error(self) -> Error {
        match (self.source, self.problem) {
            (Source::Line(_), Problem::Invalid(e)) => e,
            (Source::Variable(name), Problem::Invalid(e)) => Error::Usage(format!("{name}: {e}")),
            (source, Problem::NotText { lossy, what }) => Error::Usage(format!(
                "{} is not UTF-8 text ({lossy}); set it to {what}, or unset it",
                source.name()
            )),
        }
    }

    /// The note a lenient command (a hook, the status line, an MCP server
    /// its host started) leaves before it goes on without the value.
    pub(super) fn note(&self) -> String {
        let name = self.source.name();
        match &self.problem {
            Problem::Invalid(e) => format!("{name} ignored: {e}"),
            Problem::NotText { lossy, .. } => {
                format!("{name} ignored: it is not UTF-8 text ({lossy})")
            }
        }
    }
}

impl Source {
    fn name(self) -> &'static str {
        match self {
            Source::Line(flag) => flag,
            Source::Variable(name) => name,
        }
    }
}

/// The value of a global option, `line` when the line gave it, else the
/// variable `name`'s, checked by `parse`. `Ok(None)`: neither gives one.
/// `what` says what the variable should hold, for a value that is not
/// text.
pub(super) fn resolve<T>(
    line: Option<&str>,
    flag: &'static str,
    name: &'static str,
    what: &'static str,
    parse: impl Fn(&str) -> Result<T, Error>,
) -> Result<Option<T>, Spoilt> {
    let (text, source) = match line {
        Some(text) => (text.to_owned(), Source::Line(flag)),
        None => match Variable::read(name) {
            Variable::Unset => return Ok(None),
            Variable::Text(text) => (text, Source::Variable(name)),
            Variable::NotText(bytes) => {
                return Err(Spoilt {
                    source: Source::Variable(name),
                    problem: Problem::NotText {
                        lossy: quoted_excerpt(&bytes.to_string_lossy()),
                        what,
                    },
                });
            }
        },
    };
    parse(&text).map(Some).map_err(|e| Spoilt {
        source,
        problem: Problem::Invalid(e),
    })
}

#[cfg(test)]
mod tests {
    use std::os::unix::ffi::OsStringExt;

    use super::*;

    #[test]
    fn empty_is_unset_and_bytes_are_not_text() {
        assert_eq!(Variable::of(None), Variable::Unset);
        assert_eq!(Variable::of(Some(OsString::new())), Variable::Unset);
        assert_eq!(
            Variable::of(Some("w1".into())),
            Variable::Text("w1".to_owned())
        );
        let bytes = OsString::from_vec(b"w\xff1".to_vec());
        assert_eq!(Variable::of(Some(bytes.clone())), Variable::NotText(bytes));
    }

    #[test]
    fn a_spoilt_value_names_where_it_came_from() {
        let not_text = Spoilt {
            source: Source::Variable(AGENT),
            problem: Problem::NotText {
                lossy: quoted_excerpt("w\u{fffd}1"),
                what: "an agent name",
            },
        };
        assert_eq!(
            not_text.note(),
            "GOALKEEPER_AGENT ignored: it is not UTF-8 text (\"w\u{fffd}1\")"
        );
        assert_eq!(
            not_text.into_error().to_string(),
            "GOALKEEPER_AGENT is not UTF-8 text (\"w\u{fffd}1\"); set it to an agent name, or unset it"
        );
        let invalid = |source| Spoilt {
            source,
            problem: Problem::Invalid(crate::SessionId::parse("a b").unwrap_err()),
        };
        let rule = "invalid session id \"a b\": use 1-128 characters from A-Z, a-z, 0-9, '.', '_', ':' and '-'";
        assert_eq!(
            invalid(Source::Variable(SESSION)).into_error().to_string(),
            format!("GOALKEEPER_SESSION: {rule}")
        );
        assert_eq!(
            invalid(Source::Line("--session")).into_error().to_string(),
            rule
        );
        assert_eq!(
            invalid(Source::Line("--session")).note(),
            format!("--session ignored: {rule}")
        );
    }
}
