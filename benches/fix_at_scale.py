#!/usr/bin/env python3
"""Run `toolshape fix --unsafe-fixes` over copies of real and generated trees
and verify it never corrupts anything. Not part of CI (minutes, not seconds).

    python3 benches/fix_at_scale.py [--trees sparse,dense,generated] [--dicts 20000]

For each tree: copy it to a scratch folder, run `check --format json
--no-ignore` on the copy, then `fix --unsafe-fixes --no-ignore` (timed, peak
memory via GNU time when available), then verify:
  * no panic (exit status 0 or 1, nothing on stderr that mentions a panic);
  * every changed file still compiles (`compile()` of CPython, like
    `python3 -m py_compile`), unless it did not compile before either;
  * every file without findings is byte-identical to the original;
  * a second `fix --unsafe-fixes` changes nothing.
Trees: sparse = this interpreter's stdlib + site-packages; dense = the
strands sdists that benches/bench.sh unpacks into target/bench-corpus/dense;
generated = tests/reference/gen_corpus.py with --dicts N.
"""

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.environ.get("TOOLSHAPE_BIN", os.path.join(ROOT, "target", "release", "toolshape"))


def digest_tree(root):
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in filenames:
            if name.endswith((".py", ".pyi")):
                path = os.path.join(dirpath, name)
                if os.path.islink(path) or not os.path.isfile(path):
                    continue
                with open(path, "rb") as f:
                    out[os.path.relpath(path, root)] = hashlib.sha256(f.read()).hexdigest()
    return out


def compiles(path):
    try:
        with open(path, "rb") as f:
            compile(f.read(), path, "exec", dont_inherit=True)
        return True
    except (SyntaxError, ValueError):
        return False


def run_fix(tree):
    cmd = [BIN, "fix", "--unsafe-fixes", "--no-ignore", tree]
    timed = ["/usr/bin/time", "-f", "%M"] + cmd if os.path.exists("/usr/bin/time") else cmd
    start = time.perf_counter()
    proc = subprocess.run(timed, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    stderr = proc.stderr
    peak_mb = None
    if timed is not cmd:
        lines = stderr.rstrip("\n").split("\n")
        try:
            peak_mb = int(lines[-1]) / 1024
            stderr = "\n".join(lines[:-1])
        except ValueError:
            pass
    return proc, stderr, seconds, peak_mb


def prepare(name, scratch, dicts):
    dest = os.path.join(scratch, name)
    if name == "sparse":
        paths = sysconfig.get_paths()
        shutil.copytree(paths["stdlib"], dest, symlinks=True, ignore=shutil.ignore_patterns("__pycache__"))
        purelib = paths["purelib"]
        if not os.path.realpath(purelib).startswith(os.path.realpath(paths["stdlib"])):
            shutil.copytree(purelib, os.path.join(dest, "site-packages"), symlinks=True)
    elif name == "dense":
        src = os.path.join(ROOT, "target", "bench-corpus", "dense")
        if not os.path.isdir(src):
            sys.exit("dense corpus missing: run benches/bench.sh --only dense first")
        shutil.copytree(src, dest, symlinks=True)
    else:
        subprocess.run([sys.executable, os.path.join(ROOT, "tests", "reference", "gen_corpus.py"), dest,
                        "--seed", "4242", "--dicts", str(dicts)], check=True, capture_output=True)
        os.remove(os.path.join(dest, "manifest.json"))
    return dest


def verify(name, scratch, dicts):
    tree = prepare(name, scratch, dicts)
    pristine = os.path.join(scratch, name + ".orig")
    shutil.copytree(tree, pristine, symlinks=True)
    before = digest_tree(tree)
    check = subprocess.run([BIN, "check", "--format", "json", "--no-ignore", tree], capture_output=True, text=True)
    findings = json.loads(check.stdout)
    with_findings = {os.path.relpath(f["path"], tree) for f in findings}
    proc, stderr, seconds, peak_mb = run_fix(tree)
    problems = []
    if proc.returncode not in (0, 1) and "panicked" in stderr:
        problems.append(f"fix panicked: {stderr[-2000:]}")
    if "panicked" in stderr:
        problems.append("a panic was reported on stderr")
    bugs = [l for l in stderr.splitlines() if "toolshape bug" in l]
    if bugs:
        problems.append(f"{len(bugs)} fixes dropped by the re-parse guard, e.g. {bugs[0]}")
    after = digest_tree(tree)
    changed = sorted(p for p in after if before.get(p) != after[p])
    not_compiling = [p for p in changed if not compiles(os.path.join(tree, p)) and compiles(os.path.join(pristine, p))]
    touched_clean = [p for p in changed if p not in with_findings]
    proc2, stderr2, _, _ = run_fix(tree)
    again = digest_tree(tree)
    second_changes = sorted(p for p in again if after.get(p) != again[p])
    summary = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else ""
    result = {
        "tree": name,
        "files": len(before),
        "findings": len(findings),
        "files_with_findings": len(with_findings),
        "changed_files": len(changed),
        "fix_seconds": round(seconds, 2),
        "peak_rss_mb": round(peak_mb, 1) if peak_mb else None,
        "fix_exit": proc.returncode,
        "summary": summary,
        "errors_reported": [l for l in stderr.splitlines() if l.startswith("error:")][:5],
        "changed_but_no_longer_compiling": not_compiling,
        "changed_without_findings": touched_clean,
        "second_run_changed": second_changes,
        "problems": problems,
    }
    ok = not (not_compiling or touched_clean or second_changes or problems)
    result["ok"] = ok
    return result


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--trees", default="sparse,dense,generated")
    ap.add_argument("--dicts", type=int, default=20000)
    args = ap.parse_args()
    if not os.path.exists(BIN):
        subprocess.run(["cargo", "build", "--release"], cwd=ROOT, check=True)
    all_ok = True
    with tempfile.TemporaryDirectory(prefix="toolshape-scale-") as scratch:
        for name in args.trees.split(","):
            result = verify(name, scratch, args.dicts)
            all_ok &= result["ok"]
            print(json.dumps(result, indent=1), flush=True)
    sys.exit(0 if all_ok else 1)


if __name__ == "__main__":
    main()
