"""Algorithm 1's magnitude masks: which neurons (or weights) the forward pass drops at a step.

Schedule (train.py): the mask is recomputed every `prune_every` steps from `prune_start`. Training is
full-batch gradient descent on a fixed training set, so one step is one epoch: prune_every = 1 is both
"at each iteration" (L150) and "at each epoch" (L64); prune_every > 1 gives coarser schedules.
"""
from __future__ import annotations

import torch


def n_pruned(alpha: float, count: int) -> int:
    """How many units a ratio alpha removes out of `count`: round(alpha * count), at most count - 1.

    Python's round (halves to even) is used; the cap keeps alpha < 1 from pruning every unit
    (alpha = 0.99 of m = 50 would otherwise round to 50).
    """
    return min(int(round(alpha * count)), max(count - 1, 0))


def neuron_mask(W: torch.Tensor, alpha: float) -> torch.Tensor:
    """Keep-mask (R, m): drop the round(alpha*m) neurons with the smallest ||w_i|| (ties: lower index first)."""
    R, m, _ = W.shape
    k = n_pruned(alpha, m)
    keep = torch.ones(R, m, dtype=W.dtype, device=W.device)
    if k == 0:
        return keep
    order = torch.argsort(W.norm(dim=-1), dim=-1, stable=True)
    keep.scatter_(1, order[:, :k], 0.0)
    return keep


def weight_mask(W: torch.Tensor, alpha: float) -> torch.Tensor:
    """Keep-mask (R, m, d1): drop the round(alpha*m*d1) smallest |w_ik| per replicate (ties: lower index)."""
    R, m, d1 = W.shape
    k = n_pruned(alpha, m * d1)
    keep = torch.ones(R, m * d1, dtype=W.dtype, device=W.device)
    if k:
        order = torch.argsort(W.abs().reshape(R, -1), dim=-1, stable=True)
        keep.scatter_(1, order[:, :k], 0.0)
    return keep.view(R, m, d1)


def mask_for(W: torch.Tensor, alpha: float, unit: str) -> torch.Tensor:
    """The keep-mask for Algorithm 1 with pruning unit 'neuron' or 'weight'."""
    return neuron_mask(W, alpha) if unit == "neuron" else weight_mask(W, alpha)


def apply_mask(W: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """theta_mk = theta ⊙ M (Alg. 1, forward)."""
    return W * (mask.unsqueeze(-1) if mask.dim() == 2 else mask)
