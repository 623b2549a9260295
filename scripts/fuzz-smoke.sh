#!/usr/bin/env bash
# CI fuzz smoke test. Always: replay the committed seed corpora
# (fuzz/seeds/<target>/) through the fuzz targets' invariant checks, as a
# plain stable `cargo test` (tests/it/fuzz_replay.rs), no cargo-fuzz needed.
#
# With FUZZ_SECONDS=N and cargo-fuzz installed, also run every target for N
# seconds (one job each, one after the other) from those seeds.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo test --locked --test it fuzz_replay

if [[ -n "${FUZZ_SECONDS:-}" ]]; then
    if ! cargo fuzz --version >/dev/null 2>&1; then
        echo "fuzz-smoke: FUZZ_SECONDS is set but cargo-fuzz is not installed" >&2
        exit 2
    fi
    for target in todo_call markdown_import todo_context; do
        scripts/fuzz-run.sh "$target" "$FUZZ_SECONDS"
    done
fi
