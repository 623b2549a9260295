//! What [`link`](super::link) and [`status`](super::status) report: plain
//! data, serializable for `--json`, with one printable line per file.

use std::fmt;
use std::path::PathBuf;

use serde::Serialize;

use super::SOURCE_FILE;
use crate::resources::serialize_path;

/// What is at one of the [`LINK_NAMES`](super::LINK_NAMES) now.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum LinkState {
    /// A relative symlink to `AGENTS.md`, as it should be.
    Linked,
    /// Nothing there; [`link`](super::link) would create the link.
    Missing,
    /// A file that is not a symlink: a copy that may have drifted.
    /// [`link`](super::link) would move it to a backup.
    RegularFile,
    /// A symlink to anything else: another file, a missing file, or
    /// `AGENTS.md` through an absolute path. [`link`](super::link) would
    /// replace it.
    WrongLink {
        /// What the link holds, as written.
        #[serde(serialize_with = "serialize_path::plain")]
        target: PathBuf,
        /// True when it leads nowhere.
        dangling: bool,
    },
    /// A directory: [`link`](super::link) refuses to touch it.
    Directory,
}

/// One compatibility name and what is there.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LinkStatus {
    /// `CLAUDE.md` or `GEMINI.md`.
    pub name: &'static str,
    /// What is there.
    #[serde(flatten)]
    pub state: LinkState,
}

impl fmt::Display for LinkStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", self.name)?;
        match &self.state {
            LinkState::Linked => write!(f, "linked to {SOURCE_FILE}"),
            LinkState::Missing => f.write_str("missing; link would create it"),
            LinkState::RegularFile => {
                f.write_str("regular file (drifted); link would back it up and link it")
            }
            LinkState::WrongLink { target, dangling } => {
                let dangling = if *dangling { " (dangling)" } else { "" };
                write!(
                    f,
                    "wrong link to {}{dangling}; link would replace it",
                    target.display()
                )
            }
            LinkState::Directory => f.write_str("directory; link refuses until it is moved away"),
        }
    }
}

/// Whether `AGENTS.md` can serve as the single source.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum SourceState {
    /// A regular file (or a relative symlink to one inside the directory).
    Ready,
    /// [`link`](super::link) would refuse, for this reason.
    Unusable {
        /// What is wrong, phrased to follow `AGENTS.md is`.
        problem: String,
    },
}

/// What [`status`](super::status) found in a directory.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct StatusReport {
    /// The directory, as given.
    #[serde(serialize_with = "serialize_path::plain")]
    pub dir: PathBuf,
    /// The state of `AGENTS.md`.
    pub source: SourceState,
    /// The state of each of [`LINK_NAMES`](super::LINK_NAMES), in that order.
    pub links: Vec<LinkStatus>,
}

impl StatusReport {
    /// True when `AGENTS.md` is usable and every name links to it:
    /// [`link`](super::link) would change nothing.
    #[cfg(test)]
    pub fn in_sync(&self) -> bool {
        self.source == SourceState::Ready && self.links.iter().all(|l| l.state == LinkState::Linked)
    }

    /// One line per file, `AGENTS.md` first, for printing.
    pub fn lines(&self) -> Vec<String> {
        let source = match &self.source {
            SourceState::Ready => format!("{SOURCE_FILE}: the single source"),
            SourceState::Unusable { problem } => format!("{SOURCE_FILE}: {problem}"),
        };
        let links = self.links.iter().map(ToString::to_string);
        std::iter::once(source).chain(links).collect()
    }
}

impl fmt::Display for StatusReport {
    /// [`StatusReport::lines`], joined by newlines, no trailing newline.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.lines().join("\n"))
    }
}

/// What [`link`](super::link) did to one name.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum LinkAction {
    /// Nothing was there; the link was created.
    Created,
    /// The link was already right; it was not touched.
    AlreadyLinked,
    /// A regular file was renamed to `backup` (in the same directory), then
    /// the link was created.
    BackedUp {
        /// The backup's file name: `CLAUDE.md.bak-20261129T185600Z`, with
        /// `-2`, `-3`, ... appended if that name was taken.
        backup: String,
    },
    /// A wrong link was replaced (atomically: the name never went missing).
    Replaced {
        /// What the old link held.
        #[serde(serialize_with = "serialize_path::plain")]
        previous_target: PathBuf,
    },
}

/// One name and what [`link`](super::link) did to it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LinkOutcome {
    /// `CLAUDE.md` or `GEMINI.md`.
    pub name: &'static str,
    /// What was done.
    #[serde(flatten)]
    pub action: LinkAction,
}

impl fmt::Display for LinkOutcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", self.name)?;
        match &self.action {
            LinkAction::Created => write!(f, "linked to {SOURCE_FILE}"),
            LinkAction::AlreadyLinked => write!(f, "already linked to {SOURCE_FILE}"),
            LinkAction::BackedUp { backup } => write!(
                f,
                "was a regular file, moved to {backup}; linked to {SOURCE_FILE}"
            ),
            LinkAction::Replaced { previous_target } => write!(
                f,
                "pointed to {}; relinked to {SOURCE_FILE}",
                previous_target.display()
            ),
        }
    }
}

/// What [`link`](super::link) did in a directory.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LinkReport {
    /// The directory, as given.
    #[serde(serialize_with = "serialize_path::plain")]
    pub dir: PathBuf,
    /// One outcome per name of [`LINK_NAMES`](super::LINK_NAMES), in that order.
    pub links: Vec<LinkOutcome>,
}

impl LinkReport {
    /// True when anything on disk changed.
    #[cfg(test)]
    pub fn changed(&self) -> bool {
        self.links
            .iter()
            .any(|l| l.action != LinkAction::AlreadyLinked)
    }

    /// One line per name, for printing.
    pub fn lines(&self) -> Vec<String> {
        self.links.iter().map(ToString::to_string).collect()
    }
}

impl fmt::Display for LinkReport {
    /// [`LinkReport::lines`], joined by newlines, no trailing newline.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.lines().join("\n"))
    }
}
