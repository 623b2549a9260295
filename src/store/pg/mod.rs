//! The PostgreSQL backend (fleet mode, DESIGN.md §11): the connection, its
//! transactions, and the schema.
//!
//! **Locking.** Every write transaction starts, before it reads anything,
//! with a transaction-scoped lock on its session (`pg_advisory_xact_lock`
//! on the session id's hash, in goalkeeper's own lock space). It serves
//! as `SELECT … FOR UPDATE` on the session row would, and also covers a
//! session's first write, when there is no row to lock yet, without
//! creating a row for a call that is then refused. Transactions run at
//! READ COMMITTED, so every statement after the lock sees what the previous
//! holder committed: two writers of one session, on any machines, run one
//! after the other and never lose an update; writers of different sessions
//! do not wait for each other. Reads take no lock and never wait.
//!
//! **Notifications.** A write transaction also queues
//! `NOTIFY goalkeeper, '<session id>'` (in the same statement as the lock),
//! which PostgreSQL delivers only if the transaction commits: a watcher
//! can `LISTEN goalkeeper` instead of polling.
//!
//! **Connection.** One connection per [`PgConn`]; when the server has
//! dropped it (a restart, an idle timeout), the next transaction
//! reconnects before it begins, trying again while the server or the
//! pooler is not back (see `connect`), up to the URL's retry time. A
//! transaction that loses its connection half-way fails, and nothing of it
//! was committed; a lost `COMMIT` reply fails too (the write is never
//! reported as done).
//!
//! **Through a pooler.** Nothing outlives a transaction on the server: the
//! settings a transaction needs are set in it (`url`), every lock is
//! transaction-scoped, and statements are unnamed (PostgreSQL's extended
//! protocol in one round trip: parse, bind with the parameters as text for
//! the server to read as the types it infers, execute), never prepared
//! under a name on one server connection to be used on another. So
//! PgBouncer may hand each transaction a different server connection
//! (`pool_mode = transaction`) or keep one per client (`session`).

mod connect;
mod schema;
mod url;

use std::cell::{Cell, RefCell, RefMut};
use std::error::Error as StdError;
use std::time::Instant;

use postgres::Client;
use postgres::types::{Format, IsNull, ToSql, Type, to_sql_checked};

use super::param::Value;
use crate::SessionId;
use crate::error::{Error, Result};

pub use url::PgUrl;

/// The first key of goalkeeper's advisory locks ("gk"), so they never
/// collide with another application's locks in a shared database.
const LOCK_SPACE: i32 = 0x676b;

/// The first key of the locks on global pointers ("gp").
const POINTER_LOCK_SPACE: i32 = 0x6770;

/// A connection to goalkeeper's PostgreSQL database. Reads begin on
/// `&self` (as SQLite's do), so the client sits in a `RefCell`: one
/// transaction at a time, as one SQLite connection.
pub(crate) struct PgConn {
    url: PgUrl,
    client: RefCell<Option<Client>>,
}

impl PgConn {
    /// Connects, checks that the database is goalkeeper's (or empty) and
    /// brings its schema up to date.
    pub(crate) fn open(url: &PgUrl) -> Result<PgConn> {
        let until = Instant::now() + url.retry;
        let mut client = connect::connect(url, until, false)?;
        schema::setup(&mut client, url)?;
        Ok(PgConn {
            url: url.clone(),
            client: RefCell::new(Some(client)),
        })
    }

    /// The URL, password hidden.
    pub(crate) fn url(&self) -> &PgUrl {
        &self.url
    }

    /// Reconnects try again for `retry` from now on.
    pub(crate) fn retry_for(&mut self, retry: std::time::Duration) {
        self.url = self
            .url
            .clone()
            .retrying_for_as(retry, self.url.retry_set_by);
    }

