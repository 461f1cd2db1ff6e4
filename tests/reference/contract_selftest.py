#!/usr/bin/env python3
"""Self-test of scan.py's TS005-TS009 (docs/rules.md "The rest of the
contract: TS005–TS009", with "Legacy Python 2 files").

Usage:
    python3 tests/reference/contract_selftest.py [--keep DIR] [--no-mutants]

Writes small projects into a temporary folder, runs scan.py (its CLI) over
each and compares the TS005-TS009 findings it reports, exactly (code, key,
dict position, span), with the ones written down here, and the number of
suppressed findings (--stats) with the one expected:

* TS005: every tool decorator spelling (`@tool`, `@tool(...)`,
  `@strands.tool`, `@strands.tools.tool`, spaced dotted names, `async def`,
  methods, a tool nested in a function) next to decoys (`@mcp.tool`,
  `@other.tool`, `@tools.tool`, `@strands.tool.extra`, undecorated); returns
  in nested defs, lambdas, classes and comprehensions of a tool (not its
  own); half-shaped displays (status only, content only, keys in any
  constant spelling, duplicates) next to full, spread, neither, f-string and
  bytes keys; returns through a name with every allowed use (`return N` also
  in a nested def, `N[...]` loads, `N.get(...)`, a nested scope's own `N`,
  two display bindings) and each disqualifying one (a store, `del`, an
  augmented store of `N[...]`, `N.update`, `N.setdefault`, `N.get` not
  called, `N` passed on, aliased or iterated, a rebinding to a non-display,
  `|=`, annotated, chained, walrus, `for`, parameter, `nonlocal` rebinding,
  a global); calls of helpers in the same module, `from .m import h`,
  `from pkg.m import h as alias`, `import pkg.m as m` + `m.h()`,
  `from pkg import m` + `m.h()`, those imports written inside the tool or a
  function enclosing it (bound there once: docs/rules.md "**Imports inside a
  function**"), re-exports through `__init__.py`,
  `self._err()` / `cls._err()`, chains, a recursion cycle, a helper reached
  by several tools (one finding), an awaited call, returns that are no calls (
  `h() if c else None`), unresolvable callees (a name bound twice, at
  module level or inside the tool (`try` / `except ImportError`), a name
  imported in a class body and called in its method,
  `pkg.m.h()`, a nested def, `Class.method()`, a subclass's `self.m()` of an
  inherited method, an unknown module), and the paths-given rule (a helper
  file scanned alone still gets the findings its project's tools reach);
* TS006: every status spelling (concatenated, prefixed, escaped,
  parenthesised key and value, multi-line), the contract ones, non-constant
  ones (f-string, bytes, name, conditional), duplicates, unshaped dicts;
* TS007: every content kind (string, f-string, bytes, concatenation,
  numbers, signed numbers, bools, None, dict, set, tuples, `[]`) and the
  kinds that are not judged (list display, name, call, comprehension,
  `[*x]`, dict comprehension, `...`, `-(-1)`, `~1`), duplicates;
* TS008: exact one block type, none, two, extra keys (`"type": "text"`),
  spreads, non-constant keys, starred / non-dict / nested elements,
  parenthesised blocks and content lists, multi-line blocks, the last
  "content" entry only, non-ASCII keys;
* TS009: every text kind, each builtin call, non-builtin calls (`str()`,
  `len.x()`, `x.len()`, `max()`), the builtin names bound somewhere in the
  file (assignment, def, class, import, parameter, lambda parameter, `for`
  and comprehension targets, `except`, `with`, walrus, `del`, in any scope)
  and not bound (`global` alone, an attribute, a star import);
* suppression comments of every form on the right lines (the line where
  the span starts, the dict's `{` line) and the wrong ones (the end of a
  multi-line span, another entry's line, the tool's `def`), comments in
  strings;
* legacy Python 2 files (print / exec statements, backticks, `0755`,
  `ur""`, `<>`) holding violating displays, tools and helpers: nothing;
* the configuration: --status, --block-type, --tool-decorator replace the
  defaults; --ignore switches each new code off.

Positions are not written by hand: a line carries a tag comment (`# @t1`)
and an expected finding names the tag and the exact text of its span on
that line (or a start and an end tag for a multi-line span).

Then (unless --no-mutants) scan.py is run in-process with parts of the new
rules broken on purpose, and each break must make this test fail (the
checks can fail).

Exit status 0 when everything matches, 1 otherwise.
"""

import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SCAN = os.path.join(HERE, "scan.py")
CODES = ("TS005", "TS006", "TS007", "TS008", "TS009")


class E:
    """An expected finding: ``code`` with ``key`` whose span is ``span`` on
    the line of ``tag`` in ``rel``: a text (found once on the line), or
    (start text, end tag, end text): from the start text on the tag's line
    to after the end text on the end tag's line.  ``dict`` is (tag, text)
    whose first character is the dict's ``{``; by default the span's start
    for TS005 and the first ``{`` of the tag's line for the others."""

    def __init__(self, rel, tag, code, key, span, dict=None):
        self.rel, self.tag, self.code, self.key, self.span, self.dict = rel, tag, code, key, span, dict


# --------------------------------------------------------------------------
# TS005: tool functions and their returned displays

TOOLS_PY = '''\
import mcp
import strands
from strands import tool


@tool
def t_bare(x):
    return {"status": "error"}  # @bare


@tool(name="x", description="y")
def t_call(x):
    return {"content": [{"text": x}]}  # @call


@strands.tool
def t_dotted(x):
    return {"status": x}  # @dotted


@strands.tools.tool(name="z")
async def t_async(x):
    return {"status": "error", "detail": x}  # @async


@strands . tools . tool
def t_spaced(x):
    return ({"status": "error"})  # @paren


@mcp.tool
def d_mcp(x):
    return {"status": "error"}  # @d1


@other.tool
def d_other(x):
    return {"content": []}  # @d2


@tools.tool
def d_tools(x):
    return {"status": "error"}  # @d3


@strands.tool.extra
def d_attr(x):
    return {"status": "error"}  # @d4


@tool.extra()
def d_attr_call(x):
    return {"status": "error"}  # @d5


def d_plain(x):
    return {"status": "error"}  # @d6


@tool
def t_nested(x):
    def inner():
        return {"status": "error"}  # @n1
    f = lambda: {"status": "error"}  # @n2

    class Inner:
        def m(self):
            return {"content": []}  # @n3
    g = [{"status": "error"} for _ in x]  # @n4
    return {"status": "success", "content": [{"text": "x"}]}  # @full


@tool
def t_kinds(x):
    if x == 1:
        return {"status": "error", **x}  # @spread
    if x == 2:
        return {"status": "error", "content": x, "extra": 1}  # @shaped
    if x == 3:
        return {"message": "no keys"}  # @neither
    if x == 4:
        return {"status": "error", "status": "again"}  # @dup
    if x == 5:
        return {"st" "atus": "error", 1: "content"}  # @concat
    if x == 6:
        return {f"content": 1, "status": "error"}  # @fkey
    if x == 7:
        return {b"content": 1, "status": "error"}  # @bkey
    if x == 8:
        return {"con\\x74ent": [], "x": 1}  # @esc
    if x == 9:
        return {}  # @empty
    if x == 10:
        return {  # @ml0
            "status": "error",
            "detail": x,
        }  # @ml1
    return None


def outer():
    @tool
    def deep(x):
        return {"status": "error"}  # @deep
    return deep


class Box:
    @tool
    def method(self, x):
        return {"content": [{"text": "x"}]}  # @method

    @staticmethod
    @strands.tool
    def smethod(x):
        return {"status": "error"}  # @smethod
'''

