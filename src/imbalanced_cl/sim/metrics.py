"""Measurements on trained weights: feature coefficients and shares, cosines, stage times, dominant sets."""
from __future__ import annotations

import torch




def feature_share(W: torch.Tensor, M: torch.Tensor) -> torch.Tensor:
    """||P_F w_i||^2 / ||w_i||^2 (R, m): the share of a neuron in the feature subspace (eq. 34)."""
    return (W @ M).pow(2).sum(-1) / W.pow(2).sum(-1).clamp(min=1e-30)


def perp_norm2(W: torch.Tensor, M: torch.Tensor) -> torch.Tensor:
    """||P_perp w_i||^2 = ||w_i||^2 - ||M^T w_i||^2 (R, m) (M is column-orthonormal)."""
    return (W.pow(2).sum(-1) - (W @ M).pow(2).sum(-1)).clamp(min=0)


def cosine_matrix(W: torch.Tensor, M: torch.Tensor) -> torch.Tensor:
    """|<w_i, M_j>| / (||w_i|| ||M_j||): the neuron x feature alignment (R, m, d), as in App. A.2."""
    return (W @ M).abs() / (W.norm(dim=-1, keepdim=True) * M.norm(dim=-2, keepdim=True)).clamp(min=1e-30)


def stage_time(share_hist: torch.Tensor, steps: torch.Tensor, threshold: float = 0.5) -> torch.Tensor:
    """Per neuron, the first recorded step whose feature share is >= threshold (eq. 34); -1 if never.

    share_hist: (T, R, m). Returns (R, m) long.
    """
    hit = share_hist >= threshold
    first = torch.where(hit.any(0), hit.float().argmax(0), torch.full(hit.shape[1:], -1, device=hit.device))
    return torch.where(first >= 0, steps[first.clamp(min=0)], torch.full_like(first, -1))


def log_slope(series: torch.Tensor, steps: torch.Tensor, lo: float, hi: float) -> torch.Tensor:
    """Least-squares slope of log(series) against step for lo <= t < hi, along dim 0 (time)."""
    sel = (steps >= lo) & (steps < hi)
    if int(sel.sum()) < 2:
        return torch.full(series.shape[1:], float("nan"), device=series.device)
    t = steps[sel].to(torch.float64)
    y = torch.log(series[sel].to(torch.float64).clamp(min=1e-300))
    tc = (t - t.mean()).view((-1,) + (1,) * (y.dim() - 1))
    return ((tc * (y - y.mean(0))).sum(0) / tc.pow(2).sum()).float()


def dominant_sets(coef: torch.Tensor, rel: float = 0.5) -> torch.Tensor:
    """Empirical N_i: features with |<w_i,M_j>| >= rel * max_j |<w_i,M_j>|; bool (R, m, d)."""
    a = coef.abs()
    return a >= rel * a.amax(-1, keepdim=True).clamp(min=1e-30)


def pos_pair_cosine(FX: torch.Tensor, FY: torch.Tensor) -> torch.Tensor:
    """Mean over pairs of cos(f(X_n), f(Y_n)) (App. A.2, Fig. 3), per replicate (R,)."""
    num = (FX * FY).sum(-1)
    den = (FX.norm(dim=-1) * FY.norm(dim=-1)).clamp(min=1e-30)
    return (num / den).mean(-1)
