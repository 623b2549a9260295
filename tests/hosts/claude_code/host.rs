//! The real Claude Code CLI, headless, in a temporary project.
//!
//! `scripts/install-host.sh claude-code` (run by `.ci/run`) installs the pinned
//! version under `~/.cache/goalkeeper/npm/`; [`CLAUDE_CODE`] finds it there
//! (or at `$GOALKEEPER_CLAUDE_BIN`). A [`Project`] is a [`World`] whose
//! project directory's path has a space, with goalkeeper installed into it
//! by `goalkeeper install claude-code` (goalkeeper's database in the
//! temporary `HOME`, its default place), and the folder marked trusted the
//! way Claude Code's first interactive start records it. Every `claude`
//! runs from the world's cleared environment pointed at the scripted
//! model.

use std::io::{BufRead, BufReader, Write};
use std::ops::Deref;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::model::MockModel;
use crate::{Host, World, bin_dir};

/// The Claude Code the suite runs.
pub const CLAUDE_CODE: Host = Host {
    name: "claude-code",
    package: "@anthropic-ai/claude-code",
    version: "2.1.332",
    bin: "claude",
    bin_var: "GOALKEEPER_CLAUDE_BIN",
};

/// How long one `claude` run may take before it is killed.
const RUN_TIMEOUT: Duration = Duration::from_secs(120);

/// The `claude` executable; in CI a missing one fails the test, elsewhere
/// the test is skipped with a message saying how to install it.
macro_rules! require_claude {
    () => {
        match crate::claude_code::host::CLAUDE_CODE.find() {
            Some(path) => path,
            None => {
                let host = &crate::claude_code::host::CLAUDE_CODE;
                assert!(
                    std::env::var_os("CI").is_none(),
                    "Claude Code {} is not installed; .ci/run installs it with scripts/install-host.sh claude-code",
                    host.version
                );
                eprintln!(
                    "SKIPPED: Claude Code {} is not installed; run scripts/install-host.sh claude-code to run this test",
                    host.version
                );
                return;
            }
        }
    };
}
pub(crate) use require_claude;

/// A fresh Claude Code session id (a UUID, as `--session-id` requires).
pub fn new_session_id() -> String {
    static N: AtomicU64 = AtomicU64::new(0);
    let n = N.fetch_add(1, Ordering::SeqCst);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    format!(
        "{:08x}-{:04x}-4{:03x}-8{:03x}-{:012x}",
        std::process::id(),
        n & 0xffff,
        (nanos >> 12) & 0xfff,
        nanos & 0xfff,
        nanos >> 16 & 0xffff_ffff_ffff
    )
}

/// A [`World`] for Claude Code: goalkeeper installed into `my project`,
/// the folder trusted, and `claude` pointed at the scripted model.
pub struct Project {
    world: World,
    pub claude: PathBuf,
    pub model_url: String,
    /// Extra environment for every `claude` run.
    pub env: Vec<(String, String)>,
}

impl Deref for Project {
    type Target = World;

    fn deref(&self) -> &World {
        &self.world
    }
}

impl Project {
    /// A project with goalkeeper on `PATH`, installed by
    /// `goalkeeper install claude-code` run in the project directory.
    pub fn new(claude: PathBuf, model: &MockModel) -> Project {
        let project = Project::bare(claude, model, true);
        project.install();
        project
    }

    /// A project with nothing installed yet; goalkeeper's directory is on
    /// `PATH` when `on_path`.
    pub fn bare(claude: PathBuf, model: &MockModel, on_path: bool) -> Project {
        let system = "/usr/local/bin:/usr/bin:/bin";
        let path = if on_path {
            format!("{}:{system}", bin_dir().display())
        } else {
            system.to_owned()
        };
        let world =
            World::at_default_places("my project").with_path(path, bin_dir().join("goalkeeper"));
        let project = Project {
            world,
            claude,
            model_url: model.base_url(),
            env: Vec::new(),
        };
        project.trust();
        project
    }

    /// Records the folder as trusted, as accepting Claude Code's trust
    /// dialog does (without it `claude -p` ignores the project's
    /// `permissions.allow`).
    fn trust(&self) {
        let dir = self.project().display().to_string();
        let config = json!({"projects": {dir: {"hasTrustDialogAccepted": true}}});
        std::fs::write(self.home().join(".claude.json"), config.to_string()).unwrap();
    }

    /// Sets the goal `objective` (with a token `budget`, if any) from a
    /// terminal in the project, as the user does: `goalkeeper
    /// --session-from claude-code goal set`.
    pub fn set_goal(&self, objective: &str, budget: Option<u64>) {
        let budget = budget.map(|b| b.to_string());
        let mut args = vec!["--session-from", "claude-code", "goal", "set"];
        args.extend(objective.split(' '));
        if let Some(budget) = &budget {
            args.extend(["--budget", budget.as_str()]);
        }
        self.goalkeeper_ok(&args);
    }

