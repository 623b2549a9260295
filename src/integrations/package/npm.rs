//! The npm packages (`goalkeeper package`): goalkeeper's binary for a
//! machine with Node and no Rust, the way native tools ship on npm. The
//! `goalkeeper` package holds a small launcher for a person's `npx` and
//! `npm install -g`; each platform's package (`@goalkeeper-dev/linux-x64`)
//! holds that platform's binary and says which machines it is for (`os`,
//! `cpu`, and `libc` on Linux), so npm installs only the one that fits, as
//! an optional dependency of `goalkeeper`. The platform packages live under
//! the project's npm scope, which only its maintainers can publish to: the
//! launcher runs whatever package its table names, so an unscoped name
//! someone else published first would run their code. Nothing runs at
//! install time (no `postinstall`): hosts that fetch npm packages run no
//! scripts. Hooks, the MCP server and the status line never go through
//! the launcher: they run the binary itself (Node would add a tenth of a
//! second to every hook).
//!
//! Linux has two packages per processor, `linux-x64` for glibc systems and
//! `linux-x64-musl` for musl ones (Alpine), as npm's `libc` field tells
//! them apart. A release's Linux binary is static (musl), so both carry
//! the same file and either runs anywhere; the pair only lets npm fetch
//! one of them, and a build linked against glibc (a `-gnu` target) goes
//! into the glibc package alone.

use serde_json::{Value, json};

/// The npm scope of the platform packages.
pub const SCOPE: &str = "@goalkeeper-dev";

/// One platform goalkeeper's release builds for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Platform {
    /// Node's `process.platform`.
    pub os: &'static str,
    /// Node's `process.arch`.
    pub cpu: &'static str,
    /// The Rust target the release builds for it (static on Linux).
    pub target: &'static str,
    /// The C library of the systems it is for, as npm's `libc` field
    /// names it (`glibc`, `musl`); none off Linux.
    pub libc: Option<&'static str>,
}

/// A Linux platform for the C library `libc`.
const fn linux(cpu: &'static str, target: &'static str, libc: &'static str) -> Platform {
    Platform {
        os: "linux",
        cpu,
        target,
        libc: Some(libc),
    }
}

/// Every platform of a release, in the order the launcher lists them.
pub const PLATFORMS: [Platform; 7] = [
    linux("x64", "x86_64-unknown-linux-musl", "glibc"),
    linux("x64", "x86_64-unknown-linux-musl", "musl"),
    linux("arm64", "aarch64-unknown-linux-musl", "glibc"),
    linux("arm64", "aarch64-unknown-linux-musl", "musl"),
    Platform {
        os: "darwin",
        cpu: "x64",
        target: "x86_64-apple-darwin",
        libc: None,
    },
    Platform {
        os: "darwin",
        cpu: "arm64",
        target: "aarch64-apple-darwin",
        libc: None,
    },
    Platform {
        os: "win32",
        cpu: "x64",
        target: "x86_64-pc-windows-msvc",
        libc: None,
    },
];

impl Platform {
    /// The platforms this goalkeeper's build serves, when a release
    /// builds for its system and processor (empty otherwise).
    pub fn this() -> Vec<Platform> {
        let env = if cfg!(target_env = "gnu") { "gnu" } else { "" };
        Platform::of(std::env::consts::ARCH, std::env::consts::OS, env)
    }

    /// The platforms a build for the Rust target `triple`
    /// (`x86_64-unknown-linux-musl`) serves, when a release builds for its
    /// system and processor (empty otherwise).
    pub fn of_target(triple: &str) -> Vec<Platform> {
        let Some(arch) = triple.split('-').next() else {
            return Vec::new();
        };
        let os = if triple.contains("-linux-") {
            "linux"
        } else if triple.contains("-apple-darwin") {
            "macos"
        } else if triple.contains("-windows-") {
            "windows"
        } else {
            return Vec::new();
        };
        let env = if triple.ends_with("-gnu") { "gnu" } else { "" };
        Platform::of(arch, os, env)
    }

