#!/usr/bin/env python3
"""Reference semantics of `toolshape fix`, on Python's own AST.

Usage: python3 fix_semantics.py ORIGINAL_DIR FIXED_DIR

For every .py/.pyi file under ORIGINAL_DIR, the file of the same relative
path under FIXED_DIR must:
  * parse with ast.parse (the fix never breaks the program's syntax);
  * equal, as an AST (ast.dump without positions), the original with every
    mechanically fixable violating tool-result dict transformed the way the
    contract says: its extra constant-string keys and **spreads removed from
    the top level and appended, in order, to the dict literal of the last
    {"json": {...}} block of a list-literal content, or as a new
    {"json": {...}} block at the end of that list, or (content not a list
    literal) content becomes [*content, {"json": {...}}]. A json dict that is
itself tool-result-shaped is never merged into.
Dicts left for manual repair must be unchanged: content a literal that is
not a list, a dict inside an f-string, two "content" keys, or a walrus-bound
name shared between a moved entry and a piece of the dict it moves across
(one binds what the other reads, so moving would change what is read).

Prints one JSON object: {"files": N, "compared": N, "transformed_dicts": N,
"manual_walrus": N, "mismatches": [...], "syntax_errors": [...]} and exits 1
if any mismatch or syntax error was found.
"""

import ast
import json
import os
import sys

ALLOWED = {"status", "content", "toolUseId"}
NOT_LIST = (ast.Constant, ast.Dict, ast.DictComp, ast.Set, ast.SetComp, ast.Lambda, ast.JoinedStr)


def const_key(k):
    if isinstance(k, ast.Constant) and isinstance(k.value, str):
        return k.value
    return None


def is_tool_result(d):
    keys = {const_key(k) for k in d.keys if k is not None}
    return "status" in keys and "content" in keys


def violating(d):
    return [i for i, k in enumerate(d.keys) if k is None or (const_key(k) is not None and const_key(k) not in ALLOWED)]


def in_fstring_dicts(tree):
    """Ids of dicts that stand inside an f-string."""
    inside = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            for sub in ast.walk(node):
                if isinstance(sub, ast.Dict):
                    inside.add(id(sub))
    return inside


def json_block_dict(element):
    if isinstance(element, ast.Dict) and len(element.keys) == 1 and const_key(element.keys[0]) == "json":
        return element.values[0]
    return None


def names(node):
    """(bound by walrus, read) names of an evaluated piece; lambda bodies are
    not evaluated, their parameters' defaults are."""
    binds, reads = set(), set()
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, ast.Lambda):
            stack.extend(d for d in n.args.defaults + n.args.kw_defaults if d is not None)
            continue
        if isinstance(n, ast.NamedExpr):
            binds.add(n.target.id)
        if isinstance(n, ast.Name):
            reads.add(n.id)
        stack.extend(ast.iter_child_nodes(n))
    return binds, reads


def pair_names(k, v):
    b1, r1 = names(v)
    if k is None:
        return b1, r1
    b2, r2 = names(k)
    return b1 | b2, r1 | r2


def merge_target(content):
    """The last {"json": <dict>} block of a list whose dict is not itself a
    tool result, as (block, dict)."""
    if not isinstance(content, ast.List):
        return None
    found = None
    for e in content.elts:
        t = json_block_dict(e)
        if isinstance(t, ast.Dict) and not is_tool_result(t):
            found = (e, t)
    return found


