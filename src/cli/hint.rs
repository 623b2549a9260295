//! The CLI's hints: what to do about a library error with this program's
//! flags and commands. The library's message says what happened; only the
//! CLI knows `--db` or `session list`, so it adds them here.

use std::fmt;

use crate::Error;

/// The error's message followed by the CLI's hint, if it has one.
pub(crate) struct Hinted<'a>(pub &'a Error);

impl fmt::Display for Hinted<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.0, hint(self.0).unwrap_or_default())
    }
}

/// The hint for `error`, written to follow its message.
fn hint(error: &Error) -> Option<String> {
    Some(match error {
        Error::NoSuchSession(_) => "; `session list` shows the sessions".into(),
        Error::ProjectNotADirectory(_) => "; give the project directory with --project".into(),
        Error::NoDatabaseDir { dir, .. } => format!(
            "; create it first (mkdir -p {}), or drop --db and unset GOALKEEPER_DB to use the default database",
            shell_word(&dir.display().to_string())
        ),
        Error::NoDatabase(_) => "; the first command that writes there (a hook event, `todo apply`, `goal set`) creates it; check --db and GOALKEEPER_DB if you meant another database".into(),
        _ if error.database_unusable() => ". Point --db or GOALKEEPER_DB at another file".into(),
        _ => return None,
    })
}

/// `text` as one shell word: as it is when nothing in it is special to a
/// shell, else in single quotes.
fn shell_word(text: &str) -> String {
    if !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+,:@%".contains(c))
    {
        text.to_owned()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
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
