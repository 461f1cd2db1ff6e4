#!/usr/bin/env python3
"""Deterministic generator of multi-module projects for TS005-TS009
(docs/rules.md "The rest of the contract: TS005–TS009", with "Legacy
Python 2 files").

Usage:
    python3 tests/reference/gen_contract.py OUTDIR [--seed N] [--programs K] [--verify]

Writes K folders OUTDIR/prog_NNNN/, each a project of its own (a
`pyproject.toml`, with a `[tool.toolshape]` table of `statuses`,
`block-types` and `tool-decorators` for about a third of them) holding one
package of several modules:

* `helpers.py` and `more.py`: helper functions returning displays directly,
  through names and through calls of other helpers (same module, across
  modules, chains, a recursion cycle), a helper defined twice, helpers no
  tool reaches; `__init__.py` re-exports some of them;
* `tools_*.py`: tool functions under every decorator spelling (`@tool`,
  `@tool(...)`, `@strands.tool`, `@strands.tools.tool`, spaced, with
  arguments) next to decoys (`@mcp.tool`, `@other.tool`, `@app.tool`,
  `@tools.tool`, `@strands.tool.extra`, `@tool_wrapper`, undecorated), a
  tool nested in a function, tool methods of a class calling
  `self._err(...)` / `cls._cerr(...)`, a subclass calling an inherited
  method (unresolved); each returns half-shaped displays (status only,
  content only, any key spelling, duplicates), full shaped ones, spreads
  and neither, directly or parenthesised, through a name (every allowed
  use, each disqualifying one, two display bindings) or through a call of a
  helper by every import form (`from .m import h`, `from pkg.m import h as
  alias`, `import pkg.m as m` + `m.h()`, `from pkg import m`, `from . import
  m as mm`, re-exports through `__init__.py` by `from pkg import h` and
  `import pkg` + `pkg.h()`) or an unresolvable one (`import pkg.m` +
  `pkg.m.h()`, an unknown module, a name bound twice, a nested def, a legacy
  module); nested defs, lambdas, classes and comprehensions of a tool hold
  returns that do not count;
* shaped displays everywhere (returns, module-level tables, plain
  functions) with statuses of every kind (contract ones, `"ok"`,
  `"failed"`, concatenated, prefixed, escaped, parenthesised; f-strings,
  bytes, names, conditionals), content of every TS007 kind and the kinds
  that are not judged (list display, name, call, comprehension, `[*x]`),
  content lists with blocks of every TS008 situation (one type, none, two,
  extra keys, spreads, computed keys, parenthesised blocks, starred and
  non-dict elements, nested lists) and text values of every TS009 kind
  (numbers, bools, displays, the builtin calls, `str()`, `len.x()`...), the
  builtin names shadowed in some files (assignment, def, class, import,
  parameter, lambda, `for`, comprehension, `except`, `with`, walrus, `del`,
  in any scope), duplicate keys, single-line and multi-line layouts;
* suppression comments of every form at random line ends (the line where a
  span starts, a dict's `{` line, the last line of a multi-line span,
  elsewhere);
* sometimes `legacy_N.py` files with Python 2 syntax (a `print x`
  statement, `exec code`, backticks, `0755`, `ur""`, `<>`) holding tools,
  helpers and violating displays: nothing comes from them.

No generated code has a TS001-TS004 finding, so scan.py's whole output is
compared.  The generator knows what it wrote: OUTDIR/manifest.json holds
every finding it expects with the default configuration ("findings": path
relative to OUTDIR with "/", code, key, expression, origin, builder,
dict_line, dict_column, line, column, end_line, end_column, as scan.py
prints them), the expected count of suppressed findings, the legacy files
(which scan.py skips), counts per code and construct, and under
"configured" each program that declares a configuration: its
`[tool.toolshape]` values, the equivalent scan.py flags ("flags", to run
scan.py on OUTDIR/prog_NNNN with them) and the findings (and suppressed
count) expected with them; "program_flags" gives every program's flags
(empty for the others) and "findings_as_configured" /
"suppressed_as_configured" what a run honouring each program's own
`[tool.toolshape]` reports over OUTDIR (the configured programs' configured
findings, the others' default ones).  The positions are where the generator put the
text; every non-legacy file is checked with ast.parse (and every legacy
one to fail it).  --verify runs scan.py (next to this file) over OUTDIR
with the defaults and over the configured programs with their flags, and
compares each with the manifest.

Output is a function of the arguments only; program NNNN does not depend
on --programs.
"""

import argparse
import ast
import json
import os
import random
import subprocess
import sys
from collections import Counter

ALL = "ALL"
CODES = ("TS005", "TS006", "TS007", "TS008", "TS009")
DEFAULT_STATUSES = ("success", "error", "degraded")
DEFAULT_BLOCK_TYPES = ("text", "json", "image", "document", "video")
DEFAULT_DECORATORS = ("tool", "strands.tool", "strands.tools.tool")
BUILTIN_CALLS = ("len", "int", "float", "sum", "round", "dict", "list")

# (comment text, codes it silences)
COMMENTS = [
    ("# toolshape: ignore", ALL),
    ("# toolshape: ignore[TS005]", {"TS005"}),
    ("# toolshape: ignore[TS006]", {"TS006"}),
    ("# toolshape: ignore[TS007]", {"TS007"}),
    ("# toolshape: ignore[TS008]", {"TS008"}),
    ("# toolshape: ignore[TS009]", {"TS009"}),
    ("# toolshape: ignore[TS006, TS007]", {"TS006", "TS007"}),
    ("# toolshape: ignore[TS008 TS009]", {"TS008", "TS009"}),
    ("# TOOLSHAPE: IGNORE[ts005]", {"TS005"}),
    ("# noqa: TS005", {"TS005"}),
    ("# noqa: TS006", {"TS006"}),
    ("# noqa:TS007,TS009", {"TS007", "TS009"}),
    ("# noqa: TS008", {"TS008"}),
    ("# noqa", ALL),
    ("# NOQA", ALL),
    ("# noqa: E501", set()),
    ("# toolshape: note", set()),
    ("# per-call note", set()),
    ("# toolshape: ignore[TS001]", {"TS001"}),
]

# configurations a program may declare: [tool.toolshape] values (None: not set)
CONFIGS = [
    {"statuses": ["success", "error", "ok"], "block-types": None, "tool-decorators": None},
    {"statuses": None, "block-types": ["text", "json", "toolUse"], "tool-decorators": ["tool", "mcp.tool"]},
    {"statuses": ["success", "error", "degraded", "done", "warning"], "block-types": ["text", "image"],
     "tool-decorators": ["strands.tool", "other.tool"]},
    {"statuses": None, "block-types": None, "tool-decorators": ["app.tool", "tools.tool", "strands.tools.tool"]},
    {"statuses": ["Success", "failed"], "block-types": ["json", "video", "document"], "tool-decorators": None},
]

# --------------------------------------------------------------------------
# value tables: (source text, what it is)

