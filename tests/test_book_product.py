"""The book's own machinery: the scoreboard gathers glued verdicts, names missing ones and says what built it;
provenance and verdict tables show once; the Sphinx extension's script dedupe; the explorer config."""
from __future__ import annotations

import math
from dataclasses import replace

import nbformat
import pytest
import torch

from imbalanced_cl.claims import explorer
from imbalanced_cl.book.pages import scoreboard
from imbalanced_cl import verdict
from imbalanced_cl.validate import ParameterError
from imbalanced_cl.book.pages import tables


def _executed_nb(path, name, rows, profile=None, recorded=""):
    """A fake executed notebook with a glued verdict output, as VerdictTable.glue() writes it."""
    nb = nbformat.v4.new_notebook()
    if profile:
        nb.metadata["imbalanced_cl"] = {"profile": profile}  # as the runner stamps it
    table = tables.VerdictTable(name, rows, recorded=recorded)
    out = nbformat.v4.new_output("display_data", data={"application/json": table._repr_json_()},
                                 metadata={"scrapbook": {"name": f"{name}_verdicts"}})
    cell = nbformat.v4.new_code_cell("glue")
    cell.outputs = [out]
    nb.cells = [cell]
    nbformat.write(nb, path)


def test_scoreboard_gathers_rows_and_names_missing_notebooks(tmp_path, monkeypatch):
    monkeypatch.setattr(scoreboard, "claim_notebooks", lambda root=None: ["01_a", "02_b", "03_c"])
    row = verdict.Verdict(
        claim="growth",
        source="eq. (7)",
        predicted="1",
        measured=1.02,
        lo=0.9,
        hi=1.1,
        verdict=verdict.HOLDS,
        rule="rule",
        id="growth",
    )
    _executed_nb(tmp_path / "01_a.ipynb", "01_a", [row, replace(row, id="growth_again")])
    _executed_nb(tmp_path / "02_b.ipynb", "02_b", [])
    board = scoreboard.gather(str(tmp_path))
    assert [r.notebook for r in board.rows] == ["01_a", "01_a"]
    assert board.status["01_a"] == "ok"
    assert "no verdicts" in board.missing["02_b"] and "not executed" in board.missing["03_c"]
    page = scoreboard.render(board)
    assert page.count('data-notebook="01_a"') == 2 and 'href="../notebooks/01_a.html"' in page
    assert "Missing verdicts" in page and "03_c" in page


def test_scoreboard_names_profile_commit_date_and_opens_on_a_summary(tmp_path, monkeypatch):
    monkeypatch.setattr(scoreboard, "claim_notebooks", lambda root=None: ["01_a", "02_b"])
    monkeypatch.setenv("IMBALANCED_CL_PROFILE", "ci")
    holds = verdict.Verdict(
        claim="growth",
        source="eq. (7)",
        predicted="1",
        measured=1.02,
        lo=0.9,
        hi=1.1,
        verdict=verdict.HOLDS,
        rule="rule",
        id="growth",
    )
    fails = verdict.Verdict(
        claim="decay",
        source="eq. (8)",
        predicted="1",
        measured=3.0,
        lo=2.9,
        hi=3.1,
        verdict=verdict.FAILS,
        rule="rule",
        id="decay",
    )
    _executed_nb(tmp_path / "01_a.ipynb", "01_a", [holds, replace(holds, id="growth_again"), fails], profile="ci")
    _executed_nb(tmp_path / "02_b.ipynb", "02_b", [fails], profile="default")
    board = scoreboard.gather(str(tmp_path))
    page = scoreboard.render(board)
    assert "Built at the <b>ci</b> profile from commit <code>" in page and " UTC." in page
    assert board.commit and board.commit in page
    # one summary line per notebook, with its counts: 01_a has 2 holds and 1 does not hold
    line = page.split('<tr data-summary="01_a">')[1].split("</tr>")[0]
    cells = [c.split(">", 1)[1].split("<")[0] for c in line.split("<td")[1:]]
    order = list(verdict.VERDICTS)
    n = len(order)
    assert cells[order.index(verdict.HOLDS)] == "2" and cells[order.index(verdict.FAILS)] == "1" and cells[n] == "3"
    assert "not yet run at paper scale" in line               # no results/paper record for this notebook
    # the rows fold out beneath, closed; a notebook run at another profile is named
    assert page.count('<details class="sb-rows"') == 2 and "<details open" not in page
    assert page.index("sb-summary-table") < page.index('<details class="sb-rows"')
    assert page.index("sb-answers") < page.index("sb-summary-table")      # the answer first (issue 28)
    assert board.mixed == {"02_b": "default"} and "Mixed profiles" in page
    monkeypatch.delenv("IMBALANCED_CL_PROFILE")  # outside the runner: the notebooks' own profile, if one
    _executed_nb(tmp_path / "02_b.ipynb", "02_b", [fails], profile="ci")
    assert scoreboard.gather(str(tmp_path)).book_profile == "ci"