TD = "pkg/tools.py"
TOOLS_EXPECT = [
    E(TD, "bare", "TS005", "content", '{"status": "error"}'),
    E(TD, "call", "TS005", "status", '{"content": [{"text": x}]}'),
    E(TD, "dotted", "TS005", "content", '{"status": x}'),
    E(TD, "async", "TS005", "content", '{"status": "error", "detail": x}'),
    E(TD, "paren", "TS005", "content", '{"status": "error"}'),
    E(TD, "dup", "TS005", "content", '{"status": "error", "status": "again"}'),
    E(TD, "concat", "TS005", "content", '{"st" "atus": "error", 1: "content"}'),
    E(TD, "fkey", "TS005", "content", '{f"content": 1, "status": "error"}'),
    E(TD, "bkey", "TS005", "content", '{b"content": 1, "status": "error"}'),
    E(TD, "esc", "TS005", "status", '{"con\\x74ent": [], "x": 1}'),
    E(TD, "ml0", "TS005", "content", ("{", "ml1", "}")),
    E(TD, "deep", "TS005", "content", '{"status": "error"}'),
    E(TD, "method", "TS005", "status", '{"content": [{"text": "x"}]}'),
    E(TD, "smethod", "TS005", "content", '{"status": "error"}'),
]
TOOLS_FILES = {"pyproject.toml": "", "pkg/__init__.py": "", TD: TOOLS_PY}
# --tool-decorator mcp.tool --tool-decorator other.tool --tool-decorator tool.extra:
# only those are tools now (the list replaces the default one)
TOOLS_CONFIG_EXPECT = [
    E(TD, "d1", "TS005", "content", '{"status": "error"}'),
    E(TD, "d2", "TS005", "status", '{"content": []}'),
    E(TD, "d5", "TS005", "content", '{"status": "error"}'),
]

NAMES_PY = '''\
from strands import tool

R = {"status": "error"}  # @glob


def sink(v):
    return v


def make():
    return None


@tool
def allowed(x):
    r = {"status": "error"}  # @allowed
    print(r["status"], r.get("status"), (r)["x"], r.get("x", 1).strip())
    r["content"].append({"text": "x"})

    def later():
        return r
    if x:
        return r
    return (r)


@tool
def two(x):
    if x:
        r = {"status": "error"}  # @two1
    else:
        r = {"content": [{"text": "x"}]}  # @two2
    return r


@tool
def own_nested(x):
    r = {"status": "error"}  # @own

    def helper(r=None):
        return r

    def other():
        r = 5
        return r
    g = lambda r: r
    c = [r for r in x]
    return r


@tool
def full_name(x):
    r = {"status": "error", "content": [{"text": "x"}]}
    return r


@tool
def q_store(x):
    r = {"status": "error"}  # @q1
    r["content"] = []
    return r


@tool
def q_del(x):
    r = {"status": "error", "extra": 1}  # @q2
    del r["extra"]
    return r


@tool
def q_update(x):
    r = {"status": "error"}  # @q3
    r.update(content=[])
    return r


@tool
def q_passed(x):
    r = {"status": "error"}  # @q4
    sink(r)
    return r


@tool
def q_rebound(x):
    r = {"status": "error"}  # @q5
    if x:
        r = make()
    return r


@tool
def q_aug(x):
    r = {"status": "error"}  # @q6
    r |= {"content": []}
    return r


@tool
def q_ann(x):
    r: dict = {"status": "error"}  # @q7
    return r


@tool
def q_chain(x):
    a = r = {"status": "error"}  # @q8
    return r


@tool
def q_getattr(x):
    r = {"status": "error"}  # @q9
    g = r.get
    return r


@tool
def q_setdefault(x):
    r = {"status": "error"}  # @q10
    r.setdefault("content", [])
    return r


@tool
def q_subaug(x):
    r = {"status": "error", "n": 1}  # @q11
    r["n"] += 1
    return r


@tool
def q_nested_store(x):
    r = {"status": "error"}  # @q12

    def fill():
        r["content"] = []
    fill()
    return r


@tool
def q_param(r):
    r = {"status": "error"}  # @q13
    return r


@tool
def q_for(x):
    for r in x:
        pass
    r = {"status": "error"}  # @q14
    return r


@tool
def q_alias(x):
    r = {"status": "error"}  # @q15
    s = r
    return r


@tool
def q_iter(x):
    r = {"status": "error"}  # @q16
    for k in r:
        pass
    return r


@tool
def q_nonlocal(x):
    r = {"status": "error"}  # @q17

    def reset():
        nonlocal r
        r = None
    return r


@tool
def q_walrus(x):
    r = {"status": "error"}  # @q18
    if (r := {"status": "error"}):  # @q18b
        pass
    return r


@tool
def q_notdisplay(x):
    r = dict(status="error")
    return r


@tool
def q_global(x):
    return R


@tool
def q_call_on_item(x):
    r = {"status": "error"}  # @q19
    r.items()
    return r


@tool
def q_in(x):
    r = {"status": "error"}  # @q20
    if "status" in r:
        pass
    return r


@tool
def q_attr_return(x):
    r = {"status": "error"}  # @q21
    return r.copy()


@tool
def q_nonlocal_display(x):
    r = {"status": "error"}  # @nl1

    def reset():
        nonlocal r
        r = {"content": []}  # @nl2
    return r
'''

ND = "pkg/names.py"
NAMES_EXPECT = [
    E(ND, "allowed", "TS005", "content", '{"status": "error"}'),
    E(ND, "two1", "TS005", "content", '{"status": "error"}'),
    E(ND, "two2", "TS005", "status", '{"content": [{"text": "x"}]}'),
    E(ND, "own", "TS005", "content", '{"status": "error"}'),
    E(ND, "nl1", "TS005", "content", '{"status": "error"}'),
    E(ND, "nl2", "TS005", "status", '{"content": []}'),
]
NAMES_FILES = {"pyproject.toml": "", "pkg/__init__.py": "", ND: NAMES_PY}

CALLS_INIT = '''\
from .helpers import reexported as again
'''

CALLS_HELPERS = '''\
def err(msg):
    return {"status": "error", "message": msg}  # @h_err


def degraded(msg):
    r = {"status": "degraded"}  # @h_name
    return r


def chain(msg):
    return err2(msg)


def err2(msg):
    return {"content": [{"text": msg}]}  # @h_err2


def ping(n):
    return pong(n)


def pong(n):
    if n:
        return ping(n - 1)
    return {"status": "error", "n": n}  # @h_cycle


def unreached():
    return {"status": "error"}  # @h_unreached


def twice():
    return {"status": "error"}  # @h_twice


def twice():
    return {"status": "error"}  # @h_twice2


def shared():
    return {"status": "error"}  # @h_shared


def full():
    return {"status": "error", "content": [{"text": "x"}]}


def reexported():
    return {"status": "error"}  # @h_re


def dotted():
    return {"status": "error"}  # @h_dotted


def awaited(msg):
    return {"status": "error"}  # @h_awaited


def cond(msg):
    return {"status": "error"}  # @h_cond


def local_err():
    return {"status": "error"}  # @h_local


def local_mod():
    return {"content": []}  # @h_local_mod


def local_outer():
    return {"status": "error"}  # @h_local_outer


def local_twice():
    return {"status": "error"}  # @h_local_twice


def local_class():
    return {"status": "error"}  # @h_local_class


class Base:
    def _err(self, m):
        return {"status": "error"}  # @c_err

    @classmethod
    def _cerr(cls, m):
        return {"content": []}  # @c_cerr

    def _inherited(self):
        return {"status": "error"}  # @c_inherited

    def _unused(self):
        return {"status": "error"}  # @c_unused

    def run(self):
        return {"status": "error"}  # @c_notool
'''

CALLS_MORE = '''\
def far():
    return {"status": "error"}  # @m_far


def via_name():
    r = {"content": []}  # @m_name
    return r
'''

CALLS_TOOLS = '''\
from strands import tool
from .helpers import err, chain, ping, twice, full, Base, awaited, cond
from pkg.helpers import degraded as deg
from pkg import again
from pkg import helpers
import pkg.more as more
import pkg.helpers
from .nowhere import ghost


@tool
def t1(x):
    if x == 1:
        return err(x)
    if x == 2:
        return deg(x)
    if x == 3:
        return chain(x)
    if x == 4:
        return ping(x)
    if x == 5:
        return twice()
    if x == 6:
        return more.far()
    if x == 7:
        return ghost(x)
    if x == 8:
        return pkg.helpers.dotted()
    if x == 9:
        return full()
    if x == 10:
        return (helpers.shared())
    if x == 11:
        return Base._unused(None)
    if x == 12:
        return more.via_name()
    return again()


@tool
def t2(x):
    if x:
        return helpers.shared()
    return err(x)


@tool
async def t_await(x):
    # an awaited call is followed; a conditional expression is no call
    if x:
        return await awaited(x)
    return cond(x) if x else None


@tool
def t_local(x):
    def local():
        return {"status": "error"}  # @local
    return local()


def not_a_tool(x):
    return helpers.unreached()


@tool
def t_imports(x):
    # imports inside the tool, bound there once: followed as module-level ones
    from .helpers import local_err
    import pkg.helpers as hm
    if x:
        return local_err()
    return hm.local_mod()


def make_tool():
    from pkg import helpers as hh

    @tool
    def t_enclosing(x):
        return hh.local_outer()
    return t_enclosing


@tool
def t_import_twice(x):
    try:
        from .helpers import local_twice
    except ImportError:
        local_twice = None
    return local_twice()


class ToolBox:
    from .helpers import local_class

    @tool
    def run3(self, x):
        return local_class()


class Tools:
    def _err(self, m):
        return {"status": "error"}  # @k_err

    @classmethod
    def _cerr(cls, m):
        return {"content": []}  # @k_cerr

    @tool
    def run(self, x):
        if x:
            return self._err(x)
        return self.missing()

    @classmethod
    @tool
    def crun(cls, x):
        return cls._cerr(x)


class Child(Base):
    @tool
    def run2(self):
        return self._inherited()
'''

