#!/usr/bin/env python3
"""Execution test of `toolshape fix` on result builders and later writes.

Usage:
    python3 gen_exec.py gen --seed N OUT_DIR --manifest FILE
    python3 gen_exec.py run ORIG_DIR FIXED_DIR MANIFEST --mode safe|unsafe
    python3 gen_exec.py call TREE... --manifest FILE (internal: the trees' results)
    python3 gen_exec.py --self-test

`gen` writes a small multi-module Python project (a `pyproject.toml` at its
root, a package `gentools` and a stub `strands` package whose `tool` decorator
returns its function) and a JSON manifest.  Written from docs/rules.md ("TS003",
"TS004" and "Fixes") and the README, independently of toolshape's code.

The project holds

  * result builders (TS003 roots) in every fixable form: a display
    `{"status": ..., "content": [...], **extra}` (content also a fresh local
    list, and with a constant extra key next to the spread), and a result name
    built by a display and grown by `payload.update(extra)`,
    `payload.update(**extra)`, `payload |= extra` or a
    `for k, v in extra.items(): payload[k] = v` loop (content a list display
    or a fresh local list), the write at times already the first statement
    of an `if extra:` (`if (extra):`, a comment on the `if` line), whose fix
    is the append alone;
  * method builders (`self._reply(...)`, `cls._cok(...)`) in a class;
  * chains `def err(msg, **kw): return ok(msg, **kw)` across modules, reached
    by `from .common import ok`, `import gentools.common as c` + `c.ok(...)`,
    `from . import common` + `common.ok(...)`, and a chain of a chain;
  * tool functions (plain, and decorated `@tool`) calling the builders with no
    extras, with extras (from parameters and literals), under a condition,
    with named parameters of the builder (which are not extras), through a
    re-export in `__init__.py`;
  * some builders also get a call that makes their fix unsafe (docs/rules.md,
    "call reasons"): `status=` / `content=` / `toolUseId=` keywords, a
    `**mapping` argument, a call through a chain with `status=`, or a dotted
    `gentools.common.ok(...)` attribute;
  * tool functions that return a result name with later writes (TS004):
    `r["k"] = v`, `r.update(a=1, b=2)`, `r.update({...})`, `r |= {...}`,
    under `if flag:` or not, content a list display (possibly with a json
    block already) or a fresh local list; and unsafe ones (a computed key,
    `r.update(mapping)`, a status outside success/error/degraded).

The manifest lists every callable (module, qualname, which fix unit rewrites
its own body) and every call to make (args, kwargs), with the model of its
result: the `base` (status and content the builder or display makes itself)
and the `groups` of moved keys (one group for a builder call; one per write
statement that runs, for TS004), and the fix units with their class (`safe`,
or `unsafe` with the reason the generator built in).

`run` imports the original and the fixed tree in separate processes, calls
everything and checks, for each call:

  * the original result is the model's: base updated with every group
    (a generator self-check);
  * a call whose groups are empty (no extras) returns exactly the old result;
  * a call whose fix unit is not applied in this mode (unsafe, in safe mode)
    returns exactly the old result, and the source of a callable that unit
    would rewrite is unchanged;
  * otherwise: the same status (skipped for a colliding call, whose original
    status or content an extra overrode: there the builder's own status is
    required), the base content blocks as a prefix, then exactly one
    `{"json": {...}}` block per group holding exactly the moved keys with the
    same values in the same order, no empty block, and no other top-level
    key;
  * the source of every callable no fix rewrites (tool functions calling
    builders, chains) is unchanged, and every fixed file compiles.

It prints a JSON report and exits 1 on any failure.  `--self-test` writes its
own reference fix of generated projects (the transformation docs/rules.md
describes) and checks that `run` accepts it in both modes and rejects each
of a list of wrong fixes (an empty json block, a dropped key, a lost write, a
key left at the top level, two blocks for one builder, a swapped value,
reordered keys, an extra key, an unsafe fix applied in safe mode, an unsafe
fix not applied in unsafe mode, a rewritten call site).
"""

from __future__ import annotations

import argparse
import ast
import copy
import json
import os
import random
import subprocess
import sys
import tempfile

PKG = "gentools"
MODES = ("safe", "unsafe")
COLLIDING = ("status", "content", "toolUseId")

KEY_POOL = [
    "frames", "errors", "hz", "latency", "device", "count", "elapsed", "items",
    "trace_id", "retries", "sent", "path", "region", "score", "shape", "owner",
    "battery", "pose", "depth", "rate",
]
WORDS = ["ok", "done", "reply", "emit", "answer", "result", "report", "respond", "finish", "wrap"]
KW_NAMES = ["extra", "kw", "fields", "meta", "kwargs"]
RESULT_NAMES = ["r", "result", "res", "out", "payload"]
BUILDER_FORMS = ["spread", "spread_lit", "local", "update", "update_star", "ior", "loop", "update_list"]
# the forms grown by a later write of the **K; such a write may stand already
# guarded, as the first statement of the body of an `if K:` (docs/rules.md:
# the fix is then the append alone, at its own place)
GROWN_FORMS = ("update", "update_star", "ior", "loop", "update_list")
GUARD_STYLES = ("plain", "comment", "paren")  # `if K:`, `if K:  # ...`, `if (K):`
WRITE_FORMS = ["sub", "upd_kw", "upd_dict", "ior_dict"]
COLLIDE_KINDS = ["status_kw", "content_kw", "tooluseid_kw", "mapping", "dotted", "chain_status"]


# --------------------------------------------------------------------------
# the generated program: a spec, rendered as the original or a reference fix
# --------------------------------------------------------------------------


