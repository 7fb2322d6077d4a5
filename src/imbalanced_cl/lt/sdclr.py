"""Pruning of the backbone's conv weights: SDCLR's global magnitude mask and the paper's Algorithm 1.

SDCLR (Jiang et al., 2021, "Self-Damaging Contrastive Learning"): one global threshold on |w| over all conv
weights (not the projection head), the mask recomputed every epoch; the pruned branch encodes one view and is
contrasted with the dense branch's encoding of the other view, both branches sharing the weights.
Algorithm 1 of the paper (L140-158): forward with theta ⊙ M, "release the mask" in the backward so the
gradient w.r.t. the masked parameters is applied to the full theta, weight decay on the full theta (L155).
The branch modes live in resnet.MaskedConv2d ("pruned" for SDCLR, "ste" for Algorithm 1).
"""
from __future__ import annotations

import torch
from torch import nn

from .resnet import masked_convs

# method -> (mode of the branch encoding view 1, mode of the branch encoding view 2)
BRANCH_MODES = {"simclr": ("dense", "dense"),    # SimCLR (Chen et al., 2020)
                "sdclr": ("dense", "pruned"),    # SDCLR: dense view 1 vs pruned view 2 (its own BN if dual)
                "alg1": ("ste", "ste")}          # Algorithm 1: both views through theta ⊙ M, unmasked update


def n_pruned(ratio: float, total: int) -> int:
    """How many weights a pruning ratio removes out of `total`: round(ratio * total)."""
    return int(round(ratio * total))


@torch.no_grad()
def global_magnitude_masks(model: nn.Module, ratio: float) -> dict:
    """Set every MaskedConv2d's mask so that exactly round(ratio*N) conv weights with the smallest |w| are dropped.

    One global ordering over all conv weights (ties broken by position), so one threshold serves every layer
    (SDCLR's unstructured global pruning). Returns {"threshold", "kept", "total", "per_layer_kept"}.
    """
    convs = masked_convs(model)
    flat = torch.cat([c.weight.detach().abs().reshape(-1) for c in convs])
    total = flat.numel()
    k = n_pruned(ratio, total)
    keep = torch.ones(total, dtype=torch.bool, device=flat.device)
    threshold = 0.0
    if k > 0:
        order = torch.argsort(flat, stable=True)
        keep[order[:k]] = False
        threshold = float(flat[order[k - 1]])
    start, per_layer = 0, []
    for c in convs:
        n = c.weight.numel()
        c.mask.copy_(keep[start:start + n].view_as(c.weight).to(c.mask.dtype))
        per_layer.append(int(keep[start:start + n].sum()))
        start += n
    return {"threshold": threshold, "kept": int(keep.sum()), "total": total, "per_layer_kept": per_layer}
