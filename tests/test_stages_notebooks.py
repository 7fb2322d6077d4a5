"""Notebooks 01 and 04 measure apart from what they judge (issue 47, item 1): their costly work sits in measured(...)
stages that keep only measurements, small enough to commit; a campaign unit keeps them beside its record, and
judging the record executes the notebook with every stage read back, training nothing, giving the recorded rows."""
from __future__ import annotations

import ast
import json
import time
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml

from imbalanced_cl import premises
from imbalanced_cl import verdict as V
from imbalanced_cl.book.records.record import MEASURES
from imbalanced_cl.campaign import probe

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = {"01_stage1_growth": ("main", "sweeps", "push"), "04_pruning_gains": ("protocol",)}
# the notebooks whose costly calls the walker checks: 01 and 04 (its "main" stage where its grids are campaign units of
# their own, record_sweeps: the paper profile), and 02 (its stages are tested in test_records.py and
# test_claims_lucky.py)
WALKED = {**NOTEBOOKS, "04_pruning_gains": ("main", "protocol"),
          "02_lucky_neurons": ("census", "t2", "workshop", "push")}

# What trains or measures at cost in notebooks 01, 02 and 04: called only inside a measured(...) stage
COSTLY = {"train", "train_branches", "measure_main", "measure_sweeps", "measure_push", "t1_sweep", "rate_results",
          "run_census", "measure_t2", "workshop_figure", "t2_grid", "lemma32_run", "mc_census_multi",
          "measure_protocol", "run_branches", "run_oracles", "run_variants", "eps_sweep", "run_control", "run_cells",
          "measure", "mask_census", "census_by_alpha", "feature_tables", "mechanism_summary", "measure_sweep"}


def _code(name: str) -> str:
    """The notebook's code cells, the generated parameters cell left out."""
    nb = json.loads((ROOT / "notebooks" / f"{name}.ipynb").read_text())
    return "\n".join("".join(c["source"]) for c in nb["cells"]
                     if c["cell_type"] == "code" and "parameters" not in c["metadata"].get("tags", []))


def _stage_calls(name: str) -> tuple[list, list, set]:
    """A notebook's calls: (every call node, the names of its measured(...) stages in order, the ids of the nodes
    inside those stages' lambdas)."""
    calls = [n for n in ast.walk(ast.parse(_code(name))) if isinstance(n, ast.Call)]
    measured = [n for n in calls if getattr(n.func, "id", None) == "measured"]
    return calls, [n.args[0].value for n in measured], {id(x) for n in measured for x in ast.walk(n.args[1])}


@pytest.mark.parametrize("name", WALKED)
def test_a_notebook_trains_only_inside_its_measured_stages(name):
    """Every costly call of the notebook sits in the lambda of a measured("stage", ...) call, one per stage of
    WALKED; so a replayed notebook (its stages read back) trains nothing. The notebook is in MEASURES, and its
    probe exists."""
    calls, stages, inside = _stage_calls(name)
    assert tuple(stages) == WALKED[name]
    for node in calls:
        f = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        assert f not in COSTLY or id(node) in inside, f"{name}: {f}(...) outside a measured stage"
    assert name in MEASURES and f"notebook/{name}" in probe.PROBES


# notebooks 08 and 10: their stages, and what trains or samples at cost there, called through the claim package
STAGED_MORE = {"08_scale": ("grid",), "10_premise_map": ("rates", "cells")}
COSTLY_MORE = {"run", "run_map", "rate_table", "measure_point", "train_point"}


@pytest.mark.parametrize("name", STAGED_MORE)
def test_08_and_10_train_only_inside_their_measured_stages(name):
    """As above, for the claim package's costly calls (scale.run, PM.run_map, ...; subprocess.run in the Binder cell
    is not one); the notebook is in MEASURES and has its own probe."""
    calls, stages, inside = _stage_calls(name)
    assert tuple(stages) == STAGED_MORE[name]
    for node in calls:
        if (isinstance(node.func, ast.Attribute) and node.func.attr in COSTLY_MORE
                and getattr(node.func.value, "id", "") in ("scale", "PM")):
            assert id(node) in inside, f"{name}: {node.func.attr}(...) outside a measured stage"
    assert name in MEASURES and f"notebook/{name}" in probe.PROBES


def _probe_config(kind: str, profile: str):
    """The config a notebook's probe builds from the parameters of the notebook's unit at `profile`: its program run
    up to its `cfg = ...` line, the measurement left out."""
    import sys

    from imbalanced_cl.campaign import kinds
    (unit,) = kinds.plan_notebooks(profile, ROOT, only=[kind.split("/", 1)[1]])
    tree = ast.parse(probe.PROBES[kind].script())
    upto = next(k for k, n in enumerate(tree.body) if isinstance(n, ast.Assign) and
                any(getattr(t, "id", "") == "cfg" for t in n.targets))
    scope = {}
    code = compile(ast.Module(body=tree.body[:upto + 1], type_ignores=[]), kind, "exec")
    argv = sys.argv
    try:
        sys.argv = ["probe", json.dumps(unit.params, default=str)]
        exec(code, scope)
    finally:
        sys.argv = argv
    return scope["cfg"]