    /// Begins a write transaction (READ COMMITTED; the writer then takes
    /// its session's lock, see the module doc).
    pub(crate) fn begin(&self) -> Result<PgTx<'_>> {
        self.begin_with("BEGIN")
    }

    /// Begins a read transaction: one snapshot for all its statements
    /// (REPEATABLE READ), no lock, never waiting for a writer.
    pub(crate) fn begin_read(&self) -> Result<PgTx<'_>> {
        self.begin_with("BEGIN ISOLATION LEVEL REPEATABLE READ")
    }

    /// Sends `begin` and the transaction's settings, reconnecting first
    /// when the connection was lost since the last transaction, and again
    /// while the server or a pooler in front of it is not back (a restart),
    /// up to the URL's retry time: as long as `BEGIN` has not gone through,
    /// nothing is in flight, so nothing can be lost or applied twice by
    /// starting over on a new connection.
    fn begin_with(&self, begin: &str) -> Result<PgTx<'_>> {
        let mut slot = self.client.try_borrow_mut().map_err(|_| {
            Error::Postgres("a PostgreSQL transaction is already open on this connection".into())
        })?;
        let sql = format!("{begin}; {}", self.url.settings_sql);
        let until = Instant::now() + self.url.retry;
        let mut backoff = connect::Backoff::new();
        let mut stale = true;
        loop {
            if slot.as_ref().is_none_or(Client::is_closed) {
                *slot = None;
                let mut client = connect::connect(&self.url, until, true)?;
                schema::setup(&mut client, &self.url)?;
                *slot = Some(client);
            }
            let client = slot.as_mut().expect("connected above");
            let e = match client.batch_execute(&sql) {
                Ok(()) => break,
                Err(e) => e,
            };
            if !is_connection_loss(&e) && connect::try_again(&e, true).is_none() {
                return Err(query_error(&self.url, &e));
            }
            // Start over on a new connection: at once the first time (the
            // old one may merely have gone stale), then after growing pauses.
            *slot = None;
            if std::mem::take(&mut stale) {
                continue;
            }
            let pause = backoff.next_pause();
            if Instant::now() + pause > until {
                return Err(query_error(&self.url, &e));
            }
            std::thread::sleep(pause);
        }
        let client = RefMut::map(slot, |c| c.as_mut().expect("connected above"));
        Ok(PgTx {
            client: RefCell::new(client),
            open: Cell::new(true),
            url: &self.url,
        })
    }
}

impl Drop for PgConn {
    /// The synchronous client closes its connection by blocking on its own
    /// runtime, which panics on a thread that drives an async runtime (the
    /// MCP server drops its store inside one). Closing on a thread of its
    /// own works wherever the store is dropped.
    fn drop(&mut self) {
        if let Some(client) = self.client.get_mut().take() {
            let _ = std::thread::spawn(move || drop(client)).join();
        }
    }
}

/// One PostgreSQL transaction (`BEGIN` sent). Dropped without
/// [`PgTx::commit`], it rolls back.
pub(crate) struct PgTx<'c> {
    client: RefCell<RefMut<'c, Client>>,
    open: Cell<bool>,
    url: &'c PgUrl,
}

impl PgTx<'_> {
    /// Runs a statement, unnamed (see the module doc).
    pub(crate) fn execute(&self, sql: &str, params: &[Value<'_>]) -> Result<usize> {
        self.client
            .borrow_mut()
            .execute_typed(&to_postgres_placeholders(sql), &typed(params))
            .map(|n| n as usize)
            .map_err(|e| query_error(self.url, &e))
    }

    /// Runs a query, unnamed (see the module doc).
    pub(crate) fn query(&self, sql: &str, params: &[Value<'_>]) -> Result<Vec<postgres::Row>> {
        self.client
            .borrow_mut()
            .query_typed(&to_postgres_placeholders(sql), &typed(params))
            .map_err(|e| query_error(self.url, &e))
    }

    pub(crate) fn lock_session(&self, session: &SessionId) -> Result<()> {
        self.execute(
            "SELECT pg_advisory_xact_lock(?1, hashtext(?2)), pg_notify('goalkeeper', ?2)",
            &[
                Value::Int(i64::from(LOCK_SPACE)),
                Value::Text(session.as_str()),
            ],
        )
        .map(drop)
    }

    /// Serializes the read-modify-write of one global pointer (in a lock
    /// space of its own, apart from the sessions').
    pub(crate) fn lock_pointer(&self, key: &str) -> Result<()> {
        self.execute(
            "SELECT pg_advisory_xact_lock(?1, hashtext(?2))",
            &[Value::Int(i64::from(POINTER_LOCK_SPACE)), Value::Text(key)],
        )
        .map(drop)
    }

    pub(crate) fn commit(self) -> Result<()> {
        self.open.set(false);
        self.client
            .borrow_mut()
            .batch_execute("COMMIT")
            .map_err(|e| {
                Error::Postgres(format!(
                    "PostgreSQL at {} did not confirm the commit ({}); the change is not reported as done: check `todo log`, then run the command again",
                    self.url,
                    self.url.scrub(&describe(&e))
                ))
            })
    }
}

impl Drop for PgTx<'_> {
    fn drop(&mut self) {
        if self.open.get() {
            // On a lost connection this fails, and the server rolls back.
            let _ = self.client.get_mut().batch_execute("ROLLBACK");
        }
    }
}

/// True when `e` means the connection is gone, not that a statement failed.
fn is_connection_loss(e: &postgres::Error) -> bool {
    e.is_closed()
        || e.as_db_error().is_some_and(|db| {
            // The server ended the session (shutdown, terminated backend).
            db.code().code().starts_with("57P") || db.code().code().starts_with("08")
        })
        || (e.as_db_error().is_none() && e.source().is_some_and(|s| s.is::<std::io::Error>()))
}

