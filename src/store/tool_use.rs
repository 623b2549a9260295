//! Who a caller's calls act as ([`Caller::act_as`] names the agent), and
//! which agent a host's tool call belongs to (DESIGN.md §9). Claude Code
//! serves its main agent and every subagent from one MCP server, and a
//! `tools/call` names no agent; its `PreToolUse` hook does, and both carry
//! the call's tool-use id. So the hook records, in its own transaction,
//! that the id is an agent's ([`SessionTx::record_tool_use`](super::SessionTx::record_tool_use)),
//! and the MCP call with that id takes the record in its own transaction
//! and acts as that agent ([`Caller::act_for_call`]). No record: the
//! call is the session's own agent's, as always.
//!
//! A record is a session mark: the call that uses it deletes it, and one
//! whose call never came (a denied call) is dropped by a later record once
//! [`TOOL_USE_TTL_MS`] old.
//!
//! Codex runs an MCP server of its own for each subagent, and names the
//! calling thread in every `tools/call`: such a call names its agent
//! itself ([`CallFrom::Agent`]), and nothing is recorded.

use super::sessions;
use super::sql::{Tx, params};
use crate::error::Result;
use crate::{AgentName, SessionId};

/// The session marks of tool calls, `tool-use-agent:<id>`, valued
/// `<recorded ms> <agent>`.
const PREFIX: &str = "tool-use-agent:";

/// A record older than this is of a call that never came.
pub(crate) const TOOL_USE_TTL_MS: i64 = 60 * 60 * 1000;

/// The longest tool-use id recorded (Claude Code's are about 30 bytes).
pub(crate) const MAX_TOOL_USE_ID_BYTES: usize = 256;

/// Whose a host's tool call is, as the call tells it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CallFrom {
    /// The call's tool-use id, which a hook may have recorded as an
    /// agent's (Claude Code).
    ToolUse(String),
    /// The agent the call names (a Codex subagent's thread).
    Agent(AgentName),
}

/// Records, in `tx`, that the tool call `tool_use_id` of `session` is
/// `agent`'s, and drops the records of calls that never came. An id that is
/// not [`recordable`] is not recorded.
pub(crate) fn record(
    tx: &Tx<'_>,
    session: &SessionId,
    tool_use_id: &str,
    agent: &AgentName,
    now_ms: i64,
) -> Result<bool> {
    if !recordable(tool_use_id) {
        return Ok(false);
    }
    let kept: Vec<(String, String)> = tx.query_all(
        "SELECT key, value FROM session_marks WHERE session_id = ?1 AND key LIKE ?2",
        params![session.as_str(), format!("{PREFIX}%").as_str()],
        |r| Ok((r.get::<String>(0)?, r.get::<String>(1)?)),
    )?;
    for (key, value) in kept {
        let at = value
            .split_once(' ')
            .and_then(|(at, _)| at.parse::<i64>().ok());
        if at.is_none_or(|at| now_ms.saturating_sub(at) >= TOOL_USE_TTL_MS) {
            tx.execute(
                "DELETE FROM session_marks WHERE session_id = ?1 AND key = ?2",
                params![session.as_str(), key.as_str()],
            )?;
        }
    }
    let value = format!("{now_ms} {agent}");
    sessions::set_mark(tx, session, &key(tool_use_id), &value, now_ms)?;
    Ok(true)
}

/// `who` with the agent the record of its tool call names, taken (deleted)
/// in `tx`; `who` as it is when it names no tool call or nothing was
/// recorded for it.
pub(crate) fn settle(tx: &Tx<'_>, session: &SessionId, mut who: Who) -> Result<Who> {
    let id = match who.call.take() {
        None => return Ok(who),
        Some(CallFrom::Agent(agent)) => {
            who.agent = Some(agent);
            return Ok(who);
        }
        // No record can exist for it: nothing to look up.
        Some(CallFrom::ToolUse(id)) if !recordable(&id) => return Ok(who),
        Some(CallFrom::ToolUse(id)) => id,
    };
    let value: Option<String> = tx.query_opt(
        "DELETE FROM session_marks WHERE session_id = ?1 AND key = ?2 RETURNING value",
        params![session.as_str(), key(&id).as_str()],
        |r| r.get(0),
    )?;
    let named = value
        .as_deref()
        .and_then(|v| v.split_once(' '))
        .and_then(|(_, name)| AgentName::parse(name).ok());
    if let Some(agent) = named {
        who.agent = agent;
    }
    Ok(who)
}

/// Who a caller's todo calls act as (DESIGN.md §2.5).
#[derive(Clone, Debug)]
pub(crate) struct Who {
    /// The named agent; `None`: the session's own agent.
    pub agent: Option<AgentName>,
    /// How long a named agent's claims last after its last call.
    pub lease_ms: i64,
    /// Whose the next call is, as the host told it
    /// ([`Caller::act_for_call`]).
    pub call: Option<CallFrom>,
}

