//! The library's error type. Messages say what happened and what to do
//! about it, in terms any caller has: they never name a command-line flag,
//! which an MCP client or a library user does not have. The CLI maps
//! [`Error::kind`] to its exit code and adds its own hints (`--db`, …).

use std::path::PathBuf;

/// What class of failure an [`Error`] is, for exit codes and adapters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The request was understood and refused (exit code 1).
    Rejected,
    /// The request itself is malformed: bad id, bad flag value (exit code 2).
    Usage,
    /// The database could not be opened, read or written (exit code 3).
    Storage,
}

/// Everything the library can fail with.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A session id outside `[A-Za-z0-9._:-]{1,128}`.
    #[error(
        "invalid session id {}: use 1-128 characters from A-Z, a-z, 0-9, '.', '_', ':' and '-'",
        crate::sanitize::quoted_excerpt(.0)
    )]
    InvalidSession(String),

    /// Input the caller must fix (a flag value, a settings key, a file).
    #[error("{0}")]
    Usage(String),

    /// An operation that was understood and refused; nothing changed.
    #[error("{0}")]
    Rejected(String),

    /// The file exists but is not a goalkeeper database; it was not touched.
    #[error("{path} is not a goalkeeper database ({why}); it was left untouched")]
    NotOurDatabase {
        /// The file.
        path: PathBuf,
        /// What gave it away.
        why: String,
    },

    /// The directory the database file would be in does not exist. A
    /// database file is created where it is missing, never a directory:
    /// a path whose directory is missing is most likely mistyped. Nothing
    /// was created.
    #[error(
        "the directory {} of the database {} does not exist (goalkeeper creates a database file, never a directory)",
        .dir.display(),
        .path.display()
    )]
    NoDatabaseDir {
        /// The database file.
        path: PathBuf,
        /// Its directory, the one missing.
        dir: PathBuf,
    },

    /// No database file at the path, and the caller only reads, which
    /// creates none.
    #[error(
        "there is no goalkeeper database at {}: nothing has been stored there, and a command that only reads creates none",
        .0.display()
    )]
    NoDatabase(PathBuf),

    /// No session of that id was ever written (or it was removed).
    #[error("session {0} not found")]
    NoSuchSession(crate::SessionId),

    /// The project directory to install into is not a directory.
    #[error("{} is not a directory", .0.display())]
    ProjectNotADirectory(PathBuf),

    /// The database was written by a newer goalkeeper.
    #[error(
        "{path} has schema version {found}, but this goalkeeper only knows up to {known}; upgrade goalkeeper (the file was left untouched)"
    )]
    NewerSchema {
        /// The file.
        path: PathBuf,
        /// Its `user_version`.
        found: i64,
        /// The newest version this build knows.
        known: i64,
    },

    /// A stored value that does not parse (a hand-edited or damaged database).
    #[error("the stored {what} is damaged: {why}")]
    Corrupt {
        /// Which value.
        what: String,
        /// The parse error.
        why: String,
    },

    /// The database file (or its WAL) was deleted or replaced while this
    /// process had it open; nothing was written.
    #[error(
        "{path} was {how} while this process had the database open, so nothing was written (it would have gone into a file nobody else sees); restart this process (for an MCP server, restart or reconnect the agent) to open the database again"
    )]
    DatabaseGone {
        /// The file.
        path: PathBuf,
        /// `deleted` or `replaced by another file`.
        how: String,
    },

    /// SQLite failed.
    #[error("database error: {0}{hint}", hint = sqlite_hint(.0))]
    Sqlite(#[from] rusqlite::Error),

    /// PostgreSQL failed or could not be reached (fleet mode). The message
    /// names the server by its URL with the password hidden, and never
    /// quotes the password.
    #[error("{0}")]
    Postgres(String),

    /// The file system failed.
    #[error("{what}: {source}")]
    Io {
        /// What was being done, with the path.
        what: String,
        /// The cause.
        source: std::io::Error,
    },
}

impl Error {
    /// The class of failure, for exit codes.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::InvalidSession(_) | Error::Usage(_) | Error::ProjectNotADirectory(_) => {
                ErrorKind::Usage
            }
            Error::Rejected(_) | Error::NoSuchSession(_) => ErrorKind::Rejected,
            Error::NotOurDatabase { .. }
            | Error::NoDatabaseDir { .. }
            | Error::NoDatabase(_)
            | Error::NewerSchema { .. }
            | Error::Corrupt { .. }
            | Error::DatabaseGone { .. }
            | Error::Sqlite(_)
            | Error::Postgres(_)
            | Error::Io { .. } => ErrorKind::Storage,
        }
    }

    /// True when the database itself cannot be used: it is not
    /// goalkeeper's, it is not SQLite, it is damaged or read-only. Another
    /// database would do.
    #[cfg_attr(not(feature = "cli"), expect(dead_code))]
    pub(crate) fn database_unusable(&self) -> bool {
        use rusqlite::ErrorCode;
        match self {
            Error::NotOurDatabase { .. } => true,
            Error::Sqlite(e) => matches!(
                e.sqlite_error_code(),
                Some(ErrorCode::ReadOnly | ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt)
            ),
            _ => false,
        }
    }
}

fn sqlite_hint(error: &rusqlite::Error) -> &'static str {
    use rusqlite::ErrorCode;
    match error.sqlite_error_code() {
        Some(ErrorCode::ReadOnly) => {
            " (the database file or its directory is read-only; fix the permissions)"
        }
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => {
            " (another process held the database too long; retry)"
        }
        Some(ErrorCode::NotADatabase) => " (the file is not a SQLite database, or it is damaged)",
        Some(ErrorCode::DatabaseCorrupt) => " (the database is damaged; restore a backup)",
        Some(ErrorCode::FileLockingProtocolFailed) => {
            " (another process kept the database's shared-memory index locked for the whole wait: a process stuck or stopped while reading the database; end that process, then retry)"
        }
        Some(ErrorCode::CannotOpen) => {
            " (the file cannot be opened; check the path and its permissions)"
        }
        _ => "",
    }
}

/// The library's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
