#!/usr/bin/env python3
"""Self-test of scan.py --reads (docs/rules.md "Reads of moved keys").

Usage:
    python3 tests/reference/reads_selftest.py [--keep DIR] [--mutants]

Writes small projects into a temporary folder, runs scan.py --reads (its CLI)
over each and compares, finding by finding, the exact reads reported with the
ones written down here: every read form on a tool result, a builder called
with extra keywords, a dict-parameter builder, a dispatcher chain across
modules and through `self`, direct tool calls `X.tool.NAME(...)`, whole-result
uses, reads of the content list (`r["content"][0]`: block, `r["content"]`
otherwise: content), and decoys that must give nothing (non-moved keys, names
bound twice or not by a one-target plain assignment, reads in nested scopes,
suppressed keys, undecorated or otherwise decorated tools (`@other.tool`: a
decorator escape, below), `agent.tools.NAME`,
`r["content"]` as a target), and the possible reads (`"possible": true`) on
results the SDK hands on: every receiver kind (a marked name or attribute,
`X["toolResult"]`, a parameter annotated `ToolResult`, `P.result` of an
annotated hook event) in every keyed form, reaching every finding of the key
whatever its code; next to their decoys: a marked name bound once by
`R = call` (its reads the call's), a marked attribute on a call result (still
one), `X["toolResult"]` as a target or with its index not written exactly
`"toolResult"` / `'toolResult'` (concatenated, escaped, prefixed,
triple-quoted; parentheses are seen through), the annotated parameters read from
nested functions, lambdas, comprehensions and class bodies (and a nested
def's own annotated parameters), `*args` / `**kwargs` annotated, string or
`Optional[...]` annotations, other events, `global` / `nonlocal`; the aliases,
names bound by a plain one-target `N = E` to `X["toolResult"]`, a marked
attribute or a hook event's `P.result` (one binding of several will do; read
in nested scopes, through `global` / `nonlocal`, `P.result` judged where the
assignment stands), next to `N: T = E`, `a = N = E`, `N, z = E, 1`,
`(N := E)`, `N = call()`, `N = other_name` and the like; and only in
the files that hold a marker and the read's key between quotes as written (a
key spelled by concatenation or escapes alone, a key of a suppressed finding,
another moved key, a file without a marker: not searched; a quoted key in a
comment, `'k'`, `u"k"`, a triple-quoted k: searched); and the dispatch by a constant
(`adb(action="list")` reaching only the returns that can run when
`action == "list"`): `if` chains, `elif` chains, `else` clauses, the returns
after a returning `if` in the body (not after one nested deeper, nor after
one whose body does not end in `return` / `raise`), tests written
`"c" == P`, keys in any constant spelling, a direct tool call (each tool
narrowed by its own parameters), a method through `self`, two keywords, a
chained producer followed whole; next to the calls that are not narrowed: a
positional argument, a rebound parameter (also through `nonlocal`),
`*args` / `**kwargs` names, a value that is a name, an f-string or bytes;
and the escapes: producers that are no tools used as values (a name, `A.name`,
`self.m`, `cls.m`, `K().m`, `N.m`; in a display, an assignment, an
argument, a default, a lambda, a return, parenthesized), reads of form
`escape` of every origin (chains followed, no dispatch), next to their
decoys (tools, calls, attribute objects, targets, shadowed, twice-bound or
nested names, inherited methods, `K.m` on the class); tools are escapes too
when called through a wrapper (`raw(probe)("q")`) or given another name to
be called by (the whole value of an assignment, plain, annotated, chained,
a walrus, to a name, an attribute or a subscript; the value of a `return`,
a fixture's too, or a `yield`; a dict display's pair value; parenthesized
or not; a name, `A.name`, `self.m`, `K().m`, `N.m`) or handed to a call
that keeps what it gives (a positional argument of a call whose value is
not dropped by an expression statement, awaited or not: `r = await
asyncio.to_thread(probe, "q")`, `pool.submit(probe, "q")` assigned or
returned, `functools.partial(probe, 1)`, `list(map(probe, xs))`, `assert
inspect.signature(probe)`, `len(probe)`, `builtins.repr(probe)`, a
decorator's call, `raw(probe, None)("q")`; `callable(probe)` when the
module defines `callable`, a builtin bound locally, a star import), next to
the tool uses that stay exempt (a list, tuple or set element, `a, b =
probe, 1`, `return probe, 1`, `yield probe, 1`, `yield from`, `+=`, a dict
key, `{**probe}`, a dict comprehension, an argument of a call statement
(awaited too) or of a builtin that only looks at it (`callable(probe)`,
`isinstance(probe, object)`, `x = repr(probe)`...), a keyword
(`Agent(tools=probe)`, `Thread(target=probe)`), `*probe`, a wrapper with
a keyword, an operand, a conditional, a lambda body, a default, an
annotation, an attribute object, a call); and the results
handed on (`escape` reads at the receiver call or `await C`): a module's
or a class body's name, an attribute, an argument, a list, a conditional, a
`for` iterable, a lambda, `if C:`, `yield C`, `C[0]`, `C is None`, an
annotated name, a name bound twice, passed on (`print(R)`), loaded in a
nested def, bound under `global` or returned, a direct tool call, a builder
call, a call on an instance, a dispatcher narrowed; next to the results not
handed on: a call statement, `return C`, every read form (of any key), a
name bound once in a function read by read forms only, or never loaded;
and the names bound in sequence (a function's name bound more than once,
every binding a plain one-target `R = V` statement of its own block): two,
three and four bindings to producer calls, a direct tool call, a call on an
instance, builder calls, dispatchers narrowed, `await C` (parenthesized
too), each load reading the keys of the binding it sees (a load in V the
one before; loads in an `if`, a `for`, a `with`, a comprehension's first
iterable and a nested def's default between bindings), rebindings to values
that are no receivers, a binding no load sees, and, judged binding by
binding, the results handed on by a load that is no read (`print(R)`,
`check(R)`, `R = other(R)`) or, for every binding, by a load in a nested
def, a lambda, a comprehension or before the first binding ends; next to
the names not bound in sequence (a binding in an `if`, `while`, `for`,
`with`, `try` or `match`; a parameter, `del`, `+=`, a walrus, a tuple, an
annotated or chained binding, a nested `nonlocal` rebinding, `global`, a
module's name): no receiver, every call bound handed on; a marked name bound
in sequence is traced and still a possible receiver; and annotations
("**Annotations.**": nothing in one is read): a name bound once or in
sequence loaded in a def's parameter or return annotations (positional-only,
positional, keyword-only, `*args`, `**kwargs`, return; an `async def`; a
module's and a class body's def) or in a variable's annotation (`x: A`,
`x: A = v`, in a module, a class body, a function, an `if`), at any depth (a
comprehension, a lambda's default inside one too), is no receiver there and
hands every call bound on (its reads in S stay); no possible receiver is
looked for there (an annotated parameter, a hook event, a marked name or
attribute, `X["toolResult"]`, an alias); `N.m(...)` there is no call on an
instance (nor `N.m` an escape); a receiver call written there is handed on
whatever holds it (a subscript, `.get`, `in`, nothing; `await C` in an
`async def`, span `await C`), no read; a producer used as a value there is an
escape, `K(...).m` too; `type X = ...` and type parameters' bounds (and
defaults) on Python 3.12+ (3.13+) only; next to the decoys that stand where
they are written: a def's defaults (keyword-only too, and beside an
annotation of the same parameter), its decorators, a lambda's defaults, a
class's bases and keywords, a comprehension's first iterable, a default
between two bindings in sequence, an annotated assignment's value and target;
and assertion messages ("**Assertion messages.**"): a name bound once or in
sequence loaded in an `assert`'s message in the function itself (the name,
parenthesized, an f-string field with or without `!r`, `=`, a format spec,
parenthesized, in an implicit concatenation; a binding seen by a message
alone) hands nothing on, next to `str(r)`, `(r, 1)`, `r or x`, `f"{r}" + s`,
a format spec's field, a nested f-string, a lambda, the assert's test, a
nested def's assert, `print(r)`, a module's name, a message before the first
binding in sequence, and keyed reads written in a message; and decorators
("**Decorators.**"): each decorator of a producer's def (a tool's too) is an
`escape` read at the decorator of every origin a call of the producer
reaches (chains followed, no dispatch): `@pytest.fixture` (with arguments
too, in a conftest and a test module, on a fixture returning a tool's call
or a chain onto one), `@property`, `@functools.lru_cache(maxsize=2)`,
`@lru_cache`, `@functools.cache`, `@(log_calls)` (span without the
parentheses), `@log_calls` under `@tool` or `@staticmethod`, two
decorators, an async producer, a dispatcher, `@other.tool`, `@override(1)`
(a project function called), `@builtins.staticmethod`,
`@my_abc.abstractmethod`; next to the decorators that give nothing: the
tool decorators, the exempt names and attributes as written
(`@staticmethod`, `@classmethod`, `@abstractmethod`, `@abc.abstractmethod`,
`@override` (also bound to a project function), `@typing.override`,
`@typing_extensions.override`, `@(staticmethod)`), and the decorators of
what is no producer (a function holding a finding but returning none, a
compliant result or None, a nested def, a method of a nested class, a
class); and the uses as a value toolshape cannot resolve ("**Uses as a value
toolshape cannot resolve**"): a name imported twice inside the test, a
dotted path, a module alias, a direct tool call's callee (`fn =
agent.tool.probe`), `self.m` of a class defining no `m`, names of a test
module bound by an assignment or twice, names of a star import;
each only when wrapped or renamed (not when handed to a call that keeps
it), of a tool or not (a tool and a producer
that is none sharing a name: both read); next to the plain uses, of a tool
or not (an argument, a list element, a lambda body, `len(scan.obstacles)`,
`for o in scan.obstacles`, `print(t.helper)`), an external
module imported at module level or inside the function, a parameter, a local
variable, a name imported and rebound in the function, a project function
that is no producer, a project class, and a producer resolved (one read, not
two: a name or a module imported inside the test, once, among them); and the
imports inside a function (docs/rules.md "**Imports inside a function**"):
bound there once, they resolve as module-level ones do (a name, `from P
import M`, `import P.M as M`, relative, in the function or one enclosing it:
a nested def, a lambda, a comprehension) for producers, receivers (keyed
reads), calls on an instance, escapes and builder calls (TS003 at the call,
through a chain too), next to those that resolve nothing (bound twice,
imported in a nested def or a class body, a dotted `import P.M`) and to
external ones (no unresolved call).

And the results handed to a checking function ("**Results handed to a
checking function.**"): a same-module `def` reading its parameter only
(status-only, a moved key, a block, a whole read), naming it in messages or
returning it, called with a receiver call, `await C` or a name bound once or
in sequence: its reads listed at its own spans once per call, the call
passing the result through judged again (read, dropped, bound to a name,
chained; returned, awaited, in a list, passed on or indexed: handed on,
escape at H); next to every disqualifier (decorated, async, in an `if`,
defined twice, imported, an attribute or parenthesized callee, `*a` / `**k`
in the call, the value by keyword, the parameter rebound, deleted, read in
a lambda or comprehension, passed on, `return P, 1`, a generator, `*args`
or a bare `*` before the position; a positional-only marker is fine) and
the loads that are no V (a module's name, a nested scope's load).

Positions are not written by hand: a line carries a tag comment (`# @t1`) and
an expected read names the tag, the exact text of its span on that line, its
form and key (and True for a possible read).  Every finding not listed must have no reads at all.

--mutants also runs scan.py in-process with parts of the reads analysis
broken on purpose and checks that each break makes this test fail (the
controls can fail).

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


# --------------------------------------------------------------------------
# the projects: {relative path: text}; expectations per project

TOOL_LITERAL = {
    "pyproject.toml": "",
    "pkg/__init__.py": "from .tools import scan\n",
    "pkg/tools.py": '''\
from strands import tool


@tool
def scan(query):
    return {"status": "success", "content": [{"text": query}], "devices": [], "elapsed": 0.5}  # @scan


def quiet(query):
    return {"status": "success", "content": [], "hidden": 1}  # toolshape: ignore[TS001]
''',
    "tests/test_scan.py": '''\
import json
import pkg.tools as T
from pkg import tools
from pkg import scan as scan2
from pkg.tools import scan, quiet


def test_forms():
    r = scan("q")  # @h1
    assert r["devices"] == []  # @sub
    r["devices"] = [1]  # @store
    r['devices'] += [2]  # @aug
    del r["elapsed"]  # @del
    assert r.get("devices") == [1, 2]  # @get
    r.get("elapsed", 0)  # @get2
    r.pop("devices")  # @pop
    r.pop("elapsed", None)  # @pop2
    r.setdefault("devices", [])  # @setdefault
    assert "devices" in r  # @in
    assert "dev" "ices" not in r  # @notin
    assert r["status"] == "success"  # @allowed
    assert r["content"][0]["text"] == "q"  # @allowed2
    assert r.get("other") is None  # @other
    n = r[0] if r else r[KEY]  # @nonstr
    copy = {"a": 1, **r}  # @w1
    print(**r)  # @w2
    list(r.keys())  # @w3
    list(r.values())  # @w4
    list(r.items())  # @w5
    dict(r)  # @w6
    json.dumps(r)  # @w7
    json.dumps(r, indent=2)  # @w8
    (r)["elapsed"]  # @paren
    scan("x")["elapsed"]  # @call
    T.scan("y")["devices"]  # @alias
    tools.scan("z")["devices"]  # @frompkg
    scan2("w")["elapsed"]  # @reexport
    quiet("x")["hidden"]  # @quiet
    r.get(*args)  # @starred
    r.copy()["devices"]  # @copy
''',
}

WHOLE_TAGS = ["w1", "w2", "w3", "w4", "w5", "w6", "w7", "w8"]
WHOLE_SPANS = {"w1": "**r", "w2": "**r", "w3": "r.keys()", "w4": "r.values()", "w5": "r.items()",
               "w6": "dict(r)", "w7": "json.dumps(r)", "w8": "json.dumps(r, indent=2)"}


def whole(path):
    return [(path, t, WHOLE_SPANS[t], "whole", None) for t in WHOLE_TAGS]


T = "tests/test_scan.py"


def handed(rel, tag, text):
    """A result handed on (docs/rules.md "**Results handed on.**"): a read of
    form escape, key null, span the receiver call (or `await C`)."""
    return (rel, tag, text, "escape", None)


# `r = scan("q")`: r is read in other ways than the read forms (`r[0]`, `if r`,
# `r.copy()`, `r.get(*args)`), so the result is handed on
HANDED_SCAN = handed(T, "h1", 'scan("q")')
# `r["content"][0]["text"]`: no keyed read (content is allowed), but a read of
# the content list (form block), which every finding of the display gets
CONTENT_BLOCK = (T, "allowed2", 'r["content"]', "block", None)
TOOL_LITERAL_EXPECT = {
    ("pkg/tools.py", "scan", "TS001", "devices"): [
        (T, "sub", 'r["devices"]', "subscript", "devices"),
        (T, "store", 'r["devices"]', "store", "devices"),
        (T, "aug", "r['devices']", "store", "devices"),
        (T, "get", 'r.get("devices")', "get", "devices"),
        (T, "pop", 'r.pop("devices")', "pop", "devices"),
        (T, "setdefault", 'r.setdefault("devices", [])', "setdefault", "devices"),
        (T, "in", '"devices" in r', "in", "devices"),
        (T, "notin", '"dev" "ices" not in r', "not-in", "devices"),
        (T, "alias", 'T.scan("y")["devices"]', "subscript", "devices"),
        (T, "frompkg", 'tools.scan("z")["devices"]', "subscript", "devices"),
        CONTENT_BLOCK, HANDED_SCAN,
    ] + whole(T),
    ("pkg/tools.py", "scan", "TS001", "elapsed"): [
        (T, "del", 'r["elapsed"]', "delete", "elapsed"),
        (T, "get2", 'r.get("elapsed", 0)', "get", "elapsed"),
        (T, "pop2", 'r.pop("elapsed", None)', "pop", "elapsed"),
        (T, "paren", '(r)["elapsed"]', "subscript", "elapsed"),
        (T, "call", 'scan("x")["elapsed"]', "subscript", "elapsed"),
        (T, "reexport", 'scan2("w")["elapsed"]', "subscript", "elapsed"),
        CONTENT_BLOCK, HANDED_SCAN,
    ] + whole(T),
}
TOOL_LITERAL_FORMS = {"subscript": 6, "store": 2, "delete": 1, "get": 2, "pop": 2, "setdefault": 1,
                      "in": 1, "not-in": 1, "whole": 8, "block": 1, "escape": 1}

# with --allowed-key devices: "devices" is no finding, so nothing reads it
TOOL_LITERAL_ALLOWED_EXPECT = {
    ("pkg/tools.py", "scan", "TS001", "elapsed"): TOOL_LITERAL_EXPECT[("pkg/tools.py", "scan", "TS001", "elapsed")],
}

BUILDER = {
    "pyproject.toml": "",
    "pkg/__init__.py": "",
    "pkg/results.py": '''\
def _ok(text, **extra):
    return {"status": "success", "content": [{"text": text}], **extra}  # @okdisplay


def answer(msg, data=None):
    return {"status": "success", "content": [{"text": msg}], **(data or {})}  # @answerdisplay
''',
    "pkg/devices.py": '''\
from .results import _ok, answer


def list_devices():
    return _ok("found", devices=["emulator-5554"], count=1)  # @listcall


def rows(extra):
    return answer("r", data={"rows": [1], "status": "x", **extra})  # @rowscall
''',
    "tests/test_devices.py": '''\
from pkg.devices import list_devices, rows
from pkg.results import _ok


def test_devices():
    r = list_devices()
    assert r["devices"] == ["emulator-5554"]  # @b1
    assert r["status"] == "success"  # @b2
    assert rows({})["rows"] == [1]  # @b3
    direct = _ok("x", serial="s1", **more)  # @directcall
    direct["serial"]  # @b4
    direct.get("devices")  # @b5
    "count" in list_devices()  # @b6
    list(rows({}).items())  # @b7
''',
}
TB = "tests/test_devices.py"
BUILDER_EXPECT = {
    ("pkg/devices.py", "listcall", "TS003", "devices"): [(TB, "b1", 'r["devices"]', "subscript", "devices")],
    ("pkg/devices.py", "listcall", "TS003", "count"): [(TB, "b6", '"count" in list_devices()', "in", "count")],
    ("pkg/devices.py", "rowscall", "TS003", "rows"): [
        (TB, "b3", 'rows({})["rows"]', "subscript", "rows"),
        (TB, "b7", "rows({}).items()", "whole", None),
    ],
    # the dynamic `**extra` entry of the same call: whole reads reach it too
    ("pkg/devices.py", "rowscall", "TS003", None): [(TB, "b7", "rows({}).items()", "whole", None)],
    ("tests/test_devices.py", "directcall", "TS003", "serial"): [(TB, "b4", 'direct["serial"]', "subscript",
                                                                  "serial")],
}
BUILDER_FORMS = {"subscript": 3, "in": 1, "whole": 1}

DISPATCH = {
    "pyproject.toml": "",
    "pkg/__init__.py": "",
    "pkg/handlers.py": '''\
def _handle(action):
    result = {"status": "success", "content": [], "serials": []}  # @handledisplay
    result["took_ms"] = 3  # @tookwrite
    return result


def other(action):
    return {"status": "error", "content": [], "reason": action}  # @otherdisplay
''',
    "pkg/adb.py": '''\
from pkg import handlers
from .handlers import _handle


def adb(action):
    if action == "devices":
        return _handle(action)
    return handlers.other(action)


class Device:
    def shell(self, cmd):
        return self._run(cmd)

    def _run(self, cmd):
        out = {"status": "success", "content": []}
        out["exit_code"] = 0  # @exitwrite
        out.update({"stdout": "", "status": "error"})  # @stdoutwrite
        return out

    def check(self):
        return self.shell("x")["stdout"]  # @d6
''',
    "pkg/api.py": '''\
from . import adb as backend


def facade(action):
    return backend.adb(action)
''',
    "tests/test_adb.py": '''\
import pkg.adb as A
from pkg import api
from pkg.adb import adb, Device


def test_adb():
    r = adb("devices")
    r["serials"]  # @d1
    r["took_ms"]  # @d2
    r["reason"]  # @d3
    A.adb("x")["reason"]  # @d4
    api.facade("d").get("serials")  # @d5
    Device().shell("ls")["exit_code"]  # @d7
''',
}
TD = "tests/test_adb.py"
DISPATCH_EXPECT = {
    # docs/rules.md, "Calls on an instance": `Device` is imported and
    # `shell` is a def in its body, so this call is a receiver of it
    ("pkg/adb.py", "exitwrite", "TS004", "exit_code"): [
        (TD, "d7", 'Device().shell("ls")["exit_code"]', "subscript", "exit_code")],
    ("pkg/handlers.py", "handledisplay", "TS001", "serials"): [
        (TD, "d1", 'r["serials"]', "subscript", "serials"),
        (TD, "d5", 'api.facade("d").get("serials")', "get", "serials"),
    ],
    ("pkg/handlers.py", "tookwrite", "TS004", "took_ms"): [(TD, "d2", 'r["took_ms"]', "subscript", "took_ms")],
    ("pkg/handlers.py", "otherdisplay", "TS001", "reason"): [
        (TD, "d3", 'r["reason"]', "subscript", "reason"),
        (TD, "d4", 'A.adb("x")["reason"]', "subscript", "reason"),
    ],
    ("pkg/adb.py", "stdoutwrite", "TS004", "stdout"): [("pkg/adb.py", "d6", 'self.shell("x")["stdout"]',
                                                       "subscript", "stdout")],
}
DISPATCH_FORMS = {"subscript": 6, "get": 1}

DIRECT = {
    "pyproject.toml": "",
    "pkg/__init__.py": "",
    "pkg/agent_tools.py": '''\
import strands
from strands import tool


@tool
def battery(device):
    return {"status": "success", "content": [], "level": 80}  # @battery


@strands.tool(name="thermal_probe")
def thermal(device):
    return {"status": "success", "content": [], "celsius": 41}  # @thermal


@strands.tools.tool
def uptime(device):
    return {"status": "success", "content": [], "seconds": 9}  # @uptime


def untagged(device):
    return {"status": "success", "content": [], "hidden_level": 1}  # @untagged


@other.tool  # @dd_shadow
def shadow(device):
    return {"status": "success", "content": [], "shadow_key": 1}  # @shadow


class Probe:
    @tool()
    def voltage(self):
        return {"status": "success", "content": [], "volts": 5}  # @voltage
''',
    "pkg/more_tools.py": '''\
from strands import tool


@tool(name="battery")
def battery(device):
    r = {"status": "success", "content": []}
    r["level"] = 81  # @battery2
    return r
''',
    "tests/test_agent.py": '''\
def test_direct(agent):
    agent.tool.battery(device="d")["level"]  # @a1
    r = agent.tool.thermal(device="d")
    r["celsius"]  # @a2
    agent.tool.thermal_probe(device="d")["celsius"]  # @a3
    agent.tool.uptime()["seconds"]  # @a4
    agent.tool.untagged()["hidden_level"]  # @a5
    agent.tool.shadow()["shadow_key"]  # @a6
    agent.tools.battery()["level"]  # @a7
    tool.battery()["level"]  # @a8
    self.agent.tool.voltage()["volts"]  # @a9
    make().tool.uptime().keys()  # @a10
''',
}
TA = "tests/test_agent.py"
DIRECT_EXPECT = {
    # two producers named battery: a direct tool call reaches both
    # `agent.tools.battery()`, `tool.battery()`: no direct tool calls, and
    # they resolve to nothing: unresolved calls of both producers named
    # battery ("**Calls toolshape cannot resolve.**"), their reads not listed
    ("pkg/agent_tools.py", "battery", "TS001", "level"): [
        (TA, "a1", 'agent.tool.battery(device="d")["level"]', "subscript", "level"),
        (TA, "a7", "agent.tools.battery()", "escape", None), (TA, "a8", "tool.battery()", "escape", None)],
    ("pkg/more_tools.py", "battery2", "TS004", "level"): [
        (TA, "a1", 'agent.tool.battery(device="d")["level"]', "subscript", "level"),
        (TA, "a7", "agent.tools.battery()", "escape", None), (TA, "a8", "tool.battery()", "escape", None)],
    ("pkg/agent_tools.py", "thermal", "TS001", "celsius"): [(TA, "a2", 'r["celsius"]', "subscript", "celsius")],
    ("pkg/agent_tools.py", "uptime", "TS001", "seconds"): [
        (TA, "a4", 'agent.tool.uptime()["seconds"]', "subscript", "seconds"),
        (TA, "a10", "make().tool.uptime().keys()", "whole", None),
    ],
    ("pkg/agent_tools.py", "voltage", "TS001", "volts"): [
        (TA, "a9", 'self.agent.tool.voltage()["volts"]', "subscript", "volts")],
    # `@other.tool`: no tool decorator, so a decorator that hands shadow's
    # results on ("**Decorators.**"); the tool decorators above give nothing
    ("pkg/agent_tools.py", "shadow", "TS001", "shadow_key"): [
        ("pkg/agent_tools.py", "dd_shadow", "other.tool", "escape", None)],
}
DIRECT_FORMS = {"subscript": 4, "whole": 1, "escape": 3}

DECOYS = {
    "pyproject.toml": "",
    "pkg/__init__.py": "",
    "pkg/t.py": '''\
def probe(q):
    return {"status": "success", "content": [], "rssi": -40}  # @probe


def plain(q):
    return {"status": "success", "content": [], "toolUseId": q}


def moved_elsewhere(q):
    r = {"status": "success", "content": []}
    r["late"] = 1
    return dict(r)
''',
    "tests/test_decoys.py": '''\
import json
from pkg.t import probe, plain, moved_elsewhere

top = probe("m")  # @h_top
top["rssi"]  # @m1


def test_rebound(a):
    r = probe("a")  # @h_r1
    while a:
        r = probe("b")  # @h_r2
    r["rssi"]  # @x1
    s = probe("c")  # @h_aug
    s |= {}
    s["rssi"]  # @x2
    t: dict = probe("d")  # @h_ann
    t["rssi"]  # @x3
    a = b = probe("e")  # @h_chain
    a["rssi"]; b["rssi"]  # @x4
    u, v = probe("f"), 1  # @h_tuple
    u["rssi"]  # @x5
    if (w := probe("g")):  # @h_walrus
        w["rssi"]  # @x6
    for x in [probe("h")]:  # @h_list
        x["rssi"]  # @x7

    def inner():
        return s2["rssi"]  # @x8
    s2 = probe("i")  # @h_nested
    s2["rssi"]  # @f1
    f = lambda: s2["rssi"]  # @x9
    [s2["rssi"] for _ in range(2)]  # @x10
    [k for k in s2.keys()]  # @f2

    class C:
        y = s2["rssi"]  # @x11
    top["rssi"]  # @x12
    json.dumps(plain("p"))  # @x13
    plain("p")["toolUseId"]  # @x14
    moved_elsewhere("q")["late"]  # @x15


def test_deleted():
    d = probe("d")  # @h_del
    d["rssi"]  # @x16
    del d


def test_global():
    global top
    top["rssi"]  # @x17


def test_param(r=probe("z")):  # @h_default
    r["rssi"]  # @x18


async def test_await():
    r = await probe("z")
    r["rssi"]  # @x19


def test_once():
    q = probe("y")
    q["rssi"]  # @f3
    q.get("rssi", 0)  # @f4
''',
}
TX = "tests/test_decoys.py"
DECOYS_EXPECT = {
    ("pkg/t.py", "probe", "TS001", "rssi"): [
        (TX, "m1", 'top["rssi"]', "subscript", "rssi"),
        (TX, "f1", 's2["rssi"]', "subscript", "rssi"),
        (TX, "f2", "s2.keys()", "whole", None),
        # `r = await probe("z")`: docs/rules.md "**Awaited calls.**", a name
        # bound once by `R = await C` reads as for `R = C` (no decoy any more)
        (TX, "x19", 'r["rssi"]', "subscript", "rssi"),
        (TX, "f3", 'q["rssi"]', "subscript", "rssi"),
        (TX, "f4", 'q.get("rssi", 0)', "get", "rssi"),
        # the decoy names above: their results are handed on ("**Results handed on.**")
        handed(TX, "h_top", 'probe("m")'), handed(TX, "h_r1", 'probe("a")'), handed(TX, "h_r2", 'probe("b")'),
        handed(TX, "h_aug", 'probe("c")'), handed(TX, "h_ann", 'probe("d")'),
        handed(TX, "h_chain", 'probe("e")'), handed(TX, "h_tuple", 'probe("f")'),
        handed(TX, "h_walrus", 'probe("g")'), handed(TX, "h_list", 'probe("h")'),
        handed(TX, "h_nested", 'probe("i")'), handed(TX, "h_del", 'probe("d")'),
        handed(TX, "h_default", 'probe("z")'),
    ],
}
DECOYS_FORMS = {"subscript": 4, "whole": 1, "get": 1, "escape": 12}

WHOLE = {
    "pyproject.toml": "",
    "pkg/__init__.py": "",
    "pkg/w.py": '''\
def merged(q, **extra):
    return {"status": "success", "content": [], "trace": [], **extra}  # @merged


def written(q, extra):
    res = {"status": "success", "content": []}  # @writtendisplay
    res.update({"frames": 1, **extra})  # @framesupdate
    res.update(extra)  # @plainupdate
    return res
''',
    "tests/test_whole.py": '''\
import json
from pkg.w import merged, written


def test_whole():
    json.dumps(merged("q"))  # @h1
    r = written("q", {})
    json.dumps(r)  # @h2
    r["frames"]  # @h3
    merged("q", hz=5).items()  # @h4
''',
}
TW = "tests/test_whole.py"
WHOLE_EXPECT = {
    ("pkg/w.py", "merged", "TS001", "trace"): [
        (TW, "h1", 'json.dumps(merged("q"))', "whole", None),
        (TW, "h4", 'merged("q", hz=5).items()', "whole", None),
    ],
    # the display's spread: a finding of the same origin, so whole reads reach it
    ("pkg/w.py", "merged", "TS002", None): [
        (TW, "h1", 'json.dumps(merged("q"))', "whole", None),
        (TW, "h4", 'merged("q", hz=5).items()', "whole", None),
    ],
    ("pkg/w.py", "framesupdate", "TS004", "frames"): [
        (TW, "h2", "json.dumps(r)", "whole", None),
        (TW, "h3", 'r["frames"]', "subscript", "frames"),
    ],
    # `**extra` in the same write statement: the same origin
    ("pkg/w.py", "framesupdate", "TS004", None): [(TW, "h2", "json.dumps(r)", "whole", None)],
    # the call's own TS003 key
    ("tests/test_whole.py", "h4", "TS003", "hz"): [(TW, "h4", 'merged("q", hz=5).items()', "whole", None)],
}
WHOLE_FORMS = {"whole": 3, "subscript": 1}

# the content list: `E["content"]` as a load is a `block` read (the value of a
# load `E["content"][i]`, i a decimal literal) or a `content` read, span the
# inner subscript, key null; as a target it is no read.  Like whole reads they
# belong to every finding of every origin of the receiver.
CONTENT = {
    "pyproject.toml": "",
    "pkg/__init__.py": "",
    "pkg/t.py": '''\
def probe(q, **extra):
    return {"status": "success", "content": [{"text": q}], "rssi": -40, **extra}  # @probe


def late(q):
    res = {"status": "success", "content": []}
    res["eta"] = 1  # @etawrite
    return res


def plain(q):
    return {"status": "success", "content": []}
''',
    "tests/test_content.py": '''\
from pkg.t import probe, late, plain


def test_block():
    r = probe("a")
    r["content"][0]  # @k1
    (r)["content"][(1)]  # @k2
    (r["content"])[12]  # @k3
    r["con" "tent"][00]  # @k4
    r["content"][0]["text"] = "x"  # @k5
    probe("b")['content'][0]  # @k6


def test_content():
    r = probe("a")
    assert r["content"] == [{"text": "a"}]  # @n1
    assert len(r["content"]) == 1  # @n2
    r["content"][-1]  # @n3
    r["content"][0:1]  # @n4
    r["content"][i]  # @n5
    r["content"][0x1]  # @n6
    r["content"][1_0]  # @n7
    r["content"][True]  # @n8
    r["content"][0, 1]  # @n9
    r["content"][0] = {}  # @n10
    del r["content"][0]  # @n11
    r[("content")].append({})  # @n12
    for block in r["content"]:  # @n13
        pass


def test_targets():
    r = probe("a")  # @h1
    r["content"] = []  # @x1
    del r["content"]  # @x2
    r["content"] += []  # @x3
    r["content"]: list = []  # @x4
    for r["content"] in [[]]:  # @x5
        pass
    r.get("content")  # @x6
    "content" in r  # @x7
    plain("p")["content"][0]  # @x8
    r["Content"][0]  # @x9

    def inner():
        return r["content"][0]  # @x10


def test_write_origin():
    s = late("q")
    s["content"][0]  # @w1
    len(s["content"])  # @w2
''',
}
TK = "tests/test_content.py"
CONTENT_READS = [
    (TK, "k1", 'r["content"]', "block", None),
    (TK, "k2", '(r)["content"]', "block", None),
    (TK, "k3", 'r["content"]', "block", None),
    (TK, "k4", 'r["con" "tent"]', "block", None),
    (TK, "k5", 'r["content"]', "block", None),
    (TK, "k6", 'probe("b")[\'content\']', "block", None),
] + [(TK, "n%d" % i, 'r["content"]', "content", None) for i in range(1, 14) if i != 12] + [
    (TK, "n12", 'r[("content")]', "content", None),
    # test_targets: `r["content"] = []` is no read, `inner` loads r: handed on
    handed(TK, "h1", 'probe("a")'),
]
CONTENT_EXPECT = {
    # every finding of the origin display, keyed or not (its `**extra` too)
    ("pkg/t.py", "probe", "TS001", "rssi"): CONTENT_READS,
    ("pkg/t.py", "probe", "TS002", None): CONTENT_READS,
    ("pkg/t.py", "etawrite", "TS004", "eta"): [
        (TK, "w1", 's["content"]', "block", None),
        (TK, "w2", 's["content"]', "content", None),
    ],
}
CONTENT_FORMS = {"block": 7, "content": 14, "escape": 1}

# the readings chosen where docs/rules.md leaves a choice (see the report list)
CHOICES = {
    "pyproject.toml": "",
    "pkg/__init__.py": "",
    "pkg/t.py": '''\
def probe(q):
    return {"status": "success", "content": [], "rssi": -40}  # @probe


def cond(q):
    return {"status": "success", "content": [], "band": 5} if q else None  # @cond


async def later(q):
    return {"status": "success", "content": [], "eta": 1}  # @later


def bound():
    return probe("x")
''',
    "tests/test_choices.py": '''\
import json
from pkg.t import probe, cond, later, bound


def setup():
    global G
    G = probe("g")  # @h_global


G["rssi"]  # @c1


class Config:
    r = probe("c")  # @h_class
    v = r["rssi"]  # @c2


def test_forms():
    r = probe("a")  # @h_forms
    r["rssi"]: int = 1  # @c3
    r.keys(1)  # @c4
    r.get("rssi", 0, 1)  # @c5
    dict(r, extra=1)  # @c6
    json.dumps(r, default=str)  # @c7
    0 < "rssi" in r  # @c8
    cond(1)["band"]  # @c9
    later(1)["eta"]  # @c10
    bound()["rssi"]  # @c11
    r.get(key="rssi")  # @c12
    dict(**r)  # @c13
    f"{r['rssi']}"  # @c14


def test_before():
    for i in range(2):
        if i:
            b["rssi"]  # @c15
        b = probe(i)


def test_nonlocal():
    n = None

    def fill():
        nonlocal n
        n = probe("n")  # @h_nonlocal
    n["rssi"]  # @c16
''',
}
TC = "tests/test_choices.py"
CHOICES_EXPECT = {
    ("pkg/t.py", "probe", "TS001", "rssi"): [
        # bound once (in a function, `global G`): the module owns it, its module-level read counts
        (TC, "c1", 'G["rssi"]', "subscript", "rssi"),
        (TC, "c2", 'r["rssi"]', "subscript", "rssi"),
        (TC, "c3", 'r["rssi"]', "store", "rssi"),
        (TC, "c4", "r.keys(1)", "whole", None),
        (TC, "c5", 'r.get("rssi", 0, 1)', "get", "rssi"),
        (TC, "c6", "dict(r, extra=1)", "whole", None),
        (TC, "c7", "json.dumps(r, default=str)", "whole", None),
        (TC, "c8", '0 < "rssi" in r', "in", "rssi"),
        (TC, "c11", 'bound()["rssi"]', "subscript", "rssi"),
        (TC, "c13", "**r", "whole", None),
        (TC, "c14", "r['rssi']", "subscript", "rssi"),
        (TC, "c15", 'b["rssi"]', "subscript", "rssi"),
        # a module's name, a class body's name, `r.get(key="rssi")` (no read
        # form), a name bound twice (through `nonlocal`): handed on
        handed(TC, "h_global", 'probe("g")'), handed(TC, "h_class", 'probe("c")'),
        handed(TC, "h_forms", 'probe("a")'), handed(TC, "h_nonlocal", 'probe("n")'),
    ],
    ("pkg/t.py", "later", "TS001", "eta"): [(TC, "c10", 'later(1)["eta"]', "subscript", "eta")],
}
CHOICES_FORMS = {"subscript": 6, "store": 1, "whole": 4, "get": 1, "in": 1, "escape": 4}

# possible reads (docs/rules.md "**Possible reads.**"): keyed reads on results
# the SDK hands on, which no producer is traced to; each is a read, with
# "possible": true, of every finding of its key (its code and origin aside)
POSSIBLE = {
    "pyproject.toml": "",
    "pkg/__init__.py": "",
    "pkg/tools.py": '''\
from strands import tool


@tool
def probe(q):
    return {"status": "success", "content": [], "rssi": -40, "band": 5}  # @probe


def late(q):
    r = {"status": "success", "content": []}
    r["rssi"] = 1  # @rssiwrite
    return r


def quiet(q):
    return {"status": "success", "content": [], "muted": 1}  # toolshape: ignore[TS001]


def wrapped(q):
    return {"status": "success", "content": [], "toolResult": {}}  # @wrapped


def _ok(text, **extra):
    return {"status": "success", "content": [{"text": text}], **extra}


def listing():
    return _ok("x", band=2)  # @bandcall
''',
    "pkg/frontend.py": '''\
import json
from typing import Optional
from strands import hooks
from strands.hooks import AfterToolCallEvent, BeforeToolCallEvent
from strands.types import tools as T
from strands.types.tools import ToolResult


def render(tool_result, message):
    tool_result["rssi"]  # @p1
    tool_result.get("band")  # @p2
    "rssi" in tool_result  # @p3
    "band" not in tool_result  # @p4
    tool_result["rssi"] = 2  # @p5
    tool_result['band'] += 1  # @p6
    del tool_result["rssi"]  # @p7
    tool_result.pop("band", None)  # @p8
    tool_result.setdefault("rs" "si", 0)  # @p9
    tool_result["other"]  # @n1
    tool_result["muted"]  # @n2
    tool_result["content"][0]  # @n3
    len(tool_result["content"])  # @n4
    list(tool_result.keys())  # @n5
    json.dumps(tool_result)  # @n6
    x = {**tool_result}  # @n7
    tool_result["status"]  # @n8
    message.toolResult["rssi"]  # @p10
    message.last_tool_result.get("band")  # @p11
    message["toolResult"]["rssi"]  # @p12
    message['toolResult'].get("band")  # @p13
    message["content"][0]["toolResult"]["rssi"]  # @p14
    make().tool_result["rssi"]  # @p15
    tool_results["band"]  # @p16
    tool_result["toolResult"]["rssi"]  # @p17
    ToolResult["rssi"]  # @n9
    TOOL_RESULT["rssi"]  # @n10
    message["toolresult"]["rssi"]  # @n11
    message["toolResult"] = {"rssi": 1}  # @n12
    del message["toolResult"]  # @n13
    message.toolResult()["rssi"]  # @n14
    message.tool_result_of["rssi"]  # @p18
    (message.toolResult)["band"]  # @p19
    for item in tool_result:
        item["rssi"]  # @n15


def on_result(p: ToolResult, /, result: ToolResult, other: T.ToolResult, opt: "ToolResult",
              maybe: Optional[ToolResult], kw: ToolResult, *rest: ToolResult, only: ToolResult,
              **more: ToolResult):
    p["band"]  # @a3
    kw.get("band")  # @a8
    "band" in only  # @a9
    more["band"]  # @n31
    result["rssi"]  # @a1
    other.get("band")  # @a2
    opt["rssi"]  # @n16
    maybe["rssi"]  # @n17
    rest["band"]  # @n30
    [result["rssi"] for _ in range(1)]  # @n18
    [k for k in result.get("band", ())]  # @a4

    def inner(x=result["band"]):  # @a5
        return result["rssi"]  # @n19

    def inner2(res: ToolResult, result):
        res["band"]  # @a6
        return result["rssi"]  # @n20

    def inner3():
        return res["band"]  # @n21
    f = lambda: result["rssi"]  # @n22

    class C:
        v = result["rssi"]  # @n23
    result["toolResult"]  # @a7


def after(event: AfterToolCallEvent, ev2: hooks.AfterToolInvocationEvent, ev3: BeforeToolCallEvent, plain,
          *evs: AfterToolCallEvent):
    evs.result["rssi"]  # @n32
    event.result["rssi"]  # @e1
    ev2.result.get("band")  # @e2
    ev3.result["rssi"]  # @n24
    plain.result["rssi"]  # @n25
    event.results["rssi"]  # @n26
    event.result["content"][0]  # @n27
    [event.result["band"] for _ in range(1)]  # @n28
    event.tool_result["rssi"]  # @e3

    def nested():
        return event.result["rssi"]  # @n29


def both(tool_result: ToolResult):
    tool_result["rssi"]  # @b1


def exclusions(agent):
    tool_result = agent.run()
    tool_result["rssi"]  # @x1

    def nested():
        return tool_result["band"]  # @x2
    last_tool_result = fetch()
    last_tool_result = fetch()
    last_tool_result["rssi"]  # @y1
    typed_tool_result: dict = fetch()
    typed_tool_result["rssi"]  # @y2
    a_tool_result = b_tool_result = fetch()
    a_tool_result["rssi"]  # @y3
    dict_tool_result = {"rssi": 1}
    dict_tool_result["rssi"]  # @y4
    for loop_tool_result in fetch():
        loop_tool_result["band"]  # @y5


async def awaited(agent):
    aw_tool_result = await agent.run()
    aw_tool_result["rssi"]  # @y6


tool_result_cache = load()
tool_result_cache["rssi"]  # @x3


def g1():
    tool_result_cache["band"]  # @x4


def g2():
    global tool_result_g
    tool_result_g = fetch()


tool_result_g["rssi"]  # @x5


def g3():
    tool_result_n = fetch()

    def inner():
        nonlocal tool_result_n
        tool_result_n = other()
    tool_result_n["rssi"]  # @y7


class Holder:
    tool_result_h = fetch()
    v = tool_result_h["band"]  # @x6

    def m(self):
        return tool_result_h["rssi"]  # @y8
''',
    "tests/test_front.py": '''\
from pkg.tools import probe


def test_traced():
    traced_tool_result = probe("q")
    traced_tool_result["rssi"]  # @t1
    r = probe("q")
    assert "rssi" in r == "rssi" in tool_result  # @t2
''',
}
FE = "pkg/frontend.py"
TF = "tests/test_front.py"
_RSSI = [(FE, "p1", 'tool_result["rssi"]', "subscript"), (FE, "p3", '"rssi" in tool_result', "in"),
         (FE, "p5", 'tool_result["rssi"]', "store"), (FE, "p7", 'tool_result["rssi"]', "delete"),
         (FE, "p9", 'tool_result.setdefault("rs" "si", 0)', "setdefault"),
         (FE, "p10", 'message.toolResult["rssi"]', "subscript"),
         (FE, "p12", 'message["toolResult"]["rssi"]', "subscript"),
         (FE, "p14", 'message["content"][0]["toolResult"]["rssi"]', "subscript"),
         (FE, "p15", 'make().tool_result["rssi"]', "subscript"),
         (FE, "p17", 'tool_result["toolResult"]["rssi"]', "subscript"),
         (FE, "p18", 'message.tool_result_of["rssi"]', "subscript"),
         (FE, "a1", 'result["rssi"]', "subscript"), (FE, "e1", 'event.result["rssi"]', "subscript"),
         (FE, "e3", 'event.tool_result["rssi"]', "subscript"), (FE, "b1", 'tool_result["rssi"]', "subscript"),
         (FE, "y1", 'last_tool_result["rssi"]', "subscript"), (FE, "y2", 'typed_tool_result["rssi"]', "subscript"),
         (FE, "y3", 'a_tool_result["rssi"]', "subscript"), (FE, "y4", 'dict_tool_result["rssi"]', "subscript"),
         # no y6: `aw_tool_result = await agent.run()` binds a marked name once by
         # `R = await C`, no possible receiver (docs/rules.md "**Possible reads.**",
         # "**Awaited calls.**")
         (FE, "y7", 'tool_result_n["rssi"]', "subscript"),
         (FE, "y8", 'tool_result_h["rssi"]', "subscript"),
         # a chained comparison: each pair a read, span the whole comparison
         (TF, "t2", '"rssi" in r == "rssi" in tool_result', "in")]
_BAND = [(FE, "p2", 'tool_result.get("band")', "get"), (FE, "p4", '"band" not in tool_result', "not-in"),
         (FE, "p6", "tool_result['band']", "store"), (FE, "p8", 'tool_result.pop("band", None)', "pop"),
         (FE, "p11", 'message.last_tool_result.get("band")', "get"),
         (FE, "p13", "message['toolResult'].get(\"band\")", "get"),
         (FE, "p16", 'tool_results["band"]', "subscript"), (FE, "p19", '(message.toolResult)["band"]', "subscript"),
         (FE, "a2", 'other.get("band")', "get"), (FE, "a3", 'p["band"]', "subscript"),
         (FE, "a8", 'kw.get("band")', "get"), (FE, "a9", '"band" in only', "in"),
         (FE, "a4", 'result.get("band", ())', "get"), (FE, "a5", 'result["band"]', "subscript"),
         (FE, "a6", 'res["band"]', "subscript"), (FE, "e2", 'ev2.result.get("band")', "get"),
         (FE, "y5", 'loop_tool_result["band"]', "subscript")]
POSSIBLE_RSSI = [r + ("rssi", True) for r in _RSSI]
POSSIBLE_BAND = [r + ("band", True) for r in _BAND]
POSSIBLE_EXPECT = {
    ("pkg/tools.py", "probe", "TS001", "rssi"): POSSIBLE_RSSI + [
        # the traced receivers' reads: the call's, not possible (`r` and a
        # marked name bound once by `R = C`)
        (TF, "t1", 'traced_tool_result["rssi"]', "subscript", "rssi"),
        (TF, "t2", '"rssi" in r == "rssi" in tool_result', "in", "rssi"),
    ],
    ("pkg/tools.py", "rssiwrite", "TS004", "rssi"): POSSIBLE_RSSI,
    ("pkg/tools.py", "probe", "TS001", "band"): POSSIBLE_BAND,
    ("pkg/tools.py", "bandcall", "TS003", "band"): POSSIBLE_BAND,
    # a key `toolResult` is a key like any other: `X["toolResult"]` on a
    # possible receiver reads it (and is a possible receiver itself)
    ("pkg/tools.py", "wrapped", "TS001", "toolResult"): [
        (FE, "p17", 'tool_result["toolResult"]', "subscript", "toolResult", True),
        (FE, "a7", 'result["toolResult"]', "subscript", "toolResult", True),
    ],
}
POSSIBLE_FORMS = {"subscript": 26, "store": 2, "delete": 1, "get": 7, "pop": 1, "setdefault": 1, "in": 4,
                  "not-in": 1}

# the files searched for the possible reads of a key: those whose text holds
# a marker and that key between quotes as written
POSSIBLE_FILES = {
    "pyproject.toml": "",
    "pkg/__init__.py": "",
    "pkg/tools.py": '''\
def probe(q):
    return {"status": "success", "content": [], "rssi": -40, "band": 5}  # @probe


def quiet(q):
    return {"status": "success", "content": [], "muted": 1}  # toolshape: ignore[TS001]
''',
    "pkg/f_spelled.py": '''\
def on_result(tool_result):
    return tool_result["rs" "si"]  # @s1
''',
    "pkg/f_comment.py": '''\
# reads "rssi" of the results handed on
def on_result(tool_result):
    return tool_result["rs" "si"]  # @s2
''',
    "pkg/f_other.py": '''\
def on_result(tool_result):
    tool_result["band"]  # @s3
    return tool_result["r\\x73si"]  # @s4
''',
    "pkg/f_no_marker.py": '''\
def on_block(block):
    return block["tool" "Result"]["rssi"]  # @s5
''',
    "pkg/f_suppressed_key.py": '''\
def on_result(tool_result):
    tool_result["muted"]  # @s6
    return tool_result["rs" "si"]  # @s7
''',
    "pkg/f_quotes.py": """\
