"""Figures and tables of notebook 08 (each claim along d): small functions over a claims.scale.ScaleResult."""
from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np

from ...claims import scale as S
from ..pages.render import ci_text, fmt, md_table


def show(text: str) -> None:
    """Display Markdown in the notebook (plain text elsewhere)."""
    try:
        from IPython.display import Markdown, display
        display(Markdown(text))
    except ImportError:
        print(text)


def show_plan(plan: list[dict]) -> None:
    """The grid before training: sizes, the clock tau_d, the horizons, and T5 - T4 of Thm 3.2 beside the branch."""
    head = ["d", "d1 = c1·d", "m = d^C_m", "minority features", "K", "τ_d (steps)", "T_a: from – to", "branch",
            "T5 − T4 (C_z = 1)", "largest q_j (model)"]
    rows = [[p["d"], p["d1"], p["m"], p["n_minority"], p["K"], f"{p['tau_d']:.0f}", "%d – %d" % p["T_a"], p["branch"],
             f"{p['T5_minus_T4']:.0f}", f"{p['q_max']:.3f}"] for p in plan]
    show(md_table(head, rows))


def _reached(T: np.ndarray) -> str:
    ok = T >= 0
    mean = f"{T[ok].mean():.0f}" if ok.any() else "–"
    return f"{mean} ({int(ok.sum())}/{T.size})"


def show_regime(res: S.ScaleResult) -> None:
    """The regime at every d: stages reached, sparsity realised, lucky-set sizes, Remark 1's bound, final loss."""
    cfg = res.cfg
    head = ["d", "ρ", "T1 mean (reached)", "T2 mean (reached)", "T_a (T_a/τ_d)",
            "loss at T_a (change over 0.5 τ_d / start)", "majority feature freq.: realised (model q_j)",
            "features per sample / d", "lucky (i,j) at init per replicate"]
    rows = []
    for p in res.points:
        for g, rho in enumerate(cfg.groups):
            rows.append([p["d"], f"{rho:g}", _reached(p["T1"][g]), _reached(p["T2"][g]),
                         f"{p['T_a']} ({p['T_a'] / p['tau']:.2f})",
                         f"{fmt(p['loss'][g].mean())} ({p['loss_change'][g]:.1%})",
                         f"{p['freq_major'][g].mean():.3f} ({p['q_max'][g]:.3f})", f"{p['active'][g].mean():.3f}",
                         fmt(p["lucky_init"][g].mean())])
    show(md_table(head, rows))
    head = ["d", "minority-dominant neurons at T_a", "α·m (Remark 1 needs ≤)", "share of the mask on dead neurons",
            "branch steps", "T5 − T4 (C_z = 1)", "lucky pairs measured at T2 (ρ = %g)" % cfg.groups[0]]
    rows = [[p["d"], fmt(p["dominant"].mean()), fmt(cfg.prune_alpha * p["m"]), fmt(p["dead"].mean()), p["branch"],
             f"{p['t5']:.0f}", int(p["lucky_pairs"][0].sum())] for p in res.points]
    show(md_table(head, rows))


def clock_figure(res: S.ScaleResult) -> None:
    """A_j*/A_maj and the training loss against t / tau_d at every d (vanilla, then control and pruned branches)."""
    fig, ax = plt.subplots(1, 2, figsize=(12, 3.8))
    for k, p in enumerate(res.points):
        s, c = p["series"], f"C{k}"
        ax[0].plot(s["t"], s["A"].mean(1), color=c, label=f"d={p['d']}")
        ax[0].plot(s["tb"], s["A_pruned"].mean(1), color=c, ls="--")
        ax[0].plot(s["tb"], s["A_control"].mean(1), color=c, ls=":")
        ax[1].plot(s["t"], s["loss"][:, -1], color=c, label=f"d={p['d']}, ρ={res.cfg.groups[-1]:g}")
        for a in ax:
            a.axvline(p["T_a"] / p["tau"], color=c, lw=0.8, ls="-.")
    ax[0].set(xlabel="t / τ_d", ylabel="A_j*/A_maj (mean over replicates)", yscale="log",
              title="solid: vanilla to T_a (dash-dot); dotted: control; dashed: pruned")
    ax[1].set(xlabel="t / τ_d", ylabel="InfoNCE (training pairs)", title="loss, minority group")
    ax[0].legend()
    ax[1].legend()
    plt.tight_layout()
    plt.show()


