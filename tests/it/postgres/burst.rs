//! More agents at once than the server takes connections: 120 agent
//! processes, each starting its own task at the same moment, against a
//! server with `max_connections = 20`. Directly, the server turns most of
//! them away ("too many clients"), and each tries again until it gets in;
//! through PgBouncer in transaction mode with a pool of 5 server
//! connections, the pooler queues them and the server never refuses one.
//! Every call succeeds and every task ends held by its agent. And when the
//! server stays full past the retry time, the command fails with what to
//! change, a hook stays silent, and nothing was written.

use std::process::{Output, Stdio};

use crate::common::pg::{self, Cluster, PASSWORD};
use crate::common::pgbouncer::{Bouncer, PoolMode};
use crate::common::{TestEnv, render};

const AGENTS: usize = 120;

/// `AGENTS` tasks `t0`, `t1`, … planned by an agent `lead`, which then
/// lets go of the task its plan handed it.
fn plan(env: &TestEnv, session: &str) {
    let items: Vec<String> = (0..AGENTS).map(|i| format!("t{i}")).collect();
    let init = serde_json::json!({"op": "init", "items": items}).to_string();
    for args in [
        &[
            "--session",
            session,
            "--agent",
            "lead",
            "todo",
            "apply",
            &init,
        ][..],
        &["--session", session, "--agent", "lead", "todo", "release"],
    ] {
        let output = env.cmd(args).output().unwrap();
        assert!(output.status.success(), "{}", render(args, &output));
    }
}

/// Starts every agent's process at once (agent `aN` starts `tN`) and
/// waits for them all.
fn burst(env: &TestEnv, session: &str) -> Vec<(Vec<String>, Output)> {
    let children: Vec<_> = (0..AGENTS)
        .map(|i| {
            let call = format!(r#"{{"op":"start","task":"t{i}"}}"#);
            let agent = format!("a{i}");
            let args: Vec<String> = ["--session", session, "--agent", &agent, "todo", "apply"]
                .iter()
                .map(|a| a.to_string())
                .chain([call])
                .collect();
            let words: Vec<&str> = args.iter().map(String::as_str).collect();
            let child = env
                .std_cmd(&words)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            (args, child)
        })
        .collect();
    children
        .into_iter()
        .map(|(args, child)| (args, child.wait_with_output().unwrap()))
        .collect()
}

/// Every call succeeded, and every task is in progress, held by its agent.
fn assert_every_task_held(
    results: &[(Vec<String>, Output)],
    admin: &mut postgres::Client,
    session: &str,
) {
    for (args, output) in results {
        let words: Vec<&str> = args.iter().map(String::as_str).collect();
        assert!(
            output.status.success() && output.stderr.is_empty(),
            "{}",
            render(&words, output)
        );
    }
    let rows = admin
        .query(
            "SELECT content, status, agent FROM tasks WHERE session_id = $1 ORDER BY pos",
            &[&session],
        )
        .unwrap();
    assert_eq!(rows.len(), AGENTS);
    for (i, row) in rows.iter().enumerate() {
        let (content, status, agent): (String, String, Option<String>) =
            (row.get(0), row.get(1), row.get(2));
        assert_eq!(
            (content.as_str(), status.as_str(), agent.as_deref()),
            (
                format!("t{i}").as_str(),
                "in_progress",
                Some(format!("a{i}").as_str())
            ),
        );
    }
}

fn refusals(cluster: &Cluster) -> usize {
    cluster.log().matches("too many clients already").count()
        + cluster
            .log()
            .matches("remaining connection slots are reserved")
            .count()
}

#[test]
fn a_burst_of_agents_past_max_connections_gets_in_directly_and_through_pgbouncer() {
    let cluster = Cluster::start_with_max_connections(20);
    let db = cluster.database();
    let mut admin = db.admin();

    // Directly: the server turns connections away, and they try again.
    let env = TestEnv::on(&db.url());
    plan(&env, "direct");
    let started = std::time::Instant::now();
    let results = burst(&env, "direct");
    let direct = started.elapsed();
    assert_every_task_held(&results, &mut admin, "direct");
    let refused = refusals(&cluster);
    assert!(
        refused > 0,
        "the burst never met the connection limit; it proves nothing"
    );

    // Through PgBouncer, 5 server connections: queued, never refused.
    let bouncer = Bouncer::start(cluster.port, PoolMode::Transaction, 5);
    let env = TestEnv::on(&bouncer.url(&db));
    plan(&env, "pooled");
    let started = std::time::Instant::now();
    let results = burst(&env, "pooled");
    let pooled = started.elapsed();
    assert_every_task_held(&results, &mut admin, "pooled");
    assert_eq!(
        refusals(&cluster),
        refused,
        "the server refused a pooled connection"
    );
    eprintln!(
        "burst of {AGENTS} agents against max_connections=20: {direct:?} directly ({refused} connections turned away and tried again), {pooled:?} through PgBouncer (transaction mode, pool of 5)"
    );
}

/// Holds every connection slot an ordinary user may take (20 less the 3
/// reserved for superusers).
fn fill_slots(db: &pg::Database) -> Vec<postgres::Client> {
    let url = format!(
        "host=127.0.0.1 port={} user={} password={PASSWORD} dbname={}",
        db.port,
        pg::USER,
        db.name
    );
    (0..17)
        .map(|_| postgres::Client::connect(&url, postgres::NoTls).unwrap())
        .collect()
}

#[test]
fn a_server_full_past_the_retry_time_is_an_error_that_says_what_to_change() {
    let cluster = Cluster::start_with_max_connections(20);
    let db = cluster.database();
    let env = TestEnv::on(&db.url());
    let output = env
        .cmd(&["todo", "apply", r#"{"op":"init","items":["a","b"]}"#])
        .output()
        .unwrap();
    assert!(output.status.success());
    let held = fill_slots(&db);

    let args = [
        "--set",
        "postgres.connect.retry=1",
        "todo",
        "apply",
        r#"{"op":"done","task":"a"}"#,
    ];
    let output = env.cmd(&args).output().unwrap();
    let url = db.url().replace(PASSWORD, "***");
    let shown = render(&args, &output).replace(&url, "<url>");
    assert!(!shown.contains(PASSWORD), "{shown}");
    crate::assert_snapshot!("postgres_full_server_cli", shown);

    // A hook: silent on stdout, exit 0, the note within its own limit.
    let event =
        r#"{"hook_event_name":"UserPromptSubmit","session_id":"default","prompt":"go","cwd":"."}"#;
    let output = env
        .cmd(&["hook", "claude-code"])
        .env("GOALKEEPER_HOOK_WAIT_MS", "2000")
        .write_stdin(event)
        .output()
        .unwrap();
    let shown = render(&["hook", "claude-code"], &output).replace(&url, "<url>");
    crate::assert_snapshot!("postgres_full_server_hook", shown);

    drop(held);
    // Nothing of either was written.
    let mut admin = db.admin();
    let row = admin
        .query_one(
            "SELECT (SELECT todo_version FROM sessions WHERE id = 'default'),
                    (SELECT count(*) FROM events),
                    (SELECT count(*) FROM tasks WHERE status = 'completed'),
                    (SELECT count(*) FROM pointers)",
            &[],
        )
        .unwrap();
    let counts: (i64, i64, i64, i64) = (row.get(0), row.get(1), row.get(2), row.get(3));
    assert_eq!(counts, (1, 1, 0, 0));
}
