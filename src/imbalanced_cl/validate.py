"""Parameter validation shared by every layer: ParameterError names the parameter, its value and the allowed range."""
from __future__ import annotations

import difflib
import math
from typing import Any, Iterable, Mapping

# The run options: settings that decide how or where a run goes, never what it measures (a campaign record made under
# other values still answers for today's; a parameters cell lists them under "# run"). The device, the data device,
# the chunk and tf32 can move the last digits: a record shows them as its provenance.
RUN_OPTIONS = ("device", "data_device", "tf32", "chunk", "threads", "workers", "progress")


class ParameterError(ValueError):
    """A notebook parameter is outside its allowed range; the message names both."""

    def _render_traceback_(self) -> list[str]:
        # IPython (and so papermill) shows this instead of a full traceback: the message is all a reader needs.
        return [f"ParameterError: {self}"]


def check(name: str, value: Any, ok: bool, allowed: str, given: str = "") -> None:
    """Raise ParameterError naming `name`, its value and the allowed range unless `ok`.

    `given` names the other parameters a cross-parameter bound depends on ("steps=60"), so a reader who set only
    `steps` sees why `fit_start` is now out of range.
    """
    if not ok:
        extra = f" (given {given})" if given else ""
        raise ParameterError(f"parameter {name}={value!r} is invalid{extra}: allowed {allowed}")


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def check_int(name: str, v: Any, lo: int, hi: int | None = None, given: str = "") -> None:
    """Integer in [lo, hi]; `given` names the parameters a bound comes from."""
    rng = f"an integer in [{lo}, {hi if hi is not None else 'inf'}]"
    check(name, v, _is_int(v) and v >= lo and (hi is None or v <= hi), rng, given)


def check_float(name: str, v: Any, lo: float, hi: float | None = None,
                lo_open: bool = False, hi_open: bool = False, given: str = "") -> None:
    """Finite number in the interval [lo, hi] (ends open when asked); `given` names the parameters a bound comes
    from."""
    left, right = "(" if lo_open else "[", ")" if hi_open else "]"
    rng = f"a number in {left}{lo}, {hi if hi is not None else 'inf'}{right}"
    ok = _is_num(v) and (v > lo if lo_open else v >= lo)
    if ok and hi is not None:
        ok = v < hi if hi_open else v <= hi
    check(name, v, ok, rng, given)


def check_choice(name: str, v: Any, choices: tuple) -> None:
    """One of a fixed set of values."""
    check(name, v, v in choices, f"one of {choices}")


def check_grid(name: str, v: Any, item_check) -> None:
    """A non-empty list whose items each pass `item_check(name_of_item, item)`."""
    check(name, v, isinstance(v, (list, tuple)) and len(v) > 0, "a non-empty list")
    for k, item in enumerate(v):
        item_check(f"{name}[{k}]", item)


# ----------------------------------------------------------------------------------------------------
# notebook namespaces: building a config from a notebook's globals(), refusing names it does not know
# ----------------------------------------------------------------------------------------------------
# Names IPython itself puts in a kernel's globals (never parameters).
_KERNEL_NAMES = frozenset({"In", "Out", "exit", "quit", "get_ipython", "open"})
_DATA = (bool, int, float, str, list, tuple, dict, type(None))


def parameter_like(ns: Mapping[str, Any]) -> dict:
    """The plain-data names of a namespace (what papermill can inject): no _private names, modules or functions."""
    return {k: v for k, v in ns.items()
            if not k.startswith("_") and k not in _KERNEL_NAMES and isinstance(v, _DATA)}


def check_known(names, allowed, where: str = "this notebook") -> None:
    """Raise ParameterError for the first name not in `allowed`, suggesting the nearest valid one.

    papermill only warns about a parameter the notebook does not declare and then runs with the default:
    a misspelt `-p eps_minn 0.05` would silently run at the default eps_min. This makes it an error.
    """
    allowed = list(allowed)
    for name in sorted(set(names) - set(allowed)):
        near = difflib.get_close_matches(name, allowed, n=1)
        hint = f"did you mean {near[0]}? " if near else ""
        raise ParameterError(f"unknown parameter {name!r} for {where}: {hint}"
                             f"the parameters are listed in the notebook's parameters cell "
                             f"(papermill --help-notebook NOTEBOOK)")


def nearest(name: str, allowed: Iterable[str]) -> str | None:
    """The allowed name closest to `name` (difflib), or None when nothing is close."""
    close = difflib.get_close_matches(name, sorted(allowed), n=1, cutoff=0.6)
    return close[0] if close else None


def unknown_message(unknown: Mapping[str, Any], allowed: Iterable[str]) -> str:
    """One line naming each unknown parameter, its value and the nearest allowed name (for the book runner)."""
    allowed = list(allowed)
    parts = []
    for name, value in unknown.items():
        near = nearest(name, allowed)
        parts.append(f"{name}={value!r} (did you mean {near}?)" if near else f"{name}={value!r}")
    noun = "parameter" if len(parts) == 1 else "parameters"
    return (f"unknown {noun} {', '.join(parts)}: not a parameter of this notebook "
            "(`papermill --help-notebook NOTEBOOK` lists them)")


def namespace_kwargs(fields: list[str], ns: Mapping[str, Any], overrides: Mapping[str, Any],
                     where: str, strict: bool = True) -> dict:
    """Keyword arguments for a config from a namespace: its fields only, lists as tuples; strict refuses extras."""
    if strict:
        check_known(parameter_like(ns), fields, where)
    kw = {k: ns[k] for k in fields if k in ns}
    kw.update(overrides)
    return {k: (tuple(v) if isinstance(v, list) else v) for k, v in kw.items()}
