#!/usr/bin/env python3
"""Deterministic corpus generator for toolshape's differential test.

Usage:
    python3 tests/reference/gen_corpus.py OUTDIR [--seed N] [--dicts N]
                                          [--per-file N] [--escaped-files N]
                                          [--verify]

Writes Python files (a few .pyi among them) below OUTDIR holding at least
--dicts tool-result-shaped dicts (dict displays with constant string keys
"status" and "content"), laid out in as many legal ways as we could think of:
quote styles and prefixes, escapes (\\x \\u \\U octal \\N{...}), implicit
concatenation (also across lines with comments in between), parenthesized
keys, line continuations inside keys, nesting in other results, lists,
lambdas, comprehensions, default arguments, decorators, annotations, class
bodies, async defs, match statements and f-string replacement fields,
spreads in every position, duplicate keys, toolUseId, non-string keys and
decoys (f-string/bytes keys, sets, dict comprehensions, match patterns, dict
text inside strings and comments).  Files use LF, CRLF or (rarely) mixed
line endings, spaces or tabs for indentation, a few start with a UTF-8 BOM,
and non-ASCII text often precedes a dict on its line so that character
columns differ from byte columns.

After those, --escaped-files files (default 4) go to OUTDIR/escaped_keys/:
the bytes "status" occur nowhere in them, every status key being spelled
through escapes or implicit concatenation.  A byte-level prefilter that looks
for "status" cannot see their findings; the manifest lists them under
"no_status_bytes_files".

Comments are written everywhere a comment can stand (after a dict's "{",
after an entry, on lines of their own, between the pieces of a concatenated
key, after a "(" or a "**" that ends a line, at the end of statements), and
a good part of them are suppressions of every form (SUPPRESSIONS: bare and
listed `# toolshape: ignore`, `# noqa`, `# noqa: codes`, several `#` parts,
forms that silence nothing).  No string literal holds "noqa" or "toolshape"
(checked on the tokens of every file): toolshape reads a finding's line
textually, and a "#" inside a string is its documented limitation.

The generator knows what it wrote: OUTDIR/manifest.json records the number
of shaped dicts and every expected finding (path relative to OUTDIR, with
"/" separators) with its dict's position and its own span (line, column,
end_line, end_column: 1-based, columns in characters, end exclusive; a TS001
from the first character of the key, its parentheses included, to just after
the value, a TS002 from the "**").  A finding is left out (and counted under
"suppressed") when a suppression comment it wrote, by the meaning written
down next to its text, silences the finding's code from the finding's first
line or its dict's first line; "suppressions" counts each form written and
the findings it silences, "suppression_sites" where they stand, and
"continuation_traps" the findings not silenced although a comment naming
their code stands on a later line of their entry.  Every file is checked
with ast.parse (Python 3.11 syntax: match statements are used; Python 3.10
or newer is needed) and every expected position is checked to hold a "{" (a
"**" for a spread).  --verify additionally runs the reference scanner
(scan.py, next to this file) over OUTDIR and compares it with the manifest,
positions and the number of suppressed findings included.

Output is a function of the arguments only (same bytes on Python 3.10-3.13).
"""

import argparse
import ast
import io
import json
import os
import random
import sys
import tokenize
import unicodedata
import warnings

ALLOWED = ("status", "content", "toolUseId")

# When set (to "status"), the file being generated must not contain this
# substring anywhere: such files exercise keys that exist only through escapes
# and concatenation (a byte prefilter looking for "status" cannot see them).
AVOID = None


def choose(rng, seq):
    if AVOID is not None:
        seq = [x for x in seq if AVOID not in x]
    return rng.choice(seq)

# --------------------------------------------------------------------------
# fragments: lists of str and Mark (zero width, sits right before a "{")


class Mark:
    """Zero width, right before the "{" of a dict display."""

    __slots__ = ("shaped", "findings", "line", "col", "nested")

    def __init__(self, shaped, findings):
        self.shaped = shaped
        self.findings = findings  # [Hit]
        self.line = None
        self.col = None
        self.nested = False  # inside another expression (set by layout_dict)


class Pos:
    """Zero width: remembers where it landed (1-based line and char column)."""

    __slots__ = ("line", "col")

    def __init__(self):
        self.line = None
        self.col = None


class Hit:
    """An expected finding: its entry runs from ``start`` to ``end`` (Pos)."""

    __slots__ = ("code", "key", "start", "end")

    def __init__(self, code, key, start, end):
        self.code = code
        self.key = key
        self.start = start
        self.end = end


class Comment:
    """A comment the generator wrote, with what it silences (a frozenset of
    TS codes, written down by hand in SUPPRESSIONS / COMMENTS below)."""

    __slots__ = ("text", "silences", "line", "col")

    def __init__(self, text, silences=frozenset()):
        self.text = text
        self.silences = silences
        self.line = None
        self.col = None


def with_pos(frag):
    """(frag wrapped in two Pos, start Pos, end Pos)."""
    start, end = Pos(), Pos()
    return [start] + frag + [end], start, end


def as_frag(x):
    return x if x.__class__ is list else [x]


def frag_text(frag):
    return "".join(x if x.__class__ is str else x.text for x in frag
                   if x.__class__ in (str, Comment))


def resolve(frag):
    """Join a fragment, fill in Mark/Pos/Comment positions (1-based line,
    char column)."""
    out = []
    marks = []
    comments = []
    line, col = 1, 0
    open_comment = False
    for item in frag:
        cls = item.__class__
        if open_comment and (cls is Comment or (cls is str and item)):
            # a comment runs to the end of its line
            assert cls is str and item.startswith("\n"), "text after a comment: %r" % (item,)
            open_comment = False
        if cls is Comment:
            item.line, item.col = line, col + 1
            comments.append(item)
            assert "\n" not in item.text and "\r" not in item.text
            open_comment = True
            item = item.text
        elif cls is not str:
            assert cls in (Mark, Pos), repr(item)
            item.line, item.col = line, col + 1
            if cls is Mark:
                marks.append(item)
            continue
        out.append(item)
        nl = item.count("\n")
        if nl:
            line += nl
            col = len(item) - item.rfind("\n") - 1
        else:
            col += len(item)
    return "".join(out), marks, comments


class Ctx:
    """Where an expression is being written.

    fq: quote char of the enclosing f-string (None outside one).  Python
        3.11 forbids backslashes, comments, '#' and the enclosing quote in a
        replacement field, so such a context writes plain literals only.
    ml: newlines are allowed here.
    """

    __slots__ = ("fq", "ml", "indent", "unit", "depth")

    def __init__(self, fq=None, ml=True, indent="", unit="    ", depth=0):
        self.fq = fq
        self.ml = ml
        self.indent = indent
        self.unit = unit
        self.depth = depth

    def sub(self, **kw):
        c = Ctx(self.fq, self.ml, self.indent, self.unit, self.depth)
        for k, v in kw.items():
            setattr(c, k, v)
        return c

    @property
    def comments(self):
        return self.fq is None and self.ml

    @property
    def inner(self):
        return self.sub(indent=self.indent + self.unit, depth=self.depth + 1)


