#!/usr/bin/env python3
"""Reference scanner for toolshape's result-shape contract (stdlib only).

It is the oracle of the differential test (tests/differential.rs) and the
"Python ast scan" peer of the benchmarks, so it favours being obviously
correct, then being fast.

Usage:
    python3 tests/reference/scan.py [--walk-all] [--list-skipped FILE]
                                    [--stats] [--allowed-key KEY]...
                                    [--ignore CODE]... PATH...

PATH may be a file (scanned whatever its name) or a directory (walked
recursively for *.py and *.pyi; hidden directories and __pycache__ are not
entered unless --walk-all is given, which only skips .git).

The rule: an ast.Dict is *tool-result-shaped* when two of its keys are
constant strings (ast.Constant whose value is a str) equal to "status" and
"content".  In such a dict
  * every other constant-string key except "toolUseId" is a TS001 finding
    (one per entry, so duplicate keys give one finding each);
  * every top-level ``**expr`` entry (key is None) is a TS002 finding.
A project's configuration is mirrored by --allowed-key (another key that is
not a TS001 finding, like `allowed-keys`) and --ignore (a code not reported,
like `ignore`).
Non-string keys (names, numbers, None, bytes, f-strings, tuples...) neither
make a dict shaped nor count as extras.  Note that ``{None: 1}`` has the key
ast.Constant(None), which is *not* a spread.

Output (stdout): one JSON array of
    {"path", "dict_line", "dict_column", "code", "key"}
where dict_line/dict_column are the 1-based position of the dict's ``{`` and
dict_column counts characters (code points) of the line as Python sees it
(BOM stripped, lines split on \\r\\n, \\r and \\n only), sorted by
(path, dict_line, dict_column, code, key or "").

Files that ast.parse rejects are reported on stderr as ``skip: PATH: reason``
and contribute nothing.  The exit status is 0, or 2 on bad usage / a PATH
that does not exist.
"""

import ast
import gc
import io
import json
import os
import sys
import tokenize
import warnings

ALLOWED_KEYS = {"status", "content", "toolUseId"}
# Codes not reported (--ignore).
IGNORED_CODES = set()
SOURCE_SUFFIXES = (".py", ".pyi")

_Dict = ast.Dict
_Constant = ast.Constant


def iter_source_files(root, walk_all):
    """Yield source files below directory ``root`` in a stable order."""
    for dirpath, dirnames, filenames in os.walk(root):
        if walk_all:
            kept = [d for d in dirnames if d != ".git"]
        else:
            kept = [d for d in dirnames
                    if not d.startswith(".") and d != "__pycache__"]
        kept.sort()
        dirnames[:] = kept
        for name in sorted(filenames):
            if name.endswith(SOURCE_SUFFIXES):
                yield os.path.join(dirpath, name)


def source_lines(data):
    """Decode ``data`` the way the tokenizer does and split it into lines.

    Only \\r\\n, \\r and \\n end a line for Python's tokenizer (form feed,
    \\x85, U+2028 ... do not), so str.splitlines() must not be used.
    """
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError:
        encoding = "utf-8"
    text = data.decode(encoding)  # "utf-8-sig" strips the BOM
    if text.startswith("\ufeff"):
        text = text[1:]
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def char_column(line, byte_col):
    """Convert ast's UTF-8 byte col_offset on ``line`` to a 0-based char index."""
    if line.isascii():
        return byte_col
    return len(line.encode("utf-8", "surrogatepass")[:byte_col]
               .decode("utf-8", "surrogatepass"))


def dict_findings(node):
    """Return None when ``node`` (an ast.Dict) is not shaped, else [(code, key)]."""
    keys = node.keys
    if len(keys) < 2:
        return None
    has_status = has_content = False
    for k in keys:
        if k is not None and k.__class__ is _Constant:
            v = k.value
            if v == "status" and v.__class__ is str:
                has_status = True
            elif v == "content" and v.__class__ is str:
                has_content = True
    if not (has_status and has_content):
        return None
    out = []
    for k, value in zip(keys, node.values):
        if k is None:
            if "TS002" not in IGNORED_CODES:
                out.append(("TS002", None, value))
        elif k.__class__ is _Constant:
            v = k.value
            if v.__class__ is str and v not in ALLOWED_KEYS and "TS001" not in IGNORED_CODES:
                out.append(("TS001", v, k))
    return out


def suppressed_codes(tail):
    """Codes a `# toolshape: ignore[...]` / `# noqa[: ...]` comment in the
    rest of a line silences: a set, or "all"."""
    result = set()
    at = tail.find("#")
    while at != -1:
        comment = tail[at + 1:].lstrip().lower()
        if comment.startswith("toolshape:"):
            rest = comment[len("toolshape:"):].lstrip()
            if rest.startswith("ignore"):
                args = rest[len("ignore"):].lstrip()
                if args.startswith("[") and "]" in args:
                    result |= {c.strip().upper() for c in args[1:args.index("]")].replace(",", " ").split()}
                else:
                    return "all"
        elif comment.startswith("noqa"):
            rest = comment[len("noqa"):].lstrip()
            if rest.startswith(":"):
                result |= {c.strip().upper() for c in rest[1:].replace(",", " ").split()}
            else:
                return "all"
        at = tail.find("#", at + 1)
    return result


