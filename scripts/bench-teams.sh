#!/usr/bin/env bash
# Teams of agents: completed tasks per second when 1, 4 and 16 agents share
# one list, on a SQLite file and on PostgreSQL 15 over loopback (a
# temporary cluster, scripts/pg-cluster.sh), in one run. Each agent is a
# loop of whole `goalkeeper --agent NAME todo apply` processes, as an agent
# calling the CLI runs them: claim one of the first pending tasks it sees
# (the first with --first, else one of as many as there are agents, at
# random), finish it, go on with the task `done` advances it to. A claim
# lost to a faster agent is refused and counted; every task is completed
# once.
#
#   scripts/bench-teams.sh [--tasks N] [--first] [--debug] [--no-build]
set -euo pipefail

TASKS=200
FIRST=0
PROFILE=release
BUILD=1
while [[ $# -gt 0 ]]; do
    case "$1" in
        --tasks) TASKS="$2"; shift 2 ;;
        --first) FIRST=1; shift ;;
        --debug) PROFILE=debug; shift ;;
        --no-build) BUILD=0; shift ;;
        -h|--help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "bench-teams: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
done
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
flag=(); [[ $PROFILE == release ]] && flag=(--release)
if [[ $BUILD -eq 1 ]]; then
    cargo build "${flag[@]}" --quiet --bin goalkeeper
fi
GK="$ROOT/target/$PROFILE/goalkeeper"
# shellcheck source=scripts/pg-cluster.sh
source "$ROOT/scripts/pg-cluster.sh"

cd "$DIR"
: > config.toml
export GOALKEEPER_CONFIG="$DIR/config.toml"
unset GOALKEEPER_DB GOALKEEPER_SESSION GOALKEEPER_AGENT GOALKEEPER_NOW
echo "== machine: $(nproc) cores, $(uptime)"
echo "== binary: $GK ($PROFILE), $TASKS tasks per list"
python3 - "$GK" "$DIR" "$URL" "$TASKS" "$FIRST" <<'PY'
import json, random, subprocess, sys, threading, time
gk, d, url, tasks, first = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5] == "1"

def apply(db, session, agent, call):
    out = subprocess.run([gk, "--db", db, "--session", session, "--agent", agent, "--json",
                          "todo", "apply", json.dumps(call)], capture_output=True, text=True)
    if out.returncode not in (0, 1) or out.stderr:
        sys.exit(f"bench-teams: {agent}: {out.stderr}")
    return json.loads(out.stdout)

def listed(result):
    return [t for p in result["details"]["phases"] for t in p["tasks"]]

def mine(result, agent):
    return next((t["content"] for t in listed(result)
                 if t["status"] == "in_progress" and t.get("agent") == agent), None)

def work(db, session, agent, agents, stats):
    rng = random.Random(agent)
    last = apply(db, session, agent, {"op": "view"})
    task = mine(last, agent)
    while True:
        if task:
            last = apply(db, session, agent, {"op": "done", "task": task})
            stats["done"] += 1
            task = mine(last, agent)
            continue
        pending = [t["content"] for t in listed(last) if t["status"] == "pending"]
        if not pending:
            return
        pick = pending[0] if first else rng.choice(pending[:agents])
        last = apply(db, session, agent, {"op": "start", "task": pick})
        if last["is_error"]:
            stats["lost"] += 1
        else:
            task = pick

rows = []
for backend, db in (("SQLite", f"{d}/teams.db"), ("PostgreSQL", url)):
    for agents in (1, 4, 16):
        session = f"team-{agents}"
        items = [f"Task {i:04d}: update the parser and its tests for case {i}" for i in range(tasks)]
        apply(db, session, "lead", {"op": "init", "items": items})
        # The lead only wrote the plan: its first task goes back to the team.
        subprocess.run([gk, "--db", db, "--session", session, "--agent", "lead", "todo", "release"],
                       check=True, capture_output=True)
        stats = [{"done": 0, "lost": 0} for _ in range(agents)]
        threads = [threading.Thread(target=work, args=(db, session, f"w{i}", agents, stats[i]))
                   for i in range(agents)]
        start = time.monotonic()
        for t in threads: t.start()
        for t in threads: t.join()
        elapsed = time.monotonic() - start
        done = sum(s["done"] for s in stats)
        lost = sum(s["lost"] for s in stats)
        final = apply(db, session, "check", {"op": "view"})
        left = [t for t in listed(final) if t["status"] != "completed"]
        if done != tasks or left:
            sys.exit(f"bench-teams: {backend} {agents} agents completed {done} of {tasks}, {len(left)} left")
        rows.append((backend, agents, done / elapsed, elapsed, lost))
        print(f"{backend:10} {agents:>2} agents: {done / elapsed:7.1f} tasks/s ({elapsed:5.2f} s, {lost} claims lost to a faster agent)", flush=True)
print()
print("| agents | SQLite | PostgreSQL |")
print("| ---: | ---: | ---: |")
for agents in (1, 4, 16):
    s = next(r for r in rows if r[0] == "SQLite" and r[1] == agents)
    p = next(r for r in rows if r[0] == "PostgreSQL" and r[1] == agents)
    print(f"| {agents} | {s[2]:.0f} tasks/s | {p[2]:.0f} tasks/s |")
PY
