"""Notebook 04, beyond the paper (issue 14): is it the magnitude, or would any mask do? The 2x2 mask control.

The four cells are (magnitude | random units) x (dynamic | static mask), sim/prune.Masker. Every cell resumes
from notebook 04's vanilla checkpoint T_a, trains on the same pairs, over the same alpha grid and with the same
backward (cfg.prune_backward) and unit; magnitude/dynamic is Algorithm 1 and reuses notebook 04's branches.
The other three cells at every alpha train in one batch (replicate dimension = cells x alphas x R), on the same
pairs as the branches (fixed set, or step t's fresh pairs drawn once per replicate: shared_sampler). A random
mask of a replicate is drawn from (seed, replicate, step), so across alphas the random masks are nested and the
static and dynamic random cells start from the same draw: every comparison between cells is paired.
"""
from __future__ import annotations

import torch

from ...sim import metrics
from ...sim.prune import Masker
from ...sim.train import Run
from .batch import train_branches
from .config import PruningConfig
from .metrics import (aligned_counts, amplitude_ratio, degradation_threshold, majority_amplitude, minority_index,
                      split_mean)

CELLS = ("magnitude/dynamic", "magnitude/static", "random/dynamic", "random/static")


def _rule(cell: str) -> tuple[str, str]:
    rule, schedule = cell.split("/")
    return rule, schedule


def cell_config(cfg: PruningConfig, cell: str, alpha: float):
    """The SimConfig of one cell's branch at one alpha (as PruningConfig.branch, with the cell's mask)."""
    rule, schedule = _rule(cell)
    return cfg.branch(alpha, cfg.prune_backward, prune_mask=rule, prune_schedule=schedule)


def cell_masker(cfg: PruningConfig, items: list, replicates: list) -> Masker:
    """One Masker row per (cell, alpha) of `items` and replicate, all starting at the branch point T_a."""
    rows = [(_rule(c), a) for c, a in items for _ in replicates]
    return Masker([a for _, a in rows], [r == "random" for (r, _), _ in rows], [s == "static" for (_, s), _ in rows],
                  list(replicates) * len(items), cfg.seed, cfg.vanilla_steps, cfg.prune_every, cfg.prune_unit)


def curve_alphas(alphas: list, cfg: PruningConfig) -> list:
    """The control's alpha grid: notebook 04's grid, then cfg.threshold_alphas (all above it, so indices agree)."""
    return sorted(alphas) + sorted(float(a) for a in cfg.threshold_alphas)


def run_cells(cfg: PruningConfig, base: Run, runs: dict, alphas: list) -> dict:
    """Every cell at every alpha, {(cell, alpha): Run}: magnitude/dynamic from `runs` (notebook 04's branches)
    where they exist, every other (cell, alpha) trained in one batch from the same checkpoint `base`
    (batch.train_branches: the same pairs as the branches, drawn once per step)."""
    items = [(c, a) for c in CELLS for a in alphas if not (c == CELLS[0] and a in runs)]
    out = {(CELLS[0], a): runs[a] for a in alphas if a in runs}
    out.update(zip(items, train_branches(base, [cell_config(cfg, c, a) for c, a in items], cfg.workers), strict=True))
    return out


def first_mask(cfg: PruningConfig, base: Run, cell: str, alpha: float) -> torch.Tensor:
    """The units the cell's mask removes at the branch point T_a (bool, (R, m) or (R, m, d1))."""
    return cell_masker(cfg, [(cell, alpha)], base.replicates).at(base.W, cfg.vanilla_steps) == 0


def first_mask_on_minority(cfg: PruningConfig, base: Run, cell: str, alpha: float) -> torch.Tensor:
    """Share of the cell's mask at the branch point that falls on minority-aligned neurons (cos >= cos_threshold
    with some j*), per replicate (R,); NaN for a weight mask, which removes weights, not neurons."""
    if cfg.prune_unit != "neuron":
        return torch.full((base.W.shape[0],), float("nan"))
    pruned = first_mask(cfg, base, cell, alpha)
    mino = (metrics.cosine_matrix(base.W, base.M)[..., minority_index(cfg)] >= cfg.cos_threshold).any(-1)
    return (mino & pruned).sum(-1).float() / pruned.sum(-1).clamp(min=1).float()


