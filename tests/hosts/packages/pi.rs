//! pi with goalkeeper's package: `pi install` of the packaged folder,
//! whose extension runs the binary beside it; no goalkeeper on `PATH`,
//! nothing written into the project.

use super::{ok_with, packages};
use crate::World;
use crate::mock::{Api, MockModel, text, usage};
use crate::pi::{PI, agent_dir, bare_world, goal_mode, run};

fn pi(world: &World, args: &[&str]) -> String {
    ok_with(
        world
            .command(PI.executable())
            .args(args)
            .env("PI_CODING_AGENT_DIR", agent_dir(world))
            .env("PI_OFFLINE", "1"),
    )
}

pub fn package_world(mock: &MockModel) -> World {
    let world =
        bare_world(mock).with_path(super::SYSTEM_PATH, env!("CARGO_BIN_EXE_goalkeeper").into());
    pi(
        &world,
        &["install", packages().join("pi").to_str().unwrap()],
    );
    assert!(!world.project().join(".pi").exists());
    world
}

#[test]
#[ignore = "needs pi from npm: scripts/install-host.sh pi"]
fn goal_mode_runs_through_the_pi_package() {
    let world = goal_mode(package_world);
    let (session, _, _) = world.only_session();

    // Removed through pi: no tool of goalkeeper's, no event recorded.
    pi(&world, &["remove", packages().join("pi").to_str().unwrap()]);
    let mock = MockModel::start(
        Api::ChatCompletions,
        vec![text("Nothing to do.", usage(100, 0, 5))],
    );
    let world = rebind(world, &mock);
    run(&world, "Anything left?");
    let calls = mock.model_calls();
    assert_eq!(calls.len(), 1);
    assert!(
        !calls[0]["tools"].to_string().contains("\"todo\""),
        "{}",
        calls[0]["tools"]
    );
    assert_eq!(world.last_session("pi").as_deref(), Some(session.as_str()));
}

/// `world` pointed at another scripted model.
fn rebind(world: World, mock: &MockModel) -> World {
    let models = agent_dir(&world).join("models.json");
    let text = std::fs::read_to_string(&models).unwrap();
    let start = text.find("http://127.0.0.1:").unwrap();
    let end = start + text[start..].find("/v1").unwrap();
    std::fs::write(&models, text.replace(&text[start..end], &mock.base_url())).unwrap();
    world
}
