//! The goal lifecycle and its accounting as pure transitions (DESIGN.md §5):
//! `(current goal, op, actor, now) -> new state and a message`, or a refusal
//! that changes nothing.

mod text;

use serde::Serialize;

use super::model::{BudgetNotice, Goal, GoalStatus, MAX_OBJECTIVE_CHARS};
use crate::actor::Actor;
use crate::check::{self, Proof};
pub use text::describe;
use text::{budget_phrase, quote, quote_whole, used_phrase};

/// Token usage reported for one model turn (or a batch of them).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Usage {
    /// Input tokens.
    pub input: u64,
    /// Output tokens.
    pub output: u64,
    /// Tokens written to the prompt cache.
    pub cache_write: u64,
    /// Tokens read from the prompt cache: a reused prefix, never counted.
    pub cache_read: u64,
}

impl Usage {
    /// Input + output + cache writes; cache reads do not count.
    pub fn counted(&self) -> u64 {
        self.input
            .saturating_add(self.output)
            .saturating_add(self.cache_write)
    }
}

/// One goal operation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GoalOp {
    /// Start a goal, replacing a live one (new id, counters reset).
    Set {
        /// The objective (validated by [`objective`]).
        objective: String,
        /// The token budget.
        budget: Option<u64>,
        /// Its checks (a person's only; DESIGN.md §13).
        checks: Vec<String>,
    },
    /// Start a goal; refused while one is live.
    Create {
        /// The objective.
        objective: String,
        /// The token budget.
        budget: Option<u64>,
        /// Its checks (a person's only).
        checks: Vec<String>,
    },
    /// Read the goal.
    Get,
    /// Read the live goal's checks and where they stand.
    Checks,
    /// Add a check to the live goal (a person's only).
    CheckAdd(String),
    /// Remove the live goal's check number N, from 1 (a person's only).
    CheckRm(usize),
    /// Stop the clock and the continuations.
    Pause,
    /// Continue a paused goal; refused while the budget is used up.
    Resume,
    /// Mark the goal achieved.
    Complete,
    /// Abandon the goal.
    Drop,
    /// Set (`Some`) or remove (`None`) the token budget.
    Budget(Option<u64>),
    /// Count tokens spent on the goal.
    Usage(Usage),
}

impl GoalOp {
    /// The op name, as logged and shown in results.
    pub fn name(&self) -> &'static str {
        match self {
            GoalOp::Set { .. } => "set",
            GoalOp::Create { .. } => "create",
            GoalOp::Get => "get",
            GoalOp::Checks => "checks",
            GoalOp::CheckAdd(_) => "check-add",
            GoalOp::CheckRm(_) => "check-rm",
            GoalOp::Pause => "pause",
            GoalOp::Resume => "resume",
            GoalOp::Complete => "complete",
            GoalOp::Drop => "drop",
            GoalOp::Budget(_) => "budget",
            GoalOp::Usage(_) => "usage",
        }
    }
}

/// What a successful op produced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Transition {
    /// The previous live goal, now dropped because `set` replaced it.
    pub replaced: Option<Goal>,
    /// The current goal after the op (a new one carries the `next_id` given
    /// to [`apply`]).
    pub goal: Option<Goal>,
    /// True when anything must be written.
    pub changed: bool,
    /// The summary for the caller.
    pub message: String,
    /// A person's `complete` of a goal whose checks did not all pass on
    /// the files as they were: each of those checks and where it stood,
    /// for the event log (it is recorded as unverified).
    pub unverified: Vec<String>,
}

/// Trims and checks an objective: 1–4,000 characters.
pub fn objective(raw: &str) -> Result<String, String> {
    let text = raw.trim();
    if text.contains('\0') {
        return Err(crate::call::nul_refusal("the objective"));
    }
    if text.is_empty() {
        return Err("the objective is empty; say what the goal should achieve".into());
    }
    let chars = text.chars().count();
    if chars > MAX_OBJECTIVE_CHARS {
        return Err(format!(
            "the objective is {chars} characters; the limit is {MAX_OBJECTIVE_CHARS}"
        ));
    }
    Ok(text.to_owned())
}

