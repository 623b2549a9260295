//! Context resources (DESIGN.md §10): the files around an agent that shape its
//! system prompt, and the `AGENTS.md` single-source links.
//!
//! - [`assemble`] builds the system prompt from a base prompt, the project's
//!   `AGENTS.md`/`CLAUDE.md` files, the workspace files (`SOUL.md`, memory of
//!   today and yesterday, ...), the list of skills, and the date and working
//!   directory. It never fails: what it cannot use becomes a [`Diagnostic`].
//! - [`link`] makes `AGENTS.md` the one real file of a directory, with
//!   `CLAUDE.md` and `GEMINI.md` as relative symlinks to it; [`status`]
//!   reports how far a directory is from that.
//!
//! Nothing here prints or reads the real clock: the caller passes the time.

pub(crate) mod file;
// What only the command line uses (`prompt system`, `link`, `status`).
#[cfg(feature = "cli")]
mod skills;
#[cfg(feature = "cli")]
mod system_prompt;
#[cfg(feature = "cli")]
mod workspace;

#[cfg(feature = "cli")]
pub use system_prompt::{AssembleOptions, assemble};
#[cfg(feature = "cli")]
pub use workspace::{link, status};

use std::fmt;
use std::path::{Path, PathBuf};

use serde::Serialize;

/// A resource that was found but not used, or a setting that points nowhere.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    /// The file or directory concerned.
    #[serde(serialize_with = "serialize_path::plain")]
    pub path: PathBuf,
    /// What is wrong and what happened, phrased to follow the path
    /// (`is not valid UTF-8 (invalid byte at offset 3); skipped`).
    pub problem: String,
}

impl Diagnostic {
    #[cfg_attr(not(feature = "cli"), expect(dead_code))]
    pub(crate) fn new(path: &Path, problem: String) -> Diagnostic {
        Diagnostic {
            path: path.to_owned(),
            problem,
        }
    }
}

impl fmt::Display for Diagnostic {
    /// `<path>: <problem>`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.problem)
    }
}

/// Paths in JSON output: as text, with any bytes that are not UTF-8 replaced
/// (serde's own `Path` impl fails on those, and one odd file name must not
/// break `--json`).
mod serialize_path {
    use std::path::{Path, PathBuf};

    use serde::Serializer;

    pub fn plain<S: Serializer>(path: &Path, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&path.to_string_lossy())
    }

    #[cfg_attr(not(feature = "cli"), expect(dead_code))]
    pub fn option<S: Serializer>(path: &Option<PathBuf>, serializer: S) -> Result<S::Ok, S::Error> {
        match path {
            Some(path) => plain(path, serializer),
            None => serializer.serialize_none(),
        }
    }
}
