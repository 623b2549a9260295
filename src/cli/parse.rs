//! From the process's arguments to a [`Cli`]: the lines hosts and agents
//! run on every turn through [`fast`](super::fast), every other through
//! clap, and what a line that does not parse becomes.
//!
//! Whether a line is treated leniently follows from the command clap (or
//! the fast parser, which accepts only what clap accepts) reads in it,
//! never from a word found anywhere in the arguments: `todo append --item
//! hook` is a `todo` command like any other.

use std::ffi::OsString;

use clap::error::ErrorKind as ClapErrorKind;
use clap::{ArgMatches, CommandFactory, FromArgMatches};

use super::output::note;
use super::{Cli, Command, fast};

/// A parsed command line.
pub(super) struct Line {
    pub(crate) cli: Cli,
    /// clap's matches, when clap parsed the line (`todo init` reads the
    /// order of its options from them, `watch` whether `--session` was
    /// given).
    pub(crate) matches: Option<ArgMatches>,
}

/// The names of the commands for which [`Command::never_fails_host`]
/// holds, for a line clap reads only past its mistakes.
const HOST_EVENT_COMMANDS: [&str; 2] = ["hook", "statusline"];

impl Command {
    /// Whether the command is one a host runs on its events (a hook, the
    /// status line), which must never fail the host: whatever goes wrong
    /// is noted on stderr and the exit status is 0.
    pub(super) fn never_fails_host(&self) -> bool {
        matches!(self, Command::Hook(_) | Command::Statusline)
    }

    /// Whether the command may create the database where there is none:
    /// a command that writes may (its write is the database's first), a
    /// command that only reads never does, so that a mistyped path is not
    /// read as an empty database and left behind as one (README, "Which
    /// commands create the database"). `session rm` has nothing to remove
    /// from a database that is not there.
    pub(super) fn may_create_database(&self) -> bool {
        use super::goal::{CheckCommand, GoalCommand};
        use super::session::SessionCommand;
        use super::todo::TodoCommand;
        match self {
            Command::Todo(command) => !matches!(
                command,
                TodoCommand::View
                    | TodoCommand::Context(_)
                    | TodoCommand::Export { .. }
                    | TodoCommand::Log { .. }
            ),
            Command::Goal(args) => !matches!(
                args.command,
                None | Some(GoalCommand::Get | GoalCommand::Check(CheckCommand::List))
            ),
            Command::Continuation(_) | Command::Hook(_) | Command::Migrate(_) => true,
            #[cfg(feature = "mcp")]
            Command::Mcp(_) => true,
            Command::Session(
                SessionCommand::List | SessionCommand::Show { .. } | SessionCommand::Rm { .. },
            ) => false,
            Command::Context(_)
            | Command::Prompt(_)
            | Command::Statusline
            | Command::Install(_)
            | Command::Package(_)
            | Command::SystemPrompt(_)
            | Command::Workspace(_)
            | Command::Tour
            | Command::Backup(_) => false,
            // Without a database there is no check to run: it says so.
            Command::Verify(_) => false,
            #[cfg(feature = "watch")]
            Command::Watch(_) => false,
        }
    }
}

impl Cli {
    /// Whether `GOALKEEPER_SESSION`, `GOALKEEPER_AGENT` and
    /// `GOALKEEPER_NOW` (or the options they stand for) are not the
    /// command's to rely on, so that a spoilt one is noted and passed over:
    /// a hook and the status line (the session comes from the host's
    /// event), and an MCP server its host started for its session (`mcp
    /// --session-from HOST`), which follows the host.
    pub(super) fn ignores_spoilt_variables(&self) -> bool {
        match &self.command {
            #[cfg(feature = "mcp")]
            Command::Mcp(_) => self.session_from.is_some(),
            command => command.never_fails_host(),
        }
    }
}

