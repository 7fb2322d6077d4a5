"""The pruning_sweep kind: a sweep of notebook 04 (claims.pruning.SWEEPS: the rest of alpha_grid with its mask-control
cells, the other eps_min of eps_min_grid) measured as a unit of its own where the profile's record_sweeps names it, so
that the notebook's own unit measures only the part that decides claim 4's rows (issue 64). The notebook reads the
recorded sweeps back (claims.pruning.assemble) and names each part on its page: measured, recorded, or pending.

A sweep's measurements are kept as its record's stage, JSON and .npz beside the record (campaign/typed.py), like a
notebook unit's. A record is used only when it answers for the sweep's unit (validity.first_valid: the notebook's
parameters, and code that computes the same numbers); any other record of it is named in the notes with why not.
"""
from __future__ import annotations

from pathlib import Path

from ..book.build.profiles import params as profile_params
from .units import Kind, Unit, plain, register

ENTRY = "from imbalanced_cl.claims.pruning import PruningConfig, measure_sweep"   # what a pruning_sweep runs
KIND = "pruning_sweep"
NOTEBOOK = "04_pruning_gains"
STAGE = "sweep"                   # the one stage a sweep's record keeps


def sweep_params(cfg, name: str) -> dict:
    """A pruning_sweep's parameters: notebook 04's whole config and the sweep's name."""
    return plain({**cfg.to_dict(), "sweep": name})


def _config(params: dict):
    """The PruningConfig of a unit's parameters (lists back to tuples)."""
    from ..claims.pruning import PruningConfig
    return PruningConfig(**{k: tuple(v) if isinstance(v, list) else v for k, v in params.items() if k != "sweep"})


def units_of(cfg, root: Path, profile: str = "") -> list[Unit]:
    """One unit per sweep of cfg.record_sweeps, named after it."""
    from ..book.records.record import source_code
    code = source_code(root, ENTRY)
    return [Unit(KIND, name, profile, sweep_params(cfg, name), code, cfg.seed) for name in cfg.record_sweeps]


def plan(profile: str, root: Path, only: list[str] | None = None) -> list[Unit]:
    """The sweeps the profile's notebook 04 names in record_sweeps (none at the default and ci profiles)."""
    from ..claims.pruning import PruningConfig
    cfg = PruningConfig(**{k: tuple(v) if isinstance(v, list) else v
                           for k, v in profile_params(profile, NOTEBOOK).items()})
    return [u for u in units_of(cfg, root, profile) if not only or u.name in only]


def stage_folder(results: Path, unit: Unit) -> Path:
    """Where a sweep's record keeps its stage: beside the record, <results>/pruning_sweep/<name>-<key>.stages/."""
    from . import record
    from .validity import kept_stages
    return kept_stages(record.path_of(results, unit), {"name": unit.name, "key": unit.key})


def run(unit: Unit, root: Path) -> dict:
    """Measure one sweep (claims.pruning.measure_sweep) and keep it as the stage beside the record about to be
    written (in the unit's campaign folder; outside a campaign, under _build/campaign/)."""
    import shutil

    from . import checkpoint, typed
    from ..claims.pruning import measure_sweep
    value = measure_sweep(_config(unit.params), unit.params["sweep"])
    where = checkpoint.folder()
    results = where.parent.parent if where is not None else Path(root) / "_build" / "campaign" / unit.profile
    home = stage_folder(results, unit)
    shutil.rmtree(home, ignore_errors=True)
    typed.save(value, home / STAGE)
    return {"sweep": unit.params["sweep"], "stages": [STAGE]}




def workload(params: dict) -> list:
    """(config, steps) of one sweep's trainings (PruningConfig.part_workload)."""
    return _config(params).part_workload(params["sweep"])


def recorded_sweeps(cfg, root: Path | None = None) -> tuple[dict, dict, list[str]]:
    """The recorded sweeps of cfg.record_sweeps: ({name: measure_sweep's value}, {name: who recorded it}, notes).

    A note names every other record of one of these sweeps with why it is not used, and a record whose stage cannot
    be read ("needs re-measuring"). Records of any profile folder count: the parameters say what was run."""
    from . import typed
    from ..paths import repo_root
    from .validity import first_valid, fresh, kept_stages, made_by, note
    root = Path(root or repo_root())
    if fresh():
        return {}, {}, ["a fresh build (--fresh): recorded sweeps not read"]
    found, by, notes = {}, {}, []
    for u in units_of(cfg, root):
        j, stale = first_valid(u, root)
        notes += [f"{u.name}: {note(k)}" for k in stale]
        if j is None:
            continue
        try:
            found[u.name] = typed.load(kept_stages(j.path, j.rec) / STAGE)
            by[u.name] = made_by(j.rec.get("provenance") or {})
        except (KeyError, ValueError) as e:
            notes.append(f"{u.name}: {j.path.name} needs re-measuring ({str(e).splitlines()[0]})")
    return found, by, notes


MAIN = "main part (vanilla run, control and alpha_main branch, oracle arms, Step 6, mask control at alpha_main)"
WHOLE = "the whole protocol (every step, in one stage)"
WORDS = {"alpha_grid": "alpha grid (its other ratios, their mask-control cells, threshold_alphas)",
         "eps_grid": "eps_min grid (Step 7 at the other eps_min)"}


def sweeps_for(cfg, root: Path | None = None) -> tuple[dict, list[str]]:
    """The sweeps of cfg.record_sweeps at hand for the notebook ({name: measure_sweep's value}): the recorded ones, or
    in a fresh build (`book --fresh`) every one trained here; and one line per part of the protocol saying where it
    came from (parts_lines)."""
    from ..claims.pruning import measure_sweep
    from .validity import fresh
    found, by, notes = recorded_sweeps(cfg, root)
    trained = [n for n in cfg.record_sweeps if n not in found and fresh()]
    found.update({n: measure_sweep(cfg, n) for n in trained})
    return found, parts_lines(cfg, by, trained, notes)


def parts_lines(cfg, by: dict, trained: list, notes: list[str]) -> list[str]:
    """One short line per part of the protocol, from what was found: the part this notebook's own stage holds
    (measured in this run, or read from its record: stages.origin), then each sweep of cfg.record_sweeps, recorded
    (by whom), trained here (a fresh build) or pending (its campaign unit not recorded yet), then the notes."""
    from .stages import origin
    out = [f"{MAIN if cfg.record_sweeps else WHOLE}: {origin()}"]
    for name in cfg.record_sweeps:
        state = (f"recorded by {by[name]}" if name in by else "trained in this run" if name in trained
                 else f"pending: campaign unit {KIND}/{name}, not recorded yet")
        out.append(f"{WORDS[name]}: {state}")
    return out + notes


PRUNING_SWEEP = register(Kind(KIND, plan, run, workload=workload))
