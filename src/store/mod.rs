//! The SQLite store (SPEC §7): one file, WAL, a busy timeout, versioned
//! migrations, and one `BEGIN IMMEDIATE` transaction per command.
//!
//! Opening the file, and refusing one that is not ours, is in [`open`].

mod backup;
pub(crate) mod events;
pub(crate) mod goals;
mod marks;
mod migrations;
mod open;
mod patch;
mod rows;
mod session_tx;
pub(crate) mod sessions;
mod todos;
mod watch;

use std::cell::Cell;
use std::path::{Path, PathBuf};

use rusqlite::{Connection, Transaction, TransactionBehavior};

use crate::SessionId;
use crate::error::Result;

pub use events::{Event, EventKind};
pub use goals::GoalCall;
pub use rows::UNDO_DEPTH;
pub use session_tx::{Continuation, Memory, SessionTx};
pub use sessions::SessionInfo;
pub use watch::{SessionSnapshot, SessionSummary};

/// `PRAGMA application_id` of a goalkeeper database ("gkpr").
pub const APPLICATION_ID: i64 = 0x676b_7072;

/// The goalkeeper database. One connection; every public method is one
/// immediate transaction.
pub struct Store {
    conn: Connection,
    path: Option<PathBuf>,
    /// Set once setup has found (or made) a goalkeeper database: only then
    /// may closing the connection write to the file.
    ours: Cell<bool>,
    /// A non-empty WAL was beside the file when it was opened.
    found_wal: Cell<bool>,
}

impl Store {
    /// The file behind the store, if any.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// Starts the one immediate transaction of a command.
    pub(crate) fn immediate(&mut self) -> Result<Transaction<'_>> {
        Ok(self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?)
    }

    /// Runs `f` in one immediate transaction and commits when it succeeds
    /// (an error drops the transaction, which rolls it back).
    pub(crate) fn in_tx<T>(&mut self, f: impl FnOnce(&Transaction<'_>) -> Result<T>) -> Result<T> {
        let tx = self.immediate()?;
        let value = f(&tx)?;
        tx.commit()?;
        Ok(value)
    }

    /// Starts the write transaction of a command on `session` (an
    /// immediate one: the write lock is taken before the first read, so
    /// what the command reads is what it overwrites).
    pub(crate) fn write_tx(&mut self, _session: &SessionId) -> Result<Transaction<'_>> {
        self.immediate()
    }

    /// Starts a read-only transaction: one consistent snapshot, without the
    /// write lock. In WAL mode a reader never waits for a writer (nor a
    /// writer for it): it sees the last commit before its first read.
    pub(crate) fn read_tx(&self) -> Result<Transaction<'_>> {
        Ok(self.conn.unchecked_transaction()?)
    }

    /// Runs `f` in one read transaction (see [`Store::read_tx`]).
    pub(crate) fn in_read_tx<T>(&self, f: impl FnOnce(&Transaction<'_>) -> Result<T>) -> Result<T> {
        let tx = self.read_tx()?;
        let value = f(&tx)?;
        tx.commit()?;
        Ok(value)
    }

    /// The version of `session`'s todo list (0 if it was never written):
    /// one indexed row, cheap enough to poll for changes.
    pub fn todo_version(&self, session: &SessionId) -> Result<i64> {
        self.in_read_tx(|tx| sessions::todo_version(tx, session))
    }

    /// Writes a consistent copy of the whole database to `path`, a single
    /// file that [`Store::open`] opens like the original. Refused, with
    /// nothing written, when `path` already exists. Other processes keep
    /// reading and writing meanwhile; the copy holds every commit up to
    /// the moment it started.
    pub fn backup(&self, path: &Path) -> Result<()> {
        backup::write(&self.conn, path)
    }

    /// Runs `PRAGMA integrity_check` and returns its verdict (`"ok"` when
    /// the file is sound).
    pub fn integrity_check(&self) -> Result<String> {
        Ok(self
            .conn
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))?)
    }
}
