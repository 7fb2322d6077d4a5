"""The initialisation census of Definition B.1 and Lemma B.2: ordinary sets M_j, lucky sets M_j*, and N_i.

Definition B.1 (eqs. 26-28), with g_ij = <w_i^(0), M_j> and s_i = ||M M^T w_i^(0)||^2 = sum_j g_ij^2:

    i in M_j   (ordinary)  iff  g_ij^2 >= c2 (log d / d) s_i                                     (26)
    i in M_j*  (lucky)     iff  g_ij^2 >= c1 (log d / d) s_i  and  g_ij'^2 <= c2 (log d / d) s_i  for all j' != j  (27)
    c1 = 2 (1 + gamma) (eps_max/eps_min)^2,   c2 = 2 (1 - gamma) (eps_min/eps_max)^2               (28)
    N_i = {j : i in M_j}                                                                          (245)

Why M need not be materialised. w_i^(0) ~ N(0, sigma0^2 I_{d1}) is rotation invariant and M has orthonormal
columns, so (g_i1, ..., g_id) = M^T w_i^(0) ~ N(0, sigma0^2 I_d), independent across i and j, whatever M is.
Every quantity in Def. B.1 is a function of the g_ij alone (s_i is their squared norm), so a census at
initialisation draws the (R, m, d) Gaussian array directly: d1 drops out, and d up to 1e4 is cheap.
The definition is also scale free (both sides scale with sigma0^2), so sigma0 = 1 here.

Exact laws used for the expectations:
  * u_ij^2 = g_ij^2 / s_i ~ Beta(1/2, (d-1)/2) (a squared coordinate of a uniform unit vector in R^d), so
    P(i in M_j) = I_{1-b}((d-1)/2, 1/2) with b = c2 log d / d: exact, for every d. E|M_j| = m P(i in M_j)
    and E|N_i| = d P(i in M_j).
  * Lucky sets have no closed form: the c2 condition couples every coordinate through s_i (a lucky
    neuron's own large g_ij^2 inflates s_i, which is what lets the others pass). But conditionally on the
    d-1 other coefficients (S' = their sum of squares, Mx = their largest square) the event is exact and
    one-dimensional:  g_ij^2 >= max( a S'/(1-a),  Mx/b - S' ),  a = c1 log d/d, b = c2 log d/d,
    whose probability is a Gaussian tail. So P(i in M_j*) = E_{g_-j}[ erfc( sqrt(max(..)/2) ) ]: an
    average of exact tails over draws of the others (Rao-Blackwellised Monte Carlo). Its standard error is
    reported and is below 1% at the default sample size, and it resolves probabilities of 1e-40, far below
    anything plain Monte Carlo can see. With a = b it gives P(N_i = {j}); with a = 0, P(B_i).
    (An earlier attempt that replaced the leave-one-out sums by one independent chi-square was off by a
    factor 2-1000 in exactly this regime: the coupling is the whole effect.)
  * The paper's own steps (eqs. 236-238): p1 = P(g >= sqrt(c1 log d)), p2 = P(g >= sqrt(c2 log d)) for a
    standard normal g (one-sided, with s_i replaced by its mean d), and Pr[B_i] = (1 - p2)^{d-1}, which the
    paper sets to 1 (L1967). Since (d-1) p2 ~ d^{1 - (1-gamma) rho^2} / sqrt(log d) -> infinity for rho < 1,
    (1-p2)^{d-1} -> 0 instead (brief §6 item 1); `paper_pr_B` and `mc_census` let a notebook test that.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from .config import ParameterError, check, check_float, check_grid, check_int

STREAM_CENSUS = 5  # random stream of census draws, apart from dictionary, init, train, test and theory


# ----------------------------------------------------------------------------------------------------
# thresholds and the paper's exponents
# ----------------------------------------------------------------------------------------------------
def check_ratio(name: str, rho) -> None:
    """eps_min/eps_max must lie in (0, 1]."""
    check_float(name, rho, 0.0, 1.0, lo_open=True)


def check_d(name: str, d) -> None:
    """Number of features: an integer >= 2 (log d / d needs d >= 2)."""
    check_int(name, d, 2)


def constants(rho: float, gamma: float) -> tuple[float, float]:
    """(c1, c2) of eq. (28) for the ratio rho = eps_min/eps_max."""
    return 2.0 * (1.0 + gamma) / rho ** 2, 2.0 * (1.0 - gamma) * rho ** 2


def thresholds(d: int, rho: float, gamma: float) -> tuple[float, float]:
    """(a, b) = (c1 log d / d, c2 log d / d): thresholds on u_ij^2 = g_ij^2 / s_i (eqs. 26-27)."""
    c1, c2 = constants(rho, gamma)
    return c1 * math.log(d) / d, c2 * math.log(d) / d


def omega1(C_m: float, rho: float, gamma: float) -> float:
    """Exponent of the lucky-set lower bound |M_j*| >= Omega(d^omega1) (eq. 32)."""
    return C_m - (1.0 + gamma) / rho ** 2


def omega2(C_m: float, rho: float, gamma: float) -> float:
    """Exponent of the ordinary-set upper bound |M_j| <= O(d^omega2) (eq. 32)."""
    return C_m - (1.0 - gamma) * rho ** 2


def ni_exponent(rho: float, gamma: float = 0.0) -> float:
    """Exponent of |N_i| <= O(d^{1 - rho^2 (1 - gamma)}) (Lemma B.2(d); eq. 14 has gamma = 0)."""
    return 1.0 - (1.0 - gamma) * rho ** 2


def single_exponent(rho: float) -> float:
    """Exponent of the single-feature count Omega(m d^{-(eps_max/eps_min)^2}) (Thm 3.1; eq. 9): -1/rho^2."""
    return -1.0 / rho ** 2


# ----------------------------------------------------------------------------------------------------
# the census of given coefficients
# ----------------------------------------------------------------------------------------------------
def census_of(g: torch.Tensor, d: int, rho: float, gamma: float) -> dict:
    """Def. B.1 applied to coefficients g (..., m, d) = <w_i^(0), M_j>: boolean membership arrays.

    Returns {"ordinary": (..., m, d) i in M_j, "lucky": (..., m, d) i in M_j*, "Ni": (..., m) |N_i|}.
    Works on the coefficients of a trained run's W0 @ M as well as on fresh Gaussian draws.
    """
    a, b = thresholds(d, rho, gamma)
    u2 = g.pow(2) / g.pow(2).sum(-1, keepdim=True).clamp(min=1e-300)
    ordinary = u2 >= b
    big = u2 >= a
    n_ord = ordinary.sum(-1, keepdim=True)
    # lucky for j: big on j and no other j' above b. Since a > b, big on j implies ordinary on j, so "no
    # other above b" is n_ord == 1 (a lucky neuron is lucky for exactly one feature).
    lucky = big & (n_ord == 1)
    return {"ordinary": ordinary, "lucky": lucky, "Ni": n_ord.squeeze(-1)}


def gaussian_coef(R: int, m: int, d: int, seed: int, extra: int = 0, dtype=torch.float32) -> torch.Tensor:
    """(R, m, d) i.i.d. N(0,1) coefficients, replicate r drawn from its own stream (see module docstring)."""
    from .data import generator
    return torch.stack([torch.randn(m, d, generator=generator(seed, r, STREAM_CENSUS, extra), dtype=dtype)
                        for r in range(R)])


def mc_census(d: int, rho: float, gamma: float, n_neurons: int, R: int, seed: int = 0,
              max_elems: int = 2 ** 24) -> dict:
    """Monte Carlo census at initialisation: per replicate, rates over n_neurons Gaussian neurons.

    Neurons are drawn in blocks of at most max_elems numbers (memory stays bounded at d = 1e4). Returns
    numpy arrays of shape (R,):
      p_ord   fraction of (i, j) with i in M_j          -> E|M_j| / m
      p_lucky fraction of (i, j) with i in M_j*         -> E|M_j*| / m
      Ni      mean |N_i|
      single  fraction of neurons with |N_i| = 1
      B       fraction of (i, j) with every j' != j below the c2 threshold (the paper's event B_i)
    and the hit counts (for intervals when rates are tiny).
    """
    block = max(1, min(n_neurons, max_elems // d))
    a, b = thresholds(d, rho, gamma)
    out = {k: np.zeros(R) for k in ("n_ord", "n_lucky", "sum_Ni", "n_single", "n_B")}
    done = 0
    k = 0
    while done < n_neurons:
        nb = min(block, n_neurons - done)
        g = gaussian_coef(R, nb, d, seed, extra=k)
        c = census_of(g, d, rho, gamma)
        n_ord = c["Ni"]                                   # (R, nb)
        out["n_ord"] += n_ord.sum(-1).double().numpy()
        out["n_lucky"] += c["lucky"].sum((-1, -2)).double().numpy()
        out["sum_Ni"] += n_ord.sum(-1).double().numpy()
        out["n_single"] += (n_ord == 1).sum(-1).double().numpy()
        # B for (i, j): no j' != j above b  <=>  n_ord - [j ordinary] == 0
        nB = (n_ord.unsqueeze(-1) - c["ordinary"].long() == 0).sum((-1, -2))
        out["n_B"] += nB.double().numpy()
        done += nb
        k += 1
    pairs = n_neurons * d
    return {"p_ord": out["n_ord"] / pairs, "p_lucky": out["n_lucky"] / pairs, "Ni": out["sum_Ni"] / n_neurons,
            "single": out["n_single"] / n_neurons, "B": out["n_B"] / pairs,
            "hits_lucky": out["n_lucky"], "hits_ord": out["n_ord"], "n_neurons": n_neurons, "a": a, "b": b}


# ----------------------------------------------------------------------------------------------------
# exact (Gaussian-tail) expectations
# ----------------------------------------------------------------------------------------------------
def p_ordinary(d: int, rho: float, gamma: float) -> float:
    """P(i in M_j) = P(Beta(1/2, (d-1)/2) >= c2 log d / d): exact."""
    from scipy.special import betainc
    _, b = thresholds(d, rho, gamma)
    if b >= 1.0:
        return 0.0
    return float(betainc((d - 1) / 2.0, 0.5, 1.0 - b))   # P(X >= b) = I_{1-b}((d-1)/2, 1/2)


def expected_Ni(d: int, rho: float, gamma: float) -> float:
    """E|N_i| at initialisation = d P(i in M_j): exact."""
    return d * p_ordinary(d, rho, gamma)


def _log_p_one_above(d: int, a: float, b: float, n: int = 4000, seed: int = 12345,
                     max_elems: int = 2 ** 22) -> tuple[float, float]:
    """log P(u_j^2 >= a and u_j'^2 <= b for all j' != j), u uniform on the unit sphere of R^d (a >= 0, b > 0).

    Conditional (Rao-Blackwellised) Monte Carlo, see the module docstring: draw the d-1 other coefficients,
    S' = their sum of squares and Mx = their largest square; the event is then exactly
    g_j^2 >= max(a S'/(1-a), Mx/b - S'), whose probability is the Gaussian tail erfc(sqrt(./2)), computed
    in log space. Returns (log p, relative standard error of p). The error is ~1-3% when the event is
    driven by g_j alone (balanced data); when it also needs the others to be atypically small (rho < 1 at
    large d) a few draws dominate and the reported relative error grows: the notebook marks those points.
    """
    from scipy.special import log_ndtr, logsumexp
    if a >= 1.0:
        return float("-inf"), 0.0
    gen = torch.Generator().manual_seed(seed + 7919 * d)
    block = max(1, min(n, max_elems // max(d - 1, 1)))
    logs = []
    done = 0
    while done < n:
        k = min(block, n - done)
        g2 = torch.randn(k, d - 1, generator=gen, dtype=torch.float64).pow(2)
        S, Mx = g2.sum(-1).numpy(), g2.amax(-1).numpy()
        thr = np.maximum(np.maximum(a * S / (1.0 - a), Mx / b - S), 0.0)
        logs.append(math.log(2.0) + log_ndtr(-np.sqrt(thr)))      # log P(|g| >= sqrt(thr))
        done += k
    lp = np.concatenate(logs)
    logp = float(logsumexp(lp) - math.log(lp.size))
    w = np.exp(lp - lp.max())
    rel = float(w.std(ddof=1) / math.sqrt(w.size) / w.mean()) if w.size > 1 and w.mean() > 0 else float("nan")
    return logp, rel


def _p_one_above(d: int, a: float, b: float, **kw) -> float:
    """P(u_j^2 >= a and all other u_j'^2 <= b) (see _log_p_one_above)."""
    return math.exp(_log_p_one_above(d, a, b, **kw)[0])


def p_lucky(d: int, rho: float, gamma: float) -> float:
    """P(i in M_j*) (accurate approximation, see module docstring): E|M_j*| = m p_lucky."""
    a, b = thresholds(d, rho, gamma)
    return _p_one_above(d, a, b)


def p_single(d: int, rho: float, gamma: float) -> float:
    """P(|N_i| = 1) at initialisation = d P(u_j^2 >= b, others < b) (same approximation)."""
    _, b = thresholds(d, rho, gamma)
    return d * _p_one_above(d, b, b)


def p_B_exact(d: int, rho: float, gamma: float) -> float:
    """P(every j' != j has u_j'^2 < b): the event B_i of eq. (238) without the paper's step Pr[B_i] = 1."""
    return _p_one_above(d, 0.0, thresholds(d, rho, gamma)[1])


# --- the paper's own steps (eqs. 236-238) ----------------------------------------------------------------
def paper_p1(d: int, rho: float, gamma: float) -> float:
    """p1 = P(g >= sqrt(c1 log d)), g ~ N(0,1) (eq. 236, s_i replaced by its mean d)."""
    from scipy.special import ndtr
    c1, _ = constants(rho, gamma)
    return float(1.0 - ndtr(math.sqrt(c1 * math.log(d))))


def paper_p2(d: int, rho: float, gamma: float) -> float:
    """p2 = P(g >= sqrt(c2 log d)), g ~ N(0,1) (eq. 237)."""
    from scipy.special import ndtr
    _, c2 = constants(rho, gamma)
    return float(1.0 - ndtr(math.sqrt(c2 * math.log(d))))


def paper_pr_B(d: int, rho: float, gamma: float) -> float:
    """(1 - p2)^{d-1}: the quantity the paper sets to 1 at L1967 (brief §6 item 1)."""
    return (1.0 - paper_p2(d, rho, gamma)) ** (d - 1)


def paper_p_lucky(d: int, rho: float, gamma: float, pr_B_is_one: bool = True) -> float:
    """The paper's Pr[A_i ∩ B_i] = (p1/2) Pr[B_i] (eq. 238), with Pr[B_i] = 1 as written or (1-p2)^{d-1}."""
    pB = 1.0 if pr_B_is_one else paper_pr_B(d, rho, gamma)
    return 0.5 * paper_p1(d, rho, gamma) * pB


def exact_table(ds, rhos, gamma: float, C_m: float) -> dict:
    """Exact expectations on a (d, rho) grid: arrays of shape (len(ds), len(rhos)) with m = d^C_m."""
    ds, rhos = list(ds), list(rhos)
    shape = (len(ds), len(rhos))
    out = {k: np.zeros(shape) for k in ("p_ord", "p_lucky", "Ni", "single", "B", "paper_B", "paper_lucky",
                                         "m", "E_Mj", "E_Mj_star")}
    for i, d in enumerate(ds):
        m = float(d) ** C_m
        for k, rho in enumerate(rhos):
            po, pl = p_ordinary(d, rho, gamma), p_lucky(d, rho, gamma)
            out["p_ord"][i, k], out["p_lucky"][i, k] = po, pl
            out["Ni"][i, k] = d * po
            out["single"][i, k] = p_single(d, rho, gamma)
            out["B"][i, k] = p_B_exact(d, rho, gamma)
            out["paper_B"][i, k] = paper_pr_B(d, rho, gamma)
            out["paper_lucky"][i, k] = paper_p_lucky(d, rho, gamma)
            out["m"][i, k] = m
            out["E_Mj"][i, k] = m * po
            out["E_Mj_star"][i, k] = m * pl
    return out


# ----------------------------------------------------------------------------------------------------
# exponent fits
# ----------------------------------------------------------------------------------------------------
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
    from .metrics import t975
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
    from .metrics import t975
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


# ----------------------------------------------------------------------------------------------------
# configuration of the census and of notebook 02
# ----------------------------------------------------------------------------------------------------
def _check_ds(name: str, v) -> None:
    check_grid(name, v, check_d)


def _check_ratios(name: str, v) -> None:
    check_grid(name, v, check_ratio)


@dataclass(frozen=True)
class CensusConfig:
    """The initialisation census on a (d, eps_min/eps_max) grid (Def. B.1, Lemma B.2). No training."""

    census_ds: tuple = (10, 30, 100, 300, 1000, 3000, 10000)   # numbers of features d (each >= 2)
    census_ratios: tuple = (1.0, 0.8, 0.6, 0.5)                # eps_min/eps_max, each in (0, 1]
    gamma: float = 0.1            # the "small constant" of eq. (28), in [0, 1)
    C_m: float = 2.0              # m = d^C_m neurons for the expected counts (Lemma B.2(c))
    census_neurons: int = 20000   # Monte-Carlo neurons per replicate and grid point
    census_max_elems: int = 2000000  # cap on Monte-Carlo numbers per replicate and d (neurons x d)
    census_R: int = 4             # Monte-Carlo replicates (intervals are over these)
    exact_samples: int = 4000     # draws of the conditional (Rao-Blackwellised) lucky-set expectation
    seed: int = 0

    def __post_init__(self):
        self.validate()

    def validate(self) -> None:
        """Raise ParameterError naming the first bad field."""
        _check_ds("census_ds", self.census_ds)
        _check_ratios("census_ratios", self.census_ratios)
        check_float("gamma", self.gamma, 0.0, 1.0, hi_open=True)
        check_float("C_m", self.C_m, 0.0, 4.0, lo_open=True)
        check_int("census_neurons", self.census_neurons, 10)
        check_int("census_max_elems", self.census_max_elems, 1000)
        check_int("census_R", self.census_R, 2)
        check_int("exact_samples", self.exact_samples, 100)
        check_int("seed", self.seed, 0, 2**31 - 1)

    @classmethod
    def from_namespace(cls, ns, **overrides):
        """Build from a notebook's globals(), taking only this class's fields (lists become tuples)."""
        from dataclasses import fields as _fields
        kw = {f.name: ns[f.name] for f in _fields(cls) if f.name in ns}
        kw.update(overrides)
        return cls(**{k: (tuple(v) if isinstance(v, list) else v) for k, v in kw.items()})

    def to_dict(self) -> dict:
        """Plain dict of all fields."""
        import dataclasses
        return dataclasses.asdict(self)


def mc_census_multi(d: int, rhos, gamma: float, n_neurons: int, R: int, seed: int = 0,
                    max_elems: int = 2 ** 22) -> list[dict]:
    """mc_census for several ratios on the same Gaussian draws (the ratio only moves the thresholds)."""
    block = max(1, min(n_neurons, max_elems // d))
    keys = ("n_ord", "n_lucky", "n_single", "n_B")
    acc = [{k: np.zeros(R) for k in keys} for _ in rhos]
    done, blk = 0, 0
    while done < n_neurons:
        nb = min(block, n_neurons - done)
        g = gaussian_coef(R, nb, d, seed, extra=blk)
        for q, rho in enumerate(rhos):
            c = census_of(g, d, rho, gamma)
            n_ord = c["Ni"]
            acc[q]["n_ord"] += n_ord.sum(-1).double().numpy()
            acc[q]["n_lucky"] += c["lucky"].sum((-1, -2)).double().numpy()
            acc[q]["n_single"] += (n_ord == 1).sum(-1).double().numpy()
            acc[q]["n_B"] += (n_ord.unsqueeze(-1) - c["ordinary"].long() == 0).sum((-1, -2)).double().numpy()
        done += nb
        blk += 1
    pairs = n_neurons * d
    return [{"p_ord": a["n_ord"] / pairs, "p_lucky": a["n_lucky"] / pairs, "Ni": a["n_ord"] / n_neurons,
             "single": a["n_single"] / n_neurons, "B": a["n_B"] / pairs, "hits_lucky": a["n_lucky"],
             "n_neurons": n_neurons} for a in acc]


def run_census(cfg: CensusConfig, progress: bool = False) -> dict:
    """Monte Carlo and exact census on the whole grid: arrays of shape (len(ds), len(ratios)[, R])."""
    ds, rhos = list(cfg.census_ds), list(cfg.census_ratios)
    shape = (len(ds), len(rhos))
    mc = {k: np.zeros(shape + (cfg.census_R,)) for k in ("p_ord", "p_lucky", "Ni", "single", "B")}
    hits = np.zeros(shape)
    neurons = np.zeros(len(ds), dtype=int)
    ex = {k: np.zeros(shape) for k in ("p_ord", "p_lucky", "Ni", "single", "B", "paper_B", "paper_p1",
                                        "paper_p2", "rse_lucky")}
    for i, d in enumerate(ds):
        # Monte-Carlo neurons: census_neurons, capped so that one replicate holds <= census_max_elems numbers
        neurons[i] = max(50, min(cfg.census_neurons, cfg.census_max_elems // d))
        rs = mc_census_multi(d, rhos, cfg.gamma, int(neurons[i]), cfg.census_R, seed=cfg.seed + 1000 * i)
        for k, rho in enumerate(rhos):
            r = rs[k]
            for key in mc:
                mc[key][i, k] = r[key]
            hits[i, k] = r["hits_lucky"].sum()
            a, b = thresholds(d, rho, cfg.gamma)
            ex["p_ord"][i, k] = p_ordinary(d, rho, cfg.gamma)
            ex["Ni"][i, k] = d * ex["p_ord"][i, k]
            lp, rse = _log_p_one_above(d, a, b, n=cfg.exact_samples)
            ex["p_lucky"][i, k], ex["rse_lucky"][i, k] = math.exp(lp), rse
            ex["single"][i, k] = d * _p_one_above(d, b, b, n=cfg.exact_samples)
            ex["B"][i, k] = _p_one_above(d, 0.0, b, n=cfg.exact_samples)
            ex["paper_B"][i, k] = paper_pr_B(d, rho, cfg.gamma)
            ex["paper_p1"][i, k] = paper_p1(d, rho, cfg.gamma)
            ex["paper_p2"][i, k] = paper_p2(d, rho, cfg.gamma)
            if progress:
                print(f"d={d} rho={rho} done", flush=True)
    m = np.array([[float(d) ** cfg.C_m] * len(rhos) for d in ds])
    return {"ds": np.array(ds), "rhos": np.array(rhos), "mc": mc, "exact": ex, "m": m, "hits_lucky": hits,
            "neurons": neurons}