@pytest.mark.parametrize("kind", sorted(k for k in probe.PROBES if k.startswith("notebook/")))
def test_a_notebook_probe_builds_its_config_from_a_units_parameters(kind):
    """A notebook's probe builds its config from the parameters of the notebook's ci unit: a size given twice (the ci
    profile's R and the probe's) is a TypeError in the child, and then every record of the notebook made under other
    code reads stale ("probe did not run")."""
    assert type(_probe_config(kind, "ci")).__name__.endswith("Config")


@pytest.mark.parametrize("kind", sorted(k for k in probe.PROBES if k.startswith("notebook/")))
def test_a_notebook_probe_runs_at_its_small_sizes_whatever_the_profile(kind):
    """A default unit's parameters are empty (the notebook's own defaults): its probe still runs at the probe's small
    sizes, the same config as for the ci unit, and never at the profile's size. Before, the sizes were put in only
    where the parameters named them, so a default probe of 04 or 09 trained the whole notebook, ran past its time
    limit on a busy host (2026-11-28), and their valid records read stale."""
    ci, default = _probe_config(kind, "ci"), _probe_config(kind, "default")
    assert default == ci
    assert default != type(default)()          # the notebook's defaults: the default profile's size


def test_a_push_measured_at_another_K_needs_re_measuring():
    """Notebook 01's push keeps the K it was measured at; an effect test that asks for another K (premises.EFFECTS
    changed its factor) is told to measure again, never given the old numbers."""
    from imbalanced_cl.claims import stage1
    cfg = stage1.Stage1Config(d=4, d1=8, m=4, n_pairs=16, steps=8, fit_start=1, progress=False)
    push = {"n_pairs": premises.push_pairs(cfg.n_pairs), "rates": {"slope": (1.0, 0.9, 1.1)}}
    assert push["n_pairs"] == 64
    assert stage1.pushed_rates(push, cfg.replace(n_pairs=64)) is push["rates"]
    with pytest.raises(ValueError, match=r"needs re-measuring \(stage push: measured with K = 64 pairs a step, "
                                         r"the effect test asks for K = 128\)"):
        stage1.pushed_rates(push, cfg.replace(n_pairs=128))


def _ci_config(name: str):
    """The notebook's config at the ci profile's sizes."""
    from imbalanced_cl.claims import pruning, stage1
    ci = yaml.safe_load((ROOT / "profiles.yaml").read_text())["ci"][name]
    cls = stage1.Stage1Config if name == "01_stage1_growth" else pruning.PruningConfig
    return cls(**{k: tuple(v) if isinstance(v, list) else v for k, v in ci.items()}, progress=False)


def _same(a, b, where="value") -> None:
    """a and b equal in structure, types and bits (tensors by dtype, shape and values, NaN equal to NaN)."""
    import dataclasses
    assert type(a) is type(b), f"{where}: {type(a)} against {type(b)}"
    if dataclasses.is_dataclass(a):
        for f in dataclasses.fields(a):
            _same(getattr(a, f.name), getattr(b, f.name), f"{where}.{f.name}")
    elif isinstance(a, dict):
        assert list(a) == list(b), where
        for k in a:
            _same(a[k], b[k], f"{where}[{k!r}]")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _same(x, y, f"{where}[{i}]")
    elif isinstance(a, torch.Tensor):
        assert a.dtype == b.dtype and a.shape == b.shape and torch.equal(a.nan_to_num(7.0), b.nan_to_num(7.0)), where
    elif isinstance(a, float):
        assert a == b or (a != a and b != b), where
    else:
        assert a == b, where


@pytest.mark.slow
def test_the_stages_at_the_ci_sizes_are_storable_small_and_come_back_exactly(tmp_path):
    """Each stage of notebooks 01 and 04 at the ci profile's sizes: typed.save writes it (no training object in it),
    its files are a few kB, and typed.load gives back the same structure, types and bits."""
    from imbalanced_cl.campaign import typed
    from imbalanced_cl.claims import pruning, stage1
    funcs = {"main": stage1.measure_main, "sweeps": stage1.measure_sweeps, "push": stage1.measure_push,
             "protocol": pruning.measure_protocol}
    for name, names in NOTEBOOKS.items():
        cfg = _ci_config(name)
        for stage in names:
            value = funcs[stage](cfg)
            files = typed.save(value, tmp_path / stage)
            size = sum(p.stat().st_size for p in files)
            assert size < 100_000, f"{stage}: {size} bytes at ci"
            if (tmp_path / f"{stage}.npz").exists():
                with np.load(tmp_path / f"{stage}.npz") as z:
                    assert sum(z[k].nbytes for k in z.files) < 50_000
            _same(value, typed.load(tmp_path / stage), stage)


