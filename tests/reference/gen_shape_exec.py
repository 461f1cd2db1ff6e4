"""Execution check of the fixes that reshape a tool result (TS005, TS007).

    gen_shape_exec.py gen SEED DIR     writes generated tools and DIR/manifest.json
    gen_shape_exec.py run ORIG FIXED   calls every tool of both trees and checks
    gen_shape_exec.py --self-test      the checker accepts a right reshape and
                                       rejects each kind of wrong one

Each generated module holds Strands-style tools (a local `tool` decorator)
returning dicts that are not tool results (status without content, content
without status: TS005) or whose content is a string or a tuple (TS007).
The manifest says, per tool, whether the fix is expected to reshape it or to
leave it (a spread, a comment, a content that is not a list display).

What a reshaped result must be (README, "TS005"/"TS007"): a real tool
result (status and content, toolUseId kept, no other key; status one of
success/error/degraded; content a non-empty list of blocks, each with
exactly one block key), with the same status (a dict without one gets
"success", which is what the agent was told), and every original value
present: an evident message as a text block (its str), the other keys with
the same values in json blocks, the original content blocks first. A tool
left alone returns exactly what it returned before.

Written from the rules' description, not from toolshape's code.
"""

import importlib.util
import json
import os
import random
import sys

MESSAGE_KEYS = ["error", "message", "msg", "detail"]
BLOCK_KEYS = {"text", "json", "image", "document", "video"}
STATUSES = {"success", "error", "degraded"}
ARGS = [0, 7, "abc", [1, 2]]

# Values a message may be written as, by source text (x is the argument).
MESSAGES = ['"failed"', 'f"bad input {x!r}"', "x", "str(x)", "len(str(x))", "'a' 'b'", '", ".join(["p", "q"])']
# Values of other keys.
EXTRAS = ["3", "True", "None", "x", "[1, 2, x]", '{"deep": {"n": 1}}', "2.5", '"text"', "(1, 2)"]
EXTRA_KEYS = ["code", "retry", "frames", "path", "size_bytes", "trace", "elapsed"]


def gen_tool(rng, name):
    """(source, expect) of one generated tool."""
    kind = rng.choice(["no_content", "no_content", "no_content", "no_status", "str_content", "tuple_content", "left"])
    q = rng.choice(['"', "'"])

    def key(k):
        return f"{q}{k}{q}"

    def extras(n):
        keys = rng.sample(EXTRA_KEYS, n)
        return [f"{key(k)}: {rng.choice(EXTRAS)}" for k in keys]

    status = rng.choice(["error", "success", "degraded", "error"])
    if kind == "no_content":
        pairs = [f"{key('status')}: {key(status)}"]
        messages = rng.sample(MESSAGE_KEYS, rng.choice([0, 1, 1, 1, 2]))
        pairs += [f"{key(m)}: {rng.choice(MESSAGES)}" for m in messages]
        pairs += extras(rng.choice([0, 1, 2, 3]) if messages else rng.choice([1, 2]))
        if rng.random() < 0.2:
            pairs.append(f"{key('toolUseId')}: {key('t-1')}")
        rng.shuffle(pairs)
        expect = "fixed"
    elif kind == "no_status":
        content = rng.choice([f"[{{{key('text')}: {key('done')}}}]", f"[{{{key('json')}: {{{key('n')}: x}}}}]", key("all done")])
        pairs = [f"{key('content')}: {content}"] + extras(rng.choice([0, 1, 2]))
        if rng.random() < 0.2:
            pairs.append(f"{key('toolUseId')}: {key('t-2')}")
        rng.shuffle(pairs)
        expect = "fixed"
    elif kind == "str_content":
        pairs = [f"{key('status')}: {key(status)}", f"{key('content')}: {key('plain text')}"]
        expect = "fixed"
    elif kind == "tuple_content":
        pairs = [f"{key('status')}: {key(status)}", f"{key('content')}: ({{{key('text')}: str(x)}}, {{{key('json')}: {{{key('x')}: x}}}})"]
        expect = "fixed"
    else:
        pairs = rng.choice([
            [f"{key('status')}: {key('error')}", "**{'code': 1}"],
            [f"{key('content')}: {key('queued ')} + str(x)"],
            [f"{key('status')}: {key('error')}"],
        ])
        expect = "left"
    if rng.random() < 0.4 and kind != "left":
        inner = " " * 12
        body = "{\n" + "".join(f"{inner}{p},\n" for p in pairs) + " " * 8 + "}"
        if rng.random() < 0.5:
            body = body.replace(",\n" + " " * 8 + "}", "\n" + " " * 8 + "}")
    else:
        body = "{" + ", ".join(pairs) + "}"
    src = f"@tool\ndef {name}(x):\n    if x is not None:\n        return {body}\n    return None\n"
    return src, expect


