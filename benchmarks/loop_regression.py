"""Is the CPU training loop no slower than an earlier version of it? The same training, timed under this checkout's
code and under an earlier commit's (a temporary git worktree), alternately in child processes, as a ratio in one run.

Default earlier commit: 40e5c2c, the last one before the loop was reworked for the GPU (stage clock, draws per batch
on a GPU, chunks from GPU memory). Both sides must give the same weights (the CPU's numbers did not move).
Run: .venv/bin/python benchmarks/loop_regression.py [--quick] [--against REV]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHILD = r"""
import hashlib, json, sys, time, torch
from imbalanced_cl.sim.config import SimConfig
from imbalanced_cl.sim.train import train
torch.set_num_threads(1)
cfg = SimConfig(R=4, steps=int(sys.argv[1]), progress=False, device="cpu", t1_fraction=0.5)
t = time.perf_counter(); run = train(cfg); s = time.perf_counter() - t
print(json.dumps({"s": s, "bits": hashlib.sha256(run.W.numpy().tobytes()).hexdigest()[:12], "T1": run.T1.tolist()}))
"""


def timed(src: Path, steps: int) -> dict:
    """One training run's seconds and weight digest under the package source at `src`."""
    env = {**os.environ, "PYTHONPATH": str(src), "OMP_NUM_THREADS": "1"}
    out = subprocess.run([sys.executable, "-c", CHILD, str(steps)], env=env, capture_output=True, text=True,
                         check=True, cwd=src.parent)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    """Time both versions alternately (best of three each) and print the ratio."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer steps")
    ap.add_argument("--against", default="40e5c2c", help="the earlier commit")
    args = ap.parse_args()
    steps = 60 if args.quick else 300
    with tempfile.TemporaryDirectory() as tmp:
        old = Path(tmp) / "old"
        subprocess.run(["git", "worktree", "add", "--detach", str(old), args.against], cwd=ROOT, check=True,
                       capture_output=True)
        try:
            runs = {"now": [], args.against: []}
            for _ in range(3):
                runs["now"].append(timed(ROOT / "src", steps))
                runs[args.against].append(timed(old / "src", steps))
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(old)], cwd=ROOT, capture_output=True)
    best = {k: min(r["s"] for r in v) for k, v in runs.items()}
    same = runs["now"][0]["bits"] == runs[args.against][0]["bits"]
    print(f"CPU loop, {steps} steps at the default size (R 4, one thread), best of 3, alternating: "
          f"now {best['now']:.2f} s, "
          f"{args.against} {best[args.against]:.2f} s: ratio now/then {best['now'] / best[args.against]:.2f} "
          f"(target <= 1); same weights: {same}; T1 now {runs['now'][0]['T1']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
