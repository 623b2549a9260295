//! The report `goalkeeper verify` prints for the model (and the person)
//! that ran it: each check passed or failed, how it ended, how long it
//! took, and the end of a failing one's output, in about 4 KB whatever the
//! checks printed. A check's output is text from a program the agent can
//! edit: it is read as UTF-8 (invalid bytes replaced), terminal escape
//! sequences are dropped, what a carriage return overwrote is dropped as a
//! terminal would, other control characters become spaces, and each of
//! its lines is indented, so no line of it can pass for a line of
//! goalkeeper's (the evidence record a hook reads is the first line of
//! verify's output).

use std::fmt::Write;

use super::{Exit, Scope, verify_command};
use crate::sanitize::one_line;

/// The most bytes a report takes.
pub const REPORT_BYTES: usize = 4096;

/// The most characters of a command a report line shows.
const COMMAND_SHOWN: usize = 200;

/// The most left-out files a report names.
const LEFT_OUT_SHOWN: usize = 5;

/// The most files changed by the checks a report names.
const CHANGED_SHOWN: usize = 10;

/// How each line of a check's output starts in the report.
pub const OUTPUT_INDENT: &str = "    | ";

/// One check run by `verify`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ran {
    /// The command.
    pub command: String,
    /// How it ended.
    pub exit: Exit,
    /// How long it ran, in milliseconds.
    pub ms: u64,
    /// The end of its output (stdout and stderr as they came), as bytes.
    pub tail: Vec<u8>,
    /// How many bytes it wrote in all.
    pub output_bytes: u64,
    /// Processes it left running, which were stopped.
    pub left_behind: bool,
}

/// Where the run's evidence went.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Recorded {
    /// Into the session's log.
    Stored,
    /// Nowhere yet: the store could not be written (the reason), so the
    /// record line above waits for a host's hook.
    ForHook(String),
    /// Nowhere: the checks changed the files as they ran, so the run
    /// proves nothing (and verify prints no record line).
    Withheld,
}

/// What one verify run reports.
#[derive(Clone, Debug)]
pub struct Report<'a> {
    /// Whose checks ran.
    pub scope: &'a Scope,
    /// Where they ran.
    pub dir: &'a str,
    /// The fingerprint of the files as the run started.
    pub fingerprint: &'a str,
    /// How many entries the fingerprint covers.
    pub files: usize,
    /// The files and links the directory holds that the `.gitignore`
    /// rules leave out of the fingerprint, by name.
    pub left_out: &'a [String],
    /// The checks, in the order they ran.
    pub ran: &'a [Ran],
    /// The files the checks changed as they ran, by path.
    pub changed: &'a [String],
    /// Where the evidence went.
    pub recorded: &'a Recorded,
}

impl Report<'_> {
    /// True when every check passed and left the files as they were.
    pub fn passed(&self) -> bool {
        self.changed.is_empty() && self.ran.iter().all(|r| r.exit.passed())
    }

    /// The report's text, at most [`REPORT_BYTES`] bytes.
    pub fn render(&self) -> String {
        let failed = self.ran.iter().filter(|r| !r.exit.passed()).count();
        let whose = match self.scope {
            Scope::Goal => "the goal's checks".to_owned(),
            Scope::Task(task) => format!("the check of task \"{}\"", shown(task)),
        };
        let mut head = format!(
            "goalkeeper verify: {whose} in {} (files {}):\n",
            shown(self.dir),
            self.fingerprint
        );
        head.push_str(&self.coverage());
        let mut lines: Vec<String> = self
            .ran
            .iter()
            .map(|r| {
                let mut line = format!(
                    "{} `{}` {}",
                    if r.exit.passed() { "PASS" } else { "FAIL" },
                    shown(&r.command),
                    seconds(r.ms)
                );
                if !r.exit.passed() {
                    let _ = write!(line, ", {}", r.exit.describe());
                }
                if r.left_behind {
                    line.push_str("; it left processes running, which were stopped");
                }
                line
            })
            .collect();
        let tail = if !self.changed.is_empty() {
            format!(
                "The checks changed the files as they ran: {}. The run proves nothing until a run of the checks leaves the files as they are, so it is not recorded: have the checks write outside this directory, or into files the `.gitignore` rules leave out, then run `{}` again.",
                named(self.changed, CHANGED_SHOWN),
                verify_command(self.scope)
            )
        } else if failed == 0 {
            format!(
                "Every check passed on the files as they are now. {}",
                self.recorded_sentence()
            )
        } else {
            format!(
                "{failed} of {} failed. {} Fix what fails and run `{}` again; until every check passes on the files as they are, the gate refuses to call the work done.",
                self.ran.len(),
                self.recorded_sentence(),
                verify_command(self.scope)
            )
        };
        // What is left for the failing checks' output, shared among them.
        let fixed = head.len() + lines.iter().map(|l| l.len() + 1).sum::<usize>() + tail.len();
        let spare = REPORT_BYTES.saturating_sub(fixed + 64);
        let share = spare / failed.max(1);
        for (line, ran) in lines.iter_mut().zip(self.ran) {
            if ran.exit.passed() {
                continue;
            }
            let output = output_tail(&ran.tail, share);
            if output.is_empty() {
                line.push_str("; it printed nothing");
                continue;
            }
            let cut = ran.output_bytes > ran.tail.len() as u64 || output.len() < ran.tail.len();
            let _ = write!(
                line,
                "; {}:\n{output}",
                if cut {
                    "the end of its output"
                } else {
                    "its output"
                }
            );
        }
        for line in lines {
            head.push_str(&line);
            head.push('\n');
        }
        head.push_str(&tail);
        head
    }

    /// What the fingerprint leaves out, when it leaves out everything or
    /// files the directory itself holds: lines ending the head, or nothing.
    fn coverage(&self) -> String {
        let mut text = String::new();
        if self.files == 0 {
            text.push_str("The fingerprint covers no file: the `.gitignore` rules that hold here leave out everything, so no edit makes a run stale. Fix those rules (git reads them from the root of the work tree down), or run verify where the project's files are.\n");
        }
        if !self.left_out.is_empty() {
            let (count, it) = match self.left_out.len() {
                1 => ("1 file".to_owned(), "it"),
                n => (format!("{n} files"), "them"),
            };
            let _ = writeln!(
                text,
                "The `.gitignore` rules leave out of the fingerprint {count} this directory holds (an edit to {it} makes no run stale): {}.",
                named(self.left_out, LEFT_OUT_SHOWN),
            );
        }
        text
    }

    fn recorded_sentence(&self) -> String {
        match self.recorded {
            Recorded::Stored => "The run is recorded in the session's log.".to_owned(),
            Recorded::Withheld => "It is not recorded.".to_owned(),
            Recorded::ForHook(why) => format!(
                "The session's log cannot be written from here ({}); the record on the first line is for goalkeeper's hook to store.",
                one_line(why)
            ),
        }
    }
}

