//! Export, import and round-trip tests of the markdown form: the shared
//! fixtures and the basic cases here, one file per topic beside.

use proptest::prelude::*;

use super::*;
use crate::todo::text;
use crate::todo::{MAX_TASK_CHARS, MAX_TASKS, Phase, Task};

mod errors;
mod escaping;
mod props;
mod team;

const DOCUMENTED_EXAMPLE: &str = "\
# Foundation
- [x] Build core
- [/] Add edge cases
- [ ] Run tests
- [-] Old idea
- [-] Cut by me <!-- dropped-by: user -->
- [!] Get API key <!-- blocker: waiting for credentials -->
";

fn task(content: &str, status: Status) -> Task {
    Task {
        status,
        ..Task::pending(content)
    }
}

fn phase(name: &str, tasks: Vec<Task>) -> Phase {
    Phase {
        name: name.to_owned(),
        tasks,
    }
}

fn spec_list() -> TodoList {
    let mut cut = task("Cut by me", Status::Abandoned);
    cut.dropped_by = Some(DroppedBy::User);
    let mut key = task("Get API key", Status::Blocked);
    key.blocker = Some("waiting for credentials".to_owned());
    TodoList::new(vec![phase(
        "Foundation",
        vec![
            task("Build core", Status::Completed),
            task("Add edge cases", Status::InProgress),
            task("Run tests", Status::Pending),
            task("Old idea", Status::Abandoned),
            cut,
            key,
        ],
    )])
}

/// The tasks of a one-phase import, as (content, status).
fn tasks_of(markdown: &str) -> Vec<(String, Status)> {
    let list = from_markdown(markdown).unwrap();
    list.tasks()
        .map(|(_, t)| (t.content.clone(), t.status))
        .collect()
}

/// The errors of an import, each as its `Display` text.
fn errors(markdown: &str) -> Vec<String> {
    from_markdown(markdown)
        .unwrap_err()
        .iter()
        .map(ToString::to_string)
        .collect()
}

fn one_task(content: &str) -> TodoList {
    TodoList::new(vec![phase("P", vec![task(content, Status::Pending)])])
}

#[test]
fn spec_example_renders() {
    assert_eq!(to_markdown(&spec_list()), DOCUMENTED_EXAMPLE);
}

#[test]
fn spec_example_parses() {
    assert_eq!(from_markdown(DOCUMENTED_EXAMPLE), Ok(spec_list()));
}

#[test]
fn phases_are_separated_by_one_blank_line_and_empty_phases_are_headings() {
    let list = TodoList::new(vec![
        phase("A", vec![task("a", Status::Pending)]),
        phase("Empty", vec![]),
        phase("B", vec![task("b", Status::Completed)]),
    ]);
    let markdown = to_markdown(&list);
    assert_eq!(markdown, "# A\n- [ ] a\n\n# Empty\n\n# B\n- [x] b\n");
    assert_eq!(from_markdown(&markdown), Ok(list));
}

#[test]
fn an_empty_list_is_an_empty_document() {
    assert_eq!(to_markdown(&TodoList::default()), "");
    assert_eq!(from_markdown(""), Ok(TodoList::default()));
    assert_eq!(from_markdown("\n  \n\t\n"), Ok(TodoList::default()));
}

#[test]
fn notes_that_do_not_belong_to_the_status_are_not_rendered() {
    let mut stale = task("a", Status::Pending);
    stale.blocker = Some("old".into());
    stale.dropped_by = Some(DroppedBy::User);
    let list = TodoList::new(vec![phase("P", vec![stale])]);
    assert_eq!(to_markdown(&list), "# P\n- [ ] a\n");
}

#[test]
fn alternative_markers_are_accepted() {
    let markdown = "# P\n- [X] big x\n- [>] arrow\n- [~] tilde\n- [] empty\n";
    assert_eq!(
        tasks_of(markdown),
        [
            ("big x".to_owned(), Status::Completed),
            ("arrow".to_owned(), Status::InProgress),
            ("tilde".to_owned(), Status::Abandoned),
            ("empty".to_owned(), Status::Pending),
        ]
    );
}

#[test]
fn star_and_plus_bullets_are_accepted() {
    assert_eq!(
        tasks_of("* [x] star\n+ [ ] plus\n-\t[/] tab\n"),
        [
            ("star".to_owned(), Status::Completed),
            ("plus".to_owned(), Status::Pending),
            ("tab".to_owned(), Status::InProgress),
        ]
    );
}

