//! Writing one version of a session's list: the rows that changed, the
//! session row, the event, the undo step and the list's kept shape, all in
//! the caller's transaction; and the pending todo-error text that a
//! rejected agent call leaves for the next prompt. Both the whole-list
//! path ([`super::todos`]) and the in-place one ([`super::in_place`])
//! write through here.

use super::events::{self, EventKind, NewEvent};
use super::patch::Patch;
use super::rows;
use super::sessions;
use super::shape::{self, Shape};
use super::sql::{Tx, params};
use crate::SessionId;
use crate::error::Result;
use crate::todo::{Actor, Op};

/// The version being written and how to undo it.
pub(super) struct Version<'a> {
    pub number: i64,
    /// The shape of the list this version leaves.
    pub shape: Shape,
    pub undo_to: Option<i64>,
    pub restores: Option<i64>,
    pub inverse: &'a Patch,
}

/// Who made a change and how the event log records it.
pub(super) struct Logged<'a> {
    pub actor: Actor,
    /// The named agent that made it; `None` for the session's own agent,
    /// a person and goalkeeper.
    pub agent: Option<&'a str>,
    pub op: &'a str,
    pub payload: String,
    pub at_ms: i64,
}

impl Logged<'_> {
    /// A todo call's `op` by `actor` at `at_ms`, recorded as its canonical
    /// JSON.
    pub fn op(actor: Actor, op: &Op, at_ms: i64) -> Logged<'static> {
        Logged::op_by(actor, None, op, at_ms)
    }

    /// [`Logged::op`] of the named agent `agent`, whose name the payload
    /// keeps as `agent` (DESIGN.md §2.5).
    pub fn op_by<'a>(actor: Actor, agent: Option<&'a str>, op: &Op, at_ms: i64) -> Logged<'a> {
        let mut payload = op.to_json();
        if let (Some(agent), Some(map)) = (agent, payload.as_object_mut()) {
            map.insert("agent".into(), agent.into());
        }
        Logged {
            actor,
            agent,
            op: op.kind().as_str(),
            payload: payload.to_string(),
            at_ms,
        }
    }

    /// The same change, recording that it completed tasks whose checks had
    /// not passed (a person's `done`; DESIGN.md §13): each check and where
    /// it stood, as `unverified`. Nothing is added when there is none.
    pub fn unverified(mut self, checks: &[String]) -> Self {
        if checks.is_empty() {
            return self;
        }
        if let Ok(mut payload) = serde_json::from_str::<serde_json::Value>(&self.payload) {
            payload["unverified"] = checks.into();
            self.payload = payload.to_string();
        }
        self
    }
}

/// Writes a new version: the changed rows, the session row, the event and
/// the undo step, inside `tx`.
pub(super) fn store_version(
    tx: &Tx<'_>,
    session: &SessionId,
    forward: &Patch,
    version: Version<'_>,
    logged: Logged<'_>,
) -> Result<()> {
    // A change by the session's own agent settles its pending reminder;
    // another agent's leaves it (DESIGN.md §3.4).
    sessions::save_todo_version(
        tx,
        session,
        version.number,
        logged.actor == Actor::Agent && logged.agent.is_none(),
        logged.at_ms,
    )?;
    rows::write(tx, session, forward)?;
    // After the rows, whose writes forget the shape the row had.
    shape::save(tx, session, &version.shape)?;
    events::append(
        tx,
        &NewEvent {
            session,
            at_ms: logged.at_ms,
            actor: logged.actor.as_str(),
            kind: EventKind::Todo,
            op: Some(logged.op),
            payload: &logged.payload,
            error: None,
            version: Some(version.number),
            agent: logged.agent,
        },
    )?;
    rows::record_step(
        tx,
        session,
        version.number,
        version.undo_to,
        version.restores,
        version.inverse,
    )
}

/// The pending todo-error text, if a rejected call of the session's own
/// agent left one.
pub(super) fn read_todo_error(tx: &Tx<'_>, session: &SessionId) -> Result<Option<String>> {
    Ok(tx
        .query_opt(
            "SELECT todo_error FROM sessions WHERE id = ?1",
            params![session.as_str()],
            |r| r.get::<Option<String>>(0),
        )?
        .flatten())
}

/// Sets (or, with `None`, clears) the pending todo-error text.
pub(super) fn set_todo_error(tx: &Tx<'_>, session: &SessionId, error: Option<&str>) -> Result<()> {
    tx.execute(
        "UPDATE sessions SET todo_error = ?2 WHERE id = ?1",
        params![
            session.as_str(),
            error.map(super::events::without_nul).as_deref()
        ],
    )?;
    Ok(())
}

/// The session mark a named agent's pending todo-error text is kept under.
fn agent_error_mark(agent: &str) -> String {
    format!("todo-error.agent:{agent}")
}

/// Sets (or, with `None`, clears) the pending todo-error text of the named
/// `agent`: its reminder, for a host that gives it prompts of its own
/// (DESIGN.md §3.4). One per agent; its next good call clears it.
pub(super) fn set_agent_todo_error(
    tx: &Tx<'_>,
    session: &SessionId,
    agent: &str,
    error: Option<&str>,
    now_ms: i64,
) -> Result<()> {
    let mark = agent_error_mark(agent);
    match error {
        Some(error) => sessions::set_mark(
            tx,
            session,
            &mark,
            &super::events::without_nul(error),
            now_ms,
        ),
        None => sessions::remove_mark(tx, session, &mark),
    }
}

/// Takes the named `agent`'s pending todo-error text, clearing it.
pub(crate) fn take_agent_todo_error(
    tx: &Tx<'_>,
    session: &SessionId,
    agent: &str,
) -> Result<Option<String>> {
    let mark = agent_error_mark(agent);
    let error = sessions::mark(tx, session, &mark)?;
    if error.is_some() {
        sessions::remove_mark(tx, session, &mark)?;
    }
    Ok(error)
}

/// Takes the pending todo-error text, clearing it so the reminder is
/// delivered once.
pub(crate) fn take_todo_error(tx: &Tx<'_>, session: &SessionId) -> Result<Option<String>> {
    let error = read_todo_error(tx, session)?;
    if error.is_some() {
        set_todo_error(tx, session, None)?;
    }
    Ok(error)
}
