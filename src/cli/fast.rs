//! The argument lines that run on every turn of an agent, parsed without
//! clap: the hooks, the status line, `todo apply` and `todo view`,
//! `context` and `continuation`, each with the global options.
//!
//! Building clap's parser for the command line was a fifth of such a
//! call's instructions (0.34 M of 1.6 M for a `todo view`), more than the
//! command's own work on a short list. The lines here are the ones a host
//! runs on every event and an agent on every step; clap still parses
//! everything else.
//!
//! [`parse`] gives the same [`Cli`] that clap would, or `None`, and then
//! the caller asks clap. It says `None` at anything it does not know
//! exactly how clap treats: help, `--`, a short option, an unknown or
//! repeated option, a value that is empty or starts with `-`, an argument
//! that is not UTF-8, an empty or non-UTF-8 `GOALKEEPER_DB` or
//! `GOALKEEPER_SESSION` (which clap refuses even when the line gives the
//! option). So a mistake still gets clap's error and its
//! exit code, and the lenient handling of hooks is unchanged. The tests
//! hold it to clap's answer on the same arguments and environment.

use std::ffi::{OsStr, OsString};
use std::path::PathBuf;

use goalkeeper::SessionId;
use goalkeeper::integrations::host_session::Host;

use super::integrations::HookCommand;
use super::prompt::ContextArgs;
use super::todo::TodoCommand;
use super::{ActiveTools, Cli, Command};

/// The environment variables the global options fall back to.
pub(super) struct Env {
    /// `GOALKEEPER_DB`.
    pub db: Option<OsString>,
    /// `GOALKEEPER_SESSION`.
    pub session: Option<OsString>,
}

impl Env {
    /// The process's own environment.
    pub fn of_process() -> Env {
        Env {
            db: std::env::var_os("GOALKEEPER_DB"),
            session: std::env::var_os("GOALKEEPER_SESSION"),
        }
    }
}

/// The global options, as they are given.
#[derive(Default)]
struct Globals {
    db: Option<PathBuf>,
    session: Option<String>,
    session_from: Option<Host>,
    config: Option<PathBuf>,
    sets: Vec<String>,
    json: bool,
}

/// `args` without the program name. `None`: ask clap.
pub(super) fn parse(args: &[OsString], env: &Env) -> Option<Cli> {
    // clap refuses an empty variable even when the line gives the option.
    let env_db = from_env(env.db.as_deref())?;
    let env_session = from_env(env.session.as_deref())?;
    let mut globals = Globals::default();
    let mut words: Vec<&str> = Vec::with_capacity(3);
    // `--explain` belongs to `context`, `continuation` and `todo context`:
    // it counts only after the command's words, how many were seen then.
    let mut explain = None;
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
            words.push(arg);
            continue;
        };
        let (name, inline) = match option.split_once('=') {
            Some((name, value)) => (name, Some(value)),
            None => (option, None),
        };
        if name == "json" {
            if inline.is_some() || globals.json {
                return None;
            }
            globals.json = true;
            continue;
        }
        if name == "explain" {
            if inline.is_some() || explain.is_some() {
                return None;
            }
            explain = Some(words.len());
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
            "config" => set_once(&mut globals.config, PathBuf::from(value))?,
            "set" => {
                if *set_level.get_or_insert(words.len()) != words.len() {
                    return None;
                }
                globals.sets.push(value.to_owned());
            }
            _ => return None,
        }
    }
    // `--explain` given after a command's words, or not at all.
    let explained = |words| explain.is_none_or(|seen| seen == words);
    let context = |words| {
        explained(words).then_some(ContextArgs {
            tools: ActiveTools { active_tools: None },
            explain: explain.is_some(),
        })
    };
    let explain = explain.is_some();
    let command = match words.as_slice() {
        ["todo", "view"] if !explain => Command::Todo(TodoCommand::View),
        ["todo", "apply"] if !explain => Command::Todo(TodoCommand::Apply { call: None }),
        ["todo", "apply", call] if !explain => Command::Todo(TodoCommand::Apply {
            call: Some((*call).to_owned()),
        }),
        ["todo", "context"] => Command::Todo(TodoCommand::Context(context(2)?)),
        ["context"] => Command::Context(context(1)?),
        ["continuation"] => Command::Continuation(context(1)?),
        ["statusline"] if !explain => Command::Statusline,
        ["hook", host] if !explain => Command::Hook(match *host {
            "claude-code" => HookCommand::ClaudeCode,
            "gemini-cli" => HookCommand::GeminiCli,
            "codex" => HookCommand::Codex,
            "pi" => HookCommand::Pi,
            _ => return None,
        }),
        _ => return None,
    };
    Some(Cli {
        db: match globals.db {
            Some(db) => Some(db),
            None => env_db.map(PathBuf::from),
        },
        session: match globals.session {
            Some(session) => session,
            None => env_session.unwrap_or(SessionId::DEFAULT).to_owned(),
        },
        session_from: globals.session_from,
        config: globals.config,
        sets: globals.sets,
        json: globals.json,
        command,
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

/// An environment variable's value for an option: `Some(None)` when it is
/// not set, `None` (ask clap) when it is empty or not UTF-8.
fn from_env(value: Option<&OsStr>) -> Option<Option<&str>> {
    match value {
        None => Some(None),
        Some(value) => match value.to_str() {
            Some(text) if !text.is_empty() => Some(Some(text)),
            _ => None,
        },
    }
}

#[cfg(test)]
mod tests;
