#!/usr/bin/env python3
"""Checks text augmentations produced by `toolshape fix`.

Usage: python3 check_augment.py CASES.json

CASES.json is a list of {"name", "original_source", "fixed_source",
"before", "after"}: the file before and after the fix, and one text
expression before and after augmentation. For
each case:
  * the fixed source compiles with this interpreter (on Python < 3.12 this
    is the 3.8-3.11 f-string grammar: no reused quote, no backslash in a
    replacement field);
  * on Python >= 3.12, where the grammar no longer says so, an AST check
    that no replacement field of `after` contains the literal's own quote
    or a backslash;
  * evaluating `before` and `after` with sample bindings (every free name is
    a permissive sample object) shows that `before`'s value is a proper
    prefix of `after`'s.
Prints a JSON report and exits 1 on any failure.
"""

import ast
import builtins
import json
import sys


class Sample:
    """Stands for any value: attributes, items and calls give samples."""

    def __getattr__(self, name):
        return Sample()

    def __getitem__(self, key):
        return Sample()

    def __call__(self, *args, **kwargs):
        return Sample()

    def __len__(self):
        return 3

    def __iter__(self):
        return iter(())

    def __str__(self):
        return "<v>"

    __repr__ = __str__

    def __format__(self, spec):
        return "<v>"


class Bindings(dict):
    def __missing__(self, name):
        if hasattr(builtins, name):
            raise KeyError(name)
        return Sample()


def quote_of(literal_source):
    """The quote character of the last string token of a literal."""
    stripped = literal_source.rstrip()
    return stripped[-1]


def fields_reuse_quote(after):
    quote = quote_of(after)
    after = f"({after})"
    tree = ast.parse(after, mode="eval")
    bad = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FormattedValue):
            segment = ast.get_source_segment(after, node.value) or ""
            if quote in segment or "\\" in segment:
                bad.append(segment)
    return bad


def main():
    cases = json.load(open(sys.argv[1]))
    failures = []
    for case in cases:
        name = case["name"]
        try:
            compile(case["fixed_source"], name, "exec", dont_inherit=True)
        except SyntaxError as e:
            try:
                compile(case["original_source"], name, "exec", dont_inherit=True)
            except SyntaxError:
                pass  # broken on purpose before the fix; toolshape guards that it adds no error
            else:
                failures.append(f"{name}: the fixed source does not compile: {e}")
                continue
        if sys.version_info >= (3, 12):
            bad = fields_reuse_quote(case["after"])
            if bad:
                failures.append(f"{name}: fields reuse the enclosing quote or a backslash: {bad}")
        env = Bindings()
        try:
            # Parenthesized: an implicit concatenation may span lines.
            before = eval(f"({case['before']})", {"__builtins__": builtins}, env)
            after = eval(f"({case['after']})", {"__builtins__": builtins}, env)
        except Exception as e:  # noqa: BLE001 - report any evaluation failure
            failures.append(f"{name}: evaluating failed: {e!r}")
            continue
        if not (isinstance(after, str) and after.startswith(before) and len(after) > len(before)):
            failures.append(f"{name}: {after!r} does not extend {before!r}")
    print(json.dumps({"cases": len(cases), "python": sys.version.split()[0], "failures": failures}, indent=1))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