# statuses: (text, the constant string or None when it is not one)
STATUS_VALUES = [
    ('"success"', "success"), ('"error"', "error"), ('"degraded"', "degraded"), ("'success'", "success"),
    ('"ok"', "ok"), ('"failed"', "failed"), ('"done"', "done"), ('"warning"', "warning"), ('"Success"', "Success"),
    ('"succ" "ess"', "success"), ('"o" "k"', "ok"), ('("error")', "error"), ('("ok")', "ok"),
    ("u'ok'", "ok"), ('r"error"', "error"), ('"\\x6fk"', "ok"), ('"""degraded"""', "degraded"), ('""', ""),
    ('f"ok"', None), ('b"ok"', None), ("code", None), ('"ok" if x else "error"', None), ("str(code)", None),
    ('f"{code}"', None),
]
# content that is not a list display: (text, TS007 kind or None)
CONTENT_VALUES = [
    ('"text"', "a string"), ('f"t{x}"', "a string"), ('b"raw"', "a string"), ('"a" "b"', "a string"),
    ('("par")', "a string"), ("'''long'''", "a string"), ('"Größe ✓"', "a string"),
    ("3", "a number"), ("2.5", "a number"), ("1j", "a number"), ("-1", "a number"), ("+2.5", "a number"),
    ("-(1)", "a number"), ("0x1F", "a number"), ("True", "a bool"), ("False", "a bool"), ("None", "None"),
    ('{"text": x}', "a dict"), ("{}", "a dict"), ("{x}", "a set"), ("()", "a tuple"), ("(x,)", "a tuple"),
    ('({"text": x},)', "a tuple"), ("[]", "an empty list"), ("([])", "an empty list"),
    ("x", None), ("make(x)", None), ("[b for b in x]", None), ("[*x]", None), ("{k: v for k, v in x}", None),
    ("...", None), ("-(-1)", None), ("~1", None), ("-x", None), ("blocks", None), ("x or []", None),
    ("list(x)", None), ("[] if x else blocks", None),
]
# text values of a block: (text, TS009 kind or ("call", builtin) or None)
TEXT_VALUES = [
    ('"done"', None), ("x", None), ('f"{x}"', None), ("str(x)", None), ("len.x()", None), ("x.len()", None),
    ("max(x)", None), ("repr(x)", None), ("None", None), ("(1, 2)", None), ('b"x"', None), ("-x", None),
    ('"größe ✓"', None), ("'a' 'b'", None), ("[v for v in x]", None), ("len(x)()", None),
    ("1", "a number"), ("1.5", "a number"), ("-1", "a number"), ("+1j", "a number"), ("(7)", "a number"),
    ("True", "a bool"), ("False", "a bool"), ("[]", "a list"), ("[x]", "a list"), ("{}", "a dict"),
    ('{"a": 1}', "a dict"), ("{x}", "a set"),
] + [("%s(x)" % n, ("call", n)) for n in BUILTIN_CALLS] + [("(len)(x)", ("call", "len")), ("round(x, 2)", ("call", "round"))]

KEY_SPELLINGS = {
    "status": ['"status"', "'status'", '"sta" "tus"', '("status")', 'u"status"', '"st\\x61tus"', 'r"status"',
               '(("status"))', '"""status"""'],
    "content": ['"content"', "'content'", '"con" "tent"', '("content")', 'U"content"', '"con\\x74ent"'],
    "text": ['"text"', "'text'", '"te" "xt"', '("text")', 'u"text"', '"t\\x65xt"'],
    "toolUseId": ['"toolUseId"'],
}
# keys that are not constant strings (in blocks: the block is not judged)
NONCONST_KEYS = ["k", "1", 'f"k"', "None", 'b"k"', "(1, 2)", "2.5"]
NON_BLOCK_ELEMENTS = ["x", "make()", '"s"', "*blocks", "*[{'type': 1}]", "[{'type': 1}]", "(x)", "None"]

DECORATORS = [
    # (text, dotted name) ; every one is also written as a call sometimes
    ("tool", "tool"), ("strands.tool", "strands.tool"), ("strands.tools.tool", "strands.tools.tool"),
    ("strands . tool", "strands.tool"), ("strands.tools . tool", "strands.tools.tool"),
    ("mcp.tool", "mcp.tool"), ("other.tool", "other.tool"), ("app.tool", "app.tool"),
    ("tools.tool", "tools.tool"), ("strands.tool.extra", "strands.tool.extra"), ("tool_wrapper", "tool_wrapper"),
]
DECORATOR_ARGS = ['(name="n")', "()", '(description="d", name="m")']


def silences(c, code):
    return c[1] == ALL or code in c[1]


class W:
    """A module being written: text plus the current (1-based) line and
    (1-based, in characters) column, the comments at line ends and the
    builtin names the file binds."""

    def __init__(self, rel, rng, legacy=False, p_comment=0.12):
        self.rel = rel
        self.rng = rng
        self.p_comment = p_comment
        self.parts = []
        self.line = 1
        self.col = 1
        self.comments = {}
        self.bound = set()
        self.legacy = legacy
        self.names = Counter()  # module-level names bound (imports, defs)

    def put(self, text):
        assert "\n" not in text
        start = (self.line, self.col)
        self.parts.append(text)
        self.col += len(text)
        return start, (self.line, self.col)

    def pos(self):
        return (self.line, self.col)

    def end(self, comment=None):
        if comment is not None:
            self.parts.append("  " + comment[0])
            self.comments.setdefault(self.line, []).append(comment)
        self.parts.append("\n")
        self.line += 1
        self.col = 1

    def pick_comment(self, p=None):
        """A random comment for the end of this line (or None)."""
        if self.rng.random() < (self.p_comment if p is None else p):
            return self.rng.choice(COMMENTS)
        return None

    def lineof(self, text, comment=None):
        self.put(text)
        self.end(comment)

    def text(self):
        return "".join(self.parts)


# --------------------------------------------------------------------------
# displays: what is written and where


class Val:
    """A value: its text and what each rule makes of it."""

    def __init__(self, text, sconst=None, ckind=None, tkind=None):
        self.text, self.sconst, self.ckind, self.tkind = text, sconst, ckind, tkind


class ListV:
    """A list display (the content list): elements are Val or BlockV."""

    def __init__(self, elems, parens=0, multiline=False):
        self.elems, self.parens, self.multiline = elems, parens, multiline
        self.ckind = None if elems else "an empty list"


class BlockV:
    def __init__(self, entries, parens=0):
        self.entries, self.parens = entries, parens


class Ent:
    """An entry: kind "const" (key the constant string), "nonconst" or "spread"."""

    def __init__(self, kind, key_text, key, value):
        self.kind, self.key_text, self.key, self.value = kind, key_text, key, value
        self.span = None


class Disp:
    """A dict display as written: its `{` position, end, entries (with spans)
    and, for the blocks of a content list, their spans."""

    def __init__(self, rel, entries):
        self.rel = rel
        self.entries = entries
        self.start = self.stop = None
        self.blocks = {}  # id(ListV) -> [(BlockV, span)]

    def const_keys(self):
        return {e.key for e in self.entries if e.kind == "const"}

    def shaped(self):
        return {"status", "content"} <= self.const_keys()

    def half_missing(self):
        if any(e.kind == "spread" for e in self.entries):
            return None
        ks = self.const_keys()
        s, c = "status" in ks, "content" in ks
        if s == c:
            return None
        return "content" if s else "status"


def write_value(w, d, v, ind):
    if isinstance(v, Val):
        w.put(v.text)
        return
    w.put("(" * v.parens + "[")
    spans = d.blocks.setdefault(id(v), [])
    for i, e in enumerate(v.elems):
        if v.multiline:
            w.end(w.pick_comment())
            w.put(ind + "    ")
        elif i:
            w.put(", ")
        if isinstance(e, BlockV):
            w.put("(" * e.parens)
            start = w.pos()
            write_entries(w, d, e.entries, ind + "    ")
            spans.append((e, (start, w.pos())))
            w.put(")" * e.parens)
        else:
            w.put(e.text)
        if v.multiline:
            w.put(",")
    if v.multiline:
        w.end(w.pick_comment())
        w.put(ind)
    w.put("]" + ")" * v.parens)


def write_entries(w, d, entries, ind, multiline=False):
    """``{ entries }`` at the current position; ``multiline``: one entry a line."""
    w.put("{")
    for i, e in enumerate(entries):
        if multiline:
            w.end(w.pick_comment())
            w.put(ind + "    ")
        elif i:
            w.put(", ")
        start = w.pos()
        if e.kind == "spread":
            w.put("**")
            write_value(w, d, e.value, ind + "    ")
        else:
            w.put(e.key_text + ": ")
            write_value(w, d, e.value, ind + "    ")
        e.span = (start, w.pos())
        if multiline:
            w.put(",")
    if multiline:
        w.end(w.pick_comment())
        w.put(ind)
    w.put("}")


