"""Judging the map: a verdict row per cell and arm, the predictions judged over the map, and which of three answers
the map supports for claim 4, decided from premises only.

  (a) the premises hold somewhere we can run: the claim's verdict there, from the gains of Algorithm 1's mask and
      the paper's predictions judged at those cells (a prediction that fails where its premises hold makes the
      claim "does not hold");
  (b) they hold only beyond our reach: the binding premises, and the size (m, K) they need, from closed forms and
      from the measured scaling;
  (c) they cannot hold together: two premises conflict (the rule names which, with numbers).
Predictions (the mask's share, the minority neurons being the smallest, a minority-dominant neuron existing, the
feature span) are judged rows, never premises. The rule is fixed here, before any run, and tested on hand-made
cells (tests/test_premise_map.py).
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

from ...premises import condition, scoped
from ...rules import Rule, judge_positive
from ...verdict import (FAILS, HOLDS, NOT_COMPARABLE, PARTLY, PREDICATE, UNTESTED, Verdict, combine, gate,
                        premise_check, premise_value, row)
from .config import PremiseMapConfig
from .metrics import SHORT, VALUE
from .protocol import ARM_TEXT, ARMS, ORACLES, CellResult
from .reach import binding_premises, conflicts, reach_text

SOURCE = "Thm 3.2(c), Thm F.1, Remarks 1-3"
CLAIM = "pruning raises A_j*/A_maj over its control"
GAIN = "gain in A_j*/A_maj, pruned − control"      # what an arm row shows, named in its label
PREDICTION_KEYS = ("mask", "smallest", "dominant", "share")     # judged over the map, never gates


@dataclass
class Conclusion:
    """The map's answer for claim 4: kind a, b or c, its verdict, one paragraph of why with numbers, and the
    plain-words answer."""

    kind: str            # "a", "b" or "c"
    verdict: str
    text: str
    binding: list        # premise keys that fail in every cell that was run
    cells_ok: int        # cells (run) where every required premise holds
    cells_run: int
    answer: str = ""     # the claim-4 answer in plain words (answer_text)
    fact: str = ""       # the one fact that decides kind a, b or c, in a clause (the intro's sentence carries it)


def slug(label: str) -> str:
    """A snake_case id fragment of a cell label."""
    s = label.replace("λ", "lam").replace("ρ", "r").replace("α", "a").replace("/", "_per_").replace("·", "")
    return re.sub(r"[^a-z0-9]+", "_", s.lower()).strip("_")


def required_premises(res: CellResult) -> list:
    """The cell's required premises (Premise objects; predictions never gate)."""
    return [p for p in res.premises.values() if p.required and not p.prediction]


def arm_premises(arm) -> list:
    """An arm's own premises: the paper's T, and Remark 1's bound (strict, else the extended one). An oracle arm
    prunes a chosen set, so it tests Theorem 3.2 given its pruned set: Remark 1's bound, a device to make the
    magnitude mask fall inside M*_j*, does not apply to it, as in notebook 04's oracle rows."""
    p = arm.premises
    bound = p["bound"] if p["bound"].holds or not p["bound_ext"].holds else p["bound_ext"]
    return [p["prune_T"]] if arm.name in ORACLES else [p["prune_T"], bound]


def arm_ok(arm) -> bool:
    """Whether an arm's own premises hold (arm_premises)."""
    return all(q.holds for q in arm_premises(arm))


def premise_row(q, case: str) -> Verdict:
    """One premise (a Premise of a cell or an arm) as a premise row scoped to its case: <condition id>__<case>."""
    return premise_value(scoped(q.cid, case), f"{q.text} at {case}: {VALUE[q.key]}", condition(q.cid).source,
                         q.threshold, q.value, f"holds at {q.threshold}", met=q.holds,
                         band_words=f"holds at {q.threshold}")


def case_id(res: CellResult, arm: str = "") -> str:
    """The case a scoped premise id of a cell names (its label's slug), or of one of its arms (<arm>_<slug>)."""
    return f"{arm}_{slug(res.cell.label)}" if arm else slug(res.cell.label)