# --------------------------------------------------------------------------
# string literals

SIMPLE_ESC = {"\n": "\\n", "\t": "\\t", "\\": "\\\\", "'": "\\'", '"': '\\"',
              "\r": "\\r", "\x07": "\\a", "\x08": "\\b", "\x0c": "\\f",
              "\x0b": "\\v"}
VALID_ESC_START = "\n\\'\"abfnrtvxNuU01234567"
# Characters that are legal verbatim inside a string literal although
# str.isprintable() says no (and that are not line breaks for Python).
ODD_LITERAL = "\u2028\u2029\x85\u200b\x0c\x0b\ufeff\xa0\u00ad"
ALIASES = [("\n", "LINE FEED"), ("\n", "LF"), ("\n", "NEW LINE"), ("\n", "EOL"),
           ("\x00", "NULL"), ("\x00", "NUL"), ("\t", "CHARACTER TABULATION"),
           ("\t", "TAB"), ("\t", "HORIZONTAL TABULATION"), (" ", "SP"),
           ("\ufeff", "BYTE ORDER MARK"), ("\ufeff", "BOM"), ("\u200b", "ZWSP"),
           ("\xa0", "NBSP"), ("\u01a2", "LATIN CAPITAL LETTER GHA")]
ALGORITHMIC = ("CJK UNIFIED IDEOGRAPH", "CJK COMPATIBILITY IDEOGRAPH",
               "HANGUL SYLLABLE", "TANGUT IDEOGRAPH", "KHITAN SMALL SCRIPT",
               "NUSHU CHARACTER", "EGYPTIAN HIEROGLYPH")


def _check_aliases():
    good = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for ch, name in ALIASES:
            try:
                if ast.literal_eval('"\\N{%s}"' % name) == ch:
                    good.setdefault(ch, []).append(name)
            except (SyntaxError, ValueError):
                pass
    return good


ALIAS_NAMES = _check_aliases()


def escape_forms(ch, rng):
    o = ord(ch)
    forms = []
    if ch in SIMPLE_ESC:
        forms.append(SIMPLE_ESC[ch])
    if o < 0x100:
        forms.append("\\x" + rng.choice(("%02x", "%02X")) % o)
    if o < 0x200:  # \400..\777 are accepted by Python 3.11: chr(0o400..0o777)
        forms.append("\\%03o" % o)
    if o < 0x10000:
        forms.append("\\u" + rng.choice(("%04x", "%04X")) % o)
    forms.append("\\U" + rng.choice(("%08x", "%08X")) % o)
    name = unicodedata.name(ch, None)
    if name is not None:
        if not name.startswith(ALGORITHMIC):
            name = rng.choice((name, name, name.lower(), name.title()))
        forms.append("\\N{%s}" % name)
    for alias in ALIAS_NAMES.get(ch, ()):
        forms.append("\\N{%s}" % rng.choice((alias, alias.lower())))
    return forms


def fsafe(text):
    """Can ``text`` be written verbatim inside an f-string replacement field?"""
    return all(ch.isprintable() and ch not in "\\'\"#{}!:" for ch in text)


def quote_choices(ctx):
    if ctx.fq is None:
        return ("'", '"', "'''", '"""')
    other = "'" if ctx.fq == '"' else '"'
    return (other, other * 3)


def plain_ok(ch, q, ctx):
    if ch == "\\" or ch == q[0] or ch == "\r":
        return False
    if ch == "\n":
        return len(q) == 3 and ctx.ml and ctx.fq is None
    if ch in ODD_LITERAL:
        return ctx.fq is None
    return ch.isprintable()


def raw_ok(text, q, ctx):
    for i, ch in enumerate(text):
        if ch == "\\":
            if ctx.fq is not None or i + 1 == len(text) or text[i + 1] in (q[0], "\n", "\\"):
                return False
        elif not plain_ok(ch, q, ctx):
            return False
    return True


def render_piece(text, ctx, rng, esc_rate):
    """One string token whose value is ``text``."""
    q = rng.choice(quote_choices(ctx))
    if raw_ok(text, q, ctx) and rng.random() < (0.6 if "\\" in text else 0.2):
        return rng.choice(("r", "R")) + q + text + q
    prefix = rng.choice(("", "", "", "", "", "u", "U"))
    out = [prefix, q]
    infs = ctx.fq is not None
    cont_ok = not infs and ctx.ml
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if cont_ok and i and rng.random() < 0.02:
            out.append("\\\n")  # backslash-newline inside a literal vanishes
        if (ch == "\\" and not infs and i + 1 < n and text[i + 1] not in VALID_ESC_START
                and plain_ok(text[i + 1], q, ctx) and rng.random() < 0.7):
            out.append("\\" + text[i + 1])  # invalid escape: kept verbatim
            i += 2
            continue
        if plain_ok(ch, q, ctx) and (infs or rng.random() >= esc_rate):
            out.append(ch)
        else:
            if infs:
                raise ValueError("cannot write %r inside an f-string field" % text)
            out.append(rng.choice(escape_forms(ch, rng)))
        i += 1
    out.append(q)
    return "".join(out)


def sep(ctx, rng, allow_empty=True):
    """Whitespace between two tokens inside brackets (a fragment)."""
    r = rng.random()
    if ctx.ml and r < 0.12:
        s = ["\n" + ctx.indent + ctx.unit]
        if ctx.comments and rng.random() < 0.5:
            s = ["  ", comment(rng)] + s
        return s
    if allow_empty and r < 0.25:
        return [""]
    if ctx.fq is None and r < 0.27:
        return [" \x0c "]  # form feed is plain whitespace inside a line
    return [rng.choice((" ", " ", " ", "  ", "\t"))]


def lit_str(text, ctx, rng, esc_rate=0.25, split=True, paren=True):
    """A constant-str expression (maybe concatenated, parenthesized) == text,
    as a fragment."""
    if AVOID is not None and AVOID in text:
        for _ in range(500):
            s = _lit_str(text, ctx, rng, max(esc_rate, 0.3), True, paren)
            if AVOID not in frag_text(s):
                return s
        raise RetryFile("cannot spell %r without %r" % (text, AVOID))
    return _lit_str(text, ctx, rng, esc_rate, split, paren)


class RetryFile(Exception):
    pass


