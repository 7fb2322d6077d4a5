"""The answer first: one verdict per claim of the paper, computed from the claim notebooks' rows by one rule.

Which rows count (the same definitions serve every count of every page):
  * a claim row tests a statement: kind "paper", "diagnostic" or "companion" (verdict.is_claim_row);
  * a premise row checks a premise of the theorems on the run: kind "premise" (verdict.is_premise_row).
A paper claim's evidence is the kind-"paper" rows of its notebooks (a row beyond the paper is kind "diagnostic").
Premises reach a claim only through its rows: each row names the premises it depends on by id, and a row whose
premise was not met is already "not comparable" in its notebook's table (verdict.gate).

The rule (book/methods.ipynb states it for readers; tests/test_answers.py checks every branch on hand-made rows):
  1. From the evidence rows that were judged (neither "not comparable" nor "not tested"), the claim's verdict is
     verdict.combine of theirs (the claim-level halves of verdict.MEANINGS).
  2. If no evidence row was judged but some are "not comparable", the claim is "not comparable": the premises that
     were not met are named, and the verdict its rows get on their own ("measured there") is shown beside it.
  3. No evidence row, or only "not tested" ones: "not tested".
The row shown as "what we measured" is the claim's headline row (by id): a measured value, its unit and its
interval, whatever the verdict.
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from ... import premises as P
from ... import verdict as V
from .render import fmt, plural

is_claim_row, is_premise_row = V.is_claim_row, V.is_premise_row      # the one definition lives in verdict.py
combine = V.combine                                                  # the one rule lives in verdict.py


@dataclass(frozen=True)
class Claim:
    """One claim of the paper: where it is tested and which row is its headline measurement."""

    key: str             # "1" ... "5", "A.2"
    title: str
    source: str
    predicts: str        # what the paper predicts, in words
    notebooks: tuple     # the notebooks whose paper rows are its evidence
    headline: tuple      # row ids, first found wins; an id ending in "_" matches ids that start with it
    unit: str            # what the headline row measures, with its unit
    regime: str          # the paper's regime, in words
    short: str = ""      # the headline quantity in a few words, to stand inside a sentence ("the rate ratio")
    kinds: tuple = ("paper",)   # the row kinds that are its evidence (a companion paper's page: "companion")
    label: str = ""      # how a sentence names it ("" -> "claim <key>")

    @property
    def called(self) -> str:
        """How a sentence names the claim: 'claim 1', or its label."""
        return self.label or f"claim {self.key}"
    note: str = ""       # one sentence the answer always carries
    plain_row: str = ""  # id of a row whose rule ends with the claim's answer in plain words ("In plain words: ...")


CLAIMS = (
    Claim("1", "Stage 1: weights grow along features at rates set by ε_j", "Lemma 3.1, eq. (7)",
          "growth rate/η + λ ∝ ε_j; majority/minority rate ratio ε_max/ε_min", ("01_stage1_growth",),
          ("rate_ratio",), "majority/minority Stage-1 growth-rate ratio",
          "λ ∈ [d^-1.49, d^-1.01], K = poly(d1) pairs (Lemma B.1)", short="the rate ratio"),
    Claim("2", "Lucky neurons specialise in one feature; imbalance makes them rarer", "Def. B.1, Lemma B.2, eq. (9)",
          "|M*_j| ≥ Ω(d^ω1) lucky neurons, fewer as ε_min/ε_max falls", ("02_lucky_neurons",),
          ("lucky_exponent_0p8", "lucky_exponent_"), "exponent of d in E|M*_j| at initialisation",
          "m = d^C_m (the census, no training); λ and K = poly(d1) for the trained rows",
          short="the lucky-count exponent at ρ = 0.8"),
    Claim("3", "A neuron mixes |N_i| = O(d^(1−ρ²)) features", "Theorem 3.1, eq. (14)",
          "the exponent of |N_i| in d follows 1 − (ε_min/ε_max)²", ("03_Ni_scaling",),
          ("ni_tracking_final",), "slope of the |N_i| exponent on 1 − ρ² (1 predicted)",
          "T ∈ [d^1.01/η, d^1.99/η], λ in the proof's range, K = poly(d1)", short="|N_i| slope"),
    Claim("4", "Magnitude pruning (Algorithm 1) restores minority features", "Theorem 3.2, Remarks 1-3",
          "A_j*/A_maj rises to ≈ 1 under pruning; the minority excess growth ∝ α ε_j*²",
          ("04_pruning_gains", "10_premise_map"), ("gain_main",), "gain in A_j*/A_maj, pruned − control",
          "pruning from T4 of a converged network, α m ≤ |M*_j*|, λ in the proof's range", plain_row="claim4_map",
          short="the pruning gain"),
    Claim("A.2", "App. A.2: minority alignment and downstream quality grow with ε_min", "App. A.2, Figs. 1-4",
          "all four metrics improve as ε_min grows", ("05_appendix_figures",), ("fig2_trend",),
          "Spearman ρ of max_i |cos(w_i, M_min)| with ε_min", "d1 = 500, 100 repeats, hyperparameters unstated",
          short="the Fig. 2 trend",
          note="The paper does not state App. A.2's settings, so its figures are judged on their own: no premise "
               "of Theorem 3.1 gates them."),
    Claim("5", "Pruning improves linear-probe accuracy on long-tailed CIFAR and ImageNet", "Table 2",
          "accuracy +5.1 to +8.0 points on CIFAR-LT and +1.9 on ImageNet-LT, Δ20 lower, with pruning",
          ("06_lt_benchmarks",), ("sdclr_acc_",), "accuracy gain of SDCLR-style pruning over SimCLR, in points",
          "ResNet-18, 2000 epochs, full CIFAR-LT", short="the accuracy gain"),
)


# Pages that test the claims beyond one notebook's size or beyond the paper: no claim of their own on the intro, but
# their page opens with a one-line answer from their rows, by the same rule.
PAGES = (
    Claim("1-4 along d", "Does the gap to each prediction close as d grows?", "Theorems 3.1-3.2, as d grows",
          "each gap to the prediction shrinks as d grows", ("08_scale",), ("ni_tracking",),
          "slope of the gap per doubling of d", "d → ∞ with the paper's scalings", short="the |N_i| tracking gap",
          label="the trend along d"),
    Claim("W&L", "Feature decoupling and augmentation (Wen & Li 2021)", "Wen & Li (2021), Theorems 1-2",
          "with augmentation the features decouple from the noise; without it they do not",
          ("09_feature_decoupling",), ("paper_removal",), "cos(f(x), f(Mz)) with the main paper's pairs",
          "Wen & Li's data model (Def. 2.1)", short="noise removal", kinds=("companion",),
          label="Wen & Li's claim"),
)


@dataclass
class Answer:
    """A claim's verdict, the outcome measured (even where a premise failed), and why, with numbers."""

    claim: Claim
    verdict: str
    measured: str               # the combined verdict of the rows as measured (their own verdicts), or "—"
    why: str
    headline: V.Verdict | None  # the row shown as "what we measured"
    failed_premises: list       # premise rows (or ids, where none) that an evidence row depends on and were not met
    n_rows: int
    premises_met: list | None = None      # premise rows an evidence row depends on that hold
    premises_unchecked: list | None = None  # premise ids an evidence row depends on with no row that holds or fails
    plain: str = ""             # the claim's answer in plain words, from its plain_row (premise map: claim 4)
    kind: str = ""              # the plain_row's answer, "a", "b" or "c" (premise map: claim 4), "" elsewhere
    decided: str = ""           # the one fact that decides that answer, in a clause


