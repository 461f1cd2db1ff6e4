#!/usr/bin/env python3
"""Reference scanner for toolshape's result-shape contract (stdlib only).

It is the oracle of the differential test (tests/differential.rs) and the
"Python ast scan" peer of the benchmarks, so it favours being obviously
correct, then being fast.

Usage:
    python3 tests/reference/scan.py [--walk-all] [--list-skipped FILE]
                                    [--stats] [--allowed-key KEY]...
                                    [--ignore CODE]... [--reads]
                                    [--status S]... [--block-type T]...
                                    [--tool-decorator D]... [--literal-only]
                                    PATH...

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
The rest of the contract (docs/rules.md "The rest of the contract:
TS005–TS009"; see the section of that name below for the readings chosen):
  * TS005: a half-shaped display (no spread, exactly one of "status" and
    "content") that a tool function of the project returns, directly,
    through a name or through calls of project functions resolved as
    builder calls are; key the missing key;
  * TS006: a "status" entry of a shaped display whose value is a constant
    string outside the statuses (success, error, degraded; --status S,
    repeatable, replaces them like the project's `statuses`);
  * TS007: a "content" entry whose value is a string, number, bool, None,
    dict, set or tuple display or `[]` (the last only when no entry of the
    display breaks TS001/TS002, suppressed or not);
  * TS008: a block of the content list (a dict display element of the last
    "content" value, a list display) whose constant keys are not exactly one
    block type (text, json, image, document, video; --block-type T replaces
    them); span the block, no key;
  * TS009: a "text" entry of a block whose value is a number, bool, list,
    dict or set display, or a call of len/int/float/sum/round/dict/list that
    the file binds nowhere.
  Their `dict` is the returned display (TS005) or the shaped display; the
  tool decorators (`tool`, `strands.tool`, `strands.tools.tool`) are
  replaced by --tool-decorator D (a dotted name, repeatable).  --ignore
  works for them too; --literal-only gives TS001/TS002 only.
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

--reads adds to every finding its "reads" (docs/rules.md "Reads of moved
keys"): a list of {"path", "line", "column", "end_line", "end_column",
"form", "key", "rewritable", "possible"} (columns as above; form one of
subscript, store, delete, get, pop, setdefault, in, not-in, whole, content,
block, escape; key null for whole, content, block and escape; rewritable
always false; possible true for a possible read, a keyed read on a result the
SDK hands on that no producer is traced to, in a file holding a marker and a
quoted moved key; escape for a use as a value of a producer that is no tool,
or of a tool called through a wrapper, `W(tool)(...)`, given another name
to be called by (the whole value of an assignment, `fn = tool`, the value of
a `return`, a `yield` or a dict display's pair), or handed to a call that
keeps what it gives (a positional argument of a call whose value is not
dropped by an expression statement, `f = partial(tool)`, but for a few
builtins that only look at it, `callable(tool)`), for a decorator of a
producer's def that is no tool decorator nor exempt (`@staticmethod`...), for
a call named like a producer that resolves to nothing (an unresolved call) and
a use as a value so named whose call would be one, called through a wrapper
or given another name (an unresolved use; a tool's or not), and for a receiver
call whose result is handed on: not read where it stands, dropped, returned,
bound once to a function's name read by read forms only, or bound to a
function's name bound in sequence whose loads that see it are read forms
only, none in a nested scope or before the first binding ends; a value
handed to a checking function of its module, `def F(r)` reading, naming in
assertion messages or returning `r` only, is not handed on: F's reads of
`r` are the receiver's, once per call, and F's call, when it returns `r`,
is judged in turn), sorted by path and position.  Every file of each project is taken as
given: all its findings are origins.  With --stats the count of distinct reads is "reads", and
the suppressed findings of TS005-TS009 are counted apart too ("suppressed_contract").  The readings
chosen where the rules leave a choice are listed at the "--reads" section
below.

Files that ast.parse rejects are reported on stderr as ``skip: PATH: reason``
and contribute nothing (a legacy Python 2 file among them: docs/rules.md
"Legacy Python 2 files"; nor does such a file hold a tool, a helper or a
builder for the other files).  The exit status is 0, or 2 on bad usage / a PATH
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
    """Parse ``data`` and return its TS001/TS002 finding dicts (the literal
    rules only, no project); raises on unparsable input."""
    return literal_findings(path, ast.parse(data, filename=path), data, stats)


def literal_findings(path, tree, data, stats, src=None):
    """TS001/TS002 findings of the parsed ``tree`` of ``data``."""
    found = []
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
                "expression": None,
                "origin": "literal",
                "builder": None,
                "line": sline,
                "column": scol + 1,
                "end_line": eline,
                "end_column": ecol + 1,
            })
            if READS:
                note_origin(found[-1], ("display", node))
    return found


# --------------------------------------------------------------------------
# TS003 / TS004: the program around a tool result (docs/rules.md)
#
# A project is the nearest folder above a file holding pyproject.toml,
# toolshape.toml or .git, else the PATH the file was found under.  Its index
# covers every Python file under the root (hidden folders, __pycache__ and
# toolshape's default skipped folders left out); files are parsed lazily.

PROJECT_MARKERS = ("pyproject.toml", "toolshape.toml", ".git")
PROJECT_SKIP_DIRS = {".git", "__pycache__", "node_modules", ".tox", ".nox", "build", "dist",
                     "site-packages", "venv"}
_FUNCTION_NODES = (ast.FunctionDef, ast.AsyncFunctionDef)
_COMP_NODES = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)


def is_shaped(node):
    """Is ``node`` a dict display with constant string keys status and content?"""
    if node.__class__ is not _Dict:
        return False
    seen = set()
    for k in node.keys:
        if k is not None and k.__class__ is _Constant and k.value.__class__ is str:
            seen.add(k.value)
    return "status" in seen and "content" in seen


def is_spread_of(entry_key, entry_value, name):
    return entry_key is None and entry_value.__class__ is ast.Name and entry_value.id == name


class Binding:
    """One binding of a name: kind is "assign" (plain ``N = D`` / ``N: T = D``,
    one target of a chained assignment; ``value`` is D), "augor" (``N |= ...``),
    "def", "import", "importfrom", "param" or "other"."""

    __slots__ = ("kind", "node", "stmt", "value", "pos")

    def __init__(self, kind, node, stmt=None, value=None):
        self.kind = kind
        self.node = node
        self.stmt = stmt
        self.value = value
        n = stmt if stmt is not None else node
        self.pos = (n.lineno, n.col_offset) if hasattr(n, "lineno") else (0, 0)


class Scope:
    __slots__ = ("kind", "node", "parent", "raw", "owned", "glob", "nonloc",
                 "calls", "returns", "assigns", "augs", "fors")

    def __init__(self, kind, node, parent):
        self.kind = kind          # "module", "function", "class", "comprehension"
        self.node = node
        self.parent = parent
        self.raw = []             # (name, Binding) as written in this scope
        self.owned = {}           # name -> [Binding] owned by this scope
        self.glob = set()
        self.nonloc = set()
        self.calls = []           # ast.Call standing in this scope
        self.returns = []         # ast.Return standing in this scope
        self.assigns = []         # ast.Assign statements standing in this scope
        self.augs = []            # ast.AugAssign statements standing in this scope
        self.fors = []            # ast.For statements standing in this scope


class ScopeBuilder:
    """Python's scopes and bindings of one module."""

    def __init__(self, tree):
        self.scopes = []
        self.module = self.new("module", tree, None)
        for stmt in tree.body:
            self.visit(stmt, self.module)
        self.assign_owners()

    def new(self, kind, node, parent):
        s = Scope(kind, node, parent)
        self.scopes.append(s)
        return s

    def bind(self, sc, name, b):
        sc.raw.append((name, b))

    def visit_all(self, nodes, sc):
        for n in nodes:
            if n is not None:
                self.visit(n, sc)

    def visit_target(self, t, sc):
        """A target that is not a plain name: nested names bind as "other"."""
        self.visit(t, sc)

    def visit_args_outer(self, args, sc, annotations):
        self.visit_all(args.defaults, sc)
        self.visit_all(args.kw_defaults, sc)
        if annotations:
            for a in args.posonlyargs + args.args + args.kwonlyargs:
                self.visit_all([a.annotation], sc)
            for a in (args.vararg, args.kwarg):
                if a is not None:
                    self.visit_all([a.annotation], sc)

    def bind_params(self, args, fs):
        for a in args.posonlyargs + args.args + args.kwonlyargs:
            self.bind(fs, a.arg, Binding("param", a))
        for a in (args.vararg, args.kwarg):
            if a is not None:
                self.bind(fs, a.arg, Binding("param", a))

    def visit(self, node, sc):
        cls = node.__class__
        if cls in _FUNCTION_NODES:
            self.visit_all(node.decorator_list, sc)
            self.visit_all(type_params(node), sc)  # PEP 695: their bounds, constraints, defaults
            self.visit_args_outer(node.args, sc, True)
            self.visit_all([node.returns], sc)
            self.bind(sc, node.name, Binding("def", node))
            fs = self.new("function", node, sc)
            self.bind_params(node.args, fs)
            self.visit_all(node.body, fs)
        elif cls is ast.Lambda:
            self.visit_args_outer(node.args, sc, False)
            fs = self.new("function", node, sc)
            self.bind_params(node.args, fs)
            self.visit(node.body, fs)
        elif cls is ast.ClassDef:
            self.visit_all(node.decorator_list, sc)
            self.visit_all(type_params(node), sc)
            self.visit_all(node.bases, sc)
            self.visit_all(node.keywords, sc)
            self.bind(sc, node.name, Binding("other", node))
            cs = self.new("class", node, sc)
            self.visit_all(node.body, cs)
        elif cls in _COMP_NODES:
            gens = node.generators
            self.visit(gens[0].iter, sc)  # evaluated in the enclosing scope
            cs = self.new("comprehension", node, sc)
            for i, g in enumerate(gens):
                if i:
                    self.visit(g.iter, cs)
                self.visit(g.target, cs)
                self.visit_all(g.ifs, cs)
            if cls is ast.DictComp:
                self.visit(node.key, cs)
                self.visit(node.value, cs)
            else:
                self.visit(node.elt, cs)
        elif cls is ast.Assign:
            sc.assigns.append(node)
            self.visit(node.value, sc)
            for t in node.targets:
                if t.__class__ is ast.Name:
                    self.bind(sc, t.id, Binding("assign", t, node, node.value))
                else:
                    self.visit_target(t, sc)
        elif cls is ast.AnnAssign:
            self.visit(node.annotation, sc)
            if node.value is not None:
                self.visit(node.value, sc)
            t = node.target
            if t.__class__ is ast.Name:
                kind = "assign" if node.value is not None else "other"
                self.bind(sc, t.id, Binding(kind, t, node, node.value))
            else:
                self.visit_target(t, sc)
        elif cls is ast.AugAssign:
            sc.augs.append(node)
            self.visit(node.value, sc)
            t = node.target
            if t.__class__ is ast.Name:
                kind = "augor" if node.op.__class__ is ast.BitOr else "other"
                self.bind(sc, t.id, Binding(kind, t, node, node.value))
            else:
                self.visit_target(t, sc)
        elif cls is ast.NamedExpr:
            self.visit(node.value, sc)
            owner = sc
            while owner.kind == "comprehension":
                owner = owner.parent
            self.bind(owner, node.target.id, Binding("other", node.target))
        elif cls is ast.Import:
            for a in node.names:
                name = a.asname or a.name.split(".")[0]
                self.bind(sc, name, Binding("import", a, node))
        elif cls is ast.ImportFrom:
            for a in node.names:
                if a.name == "*":
                    continue  # a star import binds no name we can know
                self.bind(sc, a.asname or a.name, Binding("importfrom", a, node))
        elif cls is ast.Global:
            sc.glob.update(node.names)
        elif cls is ast.Nonlocal:
            sc.nonloc.update(node.names)
        elif cls is ast.Return:
            sc.returns.append(node)
            if node.value is not None:
                self.visit(node.value, sc)
        elif cls is ast.Call:
            sc.calls.append(node)
            self.visit(node.func, sc)
            self.visit_all(node.args, sc)
            self.visit_all(node.keywords, sc)
        elif cls is ast.For:
            sc.fors.append(node)
            for child in ast.iter_child_nodes(node):
                self.visit(child, sc)
        elif cls is ast.Name:
            if node.ctx.__class__ is not ast.Load:
                self.bind(sc, node.id, Binding("other", node))
        elif cls is ast.ExceptHandler:
            if node.name:
                self.bind(sc, node.name, Binding("other", node))
            for child in ast.iter_child_nodes(node):
                self.visit(child, sc)
        elif cls in (ast.MatchAs, ast.MatchStar):
            if node.name:
                self.bind(sc, node.name, Binding("other", node))
            for child in ast.iter_child_nodes(node):
                self.visit(child, sc)
        elif cls is ast.MatchMapping:
            if node.rest:
                self.bind(sc, node.rest, Binding("other", node))
            for child in ast.iter_child_nodes(node):
                self.visit(child, sc)
        else:
            for child in ast.iter_child_nodes(node):
                self.visit(child, sc)

    def assign_owners(self):
        raw_names = {id(s): {n for n, _ in s.raw} for s in self.scopes}
        for s in self.scopes:
            for name, b in s.raw:
                if s.kind != "module" and name in s.glob:
                    owner = self.module
                elif s.kind != "module" and name in s.nonloc:
                    owner = s.parent
                    while owner is not None:
                        if (owner.kind == "function" and name in raw_names[id(owner)]
                                and name not in owner.nonloc and name not in owner.glob):
                            break
                        owner = owner.parent
                    if owner is None:
                        owner = s  # a SyntaxError in Python; keep it local
                else:
                    owner = s
                owner.owned.setdefault(name, []).append(b)
        for s in self.scopes:
            for bs in s.owned.values():
                bs.sort(key=lambda b: b.pos)


def lookup(scope, name, module_scope):
    """The scope a load of ``name`` in ``scope`` resolves to (None: a builtin)."""
    s = scope
    first = True
    while s is not None:
        if s.kind == "class" and not first:
            s = s.parent
            continue
        first = False
        if s.kind != "module" and name in s.glob:
            s = module_scope
            return s if name in s.owned else None
        if s.kind != "module" and name in s.nonloc:
            s = s.parent
            continue
        if name in s.owned:
            return s
        s = s.parent
    return None


def sole_binding(mod, scope, name):
    """The one binding of ``name`` by the scope a load of it in ``scope``
    resolves to (None: a builtin, or bound not exactly once there)."""
    owner = lookup(scope, name, mod.module_scope)
    if owner is None:
        return None
    bs = owner.owned.get(name, ())
    return bs[0] if len(bs) == 1 else None


def module_binding(mod, scope, name):
    """The one binding of ``name`` when a load of it in ``scope`` resolves to
    the module scope (None: a builtin, a name of a function's or a class
    body's own, or bound not exactly once in the module)."""
    if lookup(scope, name, mod.module_scope) is not mod.module_scope:
        return None
    bs = mod.module_scope.owned.get(name, ())
    return bs[0] if len(bs) == 1 else None


def callee_binding(mod, scope, name):
    """The one binding of ``name`` loaded in ``scope`` as a builder call's
    callee reads it (docs/rules.md TS003, "**Imports inside a function**"):
    the module scope's, bound there exactly once (by anything: the caller
    judges its kind); or a function's own (a ``def`` / ``async def``, the one
    the load stands in or one enclosing it: Python's lookup, ``global`` /
    ``nonlocal`` followed), bound there exactly once, by an import statement
    (``import`` or ``from ... import``; which forms resolve is judged as at
    module level).  None: a builtin, a name bound more than once where it
    resolves, a function's name bound otherwise than by an import (a
    parameter, an assignment, a local def...), a name of a class body, a
    lambda or a comprehension."""
    owner = lookup(scope, name, mod.module_scope)
    if owner is None:
        return None
    bs = owner.owned.get(name, ())
    if len(bs) != 1:
        return None
    if owner is mod.module_scope:
        return bs[0]
    if (owner.kind == "function" and owner.node.__class__ in _FUNCTION_NODES
            and bs[0].kind in ("import", "importfrom")):
        return bs[0]
    return None


def result_names(scope):
    """{name: [assign Bindings in source order]} of the result names of ``scope``."""
    out = {}
    if scope.kind not in ("module", "function"):
        return out
    for name, bs in scope.owned.items():
        rel = [b for b in bs if b.kind != "augor"]
        if rel and all(b.kind == "assign" and is_shaped(b.value) for b in rel):
            out[name] = rel
    return out


def statement_holds(stmts, pred):
    """Does a statement among ``stmts`` (at any depth, not in nested scopes) satisfy pred?"""
    for st in stmts:
        if pred(st):
            return True
        if st.__class__ in _FUNCTION_NODES or st.__class__ is ast.ClassDef:
            continue
        for field in ("body", "orelse", "finalbody"):
            sub = getattr(st, field, None)
            if sub and statement_holds(sub, pred):
                return True
        if st.__class__ in (ast.Try, getattr(ast, "TryStar", ast.Try)):
            for h in st.handlers:
                if statement_holds(h.body, pred):
                    return True
        if st.__class__ is ast.Match:
            for c in st.cases:
                if statement_holds(c.body, pred):
                    return True
    return False


class Candidate:
    """A function that may be a builder: module level or a method of a
    module-level class.  ``kwarg`` is its ``**K`` parameter when nothing else
    rebinds it (else None); ``dict_params`` are its named parameters ``P``
    through which it is a dict-parameter builder (docs/rules.md)."""

    __slots__ = ("module", "node", "scope", "kwarg", "params", "local", "ret_calls", "cls_scope",
                 "dict_params", "positions", "kwonly")

    def __init__(self, module, node, scope, cls_scope):
        self.module = module
        self.node = node
        self.scope = scope
        self.cls_scope = cls_scope
        a = node.args
        kw = a.kwarg
        self.kwarg = None
        if kw is not None:
            bs = scope.owned.get(kw.arg, ())
            if len(bs) == 1 and bs[0].kind == "param":
                self.kwarg = kw.arg
        self.params = {x.arg for x in a.posonlyargs + a.args + a.kwonlyargs}
        # the parameters a positional argument binds, in order: those before
        # any `*` / `*args`; a method's first one is its receiver unless it is
        # a @staticmethod
        positions = [x.arg for x in a.posonlyargs + a.args]
        if cls_scope is not None and not any(
                d.__class__ is ast.Name and d.id == "staticmethod" for d in node.decorator_list):
            positions = positions[1:]
        self.positions = positions
        self.kwonly = {x.arg for x in a.kwonlyargs}
        self.local = False
        self.ret_calls = []
        self.dict_params = []


def is_p_spread(entry_key, entry_value, name, or_empty):
    """Is this display entry (or ``**`` call argument) a spread of ``name``:
    ``**name``, or with ``or_empty`` also ``**(name or {})``?"""
    if entry_key is not None:
        return False
    v = entry_value
    if v.__class__ is ast.Name:
        return v.id == name
    if not or_empty or v.__class__ is not ast.BoolOp or v.op.__class__ is not ast.Or:
        return False
    vs = v.values
    return (len(vs) == 2 and vs[0].__class__ is ast.Name and vs[0].id == name
            and vs[1].__class__ is _Dict and not vs[1].keys)


def flows_into_result(fs, results, K, or_empty):
    """Does a ``return E`` of function scope ``fs`` match cases 1-3 of
    docs/rules.md for the mapping ``K`` (``or_empty``: ``**(K or {})`` is a
    spread of it too, the dict-parameter reading)?"""

    def spread(k, v):
        return is_p_spread(k, v, K, or_empty)

    def writes_k(N):
        for call in fs.calls:
            f = call.func
            if (f.__class__ is ast.Attribute and f.attr == "update" and f.value.__class__ is ast.Name
                    and f.value.id == N):
                if (len(call.args) == 1 and not call.keywords and call.args[0].__class__ is ast.Name
                        and call.args[0].id == K):
                    return True
                if (not call.args and len(call.keywords) == 1
                        and spread(call.keywords[0].arg, call.keywords[0].value)):
                    return True
        for aug in fs.augs:
            if (aug.op.__class__ is ast.BitOr and aug.target.__class__ is ast.Name
                    and aug.target.id == N and aug.value.__class__ is ast.Name and aug.value.id == K):
                return True
        for loop in fs.fors:
            t, it = loop.target, loop.iter
            if not (t.__class__ is ast.Tuple and len(t.elts) == 2
                    and all(e.__class__ is ast.Name for e in t.elts)):
                continue
            if not (it.__class__ is ast.Call and not it.args and not it.keywords
                    and it.func.__class__ is ast.Attribute and it.func.attr == "items"
                    and it.func.value.__class__ is ast.Name and it.func.value.id == K):
                continue
            kname, vname = t.elts[0].id, t.elts[1].id

            def is_copy(st, kname=kname, vname=vname):
                return (st.__class__ is ast.Assign and st.value.__class__ is ast.Name
                        and st.value.id == vname
                        and any(tg.__class__ is ast.Subscript and tg.value.__class__ is ast.Name
                                and tg.value.id == N and tg.slice.__class__ is ast.Name
                                and tg.slice.id == kname for tg in st.targets))
            if statement_holds(loop.body, is_copy):
                return True
        return False

    for ret in fs.returns:
        E = ret.value
        if E is None:
            continue
        cls = E.__class__
        if cls is _Dict:
            has_k = any(spread(k, v) for k, v in zip(E.keys, E.values))
            if has_k and is_shaped(E):
                return True
            if has_k and any(k is None and v.__class__ is ast.Name and v.id in results
                             for k, v in zip(E.keys, E.values)):
                return True
        elif cls is ast.Name and E.id in results:
            if any(any(spread(k, v) for k, v in zip(b.value.keys, b.value.values))
                   for b in results[E.id]) or writes_k(E.id):
                return True
    return False


