"""Appendix A.2 (Figures 1-4): one training per (eps_min, sigma, repeat, pruning), all four metrics from it.

The four figures of App. A.2 (L449-477) share grid points: Figures 1-2 use sigma in {1,3,5}/100 with
eps_min in 0.1..1.0, Figure 3 sigma in {5,7.5,10}/100 and Figure 4 sigma in {3,5,7.5}/100, both with
eps_min in 0.05..0.5. `grid_points` takes the union so every shared point is trained exactly once, and
`run_appendix` trains every (point, repeat) of one pruning arm in batched calls to `train.train`
(replicate dimension = points x repeats). Seeds: the dictionary M and the initialisation W0 depend on
the repeat only (a paired design: within a repeat every eps_min and sigma sees the same network and
feature space), the training stream depends on (repeat, point), and the 5,000 test pairs of a point
use one fixed test seed shared by every repeat and arm (App. A.2: "a fixed test seed").

The metrics themselves are in appendix_metrics.py.
"""
from __future__ import annotations

import collections
from dataclasses import dataclass, field

import numpy as np
import torch

from ..sim import data as D
from ..sim import train
from ..sim.config import SimConfig
from ..sim.encoder import init_weights
from ..validate import check, check_choice, check_float, check_grid, check_int
from . import reexport
from .appendix_metrics import align_count, align_max, eval_metrics


FIGURES = (1, 2, 3, 4)


METRICS = {1: "align_count", 2: "align_max", 3: "test_cos", 4: "test_mse"}


# Direction in which each metric "improves" as App. A.2 claims: counts, max cosine and test cosine
# grow with eps_min (Figs. 1-3), the regression test MSE falls (Fig. 4).
IMPROVES = {1: +1, 2: +1, 3: +1, 4: -1}


_TEST_REPLICATE = 2**20  # replicate id of the fixed test stream (never a real repeat index)


# Every replicate training done by run_appendix, keyed (eps_min, sigma, repeat, prune_alpha): tests
# read it to check that shared grid points are trained exactly once.
TRAINING_LOG: collections.Counter = collections.Counter()


def _grid(lo: float, hi: float, step: float) -> tuple:
    return tuple(round(lo + k * step, 6) for k in range(int(round((hi - lo) / step)) + 1))


