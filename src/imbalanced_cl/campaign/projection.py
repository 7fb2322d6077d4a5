"""A unit's wall time on this machine, projected before it runs (issue 64, item 6).

A unit's work is counted from the trainings its config declares (`workload()`, what sim/runtime.py estimates from;
notebook 08 and its points, and notebook 10's cells, are counted here from their stage caps): its FLOPs
(runtime.step_flops, token-level BReLU: an upper bound), its Gaussian draws (sim/data.draw_plan: two views of L tokens
of d1 noise a pair, every step under fresh pairs, once for a fixed set: at the default sizes drawing pairs is most of
a notebook's time, book/performance.md) and its steps, plus one start per unit (kernel, imports, the notebook's own
measurements and plots).

The seconds each of these costs are calibrated on this machine: fitted to the recorded wall times of the units
planned today that have a record made on this machine's device (`samples`), non-negative, as many records as possible
within 2 times of the model (`fit`). No single factor on sim/runtime.py's loop-rate estimate fits them: on the 38
records of 2026-12-02 the best one (4.5, their geometric mean) puts 15 within 2 times, their ratios to it spanning 0.11
(paper 02) to 6.4 (default 09): the small default units cost far more than their FLOPs, the paper units less.
What the model does not count: elementwise work that grows with m alone (notebook 10's m/d = 500 star cell, 5,000
neurons at d1 = 50, runs 6 to 14 times its projection), the loss plateau that ends a stage early (08 and 10 are
counted at their caps) and the load of the machine when a record was made. A unit whose work cannot be
counted (notebook 06's real images; a config that declares no workload) is said to be so, never guessed; without a
calibration (no records of this device) the projection is runtime's training estimate, marked "estimate only".
"""
from __future__ import annotations

import hashlib
import json
import math
from dataclasses import asdict, dataclass
from pathlib import Path

TERMS = ("flops", "gaussians", "steps", "start")
# how a term's fitted cost reads: (unit it is counted in, its size)
UNITS = {"flops": ("TFLOP", 1e12), "gaussians": ("G Gaussians", 1e9), "steps": ("k steps", 1e3),
         "start": ("unit", 1.0)}
BAND = 2.0            # a record counts as fitted when the model lies within this factor of its recorded time
VERSION = 2           # of the counting and the fit: a cached calibration of another version is fitted again


@dataclass(frozen=True)
class Work:
    """What a unit computes, counted over its trainings: FLOPs, Gaussian draws and steps, and its one start."""

    flops: float = 0.0
    gaussians: float = 0.0
    steps: float = 0.0
    start: float = 1.0

    def vector(self) -> list[float]:
        """The counts in TERMS' order."""
        return [getattr(self, t) for t in TERMS]


def count(trainings) -> Work:
    """The work of (config, steps) trainings: per step step_flops FLOPs and, under fresh pairs, R K times a pair's
    Gaussians (two views of L tokens of d1 noise: draw_plan); a fixed set draws its pairs once."""
    from ..sim.data import draw_plan
    from ..sim.runtime import step_flops
    flops = gauss = steps = 0.0
    for c, n in trainings:
        per_pair = sum(math.prod(shape) for kind, shape in draw_plan(c, 1) if kind == "n")
        flops += n * step_flops(c, c.R, linear=False)
        gauss += c.R * c.n_pairs * per_pair * (n if c.sampling == "fresh" else 1)
        steps += n
    return Work(flops, gauss, steps)


def _scale_trainings(cfg, ds) -> list:
    """Notebook 08's trainings at each d of `ds`, at their caps (an upper bound): the ratio groups batched as
    replicates for t3_cap tau_d steps (Stage 3 ends at the loss plateau or there), and the control and pruned
    branches for branch_tau tau_d steps."""
    from ..claims.scale.config import clock
    out = []
    for d in ds:
        groups = [cfg.point(d, r) for r in cfg.groups]
        tau = clock(groups[0])
        out += [(groups[0].replace(R=cfg.R * len(groups)), round(cfg.t3_cap * tau)),
                (groups[-1].replace(R=2 * cfg.R), round(cfg.branch_tau * tau))]
    return out


