"""The band on the row (issue 49, item 2): every row shows the band it is judged against, and no row reads "holds"
with its measured value outside the band it displays."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from imbalanced_cl import verdict as V
from imbalanced_cl.book import results_table, show, tables
from imbalanced_cl.verdict import HOLDS, UNTESTED

INF = math.inf


def _inside(r, x) -> bool:
    return r.band_lo - 1e-12 <= x <= r.band_hi + 1e-12


JUDGES = {
    "target": lambda lo, hi: V.judge_target(lo, hi, 1.0, 0.1),
    "target_relative": lambda lo, hi: V.judge_target(lo, hi, 10.0, 0.1, relative=True),
    "positive": lambda lo, hi: V.judge_positive(lo, hi, "gain", 0.05),
    "negative": lambda lo, hi: V.judge_positive(lo, hi, "gain", 0.05, direction=-1),
    "bound_at_least": lambda lo, hi: V.judge_bound(lo, hi, 0.9, True, 0.1),
    "bound_at_most": lambda lo, hi: V.judge_bound(lo, hi, 0.5, False, 0.1),
    "at_least": lambda lo, hi: V.judge_at_least(lo, hi, 2.0, "count"),
    "factor": lambda lo, hi: V.judge_factor(lo, hi, 10.0, 1.5),
    "trend_up": lambda lo, hi: V.judge_trend(lo, hi, 1, 0.3),
    "trend_down": lambda lo, hi: V.judge_trend(lo, hi, -1, 0.3),
    "share": lambda lo, hi: V.judge_share(lo, hi, 0.9),
}
GRID = np.round(np.linspace(-3.0, 16.0, 39), 3)


@pytest.mark.parametrize("name", sorted(JUDGES))
def test_a_rule_holds_exactly_when_the_interval_lies_in_the_band_it_carries(name):
    """Every judge_* states the band it judged against (verdict.Rule): over a grid of intervals, "holds" if and only
    if [lo, hi] lies inside that band, so the band a row shows is the one that decided it."""
    for lo, hi in itertools.combinations_with_replacement(GRID, 2):
        verdict, rule = JUDGES[name](lo, hi)
        blo, bhi = rule.band
        assert (verdict == HOLDS) == (blo <= lo and hi <= bhi and not (lo <= 0 <= hi and (blo > 0 or bhi < 0))), \
            (name, lo, hi, verdict, rule.band)


def test_the_band_travels_from_the_rule_to_the_row_and_reads_in_words():
    v, rule = V.judge_bound(0.812, 0.836, 0.9, True, 0.1)
    r = V.Verdict("|M_j*| exponent", "Lemma B.2(c)", "exponent ≥ 0.90", 0.824, 0.812, 0.836, v, "fit; " + rule,
                  id="x")
    assert v == HOLDS and (r.band_lo, r.band_hi) == pytest.approx((0.8, INF)) and type(r.rule) is str
    assert V.predicted_with_band(r) == "exponent ≥ 0.90 (holds at ≥ 0.8)"       # the example, no contradiction
    assert V.band_text(V.Verdict("t", "s", "1", 1.0, 0.9, 1.1, *V.judge_target(0.9, 1.1, 1.0, 0.15), id="t")) \
        == "holds within [0.85, 1.15]"
    assert V.band_text(V.Verdict("b", "s", "≤", 0.1, 0.0, 0.2, *V.judge_bound(0.0, 0.2, 0.25, False, 0.0),
                                 id="b")) == "holds at ≤ 0.25"
    nb = V.Verdict("n", "s", "p", math.nan, math.nan, math.nan, UNTESTED, "no data", id="n")
    assert V.band_text(nb) == "" and V.predicted_with_band(nb) == "p"


def _all_rows():
    """Every row the hand-made builders of the wiring tests give (notebooks 01-04, with their premise rows), plus
    notebook 10's arm and prediction rows."""
    from tests.test_verdict_wiring import BUILDERS, _table
    rows = [r for nb in BUILDERS for r in _table(nb).values()]
    from imbalanced_cl.claims import premise_map as PM
    from tests.test_premise_map import ALL, _arm, _cell, _result
    cell = _cell()
    res = [_result(cell, ALL, arms={a: _arm(a, [0.10, 0.12, 0.11]) for a in ("alg1", "oracle_lucky")})]
    return rows + PM.verdict_rows(res, [], cell.cfg)


def test_no_row_reads_holds_with_its_value_outside_the_band_it_shows():
    rows = _all_rows()
    held = [r for r in rows if HOLDS in (r.verdict, r.would_be) and not math.isnan(r.band_lo)]
    assert len(held) > 20
    for r in held:
        assert _inside(r, r.measured) and _inside(r, r.lo) and _inside(r, r.hi), (r.id, r.measured, r.band_lo,
                                                                                   r.band_hi)


def test_every_judged_row_shows_a_band():
    rows = _all_rows()
    missing = [r.id for r in rows if r.verdict != UNTESTED and not V.band_text(r)]
    assert not missing


def test_the_band_is_shown_in_the_notebook_table_show_and_the_csv(tmp_path):
    v, rule = V.judge_bound(0.812, 0.836, 0.9, True, 0.1)
    row = V.Verdict("|M_j*| exponent", "Lemma B.2(c)", "exponent ≥ 0.90", 0.824, 0.812, 0.836, v, rule, id="x",
                    band_lo=0.8)
    open_ = V.Verdict("gain", "Thm", "> 0.02", 0.1, 0.05, 0.15, *V.judge_positive(0.05, 0.15, "gain", 0.02), id="g")
    table = tables.VerdictTable("02_lucky_neurons", [row, open_])
    js = table.to_json()
    assert js[0]["band"] == "holds at ≥ 0.8" and js[0]["band_hi"] is None        # valid JSON: no Infinity
    assert "exponent ≥ 0.90 (holds at ≥ 0.8)" in table._repr_html_()
    assert "(holds at ≥ 0.8)" in repr(table)
    assert V.predicted_with_band(js[1]) == "> 0.02 (holds at ≥ 0.02)"
    from tests.test_show import _executed
    text = show.render(_executed(tmp_path, js), width=160)
    assert "> 0.02 (holds at ≥ 0.02)" in text and "(holds at ≥" in text       # the first wraps in its column
    assert "band" in results_table.FIELDS
    csv = results_table.to_csv([{k: {**js[0], "notebook": "02"}.get(k, "") for k in results_table.FIELDS}])
    assert "holds at ≥ 0.8" in csv
