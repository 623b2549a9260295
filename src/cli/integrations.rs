//! `goalkeeper hook claude-code`, `statusline` and `install claude-code`:
//! the Claude Code adapters. Hooks and the status line never fail the
//! agent: problems go to stderr and the exit status stays 0.

use std::io::Read;
use std::path::PathBuf;

use crate::integrations::adapter::{HookEnv, InstallRequest};
use crate::integrations::claude_code::{Acts, ReadLine};
use crate::integrations::host_session::{Host, Wiring};
use crate::integrations::{HookReply, install, package, statusline};
use crate::{Error, SessionId};
use serde_json::Value;

use super::context::{Context, Outcome};
use super::print_json;

/// `goalkeeper hook HOST`.
#[derive(Debug, clap::Args)]
pub(crate) struct HookArgs {
    /// The host whose hook event this is (JSON on stdin)
    #[arg(value_name = "HOST")]
    pub(crate) host: Host,
}

/// `goalkeeper install HOST`.
#[derive(Debug, clap::Args)]
pub(crate) struct InstallArgs {
    /// The host to wire goalkeeper into
    #[arg(value_name = "HOST")]
    host: Host,
    /// The project directory (claude-code, gemini-cli, pi) [default: the current directory]
    #[arg(long, value_name = "DIR")]
    project: Option<PathBuf>,
    /// Codex's configuration directory (codex) [default: $CODEX_HOME, else ~/.codex]
    #[arg(long, value_name = "DIR")]
    codex_home: Option<PathBuf>,
    /// The goalkeeper executable the configuration runs
    /// [default: `goalkeeper` when that is this executable on PATH, else this executable's path]
    #[arg(long, value_name = "CMD")]
    command: Option<String>,
    /// Write the user policy ~/.gemini/policies/goalkeeper.toml, which lets the Gemini CLI extension's tools run without asking (gemini-cli)
    #[arg(long)]
    policy: bool,
}

impl HookArgs {
    /// Whom the command acts as (`cli/acting.rs`): the host, on the
    /// person's behalf.
    pub(crate) fn acts(&self) -> Acts {
        Acts::Person
    }
}

impl InstallArgs {
    /// Whom the command acts as (`cli/acting.rs`): it writes the person's
    /// files.
    pub(crate) fn acts(&self) -> Acts {
        Acts::Person
    }
}

