//! goalkeeper installed the way each host's users install things, from
//! the folder `scripts/package.sh` built (the binary under test inside):
//! in a fresh home, the host's own command installs the plugin, the
//! extension or the package, with no goalkeeper on `PATH`; then the real
//! host runs the standard goal scenario against the scripted model, and
//! uninstalling through the host leaves no goalkeeper hook behind. The npm
//! packages install from their tarballs into a fresh prefix and run
//! without a Rust toolchain.
//!
//! The folder is `$GOALKEEPER_PACKAGES` when set (`.ci/run` builds it once,
//! from the debug binary the tests run), else built here with
//! `scripts/package.sh --binary <the binary under test>`.

mod claude_code;
mod codex;
mod gemini_cli;
mod npm;
mod pi;
mod proving;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use crate::{World, show};

/// The folder `scripts/package.sh` wrote.
pub fn packages() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        if let Some(dir) = std::env::var_os("GOALKEEPER_PACKAGES") {
            return PathBuf::from(dir);
        }
        let dir =
            Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("packages-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/package.sh");
        let output = Command::new(script)
            .args(["--binary", env!("CARGO_BIN_EXE_goalkeeper")])
            .arg(&dir)
            .output()
            .expect("run scripts/package.sh");
        assert!(
            output.status.success(),
            "scripts/package.sh failed:\n{}",
            show(&output)
        );
        dir
    })
}

/// A `PATH` of the system's directories only: no goalkeeper (nor cargo)
/// on it, so what runs goalkeeper is the package.
pub const SYSTEM_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

/// A fresh world whose processes find no goalkeeper on `PATH`.
pub fn world() -> World {
    let world = World::new();
    let goalkeeper = PathBuf::from(env!("CARGO_BIN_EXE_goalkeeper"));
    world.with_path(SYSTEM_PATH, goalkeeper)
}

/// `program ARGS` in the world, asserted to succeed; its stdout and
/// stderr.
pub fn ok(world: &World, program: impl AsRef<std::ffi::OsStr>, args: &[&str]) -> String {
    ok_with(world.command(program).args(args))
}

/// A prepared command, asserted to succeed; its stdout and stderr.
pub fn ok_with(command: &mut Command) -> String {
    let output = command
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run");
    assert!(
        output.status.success(),
        "{command:?} failed:\n{}",
        show(&output)
    );
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// Every file under `dir` whose text contains `needle`.
pub fn files_mentioning(dir: &Path, needle: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(files_mentioning(&path, needle));
        } else if std::fs::read(&path)
            .is_ok_and(|bytes| String::from_utf8_lossy(&bytes).contains(needle))
        {
            found.push(path);
        }
    }
    found
}
