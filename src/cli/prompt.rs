//! `goalkeeper context`, `continuation`, `todo context` and
//! `prompt render`: printing the hidden messages an agent receives.

use crate::Error;
use crate::integrations::claude_code::Acts;
use crate::prompt::{BUILTIN, Gate, HiddenMessage};
use crate::turn::{self, Continuation};
use clap::{Args, Subcommand};

use super::context::{ActiveTools, Context, Outcome};
use super::print_json;

#[derive(Debug, Args)]
pub(crate) struct ContextArgs {
    #[command(flatten)]
    pub(super) tools: ActiveTools,
    /// Say on stderr which gate kept a message (or the todo block) out
    #[arg(long)]
    pub(super) explain: bool,
}

#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub(crate) enum PromptCommand {
    /// Render one template with JSON data
    Render {
        /// The template name, e.g. goal-todo-context or tools/todo
        name: String,
        /// The data, a JSON object
        #[arg(long, default_value = "{}")]
        data: String,
    },
    /// List the template names
    List,
}

impl PromptCommand {
    /// Whom the command acts as (`cli/acting.rs`): it only renders.
    pub(crate) fn acts(&self) -> Acts {
        match self {
            PromptCommand::Render { .. } | PromptCommand::List => Acts::Nobody,
        }
    }
}

/// `context`: the goal-mode-context message, or nothing when a gate is closed.
pub(crate) fn context(ctx: &Context, args: &ContextArgs) -> Result<Outcome, Error> {
    let tools = args.tools.names();
    let injector = ctx.injector_for(&tools)?;
    let mut store = ctx.store()?;
    // One transaction: the memory file goes first, once per session. Only
    // its delivery writes (a mark); otherwise this is a read, which takes
    // no write lock and never waits behind a writer. Without a memory file
    // nothing is due, and nothing needs reading to know it.
    let caller = ctx.caller()?;
    let due = injector.settings().memory.file.is_some()
        && store.read(&ctx.session, |tx| turn::memory_due(tx, &injector))?;
    let steps = |tx: &crate::store::SessionTx<'_>| {
        let (memory, note) = turn::memory(tx, &injector, ctx.now_ms)?;
        // The list is read once, for the message and for `--explain`: of a
        // long list, only what the bounded block shows.
        let list = tx.todo_listed(injector.max_tasks())?;
        let goal = tx.goal()?;
        let proof = match &goal {
            Some(g) if g.status == crate::goal::GoalStatus::Active => tx.checks(&caller)?.proof(),
            _ => crate::check::Proof::default(),
        };
        let message =
            injector.goal_mode_context_checked(goal.as_ref(), &list, &tools, &proof, ctx.now_ms)?;
        Ok((memory, note, list, message))
    };
    let (memory, note, list, message) = if due {
        store.write(&ctx.session, steps)?
    } else {
        store.read(&ctx.session, steps)?
    };
    if let Some(note) = note {
        note!("{note}");
    }
    if let Some(memory) = &memory {
        print_message(ctx, memory);
        if message.is_ok() && !ctx.json {
            out!("");
        }
    }
    match message {
        Ok(message) => {
            if args.explain {
                match injector.todo_block(&list, &tools)? {
                    Ok(_) => note!("goal-mode context with the todo block"),
                    Err(gate) => {
                        note!("goal-mode context without the todo block: {gate}")
                    }
                }
            }
            print_message(ctx, &message);
        }
        Err(gate) => explain(args.explain, "goal-mode context", gate),
    }
    // The process ends after this command, and its exit frees the list (a
    // String per task shown, 200 of a long list) as it frees the store's
    // memory (`Store::exits_with_process`).
    std::mem::forget(list);
    Ok(Outcome::Success)
}

/// `continuation`: the continuation steer, the pending budget-limit
/// wrap-up, a note that the runaway guard paused the goal, or nothing.
pub(crate) fn continuation(ctx: &Context, args: &ContextArgs) -> Result<Outcome, Error> {
    let tools = args.tools.names();
    let injector = ctx.injector_for(&tools)?;
    let mut store = ctx.store()?;
    let caller = ctx.caller()?;
    let next = store.write(&ctx.session, |tx| {
        turn::continuation(tx, &caller, &injector, &tools, ctx.now_ms)
    })?;
    match next {
        Continuation::Message(message) => print_message(ctx, &message),
        Continuation::Paused(text) => {
            if ctx.json {
                print_json(&serde_json::json!({"paused": true, "reason": text}));
            } else {
                out!("{text}");
            }
        }
        Continuation::Closed(gate) => explain(args.explain, "continuation", gate),
    }
    Ok(Outcome::Success)
}

/// `todo context`: the bare `<todo_context>` block.
pub(crate) fn todo_context(ctx: &Context, args: &ContextArgs) -> Result<Outcome, Error> {
    let tools = args.tools.names();
    let injector = ctx.injector_for(&tools)?;
    let list = ctx
        .store()?
        .read(&ctx.session, |tx| tx.todo_listed(injector.max_tasks()))?;
    match injector.todo_context_message(&list, &tools, ctx.now_ms)? {
        Ok(message) => print_message(ctx, &message),
        Err(gate) => explain(args.explain, "todo context", gate),
    }
    Ok(Outcome::Success)
}

pub(crate) fn run(ctx: &Context, command: PromptCommand) -> Result<Outcome, Error> {
    match command {
        PromptCommand::Render { name, data } => {
            let data: serde_json::Value = serde_json::from_str(&data).map_err(|e| {
                Error::Usage(format!(
                    "--data is not valid JSON ({e}); give an object such as '{{\"error\": \"x\"}}'"
                ))
            })?;
            let text = ctx.injector()?.templates().render(&name, &data)?;
            if ctx.json {
                print_json(&serde_json::json!({"name": name, "text": text}));
            } else {
                out!("{text}");
            }
        }
        PromptCommand::List => {
            let names: Vec<&str> = BUILTIN.iter().map(|(name, _)| *name).collect();
            if ctx.json {
                print_json(&names);
            } else {
                for name in names {
                    out!("{name}");
                }
            }
        }
    }
    Ok(Outcome::Success)
}

fn print_message(ctx: &Context, message: &HiddenMessage) {
    if ctx.json {
        print_json(message);
    } else {
        super::write_stdout_line(&message.content);
    }
}

fn explain(explain: bool, what: &str, gate: Gate) {
    if explain {
        note!("no {what}: {gate}");
    }
}
