#!/usr/bin/env python3
"""Time `toolshape check` against ruff package by package: the run a
maintainer or a CI bot makes on one tool package. Not a test.

    python3 benches/per_package.py [--runs N] [TREE...]

TREE defaults to the unpacked sdists `benches/real_packages.py` keeps under
`target/real-packages/src/` (run it once to fetch them). Each package is
checked by both tools in turn, `--runs` times (interleaved, so that a
machine whose speed drifts slows both alike); the table gives the medians,
sorted by their ratio, and the sums. ruff runs `--select F401` (a speed
anchor: it still reads and parses every file) without its cache; toolshape
runs with `--no-ignore`, so that both see the same files.
"""

import argparse
import glob
import os
import shutil
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.environ.get("TOOLSHAPE_BIN", os.path.join(ROOT, "target", "release", "toolshape"))


def ruff_binary():
    """The ruff executable itself: a version manager's shim is a script whose
    start-up would be timed as ruff's work (see bench.sh)."""
    found = os.environ.get("RUFF") or shutil.which("ruff")
    if not found:
        sys.exit("per_package.py: needs ruff (pip install ruff)")
    with open(found, "rb") as f:
        if f.read(2) != b"#!":
            return found
    try:
        from ruff.__main__ import find_ruff_bin

        return find_ruff_bin()
    except ImportError:
        print("warning: %s is a script; its start-up is timed too" % found, file=sys.stderr)
        return found


def unpacked_root(unpacked):
    """The package's tree in an unpacked sdist: its one top folder, as
    real_packages.py finds it."""
    tops = [os.path.join(unpacked, d) for d in os.listdir(unpacked)]
    return tops[0] if len(tops) == 1 and os.path.isdir(tops[0]) else unpacked


def timed(cmd):
    start = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("trees", nargs="*")
    args = ap.parse_args()
    trees = args.trees or [unpacked_root(d) for d in sorted(glob.glob(os.path.join(ROOT, "target", "real-packages", "src", "*")))]
    if not trees:
        sys.exit("per_package.py: no package trees (run benches/real_packages.py first, or name them)")
    if not os.access(BIN, os.X_OK):
        sys.exit("per_package.py: build toolshape first (cargo build --release)")
    ruff = ruff_binary()
    rows = []
    for tree in trees:
        ours, theirs = [], []
        for _ in range(args.runs):
            ours.append(timed([BIN, "check", "--no-ignore", tree]))
            theirs.append(timed([ruff, "check", "--no-cache", "--isolated", "--select", "F401", "--exit-zero", tree]))
        rows.append((statistics.median(ours), statistics.median(theirs), os.path.basename(tree.rstrip("/"))))
    rows.sort(key=lambda r: r[0] / r[1], reverse=True)
    print("%10s %10s %7s  %s" % ("toolshape", "ruff", "ratio", "package"))
    for ours, theirs, name in rows:
        print("%8.1f ms %7.1f ms %6.2fx  %s" % (ours * 1e3, theirs * 1e3, ours / theirs, name))
    total_ours, total_theirs = sum(r[0] for r in rows), sum(r[1] for r in rows)
    print("%8.0f ms %7.0f ms %6.2fx  all %d packages, one by one (medians of %d)"
          % (total_ours * 1e3, total_theirs * 1e3, total_ours / total_theirs, len(rows), args.runs))


if __name__ == "__main__":
    main()
