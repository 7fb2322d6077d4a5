"""The claim-level answers (book/pages/answers.py) on hand-made rows: every branch of the rule, and counts that add
up."""
import re
from dataclasses import replace

from imbalanced_cl import premises as P
from imbalanced_cl import verdict as V
from imbalanced_cl.book.pages import answers as A
from imbalanced_cl.book.pages.render import badge, esc
from imbalanced_cl.book.pages.scoreboard import Board, render

C1 = A.CLAIMS[0]
NB = C1.notebooks[0]


def row(claim, verdict, kind="paper", nb=NB, measured=1.0, id=None, depends=(), would_be="", unmet=()):
    """A glued row as verdict.gate leaves it: its premises checked (a premise row exists for each), `unmet` failed."""
    return V.Verdict(notebook=nb, claim=claim, source="s", predicted="p", measured=measured, lo=0.5, hi=1.5,
                     verdict=verdict, rule="band [0.8, 1.2]; more", kind=kind, id=id or claim.replace(" ", "_").lower(),
                     depends=depends, would_be=would_be, checked=depends, unmet=unmet)


def premise(id, verdict, nb=NB, claim=None, sensitivity=""):
    r = row(f"regime: {claim or P.condition(id).statement}", verdict, kind="premise", nb=nb, measured=0.001, id=id)
    return replace(r, sensitivity=sensitivity)


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
    assert a.headline.id == "rate_ratio" and "met: " in A.ours(a) and "not met" not in A.ours(a)


def test_rows_gated_by_a_failed_premise_make_the_claim_not_comparable_and_show_what_was_measured():
    rows = [row("rate ratio", V.NOT_COMPARABLE, id="rate_ratio", depends=("k_poly",), would_be=V.FAILS,
                unmet=("k_poly",)),
            row("other", V.NOT_COMPARABLE, depends=("k_poly",), would_be=V.HOLDS, unmet=("k_poly",)),
            premise("k_poly", V.FAILS, sensitivity="at p = 0.5 this row holds; the bound needs K ≈ 40,000"),
            premise("noise_scale", V.FAILS)]                 # reported only, and no row depends on it
    a = A.answer(rows, C1)
    assert a.verdict == V.NOT_COMPARABLE and a.measured == V.PARTLY
    assert [r.id for r in a.failed_premises] == ["k_poly"] and "0.001" in a.why
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
    assert a.verdict == V.FAILS and a.headline.id == "gain_main" and a.headline.measured == 0.004
    from imbalanced_cl.book.pages import claim_summary as CS
    from imbalanced_cl.book.pages import summary as S
    page = S.answers_table([(CS.summarise(rows, c4, "default"), CS.paper_summary(c4, {}))])
    assert "0.004 [0.5, 1.5]" in page and "pruning raises A_j*/A_maj: <b>0.004 [0.5, 1.5]</b> (does not hold)" in page


def test_appendix_a2_is_judged_on_its_own_and_says_the_paper_does_not_state_its_settings():
    ca2 = next(c for c in A.CLAIMS if c.key == "A.2")
    rows = [row("fig 2", V.HOLDS, nb="05_appendix_figures", id="fig2_trend"),
            premise("lambda_range", V.FAILS, nb="05_appendix_figures")]
    a = A.answer(rows, ca2)
    assert a.verdict == V.HOLDS and "does not state" in a.why


def test_the_headline_count_equals_the_table_total_and_premise_rows_are_counted_apart():
    rows = [replace(row("a", V.HOLDS), notebook=NB), replace(row("b", V.FAILS), notebook=NB),
            replace(row("c", V.INCONCLUSIVE, kind="companion"), notebook=NB),
            replace(premise("lambda_range", V.FAILS), notebook=NB)]
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
    assert folded.count("<tr") == 13 + 1 and shown.count("<tr") == 1 + 1 and ">a<" in shown   # rows + header
    assert folded.count('<tr data-row="lambda_range__c') == 12 and '<tr data-row="a">' in shown   # ids, for the ★


# --- Each piece of the rule on hand-made rows, with the exact words a reader sees (written from the rule, not from
# --- a run): the mutation pass of book/pages/answers.py showed these parts were reached by no assertion.

