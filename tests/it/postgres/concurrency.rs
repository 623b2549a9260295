//! Real processes racing through PostgreSQL: 16 processes × 100 mixed
//! calls (appends, completions, usage reports, views), in blocks of four
//! that alternate between one shared session and the process's own: the
//! shared one sees 16 concurrent writers, the own ones run beside them.
//! Every call succeeds and every count is exact: the session lock
//! serializes the writers of a session, on any machine, and never loses
//! an update. (One run for both cases keeps the suite's time down: each
//! call is a whole process with its own connection.)

use std::thread;

use crate::common::pg;
use crate::common::{TestEnv, render};

const PROCESSES: usize = 16;
const CALLS: usize = 100;
/// Tokens of one usage report.
const TOKENS: u64 = 7;

/// Call `i` of worker `w`, on `session`: an append, the completion of the
/// task just appended, a usage report, a view — a quarter each.
fn call(w: usize, i: usize) -> Vec<String> {
    let task = |i: usize| format!("w{w:02}-c{i:03}");
    let args: Vec<String> = match i % 4 {
        0 => vec![
            "todo".into(),
            "apply".into(),
            format!(
                r#"{{"op":"append","phase":"Work","items":["{}"]}}"#,
                task(i)
            ),
        ],
        1 => vec![
            "todo".into(),
            "apply".into(),
            format!(r#"{{"op":"done","task":"{}"}}"#, task(i - 1)),
        ],
        2 => vec![
            "goal".into(),
            "usage".into(),
            "--input".into(),
            TOKENS.to_string(),
        ],
        _ => vec!["todo".into(), "view".into()],
    };
    args
}

/// The session of worker `w`'s call `i`: blocks of four calls alternate
/// between the shared session and the worker's own.
fn session_of(w: usize, i: usize) -> String {
    if (i / 4).is_multiple_of(2) {
        "shared".to_owned()
    } else {
        format!("own-{w}")
    }
}

/// Runs every worker's calls at once.
fn race(env: &TestEnv) {
    thread::scope(|scope| {
        for w in 0..PROCESSES {
            scope.spawn(move || {
                for i in 0..CALLS {
                    let mut args = vec!["--session".to_owned(), session_of(w, i)];
                    args.extend(call(w, i));
                    let args: Vec<&str> = args.iter().map(String::as_str).collect();
                    let output = env.cmd(&args).output().expect("run goalkeeper");
                    assert!(
                        output.status.success() && output.stderr.is_empty(),
                        "worker {w} call {i} failed: {}",
                        render(&args, &output)
                    );
                }
            });
        }
    });
}

/// `(tasks, completed, version, todo events, usage events, tokens used)`
/// of `session`, read by a superuser straight from the tables.
fn counts(admin: &mut postgres::Client, session: &str) -> (i64, i64, i64, i64, i64, i64) {
    let row = admin
        .query_one(
            "SELECT (SELECT count(*) FROM tasks WHERE session_id = $1),
                    (SELECT count(*) FROM tasks WHERE session_id = $1 AND status = 'completed'),
                    (SELECT todo_version FROM sessions WHERE id = $1),
                    (SELECT count(*) FROM events WHERE session_id = $1 AND kind = 'todo' AND ok = 1),
                    (SELECT count(*) FROM events WHERE session_id = $1 AND op = 'usage' AND ok = 1),
                    (SELECT tokens_used FROM goals WHERE session_id = $1 ORDER BY id DESC LIMIT 1)",
            &[&session],
        )
        .unwrap();
    (0..6).map(|i| row.get::<_, i64>(i)).collect::<Vec<_>>()[..]
        .try_into()
        .map(|a: [i64; 6]| (a[0], a[1], a[2], a[3], a[4], a[5]))
        .unwrap()
}

/// The versions of `session`'s todo events, in log order: 1, 2, 3, … with
/// no gap and no repeat.
fn assert_contiguous(admin: &mut postgres::Client, session: &str) {
    let versions: Vec<i64> = admin
        .query(
            "SELECT version FROM events WHERE session_id = $1 AND kind = 'todo' ORDER BY id",
            &[&session],
        )
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    let expected: Vec<i64> = (1..=versions.len() as i64).collect();
    assert_eq!(versions, expected, "versions of {session}");
}

/// The expected counts of one session that got `blocks` blocks of four
/// calls (each an append, a completion, a usage report and a view).
fn expected(blocks: i64) -> (i64, i64, i64, i64, i64, i64) {
    (
        blocks,
        blocks,
        2 * blocks,
        2 * blocks,
        blocks,
        blocks * TOKENS as i64,
    )
}

#[test]
fn sixteen_processes_on_a_shared_and_their_own_sessions_lose_nothing() {
    let db = pg::database();
    sixteen_processes_lose_nothing(&TestEnv::on(&db.url()), &mut db.admin());
}

/// The race, through `env`'s URL (the server, or a pooler in front of it),
/// checked by `admin` on the server.
pub(crate) fn sixteen_processes_lose_nothing(env: &TestEnv, admin: &mut postgres::Client) {
    env.ok(&["--session", "shared", "goal", "set", "Ship", "it"]);
    for w in 0..PROCESSES {
        env.ok(&["--session", &format!("own-{w}"), "goal", "set", "Mine"]);
    }
    race(env);
    let blocks = CALLS.div_ceil(4);
    let shared_blocks = blocks.div_ceil(2) as i64;
    let own_blocks = (blocks / 2) as i64;
    assert_eq!(
        counts(admin, "shared"),
        expected(shared_blocks * PROCESSES as i64)
    );
    assert_contiguous(admin, "shared");
    for w in 0..PROCESSES {
        let own = format!("own-{w}");
        assert_eq!(counts(admin, &own), expected(own_blocks), "{own}");
        assert_contiguous(admin, &own);
    }
    // Each worker's tasks are in the shared list in the order it appended
    // them.
    let rows = admin
        .query(
            "SELECT content FROM tasks WHERE session_id = 'shared' ORDER BY phase_pos, pos",
            &[],
        )
        .unwrap();
    let contents: Vec<String> = rows.iter().map(|r| r.get(0)).collect();
    for w in 0..PROCESSES {
        let mine: Vec<&String> = contents
            .iter()
            .filter(|c| c.starts_with(&format!("w{w:02}-")))
            .collect();
        let expected: Vec<String> = (0..CALLS)
            .filter(|i| i.is_multiple_of(4) && session_of(w, *i) == "shared")
            .map(|i| format!("w{w:02}-c{i:03}"))
            .collect();
        assert_eq!(mine, expected.iter().collect::<Vec<_>>(), "worker {w}");
    }
    // Goal ids are distinct across the sessions.
    let ids: i64 = admin
        .query_one("SELECT count(DISTINCT id) FROM goals", &[])
        .unwrap()
        .get(0);
    assert_eq!(ids, PROCESSES as i64 + 1);
    // And the CLI reads what the tables hold.
    let view: serde_json::Value =
        serde_json::from_str(&env.ok(&["--session", "shared", "--json", "todo", "view"])).unwrap();
    assert_eq!(
        view["details"]["version"],
        2 * shared_blocks * PROCESSES as i64
    );
}
