//! The shell's quoting, read as POSIX says, and what a plain command is.

use super::*;

/// The words of each simple command of `line`.
fn words(line: &str) -> Vec<Vec<String>> {
    simple_commands(line, 0)
        .into_iter()
        .map(|c| c.into_iter().map(|w| w.text).collect())
        .collect()
}

fn one(line: &str) -> Vec<String> {
    plain_words(line).unwrap_or_else(|e| panic!("{line}: {e}"))
}

#[test]
fn each_quoting_form_reads_as_the_shell_reads_it() {
    for (line, expected) in [
        // Single quotes keep every character, a backslash too.
        (r"echo 'a \$ \\ b'", vec!["echo", r"a \$ \\ b"]),
        ("echo 'it'\\''s'", vec!["echo", "it's"]),
        // In double quotes a backslash escapes $ ` " \ and a newline only.
        (r#"echo "Pay the \$5 fee""#, vec!["echo", "Pay the $5 fee"]),
        (r#"echo "a \` b""#, vec!["echo", "a ` b"]),
        (r#"echo "say \"hi\"""#, vec!["echo", r#"say "hi""#]),
        (r#"echo "back\\slash""#, vec!["echo", r"back\slash"]),
        ("echo \"one\\\ntwo\"", vec!["echo", "onetwo"]),
        (r#"echo "\a\n\'""#, vec!["echo", r"\a\n\'"]),
        (r#"echo "cost $ 5""#, vec!["echo", "cost $ 5"]),
        // Outside quotes a backslash escapes any character, and joins lines.
        (r"echo a\ b \$x \\ \'", vec!["echo", "a b", "$x", r"\", "'"]),
        // Quotes join into one word; empty quotes are a word.
        (r#"echo 'a'"b"c '' """#, vec!["echo", "abc", "", ""]),
        // Blanks separate words, however many.
        ("  echo \t a   b ", vec!["echo", "a", "b"]),
    ] {
        assert_eq!(words(line), std::slice::from_ref(&expected), "{line}");
        assert_eq!(one(line), expected, "{line}");
    }
    // Joined lines are read as one, though no plain command has them.
    assert_eq!(words("echo one\\\ntwo"), [["echo", "onetwo"]]);
}

#[test]
fn an_expansion_is_kept_as_written_and_marked() {
    let read = |line: &str| simple_commands(line, 0).pop().unwrap().remove(1);
    for (line, text, splits) in [
        ("x $HOME", "$HOME", true),
        ("x \"$HOME\"", "$HOME", false),
        ("x \"a${B}c\"", "a${B}c", false),
        ("x $(date)", "$(date)", true),
        ("x `date`", "`date`", true),
        ("x $'a\\tb'", "$'a\\tb'", false),
        ("x <(ls)", "<(ls)", false),
    ] {
        let word = read(line);
        assert_eq!(
            (word.text.as_str(), word.expands, word.splits),
            (text, true, splits),
            "{line}"
        );
    }
    let translated = read("x $\"hi\"");
    assert!(translated.expands && translated.text == "hi");
    for (line, splits) in [("x a*", true), ("x '*'", false), ("x \\*", false)] {
        let word = read(line);
        assert_eq!((word.expands, word.splits), (false, splits), "{line}");
    }
    let brace = read("x {a,b}");
    assert!(brace.splits && !brace.expands);
    assert!(!read("x {}").splits);
}

#[test]
fn a_line_is_split_into_simple_commands_with_the_nested_ones() {
    assert_eq!(
        words("a 1; b 2 && c | d\ne & f (g) $(h 3) `i` <(j) >(k)"),
        vec![
            vec!["a", "1"],
            vec!["b", "2"],
            vec!["c"],
            vec!["d"],
            vec!["e"],
            vec!["f"],
            vec!["g"],
            vec!["h", "3"],
            vec!["i"],
            vec!["j"],
            vec!["k"],
            vec!["$(h 3)", "`i`", "<(j)", ">(k)"],
        ]
    );
    // Redirections are no words; a here-document's body is read too.
    assert_eq!(
        words("cat <<EOF 2>&1 >out\nrun it\nEOF\nwhile read x; do :; done < <(ls)"),
        vec![
            vec!["cat"],
            vec!["run", "it"],
            vec!["while", "read", "x"],
            vec!["do", ":"],
            vec!["ls"],
            vec!["done"],
        ]
    );
}

#[test]
fn a_plain_command_has_words_and_nothing_else() {
    assert_eq!(
        one("goalkeeper verify --task \"Pay the \\$5 fee\""),
        ["goalkeeper", "verify", "--task", "Pay the $5 fee"]
    );
    assert_eq!(one(""), Vec::<String>::new());
    for (line, what) in [
        ("a && b", "`&` outside quotes"),
        ("a; b", "`;` outside quotes"),
        ("a | b", "`|` outside quotes"),
        ("a > out", "`>` outside quotes"),
        ("a < in", "`<` outside quotes"),
        ("(a)", "`(` outside quotes"),
        ("a\nb", "`\\n` outside quotes"),
        ("a\rb", "`\\r` outside quotes"),
        ("a $B", "`$` outside quotes"),
        ("a $(b)", "`$` outside quotes"),
        ("a `b`", "`` ` `` outside quotes"),
        ("a $'b'", "`$` outside quotes"),
        ("a \"$B\"", "a substitution in quotes"),
        ("a \"$(b)\"", "a substitution in quotes"),
        ("a \"`b`\"", "a substitution in quotes"),
        ("a *", "`*` outside quotes"),
        ("a {b,c}", "`{` outside quotes"),
        ("a ~/b", "`~` outside quotes"),
        ("! a", "`!` outside quotes"),
        ("a # b", "a comment"),
        ("a 'b", "an unclosed quote"),
        ("a \"b", "an unclosed quote"),
        ("a \\\nb", "a line continuation"),
        ("A=1 a", "a variable assignment"),
    ] {
        assert_eq!(
            plain_words(line).unwrap_err(),
            format!("the command is not one plain command ({what})"),
            "{line:?}"
        );
    }
}
