//! Replays the committed fuzz seed corpora (`fuzz/seeds/<target>/`) through
//! the same invariant checks the cargo-fuzz targets run, so CI exercises
//! them on stable Rust without cargo-fuzz or libFuzzer.

use crate::fuzz_checks;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;

/// Runs every file of `fuzz/seeds/<target>/` through `check` and reports
/// each input that breaks an invariant by its file name.
fn replay(target: &str, check: fn(&[u8])) {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/seeds")
        .join(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|entry| entry.expect("directory entry").path())
        .filter(|path| path.is_file())
        .collect();
    files.sort();
    assert!(
        files.len() >= 10,
        "{} holds only {} seeds",
        dir.display(),
        files.len()
    );
    let failures: Vec<String> = files
        .iter()
        .filter_map(|path| {
            let data = std::fs::read(path).expect("read seed");
            catch_unwind(AssertUnwindSafe(|| check(&data)))
                .err()
                .map(|_| path.display().to_string())
        })
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} seeds break an invariant (messages above):\n{}",
        failures.len(),
        files.len(),
        failures.join("\n")
    );
}

#[test]
fn todo_call_seeds_hold() {
    replay("todo_call", fuzz_checks::todo_call::check);
}

#[test]
fn markdown_import_seeds_hold() {
    replay("markdown_import", fuzz_checks::markdown_import::check);
}

#[test]
fn todo_context_seeds_hold() {
    replay("todo_context", fuzz_checks::todo_context::check);
}

#[test]
fn the_seeded_lists_are_valid_and_normalized() {
    for list in fuzz_checks::todo_call::seeded_lists() {
        assert_eq!(list.validate(), Ok(()));
        let mut normalized = list.clone();
        goalkeeper::todo::normalize(&mut normalized);
        assert_eq!(normalized, list);
    }
}
