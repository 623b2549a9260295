#!/usr/bin/env bash
# The gate's cost on an agent's `done`, whole processes (BENCHMARKS.md,
# "Checks"): `goalkeeper todo apply` of `done` (then `start`, so every
# run writes) on a 10-task list whose task has no check, against the same
# list whose task has a check that passed on the files as they are, in this
# repository's tree and in a generated tree of 10,000 files. The gate reads
# the tree (its hashes from the cache file `verify` wrote) and the run.
# Release build; every case is run through `env -C DIR` alike. Half the
# runs of a case are `done`, half `start` (which the gate does not
# concern): a `done` costs what the case's `start` costs plus twice the
# difference of the means.
#
#   scripts/bench-checks.sh [--runs N] [--warmup N] [--no-build] [--bin PATH]
set -euo pipefail

RUNS=200
WARMUP=20
BUILD=1
BIN=""
while [[ $# -gt 0 ]]; do
    case "$1" in
        --runs) RUNS="$2"; shift 2 ;;
        --warmup) WARMUP="$2"; shift 2 ;;
        --no-build) BUILD=0; shift ;;
        --bin) BIN="$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"; shift 2 ;;
        -h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "bench-checks: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
done

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
if [[ $BUILD -eq 1 ]]; then
    cargo build --release --quiet --bin goalkeeper --example bench_proc
fi
GK="${BIN:-$ROOT/target/release/goalkeeper}"
EX="$ROOT/target/release/examples"
DIR="$(mktemp -d "${TMPDIR:-/tmp}/goalkeeper-checks.XXXXXX")"
trap 'rm -rf "$DIR"' EXIT
mkdir -p "$DIR/home" "$DIR/10k"
: > "$DIR/config.toml"
export HOME="$DIR/home" GOALKEEPER_CONFIG="$DIR/config.toml" GOALKEEPER_DB="$DIR/gk.db"
unset GOALKEEPER_SESSION GOALKEEPER_AGENT

# 100 directories of 100 files of 1-4 KB.
python3 - "$DIR/10k" <<'EOF'
import os, sys
root = sys.argv[1]
for d in range(100):
    os.makedirs(f"{root}/dir{d:03}", exist_ok=True)
    for f in range(100):
        size = 1024 + (d * 100 + f) * 37 % 3072
        with open(f"{root}/dir{d:03}/file{f:03}.txt", "w") as out:
            out.write("".join(chr(97 + (i + d + f) % 26) for i in range(size)))
EOF

# The files are older than the cache's clock tick (2 s) when verify first
# looks, as a project's files mostly are: verify keeps their hashes in the
# cache file the gate then reads.
sleep 3

setup() { # TREE NAME CHECK
    local tree="$1" session="$2" check="$3"
    (cd "$tree"
     "$GK" --session "$session" todo init --item "Task 0" --item "Task 1" --item "Task 2" \
        --item "Task 3" --item "Task 4" --item "Task 5" --item "Task 6" --item "Task 7" \
        --item "Task 8" --item "Task 9" >/dev/null
     if [[ "$check" == 1 ]]; then
         "$GK" --session "$session" todo check "Task 0" true >/dev/null
         "$GK" --session "$session" verify --task "Task 0" >/dev/null
     fi)
}
setup "$ROOT" repo-none 0
setup "$ROOT" repo-check 1
setup "$DIR/10k" big-none 0
setup "$DIR/10k" big-check 1
case_json() { # NAME TREE SESSION
    local done='{"op":"done","task":"Task 0"}' start='{"op":"start","task":"Task 0"}'
    python3 -c 'import json,sys; n,t,s,gk,d,st=sys.argv[1:]; print(json.dumps({"name":n,
        "argv":["env","-C",t,gk,"--session",s,"todo","apply",d],
        "alt":["env","-C",t,gk,"--session",s,"todo","apply",st]}))' \
        "$1" "$2" "$3" "$GK" "$done" "$start"
}
{
    echo '['
    echo '{"name": "/bin/true", "argv": ["/bin/true"]},'
    case_json "done/start, no check, this repository" "$ROOT" repo-none; echo ','
    case_json "done/start, a passing check, this repository" "$ROOT" repo-check; echo ','
    case_json "done/start, no check, 10,000 files" "$DIR/10k" big-none; echo ','
    case_json "done/start, a passing check, 10,000 files" "$DIR/10k" big-check
    echo ']'
} > "$DIR/cases.json"
"$EX/bench_proc" "$DIR/cases.json" --runs "$RUNS" --warmup "$WARMUP"
