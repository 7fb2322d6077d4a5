"""Notebook 08's trend rule: each quantity's gap to its prediction along d, the slope of that gap, and the verdict
rows."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from ... import premises as P
from ... import stats
from ... import rules
from ... import verdict as V
from .. import scaling as SC
from .config import ScaleConfig, ScaleResult

# ----------------------------------------------------------------------------------------------------------------
# quantities, gaps and the trend rule
# ----------------------------------------------------------------------------------------------------------------
CLOSES, NO_GAP, STAYS, GROWS = "the gap closes", "no gap at any d", "the gap stays", "the gap grows"
OVERSHOOTS, TREND_INCONCLUSIVE = "the gap overshoots", "inconclusive"
GAP_LABEL = "gap to the prediction closes along d (slope per doubling of d, in tolerance units)"
TREND_VERDICT = {CLOSES: V.HOLDS, NO_GAP: V.HOLDS, STAYS: V.FAILS, GROWS: V.FAILS, OVERSHOOTS: V.FAILS,
                 TREND_INCONCLUSIVE: V.INCONCLUSIVE}


@dataclass
class Quantity:
    """One measured quantity along d: per-replicate values x (R, k) at the d's `at` (k,), the prediction, its band."""

    key: str
    claim: str             # short statement of the claim at one d
    source: str
    predicted: str         # the prediction as text
    at: np.ndarray         # (k,) the d of each column (geometric midpoints for local exponents)
    x: np.ndarray          # (R, k)
    target: np.ndarray     # (k,) the prediction at each column
    tol: float             # band: target ± tol; for a one-sided claim x >= target, tol is the unit of the gap
    one_sided: bool = False
    depends: tuple = ()    # ids of the premise rows (premise_rows) this quantity's row depends on

    def gaps(self) -> np.ndarray:
        """(x - target) / tol per replicate and column, in tolerance units (signed)."""
        return (self.x - self.target) / self.tol

    def per_d(self) -> list[tuple]:
        """Per column: (d, mean x, lo, hi, target, mean gap, gap lo, gap hi) over replicates."""
        m, lo, hi = (v.numpy() for v in stats.mean_ci(torch.tensor(self.x, dtype=torch.float64)))
        g = [(v - self.target) / self.tol for v in (m, lo, hi)]
        return list(zip(self.at, m, lo, hi, self.target, *g, strict=True))


def oriented(q: Quantity) -> np.ndarray:
    """The gap with + away from the prediction: a shortfall for one-sided claims; for two-sided ones the sign of the
    mean gap over the grid (so a gap that stays on one side is |gap|)."""
    g = q.gaps()
    if q.one_sided:
        return -g
    mean = np.nanmean(np.nanmean(g, 0)) if np.isfinite(g).any() else 0.0
    return g * (1.0 if mean >= 0 else -1.0)


def trend_slope(at, G: np.ndarray) -> stats.SlopeFit:
    """Per replicate, the least-squares slope of G[r] (R, k) on log2 d over its finite entries (>= 2); then the
    mean slope and its 95% t-interval over replicates (stats.replicate_mean)."""
    x = np.log2(np.asarray(at, float))
    slopes = []
    for g in np.asarray(G, float):
        ok = np.isfinite(g)
        if ok.sum() >= 2 and np.ptp(x[ok]) > 0:
            xc = x[ok] - x[ok].mean()
            slopes.append(float((xc * (g[ok] - g[ok].mean())).sum() / (xc ** 2).sum()))
    return stats.replicate_mean(slopes)


