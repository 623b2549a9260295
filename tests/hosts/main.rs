//! Real-host tests: each host CLI, installed from npm at a pinned version
//! (`scripts/install-host.sh`), runs headless against a scripted model
//! server on 127.0.0.1 ([`mock`]) after `goalkeeper install <host>` into a
//! temporary project with its own home directory and database. The tests
//! assert on the request bodies the model received and on the store.
//!
//! They need the hosts, so they are ignored by a plain `cargo test`;
//! `.ci/run` installs the hosts and runs them with `--ignored`. A host that
//! is missing then fails the test with the command that installs it.

mod claude_code;
mod codex;
mod gemini_cli;
mod mock;
mod pi;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use goalkeeper::goal::Goal;
use goalkeeper::todo::TodoList;
use goalkeeper::{SessionId, Store};

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
    /// The host's executable: `$<bin_var>`, else the npm cache of
    /// `scripts/install-host.sh`. Panics with the install command when it
    /// is missing.
    pub fn executable(&self) -> PathBuf {
        if let Some(path) = std::env::var_os(self.bin_var) {
            return PathBuf::from(path);
        }
        let cache = std::env::var_os("XDG_CACHE_HOME")
            .map(PathBuf::from)
            .unwrap_or_else(|| {
                PathBuf::from(std::env::var_os("HOME").expect("HOME")).join(".cache")
            });
        let path = cache
            .join("goalkeeper/npm")
            .join(format!("{}-{}", self.name, self.version))
            .join("node_modules/.bin")
            .join(self.bin);
        assert!(
            path.exists(),
            "{} {} is not installed at {}; run `scripts/install-host.sh {}` (or set {})",
            self.package,
            self.version,
            path.display(),
            self.name,
            self.bin_var
        );
        path
    }
}

/// One test's world: a project directory, a home directory for the host,
/// and a goalkeeper database, all temporary.
pub struct World {
    dir: tempfile::TempDir,
}

impl Default for World {
    fn default() -> World {
        World::new()
    }
}

impl World {
    pub fn new() -> World {
        let dir = tempfile::tempdir().expect("temp dir");
        for sub in ["project", "home"] {
            std::fs::create_dir(dir.path().join(sub)).expect("mkdir");
        }
        std::fs::write(dir.path().join("config.toml"), "").expect("config");
        World { dir }
    }

    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    pub fn project(&self) -> PathBuf {
        self.dir.path().join("project")
    }

    pub fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    pub fn db(&self) -> PathBuf {
        self.dir.path().join("goalkeeper.db")
    }

    /// The environment every process of the test gets (the host, its
    /// hooks and MCP servers, and goalkeeper run by the test): a cleared
    /// environment with the temporary home, goalkeeper's database and an
    /// empty settings file.
    pub fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut cmd = Command::new(program);
        cmd.env_clear()
            .current_dir(self.project())
            .env("HOME", self.home())
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("GOALKEEPER_DB", self.db())
            .env("GOALKEEPER_CONFIG", self.root().join("config.toml"))
            .env("TMPDIR", self.root())
            .env("LANG", "C.UTF-8");
        cmd
    }

    /// Runs goalkeeper in the project directory and returns its stdout,
    /// asserting it succeeded.
    pub fn goalkeeper(&self, args: &[&str]) -> String {
        let output = self
            .command(env!("CARGO_BIN_EXE_goalkeeper"))
            .args(args)
            .output()
            .expect("run goalkeeper");
        assert!(
            output.status.success(),
            "goalkeeper {args:?} failed:\n{}",
            show(&output)
        );
        String::from_utf8(output.stdout).expect("utf-8")
    }

    /// The store, opened for assertions.
    pub fn store(&self) -> Store {
        Store::open(&self.db()).expect("the database opens")
    }

    /// The one session the host ran in, with its goal and list.
    pub fn only_session(&self) -> (SessionId, Option<Goal>, TodoList) {
        let store = self.store();
        let sessions = store.sessions().expect("sessions");
        let ids: Vec<_> = sessions.iter().map(|s| s.id.clone()).collect();
        assert_eq!(ids.len(), 1, "expected one session, found {ids:?}");
        let session = SessionId::parse(&ids[0]).expect("a session id");
        let goal = store.current_goal(&session).expect("goal");
        let (list, _) = store.todo_list(&session).expect("list");
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

/// How many times `needle` occurs in `haystack`.
pub fn count(haystack: &str, needle: &str) -> usize {
    haystack.matches(needle).count()
}
