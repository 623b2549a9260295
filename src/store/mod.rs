//! The store (DESIGN.md §7): one SQLite file, WAL, a busy timeout, versioned
//! migrations, and one `BEGIN IMMEDIATE` transaction per command; or, in
//! fleet mode (DESIGN.md §11), a PostgreSQL database with the same semantics
//! (`pg`). The statements are written once for both ([`sql`]).
//!
//! Opening the file, and refusing one that is not ours, is in [`open`].

mod backup;
mod caller;
mod check_runs;
pub(crate) mod checks;
mod claims;
mod copy;
mod ddl;
pub(crate) mod events;
pub(crate) mod goals;
mod identity;
mod in_place;
mod kept_list;
mod location;
mod marks;
mod migrations;
mod open;
mod param;
mod patch;
#[cfg(feature = "postgres")]
mod pg;
mod rows;
mod session_ref;
mod session_tx;
pub(crate) mod sessions;
pub(crate) mod shape;
pub(crate) mod sql;
mod todos;
mod tool_use;
mod versions;
mod watch;

use std::cell::Cell;
use std::mem::ManuallyDrop;
use std::path::{Path, PathBuf};

use rusqlite::{Connection, Transaction, TransactionBehavior};

use crate::error::Result;

pub use caller::Caller;
pub use checks::SessionChecks;
pub use events::{Event, EventKind};
pub use goals::GoalCall;
pub use location::Location;
#[cfg(feature = "postgres")]
pub use pg::PgUrl;
pub use rows::UNDO_DEPTH;
#[cfg_attr(not(feature = "cli"), expect(unused_imports))]
pub(crate) use session_ref::PointerRead;
pub(crate) use session_ref::SessionRef;
pub use session_tx::SessionTx;
pub use sessions::SessionInfo;
pub use todos::TodoAnswer;
pub use tool_use::CallFrom;
#[cfg_attr(not(feature = "watch"), expect(unused_imports))]
pub(crate) use watch::{SessionSnapshot, SessionSummary};

#[cfg(test)]
thread_local! {
    static BEGUN: Cell<u64> = const { Cell::new(0) };
}

/// How many transactions this thread began, for tests that check a call
/// is one transaction.
#[cfg(test)]
pub(crate) fn transactions_begun() -> u64 {
    BEGUN.with(Cell::get)
}

fn count_begin() {
    #[cfg(test)]
    BEGUN.with(|n| n.set(n.get() + 1));
}

/// `PRAGMA application_id` of a goalkeeper database ("gkpr").
pub const APPLICATION_ID: i64 = 0x676b_7072;

/// The goalkeeper database: a SQLite file (the default) or a PostgreSQL
/// database (fleet mode). One connection, and the doors into it: a
/// session's steps run on a [`SessionTx`] through [`Store::read`] (one
/// snapshot, no lock) or [`Store::write`] (one transaction that holds the
/// session's lock from its first read to its commit); what is not one
/// session's goes through [`Store::admin`]. The caller's state (its agent,
/// its lease, where its checks are judged, its kept list) is a
/// [`Caller`], passed into each call that needs it, never left here.
pub struct Store {
    backend: Backend,
    /// Which connection this is, among those of the process: a list a
    /// caller kept is current only on the connection it came from.
    id: u64,
}

/// The two backends; see [`sql`] for why an enum.
enum Backend {
    Sqlite(SqliteFile),
    #[cfg(feature = "postgres")]
    Postgres(Box<pg::PgConn>),
}

/// A SQLite database, in a file or in memory.
struct SqliteFile {
    /// Closed by `Drop`, unless `left_to_exit` says the process's exit will.
    conn: ManuallyDrop<Connection>,
    /// See [`Store::exits_with_process`].
    left_to_exit: bool,
    path: Option<PathBuf>,
    /// Set once setup has found (or made) a goalkeeper database: only then
    /// may closing the connection write to the file.
    ours: Cell<bool>,
    /// A non-empty WAL was beside the file when it was opened.
    found_wal: Cell<bool>,
    /// Which file (and WAL) this connection has open, checked before each
    /// write (DESIGN.md §7: a replaced or deleted file is noticed).
    file: Option<Box<identity::FileWatch>>,
}

