//! `goalkeeper watch`: `--once` frames as snapshots (each state a person
//! steering agents meets, at 80×24 and wider), the refusals, and the real
//! full-screen view driven in tmux.

use crate::common::{NOW_MS, TestEnv};
use goalkeeper::goal::{GoalOp, Usage};
use goalkeeper::store::Caller;
use goalkeeper::store::GoalCall;
use goalkeeper::todo::{Actor, Call};
use goalkeeper::{SessionId, Store};
use serde_json::json;

const MIN: i64 = 60_000;

/// Library access to the test's database, with the clock of each write.
struct Fixture {
    store: Store,
}

impl Fixture {
    fn new(env: &TestEnv) -> Fixture {
        Fixture {
            store: Store::open(env.db()).unwrap(),
        }
    }

    fn todo(&mut self, session: &str, actor: Actor, at: i64, call: serde_json::Value) {
        let session = SessionId::parse(session).unwrap();
        let result = self
            .store
            .todo(
                &session,
                Call::Json(&call.to_string()),
                actor,
                &mut Caller::default(),
                at,
            )
            .unwrap();
        assert!(!result.is_error, "{}", result.text());
    }

    fn goal(&mut self, session: &str, actor: Actor, at: i64, op: GoalOp) {
        let session = SessionId::parse(session).unwrap();
        let result = self
            .store
            .write(&session, |tx| {
                tx.goal_call(GoalCall::Op(&op), actor, &mut Caller::default(), at)
            })
            .unwrap();
        assert!(!result.is_error, "{}", result.text());
    }

    fn set_goal(&mut self, session: &str, at: i64, objective: &str, budget: Option<u64>) {
        let op = GoalOp::Set {
            objective: objective.into(),
            budget,
            checks: Vec::new(),
        };
        self.goal(session, Actor::User, at, op);
    }

    fn usage(&mut self, session: &str, at: i64, input: u64, output: u64) {
        let usage = Usage {
            input,
            output,
            cache_write: 0,
            cache_read: 10_000,
        };
        self.goal(session, Actor::Agent, at, GoalOp::Usage(usage));
    }

    /// Three phases: Design done, Build under way, Ship waiting.
    fn three_phases(&mut self, session: &str, start: i64) {
        self.todo(
            session,
            Actor::Agent,
            start,
            json!({"op": "init", "list": [
                {"phase": "Design", "items": ["Read the spec", "Sketch the API"]},
                {"phase": "Build", "items": ["Write the parser", "Write the store", "Wire the CLI"]},
                {"phase": "Ship", "items": ["Write the changelog", "Tag the release"]},
            ]}),
        );
        for (i, task) in ["Read the spec", "Sketch the API", "Write the parser"]
            .iter()
            .enumerate()
        {
            let at = start + (i as i64 + 1) * 3 * MIN;
            self.todo(
                session,
                Actor::Agent,
                at,
                json!({"op": "done", "task": task}),
            );
        }
        // Finishing "Write the parser" started "Write the store".
    }
}

fn once(env: &TestEnv, args: &[&str]) -> String {
    let mut all = vec!["watch", "--once"];
    all.extend_from_slice(args);
    env.run(&all)
}

#[test]
fn no_goal_and_no_tasks_yet() {
    let env = TestEnv::new();
    env.create_database();
    assert_snapshot!("watch_no_goal", once(&env, &["--size", "80x24"]));
}

#[test]
fn an_active_goal_with_three_phases_at_80x24() {
    let env = TestEnv::new();
    let mut f = Fixture::new(&env);
    f.set_goal(
        "default",
        NOW_MS - 42 * MIN,
        "Ship the markdown parser with round-trip tests\nand a migration guide for the old format",
        Some(200_000),
    );
    f.three_phases("default", NOW_MS - 40 * MIN);
    // 30k tokens over the last five minutes: 6k a minute.
    f.usage("default", NOW_MS - 20 * MIN, 40_000, 2_000);
    f.usage("default", NOW_MS - 4 * MIN, 12_000, 3_000);
    f.usage("default", NOW_MS - MIN, 14_000, 1_000);
    assert_snapshot!("watch_active_80x24", once(&env, &["--size", "80x24"]));
    assert_snapshot!("watch_active_wide", once(&env, &["--size", "160x40"]));
}

#[test]
fn a_budget_limited_goal() {
    let env = TestEnv::new();
    let mut f = Fixture::new(&env);
    f.set_goal(
        "default",
        NOW_MS - 90 * MIN,
        "Port the test suite to the new runner",
        Some(50_000),
    );
    f.three_phases("default", NOW_MS - 80 * MIN);
    f.usage("default", NOW_MS - 30 * MIN, 30_000, 5_000);
    f.usage("default", NOW_MS - 2 * MIN, 15_000, 2_500);
    let out = once(&env, &["--size", "80x24"]);
    assert!(out.contains("budget-limited"), "{out}");
    assert_snapshot!("watch_budget_limited", out);
}

