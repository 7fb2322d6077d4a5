"""Parameter validation shared by every layer: ParameterError names the parameter, its value and the allowed range."""
from __future__ import annotations

import ast
import difflib
import math
from typing import Any, Iterable, Mapping


class ParameterError(ValueError):
    """A notebook parameter is outside its allowed range; the message names both."""

    def _render_traceback_(self) -> list[str]:
        # IPython (and so papermill) shows this instead of a full traceback: the message is all a reader needs.
        return [f"ParameterError: {self}"]


def check(name: str, value: Any, ok: bool, allowed: str) -> None:
    """Raise ParameterError naming `name`, its value and the allowed range unless `ok`."""
    if not ok:
        raise ParameterError(f"parameter {name}={value!r} is invalid: allowed {allowed}")


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def check_int(name: str, v: Any, lo: int, hi: int | None = None) -> None:
    """Integer in [lo, hi]."""
    rng = f"an integer in [{lo}, {hi if hi is not None else 'inf'}]"
    check(name, v, _is_int(v) and v >= lo and (hi is None or v <= hi), rng)


def check_float(name: str, v: Any, lo: float, hi: float | None = None,
                lo_open: bool = False, hi_open: bool = False) -> None:
    """Finite number in the interval [lo, hi] (ends open when asked)."""
    left, right = "(" if lo_open else "[", ")" if hi_open else "]"
    rng = f"a number in {left}{lo}, {hi if hi is not None else 'inf'}{right}"
    ok = _is_num(v) and (v > lo if lo_open else v >= lo)
    if ok and hi is not None:
        ok = v < hi if hi_open else v <= hi
    check(name, v, ok, rng)


def check_choice(name: str, v: Any, choices: tuple) -> None:
    """One of a fixed set of values."""
    check(name, v, v in choices, f"one of {choices}")


def check_grid(name: str, v: Any, item_check) -> None:
    """A non-empty list whose items each pass `item_check(name_of_item, item)`."""
    check(name, v, isinstance(v, (list, tuple)) and len(v) > 0, "a non-empty list")
    for k, item in enumerate(v):
        item_check(f"{name}[{k}]", item)


# --- unknown parameter names (a typo in `papermill -p NAME` or in a parameters cell) ---

# Names IPython puts in every notebook namespace; never parameters.
_IPYTHON_NAMES = frozenset({"In", "Out", "get_ipython", "exit", "quit", "open"})


def nearest(name: str, allowed: Iterable[str]) -> str | None:
    """The allowed name closest to `name` (difflib), or None when nothing is close."""
    close = difflib.get_close_matches(name, sorted(allowed), n=1, cutoff=0.6)
    return close[0] if close else None


def unknown_message(unknown: Mapping[str, Any], allowed: Iterable[str]) -> str:
    """One line naming each unknown parameter, its value and the nearest allowed name."""
    allowed = list(allowed)
    parts = []
    for name, value in unknown.items():
        near = nearest(name, allowed)
        parts.append(f"{name}={value!r} (did you mean {near}?)" if near else f"{name}={value!r}")
    noun = "parameter" if len(parts) == 1 else "parameters"
    return (f"unknown {noun} {', '.join(parts)}: not a parameter of this notebook "
            "(`papermill --help-notebook NOTEBOOK` lists them)")


def _is_literal(node: ast.AST) -> bool:
    try:
        ast.literal_eval(node)
        return True
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        # papermill writes a non-finite float as float('nan') / float('inf')
        return (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "float"
                and len(node.args) == 1 and isinstance(node.args[0], ast.Constant) and not node.keywords)


def literal_assignments(source: str) -> list[str]:
    """Names a cell binds when it is a parameters cell: every statement binds one name to a literal.

    Both a notebook's `parameters` cell and the cell papermill injects after it have this form; a cell
    with anything else in it (an import, a call, a loop) is not one, and gives [].
    """
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    names = []
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            target, value = stmt.targets[0].id, stmt.value
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
            target, value = stmt.target.id, stmt.value
        else:
            return []
        if not _is_literal(value):
            return []
        names.append(target)
    return names


def set_parameters(ns: Mapping[str, Any]) -> list[str]:
    """Names the executed parameters cells of a notebook namespace set, in order (none outside IPython).

    IPython keeps every executed cell's source in `In`; the parameters cells are those made only of
    literal assignments. Later cells (helpers, results, a re-run out of order) are never counted.
    """
    history = ns.get("In")
    if not isinstance(history, list):
        return []
    seen: dict[str, None] = {}
    for source in history:
        if isinstance(source, str):
            for name in literal_assignments(source):
                seen.setdefault(name)
    return [n for n in seen if n in ns and not n.startswith("_") and n not in _IPYTHON_NAMES]


def check_namespace(ns: Mapping[str, Any], allowed: Iterable[str]) -> None:
    """Stop a notebook whose parameters cells set a name it does not accept (ParameterError, with a suggestion).

    Call it right after the parameters cell with globals(): `papermill -p eps_minn 0.05` then fails with
    "unknown parameter eps_minn=0.05 (did you mean eps_min?)" instead of silently running at the default.
    A plain dict (no IPython history) is not checked: its caller chose its keys.
    """
    allowed = set(allowed)
    unknown = {n: ns[n] for n in set_parameters(ns) if n not in allowed}
    if unknown:
        raise ParameterError(unknown_message(unknown, allowed))
