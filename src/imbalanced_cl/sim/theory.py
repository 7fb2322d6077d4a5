"""Closed-form and parameter-free predictions that the notebooks plot against measurements."""
from __future__ import annotations

import math

import torch

from . import data as D
from .config import SimConfig

STREAM_THEORY = 4  # random stream for Monte-Carlo estimates, apart from training and test data


def loglog_over_d(d: int) -> float:
    """The sparsity scale log log d / d of Def. 3.1."""
    return math.log(math.log(d)) / d


def kappa_mc(cfg: SimConfig, n: int = 20000, replicates: int = 2, device=None) -> torch.Tensor:
    """kappa_j = E[<M_j, U_X><M_j, U_Y>], U = sum_r u^(r), by Monte Carlo over positive pairs (d,).

    With b = 0 the expected Stage-1 update is w <- (1 - eta lambda) w + eta (1 - 1/n) C w with
    C = E[U_X U_Y^T] ≈ M diag(kappa) M^T (negatives are independent and centred, so they cancel).
    The pairs are drawn and reduced on `device` (default: the run's, cfg.torch_device) as make_pairs draws them
    there; the d numbers come back on the CPU (on `meta`, which holds no numbers, they stay there).
    """
    reps = list(range(replicates))
    M = D.make_dictionaries(cfg, reps, cfg.torch_device if device is None else device)
    P = D.make_pairs(cfg, M, reps, n=n, purpose=STREAM_THEORY)
    ax = torch.einsum("rnd,rdj->rnj", P.UX.sum(2), M)
    ay = torch.einsum("rnd,rdj->rnj", P.UY.sum(2), M)
    kappa = (ax * ay).mean(dim=(0, 1))
    return kappa if kappa.device.type == "meta" else kappa.cpu()


def gain(cfg: SimConfig) -> float:
    """Factor in front of C w in the Stage-1 update: (1 - 1/n), times 1/tau when the loss is not tau-scaled."""
    g = 1.0 - 1.0 / cfg.n_pairs
    return g if cfg.tau_scaled else g / cfg.tau


def stage1_rate(cfg: SimConfig, kappa: torch.Tensor) -> torch.Tensor:
    """Predicted per-step log growth of |<w_i, M_j>| in Stage 1: log(1 - eta lambda + eta gain kappa_j)  (eq. 7)."""
    return torch.log1p(-cfg.lr * cfg.weight_decay + cfg.lr * gain(cfg) * kappa)


def paper_rate(cfg: SimConfig, eps: torch.Tensor, C_z: float = 1.0) -> torch.Tensor:
    """The paper's eq. (7) rate eps_j eta C_z loglog d / d - eta lambda, per step (C_z is a free constant)."""
    return cfg.lr * (eps * C_z * loglog_over_d(cfg.d) - cfg.weight_decay)


def perp_decay(cfg: SimConfig, steps: torch.Tensor) -> torch.Tensor:
    """Decay-only prediction for ||P_perp w_t|| / ||P_perp w_0|| = (1 - eta lambda)^t  (eq. 8, Lemma C.1(c))."""
    return (1.0 - cfg.lr * cfg.weight_decay) ** steps.to(torch.float64)


def t1_main(cfg: SimConfig) -> float:
    """Main paper's T1 scale d1 log d / (eta loglog d)  (eq. 33), constant omitted."""
    return cfg.d1 * math.log(cfg.d) / (cfg.lr * math.log(math.log(cfg.d)))


def t1_workshop(cfg: SimConfig) -> float:
    """Workshop version's T1 scale d log d / (eta loglog d)  (W351), constant omitted."""
    return cfg.d * math.log(cfg.d) / (cfg.lr * math.log(math.log(cfg.d)))


def t1_linear(cfg: SimConfig, kappa: torch.Tensor, t_max: int = 10**6) -> float:
    """T1 of the linear Stage-1 dynamics: first t with feature share >= 1/2 for a typical neuron (eq. 34).

    At init E<w,M_j>^2 = sigma0^2 per feature and the complement holds sigma0^2 (d1 - d); features grow by
    exp(2 t rate_j), the complement decays by (1 - eta lambda)^{2t}. Parameter-free given kappa.
    """
    r = stage1_rate(cfg, kappa).double()
    dec = 2 * math.log1p(-cfg.lr * cfg.weight_decay)
    lo, hi = 0.0, float(t_max)

    def share(t):   # feat / (feat + perp) in log space: both underflow for large t when every rate is negative
        log_feat = float(torch.logsumexp(2 * r * t, dim=0))
        log_perp = math.log(cfg.d1 - cfg.d) + dec * t if cfg.d1 > cfg.d else -math.inf
        return 1.0 / (1.0 + math.exp(min(log_perp - log_feat, 700.0)))

    if share(hi) < 0.5:
        return float("inf")
    for _ in range(80):  # bisection: share(t) is increasing once any feature outgrows the decay
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if share(mid) < 0.5 else (lo, mid)
    return hi