def write_display(p, w, entries, ind, multiline=None, parens=0):
    """Write a dict display at the current position (no line end); return its Disp."""
    d = Disp(w.rel, entries)
    if multiline is None:
        multiline = p.rng.random() < 0.2
    w.put("(" * parens)
    d.start = w.pos()
    write_entries(w, d, entries, ind, multiline)
    d.stop = w.pos()
    w.put(")" * parens)
    if not w.legacy:
        p.displays.append(d)
    return d


# --------------------------------------------------------------------------
# choosing entries


class Gen:
    """One program being generated."""

    def __init__(self, seed, index, outrel):
        self.rng = random.Random(seed * 1000003 + index * 7919 + 17)
        self.index = index
        self.outrel = outrel
        self.modules = {}
        self.displays = []
        self.funcs = []       # every Func of the program (not legacy)
        self.constructs = Counter()
        self.n = 0

    def fresh(self, stem):
        self.n += 1
        return "%s_%d" % (stem, self.n)

    def note(self, what):
        self.constructs[what] += 1

    def key_text(self, key):
        return self.rng.choice(KEY_SPELLINGS[key])

    def status_val(self):
        t, c = self.rng.choice(STATUS_VALUES)
        return Val(t, sconst=c)

    def text_val(self):
        t, k = self.rng.choice(TEXT_VALUES)
        return Val(t, tkind=k)

    def block(self):
        """A content block of a random TS008 situation."""
        r = self.rng
        kind = r.choice(["text", "text", "text", "json", "image", "document", "video", "none", "empty", "two",
                         "extra", "spread", "nonconst", "dup", "toolUse"])
        self.note("block-" + kind)

        def text_ent():
            return Ent("const", self.key_text("text"), "text", self.text_val())

        def typ(t):
            return Ent("const", '"%s"' % t, t, Val(r.choice(["x", "{}", '{"a": 1}', '"v"'])))
        if kind == "text":
            ents = [text_ent()]
        elif kind in ("json", "image", "document", "video", "toolUse"):
            ents = [typ(kind)]
        elif kind == "none":
            ents = [Ent("const", r.choice(['"type"', '"kind"', '"Text"', '"tëxt"']), None, Val('"text"'))]
            ents[0].key = ents[0].key_text.strip('"')
        elif kind == "empty":
            ents = []
        elif kind == "two":
            ents = [text_ent(), typ(r.choice(["json", "image", "video"]))]
        elif kind == "extra":
            ents = [text_ent(), Ent("const", '"type"', "type", Val('"text"'))]
        elif kind == "spread":
            ents = [text_ent(), Ent("spread", None, None, Val(r.choice(["extra", "(extra or {})"])))]
        elif kind == "nonconst":
            ents = [text_ent(), Ent("nonconst", r.choice(NONCONST_KEYS), None, Val("1"))]
        else:  # dup
            ents = [text_ent(), text_ent()]
        if r.random() < 0.3:
            r.shuffle(ents)
        return BlockV(ents, parens=1 if r.random() < 0.1 else 0)

    def content_val(self, list_bias=0.6, multiline_ok=False):
        r = self.rng
        if r.random() < list_bias:
            elems = []
            for _ in range(r.choice([1, 1, 2, 2, 3])):
                elems.append(self.block() if r.random() < 0.8 else Val(r.choice(NON_BLOCK_ELEMENTS)))
            v = ListV(elems, parens=1 if r.random() < 0.08 else 0,
                      multiline=multiline_ok and r.random() < 0.3)
            self.note("content-list")
            return v
        t, k = r.choice(CONTENT_VALUES)
        self.note("content-" + (k or "other"))
        return Val(t, ckind=k)

    def shaped_entries(self, multiline_ok=False):
        """Entries of a shaped display (no TS001 key: only status, content, toolUseId)."""
        r = self.rng
        ents = [Ent("const", self.key_text("status"), "status", self.status_val()),
                Ent("const", self.key_text("content"), "content", self.content_val(multiline_ok=multiline_ok))]
        if r.random() < 0.15:
            ents.append(Ent("const", '"toolUseId"', "toolUseId", Val("x")))
        if r.random() < 0.1:
            self.note("duplicate-status")
            ents.append(Ent("const", self.key_text("status"), "status", self.status_val()))
        if r.random() < 0.1:
            self.note("duplicate-content")
            ents.append(Ent("const", self.key_text("content"), "content", self.content_val()))
        r.shuffle(ents)
        return ents

    def half_entries(self):
        """Entries of a display returned by a tool: half-shaped mostly, else
        shaped, spread or neither (no shaped display holds an extra key)."""
        r = self.rng
        kind = r.choice(["status", "status", "content", "content", "shaped", "spread", "neither", "dupstatus",
                         "status-extra", "content-extra", "nonconst"])
        self.note("returned-" + kind)
        if kind == "shaped":
            return self.shaped_entries()
        if kind in ("status", "dupstatus", "status-extra"):
            ents = [Ent("const", self.key_text("status"), "status", self.status_val())]
            if kind == "dupstatus":
                ents.append(Ent("const", self.key_text("status"), "status", self.status_val()))
        elif kind in ("content", "content-extra"):
            ents = [Ent("const", self.key_text("content"), "content", self.content_val())]
        elif kind == "spread":
            key = r.choice(["status", "content"])
            ents = [Ent("const", self.key_text(key), key, Val('"error"')),
                    Ent("spread", None, None, Val(r.choice(["extra", "(extra or {})"])))]
        elif kind == "nonconst":
            ents = [Ent("const", self.key_text("status"), "status", self.status_val()),
                    Ent("nonconst", r.choice(['f"content"', 'b"content"', "key"]), None, Val("[]"))]
        else:
            lit = r.choice(['"message"', '"result"', '"error"'])
            ents = [Ent("const", lit, lit.strip('"'), Val("x"))]
        if kind.endswith("-extra"):
            ents.append(Ent("const", r.choice(['"message"', '"detail"', '"code"']), "extra", Val("x")))
        r.shuffle(ents)
        return ents


# --------------------------------------------------------------------------
# functions: what each returns (the model TS005 is computed from)


class Func:
    def __init__(self, rel, name, decos=()):
        self.rel, self.name, self.decos = rel, name, list(decos)
        self.returns = []  # ("d", Disp) / ("c", Func or None)

    def is_tool(self, decorators):
        return any(d in decorators for d in self.decos)


class Acc:
    """A way to call a function from a module: the callee's text and its
    target, resolved once the module's bindings are known (``base``: the
    module-level name the callee's text starts from)."""

    def __init__(self, text, target, base=None, form=""):
        self.text, self.target, self.base, self.form = text, target, base, form

    def resolve(self, w):
        if self.target is None:
            return None
        if self.base is not None and w.names[self.base] != 1:
            return None
        return self.target


def deco_lines(p, w, ind, kind):
    """Write the decorators of a function; return their dotted names."""
    r = p.rng
    out = []
    if kind == "tool":
        text, dotted = r.choice(DECORATORS)
        p.note("decorator-" + dotted + ("-spaced" if " " in text else ""))
        if r.random() < 0.35:
            text += r.choice(DECORATOR_ARGS)
            p.note("decorator-call")
        if r.random() < 0.1:
            w.lineof(ind + "@functools.cache", w.pick_comment())
            out.append("functools.cache")
        w.lineof(ind + "@" + text, w.pick_comment())
        out.append(dotted)
    return out


def write_allowed_uses(p, w, ind, N):
    r = p.rng
    for _ in range(r.choice([0, 1, 1, 2, 3])):
        form = r.choice(["sub", "get", "get2", "append", "later", "paren", "ifget"])
        p.note("name-use-" + form)
        if form == "sub":
            w.lineof(ind + 'print(%s["status"])' % N, w.pick_comment())
        elif form == "get":
            w.lineof(ind + 'seen = %s.get("status")' % N, w.pick_comment())
        elif form == "get2":
            w.lineof(ind + 'seen = %s.get("content", []) or %s.get("x", 1)' % (N, N), w.pick_comment())
        elif form == "append":
            w.lineof(ind + '%s["content"].append(x)' % N, w.pick_comment())
        elif form == "later":
            name = p.fresh("later")
            w.lineof(ind + "def %s():" % name)
            w.lineof(ind + "    return %s" % N, w.pick_comment())
        elif form == "paren":
            w.lineof(ind + 'seen = (%s)["status"]' % N, w.pick_comment())
        else:
            w.lineof(ind + 'if %s.get("x"):' % N)
            w.lineof(ind + "    pass")


