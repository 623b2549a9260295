//! The npm packages (`goalkeeper package`): goalkeeper's binary for a
//! machine with Node and no Rust, the way native tools ship on npm. The
//! `goalkeeper` package holds a small launcher; each platform's package
//! holds that platform's binary and says which machines it is for (`os`,
//! `cpu`, and `libc` for a build that needs glibc), so npm installs only
//! the one that fits, as an optional dependency of `goalkeeper`. Nothing
//! runs at install time (no `postinstall`): hosts that fetch npm packages
//! run no scripts.

use serde_json::{Value, json};

/// One platform goalkeeper's release builds for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Platform {
    /// Node's `process.platform`.
    pub os: &'static str,
    /// Node's `process.arch`.
    pub cpu: &'static str,
    /// The Rust target the release builds for it (static on Linux).
    pub target: &'static str,
    /// The C library a build for it needs, as npm's `libc` field names
    /// it: glibc for a GNU Linux build; none for a static (musl) one,
    /// which runs on either.
    pub libc: Option<&'static str>,
}

/// Every platform of a release, in the order the launcher lists them.
pub const PLATFORMS: [Platform; 5] = [
    Platform {
        os: "linux",
        cpu: "x64",
        target: "x86_64-unknown-linux-musl",
        libc: None,
    },
    Platform {
        os: "linux",
        cpu: "arm64",
        target: "aarch64-unknown-linux-musl",
        libc: None,
    },
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
    /// The platform this goalkeeper was built for, when a release builds
    /// for it (a GNU build on Linux needs glibc).
    pub fn this() -> Option<Platform> {
        let env = if cfg!(target_env = "gnu") { "gnu" } else { "" };
        Platform::of(std::env::consts::ARCH, std::env::consts::OS, env)
    }

    /// The platform of the Rust target `triple` (`x86_64-unknown-linux-gnu`),
    /// when a release builds for its system and processor.
    pub fn of_target(triple: &str) -> Option<Platform> {
        let arch = triple.split('-').next()?;
        let os = if triple.contains("-linux-") {
            "linux"
        } else if triple.contains("-apple-darwin") {
            "macos"
        } else if triple.contains("-windows-") {
            "windows"
        } else {
            return None;
        };
        let env = if triple.ends_with("-gnu") { "gnu" } else { "" };
        Platform::of(arch, os, env)
    }

    /// The platform of Rust's `arch` and `os` names; `env` `gnu` on Linux
    /// needs glibc.
    fn of(arch: &str, os: &str, env: &str) -> Option<Platform> {
        let os = match os {
            "linux" => "linux",
            "macos" => "darwin",
            "windows" => "win32",
            _ => return None,
        };
        let cpu = match arch {
            "x86_64" => "x64",
            "aarch64" => "arm64",
            _ => return None,
        };
        let platform = PLATFORMS.into_iter().find(|p| p.os == os && p.cpu == cpu)?;
        let libc = (os == "linux" && env == "gnu").then_some("glibc");
        Some(Platform { libc, ..platform })
    }

    /// Its npm package: `goalkeeper-linux-x64`.
    pub fn package(&self) -> String {
        format!("goalkeeper-{}-{}", self.os, self.cpu)
    }

    /// The launcher's key for it: Node's `` `${process.platform} ${process.arch}` ``.
    pub fn key(&self) -> String {
        format!("{} {}", self.os, self.cpu)
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
        "goalkeeper's binary for {} {}; installed by the goalkeeper package",
        platform.os, platform.cpu
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
/// runs it with the same arguments, standard streams and exit status.
pub fn launcher() -> String {
    let packages = Value::Object(
        platform_packages()
            .into_iter()
            .map(|(key, package)| (key, Value::from(package)))
            .collect(),
    );
    let packages = serde_json::to_string_pretty(&packages).expect("JSON serializes");
    format!(
        r#"#!/usr/bin/env node
// goalkeeper's launcher (written by `goalkeeper package`): runs the binary
// of this machine's platform package, which npm installed as an optional
// dependency, with the same arguments, streams and exit status.
"use strict";
const {{ spawnSync }} = require("node:child_process");

const PACKAGES = {packages};

const key = `${{process.platform}} ${{process.arch}}`;
const name = PACKAGES[key];
if (name === undefined) {{
  process.stderr.write(
    `goalkeeper: no build for ${{key}}; the builds are for ${{Object.keys(PACKAGES).join(", ")}}. Build it from source with cargo install goalkeeper.\n`,
  );
  process.exit(2);
}}
const exe = process.platform === "win32" ? "goalkeeper.exe" : "goalkeeper";
let binary;
try {{
  binary = require.resolve(`${{name}}/bin/${{exe}}`);
}} catch {{
  process.stderr.write(
    `goalkeeper: the package ${{name}}, which holds the binary for ${{key}}, is not installed (npm installs it with goalkeeper unless optional dependencies are off); install it with: npm install ${{name}}\n`,
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
    fn a_target_names_its_platform() {
        let linux = Platform::of_target("x86_64-unknown-linux-musl").unwrap();
        assert_eq!(
            (linux.package(), linux.libc),
            ("goalkeeper-linux-x64".into(), None)
        );
        let gnu = Platform::of_target("aarch64-unknown-linux-gnu").unwrap();
        assert_eq!(
            (gnu.package(), gnu.libc),
            ("goalkeeper-linux-arm64".into(), Some("glibc"))
        );
        let mac = Platform::of_target("aarch64-apple-darwin").unwrap();
        assert_eq!(
            (mac.package(), mac.exe()),
            ("goalkeeper-darwin-arm64".into(), "goalkeeper")
        );
        let windows = Platform::of_target("x86_64-pc-windows-msvc").unwrap();
        assert_eq!(
            (windows.package(), windows.exe()),
            ("goalkeeper-win32-x64".into(), "goalkeeper.exe")
        );
        for target in [
            "riscv64gc-unknown-linux-gnu",
            "x86_64-unknown-freebsd",
            "wasm32-wasip1",
        ] {
            assert_eq!(Platform::of_target(target), None, "{target}");
        }
        for platform in PLATFORMS {
            assert_eq!(Platform::of_target(platform.target), Some(platform));
        }
    }
}
