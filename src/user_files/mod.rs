//! Writing files the user owns (DESIGN.md §12): `install`, `workspace link` and
//! `todo export` replace files in directories that belong to the user, so
//! every write goes through [`UserDir`], which guarantees:
//!
//! - **Nothing outside the directory.** A [`UserDir`] is opened on the
//!   directory the user named (symlinks in that path are the user's own
//!   choice and are followed). Below it, no symlink is followed: a
//!   `.claude` that is a link to another directory, or a `settings.json`
//!   that is a link to a file elsewhere, is refused with
//!   [`Error::Rejected`] naming the link and its target, and nothing is
//!   written. (Writing through a link would change a file the user never
//!   named; replacing the link would silently detach a shared file. Both
//!   are the user's call, so the refusal says how to do either.)
//! - **Exclusive, unique temporary files.** The new content is written to
//!   `.<name>.goalkeeper-<pid>-<n>.tmp` beside the target, created with
//!   `O_CREAT|O_EXCL|O_NOFOLLOW`: a planted file or link under that name is
//!   never opened, the next name is tried. It is renamed over the target,
//!   so a reader sees the old file or the new one, never a mix.
//! - **The file's permissions are kept.** The replacement gets the old
//!   file's mode (a 0600 `settings.json` holding API keys stays 0600) and,
//!   where the process may, its owner. A new file gets the umask's mode.
//! - **A backup that is never overwritten.** Before replacing, the old file
//!   is hard-linked (`link(2)` fails rather than replace) to
//!   `<name>.bak-<UTC stamp>`, or `…-2`, `…-3` when that name is taken,
//!   even by a run in the same second. Where hard links are not supported,
//!   the old bytes are copied to a file created exclusively under that name.
//! - **Two runs at once both succeed, both changes kept.** [`UserDir::lock`]
//!   takes an exclusive `flock` on the directory itself (no lock file is
//!   left in the user's directory; on a file system without directory
//!   locks, a `.goalkeeper.lock` file is locked instead), waiting at most
//!   [`LOCK_WAIT`]. Callers read, merge and write under that one lock, and
//!   [`UserDir::replace`] refuses when the file is not the one that was
//!   read (another program changed it in between), so no change is lost.
//!
//! Values in JSON files are kept exactly by [`json`], which parses without
//! converting numbers and keeps key order.

pub mod json;

use std::ffi::{OsStr, OsString};
use std::io::{Read, Write};
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use rustix::fs::{AtFlags, FileType, FlockOperation, Mode, OFlags};
use rustix::io::Errno;

use crate::error::{Error, Result};

/// How long [`UserDir::lock`] waits for another goalkeeper process writing
/// in the same directory (each holds it for milliseconds).
pub const LOCK_WAIT: Duration = Duration::from_secs(10);

/// The largest file [`UserDir::read`] reads (configuration and markdown
/// files are kilobytes; this bounds a runaway or hostile one).
pub const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;

/// A directory the user owns, opened and locked for one command's writes.
/// The lock is released when it is dropped.
#[derive(Debug)]
pub struct UserDir {
    path: PathBuf,
    fd: OwnedFd,
    /// The fallback lock file, when the directory itself cannot be locked.
    _lock_file: Option<OwnedFd>,
}

/// What is at a path below a [`UserDir`], without following a final link.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Entry {
    /// Nothing (or a parent directory is missing).
    Missing,
    /// A regular file with this mode (permission bits).
    File {
        /// `st_mode & 0o7777`.
        mode: u32,
    },
    /// A symbolic link (not followed).
    Symlink {
        /// What it points to, as written in the link.
        target: PathBuf,
    },
    /// A directory.
    Directory,
    /// A FIFO, socket or device.
    Other,
}

/// A file read through [`UserDir::read`]: its bytes, and what identifies
/// it, so [`UserDir::replace`] can tell whether it changed since.
#[derive(Clone, Debug)]
pub struct UserFile {
    bytes: Vec<u8>,
    mode: u32,
    identity: Identity,
}

