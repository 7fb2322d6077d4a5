"""The papermill → Jupyter Book pipeline: every notebook executes at ci, the book builds, caching and errors work.

Mistakes stop loudly: unknown notebook and parameter names, and bad values, are refused before anything runs;
a failed or interrupted run removes its partial output and keeps the previous executed copy.
"""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import nbformat
import papermill as pm
import pytest
import yaml

from imbalanced_cl.book.build import execution
from imbalanced_cl.book.build import params as P
from imbalanced_cl.book.pages import scoreboard
from imbalanced_cl.book.build import runner as book
from imbalanced_cl.book.build.profiles import PROFILES, params
from imbalanced_cl.validate import ParameterError

ROOT = book.repo_root()
NOTEBOOKS = book.toc_notebooks(ROOT)


def test_toc_lists_notebooks():
    assert any(nb.stem == "01_stage1_growth" for nb in NOTEBOOKS)


@pytest.mark.parametrize("nb", [n for n in NOTEBOOKS if n.parent.name == "notebooks" or P.config_class(n)],
                         ids=lambda p: p.stem)
def test_notebook_names_its_config_class_and_every_profile_is_valid(nb):
    """metadata.imbalanced_cl.config names the class that validates the notebook's parameters, so the runner can
    check every value before running anything; every parameter is a field of it, and every profile passes it."""
    cls = P.config_class(nb)
    assert cls is not None, (f'{nb.stem}: add "imbalanced_cl": {{"config": "module:Class"}} to the notebook metadata '
                             "(the class its `from_namespace(globals())` line builds)")
    fields = set(cls.field_names())
    declared = set(pm.inspect_notebook(str(nb)))
    assert declared <= fields, f"{nb.stem}: parameters that are not fields of {cls.__name__}: {declared - fields}"
    for profile in PROFILES:
        assert P.check_notebook(nb, params(profile, nb.stem), f"profile {profile}") == []


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_has_kernel_metadata_and_no_outputs(nb):
    data = json.loads(nb.read_text())
    assert data["metadata"]["kernelspec"]["name"] == "python3"
    assert data["metadata"]["language_info"]["name"] == "python"
    assert all(not c.get("outputs") for c in data["cells"] if c["cell_type"] == "code"), (
        "commit sources without outputs")


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


def _rows_have_ids_and_stay_in_range(notebooks) -> int:
    """Assert, for every glued row of the executed `notebooks` (paths): an id, unique in its notebook, and a point
    estimate and interval inside the declared range of its quantity (a cosine stays in [-1, 1], a fraction in
    [0, 1], a count at or above 0). Returns the number of rows checked."""
    from imbalanced_cl.book.records.glued import rows_of
    from imbalanced_cl.stats import RANGES, in_range
    seen = 0
    for path in sorted(notebooks):
        rows = rows_of(path)
        ids = [r.id for r in rows]
        assert all(ids) and len(set(ids)) == len(ids), f"{path.stem}: ids {ids}"
        for r in rows:
            q = r.quantity
            for key in ("measured", "lo", "hi"):
                x = getattr(r, key)
                assert in_range(x, q), f"{path.stem}: row {r.id}: {key} {x} outside {RANGES[q]} ({q})"
        seen += len(rows)
    return seen


def test_every_verdict_row_at_ci_has_an_id_and_an_interval_inside_its_range(ci_book):
    """The ci book's rows: ids, and intervals inside their quantities' ranges."""
    out, log, _ = ci_book
    assert _rows_have_ids_and_stay_in_range((out / "_build" / "executed" / "notebooks").glob("*.ipynb")) > 0, \
        log[-3000:]


DEFAULT_BUILD = "IMBALANCED_CL_DEFAULT_BUILD"     # a folder holding _build/ of a book executed at default


