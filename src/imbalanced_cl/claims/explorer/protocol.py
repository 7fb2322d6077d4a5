"""Notebook 07's runs: the small model trained at one point (cached), the gallery, the literal-backward contrast."""
from __future__ import annotations

import dataclasses
import functools
import time

import torch

from ...sim.metrics import cosine_matrix
from ...sim.train import train
from .config import ExplorerConfig, Point
from .metrics import Result, mask_effect


@functools.lru_cache(maxsize=256)
def _result_cached(cfg: ExplorerConfig, p: Point) -> Result:
    sim = cfg.at(p)
    t0 = time.perf_counter()
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # a model this small runs fastest on one thread, and others keep the rest
    try:
        run = train(sim)
    finally:
        torch.set_num_threads(threads)
    cos = cosine_matrix(run.W, run.M)          # (R, m, d)
    counts = (cos >= cfg.threshold).sum(1).to(torch.float64).mean(0)
    minority = torch.arange(sim.d) >= sim.d - sim.n_minority  # the last n_minority features (data.eps_vector)
    return Result(p, cos[0].float(), counts, minority, cfg.threshold, time.perf_counter() - t0)


def result(cfg: ExplorerConfig, p: Point | None = None) -> Result:
    """Train the small model at point p (default: the config's own) and measure the alignment. Cached."""
    return _result_cached(cfg, p or cfg.start())


def gallery(cfg: ExplorerConfig) -> list[Result]:
    """Results at every gallery point (the published book's static version of the sliders)."""
    return [result(cfg, p) for p in cfg.gallery_points()]


def literal_contrast(cfg: ExplorerConfig, p: Point) -> dict:
    """Point p and its unpruned twin trained again with prune_backward = "literal" (pruned units get no gradient).

    Under the faithful backward of eq. (5) the mask enters the update only through the softmax weights of the
    logits; this is the same comparison with the mask in the gradient too, so the two show which part matters."""
    lit = cfg.replace(prune_backward="literal")
    return mask_effect([result(lit, dataclasses.replace(p, prune_alpha=0.0)), result(lit, p)])[0]