/// The first `shown` of `paths` in backquotes, then how many more.
fn named(paths: &[String], shown_at_most: usize) -> String {
    let mut text = paths
        .iter()
        .take(shown_at_most)
        .map(|p| format!("`{}`", shown(p)))
        .collect::<Vec<_>>()
        .join(", ");
    let more = paths.len().saturating_sub(shown_at_most);
    if more > 0 {
        let _ = write!(text, " and {more} more");
    }
    text
}

/// `12.3 s`.
fn seconds(ms: u64) -> String {
    format!("{}.{} s", ms / 1000, ms % 1000 / 100)
}

/// Text fit for one line of the report: sanitized, cut to
/// [`COMMAND_SHOWN`] characters.
fn shown(text: &str) -> String {
    let line = one_line(text);
    match line.char_indices().nth(COMMAND_SHOWN) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line.into_owned(),
    }
}

/// The end of a check's output as report lines, each indented by
/// [`OUTPUT_INDENT`], in at most `budget` bytes (whole lines, the last
/// ones; a line longer than the budget keeps its end).
pub fn output_tail(bytes: &[u8], budget: usize) -> String {
    let text = plain_text(bytes);
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let mut kept: Vec<String> = Vec::new();
    let mut used = 0;
    for line in lines.iter().rev() {
        let room = budget.saturating_sub(used + OUTPUT_INDENT.len() + 1);
        if room == 0 {
            break;
        }
        let line = line.trim_end();
        let shown = if line.len() <= room {
            line.to_owned()
        } else {
            if !kept.is_empty() {
                break;
            }
            // One long line (a check that prints without newlines): its end.
            let start = (line.len() - room + 1..line.len())
                .find(|&i| line.is_char_boundary(i))
                .unwrap_or(line.len());
            format!("…{}", &line[start..])
        };
        used += OUTPUT_INDENT.len() + shown.len() + 1;
        kept.push(shown);
    }
    kept.reverse();
    let mut out = String::new();
    for (i, line) in kept.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(OUTPUT_INDENT);
        out.push_str(line);
    }
    out
}

/// A program's output as plain text: UTF-8 with invalid bytes replaced,
/// terminal escape sequences (CSI, OSC and the two-byte ones) dropped, a
/// line's text before its last carriage return dropped (a progress bar
/// redrawn in place), and every other control character but the line feed
/// and the tab made a space; then [`one_line`]'s rule for what reorders
/// text on screen.
pub fn plain_text(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => match chars.next() {
                // CSI: parameters and intermediates up to a final byte.
                Some('[') => {
                    for c in chars.by_ref() {
                        if ('\u{40}'..='\u{7e}').contains(&c) {
                            break;
                        }
                    }
                }
                // OSC, DCS, SOS, PM, APC: up to BEL or ST (ESC \).
                Some(']' | 'P' | 'X' | '^' | '_') => {
                    while let Some(c) = chars.next() {
                        if c == '\u{7}' {
                            break;
                        }
                        if c == '\u{1b}' && chars.peek() == Some(&'\\') {
                            chars.next();
                            break;
                        }
                    }
                }
                _ => {}
            },
            '\r' if chars.peek() == Some(&'\n') => {}
            '\r' => {
                let start = out.rfind('\n').map_or(0, |i| i + 1);
                out.truncate(start);
            }
            '\n' | '\t' => out.push(c),
            c if c.is_control() || crate::sanitize::is_unsafe(c) => out.push(' '),
            c => out.push(c),
        }
    }
    out
}
