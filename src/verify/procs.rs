//! The processes as Linux shows them under `/proc`: a process's parent and
//! group, and every process.

use std::path::Path;

/// What `/proc/PID/stat` says of a process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Stat {
    /// The process.
    pub pid: i32,
    /// Its parent.
    pub ppid: i32,
    /// Its process group.
    pub pgrp: i32,
    /// It has ended and waits to be reaped by its parent.
    pub zombie: bool,
}

/// Process `pid`, while it exists.
pub(super) fn stat(pid: i32) -> Option<Stat> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse(pid, &text)
}

/// Every process this one can see, zombies included.
pub(super) fn all() -> Vec<Stat> {
    let Ok(entries) = std::fs::read_dir(Path::new("/proc")) else {
        return Vec::new();
    };
    entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(stat)
        .collect()
}

/// True while a process of `group` runs (zombies do not count).
pub(super) fn group_runs(group: i32) -> bool {
    all().iter().any(|p| p.pgrp == group && !p.zombie)
}

/// Reads a `/proc/PID/stat` line: `PID (NAME) STATE PPID PGRP …`, where
/// the name may hold spaces and parentheses (so the fields are read after
/// its last `)`).
fn parse(pid: i32, text: &str) -> Option<Stat> {
    let mut fields = text.rsplit_once(')')?.1.split_ascii_whitespace();
    let state = fields.next()?;
    let ppid = fields.next()?.parse().ok()?;
    let pgrp = fields.next()?.parse().ok()?;
    Some(Stat {
        pid,
        ppid,
        pgrp,
        zombie: state == "Z" || state == "X",
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_with_spaces_and_parentheses_is_read_past() {
        assert_eq!(
            parse(7, "7 (a) b (c)) S 3 7 7 0 -1 4194560 0"),
            Some(Stat {
                pid: 7,
                ppid: 3,
                pgrp: 7,
                zombie: false
            })
        );
        assert_eq!(parse(8, "8 (x) Z 1 5 5").map(|s| s.zombie), Some(true));
        assert_eq!(parse(9, "9 (x) S"), None);
    }

    #[test]
    fn this_process_is_a_child_of_its_parent() {
        let me = rustix::process::getpid().as_raw_pid();
        let parent = rustix::process::getppid().unwrap().as_raw_pid();
        assert_eq!(stat(me).unwrap().ppid, parent);
        assert!(all().iter().any(|s| s.pid == me && s.ppid == parent));
        assert!(group_runs(stat(me).unwrap().pgrp));
    }
}
