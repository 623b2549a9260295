//! `goalkeeper todo ...`: the agent's tool call (`apply`), the user's
//! subcommands, markdown export/import, the event log and undo.

use std::path::{Path, PathBuf};

use crate::integrations::claude_code::Acts;
use crate::todo::{
    Actor, Call, MAIN, MAX_CALL_BYTES, Op, Release, ViewPage, from_markdown, to_markdown,
};
use crate::user_files::UserDir;
use crate::{AgentName, Error};
use clap::{ArgMatches, Args, Subcommand};
use serde_json::{Map, Value, json};

use super::context::{Context, Outcome};
use super::{print_json, print_result, read_stdin};

#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub(crate) enum TodoCommand {
    /// Run one `todo` tool call as the agent: JSON argument, or stdin with `-` or nothing
    Apply {
        /// The call, e.g. '{"op":"done","task":"Run tests"}'; `-` reads stdin
        #[arg(value_name = "JSON")]
        call: Option<String>,
    },
    /// Replace the list: --phase P --item T ... (repeat --phase to start the next phase)
    Init {
        /// Starts a phase; the items after it belong to it [default phase: Tasks]
        #[arg(long = "phase", value_name = "PHASE")]
        phases: Vec<String>,
        /// A task of the current phase
        #[arg(long = "item", value_name = "TASK", required = true)]
        items: Vec<String>,
    },
    /// Make a task the one in progress
    Start {
        /// The task's exact content
        task: String,
    },
    /// Complete a task, a phase, or (with neither) every task
    Done(TargetArgs),
    /// Abandon a task, a phase, or every task (stamped as dropped by you)
    Drop(TargetArgs),
    /// Delete a task, empty a phase, or empty every phase
    Rm(TargetArgs),
    /// Mark a task or a phase blocked, with an optional reason or the task it waits for
    Block {
        #[command(flatten)]
        target: TargetArgs,
        /// What it waits for (one line)
        #[arg(long, conflicts_with = "after")]
        reason: Option<String>,
        /// The task it waits for: completing that task unblocks it
        #[arg(long, value_name = "TASK")]
        after: Option<String>,
    },
    /// Free a task an agent holds, or with --agent NAME every task that agent holds
    Release {
        /// The task's exact content
        task: Option<String>,
    },
    /// Set a task's check: a shell command that must pass for the agent's `done`
    /// (--clear removes it)
    Check {
        /// The task's exact content
        task: String,
        /// The command, one line of shell (several words are joined with spaces)
        #[arg(
            num_args = 1..,
            allow_hyphen_values = true,
            required_unless_present = "clear",
            conflicts_with = "clear",
            value_name = "CMD"
        )]
        command: Vec<String>,
        /// Remove the task's check
        #[arg(long)]
        clear: bool,
    },
    /// Clear the block on a task or a phase
    Unblock(TargetArgs),
    /// Add tasks to a phase, creating it at the end if missing
    Append {
        /// The phase
        #[arg(long)]
        phase: String,
        /// A task to add (repeatable)
        #[arg(long = "item", value_name = "TASK", required = true)]
        items: Vec<String>,
    },
    /// Show the list
    View,
    /// Print the bare <todo_context> block (for hosts that inject without a goal)
    Context(super::prompt::ContextArgs),
    /// Write the list as markdown [default: TODO.md; `-` for stdout]
    Export {
        /// The file to write
        path: Option<PathBuf>,
        /// Replace a file goalkeeper did not write (it is kept as a backup)
        #[arg(long)]
        force: bool,
    },
    /// Replace the list with a markdown file [default: TODO.md; `-` for stdin]
    Import {
        /// The file to read
        path: Option<PathBuf>,
    },
    /// Show the event log of the session
    Log {
        /// How many of the latest events to show
        #[arg(long, default_value_t = 20)]
        limit: usize,
    },
    /// Restore the list as it was before the last change
    Undo,
}

