"""Figure kinds of notebooks 04, 05 and 07 alone, and the small tables they print; the shared kinds (a mean with
its interval band, error bars over replicates) are plots.band and plots.errorbars, which these build on.

Intervals are 95% t-intervals over replicates (stats.mean_ci) unless a docstring says otherwise. Every
function draws on the Axes it is given (or on a new figure) and returns what it drew on, so a notebook
cell reads: compute (claims/), draw (here), `plt.show()`.
"""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import torch
from IPython.display import Markdown

from ... import stats
from . import common as plots
from ..pages.render import ci_text, fmt, md_table

MINORITY, MAJORITY = "C3", "C0"
GROUP_COLORS = {"minority j*": MINORITY, "majority (mean)": MAJORITY}
LEVEL_COLORS = ("tab:blue", "tab:orange", "tab:red")
CELL_COLORS = {"magnitude/dynamic": "C1", "magnitude/static": "C5", "random/dynamic": "C2", "random/static": "C7"}


def band(ax, x, Y, color, label=None):
    """plots.band for a history: Y (T, R), time first as train.History stacks it, against x (T,). Returns ax."""
    plots.band(ax, x, torch.as_tensor(Y).T, color=color, label=label, alpha=0.15)
    return ax


def bands_over_steps(curves: dict, ax=None, mark: float | None = None, xmin: float | None = None,
                     ylabel: str = "", title: str = "", cmap: str = "viridis"):
    """Several replicate curves over training steps, {label: (steps (T,), Y (T, R))}, each with its band.

    The first curve (the control) is black, the others follow `cmap`; `mark` draws a dotted vertical line
    (the branch point) and `xmin` crops the steps before it.
    """
    ax = ax or plt.subplots(figsize=(7, 3.6))[1]
    cm = plt.get_cmap(cmap)
    for k, (label, (x, Y)) in enumerate(curves.items()):
        band(ax, x, Y, "k" if k == 0 else cm(k / (len(curves) - 0.5)), label)
    if mark is not None:
        ax.axvline(mark, color="grey", ls=":")
    ax.set_xlim(xmin, None)
    ax.set_xlabel("step")
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize="medium")
    ax.legend(ncol=2)
    return ax


def per_alpha(ax, x, series: dict, colors: dict | None = None, logx: bool = False, zero: bool = False,
              xlabel: str = "alpha", ylabel: str = "", title: str = "", dodge: float = 0.0):
    """Per-α summary: for each {label: Y (R, k)}, the mean over replicates at each x (k,) with 95% t-interval bars.

    Colours come from `colors` (default: minority red, majority blue, else the colour cycle); `zero` draws y = 0;
    `dodge` shifts series j by the factor 1 + dodge * (j - centre) so that overlapping bars stay readable.
    """
    colors = {**GROUP_COLORS, **(colors or {})}
    x = torch.as_tensor(x, dtype=torch.float64).numpy()
    centre = (len(series) - 1) / 2
    for j, (label, Y) in enumerate(series.items()):
        plots.errorbars(ax, x * (1 + dodge * (j - centre)), Y, fmt="o-", capsize=3, label=label,
                        color=colors.get(label))
    if zero:
        ax.axhline(0, color="grey", lw=0.8)
    if logx:
        ax.set_xscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize="medium")
    return ax


def loglog_reference(ax, x, Y, slope: float, label: str, ref_label: str, color: str = MINORITY):
    """The replicate mean of Y (R, k) on log-log axes where it is positive, with a reference line of the predicted
    `slope` through the first positive point; says so on the axes when no point is positive."""
    x = torch.as_tensor(x, dtype=torch.float64).numpy()
    mean = stats.mean_ci(torch.as_tensor(Y))[0].numpy()
    ok = mean > 0
    if not ok.any():
        ax.text(0.5, 0.5, f"{label} is not positive\nat any point: no log-log fit", ha="center", va="center",
                transform=ax.transAxes)
        return ax
    ax.loglog(x[ok], mean[ok], "o-", color=color, label=label)
    x0, y0 = x[ok][0], mean[ok][0]
    ax.loglog(x, y0 * (x / x0) ** slope, "k--", lw=1, label=ref_label)
    ax.legend()
    return ax


