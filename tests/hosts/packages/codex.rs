//! Codex with goalkeeper's plugin: `codex plugin marketplace add` and
//! `codex plugin add` from the packaged marketplace, then the plugin's own
//! `goalkeeper install codex` trusts its hooks; no goalkeeper on `PATH`,
//! no server or hook of goalkeeper's in the user's configuration. The
//! plugin's MCP server runs in the plugin's folder and finds each call's
//! session in what Codex sends, a subagent's too.

use std::path::PathBuf;

use super::{ok_with, packages};
use crate::World;
use crate::codex::{CODEX, bare_world, codex_home, goal_mode, subagent_claims};
use crate::mock::{Api, MockModel, text, usage};

/// `world` with the plugin installed through Codex's commands, finished by
/// the plugin's own goalkeeper; the plugin's folder.
pub(super) fn install_plugin(world: &World) -> PathBuf {
    let home = codex_home(world);
    let codex = |args: &[&str]| {
        ok_with(
            world
                .command(CODEX.executable())
                .args(args)
                .env("CODEX_HOME", &home),
        )
    };
    let marketplace = packages().join("marketplace");
    codex(&[
        "plugin",
        "marketplace",
        "add",
        marketplace.to_str().unwrap(),
    ]);
    let added = codex(&["plugin", "add", "goalkeeper@goalkeeper"]);
    let plugin = home
        .join("plugins/cache/goalkeeper/goalkeeper")
        .join(env!("CARGO_PKG_VERSION"));
    assert!(added.contains(&plugin.display().to_string()), "{added}");
    let finished = ok_with(
        world
            .command(plugin.join("bin/goalkeeper"))
            .args(["install", "codex"])
            .env("CODEX_HOME", &home),
    );
    assert!(
        finished.contains("plugin goalkeeper@goalkeeper")
            && finished.contains("hooks.state Stop: trusted")
            && finished.contains("features.goals: set to false"),
        "{finished}"
    );
    assert!(
        !home.join("hooks.json").exists(),
        "no hooks of goalkeeper's own"
    );
    let config = std::fs::read_to_string(home.join("config.toml")).unwrap();
    assert!(!config.contains("[mcp_servers.goalkeeper]"), "{config}");
    plugin
}

pub(super) fn plugin_world(mock: &MockModel) -> World {
    let world =
        bare_world(mock).with_path(super::SYSTEM_PATH, env!("CARGO_BIN_EXE_goalkeeper").into());
    install_plugin(&world);
    world
}

#[test]
#[ignore = "needs Codex from npm: scripts/install-host.sh codex"]
fn goal_mode_runs_through_the_codex_plugin() {
    let world = goal_mode(plugin_world);

    // Removed through Codex: no goalkeeper hook runs and no tool of its
    // is offered any more.
    let home = codex_home(&world);
    ok_with(
        world
            .command(CODEX.executable())
            .args(["plugin", "remove", "goalkeeper@goalkeeper"])
            .env("CODEX_HOME", &home),
    );
    let mock = MockModel::start(
        Api::Responses,
        vec![text("Nothing to do.", usage(100, 0, 5))],
    );
    let config = home.join("config.toml");
    let text = std::fs::read_to_string(&config).unwrap();
    let old_url = text
        .lines()
        .find_map(|l| l.strip_prefix("base_url = "))
        .unwrap()
        .to_owned();
    std::fs::write(
        &config,
        text.replace(&old_url, &format!("\"{}/v1\"", mock.base_url())),
    )
    .unwrap();
    let ran = crate::codex::run(&world, &["Anything left?"]);
    let printed = format!(
        "{}{}",
        String::from_utf8_lossy(&ran.stdout),
        String::from_utf8_lossy(&ran.stderr)
    );
    assert!(
        !printed.contains("hook:"),
        "a hook ran after the removal:\n{printed}"
    );
    let calls = mock.model_calls();
    assert_eq!(calls.len(), 1);
    assert!(!calls[0]["tools"].to_string().contains("goalkeeper"));
    assert!(
        super::files_mentioning(&home.join("plugins"), "hook codex").is_empty(),
        "the plugin's hooks are still in Codex's plugin folder"
    );
}

#[test]
#[ignore = "needs Codex from npm: scripts/install-host.sh codex"]
fn a_subagents_calls_of_the_plugins_tools_act_as_the_subagent() {
    subagent_claims(plugin_world);
}
