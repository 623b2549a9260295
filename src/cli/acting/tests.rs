//! Whom each command acts as, and the Bash guard reading goalkeeper
//! command lines in an agent's shell with the binary's own parser.

use std::collections::BTreeSet;

use clap::CommandFactory;
use proptest::prelude::*;

use super::*;
use crate::cli::Cli;
use crate::integrations::claude_code::{Refusal, refusal};

/// Every command: its words, the arguments it needs, whom it acts as.
/// A command clap knows and this table does not fails
/// [`every_command_is_in_the_table`].
const COMMANDS: &[(&str, &[&str], Acts)] = &[
    ("todo apply", &[r#"{"op":"view"}"#], Acts::Agent),
    ("todo init", &["--item", "a"], Acts::Person),
    ("todo start", &["a"], Acts::Person),
    ("todo done", &["a"], Acts::Person),
    ("todo drop", &["--phase", "P"], Acts::Person),
    ("todo rm", &["b"], Acts::Person),
    ("todo block", &["a", "--reason", "CI"], Acts::Person),
    ("todo release", &["a"], Acts::Person),
    ("todo unblock", &["a"], Acts::Person),
    (
        "todo append",
        &["--phase", "P", "--item", "a"],
        Acts::Person,
    ),
    ("todo view", &[], Acts::Nobody),
    ("todo context", &[], Acts::Nobody),
    ("todo export", &["-"], Acts::Nobody),
    ("todo import", &["x.md"], Acts::Person),
    ("todo log", &[], Acts::Nobody),
    ("todo undo", &[], Acts::Person),
    ("goal", &[], Acts::Nobody),
    ("goal set", &["New", "goal"], Acts::Person),
    ("goal create", &["Ship"], Acts::Person),
    ("goal get", &[], Acts::Nobody),
    ("goal pause", &[], Acts::Person),
    ("goal resume", &[], Acts::Person),
    ("goal complete", &[], Acts::Person),
    ("goal drop", &[], Acts::Person),
    ("goal budget", &["99999999"], Acts::Person),
    ("goal usage", &["--input", "5"], Acts::Person),
    ("goal apply", &[r#"{"op":"complete"}"#], Acts::Agent),
    ("context", &[], Acts::Nobody),
    ("continuation", &[], Acts::Person),
    ("prompt render", &["goal-todo-context"], Acts::Nobody),
    ("prompt list", &[], Acts::Nobody),
    ("session list", &[], Acts::Nobody),
    ("session show", &[], Acts::Nobody),
    ("session rm", &["s"], Acts::Person),
    ("mcp", &[], Acts::Agent),
    ("hook", &["claude-code"], Acts::Person),
    ("statusline", &[], Acts::Nobody),
    ("install", &["codex"], Acts::Person),
    ("package", &["out"], Acts::Person),
    ("system-prompt", &[], Acts::Nobody),
    ("workspace link", &["."], Acts::Person),
    ("workspace status", &["."], Acts::Nobody),
    ("tour", &[], Acts::Nobody),
    ("watch", &["--once"], Acts::Nobody),
    ("backup", &["copy.db"], Acts::Person),
    ("migrate", &["--to", "other.db"], Acts::Person),
    ("verify", &[], Acts::Agent),
    ("goal check add", &["cargo", "test"], Acts::Person),
    ("goal check rm", &["1"], Acts::Person),
    ("goal check list", &[], Acts::Nobody),
    ("todo check", &["a", "cargo test"], Acts::Person),
];

fn words(path: &str, args: &[&str]) -> Vec<String> {
    path.split(' ')
        .chain(args.iter().copied())
        .map(str::to_owned)
        .collect()
}

#[test]
fn every_command_reads_as_it_acts() {
    for &(path, args, acts) in COMMANDS {
        assert_eq!(
            read(&words(path, args)),
            Reading::Runs {
                command: path.to_owned(),
                acts
            },
            "{path}"
        );
    }
}

/// The table names every command clap knows (each leaf of its tree), so a
/// new command cannot go unclassified in it.
#[test]
fn every_command_is_in_the_table() {
    fn leaves(command: &clap::Command, path: &str, out: &mut BTreeSet<String>) {
        let subs: Vec<&clap::Command> = command
            .get_subcommands()
            .filter(|s| s.get_name() != "help")
            .collect();
        if subs.is_empty() {
            out.insert(path.trim().to_owned());
        }
        for sub in subs {
            leaves(sub, &format!("{path} {}", sub.get_name()), out);
        }
    }
    let mut cli = Cli::command();
    cli.build();
    let mut known = BTreeSet::new();
    leaves(&cli, "", &mut known);
    let table: BTreeSet<String> = COMMANDS.iter().map(|(p, _, _)| (*p).to_owned()).collect();
    let missing: Vec<&String> = known.difference(&table).collect();
    assert!(missing.is_empty(), "commands not in the table: {missing:?}");
}

/// The actor `todo` and `goal` give their calls follows the same rule.
#[test]
fn the_actor_of_a_call_is_the_one_the_guard_reads() {
    use crate::Actor;
    assert_eq!(Acts::Agent.actor(), Actor::Agent);
    assert_eq!(Acts::Person.actor(), Actor::User);
    assert_eq!(Acts::Nobody.actor(), Actor::User);
}

/// What the guard decides for a shell command.
#[derive(Debug, PartialEq)]
enum Decision {
    Allowed,
    /// Refused: it acts as the person, running this command.
    Person(&'static str),
    /// Refused: what it does cannot be told.
    Unknown,
    /// Refused: it may run goalkeeper unseen.
    Hidden,
}

fn decide(command: &str) -> Decision {
    match refusal(command, read) {
        None => Decision::Allowed,
        Some(Refusal::Person(path)) => Decision::Person(
            COMMANDS
                .iter()
                .map(|(p, _, _)| *p)
                .find(|p| *p == path)
                .unwrap_or_else(|| panic!("{command}: refused as {path:?}, no command")),
        ),
        Some(Refusal::Unknown { .. }) => Decision::Unknown,
        Some(Refusal::Hidden { .. }) => Decision::Hidden,
    }
}

/// What may run goalkeeper without the guard seeing it is refused,
/// whatever it runs: a program's name the shell builds or expands, a
/// script fed to a shell, `eval` of built text, `env -S`, a command that
/// adds words of its own. The plain forms of what the agent may run, the
/// path of the binary included, and ordinary commands stay allowed.
#[test]
fn what_may_run_goalkeeper_unseen_is_refused() {
    use Decision::{Allowed, Hidden, Person};
    for (command, expected) in [
        ("$(which goalkeeper) goal check rm 1", Hidden),
        ("\"$(command -v goalkeeper)\" goal complete", Hidden),
        ("`which goalkeeper` goal complete", Hidden),
        ("\"`which goalkeeper`\" goal drop", Hidden),
        ("$(which goalkeeper) hook claude-code < forged.json", Hidden),
        ("$'goalkeeper' goal complete", Hidden),
        ("$\"goalkeeper\" goal complete", Hidden),
        ("{goalkeeper,goal,complete}", Hidden),
        ("/usr/local/bin/goalkeepe[r] goal complete", Hidden),
        ("goalkeep?r goal complete", Hidden),
        ("$GK goal drop", Hidden),
        ("\"${GK:-goalkeeper}\" goal drop", Hidden),
        ("env -S 'goalkeeper goal check rm 1'", Hidden),
        ("env -iS'goalkeeper goal drop'", Hidden),
        ("env --split-string='goalkeeper goal drop'", Hidden),
        ("echo 'goalkeeper goal complete' | sh", Hidden),
        ("printf 'goalkeeper goal drop' | bash -s", Hidden),
        ("sh <<< 'goalkeeper goal complete'", Hidden),
        ("bash <<'EOF'\necho hi\nEOF", Hidden),
        ("bash <(echo goalkeeper goal complete)", Hidden),
        ("sh -c \"$(cat script)\"", Hidden),
        ("bash -c \"$SCRIPT\"", Hidden),
        ("source <(echo goalkeeper goal drop)", Hidden),
        (". /dev/stdin <<< 'goalkeeper goal drop'", Hidden),
        ("bash /dev/fd/3 3<<< x", Hidden),
        ("eval \"$(echo goalkeeper goal drop)\"", Hidden),
        ("eval $CMD", Hidden),
        ("echo goal drop | xargs goalkeeper", Hidden),
        ("echo 1 | xargs -I{} goalkeeper goal check rm {}", Hidden),
        (
            "find . -maxdepth 0 -exec goalkeeper goal complete \\;",
            Hidden,
        ),
        ("find . -exec sh -c 'goalkeeper goal drop' \\;", Hidden),
        ("timeout 5 $(which goalkeeper) goal drop", Hidden),
        ("nice \"$PROG\" goal drop", Hidden),
        ("watch -n 1 \"$CMD\"", Hidden),
        // Read through: the goalkeeper command is judged.
        ("watch 'goalkeeper goal drop'", Person("goal drop")),
        ("eval 'goalkeeper goal drop'", Person("goal drop")),
        (
            "sh -c 'sh -c \"goalkeeper goal drop\"'",
            Person("goal drop"),
        ),
        ("GoalKeeper goal drop", Person("goal drop")),
        ("flock sh goalkeeper goal drop", Person("goal drop")),
        ("g\\oalkeeper goal drop", Person("goal drop")),
        // The plain forms the README allows.
        ("goalkeeper verify", Allowed),
        ("goalkeeper verify --task 'Write the parser'", Allowed),
        (
            "/home/me/.cargo/bin/goalkeeper verify --task \"Pay the \\$5 fee\"",
            Allowed,
        ),
        ("'/opt/my tools/goalkeeper' verify", Allowed),
        ("goalkeeper todo apply \"$(cat call.json)\"", Allowed),
        ("~/bin/goalkeeper todo view", Allowed),
        // Ordinary commands.
        ("cargo test", Allowed),
        ("git status", Allowed),
        ("ls | grep x", Allowed),
        ("sh -c 'cargo test'", Allowed),
        ("bash -lc 'cd sub && make'", Allowed),
        ("bash scripts/check.sh", Allowed),
        ("source .venv/bin/activate && pytest", Allowed),
        ("find . -name '*.rs' -exec grep -l lexer {} +", Allowed),
        ("git ls-files | xargs wc -l", Allowed),
        ("for f in *.rs; do wc -l \"$f\"; done", Allowed),
        ("diff <(sort a) <(sort b)", Allowed),
        ("while read l; do echo \"$l\"; done < <(ls)", Allowed),
        ("cat <<EOF > notes.md\n# Notes\nEOF", Allowed),
        ("echo \"$HOME\" && ls $HOME/*.txt", Allowed),
        ("timeout 60 cargo test -- --nocapture", Allowed),
        ("command -v goalkeeper", Allowed),
        ("which goalkeeper", Allowed),
    ] {
        assert_eq!(decide(command), expected, "{command}");
    }
}

#[test]
fn the_guard_reads_every_spelling() {
    use Decision::{Allowed, Person, Unknown};
    for (command, expected) in [
        // The options before the command, however they are written.
        ("goalkeeper --agent w1 goal drop", Person("goal drop")),
        ("goalkeeper --agent=w1 goal drop", Person("goal drop")),
        ("goalkeeper --json --agent w1 todo rm b", Person("todo rm")),
        ("goalkeeper --agent X todo undo", Person("todo undo")),
        (
            "goalkeeper --agent X todo import x.md",
            Person("todo import"),
        ),
        (
            "goalkeeper --agent w1 goal budget 99999999",
            Person("goal budget"),
        ),
        ("goalkeeper --agent w1 session rm s", Person("session rm")),
        (
            "goalkeeper --db goal --session todo goal drop",
            Person("goal drop"),
        ),
        ("goalkeeper todo --agent w1 done a", Person("todo done")),
        (
            "goalkeeper --set=todo.eager=always todo drop --phase P",
            Person("todo drop"),
        ),
        (
            "goalkeeper --session-from claude-code goal set 'New goal'",
            Person("goal set"),
        ),
        // Since teams, a person's call may reopen or take any task.
        ("goalkeeper todo release a", Person("todo release")),
        ("goalkeeper todo done a", Person("todo done")),
        ("goalkeeper todo start a", Person("todo start")),
        ("goalkeeper todo block a --after b", Person("todo block")),
        ("goalkeeper goal complete", Person("goal complete")),
        ("goalkeeper hook claude-code < event.json", Person("hook")),
        ("goalkeeper continuation", Person("continuation")),
        // The program and the shell around it.
        (
            "/usr/local/bin/goalkeeper --db /tmp/x.db goal drop",
            Person("goal drop"),
        ),
        ("./target/debug/goalkeeper goal drop", Person("goal drop")),
        ("\"goalkeeper\" --json todo rm --task a", Person("todo rm")),
        (
            "GOALKEEPER_AGENT=w1 goalkeeper todo done a",
            Person("todo done"),
        ),
        ("env X=1 goalkeeper goal pause", Person("goal pause")),
        (
            "env -u GOALKEEPER_DB nice -n 5 goalkeeper goal pause",
            Person("goal pause"),
        ),
        (
            "sh -c 'goalkeeper --agent w1 goal drop'",
            Person("goal drop"),
        ),
        ("bash -lc \"goalkeeper goal 'drop'\"", Person("goal drop")),
        ("x=$(goalkeeper goal pause)", Person("goal pause")),
        (
            "echo hi; cd x && goalkeeper goal budget 5 | cat",
            Person("goal budget"),
        ),
        (
            "goalkeeper todo view && goalkeeper todo rm a",
            Person("todo rm"),
        ),
        // What the agent may run.
        (
            "goalkeeper todo apply '{\"op\":\"done\",\"task\":\"a\"}'",
            Allowed,
        ),
        (
            "goalkeeper --agent w1 todo apply -- '{\"op\":\"view\"}'",
            Allowed,
        ),
        (
            "goalkeeper --agent=w1 --json goal apply '{\"op\":\"get\"}'",
            Allowed,
        ),
        (
            "echo '{\"op\":\"view\"}' | GOALKEEPER_AGENT=w1 goalkeeper todo apply",
            Allowed,
        ),
        ("goalkeeper todo apply \"$(cat call.json)\"", Allowed),
        ("goalkeeper --agent goal todo view", Allowed),
        ("goalkeeper goal", Allowed),
        ("goalkeeper --json goal get", Allowed),
        ("goalkeeper context --explain", Allowed),
        ("goalkeeper todo log --limit 5", Allowed),
        ("goalkeeper --agent w1 mcp", Allowed),
        ("goalkeeper goal drop --help", Allowed),
        ("goalkeeper --version", Allowed),
        ("cargo test", Allowed),
        ("grep -rn 'goal budget' src", Allowed),
        ("grep -rn goalkeeper src", Allowed),
        ("echo goalkeeper goal drop", Allowed),
        ("ls goalkeeper-docs/goal/set", Allowed),
        // What cannot be read is refused: a command this goalkeeper does
        // not know (the one on PATH may know it), a mistake, a word the
        // shell expands into words not seen here.
        // Checks: the agent runs them; only a person sets them.
        ("goalkeeper verify", Allowed),
        ("goalkeeper --agent w1 verify --task a", Allowed),
        ("goalkeeper goal check list", Allowed),
        (
            "goalkeeper goal check add 'cargo test'",
            Person("goal check add"),
        ),
        ("goalkeeper --json goal check rm 1", Person("goal check rm")),
        ("goalkeeper todo check a 'cargo test'", Person("todo check")),
        ("goalkeeper todo check a --clear", Person("todo check")),
        (
            "goalkeeper goal set Ship --check 'cargo test'",
            Person("goal set"),
        ),
        ("goalkeeper --agent w1", Unknown),
        ("goalkeeper todo veiw", Unknown),
        ("goalkeeper --session-from vim todo view", Unknown),
        ("goalkeeper goal $CMD", Unknown),
        ("goalkeeper \"$CMD\" drop", Unknown),
        ("goalkeeper --db $DB todo view", Unknown),
        ("goalkeeper -- goal drop", Unknown),
    ] {
        assert_eq!(decide(command), expected, "{command}");
    }
}

/// A word as one of the ways a shell may be given it.
fn quoted(word: &str, how: u8) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c));
    match how % 4 {
        0 if plain => word.to_owned(),
        0 | 1 => format!("'{}'", word.replace('\'', r"'\''")),
        2 => {
            let mut out = String::from("\"");
            for c in word.chars() {
                if matches!(c, '"' | '\\' | '$' | '`') {
                    out.push('\\');
                }
                out.push(c);
            }
            out.push('"');
            out
        }
        _ => word
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() {
                    c.to_string()
                } else {
                    format!("\\{c}")
                }
            })
            .collect(),
    }
}

