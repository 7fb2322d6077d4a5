"""gpu-check on a lent GPU spends its minutes on units: the CUDA tests and the benchmark are records of their own,
run only where today's code has no passing result of them on this kind of GPU (issue 47, item 5). Checked here on
the CPU with the GPU and the steps stood in for."""
from __future__ import annotations

import pytest

from imbalanced_cl.campaign import gpu


@pytest.mark.parametrize("name, kind", [("NVIDIA H100 80GB HBM3", "h100"), ("NVIDIA H200", "h200"),
                                        ("NVIDIA A100-SXM4-40GB", "a100"), ("Some GPU", "some-gpu")])
def test_the_kind_of_gpu_is_its_model(name, kind):
    assert gpu.gpu_kind(name) == kind


@pytest.fixture
def lease(tmp_path, monkeypatch):
    """A repository with a package and test files, a 'CUDA' device, and steps that only log what they would run."""
    for rel in ("src/imbalanced_cl/x.py", "benchmarks/paper_projection.py", *gpu.CUDA_TEST_FILES):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x = 1\n")
    ran, rcs = [], {}
    monkeypatch.setattr(gpu, "repo_root", lambda: tmp_path)
    monkeypatch.setattr(gpu, "_step", lambda name, cmd, timeout: ran.append(name) or rcs.get(name, 0))
    monkeypatch.setattr(gpu, "plan", lambda projection: [])
    monkeypatch.setattr(gpu.subprocess, "call", lambda *a, **k: 0)
    import torch
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda i=0: "NVIDIA H100 80GB HBM3")
    return tmp_path, ran, rcs


def test_a_second_call_on_the_same_code_goes_straight_to_the_units(lease):
    root, ran, _ = lease
    assert gpu.main([]) == 0 and ran == ["CUDA tests", "paper-size benchmark"]
    assert gpu.main([]) == 0 and ran == ["CUDA tests", "paper-size benchmark"]        # nothing run again
    assert sorted(p.name.rsplit("-", 1)[0] for p in (root / "results" / "gpu" / "checks" / "h100").iterdir()) == [
        "cuda-tests", "paper-size-benchmark"]


def test_a_code_change_or_a_failed_check_runs_it_again(lease):
    root, ran, rcs = lease
    rcs["CUDA tests"] = 1                                                 # failed: not a pass to skip on
    assert gpu.main([]) == 1
    rcs.clear()
    assert gpu.main([]) == 0 and ran == ["CUDA tests", "paper-size benchmark", "CUDA tests"]
    (root / "benchmarks" / "paper_projection.py").write_text("x = 2\n")   # the benchmark's code moved, not the tests'
    assert gpu.main([]) == 0 and ran[3:] == ["paper-size benchmark"]
