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
//! rendering functions written by hand: handlebars' pest parser was the
//! cost (compiling the two templates a goal continuation renders took
//! 3.5 M instructions in every process that rendered it). This parser
//! reads the same 2.3 KB in one pass over its `{{` tags in 34 K
//! instructions, and the whole cold render of the continuation now takes
//! 122 K (callgrind, BENCHMARKS.md "Third pass"): about 1% of a hook
//! process. A build step (a `build.rs` carrying a second copy of this
//! parser) could save at most those 34 K; hand-written renderers would
//! save the same and be a second copy of every template's text, free to
//! drift from the file a user overrides. Neither is worth it: the text
//! files stay the only source.
//!
//! A text outside the subset is refused by [`parse`]; the caller renders
//! it through Handlebars. A render that fails here (a value missing in
//! strict mode, `#each` over something that is not a list) is one that
//! Handlebars refuses too: the caller asks Handlebars again for its exact
//! error message. Overrides from `prompts.dir` never come here: they are
//! the user's text and keep all of Handlebars.

use std::fmt::Write as _;

use serde_json::Value;

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
/// call, which cost more than scanning these short texts (35 K of the
/// 65 K instructions that parsing two templates took).
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

impl Template<'_> {
    /// The text for `data`, before goalkeeper's per-line trim.
    pub(crate) fn render(&self, data: &Value) -> Result<String, Failed> {
        let mut out = String::with_capacity(4096);
        render_nodes(&self.nodes, data, &mut out)?;
        Ok(out)
    }
}

/// Field `name` of `scope` as Handlebars looks it up: a key of an object,
/// nothing in a string, number, boolean or null, and an error in a list
/// unless the name is an index.
fn lookup<'v>(scope: &'v Value, name: &str) -> Result<Option<&'v Value>, Failed> {
    match scope {
        Value::Object(map) => Ok(map.get(name)),
        Value::Array(list) => name
            .parse::<usize>()
            .map(|i| list.get(i))
            .map_err(|_| Failed::NameInList(name.to_owned())),
        _ => Ok(None),
    }
}

/// Handlebars' truthiness (`includeZero` off).
fn truthy(value: &Value) -> bool {
    match value {
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(f64::is_normal),
        Value::Null => false,
        Value::String(s) => !s.is_empty(),
        Value::Array(list) => !list.is_empty(),
        Value::Object(map) => !map.is_empty(),
    }
}

/// `value` printed as Handlebars prints JSON.
fn write_value(value: &Value, out: &mut String) {
    match value {
        Value::String(s) => out.push_str(s),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => {
            let _ = write!(out, "{n}");
        }
        Value::Null => {}
        Value::Array(list) => {
            out.push('[');
            for (i, item) in list.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_value(item, out);
            }
            out.push(']');
        }
        Value::Object(_) => out.push_str("[object]"),
    }
}

