//! A subagent's calls of goalkeeper's tools (DESIGN.md §9). Claude Code
//! runs one MCP server for the main agent and every subagent, and a
//! `tools/call` names no agent; the `PreToolUse` hook of a subagent's call
//! carries `agent_id`, and its `tool_use_id` is the id the `tools/call`
//! carries in `_meta` (`claudecode/toolUseId`). So the hook records the id
//! as the agent's, and the server's call acts as that agent
//! ([`crate::store::Caller::act_for_call`]). The main agent's calls carry no
//! `agent_id` and are recorded nowhere: they are the session's own.

use serde_json::Value;

use super::super::hook_event::Hook;
use crate::AgentName;
use crate::error::Result;

/// The `_meta` key of Claude Code's `tools/call` naming the call's
/// tool-use id.
#[cfg_attr(not(feature = "mcp"), expect(dead_code))]
pub const TOOL_USE_META: &str = "claudecode/toolUseId";

/// `SubagentStop`: the subagent has ended, so the tasks it still holds
/// (one it left unfinished, or the next one its last `done` gave it) go
/// back to pending for the main agent and the other subagents, in the
/// hook's transaction and in the log, instead of waiting out the lease;
/// the reminder of its own rejected call, if one waits, is dropped.
pub(super) fn stopped(hook: &mut Hook<'_, '_>) -> Result<()> {
    let agent = hook.event.json.get("agent_id").and_then(Value::as_str);
    if let Some(Ok(Some(agent))) = agent.map(AgentName::parse) {
        hook.tx.release_agent(&agent, hook.now_ms)?;
        // Its reminder has nobody left to reach (it had no prompt hook).
        hook.tx.take_agent_todo_error(&agent)?;
    }
    Ok(())
}

/// A subagent's call of goalkeeper's tool, as its `PreToolUse` names it.
pub(super) struct SubagentCall<'e> {
    tool_use_id: &'e str,
    agent_id: &'e str,
}

