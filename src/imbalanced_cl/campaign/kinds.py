"""The built-in unit kinds. `notebook`: one claim notebook at a profile, executed by the book runner's papermill
code and recorded as its verdict rows plus the notebook's own provenance."""
from __future__ import annotations

from pathlib import Path

from .. import verdict as V
from ..book.records import record as book_record
from ..book.build.cells import config_class
from ..book.records.glued import rows_of
from ..book.build.profiles import params as profile_params
from ..book.build.execution import check_params, execute
from ..book.build.runner import toc_notebooks
from ..validate import ParameterError
from . import checkpoint
from .units import KINDS, Kind, Unit, child_env_now, plain, register


def _seed(nb: Path, params: dict) -> int | None:
    """The base seed a notebook runs under: the profile's, else its config's default (None if it has none)."""
    if "seed" in params:
        return params["seed"]
    cls = config_class(nb)
    return cls.defaults().get("seed") if cls else None    # off the class: building a config would validate it all


def notebook_file(root: Path, name: str) -> Path:
    """The notebook a notebook unit runs: the table of contents' notebook of that name (a claim notebook under
    notebooks/, or a page under book/ that keeps measurement stages), else notebooks/<name>.ipynb."""
    found = [nb for nb in toc_notebooks(Path(root)) if nb.stem == name]
    return found[0] if found else Path(root) / "notebooks" / f"{name}.ipynb"


def pages(root: Path) -> set[str]:
    """The toc's notebooks other than the claim notebooks that keep measurement stages (book/records/record.py
    MEASURES): the regime page. Each is a notebook unit whose record keeps its stages and no verdict rows."""
    from ..book.pages.scoreboard import claim_notebooks   # here: the scoreboard module pulls in the plotting stack
    claims = set(claim_notebooks(root))
    return {nb.stem for nb in toc_notebooks(Path(root)) if nb.stem in book_record.MEASURES and nb.stem not in claims}


def plan_notebooks(profile: str, root: Path, only: list[str] | None = None) -> list[Unit]:
    """One unit per claim notebook of the table of contents, and per page that keeps measurement stages (pages:
    the regime page), those in `only` if given, parameters checked.

    A notebook named in `only` whose parameters are wrong stops the plan (ParameterError); one not asked for is
    left out of the plan with a warning on stderr, so one broken notebook does not hide the others' coverage.
    """
    import sys

    from ..book.pages.scoreboard import claim_notebooks   # here: the scoreboard module pulls in the plotting stack
    names = set(claim_notebooks(root)) | pages(root)
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
        units.append(Unit("notebook", nb.stem, profile, params, book_record.unit_code(root, nb),
                          _seed(nb, params)))
    return units


def run_notebook(unit: Unit, root: Path) -> dict:
    """Execute the notebook (book.build.execution.execute: atomic, partial output removed) and return its verdict rows
    and the names of its measurement stages, whose files it moves beside the record (stages_of: what a later build
    judges again with today's verdict code, campaign/stages.py).

    The kernel gets the unit's checkpoint folder (checkpoint.ENV, named by the engine) and thread count in its
    environment: a notebook that computes its grid through checkpoint.grid resumes, after an interrupted run of the
    same unit, from the points already there. The payload says how many points were read back, and their time. The
    partial notebook papermill writes as it goes lives in that folder (the unit's own, under its results folder),
    never in a place that every campaign of the clone shares.
    """
    import os
    import shutil

    import nbformat

    from . import stages
    nb = notebook_file(root, unit.name)
    where = checkpoint.folder()
    # the executed copy lives under the campaign's own results folder, named by the unit's key: two campaigns on one
    # clone (two seeds, two --results folders) never read each other's rows, and a scratch folder writes nothing
    # into the repository (results/campaign/*/executed/ is ignored by git)
    out = (where.parent.parent if where is not None else root / "_build" / "campaign" / unit.profile) \
        / "executed" / f"{unit.name}-{unit.key}.ipynb"
    resumed = checkpoint.summary(where)
    partial = None
    if where is not None:
        where.mkdir(parents=True, exist_ok=True)
        partial = where / checkpoint.partial_name(unit.name)
    env = {**child_env_now(), "IMBALANCED_CL_PROFILE": unit.profile}   # the provenance table names the profile
    made = where / "stages" if where is not None else None    # what the notebook measures (stages.measured)
    resumed_stages = []
    if made is not None:      # the stages an interrupted run finished are read back, not measured again
        resumed_stages = stages.clean(made)
        env.update({stages.STAGES_ENV: str(made), stages.STAGES_MODE_ENV: "record"})
    ok, msg = execute(nb, out, unit.params, root, {"profile": unit.profile, "campaign_key": unit.key}, root, env=env,
                      partial=partial)
    if not ok:
        raise RuntimeError(f"{unit.name}: {msg}")
    rows = rows_of(out)
    if not rows and nb.parent.name == "notebooks":     # a page (the regime page) keeps its stages, and no rows
        raise RuntimeError(f"{unit.name}: the executed notebook glued no verdict rows")
    kept = stages.names(made) if made is not None else []
    if kept:    # beside the record: <results>/notebook/<name>-<key>.stages/, replaced whole
        home = stages_of(where.parent.parent, unit)
        shutil.rmtree(home, ignore_errors=True)
        home.parent.mkdir(parents=True, exist_ok=True)
        os.replace(made, home)
    return {"rows": [V.to_json(r) for r in rows], "stages": kept,
            "notebook": book_record.recorded_provenance(nbformat.read(out, as_version=4)),
            "checkpoints": {"resumed_points": resumed["points"], "resumed_s": round(resumed["seconds"], 2),
                            "resumed_stages": resumed_stages}}


