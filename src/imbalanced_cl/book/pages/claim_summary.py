"""One summary per claim and profile, the one source every page reads (issue 62): the claim's verdict, the rows that
decided it, and a sentence of at most MAX_WORDS words built from those rows alone.

The intro's table and figure, the scoreboard and each claim page's "What we found" box all show a claim through
`summarise` (this build's rows) and `paper_summary` (the paper-scale records), so no two pages can disagree.

Which rows decide a verdict follows verdict.combine (book/methods.ipynb states it):
  * holds: every judged row holds, so all of them decide it;
  * does not hold: the rows that do not hold;
  * inconclusive: the inconclusive rows;
  * partly: the rows that hold (or partly hold) and those that do not;
  * not comparable: the premise rows that were not met (no claim row was judged);
  * not tested: none.
A number is quoted as support only from a row that holds; a headline row that did not decide the verdict is named as
such ("the headline ... is not comparable: ..."), never quoted as evidence.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

from ... import premises as P
from ... import verdict as V
from ..records import record
from . import answers as A
from .render import fmt, lower_first, value

MAX_WORDS = 40

# The premise map's answers for claim 4 (notebook 10, row claim4_map), in a reader's words.
MAP_ANSWERS = {"a": "its premises hold together in a cell we ran",
               "b": "its premises hold together only beyond our reach",
               "c": "two of its premises conflict"}

SUPPORT = (V.HOLDS, V.PARTLY)
AGAINST = (V.FAILS, V.INCONCLUSIVE)


@dataclass(frozen=True)
class ClaimSummary:
    """One claim at one profile: its verdict (or why there is none), the rows that decided it, and the sentence."""

    claim: A.Claim
    profile: str
    verdict: str                      # one of verdict.VERDICTS, or "" where there is no judged record (see status)
    deciding: tuple = ()              # Verdict rows (claim rows, or premise rows for "not comparable")
    sentence: str = ""
    status: str = ""                  # "" when judged; else why there is no verdict at this profile
    made_by: str = ""                 # for a record: the commit, device and date that measured it
    headline: V.Verdict | None = None
    kind: str = ""                    # the premise map's answer (a), (b) or (c) for claim 4, else ""
    answer: A.Answer | None = None    # the answer it summarises (why, premises met and not), None without rows
    quoted: tuple = ()                # the rows its sentence quotes (quoted()), shown with their numbers beside it

    @property
    def figure_row(self) -> V.Verdict | None:
        """The row a figure draws for the claim: the headline when it decided the verdict, else the first deciding
        claim row (a premise row is drawn for "not comparable"), else None."""
        if self.headline is not None and self.headline in self.deciding:
            return self.headline
        return next(iter(self.deciding), None)

    def decides(self, r: V.Verdict) -> bool:
        """Whether row `r` (same notebook and id) is one of the rows that decided the claim's verdict."""
        return any(d.notebook == r.notebook and d.id == r.id for d in self.deciding)


def _judged(ev: list[V.Verdict]) -> list[V.Verdict]:
    return [r for r in ev if r.verdict not in (V.NOT_COMPARABLE, V.UNTESTED)]


def deciding_rows(a: A.Answer, ev: list[V.Verdict]) -> tuple:
    """The rows that decided the answer's verdict (module docstring), in table order."""
    judged = _judged(ev)
    if a.verdict == V.HOLDS:
        return tuple(judged)
    if a.verdict == V.FAILS:
        return tuple(r for r in judged if r.verdict == V.FAILS)
    if a.verdict == V.INCONCLUSIVE:
        return tuple(judged)
    if a.verdict == V.PARTLY:
        return tuple(r for r in judged if r.verdict in SUPPORT + AGAINST)
    if a.verdict == V.NOT_COMPARABLE:
        return tuple(r for r in a.failed_premises if isinstance(r, V.Verdict))
    return ()


def name(r: V.Verdict) -> str:
    """A row's statement, short, to stand inside a sentence: its claim text up to the first colon (the quantity after
    it is in the table), a capitalised first word in lower case ('Majority/minority ...' -> 'majority/minority ...')."""
    return lower_first(r.claim.removeprefix("regime: ").split(": ")[0].strip().rstrip("."))


