//! Finding what a shell command line runs (see the guard's module
//! documentation), on the words the crate's one shell reader
//! (`crate::shell`) reads: the goalkeeper commands of its simple
//! commands, of the commands inside substitutions and here-documents, of
//! `sh -c`, `eval` and the wrappers (`env`, `timeout`, ...); and every
//! command whose program, or the script a shell runs, the shell builds as
//! the line runs, which may be goalkeeper without the guard seeing it.

use crate::shell::{MAX_DEPTH, Word, is_assignment, simple_commands};

/// What a shell command line runs that the guard judges.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Found {
    /// A goalkeeper command: the words after goalkeeper's name.
    Goalkeeper(Vec<Word>),
    /// A command that may run goalkeeper unseen: the simple command, and
    /// why what it runs cannot be told.
    Hidden {
        /// The simple command's words.
        words: Vec<Word>,
        /// Why what it runs cannot be told.
        why: String,
    },
}

/// What the shell command line `command` runs that the guard judges, in
/// order.
pub(super) fn goalkeeper_lines(command: &str) -> Vec<Found> {
    let mut found = Vec::new();
    read_script(command, 0, &mut found);
    found
}

/// What one simple command (`words`) runs, into `found`.
fn command_lines(words: &[Word], depth: usize, found: &mut Vec<Found>) {
    let Some(at) = command_word(words) else {
        return;
    };
    run_at(words, at, depth, found);
}

/// The index of the command word: past assignments, reserved words, the
/// options of `time` and the name `function` defines.
fn command_word(words: &[Word]) -> Option<usize> {
    let mut at = 0;
    while let Some(word) = words.get(at) {
        let text = word.text.as_str();
        let after_time = at > 0 && words[at - 1].text == "time" && text.starts_with('-');
        if !(is_assignment(text) || (!word.expands && (RESERVED.contains(&text) || after_time))) {
            return Some(at);
        }
        at += if text == "function" { 2 } else { 1 };
    }
    None
}

/// Words the shell reads before a command's name.
const RESERVED: [&str; 15] = [
    "if", "then", "else", "elif", "do", "while", "until", "!", "{", "}", "time", "fi", "done",
    "coproc", "function",
];

/// Commands that run their arguments as a command, after options of their
/// own: the first argument naming a program the guard reads (goalkeeper,
/// a shell, `eval`, another wrapper) is the command they run.
const WRAPPERS: [&str; 23] = [
    "env", "command", "exec", "nice", "nohup", "time", "timeout", "sudo", "doas", "stdbuf",
    "setsid", "ionice", "chrt", "taskset", "flock", "builtin", "busybox", "unbuffer", "strace",
    "ltrace", "chroot", "unshare", "nsenter",
];

/// Commands that add words of their own (file names, lines of their
/// input) to the command they run: one naming a program the guard reads
/// runs it with words not known here.
const ADDERS: [&str; 3] = ["xargs", "find", "parallel"];

/// Commands that run a whole argument as a command line.
const LINE_RUNNERS: [&str; 4] = ["watch", "su", "runuser", "script"];

/// Shells: `-c` runs a command line; otherwise a script file, or the
/// script on their input.
const SHELLS: [&str; 11] = [
    "sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "yash", "fish", "csh", "tcsh",
];

/// The program a command word names: its file name, in lower case (a file
/// system may ignore case).
fn program(word: &Word) -> String {
    word.text
        .rsplit('/')
        .next()
        .unwrap_or_default()
        .to_ascii_lowercase()
}

/// Whether `word` names a program the guard reads what it runs of.
fn is_read(word: &Word) -> bool {
    let name = program(word);
    !word.expands
        && !word.splits
        && (name == "goalkeeper"
            || name == "eval"
            || name == "source"
            || name == "."
            || SHELLS.contains(&name.as_str())
            || WRAPPERS.contains(&name.as_str())
            || ADDERS.contains(&name.as_str())
            || LINE_RUNNERS.contains(&name.as_str()))
}

/// The text of a word for a reason the model reads.
fn shown(word: &Word) -> String {
    format!("`{}`", word.text)
}

