//! One tool call as it arrives, the same shape for the `todo` and the
//! `goal` tool: raw JSON text (a CLI argument or stdin), an already-decoded
//! JSON value (MCP), or a typed op (the user subcommands and the library).
//! `todo::Call` and `goal::Call` name it for their op type.

use std::fmt;

use serde_json::Value;

/// One call of a tool whose typed ops are `O`.
pub enum Call<'a, O> {
    /// JSON text (a todo call may be at most `todo::MAX_CALL_BYTES`).
    Json(&'a str),
    /// A decoded JSON value.
    Value(&'a Value),
    /// A typed op.
    Op(&'a O),
}

/// A typed op as the JSON call that would send it.
pub trait OpJson {
    /// The op as a JSON call object.
    fn to_json(&self) -> Value;
}

impl<O: OpJson> Call<'_, O> {
    /// The call as it arrived, as text: what the event log records when
    /// the call is rejected.
    pub fn raw_payload(&self) -> String {
        match self {
            Call::Json(text) => (*text).to_owned(),
            Call::Value(value) => value.to_string(),
            Call::Op(op) => op.to_json().to_string(),
        }
    }
}

// By hand: a call is a reference, so it is `Copy` whatever `O` is.
impl<O> Clone for Call<'_, O> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<O> Copy for Call<'_, O> {}

impl<O: fmt::Debug> fmt::Debug for Call<'_, O> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Call::Json(text) => f.debug_tuple("Json").field(text).finish(),
            Call::Value(value) => f.debug_tuple("Value").field(value).finish(),
            Call::Op(op) => f.debug_tuple("Op").field(op).finish(),
        }
    }
}

/// Where the JSON of a call holds a NUL character (U+0000), named for an
/// error message: `` `task` ``, `` `list[0].items[2]` ``, `a field name`
/// (or `` a field name in `list[0]` ``), `the call`; `None` when it holds
/// none. goalkeeper stores no NUL anywhere, on either backend (DESIGN.md
/// §1), so such a call is refused whole, before anything in it is read or
/// echoed.
pub(crate) fn nul_field(value: &Value) -> Option<String> {
    // Every call passes here: the common answer, none, allocates nothing.
    fn any(value: &Value) -> bool {
        match value {
            Value::String(text) => text.contains('\0'),
            Value::Array(items) => items.iter().any(any),
            Value::Object(fields) => fields.iter().any(|(k, v)| k.contains('\0') || any(v)),
            _ => false,
        }
    }
    if !any(value) {
        return None;
    }
    fn walk(value: &Value, path: &str) -> Option<String> {
        let named = |path: &str| {
            if path.is_empty() {
                "the call".to_owned()
            } else {
                format!("`{path}`")
            }
        };
        match value {
            Value::String(text) => text.contains('\0').then(|| named(path)),
            Value::Array(items) => items
                .iter()
                .enumerate()
                .find_map(|(i, item)| walk(item, &format!("{path}[{i}]"))),
            Value::Object(fields) => fields.iter().find_map(|(key, item)| {
                if key.contains('\0') {
                    return Some(match path {
                        "" => "a field name".to_owned(),
                        _ => format!("a field name in {}", named(path)),
                    });
                }
                let path = match path {
                    "" => key.clone(),
                    _ => format!("{path}.{key}"),
                };
                walk(item, &path)
            }),
            _ => None,
        }
    }
    walk(value, "")
}

/// The refusal of a text holding a NUL character; `what` names it.
pub(crate) fn nul_refusal(what: &str) -> String {
    format!("{what} holds a NUL character (U+0000), which goalkeeper never stores; remove it")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::nul_field;

    /// The field a NUL is in is named, whatever its depth; a call without
    /// one names none.
    #[test]
    fn a_nul_is_found_and_its_field_named() {
        let cases = [
            (json!({"op": "done", "task": "a\u{0}b"}), Some("`task`")),
            (
                json!({"op": "init", "list": [{"phase": "P", "items": ["a", "b\u{0}"]}]}),
                Some("`list[0].items[1]`"),
            ),
            (json!({"op": "view", "x\u{0}": 1}), Some("a field name")),
            (
                json!({"list": [{"p\u{0}": "P"}]}),
                Some("a field name in `list[0]`"),
            ),
            (json!("\u{0}"), Some("the call")),
            (json!({"op": "done", "task": "a\\u0000b", "page": 1}), None),
        ];
        for (call, field) in cases {
            assert_eq!(nul_field(&call).as_deref(), field, "{call}");
        }
    }
}
