"""Judging the map: a verdict per cell, and which of three answers the map supports for claim 4.

  (a) the premises hold somewhere we can run: the claim's verdict there;
  (b) they hold only beyond our reach: the binding premises, and the size (m, K) they need, from closed forms
      and from the measured scaling;
  (c) they cannot hold together: two premises conflict (the rule names which, with numbers).
The rule is fixed here, before any run, and tested on hand-made cells (tests/test_premise_map.py).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ... import premises as P
from ...verdict import (INCONCLUSIVE, NOT_COMPARABLE, UNTESTED, Verdict, combine, judge_positive, replicates_needed)
from .config import PremiseMapConfig
from .protocol import CellResult

SOURCE = "Thm 3.2(c), Remarks 1-3"
CLAIM = "pruning raises A_j*/A_maj over its control"

# Each condition the map measures at a cell, by its id in premises.CONDITIONS. Only a premise can gate a cell's row:
# the feature-span share, the minority-dominant neurons, the mask's share and Remark 2's "smallest" are predictions.
KEY_IDS = {"lambda": "lambda_range", "window": "step_window", "sigma": "noise_scale", "growth": "minority_growth",
           "lucky": "lucky_exist", "lemma_b1": "k_poly", "share": "feature_span", "dominant": "minority_dominant_exist",
           "mask": "mask_share", "smallest": "minority_smallest"}


def gate_keys(res: CellResult) -> list[str]:
    """The keys of the cell's required conditions that are premises (by id): those that may gate its row."""
    return [k for k, p in res.premises.items() if p.required and P.is_premise(KEY_IDS.get(k, ""))]


def gates(res: CellResult) -> list:
    """The cell's gating premises (gate_keys), as Premise objects."""
    return [res.premises[k] for k in gate_keys(res)]


def gates_ok(res: CellResult) -> bool:
    """Whether every gating premise of the cell holds."""
    return all(p.holds for p in gates(res))


def cell_id(res: CellResult) -> str:
    """The cell's row id: its label in snake_case (d=10 λ=mid ρ=0.8 m=5000 -> cell_d10_mid_rho0p8_m5000)."""
    c = res.cell
    extra = {"m/d": f"_m{c.m}", "K": f"_k{c.K}", "alpha": f"_alpha{c.alpha:g}",
             "n_minority": f"_minority{c.n_minority}"}.get(c.axis, "")
    return f"cell_d{c.d}_{c.lam_name}_rho{c.ratio:g}{extra}".replace(".", "p").replace("-", "m").lower()


@dataclass
class Conclusion:
    """The map's answer for claim 4: kind a, b or c, its verdict and one paragraph of why, with numbers."""

    kind: str            # "a", "b" or "c"
    verdict: str
    text: str
    binding: list        # premise keys that fail in every cell that was run
    cells_ok: int        # cells (run) where every required premise holds
    cells_run: int


def cell_row(res: CellResult, cfg: PremiseMapConfig) -> Verdict:
    """The cell's verdict row: the gain judged against effect_tol, "not comparable" if a required premise fails."""
    m, lo, hi = res.gain_ci()
    pred = f"> {cfg.effect_tol:g} (Thm 3.2(c): the minority coefficient becomes dominant)"
    ids = dict(id=cell_id(res), depends=tuple(dict.fromkeys(KEY_IDS[k] for k in gate_keys(res))))
    if not res.ran:
        return Verdict(f"{CLAIM} at {res.cell.label}", SOURCE, pred, m, lo, hi, UNTESTED, "the cell was not run",
                       kind="paper", **ids)
    verdict, rule = judge_positive(lo, hi, "gain in A_j*/A_maj", cfg.effect_tol)
    failed = [p for p in gates(res) if not p.holds]
    premise = ("not met: " + "; ".join(f"{p.short} ({p.value:.3g} vs {p.threshold})" for p in failed)) if failed \
        else "met: " + "; ".join(p.short for p in gates(res))
    n = int(res.gain.numel())
    need = replicates_needed(lo, hi, cfg.effect_tol, n) if verdict == INCONCLUSIVE and not failed else math.nan
    return Verdict(f"{CLAIM} at {res.cell.label}", SOURCE, pred, m, lo, hi, NOT_COMPARABLE if failed else verdict,
                   rule, premise=premise, n=n, n_needed=need, kind="paper", would_be=verdict if failed else "", **ids)


def binding_premises(results: list[CellResult]) -> list[str]:
    """Required premise keys that fail in every cell that was run (in their order of appearance)."""
    ran = [r for r in results if r.ran]
    if not ran:
        return []
    keys = gate_keys(ran[0])
    return [k for k in keys if all(not r.premises[k].holds for r in ran if k in r.premises)]


