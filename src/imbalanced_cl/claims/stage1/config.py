"""Notebook 01's configuration: the run with a spread of eps_j, and the (d, d1) sweep for T1."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ...sim.config import MODEL_PARTS, ModelConfig, SimConfig
from ...validate import check_float, check_grid, check_int


@dataclass(frozen=True)
class Stage1Protocol:
    """Notebook 01's rate fit and T1 sweep: fit_start, kappa_samples, d_grid, d1_grid, sweep_d, sweep_d1, sweep_R,
    horizon."""

    ROLE: ClassVar[str] = "protocol"
    fit_start: int = 5               # first step of the rate fit (skip the transient of the random start)
    kappa_samples: int = 20000       # Monte-Carlo pairs for kappa_j
    d_grid: tuple = (10, 20, 40, 80)         # T1 sweep over d at d1 = sweep_d1
    d1_grid: tuple = (50, 100, 200, 400)     # T1 sweep over d1 at d = sweep_d
    sweep_d: int = 10                # d of the sweep over d1
    sweep_d1: int = 400              # d1 of the sweep over d
    sweep_R: int = 4                 # replicates per sweep point
    horizon: float = 3.0             # sweep runs for horizon x the linear-theory T1 (a prediction, not a tuned number)

    def validate(self, cfg) -> None:
        """The rate fit's start within the run, and the sweep grids."""
        check_int("fit_start", self.fit_start, 0, cfg.steps - 2, given=f"steps={cfg.steps}")
        check_int("kappa_samples", self.kappa_samples, 100)
        check_grid("d_grid", self.d_grid, lambda n, v: check_int(n, v, 3, self.sweep_d1))
        check_grid("d1_grid", self.d1_grid, lambda n, v: check_int(n, v, self.sweep_d))
        check_int("sweep_d", self.sweep_d, 3)
        check_int("sweep_d1", self.sweep_d1, 3)
        check_int("sweep_R", self.sweep_R, 1)
        check_float("horizon", self.horizon, 1.0)


@dataclass(frozen=True)
class Stage1Judging:
    """Notebook 01's tolerances, fixed before the run (book/methods.md): tol_slope, tol_ratio, tol_exponent."""

    ROLE: ClassVar[str] = "judging"
    tol_slope: float = 0.15  # band 1 ± tol_slope for the log-log slope of rate on eps_j
    tol_ratio: float = 0.10  # band ratio × (1 ± tol_ratio) for the rate ratios
    tol_exponent: float = 0.25  # band claim ± tol_exponent for the exponent of T1 in d1

    def validate(self, cfg) -> None:
        """The tolerances are positive."""
        for name in ("tol_slope", "tol_ratio", "tol_exponent"):
            check_float(name, getattr(self, name), 0.0, lo_open=True)


class Stage1Config(ModelConfig):
    """Notebook 01: one run with a spread of eps_j for the rates, plus a (d, d1) sweep for T1."""

    PARTS = {**MODEL_PARTS, "protocol": Stage1Protocol, "judging": Stage1Judging}
    # notebook 01's model: a geometric spread of eps_j, recorded every step of Stage 1
    DEFAULTS = dict(
        R=8,                             # replicates trained together
        lambda_rule="mid",               # the middle of the proof's range: lambda = d^-1.25
                                         # (App. E.3, proof of Theorem E.1: where Theorem 3.1 applies);
                                         # the book's old setting is "value" with weight_decay = 0.001
        d1=200,                          # ambient dimension, d1 >= d
        eps_min=0.1,                     # smallest frequency of the geometric spread
        eps_profile="geometric",   # eps_j log-spaced from eps_max to eps_min, so the rate fit sees many eps values
        steps=60,                        # gradient steps (Stage 1 ends near step 40 at this size)
        record_every=1,                  # history every step: the rate fit needs the whole Stage-1 curve
    )

    def sweep_base(self, axis: str, v: int) -> SimConfig:
        """One T1 sweep point's training: d = v at sweep_d1 (axis 'd') or d1 = v at sweep_d (axis 'd1'), no bias, no
        minority feature, two eps levels; its length is set by sweep_steps."""
        d, d1 = (v, self.sweep_d1) if axis == "d" else (self.sweep_d, v)
        return self.sim(d=d, d1=d1, R=self.sweep_R, bias="none", n_minority=0, eps_profile="two_level",
                        progress=False, record_every=10**6, steps=1, prune_alpha=0.0)

    def sweep_steps(self, t_lin: float) -> int:
        """Steps of a sweep point: horizon x its linear-theory T1, at least 10 and at most 10^5."""
        return int(min(max(self.horizon * t_lin, 10), 10**5))

    def workload(self) -> list[tuple[SimConfig, int]]:
        """(config, steps) of every training notebook 01 runs: the main run, its push with 4 × K pairs (Lemma B.1 by
        its effect), then each T1 sweep point for sweep_steps of its linear-theory T1, for the time estimate (kappa_j
        from a small Monte Carlo: an estimate needs T1 within a few percent, not the sweep's precision)."""
        from ...premises import push_pairs
        from ...sim import theory
        out = [(self.sim(), self.steps), (self.sim(n_pairs=push_pairs(self.n_pairs)), self.steps)]
        for axis, grid in (("d", self.d_grid), ("d1", self.d1_grid)):
            for v in grid:
                base = self.sweep_base(axis, v)
                t_lin = theory.t1_linear(base, theory.kappa_mc(base, n=256, replicates=1))
                out.append((base, self.sweep_steps(t_lin)))
        return out
