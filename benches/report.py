#!/usr/bin/env python3
"""Helpers for benches/bench.sh: corpus counting and the results table.

    report.py count ROOT...                 print files=N, bytes=N, gitignores=N for the tree
    report.py pyroots ROOT...               the roots one level down, for the reference scan
    report.py findings FILE                 print how many findings a JSON output holds
    report.py table RESULTS_DIR [--markdown] [--only TREE]

The table reads RESULTS_DIR/<tree>.json (hyperfine --export-json) and
RESULTS_DIR/<tree>.meta (key=value lines written by bench.sh).
"""

import json
import os
import sys

TREES = ("sparse", "dense")
PY_SUFFIXES = (".py", ".pyi")

# Ratio checks: (tree, label, numerator, denominator, op, target).
# "op" tells which way the target goes; the ratio is median(num)/median(den).
TARGETS = [
    ("sparse", "toolshape / ruff", "toolshape", "ruff", "<=", 0.15),
    ("sparse", "toolshape / rg", "toolshape", "rg", "<=", 2.0),
    ("sparse", "python-ast / toolshape", "python-ast", "toolshape", ">=", 20.0),
    ("dense", "toolshape / ruff", "toolshape", "ruff", "<=", 0.5),
    ("dense", "toolshape / rg", "toolshape", "rg", None, None),
    ("dense", "python-ast / toolshape", "python-ast", "toolshape", ">=", 20.0),
    ("sparse", "fix --diff / check", "toolshape-fix", "toolshape", "<=", 2.0),
    ("dense", "fix --diff / check", "toolshape-fix", "toolshape", "<=", 2.0),
]
RSS_TARGET_MB = 100.0


# ---------------------------------------------------------------- count
# toolshape's default walk (src/discovery.rs): folders with these names, hidden
# folders and virtual environments (a pyvenv.cfg inside) are not entered below
# a root; a root itself is always walked. Keep in step with SKIPPED_DIRS there.
SKIPPED_DIRS = frozenset(
    (
        "__pycache__",
        "node_modules",
        ".tox",
        ".nox",
        "build",
        "dist",
        "site-packages",
        ".git",
        "venv",
    )
)


def skipped_dir(parent, name):
    return (
        name in SKIPPED_DIRS
        or name.startswith(".")
        or os.path.isfile(os.path.join(parent, name, "pyvenv.cfg"))
    )


def walk(roots):
    """Python files under ROOTS as toolshape's default walk finds them (less
    .gitignore rules, which the bench corpora do not need), each file once."""
    seen = set()
    for root in roots:
        if os.path.isfile(root):
            candidates = [root]
        else:
            candidates = _walk_dir(root)
        for path in candidates:
            real = os.path.realpath(path)
            if real not in seen:
                seen.add(real)
                yield path


def _walk_dir(root):
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not skipped_dir(dirpath, d))
        for name in sorted(filenames):
            if name.endswith(PY_SUFFIXES):
                yield os.path.join(dirpath, name)


def cmd_count(roots):
    files = 0
    size = 0
    for path in walk(roots):
        files += 1
        try:
            size += os.path.getsize(path)
        except OSError:
            pass
    gitignores = 0
    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = [d for d in dirnames if not skipped_dir(dirpath, d)]
            gitignores += ".gitignore" in filenames
    print(f"files={files}")
    print(f"bytes={size}")
    print(f"gitignores={gitignores}")


def cmd_pyroots(roots):
    """The roots split one level down, leaving out what toolshape's walk skips
    there, one per line: the reference scanner does not skip site-packages
    (or build, dist, venv...), so given the stdlib and the site-packages
    inside it, it would scan site-packages twice."""
    out = []
    for root in roots:
        if not os.path.isdir(root):
            out.append(root)
            continue
        for name in sorted(os.listdir(root)):
            path = os.path.join(root, name)
            if os.path.isdir(path):
                if not skipped_dir(root, name):
                    out.append(path)
            elif name.endswith(PY_SUFFIXES):
                out.append(path)
    print("\n".join(out))


