"""The claim-level answers (book/answers.py) on hand-made rows: every branch of the rule, and counts that add up."""
import re

from imbalanced_cl import verdict as V
from imbalanced_cl.book import answers as A
from imbalanced_cl.book.scoreboard import Board, render

C1 = A.CLAIMS[0]
NB = C1.notebooks[0]


def row(claim, verdict, kind="paper", nb=NB, measured=1.0):
    return {"notebook": nb, "claim": claim, "source": "s", "predicted": "p", "measured": measured, "lo": 0.5,
            "hi": 1.5, "verdict": verdict, "rule": "band [0.8, 1.2]; more", "kind": kind}


def premise(claim, verdict, nb=NB):
    return row(f"regime: {claim}", verdict, kind="regime", nb=nb, measured=0.001)


def test_combine_every_branch():
    assert A.combine([V.HOLDS, V.HOLDS]) == V.HOLDS
    assert A.combine([V.FAILS, V.INCONCLUSIVE]) == V.FAILS
    assert A.combine([V.HOLDS, V.FAILS]) == V.PARTLY
    assert A.combine([V.PARTLY, V.INCONCLUSIVE]) == V.PARTLY
    assert A.combine([V.INCONCLUSIVE, V.INCONCLUSIVE]) == V.INCONCLUSIVE
    assert A.combine([]) == V.UNTESTED


def test_a_claim_holds_only_with_every_row_holding_and_its_premises_met():
    rows = [row("Majority/minority rate ratio equals", V.HOLDS), row("other", V.HOLDS),
            premise("weight decay λ inside the proof's range", V.HOLDS)]
    a = A.answer(rows, C1)
    assert (a.verdict, a.measured, a.n_rows) == (V.HOLDS, V.HOLDS, 2)
    assert a.headline["claim"].startswith("Majority/minority")


def test_a_failed_premise_makes_the_claim_not_comparable_and_shows_what_was_measured():
    rows = [row("Majority/minority rate ratio", V.FAILS), row("other", V.HOLDS),
            premise("weight decay λ inside the proof's range [d^-1.49, d^-1.01]", V.FAILS),
            premise("noise σ_ξ² on Assumption 3.3's scale", V.FAILS)]          # reported only: not required
    a = A.answer(rows, C1)
    assert a.verdict == V.NOT_COMPARABLE and a.measured == V.PARTLY
    assert len(a.failed_premises) == 1 and "weight decay λ" in a.why and "0.001" in a.why


def test_rows_that_are_not_the_papers_or_not_judged_do_not_count():
    rows = [row("x — diagnostic, not in the paper", V.FAILS), row("y", V.NOT_COMPARABLE), row("z", V.FAILS),
            row("w", V.HOLDS, kind="diagnostic")]
    a = A.answer(rows, C1)
    assert a.verdict == V.FAILS and a.n_rows == 2
    assert A.answer([row("y", V.NOT_COMPARABLE)], C1).verdict == V.NOT_COMPARABLE
    assert A.answer([], C1).verdict == V.UNTESTED


def test_claim_4_is_decided_by_the_premise_map_row():
    c4 = next(c for c in A.CLAIMS if c.key == "4")
    rows = [row("Pruning adds growth", V.HOLDS, nb="04_pruning_gains"),
            row("claim 4 on the premise map: ...", V.NOT_COMPARABLE, nb="10_premise_map")]
    assert A.answer(rows, c4).verdict == V.NOT_COMPARABLE
    assert A.answer(rows[:1], c4).verdict == V.HOLDS          # without the map: the general rule


def test_the_headline_count_equals_the_table_total_and_premise_rows_are_counted_apart():
    rows = [dict(row("a", V.HOLDS), notebook=NB), dict(row("b", V.FAILS), notebook=NB),
            dict(row("c", V.INCONCLUSIVE, kind="companion"), notebook=NB),
            dict(premise("weight decay λ inside", V.FAILS), notebook=NB)]
    board = Board("x", rows=rows, status={NB: "ok"})
    page = render(board)
    headline = int(re.search(r'class="sb-total">(\d+)<', page).group(1))
    total = int(re.search(r'class="sb-table-total">(\d+)<', page).group(1))
    assert headline == total == 3
    assert "and 1 premise rows (0 hold)" in page
    assert page.index("The answer, claim by claim") < page.index("Verdicts per claim notebook")


def test_a_notebook_table_says_which_premises_its_run_meets_and_points_to_the_map():
    from imbalanced_cl.book.tables import premises_note
    rows = [row("a", V.HOLDS), premise("weight lies in the feature span (share at the end)", V.HOLDS),
            premise("weight decay λ inside the proof's range", V.FAILS),
            premise("noise σ_ξ² on Assumption 3.3's scale", V.FAILS)]          # reported only: not listed
    note = premises_note(rows)
    assert "(1 of 2 met)" in note and "met: weight lies in the feature span" in note
    assert "not met: weight decay λ inside the proof&#x27;s range (0.001 vs p: does not hold)" in note
    assert "10_premise_map.html" in note and "σ" not in note
    assert premises_note([row("a", V.HOLDS)]) == ""
    assert "premise map" not in premises_note(rows[:2])                    # all met: nothing to point to
