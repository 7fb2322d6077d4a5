"""Checkpoints inside a campaign unit (issue 29: "an interrupted unit runs again from its start, or from a
checkpoint"): a grid computed point by point gives the whole grid's numbers, resumes from the points on disk, and
never leaves a half-written point; a resumed unit's record counts the time of its earlier points; a record under
another seed is another unit, not a stale one."""
from __future__ import annotations

import dataclasses
import json
import os
import re
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from imbalanced_cl.campaign import checkpoint, record, status

sys.path.insert(0, str(Path(__file__).parent))
import campaign_kinds as CK

ROOT = Path(__file__).resolve().parents[1]


@dataclasses.dataclass(frozen=True)
class Grid:
    """A hand-made config with two grid axes."""

    a: tuple = (1, 2)
    b: tuple = (10, 20, 30)

    def replace(self, **kw):
        return dataclasses.replace(self, **kw)


def product_fn(calls: list, fail_at: int | None = None):
    """fn(cfg) -> {(a, b): a * b} over the config's grid, logging each call's grid; raises on call number fail_at."""
    def fn(cfg):
        calls.append((cfg.a, cfg.b))
        if fail_at is not None and len(calls) == fail_at:
            raise KeyboardInterrupt("the budget ran out")
        return {(a, b): a * b for a in cfg.a for b in cfg.b}
    return fn


def same(x, y) -> bool:
    """Deep, exact equality of nested dicts, lists, arrays, tensors and numbers (NaN equal to NaN)."""
    if isinstance(x, dict):
        return isinstance(y, dict) and list(x) == list(y) and all(same(x[k], y[k]) for k in x)
    if dataclasses.is_dataclass(x):
        return type(x) is type(y) and same(dataclasses.asdict(x), dataclasses.asdict(y))
    if isinstance(x, (list, tuple)):
        return type(x) is type(y) and len(x) == len(y) and all(same(u, v) for u, v in zip(x, y, strict=True))
    if isinstance(x, torch.Tensor):
        return isinstance(y, torch.Tensor) and x.shape == y.shape and bool(((x == y) | (x.isnan() & y.isnan())).all())
    if isinstance(x, (np.ndarray, np.generic, float)):
        return np.array_equal(np.asarray(x), np.asarray(y), equal_nan=True)
    return x == y


def test_outside_a_campaign_with_one_worker_grid_is_one_call_of_fn(monkeypatch):
    monkeypatch.delenv(checkpoint.ENV, raising=False)
    calls = []
    out = checkpoint.grid(product_fn(calls), Grid(), ("a", "b"), workers=1)
    assert calls == [((1, 2), (10, 20, 30))] and out[(2, 30)] == 60


def test_an_interrupted_grid_resumes_from_the_points_it_finished(tmp_path, monkeypatch):
    monkeypatch.setenv(checkpoint.ENV, str(tmp_path / "ck"))
    calls = []
    with pytest.raises(KeyboardInterrupt):
        checkpoint.grid(product_fn(calls, fail_at=4), Grid(), ("a", "b"), log=None, workers=1)
    assert calls == [((1,), (10,)), ((1,), (20,)), ((1,), (30,)), ((2,), (10,))]   # one point per call
    assert sorted(p.name for p in (tmp_path / "ck").iterdir()) == [
        "a=1_b=10.pkl", "a=1_b=20.pkl", "a=1_b=30.pkl"]                               # the failed point left nothing
    half = tmp_path / "ck" / ".a=2_b=10.pkl.999.tmp"                                 # as a kill mid-write leaves it
    half.write_bytes(b"\x80\x04")
    assert checkpoint.summary(tmp_path / "ck")["points"] == 3
    assert checkpoint.clean(tmp_path / "ck") == [half] and not half.exists()
    calls.clear()
    lines = []
    out = checkpoint.grid(product_fn(calls), Grid(), ("a", "b"), log=lines.append, workers=1)
    assert calls == [((2,), (10,)), ((2,), (20,)), ((2,), (30,))]                  # only the missing points run
    assert len(lines) == 3 and all("read back" in s for s in lines)
    assert list(out) == [(a, b) for a in (1, 2) for b in (10, 20, 30)]             # the full grid's order
    assert out == {(a, b): a * b for a in (1, 2) for b in (10, 20, 30)}