impl TodoCommand {
    /// Whom the command acts as (`cli/acting.rs`): `apply` is the agent's
    /// tool call; every other change is the person's (who may reopen or
    /// take any task).
    pub(crate) fn acts(&self) -> Acts {
        match self {
            TodoCommand::Apply { .. } => Acts::Agent,
            TodoCommand::View
            | TodoCommand::Context(_)
            | TodoCommand::Export { .. }
            | TodoCommand::Log { .. } => Acts::Nobody,
            TodoCommand::Init { .. }
            | TodoCommand::Start { .. }
            | TodoCommand::Done(_)
            | TodoCommand::Drop(_)
            | TodoCommand::Rm(_)
            | TodoCommand::Block { .. }
            | TodoCommand::Release { .. }
            | TodoCommand::Unblock(_)
            | TodoCommand::Append { .. }
            | TodoCommand::Import { .. }
            | TodoCommand::Check { .. }
            | TodoCommand::Undo => Acts::Person,
        }
    }
}

// A task (positional or `--task`) or a `--phase`; neither means every task
// where the op allows it. (A plain comment: a doc comment here would become
// the help text of every command that flattens these arguments, since
// their arguments are built after the command's own text; see `Command`.)
#[derive(Debug, Args)]
pub(crate) struct TargetArgs {
    /// The task's exact content
    #[arg(conflicts_with_all = ["task_flag", "phase"])]
    task: Option<String>,
    /// The task's exact content (same as the positional TASK)
    #[arg(
        long = "task",
        id = "task_flag",
        value_name = "TASK",
        conflicts_with = "phase"
    )]
    task_flag: Option<String>,
    /// Every task of this phase
    #[arg(long)]
    phase: Option<String>,
}

impl TargetArgs {
    fn into_call(self, op: &str) -> Map<String, Value> {
        let mut call = Map::new();
        call.insert("op".into(), op.into());
        if let Some(task) = self.task.or(self.task_flag) {
            call.insert("task".into(), task.into());
        }
        if let Some(phase) = self.phase {
            call.insert("phase".into(), phase.into());
        }
        call
    }
}

