//! The table of keys: each key's name, accepted values, one-line
//! documentation, and which field of [`Settings`] it reads and writes.

use std::path::PathBuf;

use super::{Eager, InactiveTool, Settings};

/// One settings key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Key {
    TodoEnabled,
    TodoEager,
    TodoReminders,
    TodoRemindersMax,
    TodoContextInactiveTool,
    TodoContextMaxTasks,
    TodoClaimLease,
    GoalEnabled,
    GoalContinuationMaxIdle,
    PromptsDir,
    MemoryFile,
    SystemPromptBase,
    PostgresConnectRetry,
    VerifyTimeout,
    VerifyTail,
}

/// The values a key accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    Bool,
    Eager,
    /// An integer >= 0.
    Count,
    /// An integer >= 1.
    Positive,
    InactiveTool,
    Path,
}

/// A value that passed its key's check.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Parsed {
    Bool(bool),
    Eager(Eager),
    Count(u64),
    InactiveTool(InactiveTool),
    /// `None` clears the path (an empty string).
    Path(Option<PathBuf>),
}

/// `todo.reminders` is a boolean and also the parent of
/// `todo.reminders.max`; TOML cannot give one dotted key both a value and
/// children, so inside `[todo.reminders]` the boolean is spelled `enabled`.
const REMINDERS_ALIAS: &str = "todo.reminders.enabled";

impl Key {
    /// Every key, in the order of the documentation.
    pub(super) const ALL: [Key; 15] = [
        Key::TodoEnabled,
        Key::TodoEager,
        Key::TodoReminders,
        Key::TodoRemindersMax,
        Key::TodoContextInactiveTool,
        Key::TodoContextMaxTasks,
        Key::TodoClaimLease,
        Key::GoalEnabled,
        Key::GoalContinuationMaxIdle,
        Key::PromptsDir,
        Key::MemoryFile,
        Key::SystemPromptBase,
        Key::PostgresConnectRetry,
        Key::VerifyTimeout,
        Key::VerifyTail,
    ];

