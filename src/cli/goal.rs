//! `goalkeeper goal ...`: the user's goal lifecycle, usage reports, and the
//! agent's `goal` tool call (`apply`).

use crate::goal::{GoalOp, MAX_TOKENS, Usage};
use crate::integrations::claude_code::Acts;
use crate::store::GoalCall;
use crate::{Actor, Error};
use clap::{Args, Subcommand};

use std::path::Path;

use crate::SessionId;
use crate::integrations::host_session::{self, Host, QueuedGoal};
use crate::integrations::open_session::LastSession;

use super::context::{Context, Outcome};
use super::{Command, print_json, print_result, read_stdin};

// `goal [COMMAND]`. (No doc comment: see `TargetArgs` in todo.rs.)
#[derive(Debug, Args)]
pub(crate) struct GoalArgs {
    #[command(subcommand)]
    pub(crate) command: Option<GoalCommand>,
}

#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub(crate) enum GoalCommand {
    /// Start a goal, replacing a live one (new id, counters reset)
    Set(NewGoal),
    /// Start a goal; refused while one is live
    Create(NewGoal),
    /// Show the goal
    #[command(visible_alias = "show")]
    Get,
    /// The goal's checks: shell commands that must pass for the agent's `complete`
    #[command(subcommand)]
    Check(CheckCommand),
    /// Pause the goal: its clock and continuations stop
    Pause,
    /// Resume a paused goal (refused while its budget is used up)
    Resume,
    /// Mark the goal achieved and report the budget used
    Complete,
    /// Abandon the goal (it stays in the history)
    Drop,
    /// Set the token budget, or `none` to remove it
    Budget {
        /// A positive number of tokens, or `none`
        #[arg(value_parser = parse_budget_or_none, allow_hyphen_values = true)]
        budget: BudgetArg,
    },
    /// Count tokens spent on the goal (cache reads are accepted and not counted)
    Usage {
        /// Input tokens
        #[arg(long, default_value_t = 0, value_parser = parse_tokens, allow_hyphen_values = true)]
        input: u64,
        /// Output tokens
        #[arg(long, default_value_t = 0, value_parser = parse_tokens, allow_hyphen_values = true)]
        output: u64,
        /// Tokens written to the prompt cache
        #[arg(long, default_value_t = 0, value_parser = parse_tokens, allow_hyphen_values = true)]
        cache_write: u64,
        /// Tokens read from the prompt cache (not counted)
        #[arg(long, default_value_t = 0, value_parser = parse_tokens, allow_hyphen_values = true)]
        cache_read: u64,
    },
    /// Run one `goal` tool call as the agent: JSON argument, or stdin with `-` or nothing
    Apply {
        /// The call, e.g. '{"op":"complete"}'; `-` reads stdin
        #[arg(value_name = "JSON")]
        call: Option<String>,
    },
}

impl GoalCommand {
    /// Whom the command acts as (`cli/acting.rs`): `apply` is the agent's
    /// tool call; every other change is the person's.
    pub(crate) fn acts(&self) -> Acts {
        match self {
            GoalCommand::Apply { .. } => Acts::Agent,
            GoalCommand::Get | GoalCommand::Check(CheckCommand::List) => Acts::Nobody,
            GoalCommand::Set(_)
            | GoalCommand::Create(_)
            | GoalCommand::Pause
            | GoalCommand::Resume
            | GoalCommand::Complete
            | GoalCommand::Drop
            | GoalCommand::Budget { .. }
            | GoalCommand::Check(CheckCommand::Add { .. } | CheckCommand::Rm { .. })
            | GoalCommand::Usage { .. } => Acts::Person,
        }
    }
}

#[derive(Debug, Subcommand)]
pub(crate) enum CheckCommand {
    /// Add a check: a shell command that must pass (exit 0) on the files as they are
    Add {
        /// The command, one line of shell (several words are joined with spaces)
        #[arg(required = true, num_args = 1.., allow_hyphen_values = true)]
        command: Vec<String>,
    },
    /// Remove check number N (as `goal check list` numbers them)
    Rm {
        /// The check's number, from 1
        number: usize,
    },
    /// List the checks and where each stands
    List,
}

#[derive(Debug, Args)]
pub(crate) struct NewGoal {
    /// What the goal should achieve (several words are joined with spaces,
    /// so `/goal set Ship the release` needs no quotes)
    #[arg(required = true, num_args = 1..)]
    objective: Vec<String>,
    /// The token budget (a positive number)
    #[arg(long, value_parser = parse_budget, allow_hyphen_values = true)]
    budget: Option<u64>,
    /// A check: a shell command that must pass on the files as they are for
    /// the agent's `complete` (repeatable; `goalkeeper verify` runs them)
    #[arg(long = "check", value_name = "CMD", allow_hyphen_values = true)]
    checks: Vec<String>,
}

/// `goal budget N|none`.
#[derive(Clone, Debug)]
pub(crate) struct BudgetArg(Option<u64>);

