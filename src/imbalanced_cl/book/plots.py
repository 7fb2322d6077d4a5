"""Figure kinds the claim notebooks share, so a notebook cell shows what is plotted rather than how.

Each function draws one kind of figure on matplotlib axes it is given (or makes), from arrays the claim
modules return, and returns what a caller may want to annotate further. Replicates are always the first
axis of a measurement array Y (R, k): the mean and its 95% t-interval over them come from stats.mean_ci,
the same interval the verdict tables use. Nothing here computes a result that a verdict depends on.
"""
from __future__ import annotations

import numpy as np
import torch

from .. import stats


def _tensor(Y) -> torch.Tensor:
    return Y if isinstance(Y, torch.Tensor) else torch.as_tensor(np.asarray(Y, dtype=float))


def _np(x) -> np.ndarray:
    return x.detach().cpu().numpy() if isinstance(x, torch.Tensor) else np.asarray(x, dtype=float)


def loglog(ax, xlabel: str | None = None, ylabel: str | None = None, title: str | None = None):
    """Log scale on both axes, with the labels given (the axes every power-law claim is read on)."""
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set(**{k: v for k, v in (("xlabel", xlabel), ("ylabel", ylabel), ("title", title)) if v is not None})
    return ax


def errorbars(ax, x, Y, fmt: str = "o", **kw):
    """A measurement at each x: the mean of Y (R, k) over replicates with its 95% t-interval as error bars.

    Returns (mean, lo, hi) as numpy arrays, e.g. to anchor a prediction of unknown constant at mean[0].
    """
    mean, lo, hi = (_np(v) for v in stats.mean_ci(_tensor(Y)))
    ax.errorbar(_np(x), mean, yerr=[mean - lo, hi - mean], fmt=fmt, **kw)
    return mean, lo, hi


def band(ax, x, Y, color=None, label: str | None = None, alpha: float = 0.2):
    """A mean with an interval band over steps: the mean of Y (R, T) over replicates as a line, and its
    95% t-interval shaded around it. Returns (mean, lo, hi) as numpy arrays."""
    mean, lo, hi = (_np(v) for v in stats.mean_ci(_tensor(Y)))
    line, = ax.plot(_np(x), mean, color=color, label=label)
    ax.fill_between(_np(x), lo, hi, color=line.get_color(), alpha=alpha)
    return mean, lo, hi


def measured_vs_predictions(ax, x, Y, lines: dict, label: str = "measured (95% CI over replicates)",
                            xlabel: str | None = None, ylabel: str | None = None, fmt: str = "o",
                            fontsize: float = 8, **kw):
    """Prediction against measurement on log-log axes: the measured mean with its 95% interval over
    replicates (error bars, Y: (R, k)) and one curve per prediction, `lines` = {label: (y, style)}.

    A prediction with an unknown constant can be added afterwards with `shape_through`. Returns
    (mean, lo, hi) of the measurement.
    """
    out = errorbars(ax, x, Y, fmt=fmt, label=label, **kw)
    for name, (y, style) in lines.items():
        ax.plot(_np(x), _np(y), style, label=name)
    loglog(ax, xlabel, ylabel)
    ax.legend(fontsize=fontsize)
    return out


def shape_through(ax, x, f, y0: float, style: str, label: str | None = None, **kw):
    """The shape of a prediction whose constant is unknown: f(x) scaled to pass through (x[0], y0).

    Only the shape (a slope on log-log axes) is tested by such a curve, never its level.
    """
    f = _np(f)
    ax.plot(_np(x), f / f[0] * y0, style, label=label, **kw)


def trajectories(ax, steps, groups: dict, T1: int | None = None, title: str | None = None,
                 ylabel: str | None = None):
    """Per-neuron trajectories on a log y-axis: groups = {label: (series (T, n), colour)}, one thin line per
    neuron and one legend entry per group, with the end of Stage 1 (T1, eq. 34) as a dotted vertical line."""
    for name, (series, colour) in groups.items():
        series = _np(series)
        for i in range(series.shape[1]):
            ax.semilogy(_np(steps), np.abs(series[:, i]), color=colour, alpha=0.6, label=name if i == 0 else None)
    if T1 is not None:
        ax.axvline(int(T1), color="k", ls=":", label="$T_1$ (eq. 34)")
    ax.set(xlabel="step", ylabel=ylabel, title=title)
    ax.legend(fontsize=8)


def fit_errorbars(ax, x, fits: list, fmt: str = "o", **kw):
    """Fitted slopes (stats.SlopeFit, one per x) as points with their 95% intervals as error bars."""
    s, lo, hi = (np.array([getattr(f, a) for f in fits]) for a in ("slope", "lo", "hi"))
    ax.errorbar(_np(x), s, yerr=[s - lo, hi - s], fmt=fmt, **kw)


def series(ax, x, Ys: dict, fmt: str = "o-", **kw) -> list:
    """A per-grid-point summary: one error-bar series (mean and 95% interval over replicates, Y: (R, len(x))) per
    grid value, Ys = {label: Y}, in colours C0, C1, ... in order; returns the colours, to match reference curves."""
    colours = [f"C{i}" for i in range(len(Ys))]
    for colour, (name, Y) in zip(colours, Ys.items()):
        errorbars(ax, x, Y, fmt=fmt, color=colour, label=name, **kw)
    return colours


def pure_and_mixed_bars(ax, labels: list, pure: np.ndarray, mixed: np.ndarray, groups=("majority", "minority"),
                        width: float = 0.35):
    """Side-by-side stacked bars per grid point (labels): for each group (columns of pure/mixed, (len(labels), 2)),
    the neurons that carry the group's feature alone (solid) under those that carry it with others (light)."""
    for c, group in enumerate(groups):
        pos = np.arange(len(labels)) + (c - 0.5) * width
        ax.bar(pos, pure[:, c], width * 0.9, color=f"C{c}", label=f"{group}: pure")
        ax.bar(pos, mixed[:, c], width * 0.9, bottom=pure[:, c], color=f"C{c}", alpha=0.4, label=f"{group}: mixed")
    ax.set_xticks(range(len(labels)), labels)


def slopes_vs_claim(ax, x, fits: dict, xlabel: str, ylabel: str, claim_label: str, zero_label: str | None = None):
    """Measured against predicted, with error bars: one fitted slope per grid point (a stats.SlopeFit with its
    95% interval), per series `fits` = {label: [SlopeFit per x]}, against the claim y = x (dashed) and,
    optionally, the competing claim y = 0 (grey)."""
    for k, (name, row) in enumerate(fits.items()):
        fit_errorbars(ax, x, row, fmt="os^v"[k % 4], label=name)
    ax.plot([0, 1], [0, 1], "k--", label=claim_label)
    if zero_label:
        ax.axhline(0, color="grey", lw=0.8, label=zero_label)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.legend()


def hist_with_line(ax, values, at: float, title: str, xlabel: str | None = None, bins: int = 20,
                   density: bool = False, ls: str = "-"):
    """Histogram of a per-neuron (or per-pair) quantity with a vertical line where the claim puts its bound;
    an empty array leaves the panel empty but titled, so a missing case is visible."""
    values = _np(values)
    if values.size:
        ax.hist(values, bins=bins, density=density)
        ax.axvline(at, color="k", ls=ls)
    ax.set_title(title)
    if xlabel:
        ax.set_xlabel(xlabel)
