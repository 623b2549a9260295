//! Prints the size of the `todo` result text for `done`, `append` and
//! `view` on lists of 10, 100, 1,000 and 10,000 tasks (the benchmark
//! fixtures), as the markdown table in BENCHMARKS.md:
//!
//! ```sh
//! cargo run --release --example summary_sizes
//! ```
//!
//! Tokens are estimated as bytes / 4 (English text and markup average about
//! four bytes a token). The 10,000-task `append` runs on 9,999 tasks: a list
//! at the limit takes no more.

#[path = "../benches/common/mod.rs"]
mod common;

use goalkeeper::todo::{self, Actor, Call, MAX_TASKS, PAGE_BYTES, SUMMARY_BYTES};
use serde_json::json;

fn size(list: &goalkeeper::todo::TodoList, call: &str) -> usize {
    let outcome = todo::run(list.clone(), Call::Json(call), Actor::Agent);
    assert!(outcome.errors.is_empty(), "{call}: {:?}", outcome.errors);
    outcome.to_result(1).text().len()
}

fn cell(bytes: usize) -> String {
    format!("{bytes} B (≈{} tok)", bytes.div_ceil(4))
}

fn main() {
    println!("| tasks | `done` (one task) | `append` (one task) | `view` (first page) |");
    println!("| ---: | ---: | ---: | ---: |");
    for n in [10, 100, 1_000, 10_000] {
        let list = common::list(n);
        let done = json!({"op": "done", "task": common::middle_task(&list)}).to_string();
        let append =
            json!({"op": "append", "phase": "Phase 1: milestone", "items": ["A brand new task"]})
                .to_string();
        let short = common::list(n.min(MAX_TASKS - 1));
        println!(
            "| {n} | {} | {} | {} |",
            cell(size(&list, &done)),
            cell(size(&short, &append)),
            cell(size(&list, r#"{"op":"view"}"#)),
        );
    }
    println!(
        "\nBounds: `done`/`append` {SUMMARY_BYTES} B plus the changed tasks; `view` one page of {PAGE_BYTES} B of task lines plus its header."
    );
}