class Spec:
    """Everything generated for one seed; `render` turns it into files."""

    def __init__(self, seed: int):
        self.seed = seed
        self.rng = random.Random(seed)
        self.n = 0
        self.roots: list[dict] = []
        self.chains: list[dict] = []
        self.callers: list[dict] = []
        self.writers: list[dict] = []
        self.session: dict = {}
        self.reexport: str | None = None
        self.build()

    # -- small helpers --------------------------------------------------

    def fresh(self) -> int:
        self.n += 1
        return self.n

    def value(self):
        """A distinct JSON value (int, str, list, dict or float)."""
        n = self.fresh()
        kind = (n + self.seed) % 5
        if kind == 0:
            return n * 11 + 3
        if kind == 1:
            return f"v{self.seed}-{n}"
        if kind == 2:
            return [n, f"e{n}"]
        if kind == 3:
            return {"n": n, "tag": f"t{n}"}
        return n + 0.25

    def text(self) -> str:
        return f"t{self.seed}-{self.fresh()}"

    def keys(self, k: int, avoid=()) -> list[str]:
        pool = [x for x in KEY_POOL if x not in avoid]
        return self.rng.sample(pool, k)

    def name(self, word: str | None = None) -> str:
        return f"{word or self.rng.choice(WORDS)}_{self.fresh()}"

    # -- building --------------------------------------------------------

    def build(self):
        rng = self.rng
        # roots: one safe builder per form, then one unsafe builder per way of
        # making a fix unsafe
        for form in BUILDER_FORMS:
            self.roots.append(self.new_root(form, unsafe=None))
        kinds = COLLIDE_KINDS[:]
        rng.shuffle(kinds)
        for kind in kinds:
            form = rng.choice(BUILDER_FORMS)
            self.roots.append(self.new_root(form, unsafe=kind))
        # a builder with a `status` parameter (a named parameter, not an extra)
        r = self.new_root(rng.choice(["spread", "update"]), unsafe=None)
        r["status_param"] = True
        r["status"] = "success"
        r["code"] = False
        r["module"] = "common"
        self.roots.append(r)
        # the re-export
        safe_common = [r for r in self.roots if r["unsafe"] is None and r["module"] == "common"
                       and not r["status_param"]]
        self.reexport = rng.choice(safe_common)["name"]

        # chains: every ref style, a chain with a named parameter, a chain of
        # a chain, and the chain the chain_status collision goes through
        styles = ["from", "modattr", "frompkg"]
        plain_roots = [r for r in self.roots if not r["status_param"]]
        for i, style in enumerate(styles + [rng.choice(styles)]):
            target = rng.choice(plain_roots)
            self.chains.append(self.new_chain(target, style, code=(i == 1)))
        self.chains.append(self.new_chain(self.chains[0], "local", code=False))
        # one chain adds a keyword of its own: `return ok(msg, origin="err_3", **kw)`
        rng.choice(self.chains[:4])["tag"] = True
        for r in self.roots:
            if r["unsafe"] == "chain_status":
                ch = self.new_chain(r, rng.choice(styles), code=False)
                self.chains.append(ch)
                r["collide_chain"] = ch["name"]

        # the class with method builders
        self.session = {
            "cls": "Session",
            "reply": {"name": "_reply", "form": rng.choice(["spread", "update", "update_star", "ior", "loop",
                                                             "update_list", "local"]),
                      "K": rng.choice(KW_NAMES), "status": rng.choice(["success", "error"]),
                      "unsafe": "status_kw" if self.seed % 2 else None, "code": False,
                      "two_blocks": rng.random() < 0.5, "status_param": False, "method": "self",
                      "loopvars": ("k", "v"), "id": "Session._reply", "module": "session"},
            "cok": {"name": "_cok", "form": "spread", "K": rng.choice(KW_NAMES), "status": "success",
                    "unsafe": None, "code": False, "two_blocks": False, "status_param": False,
                    "method": "cls", "loopvars": ("k", "v"), "id": "Session._cok", "module": "session"},
        }
        self.session["reply"]["unit"] = "builder:" + self.session["reply"]["id"]
        self.session["cok"]["unit"] = "builder:" + self.session["cok"]["id"]

        # callers
        modules = ["tools_a", "tools_b", "tools_c"]
        for b in self.roots + self.chains:
            kinds = ["extras", "none"]
            kinds.append(rng.choice(["extras", "cond", "extras2"]))
            if b.get("code"):
                kinds.append("named")
            if b.get("status_param"):
                kinds.append("statusparam")
            for kind in kinds:
                self.callers.append(self.new_caller(b, kind, rng.choice(modules)))
        for r in self.roots:
            if r["unsafe"] and r["unsafe"] != "chain_status":
                self.callers.append(self.new_caller(r, "collide:" + r["unsafe"], rng.choice(modules)))
            elif r["unsafe"] == "chain_status":
                ch = next(c for c in self.chains if c["name"] == r["collide_chain"])
                self.callers.append(self.new_caller(ch, "collide:chain_status", rng.choice(modules)))
        # the re-exported builder is called through the package too
        rex = next(r for r in self.roots if r["name"] == self.reexport)
        c = self.new_caller(rex, "extras", rng.choice(modules))
        c["ref_style"] = "reexport"
        self.callers.append(c)

        # writers (TS004)
        content_forms = ["list", "list_json", "name", "list", "comp"]
        for i in range(8):
            self.writers.append(self.new_writer(content_forms[i % 5], unsafe=None, force=i))
        for kind in ["dyn", "mapping", "status_ok"]:
            self.writers.append(self.new_writer(rng.choice(content_forms), unsafe=kind, force=None))

        # guarded builders: the write already the first statement of an
        # `if K:` body.  A random stream of their own, so that the rest of
        # the program for a seed is what it was without them; one safe
        # grown root always guarded, every other grown builder at 30%.
        grng = random.Random(self.seed * 104_729 + 17)
        grown = [b for b in self.roots + [self.session["reply"]] if b["form"] in GROWN_FORMS]
        forced = grng.choice([b for b in grown if b["unsafe"] is None])
        for b in grown:
            if b is forced or grng.random() < 0.3:
                b["guard"] = grng.choice(GUARD_STYLES)

    def new_root(self, form: str, unsafe: str | None) -> dict:
        rng = self.rng
        name = self.name()
        module = "common" if unsafe is None or unsafe == "dotted" or rng.random() < 0.5 else "more"
        if unsafe is None and rng.random() < 0.3:
            module = "more"
        lv = rng.choice([("k", "v"), ("key", "value"), ("name", "val")])
        return {
            "id": name, "name": name, "module": module, "form": form, "unsafe": unsafe,
            "status": rng.choice(["success", "error", "degraded"]),
            "status_param": False,
            "code": rng.random() < 0.3 and unsafe != "content_kw",
            "two_blocks": rng.random() < 0.3,
            "K": rng.choice(KW_NAMES), "method": None, "loopvars": lv,
            "unit": "builder:" + name,
        }

    def new_chain(self, target: dict, style: str, code: bool) -> dict:
        name = self.name("err" if code else self.rng.choice(["fail", "warn", "note", "err"]))
        return {"id": name, "name": name, "module": "chains", "target": target["name"], "style": style,
                "code": code, "K": self.rng.choice(["kw", "kwargs", "extra"]), "tag": False}

    def new_caller(self, target: dict, kind: str, module: str) -> dict:
        rng = self.rng
        name = self.name("tool" if rng.random() < 0.5 else "do")
        return {"id": f"{module}.{name}", "name": name, "module": module, "target": target["name"],
                "kind": kind, "decorated": rng.random() < 0.5,
                "ref_style": rng.choice(["from", "absfrom", "modattr", "frompkg"]),
                "keys": self.keys(3), "lits": [rng.random() < 0.4 for _ in range(3)],
                "litvals": [self.value() for _ in range(3)]}

    def new_writer(self, content: str, unsafe: str | None, force: int | None) -> dict:
        rng = self.rng
        name = self.name("w")
        nwrites = rng.randint(1, 3)
        keys = self.keys(7)
        writes = []
        ki = 0
        for j in range(nwrites):
            form = rng.choice(WRITE_FORMS)
            if force is not None and j == 0:
                form = WRITE_FORMS[force % len(WRITE_FORMS)]
            nk = 1 if form == "sub" else rng.randint(1, 2)
            if force == 1 and j == 0:
                nk = 2  # an update(a=..., b=...) with two keys, always
            ks = keys[ki:ki + nk]
            ki += nk
            writes.append({"form": form, "keys": ks,
                           "lit": [rng.random() < 0.4 or (force == 0 and j == 0) for _ in ks],
                           "litvals": [self.value() for _ in ks],
                           "cond": rng.random() < 0.35 or (force == 2 and j == 0),
                           "oneline": rng.random() < 0.3})
        if unsafe == "dyn":
            writes.insert(rng.randint(0, len(writes)), {"form": "dyn", "keys": [], "lit": [], "litvals": [],
                                                        "cond": False, "oneline": False})
        if unsafe == "mapping":
            writes.insert(rng.randint(0, len(writes)), {"form": "mapping", "keys": [], "lit": [], "litvals": [],
                                                        "cond": False, "oneline": False})
        # each write statement is a fix of its own (docs/rules.md: "the
        # findings of one statement make one fix"): a computed key or a
        # mapping makes that statement's fix unsafe, a status outside
        # success/error/degraded every statement's
        for j, wr in enumerate(writes):
            wr["unit"] = f"writes:{name}:{j}"
            wr["unsafe"] = "status_ok" if unsafe == "status_ok" else (
                wr["form"] if wr["form"] in ("dyn", "mapping") else None)
        # a constant extra key in the display itself (TS001, fixed on its own)
        lit_extra = None
        if unsafe is None and content == "list" and (force == 3 or rng.random() < 0.3):
            lit_extra = {"key": keys[6], "value": self.value(), "unit": f"display:{name}", "unsafe": None}
        return {"id": f"writes.{name}", "name": name, "content": content, "unsafe": unsafe,
                "status": "ok" if unsafe == "status_ok" else rng.choice(["success", "error", "degraded"]),
                "rname": rng.choice(RESULT_NAMES), "writes": writes, "decorated": rng.random() < 0.5,
                "lit_extra": lit_extra}

    # -- lookups ---------------------------------------------------------

    def builder(self, name: str) -> dict:
        for b in self.roots + self.chains:
            if b["name"] == name:
                return b
        raise KeyError(name)

    def root_of(self, b: dict) -> dict:
        while "target" in b:
            b = self.builder(b["target"])
        return b

    def fix_units(self) -> list[dict]:
        return self.roots + [self.session["reply"], self.session["cok"]] + [
            wr for w in self.writers for wr in w["writes"]] + [w["lit_extra"] for w in self.writers if w["lit_extra"]]

    def unit_class(self, unit: str) -> str:
        for b in self.fix_units():
            if b["unit"] == unit:
                return "unsafe" if b["unsafe"] else "safe"
        raise KeyError(unit)

    # -- the model of a builder call -------------------------------------

    def base(self, b: dict, text, code=None, status=None) -> dict:
        """Status and content that builder `b` makes itself."""
        if "target" in b:
            t = f"{text} #{code if code is not None else 0}" if b["code"] else text
            return self.base(self.builder(b["target"]), t)
        if b["code"]:
            text = f"{text} [{code if code is not None else 0}]"
        content = [{"text": text}]
        if b["two_blocks"]:
            content.append({"text": f"by {b['name']}"})
        return {"status": status if b["status_param"] and status is not None else b["status"], "content": content}

    def groups(self, b: dict, extras: list) -> list:
        """The groups of keys a call with `extras` ([(k, v)]) moves."""
        while "target" in b:
            if b["tag"]:
                extras = [("origin", b["name"])] + list(extras)
            b = self.builder(b["target"])
        root = b
        g = {}
        if root["form"] == "spread_lit":
            g["source"] = root["name"]
        for k, v in extras:
            g[k] = v
        return [g] if g else []