BAD_USES = ["store", "del", "update", "passed", "rebound", "aug", "setdefault", "iter", "getattr", "subaug",
            "alias", "nested-store", "walrus", "in", "method", "for-before", "annotated", "chained", "global"]


def write_return(p, w, f, ind, accs, halves=True):
    """One return statement of function ``f`` (and the statements before it)."""
    r = p.rng
    entries = p.half_entries if halves else p.shaped_entries
    form = r.choice(["direct", "direct", "paren", "name", "name", "two", "bad", "bad", "call", "call", "call",
                     "none", "free"] if accs else ["direct", "direct", "paren", "name", "two", "bad", "none"])
    p.note("return-" + form)
    if form in ("direct", "paren"):
        w.put(ind + "return ")
        d = write_display(p, w, entries(), ind, parens=1 if form == "paren" else 0)
        w.end(w.pick_comment())
        f.returns.append(("d", d))
    elif form == "name":
        N = p.fresh(r.choice(["res", "reply", "result", "payload"]))
        w.put(ind + "%s = " % N)
        d = write_display(p, w, entries(), ind)
        w.end(w.pick_comment())
        write_allowed_uses(p, w, ind, N)
        w.lineof(ind + ("return %s" if r.random() < 0.8 else "return (%s)") % N, w.pick_comment())
        f.returns.append(("d", d))
    elif form == "two":
        N = p.fresh("res")
        w.lineof(ind + "if code:")
        w.put(ind + "    %s = " % N)
        d1 = write_display(p, w, entries(), ind + "    ")
        w.end(w.pick_comment())
        w.lineof(ind + "else:")
        w.put(ind + "    %s = " % N)
        d2 = write_display(p, w, entries(), ind + "    ")
        w.end(w.pick_comment())
        write_allowed_uses(p, w, ind, N)
        w.lineof(ind + "return %s" % N)
        f.returns.extend([("d", d1), ("d", d2)])
    elif form == "bad":
        N = p.fresh("res")
        use = r.choice(BAD_USES)
        p.note("name-bad-" + use)
        if use == "for-before":
            w.lineof(ind + "for %s in x:" % N)
            w.lineof(ind + "    pass")
        if use == "global":
            w.lineof(ind + "global %s" % N)
        w.put(ind + ("%s: dict = " if use == "annotated" else "other = %s = " if use == "chained" else "%s = ") % N)
        write_display(p, w, entries(), ind)
        w.end(w.pick_comment())
        if r.random() < 0.5:
            write_allowed_uses(p, w, ind, N)
        line = {
            "store": '%s["content"] = []', "del": 'del %s["status"]', "update": "%s.update(content=[])",
            "passed": "sink(%s)", "rebound": "%s = make()", "aug": '%s |= {"content": []}',
            "setdefault": '%s.setdefault("content", [])', "iter": "for k in %s:\n    pass",
            "getattr": "seen = %s.get", "subaug": '%s["status"] += "!"', "alias": "other = %s",
            "nested-store": 'def fill():\n    %s["content"] = []', "in": 'seen = "status" in %s',
            "method": "%s.copy()", "for-before": None, "annotated": None, "chained": None, "global": None,
            "walrus": None,
        }[use]
        if use == "walrus":
            w.put(ind + "if (%s := " % N)
            write_display(p, w, entries(), ind, multiline=False)
            w.put("):")
            w.end()
            w.lineof(ind + "    pass")
        elif use == "rebound":
            w.lineof(ind + "if code:")
            w.lineof(ind + "    " + line % N)
        elif line is not None:
            for ln in (line % N).split("\n"):
                w.lineof(ind + ln)
        w.lineof(ind + "return %s" % N, w.pick_comment())
    elif form == "call":
        a = r.choice(accs)
        p.note("call-" + a.form)
        w.lineof(ind + ("return %s(x)" if r.random() < 0.85 else "return (%s(x))") % a.text, w.pick_comment())
        f.returns.append(("c", a))
    elif form == "free":
        w.lineof(ind + "return make(x)", w.pick_comment())
    else:
        w.lineof(ind + r.choice(["return None", "return"]), w.pick_comment())


def write_decoys(p, w, ind):
    """Returns in nested scopes of a function: none of them is the function's."""
    r = p.rng
    for _ in range(r.choice([0, 0, 1, 2])):
        form = r.choice(["def", "lambda", "class", "comp", "nested-tool"])
        p.note("nested-" + form)
        if form == "def":
            w.lineof(ind + "def %s():" % p.fresh("inner"))
            w.put(ind + "    return ")
            write_display(p, w, p.half_entries(), ind + "    ", multiline=False)
            w.end(w.pick_comment())
        elif form == "lambda":
            w.put(ind + "%s = lambda: " % p.fresh("fn"))
            write_display(p, w, p.half_entries(), ind, multiline=False)
            w.end(w.pick_comment())
        elif form == "class":
            w.lineof(ind + "class %s:" % p.fresh("Inner"))
            w.lineof(ind + "    def m(self):")
            w.put(ind + "        return ")
            write_display(p, w, p.half_entries(), ind + "        ", multiline=False)
            w.end(w.pick_comment())
        elif form == "comp":
            w.put(ind + "%s = [" % p.fresh("many"))
            write_display(p, w, p.half_entries(), ind, multiline=False)
            w.put(" for _ in x]")
            w.end(w.pick_comment())
        else:
            # a tool at any depth is a tool: its own returns count
            f = Func(w.rel, p.fresh("nested_tool"))
            f.decos = deco_lines(p, w, ind, "tool")
            w.lineof(ind + "def %s(x, code):" % f.name)
            write_return(p, w, f, ind + "    ", [])
            if not w.legacy:
                p.funcs.append(f)


def write_func(p, w, f, ind, accs, kind, head=None, halves=True):
    """A function: decorators, def line, decoys, an if-chain of returns."""
    r = p.rng
    f.decos = deco_lines(p, w, ind, kind) + f.decos
    if head is None:
        head = "x, code"
    kw = "async def" if r.random() < 0.12 else "def"
    w.lineof(ind + "%s %s(%s):" % (kw, f.name, head), w.pick_comment())
    body = ind + "    "
    if r.random() < 0.3:
        write_decoys(p, w, body)
    n = r.choice([1, 2, 2, 3, 4])
    for i in range(n):
        if i < n - 1:
            w.lineof(body + "if x == %d:" % i)
            write_return(p, w, f, body + "    ", accs, halves)
        else:
            write_return(p, w, f, body, accs, halves)
    w.lineof("")
    if not w.legacy:
        p.funcs.append(f)
    return f


def write_table(p, w):
    """A module-level table of shaped displays (TS006-TS009 judge them all)."""
    name = p.fresh("TABLE").upper()
    w.names[name] += 1
    w.lineof("%s = [" % name, w.pick_comment())
    for _ in range(p.rng.choice([1, 2, 3])):
        w.put("    ")
        write_display(p, w, p.shaped_entries(multiline_ok=True), "    ")
        w.put(",")
        w.end(w.pick_comment())
    w.lineof("]")
    w.lineof("")


