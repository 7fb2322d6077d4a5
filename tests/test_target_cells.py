"""Issue 63, item 2: notebook 10's target cells as campaign units (kind target_cell). The plan derives them from the
Lemma B.1 deviations that hand-made records measured (notebook 10's own stage and a premise cell), with m and K
worked by hand; a cell too large for the memory is one line with its size, listed by `campaign status` and never
handed to training by `campaign run`; a recorded target cell is read back for the notebook, and a stale or foreign
record of one is named and not used. Nothing here trains."""
from __future__ import annotations

import math
from pathlib import Path

import pytest
import torch

from imbalanced_cl.book.build.profiles import params as profile_params
from imbalanced_cl.book.records.record import source_code, unit_code
from imbalanced_cl.campaign import premise_cells as PC
from imbalanced_cl.campaign import record, status, typed
from imbalanced_cl.campaign import target_cells as TC
from imbalanced_cl.campaign.units import Unit
from imbalanced_cl.campaign.validity import kept_stages
from imbalanced_cl.claims import premise_map as PM
from imbalanced_cl.claims.premise_map.metrics import Premise

ROOT = Path(__file__).resolve().parents[1]
GiB = 2 ** 30
# Lemma B.1 deviations ||g_K - g_pop|| / ||w|| as the map measured them (test_claim4_target.py's): at d = 10 two
# cells (0.0193, 0.0352), at d = 20 one (0.0220), each at K = 512 pairs
DEV10, DEV20 = (0.0193, 0.0352), 0.0220


def _measured(cell, dev: float) -> PM.CellResult:
    """A trained cell as notebook 10 keeps it, with only what the K estimate reads: Lemma B.1's measured deviation."""
    prem = {"lemma_b1": Premise("lemma_b1", "Lemma B.1", dev, "≤ 1/d1", False)}
    return PM.CellResult(cell, prem, torch.zeros(cell.cfg.R))


def _item(value, holds: bool) -> dict:
    """A premise as a premise_cell or target_cell record keeps it."""
    return {"text": "t", "value": value, "threshold": "as recorded", "holds": holds, "required": True}


@pytest.fixture
def repo(tmp_path, monkeypatch):
    """A repository whose records measured the deviations above: notebook 10's default record keeping its stage
    `cells` (two d = 10 cells), and the premise cell d20_bottom_r0.8, both under today's code."""
    from imbalanced_cl.book.build.cache import FRESH_ENV
    monkeypatch.delenv(FRESH_ENV, raising=False)
    (tmp_path / "src").symlink_to(ROOT / "src")
    (tmp_path / "notebooks").symlink_to(ROOT / "notebooks")
    cfg = PM.PremiseMapConfig(**profile_params("default", "10_premise_map"))
    folder = tmp_path / "results" / "campaign" / "default"
    nb = tmp_path / "notebooks" / "10_premise_map.ipynb"
    unit = Unit("notebook", nb.stem, "default", profile_params("default", nb.stem), unit_code(tmp_path, nb), cfg.seed)
    path = record.write(folder, unit, {"stages": ["cells"], "rows": []}, {"commit": "abc1234", "device": "cpu"})
    cells = [_measured(cfg.cell("plane", 10, lam, 0.8), dev) for lam, dev in zip(("book", "mid"), DEV10, strict=True)]
    typed.save(cells, kept_stages(path, record.read(path)) / "cells")
    c20 = cfg.cell("plane", 20, "bottom", 0.8)
    u20 = Unit(PC.KIND, PC.cell_name(c20), "default", PC.cell_params(cfg, c20), source_code(tmp_path, PC.ENTRY))
    record.write(folder, u20, {"premises": {"lemma_b1": _item(DEV20, False)}, "gain": [0.0] * cfg.R, "seconds": 1.0},
                 {"commit": "abc1234", "device": "cpu"})
    return tmp_path, cfg