#[test]
fn a_blocked_phase_with_its_notes_and_hostile_text_made_safe() {
    let env = TestEnv::new();
    let mut f = Fixture::new(&env);
    f.set_goal(
        "default",
        NOW_MS - 10 * MIN,
        "Release 2.0 \u{1b}[2J\u{1b}[31mnow\u{1b}[0m",
        None,
    );
    f.todo(
        "default",
        Actor::Agent,
        NOW_MS - 9 * MIN,
        json!({"op": "init", "list": [
            {"phase": "Prepare", "items": ["Freeze the branch"]},
            {"phase": "Deploy", "items": [
                "Rotate the signing keys",
                "Push the image \u{1b}]0;pwned\u{7}",
                "Announce\u{2028}the release",
            ]},
        ]}),
    );
    f.todo(
        "default",
        Actor::Agent,
        NOW_MS - 8 * MIN,
        json!({"op": "done", "task": "Freeze the branch"}),
    );
    f.todo(
        "default",
        Actor::Agent,
        NOW_MS - 7 * MIN,
        json!({"op": "block", "task": "Rotate the signing keys", "reason": "waiting for the HSM admin"}),
    );
    f.todo(
        "default",
        Actor::Agent,
        NOW_MS - 6 * MIN,
        json!({"op": "block", "task": "Push the image \u{1b}]0;pwned\u{7}", "reason": "registry \u{1b}[5mquota\u{1b}[0m exceeded"}),
    );
    f.todo(
        "default",
        Actor::User,
        NOW_MS - 5 * MIN,
        json!({"op": "block", "task": "Announce\u{2028}the release", "reason": "after the deploy"}),
    );
    let out = once(&env, &["--size", "80x24"]);
    for raw in ['\u{1b}', '\u{7}', '\u{2028}'] {
        assert!(
            !out.contains(raw),
            "raw {raw:?} reached the terminal:\n{out}"
        );
    }
    assert!(out.contains("blocked: waiting for the HSM admin"), "{out}");
    assert_snapshot!("watch_blocked_phase", out);
}

#[test]
fn a_thousand_task_list_follows_the_task_in_progress() {
    let env = TestEnv::new();
    let mut f = Fixture::new(&env);
    let list: Vec<_> = (1..=10)
        .map(|p| {
            let items: Vec<String> = (1..=100).map(|t| format!("Task {p}.{t:03}")).collect();
            json!({"phase": format!("Phase {p}"), "items": items})
        })
        .collect();
    f.todo(
        "default",
        Actor::Agent,
        NOW_MS - 30 * MIN,
        json!({"op": "init", "list": list}),
    );
    let done: Vec<String> = (1..=5)
        .flat_map(|p| (1..=100).map(move |t| format!("Task {p}.{t:03}")))
        .chain((1..=36).map(|t| format!("Task 6.{t:03}")))
        .collect();
    for chunk in done.chunks(100) {
        for task in chunk {
            f.todo(
                "default",
                Actor::Agent,
                NOW_MS - 20 * MIN,
                json!({"op": "done", "task": task}),
            );
        }
    }
    // Finishing Task 6.036 started Task 6.037.
    let out = once(&env, &["--size", "80x24"]);
    assert!(out.contains("▶ [/] Task 6.037"), "{out}");
    assert_snapshot!("watch_1000_tasks", out);
}

#[test]
fn every_session_on_one_board() {
    let env = TestEnv::new();
    let mut f = Fixture::new(&env);
    f.set_goal(
        "api-agent",
        NOW_MS - 50 * MIN,
        "Add pagination to the API",
        Some(300_000),
    );
    f.three_phases("api-agent", NOW_MS - 48 * MIN);
    f.usage("api-agent", NOW_MS - 3 * MIN, 90_000, 8_000);
    f.set_goal(
        "docs-agent",
        NOW_MS - 70 * MIN,
        "Rewrite the tutorial",
        Some(40_000),
    );
    f.three_phases("docs-agent", NOW_MS - 65 * MIN);
    f.usage("docs-agent", NOW_MS - 12 * MIN, 38_000, 4_000);
    f.todo(
        "scratch",
        Actor::User,
        NOW_MS - 3 * 60 * MIN,
        json!({"op": "init", "items": ["Try the new linter"]}),
    );
    f.set_goal("release", NOW_MS - 5 * 60 * MIN, "Cut release 1.4", None);
    f.goal(
        "release",
        Actor::Agent,
        NOW_MS - 2 * 60 * MIN,
        GoalOp::Complete,
    );
    let out = once(&env, &["--all", "--size", "100x32"]);
    // The most recently active session is selected and opened below.
    assert!(out.contains("▶ api-agent"), "{out}");
    assert_snapshot!("watch_all_sessions", out);
}

