"""The papermill → Jupyter Book pipeline: every notebook executes at ci, the book builds, caching and errors work."""
from __future__ import annotations

import json
import subprocess
import sys

import nbformat
import papermill as pm
import pytest
import yaml

from imbalanced_cl.book import runner as book
from imbalanced_cl.validate import ParameterError
from imbalanced_cl.book.profiles import PROFILES, params

ROOT = book.repo_root()
NOTEBOOKS = book.toc_notebooks(ROOT)


def test_toc_lists_notebooks():
    assert any(nb.stem == "01_stage1_growth" for nb in NOTEBOOKS)


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_has_kernel_metadata_and_no_outputs(nb):
    data = json.loads(nb.read_text())
    assert data["metadata"]["kernelspec"]["name"] == "python3"
    assert data["metadata"]["language_info"]["name"] == "python"
    assert all(not c.get("outputs") for c in data["cells"] if c["cell_type"] == "code"), "commit sources without outputs"


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_executes_at_ci(ci_book, nb):
    """Every notebook in the toc executed under papermill at the ci profile, without an error output."""
    out, log, _ = ci_book
    executed = out / "_build" / "executed" / nb.relative_to(ROOT)
    assert executed.exists(), f"{nb.stem} did not execute; runner log:\n{log[-3000:]}"
    run = nbformat.read(executed, as_version=4)
    errors = [o for c in run.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors
    assert run.metadata["papermill"]["parameters"] == params("ci", nb.stem)


def test_book_builds_with_a_page_per_notebook(ci_book):
    out, log, rc = ci_book
    assert rc == 0, log[-4000:]
    html = out / "_build" / "html"
    assert (html / "index.html").exists()
    for nb in NOTEBOOKS:
        page = html / nb.relative_to(ROOT).with_suffix(".html")
        assert page.exists(), f"no page for {nb.stem}"
        assert "Provenance" in page.read_text(), f"{nb.stem} page lacks the provenance record"


def test_cache_reuses_unchanged_notebook(ci_book):
    """A second run with nothing changed reuses every executed copy."""
    out, _, rc = ci_book
    assert rc == 0
    proc = subprocess.run([sys.executable, "-m", "imbalanced_cl", "book", "--profile", "ci", "--out", str(out),
                           "--no-build"], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "[running]" not in proc.stdout and proc.stdout.count("[cached]") == len(NOTEBOOKS)


def test_cache_key_changes_with_parameters_code_and_source(tmp_path):
    nb = tmp_path / "a.ipynb"
    nb.write_text("{}")
    k = book.cache_key(nb, {"R": 1}, "ci", "code")
    assert k == book.cache_key(nb, {"R": 1}, "ci", "code")
    assert k != book.cache_key(nb, {"R": 2}, "ci", "code")
    assert k != book.cache_key(nb, {"R": 1}, "ci", "code2")
    assert k != book.cache_key(nb, {"R": 1}, "default", "code")
    nb.write_text('{"x": 1}')
    assert k != book.cache_key(nb, {"R": 1}, "ci", "code")


def _tiny_notebook(path, body):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("x = 1", metadata={"tags": ["parameters"]}),
                nbformat.v4.new_code_cell(body)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    nbformat.write(nb, path)


def test_failing_notebook_reports_cell_and_keeps_good_copy(tmp_path):
    """A failure names the cell and the error, and never replaces a good executed copy."""
    src, out = tmp_path / "nb.ipynb", tmp_path / "out" / "nb.ipynb"
    _tiny_notebook(src, "y = x + 1")
    ok, _ = book.execute(src, out, {"x": 2}, tmp_path)
    assert ok and out.exists()
    good = out.read_bytes()
    _tiny_notebook(src, "raise ValueError('boom')")
    ok, msg = book.execute(src, out, {}, tmp_path)
    assert not ok and "ValueError" in msg and "boom" in msg and "cell" in msg
    assert out.read_bytes() == good
    assert not list(out.parent.glob(".*partial*"))


def test_unknown_profile_and_unknown_parameter_are_refused(tmp_path):
    with pytest.raises(ParameterError, match="profile"):
        params("huge", "01_stage1_growth")
    src = tmp_path / "nb.ipynb"
    _tiny_notebook(src, "pass")
    with pytest.raises(ParameterError, match="unknown parameter"):
        book.check_params(src, {"not_a_param": 1})
    proc = subprocess.run([sys.executable, "-m", "imbalanced_cl", "book", "--profile", "huge", "--no-build"],
                          cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 2 and "profile" in proc.stderr


def test_profiles_file_is_readable():
    data = yaml.safe_load((ROOT / "profiles.yaml").read_text())
    assert set(data) == set(PROFILES)
