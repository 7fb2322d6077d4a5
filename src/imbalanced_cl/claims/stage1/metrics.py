"""Notebook 01's measurements on a Run: feature energies, Stage-1 growth rates (eq. 7), the non-feature decay
(eq. 8)."""
from __future__ import annotations

import torch

from ...sim import metrics, theory
from ...sim.config import SimConfig
from ...sim.train import Run


def feature_energy(run: Run) -> tuple[torch.Tensor, torch.Tensor]:
    """sqrt(sum_i <w_i, M_j>^2) over time (T, R, d), and the recorded steps (T,)."""
    return run.history.get("coef").pow(2).sum(2).sqrt(), run.history.get("steps")


def fit_window(run: Run, fit_start: int) -> tuple[int, int]:
    """Rate-fit window [fit_start, T1): Stage 1 ends at the earliest replicate's T1 (the bias switches on)."""
    t1 = run.T1[run.T1 >= 0]
    end = int(t1.min()) if t1.numel() else run.step
    return fit_start, end


def measured_rates(run: Run, fit_start: int) -> torch.Tensor:
    """Per-replicate, per-feature log growth rate of the feature energy in Stage 1 (R, d)."""
    E, steps = feature_energy(run)
    lo, hi = fit_window(run, fit_start)
    return metrics.log_slope(E, steps, lo, hi)


def effective_kappa(rate: torch.Tensor, cfg: SimConfig) -> torch.Tensor:
    """Invert the linear update: (exp(rate) - 1 + eta lambda) / (eta gain) = kappa_j  (eq. 7 without O~ terms)."""
    return (torch.expm1(rate) + cfg.lr * cfg.weight_decay) / (cfg.lr * theory.gain(cfg))


def perp_history(run: Run) -> torch.Tensor:
    """||P_perp w_i|| over the recorded steps (T, R, m): the part of each neuron outside span(M) (eq. 8)."""
    coef, norm2 = run.history.get("coef"), run.history.get("norm2")
    return (norm2 - coef.pow(2).sum(-1)).clamp(min=0).sqrt()


def perp_ratio(run: Run, cfg: SimConfig, at: torch.Tensor) -> torch.Tensor:
    """||P_perp w(t)|| / (||P_perp w(0)|| (1 - eta lambda)^t) at step `at` per replicate, mean over neurons (R,).

    NaN for a replicate whose `at` is negative (T1 never reached): there is no Stage-1 end to compare at.
    """
    steps = run.history.get("steps")
    perp = perp_history(run)  # (T, R, m)
    k = torch.searchsorted(steps, at.clamp(min=0)).clamp(max=len(steps) - 1)  # first record at or after `at`
    r = torch.arange(perp.shape[1])
    pred = theory.perp_decay(cfg, steps[k]).float()
    ratio = (perp[k, r] / (perp[0] * pred[:, None])).mean(-1)
    return torch.where(at >= 0, ratio, torch.full_like(ratio, float("nan")))
