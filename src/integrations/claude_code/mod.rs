//! Claude Code hooks (DESIGN.md §9): one hook event as JSON on stdin, the reply
//! as JSON on stdout. The session is the event's `session_id`.
//!
//! Every event first records the session as the one Claude Code runs in
//! its directory (a goal queued there is adopted by a new session), then
//! counts the token usage written to the transcripts since the last event
//! (the session's and its subagents'), so every response is counted once,
//! by the end of the session at the latest.
//!
//! - `SessionStart`: after `compact` or `resume`, the goal-mode context (or
//!   the bare `<todo_context>` without an active goal) as additional
//!   context, so the todos survive compaction; after `clear`, the goal and
//!   the list carry over from the cleared session, then the same context.
//! - `UserPromptSubmit`: the eager-todo reminder on the first prompt, a
//!   pending todo-error reminder, and the goal-mode context when the goal or
//!   the list changed since it was last injected.
//! - `PreToolUse` on `Bash`: refuses the agent's shell commands that run
//!   goalkeeper's user-only commands ([`guard`]).
//! - `Stop`: continues an active goal (`{"decision": "block"}`), delivers
//!   the budget-limit wrap-up once, or reminds about open todos (no live
//!   goal) up to `todo.reminders.max` times until the list changes. After
//!   the wrap-up, or once the goal is paused, nothing asks for more work.
//! - `SubagentStop`, `PreCompact`, `SessionEnd`: usage only (`SessionEnd`
//!   of a `/clear` also remembers the session the next one continues).
//!
//! A hook must never break the agent: malformed input, an unknown event, a
//! missing transcript or a storage error print nothing on stdout, exit 0,
//! and explain themselves on stderr.

mod guard;
mod transcript;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

pub use guard::user_only_command;
pub use transcript::{
    Cursor, FileCursor, MAX_LINE, READ_TIME, TranscriptRead, read_all, read_all_until,
    subagent_files,
};

use super::hook_event::HookEvent;
use super::host_session::{self, Host};
use crate::SessionId;
use crate::error::Result;
use crate::goal::continuation::progress_mark;
use crate::prompt::Injector;
use crate::store::{SessionTx, StopOutcome, Store};

/// What the hook prints: JSON for stdout (if any) and notes for stderr.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HookReply {
    /// The reply to print on stdout, if any.
    pub stdout: Option<Value>,
    /// Problems and explanations, one per line, for stderr.
    pub notes: Vec<String>,
}

/// Marks remembered per session between hook runs.
const CONTEXT_MARK: &str = "claude-code.context";
const EAGER_MARK: &str = "claude-code.eager";
const REMINDER_MARK: &str = "claude-code.reminders";
const TRANSCRIPT_MARK: &str = "claude-code.transcript";
const TURN_MARK: &str = "claude-code.turn-goal";

/// The tools as the model sees them in Claude Code.
pub const TOOL_NAMES: [&str; 2] = ["mcp__goalkeeper__todo", "mcp__goalkeeper__goal"];

/// How long `Stop` waits for Claude Code to write the turn's last response
/// to the transcript before counting without it (the next event counts it).
const STOP_WAIT: Duration = Duration::from_millis(1500);

/// Handles one hook event. Never fails: every problem becomes a note and
/// an empty reply.
pub fn handle(store: &mut Store, injector: &Injector, input: &str, now_ms: i64) -> HookReply {
    handle_within(store, injector, input, now_ms, READ_TIME)
}

/// [`handle`], reading the transcripts for at most `read_time` (what is
/// left is counted by the next event).
pub fn handle_within(
    store: &mut Store,
    injector: &Injector,
    input: &str,
    now_ms: i64,
    read_time: Duration,
) -> HookReply {
    let event = match HookEvent::parse(input) {
        Ok(event) => event,
        Err(reply) => return reply,
    };
    if event.name == "PreToolUse" {
        // The guard reads nothing stored: it answers even when the store
        // is unusable, and costs no transaction.
        return HookReply {
            stdout: guard::pre_tool_use(&event.json),
            notes: Vec::new(),
        };
    }
    if event.name == "Stop" {
        // Outside the transaction: the wait holds no lock.
        wait_for_last_response(&event.json);
    }
    // The whole event is one transaction: it commits only when every step
    // succeeded, and a failure anywhere leaves nothing half-applied. Two
    // hooks of one session run one after the other, so a transcript's
    // usage is counted once.
    event.in_tx(store, |tx, notes| {
        Hook {
            tx,
            injector,
            now_ms,
            read_time,
            notes,
        }
        .run(&event.name, &event.json)
    })
}

