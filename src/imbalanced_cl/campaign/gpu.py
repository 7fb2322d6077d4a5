"""`make gpu-check`: on a CUDA machine, in one call under 9 minutes: the CUDA tests, the GPU step benchmark, then
`paper` campaign units until the budget ends. Without CUDA: one line, exit 0.

The order is the cheapest first contact first: if the tests fail, the benchmark and the units still run (each
step prints its exit code), so one call on a lent GPU records as much as it can.
"""
from __future__ import annotations

import os
import subprocess
import sys
import time

from ..paths import repo_root

TOTAL_S = 540            # the whole call: under the device tool's 10-minute limit, with margin
# Cheapest paper units first (benchmarks/paper_projection.py). Notebook 03 is not here: its paper points are being
# computed on the CPU (checkpoints in results/campaign/paper/checkpoints/), and a GPU run would resume from them, so
# one record would mix points of two devices.
NOTEBOOKS = ["02_lucky_neurons", "01_stage1_growth", "05_appendix_figures", "09_feature_decoupling", "08_scale",
             "04_pruning_gains"]
CUDA_TEST_FILES = ["tests/test_core.py", "tests/test_lt_speed.py"]   # where the `cuda`-marked tests live
THREADS = 2              # torch threads per paper unit on a GPU machine (its pairs are drawn on the CPU)


def _step(name: str, cmd: list[str], timeout: float) -> int:
    """Run one step with a time limit; print its exit code (124 when it ran out of time)."""
    print(f"== gpu-check: {name} ({timeout:.0f} s at most)", flush=True)
    try:
        rc = subprocess.call(cmd, cwd=repo_root(), timeout=max(timeout, 1))
    except subprocess.TimeoutExpired:
        rc = 124
    print(f"== gpu-check: {name}: exit {rc}", flush=True)
    return rc


def unit_names(profile: str = "paper") -> list[str]:
    """The units to try, cheapest first: the premise map's large-d cells (premise_cells.plan), then NOTEBOOKS."""
    from .premise_cells import plan
    return [u.name for u in plan(profile, repo_root())] + NOTEBOOKS


def workers_for(cores: int, threads: int = THREADS) -> int:
    """Campaign workers on a GPU machine: the units share the one GPU, and each draws its pairs on `threads` cores."""
    return max(1, min(8, cores // threads))


def main(argv=None) -> int:
    """Skip without CUDA; else tests, benchmark and campaign units within TOTAL_S seconds."""
    import torch
    if not torch.cuda.is_available():
        print(f"gpu-check: no CUDA device on this machine (torch {torch.__version__}); skipped")
        return 0
    t0 = time.time()
    left = lambda: TOTAL_S - (time.time() - t0)  # noqa: E731
    print(f"gpu-check on {torch.cuda.get_device_name(0)} (torch {torch.__version__}, {os.cpu_count()} cores)",
          flush=True)
    rc = _step("CUDA tests", [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "cuda",
                              *CUDA_TEST_FILES], min(120, left()))
    rc |= _step("GPU step benchmark", [sys.executable, "benchmarks/paper_projection.py", "--quick"],
                min(90, left()))
    budget = int(left() - 30)     # 30 s for the cluster to start and stop
    if budget > 0:
        rc |= _step("paper units", [sys.executable, "-m", "imbalanced_cl", "campaign", "run", "--profile", "paper",
                                    "--kind", "premise_cell", "notebook", "--only", *unit_names(),
                                    "--workers", str(workers_for(os.cpu_count() or 1)),
                                    "--threads", str(THREADS), "--budget", f"{budget}s", "--no-progress"], left())
    subprocess.call([sys.executable, "-m", "imbalanced_cl", "campaign", "status", "--profile", "paper"],
                    cwd=repo_root(), timeout=60)
    return rc


if __name__ == "__main__":
    sys.exit(main())