SHADOW_FORMS = {
    # form: (template, binds the name)
    "assign": ("{n} = None", True),
    "def": ("def _wrap_{i}():\n    def {n}():\n        pass", True),
    "class": ("class _K_{i}:\n    class {n}:\n        pass", True),
    "import": ("def _imp_{i}():\n    from math import floor as {n}", True),
    "import-plain": ("import {n}", True),
    "param": ("def _p_{i}(a, {n}=None):\n    return a", True),
    "lambda": ("_l_{i} = lambda {n}: 0", True),
    "for": ("for {n} in range(2):\n    pass", True),
    "comp": ("_c_{i} = [0 for {n} in range(2)]", True),
    "except": ("try:\n    pass\nexcept Exception as {n}:\n    pass", True),
    "with": ("with open('f') as {n}:\n    pass", True),
    "walrus": ("if ({n} := 3):\n    pass", True),
    "del": ("def _d_{i}():\n    del {n}", True),
    "aug": ("def _a_{i}():\n    {n} += 1", True),
    "star": ("def _s_{i}(*{n}):\n    return 0", True),
    "match": ("match 1:\n    case [{n}]:\n        pass", True),
    "global-only": ("def _g_{i}():\n    global {n}", False),
    "attribute": ("_o_{i} = object()\n_o_{i}.{n} = 1", False),
    "subscript": ("_m_{i} = {{}}\n_m_{i}['{n}'] = 1", False),
    "call": ("_v_{i} = {n}([0])", False),
}


def write_shadows(p, w):
    r = p.rng
    for _ in range(r.choice([0, 0, 1, 2, 3])):
        n = r.choice(BUILTIN_CALLS)
        form = r.choice(sorted(SHADOW_FORMS))
        template, binds = SHADOW_FORMS[form]
        p.note("shadow-" + form)
        for ln in template.format(n=n, i=p.fresh("s")[2:]).split("\n"):
            w.lineof(ln)
        if binds:
            w.bound.add(n)
    w.lineof("")


# --------------------------------------------------------------------------
# modules and programs

PACKAGES = ["robot", "fleet", "lab", "svc", "toolkit"]
PY2_LINES = [
    # (construct, lines at module level, lines in a function body)
    ("print", 'print "starting"', '    print x'),
    ("exec", 'exec "x = 1"', "    exec code"),
    ("backticks", "LABEL = `1`", "    label = `x`"),
    ("octal", "MODE = 0755", "    mode = 0644"),
    ("ur-prefix", 'PATTERN = ur"\\d+"', '    pat = ur"x"'),
    ("not-equal", "if 1 <> 2:\n    pass", "    if x <> 1:\n        pass"),
]


def helper_module(p, rel, pkg, names, accs_out, modname, import_targets=()):
    """helpers.py / more.py: helpers (some of them chained, across modules
    through ``import_targets``; in helpers.py a cycle, one defined twice, a
    base class); ``accs_out`` gets the Funcs by name."""
    w = p.new_module(rel)
    r = p.rng
    w.lineof('"""Helpers of the %s package."""' % pkg)
    lines, other_accs = plan_imports(p, w, pkg, list(import_targets), [], extras=False)
    for line in lines:
        w.lineof(line)
    w.lineof("")
    funcs = {n: Func(rel, n) for n in names}
    local = [Acc(n, f, base=n, form="same-module") for n, f in funcs.items()]
    if modname == "helpers":
        # a recursion cycle and a name bound twice
        ca, cb = Func(rel, "cyc_a"), Func(rel, "cyc_b")
        for n in ("cyc_a", "cyc_b"):
            w.names[n] += 1
        twice = [Func(rel, "twice"), Func(rel, "twice")]
        w.names["twice"] += 2
        accs_out["cyc_a"] = ca
        accs_out["twice"] = twice[0]
    for n in funcs:
        w.names[n] += 1
    accs = local + other_accs
    for n, f in funcs.items():
        write_func(p, w, f, "", accs, "helper")
        accs_out[n] = f
    if modname == "helpers":
        p.note("helper-cycle")
        w.lineof("def cyc_a(x, code):")
        w.lineof("    if x:")
        w.lineof("        return cyc_b(x)")
        ca.returns.append(("c", Acc("cyc_b", cb, base="cyc_b")))
        write_return(p, w, ca, "    ", [])
        w.lineof("")
        w.lineof("def cyc_b(x, code):")
        w.lineof("    if x:")
        w.lineof("        return cyc_a(x)")
        cb.returns.append(("c", Acc("cyc_a", ca, base="cyc_a")))
        write_return(p, w, cb, "    ", [])
        w.lineof("")
        p.funcs.extend([ca, cb])
        for f in twice:
            p.note("helper-twice")
            write_func(p, w, f, "", [], "helper")
        # a base class: its methods are reached from a subclass's tool by no call
        base = Func(rel, "_inherited")
        w.names["Base"] += 1
        w.lineof("class Base:")
        write_func(p, w, base, "    ", [], "helper", head="self, x, code")
        accs_out["Base"] = None
    if r.random() < 0.5:
        write_table(p, w)
    write_shadows(p, w)
    return w


def legacy_module(p, rel, helper_names):
    """A Python 2 file: tools, helpers and violating displays, none of them
    seen; its tool and its helper also call the package's helpers (through
    a file that is not Python 3, no display is reached)."""
    r = p.rng
    w = p.new_module(rel, legacy=True)
    constructs = r.sample(PY2_LINES, r.choice([1, 1, 2]))
    h1, h2 = r.choice(helper_names), r.choice(helper_names)
    w.lineof('"""Legacy module (Python 2)."""')
    w.lineof("from strands import tool")
    w.lineof("from .helpers import %s" % h1)
    w.lineof("from .helpers import %s as again" % h2)
    for what, top, _ in constructs:
        if r.random() < 0.5:
            p.note("legacy-" + what)
            for ln in top.split("\n"):
                w.lineof(ln)
    w.lineof("")
    f = Func(rel, "old_err")
    write_func(p, w, f, "", [], "helper")
    t = Func(rel, "old_tool", ["tool"])
    w.lineof("@tool")
    w.lineof("def old_tool(x, code):")
    for what, _, body in constructs:
        p.note("legacy-" + what)
        for ln in body.split("\n"):
            w.lineof(ln)
    w.lineof("    if x:")
    w.lineof("        return %s(x)" % h1)
    w.lineof("    if code:")
    w.lineof("        return old_err(x)")
    w.put("    return ")
    write_display(p, w, p.half_entries(), "    ")
    w.end()
    w.lineof("")
    w.lineof("def old_relay(x):")
    w.lineof("    return again(x)")
    w.lineof("")
    write_table(p, w)
    return w


def write_tool_class(p, w, accs):
    """A class with helper methods and tool methods calling them through
    self / cls (and one method it does not have)."""
    r = p.rng
    cname = p.fresh("Kit")
    w.names[cname] += 1
    w.lineof("class %s:" % cname)
    err, cerr = Func(w.rel, "_err"), Func(w.rel, "_cerr")
    write_func(p, w, err, "    ", [], "helper", head="self, x, code")
    w.lineof("    @classmethod")
    write_func(p, w, cerr, "    ", [], "helper", head="cls, x, code")
    self_accs = [Acc("self._err", err, form="self"), Acc("self._cerr", cerr, form="self-classmethod"),
                 Acc("self.missing", None, form="self-missing")]
    cls_accs = [Acc("cls._cerr", cerr, form="cls"), Acc("cls._err", err, form="cls-method"),
                Acc("cls.missing", None, form="cls-missing")]
    for _ in range(r.choice([1, 2])):
        f = Func(w.rel, p.fresh("run"))
        write_func(p, w, f, "    ", self_accs + accs, "tool", head="self, x, code")
    if r.random() < 0.6:
        f = Func(w.rel, p.fresh("crun"))
        w.lineof("    @classmethod")
        write_func(p, w, f, "    ", cls_accs + accs, "tool", head="cls, x, code")
    if r.random() < 0.3:
        # a static tool method: its own returns
        f = Func(w.rel, p.fresh("srun"))
        w.lineof("    @staticmethod")
        write_func(p, w, f, "    ", [], "tool")


def write_subclass(p, w):
    """A subclass of the helpers' Base: `self._inherited()` is not a method of it."""
    cname = p.fresh("Child")
    w.names[cname] += 1
    w.lineof("class %s(Base):" % cname)
    f = Func(w.rel, p.fresh("inherit"))
    p.note("call-self-inherited")
    write_func(p, w, f, "    ", [Acc("self._inherited", None, form="self-inherited")], "tool",
               head="self, x, code")


