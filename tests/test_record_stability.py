"""Recorded paper-scale results and seed stability: hand-made rows, then the real commands at ci."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from imbalanced_cl import verdict as V
from imbalanced_cl.book.records import record, stability

ROOT = Path(__file__).resolve().parents[1]


def _row(nb, claim, verdict, m=1.0, rid=None):
    return V.Verdict(notebook=nb, id=f"row_{claim}" if rid is None else rid, claim=claim, source="s", predicted="p",
                     verdict=verdict, measured=m, lo=m - 0.1, hi=m + 0.1)


def test_stability_compares_verdicts_row_by_row():
    by_seed = {0: [_row("01", "a", "holds"), _row("01", "b", "partly"), _row("02", "c", "holds")],
               1: [_row("01", "a", "holds"), _row("01", "b", "does not hold"), _row("02", "c", "holds")]}
    res = stability.compare(by_seed)
    assert res["rows"] == 3 and res["unchanged"] == 2 and res["share_unchanged"] == pytest.approx(2 / 3)
    assert res["changed"] == [{"notebook": "01", "id": "row_b", "claim": "b",
                               "verdicts": {"0": "partly", "1": "does not hold"}}]
    assert stability.flipped(res) == {("01", "row_b")}


def test_stability_matches_rows_by_id_not_by_sentence():
    """A row reworded between two runs is still the same row; two rows with one sentence are still two rows."""
    by_seed = {0: [_row("01", "old words", "holds", rid="x"), _row("01", "same", "holds", rid="y"),
                   _row("01", "same", "holds", rid="z")],
               1: [_row("01", "new words", "does not hold", rid="x"), _row("01", "same", "holds", rid="y"),
                   _row("01", "same", "does not hold", rid="z")]}
    res = stability.compare(by_seed)
    assert res["rows"] == 3 and stability.flipped(res) == {("01", "x"), ("01", "z")}
    with pytest.raises(ValueError, match="without an id"):
        stability.compare({0: [_row("01", "a", "holds", rid="")]})


def test_a_stored_result_from_before_row_ids_is_stale_and_marks_no_row(tmp_path):
    from imbalanced_cl.book.pages import scoreboard
    (tmp_path / "results" / "stability").mkdir(parents=True)
    (tmp_path / "results" / "stability" / "default.json").write_text(json.dumps(
        {"profile": "default", "seeds": [0, 1], "rows": 2, "unchanged": 1, "share_unchanged": 0.5,
         "changed": [{"notebook": "01", "claim": "a", "verdicts": {"0": "holds", "1": "partly"}}]}))
    res = stability.load(tmp_path, "default")
    assert "before verdict rows had ids" in res["stale"] and stability.flipped(res) == set()
    html = scoreboard.stability_section(scoreboard.Board("x", stability=res))
    assert "is stale" in html and "--seeds 0 1" in html and "keep their verdict" not in html


def test_paper_column_says_when_nothing_was_recorded():
    rows = [_row("01", "a", "holds"), _row("02", "c", "holds")]
    rec = {"01": {"device": "cuda", "commit": "abcdef123", "rows": [_row("01", "a", "does not hold", 2.0)]}}
    col = record.column(rows, rec)
    assert col[0]["status"] == "ok" and col[0]["differs"] and col[0]["commit"] == "abcdef1"
    assert col[1]["status"] == "not yet run at paper scale"


def test_record_writes_rows_with_provenance(ci_book, tmp_path):
    out, log, rc = ci_book
    assert rc == 0, log
    paths = record.record(out / "_build" / "executed" / "notebooks", "ci", tmp_path)
    assert {p.stem for p in paths} >= {"01_stage1_growth", "04_pruning_gains"}
    rec = json.loads((tmp_path / "01_stage1_growth.json").read_text())
    assert rec["profile"] == "ci" and rec["rows"] and rec["parameters"]["R"] == 3
    assert rec["commit"] and rec["device"] in ("cpu", "cuda")      # read off the provenance table
    import torch
    assert rec["versions"]["torch"] == rec["torch"] == torch.__version__ and rec["cpu_kernels"]   # one versions row
    # read back as Verdict rows, written again by verdict.to_json: the stored rows, field for field
    assert [V.to_json(r) for r in record.load(tmp_path)["01_stage1_growth"]["rows"]] == rec["rows"]


@pytest.mark.slow
def test_stability_command_runs_at_ci(tmp_path):
    res = stability.run("ci", [0, 1], ROOT, only=["01_stage1_growth"], out=tmp_path)
    assert res["rows"] > 0 and res["seeds"] == [0, 1] and 0 <= res["share_unchanged"] <= 1
    assert (tmp_path / "results" / "stability" / "ci.json").exists()


def test_the_scoreboard_shows_the_seed_stability_of_the_recorded_paper_units(tmp_path):
    """`campaign stability` writes results/stability/campaign-paper.json; the scoreboard's stability section reads it
    back and says how many paper-scale rows kept their verdict, with the flips and the rows that changed."""
    from imbalanced_cl.book.pages import scoreboard
    assert stability.load_campaign(tmp_path) is None
    res = stability.compare({0: [_row("02", "a", "holds"), _row("02", "b", "partly"), _row("02", "c", "holds")],
                             1: [_row("02", "a", "holds"), _row("02", "b", "does not hold"), _row("02", "c", "holds")]})
    (tmp_path / "results" / "stability").mkdir(parents=True)
    (tmp_path / "results" / "stability" / "campaign-paper.json").write_text(
        json.dumps({"notebooks": ["02"], "flips": 1, **res}))
    board = scoreboard.Board("x", paper_stability=stability.load_campaign(tmp_path))
    html = scoreboard.stability_section(board)
    assert "Not yet measured for this profile" in html                        # the book's own stability: none here
    assert "<b>paper</b> scale (recorded campaign units of 02, base seeds [0, 1]): <b>2 of 3 rows</b> (67%)" in html
    assert "partly ↔ does not hold): 1." in html and "02: b: seed 0: partly, seed 1: does not hold" in html
    assert "paper</b> scale" not in scoreboard.stability_section(scoreboard.Board("x"))
