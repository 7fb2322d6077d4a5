"""The verdict rules (book/methods.md): one banded rule, checked branch by branch on hand-made intervals."""
from __future__ import annotations

import math

import pytest

from imbalanced_cl import rules
from imbalanced_cl import verdict as V
from imbalanced_cl import premises as P
from imbalanced_cl.verdict import FAILS, HOLDS, INCONCLUSIVE, NOT_COMPARABLE, PARTLY, UNTESTED

NAN = math.nan


@pytest.mark.parametrize("lo,hi,want", [
    (0.95, 1.05, HOLDS),          # inside the band 1 ± 0.1
    (0.90, 1.10, HOLDS),          # exactly the band
    (1.10, 1.19, INCONCLUSIVE),   # touches the band only at its edge: not "holds" (the old rule said holds)
    (1.05, 1.30, INCONCLUSIVE),   # straddles the upper edge
    (0.40, 0.60, PARTLY),         # wholly outside, right sign, excludes 0
    (1.50, 1.70, PARTLY),         # too large, right sign
    (-0.1, 0.3, FAILS),           # wholly outside and reaches 0
    (-0.6, -0.4, FAILS),          # wrong sign
    (-0.5, 2.0, INCONCLUSIVE),    # contains the whole band and 0
    (NAN, 1.0, UNTESTED),
])
def test_target_claim(lo, hi, want):
    assert rules.judge_target(lo, hi, 1.0, 0.1)[0] == want


def test_target_zero_has_no_partly():
    assert rules.judge_target(-0.1, 0.1, 0.0, 0.25)[0] == HOLDS
    assert rules.judge_target(0.4, 0.6, 0.0, 0.25)[0] == FAILS
    assert rules.judge_target(0.2, 0.6, 0.0, 0.25)[0] == INCONCLUSIVE


def test_relative_band_scales_with_the_target():
    assert rules.judge_target(9.5, 10.5, 10.0, 0.1, relative=True)[0] == HOLDS
    assert rules.judge_target(11.5, 12.0, 10.0, 0.1, relative=True)[0] == PARTLY


@pytest.mark.parametrize("lo,hi,want", [
    (0.15, 0.30, HOLDS),          # wholly above the smallest effect of interest 0.1
    (0.02, 0.05, PARTLY),         # a real effect, smaller than the SESOI
    (-0.03, 0.04, FAILS),         # a tight interval around zero: below the SESOI, reaches 0
    (-3.3e-5, 7.6e-5, FAILS),     # notebook 04's minority excess rate: a null, not partial support
    (-0.5, -0.2, FAILS),          # the wrong sign
    (-0.05, 0.3, INCONCLUSIVE),   # straddles zero and the SESOI: never holds or partly
    (0.05, 0.3, INCONCLUSIVE),    # excludes zero, straddles the SESOI
])
def test_directional_claim(lo, hi, want):
    assert rules.judge_positive(lo, hi, "effect", sesoi=0.1)[0] == want


def test_directional_claim_downward():
    assert rules.judge_positive(-0.3, -0.15, "effect", 0.1, direction=-1)[0] == HOLDS
    assert rules.judge_positive(-0.05, -0.02, "effect", 0.1, direction=-1)[0] == PARTLY
    assert rules.judge_positive(0.02, 0.05, "effect", 0.1, direction=-1)[0] == FAILS


def test_interval_containing_zero_is_never_support():
    for lo, hi in ((-0.1, 0.5), (-1.0, 1.0), (-0.01, 0.0), (0.0, 3.0)):
        for judged in (rules.judge_positive(lo, hi, sesoi=0.0), rules.judge_positive(lo, hi, sesoi=0.2),
                       rules.judge_target(lo, hi, 1.0, 0.5), rules.judge_factor(lo, hi, 1.0, 4.0)):
            assert judged[0] not in (HOLDS, PARTLY), (lo, hi, judged)