def test_scoreboard_says_which_verdicts_include_recorded_points(tmp_path, monkeypatch):
    """Notebook 08's verdicts with a campaign's d = 160 point say so, on its table and on the scoreboard's line."""
    from imbalanced_cl.campaign.kinds import recorded_note
    monkeypatch.setattr(scoreboard, "claim_notebooks", lambda root=None: ["01_a", "08_scale"])
    row = verdict.Verdict(
        claim="growth",
        source="eq. (7)",
        predicted="1",
        measured=1.02,
        lo=0.9,
        hi=1.1,
        verdict=verdict.HOLDS,
        rule="rule",
        id="growth",
    )
    assert recorded_note([]) == "" and "d = 160, 320 (2 campaign units" in recorded_note([160, 320])
    _executed_nb(tmp_path / "01_a.ipynb", "01_a", [row])
    _executed_nb(tmp_path / "08_scale.ipynb", "08_scale", [row], recorded=recorded_note([160]))
    board = scoreboard.gather(str(tmp_path))
    assert board.recorded == {"08_scale": "the recorded point d = 160 (1 campaign unit, one per d)"}
    page = scoreboard.render(board)
    assert "(with the recorded point d = 160" in page.split('<tr data-summary="08_scale">')[1].split("</tr>")[0]
    assert "recorded point" not in page.split('<tr data-summary="01_a">')[1].split("</tr>")[0]
    assert ("Includes the recorded point d = 160"
            in tables.VerdictTable("08_scale", [row], recorded_note([160]))._repr_html_())


def test_provenance_and_verdict_table_show_once(monkeypatch):
    """show() and glue() display their output and return None, so a last line never echoes a second copy."""
    from IPython.core import display_functions
    from imbalanced_cl.book.records import provenance
    shown = []
    monkeypatch.setattr(display_functions, "display", lambda *objs, **kw: shown.extend(objs))
    monkeypatch.setattr("IPython.display.display", lambda *objs, **kw: shown.extend(objs))
    assert provenance.show({"seed": 3}) is None
    assert len(shown) == 1 and "Provenance" in shown[0].data and "| profile |" in shown[0].data
    row = verdict.Verdict(
        claim="growth",
        source="eq. (7)",
        predicted="1",
        measured=1.02,
        lo=0.9,
        hi=1.1,
        verdict=verdict.HOLDS,
        rule="rule",
        id="growth",
    )
    assert tables.VerdictTable("01_a", [row]).glue() is None


def test_a_verdict_table_refuses_rows_it_cannot_identify_or_range_with_one_line():
    """Bad input fails the build with one line naming the notebook and the row."""
    ok = verdict.Verdict(
        claim="growth",
        source="eq. (7)",
        predicted="1",
        measured=0.5,
        lo=0.4,
        hi=0.6,
        verdict=verdict.HOLDS,
        rule="rule",
        id="growth",
        quantity="fraction",
    )
    for bad, match in ((replace(ok, id=""), "^01_a: row 'growth' has no id$"),
                       (replace(ok, depends=("no_such_premise",)), "^01_a: row 'growth' depends on 'no_such_premise'"),
                       (replace(ok, hi=1.2), r"^01_a: row 'growth': interval \[0.4, 1.2\] leaves the range \[0, 1\]")):
        with pytest.raises(verdict.VerdictError, match=match) as err:
            tables.VerdictTable("01_a", [bad])
        assert "\n" not in str(err.value)