def analyse_candidate(c):
    fs, K = c.scope, c.kwarg
    results = result_names(fs)
    if K is not None:
        c.local = flows_into_result(fs, results, K, False)
        for ret in fs.returns:
            E = ret.value
            if E is not None and E.__class__ is ast.Call:
                if any(kw.arg is None and kw.value.__class__ is ast.Name and kw.value.id == K
                       for kw in E.keywords):
                    c.ret_calls.append(E)
    a = c.node.args
    for x in a.posonlyargs + a.args + a.kwonlyargs:
        P = x.arg
        bs = fs.owned.get(P, ())
        if len(bs) != 1 or bs[0].kind != "param":
            continue
        if flows_into_result(fs, results, P, True):
            c.dict_params.append(P)


class Module:
    """One parsed project file."""

    def __init__(self, project, abspath, data=None):
        self.project = project
        self.abspath = abspath
        self.modname, self.is_pkg = project.modname_of(abspath)
        self.path = project.spell(abspath)
        if data is None:
            with open(abspath, "rb") as fh:
                data = fh.read()
        self.data = data
        self.tree = ast.parse(data, filename=abspath)
        self.src = Source(data)
        sb = ScopeBuilder(self.tree)
        self.scopes = sb.scopes
        self.module_scope = sb.module
        self.candidates = {}  # id(def node) -> Candidate
        for s in self.scopes:
            if s.kind != "function" or s.node.__class__ not in _FUNCTION_NODES:
                continue
            owner = s.parent
            cls_scope = None
            body = self.tree.body
            if owner.kind == "class" and owner.parent.kind == "module" and owner.node in body:
                cls_scope = owner
                if s.node not in owner.node.body:
                    continue  # a method stands directly in the class body
            elif owner.kind != "module" or s.node not in body:
                continue  # a module-level def stands directly in the module body
            c = Candidate(self, s.node, s, cls_scope)
            analyse_candidate(c)
            self.candidates[id(s.node)] = c

    def package(self):
        if self.is_pkg:
            return self.modname
        return self.modname.rpartition(".")[0]

    def text(self, node):
        return self.src.text[self.src.offset(node.lineno, node.col_offset):
                             self.src.offset(node.end_lineno, node.end_col_offset)]

    def start(self, node):
        return self.src.position(self.src.offset(node.lineno, node.col_offset))


def walk_project(root):
    """Every *.py / *.pyi file below ``root`` that the project index covers."""
    for dirpath, dirnames, filenames in os.walk(root):
        kept = []
        for d in dirnames:
            if d.startswith(".") or d in PROJECT_SKIP_DIRS:
                continue
            if os.path.exists(os.path.join(dirpath, d, "pyvenv.cfg")):
                continue
            kept.append(d)
        kept.sort()
        dirnames[:] = kept
        for name in sorted(filenames):
            if name.endswith(SOURCE_SUFFIXES):
                yield os.path.join(dirpath, name)


class Project:
    def __init__(self, root, spelled_root, single=None):
        self.root = root
        self.spelled_root = spelled_root
        self.by_name = {}
        self.names = {}
        self.modules = {}
        self.candidates_ready = False
        self.builders = set()       # id(def node) of builders
        self.kwarg_builders = set() # id(def node) of builders through their **K (cases 1-4)
        self.exempt = set()         # (id(call), id(keyword)): a **K passed on (case 4)
        self.resolved = {}          # id(call) -> Candidate or None
        self.classes = {}           # id(call) -> (Module, ClassDef) of the class called, or None
        self.abs_cache = {}
        files = [single] if single is not None else walk_project(root)
        for f in files:
            self.add_file(os.path.abspath(f))

    def add_file(self, abspath):
        if abspath in self.names:
            return
        rel = os.path.relpath(abspath, self.root)
        if rel == ".":
            rel = os.path.basename(abspath)
        parts = rel.replace(os.sep, "/").split("/")
        last = parts[-1]
        for suffix in SOURCE_SUFFIXES:
            if last.endswith(suffix):
                last = last[:-len(suffix)]
                break
        parts[-1] = last
        is_pkg = last == "__init__"
        if is_pkg:
            parts.pop()
        name = ".".join(parts)
        self.names[abspath] = (name, is_pkg)
        self.by_name.setdefault(name, []).append(abspath)

    def modname_of(self, abspath):
        self.add_file(abspath)
        return self.names[abspath]

    def spell(self, abspath):
        rel = os.path.relpath(abspath, self.root)
        if self.spelled_root in ("", "."):
            return rel if self.spelled_root == "" else os.path.join(".", rel)
        return os.path.join(self.spelled_root, rel)

    def module(self, abspath, data=None):
        if abspath not in self.modules:
            try:
                self.modules[abspath] = Module(self, abspath, data)
            except (SyntaxError, ValueError, UnicodeError, RecursionError, MemoryError,
                    OverflowError, OSError, SpanError):
                self.modules[abspath] = None
        return self.modules[abspath]

    def resolve_absolute(self, name):
        if not name:
            return None
        if name in self.abs_cache:
            return self.abs_cache[name]
        hits = list(self.by_name.get(name, ()))
        tail = "." + name
        for n, files in self.by_name.items():
            if n.endswith(tail):
                hits.extend(files)
        found = self.module(hits[0]) if len(hits) == 1 else None
        self.abs_cache[name] = found
        return found

    def resolve_name(self, mod, level, name):
        """Module ``name`` (None: the package itself) imported with ``level`` dots from ``mod``."""
        if level == 0:
            return self.resolve_absolute(name)
        parts = mod.package().split(".") if mod.package() else []
        up = level - 1
        if up > len(parts):
            return None
        base = parts[:len(parts) - up]
        if name:
            base = base + name.split(".")
        hits = self.by_name.get(".".join(base), ())
        return self.module(hits[0]) if len(hits) == 1 else None

    # -- builders --------------------------------------------------------

    def ensure_builders(self):
        if self.candidates_ready:
            return
        self.candidates_ready = True
        cands = []
        for abspath in sorted(self.names):
            try:
                with open(abspath, "rb") as fh:
                    data = fh.read()
            except OSError:
                continue
            if b"return" not in data:
                continue  # no function of it returns anything: no builder
            m = self.module(abspath, data)
            if m is not None:
                cands.extend(m.candidates.values())
        # builders through their **K (cases 1-4); a chain (case 4) ends in one of
        # these only ("Case 4 (chains) applies to **K only"), not in a builder
        # that is one through its dict parameters alone
        kb = {id(c.node) for c in cands if c.local}
        changed = True
        while changed:
            changed = False
            for c in cands:
                if id(c.node) in kb:
                    continue
                for call in c.ret_calls:
                    t = self.resolve_call(c.module, call, c.scope)
                    if t is not None and id(t.node) in kb:
                        kb.add(id(c.node))
                        changed = True
                        break
        self.kwarg_builders = kb
        self.builders = kb | {id(c.node) for c in cands if c.dict_params}
        for c in cands:
            if id(c.node) not in kb:
                continue
            for call in c.ret_calls:
                t = self.resolve_call(c.module, call, c.scope)
                if t is not None and id(t.node) in kb:
                    for kw in call.keywords:
                        if is_spread_of(kw.arg, kw.value, c.kwarg):
                            self.exempt.add((id(call), id(kw)))

    def resolve_call(self, mod, call, scope):
        key = id(call)
        if key not in self.resolved:
            self.resolved[key] = self._resolve_callee(mod, call.func, scope)
        return self.resolved[key]

    def resolve_class(self, mod, call, scope):
        """(Module, ClassDef) of the module-level class that the callee of
        ``call`` names, resolved as a builder call's callee is (a name bound
        once by ``class K`` or a followed ``from M import K``, or ``A.K``);
        None otherwise (docs/rules.md "**Calls on an instance**")."""
        key = id(call)
        if key not in self.classes:
            self.classes[key] = self._resolve_callee(mod, call.func, scope, classes=True)
        return self.classes[key]

    def export(self, mod, name, seen, classes=False):
        """The candidate ``mod``'s module scope binds ``name`` to (exactly once);
        with ``classes`` the (Module, ClassDef) of a module-level class."""
        if mod is None or (mod.abspath, name) in seen:
            return None
        seen.add((mod.abspath, name))
        bs = mod.module_scope.owned.get(name, ())
        if len(bs) != 1:
            return None
        return self.binding_target(mod, bs[0], seen, classes)

    def binding_target(self, mod, b, seen, classes=False):
        if classes:
            if b.kind == "other" and b.node.__class__ is ast.ClassDef and b.node in mod.tree.body:
                return mod, b.node
        elif b.kind == "def":
            c = mod.candidates.get(id(b.node))
            return c if c is not None and c.cls_scope is None else None
        if b.kind == "importfrom":
            target = self.resolve_name(mod, b.stmt.level, b.stmt.module)
            return self.export(target, b.node.name, seen, classes)
        return None

    def _resolve_callee(self, mod, func, scope, classes=False):
        # a module-level name, `A.name` with `A` a module-level name, or such
        # a name of a function's own scope bound there exactly once by an
        # import (docs/rules.md TS003, "a name bound exactly once in the
        # module scope" and "**Imports inside a function**": `def test_x():
        # from pkg.tools import probe` then `probe(...)` resolves as a
        # module-level import does); bound more than once, by anything else
        # in a function, or in a class body, a lambda or a comprehension, it
        # resolves nothing (callee_binding)
        if func.__class__ is ast.Name:
            b = callee_binding(mod, scope, func.id)
            return None if b is None else self.binding_target(mod, b, set(), classes)
        if func.__class__ is not ast.Attribute or func.value.__class__ is not ast.Name:
            return None
        base, attr = func.value.id, func.attr
        if base in ("self", "cls") and not classes:
            s = scope
            while s is not None and not (s.kind == "function" and s.node.__class__ in _FUNCTION_NODES):
                s = s.parent
            if s is None or s.parent is None or s.parent.kind != "class" or s.parent.parent.kind != "module":
                return None
            bs = s.parent.owned.get(attr, ())
            if len(bs) != 1 or bs[0].kind != "def":
                return None
            return mod.candidates.get(id(bs[0].node))
        b = callee_binding(mod, scope, base)
        if b is None:
            return None
        if b.kind == "import":
            if b.node.asname is None and "." in b.node.name:
                return None
            target = self.resolve_absolute(b.node.name)
        elif b.kind == "importfrom":
            st = b.stmt
            sub = b.node.name if not st.module else st.module + "." + b.node.name
            target = self.resolve_name(mod, st.level, sub)
        else:
            return None
        return self.export(target, attr, set(), classes)


_project_roots = {}


def find_marker_root(directory):
    """The nearest folder at or above ``directory`` holding a project marker."""
    seen = []
    d = directory
    while True:
        if d in _project_roots:
            found = _project_roots[d]
            break
        seen.append(d)
        if any(os.path.exists(os.path.join(d, m)) for m in PROJECT_MARKERS):
            found = d
            break
        parent = os.path.dirname(d)
        if parent == d:
            found = None
            break
        d = parent
    for s in seen:
        _project_roots[s] = found
    return found


def spelled_ancestor(spelled, abspath, root):
    """``root`` spelled the way ``spelled`` (the path of ``abspath``) is."""
    depth = len(os.path.relpath(abspath, root).split(os.sep))
    s = spelled
    for _ in range(depth):
        s = os.path.dirname(s)
    if os.path.abspath(s or ".") == root:
        return s
    return root if os.path.isabs(spelled) else os.path.relpath(root)


_projects = {}


def project_for(path, given):
    """The Project of file ``path`` found under PATH ``given``."""
    abspath = os.path.abspath(path)
    root = find_marker_root(os.path.dirname(abspath))
    single = None
    if root is None:
        if os.path.isdir(given):
            root = os.path.abspath(given)
        else:
            root = os.path.dirname(abspath)
            single = abspath
    key = (root, single)
    if key not in _projects:
        _projects[key] = Project(root, spelled_ancestor(path, abspath, root), single)
    proj = _projects[key]
    proj.add_file(abspath)
    return proj


def program_findings(mod):
    """TS003 and TS004 findings of module ``mod`` (suppressions applied)."""
    out = []
    src = mod.src
    proj = mod.project

    def add(code, origin, key, expression, builder, dict_pos, span, stats, source=None):
        if code in IGNORED_CODES:
            return
        (sline, scol), (eline, ecol) = span
        dline, dcol = dict_pos
        if silenced(src.comments, sline, scol, code) or silenced(src.comments, dline, dcol, code):
            stats["suppressed"] = stats.get("suppressed", 0) + 1
            return
        out.append({
            "path": mod.path, "dict_line": dline, "dict_column": dcol + 1, "code": code,
            "key": key, "expression": expression, "origin": origin, "builder": builder,
            "line": sline, "column": scol + 1, "end_line": eline, "end_column": ecol + 1,
        })
        if READS:
            note_origin(out[-1], source)

    def node_span(node):
        return (src.position(src.offset(node.lineno, node.col_offset)),
                src.position(src.offset(node.end_lineno, node.end_col_offset)))

    def entry_pos(d, i):
        code = "TS002" if d.keys[i] is None else "TS001"
        start, end = entry_span(src, d, i, code)
        return src.position(start), src.position(end)

    return out, add, node_span, entry_pos


def ts004_findings(mod, add, node_span, entry_pos, stats):
    src = mod.src
    for S in mod.scopes:
        results = result_names(S)
        if not results:
            continue
        writes = []  # (span start offset tuple, name, [(key, expression, span)])

        def classify(K):
            """("key", k) / ("none",) / ("dyn", text) for a subscript-like key."""
            if K.__class__ is _Constant:
                if K.value.__class__ is str:
                    return ("key", K.value) if K.value not in ALLOWED_KEYS else ("none",)
                return ("none",)
            return ("dyn", mod.text(K))

        def display_entries(d):
            hits = []
            for i, (k, v) in enumerate(zip(d.keys, d.values)):
                if k is None:
                    hits.append((None, mod.text(v), entry_pos(d, i)))
                elif k.__class__ is _Constant:
                    if k.value.__class__ is str and k.value not in ALLOWED_KEYS:
                        hits.append((k.value, None, entry_pos(d, i)))
                else:
                    hits.append((None, mod.text(k), entry_pos(d, i)))
            return hits

        for st in S.assigns:
            for t in st.targets:
                if (t.__class__ is ast.Subscript and t.value.__class__ is ast.Name
                        and t.value.id in results):
                    c = classify(t.slice)
                    if c[0] == "none":
                        continue
                    span = node_span(st)
                    hit = (c[1], None, span) if c[0] == "key" else (None, c[1], span)
                    writes.append((t.value.id, [hit], st))
        for call in S.calls:
            f = call.func
            if not (f.__class__ is ast.Attribute and f.value.__class__ is ast.Name
                    and f.value.id in results and f.attr in ("update", "setdefault")):
                continue
            hits = []
            if f.attr == "update":
                for a in call.args:
                    if a.__class__ is _Dict:
                        hits.extend(display_entries(a))
                    else:
                        hits.append((None, mod.text(a), node_span(a)))
                for kw in call.keywords:
                    if kw.arg is None:
                        hits.append((None, mod.text(kw.value), node_span(kw)))
                    elif kw.arg not in ALLOWED_KEYS:
                        hits.append((kw.arg, None, node_span(kw)))
            elif call.args:
                c = classify(call.args[0])
                if c[0] != "none":
                    span = node_span(call)
                    hits.append((c[1], None, span) if c[0] == "key" else (None, c[1], span))
            if hits:
                writes.append((f.value.id, hits, call))
        for aug in S.augs:
            t = aug.target
            if not (aug.op.__class__ is ast.BitOr and t.__class__ is ast.Name and t.id in results):
                continue
            if aug.value.__class__ is _Dict:
                hits = display_entries(aug.value)
            else:
                hits = [(None, mod.text(aug.value), node_span(aug.value))]
            if hits:
                writes.append((t.id, hits, aug))
        for name, hits, wnode in writes:
            bindings = results[name]
            for key, expression, span in hits:
                chosen = bindings[0]
                for b in bindings:
                    if src.position(src.offset(*b.pos)) < span[0]:
                        chosen = b
                d = chosen.value
                add("TS004", "later-write", key, expression, None, mod.start(d), span, stats,
                    ("write", wnode, S, name))


def dict_param_argument(t, call, P):
    """The arguments of ``call`` (of builder ``t``) bound to its dict parameter ``P``:
    the keyword ``P=E`` or else (a keyword-only ``P`` never) the positional
    argument at ``P``'s position, when no ``*args`` stands at or before it."""
    out = [kw.value for kw in call.keywords if kw.arg == P]
    if not out and P not in t.kwonly and P in t.positions:
        i = t.positions.index(P)
        args = call.args
        if len(args) > i and not any(a.__class__ is ast.Starred for a in args[:i + 1]):
            out.append(args[i])
    return out


def ts003_findings(mod, add, node_span, entry_pos, stats):
    proj = mod.project
    proj.ensure_builders()
    for S in mod.scopes:
        for call in S.calls:
            t = proj.resolve_call(mod, call, S)
            if t is None or id(t.node) not in proj.builders:
                continue
            bline, bcol = t.module.start(t.node)
            builder = {"name": t.node.name, "path": t.module.path, "line": bline, "column": bcol + 1}
            call_pos = mod.start(call)
            # extra keywords and `**m`: only at calls of a builder whose own **K
            # flows into its result (cases 1-4), not one by a dict parameter only
            for kw in call.keywords if id(t.node) in proj.kwarg_builders else ():
                if kw.arg is None:
                    if (id(call), id(kw)) in proj.exempt:
                        continue
                    add("TS003", "builder-call", None, mod.text(kw.value), builder, call_pos,
                        node_span(kw), stats, ("call", call))
                elif kw.arg not in t.params and kw.arg not in ALLOWED_KEYS:
                    add("TS003", "builder-call", kw.arg, None, builder, call_pos, node_span(kw), stats,
                        ("call", call))
            for P in t.dict_params:
                for E in dict_param_argument(t, call, P):
                    if E.__class__ is _Dict:
                        # read as a N.update({...}) write reads its display
                        for i, (k, v) in enumerate(zip(E.keys, E.values)):
                            if k is None:
                                add("TS003", "builder-call", None, mod.text(v), builder, call_pos,
                                    entry_pos(E, i), stats, ("call", call))
                            elif k.__class__ is _Constant:
                                if k.value.__class__ is str and k.value not in ALLOWED_KEYS:
                                    add("TS003", "builder-call", k.value, None, builder, call_pos,
                                        entry_pos(E, i), stats, ("call", call))
                            else:
                                add("TS003", "builder-call", None, mod.text(k), builder, call_pos,
                                    entry_pos(E, i), stats, ("call", call))
                    elif E.__class__ is _Constant and E.value is None:
                        continue
                    else:
                        add("TS003", "builder-call", None, mod.text(E), builder, call_pos,
                            node_span(E), stats, ("call", call))


