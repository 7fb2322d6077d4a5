"""Notebook 07's configuration: a slider setting (Point) and the small model, gallery grids and slider ranges around
it."""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import ClassVar

from ...sim.config import MODEL_PARTS, ModelConfig, SimConfig
from ...validate import check, check_float, check_grid, check_int


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
class ExplorerProtocol:
    """Notebook 07's sliders and gallery: nsr, gallery_eps_min, gallery_nsr, gallery_alpha, eps_min_range, nsr_range,
    alpha_range, d_range, m_range."""

    ROLE: ClassVar[str] = "protocol"
    # the NSR slider sets sigma_xi = sqrt(nsr / d1); this is its starting value
    nsr: float = 0.45
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

    def validate(self, cfg) -> None:
        """The slider ranges, and every gallery point and the starting point inside them."""
        check_float("nsr", self.nsr, 0.0)
        for name, lo, hi in (("eps_min_range", 0.0, cfg.eps_max), ("nsr_range", 0.0, math.inf),
                             ("alpha_range", 0.0, 0.99), ("d_range", 3, cfg.d1), ("m_range", 1, math.inf)):
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
        cfg.check_point(cfg.start())


@dataclass(frozen=True)
class ExplorerJudging:
    """Notebook 07's alignment threshold: threshold."""

    ROLE: ClassVar[str] = "judging"
    threshold: float = 0.3              # App. A.2: a neuron is aligned with M_j when |cos(w_i, M_j)| >= 0.3

    def validate(self, cfg) -> None:
        """The threshold's range."""
        check_float("threshold", self.threshold, 0.0, 1.0, lo_open=True, hi_open=True)


class ExplorerConfig(ModelConfig):
    """Notebook 07: defaults of a small, fast model (seconds per point on 2 CPU cores) and the gallery."""

    PARTS = {**MODEL_PARTS, "protocol": ExplorerProtocol, "judging": ExplorerJudging}
    # small model: the workshop's d = 9 with 4 minority features, m = 30
    DEFAULTS = dict(
        d=9,                             # number of features (dictionary atoms): 9, as in the workshop's figure
        d1=50,                           # ambient dimension, d1 >= d: small, for seconds per point
        m=30,                            # neurons: 30, as in the workshop's figure
        n_minority=4,                    # how many features are minority (the last ones): 4 of 9, as in the workshop
        eps_min=0.3,                     # frequency of minority features: the eps_min slider's starting value
        n_pairs=256,                     # K: pairs per step (eq. 3): fewer, for seconds per point
        steps=150,                       # training steps: few, for seconds per point
        R=1,                             # independent replicates: one, a point shows one network
        record_every=50,                 # history is kept every this many steps (and at the last step)
        progress=False,                  # tqdm progress bar: off, the gallery trains many points
    )

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
