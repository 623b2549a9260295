//! Integration state: small per-session facts (what a hook last injected,
//! how far a transcript was read) and global pointers (the Claude Code
//! session last seen in a project). Each access is one transaction.

use super::Admin;
use super::sql::{self, params};
use crate::error::Result;

impl Admin<'_> {
    /// A global pointer (integration state), such as the Claude Code
    /// session last seen in a project directory.
    pub fn pointer(&self, key: &str) -> Result<Option<String>> {
        self.read(|tx| pointer_in(tx, key))
    }

    /// Sets a global pointer (integration state).
    pub fn set_pointer(&mut self, key: &str, value: &str, now_ms: i64) -> Result<()> {
        self.write(|tx| {
            tx.execute(
                "INSERT INTO pointers (key, value, updated_ms) VALUES (?1, ?2, ?3)
                 ON CONFLICT(key) DO UPDATE SET value = excluded.value, updated_ms = excluded.updated_ms",
                params![key, value, now_ms],
            )?;
            Ok(())
        })
    }

    /// Removes a global pointer and returns the value it had, in one
    /// transaction (of two processes taking it at once, one gets it).
    pub fn take_pointer(&mut self, key: &str) -> Result<Option<String>> {
        self.write(|tx| {
            // One statement, so two takers on PostgreSQL cannot both get it.
            tx.query_opt(
                "DELETE FROM pointers WHERE key = ?1 RETURNING value",
                params![key],
                |r| r.get(0),
            )
        })
    }

    /// Sets a global pointer and returns its previous value, in one
    /// transaction.
    pub fn swap_pointer(&mut self, key: &str, value: &str, now_ms: i64) -> Result<Option<String>> {
        self.write(|tx| {
            tx.lock_pointer(key)?;
            let old: Option<String> = tx.query_opt(
                "SELECT value FROM pointers WHERE key = ?1",
                params![key],
                |r| r.get(0),
            )?;
            tx.execute(
                "INSERT INTO pointers (key, value, updated_ms) VALUES (?1, ?2, ?3)
                 ON CONFLICT(key) DO UPDATE SET value = excluded.value, updated_ms = excluded.updated_ms",
                params![key, value, now_ms],
            )?;
            Ok(old)
        })
    }
}

/// A global pointer, read in `tx`.
pub(super) fn pointer_in(tx: &sql::Tx<'_>, key: &str) -> Result<Option<String>> {
    tx.query_opt(
        "SELECT value FROM pointers WHERE key = ?1",
        params![key],
        |r| r.get(0),
    )
}
