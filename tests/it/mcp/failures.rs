//! A server that cannot do its work: a damaged list is an error result
//! and a line on stderr, a bad database stops it before it serves.

use std::path::Path;
use std::time::Duration;

use serde_json::json;

use super::{Server, is_error, text};
use crate::common::TestEnv;

#[test]
fn a_storage_failure_is_an_error_result_and_logged() {
    let env = TestEnv::new();
    let mut server = Server::start(&env, "s1");
    server.call("todo", json!({"op": "init", "items": ["A"]}));
    damage_todos(&env.db(), "s1");
    let result = server.call("todo", json!({"op": "view"}));
    assert!(is_error(&result));
    assert!(
        text(&result).starts_with("goalkeeper could not run the todo call: the stored"),
        "{}",
        text(&result)
    );
    // The server keeps serving.
    let goal = server.call("goal", json!({"op": "get"}));
    assert!(!is_error(&goal));
    let stderr = server.stop();
    assert!(
        stderr.starts_with("goalkeeper mcp: todo call failed: the stored"),
        "{stderr}"
    );
    assert!(stderr.ends_with("[exit status: 0]"), "{stderr}");
}

/// Overwrites a stored task of `session` with a status that does not exist.
fn damage_todos(db: &Path, session: &str) {
    let conn = rusqlite::Connection::open(db).expect("open the database");
    conn.busy_timeout(Duration::from_secs(10)).unwrap();
    let changed = conn
        .execute(
            "UPDATE tasks SET status = 'not a status' WHERE session_id = ?1",
            [session],
        )
        .expect("damage the list");
    assert_eq!(changed, 1);
}

#[test]
fn a_bad_database_fails_before_serving() {
    let env = TestEnv::new();
    std::fs::write(env.db(), "not a database").unwrap();
    let mut server = Server::spawn(&env, &["mcp"], &[]);
    let stderr = server.stop();
    assert!(
        stderr.starts_with("goalkeeper: ") && stderr.contains("is not a goalkeeper database"),
        "{stderr}"
    );
    assert!(stderr.ends_with("[exit status: 3]"), "{stderr}");
}