def test_bound_claims():
    assert rules.judge_bound(0.95, 1.05, 0.9, True, 0.1)[0] == HOLDS
    assert rules.judge_bound(-0.5, -0.3, 0.9, True, 0.1)[0] == FAILS
    assert rules.judge_bound(0.5, 1.0, 0.9, True, 0.1)[0] == INCONCLUSIVE
    assert rules.judge_bound(1.0, 1.1, 1.1, False, 0.1)[0] == HOLDS
    assert rules.judge_bound(2.0, 2.2, 1.1, False, 0.1)[0] == FAILS
    assert rules.judge_at_least(3.0, 4.0, 2.5, "n")[0] == HOLDS
    assert rules.judge_at_least(2.0, 4.0, 2.5, "n")[0] == INCONCLUSIVE
    assert rules.judge_at_least(1.0, 2.0, 2.5, "n")[0] == FAILS


def test_factor_claims():
    assert rules.judge_factor(8.0, 30.0, 20.0, 3.0)[0] == HOLDS
    assert rules.judge_factor(0.5, 1.0, 20.0, 3.0)[0] == PARTLY      # positive but 20x too small
    assert rules.judge_factor(-1.0, 30.0, 20.0, 3.0)[0] == INCONCLUSIVE
    assert rules.judge_factor(-3.0, -1.0, 20.0, 3.0)[0] == FAILS


def test_counts():
    assert rules.judge_count(2, 2, 0.9)[0] == INCONCLUSIVE     # Wilson interval [0.34, 1] straddles 0.9
    assert rules.judge_count(60, 60, 0.9)[0] == HOLDS          # [0.940, 1]
    assert rules.judge_count(50, 60, 0.9)[0] == INCONCLUSIVE   # [0.72, 0.91]: a share of 0.83, not yet below 0.9
    assert rules.judge_count(40, 60, 0.9)[0] == FAILS          # [0.54, 0.77]: no "partly" for a share
    assert rules.judge_count(0, 60, 0.9)[0] == FAILS
    assert rules.judge_count(0, 0, 0.9)[0] == UNTESTED
    assert "n = 60" in rules.judge_count(60, 60, 0.9)[1]


def test_shares():
    assert rules.judge_share(0.92, 1.0, 0.9)[0] == HOLDS
    assert rules.judge_share(0.95, 1.04, 0.9)[0] == HOLDS      # a t-interval reaching past 1 still lies in [0.9, 1]
    assert rules.judge_share(0.85, 0.95, 0.9)[0] == INCONCLUSIVE
    assert rules.judge_share(0.5, 0.7, 0.9)[0] == FAILS
    assert rules.judge_share(0.9, 0.9, 0.9)[0] == HOLDS        # a closed-form value on the edge counts
    assert rules.judge_share(float("nan"), 1.0, 0.9)[0] == UNTESTED


def test_failed_premise_makes_a_row_not_comparable_and_names_it():
    lucky = V.premise_check("lucky_exist", "a minority lucky neuron", "Def. B.1", 0, 4, "replicates")
    stage = V.premise_check("stage_reached", "Stage 2 reached", "Lemma 3.2", 4, 4, "replicates")
    r = V.row("pruning rescues minority features", "Thm 3.2", "> 0", 0.0, -0.01, 0.01,
              rules.judge_positive(-0.01, 0.01, sesoi=0.05), id="rescue", depends=("stage_reached", "lucky_exist"))
    ok = V.row("x", "s", "p", 0.2, 0.15, 0.3, rules.judge_positive(0.15, 0.3, sesoi=0.1), id="x",
               depends=("stage_reached",))
    _, _, r, ok = V.gate([stage, lucky, r, ok], "nb")
    assert r.verdict == NOT_COMPARABLE and "a minority lucky neuron" not in r.premise.split("met:")[-1]
    assert r.premise.startswith("not met: " + P.name("lucky_exist")) and r.unmet == ("lucky_exist",)
    assert r.would_be == FAILS and r.depends == ("stage_reached", "lucky_exist")
    assert ok.verdict == HOLDS and ok.premise.startswith("met") and ok.would_be == ""


def _claim(id, depends=(), lo=0.2, hi=0.3, kind="paper"):
    return V.row(f"claim {id}", "Thm", "> 0.1", (lo + hi) / 2, lo, hi, rules.judge_positive(lo, hi, sesoi=0.1), id=id,
                 depends=depends, kind=kind)


def _premise(id, verdict):
    return V.Verdict(
        claim=f"premise {id}",
        source="Lemma",
        predicted="in range",
        measured=0.5,
        lo=0.5,
        hi=0.5,
        verdict=verdict,
        rule="",
        kind="premise",
        id=id,
    )


