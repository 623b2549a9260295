//! The fast parser against clap: whatever it accepts, clap parses to the
//! same value. Neither reads the environment.

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;

use clap::{CommandFactory, FromArgMatches};
use proptest::prelude::*;

use super::parse;
use crate::cli::Cli;

/// clap's answer for `args`.
fn clap_parse(args: &[OsString]) -> Option<Cli> {
    let matches = Cli::command()
        .try_get_matches_from(
            std::iter::once(OsString::from("goalkeeper")).chain(args.iter().cloned()),
        )
        .ok()?;
    Cli::from_arg_matches(&matches).ok()
}

fn os(args: &[&str]) -> Vec<OsString> {
    args.iter().map(OsString::from).collect()
}

/// Every line a host or an agent runs often, as the installers and the
/// tools write them, and as people type them.
const COMMON: &[&[&str]] = &[
    &["hook", "claude-code"],
    &["hook", "gemini-cli"],
    &["hook", "codex"],
    &["hook", "pi"],
    &["statusline"],
    &["--db", "/tmp/x.db", "statusline"],
    &["todo", "view"],
    &["--db", "a.db", "--session", "s10", "todo", "view"],
    &["todo", "view", "--json"],
    &["--json", "todo", "--db=a.db", "view"],
    &[
        "todo",
        "apply",
        r#"{"op":"start","task":"Write the parser"}"#,
    ],
    &["todo", "apply", "-"],
    &["todo", "apply"],
    &[
        "--session=s1",
        "todo",
        "apply",
        r#"{"op":"view"}"#,
        "--json",
    ],
    &["todo", "context"],
    &["todo", "context", "--explain"],
    &["context"],
    &["context", "--explain", "--set", "todo.eager=always"],
    &[
        "--config",
        "c.toml",
        "--set",
        "a=b",
        "--set",
        "c=d",
        "continuation",
    ],
    &["--session-from", "codex", "context"],
    &["--session-from=claude-code", "todo", "view"],
];

/// Lines the fast parser leaves to clap: help, mistakes, other commands.
const LEFT_TO_CLAP: &[&[&str]] = &[
    &[],
    &["--help"],
    &["todo", "view", "-h"],
    &["todo", "view", "--page", "2"],
    &["todo", "view", "extra"],
    &["todo", "apply", "{}", "{}"],
    &["todo", "apply", "--", "-x"],
    &["todo", "done", "Write the parser"],
    &["context", "--active-tools", "todo"],
    &["--db", "", "todo", "view"],
    &["--db=", "todo", "view"],
    &["--db", "a", "--db", "b", "todo", "view"],
    &["--db"],
    &["--json", "--json", "todo", "view"],
    &["--json=true", "todo", "view"],
    &["--session-from", "vim", "context"],
    &["hook", "claude"],
    &["hook"],
    &["statusline", "--explain"],
    &["--sessio", "s", "todo", "view"],
    &["tour"],
];

#[test]
fn the_common_lines_parse_as_clap_parses_them() {
    for args in COMMON {
        let args = os(args);
        let fast = parse(&args).unwrap_or_else(|| panic!("{args:?} left to clap"));
        let clap = clap_parse(&args).unwrap_or_else(|| panic!("clap refuses {args:?}"));
        assert_eq!(format!("{fast:?}"), format!("{clap:?}"), "{args:?}");
    }
}

#[test]
fn help_mistakes_and_other_commands_are_left_to_clap() {
    for args in LEFT_TO_CLAP {
        assert!(parse(&os(args)).is_none(), "{args:?}");
    }
    let not_utf8 = vec![
        OsString::from("--db"),
        OsString::from_vec(b"\xffx.db".to_vec()),
        OsString::from("todo"),
        OsString::from("view"),
    ];
    assert!(parse(&not_utf8).is_none());
}

