"""Notebook 09's runs: the grid's pairs and held-out samples, every cell trained in one batched run and measured on
a schedule; the view correlations."""
from __future__ import annotations

import math
import time
from contextlib import contextmanager
from dataclasses import dataclass

import torch

from ... import workers as W
from ...sim import data as D
from ...sim import views as VW
from ...sim.config import SimConfig
from ...sim.encoder import init_weights
from ...sim.theory import gain
from ...sim.train import train
from .. import draws
from .config import EXTRA_FIT, EXTRA_TEST, STREAM_DECOUPLING, DecouplingConfig, Raw
from .metrics import coverage, measure, ridge_probe


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
        # Each cell's draw plan (data.draw_plan): the pair builders' plans differ only by RandomMask's uniforms at
        # the end, so the longest plan's numbers hold every cell's (checked here, once).
        self.plans = [D.draw_plan(cc, cfg.n_pairs) for cc in self.cell_cfgs]
        self.plan = draws.common_plan(self.cell_cfgs, cfg.n_pairs)
        self._fixed = None

    def __call__(self, t: int, reps: list) -> D.Pairs:
        """The pairs of step t for the whole batch (train runs the grid as one chunk)."""
        R, fresh = self.cfg.R, self.cfg.sampling == "fresh"
        if len(reps) != R * len(self.cell_cfgs):
            raise ValueError(f"the grid trains as one chunk of {R * len(self.cell_cfgs)} replicates, got {len(reps)}")
        if not fresh and self._fixed is not None:
            return self._fixed
        draws = self._draws(extra=t + 1 if fresh else 0)
        parts = [D.pairs_from_draws(cc, self.M, draws[:len(plan)])
                 for cc, plan in zip(self.cell_cfgs, self.plans, strict=True)]
        pairs = D.Pairs(*(torch.cat([getattr(p, f) for p in parts]) for f in ("UX", "UY", "S", "ZX", "ZY")))
        if not fresh:
            self._fixed = pairs
        return pairs

    def _draws(self, extra: int) -> list[torch.Tensor]:
        """The raw random numbers of every replicate at sub-stream `extra`, drawn once for all cells (R, ...) each.

        Every cell draws replicate r's numbers from the same stream (seed, r, train, extra) in the same order, so the
        longest plan's numbers hold every cell's: data.make_pairs per cell would draw them again, once per cell.
        """
        base = self.cell_cfgs[0]
        where = D.draw_device(base, self.M.device)
        return [u.to(self.M.device) for u in draws.raw(base, self.plan, list(range(self.cfg.R)), extra, where)]


def one_view_latents(cfg: SimConfig, n: int, gen: torch.Generator) -> torch.Tensor:
    """Token latents z (n, L, d) of n unaugmented samples, drawn with data.latents_from (Def. 3.1)."""
    d, L = cfg.d, cfg.L
    u = [torch.rand(n, d, generator=gen), torch.rand(n, d, generator=gen), torch.rand(n, d, generator=gen),
         torch.rand(n, L, d, generator=gen), torch.rand(n, L, d, generator=gen)]
    return D.latents_from(cfg, u[0], u[1], [u[2:5], u[2:5]])[2]


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


def run_grids(cfgs: list, workers: int = 0) -> list:
    """run_grid of each config (the main run and the sensitivity run), in worker processes of one thread each when
    `workers` gives several (0: one per core this process may use, one on CUDA). Whole runs, so the same numbers;
    with two cores the shorter run no longer waits for the longer one."""
    _, out = W.pieces(run_grid, [(c,) for c in cfgs], [f"{len(c.cells)} cells x {c.steps} steps" for c in cfgs],
                      workers, on_cuda=cfgs[0].torch_device.type == "cuda", settings="notebook 09")
    return list(out)


def measure_grids(cfg: DecouplingConfig) -> list:
    """Notebook 09's costly work, kept as its measurements: the grid's DecouplingResult, then the sensitivity run's
    (cfg.contrast()) when cfg.contrast_steps; trained side by side on cfg.workers processes (run_grids)."""
    return run_grids([cfg, cfg.contrast()] if cfg.contrast_steps else [cfg], cfg.workers)


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
    def part(c):
        return slice(c * R, (c + 1) * R)
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


def view_correlations(cfg: DecouplingConfig, n: int = 20_000) -> dict:
    """Feature decoupling measured on the views themselves (Wen & Li Sec. 4), balanced cell, one dictionary.

    For each pair type: rho_F = mean_j E[<M_j, U_X><M_j, U_Y>] and rho_perp = the same averaged over the
    directions orthogonal to M, with U summed over tokens. With b = 0 the expected update is linear,
    w <- (1 - eta lambda) w + eta gain E[U_X U_Y^T] w (notebook 01), so a direction grows per step by
    log(1 - eta lambda + eta gain rho): returned as rate_F and rate_perp. Augmentation that decouples the noise
    drives rho_perp to about 0; without it rho_perp = sigma_xi^2 > 0.
    """
    with threads(cfg.threads):
        M = D.make_dictionaries(cfg, [0])
        return {kind: _correlations(cfg.cell_cfg(kind, 1.0), M, n) for kind in cfg.kinds}


def _correlations(cfg: SimConfig, M: torch.Tensor, n: int) -> dict:
    P = D.make_pairs(cfg, M, [0], n=n, purpose=STREAM_DECOUPLING, extra=1)
    A, B = P.UX.sum(2)[0].double(), P.UY.sum(2)[0].double()          # (n, d1)
    fa, fb = A @ M[0].double(), B @ M[0].double()                      # coordinates on the atoms
    rho_f = (fa * fb).mean(0).mean()
    rho_p = ((A * B).sum(-1).mean() - (fa * fb).sum(-1).mean()) / (cfg.d1 - cfg.d)   # trace over M-perp
    def rate(rho):
        return math.log(1 - cfg.lr * cfg.weight_decay + cfg.lr * gain(cfg) * float(rho))
    return {"rho_F": float(rho_f), "rho_perp": float(rho_p), "rate_F": rate(rho_f), "rate_perp": rate(rho_p)}
