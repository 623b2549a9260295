//! Codex subagents (DESIGN.md §9). A subagent (the model's `spawn_agent`)
//! is a thread of its own in the parent's session: its hook events carry
//! the parent's `session_id` and the thread's id as `agent_id`, and its
//! `tools/call`s reach an MCP server started for it, whose `_meta` names
//! the calling thread (`threadId`) and, in the turn's metadata, where the
//! thread came from (`thread_source` `subagent`). So a subagent's call
//! acts as the agent its thread id names, and the main thread's calls are
//! the session's own agent's.
//!
//! A subagent's own events read its rollout file for usage and inject
//! nothing: the goal-mode context, the reminders and the continuation are
//! the main agent's.

use serde_json::{Map, Value};

use super::super::hook_event::{Hook, additional_context};
use super::super::usage_log::count_log_usage;
use super::{ROLLOUT, SUBAGENT_ROLLOUT_MARK};
use crate::error::Result;
use crate::{AgentName, SessionId};

/// The `_meta` key of Codex's `tools/call` naming the calling thread.
const THREAD_META: &str = "threadId";

/// The `_meta` key of Codex's `tools/call` naming the session: the thread
/// the user started, whose id its hooks' events carry as `session_id`
/// (a subagent's calls name its parent's).
const SESSION_META: &str = "sessionId";

/// The `_meta` key of the turn's metadata, an object with
/// `thread_source`.
const TURN_META: &str = "x-codex-turn-metadata";

/// The agent a Codex `tools/call` is from, when a subagent's thread makes
/// it; `Err` (why) when the thread id cannot name an agent.
#[cfg_attr(not(feature = "mcp"), expect(dead_code))]
pub fn calling_subagent(meta: &Map<String, Value>) -> Option<Result<AgentName, String>> {
    let source = meta
        .get(TURN_META)
        .and_then(|turn| turn.get("thread_source"))
        .and_then(Value::as_str);
    if source != Some("subagent") {
        return None;
    }
    let Some(thread) = meta.get(THREAD_META).and_then(Value::as_str) else {
        return Some(Err(format!(
            "a subagent's call names no {THREAD_META}; it acts as the main agent"
        )));
    };
    Some(match AgentName::parse(thread) {
        Ok(Some(agent)) => Ok(agent),
        Ok(None) => Err(format!(
            "a subagent's thread is named {thread:?}, the main agent's name; it acts as the main agent"
        )),
        Err(e) => Err(format!("{e}; the subagent's call acts as the main agent")),
    })
}

/// The session a Codex `tools/call` belongs to, as its `_meta` names it:
/// the MCP server acts on it rather than on the session last seen in its
/// working directory, which is the plugin's own folder when Codex runs
/// goalkeeper as a plugin, and which two sessions may share. `None`
/// when the call names none that is a session id.
#[cfg_attr(not(feature = "mcp"), expect(dead_code))]
pub fn calling_session(meta: &Map<String, Value>) -> Option<SessionId> {
    let id = meta.get(SESSION_META).and_then(Value::as_str)?;
    SessionId::parse(id).ok()
}

/// The subagent an event is from, as Codex names it (`agent_id`).
pub(super) fn of_event(event: &Value) -> Option<&str> {
    event
        .get("agent_id")
        .and_then(Value::as_str)
        .filter(|a| !a.is_empty())
}

