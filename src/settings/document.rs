//! A TOML settings document read as flat dotted keys, and values written
//! back as TOML text for messages and listings.

use toml::{Table, Value};

use super::keys::{Key, toml_string};

/// One leaf of a document.
#[derive(Debug)]
pub(super) struct Entry<'a> {
    /// The dotted key, segments joined with `.` whatever their quoting:
    /// `"todo.enabled"`, `todo.enabled` and `[todo] enabled` all give
    /// `todo.enabled`.
    pub key: String,
    /// The key as TOML would spell it (`"todo.reminders.max"` or
    /// `todo.reminders.max`), to tell two spellings of one key apart.
    pub spelling: String,
    /// The value; a table only where no key has children.
    pub value: &'a Value,
}

/// Every leaf of `table`, in document-table order (keys sorted within each
/// table). Tables are walked only where settings keys have children, so a
/// table given for a value (`todo.enabled = {}`) stays one entry and is
/// reported as a wrong type rather than as unknown keys below it.
pub(super) fn flatten(table: &Table) -> Vec<Entry<'_>> {
    let mut entries = Vec::new();
    walk(table, &mut Vec::new(), &mut entries);
    entries
}

fn walk<'a>(table: &'a Table, path: &mut Vec<&'a str>, entries: &mut Vec<Entry<'a>>) {
    for (name, value) in table {
        path.push(name);
        let key = path.join(".");
        match value {
            Value::Table(inner) if Key::is_section(&key) => walk(inner, path, entries),
            _ => entries.push(Entry {
                key,
                spelling: spell(path),
                value,
            }),
        }
        path.pop();
    }
}

/// A key path as TOML writes it: bare segments where allowed, quoted
/// otherwise.
fn spell(path: &[&str]) -> String {
    let bare = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    };
    path.iter()
        .map(|s| {
            if bare(s) {
                (*s).to_owned()
            } else {
                toml_string(s)
            }
        })
        .collect::<Vec<_>>()
        .join(".")
}

/// A value as a message shows it: scalars as TOML text, arrays and tables
/// by name.
pub(super) fn show_toml(value: &Value) -> String {
    match value {
        Value::String(s) => toml_string(s),
        Value::Integer(n) => n.to_string(),
        Value::Float(x) => x.to_string(),
        Value::Boolean(b) => b.to_string(),
        Value::Datetime(d) => d.to_string(),
        Value::Array(_) => "an array".to_owned(),
        Value::Table(_) => "a table".to_owned(),
    }
}