struct Hook<'a, 't> {
    tx: &'a SessionTx<'t>,
    injector: &'a Injector,
    now_ms: i64,
    /// How long counting may read the transcripts.
    read_time: Duration,
    notes: &'a mut Vec<String>,
}

impl Hook<'_, '_> {
    fn run(&mut self, name: &str, event: &Value) -> Result<Option<Value>> {
        let dir = event.get("cwd").and_then(Value::as_str).map(PathBuf::from);
        let mut previous = None;
        if let Some(dir) = &dir {
            let recorded = host_session::record_in(self.tx, Host::ClaudeCode, dir, self.now_ms)?;
            if let Some(adopted) = recorded.adopted {
                self.notes
                    .push(format!("adopted the queued goal: {}", adopted.text()));
            }
            previous = recorded.previous;
        }
        let source = event.get("source").and_then(Value::as_str).unwrap_or("");
        if name == "SessionStart" && source == "clear" {
            // Before counting: the new session's transcript is empty.
            if let Some(dir) = &dir {
                self.carry_over(dir, previous)?;
            }
        }
        self.count_usage(event)?;
        match name {
            "SessionStart" => self.session_start(source),
            "UserPromptSubmit" => self.user_prompt_submit(),
            "Stop" => self.stop(),
            "SessionEnd" => {
                if event.get("reason").and_then(Value::as_str) == Some("clear")
                    && let Some(dir) = &dir
                {
                    let session = self.tx.session().as_str().to_owned();
                    self.tx
                        .set_pointer(&cleared_key(dir), &session, self.now_ms)?;
                }
                Ok(None)
            }
            "SubagentStop" | "PreCompact" => Ok(None),
            other => {
                self.notes
                    .push(format!("hook event {other:?} is not handled; ignored"));
                Ok(None)
            }
        }
    }

    /// `/clear` moved the client to this new session: the goal and the
    /// list of the session it cleared come along, and the MCP server
    /// started for that session follows.
    fn carry_over(&mut self, dir: &Path, previous: Option<SessionId>) -> Result<()> {
        let from = match self.tx.take_pointer(&cleared_key(dir))? {
            Some(id) => SessionId::parse(&id).ok(),
            None => previous,
        };
        let Some(from) = from.filter(|f| f != self.tx.session()) else {
            return Ok(());
        };
        host_session::record_successor_in(self.tx, Host::ClaudeCode, &from, self.now_ms)?;
        if let Some(goal) = self.tx.carry_from(&from, self.now_ms)? {
            self.notes
                .push(format!("carried goal #{} over from {from}", goal.id));
        }
        Ok(())
    }

    fn tools(&self) -> Vec<String> {
        // Claude Code reaches the tools through the MCP server; the hook
        // cannot see which are enabled, so both are assumed active.
        super::TOOL_NAMES.map(str::to_owned).to_vec()
    }

    fn session_start(&mut self, source: &str) -> Result<Option<Value>> {
        if !matches!(source, "compact" | "resume" | "clear") {
            return Ok(None);
        }
        // A resumed conversation replays what was injected before: when
        // the state is what was last injected, the model has it already
        // (after a compaction, the compact start injected it again).
        if source == "resume" && self.tx.mark(CONTEXT_MARK)? == Some(self.state_mark()?) {
            return Ok(None);
        }
        let context = match self.goal_mode_context()? {
            Some(text) => Some(text),
            None => {
                let (list, _) = self.tx.todo_list()?;
                self.injector
                    .todo_context_message(&list, &self.tools(), self.now_ms)?
                    .ok()
                    .map(|m| m.content)
            }
        };
        self.remember_context()?;
        Ok(context.map(|text| additional_context("SessionStart", &text)))
    }

    fn user_prompt_submit(&mut self) -> Result<Option<Value>> {
        self.tx.begin_turn(TURN_MARK, self.now_ms)?;
        let added = self.tx.on_prompt(self.injector, EAGER_MARK, self.now_ms)?;
        self.notes.extend(added.notes);
        let mut parts = added.parts;
        let mark = self.state_mark()?;
        if self.tx.mark(CONTEXT_MARK)?.as_deref() != Some(&mark)
            && let Some(context) = self.goal_mode_context()?
        {
            parts.push(context);
            self.tx.set_mark(CONTEXT_MARK, &mark, self.now_ms)?;
        }
        if parts.is_empty() {
            return Ok(None);
        }
        Ok(Some(additional_context(
            "UserPromptSubmit",
            &parts.join("\n\n"),
        )))
    }

