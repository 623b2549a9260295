//! The npm packages: `npm install` of the two tarballs `scripts/package.sh`
//! packed, into a fresh prefix and without the registry, gives a
//! `goalkeeper` that runs with no Rust toolchain on `PATH`.

use super::{SYSTEM_PATH, ok_with, packages};

#[test]
#[ignore = "needs npm (scripts/install-host.sh uses it too)"]
fn the_npm_packages_install_and_run_without_rust() {
    let world = super::world();
    let npm = packages().join("npm");
    let version = env!("CARGO_PKG_VERSION");
    let tarballs: Vec<String> = ["goalkeeper", "goalkeeper-linux-x64"]
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
    let goalkeeper = prefix.join("node_modules/.bin/goalkeeper");
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
}
