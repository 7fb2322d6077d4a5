"""Notebook 03's verdict rows: the |N_i| bound of eq. (14), the set precision, the tracking of 1-ρ², A_j and F_j
(eqs. 12-13) and the 'for all' bounds against their null."""
from __future__ import annotations

import math

import numpy as np

from ... import premises as P
from ... import stats
from ... import rules
from ... import verdict as V
from ..premise_rows import from_push
from .config import ScalingConfig
from .protocol import summarise

# Theorem 3.1's rows depend on its premises measured on the run, by id (premises.CONDITIONS).
DEPENDS = ("k_poly", "no_memorisation", "lambda_range", "step_window")
# The share rows, whose bands have an open end ("holds at ≥ 0.9"): held to tol_share under Lemma B.1's push
SHARES = ("dominant_set_precision", "singleton_neurons", "offset_alpha_bound", "offset_beta_bound")


def _upper_bound(f: "stats.SlopeFit", e: float, tol: float) -> tuple[str, str]:
    """An exponent bound x <= e, relaxed by tol: rules.judge_bound on the slope's interval."""
    if math.isnan(f.lo):
        return V.UNTESTED, "fewer than two replicates"
    return rules.judge_bound(f.lo, f.hi, e, False, tol)


def bound_rows(id: str, claim: str, source: str, predicted: str, trained: np.ndarray, untrained: np.ndarray,
               at_least: float) -> list["V.Verdict"]:
    """A "for all (i, j): statistic < 1" bound against its null (issue 17), as two rows: the premise that the
    untrained weights do not already meet the band (the upper end of their share's Wilson interval is below
    at_least; scoped id null_below_band__<id>), and the bound, the share of trained entries below 1 judged by
    judge_count, which depends on it: so "holds" always means a clear margin over the null."""
    k, n = float((trained < 1).sum()), trained.size
    k0, n0 = float((untrained < 1).sum()), untrained.size
    lo0, hi0 = stats.binom_ci(k0, n0)
    null = f"untrained weights: share {k0 / max(n0, 1):.3f} [{lo0:.3f}, {hi0:.3f}]"
    pid = P.scoped("null_below_band", id)
    met = V.HOLDS if n0 > 0 and hi0 < at_least else V.FAILS if n0 > 0 and lo0 >= at_least else V.INCONCLUSIVE
    premise = V.row(f"the untrained weights (the null) stay below the band ≥ {at_least:g} of {id}: share of "
                    "untrained entries below 1",
                    P.condition(pid).source, f"share < {at_least:g}", k0 / n0 if n0 else math.nan, lo0, hi0,
                    (met, rules.Rule(f"holds when the null's whole 95% interval lies below {at_least:g}",
                                 (-math.inf, at_least))), kind="premise", id=pid, quantity="fraction")
    verdict, rule = rules.judge_count(k, n, at_least)
    bound = V.row(claim, source, predicted, k / max(n, 1), *stats.binom_ci(k, n), (verdict, rule + f"; null ({null})"),
                  id=id, depends=(*DEPENDS, pid), quantity="fraction")
    return [premise, bound]


