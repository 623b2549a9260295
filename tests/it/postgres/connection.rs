//! Connecting: bad URLs, a wrong password, an unreachable port, another
//! application's database, a newer schema. Each is a clear error with exit
//! code 3 (2 for a URL that does not parse), the password never shown, and
//! nothing written.

use std::time::{Duration, Instant};

use crate::common::pg::{self, PASSWORD};
use crate::common::{TestEnv, render};
use goalkeeper::store::Caller;

/// Runs the CLI with `GOALKEEPER_DB=url`.
fn run_on(env: &TestEnv, url: &str, args: &[&str]) -> (String, std::process::Output) {
    let output = env
        .cmd(args)
        .env("GOALKEEPER_DB", url)
        .output()
        .expect("run");
    (render(args, &output), output)
}

fn assert_no_password(text: &str) {
    assert!(!text.contains(PASSWORD), "the password leaked:\n{text}");
}

#[test]
fn a_todo_session_works_on_postgres() {
    let db = pg::database();
    let env = TestEnv::new();
    let url = db.url();
    let (text, out) = run_on(
        &env,
        &url,
        &["todo", "apply", r#"{"op":"init","items":["a","b"]}"#],
    );
    assert!(out.status.success(), "{text}");
    let (text, out) = run_on(&env, &url, &["todo", "done", "a"]);
    assert!(out.status.success(), "{text}");
    let (text, out) = run_on(&env, &url, &["--json", "todo", "view"]);
    assert!(out.status.success(), "{text}");
    let view: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(view["details"]["version"], 2, "{text}");
    let mut admin = db.admin();
    let row = admin
        .query_one(
            "SELECT todo_version FROM sessions WHERE id = 'default'",
            &[],
        )
        .unwrap();
    assert_eq!(row.get::<_, i64>(0), 2);
    let events: i64 = admin
        .query_one("SELECT count(*) FROM events", &[])
        .unwrap()
        .get(0);
    assert_eq!(events, 2);
}

#[test]
fn a_wrong_password_is_a_clear_error_without_the_password() {
    let db = pg::database();
    let env = TestEnv::new();
    let url = db.url().replace(PASSWORD, "not-the-password-9x");
    let (text, out) = run_on(&env, &url, &["todo", "view"]);
    assert_eq!(out.status.code(), Some(3), "{text}");
    assert!(text.contains("password authentication failed"), "{text}");
    assert!(
        text.contains("check the user name and the password"),
        "{text}"
    );
    assert!(!text.contains("not-the-password-9x"), "{text}");
    assert!(text.contains("gk_user:***@"), "{text}");
}

#[test]
fn an_unreachable_port_fails_at_once_and_a_silent_one_after_the_timeout() {
    let env = TestEnv::new();
    // Nothing listens: refused at once.
    let url = format!(
        "postgres://gk_user:{PASSWORD}@127.0.0.1:{}/x",
        pg::free_port()
    );
    let started = Instant::now();
    let (text, out) = run_on(&env, &url, &["todo", "view"]);
    assert_eq!(out.status.code(), Some(3), "{text}");
    assert!(text.contains("is the server running"), "{text}");
    assert_no_password(&text);
    assert!(started.elapsed() < Duration::from_secs(10));

    // Something accepts and never answers: the connect timeout bounds it.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!(
        "postgres://gk_user:{PASSWORD}@127.0.0.1:{}/x?connect_timeout=1",
        silent.local_addr().unwrap().port()
    );
    let started = Instant::now();
    let (text, out) = run_on(&env, &url, &["todo", "view"]);
    let waited = started.elapsed();
    assert_eq!(out.status.code(), Some(3), "{text}");
    assert!(text.contains("no answer within 1 s"), "{text}");
    assert_no_password(&text);
    assert!(waited < Duration::from_secs(8), "waited {waited:?}");
}

