#!/usr/bin/env bash
# Teams of agents: completed tasks per second when 1, 4, 16 and 64 agents
# share one list, on a SQLite file, on PostgreSQL 15 over loopback (a
# temporary cluster, scripts/pg-cluster.sh) and on the same server through
# PgBouncer in transaction mode (a pool of 20 server connections), in one
# run. Each agent works either through whole `goalkeeper --agent NAME todo
# apply` processes, as an agent calling the CLI does (a new connection per
# call), or through its own long-lived `goalkeeper --agent NAME mcp` server
# (one connection, opened once, before the clock starts). An agent reads the result text as a model
# does: it reads the list (`view`, page by page) and claims one of the
# pending tasks of the first page that has any (the first with --first,
# else one of as many as there are agents, at random), finishes it, and
# goes on with the task `done` advanced it to. A claim lost to a faster
# agent is refused and counted, and the agent reads the list again; every
# task is completed once.
#
#   scripts/bench-teams.sh [--tasks N] [--agents "1 4 16 64"] [--first] [--debug] [--no-build]
set -euo pipefail

TASKS=400
AGENTS="1 4 16 64"
FIRST=0
PROFILE=release
BUILD=1
while [[ $# -gt 0 ]]; do
    case "$1" in
        --tasks) TASKS="$2"; shift 2 ;;
        --agents) AGENTS="$2"; shift 2 ;;
        --first) FIRST=1; shift ;;
        --debug) PROFILE=debug; shift ;;
        --no-build) BUILD=0; shift ;;
        -h|--help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
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
start_pgbouncer transaction 20

cd "$DIR"
: > config.toml
export GOALKEEPER_CONFIG="$DIR/config.toml"
unset GOALKEEPER_DB GOALKEEPER_SESSION GOALKEEPER_AGENT GOALKEEPER_NOW
echo "== machine: $(nproc) cores, $(uptime)"
echo "== binary: $GK ($PROFILE), $TASKS tasks per list"
python3 - "$GK" "$DIR" "$URL" "$BOUNCER_URL" "$TASKS" "$FIRST" "$AGENTS" <<'PY'
import json, random, re, subprocess, sys, threading, time
gk, d, url, bouncer, tasks, first = sys.argv[1:5] + [int(sys.argv[5]), sys.argv[6] == "1"]
counts = [int(n) for n in sys.argv[7].split()]

class Cli:
    """An agent calling `goalkeeper todo apply`, one process per call."""
    def __init__(self, db, session, agent):
        self.base = [gk, "--db", db, "--session", session, "--agent", agent, "todo", "apply"]
    def call(self, call):
        out = subprocess.run([*self.base, json.dumps(call)], capture_output=True, text=True)
        if out.returncode not in (0, 1) or out.stderr:
            sys.exit(f"bench-teams: {self.base}: {out.stderr}")
        return out.stdout, out.returncode == 1
    def close(self):
        pass

