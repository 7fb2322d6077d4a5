"""Notebook 05's judgement of a finished run: Spearman trends of each figure's metric with eps_min, the Fig. 4 confound
check, and the verdict rows (one per figure and pruning arm)."""
from __future__ import annotations

import numpy as np
import torch

from ...stats import mean_ci, trend
from ...rules import judge_trend
from ...verdict import id_part, row
from .config import FIGURES, IMPROVES
from .protocol import AppendixResult


def trend_report(res: AppendixResult, fig: int) -> str:
    """Per arm, Spearman ρ(eps_min, mean curve) per NSR level and their mean with its bootstrap interval; with two
    arms, the paired difference pruned − vanilla over the figure's grid (95% t-interval over repeats)."""
    cfg, lines = res.cfg, []
    for a, alpha in enumerate(cfg.arms):
        sig, eps, v = res.curves(fig, a)
        rho, lo, hi, per = trend(eps, v, cfg.boot, cfg.boot_seed)
        arm = "vanilla" if alpha == 0 else f"pruned α={alpha:g}"
        lines.append(f"{arm:>15}: Spearman ρ(eps_min, mean curve) per NSR "
                     + ", ".join(f"{cfg.nsr_of(s):.3g}: {r:+.2f}" for s, r in zip(sig, per, strict=True))
                     + f"; mean {rho:+.2f} [{lo:+.2f}, {hi:+.2f}]")
    if len(cfg.arms) > 1:  # paired by construction: same M, W0 and data in both arms
        diff = res.curves(fig, 1)[2] - res.curves(fig, 0)[2]          # (n_sigma, n_eps, repeats)
        dm, dlo, dhi = mean_ci(torch.from_numpy(diff.reshape(-1, diff.shape[-1]).mean(0)))
        lines.append(f"pruned − vanilla, mean over the figure's grid: {float(dm):+.4g} [{float(dlo):+.4g}, "
                     f"{float(dhi):+.4g}] (95% t-interval over repeats); largest |difference| at any point and "
                     f"repeat: {np.abs(diff).max():.3g}")
    return "\n".join(lines)


def diagnostic_report(res: AppendixResult, metrics: dict) -> str:
    """Fig. 4 confound check on the vanilla arm: Spearman ρ with eps_min of the raw MSE and of each {metric: label},
    and whether the minority coordinate's 1 − R² falls while the raw MSE rises."""
    cfg = res.cfg
    raw = trend(*res.curves(4, 0)[1:], cfg.boot, cfg.boot_seed)
    by_metric = {m: trend(*res.curves(4, 0, m)[1:], cfg.boot, cfg.boot_seed) for m in metrics}
    lines = [f"vanilla, Spearman ρ of {label} with eps_min: {rho:+.2f} [{lo:+.2f}, {hi:+.2f}]"
             for label, (rho, lo, hi, _) in [("raw MSE", raw)] + [(metrics[m], t) for m, t in by_metric.items()]]
    _, lo_r, _, _ = raw
    _, lo_n, hi_n, _ = by_metric["test_nmse_minority"]
    minority = "falls" if hi_n < 0 else "rises" if lo_n > 0 else "has no settled direction"
    lines.append(f"the minority coordinate's 1 − R² {minority} with eps_min" + (
        "; the raw MSE rises only because the target's variance does" if (lo_r > 0 and hi_n < 0) else ""))
    return "\n".join(lines)


FIG_CLAIMS = {
    1: "# neurons with |cos(w_i, M_min)| ≥ 0.3 grows with eps_min",
    2: "max_i |cos(w_i, M_min)| grows with eps_min",
    3: "test mean cos(f(X), f(Y)) grows with eps_min",
    4: "regression test MSE falls as eps_min grows",
}


# What every row shows, named in its label after the statement
SHOWN = "Spearman ρ of the metric with eps_min, mean over NSR levels"


# 10 arguments: which curve (fig, arm, metric), the row's own words (claim, source, direction, predicted), its id
# and its kind
def _trend_row(res: AppendixResult, fig: int, arm: int, metric: str | None, claim: str, source: str,
               direction: int, predicted: str, id: str, kind: str = "paper"):
    """One verdict row: Spearman ρ of a metric with eps_min on a figure's grid, judged by judge_trend. App. A.2 does
    not state its hyperparameters, so no premise of Theorem 3.1 gates it (depends is empty)."""
    cfg = res.cfg
    sig, eps, v = res.curves(fig, arm, metric)
    rho, lo, hi, _ = trend(eps, v, cfg.boot, cfg.boot_seed)
    verdict, rule = judge_trend(lo, hi, direction, cfg.rho_holds)
    return row(
        claim=f"{claim}: {SHOWN}",
        source=source,
        predicted=predicted + f"; mean over {len(sig)} NSR levels",
        measured=rho,
        lo=lo,
        hi=hi,
        judged=(verdict, rule + f" (95% percentile bootstrap over {cfg.repeats} repeats, {cfg.boot} resamples)"),
        id=id,
        kind=kind,
        quantity="cosine",
    )


def verdict_rows(res: AppendixResult) -> list:
    """One verdict row per figure and pruning arm: Spearman ρ of the metric with eps_min, bootstrap interval. The
    pruned arm and the Fig. 4 diagnostics are beyond the paper (kind "diagnostic": they do not count for A.2)."""
    rows = []
    for a, alpha in enumerate(res.cfg.arms):
        for fig in FIGURES:
            arm = "" if alpha == 0 else f" — with Alg. 1 pruning α={alpha:g} (not in the paper)"
            sign = "> 0" if IMPROVES[fig] > 0 else "< 0"
            id = f"fig{fig}_trend" + ("" if alpha == 0 else f"_alpha{id_part(alpha)}")
            rows.append(_trend_row(res, fig, a, None, FIG_CLAIMS[fig] + arm, f"App. A.2, Fig. {fig}", IMPROVES[fig],
                                   f"Spearman ρ(eps_min, mean curve) {sign}, monotone (|ρ| → 1)", id,
                                   "paper" if alpha == 0 else "diagnostic"))
    # Diagnostics for Fig. 4 (not the paper's metric): does the MSE rise only because the target's variance does?
    for metric, what in (("test_nmse", "variance-normalised regression MSE (1 - R²)"),
                         ("test_nmse_minority", "1 - R² of the minority coordinate alone")):
        rows.append(_trend_row(res, 4, 0, metric, f"{what} falls as eps_min grows — diagnostic, not in the paper",
                               "App. A.2, Fig. 4 (normalised)", -1, "Spearman ρ < 0", f"fig4_{metric}", "diagnostic"))
    return rows
