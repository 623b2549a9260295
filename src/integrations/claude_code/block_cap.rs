//! Claude Code's cap on Stop-hook blocks in a row (DESIGN.md §9).
//!
//! When a stop would be blocked more than `CLAUDE_CODE_STOP_HOOK_BLOCK_CAP`
//! times in a row (default 8), Claude Code does not act on the block (nor
//! on a Stop hook's additional context, which continues a turn the same
//! way): it ends the turn with a warning about the hook and keeps the text
//! in the conversation, where the model reads it only with the user's
//! next message. A tool call of the model (other than Claude Code's own
//! goal tools) starts the count again, and so does the user's next
//! prompt. A goal that moves through goalkeeper's tools never meets the
//! cap; continuations the model answers with text alone do.
//!
//! So the adapter keeps Claude Code's count in a session mark: the stops
//! in a row since the prompt's first stop (`stop_hook_active` false) or
//! since the last tool call read in the session's transcript. Each of them
//! was blocked (by goalkeeper or another Stop hook), or the turn would
//! have ended. At the cap the stop is not decided: no continuation, wrap-up
//! or reminder is sent or recorded, the turn ends as any stop does, and
//! the user reads that the goal is still active.

use serde_json::{Value, json};

use super::Hook;
use crate::error::Result;
use crate::goal::{BudgetNotice, GoalStatus};

/// Claude Code's cap when `CLAUDE_CODE_STOP_HOOK_BLOCK_CAP` is not set.
pub const DEFAULT_CAP: u64 = 8;

/// The variable Claude Code reads its cap from (hooks inherit it).
pub const CAP_VAR: &str = "CLAUDE_CODE_STOP_HOOK_BLOCK_CAP";

/// The session mark counting the stops in a row Claude Code counts.
const STOPS_MARK: &str = "claude-code.stops-in-a-row";

/// The cap from the value of [`CAP_VAR`], as Claude Code reads it:
/// [`DEFAULT_CAP`] when unset or not an integer, no cap (`None`) when zero
/// or negative.
pub fn cap_from(value: Option<&str>) -> Option<u64> {
    match value.map(str::trim).and_then(|v| v.parse::<i64>().ok()) {
        None => Some(DEFAULT_CAP),
        Some(n) if n <= 0 => None,
        Some(n) => Some(n.unsigned_abs()),
    }
}

/// The model called a tool: Claude Code counts from zero again.
pub(super) fn tool_called(hook: &Hook<'_, '_>) -> Result<()> {
    if hook.tx.mark(STOPS_MARK)?.is_some_and(|m| m != "0") {
        hook.tx.set_mark(STOPS_MARK, "0", hook.now_ms)?;
    }
    Ok(())
}

/// Counts this stop; returns the blocks in a row before it (none at a
/// prompt's first stop).
pub(super) fn count_stop(hook: &Hook<'_, '_>) -> Result<u64> {
    let before: u64 = if hook.event.json.get("stop_hook_active") == Some(&Value::Bool(true)) {
        hook.tx
            .mark(STOPS_MARK)?
            .and_then(|m| m.parse().ok())
            .unwrap_or(0)
    } else {
        0
    };
    let after = before.saturating_add(1).to_string();
    hook.tx.set_mark(STOPS_MARK, &after, hook.now_ms)?;
    Ok(before)
}

/// The stop's reply at the cap: the turn ends; the user reads why and
/// how the goal goes on (the model reads nothing). A pending budget
/// wrap-up stays pending, for the next stop.
pub(super) fn at_cap(hook: &Hook<'_, '_>, cap: u64) -> Result<Option<Value>> {
    let Some(goal) = hook.tx.goal()? else {
        return Ok(None);
    };
    let next = match goal.status {
        GoalStatus::Active => "is still active: send a message to go on",
        GoalStatus::BudgetLimited if goal.budget_notice == BudgetNotice::Pending => {
            "has used up its budget: its wrap-up comes after your next message"
        }
        _ => return Ok(None),
    };
    let text = format!(
        "goalkeeper let this turn end: Claude Code ends a turn after {cap} Stop-hook continuations in a row without a tool call ({CAP_VAR}). Goal #{} {next}.",
        goal.id
    );
    Ok(Some(json!({"systemMessage": text})))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cap_reads_as_claude_code_reads_it() {
        assert_eq!(cap_from(None), Some(8));
        assert_eq!(cap_from(Some("12")), Some(12));
        assert_eq!(cap_from(Some(" 3 ")), Some(3));
        assert_eq!(cap_from(Some("0")), None);
        assert_eq!(cap_from(Some("-1")), None);
        assert_eq!(cap_from(Some("lots")), Some(8));
        assert_eq!(cap_from(Some("")), Some(8));
    }
}
