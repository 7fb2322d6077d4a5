"""The campaign's throughput in units per hour, with 1 worker and with 2, measured in one run (issue 29, item 3).

A unit here is a small training run of the paper's model (sim.train at one thread, a few seconds), recorded by the
campaign engine exactly as a real unit is (lock, atomic JSON record), on a Dask LocalCluster whose workers each pin
one torch thread. The clusters are started and warmed up (torch imported) before the clock starts, so the figure
is the steady-state rate. Target: 2 workers >= 1.7x the throughput of 1. Take it on an idle machine.

Run: .venv/bin/python benchmarks/campaign_throughput.py [--quick]
"""
from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from imbalanced_cl.campaign import clusters, engine
from imbalanced_cl.campaign.units import Kind, Unit
from imbalanced_cl.paths import repo_root


def plan_bench(profile: str, root: Path, only=None, n: int = 8, steps: int = 60, tag: str = "") -> list[Unit]:
    """n training units b0..b{n-1} (one seed each) of `steps` steps; `tag` keeps two runs' keys apart."""
    return [Unit("bench", f"b{i}{tag}", profile, {"seed": i, "steps": steps}, "bench", seed=i) for i in range(n)]


def run_bench(unit: Unit, root: Path) -> dict:
    """Train the paper's model (d = 20, d1 = 100, m = 50, K = 256 fresh pairs, 2 replicates) for the unit's steps."""
    from imbalanced_cl.sim.config import SimConfig
    from imbalanced_cl.sim.train import train
    cfg = SimConfig(d=20, d1=100, m=50, n_pairs=256, R=2, steps=unit.params["steps"], seed=unit.params["seed"],
                    progress=False, record_every=10 ** 6)
    run = train(cfg)
    return {"steps": run.step, "weight_norm": float(run.W.norm())}


BENCH = Kind("bench", plan_bench, run_bench)


def warm(cluster) -> None:
    """Import torch and the trainer in every worker before timing (the first import costs seconds)."""
    from distributed import Client
    with Client(cluster) as c:
        c.run(lambda: __import__("imbalanced_cl.sim.train") and None)


def throughput(workers: int, n: int, steps: int, folder: Path) -> tuple[float, float]:
    """(units per hour, wall seconds) of n bench units on a warmed LocalCluster of `workers` one-thread workers."""
    cluster = clusters.local_cluster(workers)
    try:
        warm(cluster)
        units = plan_bench("bench", folder, n=n, steps=steps, tag=f"-w{workers}")
        opts = engine.Options(folder / f"w{workers}", workers=workers, budget_s=3600, progress=False)
        t0 = time.perf_counter()
        out = engine.run({"bench": BENCH}, units, opts, repo_root(), cluster=cluster)
        wall = time.perf_counter() - t0
    finally:
        cluster.close()
    if out.failed or len(out.ran) != n:
        raise RuntimeError(f"bench units failed: {out.failed}")
    return n / wall * 3600, wall


def main(argv=None) -> None:
    """Print units/hour with 1 and with 2 workers, and their ratio against the 1.7x target."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="fewer, shorter units (about a minute in all)")
    args = ap.parse_args(argv)
    n, steps = (4, 80) if args.quick else (8, 200)
    print(f"campaign throughput: {n} units of sim.train (d=20, d1=100, m=50, K=256, R=2, {steps} steps), "
          f"1 torch thread per worker, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        one, w1 = throughput(1, n, steps, Path(tmp))
        print(f"  1 worker : {one:7.0f} units/hour ({w1:.1f} s)", flush=True)
        two, w2 = throughput(2, n, steps, Path(tmp))
        print(f"  2 workers: {two:7.0f} units/hour ({w2:.1f} s)", flush=True)
    ratio = two / one
    print(f"speed-up: {ratio:.2f}x with 2 workers (target >= 1.7x: {'met' if ratio >= 1.7 else 'not met'}); "
          f"load after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
