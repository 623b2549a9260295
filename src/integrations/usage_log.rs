//! Token usage from a host's JSON-lines log (Gemini CLI's chat file,
//! Codex's rollout file): only what was written since the last read is
//! parsed, and each model response, named by its id, is counted once. A
//! host may write a response's record more than once (Gemini CLI does when
//! it adds the tool calls); the ids counted most recently are remembered
//! for that (a record is written again within the same turn, long before
//! [`RECENT_IDS`] newer responses exist). A partial last line (still being
//! written) is left for the next read.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::goal::Usage;

/// How many counted response ids a cursor remembers.
pub const RECENT_IDS: usize = 64;

/// How far a log has been read.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogCursor {
    /// The log file; a different file starts again from 0.
    pub path: String,
    /// Bytes consumed: the end of the last complete line read.
    pub offset: u64,
    /// The ids of the responses counted last, oldest first.
    pub recent: VecDeque<String>,
}

/// What a read found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LogRead {
    /// Tokens of the responses not counted before.
    pub usage: Usage,
    /// Responses counted.
    pub responses: usize,
    /// Lines that were not JSON (skipped).
    pub bad_lines: usize,
    /// Where the next read starts.
    pub cursor: LogCursor,
}

/// Reads the usage written to `path` since `cursor`; `record` names the
/// response and its usage of the lines that report one.
pub fn read_usage_log(
    path: &Path,
    cursor: &LogCursor,
    record: impl Fn(&Value) -> Option<(String, Usage)>,
) -> std::io::Result<LogRead> {
    let path_text = path.display().to_string();
    let mut cursor = if cursor.path == path_text {
        cursor.clone()
    } else {
        LogCursor {
            path: path_text,
            ..LogCursor::default()
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
    let mut read = LogRead::default();
    for line in bytes[..complete].split(|&b| b == b'\n') {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let Ok(line) = serde_json::from_slice::<Value>(line) else {
            read.bad_lines += 1;
            continue;
        };
        let Some((id, usage)) = record(&line) else {
            continue;
        };
        if cursor.recent.contains(&id) {
            continue;
        }
        read.usage.input += usage.input;
        read.usage.output += usage.output;
        read.usage.cache_write += usage.cache_write;
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
