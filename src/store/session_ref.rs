//! Which session a command acts on, settled inside the command's own
//! transaction. A [`SessionId`] names it; another [`SessionRef`] may read
//! it from the store's global pointers instead (the session a host last
//! ran in a directory, see `integrations::host_session`), so that reading
//! the pointer and running the command are one transaction: no other
//! process can move the pointer in between.

use super::sql;
use crate::SessionId;
use crate::error::Result;

/// Reads one global pointer inside the command's transaction.
pub(crate) type PointerRead<'a> = dyn FnMut(&str) -> Result<Option<String>> + 'a;

/// Where a command's session comes from.
pub trait SessionRef {
    /// The session, reading what it needs with `pointer`.
    fn resolve(&self, pointer: &mut PointerRead<'_>) -> Result<SessionId>;
}

impl SessionRef for SessionId {
    fn resolve(&self, _: &mut PointerRead<'_>) -> Result<SessionId> {
        Ok(self.clone())
    }
}

/// `target`'s session, read in `tx`.
pub(crate) fn resolve(tx: &sql::Tx<'_>, target: &(impl SessionRef + ?Sized)) -> Result<SessionId> {
    target.resolve(&mut |key| super::marks::pointer_in(tx, key))
}

impl super::Admin<'_> {
    /// Runs `f` with the pointers of one read transaction.
    #[cfg_attr(not(feature = "cli"), expect(dead_code))]
    pub(crate) fn with_pointers<T>(
        &self,
        f: impl FnOnce(&mut PointerRead<'_>) -> Result<T>,
    ) -> Result<T> {
        self.read(|tx| f(&mut |key| super::marks::pointer_in(tx, key)))
    }
}
