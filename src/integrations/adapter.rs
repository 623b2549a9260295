//! One host's adapter, as the command line uses it: its hook events
//! ([`Adapter::handle`]) and its installer ([`Adapter::install`]).
//! `Host::adapter` (`dispatch.rs`) is the one place that maps a host to
//! its adapter; the host's names, variables and marks are properties of
//! `Host`. Adding a host is its adapter's folder, one variant of `Host`
//! with its properties, its real-host test and the docs.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::command_line::ReadLine;
use super::hook_event::HookReply;
use super::install::{Executable, InstallReport};
use crate::error::{Error, Result};
use crate::prompt::{Injector, Templates};
use crate::store::{Caller, Store};

/// What a hook event is handled with besides its input.
pub struct HookEnv<'a> {
    /// The event's time.
    pub now_ms: i64,
    /// How long the hook may read the host's transcripts; what is left is
    /// counted by the next event.
    pub read_time: Duration,
    /// The hook's environment (the variables the host passes it).
    pub var: &'a dyn Fn(&str) -> Option<String>,
    /// Reads a goalkeeper command line as the binary's parser does, for
    /// Claude Code's guard on its shell tool.
    pub read: ReadLine,
    /// The hook's caller: where it keeps the files' hashes (its checks are
    /// judged in the directory the event names).
    pub caller: &'a Caller,
}

/// What an install is asked to do.
pub struct InstallRequest<'a> {
    /// The directory given with the adapter's flag
    /// ([`Adapter::install_flags`]: `--project`, or Codex's
    /// `--codex-home`), if any.
    pub dir: Option<&'a Path>,
    /// The goalkeeper executable the configuration runs.
    pub command: &'a Executable,
    /// `--policy`, for an adapter that takes it.
    pub policy: bool,
    /// The prompts (pi's extension carries the tools' descriptions).
    pub templates: &'a Templates,
    /// The install's time.
    pub now_ms: i64,
    /// Asks the person running the install a yes-or-no question; false
    /// when nobody can answer.
    pub ask: &'a dyn Fn(&str) -> bool,
}

impl InstallRequest<'_> {
    /// The project directory: the one given, else the current one.
    pub fn project(&self) -> Result<PathBuf> {
        match self.dir {
            Some(dir) => Ok(dir.to_owned()),
            None => std::env::current_dir().map_err(|source| Error::Io {
                what: "cannot read the current directory".into(),
                source,
            }),
        }
    }
}

/// What an install did, and what to tell the person after the files.
#[derive(Debug)]
pub struct Installed {
    /// File by file.
    pub report: InstallReport,
    /// Notes printed after the report.
    pub notes: Vec<String>,
    /// True when the install only finished the host's goalkeeper package
    /// (plugin, extension), whose own binary the host runs: no file names
    /// the executable.
    pub packaged: bool,
}

impl From<InstallReport> for Installed {
    fn from(report: InstallReport) -> Installed {
        Installed {
            report,
            notes: Vec::new(),
            packaged: false,
        }
    }
}

/// One host's adapter.
pub trait Adapter: Sync {
    /// Handles one hook event (its JSON, as the host sent it). Never
    /// fails: every problem becomes a note and an empty reply.
    fn handle(
        &self,
        store: &mut Store,
        injector: &Injector,
        input: &str,
        env: &HookEnv<'_>,
    ) -> HookReply;

    /// The options `goalkeeper install HOST` takes besides `--command`:
    /// where it writes (`--project`, or the host's user configuration's
    /// flag) first.
    fn install_flags(&self) -> &'static [&'static str];

    /// Wires goalkeeper into the host's configuration, or finishes the
    /// install of the host's package of goalkeeper when it is installed.
    fn install(&self, request: &InstallRequest<'_>) -> Result<Installed>;
}