/// A subagent's event, `id` its `agent_id`: its rollout file's new responses count towards the
/// goal, from a cursor of its own (where the main agent's events find the
/// file again); a `Stop` (Codex 0.171 sends none for a subagent) also
/// frees the tasks it holds. Nothing of the main agent's is injected (no
/// context, no reminder), and its marks stay as they are; a message to the
/// subagent (`UserPromptSubmit`) gets the reminder of the subagent's own
/// rejected todo call. An `agent_id` that is no agent name changes
/// nothing and says so.
pub(super) fn event(hook: &mut Hook<'_, '_>, id: &str) -> Result<Option<Value>> {
    let agent = match AgentName::parse(id) {
        Ok(Some(agent)) => agent,
        Ok(None) => {
            hook.notes.push(format!(
                "agent_id {id:?} is the main agent's name; the subagent's event is ignored"
            ));
            return Ok(None);
        }
        Err(e) => {
            hook.notes
                .push(format!("{e}; the subagent's event is ignored"));
            return Ok(None);
        }
    };
    match hook.event.str_field("transcript_path").map(str::to_owned) {
        Some(path) => {
            let mark = format!("{SUBAGENT_ROLLOUT_MARK}{agent}");
            count_log_usage(hook.tx, hook.notes, &path, &mark, &ROLLOUT, hook.now_ms)?;
        }
        None => hook
            .notes
            .push("event has no transcript_path; usage not counted".into()),
    }
    match hook.event.name.as_str() {
        "Stop" => {
            hook.tx.release_agent(&agent, hook.now_ms)?;
        }
        // A subagent's own `spawn_agent`, `wait_agent` or `close_agent`.
        "PostToolUse" => after_tool(hook)?,
        // A message to the subagent (its first, or the main agent's
        // `send_input`): its own rejected call's reminder, if one waits.
        "UserPromptSubmit" => {
            let reminder =
                crate::turn::on_agent_prompt(hook.tx, hook.injector, &agent, hook.now_ms)?;
            return Ok(reminder.map(|text| additional_context("UserPromptSubmit", &text)));
        }
        _ => {}
    }
    Ok(None)
}

/// The statuses of a subagent that has ended its work.
const ENDED: [&str; 4] = ["completed", "errored", "shutdown", "not_found"];

/// The mark of a subagent this session's Codex spawned: this, then the
/// agent's id (the thread id `spawn_agent` answered with).
const SPAWNED_MARK: &str = "codex.spawned:";

/// True when the hook's `tool_name` is Codex's own agent tool `tool`, as
/// 0.171 names it to hooks: `spawn_agent` bare, `wait_agent` and
/// `close_agent` in their namespace (`multi_agent_v1wait_agent`). An MCP
/// tool's name (`mcp__server__tool`) is never one of them.
fn is_agent_tool(tool_name: &str, tool: &str) -> bool {
    tool_name == tool || tool_name.strip_prefix("multi_agent_v1") == Some(tool)
}

/// The tool's output as JSON: Codex hands it to hooks as a JSON text (the
/// object itself is read too).
fn response(hook: &Hook<'_, '_>) -> Option<Value> {
    let response = hook.event.json.get("tool_response")?;
    match response {
        Value::String(text) => serde_json::from_str(text).ok(),
        other => Some(other.clone()),
    }
}

/// After a `PostToolUse` of a tool that is not goalkeeper's, from any
/// thread of the session: a `spawn_agent` records the subagent it
/// started; a `wait_agent` or `close_agent` frees the tasks of the
/// subagents it reports ended ([`ended`]).
pub(super) fn after_tool(hook: &mut Hook<'_, '_>) -> Result<()> {
    let tool = hook.event.str_field("tool_name").unwrap_or("");
    if is_agent_tool(tool, "spawn_agent") {
        let spawned = response(hook);
        let id = spawned
            .as_ref()
            .and_then(|r| r.get("agent_id"))
            .and_then(Value::as_str);
        if let Some(Ok(Some(agent))) = id.map(AgentName::parse) {
            hook.tx
                .set_mark(&format!("{SPAWNED_MARK}{agent}"), "spawned", hook.now_ms)?;
        }
        return Ok(());
    }
    ended(hook)
}