/// Largest budget or usage figure accepted: what SQLite's integer holds.
pub(crate) const MAX_TOKENS: u64 = i64::MAX as u64;

/// Applies `op` for `actor` to the session's current goal. A goal that
/// `set` or `create` starts gets the id `next_id` returns, drawn only once
/// the call is known to start one (the store draws ids from a sequence).
/// Where the goal's checks stand comes from `proof`, asked only for a goal
/// with checks and an op that reads them (`get`, `checks`, `complete`):
/// an agent's `complete` is refused unless each passed on the files as
/// they are now (DESIGN.md §13). The outer error is the sources'.
pub fn apply<E>(
    current: Option<&Goal>,
    op: &GoalOp,
    actor: Actor,
    now_ms: i64,
    next_id: impl FnOnce() -> std::result::Result<i64, E>,
    proof: impl FnOnce(&Goal) -> std::result::Result<Proof, E>,
) -> std::result::Result<Result<Transition, String>, E> {
    let (GoalOp::Set {
        objective,
        budget,
        checks,
    }
    | GoalOp::Create {
        objective,
        budget,
        checks,
    }) = op
    else {
        return change(current, op, actor, now_ms, proof);
    };
    // A typed op did not come through `objective()`; no text goalkeeper
    // stores holds a NUL (DESIGN.md §1).
    if objective.contains('\0') {
        return Ok(Err(crate::call::nul_refusal("the objective")));
    }
    let create = matches!(op, GoalOp::Create { .. });
    let live = current.filter(|g| g.status.is_live());
    if let Err(refused) = may_start(current, op, live, create, *budget, checks, actor) {
        return Ok(Err(refused));
    }
    Ok(Ok(start(
        live,
        create,
        objective,
        *budget,
        checks,
        now_ms,
        next_id()?,
    )))
}

/// Every op but `set` and `create` (which [`apply`] runs).
fn change<E>(
    current: Option<&Goal>,
    op: &GoalOp,
    actor: Actor,
    now_ms: i64,
    proof: impl FnOnce(&Goal) -> std::result::Result<Proof, E>,
) -> std::result::Result<Result<Transition, String>, E> {
    if actor == Actor::Agent
        && let Err(refused) = agent_may(current, op)
    {
        return Ok(Err(refused));
    }
    let live = current.filter(|g| g.status.is_live());
    // Where the checks stand, for the ops that read them.
    let proof = match (op, current) {
        (GoalOp::Get | GoalOp::Checks, Some(goal)) if !goal.checks.is_empty() => Some(proof(goal)?),
        (GoalOp::Complete, _) => match live {
            Some(goal) if !goal.checks.is_empty() => Some(proof(goal)?),
            _ => None,
        },
        _ => None,
    };
    Ok(change_with(
        current,
        live,
        op,
        actor,
        now_ms,
        proof.as_ref(),
    ))
}

