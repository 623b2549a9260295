//! `AGENTS.md` as the single source of a directory's agent instructions
//! (DESIGN.md §10): `CLAUDE.md` and `GEMINI.md` become relative symlinks to it, so
//! every agent reads the same text and no copy can drift.
//!
//! [`link`] checks everything before it changes anything: when it refuses,
//! the directory is exactly as it was. It never deletes a file: a regular
//! file in the place of a link is kept under a timestamped backup name that
//! is never reused (written through [`crate::user_files`], under a lock on
//! the directory, so two runs at once cannot lose it).

use std::fs;
use std::io;
use std::path::{Component, Path};

use crate::error::{Error, Result};
use crate::user_files::UserDir;

mod report;

pub use report::{
    LinkAction, LinkOutcome, LinkReport, LinkState, LinkStatus, SourceState, StatusReport,
};

/// The one real file.
pub const SOURCE_FILE: &str = "AGENTS.md";

/// The names that become symlinks to [`SOURCE_FILE`], in the order handled.
pub const LINK_NAMES: [&str; 2] = ["CLAUDE.md", "GEMINI.md"];

/// Symlink hops followed from `AGENTS.md` before calling it a loop (the
/// Linux kernel's limit).
const MAX_HOPS: usize = 40;

/// Makes `AGENTS.md` in `dir` the single source: `CLAUDE.md` and `GEMINI.md`
/// become the relative symlinks `CLAUDE.md -> AGENTS.md`. A regular file in
/// their place is renamed to `<name>.bak-<UTC time of now_ms>`, a wrong link
/// is replaced, a right one is left alone.
///
/// Refused with [`Error::Rejected`], before anything changes, when `dir`
/// does not exist or is not a directory, when `AGENTS.md` is missing or not
/// a regular file, when it is a symlink leading outside `dir` (through `..`
/// or an absolute path) or through `CLAUDE.md`/`GEMINI.md` (which would make
/// a loop), or when `CLAUDE.md` or `GEMINI.md` is a directory. Every reason
/// found is in the message. An [`Error::Io`] after the checks (a read-only
/// directory) may leave the first name done and the second not; running
/// again finishes the job.
pub fn link(dir: &Path, now_ms: i64) -> Result<LinkReport> {
    check_dir(dir)?;
    // Everything below happens under the directory's lock, so two runs at
    // once see each other's result instead of racing (DESIGN.md §12).
    let user_dir = UserDir::lock(dir)?;
    let mut problems = Vec::new();
    if let Err(problem) = check_source(dir) {
        problems.push(format!("{SOURCE_FILE} is {problem}"));
    }
    let stamp = crate::time::utc_stamp(now_ms);
    let mut plans = Vec::new();
    for name in LINK_NAMES {
        let path = dir.join(name);
        let plan = match inspect(&path)? {
            LinkState::Linked => LinkAction::AlreadyLinked,
            LinkState::Missing => LinkAction::Created,
            LinkState::RegularFile => LinkAction::BackedUp {
                backup: String::new(),
            },
            LinkState::WrongLink { target, .. } => LinkAction::Replaced {
                previous_target: target,
            },
            LinkState::Directory => {
                problems.push(format!(
                    "{name} is a directory; move it away, then link again"
                ));
                continue;
            }
        };
        plans.push(LinkOutcome { name, action: plan });
    }
    if !problems.is_empty() {
        return Err(Error::Rejected(format!(
            "cannot link in {}: {}. Nothing was changed.",
            dir.display(),
            problems.join("; ")
        )));
    }

    for outcome in &mut plans {
        if outcome.action == LinkAction::AlreadyLinked {
            continue;
        }
        // A regular file is hard-linked to a backup name that is never
        // reused, then the new link is renamed over it: the user's text has
        // a name at every moment.
        let backup =
            user_dir.put_symlink(Path::new(outcome.name), Path::new(SOURCE_FILE), &stamp)?;
        if let (LinkAction::BackedUp { backup: name }, Some(path)) = (&mut outcome.action, backup) {
            *name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
        }
    }
    Ok(LinkReport {
        dir: dir.to_owned(),
        links: plans,
    })
}

/// Reports, without changing anything, whether `AGENTS.md` in `dir` can be
/// the single source and what is at each of [`LINK_NAMES`]. Refused only
/// when `dir` does not exist or is not a directory.
pub fn status(dir: &Path) -> Result<StatusReport> {
    check_dir(dir)?;
    let source = match check_source(dir) {
        Ok(()) => SourceState::Ready,
        Err(problem) => SourceState::Unusable { problem },
    };
    let mut links = Vec::new();
    for name in LINK_NAMES {
        let state = inspect(&dir.join(name))?;
        links.push(LinkStatus { name, state });
    }
    Ok(StatusReport {
        dir: dir.to_owned(),
        source,
        links,
    })
}

