//! The event handler's bad-input paths and replies on hand-written events,
//! and the installer. The proof that pi runs the extension and sends these
//! events is the real-host suite (`tests/hosts/pi.rs`).

use serde_json::json;

use super::install::EXTENSION_PATH;
use super::*;
use crate::integrations::hook_fixture::{Fixture, NOW, event, event_dir};

fn fixture() -> Fixture {
    Fixture::new(handle, "p-1", Some(1000))
}

#[test]
fn bad_input_prints_nothing_and_changes_nothing() {
    let stdouts = fixture().each_ignored(&[
        (
            "",
            "hook input is not JSON (EOF while parsing a value at line 1 column 0); ignored",
        ),
        (
            r#"{"hook_event_name": "Context"}"#,
            r#"hook event "Context" has no session_id; ignored"#,
        ),
        (
            r#"{"hook_event_name": "MessageEnd", "session_id": "p-1", "usage": {"input": -1, "output": 2}}"#,
            "MessageEnd event has no usage; nothing counted",
        ),
        (
            r#"{"hook_event_name": "MessageEnd", "session_id": "p-1"}"#,
            "MessageEnd event has no usage; nothing counted",
        ),
        (
            r#"{"hook_event_name": "Nope", "session_id": "p-1"}"#,
            r#"hook event "Nope" is not handled; ignored"#,
        ),
    ]);
    assert!(stdouts.iter().all(Option::is_none), "{stdouts:?}");
}

#[test]
fn usage_counts_and_the_wrap_up_comes_once() {
    let mut fx = fixture();
    let usage =
        json!({"usage": {"input": 900, "output": 200, "cache_read": 5000, "cache_write": 0}});
    assert_eq!(fx.send(&event("MessageEnd", "p-1", usage)).stdout, None);
    let goal = fx.store.read(&fx.session, |tx| tx.goal()).unwrap().unwrap();
    assert_eq!(
        (goal.tokens_used, goal.status.as_str()),
        (1100, "budget-limited")
    );
    let turn_end = event("TurnEnd", "p-1", json!({}));
    let first = fx.send(&turn_end).stdout.unwrap();
    assert_eq!(first["followUp"]["customType"], "goal-budget-limit");
    // Then a quiet stop: no continuation, no reminder, no context.
    assert_eq!(fx.send(&turn_end).stdout, None);
    assert_eq!(fx.send(&event("Context", "p-1", json!({}))).stdout, None);
    assert_eq!(
        fx.store
            .admin()
            .pointer(&format!("pi:{}", event_dir()))
            .unwrap()
            .as_deref(),
        Some("p-1")
    );
}

#[test]
fn install_fills_in_the_command_and_the_tools_and_refuses_a_foreign_file() {
    let dir = tempfile::tempdir().unwrap();
    let templates = crate::prompt::Templates::builtin();
    let report = install_pi(dir.path(), "/opt/gk \"x\"", &templates, NOW).unwrap();
    assert!(report.files[0].written);
    let path = dir.path().join(EXTENSION_PATH);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        text.contains(r#"const GOALKEEPER: string = findGoalkeeper("/opt/gk \"x\"");"#),
        "{text}"
    );
    assert!(text.contains(r#""name": "todo""#) && text.contains(r#""name": "goal""#));
    assert!(!text.contains("const TOOLS: ToolSpec[] = [];"));
    assert!(text.contains("const PLATFORM_PACKAGES: Record<string, string> = {};"));
    let again = install_pi(dir.path(), "/opt/gk \"x\"", &templates, NOW + 1000).unwrap();
    assert!(!again.files[0].written);

    let mine = "export default function () {}\n";
    std::fs::write(&path, mine).unwrap();
    let e = install_pi(dir.path(), "gk", &templates, NOW).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "{} exists and was not written by goalkeeper; move it away, then install again (nothing was changed)",
            path.display()
        )
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), mine);
    assert_eq!(
        std::fs::read_dir(path.parent().unwrap()).unwrap().count(),
        1
    );
}

/// The extension sets the variable verify reads for pi's session.
#[test]
fn the_extension_names_the_session_to_bash_by_the_variable_verify_reads() {
    let variable = crate::integrations::host_session::Host::Pi
        .shell_session_variable()
        .unwrap();
    assert!(
        super::install::EXTENSION.contains(&format!("const SESSION_VARIABLE = \"{variable}\";")),
        "{variable}"
    );
}