impl UserFile {
    /// The file's content.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }
}

/// Device, inode, size and modification time: what changes when anyone
/// rewrites or replaces a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Identity {
    dev: u64,
    ino: u64,
    size: i64,
    mtime: (i64, i64),
}

impl Identity {
    // The stat field types differ between Unix targets.
    #[allow(clippy::unnecessary_cast)]
    fn of(stat: &rustix::fs::Stat) -> Identity {
        Identity {
            dev: stat.st_dev as u64,
            ino: stat.st_ino as u64,
            size: stat.st_size as i64,
            mtime: (stat.st_mtime as i64, stat.st_mtime_nsec as i64),
        }
    }
}

/// What [`UserDir::replace`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Replaced {
    /// The file (the directory's path joined with the relative path).
    pub path: PathBuf,
    /// Where the previous content was kept, when there was one.
    pub backup: Option<PathBuf>,
    /// False when the file already held exactly these bytes (nothing done).
    pub written: bool,
}

static TEMP_COUNTER: AtomicU32 = AtomicU32::new(0);

impl UserDir {
    /// Opens the directory `path` and locks it against other goalkeeper
    /// processes, waiting up to [`LOCK_WAIT`].
    pub fn lock(path: &Path) -> Result<UserDir> {
        UserDir::lock_waiting(path, LOCK_WAIT)
    }

    /// [`UserDir::lock`] with another wait.
    pub fn lock_waiting(path: &Path, wait: Duration) -> Result<UserDir> {
        let fd = rustix::fs::open(
            path,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| match e {
            Errno::NOTDIR => Error::Usage(format!("{} is not a directory", path.display())),
            Errno::NOENT => Error::Usage(format!("{} does not exist", path.display())),
            e => io_error(format!("cannot open the directory {}", path.display()), e),
        })?;
        let deadline = Instant::now() + wait;
        let lock_file = match wait_for_lock(&fd, deadline) {
            Ok(()) => None,
            Err(Errno::WOULDBLOCK) => return Err(busy(path, wait)),
            // A file system without directory locks: lock a file instead.
            Err(_) => {
                let file = rustix::fs::openat(
                    &fd,
                    LOCK_FILE,
                    OFlags::RDWR | OFlags::CREATE | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                    Mode::from_raw_mode(0o600),
                )
                .map_err(|e| {
                    io_error(format!("cannot lock {}", path.join(LOCK_FILE).display()), e)
                })?;
                match wait_for_lock(&file, deadline) {
                    Ok(()) => Some(file),
                    Err(Errno::WOULDBLOCK) => return Err(busy(path, wait)),
                    Err(e) => {
                        return Err(io_error(format!("cannot lock {}", path.display()), e));
                    }
                }
            }
        };
        Ok(UserDir {
            path: path.to_owned(),
            fd,
            _lock_file: lock_file,
        })
    }

    /// The directory, as given to [`UserDir::lock`].
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// What is at `rel`, without following a link at its end. A link among
    /// the directories on the way is refused.
    pub fn entry(&self, rel: &Path) -> Result<Entry> {
        let Some((parent, name)) = self.open_parent(rel, false)? else {
            return Ok(Entry::Missing);
        };
        let stat = match rustix::fs::statat(&parent, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(stat) => stat,
            Err(Errno::NOENT) => return Ok(Entry::Missing),
            Err(e) => return Err(io_error(format!("cannot read {}", self.show(rel)), e)),
        };
        Ok(match FileType::from_raw_mode(stat.st_mode) {
            FileType::RegularFile => Entry::File {
                mode: stat.st_mode & 0o7777,
            },
            FileType::Symlink => Entry::Symlink {
                target: self.link_target(&parent, name, rel)?,
            },
            FileType::Directory => Entry::Directory,
            _ => Entry::Other,
        })
    }

