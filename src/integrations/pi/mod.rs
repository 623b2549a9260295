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
//! - `SessionEnd` (pi's `session_shutdown`, but for an extension reload):
//!   marks the session ended, so a goal set from a terminal waits for the
//!   next session.
//!
//! Like every hook, it never breaks the agent: problems print nothing on
//! stdout and explain themselves on stderr.

use serde_json::{Value, json};

use super::adapter::{Adapter, HookEnv, InstallRequest, Installed};
use super::hook_event::{self, Hook, HookReply, SESSION_END};
use super::host_session::Host;
use crate::error::Result;
use crate::goal::{GoalOp, Usage};
use crate::prompt::{HiddenMessage, Injector};
use crate::store::{Caller, GoalCall, Store};
use crate::todo::Actor;

mod install;

pub use install::install_pi;
pub(crate) use install::package_extension;

/// pi's adapter.
pub struct Pi;

impl Adapter for Pi {
    fn handle(
        &self,
        store: &mut Store,
        injector: &Injector,
        input: &str,
        env: &HookEnv<'_>,
    ) -> HookReply {
        handle(store, env.caller, injector, input, env.now_ms)
    }

    fn install_flags(&self) -> &'static [&'static str] {
        &["--project"]
    }

    fn install(&self, request: &InstallRequest<'_>) -> Result<Installed> {
        let project = request.project()?;
        Ok(install_pi(
            &project,
            &request.command.0,
            request.templates,
            request.now_ms,
        )?
        .into())
    }
}

/// Handles one event from the extension. Never fails: every problem
/// becomes a note and an empty reply.
pub fn handle(
    store: &mut Store,
    caller: &Caller,
    injector: &Injector,
    input: &str,
    now_ms: i64,
) -> HookReply {
    hook_event::handle(Host::Pi, store, caller, injector, input, now_ms, |hook| {
        match hook.event.name.as_str() {
            "SessionStart" => Ok(None),
            "Context" => Ok(hook
                .goal_mode_message()?
                .map(|m| json!({"context": hidden(&m)}))),
            "MessageEnd" => message_end(hook),
            SESSION_END => {
                hook.end_session()?;
                Ok(None)
            }
            // A pause needs no reply: the turn simply ends.
            "TurnEnd" => Ok(hook
                .stop()?
                .message()
                .map(|m| json!({"followUp": hidden(m)}))),
            _ => hook.unhandled(),
        }
    })
}

fn message_end(hook: &mut Hook<'_, '_>) -> Result<Option<Value>> {
    let Some(usage) = hook.event.json.get("usage").and_then(parse_usage) else {
        hook.notes
            .push("MessageEnd event has no usage; nothing counted".into());
        return Ok(None);
    };
    let op = GoalOp::Usage(usage);
    hook.tx.goal_call(
        GoalCall::Op(&op),
        Actor::Agent,
        &mut hook.caller,
        hook.now_ms,
    )?;
    Ok(None)
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
