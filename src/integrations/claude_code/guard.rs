//! The `PreToolUse` guard on Claude Code's `Bash` tool: the agent may not
//! steer its own goal through the shell. A command that runs one of
//! goalkeeper's user-only commands (replacing, pausing, budgeting or
//! dropping the goal; the user's `todo rm`/`drop`, which really delete or
//! stamp a task as the user's; `todo import`/`undo`; `session rm`) is
//! denied with a reason the model reads. The agent's own steps go through
//! the `todo` and `goal` tools, which enforce the agent's limits.
//!
//! The check reads the command as shell words split at `;`, `&`, `|`,
//! newlines and substitutions, and looks for a word naming goalkeeper
//! (`goalkeeper`, or a path ending in `/goalkeeper`) followed, past its
//! global options, by a user-only command. It is a guard against an
//! agent's ordinary attempts, not a sandbox.

use serde_json::{Value, json};

use super::super::host_session::HostNames;

/// Global options that take a value.
const VALUE_OPTIONS: [&str; 5] = ["--db", "--session", "--session-from", "--config", "--set"];

/// The user-only commands, as (group, command).
const USER_ONLY: [(&str, &str); 10] = [
    ("goal", "set"),
    ("goal", "budget"),
    ("goal", "drop"),
    ("goal", "pause"),
    ("goal", "usage"),
    ("todo", "rm"),
    ("todo", "drop"),
    ("todo", "import"),
    ("todo", "undo"),
    ("session", "rm"),
];

/// The reply to a `PreToolUse` event: a denial for a `Bash` command that
/// runs a user-only goalkeeper command, else nothing. The reason names
/// goalkeeper's tools and command as Claude Code shows them (`names`).
pub(super) fn pre_tool_use(event: &Value, names: &HostNames) -> Option<Value> {
    if event.get("tool_name").and_then(Value::as_str) != Some("Bash") {
        return None;
    }
    let command = event
        .pointer("/tool_input/command")
        .and_then(Value::as_str)?;
    let (group, sub) = user_only_command(command)?;
    let (todo, goal) = (names.todo, names.goal);
    let command = names.goal_command.unwrap_or("/goal");
    let reason = format!(
        "goalkeeper: `goalkeeper {group} {sub}` is for the user only; an agent may not run it. Use the {todo} and {goal} tools for your own changes. If the goal, its budget or the list needs a change only the user can make, say so and ask the user (in Claude Code: {command})."
    );
    Some(json!({"hookSpecificOutput": {
        "hookEventName": "PreToolUse",
        "permissionDecision": "deny",
        "permissionDecisionReason": reason,
    }}))
}

/// The first user-only goalkeeper command `command` runs, as (group,
/// command), if any.
pub fn user_only_command(command: &str) -> Option<(&'static str, &'static str)> {
    for segment in segments(command) {
        let words = words(&segment);
        let mut i = 0;
        while i < words.len() {
            if names_goalkeeper(&words[i])
                && let Some(found) = after_goalkeeper(&words[i + 1..])
            {
                return Some(found);
            }
            i += 1;
        }
    }
    None
}

fn names_goalkeeper(word: &str) -> bool {
    word == "goalkeeper" || word.ends_with("/goalkeeper")
}

/// The user-only command in the words after `goalkeeper`, past its global
/// options.
fn after_goalkeeper(words: &[String]) -> Option<(&'static str, &'static str)> {
    let mut rest = words.iter().map(String::as_str);
    let mut positional = Vec::new();
    while let Some(word) = rest.next() {
        if VALUE_OPTIONS.contains(&word) {
            rest.next();
            continue;
        }
        if word.starts_with('-') {
            continue;
        }
        positional.push(word);
        if positional.len() == 2 {
            break;
        }
    }
    let [group, sub] = positional[..] else {
        return None;
    };
    USER_ONLY
        .iter()
        .find(|(g, s)| *g == group && *s == sub)
        .copied()
}

/// The command split where the shell starts another command.
fn segments(command: &str) -> Vec<String> {
    command
        .split(['\n', ';', '&', '|', '(', ')', '`'])
        .map(|s| s.replace("$(", " "))
        .collect()
}

/// Shell words, with quotes and backslashes removed (no expansion).
fn words(segment: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = segment.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                for q in chars.by_ref() {
                    if q == '\'' {
                        break;
                    }
                    word.push(q);
                }
            }
            '"' => {
                in_word = true;
                while let Some(q) = chars.next() {
                    match q {
                        '"' => break,
                        '\\' => word.extend(chars.next()),
                        _ => word.push(q),
                    }
                }
            }
            '\\' => {
                in_word = true;
                word.extend(chars.next());
            }
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_only_commands_are_found_however_they_are_written() {
        for (command, found) in [
            ("goalkeeper goal budget 99999", ("goal", "budget")),
            (
                "cd x && goalkeeper --session-from claude-code goal set 'New goal'",
                ("goal", "set"),
            ),
            (
                "/usr/local/bin/goalkeeper --db /tmp/x.db goal drop",
                ("goal", "drop"),
            ),
            (
                "echo hi; \"goalkeeper\" --json todo rm --task a",
                ("todo", "rm"),
            ),
            ("x=$(goalkeeper goal pause)", ("goal", "pause")),
            (
                "goalkeeper --set todo.eager=always todo drop --phase P",
                ("todo", "drop"),
            ),
        ] {
            assert_eq!(user_only_command(command), Some(found), "{command}");
        }
    }

    #[test]
    fn the_agents_own_commands_pass() {
        for command in [
            "goalkeeper goal get",
            "goalkeeper goal",
            "goalkeeper todo view",
            "goalkeeper todo apply '{\"op\":\"done\"}'",
            "cargo test",
            "grep -r 'goal budget' src",
            "echo goalkeeper",
            "ls goalkeeper-docs/goal/set",
        ] {
            assert_eq!(user_only_command(command), None, "{command}");
        }
    }

    #[test]
    fn a_denial_names_the_command_and_the_tools() {
        use crate::integrations::host_session::{Host, Wiring};
        let event =
            json!({"tool_name": "Bash", "tool_input": {"command": "goalkeeper goal budget 5"}});
        let config = Host::ClaudeCode.names(Wiring::Config);
        let reply = pre_tool_use(&event, &config).unwrap();
        let out = &reply["hookSpecificOutput"];
        assert_eq!(out["permissionDecision"], "deny");
        let reason = out["permissionDecisionReason"].as_str().unwrap();
        assert!(
            reason.contains("`goalkeeper goal budget` is for the user only"),
            "{reason}"
        );
        assert!(
            reason.contains("Use the mcp__goalkeeper__todo and mcp__goalkeeper__goal tools")
                && reason.ends_with("(in Claude Code: /goal)."),
            "{reason}"
        );
        // As a plugin, Claude Code's names for the plugin's tools and command.
        let plugin = Host::ClaudeCode.names(Wiring::Plugin);
        let reply = pre_tool_use(&event, &plugin).unwrap();
        let reason = reply["hookSpecificOutput"]["permissionDecisionReason"]
            .as_str()
            .unwrap();
        assert!(
            reason.contains("Use the mcp__plugin_goalkeeper_goalkeeper__todo and mcp__plugin_goalkeeper_goalkeeper__goal tools")
                && reason.ends_with("(in Claude Code: /goalkeeper:goal)."),
            "{reason}"
        );
        assert!(!reason.contains("mcp__goalkeeper__"), "{reason}");
        let other =
            json!({"tool_name": "Read", "tool_input": {"command": "goalkeeper goal budget 5"}});
        assert_eq!(pre_tool_use(&other, &config), None);
    }
}
