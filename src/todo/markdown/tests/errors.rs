//! What an import refuses, and how each error names its line.

use super::*;

#[test]
fn unknown_marker_is_an_error_listing_the_accepted_ones() {
    assert_eq!(
        errors("# P\n- [ ] fine\n- [?] x\n- [xx] y\n"),
        [
            "line 3: unknown marker `?`; use one of `[ ]` or `[]` (pending), \
             `[/]` or `[>]` (in_progress), `[x]` or `[X]` (completed), \
             `[-]` or `[~]` (abandoned), `[!]` (blocked)",
            "line 4: unknown marker `xx`; use one of `[ ]` or `[]` (pending), \
             `[/]` or `[>]` (in_progress), `[x]` or `[X]` (completed), \
             `[-]` or `[~]` (abandoned), `[!]` (blocked)",
        ]
    );
}

#[test]
fn unrecognised_lines_are_errors() {
    assert_eq!(
        errors("hello\n1. numbered\n####### seven hashes\n#tight\n---\n-[ ] tight\n"),
        [
            expected_unrecognised(1, "hello"),
            expected_unrecognised(2, "1. numbered"),
            expected_unrecognised(3, "####### seven hashes"),
            expected_unrecognised(4, "#tight"),
            expected_unrecognised(5, "---"),
            expected_unrecognised(6, "-[ ] tight"),
        ]
    );
}

#[test]
fn a_bullet_without_a_checkbox_is_an_error() {
    assert_eq!(
        errors("- plain\n- [ unclosed\n-\n"),
        [
            "line 1: a list item needs a checkbox, as in `- [ ] task`",
            "line 2: a list item needs a checkbox, as in `- [ ] task`",
            "line 3: a list item needs a checkbox, as in `- [ ] task`",
        ]
    );
}

const UNCLOSED: &str =
    "an HTML comment line must open and close on the same line, with nothing after `-->`";

#[test]
fn a_comment_line_must_close_on_the_same_line() {
    assert_eq!(
        errors("<!-- opens\n- [ ] a\n-->\n<!-- a --> b -->\n"),
        [
            format!("line 1: {UNCLOSED}"),
            expected_unrecognised(3, "-->"),
            format!("line 4: {UNCLOSED}"),
        ]
    );
}

fn expected_unrecognised(n: usize, line: &str) -> String {
    format!(
        "line {n}: unrecognised line `{line}`; expected a `# Phase` heading \
         (1 to 6 `#`), a `- [ ] task` item, an HTML comment or a blank line"
    )
}

#[test]
fn duplicate_task_contents_name_both_lines() {
    assert_eq!(
        errors("# A\n- [ ] same\n\n# B\n- [x] same\n"),
        ["line 5: task \"same\" is already on line 2; task contents must be unique"]
    );
}

#[test]
fn duplicate_phase_names_name_both_lines() {
    assert_eq!(
        errors("# A\n- [ ] a\n# A\n"),
        ["line 3: phase \"A\" is already on line 1; phase names must be unique"]
    );
    assert_eq!(
        errors("\n- [ ] a\n# Todos\n"),
        [
            "line 3: phase \"Todos\" already holds the tasks before the first heading \
             (from line 2); phase names must be unique"
        ]
    );
}

#[test]
fn duplicates_compare_the_decoded_trimmed_text() {
    assert_eq!(
        errors("- [ ] a&amp;b\n- [x]   a&b  \n"),
        ["line 2: task \"a&b\" is already on line 1; task contents must be unique"]
    );
}

#[test]
fn more_than_the_task_limit_is_an_error_on_the_first_task_past_it() {
    let mut markdown = String::from("# Big\n");
    for i in 0..MAX_TASKS + 2 {
        markdown.push_str(&format!("- [ ] t{i}\n"));
    }
    markdown.push_str("hello\n");
    let errs = errors(&markdown);
    assert_eq!(
        errs,
        [
            format!(
                "line {}: the list holds 10002 tasks; the limit is 10000",
                MAX_TASKS + 2
            ),
            expected_unrecognised(MAX_TASKS + 4, "hello"),
        ]
    );

    let mut at_limit = String::new();
    for i in 0..MAX_TASKS {
        at_limit.push_str(&format!("- [ ] t{i}\n"));
    }
    assert_eq!(from_markdown(&at_limit).unwrap().task_count(), MAX_TASKS);
}

#[test]
fn a_blocker_comment_belongs_on_a_blocked_task() {
    assert_eq!(
        errors("- [ ] a <!-- blocker: later -->\n- [-] b <!-- blocker: later -->\n"),
        [
            "line 1: a `blocker` comment belongs on a blocked `[!]` task; this task is pending",
            "line 2: a `blocker` comment belongs on a blocked `[!]` task; this task is abandoned",
        ]
    );
}

#[test]
fn a_dropped_by_comment_belongs_on_an_abandoned_task_and_only_names_the_user() {
    assert_eq!(
        errors(
            "- [x] a <!-- dropped-by: user -->\n\
             - [-] b <!-- dropped-by: agent -->\n\
             - [~] c <!-- dropped-by -->\n"
        ),
        [
            "line 1: a `dropped-by` comment belongs on an abandoned `[-]` task; \
             this task is completed",
            "line 2: `dropped-by: agent` is not accepted; the only form is \
             `<!-- dropped-by: user -->`",
            "line 3: `dropped-by: ` is not accepted; the only form is \
             `<!-- dropped-by: user -->`",
        ]
    );
    let list = from_markdown("- [~] c <!-- dropped-by: user -->\n").unwrap();
    assert_eq!(list.phases[0].tasks[0].dropped_by, Some(DroppedBy::User));
}

