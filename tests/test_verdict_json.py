"""A verdict row as JSON and back (verdict.to_json, verdict.from_json): the one writer and the one reader of a stored
row, checked on hand-made rows, on legacy and partial rows, and on every row of the committed campaign records."""
from __future__ import annotations

import json
import math
from dataclasses import fields
from pathlib import Path

import pytest

from imbalanced_cl import rules
from imbalanced_cl import verdict as V
from imbalanced_cl.book.pages.tables import VerdictTable
from imbalanced_cl.verdict import FAILS, HOLDS, INCONCLUSIVE, UNTESTED

ROOT = Path(__file__).resolve().parents[1]
INF, NAN = math.inf, math.nan
MINIMAL = {"claim": "c", "source": "s", "predicted": "p", "measured": 0.5, "lo": 0.4, "hi": 0.6, "verdict": HOLDS}


def _same(a: V.Verdict, b: V.Verdict) -> list[str]:
    """The fields in which two rows differ (NaN equal to NaN, and a value equal only to one of its own type)."""
    def eq(x, y):
        nan = isinstance(x, float) and isinstance(y, float) and math.isnan(x) and math.isnan(y)
        return nan or (type(x) is type(y) and x == y)
    return [f.name for f in fields(V.Verdict) if not eq(getattr(a, f.name), getattr(b, f.name))]


def _rows() -> list[V.Verdict]:
    """Rows of every shape a notebook glues: a closed band, an open one on each side, a premise count, an inconclusive
    row with the replicates it needs, an untested row, a band in words, and a band open on both sides."""
    return [
        V.row("t", "s", "1", 1.01, 0.99, 1.03, rules.judge_target(0.99, 1.03, 1.0, 0.15), n=4, id="t",
              depends=("k_poly", "lambda_range")),
        V.row("g", "s", "> 0.02", 0.1, 0.05, 0.15, rules.judge_positive(0.05, 0.15, "gain", 0.02), id="g"),
        V.row("b", "s", "≤ 0.25", 0.1, 0.0, 0.2, rules.judge_bound(0.0, 0.2, 0.25, False, 0.0), id="b",
              quantity="fraction"),
        V.premise_check("k_poly", "gradient", "Lemma B.1", 2, 3, "d's"),
        V.row("i", "s", "1", 1.2, 0.9, 1.5, rules.judge_target(0.9, 1.5, 1.0, 0.15), n=3, band=0.15, id="i"),
        V.row("u", "s", "T1 exists", NAN, NAN, NAN, (UNTESTED, "no crossing"), id="u"),
        V.premise_value("lambda_range", "λ", "App. E.3", "by construction", 1.0, "r", met=True,
                        band_words="holds by construction"),
        V.Verdict(claim="a", source="s", predicted="p", measured=0.5, lo=0.4, hi=0.6, verdict=HOLDS, id="a",
                  band_lo=-INF, band_hi=INF, met_by_effect=("k_poly",), checked=("k_poly",), unmet=()),
    ]


def test_to_json_then_from_json_gives_the_row_back_field_for_field():
    rows = _rows()
    assert {r.verdict for r in rows} >= {HOLDS, FAILS, INCONCLUSIVE, UNTESTED}
    assert not math.isnan(rows[4].n_needed) and rows[0].depends == ("k_poly", "lambda_range")   # the cases are there
    for r in rows:
        d = V.to_json(r)
        json.dumps(d, allow_nan=False)                          # valid JSON: no NaN, no Infinity
        assert list(d) == sorted(d) and d["band"] == V.band_text(r)
        back = V.from_json(json.loads(json.dumps(d)))
        assert _same(back, r) == [], r.id
        assert V.to_json(back) == d
    assert V.band_text(rows[-1]) == "holds at any value" and V.to_json(rows[-1])["band_lo"] is None


def test_the_glue_is_to_json_of_each_row():
    rows = _rows()
    table = VerdictTable("01_stage1_growth", rows)
    assert table.to_json() == [V.to_json(r) for r in table.rows]
    assert [r.notebook for r in map(V.from_json, table.to_json())] == ["01_stage1_growth"] * len(rows)


def test_a_legacy_regime_row_reads_as_a_premise_row():
    stored = {**MINIMAL, "kind": "regime", "id": "k_poly", "claim": "regime: K-pair gradient"}
    r = V.from_json(stored)
    assert r.kind == V.PREMISE_KIND and V.is_premise_row(r) and not V.is_claim_row(r) and V.is_required_premise(r)
    assert V.to_json(r)["kind"] == "premise" and r.claim == "regime: K-pair gradient"     # the words stay


