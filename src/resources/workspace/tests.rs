#![cfg(unix)]

use std::fs;
use std::os::unix::fs::{MetadataExt, symlink};
use std::path::{Path, PathBuf};

use tempfile::TempDir;

use super::*;

/// 2026-11-29T18:56:07Z.
const NOW: i64 = 1_795_978_567_000;
const STAMP: &str = "20261129T185607Z";

/// A temporary directory `root` with the workspace `root/ws` in it, so
/// tests can place files outside the workspace too.
struct Tree {
    _tmp: TempDir,
    root: PathBuf,
    ws: PathBuf,
}

impl Tree {
    fn new() -> Tree {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        let ws = root.join("ws");
        fs::create_dir(&ws).unwrap();
        Tree {
            _tmp: tmp,
            root,
            ws,
        }
    }

    fn with_agents() -> Tree {
        let tree = Tree::new();
        tree.write("AGENTS.md", "the rules");
        tree
    }

    fn write(&self, name: &str, content: &str) {
        fs::write(self.ws.join(name), content).unwrap();
    }

    fn link(&self, name: &str, target: impl AsRef<Path>) {
        symlink(target, self.ws.join(name)).unwrap();
    }

    fn read_link(&self, name: &str) -> PathBuf {
        fs::read_link(self.ws.join(name)).unwrap()
    }

    /// Every entry of the workspace: name and content, link target or
    /// `<dir>`. Equal listings mean nothing changed.
    fn listing(&self) -> Vec<(String, String)> {
        let mut entries: Vec<(String, String)> = fs::read_dir(&self.ws)
            .unwrap()
            .map(|entry| {
                let entry = entry.unwrap();
                let path = entry.path();
                let kind = entry.file_type().unwrap();
                let what = if kind.is_symlink() {
                    format!("-> {}", fs::read_link(&path).unwrap().display())
                } else if kind.is_dir() {
                    "<dir>".to_owned()
                } else {
                    fs::read_to_string(&path).unwrap()
                };
                (entry.file_name().to_string_lossy().into_owned(), what)
            })
            .collect();
        entries.sort();
        entries
    }

    /// The refusal message of `link`, with the root written `<root>`;
    /// asserts that nothing in the workspace changed.
    fn refusal(&self) -> String {
        let before = self.listing();
        let error = link(&self.ws, NOW).unwrap_err();
        assert!(matches!(error, Error::Rejected(_)), "{error:?}");
        assert_eq!(self.listing(), before, "a refusal changed the workspace");
        error
            .to_string()
            .replace(&self.root.display().to_string(), "<root>")
    }

    fn status_lines(&self) -> Vec<String> {
        status(&self.ws).unwrap().lines()
    }
}

fn pairs(entries: &[(&str, &str)]) -> Vec<(String, String)> {
    entries
        .iter()
        .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
        .collect()
}

#[test]
fn a_fresh_directory_gets_both_links() {
    let tree = Tree::with_agents();
    let report = link(&tree.ws, NOW).unwrap();
    assert_eq!(
        report.lines(),
        [
            "CLAUDE.md: linked to AGENTS.md",
            "GEMINI.md: linked to AGENTS.md"
        ]
    );
    assert!(report.changed());
    assert_eq!(tree.read_link("CLAUDE.md"), Path::new("AGENTS.md"));
    assert_eq!(tree.read_link("GEMINI.md"), Path::new("AGENTS.md"));
    assert_eq!(
        fs::read_to_string(tree.ws.join("GEMINI.md")).unwrap(),
        "the rules"
    );
    assert!(status(&tree.ws).unwrap().in_sync());
}

