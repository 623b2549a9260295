#!/usr/bin/env python3
"""Prints the last `cargo bench` results as a markdown table: for each
benchmark under target/criterion, the median time per iteration, the
median absolute deviation (spread) and the mean, read from criterion's
estimates.json. Standard library only.

    cargo bench && scripts/criterion-table.py [target/criterion]
"""

import json
import pathlib
import re
import sys


def human(ns):
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if ns >= scale:
            return f"{ns / scale:.3g} {unit}"
    return f"{ns:.3g} ns"


def sort_key(path):
    # Group, then name, then list size as a number.
    return [int(p) if p.isdigit() else p for p in path.parts]


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "target/criterion")
    rows = []
    for estimates in root.glob("**/new/estimates.json"):
        bench = estimates.parent.parent.relative_to(root)
        meta = json.loads((estimates.parent / "benchmark.json").read_text())
        data = json.loads(estimates.read_text())
        rows.append((bench, meta.get("full_id", str(bench)), data))
    if not rows:
        sys.exit(f"no criterion results under {root}; run `cargo bench` first")
    print("| benchmark | median | spread (MAD) | mean |")
    print("| --- | ---: | ---: | ---: |")
    for bench, full_id, data in sorted(rows, key=lambda r: sort_key(r[0])):
        median = data["median"]["point_estimate"]
        mad = data["median_abs_dev"]["point_estimate"]
        mean = data["mean"]["point_estimate"]
        print(f"| {full_id} | {human(median)} | ± {human(mad)} | {human(mean)} |")


if __name__ == "__main__":
    main()
