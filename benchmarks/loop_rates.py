"""The training loop's speed on this machine, as the time estimate uses it (sim/runtime.py): one step costs a fixed
overhead plus its counted FLOPs over a rate. Times train() itself at a few sizes (pairs drawn, bias, stage clock,
history: the whole loop), fits seconds per step = overhead + FLOPs / rate by least squares, and writes the rate to
results/bench/loop_rates.json under this device's name (other devices' entries are kept).

With --from-projection FILE (a benchmarks/paper_projection.py --json output, e.g. a lent GPU's), the same fit is made
from that file's per-notebook loop rates instead of timing here.
Run: .venv/bin/python benchmarks/loop_rates.py [--device cpu|cuda] [--steps N] [--quick] [--from-projection FILE]
(`make bench --quick`, through `python -m benchmarks --quick`, prints the fit and leaves the rates file as it is.)
"""
from __future__ import annotations

import argparse
import datetime
import json

import torch

from imbalanced_cl.book.records.provenance import cpu_model
from imbalanced_cl.paths import repo_root
from imbalanced_cl.sim.config import SimConfig
from imbalanced_cl.sim.runtime import RATES_FILE
from imbalanced_cl.sim.runtime import step_flops

# (R, K, d1, m, d): from the ci profile's size to the default profile's larger trainings
SIZES = ((2, 128, 60, 20, 12), (4, 256, 200, 60, 10), (8, 512, 400, 200, 20), (8, 512, 800, 400, 40))


def _size_cfg(R: int, K: int, d1: int, m: int, d: int, device: str) -> SimConfig:
    return SimConfig(R=R, n_pairs=K, d1=d1, m=m, d=d, device=device, t1_max=1, progress=False, record_every=10)


def step_seconds(cfg: SimConfig, steps: int) -> float:
    """Seconds per step of train() at `cfg` past T1 (token-level BReLU): a (2 + n)-step run minus a 2-step run, each
    the fastest of two, with n grown from `steps` until the difference is at least half a second (start-up noise)."""
    from paper_projection import _timed

    from imbalanced_cl.sim.train import train

    def timed(n: int) -> float:
        return min(_timed(lambda: train(cfg.replace(steps=n)), cfg.device) for _ in range(2))
    base = timed(2)                           # start-up (dictionaries, allocator, kernels) and two steps
    n = steps
    while True:
        diff = timed(2 + n) - base
        if diff >= 0.5 or n >= 4096:
            return max(diff, 1e-9) / n
        n *= 4


def fit(points: list[tuple[float, float]]) -> tuple[float, float]:
    """(overhead seconds, FLOP/s) of seconds = overhead + flops / rate, least squares in relative error over
    (flops, seconds) points (each row divided by its seconds, so a 10 ms step counts as much as a 2 s one), with the
    overhead held at 0 or above."""
    x = torch.tensor([p[0] for p in points], dtype=torch.float64)
    y = torch.tensor([p[1] for p in points], dtype=torch.float64)
    A = torch.stack([torch.ones_like(x), x], 1) / y[:, None]
    a, b = torch.linalg.lstsq(A, torch.ones_like(y)[:, None]).solution[:, 0].tolist()
    if a < 0 or b <= 0:                       # a fixed cost below zero is noise: fit the rate alone
        a, b = 0.0, float((x / y).sum() / (x * x / (y * y)).sum())
    return a, 1.0 / b


def main() -> None:
    """Measure (or read) the loop's step times, fit overhead and rate, and write them to the rates file."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu", choices=("cpu", "cuda"))
    ap.add_argument("--steps", type=int, default=6, help="timed steps per size")
    ap.add_argument("--quick", action="store_true",
                    help="two timed steps per size, printed only (the rates file keeps its measurement)")
    ap.add_argument("--from-projection", help="fit the rate from a paper_projection.py --json file instead")
    ap.add_argument("--out", default=str(repo_root() / RATES_FILE))
    args = ap.parse_args()
    if args.from_projection:
        proj = json.load(open(args.from_projection))
        dev, machine, threads = proj["device"], proj["name"], 1
        points = []
        for v in proj["notebooks"].values():
            f = step_flops(SimConfig(R=v["R"], n_pairs=v["K"], d1=v["d1"], m=v["m"]), v["R"], linear=False)
            points.append((f, f / v["loop_flops"]))
        source = f"benchmarks/paper_projection.py on {machine} ({args.from_projection})"
    else:
        dev = args.device
        machine = torch.cuda.get_device_name(0) if dev == "cuda" else cpu_model()
        threads = torch.get_num_threads()
        points = []
        for R, K, d1, m, d in SIZES:
            cfg = _size_cfg(R, K, d1, m, d, dev)
            s = step_seconds(cfg, 2 if args.quick else args.steps)
            points.append((step_flops(cfg, R, linear=False), s))
            print(f"R={R} K={K} d1={d1} m={m}: {1e3 * s:.2f} ms a step, {points[-1][0] / s / 1e9:.2f} GFLOP/s",
                  flush=True)
        source = "benchmarks/loop_rates.py"
    overhead, rate = fit(points)
    print(f"{dev} ({machine}): {rate / 1e9:.3g} GFLOP/s + {1e3 * overhead:.3g} ms a step")
    if args.quick:
        return
    try:
        stored = json.load(open(args.out))
    except (OSError, ValueError):
        stored = {"what": "the training loop's measured speed, per device: seconds per step = step_overhead_s + "
                          "counted FLOPs / flops_per_s (benchmarks/loop_rates.py; read by sim/runtime.py)",
                  "rates": {}}
    stored["rates"][dev] = {"flops_per_s": rate, "step_overhead_s": overhead, "threads": threads,
                            "machine": machine, "measured": f"{datetime.date.today()}, {source}"}
    import pathlib
    pathlib.Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "w") as fh:
        json.dump(stored, fh, indent=1)
        fh.write("\n")



if __name__ == "__main__":
    main()
