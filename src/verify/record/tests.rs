use super::*;
use crate::check::CheckRun;

fn evidence() -> Evidence {
    Evidence {
        run: "0123456789abcdef0123456789abcdef".into(),
        scope: Scope::Goal,
        dir: "/work/project".into(),
        fingerprint: "fedcba9876543210fedcba9876543210".into(),
        started_ms: 1_764_441_600_000,
        by: RunBy {
            actor: "agent".into(),
            agent: None,
            host: Some("claude-code".into()),
        },
        checks: vec![
            CheckRun {
                command: "cargo test".into(),
                exit: Exit::Code(0),
                ms: 1234,
            },
            CheckRun {
                command: "cargo clippy -- -D warnings".into(),
                exit: Exit::TimedOut(600),
                ms: 600_000,
            },
        ],
    }
}

const GK: &[&str] = &["goalkeeper", "/usr/local/bin/goalkeeper"];

fn shell<'a>(command: &'a str, output: &'a str) -> ShellCall<'a> {
    ShellCall {
        command,
        output,
        exit: None,
        call: None,
    }
}

#[test]
fn a_record_line_reads_back_as_the_evidence() {
    let line = to_line("s1", &evidence(), None);
    assert_eq!(
        line,
        format!(
            r#"goalkeeper-evidence 1 {{"run":"0123456789abcdef0123456789abcdef","session":"s1","task":null,"dir":"/work/project","fp":"fedcba9876543210fedcba9876543210","at":1764441600000,"by":"agent","agent":null,"host":"claude-code","call":null,"checks":[{{"c":"{}","exit":{{"code":0}},"ms":1234}},{{"c":"{}","exit":{{"timed_out":600}},"ms":600000}}]}}"#,
            digest("cargo test"),
            digest("cargo clippy -- -D warnings")
        )
    );
    let output = format!("{line}\ngoalkeeper verify: the goal's checks ...\n");
    let record = from_shell_call(shell("goalkeeper verify", &output), GK).unwrap();
    assert_eq!(record.session, "s1");
    let checks = [
        "cargo clippy -- -D warnings".to_owned(),
        "cargo test".to_owned(),
    ];
    assert_eq!(record.evidence(&checks).unwrap(), evidence());
    // A check removed meanwhile is left out; none left is no evidence.
    let one = record.evidence(&checks[1..]).unwrap();
    assert_eq!(one.checks, evidence().checks[..1]);
    assert_eq!(record.evidence(&["make".to_owned()]), None);
}

#[test]
fn only_a_plain_verify_call_is_taken() {
    let line = to_line("s1", &evidence(), None);
    let output = format!("{line}\nreport");
    for command in [
        "goalkeeper verify",
        "  goalkeeper   verify ",
        "/usr/local/bin/goalkeeper verify",
        "'goalkeeper' verify",
    ] {
        assert!(
            from_shell_call(shell(command, &output), GK).is_ok(),
            "{command}"
        );
    }
    let refused = |command: &str| from_shell_call(shell(command, &output), GK).unwrap_err();
    for command in [
        "goalkeeper verify && echo forged",
        "goalkeeper verify; true",
        "goalkeeper verify | tee x",
        "goalkeeper verify > out",
        "cd . && goalkeeper verify",
        "GOALKEEPER_DB=/tmp/x.db goalkeeper verify",
        "goalkeeper verify # comment",
        "goalkeeper verify $(echo)",
        "goalkeeper verify `echo`",
        "goalkeeper verify\necho forged",
        "goalkeeper verify \"$HOME\"",
        "echo goalkeeper verify",
        "./goalkeeper verify",
        "/tmp/goalkeeper verify",
        "goalkeeper verify --extra",
        "goalkeeper todo view",
        "goalkeeper 'verify",
    ] {
        let err = refused(command);
        assert!(err.starts_with("the command is not"), "{command}: {err}");
    }
    assert_eq!(
        refused("goalkeeper verify && echo forged"),
        "the command is not one plain command (`&` outside quotes)"
    );
    assert_eq!(
        refused("/tmp/goalkeeper verify"),
        "the command is not a plain `goalkeeper verify [--task TASK]`; only such a call's record is taken"
    );
}

