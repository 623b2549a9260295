//! Read-only views for a live watcher (`goalkeeper watch`): a cheap change
//! poll, one session's whole picture, and a one-row summary per session.
//!
//! Every method here reads in a *deferred* transaction: in WAL mode that is a
//! snapshot of the last commit, so a watcher never takes the write lock and
//! never waits behind a writer (DESIGN.md §7), however often it polls.

// Only the `watch` command reads these.
#![cfg_attr(not(feature = "watch"), expect(dead_code))]

use serde::Serialize;

use super::Backend;
use super::events::{self, Event};
use super::goals::load_goal;
use super::sessions;
use super::sql::{Tx, params};
use crate::SessionId;
use crate::error::Result;
use crate::goal::Goal;
use crate::todo::{Counts, TodoList};

/// Everything a watcher shows about one session, read in one snapshot.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct SessionSnapshot {
    /// The session's id.
    pub session: String,
    /// Its last write (milliseconds since the epoch); `None` for a session
    /// never written.
    pub updated_ms: Option<i64>,
    /// The todo list.
    pub todos: TodoList,
    /// The list's version (0 for a session never written).
    pub todo_version: i64,
    /// The current goal (the latest, whatever its status).
    pub goal: Option<Goal>,
    /// The last events of the log, newest first.
    pub events: Vec<Event>,
    /// The token usage counted for the current goal since the `since_ms`
    /// given to [`Admin::session_snapshot`](super::Admin::session_snapshot): `(at_ms, tokens)`, oldest first.
    pub recent_usage: Vec<(i64, u64)>,
    /// When each named agent of the list's lease ends, as granted
    /// (DESIGN.md §2.5).
    pub agents: Vec<(String, i64)>,
    /// The checks that still gate something, and where each stands on the
    /// files of the directory `watch` runs in (DESIGN.md §13).
    pub checks: Vec<crate::check::Checked>,
}

/// One session as a board of every session shows it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct SessionSummary {
    /// The session's id.
    pub id: String,
    /// Its last write, milliseconds since the epoch.
    pub updated_ms: i64,
    /// Counts over its todo list.
    pub todos: Counts,
    /// The task in progress, if any.
    pub in_progress: Option<String>,
    /// How many named agents hold its tasks (DESIGN.md §2.5).
    pub agents: usize,
    /// Its current goal, if it ever had one.
    pub goal: Option<Goal>,
}

/// How far back the usage scan of a snapshot looks at most, in events: a
/// bound on the work of one refresh whatever the log holds.
const USAGE_SCAN_LIMIT: i64 = 5_000;

impl super::Admin<'_> {
    /// A number that changes whenever another connection (any process)
    /// commits to the database: SQLite's `PRAGMA data_version`, which reads
    /// the WAL index in shared memory, not the file. Poll it to know when
    /// to read again; it may also change without a visible difference
    /// (a checkpoint), never the other way round.
    ///
    /// On PostgreSQL (fleet mode) it is the newest event id plus the
    /// session rows' latest update time, which every write moves; a
    /// watcher may also `LISTEN goalkeeper` (see `store::pg`).
    pub(crate) fn data_version(&self) -> Result<i64> {
        match &self.store.backend {
            Backend::Sqlite(file) => Ok(file
                .conn
                .query_row("PRAGMA data_version", [], |r| r.get(0))?),
            #[cfg(feature = "postgres")]
            Backend::Postgres(_) => self.read(|tx| {
                tx.query_one(
                    "SELECT COALESCE((SELECT max(id) FROM events), 0)
                          + COALESCE((SELECT max(updated_ms) FROM sessions), 0)
                          + (SELECT count(*) FROM sessions)",
                    &[],
                    |r| r.get(0),
                )
            }),
        }
    }

    /// One session's list, goal, last `events` events (newest first) and
    /// the goal's usage since `since_ms`, from one read snapshot. A session
    /// never written reads as empty.
    pub(crate) fn session_snapshot(
        &self,
        session: &SessionId,
        events: usize,
        since_ms: i64,
        look: &crate::tree::Look,
    ) -> Result<SessionSnapshot> {
        self.read(|tx| {
            let updated_ms = tx.query_opt(
                "SELECT updated_ms FROM sessions WHERE id = ?1",
                params![session.as_str()],
                |r| r.get::<i64>(0),
            )?;
            let row = sessions::load_todos(tx, session)?;
            let goal = load_goal(tx, session)?;
            let mut log = events::recent(tx, session, events)?;
            log.reverse();
            let recent_usage = match &goal {
                Some(goal) => usage_since(tx, session, goal.id, since_ms)?,
                None => Vec::new(),
            };
            Ok(SessionSnapshot {
                session: session.as_str().to_owned(),
                updated_ms,
                todos: row.list,
                todo_version: row.version,
                goal,
                events: log,
                recent_usage,
                agents: super::claims::agent_leases(tx, session)?,
                checks: super::checks::session_checks(tx, session, look)?
                    .all()
                    .cloned()
                    .collect(),
            })
        })
    }

    /// Every session with its counts, task in progress and current goal,
    /// most recently updated first, from one read snapshot.
    pub(crate) fn session_summaries(&self) -> Result<Vec<SessionSummary>> {
        self.read(|tx| {
            let rows = tx.query_all(
                "SELECT id, updated_ms FROM sessions ORDER BY updated_ms DESC, id",
                &[],
                |r| Ok((r.get::<String>(0)?, r.get::<i64>(1)?)),
            )?;
            let mut summaries = Vec::with_capacity(rows.len());
            for (id, updated_ms) in rows {
                let session = SessionId::parse(&id)?;
                let list = sessions::load_todos(tx, &session)?.list;
                let mut agents: Vec<&str> = (list.tasks())
                    .filter_map(|(_, t)| crate::todo::holder_label(t))
                    .collect();
                agents.sort_unstable();
                agents.dedup();
                summaries.push(SessionSummary {
                    updated_ms,
                    todos: list.counts(),
                    in_progress: list.in_progress().map(|(_, t)| t.content.clone()),
                    agents: agents.len(),
                    goal: load_goal(tx, &session)?,
                    id,
                });
            }
            Ok(summaries)
        })
    }

    /// A global pointer (such as the Claude Code session last seen in a
    /// directory), read without the write lock.
    pub(crate) fn peek_pointer(&self, key: &str) -> Result<Option<String>> {
        self.read(|tx| {
            tx.query_opt(
                "SELECT value FROM pointers WHERE key = ?1",
                params![key],
                |r| r.get(0),
            )
        })
    }
}