C2 = next(c for c in A.CLAIMS if c.key == "2")     # headline ids: an exact one, then a prefix ("lucky_exponent_")
C4 = next(c for c in A.CLAIMS if c.key == "4")     # its plain_row (the premise map's claim4_map) carries the answer


def test_a_row_stored_without_a_kind_counts_as_the_papers():
    legacy = V.from_json({k: v for k, v in V.to_json(row("old", V.HOLDS)).items() if k != "kind"})   # glued before
    assert legacy.kind == "paper"                                                                    # kinds existed
    assert A.evidence([legacy, row("diag", V.HOLDS, kind="diagnostic")], C1) == [legacy]


def test_the_headline_is_found_by_exact_id_then_by_prefix_a_judged_one_first():
    assert A.headline([], C2) is None
    first = row("first", V.FAILS, nb="02_lucky_neurons", id="something_else")
    assert A.headline([first], C2) is first                              # no id matches: the first row
    near = row("near", V.HOLDS, nb="02_lucky_neurons", id="lucky_exponent_0p8_extra")   # no exact match for _0p8
    gated = row("g", V.NOT_COMPARABLE, nb="02_lucky_neurons", id="lucky_exponent_0p5")
    judged = row("j", V.FAILS, nb="02_lucky_neurons", id="lucky_exponent_0p3")
    assert A.headline([first, gated, judged], C2) is judged              # prefix hits: the judged one first
    assert A.headline([first, gated], C2) is gated                       # none judged: the first hit
    assert A.headline([first, near, judged], C2) is near                 # "lucky_exponent_" is a prefix of both
    exact = row("x", V.NOT_COMPARABLE, nb="02_lucky_neurons", id="lucky_exponent_0p8")
    assert A.headline([judged, exact], C2) is exact                      # the exact id wins over a judged prefix hit
    no_id = replace(first, id="")
    assert A.headline([no_id, judged], C2) is judged                     # a row without an id matches nothing
    assert A.headline([row("r", V.HOLDS, id="rate_ratio_2")], C1).id == "rate_ratio_2"   # first row, not a match
    assert A.headline([row("a", V.FAILS, id="other"), row("r", V.HOLDS, id="rate_ratio_2")], C1).id == "other"


def test_premise_status_reads_met_failed_and_unchecked_off_the_rows():
    rows = [row("a", V.HOLDS, depends=("lambda_range", "k_poly"), unmet=("k_poly",)),
            replace(row("b", V.HOLDS, depends=("m_poly",)), checked=()),        # m_poly not checked at this run
            premise("lambda_range", V.HOLDS), premise("k_poly", V.FAILS),
            premise("m_poly", V.HOLDS, nb="99_elsewhere")]                       # another notebook's row: not used
    ev = A.evidence(rows, C1)
    met, failed, unchecked = A.premise_status(rows, ev, C1)
    assert [r.id for r in met] == ["lambda_range"] and [r.id for r in failed] == ["k_poly"]
    assert unchecked == ["m_poly"]
    assert A.failed_premises(rows, C1) == failed
    lone = [row("a", V.NOT_COMPARABLE, depends=("tau_polylog",), unmet=("tau_polylog",))]   # no premise row: its id
    assert A.premise_status(lone, lone, C1) == ([], ["tau_polylog"], [])