    /// Runs `goalkeeper install claude-code` in the project directory.
    pub fn install(&self) -> std::process::Output {
        let output = self.goalkeeper(&["install", "claude-code"]);
        assert!(
            output.status.success(),
            "install failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        output
    }

    fn claude_cmd(&self, args: &[&str]) -> Command {
        let mut cmd = self.command(&self.claude);
        cmd.args(args)
            .env("ANTHROPIC_BASE_URL", &self.model_url)
            .env("ANTHROPIC_API_KEY", "sk-ant-scripted")
            .env("DISABLE_AUTOUPDATER", "1")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .env("DISABLE_TELEMETRY", "1");
        for (key, value) in &self.env {
            cmd.env(key, value);
        }
        cmd
    }

    /// `claude ARGS` (a management command such as `claude plugin …`),
    /// asserted to succeed; its stdout and stderr.
    pub fn claude_ok(&self, args: &[&str]) -> String {
        let output = self
            .claude_cmd(args)
            .stdin(Stdio::null())
            .output()
            .expect("run claude");
        assert!(
            output.status.success(),
            "claude {args:?} failed:\n{}",
            crate::show(&output)
        );
        format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    }

    /// `claude -p PROMPT --session-id SESSION` with hook events on stdout.
    pub fn prompt(&self, session: &str, prompt: &str) -> Run {
        self.run(&[prompt, "--session-id", session])
    }

    /// `claude -p PROMPT --resume SESSION`.
    pub fn resume(&self, session: &str, prompt: &str) -> Run {
        self.run(&[prompt, "--resume", session])
    }

    /// `claude -p` with `args` (the prompt first: `--allowedTools` and the
    /// like swallow every later word), stream-json output with hook events.
    pub fn run(&self, args: &[&str]) -> Run {
        let mut all = vec!["-p"];
        all.extend_from_slice(args);
        all.extend_from_slice(&[
            "--output-format",
            "stream-json",
            "--verbose",
            "--include-hook-events",
        ]);
        let child = self
            .claude_cmd(&all)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start claude");
        Run::collect(child, &[])
    }

    /// One `claude -p` process fed `prompts` one at a time (stream-json
    /// input), each sent after the previous turn's result: the way to type
    /// `/clear` or `/compact` between prompts of one running client.
    pub fn conversation(&self, session: &str, prompts: &[&str]) -> Run {
        let child = self
            .claude_cmd(&[
                "-p",
                "--session-id",
                session,
                "--input-format",
                "stream-json",
                "--output-format",
                "stream-json",
                "--verbose",
                "--include-hook-events",
            ])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start claude");
        Run::collect(child, prompts)
    }
}

/// What one `claude` process printed.
#[derive(Debug)]
pub struct Run {
    /// The stream-json events, in order.
    pub events: Vec<Value>,
    pub stderr: String,
    pub success: bool,
}

impl Run {
    fn collect(mut child: std::process::Child, prompts: &[&str]) -> Run {
        let stdout = child.stdout.take().unwrap();
        let mut stderr = child.stderr.take().unwrap();
        let (lines_tx, lines) = mpsc::channel::<String>();
        let reader = std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if lines_tx.send(line).is_err() {
                    break;
                }
            }
        });
        let err_reader = std::thread::spawn(move || {
            let mut text = String::new();
            let _ = std::io::Read::read_to_string(&mut stderr, &mut text);
            text
        });
        let deadline = Instant::now() + RUN_TIMEOUT;
        let mut events = Vec::new();
        let mut stdin = child.stdin.take();
        let mut pending = prompts.iter();
        let mut send_next = |stdin: &mut Option<std::process::ChildStdin>| match pending.next() {
            Some(prompt) => {
                let message =
                    json!({"type": "user", "message": {"role": "user", "content": prompt}});
                let pipe = stdin.as_mut().expect("stdin is open");
                writeln!(pipe, "{message}").expect("write a prompt");
                pipe.flush().unwrap();
            }
            None => *stdin = None,
        };
        if stdin.is_some() {
            send_next(&mut stdin);
        }
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match lines.recv_timeout(left) {
                Ok(line) => {
                    let Ok(event) = serde_json::from_str::<Value>(&line) else {
                        continue;
                    };
                    let is_result = event["type"] == "result";
                    events.push(event);
                    if is_result && stdin.is_some() {
                        send_next(&mut stdin);
                    }
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    let _ = child.kill();
                    panic!(
                        "claude did not finish within {RUN_TIMEOUT:?}; events so far: {events:#?}"
                    );
                }
            }
        }
        drop(stdin);
        let status = child.wait().expect("wait for claude");
        let _ = reader.join();
        let stderr = err_reader.join().unwrap_or_default();
        Run {
            events,
            stderr,
            success: status.success(),
        }
    }

    /// The hook responses (`hook_response` events): event name, exit code,
    /// stdout and stderr.
    pub fn hook_responses(&self) -> Vec<&Value> {
        self.events
            .iter()
            .filter(|e| e["type"] == "system" && e["subtype"] == "hook_response")
            .collect()
    }

    /// The hook events that ran, in order.
    pub fn hooks_run(&self) -> Vec<String> {
        self.hook_responses()
            .iter()
            .filter_map(|e| e["hook_event"].as_str().map(str::to_owned))
            .collect()
    }

    /// Asserts claude exited 0 and every goalkeeper hook exited 0.
    pub fn assert_hooks_succeeded(&self) {
        assert!(self.success, "claude failed: {}", self.stderr);
        for hook in self.hook_responses() {
            assert_eq!(hook["exit_code"], 0, "a hook failed: {hook:#}");
        }
    }

    /// The session id Claude Code reported last (it changes on `/clear`).
    pub fn last_session_id(&self) -> Option<String> {
        self.events
            .iter()
            .rev()
            .find_map(|e| e["session_id"].as_str().map(str::to_owned))
    }
}
