#!/usr/bin/env python3
"""Run toolshape over the sdists of real Strands tool packages and check what
a user would: that it agrees with the reference, never corrupts a file, and
never turns a package's green tests red. Not part of CI (it needs PyPI, and
minutes).

    python3 benches/real_packages.py [--packages NAME[==VERSION],...] [--pytest PYTHON]
                                     [--work DIR]

For each package: `pip download --no-deps --no-binary :all:` into the work
folder (cached there, never committed), unpacked, then:
  * `benches/reference_agreement.py` on it (toolshape against the Python
    `ast` reference scanner, with and without --no-prefilter);
  * `check --format json` (counts per code);
  * on a copy, `fix` (safe fixes) and, on another, `fix --unsafe-fixes`: no
    panic, every changed file still compiles, a second run changes nothing,
    and `fix --diff` from the original applies with `git apply` to give the
    same tree as `fix`;
  * with --pytest PYTHON (an interpreter with pytest and the packages'
    dependencies), the package's own `tests/` before and after each kind of
    fix: the safe fixes must leave exactly the same failures; for the unsafe
    ones the new failures are listed beside the count of reads `fix` warned
    of (an unsafe fix may change behaviour, but never silently).
Exits 1 when a check fails. The default packages are the ones whose results
the README's notes cite.
"""

import argparse
import collections
import glob
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.environ.get("TOOLSHAPE_BIN", os.path.join(ROOT, "target", "release", "toolshape"))
DEFAULT = [
    "strands-agents-tools==0.8.10",
    "strands-agents==1.62.0",
    "strands-adb==0.19.4",
    "strands-cad==0.5.4",
    "strands-ccxt==0.1.0",
    "strands-ios==0.1.0",
    "strands-nicla==0.1.0",
    "strands-coder==1.4.1",
    "strands-agents-spraay==0.2.0",
]


def run(cmd, cwd=None, check=False):
    out = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if check and out.returncode != 0:
        sys.exit("`%s` failed:\n%s%s" % (" ".join(cmd), out.stdout[-2000:], out.stderr[-2000:]))
    return out


def fetch(spec, work):
    """The unpacked source tree of the sdist `spec`, downloaded once."""
    sdists = os.path.join(work, "sdists")
    os.makedirs(sdists, exist_ok=True)
    name = spec.split("==")[0].replace("-", "_").lower()
    version = spec.split("==")[1] if "==" in spec else None
    pattern = "%s-%s.tar.gz" % (name, version) if version else "%s-*.tar.gz" % name
    found = sorted(glob.glob(os.path.join(sdists, pattern)))
    if not found:
        run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:",
             "-d", sdists, spec], check=True)
        found = sorted(glob.glob(os.path.join(sdists, pattern)))
    if not found:
        sys.exit("no sdist of %s was downloaded" % spec)
    archive = found[-1]
    unpacked = os.path.join(work, "src", os.path.basename(archive)[: -len(".tar.gz")])
    if not os.path.isdir(unpacked):
        with tarfile.open(archive) as tar:
            tar.extractall(unpacked, filter="data")
    tops = [os.path.join(unpacked, d) for d in os.listdir(unpacked)]
    return tops[0] if len(tops) == 1 and os.path.isdir(tops[0]) else unpacked


def digest(tree):
    out = {}
    for dirpath, dirnames, filenames in os.walk(tree):
        dirnames[:] = [d for d in dirnames if d not in (".git", "__pycache__")]
        for name in filenames:
            if name.endswith(".py"):
                path = os.path.join(dirpath, name)
                with open(path, "rb") as f:
                    out[os.path.relpath(path, tree)] = f.read()
    return out


def compiles(source):
    try:
        compile(source, "<fixed>", "exec", dont_inherit=True)
        return True
    except (SyntaxError, ValueError):
        return False


