"""Notebook 09's configuration: the grid of pair types x eps ratios at Wen & Li's scales, the measurement schedule,
the verdict thresholds; the held-out samples' container (Raw)."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import torch

from ...sim import views as VW
from ...sim.config import MODEL_PARTS, ModelConfig, SimConfig, Workers
from ...validate import check, check_choice, check_float, check_grid, check_int

COMPANION = "Wen & Li 2021"   # the paper these claims come from (every row's source)
AUGMENTED = (VW.RANDOM_MASK, VW.PAPER)
STREAM_DECOUPLING = 6         # random stream of latent_energy and view_correlations (data 0-3, theory 4, census 5)
EXTRA_TEST, EXTRA_FIT = 1, 2  # sub-streams of STREAM_TEST: the probe's test samples and its fitting samples


@dataclass(frozen=True)
class DecouplingProtocol:
    """Notebook 09's grid, measurement schedule and sensitivity run: kinds, ratios, checkpoints, n_test, n_probe,
    probe_ridge, contrast_weight_decay, contrast_tau, contrast_steps."""

    ROLE: ClassVar[str] = "protocol"
    # --- the grid ---
    kinds: tuple = VW.KINDS           # pair builders compared (sim/views.py): "paper", "identical", "random_mask"
    ratios: tuple = (1.0, 0.3, 0.1)   # eps_min/eps_max of the grid's cells; 1.0 (balanced, Wen & Li's data) is required
    # --- measurements ---
    checkpoints: int = 8              # measurement times, log-spaced up to steps (equal ones merge), plus step 0
    n_test: int = 4000                # held-out samples for the cosines and for testing the probe
    n_probe: int = 2000               # other held-out samples on which the probe is fitted
    probe_ridge: float = 1e-3         # ridge penalty of the probe, relative to the mean feature variance
    # --- sensitivity run: identical copies vs RandomMask under the main paper's optimiser values ---
    contrast_weight_decay: float = 1e-3   # lambda of the sensitivity run
                                          # (the main paper's, below Wen & Li's range here)
    contrast_tau: float = 1.0             # tau of the sensitivity run (the main paper's)
    contrast_steps: int = 5000            # length of the sensitivity run; 0 skips it

    def validate(self, cfg) -> None:
        """The grid, the measurement schedule and the sensitivity run's optimiser."""
        check_grid("kinds", self.kinds, lambda n, v: check_choice(n, v, VW.KINDS))
        check("kinds", self.kinds, len(set(self.kinds)) == len(self.kinds), "a list of distinct pair types")
        check_grid("ratios", self.ratios, lambda n, v: check_float(n, v, 0.0, 1.0, lo_open=True))
        check("ratios", self.ratios, 1.0 in self.ratios, "a list of numbers in (0, 1] that contains 1.0")
        check_int("checkpoints", self.checkpoints, 1)
        check_int("n_test", self.n_test, 10)
        check_int("n_probe", self.n_probe, 10)
        check_float("probe_ridge", self.probe_ridge, 0.0, lo_open=True)
        check_float("contrast_weight_decay", self.contrast_weight_decay, 0.0)
        check("contrast_weight_decay", self.contrast_weight_decay, cfg.lr * self.contrast_weight_decay < 1,
              "a number with lr * contrast_weight_decay < 1", given=f"lr={cfg.lr}")
        check_float("contrast_tau", self.contrast_tau, 0.0, lo_open=True)
        check_int("contrast_steps", self.contrast_steps, 0)


@dataclass(frozen=True)
class DecouplingJudging:
    """Notebook 09's definitions and verdict thresholds, fixed before any run: singleton_rel, singleton_cos2,
    share_min, noise_align_max, align_high, removal_min, coverage_min, probe_max, probe_gap_min, tol_bound,
    tol_converged."""

    ROLE: ClassVar[str] = "judging"
    singleton_rel: float = 0.5        # N_i holds the atoms with a coefficient of at least this times the largest
    singleton_cos2: float = 0.5       # a singleton neuron also has cos^2(w_i, M_j) of at least this (not noise)
    share_min: float = 0.9            # with augmentation the feature share reaches this (Thm 3.4: off-atom part o(1))
    noise_align_max: float = 0.5      # with augmentation cos(f(x), f(xi)) stays at most this
    align_high: float = 0.9           # without augmentation cos(f(x), f(xi)) reaches this (Thm 3.2: 1 - o(1))
    removal_min: float = 0.9          # with augmentation cos(f(x), f(Mz)) reaches this (Thm 3.4)
    coverage_min: float = 0.9         # with augmentation this fraction of atoms has a singleton neuron (Thm 3.4)
    probe_max: float = 0.5            # a probe succeeds at a normalised MSE of at most this (Cor. 3.3/3.5)
    probe_gap_min: float = 0.1        # smallest effect of interest:
                                      # identical copies' probe MSE minus the augmented one's, paired
    tol_bound: float = 0.02           # slack of every bound rule (rules.judge_bound)
    tol_converged: float = 0.02       # premise t of at least T3:
                                      # a row's measurement moved at most this over the last checkpoint interval

    def validate(self, cfg) -> None:
        """The thresholds' ranges."""
        check_float("singleton_rel", self.singleton_rel, 0.0, 1.0, lo_open=True, hi_open=True)
        for name in ("singleton_cos2", "share_min", "noise_align_max", "align_high", "removal_min", "coverage_min",
                     "probe_max"):
            check_float(name, getattr(self, name), 0.0, 1.0, lo_open=True)
        check_float("probe_gap_min", self.probe_gap_min, 0.0)
        check_float("tol_bound", self.tol_bound, 0.0, 1.0, hi_open=True)
        check_float("tol_converged", self.tol_converged, 0.0, lo_open=True)


