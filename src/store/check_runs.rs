//! The rows of checks' runs (DESIGN.md §13): a run recorded as evidence
//! (its event and a row per check, in one transaction), and where a check
//! stands on the files as they are now, read from its runs. Reads no goal
//! and no list: [`super::checks`] and [`super::goals`] say which checks.

use super::events::{self, EventKind, NewEvent};
use super::sessions;
use super::sql::{Row, Tx, params};
use crate::SessionId;
use crate::check::{self, CheckState, Checked, Evidence, Exit, RunSummary, Scope};
use crate::error::Result;
use crate::tree::Look;

/// Records `evidence` in `tx` (see [`crate::store::SessionTx::record_run`]).
pub(crate) fn record_in(
    tx: &Tx<'_>,
    session: &SessionId,
    evidence: &Evidence,
    via: &str,
    now_ms: i64,
) -> Result<bool> {
    sessions::touch(tx, session, now_ms)?;
    let mut written = 0;
    for run in &evidence.checks {
        let (code, signal, timeout) = match run.exit {
            Exit::Code(code) => (Some(i64::from(code)), None, None),
            Exit::Signal(signal) => (None, Some(i64::from(signal)), None),
            Exit::TimedOut(secs) => (None, None, Some(i64::try_from(secs).unwrap_or(i64::MAX))),
        };
        written += tx.execute(
            "INSERT INTO check_runs (session_id, run, command, dir, fingerprint, exit_code,
                                     signal, timeout_s, ms, started_ms, ended_ms)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)
             ON CONFLICT (run, command) DO NOTHING",
            params![
                session.as_str(),
                evidence.run.as_str(),
                run.command.as_str(),
                evidence.dir.as_str(),
                evidence.fingerprint.as_str(),
                code,
                signal,
                timeout,
                i64::try_from(run.ms).unwrap_or(i64::MAX),
                evidence.started_ms,
                // Recorded now, at or after the run's end.
                now_ms.max(evidence.started_ms)
            ],
        )?;
    }
    if written == 0 && !evidence.checks.is_empty() {
        return Ok(false);
    }
    events::append(
        tx,
        &NewEvent {
            session,
            at_ms: now_ms,
            actor: &evidence.by.actor,
            kind: EventKind::Check,
            op: Some("verify"),
            payload: &evidence.payload(via).to_string(),
            error: None,
            version: None,
            agent: evidence.by.agent.as_deref(),
        },
    )?;
    Ok(true)
}

/// Where each of the `wanted` checks stands on the files `look` sees, in
/// the order given: its latest run in `look`'s directory on these files
/// decides, else its latest run there at all ([`check::state`]).
pub(crate) fn checked(
    tx: &Tx<'_>,
    session: &SessionId,
    wanted: Vec<(Scope, String)>,
    look: &Look,
) -> Result<Vec<Checked>> {
    let dir = look.dir().to_string_lossy().into_owned();
    let current = look.fingerprint().ok().map(|f| f.as_str().to_owned());
    wanted
        .into_iter()
        .map(|(scope, command)| {
            let state = state_of(tx, session, &command, &dir, current.as_deref())?;
            Ok(Checked {
                scope,
                command,
                state,
            })
        })
        .collect()
}

/// Where `command` stands in `dir`, whose files have the fingerprint
/// `current` (`None`: they cannot be read). On these files a failure is
/// outvoted only by a pass that started after it ended (a check that
/// passes and fails on the same files is a failing check, whatever order
/// overlapping runs were recorded in); without a run on them, the latest
/// run in `dir` says where it stood before.
fn state_of(
    tx: &Tx<'_>,
    session: &SessionId,
    command: &str,
    dir: &str,
    current: Option<&str>,
) -> Result<CheckState> {
    const RUN: &str = "SELECT fingerprint, exit_code, signal, timeout_s, started_ms FROM check_runs
         WHERE session_id = ?1 AND command = ?2 AND dir = ?3";
    let fingerprint = current.unwrap_or("");
    let pass = tx.query_opt(
        &format!(
            "{RUN} AND fingerprint = ?4 AND exit_code = 0 ORDER BY started_ms DESC, id DESC LIMIT 1"
        ),
        params![session.as_str(), command, dir, fingerprint],
        read_run,
    )?;
    let failure = tx.query_opt(
        &format!(
            "{RUN} AND fingerprint = ?4 AND (exit_code IS NULL OR exit_code <> 0)
               AND COALESCE(ended_ms, started_ms + ms) >= ?5
             ORDER BY id DESC LIMIT 1"
        ),
        params![
            session.as_str(),
            command,
            dir,
            fingerprint,
            pass.as_ref().map_or(i64::MIN, |p| p.at_ms)
        ],
        read_run,
    )?;
    let at_current = failure.or(pass).filter(|_| current.is_some());
    let run = match at_current {
        Some(run) => Some(run),
        None => tx.query_opt(
            &format!("{RUN} ORDER BY id DESC LIMIT 1"),
            params![session.as_str(), command, dir],
            read_run,
        )?,
    };
    let at_current = run
        .as_ref()
        .filter(|r| Some(r.fingerprint.as_str()) == current);
    if run.is_none()
        && let Some(ran_in) = tx.query_opt(
            "SELECT dir FROM check_runs WHERE session_id = ?1 AND command = ?2
             ORDER BY id DESC LIMIT 1",
            params![session.as_str(), command],
            |r| r.get::<String>(0),
        )?
    {
        return Ok(CheckState::RanElsewhere {
            ran_in,
            here: dir.to_owned(),
        });
    }
    Ok(check::state(at_current, run.as_ref()))
}

pub(crate) fn read_run(r: &Row<'_>) -> Result<RunSummary> {
    let code: Option<i64> = r.get(1)?;
    let signal: Option<i64> = r.get(2)?;
    let timeout: Option<i64> = r.get(3)?;
    let exit = match (code, signal, timeout) {
        (Some(code), _, _) => Exit::Code(i32::try_from(code).unwrap_or(i32::MAX)),
        (None, Some(signal), _) => Exit::Signal(i32::try_from(signal).unwrap_or(0)),
        (None, None, timeout) => Exit::TimedOut(timeout.unwrap_or(0).max(0) as u64),
    };
    Ok(RunSummary {
        fingerprint: r.get(0)?,
        exit,
        at_ms: r.get(4)?,
    })
}
