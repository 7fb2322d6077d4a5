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

The exact expectations of these sets live in exact.py.
"""
from __future__ import annotations

import math

import torch

from ...validate import check_float, check_int

STREAM_CENSUS = 5  # random stream of census draws, apart from dictionary, init, train, test and theory


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


# 7 arguments: the array's sizes (R, m, d), its stream (seed, extra), its dtype and its device
def gaussian_coef(R: int, m: int, d: int, seed: int, extra: int = 0, dtype=torch.float32,
                  device="cpu") -> torch.Tensor:
    """(R, m, d) i.i.d. N(0,1) coefficients on `device`, replicate r drawn from its own stream there (module docstring;
    on the CPU the numbers every CPU record was made with, on a GPU its generator's: the same law)."""
    from ...sim.data import generator
    return torch.stack([torch.randn(m, d, generator=generator(seed, r, STREAM_CENSUS, extra, device), dtype=dtype,
                                    device=device) for r in range(R)])


# 8 arguments: the grid point (d, rho, gamma), the Monte-Carlo size and seed (n_neurons, R, seed), a memory cap and
# the device
def mc_census(d: int, rho: float, gamma: float, n_neurons: int, R: int, seed: int = 0,
              max_elems: int = 2 ** 24, device="cpu") -> dict:
    """Monte Carlo census at initialisation: per replicate, rates over n_neurons Gaussian neurons.

    Neurons are drawn in blocks of at most max_elems numbers (memory stays bounded at d = 1e4), on `device`, where
    the counts also accumulate (the host reads them once, at the end). Returns numpy arrays of shape (R,):
      p_ord   fraction of (i, j) with i in M_j          -> E|M_j| / m
      p_lucky fraction of (i, j) with i in M_j*         -> E|M_j*| / m
      Ni      mean |N_i|
      single  fraction of neurons with |N_i| = 1
      B       fraction of (i, j) with every j' != j below the c2 threshold (the paper's event B_i)
    and the hit counts (for intervals when rates are tiny).
    """
    block = max(1, min(n_neurons, max_elems // d))
    a, b = thresholds(d, rho, gamma)
    # counts are integers below 2^53: float64 sums are exact, so summing on the device gives the host's numbers
    acc = {k: torch.zeros(R, dtype=torch.float64, device=device) for k in ("n_ord", "n_lucky", "sum_Ni", "n_single",
                                                                          "n_B")}
    done = 0
    k = 0
    while done < n_neurons:
        nb = min(block, n_neurons - done)
        g = gaussian_coef(R, nb, d, seed, extra=k, device=device)
        c = census_of(g, d, rho, gamma)
        n_ord = c["Ni"]                                   # (R, nb)
        acc["n_ord"] += n_ord.sum(-1).double()
        acc["n_lucky"] += c["lucky"].sum((-1, -2)).double()
        acc["sum_Ni"] += n_ord.sum(-1).double()
        acc["n_single"] += (n_ord == 1).sum(-1).double()
        # B for (i, j): no j' != j above b  <=>  n_ord - [j ordinary] == 0
        acc["n_B"] += (n_ord.unsqueeze(-1) - c["ordinary"].long() == 0).sum((-1, -2)).double()
        done += nb
        k += 1
    out = {key: v.cpu().numpy() for key, v in acc.items()}
    pairs = n_neurons * d
    return {"p_ord": out["n_ord"] / pairs, "p_lucky": out["n_lucky"] / pairs, "Ni": out["sum_Ni"] / n_neurons,
            "single": out["n_single"] / n_neurons, "B": out["n_B"] / pairs,
            "hits_lucky": out["n_lucky"], "hits_ord": out["n_ord"], "n_neurons": n_neurons, "a": a, "b": b}
