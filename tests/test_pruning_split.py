"""Notebook 04 in parts (issue 64): at the paper profile its own unit measures the part that decides claim 4's rows,
and the alpha and eps_min grids are campaign units of their own (kind pruning_sweep). Each part measures what the
whole run measures; a sweep not recorded yet reads "pending", row by row and on the page."""
from __future__ import annotations

import json
import math
import time
from pathlib import Path

import pytest
import torch

from imbalanced_cl.claims import pruning as pa
from imbalanced_cl.rules import UNTESTED
from tests.test_stages_notebooks import _same   # equal in structure, types and bits

ROOT = Path(__file__).resolve().parents[1]
TINY = dict(d=4, d1=8, L=2, m=6, n_pairs=16, R=2, record_every=5, progress=False, vanilla_steps=20, prune_steps=20,
            rate_window=10, top_k=2, alpha_grid=(0.2, 0.5), alpha_main=0.2, eps_min=0.5, eps_min_grid=(0.5, 1.0),
            threshold_alphas=(0.8,), workers=1)
SPLIT = ("alpha_grid", "eps_grid")


# ---------------------------------------------------------------------------------------------- the plan at paper

def _paper_config():
    from imbalanced_cl.book.build.profiles import params
    return pa.PruningConfig(**{k: tuple(v) if isinstance(v, list) else v
                               for k, v in params("paper", "04_pruning_gains").items()})


def test_the_paper_profile_splits_notebook_04_into_its_deciding_unit_and_two_sweeps():
    """At paper: the notebook unit (its record_sweeps names both grids) and one pruning_sweep unit per grid, each with
    the trainings it runs, counted by hand from the profile (vanilla 6000 steps, branches 6000); at default and ci
    there is no sweep unit and the notebook trains everything."""
    from imbalanced_cl.campaign import kinds, projection
    from imbalanced_cl.campaign.pruning_sweeps import plan
    (nb,) = kinds.plan_notebooks("paper", ROOT, only=["04_pruning_gains"])
    assert nb.params["record_sweeps"] == list(SPLIT)
    sweeps = plan("paper", ROOT)
    assert [u.label for u in sweeps] == ["pruning_sweep/alpha_grid", "pruning_sweep/eps_grid"]
    assert plan("default", ROOT) == [] and plan("ci", ROOT) == []
    cfg = _paper_config()
    assert cfg.share("main") == ([0.02], [], [])                       # the alpha_main branch, the main eps_min
    assert cfg.share("alpha_grid") == ([0.01, 0.05, 0.1, 0.2, 0.4], [0.6, 0.8], [])
    assert cfg.share("eps_grid") == ([], [], [0.2, 0.5, 0.7, 1.0])
    steps = {u.label: [s for _, s in projection.trainings(u.kind, u.name, u.params, ROOT)[0]] for u in [nb, *sweeps]}
    # main: vanilla; control, alpha_main, literal backward, two oracle arms; Alg. 1 from t = 0; 3 mask-control cells
    assert steps["notebook/04_pruning_gains"] == [6000, 5 * 6000, 12000, 3 * 6000]
    # the alpha grid: vanilla again; control and 5 ratios; 4 cells x (5 + 2 thresholds), less the 5 magnitude branches
    assert steps["pruning_sweep/alpha_grid"] == [6000, 6 * 6000, (4 * 7 - 5) * 6000]
    assert steps["pruning_sweep/eps_grid"] == [6000, 2 * 6000] * 4     # per other eps_min: vanilla, control, branch
    whole = cfg.replace(record_sweeps=())
    # the whole run trains the vanilla run and the control once: the alpha grid's unit trains them again
    assert sum(s for _, s in whole.workload()) == sum(sum(v) for v in steps.values()) - 2 * 6000
    assert whole.share("main") == ([0.01, 0.02, 0.05, 0.1, 0.2, 0.4], [0.6, 0.8], [0.2, 0.5, 0.7, 1.0])


def test_the_gpu_lease_runs_the_sweeps_after_the_deciding_unit():
    from imbalanced_cl.campaign import gpu
    tail = gpu.plan(None)[-3:]
    assert tail == [("paper", "notebook", "04_pruning_gains", None), ("paper", "pruning_sweep", "alpha_grid", None),
                    ("paper", "pruning_sweep", "eps_grid", None)]


