//! Opening the store (DESIGN.md §7, §12): the file is checked before SQLite
//! touches it, and something that is not a SQLite database, a SQLite
//! database of another program, or a goalkeeper database from a newer
//! version is refused and left byte-for-byte as it was, WAL included. Also
//! the connection's setup (WAL, busy timeout, migrations) and what closing
//! it may write.

use std::cell::Cell;
use std::fs::OpenOptions;
use std::io::Read;
use std::mem::ManuallyDrop;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rusqlite::config::DbConfig;
use rusqlite::{Connection, ErrorCode, OpenFlags};

use super::location::Location;
use super::shape::{self, Shape};
use super::sql::Tx;
use super::{APPLICATION_ID, Backend, SqliteFile, Store, migrations, rows};
use crate::SessionId;
use crate::error::{Error, Result};

/// How long a command waits for another process's transaction. Commands
/// hold the lock for a millisecond or two, so this is only reached when a
/// process hangs mid-transaction.
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// Whether opening may create the database file.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Missing {
    /// A missing file is created (mode 0600), in a directory that exists.
    Create,
    /// A missing file is [`Error::NoDatabase`].
    Refuse,
}

impl Store {
    /// Opens the store at `location` (a SQLite file's path, or a
    /// [`Location`]), migrating it to the current schema.
    ///
    /// A missing SQLite file is created with mode 0600; a missing
    /// directory is not ([`Error::NoDatabaseDir`]): a file is created where
    /// it is missing, never the directories above it, as `sqlite3` does.
    /// A PostgreSQL database is connected to, and goalkeeper's tables are
    /// created in an empty one; a server that does not answer within
    /// the URL's connect timeout is an error. Refuses, untouched, a file or
    /// database that is not goalkeeper's or comes from a newer version.
    pub fn open(location: impl Into<Location>) -> Result<Store> {
        match location.into() {
            Location::Sqlite(path) => Store::open_file(&path, Missing::Create),
            #[cfg(feature = "postgres")]
            Location::Postgres(url) => Store::connect(&url),
        }
    }

    /// [`Store::open`], only if there is a database there: a missing
    /// SQLite file is [`Error::NoDatabase`] (a missing directory
    /// [`Error::NoDatabaseDir`]) and nothing is created. For callers that
    /// only read, which must not leave an empty database behind a mistyped
    /// path. A PostgreSQL database is connected to as by [`Store::open`].
    pub fn open_existing(location: impl Into<Location>) -> Result<Store> {
        match location.into() {
            Location::Sqlite(path) => Store::open_file(&path, Missing::Refuse),
            #[cfg(feature = "postgres")]
            Location::Postgres(url) => Store::connect(&url),
        }
    }

    fn open_file(path: &Path, missing: Missing) -> Result<Store> {
        let in_wal = precheck_file(path, missing)?;
        let mut flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        if missing == Missing::Create {
            flags |= OpenFlags::SQLITE_OPEN_CREATE;
        }
        let conn = Connection::open_with_flags(path, flags)?;
        let mut file = SqliteFile {
            conn: ManuallyDrop::new(conn),
            left_to_exit: false,
            path: Some(path.to_owned()),
            ours: Cell::new(false),
            found_wal: Cell::new(false),
            file: None,
        };
        file.setup(in_wal)?;
        file.file = Some(Box::new(super::identity::FileWatch::new(path)?));
        Ok(Store::on(Backend::Sqlite(file)))
    }

    /// A private in-memory database, for tests and one-off runs.
    pub fn open_in_memory() -> Result<Store> {
        let file = SqliteFile {
            conn: ManuallyDrop::new(Connection::open_in_memory()?),
            left_to_exit: false,
            path: None,
            ours: Cell::new(false),
            found_wal: Cell::new(false),
            file: None,
        };
        file.setup(false)?;
        Ok(Store::on(Backend::Sqlite(file)))
    }

