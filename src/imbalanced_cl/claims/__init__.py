"""One sub-package per claim notebook, each with the same inner shape; census/ is the part several of them share.

    stage1 (01)  lucky (02)  scaling (03)  pruning (04)  appendix (05)  explorer (07)  scale (08)  decoupling (09)
    regime_compare (the regime page)   census (Def. B.1, shared by 02, 03, 04 and 08)

Inside a claim package, in import order (each module imports only those above it; a slot with nothing in it is
absent): config (the config dataclass and its constants) -> metrics (measurements, no training) -> protocol (what
is trained, in which order, and the summaries) -> verdicts (verdict_rows). The package's __init__ re-exports every
public name, so `from imbalanced_cl.claims import pruning as pa; pa.amplitudes(...)` reads as before.

The flat modules of the first layout (pruning_metrics, scale_config, census_exact, ...) moved into these packages in
issue 26; importing one by its old name raises an ImportError that names its new place.
"""
from __future__ import annotations

import sys
from importlib.abc import MetaPathFinder

# old module (imbalanced_cl.claims.<old>) -> its new place under imbalanced_cl.claims
MOVED = {
    "appendix_metrics": "appendix.metrics", "appendix_verdicts": "appendix.verdicts",
    "census_exact": "census.exact", "census_grid": "census.grid",
    "decoupling_metrics": "decoupling.metrics", "decoupling_verdicts": "decoupling.verdicts",
    "pruning_control": "pruning.control", "pruning_metrics": "pruning.metrics",
    "scale_config": "scale.config", "scale_point": "scale.protocol", "scale_trends": "scale.verdicts",
}


def moved_error(old: str) -> ImportError:
    """The error for a module of the flat layout: where it went, and that its package re-exports its names."""
    new = MOVED[old]
    return ImportError(f"{__name__}.{old} moved to {__name__}.{new} (issue 26: one folder per claim); import "
                       f"{__name__}.{new}, or the same names from {__name__}.{new.split('.')[0]}",
                       name=f"{__name__}.{old}")


class MovedFinder(MetaPathFinder):
    """Answers `import imbalanced_cl.claims.<old>` with moved_error instead of a bare 'No module named ...'."""

    def find_spec(self, fullname, path=None, target=None):
        """Raise moved_error for a moved module; None (not mine) for anything else."""
        parent, _, old = fullname.rpartition(".")
        if parent == __name__ and old in MOVED:
            raise moved_error(old)
        return None


def __getattr__(name: str):
    """`from imbalanced_cl.claims import <old>` reaches here first: the same error."""
    if name in MOVED:
        raise moved_error(name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


if not any(type(f).__name__ == "MovedFinder" for f in sys.meta_path):
    sys.meta_path.append(MovedFinder())
