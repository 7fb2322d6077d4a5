"""Notebook 05's runs: every (eps_min, sigma, repeat) point trained once per pruning arm, in batches, and measured
for Figs. 1-4."""
from __future__ import annotations

import collections
from dataclasses import dataclass, field

import numpy as np
import torch

from ... import workers as W
from ...sim import data as D
from ...sim import runtime, train
from ...sim.config import SimConfig
from ...sim.encoder import init_weights
from ...sim.prune import Masker
from .config import METRICS, AppendixConfig, grid_points
from .metrics import align_count, align_max, eval_metrics

_TEST_REPLICATE = 2**20  # replicate id of the fixed test stream (never a real repeat index)


# Every replicate training done by run_appendix, keyed (eps_min, sigma, repeat, prune_alpha): tests
# read it to check that shared grid points are trained exactly once.
TRAINING_LOG: collections.Counter = collections.Counter()


def point_code(eps: float, sigma: float) -> int:
    """A stable integer naming a grid point, used as the `extra` seed word of its streams."""
    return int(round(eps * 1e5)) * 10**7 + int(round(sigma * 1e6))


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


def _fresh_sampler(cfg: AppendixConfig, start: train.Run, items: list, rows: list):
    """sampler(t, rows) for train.train: K fresh pairs per step for each batched (point, repeat), drawn with that
    point's eps_min and sigma from its own sub-stream (point, t), so every arm of a repeat sees the same pairs.

    `rows[k]` is the item index of training row k; the arms of an item sit in adjacent rows, so a chunk's pairs are
    drawn once per item and repeated for its arms (the very numbers a separate call per arm would draw).
    """
    def sample(t: int, reps: list) -> D.Pairs:
        drawn = list(dict.fromkeys(rows[k] for k in reps))
        parts = []
        for i in drawn:
            (eps, sig), rep = items[i]
            pc = cfg.point_cfg(eps, sig)
            parts.append(D.make_pairs(pc, start.M[i:i + 1], [rep], extra=point_code(eps, sig) * 2**20 + t + 1))
        # One copy into row order: a cat and then a gather copied the largest tensors (UX, UY) twice.
        order = [parts[drawn.index(rows[k])] for k in reps]
        return D.Pairs(*(torch.cat([getattr(p, f) for p in order]) for f in ("UX", "UY", "S", "ZX", "ZY")))
    return sample


def _rows(run: train.Run, idx: list, cfg: SimConfig | None = None) -> train.Run:
    """The training rows idx of a run (weights, dictionary, data and T1; the history is not kept), under `cfg`."""
    p = run.pairs
    pairs = D.Pairs(p.UX[idx], p.UY[idx], p.S[idx], p.ZX[idx], p.ZY[idx])
    return train.Run(cfg or run.cfg, list(range(len(idx))), run.M[idx],
                     run.W[idx], run.T1[idx], run.step, train.History(), pairs, run.W0[idx])


def _train_arms(cfg: AppendixConfig, start: train.Run, items: list) -> list[train.Run]:
    """Train every pruning arm of a batch in one batched call and return one run per arm.

    Row k trains item k // arms under arm k % arms: the arms of an item share its step-0 weights and, with fresh
    pairs, its draws (made once, _fresh_sampler); each row carries its own pruning ratio (prune.Masker), so the
    vanilla rows keep every neuron and the pruned rows follow Algorithm 1.
    """
    arms = cfg.arms
    rows = [i for i in range(len(items)) for _ in arms]
    for (eps, sig), rep in items:
        for alpha in arms:
            TRAINING_LOG[(eps, sig, rep, alpha)] += 1
    base = cfg.point_cfg(*items[0][0])   # the masker, not base.prune_alpha, sets each row's ratio
    both = _rows(start, rows)
    masker = Masker([a for _ in items for a in arms], [False] * len(rows), [False] * len(rows), list(range(len(rows))),
                    base.seed, base.prune_start, base.prune_every, base.prune_unit)
    sampler = _fresh_sampler(cfg, start, items, rows) if cfg.sampling == "fresh" else None
    out = train.train(base, resume=both, sampler=sampler, masker=masker)
    return [_rows(out, list(range(a, len(rows), len(arms))), cfg.point_cfg(*items[0][0], alpha=alpha))
            for a, alpha in enumerate(arms)]


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
    workers: int = 1                          # processes that trained the batches (workers.plan)

    def curves(self, fig: int, arm: int, metric: str | None = None) -> tuple[tuple, tuple, np.ndarray]:
        """(sigmas, eps, array (n_sigma, n_eps, repeats)) of one figure and pruning arm (or another metric on its
        grid)."""
        sig, eps = self.cfg.figure_grid(fig)
        idx = {p: k for k, p in enumerate(self.points)}
        v = self.values[metric or METRICS[fig]][arm]
        out = np.stack([np.stack([v[idx[(e, s)]] for e in eps]) for s in sig])
        return sig, eps, out


