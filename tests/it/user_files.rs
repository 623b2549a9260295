//! Files the user owns (DESIGN.md §12), through the real binary: `install
//! claude-code`, `workspace link` and `todo export` against planted links,
//! private modes, exact values, backups in the same second, and two runs
//! at once; the database created 0600 through a dangling `--db` link.

use crate::common;

use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::Path;

use common::TestEnv;
use serde_json::Value;

const STAMP: &str = "20251129T184000Z";

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o7777
}

fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn install_args<'a>(project: &'a str, command: &'a str) -> [&'a str; 6] {
    [
        "install",
        "claude-code",
        "--project",
        project,
        "--command",
        command,
    ]
}

fn settings(project: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(project.join(".claude/settings.json")).unwrap())
        .unwrap()
}

/// The hook commands installed for `event`.
fn hook_commands(settings: &Value, event: &str) -> Vec<String> {
    settings["hooks"][event]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|g| g["hooks"].as_array().unwrap().clone())
        .map(|h| h["command"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn install_never_writes_through_a_planted_temporary_link() {
    let env = TestEnv::new();
    let project = env.dir().join("project");
    std::fs::create_dir_all(project.join(".claude")).unwrap();
    let outside = env.dir().join("outside.txt");
    std::fs::write(&outside, "not yours").unwrap();
    // What a cloned repository could carry: links under the names the old
    // installer used for its temporary files.
    symlink(
        &outside,
        project.join(".claude/settings.json.goalkeeper-tmp"),
    )
    .unwrap();
    symlink(&outside, project.join(".mcp.json.goalkeeper-tmp")).unwrap();
    let p = project.display().to_string();
    let out = env.cmd(&install_args(&p, "goalkeeper")).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "not yours");
    for file in [".claude/settings.json", ".mcp.json"] {
        let meta = std::fs::symlink_metadata(project.join(file)).unwrap();
        assert!(meta.file_type().is_file(), "{file} is a regular file");
    }
    assert_eq!(
        hook_commands(&settings(&project), "Stop"),
        ["goalkeeper hook claude-code"]
    );
    // The planted links are left as they were, and nothing else appeared.
    assert_eq!(
        names(&project.join(".claude")),
        ["commands", "settings.json", "settings.json.goalkeeper-tmp"]
    );
}

#[test]
fn install_keeps_a_private_mode_exact_values_and_key_order() {
    let env = TestEnv::new();
    let project = env.dir().join("project");
    std::fs::create_dir_all(project.join(".claude")).unwrap();
    let file = project.join(".claude/settings.json");
    let original = "{\n  \"zeta\": 12345678901234567890123,\n  \"env\": {\"API_KEY\": \"sk-secret\", \"ratio\": 1.50},\n  \"alpha\": [1e400, -0]\n}\n";
    std::fs::write(&file, original).unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    let p = project.display().to_string();
    let out = env.cmd(&install_args(&p, "goalkeeper")).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(mode(&file), 0o600);
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(
        text.starts_with(
            "{\n  \"zeta\": 12345678901234567890123,\n  \"env\": {\n    \"API_KEY\": \"sk-secret\",\n    \"ratio\": 1.50\n  },\n  \"alpha\": [\n    1e400,\n    -0\n  ],\n  \"hooks\": {"
        ),
        "{text}"
    );
    let backup = project.join(format!(".claude/settings.json.bak-{STAMP}"));
    assert_eq!(std::fs::read_to_string(&backup).unwrap(), original);
    assert_eq!(mode(&backup), 0o600);
}

#[test]
fn two_installs_in_the_same_second_keep_both_backups() {
    let env = TestEnv::new();
    let project = env.dir().join("project");
    std::fs::create_dir_all(project.join(".claude")).unwrap();
    std::fs::write(project.join(".claude/settings.json"), "{\"mine\": true}").unwrap();
    let p = project.display().to_string();
    for command in ["gk-one", "gk-two"] {
        let out = env.cmd(&install_args(&p, command)).output().unwrap();
        assert!(out.status.success(), "{out:?}");
    }
    let dir = project.join(".claude");
    assert_eq!(
        names(&dir),
        [
            "commands".to_owned(),
            "settings.json".to_owned(),
            format!("settings.json.bak-{STAMP}"),
            format!("settings.json.bak-{STAMP}-2"),
        ]
    );
    assert_eq!(
        std::fs::read_to_string(dir.join(format!("settings.json.bak-{STAMP}"))).unwrap(),
        "{\"mine\": true}"
    );
    let second: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join(format!("settings.json.bak-{STAMP}-2"))).unwrap(),
    )
    .unwrap();
    assert_eq!(hook_commands(&second, "Stop"), ["gk-one hook claude-code"]);
    assert_eq!(
        hook_commands(&settings(&project), "Stop"),
        ["gk-one hook claude-code", "gk-two hook claude-code"]
    );
}

