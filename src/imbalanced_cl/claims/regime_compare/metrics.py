"""The regime page's measurements of one trained arm: the feature-span share over time, and the quantities its table
reads at the end of training, per replicate (what a campaign record keeps of the arm, not the run)."""
from __future__ import annotations

from dataclasses import dataclass

import torch

from ...sim import regime
from ...sim.metrics import cosine_matrix, feature_share
from ...sim.train import Run
from ..pruning.metrics import amplitude_ratio, minority_index


@dataclass
class Arm:
    """One arm's measurements: per-replicate values by quantity (tensors (R,)), every neuron's cosine with the minority
    features (the alignment threshold is applied when the page is judged, protocol.quantities), the replicates alive,
    and the share of weight in the feature span at every recorded step."""

    values: dict              # {quantity: (R,) tensor} at the end of training
    cos_minority: torch.Tensor   # (R, m, n_minority) |cos(w_i, M_j*)| at the end of training (App. A.2)
    alive: int                # replicates whose population gradient is not 0 (sim/regime.py: `dead`)
    of: int                   # replicates in all
    all_dead: bool            # every replicate dead: the values are frozen, not measurements
    steps: torch.Tensor       # (T,) the recorded steps
    share: torch.Tensor       # (T, R) mean feature-span share over neurons, per replicate


def share_history(run: Run) -> tuple[torch.Tensor, torch.Tensor]:
    """(steps (T,), mean feature-span share per replicate (T, R)) from the recorded coefficients and norms."""
    coef, norm2 = run.history.get("coef"), run.history.get("norm2")
    return run.history.get("steps"), (coef.pow(2).sum(-1) / norm2.clamp(min=1e-30)).mean(-1)


def measure_arm(run: Run, cfg) -> Arm:
    """What the page reads of one arm's run (`cfg`: the page's RegimeConfig, for the minority features): Theorem
    3.1's share, the two InfoNCE values and Lemma B.1's deviation (sim/regime.measure), A_min/A_maj and the neurons'
    cosines with the minority features (App. A.2), per replicate; and the share over time."""
    reg = regime.measure(run)
    values = {
        "feature-span share (→ 1, Thm 3.1)": feature_share(run.W, run.M).mean(-1),
        "training InfoNCE": reg.loss_train,
        "held-out InfoNCE": reg.loss_heldout,
        "||g_K − g_pop|| / ||w|| (Lemma B.1)": reg.grad_dev,
        "A_min / A_maj": amplitude_ratio(run.W, run.M, run.cfg),
    }
    steps, share = share_history(run)
    return Arm(values=values, cos_minority=cosine_matrix(run.W, run.M)[:, :, minority_index(cfg)],
               alive=int((~reg.dead).sum().item()), of=int(reg.dead.numel()), all_dead=bool(reg.all_dead),
               steps=steps, share=share)
