#!/usr/bin/env bash
# Fleet mode (PostgreSQL) against SQLite, whole process, in one interleaved
# run (examples/bench_proc.rs): a mutation, a view and a Claude Code hook
# event on a 10-task and a 1,000-task session, each on a SQLite file, on
# PostgreSQL 15 over loopback (a temporary cluster this script starts and
# stops; as the `postgres` user when run as root) and on the same server
# through PgBouncer in transaction mode. The same lists on all: the
# PostgreSQL database is filled by `goalkeeper migrate --to URL` from the
# SQLite files.
#
#   scripts/bench-postgres.sh [--runs N] [--warmup N] [--debug] [--no-build]
set -euo pipefail

RUNS=100
WARMUP=10
PROFILE=release
BUILD=1
while [[ $# -gt 0 ]]; do
    case "$1" in
        --runs) RUNS="$2"; shift 2 ;;
        --warmup) WARMUP="$2"; shift 2 ;;
        --debug) PROFILE=debug; shift ;;
        --no-build) BUILD=0; shift ;;
        -h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "bench-postgres: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
done
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
flag=(); [[ $PROFILE == release ]] && flag=(--release)
if [[ $BUILD -eq 1 ]]; then
    cargo build "${flag[@]}" --quiet --bin goalkeeper --example bench_db --example bench_proc
fi
GK="$ROOT/target/$PROFILE/goalkeeper"
EX="$ROOT/target/$PROFILE/examples"
# shellcheck source=scripts/pg-cluster.sh
source "$ROOT/scripts/pg-cluster.sh"
start_pgbouncer transaction 20

cd "$DIR"
: > config.toml
export GOALKEEPER_CONFIG="$DIR/config.toml"
export GOALKEEPER_NOW=1764441600000
unset GOALKEEPER_DB GOALKEEPER_SESSION
echo "== machine: $(uptime)"
echo "== binary: $GK ($PROFILE)"
for n in 10 1000; do
    "$EX/bench_db" "s$n.db" --tasks "$n" --session "s$n" 2>/dev/null
    "$GK" --db "s$n.db" migrate --to "$URL" >/dev/null
    printf '{"session_id":"s%s","hook_event_name":"UserPromptSubmit","cwd":"%s","transcript_path":"%s/missing.jsonl","prompt":"go on"}' "$n" "$DIR" "$DIR" > "hook-$n.json"
done

python3 - "$GK" "$DIR" "$URL" "$BOUNCER_URL" > cases.json <<'PY'
import json, sys
gk, d, url, bouncer = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
def task(i): return f"Task {i:05d}: update the parser and its tests for case {i}"
def pending(n): return (((n + 99) // 100) * 2 // 5) * 100 if n >= 100 else 0
cases = [{"name": "/bin/true", "argv": ["/bin/true"]}]
for n in (10, 1000):
    # The two PostgreSQL cases share one session: each starts tasks of its
    # own, so every call changes the list.
    for name, db, first in (("sqlite", f"{d}/s{n}.db", 1), ("pg", url, 1), ("pgbouncer", bouncer, 3)):
        a, b = task(pending(n) + first), task(pending(n) + first + 1)
        base = [gk, "--db", db, "--session", f"s{n}"]
        start = lambda t: [*base, "todo", "apply", json.dumps({"op": "start", "task": t})]
        cases.append({"name": f"apply {n} {name}", "argv": start(a), "alt": start(b)})
        cases.append({"name": f"view {n} {name}", "argv": [*base, "todo", "view"]})
        cases.append({"name": f"hook {n} {name}", "argv": [gk, "--db", db, "hook", "claude-code"],
                      "stdin": f"{d}/hook-{n}.json"})
print(json.dumps(cases, indent=1))
PY
echo
echo "== whole process, $RUNS interleaved runs per case after $WARMUP warm-up runs (ms)"
"$EX/bench_proc" cases.json --runs "$RUNS" --warmup "$WARMUP" | tee results.txt
echo
echo "== PostgreSQL and PgBouncer / SQLite (medians of the same run)"
python3 - results.txt <<'PY'
import re, sys
med = {}
for line in open(sys.argv[1]):
    m = re.match(r"^(.+?)\s+([\d.]+)\s+[\d.]+\s+[\d.]+\s+[\d.]+\s+[\d.]+x$", line.rstrip())
    if m:
        med[m.group(1)] = float(m.group(2))
for n in (10, 1000):
    for what in ("apply", "view", "hook"):
        s, p, b = (med.get(f"{what} {n} {k}") for k in ("sqlite", "pg", "pgbouncer"))
        if s and p and b:
            print(f"{what:5} {n:>5} tasks: sqlite {s:7.2f} ms  pg {p:7.2f} ms ({p / s:5.2f}x)  pgbouncer {b:7.2f} ms ({b / s:5.2f}x)")
PY