@pytest.mark.parametrize("sweeps,alpha_main,ok", [((), 0.3, True), (("eps_grid",), 0.3, True),
                                                  (("alpha_grid",), 0.3, False), (("alpha_grid",), 0.2, True),
                                                  (("alpha_grid", "alpha_grid"), 0.2, False), (("grid",), 0.2, False)])
def test_record_sweeps_names_each_sweep_once_and_the_alpha_sweep_needs_alpha_main_in_the_grid(sweeps, alpha_main, ok):
    from imbalanced_cl.validate import ParameterError
    make = lambda: pa.PruningConfig(**{**TINY, "alpha_main": alpha_main, "record_sweeps": sweeps})  # noqa: E731
    if ok:
        make()
    else:
        with pytest.raises(ParameterError, match="record_sweeps|alpha_main"):
            make()


# ------------------------------------------------------------------------- the parts against the whole, tiny size

@pytest.fixture(scope="module")
def measured():
    """The whole protocol, and the main part and both sweeps measured apart, at the tiny size (one process)."""
    torch.set_num_threads(1)
    cfg = pa.PruningConfig(**TINY)
    split = cfg.replace(record_sweeps=SPLIT)
    t0 = time.time()
    out = {"cfg": cfg, "split": split, "whole": pa.measure_protocol(cfg), "main": pa.measure_main(split),
           "sweeps": {n: pa.measure_sweep(split, n) for n in SPLIT}}
    out["seconds"] = time.time() - t0
    return out


def test_the_parts_put_back_together_are_the_whole_run(measured):
    """measure_main and the two sweeps, each trained apart from the same seed (the vanilla run again, its own
    batches), assemble into measure_protocol's stored form bit for bit: the same code path on the same numbers."""
    got = pa.assemble(measured["split"], measured["main"], measured["sweeps"])
    assert got.pop("alphas") == [0.2, 0.5] and got.pop("pending") == []
    _same(measured["whole"], got, "stored form")


def test_the_deciding_part_alone_gives_the_whole_runs_rows_and_pending_for_the_rest(measured):
    """With no sweep recorded, the rows of the main part are the whole run's rows (same verdict, same interval),
    except the rows that need a sweep: those read "not tested", pending, naming the campaign unit to wait for."""
    cfg, split = measured["cfg"], measured["split"]
    whole = {r.id: r for r in pa.verdict_rows(pa.read(measured["whole"], cfg), cfg)}
    res = pa.read(pa.assemble(split, measured["main"], {}), split)
    assert res.pending == SPLIT and res.alphas == [0.2] and res.sweep is not None     # the main eps_min only
    rows = pa.verdict_rows(res, split)
    assert [r.id for r in rows] == list(whole)
    assert pa.pending_why("alpha_grid") == ("pending: needs the alpha grid (campaign unit pruning_sweep/alpha_grid), "
                                            "not recorded yet")
    for r in rows:
        if r.id in pa.NEEDS:
            assert r.verdict == UNTESTED and math.isnan(r.measured), r.id
            assert r.rule == pa.pending_why(pa.NEEDS[r.id]), r.id
        else:
            w = whole[r.id]
            assert (r.verdict, r.rule, r.claim) == (w.verdict, w.rule, w.claim), r.id
            _same((r.measured, r.lo, r.hi), (w.measured, w.lo, w.hi), r.id)
    # one sweep recorded: only the other's rows wait
    res = pa.read(pa.assemble(split, measured["main"], {"alpha_grid": measured["sweeps"]["alpha_grid"]}), split)
    rows = {r.id: r for r in pa.verdict_rows(res, split)}
    assert {i for i, r in rows.items() if r.rule.startswith("pending")} == {i for i, s in pa.NEEDS.items()
                                                                           if s == "eps_grid"}
    assert rows["gain_top_alpha"].verdict == whole["gain_top_alpha"].verdict


