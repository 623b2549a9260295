//! `install` through the real binary: it merges into the user's settings,
//! keeps their keys, backs the file up, replaces an earlier install, and
//! refuses an option of another host.

use super::*;

#[test]
fn install_merges_keeps_keys_backs_up_and_is_idempotent() {
    let env = TestEnv::new();
    let project = env.dir().join("project");
    std::fs::create_dir_all(project.join(".claude")).unwrap();
    let existing = json!({
        "model": "opus",
        "permissions": {"allow": ["Bash(ls:*)"]},
        "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]},
    });
    std::fs::write(project.join(".claude/settings.json"), existing.to_string()).unwrap();
    let project_arg = project.display().to_string();
    let args = [
        "install",
        "claude-code",
        "--project",
        &project_arg,
        "--command",
        "goalkeeper",
    ];
    let first = env.run(&args).replace(&project_arg, "<project>");
    let settings: Value = serde_json::from_str(
        &std::fs::read_to_string(project.join(".claude/settings.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(settings["model"], "opus");
    // The user's permissions stay; the two tools are allowed after them.
    let mut allowed = existing["permissions"]["allow"].as_array().unwrap().clone();
    allowed.extend([
        Value::from("mcp__goalkeeper__todo"),
        Value::from("mcp__goalkeeper__goal"),
    ]);
    assert_eq!(settings["permissions"]["allow"], Value::Array(allowed));
    assert_eq!(settings["hooks"]["Stop"][0], existing["hooks"]["Stop"][0]);
    assert_eq!(
        settings["hooks"]["Stop"][1]["hooks"][0]["command"],
        "goalkeeper hook claude-code"
    );
    // Every source: `startup` adopts a queued goal, `clear` carries over.
    assert!(
        settings["hooks"]["SessionStart"][0]
            .get("matcher")
            .is_none()
    );
    assert_eq!(
        settings["hooks"]["PreToolUse"][0]["matcher"],
        "Bash|mcp__goalkeeper__todo|mcp__goalkeeper__goal"
    );
    assert_eq!(settings["hooks"]["Stop"][1]["hooks"][0]["timeout"], 15);
    assert_eq!(settings["statusLine"]["command"], "goalkeeper statusline");
    let mcp: Value =
        serde_json::from_str(&std::fs::read_to_string(project.join(".mcp.json")).unwrap()).unwrap();
    assert_eq!(mcp["mcpServers"]["goalkeeper"]["command"], "goalkeeper");
    let backups: Vec<_> = std::fs::read_dir(project.join(".claude"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with("settings.json.bak-"))
        .collect();
    assert_eq!(backups, ["settings.json.bak-20251129T184000Z"]);
    let backup = std::fs::read_to_string(project.join(".claude").join(&backups[0])).unwrap();
    assert_eq!(backup, existing.to_string());

    let second = env.run(&args).replace(&project_arg, "<project>");
    assert_snapshot!("install_claude_code", format!("{first}\n{second}"));
    assert!(second.contains("(unchanged)") && !second.contains("(updated)"));

    std::fs::write(project.join(".mcp.json"), "[1, 2").unwrap();
    let settings_before = std::fs::read_to_string(project.join(".claude/settings.json")).unwrap();
    let refused = env.run(&args).replace(&project_arg, "<project>");
    assert!(
        refused.contains("is not valid JSON") && refused.ends_with("[exit status: 1]\n"),
        "{refused}"
    );
    assert_eq!(
        std::fs::read_to_string(project.join(".claude/settings.json")).unwrap(),
        settings_before
    );
    assert_eq!(
        std::fs::read_to_string(project.join(".mcp.json")).unwrap(),
        "[1, 2"
    );
}

#[test]
fn an_earlier_install_is_replaced_not_doubled() {
    let env = TestEnv::new();
    let project = env.dir().join("project");
    std::fs::create_dir_all(project.join(".claude")).unwrap();
    // What an older goalkeeper wrote: an unquoted machine path.
    let old = json!({"hooks": {
        "SessionStart": [{"matcher": "compact|resume", "hooks": [{"type": "command", "command": "/old place/goalkeeper hook claude-code"}]}],
        "Stop": [{"hooks": [{"type": "command", "command": "say done"}, {"type": "command", "command": "/old place/goalkeeper hook claude-code"}]}],
    }, "statusLine": {"type": "command", "command": "/old place/goalkeeper statusline"}});
    std::fs::write(project.join(".claude/settings.json"), old.to_string()).unwrap();
    let p = project.display().to_string();
    let out = env
        .cmd(&[
            "install",
            "claude-code",
            "--project",
            &p,
            "--command",
            "goalkeeper",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = std::fs::read_to_string(project.join(".claude/settings.json")).unwrap();
    assert!(!text.contains("/old place"), "{text}");
    let settings: Value = serde_json::from_str(&text).unwrap();
    let starts = settings["hooks"]["SessionStart"].as_array().unwrap();
    assert_eq!(starts.len(), 1, "{text}");
    let stop = settings["hooks"]["Stop"].as_array().unwrap();
    assert_eq!(
        stop[0]["hooks"],
        json!([{"type": "command", "command": "say done"}])
    );
    assert_eq!(
        stop[1]["hooks"][0]["command"],
        "goalkeeper hook claude-code"
    );
    assert_eq!(settings["statusLine"]["command"], "goalkeeper statusline");
}

/// An install from before the PreToolUse hook matched goalkeeper's tools
/// is updated in place: one group, the new matcher, the old file kept.
#[test]
fn install_updates_an_earlier_pre_tool_use_matcher() {
    let env = TestEnv::new();
    let project = env.dir().join("project");
    std::fs::create_dir_all(project.join(".claude")).unwrap();
    let earlier = json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": "goalkeeper hook claude-code", "timeout": 15}]}]}});
    std::fs::write(project.join(".claude/settings.json"), earlier.to_string()).unwrap();
    let project_arg = project.display().to_string();
    let out = env.run(&[
        "install",
        "claude-code",
        "--project",
        &project_arg,
        "--command",
        "goalkeeper",
    ]);
    assert!(out.contains("hooks.PreToolUse: updated"), "{out}");
    let settings: Value = serde_json::from_str(
        &std::fs::read_to_string(project.join(".claude/settings.json")).unwrap(),
    )
    .unwrap();
    let groups = settings["hooks"]["PreToolUse"].as_array().unwrap();
    assert_eq!(groups.len(), 1, "{groups:?}");
    assert_eq!(
        groups[0]["matcher"],
        "Bash|mcp__goalkeeper__todo|mcp__goalkeeper__goal"
    );
    let backup = std::fs::read_dir(project.join(".claude"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().contains("settings.json.bak-"))
        .expect("the earlier settings were kept");
    assert_eq!(
        std::fs::read_to_string(backup).unwrap(),
        earlier.to_string()
    );
}

/// Run as Claude Code's plugin (Claude Code sets `CLAUDE_PLUGIN_ROOT` for
/// a plugin's hooks), the hook names the tools as Claude Code shows a
/// plugin's (`mcp__plugin_goalkeeper_goalkeeper__…`) in what the model
/// reads, and allows their calls; run from a project's settings, the
/// names `install` wrote, and no allowing.
#[test]
fn as_a_plugin_the_hooks_use_the_plugins_names() {
    let env = TestEnv::new();
    as_session(&env, &["goal", "set", "Ship it"]);
    as_session(&env, &["todo", "init", "--item", "Write code"]);
    let run = |plugin: bool, input: &str| {
        let mut cmd = env.cmd(&["hook", "claude-code"]);
        if plugin {
            cmd.env("CLAUDE_PLUGIN_ROOT", "/plugins/goalkeeper");
        }
        let output = cmd.write_stdin(input).output().unwrap();
        assert_eq!(output.status.code(), Some(0));
        let stdout = String::from_utf8(output.stdout).unwrap();
        serde_json::from_str::<Value>(&stdout).unwrap_or(Value::Null)
    };
    let stop = event("Stop", json!({"stop_hook_active": false}));
    let reason = |reply: Value| reply["reason"].as_str().unwrap().to_owned();
    let as_plugin = reason(run(true, &stop));
    assert!(
        as_plugin.contains("`mcp__plugin_goalkeeper_goalkeeper__todo`")
            && !as_plugin.contains("mcp__goalkeeper__"),
        "{as_plugin}"
    );
    let as_installed = reason(run(false, &stop));
    assert!(
        as_installed.contains("`mcp__goalkeeper__todo`") && !as_installed.contains("plugin"),
        "{as_installed}"
    );
    let call = |tool: &str| {
        event(
            "PreToolUse",
            json!({"tool_name": tool, "tool_input": {"op": "view"}, "tool_use_id": "toolu_1"}),
        )
    };
    let allowed = run(true, &call("mcp__plugin_goalkeeper_goalkeeper__todo"));
    assert_eq!(
        allowed["hookSpecificOutput"]["permissionDecision"], "allow",
        "{allowed}"
    );
    assert_eq!(run(false, &call("mcp__goalkeeper__todo")), Value::Null);
    let bash = event(
        "PreToolUse",
        json!({"tool_name": "Bash", "tool_input": {"command": "goalkeeper goal drop"}}),
    );
    let denied = run(true, &bash);
    let why = denied["hookSpecificOutput"]["permissionDecisionReason"]
        .as_str()
        .unwrap();
    assert!(why.contains("/goalkeeper:goal"), "{why}");
}

/// With goalkeeper's Gemini CLI extension installed, `install gemini-cli`
/// writes nothing into the project (the extension serves every project):
/// without a terminal it says how to write the policy the extension's
/// tools need, and `--policy` writes it.
#[test]
fn install_gemini_cli_with_the_extension_offers_the_policy() {
    let env = TestEnv::new();
    let home = env.dir().join("home");
    let extension = home.join(".gemini/extensions/goalkeeper");
    std::fs::create_dir_all(&extension).unwrap();
    std::fs::write(extension.join("gemini-extension.json"), "{}").unwrap();
    let project = env.dir().join("project");
    std::fs::create_dir(&project).unwrap();
    let install = |extra: &[&str]| {
        let mut args = vec![
            "install",
            "gemini-cli",
            "--project",
            project.to_str().unwrap(),
        ];
        args.extend(extra);
        let output = env.cmd(&args).env("HOME", &home).output().unwrap();
        assert_eq!(output.status.code(), Some(0), "{output:?}");
        String::from_utf8(output.stdout).unwrap()
    };
    let policy = home.join(".gemini/policies/goalkeeper.toml");
    let offered = install(&[]);
    assert!(
        offered.contains("nothing written to the project")
            && offered.contains("`goalkeeper install gemini-cli --policy` writes")
            && offered.contains("mcpName = \"goalkeeper\""),
        "{offered}"
    );
    assert!(!policy.exists());
    assert_eq!(std::fs::read_dir(&project).unwrap().count(), 0);
    let written = install(&["--policy"]);
    assert!(written.contains("policy: written"), "{written}");
    assert!(
        std::fs::read_to_string(&policy)
            .unwrap()
            .contains("decision = \"allow\"")
    );
    assert_eq!(std::fs::read_dir(&project).unwrap().count(), 0);
}

/// `install HOST` takes the options of that host's installer only: another
/// host's is refused with the ones it takes, and nothing is written.
#[test]
fn install_refuses_another_hosts_option() {
    let env = TestEnv::new();
    let dir = env.dir().join("somewhere");
    std::fs::create_dir(&dir).unwrap();
    let path = dir.to_str().unwrap();
    for (args, message) in [
        (
            vec!["install", "codex", "--project", path],
            "goalkeeper: `install codex` does not take --project; it takes --codex-home and --command\n",
        ),
        (
            vec!["install", "claude-code", "--policy", "--project", path],
            "goalkeeper: `install claude-code` does not take --policy; it takes --project and --command\n",
        ),
        (
            vec!["install", "pi", "--codex-home", path],
            "goalkeeper: `install pi` does not take --codex-home; it takes --project and --command\n",
        ),
    ] {
        let output = env.cmd(&args).output().unwrap();
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert_eq!(String::from_utf8(output.stderr).unwrap(), message);
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "{args:?}");
    }
}
