//! `goalkeeper verify` owns the processes its checks start (DESIGN.md §13):
//! a verify started inside a check refuses, a signal to verify reaches the
//! check and ends verify without a record, and nothing a check started
//! outlives verify. Real processes throughout; each waits with generous
//! deadlines, never on a tight timing.

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal, kill_process};

use crate::common::{TestEnv, render};

/// A project directory beside the test's database, where verify runs.
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
        // The pid files the checks write are no part of the files they
        // prove (a run that changes those proves nothing).
        std::fs::write(dir.join(".gitignore"), "*.pid\n").unwrap();
        Project { env, dir }
    }

    fn cmd(&self, args: &[&str]) -> std::process::Command {
        let mut cmd = self.env.std_cmd(args);
        cmd.current_dir(&self.dir);
        cmd
    }

    fn ok(&self, args: &[&str]) -> String {
        let output = self.cmd(args).output().unwrap();
        assert!(output.status.success(), "{}", render(args, &output));
        String::from_utf8(output.stdout).unwrap()
    }

    /// The goal's checks as a person sets them.
    fn checks(&self, checks: &[&str]) {
        let mut args = vec!["goal", "set", "Ship"];
        for check in checks {
            args.extend(["--check", check]);
        }
        self.ok(&args);
    }

    /// How many verify runs the session's log holds.
    fn runs_recorded(&self) -> usize {
        let log = self.ok(&["--json", "todo", "log", "--limit", "100"]);
        let events: Vec<serde_json::Value> = serde_json::from_str(&log).unwrap();
        events.iter().filter(|e| e["kind"] == "check").count()
    }

    /// The pid written to `name` in the project by a check, once the
    /// line is whole.
    fn pid_in(&self, name: &str) -> i32 {
        let path = self.dir.join(name);
        wait_for(&format!("{name} written"), || {
            std::fs::read_to_string(&path).is_ok_and(|s| s.ends_with('\n'))
        });
        std::fs::read_to_string(&path)
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    }
}

/// Polls `done` for up to a minute (a loaded machine is slow, never this
/// slow), panicking with `what` should it stay false.
fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let until = Instant::now() + Duration::from_secs(60);
    while !done() {
        assert!(Instant::now() < until, "still not so after 60 s: {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// True while process `pid` exists and is not a zombie.
fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        let state = stat.rsplit(')').next().unwrap_or("").trim_start();
        !state.starts_with('Z') && !state.starts_with('X')
    })
}

