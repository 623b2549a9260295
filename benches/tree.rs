//! The working tree's fingerprint (DESIGN.md §13) and the gate's cost on
//! an agent's `done`:
//!
//! - `fingerprint/{repo,10k}/{cold,warm,file}`: this repository's own tree
//!   and a generated tree of 10,000 files (100 directories of 100 files of
//!   1–4 KB); `cold` hashes every file (nothing kept), `warm` reuses the
//!   hashes this process kept, `file` those of the cache file `verify`
//!   writes (a new process: the gate in a hook, the CLI or a fresh MCP
//!   server).
//! - `done_gate/{none,check}/{repo,10k}`: an agent's `done` through the
//!   store (a 10-task list in memory) of a task without a check, and of one
//!   whose check passed on the files as they are (the gate reads the tree,
//!   its hashes from the cache file, and the run).

use std::hint::black_box;
use std::path::Path;
use std::time::Duration;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use goalkeeper::check::{CheckRun, Evidence, Exit, RunBy, Scope};
use goalkeeper::store::Caller;
use goalkeeper::todo::{Actor, Call, Op};
use goalkeeper::tree::{CacheWrite, Tree, forget_in_memory};
use goalkeeper::{SessionId, Store};

/// A tree of `dirs` × `files` files of 1–4 KB.
fn generated(root: &Path, dirs: usize, files: usize) {
    for d in 0..dirs {
        let dir = root.join(format!("dir{d:03}"));
        std::fs::create_dir_all(&dir).unwrap();
        for f in 0..files {
            let size = 1024 + (d * files + f) * 37 % 3072;
            let text: String = (0..size)
                .map(|i| char::from(b'a' + ((i + d + f) % 26) as u8))
                .collect();
            std::fs::write(dir.join(format!("file{f:03}.txt")), text).unwrap();
        }
    }
}

/// Makes the tree's files older than the cache's clock tick, as a tree
/// is by the time a gate looks at it after a `verify`.
fn settle() {
    std::thread::sleep(Duration::from_millis(2100));
}

fn bench_fingerprint(c: &mut Criterion) {
    let big = tempfile::tempdir().unwrap();
    generated(big.path(), 100, 100);
    let cache = tempfile::tempdir().unwrap();
    settle();
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut group = c.benchmark_group("fingerprint");
    group.sample_size(10);
    for (name, dir) in [("repo", repo), ("10k", big.path())] {
        let tree = Tree::new(dir)
            .unwrap()
            .with_cache_dir(Some(cache.path().to_owned()));
        let plain = Tree::new(dir).unwrap();
        group.bench_function(format!("{name}/cold"), |b| {
            b.iter(|| {
                forget_in_memory();
                black_box(plain.fingerprint(CacheWrite::No).unwrap())
            })
        });
        tree.fingerprint(CacheWrite::Yes).unwrap();
        group.bench_function(format!("{name}/warm"), |b| {
            b.iter(|| black_box(tree.fingerprint(CacheWrite::No).unwrap()))
        });
        group.bench_function(format!("{name}/file"), |b| {
            b.iter(|| {
                forget_in_memory();
                black_box(tree.fingerprint(CacheWrite::No).unwrap())
            })
        });
        let scan = tree.fingerprint(CacheWrite::No).unwrap();
        eprintln!(
            "fingerprint/{name}: {} files, {} hashed on a warm look",
            scan.files, scan.hashed
        );
    }
    group.finish();
}

/// A store judging in `dir` (hashes from `cache`), with a 10-task list
/// whose first task is in progress and carries a check when `check`, whose
/// run passed on the files as they are.
fn store_for(dir: &Path, cache: &Path, check: bool) -> (Store, Caller) {
    let mut store = Store::open_in_memory().unwrap();
    let mut caller = Caller::default();
    caller.judge_in(Some(dir.to_owned()), Some(cache.to_owned()));
    let session = SessionId::parse("s").unwrap();
    let items: Vec<String> = (0..10).map(|i| format!("Task {i}")).collect();
    let init = serde_json::json!({"op": "init", "items": items}).to_string();
    store
        .todo(&session, Call::Json(&init), Actor::Agent, &mut caller, 0)
        .unwrap();
    if check {
        let op = Op::Check("Task 0".into(), Some("true".into()));
        store
            .todo(&session, Call::Op(&op), Actor::User, &mut caller, 0)
            .unwrap();
        let tree = Tree::new(dir)
            .unwrap()
            .with_cache_dir(Some(cache.to_owned()));
        let fingerprint = tree.fingerprint(CacheWrite::Yes).unwrap().fingerprint;
        let evidence = Evidence {
            run: "0123456789abcdef0123456789abcdef".into(),
            scope: Scope::Task("Task 0".into()),
            dir: tree.dir().to_string_lossy().into_owned(),
            fingerprint: fingerprint.as_str().to_owned(),
            started_ms: 0,
            by: RunBy {
                actor: "agent".into(),
                agent: None,
                host: None,
            },
            checks: vec![CheckRun {
                command: "true".into(),
                exit: Exit::Code(0),
                ms: 1,
            }],
        };
        store
            .write(&session, |tx| tx.record_run(&evidence, "verify", 0))
            .unwrap();
    }
    (store, caller)
}

fn bench_gate(c: &mut Criterion) {
    let big = tempfile::tempdir().unwrap();
    generated(big.path(), 100, 100);
    let cache = tempfile::tempdir().unwrap();
    settle();
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let session = SessionId::parse("s").unwrap();
    let done = r#"{"op":"done","task":"Task 0"}"#;
    let mut group = c.benchmark_group("done_gate");
    group.sample_size(20);
    for (name, dir) in [("repo", repo), ("10k", big.path())] {
        for check in [false, true] {
            let label = if check { "check" } else { "none" };
            group.bench_function(format!("{label}/{name}"), |b| {
                b.iter_batched(
                    || {
                        let store = store_for(dir, cache.path(), check);
                        // A new process: the hashes come from the file.
                        forget_in_memory();
                        store
                    },
                    |(mut store, mut caller)| {
                        let result = store
                            .todo(
                                &session,
                                Call::Json(black_box(done)),
                                Actor::Agent,
                                &mut caller,
                                1,
                            )
                            .unwrap();
                        assert!(!result.is_error, "{}", result.text());
                        (store, caller)
                    },
                    BatchSize::PerIteration,
                )
            });
        }
    }
    group.finish();
}

criterion_group!(benches, bench_fingerprint, bench_gate);
criterion_main!(benches);
