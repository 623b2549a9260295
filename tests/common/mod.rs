//! The test environment for end-to-end tests: the real binary, a temporary
//! database and working directory, a fixed clock, and a renderer that shows
//! stdout, stderr and the exit status together for snapshots.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Output;

/// 2025-11-29T18:40:00Z, the fixed clock of every test.
pub const NOW_MS: i64 = 1_764_441_600_000;

/// A temporary home for one test: database, working directory, clock.
pub struct TestEnv {
    dir: tempfile::TempDir,
    pub now_ms: i64,
}

impl TestEnv {
    pub fn new() -> TestEnv {
        TestEnv {
            dir: tempfile::tempdir().expect("temp dir"),
            now_ms: NOW_MS,
        }
    }

    /// The working directory of every command.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    pub fn db(&self) -> PathBuf {
        self.dir.path().join("goalkeeper.db")
    }

    /// A command with the test's database, clock and directory, and no
    /// settings or session from the developer's environment.
    pub fn cmd(&self, args: &[&str]) -> assert_cmd::Command {
        assert_cmd::Command::from_std(self.std_cmd(args))
    }

    /// The same command as [`TestEnv::cmd`], as a plain `std` command, for
    /// tests that spawn a process and signal it.
    pub fn std_cmd(&self, args: &[&str]) -> std::process::Command {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_goalkeeper"));
        cmd.args(args)
            .current_dir(self.dir.path())
            .env("GOALKEEPER_DB", self.db())
            .env("GOALKEEPER_NOW", self.now_ms.to_string())
            .env("GOALKEEPER_CONFIG", self.dir.path().join("no-config.toml"))
            .env_remove("GOALKEEPER_SESSION")
            .env_remove("RUST_BACKTRACE");
        cmd
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
