//! How goalkeeper's messages name the goalkeeper to run (DESIGN.md §9.1):
//! the one rule behind [`crate::check::program`], which every message
//! that tells the model or a person to run goalkeeper (`verify` above
//! all) uses.
//!
//! A package's binary lives in the package's `bin/`, which no host but
//! Claude Code puts on its shell's `PATH` (Codex's shell is a login shell
//! that sets `PATH` anew; Gemini CLI and pi run the shell with their own
//! environment). There the messages name the binary by its path, quoted
//! for the shell, which is also a form the hooks' record reader takes
//! (the running executable's path). Anywhere else, and wherever
//! `goalkeeper` on `PATH` is this very binary, they say `goalkeeper`.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use crate::check::shell_quote;
use crate::integrations::host_session::Host;

/// The bare command word.
const WORD: &str = "goalkeeper";

/// A host's package holding goalkeeper's binary in its `bin/`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Package {
    /// The Claude Code and Codex plugin (one folder for both).
    Plugin,
    /// The Gemini CLI extension.
    GeminiExtension,
    /// The pi package.
    Pi,
}

impl Package {
    /// The package whose `bin/` holds `exe`, known by the manifest
    /// `goalkeeper package` writes beside that `bin/`.
    pub fn holding(exe: &Path) -> Option<Package> {
        let bin = exe.parent()?;
        if bin.file_name()? != OsStr::new("bin") {
            return None;
        }
        let root = bin.parent()?;
        [
            (".claude-plugin/plugin.json", Package::Plugin),
            ("gemini-extension.json", Package::GeminiExtension),
            ("extensions/goalkeeper.ts", Package::Pi),
        ]
        .into_iter()
        .find(|(manifest, _)| root.join(manifest).is_file())
        .map(|(_, package)| package)
    }
}

/// The word that runs this goalkeeper in the agent's shell, read from
/// the running executable, `PATH` and the environment the host set.
pub fn word() -> String {
    let Ok(exe) = std::env::current_exe() else {
        return WORD.to_owned();
    };
    let Some(package) = Package::holding(&exe) else {
        return WORD.to_owned();
    };
    let on_path = std::env::var_os("PATH").and_then(|path| find_on_path(&path));
    let set = |name: &str| std::env::var_os(name).is_some_and(|v| !v.is_empty());
    // Claude Code marks its shell and hooks with `CLAUDECODE`; its plugin
    // server has only the plugin's variable, which Codex sets for a
    // plugin's hooks too, beside its own.
    let plugin_var = |host: Host| host.plugin_var().is_some_and(set);
    let in_claude_code = set(Host::ClaudeCode.shell_marker())
        || (plugin_var(Host::ClaudeCode) && !plugin_var(Host::Codex));
    decide(&exe, Some(package), on_path.as_deref(), in_claude_code)
}

/// The word for `exe`, held by `package`, where `goalkeeper` on `PATH` is
/// `on_path`, in a process Claude Code started or not: `goalkeeper` for a
/// binary outside any package, for the plugin in Claude Code (whose shell
/// has the plugin's `bin/` on `PATH`), and for a binary `PATH` finds by
/// name; else the binary's path, quoted for a POSIX shell.
pub fn decide(
    exe: &Path,
    package: Option<Package>,
    on_path: Option<&Path>,
    in_claude_code: bool,
) -> String {
    let found_by_name = on_path.is_some_and(|found| same_file(found, exe));
    match package {
        None => WORD.to_owned(),
        Some(Package::Plugin) if in_claude_code => WORD.to_owned(),
        Some(_) if found_by_name => WORD.to_owned(),
        Some(_) => shell_quote(&exe.to_string_lossy()),
    }
}

/// The first `goalkeeper` executable file in the directories of `path`.
fn find_on_path(path: &OsStr) -> Option<PathBuf> {
    let name = format!("{WORD}{}", std::env::consts::EXE_SUFFIX);
    std::env::split_paths(path)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join(&name))
        .find(|candidate| is_executable(candidate))
}

#[cfg(unix)]
fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(path: &Path) -> bool {
    path.is_file()
}

/// Whether `a` and `b` are one file (links followed).
fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A package folder with `manifest` and a binary in its `bin/`; the
    /// binary's path.
    fn package(dir: &Path, manifest: &str) -> PathBuf {
        let manifest = dir.join(manifest);
        std::fs::create_dir_all(manifest.parent().unwrap()).unwrap();
        std::fs::write(&manifest, "{}").unwrap();
        let bin = dir.join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        let exe = bin.join("goalkeeper");
        std::fs::write(&exe, "").unwrap();
        exe
    }

    #[test]
    fn each_hosts_package_is_known_by_its_manifest() {
        let dir = tempfile::tempdir().unwrap();
        let cases = [
            (
                "plugin",
                ".claude-plugin/plugin.json",
                Some(Package::Plugin),
            ),
            (
                "gemini",
                "gemini-extension.json",
                Some(Package::GeminiExtension),
            ),
            ("pi", "extensions/goalkeeper.ts", Some(Package::Pi)),
            ("npm", "package.json", None),
        ];
        for (folder, manifest, expected) in cases {
            let exe = package(&dir.path().join(folder), manifest);
            assert_eq!(Package::holding(&exe), expected, "{folder}");
        }
        let loose = dir.path().join("goalkeeper");
        std::fs::write(&loose, "").unwrap();
        assert_eq!(Package::holding(&loose), None);
    }

    #[test]
    fn a_package_binary_the_shell_cannot_find_by_name_is_named_by_its_path() {
        let dir = tempfile::tempdir().unwrap();
        let exe = package(&dir.path().join("my ext"), "gemini-extension.json");
        let quoted = format!("'{}'", exe.display());
        let gemini = Some(Package::GeminiExtension);
        assert_eq!(decide(&exe, gemini, None, false), quoted);
        // Another goalkeeper on `PATH` is not this one.
        let other = package(&dir.path().join("other"), "package.json");
        assert_eq!(decide(&exe, gemini, Some(&other), false), quoted);
        // Found by name: the bare word.
        assert_eq!(decide(&exe, gemini, Some(&exe), false), "goalkeeper");
        // The plugin in Claude Code, whose shell finds it by name; in
        // Codex, by its path.
        let plugin = package(&dir.path().join("plugin"), ".claude-plugin/plugin.json");
        let package = Some(Package::Plugin);
        assert_eq!(decide(&plugin, package, None, true), "goalkeeper");
        assert_eq!(
            decide(&plugin, package, None, false),
            plugin.display().to_string()
        );
        // Outside any package (a build, a `cargo install`): the word.
        assert_eq!(decide(&exe, None, None, false), "goalkeeper");
    }

    #[cfg(unix)]
    #[test]
    fn path_lookup_takes_the_first_executable_goalkeeper() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        for d in [&a, &b] {
            std::fs::create_dir(d).unwrap();
            std::fs::write(d.join("goalkeeper"), "").unwrap();
        }
        let exec = std::fs::Permissions::from_mode(0o755);
        std::fs::set_permissions(b.join("goalkeeper"), exec).unwrap();
        let path = std::env::join_paths([&a, &b]).unwrap();
        assert_eq!(find_on_path(&path), Some(b.join("goalkeeper")));
        assert_eq!(find_on_path(OsStr::new("relative/dir")), None);
    }
}