def test_notebook_03_point_by_point_gives_the_whole_grids_numbers(tmp_path, monkeypatch):
    """The split is safe for notebook 03: each (d, rho) point trained alone equals the same point of the whole grid,
    bit for bit (each point seeds its own training)."""
    from imbalanced_cl.book.build.profiles import params
    from imbalanced_cl.claims import scaling
    cfg = scaling.ScalingConfig(**{k: tuple(v) if isinstance(v, list) else v
                                   for k, v in params("ci", "03_Ni_scaling").items()})
    assert len(cfg.ds) > 1 and len(cfg.ratios) > 1
    monkeypatch.delenv(checkpoint.ENV, raising=False)
    whole = scaling.train_grid(cfg, log=None)
    monkeypatch.setenv(checkpoint.ENV, str(tmp_path / "ck"))
    split = checkpoint.grid(lambda c: scaling.train_grid(c, log=None), cfg, ("ds", "ratios"), workers=1)
    assert checkpoint.summary(tmp_path / "ck")["points"] == len(cfg.ds) * len(cfg.ratios)
    assert same(whole, split)
    again = checkpoint.grid(lambda c: scaling.train_grid(c, log=None), cfg, ("ds", "ratios"), log=None, workers=1)
    assert same(whole, again)                                                        # read back from disk


def test_a_resumed_units_recorded_time_counts_its_checkpointed_points(tmp_path):
    folder = tmp_path / "results"
    (unit,) = CK.plan_tiny("ci", ROOT, n=1)
    record.write(folder, unit, {"value": 1, "checkpoints": {"resumed_points": 2, "resumed_s": 50.0}},
                 {"wall_s": 100.0, "seed": unit.seed})
    other_code = CK.plan_tiny("ci", ROOT, n=1, code="v2")
    assert status.coverage(other_code, folder).time_left(workers=1)[0] == 150.0


def test_a_record_under_another_seed_is_another_unit_not_a_stale_one(tmp_path):
    folder = tmp_path / "results"
    (unit,) = CK.plan_tiny("ci", ROOT, n=1)
    record.write(folder, unit, {"value": 1}, {"wall_s": 100.0, "seed": unit.seed})
    under_seed_7 = [dataclasses.replace(u, seed=7) for u in CK.plan_tiny("ci", ROOT, n=1, extra={"seed": 7})]
    cov = status.coverage(under_seed_7, folder)
    assert not cov.stale and len(cov.outside) == 1 and len(cov.pending) == 1
    other_code = CK.plan_tiny("ci", ROOT, n=1, code="v2")                             # same seed, other code: stale
    assert len(status.coverage(other_code, folder).stale) == 1


def test_a_notebook_unit_resumes_from_its_checkpoints_and_removes_them(tmp_path, monkeypatch):
    """Notebook 03 at ci as a campaign unit, one point already in the campaign folder: the kernel reads it back, the
    record says so, and the folder is gone once the unit is recorded."""
    import time

    from imbalanced_cl.campaign import engine, kinds
    from imbalanced_cl.claims import scaling
    (unit,) = kinds.plan_notebooks("ci", ROOT, only=["03_Ni_scaling"])
    results = tmp_path / "results"
    where = checkpoint.unit_folder(results, unit)
    # beside the records, committed; named by key and code version: a point of other code is never resumed from
    assert where == results / "checkpoints" / f"notebook-03_Ni_scaling-{unit.key}-{unit.code[:8]}"
    cfg = scaling.ScalingConfig(**{k: tuple(v) if isinstance(v, list) else v for k, v in unit.params.items()})
    monkeypatch.setenv(checkpoint.ENV, str(where))
    first = cfg.replace(ds=cfg.ds[:1], ratios=cfg.ratios[:1])
    checkpoint.grid(lambda c: scaling.train_grid(c, log=None), first, ("ds", "ratios"), log=None, workers=1)
    monkeypatch.delenv(checkpoint.ENV)
    assert checkpoint.summary(where)["points"] == 1
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):          # run_unit pins them, as in a worker
        monkeypatch.setenv(var, os.environ.get(var, ""))
    threads = torch.get_num_threads()
    try:
        out = engine.run_unit(kinds.NOTEBOOK, unit, str(results), str(ROOT), time.time() + 600)
    finally:
        torch.set_num_threads(threads)
    assert out["status"] == "ran"
    payload = json.loads(Path(out["path"]).read_text())["payload"]
    assert payload["checkpoints"]["resumed_points"] == 1 and payload["rows"]
    assert not where.exists() and not (results / "checkpoints").exists() and checkpoint.ENV not in os.environ
    # the executed copy lives under this campaign's results folder, named by the unit's key (never in the clone's
    # shared _build/, where two campaigns would read each other's rows)
    executed = json.loads((results / "executed" / f"03_Ni_scaling-{unit.key}.ipynb").read_text())
    text = "".join("".join(o.get("text", "")) for c in executed["cells"] for o in c.get("outputs", []))
    assert f"checkpoint: ds={cfg.ds[0]}_ratios={cfg.ratios[0]} read back" in text