pub(crate) fn run(
    ctx: &Context,
    command: TodoCommand,
    matches: Option<&ArgMatches>,
) -> Result<Outcome, Error> {
    // `apply` acts as the agent, everything else as the person: the rule
    // the Bash guard reads too.
    let actor = command.acts().actor();
    let user_call = match command {
        TodoCommand::Apply { call } => {
            let text = match call.as_deref() {
                None | Some("-") => read_stdin()?,
                Some(text) => text.to_owned(),
            };
            return print_call(ctx, Call::Json(&text), actor);
        }
        TodoCommand::Init { phases, items } => init_call(phases, items, matches),
        TodoCommand::Start { task } => json!({"op": "start", "task": task}),
        TodoCommand::Done(target) => Value::Object(target.into_call("done")),
        TodoCommand::Drop(target) => Value::Object(target.into_call("drop")),
        TodoCommand::Rm(target) => Value::Object(target.into_call("rm")),
        TodoCommand::Block {
            target,
            reason,
            after,
        } => {
            let mut call = target.into_call("block");
            if let Some(reason) = reason {
                call.insert("reason".into(), reason.into());
            }
            if let Some(after) = after {
                call.insert("after".into(), after.into());
            }
            Value::Object(call)
        }
        TodoCommand::Release { task } => {
            let what = match (task, ctx.agent_named_by) {
                (Some(task), None) => Release::Task(task),
                // `release TASK` frees the task whoever holds it: an agent
                // named beside it would be a condition nobody checks.
                (Some(_), Some(named_by)) => {
                    let agent = ctx.agent.as_ref().map_or(MAIN, AgentName::as_str);
                    let (named, unname) = if named_by == "--agent" {
                        (format!("--agent {agent}"), "leave out --agent")
                    } else {
                        (
                            format!("GOALKEEPER_AGENT={agent}"),
                            "unset GOALKEEPER_AGENT",
                        )
                    };
                    return Err(Error::Usage(format!(
                        "`todo release` takes a TASK or an agent ({named}), not both; nothing was released. \
                         To free the task whoever holds it, {unname}; to free every task {agent} holds, give no TASK"
                    )));
                }
                (None, Some(_)) => Release::Agent(
                    ctx.agent
                        .as_ref()
                        .map_or(MAIN, AgentName::as_str)
                        .to_owned(),
                ),
                (None, None) => {
                    return Err(Error::Usage(
                        "`todo release` needs the TASK to free, or --agent NAME to free every task that agent holds".into(),
                    ));
                }
            };
            let op = Op::Release(what);
            return print_call(ctx, Call::Op(&op), actor);
        }
        TodoCommand::Check {
            task,
            command,
            clear,
        } => {
            let command = if clear {
                None
            } else {
                Some(super::goal::checked_command(&command.join(" "))?)
            };
            let task = crate::todo::text::task_content(&task).map_err(Error::Usage)?;
            let op = Op::Check(task, command);
            return print_call(ctx, Call::Op(&op), Actor::User);
        }
        TodoCommand::Unblock(target) => Value::Object(target.into_call("unblock")),
        TodoCommand::Append { phase, items } => {
            json!({"op": "append", "phase": phase, "items": items})
        }
        // The text alone is read from what the page shows (the JSON
        // result carries the whole list, so it reads the whole list).
        TodoCommand::View if !ctx.json => {
            let caller = ctx.caller()?;
            let (text, is_error) = ctx.store()?.read(&ctx.session, |tx| {
                tx.todo_view(&ViewPage::first(), &caller, ctx.now_ms)
            })?;
            out!("{text}");
            return Ok(if is_error {
                Outcome::Rejected
            } else {
                Outcome::Success
            });
        }
        TodoCommand::View => json!({"op": "view"}),
        TodoCommand::Context(args) => return super::prompt::todo_context(ctx, &args),
        TodoCommand::Export { path, force } => return export(ctx, path, force),
        TodoCommand::Import { path } => return import(ctx, path),
        TodoCommand::Log { limit } => return log(ctx, limit),
        TodoCommand::Undo => {
            let result = ctx
                .store()?
                .write(&ctx.session, |tx| tx.todo_undo(ctx.now_ms))?;
            return Ok(print_result(ctx, result));
        }
    };
    print_call(ctx, Call::Value(&user_call), actor)
}

/// Runs one todo call and prints its result: the text alone, which
/// [`crate::Store::todo_answer`] can often answer without reading the
/// whole list, unless `--json` asks for the result with the list.
fn print_call(ctx: &Context, call: Call<'_>, actor: Actor) -> Result<Outcome, Error> {
    let mut store = ctx.store()?;
    let caller = &mut ctx.caller()?;
    if ctx.json {
        let result = store.todo(&ctx.session, call, actor, caller, ctx.now_ms)?;
        return Ok(print_result(ctx, result));
    }
    let answer = store.todo_answer(&ctx.session, call, actor, caller, ctx.now_ms)?;
    let (text, is_error) = (answer.text, answer.is_error);
    out!("{text}");
    Ok(if is_error {
        Outcome::Rejected
    } else {
        Outcome::Success
    })
}

