//! Acceptance tests for the todo store (SPEC §7): versions, the event log
//! with failed agent calls, the pending todo error, undo, import, session
//! isolation and removal, and how database files are created and refused.

use crate::common;

mod files;
mod import;
mod log;
mod sessions;
mod undo;

use goalkeeper::{SessionId, Store};

use common::session;

fn sid(id: &str) -> SessionId {
    SessionId::parse(id).unwrap()
}

/// The whole event log of the test session, oldest first.
fn log(store: &mut Store) -> Vec<goalkeeper::store::Event> {
    store.event_log(&session(), 1_000).unwrap()
}
