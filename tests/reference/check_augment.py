#!/usr/bin/env python3
"""Checks text augmentations produced by `toolshape fix`.

Usage:
    python3 check_augment.py CASES.json
    python3 check_augment.py --self-test

CASES.json is a list of {"name", "line", "original_source", "fixed_source"}:
a file before and after the fix, and the line of a dict whose text the fixer
says it augmented.  The fixer's own before/after strings are not trusted:
the original and the fixed tree are walked together (fix_semantics.py's
walker, which pairs every original dict with its fixed form), and the
augmented texts are read from the sources themselves.  For every file:
  * the fixed source compiles with this interpreter (on Python < 3.12 this
    is the 3.8-3.11 f-string grammar: no reused quote, no backslash in a
    replacement field);
  * a TS004 write statement (docs/rules.md, "### TS004") is never
    text-augmented: it pairs with itself or with its rewrite into a json
    block (fix_semantics.py judges which one the mode needed);
  * every case's line is the line of a fixed dict (in the original or the
    fixed source) whose first {"text": ...} block changed, and every
    changed text is claimed by a case;
  * for each: on Python >= 3.12, where the grammar no longer says so, no
    replacement field of the fixed text holds its own quote or a backslash;
    both texts (`ast.get_source_segment` of the original and the fixed
    value) are evaluated with a distinct value for every free name (a
    sample whose str() names it: "<v:cfg.limits['max']>"), and the fixed
    text must equal ORIGINAL + " (" + "k=v, ..." + ")" where every k is a
    moved key and v the str() of the value the fixed json block holds for k
    under the same bindings (a literal number may also read as written).
    A swapped value, or the value of a duplicate entry the json block
    overrides, fails.
Prints a JSON report and exits 1 on any failure.
"""

import ast
import builtins
import json
import os
import sys

sys.dont_write_bytecode = True


# ----------------------------------------------------------------------------
# evaluation with a distinct value per free name


class Sample:
    """Stands for the value of an expression path: attributes, items, calls
    and operators give further samples, each with its own str()."""

    __slots__ = ("_path",)

    def __init__(self, path):
        object.__setattr__(self, "_path", path)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return Sample("%s.%s" % (self._path, name))

    def __getitem__(self, key):
        return Sample("%s[%r]" % (self._path, key))

    def __call__(self, *args, **kwargs):
        return Sample("%s(...)" % self._path)

    def __len__(self):
        return 3

    def __iter__(self):
        return iter(())

    def __bool__(self):
        return True

    def keys(self):
        return []

    def __str__(self):
        return "<v:%s>" % self._path

    __repr__ = __str__

    def __format__(self, spec):
        try:
            return format(str(self), spec)
        except (ValueError, TypeError):
            return str(self)


def _binary(symbol):
    def op(self, other):
        return Sample("(%s %s %s)" % (getattr(self, "_path", self), symbol, getattr(other, "_path", other)))

    def rop(self, other):
        return Sample("(%s %s %s)" % (getattr(other, "_path", other), symbol, getattr(self, "_path", self)))

    return op, rop


for _name, _symbol in (("add", "+"), ("sub", "-"), ("mul", "*"), ("truediv", "/"), ("floordiv", "//"),
                       ("mod", "%"), ("pow", "**"), ("or", "|"), ("and", "&"), ("xor", "^"), ("matmul", "@"),
                       ("lshift", "<<"), ("rshift", ">>")):
    _op, _rop = _binary(_symbol)
    setattr(Sample, "__%s__" % _name, _op)
    setattr(Sample, "__r%s__" % _name, _rop)
Sample.__neg__ = lambda self: Sample("(-%s)" % self._path)
Sample.__pos__ = lambda self: Sample("(+%s)" % self._path)
Sample.__invert__ = lambda self: Sample("(~%s)" % self._path)


class Bindings(dict):
    """Globals and locals at once: a free name is Sample(name)."""

    def __missing__(self, name):
        if hasattr(builtins, name):
            return getattr(builtins, name)
        return Sample(name)


def bindings():
    env = Bindings()
    env["__builtins__"] = builtins
    return env


def evaluate(source, env):
    # Parenthesized: an implicit concatenation may span lines.
    code = compile("(%s\n)" % source, "<expr>", "eval", dont_inherit=True)
    return eval(code, env, env)


# ----------------------------------------------------------------------------
# the check of one augmented text


def quote_of(literal_source):
    """The quote character of the last string token of a literal."""
    return literal_source.rstrip()[-1]


