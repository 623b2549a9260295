//! The runs of checks (DESIGN.md §13): a `goalkeeper verify` run recorded
//! as evidence, its event and its rows in one transaction; and where each
//! check stands on the files as they are now, for the gate, the prompts
//! and every view.

use super::events::{self, EventKind, NewEvent};
use super::sql::{Row, Tx, params};
use super::{Store, goals, sessions};
use crate::SessionId;
use crate::check::{self, CheckState, Checked, Evidence, Exit, RunSummary, Scope};
use crate::error::Result;
use crate::tree::Look;

/// Every check of a session that still gates something (the live goal's,
/// and those of its open tasks) and where it stands.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct SessionChecks {
    /// The live goal's checks, in order.
    pub goal: Vec<Checked>,
    /// Each open task's check, in list order.
    pub tasks: Vec<Checked>,
    /// Why the files could not be read, when they could not.
    pub tree_error: Option<String>,
}

impl SessionChecks {
    /// True when nothing carries a check.
    pub fn is_empty(&self) -> bool {
        self.goal.is_empty() && self.tasks.is_empty()
    }

    /// Every check, the goal's first.
    pub fn all(&self) -> impl Iterator<Item = &Checked> {
        self.goal.iter().chain(&self.tasks)
    }

    /// Every check with where it stands, the goal's first, as the prompts
    /// take them.
    pub fn proof(self) -> check::Proof {
        let mut checked = self.goal;
        checked.extend(self.tasks);
        check::Proof {
            checked,
            tree_error: self.tree_error,
        }
    }
}

impl Store {
    /// Records one verify run of `session` as evidence: its event (kind
    /// `check`, op `verify`; `via` says how it came in) and a row per
    /// check, in one transaction. A run already recorded (the same run id,
    /// from `verify` itself and from a host hook) writes nothing and
    /// returns false.
    pub fn record_run(
        &mut self,
        session: &SessionId,
        evidence: &Evidence,
        via: &str,
        now_ms: i64,
    ) -> Result<bool> {
        self.in_session_tx(session, |tx| record_in(tx, session, evidence, via, now_ms))
    }

    /// Stores the run a host's hook found in its record of a shell call
    /// ([`crate::verify::record::from_shell_call`]), for `session` (the
    /// hook event's), in one transaction: its checks are named by the
    /// session's checks of its scope as they are now, the run is recorded
    /// as [`Store::record_run`] records it (`via` `hook`), and a run
    /// already recorded (by `verify` itself) writes nothing. Refused, with
    /// nothing written, when the record is another session's or names no
    /// check the session has. Returns whether anything was written.
    pub fn record_from_hook(
        &mut self,
        session: &SessionId,
        record: &crate::verify::record::LineRecord,
        now_ms: i64,
    ) -> Result<bool> {
        if record.session != session.as_str() {
            return Err(crate::Error::Rejected(format!(
                "the record is of session {}, not of this session {session}; it was not stored",
                crate::sanitize::one_line(&record.session)
            )));
        }
        self.in_session_tx(session, |tx| {
            let scope = match &record.task {
                None => Scope::Goal,
                Some(task) => Scope::Task(task.clone()),
            };
            let Some(evidence) = record.evidence(&commands(tx, session, &scope)?) else {
                return Err(crate::Error::Rejected(
                    "the record names no check the session has now; it was not stored".into(),
                ));
            };
            record_in(tx, session, &evidence, "hook", now_ms)
        })
    }

    /// Whether an open task of `session` carries a check. A list with a
    /// kept shape has none (such a list keeps no shape, DESIGN.md §7), so
    /// for most lists this reads the session's row alone. Takes no write
    /// lock.
    pub fn has_task_checks(&self, session: &SessionId) -> Result<bool> {
        self.in_read_tx(|tx| {
            let (version, shape) = super::shape::load(tx, session)?;
            if version == 0 || shape.is_some() {
                return Ok(false);
            }
            Ok(tx
                .query_opt(
                    "SELECT 1 FROM tasks WHERE session_id = ?1 AND check_cmd IS NOT NULL
                       AND status NOT IN ('completed', 'abandoned') LIMIT 1",
                    params![session.as_str()],
                    |_| Ok(()),
                )?
                .is_some())
        })
    }

    /// The commands of the checks that `goalkeeper verify` runs for
    /// `scope`: the live goal's checks, or the task's one. Empty when
    /// there is none (no live goal, no such task, no check). Takes no
    /// write lock.
    pub fn checks_to_run(&self, session: &SessionId, scope: &Scope) -> Result<Vec<String>> {
        self.in_read_tx(|tx| commands(tx, session, scope))
    }

    /// Every check of `session` that still gates something (the live
    /// goal's, each open task's) and where it stands on the files `look` sees. Takes no write lock; reads the
    /// files only when there is a check.
    pub fn session_checks(&self, session: &SessionId, look: &Look) -> Result<SessionChecks> {
        self.in_read_tx(|tx| session_checks(tx, session, look))
    }
}