def test_a_premise_the_row_does_not_depend_on_leaves_its_verdict():
    rows = V.gate([_claim("census", depends=("m_poly",)), _claim("growth", depends=("k_poly", "lambda_range")),
                   _premise("k_poly", FAILS), _premise("m_poly", HOLDS), _premise("lambda_range", HOLDS)], "nb")
    census, growth = rows[0], rows[1]
    assert census.verdict == HOLDS and census.would_be == ""           # Lemma B.1 failed, but the census is no gradient
    assert growth.verdict == NOT_COMPARABLE and growth.would_be == HOLDS   # the measured outcome is kept beside it
    assert (growth.measured, growth.lo, growth.hi) == (0.25, 0.2, 0.3)
    assert "not met" in growth.premise and "K = poly(d1)" in growth.premise
    assert rows[2].verdict == FAILS                                     # premise rows come back unchanged


def test_an_inconclusive_premise_is_not_met_and_an_untested_one_does_not_gate():
    rows = V.gate([_claim("a", depends=("k_poly",)), _claim("b", depends=("no_memorisation",)),
                   _premise("k_poly", INCONCLUSIVE), _premise("no_memorisation", UNTESTED)], "nb")
    assert rows[0].verdict == NOT_COMPARABLE and rows[1].verdict == HOLDS


def test_a_row_without_an_id_or_with_an_unknown_premise_fails_with_one_line():
    with pytest.raises(V.VerdictError, match=r"^nb: row 'claim ' has no id$"):
        V.gate([_claim("")], "nb")
    with pytest.raises(V.VerdictError, match="nb: row 'claim x' depends on 'no_such', which is no premise"):
        V.gate([_claim("x", depends=("no_such",))], "nb")
    with pytest.raises(V.VerdictError, match="a prediction: predictions never gate"):
        V.gate([_claim("x", depends=("mask_share",))], "nb")
    with pytest.raises(V.VerdictError, match="used twice"):
        V.gate([_claim("x"), _claim("x")], "nb")
    with pytest.raises(V.VerdictError, match="premise row needs a premise's id"):
        V.gate([_premise("mask_share", HOLDS)], "nb")
    with pytest.raises(V.VerdictError, match="not snake_case"):
        V.gate([_claim("Bad-Id")], "nb")


def test_a_point_estimate_outside_its_range_is_an_error():
    with pytest.raises(ValueError, match="outside the range"):
        V.Verdict(
            claim="cos",
            source="s",
            predicted="p",
            measured=1.2,
            lo=1.1,
            hi=1.3,
            verdict=HOLDS,
            quantity="cosine",
            id="c",
        )
    r = V.Verdict(
        claim="cos",
        source="s",
        predicted="p",
        measured=0.767,
        lo=0.34,
        hi=1.194,
        verdict=HOLDS,
        quantity="cosine_abs",
        id="c",
    )
    assert not r.interval_in_range()


def test_replicates_needed_from_the_observed_spread():
    # half-width 0.2 against a band of 0.1 with 4 replicates: 4 * (0.2/0.1)^2 = 16
    r = V.row("x", "s", "1", 1.1, 0.9, 1.3, rules.judge_target(0.9, 1.3, 1.0, 0.1), n=4, band=0.1, id="x")
    assert r.verdict == INCONCLUSIVE and r.n_needed == 16
    assert math.isnan(V.row("x", "s", "1", 1.0, 0.95, 1.05, rules.judge_target(0.95, 1.05, 1.0, 0.1), n=4,
                            band=0.1).n_needed)


def test_count_row_shows_the_share_and_its_wilson_interval():
    r = V.count_row("every neuron", "Thm", "fraction 1", 9.0, 10, 0.9, "; 10 neurons")
    assert (r.measured, r.lo, r.hi) == (0.9, *V.binom_ci(9, 10))
    assert r.verdict == INCONCLUSIVE and r.rule.endswith("; 10 neurons")     # [0.60, 0.98] straddles 0.9
    assert V.count_row("every neuron", "Thm", "fraction 1", 0.0, 0, 0.9).verdict == UNTESTED


