//! The usage records of a Gemini CLI chat file
//! (`~/.gemini/tmp/<project>/chats/session-*.jsonl`, the hook events'
//! `transcript_path`). Each model response is a record `{"type": "gemini",
//! "id", "tokens": {"input", "output", "cached", "thoughts", "tool",
//! "total"}}`; Gemini CLI writes a record again when it adds to it (the
//! tool calls of that response), with the same `id`. `input` includes the
//! `cached` prompt tokens, which do not count; thoughts are output. `$set`
//! lines, which restate the whole history when a session is resumed, are
//! not counted: their responses were counted when first written.

use serde_json::Value;

use crate::goal::Usage;

/// The id and usage of a model response record.
pub fn response_usage(record: &Value) -> Option<(String, Usage)> {
    if record.get("type").and_then(Value::as_str) != Some("gemini") {
        return None;
    }
    let id = record.get("id").and_then(Value::as_str)?.to_owned();
    let tokens = record.get("tokens")?;
    let field = |name: &str| tokens.get(name).and_then(Value::as_u64).unwrap_or(0);
    let cached = field("cached");
    let input = field("input").saturating_sub(cached) + field("tool");
    Some((
        id,
        Usage {
            input,
            output: field("output") + field("thoughts"),
            cache_write: 0,
            cache_read: cached,
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::integrations::usage_log::{LogCursor, read_usage_log};

    fn record(id: &str, input: u64, cached: u64, output: u64, thoughts: u64) -> String {
        format!(
            r#"{{"id":"{id}","type":"gemini","content":"","tokens":{{"input":{input},"output":{output},"cached":{cached},"thoughts":{thoughts},"tool":0,"total":0}}}}"#
        )
    }

    #[test]
    fn each_response_counts_once_without_cache_reads() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("session.jsonl");
        let lines = [
            r#"{"sessionId":"s","kind":"main"}"#.to_owned(),
            r#"{"id":"u1","type":"user","content":[{"text":"hi"}]}"#.to_owned(),
            record("a", 100, 40, 10, 5),
            r#"{"$set":{"lastUpdated":"x"}}"#.to_owned(),
            record("a", 100, 40, 10, 5),
            record("b", 200, 0, 7, 0),
        ];
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
        let read = read_usage_log(&path, &LogCursor::default(), response_usage).unwrap();
        assert_eq!(read.responses, 2);
        assert_eq!(read.usage.input, 60 + 200);
        assert_eq!(read.usage.output, 15 + 7);
        assert_eq!(read.usage.cache_read, 40);
        assert_eq!(read.usage.counted(), 60 + 15 + 200 + 7);
        // Nothing new: nothing counted.
        let again = read_usage_log(&path, &read.cursor, response_usage).unwrap();
        assert_eq!(again.responses, 0);
        // The record written again after the cursor is still counted once.
        let mut more = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        use std::io::Write;
        writeln!(more, "{}", record("b", 200, 0, 7, 0)).unwrap();
        write!(more, "{}", record("c", 1, 0, 1, 0)).unwrap();
        let third = read_usage_log(&path, &again.cursor, response_usage).unwrap();
        assert_eq!(third.responses, 0, "b again, and c is not complete yet");
        writeln!(more).unwrap();
        let fourth = read_usage_log(&path, &third.cursor, response_usage).unwrap();
        assert_eq!((fourth.responses, fourth.usage.counted()), (1, 2));
    }

    #[test]
    fn bad_lines_are_skipped_and_counted() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("session.jsonl");
        std::fs::write(&path, format!("not json\n{}\n", record("a", 5, 0, 1, 0))).unwrap();
        let read = read_usage_log(&path, &LogCursor::default(), response_usage).unwrap();
        assert_eq!((read.bad_lines, read.responses), (1, 1));
    }
}
