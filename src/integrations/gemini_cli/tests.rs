//! The hook's parser and its bad-input paths, on hand-written events. The
//! proof that Gemini CLI sends and accepts these shapes is the real-host
//! suite (`tests/hosts/gemini_cli.rs`).

use serde_json::json;

use super::install::HOOK_EVENTS;
use super::*;
use crate::integrations::hook_fixture::{Fixture, NOW, event, event_dir, gk};

fn fixture() -> Fixture {
    Fixture::new(handle, "g-1", None)
}

#[test]
fn bad_input_prints_nothing_and_changes_nothing() {
    // A chat file that is not there: in a directory of the test's own.
    let dir = tempfile::tempdir().unwrap();
    let chat = dir.path().join("chat.jsonl").display().to_string();
    let after_agent = json!({"hook_event_name": "AfterAgent", "session_id": "g-1",
        "transcript_path": chat, "stop_hook_active": false})
    .to_string();
    let unreadable = format!(
        "cannot read the chat file {chat}: No such file or directory (os error 2); usage not counted"
    );
    let stdouts = fixture().each_ignored(&[
        (
            "not json",
            "hook input is not JSON (expected ident at line 1 column 2); ignored",
        ),
        (
            r#"{"hook_event_name": "BeforeModel"}"#,
            r#"hook event "BeforeModel" has no session_id; ignored"#,
        ),
        (
            r#"{"hook_event_name": "AfterAgent", "session_id": "bad id!"}"#,
            "invalid session id \"bad id!\": use 1-128 characters from A-Z, a-z, 0-9, '.', '_', ':' and '-'; ignored",
        ),
        (
            r#"{"hook_event_name": "BeforeModel", "session_id": "g-1", "llm_request": {}}"#,
            "BeforeModel event has no llm_request.messages; nothing added",
        ),
        (&after_agent, &unreadable),
        (
            r#"{"hook_event_name": "Notification", "session_id": "g-1"}"#,
            r#"hook event "Notification" is not handled; ignored"#,
        ),
    ]);
    // The AfterAgent with an unreadable chat file still continues the goal
    // (the usage waits for a later event); nothing else printed.
    for (i, stdout) in stdouts.iter().enumerate() {
        assert_eq!(stdout.is_some(), i == 4, "case {i}: {stdout:?}");
    }
}

#[test]
fn before_model_appends_the_context_as_the_last_user_message() {
    let mut fx = fixture();
    let reply = fx.send(&event(
        "BeforeModel",
        "g-1",
        json!({"llm_request": {"model": "m", "messages": [{"role": "user", "content": "hi"}]}}),
    ));
    assert!(reply.notes.is_empty(), "{:?}", reply.notes);
    let out = reply.stdout.unwrap();
    let messages = out["hookSpecificOutput"]["llm_request"]["messages"]
        .as_array()
        .unwrap();
    assert_eq!(messages.len(), 2);
    assert_eq!(messages[0], json!({"role": "user", "content": "hi"}));
    let context = messages[1]["content"].as_str().unwrap();
    assert!(context.starts_with("<goal>\n"), "{context}");
    assert!(context.ends_with("</todo_context>"), "{context}");
    assert_eq!(
        fx.store
            .admin()
            .pointer(&format!("gemini-cli:{}", event_dir()))
            .unwrap()
            .as_deref(),
        Some("g-1")
    );
}

