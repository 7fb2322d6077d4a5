"""Notebook 06's figure and page tables: per-class accuracy against class size, the scale beside Table 2, the time
profile."""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from ...lt import datasets as D
from ...lt.config import LTConfig
from ...lt.experiment import LABELS, effective_n_max, pretraining_rows
from ..pages.render import repo_relative

COLOURS = {"random": "0.6", "simclr": "C0", "sdclr": "C3", "alg1": "C2", "alg1_dense": "C2"}


def per_class(results: list[dict], rhos, dataset: str):
    """One panel per rho: mean per-class accuracy (error bars: sd over seeds) against training images per class."""
    fig, axes = plt.subplots(1, len(rhos), figsize=(5.5 * len(rhos), 4), squeeze=False)
    present = [m for m in COLOURS if any(r["method"] == m for r in results)]
    for ax, rho in zip(axes[0], rhos, strict=True):
        for m in present:
            rs = [r for r in results if r["method"] == m and r["rho"] == rho]
            if not rs:
                continue
            counts = np.mean([r["train_counts"] for r in rs], axis=0)
            acc = np.array([r["per_class"] for r in rs])
            order = np.argsort(-counts)
            ax.errorbar(counts[order], np.nanmean(acc, 0)[order],
                        yerr=(np.nanstd(acc, 0, ddof=1)[order] if len(rs) > 1 else None), marker="o", ms=4,
                        capsize=2, color=COLOURS[m], ls="--" if m == "alg1_dense" else "-", label=LABELS[m])
        ax.set(xscale="log", xlabel="training images of the class (LT subset)", ylabel="per-class test accuracy (%)",
               title=f"{dataset}-LT, ρ = {rho:g}")
    axes[0][0].legend()
    plt.tight_layout()
    return axes


def scale_table(cfg: LTConfig, data) -> str:
    """Markdown: this run's settings beside Table 2's (SDCLR's reference), every cell of this run from cfg and data."""
    from ...lt.resnet import ResNet18
    n_head = effective_n_max(cfg, data)
    C = data.num_classes
    sizes = ", ".join(f"{sum(D.long_tailed_counts(n_head, r, C)):,} images at $\\rho={r:g}$" for r in cfg.rhos)
    params = sum(p.numel() for p in ResNet18(cfg.width, data.train.channels, "cifar").parameters()) / 1e6
    probe = f"{cfg.probe_per_class} balanced images per class" if cfg.probe_per_class else "the whole train split"
    rows = [("data", "original CIFAR-10 binaries", repo_relative(data.source)),     # no build machine's folder
            ("LT profile", "$n_c=\\lfloor 4500\\,\\rho^{-c/9}\\rfloor$",
             f"$n_c=\\lfloor {n_head}\\,\\rho^{{-c/{C - 1}}}\\rfloor$ ({sizes})"),
            ("backbone", "ResNet-18 (width 64, 11.2 M parameters)",
             f"ResNet-18 of width {cfg.width} ({params:.2f} M parameters)"),
            ("pre-training", "2,000 epochs, batch 512, SGD lr 0.5, $\\tau=0.2$",
             f"{cfg.epochs} epochs, batch {cfg.batch_size}, SGD lr {cfg.lr:g}, $\\tau={cfg.temperature:g}$"),
            ("pruning", "ratio 0.9, global, per epoch", f"ratio {cfg.prune_ratio:g}, global, per {cfg.mask_every}"),
            ("probe", "linear, SGD lr 30, 30 epochs, balanced train set",
             f"linear (softmax regression, L-BFGS, {cfg.probe_iters} iterations) on {probe}"),
            ("runs", "unstated (± suggests several)", f"{len(cfg.seeds)} seed(s), paired across methods")]
    lines = ["| | Table 2 / SDCLR reference | this run |", "|---|---|---|"]
    lines += [f"| {a} | {b} | {c} |" for a, b, c in rows]
    per_epoch = (cfg.width / 64) ** 2
    return "\n".join(lines) + (
        f"\n\nWidth {cfg.width} costs about {per_epoch:.3g} of the reference compute per epoch (convolution cost "
        f"grows with the width squared), and {cfg.epochs} epochs are {cfg.epochs / 2000:.3g} of its 2,000 epochs. "
        "Where both are far below 1, **absolute accuracies are far below Table 2**, and what this page can test is "
        "the *direction* of the effect at this scale, against the seed-to-seed spread. The `paper` profile restores "
        "the reference settings (commands at the end).")


def profile_table(results: list[dict], load_s: float, grid_s: float) -> str:
    """Markdown: where notebook 06's time went, per phase, summed over runs (each pre-training counted once).

    load_s: decoding and loading the data (once, in the notebook's process); grid_s: wall time of run_grid. With
    several worker processes the summed run time exceeds grid_s; the shares are of the summed time."""
    pre = pretraining_rows(results)
    aug = sum(r["pretrain_s"] * r["aug_share"] for r in pre)
    phases = [("decoding and loading the data (once)", load_s),
              ("set-up of each run (LT draw, network)", sum(r.get("setup_s", 0.0) for r in results
                                                                     if not r.get("shares_pretrain"))),
              ("pre-training: augmentation (kornia views)", aug),
              ("pre-training: forward, backward, SGD", sum(r["pretrain_s"] for r in pre) - aug),
              ("embedding extraction (probe and test sets)", sum(r.get("embed_s", 0.0) for r in results)),
              ("linear probe on cached embeddings", sum(r.get("probe_s", 0.0) for r in results)),
              ("evaluation (accuracy, Δ20, groups)", sum(r.get("eval_s", 0.0) for r in results))]
    total = sum(s for _, s in phases)
    lines = ["| phase | seconds (summed over runs) | share |", "|---|---|---|"]
    lines += [f"| {name} | {s:.1f} | {s / max(total, 1e-9):.1%} |" for name, s in phases]
    lines.append(f"| **total** | {total:.1f} | 100% |")
    return "\n".join(lines) + (f"\n\nThe runs took {grid_s:.0f} s of wall time in all; the data took {load_s:.1f} s "
                               "before them. Summed run time above wall time means the runs overlapped in workers.")
