"""The answer first: one verdict per claim of the paper, computed from the claim notebooks' rows by one rule.

Which rows count (the same definitions serve every count of every page):
  * a claim row tests a statement: kind "paper", "diagnostic" or "companion" (verdict.is_claim_row);
  * a premise row checks the theorem's regime on the run: kind "regime" (verdict.is_premise_row).
A paper claim's evidence is the kind-"paper" rows of its notebooks, less the rows a notebook marks as "not in the
paper"; its premises are the required regime rows of those notebooks (verdict.REQUIRED_PREMISES).

The rule (book/methods.ipynb states it for readers; tests/test_answers.py checks every branch on hand-made rows):
  1. A claim with a deciding row (claim 4: the premise map's row, notebook 10) takes that row's verdict.
  2. Otherwise, from the evidence rows that were judged (not "not comparable", not "not tested"):
     holds if every one holds; does not hold if none holds or partly holds and at least one does not hold;
     partly if some hold or partly hold and others do not or are inconclusive; inconclusive if all are.
  3. If a required premise row does not hold, the claim was measured outside the theorem's regime: its verdict is
     "not comparable", and the outcome measured there is shown beside it (it is not counted as a failure).
  4. No evidence row: "not tested"; evidence rows that are all "not comparable": "not comparable".
"""
from __future__ import annotations

import html
from collections import Counter
from dataclasses import dataclass

from .. import verdict as V
from . import tables as T

NOT_THE_PAPERS = ("not in the paper",)
is_claim_row, is_premise_row = V.is_claim_row, V.is_premise_row      # the one definition lives in verdict.py


@dataclass(frozen=True)
class Claim:
    """One claim of the paper: where it is tested and how its headline row is found."""

    key: str             # "1" ... "5", "A.2"
    title: str
    source: str
    predicts: str        # what the paper predicts, in words
    notebooks: tuple     # the notebooks whose paper rows are its evidence
    headline: str        # prefix of the row shown as "what we measured"
    regime: str          # the paper's regime, in words
    decider: str = ""    # prefix of a row that decides the claim on its own (the premise map for claim 4)


CLAIMS = (
    Claim("1", "Stage 1: weights grow along features at rates set by ε_j", "Lemma 3.1, eq. (7)",
          "growth rate/η + λ ∝ ε_j; majority/minority rate ratio ε_max/ε_min", ("01_stage1_growth",),
          "Majority/minority rate ratio", "λ ∈ [d^-1.49, d^-1.01], K = poly(d1) pairs"),
    Claim("2", "Lucky neurons specialise in one feature; imbalance makes them rarer", "Def. B.1, Lemma B.2, eq. (9)",
          "|M*_j| ≥ Ω(d^ω1) lucky neurons, fewer as ε_min/ε_max falls", ("02_lucky_neurons",),
          "|M_j*| ≥ Ω(d^ω1)", "m = d^C_m, λ in the proof's range"),
    Claim("3", "A neuron mixes |N_i| = O(d^(1−ρ²)) features", "Theorem 3.1, eq. (14)",
          "the exponent of |N_i| in d follows 1 − (ε_min/ε_max)²", ("03_Ni_scaling",),
          "|N_i| exponent follows 1-ρ² — final", "T ∈ [d^1.01/η, d^1.99/η], λ in the proof's range"),
    Claim("4", "Magnitude pruning (Algorithm 1) restores minority features", "Theorem 3.2, Remarks 1-3",
          "A_j*/A_maj rises to ≈ 1 under pruning; the minority excess growth ∝ α ε_j*²",
          ("04_pruning_gains", "10_premise_map"), "claim 4 on the premise map",
          "a pruned set inside M*_j* (α m ≤ |M*_j*|), λ in the proof's range", decider="claim 4 on the premise map"),
    Claim("A.2", "App. A.2: minority alignment and downstream quality grow with ε_min", "App. A.2, Figs. 1-4",
          "all four metrics improve as ε_min grows", ("05_appendix_figures",), "max_i |cos(w_i, M_min)| grows",
          "d1 = 500, 100 repeats, hyperparameters unstated"),
    Claim("5", "Pruning improves linear-probe accuracy on long-tailed CIFAR and ImageNet", "Table 2",
          "accuracy +5 to +8 points, Δ20 lower, with pruning", ("06_lt_benchmarks",),
          "SDCLR-style pruning vs SimCLR: accuracy gain", "ResNet-18, 2000 epochs, full CIFAR-LT"),
)


@dataclass
class Answer:
    """A claim's verdict, the outcome measured (even outside the regime), and why, with numbers."""

    claim: Claim
    verdict: str
    measured: str               # the combined verdict of the judged evidence rows, or "—"
    why: str
    headline: dict | None       # the row shown as "what we measured"
    failed_premises: list       # regime rows (dicts) that do not hold
    n_rows: int


def combine(verdicts: list[str]) -> str:
    """Rule 2 of the module docstring, on the verdicts of judged rows."""
    c = Counter(verdicts)
    n = len(verdicts)
    if n == 0:
        return V.UNTESTED
    if c[V.HOLDS] == n:
        return V.HOLDS
    if c[V.INCONCLUSIVE] == n:
        return V.INCONCLUSIVE
    if c[V.HOLDS] + c[V.PARTLY] == 0:
        return V.FAILS if c[V.FAILS] else V.INCONCLUSIVE
    return V.PARTLY


def evidence(rows: list[dict], claim: Claim) -> list[dict]:
    """The claim's evidence rows: kind "paper" rows of its notebooks, less those marked as not the paper's."""
    return [r for r in rows if r.get("notebook") in claim.notebooks and r.get("kind", "paper") == "paper"
            and not any(s in r["claim"] for s in NOT_THE_PAPERS)]