/// After a `wait_agent` or `close_agent`: the subagents it reports ended
/// (`wait_agent`'s `status` map, each status a name or an object keyed by
/// it) or closed (`close_agent` answering with the `previous_status` of
/// its target) hold nothing any more, as Codex sends no event when a
/// subagent stops. Their tasks in progress go back to pending, logged as
/// goalkeeper's release (a closed subagent stays recorded: Codex may
/// resume it). Only a subagent this
/// session's Codex spawned counts: the ids are the model's to choose, and
/// one naming any other agent (a CLI agent, another session's subagent)
/// frees nothing.
fn ended(hook: &mut Hook<'_, '_>) -> Result<()> {
    let tool = hook.event.str_field("tool_name").unwrap_or("");
    let closes = is_agent_tool(tool, "close_agent");
    let mut ids: Vec<String> = Vec::new();
    if closes {
        let closed = response(hook).is_some_and(|r| r.get("previous_status").is_some());
        let target = hook.event.json.pointer("/tool_input/target");
        ids.extend(
            target
                .and_then(Value::as_str)
                .filter(|_| closed)
                .map(str::to_owned),
        );
    } else if is_agent_tool(tool, "wait_agent") {
        let response = response(hook);
        let statuses = response.as_ref().and_then(|r| r.get("status"));
        for (id, status) in statuses.and_then(Value::as_object).into_iter().flatten() {
            let name = match status {
                Value::String(name) => Some(name.as_str()),
                Value::Object(one) => one.keys().next().map(String::as_str),
                _ => None,
            };
            if name.is_some_and(|n| ENDED.contains(&n)) {
                ids.push(id.clone());
            }
        }
    }
    for id in ids {
        let Ok(Some(agent)) = AgentName::parse(&id) else {
            continue;
        };
        let mark = format!("{SPAWNED_MARK}{agent}");
        if hook.tx.mark(&mark)?.is_none() {
            hook.notes.push(format!(
                "{tool} reports agent {:?} ended, but this session's Codex did not spawn it; its tasks are left as they are",
                agent.as_str()
            ));
            continue;
        }
        hook.tx.release_agent(&agent, hook.now_ms)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn meta(value: Value) -> Map<String, Value> {
        value.as_object().unwrap().clone()
    }

    /// The `_meta` of a subagent's call as Codex 0.171 sends it, and of the
    /// main thread's.
    #[test]
    fn a_subagents_thread_names_the_agent() {
        let thread = "01a24309-78b4-7341-b2f8-22288d647c08";
        let sub = meta(json!({"callId": "call_5", "threadId": thread,
            "sessionId": "01a24309-771b-7b51-89d4-4e226a4dd211",
            "x-codex-turn-metadata": {"thread_id": thread, "thread_source": "subagent",
                "parent_thread_id": "01a24309-771b-7b51-89d4-4e226a4dd211",
                "subagent_kind": "thread_spawn"}}));
        let agent = calling_subagent(&sub).unwrap().unwrap();
        assert_eq!(agent.as_str(), thread);
        let main = meta(
            json!({"callId": "call_1", "threadId": "t-1", "sessionId": "t-1",
            "x-codex-turn-metadata": {"thread_id": "t-1", "thread_source": "user"}}),
        );
        assert_eq!(calling_subagent(&main), None);
        assert_eq!(calling_subagent(&meta(json!({"progressToken": 1}))), None);
    }

    /// Every call names its session, the main thread's and a subagent's
    /// alike; a call without one, or with one that is no session id,
    /// names none.
    #[test]
    fn a_call_names_its_session() {
        let root = "01a24309-771b-7b51-89d4-4e226a4dd211";
        let sub = meta(json!({"threadId": "01a24309-78b4", "sessionId": root,
            "x-codex-turn-metadata": {"thread_source": "subagent", "parent_thread_id": root}}));
        assert_eq!(calling_session(&sub).unwrap().as_str(), root);
        let main = meta(json!({"threadId": root, "sessionId": root}));
        assert_eq!(calling_session(&main).unwrap().as_str(), root);
        assert_eq!(calling_session(&meta(json!({"threadId": root}))), None);
        assert_eq!(calling_session(&meta(json!({"sessionId": "../x"}))), None);
        assert_eq!(calling_session(&meta(json!({"sessionId": 7}))), None);
    }

    /// A subagent's call whose thread cannot name an agent acts as the main
    /// agent, and says why.
    #[test]
    fn a_bad_thread_id_is_explained() {
        let turn = json!({"thread_source": "subagent"});
        let why = |m: Value| calling_subagent(&meta(m)).unwrap().unwrap_err();
        assert!(
            why(json!({"threadId": "a b", "x-codex-turn-metadata": turn}))
                .starts_with("invalid agent name \"a b\"")
        );
        assert!(why(json!({"threadId": "main", "x-codex-turn-metadata": turn})).contains("main"));
        assert!(why(json!({"x-codex-turn-metadata": turn})).contains("no threadId"));
    }
}
