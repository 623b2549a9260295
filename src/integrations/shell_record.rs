//! A `goalkeeper verify` run that reaches the store through a host's hook
//! (DESIGN.md §13): where the agent's shell cannot write the database (a
//! sandbox), verify prints its record as the first line of its output,
//! and the hook that fires after the host's shell call reads it from the
//! host's own record of that call, which the model does not write. Each
//! adapter reads its host's wire format into a [`ShellCall`]; the rule of
//! what is taken ([`crate::verify::record::from_shell_call`]) and how it is
//! stored ([`crate::store::SessionTx::record_from_hook`]) is one for every
//! host.
//!
//! A call that is no verify call passes without a word. A verify call
//! whose record does not check out (a compound command, a cut or forged
//! line, an exit status that disagrees, another session's record) is
//! dropped with a note on stderr; the host goes on either way.

use crate::error::{Error, Result};
use crate::integrations::hook_event::Hook;
use crate::verify::record::{self, ShellCall};

/// Takes the record of `call` into the hook event's transaction, when it
/// is a verify call whose record checks out.
pub(crate) fn take(hook: &mut Hook<'_, '_>, call: ShellCall<'_>) -> Result<()> {
    if !is_verify_call(call) {
        return Ok(());
    }
    let exe = std::env::current_exe()
        .ok()
        .map(|p| p.to_string_lossy().into_owned());
    let mut programs = vec!["goalkeeper"];
    programs.extend(exe.as_deref());
    let found = match record::from_shell_call(call, &programs) {
        Ok(found) => found,
        Err(reason) => {
            hook.notes.push(drop_note(&reason));
            return Ok(());
        }
    };
    match hook.tx.record_from_hook(&found, hook.now_ms) {
        Ok(_) => Ok(()),
        Err(Error::Rejected(reason)) => {
            hook.notes.push(drop_note(&reason));
            Ok(())
        }
        Err(e) => Err(e),
    }
}

/// The note of a record dropped for `reason`.
fn drop_note(reason: &str) -> String {
    format!(
        "the verify run's record of this shell call was not stored: {}",
        crate::sanitize::one_line(reason)
    )
}

