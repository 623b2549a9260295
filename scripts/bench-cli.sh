#!/usr/bin/env bash
# Whole-process timing of the goalkeeper CLI (release build): `todo apply`
# (a real write every run), `todo view` and `context` on a session of 1,000
# tasks, (a) in a database holding only that session and (b) in one holding
# 10,000 other sessions as well. hyperfine times the runs; /usr/bin/time -v
# reads the peak memory of one call. Each case runs --rounds times (default
# 3) x --runs runs (default 100) on each database. Prints a table; keeps
# hyperfine's JSON exports in the work directory. Needs python3 for the
# summary.
#
#   scripts/bench-cli.sh [--runs N] [--rounds N] [--warmup N] [--tasks N] [--others N]
#                        [--dir DIR] [--no-build] [--bin PATH]
#
# --bin times another goalkeeper binary (say, a release build of an older
# commit) against databases built by this checkout's builder.
#
# Needs hyperfine and GNU time. On Debian/Ubuntu:
#   apt-get update && apt-get install -y hyperfine time
set -euo pipefail

RUNS=100
ROUNDS=3
WARMUP=10
TASKS=1000
OTHERS=10000
DIR=""
BUILD=1
BIN=""
while [[ $# -gt 0 ]]; do
    case "$1" in
        --runs) RUNS="$2"; shift 2 ;;
        --rounds) ROUNDS="$2"; shift 2 ;;
        --warmup) WARMUP="$2"; shift 2 ;;
        --tasks) TASKS="$2"; shift 2 ;;
        --others) OTHERS="$2"; shift 2 ;;
        --dir) DIR="$2"; shift 2 ;;
        --no-build) BUILD=0; shift ;;
        --bin) BIN="$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"; shift 2 ;;
        -h|--help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "bench-cli: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
done

missing=()
command -v hyperfine >/dev/null || missing+=(hyperfine)
command -v python3 >/dev/null || missing+=(python3)
[[ -x /usr/bin/time ]] || missing+=(time)
if [[ ${#missing[@]} -gt 0 ]]; then
    echo "bench-cli: missing ${missing[*]}; install with:" >&2
    echo "    apt-get update && apt-get install -y ${missing[*]}" >&2
    exit 2
fi

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
if [[ $BUILD -eq 1 ]]; then
    cargo build --release --quiet --bin goalkeeper --example bench_db
fi
GK="${BIN:-$ROOT/target/release/goalkeeper}"
BUILDER="$ROOT/target/release/examples/bench_db"

if [[ -z "$DIR" ]]; then
    DIR="$(mktemp -d "${TMPDIR:-/tmp}/goalkeeper-bench.XXXXXX")"
fi
mkdir -p "$DIR"
DIR="$(cd "$DIR" && pwd)"
cd "$DIR"

# Default settings whatever the developer's own config says; a fixed clock.
: > config.toml
export GOALKEEPER_CONFIG="$DIR/config.toml"
export GOALKEEPER_NOW=1764441600000
export GOALKEEPER_SESSION=bench
unset GOALKEEPER_DB

echo "== machine while measuring: $(uptime)"
echo "== work directory: $DIR"
echo "== binary: $GK"

# The two databases, built through the library in one process each.
rm -f template-*.db*
"$BUILDER" template-empty.db --tasks "$TASKS" --others 0
"$BUILDER" template-crowded.db --tasks "$TASKS" --others "$OTHERS"

# Tasks N/2 and N/2+1 are pending in the builder's list; each timed run
# starts one of them after an untimed run started the other, so every timed
# run changes the list and writes it.
source "$ROOT/scripts/bench-inputs.sh"
A="$(task $((TASKS / 2)))"
B="$(task $((TASKS / 2 + 1)))"
start_call() { printf '{"op":"start","task":"%s"}' "$1"; }

# A fresh copy of a template (with its WAL, if any) for each measurement.
fresh() {
    rm -f "run-$1.db" "run-$1.db-wal" "run-$1.db-shm"
    for suffix in "" -wal -shm; do
        if [[ -e "template-$1.db$suffix" ]]; then cp "template-$1.db$suffix" "run-$1.db$suffix"; fi
    done
}

# Each case: a name and the goalkeeper arguments (after --db).
CASES=(apply view context)
args_of() {
    case "$1" in
        apply) printf '%s\n' todo apply "$(start_call "$A")" ;;
        view) printf '%s\n' todo view ;;
        context) printf '%s\n' context ;;
    esac
}

