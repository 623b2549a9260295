//! The npm packages: `npm install -g` of the launcher's and this
//! machine's platform package's tarballs `scripts/package.sh` packed, into
//! a fresh prefix and without the registry, gives a `goalkeeper` that runs
//! with no Rust toolchain on `PATH`; what it wires into a host runs the
//! binary itself, not Node.

use super::{SYSTEM_PATH, ok_with, packages};

#[test]
#[ignore = "needs npm (scripts/install-host.sh uses it too)"]
fn the_npm_packages_install_and_run_without_rust() {
    let world = super::world();
    let npm = packages().join("npm");
    let version = env!("CARGO_PKG_VERSION");
    // `npm pack` names a scoped package's tarball `<scope>-<name>-…`.
    let tarballs: Vec<String> = ["goalkeeper", "goalkeeper-dev-linux-x64"]
        .iter()
        .map(|name| {
            npm.join(format!("{name}-{version}.tgz"))
                .display()
                .to_string()
        })
        .collect();
    let prefix = world.root().join("prefix");
    let mut install = world.command("npm");
    install
        .args([
            "install",
            "--global",
            "--offline",
            "--no-audit",
            "--no-fund",
            "--prefix",
        ])
        .arg(&prefix)
        .args(&tarballs);
    ok_with(&mut install);
    // No Rust on the PATH it runs with.
    for dir in SYSTEM_PATH.split(':') {
        for tool in ["cargo", "rustc"] {
            assert!(
                !std::path::Path::new(dir).join(tool).exists(),
                "{dir}/{tool}"
            );
        }
    }
    let goalkeeper = prefix.join("bin/goalkeeper");
    let printed = ok_with(world.command(&goalkeeper).arg("--version"));
    assert_eq!(printed, format!("goalkeeper {version}\n"));
    // A command with its exit status: a rejected call exits 1 through the
    // launcher too, and the store has what the accepted one did.
    let added = ok_with(
        world
            .command(&goalkeeper)
            .args(["todo", "init", "--item", "Ship it"]),
    );
    assert!(added.contains("Ship it"), "{added}");
    let rejected = world
        .command(&goalkeeper)
        .args(["todo", "done", "--task", "Nope"])
        .output()
        .unwrap();
    assert_eq!(
        rejected.status.code(),
        Some(1),
        "{}",
        crate::show(&rejected)
    );
    assert_eq!(world.todos("default").counts().total, 1);
    // Wiring a project from that install: the hooks run the platform
    // package's binary, not the launcher (Node at every hook).
    let project = world.root().join("wired-from-npm");
    std::fs::create_dir(&project).unwrap();
    let path = format!("{}:{SYSTEM_PATH}", prefix.join("bin").display());
    let printed = ok_with(
        world
            .command(&goalkeeper)
            .env("PATH", &path)
            .args(["install", "claude-code", "--project"])
            .arg(&project),
    );
    assert!(printed.contains("npm's launcher"), "{printed}");
    let settings = std::fs::read_to_string(project.join(".claude/settings.json")).unwrap();
    let native = prefix.join("lib/node_modules/@goalkeeper-dev/linux-x64/bin/goalkeeper");
    // Quoted as one shell word (the path holds an `@`).
    assert!(
        settings.contains(&format!("'{}' hook claude-code", native.display())),
        "{settings}"
    );
    assert!(!settings.contains("goalkeeper.js"), "{settings}");
}
