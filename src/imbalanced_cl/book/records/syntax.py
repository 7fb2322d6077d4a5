"""A source's syntax, the same on every Python: what a code version is computed from (record.code_digest)."""
from __future__ import annotations

import ast


def code_syntax(source: str) -> str:
    """A source's syntax tree without comments, docstrings or layout (the text itself if it does not parse): two
    sources that differ only in those compute the same thing, and must not make a recorded unit stale."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return source
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and body
                and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)):
            node.body = body[1:] or [ast.Pass()]
    return syntax_dump(tree)


# Fields that later Pythons added to the syntax tree (3.12: PEP 695's type parameters). Left out while empty, a
# source that uses none of them dumps the same on every Python, so a record made on a cluster's Python 3.12 is not
# stale on a laptop's 3.11 (seen on a lent GPU machine, 2026-11-26: every record read as stale there).
NEWER_FIELDS = ("type_params",)


def syntax_dump(node) -> str:
    """ast.dump(node, annotate_fields=False) as Python 3.11 writes it, on any Python (NEWER_FIELDS left out while
    empty): a code version must not depend on the interpreter that computes it."""
    if isinstance(node, list):
        return "[" + ", ".join(syntax_dump(x) for x in node) + "]"
    if not isinstance(node, ast.AST):
        return repr(node)
    args, keywords = [], False
    for name in node._fields:
        try:
            value = getattr(node, name)
        except AttributeError:
            keywords = True
            continue
        if (value is None and getattr(type(node), name, ...) is None) or (name in NEWER_FIELDS and not value):
            keywords = True
            continue
        args.append(f"{name}={syntax_dump(value)}" if keywords else syntax_dump(value))
    return f"{type(node).__name__}({', '.join(args)})"