# ---------------------------------------------------------------- findings
def count_findings(data):
    if isinstance(data, list):
        return len(data)
    if isinstance(data, dict):
        for key in ("findings", "diagnostics", "results", "violations"):
            if isinstance(data.get(key), list):
                return len(data[key])
    return None


def cmd_findings(path):
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except OSError:
        print("?")
        return
    try:
        n = count_findings(json.loads(text))
    except ValueError:
        # Maybe JSON lines.
        lines = [ln for ln in text.splitlines() if ln.strip()]
        try:
            for ln in lines:
                json.loads(ln)
            n = len(lines)
        except ValueError:
            n = None
    print("?" if n is None else n)


def cmd_pystats(path):
    """Files the reference scan saw, from its --stats line on stderr."""
    with open(path, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            if line.startswith("stats: "):
                stats = json.loads(line[len("stats: ") :])
                print(f"files_python={stats['files'] + stats['skipped']}")
                print(f"python_skipped={stats['skipped']}")


# ---------------------------------------------------------------- table
def read_meta(path):
    meta = {}
    try:
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                line = line.rstrip("\n")
                if "=" in line:
                    key, _, value = line.partition("=")
                    meta[key] = value
    except OSError:
        pass
    return meta


def fmt_time(seconds):
    if seconds is None:
        return "-"
    if seconds >= 10:
        return f"{seconds:.1f} s"
    if seconds >= 1:
        return f"{seconds:.2f} s"
    return f"{seconds * 1000:.1f} ms"


def fmt_rss(kb):
    try:
        return f"{int(kb) / 1024:.1f} MB"
    except (TypeError, ValueError):
        return "-"


def check(value, op, target):
    if value is None or op is None:
        return "-"
    ok = value <= target if op == "<=" else value >= target
    return "PASS" if ok else "FAIL"


def load_tree(results_dir, tree):
    path = os.path.join(results_dir, f"{tree}.json")
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as fh:
        runs = json.load(fh)["results"]
    return runs, read_meta(os.path.join(results_dir, f"{tree}.meta"))


def render(rows, header, markdown, left=2):
    """rows: list of lists of str; the first LEFT columns are text, the rest numbers."""
    if markdown:
        out = ["| " + " | ".join(header) + " |"]
        out.append(
            "|"
            + "|".join("---" if i < left else "---:" for i in range(len(header)))
            + "|"
        )
        out += ["| " + " | ".join(r) + " |" for r in rows]
        return "\n".join(out)
    widths = [max(len(str(c)) for c in col) for col in zip(header, *rows)]
    lines = []
    for r in [header] + rows:
        cells = [
            str(c).ljust(w) if i < left else str(c).rjust(w)
            for i, (c, w) in enumerate(zip(r, widths))
        ]
        lines.append("  ".join(cells).rstrip())
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def cmd_table(results_dir, markdown, only):
    trees = [t for t in TREES if only in (None, t)]
    loaded = {t: load_tree(results_dir, t) for t in trees}
    loaded = {t: v for t, v in loaded.items() if v is not None}
    if not loaded:
        sys.exit(f"no results in {results_dir} (run benches/bench.sh first)")

    out = []
    # --- corpus
    corpus_rows = []
    for tree, (_, meta) in loaded.items():
        size = int(meta.get("bytes", 0) or 0)
        corpus_rows.append(
            [
                tree,
                meta.get("files", "?"),
                f"{size / 1e6:.1f}",
                meta.get("files_ruff", "?"),
                meta.get("files_rg", "?"),
                meta.get("files_toolshape", "?"),
                meta.get("files_python", "?"),
                meta.get("toolshape_errors", "?"),
                meta.get("with_status", "?"),
                meta.get("findings_toolshape", "?"),
                meta.get("findings_python", "?"),
            ]
        )
    out.append(
        (
            "Corpus",
            render(
                corpus_rows,
                [
                    "tree",
                    "files",
                    "MB",
                    "ruff saw",
                    "rg saw",
                    "toolshape saw",
                    "python saw",
                    "toolshape unreadable",
                    "files with 'status'",
                    "toolshape findings",
                    "python findings",
                ],
                markdown,
                left=1,
            ),
        )
    )

    # --- medians
    time_rows = []
    medians = {}
    minimums = {}
    for tree, (runs, meta) in loaded.items():
        for r in runs:
            name = r["command"]
            medians[(tree, name)] = r["median"]
            minimums[(tree, name)] = r["min"]
            time_rows.append(
                [
                    tree,
                    name,
                    fmt_time(r["median"]),
                    f"{fmt_time(r['mean'])} ± {fmt_time(r.get('stddev') or 0)}",
                    f"{fmt_time(r['min'])} … {fmt_time(r['max'])}",
                    str(len(r.get("times", []))),
                    fmt_rss(meta.get(f"rss_kb.{name}")),
                ]
            )
    out.append(
        (
            "Timings (hyperfine; peak RSS from /usr/bin/time -v, one run)",
            render(
                time_rows,
                [
                    "tree",
                    "command",
                    "median",
                    "mean ± σ",
                    "min … max",
                    "runs",
                    "peak RSS",
                ],
                markdown,
            ),
        )
    )

    # --- ratios vs targets
    ratio_rows = []
    for tree, label, num, den, op, target in TARGETS:
        if tree not in loaded:
            continue
        a, b = medians.get((tree, num)), medians.get((tree, den))
        value = a / b if a is not None and b else None
        a, b = minimums.get((tree, num)), minimums.get((tree, den))
        by_min = a / b if a is not None and b else None
        ratio_rows.append(
            [
                tree,
                label,
                "-" if value is None else f"{value:.3g}x",
                "-" if by_min is None else f"{by_min:.3g}x",
                "-" if op is None else f"{'≤' if op == '<=' else '≥'} {target:g}x",
                check(value, op, target),
            ]
        )
    for tree, (_, meta) in loaded.items():
        kb = meta.get("rss_kb.toolshape")
        mb = int(kb) / 1024 if kb and kb.isdigit() else None
        ratio_rows.append(
            [
                tree,
                "toolshape peak RSS",
                fmt_rss(kb),
                "",
                f"< {RSS_TARGET_MB:g} MB",
                "-" if mb is None else ("PASS" if mb < RSS_TARGET_MB else "FAIL"),
            ]
        )
    out.append(
        (
            "Targets",
            render(
                ratio_rows,
                ["tree", "measure", "median ratio", "min ratio", "target", "result"],
                markdown,
            ),
        )
    )

    loads = "; ".join(
        f"{tree} load avg {meta.get('load_before', '?')} → {meta.get('load_after', '?')}"
        for tree, (_, meta) in loaded.items()
    )
    first = next(iter(loaded.values()))[1]
    env = "; ".join(
        first[k]
        for k in ("toolshape", "ruff", "rg", "python", "hyperfine", "cpus")
        if first.get(k)
    )
    for title, body in out:
        print(f"### {title}" if markdown else f"== {title}")
        print()
        print(body)
        print()
    print(("_" + env + "; " + loads + "_") if markdown else env + "\n" + loads)


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    cmd, args = argv[1], argv[2:]
    if cmd == "count":
        cmd_count(args)
    elif cmd == "pyroots":
        cmd_pyroots(args)
    elif cmd == "pystats":
        cmd_pystats(args[0])
    elif cmd == "findings":
        cmd_findings(args[0])
    elif cmd == "table":
        markdown = "--markdown" in args
        only = None
        if "--only" in args:
            only = args[args.index("--only") + 1]
        rest = [a for a in args if a not in ("--markdown", "--only", only)]
        cmd_table(rest[0] if rest else "target/bench-results", markdown, only)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
