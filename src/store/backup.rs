//! `goalkeeper backup PATH`: a consistent single-file copy of the database.
//!
//! Between checkpoints the newest commits live in the `-wal` file beside
//! the database (see `Drop for Store`), so the database file alone is not a
//! complete copy. `VACUUM INTO` reads the whole database through one read
//! transaction (WAL included) and writes a compact, self-contained file;
//! it does not block other readers or writers.

use std::fs::OpenOptions;
use std::path::Path;

use rusqlite::Connection;

use crate::error::{Error, Result};

/// Writes the copy to a new file beside `path`, syncs it, then links it
/// into place: `path` appears complete or not at all, and an existing file
/// there is never replaced.
pub(crate) fn write(conn: &Connection, path: &Path) -> Result<()> {
    write_with(path, |partial| {
        let target = partial.to_str().ok_or_else(|| {
            Error::Usage(format!(
                "{} is not valid UTF-8; give a path SQLite can open",
                partial.display()
            ))
        })?;
        conn.execute("VACUUM INTO ?1", [target])?;
        Ok(())
    })
}

/// Creates `path`'s partial file (empty, exclusive, mode 0600), lets
/// `fill` write the copy into it, syncs it and links it into place.
pub(crate) fn write_with(path: &Path, fill: impl FnOnce(&Path) -> Result<()>) -> Result<()> {
    let io = |what: String| move |source| Error::Io { what, source };
    if path.symlink_metadata().is_ok() {
        return Err(Error::Rejected(format!(
            "{} already exists; a backup never replaces a file, so give a new path",
            path.display()
        )));
    }
    let name = path.file_name().ok_or_else(|| {
        Error::Usage(format!(
            "{} names no file; give the path of the backup file",
            path.display()
        ))
    })?;
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let mut partial = name.to_owned();
    partial.push(format!(".partial-{}", std::process::id()));
    let partial = dir.join(partial);
    // Created here, empty and exclusive (VACUUM INTO and Store::open
    // accept an empty file), so the copy has the database's mode 0600 from the start.
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options
        .open(&partial)
        .map_err(io(format!("cannot create {}", partial.display())))?;
    let result = (|| {
        fill(&partial)?;
        std::fs::File::open(&partial)
            .and_then(|f| f.sync_all())
            .map_err(io(format!("cannot sync {}", partial.display())))?;
        std::fs::hard_link(&partial, path).map_err(|e| {
            if e.kind() == std::io::ErrorKind::AlreadyExists {
                Error::Rejected(format!(
                    "{} already exists; a backup never replaces a file, so give a new path",
                    path.display()
                ))
            } else {
                io(format!("cannot create {}", path.display()))(e)
            }
        })
    })();
    let _ = std::fs::remove_file(&partial);
    result
}