impl SubagentCall<'_> {
    /// The call `event` (a `PreToolUse` of goalkeeper's `todo` or `goal`
    /// tool) is, when it is a subagent's. A `view` too: it reads the same
    /// list whoever asks, but it keeps the subagent's claims from lapsing.
    pub(super) fn of(event: &Value) -> Option<SubagentCall<'_>> {
        let agent_id = event
            .get("agent_id")
            .and_then(Value::as_str)
            .filter(|a| !a.is_empty())?;
        let tool_use_id = event.get("tool_use_id").and_then(Value::as_str)?;
        Some(SubagentCall {
            tool_use_id,
            agent_id,
        })
    }

    /// Records the call as its agent's, in the hook's transaction. Injects
    /// nothing; an agent id that is no agent name records nothing and says
    /// so on stderr.
    pub(super) fn record(&self, hook: &mut Hook<'_, '_>) -> Result<Option<Value>> {
        let agent = match AgentName::parse(self.agent_id) {
            Ok(Some(agent)) => agent,
            Ok(None) => return Ok(None),
            Err(e) => {
                hook.notes
                    .push(format!("{e}; the subagent's call acts as the main agent"));
                return Ok(None);
            }
        };
        if !hook
            .tx
            .record_tool_use(self.tool_use_id, &agent, hook.now_ms)?
        {
            hook.notes.push(format!(
                "tool_use_id {} is not a tool call's id; the subagent's call acts as the main agent",
                crate::sanitize::quoted_excerpt(self.tool_use_id)
            ));
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::goal::{GoalOp, Usage};
    use crate::integrations::hook_event::HookReply;
    use crate::integrations::hook_fixture::{Fixture, NOW, event};
    use crate::prompt::Injector;
    use crate::store::{CallFrom, GoalCall};
    use crate::todo::{Actor, Call};
    use crate::{SessionId, Store};

    fn handle(
        store: &mut Store,
        caller: &crate::store::Caller,
        injector: &Injector,
        input: &str,
        now_ms: i64,
    ) -> HookReply {
        let run = super::super::Run {
            now_ms,
            read_time: std::time::Duration::ZERO,
            block_cap: None,
            wiring: crate::integrations::host_session::Wiring::Config,
            read: |_| super::super::Reading::Unknown("no command line is read here".into()),
        };
        super::super::handle_within(store, caller, injector, input, &run)
    }

    fn pre_tool_use(op: Value, agent: Option<&str>, id: &str) -> String {
        let mut extra = json!({"tool_name": "mcp__goalkeeper__todo", "tool_input": op,
            "tool_use_id": id});
        if let Some(agent) = agent {
            extra["agent_id"] = json!(agent);
            extra["agent_type"] = json!("general-purpose");
        }
        event("PreToolUse", "cc-1", extra)
    }

    /// What the MCP server does with a `tools/call` of tool-use id `id`.
    fn mcp_call(store: &mut Store, session: &SessionId, id: &str, op: Value) -> String {
        let mut caller = crate::store::Caller::default();
        caller.act_for_call(Some(CallFrom::ToolUse(id.to_owned())));
        let answer = store
            .todo_answer(
                session,
                Call::Value(&op),
                Actor::Agent,
                &mut caller,
                NOW + 1,
            )
            .unwrap();
        assert!(!answer.is_error, "{}", answer.text);
        answer.text
    }

    fn holder(store: &Store, session: &SessionId, task: &str) -> Option<String> {
        let (list, _) = store.read(session, |tx| tx.todo_list()).unwrap();
        let (p, t) = list.find_task(task).unwrap();
        list.phases[p].tasks[t].agent.clone()
    }

    /// The hook records a subagent's call, silently, and the server's call
    /// with its id acts as the subagent; the main agent's call does not.
    #[test]
    fn a_subagents_call_acts_as_the_subagent() {
        let mut fx = Fixture::new(handle, "cc-1", None);
        let append = json!({"op": "append", "phase": "Tasks", "items": ["B", "C"]});
        let start_b = json!({"op": "start", "task": "B"});
        let reply = fx.send(&pre_tool_use(start_b.clone(), Some("a1f"), "toolu_1"));
        assert_eq!(reply, HookReply::default());
        mcp_call(&mut fx.store, &fx.session, "toolu_0", append.clone());
        assert_eq!(holder(&fx.store, &fx.session, "A"), None);
        mcp_call(&mut fx.store, &fx.session, "toolu_1", start_b);
        assert_eq!(holder(&fx.store, &fx.session, "B").as_deref(), Some("a1f"));
        assert_eq!(holder(&fx.store, &fx.session, "A"), None);
        // The main agent's own call has no agent_id: nothing recorded.
        let start_c = json!({"op": "start", "task": "C"});
        let reply = fx.send(&pre_tool_use(start_c.clone(), None, "toolu_2"));
        assert_eq!(reply, HookReply::default());
        mcp_call(&mut fx.store, &fx.session, "toolu_2", start_c);
        assert_eq!(holder(&fx.store, &fx.session, "C"), None);
        assert_eq!(holder(&fx.store, &fx.session, "B").as_deref(), Some("a1f"));
    }

    /// A subagent that stops leaves nothing claimed: its tasks in progress
    /// go back to pending, logged as goalkeeper's release, and the main
    /// agent's task stays its own. A stop of a subagent that holds nothing
    /// writes nothing.
    #[test]
    fn a_stopped_subagents_tasks_are_released() {
        let mut fx = Fixture::new(handle, "cc-1", None);
        let append = json!({"op": "append", "phase": "Tasks", "items": ["B", "C"]});
        mcp_call(&mut fx.store, &fx.session, "toolu_0", append);
        let start_b = json!({"op": "start", "task": "B"});
        fx.send(&pre_tool_use(start_b.clone(), Some("a1f"), "toolu_1"));
        mcp_call(&mut fx.store, &fx.session, "toolu_1", start_b);
        assert_eq!(holder(&fx.store, &fx.session, "B").as_deref(), Some("a1f"));
        // Its refused call leaves its own reminder, which its stop drops.
        let nope = json!({"op": "done", "task": "Nope"});
        fx.send(&pre_tool_use(nope.clone(), Some("a1f"), "toolu_2"));
        let mut caller = crate::store::Caller::default();
        caller.act_for_call(Some(CallFrom::ToolUse("toolu_2".into())));
        let refused = fx.store.todo_answer(
            &fx.session,
            Call::Value(&nope),
            Actor::Agent,
            &mut caller,
            NOW,
        );
        assert!(refused.unwrap().is_error);
        let mark = "todo-error.agent:a1f";
        assert!(
            fx.store
                .read(&fx.session, |tx| tx.mark(mark))
                .unwrap()
                .is_some()
        );
        let stop = event(
            "SubagentStop",
            "cc-1",
            json!({"stop_hook_active": false, "agent_id": "a1f", "agent_type": "general-purpose"}),
        );
        assert_eq!(fx.send(&stop).stdout, None);
        let (list, _) = fx.store.read(&fx.session, |tx| tx.todo_list()).unwrap();
        let states: Vec<_> = list
            .tasks()
            .map(|(_, t)| (t.content.as_str(), t.status.as_str(), t.agent.is_some()))
            .collect();
        assert_eq!(
            states,
            [
                ("A", "in_progress", false),
                ("B", "pending", false),
                ("C", "pending", false)
            ]
        );
        let log = fx.store.read(&fx.session, |tx| tx.event_log(1)).unwrap();
        assert_eq!(
            (log[0].actor.as_str(), log[0].op.as_deref()),
            ("goalkeeper", Some("release"))
        );
        assert_eq!(
            fx.store.read(&fx.session, |tx| tx.mark(mark)).unwrap(),
            None
        );
        assert_eq!(
            fx.store
                .read(&fx.session, |tx| tx.pending_todo_error())
                .unwrap(),
            None
        );
        let before = fx.state();
        assert_eq!(fx.send(&stop).stdout, None);
        assert_eq!(before, fx.state());
    }

    /// An agent id that is no agent name, or a tool-use id too long to be
    /// one, records nothing: no output, a note, the session unchanged.
    #[test]
    fn a_bad_id_records_nothing_and_says_so() {
        let mut fx = Fixture::new(handle, "cc-1", None);
        let before = fx.state();
        let op = json!({"op": "done"});
        let reply = fx.send(&pre_tool_use(op.clone(), Some("a b"), "toolu_1"));
        assert_eq!(reply.stdout, None);
        assert!(
            reply.notes[0].starts_with("invalid agent name \"a b\""),
            "{:?}",
            reply.notes
        );
        let long = "t".repeat(300);
        let reply = fx.send(&pre_tool_use(op, Some("a1f"), &long));
        assert_eq!(reply.stdout, None);
        assert!(
            reply.notes[0].contains("is not a tool call's id"),
            "{:?}",
            reply.notes
        );
        assert_eq!(before, fx.state());
    }

    /// `SubagentStop` never continues a subagent nor hands it the wrap-up:
    /// with an active goal, and with the budget just spent, it prints
    /// nothing, and the wrap-up stays for the main agent's `Stop`.
    #[test]
    fn a_subagent_gets_no_continuation_and_no_wrap_up() {
        let mut fx = Fixture::new(handle, "cc-1", Some(100));
        let stop = |name: &str| {
            let extra = json!({"stop_hook_active": false, "agent_id": "a1f",
                "agent_type": "general-purpose"});
            event(name, "cc-1", extra)
        };
        assert_eq!(fx.send(&stop("SubagentStop")).stdout, None);
        let usage = GoalOp::Usage(Usage {
            input: 500,
            output: 0,
            cache_write: 0,
            cache_read: 0,
        });
        fx.store
            .write(&fx.session, |tx| {
                tx.goal_call(
                    GoalCall::Op(&usage),
                    Actor::User,
                    &mut crate::store::Caller::default(),
                    NOW,
                )
            })
            .unwrap();
        assert_eq!(fx.send(&stop("SubagentStop")).stdout, None);
        let main = fx.send(&event("Stop", "cc-1", json!({"stop_hook_active": false})));
        let reason = main.stdout.expect("the main agent gets the wrap-up")["reason"]
            .as_str()
            .unwrap()
            .to_owned();
        assert!(reason.contains("budget"), "{reason}");
    }

    #[test]
    fn only_a_subagents_calls_are_recorded() {
        let call = |event: Value| {
            SubagentCall::of(&event).map(|c| (c.tool_use_id.to_owned(), c.agent_id.to_owned()))
        };
        let pair = |id: &str, agent: &str| Some((id.to_owned(), agent.to_owned()));
        let todo = json!({"tool_name": "mcp__goalkeeper__todo", "tool_input": {"op": "start", "task": "a"},
            "tool_use_id": "toolu_1", "agent_id": "a1f", "agent_type": "general-purpose"});
        assert_eq!(call(todo.clone()), pair("toolu_1", "a1f"));
        let goal = json!({"tool_name": "mcp__goalkeeper__goal", "tool_input": {"op": "get"},
            "tool_use_id": "toolu_2", "agent_id": "a1f"});
        assert_eq!(call(goal), pair("toolu_2", "a1f"));
        let mut main = todo.clone();
        main.as_object_mut().unwrap().remove("agent_id");
        assert_eq!(call(main), None);
        let mut view = todo.clone();
        view["tool_input"] = json!({"op": "view"});
        assert_eq!(call(view), pair("toolu_1", "a1f"));
        let mut no_id = todo;
        no_id.as_object_mut().unwrap().remove("tool_use_id");
        assert_eq!(call(no_id), None);
    }
}
