//! The working tree's fingerprint (DESIGN.md §13): one hash of the content
//! of every file under a directory that the `.gitignore` rules, read as
//! git reads them for that directory ([`walk`]), do not exclude. A check's run
//! is evidence for the fingerprint taken as it started; the gate compares
//! it with the fingerprint of the files as they are now.
//!
//! goalkeeper reads the files itself: the walk is the `ignore` crate's
//! (ripgrep's), which reads `.gitignore` files and `.git/info/exclude`
//! and runs nothing. It never runs `git` or any program a repository's
//! configuration can name (filters, fsmonitor, hooks, textconv): the agent
//! can edit that configuration. The user's global excludes file and
//! ripgrep's own `.ignore` files are not read, so the same tree has the
//! same fingerprint for every process that looks at it.
//!
//! What goes in, for each entry in a fixed order: its path relative to the
//! directory, its kind (file, symbolic link, other), whether a file is
//! executable, and a SHA-256 of its content (of its target's path, for a
//! link; links are never followed). Empty directories and `.git` do not,
//! nor do special files (devices, FIFOs, sockets): they hold none of the
//! project's content, and a host's sandbox binds `/dev/null` over paths
//! it hides, which the gate outside the sandbox does not see.
//! A file that cannot be read goes in as unreadable, so the fingerprint
//! still changes when it does.
//!
//! Hashing every file again on every look would make the gate cost what
//! reading the whole tree costs; [`cache`] keeps each file's hash while its
//! size, modification and change times and inode stay the same.

mod cache;
mod walk;

use std::collections::BTreeMap;
use std::fs::{File, Metadata};
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

pub use cache::{CacheWrite, forget_in_memory};
use cache::{Cached, FileKey};

use crate::error::{Error, Result};

/// A working tree's fingerprint: 32 hexadecimal digits (the first 128 bits
/// of a SHA-256 over the tree's entries).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Fingerprint(String);

impl Fingerprint {
    /// Its hexadecimal text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// A fingerprint read back from its text: 32 lower-case hexadecimal
    /// digits, else `None`.
    pub fn parse(text: &str) -> Option<Fingerprint> {
        (text.len() == 32 && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')))
            .then(|| Fingerprint(text.to_owned()))
    }
}

impl std::fmt::Display for Fingerprint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// A directory whose tree can be fingerprinted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tree {
    dir: PathBuf,
    cache_dir: Option<PathBuf>,
}

/// One fingerprint and what taking it cost.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scan {
    /// The fingerprint.
    pub fingerprint: Fingerprint,
    /// Entries that went into it.
    pub files: usize,
    /// Files whose content was read (not found in the cache).
    pub hashed: usize,
    /// Bytes read to hash them.
    pub bytes_hashed: u64,
    /// The files and links the directory itself holds that the
    /// `.gitignore` rules leave out, by name, sorted (only from
    /// [`Tree::listing`]).
    pub left_out: Vec<String>,
    /// What went in for each entry, by its path relative to the directory
    /// (only from [`Tree::listing`]).
    entries: BTreeMap<Vec<u8>, [u8; 32]>,
}

impl Scan {
    /// The paths (relative to the directory) of the entries that differ
    /// between two listings of one tree: added, removed or changed, sorted.
    pub fn changed_since(&self, before: &Scan) -> Vec<String> {
        let mut paths: Vec<&Vec<u8>> = self
            .entries
            .iter()
            .filter(|(path, digest)| before.entries.get(*path) != Some(digest))
            .map(|(path, _)| path)
            .chain(
                before
                    .entries
                    .keys()
                    .filter(|path| !self.entries.contains_key(*path)),
            )
            .collect();
        paths.sort();
        paths
            .into_iter()
            .map(|p| String::from_utf8_lossy(p).into_owned())
            .collect()
    }
}

impl Tree {
    /// The tree under `dir`, by its canonical path. Refused when `dir`
    /// does not exist (a directory that vanished) or is not a directory.
    pub fn new(dir: &Path) -> Result<Tree> {
        let canonical = std::fs::canonicalize(dir).map_err(|source| Error::Io {
            what: format!("cannot read the directory {}", dir.display()),
            source,
        })?;
        if !canonical.is_dir() {
            return Err(Error::Usage(format!(
                "{} is not a directory",
                dir.display()
            )));
        }
        Ok(Tree {
            dir: canonical,
            cache_dir: None,
        })
    }