# --------------------------------------------------------------------------
# rendering
# --------------------------------------------------------------------------


def lit(v) -> str:
    return repr(v)


def builder_lines(b: dict, fixed: bool, mutation: str | None) -> list[str]:
    """A root builder's def (module level, or a method without the class indent)."""
    K = b["K"]
    params = []
    if b["method"]:
        params.append(b["method"])
    params.append("text")
    if b["status_param"]:
        params.append('status="success"')
    if b["code"]:
        params.append("code=0")
    params.append(f"**{K}")
    out = []
    if b["method"] == "cls":
        out.append("@classmethod")
    out.append(f"def {b['name']}({', '.join(params)}):")
    text_expr = 'f"{text} [{code}]"' if b["code"] else "text"
    blocks = [f'{{"text": {text_expr}}}']
    if b["two_blocks"]:
        blocks.append(f'{{"text": "by {b["name"]}"}}')
    B = ", ".join(blocks)
    S = "status" if b["status_param"] else json.dumps(b["status"])
    form = b["form"]
    guarded = f'*([{{"json": {K}}}] if {K} else [])'
    if form in ("spread", "spread_lit", "local"):
        if form == "local":
            out.append(f"    blocks = [{B}]")
            content = "blocks"
        else:
            content = f"[{B}]"
        lit_entry = f', "source": "{b["name"]}"' if form == "spread_lit" else ""
        if not fixed:
            out.append(f'    return {{"status": {S}, "content": {content}{lit_entry}, **{K}}}')
        else:
            if form == "spread_lit":
                new = f'[{B}, {{"json": {{"source": "{b["name"]}", **{K}}}}}]'
            elif form == "local":
                new = f"[*blocks, {guarded}]"
            else:
                new = f"[{B}, {guarded}]"
                if mutation == "empty_block":
                    new = f'[{B}, {{"json": {K}}}]'
            tail = f", **{K}" if mutation == "keep_top" else ""
            out.append(f'    return {{"status": {S}, "content": {new}{tail}}}')
        return out
    # a result name grown by the **K
    if form == "update_list":
        out.append(f"    blocks = [{B}]")
        out.append(f'    payload = {{"status": {S}, "content": blocks}}')
        append = f'payload["content"] = [*payload["content"], {{"json": {K}}}]'
    else:
        out.append(f'    payload = {{"status": {S}, "content": [{B}]}}')
        append = f'payload["content"].append({{"json": {K}}})'
    kv, vv = b["loopvars"]
    guard = b.get("guard")
    # an already guarded write: the `if K:` stays, the write (or its fix)
    # is its first statement, one level deeper
    pad = "        " if guard else "    "
    if guard:
        test = f"({K})" if guard == "paren" else K
        note = "  # extras only" if guard == "comment" else ""
        out.append(f"    if {test}:{note}")
    if not fixed:
        if form in ("update", "update_list"):
            out.append(f"{pad}payload.update({K})")
        elif form == "update_star":
            out.append(f"{pad}payload.update(**{K})")
        elif form == "ior":
            out.append(f"{pad}payload |= {K}")
        elif form == "loop":
            out.append(f"{pad}for {kv}, {vv} in {K}.items():")
            out.append(f"{pad}    payload[{kv}] = {vv}")
    else:
        if mutation == "drop_key":
            append = f'payload["content"].append({{"json": dict(list({K}.items())[1:])}})'
        elif mutation == "extra_key":
            append = f'payload["content"].append({{"json": {{**{K}, "moved": True}}}})'
        if mutation == "two_blocks":
            out.append(f"{pad}for {kv}, {vv} in {K}.items():")
            out.append(f'{pad}    payload["content"].append({{"json": {{{kv}: {vv}}}}})')
        elif guard:
            out.append(f"{pad}{append}")  # the append alone, where the write stood
        else:
            out.append(f"    if {K}:")
            out.append(f"        {append}")
    out.append("    return payload")
    return out


def indent(lines: list[str], n: int = 4) -> list[str]:
    return [(" " * n + ln) if ln else ln for ln in lines]


