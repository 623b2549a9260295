//! Real-host tests: each host CLI, installed from npm at a pinned version
//! (`scripts/install-host.sh`), runs headless against the scripted model
//! server on 127.0.0.1 ([`mock`]) after `goalkeeper install <host>` into a
//! temporary [`World`]: a project with its own home directory and
//! database. The tests assert on the request bodies the model received and
//! on the store.
//!
//! They need the hosts, so they are ignored by a plain `cargo test`;
//! `.ci/run` installs the hosts and runs them with `--ignored`. A host that
//! is missing then fails the test with the command that installs it
//! (Claude Code's tests skip instead, outside CI).

mod claude_code;
mod codex;
mod gemini_cli;
mod mock;
mod packages;
mod pi;
mod proving;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

use goalkeeper::goal::Goal;
use goalkeeper::todo::TodoList;
use goalkeeper::{SessionId, Store};
use serde_json::{Value, json};

use mock::{Step, Usage, text, tool, usage};

/// The name of [`bin_dir`], with a space in it.
pub const BIN_DIR: &str = "goalkeeper bin";

/// A directory whose path has a space, holding a link to the goalkeeper
/// binary under test (and nothing else), shared by every test of this
/// run: what a host's shell finds on `PATH`.
pub fn bin_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(BIN_DIR);
        std::fs::create_dir_all(&dir).expect("bin dir");
        let fresh = dir.join(format!("goalkeeper.{}", std::process::id()));
        let _ = std::fs::remove_file(&fresh);
        let exe = Path::new(env!("CARGO_BIN_EXE_goalkeeper"));
        if std::fs::hard_link(exe, &fresh).is_err() {
            std::fs::copy(exe, &fresh).expect("copy the goalkeeper binary");
        }
        // Renamed into place, so parallel test processes never see a
        // half-written file.
        std::fs::rename(&fresh, dir.join("goalkeeper")).expect("rename the goalkeeper binary");
        dir
    })
}

/// A pinned host from npm.
pub struct Host {
    /// The name `install` and `--session-from` use.
    pub name: &'static str,
    /// The npm package.
    pub package: &'static str,
    /// The pinned version (also in `scripts/install-host.sh`).
    pub version: &'static str,
    /// The executable under `node_modules/.bin`.
    pub bin: &'static str,
    /// An environment variable that points at another executable.
    pub bin_var: &'static str,
}

impl Host {
    /// The host's executable, if installed: `$<bin_var>`, else the npm
    /// cache of `scripts/install-host.sh`.
    pub fn find(&self) -> Option<PathBuf> {
        if let Some(path) = std::env::var_os(self.bin_var) {
            return Some(PathBuf::from(path));
        }
        let cache = match std::env::var_os("XDG_CACHE_HOME") {
            Some(dir) => PathBuf::from(dir),
            None => PathBuf::from(std::env::var_os("HOME")?).join(".cache"),
        };
        let path = cache
            .join("goalkeeper/npm")
            .join(format!("{}-{}", self.name, self.version))
            .join("node_modules/.bin")
            .join(self.bin);
        path.exists().then_some(path)
    }

    /// [`Host::find`]; panics with the install command when the host is
    /// missing.
    pub fn executable(&self) -> PathBuf {
        self.find().unwrap_or_else(|| {
            panic!(
                "{} {} is not installed; run `scripts/install-host.sh {}` (or set {})",
                self.package, self.version, self.name, self.bin_var
            )
        })
    }
}

/// One test's world: a project directory, a home directory for the host,
/// and a goalkeeper database, all temporary, and the environment every
/// process of the test gets (the host, its hooks and MCP servers, and
/// goalkeeper run by the test).
pub struct World {
    dir: tempfile::TempDir,
    project: PathBuf,
    db: PathBuf,
    /// `PATH`.
    path: OsString,
    /// The goalkeeper the test runs.
    goalkeeper: PathBuf,
    /// The rest of the environment.
    env: Vec<(&'static str, OsString)>,
}

impl Default for World {
    fn default() -> World {
        World::new()
    }
}

impl World {
    /// A world in `project/` whose goalkeeper keeps its database and an
    /// empty settings file in the temporary directory, named by
    /// `GOALKEEPER_DB` and `GOALKEEPER_CONFIG`; `PATH` is the test's.
    pub fn new() -> World {
        World::with_db_in(tempfile::tempdir().expect("temp dir"), None)
    }

