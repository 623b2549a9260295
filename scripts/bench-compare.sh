#!/usr/bin/env bash
# Two goalkeeper binaries in one interleaved run (BENCHMARKS.md): whole-
# process ratios to /bin/true, MCP round trips, peak memory and database
# growth per mutation, each
# binary on databases of its own built by this checkout's bench_db.
#
#   scripts/bench-compare.sh BEFORE AFTER [--runs N] [--warmup N] [--dir DIR]
#                            [--before-db-tool BENCH_DB]
#
# --before-db-tool: the bench_db that builds BEFORE's databases, when the
# schema changed between the two (BEFORE refuses a newer schema): say, the
# examples/bench_db of the older commit.
#
# Needs the release examples (cargo build --release --example bench_db
# --example bench_proc --example bench_mcp) and GNU time.
set -euo pipefail
[[ $# -ge 2 ]] || { sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
abs() { echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; }
BEFORE="$(abs "$1")"; AFTER="$(abs "$2")"; shift 2
RUNS=200; WARMUP=20; DIR=""; BEFORE_DB_TOOL=""
while [[ $# -gt 0 ]]; do
    case "$1" in
        --runs) RUNS="$2"; shift 2 ;;
        --warmup) WARMUP="$2"; shift 2 ;;
        --dir) DIR="$2"; shift 2 ;;
        --before-db-tool) BEFORE_DB_TOOL="$(abs "$2")"; shift 2 ;;
        *) echo "bench-compare: unknown argument $1" >&2; exit 2 ;;
    esac
done
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
EX="$ROOT/target/release/examples"
source "$ROOT/scripts/bench-inputs.sh"
[[ -n "$DIR" ]] || DIR="$(mktemp -d "${TMPDIR:-/tmp}/goalkeeper-compare.XXXXXX")"
mkdir -p "$DIR"; DIR="$(cd "$DIR" && pwd)"; cd "$DIR"
: > config.toml
export GOALKEEPER_CONFIG="$DIR/config.toml" GOALKEEPER_NOW=1764441600000
unset GOALKEEPER_DB GOALKEEPER_SESSION
echo "== machine: $(uptime)"
for b in before after; do
    bin=$BEFORE; [[ $b == after ]] && bin=$AFTER
    db_tool="$EX/bench_db"; [[ $b == before && -n $BEFORE_DB_TOOL ]] && db_tool=$BEFORE_DB_TOOL
    echo "== $b: $bin ($(stat -c %s "$bin") bytes; $(file -b "$bin" | cut -d, -f1-2))"
    for n in 10 1000 10000; do
        rm -f "$b-$n.db" "$b-$n.db-wal" "$b-$n.db-shm"
        "$db_tool" "$b-$n.db" --tasks "$n" --session "s$n" 2>/dev/null
        hook_input "s$n" "$DIR" > "hook-$n.json"
        status_input "s$n" > "status-$n.json"
    done
done
python3 - "$BEFORE" "$AFTER" "$DIR" > cases.json <<'PY'
import json, sys
before, after, d = sys.argv[1:4]
def task(i): return f"Task {i:05d}: update the parser and its tests for case {i}"
def pending(n): return (((n + 99) // 100) * 2 // 5) * 100 if n >= 100 else 0
cases = [{"name": "/bin/true", "argv": ["/bin/true"]}]
for b, gk in (("before", before), ("after", after)):
    cases.append({"name": f"{b} --version", "argv": [gk, "--version"]})
    for n in (10, 1000):
        db = ["--db", f"{d}/{b}-{n}.db"]
        s = ["--session", f"s{n}"]
        start = lambda t: [gk, *db, *s, "todo", "apply", json.dumps({"op": "start", "task": t})]
        cases.append({"name": f"{b} apply {n}", "argv": start(task(pending(n) + 1)), "alt": start(task(pending(n) + 2))})
        cases.append({"name": f"{b} view {n}", "argv": [gk, *db, *s, "todo", "view"]})
        cases.append({"name": f"{b} context {n}", "argv": [gk, *db, *s, "context"]})
        cases.append({"name": f"{b} statusline {n}", "argv": [gk, *db, "statusline"], "stdin": f"{d}/status-{n}.json"})
        cases.append({"name": f"{b} hook {n}", "argv": [gk, *db, "hook", "claude-code"], "stdin": f"{d}/hook-{n}.json"})
print(json.dumps(cases, indent=1))
PY
echo
echo "== whole process, $RUNS interleaved runs per case after $WARMUP warm-up runs (ms; ratio = median / median of /bin/true)"
"$EX/bench_proc" cases.json --runs "$RUNS" --warmup "$WARMUP"
echo
echo "== MCP round trips on one long-lived server (1000 calls after 50)"
for n in 10 1000; do
    p=$(pending "$n")
    for b in before after; do
        bin=$BEFORE; [[ $b == after ]] && bin=$AFTER
        echo "-- $b, $n tasks"
        "$EX/bench_mcp" "$bin" "$b-$n.db" "s$n" "$(task $((p + 1)))" "$(task $((p + 2)))" --runs 1000 --warmup 50
    done
done
echo
echo "== peak RSS of one call on 10,000 tasks (largest of 3, MB)"
for b in before after; do
    bin=$BEFORE; [[ $b == after ]] && bin=$AFTER
    for what in apply view context; do
        case $what in
            apply) args=(todo apply "{\"op\":\"start\",\"task\":\"$(task 4001)\"}") ;;
            view) args=(todo view) ;;
            context) args=(context) ;;
        esac
        peak=0
        for _ in 1 2 3; do
            rss=$( { /usr/bin/time -v "$bin" --db "$b-10000.db" --session s10000 "${args[@]}" >/dev/null; } 2>&1 \
                | awk -F': *' '/Maximum resident set size/ {print $2}')
            (( rss > peak )) && peak=$rss
        done
        printf '%-7s %-8s %6.1f MB\n' "$b" "$what" "$(echo "$peak / 1024" | bc -l)"
    done
done
echo
echo "== database growth per mutation (200 alternating starts through the CLI, file size after a full checkpoint)"
checkpointed() { python3 -c 'import os,sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute("PRAGMA wal_checkpoint(TRUNCATE)"); c.close(); print(os.path.getsize(sys.argv[1]))' "$1"; }
for n in 10 1000; do
    p=$(pending "$n")
    for b in before after; do
        bin=$BEFORE; [[ $b == after ]] && bin=$AFTER
        db="growth-$b-$n.db"; rm -f "$db" "$db-wal" "$db-shm"
        tool="$EX/bench_db"; [[ $b == before && -n $BEFORE_DB_TOOL ]] && tool="$BEFORE_DB_TOOL"
        "$tool" "$db" --tasks "$n" --session "s$n" 2>/dev/null
        size0=$(checkpointed "$db")
        for i in $(seq 1 200); do
            t=$(task $((p + 1 + i % 2)))
            "$bin" --db "$db" --session "s$n" todo apply "{\"op\":\"start\",\"task\":\"$t\"}" >/dev/null
        done
        size1=$(checkpointed "$db")
        printf '%-7s %5d tasks %8.1f bytes per mutation\n' "$b" "$n" "$(echo "($size1 - $size0) / 200" | bc -l)"
    done
done
echo
echo "== machine after: $(uptime)"
