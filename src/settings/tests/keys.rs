//! Defaults, every key in every spelling, `todo.reminders` and the legacy
//! `todo.eager`.

use super::*;

// ---- defaults and every key ----

#[test]
fn defaults_match_the_spec() {
    let s = Settings::default();
    assert!(s.todo.enabled);
    assert_eq!(s.todo.eager, Eager::Default);
    assert!(s.todo.reminders.enabled);
    assert_eq!(s.todo.reminders.max, 3);
    assert_eq!(s.todo.context.inactive_tool, InactiveTool::Omit);
    assert_eq!(s.todo.context.max_tasks, 200);
    assert!(s.goal.enabled);
    assert_eq!(s.goal.continuation.max_idle, 3);
    assert_eq!(s.prompts.dir, None);
    assert_eq!(s.memory.file, None);
    assert_eq!(s.system_prompt.base, None);
}

#[test]
fn an_empty_document_and_no_file_give_the_defaults() {
    assert_eq!(file("").unwrap(), Settings::default());
    assert_eq!(file("# only a comment\n").unwrap(), Settings::default());
    assert_eq!(Settings::load_from(None, &[]).unwrap(), Settings::default());
}

#[test]
fn every_key_parses_from_a_file() {
    assert_eq!(file(EVERY_KEY).unwrap(), every_key_changed());
}

#[test]
fn every_key_parses_from_flat_quoted_keys() {
    let text = r#"
"todo.enabled" = false
"todo.eager" = "preferred"
"todo.reminders" = false
"todo.reminders.max" = 7
"todo.context.inactive_tool" = "read-only"
"todo.context.max_tasks" = 12
"todo.claim.lease" = 90
"goal.enabled" = false
"goal.continuation.max_idle" = 5
"prompts.dir" = "/etc/goalkeeper/prompts"
"memory.file" = "/home/me/memory.md"
"system_prompt.base" = "/home/me/base.md"
"postgres.connect.retry" = 5
"verify.timeout" = 30
"verify.tail" = 100
"#;
    assert_eq!(file(text).unwrap(), every_key_changed());
}

#[test]
fn every_key_parses_from_set() {
    let mut settings = Settings::default();
    for assignment in [
        "todo.enabled=false",
        "todo.eager=preferred",
        "todo.reminders=false",
        "todo.reminders.max=7",
        "todo.context.inactive_tool=read-only",
        "todo.context.max_tasks=12",
        "todo.claim.lease=90",
        "goal.enabled=false",
        "goal.continuation.max_idle=5",
        "prompts.dir=/etc/goalkeeper/prompts",
        "memory.file=/home/me/memory.md",
        "system_prompt.base=/home/me/base.md",
        "postgres.connect.retry=5",
        "verify.timeout=30",
        "verify.tail=100",
    ] {
        settings.apply_set(assignment).unwrap();
    }
    assert_eq!(settings, every_key_changed());
}

