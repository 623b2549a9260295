use super::report::{OUTPUT_INDENT, REPORT_BYTES, Ran, Recorded, Report, output_tail, plain_text};
use super::*;

const MIN: i64 = 60_000;

#[test]
fn a_check_is_one_line_of_shell_within_the_limit() {
    assert_eq!(command("  cargo test  ").unwrap(), "cargo test");
    assert_eq!(
        command(" \t ").unwrap_err(),
        "the check is empty; give the shell command that must pass, such as `cargo test`"
    );
    assert_eq!(
        command(&"x".repeat(100 * 1024)).unwrap_err(),
        "the check is 102400 characters; the limit is 2000: put a longer script in a file and check that, such as `sh scripts/check.sh`"
    );
    assert!(command(&"x".repeat(MAX_CHECK_CHARS)).is_ok());
    for bad in ["cargo test\nrm -rf x", "a\0b", "a\rb", "a\u{1b}[31mb"] {
        assert_eq!(
            command(bad).unwrap_err(),
            "the check holds a line break or another control character; a check is one line of shell: put a longer script in a file and check that, such as `sh scripts/check.sh`",
            "{bad:?}"
        );
    }
}

#[test]
fn shell_quoting_leaves_plain_words_alone() {
    assert_eq!(shell_quote("Lexer"), "Lexer");
    assert_eq!(shell_quote("Write the parser"), "'Write the parser'");
    assert_eq!(shell_quote("it's"), r"'it'\''s'");
    assert_eq!(shell_quote(""), "''");
    assert_eq!(
        verify_command(&Scope::Task("Write the parser".into())),
        "goalkeeper verify --task 'Write the parser'"
    );
}

fn run(fingerprint: &str, exit: Exit, at_ms: i64) -> RunSummary {
    RunSummary {
        fingerprint: fingerprint.into(),
        exit,
        at_ms,
    }
}

#[test]
fn the_latest_run_on_the_files_as_they_are_decides() {
    let pass = run("a", Exit::Code(0), MIN);
    let fail = run("a", Exit::Code(101), 2 * MIN);
    assert_eq!(state(None, None), CheckState::NotRun);
    assert_eq!(
        state(Some(&pass), Some(&pass)),
        CheckState::Passed { at_ms: MIN }
    );
    assert_eq!(
        state(Some(&fail), Some(&fail)),
        CheckState::Failed {
            at_ms: 2 * MIN,
            exit: Exit::Code(101),
            changed_since: false
        }
    );
    // No run on these files: what the latest one was, before they changed.
    assert_eq!(state(None, Some(&pass)), CheckState::Stale { at_ms: MIN });
    assert_eq!(
        state(None, Some(&fail)),
        CheckState::Failed {
            at_ms: 2 * MIN,
            exit: Exit::Code(101),
            changed_since: true
        }
    );
    assert!(state(Some(&pass), None).is_passing());
    assert!(!state(None, Some(&pass)).is_passing());
}

#[test]
fn states_read_as_a_person_says_them() {
    let now = 10 * MIN;
    let said: Vec<String> = [
        CheckState::NotRun,
        CheckState::Passed { at_ms: 7 * MIN },
        CheckState::Stale { at_ms: 0 },
        CheckState::Failed {
            at_ms: 6 * MIN,
            exit: Exit::Code(101),
            changed_since: false,
        },
        CheckState::Failed {
            at_ms: 6 * MIN,
            exit: Exit::TimedOut(600),
            changed_since: true,
        },
        CheckState::Failed {
            at_ms: now,
            exit: Exit::Signal(9),
            changed_since: false,
        },
    ]
    .iter()
    .map(|s| format!("{}: {}", s.word(), s.describe(now)))
    .collect();
    assert_eq!(
        said,
        [
            "not run: not run yet",
            "pass: passed 3m ago",
            "stale: passed 10m ago, but the files changed since",
            "fail: failed 4m ago (exit 101)",
            "fail: failed 4m ago (timed out after 600 s), and the files changed since",
            "fail: failed 0s ago (killed by signal 9)",
        ]
    );
}

fn checked(scope: Scope, command: &str, state: CheckState) -> Checked {
    Checked {
        scope,
        command: command.into(),
        state,
    }
}

