//! Todo commands against the store: one call, import, undo, the log. Each is
//! one immediate transaction: read, apply, write the new state, append the
//! event, commit.

use rusqlite::{OptionalExtension, Transaction, params};
use serde_json::json;

use super::Store;
use super::events::{self, EventKind, NewEvent};
use super::sessions::{self, parse_list};
use crate::SessionId;
use crate::error::{Error, Result};
use crate::todo::{self, Actor, Call, SummaryKind, TodoDetails, TodoList, TodoResult};
use crate::tool_result::ToolResult;

impl Store {
    /// Runs one todo call for `session` as `actor`.
    ///
    /// A successful mutation bumps the list's version and appends an event
    /// holding the new state; a call that changes nothing (SPEC §2.2)
    /// writes neither. A rejected call changes nothing, except that
    /// a rejected *agent* call is logged and left pending as a todo-error
    /// reminder. `view` writes nothing.
    pub fn todo(
        &mut self,
        session: &SessionId,
        call: Call<'_>,
        actor: Actor,
        now_ms: i64,
    ) -> Result<TodoResult> {
        let tx = self.immediate()?;
        let row = sessions::load_todos(&tx, session)?;
        let outcome = todo::run(row.list, call, actor);
        let mut version = row.version;
        if outcome.is_mutation() {
            version += 1;
            let op = outcome.op.as_ref().expect("a mutation has an op");
            let payload = op.to_json().to_string();
            commit_state(
                &tx,
                session,
                &outcome.list,
                version,
                version - 1,
                Change {
                    actor,
                    op: op.kind().as_str(),
                    payload: &payload,
                    at_ms: now_ms,
                },
            )?;
            if actor == Actor::Agent {
                set_todo_error(&tx, session, None)?;
            }
        } else if outcome.is_no_op() && actor == Actor::Agent {
            // A no-op stores nothing (SPEC §2.2), but it is a well-formed
            // call: the reminder about an earlier rejected one is done.
            set_todo_error(&tx, session, None)?;
        } else if !outcome.errors.is_empty() && actor == Actor::Agent {
            let error = outcome.errors.join("; ");
            events::append_rejected(
                &tx,
                session,
                EventKind::Todo,
                outcome.kind.map(|k| k.as_str()),
                &call.raw_payload(),
                &error,
                now_ms,
            )?;
            set_todo_error(&tx, session, Some(&error))?;
        }
        tx.commit()?;
        Ok(outcome.to_result(version))
    }

    /// The current list of `session` and its version (empty, 0 if the
    /// session was never written).
    pub fn todo_list(&mut self, session: &SessionId) -> Result<(TodoList, i64)> {
        let row = self.in_tx(|tx| sessions::load_todos(tx, session))?;
        Ok((row.list, row.version))
    }

    /// Replaces the list with an imported one (actor user). The list must
    /// hold the model's invariants; it is normalized before it is stored.
    /// `source` names where it came from, for the event log.
    pub fn todo_import(
        &mut self,
        session: &SessionId,
        list: TodoList,
        source: &str,
        now_ms: i64,
    ) -> Result<TodoResult> {
        if let Err(problems) = list.validate() {
            return Err(Error::Rejected(format!(
                "cannot import {source}: {}; nothing was imported",
                problems.join("; ")
            )));
        }
        let tx = self.immediate()?;
        let result = import_in_tx(&tx, session, list, source, now_ms)?;
        tx.commit()?;
        Ok(result)
    }

    /// Restores the list as it was before the last change, as a new version.
    /// Repeated undos walk further back; an undo is itself never undone by
    /// the next one. Refused when there is nothing left to undo.
    pub fn todo_undo(&mut self, session: &SessionId, now_ms: i64) -> Result<TodoResult> {
        let tx = self.immediate()?;
        let current = sessions::load_todos(&tx, session)?.version;
        let target = match events::todo_version(&tx, session, current)? {
            Some((_, Some(target))) if current > 0 => target,
            _ => {
                return Err(Error::Rejected(format!(
                    "nothing to undo in session {session}: the todo list is at its first state"
                )));
            }
        };
        let (list, undo_to) = if target == 0 {
            (TodoList::default(), None)
        } else {
            let (state, undo_to) =
                events::todo_version(&tx, session, target)?.ok_or_else(|| Error::Corrupt {
                    what: format!("event log of session {session}"),
                    why: format!("version {target} has no recorded state"),
                })?;
            (parse_list(&state, session)?, undo_to)
        };
        let version = current + 1;
        let payload = json!({"op": "undo", "restored_version": target}).to_string();
        let state = serde_json::to_string(&list).expect("a list serializes");
        sessions::touch(&tx, session, now_ms)?;
        write_list(&tx, session, &state, version)?;
        events::append(
            &tx,
            &NewEvent {
                session,
                at_ms: now_ms,
                actor: Actor::User.as_str(),
                kind: EventKind::Todo,
                op: Some("undo"),
                payload: &payload,
                error: None,
                version: Some(version),
                undo_to,
                state: Some(&state),
            },
        )?;
        tx.commit()?;
        Ok(result(list, "undo", version))
    }

