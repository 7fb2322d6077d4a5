"""Notebook 08's grid: the config and its parts, the scaling rule d -> (d1, m, n_minority), the paper's clock tau_d, the
result."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from ...sim import data as D
from ...sim.config import MODEL_PARTS, ModelConfig, SimConfig, Workers
from ...validate import check, check_float, check_grid, check_int
from .. import pruning as PA
from ..census import sets as CS

# Fields of SimConfig that the scaling rule sets at every grid point: a value other than the default is refused,
# so a reader who sets d = 40 learns to set ds instead (name -> where the value comes from).
DERIVED = {"d": "ds", "d1": "c1 (d1 = c1 d)", "m": "C_m (m = d^C_m)", "n_minority": "minority_share",
           "eps_min": "ratios (eps_min = rho eps_max)", "steps": "the stage rules (t1_cap, t2_cap, t3_min, t3_cap)",
           "record_every": "records_per_tau", "prune_start": "the branch point T_a"}


@dataclass(frozen=True)
class ScaleProtocol:
    """Notebook 08's grid over d, its scaling rule and stage clock: ds, c1, C_m, ratios, minority_share, t1_cap,
    t2_cap, t3_min, t3_cap, plateau_tol, loss_drop, branch_tau, records_per_tau, fit_start, sparsity_max."""

    ROLE: ClassVar[str] = "protocol"
    ds: tuple = (20, 40, 80)          # grid of d (increasing; >= 3 points for the local |N_i| exponents)
    c1: float = 5.0                   # d1 = round(c1 d): d1 = poly(d) (§3.2)
    C_m: float = 1.25                 # m = round(d^C_m) neurons (Theorem 3.1)
    ratios: tuple = (1.0, 0.5)        # eps_min/eps_max of the groups trained at every d (the smallest one < 1)
    minority_share: float = 0.25      # share of minority features: n_minority = max(1, round(minority_share d))
    t1_cap: float = 1.0               # Stage 1 runs until every slot reached T1 (eq. 34), at most t1_cap tau_d steps
    t2_cap: float = 2.0               # Stage 2 runs until every slot reached T2 (eq. 61), at most t2_cap tau_d steps
    t3_min: float = 1.5               # Stage 3: at least t3_min tau_d steps, then until the loss levels off (T_a)
    t3_cap: float = 4.0               # ... at most t3_cap tau_d steps
    plateau_tol: float = 0.02         # the loss levels off when it changes by less than this x its start over 0.5 tau_d
    loss_drop: float = 0.1            # ... and it lies this fraction below its start (the flat start is not Stage 3)
    branch_tau: float = 0.5           # the pruning branch and its control last branch_tau tau_d steps
    records_per_tau: int = 50         # history records per tau_d after Stage 1 (Stage 1 is recorded every step)
    fit_start: int = 3                # first step of the Stage-1 rate fit (stage1.measured_rates)
    sparsity_max: float = 0.3         # premise: the largest per-sample feature frequency q_j of the model stays <= this

    def validate(self, cfg) -> None:
        """The grid, the scaling rule, the stage clock and the branch's ratio."""
        check_grid("ds", self.ds, lambda n, v: check_int(n, v, 4))
        check("ds", self.ds, list(self.ds) == sorted(set(self.ds)) and len(self.ds) >= 2,
              "at least 2 distinct values of d, increasing")
        check_float("c1", self.c1, 1.0)
        check_float("C_m", self.C_m, 0.5, 3.0)
        check_grid("ratios", self.ratios, CS.check_ratio)
        check("ratios", self.ratios, len(set(self.ratios)) == len(self.ratios) and min(self.ratios) < 1.0,
              "distinct values in (0, 1], the smallest < 1 (claims 1 and 4 need a minority)")
        check_float("minority_share", self.minority_share, 0.0, 0.5, lo_open=True, hi_open=True)
        for d in self.ds:
            check("minority_share", self.minority_share, 1 <= cfg.n_min(d) <= d - 1,
                  "a share giving 1 <= n_minority <= d - 1 at every d", given=f"ds={list(self.ds)}")
        check_float("t1_cap", self.t1_cap, 0.0, lo_open=True)
        check_float("t2_cap", self.t2_cap, self.t1_cap, given=f"t1_cap={self.t1_cap}")
        check_float("t3_min", self.t3_min, 0.0, lo_open=True)
        check_float("t3_cap", self.t3_cap, max(self.t3_min, self.t2_cap),
                    given=f"t3_min={self.t3_min}, t2_cap={self.t2_cap}")
        check_float("plateau_tol", self.plateau_tol, 0.0, lo_open=True)
        check_float("loss_drop", self.loss_drop, 0.0, 1.0, hi_open=True)
        check_float("branch_tau", self.branch_tau, 0.0, lo_open=True)
        check_int("records_per_tau", self.records_per_tau, 1)
        check_int("fit_start", self.fit_start, 0)
        check_float("sparsity_max", self.sparsity_max, 0.0, 1.0, lo_open=True)
        check_float("prune_alpha", cfg.prune_alpha, 0.0, 1.0, lo_open=True, hi_open=True)


