//! `goalkeeper tour`: a guided goal session on a temporary database. Each
//! step prints the command a user or an agent would run, its output, and
//! the hidden messages goalkeeper would inject. It drives the library the
//! same way the commands do, with default settings and a simulated clock
//! that starts at `$GOALKEEPER_NOW` (or now), so its output is reproducible.

use std::path::PathBuf;

use crate::goal::{GoalOp, Usage};
use crate::prompt::Injector;
use crate::prompt::{Gate, HiddenMessage};
use crate::settings::Settings;
use crate::store::{Caller, GoalCall};
use crate::todo::{Actor, Call};
use crate::turn::{self, Continuation};
use crate::{Error, SessionId, Store};

use super::context::{Context, Outcome};

/// The tour's scratch directory, removed when the tour ends (even on error).
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

struct Tour {
    store: Store,
    caller: Caller,
    injector: Injector,
    session: SessionId,
    now_ms: i64,
    step: usize,
}

pub(crate) fn run(ctx: &Context) -> Result<Outcome, Error> {
    let dir = std::env::temp_dir().join(format!(
        "goalkeeper-tour-{}-{}",
        std::process::id(),
        crate::time::system_now_ms()
    ));
    std::fs::create_dir_all(&dir).map_err(|source| Error::Io {
        what: format!("cannot create {}", dir.display()),
        source,
    })?;
    let scratch = Scratch(dir);
    let mut tour = Tour {
        store: Store::open(scratch.0.join("tour.db"))?,
        caller: Caller::default(),
        injector: Injector::from_settings(Settings::default())?,
        session: SessionId::parse("tour")?,
        now_ms: ctx.now_ms,
        step: 0,
    };
    tour.play()?;
    Ok(Outcome::Success)
}

