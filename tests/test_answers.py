"""The claim-level answers (book/pages/answers.py) on hand-made rows: every branch of the rule, and counts that add
up."""
import re

from imbalanced_cl import premises as P
from imbalanced_cl import verdict as V
from imbalanced_cl.book.pages import answers as A
from imbalanced_cl.book.pages.scoreboard import Board, render

C1 = A.CLAIMS[0]
NB = C1.notebooks[0]


def row(claim, verdict, kind="paper", nb=NB, measured=1.0, id=None, depends=(), would_be="", unmet=()):
    """A glued row as verdict.gate leaves it: its premises checked (a premise row exists for each), `unmet` failed."""
    return {"notebook": nb, "claim": claim, "source": "s", "predicted": "p", "measured": measured, "lo": 0.5,
            "hi": 1.5, "verdict": verdict, "rule": "band [0.8, 1.2]; more", "kind": kind,
            "id": id or claim.replace(" ", "_").lower(), "depends": list(depends), "would_be": would_be,
            "checked": list(depends), "unmet": list(unmet)}


def premise(id, verdict, nb=NB, claim=None, sensitivity=""):
    r = row(f"regime: {claim or P.condition(id).statement}", verdict, kind="premise", nb=nb, measured=0.001, id=id)
    return {**r, "sensitivity": sensitivity}


def test_combine_every_branch():
    assert A.combine([V.HOLDS, V.HOLDS]) == V.HOLDS
    assert A.combine([V.FAILS, V.INCONCLUSIVE]) == V.FAILS
    assert A.combine([V.HOLDS, V.FAILS]) == V.PARTLY
    assert A.combine([V.PARTLY, V.INCONCLUSIVE]) == V.PARTLY
    assert A.combine([V.INCONCLUSIVE, V.INCONCLUSIVE]) == V.INCONCLUSIVE
    assert A.combine([]) == V.UNTESTED
    assert A.combine is V.combine                                   # one rule, written once


def test_a_claim_holds_only_with_every_row_holding_and_its_premises_met():
    rows = [row("rate ratio", V.HOLDS, id="rate_ratio", depends=("lambda_range",)), row("other", V.HOLDS),
            premise("lambda_range", V.HOLDS)]
    a = A.answer(rows, C1)
    assert (a.verdict, a.measured, a.n_rows) == (V.HOLDS, V.HOLDS, 2)
    assert a.headline["id"] == "rate_ratio" and "met: " in A.ours(a) and "not met" not in A.ours(a)


def test_rows_gated_by_a_failed_premise_make_the_claim_not_comparable_and_show_what_was_measured():
    rows = [row("rate ratio", V.NOT_COMPARABLE, id="rate_ratio", depends=("k_poly",), would_be=V.FAILS,
                unmet=("k_poly",)),
            row("other", V.NOT_COMPARABLE, depends=("k_poly",), would_be=V.HOLDS, unmet=("k_poly",)),
            premise("k_poly", V.FAILS, sensitivity="at p = 0.5 this row holds; the bound needs K ≈ 40,000"),
            premise("noise_scale", V.FAILS)]                 # reported only, and no row depends on it
    a = A.answer(rows, C1)
    assert a.verdict == V.NOT_COMPARABLE and a.measured == V.PARTLY
    assert [r["id"] for r in a.failed_premises] == ["k_poly"] and "0.001" in a.why
    assert "K ≈ 40,000" in a.why                              # Lemma B.1's sensitivity line reaches the answer
    assert "were it met, the claim would read partly" in a.why
    assert A.ours(a).startswith("not met: ") and "met: " not in A.ours(a).replace("not met: ", "")


def test_a_failed_premise_no_row_depends_on_leaves_the_claim_judged():
    rows = [row("census", V.HOLDS, depends=("m_poly",)), premise("k_poly", V.FAILS), premise("m_poly", V.HOLDS)]
    a = A.answer(rows, C1)
    assert a.verdict == V.HOLDS and a.failed_premises == [] and "not met" not in A.ours(a)


def test_rows_that_are_not_the_papers_or_not_judged_do_not_count():
    rows = [row("x diagnostic", V.FAILS, kind="diagnostic"), row("y", V.NOT_COMPARABLE), row("z", V.FAILS),
            row("w", V.HOLDS, kind="companion")]
    a = A.answer(rows, C1)
    assert a.verdict == V.FAILS and a.n_rows == 2
    assert A.answer([row("y", V.NOT_COMPARABLE)], C1).verdict == V.NOT_COMPARABLE
    assert A.answer([], C1).verdict == V.UNTESTED