    /// The same tree, keeping its hashes between processes in a file under
    /// `cache_dir` (see [`cache`]); without one, only this process keeps
    /// them.
    pub fn with_cache_dir(mut self, cache_dir: Option<PathBuf>) -> Tree {
        self.cache_dir = cache_dir;
        self
    }

    /// The directory, canonical.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The fingerprint of the files as they are now. Reads files and runs
    /// nothing; writes the cache file only when `write` says so (the gate
    /// and the prompts never do).
    pub fn fingerprint(&self, write: CacheWrite) -> Result<Scan> {
        self.scan(write, std::time::SystemTime::now(), false)
    }

    /// [`Tree::fingerprint`], with what went in for each entry (so two
    /// listings tell which files changed between them,
    /// [`Scan::changed_since`]) and the files the directory holds that the
    /// `.gitignore` rules leave out ([`Scan::left_out`]): what `verify`
    /// reports.
    pub fn listing(&self, write: CacheWrite) -> Result<Scan> {
        self.scan(write, std::time::SystemTime::now(), true)
    }

    /// [`Tree::fingerprint`] as if the look started at `started`: the
    /// cache keeps only the files changed before it (see [`cache`]).
    #[cfg(test)]
    pub(crate) fn fingerprint_as_of(
        &self,
        write: CacheWrite,
        started: std::time::SystemTime,
    ) -> Result<Scan> {
        self.scan(write, started, false)
    }

    fn scan(&self, write: CacheWrite, started: std::time::SystemTime, list: bool) -> Result<Scan> {
        if !self.dir.is_dir() {
            return Err(Error::Io {
                what: format!("cannot read the directory {}", self.dir.display()),
                source: std::io::Error::from(std::io::ErrorKind::NotFound),
            });
        }
        let mut known = cache::load(&self.dir, self.cache_dir.as_deref());
        let mut seen = Cached::default();
        let mut outer = Sha256::new();
        let mut scan = Scan {
            fingerprint: Fingerprint(String::new()),
            files: 0,
            hashed: 0,
            bytes_hashed: 0,
            left_out: Vec::new(),
            entries: BTreeMap::new(),
        };
        let mut own_names = Vec::new();
        for entry in walk::walker(&self.dir).build() {
            // An entry the walk cannot read (a directory without
            // permission) is left out; a file it lists but cannot open
            // goes in as unreadable below.
            let Ok(entry) = entry else { continue };
            if entry.depth() == 0 {
                continue;
            }
            let Some(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                continue;
            }
            let metadata = entry.metadata();
            // A special file (device, FIFO, socket) is left out, judged by
            // what the path is now rather than by how its directory lists
            // it: a sandbox that binds `/dev/null` over a path it hides
            // (Claude Code's, over its configuration files) lists it as
            // the empty file it mounts on, and the gate outside sees no
            // file there at all.
            if let Ok(meta) = &metadata {
                let now = meta.file_type();
                if !now.is_file() && !now.is_symlink() && !now.is_dir() {
                    continue;
                }
            }
            let path = entry.path();
            let relative = path.strip_prefix(&self.dir).unwrap_or(path);
            let (tag, hash) = match metadata {
                Ok(meta) if kind.is_symlink() => ("l", link_hash(path, &meta)),
                Ok(meta) if kind.is_file() => {
                    let key = FileKey::of(&meta);
                    let hash = match known.take(relative, &key) {
                        Some(hash) => Some(hash),
                        None => {
                            let hash = file_hash(path);
                            if hash.is_some() {
                                scan.hashed += 1;
                                scan.bytes_hashed += meta.len();
                            }
                            hash
                        }
                    };
                    if let Some(hash) = hash {
                        seen.put(relative, key, hash);
                    }
                    (if meta.mode() & 0o111 != 0 { "x" } else { "f" }, hash)
                }
                Ok(_) => ("o", Some([0; 32])),
                Err(_) => ("f", None),
            };
            scan.files += 1;
            outer.update(relative.as_os_str().as_bytes());
            outer.update([0]);
            outer.update(tag.as_bytes());
            match hash {
                Some(hash) => outer.update(hash),
                None => outer.update(b"unreadable"),
            }
            outer.update([b'\n']);
            if list {
                let mut one = Sha256::new();
                one.update(tag.as_bytes());
                one.update(hash.as_ref().map_or(&b"unreadable"[..], |h| &h[..]));
                let path = relative.as_os_str().as_bytes().to_vec();
                if entry.depth() == 1 {
                    own_names.push(path.clone());
                }
                scan.entries.insert(path, one.finalize().into());
            }
        }
        let digest = outer.finalize();
        scan.fingerprint = Fingerprint(hex(&digest[..16]));
        if list {
            own_names.sort();
            scan.left_out = walk::left_out(&self.dir, &own_names);
        }
        cache::keep(&self.dir, self.cache_dir.as_deref(), seen, started, write);
        Ok(scan)
    }
}

