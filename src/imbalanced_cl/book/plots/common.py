"""Figure kinds the claim notebooks share, so a notebook cell shows what is plotted rather than how.

Each function draws one kind of figure on matplotlib axes it is given (or makes), from arrays the claim
modules return, and returns what a caller may want to annotate further. Replicates are always the first
axis of a measurement array Y (R, k): the mean and its 95% t-interval over them come from stats.mean_ci,
the same interval the verdict tables use. Nothing here computes a result that a verdict depends on.
"""
from __future__ import annotations

import numpy as np
import torch

from ... import stats


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
                            fontsize: float | str | None = None, **kw):
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
    ax.legend()


def fit_errorbars(ax, x, fits: list, fmt: str = "o", **kw):
    """Fitted slopes (stats.SlopeFit, one per x) as points with their 95% intervals as error bars."""
    s, lo, hi = (np.array([getattr(f, a) for f in fits]) for a in ("slope", "lo", "hi"))
    ax.errorbar(_np(x), s, yerr=[s - lo, hi - s], fmt=fmt, **kw)


def series(ax, x, Ys: dict, fmt: str = "o-", **kw) -> list:
    """A per-grid-point summary: one error-bar series (mean and 95% interval over replicates, Y: (R, len(x))) per
    grid value, Ys = {label: Y}, in colours C0, C1, ... in order; returns the colours, to match reference curves."""
    colours = [f"C{i}" for i in range(len(Ys))]
    for colour, (name, Y) in zip(colours, Ys.items(), strict=True):
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
                   density: bool = False, ls: str = "-", label: str | None = None):
    """Histogram of a per-neuron (or per-pair) quantity with a vertical line where the claim puts its bound;
    an empty array leaves the panel empty but titled, so a missing case is visible."""
    values = _np(values)
    if values.size:
        ax.hist(values, bins=bins, density=density, label=label)
        ax.axvline(at, color="k", ls=ls)
    ax.set_title(title)
    if xlabel:
        ax.set_xlabel(xlabel)


def census_panels(axes, cen: dict, exponents: dict, rse_max: float):
    """The census at initialisation on a (d, rho) grid, three log-log panels (notebook 02, Def. B.1, Lemma B.2):
    E|M_j| (ordinary), E|M_j*| (lucky) per feature for m = d^C_m neurons, and |N_i|. Per rho (one colour): dots,
    Monte Carlo (95% interval over replicates; the lucky panel shows only d where Monte Carlo found any); solid, the
    exact expectation (lucky: x where its relative standard error exceeds rse_max); dotted, the paper's d^omega with
    constant 1. cen: lucky.run_census's result; exponents: {rho: {'ordinary', 'lucky', 'Ni'}} (paper_exponents)."""
    ds, m_of_d, ex, mc = cen["ds"], cen["m"][:, 0], cen["exact"], cen["mc"]
    for k, rho in enumerate(cen["rhos"]):
        col, e = f"C{k}", exponents[rho]
        errorbars(axes[0], ds, mc["p_ord"][:, k, :].T * m_of_d[None, :], color=col, label=f"MC ρ={rho}")
        axes[0].plot(ds, ex["p_ord"][:, k] * m_of_d, "-", color=col)
        axes[0].plot(ds, ds ** e["ordinary"], ":", color=col)
        mcl, exl = mc["p_lucky"][:, k, :].mean(-1) * m_of_d, ex["p_lucky"][:, k] * m_of_d
        ok = ex["rse_lucky"][:, k] < rse_max
        axes[1].plot(ds[mcl > 0], mcl[mcl > 0], "o", color=col, label=f"MC ρ={rho}")
        axes[1].plot(ds[ok], exl[ok], "-", color=col)
        axes[1].plot(ds[~ok & (exl > 0)], exl[~ok & (exl > 0)], "x", color=col)
        axes[1].plot(ds, ds ** e["lucky"], ":", color=col)
        errorbars(axes[2], ds, mc["Ni"][:, k, :].T, color=col, label=f"MC ρ={rho}")
        axes[2].plot(ds, ex["Ni"][:, k], "-", color=col)
        axes[2].plot(ds, ds ** e["Ni"], ":", color=col)
    for ax, title in zip(axes, ["E|M_j| (ordinary), m = d^C_m", "E|M_j*| (lucky), m = d^C_m", "|N_i| at init"],
                         strict=True):
        loglog(ax, "d", None, title)
    axes[1].set_ylim(1e-12, None)
    axes[0].legend()
    axes[2].legend()
    axes[0].figure.suptitle("dots: Monte Carlo (95% interval over replicates); solid: exact expectation; dotted: the "
                            "paper's d^ω (constant 1); x: conditional estimate with relative error > "
                            f"{rse_max:.0%}")


def pr_b_curves(ax, cen: dict):
    """Pr[B_i] (every other feature below the c2 threshold) against d on log-log axes, per rho (one colour): the
    paper's (1 - p2)^(d-1), which L1967 sets to 1 (dashed); the exact probability (solid); Monte Carlo (dots, where
    it found any); and the level 1 itself (black)."""
    ds, ex = cen["ds"], cen["exact"]
    for k, rho in enumerate(cen["rhos"]):
        col = f"C{k}"
        ax.plot(ds, ex["paper_B"][:, k], "--", color=col, label=f"(1-p2)^(d-1), ρ={rho}")
        ax.plot(ds, np.maximum(ex["B"][:, k], 1e-300), "-", color=col, label=f"exact Pr[B_i], ρ={rho}")
        mcB = cen["mc"]["B"][:, k, :].mean(-1)
        ax.plot(ds[mcB > 0], mcB[mcB > 0], "o", color=col)
    ax.axhline(1.0, color="k", lw=0.8)
    loglog(ax, "d", "Pr[B_i]")
    ax.set_ylim(1e-30, 2)
    ax.legend(ncol=2)


def cos2_heatmaps(axes, cos2: dict, n_major: int, n_neurons: int, replicate: int = 0):
    """Workshop Figure 1: cos²(w_i, M_j) of the first n_neurons neurons (rows) against every atom (columns), one panel
    per run (cos2 = {title: (R, m, d)}), one replicate, on a shared 0..1 colour scale; a white line separates the
    majority atoms (the first n_major) from the minority ones. Returns the last image, for a colour bar."""
    for ax, (name, c) in zip(axes, cos2.items(), strict=True):
        d = c.shape[-1]
        im = ax.imshow(_np(c[replicate, :n_neurons]), vmin=0, vmax=1, cmap="viridis", aspect="auto")
        ax.axvline(n_major - 0.5, color="w", lw=1.5)
        ax.set_xticks(range(d), [str(j + 1) for j in range(d)])
        ax.set_yticks(range(n_neurons), [str(i + 1) for i in range(n_neurons)])
        ax.set(xlabel=f"atom j (1-{n_major} majority | {n_major + 1}-{d} minority)", ylabel="neuron i", title=name)
    return im
