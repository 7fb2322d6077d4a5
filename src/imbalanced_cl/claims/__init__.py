"""One analysis module per claim notebook: measurements and verdict rows for each of the paper's claims."""
from __future__ import annotations

import importlib


def reexport(owner: str, source: str, names: tuple):
    """A module __getattr__ (PEP 562) for `owner`: `names` resolve from the module `source` on first use, so a claim
    module and the verdicts module that imports it can be imported in either order."""
    def __getattr__(name: str):
        if name in names:
            return getattr(importlib.import_module(source), name)
        raise AttributeError(f"module {owner!r} has no attribute {name!r}")
    return __getattr__