#[test]
fn a_hook_stays_silent_and_exits_0_when_the_server_is_unreachable() {
    let env = TestEnv::new();
    let url = format!(
        "postgres://gk_user:{PASSWORD}@127.0.0.1:{}/x",
        pg::free_port()
    );
    let output = env
        .cmd(&["hook", "claude-code"])
        .env("GOALKEEPER_DB", &url)
        .write_stdin(
            r#"{"hook_event_name":"UserPromptSubmit","session_id":"s1","prompt":"hi","cwd":"."}"#,
        )
        .output()
        .unwrap();
    let text = render(&["hook", "claude-code"], &output);
    assert_eq!(output.status.code(), Some(0), "{text}");
    assert!(output.stdout.is_empty(), "{text}");
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("cannot connect to PostgreSQL"),
        "{text}"
    );
    assert_no_password(&text);
}

#[test]
fn a_url_that_does_not_parse_is_a_usage_error() {
    let env = TestEnv::new();
    let url = format!("postgres://gk_user:{PASSWORD}@127.0.0.1/x?sslmode=sometimes");
    let (text, out) = run_on(&env, &url, &["todo", "view"]);
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(text.contains("sslmode=sometimes is not one of"), "{text}");
    assert_no_password(&text);
}

/// `--db` is read once, before any command runs: a value that is no
/// database is refused even by a command that never opens one (it would
/// otherwise go unnoticed until the hooks it installs run), and a hook
/// notes it and does nothing, without failing the host.
#[test]
fn a_url_that_does_not_parse_is_refused_before_any_command_runs() {
    let env = TestEnv::new();
    let url = format!("postgres://gk_user:{PASSWORD}@127.0.0.1/x?sslmode=sometimes");
    let project = env.dir().join("project");
    std::fs::create_dir(&project).unwrap();
    let p = project.display().to_string();
    let args = ["install", "claude-code", "--project", &p, "--command", "gk"];
    let (text, out) = run_on(&env, &url, &args);
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(
        text.contains("goalkeeper: GOALKEEPER_DB: the PostgreSQL URL postgres://gk_user:***@127.0.0.1/x?sslmode=sometimes is not usable: sslmode=sometimes is not one of"),
        "{text}"
    );
    assert_no_password(&text);
    let written: Vec<_> = std::fs::read_dir(&project).unwrap().collect();
    assert!(written.is_empty(), "install wrote {written:?}");

    let event =
        r#"{"hook_event_name":"UserPromptSubmit","session_id":"s","prompt":"hi","cwd":"/tmp"}"#;
    let output = env
        .cmd(&["hook", "claude-code"])
        .env("GOALKEEPER_DB", &url)
        .write_stdin(event)
        .output()
        .expect("run");
    let text = render(&["hook", "claude-code"], &output);
    assert_eq!(output.status.code(), Some(0), "{text}");
    assert!(output.stdout.is_empty(), "{text}");
    let note = String::from_utf8_lossy(&output.stderr);
    assert!(note.contains("sslmode=sometimes is not one of"), "{text}");
    assert!(note.contains("nothing was done"), "{text}");
    assert_no_password(&text);
    assert!(!env.db().exists(), "a database was created");
}

#[test]
fn sslmode_require_against_a_server_without_tls_is_refused() {
    let db = pg::database();
    let env = TestEnv::new();
    let url = format!("{}?sslmode=require", db.url());
    let (text, out) = run_on(&env, &url, &["todo", "view"]);
    assert_eq!(out.status.code(), Some(3), "{text}");
    assert!(text.contains("cannot connect to PostgreSQL"), "{text}");
    assert!(text.to_lowercase().contains("tls"), "{text}");
    assert_no_password(&text);
}