/// The usage events of goal `goal_id` at or after `since_ms`, oldest first.
fn usage_since(
    tx: &Tx<'_>,
    session: &SessionId,
    goal_id: i64,
    since_ms: i64,
) -> Result<Vec<(i64, u64)>> {
    let rows = tx.query_all(
        "SELECT at_ms, payload FROM events
         WHERE session_id = ?1 AND kind = 'goal' AND op = 'usage' AND ok = 1
         ORDER BY id DESC LIMIT ?2",
        params![session.as_str(), USAGE_SCAN_LIMIT],
        |r| Ok((r.get::<i64>(0)?, r.get::<String>(1)?)),
    )?;
    let mut usage = Vec::new();
    for (at_ms, payload) in rows {
        if at_ms < since_ms {
            break;
        }
        let Ok(value) = serde_json::from_str::<serde_json::Value>(&payload) else {
            continue;
        };
        if value["goal"].as_i64() != Some(goal_id) {
            continue;
        }
        let part = |key: &str| value["usage"][key].as_u64().unwrap_or(0);
        let counted = part("input")
            .saturating_add(part("output"))
            .saturating_add(part("cache_write"));
        usage.push((at_ms, counted));
    }
    usage.reverse();
    Ok(usage)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::goal::{GoalOp, Usage};
    use crate::store::GoalCall;
    use crate::store::Store;
    use crate::todo::{Actor, Call};

    #[test]
    fn a_snapshot_holds_the_list_goal_events_and_recent_usage() {
        let mut store = Store::open_in_memory().unwrap();
        let s = SessionId::parse("s").unwrap();
        let empty = store
            .admin()
            .session_snapshot(&s, 10, 0, &crate::tree::Look::at(None, None))
            .unwrap();
        assert_eq!(empty.updated_ms, None);
        assert!(empty.todos.is_empty() && empty.goal.is_none() && empty.events.is_empty());

        let call = r#"{"op":"init","items":["a","b"]}"#;
        store
            .todo(
                &s,
                Call::Json(call),
                Actor::Agent,
                &mut crate::store::Caller::default(),
                1_000,
            )
            .unwrap();
        let set = GoalOp::Set {
            objective: "ship".parse().unwrap(),
            budget: Some(1_000),
            checks: Vec::new(),
        };
        store
            .write(&s, |tx| {
                tx.goal_call(
                    GoalCall::Op(&set),
                    Actor::User,
                    &mut crate::store::Caller::default(),
                    2_000,
                )
            })
            .unwrap();
        for (at, input) in [(10_000, 100), (70_000, 200), (130_000, 300)] {
            let usage = GoalOp::Usage(Usage {
                input,
                output: 5,
                cache_write: 1,
                cache_read: 1_000,
            });
            store
                .write(&s, |tx| {
                    tx.goal_call(
                        GoalCall::Op(&usage),
                        Actor::Agent,
                        &mut crate::store::Caller::default(),
                        at,
                    )
                })
                .unwrap();
        }
        let snap = store
            .admin()
            .session_snapshot(&s, 3, 60_000, &crate::tree::Look::at(None, None))
            .unwrap();
        assert_eq!(snap.updated_ms, Some(130_000));
        assert_eq!(snap.todo_version, 1);
        assert_eq!(snap.goal.as_ref().unwrap().tokens_used, 618);
        let ops: Vec<_> = snap.events.iter().map(|e| e.op.clone().unwrap()).collect();
        assert_eq!(ops, ["usage", "usage", "usage"], "newest first, cut to 3");
        assert!(snap.events[0].at_ms > snap.events[1].at_ms);
        assert_eq!(snap.recent_usage, [(70_000, 206), (130_000, 306)]);
    }

    #[test]
    fn usage_of_a_replaced_goal_is_not_recent_usage_of_the_new_one() {
        let mut store = Store::open_in_memory().unwrap();
        let s = SessionId::parse("s").unwrap();
        let set = |objective: &str| GoalOp::Set {
            objective: objective.parse().unwrap(),
            budget: None,
            checks: Vec::new(),
        };
        let usage = GoalOp::Usage(Usage {
            input: 50,
            ..Usage::default()
        });
        store
            .write(&s, |tx| {
                tx.goal_call(
                    GoalCall::Op(&set("one")),
                    Actor::User,
                    &mut crate::store::Caller::default(),
                    1,
                )
            })
            .unwrap();
        store
            .write(&s, |tx| {
                tx.goal_call(
                    GoalCall::Op(&usage),
                    Actor::Agent,
                    &mut crate::store::Caller::default(),
                    2,
                )
            })
            .unwrap();
        store
            .write(&s, |tx| {
                tx.goal_call(
                    GoalCall::Op(&set("two")),
                    Actor::User,
                    &mut crate::store::Caller::default(),
                    3,
                )
            })
            .unwrap();
        assert_eq!(
            store
                .admin()
                .session_snapshot(&s, 10, 0, &crate::tree::Look::at(None, None))
                .unwrap()
                .recent_usage,
            []
        );
    }

    #[test]
    fn summaries_list_every_session_newest_first_with_its_goal() {
        let mut store = Store::open_in_memory().unwrap();
        let (a, b) = (
            SessionId::parse("a").unwrap(),
            SessionId::parse("b").unwrap(),
        );
        let call = r#"{"op":"init","items":["x","y"]}"#;
        store
            .todo(
                &a,
                Call::Json(call),
                Actor::Agent,
                &mut crate::store::Caller::default(),
                5,
            )
            .unwrap();
        store
            .todo(
                &a,
                Call::Json(r#"{"op":"start","task":"y"}"#),
                Actor::Agent,
                &mut crate::store::Caller::default(),
                6,
            )
            .unwrap();
        let set = GoalOp::Set {
            objective: "goal of b".parse().unwrap(),
            budget: None,
            checks: Vec::new(),
        };
        store
            .write(&b, |tx| {
                tx.goal_call(
                    GoalCall::Op(&set),
                    Actor::User,
                    &mut crate::store::Caller::default(),
                    9,
                )
            })
            .unwrap();
        let all = store.admin().session_summaries().unwrap();
        assert_eq!(all.len(), 2);
        assert_eq!((all[0].id.as_str(), all[0].updated_ms), ("b", 9));
        assert_eq!(all[0].goal.as_ref().unwrap().objective, "goal of b");
        assert_eq!(all[1].todos.total, 2);
        assert_eq!(all[1].in_progress.as_deref(), Some("y"));
        assert!(all[1].goal.is_none());
    }

    #[test]
    fn another_connections_commit_changes_the_data_version() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("g.db");
        let mut writer = Store::open(&db).unwrap();
        let mut watcher = Store::open(&db).unwrap();
        let before = watcher.admin().data_version().unwrap();
        assert_eq!(
            watcher.admin().data_version().unwrap(),
            before,
            "nothing committed"
        );
        let s = SessionId::parse("s").unwrap();
        writer
            .todo(
                &s,
                Call::Json(r#"{"op":"init","items":["a"]}"#),
                Actor::Agent,
                &mut crate::store::Caller::default(),
                1,
            )
            .unwrap();
        assert_ne!(watcher.admin().data_version().unwrap(), before);
    }

    #[test]
    fn reads_go_on_while_another_connection_holds_the_write_lock() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("g.db");
        let mut writer = Store::open(&db).unwrap();
        let s = SessionId::parse("s").unwrap();
        writer
            .todo(
                &s,
                Call::Json(r#"{"op":"init","items":["a"]}"#),
                Actor::Agent,
                &mut crate::store::Caller::default(),
                1,
            )
            .unwrap();
        let mut watcher = Store::open(&db).unwrap();
        let Backend::Sqlite(file) = &watcher.backend else {
            unreachable!("a file store")
        };
        file.conn.busy_timeout(std::time::Duration::ZERO).unwrap();
        let lock = writer.begin_write().unwrap();
        lock.execute("UPDATE sessions SET updated_ms = 99", &[])
            .unwrap();
        // With a zero busy timeout, any wait for the lock would be an error.
        let snap = watcher
            .admin()
            .session_snapshot(&s, 10, 0, &crate::tree::Look::at(None, None))
            .unwrap();
        assert_eq!(
            snap.updated_ms,
            Some(1),
            "the last commit, not the open write"
        );
        assert_eq!(watcher.admin().session_summaries().unwrap().len(), 1);
        assert_eq!(watcher.admin().peek_pointer("k").unwrap(), None);
        drop(lock);
    }
}
