"""Notebook 02's configuration: the census grid (census.grid.CensusConfig), the training grid over eps_max, the
workshop figure and the verdict tolerances."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ...sim.config import MODEL_PARTS, ModelConfig, SimConfig
from ...validate import check_float, check_grid, check_int
from ..census.grid import CensusConfig


@dataclass(frozen=True)
class LuckyProtocol:
    """Notebook 02's census grid, training grid, Lemma 3.2 run and workshop figure: census_ds, census_ratios, C_m,
    census_neurons, census_max_elems, census_R, exact_samples, train_eps_max, lemma_m, lemma_steps, fig_m, fig_d,
    fig_minority, fig_neurons, fig_steps, fig_prune_alpha."""

    ROLE: ClassVar[str] = "protocol"
    census_ds: tuple = (10, 30, 100, 300, 1000, 3000, 10000)
    census_ratios: tuple = (1.0, 0.8, 0.6, 0.5)
    C_m: float = 2.0
    census_neurons: int = 20000
    census_max_elems: int = 2000000
    census_R: int = 4
    exact_samples: int = 4000
    train_eps_max: tuple = (0.5, 1.0, 2.0)   # eps_max grid for T2 - T1 (eps_min = eps_max * the base's eps_min/eps_max)
    lemma_m: int = 1000          # neurons in the Lemma 3.2 run (0: m); lucky pairs are rare: more neurons, more cases
    lemma_steps: int = 150      # steps of the Lemma 3.2 run (0: steps); it must reach T2
    fig_m: int = 30           # workshop Figure 1 (workshop version, §4): m = 30, d = 9, 5 majority + 4 minority
    fig_d: int = 9
    fig_minority: int = 4
    fig_neurons: int = 13
    fig_steps: int = 1500
    fig_prune_alpha: float = 0.2

    def validate(self, cfg) -> None:
        """The census grid (CensusConfig's checks, with this config's gamma, seed and device), the training grid and
        the figure's sizes."""
        cfg.census()
        check_grid("train_eps_max", self.train_eps_max, lambda n, v: check_float(n, v, 0.0, lo_open=True))
        check_int("lemma_m", self.lemma_m, 0)
        check_int("lemma_steps", self.lemma_steps, 0)
        check_int("fig_m", self.fig_m, 1)
        check_int("fig_d", self.fig_d, 3)
        check_int("fig_minority", self.fig_minority, 0, self.fig_d)
        check_int("fig_neurons", self.fig_neurons, 1, self.fig_m)
        check_int("fig_steps", self.fig_steps, 1)
        check_float("fig_prune_alpha", self.fig_prune_alpha, 0.0, 1.0, hi_open=True)


@dataclass(frozen=True)
class LuckyJudging:
    """Notebook 02's definitions and tolerances, fixed before the run (book/methods.md): gamma, t2_factor, lemma_C,
    rse_max, tol_omega, tol_ni_init, pr_b_min, forall_min, tol_t2, tol_share."""

    ROLE: ClassVar[str] = "judging"
    gamma: float = 0.1
    t2_factor: float = 0.0    # the T2 threshold:
                              # T2 = first step with max_i ||w_i||^2 >= t2_factor ||w_i(T1)||^2 (eq. 61); 0 means d
    lemma_C: float = 3.0      # the O(1) constant of eq. (10) used to judge it
    rse_max: float = 0.3      # exact lucky-count expectations with a larger relative standard error are not fitted
    tol_omega: float = 0.1    # |M_j*| and |M_j| exponent bounds (Lemma B.2(c)) are relaxed by this much
    tol_ni_init: float = 0.1  # the |N_i| exponent bound at initialisation (Lemma B.2(d)) is relaxed by this much
    pr_b_min: float = 0.9     # (1-p2)^(d-1) at the largest d (the proof of Lemma B.2(c) sets it to 1): holds if ≥ this
    forall_min: float = 0.9   # a "for every lucky pair" statement holds if the Wilson interval of its share is ≥ this
    tol_t2: float = 0.2       # band 1 ± tol_t2 for the slope of T2 - T1 on 1/eps_max (eq. 60)
    tol_share: float = 0.1    # Lemma B.1 by its effect: a share row (Lemma 3.2, top hit) moved less than this by 4 × K

    def validate(self, cfg) -> None:
        """The tolerances' and thresholds' ranges (gamma is checked with the census grid)."""
        check_float("rse_max", self.rse_max, 0.0, lo_open=True)
        for name in ("tol_omega", "tol_ni_init", "tol_t2", "tol_share"):
            check_float(name, getattr(self, name), 0.0, lo_open=True)
        for name in ("pr_b_min", "forall_min"):
            check_float(name, getattr(self, name), 0.0, 1.0, lo_open=True)
        check_float("t2_factor", self.t2_factor, 0.0)
        check_float("lemma_C", self.lemma_C, 1.0)


class LuckyConfig(ModelConfig):
    """Notebook 02: census grid (see census.grid.CensusConfig), training grid over eps_max, workshop figure,
    tolerances."""

    PARTS = {**MODEL_PARTS, "protocol": LuckyProtocol, "judging": LuckyJudging}
    # notebook 02's model
    DEFAULTS = dict(
        m=100,                           # neurons of the training runs
        lambda_rule="mid",               # the middle of the proof's range: lambda = d^-1.25
                                         # (App. E.3, proof of Theorem E.1: where Theorem 3.1 applies);
                                         # the book's old setting is "value" with weight_decay = 0.001
        eps_min=0.8,                     # minority frequency (the lucky-neuron regime needs a ratio near 1:
                                         # see Where the paper is inconsistent, §1)
        n_minority=10,                   # how many features are minority (the last ones)
        record_every=1,                  # history every step (T2 detection needs it)
        progress=False,                  # tqdm progress bar
    )

    def census(self) -> CensusConfig:
        """The census part as a CensusConfig."""
        return CensusConfig(**{k: getattr(self, k) for k in CensusConfig.__dataclass_fields__})

    def workload(self) -> list[tuple[SimConfig, int]]:
        """(config, steps) of every training notebook 02 runs (the census trains nothing): one run per train_eps_max
        and the Lemma 3.2 run, each again with 4 × K pairs (Lemma B.1 by its effect), and the figure's two arms, for
        the time estimate."""
        from ...premises import push_pairs
        out = []
        for k in (self.n_pairs, push_pairs(self.n_pairs)):
            out += [(self.sim(eps_max=em, eps_min=em * self.ratio, n_pairs=k), self.steps) for em in self.train_eps_max]
            out.append((self.sim(m=self.lemma_m or self.m, n_pairs=k), self.lemma_steps or self.steps))
        fig = self.sim(m=self.fig_m, d=self.fig_d, n_minority=self.fig_minority)
        return out + [(fig, self.fig_steps)] * 2

    @property
    def ratio(self) -> float:
        return self.eps_min / self.eps_max
