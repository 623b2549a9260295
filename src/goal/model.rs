//! The goal: an objective with a token budget and the time spent on it.

use std::fmt;

use serde::{Deserialize, Serialize};

/// Longest objective, in characters, after trimming.
pub(crate) const MAX_OBJECTIVE_CHARS: usize = 4_000;

/// Where a goal stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GoalStatus {
    /// Being worked on; the clock runs and continuations are sent.
    Active,
    /// Stopped by the user (or the runaway guard); the clock is stopped.
    Paused,
    /// Its token budget ran out; waiting for the user to raise it.
    BudgetLimited,
    /// Achieved.
    Complete,
    /// Abandoned or replaced.
    Dropped,
}

impl GoalStatus {
    /// The wire name (`budget-limited`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            GoalStatus::Active => "active",
            GoalStatus::Paused => "paused",
            GoalStatus::BudgetLimited => "budget-limited",
            GoalStatus::Complete => "complete",
            GoalStatus::Dropped => "dropped",
        }
    }

    /// Parses a wire name.
    pub fn parse(text: &str) -> Option<GoalStatus> {
        [
            GoalStatus::Active,
            GoalStatus::Paused,
            GoalStatus::BudgetLimited,
            GoalStatus::Complete,
            GoalStatus::Dropped,
        ]
        .into_iter()
        .find(|s| s.as_str() == text)
    }

    /// Active, paused or budget-limited: not yet finished either way.
    pub(crate) fn is_live(self) -> bool {
        matches!(
            self,
            GoalStatus::Active | GoalStatus::Paused | GoalStatus::BudgetLimited
        )
    }
}

impl fmt::Display for GoalStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Whether the budget-limit wrap-up was queued or delivered for a goal; it
/// is sent at most once per goal.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BudgetNotice {
    /// Not queued.
    None,
    /// Queued, waiting for the next continuation or stop.
    Pending,
    /// Delivered; never sent again for this goal.
    Delivered,
}

impl BudgetNotice {
    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            BudgetNotice::None => "none",
            BudgetNotice::Pending => "pending",
            BudgetNotice::Delivered => "delivered",
        }
    }

    /// Parses a stored name.
    pub fn parse(text: &str) -> Option<BudgetNotice> {
        [
            BudgetNotice::None,
            BudgetNotice::Pending,
            BudgetNotice::Delivered,
        ]
        .into_iter()
        .find(|s| s.as_str() == text)
    }
}

/// A session's goal.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Goal {
    /// Unique across the database; a replaced goal gets a new one.
    pub id: i64,
    /// What to achieve (1–4,000 characters, trimmed; line breaks allowed).
    pub objective: String,
    /// Where it stands.
    pub status: GoalStatus,
    /// The token budget, if any (a positive integer).
    pub token_budget: Option<u64>,
    /// Input + output + cache-write tokens counted so far.
    pub tokens_used: u64,
    /// Milliseconds spent active before `active_since_ms`.
    pub time_used_ms: i64,
    /// When the goal last became active; `None` unless it is active now.
    pub active_since_ms: Option<i64>,
    /// Bumped by every lifecycle change (not by usage); the runaway guard
    /// uses it to tell progress from idling.
    pub revision: i64,
    /// The budget-limit wrap-up state.
    pub budget_notice: BudgetNotice,
    /// Creation time, milliseconds since the epoch.
    pub created_at_ms: i64,
    /// Last change, milliseconds since the epoch.
    pub updated_at_ms: i64,
    /// The checks a person set (DESIGN.md §13): shell commands that must
    /// pass on the files as they are for an agent's `complete`. Empty for
    /// none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub checks: Vec<String>,
}

impl Goal {
    /// A new active goal.
    pub fn new(id: i64, objective: String, token_budget: Option<u64>, now_ms: i64) -> Goal {
        Goal {
            id,
            objective,
            status: GoalStatus::Active,
            token_budget,
            tokens_used: 0,
            time_used_ms: 0,
            active_since_ms: Some(now_ms),
            revision: 0,
            budget_notice: BudgetNotice::None,
            created_at_ms: now_ms,
            updated_at_ms: now_ms,
            checks: Vec::new(),
        }
    }

    /// Whole seconds spent active, the running stretch included.
    pub(crate) fn time_used_seconds(&self, now_ms: i64) -> i64 {
        let running = self
            .active_since_ms
            .map_or(0, |since| now_ms.saturating_sub(since).max(0));
        (self.time_used_ms + running) / 1000
    }

    /// Tokens left under the budget (0 when used up); `None` without one.
    pub(crate) fn tokens_left(&self) -> Option<u64> {
        self.token_budget
            .map(|budget| budget.saturating_sub(self.tokens_used))
    }

    /// True when a budget is set and the usage has reached it.
    pub(crate) fn budget_exhausted(&self) -> bool {
        self.token_budget
            .is_some_and(|budget| self.tokens_used >= budget)
    }
}

/// `1h 5m`, `12m`, `45s`: a duration for prompts and status lines.
pub(crate) fn format_duration(seconds: i64) -> String {
    let seconds = seconds.max(0);
    let (h, m, s) = (seconds / 3600, seconds / 60 % 60, seconds % 60);
    match (h, m) {
        (0, 0) => format!("{s}s"),
        (0, m) => format!("{m}m"),
        (h, 0) => format!("{h}h"),
        (h, m) => format!("{h}h {m}m"),
    }
}

/// `950`, `12.3k`, `100k`, `1.5M`: a token count for status lines.
#[cfg_attr(not(feature = "cli"), expect(dead_code))]
pub(crate) fn format_tokens(tokens: u64) -> String {
    fn scaled(value: u64, unit: u64, suffix: &str) -> String {
        let tenths = (value * 10 + unit / 2) / unit;
        if tenths.is_multiple_of(10) {
            format!("{}{suffix}", tenths / 10)
        } else {
            format!("{}.{}{suffix}", tenths / 10, tenths % 10)
        }
    }
    match tokens {
        t if t < 1_000 => t.to_string(),
        t if t < 999_950 => scaled(t, 1_000, "k"),
        t => scaled(t, 1_000_000, "M"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_naturally() {
        assert_eq!(format_duration(0), "0s");
        assert_eq!(format_duration(45), "45s");
        assert_eq!(format_duration(300), "5m");
        assert_eq!(format_duration(3_600), "1h");
        assert_eq!(format_duration(3_900), "1h 5m");
    }

    #[test]
    fn tokens_read_naturally() {
        assert_eq!(format_tokens(950), "950");
        assert_eq!(format_tokens(12_300), "12.3k");
        assert_eq!(format_tokens(100_000), "100k");
        assert_eq!(format_tokens(999_949), "999.9k");
        assert_eq!(format_tokens(999_950), "1M");
        assert_eq!(format_tokens(1_500_000), "1.5M");
    }

    #[test]
    fn time_counts_the_running_stretch() {
        let mut goal = Goal::new(1, "x".into(), None, 1_000);
        assert_eq!(goal.time_used_seconds(61_000), 60);
        goal.time_used_ms = 5_000;
        goal.active_since_ms = None;
        assert_eq!(goal.time_used_seconds(1_000_000), 5);
    }
}
