#!/usr/bin/env python3
"""Generator of runnable programs whose consumers read the keys a fix moves.

Usage:
    python3 tests/reference/gen_read_exec.py --seed S --programs N --out DIR
                                             [--exclude-kinds KIND,KIND...]

Writes DIR/prog_NNNN/ (a project of its own: an empty `pyproject.toml`, a
package `app`, a package `tests` of consumers and a `main.py`) and, next to
each, DIR/prog_NNNN.manifest.json describing every read the consumers make.
Stdlib only; written from docs/rules.md ("Reads of moved keys", "Rewriting
reads") and the README, without looking at toolshape's code.

The producers (app/m1.py .. app/m3.py, app/dispatch.py, app/tools.py) cover
the shapes of docs/rules.md "Rewriting reads":

  * `lit`: returns of dict displays with extra top-level keys, one or two
    returns chosen by the arguments (`if flag:` / `if n > 2:`), content a list
    display or a local list variable;
  * `lit_json`: the content list already ends with a json block (merged into);
    `lit_json_adv`: that block already holds a key other results move;
  * `writes`: a result name bound to a display, then write statements
    (`r["k"] = v`, `r.update(k=v)`, `r.update({"k": v})`, `r |= {...}`), some
    under `if flag:` / `if n > 2:`, sometimes an early `return r`, then
    `return r`; `writes_var` with a content variable; `writes_json` with a
    display whose content ends with a json block; `writes_dup` writing one key
    twice (or over a key of the display);
  * `try_with`: the last statement a `try` / `try`-`finally` / `with` /
    `if`-`else` whose every branch returns;
  * `build`: calls of result builders (app/results.py: `def ok(text,
    **extra)` with `**extra` spread in the display, `payload.update(extra)`,
    `payload.update(**extra)`, `payload |= extra`, an items loop, a content
    variable, a chain `def fail(msg, **kw): return err(msg, **kw)`, a builder
    with a constant extra key of its own) with keyword extras, sometimes none;
  * `chain`: a function returning another producer's call (same module or
    another, through every import style);
  * `clean`: sometimes returns a clean result (no extra key); `clean_json`: the
    clean result's content ends with a json block of keys nobody moves;
    `clean_json_adv`: the clean result's json block holds a key that other
    results move (before the fix `r.get("k")` is None on it);
  * `falloff`: a function that can fall off its end (returns None);
  * dispatchers `def d(action, **kw): if action == "a": return h_a(...) ...`
    (sequential `if`s, `if/elif/else`, nested conditions, `"a" == action`,
    `action in (...)`, `match`, a rebound `action`, a guard `and flag`, an
    `if action == "a":` without a return), with a default return
    (an error builder call with `supported=[...]`, a clean result, a `raise`,
    or falling off the end);
  * `@tool` / `@tool()` functions (a local no-op decorator that registers
    them) called through a stub agent, `agent.tool.NAME(...)`.

The consumers (tests/test_*.py) call the producers with various arguments
(dispatch constants `action="a"`, an unknown constant, a variable action,
positional actions) as direct call reads (`f(...)["k"]`) and through a name
bound once (`r = f(...)`) or bound in sequence (`r2 = f(...)`, reads,
`r2 = g(...)`, reads: each binding's reads are its own call's; as a decoy the
second binding under `if flag:`, no receiver then), and read moved keys, keys some results lack and
keys nobody moves in every keyed form (`r["k"]`, `.get`, `.get(k, d)`, `in`,
`not in`, `.pop`, `.pop(k, d)`, `.setdefault`, `r["k"] = v`, `r["k"] += v`,
`del r["k"]`), plus some whole-result, content and block reads (`dict(r)`,
`len(r["content"])`, `r["content"][0]`).  Some name blocks carry assertions
whose message loads the name (docs/rules.md "**Assertion messages.**"): in
the forms that leave it exclusive (`r`, `(r)`, `f"{r}"`, `f"{r!r}"`,
`f"{r=}"`, `f"{(r)}"`, `f"x{r}" "y"`, a format spec), in forms that pass it
on (`str(r)`, `(r, 1)`, `f"{0:{r}}"`, a nested f-string...), or with a keyed
read of it in a field (`f"{r['k']}"`), the test loading no name, reading a
key (`(r.get("k")) is not None or True`: it never fails unless the read
raises), the name itself, or failing (the message then evaluated before and
after the fix alike; it holds no read); a binding may be seen by such an
assertion alone.  Some blocks hand the result to a checking function
of the consumer module (docs/rules.md "**Results handed to a checking
function.**": a module-level `def chk_N(r)` whose parameter is only read,
named in assertion messages or returned): status-only ones (`status`,
`toolUseId`, `r["content"][0]`, never failing: the receiver stays exclusive)
or ones reading a moved key of the target by subscript (a KeyError once it
has moved: the receiver is not exclusive, and a read through it marked
rewritable would log something else after the fix), passing the result
through or not, as `c = chk(C)`, `c = C; chk(c)`, `c = C; c = chk(c)` (in
sequence), `c = chk(chk2(C))`, `c = C; x = [chk(c)]` (handed on: nothing
rewritten), then reads of c, or reads of `chk(C)` itself.  Mutations are followed by further
reads.  Each read is its own statement, on one line, in the consumer
function's own scope:

    try:
        LOG.append(("L17", "v", _v(r.get("k", 0))))
    except Exception as e:
        LOG.append(("L17", "x", type(e).__name__))

(a statement read: `r["k"] = 1; LOG.append(("L18", "v", "ok"))`).  `_v`
turns a value into JSON text at once, so a later mutation cannot change what
was logged.  Every consumer module has `run()` calling its cases with
several argument tuples and returning LOG; `main.py` prints every LOG as JSON.
The label's line is the one holding `LOG.append(("Lnn", "v"`.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys

KINDS = [
    "lit", "lit_var", "lit_json", "lit_json_adv", "writes", "writes_var", "writes_json", "writes_dup",
    "build", "chain", "try_with",
    "clean", "clean_json", "clean_json_adv", "falloff",
]
KIND_WEIGHTS = {
    "lit": 10, "lit_var": 4, "lit_json": 4, "lit_json_adv": 2, "writes": 12, "writes_var": 4,
    "writes_json": 3, "writes_dup": 3, "build": 12,
    "chain": 7, "clean": 4, "clean_json": 3, "clean_json_adv": 2, "falloff": 2, "try_with": 4,
}
DISPATCH_FORMS = ["seq", "elif", "nested", "reversed", "in_test", "match", "rebound", "guard", "fallthrough"]
DISPATCH_DEFAULTS = ["err", "err", "clean", "raise", "falloff", "ok_extra"]
KEY_POOL = [
    "frames", "errors", "count", "width", "height", "depth", "serial", "locked",
    "code", "items", "path", "owner", "score", "rate", "elapsed", "retries",
    "device", "battery", "pose", "hz",
]
TYPES = ["int", "int", "int", "str", "list", "bool", "none"]
ACTIONS = ["list", "lock", "shell", "probe", "scan", "reset", "sync"]
BUILDER_FORMS = ["spread", "update", "update_star", "ior", "loop", "content_var", "note"]


class Module:
    """One generated module: its import lines and body chunks."""

    def __init__(self, rel: str, relpkg: str | None):
        self.rel = rel
        self.relpkg = relpkg  # the package for relative imports, or None
        self.imports: list[str] = []
        self.body: list[str] = []

    def imp(self, line: str):
        if line not in self.imports:
            self.imports.append(line)

    def text(self, doc: str) -> str:
        out = [f'"""{doc}"""', ""]
        out.extend(self.imports)
        if self.imports:
            out.append("")
        for chunk in self.body:
            out.append("")
            out.append(chunk.rstrip("\n"))
            out.append("")
        return "\n".join(out).rstrip("\n") + "\n"


class Program:
    def __init__(self, seed: int, index: int, exclude=()):
        self.rng = random.Random(f"read-exec:{seed}:{index}")
        self.index = index
        self.exclude = set(exclude)
        self.n = 0
        self.label = 0
        self.reads: list[dict] = []
        self.keys = self.rng.sample(KEY_POOL, 12)
        self.ktype = {k: self.rng.choice(TYPES) for k in self.keys}
        self.modules: dict[str, Module] = {}
        self.producers: list[dict] = []
        self.builders: list[dict] = []
        self.dispatchers: list[dict] = []
        self.tools: list[dict] = []
        self.lead: dict[str, str] = {}  # a checking function -> the arguments before the result's
        self.build()

    # -- helpers ---------------------------------------------------------

    def fresh(self) -> int:
        self.n += 1
        return self.n

    def mod(self, name: str) -> Module:
        if name not in self.modules:
            if name.startswith("tests/"):
                self.modules[name] = Module(name, None)
            else:
                self.modules[name] = Module(f"app/{name}.py", "app")
        return self.modules[name]

    def value(self, key: str, in_func=True) -> str:
        t = self.ktype.get(key, "int")
        r = self.rng.random()
        m = self.fresh()
        if t == "int":
            if in_func and r < 0.4:
                return "n"
            if in_func and r < 0.7:
                return f"n * {m % 5 + 2}"
            return str(m)
        if t == "str":
            if in_func and r < 0.4:
                return f'f"{key}-{{n}}"'
            return f'"{key}{m}"'
        if t == "list":
            if in_func and r < 0.5:
                return f"[n, {m}]"
            return f'[{m}, "e{m}"]'
        if t == "bool":
            if in_func and r < 0.4:
                return "flag"
            if in_func and r < 0.6:
                return "n > 2"
            return self.rng.choice(["True", "False"])
        return "None"

    def pick_keys(self, k: int, avoid=()) -> list[str]:
        pool = [x for x in self.keys if x not in avoid]
        return self.rng.sample(pool, min(k, len(pool)))

    def text_block(self, word: str) -> str:
        if self.rng.random() < 0.5:
            return f'{{"text": "{word} {self.fresh()}"}}'
        return f'{{"text": f"{word} {{n}}"}}'

    def status(self) -> str:
        return self.rng.choice(['"success"', '"success"', '"error"', '"degraded"'])

    def ref(self, where: Module, target: dict) -> str:
        """The callee text for calling producer `target` from module `where`
        (adding the import it needs)."""
        tmod = target["module"]
        name = target["name"]
        if where.rel == self.mod(tmod).rel:
            return name
        style = self.rng.choice(["from_rel", "from_abs", "from_pkg", "import_as", "from_abs_as"])
        if style == "from_rel" and where.relpkg is None:
            style = "from_abs"
        if style == "from_rel":
            where.imp(f"from .{tmod} import {name}")
            return name
        if style == "from_abs":
            where.imp(f"from app.{tmod} import {name}")
            return name
        if style == "from_abs_as":
            alias = f"{name}_{where.rel.split('/')[-1][:-3]}"
            where.imp(f"from app.{tmod} import {name} as {alias}")
            return alias
        if style == "from_pkg":
            where.imp(f"from app import {tmod}")
            return f"{tmod}.{name}"
        where.imp(f"import app.{tmod} as mod_{tmod}")
        return f"mod_{tmod}.{name}"

    # -- builders --------------------------------------------------------

    def gen_builders(self):
        m = self.mod("results")
        forms = ["spread", "update"] + self.rng.sample(BUILDER_FORMS[2:], self.rng.randint(1, 4))
        forms = list(dict.fromkeys(forms))
        names = ["ok", "err", "warn", "done", "reply", "emit", "answer"]
        for i, form in enumerate(forms):
            name = names[i]
            status = '"error"' if name == "err" else self.rng.choice(['"success"', '"success"', '"degraded"'])
            kw = self.rng.choice(["extra", "kw", "fields"])
            if form == "spread":
                body = f'    return {{"status": {status}, "content": [{{"text": text}}], **{kw}}}\n'
            elif form == "content_var":
                body = (f'    content = [{{"text": text}}]\n'
                        f'    return {{"status": {status}, "content": content, **{kw}}}\n')
            elif form == "note":
                body = (f'    out = {{"status": {status}, "content": [{{"text": text}}], **{kw}}}\n'
                        f'    return out\n')
            else:
                body = f'    payload = {{"status": {status}, "content": [{{"text": text}}]}}\n'
                if form == "update":
                    body += f"    payload.update({kw})\n"
                elif form == "update_star":
                    body += f"    payload.update(**{kw})\n"
                elif form == "ior":
                    body += f"    payload |= {kw}\n"
                elif form == "loop":
                    body += f"    for k, v in {kw}.items():\n        payload[k] = v\n"
                body += "    return payload\n"
            m.body.append(f"def {name}(text, **{kw}):\n    # builder form: {form}\n{body}")
            self.builders.append({"name": name, "form": form, "own": [], "chain": None})
        # a chain of a builder
        if self.rng.random() < 0.6:
            target = self.rng.choice(self.builders)
            m.body.append(f"def fail(text, **kw):\n    # builder form: chain of {target['name']}\n"
                          f"    return {target['name']}(text, **kw)\n")
            self.builders.append({"name": "fail", "form": "chain", "own": [], "chain": target["name"]})
        # a builder with a constant extra key of its own
        if self.rng.random() < 0.4:
            key = self.rng.choice(self.keys)
            m.body.append(f"def tagged(text, **extra):\n    # builder form: spread with an own key\n"
                          f'    return {{"status": "success", "content": [{{"text": text}}], '
                          f'"{key}": {self.value(key, in_func=False)}, **extra}}\n')
            self.builders.append({"name": "tagged", "form": "own", "own": [key], "chain": None})

    def builder_call(self, where: Module, keys: list[str], builder=None) -> str:
        b = builder or self.rng.choice(self.builders)
        r = self.rng.random()
        if r < 0.5 or where.rel == "app/results.py":
            if where.rel != "app/results.py":
                where.imp(f"from app.results import {b['name']}" if where.relpkg is None or r < 0.25
                          else f"from .results import {b['name']}")
            callee = b["name"]
        elif r < 0.75:
            where.imp("from app import results")
            callee = f"results.{b['name']}"
        else:
            where.imp("import app.results as res")
            callee = f"res.{b['name']}"
        args = [f'f"{b["name"]} {{n}}"']
        for k in keys:
            args.append(f"{k}={self.value(k)}")
        if self.rng.random() < 0.04:
            args.append('status="error"')  # a call reason: the builder's fix is unsafe
        return f"{callee}({', '.join(args)})"

    # -- basic producers ---------------------------------------------------

    def display(self, keys, content="list", pre=None, status=None) -> str:
        status = status or self.status()
        blocks = [self.text_block("t")]
        if pre is not None:
            inner = ", ".join(f'"{k}": {v}' for k, v in pre)
            blocks.append(f'{{"json": {{{inner}}}}}')
        cont = "content" if content == "var" else f"[{', '.join(blocks)}]"
        entries = [f'"status": {status}', f'"content": {cont}']
        entries += [f'"{k}": {self.value(k)}' for k in keys]
        return "{" + ", ".join(entries) + "}"

    def content_var(self, pre=None) -> str:
        blocks = [self.text_block("t")]
        if pre is not None:
            inner = ", ".join(f'"{k}": {v}' for k, v in pre)
            blocks.append(f'{{"json": {{{inner}}}}}')
        return f"    content = [{', '.join(blocks)}]\n"

    def cond(self) -> str:
        return self.rng.choice(["flag", "n > 2", "not flag", "n == 1"])

    def gen_producer(self, module: str, kind: str) -> dict:
        m = self.mod(module)
        name = f"f{len(self.producers) + 1}"
        keys: set[str] = set()
        reaches: set[str] = {kind}  # the producer kinds whose results it may return
        lines = [f"def {name}(n, flag=False):", f"    # producer kind: {kind}"]
        if kind in ("lit", "lit_var", "lit_json", "lit_json_adv"):
            var = kind == "lit_var"
            pre = None
            if kind == "lit_json":
                pre = [("pre", str(self.fresh()))]
            if kind == "lit_json_adv":
                # the json block already holds a key that results move
                pre = [(self.rng.choice(self.keys), str(self.fresh()))]
            nret = self.rng.choice([1, 2, 2, 3])
            for i in range(nret):
                ks = self.pick_keys(self.rng.randint(1, 3))
                keys.update(ks)
                ind = "    "
                if i < nret - 1:
                    lines.append(f"    if {self.cond()}:")
                    ind = "        "
                if var:
                    lines.append(ind + self.content_var(pre).strip())
                lines.append(f"{ind}return {self.display(ks, 'var' if var else 'list', pre)}")
        elif kind in ("writes", "writes_var", "writes_json", "writes_dup"):
            var = kind == "writes_var"
            own = self.pick_keys(self.rng.choice([0, 0, 1, 2]))
            keys.update(own)
            pre = None
            if kind == "writes_json":
                pre = [("pre", str(self.fresh()))]
            if var:
                lines.append(self.content_var(pre).rstrip("\n"))
            lines.append(f"    r = {self.display(own, 'var' if var else 'list', pre)}")
            nw = self.rng.randint(1, 4)
            if kind == "writes_dup":
                nw = max(nw, 2 - (1 if own else 0))
            early = self.rng.random() < 0.2
            used = set(own)
            dup_at = self.rng.randint(0 if own else 1, nw - 1) if kind == "writes_dup" else -1
            for i in range(nw):
                if early and i == nw // 2:
                    lines.append(f"    if {self.cond()}:")
                    lines.append("        return r")
                ks = self.pick_keys(self.rng.choice([1, 1, 2]), avoid=used)
                if i == dup_at:
                    # the same key written again (or written over a key of the display)
                    ks[0] = self.rng.choice(sorted(used))
                used.update(ks)
                keys.update(ks)
                form = self.rng.choices(["sub", "upd_kw", "upd_dict", "ior"], [5, 3, 3, 1])[0]
                if form == "sub" or len(ks) == 0:
                    stmt = f'r["{ks[0]}"] = {self.value(ks[0])}'
                elif form == "upd_kw":
                    stmt = "r.update(" + ", ".join(f"{k}={self.value(k)}" for k in ks) + ")"
                elif form == "upd_dict":
                    stmt = "r.update({" + ", ".join(f'"{k}": {self.value(k)}' for k in ks) + "})"
                else:
                    stmt = "r |= {" + ", ".join(f'"{k}": {self.value(k)}' for k in ks) + "}"
                if self.rng.random() < 0.35:
                    lines.append(f"    if {self.cond()}:")
                    lines.append(f"        {stmt}")
                else:
                    lines.append(f"    {stmt}")
            lines.append("    return r")
        elif kind == "build":
            nret = self.rng.choice([1, 2, 2, 3])
            for i in range(nret):
                nk = self.rng.choice([1, 1, 2, 3]) if self.rng.random() > 0.12 else 0
                ks = self.pick_keys(nk)
                keys.update(ks)
                b = self.rng.choice(self.builders)
                keys.update(b["own"])
                ind = "    "
                if i < nret - 1:
                    lines.append(f"    if {self.cond()}:")
                    ind = "        "
                lines.append(f"{ind}return {self.builder_call(m, ks, b)}")
        elif kind == "chain":
            earlier = [p for p in self.producers if p["sig"] == "nf"]
            if not earlier:
                return self.gen_producer(module, "lit")
            nret = self.rng.choice([1, 1, 2])
            for i in range(nret):
                t = self.rng.choice(earlier)
                keys.update(t["keys"])
                reaches.update(t["reaches"])
                ind = "    "
                if i < nret - 1:
                    lines.append(f"    if {self.cond()}:")
                    ind = "        "
                args = self.rng.choice(["n, flag", "n + 1, flag", "n, not flag", "n", "2, flag"])
                lines.append(f"{ind}return {self.ref(m, t)}({args})")
        elif kind in ("clean", "clean_json", "clean_json_adv"):
            ks = self.pick_keys(self.rng.randint(1, 3))
            keys.update(ks)
            if kind == "clean":
                clean = '{"status": "success", "content": [{"text": "nothing"}]}'
            elif kind == "clean_json":
                clean = f'{{"status": "success", "content": [{{"text": "nothing"}}, {{"json": {{"pre": {self.fresh()}}}}}]}}'
            else:
                k = self.rng.choice(ks)
                clean = (f'{{"status": "success", "content": [{{"text": "nothing"}}, '
                         f'{{"json": {{"{k}": {self.value(k, in_func=False)}}}}}]}}')
            lines.append(f"    if {self.cond()}:")
            if self.rng.random() < 0.5:
                lines.append(f"        return {clean}")
                lines.append(f"    return {self.display(ks)}")
            else:
                lines.append(f"        return {self.display(ks)}")
                lines.append(f"    return {clean}")
        elif kind == "try_with":
            # every branch of the last statement returns: the shapes stay known
            ka, kb = self.pick_keys(self.rng.randint(1, 2)), self.pick_keys(self.rng.randint(1, 2))
            keys.update(ka + kb)
            v = self.rng.choice(["try", "with", "ifelse", "try_finally"])
            if v == "try":
                lines += ["    try:", f"        if n > 4:", "            raise ValueError(n)",
                          f"        return {self.display(ka)}", "    except ValueError:",
                          f"        return {self.display(kb)}"]
            elif v == "try_finally":
                lines += ["    try:", f"        return {self.display(ka)}", "    finally:", "        n = 0"]
            elif v == "with":
                m.imp("import contextlib")
                lines += ["    with contextlib.nullcontext():", f"        if {self.cond()}:",
                          f"            return {self.display(ka)}", f"        return {self.display(kb)}"]
            else:
                lines += [f"    if {self.cond()}:", f"        return {self.display(ka)}", "    else:",
                          f"        return {self.display(kb)}"]
        elif kind == "falloff":
            ks = self.pick_keys(self.rng.randint(1, 2))
            keys.update(ks)
            lines.append(f"    if {self.cond()}:")
            lines.append(f"        return {self.display(ks)}")
            if self.rng.random() < 0.5:
                lines.append("    elif n > 3:")
                lines.append(f"        return {self.builder_call(m, ks[:1])}")
        else:
            raise AssertionError(kind)
        p = {"name": name, "module": module, "sig": "nf", "keys": sorted(keys), "kind": kind,
             "reaches": sorted(reaches)}
        m.body.append("\n".join(lines) + "\n")
        self.producers.append(p)
        return p

    # -- dispatchers and tools ----------------------------------------------

    def gen_dispatcher(self, module: str, name: str, decorator: str | None = None) -> dict:
        m = self.mod(module)
        handlers = [p for p in self.producers if p["sig"] == "nf"]
        plain = [p for p in handlers if p["kind"] in ("lit", "lit_var", "lit_json", "writes")]

        def handler():
            # mostly handlers whose results toolshape can shape, so that
            # narrowing by the constant matters
            if plain and self.rng.random() < 0.6:
                return self.rng.choice(plain)
            return self.rng.choice(handlers)
        acts = self.rng.sample(ACTIONS, self.rng.randint(2, 4))
        form = self.rng.choice(DISPATCH_FORMS)
        default = self.rng.choice(DISPATCH_DEFAULTS)
        if form == "match" and default == "falloff":
            default = "err"
        lines = []
        if decorator:
            lines.append(decorator)
        nexpr, fexpr = "n", "flag"
        if decorator:
            lines.append(f'def {name}(action="{acts[0]}", n=1, flag=False):')
        else:
            lines.append(f"def {name}(action, **kw):")
        lines.append(f"    # dispatcher form: {form}, default: {default}")
        keys: set[str] = set()
        per_action: dict[str, list[str]] = {}

        reaches: set[str] = set()

        def call_of(h):
            keys.update(h["keys"])
            reaches.update(h["reaches"])
            return f"{self.ref(m, h)}({nexpr}, {fexpr})"

        if not decorator:
            lines.append('    n = kw.get("n", 1)')
            lines.append('    flag = kw.get("flag", False)')
        if form == "rebound":
            lines.append("    action = action.strip()")
        if form == "match":
            lines.append("    match action:")
            for a in acts:
                h = handler()
                lines.append(f'        case "{a}":')
                lines.append(f"            return {call_of(h)}")
            lines.append("        case _:")
            ind = "            "
        else:
            for i, a in enumerate(acts):
                h = handler()
                test = f'action == "{a}"'
                if form == "reversed":
                    test = f'"{a}" == action'
                if form == "guard" and i == 0:
                    test = f'action == "{a}" and {fexpr}'
                if form == "in_test" and i == 0 and len(acts) > 2:
                    test = f'action in ("{a}", "{acts[1]}")'
                kwd = "elif" if (form == "elif" and i > 0) else "if"
                lines.append(f"    {kwd} {test}:")
                if form == "fallthrough" and i == 0:
                    # no return: every later return can run for this action
                    lines.append("        n = n + 1")
                    continue
                if form == "nested" and i == 0:
                    h2 = handler()
                    lines.append(f"        if {fexpr}:")
                    lines.append(f"            return {call_of(h2)}")
                lines.append(f"        return {call_of(h)}")
            ind = "    "
            if form == "elif" and default != "falloff":
                lines.append("    else:")
                ind = "        "
        supported = "[" + ", ".join(f'"{a}"' for a in acts) + "]"
        if default == "err":
            lines.append(f'{ind}return err(f"unknown action {{action}}", supported={supported})')
            if m.rel != "app/results.py":
                m.imp("from app.results import err")
            keys.add("supported")
        elif default == "ok_extra":
            k = self.rng.choice(self.keys)
            keys.add(k)
            lines.append(f"{ind}return {self.builder_call(m, [k])}")
        elif default == "clean":
            lines.append(f'{ind}return {{"status": "error", "content": [{{"text": f"unknown {{action}}"}}]}}')
        elif default == "raise":
            lines.append(f'{ind}raise ValueError(f"unknown action {{action}}")')
        else:
            if form == "match":
                lines.append(f"{ind}pass")
        d = {"name": name, "module": module, "sig": "tool" if decorator else "disp",
             "keys": sorted(keys), "kind": f"dispatch:{form}:{default}", "actions": acts,
             "tool": bool(decorator), "reaches": sorted(reaches)}
        m.body.append("\n".join(lines) + "\n")
        return d

    def gen_tools(self):
        m = self.mod("tools")
        m.body.append(
            "REGISTRY = {}\n\n\n"
            "def tool(fn=None, **options):\n"
            "    \"\"\"A local stand-in for strands.tool: registers the function, returns it.\"\"\"\n"
            "    if fn is None:\n"
            "        return lambda f: tool(f)\n"
            "    REGISTRY[fn.__name__] = fn\n"
            "    return fn\n\n\n"
            "class _ToolCaller:\n"
            "    def __getattr__(self, name):\n"
            "        return REGISTRY[name]\n\n\n"
            "class Agent:\n"
            "    def __init__(self):\n"
            "        self.tool = _ToolCaller()\n\n\n"
            "agent = Agent()\n")
        for i in range(self.rng.randint(1, 3)):
            name = ["adb", "camera", "motor"][i]
            deco = self.rng.choice(["@tool", "@tool", "@tool()"])
            if self.rng.random() < 0.7:
                t = self.gen_dispatcher("tools", name, deco)
            else:
                # a plain tool body: writes or literal
                kind = self.rng.choice(["lit", "writes", "build"])
                p = self.gen_producer("tools", kind)
                # rename into a tool: wrap
                body = m.body.pop()
                body = body.replace(f"def {p['name']}(n, flag=False):", f'{deco}\ndef {name}(action="go", n=1, flag=False):')
                m.body.append(body)
                self.producers.pop()
                t = {"name": name, "module": "tools", "sig": "tool", "keys": p["keys"],
                     "kind": f"tool:{kind}", "actions": ["go"], "tool": True, "reaches": p["reaches"]}
            self.tools.append(t)

    # -- consumers -------------------------------------------------------

    def next_label(self) -> str:
        self.label += 1
        return f"L{self.label}"

    def read_expr(self, recv: str, form: str, key: str, named: bool):
        """(kind, code) of one read: kind "expr" (logged value) or "stmt"."""
        t = self.ktype.get(key, "int")
        d = self.rng.choice(["0", "None", '"d"', "[]", "-1"])
        if form == "subscript":
            return "expr", f'{recv}["{key}"]'
        if form == "get":
            return "expr", f'{recv}.get("{key}")'
        if form == "get_d":
            return "expr", f'{recv}.get("{key}", {d})'
        if form == "in":
            return "expr", f'"{key}" in {recv}'
        if form == "not_in":
            return "expr", f'"{key}" not in {recv}'
        if form == "pop":
            return "expr", f'{recv}.pop("{key}")'
        if form == "pop_d":
            return "expr", f'{recv}.pop("{key}", {d})'
        if form == "setdefault":
            return "expr", f'{recv}.setdefault("{key}", {d})'
        if form == "store":
            return "stmt", f'{recv}["{key}"] = {self.value(key, in_func=False)}'
        if form == "aug":
            inc = {"int": "1", "str": '"+"', "list": "[0]"}.get(t, "1")
            return "stmt", f'{recv}["{key}"] += {inc}'
        if form == "delete":
            return "stmt", f'del {recv}["{key}"]'
        raise AssertionError(form)

    WHOLE = ["dict({r})", "list({r}.keys())", "list({r}.items())", "list({r}.values())",
             "json.dumps({r})", "{{**{r}}}"]
    CONTENT = ['len({r}["content"])', '{r}["content"]', '{r}["content"][-1]',
               '{r}["content"] == [{{"text": "x"}}]']
    BLOCK = ['{r}["content"][0]', '{r}["content"][0]["text"]', '{r}["content"][1]']
    FORMS = ["subscript", "subscript", "get", "get_d", "get_d", "in", "not_in", "pop", "pop_d",
             "setdefault", "store", "aug", "delete"]
    DIRECT_FORMS = ["subscript", "subscript", "get", "get_d", "in", "not_in", "pop", "pop_d",
                    "setdefault", "store", "delete"]
    # assertion messages (docs/rules.md "**Assertion messages.**"): `assert T, M`
    # with M loading the name; kept forms leave the name exclusive (its reads
    # rewritten), the others pass it on.  T never fails but for "fail" (M is
    # then evaluated, before and after the fix alike: no reads in it)
    MSG_KEPT = ["{r}", "({r})", 'f"got {{{r}}}"', 'f"{{{r}!r}}"', 'f"{{{r}=}}"', 'f"{{({r})}}"',
                'f"x {{{r}}}" " y"', '"y " f"{{{r}!s}}"', 'f"{{{r}:>8}}"', 'f"{{{r}}} / {{{r}!r}}"']
    MSG_PASSED = ["str({r})", "({r}, 1)", 'f"{{0:{{{r}}}}}"', '{r} or "none"', 'f"{{{r}}}" + "x"', "[{r}]",
                  'f"{{str({r})}}"', "f\"{{f'{{{r}}}'}}\""]
    # keyed reads of the name in a field of the message (never evaluated here)
    MSG_READS = ["f\"{{{r}['{k}']}}\"", "f\"{{{r}.get('{k}')}}\"", "f\"{{'{k}' in {r}}}\"",
                 "f\"{{{r}!r}} {{{r}['{k}']}}\""]
    ASSERT_TESTS = ["true", "read", "read", "fail", "bare"]
    ASSERT_READ_FORMS = ["subscript", "get", "get_d", "in", "not_in"]

    def assert_code(self, rname: str, test: str, key: str) -> tuple[str, str]:
        """(code, message kind) of `assert T, M` loading the name ``rname``."""
        rng = self.rng
        r = rng.random()
        if test in ("fail", "bare") or r < 0.5:
            kind, msg = "kept", rng.choice(self.MSG_KEPT).format(r=rname)
        elif r < 0.8:
            kind, msg = "passed", rng.choice(self.MSG_PASSED).format(r=rname)
        else:
            kind, msg = "read", rng.choice(self.MSG_READS).format(r=rname, k=key)
        if test == "true":
            t = rng.choice(["n >= 0", "flag or not flag", "act is not None"])
        elif test == "fail":
            t = rng.choice(["n < 0", "flag and not flag"])
        elif test == "bare":
            t = rname
        else:
            _, t = self.read_expr(rname, rng.choice(self.ASSERT_READ_FORMS), key, True)
            t = f"({t}) is not None or True"
        return f"assert {t}, {msg}", kind

    def emit(self, out: list[str], ind: str, kind: str, code: str, info: dict):
        lab = self.next_label()
        if kind == "expr":
            out.append(f"{ind}try:")
            out.append(f'{ind}    LOG.append(("{lab}", "v", _v({code})))')
        else:
            out.append(f"{ind}try:")
            out.append(f'{ind}    {code}; LOG.append(("{lab}", "v", "ok"))')
        out.append(f"{ind}except Exception as e:")
        out.append(f'{ind}    LOG.append(("{lab}", "x", type(e).__name__))')
        info = dict(info, label=lab, code=code)
        self.reads.append(info)

    def call_text(self, where: Module, target: dict, case_params: list[str]) -> tuple[str, str]:
        """A call of `target` from a consumer: (text, how)."""
        sig = target["sig"]
        if sig == "nf":
            callee = self.ref(where, target)
            args = self.rng.choice(["n, flag", "n", "n, flag=flag", "3", "1, True", "n + 1, not flag", "0"])
            return f"{callee}({args})", "call"
        if sig == "disp":
            callee = self.ref(where, target)
            r = self.rng.random()
            acts = target["actions"]
            if r < 0.55:
                a = self.rng.choice(acts)
                extra = self.rng.choice(["", ", n=n", ", n=n, flag=flag", ", flag=True", ", n=2"])
                return f'{callee}(action="{a}"{extra})', f"const:{a}"
            if r < 0.65:
                return f'{callee}(action="nope", n=n)', "const:nope"
            if r < 0.85:
                return f"{callee}(act, n=n)", "var"
            a = self.rng.choice(acts)
            return f'{callee}("{a}", n=n)', "positional"
        # a tool
        r = self.rng.random()
        acts = target["actions"]
        via_agent = r < 0.75
        if via_agent:
            where.imp("from app.tools import agent")
            callee = f"agent.tool.{target['name']}"
        else:
            callee = self.ref(where, target)
        rr = self.rng.random()
        if rr < 0.6:
            a = self.rng.choice(acts)
            extra = self.rng.choice(["", ", n=n", ", n=n, flag=flag", ", flag=True"])
            return f'{callee}(action="{a}"{extra})', f"tool-const:{a}"
        if rr < 0.7:
            return f'{callee}(action="nope")', "tool-const:nope"
        return f"{callee}(action=act, n=n)", "tool-var"

    def builder_target(self) -> dict:
        b = self.rng.choice(self.builders)
        ks = self.pick_keys(self.rng.randint(0, 2))
        return {"name": b["name"], "module": "results", "sig": "builder", "keys": sorted(set(ks) | set(b["own"])),
                "extras": ks, "kind": f"builder:{b['form']}", "builder": b}

    def keys_for(self, target: dict) -> list[str]:
        tk = list(target["keys"]) or [self.rng.choice(self.keys)]
        out = []
        for _ in range(self.rng.randint(2, 6)):
            r = self.rng.random()
            if r < 0.78:
                out.append(self.rng.choice(tk))
            elif r < 0.9:
                out.append(self.rng.choice(self.keys))
            else:
                out.append(self.rng.choice(["status", "missing", "toolUseId"]))
        return out

    # checking functions (docs/rules.md "**Results handed to a checking
    # function.**"): module-level defs of the consumer module whose parameter
    # is only read, named in assertion messages or returned.  Status-only
    # ones (`status`, `toolUseId`, `r["content"][0]`: never failing) leave
    # the receiver exclusive, so the reads through the result they pass on
    # are rewritten and compared; ones reading a moved key (by subscript:
    # a KeyError once the key has moved) leave it not exclusive: a read
    # through it marked rewritable would then log something else after the fix
    CHECK_STATUS = ['assert {P}["status"] in ("success", "error", "degraded"), {P}',
                    'assert "toolUseId" not in {P}, f"{{{P}!r}}"',
                    'assert {P}.get("status") is not None',
                    'assert {P}["content"][0] is not None',
                    'assert "status" in {P}, f"{{{P}=}}"']

    def checker(self, m: Module, target: dict, moved: bool, passes: bool = True) -> str:
        """Write a checking function into module ``m``; its name.  ``moved``:
        it reads one of ``target``'s keys by subscript."""
        rng = self.rng
        name = f"chk_{self.fresh()}"
        P = rng.choice(["r", "res", "result", "resp"])
        head, lead = rng.choice([(P, ""), (P, ""), (f"{P}: dict", ""), (f"{P}, /", ""), (f"{P}=None", ""),
                                 (f"label, /, {P}", '"x", '), (f"label, {P}, note=None", '"x", ')])
        self.lead[name] = lead
        lines = [f"def {name}({head}):"]
        for st in rng.sample(self.CHECK_STATUS, rng.randint(1, 3)):
            lines.append("    " + st.format(P=P))
        if moved:
            key = rng.choice(list(target["keys"]) or self.keys)
            lines.insert(rng.randint(1, len(lines)), f'    x = {P}["{key}"]')
        if passes:
            lines.append(f"    return {rng.choice([P, P, '(' + P + ')'])}")
        m.body.append("\n".join(lines) + "\n")
        return name

    def checked_block(self, m: Module, out: list[str], target: dict, info: dict, call: str):
        """Reads of a result handed to checking functions: `r = chk(C)`,
        `r = C; chk(r)`, `r = C; r = chk(r)` (a name in sequence), `r =
        chk(chk2(C))`, `r = C; x = [chk(r)]` (handed on: no read rewritten),
        then reads of r; or reads of `chk(C)` itself."""
        rng = self.rng
        moved = rng.random() < 0.4
        form = rng.choice(["bind", "bind", "after", "after-no-pass", "sequence", "chain", "direct", "list"])
        if form == "sequence" and moved:
            form = "bind"  # a binding in sequence stands unwrapped: it must not raise
        chk = self.checker(m, target, moved, passes=form != "after-no-pass")
        info = dict(info, checker=chk, checker_moved=moved, checked=form)
        if form == "direct":
            for key in self.keys_for(target)[:3]:
                kind, code = self.read_expr(f"{chk}({self.lead[chk]}{call})", self.rng.choice(self.DIRECT_FORMS),
                                            key, False)
                self.emit(out, "    ", kind, code, dict(info, receiver="checked-call", form="checked", key=key))
            return
        R = f"c{self.fresh()}"
        if form == "bind":
            self.emit(out, "    ", "stmt", f"{R} = {chk}({self.lead[chk]}{call})",
                      dict(info, receiver="checker", form="bind", key=None))
        elif form == "chain":
            inner = self.checker(m, target, False)
            self.emit(out, "    ", "stmt", f"{R} = {chk}({self.lead[chk]}{inner}({self.lead[inner]}{call}))",
                      dict(info, receiver="checker", form="chain", key=None))
        elif form == "sequence":
            out.append(f"    {R} = {call}")
            out.append(f"    {R} = {chk}({self.lead[chk]}{R})")
        else:
            out.append(f"    {R} = {call}")
            code = f"x = [{chk}({self.lead[chk]}{R})]" if form == "list" else f"{chk}({self.lead[chk]}{R})"
            self.emit(out, "    ", "stmt", code, dict(info, receiver="checker", form=form, key=None))
        final = []
        for key in self.keys_for(target):
            f = rng.choice(self.FORMS)
            final.append((f, key))
            if f in ("pop", "pop_d", "setdefault", "store", "aug", "delete"):
                final.append((rng.choice(["get_d", "in", "subscript"]), key))
        for f, key in final:
            kind, code = self.read_expr(R, f, key, True)
            self.emit(out, "    ", kind, code, dict(info, receiver="checked-name", form=f, key=key))

    def gen_consumer(self, rel: str, targets: list[dict]):
        m = self.mod(rel)
        m.imp("import json")
        m.imp("")
        m.imp("from tests._log import _v")
        cases = []
        for ci in range(self.rng.randint(2, 4)):
            cname = f"case_{ci + 1}"
            out = [f"def {cname}(n, flag, act):"]
            prev_name = None  # the name the last name block of this case bound
            for ri in range(self.rng.randint(2, 4)):
                target = self.rng.choice(targets)
                if target["sig"] == "builder":
                    bt = self.builder_target()
                    callee = self.builder_call(m, bt["extras"], bt["builder"])
                    call, how, target = callee, "builder", bt
                else:
                    call, how = self.call_text(m, target, ["n", "flag", "act"])
                info = {"producer": target["name"], "module": target["module"], "kind": target["kind"], "how": how,
                        "call": call, "reaches": target.get("reaches", [])}
                if self.rng.random() < 0.2:
                    # a result handed to a checking function of the module
                    # (docs/rules.md "**Results handed to a checking function.**")
                    self.checked_block(m, out, target, info, call)
                elif self.rng.random() < 0.7:
                    # a name bound in sequence (docs/rules.md "**Receivers**"):
                    # sometimes the name of the block before, bound again to
                    # another call by a statement of the case's own block, so
                    # each binding's reads are rewritten for its own call; as a
                    # decoy, the new binding under `if flag:` (the name then
                    # bound twice otherwise than in sequence: no receiver)
                    rebound = prev_name is not None and self.rng.random() < 0.4
                    cond = rebound and self.rng.random() < 0.15
                    rname = prev_name if rebound else f"r{ri + 1}"
                    prev_name = rname
                    twice = self.rng.random() < 0.05
                    if cond:
                        out.append("    if flag:")
                        out.append(f"        {rname} = {call}")
                    else:
                        out.append(f"    {rname} = {call}")
                    if twice:
                        out.append(f"    {rname} = {call}")
                    info = dict(info, rebound=rebound, conditional=cond)
                    spoil = self.rng.random() < 0.15
                    block = self.rng.random() < 0.3
                    reads = []
                    if self.rng.random() < 0.06:
                        # a binding seen by an assertion message alone
                        reads.append(("assert", "true", self.rng.choice(self.keys_for(target))))
                    else:
                        for key in self.keys_for(target):
                            reads.append(("key", self.rng.choice(self.FORMS), key))
                    if self.rng.random() < 0.35:
                        for key in self.keys_for(target)[:self.rng.randint(1, 2)]:
                            reads.insert(self.rng.randint(0, len(reads)),
                                         ("assert", self.rng.choice(self.ASSERT_TESTS), key))
                    if block:
                        reads.insert(self.rng.randint(0, len(reads)), ("block", self.rng.choice(self.BLOCK), None))
                    if spoil:
                        spoiler = self.rng.choice(self.WHOLE + self.CONTENT)
                        reads.insert(self.rng.randint(0, len(reads)), ("spoil", spoiler, None))
                    # follow mutations with a read of the same key
                    final = []
                    for r in reads:
                        final.append(r)
                        if r[0] == "key" and r[1] in ("pop", "pop_d", "setdefault", "store", "aug", "delete"):
                            final.append(("key", self.rng.choice(["get_d", "in", "subscript"]), r[2]))
                    for what, form, key in final:
                        if what == "assert":
                            code, msg = self.assert_code(rname, form, key)
                            self.emit(out, "    ", "stmt", code,
                                      dict(info, receiver="name", form="assert-" + form, key=key, twice=twice,
                                           message=msg))
                        elif what == "key":
                            kind, code = self.read_expr(rname, form, key, True)
                            self.emit(out, "    ", kind, code,
                                      dict(info, receiver="name", form=form, key=key, twice=twice))
                        else:
                            self.emit(out, "    ", "expr", form.format(r=rname),
                                      dict(info, receiver="name", form=what, key=None, twice=twice))
                else:
                    for key in self.keys_for(target)[:3]:
                        form = self.rng.choice(self.DIRECT_FORMS)
                        if target["sig"] == "builder":
                            call = self.builder_call(m, target["extras"], target["builder"])
                        else:
                            call, how = self.call_text(m, target, ["n", "flag", "act"])
                        kind, code = self.read_expr(call, form, key, False)
                        self.emit(out, "    ", kind, code,
                                  dict(info, receiver="call", form=form, key=key, how=how, call=call))
                    if self.rng.random() < 0.2:
                        form = self.rng.choice(self.BLOCK)
                        self.emit(out, "    ", "expr", form.format(r=call),
                                  dict(info, receiver="call", form="block", key=None))
            m.body.append("\n".join(out) + "\n")
            cases.append(cname)
        acts = sorted({a for t in targets for a in t.get("actions", [])}) or ["list"]
        argsets = [(0, False, acts[0]), (2, True, acts[-1]), (3, False, "nope"), (5, True, self.rng.choice(acts))]
        run = ["LOG = []", "", "", "def run():",
               f"    for args in {argsets!r}:",
               f"        for case in ({', '.join(cases)},):",
               "            try:",
               "                case(*args)",
               "            except Exception as e:",
               '                LOG.append(("CRASH", case.__name__, type(e).__name__))',
               "    return LOG"]
        m.body.insert(0, run[0] + "\n")
        m.body.append("\n".join(run[3:]) + "\n")

    # -- the program -----------------------------------------------------

    def choose_kind(self) -> str:
        kinds = [k for k in KINDS if k not in self.exclude]
        return self.rng.choices(kinds, [KIND_WEIGHTS[k] for k in kinds])[0]

    def build(self):
        self.gen_builders()
        for module in ["m1", "m2", "m3"]:
            for _ in range(self.rng.randint(2, 4)):
                self.gen_producer(module, self.choose_kind())
        for i in range(self.rng.randint(1, 2)):
            d = self.gen_dispatcher("dispatch", f"dispatch{i + 1}")
            self.dispatchers.append(d)
        self.gen_tools()
        targets = self.producers + self.dispatchers + self.tools + [{"sig": "builder", "name": "?"}]
        ncons = self.rng.randint(2, 3)
        for i in range(ncons):
            self.gen_consumer(f"tests/test_{i + 1}.py", targets)

    def files(self) -> dict[str, str]:
        out = {"pyproject.toml": "", "app/__init__.py": '"""Generated tools."""\n',
               "tests/__init__.py": "",
               "tests/_log.py": (
                   '"""Logging helpers."""\n\nimport json\n\n\n'
                   "def _name(o):\n    return f\"<{type(o).__name__}>\"\n\n\n"
                   "def _v(x):\n    return json.dumps(x, default=_name)\n")}
        docs = {"results": "Result builders.", "tools": "Tools and a stub agent.",
                "dispatch": "Dispatchers."}
        for name, m in self.modules.items():
            doc = docs.get(name, "Consumers." if name.startswith("tests/") else "Producers.")
            out[m.rel] = m.text(doc)
        consumers = sorted(n for n in self.modules if n.startswith("tests/"))
        main = ['"""Runs every consumer and prints their logs as JSON."""', "", "import json", ""]
        for c in consumers:
            main.append(f"import {c[:-3].replace('/', '.')}")
        main += ["", "", "def main():", "    out = {}"]
        for c in consumers:
            main.append(f'    out["{c}"] = {c[:-3].replace("/", ".")}.run()')
        main += ["    print(json.dumps(out))", "", "", 'if __name__ == "__main__":', "    main()", ""]
        out["main.py"] = "\n".join(main)
        return out


