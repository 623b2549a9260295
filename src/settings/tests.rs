use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::error::{Error, ErrorKind};

use super::file::{expand_home, platform_config_file};
use super::*;

const KNOWN: &str = "known keys: todo.enabled, todo.eager, todo.reminders, todo.reminders.max, \
                     todo.context.inactive_tool, todo.context.max_tasks, goal.enabled, \
                     goal.continuation.max_idle, prompts.dir, memory.file, system_prompt.base";

const ORIGIN: &str = "/x/config.toml";

fn file(text: &str) -> Result<Settings> {
    Settings::from_toml(text, Path::new(ORIGIN))
}

fn usage(result: Result<Settings>) -> String {
    match result {
        Err(error @ Error::Usage(_)) => error.to_string(),
        other => panic!("expected a usage error, got {other:?}"),
    }
}

fn file_err(text: &str) -> String {
    usage(file(text))
}

fn set(assignment: &str) -> Result<Settings> {
    let mut settings = Settings::default();
    settings.apply_set(assignment).map(|()| settings)
}

fn set_err(assignment: &str) -> String {
    usage(set(assignment))
}

fn sets(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| (*s).to_owned()).collect()
}

fn flag(path: &Path) -> ConfigFile {
    ConfigFile {
        path: path.to_owned(),
        source: ConfigSource::Flag,
    }
}

fn cwd() -> PathBuf {
    std::env::current_dir().unwrap()
}

/// Every key away from its default, as a file would write them.
const EVERY_KEY: &str = r#"
[todo]
enabled = false
eager = "preferred"

[todo.reminders]
enabled = false
max = 7

[todo.context]
inactive_tool = "read-only"
max_tasks = 12

[goal]
enabled = false
continuation.max_idle = 5

[prompts]
dir = "/etc/goalkeeper/prompts"

[memory]
file = "/home/me/memory.md"

[system_prompt]
base = "/home/me/base.md"
"#;

fn every_key_changed() -> Settings {
    Settings {
        todo: TodoSettings {
            enabled: false,
            eager: Eager::Preferred,
            reminders: ReminderSettings {
                enabled: false,
                max: 7,
            },
            context: TodoContextSettings {
                inactive_tool: InactiveTool::ReadOnly,
                max_tasks: 12,
            },
        },
        goal: GoalSettings {
            enabled: false,
            continuation: ContinuationSettings { max_idle: 5 },
        },
        prompts: PromptSettings {
            dir: Some("/etc/goalkeeper/prompts".into()),
        },
        memory: MemorySettings {
            file: Some("/home/me/memory.md".into()),
        },
        system_prompt: SystemPromptSettings {
            base: Some("/home/me/base.md".into()),
        },
    }
}

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
"goal.enabled" = false
"goal.continuation.max_idle" = 5
"prompts.dir" = "/etc/goalkeeper/prompts"
"memory.file" = "/home/me/memory.md"
"system_prompt.base" = "/home/me/base.md"
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
        "goal.enabled=false",
        "goal.continuation.max_idle=5",
        "prompts.dir=/etc/goalkeeper/prompts",
        "memory.file=/home/me/memory.md",
        "system_prompt.base=/home/me/base.md",
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

// ---- errors, one by one ----

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

// ---- files ----

#[test]
fn a_named_file_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.toml");
    std::fs::write(&path, EVERY_KEY).unwrap();
    assert_eq!(
        Settings::load_from(Some(&flag(&path)), &[]).unwrap(),
        every_key_changed()
    );
}

#[test]
fn a_missing_named_file_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("missing.toml");
    let shown = path.display();
    assert_eq!(
        usage(Settings::load_from(Some(&flag(&path)), &[])),
        format!(
            "settings file {shown} (named by --config) does not exist; create it or name \
             another file"
        )
    );
    let env = ConfigFile {
        path: path.clone(),
        source: ConfigSource::Env,
    };
    assert_eq!(
        usage(Settings::load_from(Some(&env), &[])),
        format!(
            "settings file {shown} (named by $GOALKEEPER_CONFIG) does not exist; create it or \
             name another file"
        )
    );
}

