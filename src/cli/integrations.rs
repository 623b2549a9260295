//! `goalkeeper hook claude-code`, `statusline` and `install claude-code`:
//! the Claude Code adapters. Hooks and the status line never fail the
//! agent: problems go to stderr and the exit status stays 0.

use std::io::Read;
use std::path::PathBuf;

use crate::integrations::claude_code::{Acts, ReadLine};
use crate::integrations::host_session::Host;
use crate::integrations::{HookReply, claude_code, codex, gemini_cli, install, pi, statusline};
use crate::{Error, SessionId};
use clap::Subcommand;
use serde_json::Value;

use super::{Context, Outcome, print_json};

#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub(crate) enum HookCommand {
    /// Handle one Claude Code hook event (JSON on stdin)
    ClaudeCode,
    /// Handle one Gemini CLI hook event (JSON on stdin)
    GeminiCli,
    /// Handle one Codex hook event (JSON on stdin)
    Codex,
    /// Handle one event of goalkeeper's pi extension (JSON on stdin)
    Pi,
}

impl HookCommand {
    /// The host whose hook event this is.
    fn host(&self) -> Host {
        match self {
            HookCommand::ClaudeCode => Host::ClaudeCode,
            HookCommand::GeminiCli => Host::GeminiCli,
            HookCommand::Codex => Host::Codex,
            HookCommand::Pi => Host::Pi,
        }
    }
}

impl HookCommand {
    /// Whom the command acts as (`cli/acting.rs`): the host, on the
    /// person's behalf.
    pub(crate) fn acts(&self) -> Acts {
        match self {
            HookCommand::ClaudeCode
            | HookCommand::GeminiCli
            | HookCommand::Codex
            | HookCommand::Pi => Acts::Person,
        }
    }
}

#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub(crate) enum InstallCommand {
    /// Add the hooks, the status line and the MCP server to a Claude Code project
    ClaudeCode {
        /// The project directory [default: the current directory]
        #[arg(long, value_name = "DIR")]
        project: Option<PathBuf>,
        /// The goalkeeper executable the hooks and the MCP server run
        /// [default: `goalkeeper` when that is this executable on PATH, else this executable's path]
        #[arg(long, value_name = "CMD")]
        command: Option<String>,
    },
    /// Add the MCP server (trusted) and the hooks to a Gemini CLI project
    GeminiCli {
        /// The project directory [default: the current directory]
        #[arg(long, value_name = "DIR")]
        project: Option<PathBuf>,
        /// How the hooks should run goalkeeper [default: this executable's path]
        #[arg(long, value_name = "CMD")]
        command: Option<String>,
    },
    /// Add the MCP server and the trusted hooks to the user's Codex configuration
    Codex {
        /// Codex's configuration directory [default: $CODEX_HOME, else ~/.codex]
        #[arg(long, value_name = "DIR")]
        codex_home: Option<PathBuf>,
        /// How the hooks should run goalkeeper [default: this executable's path]
        #[arg(long, value_name = "CMD")]
        command: Option<String>,
    },
    /// Write goalkeeper's extension (tools, context, continuations, usage) into a pi project
    Pi {
        /// The project directory [default: the current directory]
        #[arg(long, value_name = "DIR")]
        project: Option<PathBuf>,
        /// How the extension should run goalkeeper [default: this executable's path]
        #[arg(long, value_name = "CMD")]
        command: Option<String>,
    },
}

impl InstallCommand {
    /// Whom the command acts as (`cli/acting.rs`): it writes the person's
    /// configuration.
    pub(crate) fn acts(&self) -> Acts {
        match self {
            InstallCommand::ClaudeCode { .. }
            | InstallCommand::GeminiCli { .. }
            | InstallCommand::Codex { .. }
            | InstallCommand::Pi { .. } => Acts::Person,
        }
    }
}

/// Hook input is small; this bounds a runaway writer.
const MAX_HOOK_INPUT: u64 = 16 * 1024 * 1024;