impl Store {
    /// A store on `backend`.
    fn on(backend: Backend) -> Store {
        static OPENED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        Store {
            backend,
            id: OPENED.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
        }
    }

    /// Connects to a PostgreSQL database (fleet mode), creating goalkeeper's
    /// tables in an empty one. Refuses, untouched, a database that holds
    /// another application's tables or a newer goalkeeper's schema. Fails
    /// after the URL's connect timeout when the server does not answer.
    #[cfg(feature = "postgres")]
    fn connect(url: &PgUrl) -> Result<Store> {
        Ok(Store::on(Backend::Postgres(Box::new(pg::PgConn::open(
            url,
        )?))))
    }

    /// How long a PostgreSQL connection lost under this store is tried
    /// again before a call fails ([`PgUrl::retrying_for`]): a process that
    /// tries again itself, and must not stop for long, says zero. Nothing
    /// for SQLite.
    #[cfg_attr(not(feature = "watch"), expect(dead_code))]
    pub(crate) fn retry_connections_for(&mut self, retry: std::time::Duration) {
        #[cfg(feature = "postgres")]
        if let Backend::Postgres(conn) = &mut self.backend {
            conn.retry_for(retry);
        }
        #[cfg(not(feature = "postgres"))]
        let _ = retry;
    }

    /// The SQLite file behind the store, if any.
    pub fn path(&self) -> Option<&Path> {
        match &self.backend {
            Backend::Sqlite(file) => file.path.as_deref(),
            #[cfg(feature = "postgres")]
            Backend::Postgres(_) => None,
        }
    }

    /// Whether the store's calls must stay off an async runtime's thread:
    /// the PostgreSQL client drives a runtime of its own for every
    /// statement, which tokio refuses to start inside another. SQLite calls
    /// may run anywhere.
    #[cfg_attr(not(feature = "mcp"), expect(dead_code))]
    pub(crate) fn needs_own_thread(&self) -> bool {
        match &self.backend {
            Backend::Sqlite(_) => false,
            #[cfg(feature = "postgres")]
            Backend::Postgres(_) => true,
        }
    }

    /// Where the store is, for messages: the path, the URL with its
    /// password hidden, or `:memory:`.
    pub fn describe(&self) -> String {
        match &self.backend {
            Backend::Sqlite(file) => file
                .path
                .as_ref()
                .map_or(":memory:".to_owned(), |p| p.display().to_string()),
            #[cfg(feature = "postgres")]
            Backend::Postgres(conn) => conn.url().to_string(),
        }
    }

    /// Begins a write transaction: `BEGIN IMMEDIATE` on SQLite (the whole
    /// database, until commit); `BEGIN` on PostgreSQL, where a writer then
    /// takes its session's lock ([`sql::Tx::lock_session`]) before it
    /// reads. Below the doors ([`Store::write`], [`Store::admin`]): nothing
    /// else begins a write.
    fn begin_write(&mut self) -> Result<sql::Tx<'_>> {
        count_begin();
        match &mut self.backend {
            Backend::Sqlite(file) => {
                // `&mut self` keeps other statements off the connection
                // while the transaction lives, as `Connection::transaction`
                // would. A long-running process must not write into a file
                // nobody else sees: the file under the connection is
                // checked once the lock is held, before the first write.
                let conn: &Connection = &file.conn;
                let tx = open::retry_busy(|| {
                    Transaction::new_unchecked(conn, TransactionBehavior::Immediate)
                })?;
                if let Some(watch) = &file.file {
                    watch.check()?;
                }
                Ok(sql::Tx::Sqlite(tx))
            }
            #[cfg(feature = "postgres")]
            Backend::Postgres(conn) => Ok(sql::Tx::Postgres(conn.begin()?)),
        }
    }

    /// Begins a read-only transaction: one consistent snapshot, without the
    /// write lock. In WAL mode a reader never waits for a writer (nor a
    /// writer for it): it sees the last commit before its first read. On
    /// PostgreSQL, a `REPEATABLE READ READ ONLY` transaction: one snapshot,
    /// no lock. Below the doors ([`Store::read`], [`Store::admin`]).
    fn begin_read(&self) -> Result<sql::Tx<'_>> {
        count_begin();
        match &self.backend {
            Backend::Sqlite(file) => {
                // What a file deleted or replaced under the connection
                // holds is no longer what its path holds: refused too.
                if let Some(watch) = &file.file {
                    watch.check()?;
                }
                Ok(sql::Tx::Sqlite(file.conn.unchecked_transaction()?))
            }
            #[cfg(feature = "postgres")]
            Backend::Postgres(conn) => Ok(sql::Tx::Postgres(conn.begin_read()?)),
        }
    }

    /// The door for what is not one session's: every session (list,
    /// remove, copy, backup, watch) and the global pointers. Each of its
    /// calls is one transaction.
    pub fn admin(&mut self) -> Admin<'_> {
        Admin { store: self }
    }
}