    /// The platforms of Rust's `arch` and `os` names: on Linux, a static
    /// build (`env` not `gnu`) serves both C libraries, a `gnu` one glibc
    /// only.
    fn of(arch: &str, os: &str, env: &str) -> Vec<Platform> {
        let os = match os {
            "linux" => "linux",
            "macos" => "darwin",
            "windows" => "win32",
            _ => return Vec::new(),
        };
        let cpu = match arch {
            "x86_64" => "x64",
            "aarch64" => "arm64",
            _ => return Vec::new(),
        };
        PLATFORMS
            .into_iter()
            .filter(|p| p.os == os && p.cpu == cpu)
            .filter(|p| env != "gnu" || p.libc == Some("glibc"))
            .collect()
    }

    /// Its npm package's folder name: `linux-x64`, `linux-x64-musl`.
    pub fn dir(&self) -> String {
        match self.libc {
            Some("musl") => format!("{}-{}-musl", self.os, self.cpu),
            _ => format!("{}-{}", self.os, self.cpu),
        }
    }

    /// Its npm package: `@goalkeeper-dev/linux-x64`.
    pub fn package(&self) -> String {
        format!("{SCOPE}/{}", self.dir())
    }

    /// The launcher's key for it: Node's `` `${process.platform} ${process.arch}` ``,
    /// then ` musl` for a musl system.
    pub fn key(&self) -> String {
        match self.libc {
            Some("musl") => format!("{} {} musl", self.os, self.cpu),
            _ => format!("{} {}", self.os, self.cpu),
        }
    }

    /// The machines it is for, as a person reads them.
    pub fn describe(&self) -> String {
        match self.libc {
            Some(libc) => format!("{} {} ({libc})", self.os, self.cpu),
            None => format!("{} {}", self.os, self.cpu),
        }
    }

    /// The binary's file name.
    pub fn exe(&self) -> &'static str {
        if self.os == "win32" {
            "goalkeeper.exe"
        } else {
            "goalkeeper"
        }
    }
}

/// Every platform package by its launcher key.
pub fn platform_packages() -> Vec<(String, String)> {
    PLATFORMS.iter().map(|p| (p.key(), p.package())).collect()
}

/// The fields every package shares.
fn common(name: &str, version: &str, description: &str) -> serde_json::Map<String, Value> {
    let mut fields = serde_json::Map::new();
    fields.insert("name".into(), name.into());
    fields.insert("version".into(), version.into());
    fields.insert("description".into(), description.into());
    fields.insert("license".into(), env!("CARGO_PKG_LICENSE").into());
    fields
}

/// `package.json` of the `goalkeeper` package: the launcher as the
/// `goalkeeper` command, every platform's package optional.
pub fn launcher_manifest(version: &str, description: &str) -> String {
    let mut fields = common("goalkeeper", version, description);
    fields.insert("bin".into(), json!({"goalkeeper": "bin/goalkeeper.js"}));
    fields.insert("files".into(), json!(["bin/goalkeeper.js", "README.md"]));
    fields.insert("engines".into(), json!({"node": ">=18"}));
    fields.insert(
        "optionalDependencies".into(),
        optional_dependencies(version),
    );
    pretty(Value::Object(fields))
}

/// Each platform's package at `version`, for `optionalDependencies`.
pub fn optional_dependencies(version: &str) -> Value {
    Value::Object(
        PLATFORMS
            .iter()
            .map(|p| (p.package(), Value::from(version)))
            .collect(),
    )
}

/// `package.json` of `platform`'s package, holding its build.
pub fn platform_manifest(platform: &Platform, version: &str) -> String {
    let description = format!(
        "goalkeeper's binary for {}; installed by the goalkeeper package",
        platform.describe()
    );
    let mut fields = common(&platform.package(), version, &description);
    fields.insert("os".into(), json!([platform.os]));
    fields.insert("cpu".into(), json!([platform.cpu]));
    if let Some(libc) = platform.libc {
        fields.insert("libc".into(), json!([libc]));
    }
    fields.insert(
        "files".into(),
        json!([format!("bin/{}", platform.exe()), "README.md"]),
    );
    pretty(Value::Object(fields))
}

fn pretty(value: Value) -> String {
    let mut text = serde_json::to_string_pretty(&value).expect("JSON serializes");
    text.push('\n');
    text
}

