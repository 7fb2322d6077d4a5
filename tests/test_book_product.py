"""The book's own machinery: the scoreboard gathers glued verdicts and names missing ones; the explorer config."""
from __future__ import annotations

import math

import nbformat
import pytest

from imbalanced_cl.claims import explorer
from imbalanced_cl.book import scoreboard
from imbalanced_cl import verdict
from imbalanced_cl.validate import ParameterError
from imbalanced_cl.book import tables


def _executed_nb(path, name, rows):
    """A fake executed notebook with a glued verdict output, as VerdictTable.glue() writes it."""
    nb = nbformat.v4.new_notebook()
    table = tables.VerdictTable(name, rows)
    out = nbformat.v4.new_output("display_data", data={"application/json": table._repr_json_()},
                                 metadata={"scrapbook": {"name": f"{name}_verdicts"}})
    cell = nbformat.v4.new_code_cell("glue")
    cell.outputs = [out]
    nb.cells = [cell]
    nbformat.write(nb, path)


def test_scoreboard_gathers_rows_and_names_missing_notebooks(tmp_path, monkeypatch):
    monkeypatch.setattr(scoreboard, "claim_notebooks", lambda root=None: ["01_a", "02_b", "03_c"])
    row = verdict.Verdict("growth", "eq. (7)", "1", 1.02, 0.9, 1.1, verdict.HOLDS, "rule")
    _executed_nb(tmp_path / "01_a.ipynb", "01_a", [row, row])
    _executed_nb(tmp_path / "02_b.ipynb", "02_b", [])
    board = scoreboard.gather(str(tmp_path))
    assert [r["notebook"] for r in board.rows] == ["01_a", "01_a"]
    assert board.status["01_a"] == "ok"
    assert "no verdicts" in board.missing["02_b"] and "not executed" in board.missing["03_c"]
    page = scoreboard.render(board)
    assert page.count('data-notebook="01_a"') == 2 and 'href="../notebooks/01_a.html"' in page
    assert "Missing verdicts" in page and "03_c" in page


def test_scoreboard_without_executed_folder_says_so(monkeypatch):
    monkeypatch.delenv(scoreboard.ENV, raising=False)
    monkeypatch.setattr(scoreboard, "claim_notebooks", lambda root=None: ["01_a"])
    board = scoreboard.gather("")
    assert not board.rows and "not set" in board.missing["01_a"]
    assert "No verdicts were found" in scoreboard.render(board)


def test_claim_notebooks_excludes_explorer_and_scoreboard():
    names = scoreboard.claim_notebooks()
    assert "07_explorer" not in names and "scoreboard" not in names


@pytest.mark.parametrize("bad, name", [({"nsr": -0.1}, "nsr"), ({"gallery_alpha": (0.0, 0.95)}, "gallery_alpha"),
                                       ({"d_range": (2, 20)}, "d_range"), ({"threshold": 1.0}, "threshold"),
                                       ({"eps_min": 0.01}, "eps_min")])
def test_explorer_config_validates(bad, name):
    with pytest.raises(ParameterError, match=name):
        explorer.ExplorerConfig(**bad)


def test_explorer_point_trains_fast_and_counts_minority():
    cfg = explorer.ExplorerConfig(steps=30, n_pairs=64, m=12)
    res = explorer.result(cfg, explorer.Point(0.3, 0.45, 0.0, 9, 12))
    assert res.cos.shape == (12, 9) and res.counts.shape == (9,)
    assert int(res.minority.sum()) == cfg.n_minority and bool(res.minority[-1])
    assert 0 <= res.minority_count <= 12 and not math.isnan(res.majority_count)
    assert explorer.result(cfg, explorer.Point(0.3, 0.45, 0.0, 9, 12)) is res  # cached: instant redraw
    with pytest.raises(ParameterError, match="prune_alpha"):
        cfg.check_point(explorer.Point(0.3, 0.45, 0.95, 9, 12))
    assert len(cfg.gallery_points()) == len(cfg.gallery_eps_min) * len(cfg.gallery_nsr) * len(cfg.gallery_alpha)