class DecouplingConfig(ModelConfig):
    """Notebook 09: the grid of pair types x eps ratios, the measurement schedule and the verdict thresholds.

    The model's defaults are replaced by Wen & Li's setting at d = 20 with every Theta(.) constant set to 1
    (wen_li_scales): one token, z in {-1, 0, 1}, sigma_xi^2 = sqrt(log d)/d, m = d^1.01, lambda = d^-1.25 (inside
    their range), tau = log d (a polylog), T1 of Wen & Li's §2.2.
    """

    PARTS = {**MODEL_PARTS, "protocol": DecouplingProtocol, "judging": DecouplingJudging, "pool": Workers}
    # the model's fields set to Wen & Li's values (wen_li_scales)
    DEFAULTS = dict(
        d1=200,                       # ambient dimension (Wen & Li: d1 is poly(d))
        L=1,                          # tokens per sample; 1 makes the main paper's encoder Wen & Li's network
        eps_min=1.0,                  # unused here: each cell sets eps_min to ratio times eps_max
        n_minority=10,                # minority features (the last ones) in the cells with a ratio below 1
        mag_lo=1.0,                   # |z_j| in [mag_lo, mag_hi]; Wen & Li's z is in {-1, 0, 1}
        sigma_xi=0.2942,              # noise std; Wen & Li's sigma^2 is sqrt(log d)/d, 0.2942 at d 20
        views="paper",                # unused here: `kinds` lists the pair builders compared
        m=21,                         # neurons; Wen & Li: d^1.01, 21 at d 20
        weight_decay=0.0236,          # lambda; Wen & Li: in [d^-1.499, d^-1.001], here d^-1.25
        tau=3.0,                      # temperature; Wen & Li: polylog(d), here log d
        steps=2000,                   # training steps (the measurements flatten well before)
        t1_max=193,                   # the bias switches on at this step at the latest:
                                      # Wen & Li's T1 (§2.2), d log(d1) / (eta loglog d)
        progress=False,               # progress bar while training
        threads=1,                    # torch CPU threads while computing (0: torch's default);
                                      # one is fastest on a shared machine
    )

    def cell_cfg(self, kind: str, ratio: float) -> SimConfig:
        """The plain SimConfig of one grid cell: its pair builder and eps_min = ratio * eps_max."""
        return self.sim(views=kind, eps_min=ratio * self.eps_max)

    @property
    def cells(self) -> list[tuple[str, float]]:
        """(kind, ratio) of every cell, in the order of the batched replicate dimension."""
        return [(k, r) for r in self.ratios for k in self.kinds]

    def schedule(self) -> list[int]:
        """Measurement steps: 0 and `checkpoints` log-spaced steps ending at `steps`."""
        pts = torch.logspace(0, math.log10(self.steps), self.checkpoints, dtype=torch.float64)
        return sorted({0, *(int(round(float(p))) for p in pts), self.steps})

    def contrast(self) -> "DecouplingConfig":
        """The sensitivity run: identical copies and RandomMask on balanced data with the contrast_* values."""
        kinds = tuple(k for k in self.kinds if k in (VW.IDENTICAL, VW.RANDOM_MASK))
        return self.replace(kinds=kinds, ratios=(1.0,), weight_decay=self.contrast_weight_decay,
                            tau=self.contrast_tau, steps=max(self.contrast_steps, 1))

    def workload(self) -> list[tuple[SimConfig, int]]:
        """Notebook 09's trainings, for the time estimate: the grid's cells batched as replicates for `steps`, and
        the sensitivity run's cells for contrast_steps."""
        out = [(self.sim(R=self.R * len(self.cells)), self.steps)]
        if self.contrast_steps:
            c = self.contrast()
            out.append((c.sim(R=c.R * len(c.cells)), c.steps))
        return out


def wen_li_scales(d: int, d1: int, lr: float) -> dict:
    """Wen & Li's scalings at (d, d1, eta), all Theta(.) constants set to 1, to print beside the parameters."""
    return {"sigma_xi": math.sqrt(math.sqrt(math.log(d)) / d),          # Def. 2.1: sigma^2 = sqrt(log d) / d
            "m": math.ceil(d ** 1.01),                                  # Thm 3.4
            "weight_decay": (d ** -1.499, d ** -1.001),                 # L171: lambda in [d^-1.499, d^-1.001]
            "tau": math.log(d),                                         # Thm 3.4: tau = polylog(d)
            "T1": d * math.log(d1) / (lr * math.log(math.log(d))),      # L182
            "bias_ramp": lr / d}                                        # L182: eta_b >= eta / d


@dataclass
class Raw:
    """Held-out raw samples x = M z + xi (Def. 2.1) and their parts: tokens (R, n, L, d1), latents z (R, n, d)."""

    x: torch.Tensor
    xi: torch.Tensor
    signal: torch.Tensor
    z: torch.Tensor
