//! The command-line shell: argument parsing, one file per command group,
//! printing, and the mapping from library errors to exit codes.

/// `println!` that ignores a closed stdout (`goalkeeper ... | head`): the
/// reader is gone, so there is no one left to tell. The text goes through
/// the terminal rule of DESIGN.md §3.2 ([`sanitize::terminal`]).
///
/// [`sanitize::terminal`]: crate::sanitize::terminal
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::cli::output::write_stdout(format_args!($($arg)*))
    };
}

/// `eprintln!("goalkeeper: …")` that ignores a closed stderr (a hook whose
/// host closed it must not panic) and applies the same terminal rule.
macro_rules! note {
    ($($arg:tt)*) => {
        $crate::cli::output::write_stderr(format_args!($($arg)*))
    };
}

mod acting;
mod backup;
mod context;
mod fast;
mod goal;
mod hint;
mod hook_wait;
mod integrations;
#[cfg(feature = "mcp")]
mod mcp;
mod output;
mod parse;
mod prompt;
mod resources;
mod session;
mod todo;
mod tour;
mod variables;
mod verify;
#[cfg(feature = "watch")]
mod watch;

use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;

use crate::integrations::host_session::{self, Host};
use crate::settings::Settings;
use crate::{AgentName, Error, ErrorKind, SessionId};
use clap::{ArgMatches, Parser, Subcommand};
use context::{Context, Outcome, current_dir, location_of, now_ms};
use hint::Hinted;
pub(crate) use output::note;
use output::{print_json, print_result, read_stdin};
pub(crate) use output::{write_stdout_line, write_stdout_raw};

/// Exit code of a rejected operation (the result is still printed).
pub(crate) const EXIT_REJECTED: u8 = 1;
/// Exit code of a usage error.
pub(crate) const EXIT_USAGE: u8 = 2;
/// Exit code of a storage error.
pub(crate) const EXIT_STORAGE: u8 = 3;

/// goalkeeper keeps a coding agent on its goal: a phased todo list and a
/// goal per session, stored in SQLite, and the hidden prompts that steer
/// the agent.
/// The heading the options every command takes are listed under, in the
/// help of every command.
const GLOBAL_OPTIONS: &str = "Global Options";

#[derive(Debug, Parser)]
#[command(name = "goalkeeper", version, about, max_term_width = 100)]
pub(crate) struct Cli {
    // The variables behind --db, --session and --agent are read after
    // parsing (`variables`), not by clap.
    /// The database: a SQLite file, or a postgres://user@host/db URL
    /// [default: $GOALKEEPER_DB, else a file in the platform data dir]
    #[arg(long, global = true, help_heading = GLOBAL_OPTIONS, value_name = "PATH|URL")]
    db: Option<PathBuf>,

    /// The session (one agent conversation) [default: $GOALKEEPER_SESSION,
    /// else `default`]
    #[arg(long, global = true, help_heading = GLOBAL_OPTIONS, value_name = "ID")]
    session: Option<String>,

    /// Act on the session HOST last ran in the current directory instead
    /// (claude-code, gemini-cli, codex, pi); `goal set` queues the goal for
    /// HOST's next session there when none ran yet
    #[arg(long, global = true, help_heading = GLOBAL_OPTIONS, value_name = "HOST", value_parser = parse_host)]
    session_from: Option<Host>,

    /// The agent making the todo calls of `todo apply` and `mcp`, one of
    /// several sharing the session's list [default: $GOALKEEPER_AGENT,
    /// else the session's own agent, `main`]
    #[arg(long, global = true, help_heading = GLOBAL_OPTIONS, value_name = "NAME")]
    agent: Option<String>,

    /// The settings file [default: $GOALKEEPER_CONFIG, else the platform config dir]
    #[arg(long, global = true, help_heading = GLOBAL_OPTIONS, value_name = "PATH")]
    config: Option<PathBuf>,