#[test]
fn refusals_say_what_to_do_and_change_nothing() {
    let env = TestEnv::new();
    let out = [
        &["watch"][..],
        &["watch", "--all", "--session", "x", "--once"],
        &["watch", "--once", "--size", "0x24"],
        &["watch", "--once", "--size", "wide"],
        &["watch", "--size", "80x24"],
    ]
    .iter()
    .map(|args| env.run(args))
    .collect::<Vec<_>>()
    .join("\n");
    // Refused before the store was opened: not even the database file exists.
    assert!(!env.db().exists());
    assert_snapshot!("watch_refusals", out);
}

/// The full-screen view in a real terminal (tmux): it starts, shows another
/// process's change within a second, scrolls, and leaves the terminal as it
/// found it.
#[test]
fn the_live_view_in_tmux() {
    let env = TestEnv::new();
    let mut f = Fixture::new(&env);
    let items: Vec<String> = (1..=40).map(|t| format!("Task {t:02}")).collect();
    f.todo(
        "live",
        Actor::Agent,
        NOW_MS - MIN,
        json!({"op": "init", "list": [{"phase": "Work", "items": items}]}),
    );
    drop(f);
    let tmux = Tmux::start(&env, 100, 30, "");
    tmux.wait_for("view started", |s| {
        s.contains("goalkeeper watch · session live")
    });
    let screen = tmux.wait_for("first page", |s| s.contains("1–") && s.contains("of 41"));
    assert!(screen.contains("Todo · 0/40 done"), "{screen}");

    // Another process changes the list; the view shows it within a second.
    let changed = env
        .std_cmd(&["--session", "live", "todo", "start", "Task 03"])
        .output()
        .unwrap();
    assert!(changed.status.success());
    let started = std::time::Instant::now();
    let screen = tmux.wait_for("the change", |s| s.contains("▶ [/] Task 03"));
    let seen_after = started.elapsed();
    eprintln!("the view showed another process's change {seen_after:?} after it committed");
    assert!(
        seen_after < std::time::Duration::from_secs(1),
        "the change showed after {seen_after:?}:\n{screen}"
    );
    assert!(screen.contains("start \"Task 03\""), "{screen}");

    // Scrolling: j five times moves the page five lines down.
    tmux.keys(&["j", "j", "j", "j", "j"]);
    let screen = tmux.wait_for("scrolled", |s| s.contains(" 6–"));
    assert!(
        screen.contains("  [ ] Task 05") && !screen.contains("Task 04"),
        "{screen}"
    );
    assert!(!screen.contains("following"), "{screen}");
    tmux.keys(&["G"]);
    tmux.wait_for("bottom", |s| s.contains("Task 40"));
    tmux.keys(&["?"]);
    tmux.wait_for("help", |s| s.contains("Keys") && s.contains("this help"));
    tmux.keys(&["?", "Tab"]);
    tmux.wait_for("help closed", |s| !s.contains("this help"));

    // q quits; the shell gets its terminal back as it was.
    tmux.keys(&["q"]);
    let screen = tmux.wait_for("exit", |s| s.contains("WATCH-ENDED"));
    assert!(screen.contains("watch exit 0"), "{screen}");
    let before = std::fs::read_to_string(env.dir().join("stty-before")).unwrap();
    let after = std::fs::read_to_string(env.dir().join("stty-after")).unwrap();
    assert_eq!(before, after, "terminal modes restored");
    assert_eq!(tmux.format("#{alternate_on}"), "0", "alternate screen left");
    assert_eq!(tmux.format("#{cursor_flag}"), "1", "cursor shown");
}

/// `NO_COLOR` turns every colour off in the live view; the task in
/// progress stays marked (reverse video, bold).
#[test]
fn no_color_in_the_live_view() {
    let styled = |exports: &str| {
        let env = TestEnv::new();
        let mut f = Fixture::new(&env);
        f.set_goal("live", NOW_MS - 5 * MIN, "Colour or not", Some(1_000));
        f.three_phases("live", NOW_MS - 4 * MIN);
        drop(f);
        let tmux = Tmux::start(&env, 100, 30, exports);
        tmux.wait_for("view started", |s| s.contains("Write the store"));
        let screen = tmux.styled_screen();
        tmux.keys(&["q"]);
        tmux.wait_for("exit", |s| s.contains("WATCH-ENDED"));
        screen
    };
    // Any SGR parameter that sets a foreground or background colour
    // (39 and 49, back to the default, are not colours).
    let colour = |screen: &str| {
        screen.split("\u{1b}[").skip(1).any(|seq| {
            let Some((params, _)) = seq.split_once('m') else {
                return false;
            };
            params.split(';').any(|p| {
                matches!(
                    p.parse::<u16>(),
                    Ok(30..=38 | 40..=48 | 90..=97 | 100..=107)
                )
            })
        })
    };
    let coloured = styled("");
    assert!(colour(&coloured), "{coloured:?}");
    let plain = styled("NO_COLOR=1");
    assert!(!colour(&plain), "{plain:?}");
    assert!(
        plain.contains("\u{1b}[7m") || plain.contains(";7m"),
        "{plain:?}"
    );
}

