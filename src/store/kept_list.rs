//! The list a caller's last todo call left, and what tells whether it is
//! still the list in the database.

use super::patch::KeyedList;
use super::sessions;
use super::sql::Tx;
use crate::SessionId;
use crate::error::Result;

/// The list a todo call left on one connection, and what tells whether
/// anything has written to the database since: SQLite's `data_version`,
/// which changes when another connection commits, and the connection's own
/// count of changed rows, which changes when any other statement of this
/// connection writes (a goal call, a mark). Both are read inside the
/// call's transaction, so they describe the snapshot the list came from.
/// Reading a 1,000-task list back is most of a call's work; a long-lived
/// MCP server whose calls follow one another skips it (see
/// [`Caller::keep_lists`](super::Caller::keep_lists)).
pub(crate) struct ListCache {
    /// The connection ([`Store`](super::Store)'s id) whose snapshot it is.
    store: u64,
    session: SessionId,
    pub(super) version: i64,
    pub(super) stamp: (i64, u64),
    pub(super) keyed: KeyedList,
}

impl ListCache {
    /// The list `keyed` at `version`, as the snapshot of `tx` holds it
    /// after the call's own writes, on connection `store`.
    pub(super) fn of(
        store: u64,
        tx: &Tx<'_>,
        session: &SessionId,
        version: i64,
        keyed: KeyedList,
    ) -> Result<Option<ListCache>> {
        Ok(stamp(tx)?.map(|stamp| ListCache {
            store,
            session: session.clone(),
            version,
            stamp,
            keyed,
        }))
    }
}

impl ListCache {
    /// True when this is `session`'s list as `tx`, of connection `store`,
    /// sees it: nothing has written to the database since it was kept.
    fn is_current(&self, tx: &Tx<'_>, store: u64, session: &SessionId) -> Result<bool> {
        Ok(self.store == store
            && self.session == *session
            && sessions::todo_version(tx, session)? == self.version
            && stamp(tx)? == Some(self.stamp))
    }
}

/// `(data_version, total_changes)` of `tx`'s connection; `None` on a
/// backend without them (PostgreSQL: its lists are always read back).
pub(super) fn stamp(tx: &Tx<'_>) -> Result<Option<(i64, u64)>> {
    match tx {
        Tx::Sqlite(conn) => {
            let data_version = conn
                .prepare_cached("PRAGMA data_version")?
                .query_row([], |r| r.get(0))?;
            Ok(Some((data_version, conn.total_changes())))
        }
        _ => Ok(None),
    }
}

/// `cache` if it is `session`'s list as `tx`, of connection `store`, sees
/// it (nothing has written to the database since it was kept), else `None`.
pub(super) fn current(
    tx: &Tx<'_>,
    store: u64,
    session: &SessionId,
    cache: Option<ListCache>,
) -> Result<Option<ListCache>> {
    match cache {
        Some(cache) if cache.is_current(tx, store, session)? => Ok(Some(cache)),
        _ => Ok(None),
    }
}
