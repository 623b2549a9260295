//! The `PreToolUse` guard on Claude Code's `Bash` tool: an agent's shell
//! never acts as the person (DESIGN.md §14). A command that runs
//! goalkeeper is allowed only when the goalkeeper command acts as the
//! agent (`todo apply`, `goal apply`, `mcp`) or only reads (`todo view`,
//! `goal get`, `context`, help); every other one (the person's `goal
//! set`, `todo done`, `todo release`, `session rm`, ..., a hook's
//! command, and a line goalkeeper cannot read) is denied with a reason
//! the model reads.
//!
//! What a goalkeeper command line does is not known here: the library
//! holds no command-line definition. The caller hands in a [`ReadLine`],
//! which reads the words as the binary's own parser reads them and says
//! whom the command acts as (`cli::acting`), so the guard knows every
//! command, option and spelling the binary knows, and nothing else.
//!
//! [`shell`] reads the shell with the crate's one shell reader
//! (`crate::shell`): the command is split into simple commands at `;`,
//! `&`, `|`, newlines, parentheses, command and process substitutions
//! (also inside double quotes) and here-documents (whose lines may be a
//! script), with quotes and backslashes removed as the shell removes them.
//! A simple command runs goalkeeper when its command word, past
//! assignments (`FOO=1`) and reserved words (`if`, `do`, `!`), is
//! `goalkeeper` or a path ending in `/goalkeeper` (in any case), or when
//! it is a wrapper (`env`, `nice`, `timeout`, ...) whose arguments name
//! one; `sh -c 'LINE'` (any shell), `eval` and `watch` are read again as
//! command lines.
//!
//! What may run goalkeeper without the guard seeing it is denied, whatever
//! it runs: a command word the shell builds (`$(which goalkeeper)`, a
//! backquote, `$X`, `$'...'`) or expands (a glob, a brace pattern); a
//! shell that runs the script on its input (`... | sh`, `sh <<< ...`,
//! `bash <<EOF`, `bash -s`) or a script built as the line runs (`bash
//! <(...)`, `sh -c "$X"`, `source <(...)`, `. /dev/stdin`); `eval` of
//! text the shell builds; `env -S`; `xargs`, `find -exec` or `parallel`
//! running goalkeeper, a shell or a wrapper (they add words of their
//! own). A word the shell expands after the program's name is an unknown
//! value when quoted and refused when not (it may become several words).
//! A script file (`sh script.sh`, `source env.sh`) is not read.
//!
//! It is a guard against an agent's ordinary attempts, not a sandbox: a
//! goalkeeper named in a script file, an alias or function defined
//! elsewhere, another program (`python -c`, `make`) or a copy under
//! another name is not seen.

use serde_json::{Value, json};

use crate::integrations::command_line::{Acts, ReadLine, Reading};
use crate::integrations::host_session::HostNames;
use crate::sanitize::{one_line, quoted_excerpt};
use crate::shell::Word;
use shell::Found;

mod shell;

/// The reply to a `PreToolUse` event: a denial for a `Bash` command that
/// runs a goalkeeper command an agent's shell may not run, else nothing.
pub(super) fn pre_tool_use(event: &Value, read: ReadLine, names: &HostNames) -> Option<Value> {
    if event.get("tool_name").and_then(Value::as_str) != Some("Bash") {
        return None;
    }
    let command = event
        .pointer("/tool_input/command")
        .and_then(Value::as_str)?;
    let refusal = refusal(command, read)?;
    Some(json!({"hookSpecificOutput": {
        "hookEventName": "PreToolUse",
        "permissionDecision": "deny",
        "permissionDecisionReason": refusal.reason(names),
    }}))
}

/// Why a shell command may not run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// It runs `goalkeeper <command>`, which acts as the person.
    Person(String),
    /// It may run goalkeeper unseen: what the simple command `command`
    /// runs cannot be told, `why`.
    Hidden {
        /// The simple command, as the guard read it.
        command: String,
        /// Why what it runs cannot be told.
        why: String,
    },
    /// It runs goalkeeper with the words `line`, and what they do cannot be
    /// told: `why`.
    Unknown {
        /// The goalkeeper command line, as the guard read it.
        line: String,
        /// Why it cannot be told.
        why: String,
    },
}

impl Refusal {
    /// The reason the model reads, naming goalkeeper's tools and command
    /// as the host shows them (`names`: a plugin's differ).
    pub fn reason(&self, names: &HostNames) -> String {
        let tools = format!("the {} and {} tools", names.todo, names.goal);
        let steer = names.goal_command.unwrap_or("/goal");
        match self {
            Refusal::Person(command) => format!(
                "goalkeeper: `goalkeeper {command}` is for the user only; an agent may not run it. \
                 Use {tools} for your own changes. If the goal, its budget or the list needs a change \
                 only the user can make, say so and ask the user (in Claude Code: {steer})."
            ),
            Refusal::Hidden { command, why } => format!(
                "goalkeeper: cannot tell whether `{command}` runs goalkeeper ({why}), so an agent \
                 may not run it. {ALLOWED} Write the command out in full, the program's name a \
                 plain word, and feed no shell a script on its input; or use {tools}. {}",
                ask(steer)
            ),
            Refusal::Unknown { line, why } => format!(
                "goalkeeper: cannot tell what `{line}` would do ({why}), so an agent may not run it. \
                 {ALLOWED} Write it out in full, or use {tools}. {}",
                ask(steer)
            ),
        }
    }
}

/// What an agent's shell may run of goalkeeper, for a refusal.
const ALLOWED: &str = "From the shell an agent may run only the goalkeeper commands that act \
     as the agent (`todo apply`, `goal apply`, `verify`) or only read (`todo view`, `goal get`, \
     `context`).";