    /// A world as [`World::new`], but outside the system's temporary
    /// directory (under the build's `target/tmp`), whose `TMPDIR` is a
    /// directory of its own beside the home: a host that refuses to set
    /// up its sandbox helpers under a temporary directory (Codex) runs
    /// its shell as it does on a user's machine.
    pub fn outside_tmp() -> World {
        let parent = Path::new(env!("CARGO_TARGET_TMPDIR")).join("worlds");
        std::fs::create_dir_all(&parent).expect("mkdir");
        let dir = tempfile::tempdir_in(&parent).expect("temp dir");
        let tmp = dir.path().join("tmp");
        std::fs::create_dir(&tmp).expect("mkdir");
        World::with_db_in(dir, Some(tmp))
    }

    fn with_db_in(dir: tempfile::TempDir, tmp: Option<PathBuf>) -> World {
        let mut world = World::in_dir(dir, "project");
        let root = world.root().to_owned();
        std::fs::write(root.join("config.toml"), "").expect("config");
        world.db = root.join("goalkeeper.db");
        world.env = vec![
            ("GOALKEEPER_DB", world.db.clone().into()),
            ("GOALKEEPER_CONFIG", root.join("config.toml").into()),
            ("TMPDIR", tmp.unwrap_or(root).into()),
            ("LANG", "C.UTF-8".into()),
        ];
        world
    }

    /// A world in the directory `project` whose goalkeeper finds its
    /// database and settings at their default places in the temporary
    /// home, as a user's does.
    pub fn at_default_places(project: &str) -> World {
        World::in_dir(tempfile::tempdir().expect("temp dir"), project)
    }

    fn in_dir(dir: tempfile::TempDir, project: &str) -> World {
        let project = dir.path().join(project);
        std::fs::create_dir(&project).expect("mkdir");
        let home = dir.path().join("home");
        std::fs::create_dir(&home).expect("mkdir");
        World {
            db: home.join(".local/share/goalkeeper/goalkeeper.db"),
            dir,
            project,
            path: std::env::var_os("PATH").unwrap_or_default(),
            goalkeeper: PathBuf::from(env!("CARGO_BIN_EXE_goalkeeper")),
            env: Vec::new(),
        }
    }

    /// Runs every process with `path` as `PATH` and `goalkeeper` as the
    /// goalkeeper the test runs.
    pub fn with_path(mut self, path: impl Into<OsString>, goalkeeper: PathBuf) -> World {
        self.path = path.into();
        self.goalkeeper = goalkeeper;
        self
    }

    /// Runs every process with [`bin_dir`] first on `PATH` (the test's
    /// `PATH` after it) and goalkeeper from there: a command the model
    /// runs through a host's shell tool finds `goalkeeper`.
    pub fn with_goalkeeper_on_path(self) -> World {
        let path = format!("{}:{}", bin_dir().display(), self.path.to_string_lossy());
        self.with_path(path, bin_dir().join("goalkeeper"))
    }

    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    pub fn project(&self) -> PathBuf {
        self.project.clone()
    }

    pub fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    /// goalkeeper's database.
    pub fn db(&self) -> PathBuf {
        self.db.clone()
    }

    /// `program` in the project directory, from a cleared environment:
    /// the temporary home, `PATH` and the world's variables.
    pub fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut cmd = Command::new(program);
        cmd.env_clear()
            .current_dir(&self.project)
            .env("HOME", self.home())
            .env("PATH", &self.path);
        for (key, value) in &self.env {
            cmd.env(key, value);
        }
        cmd
    }

    /// goalkeeper with `args`, as the user runs it in the project.
    pub fn goalkeeper_cmd(&self, args: &[&str]) -> Command {
        let mut cmd = self.command(&self.goalkeeper);
        cmd.args(args);
        cmd
    }

    /// Runs goalkeeper with `args` (no stdin); returns its output.
    pub fn goalkeeper(&self, args: &[&str]) -> Output {
        self.goalkeeper_cmd(args)
            .stdin(Stdio::null())
            .output()
            .expect("run goalkeeper")
    }

    /// Runs goalkeeper and returns its stdout, asserting it succeeded.
    pub fn goalkeeper_ok(&self, args: &[&str]) -> String {
        let output = self.goalkeeper(args);
        assert!(
            output.status.success(),
            "goalkeeper {args:?} failed:\n{}",
            show(&output)
        );
        String::from_utf8(output.stdout).expect("utf-8")
    }

