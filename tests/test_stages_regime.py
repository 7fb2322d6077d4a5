"""The regime page as a campaign unit (issue 64, item 5): it trains only inside its measured("arms", ...) stage, the
stage keeps measurements (no run) and comes back exactly, and the book builds the page from a record, training
nothing, with the numbers the record holds."""
from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest
import torch

from imbalanced_cl.book.records.record import MEASURES
from imbalanced_cl.campaign import probe, typed
from imbalanced_cl.claims import regime_compare as RC

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "book" / "regime.ipynb"
COSTLY = {"train", "run_arms", "measure_arms", "measure_arm", "measure"}     # what trains or measures at cost
TINY = dict(d=6, d1=12, m=5, L=3, n_pairs=16, R=2, steps=5, progress=False, sigma0=0.3, p_scale=3.0)


def _code() -> str:
    """The page's code cells, the generated parameters cell left out."""
    nb = json.loads(PAGE.read_text())
    return "\n".join("".join(c["source"]) for c in nb["cells"]
                     if c["cell_type"] == "code" and "parameters" not in c["metadata"].get("tags", []))


def test_the_regime_page_trains_only_inside_its_measured_stage_and_is_a_notebook_unit():
    """Every costly call of the page sits in the lambda of its one stage, measured("arms", ...), so a replayed page
    trains nothing; the page is in MEASURES, has its probe, and every profile plans it as a notebook unit."""
    from imbalanced_cl.campaign import kinds
    calls = [n for n in ast.walk(ast.parse(_code())) if isinstance(n, ast.Call)]
    stages = [n for n in calls if getattr(n.func, "id", None) == "measured"]
    assert [n.args[0].value for n in stages] == ["arms"]
    inside = {id(x) for n in stages for x in ast.walk(n.args[1])}
    for node in calls:
        f = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        assert f not in COSTLY or id(node) in inside, f"{f}(...) outside the measured stage"
    assert "regime" in MEASURES and "notebook/regime" in probe.PROBES
    for profile in ("ci", "default", "paper"):
        (unit,) = kinds.plan_notebooks(profile, ROOT, only=["regime"])
        assert (unit.kind, kinds.notebook_file(ROOT, unit.name)) == ("notebook", PAGE)


def test_an_arm_is_measured_kept_and_read_back_exactly_and_the_table_reads_the_same(tmp_path):
    """One arm's measurements (a tiny run) are a few kB without the run, typed.load gives back every tensor's bits,
    and the table built from the copy is the table built from the measurement. The alignment count is applied at
    judging time: a neuron counts at cos >= the threshold, by hand on the stored cosines."""
    from imbalanced_cl.sim.train import train
    cfg = RC.RegimeConfig(**TINY, n_minority=2)
    arm = RC.measure_arm(train(cfg.sim()), cfg)
    assert arm.cos_minority.shape == (2, 5, 2) and arm.share.shape == (len(arm.steps), 2)
    files = typed.save({"live": arm}, tmp_path / "arms")
    assert sum(p.stat().st_size for p in files) < 20_000
    back = typed.load(tmp_path / "arms")["live"]
    for k, v in arm.values.items():
        assert torch.equal(v, back.values[k]), k
    assert torch.equal(arm.cos_minority, back.cos_minority) and torch.equal(arm.share, back.share)
    assert RC.table(RC.summary({"live": arm}, cfg)) == RC.table(RC.summary({"live": back}, cfg))
    back.cos_minority = torch.tensor([[[0.1, 0.5], [0.3, 0.29], [0.9, 0.0], [0.0, 0.0], [0.0, 0.0]]] * 2)
    q = RC.quantities(back, cfg.replace(cos_threshold=0.3))
    assert q["neurons with cos(w, M_j*) ≥ 0.3"].tolist() == [1.5, 1.5]       # (2 + 1) / 2 minority features
    assert q["best minority cosine max_i cos(w_i, M_j*)"].tolist() == pytest.approx([0.7, 0.7])   # (0.9 + 0.5) / 2


@pytest.mark.slow
def test_the_book_builds_the_regime_page_from_its_record_training_nothing(tmp_path, ci_unit_record):
    """The page at ci as a campaign unit: its record keeps the stage "arms" and no rows; the book replays it (the
    runner names the record), and the table shows the stage's numbers, not a training's: a share set by hand in the
    stage is the share the page shows for every live arm. Without the stage the record is not replayed."""
    from imbalanced_cl.book.build.runner import run_book
    from imbalanced_cl.campaign import judge
    path, rec, _, _ = ci_unit_record("regime", tmp_path)
    assert rec["payload"]["stages"] == ["arms"] and rec["payload"]["rows"] == []
    where = judge.kept_stages(path, rec)
    arms = typed.load(where / "arms")
    assert list(arms) == list(RC.ARMS)
    for arm in arms.values():
        arm.values["feature-span share (→ 1, Thm 3.1)"] = torch.full((arm.of,), 0.123456)
    typed.save(arms, where / "arms")
    reps = judge.replays(ROOT, "ci", results=tmp_path)
    assert list(reps) == ["regime"] and reps["regime"]["made_by"].startswith("commit ")
    assert run_book("ci", out_root=tmp_path / "book", only=["regime"], build=False, replays=reps) == 0
    page = (tmp_path / "book" / "_build" / "executed" / "book" / "regime.ipynb").read_text()
    assert "arms: read from the campaign record made by commit " in page and "nothing trained in this build" in page
    assert page.count("0.123 [0.123, 0.123]") == sum(not a.all_dead for a in arms.values()) >= 1   # a dead arm: "—"
    (where / "arms.json").unlink()
    assert judge.replays(ROOT, "ci", results=tmp_path) == {}