#[test]
fn headings_of_one_to_six_hashes_are_phases() {
    let markdown = "# One\n## Two\n### Three\n#### Four\n##### Five\n###### Six\n";
    let names: Vec<_> = from_markdown(markdown)
        .unwrap()
        .phases
        .into_iter()
        .map(|p| p.name)
        .collect();
    assert_eq!(names, ["One", "Two", "Three", "Four", "Five", "Six"]);
}

#[test]
fn a_heading_keeps_its_trailing_hashes() {
    let list = from_markdown("# Learn C#\n## Phase 2 ##\n").unwrap();
    assert_eq!(list.phases[0].name, "Learn C#");
    assert_eq!(list.phases[1].name, "Phase 2 ##");
}

#[test]
fn backslash_escaped_brackets_are_accepted() {
    let markdown = "- \\[x\\] escaped\n- \\[ \\] open\n- \\[\\] empty\n- \\[!] half \
                    <!-- blocker: later -->\n";
    let list = from_markdown(markdown).unwrap();
    let tasks = &list.phases[0].tasks;
    assert_eq!(tasks[0], task("escaped", Status::Completed));
    assert_eq!(tasks[1], task("open", Status::Pending));
    assert_eq!(tasks[2], task("empty", Status::Pending));
    assert_eq!(tasks[3].status, Status::Blocked);
    assert_eq!(tasks[3].blocker.as_deref(), Some("later"));
}

#[test]
fn tasks_before_any_heading_go_to_todos() {
    let list = from_markdown("- [ ] first\n\n# Later\n- [ ] second\n").unwrap();
    assert_eq!(
        list,
        TodoList::new(vec![
            phase("Todos", vec![task("first", Status::Pending)]),
            phase("Later", vec![task("second", Status::Pending)]),
        ])
    );
}

#[test]
fn blank_lines_comment_lines_indentation_crlf_and_bom_are_tolerated() {
    let markdown = "\u{feff}<!-- goalkeeper export: session default, version 7 -->\r\n\
                    \r\n\
                    \t# Build   \r\n\
                    <!---->\r\n\
                    - [x] core\r\n\
                    \x20\x20- [ ] nested\r\n\
                    \x20\x20\x20\x20\r\n";
    assert_eq!(
        from_markdown(markdown),
        Ok(TodoList::new(vec![phase(
            "Build",
            vec![
                task("core", Status::Completed),
                task("nested", Status::Pending)
            ]
        )]))
    );
}

#[test]
fn the_space_after_the_checkbox_may_be_left_out() {
    assert_eq!(
        tasks_of("- [x]done\n"),
        [("done".to_owned(), Status::Completed)]
    );
}

#[test]
fn import_does_not_normalize() {
    let markdown = "# P\n- [/] one\n- [/] two\n";
    assert_eq!(
        tasks_of(markdown),
        [
            ("one".to_owned(), Status::InProgress),
            ("two".to_owned(), Status::InProgress),
        ]
    );
    assert_eq!(
        tasks_of("- [ ] idle\n"),
        [("idle".to_owned(), Status::Pending)]
    );
}

#[test]
fn text_is_trimmed_and_blocker_notes_collapse_to_one_line() {
    let markdown = "#    Spaced   \n- [!]   Wait   <!--   blocker:  a&#10;b \t c   -->\n";
    let list = from_markdown(markdown).unwrap();
    assert_eq!(list.phases[0].name, "Spaced");
    assert_eq!(list.phases[0].tasks[0].content, "Wait");
    assert_eq!(list.phases[0].tasks[0].blocker.as_deref(), Some("a b c"));
}

#[test]
fn a_tasks_check_is_its_own_comment_line_and_reads_back() {
    let mut run = task("Run the tests", Status::Blocked);
    run.blocker = Some("needs a key".into());
    run.check = Some("cargo test -- --nocapture 2>&1 | grep -v '<!-- x -->' && echo a&b".into());
    let list = TodoList::new(vec![Phase {
        name: "P".into(),
        tasks: vec![run, task("Other", Status::Pending)],
    }]);
    let text = to_markdown(&list);
    assert_eq!(
        text,
        "# P\n- [!] Run the tests <!-- blocker: needs a key -->\n  <!-- check: cargo test -- --nocapture 2>&amp;1 | grep -v '&lt;!-- x --&gt;' &amp;&amp; echo a&amp;b -->\n- [ ] Other\n"
    );
    assert_eq!(from_markdown(&text).unwrap(), list);
}
