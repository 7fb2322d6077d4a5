"""Measurements of one grid point of notebook 08 (each (R,) over replicates unless stated): the loss plateau, the
Stage-1 rate ratio, Fig. 1's alignment, the minority-dominant neurons."""
from __future__ import annotations

import numpy as np
import torch

from ...sim import metrics
from ...sim.train import Run
from .. import pruning as PA
from .. import stage1


def group_loss(run: Run, G: int, R: int) -> np.ndarray:
    """Recorded training loss, mean over the replicates of each group: (T, G)."""
    return run.history.get("loss").view(-1, G, R).mean(-1).numpy()


def plateau(steps: np.ndarray, loss: np.ndarray, tau: float, tol: float, drop: float) -> tuple[bool, np.ndarray]:
    """Has the loss levelled off after its Stage-3 fall? Mean of the records in (t - tau/4, t] against those in
    (t - 3tau/4, t - tau/2], t the last record: levelled off when, in every column of loss (T, G), the change between
    the windows is below `tol` times the first record (the start, log K for uniform logits: one scale at every d)
    and the loss lies at least `drop` x its start below it (before Stage 3 the loss is flat too, near log K).
    Returns (levelled off, change per column in units of its start)."""
    t = steps[-1]
    now = loss[steps > t - 0.25 * tau].mean(0)
    sel = (steps > t - 0.75 * tau) & (steps <= t - 0.5 * tau)
    if not sel.any():
        return False, np.full(loss.shape[1], np.nan)
    before = loss[sel].mean(0)
    rel = np.abs(now - before) / np.abs(loss[0])
    fell = now <= (1.0 - drop) * loss[0]
    return bool((rel < tol).all() and fell.all()), rel


# ----------------------------------------------------------------------------------------------------------------
# measurements of one grid point (each (R,) over replicates unless stated)
# ----------------------------------------------------------------------------------------------------------------
def rate_ratio(run: Run, fit_start: int) -> np.ndarray:
    """Stage-1 majority/minority ratio of rate/eta + lambda (stage1.measured_rates; eq. 7 predicts eps_max/eps_min)."""
    cfg = run.cfg
    y = stage1.measured_rates(run, fit_start) / cfg.lr + cfg.weight_decay          # (R, d)
    mino, majo = PA.split_mean(y, cfg)
    return (majo / mino).numpy()


def alignment(run: Run) -> np.ndarray:
    """Workshop Fig. 1: mean over majority atoms of the best cos^2(w_i, M_j) minus the same over minority atoms."""
    best = metrics.cosine_matrix(run.W, run.M).pow(2).amax(1)                      # (R, d)
    mino, majo = PA.split_mean(best, run.cfg)
    return (majo - mino).numpy()


def minority_dominant(run: Run) -> torch.Tensor:
    """Per neuron, whether its largest cos(w_i, M_j) is on a minority feature: (R, m)."""
    jstar = torch.tensor(PA.minority_index(run.cfg))
    return torch.isin(metrics.cosine_matrix(run.W, run.M).argmax(-1), jstar)