/// Asserts that each of `pids` ends soon (they were killed; only their
/// reaping may lag).
fn assert_gone(pids: &[i32]) {
    for &pid in pids {
        assert!(pid > 1);
        let ended = {
            let until = Instant::now() + Duration::from_secs(60);
            loop {
                if !alive(pid) {
                    break true;
                }
                if Instant::now() >= until {
                    break false;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        };
        if !ended {
            let _ = kill_process(Pid::from_raw(pid).unwrap(), Signal::KILL);
            panic!("process {pid}, started by a check, outlived verify");
        }
    }
}

/// Waits for `child` to end, for up to a minute.
fn wait_child(child: &mut Child) -> ExitStatus {
    let until = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if Instant::now() >= until {
            let _ = child.kill();
            panic!("verify did not end within 60 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn quoted(path: &Path) -> String {
    format!("'{}'", path.display().to_string().replace('\'', r"'\''"))
}

#[test]
fn a_verify_inside_a_check_refuses_and_the_check_fails() {
    let p = Project::new();
    let verify = format!(
        "{} verify",
        quoted(Path::new(env!("CARGO_BIN_EXE_goalkeeper")))
    );
    // Found by the variable verify sets, and (on Linux) by ancestry when
    // the check clears it.
    let mut checks = vec![verify.clone()];
    if cfg!(target_os = "linux") {
        checks.push(format!("env -u GOALKEEPER_VERIFY_PID {verify}"));
    }
    let checks: Vec<&str> = checks.iter().map(String::as_str).collect();
    p.checks(&checks);
    // Were it to recurse, it would run until this timeout.
    let output = p
        .cmd(&["--set", "verify.timeout=120", "verify"])
        .output()
        .unwrap();
    let out = String::from_utf8(output.stdout).unwrap();
    assert_eq!(output.status.code(), Some(1), "{out}");
    assert!(!out.contains("timed out"), "{out}");
    for check in &checks {
        assert!(out.contains(&format!("FAIL `{check}` ")), "{out}");
    }
    assert!(
        out.contains("goalkeeper: verify refuses to run inside a check: it was started, directly or not, by a check of another `goalkeeper verify` (GOALKEEPER_VERIFY_PID is \""),
        "{out}"
    );
    if cfg!(target_os = "linux") {
        assert!(
            out.contains(", an ancestor of this one), and would run the checks again without end"),
            "{out}"
        );
    }
    // The outer run alone is recorded, and nothing passed.
    assert_eq!(p.runs_recorded(), 1);
    let list = p.ok(&["goal", "check", "list"]);
    assert_eq!(list.matches(": failed ").count(), checks.len(), "{list}");
    assert!(!list.contains("passed"), "{list}");
}

#[test]
fn a_verify_told_it_runs_in_a_check_refuses_and_records_nothing() {
    let p = Project::new();
    p.checks(&["true"]);
    let goal_before = p.ok(&["--json", "goal"]);
    let args = ["verify"];
    let output = p
        .cmd(&args)
        .env("GOALKEEPER_VERIFY_PID", "4242")
        .output()
        .unwrap();
    assert_snapshot!("verify_inside_a_check", render(&args, &output));
    assert_eq!(p.runs_recorded(), 0);
    assert_eq!(p.ok(&["--json", "goal"]), goal_before);
    assert!(p.ok(&["goal"]).contains("1. `true`: not run yet"));
}

/// `verify` in the project with `signal` handled as by default, whatever
/// the test run inherited: a process started in the background of a
/// non-interactive shell ignores SIGINT, one under `nohup` SIGHUP, and
/// verify leaves a signal ignored as it found it (the test below). GNU
/// env's `--default-signal` resets it on Linux; elsewhere verify starts
/// as the test run did.
fn verify_by_default(p: &Project, signal: Signal) -> std::process::Command {
    let verify = p.cmd(&["verify"]);
    if !cfg!(target_os = "linux") {
        return verify;
    }
    let mut cmd = std::process::Command::new("/usr/bin/env");
    cmd.arg(format!("--default-signal={}", signal.as_raw()))
        .arg(verify.get_program())
        .args(verify.get_args())
        .env_clear();
    for (key, value) in verify.get_envs() {
        cmd.env(key, value.unwrap());
    }
    if let Some(dir) = verify.get_current_dir() {
        cmd.current_dir(dir);
    }
    cmd
}

/// Starts verify on `check` (after one that passes), waits until the
/// check wrote `check.pid`, sends `signal` to verify, and asserts that
/// verify ends by it, says so, and records nothing, and that none of the
/// processes whose pids the check wrote (`pid_files`) survives.
fn signal_verify(signal: Signal, check: &str, pid_files: &[&str]) {
    let p = Project::new();
    p.checks(&["true", check]);
    let mut verify = verify_by_default(&p, signal)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pids: Vec<i32> = pid_files.iter().map(|name| p.pid_in(name)).collect();
    kill_process(Pid::from_raw(verify.id() as i32).unwrap(), signal).unwrap();
    let status = wait_child(&mut verify);
    let mut stderr = String::new();
    std::io::Read::read_to_string(verify.stderr.as_mut().unwrap(), &mut stderr).unwrap();
    assert_eq!(
        status.signal(),
        Some(signal.as_raw()),
        "{status:?}: {stderr}"
    );
    assert_gone(&pids);
    let name = signal_hook::low_level::signal_name(signal.as_raw()).unwrap();
    assert_eq!(
        stderr,
        format!(
            "goalkeeper verify: stopped by {name}: its checks were stopped, and nothing was recorded\n"
        )
    );
    assert_eq!(p.runs_recorded(), 0);
    assert!(p.ok(&["goal"]).contains("1. `true`: not run yet"));
}

const SLEEPS: &str = "echo $$ > check.pid; sleep 300 & echo $! > sleep.pid; wait";

#[test]
fn ctrl_c_to_verify_stops_the_check_and_records_nothing() {
    signal_verify(Signal::INT, SLEEPS, &["check.pid", "sleep.pid"]);
}

#[test]
fn sigterm_to_verify_stops_the_check_and_records_nothing() {
    signal_verify(Signal::TERM, SLEEPS, &["check.pid", "sleep.pid"]);
}

#[test]
fn sigterm_to_verify_kills_a_check_that_ignores_it() {
    signal_verify(
        Signal::TERM,
        &format!("trap '' TERM; {SLEEPS}"),
        &["check.pid", "sleep.pid"],
    );
}

#[test]
fn sighup_to_verify_stops_the_check_and_what_left_its_session() {
    // On Linux a process the check moved to a new session goes too.
    let check = if cfg!(target_os = "linux") {
        format!("setsid sleep 300 > /dev/null 2>&1 & echo $! > daemon.pid; {SLEEPS}")
    } else {
        SLEEPS.to_owned()
    };
    let files: &[&str] = if cfg!(target_os = "linux") {
        &["daemon.pid", "check.pid", "sleep.pid"]
    } else {
        &["check.pid", "sleep.pid"]
    };
    signal_verify(Signal::HUP, &check, files);
}

#[cfg(target_os = "linux")]
#[test]
fn a_signal_ignored_as_verify_starts_stays_ignored() {
    // As under `nohup`: SIGHUP ignored before verify starts.
    let p = Project::new();
    p.checks(&["echo $$ > check.pid; while [ ! -e ../go ]; do sleep 0.05; done"]);
    let verify = p.cmd(&["verify"]);
    let mut shell = std::process::Command::new("/bin/sh");
    shell
        .arg("-c")
        .arg(format!(
            "trap '' HUP; exec {} verify",
            quoted(Path::new(env!("CARGO_BIN_EXE_goalkeeper")))
        ))
        .current_dir(&p.dir)
        .env_clear()
        .stdout(Stdio::piped());
    for (key, value) in verify.get_envs() {
        shell.env(key, value.unwrap());
    }
    let mut verify = shell.spawn().unwrap();
    let check = p.pid_in("check.pid");
    kill_process(Pid::from_raw(verify.id() as i32).unwrap(), Signal::HUP).unwrap();
    // Nor does the check get it.
    kill_process(Pid::from_raw(check).unwrap(), Signal::HUP).unwrap();
    // Beside the project: a file the check waits on is none of the files
    // it proves.
    std::fs::write(p.env.dir().join("go"), "").unwrap();
    let status = wait_child(&mut verify);
    assert_eq!(status.code(), Some(0), "{status:?}");
    assert_eq!(p.runs_recorded(), 1);
    assert!(p.ok(&["goal"]).contains("passed"));
}

/// A check that starts processes in new sessions, by `setsid` and by a
/// double fork, and exits once they wrote their pids.
#[cfg(target_os = "linux")]
const DAEMONS: &str = "setsid sleep 300 & echo $! > a.pid; \
     sh -c 'setsid sh -c \"echo \\$\\$ > b.pid; exec sleep 300\" > /dev/null 2>&1 &'; \
     setsid sh -c 'sleep 300 & echo $! > c.pid; wait' > /dev/null 2>&1 & \
     while [ ! -s b.pid ] || [ ! -s c.pid ]; do sleep 0.05; done";

#[cfg(target_os = "linux")]
#[test]
fn what_a_check_starts_in_a_new_session_is_stopped_when_it_ends() {
    let p = Project::new();
    p.checks(&[DAEMONS]);
    let output = p.cmd(&["verify"]).output().unwrap();
    let out = String::from_utf8(output.stdout).unwrap();
    assert_eq!(output.status.code(), Some(0), "{out}");
    assert!(
        out.contains("; it left processes running, which were stopped\n"),
        "{out}"
    );
    let pids: Vec<i32> = ["a.pid", "b.pid", "c.pid"]
        .iter()
        .map(|f| p.pid_in(f))
        .collect();
    assert_gone(&pids);
    assert_eq!(p.runs_recorded(), 1);
}

#[cfg(target_os = "linux")]
#[test]
fn what_a_check_starts_in_a_new_session_is_stopped_at_its_timeout() {
    let p = Project::new();
    p.checks(&[&format!("{DAEMONS}; sleep 300")]);
    let output = p
        .cmd(&["--set", "verify.timeout=10", "verify"])
        .output()
        .unwrap();
    let out = String::from_utf8(output.stdout).unwrap();
    assert_eq!(output.status.code(), Some(1), "{out}");
    assert!(out.contains(", timed out after 10 s"), "{out}");
    let pids: Vec<i32> = ["a.pid", "b.pid", "c.pid"]
        .iter()
        .map(|f| p.pid_in(f))
        .collect();
    assert_gone(&pids);
    // A timeout is a failed run, recorded as such.
    assert_eq!(p.runs_recorded(), 1);
    assert!(p.ok(&["goal", "check", "list"]).contains("failed"));
}