/// Whether `call` is, or passes for, a run of `goalkeeper verify`: its
/// output starts with a record, or its command names verify. Any other
/// shell call is none of goalkeeper's business.
pub(crate) fn is_verify_call(call: ShellCall<'_>) -> bool {
    call.output.starts_with(record::MARKER)
        || (call.command.contains("goalkeeper") && call.command.contains("verify"))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::check::{CheckRun, Evidence, Exit, RunBy, Scope};
    use crate::goal::GoalOp;
    use crate::integrations::hook_event::HookReply;
    use crate::integrations::hook_fixture::{NOW, event, event_dir};
    use crate::prompt::Injector;
    use crate::store::GoalCall;
    use crate::todo::Actor;
    use crate::{SessionId, Settings, Store};

    const SESSION: &str = "s-1";
    const CHECK: &str = "cargo test";

    fn call<'a>(command: &'a str, output: &'a str) -> ShellCall<'a> {
        ShellCall {
            command,
            output,
            exit: Some(0),
            call: None,
        }
    }

    #[test]
    fn only_a_call_that_names_verify_or_prints_a_record_is_looked_at() {
        assert!(!is_verify_call(call("cargo test", "ok")));
        assert!(!is_verify_call(call("goalkeeper todo view", "")));
        assert!(is_verify_call(call("goalkeeper verify", "")));
        assert!(is_verify_call(call("/usr/bin/goalkeeper  verify", "")));
        assert!(is_verify_call(call("echo hi", "goalkeeper-evidence 1 {}")));
    }

    /// A session whose goal has the one check.
    fn store() -> Store {
        let mut store = Store::open_in_memory().unwrap();
        let op = GoalOp::Set {
            objective: "Ship it".into(),
            budget: None,
            checks: vec![CHECK.into()],
        };
        store
            .write(&SessionId::parse(SESSION).unwrap(), |tx| {
                tx.goal_call(
                    GoalCall::Op(&op),
                    Actor::User,
                    &mut crate::store::Caller::default(),
                    NOW,
                )
            })
            .unwrap();
        store
    }

    /// verify's output for a run of the check ending with `code`, by the
    /// host's call `call`.
    fn output(code: i32, call: Option<&str>) -> String {
        let evidence = Evidence {
            run: "0123456789abcdef0123456789abcdef".into(),
            scope: Scope::Goal,
            dir: event_dir(),
            fingerprint: "fedcba9876543210fedcba9876543210".into(),
            started_ms: NOW,
            by: RunBy {
                actor: "agent".into(),
                agent: None,
                host: None,
            },
            checks: vec![CheckRun {
                command: CHECK.into(),
                exit: Exit::Code(code),
                ms: 5,
            }],
        };
        format!(
            "{}\ngoalkeeper verify: the report\n",
            record::to_line(SESSION, &evidence, call)
        )
    }

    /// The verify runs stored for the session.
    fn runs(store: &Store) -> usize {
        store
            .read(&SessionId::parse(SESSION).unwrap(), |tx| {
                tx.event_log(1_000)
            })
            .unwrap()
            .iter()
            .filter(|e| e.op.as_deref() == Some("verify"))
            .count()
    }

    fn injector() -> Injector {
        Injector::from_settings(Settings::default()).unwrap()
    }

    fn claude_code(store: &mut Store, input: &str) -> HookReply {
        let run = crate::integrations::claude_code::Run {
            now_ms: NOW,
            read_time: std::time::Duration::ZERO,
            block_cap: None,
            wiring: crate::integrations::host_session::Wiring::Config,
            read: |_| crate::integrations::claude_code::Reading::Unknown("not read here".into()),
        };
        crate::integrations::claude_code::handle_within(
            store,
            &crate::store::Caller::default(),
            &injector(),
            input,
            &run,
        )
    }

    fn claude_event(name: &str, command: &str, fields: serde_json::Value) -> String {
        let mut extra = json!({"tool_name": "Bash", "tool_input": {"command": command}});
        extra
            .as_object_mut()
            .unwrap()
            .extend(fields.as_object().unwrap().clone());
        event(name, SESSION, extra)
    }

    const DROPPED: &str = "the verify run's record of this shell call was not stored: ";

    /// Claude Code: a plain verify call's record is stored once, from
    /// `PostToolUse` (exit 0) or `PostToolUseFailure` (`Exit code N`);
    /// a compound call's record, or one whose exit status disagrees, is
    /// dropped with a note and nothing stored; any other call is ignored.
    #[test]
    fn claude_code_takes_a_plain_verify_calls_record_once() {
        let mut store = store();
        let failed = output(101, None);
        let reply = claude_code(
            &mut store,
            &claude_event(
                "PostToolUseFailure",
                "goalkeeper verify",
                json!({"error": format!("Exit code 1\n{failed}")}),
            ),
        );
        assert_eq!(reply, HookReply::default());
        assert_eq!(runs(&store), 1);
        // The same run again (verify had recorded it): stored once.
        claude_code(
            &mut store,
            &claude_event(
                "PostToolUseFailure",
                "goalkeeper verify",
                json!({"error": format!("Exit code 1\n{failed}")}),
            ),
        );
        assert_eq!(runs(&store), 1);

        let mut store = self::store();
        let passed = output(0, None);
        for (name, command, fields, why) in [
            (
                "PostToolUse",
                "goalkeeper verify && echo more",
                json!({"tool_response": {"stdout": passed}}),
                "the command is not one plain command (`&` outside quotes)",
            ),
            (
                "PostToolUseFailure",
                "goalkeeper verify",
                json!({"error": format!("Exit code 1\n{passed}")}),
                "the call exited with 1, which is not what verify exits with for this record",
            ),
            (
                "PostToolUse",
                "echo ok",
                json!({"tool_response": {"stdout": passed}}),
                "the command is not a plain `goalkeeper verify [--task TASK]`; only such a call's record is taken",
            ),
        ] {
            let reply = claude_code(&mut store, &claude_event(name, command, fields));
            assert_eq!(reply.notes, [format!("{DROPPED}{why}")], "{command}");
            assert_eq!(reply.stdout, None);
        }
        let ignored = claude_code(
            &mut store,
            &claude_event(
                "PostToolUse",
                "cargo build",
                json!({"tool_response": {"stdout": "ok"}}),
            ),
        );
        assert_eq!(ignored, HookReply::default());
        assert_eq!(runs(&store), 0);
        let stored = claude_code(
            &mut store,
            &claude_event(
                "PostToolUse",
                "goalkeeper verify",
                json!({"tool_response": {"stdout": passed}}),
            ),
        );
        assert_eq!(stored, HookReply::default());
        assert_eq!(runs(&store), 1);
    }

    /// Gemini CLI: the exit status is the `Exit Code: N` line of
    /// `llmContent` (none for 0); a call moved to the background is skipped.
    #[test]
    fn gemini_cli_reads_the_exit_status_from_the_models_text() {
        let mut store = store();
        let failed = output(1, None);
        let after_tool = |display: &str, content: &str, background: bool| {
            event(
                "AfterTool",
                SESSION,
                json!({"tool_name": "run_shell_command",
                    "tool_input": {"command": "goalkeeper verify", "is_background": background},
                    "tool_response": {"returnDisplay": display, "llmContent": content}}),
            )
        };
        let injector = injector();
        let handle = |store: &mut Store, input: &str| {
            crate::integrations::gemini_cli::handle(
                store,
                &crate::store::Caller::default(),
                &injector,
                input,
                NOW,
            )
        };
        let reply = handle(&mut store, &after_tool(&failed, "Output: …", false));
        assert_eq!(
            reply.notes,
            [format!(
                "{DROPPED}the call exited with 0, which is not what verify exits with for this record"
            )]
        );
        let skipped = handle(
            &mut store,
            &after_tool(&failed, "Output: …\nExit Code: 1\n", true),
        );
        assert_eq!(skipped, HookReply::default());
        assert_eq!(runs(&store), 0);
        let stored = handle(
            &mut store,
            &after_tool(
                &failed,
                "Output: …\nExit Code: 1\nProcess Group PGID: 7\n",
                false,
            ),
        );
        assert_eq!(stored, HookReply::default());
        assert_eq!(runs(&store), 1);
    }

    /// Codex: the record comes from the rollout file's item of the call,
    /// never from `tool_response`; an item of another command, or no item,
    /// stores nothing.
    #[test]
    fn codex_reads_the_call_from_the_rollout_file() {
        let dir = tempfile::tempdir().unwrap();
        let rollout = dir.path().join("rollout.jsonl");
        let item = |id: &str, command: &str, code: i32, output: &str| {
            json!({"type": "event_msg", "payload": {"type": "item_completed", "item": {
                "type": "CommandExecution", "id": id,
                "command": ["/bin/bash", "-lc", command],
                "aggregated_output": output, "exit_code": code}}})
            .to_string()
        };
        let passed = output(0, Some("call_1"));
        let lines = [
            item("call_1", "goalkeeper verify", 0, &passed),
            item("call_2", "goalkeeper verify && echo", 0, &passed),
        ];
        std::fs::write(&rollout, lines.join("\n") + "\n").unwrap();
        let post = |id: &str| {
            event(
                "PostToolUse",
                SESSION,
                json!({"tool_name": "Bash", "tool_input": {"command": "goalkeeper verify"},
                    "tool_response": passed, "tool_use_id": id,
                    "transcript_path": rollout.display().to_string()}),
            )
        };
        let injector = injector();
        let mut store = store();
        let mut handle = |input: &str| {
            crate::integrations::codex::handle(
                &mut store,
                &crate::store::Caller::default(),
                &injector,
                input,
                NOW,
            )
        };
        let other = handle(&post("call_2"));
        assert_eq!(
            other.notes,
            [
                "the rollout file's record of this shell call ran another command; its verify record was not stored"
            ]
        );
        let none = handle(&post("call_3"));
        assert_eq!(
            none.notes,
            [
                "the rollout file has no record of shell call call_3; its verify record was not stored"
            ]
        );
        // The record names call_1: taken from no other call.
        let stored = handle(&post("call_1"));
        assert!(stored.notes.is_empty(), "{:?}", stored.notes);
        assert_eq!(runs(&store), 1);
    }
}