def band(r: V.Verdict) -> str:
    """The band a row is judged against, short: '[9, 11]', '≥ 0.8', '≤ 0.1', '= 1', or its band in words."""
    lo, hi = r.band_lo, r.band_hi
    if math.isnan(lo) and math.isnan(hi):
        return r.band_words or r.predicted
    lo, hi = (-math.inf if math.isnan(lo) else lo), (math.inf if math.isnan(hi) else hi)
    if lo == hi:
        return f"= {fmt(lo)}"
    if hi == math.inf:
        return f"≥ {fmt(lo)}"
    if lo == -math.inf:
        return f"≤ {fmt(hi)}"
    return f"[{fmt(lo)}, {fmt(hi)}]"


def evidence_text(r: V.Verdict, detail: int = 2) -> str:
    """A row as evidence: 'name (value [lo, hi] against band)' at detail 2, 'name (value against band)' at 1, the
    name alone at 0 (or where it has no finite measurement)."""
    v = value(r)
    if not v or detail <= 0:
        return name(r)
    return f"{name(r)} ({v if detail >= 2 else fmt(r.measured)} against {band(r)})"


def _first(rows, verdicts, prefer=None):
    """The preferred row if it has one of `verdicts`, else the first such row in order (None if none)."""
    if prefer is not None and prefer.verdict in verdicts and prefer in rows:
        return prefer
    return next((r for r in rows if r.verdict in verdicts), None)


def _count(rows, verdicts) -> int:
    return sum(r.verdict in verdicts for r in rows)


def _headline_note(a: A.Answer, deciding: tuple) -> str:
    """Where the headline row did not decide the verdict, what it reads and why ('' otherwise)."""
    h = a.headline
    if h is None or h in deciding:
        return ""
    if h.verdict == V.NOT_COMPARABLE:
        why = f": {A.premise_short(h.unmet[0]).split(' (')[0]} not met" if h.unmet else ""
        return f"the headline {a.claim.short} is not comparable{why}"
    return f"the headline {a.claim.short} is {h.verdict}"


def _rows(n: int, verb: str) -> str:
    """'1 row holds', '3 rows hold' (verb given in the plural)."""
    singular = {"hold": "holds", "do not hold": "does not hold", "are inconclusive": "is inconclusive",
                "hold or partly hold": "holds or partly holds"}
    return f"{n} row {singular.get(verb, verb)}" if n == 1 else f"{n} rows {verb}"


def quoted(a: A.Answer, deciding: tuple) -> tuple:
    """The rows a claim's sentence quotes, in its order: the row that holds (the headline where it does) and, for
    "partly", the one that does not; the row that fails or is inconclusive; for "not comparable", the first premise
    not met and the headline measured anyway."""
    if a.verdict == V.HOLDS:
        return (_first(deciding, (V.HOLDS,), a.headline),)
    if a.verdict == V.PARTLY:
        s = _first(deciding, (V.HOLDS,), a.headline) or _first(deciding, (V.PARTLY,), a.headline)
        f = _first(deciding, (V.FAILS,), a.headline) or _first(deciding, (V.INCONCLUSIVE,), a.headline)
        return (s, f) if f is not None else (s,)      # every judged row partly holds: no row against
    if a.verdict in (V.FAILS, V.INCONCLUSIVE):
        return (_first(deciding, (a.verdict,), a.headline),)
    if a.verdict == V.NOT_COMPARABLE:
        h = a.headline
        return tuple(deciding[:1]) + ((h,) if h is not None and h.would_be and value(h) else ())
    return ()


def _partly(rows: tuple) -> list[tuple[int, str]]:
    """The clauses of a "partly": the row that holds, and the one that does not (if any), at each detail."""
    s, f = rows if len(rows) == 2 else (rows[0], None)
    s_word = "holds" if s.verdict == V.HOLDS else "partly holds"
    if f is None:
        return [(d, f"{evidence_text(s, d)} {s_word}") for d in (2, 1, 0)]
    f_word = "does not hold" if f.verdict == V.FAILS else "is inconclusive"
    # on a tie of detail, the numbers of the row that goes against the claim are kept first: they say why
    return [(d1 + d2, f"{evidence_text(s, d1)} {s_word}, but {evidence_text(f, d2)} {f_word}")
            for d2 in (2, 1, 0) for d1 in (2, 1, 0)]


