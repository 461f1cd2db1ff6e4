#!/usr/bin/env python3
"""Reference semantics of `toolshape fix`, on Python's own AST and tokens.

Usage:
    python3 fix_semantics.py ORIGINAL_DIR FIXED_DIR [--mode unsafe|default]
    python3 fix_semantics.py --self-test

ORIGINAL_DIR holds sources before a fix, FIXED_DIR the same tree after
`toolshape fix --unsafe-fixes --augment-text=never` (--mode unsafe, the
default) or after plain `toolshape fix` (--mode default: safe fixes only,
text augmentation on).  Written from the README ("What a fix does", "Text
augmentation", "Suppressions"), independently of toolshape's code.

Every tool-result dict with violations (extra constant-string keys or
top-level **spreads, minus entries silenced by a `# toolshape: ignore...` /
`# noqa...` comment on the dict's first line or on the entry's line) is
classed by the reference (see `classify`):

  * MANUAL, never changed: content a str/number/None/bool/dict/set/lambda/
    f-string literal (or a dict/set comprehension), a dict inside an
    f-string, two "content" keys, a walrus conflict (a moved entry and a
    piece it moves across share a walrus-bound name);
  * UNSAFE (changed only with --unsafe-fixes), with every reason: a moved
    spread after "status"/"content"/"toolUseId"; a moved spread before them
    that "could hold toolUseId" (not the `return` of an @tool function, no
    "toolUseId" key after it, not a dict display of constant keys without
    "toolUseId" whose spreads are of such displays); a moved key colliding with the json block merged into, or
    that block having a spread or computed key; a moved spread merging into
    a non-empty json block; side effects (calls, await, yield, walrus - not
    in lambda bodies) running in another order; a moved value that is a
    set, bytes, lambda or generator (also inside list/tuple/dict displays);
    a moved "cancelled" key, or a moved spread that evidently may bring one
    (see `may_bring_cancelled`);
    content that is not a list literal (a list comprehension is fine; so is
    a name, see `fresh_list_problem`, bound only to fresh lists - displays,
    comprehensions, builtin list() calls, `+= [...]` - by the innermost
    function containing the dict, not in a loop there, and read elsewhere
    only before the dict to grow or test it: .append/.extend/.insert, len(),
    `for _ in N`, `if N` / `if not N` / while; inside the dict only len(N));
  * SAFE otherwise.

For every file of the same relative path:
  * the fixed file parses, and walking the original and the fixed ASTs
    together, every dict is either unchanged or changed exactly by the
    contract's transformation (the moved entries, in order, appended to the
    last {"json": {...}} block of a list-literal content, or in a new block
    at its end, or content -> [*content, {"json": {...}}]);  nested results
    are paired the same way, wherever their outer fix moved them;
  * a dict was changed if and only if the reference expects it: SAFE and
    UNSAFE ones in --mode unsafe, SAFE ones in --mode default (each
    mismatch names file:line and the reference's reason);
  * in --mode default, the only other difference allowed is the value of
    the first {"text": ...} block of a fixed dict's content: evaluated with a
    distinct value for every free name it must extend the original text as
    "ORIGINAL (k=v, ...)" with each v the value the json block holds for a
    moved key k (check_augment.py's check);
  * the multiset of COMMENT tokens is the same;
  * every line outside the changed dicts is byte-identical: the original's
    changed regions are the outermost changed dicts (lineno..end_lineno,
    dicts sharing a line merged), the fixed file's the same dicts' new
    spans; the lines before, between and after them must be equal byte for
    byte (line endings included), and so must the text before a region on
    its first line and after it on its last line.

TS004 later writes (docs/rules.md, "TS004 key added after construction"
and "### TS004: each write statement becomes a json block"; scopes and
result names from scan.py, see `write_infos`): every write statement with
an unsilenced finding is classed MANUAL / UNSAFE / SAFE by the Fixes
section's lists (where the page leaves a point open, both readings are
accepted and the point is named in the message), and in the fixed tree it
is either the original statement (its nested dicts fixed as usual) or
exactly `N["content"].append(B)` (D's content a list display or list
comprehension) or `N["content"] = [*N["content"], B]`, B the table's json
block built from the original's own K, v, display, keywords or argument
list; "content" and "json" must use D's first quote character.  It is
rewritten iff its class is fixed in the mode.  In a def at module level or
in a module-level class with a **K parameter, `N.update(K)`,
`N.update(**K)`, `N |= K` and the `for k, v in K.items(): N[k] = v` loop may
instead become `if K:` with, on the next line one indentation unit deeper,
the append of {"json": K} (the append alone, at the statement's place,
when the statement already is the first statement of the body of an
`if K:`); their applicability hangs on calls across the project, so
they may also stay as they are (when the def returns N it is surely a
builder, and no other rewrite is accepted).  A rewritten statement
is a changed region for the line comparison, like a changed dict.

Prints one JSON report and exits 1 on any mismatch.  Mismatches whose only
cause is the "could hold toolUseId" rule go to "new_rule_mismatches".
--self-test runs the checks on hand-made wrong fixes and fails unless every
one of them is caught.
"""

import ast
import collections
import io
import json
import os
import sys
import tokenize
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # leave no __pycache__ in the source tree
import check_augment  # noqa: E402
import scan  # noqa: E402  (TS004 detection: scopes and result names)

ALLOWED = {"status", "content", "toolUseId"}
NOT_LIST = (ast.Constant, ast.Dict, ast.DictComp, ast.Set, ast.SetComp, ast.Lambda, ast.JoinedStr)
TOOL_DECORATORS = {"tool", "strands.tool", "strands.tools.tool"}
NEW_RULE = "the spread could hold toolUseId"
# (relative path, line in the fixed file) of findings toolshape left for
# manual repair because every layout would part silenced code from its
# suppression comment (--pinned-by-suppression FILE, one `path:line` a line).
PINNED = set()


# ----------------------------------------------------------------------------
# small AST helpers


def const_key(k):
    if isinstance(k, ast.Constant) and isinstance(k.value, str):
        return k.value
    return None


def may_hold_tool_use_id(mapping):
    """Whether the operand of a spread may hold the key "toolUseId": anything
    but a dict display whose keys are constants other than that string and
    whose spreads are of such displays, recursively."""
    if not isinstance(mapping, ast.Dict):
        return True
    for k, v in zip(mapping.keys, mapping.values):
        if k is None:
            if may_hold_tool_use_id(v):
                return True
        elif not isinstance(k, ast.Constant) or const_key(k) == "toolUseId":
            return True
    return False


def is_tool_result(d):
    keys = {const_key(k) for k in d.keys if k is not None}
    return "status" in keys and "content" in keys


def violating(d):
    return [i for i, k in enumerate(d.keys) if k is None or (const_key(k) is not None and const_key(k) not in ALLOWED)]


def json_block_dict(element):
    if isinstance(element, ast.Dict) and len(element.keys) == 1 and const_key(element.keys[0]) == "json":
        return element.values[0]
    return None


def is_text_block(node):
    return isinstance(node, ast.Dict) and len(node.keys) == 1 and const_key(node.keys[0]) == "text"


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