/// The commands `verify` runs for `scope` in `tx`.
pub(crate) fn commands(tx: &Tx<'_>, session: &SessionId, scope: &Scope) -> Result<Vec<String>> {
    match scope {
        Scope::Goal => Ok(goals::load_goal(tx, session)?
            .filter(|g| g.status.is_live())
            .map(|g| g.checks)
            .unwrap_or_default()),
        Scope::Task(task) => Ok(tx
            .query_opt(
                "SELECT check_cmd FROM tasks WHERE session_id = ?1 AND content = ?2",
                params![session.as_str(), task.as_str()],
                |r| r.get::<Option<String>>(0),
            )?
            .flatten()
            .into_iter()
            .collect()),
    }
}

/// Every check of the session in `tx`, and where each stands on the files
/// `look` sees.
pub(crate) fn session_checks(
    tx: &Tx<'_>,
    session: &SessionId,
    look: &Look,
) -> Result<SessionChecks> {
    let mut wanted: Vec<(Scope, String)> = goals::load_goal(tx, session)?
        .filter(|g| g.status.is_live())
        .map(|g| g.checks)
        .unwrap_or_default()
        .into_iter()
        .map(|c| (Scope::Goal, c))
        .collect();
    let goal_count = wanted.len();
    wanted.extend(tx.query_all(
        "SELECT content, check_cmd FROM tasks
         WHERE session_id = ?1 AND check_cmd IS NOT NULL
           AND status NOT IN ('completed', 'abandoned')
         ORDER BY phase_pos, pos",
        params![session.as_str()],
        |r| Ok((Scope::Task(r.get::<String>(0)?), r.get::<String>(1)?)),
    )?);
    if wanted.is_empty() {
        return Ok(SessionChecks::default());
    }
    let mut all = checked(tx, session, wanted, look)?;
    let tasks = all.split_off(goal_count);
    Ok(SessionChecks {
        goal: all,
        tasks,
        tree_error: look.fingerprint().err().map(str::to_owned),
    })
}

/// The checks of `list`'s tasks and where they stand, as the section a
/// `view` of it ends with ([`check::task_list`]); `None` when no task has
/// a check (the view is then as it always was).
pub(crate) fn task_section(
    tx: &Tx<'_>,
    session: &SessionId,
    list: &crate::todo::TodoList,
    look: &Look,
    now_ms: i64,
) -> Result<Option<String>> {
    let wanted: Vec<(Scope, String)> = list
        .tasks()
        .filter_map(|(_, t)| Some((Scope::Task(t.content.clone()), t.check.clone()?)))
        .collect();
    if wanted.is_empty() {
        return Ok(None);
    }
    let checked = checked(tx, session, wanted, look)?;
    Ok(Some(check::task_list(
        &checked,
        look.fingerprint().err(),
        now_ms,
    )))
}

/// The checks' part of the progress mark
/// ([`crate::goal::continuation::checks_mark`]): each check of the live goal
/// and of the tasks with its latest run's fingerprint and end, wherever it
/// ran. Reads no file.
pub(crate) fn progress_part(tx: &Tx<'_>, session: &SessionId) -> Result<String> {
    let mut commands: Vec<String> = goals::load_goal(tx, session)?
        .filter(|g| g.status.is_live())
        .map(|g| g.checks)
        .unwrap_or_default();
    commands.extend(tx.query_all(
        "SELECT check_cmd FROM tasks
         WHERE session_id = ?1 AND check_cmd IS NOT NULL
           AND status NOT IN ('completed', 'abandoned')
         ORDER BY phase_pos, pos",
        params![session.as_str()],
        |r| r.get::<String>(0),
    )?);
    let mut latest = Vec::with_capacity(commands.len());
    for command in commands {
        let run = tx.query_opt(
            "SELECT fingerprint, exit_code, signal, timeout_s, started_ms FROM check_runs
             WHERE session_id = ?1 AND command = ?2 ORDER BY id DESC LIMIT 1",
            params![session.as_str(), command.as_str()],
            read_run,
        )?;
        latest.push((command, run.map(|r| (r.fingerprint, r.exit.describe()))));
    }
    Ok(crate::goal::continuation::checks_mark(&latest))
}

/// Records `evidence` in `tx` (see [`Store::record_run`]).
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
                                     signal, timeout_s, ms, started_ms)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
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
                evidence.started_ms
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
/// `current` (`None`: they cannot be read).
fn state_of(
    tx: &Tx<'_>,
    session: &SessionId,
    command: &str,
    dir: &str,
    current: Option<&str>,
) -> Result<CheckState> {
    // The latest run on the current files when there is one, else the
    // latest run: one row either way.
    let run = tx.query_opt(
        "SELECT fingerprint, exit_code, signal, timeout_s, started_ms FROM check_runs
         WHERE session_id = ?1 AND command = ?2 AND dir = ?3
         ORDER BY (fingerprint = ?4) DESC, id DESC LIMIT 1",
        params![session.as_str(), command, dir, current.unwrap_or("")],
        read_run,
    )?;
    let at_current = run
        .as_ref()
        .filter(|r| Some(r.fingerprint.as_str()) == current);
    Ok(check::state(at_current, run.as_ref()))
}

fn read_run(r: &Row<'_>) -> Result<RunSummary> {
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
