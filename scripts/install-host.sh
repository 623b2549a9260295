#!/usr/bin/env bash
# Installs one host CLI from npm into a cache outside the clone, for the
# real-host tests (tests/hosts/): the pinned version, or VERSION when given
# (`latest`: the newest npm has).
# Idempotent: skipped when that version is already there. Prints the path of
# the host's executable. The pinned version's path is where the tests look
# for it (tests/hosts/main.rs, `Host::executable`); another version is run by
# pointing the host's `GOALKEEPER_<HOST>_BIN` at the path printed
# (scripts/hosts-latest.sh does).
#
#   scripts/install-host.sh claude-code|gemini-cli|codex|pi|typescript [VERSION]
#
# `typescript` is the compiler pi itself is built with, for type-checking
# goalkeeper's pi extension (scripts/check-pi-extension.sh).
set -euo pipefail
host="${1:?usage: scripts/install-host.sh claude-code|gemini-cli|codex|pi|typescript [VERSION]}"
case "$host" in
  claude-code) package=@anthropic-ai/claude-code version=2.1.332 bin=claude ;;
  gemini-cli) package=@google/gemini-cli version=0.61.0 bin=gemini ;;
  codex) package=@openai/codex version=0.171.0 bin=codex ;;
  pi) package=@mariozechner/pi-coding-agent version=0.73.1 bin=pi ;;
  typescript) package=typescript version=5.9.3 bin=tsc ;;
  *) echo "unknown host $host (claude-code, gemini-cli, codex, pi or typescript)" >&2; exit 2 ;;
esac
pinned="$version"
version="${2:-$version}"
if [ "$version" = latest ]; then
  version="$(npm view "$package" version)"
fi
# The version names a directory of the cache: nothing but a plain version.
case "$version" in
  "" | [.-]* | *[!0-9A-Za-z.+-]*)
    echo "bad version \"$version\" for $host: give one as npm lists it (npm view $package versions), e.g. $pinned" >&2
    exit 2 ;;
esac
cache="${XDG_CACHE_HOME:-$HOME/.cache}/goalkeeper/npm/$host-$version"
exe="$cache/node_modules/.bin/$bin"
if [ -x "$exe" ] && [ -f "$cache/.complete" ]; then
  echo "$exe"
  exit 0
fi
# Install beside the cache and move it into place, so an interrupted install
# is never mistaken for a complete one.
# A fresh machine has no cache directory yet (nor, maybe, ~/.cache).
mkdir -p "$(dirname "$cache")"
tmp="$(mktemp -d "${cache}.partial.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
# A private prefix: nothing global, no lock file in the clone.
npm install --prefix "$tmp" --no-audit --no-fund --loglevel=error "$package@$version" >&2
touch "$tmp/.complete"
rm -rf "$cache"
mv "$tmp" "$cache"
trap - EXIT
echo "$exe"
