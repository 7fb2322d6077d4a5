"""`python -m imbalanced_cl show OUT.ipynb` prints an executed notebook's verdict table in the terminal, and the
parameters that set a notebook's run time are marked in its help and listed in the README (book/build/cost.py)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import nbformat
import papermill
import pytest

from imbalanced_cl.book.build import cost
from imbalanced_cl.book.records import glued
from imbalanced_cl.book.pages import show
from imbalanced_cl.book.build.cells import config_class

ROOT = Path(__file__).resolve().parents[1]

ROWS = [  # hand-made rows, as a notebook glues them (verdict.VerdictTable.glue)
    {"claim": "Stage-1 rate ∝ ε_j", "source": "Lemma 3.1, eq. (7)", "predicted": "1", "measured": 1.056,
     "lo": 0.911, "hi": 1.201, "verdict": "inconclusive", "notebook": "01_stage1_growth", "kind": "paper"},
    {"claim": "a claim long enough that it has to wrap onto a second line of the terminal table, and a third",
     "source": "Theorem 3.1", "predicted": "[0.025, 0.081]", "measured": 0.045, "lo": 0.04, "hi": 0.05,
     "verdict": "holds", "notebook": "01_stage1_growth", "kind": "regime"},
    {"claim": "never reached", "source": "eq. (34)", "predicted": "T1 exists", "measured": float("nan"),
     "lo": float("nan"), "hi": float("nan"), "verdict": "not tested", "notebook": "01_stage1_growth"},
]


def _executed(tmp_path: Path, rows: list[dict], params: dict | None = None) -> Path:
    """A notebook shaped like papermill's output: its glued verdict table and papermill's parameter record."""
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("table.glue()")
    if rows is not None:
        cell.outputs = [nbformat.v4.new_output(
            "display_data", data={"application/json": {"notebook": "01_stage1_growth", "rows": rows},
                                  "text/plain": "<table>"},
            metadata={"scrapbook": {"mime_prefix": "", "name": "01_stage1_growth_verdicts"}})]
    nb.cells = [cell]
    nb.metadata["papermill"] = {"parameters": params or {}}
    path = tmp_path / "out.ipynb"
    nbformat.write(nb, path)
    return path


def test_show_prints_every_row_with_its_interval(tmp_path):
    path = _executed(tmp_path, ROWS, {"R": 3, "d": 12})
    text = show.render(path, width=100)
    lines = text.splitlines()
    assert lines[0] == "out.ipynb: 3 verdict rows: 1 holds, 1 inconclusive, 1 not tested"
    assert lines[1] == "run with: R=3, d=12"
    assert "1.056 [0.911, 1.201]" in text and "0.045 [0.04, 0.05]" in text
    body = lines[5:]
    assert body[0].startswith("inconclusive") and "Stage-1 rate ∝ ε_j (Lemma 3.1, eq. (7))" in body[0]
    assert sum(line.startswith("holds") for line in body) == 1
    nt = next(line for line in body if line.startswith("not tested"))
    assert nt.split()[2] == "–"                       # no finite measurement: a dash, not "nan [nan, nan]"
    assert all(len(line) <= 100 for line in lines)    # the long claim wraps inside the width
    i = next(k for k, line in enumerate(body) if line.startswith("holds"))
    assert body[i + 1].startswith(" ")                # its claim continues on the next line, under its column
    claim_col = " ".join(line[body[0].index("Stage-1"):] for line in body[i:i + 3])
    assert " ".join(claim_col.split()).startswith(ROWS[1]["claim"][:60])


def test_show_command_exit_codes(tmp_path):
    good = _executed(tmp_path, ROWS)
    assert show.main([str(good)], width=90) == 0
    (tmp_path / "empty").mkdir()
    empty = _executed(tmp_path / "empty", None)
    assert show.main([str(empty)]) == 1
    assert show.main([str(tmp_path / "missing.ipynb")]) == 2


def test_show_refuses_a_file_that_is_not_a_notebook_in_one_line_on_stderr(tmp_path):
    """A truncated notebook (a copy cut short), a binary file, JSON without cells and a missing file: one line each
    on stderr, nothing on stdout, exit 2, and no table printed for a good notebook given beside them."""
    good = _executed(tmp_path, ROWS)
    cut = tmp_path / "cut.ipynb"
    cut.write_text(good.read_text()[: len(good.read_text()) // 2])
    binary = tmp_path / "binary.ipynb"
    binary.write_bytes(bytes(range(256)))
    nocells = tmp_path / "nocells.ipynb"
    nocells.write_text('{"metadata": {}}')
    for bad, words in ((cut, "not a notebook"), (binary, "not a notebook"), (nocells, "not a notebook"),
                       (tmp_path / "missing.ipynb", "no such file")):
        proc = subprocess.run([sys.executable, "-m", "imbalanced_cl", "show", str(good), str(bad)],
                              capture_output=True, text=True, cwd=ROOT)
        err = proc.stderr.strip().splitlines()
        assert proc.returncode == 2 and proc.stdout == "", (bad.name, proc.stdout)
        assert len(err) == 1 and err[0].startswith(f"error: {bad}: {words}"), (bad.name, proc.stderr)


def test_show_from_the_command_line(tmp_path):
    path = _executed(tmp_path, ROWS)
    proc = subprocess.run([sys.executable, "-m", "imbalanced_cl", "show", str(path), "--width", "100"],
                          capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert "3 verdict rows" in proc.stdout and "1.056 [0.911, 1.201]" in proc.stdout


@pytest.mark.slow
def test_show_on_a_ci_executed_notebook(ci_book):
    """Every claim notebook of the ci book: show prints one verdict word per glued row."""
    out, log, rc = ci_book
    assert rc == 0, f"the ci book did not build:\n{log[-4000:]}"
    executed = sorted((out / "_build" / "executed" / "notebooks").glob("[01]*.ipynb"))
    assert executed
    for path in executed:
        rows = glued.rows_of(path)
        if not rows:
            continue
        text = show.render(path, width=120)
        lines = text.splitlines()
        assert lines[0].startswith(f"{path.name}: {len(rows)} verdict rows")
        assert all(len(line) <= 120 for line in lines), max(lines, key=len)
        # after the header rule, each row starts one line with its verdict word; continuation lines start with blanks
        rule = next(i for i, line in enumerate(lines) if line.startswith("---"))
        starts = [line for line in lines[rule + 1:] if line and not line.startswith(" ")]
        assert len(starts) == len(rows), path.name
        assert [s[:len(r.verdict)] for s, r in zip(starts, rows, strict=True)] == [r.verdict for r in rows]


def test_cost_table_names_real_parameters_and_marks_the_help():
    """Every field the cost table names exists in its config, and the help of exactly those fields says so."""
    nbs = sorted((ROOT / "notebooks").glob("*.ipynb")) + [ROOT / "book" / "regime.ipynb"]
    assert {c.notebook for c in cost.COSTS.values()} == {nb.stem for nb in nbs}
    for nb in nbs:
        cls = config_class(nb)
        names = set(cls.field_names())
        assert cost.COSTS[cls.__name__].notebook == nb.stem
        assert set(cost.drivers(cls)) <= names, nb.name
        marked = {n for n, p in papermill.inspect_notebook(str(nb)).items() if cost.COST_NOTE in p["help"]}
        assert marked == set(cost.drivers(cls)), nb.name


def test_readme_cost_table_is_the_generated_one():
    readme = (ROOT / "README.md").read_text()
    assert cost.markdown_table() in readme
