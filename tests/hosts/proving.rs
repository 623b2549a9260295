//! What the real-host proofs of done share (README "Proving done"): a goal
//! whose one check passes once `state.txt` says `ok`, a script that edits
//! the project between two model calls, as a person or a tool would, and
//! the store's record of the verify runs.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::World;
use crate::mock::{Api, MockModel, Request, Step};

/// The goal's one check.
pub const CHECK: &str = "grep -q ok state.txt";

/// The command the model runs through the host's shell tool.
pub const VERIFY: &str = "goalkeeper verify";

/// What the model reads when `complete` is accepted.
pub const ACCEPTED: &str = "Goal #1 complete";

/// What the model reads when `complete` is refused for the check.
pub const REFUSED: &str = "is refused until its checks pass on the files as they are now";

/// What the model reads when the check passed on files that changed since.
pub const STALE: &str = "but the files changed since";

/// The line of verify's report for the check failing, and passing.
pub const FAILS: &str = "FAIL `grep -q ok state.txt`";
pub const PASSES: &str = "PASS `grep -q ok state.txt`";

/// A script answering the conversation's model calls with `steps` in
/// order (then a short text), which runs `edit` just before it answers
/// with step `at`: the files change between two calls of the model.
pub fn script_editing(
    steps: Vec<Step>,
    at: usize,
    edit: impl FnOnce() + Send + 'static,
) -> impl FnMut(&Request) -> Step + Send + 'static {
    let mut steps = steps.into_iter();
    let mut served = 0;
    let mut edit = Some(edit);
    move |_| {
        if served == at
            && let Some(edit) = edit.take()
        {
            edit();
        }
        served += 1;
        steps
            .next()
            .unwrap_or_else(|| Step::text("Nothing more to do."))
    }
}

/// Writes `text` into `file` of the project at `dir`.
pub fn write(dir: &Path, file: &str, text: &str) -> impl FnOnce() + Send + 'static {
    let path: PathBuf = dir.join(file);
    let text = text.to_owned();
    move || std::fs::write(path, text).expect("write the project's file")
}

/// The first scenario's steps: `complete` before any verify, verify (the
/// check fails), verify again (after the script's edit, before step 2),
/// `complete`, a closing text.
pub fn fix_then_complete(complete: Step, verify: Step) -> Vec<Step> {
    vec![
        complete.clone(),
        verify.clone(),
        verify,
        complete,
        Step::text("Done: the check passes."),
    ]
}

/// The second scenario's steps: verify (the check passes), `complete`
/// (after the script's edit, before step 1: refused as stale), verify,
/// `complete`, a closing text.
pub fn stale_then_complete(complete: Step, verify: Step) -> Vec<Step> {
    vec![
        verify.clone(),
        complete.clone(),
        verify,
        complete,
        Step::text("Done: verified after the edit."),
    ]
}

/// Sets the goal "Ship the parser" with the check for `session`, as a
/// person does (`--session-from HOST` queues it for the host's next
/// session).
pub fn set_goal(world: &World, session_args: &[&str]) {
    let mut args = session_args.to_vec();
    args.extend(["goal", "set", "Ship the parser", "--check", CHECK]);
    world.goalkeeper_ok(&args);
}

/// Each verify run in `session`'s log: how it came in (`verify` itself
/// or a host's `hook`), whether it passed, and who ran it.
pub fn verify_runs(world: &World, session: &str) -> Vec<(String, bool, String)> {
    let log: Value = serde_json::from_str(&world.goalkeeper_ok(&[
        "--session",
        session,
        "--json",
        "todo",
        "log",
    ]))
    .expect("the log is JSON");
    log.as_array()
        .expect("a list of events")
        .iter()
        .filter(|e| e["kind"] == "check" && e["op"] == "verify")
        .map(|e| {
            (
                e["payload"]["via"].as_str().unwrap_or("").to_owned(),
                e["payload"]["passed"] == true,
                e["actor"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect()
}

/// The conversation of each model call's request as the server received
/// it (JSON: Messages' and chat completions' `messages`, Responses'
/// `input`, Gemini's `contents`), so a test finds what reached the model
/// at each step.
pub fn bodies(calls: &[Request]) -> Vec<String> {
    calls
        .iter()
        .map(|r| {
            ["messages", "input", "contents"]
                .iter()
                .find_map(|key| r.body.get(key))
                .unwrap_or(&r.body)
                .to_string()
        })
        .collect()
}

/// Asserts that `needle` first reached the model in call `at`.
pub fn first_seen(bodies: &[String], at: usize, needle: &str) {
    assert!(
        bodies.len() > at,
        "only {} model calls; wanted {needle:?} in call {at}",
        bodies.len()
    );
    assert!(
        bodies[at].contains(needle),
        "call {at} lacks {needle:?}; it ends:\n{}",
        tail(&bodies[at])
    );
    assert!(
        !bodies[at - 1].contains(needle),
        "call {} has {needle:?} already; it ends:\n{}",
        at - 1,
        tail(&bodies[at - 1])
    );
}

/// The last 4,000 characters of `body` (a host's tool list and system
/// prompt make a body long; the conversation's end is what a failure
/// needs).
fn tail(body: &str) -> &str {
    let mut start = body.len().saturating_sub(4_000);
    while !body.is_char_boundary(start) {
        start += 1;
    }
    &body[start..]
}

/// Asserts the first scenario as the model saw it: refused with the check
/// named, the failing run, the passing run, `complete` accepted.
pub fn assert_fix_then_complete(bodies: &[String]) {
    first_seen(bodies, 1, REFUSED);
    first_seen(bodies, 1, &format!("`{CHECK}` not run yet"));
    first_seen(bodies, 2, FAILS);
    first_seen(bodies, 3, PASSES);
    first_seen(bodies, 4, ACCEPTED);
}

/// Asserts the second scenario as the model saw it: the passing run,
/// `complete` refused as stale, the run again, `complete` accepted.
pub fn assert_stale_then_complete(bodies: &[String]) {
    first_seen(bodies, 1, PASSES);
    first_seen(bodies, 2, STALE);
    assert!(bodies[2].contains(REFUSED), "{}", bodies[2]);
    first_seen(bodies, 4, ACCEPTED);
}

/// The model speaking `api`, scripted by `steps`, with the script's edit
/// of `file` (to `text`) in the project the returned cell will hold,
/// before step `at`.
pub fn mock(
    api: Api,
    steps: Vec<Step>,
    at: usize,
    file: &'static str,
    text: &'static str,
) -> (MockModel, std::sync::Arc<std::sync::OnceLock<PathBuf>>) {
    let dir = std::sync::Arc::new(std::sync::OnceLock::<PathBuf>::new());
    let in_script = std::sync::Arc::clone(&dir);
    let mock = MockModel::scripted(
        api,
        script_editing(steps, at, move || {
            write(in_script.get().expect("the project"), file, text)();
        }),
    );
    (mock, dir)
}
