"""Measure and judge apart, notebooks 05 and 09 (issue 47, item 1): a campaign unit keeps what each notebook measured
(its stages, campaign/stages.py), judging the record executes the notebook with every stage read back and gives the
recorded rows again, the rows come from the stages alone (an edited stage moves them), a missing stage is named, and
the stage values at ci are storable and small (a record is committed to git)."""
from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import pytest
import yaml

from imbalanced_cl import verdict as V
from imbalanced_cl.book.records.record import read_rows
from imbalanced_cl.campaign import typed

ROOT = Path(__file__).resolve().parents[1]

# What a stage may keep at ci; the paper profile's estimate is in the report of issue 47 (well under 5 MB a record).
CI_STAGE_BYTES = 512 * 2**10


def _ci(notebook: str) -> dict:
    """The ci profile's values of a notebook, lists as tuples (the config's own types)."""
    values = yaml.safe_load((ROOT / "profiles.yaml").read_text())["ci"][notebook]
    return {k: tuple(v) if isinstance(v, list) else v for k, v in values.items()}


def _stored(value, where: Path) -> int:
    """Write a stage as campaign/typed.py does; the bytes of its files."""
    return sum(p.stat().st_size for p in typed.save(value, where))


def _same(a, b) -> bool:
    """Exact equality of two stage values (arrays and tensors by dtype, shape and bytes)."""
    import dataclasses

    import torch
    if dataclasses.is_dataclass(a):
        return type(a) is type(b) and all(_same(getattr(a, f.name), getattr(b, f.name)) for f in dataclasses.fields(a))
    if isinstance(a, dict):
        return isinstance(b, dict) and list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, torch.Tensor):
        return isinstance(b, torch.Tensor) and a.dtype == b.dtype and torch.equal(a, b)
    if isinstance(a, np.ndarray):
        return isinstance(b, np.ndarray) and a.dtype == b.dtype and np.array_equal(a, b, equal_nan=a.dtype.kind == "f")
    return a == b or (a != a and b != b)


@pytest.mark.slow
def test_the_stage_values_at_ci_are_storable_small_and_read_back_exactly(tmp_path):
    """The stages of 05 and 09 at the ci profile hold measurements only (typed.save refuses a Run, a model or a
    training set), a few hundred kB at most, and read back equal, field by field."""
    from imbalanced_cl.claims import appendix as A
    from imbalanced_cl.claims import decoupling as DC
    values = {"appendix": A.measure_appendix(A.AppendixConfig(**_ci("05_appendix_figures"), progress=False,
                                                              workers=1)),
              "views": DC.view_correlations(cfg := DC.DecouplingConfig(**_ci("09_feature_decoupling"), workers=1,
                                                                       threads=1, progress=False)),
              "grids": DC.measure_grids(cfg)}
    assert len(values["grids"]) == 2          # the grid and its sensitivity run (contrast_steps > 0 at ci)
    for name, value in values.items():
        size = _stored(value, tmp_path / name)
        assert 0 < size < CI_STAGE_BYTES, (name, size)
        assert _same(value, typed.load(tmp_path / name)), name
    m = values["appendix"]
    assert m.trained.shape == (2, len(m.points), 3) and (m.trained == 1).all()   # every training done once
    res = A.appendix_result(A.AppendixConfig(**_ci("05_appendix_figures")), typed.load(tmp_path / "appendix"))
    assert set(res.trained.values()) == {1} and len(res.trained) == m.trained.size


def _unit(name: str, tmp_path: Path, ci_unit_record):
    """A campaign unit of a notebook at ci, run to its record: (path, record, its stages folder, wall seconds)."""
    from imbalanced_cl.campaign import judge
    path, rec, _, wall_s = ci_unit_record(name, tmp_path)
    return path, rec, judge.kept_stages(path, rec), wall_s


def _rows(rows: list[V.Verdict]) -> dict:
    """{row id: (verdict, measured, interval)} of verdict rows, as JSON (verdict.to_json: NaN as None, equal to
    itself)."""
    return {j["id"]: (j["verdict"], j["measured"], j["lo"], j["hi"]) for j in map(V.to_json, rows)}


def _recorded(rec: dict) -> list[V.Verdict]:
    """A record's stored rows, read back as the book reads them."""
    return read_rows(rec["payload"]["rows"])


def _judged_again(path: Path, rec: dict, where: Path, out: Path, stage: str, edit, wall_s: float) -> list[dict]:
    """Judge the record as kept (its rows again, exactly), then with one stage edited by `edit` (the rows it
    returns), then without that stage (needs re-measuring, named)."""
    from imbalanced_cl.campaign import judge
    t0 = time.time()
    rows, why = judge.judge(ROOT, path, rec, out / "judged.ipynb")
    assert why == "" and time.time() - t0 < wall_s + 60
    assert _rows(rows) == _rows(_recorded(rec))
    kept = typed.load(where / stage)
    typed.save(edit(kept), where / stage)
    edited, why = judge.judge(ROOT, path, rec, out / "edited.ipynb")
    assert why == ""
    (where / f"{stage}.json").unlink()
    none, why = judge.judge(ROOT, path, rec, out / "again.ipynb")
    assert none is None and why == f"needs re-measuring (stage {stage}: not in the record)"
    return edited


