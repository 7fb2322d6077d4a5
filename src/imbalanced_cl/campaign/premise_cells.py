"""Notebook 10's costly cells as campaign units, two kinds that run the same measurement (run_cell):

  premise_cell  one cell of the premise map too costly for the notebook's own build (the plane at cfg.record_ds, the
                star cells of cfg.record_star), computed ahead and read back by the notebook, marked "recorded";
  target_cell   a target cell (issue 63; claims/premise_map/target.py): each setting derived from the premise that
                asks for it, at every d where the profile's records measured Lemma B.1's deviation and at twice the
                largest, at the map's largest ratio. Its parameters are the map's config and the derived settings
                (m, K, lambda's name, the vanilla cap), so a record says what was run; campaign/target_cells.py reads
                them back for the notebook.

A record is used only when its map parameters are the notebook's and its code is today's. Others are not read
silently: a record of the same cell under other code, or under parameters that differ, is named in the notes with
its commit and the parameters that differ. A cell too large for the memory there is one line with its size
(size_problem), before any training.
"""
from __future__ import annotations

from pathlib import Path

from ..book.build.profiles import params as profile_params
from .units import Kind, Unit, plain, register

ENTRY = "from imbalanced_cl.claims.premise_map import PremiseMapConfig, run_cell"   # what both kinds run
KIND = "premise_cell"
TARGET = "target_cell"


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
    """The Cell a unit's parameters name: a plane cell, a star cell with its variation, or a target cell at its
    derived m, K, lambda and vanilla cap (target_params; the window's end may lie below a block: then one block)."""
    if "m" in where:
        wide = cfg.replace(vanilla_max=max(where["vanilla_max"], cfg.vanilla_block))
        return wide.cell("plane", where["d"], where["lam_name"], where["ratio"], m_over_d=where["m"] / where["d"],
                         K=where["K"])
    star = {where["star"][0]: where["star"][1]} if where.get("star") else {}
    return cfg.cell(where.get("axis", "plane"), where["d"], where["lam_name"], where["ratio"], **star)


def config_of(params: dict):
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
    """Train and measure the unit's cell (claims.premise_map.run_cell): its premises, gain and wall time."""
    from ..claims.premise_map import run_cell
    res = run_cell(cell_of(config_of(unit.params), unit.params["cell"]))
    def prem(ps):
        return {k: {"text": p.text, "value": p.value, "threshold": p.threshold, "holds": p.holds,
                    "required": p.required} for k, p in ps.items()}
    arms = {n: {"size": a.size.tolist(), "T": a.T if a.T != float("inf") else "inf", "premises": prem(a.premises),
                "gain": a.gain.tolist(), "loss": a.loss, "pos_prob": a.pos_prob} for n, a in res.arms.items()}
    return {"premises": prem(res.premises), "gain": res.gain.tolist(), "seconds": res.seconds, "arms": arms,
            "extra": res.extra}


def workload(params: dict) -> list:
    """(config, steps) of one cell's trainings at their caps, as PremiseMapConfig.workload counts every cell: the
    vanilla run to its cap (vanilla_max, a target cell's window end) and six branches of prune_max (an upper bound:
    run_cell stops earlier)."""
    cell = cell_of(config_of(params), params["cell"])
    return [(cell.cfg.vanilla(), cell.cfg.vanilla_steps), (cell.cfg.sim(), 6 * cell.cfg.prune_steps)]


def size_problem(unit: Unit, available: int | None = None, where: str = "the machine") -> str:
    """'' when the unit's cell fits the memory there (sim/memory.py's estimate from its sizes; default: this machine's
    available memory), else one line with its sizes and peak: said before any training."""
    from ..sim import memory
    c = cell_of(config_of(unit.params), unit.params["cell"]).cfg.sim()
    peak = memory.peak_bytes(**memory.sizes(c))["total"]
    have = memory.available_bytes() if available is None else available
    return "" if peak <= have else (f"peak memory about {memory.human(peak)} (d={c.d}, d1={c.d1}, m={c.m:,}, "
                                    f"K={c.n_pairs:,}, R={c.R}), more than the {memory.human(have)} {where} has")


PREMISE_CELL = register(Kind(KIND, plan, run, workload=workload, size=size_problem))


# ---------------------------------------------------------------------------------------------------------------
# target_cell: notebook 10's target cells (issue 63), planned from the deviations the profile's records measured.
# ---------------------------------------------------------------------------------------------------------------
def target_name(t) -> str:
    """A target cell's unit name: d<d>_r<ratio> (its other settings are derived, and in its parameters)."""
    return f"d{t.d}_r{t.ratio:g}"


def target_params(cfg, t) -> dict:
    """A target_cell's parameters: the map's whole config and the settings derived for the cell (m, K, lambda's name
    and the vanilla cap, the window's end), so that a record says what was run."""
    return plain({**cfg.to_dict(), "cell": {"d": t.d, "lam_name": t.lam_name, "ratio": t.ratio, "m": t.m, "K": t.K,
                                            "vanilla_max": t.vanilla_max}})


def derived(t) -> bool:
    """Whether every setting of a target cell was derived (m and K, no premise out of reach): a unit to plan, whether
    or not it fits this machine."""
    return t.m > 0 and t.K > 0 and not t.problems


def derive(cfg, results) -> list:
    """Notebook 10's target cells (claims/premise_map/target.py) at every d where `results` measured Lemma B.1's
    deviation and at twice the largest (K scaled from the nearest), at the map's largest ratio."""
    from ..claims.premise_map import measured_deviations, targets
    ds = sorted(measured_deviations(results))
    return targets(cfg, results, ds + [2 * ds[-1]]) if ds else []


def map_results(cfg, profile: str, root: Path) -> list:
    """The cells notebook 10 measured at a profile, as its book page reads them: its own cells as its valid campaign
    record kept them (stage `cells`), and the premise cells recorded for it (recorded_cells); [] where none is."""
    from ..book.records.record import unit_code
    from . import typed
    from .validity import find, kept_stages
    nb = Path(root) / "notebooks" / "10_premise_map.ipynb"
    own, j = [], None
    if nb.exists():
        unit = Unit("notebook", nb.stem, profile, profile_params(profile, nb.stem), unit_code(root, nb), cfg.seed)
        j = find(Path(root) / "results" / "campaign" / profile, unit, root)
    if j is not None and j.valid:
        try:
            own = list(typed.load(kept_stages(j.path, j.rec) / "cells"))
        except (OSError, KeyError, TypeError, ValueError):
            own = []            # no stage (an older record): its cells speak for no deviation here
    return own + recorded_cells(cfg, root)[0]


def target_unit(cfg, t, profile: str, code: str) -> Unit:
    """The target_cell unit of a target (derive)."""
    return Unit(TARGET, target_name(t), profile, target_params(cfg, t), code, cfg.seed)


def plan_targets(profile: str, root: Path, only: list[str] | None = None) -> list[Unit]:
    """One unit per target cell whose settings the profile's records let derive (derive; a d where a premise is out
    of reach, or with no deviation measured, has none): its notebook line says why."""
    from ..book.records.record import source_code
    from ..claims.premise_map import PremiseMapConfig
    cfg = PremiseMapConfig(**profile_params(profile, "10_premise_map"))
    code = source_code(root, ENTRY)
    return [target_unit(cfg, t, profile, code) for t in derive(cfg, map_results(cfg, profile, root))
            if derived(t) and (not only or target_name(t) in only)]


TARGET_CELL = register(Kind(TARGET, plan_targets, run, workload=workload, size=size_problem))


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
            found[name] = cell_result(c, j.rec)
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


def cell_result(cell, rec: dict):
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