def test_every_verdict_row_at_default_has_an_id_and_an_interval_inside_its_range():
    """The same at the default profile, on a book already built there (`make book`, ~1.5 h on 2 cores: CI does not
    build it): the repository's own _build, or the folder $IMBALANCED_CL_DEFAULT_BUILD names."""
    import nbformat
    where = Path(os.environ.get(DEFAULT_BUILD) or ROOT) / "_build" / "executed" / "notebooks"
    built = [p for p in where.glob("*.ipynb")
             if nbformat.read(p, 4).metadata.get("imbalanced_cl", {}).get("profile") == "default"]
    if not built:
        pytest.skip(f"no notebook executed at default under {where} (make book, or set {DEFAULT_BUILD})")
    assert _rows_have_ids_and_stay_in_range(built) > 0


def test_book_builds_with_a_page_per_notebook(ci_book):
    out, log, rc = ci_book
    assert rc == 0, log[-4000:]
    html = out / "_build" / "html"
    assert (html / "index.html").exists()
    claim_names = scoreboard.claim_notebooks(ROOT)
    for nb in NOTEBOOKS:
        page = html / nb.relative_to(ROOT).with_suffix(".html")
        assert page.exists(), f"no page for {nb.stem}"
        text = page.read_text()
        assert text.count("<strong>Provenance</strong>") == 1, f"{nb.stem}: the provenance record is not shown once"
        if nb.stem in claim_names:  # one verdict table per claim page (a returned table would be echoed twice)
            # a table past FOLD_PREMISES premise rows shows them in a fold of its own, part of the same output
            folds = text.count('<details class="vt-premise-rows">')
            assert folds <= 1 and text.count('class="verdict-table"') == 1 + folds, f"{nb.stem}: not one verdict table"
        if nb.parent.name == "notebooks":
            assert "colab.research.google.com" in text and "mybinder.org" in text, f"{nb.stem}: no launch buttons"
        assert "cdn.jsdelivr.net" not in text, f"{nb.stem}: a script from a CDN"
        if "window.MathJax" in text:  # a page with math loads MathJax; from the book's own _static
            assert "_static/mathjax/tex-chtml.js" in text, f"{nb.stem}: MathJax not served from the book"
    assert (html / "_static" / "mathjax" / "tex-chtml.js").exists()


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


