//! The Claude Code integration tested through the real `claude` CLI
//! (DESIGN.md §9): each test installs goalkeeper into a temporary project, runs
//! `claude -p` headless against a scripted model on 127.0.0.1 ([`model`]),
//! and asserts on what the model received and on the store.
//!
//! The CLI is installed by `scripts/install-host.sh claude-code` (`.ci/run`
//! runs it, then these ignored tests with `--ignored`); a missing CLI is
//! skipped with a message, except in CI, where it fails the test.

pub(crate) mod host;
pub(crate) mod model;

mod commands;
mod context;
mod continuation;
mod fork;
mod install;
mod shell;
mod stop_cap;
mod subagent;
mod todo_tools;
mod tools;
mod trust;
mod usage;
mod verify;
