//! Tests of the settings: the shared fixtures here, one file per topic.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::error::{Error, ErrorKind};

use super::file::{ConfigSource, expand_home, platform_config_file};
use super::*;

mod errors;
mod files;
mod keys;
mod listing;

const KNOWN: &str = "known keys: todo.enabled, todo.eager, todo.reminders, todo.reminders.max, \
                     todo.context.inactive_tool, todo.context.max_tasks, todo.claim.lease, goal.enabled, \
                     goal.continuation.max_idle, prompts.dir, memory.file, system_prompt.base, \
                     postgres.connect.retry, verify.timeout, verify.tail";

const ORIGIN: &str = "/x/config.toml";

fn file(text: &str) -> Result<Settings> {
    Settings::from_toml(text, Path::new(ORIGIN))
}

fn usage(result: Result<Settings>) -> String {
    match result {
        Err(error @ Error::Usage(_)) => error.to_string(),
        other => panic!("expected a usage error, got {other:?}"),
    }
}

fn file_err(text: &str) -> String {
    usage(file(text))
}

fn set(assignment: &str) -> Result<Settings> {
    let mut settings = Settings::default();
    settings.apply_set(assignment).map(|()| settings)
}

fn set_err(assignment: &str) -> String {
    usage(set(assignment))
}

fn sets(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| (*s).to_owned()).collect()
}

fn flag(path: &Path) -> ConfigFile {
    ConfigFile {
        path: path.to_owned(),
        source: ConfigSource::Flag,
    }
}

fn cwd() -> PathBuf {
    std::env::current_dir().unwrap()
}

/// Every key away from its default, as a file would write them.
const EVERY_KEY: &str = r#"
[todo]
enabled = false
eager = "preferred"

[todo.reminders]
enabled = false
max = 7

[todo.context]
inactive_tool = "read-only"
max_tasks = 12

[todo.claim]
lease = 90

[goal]
enabled = false
continuation.max_idle = 5

[prompts]
dir = "/etc/goalkeeper/prompts"

[memory]
file = "/home/me/memory.md"

[system_prompt]
base = "/home/me/base.md"

[postgres.connect]
retry = 5

[verify]
timeout = 30
tail = 100
"#;

fn every_key_changed() -> Settings {
    Settings {
        todo: TodoSettings {
            enabled: false,
            eager: Eager::Preferred,
            reminders: ReminderSettings {
                enabled: false,
                max: 7,
            },
            context: TodoContextSettings {
                inactive_tool: InactiveTool::ReadOnly,
                max_tasks: 12,
            },
            claim: ClaimSettings { lease: 90 },
        },
        goal: GoalSettings {
            enabled: false,
            continuation: ContinuationSettings { max_idle: 5 },
        },
        prompts: PromptSettings {
            dir: Some("/etc/goalkeeper/prompts".into()),
        },
        memory: MemorySettings {
            file: Some("/home/me/memory.md".into()),
        },
        system_prompt: SystemPromptSettings {
            base: Some("/home/me/base.md".into()),
        },
        postgres: PostgresSettings {
            connect: PostgresConnectSettings { retry: 5 },
        },
        verify: VerifySettings {
            timeout: 30,
            tail: 100,
        },
    }
}
