"""Feature decoupling (Wen & Li 2021; notebook 09): what augmentation does to what the learner learns.

One learner (the main paper's encoder with L = 1: Wen & Li's one-layer BReLU network), three ways to build
positive pairs (sim/views.py), trained side by side in the replicate dimension over a grid of pair types x
eps_min/eps_max. Measured on held-out raw samples x = M z + xi (Def. 2.1): the feature share, cos(f(x), f(xi))
(Thm 3.2), cos(f(x), f(Mz)) (Thm 3.4), singleton neurons per atom (Thm 3.4) and a ridge probe of z from f(x)
(Cor. 3.3/3.5). These are companion claims: their verdict rows carry kind = "companion", not the main paper's.
"""
from __future__ import annotations

import math
import time
from contextlib import contextmanager
from dataclasses import dataclass

import torch

from ..sim import data as D
from ..sim import views as VW
from ..sim.config import SimConfig
from ..sim.encoder import init_weights
from ..sim.train import train
from ..validate import check, check_choice, check_float, check_grid, check_int
from . import reexport
from .decoupling_metrics import (attend, cosine, coverage, encode, feature_share, measure,  # noqa: F401 (re-exported)
                                 ridge_probe, singletons)

COMPANION = "Wen & Li 2021"   # the paper these claims come from (every row's source)
AUGMENTED = (VW.RANDOM_MASK, VW.PAPER)
STREAM_DECOUPLING = 6         # random stream of latent_energy and view_correlations (data 0-3, theory 4, census 5)
EXTRA_TEST, EXTRA_FIT = 1, 2  # sub-streams of STREAM_TEST: the probe's test samples and its fitting samples


