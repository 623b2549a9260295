//! A fleet on one server: 4 groups (machines) with their own connections,
//! each with 2 CLI writers, an MCP server and a stream of hook events, on
//! their own sessions and on one session they all share. Every call
//! succeeds, every hook exits 0 silently, and the counts are exact. The
//! throughput it reaches is printed (BENCHMARKS.md quotes it).

use std::time::Instant;

use serde_json::json;

use crate::common::pg;
use crate::common::{TestEnv, render};
use crate::mcp::{Server, is_error};

const GROUPS: usize = 4;
const WRITERS: usize = 2;
/// Calls of each CLI writer: alternately an append to the group's session
/// and one to the shared session, every fourth a usage report instead.
const CALLS: usize = 40;
const MCP_CALLS: usize = 40;
const HOOKS: usize = 20;
const TOKENS: u64 = 3;

fn append(item: &str) -> String {
    json!({"op": "append", "phase": "Work", "items": [item]}).to_string()
}

fn must(env: &TestEnv, args: &[&str]) {
    let output = env.cmd(args).output().unwrap();
    assert!(
        output.status.success() && output.stderr.is_empty(),
        "{}",
        render(args, &output)
    );
}

#[test]
fn four_groups_with_writers_hooks_and_mcp_servers_share_one_server() {
    let db = pg::database();
    let url = db.url();
    let groups: Vec<TestEnv> = (0..GROUPS).map(|_| TestEnv::on(&url)).collect();
    must(
        &groups[0],
        &["--session", "fleet", "goal", "set", "Ship", "together"],
    );
    let started = Instant::now();
    std::thread::scope(|scope| {
        for (g, env) in groups.iter().enumerate() {
            for w in 0..WRITERS {
                scope.spawn(move || {
                    for i in 0..CALLS {
                        let item = format!("g{g} w{w} i{i}");
                        if i % 4 == 3 {
                            let tokens = TOKENS.to_string();
                            must(
                                env,
                                &["--session", "fleet", "goal", "usage", "--input", &tokens],
                            );
                        } else if i % 2 == 0 {
                            let own = format!("group-{g}");
                            must(env, &["--session", &own, "todo", "apply", &append(&item)]);
                        } else {
                            must(
                                env,
                                &["--session", "fleet", "todo", "apply", &append(&item)],
                            );
                        }
                    }
                });
            }
            scope.spawn(move || {
                let mut server = Server::start(env, &format!("mcp-{g}"));
                for i in 0..MCP_CALLS {
                    let result = server.call(
                        "todo",
                        json!({"op": "append", "phase": "Work", "items": [format!("mcp {g} {i}")]}),
                    );
                    assert!(!is_error(&result), "{result}");
                }
                let stderr = server.stop();
                assert!(stderr.ends_with("[exit status: 0]"), "{stderr}");
            });
            scope.spawn(move || {
                for i in 0..HOOKS {
                    let event = json!({
                        "hook_event_name": "UserPromptSubmit",
                        "session_id": "fleet",
                        "prompt": format!("step {i}"),
                        "cwd": env.dir(),
                    });
                    let output = env
                        .cmd(&["hook", "claude-code"])
                        .write_stdin(event.to_string())
                        .output()
                        .unwrap();
                    let shown = render(&["hook", "claude-code"], &output);
                    assert_eq!(output.status.code(), Some(0), "{shown}");
                    assert!(output.stderr.is_empty(), "the hook left a note: {shown}");
                }
            });
        }
    });
    let elapsed = started.elapsed();
    let cli = GROUPS * WRITERS * CALLS;
    let total = cli + GROUPS * (MCP_CALLS + HOOKS);
    eprintln!(
        "fleet: {total} calls ({cli} CLI processes, {} MCP calls, {} hook processes) in {:.1} s: {:.0} calls/s",
        GROUPS * MCP_CALLS,
        GROUPS * HOOKS,
        elapsed.as_secs_f64(),
        total as f64 / elapsed.as_secs_f64()
    );
    let mut admin = db.admin();
    let count = |admin: &mut postgres::Client, sql: &str, session: &str| -> i64 {
        admin.query_one(sql, &[&session]).unwrap().get(0)
    };
    const TASKS: &str = "SELECT count(*) FROM tasks WHERE session_id = $1";
    const VERSION: &str = "SELECT todo_version FROM sessions WHERE id = $1";
    let per_writer_usage = (CALLS / 4) as i64;
    let per_writer_own = (0..CALLS).filter(|i| i % 4 != 3 && i % 2 == 0).count() as i64;
    let per_writer_shared = (0..CALLS).filter(|i| i % 4 != 3 && i % 2 == 1).count() as i64;
    let writers = (GROUPS * WRITERS) as i64;
    assert_eq!(
        count(&mut admin, TASKS, "fleet"),
        writers * per_writer_shared
    );
    assert_eq!(
        count(&mut admin, VERSION, "fleet"),
        writers * per_writer_shared
    );
    let tokens: i64 = admin
        .query_one(
            "SELECT tokens_used FROM goals WHERE session_id = 'fleet'",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(tokens, writers * per_writer_usage * TOKENS as i64);
    for g in 0..GROUPS {
        let own = format!("group-{g}");
        assert_eq!(
            count(&mut admin, TASKS, &own),
            WRITERS as i64 * per_writer_own
        );
        let mcp = format!("mcp-{g}");
        assert_eq!(count(&mut admin, TASKS, &mcp), MCP_CALLS as i64);
        assert_eq!(count(&mut admin, VERSION, &mcp), MCP_CALLS as i64);
    }
    // Every group's hooks saw the shared session: each directory points at it.
    let pointers: i64 = admin
        .query_one("SELECT count(*) FROM pointers WHERE value = 'fleet'", &[])
        .unwrap()
        .get(0);
    assert_eq!(pointers, GROUPS as i64);
}
