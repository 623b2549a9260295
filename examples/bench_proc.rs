//! Whole-process timing as ratios to `/bin/true`, for `scripts/bench-cli.sh`.
//!
//! ```text
//! bench_proc CASES.json [--runs N] [--warmup N]
//! ```
//!
//! `CASES.json` is an array of `{"name", "argv", "alt"?, "stdin"?}`: `argv`
//! is the command, `alt` another command run instead on every other run
//! (so that a mutation changes the list on every run: `start` A, then
//! `start` B), `stdin` a file fed to the command's standard input. The
//! first case should be `/bin/true`: every median is divided by its median.
//!
//! The runs are interleaved (run 1 of every case, then run 2 of every case,
//! each round starting at the next case), so a burst of load from elsewhere
//! on a shared machine hits every case alike instead of one case's block of
//! runs. Every run must exit 0; the output is discarded.

use std::fs::File;
use std::process::{Command, ExitCode, Stdio};
use std::time::Instant;

use serde::Deserialize;

#[derive(Deserialize)]
struct Case {
    name: String,
    argv: Vec<String>,
    #[serde(default)]
    alt: Option<Vec<String>>,
    #[serde(default)]
    stdin: Option<String>,
}

fn run(argv: &[String], stdin: Option<&str>) -> Result<f64, String> {
    let input = match stdin {
        Some(path) => Stdio::from(File::open(path).map_err(|e| format!("{path}: {e}"))?),
        None => Stdio::null(),
    };
    let started = Instant::now();
    let status = Command::new(&argv[0])
        .args(&argv[1..])
        .stdin(input)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map_err(|e| format!("{}: {e}", argv[0]))?;
    let elapsed = started.elapsed().as_secs_f64() * 1000.0;
    if !status.success() {
        return Err(format!("{argv:?} exited with {status}"));
    }
    Ok(elapsed)
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let i = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[i]
}

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let (mut path, mut runs, mut warmup) = (None, 200usize, 20usize);
    while let Some(arg) = args.next() {
        let mut number = |flag: &str| {
            args.next()
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| panic!("{flag} needs a whole number"))
        };
        match arg.as_str() {
            "--runs" => runs = number("--runs"),
            "--warmup" => warmup = number("--warmup"),
            other => path = Some(other.to_owned()),
        }
    }
    let Some(path) = path else {
        eprintln!("usage: bench_proc CASES.json [--runs N] [--warmup N]");
        return ExitCode::from(2);
    };
    let cases: Vec<Case> = match std::fs::read_to_string(&path)
        .map_err(|e| e.to_string())
        .and_then(|text| serde_json::from_str(&text).map_err(|e| e.to_string()))
    {
        Ok(cases) => cases,
        Err(e) => {
            eprintln!("bench_proc: {path}: {e}");
            return ExitCode::from(2);
        }
    };
    let mut times: Vec<Vec<f64>> = vec![Vec::with_capacity(runs); cases.len()];
    for round in 0..warmup + runs {
        for k in 0..cases.len() {
            let i = (round + k) % cases.len();
            let case = &cases[i];
            let argv = match (&case.alt, round % 2) {
                (Some(alt), 1) => alt,
                _ => &case.argv,
            };
            match run(argv, case.stdin.as_deref()) {
                Ok(ms) if round >= warmup => times[i].push(ms),
                Ok(_) => {}
                Err(e) => {
                    eprintln!("bench_proc: case {}: {e}", case.name);
                    return ExitCode::FAILURE;
                }
            }
        }
    }
    for t in &mut times {
        t.sort_by(f64::total_cmp);
    }
    let base = percentile(&times[0], 0.5);
    println!(
        "{:<22} {:>8} {:>8} {:>8} {:>8} {:>7}",
        "case", "median", "mean", "p90", "min", "ratio"
    );
    for (case, t) in cases.iter().zip(&times) {
        let median = percentile(t, 0.5);
        let mean = t.iter().sum::<f64>() / t.len() as f64;
        println!(
            "{:<22} {:>8.3} {:>8.3} {:>8.3} {:>8.3} {:>6.2}x",
            case.name,
            median,
            mean,
            percentile(t, 0.9),
            t[0],
            median / base
        );
    }
    ExitCode::SUCCESS
}
