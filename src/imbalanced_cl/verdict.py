"""Verdict rules: one rule, written once, that turns a measured interval into holds / partly / does not hold / ...

The rule is equivalence testing (two one-sided tests with a smallest effect of interest). Each claim gives a band
of values that count as "the prediction came true", fixed before the run (a notebook parameter):
  * a target claim ("slope = 1"): the band is target ± tolerance;
  * a directional claim ("the effect is > 0"): the band is [SESOI, +inf), the smallest effect of interest upward;
  * a bound claim ("x <= B"): the band is (-inf, B + tolerance];
  * a factor claim ("about d times"): the band is [target / f, target * f];
  * a share claim ("for all", "every neuron"): the band is [at_least, 1] for the share of cases (no "partly").
Then, for the 95% interval [lo, hi] of the measurement:
  * holds          the whole interval lies inside the band;
  * partly         the whole interval lies outside the band, but it excludes 0 on the predicted side: a real effect
                   of the predicted sign whose size is off (only for claims with a sign);
  * does not hold  the whole interval lies outside the band otherwise (a tight interval around 0 included);
  * inconclusive   everything else: the interval straddles an edge of the band. An interval that contains 0 is
                   never "holds" or "partly";
  * not comparable a premise of the statement was not met in this run (the row names it): the run says nothing
                   about the paper's claim, for or against;
  * not tested     no finite measurement.
For an inconclusive row, `replicates_needed` gives the count that would shrink the interval below the band's size:
n_now * (half-width / band)^2, from the observed spread. book/methods.md explains all of this to readers.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from .stats import binom_ci

HOLDS, PARTLY, FAILS = "holds", "partly", "does not hold"
INCONCLUSIVE, NOT_COMPARABLE, UNTESTED = "inconclusive", "not comparable", "not tested"
VERDICTS = (HOLDS, PARTLY, FAILS, INCONCLUSIVE, NOT_COMPARABLE, UNTESTED)
INF = math.inf


@dataclass
class Verdict:
    """One row of a verdict table."""

    claim: str          # the paper's statement, short
    source: str         # where the paper says it ("Lemma 3.1, eq. (7)")
    predicted: str      # the predicted value, as text
    measured: float     # point estimate
    lo: float           # 95% interval
    hi: float
    verdict: str        # one of VERDICTS
    rule: str = ""      # how the verdict was decided, with the band
    notebook: str = ""  # filled by VerdictTable
    premise: str = ""   # the premises checked for this row; for "not comparable", the one that failed
    n: int = 0          # replicates behind the interval (0: not a replicate interval)
    n_needed: float = math.nan  # inconclusive rows: replicates that would make the interval narrower than the band
    kind: str = "paper"  # "paper" (the paper's claim), "diagnostic", or "companion" (a companion paper's claim)

    def __post_init__(self):
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {VERDICTS}, got {self.verdict!r}")


# What a row is, defined once for every count of every page (book/answers.py, book/scoreboard.py, tables.py):
# a claim row tests a statement; a premise row checks the theorem's regime on the run (kind "regime").
CLAIM_KINDS = ("paper", "diagnostic", "companion")
# Regime rows that are premises of Theorems 3.1/3.2 (sigma is reported only: the book follows App. A.2's sigma).
REQUIRED_PREMISES = ("regime: weight lies in the feature span", "regime: K-pair gradient tracks",
                     "regime: steps inside Theorem 3.1's window", "regime: weight decay λ inside")


def is_claim_row(r: dict) -> bool:
    """A row that tests a statement (paper, diagnostic or companion), as opposed to a premise row."""
    return r.get("kind", "paper") in CLAIM_KINDS


def is_premise_row(r: dict) -> bool:
    """A row that checks the theorems' regime on the run (kind "regime")."""
    return r.get("kind") == "regime"


def is_required_premise(r: dict) -> bool:
    """A premise row that a theorem needs (REQUIRED_PREMISES), not one that is only reported."""
    return is_premise_row(r) and r["claim"].startswith(REQUIRED_PREMISES)


