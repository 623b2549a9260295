//! Acceptance tests for the todo engine (DESIGN.md §1 and §2), driven through the
//! public API the way an agent or a person would: one JSON call at a time
//! against a store. One file per part of the spec.

pub(crate) use super::common;

mod agent_limits;
mod bounded;
mod errors;
mod limits;
mod no_ops;
mod repairs;
mod rules;
mod summary;
mod table;
