//! `goalkeeper verify` (DESIGN.md §13): the checks run one after another
//! in a directory ([`process`]), the fingerprint of its files taken as the
//! run starts, and the run's evidence, which the caller records in the
//! store, or prints as a record line ([`record`]) for a host's hook to
//! store when the store cannot be written from where it runs.

pub mod nested;
pub mod process;
#[cfg(target_os = "linux")]
mod procs;
pub mod record;
pub mod supervise;

use crate::check::report::Ran;
use crate::check::{CheckRun, Evidence, RunBy, Scope};
use crate::error::Result;
use crate::tree::{CacheWrite, Scan, Tree};

/// One run of a scope's checks.
#[derive(Clone, Debug)]
pub struct Run {
    /// Its evidence.
    pub evidence: Evidence,
    /// What each check printed, in the order they ran.
    pub ran: Vec<Ran>,
    /// The files as the run started: what the fingerprint covers.
    pub files: Scan,
    /// The files the checks changed as they ran (added, removed or
    /// edited), by path: when there are any, the run proves nothing about
    /// any tree and is not to be recorded.
    pub changed: Vec<String>,
}

/// Runs `commands` (the checks of `scope`) one after another in `tree`'s
/// directory within `limits`, after taking the fingerprint of its files
/// (which writes the cache file when it can), and takes it again when they
/// end. Returns the evidence, what each check printed, what the
/// fingerprint covered and which files the checks changed. `started_ms` is
/// the clock as the run starts.
/// In a process that [claimed](supervise::claim) what its checks start, a
/// signal caught before the run ends ends the process instead, and nothing
/// is returned to record.
pub fn run_checks(
    scope: Scope,
    commands: &[String],
    tree: &Tree,
    limits: process::Limits,
    by: RunBy,
    started_ms: i64,
) -> Result<Run> {
    let files = tree.listing(CacheWrite::Yes)?;
    let fingerprint = files.fingerprint.clone();
    let mut ran = Vec::with_capacity(commands.len());
    for command in commands {
        ran.push(process::run(command, tree.dir(), limits)?);
    }
    supervise::checks_done();
    // The files again: a check that changed them passed (or failed) on
    // files that are no longer there, and what it says about the files as
    // they are now is nothing.
    let changed = tree.listing(CacheWrite::Yes)?.changed_since(&files);
    let evidence = Evidence {
        run: run_id(),
        scope,
        dir: tree.dir().to_string_lossy().into_owned(),
        fingerprint: fingerprint.as_str().to_owned(),
        started_ms,
        by,
        checks: ran
            .iter()
            .map(|r| CheckRun {
                command: r.command.clone(),
                exit: r.exit,
                ms: r.ms,
            })
            .collect(),
    };
    Ok(Run {
        evidence,
        ran,
        files,
        changed,
    })
}

/// A run's random id: 128 bits from the system's random source, in
/// hexadecimal (or, should it be unreadable, from the process, the clock
/// and a counter).
fn run_id() -> String {
    use std::io::Read;
    let mut bytes = [0u8; 16];
    let random = std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut bytes));
    if random.is_err() {
        use sha2::{Digest, Sha256};
        static COUNT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let seed = format!(
            "{}:{now}:{}",
            std::process::id(),
            COUNT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        );
        bytes.copy_from_slice(&Sha256::digest(seed.as_bytes())[..16]);
    }
    crate::tree::hex(&bytes)
}
