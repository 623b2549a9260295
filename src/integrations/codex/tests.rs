//! The hook's parser and its bad-input paths on hand-written events, and
//! the installer's edits. The proof that Codex sends and accepts these
//! shapes is the real-host suite (`tests/hosts/codex.rs`).

use serde_json::json;

use super::install::{HOOK_EVENTS, HOOK_TIMEOUT_S, trusted_hash};
use super::*;
use crate::integrations::hook_fixture::{Fixture, NOW, event, event_dir, gk};
use crate::todo::{Actor, Call};

fn fixture() -> Fixture {
    Fixture::new(handle, "c-1", None)
}

#[test]
fn bad_input_prints_nothing_and_changes_nothing() {
    // A rollout file that is not there: in a directory of the test's own.
    let dir = tempfile::tempdir().unwrap();
    let rollout = dir.path().join("rollout.jsonl").display().to_string();
    let pre_tool = json!({"hook_event_name": "PreToolUse", "session_id": "c-1",
        "tool_name": "mcp__goalkeeper__goal", "transcript_path": rollout})
    .to_string();
    let unreadable = format!(
        "cannot read the rollout file {rollout}: No such file or directory (os error 2); usage not counted"
    );
    let stdouts = fixture().each_ignored(&[
        (
            "[",
            "hook input is not JSON (EOF while parsing a list at line 1 column 1); ignored",
        ),
        (
            r#"{"hook_event_name": "Stop"}"#,
            r#"hook event "Stop" has no session_id; ignored"#,
        ),
        (&pre_tool, &unreadable),
        (
            r#"{"hook_event_name": "PreToolUse", "session_id": "c-1", "tool_name": "mcp__goalkeeper__goal"}"#,
            "event has no transcript_path; usage not counted",
        ),
        (
            r#"{"hook_event_name": "PermissionRequest", "session_id": "c-1"}"#,
            r#"hook event "PermissionRequest" is not handled; ignored"#,
        ),
    ]);
    assert!(stdouts.iter().all(Option::is_none), "{stdouts:?}");
}

#[test]
fn the_context_is_refreshed_after_a_goalkeeper_tool_only_when_it_changed() {
    let mut fx = fixture();
    let post = |tool: &str| event("PostToolUse", "c-1", json!({"tool_name": tool}));
    let [todo, _] = Host::Codex.model_tool_names();
    let first = fx.send(&post(todo));
    let context = first.stdout.unwrap()["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        context.starts_with("<goal>\n") && context.ends_with("</todo_context>"),
        "{context}"
    );
    // Unchanged: nothing again; another tool: nothing.
    assert_eq!(fx.send(&post(todo)).stdout, None);
    fx.store
        .todo(
            &fx.session,
            Call::Json(r#"{"op": "done", "task": "A"}"#),
            Actor::Agent,
            &mut crate::store::Caller::default(),
            NOW,
        )
        .unwrap();
    assert_eq!(fx.send(&post("exec_command")).stdout, None);
    let changed = fx.send(&post(todo)).stdout.unwrap();
    assert!(
        changed.to_string().contains("Overall: 1/1 done, 0 open."),
        "{changed}"
    );
    assert_eq!(
        fx.store
            .admin()
            .pointer(&format!("codex:{}", event_dir()))
            .unwrap()
            .as_deref(),
        Some("c-1")
    );
}

#[test]
fn the_trust_hash_is_the_one_codex_computes() {
    // Computed by hand (sha256 of the compact, key-sorted JSON) for a hook
    // that Codex 0.169.0 was seen to run.
    let text = r#"{"event_name":"stop","hooks":[{"async":false,"command":"cat > /tmp/explore/c/ev-stop.json","timeout":600,"type":"command"}]}"#;
    let expected = {
        use sha2::{Digest, Sha256};
        let d = Sha256::digest(text.as_bytes());
        format!(
            "sha256:{}",
            d.iter().map(|b| format!("{b:02x}")).collect::<String>()
        )
    };
    assert_eq!(
        trusted_hash("stop", "cat > /tmp/explore/c/ev-stop.json", 600),
        expected
    );
    assert_eq!(
        expected,
        "sha256:cc971a321dbcbfc259f200012f3ae45f6ba384396f68eb84413aa80686f4eecc"
    );
}

#[test]
fn install_keeps_the_users_config_exactly_and_runs_once() {
    let dir = tempfile::tempdir().unwrap();
    let config = "# mine\nmodel = \"o3\"  # keep this comment\nwhen = 1979-05-27T07:32:00-08:00\npi = 3.14159265358979323846264338327950288\n\n[features]\ngoals = true\n\n[mcp_servers.other]\ncommand = \"x\"\n";
    std::fs::write(dir.path().join("config.toml"), config).unwrap();
    std::fs::write(
        dir.path().join("hooks.json"),
        r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "mine"}]}]}}"#,
    )
    .unwrap();
    let report = install_codex(dir.path(), &gk(), NOW).unwrap();
    assert!(
        report.files.iter().all(|f| f.written && f.backup.is_some()),
        "{report:?}"
    );
    let text = std::fs::read_to_string(dir.path().join("config.toml")).unwrap();
    assert!(
        text.starts_with(config),
        "the user's part is byte for byte:\n{text}"
    );
    let parsed: toml::Table = toml::from_str(&text).unwrap();
    assert_eq!(
        parsed["features"]["goals"].as_bool(),
        Some(true),
        "the user's choice is kept"
    );
    let server = &parsed["mcp_servers"]["goalkeeper"];
    assert_eq!(server["command"].as_str(), Some("gk"));
    assert_eq!(
        server["default_tools_approval_mode"].as_str(),
        Some("approve")
    );
    assert!(
        server["env_vars"]
            .as_array()
            .unwrap()
            .iter()
            .any(|v| v.as_str() == Some("GOALKEEPER_DB"))
    );
    let hooks_path = std::path::absolute(dir.path().join("hooks.json")).unwrap();
    let state = parsed["hooks"]["state"].as_table().unwrap();
    assert_eq!(state.len(), HOOK_EVENTS.len());
    // The user's Stop hook is group 0; goalkeeper's is group 1.
    let stop = &state[&format!("{}:stop:1:0", hooks_path.display())];
    assert_eq!(
        stop["trusted_hash"].as_str().unwrap(),
        trusted_hash("stop", "gk hook codex", HOOK_TIMEOUT_S)
    );
    let again = install_codex(dir.path(), &gk(), NOW + 1000).unwrap();
    assert!(again.files.iter().all(|f| !f.written), "{again:?}");
}

