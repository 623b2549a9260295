//! The usage records of a Codex rollout file (`$CODEX_HOME/sessions/…/
//! rollout-*.jsonl`, the hook events' `transcript_path`): one
//! `{"type": "token_usage_record", "payload": {"response_id", "usage":
//! {"input_tokens", "cached_input_tokens", "cache_write_input_tokens",
//! "output_tokens", "reasoning_output_tokens"}}}` per model response.
//! `input_tokens` includes the cache reads and writes, `output_tokens` the
//! reasoning; cache reads do not count.

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
}
