//! `goalkeeper package OUT`: goalkeeper as each host's users install
//! things, with this binary inside. Every file comes from the code
//! `goalkeeper install` runs (the same hooks, events, timeouts, server
//! and tool names), only the executable differs: the package's own
//! `bin/goalkeeper`, which the host finds through its variable. Nothing
//! here is kept beside the installers by hand.
//!
//! - `marketplace/`: a marketplace of one plugin, for Claude Code
//!   (`claude plugin marketplace add`) and Codex (`codex plugin
//!   marketplace add`), which reads Claude Code's format; the plugin holds
//!   Claude Code's files and, under `.codex-plugin/` and `codex/`, Codex's.
//! - `gemini-cli/`: the Gemini CLI extension.
//! - `pi/`: the pi package.
//! - `npm/`: the `goalkeeper` launcher package and this build's platform
//!   packages ([`npm`]).

pub mod npm;
pub mod program;

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::json;

use super::{claude_code, codex, gemini_cli, pi};
use crate::error::{Error, Result};
use crate::prompt::Templates;
use crate::user_files::json::Json;

/// The plugin's, the extension's and the packages' name.
pub const NAME: &str = "goalkeeper";

/// What the packages say goalkeeper is.
const DESCRIPTION: &str = "Keeps a coding agent on its goal: a phased todo list and a goal with a token budget per session, and the hidden prompts that steer the agent.";

/// What the Claude Code plugin cannot do itself: set the status line.
const STATUS_LINE: &str = "a plugin cannot set the status line: for goalkeeper's, add `\"statusLine\": {\"type\": \"command\", \"command\": \"goalkeeper statusline\"}` to ~/.claude/settings.json, with goalkeeper on PATH";

/// One package written: its folder and how a user installs it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Written {
    /// The folder.
    pub path: PathBuf,
    /// What it is and the host's command that installs it.
    pub about: String,
}

/// One file of a package: its path in the package, its text.
type File = (String, String);

/// The platforms a build for `target` (a Rust target triple) serves, else
/// those of this goalkeeper's own (on Linux, a static build serves glibc
/// and musl systems alike: two npm packages).
pub fn platform(target: Option<&str>) -> Result<Vec<npm::Platform>> {
    let found = match target {
        Some(triple) => npm::Platform::of_target(triple),
        None => npm::Platform::this(),
    };
    if !found.is_empty() {
        return Ok(found);
    }
    {
        let what = match target {
            Some(triple) => triple.to_owned(),
            None => format!(
                "this machine ({} {})",
                std::env::consts::OS,
                std::env::consts::ARCH
            ),
        };
        let mut targets: Vec<&str> = npm::PLATFORMS.map(|p| p.target).to_vec();
        targets.dedup();
        Err(Error::Usage(format!(
            "no release is built for {what}, so there are no packages for it; the release targets are {}",
            targets.join(", ")
        )))
    }
}

