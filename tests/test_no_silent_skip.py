"""No silent skip: a --set name that no notebook has, corrupt records in every loader, and a record's code version
(what shapes the rows counts; the machine's package versions do not, and are provenance instead)."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from imbalanced_cl import verdict as V
from imbalanced_cl.book.records import record as book_record
from imbalanced_cl.book.build import runner
from imbalanced_cl.book.records import stability
from imbalanced_cl.campaign import record, seeds, status
from imbalanced_cl.campaign.units import Unit
from imbalanced_cl.validate import ParameterError

ROOT = Path(__file__).resolve().parents[1]
NB = "01_stage1_growth"


def _row(claim="c", verdict="holds"):
    return V.Verdict(notebook=NB, claim=claim, source="s", predicted="p", verdict=verdict, measured=1.0, lo=0.5, hi=1.5)


def _stored(claim="c", verdict="holds"):
    """_row as a record stores it (verdict.to_json)."""
    return V.to_json(_row(claim, verdict))


@pytest.mark.parametrize("name, hint", [("eps_minn", "(did you mean eps_min?)"), ("nosuch", "")])
def test_a_set_name_that_no_selected_notebook_has_is_refused_in_one_line(name, hint):
    with pytest.raises(ParameterError) as e:
        runner.plan(ROOT, "ci", [NB], False, {name: 3}, None)
    msg = str(e.value)
    assert len(msg.splitlines()) == 1 and f"--set {name}=3" in msg and "no selected notebook" in msg
    assert hint in msg and ("did you mean" in msg) == bool(hint)


def test_a_set_name_one_selected_notebook_has_is_applied_there():
    _, runs = runner.plan(ROOT, "ci", [NB], False, {"seed": 7}, None)
    assert [p["seed"] for _, p in runs] == [7]


def test_the_command_line_exits_2_on_a_mistyped_set_name(capsys):
    from imbalanced_cl.__main__ import main
    assert main(["book", "--profile", "ci", "--only", NB, "--no-build", "--set", "eps_minn=0.05"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "eps_minn" in err[0] and "eps_min?" in err[0]


def _campaign_root(tmp_path: Path) -> tuple[Path, Unit]:
    """A repository whose notebooks and src are this one's, with an empty results folder; the ci unit of NB."""
    from imbalanced_cl.campaign.kinds import plan_notebooks
    (tmp_path / "notebooks").symlink_to(ROOT / "notebooks")
    (tmp_path / "src").symlink_to(ROOT / "src")
    (unit,) = plan_notebooks("ci", ROOT, [NB])
    return tmp_path, unit


def test_a_corrupt_campaign_record_reads_as_unreadable_not_as_missing(tmp_path):
    root, unit = _campaign_root(tmp_path)
    folder = root / "results" / "campaign" / "ci"
    path = record.write(folder, unit, {"rows": [_stored()]}, {"device": "cpu", "commit": "abc1234", "wall_s": 1.0})
    path.write_text(path.read_text()[:40])                       # truncated mid-write by a full disk, say
    got = book_record.load_campaign(root, "ci")
    assert got[NB]["unreadable"].startswith(path.name) and "not valid JSON" in got[NB]["unreadable"]
    (cell,) = book_record.column([_row()], got)
    assert cell["status"].startswith("record unreadable")
    notes = book_record.unreadable_notes(got)
    assert len(notes) == 1 and path.name in notes[0] and f"verdicts of {NB} are left out" in notes[0]
    path.unlink()
    record.write(folder, unit, {"rows": [_stored()]}, {"device": "cpu", "commit": "abc1234"})
    rows = book_record.load_campaign(root, "ci")[NB]["rows"]
    assert [V.to_json(r) for r in rows] == [_stored()]      # the oracle: the same file, whole


def test_the_paper_column_keeps_a_readable_record_over_an_unreadable_campaign_one(tmp_path):
    root, unit = _campaign_root(tmp_path)
    (root / "results" / "paper").mkdir(parents=True)
    (root / "results" / "paper" / f"{NB}.json").write_text(json.dumps({"device": "cuda", "rows": [_stored()]}))
    bad = record.write(root / "results" / "campaign" / "paper", Unit("notebook", NB, "paper", {}, "x"), {}, {})
    bad.write_text("{")
    got = book_record.paper_records(root)
    assert "unreadable" not in got[NB] and got[NB]["device"] == "cuda"
    (root / "results" / "paper" / f"{NB}.json").write_text('{"rows": [')
    got = book_record.paper_records(root)
    assert got[NB]["unreadable"]
    assert book_record.column([_row()], got)[0]["status"].startswith("record unreadable")


def test_the_scoreboard_summary_says_record_unreadable(tmp_path):
    from imbalanced_cl.book.pages import scoreboard
    board = scoreboard.Board("x", rows=[_row()], status={NB: "ok"},
                             paper={NB: {"notebook": NB, "unreadable": "a.json: not valid JSON", "rows": []}})
    html = scoreboard.summary_table(board, "../notebooks/")
    assert "record unreadable" in html and "recorded" not in html.replace("record unreadable", "")


def test_status_names_a_corrupt_record_and_what_it_leaves_out(tmp_path):
    unit = Unit("notebook", NB, "ci", {"a": 1}, "code")
    path = record.write(tmp_path, unit, {"rows": []}, {"wall_s": 1.0})
    path.write_text("{")
    lines = status.report(status.coverage([unit], tmp_path), "ci", tmp_path)
    text = "\n".join(lines)
    assert "corrupt    1" in text and path.name in text and f"notebook/{NB} counts as not recorded" in text


