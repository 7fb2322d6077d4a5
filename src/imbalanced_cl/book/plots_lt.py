"""Notebook 06's figure: per-class test accuracy against the class's training-set size, one line per method."""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from ..lt.experiment import LABELS

COLOURS = {"random": "0.6", "simclr": "C0", "sdclr": "C3", "alg1": "C2", "alg1_dense": "C2"}


def per_class(results: list[dict], rhos, dataset: str):
    """One panel per rho: mean per-class accuracy (error bars: sd over seeds) against training images per class."""
    fig, axes = plt.subplots(1, len(rhos), figsize=(5.5 * len(rhos), 4), squeeze=False)
    present = [m for m in COLOURS if any(r["method"] == m for r in results)]
    for ax, rho in zip(axes[0], rhos):
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
    axes[0][0].legend(fontsize=8)
    plt.tight_layout()
    return axes
