//! The CLI's hints: what to do about a library error with this program's
//! flags and commands. The library's message says what happened; only the
//! CLI knows `--db` or `session list`, so it adds them here.

use std::fmt;

use crate::Error;

/// The error's message followed by the CLI's hint, if it has one.
pub(crate) struct Hinted<'a>(pub &'a Error);

impl fmt::Display for Hinted<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.0, hint(self.0).unwrap_or(""))
    }
}

/// The hint for `error`, written to follow its message.
fn hint(error: &Error) -> Option<&'static str> {
    match error {
        Error::NoSuchSession(_) => Some("; `session list` shows the sessions"),
        Error::ProjectNotADirectory(_) => Some("; give the project directory with --project"),
        _ if error.database_unusable() => Some(". Point --db or GOALKEEPER_DB at another file"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hints_follow_the_facts() {
        let not_ours = Error::NotOurDatabase {
            path: "notes.txt".into(),
            why: "it does not start with the SQLite header".into(),
        };
        assert_eq!(
            Hinted(&not_ours).to_string(),
            "notes.txt is not a goalkeeper database (it does not start with the SQLite header); \
             it was left untouched. Point --db or GOALKEEPER_DB at another file"
        );
        let session = crate::SessionId::parse("alpha").unwrap();
        assert_eq!(
            Hinted(&Error::NoSuchSession(session)).to_string(),
            "session alpha not found; `session list` shows the sessions"
        );
        assert_eq!(
            Hinted(&Error::ProjectNotADirectory("x".into())).to_string(),
            "x is not a directory; give the project directory with --project"
        );
        let plain = Error::Rejected("nothing to undo".into());
        assert_eq!(Hinted(&plain).to_string(), "nothing to undo");
    }
}
