"""The Transformer-MLP encoder of eq. (4): frozen identity attention, then m BReLU neurons summed over tokens."""
from __future__ import annotations

import math

import torch

from .config import SimConfig
from .data import STREAM_INIT, generator


def brelu(s: torch.Tensor, b: torch.Tensor | float) -> torch.Tensor:
    """BReLU_b(s) = ReLU(s - b) - ReLU(-s - b)  (L57)."""
    return torch.relu(s - b) - torch.relu(-s - b)


def brelu_gate(s: torch.Tensor, b: torch.Tensor | float) -> torch.Tensor:
    """dBReLU_b/ds = 1{|s| >= b}, the indicator in eq. (21); at b = 0 the unit is the identity."""
    return (s.abs() >= b).to(s.dtype)


def brelu_and_gate(s: torch.Tensor, b: torch.Tensor, need_gate: bool = True):
    """BReLU_b(s) and its gate 1{|s| >= b} with few passes, for b >= 0; the training step's hot path. Consumes s.

    BReLU_b(s) = s - clamp(s, -b, b), and |clamp(s, -b, b)| = min(|s|, b) >= b exactly when |s| >= b.
    Equal to (brelu(s, b), brelu_gate(s, b)); the gate is None when need_gate is False.
    """
    c = torch.clamp(s, min=-b, max=b)
    gate = c.abs() >= b if need_gate else None
    return s.sub_(c), gate


def init_weights(cfg: SimConfig, replicates) -> torch.Tensor:
    """w_i ~ N(0, sigma0^2 I_d1) for each replicate, shape (R, m, d1)  (Alg. 1 step 1)."""
    return torch.stack([cfg.sigma0 * torch.randn(cfg.m, cfg.d1, generator=generator(cfg.seed, r, STREAM_INIT))
                        for r in replicates])


def preactivations(W: torch.Tensor, U: torch.Tensor) -> torch.Tensor:
    """<w_i, u^(r)> for every sample and token: (R,m,d1) x (R,n,L,d1) -> (R,n,L,m)."""
    return torch.einsum("rid,rnld->rnli", W, U)


def embed(W: torch.Tensor, U: torch.Tensor, b: torch.Tensor | None = None):
    """f(X) = (h_1..h_m), h_i = sum_r BReLU_{b_i}(<w_i, u^(r)>)  (eq. 4). Returns (h (R,n,m), preacts)."""
    P = preactivations(W, U)
    if b is None:
        return P.sum(dim=2), P
    return brelu(P, b[:, None, None, :]).sum(dim=2), P


def bias_at(cfg: SimConfig, W: torch.Tensor, t: int, T1: torch.Tensor) -> torch.Tensor:
    """Per-neuron bias b_i(t) (R, m): 0 up to and including T1 (or the fixed onset step, cfg.bias_onset), then
    bias_coef * a * sqrt(2 log d / d) * ||w_i|| * ramp.

    Lemma F.3 keeps b = 0 in Stage 1 so the dynamics are linear; Thm C.1(b,c) and Lemma D.1 fit
    together if the threshold on |<w_i, M_j>| is sqrt(2 log d / d) ||w_i(T1)|| (brief §1). The bias acts on
    a pre-activation <w_i, u^(r)>, and a feature on one token reaches u^(r) scaled by its magnitude and
    averaged over the L tokens by the attention (eq. 98), so a = E|z| / L converts that threshold into
    pre-activation units. After T1 the workshop version grows b by (1 + eta/d) per step (W eq. 70);
    uncapped that explodes, so the growth factor (1 + bias_ramp)^(t - T1) is capped at bias_ramp_max.
    """
    R, m, _ = W.shape
    if cfg.bias == "none":
        return torch.zeros(R, m, dtype=W.dtype, device=W.device)
    if cfg.bias_onset != "crossing":        # T1 set by eq. (33) or the workshop's T1 with unit constants (config.py)
        T1 = torch.full_like(T1, cfg.t1_onset_step)
    started = (T1 >= 0) & (T1 < t)          # Lemma F.3 (L1565): b = 0 for t <= T1, so the bias starts at T1 + 1
    elapsed = (t - T1 - 1).clamp(min=0).to(W.dtype)
    ramp = torch.clamp((1.0 + cfg.bias_ramp) ** elapsed, max=cfg.bias_ramp_max)
    a = 0.5 * (cfg.mag_lo + cfg.mag_hi) / cfg.L if cfg.bias_token_factor else 1.0
    base = cfg.bias_coef * a * math.sqrt(2 * math.log(cfg.d) / cfg.d) * W.norm(dim=-1)
    return torch.where(started[:, None], base * ramp[:, None], torch.zeros_like(base))
