//! The event handler's bad-input paths and replies on hand-written events,
//! and the installer. The proof that pi runs the extension and sends these
//! events is the real-host suite (`tests/hosts/pi.rs`).

use serde_json::json;

use super::*;
use crate::todo::Call;
use crate::{SessionId, Settings};

const NOW: i64 = 1_764_441_600_000;

fn setup() -> (Store, Injector, SessionId) {
    let mut store = Store::open_in_memory().unwrap();
    let session = SessionId::parse("p-1").unwrap();
    store
        .goal(
            &session,
            GoalCall::Op(&GoalOp::Set {
                objective: "Ship it".into(),
                budget: Some(1000),
            }),
            Actor::User,
            NOW,
        )
        .unwrap();
    store
        .todo(
            &session,
            Call::Json(r#"{"op": "init", "items": ["A"]}"#),
            Actor::Agent,
            NOW,
        )
        .unwrap();
    (
        store,
        Injector::from_settings(Settings::default()).unwrap(),
        session,
    )
}

fn state(store: &mut Store, session: &SessionId) -> String {
    let (list, version) = store.todo_list(session).unwrap();
    let goal = store.current_goal(session).unwrap();
    format!("{list:?} {version} {goal:?}")
}

#[test]
fn bad_input_prints_nothing_and_changes_nothing() {
    let (mut store, injector, session) = setup();
    let before = state(&mut store, &session);
    let cases = [
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
    ];
    for (input, note) in cases {
        let reply = handle(&mut store, &injector, input, NOW);
        assert_eq!(reply.notes, [note], "{input}");
        assert_eq!(reply.stdout, None, "{input}");
    }
    assert_eq!(before, state(&mut store, &session));
}

#[test]
fn usage_counts_and_the_wrap_up_comes_once() {
    let (mut store, injector, session) = setup();
    let event = |name: &str, extra: serde_json::Value| {
        let mut e = json!({"hook_event_name": name, "session_id": "p-1", "cwd": "/p"});
        e.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        e.to_string()
    };
    let usage =
        json!({"usage": {"input": 900, "output": 200, "cache_read": 5000, "cache_write": 0}});
    assert_eq!(
        handle(&mut store, &injector, &event("MessageEnd", usage), NOW).stdout,
        None
    );
    let goal = store.current_goal(&session).unwrap().unwrap();
    assert_eq!(
        (goal.tokens_used, goal.status.as_str()),
        (1100, "budget-limited")
    );
    let first = handle(&mut store, &injector, &event("TurnEnd", json!({})), NOW)
        .stdout
        .unwrap();
    assert_eq!(first["followUp"]["customType"], "goal-budget-limit");
    // Then a quiet stop: no continuation, no reminder, no context.
    assert_eq!(
        handle(&mut store, &injector, &event("TurnEnd", json!({})), NOW).stdout,
        None
    );
    assert_eq!(
        handle(&mut store, &injector, &event("Context", json!({})), NOW).stdout,
        None
    );
    assert_eq!(store.pointer("pi:/p").unwrap().as_deref(), Some("p-1"));
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
        text.contains(r#"const GOALKEEPER: string = "/opt/gk \"x\"";"#),
        "{text}"
    );
    assert!(text.contains(r#""name": "todo""#) && text.contains(r#""name": "goal""#));
    assert!(!text.contains("const TOOLS: ToolSpec[] = [];"));
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