def test_a_failed_unit_keeps_its_checkpoints_for_the_next_run(tmp_path):
    """A unit that raises leaves no record and keeps the points it finished (what the next run resumes from)."""
    import time

    from imbalanced_cl.campaign import engine
    from imbalanced_cl.campaign.units import Kind

    def run(unit, root):
        checkpoint.grid(product_fn([], fail_at=2), Grid(a=(1,), b=(10, 20)), ("a", "b"), log=None, workers=1)
        return {"value": 1}

    (unit,) = CK.plan_tiny("ci", ROOT, n=1)
    results = tmp_path / "results"
    threads = torch.get_num_threads()
    try:
        with pytest.raises(KeyboardInterrupt):
            engine.run_unit(Kind("tiny", CK.plan_tiny, run), unit, str(results), str(ROOT), time.time() + 600)
    finally:
        torch.set_num_threads(threads)
    assert checkpoint.summary(checkpoint.unit_folder(results, unit))["points"] == 1
    assert not record.has(results, unit) and checkpoint.ENV not in os.environ


def test_status_shows_a_pending_units_checkpointed_points(tmp_path, monkeypatch):
    units = CK.plan_tiny("ci", ROOT, n=2)
    monkeypatch.setenv(checkpoint.ENV, str(checkpoint.unit_folder(tmp_path / "results", units[1])))
    checkpoint.grid(product_fn([], fail_at=None), Grid(a=(1,), b=(10, 20)), ("a", "b"), log=None, workers=1)
    cov = status.coverage(units, tmp_path / "results")
    assert list(cov.partial) == [units[1].label] and cov.partial[units[1].label]["points"] == 2
    text = "\n".join(status.report(cov, "ci", tmp_path / "results"))
    assert f"{units[1].label} [2 points (0 s of work) on disk: the next run resumes there]" in text
    assert f"{units[0].label}\n" in text                                            # no points: nothing added


def test_status_names_checkpoint_folders_that_no_pending_unit_claims(tmp_path, monkeypatch):
    """Points left under other parameters (another key) are never read back; status names their folder so that a
    reader can delete it. Points of the same unit under other code are shown as the next run's to adopt."""
    results = tmp_path / "results"
    (old,) = CK.plan_tiny("ci", ROOT, n=1, code="v0", extra={"size": 3})
    monkeypatch.setenv(checkpoint.ENV, str(checkpoint.unit_folder(results, old)))
    checkpoint.grid(product_fn([]), Grid(a=(1,), b=(10,)), ("a", "b"), log=None, workers=1)
    now = CK.plan_tiny("ci", ROOT, n=1)                                             # other parameters, today's code
    assert now[0].key != old.key
    cov = status.coverage(now, results)
    assert not cov.partial and not cov.adoptable
    assert [p.name for p in cov.unclaimed] == [checkpoint.unit_folder(results, old).name]
    assert checkpoint.unit_folder(results, old).name in "\n".join(status.report(cov, "ci", results))
    assert status.coverage([old], results).unclaimed == []                         # its own unit claims it
    (same_key,) = CK.plan_tiny("ci", ROOT, n=1, extra={"size": 3})                  # same unit, today's code
    cov = status.coverage([same_key], results)
    assert not cov.unclaimed and list(cov.adoptable) == [same_key.label]
    assert ("[1 point (0 s of work) on disk under other code: the next run adopts them if its probe gives the same "
            "numbers]") in "\n".join(status.report(cov, "ci", results))