def evaluated(node):
    """The nodes evaluated when `node` is: lambda bodies are not, their
    parameters' defaults are."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        if isinstance(n, ast.Lambda):
            stack.extend(d for d in n.args.defaults + n.args.kw_defaults if d is not None)
            continue
        stack.extend(ast.iter_child_nodes(n))


EFFECTS = (ast.Call, ast.Await, ast.Yield, ast.YieldFrom, ast.NamedExpr)


def facts(*nodes):
    """(walrus-bound names, read names, has side effects) of evaluated pieces."""
    binds, reads, effects = set(), set(), False
    for node in nodes:
        if node is None:
            continue
        for n in evaluated(node):
            if isinstance(n, ast.NamedExpr):
                binds.add(n.target.id)
            elif isinstance(n, ast.Name):
                reads.add(n.id)
            if isinstance(n, EFFECTS):
                effects = True
    return binds, reads, effects


def unserializable(node):
    """A set, bytes, lambda or generator, possibly inside list/tuple/dict displays."""
    if isinstance(node, (ast.Set, ast.SetComp)):
        return "a set"
    if isinstance(node, ast.Constant) and isinstance(node.value, bytes):
        return "bytes"
    if isinstance(node, ast.Lambda):
        return "a lambda"
    if isinstance(node, ast.GeneratorExp):
        return "a generator"
    if isinstance(node, (ast.List, ast.Tuple)):
        for e in node.elts:
            r = unserializable(e.value if isinstance(e, ast.Starred) else e)
            if r:
                return r
    if isinstance(node, ast.Dict):
        for k, v in zip(node.keys, node.values):
            # json.dumps takes str, int, float, bool and None keys only: a
            # bytes, complex, Ellipsis or tuple key makes it raise.
            if isinstance(k, ast.Tuple) or (
                isinstance(k, ast.Constant) and (isinstance(k.value, (bytes, complex)) or k.value is Ellipsis)
            ):
                return "a dict with a key json.dumps rejects"
            # A spread of anything but a dict display shows no values to
            # judge; a dict display's values are merged.
            r = unserializable(v) if k is not None or isinstance(v, ast.Dict) else None
            if r:
                return r
    return None


def decorator_name(d):
    if isinstance(d, ast.Call):
        d = d.func
    parts = []
    while isinstance(d, ast.Attribute):
        parts.append(d.attr)
        d = d.value
    if not isinstance(d, ast.Name):
        return None
    parts.append(d.id)
    return ".".join(reversed(parts))


def seg(node, source, limit=160):
    try:
        text = ast.unparse(node)
    except Exception:  # noqa: BLE001
        text = ast.dump(node)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


# ----------------------------------------------------------------------------
# name resolution, for content that is a plain name


BUILTIN = "builtin"
FUNCTION_NODES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
LOOPS = (ast.For, ast.AsyncFor, ast.While)
GROWERS = {"append", "extend", "insert"}


class Scope:
    __slots__ = ("node", "kind", "parent", "bound", "globals", "nonlocals", "star")

    def __init__(self, node, kind, parent):
        self.node, self.kind, self.parent = node, kind, parent
        self.bound = set()  # names bound here (before global/nonlocal are taken out)
        self.globals = set()
        self.nonlocals = set()
        self.star = False  # a star import (module level)

    def local(self, name):
        return name in self.bound and name not in self.globals and name not in self.nonlocals


class Scopes:
    """Python's scoping of one module, flow-insensitively: which scope
    evaluates every node, every binding of a name (with its kind) and every
    read, each resolved to the variable it binds or reads: (scope, name), or
    BUILTIN for a name no scope binds."""

    def __init__(self, tree, parents):
        self.parents = parents
        self.scope_of = {}  # id(node) -> Scope that evaluates it
        self.raw_bindings = []  # (Scope, name, kind, node, value)
        self.raw_uses = []  # (Scope, name, node)
        self.module = Scope(tree, "module", None)
        self.visit(tree, self.module)
        for scope, name, _, _, _ in self.raw_bindings:
            if scope.kind != "module" and name in scope.globals:
                self.module.bound.add(name)  # `global name` then a binding
        self.bindings = collections.defaultdict(list)  # variable -> [(Scope, kind, node, value)]
        self.uses = collections.defaultdict(list)  # variable -> [(Scope, node)]
        for scope, name, kind, node, value in self.raw_bindings:
            self.bindings[self.owner(scope, name)].append((scope, kind, node, value))
        for scope, name, node in self.raw_uses:
            self.uses[self.resolve(scope, name)].append((scope, node))

    # -- recording

    def bind(self, scope, name, kind, node, value=None):
        if kind == "a walrus":  # binds in the nearest non-comprehension scope
            while scope.kind == "comprehension":
                scope = scope.parent
        scope.bound.add(name)
        self.raw_bindings.append((scope, name, kind, node, value))

    def visit_all(self, nodes, scope):
        for n in nodes:
            if n is not None:
                self.visit(n, scope)

    def bind_args(self, args, scope, node):
        for a in args.posonlyargs + args.args + args.kwonlyargs:
            self.bind(scope, a.arg, "a parameter", a)
        if args.vararg is not None:
            self.bind(scope, args.vararg.arg, "a *parameter", args.vararg)
        if args.kwarg is not None:
            self.bind(scope, args.kwarg.arg, "a **parameter", args.kwarg)

    def arg_annotations(self, args):
        every = args.posonlyargs + args.args + args.kwonlyargs + [args.vararg, args.kwarg]
        return [a.annotation for a in every if a is not None and a.annotation is not None]

    def visit(self, node, scope):
        self.scope_of[id(node)] = scope
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            self.visit_all(node.decorator_list, scope)
            self.visit_all(node.args.defaults + node.args.kw_defaults, scope)
            self.visit_all(self.arg_annotations(node.args) + [node.returns], scope)
            self.bind(scope, node.name, "a def", node)
            inner = Scope(node, "function", scope)
            self.bind_args(node.args, inner, node)
            self.visit_all(node.body, inner)
        elif isinstance(node, ast.Lambda):
            self.visit_all(node.args.defaults + node.args.kw_defaults, scope)
            inner = Scope(node, "lambda", scope)
            self.bind_args(node.args, inner, node)
            self.visit(node.body, inner)
        elif isinstance(node, ast.ClassDef):
            self.visit_all(node.decorator_list + node.bases + node.keywords, scope)
            self.bind(scope, node.name, "a class", node)
            self.visit_all(node.body, Scope(node, "class", scope))
        elif isinstance(node, COMPREHENSIONS):
            gens = node.generators
            self.visit(gens[0].iter, scope)
            inner = Scope(node, "comprehension", scope)
            for i, g in enumerate(gens):
                self.scope_of[id(g)] = inner
                self.visit(g.target, inner)
                if i:
                    self.visit(g.iter, inner)
                self.visit_all(g.ifs, inner)
            if isinstance(node, ast.DictComp):
                self.visit_all([node.key, node.value], inner)
            else:
                self.visit(node.elt, inner)
        elif isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Load):
                self.raw_uses.append((scope, node.id, node))
            elif isinstance(node.ctx, ast.Del):
                self.bind(scope, node.id, "a del", node)
            else:
                self.bind(scope, node.id, "a %s target" % type(self.parents.get(id(node))).__name__, node)
        elif isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    self.scope_of[id(t)] = scope
                    self.bind(scope, t.id, "an assignment", t, node.value)
                else:
                    self.visit(t, scope)
            self.visit(node.value, scope)
        elif isinstance(node, ast.AnnAssign):
            if isinstance(node.target, ast.Name):
                self.scope_of[id(node.target)] = scope
                if node.value is not None:
                    self.bind(scope, node.target.id, "an assignment", node.target, node.value)
                else:
                    self.bind(scope, node.target.id, "an annotation without a value", node.target)
            else:
                self.visit(node.target, scope)
            self.visit_all([node.annotation, node.value], scope)
        elif isinstance(node, ast.AugAssign):
            if isinstance(node.target, ast.Name):
                self.scope_of[id(node.target)] = scope
                grows = isinstance(node.op, ast.Add) and isinstance(node.value, (ast.List, ast.ListComp))
                kind = "a += of a list" if grows else "an augmented assignment (%s)" % type(node.op).__name__
                self.bind(scope, node.target.id, kind, node.target, node.value)
                self.raw_uses.append((scope, node.target.id, node.target))
            else:
                self.visit(node.target, scope)
            self.visit(node.value, scope)
        elif isinstance(node, ast.NamedExpr):
            self.scope_of[id(node.target)] = scope
            self.bind(scope, node.target.id, "a walrus", node.target)
            self.visit(node.value, scope)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for a in node.names:
                if a.name == "*":
                    scope.star = True
                else:
                    self.bind(scope, a.asname or a.name.split(".")[0], "an import", node)
        elif isinstance(node, ast.Global):
            scope.globals.update(node.names)
        elif isinstance(node, ast.Nonlocal):
            scope.nonlocals.update(node.names)
        else:
            if isinstance(node, ast.ExceptHandler) and node.name:
                self.bind(scope, node.name, "an except target", node)
            for field in ("name", "rest"):  # match captures
                if isinstance(node, (ast.MatchAs, ast.MatchStar, ast.MatchMapping)) and getattr(node, field, None):
                    self.bind(scope, getattr(node, field), "a match capture", node)
            if type(node).__name__ in ("TypeAlias", "TypeVar", "ParamSpec", "TypeVarTuple"):
                name = node.name.id if isinstance(node.name, ast.Name) else node.name
                self.bind(scope, name, "a type parameter or alias", node)
                if isinstance(node.name, ast.Name):
                    self.scope_of[id(node.name)] = scope
                for child in ast.iter_child_nodes(node):
                    if child is not node.name:
                        self.visit(child, scope)
                return
            for child in ast.iter_child_nodes(node):
                self.visit(child, scope)

    # -- resolution

    def free(self, scope, name):
        """The variable a name read in a scope nested in `scope` resolves to."""
        while scope is not None:
            if scope.kind == "module":
                return (scope, name) if name in scope.bound or scope.star else BUILTIN
            if scope.kind != "class":
                if name in scope.globals:
                    return self.global_var(name)
                if scope.local(name):
                    return (scope, name)
            scope = scope.parent
        return BUILTIN

    def global_var(self, name):
        m = self.module
        return (m, name) if name in m.bound or m.star else BUILTIN

    def resolve(self, scope, name):
        """The variable `name` read in `scope` resolves to."""
        if scope.kind == "module":
            return self.global_var(name)
        if name in scope.globals:
            return self.global_var(name)
        if name in scope.nonlocals:
            return self.free(scope.parent, name)
        if scope.local(name):
            return (scope, name)
        if scope.kind == "class":
            # neither a class-local nor a name of an enclosing function: a
            # global (or builtin)
            return self.free(scope.parent, name)
        return self.free(scope.parent, name)

    def owner(self, scope, name):
        """The variable a binding of `name` in `scope` binds."""
        if scope.kind == "module" or name in scope.globals:
            return (self.module, name)
        if name in scope.nonlocals:
            v = self.free(scope.parent, name)
            return v if v is not BUILTIN else (self.module, name)
        return (scope, name)


def is_builtin_call(call, name, scopes):
    return (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == name
            and scopes.resolve(scopes.scope_of[id(call.func)], name) is BUILTIN)


def is_len_of(node, parents, scopes):
    call = parents.get(id(node))
    return (is_builtin_call(call, "len", scopes) and len(call.args) == 1 and call.args[0] is node
            and not call.keywords)


def fresh_value(value, scopes):
    return isinstance(value, (ast.List, ast.ListComp)) or is_builtin_call(value, "list", scopes)


def fresh_list_problem(d, name, ctx):
    """None when the name `name`, d's content, provably holds a list only
    this function touches, only grown before `d` (so `[*name, json]` builds
    the same blocks); else why not."""
    scopes, parents = ctx.scopes, ctx.parents
    here = scopes.scope_of[id(name)]
    var = scopes.resolve(here, name.id)
    if var is BUILTIN:
        return "a name no scope binds"
    owner = var[0]
    if owner.kind == "module":
        return "a module-level name" + (" (or from a star import)" if owner.star else "")
    if owner.kind not in ("function", "lambda"):
        return "a name of a %s scope" % owner.kind
    # The innermost function containing the dict, as written: a dict in a
    # nested def's default or decorator counts as inside that def.
    p = parents.get(id(d))
    while p is not None and not isinstance(p, FUNCTION_NODES):
        p = parents.get(id(p))
    if owner.node is not p:
        return "a name of an enclosing function"
    if here is not owner:
        # A comprehension or class body inside the function builds the dict.
        return "the dict is built in a nested scope (%s)" % here.kind
    # Every binding of the variable (a nested scope's, through `nonlocal`,
    # too) must give it a fresh list: rebinding never changes a list.
    for scope, kind, node, value in scopes.bindings[var]:
        if kind == "an assignment":
            target_of = parents.get(id(node))
            if isinstance(target_of, ast.Assign) and len(target_of.targets) > 1:
                return "bound together with another name (line %d)" % node.lineno
            if not fresh_value(value, scopes):
                return "assigned a value that is not a fresh list (line %d)" % node.lineno
        elif kind != "a += of a list":
            return "bound by %s (line %d)" % (kind, getattr(node, "lineno", 0))
    p = parents.get(id(d))
    while p is not None and p is not owner.node:
        if isinstance(p, LOOPS):
            return "the dict is built in a loop (line %d)" % p.lineno
        p = parents.get(id(p))
    # Reads in the dict's own statement may run after the dict is built
    # (`t[name.append(x)] = {...}`): they count as inside it.
    statement = d
    while statement is not None and not isinstance(statement, ast.stmt):
        statement = parents.get(id(statement))
    start = (statement.lineno, statement.col_offset) if statement is not None else (d.lineno, d.col_offset)
    end = (d.end_lineno, d.end_col_offset)
    for scope, node in scopes.uses[var]:
        if node is name:
            continue
        at = (node.lineno, node.col_offset)
        where = "line %d" % node.lineno
        if scope is not owner:
            return "read in a nested scope (%s)" % where
        if at >= end:
            return "used after the dict (%s)" % where
        if at >= start:
            if not is_len_of(node, parents, scopes):
                return "used inside the dict or its statement other than by len() (%s)" % where
            continue
        parent = parents.get(id(node))
        if is_len_of(node, parents, scopes):
            continue
        if isinstance(parent, ast.AugAssign) and parent.target is node:
            continue
        if (isinstance(parent, ast.Attribute) and parent.value is node and parent.attr in GROWERS
                and isinstance(parents.get(id(parent)), ast.Call) and parents[id(parent)].func is parent):
            continue
        if isinstance(parent, (ast.For, ast.AsyncFor)) and parent.iter is node:
            continue
        test = node
        if isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.Not):
            test, parent = parent, parents.get(id(parent))
        if isinstance(parent, (ast.If, ast.While)) and parent.test is test:
            continue
        return "used before the dict in a way that may change or share the list (%s)" % where
    return None


# ----------------------------------------------------------------------------
# the reference classification


EVERY_CODE = "every code"


def comment_effect(comment):
    """What one COMMENT token silences: a set of codes or EVERY_CODE.
    `# toolshape: ignore` and `# noqa` silence everything, `[TS001]` /
    `: TS001` lists codes (case-insensitive, comma or space separated);
    every `#` of the token starts a part, and the parts' effects add up."""
    codes = set()
    for part in comment.split("#")[1:]:
        part = part.lstrip().lower()
        if part.startswith("toolshape:"):
            rest = part[len("toolshape:"):].lstrip()
            if not rest.startswith("ignore"):
                continue
            rest = rest[len("ignore"):].lstrip()
            if rest.startswith("[") and "]" in rest:
                codes |= {c.upper() for c in rest[1:rest.index("]")].replace(",", " ").split()}
            else:
                return EVERY_CODE
        elif part.startswith("noqa"):
            rest = part[len("noqa"):].lstrip()
            if rest.startswith(":"):
                codes |= {c.upper() for c in rest[1:].replace(",", " ").split()}
            else:
                return EVERY_CODE
    return codes


class FileContext:
    def __init__(self, tree, data):
        self.parents = {}
        for node in ast.walk(tree):
            for child in ast.iter_child_nodes(node):
                self.parents[id(child)] = node
        self.in_fstring = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.JoinedStr):
                for sub in ast.walk(node):
                    if isinstance(sub, ast.Dict):
                        self.in_fstring.add(id(sub))
        text, _ = source_text(data)
        self.lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
        self.text = "\n".join(self.lines)
        self.starts = [0]
        for ln in self.lines[:-1]:
            self.starts.append(self.starts[-1] + len(ln) + 1)
        self._comments = None
        self._tokens = None
        self.tree = tree
        self._scopes = None
        # Lines whose comment silences a TS004 finding (filled by
        # `classify_writes`; see `silenced_by_moved_comment`).
        self.ts004_silenced_lines = set()

    @property
    def scopes(self):
        if self._scopes is None:
            self._scopes = Scopes(self.tree, self.parents)
        return self._scopes

    @property
    def comments(self):
        """{line: [effect]} of the real comments that silence something."""
        if self._comments is None:
            self._comments = {}
            try:
                for tok in tokenize.generate_tokens(io.StringIO(self.text).readline):
                    if tok.type == tokenize.COMMENT:
                        effect = comment_effect(tok.string)
                        if effect:
                            self._comments.setdefault(tok.start[0], []).append(effect)
            except (tokenize.TokenError, SyntaxError):
                pass
        return self._comments

    def char_col(self, lineno, byte_col):
        line = self.lines[lineno - 1]
        return len(line.encode("utf-8", "surrogatepass")[:byte_col].decode("utf-8", "surrogatepass"))

    @property
    def tokens(self):
        """[(type, string, (line, char col))] of the file, and a map from a
        token's start to its index."""
        if self._tokens is None:
            toks = []
            try:
                for tok in tokenize.generate_tokens(io.StringIO(self.text).readline):
                    toks.append((tok.type, tok.string, tok.start))
            except (tokenize.TokenError, SyntaxError):
                pass
            self._tokens = (toks, {t[2]: i for i, t in enumerate(toks)})
        return self._tokens

    def entry_line(self, d, i):
        """The line an entry starts on: its key's, or the `**`'s of a spread,
        with the opening parentheses in front of it (comments and line breaks
        may stand in between)."""
        head = d.values[i] if d.keys[i] is None else d.keys[i]
        start = (head.lineno, self.char_col(head.lineno, head.col_offset))
        toks, index = self.tokens
        j = index.get(start)
        if j is None:
            return head.lineno  # inside an f-string (one token before 3.12)
        line = head.lineno
        j -= 1
        while j >= 0:
            typ, string, pos = toks[j]
            if typ in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT):
                j -= 1
            elif typ == tokenize.OP and string == "(":
                line = pos[0]
                j -= 1
            elif typ == tokenize.OP and string == "**" and d.keys[i] is None:
                line = pos[0]
                break
            else:
                break
        return line

    def silenced(self, line, code):
        return any(e == EVERY_CODE or code in e for e in self.comments.get(line, ()))

    def returned_by_tool(self, d):
        ret = self.parents.get(id(d))
        if not isinstance(ret, ast.Return) or ret.value is not d:
            return False
        node = ret
        while True:
            node = self.parents.get(id(node))
            if node is None or isinstance(node, (ast.Lambda, ast.ClassDef)):
                return False
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                return any(decorator_name(dec) in TOOL_DECORATORS for dec in node.decorator_list)


class Info:
    """What the reference says about one violating tool-result dict."""

    __slots__ = ("node", "cls", "reasons", "moved", "content_idx", "suppressed")

    def __init__(self, node, cls, reasons, moved, content_idx, suppressed=()):
        self.node, self.cls, self.reasons, self.moved, self.content_idx = node, cls, reasons, moved, content_idx
        self.suppressed = list(suppressed)


def units_of(d, content_idx, moved):
    """The pieces of `d` in evaluation order before and after the fix.

    A unit is an entry (key and value), or, inside a list-literal content,
    one element (the merge target's entries one by one); moved entries are
    evaluated at the json block's place.  Returns (units, before, after):
    units[i] = (facts, is_moved); before/after map a unit to its position."""
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
                units.append((facts(ck, cv), False))
                original.append(len(units) - 1)
                rewritten.append(len(units) - 1)
            if splice_after is None or splice_after == len(children):
                insertion = len(rewritten)
            continue
        units.append((facts(k, v), i in moved))
        uid = len(units) - 1
        original.append(uid)
        (moved_ids if i in moved else rewritten).append(uid)
    rewritten = rewritten[:insertion] + moved_ids + rewritten[insertion:]
    before = {u: p for p, u in enumerate(original)}
    after = {u: p for p, u in enumerate(rewritten)}
    return units, before, after


def crossings(units, before, after):
    """(moved unit, other unit) pairs whose evaluation order the fix swaps."""
    for m, (_, is_moved) in enumerate(units):
        if not is_moved:
            continue
        for o, (_, other_moved) in enumerate(units):
            if not other_moved and (before[m] < before[o]) != (after[m] < after[o]):
                yield m, o


FOLLOWED_METHODS = ("update", "setdefault")


def outer_value(node, parents):
    """The outermost expression `node`'s value is (through the branches of
    conditional expressions), and its parent."""
    parent = parents.get(id(node))
    while isinstance(parent, ast.IfExp) and parent.test is not node:
        node, parent = parent, parents.get(id(parent))
    return node, parent


def followed_use(name, parents):
    """A use of a name bound to a result that the fix and the later-write
    pass follow: returned, a subscript stored or deleted, a call of its
    update/setdefault, or an augmented assignment's target. A read by key
    in the building function would see the moved keys gone."""
    value, parent = outer_value(name, parents)
    if isinstance(parent, ast.Return):
        return True
    if isinstance(parent, ast.Subscript):
        return parent.value is value and isinstance(parent.ctx, (ast.Store, ast.Del))
    if isinstance(parent, ast.Attribute):
        call = parents.get(id(parent))
        return (parent.value is value and parent.attr in FOLLOWED_METHODS
                and isinstance(call, ast.Call) and call.func is parent)
    if isinstance(parent, ast.AugAssign):
        return parent.target is value
    return False