/// Writes every package into `out` (a new or empty directory), each with
/// a copy of `binary`, a build serving `platforms` (one system and
/// processor; [`platform`]). Refuses an `out` that holds anything,
/// writing nothing.
pub fn write(out: &Path, binary: &Path, platforms: &[npm::Platform]) -> Result<Vec<Written>> {
    let Some(platform) = platforms.first() else {
        return Err(Error::Usage("no platform to package for".into()));
    };
    let busy = std::fs::read_dir(out).is_ok_and(|mut entries| entries.next().is_some());
    if busy {
        return Err(Error::Rejected(format!(
            "{} is not empty; give a new or empty directory (nothing was written)",
            out.display()
        )));
    }
    let version = env!("CARGO_PKG_VERSION");
    let templates = Templates::builtin();
    let exe = platform.exe();
    let mut written = Vec::new();

    let marketplace = out.join("marketplace");
    let plugin = format!("plugins/{NAME}");
    let mut files = vec![(
        ".claude-plugin/marketplace.json".to_owned(),
        pretty(json!({
            "name": NAME,
            "owner": {"name": NAME},
            "description": "goalkeeper for Claude Code and Codex",
            "plugins": [{
                "name": NAME,
                "source": format!("./{plugin}"),
                "description": DESCRIPTION,
                "version": version,
            }],
        })),
    )];
    for (path, text) in plugin_files(version) {
        files.push((format!("{plugin}/{path}"), text));
    }
    write_files(&marketplace, &files)?;
    copy_binary(binary, &marketplace.join(&plugin).join("bin").join(exe))?;
    written.push(Written {
        path: marketplace.clone(),
        about: format!(
            "Claude Code and Codex plugin marketplace: `claude plugin marketplace add {dir}` then `claude plugin install {NAME}@{NAME}` ({STATUS_LINE}); `codex plugin marketplace add {dir}` then `codex plugin add {NAME}@{NAME}` and, to trust its hooks, the plugin's own binary: `~/.codex/plugins/cache/{NAME}/{NAME}/*/bin/goalkeeper install codex`",
            dir = marketplace.display()
        ),
    });

    let gemini = out.join("gemini-cli");
    let mut files = vec![(
        "gemini-extension.json".to_owned(),
        gemini_cli::extension_manifest(NAME, version, DESCRIPTION),
    )];
    files.extend(owned(gemini_cli::extension_files()));
    write_files(&gemini, &files)?;
    copy_binary(binary, &gemini.join("bin").join(exe))?;
    written.push(Written {
        path: gemini.clone(),
        about: format!(
            "Gemini CLI extension: `GEMINI_CLI_TRUST_WORKSPACE=true gemini extensions install {} --consent --skip-settings` (asks nothing: the folder trusted for this command, the settings at their defaults) then, to let its tools run without asking, the extension's own binary: `~/.gemini/extensions/{NAME}/bin/goalkeeper install gemini-cli --policy`",
            gemini.display()
        ),
    });

    let pi_dir = out.join("pi");
    let files = vec![
        (
            "package.json".to_owned(),
            pretty(json!({
                "name": format!("{NAME}-pi"),
                "version": version,
                "description": DESCRIPTION,
                "license": env!("CARGO_PKG_LICENSE"),
                "keywords": ["pi-package"],
                "type": "module",
                "pi": {"extensions": ["./extensions/goalkeeper.ts"]},
                "peerDependencies": {"@mariozechner/pi-coding-agent": "*"},
                "optionalDependencies": npm::optional_dependencies(version),
            })),
        ),
        (
            "extensions/goalkeeper.ts".to_owned(),
            pi::package_extension(&npm::platform_packages(), &templates)?,
        ),
    ];
    write_files(&pi_dir, &files)?;
    copy_binary(binary, &pi_dir.join("bin").join(exe))?;
    written.push(Written {
        path: pi_dir.clone(),
        about: format!(
            "pi package: `pi install {}` (pi loads it from this folder, not a copy: keep it where it is)",
            pi_dir.display()
        ),
    });

    let launcher = out.join("npm").join(NAME);
    let readme = |what: &str| format!("# {NAME}\n\n{DESCRIPTION}\n\n{what}\n");
    write_files(
        &launcher,
        &[
            (
                "package.json".to_owned(),
                npm::launcher_manifest(version, DESCRIPTION),
            ),
            ("bin/goalkeeper.js".to_owned(), npm::launcher()),
            (
                "README.md".to_owned(),
                readme(
                    "`npx goalkeeper install claude-code` wires it into a project; `goalkeeper --help` lists the commands.",
                ),
            ),
        ],
    )?;
    set_executable(&launcher.join("bin/goalkeeper.js"))?;
    for platform in platforms {
        let native = out.join("npm").join(platform.dir());
        write_files(
            &native,
            &[
                (
                    "package.json".to_owned(),
                    npm::platform_manifest(platform, version),
                ),
                (
                    "README.md".to_owned(),
                    readme(&format!(
                        "This package holds the binary for {}; install `goalkeeper`, which picks it.",
                        platform.describe()
                    )),
                ),
            ],
        )?;
        copy_binary(binary, &native.join("bin").join(exe))?;
    }
    let natives: Vec<String> = platforms
        .iter()
        .map(|p| format!("`{}`", p.package()))
        .collect();
    written.push(Written {
        path: out.join("npm"),
        about: format!(
            "npm packages `{NAME}` (the launcher, for your own `npx` and `npm install -g`) and {} (this build's binary): `npm pack` each, then `npm install -g` the launcher's tarball {}",
            natives.join(" and "),
            if natives.len() > 1 { "and the one for your system's C library" } else { "and the other one" }
        ),
    });
    Ok(written)
}