/// Rebuilds the interleaving of `--phase` and `--item` from their argument
/// positions: each item belongs to the last `--phase` before it; items
/// before any `--phase` go to `Tasks`.
fn init_call(phases: Vec<String>, items: Vec<String>, matches: Option<&ArgMatches>) -> Value {
    let indices = |id: &str| -> Vec<usize> {
        matches
            .and_then(|m| m.indices_of(id))
            .map(Iterator::collect)
            .unwrap_or_default()
    };
    let mut tokens: Vec<(usize, bool, String)> = Vec::new();
    tokens.extend(
        indices("phases")
            .into_iter()
            .zip(phases)
            .map(|(i, p)| (i, true, p)),
    );
    tokens.extend(
        indices("items")
            .into_iter()
            .zip(items)
            .map(|(i, t)| (i, false, t)),
    );
    tokens.sort_by_key(|(i, _, _)| *i);
    let mut list: Vec<(String, Vec<String>)> = Vec::new();
    for (_, is_phase, text) in tokens {
        if is_phase {
            list.push((text, Vec::new()));
        } else {
            match list.last_mut() {
                Some((_, entries)) => entries.push(text),
                None => list.push(("Tasks".to_owned(), vec![text])),
            }
        }
    }
    let list: Vec<Value> = list
        .into_iter()
        .map(|(phase, items)| json!({"phase": phase, "items": items}))
        .collect();
    json!({"op": "init", "list": list})
}