def test_the_plan_derives_target_units_from_the_recorded_deviations_by_hand(repo):
    root, cfg = repo
    units = PC.plan_targets("default", root)
    # at every d a deviation was measured (10, 20) and at twice the largest (40, K scaled), the map's largest ratio
    assert [u.label for u in units] == ["target_cell/d10_r0.8", "target_cell/d20_r0.8", "target_cell/d40_r0.8"]
    cells = {u.params["cell"]["d"]: u.params["cell"] for u in units}
    # m = ceil(mu m_1), mu = -ln(1 - 0.9^(1/4)) = 3.6497 (R = 4), m_1 = 4,176, 4,129, 12,140 (the table)
    for d, m_one in ((10, 4176), (20, 4129), (40, 12140)):
        assert cells[d]["m"] == pytest.approx(3.6497 * m_one, rel=3e-3)
    # K: 512 (0.0352 x 50)^2 = 1,585.97 (d = 10's larger deviation); 512 (0.022 x 100)^2 = 2,478.08; at d = 40 from
    # d = 20, scaled by (200 / 100)^2: 9,912.32
    assert [cells[d]["K"] for d in (10, 20, 40)] == [1586, 2479, 9913]
    # the vanilla cap: floor(d^1.99 / 0.5) = floor(195.45), floor(776.39), floor(3,084.11); lambda at d^-1.49
    assert [cells[d]["vanilla_max"] for d in (10, 20, 40)] == [195, 776, 3084]
    assert {c["lam_name"] for c in cells.values()} == {"bottom"} and {c["ratio"] for c in cells.values()} == {0.8}
    # the record says what was run: the map's config beside the derived settings, and the cell they rebuild
    u10 = units[0]
    assert u10.params["R"] == 4 and u10.params["vanilla_max"] == cfg.vanilla_max
    cell = PC.cell_of(PC.config_of(u10.params), u10.params["cell"])
    assert (cell.m, cell.K, cell.cfg.vanilla_steps, cell.d) == (cells[10]["m"], 1586, 195, 10)
    assert cell.cfg.weight_decay == pytest.approx(10 ** -1.49) and cell.cfg.d1 == 50
    # the projection counts the vanilla run to the window's end and six branches of prune_max
    assert [steps for _, steps in PC.workload(u10.params)] == [195, 6 * cfg.prune_max]
    assert [u.name for u in PC.plan_targets("default", root, only=["d20_r0.8"])] == ["d20_r0.8"]


def test_no_deviation_measured_plans_no_target_cell(tmp_path):
    (tmp_path / "src").symlink_to(ROOT / "src")
    assert PC.plan_targets("default", tmp_path) == []


def test_a_target_cell_too_large_is_one_line_with_its_size_and_is_never_trained(repo, monkeypatch, capsys):
    from imbalanced_cl.__main__ import main
    from imbalanced_cl.campaign import cli
    from imbalanced_cl.sim import memory
    root, _ = repo
    monkeypatch.setattr(PC, "map_results", lambda cfg, profile, r: _results(cfg))   # the fixture's deviations
    monkeypatch.setattr(memory, "available_bytes", lambda: 4 * GiB)
    units = {u.name: u for u in PC.plan_targets("default", root)}
    # d = 20: K = 2,479, m = 15,069, d1 = 100, R = 4: the dictionary's QR 32 d1^2 = 320,000 B, the weights
    # 16 R (m d1 + d1 d) = 96,569,600 B, one replicate's pairs twice 4 K L (2 d1 + 4 m) = 2 x 2,398,720,064 B: 4.56 GiB
    line = PC.size_problem(units["d20_r0.8"])
    assert line == ("peak memory about 4.6 GiB (d=20, d1=100, m=15,069, K=2,479, R=4), more than the 4.0 GiB the "
                    "machine has")
    assert PC.size_problem(units["d10_r0.8"]) == ""                  # 2.9 GiB fits
    cov = status.coverage(list(units.values()), root / "results" / "campaign" / "default", root)
    assert set(cov.too_large) == {"target_cell/d20_r0.8", "target_cell/d40_r0.8"}
    text = "\n".join(status.report(cov, "default", root))
    assert f"target_cell/d20_r0.8 [too large for this machine: {line}; it waits" in text
    handed = []
    monkeypatch.setattr(cli, "execute", lambda args, kinds, us, *a: handed.append([u.name for u in us]) or 0)
    common = ["campaign", "run", "--profile", "default", "--kind", "target_cell", "--results", str(root / "scratch")]
    capsys.readouterr()
    assert main(common) == 0 and handed == [["d10_r0.8"]]           # the others are left out before any training
    out = capsys.readouterr().out.splitlines()
    assert [ln.split(":")[0] for ln in out if ln.startswith("[too large]")] == [
        "[too large] target_cell/d20_r0.8", "[too large] target_cell/d40_r0.8"]
    assert main(common + ["--only", "d20_r0.8"]) == 2 and handed == [["d10_r0.8"]]   # named: refused, not run
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"error: target_cell/d20_r0.8: {line}; --force to run anyway"]


