//! Reading a shell command line as a POSIX shell reads it: the one reader
//! of shell words in goalkeeper. The Bash guard finds the goalkeeper
//! commands a line runs with it (`integrations/claude_code/guard/`), and
//! a hook takes a verify run's record only from a line it reads as one
//! plain `goalkeeper verify` ([`plain_words`], `verify/record.rs`).
//!
//! A line is split into simple commands at `;`, `&`, `|`, newlines and
//! parentheses, with the commands inside command substitutions (`$(...)`,
//! backquotes, also inside double quotes), process substitutions
//! (`<(...)`, `>(...)`) and here-documents (whose lines may be a script)
//! read as commands of their own. Quotes and backslashes are removed as
//! the shell removes them: single quotes keep every character; in double
//! quotes a backslash escapes only `$`, `` ` ``, `"`, `\` and a newline
//! (`"\$5"` is `$5`, `"\a"` is `\a`); outside quotes it escapes any
//! character, and before a newline it joins two lines. What the shell
//! would expand (`$X`, `$(...)`, `$'...'`, a glob or a brace pattern) is
//! kept as written and marked, never evaluated.

#[cfg(test)]
mod tests;

/// The most nested substitutions and here-documents read.
pub(crate) const MAX_DEPTH: usize = 8;

/// A shell word with its quotes removed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Word {
    /// The text, expansions left as they were written (`$X`).
    pub(crate) text: String,
    /// It holds an expansion (`$X`, `$(...)`, a backquote, `$'...'`,
    /// `$"..."`, `<(...)`): the text the command gets is not known.
    pub(crate) expands: bool,
    /// It may become several words, or none: an expansion outside double
    /// quotes, or a glob or brace pattern outside quotes.
    pub(crate) splits: bool,
    /// It has a `{` outside quotes: a `,` after it makes a brace pattern.
    brace: bool,
}

impl Word {
    /// A word of `text`, as it is.
    pub(crate) fn literal(text: &str) -> Word {
        Word {
            text: text.to_owned(),
            ..Word::default()
        }
    }
}

/// The simple commands of a shell command line, with those of its
/// substitutions and here-documents (theirs first), each as its words;
/// `depth` is how deep the line is nested already.
pub(crate) fn simple_commands(text: &str, depth: usize) -> Vec<Vec<Word>> {
    Lexer::read(text, depth).commands
}

/// The words of a command line that is one plain command: words in single
/// or double quotes or with backslash escapes, separated by blanks; no
/// operator, redirection, substitution, variable, glob, comment,
/// assignment or line break anywhere (a `$` escaped in double quotes is a
/// plain `$`). Refused with what makes it not plain.
pub(crate) fn plain_words(command: &str) -> Result<Vec<String>, String> {
    let read = Lexer::read(command, 0);
    let not_plain = |what: &str| Err(format!("the command is not one plain command ({what})"));
    if let Some(what) = read.not_plain {
        return not_plain(&what);
    }
    let mut commands = read.commands.into_iter();
    let words = commands.next().unwrap_or_default();
    if commands.next().is_some() {
        return not_plain("more than one command");
    }
    if words.first().is_some_and(|w| is_assignment(&w.text)) {
        return not_plain("a variable assignment");
    }
    Ok(words.into_iter().map(|w| w.text).collect())
}

/// Whether `text` is an assignment, `NAME=value`.
pub(crate) fn is_assignment(text: &str) -> bool {
    let Some((name, _)) = text.split_once('=') else {
        return false;
    };
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
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
    /// The first thing read that a plain command does not have.
    not_plain: Option<String>,
}

impl Lexer {
    fn read(text: &str, depth: usize) -> Lexer {
        let mut lexer = Lexer {
            chars: text.chars().collect(),
            at: 0,
            depth,
            commands: Vec::new(),
            words: Vec::new(),
            word: None,
            heredocs: Vec::new(),
            not_plain: None,
        };
        lexer.run();
        lexer
    }

