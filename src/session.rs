//! Session ids: the unit of isolation, one per agent conversation.

use std::fmt;

use crate::error::Error;

/// A validated session id: 1–128 characters of `[A-Za-z0-9._:-]`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SessionId(String);

impl SessionId {
    /// The session used when none is given.
    pub(crate) const DEFAULT: &'static str = "default";

    /// Checks `id` and wraps it; anything outside the alphabet or length is
    /// [`Error::InvalidSession`].
    pub fn parse(id: &str) -> Result<SessionId, Error> {
        let valid = (1..=128).contains(&id.len())
            && id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b':' | b'-'));
        if valid {
            Ok(SessionId(id.to_owned()))
        } else {
            Err(Error::InvalidSession(id.to_owned()))
        }
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl Default for SessionId {
    fn default() -> SessionId {
        SessionId(SessionId::DEFAULT.to_owned())
    }
}

impl fmt::Display for SessionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A named agent of a list (DESIGN.md §2.5): 1–64 characters of
/// `[A-Za-z0-9._:-]`. `main` names the session's own agent, which is
/// stored as no name at all, and `user` is a person's, so neither is an
/// agent name.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct AgentName(String);

impl AgentName {
    /// Checks `name`: `Ok(None)` for `main` (the session's own agent),
    /// [`Error::Usage`] naming the rule for anything outside it.
    pub fn parse(name: &str) -> Result<Option<AgentName>, Error> {
        if name == crate::todo::MAIN {
            return Ok(None);
        }
        let valid = (1..=64).contains(&name.len())
            && name != "user"
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b':' | b'-'));
        if valid {
            Ok(Some(AgentName(name.to_owned())))
        } else {
            Err(Error::Usage(format!(
                "invalid agent name {}: use 1-64 characters from A-Z, a-z, 0-9, '.', '_', ':' and '-' (\"main\" is the session's own agent; \"user\" is reserved)",
                crate::sanitize::quoted_excerpt(name)
            )))
        }
    }

    /// The name as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for AgentName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agent_names_follow_their_rule() {
        assert_eq!(AgentName::parse("main").unwrap(), None);
        let name = AgentName::parse("worker-1.a:b_c").unwrap().unwrap();
        assert_eq!(name.as_str(), "worker-1.a:b_c");
        for bad in ["", "user", "a b", "é", &"x".repeat(65), "a\u{1b}[31m"] {
            let err = AgentName::parse(bad).unwrap_err().to_string();
            assert!(
                err.starts_with("invalid agent name") && err.contains("1-64"),
                "{err}"
            );
        }
    }

    #[test]
    fn accepts_the_documented_alphabet() {
        for id in [
            "default",
            "a",
            "A.b_c:d-9",
            &"x".repeat(128),
            "0f8e-uuid:1.2",
        ] {
            assert_eq!(SessionId::parse(id).unwrap().as_str(), id);
        }
    }

    #[test]
    fn rejects_everything_else_with_the_rule() {
        for id in [
            "",
            &"x".repeat(129),
            "a b",
            "a/b",
            "../x",
            "é",
            "a\nb",
            "a\0",
        ] {
            let err = SessionId::parse(id).unwrap_err();
            assert!(
                err.to_string().starts_with("invalid session id")
                    && err.to_string().contains("1-128 characters"),
                "{err}"
            );
        }
    }
}
