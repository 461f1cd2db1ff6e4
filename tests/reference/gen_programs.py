#!/usr/bin/env python3
"""Deterministic generator of small multi-module programs for TS003 / TS004.

Usage:
    python3 tests/reference/gen_programs.py OUTDIR [--seed N] [--programs N] [--verify]
                                           [--with-readers] [--scan-output FILE]

Writes --programs folders OUTDIR/prog_NNNN/, each a project of its own (an
empty toolshape.toml) holding one package of 2 to 5 modules: `common.py`
with result builders in every flow form of docs/rules.md (a display holding
`**kw`, `.update(kw)`, `.update(**kw)`, `|= kw`, an items loop, `{**r, **kw}`),
chains, decoys that are not builders and often a class with builder methods;
sometimes `helpers.py` with builders chained across modules and an
`__init__.py` with re-exports; and tool modules that call the builders through
every import form (relative, absolute with `as`, `import M as A`, `from P import
M`, re-exports, `import P`), through unresolvable names (a star import, a
name bound twice, a shadowing local, a builder passed as a value, a dotted
`import P.M`, `self._ok` in a subclass) and that write keys into results
after they are built (every TS004 form, with non-result names, names rebound
to non-results, writes in nested scopes and non-string constant keys as
traps); often also `tools_local.py`, whose functions import the builders
inside their own body in those forms and call them there or in a nested def
(docs/rules.md "**Imports inside a function**": resolved as module-level
imports are), next to decoys (the import bound twice, in a class body, in a
nested def, dotted, rebound): see "imports inside a function" below; it is
written last, from a random stream of its own.  Dict-parameter builders
(`**P`, `**(P or {})`, `.update(P)` and `|= P` possibly under `if P:`,
`.update(**P)`, the `P.items()` loop, a merge;
functions, methods, classmethods and staticmethods; positional, typed,
keyword-only, positional-only parameters, two of them) are called with the
parameter bound by keyword and by position (a display with constant, allowed,
non-string, computed keys and `**m`; `{}`; `None`; a name; an expression;
parenthesised), next to near-misses: the parameter rebound, used in a nested
scope only, `**(P or other)`, `.update(P or {})`, `*P`, `**(K or {})` of a
`**K`, an alias; a keyword-only parameter passed by position, a `*args`
before the position, unresolved callees given dicts.  Calls of a builder
that is one by a dict parameter only give nothing for their extra
keywords and `**m` (only a builder whose own `**K` flows reports those), and a
`def f(msg, **kw): return dp(msg, **kw)` onto such a builder is no chain
("Case 4 (chains) applies to `**K` only").  Each finding keeps, as `form`,
what wrote it.  Suppression comments of several forms stand on finding lines, on
dict / call lines and on later lines of a multi-line span (which must not
silence it).

The generator knows what it wrote: OUTDIR/manifest.json holds every finding
it expects (TS001-TS004, path relative to OUTDIR with "/", all fields of
scan.py's output: code, key, expression, origin, builder {name, path, line,
column}, dict_line, dict_column, line, column, end_line, end_column) and the
counts per code, origin and form; the positions are where the generator put
the text, not what a parser says.  Every file is checked with ast.parse and
every expected span is checked against the text written.  --verify runs
scan.py (next to this file) over OUTDIR and compares it with the manifest
(its TS001-TS004 findings and suppressions: the contract rules TS005-TS009
are gen_contract.py's); --scan-output FILE keeps scan.py's output, every
code's findings, for a caller that compares them with another tool's.

--with-readers (off by default: every file written without it is written
with it byte for byte, the option only adds files) adds, after each program is written
and from a random stream of its own, producers, facades and consumers that
read the results (docs/rules.md "Reads of moved keys"; see the "readers"
section below; and `tests/test_local_imports.py`, reading results through
imports inside the test function, see "reads through imports inside a
function" below).  Every finding of the manifest then has "reads" (the reads
of its origin, as scan.py --reads reports them), the manifest counts them
(expected_reads: distinct reads; read_links: finding-read pairs;
reads_by_form, reads_by_receiver), and --verify runs scan.py --reads and
compares the reads too (each with its "possible" flag: the front ends also
read results the SDK hands on, see "possible reads" below; dispatchers
selecting their returns by a constant keyword are called with and without
one, see "dispatchers" below; producers used as values are escapes, see
"escapes" below, tools too when called through a wrapper, given another
name to be called by (`fn = tool`, `return tool`, `yield tool`,
`{"run": tool}`...) or handed to a call that keeps what it gives (`v =
executor.submit(tool, "q")`, `v = await asyncio.to_thread(tool, "q")`,
`v = len(tool)`; `v = callable(tool)` where the module rebinds `callable`
or holds a star import, tests/test_tool_builtins.py), see "tools given
other names" below, next to the uses that keep a tool exempt (a call
statement, awaited too, a keyword, `v = callable(tool)`...); so are the decorators of producers, docs/rules.md
"**Decorators.**", but the tool decorators and the exempt names and
attributes as written (`@staticmethod`, `@classmethod`, `@abstractmethod`,
`@override`, `@abc.abstractmethod`, `@typing.override`,
`@typing_extensions.override`), see "decorators" below: fixtures,
`@property`, caches, project decorators, stacks of them on functions and
methods, next to decoys; calls and uses as values named like producers
that resolve to nothing, docs/rules.md "**Calls toolshape cannot
resolve.**" and "**Uses as a value toolshape cannot resolve**", see "calls
toolshape cannot resolve" and "uses as a value toolshape cannot resolve"
below (every call and use so named in the corpus judged by the generator's
own walk of the text, UnresolvedJudge): a read of form escape, a use's
(a tool's or not) only when wrapped or renamed; a receiver call whose result is handed on, docs/rules.md
"**Results handed on.**", has a read of form escape: a call written where
it is no receiver of a read, a name bound to it that is bound twice
otherwise than in sequence, annotated, chained, deleted, read in a nested
scope, at module level or passed on, a base program's `replies.append(C)`
(its `reply = C`, bound once or in sequence and never loaded, is not), and
the handed-on statements of Consumer.handed_block: `agent.last_result = C`,
`check_result(C)`, `[C, 1]`, `C if query else None`, `lambda: C`, `if C:`,
`for k in C:`, `emit("x", result=C)` and `R = C; print(R)` next to R's
reads; names bound in sequence, docs/rules.md "**Receivers**", see
Consumer.sequence_block: a test's `result` bound two to four times by plain
`R = V` statements of its own block, to receiver calls (`await C` in every
spelling in `async def test_async`), to values that are none, to values
loading R (`make_other(R["k"])`, `f(R["k"])`, `make_other(R)`), each
binding read on its own, some reads in an `if`, a loop, a `with` or a
comprehension's first iterable, some passing R on, the results handed on
binding by binding; next to names whose sequence is broken (a binding in an
`if`, `while`, `for`, `with`, `try` or `match`, annotated, chained, a tuple,
a walrus, `R |= ...` / `R += ...`, `del R`, a nested `nonlocal R`,
`global R`, a parameter R) or spoiled (a load in a nested def, lambda or
comprehension, in an annotation (a nested def's, a variable's), or before
the first binding), some reads in a nested def's default (it sees the
binding before); annotations, docs/rules.md "**Annotations.**" (nothing in
one is read), see Consumer.where_block: a name bound once loaded in a
nested def's parameter (positional-only, positional, keyword-only, `*args`,
`**kwargs`) or return annotations, an `async def`'s too, or in a variable's
annotation in the function (`y: A = v`, `y: A`, in an `if`), in every read
form or passed on (a scope nested in the function: no read, the call handed
on), next to its loads in what stands in the function (a def's defaults,
beside an annotation of the same parameter too, and decorators, a lambda's
defaults, a class's bases and keywords, an annotated assignment's value:
reads, the call handed on only when one passes R on); a module's name
loaded in a module's variable annotation (no read); receiver calls written
in annotations, Consumer.annotation_call_block (a nested def's parameter or
return, a variable's, in a function, a module, a class body, `await C` in
an `async def`), held by every read form, passed on, bare or in a
comprehension: handed on, no read (`ST.m(...)` on an instance name: no
receiver there); uses as values of producers in annotations
(EscapeWriter.put_annotation: escapes, `N.m` none: it resolves to nothing
there, but is neither wrapped nor renamed); and, in the front ends,
a marked name or attribute, `X["toolResult"]`, an annotated parameter, a
hook event or an alias read in an annotation (a nested def's, a
variable's: no possible read) or in a default or an annotated assignment's
value (one)); results handed to checking functions, docs/rules.md
"**Results handed to a checking function.**", see "results handed to a
checking function" below (`tests/test_checks.py`: same-module `def chk_N(r)`
whose parameter is only read, named in messages or returned; their reads of
it are the receiver's, once per call; the calls passing a result through
judged as H; next to disqualified functions and calls not followed); and checks that every read form (the reads of the content
list, `block` and `content`, and `escape` among them), receiver kind (the
possible receivers and the escape targets among them), escape use and decoy
is in the corpus.

Output is a function of the arguments only.
"""

import argparse
import ast
import json
import os
import random
import subprocess
import sys
from collections import Counter

ALLOWED = ("status", "content", "toolUseId")
ALL = "ALL"

# (comment text, codes it silences)
COMMENTS = [
    ("# toolshape: ignore", ALL),
    ("# toolshape: ignore[TS003]", {"TS003"}),
    ("# toolshape: ignore[TS004]", {"TS004"}),
    ("# toolshape: ignore[TS003, TS004]", {"TS003", "TS004"}),
    ("# noqa: TS003", {"TS003"}),
    ("# noqa: TS004", {"TS004"}),
    ("# noqa", ALL),
    ("# NOQA", ALL),
    ("# noqa: TS001", {"TS001"}),
    ("# toolshape: ignore[TS002]", {"TS002"}),
    ("# toolshape: note", set()),
    ("# per-call note", set()),
]

MESSAGES = ['"done"', '"ok"', '"Größe geprüft ✓"', '"fertig — 完了"', "query", "f\"got {query}\""]
EXTRA_KEYS = ["frames", "devices", "elapsed", "trace", "errors", "hz", "retries", "size"]


class W:
    """A module being written: text plus the current (1-based) line and
    (1-based, in characters) column."""

    def __init__(self):
        self.parts = []
        self.line = 1
        self.col = 1
        self.comments = {}  # line -> [(text, silences)]

    def put(self, text):
        """Append ``text`` (no newline); return (start, end) positions."""
        assert "\n" not in text
        start = (self.line, self.col)
        self.parts.append(text)
        self.col += len(text)
        return start, (self.line, self.col)

    def end(self, comment=None):
        if comment is not None:
            self.parts.append("  " + comment[0])
            self.comments.setdefault(self.line, []).append(comment)
        self.parts.append("\n")
        self.line += 1
        self.col = 1

    def lineof(self, text, comment=None):
        span = self.put(text)
        self.end(comment)
        return span

    def text(self):
        return "".join(self.parts)


class Builder:
    def __init__(self, name, rel, line, col, params, form, method=None):
        self.name = name
        self.rel = rel
        self.line = line
        self.col = col
        self.params = set(params)
        self.form = form
        self.method = method  # "self" / "cls" / "static" for methods
        # the parameters a positional argument binds, in order (a method's
        # receiver left out), and the dict parameters {P: keyword-only?}
        self.positions = [x for x in params if x not in ("self", "cls")]
        self.dparams = {}
        # "K": its **K flows into the result (or a chain of such); "dp": a
        # builder only through dict parameters; "both"
        self.family = "K"
        # the Producer this builder is (a chain whose returned call carries keys), else None
        self.producer = None

    def record(self):
        return {"name": self.name, "path": self.rel, "line": self.line, "column": self.col}


class Producer:
    """A function whose returns carry keyed origins (docs/rules.md "Reads of
    moved keys"): ``tags`` are the origins its returns carry (a display, a
    write statement, a builder call: see ``tag_of``), ``via`` the producers
    its returned calls resolve to (case 4).  Which keys it has is decided
    once suppressions are known."""

    def __init__(self, name, rel, tags=(), via=(), decorated=False):
        self.name = name
        self.rel = rel
        self.tags = list(tags)
        self.via = [v for v in via if v is not None]
        self.decorated = decorated  # @tool / @strands.tool / @strands.tools.tool
        # the decorators of its def (docs/rules.md "**Decorators.**"), as written
        # by put_decorators: (rel, span of D, D's text, exempt?, label)
        self.decorators = []
        # decorated.py / the fixtures: where the def stands and what its body returns
        self.site = None
        self.body_kind = None
        # a dispatcher's Dispatch (its returns and the parameters that narrow it), else None
        self.dispatch = None


def put_decorators(p, rel, w, ind, decs):
    """Write one decorator line `IND@D` for each (D text, exempt?, label) of
    ``decs``; return what Producer.decorators holds of them (the span of D,
    the expression after `@`)."""
    out = []
    for text, exempt, label in decs:
        w.put(ind + "@")
        span = w.put(text)
        w.end()
        out.append((rel, span, text, exempt, label))
    return out


def listed_decorator(dec, is_tool):
    """A DECORATORS / DISPATCH_DECORATORS entry as put_decorators takes it:
    exempt when it is a tool decorator; the label is its text."""
    return [] if not dec else [(dec[1:], is_tool, dec[1:])]


class Prog:
    """One program being generated."""

    def __init__(self, rng, index, outrel):
        self.rng = rng
        self.index = index
        self.outrel = outrel
        self.findings = []   # (rel, record)
        self.modules = {}    # rel -> W
        self.forms = Counter()
        self.uid = 0
        # --with-readers: every Producer (docs/rules.md "Reads of moved keys"), the
        # base program's ones to call as (module rel, Producer, argument text), the
        # reads written as (rel, Recv, form, key, span)
        self.producers = []
        self.base_producers = []
        self.reads = []
        # the possible reads written, as (rel, receiver kind, form, key, span)
        self.possible_reads = []
        # the uses as a value of producers written (docs/rules.md "**Escapes.**"),
        # as (rel, Producer, kind, span, text, tool too): a read of form escape of each
        # origin the producer reaches, unless it is a tool and the use is not one
        # that escapes for a tool too (called through a wrapper, or giving the
        # tool another name to be called by: "tool too" true)
        self.escapes = []
        # --with-readers: the builder calls of the base program, as (scope, lead,
        # rel, Recv, span of H): handed on unless returned, dropped or bound
        # once to `reply` in their function (docs/rules.md "**Results handed
        # on.**"; see base_handed_on); call_scope names the function written
        self.base_calls = []
        self.call_scope = None
        # the calls written to be judged so (docs/rules.md "**Calls toolshape
        # cannot resolve.**"), as (rel, position, construct, "unresolved" /
        # "resolved" / "exempt" / None: named otherwise); the generator's
        # judgement of every call named like a producer, (rel, line, column) ->
        # that word; the positions of the unresolved calls with a read
        self.unresolved_intents = []
        self.unresolved_judged = {}
        self.unresolved_read_at = set()
        # uses as a value toolshape cannot resolve: what each use written
        # means to be, as (rel, position, construct, judgement wanted, read
        # wanted), against the generator's own judgement {(rel, line, col):
        # (judgement, read)}
        self.unresolved_use_intents = []
        self.unresolved_use_judged = {}

    def fresh(self, stem):
        self.uid += 1
        return "%s_%d" % (stem, self.uid)

    def producer(self, name, rel, tags=(), via=(), decorated=False):
        prod = Producer(name, rel, tags, via, decorated)
        self.producers.append(prod)
        return prod

    def maybe_comment(self, p=0.18):
        if self.rng.random() < p:
            return self.rng.choice(COMMENTS)
        return None

    def expect(self, rel, code, origin, key, expression, builder, dict_pos, span, form):
        (line, col), (eline, ecol) = span
        self.findings.append((rel, {
            "path": rel, "code": code, "key": key, "expression": expression, "origin": origin,
            "builder": builder.record() if builder is not None else None,
            "dict_line": dict_pos[0], "dict_column": dict_pos[1],
            "line": line, "column": col, "end_line": eline, "end_column": ecol, "form": form,
        }))

    # -- displays ------------------------------------------------------------

    def display(self, rel, w, entries, form="display"):
        """Write a single-line dict display; entries are ("key", k, value_text,
        paren_key) or ("spread", expr_text).  Records its literal findings
        when it is shaped; returns (position of "{", [(entry, span)])."""
        keys = {e[1] for e in entries if e[0] == "key"}
        shaped = "status" in keys and "content" in keys
        brace, _ = w.put("{")
        spans = []
        for i, e in enumerate(entries):
            if i:
                w.put(", ")
            if e[0] == "key":
                ktext = json.dumps(e[1], ensure_ascii=False)
                if e[3]:
                    ktext = "(" + ktext + ")"
                span = w.put("%s: %s" % (ktext, e[2]))
                if shaped and e[1] not in ALLOWED:
                    self.expect(rel, "TS001", "literal", e[1], None, None, brace, span, "literal-key")
            elif e[0] == "dynkey":
                span = w.put("%s: %s" % (e[1], e[2]))
            else:
                span = w.put("**" + e[1])
                if shaped:
                    self.expect(rel, "TS002", "literal", None, None, None, brace, span, "literal-spread")
            spans.append((e, span))
        w.put("}")
        return brace, spans

    def shaped_entries(self, text_value, extra=()):
        status = self.rng.choice(['"success"', '"error"'])
        content = self.rng.choice(["[{\"text\": %s}]" % text_value, "[]", "content"])
        return [("key", "status", status, False), ("key", "content", content, False)] + list(extra)


# --------------------------------------------------------------------------
# common.py: builders, chains, decoys, a class with builder methods

SIGNATURES = [
    # (parameter list text without **K, named params, first param)
    ("msg", ["msg"], "msg"),
    ("text, level=\"info\"", ["text", "level"], "text"),
    ("msg, *args", ["msg"], "msg"),
    ("msg, *, code=0", ["msg", "code"], "msg"),
]
KWARG_NAMES = ["kw", "kwargs", "extra", "meta"]
FLOW_FORMS = ["display", "update", "update_star", "ior", "items", "merge", "display_name"]


def write_builder_body(p, rel, w, ind, first, K, form):
    """The body of a builder of flow ``form``; records the builder's own findings."""
    r = p.rng.choice(["r", "res", "out", "result"])
    uses_content = p.rng.random() < 0.3
    if uses_content:
        w.lineof(ind + "content = [{\"text\": %s}]" % first)
    text_value = first

    def entries(extra=()):
        e = p.shaped_entries(text_value, extra)
        if not uses_content and e[1][2] == "content":
            e[1] = ("key", "content", "[]", False)
        return e

    if form == "display":
        w.put(ind + "return ")
        p.display(rel, w, entries([("spread", K)]))
        w.end(p.maybe_comment(0.1))
        return
    if form == "display_name":
        w.put(ind + r + " = ")
        p.display(rel, w, entries([("spread", K)]))
        w.end(p.maybe_comment(0.1))
        w.lineof(ind + "return " + r)
        return
    w.put(ind + r + " = ")
    brace, _ = p.display(rel, w, entries())
    w.end()
    if form == "update":
        w.put(ind + r + ".update(")
        span = w.put(K)
        w.put(")")
        c = p.maybe_comment(0.1)
        p.expect(rel, "TS004", "later-write", None, K, None, brace, span, "builder-update")
        w.end(c)
    elif form == "update_star":
        w.put(ind + r + ".update(")
        span = w.put("**" + K)
        w.put(")")
        p.expect(rel, "TS004", "later-write", None, K, None, brace, span, "builder-update-star")
        w.end(p.maybe_comment(0.1))
    elif form == "ior":
        w.put(ind + r + " |= ")
        span = w.put(K)
        p.expect(rel, "TS004", "later-write", None, K, None, brace, span, "builder-ior")
        w.end(p.maybe_comment(0.1))
    elif form == "items":
        k, v = p.rng.choice([("k", "v"), ("key", "value"), ("name", "val")])
        w.lineof(ind + "for %s, %s in %s.items():" % (k, v, K))
        if p.rng.random() < 0.3:
            w.lineof(ind + "    if %s is not None:" % v)
            inner = ind + "        "
        else:
            inner = ind + "    "
        w.put(inner)
        span = w.put("%s[%s] = %s" % (r, k, v))
        p.expect(rel, "TS004", "later-write", None, k, None, brace, span, "builder-items")
        w.end(p.maybe_comment(0.1))
    elif form == "merge":
        w.lineof(ind + "return {**%s, **%s}" % (r, K))
        return
    w.lineof(ind + "return " + r)


# --------------------------------------------------------------------------
# dict-parameter builders (docs/rules.md: "A builder may also take its
# extras as a dict parameter")

DP_NAMES = ["extra", "fields", "details", "data", "more"]
# (kind, parameter list text with {P} (and {Q}), positional names, keyword-only?)
DP_SIGNATURES = [
    ("default", "msg, {P}=None", ["msg", "{P}"], False),
    ("required", "msg, {P}", ["msg", "{P}"], False),
    ("typed", "msg, {P}: dict | None = None", ["msg", "{P}"], False),
    ("typed_required", "msg, {P}: dict", ["msg", "{P}"], False),
    ("level", "msg, level=\"info\", {P}=None", ["msg", "level", "{P}"], False),
    ("posonly", "msg, /, {P}=None", ["msg", "{P}"], False),
    ("kwonly", "msg, *, {P}=None", ["msg"], True),
    ("varargs_kwonly", "msg, *args, {P}=None", ["msg"], True),
    ("opts", "msg, {P}=None, **opts", ["msg", "{P}"], False),
    ("two", "msg, {P}=None, {Q}=None", ["msg", "{P}", "{Q}"], False),
    ("both", "msg, {P}=None, **kw", ["msg", "{P}"], False),
]
METHOD_DP_SIGNATURES = ["default", "typed", "level", "kwonly", "required"]
DP_FORMS = ["display", "display_or", "display_name", "display_name_or", "update", "update_if",
            "update_star", "update_star_or", "ior", "ior_if", "items", "items_if", "merge", "merge_or"]
DP_NONSTR_KEYS = ["3", "None", "2.5", 'b"raw"', "True", "..."]
DP_COMPUTED_KEYS = ["name", "key_of(query)", 'f"k_{query}"', "-1", "query[0]"]


def dp_entries(p, first, extra=()):
    e = p.shaped_entries(first, extra)
    if e[1][2] == "content":
        e[1] = ("key", "content", "[{\"text\": %s}]" % first, False)
    return e


def write_dp_builder_body(p, rel, w, ind, first, Ps, form, K=None, opts=None):
    """The body of a dict-parameter builder; records the body's own findings
    (TS002 of its display, TS004 of its writes)."""
    rng = p.rng
    r = rng.choice(["r", "res", "out", "result"])
    P = Ps[0]
    if opts is not None:
        w.lineof(ind + "_ = len(%s)" % opts)  # a **K that does not flow into the result
    if form in ("display", "display_or", "display_name", "display_name_or") or len(Ps) > 1 or K:
        spreads = []
        for Pn in Ps:
            orform = form.endswith("_or") if Pn == P else rng.random() < 0.5
            spreads.append(("spread", "(%s or {})" % Pn if orform else Pn))
        if K:
            spreads.insert(rng.randint(0, len(spreads)), ("spread", K))
        if form.startswith("display_name"):
            w.put(ind + r + " = ")
            p.display(rel, w, dp_entries(p, first, spreads))
            w.end(p.maybe_comment(0.1))
            w.lineof(ind + "return " + r)
        else:
            w.put(ind + "return ")
            p.display(rel, w, dp_entries(p, first, spreads))
            w.end(p.maybe_comment(0.1))
        return
    w.put(ind + r + " = ")
    brace, _ = p.display(rel, w, dp_entries(p, first))
    w.end()
    inner = ind
    if form.endswith("_if"):
        w.lineof(ind + "if %s:" % P)
        inner = ind + "    "

    def write(f, text, span_text, expr, key=None):
        w.put(inner)
        head, _ = w.put(text[:text.index(span_text)])
        span = w.put(span_text)
        w.put(text[text.index(span_text) + len(span_text):])
        p.expect(rel, "TS004", "later-write", key, expr, None, brace, span, f)
        w.end(p.maybe_comment(0.1))

    if form in ("update", "update_if"):
        write("dp-builder-update", "%s.update(%s)" % (r, P), P, P)
    elif form == "update_star":
        write("dp-builder-update-star", "%s.update(**%s)" % (r, P), "**" + P, P)
    elif form == "update_star_or":
        # `**P or {}`: the parentheses of `**(P or {})` are optional in a call
        write("dp-builder-update-star-or", "%s.update(**%s or {})" % (r, P), "**%s or {}" % P, "%s or {}" % P)
    elif form in ("ior", "ior_if"):
        write("dp-builder-ior", "%s |= %s" % (r, P), P, P)
    elif form in ("items", "items_if"):
        k, v = rng.choice([("k", "v"), ("key", "value"), ("name", "val")])
        w.lineof(inner + "for %s, %s in %s.items():" % (k, v, P))
        inner = inner + "    "
        if rng.random() < 0.3:
            w.lineof(inner + "if %s is not None:" % v)
            inner = inner + "    "
        write("dp-builder-items", "%s[%s] = %s" % (r, k, v), "%s[%s] = %s" % (r, k, v), k)
    elif form in ("merge", "merge_or"):
        w.lineof(ind + "return {**%s, **%s}" % (r, "(%s or {})" % P if form == "merge_or" else P))
        return
    w.lineof(ind + "return " + r)


def dp_signature(p, kind=None, receiver=None):
    """(kind, parameter text, named params, positions, {P: keyword-only?}, K, opts)."""
    rng = p.rng
    if kind is None:
        kind = rng.choice([s[0] for s in DP_SIGNATURES])
    _, text, positions, kwonly = [s for s in DP_SIGNATURES if s[0] == kind][0]
    P, Q = rng.sample(DP_NAMES, 2)
    text = text.format(P=P, Q=Q)
    positions = [x.format(P=P, Q=Q) for x in positions]
    named = ["msg", P] + (["level"] if kind == "level" else []) + ([Q] if kind == "two" else [])
    dparams = {P: kwonly}
    if kind == "two":
        dparams[Q] = False
    if receiver:
        text = receiver + ", " + text
        named = [receiver] + named
    K = "kw" if kind == "both" else None
    opts = "opts" if kind == "opts" else None
    return kind, text, named, positions, dparams, K, opts


def write_dp_builders(p, rel, w):
    """Module-level dict-parameter builders (one or two)."""
    rng = p.rng
    out = []
    for name in rng.sample(["answer", "finish", "wrap_result", "with_fields", "_answer", "compose"],
                           rng.randint(1, 2)):
        kind, text, named, positions, dparams, K, opts = dp_signature(p)
        if kind in ("two", "both"):
            form = rng.choice(["display", "display_or", "display_name", "display_name_or"])
        else:
            form = rng.choice(DP_FORMS)
        is_async = rng.random() < 0.1
        start, _ = w.put("async def " if is_async else "def ")
        w.put("%s(%s):" % (name, text))
        w.end()
        write_dp_builder_body(p, rel, w, "    ", "msg", list(dparams), form, K, opts)
        b = Builder(name, rel, start[0], start[1], named, form)
        b.positions = positions
        b.dparams = dparams
        b.family = "both" if K else "dp"
        b.is_async = is_async
        out.append(b)
        p.forms["builder-dparam-" + form] += 1
        p.forms["builder-dparam-sig-" + kind] += 1
        w.end()
        w.end()
    return out


def write_dp_decoys(p, rel, w):
    """Functions that look like dict-parameter builders and are not."""
    rng = p.rng
    names = []
    kinds = rng.sample(["rebound", "nested", "or_other", "update_or", "star_args", "kwarg_or", "alias"],
                       rng.randint(1, 3))
    for kind in kinds:
        name = "answer_" + kind
        P = "extra"
        sub = None
        if kind == "star_args":
            w.lineof("def %s(msg, *%s):" % (name, P))
        elif kind == "kwarg_or":
            # `**(K or {})` is no spread of a **K parameter: only a dict parameter's
            w.lineof("def %s(msg, **%s):" % (name, P))
        else:
            w.lineof("def %s(msg, %s=None):" % (name, P))
        ind = "    "
        spread = P
        if kind == "rebound":
            sub = rng.choice(["assign", "aug", "walrus", "for"])
            if sub == "assign":
                w.lineof(ind + "%s = dict(%s or {})" % (P, P))
            elif sub == "aug":
                w.lineof(ind + "%s |= {}" % P)
            elif sub == "walrus":
                w.lineof(ind + "if (%s := %s or {}):" % (P, P))
                w.lineof(ind + "    pass")
            else:
                w.lineof(ind + "for %s in (%s or {},):" % (P, P))
                w.lineof(ind + "    pass")
        elif kind == "or_other":
            sub = rng.choice(["(extra or DEFAULTS)", "({} or extra)", "(extra or {\"x\": 1})",
                              "(extra and {})", "(extra or {} or {})"])
            spread = sub
        elif kind == "kwarg_or":
            spread = "(extra or {})"
        elif kind == "alias":
            w.lineof(ind + "fields = %s" % P)
            spread = "fields"
        if kind == "nested":
            sub = rng.choice(["def", "lambda"])
            if sub == "def":
                w.lineof(ind + "def inner():")
                w.put(ind + "    return ")
                p.display(rel, w, dp_entries(p, "msg", [("spread", "(%s or {})" % P)]))
                w.end()
                w.lineof(ind + "return inner()")
            else:
                w.put(ind + "build = lambda: ")
                p.display(rel, w, dp_entries(p, "msg", [("spread", P)]))
                w.end()
                w.lineof(ind + "return build()")
        elif kind == "update_or":
            sub = rng.choice(["update", "ior", "items"])
            w.put(ind + "r = ")
            brace, _ = p.display(rel, w, dp_entries(p, "msg"))
            w.end()
            w.put(ind)
            if sub == "update":
                w.put("r.update(")
                span = w.put("%s or {}" % P)
                w.put(")")
                p.expect(rel, "TS004", "later-write", None, "%s or {}" % P, None, brace, span, "dp-decoy-write")
            elif sub == "ior":
                w.put("r |= ")
                span = w.put("%s or {}" % P)
                p.expect(rel, "TS004", "later-write", None, "%s or {}" % P, None, brace, span, "dp-decoy-write")
            else:
                w.lineof("for k, v in (%s or {}).items():" % P)
                w.put(ind + "    ")
                span = w.put("r[k] = v")
                p.expect(rel, "TS004", "later-write", None, "k", None, brace, span, "dp-decoy-write")
            w.end()
            w.lineof(ind + "return r")
        else:
            w.put(ind + "return ")
            p.display(rel, w, dp_entries(p, "msg", [("spread", spread)]))
            w.end()
        names.append(name)
        p.forms["dparam-decoy-" + kind + ("-" + sub if sub and kind != "or_other" else "")] += 1
        w.end()
        w.end()
    return names


def plan_dp_value(p, names, keys=True):
    """What to pass for a dict parameter: ("display", entries, paren) or
    ("atom", text, dynamic?, paren)."""
    rng = p.rng
    r = rng.random()
    paren = rng.random() < 0.1
    if r < 0.5 or keys == "display":
        entries = []
        pool = rng.sample(["key", "key", "paren", "allowed", "num", "dyn", "spread"], rng.randint(1, 4))
        keys_left = list(EXTRA_KEYS)
        rng.shuffle(keys_left)
        for what in pool:
            if what in ("key", "paren"):
                entries.append(("key", keys_left.pop(), rng.choice(["1", "(2)", "query", "[1, 2]", "None"]),
                                what == "paren"))
            elif what == "allowed":
                entries.append(("key", rng.choice(ALLOWED), '"x"', False))
            elif what == "num":
                entries.append(("dynkey", rng.choice(DP_NONSTR_KEYS), "0"))
            elif what == "dyn":
                entries.append(("dynkey", rng.choice(DP_COMPUTED_KEYS), "0"))
            else:
                entries.append(("spread", rng.choice(list(names) + ["defaults()"])))
        return ("display", entries, paren)
    if r < 0.6:
        return ("atom", "None", False, paren)
    if r < 0.66:
        return ("display", [], paren)
    if r < 0.82:
        return ("atom", rng.choice(names), True, paren)
    n = rng.choice(names)
    return ("atom", rng.choice(["dict(frames=1)", "defaults()", "dict(%s)" % n, "%s or {}" % n,
                                "%s.copy()" % n]), True, paren)


def write_dp_value(p, rel, w, plan):
    """Write a planned dict-parameter argument; [(kind, key, expression, span)]
    of the findings it gives when it is bound to a dict parameter."""
    hits = []
    if plan[0] == "display":
        if plan[2]:
            w.put("(")
        _, spans = p.display(rel, w, plan[1])
        if plan[2]:
            w.put(")")
        for e, span in spans:
            if e[0] == "key":
                if e[1] not in ALLOWED:
                    hits.append(("key", e[1], None, span))
            elif e[0] == "dynkey":
                if e[1] not in DP_NONSTR_KEYS:
                    hits.append(("computed", None, e[1], span))
            else:
                hits.append(("mapping", None, e[1], span))
    else:
        _, text, dynamic, paren = plan
        if paren:
            w.put("(")
        span = w.put(text)
        if paren:
            w.put(")")
        if dynamic:
            hits.append(("paren" if paren else "expr", None, text, span))
    return hits


def write_common(p, pkg, has_class):
    rel = p.outrel + "/" + pkg + "/common.py"
    w = W()
    p.modules[rel] = w
    w.lineof('"""Result helpers of %s."""' % pkg)
    w.lineof("import functools")
    w.end()
    w.end()
    builders = []
    decoys = []
    names = p.rng.sample(["ok", "success", "make_result", "respond", "done", "_ok_result"], 3)
    nb = p.rng.randint(1, 3)
    for i in range(nb):
        name = names[i]
        sig, params, first = p.rng.choice(SIGNATURES)
        K = p.rng.choice(KWARG_NAMES)
        form = p.rng.choice(FLOW_FORMS)
        if p.rng.random() < 0.2:
            w.lineof("@functools.lru_cache(maxsize=None)")
        is_async = p.rng.random() < 0.1
        start, _ = w.put("async def " if is_async else "def ")
        w.put("%s(%s, **%s):" % (name, sig, K))
        w.end()
        write_builder_body(p, rel, w, "    ", first, K, form)
        b = Builder(name, rel, start[0], start[1], params, form)
        b.is_async = is_async
        builders.append(b)
        p.forms["builder-" + form] += 1
        w.end()
        w.end()
    # a chain in the same module
    if p.rng.random() < 0.6:
        base = p.rng.choice([b for b in builders if not b.is_async] or [None])
        if base is not None:
            name = p.rng.choice(["err", "fail", "_err"])
            start, _ = w.put("def ")
            w.put("%s(msg, **kw):" % name)
            w.end()
            w.put("    return ")
            call_pos, _ = w.put(base.name)
            w.put("(msg")
            extra_kw = p.rng.random() < 0.35
            if extra_kw:
                w.put(", ")
                key = "retry" if "retry" not in base.params else "again"
                span = w.put("%s=True" % key)
                p.expect(rel, "TS003", "builder-call", key, None, base, call_pos, span, "chain-extra")
            w.put(", **kw)")
            w.end(p.maybe_comment(0.1))
            b = Builder(name, rel, start[0], start[1], ["msg"], "chain")
            b.is_async = False
            b.producer = p.producer(name, rel, [("c", rel, call_pos)], [base.producer])
            builders.append(b)
            p.forms["builder-chain"] += 1
            w.end()
            w.end()
    # decoys: functions with **kw that are not builders
    base = builders[0]
    for kind in p.rng.sample(["rebinds", "logs", "nested", "relay"], p.rng.randint(1, 2)):
        name = {"rebinds": "cleaned", "logs": "noted", "nested": "factory", "relay": "relay"}[kind]
        if kind == "rebinds":
            w.lineof("def %s(msg, **kw):" % name)
            w.lineof("    kw = {k: v for k, v in kw.items() if v is not None}")
            w.put("    return ")
            p.display(rel, w, p.shaped_entries("msg", [("spread", "kw")]))
            w.end()
        elif kind == "logs":
            w.lineof("def %s(msg, **kw):" % name)
            w.lineof("    print(kw)")
            w.put("    return ")
            p.display(rel, w, p.shaped_entries("msg"))
            w.end()
        elif kind == "nested":
            w.lineof("def %s():" % name)
            w.lineof("    def inner(msg, **kw):")
            w.put("        return ")
            p.display(rel, w, p.shaped_entries("msg", [("spread", "kw")]))
            w.end()
            w.lineof("    return inner")
        else:
            w.lineof("def %s(msg, **kw):" % name)
            if base.is_async:
                w.lineof("    return %s" % base.name)
            else:
                w.lineof("    return %s(msg)" % base.name)
        decoys.append(name)
        p.forms["decoy-" + kind] += 1
        w.end()
        w.end()
    # a module-level caller in the same file
    sync = [b for b in builders if not b.is_async]
    if sync and p.rng.random() < 0.5:
        b = p.rng.choice(sync)
        w.lineof("def ping():")
        w.put("    return ")
        call_pos, _ = w.put(b.name)
        w.put('("pong", ')
        span = w.put("latency=1")
        p.expect(rel, "TS003", "builder-call", "latency", None, b, call_pos, span, "call-same-module")
        w.put(")")
        p.base_producers.append((rel, p.producer("ping", rel, [("c", rel, call_pos)], [b.producer]), "()"))
        w.end(p.maybe_comment())
        w.end()
        w.end()
    # dict-parameter builders, their decoys, a chain onto one, a caller here
    if p.rng.random() < 0.75:
        dps = write_dp_builders(p, rel, w)
        decoys.extend(write_dp_decoys(p, rel, w))
        only = [b for b in dps if b.family == "dp" and not b.is_async]
        if only and p.rng.random() < 0.3:
            # no chain: "Case 4 (chains) applies to **K only" -- the callee is a
            # builder through its dict parameter alone, so this is no builder
            base = p.rng.choice(only)
            w.lineof("def fail_with(msg, **kw):")
            w.put("    return ")
            call_pos, _ = w.put(base.name)
            w.put("(msg, ")
            w.put("**kw")
            w.put(")")
            # and a builder by a dict parameter only: its `**m` arguments give nothing
            w.end(p.maybe_comment(0.1))
            decoys.append("fail_with")
            p.forms["dparam-decoy-chain-onto-dparam"] += 1
            w.end()
            w.end()
        sync = [b for b in dps if not b.is_async and b.dparams]
        if sync and p.rng.random() < 0.5:
            b = p.rng.choice(sync)
            w.lineof("def ping_fields(query, extra):")
            p.call_scope = (rel, "ping_fields")
            lead, call_pos, awaited = write_call_stmt(p, rel, w, "    ", b.name, b, "call-same-module",
                                                      mapping_names=("extra",))
            if lead == "return " and not awaited:
                p.base_producers.append((rel, p.producer("ping_fields", rel, [("c", rel, call_pos)],
                                                         [b.producer]), '("q", {})'))
            w.lineof("    return None")
            w.end()
            w.end()
        builders.extend(dps)
    methods = []
    if has_class:
        w.lineof("class Base:")
        mname = p.rng.choice(["_ok", "_reply"])
        w.put("    ")
        start, _ = w.put("def ")
        K = p.rng.choice(KWARG_NAMES)
        w.put("%s(self, msg, **%s):" % (mname, K))
        w.end()
        form = p.rng.choice(FLOW_FORMS)
        write_builder_body(p, rel, w, "        ", "msg", K, form)
        mb = Builder(mname, rel, start[0], start[1], ["self", "msg"], form, "self")
        p.forms["builder-method-" + form] += 1
        methods.append(mb)
        w.end()
        cb = None
        if p.rng.random() < 0.6:
            w.lineof("    @classmethod")
            w.put("    ")
            start, _ = w.put("def ")
            w.put("_build(cls, msg, **kw):")
            w.end()
            write_builder_body(p, rel, w, "        ", "msg", "kw", "display")
            cb = Builder("_build", rel, start[0], start[1], ["cls", "msg"], "display", "cls")
            p.forms["builder-classmethod"] += 1
            methods.append(cb)
            w.end()
        if p.rng.random() < 0.5:
            # a method chain: self._err -> self._ok
            w.put("    ")
            start, _ = w.put("def ")
            w.put("_err(self, msg, **kw):")
            w.end()
            w.put("        return ")
            call_pos, _ = w.put("self." + mname)
            w.put("(msg, **kw)")
            w.end()
            eb = Builder("_err", rel, start[0], start[1], ["self", "msg"], "chain", "self")
            p.forms["builder-method-chain"] += 1
            methods.append(eb)
            w.end()
        if p.rng.random() < 0.6:
            # dict-parameter methods: positions after the receiver, but for a @staticmethod
            for kind in p.rng.sample(["self", "static", "cls"], p.rng.randint(1, 3)):
                mname_ = {"self": "_answer_with", "static": "_wrap", "cls": "_mk"}[kind]
                if kind != "self":
                    w.lineof("    @%s" % ("staticmethod" if kind == "static" else "classmethod"))
                w.put("    ")
                start, _ = w.put("def ")
                receiver = {"self": "self", "static": None, "cls": "cls"}[kind]
                sk, text, named, positions, dparams, _, _ = dp_signature(
                    p, p.rng.choice(METHOD_DP_SIGNATURES), receiver)
                w.put("%s(%s):" % (mname_, text))
                w.end()
                form = p.rng.choice(DP_FORMS)
                write_dp_builder_body(p, rel, w, "        ", "msg", list(dparams), form)
                db = Builder(mname_, rel, start[0], start[1], named, form, kind)
                db.positions = positions
                db.dparams = dparams
                db.family = "dp"
                db.is_async = False
                p.forms["builder-dparam-method-%s-%s" % (kind, form)] += 1
                p.forms["builder-dparam-method-%s" % kind] += 1
                methods.append(db)
                w.end()
        # callers through self / cls
        w.lineof("    def run(self, query, extra):")
        p.call_scope = (rel, "Base.run")
        # Base.run and Base.make are producers when they return a builder
        # call with keys (docs/rules.md, case 3): calls named like them are
        # judged (unresolved_reads); nothing else calls them
        prod = p.producer("run", rel)
        for mb_ in [m for m in methods if m.method in ("self", "static")]:
            note_returned(p, rel, prod, mb_, write_call_stmt(p, rel, w, "        ", "self." + mb_.name, mb_,
                                                             "call-self"))
        w.lineof("        return None")
        by_cls = [m for m in methods if m.method == "cls"]
        if by_cls:
            w.end()
            w.lineof("    @classmethod")
            w.lineof("    def make(cls, query, extra):")
            p.call_scope = (rel, "Base.make")
            prod = p.producer("make", rel)
            for mb_ in by_cls:
                note_returned(p, rel, prod, mb_, write_call_stmt(p, rel, w, "        ", "cls." + mb_.name, mb_,
                                                                 "call-cls"))
            w.lineof("        return None")
        w.end()
        w.end()
    for b in builders:
        if not hasattr(b, "is_async"):
            b.is_async = False
    return rel, builders, decoys, methods


def note_returned(p, rel, prod, builder, written):
    """A call statement written in producer ``prod``: `return CALL` (not
    awaited) in its own scope carries the call's keys (case 3, 4 through a chain)."""
    lead, call_pos, awaited = written
    if lead == "return " and not awaited:
        prod.tags.append(("c", rel, call_pos))
        if builder is not None and builder.producer is not None:
            prod.via.append(builder.producer)


# --------------------------------------------------------------------------
# calls

def write_call_stmt(p, rel, w, ind, callee, builder, form, multiline=None, mapping_names=("extra",), leads=None):
    """Write a call of ``callee`` (``builder``: what it resolves to, or None)
    with random arguments; record its TS003 findings.  ``leads``: what may
    stand before the call (None: any of "reply = ", "return ",
    "replies.append(", nothing)."""
    rng = p.rng
    kws = []
    params = sorted(builder.params) if builder is not None else ["msg", "level", "code"]
    dparams = builder.dparams if builder is not None else {}
    family = builder.family if builder is not None else None
    # a builder by a dict parameter only: its extra keywords and `**m` give
    # nothing (docs/rules.md: only a builder whose own **K flows reports them)
    dp_only = family == "dp"
    used = set(dparams)
    first = rng.choice(MESSAGES)
    # positional arguments after the first: ("plain", text) / ("dp", P, plan) / ("trap", plan)
    positional = []
    if dparams:
        order = builder.positions
        idx = [i for i, n in enumerate(order) if n in dparams]
        trap = rng.random()
        if idx and trap < 0.1:
            # a *args before the parameter's position: nothing is bound to it
            if idx[0] == 1:
                first = "*parts"
            else:
                positional.append(("plain", "*parts"))
            positional.append(("trap", plan_dp_value(p, mapping_names, "display")))
            p.forms["dparam-trap-after-starred"] += 1
        elif not idx and trap < 0.3:
            # a keyword-only dict parameter passed by position: not bound
            positional.append(("trap", plan_dp_value(p, mapping_names, "display")))
            p.forms["dparam-trap-kwonly-positional"] += 1
        else:
            if trap > 0.94:
                first = '{"frames": 1}'  # a display where the message stands
                p.forms["dparam-trap-display-as-message"] += 1
            fill = 1
            if idx and rng.random() < 0.55:
                fill = rng.choice(idx) + 1
            for i in range(1, fill):
                n = order[i]
                if n in dparams:
                    positional.append(("dp", n, plan_dp_value(p, mapping_names)))
                else:
                    positional.append(("plain", '"warn"'))
                    used.add(n)
            for P in sorted(dparams):
                if any(x[0] == "dp" and x[1] == P for x in positional):
                    continue
                if rng.random() < 0.6:
                    kws.append(("dp", P, plan_dp_value(p, mapping_names)))
                else:
                    p.forms["dparam-not-passed"] += 1
    elif builder is None and rng.random() < 0.45:
        # an unresolved callee (or a decoy) given a dict argument: nothing
        if rng.random() < 0.5:
            positional.append(("trap", plan_dp_value(p, mapping_names, "display")))
        else:
            kws.append(("trap", "extra", plan_dp_value(p, mapping_names, "display")))
        p.forms["dparam-trap-unresolved"] += 1
    n_extra = rng.choice([0, 0, 1, 1, 2, 3] if family != "dp" else [0, 0, 0, 1])
    for key in rng.sample(EXTRA_KEYS, n_extra):
        kws.append(("kw", key, rng.choice(["1", "len(query)", "[1, 2]", "None", '"x"'])))
        used.add(key)
    if rng.random() < 0.3:
        named = [x for x in params if x not in ("msg", "text", "self", "cls") and x not in used]
        if named:
            k = rng.choice(named)
            kws.append(("kw", k, '"warn"'))
            used.add(k)
    if rng.random() < 0.25:
        k = rng.choice(ALLOWED)
        kws.append(("kw", k, {"status": '"error"', "content": "[]", "toolUseId": "tid"}[k]))
    rng.shuffle(kws)
    if rng.random() < (0.3 if family != "dp" else 0.1):
        kws.append(("star", rng.choice(mapping_names)))
    if multiline is None:
        multiline = rng.random() < 0.25
    is_async = builder is not None and getattr(builder, "is_async", False)
    if leads is not None:
        lead = rng.choice([x for x in leads if not multiline or x in ("reply = ", "return ")] or ["reply = "])
    else:
        lead = rng.choice(["reply = ", "return ", "replies.append(", ""]) if not multiline else rng.choice(
            ["reply = ", "return "])
    w.put(ind + lead)
    h_start = call_pos = None
    if is_async:
        h_start, _ = w.put("await ")
    call_pos, _ = w.put(callee)
    h_start = h_start or call_pos
    findings = []

    def account(kw, span):
        if builder is None:
            return
        if dp_only:
            p.forms["dparam-trap-extra-" + kw[0]] += 1
            return
        if kw[0] == "kw":
            if kw[1] not in builder.params and kw[1] not in ALLOWED:
                findings.append(("key", kw[1], span))
        else:
            findings.append(("dyn", kw[1], span))

    def write_arg(item, bind):
        """Write one argument; dict-parameter ones record their findings."""
        if item[0] == "plain":
            w.put(item[1])
        elif item[0] in ("dp", "trap"):
            plan = item[-1]
            if bind == "kw":
                w.put(item[1] + "=")
            hits = write_dp_value(p, rel, w, plan)
            if item[0] == "dp":
                for kind, key, expr, span in hits:
                    p.expect(rel, "TS003", "builder-call", key, expr, builder, call_pos, span,
                             "dparam-%s-%s" % (bind, kind))
                p.forms["dparam-%s-%s" % (bind, "none" if plan[:2] == ("atom", "None") else
                                          "empty" if plan[:2] == ("display", []) else plan[0])] += 1
                if builder.method:
                    p.forms["dparam-call-method-" + builder.method] += 1
        else:
            span = w.put("%s=%s" % (item[1], item[2]) if item[0] == "kw" else "**" + item[1])
            account(item, span)

    if not multiline:
        w.put("(" + first)
        for item in positional:
            w.put(", ")
            write_arg(item, "pos")
        for kw in kws:
            w.put(", ")
            write_arg(kw, "kw")
        h_end = w.put(")")[1]
        if lead == "replies.append(":
            w.put(")")
        comment = p.maybe_comment(0.25)
        w.end(comment)
    else:
        w.put("(")
        w.end(p.maybe_comment(0.25))
        w.lineof(ind + "    " + first + ",", p.maybe_comment(0.1))
        for item in positional:
            w.put(ind + "    ")
            write_arg(item, "pos")
            w.put(",")
            w.end(p.maybe_comment(0.25))
        for kw in kws:
            w.put(ind + "    ")
            write_arg(kw, "kw")
            w.put(",")
            w.end(p.maybe_comment(0.25))
        h_end = w.lineof(ind + ")")[1]
    # a receiver when it has TS003 key findings or the builder is a producer;
    # an unresolved call is none, but its `reply = ` binds the name all the same
    # (the indentation tells a nested `def local` apart from its function)
    p.base_calls.append(((p.call_scope, ind), lead, rel,
                         None if builder is None else Recv("builder-call", [("c", rel, call_pos)],
                                                           [builder.producer]), (h_start, h_end)))
    for kind, what, span in findings:
        if kind == "key":
            p.expect(rel, "TS003", "builder-call", what, None, builder, call_pos, span, form)
        else:
            p.expect(rel, "TS003", "builder-call", None, what, builder, call_pos, span, form + "-mapping")
    p.forms["calls-" + ("resolved" if builder is not None else "unresolved")] += 1
    return lead, call_pos, is_async


# --------------------------------------------------------------------------
# later writes (TS004)

def write_result_block(p, rel, w, ind, scope_names):
    """A result name and writes of random forms; records TS004 findings."""
    rng = p.rng
    N = p.fresh(rng.choice(["result", "reply", "payload", "out"]))
    scope_names.add(N)
    w.put(ind)
    if rng.random() < 0.15:
        w.put(N + ": dict = ")
    else:
        w.put(N + " = ")
    extra = [("key", "trace", "[]", False)] if rng.random() < 0.08 else []
    brace, _ = p.display(rel, w, p.shaped_entries("query", extra))
    w.end(p.maybe_comment(0.1))
    forms = rng.sample(WRITE_FORMS, rng.randint(1, 4))
    for form in forms:
        write_one(p, rel, w, ind, N, brace, form)
    if rng.random() < 0.3:
        kind = rng.choice(["def", "lambda", "comp"])
        if kind == "def":
            w.lineof(ind + "def later():")
            w.lineof(ind + '    %s["late"] = 1' % N)
        elif kind == "lambda":
            w.lineof(ind + "hook = lambda: %s.update(late=1)" % N)
        else:
            w.lineof(ind + "[%s.setdefault(k, 0) for k in query]" % N)
        p.forms["nested-write-ignored"] += 1
    if rng.random() < 0.1:
        # a later binding of the name: the writes before stay with the first display
        w.put(ind + N + " = ")
        brace2, _ = p.display(rel, w, p.shaped_entries("query"))
        w.end()
        write_one(p, rel, w, ind, N, brace2, rng.choice(["sub_key", "setdefault", "update_kw"]))
        p.forms["rebound-result"] += 1
    w.lineof(ind + "replies.append(%s)" % N)


def write_one(p, rel, w, ind, N, brace, form):
    rng = p.rng
    key = rng.choice(EXTRA_KEYS)

    def hit(k, expr, span, f):
        p.expect(rel, "TS004", "later-write", k, expr, None, brace, span, f)

    p.forms["write-" + form] += 1
    if form == "sub_key":
        w.put(ind)
        span = w.put('%s["%s"] = %s' % (N, key, rng.choice(["1", "len(query)", "None"])))
        hit(key, None, span, "write-subscript")
        w.end(p.maybe_comment())
    elif form == "sub_allowed":
        w.lineof(ind + '%s["%s"] = 1' % (N, rng.choice(ALLOWED)), p.maybe_comment())
    elif form == "sub_dyn":
        k = rng.choice(["name", 'f"x_{query}"', "key_of(query)", "query[0]", "a, b"])
        w.put(ind)
        span = w.put("%s[%s] = 1" % (N, k))
        hit(None, k, span, "write-subscript-dynamic")
        w.end(p.maybe_comment())
    elif form == "sub_nonstr":
        k = rng.choice(["0", "None", 'b"raw"', "1.5", "-1", "True", "..."])
        w.put(ind)
        span = w.put("%s[%s] = 1" % (N, k))
        if k == "-1":
            # a signed number is an expression, not a constant: a dynamic key
            hit(None, k, span, "write-subscript-signed-number")
        w.end(p.maybe_comment())
    elif form == "sub_chain":
        k2 = rng.choice([k for k in EXTRA_KEYS if k != key])
        w.put(ind)
        span = w.put('%s["%s"] = %s["%s"] = 0' % (N, key, N, k2))
        hit(key, None, span, "write-subscript-chained")
        hit(k2, None, span, "write-subscript-chained")
        w.end(p.maybe_comment())
    elif form == "sub_multiline":
        w.put(ind)
        start, _ = w.put('%s["%s"] = [' % (N, key))
        w.end(p.maybe_comment(0.4))
        w.lineof(ind + "    1,", p.maybe_comment(0.5))  # a later line: never silences
        _, end = w.put(ind + "]")
        hit(key, None, (start, end), "write-subscript-multiline")
        w.end()
    elif form == "sub_aug":
        w.lineof(ind + '%s["%s"] += 1' % (N, key), p.maybe_comment())
    elif form == "sub_ann":
        w.lineof(ind + '%s["%s"]: int = 1' % (N, key), p.maybe_comment())
    elif form in ("update_display", "ior_display"):
        entries = []
        pool = rng.sample(["key", "allowed", "num", "dyn", "spread", "paren"], rng.randint(1, 4))
        keys_left = [k for k in EXTRA_KEYS]
        rng.shuffle(keys_left)
        for what in pool:
            if what in ("key", "paren"):
                entries.append(("key", keys_left.pop(), rng.choice(["1", "(2)", "query"]), what == "paren"))
            elif what == "allowed":
                entries.append(("key", rng.choice(["status", "toolUseId"]), '"x"', False))
            elif what == "num":
                entries.append(("dynkey", rng.choice(["3", "None", "2.5"]), "0"))
            elif what == "dyn":
                entries.append(("dynkey", rng.choice(["name", "key_of(query)"]), "0"))
            else:
                entries.append(("spread", rng.choice(["extra", "defaults()"])))
        w.put(ind)
        if form == "update_display":
            w.put(N + ".update(")
        else:
            w.put(N + " |= ")
        _, spans = p.display(rel, w, entries)
        if form == "update_display":
            w.put(")")
        for e, span in spans:
            f = "write-" + form
            if e[0] == "key" and e[1] not in ALLOWED:
                hit(e[1], None, span, f)
            elif e[0] == "dynkey" and e[1] not in ("3", "None", "2.5"):
                hit(None, e[1], span, f + "-dynamic")
            elif e[0] == "spread":
                hit(None, e[1], span, f + "-mapping")
        w.end(p.maybe_comment())
    elif form == "update_kw":
        w.put(ind + N + ".update(")
        args = []
        for k in rng.sample(EXTRA_KEYS, rng.randint(0, 2)):
            args.append(("kw", k))
        if rng.random() < 0.4:
            args.append(("allowed", rng.choice(ALLOWED)))
        if rng.random() < 0.4 or not args:
            args.append(("star", rng.choice(["extra", "meta"])))
        for i, a in enumerate(args):
            if i:
                w.put(", ")
            if a[0] == "star":
                span = w.put("**" + a[1])
                hit(None, a[1], span, "write-update-kwargs-mapping")
            else:
                span = w.put("%s=1" % a[1])
                if a[0] == "kw":
                    hit(a[1], None, span, "write-update-kwargs")
        w.put(")")
        w.end(p.maybe_comment())
    elif form in ("update_expr", "ior_expr"):
        e = rng.choice(["extra", "dict(a=1)", "meta.items()", "defaults()"])
        w.put(ind + N + (".update(" if form == "update_expr" else " |= "))
        span = w.put(e)
        if form == "update_expr":
            w.put(")")
        hit(None, e, span, "write-" + form)
        w.end(p.maybe_comment())
    elif form == "setdefault":
        what = rng.choice(["key", "key", "dyn", "allowed", "num"])
        k = {"key": json.dumps(key), "dyn": "name", "allowed": '"content"', "num": "7"}[what]
        inside = rng.random() < 0.4
        w.put(ind)
        if inside:
            w.put("n = len(")
        span = w.put("%s.setdefault(%s, [])" % (N, k))
        if inside:
            w.put(")")
        if what == "key":
            hit(key, None, span, "write-setdefault")
        elif what == "dyn":
            hit(None, "name", span, "write-setdefault-dynamic")
        w.end(p.maybe_comment())
    elif form == "loop":
        w.lineof(ind + "for k, v in extra.items():")
        w.put(ind + "    ")
        span = w.put("%s[k] = v" % N)
        hit(None, "k", span, "write-items-loop")
        w.end(p.maybe_comment())
    elif form == "in_expr":
        w.put(ind + "print(" + N + ".update(")
        span = w.put("%s=2" % key)
        w.put("))")
        hit(key, None, span, "write-update-in-expression")
        w.end(p.maybe_comment())


WRITE_FORMS = ["sub_key", "sub_key", "sub_allowed", "sub_dyn", "sub_nonstr", "sub_chain", "sub_multiline",
               "sub_aug", "sub_ann", "update_display", "update_kw", "update_expr", "setdefault",
               "ior_display", "ior_expr", "loop", "in_expr"]


def write_non_result(p, rel, w, ind):
    """A name that is not a result name, written into: no finding."""
    rng = p.rng
    kind = rng.choice(["rebound", "bare_ann", "unpack", "param", "not_shaped", "walrus", "deleted"])
    N = p.fresh("data")
    p.forms["non-result-" + kind] += 1
    if kind == "param":
        w.lineof(ind + 'extra["frames"] = 1')
        return
    if kind == "bare_ann":
        w.lineof(ind + "%s: dict" % N)
    if kind == "unpack":
        w.put(ind + N + ", count = ")
        p.display(rel, w, p.shaped_entries("query"))
        w.put(", 0")
        w.end()
    elif kind == "walrus":
        w.put(ind + "if (%s := " % N)
        p.display(rel, w, p.shaped_entries("query"))
        w.put("):")
        w.end()
        w.lineof(ind + "    pass")
    elif kind == "not_shaped":
        w.lineof(ind + '%s = {"kind": "x", "status": 1}' % N)
    else:
        w.put(ind + N + " = ")
        p.display(rel, w, p.shaped_entries("query"))
        w.end()
    if kind == "rebound":
        w.lineof(ind + "%s = fetch(query)" % N)
    write_silent(w, ind, N, rng)
    if kind == "deleted":
        w.lineof(ind + "del %s" % N)


def write_silent(w, ind, N, rng):
    form = rng.choice(["sub", "update", "setdefault", "ior"])
    text = {"sub": '%s["frames"] = 1', "update": "%s.update(frames=1, **extra)",
            "setdefault": '%s.setdefault("trace", [])', "ior": "%s |= extra"}[form] % N
    w.lineof(ind + text)


def write_module_results(p, rel, w):
    """Module-level result names: a counted write, a global rebinding trap."""
    rng = p.rng
    N = p.fresh("DEFAULT")
    w.put(N + " = ")
    brace, _ = p.display(rel, w, p.shaped_entries('"idle"'))
    w.end(p.maybe_comment(0.1))
    span = w.put('%s["version"] = 2' % N)
    p.expect(rel, "TS004", "later-write", "version", None, None, brace, span, "write-module-scope")
    w.end(p.maybe_comment())
    w.end()
    w.end()
    w.lineof("def touch():")
    w.lineof('    %s["touched"] = True' % N)
    p.forms["write-module-scope"] += 1
    if rng.random() < 0.5:
        F = p.fresh("FALLBACK")
        w.end()
        w.end()
        w.put(F + " = ")
        p.display(rel, w, p.shaped_entries('"none"'))
        w.end()
        w.lineof('%s["reason"] = "unset"' % F)
        w.end()
        w.end()
        w.lineof("def reset():")
        w.lineof("    global %s" % F)
        w.lineof("    %s = None" % F)
        p.forms["non-result-global-rebinding"] += 1
    if rng.random() < 0.3:
        # the write before any binding takes the first display
        w.end()
        w.end()
        w.lineof("def retry(query):")
        R = p.fresh("attempt")
        w.lineof("    for i in range(3):")
        w.lineof("        if i:")
        w.put("            ")
        span = w.put("%s[\"again\"] = i" % R)
        p.base_producers.append((rel, p.producer("retry", rel, [("w", rel, span[0][0])]), '("q")'))
        w.end(p.maybe_comment())
        w.put("        %s = " % R)
        brace, _ = p.display(rel, w, p.shaped_entries("query"))
        w.end()
        p.expect(rel, "TS004", "later-write", "again", None, None, brace, span, "write-before-binding")
        w.lineof("    return %s" % R)
        p.forms["write-before-binding"] += 1
    w.end()
    w.end()


# --------------------------------------------------------------------------
# tool modules


class Access:
    """How a tool module reaches a function: header lines, callee text and
    the builder it resolves to (None: unresolvable or not a builder)."""

    def __init__(self, callee, builder, form, bound):
        self.callee = callee
        self.builder = builder
        self.form = form
        self.bound = bound  # module-scope names bound for it


def plan_access(p, pkg, has_init, reexports, builders, helpers, decoys, rel_common_mod):
    """[(header line)], [Access] for one tool module."""
    rng = p.rng
    header = []
    accesses = []
    bound = set()

    def unique(name):
        n = name
        i = 2
        while n in bound:
            n = "%s_%d" % (name, i)
            i += 1
        bound.add(n)
        return n

    forms = ["from_rel", "from_abs_alias", "import_as", "from_pkg_module", "from_dot_module"]
    if has_init:
        forms += ["reexport", "reexport_dot", "import_pkg"]
    chosen = rng.sample(forms, rng.randint(1, min(4, len(forms))))
    targets = builders + helpers
    for form in chosen:
        b = rng.choice(targets)
        modname = "helpers" if b in helpers else "common"
        if form in ("reexport", "reexport_dot", "import_pkg") and b.name not in reexports:
            form = "from_rel"
        if form == "from_rel":
            local = unique(b.name)
            header.append("from .%s import %s" % (modname, b.name if local == b.name else b.name + " as " + local))
            accesses.append(Access(local, b, form, {local}))
        elif form == "from_abs_alias":
            local = unique("good")
            header.append("from %s.%s import %s as %s" % (pkg, modname, b.name, local))
            accesses.append(Access(local, b, form, {local}))
        elif form == "import_as":
            local = unique("c")
            header.append("import %s.%s as %s" % (pkg, modname, local))
            accesses.append(Access(local + "." + b.name, b, form, {local}))
        elif form == "from_pkg_module":
            local = unique(modname)
            header.append("from %s import %s" % (pkg, modname if local == modname else modname + " as " + local))
            accesses.append(Access(local + "." + b.name, b, form, {local}))
        elif form == "from_dot_module":
            local = unique("mod")
            header.append("from . import %s as %s" % (modname, local))
            accesses.append(Access(local + "." + b.name, b, form, {local}))
        elif form in ("reexport", "reexport_dot"):
            local = unique(b.name)
            src = pkg if form == "reexport" else "."
            header.append("from %s import %s" % (src, b.name if local == b.name else b.name + " as " + local))
            accesses.append(Access(local, b, form, {local}))
        elif form == "import_pkg":
            if pkg in bound:
                continue
            bound.add(pkg)
            header.append("import %s" % pkg)
            accesses.append(Access(pkg + "." + b.name, b, form, {pkg}))
    # unresolvable ones
    for form in rng.sample(["star", "twice", "dotted", "value", "decoy", "broken_reexport"], rng.randint(1, 3)):
        b = rng.choice(builders)
        if form == "star":
            if b.name in bound:
                continue
            bound.add(b.name)
            header.append("from .common import *")
            accesses.append(Access(b.name, None, form, set()))
        elif form == "twice":
            local = unique("maybe_" + b.name.strip("_"))
            header.append("try:")
            header.append("    from .common import %s as %s" % (b.name, local))
            header.append("except ImportError:")
            header.append("    %s = None" % local)
            accesses.append(Access(local, None, form, {local}))
        elif form == "dotted":
            if pkg in bound:
                continue
            bound.add(pkg)
            header.append("import %s.common" % pkg)
            accesses.append(Access("%s.common.%s" % (pkg, b.name), None, form, {pkg}))
        elif form == "value":
            if not accesses or accesses[0].builder is None:
                continue
            local = unique("handler")
            header.append("%s = %s" % (local, accesses[0].callee))
            a = Access(local, None, form, {local})
            # the builder used as a value there (an escape when it is a producer:
            # docs/rules.md "**Escapes.**"), on header line len(header) - 1
            a.value_of = (accesses[0], len(header) - 1, len(local + " = "))
            accesses.append(a)
        elif form == "decoy":
            if not decoys:
                continue
            d = rng.choice(decoys)
            local = unique(d)
            header.append("from .common import %s" % (d if local == d else d + " as " + local))
            accesses.append(Access(local, None, form, {local}))
        elif form == "broken_reexport" and has_init and "broken" in reexports:
            local = unique("broken")
            header.append("from %s import broken as %s" % (pkg, local))
            accesses.append(Access(local, None, form, {local}))
    return header, accesses


def write_tool_module(p, rel, pkg, has_init, reexports, builders, helpers, decoys, methods):
    rng = p.rng
    w = W()
    p.modules[rel] = w
    header, accesses = plan_access(p, pkg, has_init, reexports, builders, helpers, decoys, None)
    w.lineof('"""Tools."""')
    uses_base = methods and rng.random() < 0.4
    values = {a.value_of[1]: a.value_of for a in accesses if getattr(a, "value_of", None)}
    for i, line in enumerate(header):
        if i in values:
            used, _, lead = values[i]
            w.put(line[:lead])
            span = w.put(line[lead:])
            w.end()
            note_base_escape(p, rel, used.builder, span, "base-header", line[lead:])
        else:
            w.lineof(line)
    if uses_base:
        w.lineof("from .common import Base")
    w.end()
    w.end()
    for a in accesses:
        p.forms["access-" + a.form] += 1
    if rng.random() < 0.4:
        write_module_results(p, rel, w)
    nfun = rng.randint(1, 3)
    for fi in range(nfun):
        is_async = any(a.builder is not None and getattr(a.builder, "is_async", False) for a in accesses)
        w.lineof("%sdef tool_%d(query, extra, meta=None):" % ("async " if is_async else "", fi))
        p.call_scope = (rel, "tool_%d" % fi)
        ind = "    "
        names = set()
        prod = p.producer("tool_%d" % fi, rel)
        for _ in range(rng.randint(2, 5)):
            what = rng.random()
            if what < 0.5:
                a = rng.choice(accesses)
                form = "call-" + a.form
                lead, call_pos, awaited = write_call_stmt(p, rel, w, ind, a.callee, a.builder, form,
                                                          mapping_names=("extra", "meta"))
                if lead == "return " and not awaited:
                    # `return CALL` in tool_N's own scope: case 3 (and 4 through a chain)
                    prod.tags.append(("c", rel, call_pos))
                    if a.builder is not None and a.builder.producer is not None:
                        prod.via.append(a.builder.producer)
            elif what < 0.8:
                write_result_block(p, rel, w, ind, names)
            elif what < 0.9:
                write_non_result(p, rel, w, ind)
            else:
                resolved = [a for a in accesses if a.builder is not None]
                if not resolved:
                    continue
                a = rng.choice(resolved)
                kind = rng.choice(["shadow_param", "shadow_local", "value_local", "passed"])
                p.forms["unresolved-" + kind] += 1
                head = a.callee.split(".")[0]
                if kind == "shadow_param":
                    w.lineof(ind + "def local(%s):" % head)
                    write_call_stmt(p, rel, w, ind + "    ", a.callee, None, "shadow", multiline=False)
                elif kind == "shadow_local":
                    w.lineof(ind + "def local():")
                    w.lineof(ind + "    %s = make_other()" % head)
                    write_call_stmt(p, rel, w, ind + "    ", a.callee, None, "shadow", multiline=False)
                elif kind == "value_local":
                    w.put(ind + "fn = ")
                    span = w.put(a.callee)
                    w.end()
                    note_base_escape(p, rel, a.builder, span, "base-local", a.callee)
                    w.lineof(ind + 'fn("x", frames=1)')
                else:
                    w.put(ind + "apply(")
                    span = w.put(a.callee)
                    w.lineof(', "x", frames=1)')
                    note_base_escape(p, rel, a.builder, span, "base-argument", a.callee)
        w.lineof(ind + "return None")
        p.base_producers.append((rel, prod, '("q", {})'))
        w.end()
        w.end()
    if uses_base:
        w.lineof("class Tool(Base):")
        w.lineof("    def run(self, query, extra):")
        mb = [m for m in methods if m.method == "self"][0]
        write_call_stmt(p, rel, w, "        ", "self." + mb.name, None, "subclass-self", multiline=False)
        w.lineof("        return None")
        p.forms["unresolved-subclass-self"] += 1


def note_base_escape(p, rel, b, span, kind, text):
    """A builder ``b`` of the base program used as a value at ``span``: an
    escape (docs/rules.md "**Escapes.**") when ``b`` is a producer (a chain
    whose returned call carries keys; else its Producer is None); the text is
    the same either way, and nothing is counted here (the corpus without
    readers, its manifest too, stays what it was)."""
    p.escapes.append((rel, b.producer, "base/" + kind, span, text, False))


def write_helpers(p, pkg, builders):
    """helpers.py: builders chained across modules."""
    rng = p.rng
    rel = p.outrel + "/" + pkg + "/helpers.py"
    w = W()
    p.modules[rel] = w
    sync = [b for b in builders if not b.is_async and b.family in ("K", "both")]
    if not sync:
        return None, []
    b = rng.choice(sync)
    form = rng.choice(["from_rel", "from_abs_alias", "import_as", "from_dot_module"])
    if form == "from_rel":
        w.lineof("from .common import %s" % b.name)
        callee = b.name
    elif form == "from_abs_alias":
        w.lineof("from %s.common import %s as base" % (pkg, b.name))
        callee = "base"
    elif form == "import_as":
        w.lineof("import %s.common as c" % pkg)
        callee = "c." + b.name
    else:
        w.lineof("from . import common")
        callee = "common." + b.name
    w.end()
    w.end()
    out = []
    start, _ = w.put("def ")
    w.put("failure(msg, **kw):")
    w.end()
    w.put("    return ")
    call_pos, _ = w.put(callee)
    w.put("(msg")
    if rng.random() < 0.3:
        w.put(", ")
        span = w.put("hint=None")
        p.expect(rel, "TS003", "builder-call", "hint", None, b, call_pos, span, "chain-extra")
    w.put(", **kw)")
    w.end()
    f = Builder("failure", rel, start[0], start[1], ["msg"], "chain-cross-module")
    f.is_async = False
    f.producer = p.producer("failure", rel, [("c", rel, call_pos)], [b.producer])
    out.append(f)
    p.forms["builder-chain-cross-module"] += 1
    if rng.random() < 0.5:
        # a second link: a chain on the chain
        w.end()
        w.end()
        start, _ = w.put("def ")
        w.put("fatal(msg, *, code=1, **kw):")
        w.end()
        w.put("    return ")
        fcall, _ = w.put("failure(msg, **kw)")
        w.end()
        g = Builder("fatal", rel, start[0], start[1], ["msg", "code"], "chain-of-chain")
        g.is_async = False
        g.producer = p.producer("fatal", rel, [("c", rel, fcall)], [f.producer])
        out.append(g)
        p.forms["builder-chain-of-chain"] += 1
    return rel, out


def write_init(p, pkg, builders, helpers):
    rel = p.outrel + "/" + pkg + "/__init__.py"
    w = W()
    p.modules[rel] = w
    rng = p.rng
    names = set()
    chosen = [b for b in builders if rng.random() < 0.8] or builders[:1]
    form = rng.choice(["rel", "abs"])
    if form == "rel":
        w.lineof("from .common import %s" % ", ".join(b.name for b in chosen))
    else:
        w.lineof("from %s.common import %s" % (pkg, ", ".join(b.name for b in chosen)))
    names |= {b.name for b in chosen}
    if helpers:
        w.lineof("from .helpers import %s" % ", ".join(h.name for h in helpers))
        names |= {h.name for h in helpers}
    if rng.random() < 0.4:
        # bound twice: not a re-export anyone can resolve
        b = builders[0]
        w.lineof("from .common import %s as broken" % b.name)
        w.lineof("broken = broken")
        names.add("broken")
        p.forms["reexport-bound-twice"] += 1
    w.lineof('__all__ = [%s]' % ", ".join(json.dumps(n) for n in sorted(names)))
    return names


# --------------------------------------------------------------------------
# imports inside a function (docs/rules.md TS003 "**Imports inside a
# function**")
#
# Most programs also get `PKG/tools_local.py`, written last from a random
# stream of its own (so every other file is the one written before): functions
# `via_local_N(query, extra, meta=None)` that import a builder (of common.py
# or helpers.py) inside their own body, in one of the forms a module-level
# import takes (LOCAL_ACCESS_FORMS: `from .M import B`, `from .M import B as
# good`, `from PKG.M import B`, `import PKG.M as c`, `from PKG import M`,
# `from . import M as m`, a re-export `from PKG import B`, `import PKG`), and
# call it there or in a def nested in the function (LOCAL_PLACES): a name of
# a function's own scope bound there once by such an import resolves as a
# module-level one does, so the calls have their TS003 findings (and, with
# --with-readers, are receivers like the base program's calls: results
# returned, dropped, bound to `reply` or handed on by `replies.append(C)`);
# next to decoys whose calls resolve nothing (LOCAL_DECOYS): the import bound
# twice (`try` / `except ImportError: B = None`), in a class body (the call
# there, or in a method of the class, which does not see it), in a def nested
# in the function calling it, a dotted `import PKG.M`, and the name rebound
# after its import (`B = wrap(B)`).

LOCAL_ACCESS_FORMS = ["from_rel", "from_rel_alias", "from_abs", "import_as", "from_pkg_module", "from_dot_module",
                      "reexport", "import_pkg"]
LOCAL_PLACES = ["function", "nested"]
LOCAL_DECOYS = ["twice", "class-body", "class-method", "inner-import", "dotted", "rebound"]
LOCAL_CONSTRUCTS = (["local-access-" + f for f in LOCAL_ACCESS_FORMS] + ["local-place-" + k for k in LOCAL_PLACES]
                    + ["local-decoy-" + k for k in LOCAL_DECOYS])


def local_access(pkg, modname, name, form):
    """(import line, callee text) of builder ``name`` of module ``modname``
    of package ``pkg`` imported in ``form`` (LOCAL_ACCESS_FORMS)."""
    return {
        "from_rel": ("from .%s import %s" % (modname, name), name),
        "from_rel_alias": ("from .%s import %s as good" % (modname, name), "good"),
        "from_abs": ("from %s.%s import %s" % (pkg, modname, name), name),
        "import_as": ("import %s.%s as c" % (pkg, modname), "c." + name),
        "from_pkg_module": ("from %s import %s" % (pkg, modname), modname + "." + name),
        "from_dot_module": ("from . import %s as m" % modname, "m." + name),
        "reexport": ("from %s import %s" % (pkg, name), name),
        "import_pkg": ("import %s" % pkg, pkg + "." + name),
    }[form]


def write_local_tools(p, pkg, has_init, reexports, builders, helpers):
    """`PKG/tools_local.py` (see above); no fresh names, so that the rest of
    the program is what it was."""
    rng = p.rng
    rel = "%s/%s/tools_local.py" % (p.outrel, pkg)
    w = W()
    p.modules[rel] = w
    w.lineof('"""Tools importing their builders inside the function."""')
    w.end()
    w.end()
    targets = builders + helpers
    for i in range(rng.randint(1, 3)):
        b = rng.choice(targets)
        modname = "helpers" if b in helpers else "common"
        forms = LOCAL_ACCESS_FORMS[:6] + (LOCAL_ACCESS_FORMS[6:] if has_init and b.name in reexports else [])
        form = rng.choice(forms)
        place = rng.choice(LOCAL_PLACES)
        p.forms["local-access-" + form] += 1
        p.forms["local-place-" + place] += 1
        line, callee = local_access(pkg, modname, b.name, form)
        is_async = "async " if b.is_async else ""
        fn = "via_local_%d" % i
        w.lineof("%sdef %s(query, extra, meta=None):" % (is_async, fn))
        w.lineof("    " + line)
        p.call_scope = (rel, fn)
        ind = "    "
        prod = p.producer(fn, rel)
        if place == "nested":
            # a def nested in the function: the name resolves to the function's import
            w.lineof("    %sdef inner():" % is_async)
            ind = "        "
        for _ in range(rng.randint(1, 3)):
            written = write_call_stmt(p, rel, w, ind, callee, b, "call-local-" + form,
                                      mapping_names=("extra", "meta"))
            if place == "function":
                note_returned(p, rel, prod, b, written)
        if place == "nested":
            w.lineof("        return None")
            w.lineof("    return inner")
        else:
            w.lineof("    return None")
        w.end()
        w.end()
    for j in range(rng.randint(1, 2)):
        b = rng.choice(targets)
        modname = "helpers" if b in helpers else "common"
        kind = rng.choice(LOCAL_DECOYS)
        p.forms["local-decoy-" + kind] += 1
        p.call_scope = (rel, "decoy_local_%d" % j)
        ind = "    "
        callee = b.name
        leads = None
        if kind in ("class-body", "class-method"):
            w.lineof("class LocalPanel_%d:" % j)
            w.lineof("    from .%s import %s" % (modname, b.name))
            if kind == "class-body":
                # the call in the class body: a class body's name resolves nothing
                leads = ["reply = ", ""]
            else:
                # a method does not see the class body's names
                w.lineof("    def run(self, query, extra):")
                ind = "        "
        else:
            w.lineof("def decoy_local_%d(query, extra):" % j)
            if kind == "twice":
                w.lineof("    try:")
                w.lineof("        from .%s import %s" % (modname, b.name))
                w.lineof("    except ImportError:")
                w.lineof("        %s = None" % b.name)
            elif kind == "inner-import":
                w.lineof("    def load():")
                w.lineof("        from .%s import %s" % (modname, b.name))
                w.lineof("        return None")
            elif kind == "dotted":
                w.lineof("    import %s.%s" % (pkg, modname))
                callee = "%s.%s.%s" % (pkg, modname, b.name)
            else:
                w.lineof("    from .%s import %s" % (modname, b.name))
                w.lineof("    %s = wrap(%s)" % (b.name, b.name))
        write_call_stmt(p, rel, w, ind, callee, None, "local-decoy-" + kind, leads=leads)
        if kind != "class-body":
            w.lineof(ind + "return None")
        w.end()
        w.end()


def generate_program(seed, index, outrel, with_readers=False):
    rng = random.Random("%d/%d" % (seed, index))
    p = Prog(rng, index, outrel)
    pkg = rng.choice(["pkg", "app", "tools", "svc", "robot"])
    has_init = rng.random() < 0.6
    has_class = rng.random() < 0.5
    rel_common, builders, decoys, methods = write_common(p, pkg, has_class)
    helpers = []
    if rng.random() < 0.45:
        rel_h, helpers = write_helpers(p, pkg, builders)
    reexports = write_init(p, pkg, builders, helpers) if has_init else set()
    n_mods = len(p.modules)
    n_tools = rng.randint(1, max(1, 5 - n_mods))
    for t in range(n_tools):
        rel = "%s/%s/tools_%s.py" % (outrel, pkg, "abcd"[t])
        write_tool_module(p, rel, pkg, has_init, reexports, builders, helpers, decoys, methods)
    if with_readers:
        # a stream of its own: the program above is the one written without readers
        p.rng = random.Random("%d/%d/readers" % (seed, index))
        rd = write_readers(p, pkg, has_init, reexports, builders, helpers)
        # the front ends (possible reads) last, from a stream of their own again
        p.rng = rd.rng = random.Random("%d/%d/possible" % (seed, index))
        write_frontends(rd)
        # the uses of producers as values (escapes) last, from a stream of their own too
        p.rng = rd.rng = random.Random("%d/%d/escapes" % (seed, index))
        write_escapes(rd)
        # the calls toolshape cannot resolve last, from a stream of their own too
        p.rng = rd.rng = random.Random("%d/%d/unresolved" % (seed, index))
        write_unresolved(rd)
        # the decorated producers last, from a stream of their own too
        p.rng = rd.rng = random.Random("%d/%d/decorators" % (seed, index))
        write_decorated(rd)
        # the tools given other names last, from a stream of their own too
        p.rng = rd.rng = random.Random("%d/%d/tool-names" % (seed, index))
        write_tool_names(rd)
        # the uses as values toolshape cannot resolve last, from a stream of their own too
        p.rng = rd.rng = random.Random("%d/%d/unresolved-uses" % (seed, index))
        write_unresolved_uses(rd)
        # the reads through imports inside a function last, from a stream of their own too
        p.rng = rd.rng = random.Random("%d/%d/local-imports-readers" % (seed, index))
        write_local_imports(rd)
        # the results handed to checking functions last, from a stream of their own too
        p.rng = rd.rng = random.Random("%d/%d/checkers" % (seed, index))
        write_checkers(rd)
    # the calls of builders imported inside a function last, from a stream of
    # their own (with or without readers, the same module)
    p.rng = random.Random("%d/%d/local-imports" % (seed, index))
    if p.rng.random() < 0.7:
        write_local_tools(p, pkg, has_init, reexports, builders, helpers)
    return p


# --------------------------------------------------------------------------
# readers (--with-readers): consumers of tool results and the reads they make
# (docs/rules.md "Reads of moved keys")
#
# Each program also gets `PKG/probes.py` (producers of every case: a shaped
# display returned, a result name with later writes, a builder call returned,
# a chain onto another producer, methods through self / cls; decorated with
# @tool in every spelling or with a decorator that is no tool, whose
# decorator then hands its results on: "decorators" below), often
# `PKG/facade.py` (chains across modules, onto probes and onto the base
# program's own producers: tool_N functions returning builder calls, ping(),
# retry(), builder chains with an extra keyword), and consumers:
# `tests/test_reads.py` (absolute imports) and sometimes `PKG/use_reads.py`
# (relative imports), besides a method of a probes class reading through
# `self`.  Consumers read the results in every read form, through every
# receiver kind (a call resolving to a producer, a builder call with extra
# keywords or a dict-parameter display, `X.tool.NAME(...)`, a call on an
# instance of the probes class, `Station().m(...)` or `st.m(...)` with
# `st = Station()` bound once in the scope reading it, a name bound once
# to one of these), the content list among them (`E["content"][0]`: block,
# `E["content"]` otherwise: content, `E["content"] = []`: no read), awaited
# calls (docs/rules.md "**Awaited calls.**": `(await C)`, a bare `await C`
# where the grammar allows it, a name bound once by `R = await C`, each read
# as C; `await C["k"]`, a read of C itself), next to decoys: keys that are
# not moved, computed keys, uses that are no read, names bound twice or not
# by a one-target plain assignment (`R = await C` too), reads in nested
# scopes, a module name read in a function, unresolvable callees,
# `agent.tools.NAME`, undecorated tools; calls on an instance that resolve
# nothing (the class not imported, a method not in its body or inherited by
# a subclass, the instance name bound twice or annotated) and a producer
# returning `Station().m(query)` (calls on an instance are receivers only:
# no chain).
#
# The generator keeps, for every read it writes, the receiver as a Recv (its
# origin tags, the producers it reaches, the tool names it calls); the reads
# of each finding follow once suppressions are known (expected_reads).

READ_KEYS = ["devices", "serial", "battery", "rows", "elapsed", "frames", "hz", "trace", "volts",
             "took_ms", "größe"]
NOT_MOVED_KEYS = ["status", "content", "toolUseId", "unrelated", "message"]
PROBE_NAMES = ["scan", "battery_state", "uptime", "thermal", "inventory", "logcat", "screenshot",
               "ping_device", "list_packages", "get_props", "snapshot", "status_report"]
METHOD_NAMES = ["sample", "measure", "poll", "read_probe"]
# (decorator text or None, a tool decorator?)
DECORATORS = [
    ("@tool", True), ("@tool()", True), ('@tool(name="probe_tool")', True), ("@strands.tool", True),
    ('@strands.tool(description="d")', True), ("@strands.tools.tool", True), ("@strands.tools.tool()", True),
    (None, False), (None, False), ("@functools.cache", False), ("@agent.tool", False),
    ("@tools_lib.tool", False), ("@strands.tool.extra", False), ("@tool_wrapper", False),
]
KEYED_WRITES = ["sub_key", "sub_chain", "sub_multiline", "update_display", "update_kw", "setdefault",
                "ior_display", "in_expr"]


class Recv:
    """A receiver as the generator wrote it: the origin tags of its call (a
    builder call's own TS003 findings), the producers it resolves to, the
    names of the tools it calls directly."""

    def __init__(self, kind, tags=(), via=(), tools=(), ckws=None, wide=None):
        self.kind = kind
        self.tags = list(tags)
        self.via = [v for v in via if v is not None]
        self.tools = list(tools)
        # the call's keywords P=C with C a constant string ({P: C}): they
        # narrow the tools it calls (each by its own parameters)
        self.ckws = dict(ckws or {})
        # the producers the call names, before narrowing (for the key choice)
        self.wide = wide


NO_RECV = None  # a receiver that is none: what it returns is not followed

READ_FORMS = ["subscript", "store", "delete", "get", "pop", "setdefault", "in", "not-in", "whole", "content",
              "block", "escape"]
# the content list (docs/rules.md): `E["content"]` reads it, form block when it
# is the value of a load `E["content"][i]` with i a decimal literal, else content
CONTENT = "content"
# (index text, a decimal literal?)
CONTENT_INDEXES = [("0", True), ("1", True), ("12", True), ("(0)", True), ("( 2 )", True), ("00", True),
                   ("-1", False), ("0x1", False), ("1_0", False), ("i", False), ("0:1", False), ("1:", False),
                   ("True", False), ("0, 1", False), ("len(x)", False)]
# (text before, text after) `E["content"][i]` that keeps it a load: a block read
# for a decimal i
CONTENT_ITEM_USES = [("x = ", ""), ("assert ", " is not None"), ("", '["text"]'), ("x = ", '.get("text")'),
                     ("", '["text"] = "x"'), ("assert ", ' == {"text": "ok"}'), ('print("fertig ✓", ', ")")]
# (text before, text after) `E["content"]`, the list itself: a content read
CONTENT_LIST_USES = [("x = ", ""), ("assert ", ' == [{"text": "ok"}]'), ("x = len(", ")"), ("for k in ", ":"),
                     ("", '.append({"json": {}})'), ("x = [k for k in ", "]"), ("emit(", ")")]
# (text before, text after) `E["content"][i]` as a target: its inner `E["content"]`
# is still a load, a content read whatever i
CONTENT_ITEM_TARGETS = [("", " = {}"), ("", " += [1]"), ("del ", "")]
# (kind, text before, text after) `E["content"]` as a target: no read at all
CONTENT_TARGETS = [("assign", "", " = []"), ("aug", "", " += []"), ("delete", "del ", ""),
                   ("annotated", "", ": list = []"), ("for", "for ", " in [[]]:")]
# `await C` spelled (text before C, text after): docs/rules.md "**Awaited
# calls.**" sees parentheses through, around C or around the whole
AWAIT_SPELLINGS = {"plain": ("await ", ""), "inner": ("await (", ")"), "outer": ("(await ", ")"),
                   "both": ("(await (", "))")}
# results handed on where they stand (Consumer.handed_block): (text before
# the call, text after); "print" binds a name once, passes it on and reads it
HANDED_SPELLINGS = {"attribute": ("agent.last_result = ", ""), "argument": ("check_result(", ")"),
                    "list": ("x = [", ", 1]"), "conditional": ("x = ", " if query else None"),
                    "lambda": ("hook = lambda: ", ""), "if": ("if ", ":"), "for": ("for k in ", ":"),
                    "keyword": ('emit("x", result=', ")")}
HANDED_KINDS = sorted(HANDED_SPELLINGS) + ["print"]
# names bound in sequence (docs/rules.md "**Receivers**", Consumer.sequence_block):
# what breaks the sequence (the name then bound twice as before: no receiver,
# every call bound handed on), at one binding or beside them
SEQUENCE_BREAKS = ["if", "while", "for", "with", "try", "match", "annotated", "chained", "tuple", "walrus",
                   "aug", "del", "nonlocal", "global"]
# what keeps the sequence but hands every binding on: a load in a nested
# scope, or before the first binding ends
SEQUENCE_SPOILS = ["nested-def", "nested-lambda", "nested-comp", "nested-annotation", "early"]
# the values of the bindings: a receiver call; a value that is none; a value
# loading R (seeing the binding before): as a read's receiver, passed on, or
# read in the argument of a receiver call
SEQUENCE_VALUES = ["call", "other", "value-read", "value-pass", "value-call"]
# compound statements the reads between bindings may stand in (still in the
# function's own scope: they see the binding before)
SEQUENCE_COMPOUNDS = ["if query:", "for _ in range(1):", "with make_ctx():", "while query:"]
# annotations (docs/rules.md "**Annotations.**", Consumer.where_block): a
# def's parameter and return annotations and a variable's stand in a scope
# nested in the function (a load of R there is no receiver, and hands every
# call bound to R on); its defaults and decorators, a lambda's defaults, a
# class's bases and keywords and an annotated assignment's value stand in
# the function (a read there is one, a load that is no read's receiver
# passes R on)
WHERE_ANNOTATIONS = ["posonly", "pos", "vararg", "kwonly", "kwarg", "return"]
# a variable's annotation in the function (`y: A = v`, `y: A`, in an `if`):
# an annotation too (docs/rules.md "**Annotations.**")
WHERE_VARIABLES = ["variable", "variable-bare", "variable-if"]
WHERE_IN_S = ["default", "kwdefault", "decorator", "lambda-default", "class-base", "class-keyword",
              "annassign-value"]
# a receiver call written in an annotation (Consumer.annotation_call_block):
# handed on whatever holds it, no read; where it stands and what holds it
ANNOTATION_CALL_PLACES = ["pos", "kwonly", "vararg", "return", "variable", "variable-bare", "variable-if"]
ANNOTATION_CALL_OUTER_PLACES = ["pos", "return", "variable", "variable-bare"]
ANNOTATION_CALL_HOLDERS = ["subscript", "get", "in", "bare", "whole-dict", "whole-eq", "content", "block",
                           "passed", "comp"]
# the expressions loading R written there: a read form, or R passed on
WHERE_EXPRS = ["subscript", "subscript", "get", "pop", "in", "not-in", "whole-dict", "whole-keys", "whole-eq",
               "whole-json", "content", "block", "no-read"]
# assertion messages (docs/rules.md "**Assertion messages.**", Consumer.message_stmt):
# `assert T, M` with M loading a name R ("@") bound once or in sequence in the
# function.  Kept: M is R (parenthesized too), or an f-string (an implicit
# concatenation too, over lines too) one of whose fields has R as its whole
# expression, whatever its conversion, `=` or own format spec: no read, and
# nothing handed on
MESSAGES_KEPT = {"name": "@", "paren": "(@)", "field": 'f"got {@}"', "repr": 'f"{@!r}"', "debug": 'f"{@=}"',
                 "debug-spaced": 'f"{ @ = }"', "field-paren": 'f"{(@)}"', "field-paren-spaced": 'f"{ ( @ ) }"',
                 "concat": 'f"x {@}" " y"', "concat-lead": '"y " f"{@!s}"', "spec": 'f"{@:>8}"',
                 "spec-field": 'f"{@!r:{8}}"', "two-fields": 'f"{@} / {@!r}"', "paren-fstring": '(f"{@}")',
                 "multiline": '(\n"head "\nf"{@!r}"\n" tail")', "paren-multiline": '(\n@\n)'}
# decoys: R in a larger expression (a call, a tuple, `or`, `+`, a field's larger
# expression), in a format spec's field or a nested f-string: R passed on
MESSAGES_PASSED = {"str": "str(@)", "tuple": "(@, 1)", "spec-of-other": 'f"{0:{@}}"', "spec-self": 'f"{@:{@}}"',
                   "or": '@ or "none"', "plus": 'f"{@}" + "x"', "nested-fstring": "f\"{f'{@}'}\"",
                   "list": "[@]", "call-field": 'f"{str(@)}"', "tuple-field": 'f"{@, 1}"',
                   "conditional": "@ if True else None", "kept-and-passed": 'f"{@} {repr(@)}"'}
# keyed reads written in a field of the message: reads like any other
MESSAGE_READS = ["subscript", "get", "in"]
# the assert's test: loading no R, a read form of R (where_expr), R itself (passed on)
MESSAGE_TESTS = ["none", "read", "bare"]
# where the message statements stand
MESSAGE_PLACES = ["name", "nested", "sequence", "sequence-compound", "sequence-only", "sequence-early",
                  "sequence-nested", "module", "await"]
RECEIVER_KINDS = ["producer-call", "builder-call", "direct-tool-call", "instance-call", "instance-name-call",
                  "name:producer-call", "name:builder-call", "name:direct-tool-call", "name:instance-call",
                  "name:instance-name-call",
                  # a name bound in sequence: the call its load sees
                  "seq:producer-call", "seq:builder-call", "seq:direct-tool-call", "seq:instance-call",
                  "seq:instance-name-call", "seq:await:producer-call"]
# constructs the corpus must hold (verify checks each is written at least once)
READ_DECOYS = (["reads-block-" + k for k in ("sequence", "where", "annotation-call", "annotated", "chained", "tuple", "walrus", "for", "aug",
                                             "deleted", "nested-def", "nested-lambda", "nested-comp",
                                             "nested-class", "comp-iter", "comp-second-iter")]
               + ["reads-sequence-" + k for k in (["in-sequence", "param", "await", "bindings-2", "bindings-3",
                                                   "bindings-4", "kept", "passed", "compound-read", "comp-iter",
                                                   "print", "spoiled", "default-read"]
                                                  + SEQUENCE_BREAKS + SEQUENCE_SPOILS + SEQUENCE_VALUES)]
               + ["reads-sequence-break-at-" + k for k in ("first", "later")]
               + ["reads-sequence-nested-annotation-" + k for k in ("param", "return", "variable")]
               + ["reads-where-annotation-" + k for k in WHERE_ANNOTATIONS + WHERE_VARIABLES
                                                  + ["async", "default-beside", "value-beside"]]
               + ["reads-annotation-call-" + k for k in ANNOTATION_CALL_PLACES + [
                   "module", "class", "awaited", "instance-name"]]
               + ["reads-annotation-holder-" + k for k in ANNOTATION_CALL_HOLDERS]
               + ["reads-module-annotation"]
               + ["reads-where-" + k for k in WHERE_IN_S + ["annotated", "in-s", "passed", "kept"]]
               + ["reads-where-expr-" + k for k in WHERE_EXPRS]
               + ["reads-decoy-" + k for k in ("key-not-moved", "parameter", "shadowed", "module-rebound",
                                                "dp-only-keyword")]
               + ["reads-await-" + k for k in ("name", "receiver", "bare", "operand-subscript")]
               + ["reads-decoy-await-" + k for k in ("twice", "annotated", "chained")]
               + ["reads-dead-" + k for k in ("star", "twice", "dotted", "tools", "bare", "instance")]
               + ["reads-dead-instance-" + k for k in ("undefined", "inherited", "twice", "annotated")]
               + ["reads-instance-classmethod", "reads-decoy-instance-chain"]
               + ["reads-handed-" + k for k in HANDED_KINDS]
               + ["reads-message-" + k for k in sorted(MESSAGES_KEPT) + sorted(MESSAGES_PASSED)]
               + ["reads-message-read-" + k for k in MESSAGE_READS]
               + ["reads-message-test-" + k for k in MESSAGE_TESTS]
               + ["reads-message-in-" + k for k in MESSAGE_PLACES]
               + ["reads-handed-on-" + k for k in ("statement", "name-passed", "base-replies.append")]
               + ["reads-sequence-base-reply"]
               + ["reads-target-tool-undecorated", "reads-module-receiver", "reads-producer-result-rebound",
                  "reads-method-classmethod-chain", "reads-method-self-chain", "reads-facade-chain",
                  "reads-producer-chain-name", "reads-producer-empty", "reads-producer-branches",
                  "reads-key-concatenated", "reads-key-parenthesized", "reads-key-u-prefix"]
               + ["reads-content-" + k for k in ("item", "list", "index", "item-target", "receiver-parenthesized",
                                                 "subscript-parenthesized", "key-not-moved")]
               + ["reads-decoy-content-" + k for k, _, _ in CONTENT_TARGETS]
               + ["reads-access-" + k for k in ("from_abs", "from_abs_alias", "import_as", "from_pkg_module",
                                                "from_rel", "from_dot_module", "reexport")])


def tag_of(rel, f):
    """The origin of a finding: its display (TS001 / TS002), its write
    statement (TS004: one statement a line in generated code) or its call (TS003)."""
    if f["code"] == "TS004":
        return ("w", rel, f["line"])
    return ("c" if f["code"] == "TS003" else "d", rel, (f["dict_line"], f["dict_column"]))


def module_of(p, rel):
    return rel[len(p.outrel) + 1:-3].replace("/", ".")


class Readers:
    """State of the readers of one program."""

    def __init__(self, p, pkg, has_init, reexports, builders, helpers):
        self.p = p
        self.rng = p.rng
        self.pkg = pkg
        self.has_init = has_init
        self.reexports = reexports
        sync = [b for b in builders + helpers if not b.is_async and b.method is None]
        self.kbuilders = [b for b in sync if b.family in ("K", "both")]
        self.dbuilders = [b for b in sync if b.dparams]
        self.probes = []      # (module rel, Producer, argument text) a consumer may call
        self.base = [(rel, prod, args) for rel, prod, args in p.base_producers]
        self.dispatchers = []  # (module rel, Producer) of the dispatchers, called with keywords chosen per call
        self.tool_dispatchers = {}  # NAME -> [dispatchers decorated as tools named NAME]
        # the producer methods `def`ined in the body of probes.py's class Station, as
        # (Producer, "self" / "cls"); None: no Station.  station_child: a subclass
        # StationChild (inheriting every method, defining none) is written too
        self.station = None
        self.station_child = False

    # -- what a producer / receiver may carry (before suppressions) --------

    def pool(self, prod, seen=None):
        seen = set() if seen is None else seen
        if id(prod) in seen:
            return set()
        seen.add(id(prod))
        tags = set(prod.tags)
        keys = {f["key"] for rel, f in self.p.findings if f["key"] is not None and tag_of(rel, f) in tags}
        for v in prod.via:
            keys |= self.pool(v, seen)
        return keys

    def recv_pool(self, recv):
        if recv is None:
            return set()
        keys = self.pool(Producer("", "", recv.tags, recv.via if recv.wide is None else recv.wide))
        for name in recv.tools:
            for prod in self.p.producers:
                if prod.decorated and prod.name == name:
                    keys |= self.pool(prod)
        return keys

    # -- builder calls -----------------------------------------------------

    def builder_call(self, rel, w, callee, b, keys=None):
        """Write a call of builder ``b`` (as ``callee``) with extras (``keys``,
        else chosen here); record its TS003 findings; return the Recv of the call."""
        p, rng = self.p, self.rng
        if keys is None:
            keys = rng.sample(READ_KEYS, rng.randint(1, 3))
        call_pos, _ = w.put(callee)
        w.put("(" + rng.choice(['"x"', "query", '"größe ✓"']))
        if b.family in ("K", "both"):
            for k in keys:
                w.put(", ")
                span = w.put("%s=%s" % (k, rng.choice(["1", "[1, 2]", "None", '"v"'])))
                if k not in b.params and k not in ALLOWED:
                    p.expect(rel, "TS003", "builder-call", k, None, b, call_pos, span, "reads-call-kw")
            if rng.random() < 0.15:
                w.put(", status=\"error\"")
            if rng.random() < 0.15:
                w.put(", ")
                span = w.put("**more")
                p.expect(rel, "TS003", "builder-call", None, "more", b, call_pos, span, "reads-call-mapping")
        elif rng.random() < 0.3:
            # a builder by a dict parameter only: an extra keyword is no finding
            w.put(", %s=1" % rng.choice(READ_KEYS))
            p.forms["reads-decoy-dp-only-keyword"] += 1
        if b.dparams and (b.family != "K") and (b.family == "dp" or rng.random() < 0.5):
            P = rng.choice(sorted(b.dparams))
            entries = [("key", k, rng.choice(["1", "[1]", "query"]), rng.random() < 0.1) for k in keys]
            if rng.random() < 0.2:
                entries.append(("key", "status", '"x"', False))
            if rng.random() < 0.2:
                entries.append(("spread", "more"))
            if rng.random() < 0.1:
                entries.append(("dynkey", "name", "0"))
            rng.shuffle(entries)
            w.put(", %s=" % P)
            for kind, key, expr, span in write_dp_value(p, rel, w, ("display", entries, rng.random() < 0.1)):
                p.expect(rel, "TS003", "builder-call", key, expr, b, call_pos, span, "dparam-reads-" + kind)
        w.put(")")
        return Recv("builder-call", [("c", rel, call_pos)], [b.producer])

    # -- probes.py ---------------------------------------------------------

    def display_return(self, rel, w, ind, prod, extras=None):
        p, rng = self.p, self.rng
        if extras is None:
            extras = rng.sample(READ_KEYS, rng.randint(1, 3))
        entries = [("key", k, rng.choice(["[]", "1", "query", '"ok"']), rng.random() < 0.1) for k in extras]
        if rng.random() < 0.12:
            entries.append(("spread", rng.choice(["defaults()", "base"])))
        w.put(ind + "return ")
        brace, _ = p.display(rel, w, p.shaped_entries("query", entries))
        w.end(p.maybe_comment(0.12))
        prod.tags.append(("d", rel, brace))

    def producer_body(self, rel, w, ind, prod, kind, made, receiver=None):
        """The body of producer ``prod`` of ``kind``; returns the kind written."""
        p, rng = self.p, self.rng
        if kind == "literal":
            self.display_return(rel, w, ind, prod)
        elif kind == "branches":
            w.lineof(ind + "if query:")
            self.display_return(rel, w, ind + "    ", prod)
            self.display_return(rel, w, ind, prod)
        elif kind == "empty":
            self.display_return(rel, w, ind, prod, extras=[])
        elif kind == "result":
            N = p.fresh("r")
            start = len(p.findings)
            w.put(ind + N + " = ")
            extra = [("key", rng.choice(READ_KEYS), "1", False)] if rng.random() < 0.3 else []
            brace, _ = p.display(rel, w, p.shaped_entries("query", extra))
            w.end(p.maybe_comment(0.1))
            for form in rng.sample(KEYED_WRITES, rng.randint(1, 3)):
                write_one(p, rel, w, ind, N, brace, form)
            if rng.random() < 0.15:
                # a second binding: its display and writes count too (case 2)
                w.put(ind + N + " = ")
                brace2, _ = p.display(rel, w, p.shaped_entries("query"))
                w.end()
                write_one(p, rel, w, ind, N, brace2, rng.choice(["sub_key", "update_kw"]))
                p.forms["reads-producer-result-rebound"] += 1
            w.lineof(ind + "return " + N)
            prod.tags.append(("d", rel, brace))
            prod.tags.extend(tag_of(r, f) for r, f in p.findings[start:])
        elif kind == "builder":
            b = rng.choice(self.kbuilders + self.dbuilders)
            w.put(ind + "return ")
            recv = self.builder_call(rel, w, b.name, b)
            w.end(p.maybe_comment(0.12))
            prod.tags.extend(recv.tags)
            prod.via.extend(recv.via)
            kind = "builder-" + ("chain" if b.producer is not None else b.family)
        elif kind == "chain":
            g = rng.choice(made)
            callee = (receiver + "." if g[2] else "") + g[0].name
            w.lineof(ind + "return %s(query)" % callee)
            prod.via.append(g[0])
            kind = "chain-" + ("self" if g[2] else "name")
        return kind

    def write_probes(self):
        p, rng = self.p, self.rng
        rel = "%s/%s/probes.py" % (p.outrel, self.pkg)
        w = W()
        p.modules[rel] = w
        w.lineof('"""Device probes: tool results."""')
        w.lineof("import functools")
        w.lineof("import strands")
        w.lineof("from strands import tool")
        imported = set()
        for b in self.kbuilders + self.dbuilders:
            if b.name not in imported:
                imported.add(b.name)
                w.lineof("from .%s import %s" % (b.rel.rsplit("/", 1)[1][:-3], b.name))
        w.end()
        w.end()
        made = []  # (Producer, args, is a method)
        kinds = ["literal", "literal", "branches", "result", "result", "empty"]
        if self.kbuilders or self.dbuilders:
            kinds += ["builder", "builder"]
        for name in rng.sample(PROBE_NAMES, rng.randint(3, 6)):
            kind = rng.choice(kinds + (["chain"] if made else []))
            dec, is_tool = rng.choice(DECORATORS)
            decs = put_decorators(p, rel, w, "", listed_decorator(dec, is_tool))
            w.lineof("def %s(query):" % name)
            prod = p.producer(name, rel, decorated=is_tool)
            prod.decorators = decs
            kind = self.producer_body(rel, w, "    ", prod, kind, made)
            p.forms["reads-producer-" + kind] += 1
            p.forms["reads-decorator-" + (dec or "none")] += 1
            made.append((prod, '("q")', False))
            self.probes.append((rel, prod, '("q")'))
            w.end()
            w.end()
        if rng.random() < 0.7:
            self.write_station(rel, w, made)
        self.probes_rel = rel
        return rel

    def write_station(self, rel, w, made):
        """A class with producer methods, chains through self / cls and a
        method reading results through self."""
        p, rng = self.p, self.rng
        w.lineof("class Station:")
        methods = []
        for name in rng.sample(METHOD_NAMES + [m[0].name for m in made], rng.randint(1, 3)):
            if any(m.name == name for m, _ in methods):
                continue
            dec, is_tool = rng.choice(DECORATORS)
            decs = put_decorators(p, rel, w, "    ", listed_decorator(dec, is_tool))
            w.lineof("    def %s(self, query):" % name)
            prod = p.producer(name, rel, decorated=is_tool)
            prod.decorators = decs
            kind = self.producer_body(rel, w, "        ", prod, rng.choice(["literal", "result", "builder"]
                                                                           if self.kbuilders else
                                                                           ["literal", "result"]), [])
            p.forms["reads-method-" + kind] += 1
            methods.append((prod, "self"))
            w.end()
        made_cls = []  # make(), defined in the body too (build() reaches it through cls)
        if rng.random() < 0.6:
            decs = put_decorators(p, rel, w, "    ", [("classmethod", True, "classmethod")])
            w.lineof("    def make(cls, query):")
            prod = p.producer("make", rel)
            prod.decorators = decs
            self.display_return(rel, w, "        ", prod)
            made_cls.append((prod, "cls"))
            w.end()
            decs = put_decorators(p, rel, w, "    ", [("classmethod", True, "classmethod")])
            w.lineof("    def build(cls, query):")
            w.lineof("        return cls.make(query)")
            methods.append((p.producer("build", rel, via=[prod]), "cls"))
            methods[-1][0].decorators = decs
            p.forms["reads-method-classmethod-chain"] += 1
            w.end()
        w.lineof("    def relay(self, query):")
        target = rng.choice([m for m in methods if m[1] == "self"] or methods)
        w.lineof("        return %s.%s(query)" % ("self", target[0].name))
        relay = p.producer("relay", rel, via=[target[0]])
        methods.append((relay, "self"))
        # every producer `def`ined in the body: what a call on an instance reaches
        self.station = methods + made_cls
        p.forms["reads-method-self-chain"] += 1
        w.end()
        # a consumer in the class: receivers through self
        w.lineof("    def check(self, agent):")
        targets = [Target("producer", "self." + m.name, '("q")', m) for m, how in methods if how == "self"]
        c = Consumer(self, rel, w, targets)
        for _ in range(rng.randint(1, 3)):
            c.block("        ")
        w.lineof("        return None")
        w.end()
        w.end()
        if rng.random() < 0.5:
            # a subclass: its methods are inherited, so a call on its instance resolves nothing
            w.lineof("class StationChild(Station):")
            w.lineof('    """Every method inherited."""')
            w.end()
            w.end()
            self.station_child = True

    # -- dispatch.py -------------------------------------------------------

    def write_dispatch(self, rel, alt=False):
        """A module of dispatchers (see "dispatchers" below); with ``alt``
        often tools named as tools written before."""
        p, rng = self.p, self.rng
        w = W()
        p.modules[rel] = w
        w.lineof('"""Tools dispatching on a constant action."""')
        w.lineof("import functools")
        w.lineof("import strands")
        w.lineof("from strands import tool")
        bound = {"functools", "strands", "tool", "query", "action", "verb", "mode", "kwargs", "opts", "note",
                 "fh", "_", "_normalize"} | set(DISPATCH_NAMES)
        imported = set()
        for b in self.kbuilders + self.dbuilders:
            if b.name not in imported:
                imported.add(b.name)
                bound.add(b.name)
                w.lineof("from .%s import %s" % (b.rel.rsplit("/", 1)[1][:-3], b.name))
        chains = []
        for rel_t, prod, args in rng.sample(self.probes, min(len(self.probes), rng.randint(0, 3))):
            chains.append((access(self, rel_t, prod.name, bound, True, w), prod))
        w.end()
        w.end()
        dw = DispatchWriter(self, rel, w, chains)
        names = rng.sample(DISPATCH_NAMES, rng.randint(1, 3))
        same = []
        if alt and self.tool_dispatchers:
            same = rng.sample(sorted(self.tool_dispatchers), min(len(self.tool_dispatchers), rng.randint(1, 2)))
            names = same + [n for n in names if n not in same][:1]
        for name in names:
            if name in same:
                p.forms["reads-dispatch-same-name-tools"] += 1
            dw.dispatcher(name, tool=name in same)
        return rel

    def dispatch_args(self, prod, keyword=False):
        return dispatch_args(self, prod, keyword)

    def note_narrowing(self, prod, via):
        self.p.forms["reads-dispatch-" + ("not-narrowed" if via == [prod] else "narrowed" if via
                                          else "narrowed-empty")] += 1

    # -- facade.py ---------------------------------------------------------

    def write_facade(self):
        p, rng = self.p, self.rng
        rel = "%s/%s/facade.py" % (p.outrel, self.pkg)
        w = W()
        p.modules[rel] = w
        w.lineof('"""Tools built on the probes."""')
        w.lineof("from strands import tool")
        bound = set()
        targets = []
        choices = [t for t in self.probes] + [t for t in self.base]
        for rel_t, prod, args in rng.sample(choices, min(len(choices), rng.randint(2, 5))):
            a = access(self, rel_t, prod.name, bound, relative=True, w=w)
            targets.append((a, prod, args))
        # a function returning a call on an instance: no chain (case 4 resolves
        # calls as before; calls on an instance are receivers only), no producer
        on_instance = self.station is not None and rng.random() < 0.5
        if on_instance:
            cls = access(self, self.probes_rel, "Station", bound, relative=True, w=w)
        w.end()
        w.end()
        for a, prod, args in targets:
            dec, is_tool = rng.choice(DECORATORS)
            # often the name of the tool it wraps: a direct tool call reaches both
            name = prod.name if (is_tool and rng.random() < 0.4 and prod.name not in bound) else p.fresh("via")
            bound.add(name)
            decs = put_decorators(p, rel, w, "", listed_decorator(dec, is_tool))
            w.lineof("def %s(query):" % name)
            w.lineof("    return %s%s" % (a, args.replace('"q"', "query")))
            fprod = p.producer(name, rel, via=[prod], decorated=is_tool)
            fprod.decorators = decs
            self.probes.append((rel, fprod, '("q")'))
            p.forms["reads-facade-chain"] += 1
            w.end()
            w.end()
        if on_instance:
            m, _ = rng.choice(self.station)
            name = p.fresh("via_station")
            w.lineof("def %s(query):" % name)
            w.lineof("    return %s().%s(query)" % (cls, m.name))
            self.probes.append((rel, p.producer(name, rel), '("q")'))
            p.forms["reads-decoy-instance-chain"] += 1
            w.end()
            w.end()
        return rel


# --------------------------------------------------------------------------
# dispatchers (--with-readers): tools selecting what they return by a
# constant keyword (docs/rules.md "**Dispatch by a constant.**")
#
# Sometimes a program gets `PKG/dispatch.py`, and then sometimes
# `PKG/dispatch_alt.py` whose dispatchers may be tools of the same names (a
# direct tool call reaches each, narrowed by its own parameters).  A
# dispatcher `def NAME(action, query="q", mode="fast", **kwargs)` (its
# dispatch parameter also `verb`, keyword-only or positional-only; as
# decoys rebound by `P = ...`, `P += ...` or a nested `nonlocal P`, or the
# name of its `*args` / `**kwargs`) selects its returns by tests of `P`,
# `mode` and `query` against constants: `if P == C: return ...` in the body
# (the returns after it cannot run when P == C), `if` / `elif` / `else`
# chains (an `else:` holding an `if` among them), an `if` that raises, one
# whose body does not end in a return, an `if` nested in a loop, `with`,
# `try` or another `if` (no exclusion after it), two tests nested, tests
# written `C == P` and parenthesized, constants in every spelling, and decoy
# tests that are none (`!=`, `or`, `and`, `in`, `not`, a chained comparison,
# a method call, a non-string constant, two names).  What each return gives
# is a display, a builder call, a result name with a write, a chain onto a
# probe or onto another dispatcher called with a constant keyword (chains
# are followed whole), or nothing.  Consumers call the dispatchers, by name
# and as direct tool calls, with keywords chosen at each call: constants
# (known to its tests or not, in every spelling, one, two or three of them,
# next to `**opts` or a keyword no parameter takes) and, not narrowing, a
# positional argument, no argument, a name, an f-string, `"a" + "b"`, bytes.
# The generator records the constraints of each return as it writes it
# (("ne", P, C): not when P is another constant; ("eq", P, C): not when
# P == C) and narrows each call by them (``narrowed``).

DISPATCH_NAMES = ["adb", "device_action", "run_action", "fastboot", "emulator_ctl"]
DISPATCH_CONSTS = ["list", "shell", "is_locked", "reboot", "get_prop", "größe", "pull files", "wipe"]
MODE_CONSTS = ["fast", "slow", "raw"]
DISPATCH_SIGS = ["plain", "plain", "plain", "kwonly", "posonly", "rebound", "rebound-aug", "nonlocal",
                 "kwargs-name", "args-name"]
DISPATCH_DECORATORS = [("@tool", True), ("@strands.tool", True), ('@tool(name="dispatch")', True),
                       ("@strands.tools.tool()", True), (None, False), ("@functools.cache", False)]
DISPATCH_BLOCKS = ["if-return", "if-return", "if-raise", "if-fallthrough", "elif-chain", "elif-chain",
                   "nested-depth", "nested-dispatch", "decoy-test", "query-test"]
DISPATCH_WRAPPERS = ["for", "if-query", "while", "with", "try"]
DISPATCH_RETURNS = ["display", "display", "display", "builder", "chain", "chain-dispatch", "none", "result"]
DISPATCH_CALLS = ["kw", "kw", "kw", "kw", "kw-unknown", "kw2", "kw-query", "kw-all", "positional", "none",
                  "name", "fstring", "binop", "bytes", "star", "extra"]
DISPATCH_TESTS = ["forward", "forward", "reversed", "parenthesized", "parenthesized-name", "parenthesized-const"]
# tests that are none: no constraint on the returns in their bodies or after them
DISPATCH_DECOY_TESTS = [("not-equal", "{P} != {C}"), ("or", "{P} == {C} or query"), ("and", "{P} == {C} and query"),
                        ("in", "{P} in ({C},)"), ("not", "not {P} == {C}"), ("chained", "{P} == {C} == query"),
                        ("method", "{P}.startswith({C})"), ("int", "{P} == 1"), ("none", "{P} == None"),
                        ("bytes", '{P} == b"list"'), ("names", "query == {P}")]
DISPATCH_CONSTRUCTS = (["reads-dispatch-sig-" + k for k in sorted(set(DISPATCH_SIGS))]
                       + ["reads-dispatch-block-" + k for k in sorted(set(DISPATCH_BLOCKS))]
                       + ["reads-dispatch-wrapper-" + k for k in DISPATCH_WRAPPERS]
                       + ["reads-dispatch-return-" + k for k in sorted(set(DISPATCH_RETURNS))]
                       + ["reads-dispatch-call-" + k for k in sorted(set(DISPATCH_CALLS))]
                       + ["reads-dispatch-test-" + k for k in sorted(set(DISPATCH_TESTS))]
                       + ["reads-dispatch-decoy-test-" + k for k, _ in DISPATCH_DECOY_TESTS]
                       + ["reads-dispatch-spelled-" + k for k in ("concatenated", "u-prefix", "parenthesized",
                                                                  "escape", "single")]
                       + ["reads-dispatch-" + k for k in ("else", "else-if", "elif-decoy", "narrowed",
                                                          "narrowed-empty", "not-narrowed", "same-name-tools",
                                                          "tool-call", "tail-return", "tail-raise", "tail-none",
                                                          "after-nested-if", "handler-return")])


class Dispatch:
    """What the generator knows of a dispatcher: ``P`` its dispatch
    parameter, ``dparams`` the parameters a constant keyword narrows it by,
    ``consts`` the constants its tests use ({name: [C]}), ``returns`` its
    returns as [(Producer of what the return gives, [(op, name, C)])]."""

    def __init__(self, P, dparams, consts):
        self.P = P
        self.dparams = set(dparams)
        self.consts = consts
        self.returns = []


def narrowed(prod, ckws):
    """What a call of ``prod`` with the constant keywords ``ckws`` ({P: C})
    reaches: [prod], or for a dispatcher with keywords among its dispatch
    parameters the Producers of the returns no constraint rules out."""
    d = prod.dispatch
    if d is None:
        return [prod]
    kws = {P: C for P, C in ckws.items() if P in d.dparams}
    if not kws:
        return [prod]
    out = []
    for sub, cons in d.returns:
        if any(P in kws and ((kws[P] != C) if op == "ne" else (kws[P] == C)) for op, P, C in cons):
            continue
        out.append(sub)
    return out


def spell_const(p, C):
    """A string literal of value ``C``, in some spelling."""
    rng = p.rng
    r = rng.random()
    if r < 0.5:
        return json.dumps(C, ensure_ascii=False)
    if r < 0.62:
        p.forms["reads-dispatch-spelled-single"] += 1
        return "'%s'" % C
    if r < 0.74 and len(C) > 1:
        i = rng.randint(1, len(C) - 1)
        p.forms["reads-dispatch-spelled-concatenated"] += 1
        return '"%s" "%s"' % (C[:i], C[i:])
    if r < 0.84:
        p.forms["reads-dispatch-spelled-u-prefix"] += 1
        return 'u"%s"' % C
    if r < 0.92:
        p.forms["reads-dispatch-spelled-parenthesized"] += 1
        return "(%s)" % json.dumps(C, ensure_ascii=False)
    p.forms["reads-dispatch-spelled-escape"] += 1
    c = C[0]
    return '"%s%s"' % ("\\x%02x" % ord(c) if ord(c) < 256 else "\\u%04x" % ord(c), C[1:])


class ModuleWriter:
    """Writes into one module `rel` (its writer `w`) for the readers `rd`."""

    def __init__(self, rd, rel, w):
        self.rd = rd
        self.p = rd.p
        self.rng = rd.rng
        self.rel = rel
        self.w = w


class DispatchWriter(ModuleWriter):
    """Writes the dispatchers of one module (see above)."""

    def __init__(self, rd, rel, w, chains):
        super().__init__(rd, rel, w)
        self.chains = chains  # (callee, Producer) of the probes it may chain onto
        self.made = []        # the dispatchers of this module so far

    def test(self, P, C):
        """A dispatch test ``P == C`` in some form."""
        form = self.rng.choice(DISPATCH_TESTS)
        self.p.forms["reads-dispatch-test-" + form] += 1
        c = spell_const(self.p, C)
        return {"forward": "%s == %s", "reversed": "%s == %s", "parenthesized": "(%s == %s)",
                "parenthesized-name": "(%s) == %s", "parenthesized-const": "%s == (%s)"}[form] % (
                    (c, P) if form == "reversed" else (P, c))

    def decoy_test(self, P, C):
        label, text = self.rng.choice(DISPATCH_DECOY_TESTS)
        self.p.forms["reads-dispatch-decoy-test-" + label] += 1
        return text.format(P=P, C=spell_const(self.p, C))

    def name(self, d):
        """The parameter a block tests: mostly the dispatch parameter."""
        r = self.rng.random()
        return d.P if r < 0.75 else "mode" if r < 0.92 else "query"

    def ret(self, ind, d, cons):
        """One return statement; records what it gives and its constraints."""
        p, rng, w, rd = self.p, self.rng, self.w, self.rd
        kind = rng.choice(DISPATCH_RETURNS)
        if kind == "builder" and not (rd.kbuilders or rd.dbuilders):
            kind = "display"
        if kind == "chain" and not self.chains:
            kind = "display"
        if kind == "chain-dispatch" and not self.made:
            kind = "display"
        p.forms["reads-dispatch-return-" + kind] += 1
        sub = Producer("", self.rel)
        if kind == "builder":
            b = rng.choice(rd.kbuilders + rd.dbuilders)
            w.put(ind + "return ")
            recv = rd.builder_call(self.rel, w, b.name, b)
            w.end(p.maybe_comment(0.1))
            sub.tags.extend(recv.tags)
            sub.via.extend(recv.via)
        elif kind == "chain":
            callee, g = rng.choice(self.chains)
            w.lineof(ind + "return %s(query)" % callee)
            sub.via.append(g)
        elif kind == "chain-dispatch":
            # a chain followed whole, whatever the constant keyword it passes
            g = rng.choice(self.made)
            args, _ = rd.dispatch_args(g, keyword=True)
            w.lineof(ind + "return %s%s" % (g.name, args))
            sub.via.append(g)
        elif kind == "none":
            w.lineof(ind + rng.choice(["return", "return None"]))
        elif kind == "result":
            N = p.fresh("r")
            start = len(p.findings)
            w.put(ind + N + " = ")
            brace, _ = p.display(self.rel, w, p.shaped_entries("query"))
            w.end()
            write_one(p, self.rel, w, ind, N, brace, rng.choice(["sub_key", "update_kw"]))
            w.lineof(ind + "return " + N)
            sub.tags.append(("d", self.rel, brace))
            sub.tags.extend(tag_of(r, f) for r, f in p.findings[start:])
        else:
            rd.display_return(self.rel, w, ind, sub)
        d.returns.append((sub, list(cons)))

    def block(self, d, kind, after):
        """One statement of the dispatcher's body; ``after`` gains the
        constraints of the returns after it."""
        p, rng, w = self.p, self.rng, self.w
        p.forms["reads-dispatch-block-" + kind] += 1
        ind, ind2, ind3 = "    ", "        ", "            "
        base = list(after)
        P = "query" if kind == "query-test" else self.name(d)
        C = rng.choice(d.consts[P])
        if kind in ("if-return", "query-test"):
            w.lineof(ind + "if %s:" % self.test(P, C))
            if rng.random() < 0.3:
                w.lineof(ind2 + "note = len(query)")
            self.ret(ind2, d, base + [("ne", P, C)])
            after.append(("eq", P, C))
        elif kind == "if-raise":
            w.lineof(ind + "if %s:" % self.test(P, C))
            w.lineof(ind2 + "raise ValueError(query)")
            after.append(("eq", P, C))
        elif kind == "if-fallthrough":
            # the body does not end in a return: nothing after it is ruled out
            w.lineof(ind + "if %s:" % self.test(P, C))
            w.lineof(ind2 + "if query:")
            self.ret(ind3, d, base + [("ne", P, C)])
            w.lineof(ind2 + "note = 1")
        elif kind == "elif-chain":
            pool = d.consts[P] + [c for c in DISPATCH_CONSTS if c not in d.consts[P]][:2]
            Cs = rng.sample(pool, min(len(pool), rng.randint(2, 4)))
            else_if = rng.random() < 0.25
            prior = []
            for i, Ci in enumerate(Cs):
                if i and rng.random() < 0.15:
                    test, body, nxt = self.decoy_test(P, Ci), [], []
                    p.forms["reads-dispatch-elif-decoy"] += 1
                else:
                    test, body, nxt = self.test(P, Ci), [("ne", P, Ci)], [("eq", P, Ci)]
                if i == 0:
                    w.lineof(ind + "if %s:" % test)
                    at = ind2
                elif else_if and i == len(Cs) - 1:
                    # `else:` holding an `if`: in the else clause, and an if's body
                    w.lineof(ind + "else:")
                    w.lineof(ind2 + "if %s:" % test)
                    at = ind3
                    p.forms["reads-dispatch-else-if"] += 1
                else:
                    w.lineof(ind + "elif %s:" % test)
                    at = ind2
                self.ret(at, d, base + prior + body)
                if i == 0:
                    after.extend(nxt)  # the first `if` stands in the body and its body returns
                if not (else_if and i == len(Cs) - 1):
                    prior = prior + nxt
            if else_if:
                if rng.random() < 0.6:
                    # after the nested if, in the else clause: not after an if of the body
                    self.ret(ind2, d, base + prior)
                    p.forms["reads-dispatch-after-nested-if"] += 1
            elif rng.random() < 0.6:
                w.lineof(ind + "else:")
                self.ret(ind2, d, base + prior)
                p.forms["reads-dispatch-else"] += 1
        elif kind == "nested-depth":
            wrapper = rng.choice(DISPATCH_WRAPPERS)
            p.forms["reads-dispatch-wrapper-" + wrapper] += 1
            w.lineof(ind + {"for": "for _ in range(1):", "if-query": "if query:", "while": "while query:",
                            "with": "with open(query) as fh:", "try": "try:"}[wrapper])
            w.lineof(ind2 + "if %s:" % self.test(P, C))
            self.ret(ind3, d, base + [("ne", P, C)])
            if rng.random() < 0.5:
                # after an if that is not in the body itself: not ruled out
                self.ret(ind2, d, base)
                p.forms["reads-dispatch-after-nested-if"] += 1
            if wrapper == "try":
                w.lineof(ind + "except ValueError:")
                if rng.random() < 0.5:
                    self.ret(ind2, d, base)
                    p.forms["reads-dispatch-handler-return"] += 1
                else:
                    w.lineof(ind2 + "pass")
        elif kind == "nested-dispatch":
            Q = rng.choice([n for n in (d.P, "mode", "query") if n != P])
            M = rng.choice(d.consts[Q])
            w.lineof(ind + "if %s:" % self.test(P, C))
            w.lineof(ind2 + "if %s:" % self.test(Q, M))
            self.ret(ind3, d, base + [("ne", P, C), ("ne", Q, M)])
            self.ret(ind2, d, base + [("ne", P, C)])
            after.append(("eq", P, C))
        else:  # decoy-test
            w.lineof(ind + "if %s:" % self.decoy_test(P, C))
            self.ret(ind2, d, base)

    def dispatcher(self, name, tool=False):
        p, rng, w, rd = self.p, self.rng, self.w, self.rd
        dec, is_tool = ("@tool", True) if tool else rng.choice(DISPATCH_DECORATORS)
        P = rng.choice(["action", "action", "action", "verb"])
        sig = rng.choice(DISPATCH_SIGS)
        p.forms["reads-dispatch-sig-" + sig] += 1
        head = {"kwonly": 'query="q", *, %s="list", mode="fast"',
                "posonly": '%s, /, query="q", mode="fast", **kwargs',
                "kwargs-name": 'query="q", mode="fast", **%s',
                "args-name": '*%s, query="q", mode="fast"'}.get(sig, '%s, query="q", mode="fast", **kwargs') % P
        # the parameters bound only as parameters: a constant keyword narrows by them
        dparams = {"query", "mode"} | ({P} if sig in ("plain", "kwonly", "posonly") else set())
        consts = {P: rng.sample(DISPATCH_CONSTS, rng.randint(2, 4)), "mode": rng.sample(MODE_CONSTS, 2),
                  "query": ["q", rng.choice(["all", "none"])]}
        d = Dispatch(P, dparams, consts)
        decs = put_decorators(p, self.rel, w, "", listed_decorator(dec, is_tool))
        w.lineof("def %s(%s):" % (name, head))
        prod = p.producer(name, self.rel, decorated=is_tool)
        prod.decorators = decs
        if sig == "rebound":
            w.lineof("    %s = %s.strip()" % (P, P))
        elif sig == "rebound-aug":
            w.lineof('    %s += ""' % P)
        elif sig == "nonlocal":
            w.lineof("    def _normalize():")
            w.lineof("        nonlocal %s" % P)
            w.lineof("        %s = %s.lower()" % (P, P))
            w.lineof("    _normalize()")
        after = []
        for _ in range(rng.randint(1, 4)):
            self.block(d, rng.choice(DISPATCH_BLOCKS), after)
        tail = rng.choice(["return", "return", "return", "raise", "none"])
        p.forms["reads-dispatch-tail-" + tail] += 1
        if tail == "return":
            self.ret("    ", d, after)
        elif tail == "raise":
            w.lineof("    raise ValueError(query)")
        else:
            w.lineof("    note = None")
        prod.tags = [t for sub, _ in d.returns for t in sub.tags]
        prod.via = [v for sub, _ in d.returns for v in sub.via]
        prod.dispatch = d
        if is_tool:
            rd.tool_dispatchers.setdefault(name, []).append(prod)
        rd.dispatchers.append((self.rel, prod))
        self.made.append(prod)
        w.end()
        w.end()
        return prod


def dispatch_args(rd, prod, keyword=False):
    """The arguments of a call of dispatcher ``prod`` (text with the
    parentheses) and its constant keywords {P: C}."""
    p, rng = rd.p, rd.rng
    d = prod.dispatch
    P = d.P
    kind = rng.choice(["kw", "kw2", "kw-query"] if keyword else DISPATCH_CALLS)
    p.forms["reads-dispatch-call-" + kind] += 1
    parts = []
    ckws = {}

    def kw(name, C):
        parts.append("%s=%s" % (name, spell_const(p, C)))
        ckws[name] = C

    known = rng.choice(d.consts[P])
    if kind in ("kw", "star", "extra"):
        kw(P, known)
    elif kind == "kw-unknown":
        kw(P, rng.choice([c for c in DISPATCH_CONSTS if c not in d.consts[P]]))
    elif kind == "kw2":
        kw(P, known)
        kw("mode", rng.choice(d.consts["mode"] + ["raw"]))
        rng.shuffle(parts)
    elif kind == "kw-query":
        kw("query", rng.choice(d.consts["query"] + ["q"]))
    elif kind == "kw-all":
        kw(P, known if rng.random() < 0.8 else rng.choice(DISPATCH_CONSTS))
        kw("mode", rng.choice(d.consts["mode"]))
        kw("query", rng.choice(d.consts["query"]))
        rng.shuffle(parts)
    elif kind == "positional":
        parts.append(spell_const(p, known))
    elif kind == "name":
        parts.append("%s=query" % P)
    elif kind == "fstring":
        parts.append('%s=f"%s"' % (P, known))
    elif kind == "binop":
        parts.append('%s="%s" + "%s"' % (P, known[:1], known[1:]))
    elif kind == "bytes":
        parts.append('%s=b"%s"' % (P, rng.choice([c for c in d.consts[P] if c.isascii()] or ["list"])))
    if kind == "star":
        parts.append("**opts")
    elif kind == "extra":
        kw("serial", "emulator-5554")
    return "(" + ", ".join(parts) + ")", ckws



def access(rd, rel_t, name, bound, relative, w):
    """Write an import of ``name`` of module ``rel_t``; return the callee text."""
    rng = rd.rng
    p = rd.p
    mod = module_of(p, rel_t)
    base = mod.rsplit(".", 1)[1]

    def unique(n):
        m = n
        i = 2
        while m in bound:
            m = "%s_%d" % (n, i)
            i += 1
        bound.add(m)
        return m

    forms = ["from_abs", "from_abs_alias", "import_as", "from_pkg_module"]
    if relative and mod.startswith(rd.pkg + "."):
        forms += ["from_rel", "from_dot_module"]
    if rd.has_init and name in rd.reexports:
        forms.append("reexport")
    form = rng.choice(forms)
    p.forms["reads-access-" + form] += 1
    if form == "from_abs":
        local = unique(name)
        w.lineof("from %s import %s" % (mod, name if local == name else name + " as " + local))
        return local
    if form == "from_abs_alias":
        local = unique("the_" + name.strip("_"))
        w.lineof("from %s import %s as %s" % (mod, name, local))
        return local
    if form == "import_as":
        local = unique("m_" + base)
        w.lineof("import %s as %s" % (mod, local))
        return local + "." + name
    if form == "from_pkg_module":
        local = unique(base)
        pkg_part, _, last = mod.rpartition(".")
        w.lineof("from %s import %s" % (pkg_part, last if local == last else last + " as " + local))
        return local + "." + name
    if form == "from_rel":
        local = unique(name)
        w.lineof("from .%s import %s" % (base, name if local == name else name + " as " + local))
        return local
    if form == "from_dot_module":
        local = unique("rel_" + base)
        w.lineof("from . import %s as %s" % (base, local))
        return local + "." + name
    local = unique(name)
    w.lineof("from %s import %s" % (rd.pkg, name if local == name else name + " as " + local))
    return local


class Target:
    """Something a consumer calls: ("producer", callee, args, Producer),
    ("builder", callee, None, Builder), ("tool", prefix, args, NAME),
    ("instance", callee, args, Producer) (a call on an instance of a class
    whose body defines the method Producer: docs/rules.md "**Calls on an
    instance**"; its label the receiver kind) or ("dead", callee, args, None)
    (no receiver: unresolvable).  With ``instance`` (the callee text of the
    class) the callee is a method name, called on a name bound to an
    instance first (Consumer.bind)."""

    def __init__(self, kind, callee, args, what, label=None, ckws=None, instance=None):
        self.kind = kind
        self.callee = callee
        self.args = args  # None: a dispatcher's, chosen at each call (Readers.dispatch_args)
        self.what = what
        self.label = label or kind
        self.ckws = ckws or {}
        self.instance = instance


class Consumer(ModuleWriter):
    """Writes reads of results into one module."""

    def __init__(self, rd, rel, w, targets):
        super().__init__(rd, rel, w)
        self.targets = targets
        # the call last written by put_call / put_awaited: (start, end, Recv)
        self.last_h = None

    # -- receivers -----------------------------------------------------

    def put_call(self, t, keys=None):
        """Write a call of target ``t`` at the current position; its Recv.
        ``self.last_h`` becomes (start, end, Recv) of the call written (the
        ``H`` of docs/rules.md "**Results handed on.**")."""
        start = self.w.put("")[0]
        r = self._put_call(t, keys)
        self.last_h = (start, self.w.put("")[0], r)
        return r

    def hand_on(self, h):
        """The result of the call ``h`` (a ``last_h``) is handed on: one read of
        form escape of every origin its Recv reaches (none for no receiver)."""
        if h is None or h[2] is None:
            return
        self.p.reads.append((self.rel, h[2], "escape", None, (h[0], h[1])))
        self.p.forms["reads-handed-on"] += 1

    def _put_call(self, t, keys=None):
        w = self.w
        if t.kind == "builder":
            return self.rd.builder_call(self.rel, w, t.callee, t.what, keys)
        if t.args is None:
            # a dispatcher (or a tool named as one): its keywords chosen here
            spec = t.what if t.kind == "producer" else self.rd.tool_dispatchers[t.what][0]
            args, ckws = self.rd.dispatch_args(spec)
            w.put(t.callee + args)
            if t.kind == "producer":
                via = narrowed(t.what, ckws)
                self.rd.note_narrowing(t.what, via)
                return Recv("producer-call", via=via, wide=[t.what])
            self.p.forms["reads-dispatch-tool-call"] += 1
            return Recv("direct-tool-call", tools=[t.what], ckws=ckws)
        assert t.instance is None, "a call on an instance name, not bound yet (Consumer.bind)"
        w.put(t.callee + t.args)
        if t.kind == "producer":
            return Recv("producer-call", via=[t.what])
        if t.kind == "instance":
            # narrowed by dispatch like any receiver call (the methods have no dispatch)
            return Recv(t.label, via=narrowed(t.what, t.ckws))
        if t.kind == "tool":
            return Recv("direct-tool-call", tools=[t.what], ckws=t.ckws)
        return NO_RECV

    def bind(self, ind, t):
        """Target ``t`` ready to be called in the scope at indent ``ind``: for
        a call on an instance name, ``ST = K()`` written there first, ``ST``
        fresh (a plain one-target assignment, its one binding), or as decoys
        (no receiver) bound twice or annotated."""
        if t.instance is None:
            return t
        p, rng, w = self.p, self.rng, self.w
        ST = p.fresh("st")
        decoy = rng.choice(["twice", "annotated"]) if rng.random() < 0.25 else None
        w.lineof(ind + "%s%s = %s()" % (ST, ": " + t.instance if decoy == "annotated" else "", t.instance))
        if decoy == "twice":
            w.lineof(ind + "%s = make_other()" % ST)
        if decoy is not None:
            p.forms["reads-dead-instance-" + decoy] += 1
            return Target("dead", ST + "." + t.callee, t.args, None, "dead-instance-" + decoy)
        return Target(t.kind, ST + "." + t.callee, t.args, t.what, t.label, t.ckws)

    # -- reads -----------------------------------------------------------

    def key_for(self, pool):
        rng = self.rng
        if pool and rng.random() < 0.8:
            return rng.choice(sorted(pool)), True
        self.p.forms["reads-decoy-key-not-moved"] += 1
        return rng.choice(NOT_MOVED_KEYS + READ_KEYS), False

    def key_text(self, k):
        rng = self.rng
        r = rng.random()
        if r < 0.55:
            return json.dumps(k, ensure_ascii=False)
        if r < 0.7:
            return "'%s'" % k
        if r < 0.8 and len(k) > 1:
            i = rng.randint(1, len(k) - 1)
            self.p.forms["reads-key-concatenated"] += 1
            return '"%s" "%s"' % (k[:i], k[i:])
        if r < 0.9:
            self.p.forms["reads-key-parenthesized"] += 1
            return "(%s)" % json.dumps(k, ensure_ascii=False)
        self.p.forms["reads-key-u-prefix"] += 1
        return 'u"%s"' % k

    def read_stmt(self, ind, put, recv, pool=None):
        """One statement reading the receiver ``put()`` writes (``recv`` is
        what it reaches, for the key choice, or the ``pool`` of keys given);
        records the read."""
        p, rng, w = self.p, self.rng, self.w
        self.last_h = None
        if pool is None:
            pool = self.rd.recv_pool(recv)
        form = rng.choice(["subscript", "subscript", "subscript", "store", "store-aug", "delete", "get",
                           "get-default", "pop", "pop-default", "setdefault", "in", "not-in", "in-if",
                           "whole-dict", "whole-call", "whole-keys", "whole-values", "whole-items",
                           "whole-items-for", "whole-dict-call", "whole-json", "whole-json-indent",
                           "whole-eq", "paren-subscript", "no-read", "no-read", "content-item", "content-item",
                           "content-list", "content-target"])
        key = K = None
        if not form.startswith(("whole", "no-read", "content")):
            key, _ = self.key_for(pool)
            K = self.key_text(key)
        read = None  # (form, key, start, end)
        w.put(ind)
        if form in ("subscript", "paren-subscript"):
            lead = rng.choice(["x = ", "assert ", 'print("fertig ✓", ', ""])
            w.put(lead)
            if form == "paren-subscript":
                s, _ = w.put("(")
                r = put()
                w.put(")")
            else:
                s = w.put("")[0]
                r = put()
            _, e = w.put("[" + K + "]")
            if lead.startswith("print"):
                w.put(")")
            elif lead == "assert ":
                w.put(" is not None")
            if key == CONTENT:
                # a key not moved, but the content list: never a keyed read
                read = ("content", None, s, e)
                p.forms["reads-content-key-not-moved"] += 1
            else:
                read = ("subscript", key, s, e)
        elif form in ("store", "store-aug", "delete"):
            if form == "delete":
                w.put("del ")
            s = w.put("")[0]
            r = put()
            _, e = w.put("[" + K + "]")
            w.put(" = 1" if form == "store" else " += 1" if form == "store-aug" else "")
            # the content list as a target is no read at all
            read = None if key == CONTENT else ("delete" if form == "delete" else "store", key, s, e)
        elif form in ("get", "get-default", "pop", "pop-default", "setdefault"):
            w.put(rng.choice(["x = ", "", "assert "]))
            s = w.put("")[0]
            r = put()
            m = form.split("-")[0]
            arg = {"get": K, "get-default": K + ", None", "pop": K, "pop-default": K + ", 0",
                   "setdefault": K + ", []"}[form]
            _, e = w.put(".%s(%s)" % (m, arg))
            read = (m, key, s, e)
        elif form in ("in", "not-in", "in-if"):
            lead = "if " if form == "in-if" else rng.choice(["assert ", "x = "])
            w.put(lead)
            s, _ = w.put(K)
            w.put(" not in " if form == "not-in" else " in ")
            r = put()
            e = w.put("")[0]
            if form == "in-if":
                w.put(":")
                w.end()
                w.put(ind + "    pass")
            read = ("not-in" if form == "not-in" else "in", key, s, e)
        elif form.startswith("whole"):
            key = None
            if form == "whole-dict":
                w.put(rng.choice(["x = {", 'x = {"a": 1, ']))
                paren = rng.random() < 0.15
                s, _ = w.put("**(" if paren else "**")
                r = put()
                e = w.put(")" if paren else "")[1]
                w.put("}")
            elif form == "whole-call":
                w.put(rng.choice(["print(", 'emit("x", ']))
                s, _ = w.put("**")
                r = put()
                e = w.put("")[0]
                w.put(")")
            elif form in ("whole-keys", "whole-values", "whole-items"):
                w.put("x = list(")
                s = w.put("")[0]
                r = put()
                _, e = w.put(".%s()" % form.split("-")[1])
                w.put(")")
            elif form == "whole-items-for":
                w.put("for k, v in ")
                s = w.put("")[0]
                r = put()
                _, e = w.put(".items()")
                w.put(":")
                w.end()
                w.put(ind + "    pass")
            elif form == "whole-dict-call":
                w.put("x = ")
                s, _ = w.put("dict(")
                r = put()
                _, e = w.put(")")
            elif form == "whole-eq":
                # a test comparing the whole result: the comparison's span
                w.put("assert ")
                s = w.put("")[0]
                r = put()
                _, e = w.put(rng.choice([" == {}", " != None"]))
            else:
                w.put("x = ")
                s, _ = w.put("json.dumps(")
                r = put()
                _, e = w.put(", indent=2)" if form == "whole-json-indent" else ")")
            read = ("whole", None, s, e)
        elif form.startswith("content"):
            r, read = self.content_stmt(ind, put, form)
        else:
            # uses that are no read: nothing is reported
            kind = rng.choice(["len", "list", "copy", "index", "computed", "update", "str", "dump",
                               "dict-second", "attr", "get-computed"])
            p.forms["reads-decoy-no-read-" + kind] += 1
            pre, post = {"len": ("x = len(", ")"), "list": ("x = list(", ")"), "copy": ("x = ", ".copy()"),
                         "index": ("x = ", "[0]"), "computed": ("x = ", "[key_of(1)]"),
                         "update": ("", ".update(frames=1)"), "str": ("x = str(", ")"),
                         "dump": ("json.dump(", ", fh)"), "dict-second": ("x = dict(base, ", ")"),
                         "attr": ("x = ", ".get"), "get-computed": ("x = ", ".get(name)")}[kind]
            w.put(pre)
            r = put()
            w.put(post)
        w.end()
        if read is not None:
            p.reads.append((self.rel, r, read[0], read[1], (read[2], read[3])))
            p.forms["reads-written-" + form] += 1
            p.forms["reads-through-" + (r.kind if r is not None else "nothing")] += 1
        elif self.last_h is not None:
            # a call written where it is no receiver of a read (`len(C)`,
            # `C.copy()`, `C["content"] = []`...): its result is handed on
            self.hand_on(self.last_h)
            p.forms["reads-handed-on-statement"] += 1
        self.last_h = None
        # is the receiver ``put()`` wrote the receiver of a read form?
        return read is not None

    def content_stmt(self, ind, put, form):
        """The rest of a statement using the content list of the receiver
        ``put()`` writes: ``content-item`` an item ``E["content"][i]`` (a block
        read for a decimal literal i, else a content read), ``content-list``
        the list (a content read; also an item that is a target), or
        ``content-target`` ``E["content"]`` as a target (no read).  Returns
        (the Recv of ``put()``, the read (form, None, start, end) or None)."""
        p, rng, w = self.p, self.rng, self.w
        K = self.key_text(CONTENT)
        if form == "content-target":
            kind, pre, post = rng.choice(CONTENT_TARGETS)
            p.forms["reads-decoy-content-" + kind] += 1
            w.put(pre)
            r = put()
            w.put("[" + K + "]" + post)
            if post.endswith(":"):
                w.end()
                w.put(ind + "    pass")
            return r, None
        if form == "content-item":
            decimal = rng.random() < 0.6
            index = rng.choice([i for i, d in CONTENT_INDEXES if d == decimal])
            pre, post = rng.choice(CONTENT_ITEM_USES)
            kind = "item" if decimal else "index"
        elif rng.random() < 0.25:
            index, _ = rng.choice(CONTENT_INDEXES)
            pre, post = rng.choice(CONTENT_ITEM_TARGETS)
            kind = "item-target"
        else:
            index = None
            pre, post = rng.choice(CONTENT_LIST_USES)
            kind = "list"
        p.forms["reads-content-" + kind] += 1
        w.put(pre)
        # `(E["content"])[i]`: the span stays inside the parentheses;
        # `(E)["content"]`: it starts at the receiver's "("
        wrapped = rng.random() < 0.15
        parenthesized = rng.random() < 0.15
        if wrapped:
            w.put("(")
            p.forms["reads-content-subscript-parenthesized"] += 1
        s = w.put("(" if parenthesized else "")[0]
        r = put()
        if parenthesized:
            w.put(")")
            p.forms["reads-content-receiver-parenthesized"] += 1
        _, e = w.put("[" + K + "]")
        w.put((")" if wrapped else "") + ("" if index is None else "[" + index + "]") + post)
        if post.endswith(":"):
            w.end()
            w.put(ind + "    pass")
        return r, ("block" if kind == "item" else "content", None, s, e)

    # -- blocks ------------------------------------------------------------

    def target(self):
        return self.rng.choice(self.targets)

    def handed_block(self, ind, t):
        """A result handed on where it stands (docs/rules.md "**Results handed
        on.**"): stored in an attribute, passed to a helper, put in a list, a
        conditional, a lambda, tested by `if`, iterated, or bound once to a
        name that is passed on (`print(R)`) and read too (its reads stay)."""
        p, rng, w = self.p, self.rng, self.w
        # `ST.m(...)` in a lambda reads ST from a nested scope: no call on an
        # instance, so no receiver; the lambda takes the other targets
        kind = rng.choice([k for k in HANDED_KINDS if k != "lambda" or t.label != "instance-name-call"])
        p.forms["reads-handed-" + kind] += 1
        if kind == "print":
            R = p.fresh("res")
            w.put(ind + R + " = ")
            recv = self.put_call(t)
            w.end()
            self.hand_on(self.last_h)
            w.lineof(ind + "print(%s)" % R)
            named = None if recv is None else Recv("name:" + recv.kind, recv.tags, recv.via, recv.tools, recv.ckws,
                                                   recv.wide)
            for _ in range(rng.randint(1, 2)):
                self.read_stmt(ind, lambda: (w.put(R), named)[1], recv)
            return
        pre, post = HANDED_SPELLINGS[kind]
        w.put(ind + pre)
        self.put_call(t)
        h = self.last_h
        w.put(post)
        w.end()
        if post.endswith(":"):
            w.lineof(ind + "    pass")
        self.hand_on(h)

    def block(self, ind):
        """A few reads through one receiver, or a decoy."""
        p, rng, w = self.p, self.rng, self.w
        t = self.bind(ind, self.target())
        if rng.random() < 0.12:
            self.handed_block(ind, t)
            return
        kind = rng.choice(["inline"] * 4 + ["name"] * 6 + ["sequence"] * 3 + ["where"] * 2 + ["annotation-call"] + [
            "annotated", "chained", "tuple", "walrus", "for", "aug", "deleted", "nested-def",
            "nested-lambda", "nested-comp", "nested-class", "comp-iter", "comp-second-iter"])
        p.forms["reads-block-" + kind] += 1
        p.forms["reads-target-" + t.label] += 1
        if kind == "sequence":
            self.sequence_block(ind, t)
            return
        if kind == "where":
            self.where_block(ind, t)
            return
        if kind == "annotation-call":
            self.annotation_call_block(ind, t)
            return
        n = rng.randint(1, 3)
        if kind == "inline":
            for _ in range(n):
                if t.kind == "builder":
                    ks = rng.sample(READ_KEYS, rng.randint(1, 3))
                    pool = set(ks) | (self.rd.pool(t.what.producer) if t.what.producer else set())
                    self.read_stmt(ind, lambda t=t, ks=ks: self.put_call(t, ks), None, pool)
                else:
                    self.read_stmt(ind, lambda t=t: self.put_call(t), self.peek(t))
            return
        R = p.fresh(rng.choice(["r", "res", "result", "out"]))

        def put_name(recv):
            # a read through the name: the call's origins, kept apart in the counts
            named = None if recv is None else Recv("name:" + recv.kind, recv.tags, recv.via, recv.tools,
                                                   recv.ckws, recv.wide)

            def put():
                w.put(R)
                return named
            return put

        # real: what the call returns (for the keys read); recv: what the name is.
        # Results handed on (docs/rules.md "**Results handed on.**"): the call
        # is handed on unless R, bound once in this function, is loaded here
        # only as the receiver of read forms ("name" with every statement a
        # read, "comp-iter"); a name bound twice, annotated, chained, a tuple,
        # a walrus, a `for` iterable, deleted, augmented or read in a nested
        # scope hands it on
        if kind in ("name", "nested-def", "nested-lambda", "nested-comp", "nested-class", "comp-iter",
                    "comp-second-iter", "deleted", "aug"):
            w.put(ind + R + " = ")
            real = recv = self.put_call(t)
            w.end()
        elif kind == "annotated":
            w.put(ind + R + ": dict = ")
            real = self.put_call(t)
            w.end()
            recv = NO_RECV
        elif kind == "chained":
            w.put(ind + "alias_%s = %s = " % (R, R))
            real = self.put_call(t)
            w.end()
            recv = NO_RECV
        elif kind == "tuple":
            w.put(ind + R + ", count = ")
            real = self.put_call(t)
            w.put(", 0")
            w.end()
            recv = NO_RECV
        elif kind == "walrus":
            w.put(ind + "if (%s := " % R)
            real = self.put_call(t)
            w.put("):")
            w.end()
            w.lineof(ind + "    pass")
            recv = NO_RECV
        elif kind == "for":
            w.put(ind + "for %s in [" % R)
            real = self.put_call(t)
            w.put("]:")
            w.end()
            w.lineof(ind + "    pass")
            recv = NO_RECV
        h = self.last_h
        if kind not in ("name", "comp-iter"):
            self.hand_on(h)
        if kind == "aug":
            w.lineof(ind + R + " |= {}")
            recv = NO_RECV
        if kind == "deleted":
            recv = NO_RECV
        if kind in ("nested-def", "nested-lambda", "nested-comp", "nested-class", "comp-second-iter"):
            # the name is a receiver, but these reads stand in a nested scope
            if kind == "nested-def":
                w.lineof(ind + "def inner_%s():" % R)
                if rng.random() < 0.3:
                    # an assert in a nested def: R loaded in a nested scope
                    self.message_stmt(ind + "    ", R, NO_RECV, self.rd.recv_pool(real), "nested")
                else:
                    self.read_stmt(ind + "    ", put_name(NO_RECV), real)
                w.lineof(ind + "    return None")
            elif kind == "nested-lambda":
                key = rng.choice(sorted(self.rd.recv_pool(recv)) or READ_KEYS)
                w.lineof(ind + "hook_%s = lambda: %s[%s]" % (R, R, json.dumps(key, ensure_ascii=False)))
            elif kind == "nested-comp":
                key = rng.choice(sorted(self.rd.recv_pool(recv)) or READ_KEYS)
                w.lineof(ind + "x = [%s[%s] for _ in range(2)]" % (R, json.dumps(key, ensure_ascii=False)))
            elif kind == "nested-class":
                w.lineof(ind + "class Inner_%s:" % R)
                self.read_stmt(ind + "    ", put_name(NO_RECV), real)
            else:
                w.lineof(ind + "x = [k for _ in range(1) for k in %s.keys()]" % R)
            # and one read in the scope itself, which counts
            self.read_stmt(ind, put_name(recv), recv)
            return
        if kind in ("comp-iter",):
            # the first iterable of a comprehension stands in the enclosing scope
            w.put(ind + "x = [k for k in ")
            s = w.put("")[0]
            named = put_name(recv)()
            _, e = w.put(".keys()")
            w.put("]")
            w.end()
            self.p.reads.append((self.rel, named, "whole", None, (s, e)))
            p.forms["reads-written-comprehension-iterable"] += 1
            return
        reads = []
        for _ in range(n):
            if rng.random() < 0.2:
                # an assertion message loading R (docs/rules.md "**Assertion messages.**")
                reads.append(self.message_stmt(ind, R, self.named(recv), self.rd.recv_pool(real), "name"))
            else:
                reads.append(self.read_stmt(ind, put_name(recv), real))
        if kind == "name" and not all(reads):
            # R loaded where it is no receiver of a read (`len(R)`, `R.copy()`...)
            self.hand_on(h)
            p.forms["reads-handed-on-name-passed"] += 1
        if kind == "deleted":
            w.lineof(ind + "del " + R)

    # -- assertion messages ----------------------------------------------------

    def message_stmt(self, ind, R, named, pool, place, kept_only=False):
        """``assert T, M`` at ``ind`` (docs/rules.md "**Assertion messages.**"):
        M loads the name ``R`` in a form the rule allows (MESSAGES_KEPT: no
        read, nothing handed on), in a decoy form (MESSAGES_PASSED: R passed
        on), or holds a keyed read of R in an f-string field (MESSAGE_READS);
        T loads no R, is a read form of R (where_expr, which may pass R on)
        or R itself (passed on).  Reads are recorded through ``named`` (the
        Recv of a load of R there).  ``kept_only``: T loads no R and M is a
        kept form.  Returns True when nothing in it passes R on."""
        p, rng, w = self.p, self.rng, self.w
        p.forms["reads-message-in-" + place] += 1
        kept = True
        w.put(ind + "assert ")
        test = "none" if kept_only else rng.choice(["none", "read", "read", "bare"])
        p.forms["reads-message-test-" + test] += 1
        if test == "none":
            w.put(rng.choice(["True", "query", "x is not None"]))
        elif test == "bare":
            w.put(R)
            kept = False
        else:
            read = self.where_expr(R, pool)
            if read is None:
                kept = False
            else:
                p.reads.append((self.rel, named, read[0], read[1], (read[2], read[3])))
                p.forms["reads-written-message-test-" + read[0]] += 1
                p.forms["reads-through-" + (named.kind if named is not None else "nothing")] += 1
        w.put(", ")
        r = 0.0 if kept_only else rng.random()
        if r < 0.55 or r >= 0.85:
            if r < 0.55:
                kind = rng.choice(sorted(MESSAGES_KEPT))
                text = MESSAGES_KEPT[kind]
            else:
                kind = rng.choice(sorted(MESSAGES_PASSED))
                text = MESSAGES_PASSED[kind]
                kept = False
            p.forms["reads-message-" + kind] += 1
            for i, part in enumerate(text.replace("@", R).split("\n")):
                if i:
                    w.end()
                    w.put(ind + ("    " if part not in (")",) else "") + part)
                else:
                    w.put(part)
        else:
            form = rng.choice(MESSAGE_READS)
            p.forms["reads-message-read-" + form] += 1
            key, _ = self.key_for(pool)
            w.put('f"' + rng.choice(["", "got ", "{0} "]) + "{")
            if form == "in":
                s, _ = w.put("'%s'" % key)
                w.put(" in ")
                _, e = w.put(R)
            else:
                s = w.put(R)[0]
                _, e = w.put(("['%s']" if form == "subscript" else ".get('%s')") % key)
            w.put("}")
            if rng.random() < 0.4:
                w.put(" {%s!r}" % R)  # and R itself, in a field of its own
            w.put('"')
            read = ("content", None) if (key == CONTENT and form == "subscript") else (form, key)
            p.reads.append((self.rel, named, read[0], read[1], (s, e)))
            p.forms["reads-written-message-" + form] += 1
            p.forms["reads-through-" + (named.kind if named is not None else "nothing")] += 1
        w.end()
        return kept

    # -- where a load stands ----------------------------------------------------

    def where_expr(self, R, pool):
        """Write, at the current position, an expression loading the name ``R``:
        a read form whose receiver is R (its key from ``pool``), or R passed on
        (`len(R)`).  Returns the read (form, key, start, end), None for none."""
        p, rng, w = self.p, self.rng, self.w
        form = rng.choice(WHERE_EXPRS)
        p.forms["reads-where-expr-" + form] += 1
        key = K = None
        if form in ("subscript", "get", "pop", "in", "not-in"):
            key, _ = self.key_for(pool)
            K = self.key_text(key)
        if form == "subscript":
            s = w.put(R)[0]
            _, e = w.put("[" + K + "]")
            # `R["content"]`: the content list, never a keyed read
            return ("content", None, s, e) if key == CONTENT else ("subscript", key, s, e)
        if form in ("get", "pop"):
            s = w.put(R)[0]
            _, e = w.put(".%s(%s)" % (form, K))
            return form, key, s, e
        if form in ("in", "not-in"):
            s, _ = w.put(K)
            w.put(" not in " if form == "not-in" else " in ")
            _, e = w.put(R)
            return form, key, s, e
        if form in ("whole-dict", "whole-json"):
            s, _ = w.put("dict(" if form == "whole-dict" else "json.dumps(")
            w.put(R)
            _, e = w.put(")")
            return "whole", None, s, e
        if form in ("whole-keys", "whole-eq"):
            s = w.put(R)[0]
            _, e = w.put(".keys()" if form == "whole-keys" else " == {}")
            return "whole", None, s, e
        if form in ("content", "block"):
            s = w.put(R)[0]
            _, e = w.put('["content"]')
            if form == "block":
                w.put("[0]")
            return form, None, s, e
        w.put("len(")
        w.put(R)
        w.put(")")
        return None

    def where_block(self, ind, t):
        """A name ``R`` bound once in the function at ``ind`` by `R = C`, C a
        call of target ``t``, loaded in an annotation or in what stands in the
        function (docs/rules.md "**Annotations.**"): in the annotations of a
        nested def's parameters (positional-only, positional, keyword-only,
        `*args`, `**kwargs`) or of its return (an `async def` too), or of a
        variable of the function (`y: A = v`, `y: A`, in an `if` too), which
        stand in a scope nested in the function: no read, and C is handed on;
        or in what stands in the function itself: a def's defaults (beside an
        annotation of the same parameter too) and decorators, a lambda's
        defaults, a class's bases and keywords, an annotated assignment's
        value (beside an annotation loading R too): reads of C's keys, C
        handed on only when one of them passes R on (`len(R)`).  Reads of R
        in the function itself may follow."""
        p, rng, w = self.p, self.rng, self.w
        R = p.fresh(rng.choice(["r", "res", "result", "out"]))
        w.put(ind + R + " = ")
        real = self.put_call(t)
        h = self.last_h
        w.end()
        named = self.named(real)
        pool = self.rd.recv_pool(real)
        passed = [False]

        def in_s():
            # an expression standing in the function: a read of R, or R passed on
            read = self.where_expr(R, pool)
            if read is None:
                passed[0] = True
                return
            p.reads.append((self.rel, named, read[0], read[1], (read[2], read[3])))
            p.forms["reads-written-where-" + read[0]] += 1
            p.forms["reads-through-" + (named.kind if named is not None else "nothing")] += 1

        def nested():
            # an expression in an annotation: no read; R loaded in a nested scope
            self.where_expr(R, pool)
            passed[0] = True

        annotated = rng.random() < 0.55
        p.forms["reads-where-" + ("annotated" if annotated else "in-s")] += 1
        place = None
        if annotated:
            slots = rng.sample(WHERE_ANNOTATIONS + WHERE_VARIABLES, rng.randint(1, 3))
            defaults = [] if rng.random() < 0.5 else rng.sample(["pos", "kwonly"], rng.randint(1, 2))
        else:
            slots = []
            place = rng.choice(WHERE_IN_S)
            p.forms["reads-where-" + place] += 1
            defaults = {"default": ["pos"], "kwdefault": ["kwonly"]}.get(place, [])
        if place == "annassign-value":
            # an annotated assignment's value stands in the function
            w.put(ind + "%s: %s = " % (p.fresh("val"), rng.choice(["int", "dict", "object"])))
            in_s()
            w.end()
        elif defaults or place == "decorator" or set(slots) & set(WHERE_ANNOTATIONS):
            if place == "decorator":
                w.put(ind + "@")
                in_s()
                w.end()
            is_async = annotated and rng.random() < 0.3
            if is_async:
                p.forms["reads-where-annotation-async"] += 1
            w.put(ind + ("async def " if is_async else "def ") + p.fresh("inner") + "(")
            first = True
            for slot in ("posonly", "pos", "vararg", "kwonly", "kwarg"):
                if slot not in slots and slot not in defaults:
                    continue
                name = {"posonly": "a0", "pos": "a1", "vararg": "*va", "kwonly": "k1", "kwarg": "**kw"}[slot]
                if slot == "kwonly" and "vararg" not in slots:
                    name = "*, k1"  # keyword-only without *args
                w.put(("" if first else ", ") + name)
                first = False
                if slot in slots:
                    w.put(": ")
                    nested()
                    p.forms["reads-where-annotation-" + slot] += 1
                if slot in defaults:
                    w.put(" = " if slot in slots else "=")
                    in_s()
                    if slot in slots:
                        p.forms["reads-where-annotation-default-beside"] += 1
                if slot == "posonly":
                    w.put(", /")
            w.put(")")
            if "return" in slots:
                w.put(" -> ")
                nested()
                p.forms["reads-where-annotation-return"] += 1
            w.put(":")
            w.end()
            w.lineof(ind + "    return None")
        elif place == "lambda-default":
            w.put(ind + "%s = lambda v=" % p.fresh("hook"))
            in_s()
            w.put(": v")
            w.end()
        elif place in ("class-base", "class-keyword"):
            w.put(ind + "class %s(" % p.fresh("Base"))
            if place == "class-keyword":
                w.put("metaclass=")
            in_s()
            w.put("):")
            w.end()
            w.lineof(ind + "    pass")
        for slot in WHERE_VARIABLES:
            if slot not in slots:
                continue
            # a variable's annotation in the function (never evaluated there,
            # docs/rules.md "**Annotations.**"): R loaded in a nested scope
            p.forms["reads-where-annotation-" + slot] += 1
            at = ind
            if slot == "variable-if":
                w.lineof(ind + "if query:")
                at = ind + "    "
            w.put(at + p.fresh("ann") + ": ")
            nested()
            if slot != "variable-bare":
                w.put(" = ")
                if rng.random() < 0.3:
                    in_s()  # the value stands in the function
                    p.forms["reads-where-annotation-value-beside"] += 1
                else:
                    w.put("None")
            w.end()
        for _ in range(rng.randint(0, 2)):
            if not self.read_stmt(ind, lambda: (w.put(R), named)[1], real):
                passed[0] = True
        if passed[0]:
            self.hand_on(h)
            p.forms["reads-where-passed"] += 1
        else:
            p.forms["reads-where-kept"] += 1

    def annotation_call_block(self, ind, t, awaited=False, outer=False):
        """A call C of target ``t`` written in an annotation at ``ind``
        (docs/rules.md "**Annotations.**"): a nested def's parameter's
        (positional, keyword-only, `*args`) or return's, or a variable's
        (`y: A = None`, `y: A`, in an `if`); held by a read form, passed on,
        bare or in a comprehension.  Nothing in an annotation is read: C is
        handed on (one escape read, span `await C` when ``awaited``: the
        function at ``ind`` is an `async def`), whatever holds it; but a call
        `ST.m(...)` on an instance name is no receiver there (`ST` is read in
        a nested scope).  ``outer``: at module level or in a class body."""
        p, rng, w = self.p, self.rng, self.w
        place = rng.choice(ANNOTATION_CALL_OUTER_PLACES if outer else ANNOTATION_CALL_PLACES)
        holder = rng.choice([hd for hd in ANNOTATION_CALL_HOLDERS if not (awaited and hd == "comp")])
        p.forms["reads-annotation-call-" + place] += 1
        p.forms["reads-annotation-holder-" + holder] += 1
        if place in ("pos", "kwonly", "vararg", "return"):
            head = {"pos": "v: ", "kwonly": "*, v: ", "vararg": "*v: ", "return": "v=None) -> "}[place]
            w.put(ind + "%sdef %s(%s" % (rng.choice(["", "async "]), p.fresh("inner"), head))
        elif place == "variable-if":
            w.lineof(ind + "if query:")
            w.put(ind + "    %s: " % p.fresh("ann"))
        else:
            w.put(ind + "%s: " % p.fresh("ann"))
        pool = self.rd.recv_pool(self.peek(t))
        key = K = None
        if holder in ("subscript", "get", "in"):
            key, _ = self.key_for(pool)
            K = self.key_text(key)

        def call(paren):
            # C, or `await C` (parenthesized when ``paren``: a subscript's or an attribute's value)
            if awaited:
                return self.put_awaited(t, rng.choice(["outer", "both"]) if paren else rng.choice(
                    ["plain", "inner", "outer"]))
            return self.put_call(t)

        if holder in ("subscript", "content", "block"):
            call(True)
            w.put("[%s]" % K if holder == "subscript" else '["content"]' + ("[0]" if holder == "block" else ""))
        elif holder == "get":
            call(True)
            w.put(".get(%s)" % K)
        elif holder == "in":
            w.put(K + rng.choice([" in ", " not in "]))
            call(False)
        elif holder == "whole-dict":
            w.put(rng.choice(["dict(", "json.dumps("]))
            call(False)
            w.put(")")
        elif holder == "whole-eq":
            call(False)
            w.put(" == {}")
        elif holder == "passed":
            w.put("len(")
            call(False)
            w.put(")")
        elif holder == "comp":
            w.put("[k for k in ")
            call(False)
            w.put(".keys()]")
        else:
            call(False)
        h = self.last_h
        if place in ("pos", "kwonly", "vararg", "return"):
            w.put(":" if place == "return" else "):")
            w.end()
            w.lineof(ind + "    return None")
        else:
            if place != "variable-bare":
                w.put(" = None")
            w.end()
        if t.label == "instance-name-call":
            p.forms["reads-annotation-call-instance-name"] += 1
        else:
            self.hand_on(h)
        if awaited:
            p.forms["reads-annotation-call-awaited"] += 1

    # -- names bound in sequence ---------------------------------------------

    def named(self, recv, prefix="name:"):
        """The Recv of a name bound to the result of a call whose Recv is ``recv``."""
        return None if recv is None else Recv(prefix + recv.kind, recv.tags, recv.via, recv.tools, recv.ckws,
                                              recv.wide)

    def sequence_value_read(self, R, seen, pool):
        """Write ``R[K]`` (a load of R in a binding's value: it sees the binding
        before); record the read through ``seen`` (the Recv that load has)."""
        p, w = self.p, self.w
        key, _ = self.key_for(pool)
        s = w.put("")[0]
        w.put(R)
        _, e = w.put("[" + self.key_text(key) + "]")
        read = ("content", None) if key == CONTENT else ("subscript", key)
        p.reads.append((self.rel, seen, read[0], read[1], (s, e)))
        p.forms["reads-written-sequence-value"] += 1
        p.forms["reads-through-" + (seen.kind if seen is not None else "nothing")] += 1

    def sequence_block(self, ind, t, awaited=False, param=None):
        """A name ``R`` bound more than once in the function whose body is at
        ``ind`` (docs/rules.md "**Receivers**", a name bound **in sequence**),
        the first binding a call of target ``t``: every binding a plain
        `R = V` statement of the function's own block, so a load of R there
        sees the last binding that ends before it (a load in V the one
        before), a receiver of that binding's call (V `C` or, with
        ``awaited``, `await C` spelled in every way).  The values: receiver
        calls (other targets too), values that are none, values loading R
        (a read's receiver, passed on, or read in a producer call's
        argument).  Reads follow each binding, some in an `if`, a loop or a
        `with` (still the function's own scope), a comprehension's first
        iterable, or R passed on (`print(R)`).  "**Results handed on.**" is
        judged binding by binding: a binding a load passes on is handed on.
        Decoys: the sequence broken (SEQUENCE_BREAKS: one binding in a
        compound statement, annotated, chained, a tuple, a walrus, or
        `R |= ...` / `R += ...`, `del R`, a nested `nonlocal R` rebinding,
        `global R`; or ``param``, R a parameter of the function): no load is a
        receiver, every call bound handed on; or spoiled (SEQUENCE_SPOILS: a
        load in a nested def, lambda or comprehension, or before the first
        binding): the loads standing in the function are still receivers,
        but every call bound is handed on."""
        p, rng, w = self.p, self.rng, self.w
        R = param or p.fresh(rng.choice(["r", "res", "result", "out"]))
        brk = spoil = None
        if param is not None:
            brk = "param"
        elif rng.random() < 0.3:
            brk = rng.choice(SEQUENCE_BREAKS)
        elif rng.random() < 0.25:
            spoil = rng.choice(SEQUENCE_SPOILS)
        in_seq = brk is None
        n = rng.choice([2, 2, 2, 3, 3, 4])
        j = rng.randrange(n)  # the binding a break writes otherwise
        p.forms["reads-sequence-bindings-%d" % n] += 1
        if awaited:
            p.forms["reads-sequence-await"] += 1
        if brk is not None:
            p.forms["reads-sequence-" + brk] += 1
        elif spoil is not None:
            p.forms["reads-sequence-" + spoil] += 1
            p.forms["reads-sequence-spoiled"] += 1
        else:
            p.forms["reads-sequence-in-sequence"] += 1
        if brk == "global":
            w.lineof(ind + "global " + R)
        if spoil == "early":
            # a load before the first binding ends: it sees none
            w.lineof(ind + "if query is None:")
            if rng.random() < 0.5:
                self.message_stmt(ind + "    ", R, NO_RECV, self.rd.recv_pool(self.peek(t)), "sequence-early")
            else:
                self.read_stmt(ind + "    ", lambda: (w.put(R), NO_RECV)[1], self.peek(t))
        bindings = []  # [Recv of the call bound (None: no receiver), its H, passed on?]
        seen = None    # the Recv a load of R standing in the function has now
        for i in range(n):
            at_break = brk is not None and i == j and brk in ("if", "while", "for", "with", "try", "match",
                                                               "annotated", "chained", "tuple", "walrus")
            if at_break:
                p.forms["reads-sequence-break-at-" + ("first" if i == 0 else "later")] += 1
            value = "call" if i == 0 else rng.choice(["call", "call", "call"] + SEQUENCE_VALUES[1:])
            ti = t if i == 0 else self.bind(ind, self.target())
            if value == "value-call" and not (ti.kind == "producer" and ti.args is not None and not awaited):
                value = "value-read"
            p.forms["reads-sequence-" + value] += 1
            bind_ind = ind
            if at_break and brk in ("if", "while", "for", "with", "try"):
                w.lineof(ind + {"if": "if query:", "while": "while query:", "for": "for _ in range(1):",
                                "with": "with make_ctx():", "try": "try:"}[brk])
                bind_ind = ind + "    "
            elif at_break and brk == "match":
                w.lineof(ind + "match query:")
                w.lineof(ind + '    case "x":')
                bind_ind = ind + "        "
            pre, post = R + " = ", ""
            if at_break:
                pre, post = {"annotated": (R + ": dict = ", ""), "chained": ("alias_%s = %s = " % (R, R), ""),
                             "tuple": (R + ", count = ", ", 0"), "walrus": ("if (%s := " % R, "):")
                             }.get(brk, (pre, post))
            w.put(bind_ind + pre)
            real = h = None
            prefix = "seq:"
            if value == "call":
                if awaited and rng.random() < 0.7:
                    real = self.put_awaited(ti, rng.choice(["plain", "plain", "inner", "outer", "both"]))
                    prefix = "seq:await:"
                else:
                    real = self.put_call(ti)
                h = self.last_h
            elif value == "other":
                w.put(rng.choice(["None", "make_other()", "{}", "dict(base)", '{"status": "success"}']))
            elif value == "value-call":
                # `R = f(R[K])`: the load in V reads the binding before
                s = w.put("")[0]
                w.put(ti.callee + "(")
                self.sequence_value_read(R, seen, self.rd.recv_pool(bindings[-1][0]))
                e = w.put(")")[1]
                real = Recv("producer-call", via=[ti.what])
                h = (s, e, real)
            else:
                w.put("make_other(")
                if value == "value-read":
                    self.sequence_value_read(R, seen, self.rd.recv_pool(bindings[-1][0]))
                else:
                    w.put(R)  # passed on: the binding before is handed on
                    bindings[-1][2] = True
                w.put(")")
            w.put(post)
            w.end()
            if at_break and brk == "walrus":
                w.lineof(bind_ind + "    pass")
            elif at_break and brk == "while":
                w.lineof(bind_ind + "break")
            elif at_break and brk == "try":
                w.lineof(ind + "except ValueError:")
                w.lineof(ind + "    pass")
            bindings.append([real, h, False])
            seen = self.named(real, prefix) if in_seq else NO_RECV
            # reads of this binding
            if i < n - 1 and rng.random() < 0.12:
                # a binding seen by an assertion message alone (docs/rules.md
                # "**Assertion messages.**"): no read, not handed on
                self.message_stmt(ind, R, seen, self.rd.recv_pool(real), "sequence-only", kept_only=True)
                continue
            for _ in range(rng.randint(0 if i < n - 1 else 1, 2)):
                what = rng.random()
                if what < 0.12:
                    # an assertion message loading R: it sees this binding
                    at = ind
                    if rng.random() < 0.3:
                        w.lineof(ind + rng.choice(SEQUENCE_COMPOUNDS))
                        at = ind + "    "
                    if not self.message_stmt(at, R, seen, self.rd.recv_pool(real),
                                             "sequence" if at == ind else "sequence-compound"):
                        bindings[-1][2] = True
                    continue
                what = rng.random()
                if what < 0.08:
                    w.lineof(ind + rng.choice(["print(%s)", "check_result(%s)", "x = [%s]"]) % R)
                    bindings[-1][2] = True
                    p.forms["reads-sequence-print"] += 1
                elif what < 0.16:
                    # a comprehension's first iterable stands in the function itself
                    w.put(ind + "x = [k for k in ")
                    s = w.put("")[0]
                    w.put(R)
                    _, e = w.put(".keys()")
                    w.put("]")
                    w.end()
                    p.reads.append((self.rel, seen, "whole", None, (s, e)))
                    p.forms["reads-sequence-comp-iter"] += 1
                elif what < 0.22:
                    # a def's default stands in the function itself: it sees
                    # this binding (docs/rules.md "**Annotations.**": no annotation)
                    w.put(ind + "def %s(v=" % p.fresh("cb"))
                    read = self.where_expr(R, self.rd.recv_pool(real))
                    w.put("):")
                    w.end()
                    w.lineof(ind + "    return v")
                    p.forms["reads-sequence-default-read"] += 1
                    if read is None:
                        bindings[-1][2] = True
                    else:
                        p.reads.append((self.rel, seen, read[0], read[1], (read[2], read[3])))
                elif what < 0.38:
                    w.lineof(ind + rng.choice(SEQUENCE_COMPOUNDS))
                    p.forms["reads-sequence-compound-read"] += 1
                    if not self.read_stmt(ind + "    ", lambda s_=seen: (w.put(R), s_)[1], real):
                        bindings[-1][2] = True
                elif not self.read_stmt(ind, lambda s_=seen: (w.put(R), s_)[1], real):
                    bindings[-1][2] = True
        if brk == "aug":
            w.lineof(ind + R + rng.choice([" |= {}", " += make_other()"]))
            self.read_stmt(ind, lambda: (w.put(R), NO_RECV)[1], bindings[-1][0])
        elif brk == "del":
            w.lineof(ind + "del " + R)
        elif brk == "nonlocal":
            w.lineof(ind + "def reset_%s():" % R)
            w.lineof(ind + "    nonlocal " + R)
            w.lineof(ind + "    %s = None" % R)
            w.lineof(ind + "    return None")
        if spoil in ("nested-def", "nested-lambda", "nested-comp", "nested-annotation"):
            key = rng.choice(sorted(self.rd.recv_pool(bindings[-1][0])) or READ_KEYS)
            K = json.dumps(key, ensure_ascii=False)
            if spoil == "nested-annotation":
                # a load in an annotation (a def's, a variable's) stands in a
                # nested scope (docs/rules.md "**Annotations.**"): no read there
                spot = rng.choice(["param", "return", "variable"])
                p.forms["reads-sequence-nested-annotation-" + spot] += 1
                if spot == "variable":
                    w.put(ind + "%s: " % p.fresh("ann"))
                    self.where_expr(R, self.rd.recv_pool(bindings[-1][0]))
                    w.put(rng.choice(["", " = None"]))
                    w.end()
                else:
                    w.put(ind + "def %s(v" % p.fresh("inner"))
                    if spot == "param":
                        w.put(": ")
                        self.where_expr(R, self.rd.recv_pool(bindings[-1][0]))
                        w.put(")")
                    else:
                        w.put(") -> ")
                        self.where_expr(R, self.rd.recv_pool(bindings[-1][0]))
                    w.put(":")
                    w.end()
                    w.lineof(ind + "    return v")
            elif spoil == "nested-def":
                w.lineof(ind + "def inner_%s():" % R)
                if rng.random() < 0.5:
                    self.message_stmt(ind + "    ", R, NO_RECV, self.rd.recv_pool(bindings[-1][0]),
                                      "sequence-nested")
                else:
                    self.read_stmt(ind + "    ", lambda: (w.put(R), NO_RECV)[1], bindings[-1][0])
                w.lineof(ind + "    return None")
            elif spoil == "nested-lambda":
                w.lineof(ind + "hook_%s = lambda: %s[%s]" % (R, R, K))
            else:
                w.lineof(ind + "x = [%s[%s] for _ in range(2)]" % (R, K))
        for real, h, passed in bindings:
            if real is None:
                continue
            if not in_seq or spoil is not None or passed:
                self.hand_on(h)
                p.forms["reads-sequence-passed"] += 1
            else:
                p.forms["reads-sequence-kept"] += 1

    # -- awaited calls ------------------------------------------------------

    def put_awaited(self, t, spell, keys=None):
        """Write ``await C``, C a call of target ``t``, spelled ``spell``
        (parentheses around C, around the whole, both or none); the Recv of C.
        ``self.last_h``: ``await C`` without the parentheses around it."""
        pre, post = AWAIT_SPELLINGS[spell]
        (line, col), _ = self.w.put(pre)
        r = self.put_call(t, keys)
        inner = pre.endswith("(")
        end = self.w.put(post[:1] if inner else "")[1]
        self.w.put(post[1:] if inner else post)
        self.last_h = ((line, col + pre.index("await")), end, r)
        return r

    def call_keys(self, t):
        """(keys, pool): a builder call's extra keywords (chosen here) and the
        keys to read, else (None, None): the pool is the receiver's."""
        if t.kind != "builder":
            return None, None
        ks = self.rng.sample(READ_KEYS, self.rng.randint(1, 3))
        return ks, set(ks) | (self.rd.pool(t.what.producer) if t.what.producer else set())

    def awaited_block(self, t):
        """``async def test_async``: reads through ``R = await C`` (R bound once:
        C's reads; or, as decoys, bound twice, annotated or chained: none),
        through ``(await C)`` and through a bare ``await C`` (docs/rules.md
        "**Awaited calls.**"); ``t`` the target called."""
        p, rng, w = self.p, self.rng, self.w
        w.lineof("async def test_async(agent, query):")
        t = self.bind("    ", t)
        R = p.fresh("r")
        decoy = rng.choice(["twice", "annotated", "chained"]) if rng.random() < 0.3 else None
        lead = {"annotated": R + ": dict = ", "chained": "alias_%s = %s = " % (R, R)}.get(decoy, R + " = ")
        w.put("    " + lead)
        real = self.put_awaited(t, rng.choice(["plain", "plain", "inner", "outer", "both"]))
        h = self.last_h
        w.end()
        if decoy == "twice":
            # the second binding in an `if`: R bound twice, not in sequence
            # (both in the function's own block, R would be bound in sequence)
            t2 = self.bind("    ", self.target())
            w.lineof("    if query:")
            w.put("        %s = " % R)
            self.put_awaited(t2, "plain")
            self.hand_on(self.last_h)
            w.end()
        p.forms["reads-decoy-await-" + decoy if decoy else "reads-await-name"] += 1
        named = None if decoy is not None or real is None else Recv(
            "name:await:" + real.kind, real.tags, real.via, real.tools, real.ckws, real.wide)
        reads = [self.read_stmt("    ", lambda: (w.put(R), named)[1], real) for _ in range(rng.randint(1, 3))]
        if rng.random() < 0.3:
            reads.append(self.message_stmt("    ", R, named, self.rd.recv_pool(real), "await"))
        if decoy is not None or not all(reads):
            # `R = await C` handed on: R bound twice, annotated, chained or passed on
            self.hand_on(h)
        # `(await C)` read where it stands: a read of C, its span from the "("
        for _ in range(rng.randint(1, 3)):
            ks, pool = self.call_keys(t)

            def put(ks=ks):
                r = self.put_awaited(t, rng.choice(["outer", "outer", "both"]), ks)
                return None if r is None else Recv("await:" + r.kind, r.tags, r.via, r.tools, r.ckws, r.wide)
            self.read_stmt("    ", put, self.peek(t), pool)
            p.forms["reads-await-receiver"] += 1
        self.bare_await_stmt("    ", t)
        if rng.random() < 0.5:
            # `await C` written in an annotation in the async def: handed on,
            # span `await C` (docs/rules.md "**Annotations.**")
            self.annotation_call_block("    ", self.bind("    ", self.target()), awaited=True)
        if rng.random() < 0.6:
            # a name bound in sequence by `R = await C` statements
            self.sequence_block("    ", self.bind("    ", self.target()), awaited=True)
        w.lineof("    return None")
        w.end()
        w.end()

    def bare_await_stmt(self, ind, t):
        """One statement reading a bare ``await C`` (no parentheses around it,
        where the grammar allows: `"k" in await C`, `{**await C}`,
        `dict(await C)`, `json.dumps(await C)`, `await C == {}`), or
        ``await C["k"]``, which awaits the subscript: a read of C itself."""
        p, rng, w = self.p, self.rng, self.w
        ks, pool = self.call_keys(t)
        if pool is None:
            pool = self.rd.recv_pool(self.peek(t))
        form = rng.choice(["in", "not-in", "whole-dict", "whole-call", "whole-dict-call", "whole-json",
                           "whole-eq", "operand-subscript"])
        key = K = None
        if form in ("in", "not-in", "operand-subscript"):
            key, _ = self.key_for(pool)
            K = self.key_text(key)
        w.put(ind)
        spell = rng.choice(["plain", "inner"])
        if form in ("in", "not-in"):
            w.put(rng.choice(["assert ", "x = "]))
            s, _ = w.put(K)
            w.put(" not in " if form == "not-in" else " in ")
            r = self.put_awaited(t, spell, ks)
            e = w.put("")[0]
            read = (form, key)
        elif form == "operand-subscript":
            # `await C["k"]`: C's parent is the subscript, the await's operand
            w.put("x = await ")
            s = w.put("")[0]
            r = self.put_call(t, ks)
            _, e = w.put("[" + K + "]")
            read = ("content", None) if key == CONTENT else ("subscript", key)
        else:
            pre, mid, post = {"whole-dict": ("x = {", "**", "}"), "whole-call": ("print(", "**", ")"),
                              "whole-dict-call": ("x = ", "dict(", ")"),
                              "whole-json": ("x = ", "json.dumps(", ")"),
                              "whole-eq": ("assert ", "", " == {}")}[form]
            w.put(pre)
            s, _ = w.put(mid)
            r = self.put_awaited(t, spell, ks)
            if form in ("whole-dict-call", "whole-json", "whole-eq"):
                _, e = w.put(post)
            else:
                e = w.put("")[0]
                w.put(post)
            read = ("whole", None)
        w.end()
        p.forms["reads-await-" + ("operand-subscript" if form == "operand-subscript" else "bare")] += 1
        if form != "operand-subscript" and r is not None:
            r = Recv("await:" + r.kind, r.tags, r.via, r.tools, r.ckws, r.wide)
        p.reads.append((self.rel, r, read[0], read[1], (s, e)))
        p.forms["reads-written-await-" + form] += 1
        p.forms["reads-through-" + (r.kind if r is not None else "nothing")] += 1

    def peek(self, t):
        """The Recv a call of target ``t`` would have (for the key choice only)."""
        if t.kind == "producer":
            return Recv("producer-call", via=[t.what])
        if t.kind == "tool":
            return Recv("direct-tool-call", tools=[t.what])
        if t.kind == "instance":
            return Recv(t.label, via=[t.what])
        if t.kind == "builder":
            return None
        return NO_RECV


def consumer_targets(rd, w, rel, relative):
    """Imports of a consumer module and what it calls."""
    rng = rd.rng
    bound = {"json", "agent", "query", "x", "k", "v", "fh", "base", "name", "emit", "key_of"}
    w.lineof("import json")
    targets = []
    pool = rd.probes + rng.sample(rd.base, min(len(rd.base), 3))
    for rel_t, prod, args in rng.sample(pool, min(len(pool), rng.randint(3, 7))):
        callee = access(rd, rel_t, prod.name, bound, relative, w)
        targets.append(Target("producer", callee, args, prod, "producer"))
    for b in rng.sample(rd.kbuilders + rd.dbuilders, min(len(rd.kbuilders + rd.dbuilders), 2)):
        callee = access(rd, b.rel, b.name, bound, relative, w)
        targets.append(Target("builder", callee, None, b, "builder-" + ("chain" if b.producer else b.family)))
    # dispatchers, their keywords chosen at each call
    for rel_t, prod in rng.sample(rd.dispatchers, min(len(rd.dispatchers), rng.randint(1, 3))):
        callee = access(rd, rel_t, prod.name, bound, relative, w)
        targets.append(Target("producer", callee, None, prod, "dispatch"))
    for name in rng.sample(sorted(rd.tool_dispatchers), min(len(rd.tool_dispatchers), 2)):
        prefix = rng.choice(["agent.tool.", "self.agent.tool."])
        targets.append(Target("tool", prefix + name, None, name, "tool-dispatch"))
    # direct tool calls: decorated producers, and names that are none
    names = sorted({prod.name for prod in rd.p.producers if prod.decorated})
    others = sorted({prod.name for prod in rd.p.producers if not prod.decorated} - set(names))
    for name in rng.sample(names, min(len(names), 2)):
        prefix = rng.choice(["agent.tool.", "self.agent.tool.", "make_agent().tool."])
        targets.append(Target("tool", prefix + name, '(query="q")', name, "tool", {"query": "q"}))
    for name in rng.sample(others, min(len(others), 1)):
        targets.append(Target("tool", "agent.tool." + name, '(query="q")', name, "tool-undecorated",
                              {"query": "q"}))
    # unresolvable callees: a star import, a name bound twice, a dotted import, not `.tool`
    dead = rng.sample(["star", "twice", "dotted", "tools", "bare", "instance"], rng.randint(1, 3))
    prods = [t for t in rd.probes if t[0] == rd.probes_rel]
    rel_t, prod, args = rng.choice(prods)
    mod = module_of(rd.p, rel_t)
    for d in dead:
        rd.p.forms["reads-dead-" + d] += 1
        if d == "star" and prod.name not in bound:
            w.lineof("from %s import *" % mod)
            targets.append(Target("dead", prod.name, args, None, "dead-star"))
            bound.add(prod.name)
        elif d == "twice":
            local = "twice_" + prod.name
            if local in bound:
                continue
            bound.add(local)
            w.lineof("from %s import %s as %s" % (mod, prod.name, local))
            w.lineof("%s = %s" % (local, local))
            targets.append(Target("dead", local, args, None, "dead-twice"))
        elif d == "dotted" and not relative and rd.pkg not in bound:
            bound.add(rd.pkg)
            w.lineof("import %s" % mod)
            targets.append(Target("dead", mod + "." + prod.name, args, None, "dead-dotted"))
        elif d == "tools":
            targets.append(Target("dead", "agent.tools." + prod.name, args, None, "dead-tools"))
        elif d == "bare":
            targets.append(Target("dead", "tool." + prod.name, args, None, "dead-bare-tool"))
        elif d == "instance":
            # `Station` not imported here: an import below binds another name
            bound.add("Station")
            targets.append(Target("dead", "Station()." + rng.choice(METHOD_NAMES), args, None, "dead-instance"))
    # calls on an instance (docs/rules.md "**Calls on an instance**"): the class
    # imported, `Station().m(...)` and `ST.m(...)` (ST = Station() bound first,
    # Consumer.bind) for methods its body defines; decoys: a method its body
    # does not define, a subclass's inherited one
    if rd.station and rng.random() < 0.8:
        cls = access(rd, rd.probes_rel, "Station", bound, relative, w)
        for m, how in rng.sample(rd.station, min(len(rd.station), rng.randint(1, 3))):
            if how == "cls":
                rd.p.forms["reads-instance-classmethod"] += 1
            args, ckws = rng.choice([('("q")', {}), ('("q")', {}), ('(query="q")', {"query": "q"})])
            targets.append(Target("instance", cls + "()." + m.name, args, m, "instance-call", ckws))
            targets.append(Target("instance", m.name, args, m, "instance-name-call", ckws, instance=cls))
        defined = {m.name for m, _ in rd.station} | {"check"}
        name = rng.choice([n for n in METHOD_NAMES + PROBE_NAMES if n not in defined])
        rd.p.forms["reads-dead-instance-undefined"] += 1
        if rng.random() < 0.5:
            targets.append(Target("dead", cls + "()." + name, '("q")', None, "dead-instance-undefined"))
        else:
            targets.append(Target("dead", name, '("q")', None, "dead-instance-undefined", instance=cls))
        if rd.station_child and rng.random() < 0.6:
            child = access(rd, rd.probes_rel, "StationChild", bound, relative, w)
            m, _ = rng.choice(rd.station)
            rd.p.forms["reads-dead-instance-inherited"] += 1
            targets.append(Target("dead", child + "()." + m.name, '("q")', None, "dead-instance-inherited"))
    return targets


def write_consumer(rd, rel, relative):
    p, rng = rd.p, rd.rng
    w = W()
    p.modules[rel] = w
    w.lineof('"""Tests reading tool results."""')
    targets = consumer_targets(rd, w, rel, relative)
    w.end()
    w.end()
    c = Consumer(rd, rel, w, targets)
    if rng.random() < 0.5:
        # a module-level receiver: read at module level (counts), in functions (nested: does not)
        t = c.bind("", rng.choice([t for t in targets if t.kind != "dead"]))
        TOP = p.fresh("TOP")
        w.put(TOP + " = ")
        recv = c.put_call(t)
        # a module's name can be read from elsewhere: handed on
        c.hand_on(c.last_h)
        w.end()
        rebind = rng.random() < 0.3
        for _ in range(rng.randint(1, 2)):
            c.read_stmt("", lambda: (w.put(TOP), NO_RECV if rebind else recv)[1], recv)
        if rng.random() < 0.3:
            # an assertion message at module level: a module's name, handed on anyway
            c.message_stmt("", TOP, NO_RECV if rebind else recv, rd.recv_pool(recv), "module")
        if rng.random() < 0.5:
            # a module's variable annotation loading TOP: no read there
            # (docs/rules.md "**Annotations.**")
            w.put(p.fresh("ANN") + ": ")
            c.where_expr(TOP, rd.recv_pool(recv))
            if rng.random() < 0.5:
                w.put(" = None")
            w.end()
            p.forms["reads-module-annotation"] += 1
        w.end()
        w.end()
        w.lineof("def test_module_name():")
        if rng.random() < 0.5:
            w.lineof("    global %s" % TOP)
        c.read_stmt("    ", lambda: (w.put(TOP), NO_RECV)[1], recv)
        w.lineof("    return None")
        if rebind:
            # a function rebinding it: the module binds it twice
            w.end()
            w.end()
            w.lineof("def reset_top():")
            w.lineof("    global %s" % TOP)
            w.lineof("    %s = None" % TOP)
            p.forms["reads-decoy-module-rebound"] += 1
        p.forms["reads-module-receiver"] += 1
        w.end()
        w.end()
    if rng.random() < 0.4:
        # a receiver call in a module's or a class body's annotation: handed on
        # (docs/rules.md "**Annotations.**")
        t = c.bind("", rng.choice(targets))
        if rng.random() < 0.5:
            w.lineof("class %s:" % p.fresh("Holder"))
            c.annotation_call_block("    ", t, outer=True)
            p.forms["reads-annotation-call-class"] += 1
        else:
            c.annotation_call_block("", t, outer=True)
            p.forms["reads-annotation-call-module"] += 1
        w.end()
        w.end()
    for i in range(rng.randint(2, 4)):
        w.lineof("def test_%d(agent, query):" % i)
        for _ in range(rng.randint(2, 5)):
            c.block("    ")
        w.lineof("    return None")
        w.end()
        w.end()
    if rng.random() < 0.4:
        # a parameter default: the call is no read, the parameter no receiver
        t = c.bind("", rng.choice(targets))
        w.put("def test_param(agent, r=")
        recv = c.put_call(t)
        c.hand_on(c.last_h)
        w.put("):")
        w.end()
        c.read_stmt("    ", lambda: (w.put("r"), NO_RECV)[1], recv)
        w.lineof("    return None")
        p.forms["reads-decoy-parameter"] += 1
        w.end()
        w.end()
    if rng.random() < 0.3:
        # a name bound in sequence that is also a parameter: bound otherwise than
        # by `R = V` statements, so no receiver, every call bound handed on
        R = p.fresh("result")
        w.lineof("def test_param_rebound(agent, query, %s):" % R)
        c.sequence_block("    ", c.bind("    ", c.target()), param=R)
        w.lineof("    return None")
        w.end()
        w.end()
    if rng.random() < 0.4:
        # awaited calls (docs/rules.md "**Awaited calls.**"): `await C` is read as
        # C, so the reads of `(await C)` and of a name bound once by `R = await C`
        # are C's; decoys: the name bound twice, annotated or chained
        c.awaited_block(rng.choice(targets))
    if rng.random() < 0.3:
        # a local shadowing an imported producer: the call resolves to the local
        t = rng.choice([t for t in targets if t.kind == "producer" and "." not in t.callee and t.args is not None]
                       or [None])
        if t is not None:
            w.lineof("def test_shadowed(agent):")
            w.lineof("    %s = make_other()" % t.callee)
            c.read_stmt("    ", lambda: (w.put(t.callee + t.args), NO_RECV)[1], None)
            w.lineof("    return None")
            p.forms["reads-decoy-shadowed"] += 1
            w.end()
            w.end()


def write_readers(p, pkg, has_init, reexports, builders, helpers):
    rd = Readers(p, pkg, has_init, reexports, builders, helpers)
    rd.write_probes()
    if p.rng.random() < 0.6:
        rd.write_facade()
    if p.rng.random() < 0.6:
        rd.write_dispatch("%s/%s/dispatch.py" % (p.outrel, pkg))
        if p.rng.random() < 0.3:
            rd.write_dispatch("%s/%s/dispatch_alt.py" % (p.outrel, pkg), alt=True)
    write_consumer(rd, "%s/tests/test_reads.py" % p.outrel, relative=False)
    if p.rng.random() < 0.4:
        write_consumer(rd, "%s/%s/use_reads.py" % (p.outrel, pkg), relative=True)
    return rd


# --------------------------------------------------------------------------
# results handed to a checking function (--with-readers; docs/rules.md
# "**Results handed to a checking function.**"): sometimes
# `tests/test_checks.py`, written from a random stream of its own, whose
# tests hand results to checking functions of their own module: `def
# chk_N(r)` (undecorated, not async, standing in the module's body) whose
# parameter is only read (`r["status"]`, `r.get("status")`, `"toolUseId"
# in r`, `r["content"][0]`: no moved key; or a moved key in a keyed form, a
# whole read, the content list), named in assertion messages or returned
# whole (`return r`, `return (r)`: it passes the result through), the
# parameter first or after others (`label, r`, `label, /, r`), next to
# disqualified ones (decorated, async, in an `if`, defined twice, the
# parameter rebound, deleted, read in a lambda or a comprehension, passed
# on, returned in a tuple, a generator, `*r`, beyond a bare `*`) and to
# checking functions called in ways that are not followed (imported from
# `tests/check_helpers.py`, an attribute `chh.chk(...)`, a parenthesized
# callee, a def nested in the test, the value given by keyword, `*extra` /
# `**kw` in the call).  The value handed is a receiver call, `await C`, or
# a name bound once to one (read before and after too); a checking function
# passing it through is called where its call is read (every read form of
# Consumer.read_stmt), dropped, bound to a name read (or passed on), handed
# to another checking function (a chain), returned, put in a list, passed to
# a call or awaited, and `r = C; r = chk(r)` binds a name in sequence.  Each
# call of a followed checking function lists its reads of the parameter for
# the value's receiver, at their spans in the function (once per call: two
# calls, two reads); a result the rules hand on has its escape at H.

CHECKER_DISQUALIFIERS = ["decorated", "async", "if", "twice", "rebound", "deleted", "lambda", "comp", "passed",
                         "tuple", "generator", "varargs", "bare-star"]
CHECKER_CALL_DECOYS = ["imported", "attribute", "parenthesized", "nested-def", "keyword", "starred", "kwargs"]
CHECKER_SITES = ["statement", "assign", "read", "chain", "return", "list", "argument", "await", "sequence"]
CHECKER_VALUES = ["call", "name", "await"]
CHECKER_CONSTRUCTS = (["reads-checker-disq-" + k for k in CHECKER_DISQUALIFIERS]
                      + ["reads-checker-call-" + k for k in CHECKER_CALL_DECOYS]
                      + ["reads-checker-site-" + k for k in CHECKER_SITES]
                      + ["reads-checker-value-" + k for k in CHECKER_VALUES]
                      + ["reads-checker-" + k for k in ("status-only", "moved", "no-pass", "lead", "posonly",
                                                        "contributes", "handed", "kept", "twice-called",
                                                        "module-name")])
CHECKER_KINDS = ["checker:producer-call", "checker:name:producer-call", "checked:producer-call"]
CHECKER_PARAMS = ["r", "res", "result", "resp", "out"]


class Checker:
    """A checking function as written: its name, the arguments a call gives
    the parameters before the result's (``lead``), whether it passes the
    result through, its reads of the parameter ([(form, key, span)]), why
    it is none (``disq``) and how it is called (``call``: "name", or not
    followed: "imported", "attribute", "parenthesized", "nested-def")."""

    def __init__(self, name, P, lead, passes, reads, disq=None, call="name"):
        self.name = name
        self.P = P
        self.lead = lead
        self.passes = passes
        self.reads = reads
        self.disq = disq
        self.call = call
        self.calls = 0

    @property
    def followed(self):
        return self.disq is None and self.call == "name"


class CheckerWriter(Consumer):
    """Writes checking functions, and tests handing results to them."""

    def put_stmt(self, ind, P, moved):
        """One statement of a checking function's body about its parameter
        ``P``: reads of keys nobody moves (block reads among them), or, with
        ``moved``, a read of a moved key (or a whole or content read);
        returns its reads [(form, key, span)] that findings may list."""
        rng, w = self.rng, self.w
        w.put(ind)
        if not moved:
            kind = rng.choice(["status-sub", "status-get", "status-in", "tooluse", "block", "message"])
            reads = []
            if kind == "status-sub":
                w.put('assert %s["status"] == "success", %s' % (P, rng.choice([P, 'f"{%s!r}"' % P, '"bad"'])))
            elif kind == "status-get":
                w.put('assert %s.get("status") != "error"' % P)
            elif kind == "status-in":
                w.put('assert "status" in %s, f"got {%s}"' % (P, P))
            elif kind == "tooluse":
                w.put('assert "toolUseId" not in %s or %s["toolUseId"]' % (P, P))
            elif kind == "block":
                w.put("assert ")
                s = w.put("")[0]
                _, e = w.put('%s["content"]' % P)
                w.put("[%s] is not None" % rng.choice(["0", "0", "1"]))
                reads = [("block", None, (s, e))]
            else:
                w.put("assert %s, %s" % (rng.choice(['"status" in %s' % P, '%s["status"]' % P]),
                                         rng.choice([P, "(%s)" % P, 'f"{%s=}"' % P])))
            w.end()
            return reads
        key = rng.choice(READ_KEYS)
        K = json.dumps(key, ensure_ascii=False) if rng.random() < 0.7 else "'%s'" % key
        form = rng.choice(["subscript", "subscript", "get", "in", "not-in", "pop", "whole-dict", "whole-ne",
                           "content"])
        if form == "subscript":
            w.put("assert ")
            s = w.put("")[0]
            _, e = w.put("%s[%s]" % (P, K))
            w.put(" is not None, %s" % P)
            read = ("subscript", key)
        elif form in ("get", "pop"):
            w.put("x = ")
            s = w.put("")[0]
            _, e = w.put("%s.%s(%s, %s)" % (P, form, K, rng.choice(["0", "None"])))
            read = (form, key)
        elif form in ("in", "not-in"):
            w.put("assert ")
            s, _ = w.put(K)
            _, e = w.put(" %s %s" % ("in" if form == "in" else "not in", P))
            if form == "not-in":
                w.put(" or True")
            read = (form, key)
        elif form == "whole-dict":
            w.put("x = ")
            s = w.put("")[0]
            _, e = w.put("dict(%s)" % P)
            read = ("whole", None)
        elif form == "whole-ne":
            w.put("assert ")
            s = w.put("")[0]
            _, e = w.put("%s != None" % P)
            read = ("whole", None)
        else:
            w.put("x = len(")
            s = w.put("")[0]
            _, e = w.put('%s["content"]' % P)
            w.put(")")
            read = ("content", None)
        w.end()
        return [(read[0], read[1], (s, e))]

    def write_checker(self, ind, disq=None, call="name", passes=None, moved=None):
        """Write a checking function (or a disqualified one) at ``ind``; its Checker."""
        p, rng, w = self.p, self.rng, self.w
        name = p.fresh("chk")
        P = rng.choice(CHECKER_PARAMS)
        if passes is None:
            passes = rng.random() < 0.75
        if moved is None:
            moved = rng.random() < 0.4
        lead = rng.choice([None, None, None, "lead", "posonly"])
        head, args = P, []
        if disq == "varargs":
            head = "*" + P
        elif disq == "bare-star":
            head, args = "label, *, %s=None" % P, ['"x"']
        elif lead == "lead":
            head, args = "label, %s, note=None" % P, ['"x"']
            p.forms["reads-checker-lead"] += 1
        elif lead == "posonly":
            head, args = "label, /, %s: dict = None" % P, ['"x"']
            p.forms["reads-checker-posonly"] += 1
        elif rng.random() < 0.3:
            head = rng.choice(["%s, /" % P, "%s: dict" % P, "%s=None" % P, "%s, *, strict=False" % P])
        if disq is not None:
            p.forms["reads-checker-disq-" + disq] += 1
        if call != "name":
            p.forms["reads-checker-call-" + call] += 1
        inner = ind
        first = len(w.parts)
        if disq == "decorated":
            w.lineof(ind + "@chk_deco")
        elif disq == "if":
            w.lineof(ind + "if True:")
            inner = ind + "    "
        w.lineof(inner + ("async def " if disq == "async" else "def ") + "%s(%s):" % (name, head))
        body = inner + "    "
        if disq == "rebound":
            w.lineof(body + "%s = dict(%s)" % (P, P))
        reads = []
        any_moved = False
        for i in range(rng.randint(1, 3)):
            m = moved and (i == 0 or rng.random() < 0.4)
            reads.extend(self.put_stmt(body, P, m))
            any_moved |= m
        if disq == "lambda":
            w.lineof(body + 'hook = lambda: %s["status"]' % P)
        elif disq == "comp":
            w.lineof(body + 'x = [%s[k] for k in ("status",)]' % P)
        elif disq == "passed":
            w.lineof(body + "print(%s)" % P)
        elif disq == "generator":
            w.lineof(body + "yield")
        elif disq == "deleted":
            w.lineof(body + "del %s" % P)
        if disq == "tuple":
            w.lineof(body + "return %s, 1" % P)
        elif passes:
            if rng.random() < 0.25:
                w.lineof(body + 'if %s.get("status") == "error":' % P)
                w.lineof(body + "    return (%s)" % P)
            w.lineof(body + "return " + rng.choice([P, P, "(%s)" % P]))
        elif rng.random() < 0.5:
            w.lineof(body + rng.choice(["return None", "return True", "pass"]))
        if disq == "twice":
            # the same def again: the module binds the name twice
            for line in "".join(w.parts[first:]).split("\n"):
                if line:
                    w.lineof(line)
        c = Checker(name, P, args, passes and disq != "tuple", reads, disq, call)
        if c.followed:
            p.forms["reads-checker-" + ("moved" if any_moved else "status-only")] += 1
            if not c.passes:
                p.forms["reads-checker-no-pass"] += 1
        return c

    def put_call_of(self, c, put_v, keyword=False, starred=None):
        """Write the call of checker ``c`` around the value ``put_v()`` writes
        (by keyword, or with ``*extra`` / ``**kw`` after it); what put_v returned."""
        w = self.w
        callee = {"attribute": "chh." + c.name, "parenthesized": "(%s)" % c.name}.get(c.call, c.name)
        w.put(callee + "(" + "".join(a + ", " for a in c.lead))
        if keyword:
            w.put(c.P + "=")
        got = put_v()
        w.put({None: ")", "starred": ", *extra)", "kwargs": ", **kw)"}[starred])
        return got

    def contribute(self, c, recv):
        """The reads checker ``c`` contributes for the receiver ``recv`` (a call of it)."""
        if recv is None:
            return
        c.calls += 1
        if c.calls == 2:
            self.p.forms["reads-checker-twice-called"] += 1
        for form, key, span in c.reads:
            self.p.reads.append((self.rel, self.named(recv, "checker:"), form, key, span))
        if c.reads:
            self.p.forms["reads-checker-contributes"] += 1

    def checked_block(self, ind, t, good, bad, is_async):
        """One result handed to a checking function, in a test whose body is at ``ind``."""
        p, rng, w = self.p, self.rng, self.w
        t = self.bind(ind, t)
        vform = rng.choice(["call", "call", "name", "name"] + (["await"] if is_async else []))
        p.forms["reads-checker-value-" + vform] += 1
        ks, pool = self.call_keys(t)
        if pool is None:
            pool = self.rd.recv_pool(self.peek(t))
        state = {}
        oks = []  # the uses of a name V: does each keep the result?
        if vform == "name":
            R = p.fresh("r")
            w.put(ind + R + " = ")
            recv = self.put_call(t, ks)
            h = self.last_h
            w.end()
            named = self.named(recv)
            if rng.random() < 0.4:
                oks.append(self.read_stmt(ind, lambda: (w.put(R), named)[1], None, pool))

            def put_v():
                w.put(R)
                state["base"] = named
                return named
        else:
            def put_v():
                if vform == "await":
                    (line, col), _ = w.put("await ")
                    r = self.put_call(t, ks)
                    state["h"] = ((line, col), w.put("")[0], r)
                    r = None if r is None else Recv("await:" + r.kind, r.tags, r.via, r.tools, r.ckws, r.wide)
                else:
                    r = self.put_call(t, ks)
                    state["h"] = self.last_h
                self.last_h = None  # read_stmt hands nothing on by itself
                state["base"] = r
                return r
        # the checking function, how it is called, where its call stands
        c = rng.choice(bad) if bad and rng.random() < 0.25 else rng.choice(good)
        site = rng.choice(CHECKER_SITES)
        if site == "await" and not is_async:
            site = "list"
        if site == "sequence" and vform != "name":
            site = "assign"
        keyword = starred = None
        if c.followed and rng.random() < 0.1:
            if rng.random() < 0.4:
                keyword = True
                p.forms["reads-checker-call-keyword"] += 1
            else:
                starred = rng.choice(["starred", "kwargs"])
                p.forms["reads-checker-call-" + starred] += 1
        outer_ok = c.followed and not keyword and not starred
        inner = None
        if site == "chain":
            site = rng.choice(["statement", "assign", "read", "return"])
            inner = rng.choice([g for g in good if g.passes])
        carrier = outer_ok and c.passes
        p.forms["reads-checker-site-" + ("chain" if inner is not None else site)] += 1

        def put_g():
            if inner is not None:
                return self.put_call_of(c, lambda: self.put_call_of(inner, put_v), keyword, starred)
            return self.put_call_of(c, put_v, keyword, starred)

        def through(v):
            # the Recv of a load of what G carries
            return self.named(state.get("base"), "checked:") if carrier else None
        # judged as H (docs/rules.md): only a carrier is judged; a value handed
        # to no checking function's call is handed on
        if site == "statement":
            w.put(ind)
            put_g()
            w.end()
            handed = not outer_ok
        elif site in ("assign", "sequence"):
            R2 = R if site == "sequence" else p.fresh("checked")
            w.put(ind + R2 + " = ")
            v = put_g()
            w.end()
            g = through(v)
            reads = [self.read_stmt(ind, lambda: (w.put(R2), g)[1], None, pool) for _ in range(rng.randint(1, 2))]
            if rng.random() < 0.3:
                reads.append(self.message_stmt(ind, R2, g, pool, "name"))
            handed = not outer_ok or (carrier and not all(reads))
        elif site == "read":
            if carrier:
                def put():
                    return through(put_g())
                handed = not self.read_stmt(ind, put, None, pool)
            else:
                w.put(ind + "x = ")
                put_g()
                w.end()
                handed = not outer_ok
        else:
            pre, post = {"return": ("if query:\n%s    return " % ind, ""), "list": ("x = [", ", 1]"),
                         "argument": (rng.choice(["print(", "check_result(", 'emit("x", ']), ")"),
                         "await": ("await ", "")}[site]
            head, _, last = pre.rpartition("\n")
            if head:
                w.lineof(ind + head)
                w.put(last)
            else:
                w.put(ind + pre)
            put_g()
            w.put(post)
            w.end()
            handed = not outer_ok or carrier
        # the reads the checking functions contribute, for the value's receiver
        base = state.get("base")
        if inner is not None:
            self.contribute(inner, base)
        if outer_ok:
            self.contribute(c, base)
        p.forms["reads-checker-" + ("handed" if handed else "kept")] += 1
        if vform == "name":
            oks.append(not handed)
            if site != "sequence" and rng.random() < 0.5:
                oks.append(self.read_stmt(ind, lambda: (w.put(R), named)[1], None, pool))
            if not all(oks):
                self.hand_on(h)
        elif handed:
            self.hand_on(state.get("h"))


def write_check_helpers(rd, rel):
    """`tests/check_helpers.py`: checking functions of another module (their
    calls from test_checks.py are not followed)."""
    w = W()
    rd.p.modules[rel] = w
    w.lineof('"""Checking functions of their own module."""')
    cw = CheckerWriter(rd, rel, w, [])
    out = []
    for _ in range(rd.rng.randint(1, 2)):
        w.end()
        w.end()
        out.append(cw.write_checker("", passes=True))
    return out


def write_checkers(rd):
    """`tests/test_checks.py` (see above), in a share of the programs."""
    p, rng = rd.p, rd.rng
    if rng.random() < 0.4:
        return
    rel = "%s/tests/test_checks.py" % p.outrel
    helpers = write_check_helpers(rd, "%s/tests/check_helpers.py" % p.outrel) if rng.random() < 0.6 else []
    w = W()
    p.modules[rel] = w
    w.lineof('"""Tests handing results to checking functions of their own."""')
    targets = [t for t in consumer_targets(rd, w, rel, relative=False)]
    bad = []
    if helpers:
        h = rng.choice(helpers)
        if rng.random() < 0.5:
            w.lineof("from tests.check_helpers import %s" % h.name)
            bad.append(Checker(h.name, h.P, h.lead, h.passes, h.reads, None, "imported"))
            p.forms["reads-checker-call-imported"] += 1
        else:
            w.lineof("import tests.check_helpers as chh")
            bad.append(Checker(h.name, h.P, h.lead, h.passes, h.reads, None, "attribute"))
            p.forms["reads-checker-call-attribute"] += 1
    c = CheckerWriter(rd, rel, w, targets)
    w.end()
    w.end()
    w.lineof("def chk_deco(f):")
    w.lineof("    return f")
    good = []
    for i in range(rng.randint(2, 5)):
        w.end()
        w.end()
        good.append(c.write_checker("", passes=True if i == 0 else None, moved=False if i == 0 else None))
    for disq in rng.sample(CHECKER_DISQUALIFIERS, rng.randint(1, 4)):
        w.end()
        w.end()
        bad.append(c.write_checker("", disq=disq))
    if rng.random() < 0.4:
        g = rng.choice(good)
        bad.append(Checker(g.name, g.P, g.lead, g.passes, g.reads, None, "parenthesized"))
        p.forms["reads-checker-call-parenthesized"] += 1
    live = [t for t in targets if t.kind != "dead"] or targets
    if rng.random() < 0.25:
        # a module's name bound once to a result, handed to a checking
        # function at module level: a V (its result handed on anyway), so the
        # function's reads are reads of the result, listed beside the escape
        t = c.bind("", rng.choice(live))
        TOP = p.fresh("TOP")
        w.end()
        w.end()
        w.put(TOP + " = ")
        recv = c.put_call(t)
        c.hand_on(c.last_h)
        w.end()
        g = rng.choice(good)
        w.lineof("%s(%s%s)" % (g.name, "".join(a + ", " for a in g.lead), TOP))
        c.contribute(g, recv)
        p.forms["reads-checker-module-name"] += 1
    for i in range(rng.randint(1, 3)):
        is_async = i == 1 and rng.random() < 0.6
        w.end()
        w.end()
        w.lineof("%sdef test_checks_%d(agent, query):" % ("async " if is_async else "", i))
        local = []
        if rng.random() < 0.2:
            # a checking function nested in the test: no module binding
            local.append(c.write_checker("    ", call="nested-def", passes=True))
        for _ in range(rng.randint(2, 5)):
            t = rng.choice(live if rng.random() < 0.9 else targets)
            c.checked_block("    ", t, good, bad + local, is_async)
        w.lineof("    return None")


# --------------------------------------------------------------------------
# possible reads (--with-readers): front ends reading results the SDK hands on
# (docs/rules.md "**Possible reads.**")
#
# Sometimes a program also gets `PKG/sdk_hooks.py`, a front end reading tool
# results that no producer is traced to: marked names (`tool_result`, a
# parameter or a name bound otherwise than by one `R = call`), marked
# attributes (`message.toolResult`, `make_view().tool_result`), subscripts
# `X["toolResult"]`, parameters annotated `ToolResult` / `X.ToolResult`
# (also those of a nested def) and `event.result` of a parameter annotated
# `AfterToolCallEvent` / `AfterToolInvocationEvent` (or `hooks.` ones).  Their
# keyed reads of a key some finding has are possible reads of every finding
# of that key; next to decoys: the same receivers' whole / content / block
# uses, keys that no finding has, a marked name bound once by `R = call` (an
# unresolved call: nothing; a producer call: the call's reads, none
# possible), the annotated parameters read from nested defs, lambdas,
# comprehensions and class bodies, `*args` / `**kwargs`, string and
# `Optional[...]` annotations, other events and unannotated ones, names
# differing in case, `X["toolResult"]` as a target, a call of a marked
# attribute.  Aliases: names bound by a plain one-target `N = E`, E
# `X["toolResult"]` (also in parentheses, with a parenthesized index, after
# `["content"][0]`), a marked attribute (also of a call) or a hook event's
# `event.result`, read in the same function, from module level in functions
# and at module level, in a nested def or class, through `nonlocal` (bound in
# the nested def, read in the outer) and `global` (bound in a hook, read in
# another function), bound a second time by a call (the reads before the
# alias binding too), a marked alias (one receiver); next to the decoys
# `N: T = E`, `a = N = E`, `N, z = E, 1`, `(N := E)`, `N = X.get(...)` and
# other calls, `N = alias` (no chains), `N = E if c else None`, a spelled
# index, a local of the same name bound by a call, `N = plain.result` of an
# unannotated event and `N = event.result` in a def nested in the hook
# (judged where it stands).  A file is searched for the reads of a key only
# when its text holds a marker and that key between quotes as written:
# sometimes `PKG/hook_spelled.py` holds a possible read whose key is spelled
# so that the text does not hold it (implicit concatenation, an escape),
# alone (not searched), next to the same key quoted (a comment: searched),
# next to another quoted moved key (a comment, another read: not searched for
# this key) or a key of suppressed findings only (not searched); or `X[I]` with `I` a `"toolResult"` spelled
# so (no possible receiver, the file searched or not).  `X[I]` is a possible
# receiver only when `I` (parentheses seen through) is written exactly
# `"toolResult"` or `'toolResult'`: `sdk_hooks.py` holds `X[("toolResult")]`
# and, as decoys, indexes concatenated, escaped, prefixed or triple-quoted.  The keys of the front ends are
# spelled in every way too.  The front ends are written last, from a random
# stream of their own.

POSSIBLE_KINDS = ["possible:name", "possible:attribute", "possible:subscript", "possible:annotated",
                  "possible:event", "possible:alias"]
# where Frontend.def_read writes a possible receiver's read: in an annotation
# (a nested def's, a variable's: no read, docs/rules.md "**Annotations.**"),
# or in what stands in the function (a def's default, an annotated
# assignment's value: a possible read)
POSSIBLE_PLACES = ["annotation", "annotation-variable", "default", "value"]
POSSIBLE_DECOYS = ["reads-possible-decoy-" + k for k in (
    "not-keyed", "key-not-moved", "bound-call", "traced", "nested-def", "nested-lambda", "nested-comp",
    "nested-class", "star", "string-annotation", "optional", "other-event", "unannotated-event", "case",
    "target", "marked-call", "bound-call-await", "traced-await", "module-bound", "global-bound")] + [
        "reads-possible-" + k for k in ("module-rebound", "module-level",
        "param", "rebound", "annotated-binding", "for", "from-subscript", "call-attribute", "nested-own",
        "comp-iter", "attribute-annotation", "marked-and-annotated", "spelled-key-alone", "spelled-key-comment",
        "spelled-key-other-read", "spelled-receiver-alone", "spelled-receiver-searched", "paren-index")] + [
            "reads-possible-decoy-index-spelling"] + [
            "reads-possible-%s-%s" % (("read" if where in ("default", "value") else "decoy"), where)
            for where in POSSIBLE_PLACES] + [
            "reads-possible-placed-%s-%s" % (kind, where) for where in POSSIBLE_PLACES
            for kind in ("name", "attribute", "subscript", "annotated", "event")] + [
                "reads-possible-alias-" + k for k in (
                    "subscript", "subscript-paren", "subscript-paren-index", "subscript-content", "attribute",
                    "attribute-call", "event", "local", "module", "module-level-read", "nested-def",
                    "nested-class", "nonlocal", "global", "rebound", "marked", "event-nested-read")] + [
                "reads-possible-decoy-alias-" + k for k in (
                    "annotated", "chained", "tuple", "walrus", "call", "of-alias", "conditional", "spelled",
                    "shadowed", "unannotated-event", "event-nested")]
# a file is searched for possible receivers only when its text holds one of
# these and a moved key between quotes as written
FILE_MARKERS = ("tool_result", "toolResult", "ToolResult", "ToolCallEvent", "ToolInvocationEvent")
# attributes and names marked as tool results
MARKED_NAMES = ["tool_result", "last_tool_result", "tool_results", "toolResult", "prev_toolResult"]
MARKED_ATTRS = ["toolResult", "tool_result", "last_tool_result", "toolResults"]
# an index `toolResult` by value, not written exactly `"toolResult"` or
# `'toolResult'`: `X[I]` is no possible receiver
SPELLED_TOOL_RESULT = ['"tool" "Result"', "'tool' 'Result'", '("tool" "Result")', 'r"toolResult"',
                       "R'toolResult'", 'u"toolResult"', '"tool\\x52esult"', "'\\u0074oolResult'",
                       '"""toolResult"""', "'''toolResult'''", '"toolResult" ""']


def is_marked_name(name):
    return "tool_result" in name or "toolResult" in name


class Frontend(ModuleWriter):
    """Writes `PKG/sdk_hooks.py`: possible receivers and their decoys."""

    def __init__(self, rd, rel, w):
        super().__init__(rd, rel, w)
        self.keys = sorted({f["key"] for _, f in self.p.findings if f["key"] is not None})
        self.consumer = Consumer(rd, rel, w, [])

    def key(self):
        rng = self.rng
        if self.keys and rng.random() < 0.75:
            return rng.choice(self.keys)
        self.p.forms["reads-possible-decoy-key-not-moved"] += 1
        return rng.choice(NOT_MOVED_KEYS + ["unrelated_%d" % rng.randint(1, 9)])

    def stmt(self, ind, put, kind):
        """One statement using the possible receiver ``put()`` writes (of
        receiver ``kind``, or None: no possible receiver); records the
        possible read it makes, if any."""
        p, rng, w = self.p, self.rng, self.w
        form = rng.choice(["subscript", "subscript", "store", "store-aug", "delete", "get", "get-default", "pop",
                           "pop-default", "setdefault", "in", "not-in", "not-keyed"])
        w.put(ind)
        read = None
        if form == "not-keyed":
            # whole, content and block uses: no possible reads
            p.forms["reads-possible-decoy-not-keyed"] += 1
            pre, post = rng.choice([("x = list(", ".keys())"), ("x = json.dumps(", ")"), ("x = {**", "}"),
                                    ("x = ", '["content"][0]'), ("x = len(", '["content"])'),
                                    ("for k, v in ", ".items():"), ("x = dict(", ")"), ("", '["content"] = []')])
            w.put(pre)
            put()
            w.put(post)
            if post.endswith(":"):
                w.end()
                w.put(ind + "    pass")
            w.end()
            return
        key = self.key()
        K = self.consumer.key_text(key)
        if form in ("subscript", "store", "store-aug", "delete"):
            lead = {"subscript": rng.choice(["x = ", "assert ", ""]), "delete": "del "}.get(form, "")
            w.put(lead)
            s = w.put("")[0]
            put()
            _, e = w.put("[" + K + "]")
            w.put(" = 1" if form == "store" else " += 1" if form == "store-aug" else "")
            if lead == "assert ":
                w.put(" is not None")
            f = "subscript" if form == "subscript" else "delete" if form == "delete" else "store"
            # `E["content"]`: the content list, never a keyed read
            read = None if key == CONTENT else (f, s, e)
        elif form in ("get", "get-default", "pop", "pop-default", "setdefault"):
            w.put(rng.choice(["x = ", ""]))
            s = w.put("")[0]
            put()
            m = form.split("-")[0]
            arg = {"get": K, "get-default": K + ", None", "pop": K, "pop-default": K + ", 0",
                   "setdefault": K + ", []"}[form]
            _, e = w.put(".%s(%s)" % (m, arg))
            read = (m, s, e)
        else:
            lead = rng.choice(["x = ", "assert ", "if "])
            w.put(lead)
            s, _ = w.put(K)
            w.put(" not in " if form == "not-in" else " in ")
            put()
            e = w.put("")[0]
            read = (form, s, e)
            if lead == "if ":
                w.put(":")
                w.end()
                w.put(ind + "    pass")
        w.end()
        if read is not None and kind is not None:
            p.possible_reads.append((self.rel, kind, read[0], key, (read[1], read[2])))
            p.forms["reads-possible-written-" + read[0]] += 1

    def reads(self, ind, text, kind, n=None):
        """A few statements using the receiver ``text``."""
        for _ in range(n or self.rng.randint(1, 3)):
            self.stmt(ind, lambda: self.w.put(text), kind)

    def def_read(self, ind, text, kind, where):
        """A read of the possible receiver ``text`` (of receiver ``kind``) at
        ``ind`` in an annotation (docs/rules.md "**Annotations.**": nothing
        in one is read, possible reads neither): ``where`` "annotation", a
        nested def's parameter's (positional, keyword-only) or return's;
        "annotation-variable", a variable's (`y: A = None`, `y: A`); or in
        what stands in the function: "default", a nested def's default;
        "value", an annotated assignment's value (`y: dict = E`).  Records
        the possible read of the last two."""
        p, rng, w = self.p, self.rng, self.w
        key = self.key()
        K = self.consumer.key_text(key)
        spot = None
        if where == "annotation":
            spot = rng.choice(["param", "kwonly", "return"])
            w.put(ind + "%sdef %s(%s" % (rng.choice(["", "async "]), p.fresh("inner"),
                                        {"param": "v: ", "kwonly": "*, v: ", "return": "v=None) -> "}[spot]))
        elif where == "default":
            w.put(ind + "def %s(v=" % p.fresh("inner"))
        elif where == "annotation-variable":
            w.put(ind + "%s: " % p.fresh("ann"))
        else:
            w.put(ind + "%s: dict = " % p.fresh("val"))
        form = rng.choice(["subscript", "get", "in"])
        if form == "subscript":
            s = w.put(text)[0]
            _, e = w.put("[" + K + "]")
        elif form == "get":
            s = w.put(text)[0]
            _, e = w.put(".get(" + K + ")")
        else:
            s, _ = w.put(K + " in ")
            _, e = w.put(text)
        if where in ("annotation", "default"):
            w.put(":" if spot == "return" else "):")
            w.end()
            w.lineof(ind + "    return v")
        else:
            if where == "annotation-variable" and rng.random() < 0.6:
                w.put(" = None")
            w.end()
        read = where in ("default", "value")
        p.forms["reads-possible-%s-%s" % ("read" if read else "decoy", where)] += 1
        if kind is not None:
            p.forms["reads-possible-placed-%s-%s" % (kind.split(":")[1], where)] += 1
        if read and kind is not None and not (form == "subscript" and key == CONTENT):
            p.possible_reads.append((self.rel, kind, form, key, (s, e)))
            p.forms["reads-possible-written-" + form] += 1

    # -- functions ---------------------------------------------------------

    def write(self):
        p, rng, w = self.p, self.rng, self.w
        w.lineof('"""A front end reading the tool results the SDK hands on."""')
        w.lineof("import json")
        w.lineof("from typing import Optional")
        w.lineof("from strands import hooks")
        w.lineof("from strands.hooks import AfterToolCallEvent, AfterToolInvocationEvent, BeforeToolCallEvent")
        w.lineof("from strands.types import tools as sdk_types")
        w.lineof("from strands.types.tools import ToolResult")
        bound = {"json", "Optional", "hooks", "AfterToolCallEvent", "AfterToolInvocationEvent",
                 "BeforeToolCallEvent", "sdk_types", "ToolResult", "x", "k", "v"}
        traced = []
        pool = [t for t in self.rd.probes + self.rd.base]
        for rel_t, prod, args in rng.sample(pool, min(len(pool), rng.randint(0, 2))):
            traced.append((access(self.rd, rel_t, prod.name, bound, True, w), prod, args))
        w.end()
        w.end()
        writers = [self.write_marked, self.write_annotated, self.write_event, self.write_decoys,
                   self.write_module_bound, self.write_aliases, self.write_class_block]
        for fn in rng.sample(writers, rng.randint(2, 4)) + [self.write_marked]:
            fn(traced)
            w.end()
            w.end()

    def write_class_block(self, traced):
        """A method under an `if` or `try` of a class body (beside a plain
        method), reading a parameter annotated `ToolResult`: the read's own
        statements name no marker."""
        p, rng, w = self.p, self.rng, self.w
        P = rng.choice(["result", "res", "tr", "payload"])
        w.lineof("class %s:" % p.fresh("Watcher"))
        w.lineof("    def %s(self):" % p.fresh("plain"))
        w.lineof("        return None")
        w.end()
        block = rng.choice(["if", "try"])
        w.lineof("    if json:" if block == "if" else "    try:")
        w.lineof("        def %s(self, %s: ToolResult):" % (p.fresh("on_result"), P))
        self.reads("            ", P, "possible:annotated")
        w.lineof("            return None")
        if block == "try":
            w.lineof("    except ImportError:")
            w.lineof("        pass")
        p.forms["reads-possible-class-block-" + block] += 1

    def write_module_bound(self, traced):
        """Marked names the module binds, read in functions (and at module
        level): bound once by `R = call` at module level, or by a function
        declaring it `global` (no possible receiver), or bound twice at
        module level (a possible receiver). The exclusion is judged on the
        module's own statements, which stand apart from the reads."""
        p, rng, w = self.p, self.rng, self.w
        R = p.fresh(rng.choice(MARKED_NAMES))
        how = rng.choice(["once", "twice", "global"])
        if how == "global":
            w.lineof("def %s(agent):" % p.fresh("remember"))
            w.lineof("    global %s" % R)
            w.lineof("    %s = fetch_result(agent)" % R)
            p.forms["reads-possible-decoy-global-bound"] += 1
        else:
            for _ in range(1 if how == "once" else 2):
                w.lineof("%s = fetch_result(agent)" % R)
            p.forms["reads-possible-" + ("decoy-module-bound" if how == "once" else "module-rebound")] += 1
        w.end()
        w.end()
        kind = "possible:name" if how == "twice" else None
        w.lineof("def %s():" % p.fresh("render"))
        self.reads("    ", R, kind)
        w.lineof("    return None")
        if rng.random() < 0.3:
            w.end()
            p.forms["reads-possible-module-level"] += 1
            self.reads("", R, kind, 1)

    def write_marked(self, traced):
        """Marked names and attributes, `X["toolResult"]`."""
        p, rng, w = self.p, self.rng, self.w
        name = rng.choice(MARKED_NAMES)
        msg = rng.choice(["message", "msg", "block"])
        w.lineof("def %s(%s, %s):" % (p.fresh("render"), name, msg))
        p.forms["reads-possible-param"] += 1
        for _ in range(rng.randint(2, 5)):
            choice = rng.choice(["name", "name", "attr", "attr-call", "subscript", "subscript-content",
                                 "subscript-paren", "subscript-paren-index", "rebound", "annotated-binding",
                                 "for", "from-subscript", "case", "target", "marked-call", "index-spelling",
                                 "in-def"])
            if choice == "name":
                self.reads("    ", name, "possible:name")
            elif choice == "in-def":
                # a marked name, a marked attribute, `X["toolResult"]` in an
                # annotation: none ("**Annotations.**"); in a default or an
                # annotated assignment's value: one
                text, kind = rng.choice([(name, "possible:name"),
                                         ("%s.%s" % (msg, rng.choice(MARKED_ATTRS)), "possible:attribute"),
                                         ('%s["toolResult"]' % msg, "possible:subscript")])
                self.def_read("    ", text, kind, rng.choice(POSSIBLE_PLACES))
            elif choice == "attr":
                self.reads("    ", "%s.%s" % (msg, rng.choice(MARKED_ATTRS)), "possible:attribute")
            elif choice == "attr-call":
                p.forms["reads-possible-call-attribute"] += 1
                self.reads("    ", "make_view(%s).%s" % (msg, rng.choice(MARKED_ATTRS)), "possible:attribute")
            elif choice == "subscript":
                q = rng.choice(['"toolResult"', "'toolResult'"])
                self.reads("    ", "%s[%s]" % (msg, q), "possible:subscript")
            elif choice == "subscript-content":
                self.reads("    ", '%s["content"][0]["toolResult"]' % msg, "possible:subscript")
            elif choice == "subscript-paren":
                self.reads("    ", '(%s)["toolResult"]' % msg, "possible:subscript")
            elif choice == "subscript-paren-index":
                p.forms["reads-possible-paren-index"] += 1
                q = rng.choice(['("toolResult")', "('toolResult')", '( ("toolResult") )'])
                self.reads("    ", "%s[%s]" % (msg, q), "possible:subscript")
            elif choice == "rebound":
                self.bound_marked("rebound", ["    %s = fetch_result(" + msg + ")"] * 2)
            elif choice == "annotated-binding":
                self.bound_marked("annotated-binding", ["    %s: dict = fetch_result(" + msg + ")"])
            elif choice == "for":
                self.bound_marked("for", ["    for %s in " + name + ":"], "        ")
            elif choice == "from-subscript":
                self.bound_marked("from-subscript", ["    %s = " + msg + '["toolResult"]'])
            elif choice == "index-spelling":
                # `X[I]` with I a toolResult not written exactly `"toolResult"`
                # or `'toolResult'`: no possible receiver
                p.forms["reads-possible-decoy-index-spelling"] += 1
                self.reads("    ", "%s[%s]" % (msg, rng.choice(SPELLED_TOOL_RESULT)), None)
            elif choice == "case":
                p.forms["reads-possible-decoy-case"] += 1
                self.reads("    ", rng.choice(["TOOL_RESULT", "ToolResult", "tool_Result", "toolresult",
                                               '%s["toolresult"]' % msg, '%s["ToolResult"]' % msg,
                                               "%s.ToolResult" % msg]), None)
            elif choice == "target":
                p.forms["reads-possible-decoy-target"] += 1
                if rng.random() < 0.5:
                    w.lineof('    %s["toolResult"] = {%s: 1}' % (msg, json.dumps(self.key(), ensure_ascii=False)))
                else:
                    w.lineof('    del %s["toolResult"]' % msg)
            else:
                p.forms["reads-possible-decoy-marked-call"] += 1
                self.reads("    ", "%s.%s()" % (msg, rng.choice(MARKED_ATTRS)), None)
        self.write_bound(traced, "    ")
        w.lineof("    return None")

    def bound_marked(self, form, lines, ind="    "):
        """A fresh marked name ``R`` bound by ``lines`` (each with one ``%s``
        for R), not by one `R = call`: read as a possible receiver."""
        R = self.p.fresh("tool_result")
        for line in lines:
            self.w.lineof(line % R)
        self.p.forms["reads-possible-" + form] += 1
        self.reads(ind, R, "possible:name")

    def write_bound(self, traced, ind, awaited=False):
        """A marked name bound once by `R = call` (in an ``async def``
        (``awaited``) sometimes `R = await call`, docs/rules.md "**Awaited
        calls.**"): no possible receiver."""
        p, rng, w = self.p, self.rng, self.w
        if rng.random() < 0.5:
            return
        R = p.fresh("tool_result")
        pre, post = ("", "")
        if awaited and rng.random() < 0.6:
            pre, post = AWAIT_SPELLINGS[rng.choice(sorted(AWAIT_SPELLINGS))]
        suffix = "-await" if pre else ""
        if traced and rng.random() < 0.6:
            callee, prod, args = rng.choice(traced)
            # H (docs/rules.md "**Results handed on.**"): the call, or `await C`
            # without the parentheses around it
            at = 1 + len(ind) + len(R + " = ")
            h_start = (w.line, at + (pre.index("await") if pre else 0))
            h_end = (w.line, at + len(pre) + len(callee + args) + (1 if pre.endswith("(") else 0))
            w.lineof("%s%s = %s%s%s%s" % (ind, R, pre, callee, args, post))
            p.forms["reads-possible-decoy-traced" + suffix] += 1
            recv = Recv("name:await:producer-call" if pre else "name:producer-call", via=[prod])

            def put():
                w.put(R)
                return recv
            reads = [self.consumer.read_stmt(ind, put, recv) for _ in range(rng.randint(1, 2))]
            if not all(reads):
                self.consumer.hand_on((h_start, h_end, Recv("producer-call", via=[prod])))
        else:
            w.lineof("%s%s = %sfetch_result(agent)%s" % (ind, R, pre, post))
            p.forms["reads-possible-decoy-bound-call" + suffix] += 1
            self.reads(ind, R, None)

    def write_annotated(self, traced):
        """Parameters annotated `ToolResult`, read in the function's own scope only."""
        p, rng, w = self.p, self.rng, self.w
        P = rng.choice(["result", "res", "tr", "payload"])
        ann = rng.choice(["ToolResult", "sdk_types.ToolResult"])
        if ann != "ToolResult":
            p.forms["reads-possible-attribute-annotation"] += 1
        head = "%s: %s" % (P, ann)
        extra = []
        if rng.random() < 0.4:
            Q = rng.choice(MARKED_NAMES)
            extra.append("%s: ToolResult" % Q)
            p.forms["reads-possible-marked-and-annotated"] += 1
        else:
            Q = None
        decoy = rng.choice(["string", "optional", None])
        if decoy == "string":
            extra.append('quoted: "ToolResult"')
            p.forms["reads-possible-decoy-string-annotation"] += 1
        elif decoy == "optional":
            extra.append("quoted: Optional[ToolResult]")
            p.forms["reads-possible-decoy-optional"] += 1
        star = rng.random() < 0.3
        if star:
            extra.append("*more: ToolResult")
            extra.append("**named: ToolResult")
            p.forms["reads-possible-decoy-star"] += 1
        w.lineof("def %s(%s):" % (p.fresh("handle"), ", ".join([head] + extra)))
        self.reads("    ", P, "possible:annotated")
        if Q is not None:
            self.reads("    ", Q, "possible:annotated", 1)
        if decoy is not None:
            self.reads("    ", "quoted", None, 1)
        if star:
            self.reads("    ", rng.choice(["more", "named"]), None, 1)
        for _ in range(rng.randint(1, 3)):
            nested = rng.choice(["def", "lambda", "comp", "class", "comp-iter", "own", "placed", "placed"])
            if nested == "placed":
                # in an annotation nothing is read ("**Annotations.**"); a
                # def's defaults and an annotated assignment's value stand in
                # the function
                self.def_read("    ", P, "possible:annotated", rng.choice(POSSIBLE_PLACES))
                continue
            k = json.dumps(self.key(), ensure_ascii=False)
            if nested == "def":
                w.lineof("    def %s():" % p.fresh("inner"))
                self.reads("        ", P, None, 1)
                w.lineof("        return None")
            elif nested == "lambda":
                w.lineof("    hook = lambda: %s[%s]" % (P, k))
            elif nested == "comp":
                w.lineof("    x = [%s[%s] for _ in range(2)]" % (P, k))
            elif nested == "class":
                w.lineof("    class %s:" % p.fresh("Inner"))
                self.reads("        ", P, None, 1)
            elif nested == "comp-iter":
                # the first iterable stands in the function's own scope: a possible read
                key = self.key()
                w.put("    x = [k for k in ")
                s = w.put("")[0]
                _, e = w.put("%s.get(%s, ())" % (P, json.dumps(key, ensure_ascii=False)))
                w.put("]")
                w.end()
                p.possible_reads.append((self.rel, "possible:annotated", "get", key, (s, e)))
                p.forms["reads-possible-comp-iter"] += 1
                continue
            else:
                # a nested def's own annotated parameter: read in its own scope
                w.lineof("    def %s(inner_result: ToolResult):" % p.fresh("inner"))
                self.reads("        ", "inner_result", "possible:annotated", 1)
                w.lineof("        return None")
                p.forms["reads-possible-nested-own"] += 1
                continue
            p.forms["reads-possible-decoy-nested-" + nested] += 1
        w.lineof("    return None")

    def write_event(self, traced):
        """`event.result` of a hook event parameter."""
        p, rng, w = self.p, self.rng, self.w
        ann = rng.choice(["AfterToolCallEvent", "AfterToolInvocationEvent", "hooks.AfterToolCallEvent",
                          "hooks.AfterToolInvocationEvent"])
        E = rng.choice(["event", "ev", "hook_event"])
        extra = ""
        if rng.random() < 0.4:
            extra = ", before: BeforeToolCallEvent"
            p.forms["reads-possible-decoy-other-event"] += 1
        if rng.random() < 0.4:
            extra += ", plain"
            p.forms["reads-possible-decoy-unannotated-event"] += 1
        w.lineof("def %s(%s: %s%s):" % (p.fresh("on_after_tool"), E, ann, extra))
        self.reads("    ", E + ".result", "possible:event")
        if "before" in extra:
            self.reads("    ", "before.result", None, 1)
        if "plain" in extra:
            self.reads("    ", "plain.result", None, 1)
        if rng.random() < 0.5:
            self.reads("    ", E + rng.choice([".results", ".tool_use", ".invocation_state"]), None, 1)
        if rng.random() < 0.4:
            w.lineof("    def %s():" % p.fresh("inner"))
            self.reads("        ", E + ".result", None, 1)
            w.lineof("        return None")
            p.forms["reads-possible-decoy-nested-def"] += 1
        if rng.random() < 0.5:
            # in an annotation: none ("**Annotations.**"); in a default or an
            # annotated assignment's value: one
            self.def_read("    ", E + ".result", "possible:event", rng.choice(POSSIBLE_PLACES))
        w.lineof("    return None")

    # -- aliases ("A name bound to one of these is one too") ----------------

    def write_aliases(self, traced):
        """Names bound by a plain one-target `N = E` to a possible receiver
        that is no name (`X["toolResult"]`, a marked attribute, a hook event's
        `P.result`, judged where E stands), read where they resolve to the
        bindings of the scope owning them: in the same function, at module
        level and in functions, in nested defs and classes, through `global`
        / `nonlocal`, bound a second time by a call; next to the assignments
        that make no alias (annotated, chained, a tuple, `:=`, a call, a
        name, a conditional, a spelled index, a shadowing local, an event
        unannotated or bound in a nested def)."""
        forms = ["local", "event", "module", "nested", "nonlocal", "global", "rebound"]
        for i, how in enumerate(self.rng.sample(forms, self.rng.randint(2, 4))):
            if i:
                self.w.end()
                self.w.end()
            getattr(self, "alias_" + how)()

    def alias_value(self, msg):
        """The text of a possible receiver of a form other than a name and
        other than `P.result` (it stands anywhere)."""
        p, rng = self.p, self.rng
        how = rng.choice(["subscript", "subscript", "subscript-paren", "subscript-paren-index",
                          "subscript-content", "attribute", "attribute", "attribute-call"])
        p.forms["reads-possible-alias-" + how] += 1
        q = rng.choice(['"toolResult"', "'toolResult'"])
        return {"subscript": "%s[%s]" % (msg, q), "subscript-paren": "(%s[%s])" % (msg, q),
                "subscript-paren-index": "%s[(%s)]" % (msg, q),
                "subscript-content": '%s["content"][0][%s]' % (msg, q),
                "attribute": "%s.%s" % (msg, rng.choice(MARKED_ATTRS)),
                "attribute-call": "make_view(%s).%s" % (msg, rng.choice(MARKED_ATTRS))}[how]

    def alias_name(self):
        """A fresh name for an alias; sometimes a marked one (one receiver)."""
        if self.rng.random() < 0.15:
            self.p.forms["reads-possible-alias-marked"] += 1
            return self.p.fresh("tool_result")
        return self.p.fresh(self.rng.choice(["tr", "res", "payload", "block_result"]))

    def alias_decoy(self, ind, msg, alias):
        """An assignment from a possible receiver that makes no alias, and
        reads of the name it binds: no possible reads."""
        p, rng, w = self.p, self.rng, self.w
        how = rng.choice(["annotated", "chained", "tuple", "walrus", "call", "of-alias", "conditional",
                          "spelled"])
        p.forms["reads-possible-decoy-alias-" + how] += 1
        N = p.fresh(rng.choice(["tr", "res", "payload"]))
        E = '%s["toolResult"]' % msg
        if how == "annotated":
            w.lineof("%s%s: dict = %s" % (ind, N, E))
        elif how == "chained":
            M = p.fresh("also")
            w.lineof("%s%s = %s = %s" % (ind, M, N, E))
            self.reads(ind, M, None, 1)
        elif how == "tuple":
            w.lineof("%s%s, %s = %s, 1" % (ind, N, p.fresh("other"), E))
        elif how == "walrus":
            w.lineof("%sif (%s := %s) is not None:" % (ind, N, E))
            w.lineof("%s    pass" % ind)
        elif how == "call":
            w.lineof("%s%s = %s" % (ind, N, rng.choice(['%s.get("toolResult")' % msg,
                                                        "%s.%s()" % (msg, rng.choice(MARKED_ATTRS)),
                                                        "fetch_result(%s)" % msg])))
        elif how == "of-alias":
            w.lineof("%s%s = %s" % (ind, N, alias))
        elif how == "conditional":
            w.lineof("%s%s = %s if %s else None" % (ind, N, E, msg))
        else:
            w.lineof("%s%s = %s[%s]" % (ind, N, msg, rng.choice(SPELLED_TOOL_RESULT)))
        self.reads(ind, N, None)

    def alias_local(self):
        """`N = E` in a function, read there; decoys next to it."""
        p, rng, w = self.p, self.rng, self.w
        msg = rng.choice(["message", "msg", "block"])
        N = self.alias_name()
        w.lineof("def %s(%s):" % (p.fresh("relay"), msg))
        w.lineof("    %s = %s" % (N, self.alias_value(msg)))
        p.forms["reads-possible-alias-local"] += 1
        self.reads("    ", N, "possible:alias")
        if rng.random() < 0.4:
            # in an annotation: none ("**Annotations.**")
            self.def_read("    ", N, "possible:alias", rng.choice(POSSIBLE_PLACES))
        for _ in range(rng.randint(1, 3)):
            self.alias_decoy("    ", msg, N)
            if rng.random() < 0.5:
                self.reads("    ", N, "possible:alias", 1)
        w.lineof("    return None")

    def alias_event(self):
        """`N = event.result` in a hook whose parameter is annotated; read
        there and in a nested def (possible), next to an unannotated event
        and an event bound in a nested def (judged where E stands: none)."""
        p, rng, w = self.p, self.rng, self.w
        ann = rng.choice(["AfterToolCallEvent", "AfterToolInvocationEvent", "hooks.AfterToolCallEvent",
                          "hooks.AfterToolInvocationEvent"])
        E = rng.choice(["event", "ev", "hook_event"])
        plain = rng.random() < 0.4
        w.lineof("def %s(%s: %s%s):" % (p.fresh("on_after_tool"), E, ann, ", plain" if plain else ""))
        N = self.alias_name()
        w.lineof("    %s = %s.result" % (N, E))
        p.forms["reads-possible-alias-event"] += 1
        self.reads("    ", N, "possible:alias")
        if plain:
            p.forms["reads-possible-decoy-alias-unannotated-event"] += 1
            M = p.fresh("res")
            w.lineof("    %s = plain.result" % M)
            self.reads("    ", M, None, 1)
        if rng.random() < 0.5:
            p.forms["reads-possible-alias-event-nested-read"] += 1
            w.lineof("    def %s():" % p.fresh("inner"))
            self.reads("        ", N, "possible:alias", 1)
            w.lineof("        return None")
        if rng.random() < 0.4:
            p.forms["reads-possible-decoy-alias-event-nested"] += 1
            M = p.fresh("res")
            w.lineof("    def %s():" % p.fresh("inner"))
            w.lineof("        %s = %s.result" % (M, E))
            self.reads("        ", M, None, 1)
            w.lineof("        return None")
        w.lineof("    return None")

    def alias_module(self):
        """`N = E` at module level, read in a function (and at module level);
        a function binding the same name by a call reads its own local."""
        p, rng, w = self.p, self.rng, self.w
        N = self.alias_name()
        w.lineof("%s = %s" % (N, self.alias_value("current_message")))
        p.forms["reads-possible-alias-module"] += 1
        w.end()
        w.end()
        w.lineof("def %s():" % p.fresh("render"))
        self.reads("    ", N, "possible:alias")
        w.lineof("    return None")
        if rng.random() < 0.4 and not is_marked_name(N):
            w.end()
            w.end()
            p.forms["reads-possible-decoy-alias-shadowed"] += 1
            w.lineof("def %s(agent):" % p.fresh("render"))
            w.lineof("    %s = fetch_result(agent)" % N)
            self.reads("    ", N, None)
            w.lineof("    return None")
        if rng.random() < 0.4:
            w.end()
            p.forms["reads-possible-alias-module-level-read"] += 1
            self.reads("", N, "possible:alias", 1)

    def alias_nested(self):
        """`N = E` in a function, read in a nested def or class."""
        p, rng, w = self.p, self.rng, self.w
        msg = rng.choice(["message", "msg", "block"])
        N = self.alias_name()
        w.lineof("def %s(%s):" % (p.fresh("outer"), msg))
        w.lineof("    %s = %s" % (N, self.alias_value(msg)))
        if rng.random() < 0.5:
            p.forms["reads-possible-alias-nested-def"] += 1
            w.lineof("    def %s():" % p.fresh("inner"))
            self.reads("        ", N, "possible:alias")
            w.lineof("        return None")
        else:
            p.forms["reads-possible-alias-nested-class"] += 1
            w.lineof("    class %s:" % p.fresh("Inner"))
            self.reads("        ", N, "possible:alias")
        w.lineof("    return None")

    def alias_nonlocal(self):
        """`N = E` in a nested def declaring N `nonlocal`, read in the outer."""
        p, rng, w = self.p, self.rng, self.w
        msg = rng.choice(["message", "msg", "block"])
        N = self.alias_name()
        grab = p.fresh("grab")
        w.lineof("def %s(%s):" % (p.fresh("outer"), msg))
        w.lineof("    %s = None" % N)
        w.lineof("    def %s():" % grab)
        w.lineof("        nonlocal %s" % N)
        w.lineof("        %s = %s" % (N, self.alias_value(msg)))
        w.lineof("    %s()" % grab)
        p.forms["reads-possible-alias-nonlocal"] += 1
        self.reads("    ", N, "possible:alias")
        w.lineof("    return None")

    def alias_global(self):
        """`N = E` in a hook declaring N `global` (`P.result` judged in the
        hook), read in another function."""
        p, rng, w = self.p, self.rng, self.w
        N = self.alias_name()
        E = rng.choice(["event", "ev"])
        w.lineof("def %s(%s: %s):" % (p.fresh("remember"), E, rng.choice(["AfterToolCallEvent",
                                                                           "hooks.AfterToolInvocationEvent"])))
        w.lineof("    global %s" % N)
        w.lineof("    %s = %s" % (N, rng.choice([E + ".result", E + ".result", self.alias_value(E)])))
        p.forms["reads-possible-alias-global"] += 1
        w.end()
        w.end()
        w.lineof("def %s():" % p.fresh("render"))
        self.reads("    ", N, "possible:alias")
        w.lineof("    return None")

    def alias_rebound(self):
        """N bound by a call and by `N = E`: one alias binding is enough, the
        reads before it too."""
        p, rng, w = self.p, self.rng, self.w
        msg = rng.choice(["message", "msg", "block"])
        N = self.alias_name()
        w.lineof("def %s(%s):" % (p.fresh("relay"), msg))
        w.lineof("    %s = fetch_result(%s)" % (N, msg))
        p.forms["reads-possible-alias-rebound"] += 1
        self.reads("    ", N, "possible:alias")
        w.lineof("    %s = %s" % (N, self.alias_value(msg)))
        self.reads("    ", N, "possible:alias", 1)
        w.lineof("    return None")

    def write_decoys(self, traced):
        p, rng, w = self.p, self.rng, self.w
        awaited = rng.random() < 0.5
        w.lineof("%sdef %s(agent, message):" % ("async " if awaited else "", p.fresh("relay")))
        self.write_bound(traced, "    ", awaited)
        self.write_bound(traced, "    ", awaited)
        self.reads("    ", rng.choice(["message.result", "agent.result", 'message["result"]']), None, 1)
        w.lineof("    return None")


def write_spelled(rd, rel):
    """`PKG/hook_spelled.py`: a possible read whose key the file's text does
    not hold as written (implicit concatenation, an escape): the file is
    searched for that key only when it holds a marker and the key between
    quotes otherwise (a comment), not for another moved key quoted (a
    comment, a read of it) nor a key of suppressed findings; or a receiver `block[I]`, `I` a
    `"toolResult"` spelled so: no possible receiver."""
    p, rng = rd.p, rd.rng
    silenced = set()
    for r, f in p.findings:
        comments = p.modules[r].comments
        if silencers(comments, f["line"], f["code"]) + silencers(comments, f["dict_line"], f["code"]):
            silenced.add(id(f))
    keys = sorted({f["key"] for _, f in p.findings if f["key"] is not None and f["key"].isascii()
                   and len(f["key"]) > 1})
    if not keys:
        return
    moved = {f["key"] for _, f in p.findings if f["key"] is not None and id(f) not in silenced}
    suppressed_only = sorted({f["key"] for _, f in p.findings if f["key"] is not None} - moved)
    key = rng.choice(keys)
    w = W()
    p.modules[rel] = w

    def spell(k):
        i = rng.randint(1, len(k) - 1)
        if rng.random() < 0.5:
            return '"%s" "%s"' % (k[:i], k[i:])
        return '"%s\\x%02x%s"' % (k[:i - 1], ord(k[i - 1]), k[i:])

    hows = ["key-alone", "key-comment", "key-same-comment", "key-other-read", "receiver-alone",
            "receiver-searched"]
    if suppressed_only:
        hows.append("key-suppressed")
    how = rng.choice(hows)
    p.forms["reads-possible-spelled-" + how] += 1
    if how in ("receiver-alone", "receiver-searched"):
        # `block[I]` with I a spelled toolResult is no possible receiver at
        # all (its index not written exactly `"toolResult"`), alone (no marker
        # in the file: not searched either) or next to `block["toolResult"]`
        # (a marker: searched)
        w.lineof("def on_block(block):")
        if how == "receiver-searched":
            w.put("    x = ")
            s = w.put("")[0]
            _, e = w.put('block["toolResult"][%s]' % json.dumps(key))
            w.end()
            p.possible_reads.append((rel, "possible:subscript", "subscript", key, (s, e)))
        w.lineof("    return block[%s][%s]" % (spell("toolResult"), json.dumps(key)))
        return
    if how == "key-comment":
        w.lineof('# the "%s" key of the results handed on' % rng.choice(keys))
    if how == "key-same-comment":
        w.lineof('# the "%s" key of the results handed on' % key)
    w.lineof("def on_result(tool_result):")
    if how in ("key-other-read", "key-suppressed"):
        other = rng.choice(keys if how == "key-other-read" else suppressed_only)
        w.put("    ")
        s = w.put("")[0]
        _, e = w.put("tool_result[%s]" % json.dumps(other))
        w.end()
        p.possible_reads.append((rel, "possible:name", "subscript", other, (s, e)))
    w.put("    return ")
    s = w.put("")[0]
    _, e = w.put("tool_result[%s]" % spell(key))
    w.end()
    p.possible_reads.append((rel, "possible:name", "subscript", key, (s, e)))


def write_frontends(rd):
    p = rd.p
    if p.rng.random() < 0.6:
        rel = "%s/%s/sdk_hooks.py" % (p.outrel, rd.pkg)
        w = W()
        p.modules[rel] = w
        Frontend(rd, rel, w).write()
    if p.rng.random() < 0.25:
        write_spelled(rd, "%s/%s/hook_spelled.py" % (p.outrel, rd.pkg))


# --------------------------------------------------------------------------
# escapes (--with-readers): producers used as values (docs/rules.md
# "**Escapes.**")
#
# Most programs also get `PKG/escapes.py` (a package module, relative
# imports) and often `tests/test_escapes.py` (a test file, absolute imports)
# that hand producers on as values: a producer of their own (a display
# returned, `async def` too, a chain onto another), the probes, facades,
# dispatchers (a non-tool dispatcher reaches every origin: no dispatch) and
# tool_N functions of the base program, `self.m` / `cls.m` in the methods of
# a class `Runner` of producer methods, `A.name` of an imported module, the
# instance forms `Runner().m` / `Station().m` and `N.m` with `N = K()` bound
# once in the scope reading it.  Each is used, at module level or in a
# function, as an argument (positional or keyword), an element of a list,
# tuple, set or dict display, the value of an assignment, a returned value, a
# comparison operand, a parameter default, a lambda body, inside parentheses
# (the span leaves them out), the one argument of a wrapper called at once
# (`raw(F)("q")`, `(raw)((F))("q")`, with `def raw(f): return f` in the
# module).  Each such use is a read of form `escape` (no key) of every origin
# the producer reaches, unless the producer is a tool (decorated @tool /
# @strands.tool / @strands.tools.tool, with or without arguments:
# `Agent(tools=[tool_fn])`) and the use is neither the wrapped one nor one
# giving the tool another name to be called by (ESCAPE_RENAMING: the whole
# value of an assignment, plain, annotated or chained, parenthesized or not,
# a dict display's pair's value; and a returned value) nor one handed to a
# call that keeps what it gives (ESCAPE_KEPT: `raw(F, None)("q")`, whose
# call is called, `v = executor.submit(F, "q")`, `v = list(pool.map(F,
# [...]))`): a tool unwrapped so is no longer exempt, but `raw(f=F)("q")`
# and `raw(*[F])("q")` (escapes of the other producers, a keyword, a list
# element) keep it exempt, and so do the other uses (a call statement,
# `executor.submit(F, "q")`, a list, tuple or set element, `dict(run=F)`, a
# comparison's operand, a lambda body, a default, an annotation).  Decoys that give no escape read:
# calls `F(...)` and `(F)(...)`, `F.__name__`, the def names and imports
# themselves, a name shadowed by a local binding or a parameter, a module-level
# name bound twice (`try: from ... import F as G / except ImportError: G =
# None`), `F = ...` in another scope, a function that is no producer, the
# target of `N.m = ...`.  `K.m` on the class itself, a method inherited by a
# subclass, the instance name read in a nested def or an annotation or bound
# twice resolve to nothing: unresolved uses (docs/rules.md "**Uses as a value
# toolshape cannot resolve**", ESCAPE_UNRESOLVED), escapes of a method, a
# tool or not, only when renamed (`v = Runner.m`, `v = RunnerChild().m`,
# `v = N.m` after `N` bound twice, `return N.m` in a nested def); the plain
# ones (`[Runner.m, RunnerChild().m]`, `N.m` in an annotation) are not seen,
# judged by the generator's walk (UnresolvedJudge.uses).  The base
# program's builders passed as values (`handler = X`, `fn = X`,
# `apply(X, ...)`, see plan_access) are escapes too when the builder is a
# producer.  Written last, from a random stream of their own.

# the targets: what a use as a value names (the receiver label is
# "escape:" + target); the uses: where it stands
ESCAPE_TARGETS = ["name", "async", "chain", "imported", "module", "self", "cls", "instance-call",
                  "instance-name", "dispatcher", "base"]
ESCAPE_USES = ["argument", "keyword", "list", "tuple", "set", "dict", "assign", "paren", "compare", "return",
               "default", "lambda", "wrapped", "base-header", "base-local", "base-argument",
               "annotation-param", "annotation-return", "annotation-variable"]
ESCAPE_DECOYS = ["escape-decoy-" + k for k in (
    "call", "call-parenthesized", "attribute", "tool", "tool-agent", "tool-unwrapped", "def-name", "import",
    "shadow-local",
    "shadow-param", "twice", "target-other-scope", "not-producer", "instance-target", "base-not-producer")]
# the uses of the escapes modules that resolve to nothing: unresolved uses
# (docs/rules.md "**Uses as a value toolshape cannot resolve**"), judged by
# UnresolvedJudge.uses, escapes of a method (a tool or not) when renamed; the
# decoys: a plain one (a list element) and one in an annotation, no read
ESCAPE_UNRESOLVED = ["escape-unresolved-" + k for k in (
    "class-attribute", "inherited", "instance-nested", "instance-twice", "decoy-plain",
    "decoy-instance-annotation")]
# (text before, text after) the value, {v} a fresh name
ESCAPE_TEMPLATES = {
    "argument": [("executor.submit(", ', "q")'), ("functools.partial(", ', "q")'), ("register(", ")"),
                 ("pool.map(", ', ["a", "b"])'), ("raw(", ', None)("q")'), ("{v} = executor.submit(", ', "q")'),
                 ("{v} = list(pool.map(", ', ["a", "b"]))')],
    "keyword": [("schedule(callback=", ")"), ("threading.Thread(target=", ', args=("q",))'),
                ("raw(f=", ')("q")')],
    "list": [("{v} = [", ", None]"), ("{v} = [None, ", "]"), ("{v} = [\"q\", ", ", 1]"),
             ("{v} = raw(*[", '])("q")')],
    "tuple": [("{v} = (", ', "q")'), ("{v} = ", ", None"), ("{v} = (None, ", ")")],
    "set": [("{v} = {", "}"), ("{v} = {None, ", "}")],
    "dict": [('{v} = {"run": ', "}"), ("{v} = {1: None, 2: ", "}"), ("{v} = dict(run=", ")")],
    "assign": [("{v} = ", ""), ("{v}: object = ", ""), ("{v} = other = ", "")],
    "paren": [("{v} = (", ")"), ("{v} = [(", ")]"), ("{v} = ((", "))"), ("register( (", ") )")],
    "compare": [("assert ", " is not None"), ("{v} = ", " == other")],
    "lambda": [("{v} = lambda: ", ""), ("{v} = lambda q=None: ", "")],
    # the one argument of a wrapper called at once: an escape of a tool too
    "wrapped": [("raw(", ')("q")'), ("(raw)((", '))("q")'), ("{v} = raw(", ')("q")'), ("raw( (", ') )(None)')],
}
# the templates of ESCAPE_TEMPLATES whose value gives a tool another name to
# be called by (docs/rules.md "**Escapes.**", parentheses seen through): the
# whole value of an assignment (plain, annotated, chained), the value of a
# dict display's pair; an escape of a tool too.  The others keep a tool
# exempt: an element of a list, tuple or set, an argument or keyword
# (`dict(run=F)` too), a comparison's operand, a lambda body, a
# parenthesized list element or argument.
ESCAPE_RENAMING = {
    "assign": [("{v} = ", ""), ("{v}: object = ", ""), ("{v} = other = ", "")],
    "dict": [('{v} = {"run": ', "}"), ("{v} = {1: None, 2: ", "}")],
    "paren": [("{v} = (", ")"), ("{v} = ((", "))")],
}
assert all(t in ESCAPE_TEMPLATES[u] for u, ts in ESCAPE_RENAMING.items() for t in ts)
# the templates of ESCAPE_TEMPLATES whose value is handed to a call that keeps
# what it gives (docs/rules.md "**Escapes.**": a positional argument of a
# call that is not the whole expression of an expression statement, its
# callee no builtin that only looks at it): an escape of a tool too.  The
# other arguments keep a tool exempt: a call statement (`executor.submit(F,
# "q")`, `pool.map(F, [...])`, `register( (F) )`), a keyword.
ESCAPE_KEPT = {
    "argument": [("raw(", ', None)("q")'), ("{v} = executor.submit(", ', "q")'),
                 ("{v} = list(pool.map(", ', ["a", "b"]))')],
}
assert all(t in ESCAPE_TEMPLATES[u] for u, ts in ESCAPE_KEPT.items() for t in ts)
# the constructs counting a tool given another name, or handed to a call that
# keeps it, by an escapes module's use
ESCAPE_TOOL_RENAMED = (["escape-tool-renamed-" + u for u in list(ESCAPE_RENAMING) + ["return"]]
                       + ["escape-tool-kept-" + u for u in ESCAPE_KEPT])


class EscapeWriter(ModuleWriter):
    """Writes uses as values of producers into one module."""

    def __init__(self, rd, rel, w, targets, classes):
        super().__init__(rd, rel, w)
        # (text, Producer, target kind): values usable in every scope of the module
        self.targets = targets
        # (class text, [method Producer]): classes whose instances a scope may name
        self.classes = classes

    def record(self, span, text, prod, target, use, tool_too=False, kept=False):
        """A use of ``prod`` as a value at ``span``; ``tool_too``: one that
        escapes for a tool too (called through a wrapper, given another
        name to be called by, or, ``kept``, handed to a call that keeps
        what it gives: docs/rules.md "**Escapes.**")."""
        p = self.p
        p.escapes.append((self.rel, prod, target + "/" + use, span, text, tool_too))
        p.forms["escape-use-" + use] += 1
        if prod.decorated:
            if not tool_too:
                p.forms["escape-decoy-tool"] += 1
            elif kept:
                p.forms["escape-tool-kept-" + use] += 1
            elif use != "wrapped":
                p.forms["escape-tool-renamed-" + use] += 1

    def put_use(self, ind, text, prod, target, use):
        """One statement using ``text`` (which names ``prod``) as a value."""
        p, w = self.p, self.w
        before, after = self.rng.choice(ESCAPE_TEMPLATES[use])
        v = p.fresh("v")
        w.put(ind + before.replace("{v}", v))
        span = w.put(text)
        w.put(after.replace("{v}", v))
        w.end()
        kept = (before, after) in ESCAPE_KEPT.get(use, ())
        tool_too = use == "wrapped" or kept or (before, after) in ESCAPE_RENAMING.get(use, ())
        self.record(span, text, prod, target, use, tool_too, kept)
        if prod.decorated and not tool_too and "raw(" in before:
            p.forms["escape-decoy-tool-unwrapped"] += 1

    def put_default(self, ind, text, prod, target):
        """A nested def whose parameter default is ``text`` (evaluated in the scope at ``ind``)."""
        w = self.w
        w.put(ind + "def %s(cb=" % self.p.fresh("hook"))
        span = w.put(text)
        w.put("):")
        w.end()
        w.lineof(ind + "    return cb")
        self.record(span, text, prod, target, "default")

    def put_annotation(self, ind, text, prod, target):
        """``text`` in an annotation at ``ind`` (docs/rules.md
        "**Annotations.**": uses as values are found there as anywhere else):
        a nested def's parameter's or return's, a variable's (`y: F = None`,
        `y: F`); but an instance name's `N.m` is none there (`N` is read in a
        nested scope)."""
        p, rng, w = self.p, self.rng, self.w
        # `self.m` / `cls.m` in a nested def's annotation: left out (which def
        # is "the nearest enclosing" one of an annotation is not said)
        spots = ["variable"] if target in ("self", "cls") else ["param", "return", "variable"]
        spot = rng.choice(spots)
        if spot == "variable":
            w.put(ind + "%s: " % p.fresh("ann"))
            span = w.put(text)
            w.put(rng.choice(["", " = None"]))
        else:
            w.put(ind + "def %s(%s" % (p.fresh("hook"), "cb: " if spot == "param" else "cb=None) -> "))
            span = w.put(text)
            w.put("):" if spot == "param" else ":")
        w.end()
        if spot != "variable":
            w.lineof(ind + "    return cb")
        if target == "instance-name":
            # resolves to nothing, neither wrapped nor renamed: no read
            p.forms["escape-unresolved-decoy-instance-annotation"] += 1
            return
        self.record(span, text, prod, target, "annotation-" + spot)

    def put_decoy(self, ind, text):
        """A use of ``text`` that is none: a call or an attribute of it."""
        p, rng, w = self.p, self.rng, self.w
        kind = rng.choice(["call", "call-parenthesized", "attribute"])
        p.forms["escape-decoy-" + kind] += 1
        if kind == "call":
            w.lineof(ind + '%s("q")' % text)
        elif kind == "call-parenthesized":
            w.lineof(ind + '(%s)("q")' % text)
        else:
            w.lineof(ind + "%s = %s.__name__" % (p.fresh("v"), text))

    def pick(self, values):
        """A value of ``values``, each target kind as likely as the others."""
        kind = self.rng.choice(sorted({v[2] for v in values}))
        return self.rng.choice([v for v in values if v[2] == kind])

    def in_functions(self, stem):
        """One to three functions `def STEM_N(executor, pool):`, each a site."""
        w = self.w
        for _ in range(self.rd.rng.randint(1, 3)):
            w.lineof("def %s(executor, pool):" % self.p.fresh(stem))
            self.site("    ", True)
            w.end()
            w.end()

    def site(self, ind, function, most=5):
        """Some uses in the scope at ``ind`` (a function's body when ``function``)."""
        p, rng, w = self.p, self.rng, self.w
        values = list(self.targets)
        if self.classes and rng.random() < 0.6:
            cls, methods = rng.choice(self.classes)
            N = p.fresh("runner")
            decoy = rng.choice(["nested", "twice", "target", None, None, None, None]) if function else \
                rng.choice(["twice", "target", None, None, None, None])
            w.lineof(ind + "%s = %s()" % (N, cls))
            m = rng.choice(methods)
            if decoy == "twice":
                # resolves to nothing: an unresolved use, renamed
                w.lineof(ind + "%s = %s()" % (N, cls))
                w.lineof(ind + "%s = %s.%s" % (p.fresh("v"), N, m.name))
            elif decoy == "target":
                w.lineof(ind + "%s.%s = None" % (N, m.name))
            elif decoy == "nested":
                w.lineof(ind + "def %s():" % p.fresh("inner"))
                w.lineof(ind + "    return %s.%s" % (N, m.name))
            else:
                values += [(N + "." + m2.name, m2, "instance-name") for m2 in methods]
            if decoy is not None:
                p.forms[("escape-decoy-instance-" if decoy == "target" else "escape-unresolved-instance-")
                        + decoy] += 1
        for _ in range(rng.randint(1, most)):
            if not values:
                break
            text, prod, target = self.pick(values)
            r = rng.random()
            if r < 0.12:
                self.put_decoy(ind, text)
            elif r < 0.2:
                self.put_default(ind, text, prod, target)
            elif r < 0.3:
                self.put_annotation(ind, text, prod, target)
            else:
                # no lambda around `N.m` (a nested scope: not followed) nor `self.m` / `cls.m`
                uses = [u for u in ESCAPE_TEMPLATES
                        if u != "lambda" or target not in ("instance-name", "self", "cls")]
                self.put_use(ind, text, prod, target, rng.choice(uses))
        if function:
            if values and rng.random() < 0.5:
                text, prod, target = self.pick(values)
                w.put(ind + "return ")
                span = w.put(text)
                w.end()
                self.record(span, text, prod, target, "return", True)
            else:
                w.lineof(ind + "return None")

    def shadows(self, names):
        """Decoys: plain names of producers shadowed by a local or a parameter,
        or bound in another scope only (``names``: [(name, Producer)])."""
        p, rng, w = self.p, self.rng, self.w
        for name, prod in rng.sample(names, min(len(names), rng.randint(1, 2))):
            kind = rng.choice(["shadow-local", "shadow-param", "target-other-scope"])
            p.forms["escape-decoy-" + kind] += 1
            if kind == "shadow-local":
                w.lineof("def %s():" % p.fresh("shadowed"))
                w.lineof("    %s = make_other()" % name)
                w.lineof("    %s = [%s]" % (p.fresh("v"), name))
                w.lineof("    return %s" % name)
            elif kind == "shadow-param":
                w.lineof("def %s(%s):" % (p.fresh("shadowed"), name))
                w.lineof("    executor.submit(%s)" % name)
                w.lineof("    return [%s]" % name)
            else:
                w.lineof("def %s():" % p.fresh("reset"))
                w.lineof("    %s = None" % name)
                w.lineof("    return None")
            w.end()
            w.end()


def escape_imports(rd, w, relative, bound, with_escapes):
    """Imports of a module using producers as values; its (text, Producer,
    target kind) values, its instance classes and its plain imported names."""
    rng, p = rd.rng, rd.p
    targets = []
    plain = []
    pool = [(rel_t, prod, "imported") for rel_t, prod, _ in rd.probes]
    pool += [(rel_t, prod, "imported") for rel_t, prod, _ in rng.sample(rd.base, min(len(rd.base), 2))]
    pool += [(rel_t, prod, "dispatcher") for rel_t, prod in rd.dispatchers]
    if with_escapes:
        pool += [(rd.escapes_rel, prod, kind) for prod, kind in rd.escape_producers]
    for rel_t, prod, kind in rng.sample(pool, min(len(pool), rng.randint(2, 6))):
        text = access(rd, rel_t, prod.name, bound, relative, w)
        p.forms["escape-decoy-import"] += 1
        if "." in text:
            targets.append((text, prod, "module" if kind in ("imported", "name", "async", "chain") else kind))
        else:
            targets.append((text, prod, kind if kind == "dispatcher" else "imported"))
            plain.append((text, prod))
    classes = []
    if rd.station and rng.random() < 0.6:
        cls = access(rd, rd.probes_rel, "Station", bound, relative, w)
        classes.append((cls, [m for m, _ in rd.station]))
    if with_escapes and rng.random() < 0.8:
        cls = access(rd, rd.escapes_rel, "Runner", bound, relative, w)
        classes.append((cls, rd.runner_methods))
    return targets, classes, plain


def twice_bound(rd, w, rel_t, prod, relative):
    """Decoy: a module-level name bound twice (an import that may fail)."""
    p = rd.p
    local = p.fresh("maybe")
    mod = module_of(p, rel_t)
    if relative:
        mod = "." + mod.rsplit(".", 1)[1]
    w.lineof("try:")
    w.lineof("    from %s import %s as %s" % (mod, prod.name, local))
    w.lineof("except ImportError:")
    w.lineof("    %s = None" % local)
    p.forms["escape-decoy-twice"] += 1
    w.lineof("%s = [%s]" % (p.fresh("v"), local))


def write_raw(w):
    """The wrapper of the `wrapped` uses: a test's `raw` returns the
    function a tool decorator wraps; here the function itself."""
    w.lineof("def raw(f):")
    w.lineof("    return f")
    w.end()
    w.end()


def write_escape_module(rd):
    """`PKG/escapes.py`: producers of its own, a class of producer methods
    using them through self / cls, and uses of every kind."""
    p, rng = rd.p, rd.rng
    rel = "%s/%s/escapes.py" % (p.outrel, rd.pkg)
    rd.escapes_rel = rel
    w = W()
    p.modules[rel] = w
    w.lineof('"""Producers handed on as values."""')
    w.lineof("import functools")
    w.lineof("import strands")
    w.lineof("from strands import Agent, tool")
    bound = {"functools", "strands", "Agent", "tool", "executor", "pool", "register", "schedule", "threading",
             "other", "make_other", "query", "cb", "q", "Runner", "RunnerChild", "raw"}
    targets, classes, plain = escape_imports(rd, w, True, bound, False)
    w.end()
    w.end()
    write_raw(w)
    ew = EscapeWriter(rd, rel, w, targets, classes)
    own = []  # (Producer, kind) of the module's own producers
    for _ in range(rng.randint(1, 3)):
        kind = rng.choice(["name", "name", "async", "chain"] if own else ["name", "name", "async"])
        name = p.fresh("job")
        if kind == "async":
            w.lineof("async def %s(query):" % name)
        else:
            w.lineof("def %s(query):" % name)
        p.forms["escape-decoy-def-name"] += 1
        prod = p.producer(name, rel)
        if kind == "chain":
            g, _ = rng.choice([o for o in own if o[1] != "async"] or own)
            w.lineof("    return %s(query)" % g.name)
            prod.via.append(g)
        else:
            rd.display_return(rel, w, "    ", prod)
        own.append((prod, kind))
        w.end()
        w.end()
    # a tool: exempt, what it is for is being handed to an agent
    dec, _ = rng.choice([d for d in DECORATORS if d[1]])
    tname = p.fresh("tool_fn")
    decs = put_decorators(p, rel, w, "", listed_decorator(dec, True))
    w.lineof("def %s(query):" % tname)
    tprod = p.producer(tname, rel, decorated=True)
    tprod.decorators = decs
    rd.display_return(rel, w, "    ", tprod)
    w.end()
    w.end()
    # a function that is no producer
    plain_name = p.fresh("plain")
    w.lineof("def %s(query):" % plain_name)
    w.lineof("    return None")
    p.forms["escape-decoy-not-producer"] += 1
    w.end()
    w.end()
    # a class of producer methods, used through self / cls
    w.lineof("class Runner:")
    methods = []
    for _ in range(rng.randint(1, 2)):
        dec, is_tool = rng.choice(DECORATORS[:1] + DECORATORS[7:])
        name = p.fresh("run_task")
        decs = put_decorators(p, rel, w, "    ", listed_decorator(dec, is_tool))
        w.lineof("    def %s(self, query):" % name)
        prod = p.producer(name, rel, decorated=is_tool)
        prod.decorators = decs
        rd.display_return(rel, w, "        ", prod)
        methods.append(prod)
        w.end()
    decs = put_decorators(p, rel, w, "    ", [("classmethod", True, "classmethod")])
    mname = p.fresh("make")
    w.lineof("    def %s(cls, query):" % mname)
    make = p.producer(mname, rel)
    make.decorators = decs
    rd.display_return(rel, w, "        ", make)
    w.end()
    w.lineof("    def submit_all(self, executor):")
    cw = EscapeWriter(rd, rel, w, [("self." + m.name, m, "self") for m in methods + [make]], [])
    cw.site("        ", True, 2)
    w.end()
    w.lineof("    @classmethod")
    w.lineof("    def factories(cls):")
    cw = EscapeWriter(rd, rel, w, [("cls." + mname, make, "cls")], [])
    cw.site("        ", True, 2)
    w.end()
    w.end()
    w.lineof("class RunnerChild(Runner):")
    w.lineof('    """Every method inherited."""')
    w.end()
    w.end()
    rd.runner_methods = methods + [make]
    rd.escape_producers = own + [(tprod, "name")]
    # uses: module level and in functions
    ew.targets = targets + [(prod.name, prod, kind) for prod, kind in own] + [(tname, tprod, "name")]
    ew.targets += [("Runner()." + m.name, m, "instance-call") for m in methods + [make]]
    ew.classes = classes + [("Runner", methods + [make])]
    ew.targets += [(plain_name, p.producer(plain_name, rel), "name")]
    w.lineof("%s = Agent(tools=[%s])" % (p.fresh("agent"), tname))
    p.forms["escape-decoy-tool-agent"] += 1
    m = rng.choice(methods + [make])
    # resolving to nothing: plain (list elements), no read; renamed, a read
    w.lineof("%s = [Runner.%s, RunnerChild().%s]" % (p.fresh("v"), m.name, m.name))
    p.forms["escape-unresolved-decoy-plain"] += 1
    w.lineof("%s = Runner.%s" % (p.fresh("v"), m.name))
    w.lineof("%s = RunnerChild().%s" % (p.fresh("v"), m.name))
    p.forms["escape-unresolved-class-attribute"] += 1
    p.forms["escape-unresolved-inherited"] += 1
    ew.site("", False)
    w.end()
    w.end()
    ew.in_functions("use")
    ew.shadows([(prod.name, prod) for prod, _ in own] + plain)
    if rng.random() < 0.4 and rd.probes:
        rel_t, prod, _ = rng.choice(rd.probes)
        twice_bound(rd, w, rel_t, prod, True)
    return rel


def write_escape_test(rd):
    """`tests/test_escapes.py`: the same uses in a test file (absolute imports)."""
    p, rng = rd.p, rd.rng
    rel = "%s/tests/test_escapes.py" % p.outrel
    w = W()
    p.modules[rel] = w
    w.lineof('"""Tests handing producers on."""')
    bound = {"executor", "pool", "register", "schedule", "threading", "functools", "other", "make_other",
             "query", "cb", "q", "Agent", "raw"}
    targets, classes, plain = escape_imports(rd, w, False, bound, True)
    w.end()
    w.end()
    write_raw(w)
    ew = EscapeWriter(rd, rel, w, targets, classes)
    if rng.random() < 0.5:
        ew.site("", False)
        w.end()
        w.end()
    ew.in_functions("test_escape")
    if plain:
        ew.shadows(plain)
    if rng.random() < 0.4:
        prod, _ = rng.choice(rd.escape_producers)
        twice_bound(rd, w, rd.escapes_rel, prod, False)
    return rel


def write_escapes(rd):
    if rd.p.rng.random() < 0.85:
        write_escape_module(rd)
        if rd.p.rng.random() < 0.7:
            write_escape_test(rd)


# --------------------------------------------------------------------------
# tools given other names (--with-readers; docs/rules.md "**Escapes.**")
#
# A use as a value of a tool is exempt, but not when it gives the tool another
# name to be called by.  Most programs also get `tests/test_tool_names.py`,
# which imports the program's tools (probes and dispatchers decorated as tools
# in every spelling, escapes.py's tool, tool methods of Runner / Station as
# `K().m`) and now and then producers that are no tools, in every import form
# (a name, `A.name`), and uses each as a value, at module level, in test
# functions, in pytest fixtures, in generators and in an `async def`, in the
# forms that give a tool another name (TOOL_NAME_FORMS: the whole value of an
# assignment, plain, annotated, chained, to an attribute or a subscript, a
# walrus; the value of a `return` (a fixture's too) or a `yield`
# (`v = yield F` too); the value of a dict display's pair; each parenthesized
# now and then, the span leaving the parentheses out): an escape of the tool
# too; and in the forms that keep a tool exempt (TOOL_NAME_DECOYS: an element
# of a tuple or an unpacked tuple, `return F, 1`, `yield F, None`,
# `yield from F`, a dict display's key, `{**F}`, a dict comprehension's
# value, `v += F`, an argument of a call statement (`executor.submit(F,
# "q")`, `await loop.run_in_executor(None, F, "q")` in an `async def`) or
# of a builtin that only looks at it (`v = callable(F)`, `v = repr(F)`,
# `v = type(F).__name__`...), `tools=[F]`, a keyword (`Agent(tools=F)`,
# `threading.Thread(target=F)`), an operand, a
# conditional, a lambda body); and in the forms that hand it to a call that
# keeps what it gives ("kept-call": `v = executor.submit(F, "q")`,
# `functools.partial(F, 1)`, `list(map(F, ...))`, `assert
# inspect.signature(F)`, `v = len(F)`, `v = builtins.repr(F)`...;
# "kept-await" in an `async def`: `v = await asyncio.to_thread(F, "q")`):
# an escape of the tool too.  Half of these modules come with
# `tests/test_tool_builtins.py` (write_tool_builtins), handing tools to
# `callable`, `isinstance`, `repr`, `print` where the module rebinds one
# of them or holds a star import.  A producer that is no tool escapes in every one
# of them.  Each escape read is labelled "escape:TARGET/tool-name-FORM" for a
# tool (escapes_by_use: every form of TOOL_NAME_FORMS must be read so) and
# "escape:TARGET/value-FORM" for a producer that is no tool; each tool put in a
# decoy form counts the construct "tool-name-decoy-FORM".  Written last, from
# a random stream of their own (the files written before stay as they were).

# form -> (scopes it may stand in, [(text before, text after)]), {v} / {w}
# fresh names; the scopes: module, function (a test, a fixture, a generator,
# an async def), generator (a generator's body only), fixture (a fixture's
# `return` only), return (a function's `return`)
TOOL_NAME_FORMS = {
    "assign": ("module function", [("{v} = ", "")]),
    "annotated": ("module function", [("{v}: Callable = ", ""), ("{v}: object = ", "")]),
    "chained": ("module function", [("{v} = {w} = ", "")]),
    "target": ("function", [("agent.{v} = ", ""), ('registry["{v}"] = ', "")]),
    "walrus": ("module function", [("({v} := ", ")"), ("{w} = [({v} := ", ")]"), ("assert ({v} := ", ")")]),
    "return": ("return", [("return ", "")]),
    "fixture": ("fixture", [("return ", "")]),
    "yield": ("generator", [("yield ", ""), ("{v} = yield ", ""), ("{v} = (yield ", ")")]),
    "dict": ("module function", [('{v} = {"run": ', "}"), ('{v} = {"a": None, "run": ', ", **other}"),
                                 ('register_tool({"run": ', "})")]),
    # handed to a call that keeps what it gives (a positional argument of a
    # call that is not the whole expression of an expression statement, its
    # callee no bare builtin that only looks at it: `len` and
    # `builtins.repr` are none), awaited or not
    "kept-call": ("module function", [("{v} = executor.submit(", ', "q")'), ("{v} = functools.partial(", ", 1)"),
                                      ("{v} = list(map(", ', ["a"]))'), ("assert inspect.signature(", ")"),
                                      ("{v} = loop.run_in_executor(None, ", ', "q")'), ("{v} = len(", ")"),
                                      ("{v} = builtins.repr(", ")"), ("{v} = asyncio.to_thread(", ", 1)")]),
    "kept-await": ("async", [("{v} = await asyncio.to_thread(", ', "q")'),
                             ("{v} = (await asyncio.to_thread(", ', "q"))')]),
}
TOOL_NAME_DECOY_FORMS = {
    "tuple": ("module function", [("{v} = (", ",)"), ("{v} = ", ", None")]),
    "unpack": ("module function", [("{v}, {w} = ", ", 1")]),
    "return-tuple": ("return fixture", [("return ", ", 1")]),
    "yield-tuple": ("generator", [("yield ", ", None")]),
    "yield-from": ("generator", [("yield from ", "")]),
    "dict-key": ("module function", [("{v} = {", ": 1}")]),
    "dict-spread": ("module function", [("{v} = {**", "}")]),
    "dict-comp": ("module function", [("{v} = {k: ", ' for k in "ab"}')]),
    "augmented": ("module function", [("{v} += ", "")]),
    "argument": ("module function", [("register_tool(", ")"), ("assert callable(", ")")]),
    # a call whose value is dropped: an expression statement (an awaited one too)
    "dropped-call": ("module function", [("executor.submit(", ', "q")'), ("register_tool(", ", None)"),
                                         ("list(", ")")]),
    "dropped-await": ("async", [("await loop.run_in_executor(None, ", ', "q")'),
                                ("(await asyncio.to_thread(", ', "q"))')]),
    # the builtins that only look at their argument, their value kept
    "looking-builtin": ("module function", [("{v} = callable(", ")"), ("{v} = isinstance(", ", object)"),
                                            ("{v} = repr(", ")"), ("assert hasattr(", ', "q")'),
                                            ("{v} = [str(", "), id(1)]"), ("{v} = type(", ").__name__"),
                                            ("{v} = print(", ")"), ("{v} = bool(", ") or hash(1)")]),
    "keyword-call": ("module function", [("{v} = Agent(tools=", ")"), ("{v} = threading.Thread(target=", ")")]),
    "agent": ("module function", [("{v} = Agent(tools=[", "])")]),
    "keyword": ("module function", [("{v} = dict(run=", ")")]),
    "operand": ("module function", [("assert ", " is not None"), ("{v} = ", " or other")]),
    "conditional": ("module function", [("{v} = ", " if flag else None")]),
    "lambda": ("module function", [("{v} = lambda: ", "")]),
}
TOOL_NAME_USES = ["tool-name-" + f for f in TOOL_NAME_FORMS]
TOOL_NAME_DECOYS = ["tool-name-decoy-" + f for f in TOOL_NAME_DECOY_FORMS] + ["tool-name-parenthesized"]


class ToolNameWriter(ModuleWriter):
    """Writes uses as values of tools (and of producers that are none) into
    tests/test_tool_names.py."""

    def __init__(self, rd, rel, w, tools, others):
        super().__init__(rd, rel, w)
        self.tools = tools    # (text, Producer, target kind) of tools
        self.others = others  # (text, Producer, target kind) of producers that are no tools

    def put(self, ind, scope, is_async=False):
        """One use at ``ind`` of a form that may stand in ``scope`` (the forms
        of scope "async" too in an ``async def``'s body, ``is_async``)."""
        p, rng, w = self.p, self.rng, self.w
        escaping = rng.random() < 0.55
        table = TOOL_NAME_FORMS if escaping else TOOL_NAME_DECOY_FORMS
        forms = [f for f, (scopes, _) in table.items()
                 if scope in scopes.split() or (is_async and "async" in scopes.split())]
        assert forms, scope
        form = rng.choice(forms)
        before, after = rng.choice(table[form][1])
        text, prod, target = rng.choice(self.tools if not self.others or rng.random() < 0.75 else self.others)
        lead = trail = ""
        if escaping and rng.random() < 0.3:
            lead, trail = rng.choice([("(", ")"), ("((", "))"), ("( ", " )")])
        v, x = p.fresh("v"), p.fresh("w")
        w.put(ind + before.replace("{v}", v).replace("{w}", x) + lead)
        span = w.put(text)
        w.put(trail + after.replace("{v}", v).replace("{w}", x))
        w.end()
        if prod.decorated:
            use = "tool-name-" + form
            if escaping:
                if lead:
                    p.forms["tool-name-parenthesized"] += 1
            else:
                p.forms["tool-name-decoy-" + form] += 1
        else:
            use = "value-" + form
        p.escapes.append((self.rel, prod, target + "/" + use, span, text, escaping))


def write_tool_names(rd):
    """`tests/test_tool_names.py` (see above)."""
    p, rng = rd.p, rd.rng
    pool = [(rel_t, prod, "imported") for rel_t, prod, _ in rd.probes if prod.decorated]
    pool += [(rel_t, prod, "dispatcher") for rel_t, prod in rd.dispatchers if prod.decorated]
    escapes_rel = getattr(rd, "escapes_rel", None)
    if escapes_rel is not None:
        pool += [(escapes_rel, prod, "imported") for prod, _ in rd.escape_producers if prod.decorated]
    classes = []
    if rd.station and any(m.decorated for m, _ in rd.station):
        classes.append((rd.probes_rel, "Station", [m for m, _ in rd.station]))
    if escapes_rel is not None and any(m.decorated for m in rd.runner_methods):
        classes.append((escapes_rel, "Runner", rd.runner_methods))
    if not (pool or classes) or rng.random() < 0.15:
        return
    rel = "%s/tests/test_tool_names.py" % p.outrel
    w = W()
    p.modules[rel] = w
    w.lineof('"""Tests naming tools."""')
    w.lineof("from typing import Callable")
    w.end()
    w.lineof("import pytest")
    w.lineof("from strands import Agent")
    bound = {"Callable", "pytest", "Agent", "register_tool", "other", "flag", "agent", "registry", "k",
             "executor", "functools", "inspect", "loop", "asyncio", "builtins", "threading"}
    tools, others = [], []
    for rel_t, prod, kind in rng.sample(pool, min(len(pool), rng.randint(1, 4))):
        text = access(rd, rel_t, prod.name, bound, False, w)
        tools.append((text, prod, "module" if "." in text and kind == "imported" else kind))
    for rel_t, cname, methods in classes:
        if rng.random() < 0.7 or not pool:
            cls = access(rd, rel_t, cname, bound, False, w)
            for m in methods:
                (tools if m.decorated else others).append(("%s().%s" % (cls, m.name), m, "instance-call"))
    plain = [(rel_t, prod) for rel_t, prod, _ in rd.probes + rd.base if not prod.decorated]
    for rel_t, prod in rng.sample(plain, min(len(plain), rng.randint(0, 2))):
        text = access(rd, rel_t, prod.name, bound, False, w)
        others.append((text, prod, "module" if "." in text else "imported"))
    if not tools:
        # every class left out: its tool methods through the first one
        rel_t, cname, methods = classes[0]
        cls = access(rd, rel_t, cname, bound, False, w)
        tools = [("%s().%s" % (cls, m.name), m, "instance-call") for m in methods if m.decorated]
    w.end()
    w.end()
    tw = ToolNameWriter(rd, rel, w, tools, others)
    for _ in range(rng.randint(1, 4)):
        tw.put("", "module")
    w.end()
    w.end()
    for _ in range(rng.randint(1, 2)):
        w.lineof("@pytest.fixture")
        w.lineof("def %s():" % p.fresh("named_tool"))
        tw.put("    ", rng.choice(["fixture", "fixture", "return"]))
        w.end()
        w.end()
    for _ in range(rng.randint(1, 3)):
        kind = rng.choice(["test", "test", "generator", "async"])
        if kind == "generator":
            w.lineof("def %s(flag, other):" % p.fresh("gen_tools"))
            for _ in range(rng.randint(1, 4)):
                tw.put("    ", rng.choice(["generator", "generator", "function"]))
            w.lineof("    yield None")
        else:
            w.lineof("%sdef %s(agent, registry, flag, other):" % ("async " if kind == "async" else "",
                                                                  p.fresh("test_tool_names")))
            for _ in range(rng.randint(1, 5)):
                tw.put("    ", "function", kind == "async")
            if rng.random() < 0.6:
                tw.put("    ", "return")
            else:
                w.lineof("    return None")
        w.end()
        w.end()
    if pool and rng.random() < 0.5:
        write_tool_builtins(rd, pool)


# the builtins that only look at their argument, as the tools' uses of
# tests/test_tool_builtins.py hand a tool to them (docs/rules.md
# "**Escapes.**": exempt only as a bare name resolving to no binding of the
# module, in a module without a star import)
TOOL_BUILTIN_TEMPLATES = {
    "callable": ("{v} = callable(", ")"),
    "isinstance": ("assert isinstance(", ", object)"),
    "repr": ("{v} = repr(", ")"),
    "print": ("{v} = print(", ")"),
}
# how the module spoils the exemption: a module-level def named like one of
# them, `from reprlib import repr`, a star import (`from os.path import *`)
TOOL_BUILTIN_KINDS = ["rebound-def", "rebound-import", "star"]
TOOL_BUILTIN_USES = ["tool-builtin-" + k for k in TOOL_BUILTIN_KINDS]
# a builtin the module does not rebind, beside a rebound one: still exempt
TOOL_BUILTIN_DECOYS = ["tool-builtin-decoy-" + k for k in ("rebound-def", "rebound-import")]


def write_tool_builtins(rd, pool):
    """`tests/test_tool_builtins.py`: tools of ``pool`` ((rel, Producer,
    target kind), tools only) handed to the builtins of
    TOOL_BUILTIN_TEMPLATES, their values kept, in a module that rebinds one
    of them (by a def or an import) or holds a star import: an escape of the
    tool where the builtin is rebound or under the star import (the use
    labelled "tool-builtin-KIND"), none where it is not rebound
    ("tool-builtin-decoy": the construct "tool-builtin-decoy-KIND")."""
    p, rng = rd.p, rd.rng
    rel, w = new_module(p, "tests/test_tool_builtins.py")
    w.lineof('"""Tests handing tools to builtins the module rebinds."""')
    kind = rng.choice(TOOL_BUILTIN_KINDS)
    bound = set(TOOL_BUILTIN_TEMPLATES)
    rebound = None
    if kind == "star":
        w.lineof("from os.path import *")
    elif kind == "rebound-import":
        rebound = "repr"
        w.lineof("from reprlib import repr")
    tools = []
    for rel_t, prod, target in rng.sample(pool, min(len(pool), rng.randint(1, 3))):
        text = access(rd, rel_t, prod.name, bound, False, w)
        tools.append((text, prod, "module" if "." in text and target == "imported" else target))
    w.end()
    w.end()
    if kind == "rebound-def":
        rebound = rng.choice(sorted(TOOL_BUILTIN_TEMPLATES))
        w.lineof("def %s(*args):" % rebound)
        w.lineof("    return True")
        w.end()
        w.end()
    w.lineof("def %s():" % p.fresh("test_tool_builtins"))
    for _ in range(rng.randint(2, 4)):
        name = rng.choice(sorted(TOOL_BUILTIN_TEMPLATES))
        before, after = TOOL_BUILTIN_TEMPLATES[name]
        text, prod, target = rng.choice(tools)
        w.put("    " + before.replace("{v}", p.fresh("v")))
        span = w.put(text)
        w.put(after)
        w.end()
        escaping = kind == "star" or name == rebound
        if escaping:
            use = "tool-builtin-" + kind
        else:
            use = "tool-builtin-decoy"
            p.forms["tool-builtin-decoy-" + kind] += 1
        p.escapes.append((rel, prod, target + "/" + use, span, text, escaping))
    w.lineof("    return None")

# --------------------------------------------------------------------------
# calls toolshape cannot resolve (--with-readers; docs/rules.md "**Calls
# toolshape cannot resolve.**")
#
# Most programs also get `tests/test_unresolved.py` (and `PKG/shell.py`, two
# producers named like functions of the standard library, `run` and `join`),
# calling producers of probes.py so that nothing resolves the call: through
# a dotted path `PKG.probes.NAME(...)`, a
# module alias (`t = PKG.probes` in the function, or bound at module level by
# an assignment), a parameter named like the producer, an inherited method
# (`self.m(...)` in a subclass of Station defining no `m`, `Sub().m(...)`,
# `Sub.m(...)`);
# each result read (no read is followed), dropped or returned: one escape
# read, span the call.  Next to decoys giving no read: `subprocess.run(...)`,
# `sp.run(...)` and `join(...)` imported once at module level from outside
# the project, `subprocess.run(...)` after `import subprocess` inside the
# function (bound there once: docs/rules.md "**Imports inside a function**"),
# a name bound by the module's own `def` or `class`, an import
# under another name and `getattr(t, "NAME")(...)`; a producer imported
# inside the test function (`from MOD import NAME`, bound there once)
# resolves as a module-level import does: its reads are keyed reads (a name
# probes.py does not bind, a facade's, resolves to nothing); `fn = t.NAME` is an
# unresolved use (docs/rules.md "**Uses as a value toolshape cannot
# resolve**", see "uses as a value toolshape cannot resolve" below: one
# escape read, span `t.NAME`).  Every call above is also judged by the
# generator's own walk of the text (unresolved_reads): what each construct
# means to be is checked against it.
# Written last, from a random stream of their own.

# the callees of the unresolved calls (the receiver label is "unresolved:" + callee)
UNRESOLVED_CALLEES = ["name", "attribute", "dotted", "instance", "self"]
UNRESOLVED_CONSTRUCTS = ["reads-unresolved-" + k for k in (
    "dotted", "alias-local", "alias-module", "parameter", "inherited-self", "inherited-instance",
    "inherited-class", "dropped", "returned", "tool")]
UNRESOLVED_DECOYS = ["reads-unresolved-decoy-" + k for k in (
    "external", "external-alias", "external-from", "own-def", "constructor", "other-name", "getattr",
    "local-import", "local-external")]


def write_shell(rd):
    """`PKG/shell.py`: producers named `run` and `join`."""
    p = rd.p
    rel = "%s/%s/shell.py" % (p.outrel, rd.pkg)
    w = W()
    p.modules[rel] = w
    w.lineof('"""Shell helpers: tool results."""')
    w.end()
    w.end()
    made = []
    for name in ("run", "join"):
        w.lineof("def %s(query):" % name)
        prod = p.producer(name, rel)
        rd.display_return(rel, w, "    ", prod, extras=rd.rng.sample(READ_KEYS, rd.rng.randint(1, 2)))
        made.append(prod)
        w.end()
        w.end()
    return rel


def write_unresolved(rd):
    p, rng = rd.p, rd.rng
    probes = pooled_probes(rd)
    if not probes:
        return
    shell = rng.random() < 0.7
    if shell:
        write_shell(rd)
    rel = "%s/tests/test_unresolved.py" % p.outrel
    w = W()
    p.modules[rel] = w
    mod = module_of(p, rd.probes_rel)
    intents = p.unresolved_intents

    def call(ind, lead, callee, args, trail, construct, want):
        w.put(ind + lead)
        pos, _ = w.put(callee + args)
        w.lineof(trail)
        intents.append((rel, pos, construct, want))

    def key_of(prod):
        return json.dumps(rng.choice(sorted(rd.pool(prod))))

    w.lineof('"""Tests calling producers through names toolshape does not resolve."""')
    w.lineof("import %s" % mod)
    if shell:
        w.lineof("import subprocess")
        w.lineof("import subprocess as sp")
        w.lineof("from os.path import join")
    station = rd.station and rng.random() < 0.8
    if station:
        w.lineof("from %s import Station" % mod)
    own = []  # names bound by this module's own def / class
    names = sorted({prod.name for _, prod in probes})
    if len(names) > 1 and rng.random() < 0.6:
        own = rng.sample(names, 2)
    alias_mod = p.fresh("probes_mod")
    w.lineof("%s = %s" % (alias_mod, mod))
    w.end()
    w.end()
    if own:
        w.lineof("def %s(query):" % own[0])
        w.lineof("    return None")
        w.end()
        w.end()
        w.lineof("class %s:" % own[1])
        w.lineof("    def __init__(self, query):")
        w.lineof("        self.query = query")
        w.end()
        w.end()
    for _ in range(rng.randint(2, 5)):
        rel_t, prod = rng.choice(probes)
        N = prod.name
        k = key_of(prod)
        kind = rng.choice(["local-import", "dotted", "alias-local", "alias-module", "parameter", "dropped",
                           "returned"])
        fn = p.fresh("test_unresolved")
        if kind == "parameter":
            w.lineof("def %s(%s, other=None):" % (fn, N))
            call("    ", "r = ", N, '("q")', "", "parameter", "unresolved")
            w.lineof("    assert r[%s] is not None" % k)
        else:
            w.lineof("def %s():" % fn)
            target = None
            if kind == "local-import":
                src = mod if rng.random() < 0.5 else module_of(p, rel_t)
                w.lineof("    from %s import %s" % (src, N))
                callee = N
                # imported inside the function, bound there once: resolved as a
                # module-level import is ("**Imports inside a function**"), to
                # the producer SRC defines (none: a facade's name probes.py lacks)
                target = next((q for r, q, _ in rd.probes if module_of(p, r) == src and q.name == N), None)
            elif kind == "alias-local":
                t = p.fresh("t")
                w.lineof("    %s = %s" % (t, mod))
                callee = t + "." + N
            elif kind == "alias-module":
                callee = alias_mod + "." + N
            else:
                callee = mod + "." + N
            if kind == "dropped":
                call("    ", "", callee, '("q")', "", "dropped", "unresolved")
            elif kind == "returned":
                call("    ", "return ", callee, '("q")', "", "returned", "unresolved")
            else:
                lead, trail = rng.choice([("r = ", ""), ("assert ", "[%s]" % k), ("v = ", ".get(%s)" % k),
                                          ("assert %s in " % k, "")])
                if target is not None:
                    # a receiver of the producer imported: the read written is one
                    call("    ", lead, callee, '("q")', trail, "decoy-local-import", "resolved")
                    (line, col) = intents[-1][1]
                    end = (line, col + len(callee + '("q")'))
                    recv = Recv("producer-call", via=[target])
                    key = json.loads(k)
                    if trail.startswith("["):
                        p.reads.append((rel, recv, "subscript", key, ((line, col), (end[0], end[1] + len(trail)))))
                    elif trail.startswith(".get("):
                        p.reads.append((rel, recv, "get", key, ((line, col), (end[0], end[1] + len(trail)))))
                    elif lead.startswith("assert %s in " % k):
                        p.reads.append((rel, recv, "in", key, ((line, col - len(lead) + len("assert ")), end)))
                else:
                    call("    ", lead, callee, '("q")', trail, "local-import-undefined" if kind == "local-import"
                         else kind, "unresolved")
        w.end()
        w.end()
        if prod.decorated and intents[-1][3] == "unresolved":
            intents.append((rel, intents[-1][1], "tool", "unresolved"))
    # inherited methods
    if station:
        m, _ = rng.choice(rd.station)
        sub = p.fresh("Sub")
        w.lineof("class %s(Station):" % sub)
        w.lineof("    def go(self):")
        call("        ", "r = ", "self." + m.name, '("q")', "", "inherited-self", "unresolved")
        w.lineof("        return r")
        w.end()
        w.end()
        w.lineof("def %s():" % p.fresh("test_inherited"))
        call("    ", "x = ", sub + "()." + m.name, '("q")', "", "inherited-instance", "unresolved")
        call("    ", "y = ", sub + "." + m.name, '(None, "q")', "", "inherited-class", "unresolved")
        w.end()
        w.end()
    else:
        rel_t, prod = rng.choice(probes)
        sub = p.fresh("Local")
        w.lineof("class %s:" % sub)
        w.lineof("    def go(self):")
        call("        ", "return ", "self." + prod.name, '("q")', "", "inherited-self", "unresolved")
        w.end()
        w.end()
    # decoys
    rel_t, prod = rng.choice(probes)
    w.lineof("def %s():" % p.fresh("test_decoys"))
    other = p.fresh("other")
    w.lineof("    from %s import %s as %s" % (mod, prod.name, other))
    call("    ", "x = ", other, '("q")', "", "decoy-other-name", None)
    p.forms["reads-unresolved-decoy-other-name"] += 1
    # a use as a value through the module alias: an unresolved use
    # ("**Uses as a value toolshape cannot resolve**"), the whole value of an
    # assignment (an escape of a tool too)
    w.put("    fn = ")
    pos, _ = w.put("%s.%s" % (alias_mod, prod.name))
    w.end()
    p.unresolved_use_intents.append((rel, pos, prod, True, "alias-module-value", "unresolved"))
    w.lineof('    y = getattr(%s, "%s")("q")' % (alias_mod, prod.name))
    p.forms["reads-unresolved-decoy-getattr"] += 1
    if own:
        call("    ", "a = ", own[0], '("q")', "", "decoy-own-def", "resolved")
        call("    ", "b = ", own[1], '("q")', "", "decoy-constructor", "resolved")
    if shell:
        call("    ", "c = ", "subprocess.run", '(["true"], check=False)', "", "decoy-external", "exempt")
        call("    ", "", "sp.run", '(["true"])', "", "decoy-external-alias", "exempt")
        call("    ", "d = ", "join", '("a", "b")', "", "decoy-external-from", "exempt")
    w.lineof("    return fn, y")
    w.end()
    w.end()
    if shell:
        # the same module, imported inside a function, once: exempt as well
        # ("**Imports inside a function**")
        w.lineof("def %s():" % p.fresh("test_local_external"))
        w.lineof("    import subprocess")
        call("    ", "return ", "subprocess.run", '(["true"])', "", "decoy-local-external", "exempt")
        w.end()
        w.end()


# --------------------------------------------------------------------------
# uses as a value toolshape cannot resolve (--with-readers; docs/rules.md
# "**Uses as a value toolshape cannot resolve**")
#
# Most programs also get `tests/test_unresolved_uses.py` (and often
# `tests/test_star_uses.py`), using producers of probes.py (tools and
# producers that are none) as values through what toolshape does not
# resolve: a name imported inside the test function more than once (`from
# MOD import N` before each use), an attribute of a module so imported
# (`from PKG import probes`, `probes.N`), a dotted path (`import PKG.probes` at module level,
# `PKG.probes.N`), a module alias bound by an assignment at module level
# (`t = PKG.probes`, `t.N`), a direct tool call's callee (`agent.tool.N`), a
# name of the test module bound by an assignment (`N = make_other()`) or
# twice (`try: from MOD import N / except ImportError: N = None`), a name of
# a star import (`from MOD import *`), `subprocess.run` after `import
# subprocess` twice inside the function (shell.py's `run`), a name bound
# inside the function by an import and by an assignment (docs/rules.md: "to
# bindings at least one of which is an import"): an import with a fallback
# (`try: from MOD import N / except ImportError: N = None`, "local-fallback";
# `try: import subprocess / except ImportError: subprocess = None` then
# `subprocess.run`, "local-external-fallback": bound twice, so no exemption)
# or rebound after its import (`from MOD import N` then `N = wrap_value(N)`,
# "mixed"), `self.m` in a class
# that does not define `m` (a subclass of Station, or a class of its own);
# each use in a form giving the producer another name (USE_FORMS "renamed":
# the whole value of an assignment, plain, annotated, chained, a walrus, a
# dict display's pair), as the one argument of a wrapper called at once
# ("wrapped") or a plain one ("plain", PLAIN_USE_LABELS: an argument, a list
# or tuple element, an operand, `len(X)`, `for v in X`, `print(X)`, `v =
# executor.submit(X, 1)`: handed to a call that keeps it is a form of a
# tool's escape but none of an unresolved use), parenthesized now and then.  Each renamed or wrapped use is one escape read
# (span the use without its parentheses) of every origin of every producer
# so named, a tool or not; the plain uses, of tools ("-tool-plain") and of
# producers that are none ("-plain", and "decoy-plain-FORM" per form), are
# decoys: no read.  Next to decoys judged otherwise: `subprocess.run` with `import
# subprocess` at module level or once inside the function (exempt), a name
# or a module imported once inside the function (resolved, docs/rules.md
# "**Imports inside a function**": an ordinary escape, p.escapes, of a tool
# only when renamed, wrapped or handed to a call that keeps it (`len(X)`,
# `v = executor.submit(X, 1)`), resolve_local_use), a parameter or a local variable named
# like a producer and a name bound inside the function by a parameter and
# an assignment, no import ("parameter-assigned": not judged), a name bound by the module's own `def` or
# `class` (resolved).  What each construct means to be is checked against
# the generator's own judgement (UnresolvedJudge.uses); the reads are that
# judgement's.  Written last, from a random stream of their own.

# category -> [(text before, text after)], {v} / {w} fresh names
USE_FORMS = {
    "renamed": [("{v} = ", ""), ("{v}: object = ", ""), ("{v} = {w} = ", ""), ('{v} = {"run": ', "}"),
                ("assert ({v} := ", ")")],
    "wrapped": [("raw(", ')("q")'), ("{v} = raw(", ')("q")')],
    "plain": [("check_value(", ")"), ("{v} = [", ", None]"), ("assert ", " is not None"), ("{v} = (", ", 1)"),
              ("assert len(", ") >= 0"), ("for {v} in ", ": pass"), ("print(", ")"),
              ("{v} = executor.submit(", ", 1)")],
}
# the plain forms, labelled (the constructs "reads-unresolved-use-decoy-plain-LABEL",
# counted for producers that are no tools: no read, as for a tool)
PLAIN_USE_LABELS = dict(zip(USE_FORMS["plain"], ["argument", "list", "operand", "tuple", "len", "for", "print",
                                                 "kept"]))
# the plain forms handing the value to a call that keeps what it gives
# (docs/rules.md "**Escapes.**": `assert len(X) >= 0`, `v = executor.submit(X,
# 1)`): no unresolved use (not one of its forms), but a resolved tool's use so
# is an escape of the tool (resolve_local_use)
KEPT_PLAIN_LABELS = ("len", "kept")
# the receiver labels of the unresolved uses ("unresolved-use:" + kind)
UNRESOLVED_USE_KINDS = ["name", "attribute", "dotted", "tool-callee", "self", "instance"]
# the constructs: read ("reads-unresolved-use-C", "-tool" too for a tool's,
# "-other" for a producer's that is none),
# a plain use, of a tool ("...-decoy-C-tool-plain") or not ("...-decoy-C-plain",
# "...-decoy-plain-FORM"), the decoys ("...-decoy-C")
UNRESOLVED_USE_CONSTRUCTS = (
    ["reads-unresolved-use-" + k for k in (
        "local-import", "local-module", "dotted", "alias", "tool-callee", "module-assigned", "module-twice",
        "star", "local-external", "inherited-self", "alias-module-value", "renamed", "wrapped",
        "parenthesized", "mixed", "local-fallback", "local-external-fallback")]
    + ["reads-unresolved-use-%s-tool" % k for k in (
        "local-import", "local-module", "dotted", "tool-callee", "module-assigned", "star", "renamed", "wrapped",
        "mixed", "local-fallback")]
    + ["reads-unresolved-use-%s-other" % k for k in ("mixed", "local-fallback")]
    + ["reads-unresolved-use-%s-other" % k for k in ("renamed", "wrapped")]
    + ["reads-unresolved-use-decoy-%s-tool-plain" % k for k in (
        "local-import", "local-module", "dotted", "tool-callee", "module-assigned", "star", "local-fallback",
        "mixed")]
    + ["reads-unresolved-use-decoy-%s-plain" % k for k in (
        "local-import", "local-module", "dotted", "alias", "tool-callee", "module-assigned", "module-twice",
        "star", "local-external", "inherited-self", "local-fallback", "mixed", "local-external-fallback")]
    + ["reads-unresolved-use-decoy-plain-" + k for k in PLAIN_USE_LABELS.values()]
    + ["reads-unresolved-use-decoy-" + k for k in (
        "external", "parameter", "local-variable", "parameter-assigned", "own-def", "own-class",
        # imported inside the function once: resolved (an escape) or exempt
        "local-import", "local-module", "local-external")]
    + ["escape-local-%s-%s" % (k, t) for k in ("local-import", "local-module") for t in ("tool", "other")]
    + ["escape-local-kept-tool"])


class UseWriter(ModuleWriter):
    """Writes uses as values into one module and what each means to be
    (p.unresolved_use_intents)."""

    def put(self, ind, text, prod, construct, want, cat=None):
        """One statement using ``text`` (naming ``prod``) as a value; ``want``:
        the judgement of its call ("unresolved", "resolved", "exempt") or
        "skip" (a name not judged)."""
        p, rng, w = self.p, self.rng, self.w
        if cat is None:
            cat = rng.choice(sorted(USE_FORMS))
        before, after = rng.choice(USE_FORMS[cat])
        lead = trail = ""
        if rng.random() < 0.2:
            lead, trail = rng.choice([("(", ")"), ("((", "))"), ("( ", " )")])
        v, x = p.fresh("v"), p.fresh("w")
        w.put(ind + before.replace("{v}", v).replace("{w}", x) + lead)
        pos, _ = w.put(text)
        w.put(trail + after.replace("{v}", v).replace("{w}", x))
        w.end()
        p.unresolved_use_intents.append((self.rel, pos, prod, cat != "plain", construct, want, cat, bool(lead),
                                         PLAIN_USE_LABELS.get((before, after))))


def pooled_probes(rd):
    """The probes (test module, producer) of the pool a tests module reads,
    or None: none, or one program in ten left without that module (one draw
    of the program's generator either way once there are probes)."""
    probes = [(rel_t, prod) for rel_t, prod, _ in rd.probes if rd.pool(prod)]
    if not probes or rd.rng.random() < 0.1:
        return None
    return probes


def new_module(p, path):
    """A new module of program `p` at `path` (below its root): its rel and writer."""
    rel = "%s/%s" % (p.outrel, path)
    w = W()
    p.modules[rel] = w
    return rel, w


def write_unresolved_uses(rd):
    """`tests/test_unresolved_uses.py` and `tests/test_star_uses.py` (see above)."""
    p, rng = rd.p, rd.rng
    probes = pooled_probes(rd)
    if not probes:
        return
    rel, w = new_module(p, "tests/test_unresolved_uses.py")
    uw = UseWriter(rd, rel, w)
    runs = [prod for prod in p.producers if prod.name == "run"]
    names = sorted({prod.name for _, prod in probes})
    rng.shuffle(names)
    # the names the module binds itself: by an assignment, twice, by a def, by a class
    module_names = {}
    for kind in ("module-assigned", "module-twice", "own-def", "own-class"):
        if names and rng.random() < 0.7:
            module_names[kind] = names.pop()
    by_name = {}
    for rel_t, prod in probes:
        by_name.setdefault(prod.name, []).append((rel_t, prod))

    def pick(pool=None):
        rel_t, prod = rng.choice(pool or probes)
        return rel_t, prod, module_of(p, rel_t)

    w.lineof('"""Tests using producers as values through names toolshape does not resolve."""')
    w.lineof("import subprocess")
    rel_d, prod_d, mod_d = pick()
    w.lineof("import %s" % mod_d)
    station = rd.station and rng.random() < 0.7
    if station:
        w.lineof("from %s import Station" % module_of(p, rd.probes_rel))
    alias = p.fresh("t")
    w.lineof("%s = %s" % (alias, mod_d))
    if "module-assigned" in module_names:
        w.lineof("%s = make_other()" % module_names["module-assigned"])
    if "module-twice" in module_names:
        N = module_names["module-twice"]
        w.lineof("try:")
        w.lineof("    from %s import %s" % (module_of(p, by_name[N][0][0]), N))
        w.lineof("except ImportError:")
        w.lineof("    %s = None" % N)
    w.end()
    w.end()
    w.lineof("def raw(f):")
    w.lineof("    return f")
    w.end()
    w.end()
    if "own-def" in module_names:
        w.lineof("def %s(query):" % module_names["own-def"])
        w.lineof("    return None")
        w.end()
        w.end()
    if "own-class" in module_names:
        w.lineof("class %s:" % module_names["own-class"])
        w.lineof("    pass")
        w.end()
        w.end()
    kinds = ["local-import", "local-module", "dotted", "alias", "tool-callee", "parameter", "local-variable",
             "mixed", "external", "local-external", "local-fallback", "local-external-fallback",
             "parameter-assigned"]
    kinds += [k for k in module_names]
    for _ in range(rng.randint(3, 7)):
        kind = rng.choice(kinds)
        rel_t, prod, mod = pick()
        N = prod.name
        fn = p.fresh("test_unresolved_use")
        if kind in ("parameter", "tool-callee", "parameter-assigned"):
            w.lineof("def %s(%s):" % (fn, "agent" if kind == "tool-callee" else N))
        else:
            w.lineof("def %s():" % fn)
        # the names the function's imports bind, and the uses loading them:
        # (intent index, name, text)
        imported = Counter()
        local_uses = []
        for _ in range(rng.randint(1, 3)):
            if kind == "local-import":
                w.lineof("    from %s import %s" % (mod, N))
                imported[N] += 1
                local_uses.append((len(p.unresolved_use_intents), N, N))
                uw.put("    ", N, prod, kind, "unresolved")
            elif kind == "local-module":
                pkg_part, _, last = mod.rpartition(".")
                local = rng.choice([last, p.fresh(last)])
                w.lineof("    from %s import %s" % (pkg_part, last if local == last else last + " as " + local))
                imported[local] += 1
                local_uses.append((len(p.unresolved_use_intents), local, local + "." + N))
                uw.put("    ", local + "." + N, prod, kind, "unresolved")
            elif kind == "dotted":
                uw.put("    ", mod_d + "." + prod_d.name, prod_d, kind, "unresolved")
            elif kind == "alias":
                uw.put("    ", alias + "." + prod_d.name, prod_d, kind, "unresolved")
            elif kind == "tool-callee":
                uw.put("    ", "agent.tool." + N, prod, kind, "unresolved")
            elif kind == "parameter":
                uw.put("    ", N, prod, kind, "skip")
            elif kind == "local-variable":
                w.lineof("    %s = make_other()" % N)
                uw.put("    ", N, prod, kind, "skip")
            elif kind == "parameter-assigned":
                # bound by a parameter and an assignment, no import: not judged
                w.lineof("    if %s is None:" % N)
                w.lineof("        %s = make_other()" % N)
                uw.put("    ", N, prod, kind, "skip")
            elif kind == "mixed":
                # an import, then the name rebound: bound twice, one of them
                # an import: judged, and resolving to nothing
                w.lineof("    from %s import %s" % (mod, N))
                w.lineof("    %s = wrap_value(%s)" % (N, N))
                uw.put("    ", N, prod, kind, "unresolved")
            elif kind == "local-fallback":
                # an import with a fallback: the import may be the one that ran
                w.lineof("    try:")
                w.lineof("        from %s import %s" % (mod, N))
                w.lineof("    except ImportError:")
                w.lineof("        %s = None" % N)
                uw.put("    ", N, prod, kind, "unresolved")
            elif kind == "local-external-fallback":
                # from outside the project, but bound twice: no exemption
                w.lineof("    try:")
                w.lineof("        import subprocess")
                w.lineof("    except ImportError:")
                w.lineof("        subprocess = None")
                prod_r = runs[0] if runs else prod
                uw.put("    ", "subprocess.run", prod_r, kind, "unresolved")
            elif kind in ("external", "local-external"):
                if kind == "local-external":
                    w.lineof("    import subprocess")
                    imported["subprocess"] += 1
                    local_uses.append((len(p.unresolved_use_intents), "subprocess", "subprocess.run"))
                prod_r = runs[0] if runs else prod
                uw.put("    ", "subprocess.run", prod_r, kind, "unresolved" if kind == "local-external" else "exempt")
            else:
                N2 = module_names[kind]
                want = "resolved" if kind.startswith("own-") else "unresolved"
                uw.put("    ", N2, by_name[N2][0][1], kind, want)
        # a name the function's imports bind once resolves as a module-level
        # one does ("**Imports inside a function**"): `subprocess.run` is
        # exempt, a producer's name or module attribute an ordinary escape
        # (of a tool too only when renamed or wrapped); bound twice (by two
        # imports): unresolved, as before
        for i, name, text in local_uses:
            if imported[name] == 1:
                resolve_local_use(p, i, text)
        w.lineof("    return None")
        w.end()
        w.end()
    # `self.m` in a class that does not define `m`
    if station:
        m, _ = rng.choice(rd.station)
        cls, base, N, prod = p.fresh("SubStation"), "(Station)", m.name, m
    else:
        rel_t, prod, _ = pick()
        cls, base, N = p.fresh("Local"), "", prod.name
    w.lineof("class %s%s:" % (cls, base))
    w.lineof("    def go(self):")
    uw.put("        ", "self." + N, prod, "inherited-self", "unresolved")
    w.lineof("        return None")
    # a star import
    if rng.random() < 0.6:
        rel_s = "%s/tests/test_star_uses.py" % p.outrel
        ws = W()
        p.modules[rel_s] = ws
        sw = UseWriter(rd, rel_s, ws)
        rel_t, _, mod = pick()
        ws.lineof('"""Tests using what a star import binds."""')
        ws.lineof("from %s import *" % mod)
        ws.end()
        ws.end()
        ws.lineof("def raw(f):")
        ws.lineof("    return f")
        ws.end()
        ws.end()
        own = [(r, q) for r, q in probes if r == rel_t]
        ws.lineof("def %s():" % p.fresh("test_star_use"))
        for _ in range(rng.randint(1, 4)):
            _, prod = rng.choice(own)
            sw.put("    ", prod.name, prod, "star", "unresolved")
        ws.lineof("    return None")


def resolve_local_use(p, i, text):
    """The use of intent ``i`` (write_unresolved_uses), loading a name bound
    once by an import inside its function: `subprocess.run` exempt, else
    resolved to its producer, whose escape it is (a tool's only when renamed,
    wrapped or handed to a call that keeps it: KEPT_PLAIN_LABELS)."""
    rel, pos, prod, tool_too, construct, want, cat, paren, plain = p.unresolved_use_intents[i]
    if construct == "local-external":
        p.unresolved_use_intents[i] = (rel, pos, prod, tool_too, construct, "exempt", cat, paren, plain)
        return
    p.unresolved_use_intents[i] = (rel, pos, prod, tool_too, construct, "resolved", cat, paren, plain)
    # a tool's escape in the forms of an unresolved use, and handed to a call
    # that keeps what it gives (no unresolved use: tool_too left as it is)
    kept = plain in KEPT_PLAIN_LABELS
    p.escapes.append((rel, prod, "local/" + construct, (pos, (pos[0], pos[1] + len(text))), text,
                      tool_too or kept))
    p.forms["escape-local-%s-%s" % (construct, "tool" if prod.decorated else "other")] += 1
    if kept and prod.decorated:
        p.forms["escape-local-kept-tool"] += 1


def check_unresolved_uses(p):
    """What each use written by write_unresolved_uses (and write_unresolved's
    `fn = ALIAS.N`) means to be, against the generator's own judgement of
    the use (unresolved_reads: UnresolvedJudge.uses); a construct counts when
    its read is the one meant (a producer whose keys are all suppressed, or
    a namesake that is none, gives another: not counted)."""
    for item in p.unresolved_use_intents:
        rel, (line, col), prod, tool_too, construct, want = item[:6]
        cat, paren, plain = item[6:] if len(item) > 6 else ("renamed", False, None)
        got = p.unresolved_use_judged.get((rel, line, col))
        if want == "skip":
            if got is not None:
                raise AssertionError("%s:%d:%d: %s judged %s, not left out" % (rel, line, col, construct, got))
            p.forms["reads-unresolved-use-decoy-" + construct] += 1
            continue
        if got is None:
            # no producer with keys named so: not judged
            continue
        how, read = got
        if how != want:
            raise AssertionError("%s:%d:%d: %s judged %s, not %s" % (rel, line, col, construct, how, want))
        # only the forms that make a tool's use an escape, a tool's or not
        meant = want == "unresolved" and tool_too
        if read != meant:
            continue
        if want != "unresolved":
            p.forms["reads-unresolved-use-decoy-" + construct] += 1
        elif read:
            for c in (construct, cat) + (("parenthesized",) if paren else ()):
                p.forms["reads-unresolved-use-" + c] += 1
                p.forms["reads-unresolved-use-%s-%s" % (c, "tool" if prod.decorated else "other")] += 1
        elif prod.decorated:
            p.forms["reads-unresolved-use-decoy-%s-tool-plain" % construct] += 1
        else:
            p.forms["reads-unresolved-use-decoy-%s-plain" % construct] += 1
            p.forms["reads-unresolved-use-decoy-plain-" + plain] += 1


# --------------------------------------------------------------------------
# reads through imports inside a function (--with-readers; docs/rules.md
# TS003 "**Imports inside a function**")
#
# Most programs also get `tests/test_local_imports.py`, whose tests import
# what they call inside the test function, once, in one of the forms a
# module-level import takes (LOCAL_READ_FORMS: `from MOD import N`, `from
# MOD import N as the_N`, `import MOD as m_X`, `from PKG import X`): a
# producer of probes.py or facade.py, a builder (its extra keywords TS003
# findings at the call), the probes' class `Station` (`Station().m(...)`,
# `ST = Station()` then `ST.m(...)`).  Such a name resolves as a module-level
# one does, so the consumer blocks of Consumer.block read the results as
# anywhere (receiver kinds "local:...": LocalConsumer), also from a def, a
# lambda or a comprehension nested in the function (LOCAL_READ_PLACES), and a
# producer imported so and used as a value is an ordinary escape
# (EscapeWriter.put_use; a tool's only when renamed or wrapped).  Next to
# decoys whose calls resolve nothing, judged by the generator's walk
# (UnresolvedJudge, p.unresolved_intents) and read once each, as escapes
# (LOCAL_READ_DECOYS): the import bound twice (`try` / `except ImportError`),
# made in a class body (the call there, or in a method), in a def nested in
# the test, a dotted `import PKG.probes`, the name rebound after its import,
# two imports of `run` in an `if` / `else` from outside the project; and
# `from subprocess import run` / `import subprocess as sp` inside the test:
# exempt (no unresolved call).  A use as a value of a name imported twice
# (`fn = N`) is an unresolved use.  Written last, from a random stream of
# their own.

LOCAL_READ_FORMS = ["from_abs", "from_abs_alias", "import_as", "from_pkg_module"]
LOCAL_READ_PLACES = ["nested-def", "lambda", "comprehension"]
LOCAL_READ_DECOYS = ["twice", "class-body", "class-method", "inner-import", "dotted", "rebound", "external",
                     "external-twice"]
LOCAL_READ_CONSTRUCTS = (["reads-local-access-" + f for f in LOCAL_READ_FORMS]
                         + ["reads-local-target-" + k for k in ("producer", "builder", "instance-call",
                                                                "instance-name-call")]
                         + ["reads-local-place-" + k for k in LOCAL_READ_PLACES]
                         + ["reads-unresolved-local-" + k for k in LOCAL_READ_DECOYS]
                         + ["reads-local-value", "reads-unresolved-use-local-twice"])
# the receivers called through an import inside the function (reads_by_receiver)
LOCAL_RECEIVER_KINDS = ["local:producer-call", "local:builder-call", "local:instance-call",
                        "local:instance-name-call", "name:local:producer-call"]


class LocalConsumer(Consumer):
    """A consumer whose targets are called through imports inside the test
    function: its receivers' kinds are labelled "local:"."""

    def _put_call(self, t, keys=None):
        r = super()._put_call(t, keys)
        if r is None:
            return r
        return Recv("local:" + r.kind, r.tags, r.via, r.tools, r.ckws, r.wide)


def local_read_access(p, rel_t, name, form):
    """(import line, callee text) of ``name`` of module ``rel_t`` imported
    inside a function in ``form`` (LOCAL_READ_FORMS)."""
    mod = module_of(p, rel_t)
    pkg_part, _, base = mod.rpartition(".")
    if form == "from_abs":
        return "from %s import %s" % (mod, name), name
    if form == "from_abs_alias":
        local = "the_" + name.strip("_")
        return "from %s import %s as %s" % (mod, name, local), local
    if form == "import_as":
        return "import %s as m_%s" % (mod, base), "m_%s.%s" % (base, name)
    return "from %s import %s" % (pkg_part, base), base + "." + name


def write_local_imports(rd):
    """`tests/test_local_imports.py` (see above)."""
    p, rng = rd.p, rd.rng
    probes = pooled_probes(rd)
    if not probes:
        return
    rel, w = new_module(p, "tests/test_local_imports.py")
    w.lineof('"""Tests importing what they call inside the test function."""')
    w.lineof("import json")
    w.end()
    w.end()
    c = LocalConsumer(rd, rel, w, [])
    ew = EscapeWriter(rd, rel, w, [], [])
    uw = UseWriter(rd, rel, w)
    runs = [prod for prod in p.producers if prod.name == "run"]
    kinds = ["producer", "producer", "builder", "instance", "place", "value", "decoy", "decoy", "decoy"]

    def imported(rel_t, name):
        form = rng.choice(LOCAL_READ_FORMS)
        line, callee = local_read_access(p, rel_t, name, form)
        w.lineof("    " + line)
        p.forms["reads-local-access-" + form] += 1
        return callee

    def dead_call(ind, callee, args, construct, want, key=None):
        lead, trail = rng.choice([("x = ", ""), ("", ""), ("assert ", "[%s]" % json.dumps(key))]
                                 if key is not None else [("x = ", ""), ("", "")])
        w.put(ind + lead)
        pos, _ = w.put(callee + args)
        w.lineof(trail)
        p.unresolved_intents.append((rel, pos, construct, want))

    for _ in range(rng.randint(3, 6)):
        kind = rng.choice(kinds)
        w.lineof("def %s(agent, query, executor):" % p.fresh("test_local"))
        if kind in ("producer", "place", "value"):
            rel_t, prod = rng.choice(probes)
            callee = imported(rel_t, prod.name)
            t = Target("producer", callee, '("q")', prod, "producer")
            p.forms["reads-local-target-producer"] += 1
            if kind == "producer":
                c.targets = [t]
                for _ in range(rng.randint(1, 3)):
                    c.block("    ")
            elif kind == "place":
                place = rng.choice(LOCAL_READ_PLACES)
                p.forms["reads-local-place-" + place] += 1
                if place == "nested-def":
                    w.lineof("    def check(flag=None):")
                    c.targets = [t]
                    c.block("        ")
                    w.lineof("        return None")
                    w.lineof("    check()")
                else:
                    # a receiver read in a lambda's body or a comprehension's element
                    key, _ = c.key_for(rd.recv_pool(c.peek(t)))
                    w.put("    hook = lambda: " if place == "lambda" else "    x = [")
                    s = w.put("")[0]
                    recv = c.put_call(t)
                    _, e = w.put("[%s]" % json.dumps(key, ensure_ascii=False))
                    w.lineof("" if place == "lambda" else " for _ in range(2)]")
                    # `E["content"]` is a read of the content list, never of a key
                    p.reads.append((rel, recv, "content", None, (s, e)) if key == CONTENT
                                   else (rel, recv, "subscript", key, (s, e)))
            else:
                # the producer used as a value: an ordinary escape (a tool's
                # only when renamed or wrapped)
                use = rng.choice(sorted(ESCAPE_TEMPLATES))
                ew.put_use("    ", callee, prod, "local", use)
                p.forms["reads-local-value"] += 1
                if rng.random() < 0.5:
                    # in a test of its own, bound twice, by two imports: an
                    # unresolved use when renamed
                    N = prod.name
                    mod = module_of(p, rel_t)
                    w.lineof("    return None")
                    w.end()
                    w.end()
                    w.lineof("def %s(agent, query, executor):" % p.fresh("test_local"))
                    w.lineof("    if query:")
                    w.lineof("        from %s import %s" % (mod, N))
                    w.lineof("    else:")
                    w.lineof("        from %s import %s" % (mod, N))
                    uw.put("    ", N, prod, "local-twice", "unresolved", "renamed")
        elif kind == "builder" and rd.kbuilders:
            b = rng.choice(rd.kbuilders)
            callee = imported(b.rel, b.name)
            c.targets = [Target("builder", callee, None, b, "builder-" + ("chain" if b.producer else b.family))]
            p.forms["reads-local-target-builder"] += 1
            for _ in range(rng.randint(1, 2)):
                c.block("    ")
        elif kind == "instance" and rd.station:
            cls = imported(rd.probes_rel, "Station")
            m, _ = rng.choice(rd.station)
            if rng.random() < 0.5:
                t = Target("instance", cls + "()." + m.name, '("q")', m, "instance-call")
            else:
                t = Target("instance", m.name, '("q")', m, "instance-name-call", instance=cls)
            p.forms["reads-local-target-" + t.label] += 1
            c.targets = [t]
            for _ in range(rng.randint(1, 2)):
                c.block("    ")
        else:
            rel_t, prod = rng.choice(probes)
            N = prod.name
            mod = module_of(p, rel_t)
            key = rng.choice(sorted(rd.pool(prod)))
            d = rng.choice(LOCAL_READ_DECOYS)
            construct = "local-" + d
            if d == "twice":
                w.lineof("    try:")
                w.lineof("        from %s import %s" % (mod, N))
                w.lineof("    except ImportError:")
                w.lineof("        %s = None" % N)
                dead_call("    ", N, '("q")', construct, "unresolved", key)
            elif d in ("class-body", "class-method"):
                # the test's own body: nothing; the class after it
                w.lineof("    return None")
                w.end()
                w.end()
                w.lineof("class %s:" % p.fresh("TestLocal"))
                w.lineof("    from %s import %s" % (mod, N))
                if d == "class-body":
                    dead_call("    ", N, '("q")', construct, "unresolved")
                else:
                    w.lineof("    def test_m(self):")
                    dead_call("        ", N, '("q")', construct, "unresolved", key)
                    w.lineof("        return None")
                w.end()
                w.end()
                continue
            elif d == "inner-import":
                w.lineof("    def load():")
                w.lineof("        from %s import %s" % (mod, N))
                w.lineof("        return None")
                dead_call("    ", N, '("q")', construct, "unresolved", key)
            elif d == "dotted":
                w.lineof("    import %s" % mod)
                dead_call("    ", mod + "." + N, '("q")', construct, "unresolved", key)
            elif d == "rebound":
                w.lineof("    from %s import %s" % (mod, N))
                w.lineof("    %s = wrap_value(%s)" % (N, N))
                dead_call("    ", N, '("q")', construct, "unresolved", key)
            elif d == "external":
                w.lineof("    from subprocess import run")
                w.lineof("    import subprocess as sp")
                dead_call("    ", "run", '(["true"])', construct, "exempt")
                dead_call("    ", "sp.run", '(["true"])', construct, "exempt")
            else:
                w.lineof("    if query:")
                w.lineof("        from subprocess import run")
                w.lineof("    else:")
                w.lineof("        from shutil import run")
                dead_call("    ", "run", '(["true"])', construct, "unresolved")
        w.lineof("    return None")
        w.end()
        w.end()


# --------------------------------------------------------------------------
# decorators (--with-readers; docs/rules.md "**Decorators.**")
#
# Besides the decorators of the producers above (probes, Station methods,
# facades, dispatchers, the escapes module's tools and Runner methods, each
# recorded as written: put_decorators), most programs get `PKG/decos.py`
# (decorators of the project: `log_calls(fn)`, `override(level)` returning
# a decorator, `abstractmethod(fn)`), `PKG/decorated.py` (functions, an
# `async def` too, and the methods of a class `Decorated_N`, each under a
# stack of one to three decorators) and often `tests/conftest.py` with
# pytest-style fixtures (`@pytest.fixture`, `@pytest.fixture(scope=...)`,
# `@fixture`) returning a probe's or a facade's call (a producer by a chain)
# or a display, next to a test naming the fixtures as parameters (no read).
# Each decorator of a producer that is neither a tool decorator nor one of
# `staticmethod`, `classmethod`, `abstractmethod`, `override`,
# `abc.abstractmethod`, `typing.override`, `typing_extensions.override` as
# written (not called) is a read of form escape (no key), span the decorator's
# expression, of every origin the producer reaches (chains followed whole, no
# dispatch); the exempt ones and the tool decorators give nothing (`@override`
# bound to the project's own `override` too), while `@override(1)`,
# `@decos.abstractmethod`, `@builtins.staticmethod` and
# `@typing.no_type_check` are no exemptions.  Decoys whose decorators give
# nothing: a decorated function that is no producer (returning None, a
# compliant result, or holding a finding it does not return, or returning a
# call on an instance: no chain), a decorated def nested in a function, a
# decorated class (its method a producer), a decorated method of a nested
# class.  Written last, from a random stream of their own.

# (D text, exempt?, label, where it may stand: "function", "method" or "both")
DECORATED_CATALOG = [
    # tool decorators (exempt)
    ("tool", True, "tool", "both"), ('strands.tool(name="x")', True, "strands.tool-call", "both"),
    ("strands.tools.tool()", True, "strands.tools.tool-call", "both"),
    # the exempt names and attributes, as written
    ("staticmethod", True, "staticmethod", "method"), ("classmethod", True, "classmethod", "method"),
    ("abstractmethod", True, "abstractmethod", "both"), ("override", True, "override", "both"),
    ("abc.abstractmethod", True, "abc.abstractmethod", "both"), ("typing.override", True, "typing.override", "both"),
    ("typing_extensions.override", True, "typing_extensions.override", "both"),
    # the others hand the producer on
    ("pytest.fixture", False, "fixture", "both"), ('pytest.fixture(scope="module")', False, "fixture-call", "both"),
    ("fixture", False, "fixture-name", "both"), ("functools.lru_cache(maxsize=2)", False, "lru-cache-call", "both"),
    ("lru_cache", False, "lru-cache", "both"), ("functools.cache", False, "functools.cache", "both"),
    ("property", False, "property", "method"), ("log_calls", False, "project", "both"),
    ("decos.log_calls", False, "project-attribute", "both"), ("override(1)", False, "exempt-called", "both"),
    ("decos.abstractmethod", False, "exempt-other-module", "both"),
    ("builtins.staticmethod", False, "exempt-builtins", "method"),
    ("typing.no_type_check", False, "typing-other", "both"),
]
# the fixtures' decorators (tests/conftest.py, tests/test_fixtures.py)
FIXTURE_CATALOG = [d for d in DECORATED_CATALOG if d[2] in ("fixture", "fixture-call", "fixture-name")]
# the labels of the escapes (reads_by_receiver "decorator:" + label) the corpus must hold
DECORATOR_KINDS = ["decorator:" + d[2] for d in DECORATED_CATALOG if not d[1]]
# the exempt decorators on a producer with keys, the stacks, the sites and
# the decoys the corpus must hold
DECORATOR_CONSTRUCTS = (["reads-decorator-exempt-" + d[2] for d in DECORATED_CATALOG if d[1]]
                        + ["reads-decorator-stack-" + k for k in ("tool-and-other", "exempt-and-other",
                                                                   "two-escaping")]
                        + ["reads-decorator-site-" + k for k in ("function", "async", "method", "conftest",
                                                                  "test-module")]
                        + ["reads-decorator-body-" + k for k in ("literal", "result", "branches", "builder",
                                                                  "chain-probe", "chain-local")]
                        + ["reads-decorator-decoy-" + k for k in ("none", "clean", "finding-not-returned",
                                                                   "instance-chain", "nested-def", "class",
                                                                   "nested-class", "fixture-param")])


def write_decos(rd):
    """`PKG/decos.py`: the project's decorators (no producers)."""
    p = rd.p
    rel = "%s/%s/decos.py" % (p.outrel, rd.pkg)
    w = W()
    p.modules[rel] = w
    w.lineof('"""Decorators of the project."""')
    w.lineof("import functools")
    w.end()
    w.end()
    w.lineof("def log_calls(fn):")
    w.lineof("    @functools.wraps(fn)")
    w.lineof("    def wrapper(*args, **kwargs):")
    w.lineof("        return fn(*args, **kwargs)")
    w.lineof("    return wrapper")
    w.end()
    w.end()
    w.lineof("def override(level):")
    w.lineof("    def wrap(fn):")
    w.lineof("        return fn")
    w.lineof("    return wrap")
    w.end()
    w.end()
    w.lineof("def abstractmethod(fn):")
    w.lineof("    return fn")
    return rel


def decorated_imports(rd, w, relative, bound):
    """The imports every decorator of DECORATED_CATALOG needs."""
    for line in ("import abc", "import builtins", "import functools", "import typing", "import typing_extensions",
                 "from abc import abstractmethod", "from functools import lru_cache", "", "import pytest",
                 "import strands", "from pytest import fixture", "from strands import tool"):
        w.lineof(line)
    if relative:
        w.lineof("from . import decos")
        w.lineof("from .decos import log_calls, override")
    else:
        w.lineof("from %s import decos" % rd.pkg)
        w.lineof("from %s.decos import log_calls, override" % rd.pkg)
    bound |= {"abc", "builtins", "functools", "typing", "typing_extensions", "abstractmethod", "lru_cache",
              "pytest", "strands", "fixture", "tool", "decos", "log_calls", "override", "query", "self", "cls"}


def decorator_stack(rng, where, catalog=DECORATED_CATALOG):
    """One to three decorators (put_decorators entries) that may stand on a
    def ``where`` ("function" / "method"), none twice."""
    pool = [d for d in catalog if d[3] in (where, "both")]
    n = rng.choice([1, 1, 2, 2, 3])
    return [(text, exempt, label) for text, exempt, label, _ in rng.sample(pool, min(n, len(pool)))]


# the labels of the exempt decorators that are no tool decorators
EXEMPT_NAME_LABELS = ("staticmethod", "classmethod", "abstractmethod", "override", "abc.abstractmethod",
                      "typing.override", "typing_extensions.override")


def is_tool_stack(decs):
    """Does the stack ``decs`` (put_decorators entries) hold a tool decorator?"""
    return any(exempt and label not in EXEMPT_NAME_LABELS for _, exempt, label in decs)


class DecoratedWriter(ModuleWriter):
    """Writes decorated producers and their decoys into one module."""

    def __init__(self, rd, rel, w, chains, builders, instance):
        super().__init__(rd, rel, w)
        self.chains = chains      # (callee text, Producer, argument text) of other modules' producers
        self.builders = builders  # the builders imported (a body may return a call of one)
        self.instance = instance  # (Station text, [method Producer]) or None
        self.made = []            # (Producer, args, is a method) of this module: local chains

    def producer(self, ind, name, head, decs, site, method=False, is_async=False, fixture=False):
        """A decorated producer `def NAME(HEAD):` at ``ind`` (its decorators
        ``decs``), a body of one of the producer kinds."""
        p, rng, w = self.p, self.rng, self.w
        written = put_decorators(p, self.rel, w, ind, decs)
        w.lineof(ind + "%sdef %s(%s):" % ("async " if is_async else "", name, head))
        prod = p.producer(name, self.rel, decorated=is_tool_stack(decs))
        prod.decorators = written
        prod.site = site
        body = ind + "    "
        if fixture:
            w.lineof(body + 'query = "q"')
        kinds = ["literal", "literal", "result", "branches"]
        if self.builders:
            kinds.append("builder")
        if self.chains and not is_async:
            kinds += ["chain-probe", "chain-probe"]
        local = [m for m in self.made if m[2] == method]
        if local and not is_async:
            kinds.append("chain-local")
        kind = rng.choice(kinds)
        if kind == "chain-probe":
            callee, g, args = rng.choice(self.chains)
            w.lineof(body + "return %s%s" % (callee, args.replace('"q"', "query")))
            prod.via.append(g)
        elif kind == "chain-local":
            g = rng.choice(local)
            w.lineof(body + "return %s%s(query)" % ("self." if method else "", g[0].name))
            prod.via.append(g[0])
        else:
            if kind == "builder":
                # producer_body picks from the readers' builders: the ones imported here
                keep = self.rd.kbuilders, self.rd.dbuilders
                self.rd.kbuilders = [b for b in self.builders if b in keep[0]]
                self.rd.dbuilders = [b for b in self.builders if b in keep[1]]
                try:
                    self.rd.producer_body(self.rel, w, body, prod, "builder", [])
                finally:
                    self.rd.kbuilders, self.rd.dbuilders = keep
            else:
                self.rd.producer_body(self.rel, w, body, prod, kind, [])
        prod.body_kind = kind
        if not is_async:
            self.made.append((prod, "(query)", method))
        w.end()
        if not method:
            w.end()
        return prod

    def decoy(self, ind, kind, where):
        """A decorated def that is no producer: its decorators give nothing."""
        p, rng, w = self.p, self.rng, self.w
        decs = [d for d in decorator_stack(rng, where) if not d[1]] or [("log_calls", False, "project")]
        method = where == "method"
        name = p.fresh("plain_" + kind.replace("-", "_"))
        put_decorators(p, self.rel, w, ind, decs)
        w.lineof(ind + "def %s(%s):" % (name, "self, query" if method else "query"))
        body = ind + "    "
        if kind == "none":
            w.lineof(body + "return None")
        elif kind == "clean":
            w.put(body + "return ")
            p.display(self.rel, w, p.shaped_entries("query"))
            w.end()
        elif kind == "finding-not-returned":
            w.put(body + "RESULTS.append(")
            p.display(self.rel, w, p.shaped_entries("query", [("key", rng.choice(READ_KEYS), "1", False)]))
            w.put(")")
            w.end()
            w.lineof(body + "return None")
        else:  # instance-chain: calls on an instance are receivers only, no chain
            cls, methods = self.instance
            w.lineof(body + "return %s().%s(query)" % (cls, rng.choice(methods).name))
        p.producer(name, self.rel)  # no keys
        p.forms["reads-decorator-decoy-" + kind] += 1
        w.end()
        if not method:
            w.end()

    def nested_def(self):
        """A decorated def nested in a function: no producer."""
        p, w = self.p, self.w
        w.lineof("def %s(query):" % p.fresh("outer"))
        put_decorators(p, self.rel, w, "    ", decorator_stack(self.rng, "function"))
        w.lineof("    def inner(q):")
        w.put("        return ")
        p.display(self.rel, w, p.shaped_entries("q", [("key", self.rng.choice(READ_KEYS), "1", False)]))
        w.end()
        w.lineof("    return inner")
        p.forms["reads-decorator-decoy-nested-def"] += 1
        w.end()
        w.end()

    def decorated_class(self):
        """A decorated class: its decorators are no def's; its method is a
        producer (nothing reads it)."""
        p, w = self.p, self.w
        put_decorators(p, self.rel, w, "", [d for d in decorator_stack(self.rng, "function") if not d[1]]
                       or [("log_calls", False, "project")])
        w.lineof("class %s:" % p.fresh("Boxed"))
        name = p.fresh("unpack")
        w.lineof("    def %s(self, query):" % name)
        prod = p.producer(name, self.rel)
        self.rd.display_return(self.rel, w, "        ", prod)
        p.forms["reads-decorator-decoy-class"] += 1
        w.end()
        w.end()

    def nested_class(self):
        """A decorated method of a class nested in a class: no producer."""
        p, w = self.p, self.w
        w.lineof("class %s:" % p.fresh("Outer"))
        w.lineof("    class Inner:")
        put_decorators(p, self.rel, w, "        ", decorator_stack(self.rng, "method"))
        w.lineof("        def value(self, query):")
        w.put("            return ")
        p.display(self.rel, w, p.shaped_entries("query", [("key", self.rng.choice(READ_KEYS), "1", False)]))
        w.end()
        p.forms["reads-decorator-decoy-nested-class"] += 1
        w.end()
        w.end()


def decorated_chains(rd, w, relative, bound):
    """Imports of some probes / facades / base producers a body may chain onto."""
    rng = rd.rng
    chains = []
    pool = list(rd.probes) + list(rd.base)
    for rel_t, prod, args in rng.sample(pool, min(len(pool), rng.randint(1, 3))):
        chains.append((access(rd, rel_t, prod.name, bound, relative, w), prod, args))
    return chains


def decorated_builders(rd, w, relative, bound):
    """Imports of the readers' builders (a body may return a call of one)."""
    out = []
    for b in rd.kbuilders + rd.dbuilders:
        if b.name in bound or b in out:
            continue
        bound.add(b.name)
        mod = b.rel.rsplit("/", 1)[1][:-3]
        if relative:
            w.lineof("from .%s import %s" % (mod, b.name))
        else:
            w.lineof("from %s.%s import %s" % (rd.pkg, mod, b.name))
        out.append(b)
    return out


def write_decorated_module(rd):
    """`PKG/decorated.py`: decorated functions and methods, and the decoys."""
    p, rng = rd.p, rd.rng
    rel = "%s/%s/decorated.py" % (p.outrel, rd.pkg)
    w = W()
    p.modules[rel] = w
    w.lineof('"""Producers under decorators."""')
    bound = {"RESULTS"}
    decorated_imports(rd, w, True, bound)
    chains = decorated_chains(rd, w, True, bound)
    builders = decorated_builders(rd, w, True, bound)
    instance = None
    if rd.station:
        cls = access(rd, rd.probes_rel, "Station", bound, True, w)
        instance = (cls, [m for m, _ in rd.station])
    w.end()
    w.lineof("RESULTS = []")
    w.end()
    w.end()
    dw = DecoratedWriter(rd, rel, w, chains, builders, instance)
    for _ in range(rng.randint(2, 4)):
        is_async = rng.random() < 0.15
        dw.producer("", p.fresh("deco"), "query", decorator_stack(rng, "function"),
                    "async" if is_async else "function", is_async=is_async)
    decoys = ["none", "clean", "finding-not-returned"] + (["instance-chain"] if instance else [])
    for kind in rng.sample(decoys, rng.randint(1, 2)):
        dw.decoy("", kind, "function")
    w.lineof("class %s:" % p.fresh("Decorated"))
    for _ in range(rng.randint(1, 4)):
        dw.producer("    ", p.fresh("method"), "self, query", decorator_stack(rng, "method"), "method", method=True)
    if rng.random() < 0.5:
        dw.decoy("    ", rng.choice(decoys), "method")
    w.end()
    w.end()
    for write in rng.sample([dw.nested_def, dw.decorated_class, dw.nested_class], rng.randint(1, 3)):
        write()
    return rel


def write_fixtures(rd, rel, conftest):
    """`tests/conftest.py` / `tests/test_fixtures.py`: fixtures returning a
    producer's call or a display, and a test naming them as parameters."""
    p, rng = rd.p, rd.rng
    w = W()
    p.modules[rel] = w
    w.lineof('"""Fixtures handing results to the tests."""')
    bound = set()
    decorated_imports(rd, w, False, bound)
    chains = decorated_chains(rd, w, False, bound)
    builders = decorated_builders(rd, w, False, bound)
    w.end()
    w.end()
    dw = DecoratedWriter(rd, rel, w, chains, builders, None)
    names = []
    for _ in range(rng.randint(1, 3)):
        decs = decorator_stack(rng, "function", FIXTURE_CATALOG)[:1]
        if rng.random() < 0.3:
            decs += [d for d in decorator_stack(rng, "function") if d[2] not in ("fixture", "fixture-call",
                                                                                  "fixture-name")][:1]
        prod = dw.producer("", p.fresh("probed"), "", decs, "conftest" if conftest else "test-module",
                           fixture=True)
        names.append(prod.name)
    # a test naming the fixtures: a parameter is no receiver
    w.lineof("def %s(%s):" % (p.fresh("test_fixtures"), ", ".join(names)))
    for n in names:
        w.lineof("    assert %s is not None" % n)
        w.lineof('    assert %s.get("status") == "success"' % n)
    p.forms["reads-decorator-decoy-fixture-param"] += 1
    return rel


def write_decorated(rd):
    p, rng = rd.p, rd.rng
    if rng.random() < 0.15:
        return
    write_decos(rd)
    write_decorated_module(rd)
    if rng.random() < 0.7:
        write_fixtures(rd, "%s/tests/conftest.py" % p.outrel, True)
    if rng.random() < 0.5:
        write_fixtures(rd, "%s/tests/test_fixtures.py" % p.outrel, False)


def check_unresolved(p):
    """What each construct of write_unresolved means to be, against the
    generator's own judgement of the call (unresolved_reads); a construct
    counts when it holds (an unresolved call: when it has a read)."""
    for rel, (line, col), construct, want in p.unresolved_intents:
        got = p.unresolved_judged.get((rel, line, col))
        if got is None:
            # a producer whose keys are all suppressed: no call named so is judged
            continue
        if want is None or got != want:
            raise AssertionError("%s:%d:%d: %s judged %s, not %s" % (rel, line, col, construct, got, want))
        if want != "unresolved" or (rel, line, col) in p.unresolved_read_at:
            p.forms["reads-unresolved-" + construct] += 1


def is_content_subscript(text):
    """Is ``text`` one subscript ``E["content"]`` (any constant spelling)?"""
    try:
        node = ast.parse(text, mode="eval").body
    except SyntaxError:
        return False
    return (node.__class__ is ast.Subscript and node.slice.__class__ is ast.Constant
            and node.slice.value == CONTENT)


def check_reads(p, texts):
    """The generator's own sanity checks of the reads it wrote: the text of
    each span is what its form says."""
    for rel, recv, form, key, ((line, col), (eline, ecol)) in p.reads + p.possible_reads:
        if form == "escape":
            # a result handed on: the call written, `await C` perhaps (a base
            # program's call may run over several lines)
            first = texts[rel].split("\n")[line - 1][col - 1:]
            last = texts[rel].split("\n")[eline - 1][:ecol - 1]
            if not last.endswith(")") or first.startswith("(") or (line == eline and "(" not in first[:ecol - col]):
                raise AssertionError("%s:%d:%d: a result handed on spans %r" % (rel, line, col, first))
            continue
        if line != eline:
            raise AssertionError("%s:%d: a read over several lines" % (rel, line))
        text = texts[rel].split("\n")[line - 1][col - 1:ecol - 1]
        ok = {"subscript": text.endswith("]"), "store": text.endswith("]"), "delete": text.endswith("]"),
              "get": ".get(" in text and text.endswith(")"), "pop": ".pop(" in text and text.endswith(")"),
              "setdefault": ".setdefault(" in text and text.endswith(")"),
              "in": " in " in text and " not in " not in text, "not-in": " not in " in text,
              "whole": text.startswith("**") or text.startswith("dict(") or text.startswith("json.dumps(")
              or text.endswith((".keys()", ".values()", ".items()", " == {}", " != None")),
              "content": key is None and is_content_subscript(text),
              "block": key is None and is_content_subscript(text)}[form]
        if not ok:
            raise AssertionError("%s:%d:%d: read %s %r spans %r" % (rel, line, col, form, key, text))
    for prod in p.producers:
        # a decorator spans the expression after its `@`, the rest of its line
        for rel, ((line, col), (eline, ecol)), want, _, _ in prod.decorators:
            text = texts[rel].split("\n")[line - 1]
            if line != eline or text[col - 1:ecol - 1] != want or text[:col - 1].strip() != "@" or text[ecol - 1:]:
                raise AssertionError("%s:%d:%d: decorator spans %r, not %r" % (rel, line, col, text, want))
    for rel, prod, kind, ((line, col), (eline, ecol)), want, _ in p.escapes:
        # an escape spans the expression written for the producer, its parentheses left out
        text = texts[rel].split("\n")[line - 1][col - 1:ecol - 1]
        if line != eline or text != want or text.startswith("(") or not text.split(".")[-1].isidentifier():
            raise AssertionError("%s:%d:%d: escape spans %r, not %r" % (rel, line, col, text, want))


def base_handed_on(p):
    """The base program's builder calls whose results are handed on
    (docs/rules.md "**Results handed on.**"): `replies.append(C)` always;
    `return C` and a call statement never; `reply = C` never either: the
    function's only bindings of `reply` are such statements, each standing in
    its own block, and it is never loaded, so bound once it is a name read by
    no load, bound more than once it is bound in sequence and no load sees
    any binding.  Each is a read of form escape (p.reads)."""
    replies = Counter(scope for scope, lead, _, _, _ in p.base_calls if lead == "reply = ")
    for scope, lead, rel, recv, span in p.base_calls:
        if recv is None:
            continue
        if lead == "replies.append(":
            p.reads.append((rel, recv, "escape", None, span))
            p.forms["reads-handed-on-base-" + lead.strip(" =(")] += 1
        elif lead == "reply = " and replies[scope] > 1:
            p.forms["reads-sequence-base-reply"] += 1


# --------------------------------------------------------------------------
# calls toolshape cannot resolve (docs/rules.md "**Calls toolshape cannot
# resolve.**"): the generator's own judgement of every call named like a
# producer, from the text it wrote (an AST walk of its own, not scan.py's):
# the scopes of each module, the module-level names and what they are bound
# to (and the names a function's own scope binds once by an import: docs/rules.md
# "**Imports inside a function**"), followed across the program's modules as a
# builder call's callee is.

class _Scope:
    def __init__(self, kind, node, parent):
        self.kind = kind      # module / class / function / lambda / comp / annotation
        self.node = node
        self.parent = parent
        self.binds = {}       # name -> [binding record]
        self.globals = set()
        self.nonlocals = set()

    def bind(self, name, rec):
        self.binds.setdefault(name, []).append(rec)

    def root(self):
        s = self
        while s.parent is not None:
            s = s.parent
        return s


_COMPS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _scopes(tree):
    """The module scope of ``tree`` (its bindings, those of every nested
    scope), its calls as (Call, scope the call stands in) and its loads of
    names and attributes as (Name / Attribute, scope it stands in)."""
    module = _Scope("module", tree, None)
    calls = []
    loads = []
    funcs = []

    def bind_params(scope, args):
        for a in args.posonlyargs + args.args + args.kwonlyargs + [x for x in (args.vararg, args.kwarg) if x]:
            scope.bind(a.arg, ("param",))

    def annotation(node, scope):
        # docs/rules.md "**Annotations.**": a load there stands in a scope
        # nested in the one where the annotation stands
        visit(node, _Scope("annotation", node, scope))

    def outer_args(args, scope, annotations):
        for d in args.defaults + [d for d in args.kw_defaults if d is not None]:
            visit(d, scope)
        if annotations:
            for a in args.posonlyargs + args.args + args.kwonlyargs + [x for x in (args.vararg, args.kwarg) if x]:
                if a.annotation is not None:
                    annotation(a.annotation, scope)

    def visit(node, scope):
        t = type(node)
        if t in (ast.FunctionDef, ast.AsyncFunctionDef):
            scope.bind(node.name, ("def", node))
            for d in node.decorator_list:
                visit(d, scope)
            outer_args(node.args, scope, True)
            if node.returns is not None:
                annotation(node.returns, scope)
            fs = _Scope("function", node, scope)
            bind_params(fs, node.args)
            for s in node.body:
                visit(s, fs)
            funcs.append(fs)
            return
        if t is ast.ClassDef:
            scope.bind(node.name, ("class", node))
            for d in node.decorator_list + node.bases + [k.value for k in node.keywords]:
                visit(d, scope)
            cs = _Scope("class", node, scope)
            for s in node.body:
                visit(s, cs)
            return
        if t is ast.Lambda:
            outer_args(node.args, scope, False)
            ls = _Scope("lambda", node, scope)
            bind_params(ls, node.args)
            visit(node.body, ls)
            funcs.append(ls)
            return
        if t in _COMPS:
            visit(node.generators[0].iter, scope)
            cs = _Scope("comp", node, scope)
            for i, g in enumerate(node.generators):
                visit(g.target, cs)
                if i:
                    visit(g.iter, cs)
                for c in g.ifs:
                    visit(c, cs)
            for part in ((node.key, node.value) if t is ast.DictComp else (node.elt,)):
                visit(part, cs)
            return
        if t is ast.NamedExpr:
            s = scope
            while s.kind == "comp":
                s = s.parent
            s.bind(node.target.id, ("other",))
            visit(node.value, scope)
            return
        if t is ast.Import:
            for a in node.names:
                if a.asname:
                    scope.bind(a.asname, ("import", a.name, True))
                else:
                    scope.bind(a.name.split(".")[0], ("import", a.name, False))
            return
        if t is ast.ImportFrom:
            for a in node.names:
                if a.name != "*":
                    scope.bind(a.asname or a.name, ("from", node.level, node.module, a.name))
            return
        if t is ast.Global:
            scope.globals.update(node.names)
            return
        if t is ast.Nonlocal:
            scope.nonlocals.update(node.names)
            return
        if t is ast.Assign and len(node.targets) == 1 and type(node.targets[0]) is ast.Name:
            scope.bind(node.targets[0].id, ("assign", node.value))
            visit(node.value, scope)
            return
        if t is ast.AnnAssign:
            visit(node.target, scope)
            annotation(node.annotation, scope)
            if node.value is not None:
                visit(node.value, scope)
            return
        if t is ast.Name:
            if type(node.ctx) is not ast.Load:
                scope.bind(node.id, ("other",))
            else:
                loads.append((node, scope))
            return
        if t is ast.Attribute and type(node.ctx) is ast.Load:
            loads.append((node, scope))
        if t is ast.ExceptHandler and node.name:
            scope.bind(node.name, ("other",))
        if t in (ast.MatchAs, ast.MatchStar) and node.name:
            scope.bind(node.name, ("other",))
        if t is ast.MatchMapping and node.rest:
            scope.bind(node.rest, ("other",))
        if t is ast.Call:
            calls.append((node, scope))
        for child in ast.iter_child_nodes(node):
            visit(child, scope)

    for s in tree.body:
        visit(s, module)
    # `global N` in a function: its bindings of N are the module's
    for fs in funcs:
        for name in fs.globals & set(fs.binds):
            for rec in fs.binds.pop(name):
                module.bind(name, ("other",))
    return module, calls, loads


def _lookup(scope, name):
    """The scope owning ``name`` loaded in ``scope`` (the module's if none)."""
    s, first = scope, True
    while s.kind != "module":
        if s.kind == "class" and not first:
            s = s.parent
            continue
        if name in s.globals:
            return s.root()
        if name not in s.nonlocals and name in s.binds:
            return s
        s, first = s.parent, False
    return s


class _Mod:
    def __init__(self, name, is_pkg, tree):
        self.name = name
        self.package = name if is_pkg else name.rpartition(".")[0]
        self.scope, self.calls, self.loads = _scopes(tree)
        self.tree = tree
        self._parents = None

    @property
    def parents(self):
        """id(node) -> its parent node, made on first use (most modules
        never need it)."""
        if self._parents is None:
            self._parents = {id(c): n for n in ast.walk(self.tree) for c in ast.iter_child_nodes(n)}
        return self._parents


class UnresolvedJudge:
    """The calls of one program's modules named like a producer, judged."""

    def __init__(self, p, texts):
        self.mods = {}   # module name -> _Mod
        self.by_rel = {}
        for rel, text in texts.items():
            name = module_of(p, rel)
            is_pkg = name.endswith(".__init__") or name == "__init__"
            if is_pkg:
                name = name[:-len(".__init__")]
            m = _Mod(name, is_pkg, ast.parse(text))
            self.mods[name] = m
            self.by_rel[rel] = m

    def absolute(self, dotted):
        hits = [m for n, m in self.mods.items() if n == dotted or n.endswith("." + dotted)]
        return hits[0] if len(hits) == 1 else None

    def external(self, dotted):
        """No project module is named ``dotted`` or has it among its parts."""
        want = dotted.split(".")
        for n in self.mods:
            parts = n.split(".")
            if any(parts[i:i + len(want)] == want for i in range(len(parts) - len(want) + 1)):
                return False
        return True

    def relative(self, mod, level, name):
        """The dotted name `from .NAME` (``level`` dots) names in ``mod``, else None."""
        pkg = mod.package.split(".") if mod.package else []
        if level - 1 > len(pkg):
            return None
        base = pkg[:len(pkg) - (level - 1)]
        return ".".join(base + (name.split(".") if name else []))

    def value(self, mod, name, seen=()):
        """What module-level ``name`` of ``mod`` is: ("func",), ("class",
        ClassDef), ("module", _Mod), ("instance", ClassDef), ("external",) or
        ("none",)."""
        if (mod.name, name) in seen:
            return ("none",)
        seen = seen + ((mod.name, name),)
        recs = mod.scope.binds.get(name, [])
        if len(recs) != 1:
            return ("none",)
        return self.rec_value(mod, recs[0], seen)

    def named(self, mod, scope, name):
        """What ``name`` loaded in ``scope`` is as a builder call's callee
        reads it (docs/rules.md TS003, "**Imports inside a function**"): a
        module-level name as value() says; a name of a function's own scope
        (a def, the one it stands in or one enclosing it) bound there exactly
        once by an import, as that import would be at module level; else
        ("none",) (bound otherwise or more than once in the function, a name
        of a class body, a lambda or a comprehension)."""
        owner = _lookup(scope, name)
        if owner.kind == "module":
            return self.value(mod, name)
        recs = owner.binds.get(name, [])
        if owner.kind == "function" and len(recs) == 1 and recs[0][0] in ("import", "from"):
            return self.rec_value(mod, recs[0], ())
        return ("none",)

    def rec_value(self, mod, rec, seen):
        """What the one binding record ``rec`` of a name of ``mod`` makes it (see value())."""
        if rec[0] == "def":
            return ("func",)
        if rec[0] == "class":
            return ("class", rec[1])
        if rec[0] == "import":
            dotted, aliased = rec[1], rec[2]
            if aliased or "." not in dotted:
                q = self.absolute(dotted)
                if q is not None:
                    return ("module", q)
            return ("external",) if self.external(dotted) else ("none",)
        if rec[0] == "from":
            # `from P import A`: A of module P, else module P.A (a package
            # needs no __init__.py)
            level, dotted, attr = rec[1], rec[2], rec[3]
            if level:
                base = self.relative(mod, level, dotted)
                if base is None:
                    return ("none",)
                q = self.mods.get(base)
                sub = self.mods.get(base + "." + attr if base else attr)
            else:
                q = self.absolute(dotted)
                sub = self.absolute(dotted + "." + attr)
            if q is not None and attr in q.scope.binds:
                return self.value(q, attr, seen)
            if sub is not None:
                return ("module", sub)
            if not level and self.external(dotted):
                return ("external",)
            return ("none",)
        if rec[0] == "assign" and type(rec[1]) is ast.Call:
            k = self.klass(mod, rec[1].func, mod.scope)
            if k is not None:
                return ("instance", k)
        return ("none",)

    def klass(self, mod, node, scope):
        """The class ``node`` names as a builder call's callee would (a
        module-level name, `A.K` of an imported module, or such a name
        imported once inside a function: named()), else None."""
        if type(node) is ast.Name:
            v = self.named(mod, scope, node.id)
        elif type(node) is ast.Attribute and type(node.value) is ast.Name:
            a = self.named(mod, scope, node.value.id)
            if a[0] != "module":
                return None
            v = self.value(a[1], node.attr)
        else:
            return None
        return v[1] if v[0] == "class" else None

    @staticmethod
    def defines(cls, name):
        return any(type(s) in (ast.FunctionDef, ast.AsyncFunctionDef) and s.name == name for s in cls.body)

    def judge(self, mod, call, scope, use=False):
        """"resolved", "unresolved" or "exempt" (a direct tool call, an
        external name) for a call with a name or attribute callee; ``use``:
        the call `X()` a use as a value `X` would be (docs/rules.md "**Uses
        as a value toolshape cannot resolve**": a direct tool call's callee
        `A.tool.N` is judged as any attribute)."""
        f = call.func
        if type(f) is ast.Name:
            # a module-level name, or a function's own imported once ("**Imports
            # inside a function**"); bound otherwise, twice, in a class body: none
            v = self.named(mod, scope, f.id)
            return {"func": "resolved", "class": "resolved", "external": "exempt"}.get(v[0], "unresolved")
        N, X = f.attr, f.value
        if type(X) is ast.Attribute and X.attr == "tool" and not use:
            return "exempt"
        cls = None
        if type(X) is ast.Name:
            owner = _lookup(scope, X.id)
            if X.id in ("self", "cls"):
                s = scope
                while s.kind in ("comp", "lambda", "annotation"):  # inside the method
                    s = s.parent
                if s.kind == "function" and s.parent.kind == "class" and s.parent.parent.kind == "module":
                    return "resolved" if self.defines(s.parent.node, N) else "unresolved"
            v = self.named(mod, scope, X.id)
            if owner.kind == "module" or v[0] in ("module", "external"):
                if v[0] == "module":
                    w = self.value(v[1], N)
                    return "resolved" if w[0] in ("func", "class") else "unresolved"
                if v[0] == "external":
                    return "exempt"
                # an instance name is followed in the scope owning it only;
                # `K.N` on the class itself resolves nothing (scan.py and
                # reads_selftest.py: `Meter.measure(m)` is an unresolved call)
                if v[0] == "instance" and owner is scope:
                    cls = v[1]
            elif owner is scope:
                recs = owner.binds.get(X.id, [])
                if len(recs) == 1 and recs[0][0] == "assign" and type(recs[0][1]) is ast.Call:
                    cls = self.klass(mod, recs[0][1].func, owner)
        elif type(X) is ast.Call:
            cls = self.klass(mod, X.func, scope)
        elif type(X) is ast.Attribute:
            cls = self.klass(mod, X, scope)
        if cls is not None and self.defines(cls, N):
            return "resolved"
        return "unresolved"

    def calls(self, rel, names):
        """(Call, judgement) of the calls of ``rel`` whose callee's last name is in ``names``."""
        mod = self.by_rel[rel]
        for call, scope in mod.calls:
            f = call.func
            n = f.id if type(f) is ast.Name else f.attr if type(f) is ast.Attribute else None
            if n in names:
                yield call, n, self.judge(mod, call, scope)

    def uses(self, rel, names):
        """(X, N, judgement, tool too) of the uses as a value ``X`` of
        ``rel`` (docs/rules.md "**Escapes.**": a load that is no callee and
        no attribute's object) named ``N`` in ``names``: an attribute `Y.N`,
        or a name `N` loaded where it resolves to the module's bindings (or
        to none) or to a function's or class body's bindings at least one of
        which is an import (`try: from M import N` / `except ImportError: N =
        None` too; other names are not judged); the judgement of a call `X()`
        standing there; ``tool too``: the use escapes for a tool too (the
        one argument of a wrapper called at once, `W(X)(...)`; the whole
        value of an assignment, annotated or not, or of a walrus; the value
        of a `return`, of a `yield` or of a dict display's pair)."""
        mod = self.by_rel[rel]
        for X, scope in mod.loads:
            N = X.id if type(X) is ast.Name else X.attr
            if N not in names:
                continue
            par = mod.parents.get(id(X))
            if (type(par) is ast.Call and par.func is X) or (type(par) is ast.Attribute and par.value is X):
                continue
            if type(X) is ast.Name:
                owner = _lookup(scope, N)
                if owner.kind != "module" and not any(r[0] in ("import", "from") for r in owner.binds[N]):
                    continue
            how = self.judge(mod, _ValueCall(X), scope, use=True)
            tp = type(par)
            if tp is ast.Call:
                outer = mod.parents.get(id(par))
                tool_too = (par.args == [X] and not par.keywords and type(outer) is ast.Call and outer.func is par)
            elif tp in (ast.Assign, ast.AnnAssign, ast.NamedExpr, ast.Return, ast.Yield):
                tool_too = par.value is X
            elif tp is ast.Dict:
                tool_too = any(v is X and k is not None for k, v in zip(par.keys, par.values))
            else:
                tool_too = False
            yield X, N, how, tool_too


class _ValueCall:
    """The call `X()` a use as a value `X` would be: its callee only."""

    def __init__(self, func):
        self.func = func


def char_col(line, col):
    return len(line.encode("utf-8")[:col].decode("utf-8")) + 1


def expected_reads(p, suppressed):
    """Give every finding of ``p`` its ``reads`` (``suppressed``: ids of the
    findings a comment silences: they are no origins)."""
    by_tag = {}
    for rel, f in p.findings:
        f["reads"] = []
        if id(f) not in suppressed:
            by_tag.setdefault(tag_of(rel, f), []).append(f)
    memo = {}

    def tag_keys(tags):
        return {(f["key"], t) for t in tags for f in by_tag.get(t, ()) if f["key"] is not None}

    def prod_keys(prod, stack=()):
        if id(prod) in memo:
            return memo[id(prod)]
        if id(prod) in stack:
            return set()
        k = tag_keys(prod.tags)
        for v in prod.via:
            k |= prod_keys(v, stack + (id(prod),))
        memo[id(prod)] = k
        return k

    tools = {}  # NAME -> the producers named NAME decorated as tools
    for prod in p.producers:
        if prod.decorated:
            tools.setdefault(prod.name, []).append(prod)
    records = []
    for rel, recv, form, key, ((line, col), (eline, ecol)) in p.reads:
        if recv is None:
            continue
        K = tag_keys(recv.tags)
        for v in recv.via:
            K |= prod_keys(v)
        for name in recv.tools:
            # each tool narrowed by the call's constant keywords, by its own parameters
            for prod in tools.get(name, ()):
                for v in narrowed(prod, recv.ckws):
                    K |= prod_keys(v)
        if not K:
            continue
        origins = {t for k, t in K if key is None or k == key}
        targets = [f for t in origins for f in by_tag[t] if key is None or f["key"] == key]
        if not targets:
            continue
        rec = {"path": rel, "line": line, "column": col, "end_line": eline, "end_column": ecol, "form": form,
               "key": key, "rewritable": False, "possible": False}
        # a finding lists a read once, however many calls of a checking
        # function give it one (docs/rules.md "**Results handed to a
        # checking function.**"): a read is counted when some finding lists it
        listed = False
        for f in targets:
            if rec not in f["reads"]:
                f["reads"].append(rec)
                listed = True
        if listed:
            records.append((rec, recv.kind))
    # escapes (docs/rules.md "**Escapes.**"): a use as a value of a producer
    # that is no tool, or of a tool as the one argument of a wrapper called at
    # once or giving it another name to be called by (the whole value of an
    # assignment, the value of a `return`, a `yield` or a dict display's
    # pair), reads every origin it reaches (chains followed whole, no
    # dispatch), for every finding of those origins
    for rel, prod, kind, ((line, col), (eline, ecol)), _, tool_too in p.escapes:
        if prod is None:
            p.forms["escape-decoy-base-not-producer"] += 1
            continue
        if prod.decorated and not tool_too:
            continue
        origins = {t for k, t in prod_keys(prod)}
        targets = [f for t in origins for f in by_tag[t]]
        if not targets:
            continue
        rec = {"path": rel, "line": line, "column": col, "end_line": eline, "end_column": ecol, "form": "escape",
               "key": None, "rewritable": False, "possible": False}
        records.append((rec, "escape:" + kind))
        for f in targets:
            f["reads"].append(rec)
    # decorators (docs/rules.md "**Decorators.**"): each decorator D of the def
    # of a producer, tool or not, that is no tool decorator nor one of the
    # exempt names / attributes as written, reads every origin the producer
    # reaches (chains followed whole, no dispatch), for every finding of those
    # origins; span D
    for prod in p.producers:
        if not prod.decorators:
            continue
        origins = {t for k, t in prod_keys(prod)}
        targets = [f for t in origins for f in by_tag[t]]
        if not targets:
            continue
        escaping = [d for d in prod.decorators if not d[3]]
        if escaping:
            if prod.site is not None:
                p.forms["reads-decorator-site-" + prod.site] += 1
                p.forms["reads-decorator-body-" + prod.body_kind] += 1
            if is_tool_stack([d[2:] for d in prod.decorators]):
                p.forms["reads-decorator-stack-tool-and-other"] += 1
            if any(d[3] and d[4] in EXEMPT_NAME_LABELS for d in prod.decorators):
                p.forms["reads-decorator-stack-exempt-and-other"] += 1
            if len(escaping) >= 2:
                p.forms["reads-decorator-stack-two-escaping"] += 1
        for rel, ((line, col), (eline, ecol)), text, exempt, label in prod.decorators:
            if exempt:
                # a producer's decorator that gives nothing: the decoy holds
                p.forms["reads-decorator-exempt-" + label] += 1
                continue
            rec = {"path": rel, "line": line, "column": col, "end_line": eline, "end_column": ecol,
                   "form": "escape", "key": None, "rewritable": False, "possible": False}
            records.append((rec, "decorator:" + label))
            for f in targets:
                f["reads"].append(rec)
    # calls toolshape cannot resolve (docs/rules.md "**Calls toolshape cannot
    # resolve.**"): a call named like a producer with keys (its callee's last
    # name) that resolves to no function, method or class of the program, is
    # no direct tool call, no call of a builder with TS003 key findings and no
    # name (or `A.N`) imported once, at module level or in a function's own
    # scope, from outside the project:
    # one escape read, span the call, of every origin of every producer so named
    unresolved_reads(p, by_tag, prod_keys, records)
    check_unresolved(p)
    check_unresolved_uses(p)
    # possible reads: every finding (not suppressed) of their key
    by_key = {}
    for rel, f in p.findings:
        if id(f) not in suppressed and f["key"] is not None:
            by_key.setdefault(f["key"], []).append(f)
    for rel, kind, form, key, ((line, col), (eline, ecol)) in p.possible_reads:
        targets = by_key.get(key)
        if not targets:
            continue
        # searched for this key: a marker and the key quoted as written
        text = p.modules[rel].text()
        if not (any(m in text for m in FILE_MARKERS) and ('"%s"' % key in text or "'%s'" % key in text)):
            continue
        rec = {"path": rel, "line": line, "column": col, "end_line": eline, "end_column": ecol, "form": form,
               "key": key, "rewritable": False, "possible": True}
        records.append((rec, kind))
        for f in targets:
            f["reads"].append(rec)
    for rel, f in p.findings:
        f["reads"].sort(key=read_sort_key)
    return records


def unresolved_reads(p, by_tag, prod_keys, records):
    texts = {rel: w.text() for rel, w in p.modules.items()}
    named = {}  # NAME -> the origins of the producers named NAME
    for prod in p.producers:
        for k, t in prod_keys(prod):
            named.setdefault(prod.name, set()).add(t)
    at_builder = {(rel, f["dict_line"], f["dict_column"]) for rel, f in p.findings
                  if f["code"] == "TS003" and f["key"] is not None and tag_of(rel, f) in by_tag}
    judge = UnresolvedJudge(p, texts)
    # a span already read as an escape: the generator took the call for a receiver
    escapes = {(r["path"], r["line"], r["column"], r["end_line"], r["end_column"])
               for r, _ in records if r["form"] == "escape"}
    for rel in sorted(texts):
        lines = texts[rel].split("\n")
        for call, name, how in judge.calls(rel, named):
            line, col = call.lineno, char_col(lines[call.lineno - 1], call.col_offset)
            eline, ecol = call.end_lineno, char_col(lines[call.end_lineno - 1], call.end_col_offset)
            if how == "unresolved" and (rel, line, col) in at_builder:
                how = "exempt"
            p.unresolved_judged[(rel, line, col)] = how
            if how != "unresolved":
                continue
            targets = [f for t in sorted(named[name]) for f in by_tag.get(t, ())]
            if not targets:
                continue
            f = call.func
            if type(f) is ast.Name:
                kind = "name"
            elif type(f.value) is ast.Name:
                kind = "self" if f.value.id in ("self", "cls") else "attribute"
            elif type(f.value) is ast.Call:
                kind = "instance"
            elif type(f.value) is ast.Attribute:
                kind = "dotted"
            else:
                kind = "other"
            if (rel, line, col, eline, ecol) in escapes:
                raise AssertionError("%s:%d:%d: a receiver judged unresolved" % (rel, line, col))
            rec = {"path": rel, "line": line, "column": col, "end_line": eline, "end_column": ecol,
                   "form": "escape", "key": None, "rewritable": False, "possible": False}
            records.append((rec, "unresolved:" + kind))
            p.unresolved_read_at.add((rel, line, col))
            for f in targets:
                f["reads"].append(rec)
    # uses as a value toolshape cannot resolve (docs/rules.md "**Uses as a
    # value toolshape cannot resolve**"): a use as a value named like
    # producers with keys (an attribute `Y.N`; a name `N` of the module, of
    # bindings at least one of which is an import, or of nothing) whose call `X()` there would be an
    # unresolved call (a direct tool call's callee too): one escape read,
    # span the use, of every origin of every producer so named, only when the
    # use is wrapped or gives the producer another name (a tool's or not)
    by_name = {}  # NAME -> [(Producer, its origins)] of the producers with keys
    for prod in p.producers:
        origins = {t for k, t in prod_keys(prod)}
        if origins:
            by_name.setdefault(prod.name, []).append((prod, origins))
    for rel in sorted(texts):
        lines = texts[rel].split("\n")
        for X, name, how, tool_too in judge.uses(rel, by_name):
            line, col = X.lineno, char_col(lines[X.lineno - 1], X.col_offset)
            eline, ecol = X.end_lineno, char_col(lines[X.end_lineno - 1], X.end_col_offset)
            origins = set()
            if how == "unresolved" and tool_too:
                for prod, o in by_name[name]:
                    origins |= o
            targets = [f for t in sorted(origins) for f in by_tag.get(t, ())]
            p.unresolved_use_judged[(rel, line, col)] = (how, bool(targets))
            if not targets:
                continue
            if (rel, line, col, eline, ecol) in escapes:
                raise AssertionError("%s:%d:%d: a use as a value of a producer judged unresolved" % (rel, line, col))
            if type(X) is ast.Name:
                kind = "name"
            elif type(X.value) is ast.Name:
                kind = "self" if X.value.id in ("self", "cls") else "attribute"
            elif type(X.value) is ast.Attribute:
                kind = "tool-callee" if X.value.attr == "tool" else "dotted"
            elif type(X.value) is ast.Call:
                kind = "instance"
            else:
                kind = "other"
            rec = {"path": rel, "line": line, "column": col, "end_line": eline, "end_column": ecol,
                   "form": "escape", "key": None, "rewritable": False, "possible": False}
            records.append((rec, "unresolved-use:" + kind))
            for f in targets:
                f["reads"].append(rec)


def read_sort_key(r):
    return (r["path"], r["line"], r["column"], r["end_line"], r["end_column"], r["form"], r["key"] or "",
            r["possible"])


# --------------------------------------------------------------------------
# writing and checking


def silencers(comments, line, code):
    return [c for c in comments.get(line, ()) if c[1] == ALL or code in c[1]]


def finding_key(f):
    b = f["builder"]
    return (f["path"], f["dict_line"], f["dict_column"], f["line"], f["column"], f["code"], f["key"] or "",
            f["expression"] or "", f["end_line"], f["end_column"], f["origin"],
            json.dumps(b, sort_keys=True) if b else "")


def check_span(rel, lines, f):
    """The generator's own sanity checks of a recorded span."""
    at = lines[f["line"] - 1][f["column"] - 1:]
    if f["form"].startswith("dparam-"):
        # a dict-parameter finding: an entry of the display passed, or the argument itself
        text = at[:f["end_column"] - f["column"]] if f["line"] == f["end_line"] else None
        k = json.dumps(f["key"], ensure_ascii=False) if f["key"] is not None else None
        ok = text is not None and (
            (k is not None and (text.startswith(k + ": ") or text.startswith("(" + k + "): ")))
            or (k is None and (text == f["expression"] or text == "**" + f["expression"]
                               or text.startswith(f["expression"] + ": "))))
        if not ok:
            raise AssertionError("%s:%d:%d: dict-parameter span %r for %r" % (rel, f["line"], f["column"],
                                                                             text, f))
    elif f["key"] is not None and f["code"] in ("TS003",) and not at.startswith(f["key"] + "="):
        raise AssertionError("%s:%d:%d: TS003 span starts at %r" % (rel, f["line"], f["column"], at[:20]))
    if (f["code"] == "TS003" and f["key"] is None and not f["form"].startswith("dparam-")
            and not at.startswith("**" + f["expression"])):
        raise AssertionError("%s:%d:%d: TS003 mapping span starts at %r" % (rel, f["line"], f["column"], at[:20]))
    if f["code"] == "TS004" and f["expression"] is not None:
        whole = lines[f["line"] - 1][f["column"] - 1:] if f["line"] == f["end_line"] else None
        if whole is not None and f["expression"] not in whole[:f["end_column"] - f["column"]]:
            raise AssertionError("%s:%d:%d: TS004 span %r lacks %r" % (rel, f["line"], f["column"], whole,
                                                                        f["expression"]))
    d = f["dict_line"], f["dict_column"]
    ch = lines[d[0] - 1][d[1] - 1:d[1]]
    if f["code"] == "TS003":
        if not lines[d[0] - 1][d[1] - 1:].split("(")[0].replace(".", "").replace("_", "").isalnum():
            raise AssertionError("%s:%d:%d: call start %r" % (rel, d[0], d[1], lines[d[0] - 1][d[1] - 1:]))
    elif ch != "{":
        raise AssertionError("%s:%d:%d: dict position holds %r" % (rel, d[0], d[1], ch))
    if f["builder"] is not None:
        b = f["builder"]
        blines = None
        return b


def write_programs(outdir, seed, nprograms, with_readers=False):
    manifest = {"seed": seed, "programs": 0, "modules": 0, "expected_findings": 0, "suppressed_findings": 0,
                "dict_param_findings": 0, "dict_param_suppressed": 0,
                "by_code": Counter(), "by_origin": Counter(), "by_form": Counter(), "suppressed_by_form": Counter(),
                "constructs": Counter(), "comments_written": Counter(), "findings": [], "suppressed": []}
    if with_readers:
        # reads of moved keys (docs/rules.md): each finding's "reads"; distinct reads
        # per form and per receiver kind, and the (finding, read) pairs
        manifest.update({"with_readers": True, "expected_reads": 0, "read_links": 0,
                         "reads_by_form": Counter(), "reads_by_receiver": Counter(), "escapes_by_use": Counter(),
                         "programs_with_escapes": 0,
                         "findings_with_reads": 0, "reads_written": 0})
    os.makedirs(outdir, exist_ok=True)
    for i in range(nprograms):
        outrel = "prog_%04d" % i
        p = generate_program(seed, i, outrel, with_readers)
        os.makedirs(os.path.join(outdir, outrel), exist_ok=True)
        with open(os.path.join(outdir, outrel, "toolshape.toml"), "w") as fh:
            fh.write("")
        texts = {}
        for rel, w in p.modules.items():
            text = w.text()
            texts[rel] = text
            try:
                ast.parse(text, filename=rel)
            except SyntaxError as exc:
                raise AssertionError("generated %s does not parse: %s\n%s" % (rel, exc, text))
            path = os.path.join(outdir, *rel.split("/"))
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8", newline="\n") as fh:
                fh.write(text)
            for cl in w.comments.values():
                for c in cl:
                    manifest["comments_written"][c[0]] += 1
        if with_readers:
            silenced_ids = set()
            for rel, f in p.findings:
                comments = p.modules[rel].comments
                if silencers(comments, f["line"], f["code"]) + silencers(comments, f["dict_line"], f["code"]):
                    silenced_ids.add(id(f))
            base_handed_on(p)
            check_reads(p, texts)
            escapes = 0
            for rec, kind in expected_reads(p, silenced_ids):
                manifest["expected_reads"] += 1
                manifest["reads_by_form"][rec["form"]] += 1
                if kind.startswith("escape:"):
                    # "escape:TARGET/USE": per target among the receivers, per use apart
                    kind, _, use = kind.partition("/")
                    manifest["escapes_by_use"][use] += 1
                    escapes += 1
                manifest["reads_by_receiver"][kind] += 1
            manifest["programs_with_escapes"] += bool(escapes)
            manifest["reads_written"] += len(p.reads)
            for rel, f in p.findings:
                if id(f) not in silenced_ids:
                    manifest["read_links"] += len(f["reads"])
                    manifest["findings_with_reads"] += bool(f["reads"])
        for rel, f in p.findings:
            lines = texts[rel].split("\n")
            check_span(rel, lines, f)
            if f["builder"] is not None:
                b = f["builder"]
                bl = texts[b["path"]].split("\n")[b["line"] - 1][b["column"] - 1:]
                if not (bl.startswith("def " + b["name"] + "(") or bl.startswith("async def " + b["name"] + "(")):
                    raise AssertionError("builder position %r holds %r" % (b, bl))
            comments = p.modules[rel].comments
            by = silencers(comments, f["line"], f["code"]) + silencers(comments, f["dict_line"], f["code"])
            form = f["form"]  # kept: the manifest says what wrote each finding
            if by:
                manifest["suppressed_findings"] += 1
                manifest["suppressed_by_form"][form] += 1
                manifest["suppressed"].append(f)
                if form.startswith("dparam-"):
                    manifest["dict_param_suppressed"] += 1
                continue
            if form.startswith("dparam-"):
                manifest["dict_param_findings"] += 1
            manifest["findings"].append(f)
            manifest["by_code"][f["code"]] += 1
            manifest["by_origin"][f["origin"]] += 1
            manifest["by_form"][form] += 1
            key = "%s/%s/%s" % (f["code"], f["origin"], "key" if f["key"] is not None else "dynamic" if f["expression"] is not None else "spread")
            manifest["by_code"][key] += 1
        manifest["constructs"].update(p.forms)
        manifest["programs"] += 1
        manifest["modules"] += len(p.modules)
    manifest["findings"].sort(key=finding_key)
    manifest["suppressed"].sort(key=finding_key)
    manifest["expected_findings"] = len(manifest["findings"])
    for k in ("by_code", "by_origin", "by_form", "suppressed_by_form", "constructs", "comments_written",
              "reads_by_form", "reads_by_receiver", "escapes_by_use"):
        if k in manifest:
            manifest[k] = dict(sorted(manifest[k].items()))
    with open(os.path.join(outdir, "manifest.json"), "w", encoding="utf-8") as fh:
        json.dump(manifest, fh, indent=0, ensure_ascii=False)
        fh.write("\n")
    return manifest


def comparable(f, with_reads=False):
    b = f.get("builder")
    out = (f["path"], f["code"], f["key"], f.get("expression"), f.get("origin"),
           None if b is None else (b["name"], b["path"], b["line"], b["column"]),
           f["dict_line"], f["dict_column"], f["line"], f["column"], f["end_line"], f["end_column"])
    if with_reads:
        out += (tuple((r["path"], r["line"], r["column"], r["end_line"], r["end_column"], r["form"], r["key"],
                       r["rewritable"], r["possible"]) for r in f["reads"]),)
    return out


CONTRACT_CODES = ("TS005", "TS006", "TS007", "TS008", "TS009")


def verify(outdir, manifest, scan_output=None):
    """Run scan.py (its CLI) over outdir and compare with the manifest;
    scan.py's findings, every code's, are written to scan_output if given
    (a caller comparing them with another tool's need not scan again)."""
    here = os.path.dirname(os.path.abspath(__file__))
    with_reads = bool(manifest.get("with_readers"))
    cmd = ([sys.executable, os.path.join(here, "scan.py"), "--stats"] + (["--reads"] if with_reads else [])
           + [outdir])
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        sys.stderr.write("verify: scan.py failed (%d):\n%s\n" % (proc.returncode, proc.stderr[-4000:]))
        return False
    if scan_output is not None:
        with open(scan_output, "w", encoding="utf-8") as fh:
            fh.write(proc.stdout)
    # the programs are held to TS001-TS004 only: the contract rules' findings
    # (TS005-TS009, see gen_contract.py) and suppressions are left out here
    got = [f for f in json.loads(proc.stdout) if f["code"] not in CONTRACT_CODES]

    def rel(path):
        return os.path.relpath(path, outdir).replace(os.sep, "/")

    unsorted = 0
    for f in got:
        f["path"] = rel(f["path"])
        if f.get("builder"):
            f["builder"]["path"] = rel(f["builder"]["path"])
        for r in f.get("reads", ()):
            r["path"] = rel(r["path"])
        if with_reads and f["reads"] != sorted(f["reads"], key=read_sort_key):
            unsorted += 1
    want = Counter(comparable(f, with_reads) for f in manifest["findings"])
    have = Counter(comparable(f, with_reads) for f in got)
    ok = want == have
    if unsorted:
        ok = False
        sys.stderr.write("verify: %d findings whose reads are not sorted by path and position\n" % unsorted)
    if not ok:
        missing = sorted((want - have).elements(), key=repr)[:15]
        extra = sorted((have - want).elements(), key=repr)[:15]
        sys.stderr.write("verify: MISMATCH (manifest %d, scan.py %d)\n" % (sum(want.values()), sum(have.values())))
        for title, items in (("expected but not scanned", missing), ("scanned but not expected", extra)):
            sys.stderr.write("  %s:\n" % title)
            for t in items:
                sys.stderr.write("    %r\n" % (t[:12],))
                if len(t) > 12:
                    sys.stderr.write("      reads %r\n" % (t[12],))
                try:
                    with open(os.path.join(outdir, t[0]), encoding="utf-8") as fh:
                        sys.stderr.write("      | %s\n" % fh.read().split("\n")[t[8] - 1])
                except OSError:
                    pass
    stats = {}
    for line in proc.stderr.splitlines():
        if line.startswith("stats: "):
            stats = json.loads(line[len("stats: "):])
    if stats.get("skipped") != 0:
        ok = False
        sys.stderr.write("verify: scan.py skipped %s generated files\n" % stats.get("skipped"))
    suppressed = stats.get("suppressed", 0) - stats.get("suppressed_contract", 0)
    if suppressed != manifest["suppressed_findings"]:
        ok = False
        sys.stderr.write("verify: suppressed findings: scan.py %s, generator %d\n"
                         % (suppressed, manifest["suppressed_findings"]))
    if with_reads:
        if stats.get("reads") != manifest["expected_reads"]:
            ok = False
            sys.stderr.write("verify: distinct reads: scan.py %s, generator %d\n"
                             % (stats.get("reads"), manifest["expected_reads"]))
        # the corpus must hold every read form and receiver kind, and the decoys
        for what, names in (("reads_by_form", READ_FORMS),
                            ("reads_by_receiver", RECEIVER_KINDS + POSSIBLE_KINDS
                             + ["escape:" + t for t in ESCAPE_TARGETS]
                             + ["unresolved:" + t for t in UNRESOLVED_CALLEES] + DECORATOR_KINDS
                             + ["unresolved-use:" + t for t in UNRESOLVED_USE_KINDS]
                             + LOCAL_RECEIVER_KINDS + CHECKER_KINDS),
                            ("escapes_by_use", ESCAPE_USES + TOOL_NAME_USES + TOOL_BUILTIN_USES),
                            ("constructs", READ_DECOYS + POSSIBLE_DECOYS + DISPATCH_CONSTRUCTS + ESCAPE_DECOYS
                             + UNRESOLVED_CONSTRUCTS + UNRESOLVED_DECOYS + DECORATOR_CONSTRUCTS
                             + ESCAPE_TOOL_RENAMED + TOOL_NAME_DECOYS + TOOL_BUILTIN_DECOYS
                             + UNRESOLVED_USE_CONSTRUCTS
                             + ESCAPE_UNRESOLVED + LOCAL_CONSTRUCTS + LOCAL_READ_CONSTRUCTS
                             + CHECKER_CONSTRUCTS)):
            for n in names:
                if not manifest[what].get(n):
                    ok = False
                    sys.stderr.write("verify: the corpus holds no %s %r\n" % (what, n))
        if ok:
            sys.stderr.write("verify: reads OK (%d distinct reads, %d finding-read pairs, %d findings with "
                             "reads; per form %s; per receiver %s; escapes in %d programs, per use %s)\n"
                             % (manifest["expected_reads"], manifest["read_links"],
                                manifest["findings_with_reads"], json.dumps(manifest["reads_by_form"]),
                                json.dumps(manifest["reads_by_receiver"]), manifest["programs_with_escapes"],
                                json.dumps(manifest["escapes_by_use"])))
    if ok:
        sys.stderr.write("verify: OK (%d findings, %d suppressed, %d programs, %d modules)\n"
                         % (len(got), manifest["suppressed_findings"], manifest["programs"], manifest["modules"]))
    return ok


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("outdir")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--programs", type=int, default=2000)
    ap.add_argument("--verify", action="store_true", help="cross-check with scan.py")
    ap.add_argument("--scan-output", metavar="FILE",
                    help="with --verify: write scan.py's findings (every code's) to FILE")
    ap.add_argument("--with-readers", action="store_true",
                    help="add consumers reading the results (docs/rules.md: reads of moved keys); "
                         "the manifest records each finding's reads, --verify runs scan.py --reads")
    args = ap.parse_args(argv)
    m = write_programs(args.outdir, args.seed, args.programs, args.with_readers)
    summary = {k: m[k] for k in ("seed", "programs", "modules", "expected_findings", "suppressed_findings",
                                 "dict_param_findings", "dict_param_suppressed", "by_code", "by_origin")}
    if args.with_readers:
        summary.update({k: m[k] for k in ("expected_reads", "read_links", "findings_with_reads", "reads_written",
                                          "reads_by_form", "reads_by_receiver", "escapes_by_use",
                                          "programs_with_escapes")})
    sys.stdout.write(json.dumps(summary) + "\n")
    if args.scan_output and not args.verify:
        ap.error("--scan-output needs --verify")
    if args.verify and not verify(args.outdir, m, args.scan_output):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