    /// Override one setting, e.g. --set todo.eager=always (repeatable)
    #[arg(long = "set", global = true, help_heading = GLOBAL_OPTIONS, value_name = "KEY=VALUE")]
    sets: Vec<String>,

    /// Print JSON instead of text
    #[arg(long, global = true, help_heading = GLOBAL_OPTIONS)]
    json: bool,

    #[command(subcommand)]
    command: Command,
}

/// Each command's arguments are built only when that command runs (or its
/// help is shown): a hook pays for its own arguments, not for building and
/// propagating the whole tree of every command's.
#[derive(Debug, Subcommand)]
#[command(defer = true)]
enum Command {
    /// Read and change the todo list
    #[command(subcommand)]
    Todo(todo::TodoCommand),
    /// Set, read and finish the goal; report token usage (`goal` alone shows it)
    Goal(goal::GoalArgs),
    /// Print the goal-mode context message (nothing when a gate is closed)
    Context(prompt::ContextArgs),
    /// Print the next continuation (or the budget-limit wrap-up, once)
    Continuation(prompt::ContextArgs),
    /// Render prompt templates
    #[command(subcommand)]
    Prompt(prompt::PromptCommand),
    /// List, show and remove sessions
    #[command(subcommand)]
    Session(session::SessionCommand),
    /// Serve the todo and goal tools over MCP on stdio
    #[cfg(feature = "mcp")]
    Mcp(mcp::McpArgs),
    /// Handle one hook event of a host (JSON on stdin)
    Hook(integrations::HookArgs),
    /// Print one status line (Claude Code statusLine JSON on stdin)
    Statusline,
    /// Wire goalkeeper into a host's configuration, or finish the install of its package
    Install(integrations::InstallArgs),
    /// Write goalkeeper as each host's plugin, extension and package, with this binary inside
    Package(integrations::PackageArgs),
    /// Assemble the system prompt from AGENTS.md, workspace files and skills
    SystemPrompt(resources::SystemPromptArgs),
    /// Keep AGENTS.md the single source of agent instructions
    #[command(subcommand)]
    Workspace(resources::WorkspaceCommand),
    /// A guided run of a whole goal session on a temporary database
    Tour,
    /// A live full-screen view of the goal, todos and events (--once: one frame as text)
    #[cfg(feature = "watch")]
    Watch(watch::WatchArgs),
    /// Run the goal's checks (or a task's) here and record the result
    Verify(verify::VerifyArgs),
    /// Write a consistent single-file copy of the database to a new file
    Backup(backup::BackupArgs),
    /// Copy every session of the database (--db) into another, e.g. PostgreSQL
    Migrate(backup::MigrateArgs),
}

/// Parses the arguments, runs the command and returns the exit status.
///
/// A hook or the status line (the host runs them on every event) never
/// fails the host: bad `GOALKEEPER_*` variables, a closed stderr or a panic
/// are noted on stderr when it is open, and the exit status stays 0.
pub fn main() -> u8 {
    let argv: Vec<OsString> = std::env::args_os().collect();
    // Messages name the goalkeeper the agent's shell can run (decided on
    // first use only).
    crate::check::name_program_by(crate::integrations::package::program::word);
    // `--version` alone prints what clap would, without building the
    // command tree first.
    if let [_, only] = argv.as_slice()
        && (only == "--version" || only == "-V")
    {
        let _ = writeln!(
            std::io::stdout().lock(),
            "goalkeeper {}",
            env!("CARGO_PKG_VERSION")
        );
        return 0;
    }
    let line = match parse::parse(argv) {
        Ok(line) => line,
        Err(status) => return status,
    };
    if line.cli.command.never_fails_host() {
        return run_host_event(line);
    }
    let lenient = line.cli.ignores_spoilt_variables();
    match run(line.cli, line.matches.as_ref(), lenient) {
        Ok(Outcome::Success) => 0,
        Ok(Outcome::Rejected) => EXIT_REJECTED,
        Err(e) => {
            note!("{}", Hinted(&e));
            match e.kind() {
                ErrorKind::Rejected => EXIT_REJECTED,
                ErrorKind::Usage => EXIT_USAGE,
                _ => EXIT_STORAGE,
            }
        }
    }
}