# Peak RSS in kB of one call, the largest of 5.
peak_rss() {
    local db="$1"; shift
    local peak=0 rss
    for _ in 1 2 3 4 5; do
        rss=$( { /usr/bin/time -v "$GK" --db "$db" "$@" >/dev/null; } 2>&1 \
            | awk -F': *' '/Maximum resident set size/ {print $2}')
        (( rss > peak )) && peak=$rss
    done
    echo "$peak"
}

# Rounds of every case, each case on both databases back to back, so a
# burst of load from elsewhere hits both sides of the comparison alike;
# the summary pools the runs of all rounds.
for round in $(seq 1 "$ROUNDS"); do
    for case in "${CASES[@]}"; do
        for db in empty crowded; do
            fresh "$db"
            mapfile -t args < <(args_of "$case")
            # Sanity: the command works and prints what it should.
            out="$("$GK" --db "run-$db.db" "${args[@]}")"
            case "$case" in
                context) grep -q '</todo_context>' <<<"$out" || { echo "bench-cli: context printed no todo block" >&2; exit 1; } ;;
                *) grep -q "^Overall: " <<<"$out" || { echo "bench-cli: $case printed no summary" >&2; exit 1; } ;;
            esac
            prepare=()
            if [[ $case == apply ]]; then
                prepare=(--prepare "$GK --db run-$db.db todo apply '$(start_call "$B")'")
            fi
            quoted="$GK --db run-$db.db"
            for a in "${args[@]}"; do quoted+=" '$a'"; done
            name="$case-$db-$round"
            hyperfine -N --style basic --warmup "$WARMUP" --runs "$RUNS" "${prepare[@]}" \
                --export-json "$name.json" --command-name "$case ($db)" "$quoted" >"$name.log" 2>&1 \
                || { cat "$name.log" >&2; exit 1; }
            if [[ $round -eq 1 ]]; then
                peak_rss "run-$db.db" "${args[@]}" > "rss-$case-$db.kb"
            fi
        done
    done
done

echo
echo "== goalkeeper CLI, session of $TASKS tasks; 'crowded' also holds $OTHERS other sessions"
echo "== $ROUNDS rounds x $RUNS runs (after $WARMUP warm-up runs) per case and database"
python3 - "$DIR" "$ROUNDS" "${CASES[@]}" <<'PY'
import json, pathlib, statistics, sys

root, rounds, cases = pathlib.Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
ms = lambda s: s * 1000

def load(case, db, r):
    return json.loads((root / f"{case}-{db}-{r}.json").read_text())["results"][0]

rows, medians = [], {}
for case in cases:
    for db in ("empty", "crowded"):
        results = [load(case, db, r) for r in range(1, rounds + 1)]
        times = [t for res in results for t in res["times"]]
        user = statistics.mean(res["user"] for res in results)
        system = statistics.mean(res["system"] for res in results)
        rss = int((root / f"rss-{case}-{db}.kb").read_text()) / 1024
        medians[case, db] = [res["median"] for res in results]
        rows.append((case, db, statistics.median(times), statistics.mean(times),
                     statistics.stdev(times), min(times), max(times), user, system, rss))

header = ("case", "database", "median", "mean", "stddev", "min", "max", "user", "system", "peak_MB")
print("%-8s %-8s %8s %8s %8s %8s %8s %8s %8s %8s" % header)
with open(root / "results.tsv", "w") as tsv:
    tsv.write("\t".join(header) + "\n")
    for case, db, *numbers, rss in rows:
        cells = ["%.2f" % ms(n) for n in numbers] + ["%.1f" % rss]
        print("%-8s %-8s " % (case, db) + " ".join("%8s" % c for c in cells))
        tsv.write("\t".join([case, db] + cells) + "\n")
print("\n== crowded / empty, pooled median (each round's ratio)")
for case in cases:
    pooled = [r for r in rows if r[0] == case]
    ratio = pooled[1][2] / pooled[0][2]
    per_round = ", ".join("%.2f" % (c / e) for e, c in zip(medians[case, "empty"], medians[case, "crowded"]))
    print("%-8s %.2fx (%s)" % (case, ratio, per_round))
PY
echo
echo "== machine after measuring: $(uptime)"
echo "== results: $DIR/results.tsv (times in ms; hyperfine's JSON exports beside it)"