def walrus_blocks(d, content_idx, moved):
    """Whether a moved entry and a piece it moves across share a walrus name."""
    units, original, rewritten, moved_ids = [], [], [], []
    insertion = 0
    for i, (k, v) in enumerate(zip(d.keys, d.values)):
        if i == content_idx:
            target = merge_target(v)
            if isinstance(v, ast.List):
                children, splice_after = [], None
                for e in v.elts:
                    if target is not None and e is target[0]:
                        children.extend(zip(target[1].keys, target[1].values))
                        splice_after = len(children)
                    else:
                        children.append((None, e))
            else:
                children, splice_after = [(None, v)], None
            for j, (ck, cv) in enumerate(children):
                if splice_after == j:
                    insertion = len(rewritten)
                units.append((pair_names(ck, cv), False))
                original.append(len(units) - 1)
                rewritten.append(len(units) - 1)
            if splice_after is None or splice_after == len(children):
                insertion = len(rewritten)
            continue
        units.append((pair_names(k, v), i in moved))
        uid = len(units) - 1
        original.append(uid)
        (moved_ids if i in moved else rewritten).append(uid)
    rewritten = rewritten[:insertion] + moved_ids + rewritten[insertion:]
    before = {u: p for p, u in enumerate(original)}
    after = {u: p for p, u in enumerate(rewritten)}
    for m in moved_ids:
        (mb, mr), _ = units[m]
        for o, ((ob, orr), is_moved) in enumerate(units):
            if is_moved:
                continue
            if (before[m] < before[o]) != (after[m] < after[o]) and (mb & orr or ob & mr):
                return True
    return False


class Transformer(ast.NodeTransformer):
    def __init__(self, skip):
        self.skip = skip
        self.count = 0
        self.manual_walrus = 0

    def visit_Dict(self, node):
        self.generic_visit(node)  # inner dicts first
        if id(node) in self.skip or not is_tool_result(node):
            return node
        moved = violating(node)
        if not moved:
            return node
        contents = [i for i, k in enumerate(node.keys) if const_key(k) == "content"]
        if len(contents) != 1:
            return node
        content = node.values[contents[0]]
        if isinstance(content, NOT_LIST):
            return node
        if walrus_blocks(node, contents[0], set(moved)):
            self.manual_walrus += 1
            return node
        moved_keys = [node.keys[i] for i in moved]
        moved_values = [node.values[i] for i in moved]
        keep = [i for i in range(len(node.keys)) if i not in moved]
        node.keys = [node.keys[i] for i in keep]
        node.values = [node.values[i] for i in keep]
        new_block = ast.Dict(keys=[ast.Constant("json")], values=[ast.Dict(keys=moved_keys, values=moved_values)])
        if isinstance(content, ast.List):
            target = merge_target(content)
            if target is not None:
                target[1].keys.extend(moved_keys)
                target[1].values.extend(moved_values)
            else:
                content.elts.append(new_block)
        else:
            node.values[node.keys.index(next(k for k in node.keys if const_key(k) == "content"))] = ast.List(
                elts=[ast.Starred(value=content, ctx=ast.Load()), new_block], ctx=ast.Load()
            )
        self.count += 1
        return node


def main():
    orig_root, fixed_root = sys.argv[1], sys.argv[2]
    report = {"files": 0, "compared": 0, "transformed_dicts": 0, "manual_walrus": 0, "mismatches": [], "syntax_errors": []}
    for dirpath, dirnames, filenames in os.walk(orig_root):
        dirnames.sort()
        for name in sorted(filenames):
            if not name.endswith((".py", ".pyi")):
                continue
            orig_path = os.path.join(dirpath, name)
            rel = os.path.relpath(orig_path, orig_root)
            fixed_path = os.path.join(fixed_root, rel)
            report["files"] += 1
            with open(orig_path, "rb") as f:
                orig_src = f.read()
            with open(fixed_path, "rb") as f:
                fixed_src = f.read()
            try:
                orig = ast.parse(orig_src)
            except (SyntaxError, ValueError):
                continue
            try:
                fixed = ast.parse(fixed_src)
            except (SyntaxError, ValueError) as e:
                report["syntax_errors"].append(f"{rel}: {e}")
                continue
            transformer = Transformer(in_fstring_dicts(orig))
            expected = transformer.visit(orig)
            report["transformed_dicts"] += transformer.count
            report["manual_walrus"] += transformer.manual_walrus
            report["compared"] += 1
            if ast.dump(expected) != ast.dump(fixed):
                report["mismatches"].append(rel)
    print(json.dumps(report, indent=1))
    sys.exit(1 if report["mismatches"] or report["syntax_errors"] else 0)


if __name__ == "__main__":
    main()
