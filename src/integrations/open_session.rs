//! Whether a host's session is still open (DESIGN.md §8 `--session-from
//! HOST`), and the directory it runs in.
//!
//! Every event a host sends for a session marks it as running in the
//! event's directory ([`running_in`], as it records the session there);
//! the host's own session-end event marks it ended ([`end`]): Claude
//! Code's and Gemini CLI's `SessionEnd`, and pi's `session_shutdown`,
//! which goalkeeper's extension sends as `SessionEnd`. A later event of the
//! same session (a resumed one) opens it again. `codex exec` sends no end
//! event (Codex 0.171 has a `SessionEnd` hook, which it does not run
//! there): its hooks record the Codex process ([`running_under`]), and a
//! session whose process is gone has ended. A goal set from a terminal
//! then acts on the host's last session in the directory while it is open,
//! and waits for the next one once it has ended ([`last_in`]).
//!
//! The marks are the session's own (`<host>.dir`, `<host>.ended`,
//! `<host>.process`), so an
//! end event sent from another directory still ends the session wherever
//! it was recorded.

use std::path::Path;

use super::host_process::HostProcess;
use super::host_session::{self, Host};
use crate::error::Result;
use crate::store::SessionTx;
use crate::{SessionId, Store};

/// The session mark naming the directory `host` last ran the session in:
/// where the session's checks are judged by an MCP server the host started
/// elsewhere (Codex runs a plugin's server in the plugin's folder).
pub fn dir_mark(host: Host) -> String {
    format!("{}.dir", host.as_str())
}

/// The session mark set when `host` said the session ended.
fn ended_mark(host: Host) -> String {
    format!("{}.ended", host.as_str())
}

/// Marks the transaction's session as running in `dir`, open again if it
/// had ended: every event of a session but its end says so.
pub(crate) fn running_in(tx: &SessionTx<'_>, host: Host, dir: &Path, now_ms: i64) -> Result<()> {
    tx.set_mark(&dir_mark(host), &dir.display().to_string(), now_ms)?;
    let ended = ended_mark(host);
    if tx.mark(&ended)?.is_some() {
        tx.remove_mark(&ended)?;
    }
    Ok(())
}

/// The session mark naming the host process the session runs in, for a
/// host whose headless run sends no end event (Codex).
fn process_mark(host: Host) -> String {
    format!("{}.process", host.as_str())
}

/// Records the host process the hook runs under as the session's: once
/// it is gone, the session has ended. Nothing where it cannot be known.
pub(crate) fn running_under(
    tx: &SessionTx<'_>,
    host: Host,
    process: Option<HostProcess>,
    now_ms: i64,
) -> Result<()> {
    match process {
        Some(process) => tx.set_mark(&process_mark(host), &process.to_mark(), now_ms),
        None => Ok(()),
    }
}

/// Marks the transaction's session as ended: the host said so.
pub(crate) fn end(tx: &SessionTx<'_>, host: Host, now_ms: i64) -> Result<()> {
    tx.set_mark(&ended_mark(host), &now_ms.to_string(), now_ms)
}

/// The session a host last ran in a directory, and whether it is open.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LastSession {
    /// Still running, as far as is known: no end event since its last
    /// event, and its host process, when recorded, still runs.
    Open(SessionId),
    /// The host said it ended, and no event of it came since; or the host
    /// process it ran in is gone.
    Ended(SessionId),
}

impl LastSession {
    /// The session, open or ended.
    pub fn session(&self) -> &SessionId {
        match self {
            LastSession::Open(session) | LastSession::Ended(session) => session,
        }
    }
}