class Renderer:
    def __init__(self, spec: Spec, variant: str, mutation: str | None = None):
        self.spec = spec
        self.variant = variant  # "orig", "safe", "unsafe"
        self.mutation = mutation
        self.mutated_target: str | None = None

    def applied(self, unit: str) -> bool:
        if self.variant == "orig":
            return False
        return self.spec.unit_class(unit) == "safe" or self.variant == "unsafe"

    def take(self, mutation: str, ident: str) -> bool:
        """Whether `mutation` applies to `ident` (the first candidate only)."""
        if self.mutation != mutation or self.mutated_target not in (None, ident):
            return False
        self.mutated_target = ident
        return True

    def root_fixed(self, b: dict) -> tuple[bool, str | None]:
        fixed = self.applied(b["unit"])
        mut = None
        if self.variant == "orig":
            return False, None
        if fixed and b["form"] == "spread" and self.take("empty_block", b["id"]):
            mut = "empty_block"
        elif fixed and b["form"] == "spread" and not b["status_param"] and self.take("keep_top", b["id"]):
            mut = "keep_top"
        elif fixed and b["form"] == "update" and self.take("drop_key", b["id"]):
            mut = "drop_key"
        elif fixed and b["form"] == "loop" and self.take("two_blocks", b["id"]):
            mut = "two_blocks"
        elif fixed and b["form"] == "ior" and self.take("extra_key", b["id"]):
            mut = "extra_key"
        elif not fixed and b["unsafe"] and self.variant == "safe" and self.take("unsafe_applied", b["id"]):
            fixed = True
        return fixed, mut

    def files(self) -> dict[str, str]:
        sp = self.spec
        files = {}
        files["pyproject.toml"] = f'[project]\nname = "gentools-{sp.seed}"\nversion = "0.1.0"\n'
        files["strands/__init__.py"] = '"""A stub of the Strands SDK: `tool` returns its function."""\n\n\ndef tool(f):\n    return f\n'
        files[f"{PKG}/__init__.py"] = f'"""Generated by gen_exec.py, seed {sp.seed}."""\nfrom .common import {sp.reexport}\n'
        for module in ("common", "more"):
            lines = [f'"""Result builders ({module})."""', ""]
            for b in sp.roots:
                if b["module"] == module:
                    fixed, mut = self.root_fixed(b)
                    lines += ["", ""] + builder_lines(b, fixed, mut)
            files[f"{PKG}/{module}.py"] = "\n".join(lines) + "\n"
        files[f"{PKG}/chains.py"] = self.chains_module()
        files[f"{PKG}/session.py"] = self.session_module()
        for module in ("tools_a", "tools_b", "tools_c"):
            files[f"{PKG}/{module}.py"] = self.tools_module(module)
        files[f"{PKG}/writes.py"] = self.writes_module()
        return files

    # -- references to builders from another module --------------------

    def ref(self, b: dict, style: str, imports: list[str]) -> str:
        mod = b["module"]
        name = b["name"]
        if style == "local":
            return name
        if style == "from":
            imp, ref = f"from .{mod} import {name}", name
        elif style == "absfrom":
            imp, ref = f"from {PKG}.{mod} import {name} as {name}_a", f"{name}_a"
        elif style == "modattr":
            imp, ref = f"import {PKG}.{mod} as m_{mod}", f"m_{mod}.{name}"
        elif style == "frompkg":
            imp, ref = f"from . import {mod}", f"{mod}.{name}"
        elif style == "reexport":
            imp, ref = f"from {PKG} import {name} as {name}_r", f"{name}_r"
        elif style == "dotted":
            imp, ref = f"import {PKG}.{mod}", f"{PKG}.{mod}.{name}"
        else:
            raise ValueError(style)
        if imp not in imports:
            imports.append(imp)
        return ref

    def chains_module(self) -> str:
        sp = self.spec
        imports: list[str] = []
        body: list[str] = []
        for ch in sp.chains:
            target = sp.builder(ch["target"])
            style = ch["style"]
            if "target" in target and style != "local":
                style = "local"
            ref = self.ref(target, style, imports)
            K = ch["K"]
            tag = f'origin="{ch["name"]}", ' if ch["tag"] else ""
            if ch["code"]:
                body += ["", "", f"def {ch['name']}(msg, code=0, **{K}):",
                         f'    return {ref}(f"{{msg}} #{{code}}", {tag}**{K})']
            else:
                body += ["", "", f"def {ch['name']}(msg, **{K}):", f"    return {ref}(msg, {tag}**{K})"]
        return '"""Builders that hand their keywords on to another builder."""\n' + "\n".join(imports + body) + "\n"

    def session_module(self) -> str:
        sp = self.spec
        s = sp.session
        reply, cok = s["reply"], s["cok"]
        lines = ['"""A class with builder methods."""', "", "", f"class {s['cls']}:",
                 "    def __init__(self):", "        self.opened = True", ""]
        for b in (reply, cok):
            fixed, mut = self.root_fixed(b)
            lines += indent(builder_lines(b, fixed, mut)) + [""]
        lines += ["    def ping(self, p0, p1):", '        return self._reply(f"ping {p0}", latency=p0, rate=p1)', "",
                  "    def idle(self):", '        return self._reply("idle")', "",
                  "    @classmethod", "    def make(cls, p0):", '        return cls._cok("made", item=p0)', "",
                  "    def maybe(self, p0, flag):", "        if flag:",
                  '            return self._reply("maybe", depth=p0)', '        return self._reply("maybe not")']
        if reply["unsafe"]:
            lines += ["", "    def clash(self, p0):", '        return self._reply("clash", status="degraded", pose=p0)']
        return "\n".join(lines) + "\n"

    def caller_lines(self, c: dict, imports: list[str]) -> list[str]:
        sp = self.spec
        b = sp.builder(c["target"])
        kind = c["kind"]
        style = c["ref_style"]
        if kind == "collide:dotted":
            style = "dotted"
        ref = self.ref(b, style, imports)
        params = ["p0", "p1", "p2"]
        extras = []
        for i, key in enumerate(c["keys"]):
            src = lit(c["litvals"][i]) if c["lits"][i] else params[i]
            extras.append(f"{key}={src}")
        text = f'f"{c["name"]} {{p0}}"'
        sig = ["p0", "p1", "p2"]
        if kind == "extras":
            call = f"{ref}({text}, {', '.join(extras[:2])})"
            body = [f"    return {call}"]
        elif kind == "extras2":
            call = f"{ref}({text}, {', '.join(extras)})"
            body = [f"    return {call}"]
        elif kind == "none":
            body = [f"    return {ref}({text})"]
        elif kind == "cond":
            sig.append("flag")
            body = ["    if flag:", f"        return {ref}({text}, {extras[0]})", f'    return {ref}("quiet")']
        elif kind == "named":
            body = [f"    return {ref}({text}, code=p1, {extras[2]})"]
            if self.take("call_rewritten", c["id"]):
                key, src = extras[2].split("=", 1)
                body = [f"    return {ref}({text}, code=p1, **{{{key!r}: {src}}})"]
        elif kind == "statusparam":
            body = [f'    return {ref}(status="degraded", text={text}, {extras[0]})']
        elif kind == "collide:status_kw":
            body = [f'    return {ref}({text}, status="degraded", {extras[0]})']
        elif kind == "collide:content_kw":
            body = [f'    return {ref}({text}, content=[{{"text": "replaced"}}], {extras[0]})']
        elif kind == "collide:tooluseid_kw":
            body = [f'    return {ref}({text}, toolUseId="tu-{c["name"]}", {extras[0]})']
        elif kind == "collide:mapping":
            sig = ["p0", "opts"]
            body = [f"    return {ref}({text}, **opts)"]
        elif kind == "collide:dotted":
            body = [f"    return {ref}({text}, {extras[0]})"]
        elif kind == "collide:chain_status":
            body = [f'    return {ref}({text}, status="error", {extras[0]})']
        else:
            raise ValueError(kind)
        deco = ["@tool"] if c["decorated"] else []
        return deco + [f"def {c['name']}({', '.join(sig)}):"] + body

    def tools_module(self, module: str) -> str:
        imports: list[str] = []
        body: list[str] = []
        for c in self.spec.callers:
            if c["module"] == module:
                body += ["", ""] + self.caller_lines(c, imports)
        if any(c["module"] == module and c["decorated"] for c in self.spec.callers):
            imports.insert(0, "from strands import tool")
        return f'"""Tools ({module})."""\n' + "\n".join(imports + body) + "\n"

    def writes_module(self) -> str:
        lines = ['"""Tools that add keys to a result after building it."""', "from strands import tool"]
        for w in self.spec.writers:
            lines += ["", ""] + self.writer_lines(w)
        return "\n".join(lines) + "\n"

    def writer_lines(self, w: dict) -> list[str]:
        N = w["rname"]
        params = ["msg"]
        pi = 0
        has_flag = any(wr["cond"] for wr in w["writes"])
        srcs = []  # per write: list of value sources
        for wr in w["writes"]:
            s = []
            for i, _ in enumerate(wr["keys"]):
                if wr["lit"][i]:
                    s.append(lit(wr["litvals"][i]))
                else:
                    s.append(f"p{pi}")
                    params.append(f"p{pi}")
                    pi += 1
            srcs.append(s)
        if any(wr["form"] == "dyn" for wr in w["writes"]):
            params += ["key", "val"]
        if any(wr["form"] == "mapping" for wr in w["writes"]):
            params.append("m")
        if has_flag:
            params.append("flag")
        out = ["@tool"] if w["decorated"] else []
        out.append(f"def {w['name']}({', '.join(params)}):")
        S = json.dumps(w["status"])
        if w["content"] == "name":
            out.append('    blocks = [{"text": msg}]')
            content = "blocks"
        elif w["content"] == "list_json":
            content = f'[{{"text": msg}}, {{"json": {{"tool": "{w["name"]}"}}}}]'
        elif w["content"] == "comp":
            content = '[{"text": m} for m in [msg]]'
        else:
            content = '[{"text": msg}]'
        le = w["lit_extra"]
        if le and self.applied(le["unit"]):
            content = f'[{{"text": msg}}, {{"json": {{"{le["key"]}": {lit(le["value"])}}}}}]'
            out.append(f'    {N} = {{"status": {S}, "content": {content}}}')
        elif le:
            out.append(f'    {N} = {{"status": {S}, "content": {content}, "{le["key"]}": {lit(le["value"])}}}')
        else:
            out.append(f'    {N} = {{"status": {S}, "content": {content}}}')
        for wr, s in zip(w["writes"], srcs):
            form = wr["form"]
            keys = wr["keys"]
            if form == "sub":
                stmt = f'{N}["{keys[0]}"] = {s[0]}'
                block = f'{{"{keys[0]}": {s[0]}}}'
            elif form == "upd_kw":
                stmt = f"{N}.update({', '.join(f'{k}={v}' for k, v in zip(keys, s))})"
                block = "{" + ", ".join(f'"{k}": {v}' for k, v in zip(keys, s)) + "}"
            elif form in ("upd_dict", "ior_dict"):
                d = "{" + ", ".join(f'"{k}": {v}' for k, v in zip(keys, s)) + "}"
                stmt = f"{N}.update({d})" if form == "upd_dict" else f"{N} |= {d}"
                block = d
            elif form == "dyn":
                stmt = f"{N}[key] = val"
                block = "{key: val}"
            elif form == "mapping":
                stmt = f"{N}.update(m)"
                block = "dict(m)"
            else:
                raise ValueError(form)
            fixed = self.applied(wr["unit"])
            if self.variant == "unsafe" and wr["unsafe"] and self.take("unfixed_unsafe", wr["unit"]):
                fixed = False
            if fixed:
                if form == "sub" and wr["lit"][0] and self.take("swap_value", w["id"]):
                    block = f'{{"{keys[0]}": "swapped"}}'
                if form == "upd_kw" and len(keys) == 2 and self.take("reordered", w["id"]):
                    block = "{" + ", ".join(f'"{k}": {v}' for k, v in reversed(list(zip(keys, s)))) + "}"
                if w["content"] == "name":
                    stmt = f'{N}["content"] = [*{N}["content"], {{"json": {block}}}]'
                else:
                    stmt = f'{N}["content"].append({{"json": {block}}})'
                if self.take("lost_write", w["id"]):
                    stmt = "pass"
            if wr["cond"] and wr["oneline"]:
                out.append(f"    if flag: {stmt}")
            elif wr["cond"]:
                out += ["    if flag:", f"        {stmt}"]
            else:
                out.append(f"    {stmt}")
        out.append(f"    return {N}")
        return out


