//! The runs of checks (DESIGN.md §13): a `goalkeeper verify` run recorded
//! as evidence, its event and its rows in one transaction; and where each
//! check stands on the files as they are now, for the gate, the prompts
//! and every view.

use super::check_runs::{checked, read_run, record_in};
use super::sql::{Tx, params};
use super::{Store, goals};
use crate::SessionId;
use crate::check::{self, Checked, Evidence, Scope};
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
        self.in_session_tx(session, |tx| {
            record_from_hook_in(tx, session, record, now_ms)
        })
    }

    /// Whether an open task of `session` carries a check. A list with a
    /// kept shape has none (such a list keeps no shape, DESIGN.md §7), so
    /// for most lists this reads the session's row alone. Takes no write
    /// lock.
    pub fn has_task_checks(&self, session: &SessionId) -> Result<bool> {
        self.in_read_tx(|tx| {
            if !may_have_task_checks(tx, session)? {
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

/// [`Store::record_from_hook`] on `tx`: the one rule for a hook's record,
/// whether it runs in a transaction of its own or in a hook event's.
pub(crate) fn record_from_hook_in(
    tx: &Tx<'_>,
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
}

/// False when the session's list surely has no task check: it was never
/// written, or it keeps its shape, which a list with a check never does
/// (DESIGN.md §7). Reads the session's row alone, so the many reads of a
/// list without checks (every hook event's progress mark) skip its rows.
fn may_have_task_checks(tx: &Tx<'_>, session: &SessionId) -> Result<bool> {
    let (version, shape) = super::shape::load(tx, session)?;
    Ok(version > 0 && shape.is_none())
}

/// The open tasks' checks of the session, in list order.
fn open_task_checks(tx: &Tx<'_>, session: &SessionId) -> Result<Vec<(String, String)>> {
    if !may_have_task_checks(tx, session)? {
        return Ok(Vec::new());
    }
    tx.query_all(
        "SELECT content, check_cmd FROM tasks
         WHERE session_id = ?1 AND check_cmd IS NOT NULL
           AND status NOT IN ('completed', 'abandoned')
         ORDER BY phase_pos, pos",
        params![session.as_str()],
        |r| Ok((r.get::<String>(0)?, r.get::<String>(1)?)),
    )
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
    wanted.extend(
        open_task_checks(tx, session)?
            .into_iter()
            .map(|(task, check)| (Scope::Task(task), check)),
    );
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
    commands.extend(open_task_checks(tx, session)?.into_iter().map(|(_, c)| c));
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