    /// Queues the goal "Ship the parser" with a budget of 1000 for the
    /// next session `host` starts here, before it ever ran here.
    pub fn queue_goal(&self, host: &str) {
        let out = self.goalkeeper_ok(&[
            "--session-from",
            host,
            "goal",
            "set",
            "Ship the parser",
            "--budget",
            "1000",
        ]);
        assert!(out.contains("Queued for"), "{out}");
    }

    /// The store, opened for assertions.
    pub fn store(&self) -> Store {
        Store::open(self.db()).expect("the database opens")
    }

    /// The goal of `session`.
    pub fn goal(&self, session: &str) -> Option<Goal> {
        let session = SessionId::parse(session).expect("a session id");
        self.store().read(&session, |tx| tx.goal()).expect("goal")
    }

    /// The todo list of `session`.
    pub fn todos(&self, session: &str) -> TodoList {
        let session = SessionId::parse(session).expect("a session id");
        self.store()
            .read(&session, |tx| tx.todo_list())
            .expect("list")
            .0
    }

    /// The session `host` last ran in the project, as its hooks recorded
    /// it for `--session-from`.
    pub fn last_session(&self, host: &str) -> Option<String> {
        let key = format!("{host}:{}", self.project.display());
        self.store().admin().pointer(&key).expect("pointer")
    }

    /// The one session the host ran in, with its goal and list.
    pub fn only_session(&self) -> (SessionId, Option<Goal>, TodoList) {
        let mut store = self.store();
        let sessions = store.admin().sessions().expect("sessions");
        let ids: Vec<_> = sessions.iter().map(|s| s.id.clone()).collect();
        assert_eq!(ids.len(), 1, "expected one session, found {ids:?}");
        let session = SessionId::parse(&ids[0]).expect("a session id");
        let goal = store.read(&session, |tx| tx.goal()).expect("goal");
        let (list, _) = store.read(&session, |tx| tx.todo_list()).expect("list");
        (session, goal, list)
    }
}