# --------------------------------------------------------------------------
# the manifest: every callable, every call, and the model of its result
# --------------------------------------------------------------------------


def manifest(spec: Spec) -> dict:
    rng = random.Random(spec.seed * 7919 + 1)
    callables = []
    calls = []

    def add_callable(cid, module, qualname, kind, rewritten_by, instance=None):
        if not isinstance(rewritten_by, list):
            rewritten_by = [] if rewritten_by is None else [rewritten_by]
        callables.append({"id": cid, "module": f"{PKG}.{module}", "file": f"{PKG}/{module}.py",
                          "qualname": qualname, "kind": kind, "rewritten_by": rewritten_by,
                          "instance": instance})

    def add_call(cid, args, kwargs, base, groups, unit, extras):
        units = unit if isinstance(unit, list) else [unit] * len(groups)
        calls.append({"callable": cid, "args": args, "kwargs": kwargs, "base": base, "groups": groups,
                      "units": units, "extras": extras,
                      "collides": any(k in COLLIDING for k in extras)})

    # builders called directly: no extras, some extras, a named parameter,
    # one that collides
    def direct_calls(b: dict, cid: str, unit: str):
        named = {"status": "error"} if b.get("status_param") else {}
        for i, keys in enumerate([[], spec.keys(1), spec.keys(2), spec.keys(3)]):
            t = spec.text()
            extras = [(k, spec.value()) for k in keys]
            kwargs = {**named, **dict(extras)}
            code = None
            if b.get("code") and i == 2:  # a named parameter: not an extra
                code = spec.value()
                kwargs = {"code": code, **kwargs}
            base = spec.base(b, t, code=code, status=named.get("status"))
            add_call(cid, [t], kwargs, base, spec.groups(b, extras), unit, [k for k, _ in extras])
        # a colliding call: status=, content= or toolUseId= as an extra (not
        # in the source: the builder's fix stays safe unless the source has one)
        coll = rng.choice(["content", "toolUseId"] if b.get("status_param") else ["status", "content", "toolUseId"])
        cv = {"status": "degraded", "content": [{"text": "replaced"}], "toolUseId": f"tu-{spec.fresh()}"}[coll]
        t = spec.text()
        extras = [(coll, cv), (spec.keys(1)[0], spec.value())]
        base = spec.base(b, t, status=named.get("status"))
        add_call(cid, [t], {**named, **dict(extras)}, base, spec.groups(b, extras), unit, [k for k, _ in extras])

    for b in spec.roots:
        add_callable(b["id"], b["module"], b["name"], "builder", b["unit"])
        direct_calls(b, b["id"], b["unit"])
    for ch in spec.chains:
        root = spec.root_of(ch)
        add_callable(ch["id"], "chains", ch["name"], "chain", None)
        direct_calls(ch, ch["id"], root["unit"])

    # the class
    s = spec.session
    for b in (s["reply"], s["cok"]):
        add_callable(b["id"], "session", b["id"], "method-builder", b["unit"], instance=s["cls"])
        for keys in ([], spec.keys(2), ["status", spec.keys(1)[0]]):
            t = spec.text()
            extras = [(k, "error" if k == "status" else spec.value()) for k in keys]
            add_call(b["id"], [t], dict(extras), spec.base(b, t), spec.groups(b, extras), b["unit"],
                     [k for k, _ in extras])
    reply, cok = s["reply"], s["cok"]
    methods = [("ping", reply), ("idle", reply), ("make", cok), ("maybe", reply)]
    if reply["unsafe"]:
        methods.append(("clash", reply))
    for mname, b in methods:
        cid = f"Session.{mname}"
        add_callable(cid, "session", cid, "method-caller", None, instance=s["cls"])
        if mname == "ping":
            p0, p1 = spec.value(), spec.value()
            add_call(cid, [p0, p1], {}, spec.base(b, f"ping {p0}"), spec.groups(b, [("latency", p0), ("rate", p1)]),
                     b["unit"], ["latency", "rate"])
        elif mname == "idle":
            add_call(cid, [], {}, spec.base(b, "idle"), spec.groups(b, []), b["unit"], [])
        elif mname == "make":
            p0 = spec.value()
            add_call(cid, [p0], {}, spec.base(b, "made"), spec.groups(b, [("item", p0)]), b["unit"], ["item"])
        elif mname == "maybe":
            p0 = spec.value()
            add_call(cid, [p0, True], {}, spec.base(b, "maybe"), spec.groups(b, [("depth", p0)]), b["unit"],
                     ["depth"])
            add_call(cid, [spec.value(), False], {}, spec.base(b, "maybe not"), spec.groups(b, []), b["unit"], [])
        elif mname == "clash":
            p0 = spec.value()
            ex = [("status", "degraded"), ("pose", p0)]
            add_call(cid, [p0], {}, spec.base(b, "clash"), spec.groups(b, ex), b["unit"], ["status", "pose"])

    # tool functions calling builders
    for c in spec.callers:
        b = spec.builder(c["target"])
        unit = spec.root_of(b)["unit"]
        add_callable(c["id"], c["module"], c["name"], "caller", None)
        kind = c["kind"]

        def extras_of(vals, n, idx=None, c=c):
            pick = range(n) if idx is None else [idx]
            return [(c["keys"][i], c["litvals"][i] if c["lits"][i] else vals[i]) for i in pick]

        vals = [spec.value() for _ in range(3)]
        text = f"{c['name']} {vals[0]}"
        if kind in ("extras", "extras2", "none"):
            ex = extras_of(vals, {"extras": 2, "extras2": 3, "none": 0}[kind])
            add_call(c["id"], vals, {}, spec.base(b, text), spec.groups(b, ex), unit, [k for k, _ in ex])
            vals = [spec.value() for _ in range(3)]
            text = f"{c['name']} {vals[0]}"
            ex = extras_of(vals, {"extras": 2, "extras2": 3, "none": 0}[kind])
            add_call(c["id"], vals, {}, spec.base(b, text), spec.groups(b, ex), unit, [k for k, _ in ex])
        elif kind == "cond":
            ex = extras_of(vals, 1)
            add_call(c["id"], vals + [True], {}, spec.base(b, text), spec.groups(b, ex), unit, [k for k, _ in ex])
            vals = [spec.value() for _ in range(3)]
            add_call(c["id"], vals + [False], {}, spec.base(b, "quiet"), spec.groups(b, []), unit, [])
        elif kind == "named":
            ex = extras_of(vals, 0, idx=2)
            add_call(c["id"], vals, {}, spec.base(b, text, code=vals[1]), spec.groups(b, ex), unit, [k for k, _ in ex])
        elif kind == "statusparam":
            ex = extras_of(vals, 0, idx=0)
            add_call(c["id"], vals, {}, spec.base(b, text, status="degraded"), spec.groups(b, ex), unit,
                     [k for k, _ in ex])
        elif kind.startswith("collide:"):
            how = kind.split(":", 1)[1]
            ex0 = extras_of(vals, 1)
            if how == "status_kw":
                ex = [("status", "degraded")] + ex0
            elif how == "content_kw":
                ex = [("content", [{"text": "replaced"}])] + ex0
            elif how == "tooluseid_kw":
                ex = [("toolUseId", f"tu-{c['name']}")] + ex0
            elif how == "chain_status":
                ex = [("status", "error")] + ex0
            elif how == "dotted":
                ex = ex0
            if how == "mapping":
                for opts in ({}, {c["keys"][0]: vals[1]}, {"status": "error", c["keys"][1]: vals[2]},
                             {"content": [{"text": "swapped in"}]}):
                    ex = list(opts.items())
                    add_call(c["id"], [vals[0], opts], {}, spec.base(b, text), spec.groups(b, ex), unit,
                             [k for k, _ in ex])
            else:
                add_call(c["id"], vals, {}, spec.base(b, text), spec.groups(b, ex), unit, [k for k, _ in ex])
        else:
            raise ValueError(kind)

    # tool functions with later writes
    for w in spec.writers:
        add_callable(w["id"], "writes", w["name"], "writer",
                     [wr["unit"] for wr in w["writes"]] + ([w["lit_extra"]["unit"]] if w["lit_extra"] else []))
        has_flag = any(wr["cond"] for wr in w["writes"])
        flags = [True, False] if has_flag else [True, True]
        for flag in flags:
            msg = spec.text()
            args = [msg]
            groups = []
            gunits = []
            if w["lit_extra"]:
                groups.append({w["lit_extra"]["key"]: w["lit_extra"]["value"]})
                gunits.append(w["lit_extra"]["unit"])
            dyn_key = dyn_val = mapping = None
            for wr in w["writes"]:
                g = {}
                for i, k in enumerate(wr["keys"]):
                    if wr["lit"][i]:
                        v = wr["litvals"][i]
                    else:
                        v = spec.value()
                        args.append(v)
                    g[k] = v
                if wr["form"] == "dyn":
                    dyn_key, dyn_val = f"dyn_{spec.fresh()}", spec.value()
                    g = {dyn_key: dyn_val}
                if wr["form"] == "mapping":
                    mapping = {}
                    for _ in range(2):
                        mapping[f"map_{spec.fresh()}"] = spec.value()
                    g = dict(mapping)
                if flag or not wr["cond"]:
                    groups.append(g)
                    gunits.append(wr["unit"])
            if dyn_key is not None:
                args += [dyn_key, dyn_val]
            if mapping is not None:
                args.append(mapping)
            if has_flag:
                args.append(flag)
            content = [{"text": msg}]
            if w["content"] == "list_json":
                content.append({"json": {"tool": w["name"]}})
            base = {"status": w["status"], "content": content}
            add_call(w["id"], args, {}, base, groups, gunits, [k for g in groups for k in g])

    units = {}
    for b in spec.fix_units():
        units[b["unit"]] = {"class": "unsafe" if b["unsafe"] else "safe", "reason": b["unsafe"]}
    return {
        "seed": spec.seed,
        "package": PKG,
        "modules": sorted({c["module"] for c in callables} | {PKG}),
        "units": units,
        "callables": callables,
        "calls": calls,
    }