def _unmet(a: A.Answer, p: V.Verdict | None) -> list[tuple[int, str]]:
    """The clauses of a "not comparable": how many premises were not met, the first with its number."""
    short = A.premise_short(p) if p is not None else (
        ", ".join(A.premise_short(x) for x in a.failed_premises[:1]) or "a premise")
    prem = short if p is None else (f"{short} ({fmt(p.measured)} against {band(p)})" if value(p)
                                    else f"{short} (no finite measurement)")     # never a bare dash in a sentence
    n = len({P.premise_of(A.premise_id(x)) for x in a.failed_premises})
    if n <= 1:
        return [(2, f"every row depends on {prem}, not met"), (0, f"every row depends on {short}, not met")]
    return [(2, f"{n} of its premises are not met, such as {prem}"),
            (1, f"{n} of its premises are not met, such as {short}"), (0, f"{n} of its premises are not met")]


def _parts(a: A.Answer, ev: list[V.Verdict], deciding: tuple) -> list[tuple[int, str]]:
    """(detail, clause) pairs that say what decided the verdict, the clause at every level of detail of its numbers."""
    rows = quoted(a, deciding)
    if a.verdict == V.HOLDS:
        n = len(_judged(ev))
        lead = f"all {n} judged rows hold, as " if n > 1 else ""
        return [(d, lead + evidence_text(rows[0], d)) for d in (2, 1, 0)]
    if a.verdict == V.PARTLY:
        return _partly(rows)
    if a.verdict in (V.FAILS, V.INCONCLUSIVE):
        word = "does not hold" if a.verdict == V.FAILS else "is inconclusive"
        more = len(deciding) - 1
        extra = f" ({more} more row{'s' if more != 1 else ''} too)" if more else ""
        return [(d, f"{evidence_text(rows[0], d)} {word}{extra}") for d in (2, 1, 0)]
    if a.verdict == V.NOT_COMPARABLE:
        return _unmet(a, rows[0] if deciding else None)
    return [(0, "no row has a finite measurement")]


def _extras(a: A.Answer, ev: list[V.Verdict], deciding: tuple) -> tuple[list[str], str]:
    """(notes, counts): the headline where it did not decide (or, where the premises were not met, what it measured
    anyway), longest wording first, and for "partly" how the judged rows split; empty where there is none."""
    h, notes = a.headline, [n for n in [_headline_note(a, deciding)] if n]
    if a.verdict == V.NOT_COMPARABLE and h is not None and h.would_be and value(h):
        notes = [f"measured anyway, {a.claim.short} is {value(h)} ({h.would_be} on its own)",
                 f"measured anyway, {a.claim.short} is {fmt(h.measured)} ({h.would_be} on its own)"]
    counts = ""
    if a.verdict == V.PARTLY:
        judged = _judged(ev)
        n_f, n_i = _count(judged, (V.FAILS,)), _count(judged, (V.INCONCLUSIVE,))
        split = [_rows(_count(judged, SUPPORT), "hold or partly hold"), _rows(n_f, "do not hold") if n_f else "",
                 _rows(n_i, "are inconclusive") if n_i else ""]
        counts = f"of {len(judged)} judged rows, " + ", ".join(x for x in split if x)
    return notes, counts


def candidates(a: A.Answer, ev: list[V.Verdict], deciding: tuple, profile: str) -> list[str]:
    """Sentences for the answer, best first; `sentence` keeps the first that fits in MAX_WORDS. Best means: the
    headline's note (or what was measured where premises failed) kept, then the most numbers, then the counts."""
    where = f"At {profile}" if profile else "In this build"
    head = f"{where}, {a.claim.called} {V.PREDICATE.get(a.verdict, a.verdict)}"
    notes, counts = _extras(a, ev, deciding)
    tails = [(len(notes) - i, bool(c), "".join(f"; {x}" for x in (n, c) if x))
             for i, n in enumerate([*notes, ""]) for c in dict.fromkeys((counts, ""))]
    ranked = sorted(((n, d, c, f"{head}: {part}{t}.") for d, part in _parts(a, ev, deciding) for n, c, t in tails),
                    key=lambda x: (-x[0], -x[1], -x[2]))
    out = [text for *_, text in ranked]
    if a.kind:                     # claim 4: the premise map's answer, with its meaning and the fact that decides it
        meaning = MAP_ANSWERS.get(a.kind, "")
        ends = [f" Premise map: ({a.kind}), {meaning}: {a.decided}.", f" Premise map: ({a.kind}), {meaning}."]
        out = [s + e for e in ends for s in out]   # the fact that decides the map first, before any note
    return out + [f"{head}."]


