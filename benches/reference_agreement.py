#!/usr/bin/env python3
"""Check `toolshape check` against the Python ast reference scanner on a real
tree (default: this interpreter's stdlib + site-packages). Not part of CI.

    python3 benches/reference_agreement.py [PATH ...]

Runs `toolshape check --format json --no-ignore` (with and without
--no-prefilter) and `tests/reference/scan.py` over the same paths, drops
files Python cannot parse, and compares the (path, dict line, dict column,
code, key) multisets. Prints the counts; exits 1 on any disagreement or if
toolshape panicked.
"""

import collections
import json
import os
import subprocess
import sys
import sysconfig
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.environ.get("TOOLSHAPE_BIN", os.path.join(ROOT, "target", "release", "toolshape"))


def toolshape(paths, extra):
    proc = subprocess.run([BIN, "check", "--format", "json", "--no-ignore", *extra, *paths], capture_output=True, text=True)
    if "panicked" in proc.stderr:
        sys.exit(f"toolshape panicked:\n{proc.stderr[-3000:]}")
    findings = json.loads(proc.stdout)
    return collections.Counter((f["path"], f["dict"]["line"], f["dict"]["column"], f["code"], f["key"]) for f in findings), proc


def main():
    paths = sys.argv[1:] or [sysconfig.get_paths()["stdlib"]]
    if not os.path.exists(BIN):
        subprocess.run(["cargo", "build", "--release"], cwd=ROOT, check=True)
    with tempfile.NamedTemporaryFile("r", suffix=".txt") as skipped:
        ref = subprocess.run([sys.executable, os.path.join(ROOT, "tests", "reference", "scan.py"), "--list-skipped", skipped.name, *paths],
                             capture_output=True, text=True, check=True)
        skipped_files = {line.strip() for line in open(skipped.name) if line.strip()}
    reference = collections.Counter((f["path"], f["dict_line"], f["dict_column"], f["code"], f["key"]) for f in json.loads(ref.stdout))
    ok = True
    for extra in ([], ["--no-prefilter"]):
        ours, proc = toolshape(paths, extra)
        ours = collections.Counter({k: v for k, v in ours.items() if k[0] not in skipped_files})
        errors = [l for l in proc.stderr.splitlines() if l.startswith("error:")]
        only_ours, only_ref = ours - reference, reference - ours
        label = " ".join(extra) or "default"
        print(f"[{label}] toolshape {sum(ours.values())} findings, reference {sum(reference.values())}; "
              f"{len(skipped_files)} files Python cannot parse; {len(errors)} files toolshape could not read")
        for e in errors[:10]:
            print("   ", e)
        if only_ours or only_ref:
            ok = False
            for k in list(only_ours)[:10]:
                print("  only toolshape:", k)
            for k in list(only_ref)[:10]:
                print("  only reference:", k)
    print("AGREE" if ok else "DISAGREE")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
