"""A notebook's parameters checked before it runs: names against its `parameters` cell, values by its config class.

The runner calls `check_notebook` for every selected notebook before executing any, so that one bad entry in
profiles.yaml stops the run at once with one line per error (nothing is executed, nothing is replaced).
A notebook names the config class that validates its parameters in its metadata:

    "metadata": {"imbalanced_cl": {"config": "imbalanced_cl.claims.stage1:Stage1Config"}}

The class is built from the notebook's defaults overridden by the profile's values, exactly as the notebook
itself builds it (`Config.from_namespace(globals())`), so the runner and the notebook agree on what is valid.
"""
from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from typing import Any

from ...validate import ParameterError, unknown_message

_NAMED = re.compile(r"parameter (\w+)")


def declared(nb: Path) -> dict[str, dict]:
    """The parameters cell as papermill reads it: {name: {"default": source text, "help": comment, ...}}."""
    import papermill as pm
    return pm.inspect_notebook(str(nb))


def defaults(decl: dict[str, dict]) -> dict[str, Any]:
    """The parameters cell's values (those written as Python literals; the others are left to the config)."""
    out = {}
    for name, info in decl.items():
        try:
            out[name] = ast.literal_eval(str(info.get("default")))
        except (ValueError, SyntaxError):
            pass
    return out


def config_class(nb: Path):
    """The config class named in the notebook's metadata (cells.config_class), as a ParameterError if it is broken."""
    from .cells import config_class as named
    try:
        return named(nb)
    except (ImportError, AttributeError) as e:
        ref = json.loads(Path(nb).read_text()).get("metadata", {}).get("imbalanced_cl", {}).get("config")
        raise ParameterError(f"{Path(nb).stem}: its metadata names the config class {ref!r}, which cannot be "
                             f"imported ({type(e).__name__}: {e})") from None


def build(cls, values: dict):
    """Construct the config from plain values (lists become tuples, as in from_namespace)."""
    if hasattr(cls, "from_namespace"):
        from ...sim.config import ModelConfig
        if issubclass(cls, ModelConfig):      # the runner checks sizes itself, before any kernel starts (--force)
            return cls.from_namespace(dict(values), check_size=False)
        return cls.from_namespace(dict(values))
    return cls(**{k: tuple(v) if isinstance(v, list) else v for k, v in values.items()})


def _named(err: ParameterError) -> str | None:
    m = _NAMED.search(str(err))
    return m.group(1) if m else None


def _error(cls, values: dict) -> ParameterError | None:
    try:
        build(cls, values)
    except ParameterError as e:
        return e
    return None


def _cause(cls, values: dict, dflt: dict, given: dict, bad: str | None) -> str | None:
    """Which given parameter makes `bad` (left at its default) invalid: resetting it clears the error on `bad`."""
    for name in given:
        if name == bad:
            continue
        trial = dict(values)
        if name in dflt:
            trial[name] = dflt[name]
        else:
            trial.pop(name, None)
        err = _error(cls, trial)
        if err is None or _named(err) != bad:
            return name
    return None


def check_values(cls, dflt: dict, given: dict) -> list[str]:
    """Every error the config class finds in the defaults overridden by `given`, one message each.

    A config stops at its first bad field, so after each error the offending value (or, for an error
    between two parameters, the one that was given) goes back to its default and the class is built again.
    """
    values = {**dflt, **given}
    out = []
    for _ in range(len(given) + 1):
        err = _error(cls, values)
        if err is None:
            break
        bad = _named(err)
        if bad in given:
            out.append(str(err))
            reset = bad
        else:
            reset = _cause(cls, values, dflt, given, bad)
            if reset is None:
                out.append(f"{err} (the notebook's own defaults are invalid)")
                break
            named = f"{reset}=" in str(err)  # check(..., given=...) already names the other parameter
            out.append(str(err) if named else f"{err}; {bad} is at its default and {reset}={given[reset]!r} "
                                              f"moves its range: change {reset} or set {bad} too")
        if reset in dflt:
            values[reset] = dflt[reset]
        else:
            values.pop(reset, None)
        if reset not in given:
            break
        given = {k: v for k, v in given.items() if k != reset}
    return out


def check_notebook(nb: Path, given: dict, where: str = "") -> list[str]:
    """One line per problem with the parameters `given` to notebook `nb`: unknown names first, then values."""
    nb = Path(nb)
    decl = declared(nb)
    prefix = f"{nb.stem}{f' ({where})' if where else ''}: "
    lines = []
    unknown = {k: v for k, v in given.items() if k not in decl}
    for name, value in unknown.items():
        lines.append(prefix + unknown_message({name: value}, decl))
    cls = config_class(nb)
    if cls is not None:
        known = {k: v for k, v in given.items() if k in decl}
        lines += [prefix + msg for msg in check_values(cls, defaults(decl), known)]
    return lines