HD = "pkg/helpers.py"
MD = "pkg/more.py"
CALLS_FILES = {"pyproject.toml": "", "pkg/__init__.py": CALLS_INIT, HD: CALLS_HELPERS, MD: CALLS_MORE,
               "pkg/tools.py": CALLS_TOOLS}
CALLS_HELPERS_EXPECT = [
    E(HD, "h_err", "TS005", "content", '{"status": "error", "message": msg}'),
    E(HD, "h_name", "TS005", "content", '{"status": "degraded"}'),
    E(HD, "h_err2", "TS005", "status", '{"content": [{"text": msg}]}'),
    E(HD, "h_cycle", "TS005", "content", '{"status": "error", "n": n}'),
    E(HD, "h_shared", "TS005", "content", '{"status": "error"}'),
    E(HD, "h_re", "TS005", "content", '{"status": "error"}'),
    E(HD, "h_awaited", "TS005", "content", '{"status": "error"}'),
    E(HD, "h_local", "TS005", "content", '{"status": "error"}'),
    E(HD, "h_local_mod", "TS005", "status", '{"content": []}'),
    E(HD, "h_local_outer", "TS005", "content", '{"status": "error"}'),
]
CALLS_EXPECT = CALLS_HELPERS_EXPECT + [
    E(MD, "m_far", "TS005", "content", '{"status": "error"}'),
    E(MD, "m_name", "TS005", "status", '{"content": []}'),
    E("pkg/tools.py", "k_err", "TS005", "content", '{"status": "error"}'),
    E("pkg/tools.py", "k_cerr", "TS005", "status", '{"content": []}'),
]
# --------------------------------------------------------------------------
# TS006: status

STATUS_PY = '''\
def statuses(x, code, c):
    return [
        {"status": "ok", "content": c},  # @s_ok
        {"status": "failed", "content": c},  # @s_failed
        {"status": "success", "content": c},  # @s_success
        {"status": "error", "content": c},  # @s_error
        {"status": "degraded", "content": c},  # @s_degraded
        {"status": "succ" "ess", "content": c},  # @s_concat_ok
        {"status": "o" "k", "content": c},  # @s_concat
        {"status": ("ok"), "content": c},  # @s_paren
        {(("status")): "ok", "content": c},  # @s_keyparen
        {"status": u"ok", "content": c},  # @s_u
        {"status": r"ok", "content": c},  # @s_r
        {"status": "\\x6fk", "content": c},  # @s_esc
        {"status": "Success", "content": c},  # @s_case
        {"status": "done", "content": c},  # @s_done
        {"status": f"ok", "content": c},  # @s_f
        {"status": b"ok", "content": c},  # @s_b
        {"status": code, "content": c},  # @s_name
        {"status": "ok" if x else "error", "content": c},  # @s_cond
        {"status": "ok", "content": c, "status": "fine"},  # @s_dup
        {"status": "ok"},  # @s_unshaped
        {"st" "atus": "ok", "con" "tent": c},  # @s_keyconcat
        {"status": "", "content": c},  # @s_empty
        {  # @s_ml0
            "status": (  # @s_ml1
                "ok"
            ),  # @s_ml2
            "content": c,
        },
    ]
'''

SD = "status.py"
STATUS_EXPECT = [
    E(SD, "s_ok", "TS006", "status", '"status": "ok"'),
    E(SD, "s_failed", "TS006", "status", '"status": "failed"'),
    E(SD, "s_concat", "TS006", "status", '"status": "o" "k"'),
    E(SD, "s_paren", "TS006", "status", '"status": ("ok")'),
    E(SD, "s_keyparen", "TS006", "status", '(("status")): "ok"'),
    E(SD, "s_u", "TS006", "status", '"status": u"ok"'),
    E(SD, "s_r", "TS006", "status", '"status": r"ok"'),
    E(SD, "s_esc", "TS006", "status", '"status": "\\x6fk"'),
    E(SD, "s_case", "TS006", "status", '"status": "Success"'),
    E(SD, "s_done", "TS006", "status", '"status": "done"'),
    E(SD, "s_dup", "TS006", "status", '"status": "ok"'),
    E(SD, "s_dup", "TS006", "status", '"status": "fine"'),
    E(SD, "s_keyconcat", "TS006", "status", '"st" "atus": "ok"'),
    E(SD, "s_empty", "TS006", "status", '"status": ""'),
    E(SD, "s_ml1", "TS006", "status", ('"status"', "s_ml2", ")"), dict=("s_ml0", "{")),
]
STATUS_FILES = {"pyproject.toml": "", SD: STATUS_PY}
# --status ok --status done: the statuses are exactly those two now
_CONFIGURED_OK = {"s_ok", "s_concat", "s_paren", "s_keyparen", "s_u", "s_r", "s_esc", "s_done", "s_ml1",
                  "s_keyconcat"}
STATUS_CONFIG_EXPECT = [e for e in STATUS_EXPECT if e.tag not in _CONFIGURED_OK
                        and not (e.tag == "s_dup" and e.span == '"status": "ok"')] + [
    E(SD, "s_success", "TS006", "status", '"status": "success"'),
    E(SD, "s_error", "TS006", "status", '"status": "error"'),
    E(SD, "s_degraded", "TS006", "status", '"status": "degraded"'),
    E(SD, "s_concat_ok", "TS006", "status", '"status": "succ" "ess"'),
]

# --------------------------------------------------------------------------
# TS007: content

CONTENT_LINES = [
    # (tag, content value text, kind or None)
    ("c_str", '"text"', "a string"),
    ("c_f", 'f"t{x}"', "a string"),
    ("c_b", 'b"raw"', "a string"),
    ("c_concat", '"a" "b"', "a string"),
    ("c_paren", '("par")', "a string"),
    ("c_int", "3", "a number"),
    ("c_float", "2.5", "a number"),
    ("c_imag", "1j", "a number"),
    ("c_neg", "-1", "a number"),
    ("c_pos", "+2.5", "a number"),
    ("c_negparen", "-(1)", "a number"),
    ("c_hex", "0x1F", "a number"),
    ("c_true", "True", "a bool"),
    ("c_false", "False", "a bool"),
    ("c_none", "None", "None"),
    ("c_dict", '{"text": x}', "a dict"),
    ("c_emptydict", "{}", "a dict"),
    ("c_set", "{x}", "a set"),
    ("c_unit", "()", "a tuple"),
    ("c_single", "(x,)", "a tuple"),
    ("c_pair", "({}, {})", "a tuple"),
    ("c_empty", "[]", "an empty list"),
    ("c_emptyparen", "([])", "an empty list"),
    ("c_list", '[{"text": x}]', None),
    ("c_name", "x", None),
    ("c_call", "make(x)", None),
    ("c_comp", "[b for b in x]", None),
    ("c_starred", "[*x]", None),
    ("c_dictcomp", "{k: v for k, v in x}", None),
    ("c_setcomp", "{v for v in x}", None),
    ("c_ellipsis", "...", None),
    ("c_negneg", "-(-1)", None),
    ("c_invert", "~1", None),
    ("c_negname", "-x", None),
    ("c_negbool", "-True", None),
    ("c_cond", "[] if x else x", None),
    ("c_sum", '"a" + "b"', None),
    ("c_listcall", "list()", None),
]