# --------------------------------------------------------------------------
# --reads: reads of moved keys (docs/rules.md "Reads of moved keys")
#
# Every finding of the project is an origin (the whole scanned tree is the
# project, every file "given").  A finding's origin is the fix that moves its
# key: the shaped display (TS001, and TS002 of the same display), the write
# statement (TS004) or the builder call (TS003).  Producers are the candidate
# functions (module level or methods of a module-level class) whose returns
# carry keyed origins (cases 1-4, a fixpoint); receivers are the calls that
# resolve to a producer, calls of a builder with TS003 key findings, direct
# tool calls `X.tool.NAME(...)`, calls on an instance `K(...).m(...)` /
# `N.m(...)` (`N = K(...)` bound once in the scope reading it) of a method
# of a module-level class `K` that is a producer, and names bound exactly
# once by `R = C`; a receiver call awaited (`await C`) is read as the awaited
# expression: the reads of `await C` and of a name bound once by
# `R = await C` are C's ("**Awaited calls.**").
# The read forms are looked for around each receiver: the keyed ones, the
# whole uses and the reads of the content list (`E["content"]`, form content
# or block, which every fix changes); the last two, like whole reads, carry
# no key.
#
# Readings chosen where docs/rules.md leaves a choice (the conservative one,
# more reads, unless the text is explicit):
#  * whole (and content / block) reads reach every finding of an origin,
#    keyed or not: the TS002 spreads of an origin display, the dynamic TS004
#    findings of an origin write statement, the `**m` / dynamic
#    dict-parameter findings of an origin call (a TS002 / dynamic finding is
#    an origin only this way);
#  * a TS004 origin is the smallest statement holding the write (for
#    `print(N.update(k=1))` the whole statement);
#  * suppressed (and --ignore'd) findings are no origins;
#  * `E.get/pop/setdefault(...)`: the first positional argument is the key,
#    any further arguments or keywords are not looked at; `E.keys/values/
#    items(...)` with any arguments; `dict(E, ...)` and `json.dumps(E, ...)`
#    with E the first positional argument; `**E` in a class statement's
#    keywords is no call argument;
#  * any Store subscript is `store` (`E["k"]: T = v`, `for E["k"] in ...`,
#    and the bare annotation `E["k"]: T`);
#  * likewise `E["content"]` is a read (`content` / `block`) only as a Load:
#    any Store or Del subscript of it (the targets above, `with ... as
#    E["content"]`, a comprehension's target) is no read at all;
#  * in a chained comparison each `"k" in E` pair is a read, span the whole
#    comparison;
#  * literal where the text is explicit: `R: T = C` (annotated), `a = R = C`,
#    `R := C` and a conditional `A if c else B` are not followed (nor are
#    `R: T = await C`, `a = R = await C`, `R := await C`); a direct tool call
#    matches the def's name, not a `@tool(name=...)` argument; a producer may
#    be a method or `async def`; a name's binding may stand in a nested scope
#    (`global` / `nonlocal`) and its reads may come before it.
#
# Awaited calls ("**Awaited calls.**"): a receiver call C (any kind above)
# that is the operand of an `await` is read as the awaited expression.
# Readings chosen:
#  * "the operand of `await`, parentheses seen through": an ast.Await whose
#    value is the call itself (ast drops the parentheses of `await (C)` and
#    `(await C)`); `await C["k"]` awaits the subscript, a read of C itself;
#    `await (await C)`, `await (C or D)`, `await C.x` add nothing; an `await`
#    outside an `async def` (ast accepts it) counts like any other;
#  * the reads of `await C` are found around the Await node as around any
#    receiver (every form, whole and content reads too); a span starts where
#    the read's own node does, so `(await C)["k"]` spans from its "(", the
#    parentheses written around the receiver being part of the subscript;
#    the call itself, its parent the Await, has no reads of its own;
#  * `R = await C` is `R = C` with the Await seen through: one target, a plain
#    ast.Assign, R bound exactly once by the scope owning it, reads in scopes
#    nested in that scope not followed; the possible-receiver exclusion takes
#    `R = await C` with C any call (a receiver or not), as for `R = C`;
#  * calls on an instance: an awaited call `await N.m(...)` /
#    `await K(...).m(...)` is a receiver like the others, but `N = await
#    K(...)` binds no instance name and `(await K(...)).m(...)` is no call on
#    an instance (the paragraph names the receiver calls only).
#
# Names bound in sequence (the receiver paragraph "a name `R` bound **in
# sequence**"): a function's scope S owning R binds it more than once, every
# binding being a plain `R = V` statement of the function's own block; a
# load of R standing in S itself is then a receiver of C's keys when the last
# of those statements ending before the load starts has `V` a receiver call
# C or `await C`.  Readings chosen (the conservative one where the text leaves
# a choice):
#  * "every binding of R that resolves to S" is every binding S owns (as
#    ScopeBuilder assigns them, a nested scope's `nonlocal R` binding
#    included, which stands in no statement of S's block): each must be an
#    ast.Assign with exactly one target, that target the name itself, the
#    statement one of the def's `body` list (so not in an `if`, a loop, a
#    `with`, a `try`, a `match`, a nested def).  A parameter, `R: T = V`,
#    `a = R = V`, `R, x = V`, `R += V`, `R |= V`, `(R := V)`, `for R in`,
#    `with ... as R`, `except ... as R`, `import R`, `def R`, a capture
#    pattern and `del R` are bindings that are no such statement (`del R`
#    counts as a binding, as for "**Results handed on.**": Python makes the
#    name local for it), so the name is not bound in sequence and the rules
#    of a name bound twice apply: no receiver, every call bound handed on;
#  * "a function's scope": a `def` / `async def` (a lambda has no
#    statements); a module or class body never;
#  * "ends before the load starts": the statement's end position (ast's
#    end_lineno / end_col_offset, end exclusive) at or before the load's start
#    (lineno / col_offset); so a load in V (or anywhere inside statement i)
#    sees statement i - 1, a load in a compound statement between two
#    bindings sees the earlier one, a load before the end of the first sees
#    none (no receiver);
#  * "the load standing in S itself": as for every other read, the name node
#    stands in S's own scope (stands_in, see "Annotations" below: a
#    comprehension's first iterable, a nested def's defaults and decorators,
#    a lambda's defaults, a class's bases and keywords do; every annotation
#    (a nested def's, a variable's `x: R`, ...), bodies of nested defs,
#    lambdas, class bodies and the rest of a comprehension do not);
#  * a statement whose V is no receiver call (`R = None`, `R = other(...)`,
#    `R = R2`) gives its loads no receiver; the rest of the sequence is not
#    affected;
#  * the existing rules are unchanged: a marked name (`tool_result`) bound in
#    sequence stays a possible receiver (the exclusion is of a name bound
#    "exactly once"), so its keyed reads are listed twice, traced and
#    possible; instance names `N = K()` are still bound exactly once.
#  * results handed on: a binding `R = H` of a name bound in sequence is not
#    handed on when no load of R resolving to S stands in a nested scope or
#    before the end of the first statement (such a load hands on every
#    binding of R), and every load of R standing in S that sees this
#    statement is the receiver of a read of a form above (of any key, as for
#    a name bound once).  A binding no load sees is not handed on.  Only
#    ast.Name loads are references, as for a name bound once.

# Calls on an instance ("**Calls on an instance**"), for receivers only (a
# producer's `return K().m()` is no case 4).  Readings chosen:
#  * "that the rules above do not resolve": the callee does not resolve as a
#    builder call's callee does (a `self.m` / `cls.m` that resolves is never
#    taken for an instance, whatever it resolves to);
#  * `K(...)` resolves as a builder call's callee, with `class K` in place of
#    the def: a name (its one binding in the module, or an import bound
#    once in a function's own scope: callee_binding; imports and re-exports
#    followed) or `A.K`; the `class K` statement stands
#    directly in its module's body; `self.K(...)` / `cls.K(...)` are none;
#  * "m a def directly in K's body": K's class scope binds `m` exactly once,
#    by that `def` / `async def` standing in the class body itself (as for
#    `self.m`): a second binding of `m` in the body (another def, `m = ...`)
#    or a def nested in an `if` of the body resolves nothing; decorators
#    (`@classmethod`, `@staticmethod`, `@property`...) are not looked at;
#  * the name `N` as for `R = C`: `N: T = K()`, `a = N = K()`, `N := K()`,
#    a name bound twice, a read in a nested scope are none (an annotation is
#    one, "**Annotations.**": so `def g(x: N.m())` or `y: N.m() = 1` calls
#    nothing known, no receiver, nothing handed on; a def's defaults and
#    decorators stand in S and count); `N`'s binding
#    may stand in a nested scope (`global`), its call `K(...)` resolved in
#    the scope where it stands; `N` read before its binding counts;
#  * the call is narrowed by dispatch as `self.m(...)` is (every parameter
#    of `m`, its receiver parameter too, may be a dispatch keyword).
#
# Possible reads ("**Possible reads.**"): the possible receivers are looked
# for in every project file that holds a marker and a quoted moved key (see
# below), whatever the receivers above.  Readings chosen:
#  * "a file that holds": its bytes as read (comments, strings and docstrings
#    included; the BOM too), case-sensitive: a marker is one of the bytes
#    `tool_result`, `toolResult`, `ToolResult`, `ToolCallEvent`,
#    `ToolInvocationEvent` anywhere; "some moved key between quotes as
#    written": for a key `k` of the project's findings (suppressed ones are
#    no findings, so their keys are not moved), the UTF-8 bytes of `"k"` or
#    `'k'` anywhere (so `u"k"`, `"""k"""` and a comment `# the "k" key` hold
#    it; `"k" "..."` holds `"k"`, the key `k`); any moved key will do, not
#    only the key of the read: "a key spelled by implicit concatenation or
#    escapes is not seen there" is read as "does not make the file
#    searched", so in a file searched a read of a key spelled `"fr" "ames"`
#    or with escapes is a possible read (keys are "any constant string
#    spelling");
#  * one node is one receiver: a name both marked (`tool_result`) and a
#    parameter annotated `ToolResult` gives each of its reads once;
#  * the markers `tool_result` / `toolResult` are case-sensitive substrings
#    of the name's or the attribute's text (`tool_results`, `last_toolResult`
#    are marked; `ToolResult`, `TOOL_RESULT` are not);
#  * a marked name counts wherever it is read (the scope rule is only for
#    the annotated parameters and `P.result`), an annotation aside (below),
#    also when it is a parameter
#    (a parameter is no `R = C`), an import, a `for` target or unbound;
#  * the exclusion `R = C` is judged on the scope owning the name where it is
#    read (`global` / `nonlocal` followed, a class body not seen from its
#    methods), so a marked name bound once by `R = C` is no possible
#    receiver in nested scopes either; `R = await C` (C a call) is such an
#    assignment too (docs/rules.md names it); `R: T = C` (annotated),
#    `a = R = C` (and the same with `await C`) or a name bound twice are no
#    such assignment, so their marked names stay possible receivers (as for
#    the traced names, the text is explicit: "a plain assignment `R = C` or
#    `R = await C` with one target");
#  * `X["toolResult"]`: a load whose one index, parentheses seen through, is
#    written exactly `"toolResult"` or `'toolResult'`, judged by the index's
#    source text (the string constant's own span, which leaves out the
#    parentheses around it, as `ast.get_source_segment` does); `X` anything
#    (a call, a name, another subscript).  Not the index's value: implicit
#    concatenation (`"tool" "Result"`), escapes (`"tool\x52esult"`), a
#    prefix (`r"toolResult"`, `u"toolResult"`) or triple quotes give no
#    possible receiver, unlike the keys read and `"content"` ("any constant
#    spelling");
#  * the parameter is a positional-only, positional or keyword-only one;
#    not `*args: ToolResult` or `**kwargs: ToolResult`, whose annotation
#    types each argument: the name is a tuple or a dict of them, plainly
#    no tool result ("is plainly a tool result handed on by the SDK"), and
#    `args["k"]` no read of a key `k` of one; "annotated `ToolResult`": the
#    annotation is exactly the name `ToolResult` or an attribute whose name
#    is `ToolResult` (not a string, `Optional[ToolResult]`, a subscript);
#    likewise for `AfterToolCallEvent` / `AfterToolInvocationEvent`;
#  * "read in that function's own scope": the name (for `P.result`, the name
#    `P`) stands in the `def`'s own scope, not in a nested function, lambda,
#    class body or comprehension (whose first iterable stands in the
#    enclosing scope, so it counts); defaults and decorators of a nested
#    `def` stand in the enclosing scope, so they count; a rebinding of the
#    parameter in the function does not stop it being the parameter;
#  * in an annotation ("**Annotations.**", see below) no possible receiver
#    of any kind is looked for: a marked name or attribute, `X["toolResult"]`,
#    an annotated parameter, `P.result` or an alias written there
#    (`def g(x: tool_result["k"])`, `y: P.result["k"] = 1`) reads nothing;
#  * `P.result`: an attribute named exactly `result` of the name `P`; a
#    marked attribute `X.A` also when `X` is a call (`make().tool_result`);
#  * only the eight keyed forms of a possible receiver are possible reads,
#    and only of keys that some finding of the project has (every such
#    finding gets them, whatever its code or origin); suppressed findings
#    are no findings; a possible read is a read record of its own even when
#    the same span is also a read of a traced receiver.
#  * aliases ("A name bound to one of these is one too"): a load of a name N
#    is a possible receiver when the scope it resolves to (`lookup`: `global`
#    / `nonlocal` followed, a class body not seen from its methods, a
#    comprehension's own targets owned by it) owns, among its bindings of N,
#    at least one plain `N = E`.  Any other bindings of N (a call, a tuple, a
#    `for`, a second alias) do not matter, nor does where the read stands
#    relative to the binding (before it, in another branch) or how deep:
#    reads in functions, lambdas, classes and comprehensions nested in the
#    owning scope count when they resolve to it (unlike the traced `R = C`);
#  * "plain `N = E` with one target": an ast.Assign with exactly one target,
#    that target a name (`(N) = E` is one, ast drops the parentheses);
#    `N: T = E`, `a = N = E`, `N, z = E, 1`, `[N] = [E]`, `N += E`, `N |= E`,
#    `(N := E)`, `for N in`, `with E as N`, `import` / `from M import N`
#    (aliases are not followed across modules) bind N but are no such
#    assignment;
#  * E (parentheses seen through, as ast does) a load subscript
#    `X["toolResult"]` (its index as written, as above), a marked attribute
#    `X.A` (X anything) or `P.result`, judged by is_possible_receiver in the
#    scope whose code holds the assignment (binding_scopes: for `global N`
#    / `nonlocal N` in a def, that def's scope, not the owner's), so
#    `P.result` needs P an annotated parameter of the def whose own scope
#    holds `N = P.result`; E a name (marked, an annotated parameter or
#    another alias: no chains), `await E`, `E or d`, `E if c else d`,
#    `E.get(...)`, `E["k"]` or a call give no alias;
#  * the exclusion of a marked (or `ToolResult`-annotated) name bound once by
#    `R = C` / `R = await C` is unchanged and never meets an alias (its one
#    binding is then a call); a name both marked and an alias, or an
#    annotated parameter rebound as an alias, is one receiver: each read once.
#
# Dispatch by a constant ("**Dispatch by a constant.**"): a receiver call of
# a producer F (resolved, or each producer of a direct tool call, narrowed by
# its own parameters) with keywords P=C reaches the returns of F's own scope
# that can run under all of them.  Readings chosen:
#  * C is a `str` constant by value (implicit concatenation, escapes and
#    prefixes are constants); an f-string, bytes, a name or `"a" + "b"` are
#    none; a call's other arguments (positional ones, `**kw`) do not stop a
#    keyword narrowing;
#  * "a parameter of F other than *args and **kwargs": a positional-only
#    parameter is one (the text does not leave it out); "binds only as that
#    parameter": F's own scope owns exactly one binding of P, the parameter
#    (a nested scope's `nonlocal P` binding, a `del P`, a `for P`, an
#    `except ... as P`, a walrus in a comprehension bind it too);
#  * a test `P == C2` is one `ast.Compare` with one `ast.Eq` between a name
#    `P` and a `str` constant (either side, any spelling); `!=`, `is`, `in`,
#    chained comparisons, `and` / `or` and `not` are no such tests;
#  * Python's ast writes `elif` as an `if` alone in `orelse`, as it writes
#    `else:` holding only an `if`: both are in the `else` clause (at any
#    depth) and that `if`'s body is the body of an `if`, so the two readings
#    agree; the rules apply to an `if` at any depth in F's own scope (in a
#    loop, `with`, `try`, `match`), except the third: its `if` stands in F's
#    body itself (whatever its `elif` / `else`), its body's last statement a
#    `return` (bare or not) or `raise`, and the returns after it are those
#    of the statements that follow it in F's body;
#  * a call's keys from builder findings (origin the call) are not narrowed;
#    a return `G(...)` gives keys(G) whole, whatever its own keywords.

# Annotations ("**Annotations.**"): nothing in an annotation is read, a load
# of a name there is a use in a scope nested in the one the annotation
# stands in, a receiver call there is handed on.  The annotations
# (annotations_of): a def's parameters' (positional-only, positional,
# keyword-only, `*args`, `**kwargs`) and its return's, a variable's
# (ast.AnnAssign.annotation, `x: A` and `x: A = v`, in a module, a class
# body or a function), the value of `type X = ...` (ast.TypeAlias.value)
# and a type parameter's bound or constraints (and its default, PEP 696),
# each at any depth (annotation_nodes).  Readings chosen:
#  * the scope notion stays shared and unchanged: ScopeBuilder and
#    module_nodes put annotations (and type parameters) in the scope S they
#    stand in, since name resolution (builders, producers, tools, `self.m`,
#    escapes' callees), TS003 / TS004 and TS005 use them, and from an
#    annotation scope a name resolves to the same binding as from S; so the
#    change is local to the reads rules: stands_in(mod, node, sc) gives
#    None (a nested scope binding nothing) for every node in an annotation,
#    and every "in S itself" / "nested in S" question of the reads rules
#    asks it: a name bound once by `R = C` (its loads there are no
#    receivers, and hand C on: kept_names), a name bound in sequence (no
#    receiver there; every binding handed on: sequence_kept), the instance
#    names `N` of calls on an instance (not followed there: `N.m(...)` is
#    no receiver call, `N.m` no escape);
#  * "no read of any form": project_reads skips every receiver node (a
#    call, `await C`, a name) standing in an annotation, and
#    is_possible_receiver is false for every node there (marked names and
#    attributes, `X["toolResult"]`, annotated parameters, hook events'
#    `P.result`, aliases), so a read whose receiver stands in an annotation
#    is none (a read's node holds its receiver, so it stands in the same
#    annotation);
#  * "a receiver call in an annotation is handed on, whatever holds it":
#    one `escape` read at H (`await C` when awaited, "**Results handed
#    on.**"), whatever H's parent (a read form, an argument, the annotation
#    itself); the calls there are receivers as anywhere (resolved where
#    ScopeBuilder puts them, the scope the annotation stands in), but
#    `N.m(...)` is none (above), `K(...).m(...)` is one;
#  * escapes ("**Escapes.**") are found in annotations as anywhere else:
#    `def g(x: probe)`, `y: probe = 1`, `K(...).m` there are uses as values;
#    `N.m` is none (an instance name is not followed there);
#  * a lambda has no annotations; a def's decorators and defaults
#    (keyword-only ones too), a lambda's defaults, a class's decorators,
#    bases and keywords, a comprehension's first iterable stand where they
#    are written (unless they stand inside an annotation: a lambda's default
#    or a comprehension written in an annotation is in it);
#  * what is no annotation in an annotated assignment stands where the
#    statement stands: its value (`x: A = C` hands C on as before: the
#    assignment is annotated) and its target (`E["k"]: A = v` and the bare
#    `E["k"]: A` are `store` reads of E, as before);
#  * "any level": the annotation of a variable in a module, a class body or
#    a function, in a compound statement too; a def's annotations wherever
#    the def stands (a module's, a class body's, a function's);
#  * type parameters (Python 3.12+, this implementation's ast may lack
#    them): ScopeBuilder and module_nodes visit a def's or a class's type
#    parameters in the scope the def or class stands in (as its decorators),
#    `type X = ...` (its name, type parameters and value) where the
#    statement stands; all their bounds, constraints and defaults and the
#    alias's value are annotations.

# Results handed on ("**Results handed on.**"): every receiver call C (any
# kind: producer, builder with TS003 keys, direct tool call, call on an
# instance; its keys narrowed by dispatch as for its reads) has one read of
# form escape (no key) at H (`await C` when C is awaited, else C; span H's
# node, parentheses around it not included, so `(await (C))` spans
# `await (C)`), for every finding of every origin of the receiver, unless H
# (ast has dropped parentheses) is: the receiver of a read (reads_at gives one
# for H where it stands), the value of an ast.Expr or an ast.Return, or the
# value of `R = H` binding a receiver name R (R bound once, by this
# assignment, by the scope owning it) when that scope is a function's and
# every load of R resolving to it stands in it and is the receiver of a read,
# or the value of one of the statements binding a name R in sequence (see
# "Names bound in sequence" above: judged binding by binding, sequence_kept).
# Readings chosen:
#  * "the receiver of a read of one of the forms above" is the form written,
#    whatever the key: `C["status"]`, `C.get("other")`, `"x" in C` with a key
#    nothing moves are reads of C, so not handed on; `C[0]`, `C[k]`,
#    `C.get(k)`, `C.get(key="k")`, `C.copy()`, `C is None`, `len(C)`, and the
#    content list as a target (`C["content"] = []`, no read at all) hand it
#    on;
#  * `del R`, `R += x`, `R |= x`, `for R in`, a walrus or a nested
#    `nonlocal R` rebinding R are bindings: R is bound twice, no receiver,
#    so handed on (and not bound in sequence either: every `R = C` of it is
#    handed on); `global R` in the function makes the module own R (handed
#    on); a `global` / `nonlocal` declaration without a load is no reference;
#    only ast.Name loads are references (the assignment's own target aside);
#  * a name never loaded (`unused = C` in a function) is not handed on ("every
#    reference" of none); `return R` is a load that is no read: handed on;
#  * a load of R in a comprehension, lambda, nested def or class body nested
#    in the function (resolving to it) hands it on, and so does a load in an
#    annotation (a nested def's, a variable's `y: R = 1` in the function: a
#    scope nested in the function, "**Annotations.**", whatever read form it
#    stands in); the first iterable of a comprehension, a nested def's
#    defaults and decorators, a lambda's defaults and a class's bases and
#    keywords stand in the function itself (a read there counts);
#  * a receiver call written in an annotation is handed on whatever holds it
#    (`def g(x: C["k"])`, `y: C.get("k") = 1`, `-> await C`): no read there;
#  * a lambda body, a default, a decorator, `yield C`, a display, an argument,
#    `self.r = C`, a conditional, `if C:`, `for k in C`: handed on; `await C`
#    as a statement or returned is not; the awaited call itself gets no read
#    of its own (its H is the Await);
#  * `C` on the right of an annotated, chained, tuple or walrus assignment,
#    or `R = C` in a module or a class body: handed on, R's own reads (a
#    receiver name of a module or class) listed beside it.
#  * "**Assertion messages.**": for a name bound once by `R = C` in a
#    function's scope S, and for the bindings of a name bound in sequence
#    (the loads that see the binding in question, as reads), a load of R in
#    S itself that stands in the message of an `assert` (the expression
#    after its comma) hands nothing on and is no read: the message is the
#    name (parentheses are no nodes), or the message is an ast.JoinedStr
#    (an f-string, or an implicit concatenation holding one: ast makes it
#    one JoinedStr; plain strings only are a Constant, with no fields) one
#    of whose own FormattedValue parts has the name as its value, whatever
#    its conversion (`!r`, the `=` of `f"{r=}"` is a conversion and a
#    constant part) and its format spec (`f"{r:>8}"`: R is still the
#    field's whole expression).  Not: a FormattedValue of a format spec
#    (`f"{x:{r}}"`, its JoinedStr's parent is a FormattedValue), of an
#    f-string nested in a field (`f"{f'{r}'}"`), `str(r)`, `(r, x)`,
#    `r or x`, `f"{r}" + s`, a t-string (no f-string), the assert's test
#    (`assert r`: no read; `assert r == {...}`: a whole read as anywhere).
#    A message load in a nested scope, before the first binding in sequence
#    ends, or of a module's or class body's name hands on as before
#    (assertion_message).