def fields_reuse_quote(after):
    quote = quote_of(after)
    after = "(%s\n)" % after
    tree = ast.parse(after, mode="eval")
    bad = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FormattedValue):
            segment = ast.get_source_segment(after, node.value) or ""
            if quote in segment or "\\" in segment:
                bad.append(segment)
    return bad


def _const_key(k):
    return k.value if isinstance(k, ast.Constant) and isinstance(k.value, str) else None


def _is_tool_result(d):
    keys = {_const_key(k) for k in d.keys if k is not None}
    return "status" in keys and "content" in keys


def json_target(fixed_dict):
    """The dict of the last {"json": {...}} block of the fixed content that
    is not itself a tool result: where the moved entries went."""
    content = None
    for k, v in zip(fixed_dict.keys, fixed_dict.values):
        if _const_key(k) == "content":
            content = v
    if not isinstance(content, ast.List):
        return None
    found = None
    for e in content.elts:
        if isinstance(e, ast.Dict) and len(e.keys) == 1 and _const_key(e.keys[0]) == "json":
            if isinstance(e.values[0], ast.Dict) and not _is_tool_result(e.values[0]):
                found = e.values[0]
    return found


def moved_keys(orig_dict, fixed_dict):
    """Constant keys of the original's top level that the fix moved, in order."""
    left = {}
    for k in fixed_dict.keys:
        ck = _const_key(k)
        if ck is not None:
            left[ck] = left.get(ck, 0) + 1
    out = []
    for k in orig_dict.keys:
        ck = _const_key(k)
        if ck is None:
            continue
        if left.get(ck, 0):
            left[ck] -= 1
        elif ck not in out:
            out.append(ck)
    return out


def renderings(node, fixed_source, env):
    """How the value of `node` may read in the text: its str(), or a literal
    number as written."""
    out = [str(evaluate(ast.get_source_segment(fixed_source, node), env))]
    inner = node.operand if isinstance(node, ast.UnaryOp) else node
    if isinstance(inner, ast.Constant) and not isinstance(inner.value, str):
        out.append(ast.get_source_segment(fixed_source, node))
    return out


def match_suffix(inner, candidates):
    """`inner` is "k=v, k=v" over distinct candidate keys: the keys, or None."""

    def go(pos, used):
        for key, reads in candidates.items():
            if key in used:
                continue
            for r in reads:
                token = "%s=%s" % (key, r)
                if not inner.startswith(token, pos):
                    continue
                end = pos + len(token)
                if end == len(inner):
                    return used + [key]
                if inner.startswith(", ", end):
                    found = go(end + 2, used + [key])
                    if found:
                        return found
        return None

    return go(0, [])


EMPTY_TEXT = []  # augmented empty texts, "(k=v)" without the leading space


def check_augmented(original_source, orig_text, fixed_source, fixed_text, orig_dict, fixed_dict):
    """None, or what is wrong with the augmentation of `orig_text` (a node of
    `original_source`) into `fixed_text` (a node of `fixed_source`)."""
    before_src = ast.get_source_segment(original_source, orig_text)
    after_src = ast.get_source_segment(fixed_source, fixed_text)
    if before_src is None or after_src is None:
        return "no source segment for the text"
    if sys.version_info >= (3, 12):
        bad = fields_reuse_quote(after_src)
        if bad:
            return "fields reuse the enclosing quote or a backslash: %s" % bad
    env = bindings()
    try:
        before = evaluate(before_src, env)
        after = evaluate(after_src, env)
    except Exception as e:  # noqa: BLE001 - report any evaluation failure
        return "evaluating %r / %r failed: %r" % (before_src, after_src, e)
    if not (isinstance(before, str) and isinstance(after, str)):
        return "texts are not strings: %r, %r" % (before, after)
    if not (after.startswith(before) and len(after) > len(before)):
        return "%r does not extend %r" % (after, before)
    target = json_target(fixed_dict)
    if target is None:
        return "the fixed dict has no json block"
    candidates = {}
    overridden = {}  # key -> renderings of entries a later duplicate overrides
    problems = []
    for key in moved_keys(orig_dict, fixed_dict):
        value = None
        for k, v in zip(target.keys, target.values):
            if _const_key(k) == key:
                value = v  # the last one wins, as in the dict display
        if value is None:
            problems.append("moved key %r is not in the json block" % key)
            continue
        try:
            candidates[key] = renderings(value, fixed_source, env)
        except Exception:  # noqa: BLE001 - a value that cannot be shown this way
            continue
        for k, v in zip(target.keys, target.values):
            if _const_key(k) == key and v is not value:
                try:
                    overridden.setdefault(key, []).extend(renderings(v, fixed_source, env))
                except Exception:  # noqa: BLE001
                    pass
    rest = after[len(before):]
    # The README's form is TEXT + " (k=v, ...)"; an empty TEXT gets no space
    # (toolshape's behaviour, not in the README: counted as EMPTY_TEXT).
    opening = "(" if before == "" else " ("
    ok = rest.startswith(opening) and rest.endswith(")") and match_suffix(rest[len(opening):-1], candidates)
    if ok and before == "":
        EMPTY_TEXT.append(after)
    if not ok:
        shown = {k: v[0] for k, v in candidates.items()}
        problems.append("%r is not %r + ' (k=v, ...)' with the json block's values %r" % (after, before, shown))
        loose = {k: v + overridden.get(k, []) for k, v in candidates.items()}
        if overridden and rest.startswith(opening) and rest.endswith(")") and match_suffix(rest[len(opening):-1], loose):
            problems.append("it shows the value of a duplicate entry that a later one overrides (keys %s)"
                            % sorted(overridden))
    return "; ".join(problems) or None


