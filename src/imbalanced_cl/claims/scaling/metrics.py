"""Notebook 03's measurements: the Stage-3 structure of Theorem 3.1 (eqs. 12-14) on a Run, and the |N_i| exponents
over d."""
from __future__ import annotations

import numpy as np
import torch

from ... import stats
from ...sim.metrics import dominant_sets
from ..census import sets as CS


def complement_coef(W: torch.Tensor, M: torch.Tensor) -> torch.Tensor:
    """beta_ij = <w_i, M_perp_j> on an orthonormal basis of the complement of span(M): (R, m, d1 - d)."""
    out = []
    for r in range(M.shape[0]):
        Q, _ = torch.linalg.qr(M[r].double(), mode="complete")
        out.append(W[r].double() @ Q[:, M.shape[-1]:])
    return torch.stack(out).float()


def offset_alpha(C: torch.Tensor, sets: torch.Tensor, norm: torch.Tensor) -> torch.Tensor:
    """|alpha'_ij| / ||w_i|| = |<w_i, M_j>| / ||w_i|| for j outside N_i (eq. 13), NaN for j in N_i: (R, m, d)."""
    return torch.where(~sets, C.abs(), torch.full_like(C, float("nan"))) / norm.unsqueeze(-1)


def stage3(run, ni_rel: float, gamma: float) -> dict:
    """Everything notebook 03 measures on one trained run (all per replicate, leading dim R)."""
    cfg = run.cfg
    rho = cfg.eps_min / cfg.eps_max
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
    alpha_p = offset_alpha(C, final, norm)
    beta = complement_coef(run.W, run.M).abs() / norm.unsqueeze(-1)
    # The null for eq. (13)'s "for all" bounds: the same statistics of the untrained weights (random directions),
    # each neuron with its own dominant set. At d1 = 5d a random direction already has √d|α'|/||w|| < 1 for most
    # (i, j); a bound the null meets says nothing about training.
    C0, norm0 = run.W0 @ run.M, run.W0.norm(dim=-1)
    alpha_p0 = offset_alpha(C0, dominant_sets(C0, ni_rel), norm0)
    beta0 = complement_coef(run.W0, run.M).abs() / norm0.unsqueeze(-1)
    n_feat_neurons = final.sum(1).double()              # (R, d): neurons with j in N_i
    pure = (final & single.unsqueeze(-1)).sum(1).double()
    hist_A = minority_ratio_over_time(run.history.get("coef"), minority)
    return {"coef": C.numpy(), "A_ratio_t": hist_A.numpy(), "steps_t": run.history.get("steps").numpy(),
            "precision": precision.numpy(), "recall": recall.numpy(), "Ni_final": Ni_final.numpy(),
            "Ni_init": Ni_init.numpy(), "single_per_feat": single_per_feat.numpy(),
            "A": A.numpy(), "F": F.numpy(), "F_dom": F_dom.numpy(), "minority": minority.numpy(),
            "alpha_p_scaled": (alpha_p * cfg.d ** 0.5).numpy(), "beta_scaled": (beta * cfg.d1 ** 0.5).numpy(),
            "alpha_p_scaled_init": (alpha_p0 * cfg.d ** 0.5).numpy(),
            "beta_scaled_init": (beta0 * cfg.d1 ** 0.5).numpy(),
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
    return np.array([[stats.fit_loglog(ds, Ni[r, k]).slope for k in range(K)] for r in range(R)])


def tracking_slope(ds, ratios, Ni: np.ndarray) -> "stats.SlopeFit":
    """Does the |N_i| exponent follow 1 - rho^2 (eq. 14 read as a scaling law, not just a bound)?

    Per replicate: the exponent of |N_i| in d at each ratio, then the least-squares slope of those
    exponents on 1 - rho^2 (1 if |N_i| ~ d^(1-rho^2), 0 if |N_i| = O(1) as in the workshop version).
    Returns the mean slope and its 95% t-interval over replicates. Ni: (R, len(ratios), len(ds)).
    """
    return stats.replicate_mean(tracking_slopes(ds, ratios, Ni))


def tracking_slopes(ds, ratios, Ni: np.ndarray) -> np.ndarray:
    """Per replicate, the least-squares slope of the |N_i| exponent in d on 1 - rho^2 (see tracking_slope): (R,)."""
    x = 1.0 - np.asarray(ratios, float) ** 2
    if np.ptp(x) == 0:
        raise ValueError("ratios: need at least two distinct values of eps_min/eps_max to fit a slope")
    E = ni_exponents(ds, Ni)
    xc = x - x.mean()
    return ((E - E.mean(1, keepdims=True)) * xc).sum(1) / (xc ** 2).sum()
