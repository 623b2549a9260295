//! Reading a shell command line as the shell would run it, far enough to
//! find the goalkeeper commands in it (see the guard's module
//! documentation): simple commands, their words with quotes removed, the
//! commands inside substitutions, here-documents, `sh -c` and `eval`.

/// The words after goalkeeper's name in each goalkeeper command that the
/// shell command line `command` runs, in order.
pub(super) fn goalkeeper_lines(command: &str) -> Vec<Vec<Word>> {
    let mut found = Vec::new();
    read_script(command, 0, &mut found);
    found
}

/// The most nested `sh -c`, `eval` and substitutions read.
const MAX_DEPTH: usize = 8;

/// A shell word with its quotes removed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Word {
    /// The text, expansions left as they were written (`$X`).
    pub(super) text: String,
    /// It holds an expansion (`$X`, `$(...)`, a backquote, `$'...'`): the
    /// text the command gets is not known.
    expands: bool,
    /// It may become several words, or none: an expansion outside double
    /// quotes, or a glob or brace pattern outside quotes.
    pub(super) splits: bool,
    /// It has a `{` outside quotes: a `,` after it makes a brace pattern.
    brace: bool,
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

/// Whether `text` is an assignment, `NAME=value`.
fn is_assignment(text: &str) -> bool {
    let Some((name, _)) = text.split_once('=') else {
        return false;
    };
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The simple commands of a shell command line, with those of its
/// command substitutions and here-documents, each as its words.
fn simple_commands(text: &str, depth: usize) -> Vec<Vec<Word>> {
    let mut lexer = Lexer {
        chars: text.chars().collect(),
        at: 0,
        depth,
        commands: Vec::new(),
        words: Vec::new(),
        word: None,
        heredocs: Vec::new(),
    };
    lexer.run();
    lexer.commands
}

struct Lexer {
    chars: Vec<char>,
    at: usize,
    depth: usize,
    /// The simple commands found so far (substitutions' first).
    commands: Vec<Vec<Word>>,
    /// The words of the simple command being read.
    words: Vec<Word>,
    /// The word being read.
    word: Option<Word>,
    /// Here-documents whose bodies start after the next newline: the
    /// delimiter and whether leading tabs are stripped (`<<-`).
    heredocs: Vec<(String, bool)>,
}

impl Lexer {
    fn peek(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.at + ahead).copied()
    }

    fn word(&mut self) -> &mut Word {
        self.word.get_or_insert_with(Word::default)
    }

    fn end_word(&mut self) {
        if let Some(word) = self.word.take() {
            self.words.push(word);
        }
    }

    fn end_command(&mut self) {
        self.end_word();
        if !self.words.is_empty() {
            let words = std::mem::take(&mut self.words);
            self.commands.push(words);
        }
    }

    fn run(&mut self) {
        while let Some(c) = self.peek(0) {
            self.at += 1;
            match c {
                '\\' => match self.peek(0) {
                    Some('\n') => self.at += 1,
                    Some(next) => {
                        self.at += 1;
                        self.word().text.push(next);
                    }
                    None => {}
                },
                '\'' => {
                    let text = self.until('\'');
                    self.word().text.push_str(&text);
                }
                '"' => self.double_quoted(),
                '$' => self.dollar(false),
                '`' => self.backquoted(false),
                ' ' | '\t' => self.end_word(),
                '\n' => {
                    self.end_command();
                    self.heredoc_bodies();
                }
                ';' | '&' | '|' | '(' | ')' => self.end_command(),
                '>' | '<' => self.redirection(c),
                '#' if self.word.is_none() => {
                    while self.peek(0).is_some_and(|c| c != '\n') {
                        self.at += 1;
                    }
                }
                '*' | '?' | '[' => {
                    let word = self.word();
                    word.splits = true;
                    word.text.push(c);
                }
                '{' => {
                    let word = self.word();
                    word.brace = true;
                    word.text.push(c);
                }
                ',' => {
                    let word = self.word();
                    word.splits |= word.brace;
                    word.text.push(c);
                }
                c => self.word().text.push(c),
            }
        }
        self.end_command();
    }

    /// The text up to `end` (consumed), as it is.
    fn until(&mut self, end: char) -> String {
        let mut text = String::new();
        while let Some(c) = self.peek(0) {
            self.at += 1;
            if c == end {
                break;
            }
            text.push(c);
        }
        text
    }

    fn double_quoted(&mut self) {
        self.word();
        while let Some(c) = self.peek(0) {
            self.at += 1;
            match c {
                '"' => return,
                '\\' => match self.peek(0) {
                    Some(next @ ('$' | '`' | '"' | '\\')) => {
                        self.at += 1;
                        self.word().text.push(next);
                    }
                    Some('\n') => self.at += 1,
                    _ => self.word().text.push('\\'),
                },
                '$' => self.dollar(true),
                '`' => self.backquoted(true),
                c => self.word().text.push(c),
            }
        }
    }

    /// After `$`: a substitution, a parameter, `$'...'`, or a plain `$`.
    fn dollar(&mut self, quoted: bool) {
        let start = self.at - 1;
        let mut splits = !quoted;
        match self.peek(0) {
            Some('(') => {
                self.at += 1;
                let arithmetic = self.peek(0) == Some('(');
                let inner = self.balanced('(', ')');
                if !arithmetic && self.depth < MAX_DEPTH {
                    self.commands
                        .extend(simple_commands(&inner, self.depth + 1));
                }
            }
            Some('{') => {
                self.at += 1;
                self.balanced('{', '}');
            }
            Some('\'') if !quoted => {
                // `$'...'` quotes: one word, its escapes not decoded here.
                splits = false;
                self.at += 1;
                while let Some(c) = self.peek(0) {
                    self.at += 1;
                    match c {
                        '\\' => self.at += 1,
                        '\'' => break,
                        _ => {}
                    }
                }
            }
            Some(c) if c.is_ascii_alphanumeric() || "_?#@*!$-".contains(c) => {
                self.at += 1;
                if c.is_ascii_alphabetic() || c == '_' {
                    while self
                        .peek(0)
                        .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
                    {
                        self.at += 1;
                    }
                }
            }
            _ => {
                self.word().text.push('$');
                return;
            }
        }
        let end = self.at.min(self.chars.len());
        let written: String = self.chars[start..end].iter().collect();
        let word = self.word();
        word.text.push_str(&written);
        word.expands = true;
        word.splits |= splits;
    }

    /// The text up to the `close` that balances an `open` already read,
    /// consumed; quotes inside are skipped over whole.
    fn balanced(&mut self, open: char, close: char) -> String {
        let mut depth = 1;
        let mut text = String::new();
        while let Some(c) = self.peek(0) {
            self.at += 1;
            match c {
                '\\' => {
                    text.push(c);
                    if let Some(next) = self.peek(0) {
                        self.at += 1;
                        text.push(next);
                    }
                    continue;
                }
                '\'' => {
                    text.push(c);
                    let quoted = self.until(c);
                    text.push_str(&quoted);
                    text.push(c);
                    continue;
                }
                '"' => {
                    text.push(c);
                    while let Some(q) = self.peek(0) {
                        self.at += 1;
                        text.push(q);
                        match q {
                            '"' => break,
                            '\\' => {
                                if let Some(next) = self.peek(0) {
                                    self.at += 1;
                                    text.push(next);
                                }
                            }
                            _ => {}
                        }
                    }
                    continue;
                }
                c if c == open => depth += 1,
                c if c == close => {
                    depth -= 1;
                    if depth == 0 {
                        return text;
                    }
                }
                _ => {}
            }
            text.push(c);
        }
        text
    }

    fn backquoted(&mut self, quoted: bool) {
        let mut inner = String::new();
        while let Some(c) = self.peek(0) {
            self.at += 1;
            match c {
                '`' => break,
                '\\' => {
                    if let Some(next) = self.peek(0) {
                        self.at += 1;
                        if !matches!(next, '`' | '\\' | '$') {
                            inner.push('\\');
                        }
                        inner.push(next);
                    }
                }
                c => inner.push(c),
            }
        }
        if self.depth < MAX_DEPTH {
            self.commands
                .extend(simple_commands(&inner, self.depth + 1));
        }
        let word = self.word();
        word.text.push('`');
        word.text.push_str(&inner);
        word.text.push('`');
        word.expands = true;
        word.splits |= !quoted;
    }

    /// A redirection (`>`, `2>&1`, `<<EOF`): neither it nor its target is
    /// a word of the command. A file descriptor number before it goes too.
    fn redirection(&mut self, first: char) {
        if self
            .word
            .as_ref()
            .is_some_and(|w| !w.expands && w.text.bytes().all(|b| b.is_ascii_digit()))
        {
            self.word = None;
        }
        self.end_word();
        let heredoc = first == '<' && self.peek(0) == Some('<') && self.peek(1) != Some('<');
        while self
            .peek(0)
            .is_some_and(|c| matches!(c, '>' | '<' | '&' | '|' | '-'))
        {
            self.at += 1;
        }
        if first == '>' || !heredoc {
            // `>&2`: the target may follow the `&` at once.
            while self.peek(0).is_some_and(|c| c == ' ' || c == '\t') {
                self.at += 1;
            }
            let saved = std::mem::take(&mut self.words);
            self.read_one_word();
            self.words = saved;
            return;
        }
        let strip = self.chars[..self.at].ends_with(&['<', '<', '-']);
        while self.peek(0).is_some_and(|c| c == ' ' || c == '\t') {
            self.at += 1;
        }
        let saved = std::mem::take(&mut self.words);
        let delimiter = self.read_one_word();
        self.words = saved;
        if let Some(delimiter) = delimiter {
            self.heredocs.push((delimiter.text, strip));
        }
    }

    /// Reads one word (quotes removed) and returns it; `None` at an
    /// operator or the end.
    fn read_one_word(&mut self) -> Option<Word> {
        while let Some(c) = self.peek(0) {
            match c {
                ' ' | '\t' | '\n' | ';' | '&' | '|' | '(' | ')' | '<' | '>' => break,
                '\'' => {
                    self.at += 1;
                    let text = self.until('\'');
                    self.word().text.push_str(&text);
                }
                '"' => {
                    self.at += 1;
                    self.double_quoted();
                }
                '\\' => {
                    self.at += 1;
                    if let Some(next) = self.peek(0) {
                        self.at += 1;
                        self.word().text.push(next);
                    }
                }
                '$' => {
                    self.at += 1;
                    self.dollar(false);
                }
                c => {
                    self.at += 1;
                    self.word().text.push(c);
                }
            }
        }
        self.word.take()
    }

    /// At a newline: the bodies of the here-documents opened on the line
    /// just read, each read as a script (`bash <<EOF` runs it).
    fn heredoc_bodies(&mut self) {
        for (delimiter, strip) in std::mem::take(&mut self.heredocs) {
            let mut body = String::new();
            while self.at < self.chars.len() {
                let end = self.chars[self.at..]
                    .iter()
                    .position(|&c| c == '\n')
                    .map_or(self.chars.len(), |n| self.at + n);
                let line: String = self.chars[self.at..end].iter().collect();
                self.at = (end + 1).min(self.chars.len());
                let line = if strip {
                    line.trim_start_matches('\t')
                } else {
                    &line
                };
                if line == delimiter {
                    break;
                }
                body.push_str(line);
                body.push('\n');
            }
            if self.depth < MAX_DEPTH {
                self.commands.extend(simple_commands(&body, self.depth + 1));
            }
        }
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
