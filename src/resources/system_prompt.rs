//! Assembling the system prompt from the files around the agent (DESIGN.md §10).
//!
//! [`assemble`] gathers, in this order:
//!
//! 1. `[base:<path>]`: the configured base prompt file, if one is set;
//! 2. `[project:<path>]`: `AGENTS.md`, `AGENTS.MD`, `CLAUDE.md` and
//!    `CLAUDE.MD` in the working directory and in each directory above it,
//!    outermost first, so the most specific rules come last and win;
//! 3. `[workspace:<name>]`: `SOUL.md`, `IDENTITY.md`, `USER.md`, `TOOLS.md`,
//!    `MEMORY.md`, `memory/<today>.md` and `memory/<yesterday>.md` from the
//!    workspace directory;
//! 4. `[skills:skills]`: one line per `skills/*/SKILL.md` of the workspace;
//! 5. `[environment:current]`: today's date and the working directory.
//!
//! Nothing here fails: a resource that cannot be used becomes a
//! [`Diagnostic`] and the rest of the prompt is still assembled.

use std::fmt;
use std::fs;
use std::io;
use std::path::{Component, Path, PathBuf};

use serde::Serialize;

use super::file::{Loaded, Seen, load};
use super::skills;
use super::{Diagnostic, serialize_path};

/// The project context file names checked in every directory, in this order.
pub const PROJECT_FILES: [&str; 4] = ["AGENTS.md", "AGENTS.MD", "CLAUDE.md", "CLAUDE.MD"];

/// The workspace files loaded before the two memory files, in this order.
pub const WORKSPACE_FILES: [&str; 5] =
    ["SOUL.md", "IDENTITY.md", "USER.md", "TOOLS.md", "MEMORY.md"];

/// What [`assemble`] reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AssembleOptions {
    /// The agent's working directory; project files are searched from here
    /// up to the file system root. A relative path is taken from the
    /// process's current directory.
    pub cwd: PathBuf,
    /// Where `SOUL.md`, `memory/` and `skills/` live (the CLI defaults it to
    /// `cwd`).
    pub workspace: PathBuf,
    /// A base prompt file placed first; a relative path is taken from `cwd`.
    pub base_prompt: Option<PathBuf>,
    /// The clock: milliseconds since the Unix epoch. "Today" and "yesterday"
    /// are UTC days.
    pub now_ms: i64,
}

/// Where a block comes from; its name in the `[kind:name]` header.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BlockKind {
    /// The configured base prompt.
    Base,
    /// An `AGENTS.md`/`CLAUDE.md` found from the working directory upwards.
    Project,
    /// A workspace file (`SOUL.md`, ..., today's and yesterday's memory).
    Workspace,
    /// The list of skills.
    Skills,
    /// The date and the working directory.
    Environment,
}

impl BlockKind {
    /// The kind as written in block headers and JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            BlockKind::Base => "base",
            BlockKind::Project => "project",
            BlockKind::Workspace => "workspace",
            BlockKind::Skills => "skills",
            BlockKind::Environment => "environment",
        }
    }
}

impl fmt::Display for BlockKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One part of the system prompt.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Block {
    /// Where it comes from.
    pub kind: BlockKind,
    /// Which one: for `project` and `base` the file's path, relative to the
    /// working directory when it is inside it, else absolute; for
    /// `workspace` the path inside the workspace (`memory/2026-11-29.md`);
    /// `skills` for the skill list; `current` for the environment.
    pub name: String,
    /// The file the text was read from; for the skill list, the `skills`
    /// directory; `None` for the environment block.
    #[serde(serialize_with = "serialize_path::option")]
    pub path: Option<PathBuf>,
    /// The text placed under the header: the file's content without a
    /// byte-order mark and without trailing whitespace.
    pub text: String,
    /// `text.len()`: what the block costs in the prompt, header excluded.
    pub bytes: usize,
}

impl Block {
    fn new(kind: BlockKind, name: String, path: Option<PathBuf>, text: String) -> Block {
        let bytes = text.len();
        Block {
            kind,
            name,
            path,
            text,
            bytes,
        }
    }

    /// The header line: `[kind:name]`.
    pub fn header(&self) -> String {
        format!("[{}:{}]", self.kind, self.name)
    }
}

/// The assembled system prompt: its blocks in order, and what was skipped.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Assembly {
    /// The blocks, in prompt order. Never empty: the environment block is
    /// always there.
    pub blocks: Vec<Block>,
    /// Resources that exist but could not be used, in discovery order.
    pub diagnostics: Vec<Diagnostic>,
}

impl Assembly {
    /// The prompt text: each block as its `[kind:name]` header line followed
    /// by its text, blocks separated by one blank line, no trailing newline.
    pub fn to_text(&self) -> String {
        let parts: Vec<String> = self
            .blocks
            .iter()
            .map(|block| format!("{}\n{}", block.header(), block.text))
            .collect();
        parts.join("\n\n")
    }
}

