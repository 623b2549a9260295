//! Property tests: valid lists round-trip, escaped text stays on its line,
//! any import is valid and stable or names its lines.

use super::*;

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
    "\u{1}",
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
        proptest::option::of(proptest::sample::select(vec!["w1", "sub-a1.b:2", "W_9"])),
        proptest::option::of(0i64..253_402_300_800_000),
        proptest::option::of(hostile_text()),
    )
        .prop_map(|(content, status, note, by_user, agent, since, check)| {
            let mut task = task(content.trim(), status);
            if status == Status::Blocked {
                task.blocker = note.and_then(|n| text::blocker(&n).ok());
            }
            if status == Status::Abandoned && by_user {
                task.dropped_by = Some(DroppedBy::User);
            }
            // A holder (with or without a claim time) on a task in
            // progress, whoever completed one.
            if matches!(status, Status::InProgress | Status::Completed) {
                task.agent = agent.map(str::to_owned);
            }
            if status == Status::InProgress && task.agent.is_some() {
                task.since_ms = since;
            }
            // `by_user` on a blocked task: it waits for the task before
            // it (set once the list is whole).
            if status == Status::Blocked && by_user {
                task.after = Some(String::new());
            }
            task.check = check.and_then(|c| crate::check::command(&c).ok());
            task
        })
}

/// Points each task marked to wait (`after` set empty by [`any_task`]) at
/// the task before it in the list, so the links never go in a circle; the
/// first task waits for nothing.
fn link_afters(mut list: TodoList) -> TodoList {
    let mut previous: Option<String> = None;
    for task in list.phases.iter_mut().flat_map(|p| p.tasks.iter_mut()) {
        if task.after.is_some() {
            task.after.clone_from(&previous);
        }
        previous = Some(task.content.clone());
    }
    list
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
            link_afters(TodoList::new(phases))
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
