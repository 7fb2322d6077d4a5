"""Notebook 09's measurements on weights (pure functions): feature share, cosines of f(x) with its noise and signal
parts, singleton neurons per atom, a ridge probe of z, and every one of them at once (measure)."""
from __future__ import annotations

import torch

from ...sim import data as D
from ...sim.config import SimConfig
from ...sim.encoder import embed
from .config import DecouplingConfig, Raw


def attend(X: torch.Tensor, cfg: SimConfig) -> torch.Tensor:
    """The frozen attention of eq. (4); with one token it is exactly the identity (a softmax over one entry is 1)."""
    return X if X.shape[-2] == 1 else D.attention(X, cfg)


def feature_share(W: torch.Tensor, M: torch.Tensor) -> torch.Tensor:
    """||M^T W^T||_F^2 / ||W||_F^2 per replicate (R,): the share of all weight in the feature span."""
    return (W @ M).pow(2).sum((-1, -2)) / W.pow(2).sum((-1, -2)).clamp(min=1e-30)


def cosine(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Row-wise cos(a, b) over the last dim, 0 where either vector is 0 (nothing to align)."""
    den = a.norm(dim=-1) * b.norm(dim=-1)
    return torch.where(den > 0, (a * b).sum(-1) / den.clamp(min=1e-30), torch.zeros_like(den))


def encode(W: torch.Tensor, tokens: torch.Tensor, b: torch.Tensor, cfg: SimConfig) -> torch.Tensor:
    """f(X) of the encoder (eq. 4): attention, then BReLU neurons summed over tokens; (R, n, m)."""
    return embed(W, attend(tokens, cfg), b)[0]


def singletons(W: torch.Tensor, M: torch.Tensor, rel: float, cos2_min: float) -> torch.Tensor:
    """Neurons per atom with N_i = {j} (Thm 3.4), counted per replicate (R, d).

    N_i = {j : |<w_i,M_j>| >= rel * max_j' |<w_i,M_j'>|}; a singleton for atom j also needs
    <w_i,M_j>^2 >= cos2_min ||w_i||^2, so a noise neuron whose largest feature coefficient stands alone
    by chance does not count.
    """
    a = (W @ M).abs()                                            # (R, m, d)
    top = a.amax(-1, keepdim=True)
    alone = (a >= rel * top).sum(-1) == 1                        # |N_i| = 1
    strong = a.pow(2) >= cos2_min * W.pow(2).sum(-1, keepdim=True)
    return (strong & (a == top) & alone.unsqueeze(-1)).sum(1)


def ridge_probe(F_fit, Z_fit, F_eval, Z_eval, ridge: float, energy: torch.Tensor) -> torch.Tensor:
    """Test MSE of a ridge probe z ~ f (with intercept) over E[z_j^2], per replicate and coordinate (R, d).

    Fit on (F_fit, Z_fit), evaluate on other samples. Dividing by the population energy E[z_j^2] (d,) makes
    the zero predictor score about 1 (Cor. 3.3's failure is Omega(1), Cor. 3.5's success o(1)), also for a
    rare feature that few test samples carry. The penalty is ridge times the mean feature variance, so it
    does not depend on the scale of f.
    """
    F_fit, F_eval = F_fit.double(), F_eval.double()
    Z_fit, Z_eval = Z_fit.double(), Z_eval.double()
    mu_f, mu_z = F_fit.mean(1, keepdim=True), Z_fit.mean(1, keepdim=True)
    A, B = F_fit - mu_f, Z_fit - mu_z
    G = A.transpose(1, 2) @ A
    lam = ridge * torch.diagonal(G, dim1=1, dim2=2).mean(-1).clamp(min=1e-30)
    eye = torch.eye(G.shape[-1], dtype=G.dtype)
    beta = torch.linalg.solve(G + lam[:, None, None] * eye, A.transpose(1, 2) @ B)
    pred = (F_eval - mu_f) @ beta + mu_z
    return ((Z_eval - pred).pow(2).mean(1) / energy.double()).float()


# 7 arguments: the network (W, b) and dictionary M, the two held-out sets, the probe's scale and the thresholds
def measure(W, b, M, test: Raw, fit: Raw, energy: torch.Tensor, cfg: DecouplingConfig) -> dict:
    """Every measurement at one time for R replicates: share (R,), align (R,), removal (R,),
    probe (R, d) and singles (R, d). Cosines are averaged over test samples with z != 0."""
    fx = encode(W, test.x, b, cfg)
    has = test.z.abs().sum(-1) > 0                               # samples that carry a feature
    def avg(c):
        return (c * has).sum(-1) / has.sum(-1).clamp(min=1)
    return {
        "share": feature_share(W, M),
        "align": avg(cosine(fx, encode(W, test.xi, b, cfg))),
        "removal": avg(cosine(fx, encode(W, test.signal, b, cfg))),
        "probe": ridge_probe(encode(W, fit.x, b, cfg), fit.z, fx, test.z, cfg.probe_ridge, energy),
        "singles": singletons(W, M, cfg.singleton_rel, cfg.singleton_cos2),
    }


def coverage(singles: torch.Tensor) -> torch.Tensor:
    """Fraction of atoms with at least one singleton neuron, per replicate: (..., d) -> (...)."""
    return (singles > 0).float().mean(-1)
