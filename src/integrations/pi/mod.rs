//! pi (DESIGN.md §9): pi has neither an MCP client nor shell hooks, so
//! goalkeeper ships a TypeScript extension ([`EXTENSION`], written by
//! `install pi` into `.pi/extensions/goalkeeper.ts`) that registers the
//! `todo` and `goal` tools (each call runs `goalkeeper --json <tool> apply
//! -`; a rejected call throws, so the model reads why) and turns pi's
//! events into `goalkeeper hook pi` runs, handled here. The session is pi's
//! session id; every event records it as the pi session last seen in its
//! `cwd`, for `goalkeeper --session-from pi …`.
//!
//! Events (JSON on stdin, the reply as JSON on stdout):
//!
//! - `SessionStart`: records the session.
//! - `Context` (pi's `context` event, before every model call): replies
//!   `{"context": {"customType", "content"}}` with the goal-mode context
//!   while the goal is active; the extension appends it as a hidden
//!   `custom` message, not stored in the session.
//! - `MessageEnd` (an assistant message ended) with `usage {input, output,
//!   cache_read, cache_write}` (pi's `input` excludes cache reads): counts
//!   it, once per message.
//! - `TurnEnd` (a turn ended without a tool call): replies `{"followUp":
//!   {"customType", "content"}}` with the continuation, the budget-limit
//!   wrap-up (once), or the open-todos reminder when no goal is live; the
//!   extension sends it as a hidden follow-up that triggers the next turn.
//!
//! Like every hook, it never breaks the agent: problems print nothing on
//! stdout and explain themselves on stderr.

use serde_json::{Value, json};

use std::path::Path;

use super::claude_code::HookReply;
use super::hook_event::HookEvent;
use super::host_session::{self, Host};
use crate::error::Result;
use crate::goal::{GoalOp, Usage};
use crate::prompt::{HiddenMessage, Injector};
use crate::store::{GoalCall, SessionTx, Store};
use crate::todo::Actor;

mod install;

pub use install::{EXTENSION_PATH, install_pi};

/// The host's name in `install`, `hook` and `--session-from`.
pub const HOST: &str = "pi";

/// The extension's source as shipped; `install pi` fills in the command
/// and the tools.
pub const EXTENSION: &str = include_str!("goalkeeper.ts");

const REMINDER_MARK: &str = "pi.reminders";

/// The pointer key under which the hooks record the pi session last seen
/// in a project directory (see [`host_session`]).
pub fn session_pointer(cwd: &str) -> String {
    host_session::last_session_key(Host::Pi, Path::new(cwd))
}

/// Handles one event from the extension. Never fails: every problem
/// becomes a note and an empty reply.
pub fn handle(store: &mut Store, injector: &Injector, input: &str, now_ms: i64) -> HookReply {
    // The whole event is one transaction: it commits only when every step
    // succeeded, and a failure anywhere leaves nothing half-applied.
    HookEvent::handle(store, input, |event, tx, notes| {
        dispatch(tx, injector, &event.name, &event.json, now_ms, notes)
    })
}

fn dispatch(
    tx: &SessionTx<'_>,
    injector: &Injector,
    name: &str,
    event: &Value,
    now_ms: i64,
    notes: &mut Vec<String>,
) -> Result<Option<Value>> {
    if let Some(cwd) = event.get("cwd").and_then(Value::as_str) {
        // Also adopts a goal queued with `--session-from pi`.
        let recorded = host_session::record_in(tx, Host::Pi, Path::new(cwd), now_ms)?;
        if let Some(adopted) = recorded.adopted {
            notes.push(format!("adopted the queued goal: {}", adopted.text()));
        }
    }
    // The extension registers both tools.
    let tools = super::TOOL_NAMES.map(str::to_owned).to_vec();
    match name {
        "SessionStart" => Ok(None),
        "Context" => Ok(tx
            .goal_mode_context(injector, &tools, now_ms)?
            .ok()
            .map(|m| json!({"context": hidden(&m)}))),
        "MessageEnd" => {
            let Some(usage) = event.get("usage").and_then(parse_usage) else {
                notes.push("MessageEnd event has no usage; nothing counted".into());
                return Ok(None);
            };
            tx.goal_call(GoalCall::Op(&GoalOp::Usage(usage)), Actor::Agent, now_ms)?;
            Ok(None)
        }
        "TurnEnd" => turn_end(tx, injector, &tools, now_ms),
        other => {
            notes.push(format!("hook event {other:?} is not handled; ignored"));
            Ok(None)
        }
    }
}

fn turn_end(
    tx: &SessionTx<'_>,
    injector: &Injector,
    tools: &[String],
    now_ms: i64,
) -> Result<Option<Value>> {
    // A pause needs no reply: the turn simply ends.
    let outcome = tx.on_stop(injector, tools, REMINDER_MARK, now_ms)?;
    Ok(outcome.message().map(|m| json!({"followUp": hidden(m)})))
}

fn hidden(message: &HiddenMessage) -> Value {
    json!({"customType": message.custom_type.as_str(), "content": message.content})
}

/// pi's usage of one assistant message: `input` without the cache reads.
fn parse_usage(usage: &Value) -> Option<Usage> {
    let field = |name: &str| usage.get(name).and_then(Value::as_u64);
    Some(Usage {
        input: field("input")?,
        output: field("output")?,
        cache_write: field("cache_write").unwrap_or(0),
        cache_read: field("cache_read").unwrap_or(0),
    })
}

#[cfg(test)]
mod tests;
