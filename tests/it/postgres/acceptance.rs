//! The store's acceptance tests on PostgreSQL: the very files of
//! `todo_ops` (operations) and `todo_store` (undo, log, import, sessions,
//! goals, marks), compiled a second time with `common::store()` opening a
//! schema of its own on the test cluster instead of an in-memory SQLite
//! database. One test source, both backends.

/// `crate::common` with the store constructors on PostgreSQL (an item
/// defined here shadows the glob-imported one of the same name).
pub(crate) mod common {
    pub use crate::common::*;

    use goalkeeper::Store;

    /// A store on a new, empty PostgreSQL schema.
    pub fn store() -> Store {
        pg::store()
    }

    /// [`crate::common::planned`] on PostgreSQL.
    pub fn planned() -> Store {
        plan(store())
    }

    /// [`crate::common::mixed`] on PostgreSQL.
    pub fn mixed() -> Store {
        mix(store())
    }
}

#[path = "../todo_ops/mod.rs"]
mod todo_ops;
#[path = "../todo_store/mod.rs"]
mod todo_store;

#[test]
fn these_tests_run_on_postgres() {
    let store = common::store();
    assert!(store.path().is_none());
    assert!(
        store
            .describe()
            .starts_with("postgres://gk_user:***@127.0.0.1:"),
        "{}",
        store.describe()
    );
}
