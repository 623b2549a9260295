//! `goalkeeper verify [--task TASK]` (DESIGN.md §13): runs the goal's
//! checks (or one task's) in the current directory, records the run as
//! evidence, and prints the evidence record line, then a short report.
//! Exits 0 only when every check passed.

use crate::check::report::{Recorded, Report};
use crate::check::{RunBy, Scope};
use crate::integrations::host_session::{self, Host};
use crate::tree::Tree;
use crate::verify::process::Limits;
use crate::verify::record;
use crate::{Error, SessionId, Store};
use std::path::Path;

use super::context::{Context, Outcome};
use super::print_json;

// `verify [--task TASK]`. (No doc comment: see `TargetArgs` in todo.rs.)
#[derive(Debug, clap::Args)]
pub(crate) struct VerifyArgs {
    /// Run this task's check instead of the goal's checks
    #[arg(long, value_name = "TASK")]
    task: Option<String>,
}

/// Runs `verify`. `session_given`: the session came from `--session` or
/// `$GOALKEEPER_SESSION`, not the default.
pub(crate) fn run(ctx: &Context, args: VerifyArgs, session_given: bool) -> Result<Outcome, Error> {
    crate::verify::nested::refuse_inside_check()?;
    let scope = match args.task {
        Some(task) => Scope::Task(crate::todo::text::task_content(&task).map_err(Error::Usage)?),
        None => Scope::Goal,
    };
    let settings = ctx.settings()?;
    let here = super::context::current_dir()?;
    let mut store = ctx.store()?;
    let (session, host) = session_and_host(ctx, &mut store, session_given, &here)?;
    let commands = store.read(&session, |tx| tx.checks_to_run(&scope))?;
    if commands.is_empty() {
        return Err(Error::Rejected(match &scope {
            Scope::Goal => format!(
                "nothing to verify: session {session} has no live goal with checks; a person adds one with `goalkeeper goal check add CMD`"
            ),
            Scope::Task(task) => format!(
                "nothing to verify: task \"{}\" of session {session} has no check, or is not in the list; a person sets one with `goalkeeper todo check TASK CMD`",
                crate::sanitize::one_line(task)
            ),
        }));
    }
    let tree = Tree::new(&here)?.with_cache_dir(super::context::cache_dir());
    let by = RunBy {
        actor: if ctx.agent_named_by.is_some() || host.is_some() {
            "agent"
        } else {
            "user"
        }
        .to_owned(),
        agent: ctx.agent.as_ref().map(|a| a.as_str().to_owned()),
        host: host.map(|h| h.as_str().to_owned()),
    };
    let limits = Limits {
        timeout: std::time::Duration::from_secs(settings.verify.timeout),
        tail_bytes: usize::try_from(settings.verify.tail).unwrap_or(usize::MAX),
    };
    crate::verify::supervise::claim()?;
    let crate::verify::Run {
        evidence,
        ran,
        files,
        changed,
    } = crate::verify::run_checks(scope.clone(), &commands, &tree, limits, by, ctx.now_ms)?;
    let now_ms = super::context::now_ms().unwrap_or(ctx.now_ms);
    // A run whose checks changed the files proves nothing: no record, no
    // record line for a hook to store.
    let recorded = if !changed.is_empty() {
        Recorded::Withheld
    } else {
        match store.write(&session, |tx| tx.record_run(&evidence, "verify", now_ms)) {
            Ok(_) => Recorded::Stored,
            Err(e) => Recorded::ForHook(e.to_string()),
        }
    };
    let call = host
        .and_then(Host::shell_call_variable)
        .and_then(|name| std::env::var(name).ok());
    let line = changed
        .is_empty()
        .then(|| record::to_line(session.as_str(), &evidence, call.as_deref()));
    let report = Report {
        scope: &scope,
        dir: &evidence.dir,
        fingerprint: &evidence.fingerprint,
        files: files.files,
        left_out: &files.left_out,
        ran: &ran,
        changed: &changed,
        recorded: &recorded,
    };
    if ctx.json {
        print_json(&serde_json::json!({
            "record": line,
            "recorded": matches!(recorded, Recorded::Stored),
            "passed": report.passed(),
            "evidence": evidence.payload("verify"),
            "report": report.render(),
        }));
    } else {
        if let Some(line) = &line {
            out!("{line}");
        }
        out!("{}", report.render());
    }
    Ok(if report.passed() {
        Outcome::Success
    } else {
        Outcome::Rejected
    })
}

/// The session verify acts on, and the host whose shell runs it (if one
/// does): `--session`, `--session-from` or `$GOALKEEPER_SESSION` when
/// given; else the session a host's shell names in its environment; else,
/// in a host's shell that names none, the session that host last ran in
/// `dir`.
fn session_and_host(
    ctx: &Context,
    store: &mut Store,
    session_given: bool,
    dir: &Path,
) -> Result<(SessionId, Option<Host>), Error> {
    let env = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    let marked = Host::ALL
        .into_iter()
        .find(|h| env(h.shell_marker()).is_some());
    if session_given || ctx.session_from.is_some() {
        return Ok((ctx.session.clone(), ctx.session_from.or(marked)));
    }
    for host in Host::ALL {
        if let Some(id) = host.shell_session_variable().and_then(env)
            && let Ok(session) = SessionId::parse(&id)
        {
            return Ok((session, Some(host)));
        }
    }
    if let Some(host) = marked
        && let Some(session) = host_session::last(store, host, dir)?
    {
        return Ok((session, Some(host)));
    }
    Ok((ctx.session.clone(), marked))
}
