use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::Path;
use std::time::Duration;

use super::*;

fn mode(path: &Path) -> u32 {
    std::fs::symlink_metadata(path)
        .unwrap()
        .permissions()
        .mode()
        & 0o7777
}

fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn a_new_file_is_created_with_its_directories_and_no_backup() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = UserDir::lock(tmp.path()).unwrap();
    let done = dir
        .replace(Path::new(".claude/settings.json"), b"{}\n", None, "S")
        .unwrap();
    assert_eq!(done.path, tmp.path().join(".claude/settings.json"));
    assert_eq!(done.backup, None);
    assert!(done.written);
    assert_eq!(std::fs::read(&done.path).unwrap(), b"{}\n");
    assert_eq!(names(&tmp.path().join(".claude")), ["settings.json"]);
}

#[test]
fn a_replaced_file_keeps_its_mode_and_each_backup_is_kept() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("settings.json");
    std::fs::write(&file, "one").unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    let dir = UserDir::lock(tmp.path()).unwrap();
    for next in ["two", "three"] {
        let read = dir.read(Path::new("settings.json")).unwrap().unwrap();
        let done = dir
            .replace(
                Path::new("settings.json"),
                next.as_bytes(),
                Some(&read),
                "S",
            )
            .unwrap();
        assert!(done.written && done.backup.is_some());
        assert_eq!(mode(&file), 0o600);
    }
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "three");
    // Same stamp twice: the second backup took the next name.
    assert_eq!(
        std::fs::read_to_string(tmp.path().join("settings.json.bak-S")).unwrap(),
        "one"
    );
    assert_eq!(
        std::fs::read_to_string(tmp.path().join("settings.json.bak-S-2")).unwrap(),
        "two"
    );
    assert_eq!(mode(&tmp.path().join("settings.json.bak-S")), 0o600);
    assert_eq!(
        names(tmp.path()),
        [
            "settings.json",
            "settings.json.bak-S",
            "settings.json.bak-S-2"
        ]
    );
}

#[test]
fn identical_content_is_not_written_or_backed_up() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("a"), "same").unwrap();
    let dir = UserDir::lock(tmp.path()).unwrap();
    let read = dir.read(Path::new("a")).unwrap().unwrap();
    let done = dir
        .replace(Path::new("a"), b"same", Some(&read), "S")
        .unwrap();
    assert!(!done.written);
    assert_eq!(names(tmp.path()), ["a"]);
}

#[test]
fn planted_temporary_names_are_skipped_and_what_they_point_to_is_untouched() {
    let tmp = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let victim = outside.path().join("victim");
    std::fs::write(&victim, "precious").unwrap();
    let pid = std::process::id();
    let next = TEMP_COUNTER.load(Ordering::Relaxed);
    for n in next..next + 50 {
        symlink(
            &victim,
            tmp.path().join(format!(".f.goalkeeper-{pid}-{n}.tmp")),
        )
        .unwrap();
    }
    let dir = UserDir::lock(tmp.path()).unwrap();
    dir.replace(Path::new("f"), b"new", None, "S").unwrap();
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    let meta = std::fs::symlink_metadata(tmp.path().join("f")).unwrap();
    assert!(meta.file_type().is_file());
    assert_eq!(
        std::fs::read_to_string(tmp.path().join("f")).unwrap(),
        "new"
    );
}

#[test]
fn a_linked_directory_on_the_way_is_refused_and_nothing_is_written() {
    let tmp = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    symlink(outside.path(), tmp.path().join(".claude")).unwrap();
    let dir = UserDir::lock(tmp.path()).unwrap();
    let rel = Path::new(".claude/settings.json");
    let error = dir.replace(rel, b"{}", None, "S").unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "{} is a symbolic link (to {}); goalkeeper writes only inside {} and never through a link: \
             replace the link with a real file or directory, or run goalkeeper on the directory it points to (nothing was changed)",
            tmp.path().join(".claude").display(),
            outside.path().display(),
            tmp.path().display()
        )
    );
    assert!(matches!(error, Error::Rejected(_)));
    assert!(dir.read(rel).is_err());
    assert_eq!(names(outside.path()), Vec::<String>::new());
}

