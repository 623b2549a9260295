//! The subset against Handlebars, its oracle: hand-picked cases of every
//! rule, then property tests over random templates and over the built-in
//! templates with the data their callers build.

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
    (
        text(),
        proptest::option::of(number()),
        number(),
        number(),
        text(),
    )
        .prop_map(
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
/// (`Injector`, `todo_context`, `agent_tools`, `turn`): every
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
    "verify",
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
                    map.entry("verify").or_insert("goalkeeper verify".into());
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