def gen(seed, out):
    rng = random.Random(seed)
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "pyproject.toml"), "w") as f:
        f.write("[project]\nname = 'gentools'\n")
    manifest = []
    for m in range(8):
        module = f"shapes_{m}"
        parts = ['"""Generated tools whose results the SDK would rewrap."""\n\n\ndef tool(f):\n    return f\n']
        for t in range(6):
            name = f"t{m}_{t}"
            src, expect = gen_tool(rng, name)
            parts.append(src)
            manifest.append({"module": module, "tool": name, "expect": expect})
        with open(os.path.join(out, module + ".py"), "w") as f:
            f.write("\n\n".join(parts))
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def problems_of(before, after):
    """What is wrong with `after` as the reshape of `before` (empty: right)."""
    out = []
    if not isinstance(after, dict):
        return [f"not a dict: {after!r}"]
    if set(after) - {"status", "content", "toolUseId"} or not {"status", "content"} <= set(after):
        out.append(f"top-level keys {sorted(after)}")
    if after.get("status") not in STATUSES:
        out.append(f"status {after.get('status')!r}")
    want_status = before.get("status", "success")
    if after.get("status") != want_status:
        out.append(f"status {after.get('status')!r}, was {want_status!r}")
    if "toolUseId" in before and after.get("toolUseId") != before["toolUseId"]:
        out.append("toolUseId lost")
    content = after.get("content")
    if not isinstance(content, list) or not content:
        return out + [f"content {content!r}"]
    texts, jsons = [], {}
    for block in content:
        if not isinstance(block, dict) or len(set(block) & BLOCK_KEYS) != 1 or set(block) - BLOCK_KEYS:
            out.append(f"block {block!r}")
            continue
        if "text" in block:
            if not isinstance(block["text"], str):
                out.append(f"text block holds {type(block['text']).__name__}")
            texts.append(block["text"])
        if "json" in block and isinstance(block["json"], dict):
            for k, v in block["json"].items():
                if k in jsons:
                    out.append(f"json key {k!r} twice")
                jsons[k] = v
    old = before.get("content")
    if isinstance(old, str):
        if old not in texts:
            out.append("the string content is not a text block")
    elif isinstance(old, (list, tuple)):
        if content[: len(old)] != list(old):
            out.append("the original blocks are not kept first")
    moved = {k: v for k, v in before.items() if k not in ("status", "content", "toolUseId")}
    for k, v in moved.items():
        if k in jsons:
            if jsons[k] != v:
                out.append(f"json {k!r} is {jsons[k]!r}, was {v!r}")
        elif not (k in MESSAGE_KEYS and str(v) in texts):
            out.append(f"value of {k!r} lost")
    for k in jsons:
        if k not in moved and not (isinstance(old, (list, tuple)) and any("json" in b and k in b["json"] for b in old)):
            out.append(f"json key {k!r} is new")
    extra_texts = len(texts) - sum(1 for b in (old if isinstance(old, (list, tuple)) else []) if "text" in b)
    if extra_texts > 1:
        out.append("more than one text block added")
    return out


