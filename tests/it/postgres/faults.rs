//! The server going away under running clients: stopped mid-run (fast
//! shutdown ends every session), then started again. CLI writers get a
//! clear error with exit 3 and nothing half-written, hooks stay silent and
//! exit 0, the next command after the restart works; the MCP server
//! answers a tool error while the server is down (never an acknowledged
//! write it could not commit) and reconnects by itself afterwards.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::json;

use crate::common::pg::{Cluster, PASSWORD};
use crate::common::{TestEnv, render};
use crate::mcp::{Server, is_error, text};

fn append(item: &str) -> String {
    json!({"op": "append", "phase": "Work", "items": [item]}).to_string()
}

/// Task contents in list order, the version, and the todo event versions.
fn state(admin: &mut postgres::Client, session: &str) -> (Vec<String>, i64, Vec<i64>) {
    let tasks = admin
        .query(
            "SELECT content FROM tasks WHERE session_id = $1 ORDER BY phase_pos, pos",
            &[&session],
        )
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    let version = admin
        .query_opt(
            "SELECT todo_version FROM sessions WHERE id = $1",
            &[&session],
        )
        .unwrap()
        .map_or(0, |r| r.get(0));
    let versions = admin
        .query(
            "SELECT version FROM events WHERE session_id = $1 AND kind = 'todo' ORDER BY id",
            &[&session],
        )
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    (tasks, version, versions)
}

#[test]
fn writers_survive_a_server_stopped_mid_run_and_restarted() {
    const WRITERS: usize = 4;
    let cluster = Cluster::start();
    let db = cluster.database();
    let env = TestEnv::on(&db.url());
    let stop = AtomicBool::new(false);
    let acked = Mutex::new(Vec::<String>::new());
    let failed = Mutex::new(Vec::<String>::new());
    std::thread::scope(|scope| {
        for w in 0..WRITERS {
            let (env, stop, acked, failed) = (&env, &stop, &acked, &failed);
            scope.spawn(move || {
                let mut n = 0;
                while !stop.load(Ordering::Relaxed) && n < 400 {
                    n += 1;
                    let item = format!("w{w} n{n}");
                    let args = ["--session", "s", "todo", "apply", &append(&item)];
                    let output = env.cmd(&args).output().unwrap();
                    let shown = render(&args, &output);
                    assert!(!shown.contains(PASSWORD), "the password leaked:\n{shown}");
                    match output.status.code() {
                        Some(0) => acked.lock().unwrap().push(item),
                        Some(3) => {
                            let stderr = String::from_utf8_lossy(&output.stderr);
                            assert!(stderr.contains("PostgreSQL"), "{shown}");
                            assert!(output.stdout.is_empty(), "{shown}");
                            failed.lock().unwrap().push(stderr.into_owned());
                        }
                        _ => panic!("neither done nor a storage error:\n{shown}"),
                    }
                }
            });
        }
        std::thread::sleep(Duration::from_millis(1500));
        cluster.stop();
        // Down: a command fails clearly, a hook stays silent.
        let down = env
            .cmd(&["--session", "s", "todo", "view"])
            .output()
            .unwrap();
        let shown = render(&["todo", "view"], &down);
        assert_eq!(down.status.code(), Some(3), "{shown}");
        assert!(
            String::from_utf8_lossy(&down.stderr).contains("cannot connect to PostgreSQL"),
            "{shown}"
        );
        assert!(!shown.contains(PASSWORD), "{shown}");
        let hook = env
            .cmd(&["hook", "claude-code"])
            .write_stdin(
                r#"{"hook_event_name":"UserPromptSubmit","session_id":"s","prompt":"hi","cwd":"."}"#,
            )
            .output()
            .unwrap();
        let shown = render(&["hook", "claude-code"], &hook);
        assert_eq!(hook.status.code(), Some(0), "{shown}");
        assert!(hook.stdout.is_empty(), "{shown}");
        assert!(!shown.contains(PASSWORD), "{shown}");
        std::thread::sleep(Duration::from_millis(500));
        cluster.restart();
        std::thread::sleep(Duration::from_millis(1500));
        stop.store(true, Ordering::Relaxed);
    });
    let acked = acked.into_inner().unwrap();
    let failed = failed.into_inner().unwrap();
    assert!(!failed.is_empty(), "no writer saw the server down");
    let mut admin = db.admin();
    let leaked: i64 = admin
        .query_one(
            "SELECT count(*) FROM events WHERE strpos(payload, $1) > 0 OR strpos(coalesce(error, ''), $1) > 0",
            &[&PASSWORD],
        )
        .unwrap()
        .get(0);
    assert_eq!(leaked, 0, "the password is in the event log");
    let (tasks, version, versions) = state(&mut admin, "s");
    for item in &acked {
        assert!(tasks.contains(item), "acknowledged {item} is missing");
    }
    // A failed call may have committed just before the connection went
    // (its COMMIT reply lost): then it is whole. Nothing is half-written.
    assert!(tasks.len() >= acked.len() && tasks.len() <= acked.len() + failed.len());
    assert_eq!(version, tasks.len() as i64);
    assert_eq!(versions, (1..=version).collect::<Vec<_>>());
    // Writes went on after the restart.
    let after = env.ok(&["--session", "s", "--json", "todo", "view"]);
    let view: serde_json::Value = serde_json::from_str(&after).unwrap();
    assert_eq!(view["details"]["version"], version);
    eprintln!(
        "postgres faults: {} acknowledged, {} failed while the server was down",
        acked.len(),
        failed.len()
    );
}

#[test]
fn the_mcp_server_reconnects_and_never_acknowledges_a_write_it_could_not_commit() {
    let cluster = Cluster::start();
    let db = cluster.database();
    let env = TestEnv::on(&db.url());
    let mut server = Server::start(&env, "m");
    let first = server.call(
        "todo",
        json!({"op": "append", "phase": "Work", "items": ["before"]}),
    );
    assert!(!is_error(&first), "{first}");
    cluster.stop();
    let down = server.call(
        "todo",
        json!({"op": "append", "phase": "Work", "items": ["while down"]}),
    );
    assert!(
        is_error(&down),
        "a write the server could not commit: {down}"
    );
    let said = text(&down);
    assert!(said.contains("PostgreSQL"), "{said}");
    assert!(!said.contains(PASSWORD), "{said}");
    cluster.restart();
    let after = server.call(
        "todo",
        json!({"op": "append", "phase": "Work", "items": ["after"]}),
    );
    assert!(!is_error(&after), "the server did not reconnect: {after}");
    let (tasks, version, versions) = state(&mut db.admin(), "m");
    assert_eq!(tasks, ["before", "after"]);
    assert_eq!(version, 2);
    assert_eq!(versions, [1, 2]);
    let stderr = server.stop();
    assert!(!stderr.contains(PASSWORD), "{stderr}");
    assert!(stderr.ends_with("[exit status: 0]"), "{stderr}");
}
