//! Invariants of the markdown importer (DESIGN.md §4), checked for any text.
//!
//! An import either yields a valid list that survives export and re-import
//! unchanged (also once normalized, as the store keeps it), or reports
//! errors that each point at a line of the input, in line order.

use goalkeeper::todo::{self, TodoList};

/// Imports `data` (invalid UTF-8 replaced) and panics on a broken invariant.
pub fn check(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    match todo::from_markdown(&text) {
        Ok(list) => {
            if let Err(problems) = list.validate() {
                panic!("import of {text:?} gave an invalid list: {problems:?}");
            }
            round_trips(&list, &text);
            let mut stored = list.clone();
            todo::normalize(&mut stored);
            round_trips(&stored, &text);
        }
        Err(errors) => {
            assert!(
                !errors.is_empty(),
                "a failed import of {text:?} names no error"
            );
            let lines = text.lines().count();
            for error in &errors {
                assert!(
                    (1..=lines).contains(&error.line),
                    "error {error} is outside the {lines} lines of {text:?}"
                );
            }
            assert!(
                errors.windows(2).all(|w| w[0].line <= w[1].line),
                "errors of {text:?} are not in line order: {errors:?}"
            );
        }
    }
}

fn round_trips(list: &TodoList, input: &str) {
    let markdown = todo::to_markdown(list);
    assert_eq!(
        todo::from_markdown(&markdown).as_ref(),
        Ok(list),
        "export {markdown:?} of the import of {input:?} does not read back"
    );
}
