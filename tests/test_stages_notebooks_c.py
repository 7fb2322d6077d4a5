"""Measure and judge apart, notebooks 08 and 10 (issue 47, item 1): their units keep what each notebook measured (08's
grid of d, 10's closed forms and trained cells), judging a record executes the notebook with every stage read back and
gives the recorded rows again, and the rows follow the stages alone (an edited stage moves exactly its rows)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from imbalanced_cl import verdict as V
from imbalanced_cl.book.records.record import read_rows
from imbalanced_cl.campaign import typed

ROOT = Path(__file__).resolve().parents[1]
STAGES = {"08_scale": ("grid",), "10_premise_map": ("rates", "cells")}   # the static test: test_stages_notebooks


def _rows(rows: list[V.Verdict]) -> dict:
    """{row id: (verdict, measured, interval)} of verdict rows, as JSON (verdict.to_json: NaN as None, equal to
    itself)."""
    return {j["id"]: (j["verdict"], j["measured"], j["lo"], j["hi"]) for j in map(V.to_json, rows)}


def _recorded(rec: dict) -> list[V.Verdict]:
    """A record's stored rows, read back as the book reads them."""
    return read_rows(rec["payload"]["rows"])


def _judged_again(name: str, tmp_path: Path, ci_unit_record, stage: str, edit) -> tuple[dict, dict]:
    """Record the notebook's ci unit, judge it again as kept (its rows, exactly), then with `stage` edited by
    `edit`: (recorded rows, edited rows). Without the stage, it needs re-measuring, by name."""
    from imbalanced_cl.campaign import judge
    path, rec, _, _ = ci_unit_record(name, tmp_path)
    assert rec["payload"]["stages"] == sorted(STAGES[name])
    where = judge.kept_stages(path, rec)
    rows, why = judge.judge(ROOT, path, rec, tmp_path / "judged.ipynb")
    assert why == "" and _rows(rows) == _rows(_recorded(rec))
    typed.save(edit(typed.load(where / stage)), where / stage)
    edited, why = judge.judge(ROOT, path, rec, tmp_path / "edited.ipynb")
    assert why == ""
    (where / f"{stage}.json").unlink()
    none, why = judge.judge(ROOT, path, rec, tmp_path / "again.ipynb")
    assert none is None and why == f"needs re-measuring (stage {stage}: not in the record)"
    return _rows(_recorded(rec)), _rows(edited)


@pytest.mark.slow
def test_notebook_08_unit_is_judged_again_from_its_grid_alone(tmp_path, ci_unit_record):
    """Notebook 08 at ci: the record keeps its grid (no run in it), and the rate-ratio rows follow the stage: every
    measured rate ratio set to the prediction eps_max/eps_min closes the gap, while the other quantities' rows stay."""
    def on_prediction(res):
        for p in res.points:
            p["rate_ratio"] = np.full_like(p["rate_ratio"], 1 / min(res.cfg.ratios))
        return res
    recorded, edited = _judged_again("08_scale", tmp_path, ci_unit_record, "grid", on_prediction)
    moved = {k for k in recorded if recorded[k] != edited[k]}
    assert moved and all("rate" in k for k in moved), moved


@pytest.mark.slow
def test_notebook_10_unit_is_judged_again_from_its_cells_alone(tmp_path, ci_unit_record):
    """Notebook 10 at ci: the record keeps the closed forms and every cell, and the rows follow the cells: the
    pruning gain of every trained cell negated moves the gain rows."""
    def negated(cells):
        for c in cells:
            if c.gain is not None:
                c.gain = -c.gain
                for a in c.arms.values():
                    a.gain = -a.gain
        return cells
    recorded, edited = _judged_again("10_premise_map", tmp_path, ci_unit_record, "cells", negated)
    assert recorded.keys() == edited.keys() and recorded != edited