def _nan(*xs) -> bool:
    return any(x is None or (isinstance(x, float) and math.isnan(x)) for x in xs)


def judge_band(lo: float, hi: float, band_lo: float, band_hi: float, sign: int = 0) -> str:
    """The rule itself: the interval [lo, hi] against the band [band_lo, band_hi] (see the module docstring).

    sign: +1 or -1 when the claim predicts the sign of the effect (then a wholly-outside interval that excludes 0
    on that side is "partly"), 0 when it does not.
    """
    if _nan(lo, hi):
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
    if _nan(lo, hi) or n <= 0 or not band > 0 or not math.isfinite(band):
        return math.nan
    return math.ceil(n * ((hi - lo) / 2 / band) ** 2)


def _g(x: float) -> str:
    return "∞" if x == INF else "-∞" if x == -INF else f"{x:g}"


def judge_target(lo: float, hi: float, target: float, tol: float, relative: bool = False) -> tuple[str, str]:
    """Target claim: the band is target ± tol (× |target| when relative)."""
    t = tol * (abs(target) if relative else 1.0)
    sign = 0 if target == 0 else (1 if target > 0 else -1)
    verdict = judge_band(lo, hi, target - t, target + t, sign)
    rule = (f"band {target:g} ± {_g(t)}: holds if the interval lies inside it; partly if wholly outside but on the "
            f"predicted side of 0; inconclusive if it straddles an edge")
    return verdict, rule


def judge_positive(lo: float, hi: float, name: str = "effect", sesoi: float = 0.0,
                   direction: int = 1) -> tuple[str, str]:
    """Directional claim: the effect is > sesoi (direction +1) or < -sesoi (direction -1)."""
    band = (sesoi, INF) if direction > 0 else (-INF, -sesoi)
    verdict = judge_band(lo, hi, band[0], band[1], direction)
    word = f"above {sesoi:g}" if direction > 0 else f"below {-sesoi:g}"
    rule = (f"holds if the interval of the {name} lies wholly {word} (the smallest effect of interest); partly if it "
            f"excludes 0 on that side but stays short of it; does not hold if it lies short of it and reaches 0")
    return verdict, rule


def judge_bound(lo: float, hi: float, bound: float, at_least: bool, tol: float) -> tuple[str, str]:
    """Bound claim 'x >= bound' (at_least) or 'x <= bound', relaxed by tol."""
    band = (bound - tol, INF) if at_least else (-INF, bound + tol)
    verdict = judge_band(lo, hi, band[0], band[1], 0)
    op = "≥" if at_least else "≤"
    rule = (f"holds if the whole interval is {op} {_g(band[0] if at_least else band[1])}; does not hold if it is "
            f"wholly beyond; inconclusive if it straddles")
    return verdict, rule


def judge_at_least(lo: float, hi: float, bound: float, name: str) -> tuple[str, str]:
    """'x >= bound' with no tolerance (e.g. a count of neurons)."""
    verdict, _ = judge_bound(lo, hi, bound, True, 0.0)
    return verdict, f"holds if the interval of the {name} lies at or above {bound:g}; does not hold if wholly below"


def judge_factor(lo: float, hi: float, target: float, f: float) -> tuple[str, str]:
    """Factor claim: the band is [target / f, target * f] (a positive target)."""
    verdict = judge_band(lo, hi, target / f, target * f, 1)
    rule = (f"band [{target:g}/{f:g}, {target:g}×{f:g}]: holds inside; partly if wholly outside but > 0; "
            f"does not hold if wholly outside and reaching 0")
    return verdict, rule


