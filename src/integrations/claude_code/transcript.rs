//! Token usage from Claude Code transcripts (JSON lines): the session's
//! own file and its subagents' (`<session>/subagents/agent-*.jsonl`).
//!
//! Each file is read from where the last read stopped, line by line, in
//! bounded memory whatever its size: a line longer than [`MAX_LINE`](crate::integrations::usage_log::MAX_LINE) is
//! skipped as unreadable, and a partial last line (still being written) is
//! left for the next read. Only regular files are read (a FIFO or a device
//! is refused before it is opened, so nothing blocks). Each response is
//! counted once: Claude Code writes one line per content block, every line
//! carrying the same message id and usage; a line without `message.id` is
//! keyed by its `requestId`, else its `uuid`. Sums saturate.
//!
//! A forked session's transcript (`--fork-session`) starts with a copy of
//! the history it was forked from, each copied response naming the
//! session that made it in `requestSessionId`; those were counted in that
//! session, so only the responses a file's own session made are counted.
//! The read also counts the main file's tool calls (Claude Code's own
//! goal tools aside), which end a run of Stop-hook blocks for Claude Code
//! ([`super::block_cap`]).
//!
//! A read stops at a deadline ([`READ_TIME`](crate::integrations::usage_log::READ_TIME) by default), at the end of a
//! line: the cursor keeps its place and the next event reads on. A
//! transcript of gigabytes (a long session's, first seen by goalkeeper)
//! is then counted over a few events, each inside the hook's wait, instead
//! of by an event that never finishes in time and so never moves the
//! cursor.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::goal::Usage;
use crate::integrations::usage_log::{TailLine, read_tail};

/// How many recent response keys a file's cursor remembers (the lines of
/// one response are written together).
const RECENT_KEYS: usize = 32;

/// How far each transcript file has been read.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cursor {
    /// Per file path.
    #[serde(default)]
    pub files: BTreeMap<String, FileCursor>,
}

/// How far one file has been read.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileCursor {
    /// Bytes consumed: the end of the last complete line read.
    pub offset: u64,
    /// The keys of the last responses counted, newest last.
    #[serde(default)]
    pub recent: Vec<String>,
}

impl Cursor {
    /// A cursor from its stored text. A cursor of the earlier one-file
    /// shape (`{"path", "offset", "last_message"}`) carries over.
    pub fn parse(text: &str) -> Cursor {
        #[derive(Deserialize)]
        struct OneFile {
            path: String,
            offset: u64,
            last_message: Option<String>,
        }
        if let Ok(cursor) = serde_json::from_str::<Cursor>(text)
            && !cursor.files.is_empty()
        {
            return cursor;
        }
        match serde_json::from_str::<OneFile>(text) {
            Ok(old) => {
                let mut cursor = Cursor::default();
                cursor.files.insert(
                    old.path,
                    FileCursor {
                        offset: old.offset,
                        recent: old.last_message.into_iter().collect(),
                    },
                );
                cursor
            }
            Err(_) => Cursor::default(),
        }
    }

    /// The cursor as stored text.
    pub fn to_text(&self) -> String {
        serde_json::to_string(self).expect("a cursor serializes")
    }
}

/// What a read found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TranscriptRead {
    /// Tokens of the responses not counted before.
    pub usage: Usage,
    /// Responses counted.
    pub responses: usize,
    /// Lines that were too long, or looked like responses but were not
    /// JSON (skipped).
    pub bad_lines: usize,
    /// The text of the last assistant text block read in the main file.
    pub last_text: Option<String>,
    /// Tool calls read in the main file, Claude Code's own goal tools
    /// aside.
    pub tool_calls: usize,
    /// Files that could not be read, with the reason.
    pub problems: Vec<String>,
    /// The read stopped at its deadline with more to read: the next read
    /// goes on from the cursor.
    pub unfinished: bool,
}

/// The subagent transcripts of the session whose transcript is `main`.
pub fn subagent_files(main: &Path) -> Vec<PathBuf> {
    let dir = main.with_extension("").join("subagents");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    files
}

