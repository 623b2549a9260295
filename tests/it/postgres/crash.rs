//! Crash safety through PostgreSQL: CLI processes and the MCP server
//! SIGKILLed mid-write. Every acknowledged write is in the database, the
//! killed one is there whole or not at all, the list's versions stay
//! contiguous, and the next command works (no lock is left behind: the
//! server ends a dead client's transaction and its advisory lock).

use std::time::{Duration, Instant};

use serde_json::json;

use crate::common::pg;
use crate::common::{TestEnv, render};
use crate::mcp::{Server, is_error};

/// Kills that must land on a live process.
const KILLS: usize = 16;
const MAX_ROUNDS: usize = 200;

/// A small xorshift generator seeded from the clock; the seed is printed.
struct Rng(u64);

impl Rng {
    fn new() -> Rng {
        let seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64)
            | 1;
        eprintln!("postgres crash: seed {seed}");
        Rng(seed)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// Waits until no other client is connected to the test database. A
/// SIGKILLed client may have sent its COMMIT before it died; the server
/// still carries it out, and only then sees the closed socket and ends the
/// backend. Reading before that can see the commit land halfway through
/// the reads.
fn settle(admin: &mut postgres::Client) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let others: i64 = admin
            .query_one(
                "SELECT count(*) FROM pg_stat_activity \
                 WHERE datname = current_database() AND backend_type = 'client backend' \
                 AND pid <> pg_backend_pid()",
                &[],
            )
            .unwrap()
            .get(0);
        if others == 0 {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{others} killed clients' backends still running after 30 s"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The session's task contents in list order, its version, and the
/// versions of its todo events in log order, read in one snapshot once the
/// killed client's backend has ended.
fn state(admin: &mut postgres::Client, session: &str) -> (Vec<String>, i64, Vec<i64>) {
    settle(admin);
    let mut admin = admin
        .build_transaction()
        .isolation_level(postgres::IsolationLevel::RepeatableRead)
        .read_only(true)
        .start()
        .unwrap();
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
    admin.commit().unwrap();
    (tasks, version, versions)
}

/// Checks the invariants after a kill: the acknowledged tasks, then at
/// most the killed ones (in order), versions 1..=N.
fn check(
    admin: &mut postgres::Client,
    session: &str,
    acked: &[String],
    pending: &[String],
) -> usize {
    let (tasks, version, versions) = state(admin, session);
    assert!(
        tasks.len() >= acked.len() && tasks[..acked.len()] == *acked,
        "an acknowledged write is missing: acked {acked:?}, stored {tasks:?}"
    );
    let extra = &tasks[acked.len()..];
    assert!(
        extra.len() <= pending.len() && *extra == pending[..extra.len()],
        "stored beyond the acknowledged: {extra:?}, in flight {pending:?}"
    );
    assert_eq!(version, tasks.len() as i64, "one version per append");
    assert_eq!(
        versions,
        (1..=version).collect::<Vec<_>>(),
        "contiguous versions"
    );
    extra.len()
}

fn append(item: &str) -> String {
    json!({"op": "append", "phase": "Stream", "items": [item]}).to_string()
}

#[test]
fn cli_processes_killed_mid_write_lose_no_acknowledged_write() {
    let db = pg::database();
    let env = TestEnv::on(&db.url());
    let mut admin = db.admin();
    let mut rng = Rng::new();
    let mut acked: Vec<String> = Vec::new();
    let (mut kills, mut rounds, mut landed) = (0, 0, 0);
    while kills < KILLS && rounds < MAX_ROUNDS {
        rounds += 1;
        let item = format!("acked {rounds}");
        let args = ["--session", "crash", "todo", "apply", &append(&item)];
        let started = Instant::now();
        let output = env.cmd(&args).output().unwrap();
        // Kill the next call somewhere within the time this one took, so
        // the kill lands on a live process however fast the machine is.
        let took = started.elapsed().as_micros() as u64;
        assert!(output.status.success(), "{}", render(&args, &output));
        acked.push(item);
        let victim = format!("killed {rounds}");
        let mut child = env
            .std_cmd(&["--session", "crash", "todo", "apply", &append(&victim)])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_micros(rng.below(took.max(1))));
        let alive = child.try_wait().unwrap().is_none();
        child.kill().ok();
        let status = child.wait().unwrap();
        if alive {
            kills += 1;
        }
        if check(&mut admin, "crash", &acked, std::slice::from_ref(&victim)) == 1 {
            // It committed (before the signal, or it finished): from now
            // on it is part of the list like an acknowledged write.
            acked.push(victim);
            landed += 1;
        } else {
            assert!(alive || !status.success(), "a call that exited 0 is stored");
        }
    }
    eprintln!(
        "postgres crash (CLI): {rounds} rounds, {kills} kills of a live process, {landed} killed calls committed"
    );
    assert!(
        kills >= KILLS,
        "only {kills} kills hit a live process in {rounds} rounds"
    );
}

#[test]
fn the_mcp_server_killed_mid_write_loses_no_acknowledged_write() {
    const ROUNDS: usize = 8;
    const CALLS: usize = 8;
    let db = pg::database();
    let env = TestEnv::on(&db.url());
    let mut admin = db.admin();
    let mut rng = Rng::new();
    let mut acked: Vec<String> = Vec::new();
    let mut cut_short = 0;
    for round in 0..ROUNDS {
        let mut server = Server::start(&env, "crash");
        let mut sent = Vec::new();
        let mut ids = Vec::new();
        for call in 0..CALLS {
            let item = format!("round {round} call {call}");
            ids.push(server.send_call(
                "todo",
                json!({"op": "append", "phase": "Stream", "items": [item.clone()]}),
            ));
            sent.push(item);
        }
        std::thread::sleep(Duration::from_micros(rng.below(60_000)));
        server.kill();
        let answered: Vec<serde_json::Value> = server.drain(Duration::from_millis(200));
        // What the server acknowledged before it died: a result, not an error.
        let mut acknowledged = 0;
        for (n, id) in ids.iter().enumerate() {
            if let Some(reply) = answered.iter().find(|m| m["id"] == *id) {
                assert!(!is_error(&reply["result"]), "{reply}");
                assert_eq!(acknowledged, n, "replies come in order");
                acknowledged += 1;
            }
        }
        let mut expected = acked.clone();
        expected.extend(sent[..acknowledged].iter().cloned());
        let extra = check(&mut admin, "crash", &expected, &sent[acknowledged..]);
        if acknowledged + extra < CALLS {
            cut_short += 1;
        }
        acked = expected;
        acked.extend(sent[acknowledged..acknowledged + extra].iter().cloned());
    }
    eprintln!("postgres crash (MCP): {cut_short} of {ROUNDS} rounds killed before the last call");
    assert!(
        cut_short > 0,
        "no kill landed before the server finished its calls"
    );
    // And the next server works on what is there.
    let started = Instant::now();
    let mut server = Server::start(&env, "crash");
    let view = server.call("todo", json!({"op": "view"}));
    assert!(!is_error(&view), "{view}");
    assert!(started.elapsed() < Duration::from_secs(30));
}
