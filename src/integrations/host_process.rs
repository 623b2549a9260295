//! The host process a hook runs under, for a host whose headless run sends
//! no session-end event (DESIGN.md §8): once that process is gone, its
//! session has ended.
//!
//! Linux only, read from `/proc`: the hook's parent, past the shells the
//! host may run the hook's command line in, named by the boot, the pid
//! namespace, its pid and its start time, so neither a reused pid nor a
//! reboot passes for it, and only a process that sees the same processes
//! judges it: not one on another machine sharing the store (PostgreSQL),
//! nor one in a sandbox with a pid namespace of its own (Codex's shell).
//! Elsewhere nothing is recorded, and such a session counts as open until
//! an event ends it.

/// One process of one boot of one machine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostProcess {
    /// The boot and the pid namespace, as one word: `BOOT/NS`.
    boot: String,
    pid: u32,
    started: u64,
}

/// The shells a host may run a hook's command line in.
const SHELLS: [&str; 6] = ["sh", "bash", "dash", "zsh", "ksh", "ash"];

impl HostProcess {
    /// The process that started this hook: its parent, or the first
    /// ancestor that is no shell. `None` off Linux or when `/proc` cannot
    /// be read.
    pub fn of_hook() -> Option<HostProcess> {
        let boot = boot_id()?;
        let mut pid = rustix::process::getppid()?
            .as_raw_nonzero()
            .get()
            .unsigned_abs();
        for _ in 0..4 {
            let stat = Stat::of(pid)?;
            if !SHELLS.contains(&stat.comm.as_str()) || stat.ppid <= 1 {
                return Some(HostProcess {
                    boot,
                    pid,
                    started: stat.started,
                });
            }
            pid = stat.ppid;
        }
        None
    }

    /// The running process `pid` of this boot.
    #[cfg(test)]
    pub(crate) fn of_pid(pid: u32) -> Option<HostProcess> {
        Some(HostProcess {
            boot: boot_id()?,
            pid,
            started: Stat::of(pid)?.started,
        })
    }

    /// Whether the process is known to be gone: this machine's boot and
    /// pid namespace recorded it, and no process with its pid and start
    /// time runs. A process of another boot, machine or pid namespace is
    /// not known to be gone.
    pub fn is_gone(&self) -> bool {
        if boot_id().as_deref() != Some(self.boot.as_str()) {
            return false;
        }
        Stat::of(self.pid).is_none_or(|stat| stat.started != self.started)
    }

    /// The process as a session mark's value: `BOOT/NS PID START`.
    pub fn to_mark(&self) -> String {
        format!("{} {} {}", self.boot, self.pid, self.started)
    }

    /// The process a mark's value names; `None` for any other text.
    pub fn from_mark(text: &str) -> Option<HostProcess> {
        let mut parts = text.split(' ');
        let (boot, pid, started) = (parts.next()?, parts.next()?, parts.next()?);
        if parts.next().is_some() || boot.is_empty() {
            return None;
        }
        Some(HostProcess {
            boot: boot.to_owned(),
            pid: pid.parse().ok()?,
            started: started.parse().ok()?,
        })
    }
}

/// This boot of this machine and this process's pid namespace, as Linux
/// names them: `BOOT/NS`.
fn boot_id() -> Option<String> {
    let id = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").ok()?;
    let id = id.trim();
    let ns = std::fs::read_link("/proc/self/ns/pid").ok()?;
    let ns = ns.to_str()?;
    let word = format!("{id}/{ns}");
    (!id.is_empty() && !word.contains(char::is_whitespace)).then_some(word)
}

/// What `/proc/PID/stat` says of a process.
struct Stat {
    comm: String,
    ppid: u32,
    /// Clock ticks after boot.
    started: u64,
}

impl Stat {
    fn of(pid: u32) -> Option<Stat> {
        let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        // `PID (COMM) STATE PPID …`: the name may hold spaces and `)`.
        let (head, rest) = text.rsplit_once(')')?;
        let comm = head.split_once('(')?.1.to_owned();
        let fields: Vec<&str> = rest.split_whitespace().collect();
        Some(Stat {
            comm,
            ppid: fields.get(1)?.parse().ok()?,
            // Field 22 of the line; the 20th after the name.
            started: fields.get(19)?.parse().ok()?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A child that has exited is gone; this process is not; a mark reads
    /// back as the process it names, and any other text as none.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_process_that_exited_is_gone_and_a_running_one_is_not() {
        let me = std::process::id();
        let boot = boot_id().unwrap();
        let started = Stat::of(me).unwrap().started;
        let running = HostProcess {
            boot: boot.clone(),
            pid: me,
            started,
        };
        assert!(!running.is_gone());
        assert_eq!(HostProcess::from_mark(&running.to_mark()), Some(running));
        let reused = HostProcess {
            boot: boot.clone(),
            pid: me,
            started: started + 1,
        };
        assert!(reused.is_gone(), "a reused pid is another process");
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        let started = Stat::of(pid).map_or(0, |s| s.started);
        child.wait().unwrap();
        let exited = HostProcess {
            boot: boot.clone(),
            pid,
            started,
        };
        assert!(exited.is_gone());
        let elsewhere = HostProcess {
            boot: "another-machine".into(),
            ..exited
        };
        assert!(!elsewhere.is_gone(), "another boot's process is not judged");
        let sandboxed = HostProcess {
            boot: format!("{}/pid:[1]", boot.split('/').next().unwrap()),
            ..elsewhere
        };
        assert!(
            !sandboxed.is_gone(),
            "another namespace's process is not judged"
        );
        for text in ["", "b 1", "b x 2", "b 1 2 3", " 1 2"] {
            assert_eq!(HostProcess::from_mark(text), None, "{text:?}");
        }
        assert!(HostProcess::of_hook().is_some());
    }
}
