//! Export, import and round-trip tests of the markdown form.

use proptest::prelude::*;

use super::parse::*;
use super::*;
use crate::todo::text;
use crate::todo::{MAX_TASK_CHARS, MAX_TASKS, Phase, Task};

const SPEC_EXAMPLE: &str = "\
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
        content: content.to_owned(),
        status,
        blocker: None,
        dropped_by: None,
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
    assert_eq!(to_markdown(&spec_list()), SPEC_EXAMPLE);
}

#[test]
fn spec_example_parses() {
    assert_eq!(from_markdown(SPEC_EXAMPLE), Ok(spec_list()));
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
             `<!-- blocker: NOTE -->` when blocked `[!]` or \
             `<!-- dropped-by: user -->` when abandoned `[-]`"
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
    let message = "`<!--` inside the text; only one trailing `<!-- ... -->` comment \
                   is allowed, write a literal `<!--` as `&lt;!--`";
    assert_eq!(
        errors(
            "# A <!-- b\n\
             - [ ] a <!-- note --> b\n\
             - [-] c <!-- dropped-by: user --> <!-- dropped-by: user -->\n"
        ),
        [
            format!("line 1: {message}"),
            format!("line 2: {message}"),
            format!("line 3: {message}"),
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
fn ampersands_and_comment_delimiters_are_escaped() {
    let list = one_task("a & b <!-- c --> d");
    let markdown = to_markdown(&list);
    assert_eq!(markdown, "# P\n- [ ] a &amp; b &lt;!-- c --&gt; d\n");
    assert_eq!(from_markdown(&markdown), Ok(list));
}

#[test]
fn phase_names_and_blocker_notes_are_escaped() {
    let mut blocked = task("t", Status::Blocked);
    blocked.blocker = Some("wait --> & <!-- see".into());
    let list = TodoList::new(vec![phase("<!-- & -->", vec![blocked])]);
    let markdown = to_markdown(&list);
    assert_eq!(
        markdown,
        "# &lt;!-- &amp; --&gt;\n- [!] t <!-- blocker: wait --&gt; &amp; &lt;!-- see -->\n"
    );
    assert_eq!(from_markdown(&markdown), Ok(list));
}

#[test]
fn newlines_and_carriage_returns_stay_on_one_line() {
    let list = one_task("one\ntwo\r\nthree\rfour");
    let markdown = to_markdown(&list);
    assert_eq!(markdown, "# P\n- [ ] one&#10;two&#13;&#10;three&#13;four\n");
    assert_eq!(from_markdown(&markdown), Ok(list));
}

#[test]
fn overlapping_delimiters_are_escaped() {
    for content in ["<!-->", "<!--->", "a<!---->b", "--->", "<<!--!-->>"] {
        let markdown = to_markdown(&one_task(content));
        let line = markdown.lines().nth(1).unwrap();
        assert!(!line.contains("<!--") && !line.contains("-->"), "{line}");
        assert_eq!(from_markdown(&markdown), Ok(one_task(content)));
    }
    assert_eq!(escape("<!-->"), "&lt;!--&gt;");
}

#[test]
fn already_escaped_text_round_trips_to_itself() {
    for content in [
        "&amp;",
        "&lt;!--",
        "--&gt;",
        "&#10;",
        "&amp;amp;",
        "&#13;&gt;",
    ] {
        let list = one_task(content);
        assert_eq!(from_markdown(&to_markdown(&list)), Ok(list), "{content}");
    }
    assert_eq!(to_markdown(&one_task("&amp;")), "# P\n- [ ] &amp;amp;\n");
}

#[test]
fn only_the_five_entities_are_decoded() {
    assert_eq!(
        tasks_of("- [ ] AT&T &nbsp; &quot; &#60; &LT; & &amp;lt; &lt;&gt;\n"),
        [(
            "AT&T &nbsp; &quot; &#60; &LT; & &lt; <>".to_owned(),
            Status::Pending
        )]
    );
    assert_eq!(unescape("&&amp;&"), "&&&");
}

#[test]
fn hostile_characters_pass_through() {
    let content = "tab\there \u{2028} nul\0 🦀 漢字 [x] # - [ ] \\[";
    let list = one_task(content);
    assert_eq!(from_markdown(&to_markdown(&list)), Ok(list));
}

const HOSTILE: &[&str] = &[
    "<!--",
    "-->",
    "<!-->",
    "&",
    "&amp;",
    "&#10;",
    "&#13;",
    "&lt;",
    "&gt;",
    "&nbsp;",
    "[",
    "]",
    "[x]",
    "\\[",
    "\\]",
    "#",
    "# ",
    "- [ ] ",
    "*",
    "+",
    "\r",
    "\n",
    "\r\n",
    "\t",
    " ",
    "  ",
    "\u{2028}",
    "\u{2029}",
    "\u{85}",
    "\u{a0}",
    "\u{feff}",
    "\0",
    "🦀",
    "漢字",
    ":",
    "blocker:",
    "dropped-by: user",
    "!",
    "<",
    ">",
    "-",
    "~",
    "/",
    "\\",
];

fn hostile_text() -> impl Strategy<Value = String> {
    let fragment = prop_oneof![
        3 => proptest::sample::select(HOSTILE).prop_map(str::to_owned),
        2 => "[a-zA-Z0-9]{1,6}",
        1 => any::<char>().prop_map(String::from),
    ];
    proptest::collection::vec(fragment, 1..8).prop_map(|parts| parts.concat())
}

fn any_task() -> impl Strategy<Value = Task> {
    (
        hostile_text(),
        proptest::sample::select(Status::ALL.to_vec()),
        proptest::option::of(hostile_text()),
        any::<bool>(),
    )
        .prop_map(|(content, status, note, by_user)| {
            let mut task = task(content.trim(), status);
            if status == Status::Blocked {
                task.blocker = note.and_then(|n| text::blocker(&n).ok());
            }
            if status == Status::Abandoned && by_user {
                task.dropped_by = Some(DroppedBy::User);
            }
            task
        })
}

/// Random lists that pass `validate()`: duplicates are dropped before
/// the filter so few cases are rejected.
fn valid_list() -> impl Strategy<Value = TodoList> {
    let phase = (hostile_text(), proptest::collection::vec(any_task(), 0..6));
    proptest::collection::vec(phase, 0..5)
        .prop_map(|phases| {
            let mut names = std::collections::HashSet::new();
            let mut contents = std::collections::HashSet::new();
            let phases = phases
                .into_iter()
                .filter(|(name, _)| names.insert(name.trim().to_owned()))
                .map(|(name, tasks)| Phase {
                    name: name.trim().to_owned(),
                    tasks: tasks
                        .into_iter()
                        .filter(|t| contents.insert(t.content.clone()))
                        .collect(),
                })
                .collect();
            TodoList::new(phases)
        })
        .prop_filter("list must validate", |list| list.validate().is_ok())
}

/// Markdown-ish documents: mostly well-formed headings and checkboxes in
/// every accepted syntax, with hostile text and noise lines mixed in, so
/// that both the import and the error paths get exercised.
fn markdownish() -> impl Strategy<Value = String> {
    let text = || prop_oneof![3 => "[a-z]{1,8}( [a-z]{1,8})?", 1 => hostile_text()];
    let item = (
        proptest::sample::select(vec!["- ", "* ", "+ ", "-\t", "  - "]),
        proptest::sample::select(vec!["[", "\\["]),
        proptest::sample::select(vec!["", " ", "x", "X", "/", ">", "-", "~", "!"]),
        proptest::sample::select(vec!["]", "\\]"]),
        text(),
        text(),
        0..8u8,
    )
        .prop_map(|(bullet, open, marker, close, content, note, dice)| {
            let comment = match (marker, dice) {
                ("!", 0..=3) => format!(" <!-- blocker: {note} -->"),
                ("-" | "~", 0..=3) => " <!-- dropped-by: user -->".to_owned(),
                (_, 7) => format!(" <!-- {note} -->"),
                _ => String::new(),
            };
            format!("{bullet}{open}{marker}{close} {content}{comment}")
        });
    let noise = prop_oneof![
        hostile_text(),
        hostile_text().prop_map(|t| format!("- [?] {t}")),
        hostile_text().prop_map(|t| format!("- [ {t}")),
        hostile_text().prop_map(|t| format!("####### {t}")),
    ];
    let line = prop_oneof![
        2 => ("#{1,6}", text()).prop_map(|(hashes, name)| format!("{hashes} {name}")),
        8 => item,
        1 => noise,
        1 => Just(String::new()),
        1 => Just("<!-- provenance -->".to_owned()),
    ];
    (
        proptest::collection::vec(line, 0..10),
        proptest::sample::select(vec!["\n", "\r\n"]),
    )
        .prop_map(|(lines, end)| lines.join(end))
}

proptest! {
    #[test]
    fn every_valid_list_round_trips(list in valid_list()) {
        let markdown = to_markdown(&list);
        prop_assert_eq!(from_markdown(&markdown), Ok(list));
    }

    #[test]
    fn escaped_text_never_holds_a_delimiter_or_line_break(text in hostile_text()) {
        let escaped = escape(&text);
        prop_assert!(!escaped.contains("<!--"));
        prop_assert!(!escaped.contains("-->"));
        prop_assert!(!escaped.contains(['\n', '\r']));
        prop_assert_eq!(unescape(&escaped), text);
    }

    #[test]
    fn any_import_is_valid_and_stable_or_reports_lines(markdown in markdownish()) {
        match from_markdown(&markdown) {
            Ok(list) => {
                prop_assert_eq!(list.validate(), Ok(()));
                prop_assert_eq!(from_markdown(&to_markdown(&list)), Ok(list));
            }
            Err(errs) => {
                prop_assert!(!errs.is_empty());
                let last = markdown.lines().count();
                prop_assert!(errs.iter().all(|e| (1..=last).contains(&e.line)));
                prop_assert!(errs.windows(2).all(|w| w[0].line <= w[1].line));
            }
        }
    }
}