def _lit_str(text, ctx, rng, esc_rate, split, paren):
    nparts = 1
    if split:
        r = rng.random()
        nparts = 1 if r < 0.6 else (2 if r < 0.9 else 3)
    cuts = sorted(rng.randint(0, len(text)) for _ in range(nparts - 1))
    parts = []
    prev = 0
    for c in cuts + [len(text)]:
        parts.append(text[prev:c])
        prev = c
    last = render_piece(parts[0], ctx, rng, esc_rate)
    s = [last]
    for p in parts[1:]:
        nxt = render_piece(p, ctx, rng, esc_rate)
        gap = sep(ctx, rng, allow_empty=last[-1] != nxt[0])
        if gap == [""] and last[-1] == nxt[0]:
            gap = [" "]
        s += gap + [nxt]
        last = nxt
    if paren and rng.random() < 0.12:
        if ctx.ml and rng.random() < 0.3:
            # a comment after the "(" stands on the entry's first line
            after = ["  ", comment(rng)] if ctx.comments and rng.random() < 0.3 else []
            s = ["("] + after + ["\n" + ctx.indent + ctx.unit * 2] + s + ["\n" + ctx.indent + ctx.unit + ")"]
        else:
            s = ["(" + rng.choice(("", " "))] + s + [rng.choice(("", " ")) + ")"]
            if rng.random() < 0.2:
                s = ["("] + s + [")"]
    return s


# --------------------------------------------------------------------------
# vocabulary

EXTRA_KEYS = [
    "frames", "errors", "hz_actual", "rows", "row_count", "duration_ms",
    "metrics", "meta", "error", "message", "data", "result", "elapsed",
    "Status", "STATUS", "Content", "tooluseid", "toolUseID", "tool_use_id",
    "status ", " content", "", "stätus", "ключ", "数据", "🚀", "naïve",
    'a"b', "a'b", "a\\b", "a\nb", "tab\there", "st\\x61tus", "st\\qtus",
    "\x00nul", "\u01ff", "\u0100", "x" * 40, "json", "text", "image",
    "line\u2028sep", "e\u0301", "\xff", "\U0001f600x", "# not a comment",
    "{braces}", "\\N{LATIN SMALL LETTER A}", "con" + "tent_type", "statuses",
]
VALUE_TEXTS = [
    "success", "error", "ok", "done ✓", "héllo wörld", "日本語のテキスト",
    "emoji 🚀🔥", "naïve café", "Ελληνικά", "עברית", "zero\u200bwidth",
    "line\u2028sep", "nel\x85char", "tab\there", "quote ' and \" both",
    "back\\slash", "{not a dict}", "#hash", "multi\nline", "Ünïcödé",
    "rows affected: 3", "", "x" * 30, "€100", "\U0001f9ea test",
]
NON_ASCII_PREFIX = ["é", "✓", "日本", "🚀", "ß", "Ω≈ç", "naïve — ok", "\U0001f600",
                    "e\u0301", "中文 ", "ÅÄÖ", "€"]
# Comments that silence nothing.
COMMENTS = ["# TODO: drop legacy keys", "# {'status': 1, 'content': 2, 'x': 3}",
            "# métriques ✓", "# 🚀 fast path", "# keep in sync with the UI",
            "# type: ignore", "# pragma: no cover", "# \u2028 odd separator",
            "# form\x0cfeed", "# \"status\": \"content\"", "#", "# ignore", "# toolshape"]
# Suppression comments and, written down by hand, the codes each silences
# (toolshape's documented rules: `toolshape: ignore` bare or with `[codes]`,
# `noqa` bare or with `: codes`; every `#` of a comment starts a part).
_BOTH, _TS001, _TS002, _NOTHING = (frozenset(("TS001", "TS002")), frozenset(("TS001",)),
                                   frozenset(("TS002",)), frozenset())
SUPPRESSIONS = [
    ("# toolshape: ignore", _BOTH),
    ("#toolshape:ignore", _BOTH),
    ("# TOOLSHAPE: IGNORE[ts001]", _TS001),
    ("# toolshape: ignore[TS001]", _TS001),
    ("# toolshape: ignore[TS002]", _TS002),
    ("# toolshape: ignore[TS001, TS002]", _BOTH),
    ("# toolshape: ignore [TS001]", _TS001),
    ("# noqa", _BOTH),
    ("# NOQA", _BOTH),
    ("# noqa: TS001", _TS001),
    ("# noqa:TS002,E501", _TS002),
    ("# noqa: E501", _NOTHING),
    ("# per-frame  # toolshape: ignore[TS001]", _TS001),
    ("# toolshape: note", _NOTHING),
    ("# toolshape: ignored", _BOTH),  # no "[...]": every code
    ("# noqa E501", _BOTH),  # no ":": every code
    ("# Noqa:ts002", _TS002),
    ("# toolshape: ignore[TS002 TS001]", _BOTH),
    ("# type: ignore  # noqa: TS002", _TS002),
    ("# toolshape: ignore[TS003]", _NOTHING),
    ("# noqa: BLE001", _NOTHING),
    ("# toolshape: ignore[TS001", _BOTH),  # "[" without "]": every code
    ("# toolshape:ignore[]", _NOTHING),  # an empty list
    ("# toolshape: ignore[ts002]  # noqa: TS001", _BOTH),
]
SUPPRESSION_FORMS = [text for text, _ in SUPPRESSIONS]
SUPPRESSION_RATE = 0.4


NAMES = ["payload", "rows", "result", "data", "frames", "err", "exc", "meta",
         "self.cache", "ctx.value", "summary", "items[0]", "len(rows)",
         "time.monotonic() - t0", "str(exc)", "None", "True", "False", "0",
         "42", "3.14", "1e-3", "0x1F", "1_000", "-1", "...", "not ok",
         "a if b else c", "await_result", "x[1:2]", "(1, 2)", "[]", "()"]


def comment(rng):
    """A Comment: a suppression (of any form) or a comment that is none."""
    if rng.random() < SUPPRESSION_RATE:
        return suppression(rng)
    return Comment(choose(rng, COMMENTS))


def suppression(rng, text=None):
    if text is None:
        text, silences = rng.choice(SUPPRESSIONS)
    else:
        silences = dict(SUPPRESSIONS)[text]
    return Comment(text, silences)


def pick_text(pool, ctx, rng):
    if ctx.fq is not None:
        pool = [t for t in pool if fsafe(t)]
    return choose(rng, pool)


def other_key(ctx, rng):
    """A key that is not a constant str: never shapes, never an extra."""
    q = quote_choices(ctx)[0]
    choices = ["1", "0", "-1", "2.5", "None", "True", "...", "STATUS", "key",
               "KEYS[0]", "str(1)", "(1, 2)", "b%sstatus%s" % (q, q),
               "B%scontent%s" % (q, q), "rb%sextra%s" % (q, q), "Rb%sx%s" % (q, q),
               "f%sstatus%s" % (q, q), "F%scontent%s" % (q, q), "rf%sframes%s" % (q, q),
               "fR%s{name}%s" % (q, q), "(%sstatus%s,)" % (q, q),
               "%ssta%s + %stus%s" % (q, q, q, q), "b%ssta%s b%stus%s" % (q, q, q, q),
               "%ssta%s f%stus%s" % (q, q, q, q), "(k := %sstatus%s)" % (q, q),
               "%sa%s if flag else %sb%s" % (q, q, q, q), "name.attr"]
    return choose(rng, choices)