/// The hosts as clap's values: [`Host::ALL`], by their names.
impl clap::ValueEnum for Host {
    fn value_variants<'a>() -> &'a [Self] {
        &Host::ALL
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        Some(clap::builder::PossibleValue::new(self.as_str()))
    }
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
    let written = package::write(&args.out, &binary, &platform)?;
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

/// Runs one hook event; `read` reads a goalkeeper command line for the
/// Bash guard.
pub(crate) fn hook(ctx: &Context, args: HookArgs, read: ReadLine) -> Result<Outcome, Error> {
    let reply = super::hook_wait::within_hook_wait(|| hook_reply(ctx, args, read));
    for note in &reply.notes {
        note!("{note}");
    }
    if let Some(stdout) = reply.stdout {
        out!("{stdout}");
    }
    Ok(Outcome::Success)
}

/// One hook event's reply, printed by [`hook`].
fn hook_reply(ctx: &Context, args: HookArgs, read: ReadLine) -> HookReply {
    let host = args.host;
    let var = |name: &str| std::env::var(name).ok();
    match read_input() {
        Err(note) => HookReply {
            stdout: None,
            notes: vec![note],
        },
        Ok(input) => match ctx.store().and_then(|store| {
            // As a plugin the host names goalkeeper's tools otherwise.
            let wiring = Wiring::of_env(host, var);
            Ok((store, ctx.host_injector(host, wiring)?, ctx.caller()?))
        }) {
            Ok((mut store, injector, caller)) => {
                let env = HookEnv {
                    caller: &caller,
                    now_ms: ctx.now_ms,
                    // A quarter of the hook's wait for the transcripts:
                    // the rest is counted by the next event.
                    read_time: super::context::hook_wait() / 4,
                    var: &var,
                    read,
                };
                host.adapter().handle(&mut store, &injector, &input, &env)
            }
            Err(e) => HookReply {
                stdout: None,
                notes: vec![format!("{}; the hook did nothing", super::hint::Hinted(&e))],
            },
        },
    }
}

pub(crate) fn statusline(ctx: &Context) -> Result<Outcome, Error> {
    let line = super::hook_wait::within_hook_wait(|| status_line(ctx));
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
        let store = ctx.store().map_err(hinted)?;
        let (goal, counts, holders) = store.read(&session, |tx| tx.status()).map_err(hinted)?;
        let goal_checks = goal
            .as_ref()
            .is_some_and(|g| g.status.is_live() && !g.checks.is_empty());
        let checks = if goal_checks
            || store
                .read(&session, |tx| tx.has_task_checks())
                .map_err(hinted)?
        {
            let dir = event
                .pointer("/workspace/current_dir")
                .or_else(|| event.get("cwd"))
                .and_then(Value::as_str)
                .map(PathBuf::from);
            let caller = ctx.caller().map_err(hinted)?.in_dir(dir);
            let checks = store
                .read(&session, |tx| tx.checks(&caller))
                .map_err(hinted)?;
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

pub(crate) fn install(ctx: &Context, args: InstallArgs) -> Result<Outcome, Error> {
    let adapter = args.host.adapter();
    let takes = adapter.install_flags();
    let given = [
        ("--project", args.project.is_some()),
        ("--codex-home", args.codex_home.is_some()),
        ("--policy", args.policy),
    ];
    if let Some((flag, _)) = given.iter().find(|(flag, on)| *on && !takes.contains(flag)) {
        return Err(Error::Usage(format!(
            "`install {}` does not take {flag}; it takes {} and --command",
            args.host,
            takes.join(", ")
        )));
    }
    let (command, note) = match args.command {
        Some(command) => (install::Executable(command), None),
        None => executable()?,
    };
    let injector = ctx.injector()?;
    let ask = |question: &str| ask(question);
    let request = InstallRequest {
        dir: args.project.as_deref().or(args.codex_home.as_deref()),
        command: &command,
        policy: args.policy,
        templates: injector.templates(),
        now_ms: ctx.now_ms,
        ask: &ask,
    };
    let installed = adapter.install(&request)?;
    if ctx.json {
        print_json(&installed.report);
    } else {
        for line in installed.report.lines() {
            out!("{line}");
        }
        // A package's binary runs from its own folder: where this one is
        // does not matter there.
        let note = note.filter(|_| !installed.packaged);
        for note in note.iter().chain(&installed.notes) {
            out!("{note}");
        }
        // How a person lets the agent run `goalkeeper verify` there.
        let verify = install::verify_note(args.host);
        if !verify.is_empty() {
            out!("{verify}");
        }
    }
    Ok(Outcome::Success)
}

/// Asks the person at the terminal `question`; true for a yes. False
/// without a terminal (a script, CI), where nobody answers.
fn ask(question: &str) -> bool {
    use std::io::{BufRead, IsTerminal, Write};
    if !(std::io::stdin().is_terminal() && std::io::stdout().is_terminal()) {
        return false;
    }
    let mut stdout = std::io::stdout();
    let _ = write!(stdout, "{question}");
    let _ = stdout.flush();
    let mut answer = String::new();
    let _ = std::io::stdin().lock().read_line(&mut answer);
    matches!(answer.trim(), "y" | "Y" | "yes")
}

/// `goalkeeper` when that word on `PATH` runs this executable (the
/// configuration then works on every machine that has goalkeeper on its
/// `PATH`), else this executable's path and a note saying why. npm's
/// `goalkeeper` on `PATH` is the Node launcher of this binary: the files
/// name the binary itself, so no hook goes through Node.
fn executable() -> Result<(install::Executable, Option<String>), Error> {
    let exe = std::env::current_exe().map_err(|source| Error::Io {
        what: "cannot find this executable's path".into(),
        source,
    })?;
    let exe = std::fs::canonicalize(&exe).unwrap_or(exe);
    // The first `goalkeeper` on PATH is the one a shell would run.
    let found = std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .find_map(|dir| std::fs::canonicalize(dir.join("goalkeeper")).ok())
    });
    if found.as_ref() == Some(&exe) {
        return Ok((install::Executable("goalkeeper".into()), None));
    }
    let path = exe.display().to_string();
    let launcher = found.is_some_and(|found| found.ends_with("bin/goalkeeper.js"));
    let note = if path.contains("/_npx/") {
        // `npx goalkeeper install …` runs the binary from npm's cache,
        // which npm may clear.
        format!(
            "note: this goalkeeper runs from npx's cache, which npm may clear, and the files name its path ({path}); \
             install the npm package (`npm install -g goalkeeper`) and run `goalkeeper install` again"
        )
    } else if launcher {
        format!(
            "note: the `goalkeeper` on PATH is npm's launcher, which starts Node before the binary; \
             the files name the binary itself ({path}), so hooks start without Node; \
             install again after moving or reinstalling the npm package"
        )
    } else {
        format!(
            "note: goalkeeper is not on PATH, so the files name this machine's path ({path}); \
             put goalkeeper on PATH (a release's installer or archive, `cargo install --path .` in a checkout, \
             or the npm packages `scripts/package.sh` writes) and install again to write the portable `goalkeeper`"
        )
    };
    Ok((install::Executable(path), Some(note)))
}