    fn stop(&mut self) -> Result<Option<Value>> {
        let tools = self.tools();
        let outcome = self
            .tx
            .on_stop(self.injector, &tools, REMINDER_MARK, self.now_ms)?;
        Ok(match outcome {
            StopOutcome::Continue(message) | StopOutcome::Remind(message) => {
                Some(json!({"decision": "block", "reason": message.content}))
            }
            // For the user (the model never reads a systemMessage):
            // how to go on from inside Claude Code.
            StopOutcome::Paused { goal, .. } => Some(json!({"systemMessage": format!(
                "goalkeeper paused goal #{goal}: the last continuations made no progress (no change to the todo list or the goal). Resume it with /goal resume once there is a way forward."
            )})),
            StopOutcome::Nothing => None,
        })
    }

    /// Counts the usage written to the transcripts (the session's and its
    /// subagents') since the last event, in this event's transaction.
    fn count_usage(&mut self, event: &Value) -> Result<()> {
        let Some(path) = event.get("transcript_path").and_then(Value::as_str) else {
            return Ok(());
        };
        let path = PathBuf::from(path);
        let extra: Vec<PathBuf> = event
            .get("agent_transcript_path")
            .and_then(Value::as_str)
            .map(PathBuf::from)
            .into_iter()
            .collect();
        let mut cursor = self
            .tx
            .mark(TRANSCRIPT_MARK)?
            .as_deref()
            .map(Cursor::parse)
            .unwrap_or_default();
        let read = read_all_until(&path, &extra, &mut cursor, Instant::now() + self.read_time);
        if read.bad_lines > 0 {
            self.notes.push(format!(
                "skipped {} unreadable transcript lines",
                read.bad_lines
            ));
        }
        for problem in read.problems {
            self.notes.push(format!("{problem}; usage not counted"));
        }
        self.tx.count_usage(read.usage, TURN_MARK, self.now_ms)?;
        self.tx
            .set_mark(TRANSCRIPT_MARK, &cursor.to_text(), self.now_ms)
    }

    fn goal_mode_context(&mut self) -> Result<Option<String>> {
        let tools = self.tools();
        Ok(self
            .tx
            .goal_mode_context(self.injector, &tools, self.now_ms)?
            .ok()
            .map(|m| m.content))
    }

    /// What the injected context depends on: the list's version and the
    /// goal's identity and revision.
    fn state_mark(&mut self) -> Result<String> {
        let version = self.tx.todo_version()?;
        Ok(progress_mark(version, self.tx.goal()?.as_ref()))
    }

    fn remember_context(&mut self) -> Result<()> {
        let mark = self.state_mark()?;
        self.tx.set_mark(CONTEXT_MARK, &mark, self.now_ms)
    }
}

/// The pointer key under which the hooks record the Claude Code session
/// last seen in a project directory (see [`host_session`]).
pub fn session_pointer(cwd: &str) -> String {
    host_session::last_session_key(Host::ClaudeCode, Path::new(cwd))
}

/// The pointer naming the session a `/clear` in `dir` just ended.
fn cleared_key(dir: &Path) -> String {
    format!("claude-code:cleared:{}", host_session::dir_key(dir))
}

/// At `Stop`, waits (at most [`STOP_WAIT`]) until the transcript holds the
/// turn's last response, which Claude Code may write after starting the
/// hook; what still is not there is counted by the next event.
fn wait_for_last_response(event: &Value) {
    let (Some(path), Some(text)) = (
        event.get("transcript_path").and_then(Value::as_str),
        event
            .get("last_assistant_message")
            .and_then(Value::as_str)
            .filter(|t| !t.is_empty()),
    ) else {
        return;
    };
    let needle = serde_json::to_string(text).expect("a string serializes");
    let deadline = Instant::now() + STOP_WAIT;
    while !tail_contains(Path::new(path), needle.as_bytes()) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Whether the last 64 KiB of `path` hold `needle` (true for anything but
/// a regular file, which is never waited for).
fn tail_contains(path: &Path, needle: &[u8]) -> bool {
    use std::io::{Read, Seek, SeekFrom};
    const TAIL: u64 = 64 * 1024;
    let Ok(meta) = std::fs::metadata(path) else {
        return false;
    };
    if !meta.is_file() {
        return true;
    }
    let Ok(mut file) = std::fs::File::open(path) else {
        return false;
    };
    let start = meta.len().saturating_sub(TAIL);
    let mut bytes = Vec::new();
    if file.seek(SeekFrom::Start(start)).is_err() || file.read_to_end(&mut bytes).is_err() {
        return false;
    }
    bytes.windows(needle.len().max(1)).any(|w| w == needle)
}

fn additional_context(event: &str, text: &str) -> Value {
    json!({"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}})
}
