//! Acceptance tests for the todo store (DESIGN.md §7): versions, the event log
//! with failed agent calls, the pending todo error, undo, import, session
//! isolation and removal, goals, and integration marks and pointers. They
//! run on both backends (`postgres::acceptance` compiles them again on
//! PostgreSQL); `store_files` holds the SQLite file tests.

pub(crate) use super::common;

mod checks;
mod goals;
mod import;
mod kept_lists;
mod leases;
mod log;
mod marks;
mod narrow_reads;
mod nul;
mod overlapping_runs;
mod sessions;
mod text_only;
mod undo;

use goalkeeper::{SessionId, Store};

use common::session;

fn sid(id: &str) -> SessionId {
    SessionId::parse(id).unwrap()
}

/// The whole event log of the test session, oldest first.
fn log(store: &mut Store) -> Vec<goalkeeper::store::Event> {
    store.read(&session(), |tx| tx.event_log(1_000)).unwrap()
}