def judge_trend(q: Quantity, sesoi: float) -> tuple[str, stats.SlopeFit, tuple[str, str]]:
    """(trend word, slope fit, (verdict, rule)) of one quantity (see the module docstring)."""
    fit = trend_slope(q.at, oriented(q))
    rows = q.per_d()
    glo, ghi = np.array([r[6] for r in rows]), np.array([r[7] for r in rows])
    rule = (f"slope over log2 d of the gap in tolerance units (+ = away from the prediction): closes if its 95% "
            f"interval lies below -{sesoi:g} per doubling, stays if inside ±{sesoi:g}, grows if above +{sesoi:g}; "
            f"holds = closes or no gap at any d; does not hold = stays, grows or overshoots")
    inside = (glo >= 0) if q.one_sided else ((glo >= -1) & (ghi <= 1))
    if np.isfinite(glo).all() and inside.all():
        word = NO_GAP
    elif (not q.one_sided and len(rows) >= 2 and np.isfinite([glo[0], ghi[0], glo[-1], ghi[-1]]).all()
          and ((glo[0] > 1 and ghi[-1] < -1) or (ghi[0] < -1 and glo[-1] > 1))):
        word = OVERSHOOTS
    elif math.isnan(fit.lo) or math.isnan(fit.hi):
        return TREND_INCONCLUSIVE, fit, (V.UNTESTED, "fewer than 2 replicates with 2 grid points: " + rule)
    elif fit.hi <= -sesoi:
        word = CLOSES
    elif -sesoi <= fit.lo and fit.hi <= sesoi:
        word = STAYS
    elif fit.lo >= sesoi:
        word = GROWS
    else:
        word = TREND_INCONCLUSIVE
    # the band the slope is judged against; "no gap at any d" holds whatever the slope (the row then says so)
    band = (math.nan, math.nan) if word == NO_GAP else (-math.inf, -sesoi)
    return word, fit, (TREND_VERDICT[word], rules.Rule(rule, band))


# the stages are checked separately (Stage 1 for the rate ratio, T2 and Stage 3 for the rest): scoped premise ids
STAGE_T1, FIT_WINDOW, STAGE_T2 = (P.scoped("stage_reached", c) for c in ("t1", "stage1_window", "t2"))
STAGE1 = ("sparse_data", STAGE_T1, FIT_WINDOW)
LATER = ("sparse_data", STAGE_T2, "convergence")
PRUNED = (*LATER, "alpha_bound_extended")


def premise_rows(res: ScaleResult) -> list[V.Verdict]:
    """The premises the quantities depend on, each checked at every d of the grid (a premise row counts the d's that
    meet it; it holds when all do). Stages are checked once per stage, so their rows carry scoped ids."""
    cfg, pts = res.cfg, res.points
    lo_r, hi_r = cfg.groups[-1], cfg.groups[0]
    def at_every_d(pid: str, claim: str, met: list) -> V.Verdict:
        return V.premise_check(pid, claim, P.condition(pid).source, sum(bool(m) for m in met), len(met), "d's")
    return [
        at_every_d("sparse_data", f"data sparse at every d (largest q_j = 1 - (1 - p_j)^L <= {cfg.sparsity_max:g}, "
                   "Def. 3.1)", [p["q_max"].max() <= cfg.sparsity_max for p in pts]),
        at_every_d(STAGE_T1, f"T1 reached in every replicate at every d (ρ={lo_r:g})",
                   [(p["T1"][-1] >= 0).all() for p in pts]),
        at_every_d(FIT_WINDOW, "Stage-1 fit window [fit_start, T1) holds >= 3 steps at every d",
                   [p["window"][1] - p["window"][0] >= 3 for p in pts]),
        at_every_d(STAGE_T2, "T2 reached in every replicate at every d", [(p["T2"] >= 0).all() for p in pts]),
        at_every_d("convergence", f"Stage 3 reached at every d (loss fell by >= {cfg.loss_drop:g} of its start and "
                   f"changed by < {cfg.plateau_tol:g} of it over 0.5 τ_d, before t3_cap τ_d)",
                   [p["stage3"] for p in pts]),
        at_every_d("lucky_exist", f"lucky pairs in >= 2 replicates at every d (ρ={hi_r:g})",
                   [(p["lucky_pairs"][0] > 0).sum() >= 2 for p in pts]),
        at_every_d("alpha_bound_extended", "Remark 1: alpha m <= minority-dominant neurons at T_a at every d (mean "
                   "over replicates)", [cfg.prune_alpha * p["m"] <= p["dominant"].mean() for p in pts]),
    ]