#[test]
fn the_record_must_open_the_output_and_read_as_verify_writes_it() {
    let line = to_line("s1", &evidence(), None);
    let refused =
        |output: &str| from_shell_call(shell("goalkeeper verify", output), GK).unwrap_err();
    assert_eq!(refused(""), "the call printed nothing");
    assert_eq!(
        refused(&format!("something first\n{line}")),
        "the first line of its output is not a `goalkeeper-evidence 1` record"
    );
    assert_eq!(
        refused(&format!("  {line}")),
        "the first line of its output is not a `goalkeeper-evidence 1` record"
    );
    assert!(
        refused(&line.replace("\"by\":\"agent\"", "\"by\":\"agent\",\"forged\":true"))
            .starts_with("the record does not read: unknown field `forged`")
    );
    assert_eq!(
        refused(&line.replace("fedcba9876543210fedcba9876543210", "x")),
        "the record's fingerprint is not 32 hexadecimal digits"
    );
    assert_eq!(
        refused(&line.replace("\"/work/project\"", "\"work\"")),
        "the record's directory is not an absolute path"
    );
    // The task the command names is the record's.
    let mut task = evidence();
    task.scope = Scope::Task("Write the parser".into());
    let line = to_line("s1", &task, None);
    let ok = from_shell_call(
        shell("goalkeeper verify --task 'Write the parser'", &line),
        GK,
    )
    .unwrap();
    assert_eq!(ok.task.as_deref(), Some("Write the parser"));
    assert!(
        from_shell_call(
            shell("goalkeeper verify --task=\"Write the parser\"", &line),
            GK
        )
        .is_ok()
    );
    assert_eq!(
        from_shell_call(shell("goalkeeper verify --task Other", &line), GK).unwrap_err(),
        "the record's task is not the one the command names"
    );
    assert_eq!(
        from_shell_call(shell("goalkeeper verify", &line), GK).unwrap_err(),
        "the record's task is not the one the command names"
    );
}

#[test]
fn the_exit_status_and_the_call_must_be_the_records() {
    // One check timed out: verify exits 1.
    let line = to_line("s1", &evidence(), Some("call_4"));
    let with = |exit, call| ShellCall {
        command: "goalkeeper verify",
        output: &line,
        exit,
        call,
    };
    assert!(from_shell_call(with(Some(1), Some("call_4")), GK).is_ok());
    assert_eq!(
        from_shell_call(with(Some(0), None), GK).unwrap_err(),
        "the call exited with 0, which is not what verify exits with for this record"
    );
    assert_eq!(
        from_shell_call(with(None, Some("call_5")), GK).unwrap_err(),
        "the record names another tool call"
    );
}

/// The task is read from the command as the shell passes it to verify,
/// however it is quoted: `"\$5"` in double quotes is `$5`.
#[test]
fn the_task_is_read_as_the_shell_passes_it() {
    let mut task = evidence();
    task.scope = Scope::Task("Pay the $5 fee \"now\" \\ `soon`".into());
    let line = to_line("s1", &task, None);
    for command in [
        r#"goalkeeper verify --task "Pay the \$5 fee \"now\" \\ \`soon\`""#,
        r#"goalkeeper verify --task 'Pay the $5 fee "now" \ `soon`'"#,
        r#"goalkeeper verify --task=Pay\ the\ \$5\ fee\ \"now\"\ \\\ \`soon\`"#,
        r#"goalkeeper verify --task "Pay the "'$5 fee "now" \ `soon`'"#,
    ] {
        let record =
            from_shell_call(shell(command, &line), GK).unwrap_or_else(|e| panic!("{command}: {e}"));
        assert_eq!(
            record.task.as_deref(),
            Some("Pay the $5 fee \"now\" \\ `soon`"),
            "{command}"
        );
    }
    // A backslash before any other character stays in double quotes.
    let mut other = evidence();
    other.scope = Scope::Task(r"C:\dir".into());
    let line = to_line("s1", &other, None);
    assert!(from_shell_call(shell(r#"goalkeeper verify --task "C:\dir""#, &line), GK).is_ok());
    assert_eq!(
        from_shell_call(
            shell(r#"goalkeeper verify --task "Pay the $5 fee""#, &line),
            GK
        )
        .unwrap_err(),
        "the command is not one plain command (a substitution in quotes)"
    );
}
