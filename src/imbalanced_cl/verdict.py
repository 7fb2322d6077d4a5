"""Verdicts: each claim, what the paper predicts, what we measured (± interval), and holds / partly / does not hold.

A notebook builds its rows from data with the judge_* functions, shows the table, and records it with
myst-nb glue under "<notebook>_verdicts" so the book's scoreboard can collect every notebook's rows.
The tolerances are arguments chosen before looking at results and printed in the table.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from .stats import binom_ci


HOLDS, PARTLY, FAILS = "holds", "partly", "does not hold"


INCONCLUSIVE, UNTESTED = "inconclusive", "not tested"


VERDICTS = (HOLDS, PARTLY, FAILS, INCONCLUSIVE, UNTESTED)


@dataclass
class Verdict:
    """One row of a verdict table."""

    claim: str          # the paper's statement, short
    source: str         # where the paper says it ("Lemma 3.1, eq. (7)")
    predicted: str      # the predicted value, as text
    measured: float     # point estimate
    lo: float           # interval over replicates
    hi: float
    verdict: str        # one of VERDICTS
    rule: str = ""      # how the verdict was decided, e.g. "holds if |slope-1| <= 0.15"
    notebook: str = ""  # filled by VerdictTable

    def __post_init__(self):
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {VERDICTS}, got {self.verdict!r}")


def _overlap(lo: float, hi: float, a: float, b: float) -> bool:
    return lo <= b and a <= hi


def judge_target(lo: float, hi: float, target: float, tol_holds: float, tol_partly: float,
                 relative: bool = False) -> tuple[str, str]:
    """Holds if the interval [lo, hi] meets target ± tol_holds, partly if it meets target ± tol_partly.

    An interval wider than the partly band (half-width > tol_partly) cannot tell the outcomes apart, so
    the verdict is 'inconclusive' rather than a 'holds' won by noise.
    """
    scale = abs(target) if relative else 1.0
    th, tp = tol_holds * scale, tol_partly * scale
    if any(math.isnan(x) for x in (lo, hi)):
        return UNTESTED, "no finite measurement"
    unit = "×|target|" if relative else ""
    rule = (f"holds if the interval meets {target:g} ± {tol_holds:g}{unit}; partly if ± {tol_partly:g}{unit}; "
            f"inconclusive if its half-width exceeds {tol_partly:g}{unit}")
    if (hi - lo) / 2 > tp:
        return INCONCLUSIVE, rule
    if _overlap(lo, hi, target - th, target + th):
        return HOLDS, rule
    if _overlap(lo, hi, target - tp, target + tp):
        return PARTLY, rule
    return FAILS, rule


def judge_bound(lo: float, hi: float, bound: float, at_least: bool, tol_holds: float,
                tol_partly: float) -> tuple[str, str]:
    """For 'x >= bound' (at_least) or 'x <= bound' claims: holds if the whole interval satisfies the bound
    relaxed by tol_holds, does not hold if the whole interval violates it relaxed by tol_partly, partly
    in between; inconclusive if the interval's half-width exceeds tol_partly."""
    op = "≥" if at_least else "≤"
    sgn = 1.0 if at_least else -1.0
    rule = (f"holds if the whole interval is {op} {bound:g} {'-' if at_least else '+'} {tol_holds:g}; does not hold "
            f"if it is wholly beyond {bound:g} {'-' if at_least else '+'} {tol_partly:g}; inconclusive if its "
            f"half-width exceeds {tol_partly:g}")
    if any(math.isnan(x) for x in (lo, hi)):
        return UNTESTED, "no finite measurement"
    if (hi - lo) / 2 > tol_partly:
        return INCONCLUSIVE, rule
    worst, best = (lo, hi) if at_least else (hi, lo)
    if sgn * (worst - bound) >= -tol_holds:
        return HOLDS, rule
    if sgn * (best - bound) < -tol_partly:
        return FAILS, rule
    return PARTLY, rule


def judge_positive(lo: float, hi: float, name: str = "effect") -> tuple[str, str]:
    """Holds if the whole interval is > 0, does not hold if it is wholly <= 0, partly if it straddles 0."""
    rule = f"holds if the interval of the {name} lies above 0; partly if it contains 0"
    if any(math.isnan(x) for x in (lo, hi)):
        return UNTESTED, "no finite measurement"
    if lo > 0:
        return HOLDS, rule
    return (PARTLY, rule) if hi > 0 else (FAILS, rule)


