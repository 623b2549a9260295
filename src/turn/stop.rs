//! What happens as the agent stops: the goal's continuation, else the
//! open-todos reminder, decided once here for every host (DESIGN.md §3.4).

use super::continuation::{Continuation, continuation};
use crate::error::Result;
use crate::prompt::{HiddenMessage, Injector};
use crate::store::{Caller, SessionTx};

/// What the agent gets when it stops.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StopOutcome {
    /// Keep working on the active goal: the continuation, or the
    /// budget-limit wrap-up (delivered once).
    Continue(HiddenMessage),
    /// The runaway guard just paused goal `goal`; `text` says why, for the
    /// user (the model is not asked for more work).
    Paused {
        /// The goal that was paused.
        goal: i64,
        /// Why, and how to resume it.
        text: String,
    },
    /// No live goal, and open todos: the reminder to finish them (at most
    /// `todo.reminders.max` times per list version).
    Remind(HiddenMessage),
    /// The agent may stop.
    Nothing,
}

impl StopOutcome {
    /// The message that asks the model for more work, if any.
    pub fn message(&self) -> Option<&HiddenMessage> {
        match self {
            StopOutcome::Continue(message) | StopOutcome::Remind(message) => Some(message),
            StopOutcome::Paused { .. } | StopOutcome::Nothing => None,
        }
    }
}

/// What happens as the agent stops: the goal's continuation (decided and
/// recorded by [`continuation`]); else, when no goal is live (a paused or
/// budget-limited goal lets the agent stop), the open-todos reminder if
/// reminders are on and fewer than `todo.reminders.max` were sent for this
/// list version (counted under the session mark `reminder_mark`; a change
/// to the list resets it).
pub fn on_stop(
    tx: &SessionTx<'_>,
    caller: &Caller,
    injector: &Injector,
    active_tools: &[String],
    reminder_mark: &str,
    now_ms: i64,
) -> Result<StopOutcome> {
    match continuation(tx, caller, injector, active_tools, now_ms)? {
        Continuation::Message(message) => return Ok(StopOutcome::Continue(message)),
        Continuation::Paused(text) => {
            let goal = tx.goal()?.map_or(0, |g| g.id);
            return Ok(StopOutcome::Paused { goal, text });
        }
        Continuation::Closed(_) => {}
    }
    if tx.goal()?.is_some_and(|g| g.status.is_live()) {
        return Ok(StopOutcome::Nothing);
    }
    let reminders = &injector.settings().todo.reminders;
    if !reminders.enabled {
        return Ok(StopOutcome::Nothing);
    }
    let (list, version) = tx.todo_list()?;
    let Some(message) = injector.incomplete_reminder(&list, now_ms)? else {
        return Ok(StopOutcome::Nothing);
    };
    let sent = reminders_sent(tx.mark(reminder_mark)?.as_deref(), version);
    if sent >= reminders.max {
        return Ok(StopOutcome::Nothing);
    }
    tx.set_mark(reminder_mark, &format!("{version}:{}", sent + 1), now_ms)?;
    Ok(StopOutcome::Remind(message))
}

/// How many reminders the mark (`"<list version>:<count>"`) records for
/// list version `version`: none when it records another version.
fn reminders_sent(mark: Option<&str>, version: i64) -> u64 {
    match mark.and_then(|m| m.split_once(':')) {
        Some((v, n)) if v == version.to_string() => n.parse().unwrap_or(0),
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::reminders_sent;

    #[test]
    fn the_reminder_count_is_per_list_version() {
        assert_eq!(reminders_sent(None, 3), 0);
        assert_eq!(reminders_sent(Some("3:2"), 3), 2);
        assert_eq!(reminders_sent(Some("2:2"), 3), 0);
        assert_eq!(reminders_sent(Some("3:x"), 3), 0);
        assert_eq!(reminders_sent(Some("garbage"), 3), 0);
    }
}