/// Runs a hook or the status line: an error or a panic is noted on stderr
/// and the exit status is 0 (see [`Command::never_fails_host`]).
fn run_host_event(line: parse::Line) -> u8 {
    std::panic::set_hook(Box::new(|info| {
        let _ = writeln!(
            std::io::stderr(),
            "goalkeeper: internal error: {info}; the hook did nothing"
        );
    }));
    // Nothing the command touched is looked at after a panic.
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        if let Err(e) = run(line.cli, line.matches.as_ref(), true) {
            note(format!("{}; the hook did nothing", Hinted(&e)));
        }
    }));
    0
}

fn parse_host(name: &str) -> Result<Host, String> {
    Host::parse(name).ok_or_else(|| {
        let names: Vec<&str> = Host::ALL.iter().map(|h| h.as_str()).collect();
        format!("unknown host {name:?}; the hosts are {}", names.join(", "))
    })
}

/// `matches`: clap's, when clap parsed the line (`todo init` reads the
/// order of its options from them, `watch` whether `--session` was given).
fn run(cli: Cli, matches: Option<&ArgMatches>, lenient: bool) -> Result<Outcome, Error> {
    // A hook takes its session from the host's event and can read the
    // system clock: bad values are noted and passed over, not fatal.
    let session = variables::resolve(
        cli.session.as_deref(),
        "--session",
        variables::SESSION,
        "a session id",
        SessionId::parse,
    );
    let session = passed_over(session, lenient)?;
    // `verify` acts on the session a host's shell names only when neither
    // `--session` nor `$GOALKEEPER_SESSION` gave one.
    let session_given = session.is_some();
    let session = session.unwrap_or_default();
    let now_ms = match now_ms() {
        Ok(now) => now,
        Err(e) if lenient => {
            note(format!("{e}; using the system clock"));
            crate::time::system_now_ms()
        }
        Err(e) => return Err(e),
    };
    let agent_named_by = if cli.agent.is_some() {
        "--agent"
    } else {
        variables::AGENT
    };
    let named = variables::resolve(
        cli.agent.as_deref(),
        "--agent",
        variables::AGENT,
        "an agent name",
        AgentName::parse,
    );
    let named = passed_over(named, lenient)?;
    // An explicit database, from the line or the variable (never the
    // default location, whose directory a first run creates), read here
    // once: a value that is no database is refused by every command, as a
    // bad `--set` is, before anything runs.
    let db = match variables::db(cli.db, location_of) {
        Ok(db) => db,
        Err(spoilt) => return refused_before_start(spoilt.into_error(), &cli.command),
    };
    let mut ctx = Context {
        db,
        session,
        session_from: cli.session_from,
        agent_named_by: named.is_some().then_some(agent_named_by),
        agent: named.flatten(),
        config: cli.config,
        sets: cli.sets,
        json: cli.json,
        now_ms,
        #[cfg(feature = "postgres")]
        host_event: cli.command.never_fails_host(),
        may_create: cli.command.may_create_database(),
    };
    // DESIGN.md §6: a `--set` that names no setting, or gives a wrong value, is
    // an error in every command, even one that reads no setting. Hooks and
    // the status line never fail the host: they say so and do nothing.
    if let Err(e) = Settings::load_from(None, &ctx.sets) {
        return refused_before_start(e, &cli.command);
    }
    if let Some(host) = ctx.session_from
        && !follows_host_itself(&cli.command)
    {
        let dir = current_dir()?;
        match host_session::last(&mut ctx.store()?, host, &dir)? {
            Some(session) => ctx.session = session,
            None => return goal::without_host_session(&ctx, host, &dir, &cli.command),
        }
    }
    let sub = |name: &str| {
        matches?
            .subcommand_matches(name)
            .and_then(ArgMatches::subcommand)
            .map(|(_, m)| m)
    };
    match cli.command {
        Command::Todo(command) => todo::run(&ctx, command, sub("todo")),
        Command::Goal(args) => goal::run(&ctx, args.command.unwrap_or(goal::GoalCommand::Get)),
        Command::Context(args) => prompt::context(&ctx, &args),
        Command::Continuation(args) => prompt::continuation(&ctx, &args),
        Command::Prompt(command) => prompt::run(&ctx, command),
        Command::Session(command) => session::run(&ctx, command),
        #[cfg(feature = "mcp")]
        Command::Mcp(args) => mcp::run(&ctx, args),
        Command::SystemPrompt(args) => resources::system_prompt(&ctx, args),
        Command::Workspace(command) => resources::workspace(&ctx, command),
        Command::Tour => tour::run(&ctx),
        Command::Hook(command) => integrations::hook(&ctx, command, acting::read),
        Command::Statusline => integrations::statusline(&ctx),
        Command::Install(command) => integrations::install(&ctx, command),
        Command::Package(args) => integrations::package(&ctx, args),
        #[cfg(feature = "watch")]
        Command::Watch(args) => watch::run(&ctx, args, cli.session.is_some()),
        Command::Verify(args) => verify::run(&ctx, args, session_given),
        Command::Backup(args) => backup::run(&ctx, args),
        Command::Migrate(args) => backup::migrate(&ctx, args),
    }
}

