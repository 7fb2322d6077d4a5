"""The time estimate before compute (sim/runtime.py): closed forms on hand-made rates, the workloads the claim configs
declare counted by hand, and where the estimate is said (the parameter check, the runner)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from imbalanced_cl.claims.pruning import PruningConfig
from imbalanced_cl.claims.scaling import ScalingConfig
from imbalanced_cl.sim import runtime
from imbalanced_cl.sim.config import SimConfig

ROOT = Path(__file__).resolve().parents[1]


def _rate(gflops: float = 1.0, overhead: float = 0.01) -> runtime.Rate:
    return runtime.Rate("cpu", gflops * 1e9, overhead, 2, "test CPU", "today")


def _flops(R, m, d1, n, L):
    """One step's FLOPs by hand: three (R, m, d1) x (d1, n L) products, and the n x n logits and their backward."""
    return 6 * R * m * d1 * n * L + 4 * R * n * n * m


def test_an_estimate_is_the_steps_overhead_plus_the_counted_flops_over_the_rate():
    cfg = SimConfig(d=10, d1=50, m=20, R=3, n_pairs=64, L=4, steps=100, device="cpu")
    est = runtime.estimate(cfg, {"cpu": _rate(2.0, 0.005)})
    f = 100 * _flops(3, 20, 50, 64, 4)
    assert est.flops == pytest.approx(f) and est.steps == 100
    assert est.seconds == pytest.approx(100 * 0.005 + f / 2e9)
    assert "test CPU, 2 threads" in est.line() and "100 steps" in est.line()


def test_no_estimate_without_a_rate_for_the_device_or_without_a_declared_workload():
    cfg = SimConfig(d=10, d1=50, m=20, R=3, steps=10, device="cpu")
    assert runtime.estimate(cfg, {"cuda": _rate()}) is None
    from imbalanced_cl.claims.explorer import ExplorerConfig
    assert ExplorerConfig().workload() is None and runtime.estimate(ExplorerConfig(), {"cpu": _rate()}) is None


def test_the_pruning_workload_counts_every_branch_by_hand():
    cfg = PruningConfig(vanilla_steps=100, prune_steps=10, rate_window=10, record_every=5, alpha_grid=(0.1, 0.2),
                        eps_min=0.5, eps_min_grid=(0.5, 0.3))
    steps = [s for _, s in cfg.workload()]
    # vanilla; control + two alphas + literal backward + two oracle arms, 10 each; Algorithm 1 from t = 0; the mask
    # control's four cells at the two alphas and the two threshold_alphas, less the two magnitude branches it reuses;
    # the other eps_min: vanilla and its control and main branch
    assert steps == [100, 60, 110, (4 * 4 - 2) * 10, 100, 20]
    # the grids as campaign units of their own (record_sweeps): this notebook trains the alpha_main branch alone
    split = cfg.replace(record_sweeps=("alpha_grid", "eps_grid"), alpha_main=0.1)
    assert [s for _, s in split.workload()] == [100, 50, 110, 30]
    assert [s for _, s in split.part_workload("alpha_grid")] == [100, 20, (4 * 3 - 1) * 10]
    assert [s for _, s in split.part_workload("eps_grid")] == [100, 20]


def test_the_scaling_workload_is_two_trainings_per_grid_point_at_k_and_at_the_push():
    """Notebook 03 trains each (d, ρ) of its grid at K, and again at 4 × K (its push: Lemma B.1 by its effect)."""
    cfg = ScalingConfig(ds=(10, 20, 30), ratios=(1.0, 0.5), steps=7, n_pairs=16)
    work = cfg.workload()
    assert sorted((c.d, round(c.eps_min / cfg.eps_max, 6), c.n_pairs) for c, _ in work) == sorted(
        (d, r, k) for d in (10, 20, 30) for r in (1.0, 0.5) for k in (16, 64)) and all(s == 7 for _, s in work)


def test_rates_files_that_are_missing_or_broken_give_no_rates(tmp_path):
    assert runtime.load_rates(tmp_path / "none.json") == {}
    (tmp_path / "bad.json").write_text("{")
    assert runtime.load_rates(tmp_path / "bad.json") == {}
    (tmp_path / "odd.json").write_text(json.dumps({"rates": {"cpu": {"flops_per_s": 1.0}}}))   # fields missing
    assert runtime.load_rates(tmp_path / "odd.json") == {}


def test_the_committed_rates_file_is_read_with_every_field():
    rates = runtime.load_rates(ROOT / runtime.RATES_FILE)
    assert "cpu" in rates and rates["cpu"].flops_per_s > 0 and rates["cpu"].step_overhead_s >= 0


def test_the_parameter_check_says_how_long_a_long_run_will_take(monkeypatch, capsys):
    slow = {"cpu": _rate(gflops=1e-3, overhead=10.0)}            # 10 s a step: any run is long
    monkeypatch.setattr(runtime, "load_rates", lambda path=None: slow)
    ns = {"steps": 100, "d": 10, "d1": 50, "m": 20, "R": 2, "device": "cpu"}
    SimConfig.from_namespace(ns)
    out = capsys.readouterr().out
    assert out.startswith("Expect about") and "100 steps" in out
    monkeypatch.setenv(runtime.ESTIMATED_ENV, "1")                   # the book runner printed it already
    SimConfig.from_namespace(ns)
    assert capsys.readouterr().out == ""
    monkeypatch.delenv(runtime.ESTIMATED_ENV)
    monkeypatch.setattr(runtime, "load_rates", lambda path=None: {"cpu": _rate(1e6, 0.0)})
    SimConfig.from_namespace(ns)
    assert capsys.readouterr().out == ""                             # a short run says nothing


def test_the_runner_prints_an_estimate_per_notebook_and_a_total():
    from imbalanced_cl.book.build import runner
    from imbalanced_cl.book.build.profiles import params
    runs = [(ROOT / "notebooks" / f"{nb}.ipynb", params("ci", nb)) for nb in ("03_Ni_scaling", "04_pruning_gains")]
    lines = runner.time_estimates(runs, {"cpu": _rate()})
    assert [ln.split(":")[0] for ln in lines[:2]] == ["[estimate] 03_Ni_scaling", "[estimate] 04_pruning_gains"]
    assert lines[2].startswith("[estimate] in all, about")
    assert runner.time_estimates(runs, {}) == []


def test_the_rate_fit_recovers_a_known_overhead_and_rate():
    """benchmarks/loop_rates.fit on exact points seconds = 0.01 + flops / 2e9 gives back (0.01, 2e9); on points that
    would need a negative fixed cost, it fits the rate alone with no overhead."""
    import sys
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from loop_rates import fit
    pts = [(f, 0.01 + f / 2e9) for f in (1e6, 1e8, 1e9, 1e10)]
    a, r = fit(pts)
    assert a == pytest.approx(0.01, rel=1e-9) and r == pytest.approx(2e9, rel=1e-9)
    a, r = fit([(1e9, 0.4), (2e9, 1.0)])            # a straight line through them would cross below zero
    assert a == 0.0 and 1e9 / 0.4 > r > 2e9 / 1.0


@pytest.mark.parametrize("seconds, text", [(40, "40 s"), (720, "12 min"), (3.2 * 3600, "3.2 h"),
                                           (815.7 * 3600, "34 days"), (187742.0 * 3600, "21 years")])
def test_a_duration_reads_in_the_unit_a_reader_would_use(seconds, text):
    """Hand-worked: 815.7 h is 34 days, 187,742 h is 21.4 years (a target cell's estimate read '187742.0 h')."""
    assert runtime.duration(seconds) == text
