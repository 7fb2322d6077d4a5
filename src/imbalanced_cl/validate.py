"""Parameter validation shared by every layer: ParameterError names the parameter, its value and the allowed range."""
from __future__ import annotations

import math
from typing import Any


class ParameterError(ValueError):
    """A notebook parameter is outside its allowed range; the message names both."""


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