impl Who {
    /// Whether the call acts as a named agent whatever a tool-use record
    /// says: the store's agent, or the one the call names.
    pub(crate) fn names_agent(&self) -> bool {
        self.agent.is_some() || matches!(self.call, Some(CallFrom::Agent(_)))
    }
}

impl Default for Who {
    fn default() -> Who {
        Who {
            agent: None,
            lease_ms: 600_000,
            call: None,
        }
    }
}

/// True for a tool-use id a record may be kept under: not empty, at most
/// [`MAX_TOOL_USE_ID_BYTES`], and without a NUL character, which no text
/// goalkeeper stores holds (DESIGN.md §1).
fn recordable(tool_use_id: &str) -> bool {
    !tool_use_id.is_empty()
        && tool_use_id.len() <= MAX_TOOL_USE_ID_BYTES
        && !tool_use_id.contains('\0')
}

fn key(tool_use_id: &str) -> String {
    format!("{PREFIX}{tool_use_id}")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::store::GoalCall;
    use crate::todo::{Actor, Call};
    use crate::{AgentName, SessionId, Store};

    fn session() -> SessionId {
        SessionId::parse("s").unwrap()
    }

    fn agent(name: &str) -> AgentName {
        AgentName::parse(name).unwrap().unwrap()
    }

    fn call(store: &mut Store, tool_use: Option<&str>, json: serde_json::Value, now: i64) {
        let mut caller = crate::store::Caller::default();
        caller.act_for_call(tool_use.map(|id| super::CallFrom::ToolUse(id.to_owned())));
        let answer = store
            .todo_answer(
                &session(),
                Call::Value(&json),
                Actor::Agent,
                &mut caller,
                now,
            )
            .unwrap();
        assert!(!answer.is_error, "{}", answer.text);
    }

    fn marks(store: &Store) -> usize {
        store
            .read(&session(), |tx| {
                tx.tx.query_all(
                    "SELECT key FROM session_marks WHERE key LIKE 'tool-use-agent:%'",
                    crate::store::sql::params![],
                    |r| r.get::<String>(0),
                )
            })
            .unwrap()
            .len()
    }

    /// A recorded call acts as its agent and takes the record; the next
    /// call with no record, or with an id never recorded, is the main
    /// agent's.
    #[test]
    fn a_recorded_call_acts_as_its_agent_once() {
        let mut store = Store::open_in_memory().unwrap();
        call(
            &mut store,
            None,
            json!({"op": "init", "items": ["Mine", "Theirs", "Later"]}),
            1,
        );
        let recorded = store.write(&session(), |tx| {
            tx.record_tool_use("toolu_1", &agent("a1f"), 2)
        });
        assert!(recorded.unwrap());
        let before = crate::store::transactions_begun();
        call(
            &mut store,
            Some("toolu_1"),
            json!({"op": "start", "task": "Theirs"}),
            3,
        );
        assert_eq!(crate::store::transactions_begun() - before, 1);
        assert_eq!(marks(&store), 0);
        let (list, _) = store.read(&session(), |tx| tx.todo_list()).unwrap();
        let holder = |t: &str| {
            let (p, i) = list.find_task(t).unwrap();
            list.phases[p].tasks[i].agent.clone()
        };
        assert_eq!(holder("Mine"), None);
        assert_eq!(holder("Theirs").as_deref(), Some("a1f"));
        // The record is gone: the same id again is the main agent's, which
        // may not take the subagent's task.
        let mut caller = crate::store::Caller::default();
        caller.act_for_call(Some(super::CallFrom::ToolUse("toolu_1".into())));
        let answer = store
            .todo_answer(
                &session(),
                Call::Value(&json!({"op": "done", "task": "Theirs"})),
                Actor::Agent,
                &mut caller,
                4,
            )
            .unwrap();
        assert!(answer.is_error, "{}", answer.text);
        assert!(
            answer.text.contains("held by agent \"a1f\""),
            "{}",
            answer.text
        );
    }

    /// A goal call takes its record too; a record never used is dropped by
    /// a later one once stale; a bad id is not recorded.
    #[test]
    fn records_stay_bounded() {
        let mut store = Store::open_in_memory().unwrap();
        store
            .write(&session(), |tx| {
                assert!(tx.record_tool_use("toolu_g", &agent("a1"), 0).unwrap());
                assert!(tx.record_tool_use("toolu_lost", &agent("a1"), 0).unwrap());
                assert!(!tx.record_tool_use("", &agent("a1"), 0).unwrap());
                assert!(
                    !tx.record_tool_use(&"x".repeat(257), &agent("a1"), 0)
                        .unwrap()
                );
                Ok(())
            })
            .unwrap();
        assert_eq!(marks(&store), 2);
        let mut caller = crate::store::Caller::default();
        caller.act_for_call(Some(super::CallFrom::ToolUse("toolu_g".into())));
        store
            .write(&session(), |tx| {
                tx.goal_call(
                    GoalCall::Value(&json!({"op": "get"})),
                    Actor::Agent,
                    &mut caller,
                    1,
                )
            })
            .unwrap();
        assert_eq!(marks(&store), 1);
        let later = super::TOOL_USE_TTL_MS;
        let recorded = store.write(&session(), |tx| {
            tx.record_tool_use("toolu_new", &agent("a1"), later)
        });
        assert!(recorded.unwrap());
        assert_eq!(marks(&store), 1, "the stale record was dropped");
    }

    /// A call that names its agent acts as it, for that call only, and
    /// records nothing.
    #[test]
    fn a_call_that_names_its_agent_acts_as_it_once() {
        let mut store = Store::open_in_memory().unwrap();
        call(
            &mut store,
            None,
            json!({"op": "init", "items": ["Mine", "Theirs"]}),
            1,
        );
        let mut caller = crate::store::Caller::default();
        caller.act_for_call(Some(super::CallFrom::Agent(agent("thread-2"))));
        let answer = store
            .todo_answer(
                &session(),
                Call::Value(&json!({"op": "start", "task": "Theirs"})),
                Actor::Agent,
                &mut caller,
                2,
            )
            .unwrap();
        assert!(!answer.is_error, "{}", answer.text);
        assert_eq!(marks(&store), 0);
        // The next call is the main agent's again: its task is its own.
        call(&mut store, None, json!({"op": "done", "task": "Mine"}), 3);
        let (list, _) = store.read(&session(), |tx| tx.todo_list()).unwrap();
        let states: Vec<_> = list
            .tasks()
            .map(|(_, t)| (t.content.as_str(), t.status.as_str(), t.agent.as_deref()))
            .collect();
        assert_eq!(
            states,
            [
                ("Mine", "completed", None),
                ("Theirs", "in_progress", Some("thread-2"))
            ]
        );
    }

    /// A named agent's `view` is a call: it keeps the agent's claims from
    /// lapsing, as its other calls do. A view of the session's own agent
    /// or of a person writes nothing.
    #[test]
    fn a_named_agents_view_keeps_its_claims() {
        let mut store = Store::open_in_memory().unwrap();
        call(
            &mut store,
            None,
            json!({"op": "init", "items": ["Mine", "Theirs"]}),
            0,
        );
        let as_w1 = |store: &mut Store, op: serde_json::Value, now: i64| {
            let mut caller = crate::store::Caller::default();
            caller.act_for_call(Some(super::CallFrom::Agent(agent("w1"))));
            store
                .todo_answer(&session(), Call::Value(&op), Actor::Agent, &mut caller, now)
                .unwrap()
        };
        let started = as_w1(&mut store, json!({"op": "start", "task": "Theirs"}), 1_000);
        assert!(!started.is_error, "{}", started.text);
        let lease = 600_000;
        // Just before the lease runs out, w1 views the list.
        let before = crate::store::transactions_begun();
        as_w1(&mut store, json!({"op": "view"}), 1_000 + lease - 1);
        assert_eq!(crate::store::transactions_begun() - before, 1);
        // The main agent's view, and a person's, are reads.
        let (_, version) = store.read(&session(), |tx| tx.todo_list()).unwrap();
        call(&mut store, None, json!({"op": "view"}), 1_000 + lease);
        store
            .todo(
                &session(),
                Call::Value(&json!({"op": "view"})),
                Actor::User,
                &mut crate::store::Caller::default(),
                1_000 + lease,
            )
            .unwrap();
        assert_eq!(
            store.read(&session(), |tx| tx.todo_list()).unwrap().1,
            version
        );
        // After the first lease, the claim still holds: the view renewed it.
        let mut caller = crate::store::Caller::default();
        caller.act_for_call(None);
        let taken = store
            .todo_answer(
                &session(),
                Call::Value(&json!({"op": "start", "task": "Theirs"})),
                Actor::Agent,
                &mut caller,
                1_000 + lease + 1,
            )
            .unwrap();
        assert!(taken.is_error, "{}", taken.text);
        assert!(
            taken.text.contains("held by agent \"w1\""),
            "{}",
            taken.text
        );
        // A lease after the view, it has lapsed: the main agent takes it.
        let taken = store
            .todo_answer(
                &session(),
                Call::Value(&json!({"op": "start", "task": "Theirs"})),
                Actor::Agent,
                &mut crate::store::Caller::default(),
                1_000 + 2 * lease,
            )
            .unwrap();
        assert!(!taken.is_error, "{}", taken.text);
    }
}