/// Parses `argv` (the program name first). `Err`: the exit status, after
/// clap printed its help, version or error, or after a hook's note.
pub(super) fn parse(argv: Vec<OsString>) -> Result<Line, u8> {
    if let Some(cli) = fast::parse(&argv[1..]) {
        return Ok(Line { cli, matches: None });
    }
    let error = match parse_with(Cli::command(), &argv) {
        Ok(line) => return Ok(line),
        Err(error) => error,
    };
    if matches!(
        error.kind(),
        ClapErrorKind::DisplayHelp | ClapErrorKind::DisplayVersion
    ) {
        error.exit();
    }
    if let Some(name) = host_event(&argv) {
        note(format!(
            "{}; nothing was done (`goalkeeper {name} --help` lists the arguments)",
            problem(&error)
        ));
        return Err(0);
    }
    error.exit()
}

/// clap's parse of `argv` with `command`.
fn parse_with(mut command: clap::Command, argv: &[OsString]) -> Result<Line, clap::Error> {
    let parsed = command
        .try_get_matches_from_mut(argv)
        .and_then(|matches| Cli::from_arg_matches(&matches).map(|cli| (cli, matches)));
    // The process ends after this one command: freeing the parser's tree
    // of commands and arguments would only cost time.
    std::mem::forget(command);
    parsed.map(|(cli, matches)| Line {
        cli,
        matches: Some(matches),
    })
}

/// The command's name when clap, reading past the line's mistakes, finds
/// a hook or the status line as its command.
fn host_event(argv: &[OsString]) -> Option<&'static str> {
    let lenient = Cli::command().ignore_errors(true);
    let matches = lenient.try_get_matches_from(argv).ok()?;
    let name = matches.subcommand_name()?;
    HOST_EVENT_COMMANDS.into_iter().find(|known| *known == name)
}

/// What clap found wrong, in one line for a note: the first line of its
/// message without the `error: ` prefix, and the values it takes when one
/// was wrong (a host that does not exist).
pub(super) fn problem(error: &clap::Error) -> String {
    if error.kind() == ClapErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
        return "a subcommand is missing".to_owned();
    }
    let text = error.render().to_string();
    let mut lines = text.lines();
    let line = lines.next().unwrap_or_default();
    let line = line.strip_prefix("error: ").unwrap_or(line);
    match lines
        .map(str::trim)
        .find(|l| l.starts_with("[possible values: "))
    {
        Some(values) => format!("{line} {values}"),
        None => line.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(args: &[&str]) -> Vec<OsString> {
        std::iter::once("goalkeeper")
            .chain(args.iter().copied())
            .map(OsString::from)
            .collect()
    }

    /// The names stand for the commands `never_fails_host` names, and for
    /// no other.
    #[test]
    fn the_host_event_names_are_the_commands_that_never_fail_the_host() {
        for (args, host_event) in [
            (&["hook", "claude-code"][..], true),
            (&["statusline"], true),
            (&["todo", "view"], false),
            (&["goal", "budget", "100"], false),
            (&["mcp", "--session-from", "codex"], false),
        ] {
            let line = parse_with(Cli::command(), &argv(args)).unwrap();
            assert_eq!(line.cli.command.never_fails_host(), host_event, "{args:?}");
            let name = line.matches.as_ref().and_then(ArgMatches::subcommand_name);
            assert_eq!(
                name.is_some_and(|name| HOST_EVENT_COMMANDS.contains(&name)),
                host_event,
                "{args:?}"
            );
        }
    }

    /// A mistake leaves a line a hook only when clap finds `hook` or
    /// `statusline` as its command, not when the word is a value.
    #[test]
    fn a_host_event_is_the_command_not_a_word() {
        for args in [
            &["hook", "claude-code", "--bogus"][..],
            &["hook", "no-such-host"],
            &["hook"],
            &["statusline", "--bogus"],
            &["--session-from", "vim", "hook", "pi"],
        ] {
            assert!(host_event(&argv(args)).is_some(), "{args:?}");
        }
        for args in [
            &["todo", "append", "--phase", "P", "--item", "hook"][..],
            &["goal", "budget", "abc", "hook"],
            &["goal", "set", "statusline", "--bogus"],
            &["hok", "claude-code"],
            &["--db", "hook", "todo", "view", "--bogus"],
        ] {
            assert_eq!(host_event(&argv(args)), None, "{args:?}");
        }
    }
}