@dataclass(frozen=True)
class AppendixConfig(SimConfig):
    """App. A.2 grids, evaluation sizes and verdict settings on top of the shared SimConfig model."""

    d1: int = 500                                     # App. A.2: d1 = 500
    m: int = 30                                       # neurons (workshop experiment, W132: m = 30)
    progress: bool = False                            # tqdm progress bar
    n_pairs: int = 256                                # K, full batch (unstated in A.2)
    steps: int = 300                                  # unstated in A.2
    prune_alpha: float = 0.1                          # ratio of the pruned arm (Alg. 1); control arm uses 0
    chunk: int = 40                                   # replicates (points x repeats) per batched training call
    # --- grids of App. A.2 (L455-471); NSR = sigma^2 d1 ---
    sigmas_12: tuple = (0.01, 0.03, 0.05)             # Figs. 1-2
    eps_12: tuple = _grid(0.1, 1.0, 0.1)               # Figs. 1-2: 0.1 .. 1.0
    sigmas_3: tuple = (0.05, 0.075, 0.1)              # Fig. 3
    sigmas_4: tuple = (0.03, 0.05, 0.075)             # Fig. 4
    eps_34: tuple = _grid(0.05, 0.5, 0.05)             # Figs. 3-4: 0.05 .. 0.5 step 0.05
    repeats: int = 3                                  # repeats per grid point (App. A.2 uses 100: the paper profile)
    pruning: bool = True                              # also train the Algorithm 1 arm (not in the paper)
    # --- metrics ---
    align_threshold: float = 0.3                      # Fig. 1: |cos(w_i, M_minority)| >= 0.3
    n_test: int = 5000                                # Figs. 3-4: test pairs, fixed test seed
    test_seed: int = 2024                             # the fixed test seed
    n_probe_train: int = 1000                         # Fig. 4: pairs the regression head is trained on
    reg_target: str = "latent"                        # Fig. 4 target: "latent" (token-summed z of X, all d) or "minority"
    ridge: float = 1e-6                               # ridge penalty, relative to tr(F^T F)/m
    # --- verdict ---
    boot: int = 2000                                  # bootstrap resamples of the repeats
    boot_seed: int = 0
    rho_holds: float = 0.8                            # holds if the interval of the rank correlation lies beyond this
    threads: int = 0                                  # torch CPU threads while computing (0: leave torch's default)

    def validate(self) -> None:
        """SimConfig checks plus the grids, sizes and verdict settings of App. A.2."""
        super().validate()
        check_int("n_minority", self.n_minority, 1, self.d)
        check_choice("eps_profile", self.eps_profile, ("two_level",))
        eps_ok = lambda name, v: check_float(name, v, 0.0, min(1.0, self.eps_max), lo_open=True)
        sig_ok = lambda name, v: check_float(name, v, 0.0)
        for name in ("eps_12", "eps_34"):
            check_grid(name, getattr(self, name), eps_ok)
        for name in ("sigmas_12", "sigmas_3", "sigmas_4"):
            check_grid(name, getattr(self, name), sig_ok)
        check_int("repeats", self.repeats, 1)
        check("pruning", self.pruning, isinstance(self.pruning, bool), "True or False")
        if self.pruning:
            check("prune_alpha", self.prune_alpha, self.prune_alpha > 0,
                  "a number in (0, 1) when pruning=True")
        check_float("align_threshold", self.align_threshold, 0.0, 1.0)
        check_int("n_test", self.n_test, 2)
        check_int("test_seed", self.test_seed, 0, 2**31 - 1)
        check_int("n_probe_train", self.n_probe_train, 2)
        check_choice("reg_target", self.reg_target, ("latent", "minority"))
        check_float("ridge", self.ridge, 0.0)
        check_int("boot", self.boot, 1)
        check_int("boot_seed", self.boot_seed, 0, 2**31 - 1)
        check_float("rho_holds", self.rho_holds, 0.0, 1.0, lo_open=True)
        check_int("threads", self.threads, 0, 256)

    # --- derived ---
    @property
    def arms(self) -> tuple:
        """Pruning ratios trained: 0 (vanilla) and, with pruning=True, prune_alpha (Alg. 1)."""
        return (0.0, float(self.prune_alpha)) if self.pruning else (0.0,)

    def figure_grid(self, fig: int) -> tuple[tuple, tuple]:
        """(sigmas, eps_min values) of one figure of App. A.2."""
        check_choice("fig", fig, FIGURES)
        sig = {1: self.sigmas_12, 2: self.sigmas_12, 3: self.sigmas_3, 4: self.sigmas_4}[fig]
        return tuple(_key(s) for s in sig), tuple(_key(e) for e in (self.eps_12 if fig <= 2 else self.eps_34))

    def point_cfg(self, eps: float, sigma: float, alpha: float = 0.0) -> SimConfig:
        """The SimConfig of one grid point and pruning arm (only eps_min, sigma_xi, prune_alpha vary)."""
        return self.sim(eps_min=eps, sigma_xi=sigma, prune_alpha=alpha, chunk=0)

    def nsr_of(self, sigma: float) -> float:
        """NSR = sigma^2 d1 (App. A.2)."""
        return sigma ** 2 * self.d1


def _key(x: float) -> float:
    return round(float(x), 6)


def point_code(eps: float, sigma: float) -> int:
    """A stable integer naming a grid point, used as the `extra` seed word of its streams."""
    return int(round(eps * 1e5)) * 10**7 + int(round(sigma * 1e6))


def grid_points(cfg: AppendixConfig) -> list[tuple[float, float]]:
    """The union of the four figures' (eps_min, sigma) points, sorted: each is trained once per repeat."""
    pts = set()
    for fig in FIGURES:
        sig, eps = cfg.figure_grid(fig)
        pts.update((e, s) for s in sig for e in eps)
    return sorted(pts, key=lambda p: (p[1], p[0]))


def reg_target(Z: torch.Tensor, cfg: AppendixConfig) -> torch.Tensor:
    """Fig. 4 target: the token-summed latent of X (all d coordinates) or only its minority coordinates."""
    return Z if cfg.reg_target == "latent" else Z[..., cfg.d - cfg.n_minority:]


