//! The built-in prompt templates rendered without Handlebars' parser.
//!
//! The built-in texts (`prompts/*.md`) use a small part of Handlebars:
//! `{{name}}`, `{{#if name}}…{{else}}…{{/if}}`, `{{#unless name}}…{{/unless}}`
//! and `{{#each name}}…{{/each}}` with plain field names inside. This
//! module parses exactly that subset by hand and renders it the way
//! handlebars 6 renders it in goalkeeper's setting (strict mode, no
//! escaping), byte for byte: standalone block lines are removed by
//! handlebars-rust's rule (a block tag with only spaces or tabs around it
//! on its line loses them and the line break after it), values print as
//! Handlebars prints JSON, `#if` takes Handlebars' truthiness (`false`,
//! `null`, `0`, `""`, `[]`, `{}` are false), names inside `#each` resolve
//! against the element only, and a missing value is an error.
//!
//! Why a parser at all, rather than templates parsed at build time or
//! rendering functions written by hand: Handlebars' parser is the cost.
//! Compiling the templates a command renders outweighed the rest of a
//! `goalkeeper context` or of a hook event that renders a message, and
//! rendering the built-ins through Handlebars makes those whole processes
//! clearly slower (BENCHMARKS.md, "Built-in prompts without Handlebars'
//! parser", has the interleaved measurement); `todo
//! apply`, `todo view` and the status line render no template. This parser
//! reads the same texts in one pass over their `{{` tags. A build step (a
//! `build.rs` carrying this parser) could save only that pass, which is
//! already small; hand-written renderers would save the same and be a
//! second copy of every template's text, free to drift from the file a
//! user overrides. Neither is worth it: the text files stay the only
//! source. The price of the second renderer is the property test in
//! `tests.rs`, which holds it to Handlebars' bytes on every built-in
//! template.
//!
//! A text outside the subset is refused by [`parse`]; the caller renders
//! it through Handlebars. A render that fails here (a value missing in
//! strict mode, `#each` over something that is not a list) is one that
//! Handlebars refuses too: the caller asks Handlebars again for its exact
//! error message. Overrides from `prompts.dir` never come here: they are
//! the user's text and keep all of Handlebars.

mod render;
#[cfg(test)]
mod tests;

/// A template of the subset, borrowing its text.
#[derive(Debug)]
pub(crate) struct Template<'t> {
    nodes: Vec<Node<'t>>,
}

#[derive(Debug)]
enum Node<'t> {
    /// Literal text, already cut as Handlebars cuts standalone lines.
    Text(&'t str),
    /// `{{name}}`.
    Value(&'t str),
    /// `{{#if name}}` (or `{{#unless name}}`, `negate`) with its branches.
    If {
        name: &'t str,
        negate: bool,
        then: Vec<Node<'t>>,
        otherwise: Option<Vec<Node<'t>>>,
    },
    /// `{{#each name}}` with its body and its `{{else}}` branch.
    Each {
        name: &'t str,
        body: Vec<Node<'t>>,
        otherwise: Option<Vec<Node<'t>>>,
    },
}

/// Why a text is not in the subset: where, and what was found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Unsupported {
    /// Byte offset of the tag (or of the end of the text).
    pub offset: usize,
    /// What is outside the subset.
    pub why: &'static str,
}

/// Why a render failed; Handlebars in strict mode fails on the same
/// template and data, and its error is the one reported.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Failed {
    /// `{{name}}` has no value.
    Missing(String),
    /// `{{#each name}}` over something that is neither a list nor an
    /// object, with no `{{else}}`.
    NotIterable(String),
    /// A field name looked up in a list.
    NameInList(String),
}

/// The block helpers of the subset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Helper {
    If,
    Unless,
    Each,
}

impl Helper {
    fn name(self) -> &'static str {
        match self {
            Helper::If => "if",
            Helper::Unless => "unless",
            Helper::Each => "each",
        }
    }
}