@dataclass(frozen=True)
class DecouplingConfig(SimConfig):
    """Notebook 09: the grid of pair types x eps ratios, the measurement schedule and the verdict thresholds.

    The SimConfig defaults are replaced by Wen & Li's setting at d = 20 with every Theta(.) constant set to 1
    (wen_li_scales): one token, z in {-1, 0, 1}, sigma_xi^2 = sqrt(log d)/d, m = d^1.01, lambda = d^-1.25 (inside
    their range), tau = log d (a polylog), T1 of L182.
    """

    # --- the grid ---
    kinds: tuple = VW.KINDS           # pair builders compared (sim/views.py): "paper", "identical", "random_mask"
    ratios: tuple = (1.0, 0.3, 0.1)   # eps_min/eps_max of the grid's cells; 1.0 (balanced, Wen & Li's data) is required
    # --- measurements ---
    checkpoints: int = 8              # measurement times, log-spaced up to steps (equal ones merge), plus step 0
    n_test: int = 4000                # held-out samples for the cosines and for testing the probe
    n_probe: int = 2000               # other held-out samples on which the probe is fitted
    probe_ridge: float = 1e-3         # ridge penalty of the probe, relative to the mean feature variance
    singleton_rel: float = 0.5        # N_i holds the atoms with a coefficient of at least this times the largest
    singleton_cos2: float = 0.5       # a singleton neuron also has cos^2(w_i, M_j) of at least this (not noise)
    # --- verdict thresholds, fixed before any run ---
    share_min: float = 0.9            # with augmentation the feature share reaches this (Thm 3.4: off-atom part o(1))
    noise_align_max: float = 0.5      # with augmentation cos(f(x), f(xi)) stays at most this
    align_high: float = 0.9           # without augmentation cos(f(x), f(xi)) reaches this (Thm 3.2: 1 - o(1))
    removal_min: float = 0.9          # with augmentation cos(f(x), f(Mz)) reaches this (Thm 3.4)
    coverage_min: float = 0.9         # with augmentation this fraction of atoms has a singleton neuron (Thm 3.4)
    probe_max: float = 0.5            # a probe succeeds at a normalised MSE of at most this (Cor. 3.3/3.5)
    probe_gap_min: float = 0.1        # smallest effect of interest: identical copies' probe MSE minus the augmented one's, paired
    tol_bound: float = 0.02           # slack of every bound rule (verdict.judge_bound)
    tol_converged: float = 0.02       # premise t of at least T3: a row's measurement moved at most this over the last checkpoint interval
    # --- sensitivity run: identical copies vs RandomMask under the main paper's optimiser values ---
    contrast_weight_decay: float = 1e-3   # lambda of the sensitivity run (the main paper's, below Wen & Li's range here)
    contrast_tau: float = 1.0             # tau of the sensitivity run (the main paper's)
    contrast_steps: int = 5000            # length of the sensitivity run; 0 skips it
    threads: int = 1                  # torch CPU threads while computing (0: torch's default); one is fastest on a shared machine
    # --- SimConfig fields set to Wen & Li's values (wen_li_scales) ---
    d1: int = 200                     # ambient dimension (Wen & Li: d1 is poly(d))
    L: int = 1                        # tokens per sample; 1 makes the main paper's encoder Wen & Li's network
    eps_min: float = 1.0              # unused here: each cell sets eps_min to ratio times eps_max
    n_minority: int = 10              # minority features (the last ones) in the cells with a ratio below 1
    mag_lo: float = 1.0               # |z_j| in [mag_lo, mag_hi]; Wen & Li's z is in {-1, 0, 1}
    sigma_xi: float = 0.2942          # noise std; Wen & Li's sigma^2 is sqrt(log d)/d, 0.2942 at d 20
    views: str = "paper"              # unused here: `kinds` lists the pair builders compared
    m: int = 21                       # neurons; Wen & Li: d^1.01, 21 at d 20
    weight_decay: float = 0.0236      # lambda; Wen & Li: in [d^-1.499, d^-1.001], here d^-1.25
    tau: float = 3.0                  # temperature; Wen & Li: polylog(d), here log d
    steps: int = 2000                 # training steps (the measurements flatten well before)
    t1_max: int = 193                 # the bias switches on at this step at the latest: L182's T1, d log(d1) / (eta loglog d)
    progress: bool = False            # progress bar while training

    def validate(self) -> None:
        """SimConfig's checks plus the grid, the measurement schedule and the thresholds."""
        super().validate()
        check_grid("kinds", self.kinds, lambda n, v: check_choice(n, v, VW.KINDS))
        check("kinds", self.kinds, len(set(self.kinds)) == len(self.kinds), "a list of distinct pair types")
        check_grid("ratios", self.ratios, lambda n, v: check_float(n, v, 0.0, 1.0, lo_open=True))
        check("ratios", self.ratios, 1.0 in self.ratios, "a list of numbers in (0, 1] that contains 1.0")
        check_int("checkpoints", self.checkpoints, 1)
        check_int("n_test", self.n_test, 10)
        check_int("n_probe", self.n_probe, 10)
        check_float("probe_ridge", self.probe_ridge, 0.0, lo_open=True)
        check_float("singleton_rel", self.singleton_rel, 0.0, 1.0, lo_open=True, hi_open=True)
        for name in ("singleton_cos2", "share_min", "noise_align_max", "align_high", "removal_min", "coverage_min",
                     "probe_max"):
            check_float(name, getattr(self, name), 0.0, 1.0, lo_open=True)
        check_float("probe_gap_min", self.probe_gap_min, 0.0)
        check_float("tol_bound", self.tol_bound, 0.0, 1.0, hi_open=True)
        check_float("tol_converged", self.tol_converged, 0.0, lo_open=True)
        check_float("contrast_weight_decay", self.contrast_weight_decay, 0.0)
        check("contrast_weight_decay", self.contrast_weight_decay, self.lr * self.contrast_weight_decay < 1,
              "a number with lr * contrast_weight_decay < 1", given=f"lr={self.lr}")
        check_float("contrast_tau", self.contrast_tau, 0.0, lo_open=True)
        check_int("contrast_steps", self.contrast_steps, 0)
        check_int("threads", self.threads, 0, 256)

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


def wen_li_scales(d: int, d1: int, lr: float) -> dict:
    """Wen & Li's scalings at (d, d1, eta), all Theta(.) constants set to 1, to print beside the parameters."""
    return {"sigma_xi": math.sqrt(math.sqrt(math.log(d)) / d),          # Def. 2.1: sigma^2 = sqrt(log d) / d
            "m": math.ceil(d ** 1.01),                                  # Thm 3.4
            "weight_decay": (d ** -1.499, d ** -1.001),                 # L171: lambda in [d^-1.499, d^-1.001]
            "tau": math.log(d),                                         # Thm 3.4: tau = polylog(d)
            "T1": d * math.log(d1) / (lr * math.log(math.log(d))),      # L182
            "bias_ramp": lr / d}                                        # L182: eta_b >= eta / d


