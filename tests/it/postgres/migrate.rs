//! `migrate --to URL` (a SQLite database copied into PostgreSQL) and
//! `backup PATH` of a PostgreSQL database (a new SQLite file): everything
//! comes over — lists, undo history, goals with their usage, events, marks —
//! and a target that already holds one of the sessions is refused with
//! nothing copied.

use crate::common::pg::{self, PASSWORD};
use crate::common::{TestEnv, render};

/// Runs `args` on `db` (a path or URL) and returns the rendered output and
/// the exit code.
fn run(env: &TestEnv, db: &str, args: &[&str]) -> (String, Option<i32>) {
    let mut full = vec!["--db", db];
    full.extend_from_slice(args);
    let output = env.cmd(&full).output().unwrap();
    let shown = render(&full, &output);
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(!said.contains(PASSWORD), "the password leaked:\n{shown}");
    (shown, output.status.code())
}

fn ok(env: &TestEnv, db: &str, args: &[&str]) -> String {
    let mut full = vec!["--db", db];
    full.extend_from_slice(args);
    let output = env.cmd(&full).output().unwrap();
    assert!(output.status.success(), "{}", render(&full, &output));
    String::from_utf8(output.stdout).unwrap()
}

/// What a person sees of `session` on `db`: the list with its version, the
/// goal, and the log without event ids (a copy numbers its own events).
fn picture(env: &TestEnv, db: &str, session: &str) -> (String, String, Vec<serde_json::Value>) {
    let view = ok(env, db, &["--session", session, "--json", "todo", "view"]);
    let goal = ok(env, db, &["--session", session, "goal"]);
    let log = ok(
        env,
        db,
        &[
            "--session",
            session,
            "--json",
            "todo",
            "log",
            "--limit",
            "1000",
        ],
    );
    let mut log: Vec<serde_json::Value> = serde_json::from_str(&log).unwrap();
    for event in &mut log {
        event.as_object_mut().unwrap().remove("id");
    }
    (view, goal, log)
}

/// A SQLite database with two sessions: lists with history, a goal with
/// usage, a rejected agent call.
fn fill(env: &TestEnv, db: &str, sessions: &[&str]) {
    for s in sessions {
        ok(
            env,
            db,
            &[
                "--session",
                s,
                "todo",
                "apply",
                r#"{"op":"init","items":["a","b","c"]}"#,
            ],
        );
        ok(env, db, &["--session", s, "todo", "done", "a"]);
        ok(
            env,
            db,
            &[
                "--session",
                s,
                "goal",
                "set",
                "--budget",
                "1000",
                "Finish",
                s,
            ],
        );
        ok(
            env,
            db,
            &[
                "--session",
                s,
                "goal",
                "usage",
                "--input",
                "120",
                "--output",
                "30",
            ],
        );
        let (_, code) = run(
            env,
            db,
            &[
                "--session",
                s,
                "todo",
                "apply",
                r#"{"op":"done","task":"zzz"}"#,
            ],
        );
        assert_eq!(code, Some(1));
        ok(
            env,
            db,
            &[
                "--session",
                s,
                "todo",
                "apply",
                r#"{"op":"append","phase":"Tasks","items":["d"]}"#,
            ],
        );
    }
}