fn render_nodes(nodes: &[Node<'_>], scope: &Value, out: &mut String) -> Result<(), Failed> {
    for node in nodes {
        match node {
            Node::Text(text) => out.push_str(text),
            Node::Value(name) => match lookup(scope, name)? {
                Some(value) => write_value(value, out),
                None => return Err(Failed::Missing((*name).to_owned())),
            },
            Node::If {
                name,
                negate,
                then,
                otherwise,
            } => {
                let value = lookup(scope, name)?;
                if value.is_some_and(truthy) != *negate {
                    render_nodes(then, scope, out)?;
                } else if let Some(otherwise) = otherwise {
                    render_nodes(otherwise, scope, out)?;
                }
            }
            Node::Each {
                name,
                body,
                otherwise,
            } => match lookup(scope, name)? {
                Some(Value::Array(list)) if !list.is_empty() || otherwise.is_none() => {
                    for item in list {
                        render_nodes(body, item, out)?;
                    }
                }
                Some(Value::Object(map)) if !map.is_empty() || otherwise.is_none() => {
                    for item in map.values() {
                        render_nodes(body, item, out)?;
                    }
                }
                _ => match otherwise {
                    Some(otherwise) => render_nodes(otherwise, scope, out)?,
                    None => return Err(Failed::NotIterable((*name).to_owned())),
                },
            },
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::sync::OnceLock;

    use handlebars::Handlebars;
    use proptest::prelude::*;
    use serde_json::{Value, json};

    use super::*;
    use crate::prompt::BUILTIN;
    use crate::prompt::templates::compile;
    use crate::todo::Status;

    /// What Handlebars (the oracle) makes of `text` with `data`: its raw
    /// output, or that it failed.
    fn oracle(registry: &Handlebars<'_>, name: &str, data: &Value) -> Result<String, ()> {
        registry.render(name, data).map_err(|_| ())
    }

    fn subset(template: &Template<'_>, data: &Value) -> Result<String, ()> {
        template.render(data).map_err(|_| ())
    }

    /// Every built-in text, parsed into the subset and compiled by
    /// Handlebars, once per test process.
    fn builtins() -> &'static [(&'static str, Template<'static>, Handlebars<'static>)] {
        static BUILTINS: OnceLock<Vec<(&str, Template<'static>, Handlebars<'static>)>> =
            OnceLock::new();
        BUILTINS.get_or_init(|| {
            BUILTIN
                .iter()
                .map(|(name, text)| {
                    let parsed = parse(text).unwrap_or_else(|e| panic!("{name}: {e:?}"));
                    (*name, parsed, compile(name, text).unwrap())
                })
                .collect()
        })
    }

    #[test]
    fn every_builtin_is_in_the_subset() {
        assert_eq!(builtins().len(), BUILTIN.len());
    }

    /// Renders `text` both ways and asserts the same bytes (or that both fail).
    #[track_caller]
    fn same(text: &str, data: &Value) -> Result<String, ()> {
        let template = parse(text).unwrap_or_else(|e| panic!("{text:?}: {e:?}"));
        let registry = compile("t", text).unwrap();
        let expected = oracle(&registry, "t", data);
        assert_eq!(subset(&template, data), expected, "{text:?} with {data}");
        expected
    }

    #[test]
    fn standalone_lines_are_cut_as_handlebars_cuts_them() {
        let data = json!({"a": true, "b": false, "l": [{"x": "1"}, {"x": "2"}], "e": []});
        for text in [
            "{{#if a}}\nA\n{{/if}}\n",
            "  {{#if a}}  \n  A\n  {{else}}\t\n  B\n  {{/if}}  \nend",
            "{{#if b}}\nA\n{{else}}\nB\n{{/if}}",
            "x {{#if a}}\ninline start\n{{/if}} y\n",
            "x\n{{#if a}} A {{/if}}\ny",
            "{{#if a}}\r\nA\r\n{{/if}}\r\nz",
            "{{#if a}}\rA\r{{/if}}\rz",
            "{{#each l}}\n- {{x}}\n{{/each}}\n\n  \n",
            "{{#each e}}\n- {{x}}\n{{else}}\nnone\n{{/each}}\n",
            "{{#each l}}{{#if a}}\n{{/if}}\n{{x}}{{/each}}",
            "a\n  {{#unless b}}\n    U\n  {{/unless}}\n  tail  ",
            "{{#if a}}\n{{#if a}}\n\n{{/if}}\n{{/if}}",
            "{{#if a}}{{/if}}\n\n",
            "\n\n{{#if a}}\n{{/if}}",
            "{{a}}\n{{#if a}}\nA{{/if}}\n",
            "{{#if a}}\n   \n{{/if}}\n   ",
            "{{#if a}}\n   \n{{/if}}\n   x",
        ] {
            same(text, &data).unwrap();
        }
    }

    #[test]
    fn values_print_as_handlebars_prints_json() {
        let data = json!({
            "s": "a {{b}} \\{{c}}\n", "t": true, "f": false, "z": 0, "n": -1.5, "big": 1e300,
            "nothing": null, "list": ["x", 1, [2, null], {"k": 1}], "obj": {"k": "v"}, "empty": [],
        });
        let text = "{{s}}|{{t}}|{{f}}|{{z}}|{{n}}|{{big}}|{{nothing}}|{{list}}|{{obj}}|{{empty}}";
        assert_eq!(
            same(text, &data).unwrap(),
            "a {{b}} \\{{c}}\n|true|false|0|-1.5|1e+300||[x, 1, [2, ], [object]]|[object]|[]"
        );
    }

    #[test]
    fn truthiness_is_handlebars_truthiness() {
        for value in [
            json!(null),
            json!(false),
            json!(true),
            json!(0),
            json!(-0.0),
            json!(1e-310),
            json!(0.5),
            json!(""),
            json!(" "),
            json!([]),
            json!([0]),
            json!({}),
            json!({"k": 0}),
        ] {
            let data = json!({ "v": value });
            same("{{#if v}}yes{{else}}no{{/if}}", &data).unwrap();
            same("{{#unless v}}yes{{else}}no{{/unless}}", &data).unwrap();
        }
        same("{{#if missing}}yes{{else}}no{{/if}}", &json!({})).unwrap();
    }

    #[test]
    fn strict_mode_failures_are_failures() {
        for (text, data) in [
            ("{{missing}}", json!({})),
            ("{{#each l}}{{x}}{{/each}}", json!({"l": [{"x": 1}, {}]})),
            ("{{#each l}}{{x}}{{/each}}", json!({"l": ["string"]})),
            ("{{#each l}}{{x}}{{/each}}", json!({"l": [[1]]})),
            ("{{#each l}}{{#if x}}{{/if}}{{/each}}", json!({"l": [[1]]})),
            ("{{#each l}}x{{/each}}", json!({"l": "not a list"})),
            ("{{#each l}}x{{/each}}", json!({})),
            ("{{#each l}}x{{/each}}", json!({"l": null})),
            ("{{x}}", json!([1])),
        ] {
            assert_eq!(same(text, &data), Err(()), "{text:?} with {data}");
        }
        // Fields of an element come from the element only.
        assert_eq!(
            same("{{#each l}}{{top}}{{/each}}", &json!({"top": 1, "l": [{}]})),
            Err(())
        );
        // An `{{else}}` takes what cannot be iterated; an object iterates.
        same("{{#each l}}x{{else}}none{{/each}}", &json!({"l": 5})).unwrap();
        same(
            "{{#each l}}{{v}},{{/each}}",
            &json!({"l": {"b": {"v": 2}, "a": {"v": 1}}}),
        )
        .unwrap();
    }

    #[test]
    fn texts_outside_the_subset_are_refused() {
        for (text, offset, why) in [
            ("a {{ x }}", 2, "a tag outside the subset"),
            ("{{{x}}}", 0, "a tag outside the subset"),
            ("{{> partial}}", 0, "a tag outside the subset"),
            ("{{! comment }}", 0, "a tag outside the subset"),
            ("{{x.y}}", 0, "a tag outside the subset"),
            ("{{@index}}", 0, "a tag outside the subset"),
            ("{{this}}", 0, "a tag outside the subset"),
            ("{{len}}", 0, "a tag outside the subset"),
            ("{{#with x}}{{/with}}", 0, "a tag outside the subset"),
            ("{{#if x y}}{{/if}}", 0, "a tag outside the subset"),
            ("{{~x}}", 0, "a tag outside the subset"),
            ("x \\{{y}}", 3, "an escaped tag"),
            ("x {{y", 2, "an unclosed tag"),
            (
                "{{#if x}}{{/each}}",
                9,
                "a closing tag that does not match its block",
            ),
            ("{{/if}}", 0, "a closing tag outside a block"),
            ("{{else}}", 0, "an {{else}} outside a block"),
            ("{{#if x}}{{else}}{{else}}{{/if}}", 17, "a second {{else}}"),
            ("{{#if x}}", 9, "a block that is not closed"),
        ] {
            assert_eq!(
                parse(text).unwrap_err(),
                Unsupported { offset, why },
                "{text:?}"
            );
        }
    }

    /// Random text around tags: what standalone detection looks at.
    fn gap() -> impl Strategy<Value = String> {
        "[ab \t\n\r]{0,5}"
    }

    fn name() -> impl Strategy<Value = String> {
        proptest::sample::select(vec!["a".to_owned(), "b".to_owned(), "c".to_owned()])
    }

    /// Random templates of the subset, nested up to four levels.
    fn template() -> impl Strategy<Value = String> {
        let leaf = prop_oneof![gap(), name().prop_map(|n| format!("{{{{{n}}}}}"))];
        leaf.prop_recursive(4, 48, 6, |inner| {
            let body = proptest::collection::vec(inner, 0..5).prop_map(|parts| parts.concat());
            let helper = proptest::sample::select(vec!["if", "unless", "each"]);
            prop_oneof![
                proptest::collection::vec(body.clone(), 1..4).prop_map(|parts| parts.concat()),
                (
                    helper,
                    name(),
                    gap(),
                    body.clone(),
                    gap(),
                    proptest::option::of(body),
                    gap()
                )
                    .prop_map(|(h, n, g1, then, g2, otherwise, g3)| {
                        let otherwise = otherwise
                            .map(|o| format!("{g2}{{{{else}}}}{g3}{o}"))
                            .unwrap_or_default();
                        format!("{{{{#{h} {n}}}}}{g1}{then}{otherwise}{g2}{{{{/{h}}}}}{g3}")
                    }),
            ]
        })
    }

    /// Random JSON, with objects over the names the templates use.
    fn value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            proptest::sample::select(vec![0.0, 1.0, -2.5, 1e-310, 1e20]).prop_map(|n| json!(n)),
            (0i64..3).prop_map(|n| json!(n)),
            "[ab{}\n\r\t ]{0,4}".prop_map(Value::String),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                proptest::collection::btree_map(name(), inner, 0..4)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    fn text() -> impl Strategy<Value = String> {
        "[ a-z{}\\\\<>&/\t\r\n\u{0}\u{7f}\u{a0}\u{2028}\u{feff}数🚀]{0,16}"
    }

    fn number() -> impl Strategy<Value = String> {
        (0u64..300_000).prop_map(|n| n.to_string())
    }

    fn tool(default: &'static str) -> impl Strategy<Value = String> {
        prop_oneof![
            Just(default.to_owned()),
            Just(format!("mcp__goalkeeper__{default}")),
            text(),
        ]
    }

    fn status() -> impl Strategy<Value = Value> {
        proptest::sample::select(Status::ALL.to_vec()).prop_map(|s| json!(s))
    }

    /// The fields of `injector::GoalData`, as it serializes.
    fn goal_data() -> impl Strategy<Value = Value> {
        (text(), proptest::option::of(number()), number(), number(), text()).prop_map(
            |(objective, token_budget, tokens_used, tokens_left, time_used)| {
                json!({
                    "objective": objective, "token_budget": token_budget,
                    "tokens_used": tokens_used, "tokens_left": tokens_left, "time_used": time_used,
                })
            },
        )
    }

    /// Phases as `todo_context` and `incomplete_reminder` pass them.
    fn phases(hidden: bool) -> impl Strategy<Value = Value> {
        let task = (status(), text()).prop_map(|(s, c)| json!({"status": s, "content": c}));
        let phase = (text(), proptest::collection::vec(task, 0..4), text()).prop_map(
            move |(name, tasks, h)| {
                let mut phase = json!({"name": name, "tasks": tasks});
                if hidden {
                    phase["hidden"] = h.into();
                }
                phase
            },
        );
        proptest::collection::vec(phase, 0..4).prop_map(Value::Array)
    }

    /// Data for built-in template `name` shaped as its callers build it
    /// (`Injector`, `todo_context`, `agent_tools`, `host_turn`): every
    /// field present, optional ones null or set, lists empty or not.
    fn caller_data(name: &'static str) -> BoxedStrategy<Value> {
        match name {
            "goal-active" | "goal-budget-limit" => goal_data().boxed(),
            "goal-continuation" => (
                goal_data(),
                proptest::option::of(text()),
                any::<bool>(),
                proptest::collection::vec((text(), text(), proptest::option::of(text())), 0..4),
            )
                .prop_map(|(mut data, todo_context, active, blocked)| {
                    data["todo_context"] = todo_context.into();
                    data["todo_tool_active"] = active.into();
                    data["all_blocked"] = (!blocked.is_empty()).into();
                    data["blocked"] = blocked
                        .into_iter()
                        .map(|(c, p, r)| json!({"content": c, "phase": p, "reason": r}))
                        .collect();
                    data
                })
                .boxed(),
            "goal-mode-context" => (text(), proptest::option::of(text()))
                .prop_map(|(g, t)| json!({"goal_context": g, "todo_context": t}))
                .boxed(),
            "goal-todo-context" | "todo-context" | "goal-todo-context-extended" => (
                (number(), number(), number(), number(), number()),
                phases(true),
                (any::<bool>(), any::<bool>(), any::<bool>()),
            )
                .prop_map(
                    |((closed, total, open, shown, max), phases, (read_only, bounded, goal))| {
                        json!({
                            "closed": closed, "total": total, "open": open, "phases": phases,
                            "read_only": read_only, "bounded": bounded, "shown": shown,
                            "max_tasks": max, "goal": goal,
                        })
                    },
                )
                .boxed(),
            "todo-incomplete-reminder" => (number(), number(), phases(false))
                .prop_map(
                    |(open, total, phases)| json!({"open": open, "total": total, "phases": phases}),
                )
                .boxed(),
            "todo-error-reminder" => text().prop_map(|e| json!({"error": e})).boxed(),
            "memory" => text().prop_map(|c| json!({"content": c})).boxed(),
            _ => Just(json!({})).boxed(),
        }
    }

    /// Every field name any built-in template uses.
    const NAMES: &[&str] = &[
        "objective",
        "token_budget",
        "tokens_used",
        "tokens_left",
        "time_used",
        "goal_tool",
        "todo_tool",
        "content",
        "phase",
        "reason",
        "todo_context",
        "goal_context",
        "closed",
        "total",
        "open",
        "hidden",
        "name",
        "status",
        "shown",
        "max_tasks",
        "error",
        "read_only",
        "bounded",
        "goal",
        "all_blocked",
        "todo_tool_active",
        "blocked",
        "phases",
        "tasks",
    ];

    /// Data no caller builds: any field missing or of any JSON type, lists
    /// of elements that are anything.
    fn hostile_data() -> impl Strategy<Value = Value> {
        let field = proptest::option::weighted(0.85, any_value());
        proptest::collection::vec(field, NAMES.len()).prop_map(|fields| {
            Value::Object(
                NAMES
                    .iter()
                    .zip(fields)
                    .filter_map(|(name, value)| Some(((*name).to_owned(), value?)))
                    .collect(),
            )
        })
    }

    /// Any JSON value; objects use the templates' field names.
    fn any_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            proptest::sample::select(vec![0.0, 3.0, -0.5, 1e-310]).prop_map(|n| json!(n)),
            text().prop_map(Value::String),
        ];
        leaf.prop_recursive(3, 32, 4, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
                proptest::collection::vec((proptest::sample::select(NAMES.to_vec()), inner), 0..6)
                    .prop_map(|fields| {
                        Value::Object(fields.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
                    }),
            ]
        })
    }

    /// A built-in template's index and data for it: shaped as its caller
    /// shapes it (three times in four) or hostile, with the tool names
    /// `Templates::render` adds.
    fn builtin_case() -> impl Strategy<Value = (usize, Value, bool)> {
        (0..BUILTIN.len()).prop_flat_map(|i| {
            let data = prop_oneof![
                3 => caller_data(BUILTIN[i].0).prop_map(|data| (data, true)),
                1 => hostile_data().prop_map(|data| (data, false)),
            ];
            (Just(i), data, tool("todo"), tool("goal")).prop_map(
                |(i, (mut data, from_caller), todo, goal)| {
                    if let Value::Object(map) = &mut data {
                        map.entry("todo_tool").or_insert(todo.into());
                        map.entry("goal_tool").or_insert(goal.into());
                    }
                    (i, data, from_caller)
                },
            )
        })
    }

    /// The same texts loaded as overrides: `Templates` renders them with
    /// Handlebars.
    fn via_handlebars() -> &'static crate::prompt::Templates {
        static TEMPLATES: OnceLock<crate::prompt::Templates> = OnceLock::new();
        TEMPLATES.get_or_init(|| {
            let dir = tempfile::tempdir().unwrap();
            for (name, text) in BUILTIN {
                let path = dir.path().join(format!("{name}.md"));
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                std::fs::write(path, text).unwrap();
            }
            let templates = crate::prompt::Templates::load(Some(dir.path())).unwrap();
            assert!(BUILTIN.iter().all(|(name, _)| !templates.is_builtin(name)));
            templates
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1024))]

        /// Every built-in template renders the bytes Handlebars renders,
        /// and fails where Handlebars fails (data shaped as its caller
        /// shapes it never fails); through `Templates`, the error is
        /// Handlebars' own.
        #[test]
        fn builtins_render_as_handlebars_renders_them(
            (i, data, from_caller) in builtin_case(),
        ) {
            let (name, template, registry) = &builtins()[i];
            let expected = oracle(registry, name, &data);
            prop_assert!(expected.is_ok() || !from_caller, "{}: {}", name, data);
            prop_assert_eq!(subset(template, &data), expected);
            let builtin = crate::prompt::Templates::builtin();
            prop_assert_eq!(
                builtin.render(name, &data).map_err(|e| e.to_string()),
                via_handlebars().render(name, &data).map_err(|e| e.to_string())
            );
        }

        /// Any template of the subset, on any data, renders as Handlebars
        /// renders it: standalone lines, truthiness, lookups, failures.
        #[test]
        fn the_subset_renders_as_handlebars_renders(
            text in template(),
            data in proptest::collection::btree_map(name(), value(), 0..4),
        ) {
            let data = Value::Object(data.into_iter().collect());
            let parsed = parse(&text);
            prop_assert!(parsed.is_ok(), "{:?}: {:?}", text, parsed);
            let registry = compile("t", &text);
            prop_assert!(registry.is_ok(), "{:?}: {:?}", text, registry.err());
            prop_assert_eq!(
                subset(&parsed.unwrap(), &data),
                oracle(&registry.unwrap(), "t", &data),
                "{:?}", text
            );
        }
    }
}