#[test]
fn a_missing_platform_file_means_defaults() {
    let dir = tempfile::tempdir().unwrap();
    let platform = ConfigFile {
        path: dir.path().join("goalkeeper").join("config.toml"),
        source: ConfigSource::Platform,
    };
    let settings = Settings::load_from(Some(&platform), &sets(&["todo.enabled=false"])).unwrap();
    assert_eq!(settings, set("todo.enabled=false").unwrap());
}

#[test]
fn an_unreadable_file_is_an_io_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.toml");
    // Not UTF-8; unlike a mode-0 file this cannot be read even as root.
    std::fs::write(&path, b"todo.enabled = \xff\xfe\n").unwrap();
    let error = Settings::load_from(Some(&flag(&path)), &[]).unwrap_err();
    assert!(matches!(error, Error::Io { .. }), "{error:?}");
    assert_eq!(error.kind(), ErrorKind::Storage);
    assert_eq!(
        error.to_string(),
        format!(
            "cannot read settings file {}: stream did not contain valid UTF-8",
            path.display()
        )
    );
}

#[test]
fn a_directory_is_not_a_settings_file() {
    let dir = tempfile::tempdir().unwrap();
    let shown = dir.path().display();
    assert_eq!(
        usage(Settings::load_from(Some(&flag(dir.path())), &[])),
        format!(
            "settings file {shown} (named by --config) is a directory; give the path of a \
             TOML file, e.g. {shown}/config.toml"
        )
    );
}

#[test]
fn the_file_is_located_by_flag_then_env_then_platform() {
    let platform = Some(PathBuf::from("/home/me/.config/goalkeeper/config.toml"));
    let located = |config: Option<&str>, env: Option<&str>| {
        ConfigFile::locate_with(
            config.map(Path::new),
            env.map(OsString::from),
            platform.clone(),
        )
        .map(|file| (file.path, file.source))
    };
    assert_eq!(
        located(Some("/a.toml"), Some("/b.toml")),
        Some(("/a.toml".into(), ConfigSource::Flag))
    );
    assert_eq!(
        located(None, Some("/b.toml")),
        Some(("/b.toml".into(), ConfigSource::Env))
    );
    assert_eq!(
        located(None, Some("")),
        Some((platform.clone().unwrap(), ConfigSource::Platform))
    );
    assert_eq!(
        located(None, None),
        Some((platform.clone().unwrap(), ConfigSource::Platform))
    );
    assert_eq!(ConfigFile::locate_with(None, None, None), None);
}

#[test]
fn the_platform_file_is_config_toml_in_the_goalkeeper_config_dir() {
    if let Some(path) = platform_config_file() {
        assert!(path.ends_with("config.toml"), "{}", path.display());
        assert!(path.is_absolute(), "{}", path.display());
    }
}

// ---- paths ----

#[test]
fn relative_paths_in_a_file_resolve_against_its_directory() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.toml");
    std::fs::write(
        &path,
        "prompts.dir = \"prompts\"\nmemory.file = \"../memory.md\"\n\
         system_prompt.base = \"/abs/base.md\"\n",
    )
    .unwrap();
    let settings = Settings::load_from(Some(&flag(&path)), &[]).unwrap();
    assert_eq!(settings.prompts.dir, Some(dir.path().join("prompts")));
    assert_eq!(settings.memory.file, Some(dir.path().join("../memory.md")));
    assert_eq!(settings.system_prompt.base, Some("/abs/base.md".into()));
}

#[test]
fn relative_paths_in_from_toml_resolve_against_the_origin_directory() {
    let settings = file("prompts.dir = \"p\"").unwrap();
    assert_eq!(settings.prompts.dir, Some(PathBuf::from("/x/p")));
}

#[test]
fn relative_paths_from_set_resolve_against_the_current_directory() {
    let settings = set("prompts.dir=my/prompts").unwrap();
    assert_eq!(settings.prompts.dir, Some(cwd().join("my/prompts")));
    let settings = set("system_prompt.base=./base.md").unwrap();
    assert_eq!(settings.system_prompt.base, Some(cwd().join("base.md")));
}

#[test]
fn an_empty_path_clears_it() {
    let mut settings = file("prompts.dir = \"/p\"").unwrap();
    settings.apply_set("prompts.dir=").unwrap();
    assert_eq!(settings.prompts.dir, None);
    assert_eq!(file("memory.file = \"\"").unwrap().memory.file, None);
}

