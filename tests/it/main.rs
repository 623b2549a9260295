//! The integration tests, in one binary so the suite links once. Each
//! module is one concern; [`common`] holds `TestEnv` (the real binary on a
//! temporary database, from a cleared environment) and the library-level
//! helpers, [`fuzz_checks`] the invariants the fuzz targets share.
//!
//! A new test file goes in this folder and gets a `mod` line below.

// `postgres::acceptance` compiles the store's acceptance test files a second
// time, on PostgreSQL: one source for both backends, on purpose.
#![allow(clippy::duplicate_mod)]

#[macro_use]
#[allow(dead_code)]
mod common;
#[path = "../fuzz_checks/mod.rs"]
mod fuzz_checks;

mod backup;
mod bad_input;
mod checks;
mod cli_goal;
mod cli_settings;
mod cli_todo;
mod concurrency;
mod crash_safety;
mod db_paths;
mod fuzz_replay;
mod hardening;
mod hook_transactions;
mod hooks;
mod load;
mod mcp;
mod mcp_protocol;
mod mcp_python;
mod message_sequence;
mod no_progress;
mod nul;
mod package;
#[cfg(feature = "postgres")]
mod postgres;
mod prompts;
mod proof;
mod readers;
mod resources;
mod startup;
mod store_faults;
mod store_files;
mod teams;
mod todo_ops;
mod todo_props;
mod todo_store;
mod tour;
mod undo_history;
mod user_files;
mod verify_processes;
#[cfg(feature = "watch")]
mod watch;
