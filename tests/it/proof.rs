//! Proving done against what a careless or hasty agent, or an unlucky
//! setup, does to it (DESIGN.md §13): `.gitignore` rules above the
//! project, checks that change the files, runs that overlap, a verify in
//! another directory. Each test feeds the case to the real binary and
//! asserts the documented outcome and that nothing else changed.

use std::path::{Path, PathBuf};

use crate::checks::{Project, redact};
use crate::common::render;

/// Runs `git` (only to build a fixture; goalkeeper itself never runs it).
fn git(dir: &Path, args: &[&str]) -> String {
    let output = std::process::Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .expect("git runs");
    assert!(output.status.success(), "git {args:?}: {output:?}");
    String::from_utf8(output.stdout).unwrap()
}

/// A home directory that is a git work tree ignoring everything (`*`),
/// as a dotfiles repository does, beside the test's database.
fn dotfiles_home(p: &Project) -> PathBuf {
    let home = p.env.dir().join("home");
    std::fs::create_dir(&home).unwrap();
    git(&home, &["init", "-q"]);
    std::fs::write(home.join(".gitignore"), "*\n").unwrap();
    home
}

/// `goalkeeper ARGS` in `dir` with `HOME` at `home`.
fn in_dir(p: &Project, home: &Path, dir: &Path, args: &[&str]) -> std::process::Output {
    p.env
        .cmd(args)
        .current_dir(dir)
        .env("HOME", home)
        .output()
        .unwrap()
}

/// How many verify runs the session's log holds.
fn runs(p: &Project) -> usize {
    let log = p.ok(&["--json", "todo", "log", "--limit", "1000"]);
    let events: Vec<serde_json::Value> = serde_json::from_str(&log).unwrap();
    events.iter().filter(|e| e["kind"] == "check").count()
}