/// Reads what was written to `main` and `extra` files since `cursor`,
/// advancing it, for at most
/// [`READ_TIME`](crate::integrations::usage_log::READ_TIME). A file that cannot be read is
/// a problem, not an error: the others are still counted.
#[cfg(test)]
pub fn read_all(main: &Path, extra: &[PathBuf], cursor: &mut Cursor) -> TranscriptRead {
    let read_time = crate::integrations::usage_log::READ_TIME;
    read_all_until(main, extra, cursor, Instant::now() + read_time)
}

/// [`read_all`], stopping at `deadline` (at the end of a line) with
/// [`TranscriptRead::unfinished`] set when there is more to read.
pub fn read_all_until(
    main: &Path,
    extra: &[PathBuf],
    cursor: &mut Cursor,
    deadline: Instant,
) -> TranscriptRead {
    let mut read = TranscriptRead::default();
    let mut paths = vec![main.to_owned()];
    for path in subagent_files(main)
        .into_iter()
        .chain(extra.iter().cloned())
    {
        if !paths.contains(&path) {
            paths.push(path);
        }
    }
    for (i, path) in paths.iter().enumerate() {
        let key = path.display().to_string();
        let mut file_cursor = cursor.files.get(&key).cloned().unwrap_or_default();
        if read.unfinished {
            break;
        }
        match read_file(path, &mut file_cursor, &mut read, i == 0, deadline) {
            Ok(()) => {
                cursor.files.insert(key, file_cursor);
            }
            // Not written yet: nothing to count.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => read.problems.push(format!("cannot read {key}: {e}")),
        }
    }
    read
}

/// Reads one file from `cursor`, adding to `read`.
fn read_file(
    path: &Path,
    cursor: &mut FileCursor,
    read: &mut TranscriptRead,
    is_main: bool,
    deadline: Instant,
) -> std::io::Result<()> {
    // Checked before opening: opening a FIFO for reading blocks.
    let tail = read_tail(path, cursor.offset, deadline, |line| match line {
        TailLine::Restarted => *cursor = FileCursor::default(),
        TailLine::Line(line) => count_line(line, cursor, read, is_main),
        TailLine::TooLong => read.bad_lines += 1,
    })?;
    cursor.offset = tail.offset;
    read.unfinished = tail.unfinished;
    Ok(())
}

fn count_line(line: &[u8], cursor: &mut FileCursor, read: &mut TranscriptRead, is_main: bool) {
    let text = line.trim_ascii();
    if text.is_empty() {
        return;
    }
    // Most lines are not responses: skip them without parsing.
    if !contains(text, b"\"assistant\"") {
        return;
    }
    let Ok(entry) = serde_json::from_slice::<Value>(text) else {
        read.bad_lines += 1;
        return;
    };
    if entry.get("type").and_then(Value::as_str) != Some("assistant") {
        return;
    }
    if made_elsewhere(&entry) {
        return;
    }
    let Some(message) = entry.get("message") else {
        return;
    };
    if is_main {
        read.tool_calls += tool_calls(message);
    }
    if is_main
        && let Some(text) = message
            .get("content")
            .and_then(Value::as_array)
            .and_then(|blocks| {
                blocks
                    .iter()
                    .rev()
                    .find_map(|b| (b.get("type")? == "text").then(|| b.get("text")?.as_str())?)
            })
    {
        read.last_text = Some(text.to_owned());
    }
    let Some(usage) = message.get("usage") else {
        return;
    };
    let key = [message.get("id"), entry.get("requestId"), entry.get("uuid")]
        .into_iter()
        .flatten()
        .find_map(Value::as_str)
        .map(str::to_owned);
    let Some(key) = key else {
        // Nothing identifies it; counted, since skipping loses tokens.
        add(read, usage);
        return;
    };
    if cursor.recent.contains(&key) {
        return;
    }
    cursor.recent.push(key);
    if cursor.recent.len() > RECENT_KEYS {
        cursor.recent.remove(0);
    }
    add(read, usage);
}

