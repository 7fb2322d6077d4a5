"""Measurements on trained weights: projections, shares, cosines, stage times, fits and intervals."""
from __future__ import annotations

import torch

# Two-sided 97.5% Student-t quantiles for df = 1..30 (beyond that the normal 1.96 is used).
_T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
         2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
         2.052, 2.048, 2.045, 2.042]


def t975(df: int) -> float:
    """97.5% quantile of Student's t with df degrees of freedom."""
    return _T975[df - 1] if 1 <= df <= 30 else 1.96


def mean_ci(x: torch.Tensor, dim: int = 0) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Mean and 95% t-interval over replicates along `dim` (NaNs ignored); returns (mean, lo, hi)."""
    x = x.to(torch.float64)
    ok = ~torch.isnan(x)
    n = ok.sum(dim)
    mean = torch.where(ok, x, 0.0).sum(dim) / n.clamp(min=1)
    var = torch.where(ok, (x - mean.unsqueeze(dim)) ** 2, 0.0).sum(dim) / (n - 1).clamp(min=1)
    half = torch.tensor([t975(int(k) - 1) if k > 1 else float("nan") for k in n.flatten()]).view(n.shape)
    half = half * (var / n.clamp(min=1)).sqrt()
    mean = torch.where(n > 0, mean, float("nan"))
    return mean, mean - half, mean + half


def feature_coef(W: torch.Tensor, M: torch.Tensor) -> torch.Tensor:
    """<w_i, M_j> for every neuron and feature: (R, m, d)."""
    return W @ M


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
    first = torch.where(hit.any(0), hit.float().argmax(0), torch.full(hit.shape[1:], -1))
    return torch.where(first >= 0, steps[first.clamp(min=0)], torch.full_like(first, -1))


def log_slope(series: torch.Tensor, steps: torch.Tensor, lo: float, hi: float) -> torch.Tensor:
    """Least-squares slope of log(series) against step for lo <= t < hi, along dim 0 (time)."""
    sel = (steps >= lo) & (steps < hi)
    if int(sel.sum()) < 2:
        return torch.full(series.shape[1:], float("nan"))
    t = steps[sel].to(torch.float64)
    y = torch.log(series[sel].to(torch.float64).clamp(min=1e-300))
    tc = (t - t.mean()).view((-1,) + (1,) * (y.dim() - 1))
    return ((tc * (y - y.mean(0))).sum(0) / tc.pow(2).sum()).float()


def loglog_fit(x: torch.Tensor, y: torch.Tensor) -> tuple[float, float]:
    """Slope and intercept of log y against log x (1-D tensors, positive entries only)."""
    ok = (x > 0) & (y > 0) & torch.isfinite(x) & torch.isfinite(y)
    lx, ly = torch.log(x[ok].double()), torch.log(y[ok].double())
    if lx.numel() < 2:
        return float("nan"), float("nan")
    lxc = lx - lx.mean()
    slope = float((lxc * (ly - ly.mean())).sum() / lxc.pow(2).sum())
    return slope, float(ly.mean() - slope * lx.mean())


def loglog_slope_ci(x: torch.Tensor, Y: torch.Tensor) -> tuple[float, float, float]:
    """Fit log Y[r] against log x for each replicate r (Y: (R, k)), then mean and 95% interval of the slopes."""
    slopes = torch.tensor([loglog_fit(x, Y[r])[0] for r in range(Y.shape[0])])
    m, lo, hi = mean_ci(slopes)
    return float(m), float(lo), float(hi)


def dominant_sets(coef: torch.Tensor, rel: float = 0.5) -> torch.Tensor:
    """Empirical N_i: features with |<w_i,M_j>| >= rel * max_j |<w_i,M_j>|; bool (R, m, d)."""
    a = coef.abs()
    return a >= rel * a.amax(-1, keepdim=True).clamp(min=1e-30)


def pos_pair_cosine(FX: torch.Tensor, FY: torch.Tensor) -> torch.Tensor:
    """Mean over pairs of cos(f(X_n), f(Y_n)) (App. A.2, Fig. 3), per replicate (R,)."""
    num = (FX * FY).sum(-1)
    den = (FX.norm(dim=-1) * FY.norm(dim=-1)).clamp(min=1e-30)
    return (num / den).mean(-1)

