//! What a turn starts with as the user's prompt arrives: the one-time
//! reminders, decided once here for every host (DESIGN.md §3.4).

use serde_json::json;

use super::memory::memory;
use crate::error::Result;
use crate::prompt::Injector;
use crate::settings::Eager;
use crate::store::SessionTx;

/// What a prompt's turn starts with: the texts to add for the model, in
/// order, and notes for the host's log.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PromptAdditions {
    /// The memory file (once per session), the eager-todo reminder (once
    /// per session, mark given to [`on_prompt`]) and a pending todo-error
    /// reminder (once per rejected call).
    pub parts: Vec<String>,
    /// Why something could not be added (an unusable memory file).
    pub notes: Vec<String>,
}

/// The one-time reminders due as a user's prompt starts a turn (see
/// [`PromptAdditions`]), each marked delivered on `tx`; `eager_mark` is
/// the session mark this host records the eager reminder under.
pub fn on_prompt(
    tx: &SessionTx<'_>,
    injector: &Injector,
    eager_mark: &str,
    now_ms: i64,
) -> Result<PromptAdditions> {
    let mut added = PromptAdditions::default();
    let (memory, note) = memory(tx, injector, now_ms)?;
    added.notes.extend(note);
    added.parts.extend(memory.map(|m| m.content));
    let eager = injector.settings().todo.eager;
    if eager != Eager::Default && tx.mark(eager_mark)?.is_none() {
        let name = if eager == Eager::Always {
            "todo-eager-always"
        } else {
            "todo-eager-preferred"
        };
        added
            .parts
            .push(injector.templates().render(name, &json!({}))?);
        tx.set_mark(eager_mark, "sent", now_ms)?;
    }
    if let Some(error) = tx.take_todo_error()? {
        let (list, _) = tx.todo_list()?;
        let message = injector.todo_error_reminder(&error, &list, now_ms)?;
        added.parts.push(message.content);
    }
    Ok(added)
}

/// The reminder due as a prompt of the named `agent` (a host's subagent
/// with prompts of its own) starts its turn: its pending todo error, once.
/// None of the session's own agent's reminders, which are not its.
pub fn on_agent_prompt(
    tx: &SessionTx<'_>,
    injector: &Injector,
    agent: &crate::AgentName,
    now_ms: i64,
) -> Result<Option<String>> {
    let Some(error) = tx.take_agent_todo_error(agent)? else {
        return Ok(None);
    };
    let (list, _) = tx.todo_list()?;
    Ok(Some(
        injector.todo_error_reminder(&error, &list, now_ms)?.content,
    ))
}
