//! What every command shares: the [`Context`] a command runs in (the
//! database, the session, the agent, the settings and the clock as the
//! command line and the environment named them), what a command hands back
//! ([`Outcome`]), and how long a hook may wait. The commands import it
//! from here; `cli/mod.rs` is the command enum and the dispatch alone.

use std::path::PathBuf;

use crate::integrations::host_session::{Host, Wiring};
use crate::prompt::Injector;
use crate::settings::Settings;
use crate::store::{Caller, Location};
use crate::{AgentName, Error, SessionId, Store};

/// What a command hands back to `main`: how to exit.
pub(crate) enum Outcome {
    /// Exit 0.
    Success,
    /// Exit 1: the operation was understood and refused; its result was printed.
    Rejected,
}

/// Everything a command needs besides its own arguments.
#[derive(Clone)]
pub(crate) struct Context {
    /// `--db`, else `$GOALKEEPER_DB`, read once where the command line is;
    /// `None`: the default location.
    pub(super) db: Option<Location>,
    pub(super) session: SessionId,
    /// `--session-from HOST`, when given.
    pub(super) session_from: Option<Host>,
    /// `--agent NAME` / `$GOALKEEPER_AGENT`; `None`: the session's own agent.
    pub(super) agent: Option<AgentName>,
    /// What named an agent (`main` included), `--agent` or
    /// `GOALKEEPER_AGENT`; `None` when nothing did.
    pub(super) agent_named_by: Option<&'static str>,
    pub(super) config: Option<PathBuf>,
    pub(super) sets: Vec<String>,
    pub(super) json: bool,
    pub(super) now_ms: i64,
    /// A hook or the status line: connecting waits only within the hook's
    /// own limit ([`hook_wait`]).
    #[cfg(feature = "postgres")]
    pub(super) host_event: bool,
    /// The command may create the database where there is none
    /// ([`Command::may_create_database`]).
    pub(super) may_create: bool,
}

impl Context {
    /// Opens the store: `--db`, else `$GOALKEEPER_DB`, else the platform
    /// data directory. The process ends after the command, so closing the store is left
    /// to the exit when it would write nothing.
    pub(super) fn store(&self) -> Result<Store, Error> {
        let location = self.location()?;
        let store = if self.may_create {
            if self.db.is_none()
                && let Location::Sqlite(path) = &location
                && let Some(dir) = path.parent()
            {
                // The platform data directory, on a first run: the one
                // directory goalkeeper creates for a database.
                std::fs::create_dir_all(dir).map_err(|source| Error::Io {
                    what: format!("cannot create the data directory {}", dir.display()),
                    source,
                })?;
            }
            Store::open(&location)
        } else {
            Store::open_existing(&location).map_err(|e| match e {
                // Before a first run there is no data directory either:
                // the database is simply not there yet.
                Error::NoDatabaseDir { .. } if self.db.is_none() => match location {
                    Location::Sqlite(path) => Error::NoDatabase(path),
                    #[cfg(feature = "postgres")]
                    Location::Postgres(_) => e,
                },
                e => e,
            })
        };
        store.map(Store::exits_with_process)
    }

    /// The command's caller: its checks judged on the files here, with the
    /// hashes verify kept, and its agent calls `--agent`'s when given.
    pub(crate) fn caller(&self) -> Result<Caller, Error> {
        let mut caller = Caller::default();
        caller.judge_in(None, cache_dir());
        if let Some(agent) = &self.agent {
            let lease = self.settings()?.todo.claim.lease;
            caller.act_as(Some(agent.clone()), lease);
        }
        Ok(caller)
    }

    /// Where the store is: a `postgres://` URL (with `$PGPASSWORD` as the
    /// password when the URL has none), else a SQLite file.
    pub(super) fn location(&self) -> Result<Location, Error> {
        let location = match &self.db {
            Some(location) => location.clone(),
            None => Location::Sqlite(default_db_path()?),
        };
        self.retrying(location)
    }

    /// A `--db`-style value as a location ([`location_of`]), a PostgreSQL
    /// URL trying refused connections again as the settings say.
    pub(super) fn located(&self, path: PathBuf) -> Result<Location, Error> {
        self.retrying(location_of(path)?)
    }

    /// `location`, a PostgreSQL URL trying refused connections again as the
    /// settings say.
    fn retrying(&self, location: Location) -> Result<Location, Error> {
        match location {
            #[cfg(feature = "postgres")]
            Location::Postgres(url) => {
                let (retry, set_by) = self.connect_retry()?;
                Ok(Location::Postgres(Box::new(
                    url.retrying_for_as(retry, set_by),
                )))
            }
            other => Ok(other),
        }
    }

    /// How long a PostgreSQL connection the server turns away for now is
    /// tried again: `postgres.connect.retry`, and for a hook or the status
    /// line at most half their wait, so that a refused hook still ends in
    /// time, with its note, inside the host's hook timeout.
    #[cfg(feature = "postgres")]
    pub(super) fn connect_retry(&self) -> Result<(std::time::Duration, &'static str), Error> {
        let seconds = self.settings()?.postgres.connect.retry;
        let retry = std::time::Duration::from_secs(seconds);
        let own = hook_wait() / 2;
        Ok(if self.host_event && own < retry {
            (own, "a hook's limit, half its wait")
        } else if seconds == 0 {
            (retry, "postgres.connect.retry = 0")
        } else {
            (retry, "postgres.connect.retry")
        })
    }