CONTENT_PY = "def content(x, make):\n    return [\n" + "".join(
    '        {"status": "error", "content": %s},  # @%s\n' % (v, t) for t, v, _ in CONTENT_LINES) + '''\
        {"status": "error", "content": "a", "content": []},  # @c_dup
        {"content": "a"},  # @c_unshaped
        {"status": "error", "con" "tent": 1},  # @c_keyconcat
        {"status": "error", ("content"): ("x")},  # @c_keyparen
    ]
'''
CD = "content.py"
CONTENT_EXPECT = [E(CD, t, "TS007", "content", '"content": %s' % v) for t, v, kind in CONTENT_LINES if kind] + [
    E(CD, "c_dup", "TS007", "content", '"content": "a"'),
    E(CD, "c_dup", "TS007", "content", '"content": []'),
    E(CD, "c_keyconcat", "TS007", "content", '"con" "tent": 1'),
    E(CD, "c_keyparen", "TS007", "content", '("content"): ("x")'),
]
CONTENT_FILES = {"pyproject.toml": "", CD: CONTENT_PY}

# --------------------------------------------------------------------------
# TS008: blocks

BLOCKS_PY = '''\
def blocks(x, k, make, blocks):
    return [
        {"status": "success", "content": [{"text": "a"}]},  # @b_text
        {"status": "success", "content": [{"json": {}}, {"image": x}, {"document": x}, {"video": x}]},  # @b_types
        {"status": "success", "content": [{}]},  # @b_empty
        {"status": "success", "content": [{"type": "text"}]},  # @b_none
        {"status": "success", "content": [{"text": "a", "json": {}}]},  # @b_two
        {"status": "success", "content": [{"text": "a", "type": "text"}]},  # @b_other
        {"status": "success", "content": [{"text": "a", "text": "b"}]},  # @b_duptext
        {"status": "success", "content": [{"text": "a", **x}]},  # @b_spread
        {"status": "success", "content": [{"type": "a", **x}]},  # @b_spread2
        {"status": "success", "content": [{"type": "a", k: 1}]},  # @b_namekey
        {"status": "success", "content": [{"type": "a", 1: 2}]},  # @b_numkey
        {"status": "success", "content": [{"type": "a", f"k": 1}]},  # @b_fkey
        {"status": "success", "content": [{"type": "a", None: 1}]},  # @b_nonekey
        {"status": "success", "content": [{"type": "a", b"k": 1}]},  # @b_byteskey
        {"status": "success", "content": [({"type": "x"})]},  # @b_paren
        {"status": "success", "content": [*blocks, {"kind": 1}]},  # @b_starred
        {"status": "success", "content": [make(), x, "s", {"toolUse": 1}]},  # @b_mixed
        {"status": "success", "content": [[{"type": 1}]]},  # @b_nested
        {"status": "success", "content": ({"type": 1},)},  # @b_tuple
        {"status": "success", "content": [{"x": 1}], "content": [{"text": "y"}]},  # @b_firstcontent
        {"status": "success", "content": [{"text": "y"}], "content": [{"x": 1}]},  # @b_lastcontent
        {"status": "success", "content": ([{"bad": 1}])},  # @b_parenlist
        {"status": "success", "content": [{"tëxt": "ü"}, {"text": "ß"}]},  # @b_unicode
        {"status": "success", "content": [{"te" "xt": "a"}, {"Text": "a"}]},  # @b_spelling
        {"status": "success", "content": [{"text": "a", "image": x, "json": 1}]},  # @b_three
        {"content": [{"bad": 1}]},  # @b_unshaped
        {"status": "success", "content": [{"json": {"bad": 1}}]},  # @b_inner
        {"status": "success", "content": [  # @b_ml0
            {  # @b_ml1
                "type": "text",
            },  # @b_ml2
        ]},
    ]
'''
BD = "blocks.py"
BLOCKS_EXPECT = [
    E(BD, "b_empty", "TS008", None, "{}", dict=("b_empty", '{"status"')),
    E(BD, "b_none", "TS008", None, '{"type": "text"}'),
    E(BD, "b_two", "TS008", None, '{"text": "a", "json": {}}'),
    E(BD, "b_other", "TS008", None, '{"text": "a", "type": "text"}'),
    E(BD, "b_paren", "TS008", None, '{"type": "x"}'),
    E(BD, "b_starred", "TS008", None, '{"kind": 1}'),
    E(BD, "b_mixed", "TS008", None, '{"toolUse": 1}'),
    E(BD, "b_lastcontent", "TS008", None, '{"x": 1}'),
    E(BD, "b_parenlist", "TS008", None, '{"bad": 1}'),
    E(BD, "b_unicode", "TS008", None, '{"tëxt": "ü"}'),
    E(BD, "b_spelling", "TS008", None, '{"Text": "a"}'),
    E(BD, "b_three", "TS008", None, '{"text": "a", "image": x, "json": 1}'),
    E(BD, "b_ml1", "TS008", None, ("{", "b_ml2", "}"), dict=("b_ml0", "{")),
    E(BD, "b_tuple", "TS007", "content", '"content": ({"type": 1},)'),
]
BLOCKS_FILES = {"pyproject.toml": "", BD: BLOCKS_PY}
# --block-type text --block-type toolUse: the block types are exactly those two now
BLOCKS_CONFIG_EXPECT = [e for e in BLOCKS_EXPECT if e.tag != "b_mixed"] + [
    E(BD, "b_types", "TS008", None, '{"json": {}}'),
    E(BD, "b_types", "TS008", None, '{"image": x}'),
    E(BD, "b_types", "TS008", None, '{"document": x}'),
    E(BD, "b_types", "TS008", None, '{"video": x}'),
    E(BD, "b_inner", "TS008", None, '{"json": {"bad": 1}}'),
]

# --------------------------------------------------------------------------
# TS009: text values

TEXT_LINES = [
    ("t_int", "1", True), ("t_float", "1.5", True), ("t_neg", "-1", True), ("t_pos", "+1j", True),
    ("t_true", "True", True), ("t_false", "False", True), ("t_emptylist", "[]", True), ("t_list", "[x]", True),
    ("t_emptydict", "{}", True), ("t_dict", '{"a": 1}', True), ("t_set", "{x}", True), ("t_paren", "(1)", True),
    ("t_len", "len(x)", True), ("t_intcall", "int(x)", True), ("t_floatcall", "float(x)", True),
    ("t_sum", "sum(x)", True), ("t_round", "round(x, 2)", True), ("t_dictcall", "dict(a=1)", True),
    ("t_listcall", "list(x)", True), ("t_lenparen", "(len)(x)", True),
    ("t_str", "str(x)", False), ("t_lenattr", "len.x()", False), ("t_method", "x.len()", False),
    ("t_max", "max(x)", False), ("t_repr", "repr(x)", False), ("t_string", '"s"', False),
    ("t_fstring", 'f"{x}"', False), ("t_none", "None", False), ("t_tuple", "(1, 2)", False),
    ("t_bytes", 'b"x"', False), ("t_name", "x", False), ("t_negname", "-x", False),
    ("t_comp", "[v for v in x]", False), ("t_callcall", "len(x)()", False), ("t_ellipsis", "...", False),
]

TEXT_PY = "def texts(x):\n    return [\n" + "".join(
    '        {"status": "success", "content": [{"text": %s}]},  # @%s\n' % (v, t) for t, v, _ in TEXT_LINES) + '''\
        {"status": "success", "content": [{"text": 1, "type": "t"}]},  # @t_extra
        {"status": "success", "content": [{"text": 1, **x}]},  # @t_spread
        {"status": "success", "content": [{"text": 1, "text": [2]}]},  # @t_dup
        {"status": "success", "content": [{"te" "xt": 1}]},  # @t_concat
        {"status": "success", "content": [{"json": {"text": 1}}]},  # @t_nested
        {"status": "success", "content": [{"Text": 1}]},  # @t_case
        {"status": "success", "content": [{"text": "a"}], "content": [{"text": 2}]},  # @t_last
        {"status": "success", "content": [{"text": 2}], "content": [{"text": "a"}]},  # @t_first
        [{"text": 1}],  # @t_unshaped
    ]
'''
XD = "text.py"
TEXT_EXPECT = [E(XD, t, "TS009", "text", '"text": %s' % v) for t, v, hit in TEXT_LINES if hit] + [
    E(XD, "t_extra", "TS009", "text", '"text": 1'),
    E(XD, "t_extra", "TS008", None, '{"text": 1, "type": "t"}'),
    E(XD, "t_spread", "TS009", "text", '"text": 1'),
    E(XD, "t_dup", "TS009", "text", '"text": 1'),
    E(XD, "t_dup", "TS009", "text", '"text": [2]'),
    E(XD, "t_concat", "TS009", "text", '"te" "xt": 1'),
    E(XD, "t_case", "TS008", None, '{"Text": 1}'),
    E(XD, "t_last", "TS009", "text", '"text": 2'),
]
TEXT_FILES = {"pyproject.toml": "", XD: TEXT_PY}