def test_null_numbers_read_as_nan_and_a_null_band_end_as_an_open_side():
    r = V.from_json({**MINIMAL, "measured": None, "lo": None, "hi": None, "n_needed": None, "verdict": UNTESTED})
    assert all(math.isnan(x) for x in (r.measured, r.lo, r.hi, r.n_needed))
    assert (V.from_json({**MINIMAL, "band_lo": None, "band_hi": 0.25}).band_lo,
            V.from_json({**MINIMAL, "band_lo": 0.8, "band_hi": None}).band_hi) == (-INF, INF)
    below = V.from_json({**MINIMAL, "band_lo": None, "band_hi": 0.25})
    assert below.band_hi == 0.25 and V.band_text(below) == "holds at ≤ 0.25"
    above = V.from_json({**MINIMAL, "band_lo": 0.8, "band_hi": None})
    assert above.band_lo == 0.8 and V.band_text(above) == "holds at ≥ 0.8"
    none = V.from_json({**MINIMAL, "band_lo": None, "band_hi": None, "band_words": "w", "band": "w"})
    assert math.isnan(none.band_lo) and math.isnan(none.band_hi) and V.band_text(none) == "w"
    both = V.from_json({**MINIMAL, "band_lo": None, "band_hi": None, "band": "holds at any value"})
    assert (both.band_lo, both.band_hi) == (-INF, INF) and V.band_text(both) == "holds at any value"
    # an infinite end of a measured interval is not JSON: it reads back as no number, as every page shows it ("–")
    assert math.isnan(V.from_json(V.to_json(V.Verdict(**{**MINIMAL, "lo": -INF}))).lo)


def test_missing_fields_take_the_defaults_and_unknown_keys_are_dropped():
    r = V.from_json({**MINIMAL, "band": "holds within [0, 1]", "notebook": "01_stage1_growth", "seed_verdict": "x",
                     "unit": "u"})
    assert _same(r, V.Verdict(**MINIMAL, notebook="01_stage1_growth")) == []
    assert (r.kind, r.id, r.depends, r.quantity, r.n, r.band_words) == ("paper", "", (), "real", 0, "")
    assert math.isnan(r.n_needed) and math.isnan(r.band_lo) and V.band_text(r) == ""   # the stored "band" is not kept
    bare = V.from_json({"claim": "only a claim", "verdict": FAILS})
    assert (bare.source, bare.predicted, bare.verdict) == ("", "", FAILS) and math.isnan(bare.measured)
    lists = V.from_json({**MINIMAL, "depends": ["k_poly"], "checked": ["k_poly"], "unmet": [], "met_by_effect": []})
    assert (lists.depends, lists.checked, lists.unmet, lists.met_by_effect) == (("k_poly",), ("k_poly",), (), ())
    with pytest.raises(ValueError, match="verdict must be one of"):
        V.from_json({"claim": "no verdict"})


def _committed_rows() -> list[tuple[str, dict]]:
    """(file, row) of every row of the committed notebook records under results/campaign."""
    out = []
    for p in sorted(ROOT.glob("results/campaign/*/notebook/*.json")):
        out += [(p.name, r) for r in json.loads(p.read_text())["payload"]["rows"]]
    return out


def test_every_committed_record_row_reads_and_writes_back_as_stored():
    rows = _committed_rows()
    assert rows, "no committed campaign record"
    current = [(f, r) for f, r in rows if "band" in r]       # rows written since rows carried their band
    assert current and any(r["measured"] is None for _, r in current)
    assert any((r["band_lo"] is None) != (r["band_hi"] is None) for _, r in current)    # an open band
    for f, r in rows:
        v = V.from_json(r)
        assert (v.id, v.claim, v.verdict) == (r.get("id", ""), r["claim"], r["verdict"]), f
    for f, r in current:
        v = V.from_json(r)
        stored = {**r, "kind": V.LEGACY_KINDS.get(r["kind"], r["kind"])}
        assert json.dumps(V.to_json(v), ensure_ascii=False) == json.dumps(stored, ensure_ascii=False), (f, r["id"])
        assert V.band_text(v) == r["band"], (f, r["id"])