    /// Takes the pending todo-error text of `session` (set by a rejected
    /// agent call), clearing it so the reminder is delivered once.
    pub fn take_todo_error(&mut self, session: &SessionId) -> Result<Option<String>> {
        self.in_tx(|tx| take_todo_error(tx, session))
    }

    /// The pending todo-error text of `session` (set by a rejected agent
    /// call, cleared by the next successful one), if any.
    pub fn pending_todo_error(&mut self, session: &SessionId) -> Result<Option<String>> {
        self.in_tx(|tx| read_todo_error(tx, session))
    }
}

/// Takes the pending todo-error text inside `tx`, clearing it.
/// Replaces `session`'s list with the checked `list` inside `tx`, as the
/// user's import from `source`; the caller commits.
pub(crate) fn import_in_tx(
    tx: &Transaction<'_>,
    session: &SessionId,
    mut list: TodoList,
    source: &str,
    now_ms: i64,
) -> Result<TodoResult> {
    todo::normalize(&mut list);
    let version = sessions::load_todos(tx, session)?.version + 1;
    let payload = json!({"op": "import", "source": source}).to_string();
    commit_state(
        tx,
        session,
        &list,
        version,
        version - 1,
        Change {
            actor: Actor::User,
            op: "import",
            payload: &payload,
            at_ms: now_ms,
        },
    )?;
    Ok(result(list, "import", version))
}

pub(crate) fn take_todo_error(tx: &Transaction<'_>, session: &SessionId) -> Result<Option<String>> {
    let error = read_todo_error(tx, session)?;
    if error.is_some() {
        set_todo_error(tx, session, None)?;
    }
    Ok(error)
}

/// Who made a change and how it is recorded.
struct Change<'a> {
    actor: Actor,
    op: &'a str,
    payload: &'a str,
    at_ms: i64,
}

/// Writes `list` as `version` and logs the change, inside `tx`.
fn commit_state(
    tx: &Transaction<'_>,
    session: &SessionId,
    list: &TodoList,
    version: i64,
    undo_to: i64,
    change: Change<'_>,
) -> Result<()> {
    let state = serde_json::to_string(list).expect("a list serializes");
    sessions::touch(tx, session, change.at_ms)?;
    write_list(tx, session, &state, version)?;
    events::append(
        tx,
        &NewEvent {
            session,
            at_ms: change.at_ms,
            actor: change.actor.as_str(),
            kind: EventKind::Todo,
            op: Some(change.op),
            payload: change.payload,
            error: None,
            version: Some(version),
            undo_to: Some(undo_to),
            state: Some(&state),
        },
    )
}

fn write_list(tx: &Transaction<'_>, session: &SessionId, state: &str, version: i64) -> Result<()> {
    tx.prepare_cached("UPDATE sessions SET todos = ?2, todo_version = ?3 WHERE id = ?1")?
        .execute(params![session.as_str(), state, version])?;
    Ok(())
}

fn read_todo_error(tx: &Transaction<'_>, session: &SessionId) -> Result<Option<String>> {
    Ok(tx
        .prepare_cached("SELECT todo_error FROM sessions WHERE id = ?1")?
        .query_row([session.as_str()], |r| r.get::<_, Option<String>>(0))
        .optional()?
        .flatten())
}

fn set_todo_error(tx: &Transaction<'_>, session: &SessionId, error: Option<&str>) -> Result<()> {
    tx.prepare_cached("UPDATE sessions SET todo_error = ?2 WHERE id = ?1")?
        .execute(params![session.as_str(), error])?;
    Ok(())
}

/// The result of a user-level replacement (import, undo), shaped like a
/// tool result so every command prints the same way.
fn result(list: TodoList, op: &str, version: i64) -> TodoResult {
    ToolResult::new(
        todo::summary(&list, &[], SummaryKind::Mutation),
        TodoDetails {
            op: Some(op.to_owned()),
            phases: list,
            completed_tasks: Vec::new(),
            version,
        },
        false,
    )
}
