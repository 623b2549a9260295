//! The memory file (DESIGN.md §10): delivered once per session, the first
//! time it is asked for, and never again, even across processes.

use crate::error::Result;
use crate::prompt::{HiddenMessage, Injector};
use crate::resources::file::{Loaded, load};
use crate::store::SessionTx;

/// The session mark recording when the memory file was delivered.
const MEMORY_MARK: &str = "memory.delivered";

/// The memory file's message when it is delivered now, and a note when it
/// cannot be (no file, or an unusable one).
pub(crate) type Memory = (Option<HiddenMessage>, Option<String>);

/// True when [`memory`] would deliver the memory file now (one is
/// configured and this session has not had it): only then does a read of
/// the context need the write lock.
#[cfg_attr(not(feature = "cli"), expect(dead_code))]
pub(crate) fn memory_due(tx: &SessionTx<'_>, injector: &Injector) -> Result<bool> {
    Ok(injector.settings().memory.file.is_some() && tx.mark(MEMORY_MARK)?.is_none())
}

/// The memory file's message: delivered the first time it is asked for in
/// the session and never again (the check and the mark are in `tx`, so of
/// two processes one delivers). `(None, note)` when no memory file is
/// configured, it was already delivered, or the file cannot be used (the
/// note says why; it is not marked, so a fixed file is delivered later).
pub fn memory(tx: &SessionTx<'_>, injector: &Injector, now_ms: i64) -> Result<Memory> {
    let Some(path) = injector.settings().memory.file.as_deref() else {
        return Ok((None, None));
    };
    // Once delivered, every later call ends here, without reading the file.
    if tx.mark(MEMORY_MARK)?.is_some() {
        return Ok((None, None));
    }
    let text = match load(path) {
        Loaded::Text(text) => text,
        Loaded::Absent => {
            let note = format!(
                "memory file {} does not exist; nothing injected",
                path.display()
            );
            return Ok((None, Some(note)));
        }
        Loaded::Unusable(why) => {
            return Ok((None, Some(format!("memory file {}: {why}", path.display()))));
        }
    };
    let message = injector.memory(path, &text, now_ms)?;
    tx.set_mark(MEMORY_MARK, &now_ms.to_string(), now_ms)?;
    Ok((Some(message), None))
}
