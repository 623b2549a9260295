//! The seam between the store and its two backends, at the level of one
//! transaction: [`Tx`] runs a statement on SQLite or on PostgreSQL, and
//! [`Row`] reads a result column from either.
//!
//! **An enum, not a trait.** There are exactly two backends and the set is
//! closed: both are compiled into this crate, nothing outside implements a
//! backend. An enum keeps [`crate::Store`] one concrete type (no generic
//! parameter spreading through the MCP server, the hooks and the CLI, no
//! `dyn` object with an object-safe subset of the API), makes the few
//! places where the dialects differ a visible `match`, and lets the store's
//! logic (read, apply the pure transition, write, log, commit) exist once
//! for both: only the DDL, the per-session lock and a handful of
//! dialect-specific statements differ.
//!
//! Statements are written once, in the SQL both dialects accept, with
//! `?1`, `?2`, … placeholders (rewritten to `$1`, `$2`, … for PostgreSQL).
//! Integer columns are `BIGINT` on PostgreSQL, so an `i64` binds to either.

use crate::SessionId;
use crate::error::{Error, Result};

pub(crate) use super::param::Value;

/// `params![a, b]`: a slice of statement parameters.
macro_rules! params {
    ($($value:expr),* $(,)?) => {
        &[$($crate::store::param::Value::from($value)),*][..]
    };
}
pub(crate) use params;

impl rusqlite::ToSql for Value<'_> {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        use rusqlite::types::{ToSqlOutput, ValueRef};
        Ok(ToSqlOutput::Borrowed(match *self {
            Value::Null => ValueRef::Null,
            Value::Int(v) => ValueRef::Integer(v),
            Value::Text(v) => ValueRef::Text(v.as_bytes()),
        }))
    }
}

/// Which SQL a backend speaks, for the few statements that differ.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Dialect {
    Sqlite,
    #[cfg(feature = "postgres")]
    Postgres,
}

