"""The judging rules: a measured 95% interval against the band a prediction allows, as one verdict word and the
rule's text (a Rule, which carries the band). verdict.py's docstring states the rule; each judge_* function below is
one kind of claim (a target, a directional effect, a bound, a factor, a trend, a share, a count). The words and the
Rule live here, below verdict.py, which builds rows from what these return.
"""
from __future__ import annotations

import math

from .stats import binom_ci

HOLDS, PARTLY, FAILS = "holds", "partly", "does not hold"
INCONCLUSIVE, NOT_COMPARABLE, UNTESTED = "inconclusive", "not comparable", "not tested"
VERDICTS = (HOLDS, PARTLY, FAILS, INCONCLUSIVE, NOT_COMPARABLE, UNTESTED)
INF = math.inf
NAN = math.nan


class Rule(str):
    """A verdict rule's text that also carries the band it judged the interval against, band = (lo, hi) (±inf on an
    open side, NaN where no band decides): the judge_* functions return it, so that the band travels with the text
    (`rule + "; more"` keeps it) into the row, which shows it (Verdict.band_lo, band_hi; band_text)."""

    band: tuple = (NAN, NAN)

    def __new__(cls, text: str, band: tuple = (NAN, NAN)):
        out = super().__new__(cls, text)
        out.band = (float(band[0]), float(band[1]))
        return out

    def __add__(self, other: str) -> "Rule":
        return Rule(str(self) + other, self.band)

    def __radd__(self, other: str) -> "Rule":
        return Rule(other + str(self), self.band)


def missing(*xs) -> bool:
    """Whether any of xs is None or NaN: no number to judge."""
    return any(x is None or (isinstance(x, float) and math.isnan(x)) for x in xs)


def judge_band(lo: float, hi: float, band_lo: float, band_hi: float, sign: int = 0) -> str:
    """The rule itself: the interval [lo, hi] against the band [band_lo, band_hi] (see the module docstring).

    sign: +1 or -1 when the claim predicts the sign of the effect (then a wholly-outside interval that excludes 0
    on that side is "partly"), 0 when it does not.
    """
    if missing(lo, hi):
        return UNTESTED
    if sign != 0 and lo <= 0 <= hi:   # an effect whose interval reaches 0 is not established: never support
        return FAILS if (hi < band_lo or lo > band_hi) else INCONCLUSIVE
    if band_lo <= lo and hi <= band_hi:
        return HOLDS
    if hi < band_lo or lo > band_hi:
        right_side = (sign > 0 and lo > 0) or (sign < 0 and hi < 0)
        return PARTLY if right_side else FAILS
    return INCONCLUSIVE


def replicates_needed(lo: float, hi: float, band: float, n: int) -> float:
    """Replicates that would make the interval's half-width smaller than `band`: n (half-width / band)^2."""
    if missing(lo, hi) or n <= 0 or not band > 0 or not math.isfinite(band):
        return math.nan
    return math.ceil(n * ((hi - lo) / 2 / band) ** 2)


def _g(x: float) -> str:
    return "∞" if x == INF else "-∞" if x == -INF else f"{x:g}"


def judge_target(lo: float, hi: float, target: float, tol: float, relative: bool = False) -> tuple[str, Rule]:
    """Target claim: the band is target ± tol (× |target| when relative)."""
    t = tol * (abs(target) if relative else 1.0)
    sign = 0 if target == 0 else (1 if target > 0 else -1)
    verdict = judge_band(lo, hi, target - t, target + t, sign)
    rule = (f"band {target:g} ± {_g(t)}: holds if the interval lies inside it; partly if wholly outside but on the "
            f"predicted side of 0; inconclusive if it straddles an edge")
    return verdict, Rule(rule, (target - t, target + t))


