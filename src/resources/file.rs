//! Reading one resource file for the system prompt: size limit, UTF-8 check,
//! and the identity used to load a file reached by two routes only once.

use std::collections::HashSet;
use std::fs::{self, File};
use std::io::{self, Read};
use std::path::{Path, PathBuf};

/// Largest resource file that is loaded, in bytes (256 KiB). A larger file is
/// almost certainly not meant for the prompt (a log, a dump), and would crowd
/// out everything else.
pub const MAX_RESOURCE_BYTES: u64 = 256 * 1024;

/// What reading a resource file gave.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Loaded {
    /// Nothing at that path: optional resources are simply absent.
    Absent,
    /// The text, without a leading byte-order mark.
    Text(String),
    /// Something is there but cannot be used; the reason, phrased to follow
    /// the path (`<path>: <reason>`).
    Unusable(String),
}

/// Reads `path` as a resource: a regular file (or a symlink to one) of at
/// most [`MAX_RESOURCE_BYTES`] holding UTF-8 text.
pub(crate) fn load(path: &Path) -> Loaded {
    let link = match fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Loaded::Absent,
        Err(e) => return Loaded::Unusable(cannot_read(&e)),
    };
    let meta = match fs::metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound && link.file_type().is_symlink() => {
            let target = fs::read_link(path).unwrap_or_default();
            return Loaded::Unusable(format!(
                "is a broken symlink (to {}); skipped",
                target.display()
            ));
        }
        Err(e) => return Loaded::Unusable(cannot_read(&e)),
    };
    if meta.is_dir() {
        return Loaded::Unusable("is a directory, not a file; skipped".to_owned());
    }
    // A FIFO or a device could block or never end: only plain files.
    if !meta.is_file() {
        return Loaded::Unusable("is not a regular file; skipped".to_owned());
    }
    if meta.len() > MAX_RESOURCE_BYTES {
        return Loaded::Unusable(too_large(meta.len()));
    }
    let mut bytes = Vec::new();
    let read = File::open(path).and_then(|file| {
        // The file may have grown since `metadata`: never read past the limit.
        file.take(MAX_RESOURCE_BYTES + 1).read_to_end(&mut bytes)
    });
    if let Err(e) = read {
        return Loaded::Unusable(cannot_read(&e));
    }
    if bytes.len() as u64 > MAX_RESOURCE_BYTES {
        return Loaded::Unusable(too_large(bytes.len() as u64));
    }
    match String::from_utf8(bytes) {
        Ok(mut text) => {
            if text.starts_with('\u{feff}') {
                text.drain(..'\u{feff}'.len_utf8());
            }
            Loaded::Text(text)
        }
        Err(e) => Loaded::Unusable(format!(
            "is not valid UTF-8 (invalid byte at offset {}); skipped",
            e.utf8_error().valid_up_to()
        )),
    }
}

fn cannot_read(e: &io::Error) -> String {
    format!("cannot be read ({e}); skipped")
}

fn too_large(len: u64) -> String {
    format!("is larger than 256 KiB ({len} bytes); skipped")
}

/// The files already taken into the prompt, by canonical path and, on Unix,
/// by device and inode: on a case-insensitive file system `AGENTS.MD` may
/// canonicalize to a different spelling of the same file, but it cannot have
/// a different inode.
#[derive(Debug, Default)]
pub(crate) struct Seen {
    paths: HashSet<PathBuf>,
    #[cfg(unix)]
    inodes: HashSet<(u64, u64)>,
}

impl Seen {
    /// True the first time a file is offered, false when the same file was
    /// offered before under any name. A path that cannot be resolved (it is
    /// missing, or a broken link) is always new: loading it will say why.
    #[cfg_attr(not(feature = "cli"), expect(dead_code))]
    pub fn first_visit(&mut self, path: &Path) -> bool {
        let Ok(canonical) = fs::canonicalize(path) else {
            return true;
        };
        let mut new = !self.paths.contains(&canonical);
        #[cfg(unix)]
        if let Ok(meta) = fs::metadata(&canonical) {
            use std::os::unix::fs::MetadataExt;
            new &= self.inodes.insert((meta.dev(), meta.ino()));
        }
        self.paths.insert(canonical);
        new
    }
}