# each file binds some of the builtin names somewhere (or only seems to):
# (file, code binding them, the names bound)
CALL_NAMES = ("len", "int", "float", "sum", "round", "dict", "list")
SHADOWS = [
    ("sh_assign.py", "len = None\n", {"len"}),
    ("sh_def.py", "def outer():\n    def sum():\n        pass\n", {"sum"}),
    ("sh_class.py", "class K:\n    class float:\n        pass\n", {"float"}),
    ("sh_import.py", "def f():\n    from math import floor as round\n    import json as dict\n", {"round", "dict"}),
    ("sh_importdotted.py", "import list.sub\n", {"list"}),
    ("sh_param.py", "def f(a, *int, **sum):\n    return a\n", {"int", "sum"}),
    ("sh_lambda.py", "g = lambda dict=1: dict\n", {"dict"}),
    ("sh_for.py", "for len in range(3):\n    pass\nz = [0 for round in range(2)]\n", {"len", "round"}),
    ("sh_except.py", "try:\n    pass\nexcept Exception as int:\n    pass\n", {"int"}),
    ("sh_with.py", "with open('x') as float:\n    pass\n", {"float"}),
    ("sh_walrus.py", "if (sum := 3):\n    pass\n", {"sum"}),
    ("sh_del.py", "def f():\n    del list\n", {"list"}),
    ("sh_tuple.py", "(a, [len, *dict]) = (1, [2, 3])\n", {"len", "dict"}),
    ("sh_aug.py", "class C:\n    def m(self):\n        round += 1\n", {"round"}),
    ("sh_global.py", "def f():\n    global len, int\n    nonlocal_ = 1\n", set()),
    ("sh_attr.py", "import os\nos.len = 1\nos.sum = lambda: 0\nx = {}\nx['int'] = 1\n", set()),
    ("sh_star.py", "from os import *\n", set()),
    ("sh_match.py", "match 1:\n    case [float, *list]:\n        pass\n    case {**int}:\n        pass\n", {"float", "list", "int"}),
]


def shadow_file(code):
    body = "def texts(x):\n    return [\n" + "".join(
        '        {"status": "success", "content": [{"text": %s(x)}]},  # @%s\n' % (n, n) for n in CALL_NAMES) + "    ]\n"
    return body + code


SHADOW_FILES = {"pyproject.toml": ""}
SHADOW_EXPECT = []
for _rel, _code, _bound in SHADOWS:
    SHADOW_FILES[_rel] = shadow_file(_code)
    SHADOW_EXPECT.extend(E(_rel, n, "TS009", "text", '"text": %s(x)' % n) for n in CALL_NAMES if n not in _bound)
# --------------------------------------------------------------------------
# suppression comments

SUP_PY = '''\
from strands import tool


def f(x):
    a = {"status": "ok", "content": []}  # toolshape: ignore[TS006]  # @s1
    b = {"status": "ok", "content": []}  # noqa: TS007  # @s2
    c = {"status": "ok", "content": []}  # noqa  # @s3
    d = {"status": "ok", "content": []}  # toolshape: note  # @s4
    e = {"status": "ok", "content": []}  # noqa: E501  # @s5
    g = {  # toolshape: ignore  # @s6
        "status": "ok",
        "content": "x",
    }
    h = {  # @s7
        "status": "ok",  # toolshape: ignore[TS006]  # @s8
        "content": (  # @s9
            "x"
        ),  # noqa: TS007  # @s10
    }
    i = {"status": "success", "content": [  # @s11
        {"type": "x"},  # TOOLSHAPE: IGNORE[ts008]  # @s12
        {  # @s13
            "text": 5,  # noqa:TS009  # @s14
        },
        {"kind": 1,  # @s15
         "text": 5},  # noqa: TS008  # @s16
    ]}
    j = {"status": "error", "content": "# noqa"}  # @s21
    k = {"status": "ok", "content": []}  # toolshape: ignore[TS001, TS006]  # @s22
    l = {"status": "ok", "content": []}  # toolshape:ignore[TS006 TS007]  # @s23
    m = {"status": "ok", "content": [],  # @s24
         "x": 1}  # noqa: TS006  # @s25
    return a, b, c, d, e, g, h, i, j, k, l, m


@tool
def t(x):
    if x:
        return {"status": "error"}  # noqa: TS005  # @s17
    return {  # @s18
        "status": "error",  # toolshape: ignore[TS005]  # @s19
    }  # @s19b


@tool  # noqa
def t2(x):  # toolshape: ignore
    return {"status": "error"}  # @s20
'''
PD = "sup.py"
SUP_EXPECT = [
    E(PD, "s1", "TS007", "content", '"content": []'),
    E(PD, "s2", "TS006", "status", '"status": "ok"'),
    E(PD, "s4", "TS006", "status", '"status": "ok"'),
    E(PD, "s4", "TS007", "content", '"content": []'),
    E(PD, "s5", "TS006", "status", '"status": "ok"'),
    E(PD, "s5", "TS007", "content", '"content": []'),
    E(PD, "s9", "TS007", "content", ('"content"', "s10", ")"), dict=("s7", "{")),
    E(PD, "s15", "TS008", None, ("{", "s16", "5}"), dict=("s11", "{")),
    E(PD, "s16", "TS009", "text", '"text": 5', dict=("s11", "{")),
    E(PD, "s21", "TS007", "content", '"content": "# noqa"'),
    E(PD, "s22", "TS007", "content", '"content": []'),
    E(PD, "s24", "TS006", "status", '"status": "ok"'),
    # no TS007 at s24: "x" breaks TS001, whose fix fills the empty list
    E(PD, "s18", "TS005", "content", ("{", "s19b", "}")),
    E(PD, "s20", "TS005", "content", '{"status": "error"}'),
]
# the findings each code has silenced in sup.py
SUP_SUPPRESSED = {"TS005": 1, "TS006": 6, "TS007": 4, "TS008": 1, "TS009": 1}
SUP_FILES = {"pyproject.toml": "", PD: SUP_PY}

# --------------------------------------------------------------------------
# legacy Python 2 files: nothing from them, nothing through them

LEGACY_FILES = {
    "pyproject.toml": "",
    "py2_print.py": 'def f():\n    print "x"\n    return {"status": "ok", "content": "x"}\n',
    "py2_exec.py": 'code = "1"\nexec code\nR = {"status": "ok", "content": 1}\n',
    "py2_backtick.py": 'x = `1`\nR = {"status": "ok", "content": [{"text": 1}]}\n',
    "py2_octal.py": 'mode = 0755\nR = {"status": "ok", "content": [{"type": "x"}]}\n',
    "py2_ur.py": 's = ur"x"\nR = {"status": "fine", "content": ()}\n',
    "py2_ne.py": 'if 1 <> 2:\n    R = {"status": "ok", "content": None}\n',
    "py2_helpers.py": 'def err():\n    return {"status": "error"}\n\nprint "x"\n',
    "py2_tool.py": ('from strands import tool\nfrom good import helper\n\n\n@tool\ndef t(x):\n'
                    '    print x\n    return helper()\n'),
    "good.py": '''\
from strands import tool
import py2_helpers
from py2_helpers import err


def helper():
    return {"status": "error"}  # @g_helper


@tool
def t(x):
    if x:
        return err()
    return py2_helpers.err()


R = {"status": "ok", "content": []}  # @g_ok
''',
}
LEGACY_EXPECT = [
    E("good.py", "g_ok", "TS006", "status", '"status": "ok"'),
    E("good.py", "g_ok", "TS007", "content", '"content": []'),
]
LEGACY_SKIPPED = sorted(r for r in LEGACY_FILES if r.startswith("py2_"))


def drop(expect, codes):
    return [e for e in expect if e.code not in codes]