#[test]
fn a_linked_file_is_refused_and_its_target_is_untouched() {
    let tmp = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("shared.json");
    std::fs::write(&target, "shared").unwrap();
    symlink(&target, tmp.path().join("settings.json")).unwrap();
    let dir = UserDir::lock(tmp.path()).unwrap();
    let rel = Path::new("settings.json");
    assert!(matches!(dir.read(rel), Err(Error::Rejected(m)) if m.contains("is a symbolic link")));
    assert!(matches!(
        dir.replace(rel, b"x", None, "S"),
        Err(Error::Rejected(m)) if m.contains("is a symbolic link")
    ));
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "shared");
    assert!(
        std::fs::symlink_metadata(tmp.path().join("settings.json"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(names(tmp.path()), ["settings.json"]);
}

#[test]
fn a_file_changed_after_it_was_read_is_not_replaced() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("a");
    std::fs::write(&file, "first").unwrap();
    let dir = UserDir::lock(tmp.path()).unwrap();
    let read = dir.read(Path::new("a")).unwrap().unwrap();
    std::fs::write(tmp.path().join("b"), "edited by hand").unwrap();
    std::fs::rename(tmp.path().join("b"), &file).unwrap();
    let error = dir
        .replace(Path::new("a"), b"ours", Some(&read), "S")
        .unwrap_err();
    assert!(
        error
            .to_string()
            .contains("changed while goalkeeper was updating it"),
        "{error}"
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "edited by hand");
    // And a file that appeared after "it did not exist".
    let error = dir.replace(Path::new("a"), b"ours", None, "S").unwrap_err();
    assert!(matches!(error, Error::Rejected(_)));
    assert_eq!(names(tmp.path()), ["a"]);
}

#[test]
fn a_fifo_is_refused_without_blocking() {
    let tmp = tempfile::tempdir().unwrap();
    let fifo = tmp.path().join("TODO.md");
    rustix::fs::mknodat(
        rustix::fs::CWD,
        &fifo,
        FileType::Fifo,
        Mode::from_raw_mode(0o600),
        0,
    )
    .unwrap();
    let dir = UserDir::lock(tmp.path()).unwrap();
    let error = dir.read(Path::new("TODO.md")).unwrap_err();
    assert!(
        error
            .to_string()
            .ends_with("is not a regular file; move it away, then run again (nothing was changed)")
    );
    assert_eq!(dir.entry(Path::new("TODO.md")).unwrap(), Entry::Other);
}

#[test]
fn a_second_lock_waits_then_says_who_holds_it() {
    let tmp = tempfile::tempdir().unwrap();
    let held = UserDir::lock(tmp.path()).unwrap();
    let error = UserDir::lock_waiting(tmp.path(), Duration::from_millis(100)).unwrap_err();
    assert!(
        error.to_string().starts_with(&format!(
            "another goalkeeper process kept {} locked for 0 s",
            tmp.path().display()
        )),
        "{error}"
    );
    drop(held);
    UserDir::lock_waiting(tmp.path(), Duration::from_millis(100)).unwrap();
    // No lock file was left behind.
    assert_eq!(names(tmp.path()), Vec::<String>::new());
}

#[test]
fn a_symlink_replaces_a_file_only_after_backing_it_up() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("CLAUDE.md"), "mine").unwrap();
    let dir = UserDir::lock(tmp.path()).unwrap();
    let rel = Path::new("CLAUDE.md");
    let backup = dir.put_symlink(rel, Path::new("AGENTS.md"), "S").unwrap();
    assert_eq!(backup, Some(tmp.path().join("CLAUDE.md.bak-S")));
    assert_eq!(
        std::fs::read_to_string(tmp.path().join("CLAUDE.md.bak-S")).unwrap(),
        "mine"
    );
    assert_eq!(
        dir.entry(rel).unwrap(),
        Entry::Symlink {
            target: "AGENTS.md".into()
        }
    );
    // A link is replaced without a backup.
    assert_eq!(
        dir.put_symlink(rel, Path::new("AGENTS.md"), "S").unwrap(),
        None
    );
    assert_eq!(names(tmp.path()), ["CLAUDE.md", "CLAUDE.md.bak-S"]);
}

#[test]
fn paths_that_leave_the_directory_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = UserDir::lock(tmp.path()).unwrap();
    for rel in ["../x", "/etc/passwd", "a/../../x"] {
        assert!(matches!(
            dir.replace(Path::new(rel), b"x", None, "S"),
            Err(Error::Usage(_))
        ));
    }
}