/// [`change`] once the checks' `proof` is known (`None` without checks).
fn change_with(
    current: Option<&Goal>,
    live: Option<&Goal>,
    op: &GoalOp,
    actor: Actor,
    now_ms: i64,
    proof: Option<&Proof>,
) -> Result<Transition, String> {
    match op {
        GoalOp::Get => {
            let mut text = read(current, actor, now_ms);
            if let Some(proof) = proof {
                text.push('\n');
                text.push_str(&check::list(proof, &crate::check::Scope::Goal, now_ms));
            }
            Ok(unchanged(current, text))
        }
        GoalOp::Checks => {
            let goal = require(live, current, "list the checks of")?;
            let text = match proof {
                Some(proof) => check::list(proof, &crate::check::Scope::Goal, now_ms),
                None => format!(
                    "Goal #{} has no checks. A person adds one with `goalkeeper goal check add CMD`.",
                    goal.id
                ),
            };
            Ok(unchanged(current, text))
        }
        GoalOp::CheckAdd(command) => {
            let mut goal = require(live, current, "add a check to")?.clone();
            let command = check::command(command)?;
            if goal.checks.contains(&command) {
                return Err(format!(
                    "goal #{} already has the check `{}`",
                    goal.id,
                    crate::sanitize::one_line(&command)
                ));
            }
            if goal.checks.len() >= check::MAX_GOAL_CHECKS {
                return Err(format!(
                    "goal #{} has {} checks, the most a goal carries; remove one first (`goal check rm N`)",
                    goal.id,
                    goal.checks.len()
                ));
            }
            goal.checks.push(command);
            goal.revision += 1;
            goal.updated_at_ms = now_ms;
            let message = format!(
                "Goal #{} now has {}: {}.",
                goal.id,
                checks_phrase(goal.checks.len()),
                numbered(&goal.checks)
            );
            Ok(changed(goal, message))
        }
        GoalOp::CheckRm(n) => {
            let mut goal = require(live, current, "remove a check from")?.clone();
            if goal.checks.is_empty() {
                return Err(format!("goal #{} has no checks to remove", goal.id));
            }
            if *n == 0 || *n > goal.checks.len() {
                return Err(format!(
                    "goal #{} has {}; give a number from 1 to {} (`goal check list` numbers them)",
                    goal.id,
                    checks_phrase(goal.checks.len()),
                    goal.checks.len()
                ));
            }
            let removed = goal.checks.remove(n - 1);
            goal.revision += 1;
            goal.updated_at_ms = now_ms;
            let rest = if goal.checks.is_empty() {
                "it has no checks now".to_owned()
            } else {
                format!(
                    "{} left: {}",
                    checks_phrase(goal.checks.len()),
                    numbered(&goal.checks)
                )
            };
            let message = format!(
                "Removed check {n} of goal #{}, `{}`; {rest}.",
                goal.id,
                crate::sanitize::one_line(&removed)
            );
            Ok(changed(goal, message))
        }
        GoalOp::Set { .. } | GoalOp::Create { .. } => unreachable!("apply starts goals"),
        GoalOp::Pause => {
            let goal = require(live, current, "pause")?;
            if goal.status == GoalStatus::Paused {
                return Err(format!("goal #{} is already paused", goal.id));
            }
            let mut goal = goal.clone();
            goal.set_status(GoalStatus::Paused, now_ms);
            let message = format!(
                "Goal #{} paused; its clock is stopped until it is resumed.",
                goal.id
            );
            Ok(changed(goal, message))
        }
        GoalOp::Resume => resume(require(live, current, "resume")?, now_ms),
        GoalOp::Complete => {
            let mut goal = require(live, current, "complete")?.clone();
            let unverified: Vec<String> = proof
                .map(|p| {
                    p.checked
                        .iter()
                        .filter(|c| !c.state.is_passing())
                        .map(|c| c.describe(now_ms))
                        .collect()
                })
                .unwrap_or_default();
            if actor == Actor::Agent
                && let Some(proof) = proof
                && let Some(refused) = check::refusal(
                    &format!("`complete` of goal #{}", goal.id),
                    &proof.checked,
                    proof.tree_error.as_deref(),
                    now_ms,
                )
            {
                return Err(refused);
            }
            goal.set_status(GoalStatus::Complete, now_ms);
            let mut message = format!(
                "Goal #{} complete: {}. It {}.",
                goal.id,
                quote(&goal.objective),
                used_phrase(&goal, now_ms)
            );
            if !unverified.is_empty() {
                message.push_str(&format!(
                    " Recorded as unverified: {}.",
                    unverified.join("; ")
                ));
            }
            let mut transition = changed(goal, message);
            transition.unverified = unverified;
            Ok(transition)
        }
        GoalOp::Drop => {
            let mut goal = require(live, current, "drop")?.clone();
            goal.set_status(GoalStatus::Dropped, now_ms);
            let message = format!("Goal #{} dropped; it stays in the history.", goal.id);
            Ok(changed(goal, message))
        }
        GoalOp::Budget(budget) => {
            check_budget(*budget)?;
            Ok(set_budget(
                require(live, current, "budget")?,
                *budget,
                now_ms,
            ))
        }
        GoalOp::Usage(usage) => Ok(match live {
            None => unchanged(current, "No live goal: the usage was not counted.".into()),
            Some(goal) if goal.status == GoalStatus::Paused => unchanged(
                current,
                format!("Goal #{} is paused: the usage was not counted.", goal.id),
            ),
            Some(goal) => count_usage(goal, usage, now_ms),
        }),
    }
}

