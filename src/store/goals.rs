//! Goal commands against the store: each lifecycle op or usage report is
//! one immediate transaction, so two processes reporting usage at once
//! both count.

use super::events::{self, EventKind, NewEvent};
use super::sessions;
use super::sql::{Dialect, Row, Tx, params};
use crate::actor::Actor;
use crate::check::{Proof, Scope};
use crate::error::{Error, Result};
use crate::goal::{self, BudgetNotice, Goal, GoalOp, GoalResult, GoalStatus};
use crate::todo::Counts;
use crate::tree::Look;
use crate::{AgentName, SessionId};

/// One goal call as it arrives: a typed op (CLI, library) or the agent
/// tool's JSON (the name the store has always used for `goal::Call`).
pub type GoalCall<'a> = goal::Call<'a>;

impl super::SessionTx<'_> {
    /// What the status line shows of the session: its current goal, the
    /// counts of its list and the named agents holding its tasks. Reads
    /// the counts the session's row keeps, not the list
    /// ([`super::shape`]).
    pub fn status(&self) -> Result<(Option<Goal>, Counts, Vec<String>)> {
        let (tx, session) = (&self.tx, &self.session);
        let goal = load_goal(tx, session)?;
        let (version, shape) = super::shape::load(tx, session)?;
        let counts = match &shape {
            _ if version == 0 => Counts::default(),
            Some(shape) => shape.counts(),
            None => super::rows::counts(tx, session)?,
        };
        // A kept shape means no named agent holds anything (DESIGN.md §2.5).
        let holders = match shape {
            Some(_) => Vec::new(),
            None => tx.query_all(
                "SELECT DISTINCT agent FROM tasks
                 WHERE session_id = ?1 AND status = 'in_progress' AND agent IS NOT NULL
                 ORDER BY agent",
                params![session.as_str()],
                |r| r.get::<String>(0),
            )?,
        };
        Ok((goal, counts, holders))
    }
}

/// One goal call inside `tx`: the current goal and the next id are read,
/// [`goal::run`] decides, and its outcome is written (the goal, the event;
/// a rejected agent call is logged with the named `agent` that made it,
/// if one did). The caller commits.
pub(crate) fn goal_in_tx(
    tx: &Tx<'_>,
    session: &SessionId,
    call: GoalCall<'_>,
    actor: Actor,
    agent: Option<&AgentName>,
    now_ms: i64,
    look: &Look,
) -> Result<GoalResult> {
    let current = load_goal(tx, session)?;
    // Writers of other sessions run at the same time, so on PostgreSQL the
    // id comes from a sequence: it is drawn only once the call is known to
    // start a goal, so a refused call uses none. The files are read only
    // for a goal with checks and an op that reads them.
    let outcome = goal::run(
        current.as_ref(),
        call,
        actor,
        now_ms,
        || next_goal_id(tx),
        |goal| goal_proof(tx, session, goal, look),
    )?;
    if let Some(change) = outcome.change() {
        sessions::touch(tx, session, now_ms)?;
        if let Some(old) = &change.replaced {
            save_goal(tx, session, old)?;
        }
        if let Some(goal) = &change.goal {
            save_goal(tx, session, goal)?;
        }
        let op = outcome.op.as_ref().expect("a change has an op");
        let payload = outcome.payload().expect("a change has a payload");
        events::append(
            tx,
            &NewEvent {
                session,
                at_ms: now_ms,
                actor: actor.as_str(),
                kind: EventKind::Goal,
                op: Some(op.name()),
                payload: &payload.to_string(),
                error: None,
                version: None,
                agent: agent.map(AgentName::as_str),
            },
        )?;
    } else if !outcome.errors.is_empty() && actor == Actor::Agent {
        events::append_rejected(
            tx,
            session,
            EventKind::Goal,
            outcome.op.as_ref().map(GoalOp::name),
            &call.raw_payload(),
            &outcome.errors.join("; "),
            agent.map(AgentName::as_str),
            now_ms,
        )?;
    }
    Ok(outcome.to_result())
}

/// Where `goal`'s checks stand on the files `look` sees.
fn goal_proof(tx: &Tx<'_>, session: &SessionId, goal: &Goal, look: &Look) -> Result<Proof> {
    let wanted = goal
        .checks
        .iter()
        .map(|c| (Scope::Goal, c.clone()))
        .collect();
    Ok(Proof {
        checked: super::check_runs::checked(tx, session, wanted, look)?,
        tree_error: look.fingerprint().err().map(str::to_owned),
    })
}

