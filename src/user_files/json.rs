//! JSON that round-trips exactly: numbers stay as written
//! (`12345678901234567890123` is not turned into `1.2345678901234568e+22`),
//! objects keep their key order, strings and nesting are untouched. For
//! editing configuration files the user owns (DESIGN.md §12): parse, change the
//! few keys goalkeeper manages, write back with [`Json::to_pretty`].
//!
//! Nesting is bounded by [`MAX_DEPTH`]: a hostile file is an error with
//! its line and column, never a stack overflow.

use std::fmt::Write as _;

/// The deepest nesting [`Json::parse`] accepts (serde_json's own limit).
pub const MAX_DEPTH: usize = 128;

/// A JSON value with its numbers kept as text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Json {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number, exactly as written in the file.
    Number(String),
    /// A string (unescaped).
    String(String),
    /// An array.
    Array(Vec<Json>),
    /// An object, in the file's key order.
    Object(Object),
}

/// A JSON object that keeps its key order. A key repeated in the file keeps
/// its first position and its last value, as most readers do.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Object(Vec<(String, Json)>);

/// Where and why [`Json::parse`] failed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message} at line {line} column {column}")]
pub struct ParseError {
    /// What is wrong.
    pub message: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column (in characters).
    pub column: usize,
}

impl Object {
    /// An empty object.
    pub fn new() -> Object {
        Object(Vec::new())
    }

    /// The value under `key`.
    pub fn get(&self, key: &str) -> Option<&Json> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// The value under `key`, to change it.
    pub fn get_mut(&mut self, key: &str) -> Option<&mut Json> {
        self.0.iter_mut().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// True when `key` is present.
    pub fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// Sets `key` to `value`: in place when present, else at the end.
    /// Returns the previous value.
    pub fn insert(&mut self, key: impl Into<String>, value: impl Into<Json>) -> Option<Json> {
        let key = key.into();
        let value = value.into();
        match self.get_mut(&key) {
            Some(slot) => Some(std::mem::replace(slot, value)),
            None => {
                self.0.push((key, value));
                None
            }
        }
    }

    /// The value under `key`, inserting `default()` at the end first when
    /// missing.
    pub fn get_or_insert_with(&mut self, key: &str, default: impl FnOnce() -> Json) -> &mut Json {
        let index = match self.0.iter().position(|(k, _)| k == key) {
            Some(index) => index,
            None => {
                self.0.push((key.to_owned(), default()));
                self.0.len() - 1
            }
        };
        &mut self.0[index].1
    }

    /// True when there are no keys.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl Json {
    /// Parses one JSON value (surrounding whitespace allowed), keeping
    /// numbers as written. Refuses nesting deeper than [`MAX_DEPTH`].
    pub fn parse(text: &str) -> Result<Json, ParseError> {
        let mut parser = Parser { text, at: 0 };
        parser.skip_space();
        let value = parser.value(0)?;
        parser.skip_space();
        if parser.at < text.len() {
            return Err(parser.error("trailing characters after the JSON value"));
        }
        Ok(value)
    }

    /// The text as `serde_json::to_string_pretty` lays it out (two-space
    /// indent), with a final newline, numbers as they were read.
    pub fn to_pretty(&self) -> String {
        let mut out = String::new();
        self.write_pretty(&mut out, 0);
        out.push('\n');
        out
    }

    fn write_pretty(&self, out: &mut String, indent: usize) {
        match self {
            Json::Null => out.push_str("null"),
            Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Json::Number(n) => out.push_str(n),
            Json::String(s) => write_string(out, s),
            Json::Array(items) if items.is_empty() => out.push_str("[]"),
            Json::Array(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    out.push_str(if i == 0 { "\n" } else { ",\n" });
                    push_indent(out, indent + 1);
                    item.write_pretty(out, indent + 1);
                }
                out.push('\n');
                push_indent(out, indent);
                out.push(']');
            }
            Json::Object(object) if object.is_empty() => out.push_str("{}"),
            Json::Object(object) => {
                out.push('{');
                for (i, (key, value)) in object.0.iter().enumerate() {
                    out.push_str(if i == 0 { "\n" } else { ",\n" });
                    push_indent(out, indent + 1);
                    write_string(out, key);
                    out.push_str(": ");
                    value.write_pretty(out, indent + 1);
                }
                out.push('\n');
                push_indent(out, indent);
                out.push('}');
            }
        }
    }

