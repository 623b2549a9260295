//! Verify owns what its checks start (DESIGN.md §13), as a supervisor such
//! as tini does: a SIGINT, SIGTERM or SIGHUP it receives while the checks
//! run is passed on to the running check's process group, which gets a
//! short grace before it is killed, and verify then ends as the signal
//! says, recording nothing; and on Linux it is a child subreaper, so a
//! process a check started that left the check's group (a new session, a
//! double-forked daemon) becomes its child when its parent ends, and is
//! stopped with the rest once the check ends. Elsewhere only the check's
//! process group is stopped.
//!
//! All of this is the state of the whole process (its signal handlers, its
//! being a subreaper), so it is claimed once, by `goalkeeper verify`,
//! which starts no other child; until then [`caught`] is always `None` and
//! [`stop_leftovers`] stops only the check's group.

use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal, kill_process_group};

use crate::error::{Error, Result};

/// The signals passed on to a running check.
const PASSED_ON: [Signal; 3] = [Signal::INT, Signal::TERM, Signal::HUP];

/// The longest spent stopping what a check left behind (a process that
/// keeps forking is given up on after this).
const LEFTOVER_LIMIT: Duration = Duration::from_secs(5);

/// What [`claim`] set up.
struct Claimed {
    /// The signal caught while the checks run (its number), else 0.
    caught: Arc<AtomicUsize>,
    /// The checks are over: a signal now ends the process as it would
    /// without goalkeeper's handler.
    over: Arc<AtomicBool>,
    /// This process is a child subreaper.
    reaper: bool,
}

static CLAIMED: OnceLock<Claimed> = OnceLock::new();

/// Makes this process the owner of what its checks start: catches SIGINT,
/// SIGTERM and SIGHUP (each that was not [ignored](ignored) as it started)
/// until [`checks_done`], and on Linux becomes a child subreaper. Only for a process that starts no child but its checks
/// (every other child would be taken for a check's leftover and killed):
/// `goalkeeper verify`. A second call does nothing.
pub fn claim() -> Result<()> {
    if CLAIMED.get().is_some() {
        return Ok(());
    }
    let caught = Arc::new(AtomicUsize::new(0));
    let over = Arc::new(AtomicBool::new(false));
    for signal in PASSED_ON.into_iter().filter(|s| !ignored(*s)) {
        let raw = signal.as_raw();
        // In this order: once the checks are over the default action ends
        // the process before the signal is noted.
        signal_hook::flag::register_conditional_default(raw, Arc::clone(&over))
            .and_then(|_| {
                signal_hook::flag::register_usize(
                    raw,
                    Arc::clone(&caught),
                    raw.unsigned_abs() as usize,
                )
            })
            .map_err(|source| Error::Io {
                what: format!("cannot catch {} to pass it on to the checks", name(signal)),
                source,
            })?;
    }
    let _ = CLAIMED.set(Claimed {
        caught,
        over,
        reaper: become_reaper(),
    });
    Ok(())
}

/// True when `signal` was ignored as this process started (`nohup`
/// ignores SIGHUP; a shell, SIGINT for a command it runs in the
/// background): it stays ignored, by verify and its checks. Only Linux
/// tells (`SigIgn` in `/proc/self/status`); elsewhere each is caught.
#[cfg(target_os = "linux")]
fn ignored(signal: Signal) -> bool {
    let Ok(status) = std::fs::read_to_string("/proc/self/status") else {
        return false;
    };
    let bit = signal.as_raw() - 1;
    status
        .lines()
        .find_map(|line| line.strip_prefix("SigIgn:"))
        .and_then(|mask| u64::from_str_radix(mask.trim(), 16).ok())
        .is_some_and(|mask| (0..64).contains(&bit) && (mask >> bit) & 1 == 1)
}

#[cfg(not(target_os = "linux"))]
fn ignored(_signal: Signal) -> bool {
    false
}

/// The signal caught since [`claim`], if any.
pub(crate) fn caught() -> Option<Signal> {
    let raw = CLAIMED.get()?.caught.load(Ordering::SeqCst);
    PASSED_ON
        .into_iter()
        .find(|s| s.as_raw().unsigned_abs() as usize == raw)
}

/// Ends the process as `signal` would have, had it not been caught (its
/// exit status is the signal's), after a note on stderr: the checks were
/// stopped, and nothing was recorded.
pub(crate) fn die_of(signal: Signal) -> ! {
    let _ = writeln!(
        std::io::stderr(),
        "goalkeeper verify: stopped by {}: its checks were stopped, and nothing was recorded",
        name(signal)
    );
    let _ = signal_hook::low_level::emulate_default_handler(signal.as_raw());
    // Only should the signal not end the process.
    std::process::exit(128 + signal.as_raw())
}

