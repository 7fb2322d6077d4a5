"""What keeps Theorem 3.2's premises apart on the map: the premises that fail in every cell run, the pairs of premises
that cannot hold together (each a sentence with numbers), and the size (m, K) the others would need. The conclusion
(verdicts.py) reads these to answer (b) or (c)."""
from __future__ import annotations

import math

from .config import PremiseMapConfig
from .protocol import CellResult
from .target import k_needed, measured_deviations


def binding_premises(results: list[CellResult]) -> list[str]:
    """Required premise keys that fail in every cell that was run (in their order of appearance); an arm premise
    ("prune_T", "bound") is binding when it fails for every arm of every run cell."""
    ran = [r for r in results if r.ran]
    if not ran:
        return []
    keys = [k for k, p in ran[0].premises.items() if p.required and not p.prediction]
    out = [k for k in keys if all(not r.premises[k].holds for r in ran if k in r.premises)]
    arms = [a for r in ran for a in r.arms.values()]
    if arms and all(not a.premises["prune_T"].holds for a in arms):
        out.append("prune_T")
    if arms and all(not (a.premises["bound"].holds or a.premises["bound_ext"].holds) for a in arms):
        out.append("bound")
    return out


def conflicts(results: list[CellResult], rates: list[dict], ceilings: tuple = ()) -> list[str]:
    """Premise pairs that cannot hold together, each as a sentence with numbers ([] if none):
      * at every d of the closed-form table, the minority growth gain*kappa_min is below the bottom of the lambda
        range: lambda in the proof's range and Stage-1 minority growth exclude each other;
      * in every run cell whose vanilla run converged, it converged only after Theorem 3.1's window closed
        (T4 > d^1.99/eta): convergence and the step window exclude each other;
      * at a d where the encoder with b = 0 cannot reach the convergence premise's l'_p at the K Lemma B.1 needs
        (ceiling.LpCeiling.conflict, one line each): convergence and Lemma B.1's K exclude each other there.
    Predictions never enter: a prediction that fails is a finding about the claim, not a conflict of premises."""
    out = []
    if rates and all(row_["growth_min"] <= row_["lambda_bottom"] for row_ in rates):
        worst = max(rates, key=lambda r: r["growth_min"] - r["lambda_bottom"])
        out.append(f"at every d the minority growth gain·κ_min lies below d^-1.49 (closest: d={worst['d']}, "
                   f"{worst['growth_min']:.3g} vs {worst['lambda_bottom']:.3g})")
    conv = [r for r in results if r.ran and r.premises["convergence"].holds]
    if conv and all(not r.premises["window"].holds for r in conv):
        out.append(f"every one of the {len(conv)} cells whose vanilla run converged did so after Theorem 3.1's "
                   f"window (T4 = {', '.join(str(r.extra.get('T4')) for r in conv)} steps)")
    hit = [c for c in ceilings if c.conflict]
    if hit:
        out.append("convergence (l'_p ≥ " + f"{hit[0].need:.2f}" + ", eq. (11)) and Lemma B.1's K exclude each other "
                   "for the encoder with b = 0 at " + "; ".join(
                       f"d={c.d} (at K = {c.K:,}, l'_p ≤ {c.limit:.3f} at any logit scale; the trained cells "
                       f"reached {c.measured:.3f})" for c in hit))
    return out


def m_needed_text(row_: dict) -> str:
    """The neurons needed, as text: a number, a power of ten, or why there is none."""
    m = row_["m_needed"]
    if row_.get("lucky_threshold", 0.0) >= 1.0:
        return f"no m (Def. B.1's threshold c1 log d/d = {row_['lucky_threshold']:.2f} ≥ 1: the lucky set is empty)"
    if not math.isfinite(m):
        return "m > 10^300"
    return f"m ≥ {m:,.0f}" if m < 1e7 else f"m ≥ about 10^{math.log10(m):.0f}"


def reach_text(rates: list[dict], results: list[CellResult], cfg: PremiseMapConfig) -> str:
    """What the binding premises would need: neurons for one minority lucky neuron per (d, ratio), and the K that
    Lemma B.1's bound needs at the measured deviation (deviation ~ K^-1/2)."""
    parts = []
    for r in sorted({row_["ratio"] for row_ in rates}):
        rows = [row_ for row_ in rates if row_["ratio"] == r]
        need = "; ".join(f"d={row_['d']}: {m_needed_text(row_)}" for row_ in rows)
        parts.append(f"at ρ = {r:g}, one minority lucky neuron needs {need}")
    for d, devs in sorted(measured_deviations(results).items()):
        k = max(k_needed(K, dev, d1, cfg.regime_grad_poly) for K, dev, d1 in devs)
        parts.append(f"at d={d}, Lemma B.1's bound needs K ≈ {math.ceil(k):,} pairs per step (largest over its "
                     "cells)")
    return "; ".join(parts)