def write_factory(p, w, accs):
    """A tool nested in a plain function."""
    name = p.fresh("factory")
    w.names[name] += 1
    w.lineof("def %s():" % name)
    f = Func(w.rel, p.fresh("inner_tool"))
    p.note("tool-nested")
    write_func(p, w, f, "    ", [a for a in accs if "." not in a.text or a.base], "tool")
    w.lineof("    return %s" % f.name)
    w.lineof("")


def plan_imports(p, w, pkg, targets, reexports, extras=True):
    """Import lines for module ``w`` and the accessors they give:
    ``targets`` [(module name, function name, Func)] of the helper modules,
    ``reexports`` [(exported name, Func or None)] of the package."""
    r = p.rng
    lines, accs = [], []
    aliases = {}

    def imp(line, *names):
        if line not in lines:
            lines.append(line)
            for n in names:
                w.names[n] += 1

    def module_alias(form, m):
        key = (form, m)
        if key not in aliases:
            if form == "import-as":
                a = p.fresh(m[:2].upper())
                imp("import %s.%s as %s" % (pkg, m, a), a)
            elif form == "from-pkg-module":
                a = m
                imp("from %s import %s" % (pkg, m), m)
            else:
                a = p.fresh(m[:2] + "m")
                imp("from . import %s as %s" % (m, a), a)
            aliases[key] = a
        return aliases[key]

    for m, n, f in targets:
        form = r.choice(["from-rel", "from-abs-alias", "import-as", "from-pkg-module", "from-dot-module-as",
                         "dotted", "from-rel"])
        if form == "from-rel":
            imp("from .%s import %s" % (m, n), n)
            accs.append(Acc(n, f, base=n, form=form))
        elif form == "from-abs-alias":
            a = p.fresh("alias")
            imp("from %s.%s import %s as %s" % (pkg, m, n, a), a)
            accs.append(Acc(a, f, base=a, form=form))
        elif form == "dotted":
            imp("import %s.%s" % (pkg, m), pkg)
            accs.append(Acc("%s.%s.%s" % (pkg, m, n), None, form=form))
        else:
            a = module_alias(form, m)
            accs.append(Acc("%s.%s" % (a, n), f, base=a, form=form))
    for e, f in reexports:
        form = r.choice(["reexport-from", "reexport-dot", "reexport-pkg"])
        if form == "reexport-from":
            imp("from %s import %s" % (pkg, e), e)
            accs.append(Acc(e, f, base=e, form=form))
        elif form == "reexport-dot":
            imp("from . import %s" % e, e)
            accs.append(Acc(e, f, base=e, form=form))
        else:
            imp("import %s" % pkg, pkg)
            accs.append(Acc("%s.%s" % (pkg, e), f, base=pkg, form=form))
    if extras:
        for form in r.sample(["ghost", "twice", "not-exported", "double-alias", "legacy"], r.choice([1, 2, 3])):
            if form == "ghost":
                imp("from .nowhere import ghost", "ghost")
                accs.append(Acc("ghost", None, form=form))
            elif form == "twice":
                imp("from .helpers import twice", "twice")
                accs.append(Acc("twice", None, form=form))
            elif form == "not-exported":
                # `import pkg` + `pkg.n()`: resolved only when the package binds n
                exported = {e for e, _ in p.reexports}
                hidden = [n for _, n, _ in targets if n not in exported]
                if hidden:
                    imp("import %s" % pkg, pkg)
                    accs.append(Acc("%s.%s" % (pkg, hidden[0]), None, form=form))
            elif form == "double-alias" and len(targets) >= 2:
                a = p.fresh("dup")
                (m1, n1, f1), (m2, n2, _) = targets[0], targets[1]
                imp("from .%s import %s as %s" % (m1, n1, a), a)
                imp("from .%s import %s as %s" % (m2, n2, a), a)
                accs.append(Acc(a, f1, base=a, form=form))
            elif form == "legacy" and p.legacy_mod:
                n = r.choice(["old_err", "old_relay"])
                imp("from .%s import %s" % (p.legacy_mod, n), n)
                accs.append(Acc(n, None, form=form))
    return lines, accs


def tool_module(p, rel, pkg, targets, reexports, helpers_base):
    r = p.rng
    w = p.new_module(rel)
    w.lineof('"""Tools of the %s package."""' % pkg)
    for line, names in (("import functools", ("functools",)), ("import mcp", ("mcp",)),
                        ("import strands", ("strands",)), ("from strands import tool", ("tool",))):
        if r.random() < 0.6:
            w.lineof(line)
            for n in names:
                w.names[n] += 1
    lines, accs = plan_imports(p, w, pkg, targets, reexports)
    sub = helpers_base and r.random() < 0.4
    if sub:
        lines.append("from .helpers import Base")
        w.names["Base"] += 1
    for line in lines:
        w.lineof(line, w.pick_comment(0.05))
    w.lineof("")
    w.lineof("")
    for _ in range(r.choice([0, 1, 2])):
        f = Func(rel, p.fresh("local"))
        w.names[f.name] += 1
        write_func(p, w, f, "", accs, "helper")
        accs.append(Acc(f.name, f, base=f.name, form="same-module"))
    if r.random() < 0.25:
        p.note("call-local-twice")
        name = p.fresh("dup_local")
        for _ in range(2):
            f = Func(rel, name)
            w.names[name] += 1
            write_func(p, w, f, "", [], "helper")
        accs.append(Acc(name, f, base=name, form="local-twice"))
    for _ in range(r.choice([2, 3, 4, 5])):
        f = Func(rel, p.fresh("tool"))
        w.names[f.name] += 1
        kind = "tool" if r.random() < 0.85 else "helper"
        write_func(p, w, f, "", accs, kind)
        if r.random() < 0.4:
            accs.append(Acc(f.name, f, base=f.name, form="other-tool"))
    if r.random() < 0.5:
        write_tool_class(p, w, accs)
        w.lineof("")
    if sub:
        write_subclass(p, w)
        w.lineof("")
    if r.random() < 0.3:
        write_factory(p, w, accs)
    if r.random() < 0.6:
        write_table(p, w)
    if r.random() < 0.4:
        # a plain function returning shaped displays
        f = Func(rel, p.fresh("report"))
        w.names[f.name] += 1
        write_func(p, w, f, "", [], "helper", halves=False)
    write_shadows(p, w)
    return w


def generate_program(seed, index, outrel):
    p = Gen(seed, index, outrel)
    r = p.rng
    pkg = r.choice(PACKAGES)
    p.pkg = pkg
    p.config = r.choice(CONFIGS) if r.random() < 0.35 else None
    p.legacy_mod = None
    p.reexports = []
    if r.random() < 0.3:
        p.legacy_mod = "legacy_%d" % r.randint(0, 9)
    more_names = [p.fresh("m") for _ in range(r.randint(1, 3))]
    helper_names = [p.fresh("h") for _ in range(r.randint(2, 5))]
    more_funcs, helper_funcs = {}, {}
    helper_module(p, pkg + "/more.py", pkg, more_names, more_funcs, "more")
    more_targets = [("more", n, more_funcs[n]) for n in more_names]
    # helpers reach more through imports of their own
    helper_module(p, pkg + "/helpers.py", pkg, helper_names, helper_funcs, "helpers",
                  r.sample(more_targets, min(len(more_targets), 2)))
    if p.legacy_mod:
        # written after the helpers: its tool and helper call them (and reach nothing)
        legacy_module(p, "%s/%s.py" % (pkg, p.legacy_mod), helper_names)
    # the package re-exports some helpers
    init = p.new_module(pkg + "/__init__.py")
    init.lineof('"""The %s package."""' % pkg)
    reexports = []
    for n in r.sample(helper_names + more_names, r.randint(0, 3)):
        m = "helpers" if n in helper_funcs else "more"
        f = helper_funcs.get(n) or more_funcs.get(n)
        if r.random() < 0.5:
            e = n + "_re"
            init.lineof("from .%s import %s as %s" % (m, n, e))
        else:
            e = n
            init.lineof("from .%s import %s" % (m, n))
        init.names[e] += 1
        reexports.append((e, f))
        p.note("reexport")
    if r.random() < 0.2:
        init.lineof("from .helpers import twice as twice_re")
        reexports.append(("twice_re", None))
    p.reexports = reexports
    targets = ([("helpers", n, helper_funcs[n]) for n in helper_names] + more_targets
               + [("helpers", "cyc_a", helper_funcs["cyc_a"])])
    for i in range(r.choice([1, 2, 2, 3])):
        tool_module(p, "%s/tools_%s.py" % (pkg, "abc"[i]), pkg, r.sample(targets, r.randint(1, len(targets))),
                    r.sample(reexports, len(reexports)), True)
    return p




