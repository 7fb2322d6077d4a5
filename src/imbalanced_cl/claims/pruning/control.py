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
from .metrics import (aligned_counts, amplitude_ratio, amplitudes, degradation_threshold, minority_index,
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
    def amaj(r):
        return split_mean(amplitudes(r.W, r.M), cfg)[1]
    ratio0, A0 = amplitude_ratio(control.W, control.M, cfg), amaj(control)
    out = {}
    for c in CELLS:
        rs = [cells[(c, a)] for a in alphas]
        ratio = torch.stack([amplitude_ratio(r.W, r.M, cfg) for r in rs], 1)
        A = torch.stack([amaj(r) for r in rs], 1)
        out[c] = {"A_j*/A_maj": ratio, "change over control": ratio - ratio0.unsqueeze(-1),
                  "minority-aligned neurons": torch.stack(
                      [split_mean(aligned_counts(r.W, r.M, cfg.cos_threshold), cfg)[0] for r in rs], 1),
                  "majority degradation": 1.0 - A / A0.unsqueeze(-1),
                  "first mask on minority-aligned": torch.stack(
                      [first_mask_on_minority(cfg, base, c, a) for a in alphas], 1),
                  "pruned / kept norm": torch.stack(
                      [pruned_norm_ratio(cells[(c, a)], first_mask(cfg, base, c, a)) for a in alphas], 1),
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