@contextmanager
def threads(n: int):
    """Run the block on n torch CPU threads (0: leave torch's setting), then restore the previous count."""
    prev = torch.get_num_threads()
    if n:
        torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(prev)


# --- the data: pairs for every cell of the grid, and held-out raw samples ---

class GridSampler:
    """train's `sampler(t, reps)` for the batched grid: position k of the batch is replicate k % R of cell k // R.

    Replicate r of every cell draws from the same train stream, exactly as data.make_pairs does (fresh: sub-stream
    t + 1 at step t; fixed: sub-stream 0 every step), so the cells see the same random numbers and differ only in
    their pair builder and eps (common random numbers: paired comparisons). M holds the R dictionaries.
    """

    def __init__(self, cfg: DecouplingConfig, M: torch.Tensor):
        self.cfg, self.M = cfg, M
        self.cell_cfgs = [cfg.cell_cfg(k, r) for k, r in cfg.cells]
        self._fixed = None

    def __call__(self, t: int, reps: list) -> D.Pairs:
        """The pairs of step t for the whole batch (train runs the grid as one chunk)."""
        R, fresh = self.cfg.R, self.cfg.sampling == "fresh"
        if len(reps) != R * len(self.cell_cfgs):
            raise ValueError(f"the grid trains as one chunk of {R * len(self.cell_cfgs)} replicates, got {len(reps)}")
        if not fresh and self._fixed is not None:
            return self._fixed
        ids = list(range(R))
        parts = [D.make_pairs(cc, self.M, ids, extra=t + 1 if fresh else 0) for cc in self.cell_cfgs]
        pairs = D.Pairs(*(torch.cat([getattr(p, f) for p in parts]) for f in ("UX", "UY", "S", "ZX", "ZY")))
        if not fresh:
            self._fixed = pairs
        return pairs


def one_view_latents(cfg: SimConfig, n: int, gen: torch.Generator) -> torch.Tensor:
    """Token latents z (n, L, d) of n unaugmented samples, drawn with data.latents_from (Def. 3.1)."""
    d, L = cfg.d, cfg.L
    u = [torch.rand(n, d, generator=gen), torch.rand(n, d, generator=gen), torch.rand(n, d, generator=gen),
         torch.rand(n, L, d, generator=gen), torch.rand(n, L, d, generator=gen)]
    return D.latents_from(cfg, u[0], u[1], [u[2:5], u[2:5]])[2]


@dataclass
class Raw:
    """Held-out raw samples x = M z + xi (Def. 2.1) and their parts: tokens (R, n, L, d1), latents z (R, n, d)."""

    x: torch.Tensor
    xi: torch.Tensor
    signal: torch.Tensor
    z: torch.Tensor


def raw_samples(cfg: SimConfig, M: torch.Tensor, reps: list, n: int, extra: int) -> Raw:
    """n unaugmented samples (the downstream data of Def. 3.1) per replicate, from its held-out stream."""
    zs, xis = [], []
    for r in reps:
        gen = D.generator(cfg.seed, r, D.STREAM_TEST, extra)
        zs.append(one_view_latents(cfg, n, gen))
        xis.append(cfg.sigma_xi * torch.randn(n, cfg.L, cfg.d1, generator=gen))
    z, xi = torch.stack(zs), torch.stack(xis)
    s = VW.signal(z, M)
    return Raw(s + xi, xi, s, z.sum(-2))


def latent_energy(cfg: SimConfig, n: int = 100_000) -> torch.Tensor:
    """E[z_j^2] of the token-summed latent (d,), by Monte Carlo on a stream of its own: the probe's scale."""
    return one_view_latents(cfg, n, D.generator(cfg.seed, 0, STREAM_DECOUPLING)).sum(-2).pow(2).mean(0)


# --- the experiment ---

