//! Settings (DESIGN.md §6): a TOML file overridden by `--set key=value`.
//!
//! The file is the one named by `--config`, else by `$GOALKEEPER_CONFIG`,
//! else `config.toml` in the platform config directory (which may be
//! missing: then every key keeps its default). Each `--set` is applied after
//! the file, in order.
//!
//! Every value is checked against its key: an unknown key, a wrong type, an
//! out-of-range number or a value outside an enum is a usage error that
//! names the key, where it came from and what is accepted. All problems are
//! reported together, so one run shows everything to fix.
//!
//! A document is flattened into dotted keys before it is checked, so
//! `[todo] enabled = false`, `todo.enabled = false` and
//! `"todo.enabled" = false` mean the same. `todo.reminders` is both a
//! boolean and the parent of `todo.reminders.max`, which TOML cannot write
//! as two dotted keys; inside a `[todo.reminders]` table the boolean is
//! spelled `enabled` (`todo.reminders.enabled` is accepted everywhere as an
//! alias of `todo.reminders`).
//!
//! Paths (`prompts.dir`, `memory.file`, `system_prompt.base`) are stored
//! absolute. A leading `~/` is the home directory. A relative path in a file
//! is relative to that file's directory, so a config file can sit next to
//! its prompts; a relative path from `--set` is relative to the current
//! directory, like any other command-line path. An empty string clears the
//! path, so `--set prompts.dir=` undoes a file's setting.

mod document;
mod file;
mod keys;
mod problems;

#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::error::Result;

pub(crate) use file::ConfigFile;
use keys::{Key, Parsed};
use problems::{Origin, Problem, ProblemKind};

/// Every setting, typed. [`Default`] gives the documented defaults.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Settings {
    /// `todo.*`: the todo tool, its context block and its reminders.
    pub todo: TodoSettings,
    /// `goal.*`: goal mode.
    pub goal: GoalSettings,
    /// `prompts.*`: prompt templates.
    pub prompts: PromptSettings,
    /// `memory.*`: the global memory file.
    pub memory: MemorySettings,
    /// `system_prompt.*`: the assembled system prompt.
    pub system_prompt: SystemPromptSettings,
    /// `postgres.*`: fleet mode's connections.
    pub postgres: PostgresSettings,
    /// `verify.*`: how `goalkeeper verify` runs checks.
    pub verify: VerifySettings,
}

/// The `verify.*` keys.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct VerifySettings {
    /// `verify.timeout` (default 600): seconds a check may run before its
    /// process group is killed and it fails as timed out.
    pub timeout: u64,
    /// `verify.tail` (default 4096): bytes of a check's output kept (the
    /// end); what a check prints beyond them costs nothing.
    pub tail: u64,
}

impl Default for VerifySettings {
    fn default() -> VerifySettings {
        VerifySettings {
            timeout: 600,
            tail: 4096,
        }
    }
}

/// The `todo.*` keys.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TodoSettings {
    /// `todo.enabled` (default true): the todo tool exists and its
    /// `<todo_context>` block may be rendered.
    pub enabled: bool,
    /// `todo.eager` (default `default`): how hard the first prompt of a
    /// session pushes for a phased list.
    pub eager: Eager,
    /// `todo.reminders` and `todo.reminders.max`.
    pub reminders: ReminderSettings,
    /// `todo.context.*`: the shape of the `<todo_context>` block.
    pub context: TodoContextSettings,
    /// `todo.claim.*`: claims of named agents on tasks.
    pub claim: ClaimSettings,
}

/// The `todo.claim.*` keys.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ClaimSettings {
    /// `todo.claim.lease` (default 600): seconds after a named agent's
    /// last call that its claims on tasks last (DESIGN.md §2.5).
    pub lease: u64,
}

impl Default for ClaimSettings {
    fn default() -> ClaimSettings {
        ClaimSettings { lease: 600 }
    }
}

impl Default for TodoSettings {
    fn default() -> TodoSettings {
        TodoSettings {
            enabled: true,
            eager: Eager::default(),
            reminders: ReminderSettings::default(),
            context: TodoContextSettings::default(),
            claim: ClaimSettings::default(),
        }
    }
}

/// `todo.eager`: whether the first prompt of a session asks for a todo list.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Eager {
    /// No eager prompt; the agent decides when a list helps.
    #[default]
    Default,
    /// A reminder that a phased list is preferred.
    Preferred,
    /// A requirement to lay out a phased list with one `init` first.
    Always,
}

impl Eager {
    /// Every value, in the order the documentation lists them.
    pub const ALL: [Eager; 3] = [Eager::Default, Eager::Preferred, Eager::Always];

    /// The value as written in settings.
    pub fn as_str(self) -> &'static str {
        match self {
            Eager::Default => "default",
            Eager::Preferred => "preferred",
            Eager::Always => "always",
        }
    }
}

/// `todo.reminders` and `todo.reminders.max`: the reminder sent when the
/// agent stops with open todos and no active goal.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ReminderSettings {
    /// `todo.reminders` (default true): whether the reminder is sent at all.
    pub enabled: bool,
    /// `todo.reminders.max` (default 3): at most this many reminders until
    /// the list changes; 0 sends none.
    pub max: u64,
}

