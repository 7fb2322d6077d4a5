"""Notebook 01's verdict rows, judged with the tolerances of Stage1Config."""
from __future__ import annotations

from ...verdict import Verdict, judge_target
from .config import Stage1Config


def verdict_rows(results: dict, cfg: Stage1Config) -> list[Verdict]:
    """Notebook 01's verdicts from rate_results(...) merged with t1_fits(...); tolerances from cfg (tol_*)."""
    # 9 arguments: a row's words (claim, source, predicted), its target, the interval (m, lo, hi) and the band
    def row(claim, source, predicted, target, m, lo, hi, tol, relative=False):
        v, rule = judge_target(lo, hi, target, tol, relative=relative)
        return Verdict(claim, source, predicted, m, lo, hi, v, rule)

    ratio = cfg.eps_max / cfg.eps_min
    return [
        row("Stage-1 rate/η+λ ∝ ε_j (log-log slope)", "Lemma 3.1, eq. (7)", "1", 1.0, *results["slope"], cfg.tol_slope),
        row("Measured rate equals the parameter-free linear prediction", "eq. (7) with κ_j by Monte Carlo",
            "ratio 1", 1.0, *results["ratio"], cfg.tol_ratio, relative=True),
        row("Majority/minority rate ratio equals ε_max/ε_min", "Lemma 3.1, eq. (7)", f"{ratio:.3g}",
            ratio, *results["maj_min"], cfg.tol_ratio, relative=True),
        row("Non-feature part only decays, ||P⊥w(T1)|| / decay-only", "eq. (8), Lemma C.1(c)", "ratio 1",
            1.0, *results["perp"], cfg.tol_ratio, relative=True),
        row("T1 grows linearly in d1 (exponent of d1)", "eq. (33)", "1", 1.0, *results["d1"], cfg.tol_exponent),
        row("T1 does not depend on d1 (exponent of d1)", "workshop W351", "0", 0.0, *results["d1"], cfg.tol_exponent),
    ]