# --------------------------------------------------------------------------
# dicts


def layout_dict(entries, ctx, rng, mark):
    """entries: list of fragments (each "key: value" or "**expr")."""
    mark.nested = ctx.depth > 0
    frag = [mark, "{"]
    if not entries:
        frag.append(rng.choice(("", " ")) + "}")
        return frag
    multiline = ctx.ml and (len(entries) > 2 or ctx.depth == 0) and rng.random() < 0.55
    if not multiline:
        frag.append(rng.choice(("", "", " ")))
        for i, e in enumerate(entries):
            if i:
                frag.append(rng.choice((", ", ", ", ",", " , ", ",  ")))
            frag.extend(e)
        if rng.random() < 0.15:
            frag.append(",")
        frag.append(rng.choice(("", "", " ")) + "}")
        return frag
    ind = ctx.indent + ctx.unit
    first_inline = rng.random() < 0.15
    if ctx.comments and rng.random() < 0.2 and not first_inline:
        frag += ["  ", comment(rng)]  # on the dict's first line
    for i, e in enumerate(entries):
        if i == 0 and first_inline:
            frag.append(rng.choice(("", " ")))
        else:
            if ctx.comments and rng.random() < 0.08:
                frag += ["\n" + ind, comment(rng)]  # a line of its own
            if rng.random() < 0.04:
                frag.append("\n")  # blank line
            frag.append("\n" + ind)
        frag.extend(e)
        last = i == len(entries) - 1
        if not last or rng.random() < 0.7:
            frag.append(",")
        if ctx.comments and rng.random() < 0.12:
            frag += ["  ", comment(rng)]  # on the entry's last line
    if rng.random() < 0.1 and frag[-1].__class__ is not Comment:
        frag.append(rng.choice(("", " ")) + "}")
    else:
        frag.append("\n" + ctx.indent + "}")
    return frag


def colon(ctx, rng):
    """The ":" of an entry (a fragment)."""
    r = rng.random()
    if ctx.ml and r < 0.03:
        nl = ["\n" + ctx.indent + ctx.unit * 2 + ": "]
        if ctx.comments and rng.random() < 0.4:
            nl = ["  ", comment(rng)] + nl
        return nl
    return [rng.choice((": ", ": ", ": ", ":", " : ", ":  "))]


def keyed(keytext, value, ctx, rng):
    return as_frag(keytext) + colon(ctx, rng) + value


def spread_expr(ctx, rng, gen):
    r = rng.random()
    if r < 0.12 and ctx.depth < 3:
        inner = ctx.inner
        return gen.dict_value(inner, shaped=rng.random() < 0.5)
    if r < 0.2:
        return gen.plain_dict(ctx.inner, [("x", ["1"])])
    e = rng.choice(("meta", "kwargs", "self.extra", "(extra or {})", "get_meta()",
                    "base", "dict(a=1)", "defaults", "(a | b)", "cfg.as_dict()",
                    "timing"))
    return [e]


def spread_entry(ctx, rng, gen):
    star = [rng.choice(("**", "**", "**", "** ", "**  "))]
    if ctx.ml and rng.random() < 0.05:
        star = ["**"]
        if ctx.comments and rng.random() < 0.4:
            star += ["  ", comment(rng)]  # on the spread's first line
        star += ["\n" + ctx.indent + ctx.unit * 2]
    return star + spread_expr(ctx, rng, gen)


