//! The words and figures of a `watch` frame: bars, rates, ages, one line
//! per event. Every piece of stored text goes through the project's
//! terminal sanitizer ([`one_line`]) before it is shown.

use crate::goal::{Goal, format_duration, format_tokens};
use crate::sanitize::one_line;
use crate::store::{Event, EventKind, SessionSnapshot};
use serde_json::Value;

use super::state::RATE_WINDOW_MS;

/// Stored text made safe for one terminal line.
pub(crate) fn safe(text: &str) -> String {
    one_line(text).into_owned()
}

/// The lines of the goal objective, each made safe (an objective may keep
/// its line breaks).
pub(crate) fn objective_lines(objective: &str) -> Vec<String> {
    objective
        .replace("\r\n", "\n")
        .split(['\n', '\r'])
        .map(safe)
        .collect()
}

/// A bar of `width` cells, `part` of `whole` filled: `██████░░░░`.
pub(crate) fn bar(part: u64, whole: u64, width: usize) -> String {
    let filled = if whole == 0 {
        0
    } else {
        ((part.min(whole) as u128 * width as u128 + whole as u128 / 2) / whole as u128) as usize
    };
    let mut text = "█".repeat(filled);
    text.push_str(&"░".repeat(width - filled));
    text
}

/// The share `part / whole` in whole percent.
pub(crate) fn percent(part: u64, whole: u64) -> u64 {
    if whole == 0 {
        0
    } else {
        (part as u128 * 100 / whole as u128) as u64
    }
}

/// How long ago `at_ms` was: `now`, `45s ago`, `12m ago`, `3h ago`, `2d ago`.
pub(crate) fn ago(at_ms: i64, now_ms: i64) -> String {
    let secs = (now_ms - at_ms).max(0) / 1000;
    match secs {
        0 => "now".into(),
        s if s < 60 => format!("{s}s ago"),
        s if s < 3_600 => format!("{}m ago", s / 60),
        s if s < 86_400 => format!("{}h ago", s / 3_600),
        s => format!("{}d ago", s / 86_400),
    }
}

/// `HH:MM:SS` (UTC) of a timestamp.
pub(crate) fn clock(ms: i64) -> String {
    let secs = ms.div_euclid(1000).rem_euclid(86_400);
    format!("{:02}:{:02}:{:02}", secs / 3600, secs / 60 % 60, secs % 60)
}

/// The pace of the goal's spending over the last minutes.
pub(crate) struct Rate {
    /// Tokens per minute.
    pub(crate) per_minute: u64,
    /// The minutes the rate is taken over.
    pub(crate) minutes: i64,
    /// Seconds until the budget runs out at this pace, when there is a
    /// budget left and a pace.
    pub(crate) exhausted_in: Option<i64>,
}

/// The goal's token rate over the window (or since the goal started, when
/// that is shorter; at least a minute), and when the budget runs out at it.
pub(crate) fn rate(snapshot: &SessionSnapshot, goal: &Goal, now_ms: i64) -> Rate {
    let span_ms = RATE_WINDOW_MS.min(now_ms - goal.created_at_ms).max(60_000);
    let since = now_ms - span_ms;
    let tokens: u64 = snapshot
        .recent_usage
        .iter()
        .filter(|(at, _)| *at >= since)
        .map(|(_, t)| t)
        .sum();
    let per_minute = (tokens as u128 * 60_000 / span_ms as u128) as u64;
    let exhausted_in = match goal.token_budget {
        Some(budget) if budget > goal.tokens_used && per_minute > 0 => {
            Some(((budget - goal.tokens_used) as u128 * 60 / per_minute as u128) as i64)
        }
        _ => None,
    };
    Rate {
        per_minute,
        minutes: span_ms / 60_000,
        exhausted_in,
    }
}

/// `~26m`, `~1h 5m`: a projected duration.
pub(crate) fn about(seconds: i64) -> String {
    format!("~{}", format_duration(seconds.max(60)))
}

