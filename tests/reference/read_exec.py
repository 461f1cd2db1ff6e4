#!/usr/bin/env python3
"""Execution test of the read rewrites of `toolshape fix --unsafe-fixes`.

Usage:
    python3 tests/reference/read_exec.py --toolshape BIN --seed S --programs N --out DIR
                                         [--jobs J] [--exclude-kinds K,K] [--strict-blocks]
                                         [--max-shown M]

Generates N programs with gen_read_exec.py (next to this file) under DIR/orig,
and for each one:

  1. runs its `main.py` (the logs before);
  2. runs `toolshape check --format json .` in it, to learn every read of a
     moved key with its position and whether `fix` rewrites it (`rewritable`);
  3. copies it to DIR/fixed/prog_NNNN, runs `toolshape fix --unsafe-fixes .`
     there, checks that every changed .py file compiles, and that a second
     `fix --unsafe-fixes .` changes nothing (idempotent);
  4. runs `main.py` in the copy (the logs after) and compares: every log
     entry whose line (the line holding `LOG.append(("Lnn", "v"`) holds a
     read that check marked `rewritable: true` must have the same outcomes
     (the same values, or the same exception type) in the same order before
     and after.  Entries on lines whose reads are all not rewritable are
     ignored (counted), and so are entries on lines holding no read check
     knows of (counted apart).  A consumer case that crashes differently
     before and after is a failure too.

Reads of form `block` (`r["content"][0]`), which are never rewritten but are
documented to survive a fix, are compared as well and reported apart; they
fail the run only with --strict-blocks.  Lines check marks rewritable that the
fix leaves unchanged (or lines it changes that are not marked) are reported
as inconsistencies (not failures).

Exits 0 when every rewritable read behaves the same, else 1, printing each
mismatch with the program, file, line, the read's source line before and
after, both outcomes and the producer the read's receiver calls (its source
before and after the fix).  Ends with a summary line.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen_read_exec  # noqa: E402

LABEL_RE = re.compile(r'LOG\.append\(\("(L\d+)", "v", ')
ENV = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", PYTHONHASHSEED="0")
for _v in ("NO_COLOR", "FORCE_COLOR", "CLICOLOR_FORCE"):
    ENV.pop(_v, None)


def norm(path: str) -> str:
    return os.path.normpath(path).replace("\\", "/")


def py_files(root: str) -> dict[str, str]:
    out = {}
    for d, _, files in os.walk(root):
        for f in files:
            if f.endswith(".py"):
                p = os.path.join(d, f)
                with open(p, encoding="utf-8") as fh:
                    out[norm(os.path.relpath(p, root))] = fh.read()
    return out


def label_lines(text: str) -> dict[str, int]:
    out = {}
    for i, line in enumerate(text.splitlines(), 1):
        m = LABEL_RE.search(line)
        if m:
            assert m.group(1) not in out, f"label {m.group(1)} twice"
            out[m.group(1)] = i
    return out


def run_main(root: str, timeout=60):
    p = subprocess.run([sys.executable, "-S", "-B", "main.py"], cwd=root, capture_output=True, text=True,
                       env=ENV, timeout=timeout)
    if p.returncode != 0:
        return None, p.stderr
    try:
        return json.loads(p.stdout), p.stderr
    except ValueError as e:
        return None, f"stdout is not JSON ({e}): {p.stdout[:2000]}"


def toolshape(binary: str, args: list[str], cwd: str):
    return subprocess.run([binary, *args], cwd=cwd, capture_output=True, text=True, env=ENV, timeout=120)


def function_source(text: str, name: str) -> str | None:
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return None
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            start = min([node.lineno] + [d.lineno for d in node.decorator_list])
            return "\n".join(text.splitlines()[start - 1:node.end_lineno])
    return None


class Result:
    def __init__(self, name):
        self.name = name
        self.problems: list[str] = []      # failures
        self.mismatches: list[dict] = []
        self.block_changes: list[dict] = []
        self.notes: list[str] = []         # inconsistencies (not failures)
        self.counts = Counter()


def check_program(binary: str, orig: str, fixed_root: str, unsafe_config: str, strict_blocks: bool,
                  sabotage: bool = False) -> Result:
    name = os.path.basename(orig)
    res = Result(name)
    with open(orig + ".manifest.json", encoding="utf-8") as f:
        manifest = json.load(f)
    reads_info = {r["label"]: r for r in manifest["reads"]}

    before, err = run_main(orig)
    if before is None:
        res.problems.append(f"{name}: main.py fails before the fix (a generator bug):\n{err[-3000:]}")
        return res

    chk = toolshape(binary, ["check", "--config", unsafe_config, "--format", "json", "."], orig)
    if chk.returncode not in (0, 1):
        res.problems.append(f"{name}: `toolshape check --format json .` exited {chk.returncode}:\n{chk.stderr[-3000:]}")
        return res
    try:
        findings = json.loads(chk.stdout)
    except ValueError as e:
        res.problems.append(f"{name}: check printed no JSON ({e}): {chk.stderr[-2000:]}")
        return res
    # every read, deduplicated by position, with its flags
    reads: dict[tuple, dict] = {}
    for f in findings:
        for r in f.get("reads", []):
            pos = (norm(r["path"]), r["line"], r["column"], r["end_line"], r["end_column"], r["form"], r["key"])
            if pos in reads and reads[pos]["rewritable"] != r["rewritable"]:
                res.notes.append(f"{name}: the read at {pos} is rewritable for one finding and not for another")
                reads[pos]["rewritable"] = reads[pos]["rewritable"] or r["rewritable"]
            else:
                reads.setdefault(pos, dict(r))
    by_line: dict[tuple, list[dict]] = defaultdict(list)
    for pos, r in reads.items():
        by_line[(pos[0], pos[1])].append(r)

    fixed = os.path.join(fixed_root, name)
    if os.path.exists(fixed):
        shutil.rmtree(fixed)
    shutil.copytree(orig, fixed)
    orig_files = py_files(orig)
    fx = toolshape(binary, ["fix", "--unsafe-fixes", "."], fixed)
    if fx.returncode not in (0, 1):
        res.problems.append(f"{name}: `toolshape fix --unsafe-fixes .` exited {fx.returncode}:\n"
                            f"{fx.stdout[-2000:]}\n{fx.stderr[-3000:]}")
        return res
    if "bug" in fx.stderr.lower():
        res.problems.append(f"{name}: fix reported a bug:\n{fx.stderr[-3000:]}")
    fixed_files = py_files(fixed)
    for rel, text in sorted(fixed_files.items()):
        if orig_files.get(rel) != text:
            res.counts["files changed"] += 1
            try:
                compile(text, rel, "exec")
            except SyntaxError as e:
                res.problems.append(f"{name}: {rel} does not compile after the fix: {e}")
    fx2 = toolshape(binary, ["fix", "--unsafe-fixes", "."], fixed)
    again = py_files(fixed)
    if fx2.returncode not in (0, 1) or again != fixed_files:
        changed = sorted(rel for rel in set(again) | set(fixed_files) if again.get(rel) != fixed_files.get(rel))
        res.problems.append(f"{name}: a second `fix --unsafe-fixes` is not a no-op (exit {fx2.returncode}, "
                            f"changed {changed}):\n{fx2.stdout[-1500:]}{fx2.stderr[-1500:]}")
    if res.problems:
        return res
    if sabotage:
        for rel, text in fixed_files.items():
            if rel.startswith("tests/test_"):
                wrong = re.sub(r'\["content"\]\[-?\d+\]\["json"\]', '["content"][0]', text)
                if wrong != text:
                    fixed_files[rel] = wrong
                    with open(os.path.join(fixed, rel), "w", encoding="utf-8") as fh:
                        fh.write(wrong)

    after, err = run_main(fixed)
    if after is None:
        res.problems.append(f"{name}: main.py fails after the fix:\n{err[-3000:]}")
        return res

    for rel in sorted(before):
        b_log, a_log = before[rel], after.get(rel, [])
        b_lines = label_lines(orig_files[rel])
        a_lines = label_lines(fixed_files[rel])
        src_b = orig_files[rel].splitlines()
        src_a = fixed_files[rel].splitlines()
        b_crash = [e for e in b_log if e[0] == "CRASH"]
        a_crash = [e for e in a_log if e[0] == "CRASH"]
        if b_crash != a_crash:
            res.problems.append(f"{name}: {rel}: the consumer cases crash differently: before {b_crash}, after {a_crash}")
        b_out: dict[str, list] = defaultdict(list)
        a_out: dict[str, list] = defaultdict(list)
        for e in b_log:
            if e[0] != "CRASH":
                b_out[e[0]].append(e[1:])
        for e in a_log:
            if e[0] != "CRASH":
                a_out[e[0]].append(e[1:])
        for label in sorted(set(b_out) | set(a_out), key=lambda s: int(s[1:])):
            line = b_lines.get(label)
            outs_b, outs_a = b_out.get(label, []), a_out.get(label, [])
            n = len(outs_b)
            res.counts["reads executed"] += n
            on_line = by_line.get((rel, line), [])
            keyed = [r for r in on_line if r["form"] != "block"]
            blocks = [r for r in on_line if r["form"] == "block"]
            rewritable = any(r["rewritable"] for r in on_line)
            a_line = a_lines.get(label)
            text_b = src_b[line - 1].strip() if line else "?"
            text_a = src_a[a_line - 1].strip() if a_line else "?"
            info = reads_info.get(label, {})
            if on_line:
                changed = text_b != text_a
                if rewritable and not changed:
                    res.notes.append(f"{name}: {rel}:{line}: marked rewritable but not rewritten: {text_b}")
                if not rewritable and changed:
                    res.notes.append(f"{name}: {rel}:{line}: rewritten but not marked rewritable: "
                                     f"{text_b}  ->  {text_a}")
            entry = {
                "program": name, "file": rel, "line": line, "label": label, "before_src": text_b,
                "after_src": text_a, "before": outs_b, "after": outs_a, "reads": on_line, "info": info,
            }
            changed = bool(on_line) and text_b != text_a
            if not rewritable and changed and keyed:
                # `fix` rewrote it though check did not say so: a rewrite
                # claims exactness too (README: "only when the rewrite is exact")
                res.counts["rewritten reads not marked, compared"] += n
                if outs_b != outs_a:
                    entry["unmarked"] = True
                    res.mismatches.append(entry)
            elif rewritable:
                res.counts["rewritable reads compared"] += n
                res.counts["rewritable lines"] += 1
                res.counts[f"rewritable form {info.get('form', '?')}"] += n
                if outs_b != outs_a:
                    res.mismatches.append(entry)
            elif keyed:
                res.counts["reads ignored (not rewritable)"] += n
            elif blocks:
                res.counts["block reads compared"] += n
                if outs_b != outs_a:
                    res.block_changes.append(entry)
            else:
                res.counts["reads ignored (no read of a moved key listed)"] += n
    res.manifest = manifest
    res.orig_files = orig_files
    res.fixed_files = fixed_files
    if strict_blocks:
        res.mismatches.extend(res.block_changes)
    return res


def show_entry(res: Result, e: dict) -> str:
    out = [f"  {e['program']} {e['file']}:{e['line']} ({e['label']})"
           + (" [rewritten by fix, though check says not rewritable]" if e.get("unmarked") else ""),
           f"    before: {e['before_src']}",
           f"    after:  {e['after_src']}",
           f"    outcomes before: {e['before']}",
           f"    outcomes after:  {e['after']}"]
    for r in e["reads"]:
        out.append(f"    check: form {r['form']} key {r['key']!r} col {r['column']}-{r['end_column']} "
                   f"rewritable {r['rewritable']} possible {r['possible']}")
    info = e["info"]
    if info:
        out.append(f"    receiver: {info.get('receiver')} of {info.get('producer')} "
                   f"(module {info.get('module')}, kind {info.get('kind')}, reaching {info.get('reaches')}, "
                   f"call {info.get('call')!r}, "
                   f"how {info.get('how')})")
        prod = info.get("producer")
        mod = info.get("module")
        rel = f"app/{mod}.py" if mod else None
        if rel and rel in res.orig_files:
            b = function_source(res.orig_files[rel], prod)
            a = function_source(res.fixed_files.get(rel, ""), prod)
            if b:
                out.append("    producer before:\n" + "\n".join("      " + s for s in b.splitlines()))
            if a and a != b:
                out.append("    producer after:\n" + "\n".join("      " + s for s in a.splitlines()))
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--toolshape", required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--programs", type=int, default=100)
    ap.add_argument("--out", required=True)
    ap.add_argument("--jobs", type=int, default=max(1, min(8, (os.cpu_count() or 1) + 1)))
    ap.add_argument("--exclude-kinds", default="")
    ap.add_argument("--strict-blocks", action="store_true")
    ap.add_argument("--sabotage", action="store_true",
                    help="a negative control: after the fix, point every rewritten read at the first content "
                         "block instead; the run must then find mismatches")
    ap.add_argument("--max-shown", type=int, default=40)
    ap.add_argument("--min-rewritable", type=int, default=0,
                    help="fail when fewer rewritable reads are compared (the test would be too weak)")
    a = ap.parse_args(argv)
    started = time.time()
    binary = os.path.abspath(a.toolshape)
    out = os.path.abspath(a.out)
    orig_root = os.path.join(out, "orig")
    fixed_root = os.path.join(out, "fixed")
    os.makedirs(fixed_root, exist_ok=True)
    # `check` says of each read whether `fix` rewrites it in the mode the
    # configuration selects: a configuration with `unsafe-fixes = true`
    # makes its `rewritable` the one of `fix --unsafe-fixes`.
    unsafe_config = os.path.join(out, "unsafe-fixes.toml")
    with open(unsafe_config, "w", encoding="utf-8") as f:
        f.write("unsafe-fixes = true\n")
    exclude = [k for k in a.exclude_kinds.split(",") if k]
    dirs = gen_read_exec.generate(orig_root, a.seed, a.programs, exclude)

    with ThreadPoolExecutor(max_workers=a.jobs) as ex:
        results = list(ex.map(lambda d: check_program(binary, d, fixed_root, unsafe_config, a.strict_blocks, a.sabotage), dirs))

    totals = Counter()
    problems, mismatches, blocks, notes = [], [], [], []
    for r in results:
        totals.update(r.counts)
        problems.extend(r.problems)
        mismatches.extend((r, m) for m in r.mismatches)
        blocks.extend((r, m) for m in r.block_changes)
        notes.extend(r.notes)

    if problems:
        print(f"{len(problems)} problems:")
        for p in problems:
            print("  " + p)
    if mismatches:
        def group(m):
            i = m["info"]
            return (i.get("kind"), "+".join(i.get("reaches", [])))
        groups = Counter(group(m) for _, m in mismatches)
        forms = defaultdict(set)
        for _, m in mismatches:
            forms[group(m)].add(f"{m['info'].get('form')}/{m['info'].get('receiver')}")
        print(f"\n{len(mismatches)} MISMATCHES (lines whose read is marked rewritable, or was rewritten, and "
              f"whose outcomes differ), by the receiver's producer kind (and the kinds of results it may return):")
        for g, c in groups.most_common():
            print(f"  {c:4d}  {g[0]} (returning {g[1]}): forms {', '.join(sorted(forms[g]))}")
        # the first of each group first, then the others, up to --max-shown
        shown, seen = [], set()
        for rm in mismatches:
            if group(rm[1]) not in seen:
                seen.add(group(rm[1]))
                shown.append(rm)
        shown += [rm for rm in mismatches if rm not in shown]
        for r, m in shown[: a.max_shown]:
            print(show_entry(r, m))
        if len(mismatches) > a.max_shown:
            print(f"  ... {len(mismatches) - a.max_shown} more")
    if notes:
        print(f"\n{len(notes)} inconsistencies between check and fix (not failures):")
        for n in notes[: a.max_shown]:
            print("  " + n)
        if len(notes) > a.max_shown:
            print(f"  ... {len(notes) - a.max_shown} more")
    if blocks and not a.strict_blocks:
        print(f"\n{len(blocks)} block reads (`r[\"content\"][i]`, never rewritten) yield something else "
              f"after the fix (not failures without --strict-blocks), e.g.:")
        for r, m in blocks[: min(3, a.max_shown)]:
            print(show_entry(r, m))
    forms = {k[len("rewritable form "):]: v for k, v in sorted(totals.items()) if k.startswith("rewritable form ")}
    print(f"\nread execution: seed {a.seed}, {len(dirs)} programs, {totals['files changed']} files changed by the fix, "
          f"{totals['reads executed']} reads executed, {totals['rewritable reads compared']} rewritable reads compared "
          f"(executions of {totals['rewritable lines']} read lines marked rewritable) "
          f"(by form {forms}), {totals['rewritten reads not marked, compared']} reads rewritten though not marked "
          f"rewritable (compared too), {totals['reads ignored (not rewritable)']} reads ignored (not rewritable), "
          f"{totals['reads ignored (no read of a moved key listed)']} reads ignored (no moved key read listed), "
          f"{totals['block reads compared']} block reads compared ({len(blocks)} changed), "
          f"{len(mismatches)} mismatches ({sum(len(m['before']) for _, m in mismatches)} executions), {len(problems)} problems, {len(notes)} inconsistencies "
          f"({time.time() - started:.1f}s)")
    weak = totals["rewritable reads compared"] < a.min_rewritable
    if weak:
        print(f"too few rewritable reads compared ({totals['rewritable reads compared']} < {a.min_rewritable}): "
              "the test is too weak")
    return 1 if (problems or mismatches or weak) else 0


if __name__ == "__main__":
    sys.exit(main())