    /// The regular file at `rel`, or `None` when it does not exist.
    /// Refused (nothing read) when it or a directory on the way is a link,
    /// when it is not a regular file (a FIFO is never opened for reading,
    /// so it cannot block), or when it is larger than [`MAX_FILE_BYTES`].
    pub fn read(&self, rel: &Path) -> Result<Option<UserFile>> {
        let Some((parent, name)) = self.open_parent(rel, false)? else {
            return Ok(None);
        };
        let fd = match rustix::fs::openat(
            &parent,
            name,
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
            Mode::empty(),
        ) {
            Ok(fd) => fd,
            Err(Errno::NOENT) => return Ok(None),
            Err(Errno::LOOP) => return Err(self.link_refusal(&parent, name, rel)),
            Err(e) => return Err(io_error(format!("cannot read {}", self.show(rel)), e)),
        };
        let stat = rustix::fs::fstat(&fd)
            .map_err(|e| io_error(format!("cannot read {}", self.show(rel)), e))?;
        if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile {
            return Err(Error::Rejected(format!(
                "{} is not a regular file; move it away, then run again (nothing was changed)",
                self.show(rel)
            )));
        }
        let mut bytes = Vec::new();
        std::fs::File::from(fd)
            .take(MAX_FILE_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(|source| Error::Io {
                what: format!("cannot read {}", self.show(rel)),
                source,
            })?;
        if bytes.len() as u64 > MAX_FILE_BYTES {
            return Err(Error::Rejected(format!(
                "{} is larger than {} MiB; goalkeeper does not edit a file that large (nothing was changed)",
                self.show(rel),
                MAX_FILE_BYTES >> 20
            )));
        }
        Ok(Some(UserFile {
            bytes,
            mode: stat.st_mode & 0o7777,
            identity: Identity::of(&stat),
        }))
    }

    /// Replaces the file at `rel` with `contents`, creating the directories
    /// on the way when missing.
    ///
    /// `read` is what the caller read there ([`UserDir::read`], `None` for
    /// a file that did not exist): when the file is no longer that one,
    /// nothing is written and the error says to run again. When it holds
    /// exactly `contents`, nothing is written either ([`Replaced::written`]
    /// is false). Otherwise the old file is kept as
    /// `<name>.bak-<backup_stamp>` (or the first free `…-N`), the new one
    /// gets its mode, and is renamed into place.
    pub fn replace(
        &self,
        rel: &Path,
        contents: &[u8],
        read: Option<&UserFile>,
        backup_stamp: &str,
    ) -> Result<Replaced> {
        let full = self.path.join(rel);
        let (parent, name) = self
            .open_parent(rel, true)?
            .expect("open_parent creates the directories");
        let current = match rustix::fs::statat(&parent, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(stat) => match FileType::from_raw_mode(stat.st_mode) {
                FileType::RegularFile => Some(stat),
                FileType::Symlink => return Err(self.link_refusal(&parent, name, rel)),
                _ => {
                    return Err(Error::Rejected(format!(
                        "{} is not a regular file; move it away, then run again (nothing was changed)",
                        self.show(rel)
                    )));
                }
            },
            Err(Errno::NOENT) => None,
            Err(e) => return Err(io_error(format!("cannot read {}", self.show(rel)), e)),
        };
        let unchanged = match (read, &current) {
            (None, None) => true,
            (Some(read), Some(stat)) => read.identity == Identity::of(stat),
            _ => false,
        };
        if !unchanged {
            return Err(Error::Rejected(format!(
                "{} changed while goalkeeper was updating it (another program wrote it); run the command again (nothing was written)",
                full.display()
            )));
        }
        if read.is_some_and(|read| read.bytes == contents) {
            return Ok(Replaced {
                path: full,
                backup: None,
                written: false,
            });
        }

        let (temp, file) = create_temp(&parent, name, current.is_some()).map_err(|e| {
            io_error(
                format!("cannot create a temporary file beside {}", full.display()),
                e,
            )
        })?;
        let cleanup = |error: Error| {
            let _ = rustix::fs::unlinkat(&parent, &temp, AtFlags::empty());
            error
        };
        let mut file = std::fs::File::from(file);
        let written = file.write_all(contents).and_then(|()| {
            if let Some(stat) = &current {
                // The old file's permissions, exactly (the umask does not
                // apply to fchmod); its owner where the process may.
                rustix::fs::fchmod(&file, Mode::from_raw_mode(stat.st_mode & 0o7777))?;
                let _ = rustix::fs::fchown(
                    &file,
                    Some(rustix::fs::Uid::from_raw(stat.st_uid)),
                    Some(rustix::fs::Gid::from_raw(stat.st_gid)),
                );
            }
            file.sync_all()
        });
        if let Err(source) = written {
            return Err(cleanup(Error::Io {
                what: format!("cannot write {}", full.display()),
                source,
            }));
        }
        drop(file);
        let backup = match (&current, read) {
            (Some(_), Some(read)) => Some(
                self.keep_backup(&parent, name, rel, backup_stamp, read)
                    .map_err(cleanup)?,
            ),
            _ => None,
        };
        rustix::fs::renameat(&parent, &temp, &parent, name)
            .map_err(|e| cleanup(io_error(format!("cannot replace {}", full.display()), e)))?;
        let _ = rustix::fs::fsync(&parent);
        Ok(Replaced {
            path: full,
            backup,
            written: true,
        })
    }

    /// Keeps the regular file at `rel` under `<name>.bak-<stamp>` (the first
    /// free `…-N`) as a hard link, leaving `rel` itself in place, so the
    /// user's content has a name at every moment. Returns the backup's
    /// path.
    pub fn back_up(&self, rel: &Path, stamp: &str) -> Result<PathBuf> {
        let Some(file) = self.read(rel)? else {
            return Err(Error::Rejected(format!(
                "{} does not exist; nothing to back up",
                self.show(rel)
            )));
        };
        let (parent, name) = self
            .open_parent(rel, false)?
            .expect("the file was just read");
        self.keep_backup(&parent, name, rel, stamp, &file)
    }

    /// Makes `rel` a symbolic link to `target` by renaming a fresh link over
    /// it, so the name is never missing. A regular file there is first kept
    /// as a backup ([`UserDir::back_up`], whose path is returned); a link
    /// there is replaced; a directory or special file is refused.
    pub fn put_symlink(&self, rel: &Path, target: &Path, stamp: &str) -> Result<Option<PathBuf>> {
        let backup = match self.entry(rel)? {
            Entry::Missing | Entry::Symlink { .. } => None,
            Entry::File { .. } => Some(self.back_up(rel, stamp)?),
            Entry::Directory | Entry::Other => {
                return Err(Error::Rejected(format!(
                    "{} is a directory or a special file; move it away, then run again (nothing was changed)",
                    self.show(rel)
                )));
            }
        };
        let (parent, name) = self
            .open_parent(rel, true)?
            .expect("open_parent creates the directories");
        let full = self.path.join(rel);
        for _ in 0..100 {
            let temp = temp_name(name);
            match rustix::fs::symlinkat(target, &parent, &temp) {
                Ok(()) => {}
                Err(Errno::EXIST) => continue,
                Err(e) => {
                    return Err(io_error(
                        format!("cannot create a link beside {}", full.display()),
                        e,
                    ));
                }
            }
            rustix::fs::renameat(&parent, &temp, &parent, name).map_err(|e| {
                let _ = rustix::fs::unlinkat(&parent, &temp, AtFlags::empty());
                io_error(format!("cannot replace {}", full.display()), e)
            })?;
            let _ = rustix::fs::fsync(&parent);
            return Ok(backup);
        }
        Err(io_error(
            format!("cannot create a link beside {}", full.display()),
            Errno::EXIST,
        ))
    }

    /// Links (or, where links are unsupported, copies) the file `name` to
    /// the first free backup name. `read` is the content the caller saw.
    fn keep_backup(
        &self,
        parent: &OwnedFd,
        name: &OsStr,
        rel: &Path,
        stamp: &str,
        read: &UserFile,
    ) -> Result<PathBuf> {
        let dir_of = |backup: &OsStr| match rel.parent() {
            Some(dir) => self.path.join(dir).join(backup),
            None => self.path.join(backup),
        };
        for n in 1u32..10_000 {
            let mut backup = name.to_owned();
            backup.push(format!(".bak-{stamp}"));
            if n > 1 {
                backup.push(format!("-{n}"));
            }
            match rustix::fs::linkat(parent, name, parent, &backup, AtFlags::empty()) {
                Ok(()) => return Ok(dir_of(&backup)),
                Err(Errno::EXIST) => continue,
                Err(Errno::PERM | Errno::XDEV | Errno::OPNOTSUPP | Errno::MLINK) => {
                    match copy_exclusive(parent, &backup, read) {
                        Ok(()) => return Ok(dir_of(&backup)),
                        Err(Errno::EXIST) => continue,
                        Err(e) => {
                            return Err(io_error(
                                format!(
                                    "cannot back up {} as {}",
                                    self.show(rel),
                                    dir_of(&backup).display()
                                ),
                                e,
                            ));
                        }
                    }
                }
                Err(e) => {
                    return Err(io_error(
                        format!(
                            "cannot back up {} as {}",
                            self.show(rel),
                            dir_of(&backup).display()
                        ),
                        e,
                    ));
                }
            }
        }
        Err(io_error(
            format!(
                "cannot back up {}: 10,000 backup names taken",
                self.show(rel)
            ),
            Errno::EXIST,
        ))
    }

    /// Opens, without following links, the directories of `rel` below this
    /// one (creating missing ones when `create`), and returns the last
    /// one with the file name. `None` when one is missing and not created.
    fn open_parent<'a>(&self, rel: &'a Path, create: bool) -> Result<Option<(OwnedFd, &'a OsStr)>> {
        let mut parts = Vec::new();
        for component in rel.components() {
            match component {
                Component::Normal(part) => parts.push(part),
                Component::CurDir => {}
                _ => {
                    return Err(Error::Usage(format!(
                        "{} leaves {}; goalkeeper writes only inside it",
                        rel.display(),
                        self.path.display()
                    )));
                }
            }
        }
        let Some(name) = parts.pop() else {
            return Err(Error::Usage(format!("{} names no file", rel.display())));
        };
        let mut dir = rustix::io::dup(&self.fd)
            .map_err(|e| io_error(format!("cannot open {}", self.path.display()), e))?;
        let mut walked = PathBuf::new();
        for part in parts {
            walked.push(part);
            let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
            let next = match rustix::fs::openat(&dir, part, flags, Mode::empty()) {
                Ok(next) => next,
                Err(Errno::NOENT) if !create => return Ok(None),
                Err(Errno::NOENT) => {
                    match rustix::fs::mkdirat(&dir, part, Mode::from_raw_mode(0o777)) {
                        Ok(()) | Err(Errno::EXIST) => {}
                        Err(e) => {
                            return Err(io_error(
                                format!("cannot create {}", self.show(&walked)),
                                e,
                            ));
                        }
                    }
                    rustix::fs::openat(&dir, part, flags, Mode::empty())
                        .map_err(|e| self.dir_error(&dir, part, &walked, e))?
                }
                Err(e) => return Err(self.dir_error(&dir, part, &walked, e)),
            };
            dir = next;
        }
        Ok(Some((dir, name)))
    }

