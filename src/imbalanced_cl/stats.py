"""Statistics used by every claim: t-intervals over replicates, log-log fits, binomial and rank statistics."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.stats as sps
import torch

# The range of every measured quantity a verdict row shows (verdict.Verdict.quantity): an interval must stay inside
# it, and a point estimate outside it is an error, not a verdict.
RANGES: dict[str, tuple[float, float]] = {
    "real": (-math.inf, math.inf),     # a slope, a difference, a gap: any real number
    "fraction": (0.0, 1.0),            # a share, a proportion, a probability
    "cosine": (-1.0, 1.0),             # a signed cosine or a correlation
    "cosine_abs": (0.0, 1.0),          # |cos| or cos², a squared or absolute cosine
    "count": (0.0, math.inf),          # a number of things (a mean count over replicates included)
    "positive": (0.0, math.inf),       # a ratio, a norm, a time: never below 0
}


def in_range(x: float, quantity: str) -> bool:
    """Whether x lies in the declared range of `quantity` (NaN counts as inside: it is "not tested", not wrong)."""
    if quantity not in RANGES:
        raise ValueError(f"unknown quantity {quantity!r}; one of {tuple(RANGES)}")
    lo, hi = RANGES[quantity]
    return x is None or math.isnan(x) or lo <= x <= hi


def t975(df: int) -> float:
    """97.5% quantile of Student's t with df degrees of freedom (scipy.stats; NaN below df = 1)."""
    return float(sps.t.ppf(0.975, df)) if df >= 1 else float("nan")


def mean_ci(x: torch.Tensor, dim: int = 0) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Mean and 95% t-interval over replicates along `dim` (NaNs ignored); returns (mean, lo, hi)."""
    x = x.to(torch.float64)
    ok = ~torch.isnan(x)
    n = ok.sum(dim)
    mean = torch.where(ok, x, 0.0).sum(dim) / n.clamp(min=1)
    var = torch.where(ok, (x - mean.unsqueeze(dim)) ** 2, 0.0).sum(dim) / (n - 1).clamp(min=1)
    q = sps.t.ppf(0.975, (n - 1).cpu().double().numpy())           # NaN where n < 2
    half = torch.as_tensor(q, dtype=torch.float64, device=x.device) * (var / n.clamp(min=1)).sqrt()
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
    the intercept is the mean of the intercepts of the same replicates (finite ones), if given: a replicate whose
    slope is dropped does not lend its intercept to the line drawn with the mean slope."""
    s = np.asarray(slopes, float)
    keep = np.isfinite(s)
    s = s[keep]
    if s.size == 0:
        return SlopeFit(float("nan"), float("nan"), float("nan"), float("nan"), 0)
    mean = float(s.mean())
    b = np.asarray([] if intercepts is None else intercepts, float)
    b = b[keep][np.isfinite(b[keep])] if b.size else b
    intercept = float(b.mean()) if b.size else float("nan")
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
    """95% Wilson interval of a binomial rate k/n, k and n whole counts (scipy.stats.binomtest; NaN when n = 0)."""
    if n <= 0:
        return float("nan"), float("nan")
    if k != int(k) or n != int(n) or not 0 <= k <= n:
        raise ValueError(f"binom_ci needs whole counts 0 <= k <= n, got k={k!r}, n={n!r}")
    ci95 = sps.binomtest(int(k), int(n)).proportion_ci(0.95, method="wilson")
    return float(ci95.low), float(ci95.high)