#[test]
fn another_applications_database_is_refused_untouched() {
    let db = pg::database();
    let mut admin = db.admin();
    admin
        .batch_execute("CREATE TABLE invoices (id int); INSERT INTO invoices VALUES (7); ALTER TABLE invoices OWNER TO gk_user")
        .unwrap();
    let env = TestEnv::new();
    let (text, out) = run_on(
        &env,
        &db.url(),
        &["todo", "apply", r#"{"op":"init","items":["a"]}"#],
    );
    assert_eq!(out.status.code(), Some(3), "{text}");
    assert!(
        text.contains(
            "is not goalkeeper's: its schema public holds tables of another application (invoices)"
        ),
        "{text}"
    );
    assert!(text.contains("it was left untouched"), "{text}");
    assert_no_password(&text);
    let tables: i64 = admin
        .query_one(
            "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(tables, 1, "nothing was created");
}

#[test]
fn a_newer_schema_is_refused_untouched() {
    let db = pg::database();
    let env = TestEnv::new();
    let (text, out) = run_on(
        &env,
        &db.url(),
        &["todo", "apply", r#"{"op":"init","items":["a"]}"#],
    );
    assert!(out.status.success(), "{text}");
    let mut admin = db.admin();
    admin
        .batch_execute("UPDATE goalkeeper_schema SET version = 99")
        .unwrap();
    let (text, out) = run_on(&env, &db.url(), &["todo", "done", "a"]);
    assert_eq!(out.status.code(), Some(3), "{text}");
    assert!(
        text.contains("has goalkeeper schema version 99, but this goalkeeper only knows up to"),
        "{text}"
    );
    assert!(text.contains("the database was left untouched"), "{text}");
    let version: i64 = admin
        .query_one("SELECT todo_version FROM sessions", &[])
        .unwrap()
        .get(0);
    assert_eq!(version, 1);
}

#[test]
fn tls_with_the_servers_ca_works_and_an_unknown_ca_is_refused() {
    let cluster = pg::Cluster::start_tls();
    let db = cluster.database();
    let env = TestEnv::new();
    let ca = cluster.ca().display().to_string();
    let url = format!("{}?sslmode=require&sslrootcert={ca}", db.url());
    let (text, out) = run_on(
        &env,
        &url,
        &["todo", "apply", r#"{"op":"init","items":["a"]}"#],
    );
    assert!(out.status.success(), "{text}");
    let (text, out) = run_on(&env, &url, &["--json", "todo", "view"]);
    assert!(out.status.success(), "{text}");
    // The server refuses the user without TLS: the connection above was TLS.
    let plain = format!("{}?sslmode=disable", db.url());
    let (text, out) = run_on(&env, &plain, &["todo", "view"]);
    assert_eq!(out.status.code(), Some(3), "{text}");
    assert_no_password(&text);
    // Without the server's CA the certificate is not trusted: refused, for
    // `require` as for `prefer`.
    for mode in ["require", "prefer"] {
        let url = format!("{}?sslmode={mode}", db.url());
        let (text, out) = run_on(&env, &url, &["todo", "view"]);
        assert_eq!(out.status.code(), Some(3), "{text}");
        assert!(text.contains("sslrootcert"), "{text}");
        assert_no_password(&text);
    }
}

/// A database of schema v4 (no kept shapes) is migrated to v5 at the
/// next open: its lists read from their rows, with the same text, until
/// their next write keeps a shape; nothing of them is lost.
#[test]
fn a_v4_database_is_migrated_and_its_lists_read_from_their_rows_until_written() {
    use goalkeeper::store::Location;
    use goalkeeper::todo::{Actor, Call, ViewPage};
    use goalkeeper::{SessionId, Store};

    let db = pg::database();
    let location = Location::parse(&db.url()).unwrap();
    let s = SessionId::parse("s").unwrap();
    let items: Vec<String> = (0..250)
        .map(|i| format!("task {i:03}, long enough to need a second page"))
        .collect();
    let init = serde_json::json!({"op": "init", "items": items}).to_string();
    let page = ViewPage {
        phase: None,
        page: 2,
    };
    let before = {
        let mut store = Store::open(&location).unwrap();
        store
            .todo(
                &s,
                Call::Json(&init),
                Actor::Agent,
                &mut Caller::default(),
                1,
            )
            .unwrap();
        store
            .read(&s, |tx| tx.todo_view(&page, &Caller::default(), 0))
            .unwrap()
    };
    let mut admin = db.admin();
    admin
        .batch_execute(
            "DROP TRIGGER tasks_forget_shape ON tasks;
             DROP FUNCTION goalkeeper_forget_shape();
             ALTER TABLE sessions DROP COLUMN todo_shape;
             DROP INDEX tasks_by_prefix;
             UPDATE goalkeeper_schema SET version = 4;",
        )
        .unwrap();
    let mut store = Store::open(&location).unwrap();
    let version: i64 = admin
        .query_one("SELECT version FROM goalkeeper_schema", &[])
        .unwrap()
        .get(0);
    assert_eq!(version, 11);
    let shape = |admin: &mut postgres::Client| -> Option<String> {
        admin
            .query_one("SELECT todo_shape FROM sessions WHERE id = 's'", &[])
            .unwrap()
            .get(0)
    };
    assert_eq!(shape(&mut admin), None);
    assert_eq!(
        store
            .read(&s, |tx| tx.todo_view(&page, &Caller::default(), 0))
            .unwrap(),
        before
    );
    assert_eq!(store.read(&s, |tx| tx.status()).unwrap().1.total, 250);
    let done = r#"{"op":"done","task":"task 000, long enough to need a second page"}"#;
    store
        .todo(
            &s,
            Call::Json(done),
            Actor::Agent,
            &mut Caller::default(),
            2,
        )
        .unwrap();
    assert!(shape(&mut admin).is_some());
    let (text, is_error) = store
        .read(&s, |tx| tx.todo_view(&page, &Caller::default(), 0))
        .unwrap();
    assert!(
        !is_error && text.starts_with("Overall: 1/250 done, 249 open."),
        "{text}"
    );
    // A task row written from outside forgets the shape on PostgreSQL too.
    admin
        .batch_execute("UPDATE tasks SET status = 'completed' WHERE pos = 5")
        .unwrap();
    assert_eq!(shape(&mut admin), None);
    assert_eq!(store.read(&s, |tx| tx.status()).unwrap().1.closed, 2);
}

/// A database an early build of v6 migrated (its index `tasks_by_content`
/// on the whole text, no `tasks_by_prefix`) gets v6's index at v7, as on
/// SQLite, and a call on one task runs on it.
#[test]
fn a_database_an_early_v6_build_migrated_gets_the_index_it_lacks() {
    use goalkeeper::store::Location;
    use goalkeeper::todo::{Actor, Call};
    use goalkeeper::{SessionId, Store};

    let db = pg::database();
    let location = Location::parse(&db.url()).unwrap();
    let s = SessionId::parse("s").unwrap();
    let items: Vec<String> = (0..300)
        .map(|i| format!("task {i:03}, a step of the plan long enough to keep the list long"))
        .collect();
    let init = serde_json::json!({"op": "init", "items": items}).to_string();
    Store::open(&location)
        .unwrap()
        .todo(
            &s,
            Call::Json(&init),
            Actor::Agent,
            &mut Caller::default(),
            1,
        )
        .unwrap();
    let mut admin = db.admin();
    let indexes = |admin: &mut postgres::Client| -> Vec<String> {
        admin
            .query(
                "SELECT indexname::text FROM pg_indexes WHERE tablename = 'tasks' AND indexname <> 'tasks_pkey' ORDER BY 1",
                &[],
            )
            .unwrap()
            .iter()
            .map(|r| r.get(0))
            .collect()
    };
    admin
        .batch_execute(
            "DROP INDEX tasks_by_prefix;
             CREATE INDEX tasks_by_content ON tasks (session_id, content);
             UPDATE goalkeeper_schema SET version = 6;",
        )
        .unwrap();
    assert_eq!(indexes(&mut admin), ["tasks_by_content"]);
    let mut store = Store::open(&location).unwrap();
    let done = serde_json::json!({"op": "done", "task": items[150]}).to_string();
    let (text, is_error) = store
        .todo_answer(
            &s,
            Call::Json(&done),
            Actor::Agent,
            &mut Caller::default(),
            2,
        )
        .map(|a| (a.text, a.is_error))
        .unwrap();
    assert!(!is_error && text.contains("Overall: 1/300 done"), "{text}");
    assert_eq!(indexes(&mut admin), ["tasks_by_prefix"]);
    let version: i64 = admin
        .query_one("SELECT version FROM goalkeeper_schema", &[])
        .unwrap()
        .get(0);
    assert_eq!(version, 11);
}