    fn peek(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.at + ahead).copied()
    }

    fn word(&mut self) -> &mut Word {
        self.word.get_or_insert_with(Word::default)
    }

    /// Notes `what`, which a plain command does not have (the first one).
    fn not_plain(&mut self, what: impl FnOnce() -> String) {
        if self.not_plain.is_none() {
            self.not_plain = Some(what());
        }
    }

    fn outside_quotes(&mut self, c: char) {
        self.not_plain(|| match c {
            '`' => "`` ` `` outside quotes".into(),
            c => format!("`{}` outside quotes", c.escape_debug()),
        });
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

    /// The commands of `text`, nested one level deeper, into this line's;
    /// past the deepest level read, `text` as one command whose program
    /// the shell builds (nothing nested goes unseen).
    fn nested(&mut self, text: &str) {
        if self.depth < MAX_DEPTH {
            let inner = Lexer::read(text, self.depth + 1);
            self.commands.extend(inner.commands);
        } else {
            self.commands.push(vec![Word {
                text: text.to_owned(),
                expands: true,
                splits: true,
                brace: false,
            }]);
        }
    }

    fn run(&mut self) {
        while let Some(c) = self.peek(0) {
            self.at += 1;
            match c {
                '\\' => match self.peek(0) {
                    Some('\n') => {
                        self.at += 1;
                        self.not_plain(|| "a line continuation".into());
                    }
                    Some(next) => {
                        self.at += 1;
                        self.word().text.push(next);
                    }
                    None => self.not_plain(|| "a line continuation".into()),
                },
                '\'' => {
                    let text = self.single_quoted();
                    self.word().text.push_str(&text);
                }
                '"' => self.double_quoted(),
                '$' => {
                    self.outside_quotes(c);
                    self.dollar(false);
                }
                '`' => {
                    self.outside_quotes(c);
                    self.backquoted(false);
                }
                ' ' | '\t' => self.end_word(),
                '\n' => {
                    self.outside_quotes(c);
                    self.end_command();
                    self.heredoc_bodies();
                }
                '<' | '>' if self.peek(0) == Some('(') => {
                    self.outside_quotes(c);
                    self.process_substitution(c);
                }
                ';' | '&' | '|' | '(' | ')' => {
                    self.outside_quotes(c);
                    self.end_command();
                }
                '>' | '<' => {
                    self.outside_quotes(c);
                    self.redirection(c);
                }
                '#' if self.word.is_none() => {
                    self.not_plain(|| "a comment".into());
                    while self.peek(0).is_some_and(|c| c != '\n') {
                        self.at += 1;
                    }
                }
                '*' | '?' | '[' => {
                    self.outside_quotes(c);
                    let word = self.word();
                    word.splits = true;
                    word.text.push(c);
                }
                '{' => {
                    self.outside_quotes(c);
                    let word = self.word();
                    word.brace = true;
                    word.text.push(c);
                }
                ',' => {
                    let word = self.word();
                    word.splits |= word.brace;
                    word.text.push(c);
                }
                ']' | '}' | '~' | '!' | '\r' => {
                    self.outside_quotes(c);
                    self.word().text.push(c);
                }
                c => self.word().text.push(c),
            }
        }
        self.end_command();
    }

    /// After a `'`: the text up to the closing one (consumed), as it is.
    fn single_quoted(&mut self) -> String {
        let mut text = String::new();
        while let Some(c) = self.peek(0) {
            self.at += 1;
            if c == '\'' {
                return text;
            }
            text.push(c);
        }
        self.not_plain(|| "an unclosed quote".into());
        text
    }

    /// After a `"`: its text into the word, up to the closing one. A
    /// backslash escapes only `$`, `` ` ``, `"`, `\` and a newline.
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
                '`' => {
                    self.not_plain(|| "a substitution in quotes".into());
                    self.backquoted(true);
                }
                c => self.word().text.push(c),
            }
        }
        self.not_plain(|| "an unclosed quote".into());
    }

    /// After `$`: a substitution, a parameter, `$'...'`, `$"..."`, or a
    /// plain `$`.
    fn dollar(&mut self, quoted: bool) {
        let start = self.at - 1;
        let mut splits = !quoted;
        match self.peek(0) {
            Some('(') => {
                self.at += 1;
                let arithmetic = self.peek(0) == Some('(');
                let inner = self.balanced('(', ')');
                if !arithmetic {
                    self.nested(&inner);
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
            Some('"') if !quoted => {
                // `$"..."`: a translated string, whatever the locale makes it.
                self.at += 1;
                self.double_quoted();
                self.word().expands = true;
                return;
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
        if quoted {
            self.not_plain(|| "a substitution in quotes".into());
        }
        let end = self.at.min(self.chars.len());
        let written: String = self.chars[start..end].iter().collect();
        let word = self.word();
        word.text.push_str(&written);
        word.expands = true;
        word.splits |= splits;
    }

    /// After `<(` or `>(` (`first`): the commands inside are read, and the
    /// word is a file name not known here.
    fn process_substitution(&mut self, first: char) {
        self.at += 1;
        let inner = self.balanced('(', ')');
        self.nested(&inner);
        let word = self.word();
        word.text.push(first);
        word.text.push('(');
        word.text.push_str(&inner);
        word.text.push(')');
        word.expands = true;
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
                    let quoted = self.single_quoted();
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
        self.nested(&inner);
        let word = self.word();
        word.text.push('`');
        word.text.push_str(&inner);
        word.text.push('`');
        word.expands = true;
        word.splits |= !quoted;
    }

    /// A redirection (`>`, `2>&1`, `<<EOF`, `<<<`): neither it nor its
    /// target is a word of the command. A file descriptor number before it
    /// goes too.
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
                '<' | '>' if self.peek(1) == Some('(') && self.word.is_none() => {
                    self.at += 1;
                    self.process_substitution(c);
                    break;
                }
                ' ' | '\t' | '\n' | ';' | '&' | '|' | '(' | ')' | '<' | '>' => break,
                '\'' => {
                    self.at += 1;
                    let text = self.single_quoted();
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
            self.nested(&body);
        }
    }
}
