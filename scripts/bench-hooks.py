#!/usr/bin/env python3
"""Whole-process time of each Claude Code hook event (`goalkeeper hook
claude-code`, JSON on stdin) on a 20-task session with an active goal and a
40-response transcript, as a ratio to `/bin/true` started the same way in
the same run (both through subprocess with the same stdin file).

    scripts/bench-hooks.py [--bin PATH] [--runs N] [--warmup N]

--bin defaults to target/release/goalkeeper (build it first:
`cargo build --release --bin goalkeeper`). Prints a markdown table of the
median and 90th percentile per event. The runaway guard is set out of reach
(goal.continuation.max_idle) so every Stop continues the same way; the
transcript is read once, then each run finds nothing new, as most events do.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", default=os.path.join(ROOT, "target/release/goalkeeper"))
    parser.add_argument("--runs", type=int, default=60)
    parser.add_argument("--warmup", type=int, default=5)
    args = parser.parse_args()
    args.bin = os.path.abspath(args.bin)
    if not os.access(args.bin, os.X_OK):
        sys.exit(f"bench-hooks: {args.bin} is not built; run `cargo build --release --bin goalkeeper`")

    work = tempfile.mkdtemp(prefix="gk-bench-hooks-")
    home = os.path.join(work, "home")
    project = os.path.join(work, "project")
    os.makedirs(home)
    os.makedirs(project)
    config = os.path.join(work, "config.toml")
    with open(config, "w") as f:
        f.write("[goal.continuation]\nmax_idle = 1000000000\n")
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": home,
        "GOALKEEPER_DB": os.path.join(work, "goalkeeper.db"),
        "GOALKEEPER_CONFIG": config,
    }
    session = "bench-0000-4000-8000-000000000001"

    def gk(*argv, stdin=None):
        out = subprocess.run([args.bin, "--session", session, *argv], env=env, cwd=project,
                             input=stdin, capture_output=True, text=True)
        if out.returncode != 0:
            sys.exit(f"bench-hooks: goalkeeper {argv} failed: {out.stderr}")

    gk("goal", "set", "Ship the benchmark", "--budget", "100000000")
    phases = [{"phase": f"Phase {p}", "items": [f"Task {p}.{t}" for t in range(1, 6)]} for p in range(1, 5)]
    gk("todo", "apply", "-", stdin=json.dumps({"op": "init", "list": phases}))
    gk("todo", "apply", "-", stdin=json.dumps({"op": "done", "task": "Task 1.1"}))

    transcript = os.path.join(home, ".claude/projects/bench", session + ".jsonl")
    os.makedirs(os.path.dirname(transcript))
    with open(transcript, "w") as f:
        for i in range(40):
            f.write(json.dumps({"type": "user", "uuid": f"u{i}", "message": {"role": "user", "content": f"step {i}"}}) + "\n")
            for block in range(2):
                f.write(json.dumps({"type": "assistant", "uuid": f"a{i}-{block}", "requestId": f"req{i}",
                                    "message": {"id": f"msg{i}", "role": "assistant",
                                                "content": [{"type": "text", "text": f"did step {i}"}],
                                                "usage": {"input_tokens": 1000, "output_tokens": 100,
                                                          "cache_creation_input_tokens": 10,
                                                          "cache_read_input_tokens": 5000}}}) + "\n")

    base = {"session_id": session, "transcript_path": transcript, "cwd": project}
    events = [
        ("SessionStart (startup)", {"hook_event_name": "SessionStart", "source": "startup"}),
        ("SessionStart (compact)", {"hook_event_name": "SessionStart", "source": "compact"}),
        ("UserPromptSubmit", {"hook_event_name": "UserPromptSubmit", "prompt": "go on"}),
        ("PreToolUse (Bash)", {"hook_event_name": "PreToolUse", "tool_name": "Bash",
                               "tool_input": {"command": "cargo test"}}),
        # After every shell call: a call that is no verify call is read and
        # passed over, what most of them are.
        ("PostToolUse (Bash)", {"hook_event_name": "PostToolUse", "tool_name": "Bash",
                                "tool_input": {"command": "cargo test"},
                                "tool_response": {"stdout": "test result: ok. 12 passed",
                                                  "stderr": "", "interrupted": False}}),
        ("PostToolUseFailure (Bash)", {"hook_event_name": "PostToolUseFailure", "tool_name": "Bash",
                                       "tool_input": {"command": "cargo test"},
                                       "error": "Exit code 101\ntest result: FAILED. 11 passed; 1 failed"}),
        ("Stop (continues the goal)", {"hook_event_name": "Stop", "stop_hook_active": False,
                                       "last_assistant_message": "did step 39"}),
        ("SubagentStop", {"hook_event_name": "SubagentStop"}),
        ("PreCompact", {"hook_event_name": "PreCompact", "trigger": "manual"}),
        ("SessionEnd", {"hook_event_name": "SessionEnd", "reason": "other"}),
    ]
    inputs = {}
    for name, event in events:
        path = os.path.join(work, name.split()[0] + str(len(inputs)) + ".json")
        with open(path, "w") as f:
            json.dump({**base, **event}, f)
        inputs[name] = path

    def timed(argv, stdin_path):
        with open(stdin_path, "rb") as stdin:
            start = time.perf_counter()
            out = subprocess.run(argv, env=env, cwd=project, stdin=stdin,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            elapsed = time.perf_counter() - start
        if out.returncode != 0:
            sys.exit(f"bench-hooks: {argv} exited {out.returncode}")
        return elapsed

    any_input = next(iter(inputs.values()))
    hook = [args.bin, "hook", "claude-code"]
    for _ in range(args.warmup):
        timed(["/bin/true"], any_input)
        for path in inputs.values():
            timed(hook, path)
    samples = {name: [] for name in inputs}
    true_samples = []
    # Interleaved, so a change in the machine's load hits every case alike.
    for _ in range(args.runs):
        true_samples.append(timed(["/bin/true"], any_input))
        for name, path in inputs.items():
            samples[name].append(timed(hook, path))

    def q90(values):
        return sorted(values)[int(0.9 * (len(values) - 1))]

    true_median = statistics.median(true_samples)
    print(f"{args.runs} runs each, interleaved; /bin/true: median {true_median * 1000:.2f} ms, "
          f"p90 {q90(true_samples) * 1000:.2f} ms")
    print()
    print("| event | median ms | p90 ms | median / `/bin/true` |")
    print("| --- | ---: | ---: | ---: |")
    for name, values in samples.items():
        median = statistics.median(values)
        print(f"| {name} | {median * 1000:.2f} | {q90(values) * 1000:.2f} | {median / true_median:.1f} |")


if __name__ == "__main__":
    main()