def evidence(rows: list[V.Verdict], claim: Claim) -> list[V.Verdict]:
    """The claim's evidence rows: the rows of its notebooks of its kinds (kind "paper" for the paper's claims)."""
    return [r for r in rows if r.notebook in claim.notebooks and r.kind in claim.kinds]


def headline(ev: list[V.Verdict], claim: Claim) -> V.Verdict | None:
    """The claim's headline row by id (Claim.headline), a judged one first among prefix matches; else the first."""
    for hid in claim.headline:
        hits = [r for r in ev if (r.id.startswith(hid) if hid.endswith("_") else r.id == hid)]
        if hits:
            return next((r for r in hits if r.verdict not in (V.NOT_COMPARABLE, V.UNTESTED)), hits[0])
    return ev[0] if ev else None


def premise_status(rows: list[V.Verdict], ev: list[V.Verdict], claim: Claim) -> tuple[list, list, list]:
    """(met, not met, unchecked) for the premises the evidence rows depend on, read off the rows themselves (each
    row records which of its premises were checked and which were not met): met and not-met premises as their
    premise rows of the claim's notebooks where there is one, else as the premise's id; unchecked as ids."""
    wanted = list(dict.fromkeys(d for r in ev for d in r.depends))
    checked = {d for r in ev for d in r.checked}
    unmet = {d for r in ev for d in r.unmet}
    prem = {r.id: r for r in rows if is_premise_row(r) and r.notebook in claim.notebooks}
    def as_row(pid):
        return prem.get(pid, pid)
    met = [as_row(p) for p in wanted if p in checked and p not in unmet]
    failed = [as_row(p) for p in wanted if p in unmet]
    return met, failed, [p for p in wanted if p not in checked]