    /// For a process that ends once it is done with the store, such as one
    /// CLI command. Dropping the store still writes what closing must
    /// write (a checkpoint that is due), but leaves the rest of closing to
    /// the process's exit, which does the same: freeing the connection's
    /// memory (its parsed schema, about 75 K instructions), closing its
    /// files and releasing its locks. Not for a store that one process
    /// opens and drops again and again.
    pub fn exits_with_process(mut self) -> Store {
        match &mut self.backend {
            Backend::Sqlite(file) => file.left_to_exit = true,
            // Closing a server connection says goodbye to the server.
            #[cfg(feature = "postgres")]
            Backend::Postgres(_) => {}
        }
        self
    }
}

impl SqliteFile {
    /// `in_wal`: the file's header already says WAL mode, which is
    /// persistent, so the statement that switches to it is skipped.
    fn setup(&self, in_wal: bool) -> Result<()> {
        self.conn.busy_timeout(BUSY_TIMEOUT)?;
        // The query planner's stability guarantee: a plan does not depend
        // on the values bound to a statement. Without it, binding a
        // `LIMIT ?` (the narrow reads of `store::shape`) marks the statement
        // expired, and its first step prepares it again with the value in
        // it: about 65 K instructions more for a 1,000-task `context` or
        // `todo view`, to reach the plan it already had.
        self.conn
            .set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true)?;
        if let Some(path) = &self.path {
            // No checkpoint when this connection closes, unless `Drop` says
            // otherwise. Until the file is known to be ours, a WAL a crashed
            // process left beside it holds committed pages not yet in the
            // file, and closing the last connection would merge them in: it
            // must stay as it was. Once it is ours, the checkpoint comes back
            // only when the WAL has grown past `CHECKPOINT_WAL_BYTES`.
            self.found_wal.set(has_leftover_wal(path));
            self.conn
                .set_db_config(DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, true)?;
        }
        let version = self.check_identity()?;
        if self.path.is_some() && !in_wal {
            // Switching to WAL needs a brief exclusive lock that a racing
            // opener may hold; it does not always go through the busy handler.
            retry_busy(|| {
                self.conn
                    .query_row("PRAGMA journal_mode = WAL", [], |r| r.get::<_, String>(0))
            })?;
        }
        // NORMAL is durable against a crashed process in WAL mode; only a
        // power loss can drop the last commits.
        self.conn.pragma_update(None, "synchronous", "NORMAL")?;
        self.conn.pragma_update(None, "foreign_keys", true)?;
        if version != migrations::LATEST {
            let from = migrations::migrate(&self.conn, self.path.as_deref())?;
            if (1..5).contains(&from) {
                keep_missing_shapes(&self.conn)?;
            }
        }
        self.ours.set(true);
        Ok(())
    }

    /// Refuses a SQLite database that belongs to another program or to a
    /// newer goalkeeper, before anything writes to it. Returns the schema
    /// version found (0 for a new database).
    fn check_identity(&self) -> Result<i64> {
        // One read transaction, so one snapshot: a process creating the
        // database at this moment commits its tables and its application id
        // together. Plain `PRAGMA` statements read the header without
        // parsing the schema; the table-valued `pragma_application_id()`
        // that one `SELECT` could combine builds a virtual table for each
        // (about 30 K instructions a process). The tables are counted only
        // for a file without an application id.
        let (app_id, version, tables) = retry_busy(|| {
            let conn: &Connection = &self.conn;
            let tx = rusqlite::Transaction::new_unchecked(
                conn,
                rusqlite::TransactionBehavior::Deferred,
            )?;
            let integer = |sql: &str| tx.query_row(sql, [], |r| r.get::<_, i64>(0));
            let app_id = integer("PRAGMA application_id")?;
            let version = integer("PRAGMA user_version")?;
            let tables = if app_id == 0 {
                integer("SELECT count(*) FROM sqlite_master")?
            } else {
                0
            };
            // A read: ending it by rollback (the drop) or commit is the same.
            drop(tx);
            Ok((app_id, version, tables))
        })
        .map_err(|e| match (e.sqlite_error_code(), &self.path) {
            (Some(ErrorCode::NotADatabase), Some(path)) => Error::NotOurDatabase {
                path: path.clone(),
                why: "SQLite cannot read it as a database".into(),
            },
            _ => Error::Sqlite(e),
        })?;
        let path = || self.path.clone().unwrap_or_default();
        if app_id == APPLICATION_ID {
            if version > migrations::LATEST {
                return Err(Error::NewerSchema {
                    path: path(),
                    found: version,
                    known: migrations::LATEST,
                });
            }
            return Ok(version);
        }
        if app_id != 0 {
            return Err(Error::NotOurDatabase {
                path: path(),
                why: format!("its application id is {app_id:#x}"),
            });
        }
        if tables > 0 || version != 0 {
            return Err(Error::NotOurDatabase {
                path: path(),
                why: "it is a SQLite database of another program".into(),
            });
        }
        Ok(version)
    }
}

