"""Statistics used by every claim: t-intervals over replicates, log-log fits, binomial and rank statistics."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
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


@dataclass
class SlopeFit:
    """Least-squares slope of log y on log x with a 95% interval (t-interval of the regression slope,
    or of the per-replicate slopes when replicates are given)."""

    slope: float
    lo: float
    hi: float
    intercept: float
    n: int


def fit_loglog(x, y) -> SlopeFit:
    """Fit log y = c + slope log x over points with x, y > 0 (x, y: 1-D arrays). Interval from the
    residual standard error of the slope (n - 2 degrees of freedom)."""
    x, y = np.asarray(x, float).ravel(), np.asarray(y, float).ravel()
    ok = (x > 0) & (y > 0) & np.isfinite(x) & np.isfinite(y)
    lx, ly = np.log(x[ok]), np.log(y[ok])
    n = lx.size
    if n < 2 or np.ptp(lx) == 0:
        return SlopeFit(float("nan"), float("nan"), float("nan"), float("nan"), n)
    xc = lx - lx.mean()
    slope = float((xc * (ly - ly.mean())).sum() / (xc ** 2).sum())
    icpt = float(ly.mean() - slope * lx.mean())
    if n < 3:
        return SlopeFit(slope, float("nan"), float("nan"), icpt, n)
    resid = ly - icpt - slope * lx
    se = math.sqrt(float((resid ** 2).sum()) / (n - 2) / float((xc ** 2).sum()))
    h = t975(n - 2) * se
    return SlopeFit(slope, slope - h, slope + h, icpt, n)


def replicate_mean(slopes, intercepts=None) -> SlopeFit:
    """Mean of per-replicate slopes (non-finite ones dropped) with its 95% t-interval over replicates;
    the intercept is the mean of the per-replicate intercepts, if given."""
    s = np.asarray(slopes, float)
    s = s[np.isfinite(s)]
    if s.size == 0:
        return SlopeFit(float("nan"), float("nan"), float("nan"), float("nan"), 0)
    mean = float(s.mean())
    intercept = float("nan") if intercepts is None else float(np.nanmean(intercepts))
    if s.size < 2:
        return SlopeFit(mean, float("nan"), float("nan"), intercept, 1)
    h = t975(s.size - 1) * float(s.std(ddof=1)) / math.sqrt(s.size)
    return SlopeFit(mean, mean - h, mean + h, intercept, int(s.size))


def fit_loglog_replicates(x, Y) -> SlopeFit:
    """Per-replicate log-log slopes of Y[r] (R, k) on x (k,), then their mean and 95% t-interval over r."""
    Y = np.asarray(Y, float)
    fits = [fit_loglog(x, Y[r]) for r in range(Y.shape[0])]
    return replicate_mean([f.slope for f in fits], [f.intercept for f in fits])


def binom_ci(k: float, n: float) -> tuple[float, float]:
    """95% Wilson interval of a binomial rate k/n (used for Monte-Carlo rates pooled over replicates)."""
    if n <= 0:
        return float("nan"), float("nan")
    z = 1.96
    p = k / n
    den = 1 + z * z / n
    c = (p + z * z / (2 * n)) / den
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return max(0.0, c - h), min(1.0, c + h)


def spearman(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Spearman rank correlation of x (k,) with each row of y (..., k); ties get average ranks; 0 if y is constant."""
    from scipy.stats import rankdata
    rx = rankdata(x)
    ry = rankdata(y, axis=-1)
    rx, ry = rx - rx.mean(), ry - ry.mean(-1, keepdims=True)
    den = np.sqrt((rx ** 2).sum() * (ry ** 2).sum(-1))
    num = (ry * rx).sum(-1)
    return np.where(den > 0, num / np.where(den > 0, den, 1.0), 0.0)


def trend(eps: tuple, values: np.ndarray, boot: int, seed: int) -> tuple[float, float, float, np.ndarray]:
    """Rank correlation of the repeat-mean curve with eps_min, averaged over NSR levels, with a bootstrap interval.

    values: (n_sigma, n_eps, repeats). Repeats are resampled jointly across NSR levels and eps_min (the
    design is paired within a repeat). Returns (rho, lo, hi, rho per sigma level).
    """
    x = np.asarray(eps, dtype=float)
    per = spearman(x, np.nanmean(values, axis=-1))
    R = values.shape[-1]
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, R, size=(boot, R))
    means = np.nanmean(values[:, :, idx], axis=-1)          # (n_sigma, n_eps, boot)
    rb = spearman(x, np.moveaxis(means, -1, 0)).mean(-1)     # (boot,)
    lo, hi = np.percentile(rb, [2.5, 97.5])
    return float(per.mean()), float(lo), float(hi), per


def loglog_slopes(x: torch.Tensor, Y: torch.Tensor) -> torch.Tensor:
    """Per replicate, the least-squares slope of log Y[r] against log x over positive entries (R,); NaN if < 2."""
    return torch.tensor([loglog_fit(x, Y[r])[0] for r in range(Y.shape[0])])


def ci(x: torch.Tensor) -> tuple[float, float, float]:
    """(mean, lo, hi) of a (R,) tensor over replicates (mean_ci) as floats."""
    m, lo, hi = mean_ci(x.reshape(-1))
    return float(m), float(lo), float(hi)