class FileGen:
    def __init__(self, rng, unit):
        self.rng = rng
        self.unit = unit
        self.n = 0

    def uid(self):
        self.n += 1
        return self.n

    # -- values ------------------------------------------------------------

    def text_value(self, ctx):
        return lit_str(pick_text(VALUE_TEXTS, ctx, self.rng), ctx, self.rng, esc_rate=0.1)

    def plain_dict(self, ctx, pairs):
        """A dict that is never shaped (pairs: [(key str, value frag)])."""
        entries = [keyed(lit_str(k, ctx, self.rng, esc_rate=0.05, split=False), v, ctx, self.rng)
                   for k, v in pairs]
        return layout_dict(entries, ctx, self.rng, Mark(False, []))

    def content_blocks(self, ctx):
        rng = self.rng
        inner = ctx.inner
        blocks = []
        for _ in range(rng.choice((0, 1, 1, 1, 2, 3))):
            r = rng.random()
            if r < 0.45:
                blocks.append(self.plain_dict(inner, [("text", self.text_value(inner))]))
            elif r < 0.8:
                payload = self.value(inner.inner, allow_shaped=ctx.depth < 3)
                blocks.append(self.plain_dict(inner, [("json", payload)]))
            elif r < 0.9 and ctx.depth < 3:
                blocks.append(self.dict_value(inner, shaped=True))
            else:
                blocks.append([choose(rng, NAMES)])
        out = ["["]
        for i, b in enumerate(blocks):
            if i:
                out.append(rng.choice((", ", ",")))
                if ctx.ml and rng.random() < 0.3:
                    out.append("\n" + inner.indent + ctx.unit)
            out.extend(b)
        out.append("]")
        return out

    def value(self, ctx, allow_shaped=True):
        rng = self.rng
        r = rng.random()
        deep = ctx.depth >= 3
        if r < 0.3 or deep:
            return [choose(rng, NAMES)] if rng.random() < 0.5 else self.text_value(ctx)
        if r < 0.5:
            return self.content_blocks(ctx)
        if r < 0.6 and allow_shaped:
            return self.dict_value(ctx.inner, shaped=True)
        if r < 0.66:
            return ["(lambda: "] + self.dict_value(ctx.inner, shaped=rng.random() < 0.7) + [")"]
        if r < 0.72:
            head, tail = rng.choice((("[", " for i in range(3)]"), ("(", " for r in rows)"),
                                     ("[", " for i, r in enumerate(rows) if r]")))
            return [head] + self.dict_value(ctx.inner, shaped=rng.random() < 0.7) + [tail]
        if r < 0.76:
            return ["{k: "] + self.dict_value(ctx.inner, shaped=True) + [" for k in keys}"]
        if r < 0.8 and ctx.fq is None and not deep:
            return self.fstring(ctx)
        if r < 0.85:
            return self.decoy_expr(ctx)
        if r < 0.9:
            return self.plain_dict(ctx.inner, [("rows", [choose(rng, NAMES)]),
                                               ("elapsed", [choose(rng, NAMES)])])
        return self.text_value(ctx)

    def fstring(self, ctx):
        """f-string with a dict in a replacement field (different quote)."""
        rng = self.rng
        q = rng.choice(('"', "'", '"""', "'''"))
        fctx = ctx.sub(fq=q[0], ml=len(q) == 3 and rng.random() < 0.5, depth=ctx.depth + 1)
        pre = rng.choice(("", "result: ", "é→ ", "{{literal}} ", "🚀 ", "x={x} "))
        if "{x}" in pre:
            pre = pre.replace("{x}", "{x!r}")
        tail = rng.choice((" }", "!r}", " !s}", "= }", ":>{width}}", "!r:^{ {1: 2}[1] }}"))
        d = self.dict_value(fctx, shaped=rng.random() < 0.8)
        frag = [rng.choice(("f", "F", "rf", "Rf", "fr", "fR")), q, pre, "{ "] + d + [tail]
        if rng.random() < 0.3:
            frag += [" and { "] + self.dict_value(fctx, shaped=True) + [" }"]
        frag += [rng.choice(("", " done", " ✓")), q]
        return frag

    def decoy_expr(self, ctx):
        rng = self.rng
        q = quote_choices(ctx)[0]
        s = lambda t: q + t + q  # noqa: E731
        r = rng.random()
        if AVOID is not None:
            r = 1.0
        if r < 0.2:
            return ["{%s, %s, %s}" % (s("status"), s("content"), s("frames"))]  # set
        if r < 0.35:
            return ["{%s: v for v in vals}" % s("status")]  # dict comprehension
        if r < 0.5:
            return ["dict(status=%s, content=[], frames=3)" % s("ok")]
        if r < 0.65 and ctx.fq is None:
            return [repr("{'status': 1, 'content': 2, 'frames': 3}")]
        if r < 0.8:
            # f-string / bytes key: only one real shape key -> not shaped
            k1 = rng.choice(("f" + s("status"), "b" + s("status"), "F" + s("status"),
                             s("sta") + " f" + s("tus")))
            entries = [[k1, ": 1"], [s("content"), ": []"], [s("frames"), ": 3"]]
            rng.shuffle(entries)
            return layout_dict(entries, ctx.inner, rng, Mark(False, []))
        # only one of status/content
        one = rng.choice(("status", "content"))
        entries = [keyed(lit_str(one, ctx.inner, rng), ["1"], ctx.inner, rng),
                   keyed(lit_str("frames", ctx.inner, rng), ["2"], ctx.inner, rng)]
        if rng.random() < 0.5:
            entries.append(spread_entry(ctx.inner, rng, self))
        return layout_dict(entries, ctx.inner, rng, Mark(False, []))

    # -- the shaped dict ---------------------------------------------------

    def dict_value(self, ctx, shaped=True):
        """A dict display; shaped=True makes it tool-result-shaped."""
        rng = self.rng
        if not shaped:
            return self.decoy_expr(ctx)
        plan = []  # (kind, key text or None, value frag)
        plan.append(("key", "status", self.status_value(ctx)))
        plan.append(("key", "content", self.value(ctx) if rng.random() < 0.7 else self.content_blocks(ctx)))
        if rng.random() < 0.05:
            plan.append(("key", rng.choice(("status", "content")), self.status_value(ctx)))
        if rng.random() < 0.25:
            plan.append(("key", "toolUseId", [rng.choice(("tool_use_id", "tid", "ctx.tool_use_id"))]))
        violating = rng.random() < 0.6
        nspread = 0
        if violating:
            nextra = rng.choice((0, 1, 1, 1, 2, 2, 3))
            nspread = rng.choice((0, 0, 1, 1, 2)) if nextra else rng.choice((1, 1, 2))
            for _ in range(nextra):
                k = pick_text(EXTRA_KEYS, ctx, rng)
                plan.append(("key", k, self.value(ctx, allow_shaped=ctx.depth < 2)))
                if rng.random() < 0.1:
                    plan.append(("key", k, [choose(rng, NAMES)]))
        for _ in range(rng.choice((0, 0, 0, 0, 1, 1, 2))):
            plan.append(("other", other_key(ctx, rng), [choose(rng, NAMES)]))
        rng.shuffle(plan)
        for _ in range(nspread):
            pos = rng.choice((0, len(plan), rng.randint(0, len(plan))))
            plan.insert(pos, ("spread", None, None))
        findings = []
        entries = []
        wild = rng.random() < 0.6
        for kind, key, val in plan:
            if kind == "spread":
                entry, start, end = with_pos(spread_entry(ctx, rng, self))
                findings.append(Hit("TS002", None, start, end))
                entries.append(entry)
            elif kind == "other":
                entries.append(keyed(key, val, ctx, rng))
            else:
                if wild or AVOID is not None:
                    esc = 0.5 if rng.random() < 0.3 else 0.05
                    ktext = lit_str(key, ctx, rng, esc_rate=esc)
                else:  # the everyday spelling
                    ktext = render_piece(key, ctx.sub(ml=False), rng, 0.0)
                entry, start, end = with_pos(keyed(ktext, val, ctx, rng))
                if key not in ALLOWED:
                    findings.append(Hit("TS001", key, start, end))
                entries.append(entry)
        return layout_dict(entries, ctx, rng, Mark(True, findings))

    def status_value(self, ctx):
        rng = self.rng
        r = rng.random()
        if r < 0.7:
            return lit_str(rng.choice(("success", "error")), ctx, rng, esc_rate=0.05, split=False)
        if r < 0.85:
            q = quote_choices(ctx)[0]
            return ["%ssuccess%s if ok else %serror%s" % (q, q, q, q)]
        return [choose(rng, ("status", "STATUS_OK", "self.status", "Status.OK.value"))]

    # -- statements --------------------------------------------------------

    def ctx(self, ind):
        return Ctx(indent=ind, unit=self.unit)

    def shaped(self, ind, **kw):
        return self.dict_value(self.ctx(ind).sub(**kw) if kw else self.ctx(ind), shaped=True)

    def trail(self):
        """Maybe a comment at the end of a statement's (last) line."""
        r = self.rng.random()
        if r < 0.08:
            return ["  ", suppression(self.rng)]
        if r < 0.1:
            return ["  ", comment(self.rng)]
        return []

    def prefix_stmt(self, ind):
        """Something non-ASCII on the same line, before the dict."""
        rng = self.rng
        if rng.random() < 0.35:
            t = rng.choice(NON_ASCII_PREFIX)
            return ["note_%d = %r; " % (self.uid(), t)]
        return []

    def block(self, ind):
        rng = self.rng
        u = self.unit
        name = "tool_%d" % self.uid()
        kind = rng.randrange(22)
        while AVOID is not None and kind in (0, 13, 19):
            kind = rng.randrange(22)
        f = []
        if kind == 0:  # tool function with try/except
            f += [ind, "@tool\n", ind, "def %s(query: str, limit: int = 10) -> dict:\n" % name,
                  ind + u, '"""Run the query. Returns {"status": ..., "content": [...]}."""\n',
                  ind + u, "log.info(%r, query)\n" % "running ✓",
                  ind + u, "try:\n", ind + u * 2, "rows = db.execute(query)\n",
                  ind + u, "except Exception as exc:  ", suppression(rng, "# noqa: BLE001"), "\n",
                  ind + u * 2, "return "] + self.shaped(ind + u * 2) + self.trail() + ["\n",
                  ind + u, "return "] + self.shaped(ind + u) + self.trail() + ["\n"]
        elif kind == 1:  # assignment, maybe with non-ASCII before it
            f += [ind] + self.prefix_stmt(ind) + ["result_%d = " % self.uid()] + self.shaped(ind) + \
                self.trail() + ["\n"]
        elif kind == 2:  # call arguments
            f += [ind, "emit("] + self.shaped(ind) + [", flush=True)\n",
                  ind, "callback(%r, result=" % "é"] + self.shaped(ind) + [")\n"]
        elif kind == 3:  # lambda, lambda default
            f += [ind, "make_%d = lambda rows, n=0: " % self.uid()] + self.shaped(ind) + ["\n"]
            if rng.random() < 0.5:
                f += [ind, "keep_%d = lambda r=" % self.uid()] + self.shaped(ind) + [": r\n"]
        elif kind == 4:  # comprehensions
            f += [ind, "results_%d = [" % self.uid()] + self.shaped(ind) + [" for i in range(3)]\n",
                  ind, "by_id_%d = {k: " % self.uid()] + self.shaped(ind) + [" for k in ids}\n",
                  ind, "gen_%d = (" % self.uid()] + self.shaped(ind) + ["\n", ind, u, "for r in rows if r)\n"]
        elif kind == 5:  # default argument
            f += [ind, "def %s(x, fallback=" % name] + self.shaped(ind) + [", *, extra=None):\n",
                  ind + u, "return fallback"] + self.trail() + ["\n"]
        elif kind == 6:  # class body
            f += [ind, "class Tool%d:\n" % self.uid(), ind + u, '"""Legacy tool."""\n\n',
                  ind + u, "DEFAULT = "] + self.shaped(ind + u) + self.trail() + ["\n\n",
                  ind + u, "def run(self, *args):\n",
                  ind + u * 2, "return "] + self.shaped(ind + u * 2) + ["\n"]
        elif kind == 7:  # async def
            f += [ind, "async def %s(session):\n" % name,
                  ind + u, "data = await session.post("] + self.shaped(ind + u) + [")\n",
                  ind + u, "async with lock:\n",
                  ind + u * 2, "return "] + self.shaped(ind + u * 2) + ["\n",
                  ind + u, "items = [x async for x in stream("] + self.shaped(ind + u) + [")]\n"]
        elif kind == 8:  # f-string
            f += [ind] + self.prefix_stmt(ind) + ["msg_%d = " % self.uid()] + self.fstring(self.ctx(ind)) + ["\n"]
        elif kind == 9:  # decorator argument
            f += [ind, "@tool(schema="] + self.shaped(ind) + [")\n", ind, "def %s():\n" % name,
                  ind + u, "pass\n"]
        elif kind == 10:  # annotation
            f += [ind, "hint_%d: " % self.uid()] + self.shaped(ind) + [" = None"] + self.trail() + ["\n"]
        elif kind == 11:  # generator
            f += [ind, "def %s():\n" % name, ind + u, "yield "] + self.shaped(ind + u) + ["\n",
                  ind + u, "yield from ["] + self.shaped(ind + u) + ["]\n"]
        elif kind == 12:  # conditional expression
            f += [ind, "out_%d = " % self.uid()] + self.shaped(ind) + [" if ok else "] + self.shaped(ind) + \
                self.trail() + ["\n"]
        elif kind == 13 and rng.random() < 0.4:  # match statement without a mapping pattern
            f += [ind, "match "] + self.shaped(ind) + [":\n",
                  ind + u, "case [_, *_] | Point(x=0, y=[1, 2]):\n", ind + u * 2, "out = "] + \
                self.shaped(ind + u * 2) + ["\n", ind + u, "case 'a' if (lambda: 1)(): out = "] + \
                self.shaped(ind + u * 2) + ["\n", ind + u, "case _:\n", ind + u * 2, "out = None\n"]
        elif kind == 13:  # match statement: patterns are decoys, bodies are not
            q = rng.choice(("'", '"'))
            # The second pattern after a float alternative, the first then a
            # sequence: the one mapping pattern is a pattern still.
            alternative = rng.choice(("", ".5 | "))
            first = "{%sstatus%s: s, %scontent%s: c, %sframes%s: n, **rest}" % ((q, q) * 3)
            f += [ind, "match response:\n",
                  ind + u, "case %s:\n" % ("[s, c, n]" if alternative else first),
                  ind + u * 2, "out = "] + self.shaped(ind + u * 2) + ["\n",
                  ind + u, "case ", alternative,
                  "{%sstatus%s: %serror%s, %scontent%s: []}:\n" % ((q, q) * 3),
                  ind + u * 2, "pass\n", ind + u, "case _:\n", ind + u * 2, "out = None\n"]
        elif kind == 14:  # several dicts on one line
            f += [ind, "a_%d = " % self.uid()] + self.shaped(ind, ml=False) + ["; b = "] + \
                self.shaped(ind, ml=False) + ["; c = %r; d = " % rng.choice(NON_ASCII_PREFIX)] + \
                self.shaped(ind, ml=False) + self.trail() + ["\n"]
        elif kind == 15:  # explicit line join before the dict
            f += [ind, "joined_%d = \\\n" % self.uid(), ind + u] + self.shaped(ind + u) + self.trail() + ["\n"]
        elif kind == 16:  # walrus, assert, subscripts, starred
            f += [ind, "if (r := "] + self.shaped(ind) + ["):\n", ind + u, "pass\n",
                  ind, "assert check("] + self.shaped(ind) + ["), %r\n" % "bad ✗",
                  ind, "cache[key] = "] + self.shaped(ind) + ["\n",
                  ind, "first, *rest = ["] + self.shaped(ind) + [", "] + self.shaped(ind) + ["]\n"]
        elif kind == 17:  # nested function, error path
            f += [ind, "def %s(path):\n" % name, ind + u, "def inner(e):\n",
                  ind + u * 2, "return "] + self.shaped(ind + u * 2) + ["\n",
                  ind + u, "try:\n", ind + u * 2, "return read(path)\n",
                  ind + u, "except OSError as e:\n",
                  ind + u * 2, "print("] + self.shaped(ind + u * 2) + [", file=sys.stderr)\n",
                  ind + u * 2, "return inner(e)\n"]
        elif kind == 18:  # loops
            f += [ind, "for i in range(3):\n", ind + u, "acc.append("] + self.shaped(ind + u) + [")\n",
                  ind, "else:\n", ind + u, "acc.append("] + self.shaped(ind + u) + [")\n",
                  ind, "while not done:\n", ind + u, "done = send("] + self.shaped(ind + u) + [")\n"]
        elif kind == 19:  # decoys only
            f += [ind, "# %s\n" % "{'status': 'success', 'content': [], 'frames': 1}",
                  ind, "doc_%d = %r\n" % (self.uid(), '{"status": "error", "content": [], "rows": 2}'),
                  ind, "s_%d = " % self.uid()] + self.decoy_expr(self.ctx(ind)) + ["\n",
                  ind, "t_%d = " % self.uid()] + self.decoy_expr(self.ctx(ind)) + ["\n"]
        elif kind == 20:  # result nested in a result
            c = self.ctx(ind)
            inner = self.dict_value(c.inner.inner, shaped=True)
            outer_entries = [
                keyed(lit_str("status", c, rng), ['"success"'], c, rng),
                keyed(lit_str("content", c, rng), ["[{\"json\": "] + inner + ["}]"], c, rng),
            ]
            findings = []
            if rng.random() < 0.5:
                entry, start, end = with_pos(keyed(lit_str("frames", c, rng), ["len(frames)"], c, rng))
                outer_entries.append(entry)
                findings.append(Hit("TS001", "frames", start, end))
            f += [ind, "nested_%d = " % self.uid()] + layout_dict(outer_entries, c, rng, Mark(True, findings)) + ["\n"]
        else:  # with statement + tab/space mix inside brackets
            f += [ind, "with open(path, %r, encoding=%r) as fh:\n" % ("rb", "utf-8"),
                  ind + u, "json.dump("] + self.shaped(ind + u) + [", fh)\n"]
        return f

    def header(self, index):
        rng = self.rng
        f = []
        if rng.random() < 0.2:
            f.append("# -*- coding: utf-8 -*-\n")
        f.append("# generated by gen_corpus.py (file %d) -- do not edit\n" % index)
        if AVOID is None:
            f.append('"""Legacy tools module %d: r\u00e9sultats {"status": ..., "content": ...}."""\n\n' % index)
        else:
            f.append('"""Legacy tools module %d: every result key is spelled with escapes."""\n\n' % index)
        f.append("import json\nimport logging\nimport sys\nimport time\n\n"
                 "from strands import tool\n\nlog = logging.getLogger(__name__)\n\n\n")
        return f