/// How large the WAL may grow before the connection that closes last folds it
/// back into the database: 64 pages, about nine mutations of a 10-task list
/// (seven pages each).
///
/// Chosen by measurement (BENCHMARKS.md, "The WAL checkpoint threshold").
/// Every process that finds no other connection open rebuilds SQLite's
/// WAL index by reading the whole WAL back, so every read pays for the
/// WAL's length. Each fold costs the writer that closes last five fsyncs
/// (the WAL, its directory, the database; then the WAL and the directory
/// again when the next writer starts a new WAL). At 256 KiB a read pays
/// about a quarter of what it paid at 1 MiB and the median mutation did
/// not move; a smaller threshold made the writers slower on average next
/// to a running build, for no faster reads.
const CHECKPOINT_WAL_BYTES: u64 = 256 * 1024;

impl Drop for SqliteFile {
    /// SQLite's last connection to close checkpoints the whole WAL into the
    /// database, syncing the WAL, its directory and the database, then
    /// deletes it. A CLI process
    /// is one command, so that cost several times the command's own work
    /// on every write (5–25 ms on a shared disk). The store lets commits
    /// accumulate in the WAL across processes instead (its `-wal` and
    /// `-shm` files stay beside the database), and re-enables the
    /// close-time checkpoint once the WAL passes [`CHECKPOINT_WAL_BYTES`]:
    /// that keeps the WAL, which every opener reads back, small, and keeps
    /// it from growing without bound (a new process cannot tell which
    /// frames an earlier one already checkpointed). SQLite still skips the
    /// checkpoint while another connection is open, so nobody waits for it.
    ///
    /// Durability is what `synchronous = NORMAL` promises either way: a
    /// crashed process loses nothing acknowledged; a power cut may lose the
    /// commits since the last checkpoint.
    ///
    /// A file that was refused is left as it was found: a WAL that was
    /// already there stays; the empty one that opening it created goes,
    /// with the usual close.
    ///
    /// A store that [exits with the process](Store::exits_with_process) is
    /// closed here only when closing checkpoints.
    fn drop(&mut self) {
        let checkpoint = match &self.path {
            None => false,
            Some(path) if self.ours.get() => {
                let mut wal = path.clone().into_os_string();
                wal.push("-wal");
                std::fs::metadata(&wal).is_ok_and(|m| m.len() > CHECKPOINT_WAL_BYTES)
            }
            Some(_) => !self.found_wal.get(),
        };
        if checkpoint {
            let _ = self
                .conn
                .set_db_config(DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, false);
        }
        if checkpoint || !self.left_to_exit {
            // SAFETY: `self` is being dropped: nothing uses `conn` after this.
            unsafe { ManuallyDrop::drop(&mut self.conn) }
        }
    }
}