/// Whether the response was made by another session than the file's:
/// copied into a forked session's transcript, it names the session it was
/// made in (`requestSessionId`), which counted it.
fn made_elsewhere(entry: &Value) -> bool {
    let made_by = entry.get("requestSessionId").and_then(Value::as_str);
    let file_of = entry.get("sessionId").and_then(Value::as_str);
    made_by.is_some_and(|by| Some(by) != file_of)
}

/// Claude Code's own goal tools: a response calling only these does not
/// end a run of Stop-hook blocks (the CLI keeps counting through them).
const HOST_GOAL_TOOLS: [&str; 4] = ["SetGoal", "ProposeGoal", "PauseGoal", "GetGoal"];

/// The `tool_use` blocks of a response line, Claude Code's goal tools
/// aside.
fn tool_calls(message: &Value) -> usize {
    let Some(blocks) = message.get("content").and_then(Value::as_array) else {
        return 0;
    };
    blocks
        .iter()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_use"))
        .filter(|b| {
            let name = b.get("name").and_then(Value::as_str).unwrap_or("");
            !HOST_GOAL_TOOLS.contains(&name)
        })
        .count()
}

fn add(read: &mut TranscriptRead, usage: &Value) {
    let count = |key: &str| usage.get(key).and_then(Value::as_u64).unwrap_or(0);
    let u = &mut read.usage;
    u.input = u.input.saturating_add(count("input_tokens"));
    u.output = u.output.saturating_add(count("output_tokens"));
    u.cache_write = u
        .cache_write
        .saturating_add(count("cache_creation_input_tokens"));
    u.cache_read = u
        .cache_read
        .saturating_add(count("cache_read_input_tokens"));
    read.responses += 1;
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs::File;
    use std::io::Write;

    fn assistant(id: &str, input: u64, output: u64, write: u64, read: u64) -> String {
        format!(
            r#"{{"type":"assistant","uuid":"u-{id}","requestId":"req-{id}","message":{{"id":"{id}","role":"assistant","content":[{{"type":"text","text":"said {id}"}}],"usage":{{"input_tokens":{input},"output_tokens":{output},"cache_creation_input_tokens":{write},"cache_read_input_tokens":{read}}}}}}}"#
        )
    }

    fn usage(input: u64, output: u64, cache_write: u64, cache_read: u64) -> Usage {
        Usage {
            input,
            output,
            cache_write,
            cache_read,
        }
    }

    #[test]
    fn counts_each_response_once_and_resumes_where_it_stopped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let mut file = File::create(&path).unwrap();
        writeln!(
            file,
            r#"{{"type":"user","message":{{"role":"user","content":"hi"}}}}"#
        )
        .unwrap();
        // One response written as two content-block lines.
        writeln!(file, "{}", assistant("m1", 10, 5, 100, 1000)).unwrap();
        writeln!(file, "{}", assistant("m1", 10, 5, 100, 1000)).unwrap();
        writeln!(file, "not json \"assistant\"").unwrap();
        // A partial line, still being written.
        write!(file, "{}", &assistant("m2", 1, 1, 1, 1)[..20]).unwrap();
        file.flush().unwrap();

        let mut cursor = Cursor::default();
        let first = read_all(&path, &[], &mut cursor);
        assert_eq!(first.usage, usage(10, 5, 100, 1000));
        assert_eq!((first.responses, first.bad_lines), (1, 1));
        assert_eq!(first.last_text.as_deref(), Some("said m1"));

        // Nothing new: nothing counted again, through a stored cursor.
        let mut cursor = Cursor::parse(&cursor.to_text());
        assert_eq!(read_all(&path, &[], &mut cursor).usage, Usage::default());

        let rest = &assistant("m2", 1, 1, 1, 1)[20..];
        writeln!(file, "{rest}").unwrap();
        writeln!(file, "{}", assistant("m2", 1, 1, 1, 1)).unwrap();
        let second = read_all(&path, &[], &mut cursor);
        assert_eq!((second.usage, second.responses), (usage(1, 1, 1, 1), 1));
    }

    #[test]
    fn tool_calls_of_the_main_file_are_seen_except_the_hosts_goal_tools() {
        let dir = tempfile::tempdir().unwrap();
        let main = dir.path().join("s1.jsonl");
        let call = |id: &str, name: &str| {
            format!(
                r#"{{"type":"assistant","message":{{"id":"{id}","content":[{{"type":"tool_use","id":"t-{id}","name":"{name}","input":{{}}}}],"usage":{{"input_tokens":1}}}}}}"#
            )
        };
        // The text and the call of one response, written as two lines.
        let lines = [
            assistant("m1", 1, 0, 0, 0),
            call("m1", "mcp__goalkeeper__todo"),
            call("m2", "GetGoal"),
        ];
        std::fs::write(&main, lines.join("\n") + "\n").unwrap();
        let sub = dir.path().join("s1/subagents");
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::write(sub.join("agent-a.jsonl"), call("s1", "Bash") + "\n").unwrap();
        let mut cursor = Cursor::default();
        let read = read_all(&main, &[], &mut cursor);
        assert_eq!((read.tool_calls, read.responses), (1, 3));
        // Read once: the next read sees none.
        assert_eq!(read_all(&main, &[], &mut cursor).tool_calls, 0);
        std::fs::write(&main, call("m3", "GetGoal") + "\n").unwrap();
        assert_eq!(read_all(&main, &[], &mut Cursor::default()).tool_calls, 0);
    }

    #[test]
    fn a_forks_copied_history_is_not_counted_again() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("fork.jsonl");
        // Copied from session "parent" (which made and counted them), then
        // the fork's own response.
        let copied = |id: &str, by: &str| {
            format!(
                r#"{{"type":"assistant","sessionId":"fork","requestSessionId":"{by}","message":{{"id":"{id}","content":[{{"type":"tool_use","id":"t","name":"Bash","input":{{}}}}],"usage":{{"input_tokens":100}}}}}}"#
            )
        };
        let own = r#"{"type":"assistant","sessionId":"fork","requestSessionId":null,"message":{"id":"m3","usage":{"input_tokens":7}}}"#;
        let same = r#"{"type":"assistant","sessionId":"fork","requestSessionId":"fork","message":{"id":"m4","usage":{"input_tokens":5}}}"#;
        let lines = [
            copied("m1", "parent"),
            copied("m2", "parent"),
            own.into(),
            same.into(),
        ];
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
        let read = read_all(&path, &[], &mut Cursor::default());
        assert_eq!((read.usage.input, read.responses), (12, 2));
        assert_eq!(
            read.tool_calls, 0,
            "the copied calls were not this session's"
        );
    }

    #[test]
    fn a_response_without_an_id_is_counted_once_by_its_request_id() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let line = r#"{"type":"assistant","uuid":"u1","requestId":"req-1","message":{"id":null,"usage":{"input_tokens":7,"output_tokens":3}}}"#;
        let other = r#"{"type":"assistant","uuid":"u2","message":{"usage":{"input_tokens":1,"output_tokens":1}}}"#;
        std::fs::write(&path, format!("{line}\n{line}\n{other}\n")).unwrap();
        let read = read_all(&path, &[], &mut Cursor::default());
        assert_eq!(
            (read.usage.input, read.usage.output, read.responses),
            (8, 4, 2)
        );
    }

    #[test]
    fn subagent_transcripts_are_counted_too() {
        let dir = tempfile::tempdir().unwrap();
        let main = dir.path().join("s1.jsonl");
        std::fs::write(&main, format!("{}\n", assistant("m1", 10, 0, 0, 0))).unwrap();
        let sub = dir.path().join("s1").join("subagents");
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::write(
            sub.join("agent-a.jsonl"),
            format!("{}\n", assistant("sub1", 5, 0, 0, 0)),
        )
        .unwrap();
        let mut cursor = Cursor::default();
        assert_eq!(read_all(&main, &[], &mut cursor).usage.input, 15);
        assert_eq!(read_all(&main, &[], &mut cursor).usage.input, 0);
    }

    #[test]
    fn a_new_or_shorter_file_starts_over_and_an_old_cursor_carries_over() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        std::fs::write(&path, format!("{}\n", assistant("m1", 3, 0, 0, 0))).unwrap();
        let key = path.display().to_string();
        let stale = format!(r#"{{"path":{key:?},"offset":10000,"last_message":"old"}}"#);
        let mut cursor = Cursor::parse(&stale);
        assert_eq!(cursor.files[&key].offset, 10_000);
        assert_eq!(read_all(&path, &[], &mut cursor).usage.input, 3);
    }

    #[test]
    fn sums_saturate() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let max = u64::MAX;
        std::fs::write(
            &path,
            format!(
                "{}\n{}\n",
                assistant("a", max, 0, 0, 0),
                assistant("b", max, 0, 0, 0)
            ),
        )
        .unwrap();
        assert_eq!(
            read_all(&path, &[], &mut Cursor::default()).usage.input,
            max
        );
    }

    #[test]
    fn a_fifo_or_a_device_is_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo.jsonl");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        let mut cursor = Cursor::default();
        if made.is_ok_and(|s| s.success()) {
            let read = read_all(&fifo, &[], &mut cursor);
            assert_eq!(read.problems.len(), 1);
            assert!(
                read.problems[0].contains("not a regular file"),
                "{:?}",
                read.problems
            );
        }
        let read = read_all(Path::new("/dev/zero"), &[], &mut cursor);
        assert!(
            read.problems[0].contains("not a regular file"),
            "{:?}",
            read.problems
        );
        assert!(cursor.files.is_empty());
    }

    #[test]
    fn a_read_past_its_deadline_stops_at_a_line_end_and_the_next_goes_on() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let sub = dir.path().join("t/subagents/agent-1.jsonl");
        std::fs::create_dir_all(sub.parent().unwrap()).unwrap();
        let lines: Vec<String> = (0..5)
            .map(|i| assistant(&format!("m{i}"), 10, 1, 0, 0))
            .collect();
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
        std::fs::write(&sub, assistant("s1", 100, 0, 0, 0) + "\n").unwrap();
        // A deadline already past: one line per read, each counted once,
        // the subagent's file only once the main one is done.
        let mut cursor = Cursor::default();
        let mut inputs = Vec::new();
        loop {
            let read = read_all_until(&path, &[], &mut cursor, Instant::now());
            inputs.push(read.usage.input);
            if !read.unfinished {
                break;
            }
            let offset = cursor.files[&path.display().to_string()].offset as usize;
            assert_eq!(std::fs::read(&path).unwrap()[offset - 1], b'\n');
        }
        assert_eq!(inputs, [10, 10, 10, 10, 110]);
        assert_eq!(read_all(&path, &[], &mut cursor).usage, Usage::default());
    }

    #[test]
    fn an_endless_line_is_skipped_in_bounded_memory() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let mut file = std::io::BufWriter::new(File::create(&path).unwrap());
        let block = vec![b'x'; 1024 * 1024];
        for _ in 0..(crate::integrations::usage_log::MAX_LINE / block.len() + 2) {
            file.write_all(&block).unwrap();
        }
        writeln!(file).unwrap();
        writeln!(file, "{}", assistant("m1", 4, 0, 0, 0)).unwrap();
        drop(file);
        let read = read_all(&path, &[], &mut Cursor::default());
        assert_eq!((read.bad_lines, read.usage.input), (1, 4));
    }

    #[test]
    fn a_file_not_written_yet_is_nothing_to_count() {
        let mut cursor = Cursor::default();
        let dir = tempfile::tempdir().unwrap();
        let read = read_all(&dir.path().join("t.jsonl"), &[], &mut cursor);
        assert_eq!(read, TranscriptRead::default());
        assert!(cursor.files.is_empty());
    }
}
