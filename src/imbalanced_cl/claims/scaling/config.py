"""Notebook 03's configuration: the grid over eps_min/eps_max and d, the dominant-set threshold, the tolerances."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ...sim.config import MODEL_PARTS, ModelConfig, SimConfig
from ...validate import check_float, check_grid, check_int
from ..census import sets as CS


@dataclass(frozen=True)
class ScalingProtocol:
    """Notebook 03's training grid: ratios, ds."""

    ROLE: ClassVar[str] = "protocol"
    ratios: tuple = (1.0, 0.7, 0.5, 0.3)   # eps_min/eps_max grid, each in (0, 1]
    ds: tuple = (10, 20, 40)               # numbers of features, each >= 2 (and <= d1)

    def validate(self, cfg) -> None:
        """The grids, every d within the model's d1."""
        check_grid("ratios", self.ratios, CS.check_ratio)
        check_grid("ds", self.ds, CS.check_d)
        for k, d in enumerate(self.ds):
            check_int(f"ds[{k}]", d, 3, cfg.d1)


@dataclass(frozen=True)
class ScalingJudging:
    """Notebook 03's definitions and tolerances, fixed before the run (book/methods.md): ni_rel, gamma, tol_ni,
    precision_min, forall_min, tol_tracking, tol_A, tol_F, tol_share."""

    ROLE: ClassVar[str] = "judging"
    ni_rel: float = 0.5    # empirical N_i: j with |<w_i,M_j>| >= ni_rel * max_j' |<w_i,M_j'>|
    gamma: float = 0.1     # eq. (28) constant for the definitional N_i at initialisation
    tol_ni: float = 0.1                   # |N_i| exponent bound (eq. 14): band (-inf, 1 - rho² + tol_ni]
    precision_min: float = 0.8            # final-vs-initial set precision (App. A.1): holds if its interval is ≥ this
    forall_min: float = 0.9               # a "for all" bound holds if the Wilson interval of its share is ≥ this
    tol_tracking: float = 0.2             # band 1 ± tol_tracking for the slope of the |N_i| exponent on 1 - rho^2
    tol_A: float = 0.2                    # band 1 ± tol_A for the log-log slope of A_min/A_maj on rho (eq. 13)
    tol_F: float = 0.3                    # band 2 ± tol_F for the log-log slope of F_min/F_maj on rho (eqs. 12-13)
    tol_share: float = 0.1                # Lemma B.1's push: a share row (precision, "for all") moving less meets it

    def validate(self, cfg) -> None:
        """The definitions' and tolerances' ranges."""
        check_float("ni_rel", self.ni_rel, 0.0, 1.0, lo_open=True)
        check_float("gamma", self.gamma, 0.0, 1.0, hi_open=True)
        for name in ("tol_ni", "tol_tracking", "tol_A", "tol_F", "tol_share"):
            check_float(name, getattr(self, name), 0.0, lo_open=True)
        for name in ("precision_min", "forall_min"):
            check_float(name, getattr(self, name), 0.0, 1.0, lo_open=True)


class ScalingConfig(ModelConfig):
    """Notebook 03: grid over eps_min/eps_max and d trained to Stage 3; the dominant-set threshold."""

    PARTS = {**MODEL_PARTS, "protocol": ScalingProtocol, "judging": ScalingJudging}
    # notebook 03's model
    DEFAULTS = dict(
        n_minority=3,                    # how many features are minority (the last ones)
        lambda_rule="mid",               # the middle of the proof's range: lambda = d^-1.25
                                         # (App. E.3, proof of Theorem E.1: where Theorem 3.1 applies);
                                         # the book's old setting is "value" with weight_decay = 0.001
        steps=1500,                      # long enough to reach Stage 3 at d = 40
        record_every=50,                 # history every this many steps
        progress=False,                  # tqdm progress bar
    )

    def workload(self) -> list[tuple[SimConfig, int]]:
        """(config, steps) of every training notebook 03 runs, one per point of ds x ratios, and again with 4 × K pairs
        (Lemma B.1 by its effect), for the time estimate."""
        from ...premises import push_pairs
        return [(self.sim(d=d, eps_min=r * self.eps_max, n_pairs=k), self.steps)
                for k in (self.n_pairs, push_pairs(self.n_pairs)) for r in self.ratios for d in self.ds]