def trainings(kind: str, name: str, params: dict, root: Path) -> tuple[list | None, str]:
    """(the (config, steps) trainings of a unit, "") or (None, why its work cannot be counted)."""
    from ..book.build.params import build, config_class
    from . import premise_cells, pruning_sweeps
    tup = {k: tuple(v) if isinstance(v, list) else v for k, v in params.items()}
    if kind == "premise_cell":
        return premise_cells.workload(params), ""
    if kind == "pruning_sweep":
        return pruning_sweeps.workload(params), ""
    if kind == "scale_point":
        from ..claims.scale import ScaleConfig
        d = tup.pop("d_point")
        return _scale_trainings(ScaleConfig(**tup), [d]), ""
    if kind != "notebook":
        return None, f"kind {kind} declares no trainings to count"
    from .kinds import notebook_file
    cls = config_class(notebook_file(root, name))
    cfg = build(cls, params) if cls is not None else None
    if name == "08_scale":
        return _scale_trainings(cfg, cfg.ds), ""
    work = cfg.workload() if hasattr(cfg, "workload") else None
    if not work:
        what = "real images (ResNet pre-training)" if name.startswith("06") else "no training workload"
        return None, f"its config ({type(cfg).__name__}) declares {what}: its time is not modelled"
    return work, ""


def work_of(kind: str, name: str, params: dict, root: Path) -> tuple[Work | None, str]:
    """(a unit's counted work, "") or (None, why it cannot be counted)."""
    from ..validate import ParameterError
    try:
        work, why = trainings(kind, name, params, root)
    except (ParameterError, TypeError, ValueError, KeyError) as e:
        return None, f"its parameters do not build its config ({str(e).splitlines()[0]})"
    return (count(work), "") if work is not None else (None, why)


@dataclass
class Calibration:
    """The seconds each counted term costs on one device, fitted to `records` recorded units; `within` of them lie
    within BAND of the model; `ratios` is (unit, recorded s, projected s) per record."""

    device: str
    rates: dict
    records: int
    within: int
    ratios: list

    def seconds(self, work: Work) -> float:
        """The projected wall seconds of a unit's work."""
        return sum(self.rates[t] * x for t, x in zip(TERMS, work.vector(), strict=True))

    def line(self) -> str:
        """One line: what it was fitted to, and each term's cost."""
        costs = ", ".join(f"{self.rates[t] * UNITS[t][1]:.3g} s per {UNITS[t][0]}" for t in TERMS if self.rates[t])
        none = [t for t in TERMS if not self.rates[t]]
        return (f"calibrated on {self.records} records made on this machine's device ({self.device}), "
                f"{self.within} of them within {BAND:g}x of the model: {costs}"
                + (f" ({', '.join(none)}: no cost beyond the other terms)" if none else ""))


def fit(samples: list, device: str) -> Calibration | None:
    """The non-negative costs per term that put as many samples (label, Work, recorded seconds) as possible within
    BAND of their recorded time (a linear programme over relative errors, outside the band weighing most), then, on
    those samples alone, as close to their recorded times as possible (so a record the model cannot reach does not
    pull the others); None without samples."""
    import numpy as np
    if not samples:
        return None
    X = np.array([w.vector() for _, w, _ in samples], float)
    y = np.array([s for _, _, s in samples], float)
    scale = X.max(0)
    scale[scale == 0] = 1.0
    M = X / scale / y[:, None]          # the model over the recorded time, linear in the scaled costs
    costs = _l1(M, np.ones(len(y)), hinge=100.0)
    if costs is None:
        return None
    kept = np.array([inside(p, 1.0) for p in M @ costs])
    costs = _l1(M[kept], np.ones(int(kept.sum())), band=True) if kept.any() else costs
    rates = costs / scale
    proj = X @ rates
    within = int(sum(inside(p, s) for p, s in zip(proj, y, strict=True)))
    return Calibration(device, dict(zip(TERMS, map(float, rates), strict=True)), len(y), within,
                       [(label, float(s), float(p)) for (label, _, s), p in zip(samples, proj, strict=True)])


def _l1(M, one, hinge: float = 0.0, band: bool = False):
    """Non-negative c minimising sum |M c - 1| (+ hinge times how far each M c lies outside [1/BAND, BAND]); with
    `band`, every M c is held inside it. None where the programme has no solution."""
    import numpy as np
    from scipy.optimize import linprog
    n, k = M.shape
    eye, zero = np.eye(n), np.zeros((n, n))
    # variables: c (k), above the band (n), below it (n), |M c - 1| (n)
    cost = np.concatenate([np.zeros(k), np.full(2 * n, hinge), np.ones(n)])
    A = np.block([[M, -eye, zero, zero], [-M, zero, -eye, zero], [M, zero, zero, -eye], [-M, zero, zero, -eye]])
    b = np.concatenate([np.full(n, BAND), np.full(n, -1 / BAND), one, -one])
    over = [(0, None)] * n if hinge or not band else [(0, 0)] * n
    res = linprog(cost, A_ub=A, b_ub=b, bounds=[(0, None)] * k + over + over + [(0, None)] * n, method="highs")
    return res.x[:k] if res.status == 0 else None


def inside(projected: float, recorded: float) -> bool:
    """Whether a projection lies within BAND of the recorded time (the fit puts some on its edge: a relative 1e-9
    of rounding counts as on it)."""
    return 1 / BAND * (1 - 1e-9) <= projected / recorded <= BAND * (1 + 1e-9)


