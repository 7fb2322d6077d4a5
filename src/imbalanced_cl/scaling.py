"""Measurements on trained runs for notebooks 02 and 03: T2 (eq. 61), Lemma 3.2 (eqs. 9-10), and the
Stage-3 structure of Theorem 3.1 (eqs. 12-14): N_i, single-feature neurons, A_j, F_j, alpha', beta.

Configs: LuckyConfig (notebook 02) and ScalingConfig (notebook 03) extend SimConfig with their grids;
bad grids raise ParameterError naming the parameter and its allowed range.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from . import census as CS
from .config import SimConfig, check_float, check_grid, check_int
from .metrics import dominant_sets


@dataclass(frozen=True)
class LuckyConfig(SimConfig):
    """Notebook 02: census grid (see census.CensusConfig), training grid over eps_max, workshop figure."""

    census_ds: tuple = (10, 30, 100, 300, 1000, 3000, 10000)
    census_ratios: tuple = (1.0, 0.8, 0.6, 0.5)
    gamma: float = 0.1
    C_m: float = 2.0
    census_neurons: int = 20000
    census_max_elems: int = 2000000
    census_R: int = 4
    exact_samples: int = 4000
    train_eps_max: tuple = (0.5, 1.0, 2.0)   # eps_max grid for T2 - T1 (eps_min = eps_max * eps_min/eps_max of the base)
    t2_factor: float = 0.0    # T2 = first step with max_i ||w_i||^2 >= t2_factor ||w_i(T1)||^2 (eq. 61); 0 means d
    lemma_C: float = 3.0      # the O(1) constant of eq. (10) used to judge it
    lemma_m: int = 0          # neurons in the Lemma 3.2 run (0: m); lucky pairs are rare, so more neurons, more cases
    lemma_steps: int = 0      # steps of the Lemma 3.2 run (0: steps); it must reach T2
    fig_m: int = 30           # workshop Figure 1 (W132): m = 30, d = 9, 5 majority + 4 minority
    fig_d: int = 9
    fig_minority: int = 4
    fig_neurons: int = 13
    fig_steps: int = 1500
    fig_prune_alpha: float = 0.2

    def validate(self) -> None:
        super().validate()
        CS.CensusConfig(**{k: getattr(self, k) for k in CS.CensusConfig.__dataclass_fields__})
        check_grid("train_eps_max", self.train_eps_max, lambda n, v: check_float(n, v, 0.0, lo_open=True))
        check_float("t2_factor", self.t2_factor, 0.0)
        check_float("lemma_C", self.lemma_C, 1.0)
        check_int("lemma_m", self.lemma_m, 0)
        check_int("lemma_steps", self.lemma_steps, 0)
        check_int("fig_m", self.fig_m, 1)
        check_int("fig_d", self.fig_d, 3)
        check_int("fig_minority", self.fig_minority, 0, self.fig_d)
        check_int("fig_neurons", self.fig_neurons, 1, self.fig_m)
        check_int("fig_steps", self.fig_steps, 1)
        check_float("fig_prune_alpha", self.fig_prune_alpha, 0.0, 1.0, hi_open=True)

    def census(self) -> CS.CensusConfig:
        """The census part as a CensusConfig."""
        return CS.CensusConfig(**{k: getattr(self, k) for k in CS.CensusConfig.__dataclass_fields__})

    @property
    def ratio(self) -> float:
        return self.eps_min / self.eps_max


@dataclass(frozen=True)
class ScalingConfig(SimConfig):
    """Notebook 03: grid over eps_min/eps_max and d trained to Stage 3; the dominant-set threshold."""

    ratios: tuple = (1.0, 0.7, 0.5, 0.3)   # eps_min/eps_max grid, each in (0, 1]
    ds: tuple = (10, 20, 40)               # numbers of features, each >= 2 (and <= d1)
    ni_rel: float = 0.5    # empirical N_i: j with |<w_i,M_j>| >= ni_rel * max_j' |<w_i,M_j'>|
    gamma: float = 0.1     # eq. (28) constant for the definitional N_i at initialisation

    def validate(self) -> None:
        super().validate()
        check_grid("ratios", self.ratios, CS.check_ratio)
        check_grid("ds", self.ds, CS.check_d)
        for k, d in enumerate(self.ds):
            check_int(f"ds[{k}]", d, 3, self.d1)
        check_float("ni_rel", self.ni_rel, 0.0, 1.0, lo_open=True)
        check_float("gamma", self.gamma, 0.0, 1.0, hi_open=True)


# ------------------------------------------------------------------------------------------------
# Stage 2: T2 and Lemma 3.2
# ------------------------------------------------------------------------------------------------
def detect_t2(run, factor: float = 0.0) -> np.ndarray:
    """T2 per replicate (eq. 61): first recorded step t >= T1 at which some neuron has
    ||w_i(t)||^2 >= factor * ||w_i(T1)||^2 (factor 0 means d, the paper's rule). -1 if never.
    Needs a history recorded at every step up to T2 (record_every = 1) for exact times."""
    factor = factor or run.cfg.d
    steps = run.history.get("steps").numpy()
    n2 = run.history.get("norm2").numpy()            # (T, R, m)
    out = np.full(n2.shape[1], -1)
    for r in range(n2.shape[1]):
        T1 = int(run.T1[r])
        if T1 < 0:
            continue
        k1 = int(np.searchsorted(steps, T1))
        if k1 >= len(steps):
            continue
        grow = n2[k1:, r, :] / n2[k1, r, :][None, :]
        hit = np.nonzero((grow >= factor).any(-1))[0]
        if hit.size:
            out[r] = int(steps[k1 + hit[0]])
    return out


def coef_at(run, step: int, r: int) -> np.ndarray:
    """<w_i, M_j> (m, d) of replicate r at the recorded step nearest to `step`."""
    steps = run.history.get("steps").numpy()
    k = int(np.argmin(np.abs(steps - step)))
    return run.history.get("coef")[k, r].numpy()


def norm2_at(run, step: int, r: int) -> np.ndarray:
    steps = run.history.get("steps").numpy()
    k = int(np.argmin(np.abs(steps - step)))
    return run.history.get("norm2")[k, r].numpy()


def lemma32(run, T2: np.ndarray, gamma: float) -> dict:
    """Lemma 3.2 at T2 for each replicate: (a) lucky i in M_j*: ratio |<w_i(T2),M_j>|^2 / (2 eps_j/eps_max ||w_i(T1)||^2)
    (>= 1 claimed); (b) max over ordinary i' in M_j of |<w_i',M_j>| / max over lucky i of |<w_i,M_j>| (O(1) claimed).
    Also whether the neuron luckiest at init (largest u_ij^2) is the feature's top neuron at T2."""
    from .data import eps_vector
    cfg = run.cfg
    rho = cfg.eps_min / cfg.eps_max
    eps = eps_vector(cfg).numpy()
    g0 = (run.W0 @ run.M)
    cen = CS.census_of(g0, cfg.d, rho, gamma)
    a_ratios, b_ratios, top_hit, top_hit_min = [], [], [], []
    for r in range(g0.shape[0]):
        if T2[r] < 0:
            continue
        cT2 = np.abs(coef_at(run, int(T2[r]), r))
        n1 = norm2_at(run, int(run.T1[r]), r)
        lucky, ordi = cen["lucky"][r].numpy(), cen["ordinary"][r].numpy()
        for i, j in zip(*np.nonzero(lucky)):
            a_ratios.append(cT2[i, j] ** 2 / (2 * eps[j] / cfg.eps_max * n1[i]))
        for j in range(cfg.d):
            li = np.nonzero(lucky[:, j])[0]
            oi = np.nonzero(ordi[:, j])[0]
            if li.size and oi.size:
                b_ratios.append(cT2[oi, j].max() / cT2[li, j].max())
        u2 = (g0[r] ** 2 / (g0[r] ** 2).sum(-1, keepdim=True)).numpy()
        best0 = u2.argmax(0)                     # luckiest neuron at init, per feature
        bestT2 = cT2.argmax(0)                   # top neuron at T2, per feature
        hit = best0 == bestT2
        mino = np.arange(cfg.d) >= cfg.d - cfg.n_minority   # by position, also when rho = 1
        top_hit.append(hit[~mino].mean())
        if mino.any():
            top_hit_min.append(hit[mino].mean())
    return {"a_ratio": np.array(a_ratios), "b_ratio": np.array(b_ratios), "top_hit_major": np.array(top_hit),
            "top_hit_minor": np.array(top_hit_min), "chance": 1.0 / cfg.m}


# ------------------------------------------------------------------------------------------------
# Stage 3: Theorem 3.1
# ------------------------------------------------------------------------------------------------
def complement_coef(W: torch.Tensor, M: torch.Tensor) -> torch.Tensor:
    """beta_ij = <w_i, M_perp_j> on an orthonormal basis of the complement of span(M): (R, m, d1 - d)."""
    out = []
    for r in range(M.shape[0]):
        Q, _ = torch.linalg.qr(M[r].double(), mode="complete")
        out.append(W[r].double() @ Q[:, M.shape[-1]:])
    return torch.stack(out).float()


def stage3(run, ni_rel: float, gamma: float) -> dict:
    """Everything notebook 03 measures on one trained run (all per replicate, leading dim R)."""
    from .data import eps_vector
    cfg = run.cfg
    rho = cfg.eps_min / cfg.eps_max
    eps = eps_vector(cfg)
    # minority = the last n_minority features by position (also at rho = 1, where eps_min = eps_max)
    minority = torch.arange(cfg.d) >= cfg.d - cfg.n_minority
    C = run.W @ run.M                                   # (R, m, d)
    norm = run.W.norm(dim=-1)                           # (R, m)
    final = dominant_sets(C, ni_rel)                    # (R, m, d)
    init = CS.census_of(run.W0 @ run.M, cfg.d, rho, gamma)["ordinary"]
    inter = (final & init).sum((-1, -2)).double()
    precision = inter / final.sum((-1, -2)).double().clamp(min=1)
    recall = inter / init.sum((-1, -2)).double().clamp(min=1)
    Ni_final = final.sum(-1).double().mean(-1)          # (R,)
    Ni_init = init.sum(-1).double().mean(-1)
    single = final.sum(-1) == 1                         # (R, m)
    single_per_feat = (final & single.unsqueeze(-1)).sum(1).double()  # (R, d)
    A = C.abs().amax(1)                                 # (R, d)
    F = torch.where(init, C ** 2, torch.zeros_like(C)).sum(1)     # F_j = sum_{i in M_j} <w_i,M_j>^2 (M_j at init)
    F_dom = torch.where(final, C ** 2, torch.zeros_like(C)).sum(1)  # same over the final dominant sets
    alpha_p = torch.where(~final, C.abs(), torch.full_like(C, float("nan"))) / norm.unsqueeze(-1)
    beta = complement_coef(run.W, run.M).abs() / norm.unsqueeze(-1)
    n_feat_neurons = final.sum(1).double()              # (R, d): neurons with j in N_i
    pure = (final & single.unsqueeze(-1)).sum(1).double()
    hist_A = minority_ratio_over_time(run.history.get("coef"), minority)
    return {"coef": C.numpy(), "A_ratio_t": hist_A.numpy(), "steps_t": run.history.get("steps").numpy(),
            "precision": precision.numpy(), "recall": recall.numpy(), "Ni_final": Ni_final.numpy(),
            "Ni_init": Ni_init.numpy(), "single_per_feat": single_per_feat.numpy(),
            "A": A.numpy(), "F": F.numpy(), "F_dom": F_dom.numpy(), "minority": minority.numpy(),
            "alpha_p_scaled": (alpha_p * cfg.d ** 0.5).numpy(), "beta_scaled": (beta * cfg.d1 ** 0.5).numpy(),
            "neurons_per_feat": n_feat_neurons.numpy(), "pure_per_feat": pure.numpy(),
            "loss": float(run.history.get("loss")[-1].mean())}


def minority_ratio_over_time(coef_t: torch.Tensor, minority: torch.Tensor) -> torch.Tensor:
    """A_min / A_maj over recorded steps, A_j = max_i |<w_i, M_j>| (eq. 13): (T, R) from coef history (T, R, m, d).

    Theorem 3.1 predicts this settles near eps_min/eps_max; a ratio that keeps rising towards 1 means
    training is still equalising the features when it stops.
    """
    A = coef_t.abs().amax(dim=2)                                     # (T, R, d)
    return A[..., minority].mean(-1) / A[..., ~minority].mean(-1).clamp(min=1e-30)


def ni_exponents(ds, Ni: np.ndarray) -> np.ndarray:
    """Per-replicate log-log slope of |N_i| in d: Ni (R, len(ratios), len(ds)) -> (R, len(ratios))."""
    R, K, _ = Ni.shape
    return np.array([[CS.fit_loglog(ds, Ni[r, k]).slope for k in range(K)] for r in range(R)])


def tracking_slope(ds, ratios, Ni: np.ndarray) -> "CS.SlopeFit":
    """Does the |N_i| exponent follow 1 - rho^2 (eq. 14 read as a scaling law, not just a bound)?

    Per replicate: the exponent of |N_i| in d at each ratio, then the least-squares slope of those
    exponents on 1 - rho^2 (1 if |N_i| ~ d^(1-rho^2), 0 if |N_i| = O(1) as in the workshop version).
    Returns the mean slope and its 95% t-interval over replicates. Ni: (R, len(ratios), len(ds)).
    """
    x = 1.0 - np.asarray(ratios, float) ** 2
    if np.ptp(x) == 0:
        raise ValueError("ratios: need at least two distinct values of eps_min/eps_max to fit a slope")
    E = ni_exponents(ds, Ni)
    xc = x - x.mean()
    return CS.replicate_mean(((E - E.mean(1, keepdims=True)) * xc).sum(1) / (xc ** 2).sum())
