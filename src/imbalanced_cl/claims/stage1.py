"""Stage 1 (Lemma 3.1, Lemma C.1, Theorem C.1): growth rates along features, non-feature decay, and T1."""
from __future__ import annotations

from dataclasses import dataclass

import torch

from ..sim import metrics, theory
from ..sim.config import SimConfig
from ..validate import check, check_float, check_grid, check_int
from ..sim.train import Run, train


@dataclass(frozen=True)
class Stage1Config(SimConfig):
    """Notebook 01: one run with a spread of eps_j for the rates, plus a (d, d1) sweep for T1."""

    # notebook 01's model (overrides of SimConfig): a geometric spread of eps_j, recorded every step of Stage 1
    R: int = 8                       # replicates trained together
    d1: int = 200                    # ambient dimension, d1 >= d
    eps_min: float = 0.1             # smallest frequency of the geometric spread
    eps_profile: str = "geometric"   # eps_j log-spaced from eps_max to eps_min, so the rate fit sees many eps values
    steps: int = 60                  # gradient steps (Stage 1 ends near step 40 at this size)
    record_every: int = 1            # history every step: the rate fit needs the whole Stage-1 curve
    fit_start: int = 5               # first step of the rate fit (skip the transient of the random start)
    kappa_samples: int = 20000       # Monte-Carlo pairs for kappa_j
    d_grid: tuple = (10, 20, 40, 80)         # T1 sweep over d at d1 = sweep_d1
    d1_grid: tuple = (50, 100, 200, 400)     # T1 sweep over d1 at d = sweep_d
    sweep_d: int = 10                # d of the sweep over d1
    sweep_d1: int = 400              # d1 of the sweep over d
    sweep_R: int = 4                 # replicates per sweep point
    horizon: float = 3.0             # sweep runs for horizon x the linear-theory T1 (a prediction, not a tuned number)
    tol_slope: tuple = (0.15, 0.35)  # |slope - 1| for holds / partly
    tol_ratio: tuple = (0.10, 0.25)  # relative error of rate ratios for holds / partly
    tol_exponent: tuple = (0.25, 0.5)  # |T1 exponent - claim| for holds / partly

    def validate(self) -> None:
        """SimConfig's checks plus the sweep grids and tolerances."""
        super().validate()
        check_int("fit_start", self.fit_start, 0, self.steps - 2, given=f"steps={self.steps}")
        check_int("kappa_samples", self.kappa_samples, 100)
        check_grid("d_grid", self.d_grid, lambda n, v: check_int(n, v, 3, self.sweep_d1))
        check_grid("d1_grid", self.d1_grid, lambda n, v: check_int(n, v, self.sweep_d))
        check_int("sweep_d", self.sweep_d, 3)
        check_int("sweep_d1", self.sweep_d1, 3)
        check_int("sweep_R", self.sweep_R, 1)
        check_float("horizon", self.horizon, 1.0)
        for name in ("tol_slope", "tol_ratio", "tol_exponent"):
            v = getattr(self, name)
            check(name, v, isinstance(v, (tuple, list)) and len(v) == 2 and 0 < v[0] <= v[1],
                  "a pair (holds, partly) with 0 < holds <= partly")


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


def perp_ratio(run: Run, cfg: SimConfig, at: torch.Tensor) -> torch.Tensor:
    """||P_perp w(t)|| / (||P_perp w(0)|| (1 - eta lambda)^t) at step `at` per replicate, mean over neurons (R,).

    NaN for a replicate whose `at` is negative (T1 never reached): there is no Stage-1 end to compare at.
    """
    steps = run.history.get("steps")
    coef, norm2 = run.history.get("coef"), run.history.get("norm2")
    perp = (norm2 - coef.pow(2).sum(-1)).clamp(min=0).sqrt()  # (T, R, m)
    k = torch.searchsorted(steps, at.clamp(min=0)).clamp(max=len(steps) - 1)  # first record at or after `at`
    r = torch.arange(perp.shape[1])
    pred = theory.perp_decay(cfg, steps[k]).float()
    ratio = (perp[k, r] / (perp[0] * pred[:, None])).mean(-1)
    return torch.where(at >= 0, ratio, torch.full_like(ratio, float("nan")))


def t1_sweep(cfg: Stage1Config, axis: str) -> dict:
    """Measured T1 (R per point) and the three predictions over d_grid (axis='d') or d1_grid (axis='d1')."""
    grid = cfg.d_grid if axis == "d" else cfg.d1_grid
    rows = {"x": [], "T1": [], "linear": [], "main": [], "workshop": []}
    for v in grid:
        d, d1 = (v, cfg.sweep_d1) if axis == "d" else (cfg.sweep_d, v)
        base = cfg.sim(d=d, d1=d1, R=cfg.sweep_R, bias="none", n_minority=0, eps_profile="two_level",
                       progress=False, record_every=10**6, steps=1, prune_alpha=0.0)
        kappa = theory.kappa_mc(base, n=cfg.kappa_samples // 4)
        t_lin = theory.t1_linear(base, kappa)
        steps = int(min(max(cfg.horizon * t_lin, 10), 10**5))
        run = train(base.replace(steps=steps, progress=cfg.progress))
        T1 = run.T1.double()
        T1[T1 < 0] = float("nan")  # not reached within the horizon
        rows["x"].append(v)
        rows["T1"].append(T1)
        rows["linear"].append(t_lin)
        rows["main"].append(theory.t1_main(base))
        rows["workshop"].append(theory.t1_workshop(base))
    rows["T1"] = torch.stack(rows["T1"], dim=1)  # (R, grid)
    return rows