def escape_problem(d, ctx):
    """Why the result `d` is handed to code whose reads are unknown, or None:
    it is a positional argument of a call, or it is assigned and the
    assignment binds other than one name, or the name has a use other than
    a followed one (see followed_use). Any other place (returned, yielded,
    nested in another display) is None: the other rules judge those."""
    parents, scopes = ctx.parents, ctx.scopes
    value, parent = outer_value(d, parents)
    if isinstance(parent, ast.Call) and value in parent.args:
        return "the result is passed to a call"
    if isinstance(parent, ast.Assign) and parent.value is value:
        if len(parent.targets) != 1:
            return "the result is bound together with another target"
        if not isinstance(parent.targets[0], ast.Name):
            return None  # a write into another value is that value's
        target = parent.targets[0]
    elif isinstance(parent, ast.AnnAssign) and parent.value is value:
        if not isinstance(parent.target, ast.Name):
            return None
        target = parent.target
    else:
        return None  # returned, yielded, nested in another result...
    var = scopes.resolve(scopes.scope_of[id(target)], target.id)
    if var is BUILTIN:
        return None
    for _, node in scopes.uses[var]:
        if not followed_use(node, parents):
            return "`%s` is used where its readers are unknown (line %d)" % (target.id, node.lineno)
    return None


def classify(d, ctx):
    """None when `d` needs no fix, else an Info."""
    if not is_tool_result(d):
        return None
    moved, suppressed = [], []
    for i in violating(d):
        k = d.keys[i]
        code = "TS002" if k is None else "TS001"
        if ctx.silenced(d.lineno, code) or ctx.silenced(ctx.entry_line(d, i), code):
            suppressed.append(i)
            continue
        moved.append(i)
    info = classify_moved(d, ctx, moved)
    if info is not None:
        info.suppressed = suppressed
    elif suppressed:
        info = Info(d, "suppressed", ["every violation is silenced by a comment"], [], None, suppressed)
    return info


def may_bring_cancelled(node):
    """Does a spread of `node` evidently bring a "cancelled" key? README,
    "What a fix does": "a spread that evidently may bring one: its operand,
    parentheses seen through, is a dict display with a constant key
    `cancelled` (or a spread of such an operand inside it), or a conditional
    expression (`{} if c else {"cancelled": True}`) or an `or` / `and` one of
    whose operands is, recursively." (Parentheses leave no trace in the
    AST.)  A name, a call, a dict comprehension... do not count."""
    if isinstance(node, ast.Dict):
        return any(
            may_bring_cancelled(v) if k is None else const_key(k) == "cancelled"
            for k, v in zip(node.keys, node.values)
        )
    if isinstance(node, ast.IfExp):
        return may_bring_cancelled(node.body) or may_bring_cancelled(node.orelse)
    if isinstance(node, ast.BoolOp):  # `or` / `and`
        return any(may_bring_cancelled(v) for v in node.values)
    return False


def classify_moved(d, ctx, moved):
    if not moved:
        return None
    contents = [i for i, k in enumerate(d.keys) if const_key(k) == "content"]
    content_idx = contents[0]
    manual = []
    if id(d) in ctx.in_fstring:
        manual.append("the dict is inside an f-string")
    if len(contents) != 1:
        manual.append("two \"content\" keys")
    content = d.values[content_idx]
    if isinstance(content, NOT_LIST):
        manual.append("content is a %s literal, not a list" % type(content).__name__)
    # Evidently not a Strands tool result: a chat message, or serialized
    # for someone else as the first argument of json.dumps / json.dump.
    if any(const_key(k) in ("role", "tool_call_id") for k in d.keys):
        manual.append("a chat message (role / tool_call_id)")
    call = ctx.parents.get(id(d))
    if (isinstance(call, ast.Call) and call.args and call.args[0] is d and isinstance(call.func, ast.Attribute)
            and call.func.attr in ("dumps", "dump") and isinstance(call.func.value, ast.Name)
            and call.func.value.id == "json"):
        manual.append("passed to json.%s" % call.func.attr)
    if manual:
        return Info(d, "manual", manual, moved, content_idx)
    units, before, after = units_of(d, content_idx, set(moved))
    effect_swaps = []
    for m, o in crossings(units, before, after):
        (mb, mr, me), _ = units[m]
        (ob, orr, oe), _ = units[o]
        if mb & orr or ob & mr:
            return Info(d, "manual", ["walrus conflict: %s" % sorted((mb & orr) | (ob & mr))], moved, content_idx)
        if me and oe:
            effect_swaps.append((m, o))
    unsafe = []
    if any(const_key(d.keys[i]) == "cancelled" for i in moved if d.keys[i] is not None):
        unsafe.append("the Strands SDK reads \"cancelled\"")
    # README: "Moving `cancelled` is unsafe too [...] That is a `"cancelled"`
    # key, or a spread that evidently may bring one" (see may_bring_cancelled).
    # Only moved spreads count: a silenced one stays where it is.
    for i in moved:
        if d.keys[i] is None and may_bring_cancelled(d.values[i]):
            text = seg(d.values[i], None, 40)
            if isinstance(d.values[i], (ast.IfExp, ast.BoolOp)):
                text = "(%s)" % text
            unsafe.append("the spread `**%s` may bring \"cancelled\", which the Strands SDK reads" % text)
    for k, v in zip(d.keys, d.values):
        if const_key(k) == "status" and isinstance(v, ast.Constant) and isinstance(v.value, str) \
                and v.value not in ("success", "error", "degraded"):
            unsafe.append("status %r is outside the contract" % v.value)
    seen = set()
    for i, k in enumerate(d.keys):
        ck = const_key(k)
        if k is None and i in moved:
            value = d.values[i]
            after_allowed = seen & ALLOWED
            if after_allowed:
                unsafe.append("the spread `**%s` stands after %s" % (seg(value, None, 40), "/".join(sorted(after_allowed))))
            else:
                later_id = any(const_key(k2) == "toolUseId" for k2 in d.keys[i + 1 :])
                literal_ok = not may_hold_tool_use_id(value)
                if not (ctx.returned_by_tool(d) or later_id or literal_ok):
                    unsafe.append(NEW_RULE)
        if ck is not None:
            seen.add(ck)
    target = merge_target(content)
    moved_keys = [const_key(d.keys[i]) for i in moved if d.keys[i] is not None]
    moved_spread = any(d.keys[i] is None for i in moved)
    if target is not None:
        tkeys = target[1].keys
        if any(k is None or const_key(k) is None for k in tkeys):
            unsafe.append("the json block has a spread or a computed key")
        collide = sorted(set(moved_keys) & {const_key(k) for k in tkeys if k is not None} - {None})
        if collide:
            unsafe.append("moved keys collide with the json block: %s" % collide)
        if moved_spread and tkeys:
            unsafe.append("a moved spread merges into a non-empty json block")
    if effect_swaps:
        unsafe.append("side effects would run in another order")
    for i in moved:
        if d.keys[i] is None and not isinstance(d.values[i], ast.Dict):
            continue  # see unserializable
        r = unserializable(d.values[i])
        if r:
            unsafe.append("a moved value is %s" % r)
    if isinstance(content, ast.Name):
        why = fresh_list_problem(d, content, ctx)
        if why is not None:
            unsafe.append("content is not a list literal (Name: %s)" % why)
    elif not isinstance(content, (ast.List, ast.ListComp)):
        unsafe.append("content is not a list literal (%s)" % type(content).__name__)
    if not unsafe:
        why = escape_problem(d, ctx)
        if why is not None:
            unsafe.append(why)
    if unsafe:
        return Info(d, "unsafe", list(dict.fromkeys(unsafe)), moved, content_idx)
    return Info(d, "safe", [], moved, content_idx)


def fixed_shape(d, moved):
    """A new Dict: `d` after the contract's transformation of its top level.
    Every child is `d`'s own node, except the new json block (and, when it
    is merged into, copies of the content list, the target block and its
    dict).  Returns (dict, id of the first text block of its content or None)."""
    moved_set = set(moved)
    moved_keys = [d.keys[i] for i in moved]
    moved_values = [d.values[i] for i in moved]
    keys = [k for i, k in enumerate(d.keys) if i not in moved_set]
    values = [v for i, v in enumerate(d.values) if i not in moved_set]
    ci = next(i for i, k in enumerate(keys) if const_key(k) == "content")
    content = values[ci]
    new_block = ast.Dict(keys=[ast.Constant("json")], values=[ast.Dict(keys=moved_keys, values=moved_values)])
    if isinstance(content, ast.List):
        target = merge_target(content)
        elts = list(content.elts)
        if target is not None:
            block, tdict = target
            new_dict = ast.Dict(keys=tdict.keys + moved_keys, values=tdict.values + moved_values)
            elts[elts.index(block)] = ast.Dict(keys=list(block.keys), values=[new_dict])
        else:
            elts.append(new_block)
        new_content = ast.List(elts=elts, ctx=ast.Load())
        first_text = next((id(e) for e in content.elts if is_text_block(e)), None)
    else:
        new_content = ast.List(elts=[ast.Starred(value=content, ctx=ast.Load()), new_block], ctx=ast.Load())
        first_text = None
    values[ci] = new_content
    return ast.Dict(keys=keys, values=values), first_text


# ----------------------------------------------------------------------------
# TS004: later writes, each write statement rewritten into a json block
# (docs/rules.md, "TS004 key added after construction" and "### TS004: each
# write statement becomes a json block").  Detection reuses scan.py's scopes
# and result names; the classification and the expected statements are
# written here from the Fixes section.

APPLIED = {"default": {"safe"}, "unsafe": {"safe", "unsafe"}}
STATUS_OK = ("success", "error", "degraded")
BAD_CONTENT = (ast.Constant, ast.Dict, ast.Set, ast.Tuple, ast.Lambda, ast.DictComp, ast.SetComp, ast.GeneratorExp)


class Write:
    """One write (docs/rules.md's table) into result name `name` of scope S."""

    __slots__ = ("name", "node", "form", "stmt", "hits", "keys", "dynamic", "receiver", "start", "display")

    def __init__(self, name, node, form, receiver, start):
        self.name, self.node, self.form, self.receiver, self.start = name, node, form, receiver, start
        self.stmt = None
        self.hits = []  # (key or None, line of the finding's span start)
        self.keys = []  # constant keys it writes (any constant, allowed ones too)
        self.dynamic = False
        self.display = None


class WriteInfo:
    """What the reference says about one write statement."""

    __slots__ = ("stmt", "name", "forms", "classes", "reasons", "maybe", "builder", "builder_manual", "loop",
                 "quotes", "indent", "receivers")

    def __init__(self, stmt, name):
        self.stmt, self.name = stmt, name
        self.forms = {}  # label -> expected statement (synthetic AST around the original's nodes)
        self.classes = set()  # possible classes of the normal fix: safe / unsafe / manual / suppressed
        self.reasons = []
        self.maybe = []  # points the spec leaves open (each widens `classes`)
        self.builder = None  # None, "sure" or "maybe": a builder form of a result builder's own **K
        self.builder_manual = []
        self.loop = None  # for N[k] = v in a builder's K.items() loop: that loop's WriteInfo
        self.quotes = {}  # id(synthetic "content"/"json" constant) -> quote character
        self.indent = None  # (indentation of the statement's line, one unit) for the `if K:` form
        self.receivers = set()

    def accept(self, mode):
        """The outcomes ("unchanged", "normal...", "builder") allowed in `mode`."""
        applied = APPLIED[mode]
        normal = {lbl for lbl in self.forms if lbl.startswith("normal")}
        out = set()

        def plain():
            if any(c not in applied for c in self.classes):
                out.add("unchanged")
            if any(c in applied for c in self.classes):
                out.update(normal)

        if self.loop is not None:
            # N[k] = v inside a builder's `for k, v in K.items():` loop: that
            # loop is the fix (or, its `if` form manual, nothing is); the
            # statement alone only where F may be no builder at all.
            if self.loop.builder == "sure":
                return {"unchanged"}
            if not self.loop.builder_manual:
                out.add("unchanged")
        if self.builder == "sure":
            # In a result builder these writes become `if K:`, nothing else.
            return {"unchanged"} if self.builder_manual else {"unchanged", "builder"}
        if self.builder == "maybe" and not self.builder_manual:
            out.update({"unchanged", "builder"})
        plain()
        return out


def _content_key(quote_map, quote):
    c = ast.Constant(value="content")
    quote_map[id(c)] = quote
    return c


def _receiver(name, quote_map, quote, ctx):
    return ast.Subscript(value=ast.Name(id=name, ctx=ast.Load()), slice=_content_key(quote_map, quote), ctx=ctx)


def _json_block(value, quote_map, quote):
    j = ast.Constant(value="json")
    quote_map[id(j)] = quote
    return ast.Dict(keys=[j], values=[value])


def _put(name, block, append, quote_map, quote):
    """`N["content"].append(B)` or `N["content"] = [*N["content"], B]`."""
    if append:
        call = ast.Call(func=ast.Attribute(value=_receiver(name, quote_map, quote, ast.Load()), attr="append",
                                           ctx=ast.Load()), args=[block], keywords=[])
        return ast.Expr(value=call)
    return ast.Assign(targets=[_receiver(name, quote_map, quote, ast.Store())],
                      value=ast.List(elts=[ast.Starred(value=_receiver(name, quote_map, quote, ast.Load()),
                                                       ctx=ast.Load()), block], ctx=ast.Load()),
                      type_comment=None)


def _dict_call(args, keywords):
    return ast.Call(func=ast.Name(id="dict", ctx=ast.Load()), args=list(args), keywords=list(keywords))


def normal_blocks(w):
    """The json block values of the docs' table for write `w` ({label: value})."""
    if w.form == "subscript":
        return {"normal": ast.Dict(keys=[w.node.targets[0].slice], values=[w.node.value])}
    if w.form == "update":
        args, kws = w.node.args, w.node.keywords
        if len(args) == 1 and not kws and isinstance(args[0], ast.Dict):
            return {"normal": args[0]}
        if not args and kws and all(k.arg is not None for k in kws):
            return {"normal": ast.Dict(keys=[ast.Constant(value=k.arg) for k in kws], values=[k.value for k in kws])}
        out = {"normal": _dict_call(args, kws)}
        if not args and kws:
            # `k=v, **m`: "keywords only" or "anything else"? Both read alike.
            out["normal-display"] = ast.Dict(keys=[None if k.arg is None else ast.Constant(value=k.arg) for k in kws],
                                             values=[k.value for k in kws])
        return out
    if w.form == "ior":
        v = w.node.value
        return {"normal": v if isinstance(v, ast.Dict) else _dict_call([v], [])}
    return {}