/// The tokens of `goal`: `45k of 100k tokens (45%)` or `45k tokens, no budget`.
pub(crate) fn tokens(goal: &Goal) -> String {
    match goal.token_budget {
        Some(budget) => format!(
            "{} of {} tokens ({}%)",
            format_tokens(goal.tokens_used),
            format_tokens(budget),
            percent(goal.tokens_used, budget)
        ),
        None => format!("{} tokens, no budget", format_tokens(goal.tokens_used)),
    }
}

/// What an event did, in a few words: `done "Write the parser"`,
/// `usage +1.2k tokens`, `rejected start: task "x" not found`.
pub(crate) fn event_text(event: &Event) -> String {
    let p = &event.payload;
    let op = event.op.as_deref().unwrap_or("call");
    if !event.ok {
        let error = event.error.as_deref().unwrap_or("refused");
        return format!("rejected {op}: {}", safe(error));
    }
    let quoted = |key: &str| p[key].as_str().map(|s| format!("\"{}\"", safe(s)));
    let mut text = op.to_owned();
    match event.kind {
        EventKind::Todo => {
            if let Some(list) = p["list"].as_array() {
                let tasks: usize = list
                    .iter()
                    .map(|ph| ph["items"].as_array().map_or(0, Vec::len))
                    .sum();
                text.push_str(&format!(
                    ": {} phase{}, {tasks} task{}",
                    list.len(),
                    plural(list.len()),
                    plural(tasks)
                ));
            }
            if let Some(task) = quoted("task") {
                text.push_str(&format!(" {task}"));
            }
            if let Some(items) = p["items"].as_array() {
                text.push_str(&format!(" {} item{}", items.len(), plural(items.len())));
                if let Some(phase) = quoted("phase") {
                    text.push_str(&format!(" to {phase}"));
                }
            } else if let Some(phase) = quoted("phase") {
                text.push_str(&format!(" phase {phase}"));
            }
            if let Some(reason) = quoted("reason") {
                text.push_str(&format!(": {reason}"));
            }
            if let Some(source) = quoted("source") {
                text.push_str(&format!(" from {source}"));
            }
            if let Some(v) = p["restored_version"].as_i64() {
                text.push_str(&format!(" to v{v}"));
            }
        }
        EventKind::Goal => {
            if let Some(objective) = p["objective"].as_str() {
                let first = objective_lines(objective).into_iter().next();
                text.push_str(&format!(" \"{}\"", first.unwrap_or_default()));
            }
            if op == "usage" {
                let part = |k: &str| p["usage"][k].as_u64().unwrap_or(0);
                let counted = part("input") + part("output") + part("cache_write");
                text.push_str(&format!(" +{} tokens", format_tokens(counted)));
            } else if let Some(budget) = p.get("budget") {
                match budget {
                    Value::Number(n) => text.push_str(&format!(
                        ", budget {}",
                        format_tokens(n.as_u64().unwrap_or(0))
                    )),
                    Value::Null if op == "budget" => text.push_str(" none"),
                    _ => {}
                }
            }
        }
        EventKind::Check => {
            let checks = p["checks"].as_array().map_or(&[][..], Vec::as_slice);
            let failed: Vec<String> = checks
                .iter()
                .filter(|c| c["exit"] != serde_json::json!({"code": 0}))
                .filter_map(|c| c["command"].as_str().map(|s| format!("`{}`", safe(s))))
                .collect();
            if let Some(task) = quoted("task") {
                text.push_str(&format!(" {task}"));
            }
            if failed.is_empty() {
                text.push_str(&format!(
                    ": {} check{} passed",
                    checks.len(),
                    plural(checks.len())
                ));
            } else {
                text.push_str(&format!(
                    ": {} of {} failed, {}",
                    failed.len(),
                    checks.len(),
                    failed.join(", ")
                ));
            }
        }
    }
    text
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}