impl Default for ReminderSettings {
    fn default() -> ReminderSettings {
        ReminderSettings {
            enabled: true,
            max: 3,
        }
    }
}

/// The `todo.context.*` keys.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TodoContextSettings {
    /// `todo.context.inactive_tool` (default `omit`): what to render when
    /// the `todo` tool is not active for the caller.
    pub inactive_tool: InactiveTool,
    /// `todo.context.max_tasks` (default 200): the most tasks the block
    /// lists; 0 means no limit. A list that fits renders the source's block
    /// byte for byte.
    pub max_tasks: u64,
}

impl Default for TodoContextSettings {
    fn default() -> TodoContextSettings {
        TodoContextSettings {
            inactive_tool: InactiveTool::default(),
            max_tasks: 200,
        }
    }
}

/// `todo.context.inactive_tool`: the `<todo_context>` block when the agent
/// cannot call the `todo` tool.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum InactiveTool {
    /// Render nothing (DESIGN.md §3.3, gate 2).
    #[default]
    Omit,
    /// Render a read-only variant that does not ask for `todo` calls.
    ReadOnly,
}

impl InactiveTool {
    /// Every value, in the order the documentation lists them.
    pub const ALL: [InactiveTool; 2] = [InactiveTool::Omit, InactiveTool::ReadOnly];

    /// The value as written in settings.
    pub fn as_str(self) -> &'static str {
        match self {
            InactiveTool::Omit => "omit",
            InactiveTool::ReadOnly => "read-only",
        }
    }
}

/// The `goal.*` keys.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct GoalSettings {
    /// `goal.enabled` (default true): goal mode injects its messages.
    pub enabled: bool,
    /// `goal.continuation.*`: the runaway guard.
    pub continuation: ContinuationSettings,
}

impl Default for GoalSettings {
    fn default() -> GoalSettings {
        GoalSettings {
            enabled: true,
            continuation: ContinuationSettings::default(),
        }
    }
}

/// The `goal.continuation.*` keys.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ContinuationSettings {
    /// `goal.continuation.max_idle` (default 3, always at least 1): after
    /// this many continuations in a row without progress the goal pauses.
    pub max_idle: u64,
}

impl Default for ContinuationSettings {
    fn default() -> ContinuationSettings {
        ContinuationSettings { max_idle: 3 }
    }
}

/// The `prompts.*` keys.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct PromptSettings {
    /// `prompts.dir` (default none): a directory whose files override the
    /// built-in templates one by one. Absolute when set.
    pub dir: Option<PathBuf>,
}

/// The `memory.*` keys.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct MemorySettings {
    /// `memory.file` (default none): a global memory file injected once per
    /// session, before its first message. Absolute when set.
    pub file: Option<PathBuf>,
}

/// The `system_prompt.*` keys.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct SystemPromptSettings {
    /// `system_prompt.base` (default none): a file whose text opens the
    /// prompt `goalkeeper system-prompt` assembles. Absolute when set.
    pub base: Option<PathBuf>,
}

/// The `postgres.*` keys.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct PostgresSettings {
    /// `postgres.connect.*`: connecting.
    pub connect: PostgresConnectSettings,
}

/// The `postgres.connect.*` keys.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PostgresConnectSettings {
    /// `postgres.connect.retry` (default 30): seconds a connection the
    /// server turns away for now (too many clients, starting up) is tried
    /// again before the command fails; 0 never tries again. A hook and the
    /// status line stop sooner, within their own wait.
    pub retry: u64,
}

impl Default for PostgresConnectSettings {
    fn default() -> PostgresConnectSettings {
        PostgresConnectSettings { retry: 30 }
    }
}

/// One key for a listing such as `config show`: its current value next to
/// its type and default. Values are written as TOML (`true`, `3`,
/// `"always"`); `None` is an unset path.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct KeyInfo {
    /// The dotted key, e.g. `todo.reminders.max`.
    pub key: &'static str,
    /// The accepted values, e.g. `bool`, `int >= 0`, `omit | read-only`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// The current value.
    pub value: Option<String>,
    /// The default value.
    pub default: Option<String>,
    /// One line on what the key does.
    pub about: &'static str,
}

impl Settings {
    /// Reads the settings file ([`ConfigFile::locate`]) and applies `sets`
    /// (each `key=value`, as [`Settings::apply_set`]) in order.
    ///
    /// A file named by `--config` or `$GOALKEEPER_CONFIG` must exist; a
    /// missing platform default means defaults. Every bad key in the file
    /// and in `sets` is reported in one
    /// [`Error::Usage`](crate::Error::Usage); a file that exists but cannot
    /// be read is [`Error::Io`](crate::Error::Io).
    pub fn load(config: Option<&Path>, sets: &[String]) -> Result<Settings> {
        Settings::load_from(ConfigFile::locate(config).as_ref(), sets)
    }