@pytest.mark.slow
def test_notebook_05_unit_keeps_its_measurements_and_is_judged_again_from_them_alone(tmp_path, ci_unit_record):
    """Notebook 05 at ci: the record keeps one stage (every training's Fig. 1-4 measurements), judging it gives the
    recorded rows exactly, and the rows follow the stage: Fig. 1's count negated turns its trend around."""
    path, rec, where, wall_s = _unit("05_appendix_figures", tmp_path, ci_unit_record)
    assert rec["payload"]["stages"] == ["appendix"] and (where / "appendix.npz").exists()
    text = json.dumps(json.loads((where / "appendix.json").read_text()))
    assert "AppendixConfig" not in text          # judged under the notebook's config, never the recorded one

    def negate(m):
        m.values["align_count"] = -m.values["align_count"]
        return m
    edited = _rows(_judged_again(path, rec, where, tmp_path, "appendix", negate, wall_s))
    recorded = _rows(_recorded(rec))
    assert recorded["fig1_trend"][1] != 0 and edited["fig1_trend"][1] == pytest.approx(-recorded["fig1_trend"][1])
    assert {k: v for k, v in edited.items() if not k.startswith("fig1")} == \
        {k: v for k, v in recorded.items() if not k.startswith("fig1")}


@pytest.mark.slow
def test_notebook_09_unit_keeps_its_measurements_and_is_judged_again_from_them_alone(tmp_path, ci_unit_record):
    """Notebook 09 at ci: the record keeps the view correlations and the grids (with the sensitivity run), judging it
    gives the recorded rows exactly, and the rows follow the stage: a grid whose measurements are all zero reads
    otherwise."""
    import dataclasses

    import torch
    path, rec, where, wall_s = _unit("09_feature_decoupling", tmp_path, ci_unit_record)
    assert rec["payload"]["stages"] == ["grids", "views"]

    def zeros(grids):
        return [dataclasses.replace(g, share=torch.zeros_like(g.share), removal=torch.zeros_like(g.removal))
                for g in grids]
    edited = _rows(_judged_again(path, rec, where, tmp_path, "grids", zeros, wall_s))
    assert edited.keys() == _rows(_recorded(rec)).keys() and edited != _rows(_recorded(rec))


@pytest.mark.slow
def test_notebook_06_stage_at_ci_keeps_per_run_measurements_only(tmp_path):
    """Notebook 06's stage at ci: one row per (rho, seed, method) with its accuracies, per-class accuracies and
    per-epoch series, storable, small and read back exactly; no network, no image (typed.save refuses them)."""
    from imbalanced_cl.lt.config import LTConfig
    from imbalanced_cl.lt.experiment import measure_runs
    cfg = LTConfig(**_ci("06_lt_benchmarks"), workers=1)
    runs = measure_runs(cfg, log=lambda *a: None)
    assert len(runs.rows) == len(cfg.rhos) * len(cfg.seeds) * (len(cfg.methods) + ("alg1" in cfg.methods))
    size = _stored(runs, tmp_path / "runs")
    assert 0 < size < CI_STAGE_BYTES and _same(runs, typed.load(tmp_path / "runs"))
    for r in runs.rows:
        assert len(r["per_class"]) == len(r["train_counts"]) and r["losses"].dtype == np.float64
        assert not any(hasattr(v, "state_dict") or (isinstance(v, np.ndarray) and v.ndim > 1) for v in r.values())


@pytest.mark.slow
def test_notebook_06_unit_keeps_its_measurements_and_is_judged_again_from_them_alone(tmp_path, ci_unit_record):
    """Notebook 06 at ci: the record keeps its runs, judging it gives the recorded rows exactly, and the rows follow
    the stage: SDCLR's accuracy raised by 5 points on every run raises its paired gain by 5."""
    path, rec, where, wall_s = _unit("06_lt_benchmarks", tmp_path, ci_unit_record)
    assert rec["payload"]["stages"] == ["runs"]

    def better(runs):
        for r in runs.rows:
            r["acc"] += 5.0 if r["method"] == "sdclr" else 0.0
        return runs
    edited = _rows(_judged_again(path, rec, where, tmp_path, "runs", better, wall_s))
    recorded = _rows(_recorded(rec))
    gain = [k for k in recorded if k.startswith("sdclr_acc")]
    assert gain and all(edited[k][1] == pytest.approx(recorded[k][1] + 5.0) for k in gain)
    assert {k: v for k, v in edited.items() if k not in gain} == {k: v for k, v in recorded.items() if k not in gain}
