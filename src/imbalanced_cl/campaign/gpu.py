"""`make gpu-check`: on a CUDA machine, in one call under 9 minutes: the CUDA tests, the GPU step benchmark, then
`paper` campaign units until the budget ends. Without CUDA: one line, exit 0.

The order is the cheapest first contact first: if the tests fail, the benchmark and the units still run (each
step prints its exit code), so one call on a lent GPU records as much as it can.
"""
from __future__ import annotations

import subprocess
import sys
import time

from ..paths import repo_root

TOTAL_S = 540            # the whole call: under the device tool's 10-minute limit, with margin
ORDER = ["02_lucky_neurons", "01_stage1_growth", "03_Ni_scaling", "05_appendix_figures", "09_feature_decoupling",
         "08_scale", "04_pruning_gains"]   # cheapest paper units first (benchmarks/paper_projection.py)


def _step(name: str, cmd: list[str], timeout: float) -> int:
    """Run one step with a time limit; print its exit code (124 when it ran out of time)."""
    print(f"== gpu-check: {name} ({timeout:.0f} s at most)", flush=True)
    try:
        rc = subprocess.call(cmd, cwd=repo_root(), timeout=max(timeout, 1))
    except subprocess.TimeoutExpired:
        rc = 124
    print(f"== gpu-check: {name}: exit {rc}", flush=True)
    return rc


def main(argv=None) -> int:
    """Skip without CUDA; else tests, benchmark and campaign units within TOTAL_S seconds."""
    import torch
    if not torch.cuda.is_available():
        print(f"gpu-check: no CUDA device on this machine (torch {torch.__version__}); skipped")
        return 0
    t0 = time.time()
    left = lambda: TOTAL_S - (time.time() - t0)  # noqa: E731
    print(f"gpu-check on {torch.cuda.get_device_name(0)} (torch {torch.__version__})", flush=True)
    rc = _step("CUDA tests", [sys.executable, "-m", "pytest", "-q", "-m", "cuda"], min(120, left()))
    rc |= _step("GPU step benchmark", [sys.executable, "benchmarks/paper_projection.py", "--quick"],
                min(90, left()))
    budget = int(left() - 30)     # 30 s for the cluster to start and stop
    if budget > 0:
        rc |= _step("paper units", [sys.executable, "-m", "imbalanced_cl", "campaign", "run", "--profile", "paper",
                                    "--only", *ORDER, "--budget", f"{budget}s", "--no-progress"], left())
    subprocess.call([sys.executable, "-m", "imbalanced_cl", "campaign", "status", "--profile", "paper"],
                    cwd=repo_root(), timeout=60)
    return rc


if __name__ == "__main__":
    sys.exit(main())