class FileTokens:
    """Tokens of a source with start and end (line, char column)."""

    def __init__(self, text):
        self.toks = []
        try:
            for tok in tokenize.generate_tokens(io.StringIO(text).readline):
                self.toks.append((tok.type, tok.string, tok.start, tok.end))
        except (tokenize.TokenError, SyntaxError):
            pass
        self.by_start = {t[2]: i for i, t in enumerate(self.toks)}
        self.by_end = {}
        for i, t in enumerate(self.toks):
            if t[0] not in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT):
                self.by_end[t[3]] = i

    def comments(self, start, end):
        return [t for t in self.toks if t[0] == tokenize.COMMENT and start <= t[2] < end]

    def paren_span(self, start, end):
        """(start, end) widened over the parentheses that wrap it."""
        i, j = self.by_start.get(start), self.by_end.get(end)
        if i is None or j is None:
            return start, end
        skip = (tokenize.NL, tokenize.COMMENT)
        while True:
            a = i - 1
            while a >= 0 and self.toks[a][0] in skip:
                a -= 1
            b = j + 1
            while b < len(self.toks) and self.toks[b][0] in skip:
                b += 1
            if (a >= 0 and b < len(self.toks) and self.toks[a][1] == "(" and self.toks[b][1] == ")"
                    and self.toks[a][0] == tokenize.OP and self.toks[b][0] == tokenize.OP):
                i, j = a, b
            else:
                return self.toks[i][2], self.toks[j][3]


def first_quote(d, ctx, ftoks):
    """The quote character of the first string literal in `d`'s source."""
    start = (d.lineno, ctx.char_col(d.lineno, d.col_offset))
    end = (d.end_lineno, ctx.char_col(d.end_lineno, d.end_col_offset))
    for typ, string, s, _ in ftoks.toks:
        if start <= s < end and (typ == tokenize.STRING or type_name(typ) == "FSTRING_START"):
            return string.lstrip("rRbBuUfF")[:1]
    return '"'


def type_name(typ):
    return tokenize.tok_name.get(typ, "")


def _span(ctx, node):
    return ((node.lineno, ctx.char_col(node.lineno, node.col_offset)),
            (node.end_lineno, ctx.char_col(node.end_lineno, node.end_col_offset)))


def _statement_of(node, parents):
    while node is not None and not isinstance(node, ast.stmt):
        node = parents.get(id(node))
    return node


def _module_level_function(S, tree):
    """Is S a def at module level or directly in a module-level class's body?"""
    node = S.node
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    if node in tree.body:
        return True
    p = S.parent
    return p is not None and p.kind == "class" and p.parent is not None and p.parent.kind == "module" \
        and p.node in tree.body and node in p.node.body


def find_writes(S, results, ctx):
    """Every write (docs/rules.md's table) standing in scope S."""
    writes = []

    def const_hit(w, K, line):
        if isinstance(K, ast.Constant):
            w.keys.append(K.value)
            if isinstance(K.value, str) and K.value not in ALLOWED:
                w.hits.append((K.value, line))
        else:
            w.dynamic = True
            w.hits.append((None, line))

    def display(w, d):
        for i, (k, v) in enumerate(zip(d.keys, d.values)):
            line = ctx.entry_line(d, i)
            if k is None:
                w.dynamic = True
                w.hits.append((None, line))
            else:
                const_hit(w, k, line)

    for st in S.assigns:
        for t in st.targets:
            if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and t.value.id in results:
                w = Write(t.value.id, st, "subscript", t.value, (st.lineno, st.col_offset))
                const_hit(w, t.slice, st.lineno)
                if len(st.targets) != 1:
                    w.form = "chained"
                writes.append(w)
    for call in S.calls:
        f = call.func
        if not (isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id in results
                and f.attr in ("update", "setdefault")):
            continue
        w = Write(f.value.id, call, f.attr, f.value, (call.lineno, call.col_offset))
        if f.attr == "update":
            for a in call.args:
                if isinstance(a, ast.Dict):
                    display(w, a)
                else:
                    w.dynamic = True
                    w.hits.append((None, a.lineno))
            for kw in call.keywords:
                if kw.arg is None:
                    w.dynamic = True
                    w.hits.append((None, kw.lineno))
                else:
                    w.keys.append(kw.arg)
                    if kw.arg not in ALLOWED:
                        w.hits.append((kw.arg, kw.lineno))
        elif call.args:
            const_hit(w, call.args[0], call.lineno)
        writes.append(w)
    for aug in S.augs:
        t = aug.target
        if isinstance(aug.op, ast.BitOr) and isinstance(t, ast.Name) and t.id in results:
            w = Write(t.id, aug, "ior", t, (aug.lineno, aug.col_offset))
            if isinstance(aug.value, ast.Dict):
                display(w, aug.value)
            else:
                w.dynamic = True
                w.hits.append((None, aug.value.lineno))
            writes.append(w)
    for w in writes:
        bindings = results[w.name]
        chosen = bindings[0]
        for b in bindings:
            if b.pos < w.start:
                chosen = b
        w.display = chosen
        w.stmt = _statement_of(w.node, ctx.parents)
    return writes


def write_infos(tree, ctx):
    """{id(statement): WriteInfo} of every write statement with a TS004
    finding (and of the `for k, v in K.items():` loops of builders)."""
    out = {}
    sb = scan.ScopeBuilder(tree)
    ftoks = FileTokens(ctx.text)
    for S in sb.scopes:
        results = scan.result_names(S)
        if not results:
            continue
        writes = find_writes(S, results, ctx)
        by_name = collections.defaultdict(list)
        for w in writes:
            by_name[w.name].append(w)
        for name, ws in by_name.items():
            classify_writes(S, name, results[name], ws, tree, ctx, ftoks, out)
    return out


def classify_writes(S, name, bindings, writes, tree, ctx, ftoks, out):
    parents = ctx.parents
    by_stmt = collections.OrderedDict()
    for w in writes:
        if w.hits:
            by_stmt.setdefault(id(w.stmt), []).append(w)
    if not by_stmt:
        return
    binding = bindings[0] if len(bindings) == 1 else None
    D = binding.value if binding is not None else writes[0].display.value
    quote = first_quote(D, ctx, ftoks)
    content = None
    contents = [v for k, v in zip(D.keys, D.values) if const_key(k) == "content"]
    if contents:
        content = contents[-1]
    append = isinstance(content, (ast.List, ast.ListComp))
    d_keys = {k.value for k in D.keys if isinstance(k, ast.Constant)}
    d_end = (D.end_lineno, D.end_col_offset)
    added = {k for w in writes for k, _ in w.hits if k is not None}
    any_dynamic = any(w.dynamic for w in writes)

    # What holds for every statement of N (manual / unsafe causes about D and N).
    common_manual, common_manual_maybe, common_unsafe, common_unsafe_maybe = [], [], [], []
    if len(bindings) > 1:
        common_manual.append("`%s` has %d bindings" % (name, len(bindings)))
    else:
        b = bindings[0]
        if isinstance(b.stmt, ast.AnnAssign):
            common_manual_maybe.append("an annotated assignment `%s: T = D`" % name)
        elif not (isinstance(b.stmt, ast.Assign) and len(b.stmt.targets) == 1):
            common_manual.append("D is not the value of a one-target plain assignment")
    if any(const_key(k) in ("role", "tool_call_id") for k in D.keys):
        common_manual.append("D has a key role / tool_call_id")
    if len(contents) > 1:
        common_manual_maybe.append("two \"content\" keys")
    if isinstance(content, BAD_CONTENT):
        common_manual.append("content is a %s" % type(content).__name__)
    elif isinstance(content, ast.JoinedStr):
        common_manual_maybe.append("content is an f-string")
    for st_node in ast.walk(S.node):
        if isinstance(st_node, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and _owner_scope_node(st_node, parents, S):
            targets = st_node.targets if isinstance(st_node, ast.Assign) else [st_node.target]
            for t in targets:
                for sub in ast.walk(t):
                    if (isinstance(sub, ast.Subscript) and isinstance(sub.value, ast.Name) and sub.value.id == name
                            and const_key(sub.slice) == "content" and (sub.lineno, sub.col_offset) >= d_end):
                        common_manual.append("`%s[\"content\"]` is assigned at line %d" % (name, sub.lineno))
    for k, v in zip(D.keys, D.values):
        if const_key(k) == "status" and isinstance(v, ast.Constant):
            if isinstance(v.value, str) and v.value not in STATUS_OK:
                common_unsafe.append("status %r is outside the contract" % v.value)
            elif not isinstance(v.value, str):
                common_unsafe_maybe.append("a status constant that is not a string")

    # The builder context: a def (module level, or a method of a module-level
    # class) with a **K parameter nothing else rebinds.
    K = None
    sure_builder = False
    if S.kind == "function" and _module_level_function(S, tree) and S.node.args.kwarg is not None:
        K = S.node.args.kwarg.arg
        bs = S.owned.get(K, [])
        if not (len(bs) == 1 and bs[0].kind == "param"):
            K = None
        sure_builder = any(isinstance(r.value, ast.Name) and r.value.id == name for r in S.returns)

    infos = []
    for stmt_id, ws in by_stmt.items():
        st = ws[0].stmt
        info = WriteInfo(st, name)
        manual = list(common_manual)
        manual_maybe = list(common_manual_maybe)
        unsafe = list(common_unsafe)
        unsafe_maybe = list(common_unsafe_maybe)
        primary = None
        for w in ws:
            if (w.form in ("subscript", "chained", "ior") and w.node is st) or (
                    w.form in ("update", "setdefault") and isinstance(st, ast.Expr) and st.value is w.node):
                primary = w
        # suppression: on the line where a finding's span starts, or on D's `{` line
        silenced = [ctx.silenced(line, "TS004") or ctx.silenced(D.lineno, "TS004") for w in ws for _, line in w.hits]
        for line in [line for w in ws for _, line in w.hits] + [D.lineno]:
            if ctx.silenced(line, "TS004"):
                ctx.ts004_silenced_lines.add(line)
        if all(silenced):
            info.classes = {"suppressed"}
            info.reasons = ["every finding of the statement is silenced"]
        if any(silenced) and not all(silenced):
            manual.append("some findings of the statement are silenced by a comment")
        if primary is None:
            manual.append("the statement is not exactly the write")
            w = ws[0]
        else:
            w = primary
            if len(ws) > 1:
                manual_maybe.append("another write inside the statement")
        if primary is not None and w.form in ("update", "ior"):
            # every entry written must be one that moves (a finding): an
            # allowed key or a non-string constant key would move with it
            args = (list(w.node.args) + list(w.node.keywords)) if w.form == "update" else [w.node.value]
            entries = sum(len(a.keys) if isinstance(a, ast.Dict) else 1 for a in args)
            if entries != len(w.hits):
                manual.append("the statement also writes entries that do not move")
        if w.form == "setdefault":
            manual.append("N.setdefault(...)")
        if w.form == "chained":
            manual.append("a chained assignment")
        if w.form == "update" and any(isinstance(a, ast.Starred) for a in w.node.args):
            manual.append("update(*args)")
        if w.form == "subscript" and isinstance(w.node.targets[0].slice, (ast.Tuple, ast.Slice)):
            manual_maybe.append("a tuple or slice subscript")
        if (st.lineno, st.col_offset) < d_end:
            manual.append("the write starts before D ends")
        # comments inside the statement outside the parts copied
        if primary is not None:
            copied = []
            if w.form == "subscript":
                copied = [w.node.targets[0].slice, w.node.value]
            elif w.form == "update":
                copied = list(w.node.args) + list(w.node.keywords)
            elif w.form == "ior":
                copied = [w.node.value]
            s_start, s_end = _span(ctx, st)
            if w.form == "update":
                arglist = (_span(ctx, w.node.func)[1], _span(ctx, w.node)[1])
            else:
                arglist = None
            for _, text, pos, _ in ftoks.comments(s_start, s_end):
                spans = [_span(ctx, n) for n in copied]
                if any(a <= pos < b for a, b in spans):
                    continue
                wide = [ftoks.paren_span(a, b) for a, b in spans]
                if any(a <= pos < b for a, b in wide) or (arglist and arglist[0] <= pos < arglist[1]):
                    manual_maybe.append("comment %s beside a copied part" % text)
                else:
                    manual.append("comment %s outside the parts copied" % text)
        # unsafe causes
        values = []
        if w.form == "subscript":
            values = [w.node.value]
        elif w.form == "update":
            values = list(w.node.args) + [k.value for k in w.node.keywords]
        elif w.form == "ior":
            values = [w.node.value]
        for v in values:
            r = unserializable(v)
            if r:
                unsafe.append("a copied value is %s" % r)
        others = set()
        for o in writes:
            if o is not w and o.stmt is not st:
                others.update(_hashable(k) for k in o.keys)
        own = [_hashable(k) for k in w.keys]
        clash = sorted({repr(k[1]) for k in own if k in {_hashable(x) for x in d_keys} or k in others})
        if clash:
            unsafe.append("constant key(s) %s also in D or written by another write" % ", ".join(clash))
        if "cancelled" in w.keys:
            unsafe.append("the key \"cancelled\"")
        if w.dynamic:
            unsafe.append("a computed key or a mapping")
        p = parents.get(id(st))
        while p is not None and p is not S.node:
            if isinstance(p, LOOPS):
                unsafe.append("a loop (line %d) holds the statement" % p.lineno)
                break
            p = parents.get(id(p))
        if "suppressed" not in info.classes:
            info.classes = {"manual"} if manual else (
                {"unsafe"} if unsafe else ({"unsafe", "safe"} if unsafe_maybe else {"safe"}))
            if manual_maybe and not manual:
                info.classes.add("manual")
            info.reasons = manual or unsafe or []
            info.maybe = manual_maybe + unsafe_maybe
        # the expected statements
        if primary is not None and w.form in ("subscript", "update", "ior"):
            for label, value in normal_blocks(w).items():
                info.forms[label] = _put(name, _json_block(value, info.quotes, quote), append, info.quotes, quote)
        info.receivers = {id(w.receiver)} if primary is not None else set()
        # builder forms: N.update(K), N.update(**K), N |= K of the builder's own **K
        if K is not None and primary is not None and _writes_k(w, K):
            _builder_form(info, st, name, K, sure_builder, manual, ctx, append, quote, parents)
        infos.append((info, w, manual, unsafe))
        out[stmt_id] = info

    # the `for k, v in K.items(): N[k] = v` loop of a builder
    if K is not None:
        for info, w, manual, _ in infos:
            loop = parents.get(id(info.stmt))
            if (w.form == "subscript" and w.node is info.stmt and isinstance(w.node.targets[0].slice, ast.Name)
                    and isinstance(w.node.value, ast.Name) and isinstance(loop, ast.For)
                    and loop.body == [info.stmt] and not loop.orelse and _is_items_loop(loop, K)
                    and loop.target.elts[0].id == w.node.targets[0].slice.id
                    and loop.target.elts[1].id == w.node.value.id):
                linfo = WriteInfo(loop, name)
                linfo.classes = {"manual"}  # no plain fix of the loop itself
                linfo.receivers = set(info.receivers)
                # the loop is the statement for the manual causes about D and N
                d_manual = [r for r in manual if "comment" not in r and "before D ends" not in r]
                if (loop.lineno, loop.col_offset) < d_end:
                    d_manual.append("the write starts before D ends")
                _builder_form(linfo, loop, name, K, sure_builder, d_manual, ctx, append, quote, parents)
                info.loop = linfo
                out[id(loop)] = linfo

    # references of N after D: "N is referenced ... other than as the receiver
    # of a planned write statement, in `return N`, or in N[K] ..."
    planned = set()
    for sid, info in out.items():
        if info.name == name and (info.classes - {"manual", "suppressed"} or
                                  (info.builder is not None and not info.builder_manual)):
            planned |= info.receivers
    var = next((v for v in ctx.scopes.bindings if v is not BUILTIN and v[1] == name and v[0].node is S.node), None)
    nested, after = [], []
    for scope, node in (ctx.scopes.uses.get(var, []) if var is not None else []):
        if scope is not var[0]:
            nested.append(node.lineno)
            continue
        if (node.lineno, node.col_offset) < d_end or id(node) in planned:
            continue
        parent = parents.get(id(node))
        if isinstance(parent, ast.Return) and parent.value is node:
            continue
        if isinstance(parent, ast.Subscript) and parent.value is node and isinstance(parent.slice, ast.Constant):
            kv = parent.slice.value
            if kv in ("status", "toolUseId") or not isinstance(kv, str) or (
                    kv != "content" and kv not in added and not any_dynamic):
                continue
        after.append(node.lineno)
    for info, w, manual, unsafe in infos:
        extra = []
        if nested:
            extra.append("`%s` is referenced from a nested scope (line %d)" % (name, nested[0]))
        if after:
            extra.append("`%s` is referenced after D at line(s) %s" % (name, sorted(set(after))))
        if extra and "safe" in info.classes:
            info.classes.discard("safe")
            info.classes.add("unsafe")
            info.reasons = info.reasons + extra
        elif extra and not info.reasons:
            info.reasons = extra


def _hashable(k):
    return (type(k).__name__ if isinstance(k, (bytes, str)) else "num", k)


def _owner_scope_node(node, parents, S):
    """Does `node` stand in S itself (not in a nested scope)?"""
    p = parents.get(id(node))
    while p is not None:
        if p is S.node:
            return True
        if isinstance(p, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef) + COMPREHENSIONS):
            return False
        p = parents.get(id(p))
    return isinstance(S.node, ast.Module)


