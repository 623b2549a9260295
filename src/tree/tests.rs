use std::fs;
use std::path::Path;
use std::time::{Duration, SystemTime};

use super::*;

fn write(dir: &Path, path: &str, text: &str) {
    let path = dir.join(path);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

/// A look that keeps every hash (as if every file were old enough).
fn later(tree: &Tree) -> Scan {
    tree.fingerprint_as_of(
        CacheWrite::No,
        SystemTime::now() + Duration::from_secs(3600),
    )
    .unwrap()
}

fn print(dir: &Path) -> Fingerprint {
    Tree::new(dir)
        .unwrap()
        .fingerprint(CacheWrite::No)
        .unwrap()
        .fingerprint
}

#[test]
fn the_content_of_every_file_counts_and_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "src/a.rs", "fn a() {}");
    write(dir.path(), "README", "hi");
    let first = print(dir.path());
    assert_eq!(
        print(dir.path()),
        first,
        "the same files, the same fingerprint"
    );
    assert_eq!(first.as_str().len(), 32);
    assert_eq!(Fingerprint::parse(first.as_str()), Some(first.clone()));

    write(dir.path(), "src/a.rs", "fn b() {}");
    let edited = print(dir.path());
    assert_ne!(edited, first);
    write(dir.path(), "src/a.rs", "fn a() {}");
    assert_eq!(print(dir.path()), first, "the content, not the history");

    fs::create_dir_all(dir.path().join("empty/dir")).unwrap();
    assert_eq!(print(dir.path()), first, "empty directories do not count");
    fs::rename(dir.path().join("README"), dir.path().join("README.md")).unwrap();
    assert_ne!(print(dir.path()), first, "a renamed file counts");
}

#[test]
fn gitignored_files_and_git_itself_do_not_count_in_a_work_tree_or_not() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), ".gitignore", "target/\n*.log\n");
    write(dir.path(), "src/lib.rs", "x");
    write(dir.path(), "sub/.gitignore", "local.txt\n");
    let first = print(dir.path());
    write(dir.path(), "target/debug/big", "built");
    write(dir.path(), "run.log", "log");
    write(dir.path(), "sub/local.txt", "mine");
    write(dir.path(), ".git/HEAD", "ref: refs/heads/main");
    assert_eq!(print(dir.path()), first);
    write(dir.path(), ".git/info/exclude", "notes.md\n");
    write(dir.path(), "notes.md", "scratch");
    assert_eq!(print(dir.path()), first, ".git/info/exclude is obeyed");
    write(dir.path(), ".hidden/config", "kept");
    assert_ne!(print(dir.path()), first, "hidden files count");
}

#[test]
fn the_executable_bit_and_links_count_and_links_are_not_followed() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    write(dir.path(), "run.sh", "echo hi");
    write(outside.path(), "secret", "one");
    std::os::unix::fs::symlink(outside.path().join("secret"), dir.path().join("link")).unwrap();
    let first = print(dir.path());
    write(outside.path(), "secret", "two");
    assert_eq!(print(dir.path()), first, "a link's target is not read");
    fs::set_permissions(dir.path().join("run.sh"), fs::Permissions::from_mode(0o755)).unwrap();
    assert_ne!(print(dir.path()), first, "a file made executable counts");
}

#[test]
fn a_directory_that_vanished_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let gone = dir.path().join("gone");
    fs::create_dir(&gone).unwrap();
    let tree = Tree::new(&gone).unwrap();
    fs::remove_dir(&gone).unwrap();
    let err = tree.fingerprint(CacheWrite::No).unwrap_err().to_string();
    assert!(
        err.starts_with(&format!(
            "cannot read the directory {}",
            tree.dir().display()
        )),
        "{err}"
    );
    let err = Tree::new(&gone).unwrap_err().to_string();
    assert!(
        err.starts_with(&format!("cannot read the directory {}", gone.display())),
        "{err}"
    );
}

#[test]
fn kept_hashes_are_reused_until_a_file_changes() {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..20 {
        write(dir.path(), &format!("f{i}"), &format!("content {i}"));
    }
    let tree = Tree::new(dir.path()).unwrap();
    cache::forget(tree.dir());
    let cold = later(&tree);
    assert_eq!((cold.files, cold.hashed), (20, 20));
    let warm = later(&tree);
    assert_eq!(
        (warm.fingerprint.clone(), warm.hashed),
        (cold.fingerprint.clone(), 0)
    );

    // Rewritten in place with the same size and its modification time put
    // back: the change time still moves.
    let path = dir.path().join("f3");
    let mtime = fs::metadata(&path).unwrap().modified().unwrap();
    std::thread::sleep(Duration::from_millis(50));
    fs::write(&path, "CONTENT 3").unwrap();
    fs::File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_modified(mtime)
        .unwrap();
    let after = later(&tree);
    assert_eq!(after.hashed, 1);
    assert_ne!(after.fingerprint, cold.fingerprint);
}