impl Tour {
    fn play(&mut self) -> Result<(), Error> {
        out!("goalkeeper tour: one goal session from start to finish, on a temporary database.");
        out!("Each step shows a command (run by the user, or by the agent through its tools),");
        out!(
            "what it prints, and the hidden messages goalkeeper injects into the agent's context."
        );

        self.heading("The user sets a goal with a token budget");
        self.goal_user(
            "goal set 'Ship the 1.0 release of the CSV importer' --budget 20000",
            GoalOp::Set {
                objective: "Ship the 1.0 release of the CSV importer".into(),
                budget: Some(20_000),
                checks: Vec::new(),
            },
        )?;

        self.heading("The agent lays out its work as a phased todo list");
        self.todo_agent(
            r#"{"op": "init", "list": [
  {"phase": "Foundation", "items": ["Parse quoted fields", "Handle CRLF line endings"]},
  {"phase": "Hardening", "items": ["Fuzz the parser", "Get sample files from support"]},
  {"phase": "Release", "items": ["Write the changelog", "Tag v1.0"]}]}"#,
        )?;

        self.heading("Every turn, the agent's context carries the goal and its todos");
        self.context()?;

        self.heading("The agent finishes tasks; the next one starts by itself");
        self.todo_agent(r#"{"op": "done", "task": "Parse quoted fields"}"#)?;
        self.todo_agent(r#"{"op": "done", "task": "Handle CRLF line endings"}"#)?;

        self.heading("A task waits on someone else: the agent blocks it with the reason");
        self.todo_agent(
            r#"{"op": "block", "task": "Get sample files from support", "reason": "support is sending anonymized files on Monday"}"#,
        )?;

        self.heading("The host reports token usage after each model turn");
        self.usage(9_000, 2_500, 500, 40_000)?;

        self.heading("The agent stops; the goal is active, so goalkeeper continues it");
        self.continuation()?;

        self.heading("A later turn crosses the budget: the goal becomes budget-limited");
        self.usage(7_000, 1_500, 0, 60_000)?;

        self.heading("The next stop gets the wrap-up steer, exactly once");
        self.continuation()?;
        self.continuation()?;

        self.heading("The user raises the budget; the goal is active again");
        self.goal_user("goal budget 40000", GoalOp::Budget(Some(40_000)))?;

        self.heading("The user pauses over the weekend and resumes; paused time does not count");
        self.goal_user("goal pause", GoalOp::Pause)?;
        self.advance(2 * 24 * 60);
        self.goal_user("goal resume", GoalOp::Resume)?;

        self.heading("The samples arrive: the agent unblocks and finishes the work");
        self.todo_agent(r#"{"op": "unblock", "task": "Get sample files from support"}"#)?;
        self.todo_agent(r#"{"op": "done", "phase": "Hardening"}"#)?;
        self.todo_agent(r#"{"op": "done", "phase": "Release"}"#)?;

        self.heading("The agent verifies the objective and completes the goal");
        self.goal_agent(r#"{"op": "complete"}"#)?;
        self.context()?;

        self.heading("Everything is in the event log");
        self.command("todo log");
        for event in self.store.read(&self.session, |tx| tx.event_log(100))? {
            out!(
                "#{} {} {} {}{}",
                event.id,
                event.actor,
                event.kind.as_str(),
                event.op.as_deref().unwrap_or("?"),
                event
                    .version
                    .map(|v| format!(" -> v{v}"))
                    .unwrap_or_default()
            );
        }
        out!("");
        out!("That was the whole loop. To use it with a real agent, see `goalkeeper mcp`,");
        out!("`goalkeeper hook claude-code` and `goalkeeper install claude-code`.");
        Ok(())
    }

    fn heading(&mut self, title: &str) {
        self.step += 1;
        self.advance(4);
        out!("");
        out!("── {}. {title} ──", self.step);
    }

    /// Moves the simulated clock forward.
    fn advance(&mut self, minutes: i64) {
        self.now_ms += minutes * 60_000;
    }

    fn command(&self, args: &str) {
        out!("$ goalkeeper {args}");
    }

    fn todo_agent(&mut self, json: &str) -> Result<(), Error> {
        let compact: serde_json::Value =
            serde_json::from_str(json).expect("the tour's calls are valid JSON");
        out!("[agent calls the todo tool] {compact}");
        let result = self.store.todo(
            &self.session,
            Call::Json(json),
            Actor::Agent,
            &mut self.caller,
            self.now_ms,
        )?;
        out!("{}", result.text());
        Ok(())
    }

    fn goal_user(&mut self, args: &str, op: GoalOp) -> Result<(), Error> {
        self.command(args);
        let (caller, now_ms) = (&mut self.caller, self.now_ms);
        let result = self.store.write(&self.session, |tx| {
            tx.goal_call(GoalCall::Op(&op), Actor::User, caller, now_ms)
        })?;
        out!("{}", result.text());
        Ok(())
    }

    fn goal_agent(&mut self, json: &str) -> Result<(), Error> {
        out!("[agent calls the goal tool] {json}");
        let (caller, now_ms) = (&mut self.caller, self.now_ms);
        let result = self.store.write(&self.session, |tx| {
            tx.goal_call(GoalCall::Json(json), Actor::Agent, caller, now_ms)
        })?;
        out!("{}", result.text());
        Ok(())
    }

    fn usage(
        &mut self,
        input: u64,
        output: u64,
        cache_write: u64,
        cache_read: u64,
    ) -> Result<(), Error> {
        self.goal_user(
            &format!(
                "goal usage --input {input} --output {output} --cache-write {cache_write} --cache-read {cache_read}"
            ),
            GoalOp::Usage(Usage {
                input,
                output,
                cache_write,
                cache_read,
            }),
        )
    }

    fn tools() -> Vec<String> {
        crate::integrations::TOOL_NAMES.map(str::to_owned).to_vec()
    }

    fn context(&mut self) -> Result<(), Error> {
        self.command("context");
        let (injector, caller, now_ms) = (&self.injector, &self.caller, self.now_ms);
        let message = self.store.write(&self.session, |tx| {
            turn::goal_mode_context(tx, caller, injector, &Tour::tools(), now_ms)
        })?;
        match message {
            Ok(message) => show(&message),
            Err(gate) => nothing(gate),
        }
        Ok(())
    }

    fn continuation(&mut self) -> Result<(), Error> {
        self.command("continuation");
        let (injector, caller, now_ms) = (&self.injector, &self.caller, self.now_ms);
        let next = self.store.write(&self.session, |tx| {
            turn::continuation(tx, caller, injector, &Tour::tools(), now_ms)
        })?;
        match next {
            Continuation::Message(message) => show(&message),
            Continuation::Paused(text) => out!("{text}"),
            Continuation::Closed(gate) => nothing(gate),
        }
        Ok(())
    }
}

fn show(message: &HiddenMessage) {
    out!(
        "[hidden {} message · {}]",
        message.custom_type.as_str(),
        message.source.label
    );
    for line in message.content.lines() {
        if line.is_empty() {
            out!("│");
        } else {
            out!("│ {line}");
        }
    }
}

fn nothing(gate: Gate) {
    out!("(no message: {gate})");
}