def write_tree(files: dict[str, str], out: str):
    for rel, text in files.items():
        path = os.path.join(out, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)


def generate(seed: int, out: str, manifest_path: str) -> dict:
    spec = Spec(seed)
    write_tree(Renderer(spec, "orig").files(), out)
    man = manifest(spec)
    with open(manifest_path, "w", encoding="utf-8") as f:
        json.dump(man, f, indent=1)
    return man


# --------------------------------------------------------------------------
# calling one tree (in its own process)
# --------------------------------------------------------------------------


def call_tree(tree: str, man: dict) -> list:
    """Imports `tree` afresh (the package and the `strands` stub of an earlier
    tree are dropped first) and calls everything the manifest lists."""
    import importlib

    sys.dont_write_bytecode = True
    for name in list(sys.modules):
        if name.split(".")[0] in (man["package"], "strands"):
            del sys.modules[name]
    sys.path[:] = [p for p in sys.path if p not in _TREES_ON_PATH]
    _TREES_ON_PATH[:] = [os.path.abspath(tree)]
    sys.path.insert(0, _TREES_ON_PATH[0])
    importlib.invalidate_caches()

    by_id = {c["id"]: c for c in man["callables"]}
    out = []
    for call in man["calls"]:
        c = by_id[call["callable"]]
        try:
            mod = importlib.import_module(c["module"])
            if c["instance"]:
                obj = getattr(mod, c["instance"])()
                fn = getattr(obj, c["qualname"].split(".")[-1])
            else:
                fn = mod
                for part in c["qualname"].split("."):
                    fn = getattr(fn, part)
            result = fn(*copy.deepcopy(call["args"]), **copy.deepcopy(call["kwargs"]))
            text = json.dumps(result)
            out.append({"ok": json.loads(text)})
        except Exception as e:  # noqa: BLE001 - reported as a failure
            out.append({"error": f"{type(e).__name__}: {e}"})
    return out