fn read_input() -> Result<String, String> {
    let mut bytes = Vec::new();
    std::io::stdin()
        .lock()
        .take(MAX_HOOK_INPUT)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read stdin: {e}"))?;
    String::from_utf8(bytes).map_err(|_| "stdin is not UTF-8 text; ignored".to_owned())
}

/// Runs one hook event; `read` reads a goalkeeper command line for the
/// Bash guard.
pub(crate) fn hook(ctx: &Context, command: HookCommand, read: ReadLine) -> Result<Outcome, Error> {
    let reply = super::within_hook_wait(|| hook_reply(ctx, command, read));
    for note in &reply.notes {
        note!("{note}");
    }
    if let Some(stdout) = reply.stdout {
        out!("{stdout}");
    }
    Ok(Outcome::Success)
}

/// One hook event's reply, printed by [`hook`].
fn hook_reply(ctx: &Context, command: HookCommand, read: ReadLine) -> HookReply {
    match read_input() {
        Err(note) => HookReply {
            stdout: None,
            notes: vec![note],
        },
        Ok(input) => match ctx
            .store()
            .and_then(|store| Ok((store, ctx.host_injector(command.host())?)))
        {
            Ok((mut store, injector)) => match command {
                HookCommand::ClaudeCode => {
                    // A quarter of the hook's wait for the transcripts:
                    // the rest is counted by the next event.
                    // Claude Code's own cap, from the environment it
                    // passes its hooks.
                    let cap = std::env::var(claude_code::CAP_VAR).ok();
                    claude_code::handle_within(
                        &mut store,
                        &injector,
                        &input,
                        ctx.now_ms,
                        super::hook_wait() / 4,
                        claude_code::cap_from(cap.as_deref()),
                        read,
                    )
                }
                HookCommand::GeminiCli => {
                    gemini_cli::handle(&mut store, &injector, &input, ctx.now_ms)
                }
                HookCommand::Codex => codex::handle(&mut store, &injector, &input, ctx.now_ms),
                HookCommand::Pi => pi::handle(&mut store, &injector, &input, ctx.now_ms),
            },
            Err(e) => HookReply {
                stdout: None,
                notes: vec![format!("{}; the hook did nothing", super::hint::Hinted(&e))],
            },
        },
    }
}

pub(crate) fn statusline(ctx: &Context) -> Result<Outcome, Error> {
    let line = super::within_hook_wait(|| status_line(ctx));
    match line {
        Ok(Some(line)) => out!("{line}"),
        Ok(None) => {}
        Err(note) => note!("{note}"),
    }
    Ok(Outcome::Success)
}

/// The status line, or why there is none.
fn status_line(ctx: &Context) -> Result<Option<String>, String> {
    read_input().and_then(|input| {
        let event: Value = if input.trim().is_empty() {
            Value::Null
        } else {
            serde_json::from_str(&input)
                .map_err(|e| format!("status line input is not JSON ({e})"))?
        };
        let session = match event.get("session_id").and_then(Value::as_str) {
            Some(id) => SessionId::parse(id).map_err(|e| e.to_string())?,
            None => ctx.session.clone(),
        };
        // One read transaction: the goal and the list's counts of one
        // moment, counted without reading the list. The checks (a second
        // read, and a look at the files) only for a session that has some.
        let hinted = |e: Error| super::hint::Hinted(&e).to_string();
        let mut store = ctx.store().map_err(hinted)?;
        let (goal, counts, holders) = store.status(&session).map_err(hinted)?;
        let goal_checks = goal
            .as_ref()
            .is_some_and(|g| g.status.is_live() && !g.checks.is_empty());
        let checks = if goal_checks || store.has_task_checks(&session).map_err(hinted)? {
            let dir = event
                .pointer("/workspace/current_dir")
                .or_else(|| event.get("cwd"))
                .and_then(Value::as_str)
                .map(PathBuf::from);
            store.judge_dir(dir);
            let look = store.look();
            let checks = store.session_checks(&session, &look).map_err(hinted)?;
            checks.all().cloned().collect()
        } else {
            Vec::new()
        };
        Ok(statusline::status_line_of(
            goal.as_ref(),
            counts,
            &holders,
            &checks,
            ctx.now_ms,
        ))
    })
}

