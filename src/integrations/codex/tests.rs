//! The hook's parser and its bad-input paths on hand-written events, and
//! the installer's edits. The proof that Codex sends and accepts these
//! shapes is the real-host suite (`tests/hosts/codex.rs`).

use serde_json::json;

use super::install::{HOOK_EVENTS, HOOK_TIMEOUT_S, trusted_hash};
use super::*;
use crate::integrations::hook_fixture::{Fixture, NOW, event, gk};
use crate::todo::{Actor, Call};

fn fixture() -> Fixture {
    Fixture::new(handle, "c-1", None)
}

#[test]
fn bad_input_prints_nothing_and_changes_nothing() {
    let stdouts = fixture().each_ignored(&[
        (
            "[",
            "hook input is not JSON (EOF while parsing a list at line 1 column 1); ignored",
        ),
        (
            r#"{"hook_event_name": "Stop"}"#,
            r#"hook event "Stop" has no session_id; ignored"#,
        ),
        (
            r#"{"hook_event_name": "PreToolUse", "session_id": "c-1", "tool_name": "mcp__goalkeeper__goal", "transcript_path": "/nonexistent/rollout.jsonl"}"#,
            "cannot read the rollout file /nonexistent/rollout.jsonl: No such file or directory (os error 2); usage not counted",
        ),
        (
            r#"{"hook_event_name": "PreToolUse", "session_id": "c-1", "tool_name": "mcp__goalkeeper__goal"}"#,
            "event has no transcript_path; usage not counted",
        ),
        (
            r#"{"hook_event_name": "PermissionRequest", "session_id": "c-1"}"#,
            r#"hook event "PermissionRequest" is not handled; ignored"#,
        ),
    ]);
    assert!(stdouts.iter().all(Option::is_none), "{stdouts:?}");
}

#[test]
fn the_context_is_refreshed_after_a_goalkeeper_tool_only_when_it_changed() {
    let mut fx = fixture();
    let post = |tool: &str| event("PostToolUse", "c-1", json!({"tool_name": tool}));
    let [todo, _] = Host::Codex.model_tool_names();
    let first = fx.send(&post(todo));
    let context = first.stdout.unwrap()["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        context.starts_with("<goal>\n") && context.ends_with("</todo_context>"),
        "{context}"
    );
    // Unchanged: nothing again; another tool: nothing.
    assert_eq!(fx.send(&post(todo)).stdout, None);
    fx.store
        .todo(
            &fx.session,
            Call::Json(r#"{"op": "done", "task": "A"}"#),
            Actor::Agent,
            NOW,
        )
        .unwrap();
    assert_eq!(fx.send(&post("exec_command")).stdout, None);
    let changed = fx.send(&post(todo)).stdout.unwrap();
    assert!(
        changed.to_string().contains("Overall: 1/1 done, 0 open."),
        "{changed}"
    );
    assert_eq!(
        fx.store.pointer("codex:/p").unwrap().as_deref(),
        Some("c-1")
    );
}

#[test]
fn the_trust_hash_is_the_one_codex_computes() {
    // Computed by hand (sha256 of the compact, key-sorted JSON) for a hook
    // that Codex 0.169.0 was seen to run.
    let text = r#"{"event_name":"stop","hooks":[{"async":false,"command":"cat > /tmp/explore/c/ev-stop.json","timeout":600,"type":"command"}]}"#;
    let expected = {
        use sha2::{Digest, Sha256};
        let d = Sha256::digest(text.as_bytes());
        format!(
            "sha256:{}",
            d.iter().map(|b| format!("{b:02x}")).collect::<String>()
        )
    };
    assert_eq!(
        trusted_hash("stop", "cat > /tmp/explore/c/ev-stop.json", 600),
        expected
    );
    assert_eq!(
        expected,
        "sha256:cc971a321dbcbfc259f200012f3ae45f6ba384396f68eb84413aa80686f4eecc"
    );
}

#[test]
fn install_keeps_the_users_config_exactly_and_runs_once() {
    let dir = tempfile::tempdir().unwrap();
    let config = "# mine\nmodel = \"o3\"  # keep this comment\nwhen = 1979-05-27T07:32:00-08:00\npi = 3.14159265358979323846264338327950288\n\n[features]\ngoals = true\n\n[mcp_servers.other]\ncommand = \"x\"\n";
    std::fs::write(dir.path().join("config.toml"), config).unwrap();
    std::fs::write(
        dir.path().join("hooks.json"),
        r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "mine"}]}]}}"#,
    )
    .unwrap();
    let report = install_codex(dir.path(), &gk(), NOW).unwrap();
    assert!(
        report.files.iter().all(|f| f.written && f.backup.is_some()),
        "{report:?}"
    );
    let text = std::fs::read_to_string(dir.path().join("config.toml")).unwrap();
    assert!(
        text.starts_with(config),
        "the user's part is byte for byte:\n{text}"
    );
    let parsed: toml::Table = toml::from_str(&text).unwrap();
    assert_eq!(
        parsed["features"]["goals"].as_bool(),
        Some(true),
        "the user's choice is kept"
    );
    let server = &parsed["mcp_servers"]["goalkeeper"];
    assert_eq!(server["command"].as_str(), Some("gk"));
    assert_eq!(
        server["default_tools_approval_mode"].as_str(),
        Some("approve")
    );
    assert!(
        server["env_vars"]
            .as_array()
            .unwrap()
            .iter()
            .any(|v| v.as_str() == Some("GOALKEEPER_DB"))
    );
    let hooks_path = std::path::absolute(dir.path().join("hooks.json")).unwrap();
    let state = parsed["hooks"]["state"].as_table().unwrap();
    assert_eq!(state.len(), HOOK_EVENTS.len());
    // The user's Stop hook is group 0; goalkeeper's is group 1.
    let stop = &state[&format!("{}:stop:1:0", hooks_path.display())];
    assert_eq!(
        stop["trusted_hash"].as_str().unwrap(),
        trusted_hash("stop", "gk hook codex", HOOK_TIMEOUT_S)
    );
    let again = install_codex(dir.path(), &gk(), NOW + 1000).unwrap();
    assert!(again.files.iter().all(|f| !f.written), "{again:?}");
}

#[test]
fn install_refuses_files_it_cannot_read_and_writes_nothing() {
    for (config, hooks, error) in [
        ("model = ", "{}", "is not valid TOML (line 1, column 9: "),
        ("hooks = 3\n", "{}", "`hooks` in "),
        ("", "[]", "is not a JSON object"),
        ("", r#"{"hooks": {"Stop": 1}}"#, "`hooks.Stop` in "),
    ] {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("config.toml"), config).unwrap();
        std::fs::write(dir.path().join("hooks.json"), hooks).unwrap();
        let e = install_codex(dir.path(), &gk(), NOW)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(error) && e.ends_with("(nothing was changed)"),
            "{e}"
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("config.toml")).unwrap(),
            config
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("hooks.json")).unwrap(),
            hooks
        );
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            2,
            "no backup, no temporary file"
        );
    }
}