#[test]
fn install_refuses_files_it_cannot_read_and_writes_nothing() {
    for (config, hooks, error) in [
        ("model = ", "{}", "is not valid TOML (line 1, column 9: "),
        ("hooks = 3\n", "{}", "`hooks` in "),
        ("", "[]", "is not a JSON object"),
        ("", r#"{"hooks": {"Stop": 1}}"#, "`hooks.Stop` in "),
    ] {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("config.toml"), config).unwrap();
        std::fs::write(dir.path().join("hooks.json"), hooks).unwrap();
        let e = install_codex(dir.path(), &gk(), NOW)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(error) && e.ends_with("(nothing was changed)"),
            "{e}"
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("config.toml")).unwrap(),
            config
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("hooks.json")).unwrap(),
            hooks
        );
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            2,
            "no backup, no temporary file"
        );
    }
}

/// A Codex home where `codex plugin add goalkeeper@market` installed
/// goalkeeper's plugin, whose hooks are `hooks` (the installed plugin's
/// `codex/hooks.json`).
fn home_with_plugin(hooks: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("config.toml"),
        "# mine\nmodel = \"m\"\n\n[plugins.\"goalkeeper@market\"]\nenabled = true\n",
    )
    .unwrap();
    let plugin = dir.path().join("plugins/cache/market/goalkeeper/0.1.0");
    std::fs::create_dir_all(plugin.join("codex")).unwrap();
    std::fs::write(plugin.join(super::PLUGIN_HOOKS), hooks).unwrap();
    dir
}

fn our_plugin_hooks() -> String {
    super::plugin_files()
        .into_iter()
        .find(|(rel, _)| *rel == super::PLUGIN_HOOKS)
        .unwrap()
        .1
}