/// Gathers the system prompt described in the module documentation. Never
/// fails; problems are in [`Assembly::diagnostics`].
///
/// Every file candidate that exists is loaded (a directory holding both
/// `AGENTS.md` and a separate `CLAUDE.md` contributes both), but a file
/// reached twice, through a symlink, a case variant on a case-insensitive
/// file system or an ancestor seen twice, is loaded only the first time.
/// Files that are empty or only whitespace add nothing.
pub fn assemble(opts: &AssembleOptions) -> Assembly {
    let mut out = Assembly {
        blocks: Vec::new(),
        diagnostics: Vec::new(),
    };
    let mut seen = Seen::default();
    let cwd = working_dir(&opts.cwd);
    let cwd_ok = check_dir(&cwd, "working directory", &mut out.diagnostics);

    if let Some(base) = &opts.base_prompt {
        let path = cwd.join(base);
        let name = shown(&path, &cwd);
        if !add_file(&mut out, &mut seen, BlockKind::Base, name, path.clone()) {
            out.diagnostics.push(Diagnostic::new(
                &path,
                "configured base prompt does not exist; assembled without it".to_owned(),
            ));
        }
    }

    let mut dirs: Vec<&Path> = cwd.ancestors().collect();
    dirs.reverse();
    for dir in dirs {
        for file in PROJECT_FILES {
            let path = dir.join(file);
            let name = shown(&path, &cwd);
            add_file(&mut out, &mut seen, BlockKind::Project, name, path);
        }
    }

    let workspace = working_dir(&opts.workspace);
    let workspace_ok = if workspace == cwd {
        cwd_ok
    } else {
        check_dir(&workspace, "workspace directory", &mut out.diagnostics)
    };
    if workspace_ok {
        let today = format!("memory/{}.md", crate::time::utc_date(opts.now_ms));
        let yesterday = format!(
            "memory/{}.md",
            crate::time::utc_date(opts.now_ms - 86_400_000)
        );
        let names = WORKSPACE_FILES.iter().map(|s| (*s).to_owned());
        for name in names.chain([today, yesterday]) {
            let path = workspace.join(&name);
            add_file(&mut out, &mut seen, BlockKind::Workspace, name, path);
        }

        let skills_dir = workspace.join("skills");
        let found = skills::find(&skills_dir, &mut out.diagnostics);
        if !found.is_empty() {
            let mut text = String::from(
                "Skills in this workspace. Each SKILL.md holds instructions for one kind of task: \
                 read it before starting a task that matches its description.",
            );
            for skill in found {
                text.push_str("\n- ");
                text.push_str(&skill.name);
                if let Some(description) = &skill.description {
                    text.push_str(": ");
                    text.push_str(description);
                }
                text.push_str(&format!(" ({})", shown(&skill.path, &cwd)));
            }
            out.blocks.push(Block::new(
                BlockKind::Skills,
                "skills".to_owned(),
                Some(skills_dir),
                text,
            ));
        }
    }

    // The date, not the time: the prompt stays byte-identical all day, which
    // keeps a provider's prompt cache warm.
    let text = format!(
        "Current date: {} (UTC)\nWorking directory: {}",
        crate::time::utc_date(opts.now_ms),
        cwd.display()
    );
    out.blocks.push(Block::new(
        BlockKind::Environment,
        "current".to_owned(),
        None,
        text,
    ));
    out
}

/// Loads one candidate file into a block, unless it is empty or already
/// loaded under another name; an unusable file becomes a diagnostic. False
/// when nothing is at `path`.
fn add_file(
    out: &mut Assembly,
    seen: &mut Seen,
    kind: BlockKind,
    name: String,
    path: PathBuf,
) -> bool {
    if !seen.first_visit(&path) {
        return true;
    }
    match load(&path) {
        Loaded::Absent => return false,
        Loaded::Unusable(problem) => out.diagnostics.push(Diagnostic::new(&path, problem)),
        Loaded::Text(text) => {
            let text = text.trim_end();
            if !text.trim_start().is_empty() {
                let text = text.to_owned();
                out.blocks.push(Block::new(kind, name, Some(path), text));
            }
        }
    }
    true
}

/// The directory as an absolute path. A path with `..` is resolved through
/// the file system when possible (`a/link/..` is not `a` when `link` is a
/// symlink); otherwise the path is kept as written, so a working directory
/// reached through a symlinked directory keeps its logical ancestors.
fn working_dir(dir: &Path) -> PathBuf {
    let absolute = std::path::absolute(dir).unwrap_or_else(|_| dir.to_owned());
    // Rebuilt from its components: no trailing `/`, no `.`.
    let absolute: PathBuf = absolute.components().collect();
    if absolute.components().any(|c| c == Component::ParentDir)
        && let Ok(canonical) = fs::canonicalize(&absolute)
    {
        return canonical;
    }
    absolute
}

/// True when `dir` is a directory; otherwise adds a diagnostic.
fn check_dir(dir: &Path, what: &str, diagnostics: &mut Vec<Diagnostic>) -> bool {
    let problem = match fs::metadata(dir) {
        Ok(meta) if meta.is_dir() => return true,
        Ok(_) => format!("the {what} is not a directory"),
        Err(e) if e.kind() == io::ErrorKind::NotFound => format!("the {what} does not exist"),
        Err(e) => format!("the {what} cannot be read ({e})"),
    };
    diagnostics.push(Diagnostic::new(dir, problem));
    false
}

/// `path` relative to `cwd` when inside it, else as it is (absolute).
fn shown(path: &Path, cwd: &Path) -> String {
    match path.strip_prefix(cwd) {
        Ok(rel) if !rel.as_os_str().is_empty() => rel.display().to_string(),
        _ => path.display().to_string(),
    }
}

#[cfg(test)]
mod tests;
