"""Parameters cells that read well (issue 28, item 6): the generated defaults cell is folded on the page (tag
hide-cell, still tagged `parameters` for papermill), and its comments use characters Debian's fonts have."""
from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import nbformat
import papermill as pm
import pytest

from imbalanced_cl.book.build import cells
from imbalanced_cl.book.build.runner import toc_notebooks

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = [nb for nb in toc_notebooks(ROOT) if cells.config_class(nb) is not None]
# The monospace fonts a Debian browser draws code cells with (the theme's stack ends in Liberation Mono, then
# the fontconfig default, DejaVu Sans Mono).
FONTS = [Path("/usr/share/fonts/truetype/liberation/LiberationMono-Regular.ttf"),
         Path("/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf")]


def _generated_text() -> str:
    return "\n".join(cells.parameters_source(cells.config_class(nb)) for nb in NOTEBOOKS)


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=lambda p: p.stem)
def test_defaults_cell_is_tagged_for_papermill_and_folded_on_the_page(nb):
    cell = cells.parameters_cell(json.loads(nb.read_text()))
    assert cell is not None and {"parameters", "hide-cell"} <= set(cell["metadata"]["tags"])


def test_comments_have_no_fullwidth_form_no_second_equals_sign_and_fit_the_width():
    """A parameter line holds one '=' (papermill skips a line with a second), a help text's own '=' moves to the
    comment lines below it, and no line is wider than ruff's bound (cells.WIDTH)."""
    text = _generated_text()
    assert not re.search("[\uff00-\uffef]", text), "a fullwidth form (drawn as an empty box with Debian's fonts)"
    assert "≡" not in text, "a help text's '=' is written as '=' (on a comment line), never rewritten"
    for line in text.splitlines():
        assert len(line) <= cells.WIDTH, line
        if line and not line.startswith("#"):
            assert line.count("=") == 1, f"papermill skips a parameter line with a second '=': {line}"


def test_the_cell_groups_the_fields_by_role():
    """model (SimConfig's fields), protocol (the notebook's own), judging (tolerances and premise thresholds) and run
    (validate.RUN_OPTIONS), each under its header, in that order."""
    from imbalanced_cl.claims.lucky import LuckyConfig
    text = cells.parameters_source(LuckyConfig)
    heads = [text.index(cells.ROLE_HEADERS[r]) for r in cells.ROLES]
    assert heads == sorted(heads)
    where = {name: text.index(f"\n{name}: ") for name in ("sigma0", "train_eps_max", "tol_t2", "forall_min", "device")}
    assert heads[0] < where["sigma0"] < heads[1] < where["train_eps_max"] < heads[2] < where["tol_t2"] < heads[3]
    assert heads[2] < where["forall_min"] < heads[3] < where["device"]
    assert [cells.role(LuckyConfig, n) for n in ("d", "lemma_m", "tol_share", "regime_share_min", "device")] == \
        ["model", "protocol", "judging", "judging", "run"]
    from imbalanced_cl.claims.pruning import PruningConfig
    assert [cells.role(PruningConfig, n) for n in ("converge_window", "threads", "alpha_grid")] == \
        ["judging", "run", "protocol"]


def test_every_symbol_in_the_comments_is_in_debians_monospace_fonts():
    fonts = [f for f in FONTS if f.exists()]
    if not fonts:
        pytest.skip("neither Liberation Mono nor DejaVu Sans Mono is installed here")
    from fontTools.ttLib import TTFont
    symbols = {ch for ch in _generated_text() if ord(ch) > 127}
    for font in fonts:
        cmap = TTFont(font, lazy=True).getBestCmap()
        assert not [ch for ch in symbols if ord(ch) not in cmap], font.name


def test_comment_symbols_and_papermill_reads_them():
    assert cells.comment_symbols("a = b, c <= d, e >= f, g != h, i == j") == "a = b, c ≤ d, e ≥ f, g ≠ h, i == j"

    @dataclasses.dataclass(frozen=True)
    class Toy:
        T1: float = 0.9     # the first step where this fraction of neurons is >= the bound: T1 = that step
        long: int = 3       # a help text that runs on for a while, longer than the line leaves room for, so that
                            # its end wraps onto a comment line below the parameter, where papermill does not look

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(cells.parameters_source(Toy), metadata={"tags": ["parameters"]})]
    nb.metadata["kernelspec"] = {"name": "python3", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    found = pm.inspect_notebook(nb)  # papermill's own parser
    assert found["T1"]["default"] == "0.9"
    # the line ends at the last clause before the help's own '=' (never inside a formula); the rest goes below
    assert found["T1"]["help"] == "the first step where this fraction of neurons is ≥ the bound:"
    assert "#   T1 = that step" in cells.parameters_source(Toy)
    assert found["long"]["default"] == "3" and found["long"]["help"].startswith("a help text that runs on")
    assert "where papermill does not look" in cells.parameters_source(Toy)      # the continuation is kept


@pytest.mark.slow
def test_the_page_folds_the_defaults_and_shows_the_run_values(ci_book):
    """On each notebook page the defaults cell sits in a folded block; papermill's injected cell stays in view."""
    out, log, rc = ci_book
    assert rc == 0, log[-3000:]
    html = out / "_build" / "html"
    for nb in NOTEBOOKS:
        page = (html / nb.relative_to(ROOT)).with_suffix(".html").read_text()
        tags = re.findall(r'<div class="cell (tag_[^"]*)docutils container"', page)
        params = [t for t in tags if "tag_parameters" in t]
        assert len(params) == 1 and "tag_hide-cell" in params[0], (nb.stem, params)
        injected = [t for t in tags if "tag_injected-parameters" in t]
        assert len(injected) <= 1 and not any("hide" in t or "remove" in t for t in injected), (nb.stem, injected)
        assert "＝" not in page, nb.stem