def new_module(self, rel, legacy=False):
    w = W(rel, self.rng, legacy)
    self.modules[rel] = w
    return w


Gen.new_module = new_module


# --------------------------------------------------------------------------
# the findings the model gives, per configuration


def evaluate(p, statuses, block_types, decorators):
    """[(code, key, Disp, span)] of program ``p`` under a configuration (no
    suppression applied)."""
    out = []
    for d in p.displays:
        if not d.shaped():
            continue
        last = None
        for e in d.entries:
            if e.kind != "const":
                continue
            if e.key == "status" and isinstance(e.value, Val):
                if e.value.sconst is not None and e.value.sconst not in statuses:
                    out.append(("TS006", "status", d, e.span))
            elif e.key == "content":
                last = e.value
                if e.value.ckind is not None:
                    out.append(("TS007", "content", d, e.span))
        if isinstance(last, ListV):
            bound = p.modules[d.rel].bound
            for b, span in d.blocks[id(last)]:
                if all(x.kind == "const" for x in b.entries):
                    ks = {x.key for x in b.entries}
                    if not (len(ks) == 1 and ks <= set(block_types)):
                        out.append(("TS008", None, d, span))
                for x in b.entries:
                    if x.kind == "const" and x.key == "text" and x.value.tkind is not None:
                        tk = x.value.tkind
                        if not isinstance(tk, tuple) or tk[1] not in bound:
                            out.append(("TS009", "text", d, x.span))
    reached = {}
    for f in p.funcs:
        if not f.is_tool(decorators):
            continue
        seen = {id(f)}
        work = [f]
        while work:
            g = work.pop()
            for kind, what in g.returns:
                if kind == "d":
                    if what.half_missing() is not None:
                        reached.setdefault(id(what), what)
                else:
                    t = what.resolve(p.modules[g.rel])
                    if t is not None and id(t) not in seen:
                        seen.add(id(t))
                        work.append(t)
    for d in reached.values():
        out.append(("TS005", d.half_missing(), d, (d.start, d.stop)))
    return out


def records(p, found):
    """(findings, suppressed) records of ``found`` as scan.py prints them."""
    out, suppressed = [], []
    for code, key, d, (start, stop) in found:
        f = {"path": "%s/%s" % (p.outrel, d.rel), "dict_line": d.start[0], "dict_column": d.start[1], "code": code,
             "key": key, "expression": None, "origin": None, "builder": None, "line": start[0],
             "column": start[1], "end_line": stop[0], "end_column": stop[1]}
        comments = p.modules[d.rel].comments
        if any(silences(c, code) for ln in {start[0], d.start[0]} for c in comments.get(ln, ())):
            suppressed.append(f)
        else:
            out.append(f)
    return out, suppressed


def check_spans(p, texts, found):
    """The generator's own checks of what it recorded against the text written."""
    for code, key, d, (start, stop) in found:
        lines = texts[d.rel].split("\n")
        if lines[d.start[0] - 1][d.start[1] - 1] != "{" or lines[d.stop[0] - 1][d.stop[1] - 2] != "}":
            raise AssertionError("%s: display at %s..%s is no {...}" % (d.rel, d.start, d.stop))
        head = lines[start[0] - 1][start[1] - 1:]
        tail = lines[stop[0] - 1][:stop[1] - 1]
        if code in ("TS005", "TS008"):
            ok = head.startswith("{") and tail.endswith("}")
        else:
            keyword = {"TS006": "status", "TS007": "content", "TS009": "text"}[code]
            ok = head[:1] in "\"'(uUr" and not tail.endswith(",")
            ok = ok and any(head.startswith(t) for t in KEY_SPELLINGS[keyword])
        if not ok:
            raise AssertionError("%s: %s span %s..%s: %r .. %r" % (d.rel, code, start, stop, head[:30], tail[-30:]))


def flags_of(config):
    out = []
    for key, flag in (("statuses", "--status"), ("block-types", "--block-type"),
                      ("tool-decorators", "--tool-decorator")):
        for v in config.get(key) or ():
            out += [flag, v]
    return out


def toml_of(p):
    lines = ["[project]", 'name = "%s-%04d"' % (p.pkg, p.index), ""]
    if p.config is not None:
        lines.append("[tool.toolshape]")
        for key in ("statuses", "block-types", "tool-decorators"):
            if p.config.get(key) is not None:
                lines.append("%s = [%s]" % (key, ", ".join(json.dumps(v) for v in p.config[key])))
        lines.append("")
    return "\n".join(lines)


def sort_key(f):
    return (f["path"], f["dict_line"], f["dict_column"], f["line"], f["column"], f["code"], f["key"] or "")


def write_programs(outdir, seed, nprograms):
    manifest = {"seed": seed, "programs": 0, "modules": 0, "legacy_files": [], "expected_findings": 0,
                "suppressed_findings": 0, "by_code": Counter(), "suppressed_by_code": Counter(),
                "constructs": Counter(), "comments_written": Counter(), "findings": [], "configured": [],
                "suppressed_by_program": {}}
    os.makedirs(outdir, exist_ok=True)
    for i in range(nprograms):
        outrel = "prog_%04d" % i
        p = generate_program(seed, i, outrel)
        base = os.path.join(outdir, outrel)
        os.makedirs(base, exist_ok=True)
        with open(os.path.join(base, "pyproject.toml"), "w", encoding="utf-8") as fh:
            fh.write(toml_of(p))
        texts = {}
        for rel, w in p.modules.items():
            text = w.text()
            texts[rel] = text
            try:
                ast.parse(text, filename=rel)
                parsed = True
            except SyntaxError as exc:
                parsed = False
                if not w.legacy:
                    raise AssertionError("generated %s/%s does not parse: %s\n%s" % (outrel, rel, exc, text))
            if w.legacy:
                if parsed:
                    raise AssertionError("legacy %s/%s parses as Python 3" % (outrel, rel))
                manifest["legacy_files"].append("%s/%s" % (outrel, rel))
            path = os.path.join(base, *rel.split("/"))
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8", newline="\n") as fh:
                fh.write(text)
            for cl in w.comments.values():
                for c in cl:
                    manifest["comments_written"][c[0]] += 1
        found = evaluate(p, DEFAULT_STATUSES, DEFAULT_BLOCK_TYPES, DEFAULT_DECORATORS)
        check_spans(p, texts, found)
        kept, silenced = records(p, found)
        manifest["findings"].extend(kept)
        manifest["suppressed_findings"] += len(silenced)
        manifest["suppressed_by_program"][outrel] = len(silenced)
        for f in kept:
            manifest["by_code"][f["code"]] += 1
        for f in silenced:
            manifest["suppressed_by_code"][f["code"]] += 1
        if p.config is not None:
            c = p.config
            cfound = evaluate(p, c["statuses"] or DEFAULT_STATUSES, c["block-types"] or DEFAULT_BLOCK_TYPES,
                              c["tool-decorators"] or DEFAULT_DECORATORS)
            check_spans(p, texts, cfound)
            ckept, csilenced = records(p, cfound)
            ckept.sort(key=sort_key)
            manifest["configured"].append({
                "program": outrel, "config": {k: v for k, v in c.items() if v is not None},
                "flags": flags_of(c), "findings": ckept, "expected_findings": len(ckept),
                "suppressed_findings": len(csilenced),
                "by_code": dict(sorted(Counter(f["code"] for f in ckept).items()))})
        manifest["constructs"].update(p.constructs)
        manifest["programs"] += 1
        manifest["modules"] += len(p.modules)
    manifest["findings"].sort(key=sort_key)
    manifest["expected_findings"] = len(manifest["findings"])
    # what a run that honours each program's own [tool.toolshape] reports
    # (toolshape check OUTDIR): the configured programs' configured findings,
    # the others' default ones
    configured = {c["program"]: c for c in manifest["configured"]}
    as_configured = [f for f in manifest["findings"] if f["path"].split("/")[0] not in configured]
    for c in manifest["configured"]:
        as_configured.extend(c["findings"])
    as_configured.sort(key=sort_key)
    manifest["findings_as_configured"] = as_configured
    manifest["suppressed_as_configured"] = manifest["suppressed_findings"] - sum(
        manifest["suppressed_by_program"][p] for p in configured) + sum(
        c["suppressed_findings"] for c in manifest["configured"])
    manifest["program_flags"] = {"prog_%04d" % i: configured["prog_%04d" % i]["flags"]
                                 if "prog_%04d" % i in configured else [] for i in range(nprograms)}
    for k in ("by_code", "suppressed_by_code", "constructs", "comments_written"):
        manifest[k] = dict(sorted(manifest[k].items()))
    with open(os.path.join(outdir, "manifest.json"), "w", encoding="utf-8") as fh:
        json.dump(manifest, fh, indent=0, ensure_ascii=False)
        fh.write("\n")
    return manifest


