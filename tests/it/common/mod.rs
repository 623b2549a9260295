//! Helpers shared by the integration tests.
//!
//! - End-to-end: [`TestEnv`] runs the real binary on a temporary database
//!   and working directory with a fixed clock, and [`render`] shows stdout,
//!   stderr and the exit status together for snapshots.
//! - Library: a store, a call as the agent or the user would send it, and
//!   the list written out compactly. Every helper that expects a rejection
//!   also checks the atomicity rule of DESIGN.md §2.2: the stored list is
//!   byte-identical and the version unchanged.

pub mod strategies;

#[cfg(feature = "postgres")]
pub mod pg;
#[cfg(feature = "postgres")]
pub mod pgbouncer;

use goalkeeper::store::Caller;
use goalkeeper::todo::{self, Actor, Call, Phase, Status, Task, TodoList, TodoResult};
use goalkeeper::{AgentName, SessionId, Store};
use std::path::{Path, PathBuf};
use std::process::Output;

/// 2025-11-29T18:40:00Z, the fixed clock of every test.
pub const NOW_MS: i64 = 1_764_441_600_000;

/// A temporary home for one test: database, working directory, clock.
pub struct TestEnv {
    dir: tempfile::TempDir,
    pub now_ms: i64,
    /// A `postgres://` URL instead of the SQLite file (fleet mode tests).
    url: Option<String>,
}

impl TestEnv {
    pub fn new() -> TestEnv {
        let dir = tempfile::tempdir().expect("temp dir");
        // An empty settings file: defaults, whatever the developer's own
        // config says.
        std::fs::write(dir.path().join("config.toml"), "").expect("config");
        TestEnv {
            dir,
            now_ms: NOW_MS,
            url: None,
        }
    }

    /// The same, with the database at `url` (PostgreSQL) instead of a
    /// SQLite file in the temporary directory.
    pub fn on(url: &str) -> TestEnv {
        TestEnv {
            url: Some(url.to_owned()),
            ..TestEnv::new()
        }
    }

    /// What every command is given as `GOALKEEPER_DB`: the URL, or the
    /// SQLite file's path.
    pub fn location(&self) -> String {
        self.url
            .clone()
            .unwrap_or_else(|| self.db().display().to_string())
    }

    /// The working directory of every command.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    pub fn db(&self) -> PathBuf {
        self.dir.path().join("goalkeeper.db")
    }

    /// Creates the test's SQLite database, empty, for a test whose first
    /// command only reads (such a command creates none).
    pub fn create_database(&self) {
        if self.url.is_none() {
            drop(Store::open(self.db()).expect("the test database opens"));
        }
    }

    /// A command with the test's database, clock and directory, started
    /// from a cleared environment: nothing from the developer's shell
    /// (`GOALKEEPER_SESSION`, `RUST_BACKTRACE`, `HOME`, ...) reaches it.
    /// Add what a test needs with `.env(...)`.
    pub fn cmd(&self, args: &[&str]) -> assert_cmd::Command {
        assert_cmd::Command::from_std(self.std_cmd(args))
    }

    /// The same command as [`TestEnv::cmd`], as a plain `std` command, for
    /// tests that spawn a process and signal it.
    pub fn std_cmd(&self, args: &[&str]) -> std::process::Command {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_goalkeeper"));
        cmd.args(args)
            .current_dir(self.dir.path())
            .env_clear()
            .env("GOALKEEPER_DB", self.location())
            .env("GOALKEEPER_NOW", self.now_ms.to_string())
            .env("GOALKEEPER_CONFIG", self.dir.path().join("config.toml"));
        cmd
    }

    /// `text` with the test's temporary directory written as `<tmp>`, so
    /// a snapshot does not depend on where the test ran.
    pub fn normalize(&self, text: &str) -> String {
        text.replace(&self.dir().display().to_string(), "<tmp>")
    }

    /// Runs a command and renders it for a snapshot.
    pub fn run(&self, args: &[&str]) -> String {
        render(args, &self.cmd(args).output().expect("run"))
    }

    /// Runs a command with `stdin` and renders it for a snapshot.
    pub fn run_stdin(&self, args: &[&str], stdin: &str) -> String {
        let output = self
            .cmd(args)
            .write_stdin(stdin.as_bytes().to_vec())
            .output()
            .expect("run");
        render(args, &output)
    }

    /// Runs a command and returns its stdout, asserting it succeeded.
    pub fn ok(&self, args: &[&str]) -> String {
        let output = self.cmd(args).output().expect("run");
        assert!(output.status.success(), "{}", render(args, &output));
        String::from_utf8(output.stdout).expect("utf-8 stdout")
    }

    /// `todo view` of `session` as the `--json` result, asserting it
    /// succeeded.
    pub fn view_json(&self, session: &str) -> serde_json::Value {
        let view = self.ok(&[
            "--session",
            session,
            "--json",
            "todo",
            "apply",
            r#"{"op":"view"}"#,
        ]);
        serde_json::from_str(&view).expect("the view's JSON")
    }
}

