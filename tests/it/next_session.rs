//! A goal set from a terminal with `--session-from HOST` (DESIGN.md §8):
//! it acts on the host's session in the directory while that session is
//! open, and once the host said it ended, waits for the next session the
//! host starts there, which adopts it. Driven through the real binary
//! with each host's own session-start and session-end events; and the
//! gate of an MCP server its host started elsewhere (Codex's plugin)
//! judges checks in the session's project directory.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::common::{TestEnv, render};
use crate::mcp::Server;

const HOSTS: [&str; 4] = ["claude-code", "gemini-cli", "codex", "pi"];

/// The test's world: its database, and a project directory beside it (so
/// the database is none of the files a check's fingerprint reads).
struct Project {
    env: TestEnv,
    dir: PathBuf,
}

impl Project {
    fn new() -> Project {
        let env = TestEnv::new();
        let dir = env.dir().join("project");
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join("main.rs"), "fn main() {}\n").unwrap();
        Project { env, dir }
    }

    /// `goalkeeper ARGS` in `dir`, rendered (stdout, stderr, exit status)
    /// with the temporary directory as `<tmp>`.
    fn run_in(&self, dir: &Path, args: &[&str]) -> String {
        let output = self.env.cmd(args).current_dir(dir).output().unwrap();
        self.env.normalize(&render(args, &output))
    }

    /// `goalkeeper ARGS` in the project, asserted to succeed; its stdout.
    fn ok(&self, args: &[&str]) -> String {
        let output = self.env.cmd(args).current_dir(&self.dir).output().unwrap();
        assert!(output.status.success(), "{}", render(args, &output));
        String::from_utf8(output.stdout).unwrap()
    }

    /// `goalkeeper ARGS` in the project.
    fn run(&self, args: &[&str]) -> String {
        self.run_in(&self.dir, args)
    }

    /// The host's event `name` for `session`, sent from `dir`.
    fn event_from(&self, host: &str, name: &str, session: &str, dir: &Path) {
        let event = json!({"hook_event_name": name, "session_id": session,
            "cwd": dir.display().to_string(), "source": "startup", "reason": "exit",
            "prompt": "hi"});
        let out = self
            .env
            .cmd(&["hook", host])
            .write_stdin(event.to_string())
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
    }

    fn event(&self, host: &str, name: &str, session: &str) {
        self.event_from(host, name, session, &self.dir);
    }

    /// `session` ends as `host` ends it: its `SessionEnd`; for Codex, whose
    /// `codex exec` sends none, its last event comes from a process that
    /// has exited since (`timeout`, running the hook as Codex would).
    fn end(&self, host: &str, session: &str) {
        if host != "codex" {
            return self.event(host, END, session);
        }
        let event = json!({"hook_event_name": "Stop", "session_id": session,
            "cwd": self.dir.display().to_string()});
        let hook = self.env.std_cmd(&["hook", "codex"]);
        let mut host_process = std::process::Command::new("timeout");
        host_process
            .arg("60")
            .arg(hook.get_program())
            .args(hook.get_args())
            .env_clear()
            .envs(hook.get_envs().filter_map(|(k, v)| Some((k, v?))))
            .current_dir(self.env.dir())
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        let mut child = host_process.spawn().unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(event.to_string().as_bytes())
            .unwrap();
        assert!(child.wait().unwrap().success());
    }

    /// The objective of `session`'s goal and its status, if it has one.
    fn goal(&self, session: &str) -> Option<(String, String)> {
        let out = self
            .env
            .ok(&["--session", session, "--json", "goal", "get"]);
        let goal = &serde_json::from_str::<Value>(&out).unwrap()["details"]["goal"];
        (!goal.is_null()).then(|| {
            (
                goal["objective"].as_str().unwrap().to_owned(),
                goal["status"].as_str().unwrap().to_owned(),
            )
        })
    }
}

/// The session-end event of Claude Code, Gemini CLI and pi, as
/// goalkeeper's hooks receive it (pi's `session_shutdown` comes from
/// goalkeeper's extension as `SessionEnd`).
const END: &str = "SessionEnd";

/// Every host's session-start event, as goalkeeper's hooks receive it.
const START: &str = "SessionStart";

/// Open: set on the session. Ended: queued, the last session keeps its
/// goal, other commands read it and say it ended, and the next session
/// adopts the queued goal; in every host.
#[test]
fn a_terminal_goal_acts_on_the_open_session_and_waits_for_the_next_once_it_ended() {
    for host in HOSTS {
        let p = Project::new();
        p.event(host, START, "s1");
        let on_open = p.run(&[
            "--session-from",
            host,
            "goal",
            "set",
            "Ship",
            "the",
            "lexer",
        ]);
        assert_eq!(
            p.goal("s1"),
            Some(("Ship the lexer".into(), "active".into()))
        );
        p.end(host, "s1");
        let queued = p.run(&[
            "--session-from",
            host,
            "goal",
            "set",
            "Ship the parser",
            "--budget",
            "5000",
            "--check",
            "true",
        ]);
        // The ended session keeps its goal; the queued one waits.
        assert_eq!(
            p.goal("s1"),
            Some(("Ship the lexer".into(), "active".into()))
        );
        let read = p.run(&["--session-from", host, "goal", "get"]);
        p.event(host, START, "s2");
        assert_eq!(
            p.goal("s2"),
            Some(("Ship the parser".into(), "active".into()))
        );
        assert_eq!(
            p.goal("s1"),
            Some(("Ship the lexer".into(), "active".into()))
        );
        // The next session is open: a goal set now lands on it.
        let on_next = p.run(&["--session-from", host, "goal", "set", "Ship", "the", "docs"]);
        assert_eq!(
            p.goal("s2"),
            Some(("Ship the docs".into(), "active".into()))
        );
        let all = [on_open, queued, read, on_next]
            .join("\n")
            .replace(&format!(" {host} "), " HOST ");
        assert_snapshot!("next_session_goal_from_a_terminal", all);
    }
}

