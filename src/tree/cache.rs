//! The hashes of a tree's files, kept while a file stays as it was: its
//! size, modification and change times, inode and device all the same.
//! The change time cannot be set back by a program (a `touch -d` that
//! restores the modification time moves it), so a file rewritten in place
//! is hashed again.
//!
//! Two places keep them: this process's memory (a long-lived MCP server
//! hashes a tree once) and a file per directory under the cache directory
//! (`trees/<hash of the path>`), which `goalkeeper verify` writes and every
//! other look only reads: the gate and the prompts write nothing. A
//! missing, unreadable or damaged file is an empty cache, never an error.
//!
//! The "racily clean" rule (git's): a file changed twice within one tick of
//! the file system's clock keeps its times, and its size may stay the same
//! too. So a hash is kept only for a file whose times are older than the
//! start of the look by more than any file system's tick (2 s, FAT's);
//! a file changed more recently is read again next time.

use std::collections::HashMap;
use std::fs::Metadata;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use sha2::{Digest, Sha256};

/// Whether a look at the tree may write the cache file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CacheWrite {
    /// Write it (`goalkeeper verify`, when it can).
    Yes,
    /// Only read it (the gate, the prompts, the status line).
    No,
}

/// What must stay the same for a kept hash to hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct FileKey {
    size: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
    ino: u64,
    dev: u64,
}

impl FileKey {
    pub(super) fn of(meta: &Metadata) -> FileKey {
        FileKey {
            size: meta.len(),
            mtime: (meta.mtime(), meta.mtime_nsec()),
            ctime: (meta.ctime(), meta.ctime_nsec()),
            ino: meta.ino(),
            dev: meta.dev(),
        }
    }

    /// The later of the two times, in seconds and nanoseconds.
    fn latest(&self) -> (i64, i64) {
        self.mtime.max(self.ctime)
    }
}

/// Kept hashes by path (relative to the tree).
#[derive(Clone, Debug, Default)]
pub(super) struct Cached {
    entries: HashMap<Vec<u8>, (FileKey, [u8; 32])>,
}

impl Cached {
    /// The kept hash of `path` if the file is as it was (it leaves the
    /// cache: what is still true goes into the next one).
    pub(super) fn take(&mut self, path: &Path, key: &FileKey) -> Option<[u8; 32]> {
        let (kept, hash) = self.entries.remove(path.as_os_str().as_bytes())?;
        (kept == *key).then_some(hash)
    }

    pub(super) fn put(&mut self, path: &Path, key: FileKey, hash: [u8; 32]) {
        self.entries
            .insert(path.as_os_str().as_bytes().to_vec(), (key, hash));
    }
}

/// The tick no file system's clock is coarser than.
const TICK: Duration = Duration::from_secs(2);

/// This process's kept hashes, by tree.
static MEMORY: Mutex<Option<HashMap<PathBuf, Cached>>> = Mutex::new(None);

/// The hashes kept for the tree at `dir`: this process's, else the cache
/// file's.
pub(super) fn load(dir: &Path, cache_dir: Option<&Path>) -> Cached {
    let kept = MEMORY
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .as_mut()
        .and_then(|trees| trees.remove(dir));
    kept.or_else(|| cache_dir.and_then(|c| read_file(&file_of(c, dir), dir)))
        .unwrap_or_default()
}

/// Keeps `seen` for the tree at `dir` (in memory, and in the cache file
/// when `write` says so), without the files changed within [`TICK`]
/// before `started`.
pub(super) fn keep(
    dir: &Path,
    cache_dir: Option<&Path>,
    mut seen: Cached,
    started: SystemTime,
    write: super::CacheWrite,
) {
    let limit = started
        .checked_sub(TICK)
        .and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
        .map_or((0, 0), |d| {
            (
                i64::try_from(d.as_secs()).unwrap_or(i64::MAX),
                i64::from(d.subsec_nanos()),
            )
        });
    seen.entries.retain(|_, (key, _)| key.latest() < limit);
    if write == CacheWrite::Yes
        && let Some(cache_dir) = cache_dir
    {
        // A cache is a help, never a duty: a directory the process may not
        // write (a sandbox) leaves it as it was.
        let _ = write_file(&file_of(cache_dir, dir), dir, &seen);
    }
    MEMORY
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .get_or_insert_with(HashMap::new)
        .insert(dir.to_owned(), seen);
}

/// Forgets the hashes this process kept (a benchmark measures a look
/// without them).
pub fn forget_in_memory() {
    *MEMORY
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner) = None;
}

