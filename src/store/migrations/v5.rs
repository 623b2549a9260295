//! Schema v5: each list's shape kept in its session's row.

use rusqlite::Transaction;

use crate::SessionId;
use crate::error::Result;
use crate::store::rows;
use crate::store::shape::{self, Shape};
use crate::store::sql::Tx;

/// Each list's shape kept in its session's row, so that reads of a long
/// list read what they show (DESIGN.md §7, see [`shape`]), computed here
/// from the rows of every list already stored; and triggers that forget a
/// session's shape whenever one of its task rows is written, so that a
/// shape is never older than the tasks:
/// the store writes the shape after the rows, and a write from outside
/// (another tool, a hand edit) leaves the session without one, read from
/// its rows until the store writes its list again. (Phase rows have no
/// trigger: every process would pay for parsing each trigger in the
/// schema. A read checks the phases' keys against the shape's,
/// and takes their names from the rows.)
pub(super) fn v5_kept_shapes(tx: &Transaction<'_>) -> Result<()> {
    super::team_columns(tx)?;
    super::check_column(tx)?;
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
    tx.execute_batch(&ddl)?;
    let sessions = {
        let mut stmt = tx.prepare("SELECT id FROM sessions WHERE todo_version > 0")?;
        let rows = stmt.query_map([], |r| r.get(0))?;
        rows.collect::<rusqlite::Result<Vec<String>>>()?
    };
    let tx = Tx::SqliteIn(tx);
    for id in sessions {
        let session = SessionId::parse(&id)?;
        let keyed = rows::load(&tx, &session)?;
        shape::save(&tx, &session, &Shape::of_keyed(&keyed))?;
    }
    Ok(())
}