/// The session `host` last ran in `dir` and whether it is open; `None`
/// when the host has not run there. A session recorded before sessions
/// were marked ended counts as open, as it did then.
pub fn last_in(store: &mut Store, host: Host, dir: &Path) -> Result<Option<LastSession>> {
    let Some(session) = host_session::last(store, host, dir)? else {
        return Ok(None);
    };
    let (ended, process) = store.read(&session, |tx| {
        Ok((tx.mark(&ended_mark(host))?, tx.mark(&process_mark(host))?))
    })?;
    let gone = process
        .and_then(|text| HostProcess::from_mark(&text))
        .is_some_and(|process| process.is_gone());
    Ok(Some(if ended.is_some() || gone {
        LastSession::Ended(session)
    } else {
        LastSession::Open(session)
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::integrations::host_session::{QueuedGoal, queue_goal, queued_goal};
    use crate::integrations::host_session::{Recorded, record_in};
    use crate::store::Caller;

    /// What a host event does first: records the session in `dir`, open.
    fn record(
        store: &mut Store,
        host: Host,
        dir: &Path,
        session: &SessionId,
        now_ms: i64,
    ) -> Result<Recorded> {
        store.write(session, |tx| {
            let recorded = record_in(tx, &mut Caller::default(), host, dir, now_ms)?;
            running_in(tx, host, dir, now_ms)?;
            Ok(recorded)
        })
    }

    fn id(text: &str) -> SessionId {
        SessionId::parse(text).unwrap()
    }

    fn ended(store: &mut Store, host: Host, session: &SessionId, now_ms: i64) {
        store.write(session, |tx| end(tx, host, now_ms)).unwrap();
    }

    #[test]
    fn a_session_is_open_until_its_end_and_again_when_resumed() {
        let mut store = Store::open_in_memory().unwrap();
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let host = Host::ClaudeCode;
        assert_eq!(last_in(&mut store, host, dir).unwrap(), None);
        let a = id("a");
        record(&mut store, host, dir, &a, 1).unwrap();
        assert_eq!(
            last_in(&mut store, host, dir).unwrap(),
            Some(LastSession::Open(a.clone()))
        );
        ended(&mut store, host, &a, 2);
        assert_eq!(
            last_in(&mut store, host, dir).unwrap(),
            Some(LastSession::Ended(a.clone()))
        );
        // Another host's end is not this one's.
        assert_eq!(last_in(&mut store, Host::Codex, dir).unwrap(), None);
        // Resumed: its next event opens it again.
        record(&mut store, host, dir, &a, 3).unwrap();
        assert_eq!(
            last_in(&mut store, host, dir).unwrap(),
            Some(LastSession::Open(a))
        );
    }

    /// An end marks the session, not a directory: sent from another
    /// directory, it still ends the session where it was recorded; the
    /// end of an older session leaves the newer one open.
    #[test]
    fn an_end_belongs_to_its_session_wherever_it_comes_from() {
        let mut store = Store::open_in_memory().unwrap();
        let tmp = tempfile::tempdir().unwrap();
        let (here, there) = (tmp.path().join("here"), tmp.path().join("there"));
        let host = Host::GeminiCli;
        let (a, b) = (id("a"), id("b"));
        record(&mut store, host, &here, &a, 1).unwrap();
        record(&mut store, host, &there, &a, 2).unwrap();
        ended(&mut store, host, &a, 3);
        assert_eq!(
            last_in(&mut store, host, &here).unwrap(),
            Some(LastSession::Ended(a.clone()))
        );
        record(&mut store, host, &here, &b, 4).unwrap();
        assert_eq!(
            last_in(&mut store, host, &here).unwrap(),
            Some(LastSession::Open(b.clone()))
        );
        let dir = store.read(&b, |tx| tx.mark(&dir_mark(host))).unwrap();
        assert_eq!(dir, Some(here.display().to_string()));
    }

    /// A session whose recorded host process is gone has ended; one whose
    /// process runs is open.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_session_whose_host_process_is_gone_has_ended() {
        let mut store = Store::open_in_memory().unwrap();
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let host = Host::Codex;
        let (a, b) = (id("a"), id("b"));
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let process = HostProcess::of_pid(child.id()).unwrap();
        record(&mut store, host, dir, &a, 1).unwrap();
        store
            .write(&a, |tx| running_under(tx, host, Some(process), 1))
            .unwrap();
        assert_eq!(
            last_in(&mut store, host, dir).unwrap(),
            Some(LastSession::Open(a.clone()))
        );
        child.kill().unwrap();
        child.wait().unwrap();
        assert_eq!(
            last_in(&mut store, host, dir).unwrap(),
            Some(LastSession::Ended(a))
        );
        // Nothing recorded: open.
        record(&mut store, host, dir, &b, 2).unwrap();
        store
            .write(&b, |tx| running_under(tx, host, None, 2))
            .unwrap();
        assert_eq!(
            last_in(&mut store, host, dir).unwrap(),
            Some(LastSession::Open(b))
        );
    }

    #[test]
    fn the_next_session_adopts_a_goal_queued_after_the_last_one_ended() {
        let mut store = Store::open_in_memory().unwrap();
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let host = Host::Pi;
        let (a, b) = (id("a"), id("b"));
        record(&mut store, host, dir, &a, 1).unwrap();
        ended(&mut store, host, &a, 2);
        let goal = QueuedGoal {
            objective: "Ship it".into(),
            budget: None,
            checks: vec!["true".into()],
        };
        queue_goal(&mut store, host, dir, &goal, 3).unwrap();
        let recorded = record(&mut store, host, dir, &b, 4).unwrap();
        assert!(recorded.adopted.is_some_and(|r| !r.is_error));
        assert_eq!(recorded.previous, Some(a.clone()));
        let adopted = store.read(&b, |tx| tx.goal()).unwrap().unwrap();
        assert_eq!(adopted.objective, "Ship it");
        assert_eq!(store.read(&a, |tx| tx.goal()).unwrap(), None);
        assert_eq!(queued_goal(&mut store, host, dir).unwrap(), None);
    }
}
