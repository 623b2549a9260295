#!/usr/bin/env bash
# Whole-process speed as ratios to /bin/true measured in the same run
# (the targets in BENCHMARKS.md), MCP round trips, peak memory, and optionally the
# database growth table. Release build.
#
#   scripts/bench-ratios.sh [--runs N] [--warmup N] [--dir DIR] [--no-build]
#                           [--bin PATH] [--growth] [--big]
#
# Cases (each timed run of every case interleaved with the others, see
# examples/bench_proc.rs): /bin/true; `goalkeeper --version`; `todo apply`
# start (a write every run) on a 10-task and a 1,000-task session; `todo
# view`, `context` and `statusline` on both; one Claude Code
# `UserPromptSubmit` hook event on the 1,000-task session. --big adds the
# 10,000-task session (apply and view) and its peak memory. --growth prints
# the database size table (examples/bench_growth.rs; takes minutes).
# --bin times another goalkeeper binary on databases built by this checkout.
set -euo pipefail

RUNS=200
WARMUP=20
DIR=""
BUILD=1
BIN=""
GROWTH=0
BIG=0
while [[ $# -gt 0 ]]; do
    case "$1" in
        --runs) RUNS="$2"; shift 2 ;;
        --warmup) WARMUP="$2"; shift 2 ;;
        --dir) DIR="$2"; shift 2 ;;
        --no-build) BUILD=0; shift ;;
        --bin) BIN="$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"; shift 2 ;;
        --growth) GROWTH=1; shift ;;
        --big) BIG=1; shift ;;
        -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "bench-ratios: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
done
[[ -x /usr/bin/time ]] || { echo "bench-ratios: needs GNU time: apt-get install -y time" >&2; exit 2; }

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
if [[ $BUILD -eq 1 ]]; then
    cargo build --release --quiet \
        --example bench_db --example bench_proc --example bench_mcp --example bench_growth
    # The binary as it is measured: statically linked (scripts/build-release.sh).
    "$ROOT/scripts/build-release.sh" >/dev/null
fi
GK="${BIN:-$ROOT/target/release/goalkeeper}"
EX="$ROOT/target/release/examples"
if [[ -z "$DIR" ]]; then
    DIR="$(mktemp -d "${TMPDIR:-/tmp}/goalkeeper-ratios.XXXXXX")"
fi
mkdir -p "$DIR"
DIR="$(cd "$DIR" && pwd)"
cd "$DIR"

: > config.toml
export GOALKEEPER_CONFIG="$DIR/config.toml"
export GOALKEEPER_NOW=1764441600000
unset GOALKEEPER_DB GOALKEEPER_SESSION

echo "== machine: $(uptime)"
echo "== binary: $GK ($(stat -c %s "$GK") bytes)"

SIZES=(10 1000)
[[ $BIG -eq 1 ]] && SIZES+=(10000)
source "$ROOT/scripts/bench-inputs.sh"
for n in "${SIZES[@]}"; do
    rm -f "s$n.db" "s$n.db-wal" "s$n.db-shm"
    "$EX/bench_db" "s$n.db" --tasks "$n" --session "s$n" 2>/dev/null
done

python3 - "$GK" "$DIR" "${SIZES[@]}" > cases.json <<'PY'
import json, sys
gk, d, sizes = sys.argv[1], sys.argv[2], [int(s) for s in sys.argv[3:]]
def task(i): return f"Task {i:05d}: update the parser and its tests for case {i}"
def pending(n): return (((n + 99) // 100) * 2 // 5) * 100 if n >= 100 else 0
cases = [{"name": "/bin/true", "argv": ["/bin/true"]},
         {"name": "--version", "argv": [gk, "--version"]}]
for n in sizes:
    db = ["--db", f"{d}/s{n}.db", "--session", f"s{n}"]
    a, b = task(pending(n) + 1), task(pending(n) + 2)
    start = lambda t: [gk, *db, "todo", "apply", json.dumps({"op": "start", "task": t})]
    cases.append({"name": f"apply {n}", "argv": start(a), "alt": start(b)})
    cases.append({"name": f"view {n}", "argv": [gk, *db, "todo", "view"]})
    if n <= 1000:
        cases.append({"name": f"context {n}", "argv": [gk, *db, "context"]})
        cases.append({"name": f"statusline {n}", "argv": [gk, "--db", f"{d}/s{n}.db", "statusline"],
                      "stdin": f"{d}/status-{n}.json"})
        cases.append({"name": f"hook {n}", "argv": [gk, "--db", f"{d}/s{n}.db", "hook", "claude-code"],
                      "stdin": f"{d}/hook-{n}.json"})
print(json.dumps(cases, indent=1))
PY
for n in "${SIZES[@]}"; do
    hook_input "s$n" "$DIR" > "hook-$n.json"
    status_input "s$n" > "status-$n.json"
done
# Sanity: the status line and the hook print something on these sessions.
"$GK" --db s1000.db statusline < status-1000.json | grep -q 'todos' \
    || { echo "bench-ratios: the status line printed nothing" >&2; exit 1; }

echo
echo "== whole process, $RUNS interleaved runs per case after $WARMUP warm-up runs (ms)"
"$EX/bench_proc" cases.json --runs "$RUNS" --warmup "$WARMUP"

echo
echo "== MCP round trips on one long-lived server"
for n in 10 1000; do
    p=$(pending "$n")
    echo "-- $n tasks"
    "$EX/bench_mcp" "$GK" "s$n.db" "s$n" "$(task $((p + 1)))" "$(task $((p + 2)))" --runs 1000 --warmup 50
done

echo
echo "== peak RSS of one call (largest of 3, MB)"
for n in "${SIZES[@]}"; do
    p=$(pending "$n")
    for what in apply view context; do
        case $what in
            apply) args=(todo apply "{\"op\":\"start\",\"task\":\"$(task $((p + 1)))\"}") ;;
            view) args=(todo view) ;;
            context) args=(context) ;;
        esac
        peak=0
        for _ in 1 2 3; do
            rss=$( { /usr/bin/time -v "$GK" --db "s$n.db" --session "s$n" "${args[@]}" >/dev/null; } 2>&1 \
                | awk -F': *' '/Maximum resident set size/ {print $2}')
            (( rss > peak )) && peak=$rss
        done
        printf '%-8s %6s tasks  %6.1f MB\n' "$what" "$n" "$(echo "$peak / 1024" | bc -l)"
    done
done

if [[ $GROWTH -eq 1 ]]; then
    echo
    echo "== database size after 1,000 mutations (examples/bench_growth.rs)"
    "$EX/bench_growth" "$DIR" --tasks 10,1000,10000 --mutations 1000
fi
echo
echo "== machine after: $(uptime)"
