//! Token usage from a Claude Code transcript (JSON lines). Only the part
//! written since the last read is parsed, and each assistant message is
//! counted once: Claude Code writes one line per content block, every line
//! carrying the same message id and the same usage.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::goal::Usage;

/// How far a transcript has been read.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cursor {
    /// The transcript file; a different file starts again from 0.
    pub path: String,
    /// Bytes consumed: the end of the last complete line read.
    pub offset: u64,
    /// The id of the last assistant message counted.
    pub last_message: Option<String>,
}

/// What a read found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TranscriptRead {
    /// Tokens of the messages not counted before.
    pub usage: Usage,
    /// Assistant messages counted.
    pub messages: usize,
    /// Lines that were not JSON (skipped).
    pub bad_lines: usize,
    /// Where the next read starts.
    pub cursor: Cursor,
}

/// Reads the usage written to `path` since `cursor`. A partial last line
/// (still being written) is left for the next read.
pub fn read_usage(path: &Path, cursor: &Cursor) -> std::io::Result<TranscriptRead> {
    let path_text = path.display().to_string();
    let mut cursor = if cursor.path == path_text {
        cursor.clone()
    } else {
        Cursor {
            path: path_text,
            ..Cursor::default()
        }
    };
    let mut file = File::open(path)?;
    let len = file.metadata()?.len();
    if cursor.offset > len {
        // The file was truncated or replaced: read it again from the start.
        cursor.offset = 0;
        cursor.last_message = None;
    }
    file.seek(SeekFrom::Start(cursor.offset))?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)?;
    let complete = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let mut read = TranscriptRead::default();
    for line in bytes[..complete].split(|&b| b == b'\n') {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let Ok(entry) = serde_json::from_slice::<Value>(line) else {
            read.bad_lines += 1;
            continue;
        };
        let Some((id, usage)) = assistant_usage(&entry) else {
            continue;
        };
        if cursor.last_message.as_deref() == Some(id.as_str()) {
            continue;
        }
        read.usage.input += usage.input;
        read.usage.output += usage.output;
        read.usage.cache_write += usage.cache_write;
        read.usage.cache_read += usage.cache_read;
        read.messages += 1;
        cursor.last_message = Some(id);
    }
    cursor.offset += complete as u64;
    read.cursor = cursor;
    Ok(read)
}

/// The message id and usage of an assistant entry.
fn assistant_usage(entry: &Value) -> Option<(String, Usage)> {
    if entry.get("type").and_then(Value::as_str) != Some("assistant") {
        return None;
    }
    let message = entry.get("message")?;
    let usage = message.get("usage")?;
    let count = |key: &str| usage.get(key).and_then(Value::as_u64).unwrap_or(0);
    let id = message
        .get("id")
        .or_else(|| entry.get("uuid"))
        .and_then(Value::as_str)?
        .to_owned();
    Some((
        id,
        Usage {
            input: count("input_tokens"),
            output: count("output_tokens"),
            cache_write: count("cache_creation_input_tokens"),
            cache_read: count("cache_read_input_tokens"),
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn assistant(id: &str, input: u64, output: u64, write: u64, read: u64) -> String {
        format!(
            r#"{{"type":"assistant","uuid":"u-{id}","message":{{"id":"{id}","role":"assistant","usage":{{"input_tokens":{input},"output_tokens":{output},"cache_creation_input_tokens":{write},"cache_read_input_tokens":{read}}}}}}}"#
        )
    }

    #[test]
    fn counts_each_message_once_and_resumes_where_it_stopped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let mut file = File::create(&path).unwrap();
        writeln!(
            file,
            r#"{{"type":"user","message":{{"role":"user","content":"hi"}}}}"#
        )
        .unwrap();
        // One message written as two content-block lines.
        writeln!(file, "{}", assistant("m1", 10, 5, 100, 1000)).unwrap();
        writeln!(file, "{}", assistant("m1", 10, 5, 100, 1000)).unwrap();
        writeln!(file, "not json").unwrap();
        // A partial line, still being written.
        write!(file, "{}", &assistant("m2", 1, 1, 1, 1)[..20]).unwrap();
        file.flush().unwrap();

        let first = read_usage(&path, &Cursor::default()).unwrap();
        assert_eq!(
            first.usage,
            Usage {
                input: 10,
                output: 5,
                cache_write: 100,
                cache_read: 1000
            }
        );
        assert_eq!((first.messages, first.bad_lines), (1, 1));

        // Nothing new: nothing counted again.
        let again = read_usage(&path, &first.cursor).unwrap();
        assert_eq!(again.usage, Usage::default());

        // The partial line completes, and m1 straddles nothing.
        let rest = &assistant("m2", 1, 1, 1, 1)[20..];
        writeln!(file, "{rest}").unwrap();
        writeln!(file, "{}", assistant("m2", 1, 1, 1, 1)).unwrap();
        let second = read_usage(&path, &again.cursor).unwrap();
        assert_eq!(second.usage.input, 1);
        assert_eq!(second.messages, 1);
    }

    #[test]
    fn a_new_or_shorter_file_starts_over() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        std::fs::write(&path, format!("{}\n", assistant("m1", 3, 0, 0, 0))).unwrap();
        let stale = Cursor {
            path: path.display().to_string(),
            offset: 10_000,
            last_message: Some("old".into()),
        };
        assert_eq!(read_usage(&path, &stale).unwrap().usage.input, 3);
        let other = Cursor {
            path: "/elsewhere.jsonl".into(),
            offset: 5,
            last_message: None,
        };
        assert_eq!(read_usage(&path, &other).unwrap().usage.input, 3);
    }

    #[test]
    fn a_missing_file_is_an_error() {
        assert!(read_usage(Path::new("/nonexistent/t.jsonl"), &Cursor::default()).is_err());
    }
}