def failed_premises(rows: list[V.Verdict], claim: Claim) -> list:
    """Premise rows of the claim's notebooks that an evidence row depends on and that were not met."""
    return premise_status(rows, evidence(rows, claim), claim)[1]


def _tally(rows: list[V.Verdict]) -> str:
    c = Counter(r.verdict for r in rows)
    return ", ".join(f"{c[v]} {v}" for v in V.VERDICTS if c[v])


def _premise_text(r) -> str:
    """A failed premise with its numbers (a premise row) or its name (an id checked inside a row), and how its
    verdict moves under the book's free choice, if stated."""
    if isinstance(r, str):
        return P.name(r)
    text = f"{premise_short(r)} ({fmt(r.measured)} vs {r.predicted})"
    return text + (f"; {r.sensitivity}" if r.sensitivity else "")


def premise_id(r) -> str:
    """The premise id of a premise row or of an id."""
    return r if isinstance(r, str) else r.id


def if_met(ev: list[V.Verdict], pid: str) -> str:
    """What the claim would read were premise `pid` met: the rows not comparable only because of it take their own
    verdict. "" when no row is held back by `pid` alone (its rows also miss other premises)."""
    freed = [r.would_be for r in ev if r.verdict == V.NOT_COMPARABLE and r.would_be and set(r.unmet) == {pid}]
    if not freed:
        return ""
    return combine(freed + [r.verdict for r in ev if r.verdict not in (V.NOT_COMPARABLE, V.UNTESTED)])


def _sensitivity(r, ev: list[V.Verdict]) -> str:
    """For a failed premise row with a stated sensitivity: what the claim would read were it met, or that its rows
    would still miss other premises ("" otherwise)."""
    if isinstance(r, str) or not r.sensitivity:
        return ""
    alone = if_met(ev, premise_id(r))
    if alone:
        return f" (were it met, the claim would read {alone})"
    held = any(premise_id(r) in x.unmet and x.would_be for x in ev)
    return " (were it met, its rows would still miss other premises)" if held else ""


def _unmet_text(failed: list, ev: list[V.Verdict]) -> str:
    """The answer's clause naming each failed premise once: with its numbers and sensitivity where one row checks it,
    with the count of cases where it is checked per case (per d, per cell); "" when none failed."""
    if not failed:
        return ""
    groups: dict[str, list] = {}
    for r in failed:
        groups.setdefault(P.premise_of(premise_id(r)), []).append(r)
    parts = [_premise_text(rs[0]) + _sensitivity(rs[0], ev) if len(rs) == 1
             else f"{P.name(pid) if pid in P.BY_ID else premise_short(rs[0])} (not met in {len(rs)} cases)"
             for pid, rs in groups.items()]
    return "; premises not met: " + "; ".join(parts)


def _as_measured(rows: list[V.Verdict]) -> str:
    """The rows' verdicts combined as measured: a row not comparable by the verdict it would have had."""
    return combine([r.would_be or r.verdict for r in rows
                    if (r.would_be or r.verdict) not in (V.NOT_COMPARABLE, V.UNTESTED)])