/// Forgets the hashes this process kept for the tree at `dir`.
#[cfg(test)]
pub(super) fn forget(dir: &Path) {
    if let Some(trees) = MEMORY
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .as_mut()
    {
        trees.remove(dir);
    }
}

/// The cache file of the tree at `dir`.
fn file_of(cache_dir: &Path, dir: &Path) -> PathBuf {
    let name = super::hex(&Sha256::digest(dir.as_os_str().as_bytes())[..16]);
    cache_dir.join("trees").join(name)
}

/// The first line of a cache file.
const HEADER: &str = "goalkeeper tree cache 1";

/// The largest cache file read (about 400,000 files).
const MAX_FILE_BYTES: u64 = 64 << 20;

fn read_file(path: &Path, dir: &Path) -> Option<Cached> {
    use std::io::Read;
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .ok()?
        .take(MAX_FILE_BYTES)
        .read_to_end(&mut bytes)
        .ok()?;
    let mut lines = bytes.split(|&b| b == b'\n');
    if lines.next()? != HEADER.as_bytes() || unescape(lines.next()?)? != dir.as_os_str().as_bytes()
    {
        return None;
    }
    let mut cached = Cached::default();
    for line in lines.filter(|l| !l.is_empty()) {
        let mut fields = line.splitn(10, |&b| b == b' ');
        let mut number =
            || -> Option<i64> { std::str::from_utf8(fields.next()?).ok()?.parse().ok() };
        let size = u64::try_from(number()?).ok()?;
        let mtime = (number()?, number()?);
        let ctime = (number()?, number()?);
        let ino = u64::try_from(number()?).ok()?;
        let dev = u64::try_from(number()?).ok()?;
        let hash_hex = fields.next()?;
        let path = unescape(fields.next()?)?;
        let mut hash = [0; 32];
        if hash_hex.len() != 64 {
            return None;
        }
        for (i, byte) in hash.iter_mut().enumerate() {
            *byte = u8::from_str_radix(std::str::from_utf8(&hash_hex[2 * i..2 * i + 2]).ok()?, 16)
                .ok()?;
        }
        let key = FileKey {
            size,
            mtime,
            ctime,
            ino,
            dev,
        };
        cached.entries.insert(path, (key, hash));
    }
    Some(cached)
}

/// Writes the cache file through a temporary file beside it, so a reader
/// sees the old file or the new one, never half of one.
fn write_file(path: &Path, dir: &Path, cached: &Cached) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::DirBuilderExt;
    let parent = path.parent().unwrap_or(Path::new("."));
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(parent)?;
    let mut text = Vec::with_capacity(cached.entries.len() * 140);
    text.extend_from_slice(HEADER.as_bytes());
    text.push(b'\n');
    escape(&mut text, dir.as_os_str().as_bytes());
    text.push(b'\n');
    let mut entries: Vec<_> = cached.entries.iter().collect();
    entries.sort_by(|a, b| a.0.cmp(b.0));
    for (rel, (key, hash)) in entries {
        let _ = write!(
            text,
            "{} {} {} {} {} {} {} {} ",
            key.size,
            key.mtime.0,
            key.mtime.1,
            key.ctime.0,
            key.ctime.1,
            key.ino,
            key.dev,
            super::hex(hash)
        );
        escape(&mut text, rel);
        text.push(b'\n');
    }
    let stamp = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let partial = parent.join(format!(".partial-{}-{stamp}", std::process::id()));
    let written = std::fs::File::create(&partial).and_then(|mut f| f.write_all(&text));
    match written.and_then(|()| std::fs::rename(&partial, path)) {
        Ok(()) => Ok(()),
        Err(e) => {
            let _ = std::fs::remove_file(&partial);
            Err(e)
        }
    }
}

/// A path's bytes on one line: `%`, space and control bytes as `%XX`.
fn escape(out: &mut Vec<u8>, bytes: &[u8]) {
    for &b in bytes {
        if b == b'%' || b == b' ' || b < 0x20 || b == 0x7f {
            out.extend_from_slice(format!("%{b:02X}").as_bytes());
        } else {
            out.push(b);
        }
    }
}

fn unescape(bytes: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let digits = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(digits, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_of_any_bytes_survive_the_file() {
        let mut line = Vec::new();
        let odd = b"a b%c\nd\x7f\xff";
        escape(&mut line, odd);
        assert!(!line.contains(&b' ') && !line.contains(&b'\n'));
        assert_eq!(unescape(&line).unwrap(), odd);
    }
}