/// The launcher: finds the binary of this machine's platform package and
/// runs it with the same arguments, standard streams and exit status. On
/// Linux it looks for the package of the system's C library first, then
/// the other one (a release's Linux binaries are static and run on both).
pub fn launcher() -> String {
    let packages = Value::Object(
        platform_packages()
            .into_iter()
            .map(|(key, package)| (key, Value::from(package)))
            .collect(),
    );
    let packages = serde_json::to_string_pretty(&packages).expect("JSON serializes");
    let repository = env!("CARGO_PKG_REPOSITORY");
    format!(
        r#"#!/usr/bin/env node
// goalkeeper's launcher (written by `goalkeeper package`): runs the binary
// of this machine's platform package, which npm installed as an optional
// dependency, with the same arguments, streams and exit status. Only for a
// person's `npx goalkeeper` and `npm install -g goalkeeper`: what
// `goalkeeper install` writes for a host runs the binary itself.
"use strict";
const {{ spawnSync }} = require("node:child_process");

const PACKAGES = {packages};

const machine = `${{process.platform}} ${{process.arch}}`;
// A Linux without glibc (Alpine's musl): Node's report names no glibc.
const musl =
  process.platform === "linux" &&
  !(process.report && process.report.getReport().header.glibcVersionRuntime);
const keys = process.platform !== "linux"
  ? [machine]
  : musl ? [`${{machine}} musl`, machine] : [machine, `${{machine}} musl`];
const names = keys.map((key) => PACKAGES[key]).filter((name) => name !== undefined);
if (names.length === 0) {{
  process.stderr.write(
    `goalkeeper: no build for ${{machine}}; the builds are for ${{Object.keys(PACKAGES).join(", ")}}. Build it from source: cargo install --git {repository}\n`,
  );
  process.exit(2);
}}
const exe = process.platform === "win32" ? "goalkeeper.exe" : "goalkeeper";
let binary;
for (const name of names) {{
  try {{
    binary = require.resolve(`${{name}}/bin/${{exe}}`);
    break;
  }} catch {{}}
}}
if (binary === undefined) {{
  process.stderr.write(
    `goalkeeper: the package ${{names[0]}}, which holds the binary for ${{keys[0]}}, is not installed (npm installs it with goalkeeper unless optional dependencies are off); install it with: npm install ${{names[0]}}\n`,
  );
  process.exit(2);
}}
const run = spawnSync(binary, process.argv.slice(2), {{ stdio: "inherit" }});
if (run.error !== undefined) {{
  process.stderr.write(`goalkeeper: cannot run ${{binary}}: ${{run.error.message}}\n`);
  process.exit(2);
}}
if (run.signal !== null) {{
  process.kill(process.pid, run.signal);
}}
process.exit(run.status ?? 1);
"#
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_target_names_its_platforms() {
        let names = |triple: &str| -> Vec<(String, Option<&str>)> {
            Platform::of_target(triple)
                .iter()
                .map(|p| (p.package(), p.libc))
                .collect()
        };
        // A static Linux build serves both C libraries.
        assert_eq!(
            names("x86_64-unknown-linux-musl"),
            [
                ("@goalkeeper-dev/linux-x64".into(), Some("glibc")),
                ("@goalkeeper-dev/linux-x64-musl".into(), Some("musl")),
            ]
        );
        // One linked against glibc only glibc systems.
        assert_eq!(
            names("aarch64-unknown-linux-gnu"),
            [("@goalkeeper-dev/linux-arm64".into(), Some("glibc"))]
        );
        assert_eq!(
            names("aarch64-apple-darwin"),
            [("@goalkeeper-dev/darwin-arm64".into(), None)]
        );
        let windows = Platform::of_target("x86_64-pc-windows-msvc");
        assert_eq!(
            (windows[0].package(), windows[0].exe()),
            ("@goalkeeper-dev/win32-x64".into(), "goalkeeper.exe")
        );
        for target in [
            "riscv64gc-unknown-linux-gnu",
            "x86_64-unknown-freebsd",
            "wasm32-wasip1",
        ] {
            assert_eq!(Platform::of_target(target), [], "{target}");
        }
        for platform in PLATFORMS {
            assert!(Platform::of_target(platform.target).contains(&platform));
        }
    }
}
