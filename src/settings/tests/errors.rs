//! Every problem a settings file or a `--set` can have, one by one.

use super::*;

#[test]
fn unknown_key_in_a_file() {
    assert_eq!(
        file_err("todo.enbled = true"),
        format!("settings file /x/config.toml: unknown key \"todo.enbled\"; {KNOWN}")
    );
}

#[test]
fn unknown_key_in_a_set() {
    assert_eq!(
        set_err("todo.enbled=true"),
        format!("--set: unknown key \"todo.enbled\"; {KNOWN}")
    );
}

#[test]
fn unknown_tables_and_sections_given_a_value_are_unknown_keys() {
    assert_eq!(
        file_err("[extras]\n"),
        format!("settings file /x/config.toml: unknown key \"extras\"; {KNOWN}")
    );
    assert_eq!(
        file_err("todo = true"),
        format!("settings file /x/config.toml: unknown key \"todo\"; {KNOWN}")
    );
    assert_eq!(
        file_err("[todo]\nreminder = 2"),
        format!("settings file /x/config.toml: unknown key \"todo.reminder\"; {KNOWN}")
    );
}

#[test]
fn wrong_type_in_a_file() {
    assert_eq!(
        file_err("[todo]\nenabled = \"yes\""),
        "settings file /x/config.toml: todo.enabled: expected true or false, got \"yes\""
    );
    assert_eq!(
        file_err("goal.continuation.max_idle = 2.5"),
        "settings file /x/config.toml: goal.continuation.max_idle: expected an integer >= 1, \
         got 2.5"
    );
    assert_eq!(
        file_err("prompts.dir = 3"),
        "settings file /x/config.toml: prompts.dir: expected a path (a string; empty for \
         none), got 3"
    );
    assert_eq!(
        file_err("todo.context.max_tasks = [1, 2]"),
        "settings file /x/config.toml: todo.context.max_tasks: expected an integer >= 0, \
         got an array"
    );
    assert_eq!(
        file_err("memory.file = 2024-01-01"),
        "settings file /x/config.toml: memory.file: expected a path (a string; empty for \
         none), got 2024-01-01"
    );
}

#[test]
fn a_table_where_a_value_belongs_is_a_wrong_type() {
    assert_eq!(
        file_err("[todo.enabled]\nvalue = true"),
        "settings file /x/config.toml: todo.enabled: expected true or false, got a table"
    );
    assert_eq!(
        file_err("[todo.reminders]\nenabled = { on = true }"),
        "settings file /x/config.toml: todo.reminders.enabled: expected true or false, \
         got a table"
    );
}

#[test]
fn wrong_type_in_a_set() {
    assert_eq!(
        set_err("goal.enabled=maybe"),
        "--set goal.enabled: expected true or false, got \"maybe\""
    );
    assert_eq!(
        set_err("todo.reminders.max=lots"),
        "--set todo.reminders.max: expected an integer >= 0, got \"lots\""
    );
    assert_eq!(
        set_err("todo.reminders.enabled=1"),
        "--set todo.reminders.enabled: expected true or false, got \"1\""
    );
}

#[test]
fn out_of_range_numbers() {
    assert_eq!(
        set_err("todo.reminders.max=-1"),
        "--set todo.reminders.max: expected an integer >= 0, got \"-1\""
    );
    assert_eq!(
        file_err("todo.context.max_tasks = -5"),
        "settings file /x/config.toml: todo.context.max_tasks: expected an integer >= 0, got -5"
    );
    assert_eq!(
        set_err("goal.continuation.max_idle=0"),
        "--set goal.continuation.max_idle: expected an integer >= 1, got \"0\""
    );
    assert_eq!(
        set("goal.continuation.max_idle=1")
            .unwrap()
            .goal
            .continuation
            .max_idle,
        1
    );
    assert_eq!(set("todo.reminders.max=0").unwrap().todo.reminders.max, 0);
}

#[test]
fn bad_enum_values() {
    assert_eq!(
        file_err("todo.eager = \"sometimes\""),
        "settings file /x/config.toml: todo.eager: expected \"default\", \"preferred\" or \
         \"always\" (or the legacy true or false), got \"sometimes\""
    );
    assert_eq!(
        set_err("todo.context.inactive_tool=readonly"),
        "--set todo.context.inactive_tool: expected \"omit\" or \"read-only\", got \"readonly\""
    );
    // Names are exact.
    assert_eq!(
        set_err("todo.eager=Always"),
        "--set todo.eager: expected \"default\", \"preferred\" or \"always\" (or the legacy \
         true or false), got \"Always\""
    );
}

#[test]
fn set_without_equals() {
    assert_eq!(
        set_err("todo.enabled"),
        "--set \"todo.enabled\": expected KEY=VALUE, e.g. --set todo.eager=always"
    );
}

#[test]
fn a_failed_set_changes_nothing() {
    let mut settings = set("todo.reminders.max=5").unwrap();
    let before = settings.clone();
    assert!(settings.apply_set("todo.reminders.max=-1").is_err());
    assert!(settings.apply_set("nope=1").is_err());
    assert!(settings.apply_set("nope").is_err());
    assert_eq!(settings, before);
}

#[test]
fn malformed_toml() {
    assert_eq!(
        file_err("[todo]\nenabled = \n"),
        "settings file /x/config.toml: invalid TOML at line 2, column 11: string values must \
         be quoted, expected literal string"
    );
    assert_eq!(
        file_err("[todo\n"),
        "settings file /x/config.toml: invalid TOML at line 1, column 6: unclosed table, \
         expected `]`"
    );
    assert_eq!(
        file_err("todo.eager = always\n"),
        "settings file /x/config.toml: invalid TOML at line 1, column 14: string values must \
         be quoted, expected literal string"
    );
}

#[test]
fn several_bad_keys_are_reported_together() {
    let text = "
[todo]
enbled = true
eager = \"sometimes\"
reminders.max = -1

[goal]
enable = false
continuation.max_idle = 0
";
    assert_eq!(
        file_err(text),
        format!(
            "settings file /x/config.toml: goal.continuation.max_idle: expected an integer \
             >= 1, got 0; unknown keys \"goal.enable\", \"todo.enbled\"; todo.eager: expected \
             \"default\", \"preferred\" or \"always\" (or the legacy true or false), got \
             \"sometimes\"; todo.reminders.max: expected an integer >= 0, \
             got -1; {KNOWN}"
        )
    );
}

#[test]
fn file_and_set_problems_are_reported_together() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.toml");
    std::fs::write(&path, "todo.enbled = true\n").unwrap();
    let shown = path.display();
    let result = Settings::load_from(
        Some(&flag(&path)),
        &sets(&[
            "goal.enabled=maybe",
            "todo.eager",
            "goal.x=1",
            "todo.enabled=false",
        ]),
    );
    assert_eq!(
        usage(result),
        format!(
            "settings file {shown}: unknown key \"todo.enbled\"; --set goal.enabled: expected \
             true or false, got \"maybe\"; --set \"todo.eager\": expected KEY=VALUE, e.g. --set \
             todo.eager=always; --set: unknown key \"goal.x\"; {KNOWN}"
        )
    );
}