def cell_premise_rows(res: CellResult, arms: tuple[str, ...] = ARMS) -> list[Verdict]:
    """A run cell's premise rows, then those of its `arms` (default: all): the rows its arm rows depend on (none for
    a cell not run)."""
    if not res.ran:
        return []
    return ([premise_row(p, case_id(res)) for p in required_premises(res)]
            + [premise_row(q, case_id(res, a)) for a in arms if a in res.arms for q in arm_premises(res.arms[a])])


def arm_row(res: CellResult, name: str, cfg: PremiseMapConfig) -> Verdict:
    """The verdict row of one arm at one cell: its gain judged against effect_tol; gate makes it "not comparable"
    when a premise row of its cell or of the arm fails (the measured verdict is kept in would_be)."""
    label, pred = res.cell.label, f"> {cfg.effect_tol:g} (Thm 3.2(c): the minority coefficient becomes dominant)"
    rid = f"gain_{name}_{case_id(res)}"
    cell = tuple(scoped(p.cid, case_id(res)) for p in required_premises(res))
    if name not in res.arms:
        return row(
            claim=f"{ARM_TEXT[name]}: {CLAIM} at {label}: {GAIN}",
            source=SOURCE,
            predicted=pred,
            measured=math.nan,
            lo=math.nan,
            hi=math.nan,
            judged=(UNTESTED, "the cell was not run"
            if not res.ran
            else "its set of neurons is empty in some replicate (nothing to prune)"),
            kind="paper",
            id=rid,
            depends=cell,
        )
    arm = res.arms[name]
    m, lo, hi = arm.gain_ci()
    judged = judge_positive(lo, hi, "gain in A_j*/A_maj", cfg.effect_tol)
    own = tuple(scoped(q.cid, case_id(res, name)) for q in arm_premises(arm))
    return row(f"{ARM_TEXT[name]}: {CLAIM} at {label}: {GAIN}", SOURCE, pred, m, lo, hi, judged,
               n=int(arm.gain.numel()), band=cfg.effect_tol, id=rid, depends=cell + own)


def judged_arm(res: CellResult, name: str, cfg: PremiseMapConfig) -> Verdict:
    """An arm's row as the table shows it: gated by the premise rows of its cell and of the arm (verdict.gate)."""
    return gate(cell_premise_rows(res, (name,)) + [arm_row(res, name, cfg)], "10_premise_map")[-1]


def cell_rows(res: CellResult, cfg: PremiseMapConfig) -> list[Verdict]:
    """A run cell's premise rows and one row per arm ("not tested" for an arm whose set was empty); Algorithm 1's row
    alone ("not tested") for a cell not run."""
    return cell_premise_rows(res) + [arm_row(res, a, cfg) for a in (ARMS if res.ran else ARMS[:1])]


def judged_cells(results: list[CellResult]) -> tuple[list[CellResult], bool]:
    """The cells predictions are judged on: those run where every required premise holds (True), else every run
    cell (False: the prediction rows are then "not comparable", their measured verdict kept)."""
    ran = [r for r in results if r.ran]
    ok = [r for r in ran if r.required_ok()]
    return (ok, True) if ok else (ran, False)


def prediction_verdict(cells: list[CellResult], key: str) -> tuple[str, int, int]:
    """(verdict, k, n): the prediction `key` holds at k of the n cells that measured it (a NaN value, such as the
    share of minority neurons among the smallest where there is none, is not a measurement); holds if at all, does
    not hold if at none, partly otherwise."""
    have = [r for r in cells if key in r.premises and not math.isnan(r.premises[key].value)]
    k = sum(r.premises[key].holds for r in have)
    n = len(have)
    return (UNTESTED if n == 0 else HOLDS if k == n else FAILS if k == 0 else PARTLY), k, n