/// `todo export`: the list as markdown, with a provenance comment on top.
///
/// The file is written through [`UserDir`] (DESIGN.md §12). A file that does not
/// start with that comment was not written by goalkeeper (a hand-written
/// TODO.md): it is replaced only with `--force`. Either way the old file is
/// kept as `<name>.bak-<stamp>` before it is replaced.
fn export(ctx: &Context, path: Option<PathBuf>, force: bool) -> Result<Outcome, Error> {
    let path = path.unwrap_or_else(|| PathBuf::from(DEFAULT_MARKDOWN));
    let (list, version) = ctx.store()?.read(&ctx.session, |tx| tx.todo_list())?;
    let text = format!(
        "{EXPORT_MARK} session {}, version {version} -->\n\n{}",
        ctx.session,
        to_markdown(&list)
    );
    if path.as_os_str() == "-" {
        super::write_stdout_raw(&text);
        return Ok(Outcome::Success);
    }
    let (Some(name), parent) = (path.file_name(), path.parent()) else {
        return Err(Error::Usage(format!(
            "{} names no file; give a file path such as TODO.md",
            path.display()
        )));
    };
    let parent = match parent {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let dir = UserDir::lock(parent).map_err(|e| match e {
        Error::Usage(why) => Error::Usage(format!("cannot write {}: {why}", path.display())),
        e => e,
    })?;
    let existing = dir.read(Path::new(name))?;
    if let Some(file) = &existing
        && !force
        && !file.bytes().starts_with(EXPORT_MARK.as_bytes())
    {
        return Err(Error::Rejected(format!(
            "{} was not written by goalkeeper (it does not start with `{EXPORT_MARK}`), so it was left as it was; \
             pass --force to replace it (the old file is kept as a backup), or export to another path",
            path.display()
        )));
    }
    let stamp = crate::time::utc_stamp(ctx.now_ms);
    let done = dir.replace(Path::new(name), text.as_bytes(), existing.as_ref(), &stamp)?;
    let backup = done.backup;
    let counts = list.counts();
    if ctx.json {
        print_json(
            &json!({"path": path, "version": version, "tasks": counts.total, "phases": list.phases.len(), "backup": backup}),
        );
    } else {
        out!(
            "Exported {} tasks in {} phases (version {version}) to {}.",
            counts.total,
            list.phases.len(),
            path.display()
        );
        if let Some(backup) = backup {
            out!("The previous file was kept as {}.", backup.display());
        }
    }
    Ok(Outcome::Success)
}

/// How every exported file starts: what tells goalkeeper's own file from a
/// hand-written one.
const EXPORT_MARK: &str = "<!-- goalkeeper export:";

/// `todo import`: replaces the list with a markdown file, as the user.
/// Any problem in the file rejects the whole import.
fn import(ctx: &Context, path: Option<PathBuf>) -> Result<Outcome, Error> {
    let path = path.unwrap_or_else(|| PathBuf::from(DEFAULT_MARKDOWN));
    let (text, source) = if path.as_os_str() == "-" {
        (read_stdin()?, "stdin".to_owned())
    } else {
        let bytes = read_markdown_file(&path)?;
        let text = String::from_utf8(bytes).map_err(|e| {
            Error::Rejected(format!(
                "cannot import {}: it is not UTF-8 text (invalid byte at offset {}); nothing was imported",
                path.display(),
                e.utf8_error().valid_up_to()
            ))
        })?;
        (text, path.display().to_string())
    };
    let list = from_markdown(&text).map_err(|errors| {
        let errors: Vec<String> = errors.iter().map(ToString::to_string).collect();
        Error::Rejected(format!(
            "cannot import {source}: {}; nothing was imported",
            errors.join("; ")
        ))
    })?;
    // A claim the file names is granted the person's lease from its time.
    let mut store = ctx.store()?;
    let mut caller = ctx.caller()?;
    caller.act_as(ctx.agent.clone(), ctx.settings()?.todo.claim.lease);
    let result = store.write(&ctx.session, |tx| {
        tx.todo_import(list, &source, &caller, ctx.now_ms)
    })?;
    Ok(print_result(ctx, result))
}

/// The bytes of a markdown file to import: a regular file of at most 1 MiB,
/// the limit of a call on stdin. Anything else (a FIFO, which would block
/// until a writer comes, `/dev/zero`, a directory) is refused before a
/// byte is read, and a larger file after 1 MiB + 1 bytes.
fn read_markdown_file(path: &Path) -> Result<Vec<u8>, Error> {
    use std::io::Read;

    use rustix::fs::{FileType, Mode, OFlags};
    let cannot = |e: std::io::Error| Error::Usage(format!("cannot read {}: {e}", path.display()));
    let fd = rustix::fs::open(
        path,
        OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| cannot(e.into()))?;
    let stat = rustix::fs::fstat(&fd).map_err(|e| cannot(e.into()))?;
    if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile {
        return Err(Error::Usage(format!(
            "cannot import {}: it is not a regular file; to import from a pipe, use `todo import -` (nothing was imported)",
            path.display()
        )));
    }
    let mut bytes = Vec::new();
    std::fs::File::from(fd)
        .take(MAX_CALL_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(cannot)?;
    if bytes.len() > MAX_CALL_BYTES {
        return Err(Error::Usage(format!(
            "cannot import {}: it is larger than {MAX_CALL_BYTES} bytes (1 MiB), the limit of an import; split the list (nothing was imported)",
            path.display()
        )));
    }
    Ok(bytes)
}

/// The markdown file `export` and `import` use when no path is given.
const DEFAULT_MARKDOWN: &str = "TODO.md";

fn log(ctx: &Context, limit: usize) -> Result<Outcome, Error> {
    let events = ctx.store()?.read(&ctx.session, |tx| tx.event_log(limit))?;
    if ctx.json {
        print_json(&events);
        return Ok(Outcome::Success);
    }
    if events.is_empty() {
        out!("No events in session {}.", ctx.session);
    }
    for event in &events {
        let when = crate::time::utc_datetime(event.at_ms);
        let op = event.op.as_deref().unwrap_or("?");
        let payload = match &event.payload {
            Value::String(raw) => raw.clone(),
            other => other.to_string(),
        };
        let payload = crate::sanitize::one_line(&payload).into_owned();
        // The named agent that made the call: `agent (w2)`.
        let actor = match &event.agent {
            Some(agent) => format!("{} ({})", event.actor, crate::sanitize::one_line(agent)),
            None => event.actor.clone(),
        };
        match (&event.error, event.version) {
            (Some(error), _) => out!(
                "#{} {when} {actor} {op} REJECTED: {} -- {payload}",
                event.id,
                crate::sanitize::one_line(error)
            ),
            (None, Some(version)) => {
                out!("#{} {when} {actor} {op} -> v{version} {payload}", event.id)
            }
            (None, None) => out!("#{} {when} {actor} {op} {payload}", event.id),
        }
    }
    Ok(Outcome::Success)
}