#[test]
fn migrate_copies_a_sqlite_database_and_refuses_a_second_copy() {
    let pg = pg::database();
    let url = pg.url();
    let env = TestEnv::new();
    let sqlite = env.db().display().to_string();
    fill(&env, &sqlite, &["alpha", "beta"]);
    let (shown, code) = run(&env, &sqlite, &["migrate", "--to", &url]);
    assert_eq!(code, Some(0), "{shown}");
    assert!(
        shown.contains("Copied 2 sessions (2 goals, 12 events, 0 marks, 0 pointers)"),
        "{shown}"
    );
    assert!(
        shown.contains("to postgres://gk_user:***@127.0.0.1"),
        "{shown}"
    );
    for s in ["alpha", "beta"] {
        assert_eq!(picture(&env, &sqlite, s), picture(&env, &url, s), "{s}");
    }
    // The undo history came too.
    ok(&env, &url, &["--session", "alpha", "todo", "undo"]);
    let view = ok(&env, &url, &["--session", "alpha", "todo", "view"]);
    assert!(!view.contains("- [ ] d"), "{view}");

    // A second copy of the same sessions is refused, and changes nothing.
    let events_before: i64 = pg
        .admin()
        .query_one("SELECT count(*) FROM events", &[])
        .unwrap()
        .get(0);
    let (shown, code) = run(&env, &sqlite, &["migrate", "--to", &url]);
    assert_eq!(code, Some(1), "{shown}");
    assert!(
        shown.contains(
            "the target already holds 2 of the sessions to copy (alpha, beta); nothing was copied"
        ),
        "{shown}"
    );
    let events_after: i64 = pg
        .admin()
        .query_one("SELECT count(*) FROM events", &[])
        .unwrap()
        .get(0);
    assert_eq!(events_after, events_before);

    // Another machine's database, with sessions of its own, joins them:
    // its goal gets a new id, and its goal events follow.
    let other = TestEnv::new();
    let other_db = other.db().display().to_string();
    fill(&other, &other_db, &["gamma"]);
    let (shown, code) = run(&other, &other_db, &["migrate", "--to", &url]);
    assert_eq!(code, Some(0), "{shown}");
    let goal = ok(&other, &url, &["--session", "gamma", "--json", "goal"]);
    let goal: serde_json::Value = serde_json::from_str(&goal).unwrap();
    assert_eq!(goal["details"]["goal"]["id"], 3, "{goal}");
    assert_eq!(goal["details"]["goal"]["tokens_used"], 150, "{goal}");
    let usage_goal: i64 = pg
        .admin()
        .query_one(
            "SELECT (payload::json->>'goal')::bigint FROM events WHERE session_id = 'gamma' AND op = 'usage'",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(usage_goal, 3);
}

#[test]
fn backup_of_a_postgres_database_is_a_sqlite_file_holding_everything() {
    let pg = pg::database();
    let url = pg.url();
    let env = TestEnv::new();
    fill(&env, &url, &["one", "two"]);
    let copy = env.dir().join("copy.db").display().to_string();
    let (shown, code) = run(&env, &url, &["backup", &copy]);
    assert_eq!(code, Some(0), "{shown}");
    let left: Vec<String> = std::fs::read_dir(env.dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with("copy.db"))
        .collect();
    assert_eq!(left, ["copy.db"], "nothing beside the copy");
    for s in ["one", "two"] {
        assert_eq!(picture(&env, &url, s), picture(&env, &copy, s), "{s}");
    }
    // Never over an existing file.
    let (shown, code) = run(&env, &url, &["backup", &copy]);
    assert_ne!(code, Some(0), "{shown}");
    assert!(shown.contains("already exists"), "{shown}");
}

#[test]
fn checks_and_their_runs_come_over_both_ways() {
    let pg = pg::database();
    let url = pg.url();
    let env = TestEnv::new();
    let project = env.dir().join("project");
    std::fs::create_dir(&project).unwrap();
    std::fs::write(project.join("main.rs"), "fn main() {}").unwrap();
    let sqlite = env.db().display().to_string();
    let at = |db: &str, args: &[&str]| {
        let mut full = vec!["--db", db];
        full.extend_from_slice(args);
        let output = env.cmd(&full).current_dir(&project).output().unwrap();
        String::from_utf8(output.stdout).unwrap()
    };
    at(
        &sqlite,
        &["goal", "set", "Ship", "--check", "true", "--check", "false"],
    );
    at(&sqlite, &["todo", "init", "--item", "Lexer"]);
    at(&sqlite, &["todo", "check", "Lexer", "test -f main.rs"]);
    at(&sqlite, &["verify"]);
    at(&sqlite, &["verify", "--task", "Lexer"]);
    let seen = |db: &str| (at(db, &["goal"]), at(db, &["todo", "view"]));
    let before = seen(&sqlite);
    assert!(
        before
            .0
            .ends_with("1. `true`: passed 0s ago\n2. `false`: failed 0s ago (exit 1)\n"),
        "{}",
        before.0
    );
    let (shown, code) = run(&env, &sqlite, &["migrate", "--to", &url]);
    assert_eq!(code, Some(0), "{shown}");
    assert_eq!(seen(&url), before);
    let copy = env.dir().join("copy.db").display().to_string();
    let (shown, code) = run(&env, &url, &["backup", &copy]);
    assert_eq!(code, Some(0), "{shown}");
    assert_eq!(seen(&copy), before);
    // The gate reads the runs that came over: the task's check passed.
    assert!(
        at(&url, &["todo", "apply", r#"{"op":"done","task":"Lexer"}"#])
            .contains("Overall: 1/1 done"),
    );
}