def blocking_rows(results: list[CellResult]) -> list[Verdict]:
    """[] when some run cell meets every required premise; else one premise row (scoped id <condition id>__map) for
    the premise that fails in the most run cells: the predictions judged over cells outside the premises depend on
    it, so they read "not comparable"."""
    ran = [r for r in results if r.ran]
    if not ran or any(r.required_ok() for r in ran):
        return []
    keys = [k for k, p in ran[0].premises.items() if p.required and not p.prediction]
    worst = max(keys, key=lambda k: sum(not r.premises[k].holds for r in ran))
    k = sum(not r.premises[worst].holds for r in ran)
    cid = ran[0].premises[worst].cid
    return [premise_check(scoped(cid, "map"), f"no cell meets every premise; {SHORT.get(worst, worst)} fails in {k} "
                          f"of {len(ran)} cells run", condition(cid).source, len(ran) - k, len(ran), "cells run")]


def prediction_rows(results: list[CellResult], cfg: PremiseMapConfig) -> list[Verdict]:
    """One row per prediction (PREDICTION_KEYS): the fraction of the judged cells where it holds; holds at all of
    them, does not hold at none, partly otherwise. The cells are the map's own designed grid, not a sample of
    settings, so the fraction is a count with no sampling interval (its interval is the value itself): a Wilson
    interval beside "holds at every cell" reached below the band [1, 1] for any number of cells (issue 49)."""
    cells, ok = judged_cells(results)
    where = "cells meeting every premise" if ok else "cells run"
    out = blocking_rows(results)
    gates = tuple(r.id for r in out)
    for key in PREDICTION_KEYS:
        p = next((r.premises[key] for r in cells if key in r.premises), None)
        if p is None:
            continue
        v, k, n = prediction_verdict(cells, key)
        lo = hi = k / n if n else math.nan
        why = (f"holds at {k} of {n} {where} (a count over the map's designed grid: no sampling interval); per cell: "
               f"{p.threshold}") if n else "no cell measured it"
        out.append(row(f"prediction: {p.text} (over the map): share of cells where it holds",
                       condition(p.cid).source, "holds at every cell",
                       k / n if n else math.nan, lo, hi, (v, Rule(why, (1.0, 1.0))),   # the share of cells: all
                       n=n, id=f"{p.cid}_map", quantity="fraction", depends=gates))
    return out


def _arm_tally(results: list[CellResult], name: str, cfg: PremiseMapConfig) -> str:
    """How an arm's gain came out over the run cells: above effect_tol / below -effect_tol / neither."""
    vs = []
    for r in results:
        if r.ran and name in r.arms:
            _, lo, hi = r.arms[name].gain_ci()
            vs.append(judge_positive(lo, hi, "gain", cfg.effect_tol)[0])
    if not vs:
        return f"{ARM_TEXT[name]}: not run at any cell"
    return (f"{ARM_TEXT[name]}: gain above {cfg.effect_tol:g} at {vs.count(HOLDS)} of {len(vs)} cells, "
            f"excluded at {vs.count(FAILS)}, unsettled at {len(vs) - vs.count(HOLDS) - vs.count(FAILS)}")