ALL = ("TS005", "TS006", "TS007", "TS008", "TS009")
# (name, files, extra scan.py arguments, paths, expected findings, suppressed, skipped files)
CASES = [
    ("tools", TOOLS_FILES, [], ["."], TOOLS_EXPECT, 0, []),
    ("tools_configured", TOOLS_FILES,
     ["--tool-decorator", "mcp.tool", "--tool-decorator", "other.tool", "--tool-decorator", "tool.extra"],
     ["."], TOOLS_CONFIG_EXPECT, 0, []),
    ("names", NAMES_FILES, [], ["."], NAMES_EXPECT, 0, []),
    ("calls", CALLS_FILES, [], ["."], CALLS_EXPECT, 0, []),
    ("calls_helpers_given", CALLS_FILES, [], [HD], CALLS_HELPERS_EXPECT, 0, []),
    ("status", STATUS_FILES, [], ["."], STATUS_EXPECT, 0, []),
    ("status_configured", STATUS_FILES, ["--status", "ok", "--status", "done"], ["."], STATUS_CONFIG_EXPECT, 0, []),
    ("content", CONTENT_FILES, [], ["."], CONTENT_EXPECT, 0, []),
    ("blocks", BLOCKS_FILES, [], ["."], BLOCKS_EXPECT, 0, []),
    ("blocks_configured", BLOCKS_FILES, ["--block-type", "text", "--block-type", "toolUse"], ["."],
     BLOCKS_CONFIG_EXPECT, 0, []),
    ("text", TEXT_FILES, [], ["."], TEXT_EXPECT, 0, []),
    ("shadowed", SHADOW_FILES, [], ["."], SHADOW_EXPECT, 0, []),
    ("suppressed", SUP_FILES, [], ["."], SUP_EXPECT, sum(SUP_SUPPRESSED.values()), []),
    ("ignore_5_6", SUP_FILES, ["--ignore", "TS005", "--ignore", "TS006"], ["."],
     drop(SUP_EXPECT, ("TS005", "TS006")), sum(v for c, v in SUP_SUPPRESSED.items() if c not in ("TS005", "TS006")),
     []),
    ("ignore_7_8_9", SUP_FILES, ["--ignore", "TS007", "--ignore", "TS008", "--ignore", "TS009"], ["."],
     drop(SUP_EXPECT, ("TS007", "TS008", "TS009")),
     sum(v for c, v in SUP_SUPPRESSED.items() if c in ("TS005", "TS006")), []),
    ("ignore_all", SUP_FILES, [a for c in ALL for a in ("--ignore", c)], ["."], [], 0, []),
    ("legacy", LEGACY_FILES, [], ["."], LEGACY_EXPECT, 0, LEGACY_SKIPPED),
]


# --------------------------------------------------------------------------
# running and comparing


def write_project(root, files):
    for rel, text in files.items():
        path = os.path.join(root, *rel.split("/"))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)


def tag_line(files, rel, tag):
    """(1-based line, text) of the one line of ``rel`` tagged ``# @tag``."""
    hits = [(i + 1, ln) for i, ln in enumerate(files[rel].split("\n"))
            if ln.rstrip().endswith("# @" + tag)]
    if len(hits) != 1:
        raise AssertionError("tag @%s: %d lines in %s" % (tag, len(hits), rel))
    return hits[0]


def find_once(text, what, tag):
    col = text.find(what)
    if col < 0 or text.find(what, col + 1) >= 0:
        raise AssertionError("%r not once on the line of @%s: %r" % (what, tag, text))
    return col


def expected(files, e):
    """The comparable tuple of expected finding ``e`` (1-based, end exclusive)."""
    line, text = tag_line(files, e.rel, e.tag)
    if isinstance(e.span, tuple):
        start_text, end_tag, end_text = e.span
        col = find_once(text, start_text, e.tag)
        eline, etext = tag_line(files, e.rel, end_tag)
        ecol = find_once(etext, end_text, end_tag) + len(end_text)
    else:
        col = find_once(text, e.span, e.tag)
        eline, ecol = line, col + len(e.span)
    if e.dict is not None:
        dline, dtext = tag_line(files, e.rel, e.dict[0])
        dcol = find_once(dtext, e.dict[1], e.dict[0])
        if not e.dict[1].startswith("{"):
            raise AssertionError("dict text %r does not start with {" % (e.dict[1],))
    elif e.code == "TS005":
        dline, dcol = line, col
    else:
        dline, dcol = line, text.index("{")
    return (e.rel, e.code, e.key, dline, dcol + 1, line, col + 1, eline, ecol + 1)


def norm(path):
    path = path.replace(os.sep, "/")
    return path[2:] if path.startswith("./") else path


def got_tuple(f):
    return (norm(f["path"]), f["code"], f["key"], f["dict_line"], f["dict_column"], f["line"], f["column"],
            f["end_line"], f["end_column"])


FIELDS = {"path", "dict_line", "dict_column", "code", "key", "expression", "origin", "builder", "line", "column",
          "end_line", "end_column"}


def check_case(name, files, got, stats, skipped, expect, suppressed, want_skipped, log):
    problems = []
    want = sorted(expected(files, e) for e in expect)
    if len(set(want)) != len(want):
        problems.append("%s: the expectations list a finding twice" % name)
    mine = [f for f in got if f["code"] in CODES]
    have = sorted(got_tuple(f) for f in mine)
    if have != want:
        missing = sorted(set(want) - set(have))
        extra = sorted(set(have) - set(want))
        problems.append("%s: TS005-TS009 findings differ\n      expected, not reported: %s\n"
                        "      reported, not expected: %s" % (name, missing, extra))
    for f in mine:
        if set(f) != FIELDS or f["expression"] is not None or f["origin"] is not None or f["builder"] is not None:
            problems.append("%s: bad finding record %r" % (name, f))
    if got != sorted(got, key=lambda f: (f["path"], f["dict_line"], f["dict_column"], f["line"], f["column"],
                                          f["code"], f["key"] or "", f.get("expression") or "")):
        problems.append("%s: findings not sorted" % name)
    if stats.get("suppressed") != suppressed:
        problems.append("%s: %s suppressed findings, want %d" % (name, stats.get("suppressed"), suppressed))
    for code in CODES:
        n = sum(1 for f in mine if f["code"] == code)
        if stats.get(code) != n:
            problems.append("%s: stats count %s %s, the output %d" % (name, code, stats.get(code), n))
    if sorted(norm(s) for s in skipped) != sorted(want_skipped):
        problems.append("%s: skipped %s, want %s" % (name, sorted(skipped), want_skipped))
    by = {}
    for t in have:
        by[t[1]] = by.get(t[1], 0) + 1
    log.append("%s: %d findings %s, %s suppressed" % (name, len(have), json.dumps(by, sort_keys=True),
                                                       stats.get("suppressed")))
    return problems


def parse_run(stdout, stderr):
    stats = {}
    skipped = []
    for line in stderr.splitlines():
        if line.startswith("stats: "):
            stats = json.loads(line[len("stats: "):])
        elif line.startswith("skip: "):
            skipped.append(line[len("skip: "):].split(": ")[0])
    return json.loads(stdout), stats, skipped