/// After the end, `goal drop` takes back the queued goal (and only that);
/// `--json` says which session ended.
#[test]
fn after_the_end_goal_drop_takes_back_the_queued_goal() {
    let p = Project::new();
    p.event("codex", "SessionStart", "s1");
    p.run(&["--session-from", "codex", "goal", "set", "Ship the lexer"]);
    p.end("codex", "s1");
    let queued = p.ok(&["--session-from", "codex", "--json", "goal", "set", "Later"]);
    let queued: Value = serde_json::from_str(&queued).unwrap();
    assert_eq!(
        (&queued["ended"], &queued["queued"]["objective"]),
        (&json!("s1"), &json!("Later"))
    );
    let dropped = p.run(&["--session-from", "codex", "goal", "drop"]);
    assert!(
        dropped.contains("Removed the goal queued for the next codex session in <tmp>/project (the last one there, s1, has ended): Later (no budget)."),
        "{dropped}"
    );
    assert_eq!(
        p.goal("s1"),
        Some(("Ship the lexer".into(), "active".into()))
    );
    p.event("codex", "SessionStart", "s2");
    assert_eq!(p.goal("s2"), None, "nothing was left queued");
}

/// The bad cases: no session seen in the directory; an end that came from
/// another directory (it ends the session wherever it was recorded); the
/// end of an older session (the newer one stays open); a rejected goal
/// after the end (nothing queued, nothing changed).
#[test]
fn an_end_is_the_sessions_and_a_rejected_goal_changes_nothing() {
    let p = Project::new();
    p.env.create_database();
    let nothing = p.run(&["--session-from", "pi", "todo", "view"]);
    assert!(
        nothing.contains("no pi session has run in <tmp>/project yet")
            && nothing.contains("[exit status: 2]"),
        "{nothing}"
    );

    let elsewhere = p.env.dir().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    p.event("claude-code", "SessionStart", "s1");
    p.event_from("claude-code", END, "s1", &elsewhere);
    let queued = p.run(&["--session-from", "claude-code", "goal", "set", "Ship"]);
    assert!(queued.contains("Queued for the next claude-code session in <tmp>/project (the last one there, s1, has ended)"), "{queued}");
    assert_eq!(p.goal("s1"), None);

    // An older session's end leaves the newer one open.
    p.event("gemini-cli", "SessionStart", "g1");
    p.event("gemini-cli", "SessionStart", "g2");
    p.event("gemini-cli", END, "g1");
    let set = p.run(&["--session-from", "gemini-cli", "goal", "set", "Ship"]);
    assert!(
        set.contains("Set on the open gemini-cli session g2"),
        "{set}"
    );
    assert_eq!(p.goal("g1"), None);

    // A bad check after the end: refused, the queue as it was.
    p.event("gemini-cli", END, "g2");
    let before = p.run(&["--session-from", "gemini-cli", "goal", "get"]);
    let refused = p.run(&[
        "--session-from",
        "gemini-cli",
        "goal",
        "set",
        "Other",
        "--check",
        "",
    ]);
    assert!(refused.contains("[exit status: 2]"), "{refused}");
    assert_eq!(
        p.run(&["--session-from", "gemini-cli", "goal", "get"]),
        before
    );
    p.event("gemini-cli", "SessionStart", "g3");
    assert_eq!(p.goal("g3"), None);
}

/// An MCP server its host started in another folder (Codex runs a
/// plugin's server in the plugin's folder) judges the gate in the
/// directory the session's events came from: a passing verify run in the
/// project lets the agent's `complete` through. A server for a fixed
/// session, in that folder, judges its own folder and refuses.
#[test]
fn the_gate_of_a_host_started_server_looks_at_the_sessions_project() {
    let p = Project::new();
    let plugin = p.env.dir().join("plugin");
    std::fs::create_dir(&plugin).unwrap();
    p.event("codex", "SessionStart", "c1");
    p.run(&["--session", "c1", "goal", "set", "Ship", "--check", "true"]);
    p.ok(&["--session", "c1", "verify"]);
    let complete = |args: &[&str]| {
        let mut server = Server::spawn_in(&p.env, &plugin, args, &[]);
        server.initialize();
        let params = json!({"name": "goal", "_meta": {"sessionId": "c1", "threadId": "c1"},
            "arguments": {"op": "complete"}});
        server.request("tools/call", params)["result"].clone()
    };
    let fixed = complete(&["--session", "c1", "mcp"]);
    assert_eq!(fixed["isError"], true, "{fixed}");
    assert!(fixed.to_string().contains("not run"), "{fixed}");
    assert_eq!(p.goal("c1"), Some(("Ship".into(), "active".into())));
    let followed = complete(&["mcp", "--session-from", "codex"]);
    assert_ne!(followed["isError"], true, "{followed}");
    assert_eq!(p.goal("c1"), Some(("Ship".into(), "complete".into())));
}