_RESULTS: dict[tuple, list] = {}
_TREES_ON_PATH: list[str] = []


def tree_key(tree: str, manifest_path: str) -> tuple:
    parts = [os.path.abspath(tree), manifest_path]
    for rel in py_files(tree):
        with open(os.path.join(tree, rel), "rb") as f:
            parts.append((rel, f.read()))
    with open(manifest_path, "rb") as f:
        parts.append(f.read())
    return tuple(parts)


def results_of(*trees: str, manifest_path: str, batch: bool = False) -> list[list]:
    """Each tree's results (cached by content): each tree in a process of its
    own, run in parallel; with `batch`, one process calls the trees in turn,
    each imported afresh under its own sys.path (the self-test's many trees)."""
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    keys = [tree_key(t, manifest_path) for t in trees]
    todo = {}
    for tree, key in zip(trees, keys):
        if key not in _RESULTS:
            todo.setdefault(key, tree)
    groups = [list(todo.items())] if batch and todo else [[kt] for kt in todo.items()]
    procs = []
    for group in groups:
        cmd = [sys.executable, "-B", os.path.abspath(__file__), "call", *[t for _, t in group],
               "--manifest", manifest_path]
        procs.append((group, cmd, subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                                   env=env)))
    for group, cmd, p in procs:
        out, err = p.communicate()
        if p.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed:\n{err}")
        for (key, _), res in zip(group, json.loads(out)):
            _RESULTS[key] = res
    return [_RESULTS[k] for k in keys]


# --------------------------------------------------------------------------
# the checks
# --------------------------------------------------------------------------


_PARSED: dict[str, tuple] = {}


def parsed(path: str) -> tuple[ast.Module, list[str]]:
    with open(path, encoding="utf-8") as f:
        text = f.read()
    hit = _PARSED.get(path)
    if hit is None or hit[2] != text:
        hit = (ast.parse(text), text.splitlines(), text)
        _PARSED[path] = hit
    return hit[0], hit[1]


def def_source(tree: str, rel: str, qualname: str) -> str | None:
    mod, lines = parsed(os.path.join(tree, rel))
    parts = qualname.split(".")
    body = mod.body
    node = None
    for part in parts:
        node = next((n for n in body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                     and n.name == part), None)
        if node is None:
            return None
        body = node.body
    start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
    return "\n".join(lines[start - 1:node.end_lineno])


def py_files(tree: str) -> list[str]:
    found = []
    for dirpath, dirnames, filenames in os.walk(tree):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for fn in sorted(filenames):
            if fn.endswith(".py"):
                found.append(os.path.relpath(os.path.join(dirpath, fn), tree))
    return found


def expected_original(call: dict) -> dict:
    r = copy.deepcopy(call["base"])
    for g in call["groups"]:
        r.update(copy.deepcopy(g))
    return r