#[test]
fn install_refuses_a_claude_directory_that_links_elsewhere() {
    let env = TestEnv::new();
    let project = env.dir().join("project");
    let elsewhere = env.dir().join("elsewhere");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::create_dir_all(&elsewhere).unwrap();
    symlink(&elsewhere, project.join(".claude")).unwrap();
    let p = project.display().to_string();
    let out = env.cmd(&install_args(&p, "goalkeeper")).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "goalkeeper: {p}/.claude is a symbolic link (to {}); goalkeeper writes only inside {p} and never through a link: \
             replace the link with a real file or directory, or run goalkeeper on the directory it points to (nothing was changed)\n",
            elsewhere.display()
        )
    );
    assert!(names(&elsewhere).is_empty());
    assert_eq!(names(&project), [".claude"]);
}

/// Runs `args` in two processes started together, `rounds` times, and
/// returns their outputs.
fn race(env: &TestEnv, rounds: usize, args: [&[&str]; 2], before: impl Fn(usize)) {
    for round in 0..rounds {
        before(round);
        let children: Vec<_> = args
            .iter()
            .map(|a| {
                env.std_cmd(a)
                    .stdout(std::process::Stdio::piped())
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for child in children {
            let out = child.wait_with_output().unwrap();
            assert!(out.status.success(), "round {round}: {out:?}");
        }
    }
}

#[test]
fn concurrent_installs_all_succeed_and_keep_both_changes() {
    let env = TestEnv::new();
    let project = env.dir().join("project");
    let p = project.display().to_string();
    let reset = |_| {
        let _ = std::fs::remove_dir_all(&project);
        std::fs::create_dir_all(project.join(".claude")).unwrap();
        std::fs::write(project.join(".claude/settings.json"), "{\"mine\": 1}").unwrap();
    };
    // Identical installs: both succeed, one backup of the original.
    race(
        &env,
        12,
        [
            &install_args(&p, "goalkeeper"),
            &install_args(&p, "goalkeeper"),
        ],
        |round| {
            if round > 0 {
                let s = settings(&project);
                assert_eq!(hook_commands(&s, "Stop"), ["goalkeeper hook claude-code"]);
            }
            reset(round)
        },
    );
    // Different commands: both hooks land every time.
    let check = || {
        let s = settings(&project);
        let mut stop = hook_commands(&s, "Stop");
        stop.sort();
        assert_eq!(stop, ["gk-a hook claude-code", "gk-b hook claude-code"]);
        assert_eq!(s["mine"], 1);
        let backup = project.join(format!(".claude/settings.json.bak-{STAMP}"));
        assert_eq!(std::fs::read_to_string(backup).unwrap(), "{\"mine\": 1}");
    };
    race(
        &env,
        12,
        [&install_args(&p, "gk-a"), &install_args(&p, "gk-b")],
        |round| {
            if round > 0 {
                check();
            }
            reset(round)
        },
    );
    check();
}

#[test]
fn concurrent_workspace_links_keep_the_original_file() {
    let env = TestEnv::new();
    let dir = env.dir().join("ws");
    let d = dir.display().to_string();
    let check = || {
        assert_eq!(
            names(&dir),
            [
                "AGENTS.md".to_owned(),
                "CLAUDE.md".to_owned(),
                format!("CLAUDE.md.bak-{STAMP}"),
                "GEMINI.md".to_owned(),
            ]
        );
        assert_eq!(
            std::fs::read_to_string(dir.join(format!("CLAUDE.md.bak-{STAMP}"))).unwrap(),
            "my own claude notes"
        );
        assert_eq!(
            std::fs::read_link(dir.join("CLAUDE.md")).unwrap(),
            Path::new("AGENTS.md")
        );
    };
    race(
        &env,
        12,
        [&["workspace", "link", &d], &["workspace", "link", &d]],
        |round| {
            if round > 0 {
                check();
            }
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join("AGENTS.md"), "the source").unwrap();
            std::fs::write(dir.join("CLAUDE.md"), "my own claude notes").unwrap();
        },
    );
    check();
}

#[test]
fn export_refuses_a_hand_written_todo_md_without_force() {
    let env = TestEnv::new();
    env.create_database();
    let todo = env.dir().join("TODO.md");
    let hand = "# My plan\n\n- buy milk\n";
    std::fs::write(&todo, hand).unwrap();
    // Even with an empty list: refused, the file untouched.
    let out = env.cmd(&["todo", "export"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "goalkeeper: TODO.md was not written by goalkeeper (it does not start with `<!-- goalkeeper export:`), \
         so it was left as it was; pass --force to replace it (the old file is kept as a backup), or export to another path\n"
    );
    assert_eq!(std::fs::read_to_string(&todo).unwrap(), hand);
    assert!(!names(env.dir()).iter().any(|n| n.starts_with("TODO.md.")));

    env.ok(&["todo", "init", "--item", "Write the code"]);
    let out = env.cmd(&["todo", "export", "--force"]).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!(
            "Exported 1 tasks in 1 phases (version 1) to TODO.md.\nThe previous file was kept as ./TODO.md.bak-{STAMP}.\n"
        )
    );
    let backup = env.dir().join(format!("TODO.md.bak-{STAMP}"));
    assert_eq!(std::fs::read_to_string(&backup).unwrap(), hand);
    let ours = std::fs::read_to_string(&todo).unwrap();
    assert!(ours.starts_with("<!-- goalkeeper export: session default, version 1 -->"));

    // goalkeeper's own file is replaced without --force, and kept too.
    env.ok(&["todo", "done", "Write the code"]);
    let out = env.cmd(&["todo", "export"]).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(std::fs::read_to_string(&backup).unwrap(), hand);
    assert_eq!(
        std::fs::read_to_string(env.dir().join(format!("TODO.md.bak-{STAMP}-2"))).unwrap(),
        ours
    );
    assert!(
        std::fs::read_to_string(&todo)
            .unwrap()
            .contains("- [x] Write the code")
    );
}

#[test]
fn a_database_behind_a_dangling_link_is_created_private() {
    let env = TestEnv::new();
    let link = env.dir().join("link.db");
    let target = env.dir().join("data").join("real.db");
    std::fs::create_dir_all(target.parent().unwrap()).unwrap();
    symlink(&target, &link).unwrap();
    let l = link.display().to_string();
    env.ok(&["--db", &l, "todo", "init", "--item", "a"]);
    assert_eq!(mode(&target), 0o600);
    for suffix in ["-wal", "-shm"] {
        let side = env.dir().join("data").join(format!("real.db{suffix}"));
        if side.exists() {
            assert_eq!(mode(&side), 0o600, "{suffix}");
        }
    }
    assert!(env.dir().join("data/real.db-wal").exists());
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    // The same database through the link: the list is there.
    let via_link = env.ok(&["--db", &l, "--json", "todo", "view"]);
    let direct = env.ok(&[
        "--db",
        &target.display().to_string(),
        "--json",
        "todo",
        "view",
    ]);
    assert_eq!(via_link, direct);
    assert!(via_link.contains("\"a\""), "{via_link}");
}

/// Every backup of `file` in its directory, by content.
fn backups_of(file: &Path) -> Vec<String> {
    let name = file.file_name().unwrap().to_string_lossy().into_owned();
    let dir = file.parent().unwrap();
    names(dir)
        .into_iter()
        .filter(|n| n.starts_with(&format!("{name}.bak-{STAMP}")))
        .map(|n| std::fs::read_to_string(dir.join(n)).unwrap())
        .collect()
}

/// The commands of `event`'s hooks in a Gemini CLI or Codex hooks file
/// (the same shape as Claude Code's), sorted.
fn sorted_hook_commands(file: &Path, event: &str) -> Vec<String> {
    let settings: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    let mut commands = hook_commands(&settings, event);
    commands.sort();
    commands
}

/// The user's own files the installers find before each round.
const CLAUDE_ORIGINAL: &str = "{\"mine\": 12345678901234567890123}";
const GEMINI_ORIGINAL: &str = "{\"theme\": \"mine\", \"n\": 1.50}";
const CODEX_ORIGINAL: &str = "model = \"mine\" # my comment\nratio = 1.50\n";

/// A fresh project and Codex home holding the user's own files.
fn seed_user_files(project: &Path, codex_home: &Path) {
    let _ = std::fs::remove_dir_all(project);
    let _ = std::fs::remove_dir_all(codex_home);
    std::fs::create_dir_all(project.join(".claude")).unwrap();
    std::fs::create_dir_all(project.join(".gemini")).unwrap();
    std::fs::create_dir_all(codex_home).unwrap();
    std::fs::write(project.join(".claude/settings.json"), CLAUDE_ORIGINAL).unwrap();
    std::fs::write(project.join(".gemini/settings.json"), GEMINI_ORIGINAL).unwrap();
    std::fs::write(codex_home.join("config.toml"), CODEX_ORIGINAL).unwrap();
    std::fs::write(project.join("AGENTS.md"), "the source").unwrap();
    std::fs::write(project.join("CLAUDE.md"), "my own claude notes").unwrap();
}

/// Claude Code and Gemini CLI: both commands' hooks, the user's values
/// exactly, the originals in a backup.
fn check_claude_and_gemini(project: &Path, round: usize) {
    let claude = project.join(".claude/settings.json");
    assert_eq!(
        sorted_hook_commands(&claude, "Stop"),
        ["gk-a hook claude-code", "gk-b hook claude-code"],
        "round {round}"
    );
    assert!(
        std::fs::read_to_string(&claude)
            .unwrap()
            .contains("12345678901234567890123")
    );
    assert!(
        backups_of(&claude).contains(&CLAUDE_ORIGINAL.to_owned()),
        "round {round}"
    );
    let gemini = project.join(".gemini/settings.json");
    assert_eq!(
        sorted_hook_commands(&gemini, "AfterAgent"),
        ["gk-a hook gemini-cli", "gk-b hook gemini-cli"],
        "round {round}"
    );
    let gemini_text = std::fs::read_to_string(&gemini).unwrap();
    assert!(gemini_text.contains("\"n\": 1.50"), "{gemini_text}");
    assert!(gemini_text.contains("\"goalkeeper\""), "{gemini_text}");
    assert!(
        backups_of(&gemini).contains(&GEMINI_ORIGINAL.to_owned()),
        "round {round}"
    );
}

/// Codex: both commands' hooks, each trusted, the user's lines kept byte
/// for byte, the original in a backup.
fn check_codex(codex_home: &Path, round: usize) {
    let hooks = codex_home.join("hooks.json");
    assert_eq!(
        sorted_hook_commands(&hooks, "Stop"),
        ["gk-a hook codex", "gk-b hook codex"],
        "round {round}"
    );
    let config = std::fs::read_to_string(codex_home.join("config.toml")).unwrap();
    assert!(
        config.starts_with(CODEX_ORIGINAL),
        "round {round}: {config}"
    );
    let trusted: Vec<&str> = config
        .lines()
        .filter(|l| l.starts_with("[hooks.state."))
        .collect();
    assert_eq!(trusted.len(), 10, "round {round}: {config}");
    for index in 0..2 {
        assert!(
            trusted
                .iter()
                .any(|l| l.contains(&format!("hooks.json:stop:{index}:0"))),
            "round {round}: {config}"
        );
    }
    assert!(config.contains("[mcp_servers.goalkeeper]"), "{config}");
    assert!(
        backups_of(&codex_home.join("config.toml")).contains(&CODEX_ORIGINAL.to_owned()),
        "round {round}"
    );
}

/// Every installer and `workspace link` at once, each host's twice with
/// different commands, on one project (and one Codex home) holding the
/// user's own files: all of them succeed, every change is there (both
/// commands' hooks for each host, Codex's trust entries for all of them),
/// the user's values are kept exactly, and each original file is in a
/// backup.
#[test]
fn every_installer_and_workspace_link_at_once_keep_every_change() {
    const ROUNDS: usize = 8;
    let env = TestEnv::new();
    let project = env.dir().join("project");
    let codex_home = env.dir().join("codex-home");
    let p = project.display().to_string();
    let c = codex_home.display().to_string();
    let runs: Vec<Vec<&str>> = ["gk-a", "gk-b"]
        .iter()
        .flat_map(|cmd| {
            [
                vec!["install", "claude-code", "--project", &p, "--command", cmd],
                vec!["install", "gemini-cli", "--project", &p, "--command", cmd],
                vec!["install", "codex", "--codex-home", &c, "--command", cmd],
            ]
        })
        .chain([
            vec!["install", "pi", "--project", &p, "--command", "gk-a"],
            vec!["workspace", "link", &p],
        ])
        .collect();
    for round in 0..ROUNDS {
        seed_user_files(&project, &codex_home);
        let children: Vec<_> = runs
            .iter()
            .map(|args| {
                env.std_cmd(args)
                    .stdout(std::process::Stdio::piped())
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for (args, child) in runs.iter().zip(children) {
            let out = child.wait_with_output().unwrap();
            assert!(
                out.status.success(),
                "round {round}: {}",
                common::render(args, &out)
            );
        }
        check_claude_and_gemini(&project, round);
        check_codex(&codex_home, round);
        // pi's extension, and the workspace link with the user's file kept.
        assert!(project.join(".pi/extensions/goalkeeper.ts").is_file());
        assert_eq!(
            std::fs::read_link(project.join("CLAUDE.md")).unwrap(),
            Path::new("AGENTS.md")
        );
        assert_eq!(
            backups_of(&project.join("CLAUDE.md")),
            ["my own claude notes"]
        );
    }
}