def judge_trend(rho_lo: float, rho_hi: float, direction: int, holds_at: float) -> tuple[str, str]:
    """A rank correlation predicted to have sign `direction`, with smallest effect of interest |rho| = holds_at."""
    verdict, _ = judge_positive(rho_lo, rho_hi, "ρ", holds_at, direction)
    word = "above" if direction > 0 else "below"
    rule = (f"holds if the bootstrap interval of ρ lies {word} {direction * holds_at:+g}; partly if it excludes 0 on "
            f"that side but not the threshold; does not hold if it reaches 0 and stays short of the threshold")
    return verdict, rule


def judge_share(lo: float, hi: float, at_least: float, name: str = "share") -> tuple[str, str]:
    """A share claimed to be 1 ("for all", "every neuron"): a bound claim on its interval, band [at_least, 1].

    There is no "partly" (a share has no sign to get right): below the band is "does not hold", across its edge
    "inconclusive". The band's top is left open so that a t-interval of replicate shares reaching past 1 counts.
    """
    verdict, _ = judge_bound(lo, hi, at_least, True, 0.0)
    rule = (f"holds if the interval of the {name} lies wholly at or above {at_least:g}; does not hold if wholly "
            f"below; inconclusive if it straddles {at_least:g}")
    return verdict, rule


def judge_count(k: float, n: float, at_least: float) -> tuple[str, str]:
    """k of n cases satisfy a "for all" statement: the 95% Wilson interval of k/n judged by judge_share.

    2 of 2 is not evidence that every neuron satisfies a bound: its Wilson interval [0.34, 1] straddles any
    at_least above 0.34, so the row is inconclusive.
    """
    if n <= 0:
        return UNTESTED, "no case to count"
    return judge_share(*binom_ci(k, n), at_least, f"fraction (95% Wilson, n = {n:g})")


def count_row(claim: str, source: str, predicted: str, k: float, n: int, at_least: float,
              extra: str = "") -> Verdict:
    """A "for all" row: k of n cases satisfy the statement, shown as k/n with its Wilson interval, judged by
    judge_count; `extra` is appended to the rule."""
    verdict, rule = judge_count(k, n, at_least)
    return Verdict(claim, source, predicted, k / max(n, 1), *binom_ci(k, n), verdict, rule + extra)


def premises(checks: list[tuple[str, bool]]) -> tuple[bool, str]:
    """(all met, text) for a row's premises, given as (description, met) pairs; the text names failures first."""
    failed = [d for d, ok in checks if not ok]
    if failed:
        return False, "not met: " + "; ".join(failed)
    return True, "met: " + "; ".join(d for d, _ in checks) if checks else ""


def row(claim: str, source: str, predicted: str, measured: float, lo: float, hi: float, judged: tuple[str, str],
        checks: list[tuple[str, bool]] = (), n: int = 0, band: float = math.nan, kind: str = "paper") -> Verdict:
    """A verdict row from a judge_* result: a failed premise turns it into "not comparable"; an inconclusive row
    states the replicates that would settle it (band: the half-width the interval must get under)."""
    verdict, rule = judged
    ok, text = premises(list(checks))
    if not ok and verdict != UNTESTED:
        verdict = NOT_COMPARABLE
    need = replicates_needed(lo, hi, band, n) if verdict == INCONCLUSIVE else math.nan
    return Verdict(claim, source, predicted, measured, lo, hi, verdict, rule, premise=text, n=n, n_needed=need,
                   kind=kind)


def with_premises(rows: list[Verdict], checks: list[tuple[str, bool]], claims: set[str] | None = None) -> list[Verdict]:
    """Rows with premises applied: for each row whose claim starts with one of `claims` (all rows if None), a failed
    premise makes it "not comparable" and the row names the premise; met premises are listed in the row."""
    ok, text = premises(list(checks))
    out = []
    for r in rows:
        if claims is None or any(r.claim.startswith(c) for c in claims):
            r.premise = "; ".join(p for p in (r.premise, text) if p)
            if not ok and r.verdict not in (UNTESTED,):
                r.verdict, r.n_needed = NOT_COMPARABLE, math.nan
        out.append(r)
    return out
