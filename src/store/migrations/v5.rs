//! Schema v5: each list's shape kept in its session's row.

use rusqlite::Transaction;

use crate::error::Result;

/// Each list's shape kept in its session's row, so that reads of a long
/// list read what they show (DESIGN.md §7, `store::shape`); and triggers
/// that forget a session's shape whenever one of its task rows is written,
/// so that a shape is never older than the tasks: the store writes the
/// shape after the rows, and a write from outside (another tool, a hand
/// edit) leaves the session without one, read from its rows until the
/// store writes its list again. (Phase rows have no trigger: every process
/// would pay for parsing each trigger in the schema. A read checks the
/// phases' keys against the shape's, and takes their names from the rows.)
///
/// The step leaves every stored list's shape unknown (`NULL`), as
/// PostgreSQL's does: a shape is what the running build's renderer makes
/// of a list (its summary's bytes, where its pages start), so it is the
/// store that computes the missing ones once the schema is up to date
/// (`store::open`), never a step frozen at v5.
pub(super) fn v5_kept_shapes(tx: &Transaction<'_>) -> Result<()> {
    let mut ddl = String::from("ALTER TABLE sessions ADD COLUMN todo_shape TEXT;");
    for (event, row) in [("insert", "NEW"), ("update", "NEW"), ("delete", "OLD")] {
        ddl.push_str(&format!(
            "CREATE TRIGGER tasks_{event}_forget_shape AFTER {event} ON tasks
             BEGIN
               UPDATE sessions SET todo_shape = NULL
               WHERE id = {row}.session_id AND todo_shape IS NOT NULL;
             END;"
        ));
    }
    Ok(tx.execute_batch(&ddl)?)
}