def test_each_branch_of_the_answer_says_why_in_these_words():
    judged = [row("r1", V.HOLDS, id="rate_ratio", depends=("k_poly",)), row("r2", V.FAILS, depends=("k_poly",)),
              row("r3", V.NOT_COMPARABLE, depends=("lambda_range",), would_be=V.HOLDS, unmet=("lambda_range",)),
              premise("k_poly", V.HOLDS), premise("lambda_range", V.FAILS)]
    a = A.answer(judged, C1)
    assert (a.verdict, a.measured, a.n_rows) == (V.PARTLY, V.PARTLY, 3)
    assert a.why == ("3 rows: 1 holds, 1 does not hold, 1 not comparable; the 2 judged rows combine to partly; "
                     "1 row not comparable, measured there: holds; premises not met: λ in the proof's range "
                     "(0.001 vs p).")
    gated = [row("r", V.NOT_COMPARABLE, id="rate_ratio", depends=("k_poly",), would_be=V.FAILS, unmet=("k_poly",)),
             row("u", V.UNTESTED, measured=float("nan"))]
    a = A.answer(gated, C1)
    assert (a.verdict, a.measured) == (V.NOT_COMPARABLE, V.FAILS)
    assert a.why == ("every row depends on a premise that was not met (2 rows: 1 not comparable, 1 not tested); "
                     "premises not met: Lemma B.1's gradient bound (K = poly(d1)). Measured there: does not hold.")
    a = A.answer([row("u", V.UNTESTED, measured=float("nan"))], C1)
    assert (a.verdict, a.measured) == (V.UNTESTED, "—")
    assert a.why == "no row has a finite measurement (1 row: 1 not tested)."
    none = A.answer([], C1)
    assert (none.verdict, none.measured, none.why, none.headline, none.failed_premises, none.n_rows) == \
        (V.UNTESTED, "—", "no notebook recorded a row for this claim", None, [], 0)
    ca2 = next(c for c in A.CLAIMS if c.key == "A.2")
    assert A.answer([], ca2).why == "no notebook recorded a row for this claim " + ca2.note


def test_a_gated_row_without_a_measured_verdict_adds_nothing_to_what_was_measured_there():
    rows = [row("r", V.HOLDS, id="rate_ratio"), row("g", V.NOT_COMPARABLE, unmet=("k_poly",), depends=("k_poly",))]
    assert A.answer(rows, C1).why.endswith("1 row not comparable, measured there: not tested; premises not met: "
                                           "Lemma B.1's gradient bound (K = poly(d1)).")


def test_what_the_claim_would_read_were_a_premise_met_and_when_its_rows_miss_others_too():
    k = "k_poly"
    alone = row("a", V.NOT_COMPARABLE, depends=(k,), would_be=V.HOLDS, unmet=(k,))
    both = row("b", V.NOT_COMPARABLE, depends=(k, "lambda_range"), would_be=V.FAILS, unmet=(k, "lambda_range"))
    judged = row("c", V.FAILS)
    assert A.if_met([alone, judged], k) == V.PARTLY              # freed: holds, with the judged does-not-hold
    assert A.if_met([alone, row("u", V.UNTESTED)], k) == V.HOLDS  # a row not tested adds nothing
    assert A.if_met([both, judged], k) == ""                     # its rows miss another premise too
    assert A.if_met([replace(alone, would_be=""), judged], k) == ""  # nothing measured to free
    assert A.if_met([replace(alone, verdict=V.FAILS)], k) == ""     # not held back at all
    sens = premise(k, V.FAILS, sensitivity="at p = 1/2 it holds")
    assert A._sensitivity(sens, [both]) == " (were it met, its rows would still miss other premises)"
    assert A._sensitivity(sens, [alone]) == " (were it met, the claim would read holds)"
    assert A._sensitivity(sens, [replace(both, would_be="")]) == ""         # nothing measured behind it
    assert A._sensitivity(sens, [replace(both, unmet=("lambda_range",))]) == ""  # its rows are not held back by it
    assert A._sensitivity(replace(sens, sensitivity=""), [alone]) == "" and A._sensitivity(k, [alone]) == ""
    assert A._unmet_text([], [alone]) == ""
    assert A._unmet_text([sens, "lambda_range"], [alone]) == (
        "; premises not met: Lemma B.1's gradient bound (K = poly(d1)) (0.001 vs p); at p = 1/2 it holds (were it "
        "met, the claim would read holds); λ in the proof's range")


def test_ours_names_each_premise_once_met_not_met_and_not_checked():
    a = A.Answer(C1, V.HOLDS, V.HOLDS, "", None,
                 failed_premises=[premise("k_poly", V.FAILS), premise(P.scoped("k_poly", "d10"), V.FAILS)],
                 n_rows=1, premises_met=[premise("lambda_range", V.HOLDS), "m_poly"],
                 premises_unchecked=["tau_polylog", P.scoped("eta_poly", "d20"), "not_a_premise"])
    assert A.ours(a) == ("not met: Lemma B.1's gradient bound (K = poly(d1)) (in 2 of 2 cases); met: λ in the "
                         "proof's range, m = d^C_m; not checked here: τ = polylog(d), η = 1/poly(d)")
    # a premise checked per case, met in one cell and not in another, unchecked in a third: named once, as not met
    g = "minority_growth"
    mixed = A.Answer(C1, V.HOLDS, V.HOLDS, "", None, failed_premises=[premise(P.scoped(g, "c1"), V.FAILS)],
                     n_rows=1, premises_met=[premise(P.scoped(g, "c2"), V.HOLDS)],
                     premises_unchecked=[P.scoped(g, "c3")])
    assert A.ours(mixed) == f"not met: {P.name(g)} (in 1 of 2 cases)"
    assert A.ours(A.Answer(C1, V.HOLDS, V.HOLDS, "", None, [], 1)) == "no premise gates its rows"


