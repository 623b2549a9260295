//! DESIGN.md §2.4, what reaches the model is bounded: for any list size a
//! summary stays within about 2 KB plus the tasks the call changed, and
//! `view` prints one bounded page that says how to get the next. The lists
//! are the benchmark fixtures (sentence-length tasks, a mix of statuses);
//! `examples/summary_sizes.rs` prints the same numbers for BENCHMARKS.md.

#[path = "../../../benches/common/mod.rs"]
mod fixture;

use goalkeeper::todo::{self, Actor, Call, MAX_TASKS, PAGE_BYTES, SUMMARY_BYTES, TodoList};
use serde_json::json;

use fixture::{list, middle_task};

/// The calls whose size BENCHMARKS.md reports.
fn calls(list: &TodoList) -> [(&'static str, String); 3] {
    [
        (
            "done",
            json!({"op": "done", "task": middle_task(list)}).to_string(),
        ),
        (
            "append",
            json!({"op": "append", "phase": "Phase 1: milestone", "items": ["A brand new task"]})
                .to_string(),
        ),
        ("view", json!({"op": "view"}).to_string()),
    ]
}

fn text(list: &TodoList, json: &str) -> String {
    let outcome = todo::run(list.clone(), Call::Json(json), Actor::Agent);
    assert!(outcome.errors.is_empty(), "{json}: {:?}", outcome.errors);
    outcome.to_result(7).text().to_owned()
}

/// The bytes of the `Changed` section: the part the bound does not cover.
fn changed_bytes(text: &str) -> usize {
    let Some(start) = text.find("Changed (") else {
        return 0;
    };
    let rest = &text[start..];
    let end = rest
        .find("\nRemaining (")
        .or_else(|| rest.find("\nOverall: "))
        .unwrap();
    end + 1
}

#[test]
fn every_summary_stays_within_its_bound_at_every_size() {
    for n in [10, 100, 1_000, 10_000] {
        let full = list(n);
        // A list at the 10,000-task limit cannot take one more: the append
        // runs on one task less.
        let short = list(n.min(MAX_TASKS - 1));
        for (name, json) in calls(&full) {
            let list = if name == "append" { &short } else { &full };
            let text = text(list, &json);
            let bound = if name == "view" {
                // A page of task lines, plus the counts and the pointer.
                PAGE_BYTES + 1024
            } else {
                SUMMARY_BYTES + changed_bytes(&text)
            };
            assert!(
                text.len() <= bound,
                "{name} on {n} tasks: {} bytes, bound {bound}\n{text}",
                text.len()
            );
            assert!(text.contains("Overall: "), "{name} on {n}: {text}");
            // The counts are exact whatever is left out.
            let counts = list.counts();
            if name == "view" {
                assert!(
                    text.contains(&format!(
                        "Overall: {}/{} done, {} open.",
                        counts.closed, counts.total, counts.open
                    )),
                    "{text}"
                );
            }
        }
    }
}

#[test]
fn a_list_that_fits_keeps_the_whole_summary() {
    let list = list(10);
    let text = text(&list, &calls(&list)[0].1);
    assert!(text.contains("Remaining ("), "{text}");
    assert!(
        text.contains("\nPhase 1: milestone:\n  - [x] Task 00000"),
        "{text}"
    );
    assert!(!text.contains("Changed ("), "{text}");
}

#[test]
fn the_bounded_done_summary() {
    let list = list(1_000);
    let task = middle_task(&list);
    let text = text(&list, &json!({"op": "done", "task": task}).to_string());
    assert_snapshot!("summary_bounded_done", text);
}

#[test]
fn the_bounded_append_summary() {
    let list = list(1_000);
    let text = text(
        &list,
        &json!({"op": "append", "phase": "Phase 3: milestone", "items": ["New one", "New two"]})
            .to_string(),
    );
    assert_snapshot!("summary_bounded_append", text);
}

#[test]
fn a_bounded_rejection_and_a_bounded_no_op() {
    let list = list(1_000);
    let outcome = todo::run(
        list.clone(),
        Call::Json(r#"{"op":"done","task":"Task 99999","reason":"x"}"#),
        Actor::Agent,
    );
    let rejected = outcome.to_result(7).text().to_owned();
    let outcome = todo::run(
        list.clone(),
        Call::Json(
            r#"{"op":"done","task":"Task 00000: update the parser and its tests for case 0"}"#,
        ),
        Actor::Agent,
    );
    assert!(outcome.is_no_op());
    let no_op = outcome.to_result(7).text().to_owned();
    for text in [&rejected, &no_op] {
        assert!(text.len() <= SUMMARY_BYTES, "{} bytes\n{text}", text.len());
    }
    assert_snapshot!(
        "summary_bounded_rejected_and_no_op",
        format!("{rejected}\n\n---\n\n{no_op}")
    );
}

#[test]
fn a_bulk_change_lists_the_first_changed_tasks_and_counts_the_rest() {
    let list = list(1_000);
    let text = text(&list, r#"{"op":"done","phase":"Phase 6: milestone"}"#);
    // 100 tasks, 4 of them abandoned (a bulk `done` leaves those).
    assert!(text.starts_with("Changed (96):\n"), "{text}");
    assert!(text.contains("\n  … and 46 more\n"), "{text}");
    let listed = text.lines().filter(|l| l.starts_with("  - [x] ")).count();
    assert_eq!(listed, goalkeeper::todo::CHANGED_SHOWN);
}

#[test]
fn view_pages_through_a_long_list() {
    let list = list(1_000);
    let first = text(&list, r#"{"op":"view"}"#);
    assert!(
        first.contains(
            "Page 1/10 of the list: tasks 1-100 of 1000. Next: {\"op\": \"view\", \"page\": 2}.\n"
        ),
        "{first}"
    );
    let last = text(&list, r#"{"op":"view","page":10}"#);
    assert!(
        last.contains("Page 10/10 of the list: tasks 901-1000 of 1000.\n"),
        "{last}"
    );
    assert!(
        last.trim_end()
            .ends_with("Task 00999: update the parser and its tests for case 999")
    );
    // Every task is on exactly one page.
    let mut seen = 0;
    for page in 1..=10 {
        let text = text(&list, &json!({"op": "view", "page": page}).to_string());
        seen += text.lines().filter(|l| l.starts_with("  - [")).count();
    }
    assert_eq!(seen, 1_000);
    let phase = text(&list, r#"{"op":"view","phase":"Phase 5: milestone"}"#);
    assert_snapshot!("summary_view_phase_page", phase);
}
