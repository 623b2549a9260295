//! Text that looks like markdown or a comment survives export and import.

use super::*;

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
    let content = "tab\there \u{2028} soh\u{1} 🦀 漢字 [x] # - [ ] \\[";
    let list = one_task(content);
    assert_eq!(from_markdown(&to_markdown(&list)), Ok(list));
}