# Results handed to a checking function ("**Results handed to a checking
# function.**", class Flow): a value V that would hand a result on (H, or a
# load of R judged by the last two cases above) does not when it is the
# positional argument at position i of a call `F(...)` (no `*a`, no `**k`)
# whose callee, as written (no parentheses around it: the Name starts where
# the Call does), is a name resolving to the module scope's one binding, the
# `def F` (not async, undecorated) standing in the module's own body, whose
# parameter at position i (posonlyargs + args; beyond them a `*args`, a bare
# `*` or nothing: no checking function) is a checking parameter P
# (checking_params): no yield / yield from in F's own scope; F's scope binds
# P once (the parameter); every Name load of P resolving to it stands in F's
# own scope (not in an annotation) and is the receiver of a read (reads_at:
# its reads), in an assertion's message (assertion_message) or the whole
# value of a `return` (F passes the result through); any other reference
# (a store, `del`, a nested scope's load or `nonlocal` binding) disqualifies.
# Then F's reads of P are reads of the receiver (each call's V contributes
# them afresh: read records at F's spans, given to the findings of V's
# origins, once per such call), and when F passes the result through the
# call G = `F(...)` is judged as H (Flow.handed_g): the receiver of a read,
# an expression statement, the value of `R2 = G` (R2 bound once, judged as
# `R = H`, or a binding in sequence), or a positional argument of a checking
# function again; anywhere else (a `return`, `await G` included) the result
# is handed on "at V".  Readings chosen:
#  * "handed on at V": V hands the result on as before, so the escape read
#    is H's (span H) — for V = H the same thing; a load of R hands its
#    binding's H on (no new span);
#  * a load of R "in the last two cases": a load of a name bound once by
#    `R = X` (X carrying a result: a receiver call, `await C`, or a call G
#    passing one through) owned by a function's scope, standing in it, or a
#    load standing in a function's scope seeing a binding in sequence whose
#    value carries one; a load of a module's or class body's name, or in a
#    nested scope, is no such V (it stays handed on, and contributes no
#    reads of a checking function);
#  * `R2 = G` makes R2 a receiver (bound once, in any scope, or in sequence)
#    of the keys G carries (the union over G's passed-through arguments);
#    its reads are the receiver's, its loads judged as R's;
#  * the same receiver handed twice to F (two calls) lists F's reads twice
#    for its findings ("afresh"); one call contributes them once;
#  * a receiver call written in an annotation is handed on whatever holds
#    it, a checking function's call too;
#  * cycles (a name whose value passes a load of itself through, loaded
#    before it is bound): the least answers, keys a union over the cycle,
#    being kept a conjunction (so a cycle hands its result on).

# Escapes ("**Escapes.**"): a use as a value of a producer F that is no tool
# is a read of form escape (no key) of every origin a receiver call of F
# without arguments reaches.  Readings chosen:
#  * the uses looked at are the ast.Name and ast.Attribute nodes in a Load
#    context (parentheses are no nodes): X is a use when a call X(...) in its
#    place would resolve, as a receiver call does, to F (escape_target:
#    Project._resolve_callee, then the instance forms of instance_method) and
#    X is neither the func of an ast.Call nor the value of an ast.Attribute;
#    `def` names and import aliases are no nodes of that kind, so never uses;
#  * "not a target of an assignment, `for` or `del`": every Store / Del
#    context is left out, so also the target of an augmented assignment
#    (`self.m += x`, which the sentence does not name; a name target rebinds
#    the name anyway), of an annotated one, of `with ... as`, of a
#    comprehension's `for` and of `del`;
#  * everything else that loads X is a use: an argument, a display element,
#    an assignment's value, a returned value, an operand (`F is None`,
#    `F == G`, `not F`, `await F`), a subscript's value (`F[0]`), a lambda
#    body, a parameter default, an annotation of any kind (names resolve as
#    Python resolves them: from an annotation scope as from the scope the
#    annotation stands in), a decorator `@F` (no ast.Call); but the instance
#    form `N.m` in an annotation is none, as a call `N.m(...)` there would be
#    none ("**Annotations.**": `N` is read in a nested scope; it resolves
#    to nothing there, but in an annotation it is neither wrapped nor
#    renamed: no unresolved use either, see below);
#  * `self.m` / `cls.m` resolve as in a call: the nearest enclosing def
#    (lambdas and comprehensions seen through) is a method of a module-level
#    class whose body binds `m` once, by a def; `N.m` as for calls: `N`
#    bound once in the scope reading it by `N = K(...)` (a read in a nested
#    scope, `N: T = K()`, `a = N = K()`, `N` bound twice: none); `K.m` on the
#    class and a method a subclass inherits resolve nothing;
#  * the tool exemption looks at F's own decorators only: a producer that is
#    no tool and chains onto a tool escapes with the tool's origins too
#    ("every origin that a receiver call of F without arguments reaches");
#  * a use X of a tool escapes only through a wrapper (wrapped_use), when
#    it gives the tool another name (renamed_use) or when it is handed to a
#    call that keeps what it gives (kept_call_use).  Wrapped: X is the one
#    element of the args of an ast.Call C1 with no keywords (a `*X` is an
#    ast.Starred, whose parent is no Call), and C1 is the func of an ast.Call
#    (parentheses are no nodes, so they are seen through).  Renamed: X is
#    the value of an ast.Assign (one target or chained, `a = fn = X`; any
#    target: a name, `self.fn = X`, `d["k"] = X`, and, read literally as
#    "the whole value of an assignment", a tuple target `a, b = X` too), of
#    an ast.AnnAssign (`fn: T = X`), of an ast.NamedExpr (`(fn := X)`), of an
#    ast.Return, of an ast.Yield (not an ast.YieldFrom), or one of the
#    values of an ast.Dict whose key is not None (a `**X` entry has the key
#    None: no pair).  Not: an element of a tuple (`a, b = X, 1`,
#    `return X, 1`, `yield X, 1`: X's parent is the ast.Tuple), an
#    ast.AugAssign's value (`x += X`: not among the forms the rule names), a
#    dict display's key (`{X: 1}`), a dict comprehension's value
#    (`{k: X for k in ks}`: the rules call only the literal `{...}` a
#    display, a comprehension is named apart), a lambda's body
#    (`lambda: X`: no `return` statement), a parameter default, a keyword
#    argument (`dict(run=X)`), a conditional or a boolean operation
#    (`fn = X if c else None`: not the whole value), `type A = X`, an
#    annotation (`fn: X = None`: X is the annotation, not the value).
#    Kept: X is one of the args of an ast.Call C (positional: a `*X` is an
#    ast.Starred, a keyword's value an ast.keyword, neither a Call) whose
#    parent, past one ast.Await (`await C`; parentheses are no nodes), is no
#    ast.Expr (an expression statement drops the value: `register(X)`,
#    `await loop.run(X)`), so `f = partial(X)`, `r = await to_thread(X, a)`,
#    `list(map(X, xs))` (map's parent is list's call), `assert sig(X)`,
#    `return run(X)`, `lambda: run(X)`, `[run(X)]`, a decorator `@reg(X)`,
#    `raw(X, None)("q")` (also wrapped_use's shape with one argument); unless
#    C's func is an ast.Name among LOOKING_BUILTINS (`callable`,
#    `isinstance`, ... `bool`) that lookup resolves to no binding from X's
#    scope (a module-level `def callable`, an import of it, or a binding of
#    a function or class body the load resolves to, makes it an escape
#    again: "a bare name that resolves to no binding of the module") in a
#    module holding no star import (anywhere in its tree); `builtins.repr(X)`
#    is no bare name: kept.  Two awaits (`await await C`) are not seen
#    through;
#  * the span is X's node (`(F)` spans `F`); one read per use and finding,
#    whatever the number of origins of that finding reached (each finding has
#    one origin), given to every finding of every origin (keyless TS002 /
#    TS003 / TS004 findings of those origins too, as for whole reads).

# Decorators ("**Decorators.**"): each decorator D of the def of a producer
# F (a candidate: module level, or directly in a module-level class's body,
# with keys(F) not empty; a tool too) is a read of form escape (no key), span
# D, of every origin a receiver call of F without arguments reaches
# (escape_origins), unless D is exempt.  Readings chosen:
#  * D is the ast node of the def's decorator_list (parentheses are no
#    nodes: `@(staticmethod)` is the name `staticmethod`, exempt, and the span
#    of `@(log)` is `log`); one read per decorator and finding, so two
#    decorators give two reads, the same decorator written twice two reads;
#  * exempt: a tool decorator as is_tool_decorator sees it (`tool`,
#    `strands.tool`, `strands.tools.tool`, called with any arguments or
#    not), an ast.Name `staticmethod` / `classmethod` / `abstractmethod` /
#    `override`, an ast.Attribute `abc.abstractmethod` / `typing.override` /
#    `typing_extensions.override` whose value is the ast.Name written so;
#    "as written": whatever those names are bound to (a project function
#    named `override` too), and a call of one (`@staticmethod()`,
#    `@override(x)`), a longer chain (`x.abc.abstractmethod`) or another
#    spelling (`@builtins.staticmethod`, `@abc.abstractproperty`) is no
#    exemption;
#  * the decorators of a def that is no candidate (nested in a function, in
#    a nested class, under an `if`) and of a class are never looked at; nor
#    are the decorators of a producer's def read otherwise: a decorator that
#    is itself a use as a value of a producer G (`@G`) is also G's escape
#    ("**Escapes.**"), a read of its own, and a decorator call that is a
#    receiver or an unresolved call has its reads as any call.

# Uses as a value toolshape cannot resolve ("**Uses as a value toolshape
# cannot resolve**"): unresolved_use_reads.  Readings chosen:
#  * "standing where Escapes looks for one": the ast.Name / ast.Attribute
#    loads that is_value_use takes (not an ast.Call's func, not an
#    ast.Attribute's value; Store / Del contexts are no loads), anywhere,
#    as for escapes, but counted in the forms below only (an annotation, a
#    decorator `@N`, a default is neither wrapped nor renamed: never one);
#    each node judged once, so `pkg.tools.probe` is one use (`pkg.tools` is
#    the object of an attribute);
#  * a name's bindings: lookup from the scope module_nodes gives the node (an
#    annotation's names resolve where it stands); the module's (any kind, any
#    number: `N = make()`, `try: from M import N / except: N = None`, a
#    `global N` rebinding), none (a builtin, a star import, `global N` of a
#    name the module does not bind), or those of a function / class body /
#    comprehension at least one of which is an import or importfrom Binding
#    (`try: from M import N` / `except ImportError: N = None`, or `from M
#    import N` then `N = wrap(N)`: bound twice, so resolving to nothing, as
#    a callee bound twice does; the import may be the one that ran); a
#    parameter, a local assignment, a local def (no import among the
#    function's bindings of N): not judged;
#  * "a call `X(...)` standing where `X` stands": a call `X()` with no
#    argument (value_call: an ast.Call kept on the module, its func the use
#    itself), judged by unresolved_target as any call is, so a use resolves
#    exactly when that call does: a module-level def or class (a project
#    function that is no producer, a class: no read), `A.N` of an imported
#    project module, `self.N` / `cls.N` of the enclosing class's def, a
#    call on an instance (`K().m`, `N.m` with `N = K()` once in the scope
#    reading it; not in an annotation, where `N` is read in a nested scope:
#    `st.poll` there resolves to nothing, as `st.poll(...)` there is an
#    unresolved call, though as a value there it is never wrapped nor
#    renamed, so never an unresolved use), and a module-level name or `A.N` imported once from
#    outside the project (`subprocess.run` after a module-level `import
#    subprocess`: exempt; after one inside the function too when it binds
#    `subprocess` there once: "**Imports inside a function**", callee_binding;
#    bound there twice, by an import and an assignment or by two imports:
#    unresolved, no exemption); a name imported inside the function (bound there
#    once) resolves as a module-level one does; `K.m` on the class,
#    inherited methods and instance names bound twice resolve nothing, as for
#    calls.  A use that resolves to a producer is escape_reads' (one read,
#    never two); one that resolves to another function or a class, nothing;
#  * "a direct tool call's callee `A.tool.N` too": the use `A.tool.N` is
#    judged as any attribute (unresolved_name's exemption is the call's
#    only), so `fn = agent.tool.probe` is an unresolved use of every
#    producer named `probe` (a tool's: renamed);
#  * "only in two of the forms that make a tool's use an escape, for tools
#    and other producers alike": a use counts only when it is wrapped_use or
#    renamed_use (the same readings as for a tool's escape, above), whatever
#    the producers named N; handed to a call that keeps it (kept_call_use:
#    `r = to_thread(probe, 1)`, `submit(t.probe)` kept) is none of them; a
#    plain use (`len(scan.obstacles)`,
#    `for o in scan.obstacles`, `print(t.probe)`, `check(agent.tool.probe)`,
#    `g(probe)` after a star import, an annotation, a default, a list
#    element, `x += t.probe`, `lambda: t.probe`...) is no unresolved use,
#    of a tool or not;
#  * the producers: every candidate with keys named N (methods too, tools
#    and others alike); one read per use (span the node: parentheses left
#    out) given once to every finding of the union of the origins
#    (escape_origins: chains followed whole, no dispatch).

READS = False
_ORIGINS = {}  # id(finding) -> (finding, source): ("display", Dict) / ("call", Call) / ("write", node, S, N)


def note_origin(f, source):
    _ORIGINS[id(f)] = (f, source)


def module_nodes(mod):
    """[(node, parent, scope)] of every node of ``mod``'s tree, ``scope`` the
    Scope it stands in, as ScopeBuilder assigns them (decorators, defaults,
    annotations, type parameters and a comprehension's first iterable in the
    enclosing scope: where their names resolve; for the reads rules every
    annotation stands in a nested scope, see stands_in)."""
    cached = getattr(mod, "_nodes", None)
    if cached is not None:
        return cached
    by_node = {id(s.node): s for s in mod.scopes}
    out = []
    stack = [(mod.tree, None, mod.module_scope)]
    while stack:
        node, parent, sc = stack.pop()
        out.append((node, parent, sc))
        cls = node.__class__
        if cls in _FUNCTION_NODES or cls is ast.Lambda:
            inner = by_node[id(node)]
            a = node.args
            outer = a.defaults + [d for d in a.kw_defaults if d is not None]
            if cls is not ast.Lambda:
                outer = node.decorator_list + type_params(node) + outer
                for x in a.posonlyargs + a.args + a.kwonlyargs + [v for v in (a.vararg, a.kwarg) if v]:
                    if x.annotation is not None:
                        outer.append(x.annotation)
                if node.returns is not None:
                    outer.append(node.returns)
                body = node.body
            else:
                body = [node.body]
            stack.extend((c, node, sc) for c in outer)
            stack.extend((c, node, inner) for c in body)
        elif cls is ast.ClassDef:
            inner = by_node[id(node)]
            stack.extend((c, node, sc) for c in node.decorator_list + type_params(node) + node.bases + node.keywords)
            stack.extend((c, node, inner) for c in node.body)
        elif cls in _COMP_NODES:
            inner = by_node[id(node)]
            for i, g in enumerate(node.generators):
                out.append((g, node, inner))
                stack.append((g.iter, g, sc if i == 0 else inner))
                stack.append((g.target, g, inner))
                stack.extend((c, g, inner) for c in g.ifs)
            elts = (node.key, node.value) if cls is ast.DictComp else (node.elt,)
            stack.extend((c, node, inner) for c in elts)
        else:
            stack.extend((c, node, sc) for c in ast.iter_child_nodes(node))
    mod._nodes = out
    return out


def def_annotations(node):
    """The annotations of the ``def`` / ``async def`` ``node``: of its
    positional-only, positional and keyword-only parameters, of its ``*args``
    and ``**kwargs``, and of its return."""
    a = node.args
    params = a.posonlyargs + a.args + a.kwonlyargs + [v for v in (a.vararg, a.kwarg) if v is not None]
    return [x.annotation for x in params if x.annotation is not None] + (
        [node.returns] if node.returns is not None else [])


# PEP 695 (Python 3.12+): `type X = ...` and the type parameters of a def, a
# class or a type alias; None where this Python's ast has no such node
_TYPE_ALIAS = getattr(ast, "TypeAlias", None)
_TYPE_PARAM_NODES = tuple(c for c in (getattr(ast, n, None) for n in ("TypeVar", "ParamSpec", "TypeVarTuple"))
                          if c is not None)


def type_params(node):
    """The type parameters (PEP 695) of the def, class or type alias ``node``
    ([] before Python 3.12)."""
    return list(getattr(node, "type_params", None) or ())


def annotations_of(node):
    """The annotations ``node`` holds itself (docs/rules.md "**Annotations.**"):
    a def's (def_annotations), a variable's (``x: A``, ``x: A = v``: ``A``),
    the value of ``type X = ...`` and the bound or constraints (and default)
    of a type parameter."""
    cls = node.__class__
    if cls in _FUNCTION_NODES:
        return def_annotations(node)
    if cls is ast.AnnAssign:
        return [node.annotation]
    if _TYPE_ALIAS is not None and cls is _TYPE_ALIAS:
        return [node.value]
    if cls in _TYPE_PARAM_NODES:
        return [v for v in (getattr(node, "bound", None), getattr(node, "default_value", None)) if v is not None]
    return []


def annotation_nodes(mod):
    """{id(node)} of every node of ``mod`` standing in an annotation
    (annotations_of), at any depth (docs/rules.md "**Annotations.**": nothing
    in it is read, and a load of a name there is a use in a scope nested in
    the one where the annotation stands)."""
    cached = getattr(mod, "_annotation_nodes", None)
    if cached is None:
        cached = set()
        for node in ast.walk(mod.tree):
            for ann in annotations_of(node):
                cached.update(id(n) for n in ast.walk(ann))
        mod._annotation_nodes = cached
    return cached


def stands_in(mod, node, sc):
    """The scope the node ``node`` stands in for the reads rules' "in S
    itself" / "in a scope nested in S", ``sc`` the scope module_nodes gives it
    (where its names resolve): ``sc``, or None (a scope nested in ``sc`` that
    binds nothing) for a node in an annotation (docs/rules.md
    "**Annotations.**")."""
    return None if id(node) in annotation_nodes(mod) else sc


def is_tool_decorator(d):
    """``@tool``, ``@strands.tool``, ``@strands.tools.tool``, with or without arguments."""
    if d.__class__ is ast.Call:
        d = d.func
    if d.__class__ is ast.Name:
        return d.id == "tool"
    if d.__class__ is not ast.Attribute or d.attr != "tool":
        return False
    v = d.value
    if v.__class__ is ast.Name:
        return v.id == "strands"
    return (v.__class__ is ast.Attribute and v.attr == "tools"
            and v.value.__class__ is ast.Name and v.value.id == "strands")


def const_str(node):
    if node.__class__ is _Constant and node.value.__class__ is str:
        return node.value
    return None


KEYED_METHODS = ("get", "pop", "setdefault")
WHOLE_METHODS = ("keys", "values", "items")
# the key of the content list: `E["content"]` reads it (form content / block)
CONTENT_KEY = "content"
_DECIMAL_DIGITS = frozenset("0123456789")