fn check_dir(dir: &Path) -> Result<()> {
    match fs::metadata(dir) {
        Ok(meta) if meta.is_dir() => Ok(()),
        Ok(_) => Err(Error::Rejected(format!(
            "{} is not a directory; give the directory that holds {SOURCE_FILE}",
            dir.display()
        ))),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Err(Error::Rejected(format!(
            "{} does not exist; give the directory that holds {SOURCE_FILE}",
            dir.display()
        ))),
        Err(e) => Err(io_error(format!("reading {}", dir.display()), e)),
    }
}

/// `Ok` when `dir/AGENTS.md` is a regular file, or a chain of relative
/// symlinks that stays inside `dir`, never passes through one of the
/// [`LINK_NAMES`], and ends at a regular file. Otherwise what is wrong,
/// phrased to follow "AGENTS.md is".
fn check_source(dir: &Path) -> std::result::Result<(), String> {
    let source = dir.join(SOURCE_FILE);
    let unreadable = |e: io::Error| format!("unreadable ({e})");
    let mut current = source.clone();
    for hop in 0.. {
        let meta = match fs::symlink_metadata(&current) {
            Ok(meta) => meta,
            Err(e) if e.kind() == io::ErrorKind::NotFound && hop == 0 => {
                return Err(format!(
                    "missing; create it first: it is the single source that {} and {} link to",
                    LINK_NAMES[0], LINK_NAMES[1]
                ));
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                let target = fs::read_link(&source).unwrap_or_default();
                return Err(format!("a broken symlink (to {})", target.display()));
            }
            Err(e) => return Err(unreadable(e)),
        };
        if !meta.file_type().is_symlink() {
            break;
        }
        if hop == MAX_HOPS {
            return Err("a symlink loop".to_owned());
        }
        let target = fs::read_link(&current).map_err(unreadable)?;
        if hop == 0 {
            if target.is_absolute() || target.has_root() {
                return Err(format!(
                    "a symlink to the absolute path {}; the single source must be a file inside the directory",
                    target.display()
                ));
            }
            if leaves(&target) {
                return Err(format!(
                    "a symlink to {}, which leads outside the directory; the single source must be a file inside it",
                    target.display()
                ));
            }
        }
        let next = current.parent().unwrap_or(dir).join(&target);
        if let Some(name) = link_name_in(dir, &next) {
            return Err(format!(
                "a symlink through {name}, which is to become a link to it (a loop); make {SOURCE_FILE} the real file"
            ));
        }
        current = next;
    }

    // The whole chain, symlinked directories included, must end inside `dir`.
    let resolved = fs::canonicalize(&source).map_err(unreadable)?;
    let home = fs::canonicalize(dir).map_err(unreadable)?;
    if !resolved.starts_with(&home) {
        let target = fs::read_link(&source).unwrap_or_default();
        return Err(format!(
            "a symlink to {}, which leads outside the directory (to {}); the single source must be a file inside it",
            target.display(),
            resolved.display()
        ));
    }
    let meta = fs::metadata(&resolved).map_err(unreadable)?;
    if meta.is_dir() {
        return Err("a directory, not a file".to_owned());
    }
    if !meta.is_file() {
        return Err("not a regular file".to_owned());
    }
    Ok(())
}

/// True when a relative symlink target climbs above its own directory.
fn leaves(target: &Path) -> bool {
    let mut depth = 0usize;
    for component in target.components() {
        match component {
            Component::Normal(_) => depth += 1,
            Component::CurDir => {}
            Component::ParentDir if depth == 0 => return true,
            Component::ParentDir => depth -= 1,
            Component::RootDir | Component::Prefix(_) => return true,
        }
    }
    false
}

/// Which of [`LINK_NAMES`] `path` is, when it names one in `dir` itself.
fn link_name_in(dir: &Path, path: &Path) -> Option<&'static str> {
    let file_name = path.file_name()?;
    let name = LINK_NAMES.into_iter().find(|n| file_name == *n)?;
    let parent = fs::canonicalize(path.parent()?).ok()?;
    (parent == fs::canonicalize(dir).ok()?).then_some(name)
}

/// What is at `path`, without following a final symlink.
fn inspect(path: &Path) -> Result<LinkState> {
    let meta = match fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(LinkState::Missing),
        Err(e) => return Err(io_error(format!("reading {}", path.display()), e)),
    };
    if meta.file_type().is_symlink() {
        let target = fs::read_link(path)
            .map_err(|e| io_error(format!("reading the link {}", path.display()), e))?;
        if points_at_source(&target) {
            return Ok(LinkState::Linked);
        }
        let dangling = fs::metadata(path).is_err();
        return Ok(LinkState::WrongLink { target, dangling });
    }
    if meta.is_dir() {
        return Ok(LinkState::Directory);
    }
    Ok(LinkState::RegularFile)
}

/// `AGENTS.md` or `./AGENTS.md`: relative, in the same directory.
fn points_at_source(target: &Path) -> bool {
    let mut parts = target.components().filter(|c| *c != Component::CurDir);
    parts.next() == Some(Component::Normal(SOURCE_FILE.as_ref())) && parts.next().is_none()
}

fn io_error(what: String, source: io::Error) -> Error {
    Error::Io { what, source }
}

#[cfg(test)]
mod tests;