#[test]
fn a_leading_tilde_is_the_home_directory() {
    let home = || Some(PathBuf::from("/home/me"));
    assert_eq!(expand_home(Path::new("~"), home), PathBuf::from("/home/me"));
    assert_eq!(
        expand_home(Path::new("~/notes/m.md"), home),
        PathBuf::from("/home/me/notes/m.md")
    );
    assert_eq!(
        expand_home(Path::new("~bob/m.md"), home),
        PathBuf::from("~bob/m.md")
    );
    assert_eq!(
        expand_home(Path::new("a/~/b"), home),
        PathBuf::from("a/~/b")
    );
    assert_eq!(
        expand_home(Path::new("~/m.md"), || None),
        PathBuf::from("~/m.md")
    );
}

// ---- listing and JSON ----

#[test]
fn keys_list_every_key_with_value_type_and_default() {
    let settings = set("todo.eager=always").unwrap();
    let keys = settings.keys();
    let names: Vec<&str> = keys.iter().map(|k| k.key).collect();
    assert_eq!(names, Settings::key_names().collect::<Vec<_>>());
    assert_eq!(format!("known keys: {}", names.join(", ")), KNOWN);
    let eager = &keys[1];
    assert_eq!(eager.key, "todo.eager");
    assert_eq!(eager.kind, "default | preferred | always");
    assert_eq!(eager.value.as_deref(), Some("\"always\""));
    assert_eq!(eager.default.as_deref(), Some("\"default\""));
    let rows: Vec<String> = Settings::default()
        .keys()
        .iter()
        .map(|k| format!("{} = {:?} ({})", k.key, k.value, k.kind))
        .collect();
    assert_eq!(
        rows,
        [
            "todo.enabled = Some(\"true\") (bool)",
            "todo.eager = Some(\"\\\"default\\\"\") (default | preferred | always)",
            "todo.reminders = Some(\"true\") (bool)",
            "todo.reminders.max = Some(\"3\") (int >= 0)",
            "todo.context.inactive_tool = Some(\"\\\"omit\\\"\") (omit | read-only)",
            "todo.context.max_tasks = Some(\"200\") (int >= 0)",
            "goal.enabled = Some(\"true\") (bool)",
            "goal.continuation.max_idle = Some(\"3\") (int >= 1)",
            "prompts.dir = None (path)",
            "memory.file = None (path)",
            "system_prompt.base = None (path)",
        ]
    );
    assert!(keys.iter().all(|k| !k.about.is_empty()));
}

#[test]
fn listed_values_read_back_as_the_same_settings() {
    let original = file(EVERY_KEY).unwrap();
    let text: String = original
        .keys()
        .iter()
        .filter_map(|k| k.value.as_ref().map(|v| format!("\"{}\" = {v}\n", k.key)))
        .collect();
    assert_eq!(file(&text).unwrap(), original);
}

#[test]
fn listed_paths_are_toml_strings() {
    let settings = set(r#"prompts.dir="/tmp/a \"b\" \\ c""#).unwrap();
    assert_eq!(
        settings.keys()[8].value.as_deref(),
        Some(r#""/tmp/a \"b\" \\ c""#)
    );
}

#[test]
fn settings_serialize_as_nested_json() {
    let json = serde_json::to_value(file(EVERY_KEY).unwrap()).unwrap();
    assert_eq!(
        json,
        serde_json::json!({
            "todo": {
                "enabled": false,
                "eager": "preferred",
                "reminders": {"enabled": false, "max": 7},
                "context": {"inactive_tool": "read-only", "max_tasks": 12}
            },
            "goal": {"enabled": false, "continuation": {"max_idle": 5}},
            "prompts": {"dir": "/etc/goalkeeper/prompts"},
            "memory": {"file": "/home/me/memory.md"},
            "system_prompt": {"base": "/home/me/base.md"}
        })
    );
    let defaults = serde_json::to_value(Settings::default()).unwrap();
    assert_eq!(defaults["prompts"]["dir"], serde_json::Value::Null);
    assert_eq!(defaults["todo"]["eager"], "default");
    assert_eq!(defaults["todo"]["context"]["inactive_tool"], "omit");
}