def test_each_verdict_word_has_one_meaning_everywhere():
    """MEANINGS is the one definition: the intro's legend prints it word for word, the methods page and the
    scoreboard print it from the code, and every claim-level combination uses verdict.combine."""
    import json
    from pathlib import Path

    from imbalanced_cl.book.pages import answers
    from imbalanced_cl.claims import premise_map
    root = Path(__file__).resolve().parents[1]
    intro = (root / "book" / "intro.md").read_text()
    assert set(V.MEANINGS) == set(V.VERDICTS)
    assert "{glue} verdict_legend" in intro and "| **partly** |" not in intro   # pasted from the code, not retyped
    from imbalanced_cl.book.pages.summary import VerdictLegend
    legend = VerdictLegend()._repr_markdown_()
    for v in V.VERDICTS:
        assert f"| **{v}** | {V.MEANINGS[v]} |" in legend, v
    for page, call in (("methods.ipynb", "methods.legend()"), ("scoreboard.ipynb", "verdict.legend_markdown()")):
        cells = json.loads((root / "book" / page).read_text())["cells"]
        assert any(call in "".join(c["source"]) for c in cells if c["cell_type"] == "code"), page
        md = "".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
        assert "| **partly** |" not in md, page                       # no second, hand-written definition
    assert answers.combine is V.combine and premise_map.combine is V.combine


def test_verdict_tables_glue_exactly_as_myst_nb_does_without_needing_it(monkeypatch):
    """The glued output is myst-nb's own (its glue is the oracle), so the book's {glue} and the records read it, and a
    kernel without myst-nb (a GPU machine) writes it too."""
    import IPython.display
    from myst_nb.ext import glue as mg

    from imbalanced_cl.book.pages import tables as T
    seen = []
    monkeypatch.setattr(IPython.display, "display", lambda *a, **k: seen.append((a, k)))
    monkeypatch.setattr(mg, "ipy_display", lambda *a, **k: seen.append((a, k)))
    table = T.VerdictTable(
        "01_x",
        [V.Verdict(claim="c", source="s", predicted="1", measured=1.0, lo=0.5, hi=1.5, verdict=V.HOLDS, id="c_row")],
    )
    T.glue_shown("01_x_verdicts", table)
    mg.glue("01_x_verdicts", table, display=True)
    ours, theirs = seen
    assert ours == theirs and theirs[1]["metadata"]["scrapbook"]["name"] == "01_x_verdicts"
    assert "application/json" in theirs[0][0]


@pytest.mark.parametrize("value,band,verdict", [
    (0.0, (0.0, 0.5), HOLDS), (0.5, (0.0, 0.5), HOLDS),              # both ends of a closed band hold
    (0.5000001, (0.0, 0.5), FAILS), (-1e-9, (0.0, 0.5), FAILS),      # just outside, on either side
    (1e9, (1.0, math.inf), HOLDS), (-1e9, (-math.inf, 0.0), HOLDS),  # open sides
    (math.nan, (-10.0, 10.0), FAILS),                                # nothing to compare: not met
    (math.inf, (0.0, 0.5), FAILS),                                   # a series that never settled
])
def test_premise_value_holds_exactly_inside_the_band_it_shows(value, band, verdict):
    r = V.premise_value("lambda_range", "steps in the window", "Thm 3.1", "[a, b]", value, "holds inside",
                        band=band)
    assert (r.verdict, r.kind, r.id) == (verdict, V.PREMISE_KIND, "lambda_range")
    assert (r.band_lo, r.band_hi) == band
    assert [r.lo, r.hi] == [r.measured] * 2 if not math.isnan(value) else math.isnan(r.lo) and math.isnan(r.hi)
    assert V.band_text(r).startswith("holds")      # the row shows the band it was judged against


def test_premise_value_takes_a_verdict_only_where_its_band_is_words():
    r = V.premise_value("lambda_range", "x", "Thm 3.1", "≥ 2", 1.0, "holds at ≥ 2 per cell", met=True,
                        band_words="holds at ≥ 2 per cell")
    assert r.verdict == HOLDS and V.band_text(r) == "holds at ≥ 2 per cell"
    assert V.premise_value("lambda_range", "x", "s", "p", 1.0, "r", met=False, band_words="w").verdict == FAILS
    for kw in ({}, {"band": (0.0, 1.0), "met": True}):
        with pytest.raises(ValueError, match="give its band or whether it is met"):
            V.premise_value("lambda_range", "x", "s", "p", 1.0, "r", **kw)