@dataclass(frozen=True)
class ScaleJudging:
    """Notebook 08's definitions and tolerances, fixed before the run: gamma, t2_factor, ni_rel, cos_threshold,
    tol_ratio, tol_fraction, sesoi_alignment, tol_exponent, tol_tracking, tol_share, tol_gain, trend_sesoi."""

    ROLE: ClassVar[str] = "judging"
    gamma: float = 0.1                # the constant of eq. (28) for lucky and ordinary sets
    t2_factor: float = 0.0            # the T2 threshold: some ||w_i||^2 >= t2_factor ||w_i(T1)||^2 (eq. 61); 0 means d
    ni_rel: float = 0.5               # empirical N_i: j with |<w_i,M_j>| >= ni_rel max_j' |<w_i,M_j'>|
    cos_threshold: float = 0.3        # "aligned" means cos(w_i, M_j) >= this (App. A.2), for the mask census
    tol_ratio: float = 0.1            # Stage-1 rate ratio: band eps_max/eps_min x (1 ± tol_ratio)
    tol_fraction: float = 0.1         # Lemma 3.2 lucky-pair fraction: band [1 - tol_fraction, 1]
    sesoi_alignment: float = 0.05     # Fig. 1: majority - minority best cos^2 must exceed this (and it is the unit)
    tol_exponent: float = 0.2         # local |N_i| exponent: band 1 - rho^2 ± tol_exponent
    tol_tracking: float = 0.3         # slope of the |N_i| exponent on 1 - rho^2: band 1 ± tol_tracking
    tol_share: float = 0.1            # share of the mask on minority-dominant neurons: band [1 - tol_share, 1]
    tol_gain: float = 0.1             # pruning gain in A_j*/A_maj: band (1 - rho) ± tol_gain
    trend_sesoi: float = 0.25         # smallest slope of interest of the gap, in tolerance units per doubling of d

    def validate(self, cfg) -> None:
        """The definitions' and tolerances' ranges."""
        check_float("gamma", self.gamma, 0.0, 1.0, hi_open=True)
        check_float("t2_factor", self.t2_factor, 0.0)
        check_float("ni_rel", self.ni_rel, 0.0, 1.0, lo_open=True)
        check_float("cos_threshold", self.cos_threshold, 0.0, 1.0, lo_open=True)
        for name in ("tol_ratio", "tol_fraction", "sesoi_alignment", "tol_exponent", "tol_tracking", "tol_share",
                     "tol_gain", "trend_sesoi"):
            check_float(name, getattr(self, name), 0.0, lo_open=True)


class ScaleConfig(ModelConfig):
    """Notebook 08: a grid over d with d1, m and the step budget scaled as the paper's assumptions require."""

    PARTS = {**MODEL_PARTS, "protocol": ScaleProtocol, "judging": ScaleJudging, "pool": Workers}
    # the model's fields with another default here
    DEFAULTS = dict(
        R=4,                          # replicates per ratio group and d (intervals are over these)
        n_pairs=256,                  # K: fresh pairs per step, the same at every d (Lemma B.1 asks K = poly(d1))
        prune_alpha=0.1,              # alpha: fraction of neurons the pruning branch masks (Alg. 1, whole neurons)
        progress=False,               # tqdm progress bar
        threads=1,                    # torch threads while training (0: torch's default);
                                      # 1 is robust on a shared 2-core machine, where 2 threads oversubscribe;
                                      # results do not depend on it
    )

    def validate(self) -> None:
        """The derived fields keep their defaults (checked first, so the parameters cell states where they come
        from), then each part's checks."""
        base = SimConfig()
        for name, source in DERIVED.items():
            default = getattr(base, name)
            check(name, getattr(self, name), getattr(self, name) == default,
                  f"{default!r} only: set at every grid point from {source}")
        super().validate()

    # --- the scaling rule ---
    def n_min(self, d: int) -> int:
        """Minority features at d: max(1, round(minority_share d))."""
        return max(1, round(self.minority_share * d))

    def point(self, d: int, ratio: float) -> SimConfig:
        """The SimConfig of one grid point and ratio group: d1 = c1 d, m = d^C_m, eps_min = ratio eps_max."""
        return self.sim(d=d, d1=max(d, round(self.c1 * d)), m=max(2, round(d ** self.C_m)), n_minority=self.n_min(d),
                        eps_min=ratio * self.eps_max, prune_alpha=0.0, steps=1, record_every=1)

    @property
    def groups(self) -> list[float]:
        """The ratios, largest first (the first group has the most lucky neurons, the last is the minority test)."""
        return sorted(self.ratios, reverse=True)


def clock(cfg: SimConfig) -> float:
    """tau_d = d log d / (eps_max eta loglog d): the scale of T2 - T1 (eq. 60) and of the workshop's T1 (workshop
    version, eq. (40))."""
    return cfg.d * math.log(cfg.d) / (cfg.eps_max * cfg.lr * math.log(math.log(cfg.d)))


def plan(cfg: ScaleConfig) -> list[dict]:
    """The grid before any training: sizes, clock, horizons, and Thm 3.2's T5 - T4 (C_z = 1) for the branch."""
    out = []
    for d in cfg.ds:
        p = cfg.point(d, min(cfg.ratios))
        tau = clock(p)
        out.append({"d": d, "d1": p.d1, "m": p.m, "n_minority": p.n_minority, "K": p.n_pairs, "tau_d": tau,
                    "T_a": (round(cfg.t3_min * tau), round(cfg.t3_cap * tau)), "branch": round(cfg.branch_tau * tau),
                    "T5_minus_T4": PA.t5_elapsed(p, cfg.prune_alpha),
                    "q_max": float(D.sample_prob(cfg.point(d, max(cfg.ratios))).max())})
    return out


@dataclass
class ScaleResult:
    """What notebook 08 measured: one dict per d (measure_point), the config and the wall time."""

    cfg: ScaleConfig
    points: list = field(default_factory=list)
    seconds: float = 0.0

    def stack(self, key: str) -> np.ndarray:
        """One measurement over the grid, d last: (..., len(ds))."""
        return np.stack([p[key] for p in self.points], -1)