def feature_scatter(ax, share, y, minority: list, xlabel: str, ylabel: str):
    """One point per (replicate, feature) of share (R, d) against y (R, d): majority features as dots,
    the minority features as large red stars."""
    share, y = torch.as_tensor(share), torch.as_tensor(y)
    maj = [j for j in range(share.shape[-1]) if j not in minority]
    ax.scatter(share[:, maj].flatten(), y[:, maj].flatten(), s=12, color=MAJORITY, label="majority features")
    ax.scatter(share[:, minority].flatten(), y[:, minority].flatten(), s=60, color=MINORITY, marker="*",
               label="minority j*")
    ax.axhline(0, color="grey", lw=0.8)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel, fontsize="small")
    return ax


def level_curves(ax, x, V, labels: list, colors=LEVEL_COLORS):
    """One curve per level (e.g. NSR) of V (n_level, n_x, R) against x (n_x,): replicate mean with its band."""
    for k, lab in enumerate(labels):
        plots.band(ax, x, np.asarray(V[k]).T, color=colors[k % len(colors)], label=lab, alpha=0.15)
    ax.grid(alpha=0.3)
    return ax


def appendix_figure(res, fig: int, ylabel: str):
    """One App. A.2 figure (notebook 05): a panel per pruning arm, a curve per NSR level against eps_min."""
    cfg, arms = res.cfg, res.cfg.arms
    f, axes = plt.subplots(1, len(arms), figsize=(5.2 * len(arms), 3.4), sharey=True, squeeze=False)
    for a, ax in enumerate(axes[0]):
        sig, eps, v = res.curves(fig, a)
        level_curves(ax, eps, v, [f"NSR = {cfg.nsr_of(s):.3g} (σ = {s:g})" for s in sig])
        ax.set_xlabel("eps_min")
        ax.set_title("vanilla (as in the paper)" if arms[a] == 0
                     else f"Algorithm 1, α = {arms[a]:g} (not in the paper)")
    axes[0][0].set_ylabel(ylabel)
    axes[0][0].legend()
    f.suptitle(f"Figure {fig}: mean over {cfg.repeats} repeats, band = 95% t-interval", fontsize="medium")
    f.tight_layout()
    return f


def appendix_panels(res, fig: int, metrics: dict, arm: int = 0, ylabel: str = ""):
    """Other metrics on one App. A.2 figure's grid (notebook 05), a panel per {metric: title}, one pruning arm."""
    f, axes = plt.subplots(1, len(metrics), figsize=(5.2 * len(metrics), 3.4), squeeze=False)
    for ax, (metric, title) in zip(axes[0], metrics.items(), strict=True):
        sig, eps, v = res.curves(fig, arm, metric)
        level_curves(ax, eps, v, [f"NSR = {res.cfg.nsr_of(s):.3g}" for s in sig])
        ax.set_xlabel("eps_min")
        ax.set_ylabel(ylabel)
        ax.set_title(title)
    axes[0][0].legend()
    f.tight_layout()
    return f


def _cell(v, mean_only: bool) -> str:
    if isinstance(v, torch.Tensor) and v.numel() > 1:
        m, lo, hi = stats.ci(v)
        return fmt(m) if mean_only else ci_text(m, lo, hi)
    if isinstance(v, (float, torch.Tensor)):
        return fmt(float(v))
    return str(v)


def ci_table(rows: dict, mean_only: bool = False, first: str = "") -> Markdown:
    """A Markdown table from {row label: {column: value}}: a replicate tensor (R,) shows as mean [95% interval]
    (the mean only with mean_only), a float compactly (render.fmt), anything else as text."""
    cols = list(dict.fromkeys(c for r in rows.values() for c in r))
    return Markdown(md_table([first] + cols, [[str(name)] + [_cell(r[c], mean_only) if c in r else "" for c in cols]
                                              for name, r in rows.items()]))
