"""The premise_cell kind: one cell of notebook 10's premise map too costly for the notebook's own build (the plane at
cfg.record_ds, the star cells of cfg.record_star), computed ahead by the campaign and read back by the notebook,
marked "recorded".

A record is used only when its map parameters are the notebook's and its code is today's. Others are not read
silently: a record of the same cell under other code, or under parameters that differ, is named in the notes with
its commit and the parameters that differ.
"""
from __future__ import annotations

from pathlib import Path

from ..book.build.profiles import params as profile_params
from .units import Kind, Unit, plain, register

ENTRY = "from imbalanced_cl.claims.premise_map import PremiseMapConfig, run_cell"   # what a premise_cell runs
KIND = "premise_cell"


def cell_name(cell) -> str:
    """A unit name for a cell: d<d>_<lambda>_r<ratio> on the plane, with _<keyword><value> for a star cell."""
    base = f"d{cell.d}_{cell.lam_name}_r{cell.ratio:g}"
    if not cell.star:
        return base
    kw, v = cell.star
    return f"{base}_{kw}{v:g}" if isinstance(v, (int, float)) else f"{base}_{kw}_{v}"


def cell_params(cfg, cell) -> dict:
    """A premise_cell's parameters: the map's whole config and the cell's place (on the plane, or its star variation
    as [keyword, value])."""
    where = {"d": cell.d, "lam_name": cell.lam_name, "ratio": cell.ratio}
    if cell.star:
        where.update(axis=cell.axis, star=list(cell.star))
    return plain({**cfg.to_dict(), "cell": where})


def cell_of(cfg, where: dict):
    """The Cell a unit's parameters name (a plane cell, or a star cell with its variation)."""
    star = {where["star"][0]: where["star"][1]} if where.get("star") else {}
    return cfg.cell(where.get("axis", "plane"), where["d"], where["lam_name"], where["ratio"], **star)


def _config(params: dict):
    """The PremiseMapConfig of a unit's parameters (lists back to tuples)."""
    from ..claims.premise_map import PremiseMapConfig
    return PremiseMapConfig(**{k: tuple(v) if isinstance(v, list) else v for k, v in params.items() if k != "cell"})


def plan(profile: str, root: Path, only: list[str] | None = None) -> list[Unit]:
    """One unit per cell the profile's map computes ahead: the plane at the d's of record_ds (every lambda and
    ratio) and the star cells of the axes in record_star."""
    from ..book.records.record import source_code
    from ..claims.premise_map import PremiseMapConfig
    cfg = PremiseMapConfig(**profile_params(profile, "10_premise_map"))
    code = source_code(root, ENTRY)
    return [Unit(KIND, cell_name(c), profile, cell_params(cfg, c), code, cfg.seed) for c in cfg.record_cells()
            if not only or cell_name(c) in only]


def run(unit: Unit, root: Path) -> dict:
    """Train and measure one cell (claims.premise_map.run_cell): its premises, gain and wall time."""
    from ..claims.premise_map import run_cell
    cfg = _config(unit.params)
    res = run_cell(cell_of(cfg, unit.params["cell"]))
    def prem(ps):
        return {k: {"text": p.text, "value": p.value, "threshold": p.threshold, "holds": p.holds,
                    "required": p.required} for k, p in ps.items()}
    arms = {n: {"size": a.size.tolist(), "T": a.T if a.T != float("inf") else "inf", "premises": prem(a.premises),
                "gain": a.gain.tolist(), "loss": a.loss, "pos_prob": a.pos_prob} for n, a in res.arms.items()}
    return {"premises": prem(res.premises), "gain": res.gain.tolist(), "seconds": res.seconds, "arms": arms,
            "extra": res.extra}


PREMISE_CELL = register(Kind(KIND, plan, run))


def workload(params: dict) -> list:
    """(config, steps) of one cell's trainings at their caps, as PremiseMapConfig.workload counts every cell: the
    vanilla run to vanilla_max and six branches of prune_max (an upper bound: run_cell stops earlier)."""
    cfg = _config(params)
    cell = cell_of(cfg, params["cell"])
    return [(cell.cfg.vanilla(), cfg.vanilla_max), (cell.cfg.sim(), 6 * cfg.prune_max)]


def recorded_cells(cfg, root: Path | None = None) -> tuple[list, list[str]]:
    """The recorded plane cells of this config's record_ds: (CellResults marked "recorded", notes).

    A record counts when it answers for the cell's unit (validity.find: the same parameters, run-only settings such
    as threads aside, and today's code or other code that computes the same numbers). A note names every other
    record of one of these cells, with why it is not used; a record that lacks a field is "needs re-measuring".
    Records of any profile folder count: the parameters say what was run."""
    from ..book.records.record import source_code
    from ..paths import repo_root
    from .validity import first_valid, fresh, note
    root = Path(root or repo_root())
    if fresh():
        return [], ["a fresh build (--fresh): recorded cells not read"]
    code = source_code(root, ENTRY)
    found, notes = {}, []
    for c in cfg.record_cells():
        name = cell_name(c)
        j, stale = first_valid(Unit(KIND, name, "", cell_params(cfg, c), code, cfg.seed), root)
        notes += [f"{name}: {note(k)}" for k in stale]
        if j is None:
            continue
        try:
            found[name] = _cell_result(c, j.rec)
        except (KeyError, TypeError, ValueError) as e:
            notes.append(f"{name}: {j.path.name} needs re-measuring (field {e})")
    return [found[cell_name(c)] for c in cfg.record_cells() if cell_name(c) in found], notes


def made_by(recorded: list) -> list[str]:
    """One line per commit, device and date that made recorded cells, with how many: where a page's results came
    from."""
    from collections import Counter

    from .validity import made_by as line
    counts = Counter(line(r.extra.get("provenance", {})) for r in recorded)
    return [f"{n} cell{'s' if n != 1 else ''} recorded by {what}" for what, n in sorted(counts.items())]


def _cell_result(cell, rec: dict):
    """A recorded cell's CellResult, marked "recorded", with the record's provenance (KeyError names a missing
    field). Each condition is judged again by today's rule from its recorded value (premise_map.rule), at the cell's
    config; the few whose rule reads more than the value (share, convergence, the arm bounds) keep their recorded
    judgement."""
    import torch

    from ..claims.premise_map import Arm, CellResult, judged
    pay = rec["payload"]
    def prem(ps, T=float("nan")):
        return {k: judged(k, v["text"], v["value"], cell.cfg, v["required"], T,
                          threshold=v["threshold"], holds=v["holds"]) for k, v in ps.items()}
    arms = {n: Arm(n, torch.tensor(a["size"]), float(a["T"]), prem(a["premises"], float(a["T"])),
                   torch.tensor(a["gain"]), a["loss"], a["pos_prob"]) for n, a in pay.get("arms", {}).items()}
    return CellResult(cell, prem(pay["premises"]), torch.tensor(pay["gain"]), pay["seconds"], source="recorded",
                      arms=arms, extra={**pay.get("extra", {}), "provenance": rec.get("provenance", {})})