# ----------------------------------------------------------------------------
# the cases of one file


def check_file(name, original_source, fixed_source, lines, failures):
    """Checks the cases `lines` of one file; returns the number checked."""
    import fix_semantics  # here: fix_semantics imports this module

    try:
        compile(fixed_source, name, "exec", dont_inherit=True)
    except SyntaxError as e:
        try:
            compile(original_source, name, "exec", dont_inherit=True)
        except SyntaxError:
            pass  # broken on purpose before the fix; toolshape guards that it adds no error
        else:
            failures.append("%s: the fixed source does not compile: %s" % (name, e))
            return 0
    try:
        orig = ast.parse(original_source)
        fixed = ast.parse(fixed_source)
    except SyntaxError:
        orig = fixed = None
    if orig is None:
        failures.append("%s: cannot pair the dicts of a file that does not parse" % name)
        return 0
    ctx = fix_semantics.FileContext(orig, original_source.encode("utf-8"))
    infos = {}
    for node in ast.walk(orig):
        if isinstance(node, ast.Dict):
            info = fix_semantics.classify(node, ctx)
            if info is not None:
                infos[id(node)] = info
    # TS004 write statements are never text-augmented: each is paired with
    # itself or with its rewrite into a json block (whichever the fix chose;
    # fix_semantics.py judges which one it had to be).
    writes = fix_semantics.write_infos(orig, ctx)
    walker = fix_semantics.Walker(infos, "default", writes)
    walker.original_ids = {id(n) for n in ast.walk(orig) if isinstance(n, ast.Dict)}
    walker.node(orig, fixed)
    for line, message in walker.mismatches:
        failures.append("%s:%s: the fix does not pair with the original: %s" % (name, line, message))
    texts = list(walker.texts)
    claimed = [False] * len(texts)
    checked = 0
    for line in lines:
        pick = None
        for want in ("original", "fixed"):
            for i, (_, _, od, fd) in enumerate(texts):
                if not claimed[i] and (od if want == "original" else fd).lineno == line:
                    pick = i
                    break
            if pick is not None:
                break
        if pick is None:
            failures.append("%s:%d: no changed text block of a fixed dict at this line" % (name, line))
            continue
        claimed[pick] = True
        ov, fv, od, fd = texts[pick]
        checked += 1
        problem = check_augmented(original_source, ov, fixed_source, fv, od, fd)
        if problem:
            failures.append("%s:%d: %s" % (name, line, problem))
    for i, c in enumerate(claimed):
        if not c:
            failures.append("%s:%d: a text changed that no case claims: %r" % (
                name, texts[i][2].lineno, ast.get_source_segment(fixed_source, texts[i][1])))
    return checked


def check_cases(cases):
    failures = []
    files = {}
    for case in cases:
        key = (case["name"], case["original_source"], case["fixed_source"])
        files.setdefault(key, []).append(case["line"])
    checked = 0
    for (name, original_source, fixed_source), lines in files.items():
        checked += check_file(name, original_source, fixed_source, lines, failures)
    return {"cases": len(cases), "files": len(files), "checked": checked, "augmented_empty_texts": len(EMPTY_TEXT),
            "python": sys.version.split()[0], "failures": failures}


# ----------------------------------------------------------------------------
# negative controls

ORIGINAL = '''\
def report(rows, meta, cfg):
    return {
        "status": "success",
        "content": [{"text": "Done."}],
        "rows": rows,
        "frames": meta.frames,
        "limit": cfg.limits["max"],
        "hex": 0x1F,
    }
'''

