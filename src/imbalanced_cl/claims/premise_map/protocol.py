"""What notebook 10 runs at every cell: vanilla training until the loss plateaus (the branch point T4), then, from
that checkpoint and on the same pairs, a control and the pruned arms (Algorithm 1's magnitude mask at the map's alpha
and inside Remark 1's strict and extended bounds, and two oracle masks) for App. F.4's T, capped at prune_max."""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import torch
from tqdm.auto import tqdm

from ... import stats
from ... import workers as W
from ...sim import regime
from ...sim.train import Run, train
from ..pruning.batch import train_arms
from ..pruning.config import PruningConfig
from ..pruning.metrics import (amplitude_ratio, convergence, learned_minority, lucky_minority, minority_dominant,
                               paper_T)
from .config import Cell, PremiseMapConfig, eq33_t1
from .metrics import Premise, cell_premises, judged, kappa

# The pruned arms of a cell, in training order: Algorithm 1 at the map's alpha, Algorithm 1 with alpha m = the
# strict bound |M*_j*| and the extended bound (neurons with j* in N_i) of Remark 1 per replicate, and the oracles
# P = M*_j* (Def. B.1, Theorem F.1's hypothesis) and P = the minority-dominant neurons at T4.
ARMS = ("alg1", "alg1_strict", "alg1_extended", "oracle_lucky", "oracle_dominant")
ARM_TEXT = {"alg1": "Algorithm 1 at the map's α", "alg1_strict": "Algorithm 1, α·m = |M*_j*| (Remark 1, strict)",
            "alg1_extended": "Algorithm 1, α·m = |{i: j* ∈ N_i}| (Remark 1, extended)",
            "oracle_lucky": "oracle P = M*_j* (Def. B.1; Thm F.1's hypothesis)",
            "oracle_dominant": "oracle P = minority-dominant neurons at T4"}
ORACLES = ("oracle_lucky", "oracle_dominant")


@dataclass
class Arm:
    """One pruned arm of a cell: its pruned count per replicate, the paper's T at its mean alpha, its premises
    (prune_T, bound, bound_ext), its gain over the control and where its loss and l'_p ended."""

    name: str                   # one of ARMS
    size: torch.Tensor          # (R,) neurons pruned (alpha m per replicate)
    T: float                    # App. F.4's T at alpha = mean size / m (inf for an empty mask)
    premises: dict              # key -> Premise: prune_T, bound, bound_ext
    gain: torch.Tensor          # (R,) change of A_j*/A_maj, this arm minus the control
    loss: float                 # final InfoNCE, mean over replicates
    pos_prob: float             # final mean l'_p, mean over replicates

    def gain_ci(self) -> tuple[float, float, float]:
        """(mean, lo, hi) of the gain over replicates."""
        return stats.ci(self.gain.double())


@dataclass
class CellResult:
    """A cell's premises and predictions (closed-form and, if run, measured), its arms and how long it took."""

    cell: Cell
    premises: dict                      # key -> metrics.Premise (premises and predictions)
    gain: torch.Tensor | None = None    # (R,) change of A_j*/A_maj, Algorithm 1 at the map's alpha minus control
    seconds: float = 0.0
    source: str = "computed"            # "computed" here, or "recorded" (read from a campaign record)
    extra: dict = field(default_factory=dict)   # T4, branch length, T1 per replicate, eq. (33)'s T1, losses
    arms: dict = field(default_factory=dict)    # name -> Arm (ARMS that ran)

    @property
    def ran(self) -> bool:
        """Whether the cell was trained (its measured premises and gain exist)."""
        return self.gain is not None

    def gain_ci(self) -> tuple[float, float, float]:
        """(mean, lo, hi) of Algorithm 1's gain at the map's alpha (NaN when the cell was not run)."""
        if self.gain is None:
            return (float("nan"),) * 3
        return stats.ci(self.gain.double())

    def required_ok(self) -> bool:
        """Whether every required premise holds (the closed forms only, for a cell that was not run); predictions
        never enter."""
        return all(p.holds for p in self.premises.values() if p.required and not p.prediction)


def train_to_convergence(cell: Cell) -> tuple[Run, object]:
    """The vanilla run of a cell, trained in blocks of vanilla_block steps until the convergence premise holds (the
    loss well below ln K, l'_p near 1 - Theta(1/tau), flat over one block) or vanilla_max steps: (run at T4, its
    pruning.metrics.Convergence). A flat loss alone does not stop it: the loss sits flat at ln K before Stage 1."""
    cfg = cell.cfg
    run, steps = None, 0
    while True:
        steps = min(steps + cell.vanilla_block, cfg.vanilla_steps)
        run = train(cfg.replace(vanilla_steps=steps).vanilla(progress=False), resume=run)
        conv = converged(run, cell)
        if conv.holds or steps >= cfg.vanilla_steps:
            return run, conv


def converged(run: Run, cell: Cell):
    """The convergence premise on a run's history, with the cell's tolerances (pruning.metrics.convergence)."""
    h = run.history
    return convergence(h.get("steps"), h.get("loss"), h.get("pos_prob"), cell.cfg.n_pairs, cell.cfg.tau,
                       *cell.converge, cell.vanilla_block)