/// Rejects, without opening it through SQLite, a path that is a directory or
/// a file without the SQLite header, and a path whose directory is
/// missing; creates a missing file with mode 0600 when `missing` says so.
/// Returns whether the header says the database is in WAL mode.
fn precheck_file(path: &Path, missing: Missing) -> Result<bool> {
    let io = |what: &str| {
        let what = format!("{what} {}", path.display());
        move |source| Error::Io { what, source }
    };
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_dir() => Err(Error::Usage(format!(
            "{} is a directory; give the path of a database file, e.g. {}/goalkeeper.db",
            path.display(),
            path.display()
        ))),
        Ok(_) => {
            // A rollback journal next to a file that is not (yet) ours is
            // either another program's unfinished transaction, which opening
            // the file would roll back, or goalkeeper creating the database:
            // switching a new file to WAL goes through a journal, which is
            // gone in a moment, or stays behind if that process was killed.
            // Either way such a file is one page with no table in it, so a
            // rollback loses nothing.
            let deadline = std::time::Instant::now() + Duration::from_millis(500);
            loop {
                match read_header(path)? {
                    Header::Empty => return Ok(false),
                    Header::NotSqlite => {
                        return refuse(path, "it does not start with the SQLite header");
                    }
                    Header::Sqlite { app_id, .. } if app_id != 0 && app_id != APPLICATION_ID => {
                        return refuse(path, &format!("its application id is {app_id:#x}"));
                    }
                    Header::Sqlite {
                        app_id,
                        holds_tables,
                        wal,
                    } => {
                        if app_id == APPLICATION_ID
                            || !holds_tables
                            || !has_sibling(path, "-journal")
                        {
                            return Ok(wal);
                        }
                        if std::time::Instant::now() >= deadline {
                            return refuse(
                                path,
                                "it has an unfinished transaction of another program (a hot rollback journal), which opening it would roll back",
                            );
                        }
                        std::thread::sleep(Duration::from_millis(10));
                    }
                }
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            // A dangling symlink (a `--db` prepared in a dotfiles repo):
            // SQLite would create its target with mode 0644 (and the -wal
            // and -shm with the same), so create the target here, 0600.
            let target = dangling_target(path);
            let file = target.as_deref().unwrap_or(path);
            if let Some(dir) = file.parent().filter(|d| !d.as_os_str().is_empty())
                && std::fs::metadata(dir).is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound)
            {
                return Err(Error::NoDatabaseDir {
                    path: file.to_owned(),
                    dir: dir.to_owned(),
                });
            }
            if missing == Missing::Refuse {
                return Err(Error::NoDatabase(path.to_owned()));
            }
            let path = file;
            let mut options = OpenOptions::new();
            options.write(true).create_new(true);
            #[cfg(unix)]
            std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
            match options.open(path) {
                Ok(_) => Ok(false),
                // Another process created it first; that is fine.
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
                Err(e) => Err(io("cannot create")(e)),
            }
        }
        Err(e) => Err(io("cannot access")(e)),
    }
}

/// Where the chain of symlinks starting at `path` ends, when `path` is a
/// symlink (at most 40 hops, the kernel's limit); `None` when it is not.
fn dangling_target(path: &Path) -> Option<PathBuf> {
    let mut current = path.to_owned();
    let mut hops = 0;
    while std::fs::symlink_metadata(&current).is_ok_and(|m| m.file_type().is_symlink()) {
        hops += 1;
        if hops > 40 {
            return None;
        }
        let target = std::fs::read_link(&current).ok()?;
        current = match current.parent() {
            Some(dir) => dir.join(target),
            None => target,
        };
    }
    (hops > 0).then_some(current)
}

/// What the first 100 bytes of a database file say.
enum Header {
    /// Nothing written yet.
    Empty,
    /// Not the SQLite header.
    NotSqlite,
    /// A SQLite database with this application id (read from the file
    /// itself: opening it through SQLite could already change it), and
    /// whether it is longer than its first page: every table has a root
    /// page of its own, so a one-page database holds none.
    /// `wal`: the header's read and write versions say WAL mode.
    Sqlite {
        app_id: i64,
        holds_tables: bool,
        wal: bool,
    },
}

fn read_header(path: &Path) -> Result<Header> {
    let mut header = [0u8; 100];
    let mut file = std::fs::File::open(path).map_err(|source| Error::Io {
        what: format!("cannot read {}", path.display()),
        source,
    })?;
    let read = read_up_to(&mut file, &mut header).map_err(|source| Error::Io {
        what: format!("cannot read {}", path.display()),
        source,
    })?;
    Ok(if read == 0 {
        Header::Empty
    } else if !header.starts_with(b"SQLite format 3\0") {
        Header::NotSqlite
    } else {
        // The page size is big-endian at offset 16; 1 stands for 65,536.
        let page_size = match u16::from_be_bytes([header[16], header[17]]) {
            1 => 65_536,
            size => u64::from(size),
        };
        let len = file
            .metadata()
            .map_err(|source| Error::Io {
                what: format!("cannot read {}", path.display()),
                source,
            })?
            .len();
        Header::Sqlite {
            app_id: i64::from(u32::from_be_bytes([
                header[68], header[69], header[70], header[71],
            ])),
            holds_tables: len > page_size,
            wal: header[18] == 2 && header[19] == 2,
        }
    })
}