/// A private tmux server running `watch` in one pane.
pub(crate) struct Tmux {
    socket: std::path::PathBuf,
}

impl Tmux {
    /// `exports` are extra `NAME=value` words for the view's environment.
    pub(crate) fn start(env: &TestEnv, width: u16, height: u16, exports: &str) -> Tmux {
        let bin = env!("CARGO_BIN_EXE_goalkeeper");
        let dir = env.dir();
        let script = dir.join("run.sh");
        std::fs::write(
            &script,
            format!(
                "cd '{dir}'\nexport GOALKEEPER_DB='{db}' GOALKEEPER_CONFIG='{dir}/config.toml' GOALKEEPER_NOW={now} {exports}\n\
                 stty -g > stty-before\n'{bin}' --session live watch\necho \"watch exit $?\"\n\
                 stty -g > stty-after\necho WATCH-ENDED\nsleep 30\n",
                dir = dir.display(),
                db = env.location(),
                now = NOW_MS,
            ),
        )
        .unwrap();
        let tmux = Tmux {
            socket: dir.join("tmux.sock"),
        };
        let status = tmux
            .cmd()
            .args(["new-session", "-d", "-s", "w", "-x"])
            .arg(width.to_string())
            .arg("-y")
            .arg(height.to_string())
            .arg(format!("sh '{}'", script.display()))
            .status()
            .expect("tmux runs (the CI script installs it: apt-get install tmux)");
        assert!(status.success());
        tmux
    }

    fn cmd(&self) -> std::process::Command {
        let mut cmd = std::process::Command::new("tmux");
        cmd.arg("-S").arg(&self.socket).env_remove("TMUX");
        cmd
    }

    fn screen(&self) -> String {
        let out = self
            .cmd()
            .args(["capture-pane", "-p", "-t", "w"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The pane with its colours and attributes as escape sequences.
    fn styled_screen(&self) -> String {
        let out = self
            .cmd()
            .args(["capture-pane", "-e", "-p", "-t", "w"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    pub(crate) fn keys(&self, keys: &[&str]) {
        for key in keys {
            let status = self
                .cmd()
                .args(["send-keys", "-t", "w", key])
                .status()
                .unwrap();
            assert!(status.success());
        }
    }

    fn format(&self, format: &str) -> String {
        let out = self
            .cmd()
            .args(["display-message", "-p", "-t", "w", format])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }

    /// Polls the pane (every 20 ms, at most 10 s) until `ready` holds.
    pub(crate) fn wait_for(&self, what: &str, ready: impl Fn(&str) -> bool) -> String {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        loop {
            let screen = self.screen();
            if ready(&screen) {
                return screen;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "no {what} on the screen after 10 s:\n{screen}"
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.cmd().arg("kill-server").status();
    }
}

/// `--session-from HOST` follows the session the host last ran in this
/// directory (the pointer its adapter keeps), else `--session`.
#[test]
fn session_from_follows_the_hosts_last_session_here() {
    let env = TestEnv::new();
    env.create_database();
    let title = |out: &str| out.lines().nth(1).unwrap_or_default().trim().to_owned();
    let args = ["watch", "--once", "--session-from", "claude-code"];
    let before = env.run(&args);
    assert!(
        title(&before).starts_with("goalkeeper watch · session default"),
        "{before}"
    );
    let mut f = Fixture::new(&env);
    f.todo(
        "cc-7",
        Actor::Agent,
        NOW_MS,
        json!({"op": "init", "items": ["Host task"]}),
    );
    // The host's session starts here: its adapter records the pointer.
    let event = json!({
        "session_id": "cc-7",
        "cwd": env.dir(),
        "hook_event_name": "SessionStart",
        "source": "startup",
    });
    env.run_stdin(&["hook", "claude-code"], &event.to_string());
    let after = env.run(&args);
    assert!(
        title(&after).starts_with("goalkeeper watch · session cc-7"),
        "{after}"
    );
    assert!(after.contains("[/] Host task"), "{after}");
    let both = env.run(&["watch", "--once", "--all", "--session-from", "codex"]);
    assert!(
        both.contains("--all follows every session") && both.contains("[exit status: 2]"),
        "{both}"
    );
}