@dataclass
class DecouplingResult:
    """Measurements of the grid over time. Cell axis C follows cfg.cells; R replicates per cell."""

    cells: list            # [(kind, ratio)]
    steps: list            # measurement steps (T)
    share: torch.Tensor    # (T, C, R) feature share
    align: torch.Tensor    # (T, C, R) cos(f(x), f(xi))
    removal: torch.Tensor  # (T, C, R) cos(f(x), f(Mz))
    probe: torch.Tensor    # (T, C, R, d) normalised probe MSE per coordinate
    singles: torch.Tensor  # (T, C, R, d) singleton neurons per atom
    raw_probe: torch.Tensor    # (C, R, d) the same probe on the raw input x (a reference without a network)
    minority: torch.Tensor     # (d,) bool: the features that are minority whenever eps_min < eps_max
    share_steps: torch.Tensor  # (T',) steps of the fine feature-share record
    share_hist: torch.Tensor   # (T', C, R) feature share every record_every steps
    T1: torch.Tensor       # (C, R) step at which the bias switched on (-1: never)
    seconds: float

    def cell(self, kind: str, ratio: float) -> int:
        """Index of a cell on the C axis."""
        return self.cells.index((kind, ratio))

    def series(self, name: str, kind: str, ratio: float = 1.0) -> torch.Tensor:
        """One summary per replicate over time (T, R): share, align, removal, coverage or probe (mean over atoms)."""
        c = self.cell(kind, ratio)
        if name == "coverage":
            return coverage(self.singles[:, c])
        return self.probe[:, c].mean(-1) if name == "probe" else getattr(self, name)[:, c]

    def final(self, name: str, kind: str, ratio: float = 1.0) -> torch.Tensor:
        """A measurement at the last step for one cell, per replicate: (R,) or (R, d)."""
        return getattr(self, name)[-1, self.cell(kind, ratio)]


def run_grid(cfg: DecouplingConfig) -> DecouplingResult:
    """Train every cell's R replicates in one batched run, measuring at cfg.schedule() on held-out samples."""
    with threads(cfg.threads):
        return _run_grid(cfg)


def _run_grid(cfg: DecouplingConfig) -> DecouplingResult:
    t0 = time.time()
    C, R = len(cfg.cells), cfg.R
    ids = list(range(R))
    reps = ids * C                                               # position k: replicate k % R of cell k // R
    base = cfg.sim(views=VW.PAPER, chunk=C * R)                  # one chunk; the cells differ only in their pairs
    M = D.make_dictionaries(base, ids)                           # replicate r has one dictionary in every cell
    sampler = GridSampler(cfg, M)
    held = [(raw_samples(cc, M, ids, cfg.n_test, EXTRA_TEST), raw_samples(cc, M, ids, cfg.n_probe, EXTRA_FIT))
            for cc in sampler.cell_cfgs]
    energy = [latent_energy(cc) for cc in sampler.cell_cfgs]
    part = lambda c: slice(c * R, (c + 1) * R)
    out = {k: [] for k in ("share", "align", "removal", "probe", "singles")}
    run = None
    for t in cfg.schedule():
        if t == 0:
            W, bias = init_weights(base, reps), torch.zeros(C * R, cfg.m)
        else:
            run = train(base.replace(steps=t), replicates=reps, resume=run, sampler=sampler)
            W, bias = run.W, run.bias
        per = [measure(W[part(c)], bias[part(c)], M, *held[c], energy[c], cfg) for c in range(C)]
        for k in out:
            out[k].append(torch.stack([p[k] for p in per]))
    raw = [ridge_probe(fit.x.sum(2), fit.z, test.x.sum(2), test.z, cfg.probe_ridge, energy[c])   # no network at all
           for c, (test, fit) in enumerate(held)]
    coef, norm2 = run.history.get("coef"), run.history.get("norm2")
    share_hist = (coef.pow(2).sum((-1, -2)) / norm2.sum(-1).clamp(min=1e-30)).view(-1, C, R)
    minority = torch.arange(cfg.d) >= cfg.d - cfg.n_minority
    return DecouplingResult(cfg.cells, cfg.schedule(), *(torch.stack(out[k]) for k in out), torch.stack(raw),
                            minority, run.history.get("steps"), share_hist, run.T1.view(C, R), time.time() - t0)


# The analysis of a finished grid lives in decoupling_verdicts.py (which imports this module); its public names are
# reachable from here too, resolved on first use so that either module can be imported first.
_VERDICT_NAMES = ("LABELS", "differences", "final_table", "imbalance_answer", "imbalance_table", "paired_difference",
                  "split_mean", "verdict_rows", "view_correlations")
__getattr__ = reexport(__name__, f"{__package__}.decoupling_verdicts", _VERDICT_NAMES)
