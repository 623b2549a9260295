//! Making stored text safe to place inside a prompt (DESIGN.md §3.2).
//!
//! Phase names, task contents and blocker notes become one safe line: line
//! breaks and tabs turn into visible backslash escapes, `&`, `<` and `>` are
//! XML-escaped (so no text can close `<todo_context>` or open a tag), and any
//! other control character, U+2028/U+2029, the byte-order mark U+FEFF and
//! the bidirectional controls (U+202A–U+202E, U+2066–U+2069) become a space:
//! text that reorders itself on screen is how instructions hide in plain
//! sight. Terminal output (status line, reports, echoed errors) goes through
//! [`one_line`] and [`is_unsafe`] too, so no raw escape or reordering
//! character from stored text reaches a terminal.

use std::borrow::Cow;

use quick_xml::escape::partial_escape;

/// One safe line for a prompt: newline escapes, then `&`/`<`/`>`, then
/// control characters to spaces. Quotes stay as they are.
pub fn sanitize(text: &str) -> String {
    if prompt_safe(text) {
        return text.to_owned();
    }
    sanitize_any(text)
}

/// [`sanitize`] of `text`, appended to `out`: no `String` of its own for
/// text that needs no change (the lines of a `<todo_context>` block).
pub(crate) fn sanitize_into(out: &mut String, text: &str) {
    if prompt_safe(text) {
        out.push_str(text);
    } else {
        out.push_str(&sanitize_any(text));
    }
}

/// Whether [`sanitize`] leaves `text` as it is: printable ASCII without
/// `&`, `<` or `>`, which every step of it leaves alone (most task text).
/// Checking the bytes is far cheaper than the three passes, where a long
/// block would otherwise spend most of its time; sixteen at a time, as
/// [`terminal_safe`] does, a test the compiler turns into a few vector
/// instructions instead of a branch per byte.
fn prompt_safe(text: &str) -> bool {
    const BLOCK: usize = 16;
    let plain = |b: u8| (b' '..=b'~').contains(&b) & (b != b'&') & (b != b'<') & (b != b'>');
    let mut blocks = text.as_bytes().chunks_exact(BLOCK);
    for block in &mut blocks {
        if !block.iter().fold(true, |all, &b| all & plain(b)) {
            return false;
        }
    }
    blocks.remainder().iter().all(|&b| plain(b))
}

fn sanitize_any(text: &str) -> String {
    // Newline escapes come first: quick-xml would turn `\r` into `&#13;`.
    let escaped = escape_breaks(text);
    blank_controls(&partial_escape(escaped.as_ref()), false)
}

/// A printable ASCII byte: space to `~`, no control character.
fn is_plain_ascii(b: u8) -> bool {
    matches!(b, b' '..=b'~')
}

/// Escapes a multi-line text (the goal objective) for a prompt: `&`, `<`,
/// `>` escaped, line breaks kept (CRLF and lone CR become LF), tabs kept,
/// every other control character and U+2028/U+2029 turned into a space.
pub(crate) fn sanitize_multiline(text: &str) -> String {
    let unified = text.replace("\r\n", "\n").replace('\r', "\n");
    blank_controls(&partial_escape(unified.as_str()), true)
}

/// One line for plain-text output (summaries, status lines): the newline
/// escapes and control-character blanking of [`sanitize`], without XML
/// escaping.
pub(crate) fn one_line(text: &str) -> Cow<'_, str> {
    if text.bytes().all(is_plain_ascii) || !text.chars().any(is_unsafe) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(blank_controls(&escape_breaks(text), false))
}

/// Text for a terminal (DESIGN.md §3.2): the same rule, for output that may span
/// lines (an export, a report, an error): line feeds and tabs stay, every
/// other character [`sanitize`] turns into a space (carriage returns
/// included, which could overwrite what was printed) becomes one; markup
/// is not escaped. Everything goalkeeper prints goes through this.
pub fn terminal(text: &str) -> Cow<'_, str> {
    if terminal_safe(text) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(blank_controls(text, true))
}

/// Whether [`terminal`] leaves `text` as it is. Sixteen bytes at a time
/// while they are printable ASCII, line feeds and tabs (a test the
/// compiler turns into a few vector instructions), and a character at a
/// time only in a block that has anything else: most of what goalkeeper
/// prints is ASCII with a few symbols (`◎`, `…`), and looking up every
/// character's class was most of what printing a long hook answer cost.
fn terminal_safe(text: &str) -> bool {
    const BLOCK: usize = 16;
    let plain = |b: u8| (b' '..=b'~').contains(&b) | (b == b'\n') | (b == b'\t');
    let bytes = text.as_bytes();
    let mut at = 0;
    while at < bytes.len() {
        if let Some(block) = bytes.get(at..at + BLOCK)
            && block.iter().fold(true, |all, &b| all & plain(b))
        {
            at += BLOCK;
            continue;
        }
        // Character by character to the end of this block (and through a
        // character that crosses it): `at` is always on a boundary, since
        // it only moves past whole blocks of ASCII and whole characters.
        let end = (at + BLOCK).min(bytes.len());
        for c in text[at..].chars() {
            if c.is_ascii() {
                if !plain(c as u8) {
                    return false;
                }
            } else if is_unsafe(c) {
                return false;
            }
            at += c.len_utf8();
            if at >= end {
                break;
            }
        }
    }
    true
}