def _writes_k(w, K):
    n = w.node
    if w.form == "update":
        if len(n.args) == 1 and not n.keywords and isinstance(n.args[0], ast.Name) and n.args[0].id == K:
            return True
        return (not n.args and len(n.keywords) == 1 and n.keywords[0].arg is None
                and isinstance(n.keywords[0].value, ast.Name) and n.keywords[0].value.id == K)
    return w.form == "ior" and isinstance(n.value, ast.Name) and n.value.id == K


def _is_items_loop(loop, K):
    t, it = loop.target, loop.iter
    return (isinstance(t, ast.Tuple) and len(t.elts) == 2 and all(isinstance(e, ast.Name) for e in t.elts)
            and isinstance(it, ast.Call) and not it.args and not it.keywords
            and isinstance(it.func, ast.Attribute) and it.func.attr == "items"
            and isinstance(it.func.value, ast.Name) and it.func.value.id == K)


def _leading(line):
    return line[: len(line) - len(line.lstrip(" \t"))]


def _guarded(st, K, parents):
    """Is `st` the first statement of the body of an `if K:` (its test the
    name K alone; ast has no parentheses, comments are no nodes)?  That `If`,
    else None."""
    parent = parents.get(id(st))
    if (isinstance(parent, ast.If) and parent.body and parent.body[0] is st
            and isinstance(parent.test, ast.Name) and parent.test.id == K):
        return parent
    return None


def _builder_form(info, st, name, K, sure, manual, ctx, append, quote, parents):
    """`if K:` and, one line and one indentation unit deeper, the append of
    {"json": K}; when the statement already is the first statement of the
    body of an `if K:`, the append alone at the statement's own place.
    Accepted as it is or unchanged (its applicability depends on the calls of
    the builder across the project)."""
    info.builder = "sure" if sure else "maybe"
    info.builder_manual = [r for r in manual if "comment" not in r]
    line = ctx.lines[st.lineno - 1]
    if line[: ctx.char_col(st.lineno, st.col_offset)].strip():
        info.builder_manual.append("the statement does not start its line")
    body = _put(name, _json_block(ast.Name(id=K, ctx=ast.Load()), info.quotes, quote), append, info.quotes, quote)
    if _guarded(st, K, parents) is not None:
        # already guarded: the append alone, where the statement stood (its
        # indentation is the text before the region, checked by the layout)
        info.forms["builder"] = body
        info.indent = None
        return
    info.forms["builder"] = ast.If(test=ast.Name(id=K, ctx=ast.Load()), body=[body], orelse=[])
    parent = parents.get(id(st))
    here = _leading(line)
    unit = None
    if isinstance(parent, ast.stmt):
        outer = _leading(ctx.lines[parent.lineno - 1])
        if here.startswith(outer) and len(here) > len(outer):
            unit = here[len(outer):]
    info.indent = (here, unit)


# ----------------------------------------------------------------------------
# walking the original and the fixed tree together


def entry_id(k, v):
    return ast.dump(k) if k is not None else "**" + ast.dump(v)


class Walker:
    def __init__(self, infos, mode, writes=None):
        self.infos = infos  # id(original dict) -> Info
        self.mode = mode
        self.writes = writes if writes is not None else {}  # id(original statement) -> WriteInfo
        self.write_observed = {}  # id(original write statement) -> (label matched or None, fixed node)
        self.quote_nodes = {}  # id(synthetic "content"/"json" constant) -> quote expected
        self.quote_checks = []  # (fixed constant, quote expected)
        self.indent_checks = []  # (WriteInfo, fixed `if K:` statement)
        self.skip = None  # the write statement compared as it is (the "unchanged" attempt)
        self.observed = {}  # id(original dict) -> (changed, fixed node)
        self.regions = []  # (original node, fixed node) of every changed original dict
        self.texts = []  # (original text node, fixed text node, original dict, fixed dict)
        self.mismatches = []  # (line, message)
        self.augmentable = {}  # id(original text block) -> (original dict, fixed dict)
        self.original_ids = set()

    def structural(self, o, f, why, line=None):
        if line is None:
            line = getattr(o, "lineno", None) or "%s (fixed)" % getattr(f, "lineno", "?")
        self.mismatches.append((line, "%s: expected `%s`, found `%s`" % (why, seg(o, None), seg(f, None))))

    def value(self, a, b):
        if isinstance(a, list):
            if not isinstance(b, list) or len(a) != len(b):
                return None
            differs = False
            for x, y in zip(a, b):
                r = self.value(x, y)
                if r is None:
                    return None
                differs |= r
            return differs
        if isinstance(a, ast.AST):
            if not isinstance(b, ast.AST):
                return None
            return self.node(a, b)
        if a is None or b is None:
            return False if a is b else None
        if type(a) is not type(b) or a != b or repr(a) != repr(b):
            return None
        return False

    def fork(self, skip=None, quotes=None):
        w = Walker(self.infos, self.mode, self.writes)
        w.augmentable = dict(self.augmentable)
        w.original_ids = self.original_ids
        w.skip = skip
        w.quote_nodes = dict(self.quote_nodes)
        if quotes:
            w.quote_nodes.update(quotes)
        return w

    def absorb(self, w):
        self.observed.update(w.observed)
        self.regions += w.regions
        self.texts += w.texts
        self.mismatches += w.mismatches
        self.augmentable.update(w.augmentable)
        self.write_observed.update(w.write_observed)
        self.quote_checks += w.quote_checks
        self.indent_checks += w.indent_checks

    def write_statement(self, o, f):
        """A TS004 write statement: unchanged (nested dicts fixed as usual) or
        rewritten exactly into one of the reference's statements."""
        info = self.writes[id(o)]
        attempts = []
        for order, (label, expected) in enumerate([("unchanged", o)] + list(info.forms.items())):
            w = self.fork(skip=id(o), quotes=None) if label == "unchanged" else self.fork(quotes=info.quotes)
            differs = w.node(expected, f)
            attempts.append((len(w.mismatches), type(expected) is not type(f), order, label, w, differs, expected))
            if not w.mismatches:
                break
        attempts.sort(key=lambda a: a[:3])
        count, _, _, label, w, differs, expected = attempts[0]
        if count:
            # Neither the statement as it was nor an expected rewrite: report
            # the closest reading's differences.
            self.mismatches.append((o.lineno, "write statement `%s` is neither unchanged nor rewritten as the "
                                    "reference expects (closest: %s `%s`), found `%s`" % (
                                        seg(o, None, 100), label, seg(expected, None, 120), seg(f, None, 120))))
            w.mismatches = w.mismatches[:4]
            self.absorb(w)
            self.write_observed[id(o)] = (None, f)
            self.regions.append((o, f))
            return True
        self.absorb(w)
        self.write_observed[id(o)] = (label, f)
        if label != "unchanged":
            self.regions.append((o, f))
            if label == "builder" and info.indent is not None:
                # the `if K:` form (an already guarded statement's form is
                # the bare append, with no new block to lay out)
                self.indent_checks.append((info, f))
            return True
        return differs

    def node(self, o, f):
        """Whether the subtree differs; structural mismatches are recorded
        (and count as differing)."""
        if id(o) in self.writes and id(o) != self.skip:
            return self.write_statement(o, f)
        quote = self.quote_nodes.get(id(o))
        if quote is not None and isinstance(f, ast.Constant):
            self.quote_checks.append((f, quote))
        if type(o) is not type(f):
            self.structural(o, f, "different node")
            return True
        if isinstance(o, ast.Dict):
            return self.dict(o, f)
        differs = False
        for field in o._fields:
            r = self.value(getattr(o, field, None), getattr(f, field, None))
            if r is None:
                self.structural(o, f, "%s.%s differs" % (type(o).__name__, field))
                return True
            differs |= r
        return differs

    def dict(self, o, f):
        info = self.infos.get(id(o))
        shape = o
        changed = False
        if info is not None:
            changed = len(f.keys) < len(o.keys)
            self.observed[id(o)] = (changed, f)
            if changed and info.cls == "suppressed":
                changed = False  # compared as is: the mismatch is reported below
            if changed:
                shape, first_text = fixed_shape(o, info.moved)
                if first_text is not None and self.mode == "default":
                    self.augmentable[first_text] = (o, f)
        if len(shape.keys) != len(f.keys):
            self.structural(shape, f, "different entries", getattr(o, "lineno", None))
            differs = True
            if info is not None and info.suppressed:
                left = collections.Counter(entry_id(k, v) for k, v in zip(f.keys, f.values))
                gone = []
                for i, (k, v) in enumerate(zip(o.keys, o.values)):
                    e = entry_id(k, v)
                    if left[e]:
                        left[e] -= 1
                    elif i in info.suppressed:
                        gone.append(seg(k, None, 40) if k is not None else "**" + seg(v, None, 40))
                if gone:
                    self.mismatches.append((o.lineno, "entries a suppression comment silences were moved: %s" % gone))
        else:
            differs = changed
            text_block = id(o) in self.augmentable
            for k1, k2, v1, v2 in zip(shape.keys, f.keys, shape.values, f.values):
                if k1 is None or k2 is None:
                    if k1 is not k2:
                        self.structural(shape, f, "a spread where a key was expected", getattr(o, "lineno", None))
                        differs = True
                        continue
                else:
                    differs |= self.node(k1, k2)
                if text_block and const_key(k1) == "text" and ast.dump(v1) != ast.dump(v2):
                    od, fd = self.augmentable[id(o)]
                    self.texts.append((v1, v2, od, fd))
                    differs = True
                    continue
                differs |= self.node(v1, v2)
        if differs and id(o) in self.original_ids:
            self.regions.append((o, f))
        return differs


# ----------------------------------------------------------------------------
# byte-level checks


def split_lines(data):
    """Lines of `data` (bytes) with their \\r\\n, \\r or \\n endings."""
    lines, start, i, n = [], 0, 0, len(data)
    while i < n:
        c = data[i]
        if c == 0x0A or c == 0x0D:
            j = i + 2 if c == 0x0D and i + 1 < n and data[i + 1] == 0x0A else i + 1
            lines.append(data[start:j])
            start = i = j
        else:
            i += 1
    if start < n:
        lines.append(data[start:])
    return lines


def comments(data):
    tokens = tokenize.tokenize(io.BytesIO(data).readline)
    return [(t.string, t.start[0]) for t in tokens if t.type == tokenize.COMMENT]


def compare_comments(orig_data, fixed_data):
    """(number of comments, [problem])"""
    before = comments(orig_data)
    after = comments(fixed_data)
    cb = collections.Counter(s for s, _ in before)
    ca = collections.Counter(s for s, _ in after)
    problems = []
    for s, n in sorted((cb - ca).items()):
        lines = [ln for t, ln in before if t == s]
        problems.append((lines[0], "comment %r lost (%d of %d; original lines %s)" % (s, n, cb[s], lines)))
    for s, n in sorted((ca - cb).items()):
        lines = [ln for t, ln in after if t == s]
        problems.append((None, "comment %r added (%d more than the original's %d; fixed lines %s)" % (s, n, cb[s], lines)))
    return len(before), problems


def utf8_line(lines, lineno, encoding):
    raw = lines[lineno - 1]
    text = raw.decode(encoding, "surrogateescape")
    if lineno == 1 and text.startswith("\ufeff"):
        text = text[1:]
    return text.encode("utf-8", "surrogateescape")


