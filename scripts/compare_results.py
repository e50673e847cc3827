#!/usr/bin/env python3
"""Compare two results folders' trace.csv and summary.csv: same runs, same rounds, and every
metric within a relative tolerance (time columns and n-vectors ignored).

    scripts/compare_results.py OLD_DIR NEW_DIR [--rtol=1e-9] [--atol=1e-14]

Values agree when |a − b| ≤ rtol·max(|a|, |b|) + atol. The absolute floor is for metrics that are
differences of O(1) quantities (sv_err = ‖σ − σ*‖/‖σ*‖): a change of memory layout moves them by
~1e-16 absolutely, which near convergence is 1e-8 of a value of 1e-8.
Exit status 1 and one line per difference when they disagree. Standard library only."""
import csv
import math
import sys

SKIP = {"time_s", "vectors", "run_id", "experiment", "profile"}


def rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def key(r, extra):
    return tuple(r.get(k, "") for k in ("method", "params", "seed", "point") + extra)


def close(a, b, rtol, atol):
    if a == b:
        return True
    try:
        x, y = float(a), float(b)
    except ValueError:
        return False
    if math.isnan(x) and math.isnan(y):
        return True
    return abs(x - y) <= rtol * max(abs(x), abs(y)) + atol


def compare(old, new, extra, rtol, atol, problems, name):
    o = {key(r, extra): r for r in rows(old)}
    n = {key(r, extra): r for r in rows(new)}
    for k in sorted(set(o) ^ set(n)):
        problems.append(f"{name}: row {k} only in {'old' if k in o else 'new'}")
    for k in sorted(set(o) & set(n)):
        for col in o[k]:
            if col in SKIP or col.startswith("paper_") or col not in n[k]:
                continue
            if not close(o[k][col], n[k][col], rtol, atol):
                problems.append(f"{name} {k} {col}: {o[k][col]} vs {n[k][col]}")


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    rtol, atol = 1e-9, 1e-14
    for a in sys.argv[1:]:
        if a.startswith("--rtol="):
            rtol = float(a.split("=", 1)[1])
        if a.startswith("--atol="):
            atol = float(a.split("=", 1)[1])
    old, new = args
    problems = []
    compare(f"{old}/summary.csv", f"{new}/summary.csv", (), rtol, atol, problems, "summary")
    compare(f"{old}/trace.csv", f"{new}/trace.csv", ("round",), rtol, atol, problems, "trace")
    for p in problems[:40]:
        print(p)
    if problems:
        print(f"{len(problems)} difference(s)")
        sys.exit(1)
    print(f"same runs, rounds and metrics to {rtol:g} relative (+{atol:g})")


main()
