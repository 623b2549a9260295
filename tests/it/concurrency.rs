//! Real processes racing on one database: every command is one immediate
//! transaction, so no update is lost and no busy error reaches the caller.

use crate::common;

use std::thread;

use common::TestEnv;

#[test]
fn eight_processes_appending_lose_nothing() {
    const PROCESSES: usize = 8;
    const CALLS: usize = 100;
    let env = TestEnv::new();
    let env = &env;
    thread::scope(|scope| {
        for worker in 0..PROCESSES {
            scope.spawn(move || {
                for call in 0..CALLS {
                    let json = format!(
                        r#"{{"op":"append","phase":"Work","items":["worker {worker} call {call}"]}}"#
                    );
                    let output = env
                        .cmd(&["todo", "apply", &json])
                        .output()
                        .expect("run goalkeeper");
                    assert!(
                        output.status.success() && output.stderr.is_empty(),
                        "worker {worker} call {call} failed: {}",
                        common::render(&["todo", "apply", &json], &output)
                    );
                }
            });
        }
    });
    let view = env.ok(&["--json", "todo", "apply", r#"{"op":"view"}"#]);
    let result: serde_json::Value = serde_json::from_str(&view).unwrap();
    let tasks = result["details"]["phases"][0]["tasks"].as_array().unwrap();
    assert_eq!(tasks.len(), PROCESSES * CALLS);
    assert_eq!(result["details"]["version"], (PROCESSES * CALLS) as i64);
    for worker in 0..PROCESSES {
        // Each worker's calls landed in its own order.
        let mine: Vec<&str> = tasks
            .iter()
            .filter_map(|t| t["content"].as_str())
            .filter(|c| c.starts_with(&format!("worker {worker} ")))
            .collect();
        let expected: Vec<String> = (0..CALLS)
            .map(|call| format!("worker {worker} call {call}"))
            .collect();
        assert_eq!(mine, expected);
    }
    let log = env.ok(&["--json", "todo", "log", "--limit", "10000"]);
    let events: Vec<serde_json::Value> = serde_json::from_str(&log).unwrap();
    assert_eq!(events.len(), PROCESSES * CALLS);
    assert!(events.iter().all(|e| e["ok"] == true));
}

/// Processes racing to create and migrate a new database: none may mistake
/// the half-created file for another program's database.
#[test]
fn processes_racing_to_create_the_database_all_succeed() {
    const PROCESSES: usize = 12;
    for round in 0..5 {
        let env = TestEnv::new();
        let env = &env;
        let start = std::sync::Barrier::new(PROCESSES);
        let start = &start;
        thread::scope(|scope| {
            for worker in 0..PROCESSES {
                scope.spawn(move || {
                    let json = format!(
                        r#"{{"op":"append","phase":"P","items":["round {round} worker {worker}"]}}"#
                    );
                    let mut cmd = env.cmd(&["todo", "apply", &json]);
                    start.wait();
                    let output = cmd.output().expect("run goalkeeper");
                    assert!(
                        output.status.success(),
                        "round {round} worker {worker}: {}",
                        common::render(&["todo", "apply", &json], &output)
                    );
                });
            }
        });
        let view: serde_json::Value =
            serde_json::from_str(&env.ok(&["--json", "todo", "view"])).unwrap();
        assert_eq!(
            view["details"]["version"], PROCESSES as i64,
            "round {round}"
        );
    }
}
