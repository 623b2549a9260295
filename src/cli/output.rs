//! What the command line prints and reads: stdout and stderr that are
//! safe for a terminal and never fail on a closed pipe, tool results as
//! text or JSON, and a tool call read from stdin.

use std::io::{Read, Write};

use crate::sanitize;
use crate::todo::MAX_CALL_BYTES;
use crate::{Error, ToolResult};

use super::context::{Context, Outcome};

/// Writes a note to stderr, ignoring a closed stderr.
pub(crate) fn note(text: impl std::fmt::Display) {
    write_stderr(format_args!("{text}"));
}

/// Writes one line to stdout, safe for a terminal, ignoring a closed pipe.
pub(crate) fn write_stdout(args: std::fmt::Arguments<'_>) {
    write_stdout_line(&args.to_string());
}

/// [`write_stdout`] of a text already at hand, without copying it first
/// (a whole `<todo_context>`).
pub(crate) fn write_stdout_line(text: &str) {
    let _ = writeln!(std::io::stdout().lock(), "{}", sanitize::terminal(text));
}

/// Writes text to stdout as it is given lines (no newline added), safe for
/// a terminal, ignoring a closed pipe.
pub(crate) fn write_stdout_raw(text: &str) {
    let mut stdout = std::io::stdout().lock();
    let _ = stdout
        .write_all(sanitize::terminal(text).as_bytes())
        .and_then(|()| stdout.flush());
}

/// Writes `goalkeeper: <text>` to stderr, safe for a terminal, ignoring a
/// closed or broken stderr.
pub(crate) fn write_stderr(args: std::fmt::Arguments<'_>) {
    write_stderr_as("goalkeeper", args);
}

/// [`write_stderr`] with another prefix (`goalkeeper mcp`).
pub(crate) fn write_stderr_as(prefix: &str, args: std::fmt::Arguments<'_>) {
    let text = args.to_string();
    let _ = writeln!(
        std::io::stderr().lock(),
        "{prefix}: {}",
        sanitize::terminal(&text)
    );
}

/// JSON text with the characters a terminal must not receive raw (C1
/// controls, DEL, line separators, ...) written as `\uXXXX` escapes: the
/// same data for a JSON reader, nothing a terminal would act on. serde_json
/// already escapes the C0 controls; those other characters can only occur
/// inside strings, where the escape is valid.
fn terminal_json(text: String) -> String {
    if !text.chars().any(sanitize::unsafe_for_terminal) {
        return text;
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if sanitize::unsafe_for_terminal(c) && c != '\n' {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Prints a tool result (its summary, or the whole object with `--json`)
/// and says whether it was a rejection.
///
/// The result is not freed: it may hold a whole list, and the process ends
/// with this command, so freeing it task by task would be work for nothing.
pub(super) fn print_result<D: serde::Serialize>(ctx: &Context, result: ToolResult<D>) -> Outcome {
    if ctx.json {
        print_json(&result);
    } else {
        out!("{}", result.text());
    }
    let outcome = if result.is_error {
        Outcome::Rejected
    } else {
        Outcome::Success
    };
    std::mem::forget(result);
    outcome
}

/// Prints `value` as pretty JSON on stdout.
pub(super) fn print_json(value: &impl serde::Serialize) {
    let text = serde_json::to_string_pretty(value).expect("output serializes");
    out!("{}", terminal_json(text));
}

/// Reads a tool call from stdin, refusing more than the call limit without
/// reading the rest, and text that is not UTF-8.
pub(super) fn read_stdin() -> Result<String, Error> {
    let mut bytes = Vec::new();
    std::io::stdin()
        .lock()
        .take(MAX_CALL_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|source| Error::Io {
            what: "cannot read the call from stdin".into(),
            source,
        })?;
    if bytes.len() > MAX_CALL_BYTES {
        return Err(Error::Usage(format!(
            "the call on stdin is larger than {MAX_CALL_BYTES} bytes (1 MiB); split it into several calls"
        )));
    }
    String::from_utf8(bytes).map_err(|e| {
        Error::Usage(format!(
            "the call on stdin is not UTF-8 text (invalid byte at offset {}); send JSON text",
            e.utf8_error().valid_up_to()
        ))
    })
}
