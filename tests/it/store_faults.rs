//! Faults around the database, with real processes: the file
//! deleted or replaced under a running MCP server, a reader stuck holding
//! the WAL index, and hooks whose database or input does not answer.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::TestEnv;

struct Mcp {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    id: i64,
}

impl Mcp {
    fn start(env: &TestEnv) -> Mcp {
        let mut child = env
            .std_cmd(&["mcp"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (send, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if send.send(line).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take().unwrap();
        let mut mcp = Mcp {
            child,
            stdin,
            lines,
            id: 0,
        };
        mcp.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "t", "version": "0"}}),
        );
        writeln!(
            mcp.stdin,
            r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
        )
        .unwrap();
        mcp
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        self.id += 1;
        let line = json!({"jsonrpc": "2.0", "id": self.id, "method": method, "params": params});
        writeln!(self.stdin, "{line}").unwrap();
        self.stdin.flush().unwrap();
        let answer: Value = serde_json::from_str(
            &self
                .lines
                .recv_timeout(Duration::from_secs(60))
                .expect("an answer"),
        )
        .unwrap();
        assert_eq!(answer["id"], self.id);
        answer
    }

    /// A `todo` call: (is_error, text).
    fn todo(&mut self, arguments: Value) -> (bool, String) {
        let answer = self.request(
            "tools/call",
            json!({"name": "todo", "arguments": arguments}),
        );
        let result = &answer["result"];
        (
            result["isError"].as_bool().unwrap(),
            result["content"][0]["text"].as_str().unwrap().to_owned(),
        )
    }
}

impl Drop for Mcp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn side(env: &TestEnv, suffix: &str) -> std::path::PathBuf {
    let mut path = env.db().into_os_string();
    path.push(suffix);
    path.into()
}

fn gone_message(path: &std::path::Path, how: &str) -> String {
    format!(
        "goalkeeper could not run the todo call: {} was {how} while this process had the database open, so nothing was written \
         (it would have gone into a file nobody else sees); restart this process (for an MCP server, restart or reconnect the agent) \
         to open the database again",
        path.display()
    )
}

