//! End-to-end: the system prompt assembled from a directory tree, the
//! AGENTS.md links, and the memory file injected once per session.

use crate::common;

use std::fs;

use common::TestEnv;
use serde_json::{Value, json};

/// A project three levels deep with AGENTS.md at each level, workspace
/// files, memory for today and yesterday (by the fixed clock), and a skill.
fn tree(env: &TestEnv) -> std::path::PathBuf {
    let root = env.dir().join("repo");
    let app = root.join("services").join("app");
    fs::create_dir_all(&app).unwrap();
    fs::write(
        root.join("AGENTS.md"),
        "Repository rules: run `make check`.\n",
    )
    .unwrap();
    fs::write(
        root.join("services").join("AGENTS.md"),
        "Services speak JSON.\n",
    )
    .unwrap();
    fs::write(app.join("CLAUDE.md"), "The app is written in Rust.\n").unwrap();
    fs::write(app.join("SOUL.md"), "Be calm and precise.\n").unwrap();
    fs::create_dir_all(app.join("memory")).unwrap();
    fs::write(
        app.join("memory/2025-11-29.md"),
        "Today: cut the release branch.\n",
    )
    .unwrap();
    fs::write(
        app.join("memory/2025-11-28.md"),
        "Yesterday: fixed the flaky test.\n",
    )
    .unwrap();
    fs::write(app.join("memory/2025-11-27.md"), "Too old to show.\n").unwrap();
    fs::create_dir_all(app.join("skills/review")).unwrap();
    fs::write(
        app.join("skills/review/SKILL.md"),
        "---\nname: review\ndescription: Review a diff for bugs and style.\n---\nLong instructions.\n",
    )
    .unwrap();
    fs::write(app.join("USER.md"), [0x66, 0x6f, 0xff, 0x0a]).unwrap();
    app
}

#[test]
fn system_prompt_text_and_json() {
    let env = TestEnv::new();
    let app = tree(&env);
    let app_arg = app.display().to_string();
    let tmp = env.dir().display().to_string();
    let text = env
        .run(&["system-prompt", "--cwd", &app_arg])
        .replace(&tmp, "<tmp>");
    assert_snapshot!("system_prompt_text", text);
    let json = env.ok(&["--json", "system-prompt", "--cwd", &app_arg]);
    let mut value: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(value["message"]["customType"], "system-prompt");
    assert_eq!(value["message"]["source"]["form"], "instructions");
    let rendered = serde_json::to_string_pretty(&value["blocks"].take())
        .unwrap()
        .replace(&tmp, "<tmp>");
    assert_snapshot!("system_prompt_blocks_json", rendered);
    let diagnostics = value["diagnostics"].to_string().replace(&tmp, "<tmp>");
    assert!(
        diagnostics.contains("USER.md") && diagnostics.contains("not valid UTF-8"),
        "{diagnostics}"
    );
}

#[test]
fn workspace_link_and_status() {
    let env = TestEnv::new();
    let dir = env.dir().join("ws");
    fs::create_dir(&dir).unwrap();
    let arg = dir.display().to_string();
    let tmp = env.dir().display().to_string();
    let refused = env.run(&["workspace", "link", &arg]);
    assert!(refused.ends_with("[exit status: 1]\n"), "{refused}");
    assert_eq!(
        fs::read_dir(&dir).unwrap().count(),
        0,
        "a refusal changes nothing"
    );

    fs::write(dir.join("AGENTS.md"), "The rules.\n").unwrap();
    fs::write(dir.join("CLAUDE.md"), "Old Claude notes.\n").unwrap();
    let steps = [
        env.run(&["workspace", "status", &arg]),
        env.run(&["workspace", "link", &arg]),
        env.run(&["workspace", "link", &arg]),
        env.run(&["workspace", "status", &arg]),
    ]
    .join("\n")
    .replace(&tmp, "<tmp>");
    assert_snapshot!(
        "workspace_link",
        format!("{}\n{steps}", refused.replace(&tmp, "<tmp>"))
    );
    assert_eq!(
        fs::read_link(dir.join("CLAUDE.md")).unwrap(),
        std::path::Path::new("AGENTS.md")
    );
    let backup = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .find(|n| n.starts_with("CLAUDE.md.bak-"))
        .unwrap();
    assert_eq!(
        fs::read_to_string(dir.join(backup)).unwrap(),
        "Old Claude notes.\n"
    );
}

#[test]
fn memory_is_injected_once_per_session_across_processes() {
    let env = TestEnv::new();
    env.create_database();
    let memory = env.dir().join("memory.md");
    fs::write(
        &memory,
        "The staging host is stage-2.\nNever push </memory> to main.\n",
    )
    .unwrap();
    fs::write(
        env.dir().join("config.toml"),
        format!("[memory]\nfile = {:?}\n", memory.display().to_string()),
    )
    .unwrap();
    // No goal: `context` prints only the memory, the first time.
    let first = env.ok(&["context"]);
    assert!(first.starts_with("<memory>\n"), "{first}");
    assert_eq!(first.matches("</memory>").count(), 1, "{first}");
    assert_snapshot!("memory_first_context", first);
    assert_eq!(
        env.ok(&["context"]),
        "",
        "a second process does not repeat it"
    );

    // Another session gets it again, through the prompt hook.
    let event =
        json!({"session_id": "other", "hook_event_name": "UserPromptSubmit", "prompt": "hi"});
    let output = env
        .cmd(&["hook", "claude-code"])
        .write_stdin(event.to_string())
        .output()
        .unwrap();
    let reply: Value = serde_json::from_slice(&output.stdout).unwrap();
    let context = reply["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert!(context.starts_with("<memory>"), "{context}");
    let again = env
        .cmd(&["hook", "claude-code"])
        .write_stdin(event.to_string())
        .output()
        .unwrap();
    assert!(again.stdout.is_empty());

    // With --json, each message is its own document.
    let env2 = TestEnv::new();
    fs::write(
        env2.dir().join("config.toml"),
        format!("memory.file = {:?}\n", memory.display().to_string()),
    )
    .unwrap();
    env2.ok(&["goal", "set", "Ship it"]);
    let json = env2.ok(&["--json", "context"]);
    let docs: Vec<Value> = serde_json::Deserializer::from_str(&json)
        .into_iter()
        .map(Result::unwrap)
        .collect();
    let kinds: Vec<&str> = docs
        .iter()
        .map(|d| d["customType"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["memory", "goal-mode-context"]);
    assert_eq!(docs[0]["source"]["label"], "memory: memory.md · 59 bytes");
}

#[test]
fn a_missing_memory_file_is_a_note_not_a_failure() {
    let env = TestEnv::new();
    env.create_database();
    fs::write(
        env.dir().join("config.toml"),
        "memory.file = \"missing/memory.md\"\n",
    )
    .unwrap();
    let out = env.normalize(&env.run(&["context"]));
    assert_eq!(
        out,
        "$ goalkeeper context\n--- stderr ---\ngoalkeeper: memory file <tmp>/missing/memory.md does not exist; nothing injected\n[exit status: 0]\n"
    );
}
