//! `goalkeeper backup PATH` (DESIGN.md §7): the newest commits live in the
//! write-ahead log beside the database between checkpoints, so the copy to
//! take is the one `backup` writes: one file, complete and consistent.

use crate::common;
use common::TestEnv;
use goalkeeper::{SessionId, Store};

#[test]
fn a_backup_is_one_complete_file_with_history() {
    let env = TestEnv::new();
    env.ok(&["goal", "set", "Ship the release"]);
    env.ok(&[
        "todo",
        "init",
        "--item",
        "Build core",
        "--item",
        "Run tests",
    ]);
    env.ok(&["todo", "done", "Build core"]);
    let copy = env.dir().join("copy.db");
    let printed = env.ok(&["backup", copy.to_str().unwrap()]);
    assert_eq!(
        env.normalize(&printed),
        "Wrote a copy of the database to <tmp>/copy.db\n"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&copy).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    // The file on its own: nothing beside it.
    for suffix in ["-wal", "-shm", ".partial"] {
        assert!(!env.dir().join(format!("copy.db{suffix}")).exists());
    }
    let session = SessionId::parse("default").unwrap();
    let mut store = Store::open(&copy).unwrap();
    let (list, version) = store.read(&session, |tx| tx.todo_list()).unwrap();
    assert_eq!(version, 2);
    assert_eq!(list.counts().completed, 1);
    assert_eq!(
        store
            .read(&session, |tx| tx.goal())
            .unwrap()
            .unwrap()
            .objective,
        "Ship the release"
    );
    let undone = store.write(&session, |tx| tx.todo_undo(0)).unwrap();
    assert_eq!(undone.details.phases.counts().completed, 0);
    // The original is as it was.
    assert!(env.ok(&["todo", "view"]).contains("Overall: 1/2 done"));
}

#[test]
fn a_backup_never_replaces_a_file() {
    let env = TestEnv::new();
    env.ok(&["todo", "init", "--item", "Build core"]);
    let existing = env.dir().join("keep.db");
    std::fs::write(&existing, "my notes").unwrap();
    let output = env
        .cmd(&["backup", existing.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(
        env.normalize(&common::render(&["backup", "keep.db"], &output)),
        "$ goalkeeper backup keep.db\n--- stderr ---\ngoalkeeper: <tmp>/keep.db already exists; a backup never replaces a file, so give a new path\n[exit status: 1]\n"
    );
    assert_eq!(std::fs::read_to_string(&existing).unwrap(), "my notes");
    let left: Vec<_> = std::fs::read_dir(env.dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.contains("partial"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}
