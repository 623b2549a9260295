//! The usage records of a Codex rollout file (`$CODEX_HOME/sessions/…/
//! rollout-*.jsonl`, the hook events' `transcript_path`): one
//! `{"type": "token_usage_record", "payload": {"response_id", "usage":
//! {"input_tokens", "cached_input_tokens", "cache_write_input_tokens",
//! "output_tokens", "reasoning_output_tokens"}}}` per model response.
//! `input_tokens` includes the cache reads and writes, `output_tokens` the
//! reasoning; cache reads do not count. And the record of a shell call:
//! an `event_msg` `item_completed` whose `item` is a `CommandExecution`.

use std::io::BufRead;
use std::path::Path;

use serde_json::Value;

use crate::goal::Usage;

/// The response id and usage of a `token_usage_record` line.
pub fn response_usage(line: &Value) -> Option<(String, Usage)> {
    if line.get("type").and_then(Value::as_str) != Some("token_usage_record") {
        return None;
    }
    let payload = line.get("payload")?;
    let id = payload
        .get("response_id")
        .and_then(Value::as_str)?
        .to_owned();
    let usage = payload.get("usage")?;
    let field = |name: &str| usage.get(name).and_then(Value::as_u64).unwrap_or(0);
    let cache_read = field("cached_input_tokens");
    let cache_write = field("cache_write_input_tokens");
    Some((
        id,
        Usage {
            input: field("input_tokens").saturating_sub(cache_read + cache_write),
            output: field("output_tokens"),
            cache_write,
            cache_read,
        },
    ))
}

/// What the rollout file holds of one shell call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommandExecution {
    /// The argv Codex ran: a shell, `-c` or `-lc`, the command line.
    pub argv: Vec<String>,
    /// Its exit status, when it ended with one.
    pub exit: Option<i32>,
    /// Its output, stdout and stderr as they came (Codex keeps the head
    /// and tail of a long one).
    pub output: String,
}

impl CommandExecution {
    /// Whether it ran `command` through a shell and nothing else.
    pub fn runs(&self, command: &str) -> bool {
        match &self.argv[..] {
            [shell, flag, line] => {
                let name = shell.rsplit('/').next().unwrap_or(shell);
                matches!(name, "bash" | "sh" | "zsh" | "dash")
                    && matches!(flag.as_str(), "-c" | "-lc")
                    && line == command
            }
            _ => false,
        }
    }
}

/// The record of shell call `id` in the rollout file at `path` (the last,
/// should there be more), or `None` when it has none.
pub fn command_execution(path: &Path, id: &str) -> std::io::Result<Option<CommandExecution>> {
    let file = std::io::BufReader::new(std::fs::File::open(path)?);
    let mut found = None;
    for line in file.lines() {
        let line = line?;
        // Most lines are something else: skip them unparsed.
        if !line.contains("CommandExecution") || !line.contains(id) {
            continue;
        }
        let Ok(record) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        if let Some(item) = execution_item(&record, id) {
            found = Some(item);
        }
    }
    Ok(found)
}

/// The `CommandExecution` of call `id` in one rollout line.
fn execution_item(record: &Value, id: &str) -> Option<CommandExecution> {
    let payload = record.get("payload")?;
    let item = payload.get("item")?;
    if payload.get("type").and_then(Value::as_str) != Some("item_completed")
        || item.get("type").and_then(Value::as_str) != Some("CommandExecution")
        || item.get("id").and_then(Value::as_str) != Some(id)
    {
        return None;
    }
    let argv = item
        .get("command")?
        .as_array()?
        .iter()
        .map(|word| word.as_str().map(str::to_owned))
        .collect::<Option<Vec<_>>>()?;
    Some(CommandExecution {
        argv,
        exit: item
            .get("exit_code")
            .and_then(Value::as_i64)
            .and_then(|code| i32::try_from(code).ok()),
        output: item
            .get("aggregated_output")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::integrations::usage_log::{LogCursor, read_usage_log};

    fn record(id: &str, input: u64, cached: u64, written: u64, output: u64) -> String {
        format!(
            r#"{{"timestamp":"t","type":"token_usage_record","payload":{{"response_id":"{id}","usage":{{"input_tokens":{input},"cached_input_tokens":{cached},"cache_write_input_tokens":{written},"output_tokens":{output},"reasoning_output_tokens":3,"total_tokens":0}}}}}}"#
        )
    }

    #[test]
    fn each_response_counts_once_without_cache_reads() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rollout.jsonl");
        let lines = [
            r#"{"type":"session_meta","payload":{"id":"s"}}"#.to_owned(),
            record("r1", 100, 40, 10, 7),
            r#"{"type":"event_msg","payload":{"type":"token_count","info":{"last_token_usage":{"input_tokens":100}}}}"#.to_owned(),
            record("r1", 100, 40, 10, 7),
            record("r2", 50, 0, 0, 5),
        ];
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
        let read = read_usage_log(&path, &LogCursor::default(), response_usage).unwrap();
        assert_eq!(read.responses, 2);
        assert_eq!(read.usage.cache_read, 40);
        assert_eq!(read.usage.cache_write, 10);
        assert_eq!(read.usage.counted(), (100 - 40 + 7) + (50 + 5));
    }

    #[test]
    fn a_shell_call_is_read_from_its_completed_item() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rollout.jsonl");
        let fixture =
            include_str!("../../../tests/hosts/fixtures/codex/rollout_command_execution.json");
        let line: Value = serde_json::from_str(fixture).unwrap();
        let lines = [
            r#"{"type":"session_meta","payload":{"id":"s"}}"#.to_owned(),
            line.to_string(),
        ];
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
        let item = command_execution(&path, "call_1").unwrap().unwrap();
        assert_eq!(item.exit, Some(3));
        assert!(item.output.starts_with("goalkeeper: database error"));
        let command =
            r#"goalkeeper --session-from codex todo apply '{"op":"init","items":["Lexer"]}'"#;
        assert!(item.runs(command));
        assert!(!item.runs("goalkeeper verify"));
        assert_eq!(command_execution(&path, "call_2").unwrap(), None);
        assert!(command_execution(&dir.path().join("none"), "call_1").is_err());
    }
}