    /// The string, when this is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Json::String(s) => Some(s),
            _ => None,
        }
    }

    /// The object, when this is one.
    pub fn as_object(&self) -> Option<&Object> {
        match self {
            Json::Object(o) => Some(o),
            _ => None,
        }
    }

    /// The object, to change it, when this is one.
    pub fn as_object_mut(&mut self) -> Option<&mut Object> {
        match self {
            Json::Object(o) => Some(o),
            _ => None,
        }
    }

    /// The items, when this is an array.
    pub fn as_array(&self) -> Option<&Vec<Json>> {
        match self {
            Json::Array(a) => Some(a),
            _ => None,
        }
    }

    /// The items, to change them, when this is an array.
    pub fn as_array_mut(&mut self) -> Option<&mut Vec<Json>> {
        match self {
            Json::Array(a) => Some(a),
            _ => None,
        }
    }

    /// The value under `key`, when this is an object that has it.
    pub fn get(&self, key: &str) -> Option<&Json> {
        self.as_object()?.get(key)
    }
}

impl From<serde_json::Value> for Json {
    fn from(value: serde_json::Value) -> Json {
        use serde_json::Value;
        match value {
            Value::Null => Json::Null,
            Value::Bool(b) => Json::Bool(b),
            Value::Number(n) => Json::Number(n.to_string()),
            Value::String(s) => Json::String(s),
            Value::Array(items) => Json::Array(items.into_iter().map(Json::from).collect()),
            Value::Object(map) => Json::Object(Object(
                map.into_iter().map(|(k, v)| (k, Json::from(v))).collect(),
            )),
        }
    }
}

impl From<&str> for Json {
    fn from(s: &str) -> Json {
        Json::String(s.to_owned())
    }
}

impl From<String> for Json {
    fn from(s: String) -> Json {
        Json::String(s)
    }
}

impl From<Object> for Json {
    fn from(o: Object) -> Json {
        Json::Object(o)
    }
}

fn push_indent(out: &mut String, levels: usize) {
    for _ in 0..levels {
        out.push_str("  ");
    }
}

fn write_string(out: &mut String, s: &str) {
    // serde_json's escaping: quotes, backslashes and control characters.
    let _ = write!(out, "{}", serde_json::Value::from(s));
}

struct Parser<'a> {
    text: &'a str,
    at: usize,
}

