//! The argument lines that run on every turn of an agent, parsed without
//! clap: the hooks, the status line, `todo apply` and `todo view`,
//! `context` and `continuation`, each with the global options.
//!
//! Building clap's parser for a command line costs more than such a
//! command's own work on a short list, and these lines run on every event
//! of a host and every step of an agent; clap still parses everything
//! else. BENCHMARKS.md ("The fast command-line parser") has the
//! measurement that keeps this file.
//!
//! The parser accepts a strict subset of what clap accepts: [`parse`]
//! gives the same [`Cli`] that clap would, or `None`, and then the caller
//! asks clap. It says `None` at anything it does not know exactly how clap
//! treats: help, `--`, a short option, an unknown or repeated option, a
//! value that is empty or starts with `-`, an argument that is not UTF-8.
//! So a mistake still gets clap's error and its exit code, and what the
//! command is (and so whether it is lenient) is what clap would read. The
//! tests hold it to clap's answer on the same arguments. Neither reads the
//! environment: the variables behind the global options are read after
//! either has parsed the line ([`variables`](super::variables)).

use std::ffi::OsString;
use std::path::PathBuf;

use crate::integrations::host_session::Host;

use super::context::ActiveTools;
use super::integrations::HookArgs;
use super::prompt::ContextArgs;
use super::todo::TodoCommand;
use super::{Cli, Command};

/// The global options, as they are given.
#[derive(Default)]
struct Globals {
    db: Option<PathBuf>,
    session: Option<String>,
    session_from: Option<Host>,
    agent: Option<String>,
    config: Option<PathBuf>,
    sets: Vec<String>,
    json: bool,
}

/// `args` without the program name. `None`: ask clap.
pub(super) fn parse(args: &[OsString]) -> Option<Cli> {
    let line = scan(args)?;
    let command = command(&line.words, line.explain)?;
    let globals = line.globals;
    Some(Cli {
        db: globals.db,
        session: globals.session,
        session_from: globals.session_from,
        agent: globals.agent,
        config: globals.config,
        sets: globals.sets,
        json: globals.json,
        command,
    })
}

/// A line split into its global options and its command's words.
struct Scanned<'a> {
    globals: Globals,
    words: Vec<&'a str>,
    /// `--explain`: how many of the command's words came before it.
    explain: Option<usize>,
}

/// Splits `args` into options and words; `None` at anything not known to
/// be read the same way by clap.
fn scan(args: &[OsString]) -> Option<Scanned<'_>> {
    let mut line = Scanned {
        globals: Globals::default(),
        words: Vec::with_capacity(3),
        explain: None,
    };
    // clap keeps the `--set`s of one command level only, so lines that
    // give them at several levels are left to it.
    let mut set_level = None;
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let arg = arg.to_str()?;
        let Some(option) = arg.strip_prefix("--") else {
            // A lone `-` is a value (stdin for `todo apply`); any other
            // word starting with `-` is a short option.
            if arg.starts_with('-') && arg != "-" {
                return None;
            }
            line.words.push(arg);
            continue;
        };
        let (name, inline) = match option.split_once('=') {
            Some((name, value)) => (name, Some(value)),
            None => (option, None),
        };
        let globals = &mut line.globals;
        if name == "json" || name == "explain" {
            let seen = if name == "json" {
                std::mem::replace(&mut globals.json, true)
            } else {
                line.explain.replace(line.words.len()).is_some()
            };
            if inline.is_some() || seen {
                return None;
            }
            continue;
        }
        let value = match inline {
            Some(value) => value,
            None => args.next()?.to_str()?,
        };
        if value.is_empty() || value.starts_with('-') {
            return None;
        }
        match name {
            "db" => set_once(&mut globals.db, PathBuf::from(value))?,
            "session" => set_once(&mut globals.session, value.to_owned())?,
            "session-from" => set_once(&mut globals.session_from, Host::parse(value)?)?,
            "agent" => set_once(&mut globals.agent, value.to_owned())?,
            "config" => set_once(&mut globals.config, PathBuf::from(value))?,
            "set" => {
                if *set_level.get_or_insert(line.words.len()) != line.words.len() {
                    return None;
                }
                globals.sets.push(value.to_owned());
            }
            _ => return None,
        }
    }
    Some(line)
}

/// The command the words name; `explain`: after how many of them
/// `--explain` came, which belongs to `context`, `continuation` and `todo
/// context` and counts only after the command's words.
fn command(words: &[&str], explain: Option<usize>) -> Option<Command> {
    let context = |words| {
        explain
            .is_none_or(|seen| seen == words)
            .then_some(ContextArgs {
                tools: ActiveTools { active_tools: None },
                explain: explain.is_some(),
            })
    };
    let explain = explain.is_some();
    Some(match words {
        ["todo", "view"] if !explain => Command::Todo(TodoCommand::View),
        ["todo", "apply"] if !explain => Command::Todo(TodoCommand::Apply { call: None }),
        ["todo", "apply", call] if !explain => Command::Todo(TodoCommand::Apply {
            call: Some((*call).to_owned()),
        }),
        ["todo", "context"] => Command::Todo(TodoCommand::Context(context(2)?)),
        ["context"] => Command::Context(context(1)?),
        ["continuation"] => Command::Continuation(context(1)?),
        ["statusline"] if !explain => Command::Statusline,
        ["hook", host] if !explain => Command::Hook(HookArgs {
            host: Host::parse(host)?,
        }),
        _ => return None,
    })
}

/// Sets an option given once; `None` when it was given before (clap
/// refuses that).
fn set_once<T>(slot: &mut Option<T>, value: T) -> Option<()> {
    match slot {
        Some(_) => None,
        None => {
            *slot = Some(value);
            Some(())
        }
    }
}

#[cfg(test)]
mod tests;