def _fixed_test(pc: SimConfig, cfg: AppendixConfig, code: int):
    """Latents and noise of a point's 5,000 test pairs, from the fixed test seed (shared by all repeats)."""
    gen = D.generator(cfg.test_seed, _TEST_REPLICATE, D.STREAM_TEST, 2 * code)
    _, _, zx, zy = D.sample_latents(pc, cfg.n_test, gen)
    xix = pc.sigma_xi * torch.randn(cfg.n_test, pc.L, pc.d1, generator=gen)
    xiy = pc.sigma_xi * torch.randn(cfg.n_test, pc.L, pc.d1, generator=gen)
    return zx, zy, xix, xiy


def _start(cfg: AppendixConfig, items: list) -> train.Run:
    """A step-0 Run holding the dictionary, initial weights and training pairs of a batch of (point, repeat)."""
    Ms, W0s, parts = [], [], []
    for (eps, sig), rep in items:
        pc = cfg.point_cfg(eps, sig)
        M = D.make_dictionaries(pc, [rep])            # depends on the repeat only (paired design)
        Ms.append(M)
        W0s.append(init_weights(pc, [rep]))
        parts.append(D.make_pairs(pc, M, [rep], extra=point_code(eps, sig)))
    M, W0 = torch.cat(Ms), torch.cat(W0s)
    pairs = D.Pairs(*(torch.cat([getattr(p, f) for p in parts]) for f in ("UX", "UY", "S", "ZX", "ZY")))
    base = cfg.point_cfg(*items[0][0])
    return train.Run(base, list(range(len(items))), M, W0, torch.full((len(items),), -1, dtype=torch.long),
                     0, train.History(), pairs, W0)


def _fresh_sampler(cfg: AppendixConfig, start: train.Run, items: list):
    """sampler(t, reps) for train.train: K fresh pairs per step for each batched (point, repeat), drawn with that
    point's eps_min and sigma from its own sub-stream (point, t), so every arm of a repeat sees the same pairs."""
    def sample(t: int, reps: list) -> D.Pairs:
        parts = []
        for k in reps:
            (eps, sig), rep = items[k]
            pc = cfg.point_cfg(eps, sig)
            parts.append(D.make_pairs(pc, start.M[k:k + 1], [rep], extra=point_code(eps, sig) * 2**20 + t + 1))
        return D.Pairs(*(torch.cat([getattr(p, f) for p in parts]) for f in ("UX", "UY", "S", "ZX", "ZY")))
    return sample


def _train_arm(cfg: AppendixConfig, start: train.Run, items: list, alpha: float) -> train.Run:
    """Train one pruning arm of a batch in one batched call (the loop only reads shared settings)."""
    arm = cfg.point_cfg(*items[0][0], alpha=alpha)
    for (eps, sig), rep in items:
        TRAINING_LOG[(eps, sig, rep, alpha)] += 1
    sampler = _fresh_sampler(cfg, start, items) if cfg.sampling == "fresh" else None
    return train.train(arm, resume=start, sampler=sampler)


@dataclass
class AppendixResult:
    """All four metrics for every (arm, point, repeat): values[name] has shape (arms, points, repeats)."""

    cfg: AppendixConfig
    points: list
    values: dict
    train_calls: int = 0                      # batched train.train calls
    trained: collections.Counter = field(default_factory=collections.Counter)
    seconds: float = 0.0
    replicate_steps: int = 0                  # sum over trainings of steps (the unit of work)
    t1_mean: float = float("nan")             # mean T1 over trainings (never reached counts as steps: all steps linear)

    def curves(self, fig: int, arm: int, metric: str | None = None) -> tuple[tuple, tuple, np.ndarray]:
        """(sigmas, eps, array (n_sigma, n_eps, repeats)) of one figure and pruning arm (or another metric on its grid)."""
        sig, eps = self.cfg.figure_grid(fig)
        idx = {p: k for k, p in enumerate(self.points)}
        v = self.values[metric or METRICS[fig]][arm]
        out = np.stack([np.stack([v[idx[(e, s)]] for e in eps]) for s in sig])
        return sig, eps, out