#[test]
fn a_gitignore_above_the_projects_work_tree_does_not_blind_the_fingerprint() {
    let p = Project::new();
    let home = dotfiles_home(&p);
    let app = home.join("code/app");
    std::fs::create_dir_all(&app).unwrap();
    git(&app, &["init", "-q"]);
    std::fs::write(app.join("state.txt"), "ok\n").unwrap();
    // git's own view: the file is the project's, untracked, not ignored.
    assert_eq!(git(&app, &["status", "--porcelain"]), "?? state.txt\n");

    let set = ["goal", "set", "G", "--check", "grep -q ok state.txt"];
    assert!(in_dir(&p, &home, &app, &set).status.success());
    let verify = in_dir(&p, &home, &app, &["verify"]);
    let report = String::from_utf8_lossy(&verify.stdout).into_owned();
    assert!(verify.status.success(), "{report}");
    assert!(!report.contains("covers no file"), "{report}");
    assert!(!report.contains("leave out"), "{report}");
    assert_eq!(runs(&p), 1);

    std::fs::write(app.join("state.txt"), "bad\n").unwrap();
    let complete = ["--json", "goal", "apply", r#"{"op":"complete"}"#];
    let refused = in_dir(&p, &home, &app, &complete);
    let said = render(&complete, &refused);
    assert_eq!(refused.status.code(), Some(1), "{said}");
    assert!(
        said.contains("passed 0s ago, but the files changed since"),
        "{said}"
    );
    // Nothing else changed: no run recorded, the goal as it was.
    assert_eq!(runs(&p), 1);
    let goal = String::from_utf8(in_dir(&p, &home, &app, &["goal"]).stdout).unwrap();
    assert!(goal.starts_with("Goal #1 (active): G\n"), "{goal}");
}

#[test]
fn a_fingerprint_that_leaves_out_the_directorys_files_is_named_in_the_report() {
    let p = Project::new();
    let home = dotfiles_home(&p);
    // A directory inside the dotfiles work tree, with no repository of its
    // own: git ignores every file in it, and so does the fingerprint.
    let notes = home.join("notes");
    std::fs::create_dir(&notes).unwrap();
    std::fs::write(notes.join("state.txt"), "ok\n").unwrap();
    assert_eq!(git(&notes, &["status", "--porcelain", "."]), "");
    let set = ["goal", "set", "G", "--check", "grep -q ok state.txt"];
    assert!(in_dir(&p, &home, &notes, &set).status.success());
    let verify = in_dir(&p, &home, &notes, &["verify"]);
    let shown = redact(&p.env.normalize(&render(&["verify"], &verify)));
    assert_snapshot!("proof_fingerprint_of_no_file", shown);

    // Outside any work tree, a `.gitignore` above the directory is not
    // read: the same file is covered.
    let plain = p.env.dir().join("plain");
    std::fs::create_dir_all(plain.join("app")).unwrap();
    std::fs::write(plain.join(".gitignore"), "*\n").unwrap();
    std::fs::write(plain.join("app/state.txt"), "ok\n").unwrap();
    std::fs::write(plain.join("app/.gitignore"), "*.log\n").unwrap();
    std::fs::write(plain.join("app/run.log"), "noise\n").unwrap();
    let outside = in_dir(&p, &home, &plain.join("app"), &["verify"]);
    let report = String::from_utf8_lossy(&outside.stdout).into_owned();
    assert!(outside.status.success(), "{report}");
    assert!(!report.contains("covers no file"), "{report}");
    assert!(
        report.contains("The `.gitignore` rules leave out of the fingerprint 1 file this directory holds (an edit to it makes no run stale): `run.log`.\n"),
        "{report}"
    );
}

#[test]
fn after_a_passing_verify_in_a_subdirectory_the_refusal_says_where_to_run_it() {
    let p = Project::new();
    let sub = p.dir.join("src");
    std::fs::create_dir(&sub).unwrap();
    p.ok(&["goal", "set", "Ship", "--check", "true"]);
    p.ok(&["todo", "init", "--item", "Lexer"]);
    p.ok(&["todo", "check", "Lexer", "true"]);
    let home = p.env.dir();
    for args in [&["verify"][..], &["verify", "--task", "Lexer"]] {
        let ran = in_dir(&p, home, &sub, args);
        assert!(ran.status.success(), "{}", render(args, &ran));
    }
    assert_eq!(runs(&p), 2);
    let (goal, list) = (p.ok(&["goal"]), p.ok(&["todo", "view"]));
    let mut transcript = String::new();
    for args in [
        &["goal", "apply", r#"{"op":"complete"}"#][..],
        &["todo", "apply", r#"{"op":"done","task":"Lexer"}"#],
    ] {
        let refused = p.run(args);
        assert!(
            refused.trim_end().ends_with("[exit status: 1]"),
            "{refused}"
        );
        transcript.push_str(&refused);
        transcript.push('\n');
    }
    assert_snapshot!("proof_refusal_after_verify_elsewhere", transcript);
    // Nothing changed: no run, the goal and the task as they were.
    assert_eq!(runs(&p), 2);
    assert!(goal.starts_with("Goal #1 (active): Ship\n"), "{goal}");
    assert_eq!((p.ok(&["goal"]), p.ok(&["todo", "view"])), (goal, list));
}

#[test]
fn a_link_retargeted_after_a_passing_verify_keeps_complete_refused() {
    let p = Project::new();
    p.write("v1.txt", "one\n");
    p.write("v2.txt", "two\n");
    std::os::unix::fs::symlink("v1.txt", p.dir.join("current")).unwrap();
    p.ok(&["goal", "set", "Ship", "--check", "true"]);
    p.ok(&["verify"]);
    assert_eq!(runs(&p), 1);
    // The same link, now to the other file: every file's content is as
    // it was, only the link's target changed.
    std::fs::remove_file(p.dir.join("current")).unwrap();
    std::os::unix::fs::symlink("v2.txt", p.dir.join("current")).unwrap();
    let complete = ["goal", "apply", r#"{"op":"complete"}"#];
    let refused = p.run(&complete);
    assert!(
        refused.contains("`true` passed 0s ago, but the files changed since")
            && refused.trim_end().ends_with("[exit status: 1]"),
        "{refused}"
    );
    assert_eq!(runs(&p), 1);
    assert!(p.ok(&["goal"]).starts_with("Goal #1 (active): Ship\n"));
    // Pointed back, the run holds again.
    std::fs::remove_file(p.dir.join("current")).unwrap();
    std::os::unix::fs::symlink("v1.txt", p.dir.join("current")).unwrap();
    assert!(p.cmd(&complete).output().unwrap().status.success());
}

#[test]
fn a_check_that_changes_the_files_proves_nothing_and_is_no_progress() {
    let p = Project::new();
    p.ok(&["goal", "set", "Ship", "--check", "date +%s%N > stamp.txt"]);
    let goal = p.ok(&["--json", "goal"]);
    let idle = ["--set", "goal.continuation.max_idle=2", "continuation"];
    assert!(p.ok(&idle).contains("<goal_continuation>"));
    let first = p.run(&["verify"]);
    assert_snapshot!("proof_check_that_changes_the_files", first);
    // Nothing recorded: the check stands as it did, `complete` is refused
    // and the goal is as it was.
    assert_eq!(runs(&p), 0);
    assert!(
        p.ok(&["goal", "check", "list"])
            .ends_with(": not run yet\n")
    );
    let complete = p.cmd(&["goal", "apply", r#"{"op":"complete"}"#]).output();
    assert_eq!(complete.unwrap().status.code(), Some(1));
    assert_eq!(p.ok(&["--json", "goal"]), goal);
    // Round after round the check rewrites its file: no progress, so the
    // runaway guard pauses the goal.
    let mut said = String::new();
    for _ in 0..2 {
        assert!(p.ok(&idle).contains("<goal_continuation>"));
        let again = p.cmd(&["verify"]).output().unwrap();
        assert_eq!(again.status.code(), Some(1));
        said = String::from_utf8(p.cmd(&idle).output().unwrap().stdout).unwrap();
        if !said.contains("<goal_continuation>") {
            break;
        }
    }
    assert!(said.contains("in a row without progress"), "{said}");
    assert_eq!(runs(&p), 0);
}
