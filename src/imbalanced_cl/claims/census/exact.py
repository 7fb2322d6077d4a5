"""Exact expectations of the Def. B.1 census (Lemma B.2), and the paper's own approximations.

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

import functools
import math

import numpy as np
import torch

from .sets import constants, thresholds


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


# 7 arguments: the event (d, a, b), the draws (n, seed), a memory cap and the device
def log_p_one_above(d: int, a: float, b: float, n: int = 4000, seed: int = 12345,
                     max_elems: int = 2 ** 22, device="cpu") -> tuple[float, float]:
    """log P(u_j^2 >= a and u_j'^2 <= b for all j' != j), u uniform on the unit sphere of R^d (a >= 0, b > 0).

    Conditional (Rao-Blackwellised) Monte Carlo, see the module docstring: draw the d-1 other coefficients,
    S' = their sum of squares and Mx = their largest square; the event is then exactly
    g_j^2 >= max(a S'/(1-a), Mx/b - S'), whose probability is the Gaussian tail erfc(sqrt(./2)), computed
    in log space. Returns (log p, relative standard error of p). The error is ~1-3% when the event is
    driven by g_j alone (balanced data); when it also needs the others to be atypically small (rho < 1 at
    large d) a few draws dominate and the reported relative error grows: the notebook marks those points.
    The draws depend on (d, n, seed) alone, not on (a, b): they are made once, on `device` (_other_squares).
    """
    from scipy.special import log_ndtr, logsumexp
    if a >= 1.0:
        return float("-inf"), 0.0
    S, Mx = _other_squares(d, n, seed, max_elems, str(torch.device(device)))
    thr = np.maximum(np.maximum(a * S / (1.0 - a), Mx / b - S), 0.0)
    lp = math.log(2.0) + log_ndtr(-np.sqrt(thr))      # log P(|g| >= sqrt(thr)), one per draw
    logp = float(logsumexp(lp) - math.log(lp.size))
    w = np.exp(lp - lp.max())
    rel = float(w.std(ddof=1) / math.sqrt(w.size) / w.mean()) if w.size > 1 and w.mean() > 0 else float("nan")
    return logp, rel


@functools.lru_cache(maxsize=64)
def _other_squares(d: int, n: int, seed: int, max_elems: int, device: str) -> tuple[np.ndarray, np.ndarray]:
    """(S', Mx) of n draws of the d-1 other coefficients: their sums of squares and largest squares (read-only).

    Drawn in blocks of at most max_elems numbers from one stream (seed + 7919 d) on `device`; only the two (n,)
    results come back to the host. Kept per (d, n, seed): notebook 02 asks three events at every ratio of one d.
    """
    gen = torch.Generator(device=device).manual_seed(seed + 7919 * d)
    block = max(1, min(n, max_elems // max(d - 1, 1)))
    sums, maxes = [], []
    done = 0
    while done < n:
        k = min(block, n - done)
        g2 = torch.randn(k, d - 1, generator=gen, dtype=torch.float64, device=device).pow(2)
        sums.append(g2.sum(-1))
        maxes.append(g2.amax(-1))
        done += k
    S, Mx = torch.cat(sums).cpu().numpy(), torch.cat(maxes).cpu().numpy()
    S.flags.writeable = Mx.flags.writeable = False      # shared by every caller of the cache
    return S, Mx


def p_one_above(d: int, a: float, b: float, **kw) -> float:
    """P(u_j^2 >= a and all other u_j'^2 <= b) (see log_p_one_above)."""
    return math.exp(log_p_one_above(d, a, b, **kw)[0])


def p_lucky(d: int, rho: float, gamma: float) -> float:
    """P(i in M_j*) (accurate approximation, see module docstring): E|M_j*| = m p_lucky."""
    a, b = thresholds(d, rho, gamma)
    return p_one_above(d, a, b)


def log_p_lucky(d: int, rho: float, gamma: float) -> float:
    """log P(i in M_j*), resolved far below float underflow (premise map: the m that makes E|M_j*| = 1)."""
    a, b = thresholds(d, rho, gamma)
    return log_p_one_above(d, a, b)[0]


def p_single(d: int, rho: float, gamma: float) -> float:
    """P(|N_i| = 1) at initialisation = d P(u_j^2 >= b, others < b) (same approximation)."""
    _, b = thresholds(d, rho, gamma)
    return d * p_one_above(d, b, b)


def p_B_exact(d: int, rho: float, gamma: float) -> float:
    """P(every j' != j has u_j'^2 < b): the event B_i of eq. (238) without the paper's step Pr[B_i] = 1."""
    return p_one_above(d, 0.0, thresholds(d, rho, gamma)[1])


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