def _ticks(ax, d, recorded=()) -> None:
    """Ticks at the grid's d, the points recorded by a campaign labelled so (they were not computed by this run)."""
    ax.set_xticks(d, [f"{v:.0f}" + ("\nrecorded" if round(v) in recorded else "") for v in d])
    ax.minorticks_off()


def quantity_figure(quants: list[S.Quantity], recorded: tuple = ()) -> None:
    """Each quantity against d: mean and 95% interval over replicates, the prediction and its band; the d's in
    `recorded` (campaign units, not computed by this run) are labelled on the axis."""
    fig, axes = plt.subplots(1, len(quants), figsize=(5.2 * len(quants), 3.6), squeeze=False)
    for ax, q in zip(axes[0], quants, strict=True):
        d, m, lo, hi, target = (np.array(v, float) for v in list(zip(*q.per_d(), strict=True))[:5])
        ax.errorbar(d, m, yerr=[m - lo, hi - m], fmt="o-", capsize=3, label="measured (95% CI)")
        ax.plot(d, target, "k--", label=f"prediction: {q.predicted}")
        if q.one_sided:
            ax.fill_between(d, target, np.maximum(np.nanmax(hi), target.max()) * 1.05, color="k", alpha=0.08)
        else:
            ax.fill_between(d, target - q.tol, target + q.tol, color="k", alpha=0.1, label="band (± tol)")
        ax.set(xscale="log", xlabel="d", title=q.claim)
        _ticks(ax, d, recorded)
        ax.title.set_fontsize("medium")
        ax.legend()
    plt.tight_layout()
    plt.show()


def show_measurements(quants: list[S.Quantity], recorded: tuple = ()) -> None:
    """Per quantity and d: measured mean [95% CI], the prediction, and the gap in tolerance units (a d in `recorded`
    is marked: a campaign unit)."""
    head = ["quantity", "d", "measured [95% CI]", "predicted", "gap / tol [95% CI]"]
    rows = []
    for q in quants:
        for d, m, lo, hi, t, g, glo, ghi in q.per_d():
            rows.append([q.key, f"{d:.0f}" + (" (recorded)" if round(d) in recorded else ""),
                         ci_text(m, lo, hi), fmt(t), ci_text(g, glo, ghi)])
    show(md_table(head, rows))


def gap_figure(quants: list[S.Quantity], sesoi: float, recorded: tuple = ()) -> None:
    """Every quantity's oriented gap (tolerance units, + = away from the prediction) against d, with its trend; the
    d's in `recorded` are labelled on the axis."""
    n = len(quants)
    cols = min(4, n)
    fig, axes = plt.subplots(math.ceil(n / cols), cols, figsize=(3.6 * cols, 3.0 * math.ceil(n / cols)), squeeze=False)
    for ax, q in zip(axes.flat, quants, strict=False):  # the last row of the grid may have spare panels
        G = S.oriented(q)
        word, fit, _ = S.judge_trend(q, sesoi)
        m = np.nanmean(G, 0)
        ax.plot(q.at, G.T, color="grey", lw=0.6, alpha=0.6)
        ax.plot(q.at, m, "o-", color="C3")
        lo, hi = min(-1.5, np.nanmin(G) - 0.5), max(1.5, np.nanmax(G) + 0.5)
        ax.axhspan(lo if q.one_sided else -1, 0 if q.one_sided else 1, color="C2", alpha=0.12)   # prediction met
        ax.axhline(0, color="k", lw=0.6)
        ax.set(xscale="log", title=f"{q.key}\n{word}; slope {ci_text(fit.slope, fit.lo, fit.hi)}")
        ax.set_ylim(lo, hi)
        _ticks(ax, q.at, recorded)
        ax.title.set_fontsize("medium")
    for ax in list(axes.flat)[n:]:
        ax.axis("off")
    axes[0][0].set_ylabel("gap / tol (+ = away)")
    plt.tight_layout()
    plt.show()