def generate_file(seed, index, per_file, avoid=None, attempt=0):
    """Returns (rng, fragment, indent unit) of file number ``index``."""
    global AVOID
    tag = "toolshape:%d:%d" % (seed, index)
    if avoid is not None:
        tag += ":avoid-%s:%d" % (avoid, attempt)
    rng = random.Random(tag)
    unit = rng.choice(("    ", "    ", "    ", "  ", "\t", "\t"))
    g = FileGen(rng, unit)
    AVOID = avoid
    try:
        frag = g.header(index)
        shaped = 0
        while shaped < per_file:
            if rng.random() < 0.25:
                # wrap in an indented suite so that indentation varies
                ind = unit
                if rng.random() < 0.5:
                    f = ["if True:  ", Comment("# legacy switch") if rng.random() < 0.7 else suppression(rng), "\n"]
                else:
                    f = ["def wrapper_%d():\n" % g.uid()]
                f += g.block(ind)
            else:
                f = g.block("")
            frag += f + ["\n\n"]
            shaped += sum(1 for x in f if x.__class__ is Mark and x.shaped)
    finally:
        AVOID = None
    return rng, frag, unit


def finding_order(f):
    return (f["path"], f["dict_line"], f["dict_column"], f["line"], f["column"], f["code"], f["key"] or "")