def sentence(a: A.Answer, ev: list[V.Verdict], deciding: tuple, profile: str) -> str:
    """The first candidate sentence of at most MAX_WORDS words."""
    return next(s for s in candidates(a, ev, deciding, profile) if len(s.split()) <= MAX_WORDS)


def summarise(rows: list[V.Verdict], claim: A.Claim, profile: str, made_by: str = "") -> ClaimSummary:
    """The claim's summary from a set of verdict rows (one build's, or one profile's records)."""
    a = A.answer(rows, claim)
    ev = A.evidence(rows, claim)
    dec = deciding_rows(a, ev)
    said = sentence(a, ev, dec, profile)
    shown = tuple(r for r in quoted(a, dec) if mentions(said, r, a))      # what the sentence that fitted kept
    return ClaimSummary(claim, profile, a.verdict, dec, said, "", made_by, a.headline, a.kind, a, shown)


def mentions(text: str, r: V.Verdict, a: A.Answer) -> bool:
    """Whether a sentence names row `r`: by its statement, as a premise, or (the headline) by the claim's short name
    with its value."""
    if name(r) in text or (V.is_premise_row(r) and A.premise_short(r) in text):
        return True
    return r is a.headline and bool(a.claim.short) and f"{a.claim.short} is {fmt(r.measured)}" in text


def paper_summary(claim: A.Claim, records: dict) -> ClaimSummary:
    """The claim's summary at the paper's scale, from the records of its notebooks (book.records.record: {notebook:
    record}); a status instead of a verdict where none of its notebooks is recorded, where a record is unreadable, or
    where a record kept no measurements and today's verdict code could not judge it (its rows as judged then are not
    combined with today's rule)."""
    mine = {nb: records[nb] for nb in claim.notebooks if nb in (records or {})}
    if not mine:
        return ClaimSummary(claim, "paper", "", status="not yet run at paper scale")
    bad = [nb for nb, rec in mine.items() if rec.get("unreadable")]
    if bad:
        return ClaimSummary(claim, "paper", "", status=f"record of {bad[0]} unreadable")
    old = [nb for nb, rec in mine.items() if record.not_judged(rec)]
    if old:
        return ClaimSummary(claim, "paper", "", status=record.not_judged(mine[old[0]]))
    rows = [r if r.notebook else _with_notebook(r, nb) for nb, rec in mine.items() for r in rec["rows"]]
    rec = next(iter(mine.values()))
    made = ", ".join(x for x in (str(rec.get("device") or "?"), f"commit {str(rec.get('commit') or '?')[:7]}",
                                 str(rec.get("date") or "")[:10]) if x)
    return summarise(rows, claim, "paper scale", made)


def _with_notebook(r: V.Verdict, nb: str) -> V.Verdict:
    """A stored row with its notebook filled in (a record's rows may leave it out)."""
    return replace(r, notebook=nb)


def summaries(rows: list[V.Verdict], profile: str, records: dict | None = None) -> list[tuple]:
    """(this build's summary, the paper-scale summary) for every claim of answers.CLAIMS, in order."""
    return [(summarise(rows, c, profile), paper_summary(c, records or {})) for c in A.CLAIMS]


def deciders(pairs: list, r: V.Verdict) -> list[str]:
    """The claims (their keys) whose verdict at this build row `r` decides."""
    return [b.claim.key for b, _ in pairs if b.decides(r)]


def star(r: V.Verdict, pairs: list) -> str:
    """HTML: '★ decides claim 3 · ' before a row that decides a claim's verdict, '' otherwise."""
    keys = deciders(pairs, r)
    if not keys:
        return ""
    return (f'<span class="vt-decides" title="this row decides the claim&#x27;s verdict">★ decides claim '
            f'{", ".join(keys)}</span> · ')