/// `1 check`, `3 checks`.
fn checks_phrase(n: usize) -> String {
    if n == 1 {
        "1 check".to_owned()
    } else {
        format!("{n} checks")
    }
}

/// `1. `cargo test`, 2. `cargo clippy``: the checks, numbered as `check
/// rm` takes them.
fn numbered(checks: &[String]) -> String {
    checks
        .iter()
        .enumerate()
        .map(|(i, c)| format!("{}. `{}`", i + 1, crate::sanitize::one_line(c)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// What `get` says: the goal, or how to start one (with the tool, for the
/// agent; with the command, for the user).
fn read(current: Option<&Goal>, actor: Actor, now_ms: i64) -> String {
    match current {
        Some(goal) => describe(goal, now_ms),
        None if actor == Actor::Agent => {
            "No goal yet. If the user gave you one, call `goal` with op `create` and the `objective`.".into()
        }
        None => "No goal yet. Start one with `goalkeeper goal set OBJECTIVE [--budget N]`.".into(),
    }
}

/// Whether `set` (`create` false) or `create` may start a goal: the agent
/// may, `create` is refused while a goal is `live`, and the budget is
/// checked.
fn may_start(
    current: Option<&Goal>,
    op: &GoalOp,
    live: Option<&Goal>,
    create: bool,
    budget: Option<u64>,
    checks: &[String],
    actor: Actor,
) -> Result<(), String> {
    if actor == Actor::Agent {
        agent_may(current, op)?;
    }
    check_list(checks)?;
    if let (true, Some(goal)) = (create, live) {
        return Err(format!(
            "goal #{} is already live ({}): {}; complete or drop it first{}",
            goal.id,
            goal.status,
            quote(&goal.objective),
            if actor == Actor::User {
                ", or use `goal set` to replace it"
            } else {
                ""
            }
        ));
    }
    check_budget(budget)
}

/// `set` (`create` false) or `create`, once [`may_start`] allows it: a new
/// goal with id `next_id`; `set` drops the `live` one it replaces.
fn start(
    live: Option<&Goal>,
    create: bool,
    objective: &str,
    budget: Option<u64>,
    checks: &[String],
    now_ms: i64,
    next_id: i64,
) -> Transition {
    let replaced = live.map(|goal| {
        let mut old = goal.clone();
        old.set_status(GoalStatus::Dropped, now_ms);
        old
    });
    let mut goal = Goal::new(next_id, objective.to_owned(), budget, now_ms);
    goal.checks = checks.to_vec();
    let verb = if create { "created" } else { "set" };
    let mut message = format!(
        "Goal #{next_id} {verb}: {}{}.",
        quote_whole(objective),
        budget_phrase(budget)
    );
    if !checks.is_empty() {
        message.push_str(&format!(
            " Done means {} {}: {}.",
            if checks.len() == 1 {
                "this check"
            } else {
                "these checks"
            },
            if checks.len() == 1 { "passes" } else { "pass" },
            numbered(checks)
        ));
    }
    if let Some(old) = &replaced {
        message.push_str(&format!(
            " It replaces goal #{} ({}), which stays in the history as dropped.",
            old.id,
            quote(&old.objective)
        ));
    }
    Transition {
        replaced,
        goal: Some(goal),
        changed: true,
        message,
        unverified: Vec::new(),
    }
}

/// The checks a new goal is given: each one line of shell, none twice, at
/// most [`check::MAX_GOAL_CHECKS`].
fn check_list(checks: &[String]) -> Result<(), String> {
    for (i, command) in checks.iter().enumerate() {
        if check::command(command)? != *command {
            return Err(format!("check {} is not trimmed", i + 1));
        }
        if checks[..i].contains(command) {
            return Err(format!(
                "the check `{}` is given twice",
                crate::sanitize::one_line(command)
            ));
        }
    }
    if checks.len() > check::MAX_GOAL_CHECKS {
        return Err(format!(
            "{} checks given; a goal carries at most {}",
            checks.len(),
            check::MAX_GOAL_CHECKS
        ));
    }
    Ok(())
}

/// `resume` of the live `goal`: refused while it is active or its budget
/// is used up.
fn resume(goal: &Goal, now_ms: i64) -> Result<Transition, String> {
    if goal.status == GoalStatus::Active {
        return Err(format!("goal #{} is already active", goal.id));
    }
    if goal.budget_exhausted() {
        return Err(format!(
            "goal #{} has used its whole token budget ({} of {} tokens); raise it first with `goalkeeper goal budget N`",
            goal.id,
            goal.tokens_used,
            goal.token_budget.unwrap_or_default()
        ));
    }
    let mut goal = goal.clone();
    goal.set_status(GoalStatus::Active, now_ms);
    let message = format!("Goal #{} resumed.", goal.id);
    Ok(changed(goal, message))
}

/// `budget` of the live `goal` (already checked): the new budget, and the
/// status it settles to.
fn set_budget(goal: &Goal, budget: Option<u64>, now_ms: i64) -> Transition {
    let mut goal = goal.clone();
    goal.token_budget = budget;
    goal.revision += 1;
    goal.updated_at_ms = now_ms;
    let mut message = match budget {
        Some(n) => format!(
            "Goal #{} budget set to {n} tokens ({} used).",
            goal.id, goal.tokens_used
        ),
        None => format!("Goal #{} has no token budget now.", goal.id),
    };
    message.push_str(&settle_budget(&mut goal, now_ms));
    changed(goal, message)
}

/// `usage` counted on a live goal that is not paused.
fn count_usage(goal: &Goal, usage: &Usage, now_ms: i64) -> Transition {
    let counted = usage.counted();
    let mut goal = goal.clone();
    goal.tokens_used = goal.tokens_used.saturating_add(counted).min(MAX_TOKENS);
    goal.updated_at_ms = now_ms;
    let mut message = format!(
        "Counted {counted} tokens for goal #{} (cache reads excluded): {}.",
        goal.id,
        match goal.token_budget {
            Some(budget) => format!("{} of {budget} used", goal.tokens_used),
            None => format!("{} used, no budget", goal.tokens_used),
        }
    );
    message.push_str(&settle_budget(&mut goal, now_ms));
    changed(goal, message)
}

/// The agent may only read, create when nothing is live, resume a paused
/// goal, and complete.
fn agent_may(current: Option<&Goal>, op: &GoalOp) -> Result<(), String> {
    match op {
        GoalOp::Get | GoalOp::Checks | GoalOp::Complete | GoalOp::Usage(_) => Ok(()),
        GoalOp::Create { checks, .. } if !checks.is_empty() => Err(CHECKS_ARE_A_PERSONS.into()),
        GoalOp::Create { budget: None, .. } => Ok(()),
        GoalOp::Create {
            budget: Some(_), ..
        } => Err("only the user can set a token budget; create the goal without one".into()),
        GoalOp::CheckAdd(_) | GoalOp::CheckRm(_) => Err(CHECKS_ARE_A_PERSONS.into()),
        GoalOp::Resume => match current {
            Some(goal) if goal.status == GoalStatus::Paused => Ok(()),
            Some(goal) if goal.status == GoalStatus::BudgetLimited => Err(format!(
                "goal #{} ran out of budget; only the user can raise it, so wrap up and report instead",
                goal.id
            )),
            _ => Ok(()),
        },
        GoalOp::Set { .. } => Err("only the user can replace the goal".into()),
        GoalOp::Pause => Err("only the user can pause the goal".into()),
        GoalOp::Drop => Err("only the user can drop the goal".into()),
        GoalOp::Budget(_) => Err("only the user can change the token budget".into()),
    }
}

/// Flips an active goal whose budget ran out to budget-limited (queueing the
/// wrap-up once per goal), and a budget-limited goal whose budget was raised
/// back to active. Returns a sentence for the message, or nothing.
fn settle_budget(goal: &mut Goal, now_ms: i64) -> String {
    match goal.status {
        GoalStatus::Active if goal.budget_exhausted() => {
            goal.set_status(GoalStatus::BudgetLimited, now_ms);
            if goal.budget_notice == BudgetNotice::None {
                goal.budget_notice = BudgetNotice::Pending;
            }
            " The budget is used up: the goal is now budget-limited.".into()
        }
        GoalStatus::BudgetLimited if !goal.budget_exhausted() => {
            goal.set_status(GoalStatus::Active, now_ms);
            " The goal is active again.".into()
        }
        _ => String::new(),
    }
}

/// Why an agent may not set, change or remove a check.
const CHECKS_ARE_A_PERSONS: &str = "only the user sets or removes checks: a check is a command that runs with the user's rights, and the definition of done the work is measured by";

fn require<'a>(
    live: Option<&'a Goal>,
    current: Option<&'a Goal>,
    verb: &str,
) -> Result<&'a Goal, String> {
    match (live, current) {
        (Some(goal), _) => Ok(goal),
        (None, Some(goal)) => Err(format!(
            "goal #{} is {}; there is no live goal to {verb} (start one with `goal set OBJECTIVE`)",
            goal.id, goal.status
        )),
        (None, None) => Err(format!(
            "there is no goal to {verb}; start one with `goal set OBJECTIVE`"
        )),
    }
}

fn check_budget(budget: Option<u64>) -> Result<(), String> {
    match budget {
        Some(0) => Err("the token budget must be a positive whole number, or `none`".into()),
        Some(n) if n > MAX_TOKENS => Err(format!(
            "the token budget {n} is too large; the limit is {MAX_TOKENS}"
        )),
        _ => Ok(()),
    }
}

/// Nothing to write: `current` as it was, and `message`.
fn unchanged(current: Option<&Goal>, message: String) -> Transition {
    Transition {
        replaced: None,
        goal: current.cloned(),
        changed: false,
        message,
        unverified: Vec::new(),
    }
}

fn changed(goal: Goal, message: String) -> Transition {
    Transition {
        replaced: None,
        goal: Some(goal),
        changed: true,
        message,
        unverified: Vec::new(),
    }
}

impl Goal {
    /// Moves to `status`, keeping the clock right: time accrues only while
    /// active. Counts as a lifecycle change for the runaway guard.
    pub(crate) fn set_status(&mut self, status: GoalStatus, now_ms: i64) {
        if let Some(since) = self.active_since_ms.take() {
            self.time_used_ms += now_ms.saturating_sub(since).max(0);
        }
        if status == GoalStatus::Active {
            self.active_since_ms = Some(now_ms);
        }
        self.status = status;
        self.revision += 1;
        self.updated_at_ms = now_ms;
    }
}
