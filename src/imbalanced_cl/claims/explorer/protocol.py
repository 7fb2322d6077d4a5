"""The interactive explorer: a small model trained on the fly at one slider setting, and a static gallery.

A *point* is one setting of the five sliders (eps_min, NSR, pruning ratio alpha, d, m). `ExplorerConfig`
holds everything else (a small SimConfig: short training, few pairs) plus the gallery grids and the slider
ranges. `result(cfg, point)` trains once and measures the neuron x feature alignment
|cos(w_i, M_j)| (App. A.2, Experiments 1-2) and, per feature, how many neurons are aligned above the
threshold. The live notebook (book/plots_explorer.live) and the static gallery of the published book (`gallery(cfg)`)
call the same functions, so the HTML shows exactly what the sliders would show at those settings.
"""
from __future__ import annotations

import dataclasses
import functools
import itertools
import math
import time
from dataclasses import dataclass

import torch

from ..sim.config import SimConfig
from ..validate import check, check_float, check_grid, check_int
from ..sim.metrics import cosine_matrix
from ..sim.train import train


def _num(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


@dataclass(frozen=True)
class Point:
    """One setting of the sliders. Validated against the explorer's ranges by `ExplorerConfig.check_point`."""

    eps_min: float
    nsr: float          # noise-to-signal ratio sigma_xi^2 * d1 (App. A.2)
    prune_alpha: float  # fraction of neurons pruned in the forward pass (Algorithm 1)
    d: int
    m: int

    def label(self) -> str:
        """Short text for panel titles."""
        return f"eps_min={self.eps_min:g}, NSR={self.nsr:g}, alpha={self.prune_alpha:g}, d={self.d}, m={self.m}"


@dataclass(frozen=True)
class ExplorerConfig(SimConfig):
    """Notebook 07: defaults of a small, fast model (seconds per point on 2 CPU cores) and the gallery."""

    # small model (overrides of SimConfig defaults): the workshop's d = 9 with 4 minority features, m = 30
    d: int = 9
    d1: int = 50
    m: int = 30
    n_minority: int = 4
    eps_min: float = 0.3
    n_pairs: int = 256
    steps: int = 150
    R: int = 1
    record_every: int = 50
    progress: bool = False
    # the NSR slider sets sigma_xi = sqrt(nsr / d1); this is its starting value
    nsr: float = 0.45
    threshold: float = 0.3              # App. A.2: a neuron is aligned with M_j when |cos(w_i, M_j)| >= 0.3
    # static gallery for the published book: every combination of these values (d, m at the defaults)
    gallery_eps_min: tuple = (0.1, 0.3, 1.0)
    gallery_nsr: tuple = (0.45,)
    gallery_alpha: tuple = (0.0, 0.5)
    # slider ranges (inclusive)
    eps_min_range: tuple = (0.05, 1.0)
    nsr_range: tuple = (0.0, 3.0)
    alpha_range: tuple = (0.0, 0.8)
    d_range: tuple = (5, 20)
    m_range: tuple = (8, 60)

    def validate(self) -> None:
        """SimConfig's checks, the slider ranges, and every gallery point inside them."""
        super().validate()
        check_float("nsr", self.nsr, 0.0)
        check_float("threshold", self.threshold, 0.0, 1.0, lo_open=True, hi_open=True)
        for name, lo, hi in (("eps_min_range", 0.0, self.eps_max), ("nsr_range", 0.0, math.inf),
                             ("alpha_range", 0.0, 0.99), ("d_range", 3, self.d1), ("m_range", 1, math.inf)):
            v = getattr(self, name)
            check(name, v, isinstance(v, (tuple, list)) and len(v) == 2 and all(map(_num, v))
                  and lo <= v[0] < v[1] <= hi, f"a pair (low, high) with {lo} <= low < high <= {hi}")
        check("eps_min_range", self.eps_min_range, self.eps_min_range[0] > 0, "a low end above 0")
        check_grid("gallery_eps_min", self.gallery_eps_min,
                   lambda n, v: check_float(n, v, self.eps_min_range[0], self.eps_min_range[1]))
        check_grid("gallery_nsr", self.gallery_nsr,
                   lambda n, v: check_float(n, v, self.nsr_range[0], self.nsr_range[1]))
        check_grid("gallery_alpha", self.gallery_alpha,
                   lambda n, v: check_float(n, v, self.alpha_range[0], self.alpha_range[1]))
        self.check_point(self.start())

    # --- points ---
    def start(self) -> Point:
        """The sliders' starting position: this config's own eps_min, nsr, prune_alpha, d, m."""
        return Point(self.eps_min, self.nsr, self.prune_alpha, self.d, self.m)

    def check_point(self, p: Point) -> None:
        """Raise ParameterError naming the slider that is out of its range."""
        check_float("eps_min", p.eps_min, *self.eps_min_range)
        check_float("nsr", p.nsr, *self.nsr_range)
        check_float("prune_alpha", p.prune_alpha, *self.alpha_range)
        check_int("d", p.d, *self.d_range)
        check_int("m", p.m, *self.m_range)
        check("d", p.d, p.d > self.n_minority, f"an integer > n_minority ({self.n_minority})")

    def gallery_points(self) -> list[Point]:
        """Every combination of the gallery grids, at the default d and m."""
        return [Point(e, n, a, self.d, self.m)
                for n, a, e in itertools.product(self.gallery_nsr, self.gallery_alpha, self.gallery_eps_min)]

    def at(self, p: Point) -> SimConfig:
        """The SimConfig trained at point p (validated again)."""
        self.check_point(p)
        return self.sim(eps_min=min(p.eps_min, self.eps_max), sigma_xi=math.sqrt(p.nsr / self.d1),
                        prune_alpha=p.prune_alpha, d=p.d, m=p.m)


@dataclass
class Result:
    """What one point shows: the alignment matrix of replicate 0 and per-feature aligned-neuron counts."""

    point: Point
    cos: torch.Tensor          # (m, d) |cos(w_i, M_j)| of replicate 0
    counts: torch.Tensor       # (d,) neurons with |cos| >= threshold, mean over replicates
    minority: torch.Tensor     # (d,) bool: feature j is one of the n_minority features (eps_j = eps_min)
    threshold: float
    seconds: float

    @property
    def minority_count(self) -> float:
        """Mean, over minority features, of the number of neurons aligned with that feature."""
        return float(self.counts[self.minority].mean()) if bool(self.minority.any()) else float("nan")

    def panel(self) -> torch.Tensor:
        """cos²(w_i, M_j) with the neurons in neuron_order: the heatmap as drawn, (m, d)."""
        return self.cos[neuron_order(self.cos)].pow(2)

    @property
    def majority_count(self) -> float:
        """Mean, over majority features, of the number of neurons aligned with that feature."""
        return float(self.counts[~self.minority].mean()) if bool((~self.minority).any()) else float("nan")


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


def neuron_order(cos: torch.Tensor) -> torch.Tensor:
    """Neurons sorted by their best-aligned feature, then by how strongly: the heatmap becomes block-diagonal."""
    best, arg = cos.max(1)
    return torch.tensor(sorted(range(cos.shape[0]), key=lambda i: (int(arg[i]), -float(best[i]))))


def gallery(cfg: ExplorerConfig) -> list[Result]:
    """Results at every gallery point (the published book's static version of the sliders)."""
    return [result(cfg, p) for p in cfg.gallery_points()]


def mask_effect(results: list[Result]) -> list[dict]:
    """Each pruned gallery point against its unpruned twin (same eps_min, NSR, d, m, seed): how much the mask changed.

    max_dcos2 is the largest change of cos²(w_i, M_j) over neurons and features, neuron i against neuron i (the twins
    share the initialisation, so index i is the same neuron; the drawn panels are each sorted by their own order,
    and a small change that swaps two neurons there would show as a large cell difference);
    d_minority / d_majority are the changes of the mean aligned-neuron counts."""
    base = {(r.point.eps_min, r.point.nsr, r.point.d, r.point.m): r for r in results if r.point.prune_alpha == 0}
    out = []
    for r in results:
        twin = base.get((r.point.eps_min, r.point.nsr, r.point.d, r.point.m))
        if r.point.prune_alpha == 0 or twin is None:
            continue
        out.append({"point": r.point, "max_dcos2": float((r.cos.pow(2) - twin.cos.pow(2)).abs().max()),
                    "d_minority": r.minority_count - twin.minority_count,
                    "d_majority": r.majority_count - twin.majority_count})
    return out


def literal_contrast(cfg: ExplorerConfig, p: Point) -> dict:
    """Point p and its unpruned twin trained again with prune_backward = "literal" (pruned units get no gradient).

    Under the faithful backward of eq. (5) the mask enters the update only through the softmax weights of the
    logits; this is the same comparison with the mask in the gradient too, so the two show which part matters."""
    lit = dataclasses.replace(cfg, prune_backward="literal")
    return mask_effect([result(lit, dataclasses.replace(p, prune_alpha=0.0)), result(lit, p)])[0]