#[test]
fn a_file_changed_within_the_clock_tick_is_read_again() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "fresh", "just written");
    let tree = Tree::new(dir.path()).unwrap();
    cache::forget(tree.dir());
    assert_eq!(tree.fingerprint(CacheWrite::No).unwrap().hashed, 1);
    // Its times are not older than the look by a tick: not kept.
    assert_eq!(tree.fingerprint(CacheWrite::No).unwrap().hashed, 1);
}

#[test]
fn the_cache_file_carries_hashes_to_the_next_process_and_is_only_read_when_told() {
    let dir = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    write(dir.path(), "a", "1");
    write(dir.path(), "b", "2");
    let tree = Tree::new(dir.path())
        .unwrap()
        .with_cache_dir(Some(cache.path().to_owned()));
    let future = SystemTime::now() + Duration::from_secs(3600);
    cache::forget(tree.dir());
    tree.fingerprint_as_of(CacheWrite::No, future).unwrap();
    assert!(
        !cache.path().join("trees").exists(),
        "a read-only look writes nothing"
    );
    cache::forget(tree.dir());
    let first = tree.fingerprint_as_of(CacheWrite::Yes, future).unwrap();
    cache::forget(tree.dir());
    let next = tree.fingerprint_as_of(CacheWrite::No, future).unwrap();
    assert_eq!((next.fingerprint, next.hashed), (first.fingerprint, 0));

    // A damaged file is an empty cache.
    let file = fs::read_dir(cache.path().join("trees"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    fs::write(&file, "goalkeeper tree cache 1\nnonsense\n").unwrap();
    cache::forget(tree.dir());
    assert_eq!(
        tree.fingerprint_as_of(CacheWrite::No, future)
            .unwrap()
            .hashed,
        2
    );
}

/// A FIFO, or a sandbox's `/dev/null` bound over a path it hides, is no
/// part of the fingerprint.
#[test]
fn special_files_are_left_out() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("a.txt"), "a").unwrap();
    let print = || {
        Tree::new(dir.path())
            .unwrap()
            .fingerprint(CacheWrite::No)
            .unwrap()
            .fingerprint
    };
    let before = print();
    let made = std::process::Command::new("mkfifo")
        .arg(dir.path().join("pipe"))
        .status()
        .unwrap();
    assert!(made.success());
    assert_eq!(print(), before);
}

/// A `.gitignore` above the directory counts only inside the work tree
/// that holds the directory, from its root down; never above that root,
/// and not at all outside a work tree.
#[test]
fn ignore_rules_are_read_from_the_work_trees_root_down_and_no_higher() {
    let top = tempfile::tempdir().unwrap();
    let top = top.path();
    write(top, ".gitignore", "*\n");
    write(top, "app/state.txt", "ok");
    let listing = |dir: &Path| Tree::new(dir).unwrap().listing(CacheWrite::No).unwrap();
    // No work tree anywhere: the file above says nothing.
    assert_eq!(listing(&top.join("app")).files, 1);

    // The directory above is a work tree that ignores everything: the
    // directory inside it has no file, and says which it leaves out.
    write(top, ".git/HEAD", "ref: refs/heads/main\n");
    let blind = listing(&top.join("app"));
    assert_eq!(
        (blind.files, blind.left_out.clone()),
        (0, vec!["state.txt".to_owned()])
    );

    // The project is a work tree of its own: its root's rules hold, the
    // ones above do not, and its `.git/info/exclude` is read.
    write(top, "app/.git/HEAD", "ref: refs/heads/main\n");
    write(top, "app/.git/info/exclude", "scratch\n");
    write(top, "app/scratch", "mine");
    write(top, "app/.gitignore", "*.log\n");
    write(top, "app/sub/run.log", "noise");
    write(top, "app/sub/lib.rs", "code");
    let own = listing(&top.join("app"));
    assert_eq!(own.files, 3, "state.txt, .gitignore, sub/lib.rs");
    assert_eq!(own.left_out, vec!["scratch".to_owned()]);
    // From a subdirectory, the rules of the work tree's root still hold.
    let sub = listing(&top.join("app/sub"));
    assert_eq!((sub.files, sub.left_out), (1, vec!["run.log".to_owned()]));
}

#[test]
fn two_listings_name_the_files_that_changed_between_them() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a", "1");
    write(dir.path(), "b", "2");
    let tree = Tree::new(dir.path()).unwrap();
    let before = tree.listing(CacheWrite::No).unwrap();
    write(dir.path(), "b", "3");
    write(dir.path(), "c/new", "4");
    fs::remove_file(dir.path().join("a")).unwrap();
    let after = tree.listing(CacheWrite::No).unwrap();
    assert_eq!(after.changed_since(&before), ["a", "b", "c/new"]);
    assert!(after.changed_since(&after).is_empty());
}