#[test]
fn install_keeps_the_users_settings_and_runs_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(".gemini/settings.json");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(
        &path,
        r#"{"theme": "Dracula", "hooks": {"BeforeAgent": [{"hooks": [{"type": "command", "command": "mine"}]}]}}"#,
    )
    .unwrap();
    let report = install_gemini_cli(dir.path(), &gk(), NOW).unwrap();
    assert!(report.files[0].written);
    assert!(report.files[0].backup.as_ref().unwrap().exists());
    let settings: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(settings["theme"], "Dracula");
    assert_eq!(
        settings["mcpServers"]["goalkeeper"],
        json!({"command": "gk", "args": ["mcp", "--session-from", "gemini-cli"], "trust": true})
    );
    let before_agent = settings["hooks"]["BeforeAgent"].as_array().unwrap();
    assert_eq!(before_agent.len(), 2, "the user's hook is kept");
    assert_eq!(
        settings["hooks"]["BeforeTool"],
        json!([{"matcher": "mcp_goalkeeper_goal", "hooks": [{"type": "command", "name": "goalkeeper", "command": "gk hook gemini-cli", "timeout": 30000}]}])
    );
    for (event, _) in HOOK_EVENTS {
        assert!(settings["hooks"][event].is_array(), "{event}");
    }
    let again = install_gemini_cli(dir.path(), &gk(), NOW + 1000).unwrap();
    assert!(!again.files[0].written, "{:?}", again.files[0]);
}

#[test]
fn install_refuses_a_settings_file_it_cannot_read_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(".gemini/settings.json");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    for (text, error) in [
        (
            "[1]",
            format!(
                "{} is not a JSON object; fix or move it, then install again (nothing was changed)",
                path.display()
            ),
        ),
        (
            r#"{"hooks": []}"#,
            format!(
                "`hooks` in {} is not an object; fix it, then install again (nothing was changed)",
                path.display()
            ),
        ),
        (
            r#"{"hooks": {"AfterAgent": {}}}"#,
            format!(
                "`hooks.AfterAgent` in {} is not a list; fix it, then install again (nothing was changed)",
                path.display()
            ),
        ),
    ] {
        std::fs::write(&path, text).unwrap();
        let e = install_gemini_cli(dir.path(), &gk(), NOW).unwrap_err();
        assert_eq!(e.to_string(), error);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
        assert_eq!(
            std::fs::read_dir(path.parent().unwrap()).unwrap().count(),
            1,
            "no backup, no temporary file"
        );
    }
}

/// The user policy is written once (a second run changes nothing), an
/// older one of goalkeeper's is replaced with a backup, and a file of
/// that name the user wrote is refused with the rule to add, unchanged.
#[test]
fn the_user_policy_is_goalkeepers_file_or_refused() {
    let dir = tempfile::tempdir().unwrap();
    let gemini = dir.path().join(".gemini");
    let report = super::install_user_policy(&gemini, NOW).unwrap();
    assert!(report.files[0].written);
    let path = gemini.join(super::POLICY_PATH);
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text, super::user_policy());
    let policy: toml::Table = toml::from_str(&text).unwrap();
    let rule = &policy["rule"].as_array().unwrap()[0];
    assert_eq!(
        (
            rule["mcpName"].as_str(),
            rule["toolName"].as_str(),
            rule["decision"].as_str()
        ),
        (Some("goalkeeper"), Some("*"), Some("allow"))
    );
    assert!(!super::install_user_policy(&gemini, NOW + 1).unwrap().files[0].written);

    let older = text.replace("priority = 100", "priority = 50");
    std::fs::write(&path, &older).unwrap();
    let report = super::install_user_policy(&gemini, NOW + 2).unwrap();
    let backup = report.files[0].backup.clone().expect("a backup");
    assert_eq!(std::fs::read_to_string(backup).unwrap(), older);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), text);

    let mine =
        "[[rule]]\ntoolName = \"run_shell_command\"\ndecision = \"ask_user\"\npriority = 1\n";
    std::fs::write(&path, mine).unwrap();
    let files = std::fs::read_dir(path.parent().unwrap()).unwrap().count();
    let e = super::install_user_policy(&gemini, NOW + 3)
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with(&format!(
            "{} exists and was not written by goalkeeper; add this rule to it yourself",
            path.display()
        )) && e.ends_with("decision = \"allow\"\npriority = 100"),
        "{e}"
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), mine);
    assert_eq!(
        std::fs::read_dir(path.parent().unwrap()).unwrap().count(),
        files
    );
}
