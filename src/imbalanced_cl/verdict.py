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
  * not comparable only: a premise this row depends on was not met in this run (the row names it); the measured
                   value and the verdict it would get (`would_be`) stay on the row;
  * not tested     no finite measurement.
MEANINGS states each word's one meaning (for a row and for a claim) and every page prints it from there; combine is
the one claim-level rule. For an inconclusive row, `replicates_needed` gives the count that would shrink the interval
below the band's size: n_now * (half-width / band)^2, from the observed spread. book/methods.ipynb explains all of
this to readers.

Rows are identified by id, never by their sentence: every row has a stable snake_case `id` (unique within a notebook)
and names the premises it depends on in `depends` (ids of premises.CONDITIONS of kind premise). A premise row (kind
"premise") has the premise's own id, or a scoped one (premises.scoped) where a table checks that premise once per
case (one ρ, one bound's null). `gate(rows, notebook)` checks the ids and applies premise rows to the rows that
depend on them: a row is "not comparable" only when a premise in its own depends list is not met, and it keeps the
verdict its measurement gets on its own in `would_be`. Predictions never gate.
"""
from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, fields, replace

from . import premises as P
from .rules import (FAILS, HOLDS, INCONCLUSIVE, INF, NAN, NOT_COMPARABLE, PARTLY, UNTESTED, VERDICTS, Rule, judge_count,
                    missing, replicates_needed)
from .stats import RANGES, binom_ci, in_range

# The one meaning of each verdict word, for a row and for a claim (the methods page, the intro's legend, the
# scoreboard and the answer rule all show these words, and tests/test_verdict.py checks that they do).
MEANINGS: dict[str, str] = {
    HOLDS: "the whole 95% interval of the measurement lies inside the band of values the prediction allows; "
           "a claim holds when every one of its judged rows holds",
    PARTLY: "part of the prediction is borne out: a row's interval lies wholly outside the band but excludes 0 on "
            "the predicted side (an effect of the predicted sign whose size is off); a claim partly holds when some "
            "of its judged rows hold or partly hold and the others do not hold or are inconclusive",
    FAILS: "the measurement contradicts the prediction where the premises it depends on were met: a row's interval "
           "lies wholly outside the band and is not 'partly' (a tight interval around 0, or the wrong sign); a "
           "claim does not hold when none of its judged rows holds or partly holds and at least one does not hold",
    INCONCLUSIVE: "the data cannot decide at this size: a row's interval straddles an edge of the band (an "
                  "interval that contains 0 never supports an effect); a claim is inconclusive when all of its "
                  "judged rows are",
    NOT_COMPARABLE: "a premise this row depends on was not met at this run (the row names it): the measurement and "
                    "the verdict it would get are shown beside it, but it counts neither for nor against the "
                    "prediction; a claim is not comparable when every one of its rows with a measurement is",
    UNTESTED: "there is no finite measurement: the stage was not reached, the arm was not run, or the statement "
              "(an asymptotic rate in d) cannot be tested by runs at one d",
}


# Each verdict word as the predicate of a sentence ("claim 1 partly holds"), for one-sentence summaries
PREDICATE = {HOLDS: "holds", PARTLY: "partly holds", FAILS: "does not hold", INCONCLUSIVE: "is inconclusive",
             NOT_COMPARABLE: "is not comparable", UNTESTED: "was not tested"}


@dataclass(kw_only=True)
class Verdict:
    """One row of a verdict table; built by keyword only (verdict.row builds one from a judge_* result)."""

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
    id: str = ""        # stable snake_case id, unique within a notebook (a premise row: the premise's id, or scoped)
    depends: tuple[str, ...] = ()   # ids of the premises (premises.PREMISES, or scoped ones) this row depends on
    would_be: str = ""  # "not comparable" rows: the verdict the measurement gets on its own ("" otherwise)
    quantity: str = "real"  # the range of `measured` (stats.RANGES): fraction, cosine, count, positive, real, ...
    sensitivity: str = ""  # how the verdict moves under a choice the paper leaves open (e.g. Lemma B.1's exponent)
    checked: tuple[str, ...] = ()  # premises of `depends` checked at this run (by a premise row of the table)
    unmet: tuple[str, ...] = ()    # of those, the ones not met (then the row is "not comparable")
    band_lo: float = NAN  # the band the interval is judged against (from the rule: Rule.band), ±inf on an open side
    band_hi: float = NAN
    band_words: str = ""  # the band in words where no interval decides (a trend with no gap at any d, a premise map)
    met_by_effect: tuple[str, ...] = ()  # asymptotic premises shown met for this row by their effect (premises.Effect)

    def __post_init__(self):
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {VERDICTS}, got {self.verdict!r}")
        if isinstance(self.rule, Rule):    # the band the rule judged against, kept as numbers; the rule as plain text
            if missing(self.band_lo) and missing(self.band_hi):
                self.band_lo, self.band_hi = self.rule.band
            self.rule = str(self.rule)
        self.depends, self.checked, self.unmet = tuple(self.depends), tuple(self.checked), tuple(self.unmet)
        self.met_by_effect = tuple(self.met_by_effect)
        if not in_range(self.measured, self.quantity):     # a cosine of 1.2 is a bug upstream, not a finding
            lo, hi = RANGES[self.quantity]
            raise ValueError(f"row {self.id or self.claim[:60]!r}: measured {self.measured!r} lies outside the range "
                             f"[{lo:g}, {hi:g}] of a {self.quantity}")

    def interval_in_range(self) -> bool:
        """Whether the interval [lo, hi] stays inside the range of the quantity (NaN ends count as inside)."""
        return in_range(self.lo, self.quantity) and in_range(self.hi, self.quantity)


def _b(x: float) -> str:
    return "∞" if x == INF else "-∞" if x == -INF else f"{x:.3g}"


def band_text(r: Verdict) -> str:
    """The band a row is judged against, in words: "holds within [a, b]", "holds at ≥ a", "holds at ≤ b" (the methods
    page explains the band once), its band_words, or "" when it has none."""
    lo, hi = r.band_lo, r.band_hi
    if math.isnan(lo) and math.isnan(hi):
        return r.band_words
    lo, hi = (-INF if math.isnan(lo) else lo), (INF if math.isnan(hi) else hi)     # one end given: the other is open
    if lo == -INF and hi == INF:
        return "holds at any value"
    if lo == hi:
        return f"holds at {_b(lo)}"
    if hi == INF:
        return f"holds at ≥ {_b(lo)}"
    if lo == -INF:
        return f"holds at ≤ {_b(hi)}"
    return f"holds within [{_b(lo)}, {_b(hi)}]"


def predicted_with_band(r: Verdict) -> str:
    """The predicted value with the band it is judged against: "exponent ≥ 0.90 (holds at ≥ 0.8)"."""
    band = band_text(r)
    return f"{r.predicted} ({band})" if band else r.predicted


# What a row is, defined once for every count of every page (book/pages/answers.py, book/pages/scoreboard.py,
# tables.py): a claim row tests a statement; a premise row checks a premise of the theorems on the run (kind "premise").
CLAIM_KINDS = ("paper", "diagnostic", "companion")
PREMISE_KIND = "premise"
# kinds renamed since: rows stored before (a record's rows, an executed notebook's glue) say "regime" (from_json)
LEGACY_KINDS = {"regime": PREMISE_KIND}


def is_claim_row(r: Verdict) -> bool:
    """A row that tests a statement (paper, diagnostic or companion), as opposed to a premise row."""
    return r.kind in CLAIM_KINDS


def is_premise_row(r: Verdict) -> bool:
    """A row that checks a premise of the theorems on the run (kind "premise")."""
    return r.kind == PREMISE_KIND


def is_required_premise(r: Verdict) -> bool:
    """A premise row (by its id) that a theorem needs, not one the book only reports (premises.Condition.required)."""
    return is_premise_row(r) and P.is_premise(r.id) and P.condition(r.id).required


# A row as JSON (what a notebook glues, what a record keeps): every field of Verdict, NaN and ±inf as null (they are
# not JSON), lists for tuples, and its band in words under "band" (band_text) for a reader of the raw JSON; keys
# sorted, as an executed notebook stores its glue (nbformat sorts them), so a record written from read-back rows keeps
# its bytes. from_json reads it back: null is NaN, except an open side of a band (one end a number, the other null:
# -inf below, +inf above; both null with the band "holds at any value": both open).
_FLOATS = ("measured", "lo", "hi", "n_needed")
_BANDS = ("band_lo", "band_hi")
_REQUIRED = ("claim", "source", "predicted", "verdict")   # text fields without a default ("" where a row lacks one)


def _json_value(v):
    """A field's value as JSON: a non-finite float as None, a tuple as a list."""
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return list(v) if isinstance(v, tuple) else v


def to_json(r: Verdict) -> dict:
    """The one writer of a row as JSON (the glue, a record, the judged rows): every field and "band", keys sorted."""
    out = {f.name: _json_value(getattr(r, f.name)) for f in fields(Verdict)}
    return dict(sorted({**out, "band": band_text(r)}.items()))


def _band(d: dict) -> tuple[float, float]:
    """A stored row's band ends: a number as it is, null (or "") as an open side when the other end is a number,
    both null as no band (NaN), or both open where the stored band says "holds at any value"."""
    lo, hi = (None if d.get(k) in (None, "") else d[k] for k in _BANDS)
    if lo is None and hi is None:
        return (-INF, INF) if d.get("band") == "holds at any value" else (NAN, NAN)
    return (-INF if lo is None else lo), (INF if hi is None else hi)


def from_json(d: dict) -> Verdict:
    """The one reader of a stored row (glued JSON, a record's rows): the inverse of to_json. A field it lacks takes
    Verdict's default ("" or NaN for one without), null is NaN (see _band for a band's ends), lists become tuples,
    the kind "regime" reads as "premise" (LEGACY_KINDS), and keys Verdict has no field for ("band") are dropped."""
    known = {f.name for f in fields(Verdict)}
    kw = {k: v for k, v in d.items() if k in known and k not in _BANDS}
    kw.update({k: kw.get(k, "") for k in _REQUIRED})        # a row without a verdict is refused by Verdict
    kw.update({k: NAN for k in _FLOATS if kw.get(k) is None})
    kw["kind"] = LEGACY_KINDS.get(kw.get("kind", "paper"), kw.get("kind", "paper"))
    kw["band_lo"], kw["band_hi"] = _band(d)
    return _new(**kw)


def combine(verdicts: list[str]) -> str:
    """A claim's verdict from the verdicts of its judged rows (neither "not comparable" nor "not tested"), by the
    claim-level halves of MEANINGS: holds if all hold; inconclusive if all are; does not hold if none holds or
    partly holds and one does not hold; partly if some hold or partly hold and the others do not or are undecided."""
    c = Counter(verdicts)
    n = len(verdicts)
    if n == 0:
        return UNTESTED
    if c[HOLDS] == n:
        return HOLDS
    if c[INCONCLUSIVE] == n:
        return INCONCLUSIVE
    if c[HOLDS] + c[PARTLY] == 0:
        return FAILS if c[FAILS] else INCONCLUSIVE
    return PARTLY


def legend_markdown() -> str:
    """The verdict words and their one meaning (MEANINGS) as a Markdown table, for the methods page and the book."""
    return "| verdict | meaning |\n|---|---|\n" + "\n".join(f"| **{v}** | {MEANINGS[v]} |" for v in VERDICTS)


def count_row(claim: str, source: str, predicted: str, k: float, n: int, at_least: float,
              extra: str = "", *, id: str = "", depends: tuple[str, ...] = ()) -> Verdict:
    """A "for all" row: k of n cases satisfy the statement, shown as the fraction k/n with its Wilson interval (inside
    [0, 1]), judged by judge_count; `extra` is appended to the rule."""
    verdict, rule = judge_count(k, n, at_least)
    return row(claim, source, predicted, k / max(n, 1), *binom_ci(k, n), (verdict, rule + extra), id=id,
               depends=depends, quantity="fraction")


def id_part(x: float) -> str:
    """A number as part of a row id (snake_case): 0.8 -> '0p8', 1.0 -> '1', -0.5 -> 'm0p5'."""
    return f"{x:g}".replace(".", "p").replace("-", "m").replace("+", "")


class VerdictError(ValueError):
    """A malformed verdict table: a row without an id, a duplicate id, or a premise id that does not exist."""


def row(claim: str, source: str, predicted: str, measured: float, lo: float, hi: float, judged: tuple[str, str],
        n: int = 0, band: float = math.nan, kind: str = "paper", *, id: str = "", depends: tuple[str, ...] = (),
        quantity: str = "real", **extra) -> Verdict:
    """The one builder of a verdict row, from a judge_* result `judged` = (verdict, rule). `depends`: the premise ids
    the row depends on (gate applies the table's premise rows to it); an inconclusive row states the replicates that
    would settle it (band: the half-width the interval must get under). `extra`: the other fields of Verdict as given
    (premise, sensitivity, band_lo, band_hi, band_words, met_by_effect)."""
    verdict, rule = judged
    need = replicates_needed(lo, hi, band, n) if verdict == INCONCLUSIVE else math.nan
    return _new(claim=claim, source=source, predicted=predicted, measured=measured, lo=lo, hi=hi, verdict=verdict,
                rule=rule, n=n, n_needed=need, kind=kind, id=id, depends=tuple(dict.fromkeys(depends)),
                quantity=quantity, **extra)


def _new(**kw) -> Verdict:
    """The package's one call of Verdict: every row is built through it, by row (from a judgement) or from_json (a
    stored row read back)."""
    return Verdict(**kw)


def premise_check(id: str, claim: str, source: str, met: int, of: int, cases: str = "cases") -> Verdict:
    """A premise row from a count: the premise must hold in every one of `of` cases (each d of a grid, each
    replicate), and `met` of them meet it. Measured: the share met, an exact count (no interval to draw; the label
    says so); holds when all do, does not hold otherwise, not tested with no case."""
    share = met / of if of > 0 else math.nan
    verdict = UNTESTED if of <= 0 else HOLDS if met == of else FAILS
    return row(f"{claim}: share of {cases} that meet it", source, f"all {of} {cases}", share, share, share,
               (verdict, Rule(f"holds when all {of} {cases} meet it ({met} do)", (1.0, 1.0))),
               kind=PREMISE_KIND, id=id, quantity="fraction")


def premise_value(id: str, claim: str, source: str, predicted: str, value: float, rule: str, *,
                  band: tuple[float, float] | None = None, met: bool | None = None, quantity: str = "real",
                  **extra) -> Verdict:
    """A premise row on one exact number (no interval: lo = hi = value), such as a setting, a step count or how far a
    series moved. It holds when the value lies in `band` = (lo, hi), closed, ±inf on an open side, so the verdict can
    never disagree with the band the row shows; a NaN value (nothing to compare) does not hold. Where the band is a
    rule in words (band_words in `extra`), `met` gives the verdict found where the rule is defined."""
    if (band is None) == (met is None):
        raise ValueError(f"premise row {id!r}: give its band or whether it is met, not both or neither")
    if band is not None:
        met = band[0] <= value <= band[1]      # NaN compares false: not met
        rule = Rule(rule, band)
    return row(claim, source, predicted, value, value, value, (HOLDS if met else FAILS, rule), kind=PREMISE_KIND,
               id=id, quantity=quantity, **extra)


def check_ids(rows: list[Verdict], notebook: str) -> None:
    """Refuse a table whose rows cannot be identified: each failure is one VerdictError line naming the notebook
    and the row (no id, not snake_case, a duplicate, a premise row without a premise's id, or a depends entry that
    is not a known premise: predictions never gate)."""
    seen = set()
    for r in rows:
        where = f"{notebook}: row {r.claim[:70]!r}"
        if not r.id:
            raise VerdictError(f"{where} has no id")
        if not P.ID_PATTERN.match(r.id):
            raise VerdictError(f"{where}: id {r.id!r} is not snake_case")
        if r.id in seen:
            raise VerdictError(f"{where}: id {r.id!r} is used twice")
        seen.add(r.id)
        if r.kind == PREMISE_KIND and not P.is_premise(r.id):
            raise VerdictError(f"{where}: a premise row needs a premise's id, got {r.id!r}")
        for d in r.depends:
            if P.premise_of(d) not in P.BY_ID:
                raise VerdictError(f"{where} depends on {d!r}, which is no premise (premises.CONDITIONS)")
            if not P.is_premise(d):
                raise VerdictError(f"{where} depends on {d!r}, a prediction: predictions never gate")


def premise_met(r: Verdict) -> bool | None:
    """A premise row's status: True if it holds, False if it was not shown to hold (does not hold, inconclusive),
    None if it was not checked at this run (not tested: it does not apply, or nothing was measured)."""
    if r.verdict == HOLDS:
        return True
    return None if r.verdict in (UNTESTED, NOT_COMPARABLE) else False


def premise_name(p: Verdict) -> str:
    """A premise row named in another row's premise text: the premise's few words, and for a scoped row its case."""
    return P.name(p.id) + (f" ({p.claim})" if P.SCOPE in p.id else "")


def _measured(x: float) -> str:
    """'measured 0.013', or 'no finite measurement' for a premise whose value is missing (never a bare nan)."""
    return "no finite measurement" if missing(x) else f"measured {x:.3g}"


def _premise_text(r: Verdict, failed: list[Verdict], met: list[Verdict]) -> str:
    """A row's premise text with the premises it depends on named: those not met first, those met last."""
    parts = [r.premise] if r.premise else []
    if failed:
        parts.insert(0, "not met: " + "; ".join(f"{premise_name(p)} ({_measured(p.measured)}: {p.verdict})"
                                                for p in failed))
    if met:
        parts.append("met: " + "; ".join(premise_name(p) for p in met))
    return "; ".join(parts)


def _apply_premises(r: Verdict, prem: dict[str, Verdict]) -> None:
    """Apply to one (copied) row the table's premise rows it depends on, in place."""
    here = [prem[d] for d in r.depends if d in prem]
    # an asymptotic premise whose effect on this row was measured within the row's tolerance is met for it,
    # whatever its fixed-constant premise row reads (that row stays, as information)
    failed = [p for p in here if premise_met(p) is False and p.id not in r.met_by_effect]
    met = [p for p in here if premise_met(p) or p.id in r.met_by_effect]
    r.premise = _premise_text(r, failed, met)
    r.checked = tuple(dict.fromkeys(r.checked + tuple(p.id for p in failed + met)))
    r.unmet = tuple(dict.fromkeys(r.unmet + tuple(p.id for p in failed)))
    if failed and r.verdict not in (UNTESTED, NOT_COMPARABLE):
        r.would_be, r.verdict, r.n_needed = r.verdict, NOT_COMPARABLE, math.nan


def gate(rows: list[Verdict], notebook: str = "") -> list[Verdict]:
    """The rows with the table's premise rows applied by id (check_ids first): a row whose own `depends` names a
    premise row that is not met becomes "not comparable", keeps its verdict in `would_be` and names the premise;
    a premise it does not depend on never touches it. Returns new rows; premise rows come back unchanged."""
    check_ids(rows, notebook)
    prem = {r.id: r for r in rows if r.kind == PREMISE_KIND}
    out = []
    for r in rows:
        r = replace(r)
        if r.kind != PREMISE_KIND and r.depends:
            _apply_premises(r, prem)
        out.append(r)
    return out