def judge_fraction(frac: float, holds_at: float = 0.9, partly_at: float = 0.5) -> tuple[str, str]:
    """For 'every neuron satisfies the bound' claims: judged on the fraction that does."""
    rule = f"holds if ≥ {holds_at:.0%} satisfy it; partly if ≥ {partly_at:.0%}"
    if math.isnan(frac):
        return UNTESTED, "no finite measurement"
    return (HOLDS if frac >= holds_at else PARTLY if frac >= partly_at else FAILS), rule


def judge_count(k: float, n: float, holds_at: float = 0.9, partly_at: float = 0.5) -> tuple[str, str]:
    """judge_fraction on k of n cases, but 'inconclusive' when the 95% Wilson interval of k/n reaches both
    the holds level and below the partly level (2 of 2 is not evidence that every neuron satisfies a bound)."""
    if n <= 0:
        return UNTESTED, "no case to count"
    lo, hi = binom_ci(k, n)
    verdict, rule = judge_fraction(k / n, holds_at, partly_at)
    rule += f"; inconclusive if the 95% interval of the fraction spans [< {partly_at:.0%}, ≥ {holds_at:.0%}] (n = {n:g})"
    return (INCONCLUSIVE if lo < partly_at and hi >= holds_at else verdict), rule


def judge_factor(lo: float, hi: float, target: float, f_holds: float, f_partly: float) -> tuple[str, str]:
    """Holds if the interval meets [target/f_holds, target*f_holds]; partly with f_partly; fails otherwise."""
    rule = f"holds if the interval meets [{target:g}/{f_holds:g}, {target:g}×{f_holds:g}]; partly with factor {f_partly:g}"
    rule += "; an interval reaching 0 or below is at most partly (the sign is not established)"
    if any(math.isnan(x) for x in (lo, hi)):
        return UNTESTED, "no finite measurement"
    if hi <= 0:
        return FAILS, rule
    meets = lambda f: lo <= target * f and hi >= target / f
    if lo <= 0:
        return (PARTLY if meets(f_partly) else FAILS), rule
    return (HOLDS if meets(f_holds) else PARTLY if meets(f_partly) else FAILS), rule


def judge_at_least(lo: float, hi: float, bound: float, name: str) -> tuple[str, str]:
    """Holds if the whole interval is >= bound, partly if it contains the bound, fails if wholly below."""
    rule = f"holds if the interval of the {name} lies at or above {bound:g}; partly if it contains it"
    if any(math.isnan(x) for x in (lo, hi)):
        return UNTESTED, "no finite measurement"
    return (HOLDS if lo >= bound else PARTLY if hi >= bound else FAILS), rule


def judge_trend(rho_lo: float, rho_hi: float, direction: int, holds_at: float) -> tuple[str, str]:
    """Oriented to the predicted sign: holds beyond holds_at, partly beyond 0, fails if wholly <= 0, else inconclusive."""
    word = "above" if direction > 0 else "below"
    rule = (f"holds if the bootstrap interval of ρ lies {word} {direction * holds_at:+g}; partly if it lies "
            f"{word} 0; does not hold if it lies wholly on the other side of 0 (or at 0); inconclusive if it contains 0")
    if any(math.isnan(v) for v in (rho_lo, rho_hi)):
        return UNTESTED, "no finite measurement"
    lo, hi = (rho_lo, rho_hi) if direction > 0 else (-rho_hi, -rho_lo)
    if lo >= holds_at:
        return HOLDS, rule
    if lo > 0:
        return PARTLY, rule
    return (FAILS, rule) if hi <= 0 else (INCONCLUSIVE, rule)


def judge_difference(lo: float, hi: float, tol: float) -> tuple[str, str]:
    """For 'A beats B' on a paired difference A - B: does not hold if the interval lies inside ±tol (no effect
    worth the name) or wholly at or below 0; holds if it lies above 0 and reaches beyond tol; inconclusive if it
    contains 0 and reaches beyond ±tol (an interval that contains 0 is never support)."""
    rule = (f"holds if the interval lies above 0; does not hold if it lies at or below 0 or inside ±{tol:g} "
            f"(no effect); inconclusive if it contains 0 and reaches beyond ±{tol:g}")
    if any(math.isnan(x) for x in (lo, hi)):
        return UNTESTED, "no finite measurement"
    if -tol <= lo and hi <= tol:
        return FAILS, rule
    if lo > 0:
        return HOLDS, rule
    return (FAILS, rule) if hi <= 0 else (INCONCLUSIVE, rule)