def failed_premises(rows: list[dict], claim: Claim) -> list[dict]:
    """Required premise rows of the claim's notebooks that do not hold."""
    return [r for r in rows if r.get("notebook") in claim.notebooks and V.is_required_premise(r)
            and r["verdict"] != V.HOLDS]


def _tally(rows: list[dict]) -> str:
    c = Counter(r["verdict"] for r in rows)
    return ", ".join(f"{c[v]} {v}" for v in V.VERDICTS if c[v])


def answer(rows: list[dict], claim: Claim) -> Answer:
    """The claim's Answer by the rule of the module docstring."""
    ev = evidence(rows, claim)
    head = next((r for r in ev if r["claim"].startswith(claim.headline)), ev[0] if ev else None)
    decider = next((r for r in ev if claim.decider and r["claim"].startswith(claim.decider)), None)
    if decider is not None:
        return Answer(claim, decider["verdict"], decider["verdict"], decider.get("rule", ""), decider, [], len(ev))
    if not ev:
        return Answer(claim, V.UNTESTED, "—", "no notebook recorded a row for this claim", None, [], 0)
    judged = [r for r in ev if r["verdict"] not in (V.NOT_COMPARABLE, V.UNTESTED)]
    measured = combine([r["verdict"] for r in judged]) if judged else V.NOT_COMPARABLE
    failed = failed_premises(rows, claim)
    tally = f"{len(ev)} rows: {_tally(ev)}"
    if failed:
        names = "; ".join(f"{r['claim'].removeprefix('regime: ')} ({T.fmt(r['measured'])} vs {r['predicted']})"
                          for r in failed)
        return Answer(claim, V.NOT_COMPARABLE, measured, f"outside the theorem's regime: {names}. Measured there "
                      f"anyway: {tally}; combined, {measured}.", head, failed, len(ev))
    if not judged:
        return Answer(claim, V.NOT_COMPARABLE, measured, f"every row's premise failed ({tally})", head, [], len(ev))
    return Answer(claim, measured, measured, f"{tally}; combined by the rule, {measured}.", head, [], len(ev))


def answers(rows: list[dict]) -> list[Answer]:
    """One Answer per claim of CLAIMS, in order."""
    return [answer(rows, c) for c in CLAIMS]


def _esc(x) -> str:
    return html.escape(str(x))


def _premise_short(r: dict) -> str:
    """A premise row's name in a few words (the text before its first bracket or parenthesis)."""
    name = r["claim"].removeprefix("regime: ")
    return name.split(" [")[0].split(" (")[0]


def render(items: list[Answer], base: str = "../notebooks/") -> str:
    """The claim-level table: claim · the paper predicts · what we measured [interval] · verdict; under each verdict,
    folded, the criterion, the paper's regime against ours, and why. Compact by design: the page opens on it.
    Wrapped in a horizontally scrollable, labelled region for narrow screens."""
    colours = T._COLOURS
    head = ["claim", "the paper predicts", "what we measured [95% interval]", "verdict"]
    out = ['<div class="sb-scroll" style="overflow-x:auto" tabindex="0" role="region" aria-label="Claim-level '
           'answers (scrolls sideways on narrow screens)"><table class="verdict-table sb-answers">'
           '<caption>The answer, claim by claim</caption><thead><tr>'
           + "".join(f'<th scope="col">{h}</th>' for h in head) + "</tr></thead><tbody>"]
    for a in items:
        h = a.headline
        links = ", ".join(f'<a href="{base}{_esc(nb)}.html">{_esc(nb[:2])}</a>' for nb in a.claim.notebooks)
        meas = ("—" if h is None else f'{T.fmt(h["measured"])} [{T.fmt(h["lo"])}, {T.fmt(h["hi"])}]'
                f'<br><small>{_esc(h["claim"][:60])}</small>')
        rule = "—" if h is None else h.get("rule", "").split(";")[0]
        ours = ("met" if not a.failed_premises else "not met: " + ", ".join(
            _premise_short(r) for r in a.failed_premises))
        colour = colours.get(a.verdict, "#000")
        measured = (f'<br><small>measured outside it: {_esc(a.measured)}</small>'
                    if a.verdict == V.NOT_COMPARABLE and a.measured not in ("—", V.NOT_COMPARABLE) else "")
        why = (f"<b>criterion</b>: {_esc(rule)}<br><b>the paper's regime</b>: {_esc(a.claim.regime)}; "
               f"<b>ours</b>: {_esc(ours)}<br><b>why</b>: {_esc(a.why)}")
        cells = [f'<b>{_esc(a.claim.key)}</b> {_esc(a.claim.title)} <small>({_esc(a.claim.source)}; {links})</small>',
                 f"<small>{_esc(a.claim.predicts)}</small>", meas,
                 f'<b style="color:{colour}">{_esc(a.verdict)}</b>{measured}'
                 f'<details class="sb-why"><summary>why</summary><small>{why}</small></details>']
        out.append(f'<tr data-claim="{_esc(a.claim.key)}">' + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    out.append("</tbody></table></div>")
    return "\n".join(out)


class AnswersTable:
    """Displayable claim-level table (HTML in the book, plain text elsewhere)."""

    def __init__(self, items: list[Answer], base: str = "../notebooks/"):
        self.items, self.base = items, base

    def _repr_html_(self):
        return render(self.items, self.base)

    def __repr__(self):
        return "\n".join(f"claim {a.claim.key}: {a.verdict} ({a.why})" for a in self.items)