/// True for the characters no terminal output may carry raw (the ones
/// [`sanitize`] blanks); JSON output escapes them as `\uXXXX` instead.
#[cfg_attr(not(feature = "cli"), expect(dead_code))]
pub(crate) fn unsafe_for_terminal(c: char) -> bool {
    is_unsafe(c)
}

fn escape_breaks(text: &str) -> Cow<'_, str> {
    if !text.contains(['\r', '\n', '\t']) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(
        text.replace("\r\n", "\\n")
            .replace('\r', "\\r")
            .replace('\n', "\\n")
            .replace('\t', "\\t"),
    )
}

fn blank_controls(text: &str, keep_breaks: bool) -> String {
    text.chars()
        .map(|c| {
            let kept = keep_breaks && (c == '\n' || c == '\t');
            if !kept && is_unsafe(c) { ' ' } else { c }
        })
        .collect()
}

/// True for a character that never reaches a prompt or a terminal as it
/// is: control characters (C0, DEL, C1), the Unicode line and paragraph
/// separators, the byte-order mark and the bidirectional embedding,
/// override and isolate controls.
pub fn is_unsafe(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{2028}' | '\u{2029}' | '\u{feff}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
        )
}

/// The most characters of a refused value an error echoes.
const EXCERPT_CHARS: usize = 128;