def generate(out_dir: str, seed: int, programs: int, exclude=()) -> list[str]:
    os.makedirs(out_dir, exist_ok=True)
    dirs = []
    for i in range(programs):
        p = Program(seed, i, exclude)
        name = f"prog_{i:04d}"
        root = os.path.join(out_dir, name)
        if os.path.exists(root):
            shutil.rmtree(root)
        for rel, text in p.files().items():
            path = os.path.join(root, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            if rel.endswith(".py"):
                compile(text, path, "exec")  # a generator bug shows here
        manifest = {
            "seed": seed, "index": i, "reads": p.reads,
            "producers": p.producers + p.dispatchers + p.tools, "builders": p.builders,
        }
        with open(root + ".manifest.json", "w", encoding="utf-8") as f:
            json.dump(manifest, f, indent=1)
        dirs.append(root)
    return dirs


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--programs", type=int, default=10)
    ap.add_argument("--out", required=True)
    ap.add_argument("--exclude-kinds", default="", help="producer kinds to leave out, comma-separated")
    a = ap.parse_args(argv)
    exclude = [k for k in a.exclude_kinds.split(",") if k]
    for k in exclude:
        if k not in KINDS:
            ap.error(f"unknown kind {k!r} (one of {', '.join(KINDS)})")
    dirs = generate(a.out, a.seed, a.programs, exclude)
    print(f"wrote {len(dirs)} programs under {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