# Text that toolshape reads on a finding's line without tokenizing it: a "#"
# inside a string followed by one of these could pass for a suppression (its
# documented limitation), so no string literal of the corpus may hold them.
DIRECTIVE_WORDS = ("noqa", "toolshape")


def check_no_directive_in_strings(rel, text):
    kinds = {tokenize.STRING}
    if hasattr(tokenize, "FSTRING_MIDDLE"):  # Python 3.12+
        kinds.add(tokenize.FSTRING_MIDDLE)
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type in kinds:
            low = tok.string.lower()
            for word in DIRECTIVE_WORDS:
                if word in low:
                    raise AssertionError("%s:%d: string literal holds %r: %r" % (rel, tok.start[0], word, tok.string))


def write_corpus(outdir, seed, ndicts, per_file, blind_files=4):
    """Writes the corpus and manifest.json; returns the manifest."""
    os.makedirs(outdir, exist_ok=True)
    manifest = {"seed": seed, "files": 0, "shaped_dicts": 0, "expected_findings": 0,
                "TS001": 0, "TS002": 0, "line_endings": {"lf": 0, "crlf": 0, "mixed": 0},
                "indent": {"spaces": 0, "tabs": 0}, "bom": 0,
                "suppressed_findings": 0,
                # per suppression form: comments written, findings each silences
                "suppressions": {form: {"written": 0, "silencing": 0} for form in SUPPRESSION_FORMS},
                # where the suppression comments stand (first matching site)
                "suppression_sites": {"entry_first_line": 0, "dict_line": 0, "nested_dict_line": 0,
                                      "entry_continuation_line": 0, "elsewhere": 0},
                # findings NOT silenced although a comment naming their code
                # stands on a later line of their entry
                "continuation_traps": 0,
                "no_status_bytes_files": [], "findings": [], "suppressed": []}

    def emit(rel, rng, frag, unit, avoid=None):
        text, marks, comments = resolve(frag)
        r = rng.random()
        if r < 0.35:
            data_text = text.replace("\n", "\r\n")
            ending = "crlf"
        elif r < 0.4:
            lines = text.split("\n")
            data_text = "".join(ln + ("\r\n" if i % 3 == 0 else "\n")
                                for i, ln in enumerate(lines[:-1])) + lines[-1]
            ending = "mixed"
        else:
            data_text = text
            ending = "lf"
        data = data_text.encode("utf-8")
        bom = rng.random() < 0.05
        if bom:
            data = b"\xef\xbb\xbf" + data
        if avoid is not None and avoid.encode() in data:
            raise RetryFile("%r in %s" % (avoid, rel))
        try:
            ast.parse(data, filename=rel)
        except SyntaxError as exc:
            dump = os.path.join(outdir, "FAILED_%s.txt" % rel.replace(os.sep, "_"))
            with open(dump, "wb") as fh:
                fh.write(data)
            raise AssertionError("generated file %s does not parse: %s (kept in %s)" % (rel, exc, dump))
        check_no_directive_in_strings(rel, text)
        lines = text.split("\n")
        for m in marks:
            if lines[m.line - 1][m.col - 1:m.col] != "{":
                raise AssertionError("%s:%d:%d: mark is not at a '{'" % (rel, m.line, m.col))
        for c in comments:
            if lines[c.line - 1][c.col - 1:] != c.text:
                raise AssertionError("%s:%d:%d: comment %r is not where it was written" % (rel, c.line, c.col, c.text))
        shaped = [m for m in marks if m.shaped]
        hits = [(m, h) for m in shaped for h in m.findings]
        for m, h in hits:
            at = lines[h.start.line - 1][h.start.col - 1:]
            if (h.code == "TS002") != at.startswith("**") or at[:1].isspace() or not at:
                raise AssertionError("%s:%d:%d: %s span starts at %r" % (rel, h.start.line, h.start.col, h.code, at[:10]))
            before_end = lines[h.end.line - 1][:h.end.col - 1]
            if not before_end or before_end[-1].isspace():
                raise AssertionError("%s:%d:%d: span ends after %r" % (rel, h.end.line, h.end.col, before_end[-10:]))

        # What the comments written silence: the generator knows each
        # comment's meaning (SUPPRESSIONS) and where it put it.
        by_line = {}
        for c in comments:
            by_line.setdefault(c.line, []).append(c)

        def silencers(line, col, code):
            return [c for c in by_line.get(line, ()) if c.col >= col and code in c.silences]

        path = os.path.join(outdir, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as fh:
            fh.write(data)
        relp = rel.replace(os.sep, "/")
        manifest["line_endings"][ending] += 1
        manifest["bom"] += bom
        manifest["indent"]["tabs" if unit == "\t" else "spaces"] += 1
        manifest["shaped_dicts"] += len(shaped)
        for m, h in hits:
            record = {"path": relp, "dict_line": m.line, "dict_column": m.col, "code": h.code, "key": h.key,
                      "line": h.start.line, "column": h.start.col, "end_line": h.end.line, "end_column": h.end.col}
            by = silencers(h.start.line, h.start.col, h.code) + silencers(m.line, m.col, h.code)
            for c in set(by):
                manifest["suppressions"][c.text]["silencing"] += 1
            if by:
                manifest["suppressed_findings"] += 1
                manifest["suppressed"].append(record)
                continue
            if any(h.code in c.silences for ln in range(h.start.line + 1, h.end.line + 1)
                   for c in by_line.get(ln, ())):
                manifest["continuation_traps"] += 1
            manifest["findings"].append(record)
            manifest[h.code] += 1
        entry_lines = {h.start.line for _, h in hits}
        dict_lines = {m.line: m.nested for m in reversed(shaped) if m.findings}
        continuation = {ln for _, h in hits for ln in range(h.start.line + 1, h.end.line + 1)}
        for c in comments:
            if c.text not in manifest["suppressions"]:
                continue
            manifest["suppressions"][c.text]["written"] += 1
            if c.line in entry_lines:
                site = "entry_first_line"
            elif c.line in dict_lines:
                site = "nested_dict_line" if dict_lines[c.line] else "dict_line"
            elif c.line in continuation:
                site = "entry_continuation_line"
            else:
                site = "elsewhere"
            manifest["suppression_sites"][site] += 1
        manifest["files"] += 1
        if avoid is not None:
            manifest["no_status_bytes_files"].append(relp)

    index = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        while manifest["shaped_dicts"] < ndicts:
            rng, frag, unit = generate_file(seed, index, per_file)
            sub = "pkg_%02d" % (index // 10)
            if index % 7 == 3:
                sub = os.path.join(sub, "nested", "deeper")
            ext = ".pyi" if index % 19 == 5 else ".py"
            emit(os.path.join(sub, "tools_%04d%s" % (index, ext)), rng, frag, unit)
            index += 1
        # Files in which "status" never appears as such: every status key is
        # spelled through escapes or implicit concatenation.
        for b in range(blind_files):
            for attempt in range(200):
                try:
                    rng, frag, unit = generate_file(seed, index, max(1, per_file // 3),
                                                    avoid="status", attempt=attempt)
                    emit(os.path.join("escaped_keys", "tools_%04d.py" % index), rng, frag, unit,
                         avoid="status")
                    break
                except RetryFile:
                    continue
            else:
                raise AssertionError("could not write a file without 'status'")
            index += 1
    manifest["findings"].sort(key=finding_order)
    manifest["suppressed"].sort(key=finding_order)
    manifest["expected_findings"] = len(manifest["findings"])
    with open(os.path.join(outdir, "manifest.json"), "w", encoding="utf-8") as fh:
        json.dump(manifest, fh, indent=0)
        fh.write("\n")
    return manifest


def verify(outdir, manifest):
    """Run scan.py's logic over outdir and compare with the manifest."""
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, here)
    sys.dont_write_bytecode = True  # leave no __pycache__ in the source tree
    import scan  # noqa: E402

    warnings.simplefilter("ignore")
    stats = {"dicts": 0, "shaped": 0, "suppressed": 0}
    got = []
    for path in scan.iter_source_files(outdir, False):
        with open(path, "rb") as fh:
            data = fh.read()
        for f in scan.scan_source(path, data, stats):
            f["path"] = os.path.relpath(f["path"], outdir).replace(os.sep, "/")
            got.append(f)

    def tup(f):
        return (f["path"], f["dict_line"], f["dict_column"], f["code"], f["key"] or "", f["key"] is None,
                f["line"], f["column"], f["end_line"], f["end_column"])

    want = sorted(tup(f) for f in manifest["findings"])
    got = sorted(tup(f) for f in got)
    ok = True
    if want != got:
        ok = False
        from collections import Counter
        cw, cg = Counter(want), Counter(got)
        missing = list((cw - cg).elements())[:20]
        extra = list((cg - cw).elements())[:20]
        sys.stderr.write("verify: MISMATCH\n  expected but not scanned: %s\n  scanned but not expected: %s\n"
                         % (missing, extra))
    if stats["shaped"] != manifest["shaped_dicts"]:
        ok = False
        sys.stderr.write("verify: shaped dicts: scan.py %d, generator %d\n" % (stats["shaped"], manifest["shaped_dicts"]))
    if stats["suppressed"] != manifest["suppressed_findings"]:
        ok = False
        sys.stderr.write("verify: suppressed findings: scan.py %d, generator %d\n"
                         % (stats["suppressed"], manifest["suppressed_findings"]))
    if ok:
        sys.stderr.write("verify: OK (%d findings, %d suppressed, %d shaped dicts, %d dicts)\n"
                         % (len(got), stats["suppressed"], stats["shaped"], stats["dicts"]))
    return ok


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("outdir")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--dicts", type=int, default=5000, help="minimum number of shaped dicts")
    ap.add_argument("--per-file", type=int, default=50, help="shaped dicts per file (about)")
    ap.add_argument("--escaped-files", type=int, default=4,
                    help="extra files in escaped_keys/ that never contain the bytes 'status'")
    ap.add_argument("--verify", action="store_true", help="cross-check with scan.py")
    args = ap.parse_args(argv)
    m = write_corpus(args.outdir, args.seed, args.dicts, max(1, args.per_file), max(0, args.escaped_files))
    summary = {k: m[k] for k in ("seed", "files", "shaped_dicts", "expected_findings", "TS001", "TS002",
                                 "suppressed_findings", "line_endings", "indent", "bom",
                                 "suppression_sites", "continuation_traps")}
    summary["no_status_bytes_files"] = len(m["no_status_bytes_files"])
    sys.stdout.write(json.dumps(summary) + "\n")
    if args.verify and not verify(args.outdir, m):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