FIXED = '''\
def report(rows, meta, cfg):
    return {
        "status": "success",
        "content": [
            {"text": f"Done. (rows={rows}, frames={meta.frames}, limit={cfg.limits["max"]}, hex=0x1F)"},
            {"json": {"rows": rows, "frames": meta.frames, "limit": cfg.limits["max"], "hex": 0x1F}},
        ],
    }
'''.replace('cfg.limits["max"]}', "cfg.limits['max']}")

DUPLICATE_ORIGINAL = '''\
def report(a, b):
    return {"status": "success", "content": [{"text": "Done."}], "n": a, "n": b}
'''

DUPLICATE_FIXED = '''\
def report(a, b):
    return {"status": "success", "content": [{"text": f"Done. (n=%s)"}, {"json": {"n": a, "n": b}}]}
'''

# A TS004 write statement beside an augmented dict: rewritten into a json
# block (or not), never text-augmented, and paired with its rewrite.
WRITE_ORIGINAL = '''\
def report(rows, size):
    out = {"status": "success", "content": [{"text": "Done."}], "rows": rows}
    out["size"] = size
    return out
'''

WRITE_FIXED = '''\
def report(rows, size):
    out = {"status": "success", "content": [{"text": f"Done. (rows={rows})"}, {"json": {"rows": rows}}]}
    out["content"].append({"json": {"size": size}})
    return out
'''


def self_test():
    controls = [
        ("an augmentation beside a rewritten write", WRITE_ORIGINAL, WRITE_FIXED, [2], None),
        ("an augmentation beside a write left as it is", WRITE_ORIGINAL,
         WRITE_FIXED.replace('out["content"].append({"json": {"size": size}})', 'out["size"] = size'), [2], None),
        ("a write rewritten with another value", WRITE_ORIGINAL,
         WRITE_FIXED.replace('{"size": size}', '{"size": rows}'), [2], "does not pair"),
        ("a write augmenting the text", WRITE_ORIGINAL,
         WRITE_FIXED.replace('(rows={rows})', '(rows={rows}, size={size})'), [2], "is not"),
        ("the correct augmentation", ORIGINAL, FIXED, [2], None),
        ("the last duplicate shown", DUPLICATE_ORIGINAL, DUPLICATE_FIXED.replace("%s", "{b}"), [2], None),
        ("a swapped value", ORIGINAL, FIXED.replace("rows={rows}, frames={meta.frames}", "rows={meta.frames}, frames={rows}"),
         [2], "is not"),
        ("a value from an overridden duplicate", DUPLICATE_ORIGINAL, DUPLICATE_FIXED.replace("%s", "{a}"), [2], "is not"),
        ("a wrong literal", ORIGINAL, FIXED.replace("hex=0x1F)", "hex=0x1E)"), [2], "is not"),
        ("a key not moved", ORIGINAL, FIXED.replace("hex=0x1F)", "hex=0x1F, status=success)"), [2], "is not"),
        ("a deleted moved entry", ORIGINAL, FIXED.replace(', "hex": 0x1F}}', "}}"), [2], "does not pair"),
        ("the original text changed", ORIGINAL, FIXED.replace('f"Done. (', 'f"Done (', 1), [2], "does not extend"),
        ("no augmentation where one is claimed", ORIGINAL,
         FIXED.replace(', hex=0x1F)"}', ', hex=0x1F)"}').replace(
             'f"Done. (rows={rows}, frames={meta.frames}, limit={cfg.limits[\'max\']}, hex=0x1F)"', '"Done."'),
         [2], "no changed text block"),
        ("an augmentation nobody claims", ORIGINAL, FIXED, [], "no case claims"),
    ]
    results, failed = [], False
    for name, orig, fixed, lines, expect in controls:
        cases = [{"name": "selftest.py", "line": ln, "original_source": orig, "fixed_source": fixed} for ln in lines]
        if not cases:
            failures = []
            check_file("selftest.py", orig, fixed, [], failures)
        else:
            failures = check_cases(cases)["failures"]
        ok = (not failures) if expect is None else any(expect in f for f in failures)
        failed |= not ok
        results.append({"control": name, "caught" if expect else "accepted": ok, "messages": failures[:3]})
    print(json.dumps({"self_test": results, "ok": not failed}, indent=1))
    return 1 if failed else 0


def main(argv):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    if argv == ["--self-test"]:
        return self_test()
    if len(argv) != 1:
        sys.stderr.write("usage: check_augment.py CASES.json | --self-test\n")
        return 2
    with open(argv[0], encoding="utf-8") as fh:
        cases = json.load(fh)
    report = check_cases(cases)
    print(json.dumps(report, indent=1, ensure_ascii=False))
    return 1 if report["failures"] or not report["checked"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
