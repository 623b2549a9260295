#!/usr/bin/env bash
# CPU that `goalkeeper watch` uses per minute, read from /proc (user +
# system time of the watch process): idle (nothing changes for --seconds)
# and busy (another process changes the todo list once a second), in a
# 100x30 tmux pane, on a session of 200 tasks. Needs tmux.
#
#   scripts/watch-cpu.sh [--bin PATH] [--seconds N]
#
# --bin defaults to target/release/goalkeeper (built if missing).
set -euo pipefail
cd "$(dirname "$0")/.."

BIN=target/release/goalkeeper
SECS=60
while [[ $# -gt 0 ]]; do
    case "$1" in
        --bin) BIN="$2"; shift 2 ;;
        --seconds) SECS="$2"; shift 2 ;;
        *) echo "unknown argument $1; see the header of $0" >&2; exit 2 ;;
    esac
done
if [[ "$BIN" == target/release/goalkeeper && ! -x "$BIN" ]]; then
    cargo build --release --locked
fi
BIN="$(realpath "$BIN")"
command -v tmux >/dev/null || { echo "needs tmux: apt-get install -y tmux" >&2; exit 2; }

dir="$(mktemp -d)"
sock="$dir/tmux.sock"
cleanup() { tmux -S "$sock" kill-server 2>/dev/null || true; rm -rf "$dir"; }
trap cleanup EXIT
export GOALKEEPER_DB="$dir/g.db" GOALKEEPER_CONFIG="$dir/config.toml" GOALKEEPER_SESSION=cpu
: > "$GOALKEEPER_CONFIG"
items="$(python3 -c 'import json; print(json.dumps([f"Task {i:03}" for i in range(1, 201)]))')"
"$BIN" todo apply "{\"op\":\"init\",\"list\":[{\"phase\":\"Work\",\"items\":$items}]}" >/dev/null
"$BIN" goal set "Measure the watcher" --budget 1000000 >/dev/null

tmux -S "$sock" new-session -d -x 100 -y 30 \
    "GOALKEEPER_DB='$GOALKEEPER_DB' GOALKEEPER_CONFIG='$GOALKEEPER_CONFIG' exec '$BIN' --session cpu watch"
sleep 2
pid="$(tmux -S "$sock" display-message -p '#{pane_pid}')"
hz="$(getconf CLK_TCK)"
ticks() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
# CPU ticks $1 over wall-clock seconds $2, as CPU per minute.
per_minute() { python3 -c "t=$1/$hz; w=$2; print(f'{t*60/w*1000:.0f} ms CPU per minute ({t*100/w:.3f} % of one core), over {w:.0f} s')"; }
now() { date +%s.%N; }

t0="$(ticks)"; w0="$(now)"; sleep "$SECS"; t1="$(ticks)"; w1="$(now)"
echo "idle: $(per_minute $((t1 - t0)) "$w1 - $w0")"

t0="$(ticks)"; w0="$(now)"
for ((i = 1; i <= SECS; i++)); do
    "$BIN" todo start "Task $(printf %03d $(( (i % 200) + 1 )))" >/dev/null
    sleep 1
done
t1="$(ticks)"; w1="$(now)"
echo "busy (a change a second, $SECS changes): $(per_minute $((t1 - t0)) "$w1 - $w0")"
tmux -S "$sock" send-keys -t 0 q