def _arm_premises(name: str, size: torch.Tensor, T: float, length: int, strict: torch.Tensor,
                  extended: torch.Tensor, cfg: PruningConfig) -> dict:
    """The arm's own premises: pruned for the paper's T (length >= T), and Remark 1's bounds per replicate."""
    worst = float(size.max())
    return {
        "prune_T": judged("prune_T", "pruned from T4 for App. F.4's T = ((ε_max/ε_j*) − 1)d/(ηαε_j*²C_z loglog d)",
                          float(length), cfg, T=T),
        "bound": Premise("bound", "α·m ≤ |M*_j*| (Remark 1, strict; Def. B.1 on the initial weights), every "
                         "replicate", worst, f"≤ {int(strict.min())} (fewest |M*_j*| over replicates)",
                         bool((size <= strict).all() and (size >= 1).all())),
        "bound_ext": Premise("bound_ext", "α·m ≤ the neurons with j* ∈ N_i at T4 (Remark 1, extended), every "
                             "replicate", worst, f"≤ {int(extended.min())} (fewest over replicates)",
                             bool((size <= extended).all() and (size >= 1).all())),
    }


def run_cell(cell: Cell, train_it: bool = True) -> CellResult:
    """The premises of one cell and, with train_it, its runs and measurements: vanilla to convergence (T4), then a
    control and the ARMS from T4 for min(largest finite App. F.4 T over the arms, prune_max) steps."""
    t0 = time.time()
    cfg = cell.cfg
    kap = kappa(cfg, cell.kappa_pairs)
    if not train_it:
        return CellResult(cell, cell_premises(cell, kap), seconds=time.time() - t0)
    base, conv = train_to_convergence(cell)
    reg = regime.measure(base)
    m, R = cfg.m, len(base.replicates)
    strict = lucky_minority(base.W0, base.M, cfg).sum(-1)
    extended = learned_minority(base.W, base.M, cfg).sum(-1)
    sets = {"oracle_lucky": lucky_minority(base.W0, base.M, cfg), "oracle_dominant": minority_dominant(base.W, base.M,
                                                                                                       cfg)}
    sizes = {"alg1": torch.full((R,), float(round(cell.alpha * m))), "alg1_strict": strict.float(),
             "alg1_extended": extended.float(), **{k: v.sum(-1).float() for k, v in sets.items()}}
    # an arm at a bound, or an oracle, needs at least one neuron in every replicate: an empty set prunes nothing
    # and its gain would be 0 by construction (the arm is then reported as not tested)
    arms = [a for a in ARMS if a == "alg1" or bool((sizes[a] >= 1).all())]
    Ts = {a: paper_T(cfg, float(sizes[a].mean()) / m, cell.C_z) for a in arms}
    finite = [t for t in Ts.values() if math.isfinite(t)]
    # at least two growth-rate windows of snapshots (PruningConfig's rate_window), even where T is shorter
    length = max(cfg.rate_window, min(math.ceil(max(finite)) if finite else cfg.prune_steps, cfg.prune_steps))
    bcfg = cfg.replace(vanilla_steps=base.step, prune_steps=length).branch(0.0)
    alphas = [0.0] + [0.0 if a in ORACLES else (sizes[a] / m).tolist() for a in arms]
    chosen = [None] + [sets[a] if a in ORACLES else None for a in arms]
    runs = train_arms(base, bcfg, alphas, chosen)
    ctl = amplitude_ratio(runs[0].W, runs[0].M, cfg)
    def end(r, f):
        return float(r.history.get(f)[-1].mean())
    out = {a: Arm(a, sizes[a], Ts[a], _arm_premises(a, sizes[a], Ts[a], length, strict, extended, cfg),
                  amplitude_ratio(r.W, r.M, cfg) - ctl, end(r, "loss"), end(r, "pos_prob"))
           for a, r in zip(arms, runs[1:], strict=True)}
    res = CellResult(cell, cell_premises(cell, kap, base, reg, conv), out["alg1"].gain, time.time() - t0, arms=out)
    res.extra = {"grad_dev": float(reg.grad_dev.mean()), "share": float(reg.share.mean()), "T4": base.step,
                 "branch": length, "T1": base.T1.tolist(), "T1_eq33": eq33_t1(cell.d, cfg.d1, cfg.lr),
                 "loss_T4": float(base.history.get("loss")[-1].mean()), "ln_K": math.log(cfg.n_pairs),
                 "lp_T4": float(base.history.get("pos_prob")[-1].mean()), "loss_ctl": end(runs[0], "loss"),
                 "lp_ctl": end(runs[0], "pos_prob")}
    return res


def run_map(cfg: PremiseMapConfig, progress: bool = True) -> list[CellResult]:
    """Every cell of cfg.cells(), trained, in order (tqdm over cells). The cells are independent, so they run in
    worker processes of one thread each when cfg.workers (0: workers.plan) gives several: one process keeps about
    one core busy (the sampler draws each replicate's pairs in turn), and a cell's numbers do not depend on where
    it runs."""
    cells = cfg.cells()
    _, results = W.pieces(run_cell, [(c,) for c in cells], [c.label for c in cells], cfg.workers,
                          on_cuda=cfg.torch_device.type == "cuda", settings=f"notebook 10, ds {list(cfg.ds)}")
    return list(tqdm(results, total=len(cells), desc="premise map", disable=not progress, leave=False))