def stages_of(results: Path, unit: Unit) -> Path:
    """Where a notebook unit's measurement stages live: beside its record, <results>/notebook/<name>-<key>.stages/."""
    return Path(results) / unit.kind / f"{unit.name}-{unit.key}.stages"


NOTEBOOK = register(Kind("notebook", plan_notebooks, run_notebook))


def get(name: str) -> Kind:
    """The registered kind `name` (built-in or registered by a test); an unknown name is a ParameterError."""
    if name not in KINDS:
        raise ParameterError(f"parameter kind={name!r} is invalid: allowed one of {tuple(sorted(KINDS))}")
    return KINDS[name]


# ---------------------------------------------------------------------------------------------------------------
# scale_point: one value of d of notebook 08 (every ratio group, the config's R replicates), beyond the d's that the
# profile's notebook computes itself; notebook 08 adds the recorded points to its figures and trends.
# ---------------------------------------------------------------------------------------------------------------
EXTRA_DS = (160, 320)      # the d's a campaign adds to notebook 08's grid (issue 29: d = 160, then 320)
SCALE_ENTRY = "from imbalanced_cl.claims.scale import ScaleConfig, measure_point"   # what a scale_point runs


def _jsonable(x):
    """Numpy arrays and scalars as JSON ({"__array__": list, "dtype": ...} for arrays), recursively."""
    import numpy as np
    if isinstance(x, dict):
        return {k: _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, np.ndarray):
        return {"__array__": x.tolist(), "dtype": str(x.dtype)}
    if isinstance(x, np.generic):
        return x.item()
    return x


