//! The comments of several agents on one list (DESIGN.md §4, §2.5): who
//! holds a task in progress and since when, who completed one, and the
//! task a blocked one waits for, so that an export read back by an import
//! hands nobody's task to anyone else and keeps every `after` link.
//!
//! - `<!-- held-by: w1 since 2025-11-29T18:40:00Z -->` on a task in
//!   progress (`[/]`) that the named agent `w1` holds, claimed then (UTC,
//!   with `.mmm` when not a whole second); `since` may be left out;
//! - `<!-- done-by: w1 -->` on a completed task (`[x]`) `w1` completed;
//! - `<!-- after: TASK -->` on a blocked task (`[!]`) that waits for the
//!   task `TASK` (escaped like any text), beside its `blocker` note.
//!
//! The session's own agent is no name: its tasks carry none of these, as
//! a list one agent works on always did.

use super::{escape, unescape};
use crate::AgentName;
use crate::time::{parse_utc_datetime, utc_datetime_exact};
use crate::todo::model::{Status, Task};
use crate::todo::text;

/// The comment keys of this file.
pub(super) const KEYS: [&str; 3] = ["held-by", "done-by", "after"];

/// Appends the comments `task` carries, each after a space.
pub(super) fn render(task: &Task, out: &mut String) {
    match (task.status, task.agent.as_deref()) {
        (Status::InProgress, Some(agent)) => {
            out.push_str(" <!-- held-by: ");
            out.push_str(agent);
            if let Some(since) = task.since_ms {
                out.push_str(" since ");
                out.push_str(&utc_datetime_exact(since));
            }
            out.push_str(" -->");
        }
        (Status::Completed, Some(agent)) => {
            out.push_str(" <!-- done-by: ");
            out.push_str(agent);
            out.push_str(" -->");
        }
        _ => {}
    }
    if let (Status::Blocked, Some(after)) = (task.status, &task.after) {
        out.push_str(" <!-- after: ");
        out.push_str(&escape(after));
        out.push_str(" -->");
    }
}

/// Reads the comment `key: value` onto `task`, whose status is read
/// already: `Err` says what is wrong with it.
pub(super) fn read(key: &str, value: &str, task: &mut Task) -> Result<(), String> {
    let wants = |status: Status, task_kind: &str| -> Result<(), String> {
        if task.status == status {
            Ok(())
        } else {
            Err(format!(
                "a `{key}` comment belongs on {task_kind}; this task is {}",
                task.status
            ))
        }
    };
    match key {
        "held-by" => {
            wants(Status::InProgress, "a task in progress `[/]`")?;
            let (name, since) = match value.split_once(" since ") {
                Some((name, since)) => (name.trim(), Some(since.trim())),
                None => (value, None),
            };
            task.agent = Some(agent(key, name)?);
            task.since_ms = match since {
                None => None,
                Some(time) => Some(parse_utc_datetime(time).ok_or_else(|| {
                    format!(
                        "`held-by` gives the claim's time in UTC after `since`, as in `since 2025-11-29T18:40:00Z`, not `{}`",
                        text::preview(time)
                    )
                })?),
            };
        }
        "done-by" => {
            wants(Status::Completed, "a completed `[x]` task")?;
            task.agent = Some(agent(key, value)?);
        }
        "after" => {
            wants(Status::Blocked, "a blocked `[!]` task")?;
            task.after = Some(text::task_content(&unescape(value))?);
        }
        _ => unreachable!("only the keys of KEYS are read here"),
    }
    Ok(())
}

/// The named agent a `held-by` or `done-by` comment names.
fn agent(key: &str, name: &str) -> Result<String, String> {
    match AgentName::parse(name) {
        Ok(Some(agent)) => Ok(agent.as_str().to_owned()),
        Ok(None) => Err(format!(
            "`{key}: {name}` names the session's own agent, which a list names by no comment; leave the comment out"
        )),
        Err(e) => Err(format!("`{key}`: {e}")),
    }
}
