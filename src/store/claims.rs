//! The named agents' claims on a session's tasks (DESIGN.md §2.5): when
//! each agent was last seen and until when its lease runs, and the clock
//! that bounds them.

use super::sql::{Tx, params};
use crate::error::Result;
use crate::{AgentName, SessionId};

/// When each named agent of the session's lease ends, as granted.
pub(crate) fn agent_leases(tx: &Tx<'_>, session: &SessionId) -> Result<Vec<(String, i64)>> {
    tx.query_all(
        "SELECT name, lease_until_ms FROM agents WHERE session_id = ?1",
        params![session.as_str()],
        |r| Ok((r.get::<String>(0)?, r.get::<i64>(1)?)),
    )
}

/// The database's clock, in milliseconds since the epoch: PostgreSQL's
/// server's, which every machine of a fleet shares; on SQLite, which only
/// this machine's processes open, this machine's (`GOALKEEPER_NOW` aside).
pub(super) fn database_clock(tx: &Tx<'_>) -> Result<i64> {
    match tx {
        #[cfg(feature = "postgres")]
        Tx::Postgres(_) => tx
            .query_opt(
                "SELECT CAST(floor(extract(epoch FROM clock_timestamp()) * 1000) AS BIGINT)",
                &[],
                |r| r.get::<i64>(0),
            )
            .map(|ms| ms.unwrap_or(i64::MAX)),
        _ => Ok(std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(i64::MAX, |d| {
                i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
            })),
    }
}

/// Records that `agent` called at `now_ms` and grants it `lease_ms` from
/// then: its claims last until that lease ends, or until a lease granted
/// before ends if that is later (a lease never shrinks: a shorter
/// `todo.claim.lease` or a clock stepped back grants no less than was
/// granted). A call that wrote nothing to a session never seen leaves no
/// row: there is no session to hang it on.
pub(super) fn record_seen(
    tx: &Tx<'_>,
    session: &SessionId,
    agent: &AgentName,
    now_ms: i64,
    lease_ms: i64,
) -> Result<()> {
    grant(
        tx,
        session,
        agent.as_str(),
        now_ms,
        now_ms.saturating_add(lease_ms),
    )
}

/// Records `agent` as seen at `seen_ms` with a lease until `until_ms`,
/// keeping a later time seen and a later end granted before. Nothing for
/// a session without a row.
pub(crate) fn grant(
    tx: &Tx<'_>,
    session: &SessionId,
    agent: &str,
    seen_ms: i64,
    until_ms: i64,
) -> Result<()> {
    tx.execute(
        "INSERT INTO agents (session_id, name, seen_ms, lease_until_ms)
         SELECT ?1, ?2, ?3, ?4 WHERE EXISTS (SELECT 1 FROM sessions WHERE id = ?1)
         ON CONFLICT (session_id, name) DO UPDATE SET
             seen_ms = CASE WHEN agents.seen_ms > excluded.seen_ms
                            THEN agents.seen_ms ELSE excluded.seen_ms END,
             lease_until_ms = CASE WHEN agents.lease_until_ms > excluded.lease_until_ms
                                   THEN agents.lease_until_ms ELSE excluded.lease_until_ms END",
        params![session.as_str(), agent, seen_ms, until_ms],
    )?;
    Ok(())
}
