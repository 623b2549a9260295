//! Where a database may be created (README, "Which commands create the
//! database"): a mistyped `--db` or `$GOALKEEPER_DB` must not start a
//! second database in silence. A path whose directory is missing is
//! refused by the CLI (exit 3), a hook (a note, exit 0) and the MCP server
//! (it does not start), and nothing is created anywhere; a missing file in
//! an existing directory is created (0600) by a command that writes, a
//! hook's first event or the MCP server, and never by a command that only
//! reads, which says there is no database; the default database is
//! created by a first run's hook event.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

use crate::common::{TestEnv, render};
use crate::mcp::initialize_params;
use serde_json::json;

/// Every path under `dir`, relative, sorted: what a test compares before
/// and after to know that nothing was created.
fn tree(dir: &Path) -> Vec<String> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            out.push(path.strip_prefix(root).unwrap().display().to_string());
            if path.is_dir() && !path.is_symlink() {
                walk(root, &path, out);
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

fn prompt_event(env: &TestEnv) -> String {
    json!({"hook_event_name": "UserPromptSubmit", "session_id": "s", "prompt": "go",
        "cwd": env.dir()})
    .to_string()
}

/// `args` with the database given as `GOALKEEPER_DB=db` (`None`: neither
/// it nor `--db`, the default location), stdin given, rendered with the
/// test's directory as `<tmp>`.
fn run(env: &TestEnv, db: Option<&Path>, args: &[&str], stdin: &str) -> (String, Output) {
    let mut cmd = env.cmd(args);
    match db {
        Some(db) => cmd.env("GOALKEEPER_DB", db),
        None => cmd
            .env_remove("GOALKEEPER_DB")
            .env("XDG_DATA_HOME", env.dir().join("data"))
            .env("HOME", env.dir().join("home")),
    };
    let output = cmd.write_stdin(stdin.to_owned()).output().unwrap();
    (env.normalize(&render(args, &output)), output)
}

/// `goalkeeper mcp` with `GOALKEEPER_DB=db` (`None`: the default location)
/// given an `initialize` request: its exit and stderr when it does not
/// start, or its answer when it does (stdin then closes and it ends).
fn mcp(env: &TestEnv, db: Option<&Path>) -> (String, Output) {
    let mut cmd = env.std_cmd(&["mcp"]);
    match db {
        Some(db) => cmd.env("GOALKEEPER_DB", db),
        None => cmd
            .env_remove("GOALKEEPER_DB")
            .env("XDG_DATA_HOME", env.dir().join("data"))
            .env("HOME", env.dir().join("home")),
    };
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let request = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": initialize_params()});
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "todo", "arguments": {"op": "append", "phase": "P", "items": ["a"]}}});
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        // A server that refused to start has closed its end already.
        let _ = writeln!(stdin, "{request}");
        let _ = writeln!(
            stdin,
            "{}",
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
        );
        let _ = writeln!(stdin, "{call}");
    }
    let output = child.wait_with_output().unwrap();
    let shown = format!(
        "$ goalkeeper mcp\n{}--- stderr ---\n{}[exit status: {}]\n",
        if output.status.success() {
            "(answered)\n"
        } else {
            ""
        },
        String::from_utf8_lossy(&output.stderr),
        output
            .status
            .code()
            .map_or("signal".into(), |c| c.to_string())
    );
    (env.normalize(&shown), output)
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[test]
fn a_path_whose_directory_is_missing_is_refused_everywhere_and_nothing_is_created() {
    let env = TestEnv::new();
    let before = tree(env.dir());
    let typo: PathBuf = env.dir().join("typo/deeper/still/x.db");
    let mut shown = Vec::new();
    // The CLI, a command that writes and one that only reads, through
    // --db and through the variable.
    let db = typo.display().to_string();
    for (args, via_env) in [
        (
            vec![
                "--db",
                &db,
                "todo",
                "apply",
                r#"{"op":"init","items":["a"]}"#,
            ],
            false,
        ),
        (vec!["--session", "s", "todo", "view"], true),
    ] {
        let (text, output) = run(&env, via_env.then_some(typo.as_path()), &args, "");
        assert_eq!(output.status.code(), Some(3), "{text}");
        assert!(output.stdout.is_empty(), "{text}");
        shown.push(text);
    }
    // A hook: a note, exit 0, nothing on stdout.
    let (text, output) = run(
        &env,
        Some(&typo),
        &["hook", "claude-code"],
        &prompt_event(&env),
    );
    assert_eq!(output.status.code(), Some(0), "{text}");
    assert!(output.stdout.is_empty(), "{text}");
    shown.push(text);
    // The MCP server does not start.
    let (text, output) = mcp(&env, Some(&typo));
    assert_eq!(output.status.code(), Some(3), "{text}");
    assert!(output.stdout.is_empty(), "{text}");
    shown.push(text);
    crate::assert_snapshot!("db_path_missing_directory", shown.join("\n"));
    assert_eq!(tree(env.dir()), before, "something was created");

    // A dangling symlink whose target's directory is missing: the same.
    let link = env.dir().join("link.db");
    std::os::unix::fs::symlink(env.dir().join("gone/target.db"), &link).unwrap();
    let before = tree(env.dir());
    let (text, output) = run(
        &env,
        Some(&link),
        &["todo", "apply", r#"{"op":"view"}"#],
        "",
    );
    assert_eq!(output.status.code(), Some(3), "{text}");
    assert!(
        text.contains(
            "the directory <tmp>/gone of the database <tmp>/gone/target.db does not exist"
        ),
        "{text}"
    );
    assert_eq!(tree(env.dir()), before, "something was created");
}

#[test]
fn a_missing_file_in_an_existing_directory_is_created_by_writers_and_never_by_readers() {
    let env = TestEnv::new();
    let new = env.dir().join("new.db");
    let before = tree(env.dir());
    let readers: [&[&str]; 12] = [
        &["todo", "view"],
        &["todo", "log"],
        &["todo", "context"],
        &["todo", "export", "out.md"],
        &["goal"],
        &["goal", "show"],
        &["context"],
        &["watch", "--once"],
        &["session", "list"],
        &["session", "show", "s"],
        &["session", "rm", "s"],
        &["backup", "copy.db"],
    ];
    let mut shown = Vec::new();
    for args in readers {
        let (text, output) = run(&env, Some(&new), args, "");
        assert_eq!(output.status.code(), Some(3), "{text}");
        assert!(output.stdout.is_empty(), "{text}");
        assert!(
            text.contains("there is no goalkeeper database at <tmp>/new.db"),
            "{text}"
        );
        if shown.is_empty() {
            shown.push(text);
        }
    }
    // The status line, which never fails its host: a note, exit 0.
    let (text, output) = run(&env, Some(&new), &["statusline"], "{}");
    assert_eq!(output.status.code(), Some(0), "{text}");
    assert!(output.stdout.is_empty(), "{text}");
    shown.push(text);
    crate::assert_snapshot!("db_path_readers_create_nothing", shown.join("\n"));
    assert_eq!(tree(env.dir()), before, "a reader created something");

    // A command that writes, a hook's first event and the MCP server each
    // create the file, private.
    let cli = env.dir().join("cli.db");
    let (text, output) = run(
        &env,
        Some(&cli),
        &["todo", "apply", r#"{"op":"init","items":["a"]}"#],
        "",
    );
    assert!(output.status.success(), "{text}");
    let hook = env.dir().join("hook.db");
    let (text, output) = run(
        &env,
        Some(&hook),
        &["hook", "claude-code"],
        &prompt_event(&env),
    );
    assert!(
        output.status.success() && output.stderr.is_empty(),
        "{text}"
    );
    let server = env.dir().join("mcp.db");
    let (text, output) = mcp(&env, Some(&server));
    assert!(output.status.success(), "{text}");
    for db in [&cli, &hook, &server] {
        assert_eq!(mode(db), 0o600, "{}", db.display());
    }
    // What they wrote is there for the readers.
    let (text, output) = run(
        &env,
        Some(&server),
        &["--session", "default", "todo", "view"],
        "",
    );
    assert!(output.status.success() && text.contains("[/] a"), "{text}");
}

#[test]
fn the_default_database_is_created_by_a_first_run_and_never_by_a_reader() {
    let env = TestEnv::new();
    let before = tree(env.dir());
    for args in [&["todo", "view"][..], &["session", "list"], &["context"]] {
        let (text, output) = run(&env, None, args, "");
        assert_eq!(output.status.code(), Some(3), "{text}");
        assert!(
            text.contains(
                "there is no goalkeeper database at <tmp>/data/goalkeeper/goalkeeper.db: nothing has been stored there"
            ),
            "{text}"
        );
    }
    let (text, output) = run(&env, None, &["statusline"], "{}");
    assert!(
        output.status.success() && output.stdout.is_empty(),
        "{text}"
    );
    assert_eq!(tree(env.dir()), before, "a reader created something");

    // A host's first event creates it, directory and all.
    let (text, output) = run(&env, None, &["hook", "claude-code"], &prompt_event(&env));
    assert!(
        output.status.success() && output.stderr.is_empty(),
        "{text}"
    );
    let default = env.dir().join("data/goalkeeper/goalkeeper.db");
    assert_eq!(mode(&default), 0o600);
    let (text, output) = run(&env, None, &["session", "list"], "");
    assert!(output.status.success(), "{text}");

    // So does an MCP server a host starts first.
    let other = TestEnv::new();
    let (text, output) = mcp(&other, None);
    assert!(output.status.success(), "{text}");
    assert_eq!(
        mode(&other.dir().join("data/goalkeeper/goalkeeper.db")),
        0o600
    );
}
