//! Checks (DESIGN.md §13): shell commands a person sets on the goal or on a
//! task, which must pass for the goal to be met or the task done. Pure:
//! what a check is ([`command`]), how a run of one ended ([`Exit`]), where
//! a check stands on the files as they are now ([`CheckState`], from the
//! runs the store kept), the gate's refusal ([`refusal`]) and the report
//! `goalkeeper verify` prints ([`report`]).
//!
//! goalkeeper runs a check only in `goalkeeper verify`, which the agent
//! runs through its host's shell tool, so the host's sandbox and approval
//! rules apply to what the check executes; never from a hook or the MCP
//! server.

mod evidence;
pub mod report;
mod state;

pub use evidence::{CheckRun, Evidence, RunBy};
pub use state::{CheckState, Checked, Exit, RunSummary, Scope, state};

use std::sync::OnceLock;

use crate::sanitize::one_line;

/// The longest check, in characters (after trimming).
pub const MAX_CHECK_CHARS: usize = 2_000;

/// The most checks a goal carries.
pub const MAX_GOAL_CHECKS: usize = 20;

/// Trims and checks a check: a non-empty line of shell of at most
/// [`MAX_CHECK_CHARS`] characters, without line breaks or other control
/// characters (it is shown on one line, in prompts and in the list's
/// Markdown).
pub fn command(raw: &str) -> Result<String, String> {
    let text = raw.trim();
    if text.is_empty() {
        return Err(
            "the check is empty; give the shell command that must pass, such as `cargo test`"
                .into(),
        );
    }
    let chars = text.chars().count();
    if chars > MAX_CHECK_CHARS {
        return Err(format!(
            "the check is {chars} characters; the limit is {MAX_CHECK_CHARS}: put a longer script in a file and check that, such as `sh scripts/check.sh`"
        ));
    }
    if text.chars().any(char::is_control) {
        return Err(
            "the check holds a line break or another control character; a check is one line of shell: put a longer script in a file and check that, such as `sh scripts/check.sh`"
                .into(),
        );
    }
    Ok(text.to_owned())
}

/// `TEXT` quoted for a POSIX shell when it needs it: as it is when it is
/// made of safe characters only, else in single quotes.
pub fn shell_quote(text: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "-_./:@%+=,".contains(c);
    if !text.is_empty() && text.chars().all(safe) {
        return text.to_owned();
    }
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// The word the agent's shell runs this goalkeeper by, once decided.
static PROGRAM: OnceLock<String> = OnceLock::new();

/// How [`program`] is decided, when the binary says how.
static DECIDE_PROGRAM: OnceLock<fn() -> String> = OnceLock::new();

/// Has [`program`] decided by `decide` (the binary's rule, DESIGN.md
/// §9.1), asked once, on first use: a message that names no command costs
/// nothing. Without it (the library, its tests), the word is `goalkeeper`.
pub fn name_program_by(decide: fn() -> String) {
    let _ = DECIDE_PROGRAM.set(decide);
}

/// The word that runs this goalkeeper in the agent's shell, as every
/// message that tells the model or a person to run goalkeeper names it:
/// `goalkeeper`, or the path of a package's binary that the shell does
/// not find by name (DESIGN.md §9.1).
pub fn program() -> &'static str {
    PROGRAM.get_or_init(|| {
        DECIDE_PROGRAM
            .get()
            .map_or_else(|| "goalkeeper".to_owned(), |d| d())
    })
}

/// The command a model or a person runs to run the checks of `scope`.
pub fn verify_command(scope: &Scope) -> String {
    match scope {
        Scope::Goal => format!("{} verify", program()),
        Scope::Task(task) => format!("{} verify --task {}", program(), shell_quote(task)),
    }
}

/// Where a goal's or a task's checks stand, as the gate and the views
/// read them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Proof {
    /// Each check and where it stands.
    pub checked: Vec<Checked>,
    /// Why the files could not be read, when they could not (every check
    /// then stands as its last run left it, and none passes).
    pub tree_error: Option<String>,
}

/// The checks of `scope` in `proof` as numbered lines under a heading that
/// says how they are run and what they gate: what `goal` and `goal check
/// list` print. One line each, safe for a terminal.
pub fn list(proof: &Proof, scope: &Scope, now_ms: i64) -> String {
    let gated = match scope {
        Scope::Goal => "`complete`",
        Scope::Task(_) => "`done`",
    };
    let mut text = format!(
        "Checks (`{}` runs them; an agent's {gated} needs each to pass on the files as they are now):",
        verify_command(scope)
    );
    for (i, c) in proof.checked.iter().enumerate() {
        text.push_str(&format!(
            "\n{}. `{}`: {}",
            i + 1,
            one_line(&c.command),
            c.state.describe(now_ms)
        ));
    }
    if let Some(error) = &proof.tree_error {
        text.push_str(&format!("\nThe files cannot be read: {}", one_line(error)));
    }
    text
}

/// The tasks' checks in `checked` as lines under a heading that says how
/// they are run and what they gate: what a `view` of a list with checks
/// ends with. One line each, safe for a terminal.
pub fn task_list(checked: &[Checked], tree_error: Option<&str>, now_ms: i64) -> String {
    let mut text = format!(
        "Task checks (`{} --task TASK` runs one; an agent's `done` of the task needs it to pass on the files as they are now):",
        verify_command(&Scope::Goal)
    );
    for c in checked {
        text.push_str(&format!("\n- {}", c.describe(now_ms)));
    }
    if let Some(error) = tree_error {
        text.push_str(&format!("\nThe files cannot be read: {}", one_line(error)));
    }
    text
}

/// Why the gate refuses an agent's `complete` of the goal or `done` of
/// tasks: each check in `unproven` (missing, failing or stale) with where
/// it stands, and how to run them. `None` when every check passed on the
/// files as they are now. `tree_error` says why the files could not be
/// read, when they could not.
pub fn refusal(
    what: &str,
    checked: &[Checked],
    tree_error: Option<&str>,
    now_ms: i64,
) -> Option<String> {
    let unproven: Vec<&Checked> = checked.iter().filter(|c| !c.state.is_passing()).collect();
    if unproven.is_empty() {
        return None;
    }
    let mut scopes: Vec<&Scope> = Vec::new();
    for c in &unproven {
        if !scopes.contains(&&c.scope) {
            scopes.push(&c.scope);
        }
    }
    let parts: Vec<String> = unproven.iter().map(|c| c.describe(now_ms)).collect();
    let runs: Vec<String> = scopes
        .iter()
        .map(|s| format!("`{}`", verify_command(s)))
        .collect();
    let tree = tree_error.map_or_else(String::new, |e| format!(" (the files cannot be read: {e})"));
    Some(format!(
        "{what} is refused until its checks pass on the files as they are now{tree}: {}. Run {} in your shell: it runs the checks and records the result; fix what fails, then try again",
        parts.join("; "),
        runs.join(" and ")
    ))
}

#[cfg(test)]
mod tests;
