"""What one explorer point shows (Result: the alignment |cos(w_i, M_j)|, aligned-neuron counts) and the mask's effect
between twins."""
from __future__ import annotations

from dataclasses import dataclass

import torch

from .config import Point


@dataclass
class Result:
    """What one point shows: the alignment matrix of replicate 0 and per-feature aligned-neuron counts."""

    point: Point
    cos: torch.Tensor          # (m, d) |cos(w_i, M_j)| of replicate 0
    counts: torch.Tensor       # (d,) neurons with |cos| >= threshold, mean over replicates
    minority: torch.Tensor     # (d,) bool: feature j is one of the n_minority features (eps_j = eps_min)
    threshold: float
    seconds: float

    @property
    def minority_count(self) -> float:
        """Mean, over minority features, of the number of neurons aligned with that feature."""
        return float(self.counts[self.minority].mean()) if bool(self.minority.any()) else float("nan")

    def panel(self) -> torch.Tensor:
        """cos²(w_i, M_j) with the neurons in neuron_order: the heatmap as drawn, (m, d)."""
        return self.cos[neuron_order(self.cos)].pow(2)

    @property
    def majority_count(self) -> float:
        """Mean, over majority features, of the number of neurons aligned with that feature."""
        return float(self.counts[~self.minority].mean()) if bool((~self.minority).any()) else float("nan")


def neuron_order(cos: torch.Tensor) -> torch.Tensor:
    """Neurons sorted by their best-aligned feature, then by how strongly: the heatmap becomes block-diagonal."""
    best, arg = cos.max(1)
    return torch.tensor(sorted(range(cos.shape[0]), key=lambda i: (int(arg[i]), -float(best[i]))))


def mask_effect(results: list[Result]) -> list[dict]:
    """Each pruned gallery point against its unpruned twin (same eps_min, NSR, d, m, seed): how much the mask changed.

    max_dcos2 is the largest change of cos²(w_i, M_j) over neurons and features, neuron i against neuron i (the twins
    share the initialisation, so index i is the same neuron; the drawn panels are each sorted by their own order,
    and a small change that swaps two neurons there would show as a large cell difference);
    d_minority / d_majority are the changes of the mean aligned-neuron counts."""
    base = {(r.point.eps_min, r.point.nsr, r.point.d, r.point.m): r for r in results if r.point.prune_alpha == 0}
    out = []
    for r in results:
        twin = base.get((r.point.eps_min, r.point.nsr, r.point.d, r.point.m))
        if r.point.prune_alpha == 0 or twin is None:
            continue
        out.append({"point": r.point, "max_dcos2": float((r.cos.pow(2) - twin.cos.pow(2)).abs().max()),
                    "d_minority": r.minority_count - twin.minority_count,
                    "d_majority": r.majority_count - twin.majority_count})
    return out