fn run_at(words: &[Word], at: usize, depth: usize, found: &mut Vec<Found>) {
    let word = &words[at];
    let hidden = |why: String| Found::Hidden {
        words: words.to_vec(),
        why,
    };
    let args = &words[at + 1..];
    if word.expands {
        return found.push(hidden(format!(
            "the shell builds the program's name from {}",
            shown(word)
        )));
    }
    if word.splits {
        return found.push(hidden(format!(
            "the program's name {} is a pattern the shell expands",
            shown(word)
        )));
    }
    let name = program(word);
    let name = name.as_str();
    if name == "goalkeeper" {
        found.push(Found::Goalkeeper(args.to_vec()));
    } else if SHELLS.contains(&name) {
        match shell_input(args) {
            Input::Line(script) if script.expands || script.splits => found.push(hidden(format!(
                "the shell builds the command line it runs, {}",
                shown(script)
            ))),
            Input::Line(script) => read_nested(&script.text, depth, found),
            Input::File(file) if file.expands || file.splits || is_stream(&file.text) => found
                .push(hidden(format!(
                    "the script {} is built as the line runs",
                    shown(file)
                ))),
            Input::File(_) => {}
            Input::Stdin => found.push(hidden(format!(
                "`{name}` runs the script on its input, which is not read here"
            ))),
        }
    } else if name == "eval" || LINE_RUNNERS.contains(&name) {
        if let Some(built) = args.iter().find(|w| w.expands || w.splits) {
            return found.push(hidden(format!(
                "`{name}` runs text the shell builds, {}",
                shown(built)
            )));
        }
        if name == "eval" {
            let script: Vec<&str> = args.iter().map(|w| w.text.as_str()).collect();
            read_nested(&script.join(" "), depth, found);
        } else {
            for arg in args {
                read_nested(&arg.text, depth, found);
            }
        }
    } else if name == "source" || name == "." {
        if let Some(file) = args.first()
            && (file.expands || file.splits || is_stream(&file.text))
        {
            found.push(hidden(format!(
                "the script {} is built as the line runs",
                shown(file)
            )));
        }
    } else if ADDERS.contains(&name) {
        let runs = match name {
            "find" => args
                .iter()
                .position(|w| w.text.starts_with("-exec") || w.text.starts_with("-ok"))
                .map_or(&[][..], |at| &args[at + 1..]),
            _ => args,
        };
        if let Some(run) = runs.iter().find(|w| is_read(w) && w.text != ".") {
            found.push(hidden(format!(
                "`{name}` runs {} with words of its own",
                shown(run)
            )));
        }
    } else if WRAPPERS.contains(&name) {
        if name == "env"
            && let Some(split) = args.iter().find(|w| splits_a_string(&w.text))
        {
            return found.push(hidden(format!(
                "`env {}` splits a string into the command it runs",
                split.text
            )));
        }
        if name == "command"
            && args
                .first()
                .is_some_and(|w| w.text == "-v" || w.text == "-V")
        {
            return;
        }
        wrapped(words, at, depth, found);
    }
}

/// What the wrapper at `at` runs: every argument naming a program the
/// guard reads may be the command it runs (a wrapper's own options may
/// take values), so each is read; an argument the shell builds before the
/// first of them may be the program, and the line is hidden.
fn wrapped(words: &[Word], at: usize, depth: usize, found: &mut Vec<Found>) {
    let args = &words[at + 1..];
    let first = args.iter().position(is_read).unwrap_or(args.len());
    if let Some(built) = args[..first].iter().find(|w| w.expands || w.splits) {
        return found.push(Found::Hidden {
            words: words.to_vec(),
            why: format!(
                "`{}` runs a command the shell builds from {}",
                program(&words[at]),
                shown(built)
            ),
        });
    }
    for (i, arg) in args.iter().enumerate().skip(first) {
        if !is_read(arg) {
            continue;
        }
        let name = program(arg);
        if name == "env"
            && let Some(split) = args[i + 1..].iter().find(|w| splits_a_string(&w.text))
        {
            return found.push(Found::Hidden {
                words: words.to_vec(),
                why: format!(
                    "`env {}` splits a string into the command it runs",
                    split.text
                ),
            });
        }
        // The arguments after a wrapper are this loop's too.
        if !WRAPPERS.contains(&name.as_str()) {
            run_at(words, at + 1 + i, depth, found);
        }
    }
}

/// Whether an option of `env` is `-S` (`--split-string`), alone or among
/// other short options.
fn splits_a_string(option: &str) -> bool {
    match option.strip_prefix("--") {
        Some(long) => {
            long.len() >= 2
                && "split-string".starts_with(long.split('=').next().unwrap_or_default())
        }
        None => {
            option.starts_with('-')
                && option[1..]
                    .chars()
                    .take_while(|c| c.is_ascii_alphabetic())
                    .any(|c| c == 'S')
        }
    }
}

/// Whether a script file's name is a stream the line itself may feed:
/// standard input, a descriptor, a process's file.
fn is_stream(path: &str) -> bool {
    path == "-" || path.starts_with("/dev/") || path.starts_with("/proc/")
}

/// Where a shell's script comes from, by its arguments.
enum Input<'w> {
    /// `-c`: this command line.
    Line(&'w Word),
    /// This script file.
    File(&'w Word),
    /// Its input (`-s`, or no file).
    Stdin,
}

/// Where the shell with the arguments `args` reads its script.
fn shell_input(args: &[Word]) -> Input<'_> {
    let mut command = false;
    let mut stdin = false;
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let text = arg.text.as_str();
        if arg.expands || arg.splits {
            return if command {
                Input::Line(arg)
            } else {
                Input::File(arg)
            };
        }
        if text == "--" || text == "-" {
            if text == "-" {
                stdin = true;
            }
            break;
        }
        if matches!(text, "-o" | "+o" | "-O" | "+O" | "--rcfile" | "--init-file") {
            args.next();
            continue;
        }
        if let Some(flags) = text.strip_prefix('-').or_else(|| text.strip_prefix('+')) {
            let short = !flags.starts_with('-');
            command |= text.starts_with('-') && short && flags.contains('c');
            stdin |= short && flags.contains('s');
            continue;
        }
        return if command {
            Input::Line(arg)
        } else if stdin {
            Input::Stdin
        } else {
            Input::File(arg)
        };
    }
    match args.next() {
        Some(arg) if command => Input::Line(arg),
        Some(arg) if !stdin => Input::File(arg),
        _ => Input::Stdin,
    }
}