    /// Why a directory on the way would not open: a link, a file, or else.
    fn dir_error(&self, dir: &OwnedFd, part: &OsStr, walked: &Path, e: Errno) -> Error {
        match rustix::fs::statat(dir, part, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(stat) if FileType::from_raw_mode(stat.st_mode) == FileType::Symlink => {
                self.link_refusal(dir, part, walked)
            }
            Ok(stat) if FileType::from_raw_mode(stat.st_mode) != FileType::Directory => {
                Error::Rejected(format!(
                    "{} is not a directory; move it away, then run again (nothing was changed)",
                    self.show(walked)
                ))
            }
            _ => io_error(format!("cannot open {}", self.show(walked)), e),
        }
    }

    fn link_target(&self, dir: &OwnedFd, name: &OsStr, rel: &Path) -> Result<PathBuf> {
        rustix::fs::readlinkat(dir, name, Vec::new())
            .map(|target| PathBuf::from(OsStr::from_bytes(target.as_bytes())))
            .map_err(|e| io_error(format!("cannot read the link {}", self.show(rel)), e))
    }

    /// The refusal to follow the link `rel`.
    fn link_refusal(&self, dir: &OwnedFd, name: &OsStr, rel: &Path) -> Error {
        let target = self
            .link_target(dir, name, rel)
            .map(|t| t.display().to_string())
            .unwrap_or_else(|_| "somewhere unreadable".to_owned());
        Error::Rejected(format!(
            "{} is a symbolic link (to {target}); goalkeeper writes only inside {} and never through a link: \
             replace the link with a real file or directory, or run goalkeeper on the directory it points to (nothing was changed)",
            self.show(rel),
            self.path.display()
        ))
    }

