//! The server or the pooler going away under running clients: stopped
//! mid-run (fast shutdown ends every session), then started again. CLI
//! writers get a clear error with exit 3 and nothing half-written, hooks
//! stay silent and exit 0, the next command after the restart works; a
//! long-lived MCP server answers a call made while the server or PgBouncer
//! restarts once it is back (never a lost call), and one that gives up
//! answers a tool error, never an acknowledged write it could not commit;
//! `watch` keeps its frame and goes on.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::json;

use crate::common::pg::{self, Cluster, PASSWORD};
use crate::common::pgbouncer::{Bouncer, PoolMode};
use crate::common::{TestEnv, render};
use crate::mcp::{Server, is_error, text};
#[cfg(feature = "watch")]
use crate::watch::Tmux;

fn append(item: &str) -> String {
    append_call(item).to_string()
}

fn append_call(item: &str) -> serde_json::Value {
    json!({"op": "append", "phase": "Work", "items": [item]})
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

/// A long-lived MCP server loses its connection when the server stops; a
/// call that arrives while it is down waits for it to come back (it tries
/// to connect again for `postgres.connect.retry`) and is answered: no call
/// lost. One that gives up sooner (`postgres.connect.retry=1`) answers a
/// tool error, never a write it could not commit, and works again after.
#[test]
fn the_mcp_server_rides_out_a_restart_and_never_acknowledges_a_write_it_could_not_commit() {
    let cluster = Cluster::start();
    let db = cluster.database();
    let env = TestEnv::on(&db.url());
    let mut server = Server::start(&env, "m");
    let mut brief = Server::spawn(
        &env,
        &["--session", "m", "--set", "postgres.connect.retry=1", "mcp"],
        &[],
    );
    brief.initialize();
    for (server, item) in [(&mut server, "before"), (&mut brief, "brief before")] {
        let result = server.call("todo", append_call(item));
        assert!(!is_error(&result), "{result}");
    }
    cluster.stop();
    let down = brief.call("todo", append_call("while down, given up"));
    assert!(
        is_error(&down),
        "a write the server could not commit: {down}"
    );
    let said = text(&down);
    assert!(
        said.contains("cannot connect to PostgreSQL")
            && said.contains("still so after trying again for 1 s (postgres.connect.retry)"),
        "{said}"
    );
    assert!(!said.contains(PASSWORD), "{said}");
    let waiting = server.send_call("todo", append_call("while down"));
    std::thread::sleep(Duration::from_millis(1000));
    cluster.restart();
    let answer = server.response(waiting)["result"].clone();
    assert!(
        !is_error(&answer),
        "the call made while down was lost: {answer}"
    );
    for (server, item) in [(&mut server, "after"), (&mut brief, "brief after")] {
        let result = server.call("todo", append_call(item));
        assert!(!is_error(&result), "the server did not reconnect: {result}");
    }
    let (tasks, version, versions) = state(&mut db.admin(), "m");
    assert_eq!(
        tasks,
        [
            "before",
            "brief before",
            "while down",
            "after",
            "brief after"
        ]
    );
    assert_eq!(version, 5);
    assert_eq!(versions, [1, 2, 3, 4, 5]);
    for server in [&mut server, &mut brief] {
        let stderr = server.stop();
        assert!(!stderr.contains(PASSWORD), "{stderr}");
        assert!(stderr.ends_with("[exit status: 0]"), "{stderr}");
    }
}

/// Through PgBouncer (transaction mode): an MCP server's calls made while
/// the pooler restarts, and while the server behind it restarts, are
/// answered once they are back; the CLI works again at once.
#[test]
fn the_mcp_server_rides_out_a_pooler_restart_and_a_server_restart_behind_it() {
    let cluster = Cluster::start();
    let db = cluster.database();
    let bouncer = Bouncer::start(cluster.port, PoolMode::Transaction, 2);
    let env = TestEnv::on(&bouncer.url(&db));
    let mut server = Server::start(&env, "m");
    let result = server.call("todo", append_call("before"));
    assert!(!is_error(&result), "{result}");
    bouncer.stop();
    let waiting = server.send_call("todo", append_call("pooler down"));
    std::thread::sleep(Duration::from_millis(1000));
    bouncer.restart();
    let answer = server.response(waiting)["result"].clone();
    assert!(
        !is_error(&answer),
        "lost while the pooler restarted: {answer}"
    );
    cluster.stop();
    let waiting = server.send_call("todo", append_call("server down"));
    std::thread::sleep(Duration::from_millis(1000));
    cluster.restart();
    let answer = server.response(waiting)["result"].clone();
    assert!(
        !is_error(&answer),
        "lost while the server restarted: {answer}"
    );
    let output = env
        .cmd(&["--session", "m", "todo", "apply", &append("after")])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", render(&["todo"], &output));
    let (tasks, version, _) = state(&mut db.admin(), "m");
    assert_eq!(tasks, ["before", "pooler down", "server down", "after"]);
    assert_eq!(version, 4);
    let stderr = server.stop();
    assert!(stderr.ends_with("[exit status: 0]"), "{stderr}");
}

/// `watch` through PgBouncer keeps its frame while the pooler is down,
/// says so in its last line, and shows the next change once it is back.
#[cfg(feature = "watch")]
#[test]
fn watch_rides_out_a_pooler_restart() {
    let cluster = pg::shared();
    let db = cluster.database();
    let bouncer = Bouncer::start(cluster.port, PoolMode::Transaction, 2);
    let env = TestEnv::on(&bouncer.url(&db));
    let init = r#"{"op":"init","items":["Write the parser","Write the store"]}"#;
    for args in [
        &["--session", "live", "todo", "apply", init][..],
        &["--session", "live", "todo", "start", "Write the parser"],
    ] {
        let output = env.cmd(args).output().unwrap();
        assert!(output.status.success(), "{}", render(args, &output));
    }
    let tmux = Tmux::start(&env, 100, 30, "");
    tmux.wait_for("view started", |s| s.contains("▶ [/] Write the parser"));
    bouncer.stop();
    let screen = tmux.wait_for("the trouble line", |s| {
        s.contains(" ! no answer since") && s.contains("trying again")
    });
    assert!(
        screen.contains("▶ [/] Write the parser"),
        "the frame went:\n{screen}"
    );
    assert!(!screen.contains(PASSWORD), "{screen}");
    bouncer.restart();
    let args = ["--session", "live", "todo", "start", "Write the store"];
    let output = env.cmd(&args).output().unwrap();
    assert!(output.status.success(), "{}", render(&args, &output));
    let screen = tmux.wait_for("the change", |s| {
        s.contains("▶ [/] Write the store") && !s.contains("no answer")
    });
    assert!(screen.contains("q quit"), "{screen}");
    tmux.keys(&["q"]);
    let screen = tmux.wait_for("exit", |s| s.contains("WATCH-ENDED"));
    assert!(screen.contains("watch exit 0"), "{screen}");
}