def judge_positive(lo: float, hi: float, name: str = "effect", sesoi: float = 0.0,
                   direction: int = 1) -> tuple[str, Rule]:
    """Directional claim: the effect is > sesoi (direction +1) or < -sesoi (direction -1)."""
    band = (sesoi, INF) if direction > 0 else (-INF, -sesoi)
    verdict = judge_band(lo, hi, band[0], band[1], direction)
    word = f"above {sesoi:g}" if direction > 0 else f"below {-sesoi:g}"
    rule = (f"holds if the interval of the {name} lies wholly {word} (the smallest effect of interest); partly if it "
            f"excludes 0 on that side but stays short of it; does not hold if it lies short of it and reaches 0")
    return verdict, Rule(rule, band)


def judge_bound(lo: float, hi: float, bound: float, at_least: bool, tol: float) -> tuple[str, Rule]:
    """Bound claim 'x >= bound' (at_least) or 'x <= bound', relaxed by tol."""
    band = (bound - tol, INF) if at_least else (-INF, bound + tol)
    verdict = judge_band(lo, hi, band[0], band[1], 0)
    op = "≥" if at_least else "≤"
    rule = (f"holds if the whole interval is {op} {_g(band[0] if at_least else band[1])}; does not hold if it is "
            f"wholly beyond; inconclusive if it straddles")
    return verdict, Rule(rule, band)


def judge_at_least(lo: float, hi: float, bound: float, name: str) -> tuple[str, Rule]:
    """'x >= bound' with no tolerance (e.g. a count of neurons)."""
    verdict, _ = judge_bound(lo, hi, bound, True, 0.0)
    return verdict, Rule(f"holds if the interval of the {name} lies at or above {bound:g}; does not hold if wholly "
                         f"below", (bound, INF))


def judge_factor(lo: float, hi: float, target: float, f: float) -> tuple[str, Rule]:
    """Factor claim: the band is [target / f, target * f] (a positive target)."""
    verdict = judge_band(lo, hi, target / f, target * f, 1)
    rule = (f"band [{target:g}/{f:g}, {target:g}×{f:g}]: holds inside; partly if wholly outside but > 0; "
            f"does not hold if wholly outside and reaching 0")
    return verdict, Rule(rule, (target / f, target * f))


def judge_trend(rho_lo: float, rho_hi: float, direction: int, holds_at: float) -> tuple[str, Rule]:
    """A rank correlation predicted to have sign `direction`, with smallest effect of interest |rho| = holds_at."""
    verdict, _ = judge_positive(rho_lo, rho_hi, "ρ", holds_at, direction)
    word = "above" if direction > 0 else "below"
    rule = (f"holds if the bootstrap interval of ρ lies {word} {direction * holds_at:+g}; partly if it excludes 0 on "
            f"that side but not the threshold; does not hold if it reaches 0 and stays short of the threshold")
    return verdict, Rule(rule, (holds_at, INF) if direction > 0 else (-INF, -holds_at))


def judge_share(lo: float, hi: float, at_least: float, name: str = "share") -> tuple[str, Rule]:
    """A share claimed to be 1 ("for all", "every neuron"): a bound claim on its interval, band [at_least, 1].

    There is no "partly" (a share has no sign to get right): below the band is "does not hold", across its edge
    "inconclusive". The band's top is left open so that a t-interval of replicate shares reaching past 1 counts.
    """
    verdict, _ = judge_bound(lo, hi, at_least, True, 0.0)
    rule = (f"holds if the interval of the {name} lies wholly at or above {at_least:g}; does not hold if wholly "
            f"below; inconclusive if it straddles {at_least:g}")
    return verdict, Rule(rule, (at_least, INF))


def judge_count(k: float, n: float, at_least: float) -> tuple[str, Rule]:
    """k of n cases satisfy a "for all" statement: the 95% Wilson interval of k/n judged by judge_share.

    2 of 2 is not evidence that every neuron satisfies a bound: its Wilson interval [0.34, 1] straddles any
    at_least above 0.34, so the row is inconclusive.
    """
    if n <= 0:
        return UNTESTED, "no case to count"
    return judge_share(*binom_ci(k, n), at_least, f"fraction (95% Wilson, n = {n:g})")
