//! Running one check (DESIGN.md §13): `sh -c COMMAND` in the directory,
//! in a process group of its own, stdin closed, stdout and stderr into one
//! pipe of which only the last bytes are kept, within a timeout that kills
//! the whole group.
//!
//! A check that forks a process which outlives it (a daemon holding the
//! pipe) must not keep `verify` waiting for the pipe's end: once the
//! check's own process has exited, the pipe is read only while more keeps
//! coming for a short while, and whatever is left in the group is killed,
//! with what [`supervise`](super::supervise) finds beyond it. A signal
//! verify caught is passed on to the group, and ends verify.
//!
//! The check's environment names verify ([`nested::VARIABLE`]), so a verify
//! it starts refuses to run.

use std::io::Read;
use std::os::fd::AsFd;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rustix::event::{PollFd, PollFlags, Timespec, poll};
use rustix::process::{Pid, Signal};

use super::{nested, supervise};
use crate::check::Exit;
use crate::check::report::Ran;
use crate::error::{Error, Result};

/// How long the group gets between SIGTERM and SIGKILL on a timeout, or
/// after a signal verify passed on.
const TERM_GRACE: Duration = Duration::from_secs(2);

/// How long the pipe is still read after the check's process exited, while
/// another process of its group keeps it open.
const AFTER_EXIT: Duration = Duration::from_millis(200);

/// How a check is run.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// The longest a check may run.
    pub timeout: Duration,
    /// The most bytes of its output kept (the end).
    pub tail_bytes: usize,
}

/// Runs `command` with `sh -c` in `dir` within `limits`. An error only when
/// the shell could not be started at all. A signal verify caught
/// ([`supervise::claim`]) before or while the check runs ends the process
/// here, once the check is stopped.
pub fn run(command: &str, dir: &Path, limits: Limits) -> Result<Ran> {
    supervise::die_if_caught();
    let (reader, writer) = std::io::pipe().map_err(|source| Error::Io {
        what: "cannot make a pipe for the check's output".into(),
        source,
    })?;
    let started = Instant::now();
    let mut child = Command::new("/bin/sh")
        .arg("-c")
        .arg(command)
        .current_dir(dir)
        .env(nested::VARIABLE, std::process::id().to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::from(writer.try_clone().map_err(|source| {
            Error::Io {
                what: "cannot make a pipe for the check's output".into(),
                source,
            }
        })?))
        .stderr(Stdio::from(writer))
        .process_group(0)
        .spawn()
        .map_err(|source| Error::Io {
            what: format!("cannot start /bin/sh in {} to run the check", dir.display()),
            source,
        })?;
    // The parent's copies of the writing end are closed by now (moved into
    // the `Command`, dropped with it), so the pipe ends when the group's
    // processes have all closed it.
    let group = Pid::from_child(&child);
    let mut output = Tail::new(limits.tail_bytes);
    let deadline = started + limits.timeout;
    let mut reader = reader;
    let mut status = None;
    let mut timed_out = false;
    let mut open = true;
    while status.is_none() && open {
        pass_on_caught(&mut child, group);
        let now = Instant::now();
        if now >= deadline {
            timed_out = true;
            status = Some(stop_group(&mut child, group)?);
            break;
        }
        open = read_some(
            &mut reader,
            &mut output,
            (deadline - now).min(Duration::from_millis(100)),
        );
        status = child.try_wait().map_err(wait_error)?;
    }
    let status = match status {
        Some(status) => status,
        // The pipe ended: every process closed it; the check's own process
        // is exiting or about to.
        None => loop {
            pass_on_caught(&mut child, group);
            if Instant::now() >= deadline {
                timed_out = true;
                break stop_group(&mut child, group)?;
            }
            if let Some(status) = child.try_wait().map_err(wait_error)? {
                break status;
            }
            std::thread::sleep(Duration::from_millis(5));
        },
    };
    let ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    // What is still in the pipe, while more keeps coming for a short while.
    let until = Instant::now() + AFTER_EXIT;
    while open && !timed_out {
        pass_on_caught(&mut child, group);
        let now = Instant::now();
        if now >= until {
            break;
        }
        open = read_some(&mut reader, &mut output, until - now);
    }
    let left_behind = supervise::stop_leftovers(group) && !timed_out;
    let exit = if timed_out {
        Exit::TimedOut(limits.timeout.as_secs())
    } else if let Some(code) = status.code() {
        Exit::Code(code)
    } else {
        Exit::Signal(status.signal().unwrap_or(0))
    };
    Ok(Ran {
        command: command.to_owned(),
        exit,
        ms,
        output_bytes: output.total,
        tail: output.into_bytes(),
        left_behind,
    })
}

fn wait_error(source: std::io::Error) -> Error {
    Error::Io {
        what: "cannot wait for the check's process".into(),
        source,
    }
}

/// Ends the check's process group: SIGTERM, then SIGKILL after
/// [`TERM_GRACE`]; returns the check's own exit status.
fn stop_group(child: &mut Child, group: Pid) -> Result<std::process::ExitStatus> {
    supervise::end_group(child, group, Signal::TERM, TERM_GRACE).map_err(wait_error)
}

/// When verify caught a signal: passes it on to the check's group, kills
/// what is left after [`TERM_GRACE`] (and beyond the group), and ends
/// verify as the signal says. Returns only when none was caught.
fn pass_on_caught(child: &mut Child, group: Pid) {
    let Some(signal) = supervise::caught() else {
        return;
    };
    let _ = supervise::end_group(child, group, signal, TERM_GRACE);
    supervise::stop_leftovers(group);
    supervise::die_of(signal)
}

/// Waits up to `wait` for output and reads what there is into `tail`.
/// False once the pipe has ended.
fn read_some(reader: &mut std::io::PipeReader, tail: &mut Tail, wait: Duration) -> bool {
    let timeout = Timespec {
        tv_sec: i64::try_from(wait.as_secs()).unwrap_or(i64::MAX),
        tv_nsec: i64::from(wait.subsec_nanos()),
    };
    let ready = {
        let fd = reader.as_fd();
        let mut fds = [PollFd::new(&fd, PollFlags::IN)];
        match poll(&mut fds, Some(&timeout)) {
            Ok(0) => return true,
            Ok(_) => true,
            Err(rustix::io::Errno::INTR) => return true,
            Err(_) => false,
        }
    };
    if !ready {
        return false;
    }
    let mut buf = [0u8; 64 * 1024];
    match reader.read(&mut buf) {
        Ok(0) => false,
        Ok(n) => {
            tail.push(&buf[..n]);
            true
        }
        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => true,
        Err(_) => false,
    }
}

/// The last bytes of a stream, and how many it had in all.
struct Tail {
    keep: usize,
    bytes: Vec<u8>,
    total: u64,
}

impl Tail {
    fn new(keep: usize) -> Tail {
        Tail {
            keep,
            bytes: Vec::new(),
            total: 0,
        }
    }

    fn push(&mut self, chunk: &[u8]) {
        self.total += chunk.len() as u64;
        let chunk = &chunk[chunk.len().saturating_sub(self.keep)..];
        self.bytes.extend_from_slice(chunk);
        // Cut back once it holds twice what is kept: each byte is moved
        // at most once.
        if self.bytes.len() > 2 * self.keep.max(1) {
            let cut = self.bytes.len() - self.keep;
            self.bytes.drain(..cut);
        }
    }

    fn into_bytes(mut self) -> Vec<u8> {
        let cut = self.bytes.len().saturating_sub(self.keep);
        self.bytes.drain(..cut);
        self.bytes
    }
}

#[cfg(test)]
mod tests;
