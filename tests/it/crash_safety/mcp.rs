//! A killed MCP server with a burst of calls in flight: every answered
//! call is there, each call whole or not at all, in the order sent.

use super::*;

/// Kills of the MCP server with calls still unanswered.
const MCP_KILLS: usize = 12;
/// Calls sent at once before each kill, and the items each appends.
const BURST: usize = 6;
const ITEMS_PER_CALL: usize = 4;

/// A `goalkeeper mcp` process past its handshake, its stdout read line by
/// line on a thread.
struct Server {
    child: Child,
    stdin: std::process::ChildStdin,
    lines: std::sync::mpsc::Receiver<String>,
}

impl Server {
    fn start(env: &TestEnv) -> Server {
        let mut child = env
            .std_cmd(&["--session", SESSION, "mcp"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn goalkeeper mcp");
        let stdout = child.stdout.take().unwrap();
        let (send, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            use std::io::BufRead;
            for line in std::io::BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if send.send(line).is_err() {
                    break;
                }
            }
        });
        let mut server = Server {
            stdin: child.stdin.take().unwrap(),
            child,
            lines,
        };
        server.send(&[
            serde_json::json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "crash", "version": "0"}}})
            .to_string(),
        ]);
        let answer = server.answer();
        assert_eq!(answer["id"], 0, "{answer}");
        server.send(&[r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_owned()]);
        server
    }

    /// Writes `lines` in one go.
    fn send(&mut self, lines: &[String]) {
        use std::io::Write;
        let mut bytes = lines.join("\n");
        bytes.push('\n');
        self.stdin.write_all(bytes.as_bytes()).unwrap();
        self.stdin.flush().unwrap();
    }

    fn answer(&self) -> serde_json::Value {
        let line = self
            .lines
            .recv_timeout(Duration::from_secs(60))
            .expect("an answer from the MCP server");
        serde_json::from_str(&line).unwrap()
    }

    /// SIGKILLs the server and returns every answer it wrote before dying.
    fn kill(mut self) -> Vec<serde_json::Value> {
        use std::os::unix::process::ExitStatusExt;
        self.child.kill().expect("send SIGKILL");
        let status = self.child.wait().expect("reap goalkeeper mcp");
        assert_eq!(
            status.signal(),
            Some(SIGKILL),
            "the server exited by itself"
        );
        // The reader thread ends at EOF, which the kill brings.
        self.lines
            .iter()
            .map(|line| serde_json::from_str(&line).unwrap())
            .collect()
    }
}

fn mcp_append(id: usize, items: &[String]) -> String {
    serde_json::json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "todo", "arguments": {"op": "append", "phase": PHASE, "items": items}}})
    .to_string()
}

/// An answered call must be a success naming what it appended.
fn assert_mcp_ack(answer: &serde_json::Value, items: &[String]) {
    let result = &answer["result"];
    assert_eq!(result["isError"], false, "{answer}");
    let text = result["content"][0]["text"].as_str().unwrap_or_default();
    assert!(
        text.contains(label(&items[0])),
        "the answer does not name the call's items: {text}"
    );
}

fn call_items(round: usize, call: usize) -> Vec<String> {
    (0..ITEMS_PER_CALL)
        .map(|i| padded(&format!("round {round} call {call} item {i}")))
        .collect()
}

#[test]
fn sigkill_of_the_mcp_server_mid_call_loses_no_acknowledged_call() {
    let started = Instant::now();
    let env = TestEnv::new();
    let mut rng = Rng::from_env();
    let mut acknowledged: Vec<Vec<String>> = Vec::new();
    // Rounds whose burst was all answered before the kill, kills with
    // calls unanswered, and among those the calls committed but never
    // answered.
    let (mut all_answered, mut mid_burst, mut committed_unanswered) = (0, 0, 0);

    // Calibrate: how long one call takes in a running server.
    let mut server = Server::start(&env);
    let mut durations = Vec::new();
    for i in 0..3 {
        let items = call_items(0, i);
        let sent = Instant::now();
        server.send(&[mcp_append(i + 1, &items)]);
        assert_mcp_ack(&server.answer(), &items);
        durations.push(sent.elapsed());
        acknowledged.push(items);
    }
    drop(server.kill());
    durations.sort();
    let cap = (durations[1] * BURST as u32 * 3 / 2).min(Duration::from_millis(300));
    eprintln!("crash_safety: an MCP call takes {durations:?}; kill delays 0..={cap:?}");

    let mut round = 0;
    while mid_burst < MCP_KILLS {
        assert!(
            round < MAX_ROUNDS,
            "only {mid_burst} kills mid-burst after {round} rounds"
        );
        round += 1;
        let mut server = Server::start(&env);
        // One call answered before the burst: the server is past its
        // start-up when the burst arrives.
        let items = call_items(round, 0);
        server.send(&[mcp_append(1, &items)]);
        assert_mcp_ack(&server.answer(), &items);
        acknowledged.push(items);

        let burst: Vec<Vec<String>> = (1..=BURST).map(|k| call_items(round, k)).collect();
        let lines: Vec<String> = burst
            .iter()
            .enumerate()
            .map(|(k, items)| mcp_append(k + 2, items))
            .collect();
        server.send(&lines);
        std::thread::sleep(Duration::from_micros(rng.below(cap.as_micros() as u64 + 1)));
        let answers = server.kill();
        // Calls run one after the other, in the order sent, so the answers
        // are the first calls of the burst.
        for (k, answer) in answers.iter().enumerate() {
            assert_eq!(answer["id"], k + 2, "answers out of order: {answers:?}");
            assert_mcp_ack(answer, &burst[k]);
        }
        let answered = answers.len();
        acknowledged.extend(burst[..answered].iter().cloned());
        let applied = inspect_calls(&env, &acknowledged, &burst[answered..]);
        acknowledged.extend(burst[answered..answered + applied].iter().cloned());
        if answered == BURST {
            all_answered += 1;
        } else {
            mid_burst += 1;
            committed_unanswered += applied;
        }
    }

    // A new server sees everything and goes on from there.
    let mut server = Server::start(&env);
    let items = call_items(round + 1, 0);
    server.send(&[mcp_append(1, &items)]);
    assert_mcp_ack(&server.answer(), &items);
    acknowledged.push(items);
    drop(server.kill());
    inspect_calls(&env, &acknowledged, &[]);
    eprintln!(
        "crash_safety: {round} MCP rounds in {:?}: {mid_burst} kills with calls unanswered \
         ({committed_unanswered} calls committed but not answered), {all_answered} bursts answered whole",
        started.elapsed()
    );
}