@dataclass
class AppendixMeasures:
    """What notebook 05 measures, without its config (a campaign stage: judged again under today's config):
    values[name] (arms, points, repeats); trained (arms, points, repeats), trainings of each (arm, point, repeat)."""

    points: list
    values: dict
    trained: np.ndarray
    train_calls: int
    seconds: float
    replicate_steps: int
    t1_mean: float
    workers: int


def measure_appendix(cfg: AppendixConfig, memo=None) -> AppendixMeasures:
    """Notebook 05's costly work (run_appendix: every (point, repeat) under every arm), kept as its measurements."""
    res = run_appendix(cfg, memo)
    trained = np.zeros((len(cfg.arms), len(res.points), cfg.repeats), dtype=np.int32)
    pidx = {p: k for k, p in enumerate(res.points)}
    for (eps, sig, rep, alpha), n in res.trained.items():
        trained[cfg.arms.index(alpha), pidx[(eps, sig)], rep] = n
    return AppendixMeasures(res.points, res.values, trained, res.train_calls, res.seconds, res.replicate_steps,
                            res.t1_mean, res.workers)


def appendix_result(cfg: AppendixConfig, m: AppendixMeasures) -> AppendixResult:
    """The AppendixResult of measurements (measure_appendix) under a config: what the figures and verdicts read."""
    trained = collections.Counter({(eps, sig, rep, alpha): int(m.trained[a, k, rep])
                                   for a, alpha in enumerate(cfg.arms) for k, (eps, sig) in enumerate(m.points)
                                   for rep in range(m.trained.shape[-1]) if m.trained[a, k, rep]})
    return AppendixResult(cfg, list(m.points), m.values, m.train_calls, trained, m.seconds, m.replicate_steps,
                          m.t1_mean, m.workers)


def run_appendix(cfg: AppendixConfig, memo=None) -> AppendixResult:
    """Train every (point, repeat) once per pruning arm, in batches of cfg.chunk, and measure Figs. 1-4.

    `memo(name, fn)` returns fn() (by default it just calls it); a campaign unit passes one that keeps each batch's
    measurements on disk (campaign.checkpoint.memo), so that an interrupted paper-scale run resumes from the batches it
    finished. A batch's numbers do not depend on the others: each draws from its own (point, repeat) streams, so the
    batches run in worker processes when cfg.workers (0: workers.plan) gives several.
    """
    prev = torch.get_num_threads()
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    try:
        return _run(cfg, memo)
    finally:
        torch.set_num_threads(prev)