# --------------------------------------------------------------------------
# --verify


def comparable(f):
    b = f.get("builder")
    return (f["path"], f["code"], f["key"], f.get("expression"), f.get("origin"),
            None if b is None else json.dumps(b, sort_keys=True),
            f["dict_line"], f["dict_column"], f["line"], f["column"], f["end_line"], f["end_column"])


def run_scan(outdir, flags, paths):
    here = os.path.dirname(os.path.abspath(__file__))
    cmd = [sys.executable, os.path.join(here, "scan.py"), "--stats"] + flags + paths
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise RuntimeError("scan.py failed (%d):\n%s" % (proc.returncode, proc.stderr[-4000:]))
    stats, skipped = {}, []
    for line in proc.stderr.splitlines():
        if line.startswith("stats: "):
            stats = json.loads(line[len("stats: "):])
        elif line.startswith("skip: "):
            skipped.append(line[len("skip: "):].split(": ")[0])
    got = json.loads(proc.stdout)

    def rel(path):
        return os.path.relpath(path, outdir).replace(os.sep, "/")
    for f in got:
        f["path"] = rel(f["path"])
    return got, stats, sorted(rel(s) for s in skipped)


def compare(label, outdir, want_findings, want_suppressed, want_skipped, got, stats, skipped):
    ok = True
    want = Counter(comparable(f) for f in want_findings)
    have = Counter(comparable(f) for f in got)
    if want != have:
        ok = False
        missing = sorted((want - have).elements())[:15]
        extra = sorted((have - want).elements())[:15]
        sys.stderr.write("verify %s: MISMATCH (manifest %d, scan.py %d)\n" % (label, sum(want.values()),
                                                                              sum(have.values())))
        for title, items in (("expected but not scanned", missing), ("scanned but not expected", extra)):
            sys.stderr.write("  %s:\n" % title)
            for t in items:
                sys.stderr.write("    %r\n" % (t,))
                try:
                    with open(os.path.join(outdir, t[0]), encoding="utf-8") as fh:
                        sys.stderr.write("      | %s\n" % fh.read().split("\n")[t[8] - 1])
                except OSError:
                    pass
    if stats.get("suppressed") != want_suppressed:
        ok = False
        sys.stderr.write("verify %s: suppressed findings: scan.py %s, generator %d\n"
                         % (label, stats.get("suppressed"), want_suppressed))
    if skipped != sorted(want_skipped):
        ok = False
        sys.stderr.write("verify %s: skipped files: scan.py %s, generator (the legacy files) %s\n"
                         % (label, skipped[:10], sorted(want_skipped)[:10]))
    return ok


# the constructs the corpus must hold (a generator change must not lose them)
REQUIRED = ["return-direct", "return-paren", "return-name", "return-two", "return-bad", "return-call",
            "return-free", "return-none", "helper-cycle", "helper-twice", "reexport", "tool-nested",
            "call-self-inherited", "call-local-twice"] + ["name-bad-" + u for u in BAD_USES] + [
    "call-" + f for f in ("from-rel", "from-abs-alias", "import-as", "from-pkg-module", "from-dot-module-as",
                          "dotted", "reexport-from", "reexport-dot", "reexport-pkg", "ghost", "twice",
                          "not-exported", "double-alias", "legacy", "same-module", "other-tool", "self",
                          "self-classmethod", "self-missing", "cls", "cls-method", "local-twice")] + [
    "nested-" + f for f in ("def", "lambda", "class", "comp", "nested-tool")] + [
    "shadow-" + f for f in SHADOW_FORMS] + [
    "legacy-" + c[0] for c in PY2_LINES] + [
    "block-" + k for k in ("text", "json", "image", "document", "video", "none", "empty", "two", "extra",
                           "spread", "nonconst", "dup", "toolUse")]


def verify(outdir, manifest):
    ok = True
    try:
        got, stats, skipped = run_scan(outdir, [], [outdir])
    except RuntimeError as exc:
        sys.stderr.write("verify: %s\n" % exc)
        return False
    ok &= compare("(defaults)", outdir, manifest["findings"], manifest["suppressed_findings"],
                  manifest["legacy_files"], got, stats, skipped)
    groups = {}
    for c in manifest["configured"]:
        groups.setdefault(tuple(c["flags"]), []).append(c)
    for flags, cs in sorted(groups.items()):
        try:
            got, stats, skipped = run_scan(outdir, list(flags), [os.path.join(outdir, c["program"]) for c in cs])
        except RuntimeError as exc:
            sys.stderr.write("verify: %s\n" % exc)
            return False
        progs = {c["program"] for c in cs}
        ok &= compare(" ".join(flags), outdir, [f for c in cs for f in c["findings"]],
                      sum(c["suppressed_findings"] for c in cs),
                      [l for l in manifest["legacy_files"] if l.split("/")[0] in progs], got, stats, skipped)
    for code in CODES:
        if not manifest["by_code"].get(code):
            ok = False
            sys.stderr.write("verify: the corpus holds no %s finding\n" % code)
        if not any(c["by_code"].get(code) for c in manifest["configured"]) and manifest["programs"] >= 50:
            ok = False
            sys.stderr.write("verify: the configured programs hold no %s finding\n" % code)
    if manifest["programs"] >= 50:
        for what in REQUIRED:
            if not manifest["constructs"].get(what):
                ok = False
                sys.stderr.write("verify: the corpus holds no construct %r\n" % what)
        if not manifest["suppressed_findings"]:
            ok = False
            sys.stderr.write("verify: no finding is suppressed\n")
    if ok:
        sys.stderr.write("verify: OK (%d findings, %d suppressed, %d programs, %d modules, %d legacy files, "
                         "%d configured programs in %d configurations)\n"
                         % (manifest["expected_findings"], manifest["suppressed_findings"], manifest["programs"],
                            manifest["modules"], len(manifest["legacy_files"]), len(manifest["configured"]),
                            len(groups)))
    return ok


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("outdir")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--programs", type=int, default=200)
    ap.add_argument("--verify", action="store_true", help="cross-check with scan.py")
    args = ap.parse_args(argv)
    m = write_programs(args.outdir, args.seed, args.programs)
    summary = {k: m[k] for k in ("seed", "programs", "modules", "expected_findings", "suppressed_findings",
                                 "by_code", "suppressed_by_code")}
    summary["legacy_files"] = len(m["legacy_files"])
    summary["configured_programs"] = len(m["configured"])
    sys.stdout.write(json.dumps(summary) + "\n")
    if args.verify and not verify(args.outdir, m):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