/// With goalkeeper's plugin installed, `install codex` finishes the
/// plugin's install instead of wiring a second copy: it trusts each of the
/// plugin's hooks, under the key Codex gives a plugin's hook, and turns
/// Codex's own goal tools off; it writes no server and no `hooks.json`
/// of its own. A second run changes nothing.
#[test]
fn install_finishes_an_installed_plugin() {
    let dir = home_with_plugin(&our_plugin_hooks());
    let report = install_codex(dir.path(), &gk(), NOW).unwrap();
    assert_eq!(report.files.len(), 1, "{report:?}");
    assert!(report.files[0].written);
    let text = std::fs::read_to_string(dir.path().join("config.toml")).unwrap();
    assert!(text.starts_with("# mine\nmodel = \"m\"\n"), "{text}");
    let parsed: toml::Table = toml::from_str(&text).unwrap();
    let state = parsed["hooks"]["state"].as_table().unwrap();
    assert_eq!(state.len(), HOOK_EVENTS.len(), "{text}");
    let stop = &state["goalkeeper@market:codex/hooks.json:stop:0:0"];
    assert_eq!(
        stop["trusted_hash"].as_str().unwrap(),
        trusted_hash(
            "stop",
            "\"${PLUGIN_ROOT}/bin/goalkeeper\" hook codex",
            HOOK_TIMEOUT_S
        )
    );
    assert_eq!(parsed["features"]["goals"].as_bool(), Some(false));
    assert!(!parsed.contains_key("mcp_servers"), "{text}");
    assert!(!dir.path().join("hooks.json").exists());
    let again = install_codex(dir.path(), &gk(), NOW + 1000).unwrap();
    assert!(again.files.iter().all(|f| !f.written), "{again:?}");
}

/// A plugin whose hooks are not the ones this goalkeeper writes (another
/// version's, or edited) is not trusted: the install is refused with the
/// way out, and nothing is written.
#[test]
fn install_refuses_to_trust_hooks_it_did_not_write() {
    let edited = our_plugin_hooks().replace("hook codex", "hook codex; curl evil");
    let dir = home_with_plugin(&edited);
    let before = std::fs::read_to_string(dir.path().join("config.toml")).unwrap();
    let e = install_codex(dir.path(), &gk(), NOW)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("codex/hooks.json are not the hooks of this goalkeeper")
            && e.contains("bin/goalkeeper install codex")
            && e.ends_with("(nothing was changed)"),
        "{e}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("config.toml")).unwrap(),
        before
    );
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        2,
        "no backup, no hooks.json"
    );
}

/// A rollout file's usage record of response `id`: `input` tokens (none
/// cached) and 10 out.
fn usage_record(id: &str, input: u64) -> String {
    json!({"type": "token_usage_record", "payload": {"response_id": id,
        "usage": {"input_tokens": input, "cached_input_tokens": 0, "output_tokens": 10}}})
    .to_string()
}

fn tokens_used(fx: &mut Fixture) -> u64 {
    fx.store
        .read(&fx.session, |tx| tx.goal())
        .unwrap()
        .unwrap()
        .tokens_used
}

/// A subagent's event (`agent_id`) of the parent's session.
fn sub_event(name: &str, extra: serde_json::Value) -> String {
    let mut fields = json!({"agent_id": "t-sub", "agent_type": "default"});
    fields
        .as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    event(name, "c-1", fields)
}

/// A subagent gets no context and no reminder, and leaves the main
/// agent's as they are: its prompt and its goalkeeper calls inject
/// nothing, and the main agent's next call still gets the context.
#[test]
fn a_subagents_events_inject_nothing() {
    let mut fx = fixture();
    let dir = tempfile::tempdir().unwrap();
    let rollout = dir.path().join("rollout-sub.jsonl");
    std::fs::write(&rollout, "").unwrap();
    let path = rollout.to_str().unwrap();
    let [todo, _] = Host::Codex.model_tool_names();
    let prompt = sub_event(
        "UserPromptSubmit",
        json!({"prompt": "take B", "transcript_path": path}),
    );
    assert_eq!(fx.send(&prompt).stdout, None);
    let post = sub_event(
        "PostToolUse",
        json!({"tool_name": todo, "transcript_path": path}),
    );
    assert_eq!(fx.send(&post).stdout, None);
    let main = event("PostToolUse", "c-1", json!({"tool_name": todo}));
    let context = fx.send(&main).stdout.expect("the main agent's context");
    assert!(context.to_string().contains("<todo_context>"), "{context}");
}