fn parse_budget(text: &str) -> Result<u64, String> {
    match parse_tokens(text) {
        Ok(0) => Err("the budget must be a positive whole number of tokens".into()),
        Ok(n) => Ok(n),
        Err(e) if e.contains("too large") => Err(e),
        Err(_) => Err(format!(
            "the budget must be a positive whole number of tokens, e.g. 100000 (got {text:?})"
        )),
    }
}

fn parse_budget_or_none(text: &str) -> Result<BudgetArg, String> {
    if text.trim().eq_ignore_ascii_case("none") {
        return Ok(BudgetArg(None));
    }
    parse_budget(text)
        .map(|n| BudgetArg(Some(n)))
        .map_err(|e| format!("{e}, or `none` to remove it"))
}

/// A whole number of tokens, 0 or more, within what the store holds.
fn parse_tokens(text: &str) -> Result<u64, String> {
    let digits = text.trim();
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(
            "a token count must be a whole number of 0 or more (got {text:?})"
        ));
    }
    match digits.parse::<u64>() {
        Ok(n) if n <= MAX_TOKENS => Ok(n),
        _ => Err(format!("{digits} is too large; the limit is {MAX_TOKENS}")),
    }
}

pub(crate) fn run(ctx: &Context, command: GoalCommand) -> Result<Outcome, Error> {
    // `apply` acts as the agent, everything else as the person: the rule
    // the Bash guard reads too.
    let actor = command.acts().actor();
    let op = match command {
        GoalCommand::Set(NewGoal {
            objective,
            budget,
            checks,
        }) => GoalOp::Set {
            objective: checked_objective(&objective.join(" "))?,
            budget,
            checks: checked_commands(&checks)?,
        },
        GoalCommand::Create(NewGoal {
            objective,
            budget,
            checks,
        }) => GoalOp::Create {
            objective: checked_objective(&objective.join(" "))?,
            budget,
            checks: checked_commands(&checks)?,
        },
        GoalCommand::Get => GoalOp::Get,
        GoalCommand::Check(CheckCommand::Add { command }) => {
            GoalOp::CheckAdd(checked_command(&command.join(" "))?)
        }
        GoalCommand::Check(CheckCommand::Rm { number }) => GoalOp::CheckRm(number),
        GoalCommand::Check(CheckCommand::List) => GoalOp::Checks,
        GoalCommand::Pause => GoalOp::Pause,
        GoalCommand::Resume => GoalOp::Resume,
        GoalCommand::Complete => GoalOp::Complete,
        GoalCommand::Drop => GoalOp::Drop,
        GoalCommand::Budget { budget } => GoalOp::Budget(budget.0),
        GoalCommand::Usage {
            input,
            output,
            cache_write,
            cache_read,
        } => GoalOp::Usage(Usage {
            input,
            output,
            cache_write,
            cache_read,
        }),
        GoalCommand::Apply { call } => {
            let text = match call.as_deref() {
                None | Some("-") => read_stdin()?,
                Some(text) => text.to_owned(),
            };
            return goal_call(ctx, GoalCall::Json(&text), actor);
        }
    };
    goal_call(ctx, GoalCall::Op(&op), actor)
}

/// Runs one goal call by the command's caller and prints its result.
fn goal_call(ctx: &Context, call: GoalCall<'_>, actor: Actor) -> Result<Outcome, Error> {
    let mut caller = ctx.caller()?;
    let result = ctx.store()?.write(&ctx.session, |tx| {
        tx.goal_call(call, actor, &mut caller, ctx.now_ms)
    })?;
    Ok(print_result(ctx, result))
}

fn checked_objective(text: &str) -> Result<String, Error> {
    crate::goal::objective(text).map_err(Error::Usage)
}

/// A check given on the command line, checked as the goal's and a task's
/// are (DESIGN.md §13).
pub(super) fn checked_command(text: &str) -> Result<String, Error> {
    crate::check::command(text).map_err(Error::Usage)
}

fn checked_commands(texts: &[String]) -> Result<Vec<String>, Error> {
    texts.iter().map(|t| checked_command(t)).collect()
}

/// `--session-from HOST` where HOST has not run yet: `goal set` queues the
/// goal for HOST's next session in `dir`, `goal get` shows a queued goal,
/// `goal drop` removes it; anything else is refused.
pub(super) fn without_host_session(
    ctx: &Context,
    host: Host,
    dir: &Path,
    command: &Command,
) -> Result<Outcome, Error> {
    let waiting = Waiting {
        host,
        dir,
        ended: None,
    };
    match queued_goal_command(command) {
        Some(QueuedGoalCommand::Set(new)) => waiting.queue(ctx, new),
        Some(QueuedGoalCommand::Get) => {
            let queued = host_session::queued_goal(&mut ctx.store()?, host, dir)?;
            waiting.print(ctx, "queued", queued)
        }
        Some(QueuedGoalCommand::Drop) => {
            let queued = host_session::unqueue_goal(&mut ctx.store()?, host, dir)?;
            waiting.print(ctx, "unqueued", queued)
        }
        None => Err(Error::Usage(format!(
            "no {host} session has run in {} yet; start {host} there first (`goal set` with --session-from queues a goal for it), or pass --session ID",
            dir.display()
        ))),
    }
}