fn read_script(script: &str, depth: usize, found: &mut Vec<Found>) {
    for simple in simple_commands(script, depth) {
        command_lines(&simple, depth, found);
    }
}

/// The command line `script`, run by a command at `depth`, read; past
/// the deepest level read, hidden.
fn read_nested(script: &str, depth: usize, found: &mut Vec<Found>) {
    if depth < MAX_DEPTH {
        read_script(script, depth + 1, found);
    } else {
        found.push(Found::Hidden {
            words: vec![Word::literal(script)],
            why: "it nests command lines deeper than the guard reads".into(),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each goalkeeper line's words; a hidden command as `<hidden>`.
    fn lines(command: &str) -> Vec<Vec<String>> {
        goalkeeper_lines(command)
            .into_iter()
            .map(|found| match found {
                Found::Goalkeeper(words) => words.into_iter().map(|w| w.text).collect(),
                Found::Hidden { .. } => vec!["<hidden>".to_owned()],
            })
            .collect()
    }

    #[test]
    fn the_shell_is_read_as_the_shell_reads_it() {
        for (command, expected) in [
            ("goalkeeper goal drop", vec![vec!["goal", "drop"]]),
            ("'goal'keeper \"goal\" dr\\op", vec![vec!["goal", "drop"]]),
            (
                "FOO=1 BAR='a b' goalkeeper goal drop",
                vec![vec!["goal", "drop"]],
            ),
            (
                "env -u X Y=1 ./goalkeeper goal drop",
                vec![vec!["goal", "drop"]],
            ),
            (
                "timeout 5 nice -n 3 goalkeeper goal drop",
                vec![vec!["goal", "drop"]],
            ),
            ("sh -c 'goalkeeper goal drop'", vec![vec!["goal", "drop"]]),
            (
                "bash -lc \"cd x && goalkeeper goal drop\"",
                vec![vec!["goal", "drop"]],
            ),
            ("eval 'goalkeeper goal drop'", vec![vec!["goal", "drop"]]),
            (
                "echo \"$(goalkeeper goal drop)\"",
                vec![vec!["goal", "drop"]],
            ),
            ("echo `goalkeeper goal drop`", vec![vec!["goal", "drop"]]),
            (
                "if goalkeeper goal drop; then :; fi",
                vec![vec!["goal", "drop"]],
            ),
            (
                "bash <<EOF\ngoalkeeper goal drop\nEOF\n",
                vec![vec!["<hidden>"], vec!["goal", "drop"]],
            ),
            (
                "goalkeeper goal drop 2>&1 >/dev/null | cat",
                vec![vec!["goal", "drop"]],
            ),
            (
                "goalkeeper goal drop # goalkeeper todo view",
                vec![vec!["goal", "drop"]],
            ),
            (
                "goalkeeper todo view; goalkeeper goal drop",
                vec![vec!["todo", "view"], vec!["goal", "drop"]],
            ),
            ("echo goalkeeper goal drop", vec![]),
            ("grep -rn goalkeeper src", vec![]),
            ("cp target/debug/goalkeeper /usr/local/bin/", vec![]),
            ("echo '$(goalkeeper goal drop)'", vec![]),
            ("git commit -m 'goalkeeper goal drop'", vec![]),
            ("\"$GK\" goal drop", vec![vec!["<hidden>"]]),
            ("GOALKEEPER goal drop", vec![vec!["goal", "drop"]]),
            ("flock . goalkeeper goal drop", vec![vec!["goal", "drop"]]),
            ("flock sh goalkeeper goal drop", vec![vec!["goal", "drop"]]),
            ("find . -name '*.rs' -exec grep -l x {} +", vec![]),
            ("command -v goalkeeper", vec![]),
            ("time -p goalkeeper goal drop", vec![vec!["goal", "drop"]]),
            ("coproc goalkeeper goal drop", vec![vec!["goal", "drop"]]),
            (
                "function f { goalkeeper goal drop; }; f",
                vec![vec!["goal", "drop"]],
            ),
        ] {
            let expected: Vec<Vec<String>> = expected
                .into_iter()
                .map(|l| l.into_iter().map(str::to_owned).collect())
                .collect();
            assert_eq!(lines(command), expected, "{command}");
        }
    }

    /// Past the deepest level read, a nested line is hidden, never
    /// skipped.
    #[test]
    fn a_line_nested_deeper_than_read_is_hidden() {
        let mut nested = String::from("goalkeeper goal drop");
        let mut substituted = nested.clone();
        for _ in 0..=MAX_DEPTH {
            nested = format!("sh -c {}", crate::check::shell_quote(&nested));
            substituted = format!("echo $({substituted})");
        }
        for command in [nested, substituted] {
            assert_eq!(lines(&command), [["<hidden>"]], "{command}");
        }
    }
}
