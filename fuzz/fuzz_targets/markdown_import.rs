//! Fuzz target `markdown_import`: the invariants are checked in
//! `tests/fuzz_checks/markdown_import.rs`, shared with `tests/it/fuzz_replay.rs`.

#![no_main]

#[path = "../../tests/fuzz_checks/markdown_import.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| check::check(data));