    fn show(&self, rel: &Path) -> String {
        self.path.join(rel).display().to_string()
    }
}

/// The lock file used where a directory cannot be locked itself.
const LOCK_FILE: &str = ".goalkeeper.lock";

/// Polls a non-blocking exclusive flock until `deadline`.
fn wait_for_lock(fd: &OwnedFd, deadline: Instant) -> std::result::Result<(), Errno> {
    let mut pause = Duration::from_millis(1);
    loop {
        match rustix::fs::flock(fd, FlockOperation::NonBlockingLockExclusive) {
            Err(Errno::WOULDBLOCK) if Instant::now() < deadline => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(50));
            }
            Err(Errno::INTR) => {}
            other => return other,
        }
    }
}

fn busy(path: &Path, wait: Duration) -> Error {
    Error::Io {
        what: format!(
            "another goalkeeper process kept {} locked for {} s (it is writing there, or hung); retry when it is done",
            path.display(),
            wait.as_secs()
        ),
        source: std::io::ErrorKind::WouldBlock.into(),
    }
}

/// `.<name>.goalkeeper-<pid>-<n>.tmp`, unique within this process; another
/// process has another pid, and a name taken anyway is skipped by the
/// exclusive create.
fn temp_name(name: &OsStr) -> OsString {
    let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
    let mut temp = OsString::from(".");
    temp.push(name);
    temp.push(format!(".goalkeeper-{}-{n}.tmp", std::process::id()));
    temp
}