/// The plugin's files for Claude Code and Codex, beside its `bin/`.
fn plugin_files(version: &str) -> Vec<File> {
    let mut files = vec![
        (
            ".claude-plugin/plugin.json".to_owned(),
            pretty(json!({
                "name": NAME,
                "version": version,
                "description": DESCRIPTION,
                "author": {"name": NAME},
                "license": env!("CARGO_PKG_LICENSE"),
                "keywords": ["goal", "todo", "budget"],
            })),
        ),
        (
            ".codex-plugin/plugin.json".to_owned(),
            pretty(json!({
                "name": NAME,
                "version": version,
                "description": DESCRIPTION,
                "mcpServers": format!("./{}", codex::PLUGIN_MCP),
                "hooks": format!("./{}", codex::PLUGIN_HOOKS),
                "interface": {"displayName": NAME, "shortDescription": "Keeps the agent on its goal"},
            })),
        ),
        (
            "README.md".to_owned(),
            format!(
                "# {NAME}\n\n{DESCRIPTION}\n\nInstall it from its marketplace: `claude plugin marketplace add <marketplace>`, then `claude plugin install {NAME}@{NAME}` (or `/plugin install {NAME}@{NAME}`); in Codex, `codex plugin marketplace add <marketplace>` and `codex plugin add {NAME}@{NAME}`.\n\nIn Claude Code: the `todo` and `goal` tools, the goal-mode context, continuations while the goal is active, token usage counted from the transcripts, and `/{NAME}:goal` to set, show, pause, resume, budget or drop the goal; {STATUS_LINE}. In Codex: the same tools and hooks; run the plugin's own `bin/goalkeeper install codex` once after installing the plugin, to trust its hooks.\n"
            ),
        ),
    ];
    files.extend(owned(claude_code::plugin_files()));
    files.extend(owned(codex::plugin_files()));
    files
}

fn owned(files: Vec<(&'static str, String)>) -> Vec<File> {
    files
        .into_iter()
        .map(|(path, text)| (path.to_owned(), text))
        .collect()
}

fn pretty(value: serde_json::Value) -> String {
    Json::from(value).to_pretty()
}

/// Writes `files` under `dir`, creating the folders.
fn write_files(dir: &Path, files: &[File]) -> Result<()> {
    for (rel, text) in files {
        let path = dir.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|source| Error::Io {
                what: format!("cannot create {}", parent.display()),
                source,
            })?;
        }
        std::fs::write(&path, text).map_err(|source| Error::Io {
            what: format!("cannot write {}", path.display()),
            source,
        })?;
    }
    Ok(())
}

/// Copies the binary to `to`, executable.
fn copy_binary(binary: &Path, to: &Path) -> Result<()> {
    if let Some(parent) = to.parent() {
        std::fs::create_dir_all(parent).map_err(|source| Error::Io {
            what: format!("cannot create {}", parent.display()),
            source,
        })?;
    }
    std::fs::copy(binary, to).map_err(|source| Error::Io {
        what: format!("cannot copy {} to {}", binary.display(), to.display()),
        source,
    })?;
    set_executable(to)
}

#[cfg(unix)]
fn set_executable(path: &Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).map_err(|source| {
        Error::Io {
            what: format!("cannot make {} executable", path.display()),
            source,
        }
    })
}

#[cfg(not(unix))]
fn set_executable(_: &Path) -> Result<()> {
    Ok(())
}
