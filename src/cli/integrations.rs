//! `goalkeeper hook claude-code`, `statusline` and `install claude-code`:
//! the Claude Code adapters. Hooks and the status line never fail the
//! agent: problems go to stderr and the exit status stays 0.

use std::io::Read;
use std::path::{Path, PathBuf};

use crate::integrations::host_session::{Host, Wiring};
use crate::integrations::{
    HookReply, claude_code, codex, gemini_cli, install, package, pi, statusline,
};
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
    /// Add the MCP server (trusted) and the hooks to a Gemini CLI project; with goalkeeper's extension installed, offer the policy its tools need
    GeminiCli {
        /// The project directory [default: the current directory]
        #[arg(long, value_name = "DIR")]
        project: Option<PathBuf>,
        /// How the hooks should run goalkeeper [default: this executable's path]
        #[arg(long, value_name = "CMD")]
        command: Option<String>,
        /// Write the user policy ~/.gemini/policies/goalkeeper.toml, which lets the extension's tools run without asking
        #[arg(long)]
        policy: bool,
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

/// `goalkeeper package OUT`.
#[derive(Debug, clap::Args)]
pub(crate) struct PackageArgs {
    /// A new or empty directory for the packages
    #[arg(value_name = "OUT")]
    out: PathBuf,
    /// The goalkeeper binary the packages carry [default: this executable]
    #[arg(long, value_name = "PATH", requires = "target")]
    binary: Option<PathBuf>,
    /// The Rust target that binary was built for, e.g. aarch64-apple-darwin [default: this executable's]
    #[arg(long, value_name = "TRIPLE", requires = "binary")]
    target: Option<String>,
}

/// Writes the packages ([`package::write`]) with this executable inside,
/// or another target's build.
pub(crate) fn package(ctx: &Context, args: PackageArgs) -> Result<Outcome, Error> {
    let platform = package::platform(args.target.as_deref())?;
    let binary = match args.binary {
        Some(binary) => binary,
        None => std::env::current_exe().map_err(|source| Error::Io {
            what: "cannot find this executable's path".into(),
            source,
        })?,
    };
    if !binary.is_file() {
        return Err(Error::Usage(format!(
            "{} is not a file; give the goalkeeper binary built for the target",
            binary.display()
        )));
    }
    let written = package::write(&args.out, &binary, platform)?;
    if ctx.json {
        print_json(&written);
    } else {
        for package in written {
            out!("{}", package.path.display());
            out!("  {}", package.about);
        }
    }
    Ok(Outcome::Success)
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

pub(crate) fn hook(ctx: &Context, command: HookCommand) -> Result<Outcome, Error> {
    let reply = super::within_hook_wait(|| hook_reply(ctx, command));
    for note in &reply.notes {
        note!("{note}");
    }
    if let Some(stdout) = reply.stdout {
        out!("{stdout}");
    }
    Ok(Outcome::Success)
}

/// One hook event's reply, printed by [`hook`].
fn hook_reply(ctx: &Context, command: HookCommand) -> HookReply {
    match read_input() {
        Err(note) => HookReply {
            stdout: None,
            notes: vec![note],
        },
        Ok(input) => match ctx.store().and_then(|store| {
            let host = command.host();
            // As a plugin the host names goalkeeper's tools otherwise.
            let wiring = Wiring::of_env(host, |var| std::env::var(var).ok());
            Ok((store, ctx.host_injector(host, wiring)?, wiring))
        }) {
            Ok((mut store, injector, wiring)) => match command {
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
                        wiring,
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
        // moment, counted without reading the list.
        let (goal, counts, holders) = ctx
            .store()
            .and_then(|store| store.status(&session))
            .map_err(|e| super::hint::Hinted(&e).to_string())?;
        Ok(statusline::status_line_of(
            goal.as_ref(),
            counts,
            &holders,
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
            policy,
        } => {
            // Without a home, there is no extension either.
            let gemini = gemini_cli::gemini_dir();
            if let Ok(gemini) = &gemini
                && gemini_cli::extension_installed(gemini)
            {
                return gemini_extension(ctx, gemini, policy);
            }
            let (command, note) = chosen(command)?;
            let mut report = gemini_cli::install_gemini_cli(&project(dir)?, &command, ctx.now_ms)?;
            if policy {
                let written = gemini_cli::install_user_policy(&gemini?, ctx.now_ms)?;
                report.files.extend(written.files);
            }
            (report, note)
        }
        InstallCommand::Codex {
            codex_home,
            command,
        } => {
            let (command, note) = chosen(command)?;
            let home = codex::codex_home(codex_home.as_deref())?;
            (codex::install_codex(&home, &command, ctx.now_ms)?, note)
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
            (report, note)
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

/// `install gemini-cli` with goalkeeper's extension installed: its hooks
/// and server serve every project, so no project gets its own; what it
/// lacks is the user policy that lets its tools run without asking, which
/// `--policy` writes, and which is offered on a terminal.
fn gemini_extension(ctx: &Context, gemini: &Path, policy: bool) -> Result<Outcome, Error> {
    use std::io::{BufRead, IsTerminal, Write};
    let path = gemini.join(gemini_cli::POLICY_PATH);
    let interactive = std::io::stdin().is_terminal() && std::io::stdout().is_terminal();
    let write = policy
        || (interactive
            && !path.exists()
            && {
                out!(
                    "goalkeeper's Gemini CLI extension is installed: its hooks and MCP server serve every project."
                );
                out!(
                    "Gemini CLI asks before each call of an extension's tools (and refuses them in `gemini -p`) unless a policy of yours allows them."
                );
                let _ = write!(
                    std::io::stdout(),
                    "Write {} to allow goalkeeper's tools? [y/N] ",
                    path.display()
                );
                let _ = std::io::stdout().flush();
                let mut answer = String::new();
                let _ = std::io::stdin().lock().read_line(&mut answer);
                matches!(answer.trim(), "y" | "Y" | "yes")
            });
    let report = if write {
        gemini_cli::install_user_policy(gemini, ctx.now_ms)?
    } else {
        install::InstallReport { files: Vec::new() }
    };
    if ctx.json {
        print_json(&report);
        return Ok(Outcome::Success);
    }
    out!(
        "goalkeeper's extension is installed in {}: nothing written to the project (the extension serves every project)",
        gemini.join("extensions/goalkeeper").display()
    );
    for line in report.lines() {
        out!("{line}");
    }
    if !write && !path.exists() {
        out!(
            "note: Gemini CLI runs the extension's tools without asking only under a policy of yours; `goalkeeper install gemini-cli --policy` writes {}:",
            path.display()
        );
        for line in gemini_cli::user_policy().lines().skip(3) {
            out!("  {line}");
        }
    }
    Ok(Outcome::Success)
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
