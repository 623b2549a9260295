#!/usr/bin/env bash
# Regenerates scripts/hot-functions.txt: the functions the CLI's frequent
# commands run, which scripts/build-release.sh asks the linker to place
# side by side (lld's --symbol-ordering-file).
#
#   scripts/hot-functions.sh
#
# Why: a process maps the binary's code a fault at a time (the kernel maps
# up to 64 KiB around each faulting page). Spread over the whole binary, the
# functions one command runs touch many such windows; placed together they
# touch few, so a command takes fewer page faults and less wall time
# (BENCHMARKS.md, "The static, ordered build").
#
# How: builds the release binary with its symbols and without an ordering
# (build-release.sh --symbols), runs `--version`, `todo view`,
# `context`, `todo apply`, a Claude Code `UserPromptSubmit` hook event and
# the status line on a 10-task and a 1,000-task session (examples/bench_db)
# under callgrind, and writes every function any of them ran, the ones
# most commands share first. Rust's symbol names carry a hash; a name that
# no longer exists after a change is skipped by the linker, so a stale list
# only places less code. Run it again after large changes. Needs valgrind.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
command -v valgrind >/dev/null || { echo "hot-functions: needs valgrind" >&2; exit 2; }

source "$ROOT/scripts/bench-inputs.sh"
cargo build --release --quiet --example bench_db
scripts/build-release.sh --symbols >/dev/null
GK="$ROOT/target/release/goalkeeper"
DIR="$(mktemp -d "${TMPDIR:-/tmp}/goalkeeper-hot.XXXXXX")"
trap 'rm -rf "$DIR"' EXIT
: > "$DIR/config.toml"
export GOALKEEPER_CONFIG="$DIR/config.toml" GOALKEEPER_NOW=1764441600000
unset GOALKEEPER_DB GOALKEEPER_SESSION

run=0
profile() { # STDIN_FILE ARGS...: one command under callgrind
    local input=$1
    shift
    run=$((run + 1))
    valgrind --tool=callgrind --dump-instr=no --compress-strings=no --demangle=no \
        --callgrind-out-file="$DIR/cg.$run" "$GK" "$@" < "$input" > /dev/null 2>&1
}
profile /dev/null --version
for n in 10 1000; do
    db="$DIR/s$n.db"
    target/release/examples/bench_db "$db" --tasks "$n" --session "s$n" 2>/dev/null
    first=$(pending "$n")
    hook_input "s$n" "$DIR" > "$DIR/hook.json"
    status_input "s$n" > "$DIR/status.json"
    profile /dev/null --db "$db" --session "s$n" todo view
    profile /dev/null --db "$db" --session "s$n" context
    profile /dev/null --db "$db" --session "s$n" todo apply \
        "{\"op\":\"start\",\"task\":\"$(task $((first + 1)))\"}"
    profile "$DIR/hook.json" --db "$db" hook claude-code
    profile "$DIR/status.json" --db "$db" statusline
done

out="$ROOT/scripts/hot-functions.txt"
{
    echo "# The functions the CLI's frequent commands run, for lld's"
    echo "# --symbol-ordering-file (scripts/build-release.sh); written by"
    echo "# scripts/hot-functions.sh from $run commands, the most shared first."
    # Function names only (not the addresses of ifunc stubs), without
    # callgrind's recursion marks.
    grep -h '^fn=' "$DIR"/cg.* | sed 's/^fn=//; s/'"'"'[0-9]*$//' \
        | grep -v '^0x' | grep -v '^(below' | sort | uniq -c | sort -k1,1nr -k2 \
        | awk '{print $2}'
} > "$out"
echo "hot-functions: $(grep -vc '^#' "$out") functions in $out"