def _measure_batch(cfg: AppendixConfig, batch: list, test_cache: dict) -> dict:
    """Train one batch of (point, repeat) under every arm and measure it: {"values": {metric: (arms, len(batch))},
    "t1": [(len(batch),) per arm], "trained": Counter}. `test_cache` keeps the last point's test set between calls."""
    before = TRAINING_LOG.copy()
    start = _start(cfg, batch)
    runs = _train_arms(cfg, start, batch)
    vals = {name: np.full((len(cfg.arms), len(batch)), np.nan)
            for name in (*METRICS.values(), "test_nmse", "test_nmse_minority")}
    t1 = [torch.where(run.T1 >= 0, run.T1, torch.full_like(run.T1, cfg.steps)).float() for run in runs]
    for a, run in enumerate(runs):
        vals["align_count"][a] = align_count(run.W, run.M, cfg.n_minority, cfg.align_threshold).numpy()
        vals["align_max"][a] = align_max(run.W, run.M, cfg.n_minority).numpy()
    biases = [run.bias for run in runs]
    for j, ((eps, sig), rep) in enumerate(batch):
        pc, code = cfg.point_cfg(eps, sig), point_code(eps, sig)
        if (eps, sig) not in test_cache:
            test_cache.clear()                       # keep one point: bounded memory
            test_cache[(eps, sig)] = _fixed_test(pc, cfg, code)
        zx, zy, xix, xiy = test_cache[(eps, sig)]
        M = start.M[j]
        UX, UY = D.attention(zx @ M.T + xix, pc), D.attention(zy @ M.T + xiy, pc)
        probe = D.make_pairs(pc, M[None], [rep], n=cfg.n_probe_train, purpose=D.STREAM_TEST, extra=2 * code + 1)
        Ztr, Zte = reg_target(probe.ZX[0], cfg), reg_target(zx.sum(1), cfg)
        for a, run in enumerate(runs):
            cos, mse, nmse, nmse_min = eval_metrics(run.W[j], biases[a][j], UX, UY, probe.UX[0], Ztr, Zte,
                                                    cfg.ridge, last=min(cfg.n_minority, Zte.shape[-1]))
            for name, v in (("test_cos", cos), ("test_mse", mse), ("test_nmse", nmse),
                            ("test_nmse_minority", nmse_min)):
                vals[name][a, j] = v
    return {"values": vals, "t1": t1, "trained": TRAINING_LOG - before}


def _run(cfg: AppendixConfig, memo) -> AppendixResult:
    import time
    t0 = time.time()
    points = grid_points(cfg)
    items = [(p, r) for p in points for r in range(cfg.repeats)]  # grouped by point: test set reused
    size = cfg.chunk or len(items)
    batches = [(f"batch{lo // size:04d}", items[lo:lo + size]) for lo in range(0, len(items), size)]
    vals = {name: np.full((len(cfg.arms), len(points), cfg.repeats), np.nan)
            for name in (*METRICS.values(), "test_nmse", "test_nmse_minority")}
    pidx = {p: k for k, p in enumerate(points)}
    # The sampler draws each item's pairs from its own stream, one at a time, so one process keeps about one core
    # busy: the batches go to worker processes of one thread each (workers.pieces; a batch's numbers do not depend
    # on where it runs), and those an interrupted campaign unit kept (memo) are read back.
    cache: dict = {}                            # the last point's test set, shared by the batches run here
    procs, parts = W.pieces(_measure_batch, [(cfg, batch, cache) for _, batch in batches], [n for n, _ in batches],
                            cfg.workers, memo, cfg.torch_device.type == "cuda",
                            f"notebook 05, d1 {cfg.d1}, m {cfg.m}, K {cfg.n_pairs}, {cfg.steps} steps")
    t1s, trained = [], collections.Counter()
    for (_, batch), part in zip(batches, parts, strict=True):
        k = [pidx[p] for p, _ in batch], [r for _, r in batch]
        for name, v in part["values"].items():
            for a in range(len(cfg.arms)):
                vals[name][a][k] = v[a]
        t1s += part["t1"]
        trained += part["trained"]
    return AppendixResult(cfg, points, vals, len(batches), trained, time.time() - t0,
                          len(items) * len(cfg.arms) * cfg.steps, float(torch.cat(t1s).mean()), procs)


def flops_per_training(cfg: AppendixConfig, t1: int) -> float:
    """FLOPs of one replicate's training: linear steps before T1, token-level (BReLU) steps after
    (runtime.step_flops)."""
    sim = cfg.sim(R=1)
    t1 = min(max(t1, 0), cfg.steps)
    return t1 * runtime.step_flops(sim, 1, True) + (cfg.steps - t1) * runtime.step_flops(sim, 1, False)
