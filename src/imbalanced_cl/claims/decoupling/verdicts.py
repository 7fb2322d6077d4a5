"""Notebook 09's analysis of a finished grid: premises, verdict rows, tables and the imbalance answer."""
from __future__ import annotations

import math

import torch

from ... import premises as P
from ... import rules
from ... import verdict as V
from ...sim import views as VW
from ...stats import mean_ci, mean_ci_in
from .config import AUGMENTED, COMPANION, DecouplingConfig
from .protocol import DecouplingResult

# --- summaries and verdicts ---

# The range of each measured series (stats.RANGES), so that its interval stays inside it
QUANTITY = {"share": "fraction", "align": "cosine", "removal": "cosine", "coverage": "fraction", "probe": "positive"}
LABELS = {VW.IDENTICAL: "identical copies", VW.RANDOM_MASK: "RandomMask", VW.PAPER: "the main paper's pairs"}


def split_mean(x: torch.Tensor, minority: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Mean over the majority and over the minority features of the last dim: two tensors (...)."""
    return x[..., ~minority].mean(-1), x[..., minority].mean(-1)


def settled_row(cfg, series: torch.Tensor, rid: str) -> V.Verdict:
    """The premise that row `rid`'s measurement has stopped moving (t ≥ T3), as a premise row of its own (scoped id
    stage_reached__<rid>): how far the mean moved over the last checkpoint interval, held to tol_converged."""
    moved = float((series[-1] - series[-2]).mean().abs()) if series.shape[0] > 1 else math.inf
    return V.premise_value(P.scoped("stage_reached", rid),
                           f"t ≥ T3 for {rid}: how far its mean moved over the last checkpoint interval",
                           f"{COMPANION}, Thm 3.4 (t ≥ T3)", f"≤ {cfg.tol_converged:g}", moved,
                           f"holds when the mean moved by ≤ {cfg.tol_converged:g}", band=(0.0, cfg.tol_converged),
                           quantity="positive")


def bias_row(result: DecouplingResult, kind: str) -> V.Verdict:
    """The premise that the bias schedule switched on for pair type `kind` (scoped id companion_bias__<kind>): the
    replicates of its balanced cell where T1 was reached, of all."""
    on = result.T1[result.cell(kind, 1.0)] >= 0
    return V.premise_check(P.scoped("companion_bias", kind), f"the bias schedule switched on with {LABELS[kind]}",
                           f"{COMPANION}, the bias schedule", int(on.sum()), on.numel(), "replicates")


def _depends(rid: str, kind: str, bias: bool) -> tuple[str, ...]:
    """A row's premises by id: its own settling, and with augmentation the bias schedule of its pair type."""
    return (P.scoped("stage_reached", rid),) + ((P.scoped("companion_bias", kind),) if bias else ())


# 9 arguments: the grid and its thresholds, the row's words (claim, source), which series, the bound, its premises
def _bound_rows(result, cfg, claim, source, name, kind, bound, at_least, bias_premise=True) -> list[V.Verdict]:
    """One companion row, after the premise row of its settling: the last step's `name` in the balanced `kind` cell
    against a bound."""
    series = result.series(name, kind).float()                  # (T, R)
    m, lo, hi = mean_ci_in(series[-1], QUANTITY[name])
    edge = bound - cfg.tol_bound if at_least else bound + cfg.tol_bound
    rid = f"{kind}_{name}"
    return [settled_row(cfg, series, rid),
            V.row(claim, f"{COMPANION}, {source}", f"{'≥' if at_least else '≤'} {bound:g}", m, lo, hi,
                  rules.judge_bound(lo, hi, bound, at_least, cfg.tol_bound), n=series.shape[1], band=abs(m - edge),
                  kind="companion", id=rid, quantity=QUANTITY[name], depends=_depends(rid, kind, bias_premise))]


def _gap_rows(result, cfg, kind) -> list[V.Verdict]:
    """"Only with augmentation": identical copies' probe MSE minus `kind`'s, paired by replicate, above
    probe_gap_min (after the premise row of its settling)."""
    series = (result.series("probe", VW.IDENTICAL) - result.series("probe", kind)).float()
    m, lo, hi = (float(v) for v in mean_ci(series[-1]))
    rid = f"probe_gap_{kind}"
    return [settled_row(cfg, series, rid),
            V.row(f"The probe needs augmentation: its MSE without minus with {LABELS[kind]} (paired)",
                  f"{COMPANION}, Cor. 3.3 vs Cor. 3.5", f"> {cfg.probe_gap_min:g}", m, lo, hi,
                  rules.judge_positive(lo, hi, "paired probe-error gap", cfg.probe_gap_min), n=series.shape[1],
                  band=abs(m - cfg.probe_gap_min), kind="companion", id=rid, depends=_depends(rid, kind, True))]