#[test]
fn a_regular_claude_md_is_backed_up_with_its_content() {
    let tree = Tree::with_agents();
    tree.write("CLAUDE.md", "old claude notes");
    // A backup from an earlier run in the same second is never overwritten.
    tree.write("GEMINI.md", "old gemini notes");
    tree.write(&format!("GEMINI.md.bak-{STAMP}"), "earlier backup");
    let report = link(&tree.ws, NOW).unwrap();
    assert_eq!(
        report.to_string(),
        format!(
            "CLAUDE.md: was a regular file, moved to CLAUDE.md.bak-{STAMP}; linked to AGENTS.md\n\
             GEMINI.md: was a regular file, moved to GEMINI.md.bak-{STAMP}-2; linked to AGENTS.md"
        )
    );
    assert_eq!(
        tree.listing(),
        pairs(&[
            ("AGENTS.md", "the rules"),
            ("CLAUDE.md", "-> AGENTS.md"),
            (&format!("CLAUDE.md.bak-{STAMP}"), "old claude notes"),
            ("GEMINI.md", "-> AGENTS.md"),
            (&format!("GEMINI.md.bak-{STAMP}"), "earlier backup"),
            (&format!("GEMINI.md.bak-{STAMP}-2"), "old gemini notes"),
        ])
    );
}

#[test]
fn wrong_links_are_replaced() {
    let tree = Tree::with_agents();
    tree.write("other.md", "other");
    tree.link("CLAUDE.md", "other.md");
    // Dangling, and absolute (right file, but breaks when the directory moves).
    tree.link("GEMINI.md", tree.ws.join("AGENTS.md"));
    let report = link(&tree.ws, NOW).unwrap();
    assert_eq!(
        report
            .to_string()
            .replace(&tree.root.display().to_string(), "<root>"),
        "CLAUDE.md: pointed to other.md; relinked to AGENTS.md\n\
         GEMINI.md: pointed to <root>/ws/AGENTS.md; relinked to AGENTS.md"
    );
    assert_eq!(
        tree.listing(),
        pairs(&[
            ("AGENTS.md", "the rules"),
            ("CLAUDE.md", "-> AGENTS.md"),
            ("GEMINI.md", "-> AGENTS.md"),
            ("other.md", "other"),
        ])
    );

    let tree = Tree::with_agents();
    tree.link("CLAUDE.md", "gone.md");
    tree.link("GEMINI.md", "../AGENTS.md");
    assert_eq!(
        link(&tree.ws, NOW).unwrap().lines(),
        [
            "CLAUDE.md: pointed to gone.md; relinked to AGENTS.md",
            "GEMINI.md: pointed to ../AGENTS.md; relinked to AGENTS.md",
        ]
    );
    assert_eq!(tree.read_link("CLAUDE.md"), Path::new("AGENTS.md"));
}

#[test]
fn a_correct_link_is_left_untouched() {
    let tree = Tree::with_agents();
    tree.link("CLAUDE.md", "AGENTS.md");
    tree.link("GEMINI.md", "./AGENTS.md");
    let before: Vec<_> = LINK_NAMES
        .iter()
        .map(|name| {
            let meta = fs::symlink_metadata(tree.ws.join(name)).unwrap();
            (meta.ino(), meta.mtime(), meta.mtime_nsec())
        })
        .collect();
    let report = link(&tree.ws, NOW).unwrap();
    assert_eq!(
        report.lines(),
        [
            "CLAUDE.md: already linked to AGENTS.md",
            "GEMINI.md: already linked to AGENTS.md",
        ]
    );
    assert!(!report.changed());
    let after: Vec<_> = LINK_NAMES
        .iter()
        .map(|name| {
            let meta = fs::symlink_metadata(tree.ws.join(name)).unwrap();
            (meta.ino(), meta.mtime(), meta.mtime_nsec())
        })
        .collect();
    assert_eq!(before, after);
    assert_eq!(tree.read_link("GEMINI.md"), Path::new("./AGENTS.md"));
}

#[test]
fn linking_twice_changes_nothing_the_second_time() {
    let tree = Tree::with_agents();
    tree.write("CLAUDE.md", "notes");
    assert!(link(&tree.ws, NOW).unwrap().changed());
    let listing = tree.listing();
    assert!(!link(&tree.ws, NOW + 1000).unwrap().changed());
    assert_eq!(tree.listing(), listing);
}