/// One transaction of a command. Dropping it without [`Tx::commit`] rolls
/// it back.
pub(crate) enum Tx<'c> {
    Sqlite(rusqlite::Transaction<'c>),
    /// Statements inside a SQLite transaction that the caller began and
    /// ends (a migration step); [`Tx::commit`] leaves it to the caller.
    SqliteIn(&'c rusqlite::Connection),
    #[cfg(feature = "postgres")]
    Postgres(super::pg::PgTx<'c>),
}

impl Tx<'_> {
    /// Which SQL this transaction speaks.
    pub(crate) fn dialect(&self) -> Dialect {
        match self {
            Tx::Sqlite(_) | Tx::SqliteIn(_) => Dialect::Sqlite,
            #[cfg(feature = "postgres")]
            Tx::Postgres(_) => Dialect::Postgres,
        }
    }

    /// Runs a statement; returns the number of rows it changed.
    pub(crate) fn execute(&self, sql: &str, params: &[Value<'_>]) -> Result<usize> {
        match self {
            Tx::Sqlite(tx) => sqlite_execute(tx, sql, params),
            Tx::SqliteIn(conn) => sqlite_execute(conn, sql, params),
            #[cfg(feature = "postgres")]
            Tx::Postgres(tx) => tx.execute(sql, params),
        }
    }

    /// Runs a query and maps its first row, if any.
    pub(crate) fn query_opt<T>(
        &self,
        sql: &str,
        params: &[Value<'_>],
        f: impl FnOnce(&Row<'_>) -> Result<T>,
    ) -> Result<Option<T>> {
        match self {
            Tx::Sqlite(tx) => sqlite_query_opt(tx, sql, params, f),
            Tx::SqliteIn(conn) => sqlite_query_opt(conn, sql, params, f),
            #[cfg(feature = "postgres")]
            Tx::Postgres(tx) => match tx.query(sql, params)?.first() {
                Some(row) => f(&Row::Postgres(row)).map(Some),
                None => Ok(None),
            },
        }
    }

    /// Runs a query that returns exactly one row and maps it.
    pub(crate) fn query_one<T>(
        &self,
        sql: &str,
        params: &[Value<'_>],
        f: impl FnOnce(&Row<'_>) -> Result<T>,
    ) -> Result<T> {
        self.query_opt(sql, params, f)?
            .ok_or_else(|| Error::Corrupt {
                what: "query result".into(),
                why: format!("no row from {sql}"),
            })
    }

    /// Runs a query and maps every row.
    pub(crate) fn query_all<T>(
        &self,
        sql: &str,
        params: &[Value<'_>],
        f: impl FnMut(&Row<'_>) -> Result<T>,
    ) -> Result<Vec<T>> {
        match self {
            Tx::Sqlite(tx) => sqlite_query_all(tx, sql, params, f),
            Tx::SqliteIn(conn) => sqlite_query_all(conn, sql, params, f),
            #[cfg(feature = "postgres")]
            Tx::Postgres(tx) => {
                let mut f = f;
                tx.query(sql, params)?
                    .iter()
                    .map(|row| f(&Row::Postgres(row)))
                    .collect()
            }
        }
    }

    /// Runs a query and hands its rows to `f` in order until `f` returns
    /// false: SQLite steps no further than that row (PostgreSQL has
    /// fetched every row the statement returns, so bound it with `LIMIT`
    /// too).
    pub(crate) fn query_each(
        &self,
        sql: &str,
        params: &[Value<'_>],
        f: impl FnMut(&Row<'_>) -> Result<bool>,
    ) -> Result<()> {
        match self {
            Tx::Sqlite(tx) => sqlite_query_each(tx, sql, params, f),
            Tx::SqliteIn(conn) => sqlite_query_each(conn, sql, params, f),
            #[cfg(feature = "postgres")]
            Tx::Postgres(tx) => {
                let mut f = f;
                for row in &tx.query(sql, params)? {
                    if !f(&Row::Postgres(row))? {
                        break;
                    }
                }
                Ok(())
            }
        }
    }

    /// Takes the session's write lock for the rest of the transaction, so
    /// two writers of one session run one after the other. SQLite's
    /// `BEGIN IMMEDIATE` already holds the whole database; PostgreSQL locks
    /// per session (see [`super::pg`]).
    #[cfg_attr(not(feature = "postgres"), allow(unused_variables))]
    pub(crate) fn lock_session(&self, session: &SessionId) -> Result<()> {
        match self {
            Tx::Sqlite(_) | Tx::SqliteIn(_) => Ok(()),
            #[cfg(feature = "postgres")]
            Tx::Postgres(tx) => tx.lock_session(session),
        }
    }

    /// Takes the lock of global pointer `key` for the rest of the
    /// transaction (a read-then-write of a pointer). SQLite: the
    /// transaction already holds the database.
    #[cfg_attr(not(feature = "postgres"), allow(unused_variables))]
    pub(crate) fn lock_pointer(&self, key: &str) -> Result<()> {
        match self {
            Tx::Sqlite(_) | Tx::SqliteIn(_) => Ok(()),
            #[cfg(feature = "postgres")]
            Tx::Postgres(tx) => tx.lock_pointer(key),
        }
    }

    /// Commits.
    pub(crate) fn commit(self) -> Result<()> {
        match self {
            Tx::Sqlite(tx) => Ok(tx.commit()?),
            Tx::SqliteIn(_) => Ok(()),
            #[cfg(feature = "postgres")]
            Tx::Postgres(tx) => tx.commit(),
        }
    }
}

fn sqlite_execute(conn: &rusqlite::Connection, sql: &str, params: &[Value<'_>]) -> Result<usize> {
    Ok(conn
        .prepare_cached(sql)?
        .execute(rusqlite::params_from_iter(params))?)
}

fn sqlite_query_opt<T>(
    conn: &rusqlite::Connection,
    sql: &str,
    params: &[Value<'_>],
    f: impl FnOnce(&Row<'_>) -> Result<T>,
) -> Result<Option<T>> {
    let mut stmt = conn.prepare_cached(sql)?;
    let mut rows = stmt.query(rusqlite::params_from_iter(params))?;
    match rows.next()? {
        Some(row) => f(&Row::Sqlite(row)).map(Some),
        None => Ok(None),
    }
}

fn sqlite_query_all<T>(
    conn: &rusqlite::Connection,
    sql: &str,
    params: &[Value<'_>],
    mut f: impl FnMut(&Row<'_>) -> Result<T>,
) -> Result<Vec<T>> {
    let mut stmt = conn.prepare_cached(sql)?;
    let mut rows = stmt.query(rusqlite::params_from_iter(params))?;
    let mut out = Vec::new();
    while let Some(row) = rows.next()? {
        out.push(f(&Row::Sqlite(row))?);
    }
    Ok(out)
}

fn sqlite_query_each(
    conn: &rusqlite::Connection,
    sql: &str,
    params: &[Value<'_>],
    mut f: impl FnMut(&Row<'_>) -> Result<bool>,
) -> Result<()> {
    let mut stmt = conn.prepare_cached(sql)?;
    let mut rows = stmt.query(rusqlite::params_from_iter(params))?;
    while let Some(row) = rows.next()? {
        if !f(&Row::Sqlite(row))? {
            break;
        }
    }
    Ok(())
}

/// One result row of either backend.
pub(crate) enum Row<'r> {
    Sqlite(&'r rusqlite::Row<'r>),
    #[cfg(feature = "postgres")]
    Postgres(&'r postgres::Row),
}

impl Row<'_> {
    /// Column `i` as `T`.
    pub(crate) fn get<T: Column>(&self, i: usize) -> Result<T> {
        match self {
            Row::Sqlite(row) => T::from_sqlite(row, i),
            #[cfg(feature = "postgres")]
            Row::Postgres(row) => T::from_postgres(row, i),
        }
    }
}

impl Row<'_> {
    /// Column `i` as text borrowed from the row (`None` for NULL), handed
    /// to `f`: no `String` is made for a value that is only looked at.
    pub(crate) fn with_text<T>(&self, i: usize, f: impl FnOnce(Option<&str>) -> T) -> Result<T> {
        match self {
            Row::Sqlite(row) => {
                let value = row.get_ref(i)?;
                let text = value.as_str_or_null().map_err(|e| {
                    rusqlite::Error::FromSqlConversionFailure(i, value.data_type(), Box::new(e))
                })?;
                Ok(f(text))
            }
            #[cfg(feature = "postgres")]
            Row::Postgres(row) => Ok(f(super::pg::column_opt_text(row, i)?.as_deref())),
        }
    }
}

/// A Rust type a result column converts to on both backends.
pub(crate) trait Column: Sized {
    fn from_sqlite(row: &rusqlite::Row<'_>, i: usize) -> Result<Self>;
    #[cfg(feature = "postgres")]
    fn from_postgres(row: &postgres::Row, i: usize) -> Result<Self>;
}

macro_rules! column {
    ($t:ty, $pg:path) => {
        impl Column for $t {
            fn from_sqlite(row: &rusqlite::Row<'_>, i: usize) -> Result<Self> {
                Ok(row.get(i)?)
            }
            #[cfg(feature = "postgres")]
            fn from_postgres(row: &postgres::Row, i: usize) -> Result<Self> {
                $pg(row, i)
            }
        }
    };
}

column!(i64, super::pg::column_int);
column!(Option<i64>, super::pg::column_opt_int);
column!(String, super::pg::column_text);
column!(Option<String>, super::pg::column_opt_text);
column!(bool, super::pg::column_bool);

/// A column's value of any type, owned: what a copy between two databases
/// carries from a row of one to a statement of the other.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Owned {
    Null,
    Int(i64),
    Text(String),
}

impl Owned {
    /// The value as a statement parameter.
    pub(crate) fn as_value(&self) -> Value<'_> {
        match self {
            Owned::Null => Value::Null,
            Owned::Int(v) => Value::Int(*v),
            Owned::Text(v) => Value::Text(v),
        }
    }
}

impl Column for Owned {
    fn from_sqlite(row: &rusqlite::Row<'_>, i: usize) -> Result<Self> {
        use rusqlite::types::ValueRef;
        Ok(match row.get_ref(i)? {
            ValueRef::Null => Owned::Null,
            ValueRef::Integer(v) => Owned::Int(v),
            ValueRef::Text(t) => Owned::Text(String::from_utf8_lossy(t).into_owned()),
            other => {
                return Err(Error::Corrupt {
                    what: format!("column {i}"),
                    why: format!("unexpected {:?} value", other.data_type()),
                });
            }
        })
    }

    #[cfg(feature = "postgres")]
    fn from_postgres(row: &postgres::Row, i: usize) -> Result<Self> {
        let is_text = row
            .columns()
            .get(i)
            .is_some_and(|c| *c.type_() == postgres::types::Type::TEXT);
        Ok(if is_text {
            super::pg::column_opt_text(row, i)?.map_or(Owned::Null, Owned::Text)
        } else {
            super::pg::column_opt_int(row, i)?.map_or(Owned::Null, Owned::Int)
        })
    }
}