def verdict_rows(result: DecouplingResult, cfg: DecouplingConfig) -> list[V.Verdict]:
    """Wen & Li's claims judged at the last step of the balanced cells (eps_min = eps_max), thresholds from cfg.

    A row is "not comparable" when its run is not at the theorems' time (the measurement still moves by more
    than tol_converged) or, with augmentation, when the bias schedule never switched on.
    """
    rows = []
    for kind in (k for k in cfg.kinds if k in AUGMENTED):
        w = f"With {LABELS[kind]}"
        rows.append(bias_row(result, kind))
        rows += [
            *_bound_rows(result, cfg, f"{w}, the feature share ||Mᵀw||²/||w||² grows to ≈ 1",
                         "Thm 3.4 (β = o(‖w‖/√d1))", "share", kind, cfg.share_min, True),
            *_bound_rows(result, cfg, f"{w}, noise alignment cos(f(x), f(ξ)) stays low", "Thm 3.4 and Sec. 4",
                         "align", kind, cfg.noise_align_max, False),
            *_bound_rows(result, cfg, f"{w}, the noise is removed: cos(f(x), f(Mz)) → 1", "Thm 3.4",
                         "removal", kind, cfg.removal_min, True),
            *_bound_rows(result, cfg,
                         f"{w}, every atom has a singleton neuron (N_i = {{j}}): share of atoms that have one",
                         "Thm 3.4 (Ω(1) neurons per atom)", "coverage", kind, cfg.coverage_min, True),
            *_bound_rows(result, cfg, f"{w}, a linear probe recovers z (normalised MSE)", "Cor. 3.5",
                         "probe", kind, cfg.probe_max, False),
        ]
    if VW.IDENTICAL in cfg.kinds:   # footnote 3: without augmentation the bias may be anything, so no bias premise
        rows += [
            *_bound_rows(result, cfg, "Without augmentation, noise alignment cos(f(x), f(ξ)) approaches 1",
                         "Thm 3.2", "align", VW.IDENTICAL, cfg.align_high, True, bias_premise=False),
            *_bound_rows(result, cfg, "Without augmentation, a linear probe fails (normalised MSE)", "Cor. 3.3",
                         "probe", VW.IDENTICAL, cfg.probe_max, True, bias_premise=False),
        ]
        rows += [r for kind in cfg.kinds if kind in AUGMENTED for r in _gap_rows(result, cfg, kind)]
    return rows


def final_table(result: DecouplingResult, ratio: float = 1.0) -> dict:
    """Per pair type at one ratio: the last step's share, align, removal, coverage and probe as (mean, lo, hi)."""
    names = ("share", "align", "removal", "coverage", "probe")
    return {kind: {k: tuple(float(x) for x in mean_ci(result.series(k, kind, r)[-1].float())) for k in names}
            for kind, r in result.cells if r == ratio}


def paired_difference(result: DecouplingResult, name: str, kind_a: str, kind_b: str, ratio: float = 1.0) -> tuple:
    """(mean, lo, hi) of `name` in kind_a minus kind_b at the last step, paired by replicate: replicate r of every
    cell shares its dictionary, initial weights and random numbers, so the difference isolates the pair builder."""
    diff = result.series(name, kind_a, ratio)[-1] - result.series(name, kind_b, ratio)[-1]
    return tuple(float(x) for x in mean_ci(diff.float()))


def differences(result: DecouplingResult, kind_a: str, kind_b: str, ratio: float = 1.0) -> dict:
    """paired_difference of every final_table summary: {name: (mean, lo, hi)} of kind_a minus kind_b."""
    return {name: paired_difference(result, name, kind_a, kind_b, ratio)
            for name in ("share", "align", "removal", "coverage", "probe")}


def imbalance_table(result: DecouplingResult) -> list[dict]:
    """Per pair type and eps ratio, at the last step: majority and minority probe MSE and atom coverage,
    and the minority-minus-majority gaps (paired within each network), each as (mean, lo, hi)."""
    def ci(x):
        return tuple(float(v) for v in mean_ci(x))
    rows = []
    for c, (kind, ratio) in enumerate(result.cells):
        pm, pn = split_mean(result.probe[-1, c], result.minority)
        cm, cn = split_mean((result.singles[-1, c] > 0).float(), result.minority)
        rows.append({"kind": kind, "ratio": ratio, "probe_major": ci(pm), "probe_minor": ci(pn),
                     "probe_gap": ci(pn - pm), "cover_major": ci(cm), "cover_minor": ci(cn), "cover_gap": ci(cn - cm)})
    return rows


def imbalance_answer(result: DecouplingResult, cfg: DecouplingConfig) -> list[str]:
    """Does augmentation protect the minority features? One sentence per pair type at the smallest ratio,
    read off the intervals of the minority probe MSE against cfg.probe_max and of the minority-majority gap."""
    r = min(cfg.ratios)
    def learned(lo, hi):
        return "recovered" if hi <= cfg.probe_max else "not recovered" if lo > cfg.probe_max else "undecided"
    lines = []
    for row in (x for x in imbalance_table(result) if x["ratio"] == r):
        (mn, mn_lo, mn_hi), (mj, mj_lo, mj_hi) = row["probe_minor"], row["probe_major"]
        g, g_lo, g_hi = row["probe_gap"]
        gap = "worse than" if g_lo > 0 else "better than" if g_hi < 0 else "not distinguishable from"
        lines.append(f"{LABELS[row['kind']]} at eps_min/eps_max = {r:g}: minority probe MSE {mn:.3f} [{mn_lo:.3f}, "
                     f"{mn_hi:.3f}] ({learned(mn_lo, mn_hi)} at the threshold {cfg.probe_max:g}), majority {mj:.3f} "
                     f"[{mj_lo:.3f}, {mj_hi:.3f}] ({learned(mj_lo, mj_hi)}); the minority is {gap} the majority "
                     f"(gap {g:+.3f} [{g_lo:+.3f}, {g_hi:+.3f}]).")
    return lines