    /// The settings: the file of `--config` / `$GOALKEEPER_CONFIG` / the
    /// platform default, then each `--set`.
    pub(super) fn settings(&self) -> Result<Settings, Error> {
        Settings::load(self.config.as_deref(), &self.sets)
    }

    /// The prompt injector for the settings (with `prompts.dir` overrides).
    pub(super) fn injector(&self) -> Result<Injector, Error> {
        Injector::from_settings(self.settings()?)
    }

    /// The injector naming the tools as `host`, wired as `wiring`, shows
    /// them to the model.
    pub(super) fn host_injector(&self, host: Host, wiring: Wiring) -> Result<Injector, Error> {
        Ok(self.injector()?.with_tool_names(host.tool_names(wiring)))
    }

    /// The injector for `--active-tools`: when they are a host's names for
    /// the tools (`mcp__goalkeeper__todo`), the prompts use those names.
    pub(super) fn injector_for(&self, active_tools: &[String]) -> Result<Injector, Error> {
        match Host::naming_tools(active_tools) {
            Some((host, wiring)) => self.host_injector(host, wiring),
            None => self.injector(),
        }
    }
}

// `--active-tools a,b`: the tool names the agent can call right now. (No
// doc comment: see `TargetArgs` in todo.rs.)
#[derive(Debug, clap::Args)]
pub(super) struct ActiveTools {
    /// The tools the agent can call now, comma-separated [default: every
    /// tool]
    #[arg(long, value_delimiter = ',', value_name = "NAMES")]
    pub(super) active_tools: Option<Vec<String>>,
}

impl ActiveTools {
    pub(super) fn names(&self) -> Vec<String> {
        let Some(names) = &self.active_tools else {
            return crate::integrations::TOOL_NAMES.map(str::to_owned).to_vec();
        };
        names
            .iter()
            .map(|t| t.trim().to_owned())
            .filter(|t| !t.is_empty())
            .collect()
    }
}

/// A `--db`-style value as a location: a `postgres://` URL (with
/// `$PGPASSWORD` as the password when the URL has none), else a SQLite file.
pub(super) fn location_of(path: PathBuf) -> Result<Location, Error> {
    match path.to_str() {
        Some(text) => match Location::parse(text)? {
            #[cfg(feature = "postgres")]
            Location::Postgres(url) => Ok(Location::Postgres(Box::new(
                url.with_password_fallback(std::env::var("PGPASSWORD").ok().as_deref()),
            ))),
            other => Ok(other),
        },
        None => Ok(Location::Sqlite(path)),
    }
}

/// Where the tree's file hashes are kept between runs: the platform cache
/// directory (`~/.cache/goalkeeper`), when there is one.
pub(super) fn cache_dir() -> Option<std::path::PathBuf> {
    directories::ProjectDirs::from("", "", "goalkeeper").map(|d| d.cache_dir().to_owned())
}

pub(super) fn default_db_path() -> Result<PathBuf, Error> {
    directories::ProjectDirs::from("", "", "goalkeeper")
        .map(|dirs| dirs.data_dir().join("goalkeeper.db"))
        .ok_or_else(|| {
            Error::Usage(
                "cannot find a home directory for the default database; pass --db PATH or set GOALKEEPER_DB".into(),
            )
        })
}

/// The clock: `$GOALKEEPER_NOW` (milliseconds since the epoch) when set,
/// for reproducible output, else the system clock.
pub(super) fn now_ms() -> Result<i64, Error> {
    let text = match std::env::var_os("GOALKEEPER_NOW") {
        Some(value) => value.to_string_lossy().into_owned(),
        None => return Ok(crate::time::system_now_ms()),
    };
    if text.trim().is_empty() {
        return Ok(crate::time::system_now_ms());
    }
    text.trim().parse().map_err(|_| {
        Error::Usage(format!(
            "GOALKEEPER_NOW={} is not a number; give milliseconds since the epoch, or unset it",
            crate::sanitize::quoted_excerpt(&text)
        ))
    })
}

/// The current directory, for `--session-from` and `install`.
pub(super) fn current_dir() -> Result<PathBuf, Error> {
    std::env::current_dir().map_err(|source| Error::Io {
        what: "cannot read the current directory".into(),
        source,
    })
}

/// The longest a hook or the status line works (reading its input, waiting
/// for the database, answering) before it gives up, silently on stdout and
/// with exit 0: well inside the 15 s the installers give a hook, whatever
/// holds the database (SQLite alone may wait 10 s on a stuck reader).
pub(crate) const HOOK_WAIT: std::time::Duration = std::time::Duration::from_secs(8);

/// [`HOOK_WAIT`], or `$GOALKEEPER_HOOK_WAIT_MS` when set to a number (for
/// tests and for hosts with a shorter hook timeout).
pub(crate) fn hook_wait() -> std::time::Duration {
    std::env::var("GOALKEEPER_HOOK_WAIT_MS")
        .ok()
        .and_then(|ms| ms.trim().parse().ok())
        .map_or(HOOK_WAIT, std::time::Duration::from_millis)
}