/// A failed statement as a library error, password scrubbed.
pub(crate) fn query_error(url: &PgUrl, e: &postgres::Error) -> Error {
    let text = url.scrub(&describe(e));
    if is_connection_loss(e) {
        return Error::Postgres(format!(
            "lost the connection to PostgreSQL at {url} ({text}); nothing of this command was committed, run it again once the server is back"
        ));
    }
    if let Some(db) = e.as_db_error()
        && db.code() == &postgres::error::SqlState::LOCK_NOT_AVAILABLE
    {
        return Error::Postgres(format!(
            "another process held this session's lock in PostgreSQL at {url} too long ({text}); retry"
        ));
    }
    Error::Postgres(format!("PostgreSQL at {url}: {text}"))
}

/// The error with its server message, detail and hint, or its cause.
pub(crate) fn describe(e: &postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => {
            let mut text = db.message().to_owned();
            if let Some(detail) = db.detail() {
                text.push_str(&format!(" ({detail})"));
            }
            text
        }
        None => {
            // The client's own errors name their kind; the cause (the OS
            // error, the TLS failure) is in the source chain.
            let mut text = e.to_string();
            let mut source = e.source();
            while let Some(cause) = source {
                let cause_text = cause.to_string();
                if !text.contains(&cause_text) {
                    text.push_str(&format!(": {cause_text}"));
                }
                source = cause.source();
            }
            text
        }
    }
}

/// The parameters of an unnamed statement, each of a type for the server
/// to infer from where it stands (`unknown`), as it does for a statement
/// prepared without types: `?1` compared with a `BIGINT` column is a
/// `BIGINT`, given to `hashtext` a `text`.
fn typed<'v>(params: &'v [Value<'_>]) -> Vec<(&'v (dyn ToSql + Sync), Type)> {
    params.iter().map(|p| (p as _, Type::UNKNOWN)).collect()
}

/// A parameter is sent as text, which the server reads as whatever type it
/// inferred: an integer as its digits (which a `BIGINT`, an `integer` or a
/// `boolean`, as `0` or `1`, all read), text as itself.
impl ToSql for Value<'_> {
    fn to_sql(
        &self,
        _: &Type,
        out: &mut bytes::BytesMut,
    ) -> std::result::Result<IsNull, Box<dyn StdError + Sync + Send>> {
        match *self {
            Value::Null => return Ok(IsNull::Yes),
            Value::Int(v) => out.extend_from_slice(v.to_string().as_bytes()),
            Value::Text(v) => out.extend_from_slice(v.as_bytes()),
        }
        Ok(IsNull::No)
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    fn encode_format(&self, _: &Type) -> Format {
        Format::Text
    }

    to_sql_checked!();
}

fn column_error(row: &postgres::Row, i: usize, e: impl std::fmt::Display) -> Error {
    Error::Corrupt {
        what: format!("column {}", row.columns().get(i).map_or("?", |c| c.name())),
        why: e.to_string(),
    }
}

pub(crate) fn column_opt_int(row: &postgres::Row, i: usize) -> Result<Option<i64>> {
    let ty = row.columns().get(i).map(|c| c.type_().clone());
    let value = match ty {
        Some(Type::INT4) => row.try_get::<_, Option<i32>>(i).map(|v| v.map(i64::from)),
        Some(Type::INT2) => row.try_get::<_, Option<i16>>(i).map(|v| v.map(i64::from)),
        Some(Type::BOOL) => row.try_get::<_, Option<bool>>(i).map(|v| v.map(i64::from)),
        _ => row.try_get::<_, Option<i64>>(i),
    };
    value.map_err(|e| column_error(row, i, e))
}

pub(crate) fn column_int(row: &postgres::Row, i: usize) -> Result<i64> {
    column_opt_int(row, i)?.ok_or_else(|| column_error(row, i, "NULL where a number belongs"))
}

pub(crate) fn column_bool(row: &postgres::Row, i: usize) -> Result<bool> {
    column_int(row, i).map(|v| v != 0)
}

pub(crate) fn column_opt_text(row: &postgres::Row, i: usize) -> Result<Option<String>> {
    row.try_get::<_, Option<String>>(i)
        .map_err(|e| column_error(row, i, e))
}

pub(crate) fn column_text(row: &postgres::Row, i: usize) -> Result<String> {
    column_opt_text(row, i)?.ok_or_else(|| column_error(row, i, "NULL where text belongs"))
}

/// Rewrites `?N` placeholders to PostgreSQL's `$N`, leaving string literals
/// and quoted identifiers alone.
fn to_postgres_placeholders(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut quote: Option<char> = None;
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        match quote {
            Some(q) => {
                if c == q {
                    quote = None;
                }
                out.push(c);
            }
            None if c == '\'' || c == '"' => {
                quote = Some(c);
                out.push(c);
            }
            None if c == '?' && chars.peek().is_some_and(char::is_ascii_digit) => out.push('$'),
            None => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_rewritten_outside_quotes_only() {
        assert_eq!(
            to_postgres_placeholders("SELECT '?1', \"?2\", x FROM t WHERE a = ?1 AND b = ?12"),
            "SELECT '?1', \"?2\", x FROM t WHERE a = $1 AND b = $12"
        );
    }
}