#[test]
fn a_missing_agents_md_is_refused() {
    let tree = Tree::new();
    tree.write("CLAUDE.md", "only claude");
    assert_eq!(
        tree.refusal(),
        "cannot link in <root>/ws: AGENTS.md is missing; create it first: it is the single \
         source that CLAUDE.md and GEMINI.md link to. Nothing was changed."
    );
}

#[test]
fn a_missing_or_non_directory_dir_is_refused() {
    let tree = Tree::new();
    let missing = tree.root.join("nope");
    let error = link(&missing, NOW).unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "{} does not exist; give the directory that holds AGENTS.md",
            missing.display()
        )
    );
    assert!(!missing.exists());
    tree.write("AGENTS.md", "a file");
    let file = tree.ws.join("AGENTS.md");
    let error = status(&file).unwrap_err();
    assert!(matches!(error, Error::Rejected(_)));
    assert_eq!(
        error.to_string(),
        format!(
            "{} is not a directory; give the directory that holds AGENTS.md",
            file.display()
        )
    );
}

#[test]
fn an_agents_md_link_escaping_with_dot_dot_is_refused() {
    let tree = Tree::new();
    fs::write(tree.root.join("outside.md"), "outside").unwrap();
    tree.link("AGENTS.md", "../outside.md");
    assert_eq!(
        tree.refusal(),
        "cannot link in <root>/ws: AGENTS.md is a symlink to ../outside.md, which leads outside \
         the directory; the single source must be a file inside it. Nothing was changed."
    );
    // Climbing out and back in still passes outside the directory.
    let tree = Tree::new();
    tree.write("real.md", "inside");
    tree.link("AGENTS.md", "../ws/real.md");
    assert!(
        tree.refusal()
            .contains("is a symlink to ../ws/real.md, which leads outside")
    );
}

#[test]
fn an_agents_md_link_to_an_absolute_path_is_refused() {
    let tree = Tree::new();
    fs::write(tree.root.join("outside.md"), "outside").unwrap();
    tree.link("AGENTS.md", tree.root.join("outside.md"));
    tree.write("CLAUDE.md", "kept as is");
    assert_eq!(
        tree.refusal(),
        "cannot link in <root>/ws: AGENTS.md is a symlink to the absolute path \
         <root>/outside.md; the single source must be a file inside the directory. \
         Nothing was changed."
    );
}

#[test]
fn an_agents_md_escaping_through_a_symlinked_directory_is_refused() {
    let tree = Tree::new();
    fs::create_dir(tree.root.join("elsewhere")).unwrap();
    fs::write(tree.root.join("elsewhere/AGENTS.md"), "elsewhere").unwrap();
    tree.link("docs", "../elsewhere");
    tree.link("AGENTS.md", "docs/AGENTS.md");
    assert_eq!(
        tree.refusal(),
        "cannot link in <root>/ws: AGENTS.md is a symlink to docs/AGENTS.md, which leads \
         outside the directory (to <root>/elsewhere/AGENTS.md); the single source must be a \
         file inside it. Nothing was changed."
    );
}

#[test]
fn an_agents_md_link_inside_the_directory_is_accepted() {
    let tree = Tree::new();
    fs::create_dir(tree.ws.join("docs")).unwrap();
    tree.write("docs/rules.md", "rules in docs");
    tree.link("AGENTS.md", "docs/rules.md");
    link(&tree.ws, NOW).unwrap();
    assert_eq!(
        fs::read_to_string(tree.ws.join("CLAUDE.md")).unwrap(),
        "rules in docs"
    );
}

#[test]
fn an_agents_md_link_through_claude_md_is_refused() {
    // Linking CLAUDE.md to AGENTS.md would close the loop.
    let tree = Tree::new();
    tree.write("CLAUDE.md", "the real text");
    tree.link("AGENTS.md", "CLAUDE.md");
    assert_eq!(
        tree.refusal(),
        "cannot link in <root>/ws: AGENTS.md is a symlink through CLAUDE.md, which is to \
         become a link to it (a loop); make AGENTS.md the real file. Nothing was changed."
    );
}

