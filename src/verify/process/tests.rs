use std::path::Path;
use std::time::Duration;

use super::*;

fn limits(timeout_secs: u64) -> Limits {
    Limits {
        timeout: Duration::from_secs(timeout_secs),
        tail_bytes: 1024,
    }
}

fn run_in(dir: &Path, command: &str, timeout_secs: u64) -> Ran {
    run(command, dir, limits(timeout_secs)).unwrap()
}

/// True while process `pid` exists and is not a zombie.
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        let state = stat.rsplit(')').next().unwrap_or("").trim_start();
        !state.starts_with('Z') && !state.starts_with('X')
    })
}

fn pids(dir: &Path) -> Vec<u32> {
    std::fs::read_to_string(dir.join("pids"))
        .unwrap_or_default()
        .split_whitespace()
        .map(|p| p.parse().unwrap())
        .collect()
}

#[test]
fn exit_status_and_output_in_the_order_they_came() {
    let dir = tempfile::tempdir().unwrap();
    let ran = run_in(dir.path(), "echo out; echo err >&2; pwd; exit 3", 10);
    assert_eq!(ran.exit, Exit::Code(3));
    let text = String::from_utf8(ran.tail.clone()).unwrap();
    let here = std::fs::canonicalize(dir.path()).unwrap();
    assert_eq!(text, format!("out\nerr\n{}\n", here.display()));
    assert_eq!(ran.output_bytes, text.len() as u64);
    assert!(!ran.left_behind);
    assert_eq!(run_in(dir.path(), "true", 10).exit, Exit::Code(0));
    assert_eq!(run_in(dir.path(), "kill -9 $$", 10).exit, Exit::Signal(9));
    // stdin is closed: a check that reads it gets its end at once.
    let ran = run_in(dir.path(), "cat; echo read-nothing", 10);
    assert_eq!(
        (ran.exit, ran.tail),
        (Exit::Code(0), b"read-nothing\n".to_vec())
    );
}

#[test]
fn a_check_that_hangs_is_killed_with_its_whole_group_at_the_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let ran = run_in(
        dir.path(),
        "sleep 300 & echo $! > pids; echo started; sleep 300",
        1,
    );
    assert_eq!(ran.exit, Exit::TimedOut(1));
    assert_eq!(ran.tail, b"started\n");
    let pids = pids(dir.path());
    assert_eq!(pids.len(), 1);
    for _ in 0..100 {
        if !alive(pids[0]) {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!("the background sleep of a check that timed out still runs");
}

#[test]
fn a_daemon_that_outlives_its_check_does_not_keep_verify_waiting() {
    let dir = tempfile::tempdir().unwrap();
    // Its child keeps the output pipe open and stays in the check's group.
    let ran = run_in(
        dir.path(),
        "(sleep 300; echo late) & echo $! > pids; echo done",
        600,
    );
    assert_eq!(ran.exit, Exit::Code(0));
    assert_eq!(ran.tail, b"done\n");
    assert!(ran.left_behind);
    for pid in pids(dir.path()) {
        for _ in 0..100 {
            if !alive(pid) {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(!alive(pid), "the check's leftover process {pid} still runs");
    }

    // One that leaves the group (a new session) still holds the pipe:
    // verify stops reading shortly after the check exits.
    let ran = run_in(
        dir.path(),
        "setsid sh -c 'echo $$ > pids; sleep 300' & sleep 0.2; echo done",
        600,
    );
    assert_eq!(ran.exit, Exit::Code(0));
    assert!(!ran.left_behind);
    for pid in pids(dir.path()) {
        let _ = rustix::process::kill_process(Pid::from_raw(pid as i32).unwrap(), Signal::KILL);
    }
}

#[test]
fn only_the_end_of_a_flood_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    // 100 MB without a newline.
    let ran = run_in(
        dir.path(),
        "head -c 100000000 /dev/zero | tr '\\0' y; printf END",
        600,
    );
    assert_eq!(ran.exit, Exit::Code(0));
    assert_eq!(ran.output_bytes, 100_000_003);
    assert_eq!(ran.tail.len(), 1024);
    assert!(ran.tail.ends_with(b"yyyEND"));
}

#[test]
fn raw_bytes_come_back_as_they_were_written() {
    let dir = tempfile::tempdir().unwrap();
    let ran = run_in(
        dir.path(),
        r"printf '\377\033[31mred\033[0m\007'; exit 1",
        10,
    );
    assert_eq!(ran.tail, b"\xff\x1b[31mred\x1b[0m\x07");
}

#[test]
fn a_directory_that_vanished_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let gone = dir.path().join("gone");
    let err = run("true", &gone, limits(10)).unwrap_err().to_string();
    assert!(
        err.starts_with(&format!(
            "cannot start /bin/sh in {} to run the check: ",
            gone.display()
        )),
        "{err}"
    );
}

#[test]
fn a_check_is_told_which_verify_runs_it() {
    let dir = tempfile::tempdir().unwrap();
    let ran = run_in(dir.path(), "echo \"$GOALKEEPER_VERIFY_PID\"", 10);
    assert_eq!(ran.tail, format!("{}\n", std::process::id()).into_bytes());
}
