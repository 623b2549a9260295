//! Interop with an MCP client that is not ours: the official Python SDK
//! (`pip install mcp`, pinned in `.ci/run`) lists and calls both tools of
//! the real `goalkeeper mcp` over stdio (`tests/interop/mcp_client.py`).
//! Skipped, with a notice, where the SDK is not installed.

use crate::common;

use std::process::Command;

use common::TestEnv;

fn python_sdk_available() -> bool {
    Command::new("python3")
        .args(["-c", "import mcp"])
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn the_python_sdk_client_lists_and_calls_both_tools() {
    if !python_sdk_available() {
        eprintln!(
            "SKIPPED the_python_sdk_client_lists_and_calls_both_tools: \
             `python3 -c \"import mcp\"` failed; install the SDK with \
             `python3 -m pip install mcp` (see .ci/run) to run it"
        );
        return;
    }
    let env = TestEnv::new();
    let settings = env.dir().join("settings.toml");
    std::fs::write(&settings, "").unwrap();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/interop/mcp_client.py");
    let output = Command::new("python3")
        .arg(script)
        .arg(assert_cmd::cargo::cargo_bin("goalkeeper"))
        .arg(env.db())
        .arg("py-session")
        .current_dir(env.dir())
        // The SDK's client passes its own environment on to the server:
        // clear it too, keeping only what Python needs to find the SDK.
        .env_clear()
        .envs(
            ["PATH", "HOME"]
                .iter()
                .filter_map(|k| Some((k, std::env::var_os(k)?))),
        )
        .env("GOALKEEPER_CONFIG", &settings)
        .env("GOALKEEPER_NOW", env.now_ms.to_string())
        .output()
        .expect("run python3");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "the Python client failed\n--- stdout ---\n{stdout}--- stderr ---\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.contains("ok: the goal is complete"), "{stdout}");
    // The calls landed in the session the client named.
    let view = env.ok(&["--session", "py-session", "todo", "view"]);
    assert!(view.contains("Overall: 1/2 done, 1 open."), "{view}");
}