def answer_text(results: list[CellResult], kind: str, verdict: str, cfg: PremiseMapConfig) -> str:
    """The claim-4 answer in plain words, from the measurements: what holds conditionally (the oracle masks), what
    fails (Algorithm 1's mask, Remarks 1-2's predictions), and under which modelling choice (the bias onset)."""
    ran = [r for r in results if r.ran]
    if not ran:
        return "No cell of the map was trained, so claim 4 was not tested."
    conv = [r for r in ran if r.premises["convergence"].holds]
    best = min(ran, key=lambda r: r.extra["loss_T4"] / r.extra["ln_K"])
    parts = [f"Convergence (Thm 3.1 eq. (11), the start of Thm F.1): the vanilla run converged at {len(conv)} of "
             f"{len(ran)} cells; its lowest loss at the branch point was "
             f"{best.extra['loss_T4'] / best.extra['ln_K']:.2f}"
             f" ln K ({best.cell.label}, T4 = {best.extra['T4']} steps)."]
    parts.append("Theorem 3.2 as a conditional statement (the pruned set chosen, not found by norm): "
                 + "; ".join(_arm_tally(results, a, cfg) for a in ORACLES) + ".")
    parts.append("Algorithm 1's magnitude mask: " + "; ".join(_arm_tally(results, a, cfg) for a in ARMS[:3]) + ".")
    cells, ok = judged_cells(results)
    preds = []
    for key in PREDICTION_KEYS:
        v, k, n = prediction_verdict(cells, key)
        preds.append(f"{SHORT[key]} at {k} of {n}")
    parts.append(f"Predictions over the {'cells meeting every premise' if ok else 'cells run'}: " + ", ".join(preds)
                 + ".")
    star = [r for r in ran if r.cell.axis == "bias_onset"]
    where = {(r.cell.d, r.cell.lam_name, r.cell.ratio) for r in star}        # the centre the onsets vary around
    onset = [r for r in ran if r.cell.axis == "plane" and (r.cell.d, r.cell.lam_name, r.cell.ratio) in where] + star
    if star:
        def dom(r):
            a = r.arms.get("oracle_dominant")
            return "not run (no such neuron in some replicate)" if a is None else f"{a.gain_ci()[0]:+.3g}"
        parts.append("Bias onset (a modelling choice the paper leaves open): " + "; ".join(
            f"{'no bias' if r.cell.cfg.bias == 'none' else r.cell.bias_onset}: loss at T4 "
            f"{r.extra['loss_T4'] / r.extra['ln_K']:.2f} ln K, minority-dominant neurons in every replicate: "
            f"{'yes' if r.premises['dominant'].holds else 'no'}, gain of the oracle P = minority-dominant {dom(r)}"
            for r in onset) + ".")
    head = {"a": f"Where every premise holds, claim 4 {verdict}.",
            "b": "No cell meets every premise of Theorem 3.2, so the claim is not decided here (b).",
            "c": "No cell meets every premise, and two premises conflict (c)."}[kind]
    return head + " " + " ".join(parts)


def conclusion(results: list[CellResult], rates: list[dict], cfg: PremiseMapConfig,
               ceilings: tuple = ()) -> Conclusion:
    """Which of (a), (b), (c) the map supports (module docstring), decided from premises only, with its verdict,
    a paragraph of numbers and the plain-words answer; `ceilings` are ceiling.lp_ceilings' rows (() for none)."""
    ran = [r for r in results if r.ran]
    ok = [r for r in ran if r.required_ok()]
    binding = binding_premises(results)
    pairs = [(r, a) for r in ok for a in r.arms.values() if arm_ok(a)]
    if pairs:
        c = _conclude_met(pairs, ok, ran, binding, cfg)
    else:
        c = _conclude_unmet(results, rates, ran, binding, cfg, tuple(ceilings))
    c.answer = answer_text(results, c.kind, c.verdict, cfg)
    return c


def _conclude_met(pairs: list, ok: list[CellResult], ran: list[CellResult], binding: list[str],
                  cfg: PremiseMapConfig) -> Conclusion:
    """Answer (a): the claim judged at the (cell, arm) pairs where every premise holds."""
    alg = [judged_arm(r, a.name, cfg).verdict for r, a in pairs if a.name not in ORACLES]
    orc = [judged_arm(r, a.name, cfg).verdict for r, a in pairs if a.name in ORACLES]
    preds = [prediction_verdict(ok, k)[0] for k in PREDICTION_KEYS]
    # a prediction (or Algorithm 1's gain) that fails where every premise holds is a failure of the claim,
    # whatever else holds: the theorem's conclusion is false under its own premises
    vs = [v for v in [combine(alg)] + preds if v != UNTESTED]
    v = FAILS if FAILS in vs else combine(vs)
    where = ", ".join(f"{r.cell.label} / {a.name}" for r, a in pairs)
    text = (f"(a) every premise holds at {len(pairs)} (cell, arm) pairs of {len(ran)} cells run: {where}. "
            f"Algorithm 1 there: {combine(alg)}; the oracle masks there: {combine(orc)}; the predictions "
            f"(mask share, minority smallest, minority-dominant exist, feature span): {', '.join(preds)}. "
            f"Claim 4: {v}.")
    return Conclusion("a", v, text, binding, len(ok), len(ran),
                      fact=f"every premise holds at {len(pairs)} (cell, arm) pairs, "
                           f"and there the claim {PREDICATE[v]}")


