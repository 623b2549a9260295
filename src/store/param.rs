//! A parameter of a statement ([`Value`]), which SQLite binds in
//! [`super::sql`] and PostgreSQL in `super::pg`. It is a module of its own
//! because both need it and only one of them may name the other: the seam
//! ([`super::sql`]) wraps the PostgreSQL backend, which therefore does not
//! reach back into the seam.

/// A parameter of a statement.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Value<'a> {
    Null,
    Int(i64),
    Text(&'a str),
}

impl From<i64> for Value<'_> {
    fn from(v: i64) -> Self {
        Value::Int(v)
    }
}

impl From<bool> for Value<'_> {
    fn from(v: bool) -> Self {
        Value::Int(i64::from(v))
    }
}

impl<'a> From<&'a str> for Value<'a> {
    fn from(v: &'a str) -> Self {
        Value::Text(v)
    }
}

impl<'a> From<&'a String> for Value<'a> {
    fn from(v: &'a String) -> Self {
        Value::Text(v)
    }
}

impl<'a, T: Into<Value<'a>>> From<Option<T>> for Value<'a> {
    fn from(v: Option<T>) -> Self {
        v.map_or(Value::Null, Into::into)
    }
}