def test_status_says_where_a_done_unit_was_made(tmp_path):
    unit = Unit("notebook", NB, "ci", {"a": 1}, "code")
    path = record.write(tmp_path, unit, {"rows": [], "stages": ["grid"]}, {"wall_s": 1.0, "device": "cuda",
                        "torch": "2.11.0", "python": "3.12.3", "versions": {"numpy": "2.1.0"}})
    path.with_name(f"{NB}-{unit.key}.stages").mkdir()    # a record that kept its measurements: done, not re-recorded
    text = "\n".join(status.report(status.coverage([unit], tmp_path), "ci", tmp_path))
    assert "made on cuda, torch 2.11.0, Python 3.12.3, numpy 2.1.0" in text


def test_campaign_stability_names_a_corrupt_record(tmp_path):
    unit = Unit("notebook", NB, "ci", {}, "code", seed=0)
    other = seeds.with_seed(unit, 1)
    record.write(tmp_path, unit, {"rows": [_stored()]}, {})
    bad = record.write(tmp_path, other, {"rows": [_stored(verdict="does not hold")]}, {})
    bad.write_text('{"kind": ')
    lines = seeds.report([unit], [0, 1], tmp_path)
    assert any(str(bad) in ln and "left out of the comparison" in ln for ln in lines)
    assert lines[-1].startswith("no notebook is recorded under every seed")


def test_an_unreadable_stability_file_is_named_in_a_warning(tmp_path):
    (tmp_path / "results" / "stability").mkdir(parents=True)
    (tmp_path / "results" / "stability" / "campaign-paper.json").write_text("{")
    with pytest.warns(UserWarning, match="campaign-paper.json: unreadable.*left out"):
        assert stability.load_campaign(tmp_path) is None


def test_an_unreadable_record_file_stands_in_for_its_notebook(tmp_path):
    (tmp_path / "02.json").write_text('{"rows": [1,')
    (tmp_path / "03.json").write_text(json.dumps({"rows": [_stored()]}))
    (tmp_path / "04.json").write_text(json.dumps({"rows": [_stored(), {**_stored(), "verdict": "maybe"}]}))
    got = book_record.load(tmp_path)
    assert got["02"]["unreadable"].startswith("02.json: not valid JSON") and got["03"]["rows"] == [_row()]
    assert got["04"]["unreadable"].startswith("04.json: row 2 is not a verdict row (verdict must be one of")


@pytest.fixture
def copy_root(tmp_path):
    """A copy of the package sources and the notebook, to edit."""
    shutil.copytree(ROOT / "src", tmp_path / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    (tmp_path / "notebooks").mkdir()
    shutil.copy(ROOT / "notebooks" / f"{NB}.ipynb", tmp_path / "notebooks")
    return tmp_path


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, (path, old)
    path.write_text(text.replace(old, new, 1))


def test_a_book_edit_that_changes_the_recorded_rows_makes_the_record_stale(copy_root):
    nb = copy_root / "notebooks" / f"{NB}.ipynb"
    before = book_record.notebook_code(copy_root, nb)
    book = copy_root / "src" / "imbalanced_cl" / "book"
    _edit(book / "plots" / "common.py", "import numpy as np", "import numpy as np\nFIGURE_ONLY = 1")  # draws: no effect
    _edit(book / "records" / "provenance.py", "import json", "import json\nWHERE_ONLY = 1")  # says where: no effect
    assert book_record.notebook_code(copy_root, nb) == before
    _edit(book / "pages" / "tables.py", "from dataclasses import replace",
          "from dataclasses import replace\nROWS_CHANGED = 1")
    after_tables = book_record.notebook_code(copy_root, nb)
    assert after_tables != before
    _edit(book / "records" / "glued.py", "import json", "import json\nREAD_BACK_CHANGED = 1")  # rows_of reads them
    assert book_record.notebook_code(copy_root, nb) != after_tables


def test_a_code_version_leaves_out_the_package_versions(monkeypatch):
    """A record made on a lent GPU machine (another Python and torch) reads as current here when the code and the
    parameters match: the versions are provenance, not code."""
    nb = ROOT / "notebooks" / f"{NB}.ipynb"
    before = (book_record.notebook_code(ROOT, nb), book_record.source_code(ROOT, "import imbalanced_cl.stats"))
    installed = runner.dependency_versions()
    monkeypatch.setattr(runner, "dependency_versions",
                        lambda *a: {**installed, "torch": "2.11.0+cu128", "python": "3.12.3"})
    assert (book_record.notebook_code(ROOT, nb), book_record.source_code(ROOT, "import imbalanced_cl.stats")) == before


def test_the_provenance_names_the_versions_and_the_cpu_kernel_path():
    import torch

    from imbalanced_cl.book.records import provenance
    rec = provenance.record({"seed": 0})
    assert rec["versions"]["torch"] == torch.__version__ and {"numpy", "scipy", "python"} <= set(rec["versions"])
    assert rec["cpu_kernels"] == torch.backends.cpu.get_cpu_capability()
    unit = Unit("notebook", NB, "ci", {}, "code", seed=0)
    prov = record.provenance(ROOT, unit, 1.0, 1)
    assert prov["versions"] == rec["versions"] and prov["cpu_kernels"] == rec["cpu_kernels"]
    line = book_record.device_label(prov)
    assert line.startswith(prov["device"]) and f"torch {torch.__version__}" in line