    /// [`Settings::load`] with the file already located (`None`: no file).
    pub(crate) fn load_from(file: Option<&ConfigFile>, sets: &[String]) -> Result<Settings> {
        let mut settings = Settings::default();
        let mut problems = Vec::new();
        if let Some(file) = file
            && let Some(text) = file::read(file)?
        {
            settings.apply_document(&text, &file.path, &mut problems)?;
        }
        for assignment in sets {
            settings.apply_assignment(assignment, &mut problems)?;
        }
        problems::check(problems)?;
        Ok(settings)
    }

    /// Parses a TOML settings document over the defaults. `origin` is the
    /// file it came from: errors name it, and relative paths in it resolve
    /// against its directory.
    #[cfg(test)]
    pub(crate) fn from_toml(text: &str, origin: &Path) -> Result<Settings> {
        let mut settings = Settings::default();
        let mut problems = Vec::new();
        settings.apply_document(text, origin, &mut problems)?;
        problems::check(problems)?;
        Ok(settings)
    }

    /// Applies one `--set` assignment, `key=value`. The value is read as a
    /// TOML value when it is one (`true`, `3`, `"a b"`), else as a bare
    /// string, so `todo.eager=always` and `prompts.dir=/tmp/p` need no
    /// quotes; a path key takes the text as written either way, and a
    /// relative path is made absolute against the current directory. Space
    /// around the key and the value is ignored. On error nothing changes.
    #[cfg(test)]
    pub(crate) fn apply_set(&mut self, assignment: &str) -> Result<()> {
        let mut problems = Vec::new();
        let mut updated = self.clone();
        updated.apply_assignment(assignment, &mut problems)?;
        problems::check(problems)?;
        *self = updated;
        Ok(())
    }

    /// Every key with its current value, type and default, in the order of
    /// the documentation.
    pub fn keys(&self) -> Vec<KeyInfo> {
        let defaults = Settings::default();
        Key::ALL
            .into_iter()
            .map(|key| KeyInfo {
                key: key.name(),
                kind: key.kind().name(),
                value: key.show(self),
                default: key.show(&defaults),
                about: key.about(),
            })
            .collect()
    }

    /// Every accepted key, in the order of the documentation (the alias
    /// `todo.reminders.enabled` is not listed).
    #[cfg(test)]
    pub(crate) fn key_names() -> impl Iterator<Item = &'static str> {
        Key::ALL.into_iter().map(Key::name)
    }

    fn apply_document(
        &mut self,
        text: &str,
        file: &Path,
        problems: &mut Vec<Problem>,
    ) -> Result<()> {
        let origin = Origin::File(file.to_owned());
        let table = match text.parse::<toml::Table>() {
            Ok(table) => table,
            Err(error) => {
                problems.push(origin.problem(ProblemKind::syntax(text, &error)));
                return Ok(());
            }
        };
        let base = file.parent().unwrap_or(Path::new(""));
        let mut seen: Vec<(Key, String)> = Vec::new();
        for entry in document::flatten(&table) {
            let Some(key) = Key::parse(&entry.key) else {
                problems.push(origin.problem(ProblemKind::Unknown(entry.key)));
                continue;
            };
            if let Some((_, first)) = seen.iter().find(|(k, _)| *k == key) {
                problems.push(origin.problem(ProblemKind::Twice {
                    key: key.name(),
                    first: first.clone(),
                    second: entry.spelling,
                }));
                continue;
            }
            seen.push((key, entry.spelling));
            match key.parse_value(entry.value, None) {
                Some(parsed) => self.store(key, parsed, base)?,
                None => problems.push(origin.problem(ProblemKind::invalid(
                    key,
                    entry.key,
                    document::show_toml(entry.value),
                ))),
            }
        }
        Ok(())
    }

    fn apply_assignment(&mut self, assignment: &str, problems: &mut Vec<Problem>) -> Result<()> {
        let Some((written, raw)) = assignment.split_once('=') else {
            problems.push(Origin::Set.problem(ProblemKind::MissingEquals(assignment.to_owned())));
            return Ok(());
        };
        let (written, raw) = (written.trim(), raw.trim());
        let Some(key) = Key::parse(written) else {
            problems.push(Origin::Set.problem(ProblemKind::Unknown(written.to_owned())));
            return Ok(());
        };
        let value = raw
            .parse::<toml::Value>()
            .unwrap_or_else(|_| toml::Value::String(raw.to_owned()));
        match key.parse_value(&value, Some(raw)) {
            // An empty base resolves against the current directory.
            Some(parsed) => self.store(key, parsed, Path::new("")),
            None => {
                problems.push(Origin::Set.problem(ProblemKind::invalid(
                    key,
                    written.to_owned(),
                    format!("{raw:?}"),
                )));
                Ok(())
            }
        }
    }

    /// Stores a checked value, making a path absolute against `base` (a
    /// file's directory; empty for the current directory).
    fn store(&mut self, key: Key, parsed: Parsed, base: &Path) -> Result<()> {
        let parsed = match parsed {
            Parsed::Path(Some(path)) => Parsed::Path(Some(file::resolve(key, &path, base)?)),
            other => other,
        };
        key.store(self, parsed);
        Ok(())
    }
}