class Mcp:
    """An agent with its own `goalkeeper mcp` server, one connection."""
    def __init__(self, db, session, agent):
        self.proc = subprocess.Popen([gk, "--db", db, "--session", session, "--agent", agent, "mcp"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.id = 0
        self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                    "clientInfo": {"name": "bench-teams", "version": "0"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    def send(self, message):
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()
    def request(self, method, params):
        self.id += 1
        self.send({"jsonrpc": "2.0", "id": self.id, "method": method, "params": params})
        while True:
            message = json.loads(self.proc.stdout.readline())
            if message.get("id") == self.id:
                if "error" in message:
                    sys.exit(f"bench-teams: {message}")
                return message["result"]
    def call(self, call):
        result = self.request("tools/call", {"name": "todo", "arguments": call})
        return result["content"][0]["text"], result.get("isError", False)
    def close(self):
        self.proc.stdin.close()
        self.proc.wait()

def mine(text, agent):
    """The task `agent` holds, as a result shows it: among the tasks the
    call changed (the one `done` advanced it to), or among the open ones."""
    m = (re.search(r"^  - \[/\] (.*) \([^()]*\), was \w+$", text, re.M)
         or re.search(r"^  - (.*) \[in_progress: " + re.escape(agent) + r"\] \(", text, re.M))
    return m.group(1) if m else None

def look(client, agent, stats):
    """Reads the list page by page, as a model would: the task `agent`
    holds, or the pending tasks of the first page that has any."""
    page = 1
    while True:
        text, _ = client.call({"op": "view", "page": page})
        stats["views"] += 1
        held = re.search(r"^  - \[/: " + re.escape(agent) + r"\] (.*)$", text, re.M)
        if held:
            return held.group(1), []
        pending = re.findall(r"^  - \[ \] (.*)$", text, re.M)
        if pending:
            return None, pending
        pages = re.search(r"^Page (\d+)/(\d+)", text, re.M)
        if not pages or int(pages.group(1)) >= int(pages.group(2)):
            return None, []
        page += 1

def work(client, agent, agents, stats):
    rng = random.Random(agent)
    task, pending = look(client, agent, stats)
    while True:
        if task:
            text, _ = client.call({"op": "done", "task": task})
            stats["done"] += 1
            task = mine(text, agent)
            if not task:
                task, pending = look(client, agent, stats)
            continue
        if not pending:
            break
        pick = pending[0] if first else rng.choice(pending[:agents])
        _, refused = client.call({"op": "start", "task": pick})
        if refused:
            stats["lost"] += 1
            task, pending = look(client, agent, stats)
        else:
            task = pick

backends = (("SQLite", f"{d}/teams.db"), ("PostgreSQL", url), ("PgBouncer", bouncer))
kinds = (("CLI", Cli), ("MCP", Mcp))
rows = {}
for agents in counts:
    for backend, db in backends:
        for mode, kind in kinds:
            session = f"{mode}-{agents}"
            items = [f"Task {i:04d}: update the parser and its tests for case {i}" for i in range(tasks)]
            Cli(db, session, "lead").call({"op": "init", "items": items})
            # The lead only wrote the plan: its first task goes back to the team.
            subprocess.run([gk, "--db", db, "--session", session, "--agent", "lead", "todo", "release"],
                           check=True, capture_output=True)
            stats = [{"done": 0, "lost": 0, "views": 0} for _ in range(agents)]
            # The MCP servers start (and connect) before the clock does.
            clients = [kind(db, session, f"w{i}") for i in range(agents)]
            threads = [threading.Thread(target=work, args=(clients[i], f"w{i}", agents, stats[i]))
                       for i in range(agents)]
            start = time.monotonic()
            for t in threads: t.start()
            for t in threads: t.join()
            elapsed = time.monotonic() - start
            for client in clients: client.close()
            done = sum(s["done"] for s in stats)
            lost = sum(s["lost"] for s in stats)
            views = sum(s["views"] for s in stats)
            view = subprocess.run([gk, "--db", db, "--session", session, "--json", "todo", "view"],
                                  capture_output=True, text=True, check=True)
            listed = [t for p in json.loads(view.stdout)["details"]["phases"] for t in p["tasks"]]
            left = [t for t in listed if t["status"] != "completed"]
            if done != tasks or left:
                sys.exit(f"bench-teams: {backend} {mode} {agents} agents completed {done} of {tasks}, {len(left)} left")
            rows[(backend, mode, agents)] = done / elapsed
            print(f"{backend:10} {mode} {agents:>2} agents: {done / elapsed:7.1f} tasks/s ({elapsed:5.2f} s, {lost} claims lost to a faster agent, {views} views)", flush=True)
for mode, _ in kinds:
    print()
    print(f"{mode}: | agents | " + " | ".join(b for b, _ in backends) + " |")
    for agents in counts:
        print(f"| {agents} | " + " | ".join(f"{rows[(b, mode, agents)]:.0f}" for b, _ in backends) + " |")
PY