def wall(rec: dict) -> float | None:
    """A record's wall seconds, the work of its resumed points included (status._note_walls counts it alike)."""
    prov = rec.get("provenance") if isinstance(rec.get("provenance"), dict) else {}
    if prov.get("wall_s") is None:
        return None
    ck = (rec.get("payload") or {}).get("checkpoints") if isinstance(rec.get("payload"), dict) else None
    return float(prov["wall_s"]) + (float(ck.get("resumed_s") or 0.0) if isinstance(ck, dict) else 0.0)


def _planned(profile: str, root: Path) -> list:
    """Every unit that every kind plans at `profile` today ([] for a folder that is no profile); a kind whose plan
    fails adds none (`campaign status` of that profile names it)."""
    import contextlib
    import io

    from ..book.build.profiles import PROFILES
    from ..validate import ParameterError
    from .kinds import KINDS
    units = []
    for k in KINDS.values() if profile in PROFILES else ():
        try:
            with contextlib.redirect_stderr(io.StringIO()):
                units += k.plan(profile, root, None)
        except ParameterError:
            continue
    return units


def samples(root: Path, device: str, results: Path | None = None) -> list:
    """(unit label, Work, recorded seconds) of the units a profile plans today that have a record made on `device`
    under results/campaign/<profile>/, the newest of each (_answers)."""
    from . import record
    results = Path(results or Path(root) / "results" / "campaign")
    out = []
    for folder in sorted(p for p in results.glob("*/") if p.is_dir()):
        recs = list(record.scan(folder).records.values())
        for u in _planned(folder.name, root):
            found = [r for r in recs if _answers(r, u, device)]
            if not found:
                continue
            rec = max(found, key=lambda r: str(r["provenance"].get("recorded", "")))
            w, _ = work_of(u.kind, u.name, rec.get("params") or {}, root)
            if w is not None:
                out.append((f"{folder.name}/{u.label}", w, wall(rec)))
    return out


def _answers(rec: dict, unit, device: str) -> bool:
    """Whether a record's wall time speaks for a planned unit on `device`: its kind, name and seed, made on that
    device with a wall time, and no measured parameter of another value (validity.judge's test of parameters; one
    added since does not count, and speed is not what a probe checks, so the code it was made under is not asked)."""
    from .units import measures
    from .validity import seed_of
    prov = rec.get("provenance")
    if (rec.get("kind"), rec.get("name")) != (unit.kind, unit.name) or seed_of(rec) not in (None, unit.seed):
        return False
    if not isinstance(prov, dict) or prov.get("device") != device or not wall(rec):
        return False
    mine = {k: v for k, v in unit.params.items() if measures(k)}
    return not any(mine[k] != v for k, v in (rec.get("params") or {}).items() if k in mine)


def this_device() -> str:
    """The device a unit run here trains on: cuda where there is one, else cpu."""
    import torch
    return "cuda" if torch.cuda.is_available() else "cpu"


def calibration(root: Path, device: str | None = None, results: Path | None = None) -> Calibration | None:
    """The calibration of this machine's device from the committed records (kept under _build/campaign/, keyed by the
    records' files and VERSION, so a status call fits again only when a record changed); None without records."""
    device = device or this_device()
    results = Path(results or Path(root) / "results" / "campaign")
    h = hashlib.sha256(f"{VERSION}:{device}".encode())
    for p in sorted(results.glob("*/*/*.json")):
        h.update(str(p.relative_to(results)).encode() + p.read_bytes())
    cache = Path(root) / "_build" / "campaign" / f"calibration-{device}.json"
    try:
        kept = json.loads(cache.read_text())
        if kept.get("key") == h.hexdigest():
            return Calibration(**kept["calibration"]) if kept["calibration"] else None
    except (OSError, ValueError, TypeError, KeyError):
        pass
    cal = fit(samples(root, device, results), device)
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text(json.dumps({"key": h.hexdigest(), "calibration": asdict(cal) if cal else None}) + "\n")
    return cal


def uncalibrated(kind: str, name: str, params: dict, root: Path) -> tuple[float | None, str]:
    """Without a calibration: sim/runtime.py's training estimate at the measured loop rate, (seconds, basis), or
    (None, why)."""
    from ..sim.runtime import load_rates
    work, why = trainings(kind, name, params, root)
    rate = load_rates().get(this_device())
    if work is None or rate is None:
        return None, why or f"no loop rate measured for {this_device()} (benchmarks/loop_rates.py)"
    w = count(work)
    return rate.seconds(w.flops, int(w.steps)), (f"estimate only: training at the loop rate measured on "
                                                 f"{rate.machine}, no record of this device to calibrate it")