def decimal_index(mod, node):
    """Is ``node`` (a subscript's index, parentheses seen through as ast
    does) an integer literal written with decimal digits only?  By its source
    text: ``0``, ``12`` are; ``-1`` (a unary minus), ``0x1``, ``1_0``, ``True``,
    a name or a slice are not."""
    if node.__class__ is not _Constant or node.value.__class__ is not int:
        return False
    text = mod.text(node)
    return bool(text) and all(ch in _DECIMAL_DIGITS for ch in text)


def reads_at(mod, E, parent, parents):
    """[(form, key or None, span node or (start, end) offsets)] of the reads
    whose receiver is the expression node ``E`` (its direct parent ``parent``)."""
    P = parent
    cls = P.__class__
    if cls is ast.Subscript and P.value is E:
        k = const_str(P.slice)
        if k is None:
            return []
        ctx = P.ctx.__class__
        if k == CONTENT_KEY:
            # the content list, never a keyed read: as a target no read at all;
            # a load is `block` when it is the value of a load `E["content"][i]`
            # with a decimal literal i, else `content`; the span is P either way
            if ctx is not ast.Load:
                return []
            G = parents.get(id(P))
            if (G is not None and G.__class__ is ast.Subscript and G.value is P
                    and G.ctx.__class__ is ast.Load and decimal_index(mod, G.slice)):
                return [("block", None, P)]
            return [("content", None, P)]
        form = "subscript" if ctx is ast.Load else "store" if ctx is ast.Store else "delete"
        return [(form, k, P)]
    if cls is ast.Attribute and P.value is E:
        G = parents.get(id(P))
        if G is None or G.__class__ is not ast.Call or G.func is not P:
            return []
        if P.attr in KEYED_METHODS:
            if not G.args:
                return []
            k = const_str(G.args[0])
            return [(P.attr, k, G)] if k is not None else []
        if P.attr in WHOLE_METHODS:
            return [("whole", None, G)]
        return []
    if cls is ast.Compare:
        out = []
        # `E == X`, `X != E`...: an equality with E as either operand sees
        # every key (once per comparison)
        operands = [P.left] + list(P.comparators)
        for i, operand in enumerate(operands):
            if operand is not E:
                continue
            around = ([P.ops[i - 1]] if i > 0 else []) + ([P.ops[i]] if i < len(P.ops) else [])
            if any(op.__class__ in (ast.Eq, ast.NotEq) for op in around):
                if i == 0 or P.ops[i - 1].__class__ not in (ast.In, ast.NotIn):
                    return [("whole", None, P)]
        for i, comp in enumerate(P.comparators):
            if comp is not E:
                continue
            op = P.ops[i].__class__
            if op is not ast.In and op is not ast.NotIn:
                continue
            k = const_str(P.left if i == 0 else P.comparators[i - 1])
            if k is not None:
                out.append(("in" if op is ast.In else "not-in", k, P))
        return out
    if cls is _Dict:
        for j, (k, v) in enumerate(zip(P.keys, P.values)):
            if k is None and v is E:
                return [("whole", None, entry_span(mod.src, P, j, "TS002"))]
        return []
    if cls is ast.keyword:
        G = parents.get(id(P))
        if P.arg is None and P.value is E and G is not None and G.__class__ is ast.Call:
            return [("whole", None, P)]
        return []
    if cls is ast.Call and P.args and P.args[0] is E:
        f = P.func
        if f.__class__ is ast.Name and f.id == "dict":
            return [("whole", None, P)]
        if (f.__class__ is ast.Attribute and f.attr == "dumps" and f.value.__class__ is ast.Name
                and f.value.id == "json"):
            return [("whole", None, P)]
    return []


MARKERS = ("tool_result", "toolResult")
# a file is searched for possible receivers only when its text holds one of
# these and a moved key between quotes
FILE_MARKERS = (b"tool_result", b"toolResult", b"ToolResult", b"ToolCallEvent", b"ToolInvocationEvent")
TOOL_RESULT_ANNOTATIONS = ("ToolResult",)
EVENT_ANNOTATIONS = ("AfterToolCallEvent", "AfterToolInvocationEvent")
# the index of a possible receiver `X["toolResult"]`, as written
TOOL_RESULT_INDEX_TEXTS = ('"toolResult"', "'toolResult'")
KEYED_FORMS = ("subscript", "store", "delete", "get", "pop", "setdefault", "in", "not-in")


def is_marked(text):
    return any(m in text for m in MARKERS)


def annotated_as(ann, names):
    """Is the annotation ``ann`` the name NAME or an attribute ``X.NAME``, NAME in ``names``?"""
    if ann is None:
        return False
    if ann.__class__ is ast.Name:
        return ann.id in names
    return ann.__class__ is ast.Attribute and ann.attr in names


def annotated_param(sc, name, names):
    """Is ``name`` a parameter of the ``def`` whose own scope is ``sc``
    (not its ``*args`` / ``**kwargs``), annotated with one of ``names``?"""
    if sc.kind != "function" or sc.node.__class__ not in _FUNCTION_NODES:
        return False
    a = sc.node.args
    for x in a.posonlyargs + a.args + a.kwonlyargs:
        if x.arg == name and annotated_as(x.annotation, names):
            return True
    return False


def awaited_call(node):
    """The call ``C`` when ``node`` is ``await C`` (parentheses seen through, as
    ast does), else None (docs/rules.md "**Awaited calls.**")."""
    if node.__class__ is ast.Await and node.value.__class__ is ast.Call:
        return node.value
    return None


def assigned_call(b):
    """The call ``C`` when binding ``b`` is a plain assignment ``R = C`` or
    ``R = await C`` with one target, else None."""
    if b.kind != "assign" or b.stmt.__class__ is not ast.Assign or len(b.stmt.targets) != 1:
        return None
    v = b.value
    if v.__class__ is ast.Call:
        return v
    return awaited_call(v)


def bound_once_to_call(mod, sc, name):
    """Does the scope owning ``name`` (read in ``sc``) bind it exactly once, by a
    plain assignment ``R = C`` or ``R = await C`` with one target and ``C`` a call?"""
    b = sole_binding(mod, sc, name)
    return b is not None and assigned_call(b) is not None


def statement_call(st):
    """The call ``C`` when the assignment statement ``st`` is ``R = C`` or
    ``R = await C`` (parentheses seen through, as ast does), else None."""
    v = st.value
    if v.__class__ is ast.Call:
        return v
    return awaited_call(v)


def sequence_binding(b, body):
    """Is binding ``b`` a plain assignment statement ``R = V`` with one target
    (not annotated, not chained, not a tuple) standing directly in a
    function's block (``body``: the ids of its statements)?"""
    st = b.stmt
    return (b.kind == "assign" and st.__class__ is ast.Assign and len(st.targets) == 1
            and st.targets[0] is b.node and id(st) in body)


def sequence_names(mod):
    """{(id(S), R): [statements R = V in source order]} of the names bound in
    sequence in module ``mod`` (docs/rules.md "**Receivers**": a function's
    scope S owning R binds it more than once, every binding a plain one-target
    ``R = V`` statement of the function's own block)."""
    cached = getattr(mod, "_sequence", None)
    if cached is not None:
        return cached
    out = {}
    for S in mod.scopes:
        if S.kind != "function" or S.node.__class__ not in _FUNCTION_NODES:
            continue
        body = None
        for R, bs in S.owned.items():
            if len(bs) < 2:
                continue
            if body is None:
                body = {id(st) for st in S.node.body}
            if all(sequence_binding(b, body) for b in bs):
                out[(id(S), R)] = sorted((b.stmt for b in bs), key=lambda st: (st.lineno, st.col_offset))
    mod._sequence = out
    return out


def seen_statement(stmts, node):
    """The statement of ``stmts`` (a name's bindings in sequence, in order)
    whose value a load ``node`` sees: the last one that ends before the load
    starts; None before the end of the first."""
    at = (node.lineno, node.col_offset)
    seen = None
    for st in stmts:
        if (st.end_lineno, st.end_col_offset) <= at:
            seen = st
        else:
            break
    return seen


def sequence_seen(mod, seq, node, sc):
    """The statement whose value the load ``node`` of a name, standing in
    scope ``sc``, sees when ``sc`` binds the name in sequence (``seq``,
    sequence_names); None otherwise, or before the first one ends."""
    stmts = seq.get((id(sc), node.id))
    return seen_statement(stmts, node) if stmts is not None else None


def tool_result_index(mod, node):
    """Is ``node`` (a subscript's index, parentheses seen through as ast
    does) a string literal written exactly ``"toolResult"`` or
    ``'toolResult'``?  By its source text: no prefix, no implicit
    concatenation, no escapes, no triple quotes."""
    return (node.__class__ is _Constant and node.value.__class__ is str
            and mod.text(node) in TOOL_RESULT_INDEX_TEXTS)


def binding_scopes(mod):
    """{id(Binding): the Scope whose code holds it} of module ``mod`` (for a
    ``global`` / ``nonlocal`` name, not the scope that owns the binding)."""
    cached = getattr(mod, "_binding_scopes", None)
    if cached is None:
        cached = mod._binding_scopes = {id(b): s for s in mod.scopes for _, b in s.raw}
    return cached


def aliased_value(b):
    """``E`` when binding ``b`` is a plain assignment ``N = E`` with one target
    (not annotated, not chained, not augmented, not a tuple, not ``:=``),
    else None."""
    if b.kind != "assign" or b.stmt.__class__ is not ast.Assign or len(b.stmt.targets) != 1:
        return None
    return b.value


def is_possible_alias(mod, sc, name):
    """Is ``name``, read in ``sc``, bound to a possible receiver: is one of
    the bindings of the scope owning it (``global`` / ``nonlocal`` followed)
    a plain ``N = E``, ``E`` a possible receiver of a form other than a name
    (``X["toolResult"]``, a marked attribute, a hook event's ``P.result``),
    judged in the scope where the assignment stands?"""
    owner = lookup(sc, name, mod.module_scope)
    if owner is None:
        return False
    where = None
    for b in owner.owned.get(name, ()):
        E = aliased_value(b)
        if E is None or E.__class__ not in (ast.Attribute, ast.Subscript):
            continue
        if where is None:
            where = binding_scopes(mod)
        if is_possible_receiver(mod, E, where[id(b)]):
            return True
    return False


def is_possible_receiver(mod, node, sc):
    """Is ``node`` (standing in scope ``sc``) plainly a tool result handed on by the SDK?"""
    cls = node.__class__
    if stands_in(mod, node, sc) is None:
        # in an annotation no read is looked for, possible ones neither
        # (docs/rules.md "**Annotations.**"): no receiver of any kind there
        return False
    if cls is ast.Name:
        if node.ctx.__class__ is not ast.Load:
            return False
        if ((is_marked(node.id) or annotated_param(sc, node.id, TOOL_RESULT_ANNOTATIONS))
                and not bound_once_to_call(mod, sc, node.id)):
            return True
        return is_possible_alias(mod, sc, node.id)
    if cls is ast.Attribute:
        if node.ctx.__class__ is not ast.Load:
            return False
        if is_marked(node.attr):
            return True
        v = node.value
        return (node.attr == "result" and v.__class__ is ast.Name and v.ctx.__class__ is ast.Load
                and annotated_param(sc, v.id, EVENT_ANNOTATIONS))
    if cls is ast.Subscript:
        return node.ctx.__class__ is ast.Load and tool_result_index(mod, node.slice)
    return False


def read_record(m, span, form, key, possible):
    src = m.src
    if isinstance(span, tuple):
        start, end = span
    else:
        start = src.offset(span.lineno, span.col_offset)
        end = src.offset(span.end_lineno, span.end_col_offset)
    (sline, scol), (eline, ecol) = src.position(start), src.position(end)
    return {"path": m.path, "line": sline, "column": scol + 1, "end_line": eline,
            "end_column": ecol + 1, "form": form, "key": key, "rewritable": False,
            "possible": possible}


def dispatch_keywords(c, call):
    """{P: C} of the keywords ``P=C`` of ``call`` that dispatch producer
    ``c`` ("**Dispatch by a constant.**"): ``C`` a constant string, ``P`` a
    parameter of ``c`` other than ``*args`` / ``**kwargs`` that ``c``'s scope
    binds only as that parameter (no ``global`` / ``nonlocal`` naming it)."""
    a = c.node.args
    params = {x.arg for x in a.posonlyargs + a.args + a.kwonlyargs}
    sc = c.scope
    out = {}
    for kw in call.keywords:
        P = kw.arg
        if P is None or P not in params:
            continue
        C = const_str(kw.value)
        if C is None:
            continue
        bs = sc.owned.get(P, ())
        if len(bs) != 1 or bs[0].kind != "param" or P in sc.glob or P in sc.nonloc:
            continue
        out[P] = C
    return out


def dispatch_test(test):
    """(P, C) when ``test`` is one ``==`` comparison of a name ``P`` and a
    constant string ``C`` (either side; parentheses are no nodes), else None."""
    if test.__class__ is not ast.Compare or len(test.ops) != 1 or test.ops[0].__class__ is not ast.Eq:
        return None
    left, right = test.left, test.comparators[0]
    for name, const in ((left, right), (right, left)):
        if name.__class__ is ast.Name:
            C = const_str(const)
            if C is not None:
                return name.id, C
    return None


_STMT_LISTS = ("body", "orelse", "finalbody")


def _exclusion_walk(stmts, cons, out, top):
    after = []
    for st in stmts:
        cur = cons + after if after else cons
        cls = st.__class__
        if cls is ast.Return:
            out[id(st)] = cur
        elif cls in _FUNCTION_NODES or cls is ast.ClassDef:
            continue  # their returns are no returns of this scope
        elif cls is ast.If:
            t = dispatch_test(st.test)
            if t is None:
                _exclusion_walk(st.body, cur, out, False)
                _exclusion_walk(st.orelse, cur, out, False)
            else:
                # the body: not when P is another constant; the elif / else
                # clauses that follow: not when P == C
                _exclusion_walk(st.body, cur + [("ne",) + t], out, False)
                _exclusion_walk(st.orelse, cur + [("eq",) + t], out, False)
                if top and st.body and st.body[-1].__class__ in (ast.Return, ast.Raise):
                    after.append(("eq",) + t)
        else:
            for field in _STMT_LISTS:
                sub = getattr(st, field, None)
                if sub:
                    _exclusion_walk(sub, cur, out, False)
            for h in getattr(st, "handlers", None) or ():
                _exclusion_walk(h.body, cur, out, False)
            if cls is ast.Match:
                for case in st.cases:
                    _exclusion_walk(case.body, cur, out, False)


_EXCLUSIONS = {}


def return_exclusions(c):
    """{id(return): [(op, P, C)]} of the returns of producer ``c``'s own
    scope: a return cannot run when, for some (op, P, C) and the dispatch
    keyword P=V, ``op`` is "ne" and V != C (it stands in the body of an
    ``if`` / ``elif`` testing ``P == C``) or "eq" and V == C (in a clause
    following such a test, or after such an ``if`` in ``c``'s body whose body
    ends in ``return`` / ``raise``)."""
    hit = _EXCLUSIONS.get(id(c.node))
    if hit is None or hit[0] is not c.node:
        out = {}
        _exclusion_walk(c.node.body, [], out, True)
        hit = _EXCLUSIONS[id(c.node)] = (c.node, out)
    return hit[1]


def narrowed_keys(c, call, keys, ret_own, ret_link):
    """The keys of producer ``c`` that the receiver ``call`` reaches:
    ``keys[id(c.node)]`` (keys(c)), or with dispatch keywords the union of
    what each return of ``c``'s own scope that can run under them gives:
    ``ret_own[id(ret)]`` (cases 1-3) and the whole keys of the producer
    ``ret_link[id(ret)]`` (case 4, chains followed whole)."""
    kws = dispatch_keywords(c, call)
    if not kws:
        return keys[id(c.node)]
    excl = return_exclusions(c)
    k = set()
    for ret in c.scope.returns:
        if excluded(excl.get(id(ret), ()), kws):
            continue
        k |= ret_own.get(id(ret), set())
        t = ret_link.get(id(ret))
        if t is not None:
            k |= keys.get(id(t.node), set())
    return k


def excluded(cons, kws):
    """Can a return with exclusions ``cons`` not run under the dispatch keywords ``kws`` ({P: C})?"""
    for op, P, C in cons:
        V = kws.get(P)
        if V is not None and ((V != C) if op == "ne" else (V == C)):
            return True
    return False


def instance_names(proj, m):
    """{(id(S), N): (Module, ClassDef)} of the names ``N`` of module ``m``
    that scope ``S`` owns and binds exactly once, by a plain assignment
    ``N = K(...)`` with one target, the call resolving to a class ``K``
    (docs/rules.md "**Calls on an instance**")."""
    call_scope = {id(C): S for S in m.scopes for C in S.calls}
    out = {}
    for S in m.scopes:
        for N, bs in S.owned.items():
            if len(bs) != 1:
                continue
            b = bs[0]
            if (b.kind == "assign" and b.stmt.__class__ is ast.Assign and len(b.stmt.targets) == 1
                    and b.value.__class__ is ast.Call):
                k = proj.resolve_class(m, b.value, call_scope[id(b.value)])
                if k is not None:
                    out[(id(S), N)] = k
    return out


def instance_method(proj, m, call, S, instances):
    """The method a call ``O.m(...)`` standing in scope ``S`` calls on an
    instance of a class ``K`` (docs/rules.md "**Calls on an instance**"):
    ``O`` a call ``K(...)`` or a name in ``instances`` (see instance_names)
    read in the scope owning it; the candidate of the ``def m`` that ``K``'s
    body binds ``m`` to, once (None: no such call or method)."""
    return instance_attribute(proj, m, call.func, S, instances)


def instance_attribute(proj, m, f, S, instances):
    """The method that a call ``f(...)`` standing in scope ``S`` would call on
    an instance (see instance_method), ``f`` the callee expression."""
    if f.__class__ is not ast.Attribute:
        return None
    O = f.value
    if O.__class__ is ast.Call:
        k = proj.resolve_class(m, O, S)
    elif O.__class__ is ast.Name:
        # `N` read in S itself: not in an annotation, a scope nested in S
        # ("**Annotations.**")
        k = instances.get((id(S), O.id)) if stands_in(m, O, S) is not None else None
    else:
        return None
    if k is None:
        return None
    kmod, kdef = k
    for c in kmod.candidates.values():
        if c.cls_scope is not None and c.cls_scope.node is kdef and c.node.name == f.attr:
            bs = c.cls_scope.owned.get(f.attr, ())
            return c if len(bs) == 1 else None
    return None