def on_result(tool_result):
    tool_result['rssi']  # @s8
    tool_result[u"band"]  # @s9
    return tool_result[\"\"\"rssi\"\"\"]  # @s10
""",
    "pkg/f_marker_comment.py": '''\
"""A ToolResult handler."""


def on_block(block):
    return block["tool" "Result"]["rssi"]  # @s11
''',
    # `X["toolResult"]` by its index as written: exactly `"toolResult"` or
    # `'toolResult'`, parentheses seen through; no concatenation, prefix,
    # escape or triple quotes (the file is searched: it holds the marker)
    "pkg/f_index_spelling.py": '''\
def on_message(message):
    message["toolResult"]["rssi"]  # @i1
    message['toolResult']["rssi"]  # @i2
    message[("toolResult")]["rssi"]  # @i3
    message[( ('toolResult') )].get("band")  # @i4
    message["tool" "Result"]["rssi"]  # @i5
    message[r"toolResult"]["rssi"]  # @i6
    message["tool\\x52esult"]["rssi"]  # @i7
    message[u'toolResult'].get("band")  # @i8
    message["""toolResult"""]["band"]  # @i9
    message[("tool" "Result")]["band"]  # @i10
    message[b"toolResult"]["band"]  # @i11
    return message[R"toolResult"]["band"]  # @i12
''',
    # `X["toolResult"]` only as the right of `in` / `not in`: a possible
    # receiver like any other (no other use of it in the file needed)
    "pkg/f_in_only.py": '''\
def on_message(message):
    return "rssi" in message["toolResult"] or 'band' not in message["toolResult"]  # @i13
''',
    "pkg/f_unclosed.py": '''\
def on_result(tool_result):
    return tool_result["\\x72ssi"], "\\x72ssi"  # @s12
# "rssi
''',
}
_FILES_RSSI = [("pkg/f_comment.py", "s2", 'tool_result["rs" "si"]', "subscript"),
               # s4: f_other.py holds "band" between quotes, not "rssi"
               ("pkg/f_quotes.py", "s8", "tool_result['rssi']", "subscript"),
               ("pkg/f_quotes.py", "s10", 'tool_result["""rssi"""]', "subscript"),
               # s11: `block["tool" "Result"]` is no possible receiver (its index
               # not written exactly `"toolResult"`), the ToolResult docstring
               # aside; nor are i5-i7
               ("pkg/f_index_spelling.py", "i1", 'message["toolResult"]["rssi"]', "subscript"),
               ("pkg/f_index_spelling.py", "i2", 'message[\'toolResult\']["rssi"]', "subscript"),
               ("pkg/f_index_spelling.py", "i3", 'message[("toolResult")]["rssi"]', "subscript"),
               ("pkg/f_in_only.py", "i13", '"rssi" in message["toolResult"]', "in")]
_FILES_BAND = [("pkg/f_other.py", "s3", 'tool_result["band"]', "subscript"),
               ("pkg/f_quotes.py", "s9", 'tool_result[u"band"]', "subscript"),
               # i8-i12: a prefix, triple quotes, concatenation in parentheses, bytes
               ("pkg/f_index_spelling.py", "i4", 'message[( (\'toolResult\') )].get("band")', "get"),
               ("pkg/f_in_only.py", "i13", '\'band\' not in message["toolResult"]', "not-in")]
POSSIBLE_FILES_EXPECT = {
    ("pkg/tools.py", "probe", "TS001", "rssi"): [r + ("rssi", True) for r in _FILES_RSSI],
    ("pkg/tools.py", "probe", "TS001", "band"): [r + ("band", True) for r in _FILES_BAND],
}
POSSIBLE_FILES_FORMS = {"subscript": 8, "get": 1, "in": 1, "not-in": 1}

# aliases (docs/rules.md "**Possible reads.**", "A name bound to one of
# these is one too"): a name read where it resolves to the bindings of its
# owning scope, one of them a plain one-target `N = E`, E (parentheses seen
# through) `X["toolResult"]`, a marked attribute or a hook event's
# `P.result` judged where E stands; next to the decoys: E a call, a name or
# another expression, `N: T = E`, `a = N = E`, `N, z = E, 1`, `[N] = [E]`,
# `N |= E`, `(N := E)`, a `P.result` whose P is no annotated parameter of the
# def holding the assignment, a class body seen from its methods, a local of
# the same name
POSSIBLE_ALIAS = {
    "pyproject.toml": "",
    "pkg/__init__.py": "",
    "pkg/tools.py": '''\
def probe(q):
    return {"status": "success", "content": [], "path": "/x", "size": 1}  # @probe
''',
    "pkg/hooks.py": '''\
from strands.hooks import AfterToolCallEvent


def on_message(message, tool_result):
    tr = message["toolResult"]
    tr.get("path")  # @l1
    "size" in tr  # @l2
    tr["other"]  # @n1
    tr["content"][0]  # @n2
    r = message.tool_result
    r["path"]  # @l3
    paren = (message['toolResult'])
    paren["size"]  # @l4
    deeper = message["toolResult"]["inner"]
    deeper["path"]  # @n3
    chained = tr
    chained["path"]  # @n4
    copied = tool_result
    copied["size"]  # @n19
    called = message.toolResult()
    called["path"]  # @n5
    typed: dict = message["toolResult"]
    typed["path"]  # @n6
    a = b = message["toolResult"]
    a["path"] or b["size"]  # @n7
    t, z = message["toolResult"], 1
    t["path"]  # @n8
    (w := message["toolResult"])
    w["path"]  # @n9
    [lst] = [message["toolResult"]]
    lst["path"]  # @n10
    aug = {}
    aug |= message["toolResult"]
    aug["path"]  # @n11
    cond = message["toolResult"] if message else None
    cond["path"]  # @n12
    maybe = message.get("toolResult")
    maybe["path"]  # @n13
    spelled = message["tool" "Result"]
    spelled["path"]  # @n14


def twice(message):
    tr = fetch()
    tr["path"]  # @l5
    tr = message["toolResult"]


block_tr = current["toolResult"]
block_tr["path"]  # @l6


def module_alias():
    return block_tr["size"]  # @l7


def shadow():
    block_tr = fetch()
    return block_tr["path"]  # @n15


def outer(message):
    inner_tr = message.last_tool_result

    def inner():
        return inner_tr.get("path")  # @l8
    lam = lambda: inner_tr["size"]  # @l9
    [inner_tr["path"] for _ in range(1)]  # @l10
    return inner, lam


def outer_nonlocal(message):
    got = None

    def grab():
        nonlocal got
        got = message["toolResult"]
    grab()
    return got["size"]  # @l11


def on_after(event: AfterToolCallEvent):
    res = event.result
    res["path"]  # @l12

    def nested():
        return res["size"]  # @l13
    return nested


def on_plain(event):
    res = event.result
    return res["path"]  # @n16


def hook_global(event: AfterToolCallEvent):
    global LAST
    LAST = event.result


def read_last():
    return LAST["size"]  # @l14


def hook_nested(event: AfterToolCallEvent):
    def set_it():
        res2 = event.result
        return res2["path"]  # @n17
    return set_it


class Holder:
    held = current["toolResult"]
    v = held["path"]  # @l15

    def m(self):
        return held["size"]  # @n18


def both(message):
    my_tool_result = message["toolResult"]
    my_tool_result["path"]  # @l16
''',
}
HK = "pkg/hooks.py"
_ALIAS_PATH = [(HK, "l1", 'tr.get("path")', "get"), (HK, "l3", 'r["path"]', "subscript"),
               (HK, "l5", 'tr["path"]', "subscript"), (HK, "l6", 'block_tr["path"]', "subscript"),
               (HK, "l8", 'inner_tr.get("path")', "get"), (HK, "l10", 'inner_tr["path"]', "subscript"),
               (HK, "l12", 'res["path"]', "subscript"), (HK, "l15", 'held["path"]', "subscript"),
               (HK, "l16", 'my_tool_result["path"]', "subscript")]
_ALIAS_SIZE = [(HK, "l2", '"size" in tr', "in"), (HK, "l4", 'paren["size"]', "subscript"),
               (HK, "l7", 'block_tr["size"]', "subscript"), (HK, "l9", 'inner_tr["size"]', "subscript"),
               (HK, "l11", 'got["size"]', "subscript"), (HK, "l13", 'res["size"]', "subscript"),
               (HK, "l14", 'LAST["size"]', "subscript")]
POSSIBLE_ALIAS_EXPECT = {
    ("pkg/tools.py", "probe", "TS001", "path"): [r + ("path", True) for r in _ALIAS_PATH],
    ("pkg/tools.py", "probe", "TS001", "size"): [r + ("size", True) for r in _ALIAS_SIZE],
}
POSSIBLE_ALIAS_FORMS = {"subscript": 13, "get": 2, "in": 1}

# dispatch by a constant ("**Dispatch by a constant.**"): a receiver call
# with a keyword P=C reaches only the returns that can run when P == C
def _d(key):
    return '{"status": "success", "content": [], "%s": 1}' % key


CONST_DISPATCH = {
    "pyproject.toml": "",
    "pkg/__init__.py": "",
    "pkg/handlers.py": """\
def _list():
    return {"status": "success", "content": [], "serials": []}  # @list


def _locked(serial):
    return {"status": "success", "content": [], "locked": True}  # @locked


def _shell(cmd):
    r = {"status": "success", "content": []}
    r["stdout"] = ""  # @stdout
    return r
""",
    "pkg/adb.py": """\
from strands import tool
from .handlers import _list, _locked, _shell


@tool
def adb(action, serial=None, **kwargs):
    note = kwargs.get("note")
    if action == "list":
        return _list()
    if "locked" == action:
        return _locked(serial)
    if (action == "shell"):
        return _shell(kwargs.get("command"))
    return {"status": "error", "content": [], "supported": []}  # @unknown


def chain(action):
    if action == "a":
        return %(alpha)s  # @alpha
    elif action == 'b':
        return %(beta)s  # @beta
    elif action == "c" or action == "d":
        return %(gamma)s  # @gamma
    else:
        return %(omega)s  # @omega


def nested(mode, level="lo"):
    if mode == "x":
        if level == "hi":
            return %(x_hi)s  # @xhi
        return %(x_lo)s  # @xlo
    else:
        for _ in range(1):
            if mode != "y":
                return %(not_x)s  # @notx
    with open("f") as fh:
        if "z" == mode:
            return %(z_key)s  # @zkey
    return %(tail)s  # @tail
""" % {k: _d(k) for k in ("alpha", "beta", "gamma", "omega", "x_hi", "x_lo", "not_x", "z_key", "tail")},
    "pkg/more_tools.py": """\
from strands import tool


@tool
def adb(verb, **kwargs):
    if verb == "list":
        return %(verb_list)s  # @verblist
    return %(verb_other)s  # @verbother
""" % {k: _d(k) for k in ("verb_list", "verb_other")},
    "pkg/guards.py": """\
from .adb import chain


def guarded(mode):
    if mode == "strict":
        raise ValueError(mode)
    return %(lenient)s  # @lenient


def fallthrough(mode):
    if mode == "a":
        print(mode)
    return %(ft)s  # @ft


def rebound(action):
    action = action.lower()
    if action == "a":
        return %(ra)s  # @ra
    return %(rb)s  # @rb


def rebound_nested(action):
    def fix():
        nonlocal action
        action = "a"
    fix()
    if action == "a":
        return %(na)s  # @na
    return %(nb)s  # @nb


def by_kwargs(**action):
    if action == "a":
        return %(kwa)s  # @kwa
    return %(kwb)s  # @kwb


def by_args(*action):
    if action == "a":
        return %(aa)s  # @aa
    return %(ab)s  # @ab


def positional_only(action, /, **rest):
    if action == "a":
        return %(poa)s  # @poa
    return %(pob)s  # @pob


def two(kind, mode):
    if kind == "k1":
        if mode == "m1":
            return %(k1m1)s  # @k1m1
        return %(k1other)s  # @k1other
    if mode == "m2":
        return %(m2)s  # @m2
    return %(rest)s  # @rest


def outer(action):
    if action == "a":
        return chain(action)
    return %(outer_b)s  # @outerb


def outer_const():
    return chain(action="b")


class Dev:
    def run(self, op):
        if op == "x":
            return %(run_x)s  # @runx
        return %(run_y)s  # @runy

    def check(self):
        self.run(op="x")["run_x"]  # @s1
        return self.run(op="x")["run_y"]  # @s2
""" % {k: _d(k) for k in ("lenient", "ft", "ra", "rb", "na", "nb", "kwa", "kwb", "aa", "ab", "poa", "pob",
                         "k1m1", "k1other", "m2", "rest", "outer_b", "run_x", "run_y")},
    "tests/test_dispatch.py": """\
from pkg.adb import adb, chain, nested
from pkg.guards import (guarded, fallthrough, rebound, rebound_nested, by_kwargs, by_args, positional_only,
                        two, outer, outer_const)

ACTION = "a"


def test_adb(agent):
    r = adb(action="list")
    r["serials"]  # @t1
    r["locked"]  # @t2
    r.get("supported")  # @t3
    adb(action="locked", serial="s")["locked"]  # @t4
    adb(action="locked")["serials"]  # @t5
    adb(action="shell", command="ls")["stdout"]  # @t6
    adb(action="reboot")["supported"]  # @t7
    adb(action="reboot")["serials"]  # @t8
    adb("list")["supported"]  # @t9
    adb(action=ACTION)["supported"]  # @t10
    adb(action=f"list")["supported"]  # @t11
    adb(action="li" "st")["serials"]  # @t12
    adb(action="\\x6cist")["supported"]  # @t13
    agent.tool.adb(action="list")["serials"]  # @t14
    agent.tool.adb(action="list")["supported"]  # @t15
    agent.tool.adb(action="list")["verb_list"]  # @t16
    agent.tool.adb(verb="list")["verb_other"]  # @t17
    agent.tool.adb(verb="list")["supported"]  # @t18
    list(adb(action="list").keys())  # @t19
    adb(action="reboot", **opts)["supported"]  # @t20
    adb(action="list", **opts)["supported"]  # @t21


def test_chain():
    c = chain(action="a")
    c["alpha"]  # @c1
    c["beta"]  # @c2
    c["gamma"]  # @c3
    c["omega"]  # @c4
    chain(action="b")["beta"]  # @c5
    chain(action="b")["gamma"]  # @c6
    chain(action="c")["gamma"]  # @c7
    chain(action="c")["omega"]  # @c8
    chain(action="c")["alpha"]  # @c9
    chain(action="z").keys()  # @c10
    chain(action=b"a")["beta"]  # @c11
    chain(action=u'a')["beta"]  # @c12


def test_nested():
    nested(mode="x")["x_lo"]  # @n1
    nested(mode="x")["tail"]  # @n2
    nested(mode="x")["not_x"]  # @n3
    nested(mode="x", level="hi")["x_lo"]  # @n4
    nested(mode="x", level="lo")["x_hi"]  # @n5
    nested(mode="z")["not_x"]  # @n6
    nested(mode="z")["z_key"]  # @n7
    nested(mode="z")["tail"]  # @n8
    nested(mode="y")["z_key"]  # @n9
    nested(mode="y")["not_x"]  # @n10


def test_guards():
    guarded(mode="strict").keys()  # @g1
    guarded(mode="strict")["lenient"]  # @g2
    guarded(mode="soft")["lenient"]  # @g3
    fallthrough(mode="a")["ft"]  # @g4
    rebound(action="a")["rb"]  # @g5
    rebound_nested(action="b")["na"]  # @g6
    by_kwargs(action="b")["kwa"]  # @g7
    by_args(action="b")["aa"]  # @g8
    positional_only(action="b")["poa"]  # @g9
    two(kind="k1", mode="m1")["k1other"]  # @g10
    two(kind="k1", mode="m1")["m2"]  # @g11
    two(kind="k2", mode="m2")["m2"]  # @g12
    two(kind="k2", mode="m2")["rest"]  # @g13
    two(kind="k2", mode="m1")["rest"]  # @g14
    two(kind="k2", mode="m1")["m2"]  # @g15
    two(mode="m1", kind="k1")["k1m1"]  # @g16
    two(kind="k1")["k1m1"]  # @g17
    outer(action="a")["beta"]  # @g18
    outer(action="a")["outer_b"]  # @g19
    outer_const()["alpha"]  # @g20
""",
}
TQ = "tests/test_dispatch.py"
TG = "pkg/guards.py"


def _sub(tag, recv, key, rel=TQ):
    return (rel, tag, '%s["%s"]' % (recv, key), "subscript", key)


CONST_DISPATCH_EXPECT = {
    ("pkg/handlers.py", "list", "TS001", "serials"): [
        _sub("t1", "r", "serials"), _sub("t12", 'adb(action="li" "st")', "serials"),
        _sub("t14", 'agent.tool.adb(action="list")', "serials"),
        (TQ, "t19", 'adb(action="list").keys()', "whole", None)],
    ("pkg/handlers.py", "locked", "TS001", "locked"): [_sub("t4", 'adb(action="locked", serial="s")', "locked")],
    ("pkg/handlers.py", "stdout", "TS004", "stdout"): [_sub("t6", 'adb(action="shell", command="ls")', "stdout")],
    ("pkg/adb.py", "unknown", "TS001", "supported"): [
        _sub("t7", 'adb(action="reboot")', "supported"), _sub("t9", 'adb("list")', "supported"),
        _sub("t10", "adb(action=ACTION)", "supported"), _sub("t11", 'adb(action=f"list")', "supported"),
        _sub("t18", 'agent.tool.adb(verb="list")', "supported"),
        _sub("t20", 'adb(action="reboot", **opts)', "supported")],
    ("pkg/more_tools.py", "verblist", "TS001", "verb_list"): [
        _sub("t16", 'agent.tool.adb(action="list")', "verb_list")],
    ("pkg/adb.py", "alpha", "TS001", "alpha"): [_sub("c1", "c", "alpha"), _sub("g20", "outer_const()", "alpha")],
    ("pkg/adb.py", "beta", "TS001", "beta"): [
        _sub("c5", 'chain(action="b")', "beta"), _sub("c11", 'chain(action=b"a")', "beta"),
        _sub("g18", 'outer(action="a")', "beta")],
    ("pkg/adb.py", "gamma", "TS001", "gamma"): [
        _sub("c7", 'chain(action="c")', "gamma"), (TQ, "c10", 'chain(action="z").keys()', "whole", None)],
    ("pkg/adb.py", "omega", "TS001", "omega"): [
        _sub("c8", 'chain(action="c")', "omega"), (TQ, "c10", 'chain(action="z").keys()', "whole", None)],
    ("pkg/adb.py", "xlo", "TS001", "x_lo"): [
        _sub("n1", 'nested(mode="x")', "x_lo"), _sub("n4", 'nested(mode="x", level="hi")', "x_lo")],
    ("pkg/adb.py", "notx", "TS001", "not_x"): [
        _sub("n6", 'nested(mode="z")', "not_x"), _sub("n10", 'nested(mode="y")', "not_x")],
    ("pkg/adb.py", "zkey", "TS001", "z_key"): [_sub("n7", 'nested(mode="z")', "z_key")],
    ("pkg/adb.py", "tail", "TS001", "tail"): [_sub("n8", 'nested(mode="z")', "tail")],
    (TG, "lenient", "TS001", "lenient"): [_sub("g3", 'guarded(mode="soft")', "lenient")],
    (TG, "ft", "TS001", "ft"): [_sub("g4", 'fallthrough(mode="a")', "ft")],
    (TG, "rb", "TS001", "rb"): [_sub("g5", 'rebound(action="a")', "rb")],
    (TG, "na", "TS001", "na"): [_sub("g6", 'rebound_nested(action="b")', "na")],
    (TG, "kwa", "TS001", "kwa"): [_sub("g7", 'by_kwargs(action="b")', "kwa")],
    (TG, "aa", "TS001", "aa"): [_sub("g8", 'by_args(action="b")', "aa")],
    (TG, "k1other", "TS001", "k1other"): [_sub("g10", 'two(kind="k1", mode="m1")', "k1other")],
    (TG, "m2", "TS001", "m2"): [_sub("g12", 'two(kind="k2", mode="m2")', "m2")],
    (TG, "rest", "TS001", "rest"): [_sub("g14", 'two(kind="k2", mode="m1")', "rest")],
    (TG, "k1m1", "TS001", "k1m1"): [
        _sub("g16", 'two(mode="m1", kind="k1")', "k1m1"), _sub("g17", 'two(kind="k1")', "k1m1")],
    (TG, "runx", "TS001", "run_x"): [_sub("s1", 'self.run(op="x")', "run_x", TG)],
}
CONST_DISPATCH_FORMS = {"subscript": 37, "whole": 2}


# escapes (docs/rules.md "**Escapes.**"): a use as a value of a producer that
# is no tool (a name, `A.name` of an imported module, `self.m` / `cls.m` in a
# method of its class, `K().m`, `N.m` with `N = K()` bound once in the scope
# reading it) is a read of form escape, key null, span the expression
# without the parentheses around it, of every origin a call of it without
# arguments reaches (chains followed whole, no dispatch), so of every finding
# of those origins (a TS002 spread of the display too); decoys: tools (every
# spelling), calls `F(...)` / `(F)(...)`, `F.__name__`, `F.cache_clear()`,
# def names, imports, a local or a parameter shadowing F, a module-level name
# bound twice (not named like a producer), `F = ...` in another scope, a
# target (`N.m = v`, `del N.m`), a function that is no producer, a producer
# whose only finding is suppressed; `K.m` on the class, an inherited method,
# the instance name bound twice, annotated or read in a nested def resolve
# to nothing: unresolved uses ("**Uses as a value toolshape cannot
# resolve**"), escapes too, but only when given another name (`k =
# Runner.run_task`, `return r.run_task`) or called through a wrapper; a plain
# use so (an expression statement) is not seen.
ESCAPES = {
    "pyproject.toml": "",
    "pkg/__init__.py": "",
    "pkg/jobs.py": '''\
import functools
import strands
from strands import tool


def job(q):
    return {"status": "success", "content": [], "rows": [], **extra}  # @job


def relay(q):
    return job(q)


def pick(action):
    if action == "a":
        return {"status": "success", "content": [], "alpha": 1}  # @alpha
    return {"status": "success", "content": [], "beta": 2}  # @beta


async def later(q):
    return {"status": "success", "content": [], "eta": 3}  # @later


@tool
def tool_a(q):
    return {"status": "success", "content": [], "ta": 1}  # @tool_a


@tool(name="bee")
def tool_b(q):
    return {"status": "success", "content": [], "tb": 1}  # @tool_b


@strands.tool
def tool_c(q):
    return {"status": "success", "content": [], "tc": 1}  # @tool_c


@strands.tools.tool(description="d")
def tool_d(q):
    return {"status": "success", "content": [], "td": 1}  # @tool_d


@functools.cache  # @e_deco
def cached(q):
    return {"status": "success", "content": [], "hits": 1}  # @cached


def quiet(q):
    return {"status": "success", "content": [], "hush": 1}  # toolshape: ignore[TS001]


def nothing(q):
    return None


class Runner:
    def run_task(self, q):
        return {"status": "success", "content": [], "task": 1}  # @task

    @classmethod
    def make(cls, q):
        return {"status": "success", "content": [], "made": 1}  # @made

    @tool
    def tooled(self, q):
        return {"status": "success", "content": [], "tm": 1}  # @tooled

    def submit(self, executor):
        executor.submit(self.run_task, "t")  # @e_self
        self.run_task("t")  # @d_self_call
        n = self.run_task.__name__  # @d_self_attr
        return [self.tooled]  # @d_tool_method

    @classmethod
    def factory(cls):
        return (cls.make)  # @e_cls


class Child(Runner):
    pass


HANDLERS = [job, relay]  # @e_list
TABLE = {"p": pick}  # @e_dict
''',
    "tests/test_jobs.py": '''\
import pkg.jobs as J
from pkg import jobs
from pkg.jobs import job, relay, pick, later, tool_a, tool_b, cached, quiet, nothing, Runner, Child
from pkg.jobs import tool_c as tc, tool_d

try:
    from pkg.jobs import job as maybe
except ImportError:
    maybe = None

fn = job  # @e_assign
pair = (relay, 1)  # @e_tuple
print(maybe)  # @d_twice
fn2 = ((job))  # @e_paren


def test_values(executor):
    executor.submit(job, "q")  # @e_arg
    executor.submit(fn=later)  # @e_kw
    assert J.job is not None  # @e_module
    x = jobs.pick  # @e_module2
    agent = Agent(tools=[tool_a, tool_b, tc, tool_d, J.tool_a])  # @d_tools
    handlers = [cached]  # @e_memo
    [quiet, nothing]  # @d_quiet
    job("q")  # @d_call
    (job)("q")  # @d_pcall
    name = job.__name__  # @d_attr
    job.cache_clear()  # @d_attr2
    relay("q")["rows"]  # @s1
    r = Runner()
    r.run_task  # @e_inst_name
    Runner().make  # @e_inst_call
    Runner.run_task  # @d_class_attr
    Child().run_task  # @d_inherited
    k = Runner.run_task  # @e_class_attr
    ck = raw(Child().run_task)("t")  # @e_inherited
    r.run_task = None  # @d_inst_target
    del r.run_task  # @d_inst_del
    r2 = Runner()
    r2 = Runner()
    r2.run_task  # @d_inst_twice
    r3: Runner = Runner()
    r3.run_task  # @d_inst_annotated

    def inner():
        return r.run_task  # @d_inst_nested
    return job  # @e_return


def test_shadow(job):
    return [job]  # @d_param


def test_local():
    relay = make()  # @u_make
    return relay  # @d_local


def test_reset():
    job = None  # @d_target
    return None


def test_default(cb=relay):  # @e_default
    return cb


f = lambda: J.relay  # @e_lambda
''',
}
TJ = "pkg/jobs.py"
TT = "tests/test_jobs.py"


def _esc(rel, tag, text):
    return (rel, tag, text, "escape", None)


# job's display: reached by the uses of job and of relay (a chain onto it)
ESCAPE_JOB = [_esc(TJ, "e_list", "job"), _esc(TJ, "e_list", "relay"), _esc(TT, "e_assign", "job"),
              _esc(TT, "e_tuple", "relay"), _esc(TT, "e_paren", "job"), _esc(TT, "e_arg", "job"),
              _esc(TT, "e_module", "J.job"), _esc(TT, "e_return", "job"), _esc(TT, "e_default", "relay"),
              _esc(TT, "e_lambda", "J.relay")]
# pick's two returns: no dispatch narrowing
ESCAPE_PICK = [_esc(TJ, "e_dict", "pick"), _esc(TT, "e_module2", "jobs.pick")]
ESCAPES_EXPECT = {
    (TJ, "job", "TS001", "rows"): ESCAPE_JOB + [(TT, "s1", 'relay("q")["rows"]', "subscript", "rows")],
    (TJ, "job", "TS002", None): ESCAPE_JOB,
    (TJ, "alpha", "TS001", "alpha"): ESCAPE_PICK,
    (TJ, "beta", "TS001", "beta"): ESCAPE_PICK,
    (TJ, "later", "TS001", "eta"): [_esc(TT, "e_kw", "later")],
    # and its decorator `@functools.cache` ("**Decorators.**")
    (TJ, "cached", "TS001", "hits"): [_esc(TT, "e_memo", "cached"), _esc(TJ, "e_deco", "functools.cache")],
    # `Runner.run_task` on the class, `Child().run_task` inherited, and an
    # instance name bound twice, annotated or read in a nested def resolve
    # to nothing: unresolved uses ("**Uses as a value toolshape cannot
    # resolve**"), escapes only when renamed (`k = ...`, `return ...`) or
    # wrapped (`raw(...)("t")`); the plain ones (expression statements,
    # d_class_attr, d_inherited, d_inst_twice, d_inst_annotated) are not seen
    (TJ, "task", "TS001", "task"): [_esc(TJ, "e_self", "self.run_task"), _esc(TT, "e_inst_name", "r.run_task")] + [
        _esc(TT, tag, text) for tag, text in (
            ("e_class_attr", "Runner.run_task"), ("e_inherited", "Child().run_task"),
            ("d_inst_nested", "r.run_task"))],
    # `make()` in a test: a name bound nowhere, named like the producer
    # Runner.make: an unresolved call ("**Calls toolshape cannot resolve.**")
    (TJ, "made", "TS001", "made"): [_esc(TJ, "e_cls", "cls.make"), _esc(TT, "e_inst_call", "Runner().make"),
                                    _esc(TT, "u_make", "make()")],
}
ESCAPES_FORMS = {"escape": 23, "subscript": 1}


# results handed on (docs/rules.md "**Results handed on.**"): a receiver call
# whose result may reach code toolshape does not follow has one read of form
# escape (key null), span the call or `await C` without the parentheses
# around it, for every finding of the receiver's origins (narrowed by
# dispatch as its reads are).  Handed on: a module's or a class body's name,
# `self.r = C`, an argument, a display element, a conditional, a `for`
# iterable, `lambda: C`, `if C:`, `yield C`, a subscript or `.get` that is no
# read form (`C[0]`, `C.get(k)`), `C is None`, an annotated `R: T = C`, a
# name bound twice, passed on (`print(R)`), loaded in a nested def, bound
# under `global`, returned as a name; a direct tool call, a builder call, a
# call on an instance, an awaited call (span `await C`).  Not handed on: an
# expression statement (`C`, `await C`), `return C` / `return await C`, the
# receiver of a read form (any constant key: `C["status"]`, `C.get("other")`
# too), a name bound once in a function and only read by read forms (or never
# loaded).
HANDED = {
    "pyproject.toml": "",
    "pkg/__init__.py": "",
    "pkg/t.py": '''\
from strands import tool


def probe(q):
    return {"status": "success", "content": [], "rssi": -40}  # @probe


def pick(action):
    if action == "a":
        return {"status": "success", "content": [], "alpha": 1}  # @alpha
    return {"status": "success", "content": [], "beta": 2}  # @beta


async def later(q):
    return {"status": "success", "content": [], "eta": 3}  # @later


@tool
def scan(q):
    return {"status": "success", "content": [], "hz": 5}  # @scan


def _ok(text, **extra):
    return {"status": "success", "content": [{"text": text}], **extra}


class Station:
    def poll(self, q):
        return {"status": "success", "content": [], "volts": 3}  # @poll


def relay(q):
    return probe(q)
''',
    "tests/test_handed.py": '''\
from pkg.t import probe, pick, later, scan, _ok, Station

TOP = probe("m")  # @h_module
TOP["rssi"]  # @r_module


def check(r):
    # passes r on: no checking function ("**Results handed to a checking function.**")
    print(r)
    return r


class Holder:
    kept = probe("k")  # @h_class
    kept["rssi"]  # @r_class

    def setup(self):
        self.r = probe("s")  # @h_attr


def test_handed(agent, a, k):
    check(probe("1"))  # @h_arg
    [probe("2")]  # @h_list
    x = probe("3") if a else None  # @h_cond
    for k in probe("4"):  # @h_for
        pass
    f = lambda: probe("5")  # @h_lambda
    if probe("6"):  # @h_if
        pass
    probe("7")[0]  # @h_index
    probe("8") is None  # @h_is
    t: dict = probe("9")  # @h_ann
    check(agent.tool.scan(q="x"))  # @h_tool
    check(_ok("x", rows=1))  # @h_builder
    check(Station().poll("x"))  # @h_instance
    check(pick(action="a"))  # @h_pick
    probe("10").get(k)  # @h_getname
    check((probe("11")))  # @h_paren


def test_twice(a):
    result = probe("a")  # @h_twice1
    assert result["rssi"] == 1
    if a:
        result = probe("b")  # @h_twice2
    assert result["rssi"] == 1


def test_passed():
    r = probe("p")  # @h_print
    print(r)
    r["rssi"]  # @r_print


def test_nested():
    n = probe("n")  # @h_nested
    n["rssi"]  # @r_nested

    def inner():
        return n


def test_global():
    global G
    G = probe("g")  # @h_global
    G["rssi"]


def test_return_name():
    r = probe("rn")  # @h_return_name
    r["rssi"]  # @r_return_name
    return r


def gen():
    yield probe("y")  # @h_yield


async def test_async():
    xs = [await later("a")]  # @h_await
    check((await (later("b"))))  # @h_await_paren
    await later("c")
    r = await later("d")
    r["eta"]  # @r_await
    return await later("e")


def test_kept(a):
    probe("s1")
    probe("s2")["rssi"]  # @k_sub
    (probe("s3"))["rssi"]  # @k_paren
    probe("s4").get("rssi")  # @k_get
    "rssi" in probe("s5")  # @k_in
    {**probe("s6")}  # @k_spread
    dict(probe("s7"))  # @k_dict
    probe("s8") == {}  # @k_eq
    probe("s9")["status"]
    probe("s10").get("other")
    r = probe("s11")
    r["rssi"]  # @k_r1
    r.get("rssi")  # @k_r2
    "rssi" not in r  # @k_r3
    unused = probe("s12")
    return probe("s13")
''',
}
TH = "tests/test_handed.py"
HANDED_RSSI = [handed(TH, tag, 'probe("%s")' % q) for tag, q in (
    ("h_module", "m"), ("h_class", "k"), ("h_attr", "s"), ("h_arg", "1"), ("h_list", "2"), ("h_cond", "3"),
    ("h_for", "4"), ("h_lambda", "5"), ("h_if", "6"), ("h_index", "7"), ("h_is", "8"), ("h_ann", "9"),
    ("h_getname", "10"), ("h_paren", "11"), ("h_twice1", "a"), ("h_twice2", "b"), ("h_print", "p"),
    ("h_nested", "n"), ("h_global", "g"), ("h_return_name", "rn"), ("h_yield", "y"))] + [
    # the names that are receivers keep their reads beside the escape
    (TH, "r_module", 'TOP["rssi"]', "subscript", "rssi"),
    (TH, "r_class", 'kept["rssi"]', "subscript", "rssi"),
    (TH, "r_print", 'r["rssi"]', "subscript", "rssi"),
    (TH, "r_nested", 'n["rssi"]', "subscript", "rssi"),
    (TH, "r_return_name", 'r["rssi"]', "subscript", "rssi"),
    # not handed on: their reads only
    (TH, "k_sub", 'probe("s2")["rssi"]', "subscript", "rssi"),
    (TH, "k_paren", '(probe("s3"))["rssi"]', "subscript", "rssi"),
    (TH, "k_get", 'probe("s4").get("rssi")', "get", "rssi"),
    (TH, "k_in", '"rssi" in probe("s5")', "in", "rssi"),
    (TH, "k_spread", '**probe("s6")', "whole", None),
    (TH, "k_dict", 'dict(probe("s7"))', "whole", None),
    (TH, "k_eq", 'probe("s8") == {}', "whole", None),
    (TH, "k_r1", 'r["rssi"]', "subscript", "rssi"),
    (TH, "k_r2", 'r.get("rssi")', "get", "rssi"),
    (TH, "k_r3", '"rssi" not in r', "not-in", "rssi"),
]
HANDED_EXPECT = {
    ("pkg/t.py", "probe", "TS001", "rssi"): HANDED_RSSI,
    # narrowed by dispatch: `pick(action="a")` reaches alpha only
    ("pkg/t.py", "alpha", "TS001", "alpha"): [handed(TH, "h_pick", 'pick(action="a")')],
    ("pkg/t.py", "later", "TS001", "eta"): [
        handed(TH, "h_await", 'await later("a")'),
        handed(TH, "h_await_paren", 'await (later("b"))'),
        (TH, "r_await", 'r["eta"]', "subscript", "eta"),
    ],
    ("pkg/t.py", "scan", "TS001", "hz"): [handed(TH, "h_tool", 'agent.tool.scan(q="x")')],
    ("pkg/t.py", "poll", "TS001", "volts"): [handed(TH, "h_instance", 'Station().poll("x")')],
    ("tests/test_handed.py", "h_builder", "TS003", "rows"): [handed(TH, "h_builder", '_ok("x", rows=1)')],
}
HANDED_FORMS = {"escape": 27, "subscript": 9, "get": 2, "in": 1, "not-in": 1, "whole": 3}


# names bound in sequence (docs/rules.md "**Receivers**", "a name `R` bound
# **in sequence**"): a function's name bound more than once, every binding a
# plain one-target `R = V` statement of the function's own block; a load
# standing in the function sees the last of those statements ending before
# it starts (a load in V the one before, a load before the end of the first
# none), and is a receiver of its call's keys when V is a receiver call C or
# `await C`.  Judged binding by binding for "**Results handed on.**": a
# binding is not handed on when no load stands in a nested scope or before
# the first statement ends and every load seeing it is a read's receiver.
# Next to the names that are not bound in sequence (one binding in an `if`,
# `while`, `for`, `with`, `try` or `match`; a parameter, `del`, `+=`, a
# walrus, a tuple, an annotated or chained binding, a nested `nonlocal`
# rebinding, `global`, a module's name): every receiver call bound is handed
# on, no load is a receiver.
SEQUENCE = {
    "pyproject.toml": "",
    "pkg/__init__.py": "",
    "pkg/t.py": '''\\
from strands import tool


def probe(q):
    return {"status": "success", "content": [], "rssi": -40}  # @probe


def meter(q):
    return {"status": "success", "content": [], "volts": 3}  # @meter


@tool
def scan(q):
    return {"status": "success", "content": [], "hz": 5}  # @scan


async def later(q):
    return {"status": "success", "content": [], "eta": 3}  # @later


def pick(action):
    if action == "a":
        return {"status": "success", "content": [], "alpha": 1}  # @alpha
    return {"status": "success", "content": [], "beta": 2}  # @beta


def _ok(text, **extra):
    return {"status": "success", "content": [{"text": text}], **extra}


class Station:
    def poll(self, q):
        return {"status": "success", "content": [], "amps": 2}  # @poll


def other(q):
    return q
''',
    "tests/test_seq.py": '''\\
import json
from pkg.t import probe, meter, later, pick, _ok, Station, other

TOP = probe("m1")  # @h_top1
TOP = probe("m2")  # @h_top2
TOP["rssi"]  # @n_top


def test_two():
    result = probe("a")  # @s2_1
    assert result["rssi"] == -40  # @s2_r1
    result = meter("b")  # @s2_2
    assert result["volts"] == 3  # @s2_r2
    assert result["rssi"]  # @n_s2
    dict(result)  # @s2_w2


def test_three(agent):
    result = probe("a")  # @s3_1
    result.get("rssi")  # @s3_r1
    result = agent.tool.scan(q="x")  # @s3_2
    "hz" in result  # @s3_r2
    result = Station().poll("c")  # @s3_3
    result["amps"] = 1  # @s3_r3
    json.dumps(result)  # @s3_w3
    result = _ok("d", rows=1)  # @s3_4
    result.pop("rows")  # @s3_r4
    result["rssi"]  # @n_s3


def test_builder_twice():
    out = _ok("e", rows=1)  # @b_1
    out["rows"]  # @b_r1
    out = _ok("f", rows=2)  # @b_2
    "rows" not in out  # @b_r2


def test_in_value():
    out = probe("a")  # @v_1
    out = meter(out["rssi"])  # @v_2
    out["volts"]  # @v_r2
    out = other(out)  # @v_3
    out["volts"]  # @n_v


def test_non_receiver():
    res = probe("a")  # @nr_1
    res["rssi"]  # @nr_r1
    res = None
    res = other("b")
    res["rssi"]  # @n_nr
    res = probe("c")  # @nr_4
    res["rssi"]  # @nr_r4
    res = None
    res["rssi"]  # @n_nr2


def test_overwritten():
    res = probe("a")  # @ow_1
    res = probe("b")  # @ow_2
    res["rssi"]  # @ow_r2


def test_between(a, ctx):
    result = probe("a")  # @bt_1
    if a:
        assert result["rssi"]  # @bt_r1
    for k in range(2):
        result.get("rssi", 0)  # @bt_r1b
    result = meter("b")  # @bt_2
    with ctx():
        result["volts"]  # @bt_r2
    x = [k for k in result.keys()]  # @bt_w2

    def cb(v=result["volts"]):  # @bt_r2b
        return v
    return cb


def test_dispatch():
    r = pick(action="a")  # @d_1
    r["alpha"]  # @d_r1
    r["beta"]  # @n_d1
    r = pick(action="b")  # @d_2
    r["beta"]  # @d_r2
    r["alpha"]  # @n_d2


def test_print():
    result = probe("a")  # @p_1
    print(result)
    result = meter("b")  # @p_2
    result["volts"]  # @p_r2


def test_print_read():
    result = probe("a")  # @pr_1
    result["rssi"]  # @pr_r1
    check(result)
    result = probe("b")  # @pr_2
    result["rssi"]  # @pr_r2


async def test_await():
    r = await later("a")  # @a_1
    r["eta"]  # @a_r1
    r = await (later("b"))  # @a_2
    check(r)
    r = (await later("c"))  # @a_3
    "eta" in r  # @a_r3
    r = await other("d")
    r["eta"]  # @n_a


def test_nested():
    r = probe("a")  # @x_1
    r["rssi"]  # @x_r1
    r = meter("b")  # @x_2
    r["volts"]  # @x_r2

    def inner():
        return r["volts"]  # @n_x
    return inner


def test_lambda():
    r = probe("a")  # @l_1
    r = meter("b")  # @l_2
    r["volts"]  # @l_r2
    f = lambda: r["volts"]  # @n_l
    [r["volts"] for _ in range(2)]  # @n_l2


def test_early(a):
    if a:
        print(result["rssi"])  # @n_e
    result = probe("a")  # @e_1
    result["rssi"]  # @e_r1
    result = probe("b")  # @e_2
    result["rssi"]  # @e_r2


def test_in_first():
    out = probe(out["rssi"])  # @f_1
    out = meter("b")  # @f_2
    out["volts"]  # @f_r2


def test_if(a):
    result = probe("a")  # @o_if1
    result["rssi"]  # @n_if
    if a:
        result = probe("b")  # @o_if2


def test_while(a):
    result = probe("a")  # @o_wh1
    while a:
        result = probe("b")  # @o_wh2
    result["rssi"]  # @n_wh


def test_for():
    result = probe("a")  # @o_for1
    for _ in range(2):
        result = probe("b")  # @o_for2
    result["rssi"]  # @n_for


def test_with(ctx):
    result = probe("a")  # @o_with1
    with ctx():
        result = probe("b")  # @o_with2
    result["rssi"]  # @n_with


def test_try():
    result = probe("a")  # @o_try1
    try:
        result = probe("b")  # @o_try2
    except ValueError:
        pass
    result["rssi"]  # @n_try


def test_match(a):
    result = probe("a")  # @o_match1
    match a:
        case 1:
            result = probe("b")  # @o_match2
    result["rssi"]  # @n_match


def test_param(result):
    result = probe("a")  # @o_param1
    result["rssi"]  # @n_param
    result = probe("b")  # @o_param2


def test_del():
    result = probe("a")  # @o_del1
    result["rssi"]  # @n_del
    result = probe("b")  # @o_del2
    del result


def test_aug():
    result = probe("a")  # @o_aug1
    result = probe("b")  # @o_aug2
    result += other(1)
    result["rssi"]  # @n_aug


def test_walrus():
    result = probe("a")  # @o_walrus1
    (result := probe("b"))  # @o_walrus2
    result["rssi"]  # @n_walrus


def test_tuple():
    result = probe("a")  # @o_tuple1
    result, n = probe("b"), 1  # @o_tuple2
    result["rssi"]  # @n_tuple


def test_annotated():
    result = probe("a")  # @o_ann1
    result: dict = probe("b")  # @o_ann2
    result["rssi"]  # @n_ann


def test_chained():
    result = probe("a")  # @o_chain1
    alias = result = probe("b")  # @o_chain2
    result["rssi"]  # @n_chain


def test_nonlocal():
    result = probe("a")  # @o_nl1
    result = probe("b")  # @o_nl2
    result["rssi"]  # @n_nl

    def reset():
        nonlocal result
        result = None
    return reset


def test_global():
    global G
    G = probe("g1")  # @o_g1
    G = probe("g2")  # @o_g2
    G["rssi"]  # @n_g
''',
    "tests/test_marked.py": '''\\
from pkg.t import probe


def test_marked():
    tool_result = probe("a")  # @mk_1
    tool_result["rssi"]  # @mk_r1
    tool_result = probe("b")  # @mk_2
    tool_result.get("rssi")  # @mk_r2
''',
}
TS = "tests/test_seq.py"
TM = "tests/test_marked.py"
_SEQ_HANDED_RSSI = [handed(TS, tag, 'probe("%s")' % q) for tag, q in (
    ("h_top1", "m1"), ("h_top2", "m2"), ("p_1", "a"), ("pr_1", "a"), ("x_1", "a"),
    ("e_1", "a"), ("e_2", "b"), ("l_1", "a"),
    ("o_if1", "a"), ("o_if2", "b"), ("o_wh1", "a"), ("o_wh2", "b"), ("o_for1", "a"), ("o_for2", "b"),
    ("o_with1", "a"), ("o_with2", "b"), ("o_try1", "a"), ("o_try2", "b"), ("o_match1", "a"),
    ("o_match2", "b"), ("o_param1", "a"), ("o_param2", "b"), ("o_del1", "a"), ("o_del2", "b"),
    ("o_aug1", "a"), ("o_aug2", "b"), ("o_walrus1", "a"), ("o_walrus2", "b"), ("o_tuple1", "a"),
    ("o_tuple2", "b"), ("o_ann1", "a"), ("o_ann2", "b"), ("o_chain1", "a"), ("o_chain2", "b"),
    ("o_nl1", "a"), ("o_nl2", "b"), ("o_g1", "g1"), ("o_g2", "g2"))]
SEQUENCE_EXPECT = {
    ("pkg/t.py", "probe", "TS001", "rssi"): _SEQ_HANDED_RSSI + [
        # loaded in its own V, before the first binding ends: every binding handed on
        handed(TS, "f_1", 'probe(out["rssi"])'),
        (TS, "s2_r1", 'result["rssi"]', "subscript", "rssi"),
        (TS, "s3_r1", 'result.get("rssi")', "get", "rssi"),
        # a load in V sees the statement before
        (TS, "v_2", 'out["rssi"]', "subscript", "rssi"),
        (TS, "nr_r1", 'res["rssi"]', "subscript", "rssi"),
        (TS, "nr_r4", 'res["rssi"]', "subscript", "rssi"),
        (TS, "ow_r2", 'res["rssi"]', "subscript", "rssi"),
        (TS, "bt_r1", 'result["rssi"]', "subscript", "rssi"),
        (TS, "bt_r1b", 'result.get("rssi", 0)', "get", "rssi"),
        (TS, "pr_r1", 'result["rssi"]', "subscript", "rssi"),
        (TS, "pr_r2", 'result["rssi"]', "subscript", "rssi"),
        (TS, "x_r1", 'r["rssi"]', "subscript", "rssi"),
        # loaded before the first binding ends: every binding handed on, the
        # loads after it still receivers
        (TS, "e_r1", 'result["rssi"]', "subscript", "rssi"),
        (TS, "e_r2", 'result["rssi"]', "subscript", "rssi"),
        # a marked name bound in sequence: traced, and still a possible receiver
        (TM, "mk_r1", 'tool_result["rssi"]', "subscript", "rssi"),
        (TM, "mk_r2", 'tool_result.get("rssi")', "get", "rssi"),
        (TM, "mk_r1", 'tool_result["rssi"]', "subscript", "rssi", True),
        (TM, "mk_r2", 'tool_result.get("rssi")', "get", "rssi", True),
    ],
    ("pkg/t.py", "meter", "TS001", "volts"): [
        (TS, "s2_r2", 'result["volts"]', "subscript", "volts"),
        (TS, "s2_w2", "dict(result)", "whole", None),
        (TS, "v_r2", 'out["volts"]', "subscript", "volts"),
        # `out = other(out)`: the load in V passes the second binding on
        handed(TS, "v_2", 'meter(out["rssi"])'),
        (TS, "bt_r2", 'result["volts"]', "subscript", "volts"),
        (TS, "bt_w2", "result.keys()", "whole", None),
        # a nested def's default stands in the function
        (TS, "bt_r2b", 'result["volts"]', "subscript", "volts"),
        (TS, "p_r2", 'result["volts"]', "subscript", "volts"),
        (TS, "x_r2", 'r["volts"]', "subscript", "volts"),
        handed(TS, "x_2", 'meter("b")'),
        (TS, "l_r2", 'r["volts"]', "subscript", "volts"),
        handed(TS, "l_2", 'meter("b")'),
        (TS, "f_r2", 'out["volts"]', "subscript", "volts"),
        handed(TS, "f_2", 'meter("b")'),
    ],
    ("pkg/t.py", "scan", "TS001", "hz"): [(TS, "s3_r2", '"hz" in result', "in", "hz")],
    ("pkg/t.py", "poll", "TS001", "amps"): [
        (TS, "s3_r3", 'result["amps"]', "store", "amps"),
        (TS, "s3_w3", "json.dumps(result)", "whole", None),
    ],
    ("tests/test_seq.py", "s3_4", "TS003", "rows"): [(TS, "s3_r4", 'result.pop("rows")', "pop", "rows")],
    ("tests/test_seq.py", "b_1", "TS003", "rows"): [(TS, "b_r1", 'out["rows"]', "subscript", "rows")],
    ("tests/test_seq.py", "b_2", "TS003", "rows"): [(TS, "b_r2", '"rows" not in out', "not-in", "rows")],
    ("pkg/t.py", "alpha", "TS001", "alpha"): [(TS, "d_r1", 'r["alpha"]', "subscript", "alpha")],
    ("pkg/t.py", "beta", "TS001", "beta"): [(TS, "d_r2", 'r["beta"]', "subscript", "beta")],
    ("pkg/t.py", "later", "TS001", "eta"): [
        (TS, "a_r1", 'r["eta"]', "subscript", "eta"),
        handed(TS, "a_2", 'await (later("b"))'),
        (TS, "a_r3", '"eta" in r', "in", "eta"),
    ],
}
SEQUENCE_FORMS = {"escape": 44, "subscript": 25, "get": 4, "whole": 3, "in": 2, "store": 1, "pop": 1,
                  "not-in": 1}


# annotations (docs/rules.md "**Annotations.**"): nothing in an annotation is
# read.  The annotations: a def's parameters' (positional-only, positional,
# keyword-only, `*args`, `**kwargs`) and its return's, a variable's (`x: A`,
# `x: A = v`, in a module, a class body, a function, a compound statement),
# at any depth (a comprehension or a lambda's default written in one too);
# `type X = ...` and type parameters' bounds (Python 3.12+, WHERE_TYPES).  A
# name bound once by `R = C` or in sequence loaded there is no receiver and
# hands every call bound on (its other reads, in S, stay listed); no
# possible receiver is looked for there (an annotated parameter, a hook
# event, a marked name or attribute, `X["toolResult"]`, an alias); `N.m(...)`
# there is no call on an instance (an unresolved call: every producer named
# `m` read; `N.m` there resolves to nothing too, but a use in an annotation
# is neither wrapped nor renamed: no unresolved use); a receiver call
# written there is handed on, whatever holds it (a subscript, `.get`, `in`,
# nothing, a comprehension; `await C`, span `await C`); a producer used as a
# value there is an escape, `K(...).m` too.  The decoys stand where they are
# written: a def's defaults (keyword-only too, and beside an annotation of
# the same parameter), its decorators, a lambda's defaults, a class's bases
# and keywords, a comprehension's first iterable, a default between two
# bindings in sequence, an annotated assignment's value and target.
WHERE_T = """\
def meter(q):
    return {"status": "success", "content": [], "volts": 3}  # @meter


def probe(q):
    return {"status": "success", "content": [], "rssi": -40}  # @probe


class Station:
    def poll(self, q):
        return {"status": "success", "content": [], "amps": 2}  # @poll
"""
WHERE = {
    "pyproject.toml": "",
    "pkg/__init__.py": "",
    "pkg/t.py": WHERE_T,
    # another producer named `poll`: what resolves to nothing reads it too
    "pkg/w.py": """\
def poll(q):
    return {"status": "success", "content": [], "watts": 1}  # @watts
""",
    "tests/test_where.py": """\
import json
from pkg.t import meter, probe, Station

TOP = meter("top")  # @h_top


def top_f(x: TOP["volts"]):  # @n_top
    return x


TOP["volts"]  # @top_r
V: TOP["volts"] = 1  # @n_topv
W: meter("w")["volts"]  # @c_topv
X: int = TOP.get("volts")  # @topv_val
PV: probe = None  # @pv_top


class Holder:
    CR = meter("cls")  # @h_cls

    def m(self, x: CR.get("volts")):  # @n_cls
        return x
    v = CR["volts"]  # @cls_r
    a: CR["volts"]  # @n_clsv
    b: meter("cb").get("volts") = 2  # @c_clsv


def test_positional():
    r = meter("a")  # @h_pos
    def f(x: r["volts"]) -> int:  # @n_pos
        return x
    return f


def test_return():
    r = meter("b")  # @h_ret
    def f(x) -> r.get("volts"):  # @n_ret
        return x
    return f


def test_posonly():
    r = meter("c")  # @h_po
    def f(x: "volts" in r, /):  # @n_po
        return x
    return f


def test_kwonly():
    r = meter("d")  # @h_kw
    def f(a, *, x: dict(r)):  # @n_kw
        return x
    return f


def test_varargs():
    r = meter("e")  # @h_va
    def f(*a: r["volts"]):  # @n_va
        return a
    return f


def test_kwargs():
    r = meter("f")  # @h_kwa
    def f(**k: r.pop("volts")):  # @n_kwa
        return k
    return f


def test_async():
    r = meter("g")  # @h_async
    async def f(x: r["volts"]):  # @n_async
        return x
    return f


def test_deep():
    r = meter("h")  # @h_deep
    def f(x: [k for k in r.keys()], y: r["content"][0], z: (lambda v=r["volts"]: v)):  # @n_deep
        return x
    return f


def test_also_read():
    r = meter("i")  # @h_also
    assert r["volts"] == 3  # @also_r
    def f(x: r["volts"]):  # @n_also
        return x
    return f


def test_mixed():
    r = meter("j")  # @h_mix
    def f(x: r["volts"] = r.get("volts")):  # @mix
        return x
    return f


def test_sequence():
    r = probe("a")  # @h_seq1
    r["rssi"]  # @seq_r1
    r = meter("b")  # @h_seq2
    r["volts"]  # @seq_r2
    def f(x: r["volts"]):  # @n_seq
        return x
    return f


def test_sequence_default():
    r = probe("c")  # @sd_1
    r["rssi"]  # @sd_r1
    r = meter("d")  # @sd_2
    def f(x=r["volts"]):  # @sd_r2
        return x
    return f


def test_variable():
    r = meter("q")  # @h_var
    y: r["volts"] = 1  # @n_var
    z: int = r["volts"]  # @var_val
    return z


def test_variable_kept():
    r = meter("s")  # @k_var
    z: int = r.get("volts")  # @kv_val
    r["volts"]: int = 2  # @kv_store
    return z


def test_variable_if(q):
    r = meter("t")  # @h_vif
    if q:
        y: dict(r)  # @n_vif
    return r["volts"]  # @vif_r


def test_variable_sequence():
    r = probe("e")  # @h_vs1
    r["rssi"]  # @vs_r1
    r = meter("v")  # @h_vs2
    y: r.get("volts") = None  # @n_vs


def test_calls():
    def f(x: meter("z")["volts"]) -> meter("y"):  # @calls
        return x
    def g(*, k: meter("x").get("volts"),  # @calls_get
          **kw: "volts" in meter("u")):  # @calls_in
        return k
    return f, g


def test_calls_variable():
    y: meter("a1")["volts"] = 1  # @cv1
    z: meter("a2")  # @cv2
    w: [k for k in meter("a3").keys()] = []  # @cv3


async def test_await_annotation():
    def f(x: (await meter("aw1"))["volts"]) -> await meter("aw2"):  # @aw_def
        return x
    y: (await meter("aw3")).get("volts") = 1  # @aw_var
    z = await meter("aw4")  # @aw_k
    return f, z["volts"]  # @aw_r


def test_default():
    r = meter("k")  # @k_default
    def f(x=r["volts"], *, y=r.get("volts")):  # @d_def
        return x
    return f


def test_decorator():
    r = meter("l")  # @k_deco
    @r["volts"]  # @d_deco
    def f(x):
        return x
    return f


def test_lambda_default():
    r = meter("m")  # @k_lam
    g = lambda x=r["volts"]: x  # @d_lam
    return g


def test_class_bases():
    r = meter("n")  # @k_cls
    class C(r["volts"], metaclass=dict(r)):  # @d_cls
        pass
    return C


def test_comprehension():
    r = meter("o")  # @k_comp
    return [k for k in r.keys()]  # @d_comp


async def test_async_default():
    r = meter("p")  # @k_async
    async def f(x=r["volts"]) -> int:  # @d_async
        return x
    return f


def test_instance():
    st = Station()
    def f(x: st.poll("a")["amps"],  # @n_inst
          y=st.poll("b")["amps"],  # @inst_r
          z: Station().poll("c")["amps"] = 1):  # @inst_k
        return x
    v: st.poll("d").get("amps") = 1  # @n_instv
    return f


def test_escape():
    st = Station()
    def f(x: st.poll,  # @n_esc
          y=st.poll) -> Station().poll:  # @esc
        return x
    v: st.poll = None  # @n_escv
    w: Station().poll = None  # @escv
    return f


def test_producer_value():
    def f(x: probe,  # @pv1
          y=probe):  # @pv2
        return x
    z: probe = None  # @pv3
    return f
""",
    "pkg/hooks.py": """\
from strands.types import ToolResult

M: tool_result["volts"]  # @pm1


def on_result(result: ToolResult, event: AfterToolCallEvent, tool_result, msg):
    def f(x: result["volts"],  # @pa1
          y: event.result["volts"],  # @pa2
          z: tool_result["volts"],  # @pa3
          w: msg["toolResult"]["volts"]) -> msg.tool_result.get("volts"):  # @pa4
        return x
    def g(x=result["volts"],  # @pd1
          y=event.result.get("volts")) -> int:  # @pd2
        return x
    a: result["volts"] = 1  # @pv_a
    b: event.result.get("volts") = 2  # @pv_b
    c: tool_result.pop("volts")  # @pv_c
    d: "volts" in msg["toolResult"] = 3  # @pv_d
    tr = msg["toolResult"]
    e: tr["volts"] = 4  # @pv_e
    v: int = tool_result["volts"]  # @pd3
    tr.get("volts")  # @pd4
    return f, g
""",
}
TW = "tests/test_where.py"
HK = "pkg/hooks.py"
WHERE_EXPECT = {
    ("pkg/t.py", "meter", "TS001", "volts"): [
        # a module's and a class body's names are handed on anyway; their
        # reads in S stay (an annotated assignment's value too), those in an
        # annotation (a def's, a variable's) are none
        handed(TW, "h_top", 'meter("top")'),
        (TW, "top_r", 'TOP["volts"]', "subscript", "volts"),
        (TW, "topv_val", 'TOP.get("volts")', "get", "volts"),
        handed(TW, "h_cls", 'meter("cls")'),
        (TW, "cls_r", 'CR["volts"]', "subscript", "volts"),
        # receiver calls in a module's and a class body's variable annotations
        handed(TW, "c_topv", 'meter("w")'),
        handed(TW, "c_clsv", 'meter("cb")'),
        # loaded in an annotation: no read, the call handed on
        handed(TW, "h_pos", 'meter("a")'),
        handed(TW, "h_ret", 'meter("b")'),
        handed(TW, "h_po", 'meter("c")'),
        handed(TW, "h_kw", 'meter("d")'),
        handed(TW, "h_va", 'meter("e")'),
        handed(TW, "h_kwa", 'meter("f")'),
        handed(TW, "h_async", 'meter("g")'),
        handed(TW, "h_deep", 'meter("h")'),
        # read in S too: that read stays, beside the escape
        handed(TW, "h_also", 'meter("i")'),
        (TW, "also_r", 'r["volts"]', "subscript", "volts"),
        # the default stands in S (a read), the annotation does not
        handed(TW, "h_mix", 'meter("j")'),
        (TW, "mix", 'r.get("volts")', "get", "volts"),
        # in sequence: a load in an annotation hands every binding on
        handed(TW, "h_seq2", 'meter("b")'),
        (TW, "seq_r2", 'r["volts"]', "subscript", "volts"),
        # in sequence: a default between bindings sees the one before
        (TW, "sd_r2", 'r["volts"]', "subscript", "volts"),
        # a variable's annotation in a function (in an `if` too): a use in a
        # nested scope; the value of an annotated assignment stands in S
        handed(TW, "h_var", 'meter("q")'),
        (TW, "var_val", 'r["volts"]', "subscript", "volts"),
        handed(TW, "h_vif", 'meter("t")'),
        (TW, "vif_r", 'r["volts"]', "subscript", "volts"),
        handed(TW, "h_vs2", 'meter("v")'),
        # an annotated assignment's value and target stand in S: reads,
        # nothing handed on
        (TW, "kv_val", 'r.get("volts")', "get", "volts"),
        (TW, "kv_store", 'r["volts"]', "store", "volts"),
        # receiver calls written in annotations: handed on, whatever holds
        # them, no read
        handed(TW, "calls", 'meter("z")'),
        handed(TW, "calls", 'meter("y")'),
        handed(TW, "calls_get", 'meter("x")'),
        handed(TW, "calls_in", 'meter("u")'),
        handed(TW, "cv1", 'meter("a1")'),
        handed(TW, "cv2", 'meter("a2")'),
        handed(TW, "cv3", 'meter("a3")'),
        # awaited there: the span is `await C`; `z = await C` outside is read
        handed(TW, "aw_def", 'await meter("aw1")'),
        handed(TW, "aw_def", 'await meter("aw2")'),
        handed(TW, "aw_var", 'await meter("aw3")'),
        (TW, "aw_r", 'z["volts"]', "subscript", "volts"),
        # defaults, decorators, lambda defaults, bases, keywords, a
        # comprehension's first iterable: in S, read, nothing handed on
        (TW, "d_def", 'r["volts"]', "subscript", "volts"),
        (TW, "d_def", 'r.get("volts")', "get", "volts"),
        (TW, "d_deco", 'r["volts"]', "subscript", "volts"),
        (TW, "d_lam", 'r["volts"]', "subscript", "volts"),
        (TW, "d_cls", 'r["volts"]', "subscript", "volts"),
        (TW, "d_cls", "dict(r)", "whole", None),
        (TW, "d_comp", "r.keys()", "whole", None),
        (TW, "d_async", 'r["volts"]', "subscript", "volts"),
        # possible receivers: none is looked for in an annotation (a def's or
        # a variable's: an annotated parameter, a hook event, a marked name or
        # attribute, `X["toolResult"]`, an alias); defaults and an annotated
        # assignment's value stand in the function
        (HK, "pd1", 'result["volts"]', "subscript", "volts", True),
        (HK, "pd2", 'event.result.get("volts")', "get", "volts", True),
        (HK, "pd3", 'tool_result["volts"]', "subscript", "volts", True),
        (HK, "pd4", 'tr.get("volts")', "get", "volts", True),
    ],
    ("pkg/t.py", "probe", "TS001", "rssi"): [
        handed(TW, "h_seq1", 'probe("a")'),
        (TW, "seq_r1", 'r["rssi"]', "subscript", "rssi"),
        (TW, "sd_r1", 'r["rssi"]', "subscript", "rssi"),
        handed(TW, "h_vs1", 'probe("e")'),
        (TW, "vs_r1", 'r["rssi"]', "subscript", "rssi"),
        # a producer used as a value in an annotation (a def's, a variable's,
        # a module's) or a default: escapes
        (TW, "pv_top", "probe", "escape", None),
        (TW, "pv1", "probe", "escape", None),
        (TW, "pv2", "probe", "escape", None),
        (TW, "pv3", "probe", "escape", None),
    ],
    ("pkg/t.py", "poll", "TS001", "amps"): [
        # `st.poll(...)` in an annotation (a def's, a variable's): `st` read in
        # a nested scope, no call on an instance: it resolves to nothing, an
        # unresolved call ("**Calls toolshape cannot resolve.**", anywhere in
        # the project); in a default it is one; `Station().poll(...)` in an
        # annotation is one, handed on
        (TW, "n_inst", 'st.poll("a")', "escape", None),
        (TW, "n_instv", 'st.poll("d")', "escape", None),
        (TW, "inst_r", 'st.poll("b")["amps"]', "subscript", "amps"),
        handed(TW, "inst_k", 'Station().poll("c")'),
        # escapes: `st.poll` in a default is a use as a value; in an
        # annotation it resolves to nothing, as `st.poll(...)` there, but
        # it is neither wrapped nor renamed: no unresolved use ("**Uses as a
        # value toolshape cannot resolve**"), n_esc and n_escv have no read;
        # `Station().poll` in an annotation is a use as a value
        (TW, "esc", "st.poll", "escape", None),
        (TW, "esc", "Station().poll", "escape", None),
        (TW, "escv", "Station().poll", "escape", None),
    ],
    # the calls `st.poll(...)` that resolve to nothing (in annotations) read
    # every producer named `poll`; the resolved ones Station.poll only; the
    # uses `st.poll` there, neither wrapped nor renamed, none
    ("pkg/w.py", "watts", "TS001", "watts"): [
        (TW, "n_inst", 'st.poll("a")', "escape", None),
        (TW, "n_instv", 'st.poll("d")', "escape", None),
    ],
}
WHERE_FORMS = {"escape": 40, "subscript": 19, "get": 6, "whole": 2, "store": 1}

# Python 3.12+ (PEP 695): the value of `type X = ...` and the bounds and
# constraints of type parameters (a def's, a class's, a type alias's) are
# annotations; PEP 696 (3.13+): their defaults too.  Not run before 3.12.
WHERE_TYPES = {
    "pyproject.toml": "",
    "pkg/__init__.py": "",
    "pkg/t.py": WHERE_T,
    "tests/test_types.py": """\
from pkg.t import meter, probe, Station

type B = meter("tb")["volts"]  # @c_tb
type PV = probe  # @pv_ta


def test_type_alias():
    r = meter("ta")  # @h_ta
    type A = r["volts"]  # @n_ta
    return r["volts"]  # @ta_r


def test_type_params():
    r = meter("tp")  # @h_tp
    def f[T: r.get("volts"), *Ts, **P](x: T) -> T:  # @n_tp
        return x
    class C[U: (meter("tc"), int)](dict(r)):  # @c_tc
        pass
    type D[V: meter("td")] = list[V]  # @c_td
    return f, C


def test_type_params_kept():
    r = meter("tk")  # @k_tp
    def f[T](x=r["volts"]) -> int:  # @d_tp
        return x
    return f
""",
}
WHERE_TYPES_EXPECT = {
    ("pkg/t.py", "meter", "TS001", "volts"): [
        handed("tests/test_types.py", "c_tb", 'meter("tb")'),
        handed("tests/test_types.py", "h_ta", 'meter("ta")'),
        ("tests/test_types.py", "ta_r", 'r["volts"]', "subscript", "volts"),
        handed("tests/test_types.py", "h_tp", 'meter("tp")'),
        ("tests/test_types.py", "c_tc", "dict(r)", "whole", None),
        handed("tests/test_types.py", "c_tc", 'meter("tc")'),
        handed("tests/test_types.py", "c_td", 'meter("td")'),
        ("tests/test_types.py", "d_tp", 'r["volts"]', "subscript", "volts"),
    ],
    ("pkg/t.py", "probe", "TS001", "rssi"): [
        ("tests/test_types.py", "pv_ta", "probe", "escape", None),
    ],
}
WHERE_TYPES_FORMS = {"escape": 6, "subscript": 2, "whole": 1}
if sys.version_info >= (3, 13):
    # PEP 696: a type parameter's default
    WHERE_TYPES = dict(WHERE_TYPES, **{"tests/test_defaults.py": """\
from pkg.t import meter


def test_type_param_default():
    r = meter("dd")  # @h_dd
    def f[T = r["volts"]]() -> None:  # @n_dd
        return None
    type E[U = meter("de").get("volts")] = U  # @c_de
    return f
"""})
    WHERE_TYPES_EXPECT = dict(WHERE_TYPES_EXPECT)
    WHERE_TYPES_EXPECT[("pkg/t.py", "meter", "TS001", "volts")] = WHERE_TYPES_EXPECT[
        ("pkg/t.py", "meter", "TS001", "volts")] + [
        handed("tests/test_defaults.py", "h_dd", 'meter("dd")'),
        handed("tests/test_defaults.py", "c_de", 'meter("de")'),
    ]
    WHERE_TYPES_FORMS = dict(WHERE_TYPES_FORMS, escape=8)


# assertion messages (docs/rules.md "**Assertion messages.**"): a load of a
# name bound once by `R = C` in a function's scope S, or of a name bound in
# sequence there (the loads that see the binding), standing in the message of
# an `assert` in S itself (the message the name, parentheses seen through, or
# an f-string / implicit concatenation one of whose replacement fields is the
# name: `f"{r}"`, `f"{r!r}"`, `f"{r=}"`, `f"{(r)}"`, `f"x{r}" "y"`, a format
# spec of its own `f"{r:>8}"`) is neither a read nor a use that hands the
# result on.  Next to the decoys: `str(r)`, `(r, 1)`, `r or x`, `f"{r}" + s`,
# a field of a format spec `f"{x:{r}}"`, a nested f-string, a lambda, a
# receiver call written in the message (no name: handed on), the
# assert's test (`assert r` hands on, `assert r == {...}` is a whole read),
# an assert in a nested def, `print(r)` beside a message, a module's name, a
# name under `global`, a message load before the first binding in sequence
# ends; and the keyed reads written in a message (`f"{r['rssi']}"`,
# `f"{r.get('rssi')}"`), reads like any other.
ASSERT_MESSAGES = {
    "pyproject.toml": "",
    "pkg/__init__.py": "",
    "pkg/t.py": '''\
def probe(q):
    return {"status": "success", "content": [], "rssi": -40}  # @probe


def meter(q):
    return {"status": "success", "content": [], "volts": 3}  # @meter


async def later(q):
    return {"status": "success", "content": [], "eta": 3}  # @later
''',
    "tests/test_msg.py": '''\
from pkg.t import probe, meter, later

TOP = probe("m")  # @h_module
assert TOP["rssi"] == -40, f"{TOP}"  # @r_module


def test_allowed(ok, w):
    r1 = probe("a1")
    assert r1["rssi"] == -40, r1  # @a1
    r2 = probe("a2")
    assert "rssi" in r2, (r2)  # @a2
    r3 = probe("a3")
    assert r3.get("rssi") == -40, f"got {r3}"  # @a3
    r4 = probe("a4")
    assert r4["rssi"], f"{r4!r}"  # @a4
    r5 = probe("a5")
    assert r5["rssi"], f"{r5=}"  # @a5
    r6 = probe("a6")
    assert r6["rssi"], f"{(r6)}"  # @a6
    r7 = probe("a7")
    assert r7["rssi"], f"got {r7}" " and more"  # @a7
    r8 = probe("a8")
    assert r8["rssi"], ("before "  # @a8
                        f"{r8!s:>{w}}")
    r9 = probe("a9")
    assert ok, r9
    r10 = probe("a10")
    assert r10["rssi"] == -40 and "rssi" in r10, f"{r10} {r10!r} {r10=}"  # @a10
    r11 = probe("a11")
    assert r11 == {"rssi": -40}, r11  # @a11
    r12 = probe("a12")
    assert ok, f"{r12['rssi']}"  # @a12
    r13 = probe("a13")
    assert ok, f"{r13.get('rssi')} {r13}"  # @a13
    r14 = probe("a14")
    if ok:
        for _ in range(2):
            assert r14["rssi"], r14  # @a14


async def test_awaited():
    r = await later("w")
    assert r["eta"] == 3, f"{r!r}"  # @a_await


def test_sequence(ok):
    r = probe("s1")
    assert r["rssi"] == -40, f"first {r}"  # @s1
    r = meter("s2")
    assert r["volts"] == 3, r  # @s2
    r = probe("s3")
    assert ok, f"{r!r}"
    r = meter("s4")
    r["volts"]  # @s4
    r = probe("s5")  # @h_s5
    assert ok, str(r)
    r = meter("s6")
    assert r["volts"], f"{r=}"  # @s6


def test_sequence_early(ok):
    if ok:
        assert ok, r
    r = probe("e1")  # @h_e1
    r["rssi"]  # @e1
    r = meter("e2")  # @h_e2
    r["volts"]  # @e2


def test_decoys(ok, x):
    d1 = probe("d1")  # @h_d1
    assert d1["rssi"], str(d1)  # @d1
    d2 = probe("d2")  # @h_d2
    assert d2["rssi"], (d2, 1)  # @d2
    d3 = probe("d3")  # @h_d3
    assert d3["rssi"], f"{x:{d3}}"  # @d3
    d4 = probe("d4")  # @h_d4
    assert d4["rssi"], d4 or "none"  # @d4
    d5 = probe("d5")  # @h_d5
    assert d5["rssi"], f"{d5}" + "x"  # @d5
    d6 = probe("d6")  # @h_d6
    assert d6["rssi"], f"{f'{d6}'}"  # @d6
    d7 = probe("d7")  # @h_d7
    assert d7["rssi"], (lambda: d7)  # @d7
    d8 = probe("d8")  # @h_d8
    assert d8, d8
    d9 = probe("d9")  # @h_d9
    assert d9["rssi"], f"{d9}"  # @d9
    print(d9)
    d10 = probe("d10")  # @h_d10
    d10["rssi"]  # @d10

    def check():
        assert ok, f"{d10}"
    d11 = probe("d11")  # @h_d11
    assert d11["rssi"], f"{d11['rssi']}" + str(d11)  # @d11
    d12 = probe("d12")  # @h_d12
    assert d12["rssi"], f"{d12!r:{d12}}"  # @d12
    assert ok, probe("d13")  # @h_d13
    assert ok, f"{probe('d14')}"  # @h_d14
    return check


def test_global():
    global G
    G = probe("g")  # @h_global
    assert G["rssi"], G  # the module owns G: no receiver here
''',
}
TA_ = "tests/test_msg.py"
ASSERT_MESSAGES_EXPECT = {
    ("pkg/t.py", "probe", "TS001", "rssi"): [handed(TA_, tag, 'probe("%s")' % q) for tag, q in (
        ("h_module", "m"), ("h_s5", "s5"), ("h_e1", "e1"), ("h_d1", "d1"), ("h_d2", "d2"), ("h_d3", "d3"),
        ("h_d4", "d4"), ("h_d5", "d5"), ("h_d6", "d6"), ("h_d7", "d7"), ("h_d8", "d8"), ("h_d9", "d9"),
        ("h_d10", "d10"), ("h_d11", "d11"), ("h_d12", "d12"), ("h_global", "g"))] + [
        # a receiver call written in a message: no name, handed on
        handed(TA_, "h_d13", 'probe("d13")'), handed(TA_, "h_d14", "probe('d14')"),
        (TA_, "r_module", 'TOP["rssi"]', "subscript", "rssi"),
        (TA_, "a1", 'r1["rssi"]', "subscript", "rssi"),
        (TA_, "a2", '"rssi" in r2', "in", "rssi"),
        (TA_, "a3", 'r3.get("rssi")', "get", "rssi"),
        (TA_, "a4", 'r4["rssi"]', "subscript", "rssi"),
        (TA_, "a5", 'r5["rssi"]', "subscript", "rssi"),
        (TA_, "a6", 'r6["rssi"]', "subscript", "rssi"),
        (TA_, "a7", 'r7["rssi"]', "subscript", "rssi"),
        (TA_, "a10", 'r10["rssi"]', "subscript", "rssi"),
        (TA_, "a10", '"rssi" in r10', "in", "rssi"),
        (TA_, "a11", 'r11 == {"rssi": -40}', "whole", None),
        (TA_, "a12", "r12['rssi']", "subscript", "rssi"),
        (TA_, "a13", "r13.get('rssi')", "get", "rssi"),
        (TA_, "a14", 'r14["rssi"]', "subscript", "rssi"),
        (TA_, "s1", 'r["rssi"]', "subscript", "rssi"),
        (TA_, "e1", 'r["rssi"]', "subscript", "rssi"),
        (TA_, "d1", 'd1["rssi"]', "subscript", "rssi"),
        (TA_, "d2", 'd2["rssi"]', "subscript", "rssi"),
        (TA_, "d3", 'd3["rssi"]', "subscript", "rssi"),
        (TA_, "d4", 'd4["rssi"]', "subscript", "rssi"),
        (TA_, "d5", 'd5["rssi"]', "subscript", "rssi"),
        (TA_, "d6", 'd6["rssi"]', "subscript", "rssi"),
        (TA_, "d7", 'd7["rssi"]', "subscript", "rssi"),
        (TA_, "d9", 'd9["rssi"]', "subscript", "rssi"),
        (TA_, "d10", 'd10["rssi"]', "subscript", "rssi"),
        (TA_, "d11", 'd11["rssi"]', "subscript", "rssi"),
        (TA_, "d11", "d11['rssi']", "subscript", "rssi"),
        (TA_, "d12", 'd12["rssi"]', "subscript", "rssi"),
        (TA_, "a8", 'r8["rssi"]', "subscript", "rssi"),
    ],
    ("pkg/t.py", "meter", "TS001", "volts"): [
        handed(TA_, "h_e2", 'meter("e2")'),
        (TA_, "s2", 'r["volts"]', "subscript", "volts"),
        (TA_, "s4", 'r["volts"]', "subscript", "volts"),
        (TA_, "s6", 'r["volts"]', "subscript", "volts"),
        (TA_, "e2", 'r["volts"]', "subscript", "volts"),
    ],
    ("pkg/t.py", "later", "TS001", "eta"): [(TA_, "a_await", 'r["eta"]', "subscript", "eta")],
}
ASSERT_MESSAGES_FORMS = {"escape": 19, "subscript": 29, "get": 2, "in": 2, "whole": 1}


# results handed to a checking function (docs/rules.md "**Results handed to a
# checking function.**"): a receiver call H, or a load of a name bound once
# or in sequence in a function, that is a positional argument of a call of
# a checking function (a same-module, undecorated, non-async `def` standing
# in the module's body, whose parameter at that position is only read,
# named in assertion messages or returned whole) is not handed on; the
# checking function's reads of its parameter are reads of the receiver, at
# their spans in the function (a finding lists each once, however many
# calls give it one); when it returns the parameter its call is judged again as H is
# (read, dropped, bound to a name judged as R, handed to a checking
# function again; a `return` or anything else hands the result on, the
# escape at H).  A checker of `status` / `toolUseId` only contributes no
# read of a moved key (the receiver stays exclusive).  Next to the
# disqualified ones, whose calls hand the result on (escape at H) and whose
# reads are none: decorated, async, in an `if`, defined twice, imported,
# `*a` / `**k` in the call, the value passed by keyword, the parameter
# rebound, read in a lambda or a comprehension, passed on, `return P, 1`, a
# generator, a `*args` at the position, beyond a bare `*`, an attribute or
# parenthesized callee, and results passed through then returned, awaited,
# put in a list or passed on; and the loads that are no V: in a nested
# scope, of a module's name.
CHECKERS = {
    "pyproject.toml": "",
    "pkg/__init__.py": "",
    "pkg/t.py": '''\
def probe(q):
    return {"status": "success", "content": [{"text": q}], "frames": 512, "rssi": -40}  # @probe


async def later(q):
    return {"status": "success", "content": [], "eta": 3}  # @later
''',
    "tests/__init__.py": "",
    "tests/helpers.py": '''\
def imported_ok(r):
    return r
''',
    "tests/test_check.py": '''\
import tests.helpers as hm
from pkg.t import probe, later
from tests.helpers import imported_ok


def deco(f):
    return f


def _ok(r):
    assert r["status"] == "success", r
    return r


def _check(r: dict, note="", /):
    assert r.get("toolUseId") is None and "status" in r, f"{r!r} {note}"
    if note:
        return (r)
    assert r["content"][0] is not None  # @c_block
    return r


def _frames(r):
    assert r["frames"] == 512, f"{r=}"  # @c_frames


def _has_rssi(r, *rest, flag=False, **kw):
    assert "rssi" in r  # @c_rssi
    return r


def _first(a, b, /, c=None):
    assert b["status"] == "success"
    return a


def _same(r):
    assert r != {}, r  # @c_whole
    return r


@deco
def d_decorated(r):
    assert r["frames"]
    return r


async def d_async(r):
    assert r["frames"]
    return r


if True:
    def d_if(r):
        assert r["frames"]
        return r


def d_twice(r):
    return r


def d_twice(r):
    return r


def d_rebound(r):
    r = dict(r)
    return r


def d_lambda(r):
    f = lambda: r["frames"]
    return r


def d_comp(r):
    x = [r["frames"] for _ in range(1)]
    return r


def d_passed(r):
    print(r)
    return r


def d_tuple(r):
    assert r["frames"]
    return r, 1


def d_gen(r):
    assert r["frames"]
    yield
    return r


def d_varargs(*rs):
    return rs


def d_bare(a, *, r=None):
    return r


def d_deleted(r):
    assert r["frames"]
    del r


def _either(a, b, /):
    assert a["status"] == b["status"]
    if a["status"]:
        return a
    return b


TOP = _ok(probe("m"))  # @h_module
TOP["frames"]  # @r_module
TOP2 = probe("m2")  # @h_module2
_frames(TOP2)


def _top_only(r):
    return r.get("rssi")


def test_top_in_a_function():
    # a module's name loaded in a function is no V: no read of _top_only
    _top_only(TOP2)


def test_status_only():
    r = _ok(probe("a"))
    assert r["frames"] == 512  # @s_a
    r2 = probe("b")
    _ok(r2)
    r2["rssi"]  # @s_b
    _ok(probe("c"))["frames"]  # @s_c
    x = _ok(_check(probe("d")))
    x["rssi"]  # @s_d
    _check(_ok(_check(probe("e"))), "n")
    y = _check((probe("f")), note="x")
    assert "frames" in y, y  # @s_f
    z = _first(probe("g"), probe("g2"))
    z.get("rssi")  # @s_g
    _first(probe("g3"), 1) == {}  # @s_g3


def test_moved_key():
    _frames(probe("k1"))
    x = [_frames(probe("k2"))]
    r = _has_rssi(probe("k3"), 1, flag=True)
    r["frames"]  # @s_k3
    _same(probe("k4"))


def test_names():
    r = probe("n1")
    checked = _ok(r)
    checked["rssi"]  # @s_n1
    r2 = probe("n2")  # @h_n2
    c = _ok(r2)
    print(c)
    q = probe("q1")
    q = _ok(q)
    q["frames"]  # @s_q1
    q = _ok(probe("q2"))
    assert q["rssi"], q  # @s_q2
    n = probe("n3")  # @h_n3
    n["frames"]  # @s_n3

    def inner():
        _ok(n)
    return inner


async def test_awaited():
    r = _ok(await later("w1"))
    r["eta"]  # @s_w1
    await _ok(probe("w2"))  # @h_w2


def test_returned():
    return _ok(probe("r1"))  # @h_r1


def test_returned_name():
    r = probe("r2")  # @h_r2
    return _ok(r)


def test_elsewhere():
    x = [_ok(probe("l1"))]  # @h_l1
    print(_ok(probe("l2")))  # @h_l2
    y = _ok(probe("l3"))[0]  # @h_l3


def test_disqualified(extra, kw):
    d_decorated(probe("x1"))  # @h_x1
    d_async(probe("x2"))  # @h_x2
    d_if(probe("x3"))  # @h_x3
    d_twice(probe("x4"))  # @h_x4
    imported_ok(probe("x5"))  # @h_x5
    _ok(probe("x6"), *extra)  # @h_x6
    _has_rssi(probe("x7"), **kw)  # @h_x7
    _ok(r=probe("x8"))  # @h_x8
    d_rebound(probe("x9"))  # @h_x9
    d_lambda(probe("x10"))  # @h_x10
    d_comp(probe("x11"))  # @h_x11
    d_passed(probe("x12"))  # @h_x12
    d_tuple(probe("x13"))  # @h_x13
    d_gen(probe("x14"))  # @h_x14
    d_varargs(probe("x15"))  # @h_x15
    d_bare(1, probe("x16"))  # @h_x16
    hm.imported_ok(probe("x17"))  # @h_x17
    (_ok)(probe("x18"))  # @h_x18
    d_deleted(probe("x19"))  # @h_x19
    d_bare(probe("x20"))


def test_cycle():
    # b loaded before it is bound: a cycle carries the result, and hands it on
    a = _either(probe("y1"), b)  # @h_y1
    b = _ok(a)
    b["frames"]  # @s_y1
''',
}
TC_ = "tests/test_check.py"


def _h(tag, q):
    return handed(TC_, tag, 'probe("%s")' % q)


# the reads the checking functions contribute, once per call of a result of probe
_C_BLOCK = (TC_, "c_block", 'r["content"]', "block", None)
_C_WHOLE = (TC_, "c_whole", "r != {}", "whole", None)
_C_FRAMES = (TC_, "c_frames", 'r["frames"]', "subscript", "frames")
_C_RSSI = (TC_, "c_rssi", '"rssi" in r', "in", "rssi")
# the results of probe handed on: escape at H
_CHECK_HANDED = [_h(t, q) for t, q in (
    ("h_module", "m"), ("h_module2", "m2"), ("h_n2", "n2"), ("h_n3", "n3"), ("h_w2", "w2"), ("h_r1", "r1"),
    ("h_r2", "r2"), ("h_l1", "l1"), ("h_l2", "l2"), ("h_l3", "l3"), ("h_y1", "y1"))] + [
    _h("h_x%d" % i, "x%d" % i) for i in range(1, 20)]
# _check's block read: called with probe("d"), probe("e") (twice), probe("f"),
# listed once (a finding lists a read once)
_CHECK_BLOCKS = [_C_BLOCK]
CHECKERS_EXPECT = {
    ("pkg/t.py", "probe", "TS001", "frames"): _CHECK_HANDED + _CHECK_BLOCKS + [
        (TC_, "r_module", 'TOP["frames"]', "subscript", "frames"),
        (TC_, "s_a", 'r["frames"]', "subscript", "frames"),
        (TC_, "s_c", '_ok(probe("c"))["frames"]', "subscript", "frames"),
        (TC_, "s_f", '"frames" in y', "in", "frames"),
        (TC_, "s_g3", '_first(probe("g3"), 1) == {}', "whole", None),
        _C_FRAMES,
        (TC_, "s_k3", 'r["frames"]', "subscript", "frames"),
        _C_WHOLE,
        (TC_, "s_q1", 'q["frames"]', "subscript", "frames"),
        (TC_, "s_n3", 'n["frames"]', "subscript", "frames"),
        (TC_, "s_y1", 'b["frames"]', "subscript", "frames"),
    ],
    ("pkg/t.py", "probe", "TS001", "rssi"): _CHECK_HANDED + _CHECK_BLOCKS + [
        (TC_, "s_b", 'r2["rssi"]', "subscript", "rssi"),
        (TC_, "s_d", 'x["rssi"]', "subscript", "rssi"),
        (TC_, "s_g", 'z.get("rssi")', "get", "rssi"),
        (TC_, "s_g3", '_first(probe("g3"), 1) == {}', "whole", None),
        _C_RSSI,
        _C_WHOLE,
        (TC_, "s_n1", 'checked["rssi"]', "subscript", "rssi"),
        (TC_, "s_q2", 'q["rssi"]', "subscript", "rssi"),
    ],
    ("pkg/t.py", "later", "TS001", "eta"): [(TC_, "s_w1", 'r["eta"]', "subscript", "eta")],
}
CHECKERS_FORMS = {"escape": 30, "subscript": 13, "in": 2, "get": 1, "whole": 2, "block": 1}


# calls toolshape cannot resolve (docs/rules.md "**Calls toolshape cannot
# resolve.**"): a call whose callee is a name `N` or an attribute `X.N`, `N`
# the name of a producer, that is no direct tool call and resolves to
# nothing a module defines has one escape read (span the call, not its
# `await`) of every origin a call of each producer named N reaches (chains
# followed, no dispatch), and no other reads: a dotted path, a module alias,
# an unknown object, an inherited method (`self.N`, `cls.N`, `Sub().N`,
# `s.N`), `K.N` on the class, a parameter, a local variable, a nested def, a
# parenthesized callee, an awaited call, a name of a namespace package's
# import, `os.path.join` (no `A.N`); next to the calls that resolve or are
# exempt: module-level imports of project modules (keyed reads), imports
# inside the test bound there once ("**Imports inside a function**": a name,
# a module, `import M as x`, a function named like a producer; keyed reads),
# calls on an instance of a class defining the method, a method a subclass
# overrides, a constructor named like a producer, a direct tool call, a name
# or attribute of no producer, module-level names and `A.N` imported from
# the standard library, and an external name imported inside a function.
UNRESOLVED = {
    "pyproject.toml": "",
    "pkg/__init__.py": "",
    "ns/sub.py": "X = 1\n",
    "pkg/tools.py": """\
from strands import tool


def probe(q=None):
    return {"status": "success", "content": [], "frames": 3}  # @frames


def relay(q=None):
    return probe(q)


def run(cmd=None):
    return {"status": "success", "content": [], "pid": 1}  # @pid


def join(*parts):
    return {"status": "success", "content": [], "joined": 1}  # @joined


def pick(action):
    if action == "a":
        return {"status": "success", "content": [], "alpha": 1}  # @alpha
    return {"status": "success", "content": [], "beta": 2}  # @beta


async def later(q=None):
    return {"status": "success", "content": [], "eta": 3}  # @eta


@tool
def scan(q):
    return {"status": "success", "content": [], "hits": 2}  # @hits


def plain(q=None):
    return {"status": "success", "content": []}


class Meter:
    def measure(self):
        return {"status": "success", "content": [], "depth": 2}  # @depth


class Probe:
    def __init__(self, q=None):
        self.q = q
""",
    "pkg/other.py": """\
def measure():
    return {"status": "success", "content": [], "level": 1}  # @level


def Probe():
    return {"status": "success", "content": [], "volts": 5}  # @volts
""",
    "tests/test_unresolved.py": """\
import os.path
import subprocess
from os.path import join

import pkg.tools
import pkg.tools as T
from pkg import tools as tools_mod
from pkg.tools import Meter, Probe, probe as probe_top

t = pkg.tools


def test_local_import():
    from pkg.tools import probe
    assert probe()["frames"] == 3  # @u1


def test_local_module():
    from pkg import tools
    r = tools.probe()  # @u2
    assert r["frames"] == 3  # @u2r


def test_local_as():
    import pkg.tools as lt
    lt.relay()["frames"]  # @u3


def test_dotted():
    pkg.tools.probe("d")["frames"]  # @u4


def test_alias():
    t.probe()  # @u5
    (t.probe)()["frames"]  # @u15
    t.pick(action="a")["alpha"]  # @u16


async def test_await():
    r = await t.later()  # @u14
    return r["eta"]


def test_unknown(obj):
    obj.measure()["depth"]  # @u6


class Sub(Meter):
    def check(self):
        return self.measure()["depth"]  # @u7

    @classmethod
    def make(cls):
        return cls.measure()  # @u8


class Own(Meter):
    def measure(self):
        return {"depth": 0}

    def check(self):
        return self.measure()["depth"]


def test_instances():
    Sub().measure()["depth"]  # @u9
    s = Sub()
    s.measure()  # @u10
    m = Meter()
    m.measure()["depth"]  # @r_inst
    Meter().measure()["depth"]  # @r_inst2
    Meter.measure(m)  # @u13
    Own().measure()["depth"]


def test_param(probe):
    return probe()  # @u11


def test_local_var():
    run = make_runner()
    return run()  # @u12


def test_nested():
    def probe():
        return {}
    return probe()  # @u17


def test_local_class():
    from pkg.other import Probe
    return Probe()["volts"]  # @u18


def test_resolved(agent):
    probe_top()["frames"]  # @r1
    T.probe()["frames"]  # @r2
    tools_mod.probe()["frames"]  # @r3
    Probe()
    agent.tool.scan(q="x")["hits"]  # @r4
    t.helper()
    t.plain()
    subprocess.run(["true"])
    join("a", "b")["joined"]
    os.path.join("a")  # @u20
""",
    "tests/test_ns.py": """\
from ns import probe


def test_ns():
    return probe()  # @u19
""",
    "tests/test_external.py": """\
import subprocess
from shutil import which as probe


def test_external():
    probe("ls")
    subprocess.run(["true"]).returncode


def test_inside():
    from subprocess import run
    return run(["true"])  # @u21
""",
}
TU = "tests/test_unresolved.py"
_U_MEASURE = [handed(TU, tag, text) for tag, text in (
    ("u6", "obj.measure()"), ("u7", "self.measure()"), ("u8", "cls.measure()"), ("u9", "Sub().measure()"),
    ("u10", "s.measure()"), ("u13", "Meter.measure(m)"))]
_U_PICK = [handed(TU, "u16", 't.pick(action="a")')]
UNRESOLVED_EXPECT = {
    ("pkg/tools.py", "frames", "TS001", "frames"): [handed(TU, tag, text) for tag, text in (
        ("u4", 'pkg.tools.probe("d")'),
        ("u5", "t.probe()"), ("u15", "(t.probe)()"), ("u11", "probe()"), ("u17", "probe()"))] + [
        handed("tests/test_ns.py", "u19", "probe()"),
        # imports inside the test, bound there once: resolved ("**Imports inside a function**")
        (TU, "u1", 'probe()["frames"]', "subscript", "frames"),
        (TU, "u2r", 'r["frames"]', "subscript", "frames"),
        (TU, "u3", 'lt.relay()["frames"]', "subscript", "frames"),
        (TU, "r1", 'probe_top()["frames"]', "subscript", "frames"),
        (TU, "r2", 'T.probe()["frames"]', "subscript", "frames"),
        (TU, "r3", 'tools_mod.probe()["frames"]', "subscript", "frames")],
    # `from subprocess import run` inside a function: imported from outside the project, exempt
    ("pkg/tools.py", "pid", "TS001", "pid"): [handed(TU, "u12", "run()")],
    ("pkg/tools.py", "joined", "TS001", "joined"): [handed(TU, "u20", 'os.path.join("a")')],
    ("pkg/tools.py", "alpha", "TS001", "alpha"): _U_PICK,
    ("pkg/tools.py", "beta", "TS001", "beta"): _U_PICK,
    ("pkg/tools.py", "eta", "TS001", "eta"): [handed(TU, "u14", "t.later()")],
    ("pkg/tools.py", "hits", "TS001", "hits"): [(TU, "r4", 'agent.tool.scan(q="x")["hits"]', "subscript", "hits")],
    ("pkg/tools.py", "depth", "TS001", "depth"): _U_MEASURE + [
        (TU, "r_inst", 'm.measure()["depth"]', "subscript", "depth"),
        (TU, "r_inst2", 'Meter().measure()["depth"]', "subscript", "depth")],
    ("pkg/other.py", "level", "TS001", "level"): _U_MEASURE,
    ("pkg/other.py", "volts", "TS001", "volts"): [(TU, "u18", 'Probe()["volts"]', "subscript", "volts")],
}
UNRESOLVED_FORMS = {"escape": 16, "subscript": 10}



# uses as a value toolshape cannot resolve (docs/rules.md "**Uses as a value
# toolshape cannot resolve**"): a use as a value (not a callee, not an
# attribute's object, not a target; parentheses seen through) that is an
# attribute `Y.N` or a name `N` resolving to the module's bindings (any kind,
# any number), to bindings at least one of which is an import (in any scope)
# or to nothing (a star import),
# `N` the name of producers, such that a call of it there would be an
# unresolved call (a direct tool call's callee `A.tool.N` too) has one escape
# read, span the use, of every origin each producer so named reaches (chains
# followed), only when it is called through a wrapper or given another name
# (two of the forms that make a tool's use an escape; handed to a call that
# keeps it is not one of them), of a tool or not.  Escapes:
# `fn = probe` after an import inside the test and `raw(tools.probe)("x")`
# after `from pkg import tools` inside the test (imports bound there once:
# resolved, "**Imports inside a function**", so ordinary escapes of a tool),
# `fn = run` after `from M import run` in a `try` and `from M2 import run` in
# its `except` (imports only, bound twice: unresolved), `take = probe` and
# `raw(probe)("x")` after `try: from pkg.tools import probe` / `except
# ImportError: probe = None` inside the test (an import among the bindings,
# bound twice: unresolved), `return helper` after `from pkg.tools import
# helper` / `helper = wrap(helper)` inside the test (the same), `fn = run`
# after `try: from subprocess import run` / `except ImportError: run = None`
# (an import from outside the project, but bound twice: no exemption),
# `f = pkg.tools.helper` and
# `h = pkg.tools.relay` (a chain) through a dotted path,
# `fn = pkg.tools.probe`, `fn = t.probe` through a module alias,
# `fn = agent.tool.probe` and `{"h": agent.tool.helper}` (a direct tool
# call's callee), `return self.helper` in a class that does not define it,
# names of a test module bound at module level by an
# assignment (`probe = make_probe()`, `helper = None`) or twice (`try: from
# pkg.tools import run / except ImportError: run = None`; `alt = (run)`),
# names of a star import (`yield helper`, `fn = probe`), `obs =
# scan.obstacles` (a parameter's attribute); a tool and a producer that is
# none sharing a name (`gauge`): both read, renamed (`fn = pkg.tools.gauge`)
# or wrapped (`raw(pkg.more.gauge)("x")`).  None: the plain uses, of a tool
# (`callable(probe)`, `tools.probe is not None`, `callable(pkg.tools.probe)`,
# `print(agent.tool.probe)`, `g(probe)` of a star import or of a
# module-level assignment) or not (`check(pkg.tools.relay)`,
# `check(pkg.more.gauge)`, `check(agent.tool.helper)`, `print(t.helper)`,
# `[t.helper]`, `lambda: t.helper`, `check(helper)` of a module-level
# assignment or of a star import, `handlers = [run]`,
# `len(scan.obstacles)`, `for o in scan.obstacles`), a tool's use handed to a
# call that keeps it (`r = asyncio.to_thread(probe, 1)` after an optional
# import, `fut = pool.submit(pkg.tools.probe, 1)`, `raw(pkg.tools.probe,
# None)("x")`: that form of a tool's escape is no unresolved use), `subprocess.run` with
# `import subprocess` at module level or inside the function (bound there
# once: exempt as well), a parameter or a local variable named
# like a producer, a name bound inside the function by a parameter and an
# assignment (no import: `take = probe`), a name bound inside the function by
# an import and by an assignment used plainly (`helper = wrap(helper)`,
# `print(probe)`, `check(probe)`), a name resolving to a project function that is no producer or
# to a project class, and a name resolving to a producer (an ordinary escape,
# `r = relay`: one read, not two).
UNRESOLVED_USES = {
    "pyproject.toml": "",
    "pkg/__init__.py": "",
    "pkg/tools.py": """\
from strands import tool


@tool
def probe(q=None):
    return {"status": "success", "content": [], "frames": 3}  # @frames


def helper(q=None):
    return {"status": "success", "content": [], "level": 1}  # @level


def relay(q=None):
    return helper(q)


def run(cmd=None):
    return {"status": "success", "content": [], "pid": 1}  # @pid


@tool
def gauge(q=None):
    return {"status": "success", "content": [], "volts": 5}  # @volts


def obstacles(q=None):
    return {"status": "success", "content": [], "count": 4}  # @count
""",
    "pkg/more.py": """\
def run(cmd=None):
    return {"status": "success", "content": [], "rc": 0}  # @rc


def gauge(q=None):
    return {"status": "success", "content": [], "amps": 2}  # @amps
""",
    "pkg/other.py": """\
def helper():
    return None


class relay:
    pass
""",
    "tests/test_values.py": """\
import subprocess

import pkg.more
import pkg.tools
from pkg.tools import relay

t = pkg.tools


def raw(f):
    return f


def test_local_import():
    from pkg.tools import probe
    fn = probe  # @v_local
    assert fn()["frames"] == 3
    assert callable(probe)  # @x_local_plain


def test_wrapped():
    from pkg import tools
    assert raw(tools.probe)("x")["frames"] == 3  # @v_wrapped
    assert tools.probe is not None  # @x_operand


def test_dotted():
    f = pkg.tools.helper  # @v_dotted
    check(pkg.tools.relay)  # @x_chain_plain
    h = pkg.tools.relay  # @v_chain
    assert callable(pkg.tools.probe)  # @x_dotted_plain
    g = pkg.tools.probe  # @v_dotted_tool
    fn = pkg.tools.gauge  # @v_gauge
    check(pkg.more.gauge)  # @x_more_plain
    assert raw(pkg.more.gauge)("x")["amps"] == 2  # @v_more
    return f, g, fn, h


def test_alias():
    fn = t.probe  # @v_alias
    print(t.helper)  # @x_alias_plain
    hs = [t.helper]  # @x_alias_list
    cb = lambda: t.helper  # @x_alias_lambda
    return fn, hs, cb


def test_agent(agent):
    fn = agent.tool.probe  # @v_agent
    print(agent.tool.probe)  # @x_agent_plain
    check(agent.tool.helper)  # @x_agent_helper_plain
    hs = {"h": agent.tool.helper}  # @v_agent_helper
    return fn, hs


def test_scan(scan):
    assert len(scan.obstacles) == 2  # @x_len
    for o in scan.obstacles:  # @x_for
        assert o
    obs = scan.obstacles  # @v_obstacles
    return obs


def test_external():
    x = subprocess.run  # @x_external
    return x


def test_local_external():
    import subprocess
    x = subprocess.run  # @x_local_external
    return x


def test_local_twice():
    try:
        from pkg.tools import run
    except ImportError:
        from pkg.more import run
    fn = run  # @v_local_twice
    return fn


def test_locals(run):
    gauge = make()
    fn = run  # @x_param
    g = gauge  # @x_local
    return fn, g


def test_mixed():
    from pkg.tools import helper
    helper = wrap(helper)  # @x_mixed
    return helper  # @v_mixed


def test_optional_import():
    try:
        from pkg.tools import probe
    except ImportError:
        probe = None
    take = probe  # @v_optional
    assert take()["frames"] == 3


def test_optional_wrapped():
    try:
        from pkg.tools import probe
    except ImportError:
        probe = None
    assert raw(probe)("x")["frames"] == 3  # @v_optional_wrapped


def test_optional_plain():
    try:
        from pkg.tools import probe
    except ImportError:
        probe = None
    print(probe)  # @x_optional_plain
    check(probe)  # @x_optional_check


def test_optional_kept(pool):
    try:
        from pkg.tools import probe
    except ImportError:
        probe = None
    r = asyncio.to_thread(probe, 1)  # @x_optional_kept
    fut = pool.submit(pkg.tools.probe, 1)  # @x_dotted_kept
    raw(pkg.tools.probe, None)("x")  # @x_dotted_wrapped_two
    return r, fut


def test_optional_external():
    try:
        from subprocess import run
    except ImportError:
        run = None
    fn = run  # @v_optional_external
    return fn


def test_param_assigned(probe, a):
    if a:
        probe = make()
    take = probe  # @x_param_assigned
    return take


def test_resolved():
    r = relay  # @e_resolved
    return r


class Base:
    pass


class Sub(Base):
    def go(self):
        return self.helper  # @v_self
""",
    "tests/test_assigned.py": """\
try:
    from pkg.tools import run
except ImportError:
    run = None

probe = make_probe()
helper = None


def test_assigned():
    fn = probe  # @v_assigned
    assert callable(probe)  # @x_assigned_plain
    check(helper)  # @x_assigned_h_plain
    h = helper  # @v_assigned_h
    handlers = [run]  # @x_twice_plain
    alt = (run)  # @v_twice
    return fn, h, handlers, alt
""",
    "tests/test_star.py": """\
from pkg.tools import *


def test_star():
    check(helper)  # @x_star_plain
    g(probe)  # @x_star_tool
    fn = probe  # @v_star_tool
    return fn


def gen_star():
    yield helper  # @v_star
""",
    "tests/test_resolved.py": """\
from pkg.other import helper, relay


def test_project():
    fn = helper  # @x_function
    k = relay  # @x_class
    return fn, k
""",
}
TV = "tests/test_values.py"
TVA = "tests/test_assigned.py"
TVS = "tests/test_star.py"
_V_RUN = [_esc(TVA, "v_twice", "run"), _esc(TV, "v_local_twice", "run"), _esc(TV, "v_optional_external", "run")]
_V_GAUGE = [_esc(TV, "v_gauge", "pkg.tools.gauge"), _esc(TV, "v_more", "pkg.more.gauge")]
UNRESOLVED_USES_EXPECT = {
    ("pkg/tools.py", "frames", "TS001", "frames"): [
        _esc(TV, "v_local", "probe"), _esc(TV, "v_wrapped", "tools.probe"), _esc(TV, "v_dotted_tool", "pkg.tools.probe"),
        _esc(TV, "v_alias", "t.probe"), _esc(TV, "v_agent", "agent.tool.probe"), _esc(TVA, "v_assigned", "probe"),
        _esc(TVS, "v_star_tool", "probe"), _esc(TV, "v_optional", "probe"),
        _esc(TV, "v_optional_wrapped", "probe")],
    ("pkg/tools.py", "level", "TS001", "level"): [
        _esc(TV, "v_dotted", "pkg.tools.helper"), _esc(TV, "v_chain", "pkg.tools.relay"),
        _esc(TV, "v_agent_helper", "agent.tool.helper"), _esc(TV, "e_resolved", "relay"),
        _esc(TV, "v_self", "self.helper"), _esc(TVA, "v_assigned_h", "helper"), _esc(TVS, "v_star", "helper"),
        _esc(TV, "v_mixed", "helper")],
    ("pkg/tools.py", "pid", "TS001", "pid"): _V_RUN,
    ("pkg/more.py", "rc", "TS001", "rc"): _V_RUN,
    ("pkg/tools.py", "volts", "TS001", "volts"): _V_GAUGE,
    ("pkg/more.py", "amps", "TS001", "amps"): _V_GAUGE,
    ("pkg/tools.py", "count", "TS001", "count"): [_esc(TV, "v_obstacles", "scan.obstacles")],
}
UNRESOLVED_USES_FORMS = {"escape": 23}

# imports inside a function (docs/rules.md TS003 "**Imports inside a
# function**"): a name (a callee `N`, or the `A` of `A.N`) that resolves to
# the bindings of a function's own scope (the def it stands in or one
# enclosing it) bound there exactly once by an import resolves as a
# module-level one does, for every rule that resolves a callee so: a test's
# `from pkg.tools import probe` then `r = probe("a")` and `r["frames"]` (a
# keyed read, the receiver exclusive), `from pkg import tools` and
# `import pkg.tools as tools` then `tools.probe(...)`, a producer chained
# through a relative import inside it (`relay`: case 4), a nested def, a
# lambda and a comprehension using the enclosing function's import, a call
# on an instance of a class imported so (`Meter().measure()`, `m =
# Meter()`), a tool whose return is a builder call through a local import
# (TS003 findings at that call, read through the tool), a builder called in
# the test through one (TS003 at the call, read), a chain of builders whose
# returned call goes through one (`fail(msg, **kw)`: TS003 at `fail(...)`), a
# builder reached through a module imported in the enclosing function
# (`common.ok(...)` in a nested def), a producer that is no tool imported so
# and used as a value (an escape); next to what resolves nothing, as before:
# the name imported in a nested def and called in the function enclosing it,
# bound twice (`try` / `except ImportError`), a dotted `import pkg.tools`,
# imported in a class body (called there and in a method), two imports in
# `if` / `else` (`run`: an unresolved call); and `from subprocess import run`,
# `import subprocess as sp` inside the test: imported from outside the
# project, so `run(...)` and `sp.run(...)` are no unresolved calls.
LOCAL_IMPORTS = {
    "pyproject.toml": "",
    "pkg/__init__.py": "",
    "pkg/common.py": """\
def ok(text, **extra):
    return {"status": "success", "content": [{"text": text}], **extra}
""",
    "pkg/tools.py": """\
def probe(q=None):
    return {"status": "success", "content": [], "frames": 3}  # @frames


def helper(q=None):
    return {"status": "success", "content": [], "level": 1}  # @level


def run(cmd=None):
    return {"status": "success", "content": [], "pid": 1}  # @pid


class Meter:
    def measure(self):
        return {"status": "success", "content": [], "depth": 2}  # @depth
""",
    "pkg/relay.py": """\
def relay(q=None):
    from .tools import probe
    return probe(q)
""",
    "pkg/tooling.py": """\
from strands import tool


@tool
def devices(q):
    from pkg.common import ok
    return ok("listed", count=2, took=1)  # @ok_tool


def fail(msg, **kw):
    from .common import ok
    return ok(msg, **kw)


def broken(q):
    return fail("no", code=2)  # @fail_call


def nested(q):
    from . import common

    def inner():
        return common.ok("in", rows=[q])  # @ok_nested
    return inner()


def maybe(q):
    try:
        from .common import ok
    except ImportError:
        ok = None
    return ok("x", extra=1)


class Panel:
    from .common import ok
    DEFAULT = ok("idle", mode=1)
""",
    "tests/test_local.py": """\
import pytest


def test_name():
    from pkg.tools import probe
    r = probe("a")
    assert r["frames"] == 3  # @l1


def test_module():
    from pkg import tools
    assert tools.probe("b")["frames"] == 3  # @l2


def test_module_as():
    import pkg.tools as tools
    r = tools.probe("c")
    assert r.get("frames") == 3  # @l3


def test_chain():
    from pkg.relay import relay
    assert "frames" in relay("d")  # @l4


def test_nested():
    from pkg.tools import probe

    def check():
        return probe("e")["frames"]  # @l5
    get = lambda: probe("f")["frames"]  # @l6
    assert [probe(q)["frames"] for q in "gh"]  # @l7
    return check, get


def test_inner_import():
    def load():
        from pkg.tools import probe
        return probe("i")["frames"]  # @l8
    load()
    return probe("j")  # @u1


def test_twice():
    try:
        from pkg.tools import probe
    except ImportError:
        probe = None
    assert probe("k")["frames"] == 3  # @u2


def test_dotted():
    import pkg.tools
    return pkg.tools.probe("l")  # @u3


class TestPanel:
    from pkg.tools import probe
    BASE = probe("m")  # @u4

    def test_method(self):
        return probe("n")["frames"]  # @u5


def test_external():
    from subprocess import run
    import subprocess as sp
    run(["true"])
    sp.run(["true"]).returncode


def test_external_twice(flag):
    if flag:
        from subprocess import run
    else:
        from shutil import run
    return run(["true"])  # @u6


def test_instance():
    from pkg.tools import Meter
    assert Meter().measure()["depth"] == 2  # @l9
    m = Meter()
    assert m.measure()["depth"] == 2  # @l10


def test_tool():
    from pkg.tooling import devices
    r = devices("q")
    assert r["took"] == 1  # @l11
    assert r["status"] == "success"


def test_builder():
    from pkg.common import ok
    r = ok("x", rows=[1])  # @ok_test
    assert r["rows"] == [1]  # @l12


def test_values(executor):
    from pkg.tools import helper
    executor.submit(helper, "q")  # @e1
""",
}
TLI = "tests/test_local.py"
LOCAL_IMPORTS_EXPECT = {
    ("pkg/tools.py", "frames", "TS001", "frames"): [
        (TLI, "l1", 'r["frames"]', "subscript", "frames"),
        (TLI, "l2", 'tools.probe("b")["frames"]', "subscript", "frames"),
        (TLI, "l3", 'r.get("frames")', "get", "frames"),
        (TLI, "l4", '"frames" in relay("d")', "in", "frames"),
        (TLI, "l5", 'probe("e")["frames"]', "subscript", "frames"),
        (TLI, "l6", 'probe("f")["frames"]', "subscript", "frames"),
        (TLI, "l7", 'probe(q)["frames"]', "subscript", "frames"),
        (TLI, "l8", 'probe("i")["frames"]', "subscript", "frames"),
        handed(TLI, "u1", 'probe("j")'), handed(TLI, "u2", 'probe("k")'),
        handed(TLI, "u3", 'pkg.tools.probe("l")'), handed(TLI, "u4", 'probe("m")'),
        handed(TLI, "u5", 'probe("n")')],
    ("pkg/tools.py", "pid", "TS001", "pid"): [handed(TLI, "u6", 'run(["true"])')],
    ("pkg/tools.py", "depth", "TS001", "depth"): [
        (TLI, "l9", 'Meter().measure()["depth"]', "subscript", "depth"),
        (TLI, "l10", 'm.measure()["depth"]', "subscript", "depth")],
    ("pkg/tools.py", "level", "TS001", "level"): [_esc(TLI, "e1", "helper")],
    # TS003 at calls through imports inside a function
    ("pkg/tooling.py", "ok_tool", "TS003", "took"): [(TLI, "l11", 'r["took"]', "subscript", "took")],
    ("pkg/tooling.py", "ok_tool", "TS003", "count"): [],
    ("pkg/tooling.py", "fail_call", "TS003", "code"): [],
    ("pkg/tooling.py", "ok_nested", "TS003", "rows"): [],
    (TLI, "ok_test", "TS003", "rows"): [(TLI, "l12", 'r["rows"]', "subscript", "rows")],
}
LOCAL_IMPORTS_FORMS = {"subscript": 10, "get": 1, "in": 1, "escape": 7}


# decorators (docs/rules.md "**Decorators.**"): each decorator of the def of a
# producer (a module-level function or a method directly in a module-level
# class), tool or not, is one read of form escape (key null), span the
# decorator's expression (parentheses around it not included), of every origin
# a receiver call of the producer without arguments reaches (chains followed,
# no dispatch), for every finding of those origins (a TS002 spread's too):
# `@pytest.fixture` (with arguments too, in a conftest and in a test module,
# on a fixture returning a tool's call or a chain onto it), `@property`,
# `@functools.lru_cache(maxsize=2)`, `@lru_cache`, `@(log_calls)`, a
# decorator beside a tool decorator or an exempt one, an async producer, a
# dispatcher (both returns); `@override(1)` (a project function called),
# `@builtins.staticmethod`, `@my_abc.abstractmethod` (other spellings); next
# to the decorators that give nothing: the tool decorators (`@tool`,
# `@strands.tool(name="x")`), the exempt names and attributes as written
# (`@staticmethod`, `@classmethod`, `@abstractmethod`, `@abc.abstractmethod`,
# `@override`, `@typing.override`, `@typing_extensions.override`,
# `@(staticmethod)`, and `@override` bound to a project function), and the
# decorators of what is no producer: a function holding a finding but
# returning none, a compliant result or None, a nested def, a method of a
# nested class, a class.  A fixture's parameter read in a test is no read.
DECORATORS = {
    "pyproject.toml": "",
    "pkg/__init__.py": "",
    "pkg/util.py": """\
import functools


def log_calls(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)
    return wrapper
""",
    "pkg/decos.py": """\
def override(level):
    def wrap(fn):
        return fn
    return wrap


def abstractmethod(fn):
    return fn
""",
    "pkg/tools.py": """\
import abc
import functools
import typing
import typing_extensions
from abc import abstractmethod
from functools import lru_cache
from typing import override

import strands
from strands import tool

from .util import log_calls

RESULTS = []


@tool
def probe(q):
    return {"status": "success", "content": [], "frames": 1}  # @probe


def helper():
    return probe("h")


@tool
@log_calls  # @d_log
def logged(q):
    return {"status": "success", "content": [], "lines": 1}  # @logged


@strands.tool(name="x")
def named(q):
    return {"status": "success", "content": [], "named_key": 1}  # @named


@log_calls  # @d_cached_log
@functools.lru_cache(maxsize=2)  # @d_lru_call
def cached(q):
    return {"status": "success", "content": [], "hits": 1, **extra}  # @cached


@lru_cache  # @d_lru
def cached2(q):
    return {"status": "success", "content": [], "hits2": 1}  # @cached2


@(log_calls)  # @d_paren
def pick(action):
    if action == "a":
        return {"status": "success", "content": [], "alpha": 1}  # @alpha
    return {"status": "success", "content": [], "beta": 2}  # @beta


@log_calls  # @d_async
async def later(q):
    return {"status": "success", "content": [], "eta": 3}  # @later


@log_calls
def side(q):
    RESULTS.append({"status": "success", "content": [], "side_key": 1})  # @side


@log_calls
def compliant(q):
    return {"status": "success", "content": [{"text": q}]}


def outer():
    @log_calls
    def inner():
        return {"status": "success", "content": [], "inner_key": 1}  # @inner
    return inner


@log_calls
class Box:
    def unpack(self):
        return {"status": "success", "content": [], "boxed": 1}  # @boxed

    class Inner:
        @property
        def value(self):
            return {"status": "success", "content": [], "nested_key": 1}  # @nested


class Meter:
    @property  # @d_prop
    def reading(self):
        return {"status": "success", "content": [], "volts": 5}  # @volts

    @staticmethod
    def s_static(q):
        return {"status": "success", "content": [], "st": 1}  # @st

    @classmethod
    def c_cls(cls, q):
        return {"status": "success", "content": [], "cm": 1}  # @cm

    @abstractmethod
    def a_abs(self):
        return {"status": "success", "content": [], "ab": 1}  # @ab

    @abc.abstractmethod
    def a_abs2(self):
        return {"status": "success", "content": [], "ab2": 1}  # @ab2

    @override
    def o1(self):
        return {"status": "success", "content": [], "o1": 1}  # @o1

    @typing.override
    def o2(self):
        return {"status": "success", "content": [], "o2": 1}  # @o2

    @typing_extensions.override
    def o3(self):
        return {"status": "success", "content": [], "o3": 1}  # @o3

    @(staticmethod)
    def s_paren(q):
        return {"status": "success", "content": [], "sp": 1}  # @sp

    @staticmethod
    @log_calls  # @d_mixed
    def mixed(q):
        return {"status": "success", "content": [], "mx": 1}  # @mx
""",
    "pkg/custom.py": """\
import builtins

from . import decos as my_abc
from .decos import override


@override(1)  # @d_over_call
def tuned(q):
    return {"status": "success", "content": [], "tuned": 1}  # @tuned


class Plain:
    @builtins.staticmethod  # @d_builtins
    def b_static(q):
        return {"status": "success", "content": [], "bs": 1}  # @bs

    @my_abc.abstractmethod  # @d_my_abc
    def my_abs(self):
        return {"status": "success", "content": [], "mab": 1}  # @mab

    @override
    def o_local(self):
        return {"status": "success", "content": [], "ol": 1}  # @ol
""",
    "tests/conftest.py": """\
import pytest

from pkg.tools import helper, probe


@pytest.fixture  # @d_fix1
def probed():
    return probe("a")


@pytest.fixture(scope="module")  # @d_fix2
def res():
    return helper()


@pytest.fixture
def nothing():
    return None
""",
    "tests/test_fixtures.py": """\
import pytest

from pkg.tools import probe


@pytest.fixture  # @d_fix3
def local_probed():
    return probe("b")


def test_x(probed, local_probed, res):
    assert probed["frames"] == 1
    assert local_probed.get("frames") == 1
    assert "frames" in res
""",
}
DT = "pkg/tools.py"
DC = "pkg/custom.py"
_D_PICK = [_esc(DT, "d_paren", "log_calls")]
DECORATORS_EXPECT = {
    (DT, "probe", "TS001", "frames"): [_esc("tests/conftest.py", "d_fix1", "pytest.fixture"),
                                      _esc("tests/conftest.py", "d_fix2", 'pytest.fixture(scope="module")'),
                                      _esc("tests/test_fixtures.py", "d_fix3", "pytest.fixture")],
    (DT, "logged", "TS001", "lines"): [_esc(DT, "d_log", "log_calls")],
    (DT, "cached", "TS001", "hits"): [_esc(DT, "d_cached_log", "log_calls"),
                                      _esc(DT, "d_lru_call", "functools.lru_cache(maxsize=2)")],
    (DT, "cached", "TS002", None): [_esc(DT, "d_cached_log", "log_calls"),
                                    _esc(DT, "d_lru_call", "functools.lru_cache(maxsize=2)")],
    (DT, "cached2", "TS001", "hits2"): [_esc(DT, "d_lru", "lru_cache")],
    (DT, "alpha", "TS001", "alpha"): _D_PICK,
    (DT, "beta", "TS001", "beta"): _D_PICK,
    (DT, "later", "TS001", "eta"): [_esc(DT, "d_async", "log_calls")],
    (DT, "volts", "TS001", "volts"): [_esc(DT, "d_prop", "property")],
    (DT, "mx", "TS001", "mx"): [_esc(DT, "d_mixed", "log_calls")],
    (DC, "tuned", "TS001", "tuned"): [_esc(DC, "d_over_call", "override(1)")],
    (DC, "bs", "TS001", "bs"): [_esc(DC, "d_builtins", "builtins.staticmethod")],
    (DC, "mab", "TS001", "mab"): [_esc(DC, "d_my_abc", "my_abc.abstractmethod")],
}
DECORATORS_FORMS = {"escape": 14}


# tools given another name (docs/rules.md "**Escapes.**"): a use as a value
# of a tool is exempt, but not when it is called through a wrapper
# (`raw(probe)("q")`, `(raw)((scan))(1)`) nor when it gives the tool another
# name to be called by, parentheses seen through: the whole value of an
# assignment (`fn = probe`, `fn: T = probe`, `a = b = probe`, `(c :=
# probe)`, an attribute or subscript target, a class body's name, a module's
# name), the value of a `return` (a pytest fixture's, an async def's, a
# method's `return self.tooled`) or a `yield` (`x = yield scan` too), the
# value of a key-value pair of a dict display; each a read of form escape
# (span without the parentheses) of every finding of the tool's origins
# (scan's TS002 spread too); a tool through `A.name`, `self.m`, `K().m`,
# `N.m`; and `raw(probe, None)("q")`: no wrapper (two arguments), but a
# positional argument of a call whose value is kept (called), so handed to a
# call that keeps what it gives (see "tool_kept_calls" below).  Still
# exempt: an element of a list, tuple or set (`tools=[probe]`,
# `(probe,)`, `a, b = probe, 1`, `return probe, 1`, `yield probe, 1`), an
# argument of a call statement or a builtin, or a keyword
# (`register_tool(probe)`, `callable(probe)`,
# `dict(run=probe)`, `raw(f=probe)("q")`), an
# operand (`probe is not None`, `probe or scan`), a conditional
# (`fn = probe if flag else None`, `return probe if flag else None`),
# `yield from probe`, `x += probe`, a dict display's key (`{probe: 1}`),
# `{**probe}`, a dict comprehension's value, a lambda body, a parameter
# default, an annotation (`fn: probe = None`), `probe.__name__`, a call
# `probe()` (a dropped result, no read) and `probe("q")["frames"]` (a keyed
# read), a fixture returning no tool.
TOOL_RENAMES = {
    "pyproject.toml": "",
    "pkg/__init__.py": "",
    "pkg/tools.py": """\
from typing import Callable

import strands
from strands import Agent, tool


@tool
def probe(q):
    return {"status": "success", "content": [], "frames": 1}  # @probe


@strands.tool(name="scanner")
def scan(q):
    return {"status": "success", "content": [], "hz": 2, **extra}  # @scan


def plain(q):
    return None


class Kit:
    @tool
    def tooled(self, q):
        return {"status": "success", "content": [], "tm": 1}  # @tooled

    def handler(self):
        return self.tooled  # @r_self_return

    def handlers(self):
        return [self.tooled]  # @x_self_list

    def bind(self):
        self.fn = self.tooled  # @r_self_attr


class Holder:
    fn = probe  # @r_class


fn_m = probe  # @r_mod_assign
fn_ann: Callable = probe  # @r_mod_ann
fn_a = fn_b = scan  # @r_mod_chain
(fn_w := probe)  # @r_mod_walrus
fn_p = ((scan))  # @r_mod_paren
TABLE = {"run": probe, 2: plain}  # @r_mod_dict
AGENT = Agent(tools=[probe, scan])  # @x_mod_tools
PAIR = (probe,)  # @x_mod_tuple
U1, U2 = probe, 1  # @x_mod_unpack
register_tool(probe)  # @x_mod_register
KEYED = {probe: 1}  # @x_mod_key
LAM = lambda: probe  # @x_mod_lambda
""",
    "tests/conftest.py": """\
import pytest

from pkg.tools import probe, scan


@pytest.fixture
def probe_fn():
    return probe  # @r_fixture


@pytest.fixture
def scanner():
    return (scan)  # @r_fixture_paren


@pytest.fixture
def tools_pair():
    return probe, 1  # @x_fixture_tuple


@pytest.fixture
def tools_list():
    return [probe]  # @x_fixture_list
""",
    "tests/test_renames.py": """\
from typing import Callable

import pkg.tools as T
from pkg.tools import Kit, probe, scan


def raw(f):
    return f


def test_renames(agent, registry, other, flag):
    fn = probe  # @r_assign
    fn("q")["frames"]
    fn2: Callable = probe  # @r_ann
    a = b = probe  # @r_chain
    if (c := probe) is not None:  # @r_walrus
        pass
    fn3 = (probe)  # @r_paren
    fn4: Callable = (scan)  # @r_ann_paren
    d = e = (scan)  # @r_chain_paren
    ((g := (scan)))  # @r_walrus_paren
    table = {"run": probe}  # @r_dict
    table2 = {"run": (scan), **other}  # @r_dict_paren
    agent.fn = T.probe  # @r_module_attr
    registry["p"] = probe  # @r_subscript_target
    k = Kit()
    h = k.tooled  # @r_inst_name
    h2 = (Kit().tooled)  # @r_inst_call
    raw(probe)("q")  # @r_wrapped
    (raw)((scan))(1)  # @r_wrapped_paren


def test_exempt(agent, other, flag, acc):
    agent = Agent(tools=[probe, scan])  # @x_tools
    tup = (probe,)  # @x_tuple
    a2, b2 = probe, 1  # @x_unpack
    register_tool(probe)  # @x_register
    assert callable(probe)  # @x_callable
    assert probe is not None  # @x_is
    either = probe or scan  # @x_or
    cond = probe if flag else None  # @x_cond
    keyed = {probe: 1}  # @x_key
    spread = {**probe}  # @x_spread
    comp = {k: probe for k in "ab"}  # @x_dictcomp
    kw = dict(run=probe)  # @x_kw
    acc += probe  # @x_aug
    name = probe.__name__  # @x_attr
    probe()  # @x_call
    probe("q")["frames"]  # @s1
    lam = lambda: scan  # @x_lambda
    k = Kit()
    tools = [k.tooled, Kit().tooled]  # @x_inst_list
    raw(probe, None)("q")  # @k_wrapped_two
    raw(f=probe)("q")  # @x_wrapped_kw
    fn5: probe = None  # @x_annotation

    def hook(cb=probe):  # @x_default
        return cb


def gen_tools(flag):
    yield probe  # @r_yield
    yield (scan)  # @r_yield_paren
    got = yield scan  # @r_yield_assign
    yield probe, 1  # @x_yield_tuple
    yield [probe]  # @x_yield_list
    yield from probe  # @x_yield_from


async def async_fixture():
    return T.probe  # @r_async_return


def choose(flag):
    if flag:
        return probe if flag else None  # @x_return_cond
    return Kit().tooled  # @r_return_inst
""",
}
TR = "pkg/tools.py"
TC = "tests/conftest.py"
TRN = "tests/test_renames.py"
_R_PROBE = [_esc(TR, t, "probe") for t in ("r_class", "r_mod_assign", "r_mod_ann", "r_mod_walrus", "r_mod_dict")] + [
    _esc(TC, "r_fixture", "probe")] + [
    _esc(TRN, t, "probe") for t in ("r_assign", "r_ann", "r_chain", "r_walrus", "r_paren", "r_dict",
                                    "r_subscript_target", "r_wrapped", "r_yield", "k_wrapped_two")] + [
    _esc(TRN, "r_module_attr", "T.probe"), _esc(TRN, "r_async_return", "T.probe")]
_R_SCAN = [_esc(TR, t, "scan") for t in ("r_mod_chain", "r_mod_paren")] + [_esc(TC, "r_fixture_paren", "scan")] + [
    _esc(TRN, t, "scan") for t in ("r_ann_paren", "r_chain_paren", "r_walrus_paren", "r_dict_paren",
                                   "r_wrapped_paren", "r_yield_paren", "r_yield_assign")]
_R_TOOLED = [_esc(TR, "r_self_return", "self.tooled"), _esc(TR, "r_self_attr", "self.tooled"),
             _esc(TRN, "r_inst_name", "k.tooled"), _esc(TRN, "r_inst_call", "Kit().tooled"),
             _esc(TRN, "r_return_inst", "Kit().tooled")]
TOOL_RENAMES_EXPECT = {
    (TR, "probe", "TS001", "frames"): _R_PROBE + [(TRN, "s1", 'probe("q")["frames"]', "subscript", "frames")],
    (TR, "scan", "TS001", "hz"): _R_SCAN,
    (TR, "scan", "TS002", None): _R_SCAN,
    (TR, "tooled", "TS001", "tm"): _R_TOOLED,
}
TOOL_RENAMES_FORMS = {"escape": 33, "subscript": 1}


# tools handed to a call that keeps what it gives (docs/rules.md
# "**Escapes.**"): a use as a value of a tool that is (parentheses seen
# through) a positional argument of a call `W(...)` whose value is not
# dropped (the call, parentheses and one `await` seen through, is not the
# whole expression of an expression statement) is an escape like any other,
# unless `W` is a bare name among `callable`, `isinstance`, `issubclass`,
# `hasattr`, `id`, `type`, `repr`, `str`, `print`, `dir`, `vars`, `hash`,
# `bool` resolving to no binding of the module (a builtin) in a module
# without a star import: `r = await asyncio.to_thread(probe, "q")` (awaited
# and assigned, parenthesized too), `t = asyncio.to_thread(T.probe, 1)`,
# `pool.submit(probe, "q")` assigned or returned (`self.tooled` too),
# `functools.partial(probe, 1)` (at module level too), `list(map(probe, xs))`
# (assigned, or a statement: `map(...)` is list's argument), `assert
# inspect.signature(probe)`, `loop.run_in_executor(None, probe, "q")`, a
# project function's kept call (`kept = register_tool(probe)`), `len(probe)`
# (no builtin of the list), `builtins.repr(probe)` (no bare name), a lambda
# body's call, a list element's call, a returned call, a decorator's call
# (`@register_tool(probe)`); `callable(probe)` when the module defines
# `callable`, `isinstance(probe, object)` when the function binds
# `isinstance`, `repr(probe)` in a module with a star import.  Still exempt:
# a call statement (`register_tool(probe)`, `pool.submit(self.tooled, "q")`,
# at module level too), an awaited call statement (`await loop.run(probe)`,
# `(await (loop.run((probe))))`), a keyword's value (`Agent(tools=probe)`,
# `Thread(target=probe)`, `Thread(target=k.tooled)`, `register_tool(**probe)`),
# `*probe`, an element of a list (`tools = [probe]`, `Agent(tools=[probe])`),
# the builtins of the list kept (`assert callable(probe)`, `isinstance`,
# `repr`, `print`, `str`, `type`, `hash`, `id`, `bool`, `dir`, `vars`,
# `hasattr`, `issubclass`, `(callable)((probe))`), `repr(probe)` in the
# module that rebinds `callable` only.  An unresolved use in that form (see
# "unresolved_uses": `asyncio.to_thread(probe, 1)` after an optional import,
# `pool.submit(pkg.tools.probe, 1)`) is none.
TOOL_KEPT = {
    "pyproject.toml": "",
    "pkg/__init__.py": "",
    "pkg/tools.py": """\
import functools

from strands import tool


@tool
def probe(q):
    return {"status": "success", "content": [], "frames": 1}  # @probe


class Kit:
    @tool
    def tooled(self, q):
        return {"status": "success", "content": [], "tm": 1}  # @tooled

    def start(self, pool):
        return pool.submit(self.tooled, "q")  # @k_self_submit

    def hooks(self, pool):
        pool.submit(self.tooled, "q")  # @x_self_dropped
        return None


PARTIAL = functools.partial(probe, "q")  # @k_mod_partial
register_tool(probe)  # @x_mod_register
""",
    "tests/test_kept.py": """\
import asyncio
import builtins
import functools
import inspect
from threading import Thread

import pkg.tools as T
from pkg.tools import Kit, probe
from strands import Agent


def register_tool(f):
    return f


async def test_thread(xs):
    r = await asyncio.to_thread(probe, "q")  # @k_to_thread
    t = asyncio.to_thread(T.probe, 1)  # @k_to_thread_assigned
    r2 = (await (asyncio.to_thread((probe), "q")))  # @k_to_thread_paren
    return r, t, r2


def test_calls(pool, loop, xs):
    fut = pool.submit(probe, "q")  # @k_submit
    f = functools.partial(probe, 1)  # @k_partial
    got = list(map(probe, xs))  # @k_map
    list(map(T.probe, xs))  # @k_map_statement
    assert inspect.signature(probe)  # @k_signature
    y = loop.run_in_executor(None, probe, "q")  # @k_executor
    kept = register_tool(probe)  # @k_register_kept
    n = len(probe)  # @k_len
    rb = builtins.repr(probe)  # @k_builtins_attr
    k = Kit()
    h = pool.submit(k.tooled, "q")  # @k_inst
    lam = lambda: register_tool(probe)  # @k_lambda
    regs = [register_tool(probe)]  # @k_list
    return register_tool(probe)  # @k_return


@register_tool(probe)  # @k_decorator
def test_decorated():
    return None


async def test_exempt(agent, loop, pool, xs):
    register_tool(probe)  # @x_register
    await loop.run(probe)  # @x_await_statement
    (await (loop.run((probe))))  # @x_await_paren
    agent = Agent(tools=probe)  # @x_kw_tools
    th = Thread(target=probe)  # @x_kw_target
    assert callable(probe)  # @x_callable
    ok = isinstance(probe, object)  # @x_isinstance
    x = repr(probe)  # @x_repr
    pr = print(probe)  # @x_print
    s = str(probe) + type(probe).__name__  # @x_str_type
    many = [hash(probe), id(probe), bool(probe), dir(probe), vars(probe)]  # @x_more
    has = hasattr(probe, "q") or issubclass(probe, object)  # @x_has
    c2 = (callable)((probe))  # @x_callable_paren
    tools = [probe]  # @x_list
    agent2 = Agent(tools=[probe])  # @x_list_kw
    g = register_tool(*probe)  # @x_starred
    g2 = register_tool(**probe)  # @x_double_starred
    k = Kit()
    th2 = Thread(target=k.tooled)  # @x_inst_kw
    probe("q")["frames"]  # @s1
    return None
""",
    "tests/test_rebound.py": """\
from pkg.tools import probe


def callable(f):
    return True


def test_rebound():
    assert callable(probe)  # @k_callable_rebound
    x = repr(probe)  # @x_repr_not_rebound
    return x


def test_local_rebound():
    isinstance = make_checker()
    ok = isinstance(probe, object)  # @k_isinstance_local
    return ok
""",
    "tests/test_star_kept.py": """\
from os.path import *

from pkg.tools import probe


def test_star():
    x = repr(probe)  # @k_repr_star
    return x
""",
}
TKT = "pkg/tools.py"
TKK = "tests/test_kept.py"
TKR = "tests/test_rebound.py"
TKS = "tests/test_star_kept.py"
TOOL_KEPT_EXPECT = {
    (TKT, "probe", "TS001", "frames"): [_esc(TKT, "k_mod_partial", "probe")] + [
        _esc(TKK, t, "probe") for t in ("k_to_thread", "k_to_thread_paren", "k_submit", "k_partial", "k_map",
                                        "k_signature", "k_executor", "k_register_kept", "k_len",
                                        "k_builtins_attr", "k_lambda", "k_list", "k_return", "k_decorator")] + [
        _esc(TKK, t, "T.probe") for t in ("k_to_thread_assigned", "k_map_statement")] + [
        _esc(TKR, t, "probe") for t in ("k_callable_rebound", "k_isinstance_local")] + [
        _esc(TKS, "k_repr_star", "probe"), (TKK, "s1", 'probe("q")["frames"]', "subscript", "frames")],
    (TKT, "tooled", "TS001", "tm"): [_esc(TKT, "k_self_submit", "self.tooled"), _esc(TKK, "k_inst", "k.tooled")],
}
TOOL_KEPT_FORMS = {"escape": 22, "subscript": 1}


CASES = [
    # (name, files, extra scan.py arguments, expected reads per finding, expected distinct reads per form)
    ("tool_literal", TOOL_LITERAL, [], TOOL_LITERAL_EXPECT, TOOL_LITERAL_FORMS),
    ("tool_literal_allowed", TOOL_LITERAL, ["--allowed-key", "devices"], TOOL_LITERAL_ALLOWED_EXPECT,
     {"delete": 1, "get": 1, "pop": 1, "subscript": 3, "whole": 8, "block": 1, "escape": 1}),
    ("builder", BUILDER, [], BUILDER_EXPECT, BUILDER_FORMS),
    ("dispatch", DISPATCH, [], DISPATCH_EXPECT, DISPATCH_FORMS),
    ("direct_tool", DIRECT, [], DIRECT_EXPECT, DIRECT_FORMS),
    ("decoys", DECOYS, [], DECOYS_EXPECT, DECOYS_FORMS),
    ("whole", WHOLE, [], WHOLE_EXPECT, WHOLE_FORMS),
    ("content", CONTENT, [], CONTENT_EXPECT, CONTENT_FORMS),
    ("choices", CHOICES, [], CHOICES_EXPECT, CHOICES_FORMS),
    ("possible", POSSIBLE, [], POSSIBLE_EXPECT, POSSIBLE_FORMS),
    ("possible_files", POSSIBLE_FILES, [], POSSIBLE_FILES_EXPECT, POSSIBLE_FILES_FORMS),
    ("possible_alias", POSSIBLE_ALIAS, [], POSSIBLE_ALIAS_EXPECT, POSSIBLE_ALIAS_FORMS),
    ("const_dispatch", CONST_DISPATCH, [], CONST_DISPATCH_EXPECT, CONST_DISPATCH_FORMS),
    ("escapes", ESCAPES, [], ESCAPES_EXPECT, ESCAPES_FORMS),
    ("handed", HANDED, [], HANDED_EXPECT, HANDED_FORMS),
    ("sequence", SEQUENCE, [], SEQUENCE_EXPECT, SEQUENCE_FORMS),
    ("where", WHERE, [], WHERE_EXPECT, WHERE_FORMS),
    ("assert_messages", ASSERT_MESSAGES, [], ASSERT_MESSAGES_EXPECT, ASSERT_MESSAGES_FORMS),
    ("unresolved_calls", UNRESOLVED, [], UNRESOLVED_EXPECT, UNRESOLVED_FORMS),
    ("unresolved_uses", UNRESOLVED_USES, [], UNRESOLVED_USES_EXPECT, UNRESOLVED_USES_FORMS),
    ("local_imports", LOCAL_IMPORTS, [], LOCAL_IMPORTS_EXPECT, LOCAL_IMPORTS_FORMS),
    ("decorators", DECORATORS, [], DECORATORS_EXPECT, DECORATORS_FORMS),
    ("tool_renames", TOOL_RENAMES, [], TOOL_RENAMES_EXPECT, TOOL_RENAMES_FORMS),
    ("tool_kept_calls", TOOL_KEPT, [], TOOL_KEPT_EXPECT, TOOL_KEPT_FORMS),
    ("checkers", CHECKERS, [], CHECKERS_EXPECT, CHECKERS_FORMS),
] + ([("where_types", WHERE_TYPES, [], WHERE_TYPES_EXPECT, WHERE_TYPES_FORMS)]
     if sys.version_info >= (3, 12) else [])


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


def expected_read(files, rel, tag, span_text, form, key, possible=False):
    line, text = tag_line(files, rel, tag)
    col = text.find(span_text)
    if col < 0 or text.find(span_text, col + 1) >= 0:
        raise AssertionError("span %r not once on the line of @%s: %r" % (span_text, tag, text))
    return (rel, line, col + 1, line, col + 1 + len(span_text), form, key, possible)


def run_cli(root, extra):
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    proc = subprocess.run([sys.executable, SCAN, "--reads", "--stats"] + extra + ["."], cwd=root,
                          capture_output=True, text=True, env=env)
    if proc.returncode != 0 or "skip:" in proc.stderr:
        raise AssertionError("scan.py failed (%d): %s" % (proc.returncode, proc.stderr))
    return json.loads(proc.stdout), proc.stderr


def norm(path):
    return path[2:] if path.startswith("./") else path


def check_case(name, files, got, expect, forms, log):
    """The problems of scan.py's output ``got`` for one project (a list of strings)."""
    problems = []
    read_tuple = lambda r: (norm(r["path"]), r["line"], r["column"], r["end_line"], r["end_column"],
                            r["form"], r["key"], r.get("possible"))
    matched = set()
    for (rel, tag, code, key), reads in expect.items():
        line, _ = tag_line(files, rel, tag)
        cands = [i for i, f in enumerate(got)
                 if norm(f["path"]) == rel and f["code"] == code and f["key"] == key
                 and (f["line"] == line or f["dict_line"] == line)]
        if len(cands) != 1:
            problems.append("%s: finding %s %s %r at @%s: %d matches" % (name, code, rel, key, tag, len(cands)))
            continue
        matched.add(cands[0])
        f = got[cands[0]]
        want = sorted(expected_read(files, *r) for r in reads)
        have = [read_tuple(r) for r in f.get("reads", [])]
        if have != sorted(have, key=lambda t: (t[0], t[1], t[2], t[3], t[4], t[5], t[6] or "", t[7])):
            problems.append("%s: reads of %s %r not sorted by path and position" % (name, code, key))
        if sorted(have, key=repr) != sorted(want, key=repr):
            problems.append("%s: reads of %s %s %r at @%s:\n      want %s\n      have %s"
                            % (name, code, rel, key, tag, want, have))
        for r in f.get("reads", []):
            if (r.get("rewritable") is not False or r.get("possible") not in (True, False)
                    or set(r) != {"path", "line", "column", "end_line", "end_column", "form", "key",
                                  "rewritable", "possible"}
                    or (r["possible"] and r["form"] in ("whole", "content", "block"))):
                problems.append("%s: bad read record %r" % (name, r))
    for i, f in enumerate(got):
        if "reads" not in f:
            problems.append("%s: finding without reads: %r" % (name, f))
        elif i not in matched and f["reads"]:
            problems.append("%s: unexpected reads of %s %s %r line %d: %s"
                            % (name, f["code"], norm(f["path"]), f["key"], f["line"],
                               [read_tuple(r) for r in f["reads"]]))
    distinct = {}
    for f in got:
        for r in f.get("reads", []):
            distinct[read_tuple(r)] = r["form"]
    by_form = {}
    for form in distinct.values():
        by_form[form] = by_form.get(form, 0) + 1
    if by_form != forms:
        problems.append("%s: distinct reads per form %s, want %s" % (name, by_form, forms))
    log.append("%s: %d findings, %d distinct reads %s" % (name, len(got), len(distinct),
                                                        json.dumps(by_form, sort_keys=True)))
    return problems


def run_all(base, runner):
    problems = []
    log = []
    for name, files, extra, expect, forms in CASES:
        root = os.path.join(base, name)
        if not os.path.isdir(root):
            write_project(root, files)
        got, _ = runner(root, extra)
        problems.extend(check_case(name, files, got, expect, forms, log))
    return problems, log


# --------------------------------------------------------------------------
# mutants: scan.py in-process with one part of the reads analysis broken


def run_inprocess(scan, root, extra):
    for cache in (scan._projects, scan._project_roots, scan._ORIGINS, scan._EXCLUSIONS):
        cache.clear()
    scan.READS = False
    scan.ALLOWED_KEYS.clear()
    scan.ALLOWED_KEYS.update({"status", "content", "toolUseId"})
    out = io.StringIO()
    err = io.StringIO()
    cwd = os.getcwd()
    os.chdir(root)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = scan.main(["--reads"] + extra + ["."])
    finally:
        os.chdir(cwd)
    if status != 0:
        raise AssertionError("scan.main exited %d: %s" % (status, err.getvalue()))
    return json.loads(out.getvalue()), err.getvalue()


def mutants(scan):
    """(name, install, uninstall) of deliberate breaks of the reads analysis."""
    orig_reads_at = scan.reads_at
    orig_tool = scan.is_tool_decorator
    orig_nodes = scan.module_nodes
    orig_const = scan.const_str
    orig_index = scan.decimal_index

    def swap_in(mod, E, parent, parents):
        return [("in" if f == "not-in" else f, k, s) for f, k, s in orig_reads_at(mod, E, parent, parents)]

    def no_whole(mod, E, parent, parents):
        return [r for r in orig_reads_at(mod, E, parent, parents) if r[0] != "whole"]

    def store_as_load(mod, E, parent, parents):
        return [("subscript" if f in ("store", "delete") else f, k, s)
                for f, k, s in orig_reads_at(mod, E, parent, parents)]

    def no_content(mod, E, parent, parents):
        return [r for r in orig_reads_at(mod, E, parent, parents) if r[0] not in ("content", "block")]

    def block_as_content(mod, E, parent, parents):
        return [("content" if f == "block" else f, k, s) for f, k, s in orig_reads_at(mod, E, parent, parents)]

    def is_content_subscript(E, P):
        return P.__class__ is scan.ast.Subscript and P.value is E and orig_const(P.slice) == "content"

    def content_targets_read(mod, E, parent, parents):
        # `r["content"] = []`, `del r["content"]`: read as if they were loads
        if is_content_subscript(E, parent) and parent.ctx.__class__ is not scan.ast.Load:
            return [("content", None, parent)]
        return orig_reads_at(mod, E, parent, parents)

    def outer_targets_block(mod, E, parent, parents):
        # `r["content"][0] = v`, `del r["content"][0]`: blocks, whatever the outer context
        out = orig_reads_at(mod, E, parent, parents)
        G = parents.get(id(parent))
        if (out and out[0][0] == "content" and G.__class__ is scan.ast.Subscript and G.value is parent
                and orig_index(mod, G.slice)):
            return [("block", None, parent)]
        return out

    def flat_scopes(mod):
        # every node in the module scope: reads in functions look nested, names bound there are lost
        return [(n, p, mod.module_scope) for n, p, _ in orig_nodes(mod)]

    def nested_followed(mod):
        # every node in its enclosing function's scope: nested reads are followed
        out = []
        for n, p, s in orig_nodes(mod):
            while s.parent is not None and s.kind != "module" and s.parent.kind != "module":
                s = s.parent
            out.append((n, p, s))
        return out

    def any_str(node):
        v = orig_const(node)
        return v if v is None else v.rstrip("s")  # a spelling of another key

    # possible reads
    orig_possible_recv = scan.is_possible_receiver
    orig_once = scan.bound_once_to_call
    orig_param = scan.annotated_param
    orig_marked = scan.is_marked
    orig_ann = scan.annotated_as
    orig_possible = scan.possible_reads
    orig_record = scan.read_record
    ast_ = scan.ast

    def never_possible(mod, node, sc):
        return False

    def flag_lost(m, span, form, key, possible):
        return orig_record(m, span, form, key, False)

    def any_single_binding(mod, sc, name):
        owner = scan.lookup(sc, name, mod.module_scope)
        return owner is not None and len(owner.owned.get(name, ())) == 1

    def reading_scope_only(mod, sc, name):
        # the reading scope's own bindings, not the scope owning the name
        bs = sc.owned.get(name, ())
        return (len(bs) == 1 and bs[0].kind == "assign" and bs[0].stmt.__class__ is ast_.Assign
                and len(bs[0].stmt.targets) == 1 and bs[0].value.__class__ is ast_.Call)

    def any_assignment_to_call(mod, sc, name):
        # `R: T = C` and `a = R = C` taken for `R = C`
        owner = scan.lookup(sc, name, mod.module_scope)
        bs = owner.owned.get(name, ()) if owner is not None else ()
        return len(bs) == 1 and bs[0].kind == "assign" and bs[0].value.__class__ is ast_.Call

    def enclosing_params(sc, name, names):
        # the parameters of every enclosing def, read from nested scopes too
        s = sc
        while s is not None:
            if orig_param(s, name, names):
                return True
            s = s.parent
        return False

    def star_params(sc, name, names):
        if orig_param(sc, name, names):
            return True
        if sc.kind != "function" or sc.node.__class__ not in scan._FUNCTION_NODES:
            return False
        a = sc.node.args
        return any(x is not None and x.arg == name and orig_ann(x.annotation, names) for x in (a.vararg, a.kwarg))

    def string_annotations(ann, names):
        return orig_ann(ann, names) or (ann.__class__ is ast_.Constant and ann.value in names)

    def any_result_attribute(mod, node, sc):
        # `X.result` for any name X, annotated or not
        if (node.__class__ is ast_.Attribute and node.attr == "result" and node.value.__class__ is ast_.Name
                and node.ctx.__class__ is ast_.Load):
            return True
        return orig_possible_recv(mod, node, sc)

    def any_event_attribute(mod, node, sc):
        # `P.A` for any attribute A of an annotated event
        if (node.__class__ is ast_.Attribute and node.value.__class__ is ast_.Name
                and orig_param(sc, node.value.id, scan.EVENT_ANNOTATIONS)):
            return True
        return orig_possible_recv(mod, node, sc)

    def marked_attribute_on_names(mod, node, sc):
        if node.__class__ is ast_.Attribute and node.value.__class__ is not ast_.Name:
            return False
        return orig_possible_recv(mod, node, sc)

    def ts001_only(m, by_key, reads_of):
        return orig_possible(m, {k: [f for f in fs if f["code"] == "TS001"] for k, fs in by_key.items()}, reads_of)

    def tool_result_targets(m, by_key, reads_of):
        # `X["toolResult"] = v` / `del X["toolResult"]` taken for reads of a key toolResult
        orig_possible(m, by_key, reads_of)
        for node, par, sc in scan.module_nodes(m):
            if (node.__class__ is ast_.Subscript and node.ctx.__class__ is not ast_.Load
                    and orig_const(node.slice) == "toolResult"):
                form = "store" if node.ctx.__class__ is ast_.Store else "delete"
                rec = orig_record(m, node, form, "toolResult", True)
                for f in by_key.get("toolResult", ()):
                    reads_of.setdefault(id(f), []).append(rec)

    def marked_and_annotated_twice(m, by_key, reads_of):
        # a name both marked and annotated `ToolResult`: its reads once per reason
        orig_possible(m, by_key, reads_of)
        nodes = scan.module_nodes(m)
        parents = {id(n): p for n, p, _ in nodes}
        for node, par, sc in nodes:
            if (node.__class__ is ast_.Name and par is not None and orig_marked(node.id)
                    and orig_param(sc, node.id, scan.TOOL_RESULT_ANNOTATIONS)):
                for form, key, span in orig_reads_at(m, node, par, parents):
                    if form in scan.KEYED_FORMS and key in by_key:
                        rec = orig_record(m, span, form, key, True)
                        for f in by_key[key]:
                            reads_of.setdefault(id(f), []).append(rec)

    orig_searched = scan.searched_for_possible
    orig_tr_index = scan.tool_result_index

    # aliases ("A name bound to one of these is one too")
    orig_alias = scan.is_possible_alias
    orig_aliased = scan.aliased_value
    orig_binding_scopes = scan.binding_scopes

    def any_assign_aliases(b):
        # `N: T = E` and `a = N = E` taken for plain one-target assignments
        return b.value if b.kind == "assign" else None

    def unpacking_aliases(mod, sc, name):
        # `N, z = E, 1`, `[N] = [E]` and `(N := E)` taken for `N = E` too
        if orig_alias(mod, sc, name):
            return True
        for node, _, where in scan.module_nodes(mod):
            pairs = []
            if node.__class__ is ast_.NamedExpr:
                pairs = [(node.target, node.value)]
            elif (node.__class__ is ast_.Assign and len(node.targets) == 1
                    and node.targets[0].__class__ in (ast_.Tuple, ast_.List)
                    and node.value.__class__ in (ast_.Tuple, ast_.List)):
                pairs = list(zip(node.targets[0].elts, node.value.elts))
            for t, v in pairs:
                if (t.__class__ is ast_.Name and t.id == name
                        and v.__class__ in (ast_.Attribute, ast_.Subscript)
                        and orig_possible_recv(mod, v, where)):
                    return True
        return False

    def name_aliases(b):
        # `N = M`, M a marked name, taken for an alias (a chain)
        v = orig_aliased(b)
        if v is not None and v.__class__ is ast_.Name and orig_marked(v.id):
            return ast_.Attribute(value=v, attr=v.id, ctx=ast_.Load())  # a marked attribute stand-in
        return v

    def alias_needs_one_binding(mod, sc, name):
        # "any one" read as "the only one"
        owner = scan.lookup(sc, name, mod.module_scope)
        return (owner is not None and len(owner.owned.get(name, ())) == 1
                and orig_alias(mod, sc, name))

    def alias_in_own_scope(mod, sc, name):
        # reads in scopes nested in the owning scope not followed
        return scan.lookup(sc, name, mod.module_scope) is sc and orig_alias(mod, sc, name)

    def alias_judged_in_reading_scope(mod, sc, name):
        owner = scan.lookup(sc, name, mod.module_scope)
        for b in (owner.owned.get(name, ()) if owner is not None else ()):
            E = orig_aliased(b)
            if E is not None and E.__class__ in (ast_.Attribute, ast_.Subscript) and orig_possible_recv(mod, E, sc):
                return True
        return False

    def owner_binding_scopes(mod):
        # E judged in the scope owning N (`global` / `nonlocal` followed), not where it stands
        out = dict(orig_binding_scopes(mod))
        for s in mod.scopes:
            for bs in s.owned.values():
                for b in bs:
                    out[id(b)] = s
        return out

    def tool_result_index_by_value(mod, node):
        # `X["toolResult"]` judged by the index's value, not its text
        return orig_const(node) == "toolResult"

    def markers_only(m, keys):
        return set(keys) if any(mk in m.data for mk in scan.FILE_MARKERS) else set()

    def any_moved_key(m, keys):
        # a file holding some moved key between quotes searched for them all
        return set(keys) if orig_searched(m, keys) else set()

    def code_only(m, keys):
        # comments left out of the text looked at
        class Stripped:
            data = b"\n".join(line.split(b"#")[0] for line in m.data.split(b"\n"))
        return orig_searched(Stripped, keys)

    def decoded_constants(m, keys):
        # the key by its value among the string constants, not as written
        if not any(mk in m.data for mk in scan.FILE_MARKERS):
            return set()
        consts = {n.value for n, _, _ in scan.module_nodes(m) if n.__class__ is ast_.Constant}
        return {k for k in keys if k in consts}

    # dispatch by a constant
    orig_kws = scan.dispatch_keywords
    orig_test = scan.dispatch_test
    orig_walk = scan._exclusion_walk
    orig_excluded = scan.excluded
    orig_narrowed = scan.narrowed_keys

    def keywords_with(values=None, params=None, bindings=False):
        """dispatch_keywords with ``values(node)`` taken for constants too,
        ``params(c)`` the parameters, or (``bindings``) any binding of P."""
        def fn(c, call):
            out = orig_kws(c, call)
            a = c.node.args
            ps = params(c) if params else {x.arg for x in a.posonlyargs + a.args + a.kwonlyargs}
            for kw in call.keywords:
                if kw.arg is None or kw.arg not in ps or kw.arg in out:
                    continue
                v = values(kw.value) if values else orig_const(kw.value)
                if v is None:
                    continue
                bs = c.scope.owned.get(kw.arg, ())
                if bindings or params or (len(bs) == 1 and bs[0].kind == "param"):
                    out[kw.arg] = v
            return out
        return fn

    def fstring_const(node):
        if node.__class__ is ast_.JoinedStr and all(v.__class__ is ast_.Constant for v in node.values):
            return "".join(v.value for v in node.values)
        return orig_const(node)

    def bytes_const(node):
        if node.__class__ is ast_.Constant and node.value.__class__ is bytes:
            return node.value.decode()
        return orig_const(node)

    def star_param_names(c):
        a = c.node.args
        return {x.arg for x in a.posonlyargs + a.args + a.kwonlyargs + [v for v in (a.vararg, a.kwarg) if v]}

    def no_posonly(c, call):
        out = orig_kws(c, call)
        for x in c.node.args.posonlyargs:
            out.pop(x.arg, None)
        return out

    def walker(rule1=True, rule2=True, rule3=True, rule3_deep=False, rule3_any_end=False):
        """A copy of scan._exclusion_walk with one rule changed."""
        def walk(stmts, cons, out, top):
            after = []
            for st in stmts:
                cur = cons + after
                cls = st.__class__
                if cls is ast_.Return:
                    out[id(st)] = cur
                elif cls in scan._FUNCTION_NODES or cls is ast_.ClassDef:
                    continue
                elif cls is ast_.If:
                    t = scan.dispatch_test(st.test)
                    walk(st.body, cur + ([("ne",) + t] if t and rule1 else []), out, False)
                    walk(st.orelse, cur + ([("eq",) + t] if t and rule2 else []), out, False)
                    if (t and rule3 and (top or rule3_deep) and st.body
                            and (rule3_any_end or st.body[-1].__class__ in (ast_.Return, ast_.Raise))):
                        after.append(("eq",) + t)
                else:
                    for field in ("body", "orelse", "finalbody"):
                        walk(getattr(st, field, None) or [], cur, out, False)
                    for h in getattr(st, "handlers", None) or ():
                        walk(h.body, cur, out, False)
                    for case in getattr(st, "cases", None) or ():
                        walk(case.body, cur, out, False)
        return walk

    def left_name_only(test):
        t = orig_test(test)
        return t if t is not None and test.left.__class__ is ast_.Name else None

    def not_equal_too(test):
        if (test.__class__ is ast_.Compare and len(test.ops) == 1 and test.ops[0].__class__ is ast_.NotEq
                and test.left.__class__ is ast_.Name and orig_const(test.comparators[0]) is not None):
            return test.left.id, orig_const(test.comparators[0])
        return orig_test(test)

    def first_keyword_only(cons, kws):
        first = dict(list(kws.items())[:1])
        return orig_excluded(cons, first)

    def chains_narrowed(c, call, keys, ret_own, ret_link, seen=None):
        # a return's producer G narrowed by the receiver's keywords too
        seen = set() if seen is None else seen
        if id(c.node) in seen or not scan.dispatch_keywords(c, call):
            return keys[id(c.node)]
        seen.add(id(c.node))
        excl = scan.return_exclusions(c)
        k = set()
        for ret in c.scope.returns:
            if scan.excluded(excl.get(id(ret), ()), scan.dispatch_keywords(c, call)):
                continue
            k |= ret_own.get(id(ret), set())
            t = ret_link.get(id(ret))
            if t is not None:
                k |= chains_narrowed(t, call, keys, ret_own, ret_link, seen)
        return k

    def chains_dropped(c, call, keys, ret_own, ret_link):
        # a narrowed call follows no chain
        return orig_narrowed(c, call, keys, ret_own, {} if scan.dispatch_keywords(c, call) else ret_link)

    # escapes ("**Escapes.**")
    orig_escaping = scan.escaping_producers
    orig_esc_origins = scan.escape_origins
    orig_esc_target = scan.escape_target
    orig_value_use = scan.is_value_use
    orig_esc_reads = scan.escape_reads

    def tools_escape(cands, keys):
        return {id(c.node) for c in cands if keys[id(c.node)]}

    def async_not_escaping(cands, keys):
        return {i for i in orig_escaping(cands, keys)
                if not any(id(c.node) == i and c.node.__class__ is ast_.AsyncFunctionDef for c in cands)}

    def callees_used(X, par):
        if par.__class__ is ast_.Call and par.func is X and X.ctx.__class__ is ast_.Load:
            return True
        return orig_value_use(X, par)

    def attribute_objects_used(X, par):
        if par.__class__ is ast_.Attribute and par.value is X and X.ctx.__class__ is ast_.Load:
            return True
        return orig_value_use(X, par)

    def targets_used(X, par):
        # the context not looked at: `N.m = v`, `del N.m` taken for uses
        return par is not None and not (par.__class__ is ast_.Call and par.func is X) and not (
            par.__class__ is ast_.Attribute and par.value is X)

    def no_instance_forms(proj, m, X, sc, instances):
        return proj._resolve_callee(m, X, sc)

    def no_self_forms(proj, m, X, sc, instances):
        if (X.__class__ is ast_.Attribute and X.value.__class__ is ast_.Name
                and X.value.id in ("self", "cls")):
            return None
        return orig_esc_target(proj, m, X, sc, instances)

    def no_module_forms(proj, m, X, sc, instances):
        if (X.__class__ is ast_.Attribute and X.value.__class__ is ast_.Name
                and X.value.id not in ("self", "cls")):
            return scan.instance_attribute(proj, m, X, sc, instances)
        return orig_esc_target(proj, m, X, sc, instances)

    class AnyScope(dict):
        """Instance names looked up by name alone: nested scopes followed."""
        def get(self, key, default=None):
            for (sid, name), v in self.items():
                if name == key[1]:
                    return v
            return default

    def instances_from_nested(proj, m, X, sc, instances):
        return orig_esc_target(proj, m, X, sc, AnyScope(instances))

    def names_in_module_scope(proj, m, X, sc, instances):
        # a name resolved in the module scope whatever shadows it
        return orig_esc_target(proj, m, X, m.module_scope if X.__class__ is ast_.Name else sc, instances)

    # tools given another name or called through a wrapper ("**Escapes.**")
    orig_renamed = scan.renamed_use
    orig_wrapped = scan.wrapped_use

    def renamed_with(extra=None, without=()):
        # renamed_use, but ``extra(X, par)`` also renames, and no parent of a
        # class in ``without`` does
        def renamed(X, par):
            if par.__class__ in without:
                return False
            return orig_renamed(X, par) or bool(extra and extra(X, par))
        return renamed

    def dict_keys_and_spreads(X, par):
        # `{probe: 1}` and `{**probe}`: no pair's value
        return par.__class__ is ast_.Dict and any(X is n for n in par.keys + par.values)

    def chained_not_renamed(X, par):
        return orig_renamed(X, par) and not (par.__class__ is ast_.Assign and len(par.targets) > 1)

    def name_targets_only(X, par):
        return orig_renamed(X, par) and not (par.__class__ is ast_.Assign and any(
            t.__class__ is not ast_.Name for t in par.targets))

    def dict_values_not_renamed(X, par):
        return orig_renamed(X, par) and par.__class__ is not ast_.Dict

    def wrapped_any_arguments(X, par, parents):
        if par.__class__ is not ast_.Call or X not in par.args:
            return False
        outer = parents.get(id(par))
        return outer.__class__ is ast_.Call and outer.func is par

    def wrapped_keywords(X, par, parents):
        if par.__class__ is ast_.keyword:
            call = parents.get(id(par))
            outer = parents.get(id(call))
            return outer.__class__ is ast_.Call and outer.func is call
        return orig_wrapped(X, par, parents)

    def wrapped_not_called(X, par, parents):
        return par.__class__ is ast_.Call and not par.keywords and par.args == [X]

    # tools handed to a call that keeps what it gives ("**Escapes.**")
    orig_kept_call = scan.kept_call_use
    orig_looking = scan.LOOKING_BUILTINS
    orig_unresolved_use_reads = scan.unresolved_use_reads

    def kept_with(keywords=False, starred=False, statements=False, await_seen=True, bound_exempt=False,
                  module_bound_only=False, star_exempt=False, attributes_exempt=False):
        """kept_call_use with one part changed (the defaults: as it is)."""
        def kept(m, X, par, parents, sc):
            if par.__class__ in ((ast_.keyword,) if keywords else ()) + ((ast_.Starred,) if starred else ()):
                call = parents.get(id(par))
            elif par.__class__ is ast_.Call and any(a is X for a in par.args):
                call = par
            else:
                return False
            if call.__class__ is not ast_.Call:
                return False
            up = parents.get(id(call))
            if await_seen and up.__class__ is ast_.Await:
                up = parents.get(id(up))
            if up.__class__ is ast_.Expr and not statements:
                return False
            W = call.func
            if W.__class__ is ast_.Attribute and attributes_exempt and W.attr in scan.LOOKING_BUILTINS:
                return False
            if W.__class__ is ast_.Name and W.id in scan.LOOKING_BUILTINS:
                owner = scan.lookup(sc, W.id, m.module_scope)
                unbound = (owner is None or bound_exempt
                           or (module_bound_only and owner is not m.module_scope))
                if unbound and (star_exempt or not scan.star_import(m)):
                    return False
            return True
        return kept

    def kept_use_reads(proj, m, named, keys, by_origin, instances, reads_of):
        # unresolved_use_reads, with the uses handed to a call that keeps
        # them among the forms (as for a tool's escape)
        def wrapped(X, par, parents):
            if orig_wrapped(X, par, parents):
                return True
            if par.__class__ is not ast_.Call or not any(a is X for a in par.args):
                return False
            up = parents.get(id(par))
            if up.__class__ is ast_.Await:
                up = parents.get(id(up))
            return up.__class__ is not ast_.Expr
        saved = scan.wrapped_use
        scan.wrapped_use = wrapped
        try:
            return orig_unresolved_use_reads(proj, m, named, keys, by_origin, instances, reads_of)
        finally:
            scan.wrapped_use = saved

    def keyed_findings_only(proj, m, keys, escaping, by_origin, instances, reads_of):
        keyed_only = {o: [f for f in fs if f["key"] is not None] for o, fs in by_origin.items()}
        return orig_esc_reads(proj, m, keys, escaping, keyed_only, instances, reads_of)

    def chains_not_followed(t, keys):
        # the origins of t's own returns only
        own = {id(r.value) for r in t.scope.returns if r.value is not None}
        return {o for o in orig_esc_origins(t, keys) if o[1] in own}

    def first_return_only(t, keys):
        # as if narrowed: the first return's origins only
        rets = [r for r in t.scope.returns if r.value is not None]
        first = {id(rets[0].value)} if rets else set()
        return {o for o in orig_esc_origins(t, keys) if o[1] in first or o[0] == "write"}

    def parentheses_in_span(m, span, form, key, possible):
        rec = orig_record(m, span, form, key, possible)
        if form != "escape":
            return rec
        src = m.src
        start = src.offset(span.lineno, span.col_offset)
        end = src.offset(span.end_lineno, span.end_col_offset)
        while start > 0 and src.text[start - 1] == "(" and src.text[end:end + 1] == ")":
            start, end = start - 1, end + 1
        return orig_record(m, (start, end), form, key, possible)

    # decorators ("**Decorators.**")
    orig_deco_reads = scan.decorator_reads
    orig_exempt = scan.is_exempt_decorator

    def deco_reads(select=lambda c: True, decorators=lambda c: c.node.decorator_list,
                   exempt=lambda c, d: scan.is_exempt_decorator(d), origins=None, span=lambda c, d: d,
                   findings=lambda f: True):
        """decorator_reads with one part changed (the defaults: as it is)."""
        def run(cands, keys, by_origin, reads_of):
            for c in cands:
                if not keys[id(c.node)] or not select(c):
                    continue
                for d in decorators(c):
                    if exempt(c, d):
                        continue
                    rec = scan.read_record(c.module, span(c, d), "escape", None, False)
                    for o in (origins or scan.escape_origins)(c, keys):
                        for f in by_origin[o]:
                            if findings(f):
                                reads_of.setdefault(id(f), []).append(rec)
        return run

    def is_tool_def(c):
        return any(scan.is_tool_decorator(d) for d in c.node.decorator_list)

    def called_exempt(d):
        # `@staticmethod()`, `@override(x)` exempt too
        return orig_exempt(d.func if d.__class__ is ast_.Call else d)

    def exempt_by_attr_alone(d):
        # `X.abstractmethod`, `X.override` of any X exempt
        if d.__class__ is ast_.Attribute and d.attr in ("abstractmethod", "override"):
            return True
        return orig_exempt(d)

    def exempt_by_last_name(d):
        # any spelling ending in an exempt name: `builtins.staticmethod`, `my_abc.abstractmethod`
        if d.__class__ is ast_.Attribute and d.attr in scan.EXEMPT_DECORATOR_NAMES:
            return True
        return orig_exempt(d)

    def exempt_as_resolved(c, d):
        # an exempt name bound by a relative import (the project's own) is no exemption
        if d.__class__ is ast_.Name and d.id in scan.EXEMPT_DECORATOR_NAMES:
            b = scan.module_binding(c.module, c.module.module_scope, d.id)
            if b is not None and b.kind == "importfrom" and b.stmt.level:
                return False
        return orig_exempt(d)

    def no_tool_exemption(d):
        return orig_exempt(d) and not scan.is_tool_decorator(d)

    def with_parentheses(c, d):
        src = c.module.src
        start = src.offset(d.lineno, d.col_offset)
        end = src.offset(d.end_lineno, d.end_col_offset)
        while start > 0 and src.text[start - 1] == "(" and src.text[end:end + 1] == ")":
            start, end = start - 1, end + 1
        return (start, end)

    def def_span(c, d):
        return c.node

    def class_decorators_too(cands, keys, by_origin, reads_of):
        # a class's decorators hand on the results of its methods
        orig_deco_reads(cands, keys, by_origin, reads_of)
        for c in cands:
            if c.cls_scope is None or not keys[id(c.node)]:
                continue
            for d in c.cls_scope.node.decorator_list:
                rec = scan.read_record(c.module, d, "escape", None, False)
                for o in scan.escape_origins(c, keys):
                    for f in by_origin[o]:
                        reads_of.setdefault(id(f), []).append(rec)

    def functions_with_findings(cands, keys, by_origin, reads_of):
        # the decorators of a function that is no producer but holds findings
        orig_deco_reads(cands, keys, by_origin, reads_of)
        for c in cands:
            n = c.node
            if keys[id(c.node)]:
                continue
            inside = [f for fs in by_origin.values() for f in fs
                      if f["path"] == c.module.path and n.lineno <= f["line"] <= n.end_lineno]
            for d in n.decorator_list:
                if orig_exempt(d):
                    continue
                rec = scan.read_record(c.module, d, "escape", None, False)
                for f in inside:
                    reads_of.setdefault(id(f), []).append(rec)

    deco_setters = [
        ("no decorator escapes", "decorator_reads", lambda *a: None),
        ("no decorator exempt", "is_exempt_decorator", lambda d: False),
        ("every decorator exempt", "is_exempt_decorator", lambda d: True),
        ("only tool decorators exempt", "is_exempt_decorator", lambda d: scan.is_tool_decorator(d)),
        ("tool decorators not exempt", "is_exempt_decorator", no_tool_exemption),
        ("called exempt names exempt", "is_exempt_decorator", called_exempt),
        ("exempt attributes by their name alone", "is_exempt_decorator", exempt_by_attr_alone),
        ("exempt names under any module", "is_exempt_decorator", exempt_by_last_name),
        ("exempt names as resolved, not as written", "decorator_reads", deco_reads(exempt=exempt_as_resolved)),
        ("decorators of tools not looked at", "decorator_reads", deco_reads(select=lambda c: not is_tool_def(c))),
        ("decorators of methods not looked at", "decorator_reads",
         deco_reads(select=lambda c: c.cls_scope is None)),
        ("decorators of async producers not looked at", "decorator_reads",
         deco_reads(select=lambda c: c.node.__class__ is not ast_.AsyncFunctionDef)),
        ("the first decorator only", "decorator_reads", deco_reads(decorators=lambda c: c.node.decorator_list[:1])),
        ("the last decorator only", "decorator_reads", deco_reads(decorators=lambda c: c.node.decorator_list[-1:])),
        ("decorator escapes reach keyed findings only", "decorator_reads",
         deco_reads(findings=lambda f: f["key"] is not None)),
        ("decorator escapes follow no chain", "decorator_reads", deco_reads(origins=chains_not_followed)),
        ("decorator escapes narrowed to the first return", "decorator_reads", deco_reads(origins=first_return_only)),
        ("decorator spans with their parentheses", "decorator_reads", deco_reads(span=with_parentheses)),
        ("decorator spans the def", "decorator_reads", deco_reads(span=def_span)),
        ("class decorators hand their methods' results on", "decorator_reads", class_decorators_too),
        ("decorators of functions holding findings", "decorator_reads", functions_with_findings),
    ]

    # results handed on ("**Results handed on.**")
    orig_handed = scan.handed_on
    orig_kept = scan.kept_names
    orig_handed_reads = scan.handed_on_reads

    def any_name_kept(m, bound_by, nodes, parents):
        return {(id(S), R) for S, R in bound_by.values()}

    def function_names_kept(m, bound_by, nodes, parents):
        return {(id(S), R) for S, R in bound_by.values() if S.kind == "function"}

    def span_without_await(m, C, par, parents, bound_by, kept, seq_kept):
        H = orig_handed(m, C, par, parents, bound_by, kept, seq_kept)
        return C if H is not None else None

    def statements_hand_on(m, C, par, parents, bound_by, kept, seq_kept):
        H = orig_handed(m, C, par, parents, bound_by, kept, seq_kept)
        if H is None:
            up = parents.get(id(par)) if par.__class__ is ast_.Await else par
            if up.__class__ is ast_.Expr:
                return par if par.__class__ is ast_.Await else C
        return H

    # assertion messages ("**Assertion messages.**")
    orig_msg = scan.assertion_message

    def message_anywhere(node, par, parents):
        # any load inside an assert's message, whatever holds it (`str(r)`, `(r, 1)`, `f"{x:{r}}"`)
        child, up = node, par
        while up is not None and not isinstance(up, ast_.stmt):
            child, up = up, parents.get(id(up))
        return up.__class__ is ast_.Assert and up.msg is child

    def spec_fields_too(node, par, parents):
        # the fields of a format spec and of nested f-strings taken for the message's own
        if par.__class__ is not ast_.FormattedValue or par.value is not node:
            return orig_msg(node, par, parents)
        child, up = par, parents.get(id(par))
        while up.__class__ in (ast_.FormattedValue, ast_.JoinedStr):
            child, up = up, parents.get(id(up))
        return up.__class__ is ast_.Assert and up.msg is child

    def tests_too(node, par, parents):
        # the assert's test taken for its message (`assert r, r`)
        return orig_msg(node, par, parents) or par.__class__ is ast_.Assert

    def message_names_only(node, par, parents):
        return par.__class__ is ast_.Assert and par.msg is node

    def message_fstrings_only(node, par, parents):
        return par.__class__ is not ast_.Assert and orig_msg(node, par, parents)

    def plain_fields_only(node, par, parents):
        # a field with a conversion (`!r`, `=`) or a format spec not seen
        return orig_msg(node, par, parents) and (
            par.__class__ is ast_.Assert or (par.conversion == -1 and par.format_spec is None))

    def without_messages(fn):
        def wrapped(*a):
            scan.assertion_message = lambda node, par, parents: False
            try:
                return fn(*a)
            finally:
                scan.assertion_message = orig_msg
        return wrapped

    def message_loads_dropped(fn):
        # a message load ignored wherever it stands (a nested def, before the first binding in sequence)
        def wrapped(m, X, nodes, parents):
            return fn(m, X, [(n, p, sc) for n, p, sc in nodes
                             if not (n.__class__ is ast_.Name and p is not None and orig_msg(n, p, parents))],
                      parents)
        return wrapped

    # names bound in sequence (docs/rules.md "**Receivers**", "bound **in sequence**")
    orig_seq_names = scan.sequence_names
    orig_seq_binding = scan.sequence_binding
    orig_seen = scan.seen_statement
    orig_seq_seen = scan.sequence_seen
    orig_seq_kept = scan.sequence_kept
    orig_stmt_call = scan.statement_call

    def binding_any_depth(b, body):
        # `R = V` nested in an `if`, a loop, a `with`, a `try`, a `match` taken too
        st = b.stmt
        return (b.kind == "assign" and st.__class__ is ast_.Assign and len(st.targets) == 1
                and st.targets[0] is b.node)

    def binding_any_assignment(b, body):
        # annotated and chained assignments taken for plain ones
        return b.kind == "assign" and id(b.stmt) in body

    def names_with(keep_binding=None, scopes=("function",)):
        """sequence_names with the bindings ``keep_binding`` rejects left out
        (as if they were no bindings) and ``scopes`` the kinds looked at."""
        def fn(mod):
            out = {}
            for S in mod.scopes:
                if S.kind not in scopes:
                    continue
                body = {id(st) for st in (S.node.body if S.kind != "function"
                                          or S.node.__class__ in scan._FUNCTION_NODES else [])}
                for R, bs in S.owned.items():
                    bs = [b for b in bs if keep_binding is None or keep_binding(b)]
                    if len(bs) >= 2 and all(scan.sequence_binding(b, body) for b in bs):
                        out[(id(S), R)] = sorted((b.stmt for b in bs), key=lambda st: (st.lineno, st.col_offset))
            return out
        return fn

    def seen_first(stmts, node):
        st = orig_seen(stmts, node)
        return stmts[0] if st is not None else None

    def seen_from_start(stmts, node):
        # a statement seen from where it starts, not once it ends (a load in V sees it)
        at = (node.lineno, node.col_offset)
        seen = None
        for st in stmts:
            if (st.lineno, st.col_offset) <= at:
                seen = st
        return seen

    def seen_before_first(stmts, node):
        st = orig_seen(stmts, node)
        return st if st is not None else stmts[0]

    def seen_calls_only(stmts, node):
        # statements whose value is no call skipped: the call before is seen
        return orig_seen([st for st in stmts if orig_stmt_call(st) is not None], node)

    def seen_from_nested(mod, seq, node, sc):
        owner = scan.lookup(sc, node.id, mod.module_scope)
        return orig_seq_seen(mod, seq, node, owner) if owner is not None else None

    def nested_loads_left_out(m, seq, nodes, parents):
        return orig_seq_kept(m, seq, [(n, p, s) for n, p, s in nodes
                                      if not (n.__class__ is ast_.Name and n.ctx.__class__ is ast_.Load
                                              and scan.lookup(s, n.id, m.module_scope) is not s)], parents)

    def early_loads_left_out(m, seq, nodes, parents):
        def early(n, s):
            if n.__class__ is not ast_.Name or n.ctx.__class__ is not ast_.Load:
                return False
            stmts = seq.get((id(s), n.id))
            return stmts is not None and orig_seen(stmts, n) is None
        return orig_seq_kept(m, seq, [(n, p, s) for n, p, s in nodes if not early(n, s)], parents)

    def kept_together(m, seq, nodes, parents):
        # a name's bindings handed on together: one load passing one on passes them all on
        kept = orig_seq_kept(m, seq, nodes, parents)
        return {id(st) for stmts in seq.values() if all(id(x) in kept for x in stmts) for st in stmts}

    def whole_reads_pass_on(m, seq, nodes, parents):
        # only keyed and block reads keep a binding (the Verdict's exclusivity, not "a read of the forms above")
        def keyed_reads_at(mod, E, parent, parents_):
            return [r for r in orig_reads_at(mod, E, parent, parents_) if r[0] not in ("whole", "content")]
        scan.reads_at = keyed_reads_at
        try:
            return orig_seq_kept(m, seq, nodes, parents)
        finally:
            scan.reads_at = orig_reads_at

    def is_del(b):
        return b.node.__class__ is ast_.Name and b.node.ctx.__class__ is ast_.Del

    # annotations ("**Annotations.**")
    orig_stands = scan.stands_in
    orig_ann_nodes = scan.annotation_nodes
    orig_ann_of = scan.annotations_of
    orig_instance_attr = scan.instance_attribute
    fn_nodes = (ast_.FunctionDef, ast_.AsyncFunctionDef)
    type_alias = getattr(ast_, "TypeAlias", None)
    type_param_nodes = tuple(c for c in (getattr(ast_, n, None) for n in ("TypeVar", "ParamSpec", "TypeVarTuple"))
                             if c is not None)

    def ann_nodes(roots=orig_ann_of, depth=None, extra=None, skip=None):
        # annotation_nodes with the annotations chosen otherwise (``roots``
        # in place of annotations_of; those of the nodes ``skip(mod)`` gives
        # left out), only down to a depth, or more nodes nested (``extra``)
        def fn(mod):
            skipped = skip(mod) if skip is not None else set()
            out = set()
            for node in ast_.walk(mod.tree):
                rs = [] if id(node) in skipped else list(roots(node))
                if extra is not None:
                    rs += extra(node)
                for r in rs:
                    if depth is None:
                        out.update(id(n) for n in ast_.walk(r))
                    else:
                        level = [r]
                        for _ in range(depth + 1):
                            out.update(id(n) for n in level)
                            level = [c for n in level for c in ast_.iter_child_nodes(n)]
            return out
        return fn

    def without(pred):
        # the annotations of annotations_of but those ``pred(node, annotation)`` picks
        return lambda node: [a for a in orig_ann_of(node) if not pred(node, a)]

    def param_annotation(kinds):
        def pred(node, a):
            if node.__class__ not in fn_nodes:
                return False
            args = node.args
            params = {"posonly": args.posonlyargs, "kwonly": args.kwonlyargs,
                      "star": [v for v in (args.vararg, args.kwarg) if v is not None]}
            return any(a is x.annotation for k in kinds for x in params[k])
        return pred

    def module_defs(mod):
        return {id(st) for st in mod.tree.body if st.__class__ in fn_nodes}

    def function_annassigns(mod):
        return {id(n) for f in ast_.walk(mod.tree) if f.__class__ in fn_nodes
                for st in f.body for n in ast_.walk(st) if n.__class__ is ast_.AnnAssign}

    def outer_annassigns(mod):
        inner = function_annassigns(mod)
        return {id(n) for n in ast_.walk(mod.tree) if n.__class__ is ast_.AnnAssign and id(n) not in inner}

    def def_defaults(node):
        if node.__class__ in fn_nodes:
            return node.args.defaults + [d for d in node.args.kw_defaults if d is not None]
        return []

    def def_decorators(node):
        return list(node.decorator_list) if node.__class__ in fn_nodes else []

    def lambda_defaults(node):
        if node.__class__ is ast_.Lambda:
            return node.args.defaults + [d for d in node.args.kw_defaults if d is not None]
        return []

    def class_bases(node):
        return node.bases + [k.value for k in node.keywords] if node.__class__ is ast_.ClassDef else []

    def first_iterables(node):
        comps = (ast_.ListComp, ast_.SetComp, ast_.GeneratorExp, ast_.DictComp)
        return [node.generators[0].iter] if node.__class__ in comps else []

    def annassign_values(node):
        return [node.value] if node.__class__ is ast_.AnnAssign and node.value is not None else []

    def annassign_targets(node):
        return [node.target] if node.__class__ is ast_.AnnAssign else []

    def annotations_in_s(fn):
        # ``fn`` run with every annotation standing in S
        def wrapped(*a):
            cur = scan.stands_in
            scan.stands_in = lambda mod, node, sc: sc
            try:
                return fn(*a)
            finally:
                scan.stands_in = cur
        return wrapped

    def with_orig_stands(fn):
        # ``fn`` run with the unbroken stands_in
        def wrapped(*a):
            cur = scan.stands_in
            scan.stands_in = orig_stands
            try:
                return fn(*a)
            finally:
                scan.stands_in = cur
        return wrapped

    def annotation_loads_see_their_binding(m, seq, nodes, parents):
        # a load in an annotation taken for a load in S that is no read: only
        # the binding it sees is handed on
        ann = scan.annotation_nodes(m)
        moved = [(n, None if id(n) in ann else p, s) for n, p, s in nodes]
        return annotations_in_s(orig_seq_kept)(m, seq, moved, parents)

    def stands_in_s_for(*classes):
        # nodes of ``classes`` in an annotation stand in S
        def fn(mod, node, sc):
            return sc if node.__class__ in classes else orig_stands(mod, node, sc)
        return fn

    def possible_in_annotations(pred):
        # a node in an annotation that ``pred`` picks judged as if it stood in S
        def fn(mod, node, sc):
            if id(node) in scan.annotation_nodes(mod) and pred(mod, node, sc):
                return annotations_in_s(orig_possible_recv)(mod, node, sc)
            return orig_possible_recv(mod, node, sc)
        return fn

    def is_name(node):
        return node.__class__ is ast_.Name

    def tool_result_param(mod, node, sc):
        return is_name(node) and orig_param(sc, node.id, scan.TOOL_RESULT_ANNOTATIONS)

    def handed_unless_annotation(m, C, par, parents, bound_by, kept, seq_kept):
        # a receiver call in an annotation handed on as anywhere else
        cur = scan.annotation_nodes
        scan.annotation_nodes = lambda mod: set()
        try:
            return orig_handed(m, C, par, parents, bound_by, kept, seq_kept)
        finally:
            scan.annotation_nodes = cur

    def annotation_calls_kept(m, C, par, parents, bound_by, kept, seq_kept):
        H = orig_handed(m, C, par, parents, bound_by, kept, seq_kept)
        return None if id(C) in scan.annotation_nodes(m) else H

    def annotation_span_without_await(m, C, par, parents, bound_by, kept, seq_kept):
        H = orig_handed(m, C, par, parents, bound_by, kept, seq_kept)
        return C if H is not None and id(C) in scan.annotation_nodes(m) else H

    def no_escapes_in_annotations(proj, m, X, sc, instances):
        return None if id(X) in scan.annotation_nodes(m) else orig_esc_target(proj, m, X, sc, instances)

    def no_instance_call_escapes_in_annotations(proj, m, X, sc, instances):
        if (id(X) in scan.annotation_nodes(m) and X.__class__ is ast_.Attribute
                and X.value.__class__ is ast_.Call):
            return None
        return orig_esc_target(proj, m, X, sc, instances)

    where_multi = [
        # names loaded in an annotation read as receivers there (a name bound
        # once or in sequence), the other questions of where a load stands
        # (results handed on, possible receivers, instances) unbroken
        ("names in annotations receivers there",
         {"stands_in": stands_in_s_for(ast_.Name), "kept_names": with_orig_stands(orig_kept),
          "sequence_kept": with_orig_stands(orig_seq_kept),
          "is_possible_receiver": with_orig_stands(orig_possible_recv),
          "instance_attribute": with_orig_stands(orig_instance_attr)}),
    ]
    where_setters = [
        ("annotations stand in S", "stands_in", lambda mod, node, sc: sc),
        ("every node stands in a nested scope", "stands_in", lambda mod, node, sc: None),
        ("receiver calls in annotations read there", "stands_in", stands_in_s_for(ast_.Call, ast_.Await)),
        ("return annotations stand in S", "annotation_nodes",
         ann_nodes(without(lambda n, a: n.__class__ in fn_nodes and a is n.returns))),
        ("*args / **kwargs annotations stand in S", "annotation_nodes",
         ann_nodes(without(param_annotation(["star"])))),
        ("keyword-only annotations stand in S", "annotation_nodes", ann_nodes(without(param_annotation(["kwonly"])))),
        ("positional-only annotations stand in S", "annotation_nodes",
         ann_nodes(without(param_annotation(["posonly"])))),
        ("async defs' annotations stand in S", "annotation_nodes",
         ann_nodes(without(lambda n, a: n.__class__ is ast_.AsyncFunctionDef))),
        ("a module's defs' annotations stand in S", "annotation_nodes", ann_nodes(skip=module_defs)),
        ("variable annotations stand in S", "annotation_nodes",
         ann_nodes(without(lambda n, a: n.__class__ is ast_.AnnAssign))),
        ("variable annotations of modules and class bodies stand in S", "annotation_nodes",
         ann_nodes(skip=outer_annassigns)),
        ("variable annotations of functions stand in S", "annotation_nodes", ann_nodes(skip=function_annassigns)),
        ("only an annotation's own node and its children nested", "annotation_nodes", ann_nodes(depth=1)),
        ("defaults nested too", "annotation_nodes", ann_nodes(extra=def_defaults)),
        ("decorators nested too", "annotation_nodes", ann_nodes(extra=def_decorators)),
        ("lambda defaults nested too", "annotation_nodes", ann_nodes(extra=lambda_defaults)),
        ("class bases and keywords nested too", "annotation_nodes", ann_nodes(extra=class_bases)),
        ("comprehensions' first iterables nested too", "annotation_nodes", ann_nodes(extra=first_iterables)),
        ("annotated assignments' values nested too", "annotation_nodes", ann_nodes(extra=annassign_values)),
        ("annotated assignments' targets nested too", "annotation_nodes", ann_nodes(extra=annassign_targets)),
        ("annotation loads of a name bound once hand nothing on", "kept_names", annotations_in_s(orig_kept)),
        ("annotation loads spoil no name bound in sequence", "sequence_kept", annotations_in_s(orig_seq_kept)),
        ("annotation loads hand on the binding they see only", "sequence_kept",
         annotation_loads_see_their_binding),
        ("possible receivers in annotations", "is_possible_receiver", annotations_in_s(orig_possible_recv)),
        ("marked names in annotations possible receivers", "is_possible_receiver",
         possible_in_annotations(lambda mod, node, sc: is_name(node) and orig_marked(node.id))),
        ("marked attributes in annotations possible receivers", "is_possible_receiver",
         possible_in_annotations(lambda mod, node, sc: node.__class__ is ast_.Attribute and orig_marked(node.attr))),
        ("toolResult subscripts in annotations possible receivers", "is_possible_receiver",
         possible_in_annotations(lambda mod, node, sc: node.__class__ is ast_.Subscript)),
        ("annotated parameters in annotations possible receivers", "is_possible_receiver",
         possible_in_annotations(tool_result_param)),
        ("hook events in annotations possible receivers", "is_possible_receiver",
         possible_in_annotations(lambda mod, node, sc: node.__class__ is ast_.Attribute and node.attr == "result")),
        ("aliases in annotations possible receivers", "is_possible_receiver",
         possible_in_annotations(lambda mod, node, sc: is_name(node) and not orig_marked(node.id)
                                 and not tool_result_param(mod, node, sc))),
        ("instance names read in annotations", "instance_attribute", annotations_in_s(orig_instance_attr)),
        ("receiver calls in annotations handed on only when not read", "handed_on", handed_unless_annotation),
        ("receiver calls in annotations never handed on", "handed_on", annotation_calls_kept),
        ("awaited calls in annotations handed on at the call", "handed_on", annotation_span_without_await),
        ("no escapes in annotations", "escape_target", no_escapes_in_annotations),
        ("no K(...).m escapes in annotations", "escape_target", no_instance_call_escapes_in_annotations),
    ]
    if type_alias is not None:
        # Python 3.12+: the cases of WHERE_TYPES
        where_setters += [
            ("type alias values stand in S", "annotation_nodes",
             ann_nodes(without(lambda n, a: n.__class__ is type_alias))),
            ("type parameter bounds stand in S", "annotation_nodes",
             ann_nodes(without(lambda n, a: n.__class__ in type_param_nodes
                                and a is getattr(n, "bound", None)))),
        ]
    if sys.version_info >= (3, 13):
        where_setters.append(("type parameter defaults stand in S", "annotation_nodes",
                              ann_nodes(without(lambda n, a: n.__class__ in type_param_nodes
                                                 and a is getattr(n, "default_value", None)))))

    # calls toolshape cannot resolve ("**Calls toolshape cannot resolve.**")
    orig_unres_reads = scan.unresolved_reads
    orig_unres_name = scan.unresolved_name
    orig_unres_target = scan.unresolved_target
    orig_unres_span = scan.unresolved_span
    orig_external = scan.external_import
    orig_project_module = scan.project_module
    orig_callee_binding = scan.callee_binding

    def direct_tool_unresolved(f):
        if f.__class__ is ast_.Attribute:
            return f.attr
        return orig_unres_name(f)

    def names_only(f):
        return orig_unres_name(f) if f.__class__ is ast_.Name else None

    def attributes_only(f):
        return orig_unres_name(f) if f.__class__ is ast_.Attribute else None

    def self_resolved(proj, m, C, sc, instances):
        # `self.N` / `cls.N`: taken for the class's own method, defined or not
        f = C.func
        if f.__class__ is ast_.Attribute and f.value.__class__ is ast_.Name and f.value.id in ("self", "cls"):
            return False
        return orig_unres_target(proj, m, C, sc, instances)

    def no_instance_resolution(proj, m, C, sc, instances):
        saved = scan.instance_attribute
        scan.instance_attribute = lambda *a: None
        try:
            return orig_unres_target(proj, m, C, sc, instances)
        finally:
            scan.instance_attribute = saved

    def constructors_unresolved(proj, m, C, sc, instances):
        saved = scan.Project.resolve_class
        scan.Project.resolve_class = lambda self, mod, call, scope: None
        try:
            return orig_unres_target(proj, m, C, sc, instances)
        finally:
            scan.Project.resolve_class = saved

    def instance_calls_unresolved(proj, m, C, sc, instances):
        # any `O.N(...)` that the builder rules do not resolve
        if C.func.__class__ is ast_.Attribute and proj.resolve_call(m, C, sc) is None:
            return True
        return orig_unres_target(proj, m, C, sc, instances)

    def await_span(C, par):
        return par if par.__class__ is ast_.Await else C

    def first_producer_only(proj, m, named, *rest):
        return orig_unres_reads(proj, m, {k: v[:1] for k, v in named.items()}, *rest)

    def any_import_exempt(proj, b):
        return b.kind in ("import", "importfrom")

    def exact_project_modules(proj, name):
        return name in proj.by_name

    # imports inside a function ("**Imports inside a function**")
    def local_binding(mod, scope, name, owners=lambda owner, scope: True, once=True, kinds=("function",)):
        # callee_binding with a part changed: ``owners(owner, scope)`` judges
        # the function (or, with ``kinds``, the class body...) owning the
        # name; ``once``: bound there exactly once
        owner = scan.lookup(scope, name, mod.module_scope)
        if owner is None or owner is mod.module_scope:
            return orig_callee_binding(mod, scope, name)
        bs = [b for b in owner.owned.get(name, ()) if once or b.kind in ("import", "importfrom")]
        if owner.kind not in kinds or not owners(owner, scope) or not bs or (once and len(bs) != 1):
            return None
        return bs[0] if bs[0].kind in ("import", "importfrom") else None

    def innermost_only(owner, scope):
        # the function the load stands in, not one enclosing it
        s = scope
        while s is not None and s.kind != "function":
            s = s.parent
        return s is owner

    def local_external_not_exempt(proj, m, C, sc, instances):
        # a name imported from outside the project inside a function: not exempt
        def binding(mod, scope, name):
            b = orig_callee_binding(mod, scope, name)
            if (b is not None and scan.lookup(scope, name, mod.module_scope) is not mod.module_scope
                    and orig_external(proj, b)):
                return None
            return b
        scan.callee_binding = binding
        try:
            return orig_unres_target(proj, m, C, sc, instances)
        finally:
            scan.callee_binding = orig_callee_binding

    # uses as a value toolshape cannot resolve ("**Uses as a value toolshape
    # cannot resolve**")
    orig_use_reads = scan.unresolved_use_reads
    orig_use_name = scan.unresolved_use_name
    orig_renamed = scan.renamed_use

    def patched_use_reads(**patches):
        # unresolved_use_reads with some of scan's functions replaced while it runs
        def reads(*a):
            saved = {k: getattr(scan, k) for k in patches}
            for k, v in patches.items():
                setattr(scan, k, v)
            try:
                return orig_use_reads(*a)
            finally:
                for k, v in saved.items():
                    setattr(scan, k, v)
        return reads

    def use_names_with(attributes=True, names=True, local=None, module=None, unbound=True, tool_callee=True):
        # unresolved_use_name with a part left out or widened: ``local`` and
        # ``module`` judge the bindings of a function's / the module's own
        def name(m, X, sc):
            if X.__class__ is ast_.Attribute:
                if not attributes:
                    return None
                if not tool_callee and X.value.__class__ is ast_.Attribute and X.value.attr == "tool":
                    return None
                return orig_use_name(m, X, sc)
            if not names:
                return None
            owner = scan.lookup(sc, X.id, m.module_scope)
            if owner is None:
                return X.id if unbound else None
            bs = owner.owned.get(X.id, ())
            if owner is m.module_scope:
                return X.id if module is None or module(bs) else None
            if local is not None:
                return X.id if local(bs) else None
            return orig_use_name(m, X, sc)
        return name

    def is_import(b):
        return b.kind in ("import", "importfrom")

    def use_span_parent(proj, m, named, keys, by_origin, instances, reads_of):
        # the read spans the expression holding the use
        parents = {id(n): p for n, p, _ in scan.module_nodes(m)}

        def record(mm, span, form, key, possible):
            return orig_record(mm, parents.get(id(span)) or span, form, key, possible)
        return patched_use_reads(read_record=record)(proj, m, named, keys, by_origin, instances, reads_of)

    def is_tool_producer(t):
        return any(scan.is_tool_decorator(d) for d in t.node.decorator_list)

    def uses_whatever_the_form(plain):
        # unresolved_use_reads, and a plain use (neither wrapped nor renamed)
        # read too of the producers ``plain`` picks (``plain(t)``): the rule
        # before the narrowing, for plain = not a tool
        def reads(proj, m, named, keys, by_origin, instances, reads_of):
            orig_use_reads(proj, m, named, keys, by_origin, instances, reads_of)
            nodes = scan.module_nodes(m)
            parents = {id(n): p for n, p, _ in nodes}
            for node, par, sc in scan.value_use_nodes(nodes):
                N = scan.unresolved_use_name(m, node, sc)
                fs = [t for t in named.get(N, ()) if plain(t)] if N is not None else []
                if not fs or scan.wrapped_use(node, par, parents) or scan.renamed_use(node, par):
                    continue
                if not scan.unresolved_target(proj, m, scan.value_call(m, node), sc, instances):
                    continue
                rec = orig_record(m, node, "escape", None, False)
                for t in fs:
                    for o in scan.escape_origins(t, keys):
                        for fd in by_origin[o]:
                            reads_of.setdefault(id(fd), []).append(rec)
        return reads

    def renamed_only_by(*classes):
        # renamed_use with only some of its forms (the parents' classes; "dict": a dict pair)
        def renamed(X, par):
            cls = par.__class__
            if cls is ast_.Dict and "dict" not in classes:
                return False
            if cls in scan.RENAMING_PARENTS and cls not in classes:
                return False
            return orig_renamed(X, par)
        return renamed

    use_setters = [
        ("no unresolved uses", "unresolved_use_reads", lambda *a: None),
        ("unresolved uses of the first producer of a name only", "unresolved_use_reads",
         lambda proj, m, named, *rest: orig_use_reads(proj, m, {k: v[:1] for k, v in named.items()}, *rest)),
        ("unresolved uses of tools whatever the use", "unresolved_use_reads",
         uses_whatever_the_form(is_tool_producer)),
        ("unresolved uses of producers that are no tools whatever the use (before the narrowing)",
         "unresolved_use_reads", uses_whatever_the_form(lambda t: not is_tool_producer(t))),
        ("every unresolved use whatever the use", "unresolved_use_reads",
         patched_use_reads(wrapped_use=lambda X, par, parents: True)),
        ("no unresolved uses of tools", "unresolved_use_reads",
         lambda proj, m, named, *rest: orig_use_reads(
             proj, m, {k: [t for t in v if not is_tool_producer(t)] for k, v in named.items()}, *rest)),
        ("no unresolved uses of producers that are no tools", "unresolved_use_reads",
         lambda proj, m, named, *rest: orig_use_reads(
             proj, m, {k: [t for t in v if is_tool_producer(t)] for k, v in named.items()}, *rest)),
        ("uses through a wrapper no unresolved uses", "unresolved_use_reads",
         patched_use_reads(wrapped_use=lambda X, par, parents: False)),
        ("uses renamed no unresolved uses", "unresolved_use_reads",
         patched_use_reads(renamed_use=lambda X, par: False)),
        ("unresolved uses renamed by assignments only", "unresolved_use_reads",
         patched_use_reads(renamed_use=renamed_only_by(ast_.Assign, ast_.AnnAssign, ast_.NamedExpr))),
        ("unresolved uses renamed: no return", "unresolved_use_reads",
         patched_use_reads(renamed_use=renamed_only_by(ast_.Assign, ast_.AnnAssign, ast_.NamedExpr,
                                                        ast_.Yield, "dict"))),
        ("unresolved uses renamed: no yield", "unresolved_use_reads",
         patched_use_reads(renamed_use=renamed_only_by(ast_.Assign, ast_.AnnAssign, ast_.NamedExpr,
                                                        ast_.Return, "dict"))),
        ("unresolved uses renamed: no dict pair", "unresolved_use_reads",
         patched_use_reads(renamed_use=renamed_only_by(ast_.Assign, ast_.AnnAssign, ast_.NamedExpr,
                                                        ast_.Return, ast_.Yield))),
        ("every use named like a producer unresolved", "unresolved_use_reads",
         patched_use_reads(unresolved_target=lambda *a: True)),
        ("external imports not exempt for uses", "unresolved_use_reads",
         patched_use_reads(external_import=lambda proj, b: False)),
        ("unresolved uses follow no chain", "unresolved_use_reads",
         patched_use_reads(escape_origins=chains_not_followed)),
        ("unresolved uses span their parent", "unresolved_use_reads", use_span_parent),
        ("unresolved uses: names only", "unresolved_use_name", use_names_with(attributes=False)),
        ("unresolved uses: attributes only", "unresolved_use_name", use_names_with(names=False)),
        ("direct tool callees no unresolved uses", "unresolved_use_name", use_names_with(tool_callee=False)),
        ("names of local bindings judged", "unresolved_use_name", use_names_with(local=lambda bs: True)),
        ("names imported inside a function not judged", "unresolved_use_name",
         use_names_with(local=lambda bs: False)),
        ("names bound inside a function judged only when all imports (the rule before)", "unresolved_use_name",
         use_names_with(local=lambda bs: bool(bs) and all(is_import(b) for b in bs))),
        ("names bound inside a function judged only when imported once (no fallback)", "unresolved_use_name",
         use_names_with(local=lambda bs: any(is_import(b) for b in bs)
                        and not any(b.kind == "assign" for b in bs))),
        ("names bound inside a function judged when any binding is an assignment", "unresolved_use_name",
         use_names_with(local=lambda bs: any(is_import(b) or b.kind == "assign" for b in bs))),
        ("module names judged only when bound once", "unresolved_use_name",
         use_names_with(module=lambda bs: len(bs) == 1)),
        ("module names judged only when imported", "unresolved_use_name",
         use_names_with(module=lambda bs: all(is_import(b) for b in bs))),
        ("unbound names not judged", "unresolved_use_name", use_names_with(unbound=False)),
    ]

    unresolved_setters = [
        *use_setters,
        ("no unresolved calls", "unresolved_reads", lambda *a: None),
        ("unresolved calls of the first producer of a name only", "unresolved_reads", first_producer_only),
        ("direct tool calls unresolved", "unresolved_name", direct_tool_unresolved),
        ("unresolved callees: names only", "unresolved_name", names_only),
        ("unresolved callees: attributes only", "unresolved_name", attributes_only),
        ("every call named like a producer unresolved", "unresolved_target", lambda *a: True),
        ("no call unresolved", "unresolved_target", lambda *a: False),
        ("self / cls calls resolved whatever the class defines", "unresolved_target", self_resolved),
        ("calls on an instance unresolved", "unresolved_target", no_instance_resolution),
        ("any O.N(...) unresolved", "unresolved_target", instance_calls_unresolved),
        ("constructors unresolved", "unresolved_target", constructors_unresolved),
        ("external imports inside functions not exempt", "unresolved_target", local_external_not_exempt),
        ("unresolved spans with their await", "unresolved_span", await_span),
        ("no import exempt", "external_import", lambda proj, b: False),
        ("every import exempt", "external_import", any_import_exempt),
        ("project modules by their exact name", "project_module", exact_project_modules),
        ("imports inside functions not resolved", "callee_binding", scan.module_binding),
        ("imports inside functions resolved however often bound", "callee_binding",
         lambda mod, scope, name: local_binding(mod, scope, name, once=False)),
        ("imports of the enclosing functions not followed", "callee_binding",
         lambda mod, scope, name: local_binding(mod, scope, name, owners=innermost_only)),
        ("imports of class bodies resolved", "callee_binding",
         lambda mod, scope, name: local_binding(mod, scope, name, kinds=("function", "class"))),
    ]

    # results handed to a checking function ("**Results handed to a checking function.**")
    orig_checking_call = scan.checking_call
    orig_checking_params = scan.checking_params
    orig_checked_use = scan.checked_use
    orig_flow = {k: getattr(scan.Flow, k) for k in ("handed_g", "contributions", "v_keys", "carry", "memo")}

    def memo_cycles_kept(self, key, compute, cyclic):
        return orig_flow["memo"](self, key, compute, True if cyclic is False else cyclic)

    def memo_keeps_open_answers(self, key, compute, cyclic):
        # every answer kept, also one that leaned on a question still open
        got = self._memo.get(key)
        if got is scan.Flow._BUSY:
            return cyclic
        if got is not None:
            return got
        self._memo[key] = scan.Flow._BUSY
        value = self._memo[key] = compute()
        return value

    def checking_call_with(parenthesized=False, decorated=False, async_too=False, nested=False, twice=False,
                           starred=False, any_scope=False):
        # checking_call with one of its conditions dropped
        def fn(m, V, par, sc):
            if par is None or par.__class__ is not ast_.Call:
                return None
            G = par
            i = next((j for j, a in enumerate(G.args) if a is V), None)
            if i is None:
                return None
            if not starred and (any(a.__class__ is ast_.Starred for a in G.args)
                                or any(k.arg is None for k in G.keywords)):
                return None
            f = G.func
            if f.__class__ is not ast_.Name:
                return None
            if not parenthesized and (f.lineno, f.col_offset) != (G.lineno, G.col_offset):
                return None
            if any_scope:
                defs = [n for n in ast_.walk(m.tree) if n.__class__ in scan._FUNCTION_NODES and n.name == f.id]
            else:
                if sc is None or scan.lookup(sc, f.id, m.module_scope) is not m.module_scope:
                    return None
                defs = [b.node for b in m.module_scope.owned.get(f.id, ()) if b.kind == "def"]
                if not twice and len(m.module_scope.owned.get(f.id, ())) != 1:
                    return None
            if not defs:
                return None
            d = defs[-1]
            if d.__class__ is not ast_.FunctionDef and not async_too:
                return None
            if d.decorator_list and not decorated:
                return None
            if not nested and not any(d is st for st in m.tree.body):
                return None
            info = scan.checking_params(m, d).get(i)
            return (G, i, info) if info is not None else None
        return fn

    def params_with(generators=False, nested=False, passed=False, tuples=False, rebound=False):
        # checking_params with one of its conditions dropped
        def fn(m, fdef):
            S = next((sc for sc in m.scopes if sc.node is fdef), None)
            if S is None:
                return {}
            nodes = scan.module_nodes(m)
            parents = {id(n): p for n, p, _ in nodes}
            if not generators and any(n.__class__ in (ast_.Yield, ast_.YieldFrom) and sc is S for n, _, sc in nodes):
                return {}
            out = {}
            a = fdef.args
            for i, x in enumerate(a.posonlyargs + a.args):
                bs = S.owned.get(x.arg, ())
                if not rebound and len(bs) != 1:
                    continue
                reads, passes, ok = [], False, True
                for node, par, sc in nodes:
                    if node.__class__ is not ast_.Name or node.id != x.arg:
                        continue
                    if scan.lookup(sc, node.id, m.module_scope) is not S:
                        continue
                    if node.ctx.__class__ is not ast_.Load:
                        if rebound:
                            continue
                        ok = False
                        break
                    if scan.stands_in(m, node, sc) is not S and not nested:
                        ok = False
                        break
                    found = scan.reads_at(m, node, par, parents)
                    if found:
                        reads.extend(found)
                    elif scan.assertion_message(node, par, parents):
                        pass
                    elif par.__class__ is ast_.Return and par.value is node:
                        passes = True
                    elif tuples and par.__class__ is ast_.Tuple:
                        passes = True
                    elif not passed:
                        ok = False
                        break
                if ok:
                    out[i] = (x.arg, reads, passes)
            return out
        return fn

    def no_pass_through(m, fdef):
        return {i: (P, reads, False) for i, (P, reads, _) in orig_checking_params(m, fdef).items()}

    def returns_keep(self, G):
        par = self.parents.get(id(G))
        if par.__class__ is ast_.Return:
            return False
        return orig_flow["handed_g"](self, G)

    def awaits_keep(self, G):
        if self.parents.get(id(G)).__class__ is ast_.Await:
            return False
        return orig_flow["handed_g"](self, G)

    flow_setters = [
        ("passed-through calls never handed on", "handed_g", lambda self, G: False),
        ("passed-through calls always handed on", "handed_g", lambda self, G: True),
        ("returned passed-through calls not handed on", "handed_g", returns_keep),
        ("awaited passed-through calls not handed on", "handed_g", awaits_keep),
        ("checking functions contribute no reads", "contributions", lambda self, V, par: None),
        ("passed-through calls carry nothing", "carry", lambda self, G: set()),
        ("cycles keep their results", "memo", memo_cycles_kept),
        ("answers inside a cycle kept", "memo", memo_keeps_open_answers),
    ]
    checker_setters = [
        ("no checking functions", "checking_call", lambda m, V, par, sc: None),
        ("parenthesized callees of checking functions", "checking_call", checking_call_with(parenthesized=True)),
        ("decorated checking functions", "checking_call", checking_call_with(decorated=True)),
        ("async checking functions", "checking_call", checking_call_with(async_too=True)),
        ("nested checking functions", "checking_call", checking_call_with(nested=True)),
        ("checking functions defined twice", "checking_call", checking_call_with(twice=True)),
        ("starred calls of checking functions", "checking_call", checking_call_with(starred=True)),
        ("checking functions of any scope", "checking_call", checking_call_with(any_scope=True)),
        ("generators check", "checking_params", params_with(generators=True)),
        ("parameters read in nested scopes check", "checking_params", params_with(nested=True)),
        ("parameters passed on check", "checking_params", params_with(passed=True)),
        ("parameters returned in tuples pass through", "checking_params", params_with(tuples=True)),
        ("rebound parameters check", "checking_params", params_with(rebound=True)),
        ("checking functions never pass through", "checking_params", no_pass_through),
        ("names handed to checking functions handed on", "checked_use",
         lambda m, V, par, parents: orig_checked_use(m, V, par, parents) and V.__class__ is not ast_.Name),
        ("calls handed to checking functions handed on", "checked_use",
         lambda m, V, par, parents: orig_checked_use(m, V, par, parents) and V.__class__ is ast_.Name),
    ]

    setters = [
        *where_setters,
        *unresolved_setters,
        *deco_setters,
        *checker_setters,
        ("no assertion messages", "assertion_message", lambda node, par, parents: False),
        ("any load in an assertion message", "assertion_message", message_anywhere),
        ("format spec and nested f-string fields in messages", "assertion_message", spec_fields_too),
        ("assert tests taken for messages", "assertion_message", tests_too),
        ("messages that are the name only", "assertion_message", message_names_only),
        ("messages that are f-strings only", "assertion_message", message_fstrings_only),
        ("message fields without conversion or spec only", "assertion_message", plain_fields_only),
        ("assertion messages hand a name bound once on", "kept_names", without_messages(orig_kept)),
        ("assertion messages hand a binding in sequence on", "sequence_kept", without_messages(orig_seq_kept)),
        ("nested message loads keep a name bound once", "kept_names", message_loads_dropped(orig_kept)),
        ("early message loads keep a name bound in sequence", "sequence_kept",
         message_loads_dropped(orig_seq_kept)),
        ("no names bound in sequence", "sequence_names", lambda mod: {}),
        ("bindings at any depth in sequence", "sequence_binding", binding_any_depth),
        ("annotated and chained bindings in sequence", "sequence_binding", binding_any_assignment),
        ("other bindings of a name in sequence ignored", "sequence_names",
         names_with(keep_binding=lambda b: b.kind == "assign")),
        ("parameters ignored in sequence", "sequence_names", names_with(keep_binding=lambda b: b.kind != "param")),
        ("del ignored in sequence", "sequence_names", names_with(keep_binding=lambda b: not is_del(b))),
        ("module names in sequence", "sequence_names", names_with(scopes=("function", "module"))),
        ("the first binding seen by every load", "seen_statement", seen_first),
        ("a load in V sees its own statement", "seen_statement", seen_from_start),
        ("a load before the first binding sees it", "seen_statement", seen_before_first),
        ("statements without a call not seen", "seen_statement", seen_calls_only),
        ("awaited values not followed in sequence", "statement_call",
         lambda st: st.value if st.value.__class__ is ast_.Call else None),
        ("nested loads read in sequence", "sequence_seen", seen_from_nested),
        ("nested loads hand nothing on in sequence", "sequence_kept", nested_loads_left_out),
        ("loads before the first binding hand nothing on", "sequence_kept", early_loads_left_out),
        ("a name's bindings handed on together", "sequence_kept", kept_together),
        ("whole reads hand a binding on", "sequence_kept", whole_reads_pass_on),
        ("every binding in sequence kept", "sequence_kept",
         lambda m, seq, nodes, parents: {id(st) for stmts in seq.values() for st in stmts}),
        ("no binding in sequence kept", "sequence_kept", lambda m, seq, nodes, parents: set()),
        ("no results handed on", "handed_on_reads", lambda *a: None),
        ("every receiver name bound once kept", "kept_names", any_name_kept),
        ("receiver names in functions kept whatever their loads", "kept_names", function_names_kept),
        ("handed-on spans without their await", "handed_on", span_without_await),
        ("expression statements hand results on", "handed_on", statements_hand_on),
        ("no escapes", "escape_reads", lambda *a: None),
        ("tools escape too", "escaping_producers", tools_escape),
        ("async producers do not escape", "escaping_producers", async_not_escaping),
        ("callees taken for uses as values", "is_value_use", callees_used),
        ("attribute objects taken for uses as values", "is_value_use", attribute_objects_used),
        ("targets taken for uses as values", "is_value_use", targets_used),
        ("no instance forms of escapes", "escape_target", no_instance_forms),
        ("no self / cls escapes", "escape_target", no_self_forms),
        ("no A.name escapes", "escape_target", no_module_forms),
        ("instance names read from nested scopes escape", "escape_target", instances_from_nested),
        ("escaping names resolved in the module scope", "escape_target", names_in_module_scope),
        ("escapes reach keyed findings only", "escape_reads", keyed_findings_only),
        ("no tool renamed", "renamed_use", lambda X, par: False),
        ("no tool called through a wrapper", "wrapped_use", lambda X, par, parents: False),
        ("assignments do not rename", "renamed_use", renamed_with(without=(ast_.Assign,))),
        ("annotated assignments do not rename", "renamed_use", renamed_with(without=(ast_.AnnAssign,))),
        ("walruses do not rename", "renamed_use", renamed_with(without=(ast_.NamedExpr,))),
        ("returns do not rename", "renamed_use", renamed_with(without=(ast_.Return,))),
        ("yields do not rename", "renamed_use", renamed_with(without=(ast_.Yield,))),
        ("dict pairs do not rename", "renamed_use", dict_values_not_renamed),
        ("chained assignments do not rename", "renamed_use", chained_not_renamed),
        ("name targets only rename", "renamed_use", name_targets_only),
        ("augmented assignments rename", "renamed_use",
         renamed_with(lambda X, par: par.__class__ is ast_.AugAssign and par.value is X)),
        ("yield from renames", "renamed_use",
         renamed_with(lambda X, par: par.__class__ is ast_.YieldFrom and par.value is X)),
        ("tuple elements rename", "renamed_use", renamed_with(lambda X, par: par.__class__ is ast_.Tuple)),
        ("list elements rename", "renamed_use", renamed_with(lambda X, par: par.__class__ is ast_.List)),
        ("arguments rename", "renamed_use", renamed_with(lambda X, par: par.__class__ in (ast_.Call, ast_.keyword))),
        ("operands rename", "renamed_use",
         renamed_with(lambda X, par: par.__class__ in (ast_.Compare, ast_.BoolOp))),
        ("conditionals rename", "renamed_use", renamed_with(lambda X, par: par.__class__ is ast_.IfExp)),
        ("dict keys and spreads rename", "renamed_use", renamed_with(dict_keys_and_spreads)),
        ("dict comprehension values rename", "renamed_use",
         renamed_with(lambda X, par: par.__class__ is ast_.DictComp and par.value is X)),
        ("lambda bodies rename", "renamed_use", renamed_with(lambda X, par: par.__class__ is ast_.Lambda)),
        ("defaults rename", "renamed_use", renamed_with(
            lambda X, par: par.__class__ in (ast_.FunctionDef, ast_.AsyncFunctionDef, ast_.Lambda)
            and any(X is d for d in par.args.defaults + par.args.kw_defaults))),
        ("annotations rename", "renamed_use",
         renamed_with(lambda X, par: par.__class__ is ast_.AnnAssign and par.annotation is X)),
        ("wrappers with any arguments", "wrapped_use", wrapped_any_arguments),
        ("wrappers by keyword", "wrapped_use", wrapped_keywords),
        ("wrappers not called", "wrapped_use", wrapped_not_called),
        ("no tool handed to a kept call", "kept_call_use", lambda m, X, par, parents, sc: False),
        ("keyword values kept", "kept_call_use", kept_with(keywords=True)),
        ("starred arguments kept", "kept_call_use", kept_with(starred=True)),
        ("call statements keep", "kept_call_use", kept_with(statements=True)),
        ("awaited call statements keep", "kept_call_use", kept_with(await_seen=False)),
        ("builtins exempt whatever binds them", "kept_call_use", kept_with(bound_exempt=True)),
        ("builtins exempt unless the module level binds them", "kept_call_use",
         kept_with(module_bound_only=True)),
        ("builtins exempt under a star import", "kept_call_use", kept_with(star_exempt=True)),
        ("builtins exempt as attributes too", "kept_call_use", kept_with(attributes_exempt=True)),
        ("no builtin exempt", "LOOKING_BUILTINS", frozenset()),
        ("len among the exempt builtins", "LOOKING_BUILTINS", orig_looking | {"len"}),
        ("repr not among the exempt builtins", "LOOKING_BUILTINS", orig_looking - {"repr"}),
        ("kept calls make unresolved uses", "unresolved_use_reads", kept_use_reads),
        ("escapes follow no chain", "escape_origins", chains_not_followed),
        ("escapes narrowed to the first return", "escape_origins", first_return_only),
        ("escape spans with their parentheses", "read_record", parentheses_in_span),
        ("no dispatch narrowing", "dispatch_keywords", lambda c, call: {}),
        ("constant f-strings dispatch", "dispatch_keywords", keywords_with(values=fstring_const)),
        ("bytes dispatch", "dispatch_keywords", keywords_with(values=bytes_const)),
        ("rebound parameters dispatch", "dispatch_keywords", keywords_with(bindings=True)),
        ("*args and **kwargs dispatch", "dispatch_keywords", keywords_with(params=star_param_names)),
        ("positional-only parameters do not dispatch", "dispatch_keywords", no_posonly),
        ("tests C == P not seen", "dispatch_test", left_name_only),
        ("tests P != C taken for P == C", "dispatch_test", not_equal_too),
        ("no exclusion in the body of another constant's if", "_exclusion_walk", walker(rule1=False)),
        ("no exclusion in the clauses after P == C", "_exclusion_walk", walker(rule2=False)),
        ("no exclusion after a returning if", "_exclusion_walk", walker(rule3=False)),
        ("exclusion after a returning if at any depth", "_exclusion_walk", walker(rule3_deep=True)),
        ("exclusion after an if whatever its body's end", "_exclusion_walk", walker(rule3_any_end=True)),
        ("only the first dispatch keyword", "excluded", first_keyword_only),
        ("chains narrowed too", "narrowed_keys", chains_narrowed),
        ("chains not followed when narrowed", "narrowed_keys", chains_dropped),
        ("every file searched", "searched_for_possible", lambda m, keys: set(keys)),
        ("files searched for a marker alone", "searched_for_possible", markers_only),
        ("files searched for any moved key they quote", "searched_for_possible", any_moved_key),
        ("comments not searched for keys", "searched_for_possible", code_only),
        ("keys by their decoded value", "searched_for_possible", decoded_constants),
        ("no possible receivers", "is_possible_receiver", never_possible),
        ("possible reads not flagged", "read_record", flag_lost),
        ("no R = C exclusion", "bound_once_to_call", lambda mod, sc, name: False),
        ("the exclusion for any single binding", "bound_once_to_call", any_single_binding),
        ("the exclusion judged in the reading scope", "bound_once_to_call", reading_scope_only),
        ("the exclusion for annotated and chained assignments", "bound_once_to_call", any_assignment_to_call),
        ("annotated parameters read from nested scopes", "annotated_param", enclosing_params),
        ("star parameters annotated", "annotated_param", star_params),
        ("string annotations", "annotated_as", string_annotations),
        ("markers case-insensitive", "is_marked", lambda text: "tool_result" in text.lower()
         or "toolresult" in text.lower()),
        ("X.result on any name", "is_possible_receiver", any_result_attribute),
        ("any attribute of an event", "is_possible_receiver", any_event_attribute),
        ("marked attributes on names only", "is_possible_receiver", marked_attribute_on_names),
        ("possible reads reach TS001 findings only", "possible_reads", ts001_only),
        ("toolResult targets read", "possible_reads", tool_result_targets),
        ("the toolResult index by its value, not its text", "tool_result_index", tool_result_index_by_value),
        ("the toolResult index in double quotes only", "tool_result_index",
         lambda mod, node: orig_tr_index(mod, node) and mod.text(node) == '"toolResult"'),
        ("a marked annotated parameter read twice", "possible_reads", marked_and_annotated_twice),
        ("no aliases", "is_possible_alias", lambda mod, sc, name: False),
        ("aliases from annotated and chained assignments", "aliased_value", any_assign_aliases),
        ("aliases from tuples, lists and walruses", "is_possible_alias", unpacking_aliases),
        ("aliases of marked names", "aliased_value", name_aliases),
        ("aliases bound once only", "is_possible_alias", alias_needs_one_binding),
        ("aliases read in their own scope only", "is_possible_alias", alias_in_own_scope),
        ("alias values judged in the reading scope", "is_possible_alias", alias_judged_in_reading_scope),
        ("alias values judged in the owning scope", "binding_scopes", owner_binding_scopes),
        ("in for not-in", "reads_at", swap_in),
        ("no whole reads", "reads_at", no_whole),
        ("stores and deletes as loads", "reads_at", store_as_load),
        ("any decorator is a tool", "is_tool_decorator", lambda d: True),
        ("no decorator is a tool", "is_tool_decorator", lambda d: False),
        ("all nodes in the module scope", "module_nodes", flat_scopes),
        ("nested scopes followed", "module_nodes", nested_followed),
        ("keys misspelled", "const_str", any_str),
        ("no content or block reads", "reads_at", no_content),
        ("blocks as content reads", "reads_at", block_as_content),
        ("content targets read", "reads_at", content_targets_read),
        ("outer targets give blocks", "reads_at", outer_targets_block),
        ("any index is a decimal literal", "decimal_index", lambda mod, node: True),
        ("an index by its value, not its text", "decimal_index",
         lambda mod, node: node.__class__ is scan.ast.Constant and node.value.__class__ is int),
    ]
    originals = {"reads_at": orig_reads_at, "is_tool_decorator": orig_tool, "module_nodes": orig_nodes,
                 "const_str": orig_const, "decimal_index": orig_index,
                 "is_possible_receiver": orig_possible_recv, "bound_once_to_call": orig_once,
                 "annotated_param": orig_param, "is_marked": orig_marked, "annotated_as": orig_ann,
                 "possible_reads": orig_possible, "read_record": orig_record,
                 "searched_for_possible": orig_searched, "tool_result_index": orig_tr_index,
                 "is_possible_alias": orig_alias, "aliased_value": orig_aliased,
                 "binding_scopes": orig_binding_scopes,
                 "dispatch_keywords": orig_kws, "dispatch_test": orig_test, "_exclusion_walk": orig_walk,
                 "excluded": orig_excluded, "narrowed_keys": orig_narrowed,
                 "escaping_producers": orig_escaping, "escape_origins": orig_esc_origins,
                 "escape_target": orig_esc_target, "is_value_use": orig_value_use, "escape_reads": orig_esc_reads,
                 "renamed_use": orig_renamed, "wrapped_use": orig_wrapped,
                 "kept_call_use": orig_kept_call, "LOOKING_BUILTINS": orig_looking,
                 "handed_on": orig_handed, "kept_names": orig_kept, "handed_on_reads": orig_handed_reads,
                 "sequence_names": orig_seq_names, "sequence_binding": orig_seq_binding,
                 "seen_statement": orig_seen, "sequence_seen": orig_seq_seen, "sequence_kept": orig_seq_kept,
                 "statement_call": orig_stmt_call, "stands_in": orig_stands, "assertion_message": orig_msg,
                 "annotation_nodes": orig_ann_nodes, "instance_attribute": orig_instance_attr,
                 "unresolved_reads": orig_unres_reads, "unresolved_name": orig_unres_name,
                 "unresolved_use_reads": orig_use_reads, "unresolved_use_name": orig_use_name,
                 "unresolved_target": orig_unres_target, "unresolved_span": orig_unres_span,
                 "external_import": orig_external, "project_module": orig_project_module,
                 "callee_binding": orig_callee_binding,
                 "decorator_reads": orig_deco_reads, "is_exempt_decorator": orig_exempt,
                 "checking_call": orig_checking_call, "checking_params": orig_checking_params,
                 "checked_use": orig_checked_use}
    for name, attr, fn in setters:
        yield name, (lambda attr=attr, fn=fn: setattr(scan, attr, fn)), \
            (lambda attr=attr: setattr(scan, attr, originals[attr]))
    for name, fns in where_multi:
        yield name, (lambda fns=fns: [setattr(scan, a, f) for a, f in fns.items()]), \
            (lambda fns=fns: [setattr(scan, a, originals[a]) for a in fns])
    for name, attr, fn in flow_setters:
        yield name, (lambda attr=attr, fn=fn: setattr(scan.Flow, attr, fn)), \
            (lambda attr=attr: setattr(scan.Flow, attr, orig_flow[attr]))


def main(argv):
    keep = None
    want_mutants = False
    it = iter(argv)
    for a in it:
        if a == "--keep":
            keep = next(it)
        elif a == "--mutants":
            want_mutants = True
        else:
            sys.stderr.write("usage: reads_selftest.py [--keep DIR] [--mutants]\n")
            return 2
    with tempfile.TemporaryDirectory(prefix="reads-selftest-") as tmp:
        base = keep or tmp
        os.makedirs(base, exist_ok=True)
        problems, log = run_all(base, run_cli)
        for line in log:
            sys.stderr.write("  " + line + "\n")
        if want_mutants:
            sys.path.insert(0, HERE)
            sys.dont_write_bytecode = True  # leave no __pycache__ next to scan.py
            import scan  # noqa: E402
            # the unbroken in-process run must pass too, or the mutants prove nothing
            p0, _ = run_all(base, lambda root, extra: run_inprocess(scan, root, extra))
            if p0:
                problems.append("in-process run (no mutant) fails: %s" % p0[:3])
            for name, install, uninstall in mutants(scan):
                install()
                try:
                    p, _ = run_all(base, lambda root, extra: run_inprocess(scan, root, extra))
                finally:
                    uninstall()
                if p:
                    sys.stderr.write("  mutant %r caught (%d problems)\n" % (name, len(p)))
                else:
                    problems.append("mutant %r not caught: the self-test cannot fail on it" % name)
    if problems:
        sys.stderr.write("reads self-test: FAIL\n")
        for p in problems:
            sys.stderr.write("  - %s\n" % p)
        return 1
    sys.stderr.write("reads self-test: OK (%d projects)\n" % len(CASES))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
