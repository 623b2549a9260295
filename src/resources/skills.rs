//! Skills: `skills/<dir>/SKILL.md` files under the workspace, each described
//! by the `name` and `description` of its front matter. The system prompt
//! lists them (name, description, path); it never inlines them, so a large
//! skill costs nothing until the agent decides to read it.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use super::Diagnostic;
use super::file::{Loaded, load};

/// One skill found under `skills/`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Skill {
    /// From the front matter, else the directory name.
    pub name: String,
    /// From the front matter; `None` when missing (a diagnostic says so).
    pub description: Option<String>,
    /// The `SKILL.md` file.
    pub path: PathBuf,
}

/// The skills in `skills_dir`, sorted by directory name. Directories without
/// a `SKILL.md` are not skills and are passed over silently, as are hidden
/// directories (`.git`, `.DS_Store`-like clutter); a `SKILL.md` that cannot be
/// used, or has no description, adds a diagnostic.
pub(crate) fn find(skills_dir: &Path, diagnostics: &mut Vec<Diagnostic>) -> Vec<Skill> {
    let entries = match fs::read_dir(skills_dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Vec::new(),
        Err(e) => {
            let problem = if skills_dir.is_file() {
                "is not a directory; no skills listed".to_owned()
            } else {
                format!("cannot be read ({e}); no skills listed")
            };
            diagnostics.push(Diagnostic::new(skills_dir, problem));
            return Vec::new();
        }
    };
    let mut dirs: Vec<PathBuf> = entries
        .filter_map(|entry| entry.ok())
        .filter(|entry| !entry.file_name().to_string_lossy().starts_with('.'))
        .map(|entry| entry.path())
        // `is_dir` follows symlinks: a linked-in skill directory counts.
        .filter(|path| path.is_dir())
        .collect();
    dirs.sort();

    let mut skills = Vec::new();
    for dir in dirs {
        let path = dir.join("SKILL.md");
        let text = match load(&path) {
            Loaded::Absent => continue,
            Loaded::Unusable(problem) => {
                diagnostics.push(Diagnostic::new(&path, problem));
                continue;
            }
            Loaded::Text(text) => text,
        };
        let front = FrontMatter::parse(&text);
        let name = front.name.unwrap_or_else(|| {
            dir.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        });
        if front.description.is_none() {
            diagnostics.push(Diagnostic::new(
                &path,
                "has no description in its front matter; listed without one".to_owned(),
            ));
        }
        skills.push(Skill {
            name,
            description: front.description,
            path,
        });
    }
    skills
}

/// The two front-matter fields a skill listing needs.
///
/// Front matter is the block between a first line `---` and the next line
/// that is `---` (or `...`). Inside it, this reads the small part of YAML
/// that skill files use: `key: value` lines, values optionally in single or
/// double quotes, continued on following indented lines, or introduced by a
/// block indicator (`>`, `|`, with an optional `-`/`+`). Continuation lines
/// are joined with spaces. Full-line `#` comments are ignored; a `#` inside a
/// value is kept (descriptions say "C#"). Values are collapsed to one line,
/// since each skill is one line of the prompt; empty values count as absent.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct FrontMatter {
    pub name: Option<String>,
    pub description: Option<String>,
}

impl FrontMatter {
    pub fn parse(text: &str) -> FrontMatter {
        let mut lines = text.lines();
        if lines.next().map(str::trim_end) != Some("---") {
            return FrontMatter::default();
        }
        let mut block = Vec::new();
        let mut closed = false;
        for line in lines {
            let end = line.trim_end();
            if end == "---" || end == "..." {
                closed = true;
                break;
            }
            block.push(line);
        }
        // An unclosed `---` is a horizontal rule or a typo, not metadata.
        if !closed {
            return FrontMatter::default();
        }

        let mut front = FrontMatter::default();
        let mut i = 0;
        while i < block.len() {
            let line = block[i];
            i += 1;
            if line.starts_with([' ', '\t']) || line.trim_start().starts_with('#') {
                continue;
            }
            let Some((key, first)) = line.split_once(':') else {
                continue;
            };
            let mut parts = Vec::new();
            let first = first.trim();
            if !is_block_indicator(first) {
                parts.push(first);
            }
            while i < block.len() && (block[i].starts_with([' ', '\t']) || block[i].is_empty()) {
                parts.push(block[i].trim());
                i += 1;
            }
            let value = one_line(&unquote(&parts.join(" ")));
            let value = (!value.is_empty()).then_some(value);
            match key.trim() {
                "name" => front.name = value,
                "description" => front.description = value,
                _ => {}
            }
        }
        front
    }
}

fn is_block_indicator(value: &str) -> bool {
    matches!(value, ">" | "|" | ">-" | "|-" | ">+" | "|+")
}

fn unquote(value: &str) -> String {
    let value = value.trim();
    if value.len() >= 2 && value.starts_with('"') && value.ends_with('"') {
        let inner = &value[1..value.len() - 1];
        let mut out = String::with_capacity(inner.len());
        let mut chars = inner.chars();
        while let Some(c) = chars.next() {
            if c != '\\' {
                out.push(c);
                continue;
            }
            match chars.next() {
                Some('n' | 't') => out.push(' '),
                Some(other) => out.push(other),
                None => out.push('\\'),
            }
        }
        return out;
    }
    if value.len() >= 2 && value.starts_with('\'') && value.ends_with('\'') {
        return value[1..value.len() - 1].replace("''", "'");
    }
    value.to_owned()
}

/// Every run of whitespace (line breaks included) becomes one space.
fn one_line(value: &str) -> String {
    value.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> (Option<String>, Option<String>) {
        let front = FrontMatter::parse(text);
        (front.name, front.description)
    }

    fn some(name: &str, description: &str) -> (Option<String>, Option<String>) {
        (Some(name.to_owned()), Some(description.to_owned()))
    }

    #[test]
    fn plain_and_quoted_values() {
        assert_eq!(
            parse("---\nname: review\ndescription: Review a diff.\n---\n# Body\n"),
            some("review", "Review a diff.")
        );
        assert_eq!(
            parse("---\r\nname: \"quoted: yes\"\r\ndescription: 'it''s fine'\r\n---\r\n"),
            some("quoted: yes", "it's fine")
        );
        assert_eq!(
            parse("---\nname: \"a \\\"b\\\"\"\ndescription: x\n...\n"),
            some("a \"b\"", "x")
        );
    }

    #[test]
    fn folded_and_continued_values() {
        let text = "---\nname: deploy\ndescription: >\n  Ship the build\n  to staging.\nlicense: MIT\n---\n";
        assert_eq!(parse(text), some("deploy", "Ship the build to staging."));
        let text = "---\ndescription: Runs the\n  whole suite, C# included\n# a comment\nname: tests\n---\n";
        assert_eq!(
            parse(text),
            some("tests", "Runs the whole suite, C# included")
        );
    }

    #[test]
    fn no_front_matter() {
        assert_eq!(
            parse("# Just a heading\nname: not metadata\n"),
            (None, None)
        );
        assert_eq!(parse("---\nname: never closed\n"), (None, None));
        assert_eq!(parse(""), (None, None));
        assert_eq!(parse("---\nname:\ndescription: ''\n---\n"), (None, None));
    }
}
