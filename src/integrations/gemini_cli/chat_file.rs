//! Token usage from a Gemini CLI chat file
//! (`~/.gemini/tmp/<project>/chats/session-*.jsonl`, the hook events'
//! `transcript_path`). Each model response is a record `{"type": "gemini",
//! "id", "tokens": {"input", "output", "cached", "thoughts", "tool",
//! "total"}}`; Gemini CLI writes a record again when it adds to it (the
//! tool calls of that response), with the same `id`, so each id is counted
//! once. `input` includes the `cached` prompt tokens, which do not count;
//! thoughts are output.
//!
//! Only what was written since the last read is parsed. The ids counted
//! most recently are remembered (a record is written again within the same
//! turn, long before [`RECENT_IDS`] newer responses exist). `$set` lines,
//! which restate the whole history when a session is resumed, are not
//! counted: their responses were counted when they were first written.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::goal::Usage;

/// How many counted response ids a cursor remembers.
pub const RECENT_IDS: usize = 64;

/// How far a chat file has been read.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChatCursor {
    /// The chat file; a different file starts again from 0.
    pub path: String,
    /// Bytes consumed: the end of the last complete line read.
    pub offset: u64,
    /// The ids of the responses counted last, oldest first.
    pub recent: VecDeque<String>,
}

/// What a read found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ChatRead {
    /// Tokens of the responses not counted before.
    pub usage: Usage,
    /// Responses counted.
    pub responses: usize,
    /// Lines that were not JSON (skipped).
    pub bad_lines: usize,
    /// Where the next read starts.
    pub cursor: ChatCursor,
}

/// Reads the usage written to `path` since `cursor`. A partial last line
/// (still being written) is left for the next read.
pub fn read_chat_usage(path: &Path, cursor: &ChatCursor) -> std::io::Result<ChatRead> {
    let path_text = path.display().to_string();
    let mut cursor = if cursor.path == path_text {
        cursor.clone()
    } else {
        ChatCursor {
            path: path_text,
            ..ChatCursor::default()
        }
    };
    let mut file = File::open(path)?;
    let len = file.metadata()?.len();
    if cursor.offset > len {
        // Truncated or replaced: read again, still skipping the ids seen.
        cursor.offset = 0;
    }
    file.seek(SeekFrom::Start(cursor.offset))?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)?;
    let complete = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let mut read = ChatRead::default();
    for line in bytes[..complete].split(|&b| b == b'\n') {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let Ok(record) = serde_json::from_slice::<Value>(line) else {
            read.bad_lines += 1;
            continue;
        };
        let Some((id, usage)) = response_usage(&record) else {
            continue;
        };
        if cursor.recent.contains(&id) {
            continue;
        }
        read.usage.input += usage.input;
        read.usage.output += usage.output;
        read.usage.cache_read += usage.cache_read;
        read.responses += 1;
        cursor.recent.push_back(id);
        if cursor.recent.len() > RECENT_IDS {
            cursor.recent.pop_front();
        }
    }
    cursor.offset += complete as u64;
    read.cursor = cursor;
    Ok(read)
}

/// The id and usage of a model response record.
fn response_usage(record: &Value) -> Option<(String, Usage)> {
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
        let read = read_chat_usage(&path, &ChatCursor::default()).unwrap();
        assert_eq!(read.responses, 2);
        assert_eq!(read.usage.input, 60 + 200);
        assert_eq!(read.usage.output, 15 + 7);
        assert_eq!(read.usage.cache_read, 40);
        assert_eq!(read.usage.counted(), 60 + 15 + 200 + 7);
        // Nothing new: nothing counted.
        let again = read_chat_usage(&path, &read.cursor).unwrap();
        assert_eq!(again.responses, 0);
        // The record written again after the cursor is still counted once.
        let mut more = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        use std::io::Write;
        writeln!(more, "{}", record("b", 200, 0, 7, 0)).unwrap();
        write!(more, "{}", record("c", 1, 0, 1, 0)).unwrap();
        let third = read_chat_usage(&path, &again.cursor).unwrap();
        assert_eq!(third.responses, 0, "b again, and c is not complete yet");
        writeln!(more).unwrap();
        let fourth = read_chat_usage(&path, &third.cursor).unwrap();
        assert_eq!((fourth.responses, fourth.usage.counted()), (1, 2));
    }

    #[test]
    fn bad_lines_are_skipped_and_counted() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("session.jsonl");
        std::fs::write(&path, format!("not json\n{}\n", record("a", 5, 0, 1, 0))).unwrap();
        let read = read_chat_usage(&path, &ChatCursor::default()).unwrap();
        assert_eq!((read.bad_lines, read.responses), (1, 1));
    }
}
