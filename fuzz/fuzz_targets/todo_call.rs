//! Fuzz target `todo_call`: the invariants are checked in
//! `tests/fuzz_checks/todo_call.rs`, shared with `tests/it/fuzz_replay.rs`.

#![no_main]

#[path = "../../tests/fuzz_checks/todo_call.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| check::check(data));
