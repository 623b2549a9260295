//! goalkeeper through PgBouncer (1.18, the pooler operators put in front of
//! PostgreSQL for a fleet), started by each test in front of the shared
//! server. In transaction mode each transaction may run on another server
//! connection: the race and the team of agents run through it, and a
//! long-lived MCP server keeps working when every one of its transactions
//! gets a server connection it never saw. Session mode works too, and a
//! URL's `options` (a schema of goalkeeper's own) take effect either way.

use std::time::Duration;

use serde_json::json;

use crate::common::pg::{self, wait_for};
use crate::common::pgbouncer::{Bouncer, PoolMode};
use crate::common::{TestEnv, render};
use crate::mcp::{Server, is_error, text};

/// `todo apply` through `env`, asserting it succeeded silently.
fn must(env: &TestEnv, args: &[&str]) -> String {
    let output = env.cmd(args).output().unwrap();
    assert!(
        output.status.success() && output.stderr.is_empty(),
        "{}",
        render(args, &output)
    );
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn the_race_of_sixteen_processes_through_pgbouncer_in_transaction_mode() {
    let db = pg::database();
    let bouncer = Bouncer::start(pg::shared().port, PoolMode::Transaction, 5);
    super::concurrency::sixteen_processes_lose_nothing(
        &TestEnv::on(&bouncer.url(&db)),
        &mut db.admin(),
    );
}

#[test]
fn eight_agents_share_a_hundred_tasks_through_pgbouncer_in_transaction_mode() {
    let db = pg::database();
    let bouncer = Bouncer::start(pg::shared().port, PoolMode::Transaction, 5);
    crate::teams::eight_agents_share_a_hundred_tasks(&TestEnv::on(&bouncer.url(&db)));
}

/// The number of server connections PgBouncer holds to `db`.
fn server_connections(admin: &mut postgres::Client, db: &str) -> i64 {
    admin
        .query_one(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = $1 AND usename = $2",
            &[&db, &pg::USER],
        )
        .unwrap()
        .get(0)
}

/// Before each of its calls, PgBouncer has closed every server connection
/// (`RECONNECT`), so each call's transaction runs on a server connection
/// it never used: nothing a connection kept (a statement prepared under a
/// name, a setting) could carry from one call to the next.
#[test]
fn a_long_lived_mcp_server_works_when_every_transaction_gets_a_new_server_connection() {
    let db = pg::database();
    let bouncer = Bouncer::start(pg::shared().port, PoolMode::Transaction, 2);
    let env = TestEnv::on(&bouncer.url(&db));
    let mut admin = db.admin();
    let mut console = bouncer.console();
    let mut server = Server::start(&env, "m");
    for i in 0..6 {
        console.simple_query("RECONNECT").unwrap();
        assert!(
            wait_for(Duration::from_secs(10), || server_connections(
                &mut admin, &db.name
            ) == 0),
            "PgBouncer kept a server connection:\n{}",
            bouncer.log()
        );
        let result = server.call(
            "todo",
            json!({"op": "append", "phase": "Work", "items": [format!("item {i}")]}),
        );
        assert!(!is_error(&result), "call {i}: {result}");
        let view = server.call("todo", json!({"op": "view"}));
        assert!(
            text(&view).contains(&format!("Overall: 0/{} done", i + 1)),
            "{view}"
        );
    }
    let stderr = server.stop();
    assert!(stderr.ends_with("[exit status: 0]"), "{stderr}");
    let version: i64 = admin
        .query_one("SELECT todo_version FROM sessions WHERE id = 'm'", &[])
        .unwrap()
        .get(0);
    assert_eq!(version, 6);
}

/// Session mode (a server connection per client), and a URL's `options`
/// through either mode: PgBouncer refuses `options` at connect, and
/// goalkeeper sends none; the schema it names holds goalkeeper's tables.
#[test]
fn session_mode_and_a_schema_of_its_own_through_either_mode() {
    let db = pg::database();
    let mut admin = db.admin();
    admin
        .batch_execute(&format!(
            "CREATE SCHEMA team_a AUTHORIZATION {user}; CREATE SCHEMA team_b AUTHORIZATION {user}",
            user = pg::USER
        ))
        .unwrap();
    for (mode, schema) in [
        (PoolMode::Session, "team_a"),
        (PoolMode::Transaction, "team_b"),
    ] {
        let bouncer = Bouncer::start(pg::shared().port, mode, 2);
        let url = format!("{}?options=-csearch_path%3D{schema}", bouncer.url(&db));
        let env = TestEnv::on(&url);
        must(
            &env,
            &["todo", "apply", r#"{"op":"init","items":["a","b"]}"#],
        );
        must(&env, &["todo", "done", "a"]);
        let mut server = Server::start(&env, "default");
        let result = server.call("todo", json!({"op": "done", "task": "b"}));
        assert!(!is_error(&result), "{mode:?}: {result}");
        server.stop();
        let view = must(&env, &["todo", "view"]);
        assert!(view.contains("Overall: 2/2 done"), "{mode:?}: {view}");
        let in_schema: i64 = admin
            .query_one(
                &format!("SELECT count(*) FROM {schema}.tasks WHERE status = 'completed'"),
                &[],
            )
            .unwrap()
            .get(0);
        assert_eq!(in_schema, 2, "{mode:?}");
        assert!(!bouncer.log().contains("unsupported startup parameter"));
    }
    let public: i64 = admin
        .query_one(
            "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(public, 0, "nothing went into the public schema");
}