def _numpy(x):
    """The inverse of _jsonable."""
    import numpy as np
    if isinstance(x, dict):
        if "__array__" in x:
            return np.asarray(x["__array__"], dtype=x["dtype"])
        return {k: _numpy(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_numpy(v) for v in x]
    return x


def scale_params(cfg, d: int) -> dict:
    """A scale_point's parameters: notebook 08's whole config (its grid included) and the recorded d."""
    return plain({**cfg.to_dict(), "d_point": d})


def plan_scale(profile: str, root: Path, only: list[str] | None = None) -> list[Unit]:
    """One unit per d of EXTRA_DS that the profile's notebook 08 does not compute itself, named d<d>."""
    from ..book.records.record import source_code
    from ..claims.scale import ScaleConfig
    cfg = ScaleConfig(**profile_params(profile, "08_scale"))
    code = source_code(root, SCALE_ENTRY)
    return [Unit("scale_point", f"d{d}", profile, scale_params(cfg, d), code, cfg.seed)
            for d in EXTRA_DS if d not in cfg.ds and (not only or f"d{d}" in only)]


def run_scale_point(unit: Unit, root: Path) -> dict:
    """Train and measure notebook 08 at one d (claims.scale.measure_point): the per-replicate measurements."""
    from ..claims.scale import ScaleConfig, measure_point
    params = dict(unit.params)
    d = params.pop("d_point")
    cfg = ScaleConfig(**{k: tuple(v) if isinstance(v, list) else v for k, v in params.items()})
    return {"point": _jsonable(measure_point(cfg, d))}


SCALE_POINT = register(Kind("scale_point", plan_scale, run_scale_point))


def recorded_points(cfg, root: Path | None = None) -> tuple[list[dict], list[str]]:
    """Notebook 08's recorded points for this config, beyond its own grid: (points sorted by d, notes).

    Every d recorded beyond the grid is looked at (EXTRA_DS are those a campaign plans; a record of another d, made
    with --set or by an older plan, counts too). A record counts when it answers for the unit this config plans at
    its d (validity.find: the same parameters, run-only settings such as threads aside, and today's code or other
    code that computes the same numbers). Every other record of such a d is named in the notes with why it is not
    used. Records of any profile folder count (the parameters say what was run).
    """
    from ..book.records.record import source_code
    from ..paths import repo_root
    from .validity import first_valid, fresh, note
    root = Path(root or repo_root())
    if fresh():
        return [], ["a fresh build (--fresh): recorded points not read"]
    code = source_code(root, SCALE_ENTRY)
    points = []
    ds, notes = recorded_ds(root)
    for d in sorted(ds - set(cfg.ds)):
        j, stale = first_valid(Unit("scale_point", f"d{d}", "", scale_params(cfg, d), code, cfg.seed), root)
        notes += [f"{k.path.name}: d = {d} {note(k)}" for k in stale]
        if j is None:
            continue
        try:
            point = _numpy(j.rec["payload"]["point"])
        except (KeyError, TypeError):
            notes.append(f"{j.path.name}: d = {d} needs re-measuring (field point)")
            continue
        points.append({**point, "recorded": j.rec["provenance"]})
    return sorted(points, key=lambda q: q["d"]), notes


def recorded_ds(root: Path) -> tuple[set, list[str]]:
    """The d's of every scale_point record under results/campaign (any profile folder), and a note per file that
    cannot be read."""
    import json
    ds, notes = set(), []
    for p in sorted((Path(root) / "results" / "campaign").glob("*/scale_point/*.json")):
        try:
            ds.add(int(json.loads(p.read_text())["params"]["d_point"]))
        except (ValueError, KeyError, OSError, TypeError):
            notes.append(f"{p.name}: unreadable, skipped")
    return ds, notes


def recorded_note(ds: list) -> str:
    """What notebook 08's verdicts took from the campaign, for its verdict table and the scoreboard ("" if nothing)."""
    if not ds:
        return ""
    many = len(ds) > 1
    return (f"the recorded point{'s' if many else ''} d = {', '.join(map(str, ds))} "
            f"({len(ds)} campaign unit{'s' if many else ''}, one per d)")


def with_recorded(res, root: Path | None = None):
    """Notebook 08's result with the recorded points beyond its grid added (its config's ds extended to match):
    (result, the recorded d's, one line that says what was added and what was stale)."""
    from ..claims.scale import ScaleResult
    points, notes = recorded_points(res.cfg, root)
    if not points:
        why = "; ".join(notes) if notes else "none for these parameters"
        return res, [], f"recorded points beyond d = {max(res.cfg.ds)}: {why}"
    allp = sorted(res.points + points, key=lambda q: q["d"])
    cfg = res.cfg.replace(ds=tuple(q["d"] for q in allp))
    out = ScaleResult(cfg, allp, res.seconds)
    ds = [q["d"] for q in points]
    from .validity import made_by
    line = (f"added the recorded point(s) d = {', '.join(map(str, ds))} (campaign units: "
            f"{'; '.join(made_by(q['recorded']) for q in points)})")
    return out, ds, line + ("; " + "; ".join(notes) if notes else "")


from . import premise_cells  # noqa: F401  (registers notebook 10's premise_cell and target_cell kinds)
from . import pruning_sweeps  # noqa: F401  (registers notebook 04's pruning_sweep kind)
