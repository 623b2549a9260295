//! Which entries under a directory the fingerprint reads: the `.gitignore`
//! rules as git reads them for that directory (DESIGN.md §13), by the
//! `ignore` crate's walk, never by running git.
//!
//! Inside a git work tree (a `.git` directory or file in the directory or
//! above it), the rules are those of the `.gitignore` files from the root
//! of that work tree down to each entry, and its `.git/info/exclude`;
//! nothing above the root counts (a dotfiles repository in the home
//! directory whose `.gitignore` is `*` does not hide a project below it
//! that is a repository of its own). Outside a work tree, only the
//! `.gitignore` files inside the directory count: a file above it says
//! nothing about a tree git does not track.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// The walk of `dir` (canonical): hidden files included, `.git` left out,
/// the `.gitignore` rules read as the module doc says, nothing else read;
/// links listed, never followed; siblings by name.
pub(super) fn walker(dir: &Path) -> ignore::WalkBuilder {
    let in_work_tree = work_tree_root(dir).is_some();
    let mut walk = ignore::WalkBuilder::new(dir);
    walk.standard_filters(false)
        .hidden(false)
        .git_ignore(true)
        .git_exclude(true)
        .git_global(false)
        .ignore(false)
        // In a work tree the crate reads the files above `dir` and stops
        // at the first directory with a `.git` (`require_git`); outside
        // one, no file above `dir` is read at all.
        .parents(in_work_tree)
        .require_git(in_work_tree)
        .follow_links(false)
        .filter_entry(|e| e.file_name() != OsStr::new(".git"))
        .sort_by_file_name(|a, b| a.as_bytes().cmp(b.as_bytes()));
    walk
}

/// The root of the git work tree that holds `dir`: the nearest of `dir`
/// and its ancestors with a `.git` entry (a directory, or the file a
/// linked work tree or a submodule has).
pub(super) fn work_tree_root(dir: &Path) -> Option<&Path> {
    dir.ancestors()
        .find(|d| std::fs::symlink_metadata(d.join(".git")).is_ok())
}

/// The names of the files and links `dir` itself holds that the walk left
/// out (`listed`: the names of its own entries the walk gave), sorted:
/// what the `.gitignore` rules hide from the fingerprint right where the
/// checks run. Directories, special files and `.git` are not named.
pub(super) fn left_out(dir: &Path, listed: &[Vec<u8>]) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut names: Vec<Vec<u8>> = entries
        .filter_map(Result::ok)
        .filter(|e| e.file_name() != OsStr::new(".git"))
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file() || t.is_symlink()))
        .map(|e| e.file_name().as_bytes().to_vec())
        .filter(|name| listed.binary_search(name).is_err())
        .collect();
    names.sort();
    names
        .into_iter()
        .map(|n| String::from_utf8_lossy(&n).into_owned())
        .collect()
}
