//! Token usage from a host's JSON-lines log (Gemini CLI's chat file,
//! Codex's rollout file): only what was written since the last read is
//! parsed, and each model response, named by its id, is counted once. A
//! host may write a response's record more than once (Gemini CLI does when
//! it adds the tool calls); the ids counted most recently are remembered
//! for that (a record is written again within the same turn, long before
//! [`RECENT_IDS`] newer responses exist). A partial last line (still being
//! written) is left for the next read.
//!
//! As with Claude Code's transcripts: only a regular file is read (a FIFO
//! or a device is refused before it is opened, so nothing blocks), line by
//! line in bounded memory (a line over [`MAX_LINE`] is skipped as bad),
//! for at most [`READ_TIME`] per read, stopping at a line's end (the next
//! read goes on from the cursor); sums saturate.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{BufRead, BufReader, Seek, SeekFrom};
use std::path::Path;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::goal::Usage;

/// The longest line read; longer ones are skipped.
pub const MAX_LINE: usize = 8 * 1024 * 1024;

/// How long one read may take before it stops where it is: a quarter of
/// the hook's 8 s wait.
pub const READ_TIME: Duration = Duration::from_secs(2);

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
    /// Lines that were not JSON, or longer than [`MAX_LINE`] (skipped).
    pub bad_lines: usize,
    /// Where the next read starts.
    pub cursor: LogCursor,
    /// The read stopped at its deadline with more to read.
    pub unfinished: bool,
}

/// Reads the usage written to `path` since `cursor`, for at most
/// [`READ_TIME`]; `record` names the response and its usage of the lines
/// that report one.
pub fn read_usage_log(
    path: &Path,
    cursor: &LogCursor,
    record: impl Fn(&Value) -> Option<(String, Usage)>,
) -> std::io::Result<LogRead> {
    read_usage_log_until(path, cursor, record, Instant::now() + READ_TIME)
}

/// [`read_usage_log`], stopping at `deadline` (at the end of a line) with
/// [`LogRead::unfinished`] set when there is more to read.
pub fn read_usage_log_until(
    path: &Path,
    cursor: &LogCursor,
    record: impl Fn(&Value) -> Option<(String, Usage)>,
    deadline: Instant,
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
    let mut read = LogRead::default();
    let tail = read_tail(path, cursor.offset, deadline, |line| match line {
        // Read again, still skipping the ids seen.
        TailLine::Restarted => {}
        TailLine::Line(line) => count_line(line, &mut cursor, &mut read, &record),
        TailLine::TooLong => read.bad_lines += 1,
    })?;
    cursor.offset = tail.offset;
    read.unfinished = tail.unfinished;
    read.cursor = cursor;
    Ok(read)
}

fn count_line(
    line: &[u8],
    cursor: &mut LogCursor,
    read: &mut LogRead,
    record: &impl Fn(&Value) -> Option<(String, Usage)>,
) {
    if line.iter().all(u8::is_ascii_whitespace) {
        return;
    }
    let Ok(line) = serde_json::from_slice::<Value>(line) else {
        read.bad_lines += 1;
        return;
    };
    let Some((id, usage)) = record(&line) else {
        return;
    };
    if cursor.recent.contains(&id) {
        return;
    }
    let sum = &mut read.usage;
    sum.input = sum.input.saturating_add(usage.input);
    sum.output = sum.output.saturating_add(usage.output);
    sum.cache_write = sum.cache_write.saturating_add(usage.cache_write);
    sum.cache_read = sum.cache_read.saturating_add(usage.cache_read);
    read.responses += 1;
    cursor.recent.push_back(id);
    if cursor.recent.len() > RECENT_IDS {
        cursor.recent.pop_front();
    }
}

/// One line of [`read_tail`].
pub(crate) enum TailLine<'a> {
    /// The file is shorter than the offset given (truncated or replaced):
    /// it is read from its start. Comes before any line.
    Restarted,
    /// A complete line, its newline included.
    Line(&'a [u8]),
    /// A line over [`MAX_LINE`], skipped.
    TooLong,
}

/// Where a [`read_tail`] stopped.
pub(crate) struct Tail {
    /// The end of the last complete line read: where the next read starts.
    pub offset: u64,
    /// It stopped at its deadline with more to read.
    pub unfinished: bool,
}

/// Reads the complete lines of the JSON-lines log `path` (a host's
/// transcript, chat file or rollout file) from `offset`, handing each to
/// `each`, until the file's end (a partial last line, still being
/// written, waits for the next read) or `deadline` (at a line's end).
/// Only a regular file is read: a FIFO or a device is refused before it
/// is opened, as opening a FIFO blocks. A file now shorter than `offset`
/// was truncated or replaced: it is read from its start, after
/// [`TailLine::Restarted`]. Lines are read one at a time in bounded memory.
pub(crate) fn read_tail(
    path: &Path,
    offset: u64,
    deadline: Instant,
    mut each: impl FnMut(TailLine<'_>),
) -> std::io::Result<Tail> {
    if !std::fs::metadata(path)?.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    let file = File::open(path)?;
    let len = file.metadata()?.len();
    let mut offset = offset;
    if offset > len {
        offset = 0;
        each(TailLine::Restarted);
    }
    let mut reader = BufReader::with_capacity(64 * 1024, file);
    reader.seek(SeekFrom::Start(offset))?;
    let mut line = Vec::new();
    loop {
        line.clear();
        let (consumed, complete, too_long) = read_line(&mut reader, &mut line)?;
        if !complete {
            return Ok(Tail {
                offset,
                unfinished: false,
            });
        }
        offset += consumed as u64;
        each(if too_long {
            TailLine::TooLong
        } else {
            TailLine::Line(&line)
        });
        if Instant::now() >= deadline {
            return Ok(Tail {
                offset,
                unfinished: offset < len,
            });
        }
    }
}

/// Reads up to and including the next `\n` into `line`, keeping at most
/// [`MAX_LINE`] bytes. Returns the bytes consumed, whether a newline ended
/// the line, and whether it was cut (then `line` is empty).
fn read_line(
    reader: &mut impl BufRead,
    line: &mut Vec<u8>,
) -> std::io::Result<(usize, bool, bool)> {
    let mut consumed = 0;
    let mut too_long = false;
    loop {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            return Ok((consumed, false, too_long));
        }
        let (chunk, done) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (&buf[..=i], true),
            None => (buf, false),
        };
        if !too_long {
            if line.len() + chunk.len() > MAX_LINE {
                too_long = true;
                line.clear();
            } else {
                line.extend_from_slice(chunk);
            }
        }
        let n = chunk.len();
        consumed += n;
        reader.consume(n);
        if done {
            return Ok((consumed, true, too_long));
        }
    }
}