/// How to ask the person, in a refusal: `steer` is the host's command.
fn ask(steer: &str) -> String {
    format!(
        "If the goal, its checks or the list need a change only the user can make, say so and \
         ask the user (in Claude Code: {steer})."
    )
}

/// The first command in `command` that an agent's shell may not run, read
/// with `read`: a goalkeeper command that acts as the person or cannot be
/// read, or a command that may run goalkeeper unseen; `None` when every
/// goalkeeper command it runs (if any) acts as the agent or only reads.
pub fn refusal(command: &str, read: ReadLine) -> Option<Refusal> {
    shell::goalkeeper_lines(command)
        .iter()
        .find_map(|found| match found {
            Found::Goalkeeper(words) => judge(words, read),
            Found::Hidden { words, why } => Some(Refusal::Hidden {
                command: cut(words
                    .iter()
                    .map(|w| w.text.as_str())
                    .collect::<Vec<_>>()
                    .join(" ")),
                why: one_line(why).into_owned(),
            }),
        })
}

/// `line` on one line, cut to [`SHOWN_CHARS`].
fn cut(line: String) -> String {
    let line = one_line(&line);
    match line.char_indices().nth(SHOWN_CHARS) {
        Some((at, _)) => format!("{}\u{2026}", &line[..at]),
        None => line.into_owned(),
    }
}

/// The longest goalkeeper line a refusal quotes, in characters.
const SHOWN_CHARS: usize = 80;

fn judge(words: &[Word], read: ReadLine) -> Option<Refusal> {
    let shown = || {
        let mut line = String::from("goalkeeper");
        for word in words {
            line.push(' ');
            line.push_str(&word.text);
        }
        cut(line)
    };
    if let Some(word) = words.iter().find(|w| w.splits) {
        return Some(Refusal::Unknown {
            line: shown(),
            why: format!(
                "the shell expands {} into words not known here",
                quoted_excerpt(&word.text)
            ),
        });
    }
    let args: Vec<String> = words.iter().map(|w| w.text.clone()).collect();
    match read(&args) {
        Reading::Runs {
            acts: Acts::Agent | Acts::Nobody,
            ..
        } => None,
        Reading::Runs {
            command,
            acts: Acts::Person,
        } => Some(Refusal::Person(command)),
        Reading::Unknown(why) => Some(Refusal::Unknown {
            line: shown(),
            why: one_line(&why).chars().take(200).collect(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that knows three commands, for the shell side alone (the
    /// binary's own reader is tested against these spellings in
    /// `cli::acting`).
    fn toy(args: &[String]) -> Reading {
        let words: Vec<&str> = args.iter().map(String::as_str).collect();
        let runs = |command: &str, acts| Reading::Runs {
            command: command.into(),
            acts,
        };
        match words[..] {
            ["goal", "drop"] => runs("goal drop", Acts::Person),
            ["todo", "apply", _] => runs("todo apply", Acts::Agent),
            ["todo", "view"] => runs("todo view", Acts::Nobody),
            _ => Reading::Unknown(format!("the toy reads no {words:?}")),
        }
    }

    #[test]
    fn an_expansion_is_a_value_when_quoted_and_unknown_when_not() {
        assert_eq!(
            refusal("goalkeeper todo apply \"$(cat call.json)\"", toy),
            None
        );
        assert_eq!(refusal("goalkeeper todo apply \"$CALL\"", toy), None);
        for command in [
            "goalkeeper todo apply $CALL",
            "goalkeeper goal $(echo drop)",
            "goalkeeper goal d*",
            "goalkeeper goal {drop,get}",
            "goalkeeper \"$CMD\" drop",
        ] {
            assert!(
                matches!(refusal(command, toy), Some(Refusal::Unknown { .. })),
                "{command}"
            );
        }
    }

    #[test]
    fn a_denial_names_the_command_and_the_tools() {
        use crate::integrations::host_session::{Host, Wiring};
        let config = Host::ClaudeCode.names(Wiring::Config);
        let event = json!({"tool_name": "Bash", "tool_input": {"command": "goalkeeper goal drop"}});
        let reply = pre_tool_use(&event, toy, &config).unwrap();
        let out = &reply["hookSpecificOutput"];
        assert_eq!(out["permissionDecision"], "deny");
        let reason = out["permissionDecisionReason"].as_str().unwrap();
        assert!(
            reason.contains("`goalkeeper goal drop` is for the user only"),
            "{reason}"
        );
        assert!(
            reason.contains("Use the mcp__goalkeeper__todo and mcp__goalkeeper__goal tools")
                && reason.ends_with("(in Claude Code: /goal)."),
            "{reason}"
        );
        // As a plugin, Claude Code's names for the plugin's tools and command.
        let plugin = Host::ClaudeCode.names(Wiring::Plugin);
        let reply = pre_tool_use(&event, toy, &plugin).unwrap();
        let reason = reply["hookSpecificOutput"]["permissionDecisionReason"]
            .as_str()
            .unwrap();
        assert!(
            reason.contains(
                "Use the mcp__plugin_goalkeeper_goalkeeper__todo and mcp__plugin_goalkeeper_goalkeeper__goal tools"
            ) && reason.ends_with("(in Claude Code: /goalkeeper:goal)."),
            "{reason}"
        );
        assert!(!reason.contains("mcp__goalkeeper__"), "{reason}");
        let view = json!({"tool_name": "Bash", "tool_input": {"command": "goalkeeper todo view"}});
        assert_eq!(pre_tool_use(&view, toy, &config), None);
        let other = json!({"tool_name": "Read", "tool_input": {"command": "goalkeeper goal drop"}});
        assert_eq!(pre_tool_use(&other, toy, &config), None);
    }
}