def _points_under(results, unit, commit="c0ffee", dirty=False, n_b=(10, 20)):
    """Grid points of `unit` in its checkpoint folder, with the folder's origin (commit, code, parameters)."""
    where = checkpoint.unit_folder(results, unit)
    os.environ[checkpoint.ENV] = str(where)
    try:
        checkpoint.grid(product_fn([]), Grid(a=(1,), b=n_b), ("a", "b"), log=None, workers=1)
    finally:
        del os.environ[checkpoint.ENV]
    checkpoint.write_origin(where, {"commit": commit, "dirty": dirty}, unit)
    return where


def test_points_under_other_code_are_adopted_only_when_the_probe_gives_the_same_numbers(tmp_path):
    """A refactor keeps finished grid points as it keeps records: the old folder's origin goes to the probe (as a
    record would), and only an equal answer moves its points to today's folder; a moved probe, or a folder with no
    origin, leaves them where they are."""
    results = tmp_path / "results"
    (old,) = CK.plan_tiny("ci", ROOT, n=1, code="v0")
    (now,) = CK.plan_tiny("ci", ROOT, n=1)
    assert old.key == now.key and old.code != now.code
    where = _points_under(results, old)
    seen = []

    def moved(rec):
        seen.append(rec)
        return False, "probe tiny moved: the code of c0ffee gives 1, today's gives 2"

    said = checkpoint.adopt(results, now, moved)
    assert said == (f"checkpoints {where.name} not adopted: probe tiny moved: the code of c0ffee gives 1, "
                    "today's gives 2")
    assert seen[0]["provenance"] == {"commit": "c0ffee", "dirty": False} and seen[0]["measure_code"] == "v0"
    assert seen[0]["params"] == old.params
    assert where.is_dir() and not checkpoint.unit_folder(results, now).exists()
    said = checkpoint.adopt(results, now, lambda rec: (True, "probe tiny gives the same numbers (ab12)"))
    assert said == "checkpoints: 2 points computed under other code adopted (probe tiny gives the same numbers (ab12))"
    assert not where.exists() and checkpoint.summary(checkpoint.unit_folder(results, now))["points"] == 2
    assert not (checkpoint.unit_folder(results, now) / checkpoint.ORIGIN).exists()   # today's run writes its own
    # a folder of points from before origins were written is never adopted
    (older,) = CK.plan_tiny("ci", ROOT, n=1, code="v-1")
    bare = _points_under(results, older)
    (bare / checkpoint.ORIGIN).unlink()
    assert checkpoint.adopt(results, dataclasses.replace(now, code="v2"), lambda rec: (True, "")) == ""
    assert bare.is_dir()


def test_a_unit_run_adopts_points_of_other_code_and_resumes_from_them(tmp_path, monkeypatch):
    """engine.run_unit asks the unit's probe about points under other code before it runs, resumes from them when it
    agrees (fn is called only for the points not yet done), and says so in the record's provenance."""
    import time

    from imbalanced_cl.campaign import engine, probe
    from imbalanced_cl.campaign.units import Kind

    calls = []

    def run(unit, root):
        checkpoint.grid(product_fn(calls), Grid(a=(1,), b=(10, 20, 30)), ("a", "b"), log=None, workers=1)
        return {"value": 1}

    results = tmp_path / "results"
    (old,) = CK.plan_tiny("ci", ROOT, n=1, code="v0")
    (now,) = CK.plan_tiny("ci", ROOT, n=1)
    _points_under(results, old, n_b=(10, 20))
    asked = []
    monkeypatch.setattr(probe, "same_numbers", lambda kind, rec, params, code, root: (
        asked.append((kind, rec["provenance"]["commit"], code)) or (True, "probe tiny gives the same numbers")))
    threads = torch.get_num_threads()
    try:
        out = engine.run_unit(Kind("tiny", CK.plan_tiny, run), now, str(results), str(ROOT), time.time() + 600)
    finally:
        torch.set_num_threads(threads)
    assert out["status"] == "ran" and asked == [("tiny", "c0ffee", now.code)]
    assert len(calls) == 1                                     # only b = 30 was computed
    prov = record.read(Path(out["path"]))["provenance"]
    assert prov["adopted"] == ("checkpoints: 2 points computed under other code adopted "
                               "(probe tiny gives the same numbers)")
    assert not (results / "checkpoints").exists()