#[test]
fn set_values_may_be_toml_and_may_have_space_around_them() {
    assert_eq!(
        set(r#"todo.eager="always""#).unwrap().todo.eager,
        Eager::Always
    );
    assert!(!set(" todo.enabled = false ").unwrap().todo.enabled);
    assert_eq!(
        set(r#"prompts.dir="/tmp/my prompts""#).unwrap().prompts.dir,
        Some(PathBuf::from("/tmp/my prompts"))
    );
}

#[test]
fn a_set_path_is_taken_as_written_even_when_it_looks_like_another_type() {
    assert_eq!(
        set("prompts.dir=/tmp/2024-01-01").unwrap().prompts.dir,
        Some(PathBuf::from("/tmp/2024-01-01"))
    );
    assert_eq!(
        set("memory.file=2024-01-01").unwrap().memory.file,
        Some(cwd().join("2024-01-01"))
    );
    assert_eq!(
        set("memory.file=42").unwrap().memory.file,
        Some(cwd().join("42"))
    );
}

#[test]
fn later_sets_win_over_earlier_ones_and_over_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.toml");
    std::fs::write(&path, "[todo]\neager = \"always\"\nenabled = false\n").unwrap();
    let settings = Settings::load_from(
        Some(&flag(&path)),
        &sets(&["todo.eager=preferred", "todo.eager=default"]),
    )
    .unwrap();
    assert_eq!(settings.todo.eager, Eager::Default);
    assert!(!settings.todo.enabled);
}

#[test]
fn one_key_in_every_toml_shape() {
    let expected = set("todo.context.max_tasks=9").unwrap();
    for text in [
        "todo.context.max_tasks = 9",
        "[todo]\ncontext.max_tasks = 9",
        "[todo.context]\nmax_tasks = 9",
        "todo = { context = { max_tasks = 9 } }",
        "\"todo.context.max_tasks\" = 9",
        "[\"todo.context\"]\nmax_tasks = 9",
        "[todo]\n\"context.max_tasks\" = 9",
    ] {
        assert_eq!(file(text).unwrap(), expected, "{text}");
    }
}

// ---- todo.reminders: a boolean and a table ----

#[test]
fn reminders_as_a_value_in_the_todo_table() {
    let s = file("[todo]\nreminders = false\n").unwrap();
    assert!(!s.todo.reminders.enabled);
    assert_eq!(s.todo.reminders.max, 3);
}

#[test]
fn reminders_as_a_table_with_enabled_and_max() {
    let s = file("[todo.reminders]\nenabled = false\nmax = 5\n").unwrap();
    assert!(!s.todo.reminders.enabled);
    assert_eq!(s.todo.reminders.max, 5);
    let s = file("[todo.reminders]\nmax = 5\n").unwrap();
    assert!(s.todo.reminders.enabled);
    assert_eq!(s.todo.reminders.max, 5);
}

#[test]
fn reminders_as_flat_quoted_keys() {
    let s = file("\"todo.reminders\" = false\n\"todo.reminders.max\" = 5\n").unwrap();
    assert!(!s.todo.reminders.enabled);
    assert_eq!(s.todo.reminders.max, 5);
    // A value in [todo] next to a quoted flat max.
    let s = file("\"todo.reminders.max\" = 0\n[todo]\nreminders = true\n").unwrap();
    assert!(s.todo.reminders.enabled);
    assert_eq!(s.todo.reminders.max, 0);
}

#[test]
fn reminders_enabled_is_an_alias_everywhere() {
    assert!(
        !file("todo.reminders.enabled = false")
            .unwrap()
            .todo
            .reminders
            .enabled
    );
    assert!(
        !set("todo.reminders.enabled=false")
            .unwrap()
            .todo
            .reminders
            .enabled
    );
    assert!(!set("todo.reminders=false").unwrap().todo.reminders.enabled);
}

#[test]
fn reminders_as_value_and_table_explains_the_way_out() {
    assert_eq!(
        file_err("[todo]\nreminders = false\n[todo.reminders]\nmax = 5\n"),
        "settings file /x/config.toml: invalid TOML at line 3, column 7: duplicate key \
         reminders; todo.reminders cannot be both a value and a table, so write \
         [todo.reminders] with enabled = ... and max = ..."
    );
}

#[test]
fn one_key_under_two_spellings_is_reported() {
    assert_eq!(
        file_err("\"todo.reminders.max\" = 5\n[todo.reminders]\nmax = 4\n"),
        "settings file /x/config.toml: todo.reminders.max is set twice, as \
         todo.reminders.max and as \"todo.reminders.max\"; keep one"
    );
    assert_eq!(
        file_err("\"todo.reminders\" = true\n[todo.reminders]\nenabled = false\n"),
        "settings file /x/config.toml: todo.reminders is set twice, as \
         todo.reminders.enabled and as \"todo.reminders\"; keep one"
    );
}

// ---- legacy todo.eager ----

#[test]
fn legacy_boolean_eager_migrates() {
    assert_eq!(file("todo.eager = true").unwrap().todo.eager, Eager::Always);
    assert_eq!(
        file("todo.eager = false").unwrap().todo.eager,
        Eager::Default
    );
    assert_eq!(set("todo.eager=true").unwrap().todo.eager, Eager::Always);
    assert_eq!(set("todo.eager=false").unwrap().todo.eager, Eager::Default);
}

#[test]
fn every_enum_value_is_accepted() {
    for eager in Eager::ALL {
        let text = format!("todo.eager = \"{}\"", eager.as_str());
        assert_eq!(file(&text).unwrap().todo.eager, eager);
    }
    for tool in InactiveTool::ALL {
        let assignment = format!("todo.context.inactive_tool={}", tool.as_str());
        assert_eq!(set(&assignment).unwrap().todo.context.inactive_tool, tool);
    }
}