def spearman(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Spearman rank correlation of x (k,) with each row of y (..., k); ties get average ranks; 0 if y is constant."""
    rx = sps.rankdata(x)
    ry = sps.rankdata(y, axis=-1)
    rx, ry = rx - rx.mean(), ry - ry.mean(-1, keepdims=True)
    den = np.sqrt((rx ** 2).sum() * (ry ** 2).sum(-1))
    num = (ry * rx).sum(-1)
    return np.where(den > 0, num / np.where(den > 0, den, 1.0), 0.0)


def trend(eps: tuple, values: np.ndarray, boot: int, seed: int) -> tuple[float, float, float, np.ndarray]:
    """Rank correlation of the repeat-mean curve with eps_min, averaged over NSR levels, with a bootstrap interval.

    values: (n_sigma, n_eps, repeats). The 95% percentile bootstrap (scipy.stats.bootstrap, `boot` resamples,
    seeded) resamples the repeats jointly across NSR levels and eps_min (the design is paired within a repeat);
    with one repeat there is nothing to resample and the interval is NaN. Returns (rho, lo, hi, rho per sigma level).
    """
    x = np.asarray(eps, dtype=float)

    def rho(idx: np.ndarray, axis: int = -1) -> np.ndarray:
        """Mean over sigma levels of Spearman(eps, repeat-mean curve), for repeat indices idx (..., repeats)."""
        means = np.nanmean(values[:, :, idx], axis=-1)              # (n_sigma, n_eps, ...)
        return spearman(x, np.moveaxis(means, 1, -1)).mean(0)

    R = values.shape[-1]
    per = spearman(x, np.nanmean(values, axis=-1))
    lo = hi = float("nan")
    if R >= 2:
        res = sps.bootstrap((np.arange(R),), rho, n_resamples=boot, vectorized=True, method="percentile",
                            rng=np.random.default_rng(seed))
        lo, hi = float(res.confidence_interval.low), float(res.confidence_interval.high)
    return float(per.mean()), lo, hi, per


def loglog_slopes(x: torch.Tensor, Y: torch.Tensor) -> torch.Tensor:
    """Per replicate, the least-squares slope of log Y[r] against log x over positive entries (R,); NaN if < 2."""
    return torch.tensor([loglog_fit(x, Y[r])[0] for r in range(Y.shape[0])])


def ci(x: torch.Tensor) -> tuple[float, float, float]:
    """(mean, lo, hi) of a (R,) tensor over replicates (mean_ci) as floats."""
    m, lo, hi = mean_ci(x.reshape(-1))
    return float(m), float(lo), float(hi)


def mean_ci_in(x, quantity: str = "real") -> tuple[float, float, float]:
    """Mean over replicates (NaNs dropped) and a 95% interval that stays inside the range of `quantity` (RANGES).

    real: the t-interval (mean_ci). Bounded or half-bounded quantities: the t-interval of the mean on a scale that
    maps the range onto the real line, carried back (the delta method, like the logit interval of a proportion):
    fraction and cosine_abs on the logit scale of (x - a)/(b - a), cosine on Fisher's z = atanh(x), count and positive
    on the log scale. The mean itself is the point estimate, so it always lies inside its interval; a mean on the
    edge of the range (every replicate there) has a zero-width interval, as the t-interval does. A value outside the
    range is an error (ValueError), not a measurement.
    """
    a = np.asarray(x.detach().cpu().double() if isinstance(x, torch.Tensor) else x, float).ravel()
    a = a[~np.isnan(a)]
    nan = float("nan")
    if a.size == 0:
        return nan, nan, nan
    if quantity not in RANGES:
        raise ValueError(f"unknown quantity {quantity!r}; one of {tuple(RANGES)}")
    lo_r, hi_r = RANGES[quantity]
    if ((a < lo_r) | (a > hi_r)).any():
        bad = a[(a < lo_r) | (a > hi_r)][0]
        raise ValueError(f"a {quantity} of {float(bad)!r} lies outside its range [{lo_r:g}, {hi_r:g}]")
    mean = float(a.mean())
    if a.size < 2:
        return mean, nan, nan
    h = t975(a.size - 1) * float(a.std(ddof=1)) / math.sqrt(a.size)
    if quantity == "real":
        return mean, mean - h, mean + h
    if h == 0.0:
        return mean, mean, mean
    if quantity in ("count", "positive"):
        if mean == 0.0:
            return mean, 0.0, 0.0
        k = math.exp(h / mean)                                  # d log(mean) = d mean / mean
        return mean, mean / k, mean * k
    u = (mean - lo_r) / (hi_r - lo_r)                           # onto [0, 1] (cosine: [-1, 1] -> [0, 1])
    if u in (0.0, 1.0):
        return mean, mean, mean
    hu = h / (hi_r - lo_r) / (u * (1.0 - u))                    # d logit(u) = du / (u (1 - u))
    z = math.log(u / (1.0 - u))
    def back(v):
        return lo_r + (hi_r - lo_r) / (1.0 + math.exp(-v))
    return mean, back(z - hu), back(z + hu)

