//! Which session a command acts on, settled inside the command's own
//! transaction. A [`SessionId`] names it; another [`SessionRef`] may read
//! it from the store's global pointers instead (the session a host last
//! ran in a directory, see `integrations::host_session`), so that reading
//! the pointer and running the command are one transaction: no other
//! process can move the pointer in between.

use super::{SessionTx, Store, sql};
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

impl Store {
    /// The write transaction of a command on `target`'s session (see
    /// [`Store::write_tx`]), and that session.
    pub(crate) fn write_tx_for(
        &mut self,
        target: &(impl SessionRef + ?Sized),
    ) -> Result<(sql::Tx<'_>, SessionId)> {
        let tx = self.immediate()?;
        let session = resolve(&tx, target)?;
        tx.lock_session(&session)?;
        Ok((tx, session))
    }

    /// A read transaction (see [`Store::read_tx`]) and `target`'s session
    /// as of its snapshot.
    pub(crate) fn read_tx_for(
        &self,
        target: &(impl SessionRef + ?Sized),
    ) -> Result<(sql::Tx<'_>, SessionId)> {
        let tx = self.read_tx()?;
        let session = resolve(&tx, target)?;
        Ok((tx, session))
    }

    /// Runs `f` with the pointers of one read transaction.
    pub(crate) fn in_read<T>(
        &self,
        f: impl FnOnce(&mut PointerRead<'_>) -> Result<T>,
    ) -> Result<T> {
        self.in_read_tx(|tx| f(&mut |key| super::marks::pointer_in(tx, key)))
    }

    /// [`Store::begin_read`] on `target`'s session, resolved in the
    /// transaction's snapshot.
    pub(crate) fn begin_read_for(
        &self,
        target: &(impl SessionRef + ?Sized),
    ) -> Result<SessionTx<'_>> {
        let look = self.work.look();
        let (tx, session) = self.read_tx_for(target)?;
        Ok(SessionTx::new(tx, session, look))
    }
}