/// A subagent's responses count once each: its own events read its
/// rollout file from a cursor of their own, and the main agent's `Stop`
/// reads what the subagent wrote after its last event. A `Stop` of a
/// subagent continues nothing and frees its tasks.
#[test]
fn a_subagents_usage_counts_once_and_its_stop_continues_nothing() {
    let mut fx = fixture();
    let dir = tempfile::tempdir().unwrap();
    let main_log = dir.path().join("rollout-main.jsonl");
    let sub_log = dir.path().join("rollout-sub.jsonl");
    std::fs::write(&main_log, usage_record("m1", 100) + "\n").unwrap();
    std::fs::write(&sub_log, usage_record("s1", 1000) + "\n").unwrap();
    let sub_path = sub_log.to_str().unwrap();
    let pre = sub_event(
        "PreToolUse",
        json!({"tool_name": "exec_command", "transcript_path": sub_path}),
    );
    assert_eq!(fx.send(&pre).stdout, None);
    assert_eq!(tokens_used(&mut fx), 1010);
    assert_eq!(fx.send(&pre).stdout, None);
    assert_eq!(tokens_used(&mut fx), 1010, "counted once");
    // The subagent's last response, after its last event.
    let mut text = std::fs::read_to_string(&sub_log).unwrap();
    text.push_str(&(usage_record("s2", 2000) + "\n"));
    std::fs::write(&sub_log, text).unwrap();
    let stop = event(
        "Stop",
        "c-1",
        json!({"stop_hook_active": false, "transcript_path": main_log.to_str().unwrap()}),
    );
    let reply = fx.send(&stop);
    assert!(reply.stdout.is_some(), "the main agent is continued");
    assert_eq!(tokens_used(&mut fx), 1010 + 2010 + 110);

    // A subagent's Stop: nothing printed, its task freed, the main
    // agent's kept.
    fx.store
        .todo(
            &fx.session,
            Call::Json(r#"{"op": "append", "phase": "Tasks", "items": ["B"]}"#),
            Actor::Agent,
            &mut crate::store::Caller::default(),
            NOW,
        )
        .unwrap();
    let mut caller = crate::store::Caller::default();
    caller.act_for_call(Some(crate::store::CallFrom::Agent(agent("t-sub"))));
    fx.store
        .todo(
            &fx.session,
            Call::Json(r#"{"op": "start", "task": "B"}"#),
            Actor::Agent,
            &mut caller,
            NOW,
        )
        .unwrap();
    let stop = sub_event(
        "Stop",
        json!({"stop_hook_active": false, "transcript_path": sub_path}),
    );
    assert_eq!(fx.send(&stop).stdout, None);
    let states: Vec<(String, String, Option<String>)> = [("A", "in_progress"), ("B", "pending")]
        .map(|(t, s)| (t.to_owned(), s.to_owned(), None))
        .into();
    assert_eq!(holders(&mut fx), states);
}

fn agent(name: &str) -> crate::AgentName {
    crate::AgentName::parse(name).unwrap().unwrap()
}

fn holders(fx: &mut Fixture) -> Vec<(String, String, Option<String>)> {
    let (list, _) = fx.store.read(&fx.session, |tx| tx.todo_list()).unwrap();
    list.tasks()
        .map(|(_, t)| {
            (
                t.content.clone(),
                t.status.as_str().to_owned(),
                t.agent.clone(),
            )
        })
        .collect()
}

/// `spawn_agent`'s `PostToolUse` as Codex 0.171 sends it: the bare tool
/// name, its output a JSON text naming the thread.
fn spawn(id: &str) -> String {
    let output = json!({"agent_id": id, "nickname": "Laplace"}).to_string();
    event(
        "PostToolUse",
        "c-1",
        json!({"tool_name": "spawn_agent", "tool_input": {"message": "go"}, "tool_response": output}),
    )
}

/// `agents` each start one task of B, C, D (after an append).
fn three_holders(fx: &mut Fixture, agents: [&str; 3]) {
    fx.store
        .todo(
            &fx.session,
            Call::Json(r#"{"op": "append", "phase": "Tasks", "items": ["B", "C", "D"]}"#),
            Actor::Agent,
            &mut crate::store::Caller::default(),
            NOW,
        )
        .unwrap();
    for (name, task) in agents.into_iter().zip(["B", "C", "D"]) {
        let mut caller = crate::store::Caller::default();
        caller.act_for_call(Some(crate::store::CallFrom::Agent(agent(name))));
        let start = json!({"op": "start", "task": task}).to_string();
        fx.store
            .todo(
                &fx.session,
                Call::Json(&start),
                Actor::Agent,
                &mut caller,
                NOW,
            )
            .unwrap();
    }
}

fn held(fx: &mut Fixture) -> Vec<Option<String>> {
    holders(fx).into_iter().map(|(_, _, a)| a).collect()
}

/// Codex sends no event when a subagent ends: `wait_agent` reporting a
/// subagent this session's Codex spawned completed (or errored, shut
/// down, gone), or `close_agent` closing it, frees its tasks; one still
/// running keeps them.
#[test]
fn an_ended_subagents_tasks_are_released() {
    let mut fx = fixture();
    three_holders(&mut fx, ["t-1", "t-2", "t-3"]);
    for id in ["t-1", "t-2", "t-3"] {
        assert_eq!(
            fx.send(&spawn(id)),
            crate::integrations::hook_event::HookReply::default()
        );
    }
    let wait = event(
        "PostToolUse",
        "c-1",
        json!({"tool_name": "multi_agent_v1wait_agent",
            "tool_input": {"targets": ["t-1", "t-2"]},
            "tool_response": r#"{"status":{"t-1":{"completed":"done"},"t-2":"running"},"timed_out":false}"#}),
    );
    assert_eq!(fx.send(&wait).stdout, None);
    let t = |n: &str| Some(n.to_owned());
    assert_eq!(held(&mut fx), [None, None, t("t-2"), t("t-3")]);
    let close = event(
        "PostToolUse",
        "c-1",
        json!({"tool_name": "multi_agent_v1close_agent", "tool_input": {"target": "t-3"},
            "tool_response": r#"{"previous_status":"running"}"#}),
    );
    assert_eq!(fx.send(&close).stdout, None);
    assert_eq!(held(&mut fx), [None, None, t("t-2"), None]);
    // A reply that is not what Codex sends frees nothing.
    let before = fx.state();
    for response in [json!("not json"), json!({"status": 3}), json!(null)] {
        let odd = event(
            "PostToolUse",
            "c-1",
            json!({"tool_name": "multi_agent_v1wait_agent", "tool_response": response}),
        );
        assert_eq!(fx.send(&odd).stdout, None);
    }
    assert_eq!(before, fx.state());
}

/// The ids of `wait_agent` and `close_agent` are the model's to choose:
/// one naming an agent this session's Codex did not spawn (a CLI agent
/// `w1`, a subagent of another tool named like Codex's) frees nothing,
/// whatever Codex answered, and says so.
#[test]
fn an_agent_codex_did_not_spawn_keeps_its_tasks() {
    let mut fx = fixture();
    three_holders(&mut fx, ["w1", "w2", "t-3"]);
    // Another tool's `spawn_agent` (an MCP server's) records nothing.
    let other = event(
        "PostToolUse",
        "c-1",
        json!({"tool_name": "mcp__other__spawn_agent", "tool_response": r#"{"agent_id":"w2"}"#}),
    );
    assert_eq!(
        fx.send(&other),
        crate::integrations::hook_event::HookReply::default()
    );
    let before = fx.state();
    let not_spawned = |who: &str| {
        format!(
            "multi_agent_v1wait_agent reports agent \"{who}\" ended, but this session's Codex did not spawn it; its tasks are left as they are"
        )
    };
    let wait = event(
        "PostToolUse",
        "c-1",
        json!({"tool_name": "multi_agent_v1wait_agent", "tool_input": {"targets": ["w1", "w2"]},
            "tool_response": r#"{"status":{"w1":"not_found","w2":{"completed":"x"}},"timed_out":false}"#}),
    );
    let reply = fx.send(&wait);
    assert_eq!(reply.stdout, None);
    assert_eq!(reply.notes, [not_spawned("w1"), not_spawned("w2")]);
    // `close_agent` of an id Codex does not know: its answer is an error,
    // and nothing is closed.
    let close = |target: &str, answer: &str| {
        event(
            "PostToolUse",
            "c-1",
            json!({"tool_name": "multi_agent_v1close_agent", "tool_input": {"target": target},
                "tool_response": answer}),
        )
    };
    assert_eq!(
        fx.send(&close("w1", "agent w1 not found")).notes,
        Vec::<String>::new()
    );
    assert_eq!(
        fx.send(&close("w1", r#"{"previous_status":"running"}"#))
            .notes,
        [not_spawned("w1").replace("wait_agent", "close_agent")]
    );
    assert_eq!(before, fx.state());
    let t = |n: &str| Some(n.to_owned());
    assert_eq!(held(&mut fx), [None, t("w1"), t("w2"), t("t-3")]);
}

/// A subagent event whose `agent_id` is no agent name changes nothing and
/// says why.
#[test]
fn a_bad_agent_id_is_ignored_and_explained() {
    let mut fx = fixture();
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("rollout.jsonl");
    let bad = |id: &str| {
        event(
            "Stop",
            "c-1",
            json!({"agent_id": id, "stop_hook_active": false, "transcript_path": missing}),
        )
    };
    let stdouts = fx.each_ignored(&[
        (
            &bad("a b"),
            r#"invalid agent name "a b": use 1-64 characters from A-Z, a-z, 0-9, '.', '_', ':' and '-' ("main" is the session's own agent; "user" is reserved); the subagent's event is ignored"#,
        ),
        (
            &bad("main"),
            r#"agent_id "main" is the main agent's name; the subagent's event is ignored"#,
        ),
    ]);
    assert!(stdouts.iter().all(Option::is_none), "{stdouts:?}");
}