def run_appendix(cfg: AppendixConfig) -> AppendixResult:
    """Train every (point, repeat) once per pruning arm, in batches of cfg.chunk, and measure Figs. 1-4."""
    prev = torch.get_num_threads()
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    try:
        return _run(cfg)
    finally:
        torch.set_num_threads(prev)


def _run(cfg: AppendixConfig) -> AppendixResult:
    import time
    t0 = time.time()
    points = grid_points(cfg)
    items = [(p, r) for p in points for r in range(cfg.repeats)]  # grouped by point: test set reused
    size = cfg.chunk or len(items)
    vals = {name: np.full((len(cfg.arms), len(points), cfg.repeats), np.nan)
            for name in (*METRICS.values(), "test_nmse", "test_nmse_minority")}
    pidx = {p: k for k, p in enumerate(points)}
    before = TRAINING_LOG.copy()
    calls, test_cache, t1s = 0, {}, []
    for lo in range(0, len(items), size):
        batch = items[lo:lo + size]
        start = _start(cfg, batch)
        runs = []
        for alpha in cfg.arms:
            runs.append(_train_arm(cfg, start, batch, alpha))
            calls += 1
        for a, run in enumerate(runs):
            t1s.append(torch.where(run.T1 >= 0, run.T1, torch.full_like(run.T1, cfg.steps)).float())
            k = [pidx[p] for p, _ in batch], [r for _, r in batch]
            vals["align_count"][a][k] = align_count(run.W, run.M, cfg.n_minority, cfg.align_threshold).numpy()
            vals["align_max"][a][k] = align_max(run.W, run.M, cfg.n_minority).numpy()
        biases = [run.bias for run in runs]
        for j, ((eps, sig), rep) in enumerate(batch):
            pc, code = cfg.point_cfg(eps, sig), point_code(eps, sig)
            if (eps, sig) not in test_cache:
                test_cache = {(eps, sig): _fixed_test(pc, cfg, code)}  # keep one point: bounded memory
            zx, zy, xix, xiy = test_cache[(eps, sig)]
            M = start.M[j]
            UX, UY = D.attention(zx @ M.T + xix, pc), D.attention(zy @ M.T + xiy, pc)
            probe = D.make_pairs(pc, M[None], [rep], n=cfg.n_probe_train, purpose=D.STREAM_TEST,
                                 extra=2 * code + 1)
            Ztr, Zte = reg_target(probe.ZX[0], cfg), reg_target(zx.sum(1), cfg)
            for a, run in enumerate(runs):
                cos, mse, nmse, nmse_min = eval_metrics(run.W[j], biases[a][j], UX, UY, probe.UX[0], Ztr, Zte,
                                                        cfg.ridge, last=min(cfg.n_minority, Zte.shape[-1]))
                vals["test_cos"][a, pidx[(eps, sig)], rep] = cos
                vals["test_mse"][a, pidx[(eps, sig)], rep] = mse
                vals["test_nmse"][a, pidx[(eps, sig)], rep] = nmse
                vals["test_nmse_minority"][a, pidx[(eps, sig)], rep] = nmse_min
    trained = TRAINING_LOG - before
    return AppendixResult(cfg, points, vals, calls, trained, time.time() - t0,
                          len(items) * len(cfg.arms) * cfg.steps, float(torch.cat(t1s).mean()))


def flops_per_training(cfg: AppendixConfig, t1: int) -> float:
    """FLOPs of one replicate's training: linear steps before T1, token-level (BReLU) steps after (train.step_flops)."""
    sim = cfg.sim(R=1)
    t1 = min(max(t1, 0), cfg.steps)
    return t1 * train.step_flops(sim, 1, True) + (cfg.steps - t1) * train.step_flops(sim, 1, False)


# The reports and verdict rows of a finished run live in appendix_verdicts.py (which imports this module); their
# names are reachable from here too, resolved on first use so that either module can be imported first.
_VERDICT_NAMES = ("FIG_CLAIMS", "diagnostic_report", "trend_report", "verdict_rows")
__getattr__ = reexport(__name__, f"{__package__}.appendix_verdicts", _VERDICT_NAMES)