def compare_layout(orig_data, fixed_data, regions, encoding):
    """Lines outside the changed regions must be byte-identical.
    regions: (original node, fixed node) of changed original dicts.
    Returns (lines compared, [problem])."""
    # outermost only
    spans = []
    for o, f in regions:
        spans.append(((o.lineno, o.col_offset), (o.end_lineno, o.end_col_offset), o, f))
    spans.sort(key=lambda s: (s[0], (-s[1][0], -s[1][1])))
    outer = []
    for s in spans:
        if outer and s[0] >= outer[-1][0] and s[1] <= outer[-1][1]:
            continue
        outer.append(s)
    # merge regions that share a line
    groups = []
    for (start, end, o, f) in outer:
        fs, fe = (f.lineno, f.col_offset), (f.end_lineno, f.end_col_offset)
        if groups and start[0] <= groups[-1][1][0]:
            g = groups[-1]
            groups[-1] = (g[0], max(g[1], end), g[2], max(g[3], fe))
        else:
            groups.append((start, end, fs, fe))
    ol, fl = split_lines(orig_data), split_lines(fixed_data)
    problems = []
    compared = 0
    prev_o, prev_f = 0, 0  # last line (1-based) of the previous region
    for start, end, fs, fe in groups + [((len(ol) + 1, 0), None, (len(fl) + 1, 0), None)]:
        if fs[0] <= prev_f:
            problems.append((start[0], "fixed regions out of order or overlapping (fixed line %d)" % fs[0]))
            break
        seg_o = ol[prev_o : start[0] - 1]
        seg_f = fl[prev_f : fs[0] - 1]
        compared += len(seg_o)
        if seg_o != seg_f:
            for k in range(max(len(seg_o), len(seg_f))):
                a = seg_o[k] if k < len(seg_o) else None
                b = seg_f[k] if k < len(seg_f) else None
                if a != b:
                    problems.append(
                        (prev_o + k + 1, "line outside the fixed dicts differs: original line %d %r, fixed line %d %r"
                         % (prev_o + k + 1, a, prev_f + k + 1, b))
                    )
                    break
        if end is None:
            break
        a = utf8_line(ol, start[0], encoding)[: start[1]]
        b = utf8_line(fl, fs[0], encoding)[: fs[1]]
        if a != b:
            problems.append((start[0], "text before the dict on its first line differs: %r vs %r" % (a, b)))
        a = utf8_line(ol, end[0], encoding)[end[1] :]
        b = utf8_line(fl, fe[0], encoding)[fe[1] :]
        if a != b:
            problems.append((end[0], "text after the dict on its last line differs: %r vs %r" % (a, b)))
        prev_o, prev_f = end[0], fe[0]
    return compared, problems


# ----------------------------------------------------------------------------
# one file


def source_text(data):
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError:
        encoding = "utf-8"
    if encoding == "utf-8-sig":
        encoding = "utf-8"
    text = data.decode(encoding)
    if text.startswith("\ufeff"):
        text = text[1:]
    return text, encoding


def check_file(rel, orig_data, fixed_data, mode, report):
    """Adds this file's figures and problems to `report`."""
    try:
        orig = ast.parse(orig_data)
    except (SyntaxError, ValueError):
        report["skipped_unparsable"] += 1
        return
    try:
        fixed = ast.parse(fixed_data)
    except (SyntaxError, ValueError) as e:
        report["syntax_errors"].append("%s: %s" % (rel, e))
        return
    report["compared"] += 1
    ctx = FileContext(orig, orig_data)
    infos = {}
    for node in ast.walk(orig):
        if isinstance(node, ast.Dict):
            info = classify(node, ctx)
            if info is not None:
                infos[id(node)] = info
    writes = write_infos(orig, ctx)
    walker = Walker(infos, mode, writes)
    walker.original_ids = {id(n) for n in ast.walk(orig) if isinstance(n, ast.Dict)}
    walker.node(orig, fixed)

    def add(line, message, new_rule=False):
        (report["new_rule_mismatches"] if new_rule else report["mismatches"]).append("%s:%s: %s" % (rel, line, message))

    for line, message in walker.mismatches:
        add(line, message)
    check_writes(writes, walker, mode, fixed_data, report, add)
    expect_changed = {"safe"} if mode == "default" else {"safe", "unsafe"}
    for key, info in infos.items():
        report["classes"][info.cls] += 1
        report["suppressed_entries"] += len(info.suppressed)
        if info.cls == "suppressed":
            continue  # unchanged, or reported by the walker
        if key not in walker.observed:
            add(info.node.lineno, "dict not reached in the fixed tree (reference: %s)" % info.cls)
            continue
        changed, f = walker.observed[key]
        report["transformed_dicts"] += changed
        if info.cls == "manual" and info.reasons[0].startswith("walrus"):
            report["manual_walrus"] += 1
        want = info.cls in expect_changed
        if changed == want:
            continue
        relp = rel.replace(os.sep, "/")
        if not changed and any(p == relp and f.lineno <= n <= f.end_lineno for p, n in PINNED):
            # toolshape refused every layout because it would part silenced
            # code from its suppression comment; accepted only if this
            # reading finds silenced entries in the dict (or inside it), or
            # a comment on a moved entry's lines silencing a finding of any
            # dict of the file there (see `silenced_by_moved_comment`).
            silenced = any(infos.get(id(sub)) is not None and infos[id(sub)].suppressed
                           for sub in ast.walk(info.node) if isinstance(sub, ast.Dict))
            if silenced or silenced_by_moved_comment(info, infos, ctx):
                report["pinned_by_suppression"] += 1
                continue
            add(info.node.lineno, "dict left for manual repair for a suppression comment, but the reference sees "
                "no silenced entry in it, nor a finding silenced by a comment on a moved entry's line `%s`"
                % seg(info.node, None, 120))
            continue
        only_new_rule = info.cls == "unsafe" and info.reasons == [NEW_RULE]
        if changed:
            msg = "dict changed, but the reference classes it %s: %s" % (info.cls.upper(), "; ".join(info.reasons))
        elif info.cls == "safe":
            msg = "dict left unchanged, but the reference classes it SAFE"
        else:
            msg = "dict left unchanged, but the reference classes it UNSAFE (%s) and --unsafe-fixes was given" % (
                "; ".join(info.reasons))
        add(info.node.lineno, msg + " `%s`" % seg(info.node, None, 120), new_rule=only_new_rule)
    # text augmentations
    if walker.texts:
        orig_text, _ = source_text(orig_data)
        fixed_text, _ = source_text(fixed_data)
        for ov, fv, od, fd in walker.texts:
            report["augmented_texts"] += 1
            problem = check_augment.check_augmented(orig_text, ov, fixed_text, fv, od, fd)
            if problem:
                add(od.lineno, "text augmentation: " + problem)
    n, problems = compare_comments(orig_data, fixed_data)
    report["comments_compared"] += n
    for line, message in problems:
        add(line if line is not None else "?", message)
    _, encoding = source_text(orig_data)
    n, problems = compare_layout(orig_data, fixed_data, walker.regions, encoding)
    report["lines_compared"] += n
    for line, message in problems:
        add(line, message)


def silenced_lines(info, ctx):
    """The lines whose comments silence a finding of `info`'s dict: each
    suppressed entry's own line, or the dict's first line (see `classify`)."""
    d, lines = info.node, set()
    for i in info.suppressed:
        code = "TS002" if d.keys[i] is None else "TS001"
        for line in (ctx.entry_line(d, i), d.lineno):
            if ctx.silenced(line, code):
                lines.add(line)
    return lines


def silenced_by_moved_comment(info, infos, ctx):
    """Does a suppression comment on a line that one of the dict's moved
    entries spans (README: "carry the comment away with a moved entry that
    shared its line") silence a finding reported on that line?  Such a
    comment pins the dict although nothing in it is silenced.

    A comment silences the findings of every tool result, not only of the
    dicts around this one (README, "Suppressions and baselines": "on a
    dict's first line or on an entry's line, silences those findings";
    docs/rules.md: a TS004 "on the line where its span starts, or on the
    line of its `dict`'s `{`"), so any dict of the file counts: one around
    it, inside it, beside it on that line, in an f-string's replacement
    field there.  A finding counts when the comment covers its code and
    stands on its entry's line or its dict's first line (`silenced_lines`),
    or, for a TS004 write, on its span's first line or its dict's `{` line
    (`classify_writes`).  A comment that silences nothing, or only codes
    with no finding on its line, pins nothing.  (TS003, a builder call's
    finding, is not modelled here: a pin for it is reported.)"""
    d = info.node
    moved_lines = set()
    for j in info.moved:
        moved_lines.update(range(ctx.entry_line(d, j), d.values[j].end_lineno + 1))
    moved_lines &= set(ctx.comments)
    if not moved_lines:
        return False
    if moved_lines & ctx.ts004_silenced_lines:
        return True
    return any(other.suppressed and silenced_lines(other, ctx) & moved_lines for other in infos.values())


def describe_write(info):
    shown = sorted(c.upper() for c in info.classes)
    text = "/".join(shown)
    if info.reasons:
        text += ": " + "; ".join(info.reasons)
    if info.maybe:
        text += " (open in the spec: %s)" % "; ".join(info.maybe)
    return text


def check_writes(writes, walker, mode, fixed_data, report, add):
    """Each TS004 write statement changed exactly when the reference says, and
    into exactly the expected statement (quotes and `if K:` layout too)."""
    fixed_text, _ = source_text(fixed_data)
    flines = fixed_text.replace("\r\n", "\n").replace("\r", "\n").split("\n")

    def fixed_char(node):
        line = flines[node.lineno - 1]
        col = len(line.encode("utf-8", "surrogatepass")[: node.col_offset].decode("utf-8", "surrogatepass"))
        return line[col:].lstrip("rRbBuUfF")[:1]

    for info in writes.values():
        st = info.stmt
        kind = "builder loop" if isinstance(st, ast.For) else "write statement"
        if info.loop is not None:
            outer = walker.write_observed.get(id(info.loop.stmt))
            if outer is not None and outer[0] != "unchanged":
                continue  # rewritten with its loop
        observed = walker.write_observed.get(id(st))
        if observed is None:
            add(st.lineno, "%s not reached in the fixed tree `%s`" % (kind, seg(st, None, 100)))
            continue
        label, _ = observed
        if info.builder is None:
            for c in info.classes:
                report["write_classes"][c] += 1
        elif info.builder is not None:
            report["write_classes"]["builder"] += 1
        if label is None:
            continue  # a structural mismatch, reported by the walker
        report["transformed_writes"] += label != "unchanged"
        report["builder_forms"] += label == "builder"
        accept = info.accept(mode)
        if label in accept:
            continue
        text = "`%s`" % seg(st, None, 100)
        if label == "unchanged":
            add(st.lineno, "%s left unchanged, but the reference expects it rewritten in --mode %s (%s) %s"
                % (kind, mode, describe_write(info), text))
        elif label == "builder":
            why = "; ".join(info.builder_manual) if info.builder_manual else "not a builder's own **K"
            add(st.lineno, "%s rewritten into the builder's `if K:` form, but the reference says: %s (%s) %s"
                % (kind, why, describe_write(info), text))
        else:
            if info.builder == "sure" and not info.builder_manual:
                why = "a result builder's own **K must take the `if K:` form"
            elif info.loop is not None and info.loop.builder == "sure":
                why = "it is the body of a result builder's `for k, v in K.items():` loop, fixed as a whole"
            else:
                why = "the reference classes it %s" % describe_write(info)
            add(st.lineno, "%s rewritten, but %s (--mode %s) %s" % (kind, why, mode, text))
    for node, quote in walker.quote_checks:
        found = fixed_char(node)
        if found != quote:
            add("%s (fixed)" % node.lineno, "%r written with the quote %r; the display's first quote is %r"
                % (node.value, found, quote))
    for info, f in walker.indent_checks:
        here, unit = info.indent
        body = f.body[0]
        if body.lineno != f.lineno + 1:
            add("%s (fixed)" % f.lineno, "the append of the `if %s:` form is not on the next line" % ast.unparse(f.test))
            continue
        got_if = _leading(flines[f.lineno - 1])
        got_body = _leading(flines[body.lineno - 1])
        if unit is not None and (got_if != here or got_body != here + unit):
            add("%s (fixed)" % f.lineno, "the `if %s:` form is indented %r / %r, expected %r / %r (one unit %r deeper)"
                % (ast.unparse(f.test), got_if, got_body, here, here + unit, unit))


def new_report(mode):
    return {"mode": mode, "files": 0, "compared": 0, "skipped_unparsable": 0, "transformed_dicts": 0,
            "classes": {"safe": 0, "unsafe": 0, "manual": 0, "suppressed": 0}, "suppressed_entries": 0,
            "manual_walrus": 0, "augmented_texts": 0, "pinned_by_suppression": 0,
            "comments_compared": 0, "lines_compared": 0, "mismatches": [], "new_rule_mismatches": [],
            "transformed_writes": 0, "builder_forms": 0,
            "write_classes": {"safe": 0, "unsafe": 0, "manual": 0, "suppressed": 0, "builder": 0},
            "syntax_errors": []}


def check_trees(orig_root, fixed_root, mode):
    report = new_report(mode)
    for dirpath, dirnames, filenames in os.walk(orig_root):
        dirnames.sort()
        for name in sorted(filenames):
            if not name.endswith((".py", ".pyi")):
                continue
            orig_path = os.path.join(dirpath, name)
            rel = os.path.relpath(orig_path, orig_root)
            report["files"] += 1
            with open(orig_path, "rb") as f:
                orig_data = f.read()
            with open(os.path.join(fixed_root, rel), "rb") as f:
                fixed_data = f.read()
            check_file(rel, orig_data, fixed_data, mode, report)
    report["augmented_empty_texts"] = len(check_augment.EMPTY_TEXT)
    return report


# ----------------------------------------------------------------------------
# negative controls

SELF_TEST_ORIGINAL = b'''\
import json  # imports

def report(rows, meta):
    x = 1  # before
    out = {
        "status": "success",  # the status
        "content": [{"text": "Done."}],
        "rows": rows,  # row count
        "frames": meta.frames,
    }
    y = 2  # after
    return out
'''

SELF_TEST_FIXED = b'''\
import json  # imports

def report(rows, meta):
    x = 1  # before
    out = {
        "status": "success",  # the status
        "content": [
            {"text": "Done."},
            {"json": {
                "rows": rows,  # row count
                "frames": meta.frames,
            }},
        ],
    }
    y = 2  # after
    return out
'''

SELF_TEST_AUGMENTED = SELF_TEST_FIXED.replace(
    b'{"text": "Done."}', b'{"text": f"Done. (rows={rows}, frames={meta.frames})"}')


# content that is a name: SAFE only for a fresh list of the function's own,
# only grown before the dict (README, the content-name rule)
NAME_ORIGINAL = b'''\
def report(rows, meta):
    blocks = [{"text": "Done."}]
    if rows:
        blocks.append({"text": "rows"})
    out = {
        "status": "success",
        "content": blocks,
        "rows": rows,
    }
    return out
'''

NAME_FIXED = NAME_ORIGINAL.replace(
    b'        "content": blocks,\n        "rows": rows,\n',
    b'        "content": [*blocks, {"json": {"rows": rows}}],\n')