def _tiny_notebook(path, body, params_source="x = 1", metadata=None):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(params_source, metadata={"tags": ["parameters"]}),
                nbformat.v4.new_code_cell(body)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    if metadata:
        nb.metadata["imbalanced_cl"] = metadata
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
    with pytest.raises(ParameterError, match="unknown parameter not_a_param=1"):
        execution.check_params(src, {"not_a_param": 1})
    proc = subprocess.run([sys.executable, "-m", "imbalanced_cl", "book", "--profile", "huge", "--no-build"],
                          cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 2 and "profile" in proc.stderr


def test_profiles_file_is_readable():
    data = yaml.safe_load((ROOT / "profiles.yaml").read_text())
    assert set(data) == set(PROFILES)


# --- unknown names and bad values stop a run, through papermill and through the runner ---

class _Toy:
    """A config with a bound between two parameters, like Stage1Config's fit_start <= steps - 2."""

    def __init__(self, R=4, steps=60, fit_start=5):
        if R < 1:
            raise ParameterError(f"parameter R={R!r} is invalid: allowed an integer in [1, inf]")
        if not 0 <= fit_start <= steps - 2:
            raise ParameterError(f"parameter fit_start={fit_start!r} is invalid: "
                                 f"allowed an integer in [0, {steps - 2}]")


def test_check_values_reports_every_error_and_both_names_of_a_cross_error():
    dflt = {"R": 4, "steps": 60, "fit_start": 5}
    assert P.check_values(_Toy, dflt, {"R": 8, "steps": 100}) == []
    lines = P.check_values(_Toy, dflt, {"R": 0, "steps": 3})
    assert len(lines) == 2, lines
    assert lines[0].startswith("parameter R=0 is invalid")
    assert "fit_start=5" in lines[1] and "steps=3" in lines[1], lines[1]  # the reader set steps, not fit_start
    assert P.check_values(_Toy, dflt, {"fit_start": 70}) == [
        "parameter fit_start=70 is invalid: allowed an integer in [0, 58]"]


def test_check_notebook_uses_the_config_class_named_in_metadata(tmp_path):
    """The runner builds the notebook's own config class from its defaults and the given values."""
    src = tmp_path / "nb.ipynb"
    _tiny_notebook(src, "pass", params_source="R = 4\nsteps = 60\nfit_start = 5\neps_min = 0.3",
                   metadata={"config": "imbalanced_cl.claims.stage1:Stage1Config"})
    assert P.check_notebook(src, {"R": 2, "steps": 30}) == []
    lines = P.check_notebook(src, {"R": 0, "steps": 3, "eps_minn": 0.1}, "profile ci")
    assert len(lines) == 3, lines
    assert lines[0].startswith("nb (profile ci): unknown parameter eps_minn=0.1 (did you mean eps_min?)"), lines[0]
    assert any(line.startswith("nb (profile ci): parameter R=0 is invalid") for line in lines), lines
    assert any("fit_start=5" in line and "steps=3" in line for line in lines), lines
    _tiny_notebook(src, "pass", metadata={"config": "imbalanced_cl.nowhere:Nothing"})
    with pytest.raises(ParameterError, match="cannot be imported"):
        P.check_notebook(src, {})


def _tiny_book(root: Path, notebooks: dict, profiles: dict):
    """A book root of its own: _toc.yml listing notebooks/NAME for each entry, and profiles.yaml."""
    (root / "notebooks").mkdir(parents=True, exist_ok=True)
    for name, (params_source, body, meta) in notebooks.items():
        _tiny_notebook(root / "notebooks" / f"{name}.ipynb", body, params_source, meta)
    toc = {"format": "jb-book", "root": "intro",
           "chapters": [{"file": f"notebooks/{name}"} for name in notebooks]}
    (root / "_toc.yml").write_text(yaml.safe_dump(toc))
    (root / "profiles.yaml").write_text(yaml.safe_dump(profiles))


def test_runner_validates_every_notebook_before_running_any(tmp_path):
    root, out = tmp_path / "repo", tmp_path / "out"
    stage1 = {"config": "imbalanced_cl.claims.stage1:Stage1Config"}
    _tiny_book(root, {"a": ("x = 1", "pass", None),
                      "b": ("R = 4\nsteps = 60\nfit_start = 5", "pass", stage1)},
               {"ci": {"b": {"R": 0, "stepz": 3}}})
    with pytest.raises(ParameterError) as err:
        book.run_book("ci", out_root=out, build=False, root=root)
    lines = str(err.value).splitlines()
    assert len(lines) == 2 and all(line.startswith("b (profile ci): ") for line in lines), lines
    assert "stepz=3 (did you mean steps?)" in lines[0] and "R=0" in lines[1]
    assert not (out / "_build" / "executed" / "notebooks" / "a.ipynb").exists(), "a ran before b was checked"
    with pytest.raises(ParameterError, match="unknown notebook name.*'c'.*The notebooks are: a, b"):
        book.run_book("ci", out_root=out, only=["c"], build=False, root=root)


def test_cli_prints_one_line_per_error_and_exits_2(tmp_path):
    """Through `python -m imbalanced_cl book`: exit 2, `error:` lines, no traceback (unless --verbose)."""
    mine = tmp_path / "my.yaml"
    mine.write_text("ci:\n  01_stage1_growth: {nosuch: 3, eps_minn: 0.1}\n")
    cmd = [sys.executable, "-m", "imbalanced_cl", "book", "--profile", "ci", "--profiles", str(mine),
           "--no-build", "--out", str(tmp_path)]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 2 and all(line.startswith("error: 01_stage1_growth (profile ci in ") for line in lines)
    assert "did you mean eps_min?" in lines[1] and "Traceback" not in proc.stderr
    assert not (tmp_path / "_build" / "executed").exists()
    verbose = subprocess.run(cmd + ["--verbose"], cwd=ROOT, capture_output=True, text=True)
    assert verbose.returncode != 0 and "Traceback" in verbose.stderr
    only = subprocess.run([sys.executable, "-m", "imbalanced_cl", "book", "--profile", "ci", "--only",
                           "nosuchnotebook", "--out", str(tmp_path)], cwd=ROOT, capture_output=True, text=True)
    assert only.returncode == 2 and "01_stage1_growth" in only.stderr and "Traceback" not in only.stderr


@pytest.mark.parametrize("text, says", [("my.yaml\n", "is not a profiles file: expected a mapping"),
                                         ("- ci\n", "is not a profiles file: expected a mapping"),
                                         ("ci: [01_stage1_growth]\n", "profile 'ci' must map notebooks"),
                                         ("cii: {}\n", "unknown profile 'cii'")])
def test_a_profiles_file_of_the_wrong_shape_is_named_not_read_letter_by_letter(tmp_path, text, says):
    """A profiles file holding a bare string (once read as profiles 'm', 'y', ...) or a list stops with one line."""
    from imbalanced_cl.book.build.profiles import load_all
    mine = tmp_path / "my.yaml"
    mine.write_text(text)
    with pytest.raises(ParameterError, match=re.escape(says)) as err:
        load_all(mine)
    assert str(err.value).startswith("my.yaml") and "\n" not in str(err.value)


_RUN = textwrap.dedent("""
    import json, sys
    from pathlib import Path
    from imbalanced_cl.book.build import runner
    if __name__ == "__main__":     # --jobs starts spawned workers, which import this script again
        kw = json.loads(sys.argv[3])
        sys.exit(runner.run_book("ci", out_root=Path(sys.argv[2]), root=Path(sys.argv[1]), **kw))
""")


def _run_tiny(tmp_path, root, out, **kw):
    """run_book on a tiny root in a fresh process (as the command line does): (exit code, stdout + stderr)."""
    script = tmp_path / "run.py"
    script.write_text(_RUN)
    proc = subprocess.run([sys.executable, str(script), str(root), str(out), json.dumps(kw)],
                          capture_output=True, text=True, timeout=600)
    return proc.returncode, proc.stdout + proc.stderr


def _interrupt_a_run(tmp_path):
    """Execute a tiny notebook, then start a slow re-run and press Ctrl-C (SIGINT) during it.

    Returns (exit code, stderr, executed copy, its bytes and key before the interrupted run).
    """
    root, out = tmp_path / "repo", tmp_path / "out"
    _tiny_book(root, {"a": ("wait = 0", "import time\ntime.sleep(wait)\nprint('slept', wait)", None)}, {"ci": {}})
    rc, log = _run_tiny(tmp_path, root, out, build=False)
    assert rc == 0, log[-2000:]
    executed = out / "_build" / "executed" / "notebooks" / "a.ipynb"
    good, key = executed.read_bytes(), executed.with_suffix(".key").read_text()
    (root / "profiles.yaml").write_text(yaml.safe_dump({"ci": {"a": {"wait": 120}}}))  # a new run, a slow one
    partial = executed.with_name(".a.partial.ipynb")
    # SIGINT back to its default in the child: a suite started in the background by a non-interactive shell inherits
    # SIGINT ignored, and Python then never raises KeyboardInterrupt (seen with `nohup bash .ci/run &`)
    proc = subprocess.Popen([sys.executable, str(tmp_path / "run.py"), str(root), str(out),
                             json.dumps({"build": False})],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.time() + 120
    while not partial.exists() and time.time() < deadline and proc.poll() is None:
        time.sleep(0.2)
    assert partial.exists(), "papermill never wrote its partial output"
    time.sleep(1.0)  # the kernel is now inside time.sleep(wait)
    os.kill(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    return proc.returncode, err, executed, good, key


def test_interrupted_run_removes_partial_output_and_keeps_the_good_copy(tmp_path):
    """Ctrl-C during a run: exit 130, no *.partial.ipynb left, the previous executed copy unchanged."""
    rc, err, executed, good, key = _interrupt_a_run(tmp_path)
    assert rc == 130, err[-2000:]
    # The runner's last word is one line; no KeyboardInterrupt traceback (the dying kernel may log its own).
    assert any(line.startswith("[stopped] notebooks/a.ipynb: interrupted") for line in err.splitlines()), err[-2000:]
    assert "KeyboardInterrupt" not in err and "imbalanced_cl/book/build/runner.py" not in err
    assert not list(executed.parent.glob(".*partial*")), "the partial output was left behind"
    assert executed.read_bytes() == good and executed.with_suffix(".key").read_text() == key


def test_a_cell_past_the_profiles_time_limit_stops_the_run_in_one_line(tmp_path, monkeypatch, capsys):
    """A cell that never returns (here one that sleeps past a 3 s limit) fails its notebook with one line naming the
    notebook and the cell, keeps the previous executed copy, and leaves no partial output: nbclient alone would wait
    for ever (a kernel message lost under load once hung a ci book)."""
    root, out = tmp_path / "repo", tmp_path / "out"
    _tiny_book(root, {"a": ("wait = 0", "import time\ntime.sleep(wait)", None)}, {"ci": {}})
    assert book.run_book("ci", out_root=out, build=False, root=root) == 0
    executed = out / "_build" / "executed" / "notebooks" / "a.ipynb"
    good = executed.read_bytes()
    (root / "profiles.yaml").write_text(yaml.safe_dump({"ci": {"a": {"wait": 120}}}))
    monkeypatch.setitem(execution.CELL_TIMEOUT_S, "ci", 3.0)
    t0 = time.time()
    assert book.run_book("ci", out_root=out, build=False, root=root) == 1
    assert time.time() - t0 < 100, "the limit did not stop the cell"
    err = capsys.readouterr().err
    failed = [line for line in err.splitlines() if line.startswith("[FAILED]")]
    # cells: the parameters (index 0), papermill's injected parameters (1), the sleeping body (2)
    assert failed == ["[FAILED]  notebooks/a.ipynb: cell [3] (index 2) ran past the per-cell limit of 3 s and was "
                      "stopped (a kernel that no longer answers, or a run far slower than its profile plans)"], err
    assert executed.read_bytes() == good and not list(executed.parent.glob(".*partial*"))


def test_each_profile_has_its_cell_time_limit():
    """ci and default cells are limited (a hang fails the run), paper cells and a user's own profile are not."""
    assert execution.cell_timeout("ci") == 900 and execution.cell_timeout("default") == 7200
    assert execution.cell_timeout("paper") is None and execution.cell_timeout("mine") is None


def test_runner_sweeps_partial_files_left_by_a_killed_run(tmp_path):
    root, out = tmp_path / "repo", tmp_path / "out"
    _tiny_book(root, {"a": ("x = 1", "pass", None)}, {"ci": {}})
    stale = out / "_build" / "executed" / "notebooks" / ".a.partial.ipynb"
    stale.parent.mkdir(parents=True)
    stale.write_text("{}")
    assert book.run_book("ci", out_root=out, build=False, root=root) == 0
    assert not stale.exists() and (stale.parent / "a.ipynb").exists()
    meta = nbformat.read(stale.parent / "a.ipynb", as_version=4).metadata
    assert meta["imbalanced_cl"]["profile"] == "ci"  # the scoreboard reads which profile ran each notebook


def test_failed_html_build_keeps_the_previous_html(tmp_path):
    """A build that fails (here: a broken cross-reference under --strict) leaves the previous _build/html as it was."""
    executed, out = tmp_path / "executed", tmp_path / "out"
    executed.mkdir()
    (executed / "_config.yml").write_text("title: t\nexecute:\n  execute_notebooks: 'off'\n")
    (executed / "_toc.yml").write_text("format: jb-book\nroot: intro\n")
    (executed / "intro.md").write_text("# Intro\n\nA link to {ref}`nowhere-at-all`.\n")
    previous = out / "_build" / "html" / "index.html"
    previous.parent.mkdir(parents=True)
    previous.write_text("the good build")
    rc = book.build_html(executed, out, strict=True)
    assert rc != 0
    assert (previous.read_text() == "the good build"
            and sorted(p.name for p in previous.parent.iterdir()) == ["index.html"])


# --- the bad-input table of book/reproducing.md, row by row ---

def _bad_input_rows() -> list[dict]:
    """The rows of the table under "When something is wrong" in book/reproducing.md."""
    text = (ROOT / "book" / "reproducing.md").read_text()
    section = text.split("## When something is wrong", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        if line.startswith("| ") and len(cells) == 4 and cells[3].isdigit():
            rows.append({"mistake": cells[0], "try": cells[1], "see": cells[2], "exit": int(cells[3])})
    return rows


def _spans(cell: str) -> list[str]:
    return cell.split("`")[1::2]


def _pattern(fragment: str) -> str:
    """A line of the table as a regex: NAME, N, I stand for a notebook, a count, an index; … for the rest."""
    out = re.escape(fragment)
    for word, rx in (("NAME", r"\w+"), ("N", r"\d+"), ("I", r"\d+")):
        out = re.sub(rf"(?<![A-Za-z_]){word}(?![A-Za-z_])", lambda m, rx=rx: rx, out)
    out = out.replace(r"\ " + re.escape("…"), ".*").replace(re.escape("…"), ".*")
    return out.replace(r"\ ", " +").replace(" ", " +")


def _scenario_failing_notebook(tmp_path):
    root, out = tmp_path / "repo", tmp_path / "out"
    _tiny_book(root, {"broken": ("x = 1", "{}['nope']", None)}, {"ci": {}})
    return _run_tiny(tmp_path, root, out, build=False)


def _scenario_interrupt(tmp_path):
    rc, err, *_ = _interrupt_a_run(tmp_path)
    return rc, err


def _scenario_html_build_fails(tmp_path):
    root, out = tmp_path / "repo", tmp_path / "out"
    _tiny_book(root, {"a": ("x = 1", "pass", None)}, {"ci": {}})
    (root / "_toc.yml").write_text("format: jb-book\nroot: intro\nchapters:\n  - file: notebooks/a\n")
    (root / "_config.yml").write_text("title: t\nexecute:\n  execute_notebooks: 'off'\n")
    (root / "intro.md").write_text("# Intro\n\nA link to {ref}`nowhere-at-all`.\n")
    return _run_tiny(tmp_path, root, out, strict=True)


_SCENARIOS = {"A notebook that raises an error": _scenario_failing_notebook,
              "Ctrl-C during a run": _scenario_interrupt,
              "A page the HTML build cannot render (with `--strict`, any Sphinx warning)": _scenario_html_build_fails}


def _run_row(row, tmp_path):
    spans = _spans(row["try"])
    if not spans or not spans[0].startswith(".venv/bin/"):
        return _SCENARIOS[row["mistake"]](tmp_path)
    bindir = Path(sys.executable).parent
    cmd = [sys.executable if a == ".venv/bin/python" else a.replace(".venv/bin/", f"{bindir}/")
           for a in spans[0].split()]
    cmd = [str(tmp_path / "out.ipynb") if a == "out.ipynb" else a for a in cmd]
    if "my.yaml" in cmd:
        (tmp_path / "my.yaml").write_text(spans[-1])  # the row reads "`COMMAND`, `my.yaml`: `CONTENT`"
        cmd = [str(tmp_path / "my.yaml") if a == "my.yaml" else a for a in cmd]
    if "imbalanced_cl" in cmd and "book" in cmd:
        cmd += ["--out", str(tmp_path / "book")]  # never touch the repository's own _build
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)
    return proc.returncode, (proc.stdout + proc.stderr).replace(str(tmp_path / "my.yaml"), "my.yaml")


BAD_INPUT = _bad_input_rows()


def test_bad_input_table_has_every_mistake():
    mistakes = " ".join(r["mistake"] for r in BAD_INPUT)
    for word in ("--only", "does not have", "misspelt", "range", "profiles file", "another parameter", "profile",
                 "raises", "Ctrl-C", "HTML"):
        assert word in mistakes, f"no row for {word!r}"


@pytest.mark.parametrize("row", BAD_INPUT, ids=lambda r: r["mistake"][:40])
def test_bad_input_table(row, tmp_path):
    """Each row of the table: the command (or scenario) exits with the stated code and prints the stated line."""
    rc, output = _run_row(row, tmp_path)
    assert rc == row["exit"], f"exit {rc}, the table says {row['exit']}:\n{output[-3000:]}"
    for fragment in _spans(row["see"]):
        assert re.search(_pattern(fragment), output), f"not in the output: {fragment!r}\n{output[-3000:]}"
    raw_papermill = _spans(row["try"])[0].startswith(".venv/bin/papermill") if _spans(row["try"]) else False
    if raw_papermill and "Traceback (most recent call last):" in output:  # papermill's traceback is in the table too
        assert "Traceback (most recent call last):" in _spans(row["see"]), f"the table hides a traceback:\n{output}"
    if "last, `" in row["see"] and row["see"].endswith("`"):  # "... and, last, `LINE`": the output ends with LINE
        last = [line for line in output.splitlines() if line.strip()][-1]
        assert re.search(_pattern(_spans(row["see"])[-1]), last), f"the last line is {last!r}, not the table's"


def test_jobs_run_notebooks_in_worker_processes_with_their_share_of_threads(tmp_path):
    """--jobs 2: both notebooks execute (in spawned workers whose kernels see OMP_NUM_THREADS = cores // 2), their
    keys are written, and a second run finds them cached; jobs = 0 is refused before anything runs."""
    root, out = tmp_path / "repo", tmp_path / "out"
    body = "import os\nprint('threads', os.environ.get('OMP_NUM_THREADS'), x)"
    _tiny_book(root, {"a": ("x = 1", body, None), "b": ("x = 2", body, None)}, {"ci": {}})
    rc, log = _run_tiny(tmp_path, root, out, build=False, jobs=2)
    assert rc == 0, log[-2000:]
    cores = len(os.sched_getaffinity(0))
    for name, x in (("a", 1), ("b", 2)):
        done = out / "_build" / "executed" / "notebooks" / f"{name}.ipynb"
        text = "".join(o.get("text", "") for c in nbformat.read(done, as_version=4).cells for o in c.get("outputs", []))
        assert f"threads {max(1, cores // 2)} {x}" in text, text
        assert done.with_suffix(".key").exists()
    rc, log = _run_tiny(tmp_path, root, out, build=False, jobs=2)
    assert rc == 0 and log.count("[cached]") == 2, log[-2000:]
    with pytest.raises(ParameterError, match="jobs"):
        book.run_book("ci", out_root=out, build=False, root=root, jobs=0)


def _empty_notebook(folder: Path) -> Path:
    """A notebook with no cells, for tests that replace papermill."""
    nb = folder / "a.ipynb"
    nb.write_text(json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    return nb


def test_a_kernel_that_dies_while_starting_is_started_again_once(tmp_path, monkeypatch):
    """Two kernels started at once can race for one TCP port; the kernel then dies before it runs any cell. The
    runner starts it again once; a second such death, or any other error, is reported, not retried."""
    import papermill

    from imbalanced_cl.book.build import execution
    calls = []

    def flaky(nb, out, **kw):
        calls.append(nb)
        if len(calls) <= fails:
            raise RuntimeError("Kernel died before replying to kernel_info")
        Path(out).write_text(Path(nb).read_text())

    monkeypatch.setattr(papermill, "execute_notebook", flaky)
    nb = _empty_notebook(tmp_path)
    fails = 1
    assert execution.execute(nb, tmp_path / "out" / "a.ipynb", {}, tmp_path) == (True, "ok") and len(calls) == 2
    calls.clear()
    fails = 2
    ok, why = execution.execute(nb, tmp_path / "out" / "a.ipynb", {}, tmp_path)
    assert not ok and "kernel_info" in why and len(calls) == 2


def test_an_error_other_than_a_dead_kernel_start_is_not_retried(tmp_path, monkeypatch):
    import papermill

    from imbalanced_cl.book.build import execution
    calls = []

    def broken(nb, out, **kw):
        calls.append(nb)
        raise RuntimeError("Kernel died")   # mid-run: cells may have run, so never started again

    monkeypatch.setattr(papermill, "execute_notebook", broken)
    nb = _empty_notebook(tmp_path)
    ok, why = execution.execute(nb, tmp_path / "out" / "a.ipynb", {}, tmp_path)
    assert not ok and len(calls) == 1
