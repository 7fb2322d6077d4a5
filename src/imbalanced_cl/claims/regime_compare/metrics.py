"""The regime page's measurement over time: the feature-span share of the weights."""
from __future__ import annotations

import torch

from ...sim.train import Run


def share_history(run: Run) -> tuple[torch.Tensor, torch.Tensor]:
    """(steps (T,), mean feature-span share per replicate (T, R)) from the recorded coefficients and norms."""
    coef, norm2 = run.history.get("coef"), run.history.get("norm2")
    return run.history.get("steps"), (coef.pow(2).sum(-1) / norm2.clamp(min=1e-30)).mean(-1)