def test_notebook_04s_judged_rows_reach_claim_4_and_its_headline_is_a_measured_gain():
    c4 = next(c for c in A.CLAIMS if c.key == "4")
    rows = [row("Pruning raises A_j*/A_maj", V.FAILS, nb="04_pruning_gains", id="gain_main", measured=0.004),
            row("The mask removes minority-aligned neurons", V.FAILS, nb="04_pruning_gains", id="mask_share"),
            row("claim 4 on the premise map: ...", V.NOT_COMPARABLE, nb="10_premise_map", id="claim4_map")]
    a = A.answer(rows, c4)
    assert a.verdict == V.FAILS and a.headline["id"] == "gain_main" and a.headline["measured"] == 0.004
    page = A.render([a])
    assert "0.004 [0.5, 1.5]" in page and "pruned − control" in page


def test_appendix_a2_is_judged_on_its_own_and_says_the_paper_does_not_state_its_settings():
    ca2 = next(c for c in A.CLAIMS if c.key == "A.2")
    rows = [row("fig 2", V.HOLDS, nb="05_appendix_figures", id="fig2_trend"),
            premise("lambda_range", V.FAILS, nb="05_appendix_figures")]
    a = A.answer(rows, ca2)
    assert a.verdict == V.HOLDS and "does not state" in a.why


def test_the_headline_count_equals_the_table_total_and_premise_rows_are_counted_apart():
    rows = [dict(row("a", V.HOLDS), notebook=NB), dict(row("b", V.FAILS), notebook=NB),
            dict(row("c", V.INCONCLUSIVE, kind="companion"), notebook=NB),
            dict(premise("lambda_range", V.FAILS), notebook=NB)]
    board = Board("x", rows=rows, status={NB: "ok"})
    page = render(board)
    headline = int(re.search(r'class="sb-total">(\d+)<', page).group(1))
    total = int(re.search(r'class="sb-table-total">(\d+)<', page).group(1))
    assert headline == total == 3
    assert "and 1 premise rows (0 hold)" in page
    assert page.index("The answer, claim by claim") < page.index("Verdicts per claim notebook")


def test_a_notebook_table_says_which_premises_its_run_meets_and_points_to_the_map():
    from imbalanced_cl.book.pages.tables import premises_note
    rows = [row("a", V.HOLDS), premise("step_window", V.HOLDS, claim="steps inside Theorem 3.1's window"),
            premise("lambda_range", V.FAILS, claim="weight decay λ inside the proof's range"),
            premise("noise_scale", V.FAILS, claim="noise σ_ξ² on Assumption 3.3's scale")]   # reported only
    note = premises_note(rows)
    assert "(1 of 2 met)" in note and "met: steps inside Theorem 3.1" in note
    assert "not met: weight decay λ inside the proof&#x27;s range (0.001 vs p: does not hold)" in note
    assert "10_premise_map.html" in note and "σ" not in note
    assert premises_note([row("a", V.HOLDS)]) == ""
    assert "premise map" not in premises_note(rows[:2])                    # all met: nothing to point to


def test_a_premise_checked_per_case_is_one_entry_of_the_note_met_where_every_case_is():
    """Scoped premise rows (one per d, ρ or cell) count as their premise: met in every case, or "met in k of n"."""
    import html
    from imbalanced_cl.book.pages.tables import premises_note
    rows = [row("a", V.HOLDS), premise("step_window", V.HOLDS, claim="steps inside the window"),
            *(premise(P.scoped("lambda_range", f"cell{i}"), v) for i, v in enumerate((V.HOLDS, V.FAILS, V.HOLDS))),
            *(premise(P.scoped("sparse_data", f"d{i}"), V.HOLDS) for i in range(4))]
    note = premises_note(rows)
    assert "(2 of 3 met)" in note
    assert html.escape(f"not met: {P.name('lambda_range')} (met in 2 of 3 cases checked)") in note
    assert f"met: steps inside the window; {P.name('sparse_data')}." in note and "cell1" not in note


def test_past_twelve_premise_rows_the_table_folds_them_above_its_claim_rows():
    from imbalanced_cl.book.pages.tables import FOLD_PREMISES, folded_html, render_html
    few = [premise(P.scoped("lambda_range", f"c{i}"), V.HOLDS) for i in range(FOLD_PREMISES)] + [row("a", V.HOLDS)]
    assert folded_html(few) == render_html(few)                               # 12 premise rows: shown in order
    many = few + [premise(P.scoped("lambda_range", "last"), V.FAILS)]
    html = folded_html(many)
    assert html.startswith('<details class="vt-premise-rows"><summary>13 premise rows, one per premise and case '
                           '(12 hold)')
    folded, shown = html.split("</details>")
    assert folded.count("<tr>") == 13 + 1 and shown.count("<tr>") == 1 + 1 and ">a<" in shown   # rows + header