def verdict_rows(results: dict, cfg: ScalingConfig) -> list["V.Verdict"]:
    """Notebook 03's verdicts. results: 'fits' (ni_fits), 'overlap' (set_overlap), 'track' (tracking),
    'ratios' (feature_ratios), 'offset' and 'offset_null' (offset_coefs, trained and untrained).
    Tolerances from cfg (tol_*, precision_min, forall_min)."""
    rows = []
    for r, f in results["fits"]["Ni_final"].items():
        verdict, rule = _upper_bound(f, 1 - r ** 2, cfg.tol_ni)
        rows.append(
            V.row(
                claim=f"|N_i| = O(d^(1-ρ²)) after training, ρ={r}: exponent of d in |N_i|",
                source="Thm 3.1, eq. (14)",
                predicted=f"exponent ≤ {1 - r ** 2:.2f}",
                measured=f.slope,
                lo=f.lo,
                hi=f.hi,
                judged=(verdict, rule + f"; N_i: |<w,M_j>| ≥ {cfg.ni_rel}·max"),
                id=f"ni_exponent_{V.id_part(r)}",
                depends=DEPENDS,
            )
        )
    pm, pl, ph = results["overlap"]["precision"]
    verdict, rule = rules.judge_share(pl, ph, cfg.precision_min, "precision")
    rows.append(
        V.row(
            claim="final dominant set ⊆ set at initialisation: precision (share of the final set)",
            source="Thm 3.1",
            predicted="precision ≈ 1",
            measured=pm,
            lo=pl,
            hi=ph,
            judged=(verdict, rule),
            id="dominant_set_precision",
            depends=DEPENDS,
            quantity="fraction",
        )
    )
    for lab, f in results["track"].items():
        if len(cfg.ratios) < 2 or math.isnan(f.lo):
            verdict, rule = V.UNTESTED, "needs two ratios and two replicates"
        else:
            verdict, rule = rules.judge_target(f.lo, f.hi, 1.0, cfg.tol_tracking)
        rows.append(
            V.row(
                claim=f"|N_i| exponent follows 1-ρ² — {lab}: slope of the exponent on 1 − ρ²",
                source="claim 3; eq. (14) as a scaling law",
                predicted="slope 1",
                measured=f.slope,
                lo=f.lo,
                hi=f.hi,
                judged=(verdict, rule),
                id=f"ni_tracking_{lab.split()[0]}",
                depends=DEPENDS,
            )
        )
    fr = results["ratios"]
    for id, claim, source, pred, f, target, tol in (
            ("a_j_slope", "A_j ∝ eps_j/eps_max: log-log slope of A_j on eps_j/eps_max", "Thm 3.1, eq. (13)",
             "log-log slope 1", fr["fitA"], 1.0, cfg.tol_A),
            ("f_j_slope", "F_j ∝ (eps_j/eps_max)²: log-log slope of F_j on eps_j/eps_max", "Thm 3.1, eqs. (12)-(13)",
             "log-log slope 2", fr["fitF"], 2.0, cfg.tol_F)):
        rows.append(V.row(claim, source, pred, f.slope, f.lo, f.hi, rules.judge_target(f.lo, f.hi, target, tol),
                          id=id, depends=DEPENDS))
    ok = fr["single_ok"]
    rows.append(V.count_row("≥ m d^(-(eps_max/eps_min)²) neurons with N_i = {j} (minority j): "
                            "share of (d, ρ, replicate) cells", "Thm 3.1",
                            "fraction of (d, ρ, replicate) cells = 1", float(ok.sum()), ok.size, cfg.forall_min,
                            "; constant of Ω taken as 1", id="singleton_neurons", depends=DEPENDS))
    (ap, be), (ap0, be0) = results["offset"], results["offset_null"]
    rows += bound_rows("offset_alpha_bound", "α'_ij ≤ o(1/√d)||w_i||: share of entries with √d α'/||w|| < 1",
                          "Thm 3.1, eq. (13)", "√d α'/||w|| < 1 for all", ap, ap0, cfg.forall_min)
    rows += bound_rows("offset_beta_bound", "|β_ij| ≤ o(1/√d1)||w_i||: share of entries with √d1 |β|/||w|| < 1",
                          "Thm 3.1, eq. (13)", "√d1 β/||w|| < 1 for all", be, be0, cfg.forall_min)
    return rows


def with_push(rows: list["V.Verdict"], push: dict | None, cfg: ScalingConfig) -> list["V.Verdict"]:
    """`rows` with Lemma B.1 tested by its effect on every trained row (premise_rows.by_effect): `push` is
    measure_push's output, the whole grid trained again with 4 × K pairs a step and judged by the same rules. A row
    that moves less than its own tolerance meets K = poly(d1) for that row: the half-width of its band where both
    ends are finite (tracking, A_j, F_j), else tol_ni for an exponent bound ("≤ 1 − ρ² + tol_ni") and tol_share for
    a share (precision, the "for all" bounds). push None (a record made before notebook 03 measured its push) leaves
    the rows gated by the k_poly row, as before."""
    if push is None:
        return rows
    ids = tuple(r.id for r in rows if "k_poly" in r.depends)
    tols = {i: cfg.tol_ni if i.startswith("ni_exponent_") else cfg.tol_share for i in ids
            if i.startswith("ni_exponent_") or i in SHARES}
    return from_push(rows, push["n_pairs"], cfg, lambda c: verdict_rows(summarise(push["grid"], c), c), ids, tols)
