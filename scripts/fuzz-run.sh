#!/usr/bin/env bash
# Runs one cargo-fuzz target for a while, one job, starting from the
# committed seeds, with the target's dictionary when it has one.
#
#   scripts/fuzz-run.sh TARGET [SECONDS]      (default 600)
#
# Needs cargo-fuzz (`cargo install cargo-fuzz --locked`) and a nightly
# toolchain, or RUSTC_BOOTSTRAP=1 on stable, which this script sets.
# The growing corpus goes to fuzz/corpus/TARGET, crashes to
# fuzz/artifacts/TARGET (both ignored by git).
set -euo pipefail
cd "$(dirname "$0")/.."
target=${1:?usage: scripts/fuzz-run.sh TARGET [SECONDS]}
seconds=${2:-600}
export RUSTC_BOOTSTRAP=1
mkdir -p "fuzz/corpus/$target"
args=(-max_total_time="$seconds" -print_final_stats=1)
if [[ -f "fuzz/dicts/$target.dict" ]]; then
    args+=(-dict="fuzz/dicts/$target.dict")
fi
exec cargo fuzz run "$target" "fuzz/corpus/$target" "fuzz/seeds/$target" -- "${args[@]}"