def conflicts(results: list[CellResult], rates: list[dict]) -> list[str]:
    """Premise pairs that cannot hold together, each as a sentence with numbers ([] if none):
      * minority-dominant neurons exist, but they are not the smallest neurons (even the mask at Remark 1's largest
        ratio, alpha m = their number, is mostly other neurons), in every cell where they exist: Remarks 1-2's
        premise contradicts the trained network;
      * at every d of the closed-form table, the minority growth gain*kappa_min is below the bottom of the lambda
        range: lambda in the proof's range and Stage-1 minority growth exclude each other."""
    out = []
    exist = [r for r in results if r.ran and r.premises["dominant"].holds]
    if exist and all(not r.premises["mask"].holds and not r.premises["smallest"].holds for r in exist):
        shares = ", ".join(f"{r.premises['smallest'].value:.2f}" for r in exist)
        out.append(f"in all {len(exist)} cells with minority-dominant neurons they are not the smallest: among the k "
                   f"smallest neurons (k = their number, the largest pruning ratio Remark 1 allows) their share is "
                   f"{shares}, below the premise, so no magnitude mask holds them (against Remarks 1-2)")
    if rates and all(row["growth_min"] <= row["lambda_bottom"] for row in rates):
        worst = max(rates, key=lambda r: r["growth_min"] - r["lambda_bottom"])
        out.append(f"at every d the minority growth gain·κ_min lies below d^-1.49 (closest: d={worst['d']}, "
                   f"{worst['growth_min']:.3g} vs {worst['lambda_bottom']:.3g})")
    return out


def _fmt_m(row: dict) -> str:
    """The neurons needed, as text: a number, a power of ten, or why there is none."""
    m = row["m_needed"]
    if row.get("lucky_threshold", 0.0) >= 1.0:
        return f"no m (Def. B.1's threshold c1 log d/d = {row['lucky_threshold']:.2f} ≥ 1: the lucky set is empty)"
    if not math.isfinite(m):
        return "m > 10^300"
    return f"m ≥ {m:,.0f}" if m < 1e7 else f"m ≥ about 10^{math.log10(m):.0f}"


def reach_text(rates: list[dict], results: list[CellResult], cfg: PremiseMapConfig) -> str:
    """What the binding premises would need: neurons for one minority lucky neuron per (d, ratio), and the K that
    Lemma B.1's bound needs at the measured deviation (deviation ~ K^-1/2)."""
    parts = []
    for r in sorted({row["ratio"] for row in rates}):
        rows = [row for row in rates if row["ratio"] == r]
        need = "; ".join(f"d={row['d']}: {_fmt_m(row)}" for row in rows)
        parts.append(f"at ρ = {r:g}, one minority lucky neuron needs {need}")
    ks = []
    for res in results:
        if res.ran and "lemma_b1" in res.premises:
            p = res.premises["lemma_b1"]
            bound = res.cell.cfg.d1 ** -res.cell.cfg.regime_grad_poly
            ks.append((res.cell.d, res.cell.K * (p.value / bound) ** 2))
    for d in sorted({d for d, _ in ks}):
        k = max(v for dd, v in ks if dd == d)
        parts.append(f"at d={d}, Lemma B.1's bound needs K ≈ {k:,.0f} pairs per step (largest over its cells)")
    return "; ".join(parts)


def conclusion(results: list[CellResult], rates: list[dict], cfg: PremiseMapConfig) -> Conclusion:
    """Which of (a), (b), (c) the map supports (module docstring), with its verdict and a paragraph of numbers."""
    ran = [r for r in results if r.ran]
    ok = [r for r in ran if gates_ok(r)]
    binding = binding_premises(results)
    if ok:
        verdicts = [cell_row(r, cfg).verdict for r in ok]
        v = combine(verdicts)
        where = ", ".join(f"{r.cell.label} ({cell_row(r, cfg).verdict})" for r in ok)
        return Conclusion("a", v, f"(a) every required premise holds at {len(ok)} of {len(ran)} cells run: {where}. "
                          f"There the claim {v}.", binding, len(ok), len(ran))
    found = conflicts(results, rates)
    names = ", ".join(ran[0].premises[k].short for k in binding) if binding and ran else "none in every cell"
    if found:
        return Conclusion("c", NOT_COMPARABLE, f"(c) no cell of {len(ran)} meets every premise, and premises conflict: "
                          + "; ".join(found) + f". Premises failing in every cell: {names}.", binding, 0, len(ran))
    return Conclusion("b", NOT_COMPARABLE, f"(b) no cell of {len(ran)} meets every premise; failing in every cell: "
                      f"{names}. Beyond this map's reach: " + reach_text(rates, results, cfg) + ".", binding, 0,
                      len(ran))


def verdict_rows(results: list[CellResult], rates: list[dict], cfg: PremiseMapConfig) -> list[Verdict]:
    """The notebook's table: one row per cell, then the claim-4 row decided on the map."""
    rows = [cell_row(r, cfg) for r in results]
    c = conclusion(results, rates, cfg)
    rows.append(Verdict(f"claim 4 on the premise map: {CLAIM} where Theorem 3.2's premises hold", SOURCE,
                        f"(a), (b) or (c); the claim itself: gain > {cfg.effect_tol:g}", float(c.cells_ok),
                        float(c.cells_ok), float(c.cells_ok), c.verdict,
                        f"answer ({c.kind}) — {c.text}", premise=f"cells meeting every premise: {c.cells_ok} of "
                        f"{c.cells_run}", kind="paper", id="claim4_map", quantity="count"))
    return rows