/// One `{{…}}` tag.
enum Tag<'t> {
    Value(&'t str),
    Open(Helper, &'t str),
    Else,
    Close(&'t str),
}

/// Words Handlebars reads as something other than a field name: block
/// keywords, literals, `this`, and its built-in helpers (`{{len}}` calls
/// a helper, it does not print a field).
const RESERVED: &[&str] = &[
    "else", "as", "this", "true", "false", "null", "if", "unless", "each", "with", "lookup", "raw",
    "log", "eq", "ne", "gt", "gte", "lt", "lte", "and", "or", "not", "len",
];

/// A field name of the subset: an ASCII letter or `_`, then letters,
/// digits and `_`, and not a reserved word.
fn field(name: &str) -> Option<&str> {
    let mut chars = name.chars();
    let first = chars.next()?;
    let ok = (first.is_ascii_alphabetic() || first == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !RESERVED.contains(&name);
    ok.then_some(name)
}

fn tag(inner: &str) -> Option<Tag<'_>> {
    if inner == "else" {
        return Some(Tag::Else);
    }
    if let Some(name) = inner.strip_prefix('/') {
        return Some(Tag::Close(name));
    }
    if let Some(rest) = inner.strip_prefix('#') {
        let (helper, name) = rest.split_once(' ')?;
        let helper = match helper {
            "if" => Helper::If,
            "unless" => Helper::Unless,
            "each" => Helper::Each,
            _ => return None,
        };
        return field(name).map(|name| Tag::Open(helper, name));
    }
    field(inner).map(Tag::Value)
}

/// Where `{{` (with `b'{'`) or `}}` first occurs in `text`. A byte scan:
/// `str::find` with a two-byte needle sets up a two-way searcher on every
/// call, which cost more than the rest of the parse of these short
/// texts.
fn find_double(text: &str, byte: u8) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut from = 0;
    while let Some(i) = bytes[from..].iter().position(|&b| b == byte) {
        let at = from + i;
        if bytes.get(at + 1) == Some(&byte) {
            return Some(at);
        }
        from = at + 1;
    }
    None
}

/// Spaces and tabs: what Handlebars trims around a standalone tag.
const BLANK: [char; 2] = [' ', '\t'];

/// True when `text` starts with a line break after nothing but blanks.
fn starts_with_empty_line(text: &str) -> bool {
    text.trim_start_matches(BLANK).starts_with(['\n', '\r'])
}

/// True when `text` ends with a line break and then nothing but blanks,
/// or is nothing but blanks.
fn ends_with_empty_line(text: &str) -> bool {
    let text = text.trim_end_matches(BLANK);
    text.ends_with(['\n', '\r']) || text.is_empty()
}

/// `text` without its leading blanks and then one `\r\n` or `\n` (a lone
/// `\r` stays, as in Handlebars).
fn cut_line_start(text: &str) -> &str {
    let text = text.trim_start_matches(BLANK);
    text.strip_prefix("\r\n")
        .or_else(|| text.strip_prefix('\n'))
        .unwrap_or(text)
}

/// An open block while its body is parsed.
struct Frame<'t> {
    helper: Helper,
    name: &'t str,
    then: Vec<Node<'t>>,
    otherwise: Option<Vec<Node<'t>>>,
}

/// The nodes being filled: the innermost open branch, or the top level.
fn current<'a, 't>(top: &'a mut Vec<Node<'t>>, open: &'a mut [Frame<'t>]) -> &'a mut Vec<Node<'t>> {
    match open.last_mut() {
        Some(frame) => match &mut frame.otherwise {
            Some(otherwise) => otherwise,
            None => &mut frame.then,
        },
        None => top,
    }
}

/// Parses `text`, or says where it leaves the subset.
pub(crate) fn parse(text: &str) -> Result<Template<'_>, Unsupported> {
    let mut top = Vec::new();
    let mut open: Vec<Frame<'_>> = Vec::new();
    // The end of the last tag, and whether the text after it loses its
    // first line (the tag was standalone).
    let (mut end, mut cut_next) = (0, false);
    while let Some(found) = find_double(&text[end..], b'{') {
        let start = end + found;
        let unsupported = |why| Err(Unsupported { offset: start, why });
        if text[..start].ends_with('\\') {
            return unsupported("an escaped tag");
        }
        let Some(len) = find_double(&text[start + 2..], b'}') else {
            return unsupported("an unclosed tag");
        };
        let tag_end = start + 2 + len + 2;
        let Some(tag) = tag(&text[start + 2..start + 2 + len]) else {
            return unsupported("a tag outside the subset");
        };
        if start > end {
            let gap = &text[end..start];
            let gap = if cut_next { cut_line_start(gap) } else { gap };
            current(&mut top, &mut open).push(Node::Text(gap));
        }
        cut_next = false;
        if let Tag::Value(name) = tag {
            current(&mut top, &mut open).push(Node::Value(name));
            end = tag_end;
            continue;
        }
        // A block tag alone on its line: its line's blanks go, before it
        // from the text already read, after it with the line break.
        if starts_with_empty_line(&text[tag_end..]) || tag_end == text.len() {
            let leading = ends_with_empty_line(&text[..start]);
            if leading && let Some(Node::Text(before)) = current(&mut top, &mut open).last_mut() {
                *before = before.trim_end_matches(BLANK);
            }
            cut_next = start == 0 || leading;
        }
        match tag {
            Tag::Value(_) => unreachable!("handled above"),
            Tag::Open(helper, name) => open.push(Frame {
                helper,
                name,
                then: Vec::new(),
                otherwise: None,
            }),
            Tag::Else => match open.last_mut() {
                Some(frame) if frame.otherwise.is_none() => frame.otherwise = Some(Vec::new()),
                Some(_) => return unsupported("a second {{else}}"),
                None => return unsupported("an {{else}} outside a block"),
            },
            Tag::Close(name) => {
                let Some(frame) = open.pop() else {
                    return unsupported("a closing tag outside a block");
                };
                if name != frame.helper.name() {
                    return unsupported("a closing tag that does not match its block");
                }
                let node = match frame.helper {
                    Helper::If | Helper::Unless => Node::If {
                        name: frame.name,
                        negate: frame.helper == Helper::Unless,
                        then: frame.then,
                        otherwise: frame.otherwise,
                    },
                    Helper::Each => Node::Each {
                        name: frame.name,
                        body: frame.then,
                        otherwise: frame.otherwise,
                    },
                };
                current(&mut top, &mut open).push(node);
            }
        }
        end = tag_end;
    }
    if !open.is_empty() {
        return Err(Unsupported {
            offset: text.len(),
            why: "a block that is not closed",
        });
    }
    // The rest of the text, like any text between tags (Handlebars' end of
    // input is a token too).
    let tail = &text[end..];
    if !tail.is_empty() {
        top.push(Node::Text(if cut_next {
            cut_line_start(tail)
        } else {
            tail
        }));
    }
    Ok(Template { nodes: top })
}
