//! `goalkeeper session list|show|rm`.

use crate::goal::{GoalView, describe};
use crate::integrations::claude_code::Acts;
use crate::time::utc_datetime;
use crate::todo::{SummaryKind, summary};
use crate::{Error, SessionId};
use clap::Subcommand;
use serde_json::json;

use super::context::{Context, Outcome};
use super::print_json;

#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub(crate) enum SessionCommand {
    /// List every session, most recently updated first
    List,
    /// Show one session [default: the current --session]
    Show {
        /// The session id
        id: Option<String>,
    },
    /// Delete a session with its todo list and event log
    Rm {
        /// The session id
        id: String,
    },
}

impl SessionCommand {
    /// Whom the command acts as (`cli/acting.rs`).
    pub(crate) fn acts(&self) -> Acts {
        match self {
            SessionCommand::List | SessionCommand::Show { .. } => Acts::Nobody,
            SessionCommand::Rm { .. } => Acts::Person,
        }
    }
}

pub(crate) fn run(ctx: &Context, command: SessionCommand) -> Result<Outcome, Error> {
    let mut store = ctx.store()?;
    match command {
        SessionCommand::List => {
            let sessions = store.admin().sessions()?;
            if ctx.json {
                print_json(&sessions);
            } else if sessions.is_empty() {
                out!("No sessions yet.");
            } else {
                for s in &sessions {
                    out!(
                        "{}  todos {}/{} done, {} open  v{}  {} events  updated {}",
                        s.id,
                        s.todos.closed,
                        s.todos.total,
                        s.todos.open,
                        s.todo_version,
                        s.events,
                        utc_datetime(s.updated_ms)
                    );
                }
            }
        }
        SessionCommand::Show { id } => {
            let session = match id {
                Some(id) => SessionId::parse(&id)?,
                None => ctx.session.clone(),
            };
            // One snapshot: the row, the list and the goal agree.
            let (info, list, goal) = store.read(&session, |tx| {
                Ok((tx.info()?, tx.todo_list()?.0, tx.goal()?))
            })?;
            let Some(info) = info else {
                return Err(Error::NoSuchSession(session));
            };
            if ctx.json {
                let goal = goal.as_ref().map(|g| GoalView::new(g, ctx.now_ms));
                print_json(&json!({"session": info, "goal": goal, "todos": list}));
            } else {
                out!("Session {}", info.id);
                out!("Created {}", utc_datetime(info.created_ms));
                out!("Updated {}", utc_datetime(info.updated_ms));
                out!("Todo version {}, {} events", info.todo_version, info.events);
                if let Some(goal) = &goal {
                    out!("{}", describe(goal, ctx.now_ms));
                }
                out!("{}", summary(&list, &[], SummaryKind::View));
            }
        }
        SessionCommand::Rm { id } => {
            let session = SessionId::parse(&id)?;
            store.admin().remove_session(&session)?;
            if ctx.json {
                print_json(&json!({"removed": session.as_str()}));
            } else {
                out!("Removed session {session}.");
            }
        }
    }
    Ok(Outcome::Success)
}
