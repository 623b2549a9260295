//! MCP round trips against one long-lived `goalkeeper mcp`, for
//! `scripts/bench-cli.sh`.
//!
//! ```text
//! bench_mcp GOALKEEPER DB SESSION TASK_A TASK_B [--runs N] [--warmup N]
//! ```
//!
//! Starts the server on `DB` for `SESSION`, initializes it, then times
//! `tools/call` round trips (the request line written until its response
//! line is read): `todo` `start` of `TASK_A` and `TASK_B` in turn (so every
//! call writes), and `todo` `view`; and, as the baseline measured in the
//! same run, `ping` (the protocol's round trip through the server's stdin,
//! runtime and stdout, no store). Prints the median, mean and p90 in ms.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, ExitCode, Stdio};
use std::time::Instant;

use serde_json::{Value, json};

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 5 {
        eprintln!("usage: bench_mcp GOALKEEPER DB SESSION TASK_A TASK_B [--runs N] [--warmup N]");
        return ExitCode::from(2);
    }
    let flag = |name: &str, default: usize| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let (runs, warmup) = (flag("--runs", 1000), flag("--warmup", 50));
    let mut child = Command::new(&args[0])
        .args(["--db", &args[1], "--session", &args[2], "mcp"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start goalkeeper mcp");
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut id = 0;
    let mut line = String::new();
    let mut request = move |method: &str, params: Value| -> Value {
        id += 1;
        let text = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        writeln!(stdin, "{text}").unwrap();
        stdin.flush().unwrap();
        line.clear();
        stdout.read_line(&mut line).unwrap();
        serde_json::from_str(&line).expect("a JSON-RPC response")
    };
    request(
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "bench_mcp", "version": "0"}}),
    );
    let cases = [
        ("start (a write)", None),
        ("view", Some(json!({"op": "view"}))),
        ("ping (baseline)", Some(Value::Null)),
    ];
    for (name, fixed) in cases {
        let mut times = Vec::with_capacity(runs);
        for i in 0..warmup + runs {
            let arguments = fixed.clone().unwrap_or_else(
                || json!({"op": "start", "task": if i % 2 == 0 { &args[3] } else { &args[4] }}),
            );
            let ping = arguments.is_null();
            let started = Instant::now();
            let reply = if ping {
                request("ping", json!({}))
            } else {
                request(
                    "tools/call",
                    json!({"name": "todo", "arguments": arguments}),
                )
            };
            let ms = started.elapsed().as_secs_f64() * 1000.0;
            let failed = if ping {
                reply.get("result").is_none()
            } else {
                reply["result"]["isError"] != json!(false)
            };
            if failed {
                eprintln!("bench_mcp: {name}: unexpected reply {reply}");
                drop(request);
                let _ = child.wait();
                return ExitCode::FAILURE;
            }
            if i >= warmup {
                times.push(ms);
            }
        }
        times.sort_by(f64::total_cmp);
        let mean = times.iter().sum::<f64>() / times.len() as f64;
        println!(
            "mcp {name:<16} median {:.3} ms  mean {mean:.3} ms  p90 {:.3} ms  ({runs} calls)",
            percentile(&times, 0.5),
            percentile(&times, 0.9)
        );
    }
    drop(request);
    let _ = child.wait();
    ExitCode::SUCCESS
}
