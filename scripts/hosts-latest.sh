#!/usr/bin/env bash
# Runs the real-host suite (tests/hosts/) against the newest release of each
# host on npm, not the pinned one: installs it with scripts/install-host.sh
# (into the same cache), points the host's `GOALKEEPER_<HOST>_BIN` at it and
# runs that host's ignored tests. Prints a table host × version × result and
# exits 1 when any host failed. The logs stay in target/hosts-latest/.
#
#   scripts/hosts-latest.sh [claude-code|gemini-cli|codex|pi ...]   (default: all four)
set -euo pipefail
cd "$(dirname "$0")/.."
hosts=("$@")
[ ${#hosts[@]} -gt 0 ] || hosts=(claude-code gemini-cli codex pi)
logs=target/hosts-latest
mkdir -p "$logs"
# A missing host fails its tests instead of skipping them (as in CI).
export CI=true
cargo test --locked --test hosts --no-run >"$logs/build.log" 2>&1 || {
  cat "$logs/build.log" >&2
  exit 1
}
rows=()
failed=0
for host in "${hosts[@]}"; do
  case "$host" in
    claude-code) var=GOALKEEPER_CLAUDE_BIN filter=claude_code:: ;;
    gemini-cli) var=GOALKEEPER_GEMINI_BIN filter=gemini_cli:: ;;
    codex) var=GOALKEEPER_CODEX_BIN filter=codex:: ;;
    pi) var=GOALKEEPER_PI_BIN filter=pi:: ;;
    *) echo "unknown host $host (claude-code, gemini-cli, codex or pi)" >&2; exit 2 ;;
  esac
  log="$logs/$host.log"
  if ! exe="$(scripts/install-host.sh "$host" latest 2>"$log")"; then
    rows+=("$host|?|install failed ($log)")
    failed=1
    continue
  fi
  # The cache directory is named HOST-VERSION (scripts/install-host.sh).
  version="${exe%/node_modules/*}"
  version="${version##*/"$host"-}"
  echo "$host $version: running $filter" >&2
  if env "$var=$exe" cargo test --locked --test hosts -- --ignored "$filter" >"$log" 2>&1; then
    result="pass ($(grep -o '[0-9]* passed' "$log" | tail -1))"
  else
    result="FAIL ($(grep -o '[0-9]* passed; [0-9]* failed' "$log" | tail -1); $log)"
    failed=1
  fi
  rows+=("$host|$version|$result")
done
printf '%-12s %-10s %s\n' host version result
for row in "${rows[@]}"; do
  IFS='|' read -r host version result <<<"$row"
  printf '%-12s %-10s %s\n' "$host" "$version" "$result"
done
exit "$failed"