/// The variables behind the global options are read after parsing
/// (`cli::variables`), so no argument of any command reads one: the line
/// means the same to clap and to the fast parser whatever the
/// environment holds.
#[test]
fn no_argument_reads_the_environment() {
    fn check(command: &clap::Command, path: &str) {
        for arg in command.get_arguments() {
            assert_eq!(arg.get_env(), None, "{path} {}", arg.get_id());
        }
        for sub in command.get_subcommands() {
            check(sub, &format!("{path} {}", sub.get_name()));
        }
    }
    let mut cli = Cli::command();
    cli.build();
    check(&cli, "goalkeeper");
}

/// Words and options the lines above are made of, and some that are not.
const WORDS: &[&str] = &[
    "todo",
    "view",
    "apply",
    "context",
    "continuation",
    "statusline",
    "hook",
    "claude-code",
    "codex",
    "pi",
    "gemini-cli",
    "done",
    "goal",
    "--db",
    "--db=a.db",
    "b.db",
    "--session",
    "--session=s2",
    "s1",
    "--session-from",
    "--session-from=pi",
    "--config",
    "c.toml",
    "--set",
    "todo.eager=always",
    "--set=x=y",
    "--json",
    "--explain",
    "-",
    "--",
    "-h",
    "--help",
    "-x",
    "",
    r#"{"op":"view"}"#,
    "--active-tools",
    "todo,goal",
    "--page",
    "2",
    "--version",
];

proptest! {
    #[test]
    fn whatever_it_accepts_clap_parses_the_same(
        picks in proptest::collection::vec(0..WORDS.len(), 0..8)
    ) {
        let args: Vec<OsString> = picks.iter().map(|&i| OsString::from(WORDS[i])).collect();
        if let Some(fast) = parse(&args) {
            let clap = clap_parse(&args);
            prop_assert!(clap.is_some(), "clap refuses {:?}", args);
            prop_assert_eq!(format!("{fast:?}"), format!("{:?}", clap.unwrap()));
        }
    }
}

/// The commands the fast parser knows, to build lines around.
const CORES: &[&[&str]] = &[
    &["todo", "view"],
    &["todo", "apply", r#"{"op":"done"}"#],
    &["todo", "apply", "-"],
    &["todo", "apply"],
    &["todo", "context"],
    &["context"],
    &["continuation"],
    &["statusline"],
    &["hook", "claude-code"],
    &["hook", "pi"],
];

/// Global options with a value, the flags, and values of every kind.
const OPTIONS: &[&str] = &[
    "--db",
    "--session",
    "--session-from",
    "--config",
    "--set",
    "--json",
    "--explain",
];
const VALUES: &[&str] = &[
    "a.db",
    "s1",
    "codex",
    "vim",
    "c.toml",
    "todo.eager=always",
    "",
    "-x",
    "view",
    "--json",
];

proptest! {
    #[test]
    fn a_known_command_with_any_options_parses_as_clap_parses_it(
        core in 0..CORES.len(),
        options in proptest::collection::vec(
            (0..OPTIONS.len(), 0..VALUES.len(), any::<bool>(), any::<prop::sample::Index>()),
            0..5,
        ),
    ) {
        let mut args: Vec<String> = CORES[core].iter().map(|w| w.to_string()).collect();
        for (option, value, inline, at) in options {
            let (option, value) = (OPTIONS[option], VALUES[value]);
            let words = if option == "--json" || option == "--explain" {
                vec![option.to_owned()]
            } else if inline {
                vec![format!("{option}={value}")]
            } else {
                vec![option.to_owned(), value.to_owned()]
            };
            let at = at.index(args.len() + 1);
            args.splice(at..at, words);
        }
        let args: Vec<OsString> = args.into_iter().map(OsString::from).collect();
        if let Some(fast) = parse(&args) {
            let clap = clap_parse(&args);
            prop_assert!(clap.is_some(), "clap refuses {:?}", args);
            prop_assert_eq!(format!("{fast:?}"), format!("{:?}", clap.unwrap()));
        }
    }
}
