"""A size check before compute: sim.memory's peak estimate against a measured peak, and the refusal of sizes no
machine here holds, in one line with the numbers, by the book runner and the campaign before anything runs."""
from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import pytest

from imbalanced_cl.book.build import runner
from imbalanced_cl.book.build.profiles import params as profile_params
from imbalanced_cl.sim import memory
from imbalanced_cl.sim.config import SimConfig
from imbalanced_cl.validate import ParameterError

ROOT = Path(__file__).resolve().parents[1]
GiB = 2 ** 30
NB = "01_stage1_growth"


def test_the_dictionarys_estimate_matches_a_measured_peak():
    """The oracle: the kernel's count of this process's peak resident memory (VmHWM, reset just before) above its
    resident memory then (VmRSS), while haar_dictionary draws a d1 x d1 Haar matrix in a fresh process. The estimate
    may be cautious, never below what is measured by much."""
    d1 = 2000
    code = ("import torch\nfrom imbalanced_cl.sim.data import haar_dictionary\n"
            "def kb(k):\n    return int(next(ln for ln in open('/proc/self/status') if ln.startswith(k)).split()[1])\n"
            "open('/proc/self/clear_refs', 'w').write('5')\nbase = kb('VmRSS')\n"
            f"haar_dictionary({d1}, 20, torch.Generator().manual_seed(0))\n"
            "print((kb('VmHWM') - base) * 1024)")
    measured = int(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                                  env={"OMP_NUM_THREADS": "1", "PATH": "/usr/bin:/bin"}).stdout)
    est = memory.peak_bytes(d=20, d1=d1, m=20, n_pairs=128, L=4, R=1)["dictionary"]
    assert 0.7 * est <= measured <= 1.2 * est, (measured, est)


def test_peak_bytes_by_hand():
    est = memory.peak_bytes(d=10, d1=100, m=5, n_pairs=8, L=2, R=3, chunk=2)
    assert est["dictionary"] == 4 * 8 * 100 * 100
    assert est["weights"] == 3 * 4 * 4 * (5 * 100 + 100 * 10)
    assert est["data"] == 2 * 2 * 4 * 8 * 2 * (2 * 100 + 4 * 5)
    assert est["total"] == est["dictionary"] + est["weights"] + est["data"]


def test_sizes_no_machine_holds_are_refused_in_one_line_with_the_numbers():
    cfg = SimConfig(d=100000, d1=500000, m=20, R=3, n_pairs=128)
    why = memory.size_problem(cfg, available=64 * GiB)
    assert len(why.splitlines()) == 1 and "d1=500000" in why and "TiB" in why and "64.0 GiB" in why
    assert "500000 x 500000 dictionary" in why and "--force" in why
    assert memory.size_problem(SimConfig(d1=20000, d=20, m=20), available=8 * GiB)       # 12 GiB: not in 8
    assert memory.size_problem(SimConfig(d1=20000, d=20, m=20), available=64 * GiB) == ""
    assert memory.size_problem(SimConfig(), available=GiB) == ""                         # the defaults: MiB


def test_a_grid_counts_at_its_largest_point():
    from imbalanced_cl.claims.scale import ScaleConfig
    cfg = ScaleConfig(**{k: tuple(v) if isinstance(v, list) else v
                         for k, v in profile_params("ci", "08_scale").items()})
    big = cfg.replace(ds=(20, 40, 4000))
    s = memory.sizes(big)
    assert s["d"] == 4000 and s["d1"] == round(cfg.c1 * 4000) and s["m"] >= cfg.m


def test_the_book_runner_refuses_before_any_notebook_runs_and_force_overrides():
    with pytest.raises(ParameterError) as e:
        runner.plan(ROOT, "ci", [NB], False, {"d": 100000, "d1": 500000}, None)
    (line,) = str(e.value).splitlines()
    assert line.startswith(f"{NB}: sizes d=100000, d1=500000") and "TiB" in line
    _, runs = runner.plan(ROOT, "ci", [NB], False, {"d": 100000, "d1": 500000}, None, force=True)
    assert runs[0][1]["d1"] == 500000


def test_the_campaign_checks_a_units_sizes_against_its_slurm_jobs_memory():
    from imbalanced_cl.campaign.cli import check_sizes
    from imbalanced_cl.campaign.kinds import plan_notebooks
    (unit,) = plan_notebooks("ci", ROOT, [NB])
    big = type(unit)(unit.kind, unit.name, unit.profile, {**unit.params, "d1": 20000}, unit.code)
    args = argparse.Namespace(slurm=True, memory="8GB")
    check_sizes([unit], ROOT, args)                          # the ci sizes fit 8 GB
    with pytest.raises(ParameterError,
                       match=r"d1=20000, .* need about 12\.\d GiB .* more than the 7\.5 GiB each Slurm job"):
        check_sizes([big], ROOT, args)


def test_a_notebooks_own_check_refuses_a_size_no_machine_holds(monkeypatch):
    """`papermill -p d 100000 -p d1 500000` stops at the notebook's check cell (from_namespace), in one line, before
    anything is allocated; IMBALANCED_CL_FORCE=1 lets it through, and the runner's own build skips the check."""
    from imbalanced_cl.book.build.params import build
    from imbalanced_cl.claims.stage1 import Stage1Config
    from imbalanced_cl.sim.config import FORCE_ENV
    monkeypatch.delenv(FORCE_ENV, raising=False)
    ns = {"d": 100000, "d1": 500000}
    with pytest.raises(ParameterError) as err:
        Stage1Config.from_namespace(ns)
    assert "\n" not in str(err.value) and "need about" in str(err.value) and f"{FORCE_ENV}=1" in str(err.value)
    assert build(Stage1Config, ns).d1 == 500000
    monkeypatch.setenv(FORCE_ENV, "1")
    assert Stage1Config.from_namespace(ns).d == 100000
    monkeypatch.delenv(FORCE_ENV)
    assert Stage1Config.from_namespace({"R": 2}).R == 2            # the defaults fit