def test_sphinx_extension_drops_repeated_scripts():
    """Sphinx 7.4 lists an inline script twice (filename None and ''); one copy of each stays, in order."""
    from imbalanced_cl.book.pages import sphinxext

    class JS:
        def __init__(self, filename, priority=500, **attributes):
            self.filename, self.priority, self.attributes = filename, priority, attributes

    thebe = 'const THEBE_JS_URL = "x"'
    scripts = [JS("a.js"), JS(None, body=thebe), JS("b.js", defer="defer"), JS("", body=thebe), JS("a.js"),
               JS("b.js"), JS("", body="other")]
    context = {"script_files": scripts}
    sphinxext.dedupe_scripts(None, "p", "page.html", context, None)
    kept = [(j.filename or "", j.attributes.get("body", "")) for j in context["script_files"]]
    assert kept == [("a.js", ""), ("", thebe), ("b.js", ""), ("b.js", ""), ("", "other")]
    assert context["script_files"] is scripts  # edited in place: the template reads this list


def test_sphinx_extension_replaces_the_bare_index_redirect(tmp_path):
    """The toc extension's one-line index.html becomes a page with a title, a language and the book's icon."""
    from types import SimpleNamespace
    from imbalanced_cl.book.pages import sphinxext
    (tmp_path / "index.html").write_text('<meta http-equiv="Refresh" content="0; url=book/intro.html" />\n')
    app = SimpleNamespace(outdir=str(tmp_path), builder=SimpleNamespace(format="html"),
                          config=SimpleNamespace(html_favicon="book/favicon.svg", html_title="A <book>", project="p"))
    sphinxext.index_page(app, None)
    page = (tmp_path / "index.html").read_text()
    assert '<html lang="en">' in page and "<title>A &lt;book&gt;</title>" in page
    assert '<link rel="icon" href="_static/favicon.svg">' in page and 'url=book/intro.html' in page
    (tmp_path / "index.html").write_text("<p>a real home page</p>")
    sphinxext.index_page(app, None)
    assert (tmp_path / "index.html").read_text() == "<p>a real home page</p>"  # a real page is left alone


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


def _hand_result(alpha: float, cos: list[list[float]], counts: list[float]) -> explorer.Result:
    return explorer.Result(explorer.Point(0.3, 0.45, alpha, 3, 2), torch.tensor(cos), torch.tensor(counts),
                           torch.tensor([False, False, True]), 0.3, 0.0)


def test_explorer_mask_effect_by_hand():
    # unpruned: neuron 0 on feature 0 (0.9), neuron 1 on feature 2 (0.5); pruned: neuron 1 moves to 0.8 on feature 2
    base = _hand_result(0.0, [[0.9, 0.1, 0.0], [0.0, 0.2, 0.5]], [1.0, 0.0, 1.0])
    pruned = _hand_result(0.5, [[0.9, 0.1, 0.0], [0.0, 0.2, 0.8]], [1.0, 1.0, 2.0])
    (e,) = explorer.mask_effect([base, pruned])
    assert e["max_dcos2"] == pytest.approx(0.8 ** 2 - 0.5 ** 2)           # 0.39, the one cell that moved
    assert e["d_minority"] == pytest.approx(1.0) and e["d_majority"] == pytest.approx(0.5)   # (2-1), ((1+1)-(1+0))/2
    assert explorer.mask_effect([pruned]) == []                               # no unpruned twin: nothing to compare
    # neurons are paired by index, not by the drawn order: swapping which neuron is on which feature is a change
    swapped = _hand_result(0.5, [[0.0, 0.2, 0.5], [0.9, 0.1, 0.0]], [1.0, 0.0, 1.0])
    assert explorer.mask_effect([base, swapped])[0]["max_dcos2"] == pytest.approx(0.9 ** 2)


def test_explorer_figures_draw_on_a_tiny_result():
    import matplotlib
    matplotlib.use("Agg")
    from imbalanced_cl.book.plots import explorer as PX
    cfg = explorer.ExplorerConfig(gallery_eps_min=(0.3,))
    base = _hand_result(0.0, [[0.9, 0.1, 0.0], [0.0, 0.2, 0.5]], [1.0, 0.0, 1.0])
    pruned = _hand_result(0.5, [[0.9, 0.1, 0.0], [0.0, 0.2, 0.8]], [1.0, 1.0, 2.0])
    assert len(PX.draw(base).axes) == 3                                       # heatmap, its colour bar, the counts
    assert PX.gallery_grid(cfg, [base, pruned]).axes[0].images                 # one heatmap per panel
    assert "| 0.3 | 0.45 | 0.5 | 3 | 2 | 2.00 | 1.00 |" in PX.gallery_table([base, pruned])
