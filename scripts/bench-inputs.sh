# The inputs the benchmark scripts give goalkeeper, sourced by
# bench-ratios.sh, bench-compare.sh, bench-cli.sh and hot-functions.sh.

# The text of task I in examples/bench_db's lists.
task() { printf 'Task %05d: update the parser and its tests for case %d' "$1" "$1"; }

# The first pending task of bench_db's list of $1 tasks.
pending() {
    local n=$1 phases=$(( ($1 + 99) / 100 ))
    if (( n >= 100 )); then echo $(( phases * 2 / 5 * 100 )); else echo 0; fi
}

# A Claude Code UserPromptSubmit hook event for session $1, from directory $2.
hook_input() {
    printf '{"session_id":"%s","hook_event_name":"UserPromptSubmit","cwd":"%s","transcript_path":"%s/missing.jsonl","prompt":"go on"}' "$1" "$2" "$2"
}

# Claude Code's status-line input for session $1.
status_input() { printf '{"session_id":"%s","model":{"display_name":"Opus"}}' "$1"; }