def _rows(rows: list[dict]) -> str:
    """Rows as one canonical text: every field counts, NaN equal to NaN."""
    return json.dumps(rows, sort_keys=True, default=str)


@pytest.mark.slow
@pytest.mark.parametrize("name", NOTEBOOKS)
def test_a_unit_of_notebook_01_or_04_keeps_its_stages_and_is_judged_again_from_them_alone(name, tmp_path,
                                                                                         ci_unit_record):
    """Notebook 01 or 04 at ci as a campaign unit: its record keeps its stages beside it; judging the record (the
    notebook executed with every stage read back) gives every recorded row again, field by field, in less time than
    the unit took; a stage changed by hand moves the judged rows (they come from the stages, not from training); a
    missing stage needs re-measuring, named."""
    from imbalanced_cl.campaign import judge, typed
    path, rec, _, wall = ci_unit_record(name, tmp_path)
    where = judge.kept_stages(path, rec)
    assert rec["payload"]["stages"] == sorted(NOTEBOOKS[name])
    assert all((where / f"{s}.json").exists() and (where / f"{s}.npz").exists() for s in NOTEBOOKS[name])
    assert sum(p.stat().st_size for p in where.iterdir()) < 200_000

    t0 = time.time()
    rows, why = judge.judge(ROOT, path, rec, tmp_path / "judged.ipynb")
    assert why == "" and time.time() - t0 < wall + 60
    assert _rows([V.to_json(r) for r in rows]) == _rows(rec["payload"]["rows"])     # as stored, byte for byte

    # a measurement changed by hand reaches the rows: 01's rate ratio, 04's control ratio (so its gain rows move)
    stage = NOTEBOOKS[name][0]
    value = typed.load(where / stage)
    if name == "01_stage1_growth":
        m, lo, hi = value["rates"]["maj_min"]
        value["rates"]["maj_min"] = (m + 100.0, lo + 100.0, hi + 100.0)
        moved = "rate_ratio"
    else:
        value["ratios"][0.0] = value["ratios"][0.0] - 100.0
        moved = "gain_main"
    typed.save(value, where / stage)
    tampered, why = judge.judge(ROOT, path, rec, tmp_path / "tampered.ipynb")
    assert why == ""
    before = {r["id"]: r["measured"] for r in rec["payload"]["rows"]}
    after = {r.id: r.measured for r in tampered}
    assert after[moved] == pytest.approx(before[moved] + 100.0)

    (where / f"{stage}.json").unlink()
    rows, why = judge.judge(ROOT, path, rec, tmp_path / "again.ipynb")
    assert rows is None and why == f"needs re-measuring (stage {stage}: not in the record)"


def _drop_fields(node, names):
    """Remove `names` from every stored dataclass's fields in a typed JSON document (as an older record would lack
    them)."""
    if isinstance(node, dict):
        if "__dataclass__" in node:
            for n in names:
                node["fields"].pop(n, None)
        for v in node.values():
            _drop_fields(v, names)
    elif isinstance(node, list):
        for v in node:
            _drop_fields(v, names)


def test_a_stored_config_lacking_a_field_added_since_reads_its_default_only_where_it_never_changes_numbers(tmp_path):
    """A PruningConfig stored before `record_sweeps` (a choice of where parts come from) or a run option existed reads
    back with their defaults, so notebook 10's cells stage stays readable; a stored config lacking a field that sets
    what is measured (vanilla_steps) still stops the reading with a KeyError naming it (issue 64's split)."""
    from imbalanced_cl.campaign import typed
    from imbalanced_cl.claims.pruning import PruningConfig
    cfg = PruningConfig(vanilla_steps=40, prune_steps=20, rate_window=10, record_every=5, record_sweeps=("eps_grid",),
                        threads=2)
    typed.save({"cfg": cfg}, tmp_path / "s")
    doc = json.loads((tmp_path / "s.json").read_text())
    _drop_fields(doc, ("record_sweeps", "threads"))
    (tmp_path / "s.json").write_text(json.dumps(doc))
    back = typed.load(tmp_path / "s")["cfg"]
    assert back.record_sweeps == PruningConfig().record_sweeps and back.threads == PruningConfig().threads
    assert back.vanilla_steps == 40 and back.prune_steps == 20 and back.record_sweeps != cfg.record_sweeps
    _drop_fields(doc, ("vanilla_steps",))
    (tmp_path / "s.json").write_text(json.dumps(doc))
    with pytest.raises(KeyError, match="vanilla_steps"):
        typed.load(tmp_path / "s")