/// The session's latest goal.
const LOAD_GOAL: &str = "SELECT id, objective, status, token_budget, tokens_used, time_used_ms,
    active_since_ms, revision, budget_notice, created_ms, updated_ms, checks
    FROM goals WHERE session_id = ?1 ORDER BY id DESC LIMIT 1";

/// The session's latest goal, if any.
pub(crate) fn load_goal(tx: &Tx<'_>, session: &SessionId) -> Result<Option<Goal>> {
    let row = tx.query_opt(LOAD_GOAL, params![session.as_str()], read_goal)?;
    row.map(|r| {
        r.map_err(|why| Error::Corrupt {
            what: format!("goal of session {session}"),
            why,
        })
    })
    .transpose()
}

type GoalRow = std::result::Result<Goal, String>;

fn read_goal(row: &Row<'_>) -> Result<GoalRow> {
    let status: String = row.get(2)?;
    let notice: String = row.get(8)?;
    let budget: Option<i64> = row.get(3)?;
    let active_since_ms: Option<i64> = row.get(6)?;
    let used: i64 = row.get(4)?;
    let Some(status) = GoalStatus::parse(&status) else {
        return Ok(Err(format!("unknown status {status:?}")));
    };
    let Some(budget_notice) = BudgetNotice::parse(&notice) else {
        return Ok(Err(format!("unknown budget notice {notice:?}")));
    };
    let checks = match row.get::<Option<String>>(11)? {
        None => Vec::new(),
        Some(text) => match serde_json::from_str::<Vec<String>>(&text) {
            Ok(checks) => checks,
            Err(e) => return Ok(Err(format!("its checks do not read ({e})"))),
        },
    };
    Ok(Ok(Goal {
        id: row.get(0)?,
        objective: row.get(1)?,
        status,
        token_budget: budget.map(|b| b.max(0) as u64),
        tokens_used: used.max(0) as u64,
        time_used_ms: row.get(5)?,
        active_since_ms,
        revision: row.get(7)?,
        budget_notice,
        created_at_ms: row.get(9)?,
        updated_at_ms: row.get(10)?,
        checks,
    }))
}

/// The id the next new goal gets: goal ids are never reused, across
/// sessions (the table is `AUTOINCREMENT`). Stable inside the transaction.
///
/// On PostgreSQL, where writers of other sessions run at the same time, the
/// id is drawn from a sequence instead: only for an op that starts a goal,
/// and an id drawn by a call that is then refused is skipped, never reused.
pub(crate) fn next_goal_id(tx: &Tx<'_>) -> Result<i64> {
    let sql = match tx.dialect() {
        Dialect::Sqlite => {
            "SELECT COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'goals'), 0) + 1"
        }
        #[cfg(feature = "postgres")]
        Dialect::Postgres => "SELECT nextval('goal_ids')",
    };
    tx.query_one(sql, &[], |r| r.get(0))
}

/// Writes `goal`, inserting it when its id is new.
pub(crate) fn save_goal(tx: &Tx<'_>, session: &SessionId, goal: &Goal) -> Result<()> {
    tx.execute(
        "INSERT INTO goals (id, session_id, objective, status, token_budget, tokens_used,
            time_used_ms, active_since_ms, revision, budget_notice, created_ms, updated_ms, checks)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)
         ON CONFLICT(id) DO UPDATE SET status = excluded.status,
            token_budget = excluded.token_budget, tokens_used = excluded.tokens_used,
            time_used_ms = excluded.time_used_ms, active_since_ms = excluded.active_since_ms,
            revision = excluded.revision, budget_notice = excluded.budget_notice,
            updated_ms = excluded.updated_ms, checks = excluded.checks",
        params![
            goal.id,
            session.as_str(),
            goal.objective.as_str(),
            goal.status.as_str(),
            goal.token_budget.map(|b| b as i64),
            goal.tokens_used as i64,
            goal.time_used_ms,
            goal.active_since_ms,
            goal.revision,
            goal.budget_notice.as_str(),
            goal.created_at_ms,
            goal.updated_at_ms,
            (!goal.checks.is_empty())
                .then(|| serde_json::to_string(&goal.checks).expect("strings serialize"))
                .as_deref(),
        ],
    )?;
    Ok(())
}
