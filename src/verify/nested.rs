//! A verify started inside a check (DESIGN.md §13) refuses at once: it
//! would run the same checks again, each of which starts another verify,
//! without end. Verify names itself to the checks it runs in
//! [`VARIABLE`]; on Linux it also looks for itself among the ancestors of
//! the process, which finds a check that cleared its environment.

use crate::error::{Error, Result};

/// The variable verify sets for each check it runs: its process id.
pub const VARIABLE: &str = "GOALKEEPER_VERIFY_PID";

/// Refuses when this process runs inside a check of another verify: when
/// [`VARIABLE`] is set (not empty), or, on Linux, when an ancestor process
/// runs this same executable with a `verify` argument.
pub fn refuse_inside_check() -> Result<()> {
    let named = std::env::var_os(VARIABLE).filter(|v| !v.is_empty());
    let how = if let Some(pid) = named {
        format!(
            "{VARIABLE} is {}",
            crate::sanitize::quoted_excerpt(&pid.to_string_lossy())
        )
    } else if let Some(pid) = ancestor_verify() {
        format!("process {pid}, an ancestor of this one")
    } else {
        return Ok(());
    };
    Err(Error::Rejected(format!(
        "verify refuses to run inside a check: it was started, directly or not, by a check of another `goalkeeper verify` ({how}), and would run the checks again without end. Take `goalkeeper verify` out of the check: a person sees the checks with `goalkeeper goal check list` and removes one with `goalkeeper goal check rm N` (a task's: `goalkeeper todo check TASK --clear`)"
    )))
}

/// The nearest ancestor of this process that runs this same executable
/// (the same file) with a `verify` argument, if any.
#[cfg(target_os = "linux")]
fn ancestor_verify() -> Option<i32> {
    use std::os::unix::fs::MetadataExt;
    let me = std::fs::metadata("/proc/self/exe").ok()?;
    let mut pid = rustix::process::getppid()?.as_raw_pid();
    // A chain of processes is short; the bound only guards against a loop
    // read from a /proc that changed under the walk.
    for _ in 0..1024 {
        if pid <= 1 {
            return None;
        }
        let same = std::fs::metadata(format!("/proc/{pid}/exe"))
            .is_ok_and(|exe| (exe.dev(), exe.ino()) == (me.dev(), me.ino()));
        if same
            && std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|line| line.split(|b| *b == 0).skip(1).any(|a| a == b"verify"))
        {
            return Some(pid);
        }
        pid = super::procs::stat(pid)?.ppid;
    }
    None
}

/// Elsewhere only [`VARIABLE`] tells.
#[cfg(not(target_os = "linux"))]
fn ancestor_verify() -> Option<i32> {
    None
}