/// `$ goalkeeper ARGS`, stdout, `--- stderr ---` and stderr when there is
/// any, and `[exit status: N]`.
pub fn render(args: &[&str], output: &Output) -> String {
    let mut text = format!("$ goalkeeper {}\n", shell_words(args));
    text.push_str(&String::from_utf8_lossy(&output.stdout));
    if !output.stderr.is_empty() {
        text.push_str("--- stderr ---\n");
        text.push_str(&String::from_utf8_lossy(&output.stderr));
    }
    text.push_str(&format!(
        "[exit status: {}]\n",
        output
            .status
            .code()
            .map_or("signal".to_owned(), |c| c.to_string())
    ));
    text
}

fn shell_words(args: &[&str]) -> String {
    args.iter()
        .map(|a| {
            if !a.is_empty()
                && a.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=:,".contains(c))
            {
                (*a).to_owned()
            } else {
                format!("'{}'", a.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Asserts a snapshot stored in the top-level `snapshots/` directory.
#[macro_export]
macro_rules! assert_snapshot {
    ($name:expr, $value:expr) => {
        insta::with_settings!({
            snapshot_path => concat!(env!("CARGO_MANIFEST_DIR"), "/snapshots"),
            prepend_module_to_snapshot => false,
            omit_expression => true,
        }, {
            insta::assert_snapshot!($name, $value);
        })
    };
}

// ---- Library-level helpers (the todo acceptance tests) ----
/// The clock every test uses.
pub const NOW: i64 = 1_764_441_600_000;

/// A fresh in-memory store.
pub fn store() -> Store {
    Store::open_in_memory().expect("an in-memory store opens")
}

/// The session the tests act on.
pub fn session() -> SessionId {
    SessionId::parse("s").unwrap()
}

/// Sends one JSON call, whatever its outcome.
pub fn call(store: &mut Store, json: &str, actor: Actor) -> TodoResult {
    store
        .todo(
            &session(),
            Call::Json(json),
            actor,
            &mut Caller::default(),
            NOW,
        )
        .expect("the store works")
}

/// Sends one JSON call by `caller`, whatever its outcome.
pub fn call_by(store: &mut Store, caller: &mut Caller, json: &str, actor: Actor) -> TodoResult {
    store
        .todo(&session(), Call::Json(json), actor, caller, NOW)
        .expect("the store works")
}

/// A caller whose agent calls are the named agent `name`'s (`None`: the
/// session's own agent), with a 10-minute lease.
pub fn caller_as(name: Option<&str>) -> Caller {
    let mut caller = Caller::default();
    caller.act_as(name.map(|n| AgentName::parse(n).unwrap().unwrap()), 600);
    caller
}

/// Sends one JSON call as `caller`'s agent and expects it to succeed.
pub fn agent_by(store: &mut Store, caller: &mut Caller, json: &str) -> TodoResult {
    let result = call_by(store, caller, json, Actor::Agent);
    assert!(!result.is_error, "{json}: {}", result.text());
    result
}

/// Sends one JSON call as the agent and expects it to succeed.
pub fn agent(store: &mut Store, json: &str) -> TodoResult {
    succeeds(store, json, Actor::Agent)
}

/// Sends one JSON call as the user and expects it to succeed.
pub fn user(store: &mut Store, json: &str) -> TodoResult {
    succeeds(store, json, Actor::User)
}

fn succeeds(store: &mut Store, json: &str, actor: Actor) -> TodoResult {
    let result = call(store, json, actor);
    assert!(!result.is_error, "{json} failed:\n{}", result.text());
    result
}

/// Sends one JSON call that must be rejected and returns every error, as
/// the pure engine reports them. Checks that the store kept the list and
/// its version, that the result shows the list as it was, and that the
/// summary leads with the same errors.
pub fn rejected(store: &mut Store, json: &str, actor: Actor) -> Vec<String> {
    let (before, version) = store.read(&session(), |tx| tx.todo_list()).unwrap();
    let outcome = todo::run(before.clone(), Call::Json(json), actor);
    assert!(
        !outcome.errors.is_empty(),
        "{json} was expected to fail but succeeded"
    );
    let result = call(store, json, actor);
    assert!(
        result.is_error,
        "{json}: the result is not flagged as an error"
    );
    let (after, version_after) = store.read(&session(), |tx| tx.todo_list()).unwrap();
    assert_eq!(json_of(&after), json_of(&before), "{json} changed the list");
    assert_eq!(version_after, version, "{json} changed the version");
    assert_eq!(result.details.phases, before, "{json}: the result list");
    assert_eq!(result.details.version, version);
    assert!(result.details.completed_tasks.is_empty());
    let first_line = result.text().lines().next().unwrap();
    assert_eq!(
        first_line,
        format!("Errors: {}", outcome.errors.join("; ")),
        "{json}: the summary's error line"
    );
    outcome.errors
}

/// The one error of a rejected call.
pub fn error(store: &mut Store, json: &str, actor: Actor) -> String {
    let errors = rejected(store, json, actor);
    assert_eq!(
        errors.len(),
        1,
        "{json}: expected one error, got {errors:#?}"
    );
    errors.into_iter().next().unwrap()
}

/// The stored list of the test session.
pub fn list(store: &mut Store) -> TodoList {
    store.read(&session(), |tx| tx.todo_list()).unwrap().0
}

/// The stored version of the test session's list.
pub fn version(store: &mut Store) -> i64 {
    store.read(&session(), |tx| tx.todo_list()).unwrap().1
}

/// The stored list, written compactly:
/// `Foundation: [x] Build core, [/] Add edge cases | Verification: [ ] Run tests`,
/// with a blocker note as `[!] Get key (waiting)` and a user drop as
/// `[-] Old idea (dropped by user)`.
pub fn tasks(store: &mut Store) -> String {
    show(&list(store))
}

/// [`tasks`] for any list.
pub fn show(list: &TodoList) -> String {
    list.phases
        .iter()
        .map(|phase| {
            let tasks: Vec<String> = phase
                .tasks
                .iter()
                .map(|t| {
                    let mut line = format!("[{}] {}", t.status.marker(), t.content);
                    if let Some(note) = &t.blocker {
                        line.push_str(&format!(" ({note})"));
                    }
                    if t.dropped_by.is_some() {
                        line.push_str(" (dropped by user)");
                    }
                    line
                })
                .collect();
            format!("{}: {}", phase.name, tasks.join(", "))
                .trim_end()
                .to_owned()
        })
        .collect::<Vec<_>>()
        .join(" | ")
}

/// The list as stored: the byte-level identity used by the atomicity checks.
pub fn json_of(list: &TodoList) -> String {
    serde_json::to_string(list).unwrap()
}

/// How many tasks are `in_progress`.
pub fn in_progress_count(list: &TodoList) -> usize {
    list.tasks()
        .filter(|(_, t)| t.status == Status::InProgress)
        .count()
}

/// A store holding the two-phase plan most tests start from:
/// `Foundation: [/] Build core, [ ] Add edge cases | Verification: [ ] Run tests, [ ] Write docs`.
pub fn planned() -> Store {
    plan(store())
}

/// [`planned`] on a given store.
pub fn plan(mut store: Store) -> Store {
    agent(
        &mut store,
        r#"{"op":"init","list":[
            {"phase":"Foundation","items":["Build core","Add edge cases"]},
            {"phase":"Verification","items":["Run tests","Write docs"]}]}"#,
    );
    store
}

/// The contents of the tasks reported as completed by a call.
pub fn completed(result: &TodoResult) -> Vec<String> {
    result
        .details
        .completed_tasks
        .iter()
        .map(|c| format!("{}/{}", c.phase, c.content))
        .collect()
}

/// What [`mixed`] holds: one task in every state a bulk op must tell apart.
pub const MIXED: &str =
    "Work: [x] a, [-] b, [!] c (waiting), [/] d, [ ] e, [-] f (dropped by user) | Other: [ ] o";

/// A store whose `Work` phase holds a completed task, an agent-abandoned
/// one, a blocked one with a note, the active one, a pending one and a
/// user-dropped one; `Other` holds one pending task. See [`MIXED`].
pub fn mixed() -> Store {
    mix(store())
}

/// [`mixed`] on a given store.
pub fn mix(mut store: Store) -> Store {
    agent(
        &mut store,
        r#"{"op":"init","list":[
            {"phase":"Work","items":["a","b","c","d","e","f"]},
            {"phase":"Other","items":["o"]}]}"#,
    );
    agent(&mut store, r#"{"op":"done","task":"a"}"#);
    agent(&mut store, r#"{"op":"drop","task":"b"}"#);
    agent(
        &mut store,
        r#"{"op":"block","task":"c","reason":"waiting"}"#,
    );
    user(&mut store, r#"{"op":"drop","task":"f"}"#);
    assert_eq!(tasks(&mut store), MIXED);
    store
}

/// A task in `status`, with no notes.
pub fn task(content: &str, status: Status) -> Task {
    let mut task = Task::pending(content);
    task.set_status(status);
    task
}

/// A phase holding `tasks`.
pub fn phase(name: &str, tasks: Vec<Task>) -> Phase {
    Phase {
        name: name.into(),
        tasks,
    }
}

/// A SQLite database made read-only to every process, root's included, and
/// with no capability (file modes do not stop root; `chattr +i` needs one):
/// the header's write version (byte 18) is set past any SQLite writes,
/// which SQLite opens read-only, as it opens a file it may not write
/// ("attempt to write a readonly database"). Dropping it sets the byte back.
pub struct ReadOnlyDatabase(PathBuf);

impl ReadOnlyDatabase {
    /// Folds the database's WAL into the file (so its header is the one
    /// read), then marks it.
    pub fn new(path: &Path) -> ReadOnlyDatabase {
        let conn = rusqlite::Connection::open(path).expect("the database opens");
        conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| {
            r.get::<_, i64>(0)
        })
        .expect("the WAL is folded into the file");
        drop(conn);
        set_write_version(path, 3);
        ReadOnlyDatabase(path.to_owned())
    }
}

impl Drop for ReadOnlyDatabase {
    fn drop(&mut self) {
        set_write_version(&self.0, 2);
    }
}

fn set_write_version(path: &Path, version: u8) {
    use std::io::{Seek, SeekFrom, Write};
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .expect("the database file opens");
    file.seek(SeekFrom::Start(18)).unwrap();
    file.write_all(&[version]).unwrap();
}