/// Ends the process when a signal was caught ([`die_of`]).
pub(crate) fn die_if_caught() {
    if let Some(signal) = caught() {
        die_of(signal);
    }
}

/// The checks are over: a signal caught while they ran ends the process
/// now, before anything is recorded; a later one ends it at once, as it
/// would without goalkeeper's handler (a store write it cuts short is
/// rolled back).
pub(crate) fn checks_done() {
    die_if_caught();
    if let Some(claimed) = CLAIMED.get() {
        claimed.over.store(true, Ordering::SeqCst);
    }
    // One caught between the look above and the store.
    die_if_caught();
}

/// The signal's name, as `kill -l` gives it with the `SIG`.
fn name(signal: Signal) -> &'static str {
    signal_hook::low_level::signal_name(signal.as_raw()).unwrap_or("a signal")
}

#[cfg(target_os = "linux")]
fn become_reaper() -> bool {
    rustix::process::set_child_subreaper(Some(rustix::process::getpid())).is_ok()
}

#[cfg(not(target_os = "linux"))]
fn become_reaper() -> bool {
    false
}

/// Stops what a check left once its own process has been waited for: the
/// rest of its process `group`, and, in a subreaper, every process that
/// became this one's child (each with its own group when it leads one),
/// until none is left (giving up after [`LEFTOVER_LIMIT`]). True when one
/// of them was still running.
pub(crate) fn stop_leftovers(group: Pid) -> bool {
    let reaper = CLAIMED.get().is_some_and(|c| c.reaper);
    stop_leftovers_in(group, reaper)
}

#[cfg(target_os = "linux")]
fn stop_leftovers_in(group: Pid, reaper: bool) -> bool {
    use rustix::process::{WaitOptions, getpid, kill_process, waitpid};
    let me = getpid().as_raw_pid();
    // From /proc, not getpgrp(2): in a PID namespace (a sandbox) the group
    // may lie outside it, which /proc shows as 0 (and rustix's getpgrp
    // cannot return).
    let own_group = super::procs::stat(me).map_or(0, |s| s.pgrp);
    let group_id = group.as_raw_pid();
    let until = Instant::now() + LEFTOVER_LIMIT;
    let mut any = false;
    loop {
        let all = super::procs::all();
        let children: Vec<_> = all.iter().filter(|p| reaper && p.ppid == me).collect();
        let members = all.iter().any(|p| p.pgrp == group_id && !p.zombie);
        let living: Vec<_> = children.iter().filter(|p| !p.zombie).collect();
        if !members && children.is_empty() {
            return any;
        }
        any |= members || !living.is_empty();
        if members {
            let _ = kill_process_group(group, Signal::KILL);
        }
        for child in living {
            let Some(pid) = Pid::from_raw(child.pid) else {
                continue;
            };
            if child.pgrp == child.pid && child.pgrp != own_group {
                let _ = kill_process_group(pid, Signal::KILL);
            }
            let _ = kill_process(pid, Signal::KILL);
        }
        for child in &children {
            if let Some(pid) = Pid::from_raw(child.pid) {
                let _ = waitpid(Some(pid), WaitOptions::NOHANG);
            }
        }
        if Instant::now() >= until {
            return any;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Without `/proc`: the check's group only.
#[cfg(not(target_os = "linux"))]
fn stop_leftovers_in(group: Pid, _reaper: bool) -> bool {
    let left = rustix::process::test_kill_process_group(group).is_ok();
    if left {
        let _ = kill_process_group(group, Signal::KILL);
    }
    left
}

/// True while a process of `group` runs: on Linux a zombie (one that
/// ended, which this process may have to reap) does not count.
#[cfg(target_os = "linux")]
fn group_runs(group: Pid) -> bool {
    super::procs::group_runs(group.as_raw_pid())
}

#[cfg(not(target_os = "linux"))]
fn group_runs(group: Pid) -> bool {
    rustix::process::test_kill_process_group(group).is_ok()
}

/// Sends `signal` to the check's process `group`, waits up to `grace`
/// for the group to end (waiting for the check's own process, `child`, as
/// it ends), then kills what is left of the group. Returns the check's
/// exit status.
pub(crate) fn end_group(
    child: &mut std::process::Child,
    group: Pid,
    signal: Signal,
    grace: Duration,
) -> std::io::Result<std::process::ExitStatus> {
    let _ = kill_process_group(group, signal);
    let until = Instant::now() + grace;
    let mut status = None;
    while Instant::now() < until {
        if status.is_none() {
            status = child.try_wait()?;
        }
        if status.is_some() && !group_runs(group) {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = kill_process_group(group, Signal::KILL);
    match status {
        Some(status) => Ok(status),
        None => child.wait(),
    }
}