/// The global options, and values that look like commands.
const OPTIONS: [&str; 7] = [
    "--db",
    "--session",
    "--agent",
    "--config",
    "--set",
    "--session-from",
    "--json",
];
const VALUES: [&str; 9] = [
    "goal", "drop", "todo", "w1", "apply", "a b", "it's", "x.db", "k=v",
];
const HOSTS: [&str; 4] = ["claude-code", "gemini-cli", "codex", "pi"];
const PROGRAMS: [&str; 5] = [
    "goalkeeper",
    "/usr/local/bin/goalkeeper",
    "./target/debug/goalkeeper",
    "\"goalkeeper\"",
    "'goal'keeper",
];
const PREFIXES: [&str; 5] = [
    "",
    "FOO=1 ",
    "GOALKEEPER_AGENT=w1 GOALKEEPER_SESSION='s 1' ",
    "env X=1 ",
    "env -u GOALKEEPER_DB timeout 5 ",
];

/// `line` inside the shell construct `how` chooses.
fn wrapped(line: &str, how: u8) -> String {
    match how % 7 {
        0 => line.to_owned(),
        1 => format!("sh -c {}", quoted(line, 1)),
        2 => format!("bash -lc {}", quoted(line, 2)),
        3 => format!("x=$({line})"),
        4 => format!("cd /tmp && {line} | cat"),
        5 => format!("if {line}; then echo ok; fi"),
        _ => format!("echo start\n{line} 2>&1"),
    }
}

