//! Noticing that the database file was deleted or replaced under a
//! long-running process (DESIGN.md §7). SQLite keeps writing to the file it has
//! open: after `rm goalkeeper.db` or a restored copy moved over it, an MCP
//! server would acknowledge writes into an inode nobody else can reach, and
//! after `rm goalkeeper.db-wal` into a WAL that is gone once it exits.
//!
//! [`FileWatch`] remembers the device and inode of the file (and of its WAL
//! once there is one) and [`FileWatch::check`] compares them with what the
//! paths hold now, inside the write transaction, before anything is
//! written. While any connection is open SQLite itself never deletes the
//! WAL (only the last connection to close does), so a missing or different
//! WAL is somebody else's doing too.

use std::cell::Cell;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// Device and inode.
type FileId = (u64, u64);

/// The file a connection has open, and its WAL once seen.
pub(super) struct FileWatch {
    path: PathBuf,
    wal: PathBuf,
    file: FileId,
    wal_file: Cell<Option<FileId>>,
}

impl FileWatch {
    /// Remembers what `path` (followed through symlinks, as SQLite does)
    /// and its WAL are now.
    pub(super) fn new(path: &Path) -> Result<FileWatch> {
        let file = id_of(path)?.ok_or_else(|| gone(path, "deleted"))?;
        let mut wal = path.as_os_str().to_owned();
        wal.push("-wal");
        let wal = PathBuf::from(wal);
        let watch = FileWatch {
            path: path.to_owned(),
            wal_file: Cell::new(id_of(&wal)?),
            wal,
            file,
        };
        Ok(watch)
    }

    /// `Ok` when the path still holds the file that was opened and the WAL
    /// seen earlier is still there; [`Error::DatabaseGone`] otherwise.
    pub(super) fn check(&self) -> Result<()> {
        match id_of(&self.path)? {
            None => return Err(gone(&self.path, "deleted")),
            Some(id) if id != self.file => {
                return Err(gone(&self.path, "replaced by another file"));
            }
            Some(_) => {}
        }
        let wal = id_of(&self.wal)?;
        match (self.wal_file.get(), wal) {
            (Some(_), None) => Err(gone(&self.wal, "deleted")),
            (Some(seen), Some(now)) if seen != now => {
                Err(gone(&self.wal, "replaced by another file"))
            }
            (None, now) => {
                self.wal_file.set(now);
                Ok(())
            }
            _ => Ok(()),
        }
    }
}

fn id_of(path: &Path) -> Result<Option<FileId>> {
    match std::fs::metadata(path) {
        Ok(meta) => Ok(Some(file_id(&meta))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(Error::Io {
            what: format!("cannot check the database file {}", path.display()),
            source,
        }),
    }
}

#[cfg(unix)]
fn file_id(meta: &std::fs::Metadata) -> FileId {
    use std::os::unix::fs::MetadataExt;
    (meta.dev(), meta.ino())
}

#[cfg(not(unix))]
fn file_id(meta: &std::fs::Metadata) -> FileId {
    // No inode: the creation time stands in for the file's identity.
    let created = meta
        .created()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos() as u64);
    (created, 0)
}

fn gone(path: &Path, how: &str) -> Error {
    Error::DatabaseGone {
        path: path.to_owned(),
        how: how.to_owned(),
    }
}