def _conclude_unmet(results: list[CellResult], rates: list[dict], ran: list[CellResult], binding: list[str],
                    cfg: PremiseMapConfig, ceilings: tuple = ()) -> Conclusion:
    """Answer (c) when no cell meets every premise and premises conflict, else (b): not decided here."""
    found = conflicts(results, rates, ceilings)
    names = ", ".join(SHORT.get(k, k) for k in binding) if binding else "none in every cell"
    first = f"; {SHORT.get(binding[0], binding[0])} fails in every cell" if binding else ""
    if found:
        hit = [c for c in ceilings if c.conflict]
        free = [c.d for c in ceilings if not c.conflict]      # d's where no conflict is shown: (b) there
        rest = (f" Where no conflict is shown (d = {', '.join(map(str, free))}), beyond this map's reach: "
                + reach_text(rates, results, cfg) + ".") if hit and free else ""
        # the pair and the numbers, short enough for the intro's 40-word sentence (book/pages/claim_summary.py)
        fact = (f"convergence and Lemma B.1's K at d = {', '.join(str(c.d) for c in hit)} (l'_p ≤ "
                f"{', '.join(f'{c.limit:.3f}' for c in hit)} against {hit[0].need:.2f})" if hit
                else f"no cell of {len(ran)} meets every premise, and two premises conflict")
        return Conclusion("c", NOT_COMPARABLE, f"(c) no cell of {len(ran)} meets every premise, and premises "
                          "conflict: " + "; ".join(found) + f". Premises failing in every cell: {names}." + rest,
                          binding, 0, len(ran), fact=fact)
    return Conclusion("b", NOT_COMPARABLE, f"(b) no cell of {len(ran)} meets every premise; failing in every "
                      f"cell: {names}. Beyond this map's reach: " + reach_text(rates, results, cfg) + ".",
                      binding, 0, len(ran), fact=f"no cell of {len(ran)} meets every premise{first}")


def headline(results: list[CellResult], cfg: PremiseMapConfig) -> CellResult | None:
    """The cell whose gain the claim-4 row shows: the run cell meeting the most required premises (first on ties)."""
    ran = [r for r in results if r.ran]
    def score(r):
        return sum(p.holds for p in r.premises.values() if p.required and not p.prediction)
    return max(ran, key=score) if ran else None


def verdict_rows(results: list[CellResult], rates: list[dict], cfg: PremiseMapConfig,
                 ceilings: tuple = ()) -> list[Verdict]:
    """The notebook's table: one row per cell and arm, one per prediction, then the claim-4 row decided on the map."""
    rows = [v for r in results for v in cell_rows(r, cfg)] + prediction_rows(results, cfg)
    c = conclusion(results, rates, cfg, ceilings)
    top = headline(results, cfg)
    m, lo, hi = top.gain_ci() if top else (math.nan,) * 3
    where = f"Algorithm 1's gain at {top.cell.label}, the cell meeting the most premises" if top else "no cell run"
    deps = tuple(dict.fromkeys(p.cid for r in results if r.ran for p in required_premises(r)))
    rows.append(
        row(
            claim=f"claim 4 on the premise map: {CLAIM} where Theorem 3.2's premises hold: Algorithm 1's "
            f"{GAIN}, at the cell meeting the most premises",
            source=SOURCE,
            predicted=f"(a), (b) or (c); the claim itself: gain > {cfg.effect_tol:g}",
            measured=m,
            lo=lo,
            hi=hi,
            judged=(c.verdict, f"answer ({c.kind}) — {c.text} Decided by: {c.fact}. In plain words: {c.answer}"),
            premise=f"cells meeting every premise: {c.cells_ok} of {c.cells_run}; shown: {where}",
            kind="paper",
            id="claim4_map",
            depends=deps + ("prune_from_t4", "alpha_bound"),
            band_words=f"the gain > {cfg.effect_tol:g} at the cells meeting every premise (answer (a))",
        )
    )
    return rows