def failures(python, tree):
    """The ids of the tests that fail or error in `tree`, and the count of
    those that pass (None: the suite cannot run at all)."""
    if not os.path.isdir(os.path.join(tree, "tests")):
        return None
    out = run([python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rfE", "tests"], cwd=tree)
    failed = sorted({line.split()[1] for line in out.stdout.splitlines()
                     if line.startswith(("FAILED ", "ERROR ")) and len(line.split()) > 1})
    passed = 0
    for line in out.stdout.splitlines():
        words = line.replace(",", " ").split()
        for i, w in enumerate(words[1:], 1):
            if w == "passed" and words[i - 1].isdigit():
                passed = int(words[i - 1])
    return (failed, passed) if passed or failed else None


def fixed_copy(original, scratch, label, args):
    copy = os.path.join(scratch, label)
    shutil.copytree(original, copy, symlinks=True)
    first = run([BIN, "fix", *args, "."], cwd=copy)
    second_before = digest(copy)
    second = run([BIN, "fix", *args, "."], cwd=copy)
    return copy, first, second, second_before


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--packages", default=",".join(DEFAULT))
    ap.add_argument("--pytest", metavar="PYTHON", help="run each package's tests with this interpreter")
    ap.add_argument("--work", default=os.path.join(ROOT, "target", "real-packages"))
    args = ap.parse_args()
    problems = []
    for spec in [p.strip() for p in args.packages.split(",") if p.strip()]:
        tree = fetch(spec, args.work)
        name = os.path.basename(tree)
        agree = run([sys.executable, os.path.join(ROOT, "benches", "reference_agreement.py"), tree])
        verdict = (agree.stdout.strip().splitlines() or ["?"])[-1]
        if agree.returncode != 0:
            problems.append("%s: toolshape and the reference disagree" % name)
        found = json.loads(run([BIN, "check", "--format", "json", "."], cwd=tree).stdout or "[]")
        counts = dict(sorted(collections.Counter(f["code"] for f in found).items()))
        before = digest(tree)
        line = ["%s: reference %s; %s" % (name, verdict, counts or "no findings")]
        with tempfile.TemporaryDirectory() as scratch:
            suites = {}
            for label, fix_args in (("safe", []), ("unsafe", ["--unsafe-fixes"])):
                copy, first, second, second_before = fixed_copy(tree, scratch, label, fix_args)
                if "panicked" in first.stderr + second.stderr:
                    problems.append("%s (%s): toolshape panicked" % (name, label))
                after = digest(copy)
                changed = [p for p in after if after[p] != before.get(p)]
                broken = [p for p in changed if compiles(before.get(p, b"")) and not compiles(after[p])]
                if broken:
                    problems.append("%s (%s): no longer compiles: %s" % (name, label, broken))
                if digest(copy) != second_before:
                    problems.append("%s (%s): a second fix changed files" % (name, label))
                # `fix --diff` from the original gives the same tree.
                patched = os.path.join(scratch, label + "-patched")
                shutil.copytree(tree, patched, symlinks=True)
                patch = run([BIN, "fix", "--diff", *fix_args, "."], cwd=tree).stdout
                if patch:
                    with open(os.path.join(scratch, label + ".patch"), "w") as f:
                        f.write(patch)
                    applied = run(["git", "apply", os.path.join(scratch, label + ".patch")], cwd=patched)
                    if applied.returncode != 0:
                        problems.append("%s (%s): fix --diff does not apply: %s" % (name, label, applied.stderr[:300]))
                if digest(patched) != second_before:
                    problems.append("%s (%s): fix --diff and fix disagree" % (name, label))
                summary = (first.stdout.strip().splitlines() or [""])[-1]
                line.append("  %s: %d files changed; %s" % (label, len(changed), summary))
                if args.pytest:
                    suites[label] = failures(args.pytest, copy)
            if args.pytest:
                suites["original"] = failures(args.pytest, tree)
                base = suites["original"]
                if base is None:
                    line.append("  tests: cannot run")
                else:
                    line.append("  tests: original %d passed, %d failing" % (base[1], len(base[0])))
                    for label in ("safe", "unsafe"):
                        now = suites[label]
                        new = sorted(set(now[0]) - set(base[0])) if now else ["(the suite no longer runs)"]
                        line.append("  tests after %s fixes: %s" % (label, "same" if not new else "new failures %s" % new))
                        if new and label == "safe":
                            problems.append("%s: safe fixes turned tests red: %s" % (name, new))
        print("\n".join(line), flush=True)
    for p in problems:
        print("PROBLEM: " + p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