def line_tail(lines, lineno, byte_col):
    line = lines[lineno - 1]
    return line[char_column(line, byte_col):]


def scan_source(path, data, stats):
    """Parse ``data`` and return finding dicts; raises on unparsable input."""
    tree = ast.parse(data, filename=path)
    found = []
    lines = None
    for node in ast.walk(tree):
        if node.__class__ is not _Dict:
            continue
        stats["dicts"] += 1
        hits = dict_findings(node)
        if hits is None:
            continue
        stats["shaped"] += 1
        if not hits:
            continue
        if lines is None:
            lines = source_lines(data)
        line = lines[node.lineno - 1]
        col = char_column(line, node.col_offset)
        if line[col:col + 1] != "{":
            sys.stderr.write("warn: %s:%d:%d: dict position does not point at '{'\n"
                             % (path, node.lineno, col + 1))
        on_dict_line = suppressed_codes(line[col:])
        for code, key, entry in hits:
            on_entry_line = suppressed_codes(line_tail(lines, entry.lineno, entry.col_offset))
            if "all" in (on_dict_line, on_entry_line) or code in on_dict_line or code in on_entry_line:
                continue
            found.append({
                "path": path,
                "dict_line": node.lineno,
                "dict_column": col + 1,
                "code": code,
                "key": key,
            })
    return found


def main(argv):
    walk_all = False
    list_skipped = None
    want_stats = False
    paths = []
    it = iter(argv)
    for arg in it:
        if arg == "--walk-all":
            walk_all = True
        elif arg == "--stats":
            want_stats = True
        elif arg in ("--allowed-key", "--ignore"):
            value = next(it, None)
            if value is None:
                sys.stderr.write("error: %s needs a value\n" % arg)
                return 2
            (ALLOWED_KEYS if arg == "--allowed-key" else IGNORED_CODES).add(value)
        elif arg == "--list-skipped":
            list_skipped = next(it, None)
            if list_skipped is None:
                sys.stderr.write("error: --list-skipped needs a FILE\n")
                return 2
        elif arg.startswith("--list-skipped="):
            list_skipped = arg.split("=", 1)[1]
        elif arg in ("-h", "--help"):
            sys.stdout.write(__doc__)
            return 0
        elif arg == "--":
            paths.extend(it)
        elif arg.startswith("--"):
            sys.stderr.write("error: unknown option %s\n" % arg)
            return 2
        else:
            paths.append(arg)
    if not paths:
        sys.stderr.write("usage: scan.py [--walk-all] [--list-skipped FILE] [--stats] PATH...\n")
        return 2

    # Invalid escapes and the like only warn; keep stderr for real problems.
    warnings.simplefilter("ignore")
    # AST nodes hold no reference cycles: refcounting frees each tree, and the
    # cyclic collector would only re-scan millions of young nodes.
    gc.disable()

    status = 0
    findings = []
    skipped = []
    stats = {"files": 0, "skipped": 0, "dicts": 0, "shaped": 0}
    for p in paths:
        if os.path.isdir(p):
            files = iter_source_files(p, walk_all)
        elif os.path.exists(p):
            files = (p,)
        else:
            sys.stderr.write("error: %s: no such file or directory\n" % p)
            status = 2
            continue
        for path in files:
            try:
                with open(path, "rb") as fh:
                    data = fh.read()
                found = scan_source(path, data, stats)
            except (SyntaxError, ValueError, UnicodeError, RecursionError,
                    MemoryError, OverflowError, OSError) as exc:
                reason = "%s: %s" % (type(exc).__name__, exc)
                sys.stderr.write("skip: %s: %s\n" % (path, reason.replace("\n", " ")))
                skipped.append(path)
                stats["skipped"] += 1
                continue
            stats["files"] += 1
            findings.extend(found)

    findings.sort(key=lambda f: (f["path"], f["dict_line"], f["dict_column"],
                                 f["code"], f["key"] or ""))
    out = sys.stdout
    if findings:
        out.write("[\n")
        out.write(",\n".join(json.dumps(f) for f in findings))
        out.write("\n]\n")
    else:
        out.write("[]\n")
    if list_skipped is not None:
        with open(list_skipped, "w", encoding="utf-8") as fh:
            for path in skipped:
                fh.write(path + "\n")
    if want_stats:
        stats["findings"] = len(findings)
        stats["TS001"] = sum(1 for f in findings if f["code"] == "TS001")
        stats["TS002"] = len(findings) - stats["TS001"]
        sys.stderr.write("stats: %s\n" % json.dumps(stats, sort_keys=True))
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