/// A directory to judge checks in, and the fingerprint of its files,
/// taken the first time it is asked for and then kept: a call of the gate
/// or a prompt reads the tree at most once, and not at all when nothing
/// carries a check (even the directory is looked up only then). It only
/// reads (the cache file included).
#[derive(Debug)]
pub struct Look {
    /// The directory; `None`: the process's current directory.
    given: Option<PathBuf>,
    cache_dir: Option<PathBuf>,
    tree: std::sync::OnceLock<(PathBuf, std::result::Result<Tree, String>)>,
    fingerprint: std::sync::OnceLock<std::result::Result<Fingerprint, String>>,
}

impl Look {
    /// The look at `dir` (`None`: the process's current directory when it
    /// is first needed), with the hashes kept under `cache_dir` when given.
    /// Nothing is read yet.
    pub fn at(dir: Option<PathBuf>, cache_dir: Option<PathBuf>) -> Look {
        Look {
            given: dir,
            cache_dir,
            tree: std::sync::OnceLock::new(),
            fingerprint: std::sync::OnceLock::new(),
        }
    }

    fn tree(&self) -> &(PathBuf, std::result::Result<Tree, String>) {
        self.tree.get_or_init(|| {
            let dir = match &self.given {
                Some(dir) => Ok(dir.clone()),
                None => std::env::current_dir()
                    .map_err(|e| format!("cannot read the current directory: {e}")),
            };
            match dir {
                Ok(dir) => {
                    let tree = Tree::new(&dir)
                        .map(|t| t.with_cache_dir(self.cache_dir.clone()))
                        .map_err(|e| e.to_string());
                    (dir, tree)
                }
                Err(e) => (PathBuf::new(), Err(e)),
            }
        })
    }

    /// The directory, canonical when it exists.
    pub fn dir(&self) -> &Path {
        let (dir, tree) = self.tree();
        tree.as_ref().map_or(dir, Tree::dir)
    }

    /// The fingerprint of the files as they are now, or why they cannot
    /// be read (a directory that vanished).
    pub fn fingerprint(&self) -> std::result::Result<&Fingerprint, &str> {
        self.fingerprint
            .get_or_init(|| {
                let tree = self.tree().1.as_ref().map_err(Clone::clone)?;
                tree.fingerprint(CacheWrite::No)
                    .map(|scan| scan.fingerprint)
                    .map_err(|e| e.to_string())
            })
            .as_ref()
            .map_err(String::as_str)
    }
}

/// The SHA-256 of the file at `path`, `None` when it cannot be read.
fn file_hash(path: &Path) -> Option<[u8; 32]> {
    let mut file = File::open(path).ok()?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0; 64 * 1024];
    loop {
        match file.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => hasher.update(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return None,
        }
    }
    Some(hasher.finalize().into())
}

/// The SHA-256 of a link's target path.
fn link_hash(path: &Path, _meta: &Metadata) -> Option<[u8; 32]> {
    let target = std::fs::read_link(path).ok()?;
    Some(Sha256::digest(target.as_os_str().as_bytes()).into())
}

/// Lower-case hexadecimal digits of `bytes`.
pub(crate) fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(out, "{b:02x}");
    }
    out
}

#[cfg(test)]
mod tests;
