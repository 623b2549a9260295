//! The command-line shell: argument parsing, one file per command group,
//! printing, and the mapping from library errors to exit codes.

mod mcp;
mod session;
mod todo;

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{ArgMatches, Parser, Subcommand};
use goalkeeper::{Error, ErrorKind, SessionId, Store};

/// Exit code of a rejected operation (the result is still printed).
pub const EXIT_REJECTED: u8 = 1;
/// Exit code of a usage error.
pub const EXIT_USAGE: u8 = 2;
/// Exit code of a storage error.
pub const EXIT_STORAGE: u8 = 3;

/// goalkeeper keeps a coding agent on its goal: a phased todo list and a
/// goal per session, stored in SQLite, and the hidden prompts that steer
/// the agent.
#[derive(Debug, Parser)]
#[command(name = "goalkeeper", version, about, max_term_width = 100)]
pub struct Cli {
    /// The database file [default: the platform data dir]
    #[arg(long, global = true, env = "GOALKEEPER_DB", value_name = "PATH")]
    db: Option<PathBuf>,

    /// The session (one agent conversation)
    #[arg(
        long,
        global = true,
        env = "GOALKEEPER_SESSION",
        default_value = SessionId::DEFAULT,
        value_name = "ID"
    )]
    session: String,

    /// Print JSON instead of text
    #[arg(long, global = true)]
    json: bool,

    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Read and change the todo list
    #[command(subcommand)]
    Todo(todo::TodoCommand),
    /// List, show and remove sessions
    #[command(subcommand)]
    Session(session::SessionCommand),
    /// Serve the todo and goal tools over MCP on stdio, for --session
    Mcp,
}

/// What a command hands back to `main`: how to exit.
pub enum Outcome {
    /// Exit 0.
    Success,
    /// Exit 1: the operation was understood and refused; its result was printed.
    Rejected,
}

/// Everything a command needs besides its own arguments.
pub struct Context {
    db: Option<PathBuf>,
    session: SessionId,
    json: bool,
    now_ms: i64,
}

impl Context {
    /// Opens the store: `--db`, else `$GOALKEEPER_DB`, else the platform
    /// data directory.
    fn store(&self) -> Result<Store, Error> {
        let path = match &self.db {
            Some(path) => path.clone(),
            None => default_db_path()?,
        };
        Store::open(&path)
    }
}

fn default_db_path() -> Result<PathBuf, Error> {
    directories::ProjectDirs::from("", "", "goalkeeper")
        .map(|dirs| dirs.data_dir().join("goalkeeper.db"))
        .ok_or_else(|| {
            Error::Usage(
                "cannot find a home directory for the default database; pass --db PATH or set GOALKEEPER_DB".into(),
            )
        })
}

/// The clock: `$GOALKEEPER_NOW` (milliseconds since the epoch) when set,
/// for reproducible output, else the system clock.
fn now_ms() -> Result<i64, Error> {
    match std::env::var("GOALKEEPER_NOW") {
        Ok(text) if !text.trim().is_empty() => text.trim().parse().map_err(|_| {
            Error::Usage(format!(
                "GOALKEEPER_NOW={text:?} is not a number; give milliseconds since the epoch, or unset it"
            ))
        }),
        _ => Ok(goalkeeper::time::system_now_ms()),
    }
}

/// Parses the arguments, runs the command and returns the exit code.
pub fn main() -> ExitCode {
    let matches = <Cli as clap::CommandFactory>::command().get_matches();
    let cli = match <Cli as clap::FromArgMatches>::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(e) => e.exit(),
    };
    match run(cli, &matches) {
        Ok(Outcome::Success) => ExitCode::SUCCESS,
        Ok(Outcome::Rejected) => ExitCode::from(EXIT_REJECTED),
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "goalkeeper: {e}");
            ExitCode::from(match e.kind() {
                ErrorKind::Rejected => EXIT_REJECTED,
                ErrorKind::Usage => EXIT_USAGE,
                _ => EXIT_STORAGE,
            })
        }
    }
}

fn run(cli: Cli, matches: &ArgMatches) -> Result<Outcome, Error> {
    let ctx = Context {
        db: cli.db,
        session: SessionId::parse(&cli.session)?,
        json: cli.json,
        now_ms: now_ms()?,
    };
    let sub = |name: &str| {
        matches
            .subcommand_matches(name)
            .and_then(ArgMatches::subcommand)
            .map(|(_, m)| m)
    };
    match cli.command {
        Command::Todo(command) => todo::run(&ctx, command, sub("todo")),
        Command::Session(command) => session::run(&ctx, command),
        Command::Mcp => mcp::run(&ctx),
    }
}

/// Prints `value` as pretty JSON on stdout.
fn print_json(value: &impl serde::Serialize) {
    let text = serde_json::to_string_pretty(value).expect("output serializes");
    println!("{text}");
}