pub(crate) fn install(ctx: &Context, command: InstallCommand) -> Result<Outcome, Error> {
    let project = |dir: Option<PathBuf>| match dir {
        Some(dir) => Ok(dir),
        None => std::env::current_dir().map_err(|source| Error::Io {
            what: "cannot read the current directory".into(),
            source,
        }),
    };
    let chosen = |command: Option<String>| match command {
        Some(command) => Ok((install::Executable(command), None)),
        None => executable(),
    };
    let (report, note) = match command {
        InstallCommand::ClaudeCode {
            project: dir,
            command,
        } => {
            let (command, note) = chosen(command)?;
            let report = install::install_claude_code(&project(dir)?, &command, ctx.now_ms)?;
            let next = install::CLAUDE_CODE_NEXT;
            let note = note.map_or_else(|| next.to_owned(), |n| format!("{n}\n{next}"));
            (report, Some(note))
        }
        InstallCommand::GeminiCli {
            project: dir,
            command,
        } => {
            let (command, note) = chosen(command)?;
            let report = gemini_cli::install_gemini_cli(&project(dir)?, &command, ctx.now_ms)?;
            (report, with_verify_note(note, Host::GeminiCli))
        }
        InstallCommand::Codex {
            codex_home,
            command,
        } => {
            let (command, note) = chosen(command)?;
            let home = codex::codex_home(codex_home.as_deref())?;
            let report = codex::install_codex(&home, &command, ctx.now_ms)?;
            (report, with_verify_note(note, Host::Codex))
        }
        InstallCommand::Pi {
            project: dir,
            command,
        } => {
            let (command, note) = chosen(command)?;
            let templates = ctx.injector()?;
            let report = pi::install_pi(
                &project(dir)?,
                &command.0,
                templates.templates(),
                ctx.now_ms,
            )?;
            (report, with_verify_note(note, Host::Pi))
        }
    };
    if ctx.json {
        print_json(&report);
    } else {
        for line in report.lines() {
            out!("{line}");
        }
        if let Some(note) = note {
            out!("{note}");
        }
    }
    Ok(Outcome::Success)
}

/// `note` (if any), then how a person lets the agent run `goalkeeper
/// verify` on `host`.
fn with_verify_note(note: Option<String>, host: Host) -> Option<String> {
    let verify = install::verify_note(host);
    Some(match note {
        Some(note) => format!("{note}\n{verify}"),
        None => verify.to_owned(),
    })
}

/// `goalkeeper` when that word on `PATH` runs this executable (the
/// configuration then works on every machine that has goalkeeper on its
/// `PATH`), else this executable's path and a note saying why that is
/// less portable.
fn executable() -> Result<(install::Executable, Option<String>), Error> {
    let exe = std::env::current_exe().map_err(|source| Error::Io {
        what: "cannot find this executable's path".into(),
        source,
    })?;
    let exe = std::fs::canonicalize(&exe).unwrap_or(exe);
    // The first `goalkeeper` on PATH is the one a shell would run.
    let on_path = std::env::var_os("PATH").is_some_and(|path| {
        std::env::split_paths(&path)
            .find_map(|dir| std::fs::canonicalize(dir.join("goalkeeper")).ok())
            .is_some_and(|found| found == exe)
    });
    if on_path {
        return Ok((install::Executable("goalkeeper".into()), None));
    }
    let path = exe.display().to_string();
    let note = format!(
        "note: goalkeeper is not on PATH, so the files name this machine's path ({path}); \
         put goalkeeper on PATH (`cargo install --path .`) and install again to write the portable `goalkeeper`"
    );
    Ok((install::Executable(path), Some(note)))
}