def test_a_stopped_notebook_unit_reads_its_finished_stages_back(tmp_path, monkeypatch, capsys):
    """In a campaign unit a stage is kept as it finishes; the next run of the same unit reads it back, computing
    nothing, and a damaged stage file is measured again."""
    from imbalanced_cl.campaign import stages
    monkeypatch.setenv(stages.STAGES_ENV, str(tmp_path / "stages"))
    monkeypatch.setenv(stages.STAGES_MODE_ENV, "record")
    calls = []
    first = stages.measured("grid", lambda: calls.append(1) or {"x": np.arange(3.0)})
    (tmp_path / "stages" / ".grid.json.tmp-1").write_text("half")
    assert stages.clean(tmp_path / "stages") == ["grid"] and not list((tmp_path / "stages").glob(".*"))
    again = stages.measured("grid", lambda: calls.append(1) or {"x": np.zeros(3)})
    assert calls == [1] and np.array_equal(again["x"], first["x"])
    assert "stage grid: read back" in capsys.readouterr().out
    (tmp_path / "stages" / "grid.json").write_text("{damaged")
    third = stages.measured("grid", lambda: calls.append(1) or {"x": np.zeros(3)})
    assert calls == [1, 1] and np.array_equal(third["x"], np.zeros(3))


def test_points_in_worker_processes_give_the_whole_grids_numbers_and_print_in_grid_order(tmp_path, monkeypatch,
                                                                                         capfd):
    """workers=2 (issue 30): notebook 03's points run in two processes of one thread each and merge to fn(cfg) bit
    for bit, with each point's printed line shown here in grid order; in a campaign unit, a kept point is read back
    and the others are computed in the workers and kept."""
    import functools

    from imbalanced_cl.book.build.profiles import params
    from imbalanced_cl.claims import scaling
    cfg = scaling.ScalingConfig(**{k: tuple(v) if isinstance(v, list) else v
                                   for k, v in params("ci", "03_Ni_scaling").items()})
    monkeypatch.delenv(checkpoint.ENV, raising=False)
    whole = scaling.train_grid(cfg, log=None)
    capfd.readouterr()
    split = checkpoint.grid(scaling.train_grid, cfg, ("ds", "ratios"), workers=2)
    assert same(whole, split)
    printed = [line for line in capfd.readouterr().out.splitlines() if line.startswith("d=")]
    assert [tuple(map(float, re.findall(r"(?:d|rho)=\s*([0-9.]+)", line)[:2])) for line in printed] == [
        (float(d), float(r)) for d in cfg.ds for r in cfg.ratios]
    monkeypatch.setenv(checkpoint.ENV, str(tmp_path / "ck"))
    quiet = functools.partial(scaling.train_grid, log=None)
    first = cfg.replace(ds=cfg.ds[:1], ratios=cfg.ratios[:1])
    checkpoint.grid(quiet, first, ("ds", "ratios"), log=None, workers=1)
    lines = []
    resumed = checkpoint.grid(quiet, cfg, ("ds", "ratios"), log=lines.append, workers=2)
    assert len(lines) == 1 and "read back" in lines[0]
    assert checkpoint.summary(tmp_path / "ck")["points"] == len(cfg.ds) * len(cfg.ratios)
    assert same(whole, resumed)


def test_a_replayed_record_without_an_optional_stage_is_judged_without_it(tmp_path, monkeypatch, capsys):
    """A stage a notebook added after some of its records were made (notebook 02's push) is optional: replayed from a
    record that lacks it, it is None with one line, and nothing is computed; a required stage still stops the run with
    "needs re-measuring"; a record that has the optional stage reads it back."""
    from imbalanced_cl.campaign import stages
    monkeypatch.setenv(stages.STAGES_ENV, str(tmp_path / "stages"))
    monkeypatch.setenv(stages.STAGES_MODE_ENV, "replay")
    calls = []
    assert stages.measured("push", lambda: calls.append(1), optional=True) is None and calls == []
    assert capsys.readouterr().out == ("stage push: not in this record (made before the stage existed); "
                                       "judged without it\n")
    with pytest.raises(stages.NeedsRemeasuring, match=r"needs re-measuring \(stage grid: not in the record\)"):
        stages.measured("grid", lambda: calls.append(1))
    monkeypatch.setenv(stages.STAGES_MODE_ENV, "record")
    stages.measured("push", lambda: {"x": np.arange(2.0)}, optional=True)
    monkeypatch.setenv(stages.STAGES_MODE_ENV, "replay")
    assert np.array_equal(stages.measured("push", lambda: calls.append(1), optional=True)["x"], np.arange(2.0))
    assert calls == []