impl Parser<'_> {
    fn error(&self, message: &str) -> ParseError {
        let before = &self.text[..self.at];
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
        ParseError {
            message: message.to_owned(),
            line,
            column,
        }
    }

    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.at).copied()
    }

    fn skip_space(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    fn expect(&mut self, byte: u8, what: &str) -> Result<(), ParseError> {
        self.skip_space();
        if self.peek() == Some(byte) {
            self.at += 1;
            Ok(())
        } else {
            Err(self.error(&format!("expected {what}")))
        }
    }

    fn value(&mut self, depth: usize) -> Result<Json, ParseError> {
        self.skip_space();
        match self.peek() {
            None => Err(self.error("unexpected end of the file")),
            Some(b'{' | b'[') if depth >= MAX_DEPTH => {
                Err(self.error(&format!("nested more than {MAX_DEPTH} levels deep")))
            }
            Some(b'{') => self.object(depth + 1),
            Some(b'[') => self.array(depth + 1),
            Some(b'"') => Ok(Json::String(self.string()?)),
            Some(b't') => self.word("true", Json::Bool(true)),
            Some(b'f') => self.word("false", Json::Bool(false)),
            Some(b'n') => self.word("null", Json::Null),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(_) => Err(self.error("expected a JSON value")),
        }
    }

    fn word(&mut self, word: &str, value: Json) -> Result<Json, ParseError> {
        if self.text[self.at..].starts_with(word) {
            self.at += word.len();
            Ok(value)
        } else {
            Err(self.error("expected a JSON value"))
        }
    }

    fn object(&mut self, depth: usize) -> Result<Json, ParseError> {
        self.at += 1;
        let mut object = Object::new();
        self.skip_space();
        if self.peek() == Some(b'}') {
            self.at += 1;
            return Ok(Json::Object(object));
        }
        loop {
            self.skip_space();
            if self.peek() != Some(b'"') {
                return Err(self.error("expected a key in quotes"));
            }
            let key = self.string()?;
            self.expect(b':', "`:` after the key")?;
            let value = self.value(depth)?;
            object.insert(key, value);
            self.skip_space();
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(b'}') => {
                    self.at += 1;
                    return Ok(Json::Object(object));
                }
                _ => return Err(self.error("expected `,` or `}`")),
            }
        }
    }

    fn array(&mut self, depth: usize) -> Result<Json, ParseError> {
        self.at += 1;
        let mut items = Vec::new();
        self.skip_space();
        if self.peek() == Some(b']') {
            self.at += 1;
            return Ok(Json::Array(items));
        }
        loop {
            items.push(self.value(depth)?);
            self.skip_space();
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(b']') => {
                    self.at += 1;
                    return Ok(Json::Array(items));
                }
                _ => return Err(self.error("expected `,` or `]`")),
            }
        }
    }

    /// A string token, unescaped by serde_json (which checks the escapes).
    fn string(&mut self) -> Result<String, ParseError> {
        let start = self.at;
        let bytes = self.text.as_bytes();
        let mut i = start + 1;
        loop {
            match bytes.get(i) {
                None => return Err(self.error("a string is not closed")),
                Some(b'"') => break,
                Some(b'\\') => i += 2,
                Some(_) => i += 1,
            }
        }
        let token = &self.text[start..=i];
        let value = serde_json::from_str::<String>(token)
            .map_err(|e| self.error(&format!("bad string ({e})")))?;
        self.at = i + 1;
        Ok(value)
    }

    /// A number token, checked against the JSON grammar and kept as text.
    fn number(&mut self) -> Result<Json, ParseError> {
        let bytes = self.text.as_bytes();
        let start = self.at;
        let mut i = start;
        let digits = |i: &mut usize| {
            let from = *i;
            while bytes.get(*i).is_some_and(u8::is_ascii_digit) {
                *i += 1;
            }
            *i > from
        };
        if bytes.get(i) == Some(&b'-') {
            i += 1;
        }
        let int_start = i;
        if !digits(&mut i) || (bytes[int_start] == b'0' && i - int_start > 1) {
            return Err(self.error("bad number"));
        }
        if bytes.get(i) == Some(&b'.') {
            i += 1;
            if !digits(&mut i) {
                return Err(self.error("bad number"));
            }
        }
        if matches!(bytes.get(i), Some(b'e' | b'E')) {
            i += 1;
            if matches!(bytes.get(i), Some(b'+' | b'-')) {
                i += 1;
            }
            if !digits(&mut i) {
                return Err(self.error("bad number"));
            }
        }
        self.at = i;
        Ok(Json::Number(self.text[start..i].to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_key_order_survive_a_round_trip() {
        let text = "{\n  \"z\": 12345678901234567890123,\n  \"a\": [\n    1.50,\n    -0,\n    1e400,\n    2E-3\n  ],\n  \"m\": {}\n}\n";
        let value = Json::parse(text).unwrap();
        assert_eq!(value.to_pretty(), text);
    }

    #[test]
    fn output_matches_serde_json_pretty_for_ordinary_values() {
        let value =
            serde_json::json!({"b": [1, {"c": null, "d": "é\n\"x\"\u{1b}"}], "a": true, "e": []});
        let expected = serde_json::to_string_pretty(&value).unwrap() + "\n";
        assert_eq!(Json::from(value.clone()).to_pretty(), expected);
        assert_eq!(Json::parse(&expected).unwrap(), Json::from(value));
    }

    #[test]
    fn nesting_beyond_the_limit_is_an_error_with_its_place() {
        let deep = "[".repeat(100_000);
        let error = Json::parse(&deep).unwrap_err();
        assert_eq!(error.message, "nested more than 128 levels deep");
        assert_eq!((error.line, error.column), (1, 129));
        let ok = format!("{}{}", "[".repeat(128), "]".repeat(128));
        assert!(Json::parse(&ok).is_ok());
    }

    #[test]
    fn malformed_text_is_refused() {
        for bad in [
            "",
            "{",
            "{\"a\" 1}",
            "[1,]",
            "01",
            "1.",
            "-",
            "\"abc",
            "\"\\q\"",
            "{} x",
            "tru",
            "{\"a\":1,}",
        ] {
            assert!(Json::parse(bad).is_err(), "{bad:?} parsed");
        }
    }

    #[test]
    fn a_repeated_key_keeps_its_first_place_and_last_value() {
        let value = Json::parse(r#"{"a": 1, "b": 2, "a": 3}"#).unwrap();
        assert_eq!(value.to_pretty(), "{\n  \"a\": 3,\n  \"b\": 2\n}\n");
    }
}