/// What a fresh process reads from the database path now.
fn tasks_on_disk(env: &TestEnv) -> Vec<String> {
    let view: Value = serde_json::from_str(&env.ok(&["--json", "todo", "view"])).unwrap();
    view["details"]["phases"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|p| p["tasks"].as_array().unwrap().clone())
        .map(|t| t["content"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn a_deleted_database_is_noticed_before_the_next_write() {
    let env = TestEnv::new();
    let mut mcp = Mcp::start(&env);
    assert!(!mcp.todo(json!({"op": "init", "items": ["First"]})).0);
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(side(&env, suffix));
    }
    let (is_error, text) = mcp.todo(json!({"op": "append", "phase": "Tasks", "items": ["Lost?"]}));
    assert!(is_error);
    assert_eq!(text, gone_message(&env.db(), "deleted"));
    // It stays refused; a fresh database at the path never sees the call.
    let (is_error, _) = mcp.todo(json!({"op": "append", "phase": "Tasks", "items": ["Again"]}));
    assert!(is_error);
    assert!(!env.db().exists(), "a database was made again at the path");
    let (is_error, text) = mcp.todo(json!({"op": "view"}));
    assert!(is_error, "{text}");
}

#[test]
fn a_replaced_database_is_noticed_before_the_next_write() {
    let env = TestEnv::new();
    let mut mcp = Mcp::start(&env);
    assert!(!mcp.todo(json!({"op": "init", "items": ["First"]})).0);
    // Another database moved over the file, as a restore would do.
    let other = env.dir().join("other.db");
    env.ok(&[
        "--db",
        &other.display().to_string(),
        "todo",
        "init",
        "--item",
        "Other",
    ]);
    std::fs::rename(&other, env.db()).unwrap();
    let (is_error, text) = mcp.todo(json!({"op": "append", "phase": "Tasks", "items": ["Lost?"]}));
    assert!(is_error);
    assert_eq!(text, gone_message(&env.db(), "replaced by another file"));
    assert!(!tasks_on_disk(&env).contains(&"Lost?".to_owned()));
}

#[test]
fn a_deleted_wal_is_noticed_before_the_next_write() {
    let env = TestEnv::new();
    let mut mcp = Mcp::start(&env);
    assert!(!mcp.todo(json!({"op": "init", "items": ["First"]})).0);
    let wal = side(&env, "-wal");
    assert!(wal.exists());
    std::fs::remove_file(&wal).unwrap();
    let (is_error, text) = mcp.todo(json!({"op": "append", "phase": "Tasks", "items": ["Lost?"]}));
    assert!(is_error);
    assert_eq!(text, gone_message(&wal, "deleted"));
    // Once the server is gone, a fresh process opens what is left: the call
    // refused above is not in it.
    drop(mcp);
    assert!(!tasks_on_disk(&env).contains(&"Lost?".to_owned()));
}

/// A python process holding, with fcntl, the WAL-index locks every reader
/// needs (what a process stuck while reading the database does), for
/// `seconds`. Returns once the locks are held.
fn stuck_reader(env: &TestEnv, seconds: f64) -> Child {
    let shm = side(env, "-shm");
    let script = format!(
        "import fcntl, os, sys, time\n\
         fd = os.open({shm:?}, os.O_RDWR)\n\
         fcntl.lockf(fd, fcntl.LOCK_EX, 5, 123)\n\
         print('locked', flush=True)\n\
         time.sleep({seconds})\n",
        shm = shm.display().to_string()
    );
    let mut child = std::process::Command::new("python3")
        .arg("-c")
        .arg(script)
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3");
    let mut line = String::new();
    BufReader::new(child.stdout.as_mut().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line, "locked\n");
    child
}

#[test]
fn a_writer_behind_a_stuck_reader_waits_past_sqlites_ten_seconds() {
    let env = TestEnv::new();
    env.ok(&["todo", "init", "--item", "First"]);
    // SQLite alone gives up after about 10 s with "locking protocol"; the
    // command keeps waiting, and goes through once the reader lets go.
    let mut reader = stuck_reader(&env, 13.0);
    let out = env
        .cmd(&["todo", "append", "--phase", "Tasks", "--item", "Second"])
        .output()
        .unwrap();
    reader.wait().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(tasks_on_disk(&env), ["First", "Second"]);
}

#[test]
fn a_writer_behind_a_reader_stuck_for_good_says_what_happened() {
    let env = TestEnv::new();
    env.ok(&["todo", "init", "--item", "First"]);
    let mut reader = stuck_reader(&env, 40.0);
    let out = env
        .cmd(&["todo", "append", "--phase", "Tasks", "--item", "Second"])
        .output()
        .unwrap();
    let _ = reader.kill();
    let _ = reader.wait();
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "goalkeeper: database error: locking protocol (another process kept the database's shared-memory index locked \
         for the whole wait: a process stuck or stopped while reading the database; end that process, then retry)\n"
    );
    assert_eq!(tasks_on_disk(&env), ["First"]);
}

/// A python process in the middle of a write transaction on the database
/// (what a process hung mid-command does), for `seconds`.
fn stuck_writer(env: &TestEnv, seconds: f64) -> Child {
    let script = format!(
        "import sqlite3, time\n\
         c = sqlite3.connect({db:?}, isolation_level=None, timeout=30)\n\
         c.execute('BEGIN IMMEDIATE')\n\
         print('locked', flush=True)\n\
         time.sleep({seconds})\n",
        db = env.db().display().to_string()
    );
    let mut child = std::process::Command::new("python3")
        .arg("-c")
        .arg(script)
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3");
    let mut line = String::new();
    BufReader::new(child.stdout.as_mut().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line, "locked\n");
    child
}

#[test]
fn a_hook_gives_up_well_inside_the_hosts_timeout() {
    let env = TestEnv::new();
    env.ok(&["goal", "set", "Ship it"]);
    env.ok(&["todo", "init", "--item", "First"]);
    let event = r#"{"hook_event_name":"UserPromptSubmit","session_id":"default","prompt":"go"}"#;
    let gave_up = "goalkeeper: gave up after 8000 ms (the database or the input did not answer in time); \
                   the hook did nothing, or its change was not confirmed\n";
    // Behind a stuck writer, behind a stuck reader, and with stdin the host
    // never closes: each time exit 0, nothing on stdout, within the 15 s
    // the installer gives the hook (it used to wait 39 s).
    for blocker in ["writer", "reader", "stdin"] {
        let mut holder = match blocker {
            "writer" => Some(stuck_writer(&env, 20.0)),
            "reader" => Some(stuck_reader(&env, 20.0)),
            _ => None,
        };
        let started = Instant::now();
        let mut child = env
            .std_cmd(&["hook", "claude-code"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        if blocker != "stdin" {
            stdin.write_all(event.as_bytes()).unwrap();
            drop(stdin);
        } else {
            stdin.write_all(b"{").unwrap();
            std::mem::forget(stdin);
        }
        let out = child.wait_with_output().unwrap();
        let took = started.elapsed();
        if let Some(holder) = &mut holder {
            let _ = holder.kill();
            let _ = holder.wait();
        }
        assert_eq!(out.status.code(), Some(0), "{blocker}");
        assert!(out.stdout.is_empty(), "{blocker}");
        assert_eq!(String::from_utf8_lossy(&out.stderr), gave_up, "{blocker}");
        assert!(took < Duration::from_secs(14), "{blocker}: {took:?}");
    }
    assert_eq!(tasks_on_disk(&env), ["First"]);
}

fn pointer(env: &TestEnv, cwd: &str) -> Option<String> {
    goalkeeper::Store::open(env.db())
        .unwrap()
        .admin()
        .pointer(&format!("claude-code:{cwd}"))
        .unwrap()
}

fn prompt_hook(env: &TestEnv, session: &str, cwd: &str, now_ms: i64) -> std::process::Output {
    let event = json!({"hook_event_name": "UserPromptSubmit", "session_id": session,
        "cwd": cwd, "prompt": "go"});
    env.cmd(&["hook", "claude-code"])
        .env("GOALKEEPER_NOW", now_ms.to_string())
        .write_stdin(event.to_string())
        .output()
        .unwrap()
}

#[test]
fn directory_pointers_are_bounded_and_cleaned() {
    let env = TestEnv::new();
    env.ok(&["--session", "s1", "todo", "init", "--item", "a"]);
    let out = prompt_hook(&env, "s1", "proj/a", env.now_ms);
    assert!(out.status.success());
    assert_eq!(pointer(&env, "proj/a").as_deref(), Some("s1"));

    // `session rm` takes the directory's pointer with it.
    env.ok(&["session", "rm", "s1"]);
    assert_eq!(pointer(&env, "proj/a"), None);

    // A 15 MB working directory is not stored.
    let huge = format!("/{}", "d".repeat(15 * 1024 * 1024));
    let out = prompt_hook(&env, "s2", &huge, env.now_ms);
    assert_eq!(out.status.code(), Some(0));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(
            "the working directory is longer than 4200 bytes; the session was not recorded for it"
        ),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(pointer(&env, &huge), None);
    let bytes: u64 = ["", "-wal"]
        .iter()
        .filter_map(|s| std::fs::metadata(side(&env, s)).ok())
        .map(|m| m.len())
        .sum();
    assert!(bytes < 1024 * 1024, "the database holds {bytes} bytes");

    // A pointer not set for 90 days goes when another is set.
    let day = 24 * 60 * 60 * 1000;
    assert!(
        prompt_hook(&env, "s3", "proj/old", env.now_ms)
            .status
            .success()
    );
    assert!(
        prompt_hook(&env, "s4", "proj/new", env.now_ms + 91 * day)
            .status
            .success()
    );
    assert_eq!(pointer(&env, "proj/old"), None);
    assert_eq!(pointer(&env, "proj/new").as_deref(), Some("s4"));
}

/// When the pointer was last written, straight from the database.
fn pointer_written_ms(env: &TestEnv, cwd: &str) -> i64 {
    rusqlite::Connection::open(env.db())
        .unwrap()
        .query_row(
            "SELECT updated_ms FROM pointers WHERE key = ?1",
            [format!("claude-code:{cwd}")],
            |r| r.get(0),
        )
        .unwrap()
}

#[test]
fn a_hook_event_that_finds_everything_as_it_was_writes_nothing() {
    let env = TestEnv::new();
    env.ok(&["--session", "s1", "todo", "init", "--item", "a"]);
    let (t0, minute) = (env.now_ms, 60 * 1000);
    for at in [t0, t0 + minute] {
        assert!(prompt_hook(&env, "s1", "proj/a", at).status.success());
    }
    assert_eq!(pointer_written_ms(&env, "proj/a"), t0);
    // Ten minutes on, the same session in the same directory, nothing else
    // changed either: the pointer is not written, and the event commits no
    // page at all.
    let wal = || std::fs::metadata(side(&env, "-wal")).map_or(0, |m| m.len());
    let before = wal();
    assert!(
        prompt_hook(&env, "s1", "proj/a", t0 + 10 * minute)
            .status
            .success()
    );
    assert_eq!(wal(), before);
    assert_eq!(pointer_written_ms(&env, "proj/a"), t0);
    // An hour on, it is written again, so its age stays known to the hour.
    assert!(
        prompt_hook(&env, "s1", "proj/a", t0 + 61 * minute)
            .status
            .success()
    );
    assert_eq!(pointer_written_ms(&env, "proj/a"), t0 + 61 * minute);
    // Another session in the directory is recorded at once.
    assert!(
        prompt_hook(&env, "s2", "proj/a", t0 + 62 * minute)
            .status
            .success()
    );
    assert_eq!(pointer(&env, "proj/a").as_deref(), Some("s2"));
    assert_eq!(pointer_written_ms(&env, "proj/a"), t0 + 62 * minute);
}

/// Each host's hook and the status line, started together behind a
/// process stuck mid-write and then behind one stuck reading the WAL
/// index: every hook exits 0 with nothing on stdout and says it gave up,
/// within Claude Code's 15 s (the shortest hook timeout the installers
/// set; Gemini CLI, Codex and pi get 30 s), and none of them wrote
/// anything. The status line, a read, answers at once behind the writer.
#[test]
fn every_hosts_hook_gives_up_inside_the_hook_timeout_and_writes_nothing() {
    let env = TestEnv::new();
    env.ok(&["goal", "set", "Ship it"]);
    env.ok(&["todo", "init", "--item", "First"]);
    let before = env.ok(&["--json", "todo", "view"]);
    let gave_up = "goalkeeper: gave up after 8000 ms (the database or the input did not answer in time); \
                   the hook did nothing, or its change was not confirmed\n";
    let hooks = [
        (
            "claude-code",
            json!({"hook_event_name": "UserPromptSubmit", "prompt": "go"}),
        ),
        (
            "gemini-cli",
            json!({"hook_event_name": "BeforeAgent", "prompt": "go"}),
        ),
        (
            "codex",
            json!({"hook_event_name": "UserPromptSubmit", "prompt": "go"}),
        ),
        (
            "pi",
            json!({"hook_event_name": "MessageEnd", "message_id": "m1",
                "usage": {"input": 100, "output": 50, "cache_read": 0, "cache_write": 0}}),
        ),
    ];
    for blocker in ["writer", "reader"] {
        let mut holder = match blocker {
            "writer" => stuck_writer(&env, 20.0),
            _ => stuck_reader(&env, 20.0),
        };
        let started = Instant::now();
        let spawn = |args: &[&str], input: String| {
            let mut child = env
                .std_cmd(args)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            child
                .stdin
                .take()
                .unwrap()
                .write_all(input.as_bytes())
                .unwrap();
            child
        };
        let children: Vec<(String, Child)> = hooks
            .iter()
            .map(|(host, event)| {
                let mut event = event.clone();
                event["session_id"] = "default".into();
                event["cwd"] = format!("work/{host}").into();
                (host.to_string(), spawn(&["hook", host], event.to_string()))
            })
            .chain([(
                "statusline".to_owned(),
                spawn(&["statusline"], r#"{"session_id":"default"}"#.to_owned()),
            )])
            .collect();
        for (what, child) in children {
            let out = child.wait_with_output().unwrap();
            let took = started.elapsed();
            assert_eq!(out.status.code(), Some(0), "{blocker} {what}");
            let stdout = String::from_utf8_lossy(&out.stdout);
            let stderr = String::from_utf8_lossy(&out.stderr);
            if what == "statusline" && blocker == "writer" {
                assert!(stdout.contains("todos 0/1"), "{stdout}{stderr}");
                assert!(stderr.is_empty(), "{stderr}");
            } else {
                assert!(stdout.is_empty(), "{blocker} {what}: {stdout}");
                assert_eq!(stderr, gave_up, "{blocker} {what}");
            }
            assert!(took < Duration::from_secs(14), "{blocker} {what}: {took:?}");
        }
        let _ = holder.kill();
        let _ = holder.wait();
    }
    // Nothing any of them would have written is there.
    assert_eq!(env.ok(&["--json", "todo", "view"]), before);
    let mut store = goalkeeper::Store::open(env.db()).unwrap();
    for (host, _) in &hooks {
        assert_eq!(
            store
                .admin()
                .pointer(&format!("{host}:work/{host}"))
                .unwrap(),
            None,
            "{host}"
        );
    }
    let goal: Value = serde_json::from_str(&env.ok(&["--json", "goal", "get"])).unwrap();
    assert_eq!(goal["details"]["goal"]["tokens_used"], 0);

    // The same events with nothing in the way do write: the pointers, and
    // pi's usage.
    for (host, event) in &hooks {
        let mut event = event.clone();
        event["session_id"] = "default".into();
        event["cwd"] = format!("work/{host}").into();
        let out = env
            .cmd(&["hook", host])
            .write_stdin(event.to_string())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{host}");
        assert_eq!(
            store
                .admin()
                .pointer(&format!("{host}:work/{host}"))
                .unwrap()
                .as_deref(),
            Some("default"),
            "{host}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let goal: Value = serde_json::from_str(&env.ok(&["--json", "goal", "get"])).unwrap();
    assert_eq!(goal["details"]["goal"]["tokens_used"], 150);
}

/// A command leaves closing its connection to its exit unless closing
/// folds the WAL back: across commands the WAL still grows to the
/// threshold (256 KiB), is folded back and deleted, and never grows far
/// past it; the data stays whole.
#[test]
fn commands_fold_the_wal_back_once_it_has_grown() {
    let env = TestEnv::new();
    let items: Vec<String> = (0..400).map(|i| format!("task number {i:04}")).collect();
    let mut init = vec!["todo", "init"];
    for item in &items {
        init.extend(["--item", item.as_str()]);
    }
    env.ok(&init);
    let wal = || std::fs::metadata(side(&env, "-wal")).ok().map(|m| m.len());
    let (mut folded, mut largest) = (0, 0);
    for i in 0..60 {
        env.ok(&["todo", "start", items[(i + 1) % 2].as_str()]);
        match wal() {
            None => folded += 1,
            Some(len) => largest = largest.max(len),
        }
    }
    assert!(folded >= 2, "folded back {folded} times");
    assert!(largest > 128 * 1024, "largest WAL {largest} bytes");
    assert!(largest < 512 * 1024, "largest WAL {largest} bytes");
    let conn = rusqlite::Connection::open(env.db()).unwrap();
    let check: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(check, "ok");
    let version: i64 = conn
        .query_row("SELECT todo_version FROM sessions", [], |r| r.get(0))
        .unwrap();
    assert_eq!(version, 61);
}