NAME_INIT = b'    blocks = [{"text": "Done."}]\n'
NAME_VARIANTS = [
    # (what, [(old, new) applied to both files], reason expected, or None if SAFE)
    ("a list() call grown by +=", [(NAME_INIT, b"    blocks = list(meta)\n    blocks += [{\"text\": r} for r in rows]\n")],
     None),
    ("a parameter", [(b"(rows, meta):\n" + NAME_INIT, b"(rows, meta, blocks):\n")], "bound by a parameter"),
    ("a module-level name", [(b"def report(rows, meta):\n" + NAME_INIT, NAME_INIT.lstrip() + b"\n\ndef report(rows, meta):\n")],
     "a module-level name"),
    ("a name of an enclosing function", [(b"    out = {", b"    out = (lambda: {"), (b"    }\n    return", b"    })()\n    return")],
     "a name of an enclosing function"),
    ("a list() that is not the builtin", [(b"(rows, meta):\n" + NAME_INIT, b"(rows, meta, list=tuple):\n    blocks = list(meta)\n")],
     "not a fresh list"),
    ("a += of something else", [(b"    out = {", b"    blocks += meta\n    out = {")], "augmented assignment"),
    ("a list changed after the dict", [(b"    return out", b"    blocks.append(meta)\n    return out")], "used after the dict"),
    ("a list passed on before the dict", [(b"    out = {", b"    register(blocks)\n    out = {")], "used before the dict"),
    ("a list read by a closure", [(b"    out = {", b"    later = lambda: blocks.clear()\n    out = {")],
     "read in a nested scope"),
    ("a list changed inside the dict", [(b"    out = {\n        \"status\": \"success\",", b"    out = {\n        \"status\": blocks.pop(),")],
     "used inside the dict"),
    ("a dict built in a loop", [(b"    out = {", b"    for _ in rows: out = {")], "built in a loop"),
]


# a moved spread that evidently may bring "cancelled" (README, "What a fix
# does": "Moving `cancelled` is unsafe too"): UNSAFE even before "status",
# where a dict display of constant keys without "toolUseId" is otherwise SAFE
SPREAD_LINE = b'    out = {\n'
SPREAD_ROWS = b'                "rows": rows,  # row count\n'


def spread_case(operand):
    """SELF_TEST_ORIGINAL with a leading `**operand`, and its correct fix."""
    orig = edited(SELF_TEST_ORIGINAL, [(SPREAD_LINE, SPREAD_LINE + b"        **" + operand + b",\n")])
    fixed = edited(SELF_TEST_FIXED, [(SPREAD_ROWS, b"                **" + operand + b",\n" + SPREAD_ROWS)])
    return orig, fixed


def cancelled_controls():
    reason = 'may bring "cancelled", which the Strands SDK reads'
    controls = []
    for what, operand in [
        ("a dict display", b'{"cancelled": True}'),
        ("a conditional expression", b'({} if rows else {"cancelled": True})'),
        ("an `or`, recursively", b'(meta.extra or ({"cancelled": True} if rows else {}))'),
        ("a spread inside a display", b'{**{"cancelled": True}}'),
    ]:
        orig, fixed = spread_case(operand)
        controls += [
            ("cancelled spread, %s: the fix applied without --unsafe-fixes" % what, "default", orig, fixed,
             "dict changed, but the reference classes it UNSAFE: "),
            ("cancelled spread, %s: the reason" % what, "default", orig, fixed, reason),
            ("cancelled spread, %s: the fix with --unsafe-fixes" % what, "unsafe", orig, fixed, None),
            ("cancelled spread, %s: left with --unsafe-fixes" % what, "unsafe", orig, orig,
             "dict left unchanged, but the reference classes it UNSAFE (the spread"),
        ]
    # Not evidently: another constant key, a name - the verdict stays SAFE.
    orig, fixed = spread_case(b'{"other": 1}')
    controls += [
        ("spread of another key: the fix accepted", "unsafe", orig, fixed, None),
        ("spread of another key: a safe fix not applied", "default", orig, orig,
         "dict left unchanged, but the reference classes it SAFE"),
    ]
    # A nested `**` of a name may hold toolUseId: UNSAFE only for that,
    # with no "cancelled" reason (a name does not evidently bring it).
    orig, fixed = spread_case(b'{**meta.extra}')
    controls += [
        ("spread of a nested name spread: the fix accepted", "unsafe", orig, fixed, None),
        ("spread of a nested name spread: no \"cancelled\" reason", "unsafe", orig, orig,
         "UNSAFE (%s) and --unsafe-fixes was given" % NEW_RULE),
    ]
    # A nested `**` of a display of other constant keys holds no
    # toolUseId: SAFE.
    orig, fixed = spread_case(b'{**{"other": 1}, "more": 2}')
    controls += [
        ("spread of a nested display spread: the fix accepted", "default", orig, fixed, None),
        ("spread of a nested display spread: a safe fix not applied", "default", orig, orig,
         "dict left unchanged, but the reference classes it SAFE"),
    ]
    return controls


def name_controls():
    """Content that is a name, fixed in default mode: every variant the rule
    forbids must be reported (with its reason), the allowed ones accepted."""
    controls = [
        ("content name: the correct fix", "default", NAME_ORIGINAL, NAME_FIXED, None),
        ("content name: a safe fix not applied", "default", NAME_ORIGINAL, NAME_ORIGINAL,
         "dict left unchanged, but the reference classes it SAFE"),
    ]
    for what, edits, reason in NAME_VARIANTS:
        orig, fixed = NAME_ORIGINAL, NAME_FIXED
        for old, new in edits:
            assert old in orig and old in fixed, (what, old)
            orig, fixed = orig.replace(old, new), fixed.replace(old, new)
        if reason is None:
            controls.append(("content name, %s: the fix accepted" % what, "default", orig, fixed, None))
        else:
            controls.append(("content name, %s: the fix applied without --unsafe-fixes" % what, "default", orig, fixed,
                             "reference classes it UNSAFE: content is not a list literal (Name: "))
            controls.append(("content name, %s: the reason" % what, "default", orig, fixed, reason))
            controls.append(("content name, %s: the fix with --unsafe-fixes" % what, "unsafe", orig, fixed, None))
    return controls


# TS004: later writes (docs/rules.md, "### TS004")
WRITES_ORIGINAL = b"""\
def simple(out, size):
    payload = {"status": "success", "content": [{"text": out}]}
    payload["size_bytes"] = size  # the size
    return payload


def keywords(rows):
    result = {"status": "success", "content": [{"text": "done"}]}
    result.update(rows=rows, cols=3)
    return result


def named(blocks, n):
    result = {"status": "success", "content": blocks}
    result |= {"n": n}
    return result


def looped(items):
    result = {"status": "success", "content": []}
    for item in items:
        result["last"] = item
    return result


def nested(a):
    result = {"status": "success", "content": []}
    result["inner"] = {"status": "success", "content": [], "x": a}
    return result


def reassigned(a, c):
    result = {"status": "success", "content": []}
    result["a"] = a
    result["content"] = c
    return result
"""

WRITES_SAFE = [
    (b'    payload["size_bytes"] = size  # the size\n',
     b'    payload["content"].append({"json": {"size_bytes": size}})  # the size\n'),
    (b"    result.update(rows=rows, cols=3)\n", b'    result["content"].append({"json": {"rows": rows, "cols": 3}})\n'),
    (b'    result |= {"n": n}\n', b'    result["content"] = [*result["content"], {"json": {"n": n}}]\n'),
    (b'    result["inner"] = {"status": "success", "content": [], "x": a}\n',
     b'    result["content"].append({"json": {"inner": {"status": "success", "content": [{"json": {"x": a}}]}}})\n'),
]
WRITES_UNSAFE = [(b'        result["last"] = item\n', b'        result["content"].append({"json": {"last": item}})\n')]


def edited(data, edits):
    for old, new in edits:
        assert data.count(old) == 1, old
        data = data.replace(old, new)
    return data


WRITES_DEFAULT = edited(WRITES_ORIGINAL, WRITES_SAFE)
WRITES_UNSAFE_FIXED = edited(WRITES_DEFAULT, WRITES_UNSAFE)

BUILDER_ORIGINAL = b"""\
def _ok(text, **extra):
    payload = {"status": "success", "content": [{"text": text}]}
    payload.update(extra)
    return payload


def _each(text, **extra):
    payload = {"status": "success", "content": [{"text": text}]}
    for k, v in extra.items():
        payload[k] = v
    return payload
"""
BUILDER_FIXED = edited(BUILDER_ORIGINAL, [
    (b"    payload.update(extra)\n", b'    if extra:\n        payload["content"].append({"json": extra})\n'),
    (b"    for k, v in extra.items():\n        payload[k] = v\n",
     b'    if extra:\n        payload["content"].append({"json": extra})\n')])

# A write already guarded by `if K:` (the first statement of its body): the
# append alone, at its own place (docs/rules.md, TS004 fixes).
GUARDED_ORIGINAL = b"""\
def _ok(text, **extra):
    payload = {"status": "success", "content": [{"text": text}]}
    if extra:
        payload.update(extra)
    return payload


def _each(text, **extra):
    payload = {"status": "success", "content": [{"text": text}]}
    if extra:  # only with extras
        for k, v in extra.items():
            payload[k] = v
    return payload
"""
GUARDED_FIXED = edited(GUARDED_ORIGINAL, [
    (b"        payload.update(extra)\n", b'        payload["content"].append({"json": extra})\n'),
    (b"        for k, v in extra.items():\n            payload[k] = v\n",
     b'        payload["content"].append({"json": extra})\n')])
# the guard is not `if K:` alone, or the write is not its body's first
# statement: the `if K:` form as before
UNGUARDED_ORIGINAL = b"""\
def _ok(text, **extra):
    payload = {"status": "success", "content": [{"text": text}]}
    if extra and text:
        payload.update(extra)
    return payload


def _each(text, **extra):
    payload = {"status": "success", "content": [{"text": text}]}
    if extra:
        text = text.strip()
        payload |= extra
    return payload
"""
UNGUARDED_FIXED = edited(UNGUARDED_ORIGINAL, [
    (b"        payload.update(extra)\n",
     b'        if extra:\n            payload["content"].append({"json": extra})\n'),
    (b"        payload |= extra\n", b'        if extra:\n            payload["content"].append({"json": extra})\n')])


def pinned_controls():
    """Dicts toolshape leaves for manual repair to keep a suppression
    comment with what it silences (README, "What a fix does"); each control
    carries its --pinned-by-suppression lines.  A comment inside an inner
    dict's moved entry may silence a finding of an enclosing dict on its
    line: on the enclosing dict's first line, or on an entry's own line;
    or of any other dict whose finding is on that line (a sibling in an
    f-string's replacement field, a TS004 write's span)."""
    first_line = b'''def f(timing, x):
    return {"status": "error", "content": "s", "r": [{"status": "error", "content": [], "k"  # noqa: TS002
        : x}], **timing}
'''
    entry_line = b'''def g(x):
    return {"status": "error", "content": "s",
            "Content": [{"status": "error", "content": [], **{  # toolshape: ignore[TS001]
                "a": x}}]}
'''
    # The comment on a line no moved entry shares, or silencing a code the
    # enclosing dict has no finding of: no reason to leave the dict.
    elsewhere = b'''def f(timing, x):
    return {"status": "error", "content": "s",  # noqa: TS002
        "r": [{"status": "error", "content": [], "k": x}], **timing}
'''
    other_code = first_line.replace(b"TS002", b"TS003")
    # Not around the pinned dict: a dict in an f-string beside it, whose
    # spread's finding the comment on the moved entry's line silences; and
    # a TS004 write whose span starts on that line.
    fstring_sibling = b'''def h(x, kw):
    return [f"{ {'status': 'error', 'content': [], **kw} }", {"status": "error", "content": [], "k"  # noqa: TS002
        : x}]
'''
    # The same comment with no finding of that code on its line.
    fstring_clean = fstring_sibling.replace(b", **kw} }", b"} }")
    later_write = b'''def w(x):
    r = {"status": "success", "content": []}
    r["k"] = [{"status": "error", "content": [], "a"  # noqa: TS004
        : x}]
    return r
'''
    # The write is silenced on its dict's line; the comment on the moved
    # entry's line is not where the write's span starts: it silences nothing.
    write_inside = b'''def w(x):
    r = {"status": "success", "content": []}  # noqa: TS004
    r["k"] = (
        [{"status": "error", "content": [], "a"  # noqa: TS004
        : x}])
    return r
'''
    refused = "dict left for manual repair for a suppression comment, but the reference sees no silenced entry"
    return [
        ("pinned by an enclosing dict's first-line suppression", "unsafe", first_line, first_line, None, [2]),
        ("pinned by an enclosing entry's suppression", "unsafe", entry_line, entry_line, None, [3]),
        ("pinned with the enclosing suppression on another line", "unsafe", elsewhere, elsewhere, refused, [3]),
        ("pinned with a suppression of another code", "unsafe", other_code, other_code, refused, [2]),
        ("an enclosing suppression without a pin", "unsafe", first_line, first_line,
         "dict left unchanged, but the reference classes it SAFE"),
        ("pinned by a suppression of a dict in an f-string beside it", "unsafe", fstring_sibling, fstring_sibling,
         None, [2]),
        ("pinned with a suppression silencing nothing on its line", "unsafe", fstring_clean, fstring_clean,
         refused, [2]),
        ("a suppression of a dict beside it without a pin", "unsafe", fstring_sibling, fstring_sibling,
         "dict left unchanged, but the reference classes it SAFE"),
        ("pinned by a suppression of a TS004 write", "unsafe", later_write, later_write, None, [3]),
        ("pinned with a TS004 suppression off the write's first line", "unsafe", write_inside, write_inside,
         refused, [4]),
    ]


