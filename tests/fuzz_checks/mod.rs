//! The invariant checks of the fuzz targets, one module per target. The
//! targets under `fuzz/fuzz_targets/` include these files with `#[path]`,
//! and `tests/it/fuzz_replay.rs` runs the committed seed corpora through them,
//! so the same checks run under libFuzzer and in `cargo test` on stable.

pub mod markdown_import;
pub mod todo_call;
pub mod todo_context;
