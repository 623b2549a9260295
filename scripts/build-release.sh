#!/usr/bin/env bash
# The release binary as BENCHMARKS.md measures it: `target/release/goalkeeper`,
# linked statically (no dynamic loader, no shared libraries to map and
# relocate at every start, which is much of what `--version` costs).
#
#   scripts/build-release.sh [--pie] [--symbols]
#
# The flags go to the binary's own compilation only (`cargo rustc`), so the
# proc-macro crates, which cannot be built with crt-static, build as usual.
# The frequent commands' functions are placed together
# (scripts/hot-functions.txt). --pie keeps a position-independent
# executable (static-pie: ASLR for the binary's own code, at the price of
# relocating it at start-up); the default is a fixed-address static
# executable. --symbols keeps the symbols and places no functions: the
# binary scripts/hot-functions.sh profiles to make the list.
#
# Installing the same binary: `RUSTFLAGS='-C target-feature=+crt-static'
# cargo install --path . --target x86_64-unknown-linux-gnu` (with --target,
# RUSTFLAGS skip build scripts and proc macros). glibc's static NSS: the
# home directory falls back to getpwuid only when $HOME is unset.
set -euo pipefail
cd "$(dirname "$0")/.."
PIE=0
SYMBOLS=0
for arg in "$@"; do
    case "$arg" in
        --pie) PIE=1 ;;
        --symbols) SYMBOLS=1 ;;
        *) echo "build-release: unknown argument $arg (--pie, --symbols)" >&2; exit 2 ;;
    esac
done
FLAGS=(-C target-feature=+crt-static)
if [[ $PIE -eq 0 ]]; then
    FLAGS+=(-C relocation-model=static)
fi
# The functions the frequent commands run, placed side by side, so that a
# process maps fewer pages of code (scripts/hot-functions.sh says how the
# list is made). The option is lld's, rustc's default linker on
# x86_64-unknown-linux-gnu since Rust 1.90; with another linker the binary
# is built without it.
if [[ $SYMBOLS -eq 1 ]]; then
    FLAGS+=(-C strip=none)
elif rustc -vV | grep -q '^host: x86_64-unknown-linux-gnu$' \
    && [ "$(rustc -vV | sed -n 's/^release: 1\.\([0-9]*\)\..*/\1/p')" -ge 90 ] 2>/dev/null; then
    FLAGS+=(-C "link-arg=-Wl,--symbol-ordering-file=$PWD/scripts/hot-functions.txt"
        -C link-arg=-Wl,--no-warn-symbol-ordering)
fi
cargo rustc --release --locked --quiet --bin goalkeeper -- "${FLAGS[@]}"
file target/release/goalkeeper 2>/dev/null || true