def check(orig: str, fixed: str, manifest_path: str, mode: str) -> dict:
    with open(manifest_path, encoding="utf-8") as f:
        man = json.load(f)
    failures: list[dict] = []
    report = {"mode": mode, "seed": man["seed"], "modules": 0, "callables": len(man["callables"]),
              "calls": 0, "calls_no_extras": 0, "calls_fix_applied": 0, "calls_fix_not_applied": 0,
              "calls_colliding": 0, "json_blocks_checked": 0, "sources_unchanged_checked": 0,
              "sources_changed_checked": 0, "files_compiled": 0}

    def fail(kind, **kw):
        failures.append({"kind": kind, **kw})

    def applied(unit):
        return unit is not None and (man["units"][unit]["class"] == "safe" or mode == "unsafe")

    # the same files, and every one compiles
    of, ff = py_files(orig), py_files(fixed)
    if of != ff:
        fail("file set differs", original=of, fixed=ff)
    report["modules"] = len(ff)
    for rel in ff:
        with open(os.path.join(fixed, rel), encoding="utf-8") as f:
            src = f.read()
        try:
            compile(src, rel, "exec", dont_inherit=True)
            report["files_compiled"] += 1
        except SyntaxError as e:
            fail("fixed file does not compile", file=rel, error=str(e))
    if failures:
        report["failures"] = failures
        return report

    # sources: a callable no applied fix rewrites is unchanged; one that an
    # applied fix rewrites has changed
    for c in man["callables"]:
        a = def_source(orig, c["file"], c["qualname"])
        b = def_source(fixed, c["file"], c["qualname"])
        if a is None or b is None:
            fail("callable not found", callable=c["id"], file=c["file"])
            continue
        units = c["rewritten_by"]
        if not any(applied(u) for u in units):
            report["sources_unchanged_checked"] += 1
            if a != b:
                why = ("a call site / chain is rewritten (a builder is fixed once, in the builder)"
                       if not units else
                       "fixes not applicable in this mode were applied: " + ", ".join(
                           f"{u} ({man['units'][u]['class']}: {man['units'][u]['reason']})" for u in units))
                fail("source changed", callable=c["id"], why=why, original=a, fixed=b)
        else:
            report["sources_changed_checked"] += 1
            if a == b:
                fail("source not fixed", callable=c["id"], units=[u for u in units if applied(u)], original=a)

    ro, rf = results_of(orig, fixed, manifest_path=manifest_path)
    by_id = {c["id"]: c for c in man["callables"]}
    for call, o, x in zip(man["calls"], ro, rf):
        report["calls"] += 1
        c = by_id[call["callable"]]
        where = {"callable": call["callable"], "file": c["file"], "args": call["args"], "kwargs": call["kwargs"]}
        if "error" in o:
            fail("original call raised (generator bug)", **where, error=o["error"])
            continue
        o = o["ok"]
        if o != expected_original(call):
            fail("original result differs from the model (generator bug)", **where, got=o,
                 expected=expected_original(call))
            continue
        if "error" in x:
            fail("fixed call raised", **where, error=x["error"], original=o)
            continue
        x = x["ok"]
        groups = call["groups"]
        moved = [g for g, u in zip(groups, call["units"]) if applied(u)]
        kept = [g for g, u in zip(groups, call["units"]) if not applied(u)]
        if call["collides"]:
            report["calls_colliding"] += 1
        if not groups:
            report["calls_no_extras"] += 1
            if x != o:
                fail("a call with no extras does not return the old result", **where, original=o, fixed=x)
            continue
        if not moved:
            report["calls_fix_not_applied"] += 1
            if x != o:
                fail("result changed although its fix is unsafe and not applied in this mode", **where,
                     units=call["units"], reasons=[man["units"][u]["reason"] for u in call["units"]],
                     original=o, fixed=x)
            continue
        report["calls_fix_applied"] += 1
        base = call["base"]
        problems = []
        if not isinstance(x, dict):
            fail("fixed result is not a dict", **where, fixed=x)
            continue
        # the keys of writes whose (unsafe) fix is not applied stay where they were
        top = {k: v for g in kept for k, v in g.items()}
        if set(x.keys()) != {"status", "content", *top}:
            problems.append(f"top-level keys {sorted(x.keys())}, expected only status and content"
                            + (f" and the unfixed {sorted(top)}" if top else ""))
        for k, v in top.items():
            if x.get(k) != v:
                problems.append(f"unfixed top-level key {k!r} is {x.get(k)!r}, expected {v!r}")
        if not call["collides"] and x.get("status") != o.get("status"):
            problems.append(f"status {x.get('status')!r} != original {o.get('status')!r}")
        if x.get("status") != base["status"]:
            problems.append(f"status {x.get('status')!r} != the builder's own {base['status']!r}")
        content = x.get("content")
        if not isinstance(content, list):
            problems.append("content is not a list")
        else:
            n = len(base["content"])
            if content[:n] != base["content"]:
                problems.append(f"content does not start with the original blocks {base['content']!r}")
            if not call["collides"] and content[:len(o["content"])] != o["content"]:
                problems.append("content does not start with the original result's blocks")
            tail = content[n:]
            want = [{"json": g} for g in moved]
            if any(isinstance(t, dict) and t.get("json") == {} for t in tail):
                problems.append("an empty json block")
            if tail != want:
                problems.append(f"blocks after the original content are {tail!r}, expected exactly {want!r}")
            else:
                for t, g in zip(tail, moved):
                    report["json_blocks_checked"] += 1
                    if list(t.keys()) != ["json"] or list(t["json"].keys()) != list(g.keys()):
                        problems.append(f"json block keys in order {list(t['json'].keys())}, expected {list(g.keys())}")
        if problems:
            fail("wrong fixed result", **where, units=call["units"], problems=problems, original=o, fixed=x,
                 source=def_source(fixed, c["file"], c["qualname"]))
    report["failures"] = failures
    return report


# --------------------------------------------------------------------------
# self-test: a reference fix passes, wrong fixes are caught
# --------------------------------------------------------------------------

MUTATIONS = [
    ("empty_block", "safe"),
    ("keep_top", "safe"),
    ("drop_key", "safe"),
    ("two_blocks", "safe"),
    ("extra_key", "unsafe"),
    ("lost_write", "safe"),
    ("swap_value", "safe"),
    ("reordered", "safe"),
    ("unsafe_applied", "safe"),
    ("unfixed_unsafe", "unsafe"),
    ("call_rewritten", "safe"),
]


def self_test() -> int:
    problems = []
    done = []
    with tempfile.TemporaryDirectory(prefix="gen-exec-self-") as tmp:
        for seed in (3, 8):
            spec = Spec(seed)
            orig = os.path.join(tmp, f"orig-{seed}")
            man_path = os.path.join(tmp, f"manifest-{seed}.json")
            generate(seed, orig, man_path)
            trees = [orig]
            for mode in MODES:
                trees.append(os.path.join(tmp, f"ref-{seed}-{mode}"))
                write_tree(Renderer(spec, mode).files(), trees[-1])
            mutated = []
            for mutation, mode in MUTATIONS:
                fx = os.path.join(tmp, f"mut-{seed}-{mutation}")
                r = Renderer(spec, mode, mutation)
                write_tree(r.files(), fx)
                mutated.append((mutation, mode, r.mutated_target, fx))
                trees.append(fx)
            results_of(*trees, manifest_path=man_path, batch=True)
            for mode in MODES:
                fx = os.path.join(tmp, f"ref-{seed}-{mode}")
                rep = check(orig, fx, man_path, mode)
                if rep["failures"]:
                    problems.append(f"seed {seed}: the reference fix fails in {mode} mode: "
                                    f"{json.dumps(rep['failures'][:3], indent=1)}")
                if rep["calls_fix_applied"] == 0 or rep["calls_no_extras"] == 0:
                    problems.append(f"seed {seed} {mode}: the checks saw no fixed call: {rep}")
                done.append(f"reference fix seed {seed} {mode}: {rep['calls']} calls pass")
            # a copy of the original is a wrong fix in both modes
            rep = check(orig, orig, man_path, "safe")
            if not rep["failures"]:
                problems.append(f"seed {seed}: an unfixed tree passes")
            for mutation, mode, target, fx in mutated:
                if target is None:
                    problems.append(f"seed {seed}: mutation {mutation} found nothing to mutate")
                    continue
                rep = check(orig, fx, man_path, mode)
                if not rep["failures"]:
                    problems.append(f"seed {seed}: mutation {mutation} of {target} ({mode}) went unnoticed")
                else:
                    done.append(f"seed {seed}: {mutation} of {target} caught: {rep['failures'][0]['kind']}")
    print(json.dumps({"self_test": "failed" if problems else "passed", "caught": done, "problems": problems},
                     indent=1))
    return 1 if problems else 0


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv == ["--self-test"]:
        return self_test()
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("gen")
    g.add_argument("out")
    g.add_argument("--seed", type=int, required=True)
    g.add_argument("--manifest", required=True)
    r = sub.add_parser("run")
    r.add_argument("orig")
    r.add_argument("fixed")
    r.add_argument("manifest")
    r.add_argument("--mode", choices=MODES, required=True)
    c = sub.add_parser("call")
    c.add_argument("trees", nargs="+")
    c.add_argument("--manifest", required=True)
    a = ap.parse_args(argv)
    if a.cmd == "gen":
        man = generate(a.seed, a.out, a.manifest)
        print(json.dumps({"seed": a.seed, "files": len(py_files(a.out)), "callables": len(man["callables"]),
                          "calls": len(man["calls"])}))
        return 0
    if a.cmd == "call":
        with open(a.manifest, encoding="utf-8") as f:
            man = json.load(f)
        print(json.dumps([call_tree(t, man) for t in a.trees]))
        return 0
    rep = check(a.orig, a.fixed, a.manifest, a.mode)
    print(json.dumps(rep, indent=1))
    return 1 if rep["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