def run(orig, fixed):
    manifest = json.load(open(os.path.join(orig, "manifest.json")))
    failures, reshaped, left = [], 0, 0
    modules = {}
    for entry in manifest:
        m = entry["module"]
        if m not in modules:
            modules[m] = (load(os.path.join(orig, m + ".py"), "orig_" + m), load(os.path.join(fixed, m + ".py"), "fixed_" + m))
        a, b = modules[m]
        for arg in ARGS:
            before = getattr(a, entry["tool"])(arg)
            after = getattr(b, entry["tool"])(arg)
            where = f"{m}.{entry['tool']}({arg!r})"
            if entry["expect"] == "left":
                left += 1
                if after != before:
                    failures.append(f"{where}: left tool changed: {before!r} -> {after!r}")
                continue
            reshaped += 1
            for p in problems_of(before, after):
                failures.append(f"{where}: {p}: {before!r} -> {after!r}")
    for f in failures[:20]:
        print("FAIL", f)
    print(json.dumps({"reshaped_calls": reshaped, "left_calls": left, "failures": len(failures)}))
    return 1 if failures else 0


def self_test():
    """A right reshape passes; each wrong one is caught."""
    before = {"status": "error", "error": ValueError("boom").args[0], "code": 3, "toolUseId": "t"}
    right = {"status": "error", "content": [{"text": "boom"}, {"json": {"code": 3}}], "toolUseId": "t"}
    assert problems_of(before, right) == [], problems_of(before, right)
    assert problems_of({"content": "hi"}, {"status": "success", "content": [{"text": "hi"}]}) == []
    blocks = [{"text": "a"}]
    assert problems_of({"content": blocks, "n": 1}, {"status": "success", "content": blocks + [{"json": {"n": 1}}]}) == []
    wrong = [
        (before, {**right, "status": "success"}),
        (before, {"status": "error", "content": [{"text": "boom"}], "toolUseId": "t"}),
        (before, {"status": "error", "content": [{"json": {"code": 4}}, {"text": "boom"}], "toolUseId": "t"}),
        (before, {**right, "code": 3}),
        (before, {"status": "error", "content": [], "toolUseId": "t"}),
        (before, {"status": "error", "content": [{"text": "boom", "json": {}}], "toolUseId": "t"}),
        (before, {"status": "error", "content": [{"text": "boom"}, {"json": {"code": 3}}]}),
        (before, {"status": "error", "content": [{"text": 3}, {"json": {"code": 3}}], "toolUseId": "t"}),
        ({"content": "hi"}, {"status": "error", "content": [{"text": "hi"}]}),
        ({"content": "hi"}, {"status": "success", "content": [{"text": "ho"}]}),
        ({"content": blocks, "n": 1}, {"status": "success", "content": [{"json": {"n": 1}}] + blocks}),
        ({"status": "ok", "content": "x"}, {"status": "ok", "content": [{"text": "x"}]}),
        ({"status": "error", "msg": "a", "n": 1}, {"status": "error", "content": [{"text": "a"}, {"text": "1"}]}),
        ({"status": "error", "n": 1}, {"status": "error", "content": [{"json": {"n": 1, "m": 2}}]}),
    ]
    for i, (b, a) in enumerate(wrong):
        assert problems_of(b, a), f"wrong reshape {i} not caught: {a!r}"
    print(f"self-test: 3 right reshapes pass, {len(wrong)} wrong ones caught")
    return 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--self-test"]:
        sys.exit(self_test())
    if len(sys.argv) == 4 and sys.argv[1] == "gen":
        gen(int(sys.argv[2]), sys.argv[3])
        sys.exit(0)
    if len(sys.argv) == 4 and sys.argv[1] == "run":
        sys.exit(run(sys.argv[2], sys.argv[3]))
    print(__doc__)
    sys.exit(2)