/// What a host's log is, for [`count_new_usage`]: the mark holding the
/// cursor, the words a note names the file with, and how a line reports a
/// response.
pub(crate) struct UsageLog {
    pub mark: &'static str,
    pub label: &'static str,
    pub record: fn(&Value) -> Option<(String, Usage)>,
}

/// Counts the responses `event`'s `transcript_path` gained since the
/// cursor stored under `log.mark`, towards the session's goal, and moves
/// the cursor, all in `tx`. A missing path, an unreadable file or bad
/// lines are notes, never errors: a hook does not fail on them.
pub(crate) fn count_new_usage(
    tx: &crate::store::SessionTx<'_>,
    notes: &mut Vec<String>,
    event: &Value,
    log: &UsageLog,
    now_ms: i64,
) -> crate::error::Result<()> {
    let Some(path) = event.get("transcript_path").and_then(Value::as_str) else {
        notes.push("event has no transcript_path; usage not counted".into());
        return Ok(());
    };
    count_log_usage(tx, notes, path, log.mark, log, now_ms)
}

/// [`count_new_usage`] of the log at `path`, its cursor stored under
/// `mark` (a host may keep several logs for one session: one per
/// subagent).
pub(crate) fn count_log_usage(
    tx: &crate::store::SessionTx<'_>,
    notes: &mut Vec<String>,
    path: &str,
    mark: &str,
    log: &UsageLog,
    now_ms: i64,
) -> crate::error::Result<()> {
    let cursor: LogCursor = tx
        .mark(mark)?
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or_default();
    let read = match read_usage_log(Path::new(path), &cursor, log.record) {
        Ok(read) => read,
        Err(e) => {
            notes.push(format!(
                "cannot read the {} {path}: {e}; usage not counted",
                log.label
            ));
            return Ok(());
        }
    };
    if read.bad_lines > 0 {
        notes.push(format!(
            "skipped {} {} lines that are not JSON or over 8 MiB",
            read.bad_lines, log.label
        ));
    }
    if read.responses > 0 {
        tx.goal_call(
            crate::store::GoalCall::Op(&crate::goal::GoalOp::Usage(read.usage)),
            crate::todo::Actor::Agent,
            &mut crate::store::Caller::default(),
            now_ms,
        )?;
    }
    let text = serde_json::to_string(&read.cursor).expect("a cursor serializes");
    tx.set_mark(mark, &text, now_ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A line naming response `id` with `input` tokens.
    fn record(line: &Value) -> Option<(String, Usage)> {
        let id = line.get("id")?.as_str()?.to_owned();
        let input = line.get("input")?.as_u64()?;
        Some((
            id,
            Usage {
                input,
                ..Usage::default()
            },
        ))
    }

    fn line(id: &str, input: u64) -> String {
        serde_json::json!({"id": id, "input": input}).to_string()
    }

    #[test]
    fn a_fifo_or_a_device_is_refused_before_it_is_opened() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("log.fifo");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(made.is_ok_and(|s| s.success()));
        for path in [fifo.as_path(), Path::new("/dev/zero")] {
            let error = read_usage_log(path, &LogCursor::default(), record).unwrap_err();
            assert_eq!(error.to_string(), "not a regular file");
        }
    }

    #[test]
    fn sums_saturate() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log.jsonl");
        let text = format!("{}\n{}\n", line("a", u64::MAX), line("b", 2));
        std::fs::write(&path, text).unwrap();
        let read = read_usage_log(&path, &LogCursor::default(), record).unwrap();
        assert_eq!((read.usage.input, read.responses), (u64::MAX, 2));
    }

    #[test]
    fn a_long_line_is_skipped_and_a_read_past_its_deadline_goes_on_next_time() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log.jsonl");
        let long = format!("{{\"id\": \"{}\"}}", "x".repeat(MAX_LINE));
        let text = [line("a", 1), long, line("b", 10), line("c", 100)].join("\n") + "\n";
        std::fs::write(&path, text).unwrap();
        // A deadline already past: one line per read, each counted once.
        let mut cursor = LogCursor::default();
        let mut reads = Vec::new();
        loop {
            let read = read_usage_log_until(&path, &cursor, record, Instant::now()).unwrap();
            reads.push((read.usage.input, read.bad_lines));
            cursor = read.cursor;
            if !read.unfinished {
                break;
            }
        }
        assert_eq!(reads, [(1, 0), (0, 1), (10, 0), (100, 0)]);
        let again = read_usage_log(&path, &cursor, record).unwrap();
        assert_eq!((again.usage.input, again.responses), (0, 0));
    }
}
