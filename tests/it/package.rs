//! `goalkeeper package OUT`: the host packages, written from the code
//! `goalkeeper install` runs, each with the binary inside. Whether the
//! hosts accept them and run goalkeeper from them is the real-host
//! suite's (`tests/hosts/packages.rs`); here, what is written.

use std::path::Path;

use serde_json::Value;

use crate::common::TestEnv;

/// Every file under `dir`, relative, sorted.
fn files(dir: &Path) -> Vec<String> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(root, &path, out);
            } else {
                out.push(path.strip_prefix(root).unwrap().display().to_string());
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

fn json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The packages hold this binary, executable, and the files a person
/// reviews (the snapshot: manifests, hooks, servers, commands, the
/// launcher).
#[test]
fn the_packages_hold_the_binary_and_the_reviewed_files() {
    let env = TestEnv::new();
    let out = env.dir().join("out");
    let printed = env.ok(&["package", out.to_str().unwrap()]);
    assert!(
        printed.contains("claude plugin install goalkeeper@goalkeeper"),
        "{printed}"
    );
    let exe = std::fs::read(env!("CARGO_BIN_EXE_goalkeeper")).unwrap();
    let all = files(&out);
    let binaries: Vec<&String> = all
        .iter()
        .filter(|f| f.ends_with("bin/goalkeeper"))
        .collect();
    assert_eq!(
        binaries,
        [
            "gemini-cli/bin/goalkeeper",
            "marketplace/plugins/goalkeeper/bin/goalkeeper",
            "npm/linux-x64/bin/goalkeeper",
            "pi/bin/goalkeeper",
        ]
    );
    for binary in &binaries {
        let path = out.join(binary);
        assert!(
            std::fs::read(&path).unwrap() == exe,
            "{binary} is not this binary"
        );
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o111, 0o111, "{binary} is not executable");
    }
    // The text a person reads, file by file; the pi extension is its
    // source (checked by scripts/check-pi-extension.sh) with the tools,
    // which `install pi` writes the same.
    let mut text = String::new();
    for file in all
        .iter()
        .filter(|f| !binaries.contains(f) && !f.ends_with(".ts"))
    {
        let body = std::fs::read_to_string(out.join(file)).unwrap();
        text.push_str(&format!("==> {file}\n{body}\n"));
    }
    assert_snapshot!(
        "package_files",
        text.replace(env!("CARGO_PKG_VERSION"), "VERSION")
    );
    let extension = std::fs::read_to_string(out.join("pi/extensions/goalkeeper.ts")).unwrap();
    assert!(extension.contains(r#"const GOALKEEPER: string = findGoalkeeper("");"#));
    assert!(
        extension.contains(r#""linux x64": "@goalkeeper-dev/linux-x64""#),
        "{extension}"
    );
    assert!(extension.contains(r#""name": "todo""#) && extension.contains(r#""name": "goal""#));
}

/// The plugin's and the extension's hooks are the ones `install` writes
/// into a project, event for event, timeout for timeout; only the
/// executable (the package's own) and, in Claude Code, the plugin's names
/// of the tools differ.
#[test]
fn the_packages_hooks_are_the_installers() {
    let env = TestEnv::new();
    let out = env.dir().join("out");
    env.ok(&["package", out.to_str().unwrap()]);
    let project = env.dir().join("project");
    std::fs::create_dir(&project).unwrap();
    let project_arg = project.to_str().unwrap();
    for host in ["claude-code", "gemini-cli"] {
        env.ok(&["install", host, "--project", project_arg, "--command", "gk"]);
    }
    let home = env.dir().join("codex-home");
    env.ok(&[
        "install",
        "codex",
        "--codex-home",
        home.to_str().unwrap(),
        "--command",
        "gk",
    ]);
    let plugin = out.join("marketplace/plugins/goalkeeper");
    for (installed, packaged, host, executable) in [
        (
            json(&project.join(".claude/settings.json"))["hooks"].clone(),
            json(&plugin.join("hooks/hooks.json"))["hooks"].clone(),
            "claude-code",
            r#""${CLAUDE_PLUGIN_ROOT}/bin/goalkeeper""#,
        ),
        (
            json(&home.join("hooks.json"))["hooks"].clone(),
            json(&plugin.join("codex/hooks.json"))["hooks"].clone(),
            "codex",
            r#""${PLUGIN_ROOT}/bin/goalkeeper""#,
        ),
        (
            json(&project.join(".gemini/settings.json"))["hooks"].clone(),
            json(&out.join("gemini-cli/hooks/hooks.json"))["hooks"].clone(),
            "gemini-cli",
            r#""${extensionPath}/bin/goalkeeper""#,
        ),
    ] {
        // The command as it appears inside a JSON string.
        let command = serde_json::to_string(&format!("{executable} hook {host}")).unwrap();
        let command = &command[1..command.len() - 1];
        let as_installed = installed
            .to_string()
            .replace(&format!("gk hook {host}"), command)
            .replace("mcp__goalkeeper__", "mcp__plugin_goalkeeper_goalkeeper__");
        assert_eq!(
            serde_json::from_str::<Value>(&as_installed).unwrap(),
            packaged,
            "{host}"
        );
    }
}

/// An output directory that holds anything is refused, and nothing is
/// written into it.
#[test]
fn a_directory_that_holds_anything_is_refused() {
    let env = TestEnv::new();
    let out = env.dir().join("out");
    std::fs::create_dir(&out).unwrap();
    std::fs::write(out.join("mine.txt"), "keep me").unwrap();
    let output = env
        .cmd(&["package", out.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        String::from_utf8(output.stderr).unwrap(),
        format!(
            "goalkeeper: {} is not empty; give a new or empty directory (nothing was written)\n",
            out.display()
        )
    );
    assert_eq!(files(&out), ["mine.txt"]);
    assert_eq!(
        std::fs::read_to_string(out.join("mine.txt")).unwrap(),
        "keep me"
    );
}

/// A release packages each target's build on one machine: `--binary` and
/// `--target` name it, and the npm package is that platform's. A target
/// no release builds for is refused, and nothing is written.
#[test]
fn another_targets_build_is_packaged_as_that_platforms() {
    let env = TestEnv::new();
    let binary = env.dir().join("goalkeeper-mac");
    std::fs::write(&binary, "not really a mac binary").unwrap();
    let out = env.dir().join("out");
    env.ok(&[
        "package",
        out.to_str().unwrap(),
        "--binary",
        binary.to_str().unwrap(),
        "--target",
        "aarch64-apple-darwin",
    ]);
    let manifest = json(&out.join("npm/darwin-arm64/package.json"));
    assert_eq!(manifest["name"], "@goalkeeper-dev/darwin-arm64");
    assert_eq!(manifest["os"], serde_json::json!(["darwin"]));
    assert_eq!(manifest["cpu"], serde_json::json!(["arm64"]));
    assert!(manifest.get("libc").is_none(), "{manifest:#}");
    for copy in [
        "npm/darwin-arm64/bin/goalkeeper",
        "gemini-cli/bin/goalkeeper",
        "marketplace/plugins/goalkeeper/bin/goalkeeper",
        "pi/bin/goalkeeper",
    ] {
        assert_eq!(
            std::fs::read_to_string(out.join(copy)).unwrap(),
            "not really a mac binary"
        );
    }
    // A static Linux build goes into the packages of both C libraries,
    // npm's `libc` telling them apart.
    let linux = env.dir().join("linux");
    env.ok(&[
        "package",
        linux.to_str().unwrap(),
        "--binary",
        binary.to_str().unwrap(),
        "--target",
        "aarch64-unknown-linux-musl",
    ]);
    for (dir, name, libc) in [
        ("linux-arm64", "@goalkeeper-dev/linux-arm64", "glibc"),
        (
            "linux-arm64-musl",
            "@goalkeeper-dev/linux-arm64-musl",
            "musl",
        ),
    ] {
        let manifest = json(&linux.join("npm").join(dir).join("package.json"));
        assert_eq!(manifest["name"], name);
        assert_eq!(manifest["libc"], serde_json::json!([libc]));
        let copy = linux.join("npm").join(dir).join("bin/goalkeeper");
        assert_eq!(
            std::fs::read_to_string(copy).unwrap(),
            "not really a mac binary"
        );
    }
    let launcher = json(&linux.join("npm/goalkeeper/package.json"));
    let optional: Vec<&String> = launcher["optionalDependencies"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert!(
        optional
            .iter()
            .all(|name| name.starts_with("@goalkeeper-dev/")),
        "{optional:?}"
    );
    assert_eq!(optional.len(), 7, "{optional:?}");
    let elsewhere = env.dir().join("elsewhere");
    let output = env
        .cmd(&[
            "package",
            elsewhere.to_str().unwrap(),
            "--binary",
            binary.to_str().unwrap(),
            "--target",
            "riscv64gc-unknown-linux-gnu",
        ])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(
        String::from_utf8(output.stderr).unwrap().starts_with(
            "goalkeeper: no release is built for riscv64gc-unknown-linux-gnu, so there are no packages for it; the release targets are x86_64-unknown-linux-musl,"
        )
    );
    assert!(!elsewhere.exists());
}

/// A package's binary that the shell does not find by name (here, no
/// goalkeeper on `PATH`) names itself by its path, quoted for the shell,
/// wherever it tells the model or a person to run goalkeeper: the checks
/// the goal lists, the gate's refusal, the goal-mode context. (The same
/// binary outside a package says `goalkeeper`: every other snapshot.)
#[test]
fn a_package_binary_names_itself_by_its_path_where_it_says_to_run_goalkeeper() {
    let env = TestEnv::new();
    let out = env.dir().join("out dir");
    env.ok(&["package", out.to_str().unwrap()]);
    let exe = out.join("gemini-cli/bin/goalkeeper");
    let run = |args: &[&str]| {
        let output = std::process::Command::new(&exe)
            .args(args)
            .current_dir(env.dir())
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("GOALKEEPER_DB", env.location())
            .env("GOALKEEPER_NOW", env.now_ms.to_string())
            .env("GOALKEEPER_CONFIG", env.dir().join("config.toml"))
            .output()
            .unwrap();
        crate::common::render(args, &output)
    };
    let mut text = String::new();
    for args in [
        &[
            "--session",
            "s",
            "goal",
            "set",
            "Ship it",
            "--check",
            "true",
        ][..],
        &["--session", "s", "goal", "apply", r#"{"op":"complete"}"#],
        &["--session", "s", "context"],
    ] {
        text.push_str(&run(args));
    }
    let named = format!(
        "'{}/out dir/gemini-cli/bin/goalkeeper' verify",
        env.dir().display()
    );
    assert!(text.contains(&named), "{text}");
    assert!(!text.contains("`goalkeeper verify"), "{text}");
    assert_snapshot!("package_binary_names_itself", env.normalize(&text));
}