fn refuse<T>(path: &Path, why: &str) -> Result<T> {
    Err(Error::NotOurDatabase {
        path: path.to_owned(),
        why: why.into(),
    })
}

/// True when `path` has a non-empty `-wal` file next to it.
/// True when a WAL with frames is beside `path`.
fn has_leftover_wal(path: &Path) -> bool {
    has_sibling(path, "-wal")
}

/// True when `<path><suffix>` exists and is not empty.
fn has_sibling(path: &Path, suffix: &str) -> bool {
    let mut sibling = path.as_os_str().to_owned();
    sibling.push(suffix);
    std::fs::metadata(sibling).is_ok_and(|meta| meta.len() > 0)
}

fn read_up_to(file: &mut std::fs::File, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match file.read(&mut buf[filled..])? {
            0 => break,
            n => filled += n,
        }
    }
    Ok(filled)
}

/// Retries `f` while SQLite reports the database busy or locked, for the
/// few setup statements that bypass the busy handler, and while it reports
/// a "locking protocol" failure: SQLite gives up after about 10 s when
/// another process keeps the WAL index locked (stuck, or stopped, while
/// reading it), which is a lock like any other, so it gets the whole
/// [`BUSY_TIMEOUT`] before the error, whose hint then says what happened.
///
/// The wait never goes past [`BUSY_TIMEOUT`]: an attempt is not started
/// when the one before it took longer than the time left (a "locking
/// protocol" attempt lasts its 10 s whatever the deadline, so starting one
/// at 29 s would wait 39 s, and one holder of the lock released at 35 s
/// would turn an error into a success depending on the machine's load).
pub(super) fn retry_busy<T>(f: impl FnMut() -> rusqlite::Result<T>) -> rusqlite::Result<T> {
    retry_busy_for(BUSY_TIMEOUT, f)
}

fn retry_busy_for<T>(
    limit: Duration,
    mut f: impl FnMut() -> rusqlite::Result<T>,
) -> rusqlite::Result<T> {
    let deadline = Instant::now() + limit;
    let mut pause = Duration::from_millis(1);
    loop {
        let attempt = Instant::now();
        match f() {
            Err(e)
                if matches!(
                    e.sqlite_error_code(),
                    Some(
                        ErrorCode::DatabaseBusy
                            | ErrorCode::DatabaseLocked
                            | ErrorCode::FileLockingProtocolFailed
                    )
                ) && Instant::now() + attempt.elapsed() + pause <= deadline =>
            {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(50));
            }
            other => return other,
        }
    }
}