/// `text` quoted (as `{:?}` quotes it) for a message that echoes a refused
/// value: whole up to 128 characters, else its first 128 and how long it
/// was, `"aaa"… (100000 characters)`, so a huge value costs a bounded line
/// on every call that refuses it.
pub(crate) fn quoted_excerpt(text: &str) -> String {
    match text.char_indices().nth(EXCERPT_CHARS) {
        None => format!("{text:?}"),
        Some((cut, _)) => format!(
            "{:?}\u{2026} ({} characters)",
            &text[..cut],
            text.chars().count()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_refused_value_is_cut_and_its_length_said() {
        assert_eq!(quoted_excerpt("w1"), "\"w1\"");
        let longest = "é".repeat(128);
        assert_eq!(quoted_excerpt(&longest), format!("{longest:?}"));
        let huge = "x".repeat(100_000);
        assert_eq!(
            quoted_excerpt(&huge),
            format!("\"{}\"\u{2026} (100000 characters)", "x".repeat(128))
        );
    }

    #[test]
    fn closing_tags_and_ampersands_are_escaped() {
        assert_eq!(
            sanitize("Choose <next> & slice </todo_context>"),
            "Choose &lt;next&gt; &amp; slice &lt;/todo_context&gt;"
        );
        assert_eq!(sanitize("&amp;"), "&amp;amp;");
    }

    #[test]
    fn quotes_stay() {
        assert_eq!(sanitize(r#"say "hi" it's"#), r#"say "hi" it's"#);
    }

    #[test]
    fn line_breaks_become_visible_escapes() {
        assert_eq!(sanitize("a\r\nb"), "a\\nb");
        assert_eq!(sanitize("a\rb"), "a\\rb");
        assert_eq!(sanitize("a\nb"), "a\\nb");
        assert_eq!(sanitize("a\tb"), "a\\tb");
        assert_eq!(sanitize("a\n\rb"), "a\\n\\rb");
    }

    #[test]
    fn control_characters_and_separators_become_spaces() {
        for c in [
            '\u{0}', '\u{7}', '\u{b}', '\u{c}', '\u{1b}', '\u{1f}', '\u{7f}', '\u{85}', '\u{9f}',
            '\u{2028}', '\u{2029}',
        ] {
            assert_eq!(sanitize(&format!("a{c}b")), "a b", "U+{:04X}", c as u32);
        }
    }

    #[test]
    fn the_byte_order_mark_and_bidi_controls_become_spaces() {
        for c in [
            '\u{feff}', '\u{202a}', '\u{202b}', '\u{202c}', '\u{202d}', '\u{202e}', '\u{2066}',
            '\u{2067}', '\u{2068}', '\u{2069}',
        ] {
            let text = format!("a{c}b");
            assert_eq!(sanitize(&text), "a b", "U+{:04X}", c as u32);
            assert_eq!(one_line(&text), "a b", "U+{:04X}", c as u32);
            assert_eq!(sanitize_multiline(&text), "a b", "U+{:04X}", c as u32);
        }
        // Their neighbours stay: the zero-width joiner, the left-to-right
        // mark, the word joiner.
        for c in ['\u{200d}', '\u{200e}', '\u{2060}', '\u{2065}', '\u{2029}'] {
            let kept = c != '\u{2029}';
            assert_eq!(sanitize(&format!("a{c}b")) == format!("a{c}b"), kept);
        }
    }

    #[test]
    fn other_text_is_unchanged() {
        assert_eq!(sanitize("数据库迁移 🚀 ü"), "数据库迁移 🚀 ü");
        assert!(matches!(one_line("plain"), Cow::Borrowed("plain")));
    }

    #[test]
    fn one_line_escapes_breaks_without_xml() {
        assert_eq!(one_line("a <b>\n&\u{7}"), "a <b>\\n& ");
    }

    #[test]
    fn the_ascii_shortcut_agrees_with_the_full_path() {
        for b in 0u8..=0x7f {
            let text = format!("a{}b", b as char);
            assert_eq!(sanitize(&text), sanitize_any(&text), "byte {b:#04x}");
            assert_eq!(
                one_line(&text),
                blank_controls(&escape_breaks(&text), false),
                "byte {b:#04x}"
            );
        }
    }

    proptest::proptest! {
        /// The byte-wise scan against the rule it shortens: a character
        /// changes when it is unsafe and not a line feed or a tab.
        #[test]
        fn the_terminal_scan_finds_what_the_rule_changes(text in "([ -~\n\t]{0,40}[ -~\t\r\n\u{0}-\u{1f}\u{7f}-\u{a0}\u{2028}\u{2029}\u{feff}\u{202a}-\u{202e}\u{2066}-\u{2069}◎…数🚀]?){0,6}") {
            let changes = text.chars().any(|c| is_unsafe(c) && c != '\n' && c != '\t');
            proptest::prop_assert_eq!(terminal_safe(&text), !changes, "{:?}", text);
            proptest::prop_assert_eq!(matches!(terminal(&text), Cow::Borrowed(_)), !changes);
        }

        /// The block-wise check against the byte rule it stands for, on
        /// long runs of plain ASCII with anything among them (markup,
        /// breaks, controls, wide characters across a block's end); what
        /// `sanitize_into` appends is what `sanitize` returns.
        #[test]
        fn the_prompt_scan_finds_what_sanitizing_may_change(
            text in "([ -~]{0,40}[ -~\t\r\n\u{0}-\u{1f}\u{7f}-\u{a0}\u{2028}\u{feff}\u{202e}&<>é数🚀]?){0,6}",
            before in "[a-z ]{0,3}",
        ) {
            let rule = text.bytes().all(|b| is_plain_ascii(b) && !matches!(b, b'&' | b'<' | b'>'));
            proptest::prop_assert_eq!(prompt_safe(&text), rule, "{:?}", text);
            proptest::prop_assert_eq!(sanitize(&text), sanitize_any(&text));
            let mut out = before.clone();
            sanitize_into(&mut out, &text);
            proptest::prop_assert_eq!(out, before + &sanitize_any(&text));
        }

        #[test]
        fn the_shortcut_never_changes_the_result(text in "[ -~\t\r\n\u{0}-\u{1f}\u{7f}-\u{a0}\u{2028}\u{feff}\u{202a}-\u{202e}\u{2066}-\u{2069}数]{0,16}") {
            proptest::prop_assert_eq!(sanitize(&text), sanitize_any(&text));
        }

        #[test]
        fn no_unsafe_character_survives(text in "[ -~\t\r\n\u{0}-\u{1f}\u{7f}-\u{a0}\u{2028}\u{2029}\u{feff}\u{2020}-\u{2070}数🚀]{0,24}") {
            for out in [sanitize(&text), one_line(&text).into_owned()] {
                proptest::prop_assert!(!out.chars().any(is_unsafe), "{:?} -> {:?}", text, out);
                proptest::prop_assert_eq!(out.lines().count(), usize::from(!out.is_empty()));
            }
            let multi = sanitize_multiline(&text);
            proptest::prop_assert!(!multi.chars().any(|c| c != '\n' && c != '\t' && is_unsafe(c)), "{:?}", multi);
        }
    }

    #[test]
    fn terminal_text_keeps_line_feeds_and_tabs_only() {
        assert_eq!(
            terminal("a\u{1b}[31mred\u{7}\r\nnext\tcol\u{9b}2J\u{2028}<b>&"),
            "a [31mred  \nnext\tcol 2J <b>&"
        );
        assert!(matches!(terminal("plain\n\tline"), Cow::Borrowed(_)));
    }

    #[test]
    fn multiline_keeps_breaks_and_escapes_markup() {
        assert_eq!(
            sanitize_multiline("Ship </todo_context>\r\nthen\rrest\u{2028}\tok\u{0}"),
            "Ship &lt;/todo_context&gt;\nthen\nrest \tok "
        );
    }
}