def quantities(res: ScaleResult) -> list[Quantity]:
    """The quantities of claims 1-4 along d, with predictions, bands and the premises each depends on."""
    cfg = res.cfg
    ds = np.array(cfg.ds, float)
    ratios = np.array(cfg.groups)
    lo_r, hi_r = ratios[-1], ratios[0]
    ones = np.ones(len(ds))
    def X(key):
        return res.stack(key)
    out = [
        Quantity("rate_ratio", f"Stage-1 majority/minority rate ratio (ρ={lo_r:g})", "Lemma 3.1, eq. (7)",
                 f"eps_max/eps_min = {1 / lo_r:g}", ds, X("rate_ratio"), ones / lo_r, cfg.tol_ratio / lo_r,
                 depends=STAGE1),
        Quantity("lucky_fraction", f"lucky pairs reaching eq. (9) at T2 (ρ={hi_r:g})", "Lemma 3.2(a), eq. (9)",
                 "fraction 1", ds, X("lucky_frac")[0], ones, cfg.tol_fraction,
                 depends=("sparse_data", STAGE_T2, "lucky_exist")),
        Quantity("alignment", f"majority − minority best cos² at T_a (ρ={lo_r:g})", "workshop §4, Fig. 1",
                 f"> {cfg.sesoi_alignment:g}", ds, X("alignment"), ones * cfg.sesoi_alignment, cfg.sesoi_alignment,
                 one_sided=True, depends=LATER),
    ]
    if len(ds) >= 2:
        Ni = X("Ni")                                                     # (G, R, k)
        mid = np.sqrt(ds[1:] * ds[:-1])
        E = np.stack([SC.ni_exponents(ds[k:k + 2], Ni[:, :, k:k + 2].transpose(1, 0, 2))
                      for k in range(len(ds) - 1)], -1)                  # (R, G, k-1)
        for g, rho in enumerate(ratios):
            out.append(Quantity(f"Ni_exponent_{rho:g}", f"local exponent of |N_i| in d at T_a (ρ={rho:g})",
                                "Thm 3.1, eq. (14)", f"1 − ρ² = {1 - rho ** 2:g}", mid, E[:, g],
                                np.full(len(mid), 1 - rho ** 2), cfg.tol_exponent, depends=LATER))
        if len(ratios) >= 2:
            T = np.stack([SC.tracking_slopes(ds[k:k + 2], ratios, Ni[:, :, k:k + 2].transpose(1, 0, 2))
                          for k in range(len(ds) - 1)], -1)
            out.append(Quantity("Ni_tracking", "slope of the local |N_i| exponent on 1 − ρ²",
                                "claim 3; eq. (14) as a scaling law", "1", mid, T, np.ones(len(mid)),
                                cfg.tol_tracking, depends=LATER))
    out += [
        Quantity("mask_share", f"share of the mask on minority-dominant neurons at T_a (α={cfg.prune_alpha:g})",
                 "Remark 1; Thm F.1", "1", ds, X("share"), ones, cfg.tol_share,
                 depends=PRUNED),
        Quantity("pruning_gain", f"pruning gain in A_j*/A_maj after the branch (ρ={lo_r:g})",
                 "Thm 3.1 eq. (13) vs Thm 3.2(c)", f"1 − ρ = {1 - lo_r:g}", ds, X("gain"), ones * (1 - lo_r),
                 cfg.tol_gain, depends=PRUNED),
    ]
    return out


def verdict_rows(res: ScaleResult, cfg: ScaleConfig | None = None) -> list[V.Verdict]:
    """The premise rows, then one row per quantity: does its gap to the prediction close as d grows? (judge_trend;
    verdict.gate applies the premise rows to the quantities' rows by their depends)."""
    cfg = cfg or res.cfg
    rows = premise_rows(res)
    for q in quantities(res):
        word, fit, judged = judge_trend(q, cfg.trend_sesoi)
        # The outcome goes in the rule, not the claim: the claim names the row across runs and seeds (stability).
        judged = (judged[0], f"{word}: " + judged[1])
        # the row shows the slope of the gap, not the quantity: its label says so, with its unit (issue 49)
        rows.append(V.row(f"{q.claim}: {GAP_LABEL}", q.source,
                          f"{q.predicted} at every d; the gap's slope ≤ −{cfg.trend_sesoi:g} per doubling of d",
                          fit.slope, fit.lo, fit.hi, judged, n=fit.n, band=cfg.trend_sesoi,
                          id=q.key.lower().replace(".", "p"), depends=q.depends))
        if word == NO_GAP:
            rows[-1].band_words = "holds: no gap at any d (every d's interval inside the quantity's band)"
    return rows