/// Creates a fresh temporary file beside `name`, exclusively and without
/// following links. Mode 0600 when it will get the old file's mode, else
/// what the umask leaves of 0666.
fn create_temp(
    parent: &OwnedFd,
    name: &OsStr,
    replacing: bool,
) -> std::result::Result<(OsString, OwnedFd), Errno> {
    let mode = Mode::from_raw_mode(if replacing { 0o600 } else { 0o666 });
    for _ in 0..100 {
        let temp = temp_name(name);
        match rustix::fs::openat(
            parent,
            &temp,
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            mode,
        ) {
            Ok(fd) => return Ok((temp, fd)),
            Err(Errno::EXIST) => continue,
            Err(e) => return Err(e),
        }
    }
    Err(Errno::EXIST)
}

/// Writes `file`'s bytes to a new file `backup`, created exclusively.
fn copy_exclusive(
    parent: &OwnedFd,
    backup: &OsStr,
    file: &UserFile,
) -> std::result::Result<(), Errno> {
    let fd = rustix::fs::openat(
        parent,
        backup,
        OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::from_raw_mode(0o600),
    )?;
    rustix::fs::fchmod(&fd, Mode::from_raw_mode(file.mode))?;
    let mut out = std::fs::File::from(fd);
    out.write_all(&file.bytes)
        .and_then(|()| out.sync_all())
        .map_err(|e| Errno::from_io_error(&e).unwrap_or(Errno::IO))
}

fn io_error(what: String, errno: Errno) -> Error {
    Error::Io {
        what,
        source: errno.into(),
    }
}

#[cfg(test)]
mod tests;
