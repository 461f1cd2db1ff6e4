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

Suppressions are real COMMENT tokens (one tokenize pass per file that has
findings; text inside strings never counts).  A finding is silenced by a
comment on the physical line where its entry starts (at or after the entry's
start) or on the line of the dict's ``{`` (at or after it).  Each ``#`` of a
comment starts a part; after the ``#`` and leading whitespace, compared
case-insensitively (ASCII):
  * ``toolshape:`` then ``ignore``: with ``[A, B]`` (up to the first ``]``;
    split on commas and spaces, upper-cased) those codes, otherwise every
    code (``ignored``, an unclosed ``[`` ...).  ``toolshape:`` without
    ``ignore`` (``# toolshape: note``) silences nothing;
  * ``noqa``: followed by ``:``, the codes in the rest of the part
    (``# noqa: E501`` silences no TSxxx), otherwise every code (``# noqa``,
    ``# NOQA``, ``# noqa E501``).
The parts and comments of a line unite their effects.

Output (stdout): one JSON array of
    {"path", "dict_line", "dict_column", "code", "key",
     "line", "column", "end_line", "end_column"}
where dict_line/dict_column are the 1-based position of the dict's ``{`` and
line/column .. end_line/end_column the span of the finding (end exclusive):
a TS001 entry from its first character (opening parentheses around the key
included) to just after its value (closing parentheses included), a TS002
from the ``**`` to the end of the spread operand (its parentheses included).
Columns count characters (code points) of the line as Python sees it (BOM
stripped, lines split on \\r\\n, \\r and \\n only).  Sorted by
(path, dict_line, dict_column, line, column, code, key or "").

Files that ast.parse rejects are reported on stderr as ``skip: PATH: reason``
and contribute nothing.  The exit status is 0, or 2 on bad usage / a PATH
that does not exist.
"""

import ast
import bisect
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
    """Return None when ``node`` (an ast.Dict) is not shaped, else
    [(code, key, entry index)]."""
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
    for i, k in enumerate(keys):
        if k is None:
            if "TS002" not in IGNORED_CODES:
                out.append(("TS002", None, i))
        elif k.__class__ is _Constant:
            v = k.value
            if v.__class__ is str and v not in ALLOWED_KEYS and "TS001" not in IGNORED_CODES:
                out.append(("TS001", v, i))
    return out


# --------------------------------------------------------------------------
# suppression comments

EVERY_CODE = "every code"
_ASCII_LOWER = {c: c + 32 for c in range(ord("A"), ord("Z") + 1)}
_ASCII_UPPER = {c + 32: c for c in range(ord("A"), ord("Z") + 1)}


def _codes(text):
    """Codes listed in ``text``: split on commas and spaces, upper-cased."""
    return {c.translate(_ASCII_UPPER) for c in text.replace(",", " ").split()}


def comment_effect(comment):
    """What one COMMENT token silences: a set of codes, or EVERY_CODE.

    Every ``#`` in the token starts a part (``# per-frame  # noqa`` has two);
    the parts' effects are united.
    """
    codes = set()
    for part in comment.split("#")[1:]:
        part = part.lstrip().translate(_ASCII_LOWER)
        if part.startswith("toolshape:"):
            rest = part[len("toolshape:"):].lstrip()
            if not rest.startswith("ignore"):
                continue  # e.g. "toolshape: note"
            rest = rest[len("ignore"):].lstrip()
            if rest.startswith("[") and "]" in rest:
                codes |= _codes(rest[1:rest.index("]")])
            else:
                return EVERY_CODE  # bare, "ignored", an unclosed "[" ...
        elif part.startswith("noqa"):
            rest = part[len("noqa"):].lstrip()
            if rest.startswith(":"):
                codes |= _codes(rest[1:])
            else:
                return EVERY_CODE  # "# noqa", "# NOQA", "# noqa E501"
    return codes


def comments_by_line(text):
    """{line: [(0-based char column, effect)]} of the COMMENT tokens of
    ``text`` (already normalised to \\n line ends) that silence something.

    Only real comments count: text inside string literals never does.
    """
    out = {}
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.COMMENT:
                effect = comment_effect(tok.string)
                if effect:
                    out.setdefault(tok.start[0], []).append((tok.start[1], effect))
    except (tokenize.TokenError, SyntaxError) as exc:
        # ast.parse accepted the file, so this is a limit of the pure-Python
        # tokenizer; the comments before the failure still count.
        sys.stderr.write("warn: tokenize stopped early: %s\n" % exc)
    return out


def silenced(comments, line, col, code):
    """Does a comment on ``line`` at or after char column ``col`` silence ``code``?"""
    for ccol, effect in comments.get(line, ()):
        if ccol >= col and (effect is EVERY_CODE or code in effect):
            return True
    return False


# --------------------------------------------------------------------------
# spans
#
# ast positions exclude the parentheses around an expression, but a finding's
# span includes those around the key and around the value (and runs from the
# `**` of a spread).  Between two neighbouring nodes of a dict display only
# punctuation can stand: closing parens of one value, a comma, opening parens
# of the next key or a `**` and the opening parens of a spread's operand, plus
# whitespace, line continuations and comments.  gap_tokens lexes such a gap;
# a dedicated lexer because Python < 3.12's tokenize sees an f-string (which
# may hold a dict in a replacement field) as one STRING token.


class SpanError(Exception):
    pass


def gap_tokens(text, start, stop):
    """[(token, offset)] of the punctuation in text[start:stop]."""
    out = []
    i = start
    while i < stop:
        ch = text[i]
        if ch in " \t\x0c\n":
            i += 1
        elif ch == "\\" and text[i + 1:i + 2] == "\n":
            i += 2
        elif ch == "#":
            nl = text.find("\n", i, stop)
            i = stop if nl == -1 else nl
        elif ch == "*" and text[i + 1:i + 2] == "*":
            out.append(("**", i))
            i += 2
        elif ch in "(),":
            out.append((ch, i))
            i += 1
        else:
            # not caught by main(): a broken assumption must not pass as a skip
            raise SpanError("unexpected %r between dict entries at offset %d" % (ch, i))
    return out


class Source:
    """The text of a file as Python sees it, with offset <-> position maps."""

    def __init__(self, data):
        self.lines = source_lines(data)
        self.text = "\n".join(self.lines)
        starts = [0]
        for ln in self.lines[:-1]:
            starts.append(starts[-1] + len(ln) + 1)
        self.starts = starts
        self._comments = None

    def offset(self, lineno, byte_col):
        return self.starts[lineno - 1] + char_column(self.lines[lineno - 1], byte_col)

    def position(self, off):
        """(1-based line, 0-based char column) of text offset ``off``."""
        line = bisect.bisect_right(self.starts, off) - 1
        return line + 1, off - self.starts[line]

    @property
    def comments(self):
        if self._comments is None:  # one tokenize pass, only when needed
            self._comments = comments_by_line(self.text)
        return self._comments


def entry_span(src, node, index, code):
    """(start offset, end offset) of entry ``index`` of dict ``node``."""
    keys, values = node.keys, node.values
    value = values[index]
    head = value if code == "TS002" else keys[index]
    if index:
        prev = values[index - 1]
        left = src.offset(prev.end_lineno, prev.end_col_offset)
    else:
        left = src.offset(node.lineno, node.col_offset) + 1
    head_at = src.offset(head.lineno, head.col_offset)
    start = head_at
    for tok, off in reversed(gap_tokens(src.text, left, head_at)):
        if tok == "(":
            start = off
        elif tok == "**" and code == "TS002":
            start = off
            break
        else:
            break
    end = src.offset(value.end_lineno, value.end_col_offset)
    if index + 1 < len(keys):
        nxt = keys[index + 1] if keys[index + 1] is not None else values[index + 1]
        right = src.offset(nxt.lineno, nxt.col_offset)
    else:
        right = src.offset(node.end_lineno, node.end_col_offset) - 1  # the "}"
    for tok, off in gap_tokens(src.text, end, right):
        if tok != ")":
            break
        end = off + 1
    return start, end


def scan_source(path, data, stats):
    """Parse ``data`` and return finding dicts; raises on unparsable input."""
    tree = ast.parse(data, filename=path)
    found = []
    src = None
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
        if src is None:
            src = Source(data)
        line = src.lines[node.lineno - 1]
        col = char_column(line, node.col_offset)
        if line[col:col + 1] != "{":
            sys.stderr.write("warn: %s:%d:%d: dict position does not point at '{'\n"
                             % (path, node.lineno, col + 1))
        for code, key, index in hits:
            start, end = entry_span(src, node, index, code)
            sline, scol = src.position(start)
            eline, ecol = src.position(end)
            if (silenced(src.comments, sline, scol, code)
                    or silenced(src.comments, node.lineno, col, code)):
                stats["suppressed"] = stats.get("suppressed", 0) + 1  # stats may lack it
                continue
            found.append({
                "path": path,
                "dict_line": node.lineno,
                "dict_column": col + 1,
                "code": code,
                "key": key,
                "line": sline,
                "column": scol + 1,
                "end_line": eline,
                "end_column": ecol + 1,
            })
    return found


def sort_key(f):
    return (f["path"], f["dict_line"], f["dict_column"], f["line"], f["column"],
            f["code"], f["key"] or "")


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
    stats = {"files": 0, "skipped": 0, "dicts": 0, "shaped": 0, "suppressed": 0}
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

    findings.sort(key=sort_key)
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