def pruned_norm_ratio(run: Run, pruned: torch.Tensor) -> torch.Tensor:
    """Mean ||w_i|| at the end over the neurons pruned at T_a, divided by that over the others (R,); NaN for a
    weight mask. Under the faithful backward a neuron a static mask removes keeps its gradient (eq. 5) but never
    enters the logits, so this ratio shows whether such neurons grew (the amplitudes are read from the full W)."""
    if pruned.dim() != 2:
        return torch.full((run.W.shape[0],), float("nan"))
    n, p = run.W.norm(dim=-1), pruned.float()
    return ((n * p).sum(-1) / p.sum(-1).clamp(min=1)) / ((n * (1 - p)).sum(-1) / (1 - p).sum(-1).clamp(min=1))


def cell_stats(cells: dict, control: Run, base: Run, alphas: list, cfg: PruningConfig) -> dict:
    """Per cell, over the alpha grid (R, k): A_j*/A_maj, its change over the control, minority-aligned neurons,
    majority degradation 1 - A_maj / A_maj(control), the share of the first mask on minority-aligned neurons, the
    norm of the neurons pruned at T_a over the others' at the end; and per replicate (R,) the first alpha whose
    degradation exceeds degrade_tol (NaN: none in the grid)."""
    pieces = cell_pieces(cells, base, [(c, a) for c in CELLS for a in alphas], cfg)
    return cells_summary(pieces, amplitude_ratio(control.W, control.M, cfg), majority_amplitude(control, cfg), alphas,
                         cfg)


def cell_pieces(cells: dict, base: Run, items: list, cfg: PruningConfig) -> dict:
    """What cell_stats reads of each (cell, alpha) of `items`, by that key, (R,) each: A_j*/A_maj ("ratio"), the
    majority amplitude ("A_maj"), minority-aligned neurons ("aligned"), the first mask's share on minority-aligned
    neurons ("first_mask") and the pruned over kept norm at the end ("norm")."""
    out = {}
    for c, a in items:
        r = cells[(c, a)]
        out[(c, a)] = {"ratio": amplitude_ratio(r.W, r.M, cfg), "A_maj": majority_amplitude(r, cfg),
                       "aligned": split_mean(aligned_counts(r.W, r.M, cfg.cos_threshold), cfg)[0],
                       "first_mask": first_mask_on_minority(cfg, base, c, a),
                       "norm": pruned_norm_ratio(r, first_mask(cfg, base, c, a))}
    return out


def cells_summary(pieces: dict, ratio0: torch.Tensor, A0: torch.Tensor, alphas: list, cfg: PruningConfig) -> dict:
    """cell_stats from cell_pieces over `alphas` and the control's A_j*/A_maj and majority amplitude (R,) each: what
    a run split into parts (split.py) puts back together."""
    out = {}
    for c in CELLS:
        def stacked(name, c=c):
            return torch.stack([pieces[(c, a)][name] for a in alphas], 1)
        ratio, A = stacked("ratio"), stacked("A_maj")
        out[c] = {"A_j*/A_maj": ratio, "change over control": ratio - ratio0.unsqueeze(-1),
                  "minority-aligned neurons": stacked("aligned"), "majority degradation": 1.0 - A / A0.unsqueeze(-1),
                  "first mask on minority-aligned": stacked("first_mask"), "pruned / kept norm": stacked("norm"),
                  "first degrading alpha": degradation_threshold(alphas, A, A0, cfg.degrade_tol)}
    return out


def run_control(cfg: PruningConfig, base: Run, runs: dict, alphas: list) -> dict | None:
    """cell_stats of the 2x2 control over curve_alphas (run_cells, then the measurements), or None when
    cfg.mask_control is False."""
    if not cfg.mask_control:
        return None
    grid = curve_alphas(alphas, cfg)
    return cell_stats(run_cells(cfg, base, runs, grid), runs[0.0], base, grid, cfg)


def threshold_text(first: torch.Tensor) -> str:
    """The first degrading alpha of each replicate as text ('none': no alpha of the grid degraded it)."""
    return ", ".join("none" if v != v else f"{v:g}" for v in first.tolist())