/// A command line refused before the command ran: an error, except in a
/// hook or the status line, which never fail the host: they say so and do
/// nothing.
fn refused_before_start(e: Error, command: &Command) -> Result<Outcome, Error> {
    match command {
        Command::Hook(_) | Command::Statusline => {
            note!("{e}; nothing was done");
            Ok(Outcome::Success)
        }
        _ => Err(e),
    }
}

/// A global option's value, or, when it cannot be used, no value and a
/// note (a lenient command) or the error (any other).
fn passed_over<T>(
    value: Result<Option<T>, variables::Spoilt>,
    lenient: bool,
) -> Result<Option<T>, Error> {
    match value {
        Ok(value) => Ok(value),
        Err(spoilt) if lenient => {
            note(spoilt.note());
            Ok(None)
        }
        Err(spoilt) => Err(spoilt.into_error()),
    }
}

/// Commands that resolve `--session-from` themselves, again and again: the
/// MCP server (its host tells it the session) and `watch` (which follows
/// the host to its next session).
fn follows_host_itself(command: &Command) -> bool {
    match command {
        #[cfg(feature = "mcp")]
        Command::Mcp(_) => true,
        #[cfg(feature = "watch")]
        Command::Watch(_) => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    /// Every command's help lists the global options under their own
    /// heading, after its own options.
    #[test]
    fn every_help_lists_the_global_options_under_their_heading() {
        fn check(command: &mut clap::Command, path: &str) {
            let help = command.render_help().to_string();
            let at = help
                .find("Global Options:")
                .unwrap_or_else(|| panic!("{path}: no Global Options heading:\n{help}"));
            for flag in [
                "--db",
                "--session <ID>",
                "--session-from",
                "--config",
                "--set",
                "--json",
            ] {
                let found = help[at..].find(flag);
                assert!(
                    found.is_some(),
                    "{path}: {flag} is not under Global Options:\n{help}"
                );
            }
            // clap's own `help` subcommand takes no options.
            for sub in command
                .get_subcommands_mut()
                .filter(|s| s.get_name() != "help")
            {
                let name = format!("{path} {}", sub.get_name());
                check(sub, &name);
            }
        }
        let mut cli = super::Cli::command();
        cli.build();
        check(&mut cli, "goalkeeper");
    }
}