def answer(rows: list[V.Verdict], claim: Claim) -> Answer:
    """The claim's Answer by the rule of the module docstring."""
    ev = evidence(rows, claim)
    head = headline(ev, claim)
    note = f" {claim.note}" if claim.note else ""
    if not ev:
        return Answer(claim, V.UNTESTED, "—", "no notebook recorded a row for this claim" + note, None, [], 0)
    met, failed, unchecked = premise_status(rows, ev, claim)
    judged = [r for r in ev if r.verdict not in (V.NOT_COMPARABLE, V.UNTESTED)]
    gated = [r for r in ev if r.verdict == V.NOT_COMPARABLE]
    as_measured = _as_measured(judged + gated)
    tally = f"{plural(len(ev), 'row')}: {_tally(ev)}"
    unmet = _unmet_text(failed, ev)
    gate = (f"; {plural(len(gated), 'row')} not comparable, measured there: "
            f"{combine([r.would_be for r in gated if r.would_be])}") if gated else ""
    if judged:
        v = combine([r.verdict for r in judged])
        judged_n = "the judged row reads" if len(judged) == 1 else f"the {len(judged)} judged rows combine to"
        why = f"{tally}; {judged_n} {v}{gate}{unmet}.{note}"
    elif gated:
        v = V.NOT_COMPARABLE
        why = f"every row depends on a premise that was not met ({tally}){unmet}. Measured there: {as_measured}.{note}"
    else:
        v = V.UNTESTED
        why = f"no row has a finite measurement ({tally}).{note}"
    kind, decided = decided_by(ev, claim)
    return Answer(claim, v, as_measured if judged or gated else "—", why, head, failed, len(ev), met, unchecked,
                  plain_words(ev, claim), kind, decided)


PLAIN = "In plain words: "
DECIDED = "Decided by: "
KIND = re.compile(r"^answer \(([abc])\)")


def _plain_rule(ev: list[V.Verdict], claim: Claim) -> str:
    """The rule of the claim's plain_row among its evidence rows ("" when it has none, or the row is not there)."""
    return next((r.rule for r in ev if claim.plain_row and r.id == claim.plain_row), "")


def decided_by(ev: list[V.Verdict], claim: Claim) -> tuple[str, str]:
    """(kind, fact): the plain_row's answer (a), (b) or (c) and the one fact that decides it, as its rule states them
    ("answer (b) — ... Decided by: FACT. In plain words: ..."); ("", "") if none."""
    rule = _plain_rule(ev, claim)
    m = KIND.match(rule)
    fact = rule.split(DECIDED, 1)[1].split(". " + PLAIN, 1)[0].rstrip(".") if DECIDED in rule else ""
    return (m.group(1) if m else ""), fact


def plain_words(ev: list[V.Verdict], claim: Claim) -> str:
    """The claim's answer in plain words, as its plain_row's rule states it from the measurements ("" if none)."""
    rule = _plain_rule(ev, claim)
    return rule.split(PLAIN, 1)[1].strip() if PLAIN in rule else ""


def answers(rows: list[V.Verdict]) -> list[Answer]:
    """One Answer per claim of CLAIMS, in order."""
    return [answer(rows, c) for c in CLAIMS]



def premise_short(r) -> str:
    """A premise's name in a few words (premises.NAMES), from its row or its id."""
    pid = premise_id(r)
    if P.premise_of(pid) in P.BY_ID:            # a premise's id, or a scoped one (checked for one case): its name
        return P.name(pid)
    name = r.claim.removeprefix("regime: ")
    return name.split(" [")[0].split(" (")[0]


def by_premise(a: Answer) -> tuple[Counter, Counter, dict]:
    """(cases not met, cases met, short name) per premise the rows depend on, a premise checked per case (scoped ids)
    counted once per case."""
    def base(r):
        return P.premise_of(premise_id(r))
    failed = Counter(base(r) for r in a.failed_premises or [])
    met = Counter(base(r) for r in a.premises_met or [])
    short = {base(r): premise_short(r) for r in [*(a.premises_met or []), *(a.failed_premises or [])]}
    return failed, met, short


def ours(a: Answer) -> str:
    """The premises the claim's rows depend on, as this run found them, each named once: not met (in any case where
    it is checked per case, with how many), met (in every case checked), not checked here (in no case)."""
    failed, met, short = by_premise(a)
    unchecked = [P.premise_of(i) for i in a.premises_unchecked or [] if P.premise_of(i) in P.BY_ID]
    unchecked = list(dict.fromkeys(i for i in unchecked if i not in failed and i not in met))
    parts = []
    if failed:         # a premise not met in any case is named here, with how many of its cases were checked
        ways = [f"{short[p]} (in {n} of {n + met[p]} cases)" if n + met[p] > 1 else short[p] for p, n in failed.items()]
        parts.append("not met: " + ", ".join(ways))
    if met.keys() - failed.keys():
        parts.append("met: " + ", ".join(short[p] for p in met if p not in failed))
    if unchecked:
        parts.append("not checked here: " + ", ".join(P.name(i) for i in unchecked))
    return "; ".join(parts) or "no premise gates its rows"