/// `--session-from HOST` where HOST has run in `dir` (DESIGN.md §8): `goal
/// set` acts on the session while it is open, and once it has ended queues
/// the goal for the next session HOST starts there; `goal drop` then takes
/// back a queued goal. `None`: the command acts on the last session
/// (`ctx.session`), ended or not; after its end a note says so.
pub(super) fn with_host_session(
    ctx: &Context,
    host: Host,
    dir: &Path,
    last: &LastSession,
    command: &Command,
) -> Result<Option<Outcome>, Error> {
    let shown = dir.display();
    let wanted = queued_goal_command(command);
    let ended = match last {
        LastSession::Open(session) => {
            let Some(QueuedGoalCommand::Set(new)) = wanted else {
                return Ok(None);
            };
            let outcome = goal_call(ctx, GoalCall::Op(&new_goal(new)?), Actor::User)?;
            if !ctx.json {
                out!(
                    "Set on the open {host} session {} in {shown}: it reads the goal with its next event.",
                    session.as_str()
                );
            }
            return Ok(Some(outcome));
        }
        LastSession::Ended(session) => session,
    };
    let waiting = Waiting {
        host,
        dir,
        ended: Some(ended),
    };
    let mut store = ctx.store()?;
    match wanted {
        Some(QueuedGoalCommand::Set(new)) => return waiting.queue(ctx, new).map(Some),
        Some(QueuedGoalCommand::Drop) => {
            if let Some(queued) = host_session::unqueue_goal(&mut store, host, dir)? {
                return waiting.print(ctx, "unqueued", Some(queued)).map(Some);
            }
        }
        Some(QueuedGoalCommand::Get) | None => {}
    }
    let queued = host_session::queued_goal(&mut store, host, dir)?.map_or_else(String::new, |g| {
        format!(
            "; the next one there gets the goal queued for it: {}",
            crate::sanitize::one_line(&g.objective)
        )
    });
    super::output::note(format_args!(
        "the last {host} session in {shown}, {}, has ended; this acts on it (only `goal set` waits for the next session){queued}",
        ended.as_str()
    ));
    Ok(None)
}

/// A goal command that a queued goal answers.
enum QueuedGoalCommand<'a> {
    Set(&'a NewGoal),
    Get,
    Drop,
}

fn queued_goal_command(command: &Command) -> Option<QueuedGoalCommand<'_>> {
    let Command::Goal(GoalArgs { command }) = command else {
        return None;
    };
    match command {
        Some(GoalCommand::Set(new)) => Some(QueuedGoalCommand::Set(new)),
        None | Some(GoalCommand::Get) => Some(QueuedGoalCommand::Get),
        Some(GoalCommand::Drop) => Some(QueuedGoalCommand::Drop),
        Some(_) => None,
    }
}

/// `goal set`'s operation, checked.
fn new_goal(new: &NewGoal) -> Result<GoalOp, Error> {
    Ok(GoalOp::Set {
        objective: checked_objective(&new.objective.join(" "))?,
        budget: new.budget,
        checks: checked_commands(&new.checks)?,
    })
}

/// The next session HOST starts in `dir`, which a goal waits for: none has
/// run there yet, or the last one (`ended`) has ended.
struct Waiting<'a> {
    host: Host,
    dir: &'a Path,
    ended: Option<&'a SessionId>,
}

impl Waiting<'_> {
    /// Queues `new` for the next session, replacing a goal queued before.
    fn queue(&self, ctx: &Context, new: &NewGoal) -> Result<Outcome, Error> {
        let queued = QueuedGoal {
            objective: checked_objective(&new.objective.join(" "))?,
            budget: new.budget,
            checks: checked_commands(&new.checks)?,
        };
        host_session::queue_goal(&mut ctx.store()?, self.host, self.dir, &queued, ctx.now_ms)?;
        self.print(ctx, "queued", Some(queued))
    }

    /// Shows the goal `queued` (or that there is none); `verb` says what
    /// happened to it.
    fn print(
        &self,
        ctx: &Context,
        verb: &str,
        queued: Option<QueuedGoal>,
    ) -> Result<Outcome, Error> {
        let (host, shown) = (self.host, self.dir.display());
        if ctx.json {
            let mut json =
                serde_json::json!({"host": host.as_str(), "dir": shown.to_string(), verb: queued});
            if let Some(ended) = self.ended {
                json["ended"] = ended.as_str().into();
            }
            print_json(&json);
            return Ok(Outcome::Success);
        }
        let why = match self.ended {
            Some(ended) => format!("the last one there, {}, has ended", ended.as_str()),
            None => "none has run there yet".to_owned(),
        };
        match queued {
            Some(goal) => {
                let budget = goal
                    .budget
                    .map_or_else(|| "no budget".to_owned(), |b| format!("budget {b} tokens"));
                let when = if verb == "unqueued" {
                    "Removed the goal queued for"
                } else {
                    "Queued for"
                };
                out!(
                    "{when} the next {host} session in {shown} ({why}): {} ({budget}).",
                    crate::sanitize::one_line(&goal.objective)
                );
            }
            None => out!("No goal is queued for the next {host} session in {shown} ({why})."),
        }
        Ok(Outcome::Success)
    }
}
