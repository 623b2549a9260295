//! The one-line status for an agent's status bar (DESIGN.md §9):
//! `◎ Ship the release · todos 3/7 · 12.3k/100k tok · 5m`.

use crate::check::Checked;
use crate::goal::{Goal, GoalStatus, format_duration, format_tokens};
use crate::sanitize::one_line;
use crate::todo::Counts;
#[cfg(test)]
use crate::todo::TodoList;

/// Longest objective shown, in characters.
const OBJECTIVE_CHARS: usize = 40;

/// The status line for a session, or `None` when it has neither a goal
/// (complete and dropped goals do not count) nor todos.
///
/// The goal part shows its state: `◎` active, `‖` paused, `◌` out of
/// budget. Todos are `closed/total`; tokens `used/budget tok` (or just
/// `used tok` without a budget); then the time spent active.
#[cfg(test)]
pub fn status_line(goal: Option<&Goal>, list: &TodoList, now_ms: i64) -> Option<String> {
    let mut holders: Vec<String> = list
        .tasks()
        .filter_map(|(_, t)| crate::todo::holder_label(t).map(str::to_owned))
        .collect();
    holders.sort();
    holders.dedup();
    status_line_of(goal, list.counts(), &holders, &[], now_ms)
}

/// The most agent names the status line shows; the rest are counted.
const HOLDERS_SHOWN: usize = 3;

/// [`status_line`] from the list's counts alone, which the store counts
/// without reading the list ([`crate::store::SessionTx::status`]), the named agents
/// holding its tasks, shown after the todos (`agents w1, w2`), and the
/// checks that still gate something (`checks 1/3 pass, 1 fail, 1 stale`).
pub fn status_line_of(
    goal: Option<&Goal>,
    counts: Counts,
    holders: &[String],
    checks: &[Checked],
    now_ms: i64,
) -> Option<String> {
    let goal = goal.filter(|g| g.status.is_live());
    if goal.is_none() && counts.total == 0 {
        return None;
    }
    let mut parts = Vec::new();
    if let Some(goal) = goal {
        let mark = match goal.status {
            GoalStatus::Paused => "‖",
            GoalStatus::BudgetLimited => "◌",
            _ => "◎",
        };
        let objective = one_line(&goal.objective);
        let mut short: String = objective.chars().take(OBJECTIVE_CHARS).collect();
        if objective.chars().count() > OBJECTIVE_CHARS {
            short.push('…');
        }
        let state = match goal.status {
            GoalStatus::Paused => " (paused)",
            GoalStatus::BudgetLimited => " (budget used up)",
            _ => "",
        };
        parts.push(format!("{mark} {short}{state}"));
    }
    if counts.total > 0 {
        parts.push(format!("todos {}/{}", counts.closed, counts.total));
    }
    if !holders.is_empty() {
        let mut names: Vec<String> = holders
            .iter()
            .take(HOLDERS_SHOWN)
            .map(|h| one_line(h).chars().take(64).collect())
            .collect();
        if holders.len() > HOLDERS_SHOWN {
            names.push(format!("+{}", holders.len() - HOLDERS_SHOWN));
        }
        parts.push(format!("agents {}", names.join(", ")));
    }
    if !checks.is_empty() {
        parts.push(checks_part(checks));
    }
    if let Some(goal) = goal {
        parts.push(match goal.token_budget {
            Some(budget) => format!(
                "{}/{} tok",
                format_tokens(goal.tokens_used),
                format_tokens(budget)
            ),
            None => format!("{} tok", format_tokens(goal.tokens_used)),
        });
        parts.push(format_duration(goal.time_used_seconds(now_ms)));
    }
    Some(parts.join(" · "))
}

/// `checks 2/2 pass`, `checks 1/4 pass, 1 fail, 1 stale, 1 not run`.
fn checks_part(checks: &[Checked]) -> String {
    let count = |word: &str| checks.iter().filter(|c| c.state.word() == word).count();
    let mut text = format!("checks {}/{} pass", count("pass"), checks.len());
    for word in ["fail", "stale", "not run"] {
        let n = count(word);
        if n > 0 {
            text.push_str(&format!(", {n} {word}"));
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::todo::{Phase, Status, Task};

    fn list(done: usize, open: usize) -> TodoList {
        let mut tasks: Vec<Task> = (0..done)
            .map(|i| {
                let mut t = Task::pending(format!("d{i}"));
                t.set_status(Status::Completed);
                t
            })
            .collect();
        tasks.extend((0..open).map(|i| Task::pending(format!("o{i}"))));
        TodoList::new(vec![Phase {
            name: "P".into(),
            tasks,
        }])
    }

    #[test]
    fn the_documented_example() {
        let mut goal = Goal::new(1, "Ship the release".into(), Some(100_000), 0);
        goal.tokens_used = 12_300;
        assert_eq!(
            status_line(Some(&goal), &list(3, 4), 300_000).unwrap(),
            "◎ Ship the release · todos 3/7 · 12.3k/100k tok · 5m"
        );
    }

    #[test]
    fn states_and_missing_parts() {
        let mut goal = Goal::new(
            1,
            "A very long objective that keeps going and going\nforever".into(),
            None,
            0,
        );
        goal.status = GoalStatus::Paused;
        goal.active_since_ms = None;
        goal.time_used_ms = 45_000;
        assert_eq!(
            status_line(Some(&goal), &TodoList::default(), 1_000_000).unwrap(),
            "‖ A very long objective that keeps going a… (paused) · 0 tok · 45s"
        );
        assert_eq!(status_line(None, &list(1, 1), 0).unwrap(), "todos 1/2");
        use crate::check::{CheckState, Exit, Scope};
        let check = |state| Checked {
            scope: Scope::Goal,
            command: "cargo test".into(),
            state,
        };
        let checks = [
            check(CheckState::Passed { at_ms: 0 }),
            check(CheckState::Failed {
                at_ms: 0,
                exit: Exit::Code(1),
                changed_since: false,
            }),
            check(CheckState::NotRun),
            check(CheckState::Stale { at_ms: 0 }),
        ];
        assert_eq!(
            status_line_of(None, list(1, 1).counts(), &[], &checks, 0).unwrap(),
            "todos 1/2 · checks 1/4 pass, 1 fail, 1 stale, 1 not run"
        );
        goal.status = GoalStatus::Complete;
        assert_eq!(status_line(Some(&goal), &TodoList::default(), 0), None);
        assert_eq!(status_line(None, &TodoList::default(), 0), None);
    }
}