def run_cli(root, extra, paths):
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    proc = subprocess.run([sys.executable, SCAN, "--stats"] + extra + paths, cwd=root,
                          capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise AssertionError("scan.py failed (%d): %s" % (proc.returncode, proc.stderr))
    return parse_run(proc.stdout, proc.stderr)


def run_inprocess(scan, root, extra, paths):
    for cache in (scan._projects, scan._project_roots, scan._ORIGINS, scan._EXCLUSIONS):
        cache.clear()
    scan.READS = False
    scan.LITERAL_ONLY = False
    scan.IGNORED_CODES.clear()
    scan.ALLOWED_KEYS.clear()
    scan.ALLOWED_KEYS.update({"status", "content", "toolUseId"})
    out, err = io.StringIO(), io.StringIO()
    cwd = os.getcwd()
    os.chdir(root)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = scan.main(["--stats"] + extra + paths)
    finally:
        os.chdir(cwd)
    if status != 0:
        raise AssertionError("scan.main exited %d: %s" % (status, err.getvalue()))
    return parse_run(out.getvalue(), err.getvalue())


def run_all(base, runner):
    problems, log = [], []
    for name, files, extra, paths, expect, suppressed, skipped in CASES:
        root = os.path.join(base, name)
        if not os.path.isdir(root):
            write_project(root, files)
        try:
            got, stats, skipped_got = runner(root, extra, paths)
        except Exception as exc:  # a mutant may crash scan.py: that is a failure too
            problems.append("%s: %s: %s" % (name, type(exc).__name__, exc))
            continue
        problems.extend(check_case(name, files, got, stats, skipped_got, expect, suppressed, skipped, log))
    return problems, log


# --------------------------------------------------------------------------
# mutants: scan.py in-process with one part of the new rules broken


def mutants(scan):
    """(name, attribute of scan, replacement) of deliberate breaks."""
    ast_ = scan.ast
    o = {name: getattr(scan, name) for name in (
        "is_contract_tool_decorator", "is_tool_function", "half_shaped_missing", "name_displays",
        "allowed_result_use", "function_returns", "tool_displays", "ts005_reached", "ts005_findings",
        "number_literal", "content_kind", "text_kind", "module_bound_names", "block_problem", "content_blocks",
        "display_findings", "contract_add", "contract_entry_span", "contract_node_span", "configure_list",
        "STATUSES", "dotted_name", "name_index", "callee_binding")}

    def last_name_only(d):
        if d.__class__ is ast_.Call:
            d = d.func
        n = scan.dotted_name(d)
        return n is not None and n.split(".")[-1] in {t.split(".")[-1] for t in scan.TOOL_DECORATORS}

    def no_calls(d):
        return d.__class__ is not ast_.Call and o["is_contract_tool_decorator"](d)

    def no_async(node):
        return node.__class__ is ast_.FunctionDef and o["is_tool_function"](node)

    def spreads_ignored(d):
        return o["half_shaped_missing"](ast_.Dict(keys=[k for k in d.keys if k is not None],
                                                  values=[v for k, v in zip(d.keys, d.values) if k is not None]))

    def missing_swapped(d):
        m = o["half_shaped_missing"](d)
        return None if m is None else ("status" if m == "content" else "content")

    def uses_ignored(mod, fs, name):
        bs = fs.owned.get(name) or []
        if bs and all(b.kind == "assign" and b.stmt.__class__ is ast_.Assign and len(b.stmt.targets) == 1
                      and b.value.__class__ is ast_.Dict for b in bs):
            return [b.value for b in bs]
        return []

    def annotated_too(mod, fs, name):
        out = o["name_displays"](mod, fs, name)
        if out:
            return out
        bs = fs.owned.get(name) or []
        if bs and all(b.kind == "assign" and b.value.__class__ is ast_.Dict for b in bs):
            return [b.value for b in bs]
        return []

    def every_load(node, par, parents):
        return node.ctx.__class__ is ast_.Load

    def get_uncalled(node, par, parents):
        if (node.ctx.__class__ is ast_.Load and par.__class__ is ast_.Attribute and par.value is node
                and par.attr == "get"):
            return True
        return o["allowed_result_use"](node, par, parents)

    def same_id_everywhere(mod, fs, name):
        # every Name of the same spelling in F's body and nested scopes taken for F's own
        bs = fs.owned.get(name)
        if not bs or not all(b.kind == "assign" and b.stmt.__class__ is ast_.Assign and len(b.stmt.targets) == 1
                             and b.value.__class__ is ast_.Dict for b in bs):
            return []
        targets = {id(b.node) for b in bs}
        names, parents = scan.name_index(mod)
        for node, par, sc in names.get(name, ()):
            s = sc
            while s is not None and s is not fs:
                s = s.parent
            if s is None or id(node) in targets:
                continue
            if not scan.allowed_result_use(node, par, parents):
                return []
        return [b.value for b in bs]

    def no_calls_followed(mod, fs):
        displays, _ = o["function_returns"](mod, fs)
        return displays, []

    def builders_only(mod, fs):
        displays, callees = o["function_returns"](mod, fs)
        mod.project.ensure_builders()
        return displays, [t for t in callees if id(t.node) in mod.project.builders]

    def one_level(mod, fs):
        displays, callees = scan.function_returns(mod, fs)
        out = [(mod, d) for d in displays]
        for t in callees:
            out.extend((t.module, d) for d in scan.function_returns(t.module, t.scope)[0])
        return out

    def bound_twice_too(mod, scope, name):
        # an import of a function's own scope followed even when bound twice there
        owner = scan.lookup(scope, name, mod.module_scope)
        if owner is not None and owner.kind == "function":
            bs = [b for b in owner.owned.get(name, ()) if b.kind in ("import", "importfrom")]
            if bs:
                return bs[0]
        return o["callee_binding"](mod, scope, name)

    def class_bodies_too(mod, scope, name):
        # an import of a class body followed from the class body's methods
        s = scope
        while s is not None and s.kind != "class":
            s = s.parent
        if s is not None and scan.lookup(scope, name, mod.module_scope) is not s:
            bs = s.owned.get(name, ())
            if len(bs) == 1 and bs[0].kind in ("import", "importfrom"):
                return bs[0]
        return o["callee_binding"](mod, scope, name)

    def per_tool(proj):
        reached = {}
        for abspath in sorted(proj.names):
            m = proj.module(abspath)
            if m is None:
                continue
            for s in m.scopes:
                if s.kind == "function" and scan.is_tool_function(s.node):
                    for dm, d in scan.tool_displays(m, s):
                        missing = scan.half_shaped_missing(d)
                        if missing is not None:
                            reached.setdefault(id(dm), []).append((d, missing, s.node.name))
        return reached

    def every_module(pending=None):
        # TS005 reported in every project file, not only the paths given
        out = []
        done = set()
        for path, mod, stats in scan._CONTRACT_PENDING:
            proj = mod.project
            if id(proj) in done:
                continue
            done.add(id(proj))
            reached = scan.ts005_reached(proj)
            for m in list(proj.modules.values()):
                if m is None:
                    continue
                for d, missing, _ in reached.get(id(m), ()):
                    scan.contract_add(m, m.path if m is not mod else path, out, stats, "TS005", missing, d,
                                      scan.contract_node_span(m, d))
        return out

    def bool_number(v):
        if v.__class__ is ast_.UnaryOp and v.operand.__class__ is ast_.Constant and v.operand.value is True:
            return True
        return o["number_literal"](v)

    def no_signed(v):
        return v.__class__ is ast_.Constant and v.value.__class__ in (int, float, complex)

    def nested_signs(v):
        while v.__class__ is ast_.UnaryOp and v.op.__class__ in (ast_.USub, ast_.UAdd):
            v = v.operand
        return v.__class__ is ast_.Constant and v.value.__class__ in (int, float, complex)

    def kind_without(cls_or_test):
        def fn(v):
            if cls_or_test(v):
                return None
            return o["content_kind"](v)
        return fn

    def any_list_content(v):
        return "a list" if v.__class__ is ast_.List else o["content_kind"](v)

    def text_none_too(mod, v):
        if v.__class__ is ast_.Constant and v.value is None:
            return "None"
        return o["text_kind"](mod, v)

    def text_tuple_too(mod, v):
        return "a tuple" if v.__class__ is ast_.Tuple else o["text_kind"](mod, v)

    def text_no_bool(mod, v):
        if v.__class__ is ast_.Constant and v.value.__class__ is bool:
            return None
        return o["text_kind"](mod, v)

    def any_call_of_name(mod, v):
        if v.__class__ is ast_.Call and v.func.__class__ is ast_.Name:
            return "a call"
        return o["text_kind"](mod, v)

    def module_scope_names(mod):
        return set(mod.module_scope.owned)

    def spreads_judged(b):
        keys = [k for k in b.keys if k is not None and k.__class__ is ast_.Constant and k.value.__class__ is str]
        ks = {k.value for k in keys}
        types = ks & scan.BLOCK_TYPES
        return None if len(ks) == 1 and types else "bad"

    def entries_counted(b):
        p = o["block_problem"](b)
        if p is None and len(b.keys) > 1:
            return "more than one"
        return p

    def type_key_tolerated(b):
        keys = [k for k in b.keys if not (k is not None and k.__class__ is ast_.Constant and k.value == "type")]
        if len(keys) == len(b.keys) or not keys:
            return o["block_problem"](b)
        return o["block_problem"](ast_.Dict(keys=keys, values=[v for k, v in zip(b.keys, b.values) if k in keys]))

    def first_content(d):
        for k, v in zip(d.keys, d.values):
            if k is not None and k.__class__ is ast_.Constant and k.value == "content":
                return [e for e in v.elts if e.__class__ is ast_.Dict] if v.__class__ is ast_.List else []
        return []

    def nested_blocks(d):
        out = list(o["content_blocks"](d))
        for k, v in zip(d.keys, d.values):
            if k is not None and k.__class__ is ast_.Constant and k.value == "content" and v.__class__ is ast_.List:
                for e in v.elts:
                    if e.__class__ is ast_.List:
                        out.extend(x for x in e.elts if x.__class__ is ast_.Dict)
                    if e.__class__ is ast_.Starred and e.value.__class__ is ast_.List:
                        out.extend(x for x in e.value.elts if x.__class__ is ast_.Dict)
        return out

    def tuple_blocks(d):
        out = list(o["content_blocks"](d))
        last = None
        for k, v in zip(d.keys, d.values):
            if k is not None and k.__class__ is ast_.Constant and k.value == "content":
                last = v
        if last is not None and last.__class__ is ast_.Tuple:
            out.extend(e for e in last.elts if e.__class__ is ast_.Dict)
        return out

    def one_per_code(mod, path, stats):
        seen = set()
        out = []
        for f in o["display_findings"](mod, path, stats):
            k = (f["dict_line"], f["dict_column"], f["code"])
            if k not in seen:
                seen.add(k)
                out.append(f)
        return out

    def unshaped_too(mod, path, stats):
        # TS006 on any dict with a status, shaped or not
        out = o["display_findings"](mod, path, stats)
        for node in ast_.walk(mod.tree):
            if node.__class__ is ast_.Dict and not scan.is_shaped(node):
                for i, (k, v) in enumerate(zip(node.keys, node.values)):
                    if (k is not None and k.__class__ is ast_.Constant and k.value == "status"
                            and v.__class__ is ast_.Constant and v.value.__class__ is str
                            and v.value not in scan.STATUSES):
                        scan.contract_add(mod, path, out, stats, "TS006", "status", node,
                                          scan.contract_entry_span(mod, node, i))
        return out

    class CaseInsensitive(set):
        def __contains__(self, x):
            return set.__contains__(self, x) or any(x.lower() == s.lower() for s in self)

    def no_dict_line(mod, path, out, stats, code, key, dict_node, span):
        # suppressions on the span's line only
        mod.src.comments  # noqa: B018 (the tokenize pass)
        dl = dict_node.lineno
        saved = mod.src._comments
        filtered = {ln: cs for ln, cs in saved.items() if ln != dl or ln == span[0][0]}
        mod.src._comments = filtered
        try:
            o["contract_add"](mod, path, out, stats, code, key, dict_node, span)
        finally:
            mod.src._comments = saved

    def ignore_ignored(mod, path, out, stats, code, key, dict_node, span):
        saved = set(scan.IGNORED_CODES)
        scan.IGNORED_CODES.difference_update(CODES)
        try:
            o["contract_add"](mod, path, out, stats, code, key, dict_node, span)
        finally:
            scan.IGNORED_CODES.update(saved)

    def no_parens(mod, d, i):
        k, v = d.keys[i], d.values[i]
        src = mod.src
        return (src.position(src.offset(k.lineno, k.col_offset)),
                src.position(src.offset(v.end_lineno, v.end_col_offset)))

    def node_span_short(mod, node):
        (s, e) = o["contract_node_span"](mod, node)
        return s, (e[0], e[1] - 1)

    def configured_adds(option, value, configured):
        target = {"--status": scan.STATUSES, "--block-type": scan.BLOCK_TYPES,
                  "--tool-decorator": scan.TOOL_DECORATORS}[option]
        target.add(value)

    return [
        ("any decorator is a tool", "is_contract_tool_decorator", lambda d: True),
        ("tool decorators by their last name", "is_contract_tool_decorator", last_name_only),
        ("a call of a tool decorator is none", "is_contract_tool_decorator", no_calls),
        ("async defs are no tools", "is_tool_function", no_async),
        ("dotted names not joined", "dotted_name", lambda n: n.id if n.__class__ is ast_.Name else None),
        ("spreads do not stop TS005", "half_shaped_missing", spreads_ignored),
        ("the other key reported missing", "half_shaped_missing", missing_swapped),
        ("displays through names not followed", "name_displays", lambda mod, fs, name: []),
        ("the uses of a result name not looked at", "name_displays", uses_ignored),
        ("annotated and chained bindings accepted", "name_displays", annotated_too),
        ("every load of a name allowed", "allowed_result_use", every_load),
        ("an uncalled N.get allowed", "allowed_result_use", get_uncalled),
        ("names of nested scopes taken for F's", "name_displays", same_id_everywhere),
        ("calls not followed", "function_returns", no_calls_followed),
        ("only calls of builders followed", "function_returns", builders_only),
        ("chains followed one level", "tool_displays", one_level),
        ("imports inside a function not followed", "callee_binding", scan.module_binding),
        ("imports inside a function followed however often bound", "callee_binding", bound_twice_too),
        ("imports of class bodies followed", "callee_binding", class_bodies_too),
        ("a display once per tool", "ts005_reached", per_tool),
        ("TS005 in files not given", "ts005_findings", every_module),
        ("-True a number", "number_literal", bool_number),
        ("signed numbers not numbers", "number_literal", no_signed),
        ("signs nested", "number_literal", nested_signs),
        ("bytes content not a string", "content_kind",
         kind_without(lambda v: v.__class__ is ast_.Constant and v.value.__class__ is bytes)),
        ("f-string content not a string", "content_kind", kind_without(lambda v: v.__class__ is ast_.JoinedStr)),
        ("tuple content not judged", "content_kind", kind_without(lambda v: v.__class__ is ast_.Tuple)),
        ("empty content not judged", "content_kind",
         kind_without(lambda v: v.__class__ is ast_.List and not v.elts)),
        ("None content not judged", "content_kind",
         kind_without(lambda v: v.__class__ is ast_.Constant and v.value is None)),
        ("any list content judged", "content_kind", any_list_content),
        ("None text judged", "text_kind", text_none_too),
        ("tuple text judged", "text_kind", text_tuple_too),
        ("bool text not judged", "text_kind", text_no_bool),
        ("any call of a name judged", "text_kind", any_call_of_name),
        ("shadowing builtins not seen", "module_bound_names", lambda mod: set()),
        ("shadowing in the module scope only", "module_bound_names", module_scope_names),
        ("blocks with spreads or computed keys judged", "block_problem", spreads_judged),
        ("block keys counted, not distinct", "block_problem", entries_counted),
        ("a type key tolerated", "block_problem", type_key_tolerated),
        ("the first content entry", "content_blocks", first_content),
        ("nested and starred lists searched", "content_blocks", nested_blocks),
        ("tuple content searched", "content_blocks", tuple_blocks),
        ("one finding per code and display", "display_findings", one_per_code),
        ("unshaped statuses judged", "display_findings", unshaped_too),
        ("statuses case-insensitive", "STATUSES", CaseInsensitive({"success", "error", "degraded"})),
        ("suppressions on the dict's line not seen", "contract_add", no_dict_line),
        ("--ignore not applied to the new codes", "contract_add", ignore_ignored),
        ("entry spans without parentheses", "contract_entry_span", no_parens),
        ("node spans one short", "contract_node_span", node_span_short),
        ("configured lists add to the default ones", "configure_list", configured_adds),
    ], o


def main(argv):
    keep = None
    want_mutants = True
    it = iter(argv)
    for a in it:
        if a == "--keep":
            keep = next(it)
        elif a == "--no-mutants":
            want_mutants = False
        else:
            sys.stderr.write("usage: contract_selftest.py [--keep DIR] [--no-mutants]\n")
            return 2
    problems = []
    with tempfile.TemporaryDirectory(prefix="contract-selftest-") as tmp:
        base = keep or tmp
        os.makedirs(base, exist_ok=True)
        p, log = run_all(base, run_cli)
        problems.extend(p)
        for line in log:
            sys.stderr.write("  " + line + "\n")
        if want_mutants:
            sys.path.insert(0, HERE)
            sys.dont_write_bytecode = True  # leave no __pycache__ next to scan.py
            import scan  # noqa: E402
            p0, _ = run_all(base, lambda root, extra, paths: run_inprocess(scan, root, extra, paths))
            if p0:
                problems.append("in-process run (no mutant) fails: %s" % p0[:3])
            breaks, originals = mutants(scan)
            for name, attr, fn in breaks:
                setattr(scan, attr, fn)
                try:
                    p, _ = run_all(base, lambda root, extra, paths: run_inprocess(scan, root, extra, paths))
                finally:
                    setattr(scan, attr, originals[attr])
                if p:
                    sys.stderr.write("  mutant %r caught (%d problems)\n" % (name, len(p)))
                else:
                    problems.append("mutant %r not caught: the self-test cannot fail on it" % name)
    if problems:
        sys.stderr.write("contract self-test: FAIL\n")
        for p in problems:
            sys.stderr.write("  - %s\n" % p)
        return 1
    sys.stderr.write("contract self-test: OK (%d cases%s)\n"
                     % (len(CASES), ", %d mutants caught" % len(breaks) if want_mutants else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
