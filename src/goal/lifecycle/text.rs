//! How a goal reads in what goalkeeper says: the description `goal get`
//! prints, and the phrases the transitions' messages are made of.

use crate::goal::Goal;
use crate::goal::model::format_duration;

/// The multi-line description `goal get` prints.
pub fn describe(goal: &Goal, now_ms: i64) -> String {
    let mut text = format!(
        "Goal #{} ({}): {}\n",
        goal.id,
        goal.status,
        crate::sanitize::one_line(&goal.objective)
    );
    match goal.token_budget {
        Some(budget) => text.push_str(&format!(
            "Tokens: {} of {budget} used, {} left.\n",
            goal.tokens_used,
            goal.tokens_left().unwrap_or_default()
        )),
        None => text.push_str(&format!("Tokens: {} used, no budget.\n", goal.tokens_used)),
    }
    text.push_str(&format!(
        "Time: {}.",
        format_duration(goal.time_used_seconds(now_ms))
    ));
    text
}

pub(super) fn used_phrase(goal: &Goal, now_ms: i64) -> String {
    let time = format_duration(goal.time_used_seconds(now_ms));
    match goal.token_budget {
        Some(budget) => format!(
            "used {} of {budget} tokens ({}%) in {time}",
            goal.tokens_used,
            goal.tokens_used.saturating_mul(100) / budget.max(1)
        ),
        None => format!("used {} tokens in {time}, with no budget", goal.tokens_used),
    }
}

pub(super) fn budget_phrase(budget: Option<u64>) -> String {
    match budget {
        Some(n) => format!(", budget {n} tokens"),
        None => ", no token budget".into(),
    }
}

/// The objective in quotes, on one line and whole: what a `set` or
/// `create` confirms was taken.
pub(super) fn quote_whole(objective: &str) -> String {
    format!("\"{}\"", crate::sanitize::one_line(objective))
}

pub(super) fn quote(objective: &str) -> String {
    let line = crate::sanitize::one_line(objective);
    let short = crate::todo::text::preview(&line);
    format!("\"{short}\"")
}