/// Keeps the shape of each stored list that has none, in one transaction:
/// after an upgrade from a schema before v5, whose step adds the column
/// and leaves the shapes to the running build (`migrations::v5`).
fn keep_missing_shapes(conn: &Connection) -> Result<()> {
    let tx = rusqlite::Transaction::new_unchecked(conn, rusqlite::TransactionBehavior::Immediate)?;
    let ids = {
        let mut stmt =
            tx.prepare("SELECT id FROM sessions WHERE todo_version > 0 AND todo_shape IS NULL")?;
        let ids = stmt.query_map([], |r| r.get(0))?;
        ids.collect::<rusqlite::Result<Vec<String>>>()?
    };
    {
        let sql = Tx::SqliteIn(&tx);
        for id in ids {
            let session = SessionId::parse(&id)?;
            let keyed = rows::load(&sql, &session)?;
            shape::save(&sql, &session, &Shape::of_keyed(&keyed))?;
        }
    }
    Ok(tx.commit()?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::todo::{Actor, Call};

    fn wal_len(db: &Path) -> Option<u64> {
        let mut wal = db.to_path_buf().into_os_string();
        wal.push("-wal");
        std::fs::metadata(wal).ok().map(|m| m.len())
    }

    /// One "process": open, one call, close.
    fn call(db: &Path, json: &str) {
        let mut store = Store::open(db).unwrap();
        let session = SessionId::parse("s").unwrap();
        let result = store
            .todo(
                &session,
                Call::Json(json),
                Actor::Agent,
                &mut crate::store::Caller::default(),
                0,
            )
            .unwrap();
        assert!(!result.is_error, "{}", result.text());
    }

    #[test]
    fn a_lock_retried_until_the_deadline_does_not_start_an_attempt_that_would_end_past_it() {
        // Each attempt fails the way SQLite's ~10 s "locking protocol" wait
        // does, scaled down to 100 ms; the limit leaves room for three.
        let mut attempts = 0;
        let result: rusqlite::Result<()> = retry_busy_for(Duration::from_millis(350), || {
            attempts += 1;
            std::thread::sleep(Duration::from_millis(100));
            Err(rusqlite::Error::SqliteFailure(
                rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_PROTOCOL),
                None,
            ))
        });
        assert_eq!(
            result.unwrap_err().sqlite_error_code(),
            Some(ErrorCode::FileLockingProtocolFailed)
        );
        // A fourth would start at ~300 ms and end at ~400 ms, past the limit
        // (fewer when the machine is slow, never more).
        assert!((1..=3).contains(&attempts), "{attempts} attempts");
    }

    #[test]
    fn a_large_wal_beside_another_programs_database_is_left_as_it_was() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("other.db");
        {
            // Another program, killed with 2 MiB of commits in its WAL.
            let conn = Connection::open(&db).unwrap();
            conn.set_db_config(DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, true)
                .unwrap();
            conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get::<_, String>(0))
                .unwrap();
            conn.execute_batch("PRAGMA wal_autocheckpoint = 0; CREATE TABLE t (x BLOB)")
                .unwrap();
            for _ in 0..32 {
                conn.execute("INSERT INTO t VALUES (zeroblob(65536))", [])
                    .unwrap();
            }
        }
        let files = |suffix: &str| {
            let mut path = db.clone().into_os_string();
            path.push(suffix);
            std::fs::read(path).unwrap()
        };
        let (main, wal) = (files(""), files("-wal"));
        assert!(wal.len() as u64 > CHECKPOINT_WAL_BYTES);
        assert!(matches!(
            Store::open(&db),
            Err(Error::NotOurDatabase { .. })
        ));
        assert_eq!(files(""), main);
        assert_eq!(files("-wal"), wal);
    }

    #[test]
    fn small_commits_stay_in_the_wal_and_the_next_opener_reads_them() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("g.db");
        call(&db, r#"{"op":"init","items":["a","b"]}"#);
        call(&db, r#"{"op":"done","task":"a"}"#);
        assert!(wal_len(&db).is_some_and(|n| n > 0 && n <= CHECKPOINT_WAL_BYTES));
        let mut store = Store::open(&db).unwrap();
        let (list, version) = store
            .read(&SessionId::parse("s").unwrap(), |tx| tx.todo_list())
            .unwrap();
        assert_eq!(version, 2);
        assert_eq!(list.counts().closed, 1);
        assert_eq!(store.admin().integrity_check().unwrap(), "ok");
    }

    #[test]
    fn a_large_wal_is_checkpointed_at_close_and_stays_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("g.db");
        // About 60 KB of state per write (twice: the list and its event).
        let items: Vec<String> = (0..600).map(|i| format!("task number {i:04}")).collect();
        call(
            &db,
            &serde_json::json!({"op": "init", "items": items}).to_string(),
        );
        let mut checkpointed = false;
        for i in 0..40 {
            call(
                &db,
                &serde_json::json!({"op": "start", "task": items[(i + 1) % 2]}).to_string(),
            );
            let len = wal_len(&db);
            // Never much more than the threshold plus one command's writes.
            assert!(len.is_none_or(|n| n < 2 * CHECKPOINT_WAL_BYTES), "{len:?}");
            checkpointed |= len.is_none();
        }
        assert!(checkpointed, "the WAL was folded back at least once");
        let mut store = Store::open(&db).unwrap();
        let (_, version) = store
            .read(&SessionId::parse("s").unwrap(), |tx| tx.todo_list())
            .unwrap();
        assert_eq!(version, 41);
        assert_eq!(store.admin().integrity_check().unwrap(), "ok");
    }
}