#[test]
fn a_claude_md_directory_is_refused() {
    let tree = Tree::with_agents();
    fs::create_dir(tree.ws.join("CLAUDE.md")).unwrap();
    assert_eq!(
        tree.refusal(),
        "cannot link in <root>/ws: CLAUDE.md is a directory; move it away, then link again. \
         Nothing was changed."
    );
    assert!(!tree.ws.join("GEMINI.md").exists());

    // Every reason is given at once.
    let tree = Tree::new();
    fs::create_dir(tree.ws.join("AGENTS.md")).unwrap();
    fs::create_dir(tree.ws.join("GEMINI.md")).unwrap();
    assert_eq!(
        tree.refusal(),
        "cannot link in <root>/ws: AGENTS.md is a directory, not a file; GEMINI.md is a \
         directory; move it away, then link again. Nothing was changed."
    );
}

#[test]
fn status_reports_each_state() {
    let tree = Tree::with_agents();
    assert_eq!(
        tree.status_lines(),
        [
            "AGENTS.md: the single source",
            "CLAUDE.md: missing; link would create it",
            "GEMINI.md: missing; link would create it",
        ]
    );

    tree.link("CLAUDE.md", "AGENTS.md");
    tree.write("GEMINI.md", "a copy");
    assert_eq!(
        tree.status_lines()[1..],
        [
            "CLAUDE.md: linked to AGENTS.md",
            "GEMINI.md: regular file (drifted); link would back it up and link it",
        ]
    );

    fs::remove_file(tree.ws.join("CLAUDE.md")).unwrap();
    fs::remove_file(tree.ws.join("GEMINI.md")).unwrap();
    tree.write("other.md", "other");
    tree.link("CLAUDE.md", "other.md");
    tree.link("GEMINI.md", "gone.md");
    assert_eq!(
        tree.status_lines()[1..],
        [
            "CLAUDE.md: wrong link to other.md; link would replace it",
            "GEMINI.md: wrong link to gone.md (dangling); link would replace it",
        ]
    );

    fs::remove_file(tree.ws.join("CLAUDE.md")).unwrap();
    fs::create_dir(tree.ws.join("CLAUDE.md")).unwrap();
    fs::remove_file(tree.ws.join("AGENTS.md")).unwrap();
    let report = status(&tree.ws).unwrap();
    assert!(!report.in_sync());
    assert_eq!(
        report.to_string(),
        "AGENTS.md: missing; create it first: it is the single source that CLAUDE.md and \
         GEMINI.md link to\n\
         CLAUDE.md: directory; link refuses until it is moved away\n\
         GEMINI.md: wrong link to gone.md (dangling); link would replace it"
    );
}

#[test]
fn reports_as_json() {
    let tree = Tree::with_agents();
    tree.write("CLAUDE.md", "notes");
    tree.link("GEMINI.md", "gone.md");
    let ws = tree.ws.display().to_string();
    assert_eq!(
        serde_json::to_value(status(&tree.ws).unwrap()).unwrap(),
        serde_json::json!({
            "dir": ws,
            "source": {"state": "ready"},
            "links": [
                {"name": "CLAUDE.md", "state": "regular_file"},
                {"name": "GEMINI.md", "state": "wrong_link", "target": "gone.md", "dangling": true},
            ],
        })
    );
    assert_eq!(
        serde_json::to_value(link(&tree.ws, NOW).unwrap()).unwrap(),
        serde_json::json!({
            "dir": ws,
            "links": [
                {"name": "CLAUDE.md", "action": "backed_up", "backup": format!("CLAUDE.md.bak-{STAMP}")},
                {"name": "GEMINI.md", "action": "replaced", "previous_target": "gone.md"},
            ],
        })
    );
    fs::remove_file(tree.ws.join("AGENTS.md")).unwrap();
    let json = serde_json::to_value(status(&tree.ws).unwrap()).unwrap();
    assert_eq!(json["source"]["state"], "unusable");
    assert!(
        json["source"]["problem"]
            .as_str()
            .unwrap()
            .starts_with("missing; ")
    );
}