def project_reads(proj, reads_of):
    """Find the reads of project ``proj``; ``reads_of[id(finding)]`` gets each
    finding's read records."""
    mods = []
    for abspath in sorted(proj.names):
        m = proj.module(abspath)
        if m is None:
            continue
        if getattr(m, "findings", None) is None:
            # a project file outside the paths given: its findings are origins too
            scratch = {"files": 0, "skipped": 0, "dicts": 0, "shaped": 0, "suppressed": 0}
            try:
                m.findings = module_findings(m, scratch)
            except (SpanError, RecursionError, ValueError):
                m.findings = []
        mods.append(m)
    # origins: okey -> [finding]; ("write", id(statement)) for TS004
    by_origin = {}
    writes_into = {}  # (id(S), N) -> {(key, okey)}
    for m in mods:
        parents = None
        for f in m.findings:
            source = _ORIGINS[id(f)][1]
            if source[0] == "write":
                if parents is None:
                    parents = {id(n): p for n, p, _ in module_nodes(m)}
                node = source[1]
                while not isinstance(node, ast.stmt):
                    node = parents[id(node)]
                okey = ("write", id(node))
                if f["key"] is not None:
                    writes_into.setdefault((id(source[2]), source[3]), set()).add((f["key"], okey))
            else:
                okey = (source[0], id(source[1]))
            by_origin.setdefault(okey, []).append(f)

    def keyed(okey):
        return {(f["key"], okey) for f in by_origin.get(okey, ()) if f["key"] is not None}

    # producers: cases 1-3, then case 4 until nothing changes; what each
    # return gives by itself (cases 1-3) and the producer it links to (case 4)
    keys = {}
    links = {}
    ret_own = {}   # id(return) -> the keys of cases 1-3
    ret_link = {}  # id(return) -> the producer G of case 4
    cands = [c for m in mods for c in m.candidates.values()]
    for c in cands:
        k = set()
        link = []
        results = None
        for ret in c.scope.returns:
            E = ret.value
            if E is None:
                continue
            own = set()
            cls = E.__class__
            if cls is _Dict:
                if is_shaped(E):
                    own |= keyed(("display", id(E)))
            elif cls is ast.Name:
                if results is None:
                    results = result_names(c.scope)
                if E.id in results:
                    for b in results[E.id]:
                        own |= keyed(("display", id(b.value)))
                    own |= writes_into.get((id(c.scope), E.id), set())
            elif cls is ast.Call:
                own |= keyed(("call", id(E)))
                t = proj.resolve_call(c.module, E, c.scope)
                if t is not None:
                    link.append(id(t.node))
                    ret_link[id(ret)] = t
            ret_own[id(ret)] = own
            k |= own
        keys[id(c.node)] = k
        links[id(c.node)] = link
    changed = True
    while changed:
        changed = False
        for c in cands:
            k = keys[id(c.node)]
            for t in links[id(c.node)]:
                extra = keys.get(t)
                if extra and not extra <= k:
                    k |= extra
                    changed = True
    tools = {}  # NAME -> [the producers named NAME decorated as tools]
    for c in cands:
        k = keys[id(c.node)]
        if k and any(is_tool_decorator(d) for d in c.node.decorator_list):
            tools.setdefault(c.node.name, []).append(c)

    def producer_keys(c, call):
        return narrowed_keys(c, call, keys, ret_own, ret_link)

    # possible reads: every finding of a key gets the possible reads of that key
    by_key = {}
    for fs in by_origin.values():
        for f in fs:
            if f["key"] is not None:
                by_key.setdefault(f["key"], []).append(f)

    # escapes: the producers that are no tools, used as values; the tools
    # only when called through a wrapper, `W(X)(...)`, given another name or
    # handed to a call that keeps what it gives
    escaping = escaping_producers(cands, keys)
    # decorators of the producers, tools too, but the exempt ones
    decorator_reads(cands, keys, by_origin, reads_of)
    # unresolved calls: the producers by name
    named = {}
    for c in cands:
        if keys[id(c.node)]:
            named.setdefault(c.node.name, []).append(c)

    # receivers and their reads
    for m in mods:
        if by_key:
            possible_reads(m, by_key, reads_of)
        recv = {}
        instances = instance_names(proj, m)
        if escaping or tools:
            escape_reads(proj, m, keys, escaping, by_origin, instances, reads_of)
        if named:
            unresolved_reads(proj, m, named, keys, keyed, by_origin, instances, reads_of)
            unresolved_use_reads(proj, m, named, keys, by_origin, instances, reads_of)
        for S in m.scopes:
            for C in S.calls:
                k = keyed(("call", id(C)))
                t = proj.resolve_call(m, C, S)
                if t is None:
                    t = instance_method(proj, m, C, S, instances)
                if t is not None and keys.get(id(t.node)):
                    k |= producer_keys(t, C)
                f = C.func
                if (f.__class__ is ast.Attribute and f.value.__class__ is ast.Attribute
                        and f.value.attr == "tool"):
                    for c in tools.get(f.attr, ()):
                        k |= producer_keys(c, C)
                if k:
                    recv[id(C)] = k
        if not recv:
            continue
        nodes = module_nodes(m)
        parents = {id(n): p for n, p, _ in nodes}
        # results handed to checking functions ("**Results handed to a
        # checking function.**"): the calls G passing a result through carry it
        flow = m._flow = Flow(m, recv, nodes, parents)
        names = {}
        bound_by = {}  # id(C) -> (S, R): the receiver name `R = C` / `R = await C` binds
        for S in m.scopes:
            for R, bs in S.owned.items():
                if len(bs) != 1:
                    continue
                # `R = C` or `R = await C` ("**Awaited calls.**"); `R = G`, G
                # a checking function's call passing a result through
                C = assigned_call(bs[0])
                if C is None:
                    continue
                if id(C) in recv:
                    names[(id(S), R)] = set(recv[id(C)])
                    bound_by[id(C)] = (S, R)
                if C is bs[0].value:
                    k = flow.carry(C)
                    if k:
                        names[(id(S), R)] = names.get((id(S), R), set()) | k
        # names bound in sequence: a load standing in S sees one statement
        seq = sequence_names(m)
        handed_on_reads(m, recv, bound_by, nodes, parents, by_origin, reads_of)
        for node, par, sc in nodes:
            cls = node.__class__
            # in an annotation nothing is read ("**Annotations.**"): a receiver
            # call there is handed on (handed_on), a name loaded there no receiver
            own = stands_in(m, node, sc)
            if own is None:
                continue
            if cls is ast.Call:
                # an awaited call's parent is its Await: no reads of its own
                k = recv.get(id(node))
                c = flow.carry(node)
                if c:
                    k = c | (k or set())
            elif cls is ast.Await:
                # `await C`, C a receiver call: read as C ("**Awaited calls.**")
                C = awaited_call(node)
                k = recv.get(id(C)) if C is not None else None
            elif cls is ast.Name and node.ctx.__class__ is ast.Load:
                k = names.get((id(own), node.id))
                if k is None and seq:
                    st = sequence_seen(m, seq, node, own)
                    C = statement_call(st) if st is not None else None
                    k = recv.get(id(C)) if C is not None else None
                    if C is not None and C is st.value:
                        c = flow.carry(C)
                        if c:
                            k = c | (k or set())
            else:
                continue
            if not k or par is None:
                continue
            found = [(f, kk, span, k) for f, kk, span in reads_at(m, node, par, parents)]
            got = flow.contributions(node, par)
            if got is not None:
                # the reads of the checking function the value is handed to,
                # at its spans, for this call's receiver ("afresh")
                found += [(f, kk, span, got[1]) for f, kk, span in got[0]]
            for form, key, span, k in found:
                rec = read_record(m, span, form, key, False)
                okeys = {o for kk, o in k if key is None or kk == key}
                for o in okeys:
                    for f in by_origin[o]:
                        if key is None or f["key"] == key:
                            # a finding lists a read once, however many
                            # calls of a checking function give it one
                            listed = reads_of.setdefault(id(f), [])
                            if rec not in listed:
                                listed.append(rec)


def assertion_message(node, par, parents):
    """Does the name load ``node`` (its parent ``par``) stand in the message
    of an ``assert`` statement as docs/rules.md "**Assertion messages.**"
    allows: the message itself (``assert ok, r``; parentheses are no nodes),
    or the whole expression of a replacement field of the message when that
    is an f-string (a JoinedStr, implicit concatenations with plain strings
    included: ``f"{r}"``, ``f"{r!r}"``, ``f"{r=}"``, ``f"{(r)}"``,
    ``f"x{r}" "y"``, ``f"{r:>8}"``)?  A field nested in a format spec
    (``f"{x:{r}}"``: its JoinedStr's parent is the outer FormattedValue), in
    a nested f-string or in any larger expression (``str(r)``, ``(r, x)``,
    ``r or x``, ``r["k"]``) is not.  The assert stands where the load
    stands: nothing between them makes a scope."""
    cls = par.__class__
    if cls is ast.Assert:
        return par.msg is node
    if cls is not ast.FormattedValue or par.value is not node:
        return False
    j = parents.get(id(par))
    if j.__class__ is not ast.JoinedStr:
        return False
    a = parents.get(id(j))
    return a.__class__ is ast.Assert and a.msg is j


def checking_params(m, fdef):
    """{i: (P, [(form, key, span)], passes)} of the positions at which the
    module-level ``def`` ``fdef`` of module ``m`` is a checking function
    (docs/rules.md "**Results handed to a checking function.**"): its
    parameter P at position i (positional-only and positional ones, in
    order), bound once by its scope, every load of it resolving there
    standing in its own scope and being the receiver of a read (those
    reads), in an assertion's message, or the whole value of a `return`
    (``passes``: the function passes the result through).  {} for a
    generator.  Cached on the module."""
    cache = getattr(m, "_checking", None)
    if cache is None:
        cache = m._checking = {}
    got = cache.get(id(fdef))
    if got is not None:
        return got
    out = cache[id(fdef)] = {}
    S = next((s for s in m.scopes if s.node is fdef), None)
    if S is None:
        return out
    nodes = module_nodes(m)
    a = fdef.args
    params = a.posonlyargs + a.args
    names = {x.arg for x in params}
    refs = {}  # P -> [(node, par, sc)] of its Name nodes resolving to S
    for node, par, sc in nodes:
        cls = node.__class__
        if (cls is ast.Yield or cls is ast.YieldFrom) and sc is S:
            out.clear()
            return out  # a generator: its body does not run at the call
        if cls is ast.Name and node.id in names and lookup(sc, node.id, m.module_scope) is S:
            refs.setdefault(node.id, []).append((node, par, sc))
    parents = None
    for i, x in enumerate(params):
        P = x.arg
        bs = S.owned.get(P, ())
        if len(bs) != 1 or bs[0].kind != "param" or bs[0].node is not x:
            continue
        reads = []
        passes = False
        ok = True
        for node, par, sc in refs.get(P, ()):
            if node.ctx.__class__ is not ast.Load or stands_in(m, node, sc) is not S or par is None:
                ok = False
                break
            if parents is None:
                parents = {id(n): p for n, p, _ in nodes}
            found = reads_at(m, node, par, parents)
            if found:
                reads.extend(found)
            elif assertion_message(node, par, parents):
                pass
            elif par.__class__ is ast.Return and par.value is node:
                passes = True
            else:
                ok = False
                break
        if ok:
            out[i] = (P, reads, passes)
    return out


def checking_call(m, V, par, sc):
    """(G, i, (P, reads, passes)) when ``V`` (its parent ``par``) is the
    positional argument at position i of a call G of a checking function
    for that position (docs/rules.md "**Results handed to a checking
    function.**"), G standing where names resolve in scope ``sc``; else
    None.  G has no ``*a`` / ``**k`` argument; its callee, as written, is a
    name (no parentheses around it) resolving to the module scope's one
    binding, a ``def`` (not async, no decorator) of the module's own body."""
    if par is None or par.__class__ is not ast.Call:
        return None
    G = par
    i = next((j for j, a in enumerate(G.args) if a is V), None)
    if i is None:
        return None
    if any(a.__class__ is ast.Starred for a in G.args) or any(k.arg is None for k in G.keywords):
        return None
    f = G.func
    if f.__class__ is not ast.Name or (f.lineno, f.col_offset) != (G.lineno, G.col_offset):
        return None  # `(f)(r)`: the callee written in parentheses
    if sc is None or lookup(sc, f.id, m.module_scope) is not m.module_scope:
        return None
    bs = m.module_scope.owned.get(f.id, ())
    if len(bs) != 1 or bs[0].kind != "def":
        return None
    d = bs[0].node
    if d.__class__ is not ast.FunctionDef or d.decorator_list or not any(d is st for st in m.tree.body):
        return None
    info = checking_params(m, d).get(i)
    return (G, i, info) if info is not None else None


class Flow:
    """The results of module ``m`` handed to checking functions
    (docs/rules.md "**Results handed to a checking function.**"): which
    calls ``G`` of a checking function carry a result through (carry), the
    keys a value or a name load carries, whether a value handed to a
    checking function is handed on (kept_by_checker), the read records the
    checking functions contribute (contributions)."""

    _BUSY = object()

    def memo(self, key, compute, cyclic):
        """``compute()`` memoized under ``key``; a question asked again while
        it is being answered (a cycle: a name whose value passes its own load
        through) gets ``cyclic`` (no keys; handed on), and an answer that
        leaned on another question still open is not kept (only the outermost
        question of a cycle keeps its answer: keys are a union, the least
        fixpoint; being kept a conjunction, the least one too: handed on)."""
        got = self._memo.get(key)
        if got is Flow._BUSY:
            self._open.add(key)
            return cyclic
        if got is not None:
            return got
        self._memo[key] = Flow._BUSY
        outer, self._open = self._open, set()
        try:
            value = compute()
        finally:
            inner = self._open
            inner.discard(key)
            self._open = outer | inner
            if inner:
                del self._memo[key]
            else:
                self._memo[key] = value
        return value

    def __init__(self, m, recv, nodes, parents):
        self.m = m
        self.recv = recv
        self.nodes = nodes
        self.parents = parents
        self.scope_at = {id(n): sc for n, _, sc in nodes}
        self.seq = sequence_names(m)
        self._memo = {}
        self._open = set()
        self._loads = None

    # -- what a value carries ------------------------------------------------

    def value_keys(self, X):
        """The keys a value ``X`` (of ``R = X``) carries: a receiver call's, or
        ``await C``'s (C a receiver call), or a call G passing a result through."""
        if X is None:
            return set()
        if X.__class__ is ast.Call:
            k = set(self.recv.get(id(X), ()))
            return k | self.carry(X)
        C = awaited_call(X)
        return set(self.recv.get(id(C), ())) if C is not None else set()

    def carry(self, G):
        """The keys the call ``G`` carries when it is a checking function's
        call passing through a V (the union over its positions)."""
        if G.func.__class__ is not ast.Name or id(G) in annotation_nodes(self.m):
            return set()

        def compute():
            k = set()
            sc = self.scope_at.get(id(G))
            for A in G.args:
                cc = checking_call(self.m, A, G, sc)
                if cc is not None and cc[2][2]:
                    k |= self.v_keys(A)
            return k
        return self.memo(("carry", id(G)), compute, set())

    def v_keys(self, V):
        """The keys of the result ``V`` carries when it is a value that would
        hand a result on (H, a call passing one through, or a load of R in a
        function's scope S, bound once there or in sequence); else empty."""
        m = self.m
        if id(V) in annotation_nodes(m):
            return set()
        cls = V.__class__
        if cls is ast.Call or cls is ast.Await:
            return self.value_keys(V)
        if cls is ast.Name and V.ctx.__class__ is ast.Load:
            own = stands_in(m, V, self.scope_at.get(id(V)))
            if own is None:
                return set()
            if own.kind != "function":
                # a name of a module or a class body bound once by R = H:
                # handed on anyway, its reads listed beside the escape
                bs = own.owned.get(V.id)
                if bs is None or len(bs) != 1:
                    return set()
            return self.name_keys(V, own)
        return set()

    def name_keys(self, node, own):
        """The keys a name load ``node`` standing in scope ``own`` carries: a
        name ``own`` binds once by ``R = X``, or in sequence (the binding it
        sees), X carrying a result."""
        key = (id(own), node.id)
        bs = own.owned.get(node.id)
        if bs is not None and len(bs) == 1:
            def compute():
                C = assigned_call(bs[0])
                k = set(self.recv.get(id(C), ())) if C is not None else set()
                if C is not None and C is bs[0].value:
                    k |= self.carry(C)
                return k
            return self.memo(("name",) + key, compute, set())
        if self.seq:
            st = sequence_seen(self.m, self.seq, node, own)
            C = statement_call(st) if st is not None else None
            if C is not None:
                k = set(self.recv.get(id(C), ()))
                if C is st.value:
                    k |= self.carry(C)
                return k
        return set()

    # -- handed on or not ----------------------------------------------------

    def kept_by_checker(self, V, par):
        """Is ``V`` (its parent ``par``) a positional argument of a checking
        function's call that does not hand the result on: the function does
        not pass it through, or its call G is not handed on (handed_g)?"""
        cc = checking_call(self.m, V, par, self.scope_at.get(id(par)))
        if cc is None:
            return False
        G, _, (_, _, passes) = cc
        return not passes or not self.handed_g(G)

    def handed_g(self, G):
        """Is the call ``G`` passing a result through handed on (judged as H
        is, but for a `return`; `await G` is no H)?"""
        par = self.parents.get(id(G))
        if par is None:
            return True
        cls = par.__class__
        if cls is ast.Expr:
            return False
        if reads_at(self.m, G, par, self.parents):
            return False
        if cls is ast.Assign and par.value is G:
            return not self.assign_kept(par)
        if self.kept_by_checker(G, par):
            return False
        return True

    def assign_kept(self, st):
        """Is ``R2 = G`` (the statement ``st``) a binding whose value is not
        handed on: R2 bound once by it in a function's scope with every load
        kept, or a binding in sequence every load seeing it kept?"""
        if len(st.targets) != 1 or st.targets[0].__class__ is not ast.Name:
            return False
        R = st.targets[0].id
        sc = self.scope_at.get(id(st))
        owner = lookup(sc, R, self.m.module_scope) if sc is not None else None
        if owner is None:
            return False
        bs = owner.owned.get(R, ())
        if len(bs) == 1:
            return owner.kind == "function" and bs[0].stmt is st and self.name_kept(owner, R)
        stmts = self.seq.get((id(owner), R))
        if stmts is not None and any(s is st for s in stmts):
            return self.stmt_kept(owner, R, stmts, st)
        return False

    def loads_of(self, owner, R):
        if self._loads is None:
            self._loads = {}
            ms = self.m.module_scope
            for node, par, sc in self.nodes:
                if node.__class__ is ast.Name and node.ctx.__class__ is ast.Load:
                    o = lookup(sc, node.id, ms)
                    if o is not None:
                        self._loads.setdefault((id(o), node.id), []).append((node, par, sc))
        return self._loads.get((id(owner), R), ())

    def name_kept(self, owner, R):
        def compute():
            for node, par, sc in self.loads_of(owner, R):
                if (owner is not stands_in(self.m, node, sc) or par is None
                        or not kept_use(self.m, node, par, self.parents)):
                    return False
            return True
        return self.memo(("kept", id(owner), R), compute, False)

    def stmt_kept(self, owner, R, stmts, st):
        def compute():
            for node, par, sc in self.loads_of(owner, R):
                if owner is not stands_in(self.m, node, sc):
                    return False  # loaded in a nested scope: every binding handed on
                seen = seen_statement(stmts, node)
                if seen is None:
                    return False  # loaded before the first binding ends
                if seen is st and (par is None or not kept_use(self.m, node, par, self.parents)):
                    return False
            return True
        return self.memo(("stmt", id(st)), compute, False)

    # -- the reads the checking functions contribute ---------------------------

    def contributions(self, V, par):
        """[(form, key, span), keys] the checking function ``V`` is handed to
        contributes (its reads of P, for the result V carries); else None."""
        if par is None or par.__class__ is not ast.Call:
            return None
        cc = checking_call(self.m, V, par, self.scope_at.get(id(par)))
        if cc is None or not cc[2][1]:
            return None
        k = self.v_keys(V)
        if not k:
            return None
        return cc[2][1], k


def kept_use(m, node, par, parents):
    """Does the load ``node`` of a receiver name (its parent ``par``), standing
    in the scope S judged, leave the result not handed on: the receiver of a
    read, in an assertion's message, or handed to a checking function that
    does not hand it on (docs/rules.md "**Results handed on.**",
    "**Assertion messages.**", "**Results handed to a checking function.**")?"""
    return bool(reads_at(m, node, par, parents) or assertion_message(node, par, parents)
                or checked_use(m, node, par, parents))


def checked_use(m, V, par, parents):
    """Is the value ``V`` (its parent ``par``) handed to a checking function
    that does not hand it on (Flow.kept_by_checker)?"""
    flow = getattr(m, "_flow", None)
    return flow is not None and flow.kept_by_checker(V, par)


def kept_names(m, bound_by, nodes, parents):
    """{(id(S), R)} of the receiver names ``R`` (``bound_by``'s values) whose
    result is not handed on: ``S`` a function's scope, and every reference of
    ``R`` resolving to ``S``'s bindings a load in ``S`` itself that is the
    receiver of a read or stands in an assertion's message (assertion_message;
    docs/rules.md "**Results handed on.**", "**Assertion messages.**") or is
    handed to a checking function that does not hand it on (kept_use).  ``S`` binds
    ``R`` once, by the assignment: any other binding (``del R``, ``R += x``,
    a nested ``nonlocal R`` rebinding it) would make it no receiver, so only
    the loads are looked at."""
    ok = {}
    for S, R in bound_by.values():
        if S.kind == "function":
            ok[(id(S), R)] = True
    if not ok:
        return set()
    wanted = {R for _, R in ok}
    for node, par, sc in nodes:
        if node.__class__ is not ast.Name or node.id not in wanted or node.ctx.__class__ is not ast.Load:
            continue
        owner = lookup(sc, node.id, m.module_scope)
        key = (id(owner), node.id)
        if owner is None or key not in ok or not ok[key]:
            continue
        if owner is not stands_in(m, node, sc) or par is None or not kept_use(m, node, par, parents):
            ok[key] = False
    return {k for k, v in ok.items() if v}


def sequence_kept(m, seq, nodes, parents):
    """{id(statement)} of the bindings ``R = V`` of the names bound in
    sequence (``seq``, sequence_names) whose value is not handed on
    (docs/rules.md "**Results handed on.**"): no load of R resolving to S
    stands in a nested scope or before the end of the first statement, and
    every load standing in S that sees this statement is the receiver of a
    read or stands in an assertion's message (assertion_message)."""
    if not seq:
        return set()
    wanted = {R for _, R in seq}
    spoiled = set()  # (id(S), R): every binding handed on
    passed = set()   # id(statement): a load seeing it is no read's receiver
    for node, par, sc in nodes:
        if node.__class__ is not ast.Name or node.id not in wanted or node.ctx.__class__ is not ast.Load:
            continue
        owner = lookup(sc, node.id, m.module_scope)
        if owner is None:
            continue
        key = (id(owner), node.id)
        stmts = seq.get(key)
        if stmts is None or key in spoiled:
            continue
        if owner is not stands_in(m, node, sc):
            spoiled.add(key)  # loaded in a nested scope (an annotation too)
            continue
        st = seen_statement(stmts, node)
        if st is None:
            spoiled.add(key)  # loaded before the end of the first statement
            continue
        if par is None or not kept_use(m, node, par, parents):
            passed.add(id(st))
    return {id(st) for key, stmts in seq.items() if key not in spoiled
            for st in stmts if id(st) not in passed}