proptest! {
    /// However a command is spelt (the global options before it or
    /// between its words, in either spelling and with values that look
    /// like commands; an environment, a wrapper, a path to the program;
    /// each word quoted any way; inside `sh -c`, a substitution, a
    /// pipeline), the guard allows it exactly when it acts as the agent
    /// or only reads, and otherwise refuses it, naming it.
    #[test]
    fn the_decision_is_the_commands_actor(
        core in 0..COMMANDS.len(),
        options in Just((0..OPTIONS.len()).collect::<Vec<_>>()).prop_shuffle(),
        count in 0..=OPTIONS.len(),
        values in proptest::collection::vec((0..VALUES.len(), any::<bool>(), any::<prop::sample::Index>()), OPTIONS.len()),
        quoting in proptest::collection::vec(any::<u8>(), 16),
        program in 0..PROGRAMS.len(),
        prefix in 0..PREFIXES.len(),
        wrap in any::<u8>(),
    ) {
        let (path, args, acts) = COMMANDS[core];
        let path_words: Vec<&str> = path.split(' ').collect();
        // The options go before, between or after the command's words,
        // before its own arguments (which may take values).
        let mut slots: Vec<Vec<String>> = vec![Vec::new(); path_words.len() + 1];
        for (&option, &(value, inline, at)) in options.iter().take(count).zip(&values) {
            let name = OPTIONS[option];
            let value = if name == "--session-from" { HOSTS[value % HOSTS.len()] } else { VALUES[value] };
            let inserted = if name == "--json" {
                vec![name.to_owned()]
            } else if inline {
                vec![format!("{name}={value}")]
            } else {
                vec![name.to_owned(), value.to_owned()]
            };
            let slot = at.index(slots.len());
            slots[slot].extend(inserted);
        }
        let mut line: Vec<String> = Vec::new();
        for (i, slot) in slots.into_iter().enumerate() {
            line.extend(slot);
            line.extend(path_words.get(i).map(|w| (*w).to_owned()));
        }
        line.extend(args.iter().map(|a| (*a).to_owned()));
        let shell: Vec<String> = line
            .iter()
            .enumerate()
            .map(|(i, w)| quoted(w, quoting[i % quoting.len()]))
            .collect();
        let command = format!("{}{} {}", PREFIXES[prefix], PROGRAMS[program], shell.join(" "));
        let command = wrapped(&command, wrap);
        let expected = match acts {
            Acts::Agent | Acts::Nobody => Decision::Allowed,
            Acts::Person => Decision::Person(path),
        };
        prop_assert_eq!(decide(&command), expected, "{}", command);
    }
}