#[test]
fn the_refusal_names_each_unproven_check_and_how_to_run_them() {
    let now = 10 * MIN;
    let all = [
        checked(
            Scope::Goal,
            "cargo test",
            CheckState::Failed {
                at_ms: 6 * MIN,
                exit: Exit::Code(101),
                changed_since: false,
            },
        ),
        checked(
            Scope::Goal,
            "cargo fmt --check",
            CheckState::Passed { at_ms: 9 * MIN },
        ),
        checked(
            Scope::Goal,
            "cargo clippy",
            CheckState::Stale { at_ms: 9 * MIN },
        ),
        checked(Scope::Goal, "make docs", CheckState::NotRun),
    ];
    assert_eq!(
        refusal("`complete`", &all, None, now).unwrap(),
        "`complete` is refused until its checks pass on the files as they are now: `cargo test` failed 4m ago (exit 101); `cargo clippy` passed 1m ago, but the files changed since; `make docs` not run yet. Run `goalkeeper verify` in your shell: it runs the checks and records the result; fix what fails, then try again"
    );
    assert_eq!(refusal("`complete`", &all[1..2], None, now), None);
    assert_eq!(refusal("`complete`", &[], None, now), None);
    let task = [checked(
        Scope::Task("Write the parser".into()),
        "cargo test parser",
        CheckState::NotRun,
    )];
    assert_eq!(
        refusal(
            "`done` of task \"Write the parser\"",
            &task,
            Some("No such file or directory"),
            now
        )
        .unwrap(),
        "`done` of task \"Write the parser\" is refused until its checks pass on the files as they are now (the files cannot be read: No such file or directory): task \"Write the parser\": `cargo test parser` not run yet. Run `goalkeeper verify --task 'Write the parser'` in your shell: it runs the checks and records the result; fix what fails, then try again"
    );
}

#[test]
fn output_becomes_plain_indented_lines() {
    let bytes = b"\x1b[1m\x1b[31merror\x1b[0m: boom\r\nbad \xff\xfe byte\nprogress 10%\rprogress 100%\n\x1b]0;title\x07bell\x07 tab\tdone\x1bc\n\xe2\x80\xaeevil";
    assert_eq!(
        plain_text(bytes),
        "error: boom\nbad \u{fffd}\u{fffd} byte\nprogress 100%\nbell  tab\tdone\n evil"
    );
    let tail = output_tail(bytes, 1000);
    assert!(tail.lines().all(|l| l.starts_with(OUTPUT_INDENT)), "{tail}");
    assert!(
        !tail.contains('\u{1b}') && !tail.contains('\u{7}'),
        "{tail:?}"
    );
}

#[test]
fn a_tail_keeps_the_last_lines_or_the_end_of_one_long_line() {
    let many: String = (0..1000).map(|i| format!("line {i}\n")).collect();
    let tail = output_tail(many.as_bytes(), 100);
    assert!(tail.len() <= 100, "{}", tail.len());
    assert!(tail.ends_with("line 999"), "{tail}");
    let one = "y".repeat(1_000_000);
    let tail = output_tail(one.as_bytes(), 100);
    assert!(
        tail.len() <= 100 + 3 && tail.starts_with(&format!("{OUTPUT_INDENT}…")),
        "{tail}"
    );
    assert_eq!(output_tail(b"\n\n  \n", 100), "");
}

fn ran(command: &str, exit: Exit, tail: &[u8]) -> Ran {
    Ran {
        command: command.into(),
        exit,
        ms: 12_345,
        tail: tail.to_vec(),
        output_bytes: tail.len() as u64,
        left_behind: false,
    }
}

#[test]
fn the_report_stays_small_whatever_the_checks_print() {
    let noisy = vec![b'z'; 64 * 1024];
    let runs: Vec<Ran> = (0..20)
        .map(|i| {
            ran(
                &format!("check {i} {}", "w".repeat(1500)),
                Exit::Code(1),
                &noisy,
            )
        })
        .collect();
    let report = Report {
        scope: &Scope::Goal,
        dir: "/work/project",
        fingerprint: "0123456789abcdef0123456789abcdef",
        files: 3,
        left_out: &[],
        changed: &[],
        ran: &runs,
        recorded: &Recorded::Stored,
    }
    .render();
    // Twenty failing checks with names of 1,500 characters each still
    // leave one line each: the names are cut, and outputs share the rest.
    assert!(report.len() <= REPORT_BYTES + 20 * 210, "{}", report.len());
    let one = [ran("cargo test", Exit::Code(101), &noisy)];
    let report = Report {
        scope: &Scope::Goal,
        dir: "/work/project",
        fingerprint: "0123456789abcdef0123456789abcdef",
        files: 3,
        left_out: &[],
        changed: &[],
        ran: &one,
        recorded: &Recorded::Stored,
    }
    .render();
    assert!(report.len() <= REPORT_BYTES, "{}", report.len());
}