def test_a_premise_outside_the_list_is_named_by_its_claim_up_to_its_bracket_or_parenthesis():
    r = premise("x", V.FAILS, claim="window [3, 9] (steps) here")
    assert A.premise_short(replace(r, id="custom_premise")) == "window"
    assert A.premise_short(replace(r, id="custom", claim="regime: noise (σ) [a]")) == "noise"
    assert A.premise_short("k_poly") == P.name("k_poly")


def test_claim_4s_answer_and_the_fact_that_decides_it_are_read_off_the_maps_row():
    rule = ("answer (b): no cell meets every premise. Decided by: the gain at cell X. In plain words: pruning helps "
            "nowhere. In plain words: twice.")
    ev = [row("other", V.HOLDS, nb="10_premise_map", id="not_the_plain_row"),
          replace(row("map", V.NOT_COMPARABLE, nb="10_premise_map", id="claim4_map"), rule=rule)]
    assert A.decided_by(ev, C4) == ("b", "the gain at cell X")
    assert A.plain_words(ev, C4) == "pruning helps nowhere. In plain words: twice."
    twice = rule.replace("Decided by: the gain at cell X.", "Decided by: a. Decided by: b..")
    assert A.decided_by([replace(ev[1], rule=twice)], C4) == ("b", "a. Decided by: b")
    assert A.decided_by(ev[:1], C4) == ("", "") and A.plain_words(ev[:1], C4) == ""
    other = [replace(ev[0], rule=rule)]                   # claim 1 has no plain_row
    assert A.plain_words(other, C1) == "" and A.decided_by(other, C1) == ("", "")
    a = A.answer(ev, C4)
    assert (a.kind, a.decided, a.plain) == ("b", "the gain at cell X", "pruning helps nowhere. In plain words: twice.")


def test_the_answers_table_renders_one_row_per_claim_exactly_so():
    from imbalanced_cl.book.pages import claim_summary as CS
    from imbalanced_cl.book.pages import summary as S
    rows = [row("r", V.NOT_COMPARABLE, id="rate_ratio", would_be=V.HOLDS, depends=("k_poly",), unmet=("k_poly",)),
            premise("k_poly", V.FAILS)]
    b = CS.summarise(rows, C1, "default")
    html = S.answers_table([(b, CS.paper_summary(C1, {}))], base="nb/")
    head = ('<div class="sb-scroll" style="overflow-x:auto" tabindex="0" role="region" aria-label="Claim-level '
            'answers (scrolls sideways on narrow screens)"><table class="verdict-table sb-answers">'
            '<caption>The answer, claim by claim</caption><thead><tr><th scope="col">claim</th><th scope="col">the '
            'paper predicts</th><th scope="col">verdict (default)</th><th scope="col">paper scale</th>'
            '</tr></thead><tbody>')
    assert html.startswith(head) and html.endswith("</tbody></table></div>") and html.count('<tr data-claim="1">') == 1
    assert (f'<b>1</b> {esc(C1.title)} <small>({esc(C1.source)}; <a href="nb/01_stage1_growth.html#verdict-table">'
            '01</a>)</small>') in html
    assert f"<td>{S.verdict_cell(b)}<details" in html and "<td><small>not yet run at paper scale</small></td>" in html
    assert badge(V.NOT_COMPARABLE) in html and "(not met)" in html and "(holds on its own)" in html
    assert repr(S.AnswersTable([(b, b)])) == f"claim 1: not comparable ({b.sentence})"


def dict_free(a, **changes):
    """A copy of an Answer with some fields changed."""
    import dataclasses
    return dataclasses.replace(a, **changes)