def handed_on(m, C, par, parents, bound_by, kept, seq_kept):
    """The expression ``H`` (``await C`` when the receiver call ``C``, its
    parent ``par``, is awaited, else ``C``) when the result is handed on,
    else None (docs/rules.md "**Results handed on.**").  ``kept``: the names
    bound once whose value is not handed on; ``seq_kept``: the statements
    binding names in sequence whose value is not."""
    H = C
    if par.__class__ is ast.Await and par.value is C:
        H = par
        par = parents.get(id(par))
    if par is None:
        return H
    if id(C) in annotation_nodes(m):
        return H  # written in an annotation: handed on, whatever holds it ("**Annotations.**")
    cls = par.__class__
    if cls is ast.Expr or cls is ast.Return:
        return None  # dropped, or followed through `return` chains
    if reads_at(m, H, par, parents):
        return None  # the receiver of a read: those are its reads
    if cls is ast.Assign:
        b = bound_by.get(id(C))
        if b is not None and (id(b[0]), b[1]) in kept:
            return None
        if id(par) in seq_kept:
            return None  # a binding of a name bound in sequence, read only
    if checked_use(m, H, par, parents):
        return None  # handed to a checking function that does not hand it on
    return H


def handed_on_reads(m, recv, bound_by, nodes, parents, by_origin, reads_of):
    """The results handed on of module ``m``: each receiver call (``recv``:
    id(call) -> its keyed origins) whose result is handed on gets one read of
    form ``escape`` (no key), span ``H`` as written (parentheses around it not
    included), for every finding of every origin of the receiver."""
    kept = kept_names(m, bound_by, nodes, parents)
    seq_kept = sequence_kept(m, sequence_names(m), nodes, parents)
    for node, par, _ in nodes:
        if node.__class__ is not ast.Call:
            continue
        k = recv.get(id(node))
        if not k:
            continue
        H = handed_on(m, node, par, parents, bound_by, kept, seq_kept)
        if H is None:
            continue
        rec = read_record(m, H, "escape", None, False)
        for o in {o for _, o in k}:
            for f in by_origin[o]:
                reads_of.setdefault(id(f), []).append(rec)


def escaping_producers(cands, keys):
    """{id(def node)} of the producers whose uses as values are escapes: every
    producer that is not decorated as a tool (docs/rules.md "**Escapes.**")."""
    return {id(c.node) for c in cands
            if keys[id(c.node)] and not any(is_tool_decorator(d) for d in c.node.decorator_list)}


# the decorators that leave a function as its callers call it (docs/rules.md
# "**Decorators.**"): names, and attributes `A.N` of a name `A`, as written
EXEMPT_DECORATOR_NAMES = ("staticmethod", "classmethod", "abstractmethod", "override")
EXEMPT_DECORATOR_ATTRIBUTES = (("abc", "abstractmethod"), ("typing", "override"),
                               ("typing_extensions", "override"))


def is_exempt_decorator(d):
    """Is the decorator ``d`` (the expression after ``@``) one that hands no
    result on: a tool decorator (with or without arguments), or exactly one
    of the names / attributes of EXEMPT_DECORATOR_* (not called)?"""
    if is_tool_decorator(d):
        return True
    if d.__class__ is ast.Name:
        return d.id in EXEMPT_DECORATOR_NAMES
    if d.__class__ is ast.Attribute and d.value.__class__ is ast.Name:
        return (d.value.id, d.attr) in EXEMPT_DECORATOR_ATTRIBUTES
    return False


def decorator_reads(cands, keys, by_origin, reads_of):
    """The decorators of the producers (docs/rules.md "**Decorators.**"):
    each decorator ``D`` of the def of a producer ``F`` (a candidate with
    keys, tool or not) that is not exempt (is_exempt_decorator) is one read
    of form ``escape`` (no key), span ``D``'s node, of every origin a
    receiver call of ``F`` without arguments reaches (escape_origins), given
    once to every finding of those origins."""
    for c in cands:
        if not keys[id(c.node)]:
            continue
        for d in c.node.decorator_list:
            if is_exempt_decorator(d):
                continue
            rec = read_record(c.module, d, "escape", None, False)
            for o in escape_origins(c, keys):
                for f in by_origin[o]:
                    reads_of.setdefault(id(f), []).append(rec)


def escape_origins(t, keys):
    """The origins a receiver call of producer ``t`` without arguments
    reaches: every origin of keys(t), chains followed whole, no dispatch."""
    return {o for _, o in keys[id(t.node)]}


def escape_target(proj, m, X, sc, instances):
    """The candidate that a call ``X(...)`` standing where ``X`` stands (in
    scope ``sc``) would resolve to as a receiver call: as a builder call's
    callee (a name, ``A.name``, ``self.name`` / ``cls.name``), else as a call
    on an instance (``K(...).m``, ``N.m``); never a direct tool call.
    None: nothing."""
    t = proj._resolve_callee(m, X, sc)
    if t is None and X.__class__ is ast.Attribute:
        t = instance_attribute(proj, m, X, sc, instances)
    return t


def is_value_use(X, par):
    """Is ``X`` (a Name or an Attribute, its parent ``par``) used as a value:
    a load that is not the callee of a call, nor the object of an attribute
    (docs/rules.md "**Escapes.**")?  Targets (of an assignment of any kind,
    ``for``, ``with``, ``del``) are no loads."""
    if X.ctx.__class__ is not ast.Load or par is None:
        return False
    cls = par.__class__
    if cls is ast.Call and par.func is X:
        return False
    if cls is ast.Attribute and par.value is X:
        return False
    return True


def wrapped_use(X, par, parents):
    """Is ``X`` (its parent ``par``) the one argument of a call ``W(X)`` that
    is itself the callee of a call, ``W(X)(...)``: positional, not ``*X``,
    no other argument (docs/rules.md "**Escapes.**")?"""
    if par.__class__ is not ast.Call or par.keywords or len(par.args) != 1 or par.args[0] is not X:
        return False
    outer = parents.get(id(par))
    return outer.__class__ is ast.Call and outer.func is par


RENAMING_PARENTS = (ast.Assign, ast.AnnAssign, ast.NamedExpr, ast.Return, ast.Yield)


def renamed_use(X, par):
    """Does ``X`` (its parent ``par``) give the value another name to be
    called by (docs/rules.md "**Escapes.**"): the whole value of an
    assignment (``fn = X``, ``fn: T = X``, ``a = fn = X``, ``(fn := X)``),
    the value of a ``return`` or of a ``yield`` (not ``yield from``), or the
    value of a key-value pair of a dict display (``{"k": X}``; not ``**X``)?
    Parentheses are no nodes: seen through."""
    cls = par.__class__
    if cls in RENAMING_PARENTS:
        return par.value is X
    if cls is ast.Dict:
        return any(v is X and k is not None for k, v in zip(par.keys, par.values))
    return False


# the builtins that only look at their argument (docs/rules.md "**Escapes.**"):
# a tool handed to one of them, called by its bare name resolving to no
# binding of the module, stays exempt wherever the call's value goes
LOOKING_BUILTINS = frozenset(("callable", "isinstance", "issubclass", "hasattr", "id", "type", "repr",
                              "str", "print", "dir", "vars", "hash", "bool"))


def star_import(m):
    """Does module ``m`` hold a star import (``from M import *``, anywhere in
    its tree)?  Cached on the module."""
    got = getattr(m, "_star_import", None)
    if got is None:
        got = m._star_import = any(
            n.__class__ is ast.ImportFrom and any(a.name == "*" for a in n.names) for n in ast.walk(m.tree))
    return got


def kept_call_use(m, X, par, parents, sc):
    """Is ``X`` (its parent ``par``, standing in scope ``sc`` of module
    ``m``) handed to a call that keeps what it gives (docs/rules.md
    "**Escapes.**"): a positional argument of a call ``W(...)`` (not ``*X``:
    a Starred is no Call; not a keyword's value: a keyword is no Call), that
    call, with one ``await`` seen through, not the whole expression of an
    expression statement, and ``W`` not a bare name among LOOKING_BUILTINS
    resolving to no binding of the module (lookup from ``sc``: None) in a
    module without a star import?  Parentheses are no nodes: seen through."""
    if par.__class__ is not ast.Call or not any(a is X for a in par.args):
        return False
    up = parents.get(id(par))
    if up.__class__ is ast.Await:
        up = parents.get(id(up))
    if up.__class__ is ast.Expr:
        return False
    W = par.func
    if (W.__class__ is ast.Name and W.id in LOOKING_BUILTINS
            and lookup(sc, W.id, m.module_scope) is None and not star_import(m)):
        return False
    return True


def value_use_nodes(nodes):
    """The (node, parent, scope) of ``nodes`` (module_nodes) that are names
    or attributes used as a value (is_value_use)."""
    for node, par, sc in nodes:
        cls = node.__class__
        if (cls is ast.Name or cls is ast.Attribute) and is_value_use(node, par):
            yield node, par, sc


def escape_reads(proj, m, keys, escaping, by_origin, instances, reads_of):
    """The escapes of module ``m``: each use as a value of a producer in
    ``escaping`` (the producers that are no tools), and each use as a value
    of a producer that is a tool called through a wrapper (``W(X)(...)``),
    given another name (renamed_use: ``fn = X``, ``return X``...) or handed
    to a call that keeps what it gives (kept_call_use: ``f = partial(X)``,
    ``r = await to_thread(X, a)``; not ``register(X)`` as a statement, nor
    ``callable(X)``), is a read of form ``escape`` (no key) of every origin of ``keys(F)`` (chains
    followed whole, no dispatch), for every finding of those origins."""
    nodes = module_nodes(m)
    parents = None
    for node, par, sc in value_use_nodes(nodes):
        t = escape_target(proj, m, node, sc, instances)
        if t is None:
            continue
        if id(t.node) not in escaping:
            if not keys.get(id(t.node)) or not any(is_tool_decorator(d) for d in t.node.decorator_list):
                continue
            if parents is None:
                parents = {id(n): p for n, p, _ in nodes}
            if not (wrapped_use(node, par, parents) or renamed_use(node, par)
                    or kept_call_use(m, node, par, parents, sc)):
                continue
        rec = read_record(m, node, "escape", None, False)
        for o in escape_origins(t, keys):
            for f in by_origin[o]:
                reads_of.setdefault(id(f), []).append(rec)


def project_module(proj, name):
    """Is the absolute module ``name`` a project module: a project module
    named ``name`` or ending with ``.name`` (as imports resolve, one or
    several), or a package holding one (a project module whose name starts
    with ``name.`` or holds ``.name.``: a namespace package without
    ``__init__.py`` too)?  The most cautious reading: a module that may be
    the project's is never taken for the standard library's."""
    if not name:
        return False
    tail, head, mid = "." + name, name + ".", "." + name + "."
    return any(n == name or n.endswith(tail) or n.startswith(head) or mid in n for n in proj.by_name)


def external_import(proj, b):
    """Is the binding ``b`` an import of a module that is not a project
    module (docs/rules.md "**Calls toolshape cannot resolve.**": `import
    subprocess`, `from os.path import join`)?  `import a.b [as x]`: the
    module ``a.b`` (and its package ``a``); `from P import A`: ``P`` and
    ``P.A`` (``A`` may be a submodule); a relative import is the project's."""
    if b.kind == "import":
        name = b.node.name
        return not (project_module(proj, name) or project_module(proj, name.partition(".")[0]))
    if b.kind == "importfrom":
        st = b.stmt
        if st.level or not st.module:
            return False
        return not (project_module(proj, st.module) or project_module(proj, st.module + "." + b.node.name))
    return False


def unresolved_target(proj, m, C, sc, instances):
    """Does the call ``C`` (standing where its names resolve in scope ``sc``)
    resolve to nothing a module defines (docs/rules.md "**Calls toolshape
    cannot resolve.**")?  Resolved: its callee resolves as a builder call's
    callee (a module-level name, ``A.name``, ``self.name`` / ``cls.name``
    in a method: Project._resolve_callee), to a method as a call on an
    instance (instance_attribute), or to a module-level class (a
    constructor); or its callee is a module-level name, or ``A.N`` with
    ``A`` a module-level name, bound once by an import of a module that is
    not a project module (the standard library's, an installed package's),
    or such a name of a function's own scope bound there exactly once by an
    import (callee_binding: `def f(): from subprocess import run` then
    `run(...)`; docs/rules.md "**Imports inside a function**").
    ``self.N`` / ``cls.N`` / ``K(...).N`` / ``N.m`` of a class whose body
    defines no ``def N`` (inherited) resolve to nothing."""
    f = C.func
    if proj.resolve_call(m, C, sc) is not None:
        return False
    if f.__class__ is ast.Attribute and instance_attribute(proj, m, f, sc, instances) is not None:
        return False
    if proj.resolve_class(m, C, sc) is not None:
        return False
    base = f if f.__class__ is ast.Name else f.value if f.value.__class__ is ast.Name else None
    if base is not None:
        b = callee_binding(m, sc, base.id)
        if b is not None and external_import(proj, b):
            return False
    return True


def unresolved_name(f):
    """The name ``N`` of the callee ``f`` of a call that may be unresolved:
    a name ``N`` or an attribute ``X.N`` (any ``X``), not the callee of a
    direct tool call (``X.tool.N``); else None."""
    if f.__class__ is ast.Name:
        return f.id
    if f.__class__ is ast.Attribute:
        if f.value.__class__ is ast.Attribute and f.value.attr == "tool":
            return None  # a direct tool call
        return f.attr
    return None


def unresolved_span(C, par):
    """The span of an unresolved call's read: the call itself (an awaited
    call's too, not its ``await``)."""
    return C


def unresolved_reads(proj, m, named, keys, keyed, by_origin, instances, reads_of):
    """The unresolved calls of module ``m`` (docs/rules.md "**Calls toolshape
    cannot resolve.**"): a call whose callee is a name ``N`` or an attribute
    ``X.N`` (parentheses are no nodes), ``N`` the name of producers
    (``named``: N -> [Candidate with keys]), that is no direct tool call
    (``X.tool.N(...)``), no builder call with TS003 key findings at that call,
    and resolves to nothing (unresolved_target), has one read of form
    ``escape`` (no key), span the call, of every origin a receiver call of
    each such producer without arguments reaches (escape_origins), given once
    to every finding of those origins.  Anywhere in the module (an
    annotation too: "anywhere in the project")."""
    for node, par, sc in module_nodes(m):
        if node.__class__ is not ast.Call:
            continue
        N = unresolved_name(node.func)
        fs = named.get(N) if N is not None else None
        if not fs or keyed(("call", id(node))):
            continue
        if not unresolved_target(proj, m, node, sc, instances):
            continue
        origins = set()
        for t in fs:
            origins |= escape_origins(t, keys)
        rec = read_record(m, unresolved_span(node, par), "escape", None, False)
        for o in origins:
            for fd in by_origin[o]:
                reads_of.setdefault(id(fd), []).append(rec)


def unresolved_use_name(m, X, sc):
    """The name ``N`` of a use as a value ``X`` (a Name or an Attribute,
    standing where its names resolve in scope ``sc``) that may be an
    unresolved use (docs/rules.md "**Uses as a value toolshape cannot
    resolve**"): an attribute ``Y.N`` (any ``Y``, ``A.tool.N`` too), or a
    name ``N`` that resolves to the module's bindings (any kind, any number),
    to bindings at least one of which is an import (``import`` / ``from ...
    import``, a function's or a class body's: ``try: from M import N`` /
    ``except ImportError: N = None`` too), or to none (a builtin, a star
    import); else None (a parameter, a local variable, a local def... with
    no import among the bindings)."""
    if X.__class__ is ast.Attribute:
        return X.attr
    owner = lookup(sc, X.id, m.module_scope)
    if owner is None or owner is m.module_scope:
        return X.id
    bs = owner.owned.get(X.id, ())
    if any(b.kind in ("import", "importfrom") for b in bs):
        return X.id
    return None


def value_call(m, X):
    """A call ``X()`` standing where the use ``X`` stands (docs/rules.md:
    "a call `X(...)` standing where `X` stands"), made once per use and kept
    on the module: the project's resolution caches are keyed by the call's
    id, which must not be reused while the project lives."""
    calls = getattr(m, "_value_calls", None)
    if calls is None:
        calls = m._value_calls = {}
    C = calls.get(id(X))
    if C is None:
        C = calls[id(X)] = ast.Call(func=X, args=[], keywords=[])
    return C


def unresolved_use_reads(proj, m, named, keys, by_origin, instances, reads_of):
    """The unresolved uses of module ``m`` (docs/rules.md "**Uses as a value
    toolshape cannot resolve**"): a use as a value ``X`` (is_value_use: not a
    callee, not an attribute's object, not a target; parentheses are no
    nodes) named ``N`` (unresolved_use_name), ``N`` the name of producers
    (``named``), such that a call ``X()`` standing there would be an
    unresolved call (unresolved_target of value_call; the direct tool
    call's exemption is the call's, by unresolved_name: ``A.tool.N`` as a
    value is judged as any attribute), is one read of form ``escape`` (no
    key), span ``X``'s node, of every origin a receiver call of each such
    producer without arguments reaches (escape_origins), tools and others
    alike, only when the use is called through a wrapper (wrapped_use) or
    given another name (renamed_use): elsewhere a use is not seen (handed to
    a call that keeps what it gives, kept_call_use, too: that form of a
    tool's escape is not one of an unresolved use); given once to every
    finding of those origins."""
    nodes = module_nodes(m)
    parents = None
    for node, par, sc in value_use_nodes(nodes):
        N = unresolved_use_name(m, node, sc)
        fs = named.get(N) if N is not None else None
        if not fs:
            continue
        # only two of the forms that make a tool's use an escape (wrapped or
        # renamed; not kept_call_use), for every producer
        if parents is None:
            parents = {id(n): p for n, p, _ in nodes}
        if not (wrapped_use(node, par, parents) or renamed_use(node, par)):
            continue
        if not unresolved_target(proj, m, value_call(m, node), sc, instances):
            continue
        origins = set()
        for t in fs:
            origins |= escape_origins(t, keys)
        rec = read_record(m, node, "escape", None, False)
        for o in origins:
            for fd in by_origin[o]:
                reads_of.setdefault(id(fd), []).append(rec)


def searched_for_possible(m, keys):
    """The moved ``keys`` whose possible reads module ``m`` is searched
    for: none without a marker in its text, else those it holds between
    quotes, as written."""
    data = m.data
    if not any(mk in data for mk in FILE_MARKERS):
        return set()
    return {k for k in keys
            if any(q.encode("utf-8", "surrogatepass") in data for q in ('"%s"' % k, "'%s'" % k))}


def possible_reads(m, by_key, reads_of):
    """The possible reads of module ``m``: the keyed reads, of a key in
    ``by_key`` (key -> [finding]) that ``m`` is searched for, on its
    possible receivers."""
    searched = searched_for_possible(m, by_key)
    if not searched:
        return
    nodes = module_nodes(m)
    parents = None
    for node, par, sc in nodes:
        if par is None or node.__class__ not in (ast.Name, ast.Attribute, ast.Subscript):
            continue
        if not is_possible_receiver(m, node, sc):
            continue
        if parents is None:
            parents = {id(n): p for n, p, _ in nodes}
        for form, key, span in reads_at(m, node, par, parents):
            if form not in KEYED_FORMS or key not in searched:
                continue
            rec = read_record(m, span, form, key, True)
            for f in by_key[key]:
                reads_of.setdefault(id(f), []).append(rec)


def read_sort_key(r):
    return (r["path"], r["line"], r["column"], r["end_line"], r["end_column"], r["form"], r["key"] or "",
            r["possible"])


def module_findings(mod, stats):
    """Every finding (TS001-TS004) of module ``mod``."""
    found = literal_findings(mod.path, mod.tree, mod.data, stats, mod.src)
    out, add, node_span, entry_pos = program_findings(mod)
    ts004_findings(mod, add, node_span, entry_pos, stats)
    ts003_findings(mod, add, node_span, entry_pos, stats)
    return found + out


def attach_reads(findings):
    """Give every finding of the output its ``reads``."""
    reads_of = {}
    for proj in list(_projects.values()):
        project_reads(proj, reads_of)
    total = set()
    for f in findings:
        rs = sorted(reads_of.get(id(f), ()), key=read_sort_key)
        f["reads"] = rs
        total.update(id(r) for r in rs)
    return len(total)