def _results(cfg) -> list:
    """The deviations of the repo fixture as CellResults, without reading records."""
    return ([_measured(cfg.cell("plane", 10, lam, 0.8), dev) for lam, dev in zip(("book", "mid"), DEV10, strict=True)]
            + [_measured(cfg.cell("plane", 20, "bottom", 0.8), DEV20)])


def test_a_recorded_target_cell_is_read_back_and_stale_or_foreign_ones_are_named(repo, monkeypatch):
    from imbalanced_cl.campaign import projection
    from imbalanced_cl.sim import memory
    root, cfg = repo
    monkeypatch.setattr(projection, "calibration", lambda *a, **k: None)   # no kept calibration: loop rate
    monkeypatch.setattr(memory, "available_bytes", lambda: 8 * GiB)
    results = _results(cfg)
    t10, t20, t40 = PC.derive(cfg, results)
    code = source_code(root, PC.ENTRY)
    folder = root / "results" / "campaign"
    lnk = math.log(1586)
    made = {"premises": {"lambda": _item(0.04, True), "lemma_b1": _item(0.0199, True),
                         "convergence": _item(0.9 * lnk, False)},
            "gain": [0.01, 0.02, 0.0, 0.01], "seconds": 9000.0,
            "extra": {"T4": 195, "loss_T4": 0.9 * lnk, "ln_K": lnk, "lp_T4": 0.006}}
    record.write(folder / "default", PC.target_unit(cfg, t10, "default", code), made,
                 {"commit": "abc1234", "device": "cpu", "recorded": "2026-12-05T10:00:00"})
    # d = 20: a record under other code whose commit this history lacks (stale), and one of another R (foreign)
    record.write(folder / "default", PC.target_unit(cfg, t20, "default", "other code"), made,
                 {"commit": "0ld0ld0", "device": "cpu"})
    r3 = cfg.replace(R=3)
    record.write(folder / "ci", PC.target_unit(r3, PC.derive(r3, results)[1], "ci", code), made,
                 {"commit": "1a2b3c4", "device": "cpu"})
    found, notes = TC.recorded_targets(cfg, results, root)
    assert [(t.d, res is not None) for t, res, _ in found] == [(10, True), (20, False), (40, False)]
    res = found[0][1]
    assert res.source == "recorded" and res.extra["T4"] == 195 and res.cell.m == t10.m and res.cell.K == 1586
    assert any("0ld0ld0" in n and "stale, not used" in n for n in notes)
    assert any("1a2b3c4" in n and "parameters differ in R" in n for n in notes)
    lines = TC.target_lines(cfg, results, root)
    # the recorded cell: its loss at T4 as a fraction of ln K (0.9 by construction), l'_p, the premises that fail
    # (lemma_b1 0.0199 <= 1/50 holds again by today's rule; convergence keeps its recorded judgement)
    assert ("  recorded (commit abc1234 on cpu, 2026-12-05): at T4 = 195 steps InfoNCE = 0.900 ln K, l'_p = 0.006; "
            "required premises failing: convergence") in lines
    assert lines[lines.index(t20.line()) + 1].startswith("  not recorded yet (campaign unit target_cell/d20_r0.8; "
                                                         "about ")
    big = lines[lines.index(t40.line()) + 1]
    assert big.startswith("  not recorded yet (campaign unit target_cell/d40_r0.8; about ") and \
        big.endswith("; too large for this machine's memory: it waits for a GPU lease or a cluster)")
    assert sum("0ld0ld0" in ln for ln in lines) == 1