/// What a store does beyond one session ([`Store::admin`]): each method
/// is one transaction of its own, or none (a backup, an integrity check).
pub struct Admin<'s> {
    store: &'s mut Store,
}

impl Admin<'_> {
    /// Writes a consistent copy of the whole database to `path`, a single
    /// SQLite file that [`Store::open`] opens like the original (from
    /// PostgreSQL too: the copy is then a SQLite database holding every
    /// session). Refused, with nothing written, when `path` already
    /// exists. Other processes keep reading and writing meanwhile; the
    /// copy holds every commit up to the moment it started.
    pub fn backup(&self, path: &Path) -> Result<()> {
        match &self.store.backend {
            Backend::Sqlite(file) => backup::write(&file.conn, path),
            #[cfg(feature = "postgres")]
            Backend::Postgres(_) => copy::backup_to_sqlite(self.store, path),
        }
    }

    /// Checks the database and returns the verdict (`"ok"` when sound):
    /// SQLite's `PRAGMA integrity_check`; on PostgreSQL, whose server
    /// guards its own pages, a round trip to the server.
    pub fn integrity_check(&self) -> Result<String> {
        match &self.store.backend {
            Backend::Sqlite(file) => {
                Ok(file
                    .conn
                    .query_row("PRAGMA integrity_check", [], |r| r.get(0))?)
            }
            #[cfg(feature = "postgres")]
            Backend::Postgres(_) => {
                self.read(|tx| tx.query_one("SELECT 'ok'::text", &[], |r| r.get(0)))
            }
        }
    }

    /// Runs `f` in one read transaction.
    fn read<T>(&self, f: impl FnOnce(&sql::Tx<'_>) -> Result<T>) -> Result<T> {
        let tx = self.store.begin_read()?;
        let value = f(&tx)?;
        tx.commit()?;
        Ok(value)
    }

    /// Runs `f` in one write transaction and commits when it succeeds (an
    /// error drops the transaction, which rolls it back).
    fn write<T>(&mut self, f: impl FnOnce(&sql::Tx<'_>) -> Result<T>) -> Result<T> {
        let tx = self.store.begin_write()?;
        let value = f(&tx)?;
        tx.commit()?;
        Ok(value)
    }
}

impl Store {
    /// SQLite: folds the WAL into the file and leaves WAL mode, so the file
    /// alone is the whole database (a backup's last step). The next
    /// [`Store::open`] turns WAL mode on again.
    #[cfg(feature = "postgres")]
    fn fold_wal_into_file(&self) -> Result<()> {
        if let Backend::Sqlite(file) = &self.backend {
            file.conn
                .query_row("PRAGMA journal_mode = DELETE", [], |r| {
                    r.get::<_, String>(0)
                })?;
        }
        Ok(())
    }
}