def write_controls():
    """TS004 write statements: the right rewrite in each mode, and wrong ones."""
    o, d, u = WRITES_ORIGINAL, WRITES_DEFAULT, WRITES_UNSAFE_FIXED
    reassigned = (b'    result["a"] = a\n    result["content"] = c\n',
                  b'    result["content"].append({"json": {"a": a}})\n    result["content"] = c\n')
    neither = "is neither unchanged nor rewritten as the reference expects"
    return [
        ("TS004: the correct fix", "unsafe", o, u, None),
        ("TS004: the correct fix, safe only", "default", o, d, None),
        ("TS004: CRLF kept", "unsafe", o.replace(b"\n", b"\r\n"), u.replace(b"\n", b"\r\n"), None),
        ("TS004: an unsafe write (in a loop) rewritten in safe mode", "default", o, u,
         "write statement rewritten, but the reference classes it UNSAFE: a loop (line 21) holds the statement"),
        ("TS004: an unsafe write left with --unsafe-fixes", "unsafe", o, d,
         "write statement left unchanged, but the reference expects it rewritten in --mode unsafe"),
        ("TS004: a safe write left unchanged", "default", o, edited(d, [(WRITES_SAFE[0][1], WRITES_SAFE[0][0])]),
         "write statement left unchanged, but the reference expects it rewritten in --mode default (SAFE)"),
        ("TS004: a dropped key", "unsafe", o, edited(u, [(b'{"rows": rows, "cols": 3}', b'{"rows": rows}')]), neither),
        ("TS004: a swapped value", "unsafe", o, edited(u, [(b'{"rows": rows, "cols": 3}', b'{"rows": 3, "cols": rows}')]),
         neither),
        ("TS004: an invented key", "unsafe", o,
         edited(u, [(b'{"rows": rows, "cols": 3}', b'{"rows": rows, "cols": 3, "n": 1}')]), neither),
        ("TS004: a nested key moved to the outer json block", "unsafe", o, edited(u, [(
            b'{"json": {"inner": {"status": "success", "content": [{"json": {"x": a}}]}}}',
            b'{"json": {"inner": {"status": "success", "content": []}, "x": a}}')]), neither),
        ("TS004: the nested result left unfixed", "default", o, edited(d, [(
            b'{"inner": {"status": "success", "content": [{"json": {"x": a}}]}}',
            b'{"inner": {"status": "success", "content": [], "x": a}}')]),
         "dict left unchanged, but the reference classes it SAFE"),
        ("TS004: a text block instead of a json block", "unsafe", o,
         edited(u, [(b'append({"json": {"size_bytes"', b'append({"text": {"size_bytes"')]), neither),
        ("TS004: another receiver", "unsafe", o,
         edited(u, [(b'    payload["content"].append({"json": {"size', b'    out["content"].append({"json": {"size')]),
         neither),
        ("TS004: append to a content list the display does not own", "unsafe", o,
         edited(u, [(WRITES_SAFE[2][1], b'    result["content"].append({"json": {"n": n}})\n')]), neither),
        ("TS004: a new list where the display's list takes the append", "unsafe", o, edited(u, [(
            WRITES_SAFE[0][1],
            b'    payload["content"] = [*payload["content"], {"json": {"size_bytes": size}}]  # the size\n')]), neither),
        ("TS004: the write's comment dropped", "unsafe", o, edited(u, [(b"}})  # the size\n", b"}})\n")]),
         "comment '# the size' lost"),
        ("TS004: the other quote", "unsafe", o,
         edited(u, [(b'payload["content"].append({"json": {"size', b"payload['content'].append({'json': {\"size")]),
         "'content' written with the quote \"'\"; the display's first quote is '\"'"),
        ("TS004: a manual write rewritten (content reassigned later)", "unsafe", o, edited(u, [reassigned]),
         "write statement rewritten, but the reference classes it MANUAL: `result[\"content\"]` is assigned at line 35"),
        ("TS004: a line outside the write statements changed", "unsafe", o,
         edited(u, [(b"    return payload\n", b"    return  payload\n")]), "line outside the fixed dicts differs"),
        ("TS004: the write moved into the display", "unsafe", o, edited(u, [
            (b'    payload = {"status": "success", "content": [{"text": out}]}\n'
             b'    payload["content"].append({"json": {"size_bytes": size}})  # the size\n',
             b'    payload = {"status": "success", "content": [{"text": out}, {"json": {"size_bytes": size}}]}  # the size\n'
             b'    pass\n')]), "different node"),
        ("TS004 builder: left as it is", "unsafe", BUILDER_ORIGINAL, BUILDER_ORIGINAL, None),
        ("TS004 builder: the `if K:` forms", "default", BUILDER_ORIGINAL, BUILDER_FIXED, None),
        ("TS004 builder: a plain json block for the builder's own **K", "unsafe", BUILDER_ORIGINAL,
         edited(BUILDER_ORIGINAL, [(b"    payload.update(extra)\n", b'    payload["content"].append({"json": dict(extra)})\n')]),
         "a result builder's own **K must take the `if K:` form"),
        ("TS004 builder: the loop's body rewritten alone", "unsafe", BUILDER_ORIGINAL,
         edited(BUILDER_ORIGINAL, [(b"        payload[k] = v\n", b'        payload["content"].append({"json": {k: v}})\n')]),
         "body of a result builder's `for k, v in K.items():` loop"),
        ("TS004 builder: `if K:` without its test", "default", BUILDER_ORIGINAL,
         edited(BUILDER_FIXED, [(b"    if extra:\n        payload[\"content\"].append({\"json\": extra})\n    return payload\n\n\ndef _each",
                                 b"    if True:\n        payload[\"content\"].append({\"json\": extra})\n    return payload\n\n\ndef _each")]),
         neither),
        ("TS004 builder: the append on the `if` line", "default", BUILDER_ORIGINAL,
         edited(BUILDER_FIXED, [(b"    if extra:\n        payload[\"content\"].append({\"json\": extra})\n    return payload\n\n\ndef _each",
                                 b"    if extra: payload[\"content\"].append({\"json\": extra})\n    return payload\n\n\ndef _each")]),
         "is not on the next line"),
        ("TS004 builder: two units deeper", "default", BUILDER_ORIGINAL,
         edited(BUILDER_FIXED, [(b"    if extra:\n        payload[\"content\"].append({\"json\": extra})\n    return payload\n\n\ndef _each",
                                 b"    if extra:\n            payload[\"content\"].append({\"json\": extra})\n    return payload\n\n\ndef _each")]),
         "is indented"),
        ("TS004 builder, guarded by `if K:`: left as it is", "unsafe", GUARDED_ORIGINAL, GUARDED_ORIGINAL, None),
        ("TS004 builder, guarded by `if K:`: the bare append", "default", GUARDED_ORIGINAL, GUARDED_FIXED, None),
        ("TS004 builder, guarded by `if K:`: CRLF kept", "default", GUARDED_ORIGINAL.replace(b"\n", b"\r\n"),
         GUARDED_FIXED.replace(b"\n", b"\r\n"), None),
        ("TS004 builder, guarded by `if K:`: a redundant nested `if K:`", "default", GUARDED_ORIGINAL,
         edited(GUARDED_FIXED, [(b'    if extra:\n        payload["content"].append({"json": extra})\n    return payload\n\n\ndef _each',
                                 b'    if extra:\n        if extra:\n            payload["content"].append({"json": extra})\n'
                                 b'    return payload\n\n\ndef _each')]),
         neither),
        ("TS004 builder, guarded by `if K:`: the loop fixed with a redundant `if K:`", "default", GUARDED_ORIGINAL,
         edited(GUARDED_FIXED, [(b'    if extra:  # only with extras\n        payload["content"].append({"json": extra})\n',
                                 b'    if extra:  # only with extras\n        if extra:\n'
                                 b'            payload["content"].append({"json": extra})\n')]),
         "is neither unchanged nor rewritten"),
        ("TS004 builder, guarded by `if K:`: a plain json block", "unsafe", GUARDED_ORIGINAL,
         edited(GUARDED_ORIGINAL, [(b"        payload.update(extra)\n", b'        payload["content"].append({"json": dict(extra)})\n')]),
         "a result builder's own **K must take the `if K:` form"),
        ("TS004 builder, guarded by `if K:`: the append dedented", "default", GUARDED_ORIGINAL,
         edited(GUARDED_FIXED, [(b'    if extra:\n        payload["content"].append({"json": extra})\n    return payload\n\n\ndef _each',
                                 b'    if extra:\n     payload["content"].append({"json": extra})\n    return payload\n\n\ndef _each')]),
         "differs"),
        ("TS004 builder, not guarded by `if K:` alone: the `if K:` forms", "default", UNGUARDED_ORIGINAL,
         UNGUARDED_FIXED, None),
        ("TS004 builder, `if K and x:` is no guard: the bare append", "default", UNGUARDED_ORIGINAL,
         edited(UNGUARDED_FIXED, [(b'        if extra:\n            payload["content"].append({"json": extra})\n    return payload\n\n\ndef _each',
                                   b'        payload["content"].append({"json": extra})\n    return payload\n\n\ndef _each')]),
         neither),
        ("TS004 builder, the write not first in the `if K:` body: the bare append", "default", UNGUARDED_ORIGINAL,
         edited(UNGUARDED_FIXED, [(b'        text = text.strip()\n        if extra:\n            payload["content"].append({"json": extra})\n',
                                   b'        text = text.strip()\n        payload["content"].append({"json": extra})\n')]),
         neither),
        ("TS004 builder, unguarded: fixed without its `if`", "default", BUILDER_ORIGINAL,
         edited(BUILDER_FIXED, [(b'    if extra:\n        payload["content"].append({"json": extra})\n    return payload\n\n\ndef _each',
                                 b'    payload["content"].append({"json": extra})\n    return payload\n\n\ndef _each')]),
         neither),
    ]


def self_test():
    """Each wrong fix must be caught, with the expected message."""
    controls = [
        ("the correct fix", "unsafe", SELF_TEST_ORIGINAL, SELF_TEST_FIXED, None),
        ("the correct fix, augmented", "default", SELF_TEST_ORIGINAL, SELF_TEST_AUGMENTED, None),
        ("CRLF kept", "unsafe", SELF_TEST_ORIGINAL.replace(b"\n", b"\r\n"), SELF_TEST_FIXED.replace(b"\n", b"\r\n"), None),
        ("a dropped comment", "unsafe", SELF_TEST_ORIGINAL, SELF_TEST_FIXED.replace(b"  # row count", b""),
         "comment '# row count' lost"),
        ("a duplicated comment", "unsafe", SELF_TEST_ORIGINAL,
         SELF_TEST_FIXED.replace(b'"frames": meta.frames,', b'"frames": meta.frames,  # row count'),
         "comment '# row count' added"),
        ("a comment moved outside the dict", "unsafe", SELF_TEST_ORIGINAL,
         SELF_TEST_FIXED.replace(b"  # the status", b"").replace(b"y = 2  # after", b"y = 2  # after  # the status"),
         "line outside the fixed dicts differs"),
        ("a collapsed line outside the dicts", "unsafe", SELF_TEST_ORIGINAL,
         SELF_TEST_FIXED.replace(b"    x = 1  # before\n", b"    x = 1  # before; ").replace(b"; ", b"\n", 0),
         None),  # placeholder, replaced below
        ("a line ending changed outside the dicts", "unsafe", SELF_TEST_ORIGINAL,
         SELF_TEST_FIXED.replace(b"    y = 2  # after\n", b"    y = 2  # after\r\n"),
         "line outside the fixed dicts differs"),
        ("text after the dict changed", "unsafe", SELF_TEST_ORIGINAL.replace(b"    }\n    y", b"    }  # end\n    y"),
         SELF_TEST_FIXED.replace(b"    }\n    y", b"    }\n    # end\n    y"),
         "text after the dict on its last line differs"),
        ("a deleted moved entry", "unsafe", SELF_TEST_ORIGINAL,
         SELF_TEST_FIXED.replace(b'                "frames": meta.frames,\n', b""),
         "different entries"),
        ("swapped moved values", "unsafe", SELF_TEST_ORIGINAL,
         SELF_TEST_FIXED.replace(b'"rows": rows,', b'"rows": meta.frames,').replace(b'"frames": meta.frames', b'"frames": rows'),
         "different node: expected `rows`, found `meta.frames`"),
        ("an unsafe fix applied in default mode", "default",
         SELF_TEST_ORIGINAL.replace(b'"content": [{"text": "Done."}],', b'"content": [{"text": "Done."}],\n        **meta,'),
         SELF_TEST_FIXED.replace(b'"frames": meta.frames,\n', b'"frames": meta.frames,\n                **meta,\n'),
         "dict changed, but the reference classes it UNSAFE"),
        ("a safe fix not applied", "default", SELF_TEST_ORIGINAL, SELF_TEST_ORIGINAL,
         "dict left unchanged, but the reference classes it SAFE"),
        ("a swapped augmentation value", "default", SELF_TEST_ORIGINAL,
         SELF_TEST_AUGMENTED.replace(b"rows={rows}, frames={meta.frames}", b"rows={meta.frames}, frames={rows}"),
         "text augmentation"),
        ("an augmentation that is not a suffix", "default", SELF_TEST_ORIGINAL,
         SELF_TEST_AUGMENTED.replace(b'f"Done. (rows', b'f"Done (rows'),
         "text augmentation"),
        ("an augmentation with --augment-text=never", "unsafe", SELF_TEST_ORIGINAL, SELF_TEST_AUGMENTED,
         "different node: expected `'Done.'`"),
        ("a manual dict changed", "unsafe",
         SELF_TEST_ORIGINAL.replace(b'"content": [{"text": "Done."}],', b'"content": "Done.",'),
         SELF_TEST_FIXED.replace(b'"content": [\n            {"text": "Done."},', b'"content": [\n            *"Done.",'),
         "dict changed, but the reference classes it MANUAL"),
        ("a suppressed entry moved", "unsafe", SELF_TEST_ORIGINAL.replace(b"# row count", b"# toolshape: ignore[TS001]"),
         SELF_TEST_FIXED.replace(b"# row count", b"# toolshape: ignore[TS001]"),
         "different entries"),
    ]
    # The collapsed line: `x = 1  # before` joined with the next line cannot
    # stay valid Python with its comment, so join two plain lines instead.
    original = SELF_TEST_ORIGINAL.replace(b"    return out\n", b"    z = 3\n    return out\n")
    fixed = SELF_TEST_FIXED.replace(b"    return out\n", b"    z = 3\n    return out\n")
    controls[6] = ("a collapsed line outside the dicts", "unsafe", original,
                   fixed.replace(b"    z = 3\n    return out\n", b"    z = 3; return out\n"),
                   "line outside the fixed dicts differs")
    controls += name_controls()
    controls += cancelled_controls()
    controls += write_controls()
    controls += pinned_controls()
    results, failed = [], False
    for name, mode, orig, fixed, expect, *pinned in controls:
        report = new_report(mode)
        PINNED.clear()
        PINNED.update(("selftest.py", n) for pinned_lines in pinned for n in pinned_lines)
        check_file("selftest.py", orig, fixed, mode, report)
        PINNED.clear()
        problems = report["mismatches"] + report["new_rule_mismatches"] + report["syntax_errors"]
        if expect is None:
            ok = not problems
        else:
            ok = any(expect in p for p in problems)
        failed |= not ok
        results.append({"control": name, "mode": mode, "caught" if expect else "accepted": ok,
                        "messages": problems[:3]})
    print(json.dumps({"self_test": results, "ok": not failed}, indent=1))
    return 1 if failed else 0


def main(argv):
    warnings.simplefilter("ignore")
    if argv == ["--self-test"]:
        return self_test()
    mode = "unsafe"
    args = []
    it = iter(argv)
    for a in it:
        if a == "--mode":
            mode = next(it, None)
        elif a.startswith("--mode="):
            mode = a.split("=", 1)[1]
        elif a == "--pinned-by-suppression":
            with open(next(it), encoding="utf-8") as fh:
                for line in fh.read().splitlines():
                    path, _, number = line.rpartition(":")
                    if path:
                        PINNED.add((path, int(number)))
        else:
            args.append(a)
    if mode not in ("unsafe", "default") or len(args) != 2:
        sys.stderr.write("usage: fix_semantics.py ORIGINAL_DIR FIXED_DIR [--mode unsafe|default] "
                         "[--pinned-by-suppression FILE] | --self-test\n")
        return 2
    report = check_trees(args[0], args[1], mode)
    print(json.dumps(report, indent=1, ensure_ascii=False))
    return 1 if report["mismatches"] or report["new_rule_mismatches"] or report["syntax_errors"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
