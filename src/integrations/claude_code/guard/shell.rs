//! Finding the goalkeeper commands a shell command line runs (see the
//! guard's module documentation), on the words the crate's one shell
//! reader (`crate::shell`) reads: simple commands, the commands inside
//! substitutions and here-documents, `sh -c` and `eval`.

use crate::shell::{MAX_DEPTH, Word, is_assignment, simple_commands};

/// The words after goalkeeper's name in each goalkeeper command that the
/// shell command line `command` runs, in order.
pub(super) fn goalkeeper_lines(command: &str) -> Vec<Vec<Word>> {
    let mut found = Vec::new();
    read_script(command, 0, &mut found);
    found
}

/// The words after goalkeeper's name in each goalkeeper command that
/// `words` (one simple command) runs, into `found`.
fn command_lines(words: &[Word], depth: usize, found: &mut Vec<Vec<Word>>) {
    let Some(at) = command_word(words) else {
        return;
    };
    run_at(words, at, depth, found);
}

/// The index of the command word: past assignments and reserved words.
fn command_word(words: &[Word]) -> Option<usize> {
    words.iter().position(|w| {
        !(is_assignment(&w.text) || (!w.expands && RESERVED.contains(&w.text.as_str())))
    })
}

/// Words the shell reads before a command's name.
const RESERVED: [&str; 13] = [
    "if", "then", "else", "elif", "do", "while", "until", "!", "{", "}", "time", "fi", "done",
];

/// Commands that run their arguments as a command, after options of their
/// own: the first argument naming goalkeeper (or a shell, or `eval`) is
/// the command they run.
const WRAPPERS: [&str; 16] = [
    "env", "command", "exec", "nice", "nohup", "time", "timeout", "sudo", "doas", "xargs",
    "stdbuf", "setsid", "ionice", "chrt", "taskset", "flock",
];

/// Shells whose `-c` argument is a command line.
const SHELLS: [&str; 6] = ["sh", "bash", "zsh", "dash", "ksh", "mksh"];

fn run_at(words: &[Word], at: usize, depth: usize, found: &mut Vec<Vec<Word>>) {
    let word = &words[at];
    if word.expands {
        return;
    }
    let name = word.text.rsplit('/').next().unwrap_or_default();
    if name == "goalkeeper" {
        found.push(words[at + 1..].to_vec());
    } else if SHELLS.contains(&name) {
        if let Some(script) = shell_script(&words[at + 1..])
            && depth < MAX_DEPTH
        {
            read_script(&script.text, depth + 1, found);
        }
    } else if name == "eval" {
        let script: Vec<&str> = words[at + 1..].iter().map(|w| w.text.as_str()).collect();
        if depth < MAX_DEPTH {
            read_script(&script.join(" "), depth + 1, found);
        }
    } else if WRAPPERS.contains(&name)
        && let Some(next) = words[at + 1..].iter().position(|w| {
            let name = w.text.rsplit('/').next().unwrap_or_default();
            !w.expands && (name == "goalkeeper" || name == "eval" || SHELLS.contains(&name))
        })
    {
        run_at(words, at + 1 + next, depth, found);
    }
}

/// The command line a shell runs with `-c` (also clustered, `-lc`), when
/// its arguments give one.
fn shell_script(args: &[Word]) -> Option<&Word> {
    let mut command = false;
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let text = arg.text.as_str();
        if text == "--" {
            return args.next().filter(|_| command);
        }
        if (text == "-o" || text == "+o") && !arg.expands {
            args.next();
            continue;
        }
        if let Some(flags) = text.strip_prefix('-').or_else(|| text.strip_prefix('+'))
            && !flags.is_empty()
            && !arg.expands
        {
            command |= text.starts_with('-') && !flags.starts_with('-') && flags.contains('c');
            continue;
        }
        return command.then_some(arg);
    }
    None
}

fn read_script(script: &str, depth: usize, found: &mut Vec<Vec<Word>>) {
    for simple in simple_commands(script, depth) {
        command_lines(&simple, depth, found);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(command: &str) -> Vec<Vec<String>> {
        goalkeeper_lines(command)
            .into_iter()
            .map(|words| words.into_iter().map(|w| w.text).collect())
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
                vec![vec!["goal", "drop"]],
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
            ("\"$GK\" goal drop", vec![]),
        ] {
            let expected: Vec<Vec<String>> = expected
                .into_iter()
                .map(|l| l.into_iter().map(str::to_owned).collect())
                .collect();
            assert_eq!(lines(command), expected, "{command}");
        }
    }
}