    /// The dotted name.
    pub(super) fn name(self) -> &'static str {
        match self {
            Key::TodoEnabled => "todo.enabled",
            Key::TodoEager => "todo.eager",
            Key::TodoReminders => "todo.reminders",
            Key::TodoRemindersMax => "todo.reminders.max",
            Key::TodoContextInactiveTool => "todo.context.inactive_tool",
            Key::TodoContextMaxTasks => "todo.context.max_tasks",
            Key::TodoClaimLease => "todo.claim.lease",
            Key::GoalEnabled => "goal.enabled",
            Key::GoalContinuationMaxIdle => "goal.continuation.max_idle",
            Key::PromptsDir => "prompts.dir",
            Key::MemoryFile => "memory.file",
            Key::SystemPromptBase => "system_prompt.base",
            Key::PostgresConnectRetry => "postgres.connect.retry",
            Key::VerifyTimeout => "verify.timeout",
            Key::VerifyTail => "verify.tail",
        }
    }

    /// The key a dotted name means, accepting the `todo.reminders.enabled`
    /// alias. Names are matched exactly.
    pub(super) fn parse(name: &str) -> Option<Key> {
        if name == REMINDERS_ALIAS {
            return Some(Key::TodoReminders);
        }
        Key::ALL.into_iter().find(|key| key.name() == name)
    }

    /// Whether `prefix` is a table of keys (`todo`, `todo.reminders`), so a
    /// TOML table there holds keys rather than being a wrong value.
    pub(super) fn is_section(prefix: &str) -> bool {
        Key::ALL
            .into_iter()
            .map(Key::name)
            .chain([REMINDERS_ALIAS])
            .any(|name| {
                name.strip_prefix(prefix)
                    .is_some_and(|rest| rest.starts_with('.'))
            })
    }

    pub(super) fn kind(self) -> Kind {
        match self {
            Key::TodoEnabled | Key::TodoReminders | Key::GoalEnabled => Kind::Bool,
            Key::TodoEager => Kind::Eager,
            Key::TodoRemindersMax | Key::TodoContextMaxTasks | Key::PostgresConnectRetry => {
                Kind::Count
            }
            Key::GoalContinuationMaxIdle
            | Key::TodoClaimLease
            | Key::VerifyTimeout
            | Key::VerifyTail => Kind::Positive,
            Key::TodoContextInactiveTool => Kind::InactiveTool,
            Key::PromptsDir | Key::MemoryFile | Key::SystemPromptBase => Kind::Path,
        }
    }

    /// One line on what the key does.
    pub(super) fn about(self) -> &'static str {
        match self {
            Key::TodoEnabled => "Offer the todo tool and render its <todo_context> block.",
            Key::TodoEager => {
                "On a session's first prompt, ask for a phased todo list: not at all (default), \
                 as a reminder (preferred) or as a requirement (always)."
            }
            Key::TodoReminders => {
                "Remind an agent that stops with open todos and no active goal to finish them."
            }
            Key::TodoRemindersMax => "Send at most this many reminders until the list changes.",
            Key::TodoContextInactiveTool => {
                "When the todo tool is not active: render no <todo_context> block (omit) or a \
                 read-only one (read-only)."
            }
            Key::TodoContextMaxTasks => {
                "List at most this many tasks in the <todo_context> block; 0 lists them all."
            }
            Key::TodoClaimLease => {
                "Seconds after a named agent's last call that its claims on tasks hold; \
                 then another agent may take them."
            }
            Key::GoalEnabled => "Inject the goal-mode messages while a goal is active.",
            Key::GoalContinuationMaxIdle => {
                "Pause the goal after this many continuations in a row without progress."
            }
            Key::PromptsDir => {
                "A directory of templates that override the built-in prompts file by file."
            }
            Key::MemoryFile => {
                "A global memory file injected once per session, before its first message."
            }
            Key::SystemPromptBase => {
                "A base prompt file that opens the prompt `goalkeeper system-prompt` assembles."
            }
            Key::PostgresConnectRetry => {
                "Seconds to keep trying a PostgreSQL connection the server turns away for now \
                 (too many clients, starting up); 0 never tries again."
            }
            Key::VerifyTimeout => {
                "Seconds a check may run in `goalkeeper verify` before its process group is \
                 killed and it fails as timed out."
            }
            Key::VerifyTail => {
                "Bytes of a check's output `goalkeeper verify` keeps (the end of it)."
            }
        }
    }

    /// Checks a value for this key. `raw` is the text of a `--set` value,
    /// which a path key takes as written even when it looks like another
    /// TOML type (a directory named `2024-01-01` or `42`).
    pub(super) fn parse_value(self, value: &toml::Value, raw: Option<&str>) -> Option<Parsed> {
        use toml::Value as V;
        match (self.kind(), value) {
            (Kind::Bool, V::Boolean(b)) => Some(Parsed::Bool(*b)),
            // Legacy boolean form (DESIGN.md §6).
            (Kind::Eager, V::Boolean(true)) => Some(Parsed::Eager(Eager::Always)),
            (Kind::Eager, V::Boolean(false)) => Some(Parsed::Eager(Eager::Default)),
            (Kind::Eager, V::String(s)) => Eager::ALL
                .into_iter()
                .find(|e| e.as_str() == s)
                .map(Parsed::Eager),
            (Kind::Count, V::Integer(n)) => u64::try_from(*n).ok().map(Parsed::Count),
            (Kind::Positive, V::Integer(n)) if *n >= 1 => u64::try_from(*n).ok().map(Parsed::Count),
            (Kind::InactiveTool, V::String(s)) => InactiveTool::ALL
                .into_iter()
                .find(|t| t.as_str() == s)
                .map(Parsed::InactiveTool),
            (Kind::Path, V::String(s)) => Some(path_value(s)),
            (Kind::Path, _) => raw.map(path_value),
            _ => None,
        }
    }

    /// Writes a checked value into its field.
    pub(super) fn store(self, settings: &mut Settings, parsed: Parsed) {
        match (self, parsed) {
            (Key::TodoEnabled, Parsed::Bool(b)) => settings.todo.enabled = b,
            (Key::TodoEager, Parsed::Eager(e)) => settings.todo.eager = e,
            (Key::TodoReminders, Parsed::Bool(b)) => settings.todo.reminders.enabled = b,
            (Key::TodoRemindersMax, Parsed::Count(n)) => settings.todo.reminders.max = n,
            (Key::TodoContextInactiveTool, Parsed::InactiveTool(t)) => {
                settings.todo.context.inactive_tool = t;
            }
            (Key::TodoContextMaxTasks, Parsed::Count(n)) => settings.todo.context.max_tasks = n,
            (Key::TodoClaimLease, Parsed::Count(n)) => settings.todo.claim.lease = n,
            (Key::GoalEnabled, Parsed::Bool(b)) => settings.goal.enabled = b,
            (Key::GoalContinuationMaxIdle, Parsed::Count(n)) => {
                settings.goal.continuation.max_idle = n;
            }
            (Key::PromptsDir, Parsed::Path(p)) => settings.prompts.dir = p,
            (Key::MemoryFile, Parsed::Path(p)) => settings.memory.file = p,
            (Key::SystemPromptBase, Parsed::Path(p)) => settings.system_prompt.base = p,
            (Key::PostgresConnectRetry, Parsed::Count(n)) => settings.postgres.connect.retry = n,
            (Key::VerifyTimeout, Parsed::Count(n)) => settings.verify.timeout = n,
            (Key::VerifyTail, Parsed::Count(n)) => settings.verify.tail = n,
            // `parse_value` only produces the shape of the key's kind.
            (key, parsed) => unreachable!("{key:?} cannot hold {parsed:?}"),
        }
    }

    /// The key's value in `settings` as TOML text; `None` for an unset path.
    pub(super) fn show(self, settings: &Settings) -> Option<String> {
        let path = |p: &Option<PathBuf>| p.as_ref().map(|p| toml_string(&p.to_string_lossy()));
        Some(match self {
            Key::TodoEnabled => settings.todo.enabled.to_string(),
            Key::TodoEager => toml_string(settings.todo.eager.as_str()),
            Key::TodoReminders => settings.todo.reminders.enabled.to_string(),
            Key::TodoRemindersMax => settings.todo.reminders.max.to_string(),
            Key::TodoContextInactiveTool => {
                toml_string(settings.todo.context.inactive_tool.as_str())
            }
            Key::TodoContextMaxTasks => settings.todo.context.max_tasks.to_string(),
            Key::TodoClaimLease => settings.todo.claim.lease.to_string(),
            Key::GoalEnabled => settings.goal.enabled.to_string(),
            Key::GoalContinuationMaxIdle => settings.goal.continuation.max_idle.to_string(),
            Key::PromptsDir => return path(&settings.prompts.dir),
            Key::MemoryFile => return path(&settings.memory.file),
            Key::SystemPromptBase => return path(&settings.system_prompt.base),
            Key::PostgresConnectRetry => settings.postgres.connect.retry.to_string(),
            Key::VerifyTimeout => settings.verify.timeout.to_string(),
            Key::VerifyTail => settings.verify.tail.to_string(),
        })
    }
}

fn path_value(text: &str) -> Parsed {
    Parsed::Path((!text.is_empty()).then(|| PathBuf::from(text)))
}

impl Kind {
    /// The accepted values in short, for listings.
    pub(super) fn name(self) -> &'static str {
        match self {
            Kind::Bool => "bool",
            Kind::Eager => "default | preferred | always",
            Kind::Count => "int >= 0",
            Kind::Positive => "int >= 1",
            Kind::InactiveTool => "omit | read-only",
            Kind::Path => "path",
        }
    }

    /// The accepted values in words, for errors.
    pub(super) fn expected(self) -> &'static str {
        match self {
            Kind::Bool => "expected true or false",
            Kind::Eager => {
                r#"expected "default", "preferred" or "always" (or the legacy true or false)"#
            }
            Kind::Count => "expected an integer >= 0",
            Kind::Positive => "expected an integer >= 1",
            Kind::InactiveTool => r#"expected "omit" or "read-only""#,
            Kind::Path => "expected a path (a string; empty for none)",
        }
    }
}

/// `text` as a TOML basic string: quoted, with `"`, `\` and control
/// characters escaped.
pub(super) fn toml_string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}
