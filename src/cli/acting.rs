//! Whom each command acts as: the agent, nobody (it reads), or the person.
//! One exhaustive `match` per command group (here for the top level, in
//! each group's module for its commands), so a new command is a compile
//! error until it is classified.
//!
//! Two readers use it. `todo` and `goal` take the actor of their calls
//! from it ([`Acts::actor`]), and the Bash guard
//! ([`claude_code::guard`](crate::integrations::claude_code::guard))
//! reads a goalkeeper command line found in an agent's shell command with
//! [`read`]: clap's own parser of the whole command tree, then this. So
//! the guard knows every command, option and spelling the binary knows
//! (`--agent w1` takes a value, `--agent=w1` too, `--json` does not), and
//! refuses what clap refuses: a command this binary does not know may be
//! one a newer goalkeeper on the agent's `PATH` knows, so it is refused
//! rather than guessed at.
//!
//! A new command is classified by one arm: `Acts::Agent` when it
//! acts with the agent's limits (a tool call), `Acts::Nobody` when it
//! only reads (or changes only what is the agent's own), `Acts::Person`
//! for anything a person, or the host on the person's behalf, runs. The
//! test table at the end must then name it (a test walks clap's tree).

use clap::error::ErrorKind as ClapErrorKind;
use clap::{ArgMatches, CommandFactory, FromArgMatches};

pub(crate) use crate::integrations::claude_code::{Acts, Reading};

use super::{Cli, Command};

/// What the words after `goalkeeper` do, as this binary reads them.
/// Help and the version act as nobody; a line clap refuses is
/// [`Reading::Unknown`] with clap's one-line reason.
pub(crate) fn read(args: &[String]) -> Reading {
    let argv = std::iter::once("goalkeeper").chain(args.iter().map(String::as_str));
    let matches = match Cli::command().try_get_matches_from(argv) {
        Ok(matches) => matches,
        Err(e)
            if matches!(
                e.kind(),
                ClapErrorKind::DisplayHelp
                    | ClapErrorKind::DisplayVersion
                    | ClapErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
            ) =>
        {
            return Reading::Runs {
                command: "--help".into(),
                acts: Acts::Nobody,
            };
        }
        Err(e) => return Reading::Unknown(super::parse::problem(&e)),
    };
    match Cli::from_arg_matches(&matches) {
        Ok(cli) => Reading::Runs {
            command: path(&matches),
            acts: cli.command.acts(),
        },
        Err(e) => Reading::Unknown(super::parse::problem(&e)),
    }
}

/// The subcommand words clap read, `todo done`.
fn path(matches: &ArgMatches) -> String {
    let mut words = Vec::new();
    let mut at = matches;
    while let Some((name, sub)) = at.subcommand() {
        words.push(name);
        at = sub;
    }
    words.join(" ")
}

impl Command {
    /// Whom the command acts as; each group's own module says it for its
    /// commands.
    pub(crate) fn acts(&self) -> Acts {
        match self {
            Command::Todo(command) => command.acts(),
            Command::Goal(args) => args.command.as_ref().map_or(Acts::Nobody, |c| c.acts()),
            // The goal-mode context: the memory file's mark is the agent's.
            Command::Context(_) => Acts::Nobody,
            // The host's, when the agent stops: it spends the wrap-up and
            // counts towards the runaway guard.
            Command::Continuation(_) => Acts::Person,
            Command::Prompt(command) => command.acts(),
            Command::Session(command) => command.acts(),
            #[cfg(feature = "mcp")]
            Command::Mcp(_) => Acts::Agent,
            Command::Hook(command) => command.acts(),
            Command::Statusline => Acts::Nobody,
            Command::Install(command) => command.acts(),
            // Writes the packages into a directory of the person's.
            Command::Package(_) => Acts::Person,
            Command::SystemPrompt(_) => Acts::Nobody,
            Command::Workspace(command) => command.acts(),
            // A temporary database of its own.
            Command::Tour => Acts::Nobody,
            #[cfg(feature = "watch")]
            Command::Watch(_) => Acts::Nobody,
            Command::Backup(_) | Command::Migrate(_) => Acts::Person,
            // Runs the checks a person set and records the run as the
            // agent's evidence (DESIGN.md §13).
            Command::Verify(_) => Acts::Agent,
        }
    }
}

#[cfg(test)]
mod tests;
