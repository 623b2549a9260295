#!/usr/bin/env bash
# goalkeeper as each host's users install things, with the binary inside:
# writes into OUT (a new or empty directory) the Claude Code and Codex
# plugin marketplace, the Gemini CLI extension, the pi package and the npm
# packages for this platform (`goalkeeper package`, which writes every file
# from the code `goalkeeper install` runs), then packs the npm packages
# into tarballs in OUT/npm, as a registry would serve them (when npm is
# there).
#
#   scripts/package.sh [--binary PATH] OUT
#
# Without --binary it builds the release binary (scripts/build-release.sh:
# static, fat LTO, several minutes) and packages that. --binary packages
# one already built; CI packages the debug build it tests with, stripped of
# its debug information (what a plugin carries need not be fast to start,
# only to be the code under test).
set -euo pipefail
usage="usage: scripts/package.sh [--binary PATH] OUT"
binary=""
out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --binary) binary="${2:?$usage}"; shift 2 ;;
    -*) echo "package.sh: unknown option $1; $usage" >&2; exit 2 ;;
    *) [ -z "$out" ] || { echo "package.sh: one OUT only; $usage" >&2; exit 2; }; out="$1"; shift ;;
  esac
done
[ -n "$out" ] || { echo "$usage" >&2; exit 2; }
# Both paths as the caller gave them, before moving to the checkout.
mkdir -p "$out"
out="$(cd "$out" && pwd)"
if [ -n "$binary" ]; then
  [ -x "$binary" ] || { echo "package.sh: $binary is not an executable" >&2; exit 2; }
  binary="$(cd "$(dirname "$binary")" && pwd)/$(basename "$binary")"
fi
cd "$(dirname "$0")/.."
if [ -z "$binary" ]; then
  scripts/build-release.sh >/dev/null
  binary="$PWD/target/release/goalkeeper"
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cp "$binary" "$work/goalkeeper"
# A release build is stripped already; a debug build's information is
# nine tenths of its size and of no use to a host.
if command -v strip >/dev/null; then
  strip "$work/goalkeeper"
fi
"$work/goalkeeper" package "$out"
if command -v npm >/dev/null; then
  for package in "$out"/npm/*/; do
    (cd "$package" && npm pack --silent --pack-destination "$out/npm" >/dev/null)
  done
  ls "$out"/npm/*.tgz
fi
