"""The built-in unit kinds. `notebook`: one claim notebook at a profile, executed by the book runner's papermill
code and recorded as its verdict rows plus the notebook's own provenance."""
from __future__ import annotations

import os
from pathlib import Path

from ..book import record as book_record
from ..book.cells import config_class
from ..book.glued import rows_of
from ..book.profiles import params as profile_params
from ..book.runner import check_params, execute, toc_notebooks
from ..validate import ParameterError
from .units import KINDS, Kind, Unit, register


def _seed(nb: Path, params: dict) -> int | None:
    """The base seed a notebook runs under: the profile's, else its config's default (None if it has none)."""
    if "seed" in params:
        return params["seed"]
    cls = config_class(nb)
    f = getattr(cls, "__dataclass_fields__", {}).get("seed") if cls else None
    return f.default if f is not None else None


def plan_notebooks(profile: str, root: Path, only: list[str] | None = None) -> list[Unit]:
    """One unit per claim notebook of the table of contents (those in `only`, if given), parameters checked.

    A notebook named in `only` whose parameters are wrong stops the plan (ParameterError); one not asked for is
    left out of the plan with a warning on stderr, so one broken notebook does not hide the others' coverage.
    """
    import sys

    from ..book.scoreboard import claim_notebooks   # here: the scoreboard module pulls in the plotting stack
    names = set(claim_notebooks(root))
    units = []
    for nb in toc_notebooks(root):
        if nb.stem not in names or (only and nb.stem not in only):
            continue
        params = profile_params(profile, nb.stem)
        try:
            check_params(nb, params, f"profile {profile}")
        except ParameterError as e:
            if only:
                raise
            print(f"warning: {nb.stem} left out of the plan: {str(e).splitlines()[0]}", file=sys.stderr)
            continue
        units.append(Unit("notebook", nb.stem, profile, params, book_record.notebook_code(root, nb),
                          _seed(nb, params)))
    return units


def run_notebook(unit: Unit, root: Path) -> dict:
    """Execute the notebook (book.runner.execute: atomic, partial output removed) and return its verdict rows."""
    import nbformat
    nb = root / "notebooks" / f"{unit.name}.ipynb"
    out = root / "_build" / "campaign" / unit.profile / f"{unit.name}.ipynb"
    os.environ["IMBALANCED_CL_PROFILE"] = unit.profile   # the notebook's provenance table names the profile
    ok, msg = execute(nb, out, unit.params, root, {"profile": unit.profile, "campaign_key": unit.key}, root)
    if not ok:
        raise RuntimeError(f"{unit.name}: {msg}")
    rows = rows_of(out)
    if not rows:
        raise RuntimeError(f"{unit.name}: the executed notebook glued no verdict rows")
    return {"rows": rows, "notebook": book_record._provenance(nbformat.read(out, as_version=4))}


NOTEBOOK = register(Kind("notebook", plan_notebooks, run_notebook))


def get(name: str) -> Kind:
    """The registered kind `name` (built-in or registered by a test); an unknown name is a ParameterError."""
    if name not in KINDS:
        raise ParameterError(f"parameter kind={name!r} is invalid: allowed one of {tuple(sorted(KINDS))}")
    return KINDS[name]