/// stdout and stderr of a process, for failure messages.
pub fn show(output: &Output) -> String {
    format!(
        "[exit status: {:?}]\n--- stdout ---\n{}\n--- stderr ---\n{}",
        output.status.code(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// Where the hook commands of [`HookLog::command`] leave each event a host
/// sends them: one file per event, named by the event and the time.
pub struct HookLog {
    dir: PathBuf,
}

impl HookLog {
    /// A log in `hook-log/` of the world's temporary directory.
    pub fn new(world: &World) -> HookLog {
        let dir = world.root().join("hook-log");
        std::fs::create_dir_all(&dir).expect("mkdir");
        HookLog { dir }
    }

    /// A shell command that saves its stdin (the event as the host sent
    /// it) as the next event `name`.
    pub fn command(&self, name: &str) -> String {
        format!("cat > '{}/{name}-'$(date +%s%N).json", self.dir.display())
    }

    /// A [`HookLog::command`] that also keeps a copy of the file the
    /// event's `transcript_path` names, as it was when the hook ran (see
    /// [`HookLog::transcripts`]).
    pub fn command_with_transcript(&self, name: &str) -> String {
        format!(
            "f='{}/{name}-'$(date +%s%N); cat > \"$f.json\"; \
             cp \"$(sed -n 's/.*\"transcript_path\": *\"\\([^\"]*\\)\".*/\\1/p' \"$f.json\")\" \"$f.transcript\"",
            self.dir.display()
        )
    }

    /// The events `name` received, in order.
    pub fn events(&self, name: &str) -> Vec<Value> {
        self.files(name, ".json")
            .iter()
            .map(|text| serde_json::from_str(text).expect("a hook event is JSON"))
            .collect()
    }

    /// The transcripts [`HookLog::command_with_transcript`] kept for the
    /// events `name`, in order.
    pub fn transcripts(&self, name: &str) -> Vec<String> {
        self.files(name, ".transcript")
    }

    fn files(&self, name: &str, extension: &str) -> Vec<String> {
        let mut paths: Vec<PathBuf> = std::fs::read_dir(&self.dir)
            .expect("the hook log")
            .map(|e| e.expect("an entry").path())
            .filter(|p| {
                let file = p.file_name().unwrap().to_string_lossy();
                file.starts_with(&format!("{name}-")) && file.ends_with(extension)
            })
            .collect();
        paths.sort();
        paths
            .iter()
            .map(|p| std::fs::read_to_string(p).expect("read"))
            .collect()
    }
}

/// How many times `needle` occurs in `haystack`.
pub fn count(haystack: &str, needle: &str) -> usize {
    haystack.matches(needle).count()
}

/// Each task of the first phase with its status.
pub fn statuses(list: &TodoList) -> Vec<(&str, &str)> {
    list.phases[0]
        .tasks
        .iter()
        .map(|t| (t.content.as_str(), t.status.as_str()))
        .collect()
}

/// Asserts `text` is the goal-mode context of `objective` with its tags
/// intact (unescaped, each once), with the todo block when `todos` says
/// so (with or without when it is `None`).
pub fn assert_intact_context(text: &str, objective: &str, todos: Option<bool>) {
    assert!(text.contains(objective), "{text}");
    assert_eq!(count(text, "</goal>"), 1, "{text}");
    assert!(!text.contains("&lt;"), "tags were escaped:\n{text}");
    let todos = todos.unwrap_or(text.contains("<todo_context>"));
    assert_eq!(count(text, "<todo_context>"), usize::from(todos), "{text}");
    assert_eq!(count(text, "</todo_context>"), usize::from(todos), "{text}");
}

/// The goal-mode run every host goes through, with its names for the
/// `todo` and `goal` tools: the model creates the goal, plans two tasks,
/// makes a rejected call, finishes the first task and ends its turn; the
/// continuation has it finish the second and complete the goal.
pub fn goal_mode_script(todo: &str, goal: &str) -> Vec<Step> {
    vec![
        tool(
            goal,
            json!({"op": "create", "objective": "Ship the parser"}),
            usage(1000, 400, 20),
        ),
        tool(
            todo,
            json!({"op": "init", "list": [{"phase": "Build", "items": ["Lexer", "Parser"]}]}),
            usage(1100, 900, 30),
        ),
        tool(
            todo,
            json!({"op": "done", "task": "Nope"}),
            usage(1200, 1000, 10),
        ),
        tool(
            todo,
            json!({"op": "done", "task": "Lexer"}),
            usage(1300, 1100, 10),
        ),
        text("The lexer is done; stopping here.", usage(1400, 1200, 15)),
        // The continuation.
        tool(
            todo,
            json!({"op": "done", "task": "Parser"}),
            usage(1500, 1300, 10),
        ),
        tool(goal, json!({"op": "complete"}), usage(1600, 1400, 10)),
        text("The parser ships.", usage(1700, 1500, 5)),
    ]
}

/// What the goal of [`goal_mode_script`] counts: the responses after the
/// one that created it, up to the one that completed it.
pub fn goal_mode_counted(steps: &[Step]) -> u64 {
    steps[1..7].iter().map(|s| s.usage.counted()).sum()
}

/// The run of a goal queued with [`World::queue_goal`]: the model plans
/// and finishes the first task (its second response with `second`'s
/// usage), ends its turn having used up the budget, and stops after the
/// wrap-up.
pub fn wrap_up_script(todo: &str, second: Usage) -> Vec<Step> {
    vec![
        tool(
            todo,
            json!({"op": "init", "items": ["Lexer", "Parser"]}),
            usage(800, 300, 20),
        ),
        tool(todo, json!({"op": "done", "task": "Lexer"}), second),
        text("The lexer is done.", usage(1000, 500, 10)),
        // The wrap-up.
        text(
            "Stopping: the lexer is done, the parser is left.",
            usage(1100, 600, 10),
        ),
    ]
}

/// Asserts the session of a [`wrap_up_script`] run adopted the queued
/// goal, counted `counted` against it, and left the list as the model did.
pub fn assert_wrapped_up(world: &World, counted: u64) {
    let (_, goal, list) = world.only_session();
    let goal = goal.expect("the adopted goal");
    assert_eq!(
        (goal.objective.as_str(), goal.token_budget),
        ("Ship the parser", Some(1000))
    );
    assert_eq!(goal.status.as_str(), "budget-limited");
    assert_eq!(goal.tokens_used, counted);
    assert_eq!(
        list.phases[0].tasks[1].status.as_str(),
        "in_progress",
        "left as it was"
    );
}

/// Asserts the session of a [`goal_mode_script`] run completed its goal
/// and both tasks; returns the session.
pub fn assert_goal_complete(world: &World) -> (SessionId, Goal) {
    let (session, goal, list) = world.only_session();
    let goal = goal.expect("the goal");
    assert_eq!(goal.objective, "Ship the parser");
    assert_eq!(goal.status.as_str(), "complete");
    assert_eq!(
        statuses(&list),
        [("Lexer", "completed"), ("Parser", "completed")]
    );
    (session, goal)
}