def test_a_pending_sweep_reads_pending_in_the_pages_lines(measured):
    from imbalanced_cl.book.plots import pruning_gains as pg
    from imbalanced_cl.campaign.pruning_sweeps import parts_lines
    split = measured["split"]
    res = pa.read(pa.assemble(split, measured["main"], {}), split)
    assert pg.pending_text(res, "eps_grid", "Step 7") == ("Step 7: pending: needs the eps_min grid (campaign unit "
                                                          "pruning_sweep/eps_grid), not recorded yet")
    assert res.control_alphas(split) == [0.2]                  # threshold_alphas come with the alpha grid
    lines = parts_lines(split, {"alpha_grid": "commit abc1234 on cpu, 2026-12-05"}, [], [])
    assert lines[1:] == ["alpha grid (its other ratios, their mask-control cells, threshold_alphas): recorded by "
                         "commit abc1234 on cpu, 2026-12-05",
                         "eps_min grid (Step 7 at the other eps_min): pending: campaign unit pruning_sweep/eps_grid, "
                         "not recorded yet"]
    assert lines[0].endswith(": measured in this run")
    full = pa.read(pa.assemble(split, measured["main"], measured["sweeps"]), split)
    assert pg.pending_text(full, "eps_grid", "Step 7") == "" and full.control_alphas(split) == [0.2, 0.5, 0.8]


def test_a_recorded_sweep_unit_is_read_back_with_who_made_it(measured, tmp_path, monkeypatch):
    """A pruning_sweep unit run by the campaign engine keeps its measurement beside its record; the notebook's
    reader finds it (validity: its parameters and code) and reads back exactly what was measured."""
    from imbalanced_cl.campaign import engine, kinds, pruning_sweeps, validity
    split = measured["split"]
    (unit, _) = pruning_sweeps.units_of(split, ROOT, "tiny")
    results = tmp_path / "tiny"
    out = engine.run_unit(kinds.get("pruning_sweep"), unit, str(results), str(ROOT), time.time() + 600)
    torch.set_num_threads(1)
    assert out["status"] == "ran", out
    rec = json.loads(Path(out["path"]).read_text())
    assert rec["payload"] == {"sweep": "alpha_grid", "stages": ["sweep"]}
    monkeypatch.setattr(validity, "first_valid", lambda u, root=None: (validity.find(results, u, ROOT), []))
    found, by, notes = pruning_sweeps.recorded_sweeps(split, ROOT)
    assert list(found) == ["alpha_grid"] and notes == [] and by["alpha_grid"].startswith("commit ")
    _same(measured["sweeps"]["alpha_grid"], found["alpha_grid"], "alpha_grid")


@pytest.mark.slow
def test_the_notebook_with_its_sweeps_pending_says_so_and_judges_what_it_has(tmp_path):
    """Notebook 04 executed at the tiny size with both grids as sweeps of their own and none recorded: it runs to
    its end, says per part where it came from, and each step and row that needs a sweep reads pending."""
    from imbalanced_cl.book.build.execution import execute
    from imbalanced_cl.book.records.glued import rows_of
    params = {k: list(v) if isinstance(v, tuple) else v for k, v in TINY.items()}
    params.update(threads=1, record_sweeps=list(SPLIT))
    out = tmp_path / "04.ipynb"
    ok, msg = execute(ROOT / "notebooks" / "04_pruning_gains.ipynb", out, params, ROOT)
    assert ok, msg
    text = "".join("".join(o.get("text", "")) for c in json.loads(out.read_text())["cells"]
                   for o in c.get("outputs", []) if o.get("name") == "stdout")
    assert "main part (vanilla run, control and alpha_main branch, oracle arms, Step 6, mask control at " \
           "alpha_main): measured in this run" in text
    for name in SPLIT:
        assert f"pending: campaign unit pruning_sweep/{name}, not recorded yet" in text
    assert f"Step 5: {pa.pending_why('alpha_grid')}" in text and f"Step 7: {pa.pending_why('eps_grid')}" in text
    rows = {r.id: r for r in rows_of(out)}
    assert all(rows[i].verdict == UNTESTED and rows[i].rule == pa.pending_why(s) for i, s in pa.NEEDS.items())
    assert not math.isnan(rows["gain_main"].measured)
