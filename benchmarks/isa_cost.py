"""What pinning one CPU kernel path would cost: the same training run under the host's native kernels and under
MKL's conditional numerical reproducibility with ATen's portable kernels, as a ratio taken in one run.

Each setting runs in a child process (MKL and ATen read these variables once, when torch loads), twice, best kept.
The same run also says whether the two settings give the same bits (they need not: different kernels round
differently, which is the point of pinning one).
Run: .venv/bin/python benchmarks/isa_cost.py [--quick]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

SETTINGS = {
    "native": {},
    "pinned AVX2 (MKL_CBWR=AVX2, ATEN_CPU_CAPABILITY=avx2)": {"MKL_CBWR": "AVX2", "ATEN_CPU_CAPABILITY": "avx2"},
    "pinned portable (MKL_CBWR=COMPATIBLE, ATEN_CPU_CAPABILITY=default)": {"MKL_CBWR": "COMPATIBLE",
                                                                            "ATEN_CPU_CAPABILITY": "default"},
}

CHILD = r"""
import hashlib, json, sys, time, torch
from imbalanced_cl.sim.config import SimConfig
from imbalanced_cl.sim.train import train
torch.set_num_threads(1)
cfg = SimConfig(R=4, steps=int(sys.argv[1]), progress=False, device="cpu")
best = 1e9
for _ in range(2):
    t = time.perf_counter(); run = train(cfg); best = min(best, time.perf_counter() - t)
print(json.dumps({"s": best, "bits": hashlib.sha256(run.W.numpy().tobytes()).hexdigest()[:12],
                  "isa": torch.backends.cpu.get_cpu_capability()}))
"""


def measure(env: dict, steps: int) -> dict:
    """Seconds (best of two) and a digest of the final weights of one training run under `env`."""
    out = subprocess.run([sys.executable, "-c", CHILD, str(steps)], env={**os.environ, **env, "OMP_NUM_THREADS": "1"},
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    """Print each setting's time, its ratio to native, its ATen kernel path and whether the bits agree."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer steps")
    steps = 40 if ap.parse_args().quick else 200
    res = {name: measure(env, steps) for name, env in SETTINGS.items()}
    base = res["native"]["s"]
    for name, r in res.items():
        print(f"{name:68s} {r['s']:7.2f} s  x{r['s'] / base:5.2f}  ATen {r['isa']:8s} weights {r['bits']}")
    for name, r in list(res.items())[1:]:
        print(f"{name}: same bits as native on this host: {r['bits'] == res['native']['bits']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
