//! `settings` listing and JSON.

use super::*;

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
            "todo.claim.lease = Some(\"600\") (int >= 1)",
            "goal.enabled = Some(\"true\") (bool)",
            "goal.continuation.max_idle = Some(\"3\") (int >= 1)",
            "prompts.dir = None (path)",
            "memory.file = None (path)",
            "system_prompt.base = None (path)",
            "postgres.connect.retry = Some(\"30\") (int >= 0)",
            "verify.timeout = Some(\"600\") (int >= 1)",
            "verify.tail = Some(\"4096\") (int >= 1)",
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
        settings.keys()[9].value.as_deref(),
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
                "context": {"inactive_tool": "read-only", "max_tasks": 12},
                "claim": {"lease": 90}
            },
            "goal": {"enabled": false, "continuation": {"max_idle": 5}},
            "prompts": {"dir": "/etc/goalkeeper/prompts"},
            "memory": {"file": "/home/me/memory.md"},
            "system_prompt": {"base": "/home/me/base.md"},
            "postgres": {"connect": {"retry": 5}},
            "verify": {"timeout": 30, "tail": 100}
        })
    );
    let defaults = serde_json::to_value(Settings::default()).unwrap();
    assert_eq!(defaults["prompts"]["dir"], serde_json::Value::Null);
    assert_eq!(defaults["todo"]["eager"], "default");
    assert_eq!(defaults["todo"]["context"]["inactive_tool"], "omit");
}
