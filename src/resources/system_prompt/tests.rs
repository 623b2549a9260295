use std::fs;
use std::path::{Path, PathBuf};

use tempfile::TempDir;

use super::*;
use crate::resources::file::MAX_RESOURCE_BYTES;

/// 2026-11-29T18:56:07Z.
const NOW: i64 = 1_795_978_567_000;

/// A temporary directory tree; `root` is canonical so that paths built from
/// it compare equal to what the assembler sees.
struct Tree {
    _tmp: TempDir,
    root: PathBuf,
}

impl Tree {
    fn new() -> Tree {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        Tree { _tmp: tmp, root }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    fn write(&self, rel: &str, content: impl AsRef<[u8]>) -> PathBuf {
        let path = self.path(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, content).unwrap();
        path
    }

    fn dir(&self, rel: &str) -> PathBuf {
        let path = self.path(rel);
        fs::create_dir_all(&path).unwrap();
        path
    }

    fn options(&self, cwd: &str) -> AssembleOptions {
        let cwd = self.path(cwd);
        AssembleOptions {
            workspace: cwd.clone(),
            cwd,
            base_prompt: None,
            now_ms: NOW,
        }
    }

    /// Assembles, keeping only what comes from inside the tree: the walk
    /// goes up to `/`, and a machine may well have a `/tmp/AGENTS.md`.
    fn assemble(&self, opts: &AssembleOptions) -> Assembly {
        let mut assembly = assemble(opts);
        assembly
            .blocks
            .retain(|b| b.path.as_ref().is_none_or(|p| p.starts_with(&self.root)));
        assembly
            .diagnostics
            .retain(|d| d.path.starts_with(&self.root));
        assembly
    }

    /// The diagnostics as printed, with the tree's root written `<root>`.
    fn diagnostics(&self, assembly: &Assembly) -> Vec<String> {
        let root = self.root.display().to_string();
        assembly
            .diagnostics
            .iter()
            .map(|d| d.to_string().replace(&root, "<root>"))
            .collect()
    }

    /// `kind:name` of every block, with the tree's root written `<root>`.
    fn headers(&self, assembly: &Assembly) -> Vec<String> {
        let root = self.root.display().to_string();
        assembly
            .blocks
            .iter()
            .map(|b| format!("{}:{}", b.kind, b.name).replace(&root, "<root>"))
            .collect()
    }
}

#[cfg(unix)]
fn symlink(target: &str, at: &Path) {
    std::os::unix::fs::symlink(target, at).unwrap();
}

#[test]
fn nested_agents_files_load_outermost_first() {
    let tree = Tree::new();
    tree.write("AGENTS.md", "outer rules\n");
    tree.write("app/AGENTS.md", "app rules\n");
    tree.write("app/crate/AGENTS.md", "crate rules\n\n");
    let assembly = tree.assemble(&tree.options("app/crate"));
    assert_eq!(
        tree.headers(&assembly),
        [
            "project:<root>/AGENTS.md",
            "project:<root>/app/AGENTS.md",
            "project:AGENTS.md",
            "environment:current",
        ]
    );
    let texts: Vec<&str> = assembly.blocks.iter().map(|b| b.text.as_str()).collect();
    assert_eq!(texts[..3], ["outer rules", "app rules", "crate rules"]);
    assert_eq!(
        assembly.blocks[2].path,
        Some(tree.path("app/crate/AGENTS.md"))
    );
    assert_eq!(assembly.blocks[2].bytes, "crate rules".len());
    assert!(assembly.diagnostics.is_empty());
}

#[cfg(unix)]
#[test]
fn a_file_reached_twice_through_symlinks_is_loaded_once() {
    let tree = Tree::new();
    tree.write("proj/AGENTS.md", "project rules");
    tree.dir("proj/sub");
    // `proj/sub/back` is `proj` again: walking up from it passes `proj`
    // twice, once as `proj/sub/back` and once as itself.
    symlink("..", &tree.path("proj/sub/back"));
    // And a file link in `sub` to the same AGENTS.md.
    symlink("../AGENTS.md", &tree.path("proj/sub/CLAUDE.md"));
    let assembly = tree.assemble(&tree.options("proj/sub/back"));
    assert_eq!(
        tree.headers(&assembly),
        ["project:<root>/proj/AGENTS.md", "environment:current"]
    );
    assert!(assembly.diagnostics.is_empty());
    // The working directory keeps its logical spelling.
    let env = &assembly.blocks[1].text;
    let shown = format!(
        "Working directory: {}",
        tree.path("proj/sub/back").display()
    );
    assert!(env.ends_with(&shown), "{env}");
}

#[test]
fn claude_md_alone_is_a_project_file() {
    let tree = Tree::new();
    tree.write("CLAUDE.md", "claude rules");
    let assembly = tree.assemble(&tree.options(""));
    assert_eq!(
        tree.headers(&assembly),
        ["project:CLAUDE.md", "environment:current"]
    );
    assert_eq!(assembly.blocks[0].text, "claude rules");
}

#[test]
fn every_candidate_name_in_a_directory_is_loaded() {
    // On a case-sensitive file system these are four different files; on a
    // case-insensitive one they are one file, loaded once.
    let tree = Tree::new();
    for name in PROJECT_FILES {
        tree.write(name, name);
    }
    let assembly = tree.assemble(&tree.options(""));
    let mut headers = tree.headers(&assembly);
    headers.pop();
    let distinct = fs::read_dir(&tree.root).unwrap().count();
    assert_eq!(headers.len(), distinct);
    assert_eq!(headers[0], "project:AGENTS.md");
}

#[test]
fn a_directory_in_place_of_a_file_is_a_diagnostic() {
    let tree = Tree::new();
    tree.dir("AGENTS.md");
    tree.write("CLAUDE.md", "still loaded");
    let assembly = tree.assemble(&tree.options(""));
    assert_eq!(
        tree.diagnostics(&assembly),
        ["<root>/AGENTS.md: is a directory, not a file; skipped"]
    );
    assert_eq!(
        tree.headers(&assembly),
        ["project:CLAUDE.md", "environment:current"]
    );
}

#[cfg(unix)]
#[test]
fn an_unreadable_file_is_a_diagnostic() {
    use std::os::unix::fs::PermissionsExt;
    let tree = Tree::new();
    let path = tree.write("AGENTS.md", "secret");
    fs::set_permissions(&path, fs::Permissions::from_mode(0o000)).unwrap();
    if fs::read(&path).is_ok() {
        // Running as root: mode 000 does not stop root from reading, so
        // there is nothing to observe here. The directory case above covers
        // an existing file that cannot be read.
        return;
    }
    let assembly = tree.assemble(&tree.options(""));
    assert_eq!(
        tree.diagnostics(&assembly),
        ["<root>/AGENTS.md: cannot be read (Permission denied (os error 13)); skipped"]
    );
    assert_eq!(tree.headers(&assembly), ["environment:current"]);
}

#[cfg(unix)]
#[test]
fn a_symlink_loop_and_a_fifo_are_diagnostics() {
    // Unreadable even for root, unlike mode 000.
    let tree = Tree::new();
    symlink("AGENTS.md", &tree.path("AGENTS.md"));
    let fifo = std::process::Command::new("mkfifo")
        .arg(tree.path("CLAUDE.md"))
        .status()
        .is_ok_and(|s| s.success());
    let assembly = tree.assemble(&tree.options(""));
    let diagnostics = tree.diagnostics(&assembly);
    // "Too many levels of symbolic links (os error 40)" on Linux; the
    // wording and number differ elsewhere.
    assert!(
        diagnostics[0].starts_with("<root>/AGENTS.md: cannot be read (")
            && diagnostics[0].ends_with("); skipped"),
        "{diagnostics:?}"
    );
    if fifo {
        // Reading a FIFO would block until a writer comes: never opened.
        assert_eq!(
            diagnostics[1..],
            ["<root>/CLAUDE.md: is not a regular file; skipped"]
        );
    }
    assert_eq!(tree.headers(&assembly), ["environment:current"]);
}

#[cfg(unix)]
#[test]
fn a_broken_symlink_is_a_diagnostic() {
    let tree = Tree::new();
    symlink("gone.md", &tree.path("AGENTS.md"));
    let assembly = tree.assemble(&tree.options(""));
    assert_eq!(
        tree.diagnostics(&assembly),
        ["<root>/AGENTS.md: is a broken symlink (to gone.md); skipped"]
    );
}

#[test]
fn invalid_utf8_is_a_diagnostic() {
    let tree = Tree::new();
    tree.write("AGENTS.md", b"ok\xff\xfe");
    tree.write("SOUL.md", b"\xef\xbb\xbfBOM removed\r\n");
    let assembly = tree.assemble(&tree.options(""));
    assert_eq!(
        tree.diagnostics(&assembly),
        ["<root>/AGENTS.md: is not valid UTF-8 (invalid byte at offset 2); skipped"]
    );
    assert_eq!(
        tree.headers(&assembly),
        ["workspace:SOUL.md", "environment:current"]
    );
    assert_eq!(assembly.blocks[0].text, "BOM removed");
}

#[test]
fn files_over_256_kib_are_diagnostics() {
    let tree = Tree::new();
    let limit = MAX_RESOURCE_BYTES as usize;
    tree.write("AGENTS.md", "a".repeat(limit + 1));
    tree.write("MEMORY.md", "m".repeat(limit));
    let assembly = tree.assemble(&tree.options(""));
    assert_eq!(
        tree.diagnostics(&assembly),
        ["<root>/AGENTS.md: is larger than 256 KiB (262145 bytes); skipped"]
    );
    // Exactly at the limit is still loaded.
    assert_eq!(
        tree.headers(&assembly),
        ["workspace:MEMORY.md", "environment:current"]
    );
    assert_eq!(assembly.blocks[0].bytes, limit);
}

#[test]
fn workspace_files_in_order_missing_ones_silent_empty_ones_skipped() {
    let tree = Tree::new();
    tree.write("ws/MEMORY.md", "remember");
    tree.write("ws/USER.md", "the user");
    tree.write("ws/SOUL.md", "the soul");
    tree.write("ws/TOOLS.md", "  \n\n");
    let mut opts = tree.options("");
    opts.workspace = tree.path("ws");
    let assembly = tree.assemble(&opts);
    assert_eq!(
        tree.headers(&assembly),
        [
            "workspace:SOUL.md",
            "workspace:USER.md",
            "workspace:MEMORY.md",
            "environment:current",
        ]
    );
    assert_eq!(assembly.blocks[0].path, Some(tree.path("ws/SOUL.md")));
    assert!(assembly.diagnostics.is_empty());
}

#[test]
fn memory_files_of_today_and_yesterday_follow_the_clock() {
    let tree = Tree::new();
    for day in [
        "2026-11-27",
        "2026-11-28",
        "2026-11-29",
        "2026-11-30",
        "2026-12-31",
        "2027-01-01",
        "2028-02-29",
        "2028-03-01",
    ] {
        tree.write(&format!("memory/{day}.md"), format!("notes of {day}"));
    }
    let memory = |now_ms: i64| {
        let mut opts = tree.options("");
        opts.now_ms = now_ms;
        let assembly = tree.assemble(&opts);
        let mut headers = tree.headers(&assembly);
        headers.pop();
        assert_eq!(
            assembly.blocks[0].text,
            format!(
                "notes of {}",
                &headers[0]["workspace:memory/".len()..][..10]
            )
        );
        headers
    };
    assert_eq!(
        memory(NOW),
        [
            "workspace:memory/2026-11-29.md",
            "workspace:memory/2026-11-28.md"
        ]
    );
    // Midnight UTC starts a new year.
    let new_year = 1_798_761_600_000;
    assert_eq!(
        memory(new_year),
        [
            "workspace:memory/2027-01-01.md",
            "workspace:memory/2026-12-31.md"
        ]
    );
    // One millisecond earlier is still the old year, whose yesterday is absent.
    assert_eq!(memory(new_year - 1), ["workspace:memory/2026-12-31.md"]);
    // 2028 is a leap year.
    let march_first = 1_835_481_600_000;
    assert_eq!(
        memory(march_first),
        [
            "workspace:memory/2028-03-01.md",
            "workspace:memory/2028-02-29.md"
        ]
    );
}

#[test]
fn skills_are_listed_from_front_matter() {
    let tree = Tree::new();
    tree.write(
        "skills/review/SKILL.md",
        "---\nname: code-review\ndescription: >\n  Review a diff\n  for bugs.\n---\n# Long body, not inlined\n",
    );
    tree.write("skills/bare/SKILL.md", "# No front matter\n");
    tree.write(
        "skills/deploy/SKILL.md",
        "---\ndescription: \"Ship it: staging first\"\n---\n",
    );
    tree.dir("skills/notes"); // no SKILL.md: not a skill
    tree.write("skills/.hidden/SKILL.md", "---\nname: hidden\n---\n");
    tree.write("skills/README.md", "a file, not a skill directory");
    let assembly = tree.assemble(&tree.options(""));
    assert_eq!(
        tree.headers(&assembly),
        ["skills:skills", "environment:current"]
    );
    assert_eq!(
        assembly.blocks[0].text,
        "Skills in this workspace. Each SKILL.md holds instructions for one kind of task: \
         read it before starting a task that matches its description.\n\
         - bare (skills/bare/SKILL.md)\n\
         - deploy: Ship it: staging first (skills/deploy/SKILL.md)\n\
         - code-review: Review a diff for bugs. (skills/review/SKILL.md)"
    );
    assert_eq!(assembly.blocks[0].path, Some(tree.path("skills")));
    assert_eq!(
        tree.diagnostics(&assembly),
        ["<root>/skills/bare/SKILL.md: has no description in its front matter; listed without one"]
    );
}

#[test]
fn missing_base_prompt_and_working_directory_are_diagnostics() {
    let tree = Tree::new();
    let mut opts = tree.options("gone");
    opts.base_prompt = Some(PathBuf::from("base.md"));
    let assembly = tree.assemble(&opts);
    assert_eq!(
        tree.diagnostics(&assembly),
        [
            "<root>/gone: the working directory does not exist",
            "<root>/gone/base.md: configured base prompt does not exist; assembled without it",
        ]
    );
    assert_eq!(tree.headers(&assembly), ["environment:current"]);
}

#[test]
fn to_text_renders_headers_and_blank_lines() {
    let tree = Tree::new();
    tree.write("AGENTS.md", "# Outer\nBe brief.\n");
    tree.write("proj/AGENTS.md", "Run `cargo test`.\n");
    tree.write("proj/prompts/base.md", "You are a careful engineer.\n");
    tree.write("ws/SOUL.md", "Calm.\n");
    tree.write("ws/memory/2026-11-28.md", "Shipped 0.1.\n");
    tree.write(
        "ws/skills/review/SKILL.md",
        "---\nname: review\ndescription: Review a diff.\n---\n",
    );
    let opts = AssembleOptions {
        cwd: tree.path("proj"),
        workspace: tree.path("ws"),
        base_prompt: Some(PathBuf::from("prompts/base.md")),
        now_ms: NOW,
    };
    let text = tree
        .assemble(&opts)
        .to_text()
        .replace(&tree.root.display().to_string(), "<root>");
    assert_eq!(
        text,
        "[base:prompts/base.md]\n\
         You are a careful engineer.\n\
         \n\
         [project:<root>/AGENTS.md]\n\
         # Outer\n\
         Be brief.\n\
         \n\
         [project:AGENTS.md]\n\
         Run `cargo test`.\n\
         \n\
         [workspace:SOUL.md]\n\
         Calm.\n\
         \n\
         [workspace:memory/2026-11-28.md]\n\
         Shipped 0.1.\n\
         \n\
         [skills:skills]\n\
         Skills in this workspace. Each SKILL.md holds instructions for one kind of task: \
         read it before starting a task that matches its description.\n\
         - review: Review a diff. (<root>/ws/skills/review/SKILL.md)\n\
         \n\
         [environment:current]\n\
         Current date: 2026-11-29 (UTC)\n\
         Working directory: <root>/proj"
    );
}

#[test]
fn json_shape() {
    let tree = Tree::new();
    tree.write("AGENTS.md", "rules");
    tree.write("SOUL.md", b"\xff");
    let assembly = tree.assemble(&tree.options(""));
    let json = serde_json::to_value(&assembly).unwrap();
    let root = tree.root.display().to_string();
    assert_eq!(
        json,
        serde_json::json!({
            "blocks": [
                {"kind": "project", "name": "AGENTS.md", "path": format!("{root}/AGENTS.md"),
                 "text": "rules", "bytes": 5},
                {"kind": "environment", "name": "current", "path": null,
                 "text": format!("Current date: 2026-11-29 (UTC)\nWorking directory: {root}"),
                 "bytes": 50 + root.len()},
            ],
            "diagnostics": [
                {"path": format!("{root}/SOUL.md"),
                 "problem": "is not valid UTF-8 (invalid byte at offset 0); skipped"},
            ],
        })
    );
}