#[test]
fn an_unknown_comment_is_an_error() {
    assert_eq!(
        errors("- [!] a <!-- owner: me -->\n"),
        [
            "line 1: unknown comment `<!-- owner: me -->`; a task may end with \
             `<!-- blocker: NOTE -->` and `<!-- after: TASK -->` when blocked `[!]`, \
             `<!-- dropped-by: user -->` when abandoned `[-]`, \
             `<!-- held-by: AGENT since TIME -->` when in progress `[/]` \
             or `<!-- done-by: AGENT -->` when completed `[x]`"
        ]
    );
}

#[test]
fn a_heading_takes_no_comment() {
    assert_eq!(
        errors("# P <!-- blocker: x -->\n"),
        ["line 1: a heading takes no comment; only tasks end with `<!-- ... -->`"]
    );
}

#[test]
fn a_raw_comment_opener_inside_text_is_an_error() {
    let message = "`<!--` inside the text; only trailing `<!-- ... -->` comments \
                   are allowed, write a literal `<!--` as `&lt;!--`";
    assert_eq!(
        errors(
            "# A <!-- b\n\
             - [ ] a <!-- note --> b\n\
             - [-] c <!-- dropped-by: user --> <!-- dropped-by: user -->\n"
        ),
        [
            format!("line 1: {message}"),
            format!("line 2: {message}"),
            "line 3: a second `dropped-by` comment; a task carries each note once".to_owned(),
        ]
    );
}

#[test]
fn a_raw_comment_closer_without_an_opener_is_text() {
    assert_eq!(
        tasks_of("- [ ] a --> b -->\n"),
        [("a --> b -->".to_owned(), Status::Pending)]
    );
}

#[test]
fn text_rules_and_limits_apply_with_line_numbers() {
    let long = "t".repeat(MAX_TASK_CHARS + 1);
    let markdown = format!(
        "#\n- [ ]\n- [ ] &#10;\n- [!] w <!-- blocker: -->\n- [ ] {long}\n- [ ] {}\n",
        "t".repeat(MAX_TASK_CHARS)
    );
    assert_eq!(
        errors(&markdown),
        [
            "line 1: phase name is empty; give some text".to_owned(),
            "line 2: task content is empty; give some text".to_owned(),
            "line 3: task content is empty; give some text".to_owned(),
            "line 4: blocker note is empty; give some text".to_owned(),
            format!(
                "line 5: task content \"{}…\" is 1001 characters; the limit is 1000",
                "t".repeat(40)
            ),
        ]
    );
}

/// No text goalkeeper stores holds a NUL (DESIGN.md §1): a heading, a
/// task or a note with one is an error on its line, which does not echo it.
#[test]
fn a_nul_character_is_refused_on_its_line() {
    assert_eq!(
        errors("# P\0\n- [ ] a\0b\n- [!] c <!-- blocker: d\0 -->\n"),
        [
            "line 1: phase name holds a NUL character (U+0000), which goalkeeper never stores; remove it",
            "line 2: task content holds a NUL character (U+0000), which goalkeeper never stores; remove it",
            "line 3: blocker note holds a NUL character (U+0000), which goalkeeper never stores; remove it",
        ]
    );
}

#[test]
fn every_error_is_collected_in_line_order() {
    let errs = from_markdown("# P\nhello\n- [?] a\n- [ ] ok\n# P\n- [x] ok\n").unwrap_err();
    let lines: Vec<_> = errs.iter().map(|e| e.line).collect();
    assert_eq!(lines, [2, 3, 5, 6]);
}

#[test]
fn one_line_can_carry_several_errors() {
    assert_eq!(
        errors("- [ ] <!-- blocker: x -->\n"),
        [
            "line 1: task content is empty; give some text",
            "line 1: a `blocker` comment belongs on a blocked `[!]` task; this task is pending",
        ]
    );
}

#[test]
fn the_error_displays_its_line_and_is_a_std_error() {
    let error = MarkdownError {
        line: 7,
        message: "unknown marker `?`".into(),
    };
    assert_eq!(error.to_string(), "line 7: unknown marker `?`");
    let boxed: Box<dyn std::error::Error> = Box::new(error);
    assert!(boxed.source().is_none());
}

#[test]
fn a_check_line_belongs_right_after_its_task_and_is_one_line_of_shell() {
    assert_eq!(
        errors(
            "<!-- check: cargo test -->\n# P\n<!-- check: make -->\n- [ ] a\n\n<!-- check: make -->\n- [ ] b\n  <!-- check: make -->\n  <!-- check: make again -->\n- [ ] c\n  <!-- check: -->\n"
        ),
        [
            "line 1: a `check` comment belongs on the line right after its task's line, as in `- [ ] Run the tests` then `  <!-- check: cargo test -->`",
            "line 3: a `check` comment belongs on the line right after its task's line, as in `- [ ] Run the tests` then `  <!-- check: cargo test -->`",
            "line 6: a `check` comment belongs on the line right after its task's line, as in `- [ ] Run the tests` then `  <!-- check: cargo test -->`",
            "line 9: a `check` comment belongs on the line right after its task's line, as in `- [ ] Run the tests` then `  <!-- check: cargo test -->`",
            "line 11: the check is empty; give the shell command that must pass, such as `cargo test`",
        ]
    );
}