# --------------------------------------------------------------------------
# TS005-TS009: the rest of the contract (docs/rules.md "The rest of the
# contract: TS005–TS009")
#
# TS006-TS009 judge each shaped display of a file by itself; TS005 follows
# the returns of every tool function of the project (through names and
# calls resolved as builder calls are, `Project.resolve_call`) and is
# computed once per project after every file given has been read (so that a
# tool in a file read later still reaches a display of a file read earlier).
# Findings carry the fields of the others: `dict` is the returned display
# (TS005) or the shaped display (TS006-TS009), `expression`, `origin` and
# `builder` are null.  A file Python 3 cannot parse (a legacy Python 2 file
# among them) gives nothing and holds no tool, helper or display.
#
# Readings chosen where docs/rules.md leaves a choice (the most literal one):
#  * "constant string" is an ast.Constant whose value is a str (ast has
#    already decoded escapes, joined implicit concatenation and dropped
#    parentheses; an f-string is a JoinedStr, bytes a bytes constant);
#  * the configured statuses / block types / tool decorators (--status,
#    --block-type, --tool-decorator) replace the defaults, they do not add
#    to them ("or the project's `statuses`");
#  * TS005, a tool decorator "written as a dotted name": a Name or a chain of
#    Attributes ending in a Name, compared by its dotted text with each
#    configured decorator (whitespace and comments inside do not matter);
#    "or a call of one": an ast.Call whose func is such a dotted name, with
#    any arguments.  A decorator that is a subscript, a call of a call, etc.
#    is none.  Methods and nested defs are tool functions when decorated;
#  * TS005 case 2: "plain assignment `N = D` (one target...)" is an
#    ast.Assign with exactly one target, the name N (annotated `N: T = D`,
#    chained `a = N = D`, augmented `N |= D`, a `for`, `with`, walrus,
#    `del N`, a parameter, an import... disqualify N).  Every binding
#    owned by F counts, also one written in a nested scope under
#    `nonlocal N`.  Two or more display bindings: each display is returned;
#  * TS005 case 2, "every other use of N in F (nested scopes included)":
#    every ast.Name N in F's body, or in scopes nested in it, that resolves
#    to F's own N (Python's lookup, `nonlocal` / `global` followed; a nested
#    scope that binds its own N does not use F's); the binding targets
#    themselves aside.  An allowed use is a Load that is exactly (no
#    intermediate node but parentheses) the value of a `return` (in F or in a
#    nested def), the `value` of a Load subscript `N[...]` (whatever is done
#    with the subscript's result, e.g. `N["content"].append(b)`), or the
#    `value` of the attribute `get` that is the func of a call `N.get(...)`;
#  * TS005 case 3: the callee resolved by `Project.resolve_call` (the
#    builder resolver, reused as is: module-level functions and methods of
#    module-level classes, any of them); each function is followed once per
#    tool (a cycle ends).  `E` must itself be the call (parentheses aside),
#    or `await` of one: `return h() if c else None`, `return h().x` are
#    not followed;
#  * TS005 and the project: every tool function of the project's index (the
#    files under its root, and the files given) counts, also in a file that
#    is not given; the displays it reaches are reported in the files given
#    only.  A file that does not parse (a legacy Python 2 one) holds no tool
#    and no function a call can resolve to (its module resolves to nothing),
#    so nothing is reached through it either;
#  * TS005 "tool names the first tool function": scan.py prints no
#    messages, so the tool is computed (ts005_reached) but not printed;
#  * TS005 "half-shaped": no entry with a None key (`**spread`), and exactly
#    one of the constant string keys "status" / "content" (duplicates of the
#    same key count once); one finding per display node, however many
#    tools, returns or names reach it; key the missing one;
#  * TS006 judges every "status" entry of a shaped display (duplicates each),
#    TS007 every "content" entry (duplicates each, not only the last one),
#    while TS008 / TS009 look at the content list, the value of the last
#    "content" entry only;
#  * TS007 / TS009 "a number": an int, float or complex constant (not a
#    bool), or a unary `-` / `+` whose operand is one (not `-(-1)`, not
#    `-True`, not `~1`); `...`, a comprehension, a name or a call are none of
#    the listed kinds.  TS007's string literal is a str or bytes constant or
#    an f-string (JoinedStr); "a tuple display" is any ast.Tuple (`()`,
#    `(a,)`, `(*x,)`); "a dict display"/"a set display": ast.Dict / ast.Set
#    (not comprehensions);
#  * TS008: a block with a `**spread` or any key that is not a constant
#    string (a number, None, a name, an f-string, bytes) is not judged; an
#    empty `{}` has no block type; the span is the block from its `{` to after
#    its `}`, the parentheses around it left out;
#  * TS009: every "text" entry of every block (duplicates each); "a list"
#    is any ast.List (`[]` included); None, a tuple, bytes and a string are
#    none of the listed kinds; "a call of a bare name": an ast.Call whose
#    func is an ast.Name among len, int, float, sum, round, dict, list, any
#    arguments (parentheses around the callee are seen through: `(len)(x)`
#    is a call of len); "the module binds nowhere": no scope of the file binds the
#    name in any way scan.py's ScopeBuilder records (assignment targets of
#    every form, augmented assignment, `for` / `with` / `except` targets,
#    walrus, `del`, `match` captures, imports, `def`, `class`, parameters
#    of functions and lambdas, comprehension targets); a star import binds
#    no name that can be known, so it does not count, and neither do
#    `global` / `nonlocal` by themselves;
#  * suppressions: as for TS001, a comment on the line where the finding's
#    span starts (at or after its start) or on the line of its `dict`'s `{`
#    (at or after the `{`); --ignore'd codes are neither reported nor
#    counted as suppressed.

DEFAULT_STATUSES = ("success", "error", "degraded")
DEFAULT_BLOCK_TYPES = ("text", "json", "image", "document", "video")
DEFAULT_TOOL_DECORATORS = ("tool", "strands.tool", "strands.tools.tool")
# the lists in force (main() resets them, then --status / --block-type /
# --tool-decorator replace them)
STATUSES = set(DEFAULT_STATUSES)
BLOCK_TYPES = set(DEFAULT_BLOCK_TYPES)
TOOL_DECORATORS = set(DEFAULT_TOOL_DECORATORS)
TEXT_BUILTIN_CALLS = ("len", "int", "float", "sum", "round", "dict", "list")
CONTRACT_CODES = ("TS005", "TS006", "TS007", "TS008", "TS009")
_NUMBER_TYPES = (int, float, complex)
# (path as given, Module, stats) of each file given, for the TS005 pass at the end
_CONTRACT_PENDING = []


def dotted_name(node):
    """``a.b.c`` of a Name / Attribute chain, else None."""
    parts = []
    while node.__class__ is ast.Attribute:
        parts.append(node.attr)
        node = node.value
    if node.__class__ is not ast.Name:
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def is_contract_tool_decorator(d):
    """Is decorator ``d`` one of TOOL_DECORATORS, or a call of one?"""
    if d.__class__ is ast.Call:
        d = d.func
    return dotted_name(d) in TOOL_DECORATORS


def is_tool_function(node):
    return node.__class__ in _FUNCTION_NODES and any(
        is_contract_tool_decorator(d) for d in node.decorator_list)


def str_keys(d):
    """The set of constant string keys of dict display ``d``."""
    return {k.value for k in d.keys if k is not None and k.__class__ is _Constant
            and k.value.__class__ is str}


def half_shaped_missing(d):
    """The missing key ("content" / "status") of a half-shaped display ``d``, else None."""
    if any(k is None for k in d.keys):
        return None
    ks = str_keys(d)
    has_s, has_c = "status" in ks, "content" in ks
    if has_s == has_c:
        return None
    return "content" if has_s else "status"


def name_index(mod):
    """({name: [(Name node, parent, scope)]}, {id(node): parent}) of ``mod``."""
    cached = getattr(mod, "_name_index", None)
    if cached is None:
        names = {}
        parents = {}
        for node, par, sc in module_nodes(mod):
            parents[id(node)] = par
            if node.__class__ is ast.Name:
                names.setdefault(node.id, []).append((node, par, sc))
        cached = mod._name_index = (names, parents)
    return cached


def allowed_result_use(node, par, parents):
    """Is the Name ``node`` (parent ``par``) a load that is the value of a
    return, the object of a load subscript, or the object of ``.get(...)``?"""
    if node.ctx.__class__ is not ast.Load or par is None:
        return False
    cls = par.__class__
    if cls is ast.Return:
        return par.value is node
    if cls is ast.Subscript:
        return par.value is node and par.ctx.__class__ is ast.Load
    if cls is ast.Attribute:
        if par.value is not node or par.attr != "get":
            return False
        g = parents.get(id(par))
        return g is not None and g.__class__ is ast.Call and g.func is par
    return False


def name_displays(mod, fs, name):
    """The displays returned through ``return name`` in function scope ``fs``
    (case 2), or [] when ``name`` does not qualify."""
    bs = fs.owned.get(name)
    if not bs:
        return []  # not owned by F (a global, a free name, a builtin)
    for b in bs:
        if not (b.kind == "assign" and b.stmt.__class__ is ast.Assign and len(b.stmt.targets) == 1
                and b.value.__class__ is _Dict):
            return []
    targets = {id(b.node) for b in bs}
    names, parents = name_index(mod)
    for node, par, sc in names.get(name, ()):
        if id(node) in targets:
            continue
        if lookup(sc, name, mod.module_scope) is not fs:
            continue  # another variable of the same name
        if not allowed_result_use(node, par, parents):
            return []
    return [b.value for b in bs]


def function_returns(mod, fs):
    """(displays, callees) of function scope ``fs``: the displays of cases 1-2
    and the functions its `return CALL`s resolve to (case 3)."""
    cache = getattr(mod, "_returns_cache", None)
    if cache is None:
        cache = mod._returns_cache = {}
    hit = cache.get(id(fs))
    if hit is not None:
        return hit
    proj = mod.project
    displays, callees = [], []
    for ret in fs.returns:
        E = ret.value
        if E is None:
            continue
        # docs/rules.md case 3: `return await CALL` is followed like
        # `return CALL` (an async tool awaiting its helper).
        if E.__class__ is ast.Await:
            E = E.value
        cls = E.__class__
        if cls is _Dict:
            displays.append(E)
        elif cls is ast.Name:
            displays.extend(name_displays(mod, fs, E.id))
        elif cls is ast.Call:
            t = proj.resolve_call(mod, E, fs)
            if t is not None:
                callees.append(t)
    hit = cache[id(fs)] = (displays, callees)
    return hit


def tool_displays(mod, fs):
    """[(Module, display)] of every display a tool function (scope ``fs``) returns."""
    out = []
    seen = {id(fs.node)}
    work = [(mod, fs)]
    while work:
        m, s = work.pop()
        displays, callees = function_returns(m, s)
        out.extend((m, d) for d in displays)
        for t in callees:
            if id(t.node) not in seen:
                seen.add(id(t.node))
                work.append((t.module, t.scope))
    return out


def ts005_reached(proj):
    """{id(Module): [(display, missing key, tool name)]}: the half-shaped
    displays the project's tool functions reach (each once, with the first
    tool by path, then line)."""
    cached = getattr(proj, "_ts005", None)
    if cached is not None:
        return cached
    reached = {}
    seen = set()
    for abspath in sorted(proj.names):
        m = proj.modules.get(abspath)
        if m is None and abspath not in proj.modules:
            try:
                with open(abspath, "rb") as fh:
                    data = fh.read()
            except OSError:
                continue
            if b"return" not in data:
                continue  # no function of it returns anything
            m = proj.module(abspath, data)
        if m is None:
            continue
        tools = [s for s in m.scopes if s.kind == "function" and is_tool_function(s.node)]
        tools.sort(key=lambda s: (s.node.lineno, s.node.col_offset))
        for s in tools:
            for dm, d in tool_displays(m, s):
                if id(d) in seen:
                    continue
                missing = half_shaped_missing(d)
                if missing is None:
                    continue
                seen.add(id(d))
                reached.setdefault(id(dm), []).append((d, missing, s.node.name))
    proj._ts005 = reached
    return reached


def module_bound_names(mod):
    """Every name some scope of ``mod`` binds."""
    cached = getattr(mod, "_bound_names", None)
    if cached is None:
        cached = mod._bound_names = {n for s in mod.scopes for n, _ in s.raw}
    return cached


def number_literal(v):
    if v.__class__ is _Constant:
        return v.value.__class__ in _NUMBER_TYPES
    return (v.__class__ is ast.UnaryOp and v.op.__class__ in (ast.USub, ast.UAdd)
            and v.operand.__class__ is _Constant and v.operand.value.__class__ in _NUMBER_TYPES)


def content_kind(v):
    """TS007: what the content value ``v`` wrongly is, or None."""
    cls = v.__class__
    if cls is _Constant:
        x = v.value
        if x.__class__ in (str, bytes):
            return "a string"
        if x is True or x is False:
            return "a bool"
        if x is None:
            return "None"
    if cls is ast.JoinedStr:
        return "a string"
    if number_literal(v):
        return "a number"
    if cls is _Dict:
        return "a dict"
    if cls is ast.Set:
        return "a set"
    if cls is ast.Tuple:
        return "a tuple"
    if cls is ast.List and not v.elts:
        return "an empty list"
    return None


def text_kind(mod, v):
    """TS009: what the text value ``v`` evidently is instead of a string, or None."""
    cls = v.__class__
    if number_literal(v):
        return "a number"
    if cls is _Constant and (v.value is True or v.value is False):
        return "a bool"
    if cls is ast.List:
        return "a list"
    if cls is _Dict:
        return "a dict"
    if cls is ast.Set:
        return "a set"
    if (cls is ast.Call and v.func.__class__ is ast.Name and v.func.id in TEXT_BUILTIN_CALLS
            and v.func.id not in module_bound_names(mod)):
        return "the result of `%s()`" % v.func.id
    return None


def block_problem(b):
    """TS008: the problem of content block ``b`` (a dict display), or None."""
    for k in b.keys:
        if k is None or k.__class__ is not _Constant or k.value.__class__ is not str:
            return None  # a spread or a key that is not a constant string: not judged
    ks = {k.value for k in b.keys}
    types = ks & BLOCK_TYPES
    if not types:
        return "no block type"
    if len(types) > 1:
        return "more than one block type"
    if len(ks) > 1:
        return "other keys"
    return None


def content_blocks(d):
    """The blocks of shaped display ``d``'s content list."""
    last = None
    for k, v in zip(d.keys, d.values):
        if k is not None and k.__class__ is _Constant and k.value == "content" and k.value.__class__ is str:
            last = v
    if last is None or last.__class__ is not ast.List:
        return []
    return [e for e in last.elts if e.__class__ is _Dict]


def contract_add(mod, path, out, stats, code, key, dict_node, span):
    """Append one TS005-TS009 finding of ``mod`` (unless ignored or suppressed)."""
    if code in IGNORED_CODES:
        return
    src = mod.src
    (sline, scol), (eline, ecol) = span
    dline, dcol = mod.start(dict_node)
    if silenced(src.comments, sline, scol, code) or silenced(src.comments, dline, dcol, code):
        stats["suppressed"] = stats.get("suppressed", 0) + 1
        # counted apart too: a caller holding a corpus to TS001-TS004 only
        stats["suppressed_contract"] = stats.get("suppressed_contract", 0) + 1
        return
    out.append({
        "path": path, "dict_line": dline, "dict_column": dcol + 1, "code": code,
        "key": key, "expression": None, "origin": None, "builder": None,
        "line": sline, "column": scol + 1, "end_line": eline, "end_column": ecol + 1,
    })


def contract_node_span(mod, node):
    src = mod.src
    return (src.position(src.offset(node.lineno, node.col_offset)),
            src.position(src.offset(node.end_lineno, node.end_col_offset)))


def contract_entry_span(mod, d, i):
    start, end = entry_span(mod.src, d, i, "TS001")
    return mod.src.position(start), mod.src.position(end)


def display_findings(mod, path, stats):
    """TS006-TS009 findings of module ``mod`` (each shaped display by itself)."""
    out = []
    if all(c in IGNORED_CODES for c in ("TS006", "TS007", "TS008", "TS009")):
        return out
    for node in ast.walk(mod.tree):
        if node.__class__ is not _Dict or not is_shaped(node):
            continue
        for i, (k, v) in enumerate(zip(node.keys, node.values)):
            if k is None or k.__class__ is not _Constant or k.value.__class__ is not str:
                continue
            if k.value == "status":
                if v.__class__ is _Constant and v.value.__class__ is str and v.value not in STATUSES:
                    contract_add(mod, path, out, stats, "TS006", "status", node,
                                 contract_entry_span(mod, node, i))
            elif k.value == "content":
                kind = content_kind(v)
                # docs/rules.md: `[]` is not reported when an entry of the
                # display breaks TS001/TS002 (suppressed or not): the fix
                # of those keys fills the list.
                if kind == "an empty list" and dict_findings(node):
                    kind = None
                if kind is not None:
                    contract_add(mod, path, out, stats, "TS007", "content", node,
                                 contract_entry_span(mod, node, i))
        for b in content_blocks(node):
            if block_problem(b) is not None:
                contract_add(mod, path, out, stats, "TS008", None, node, contract_node_span(mod, b))
            for j, (k, v) in enumerate(zip(b.keys, b.values)):
                if (k is not None and k.__class__ is _Constant and k.value == "text"
                        and k.value.__class__ is str and text_kind(mod, v) is not None):
                    contract_add(mod, path, out, stats, "TS009", "text", node, contract_entry_span(mod, b, j))
    return out


def ts005_findings():
    """The TS005 findings of every file given (the pass after all are read)."""
    out = []
    for path, mod, stats in _CONTRACT_PENDING:
        if "TS005" in IGNORED_CODES:
            break
        for d, missing, _tool in ts005_reached(mod.project).get(id(mod), ()):
            contract_add(mod, path, out, stats, "TS005", missing, d, contract_node_span(mod, d))
    return out


# `--literal-only` (benchmarks): TS001/TS002 of each file alone, no project
# kept in memory, as a pytest check over a tree would do it.
LITERAL_ONLY = False


def scan_program(path, given, data, stats):
    """Every finding (TS001-TS004, TS006-TS009) of file ``path``, found under
    PATH ``given`` (TS005 comes from ``ts005_findings`` at the end)."""
    if LITERAL_ONLY:
        return literal_findings(path, ast.parse(data, filename=path), data, stats, Source(data))
    proj = project_for(path, given)
    abspath = os.path.abspath(path)
    mod = proj.modules.get(abspath)
    if mod is None:
        mod = Module(proj, abspath, data)  # raises on unparsable input
        proj.modules[abspath] = mod
    mod.path = path
    found = literal_findings(path, mod.tree, data, stats, mod.src)
    out, add, node_span, entry_pos = program_findings(mod)
    ts004_findings(mod, add, node_span, entry_pos, stats)
    ts003_findings(mod, add, node_span, entry_pos, stats)
    if READS:
        # a file given twice: both copies of its findings get their reads
        mod.findings = (getattr(mod, "findings", None) or []) + found + out
    # TS006-TS009 now; TS005 once every file given has been read (main)
    contract = display_findings(mod, path, stats)
    _CONTRACT_PENDING.append((path, mod, stats))
    return found + out + contract


def configure_list(option, value, configured):
    """``--status`` / ``--block-type`` / ``--tool-decorator`` ``value``: the
    configured list replaces the default one (its first value clears it)."""
    target = {"--status": STATUSES, "--block-type": BLOCK_TYPES, "--tool-decorator": TOOL_DECORATORS}[option]
    if option not in configured:
        configured.add(option)
        target.clear()
    target.add(value)


def sort_key(f):
    return (f["path"], f["dict_line"], f["dict_column"], f["line"], f["column"],
            f["code"], f["key"] or "", f.get("expression") or "")


def main(argv):
    walk_all = False
    list_skipped = None
    want_stats = False
    paths = []
    configured = set()  # the list options given (their first use clears the default)
    for target, default in ((STATUSES, DEFAULT_STATUSES), (BLOCK_TYPES, DEFAULT_BLOCK_TYPES),
                            (TOOL_DECORATORS, DEFAULT_TOOL_DECORATORS)):
        target.clear()
        target.update(default)
    del _CONTRACT_PENDING[:]  # per run (scan.main may be called in-process)
    it = iter(argv)
    for arg in it:
        if arg == "--walk-all":
            walk_all = True
        elif arg == "--literal-only":
            global LITERAL_ONLY
            LITERAL_ONLY = True
        elif arg == "--stats":
            want_stats = True
        elif arg == "--reads":
            global READS
            READS = True
        elif arg in ("--allowed-key", "--ignore"):
            value = next(it, None)
            if value is None:
                sys.stderr.write("error: %s needs a value\n" % arg)
                return 2
            (ALLOWED_KEYS if arg == "--allowed-key" else IGNORED_CODES).add(value)
        elif arg in ("--status", "--block-type", "--tool-decorator"):
            value = next(it, None)
            if value is None:
                sys.stderr.write("error: %s needs a value\n" % arg)
                return 2
            configure_list(arg, value, configured)
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
                found = scan_program(path, p, data, stats)
            except (SyntaxError, ValueError, UnicodeError, RecursionError,
                    MemoryError, OverflowError, OSError) as exc:
                reason = "%s: %s" % (type(exc).__name__, exc)
                sys.stderr.write("skip: %s: %s\n" % (path, reason.replace("\n", " ")))
                skipped.append(path)
                stats["skipped"] += 1
                continue
            stats["files"] += 1
            findings.extend(found)

    findings.extend(ts005_findings())
    findings.sort(key=sort_key)
    if READS:
        if LITERAL_ONLY:
            sys.stderr.write("error: --reads needs the project pass, not --literal-only\n")
            return 2
        stats["reads"] = attach_reads(findings)
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
        for code in ("TS001", "TS002", "TS003", "TS004") + CONTRACT_CODES:
            stats[code] = sum(1 for f in findings if f["code"] == code)
        sys.stderr.write("stats: %s\n" % json.dumps(stats, sort_keys=True))
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
