"""Independent pieces in worker processes against one process (issue 30): notebook 05's training batches, notebook
03's grid points, notebook 04's replicate shards, notebook 08's values of d and notebook 10's cells, each computed both
ways in one run, with the speed-up and a check that the numbers agree.

On a 2-core CPU the simulation is a chain of small operations, and its pair sampler draws each replicate's numbers
from its own generator, one stream at a time, so one process with two torch threads keeps about one core busy.
Two processes of one thread each (workers.plan, what notebooks 03 and 05 do when their kernel may use two threads)
keep both busy. The two ways alternate (one process, workers, one process, workers) so that a change of load hits
both alike; each row is the better of its two timings.

Run: .venv/bin/python benchmarks/worker_processes.py [--quick] [--threads N]
"""
from __future__ import annotations

import argparse
import functools
import os
import time

import numpy as np
import torch

from imbalanced_cl import workers as W
from imbalanced_cl.campaign import checkpoint
from imbalanced_cl.claims import appendix as A
from imbalanced_cl.claims import premise_map as PM
from imbalanced_cl.claims import pruning as PA
from imbalanced_cl.claims import scale, scaling
from imbalanced_cl.sim.train import train


def appendix_job(quick: bool) -> tuple[str, callable]:
    """Notebook 05 at its default sizes, on the ten eps of Figs. 3-4 at one sigma, repeats=2 and 100 steps: 20 items in
    four batches of 5."""
    cfg = A.AppendixConfig(progress=False, sigmas_12=(0.05,), eps_12=(0.1, 0.2), sigmas_3=(0.05,), sigmas_4=(0.05,),
                           repeats=2, chunk=5,
                           **({"d1": 60, "m": 10, "n_pairs": 32, "steps": 30, "n_test": 200} if quick
                              else {"steps": 100}))

    def run(workers: int):
        res = A.run_appendix(cfg.replace(workers=workers))
        return res.seconds, res.values
    n = len(A.grid_points(cfg)) * cfg.repeats
    return f"05: {n} (point, repeat) items x 2 arms in {-(-n // cfg.chunk)} batches, {cfg.steps} steps", run


def scaling_job(quick: bool) -> tuple[str, callable]:
    """Notebook 03 at its default sizes on d = 10, 20, two ratios and 500 steps: four grid points."""
    cfg = scaling.ScalingConfig(ds=(10, 20), ratios=(1.0, 0.5), progress=False,
                                **({"d1": 40, "m": 20, "n_pairs": 64, "steps": 60} if quick else {"steps": 500}))

    def run(workers: int):
        t0 = time.perf_counter()
        out = checkpoint.grid(functools.partial(scaling.train_grid, log=None), cfg, ("ds", "ratios"), log=None,
                              workers=workers)
        return time.perf_counter() - t0, {k: v["Ni_final"] for k, v in out.items()}
    return f"03: {len(cfg.ds) * len(cfg.ratios)} grid points, R={cfg.R}, {cfg.steps} steps", run


def pruning_job(quick: bool) -> tuple[str, callable]:
    """Notebook 04 at its default sizes, cut to 200 vanilla steps (T1 forced at 100, so every replicate is past it at
    the branch point) and 100 in each branch: the control and five branches in replicate shards, then Step 6's
    literal branch and Algorithm 1 from t = 0 as two whole runs."""
    cfg = PA.PruningConfig(vanilla_steps=200, prune_steps=100, rate_window=100, t1_max=100,
                           **({"d": 8, "d1": 24, "m": 12, "n_pairs": 32} if quick else {}))
    base = train(cfg.vanilla())

    def run(workers: int):
        t0 = time.perf_counter()
        c = cfg.replace(workers=workers)
        runs = PA.run_branches(c, sorted(c.alpha_grid), base)
        var = PA.run_variants(c, base, runs)
        return time.perf_counter() - t0, {f"W{a}": r.W for a, r in runs.items()} | {k: r.W for k, r in var.items()}
    return f"04: {1 + len(cfg.alpha_grid)} branches x {cfg.prune_steps} steps (R={cfg.R} in shards) + 2 variants", run


def scale_job(quick: bool) -> tuple[str, callable]:
    """Notebook 08 at its default sizes on d = 20 and 40 (d = 80 alone takes longer than the rest together)."""
    cfg = scale.ScaleConfig(progress=False, **({"ds": (6, 8), "n_pairs": 32} if quick else {"ds": (20, 40)}))

    def run(workers: int):
        res = scale.run(cfg.replace(workers=workers))
        return res.seconds, {f"{p['d']}{k}": v for p in res.points for k, v in p.items() if isinstance(v, np.ndarray)}
    return f"08: d in {list(cfg.ds)}, two ratio groups, R={cfg.R}", run


def premise_job(quick: bool) -> tuple[str, callable]:
    """Notebook 10's d = 10 plane at its default sizes, two of its lambdas and one ratio: two cells."""
    cfg = PM.PremiseMapConfig(lambdas=("book", "top"), ratios=(0.8,), star_m_over_d=(), star_K=(), star_alpha=(),
                              star_n_minority=(), progress=False, **({"ds": (6,), "n_pairs": 32} if quick else {}))

    def run(workers: int):
        t0 = time.perf_counter()
        res = PM.run_map(cfg.replace(workers=workers), progress=False)
        return time.perf_counter() - t0, {r.cell.label: r.gain for r in res}
    return f"10: {len(cfg.cells())} cells of the d = {cfg.ds[0]} plane", run


def same(a: dict, b: dict) -> bool:
    """Exact equality of two {name: array} results."""
    return all(np.array_equal(np.asarray(a[k]), np.asarray(b[k]), equal_nan=True) for k in a)


def main(argv=None) -> None:
    """Time each job in one process (torch's threads) and in worker processes (one thread each), twice, alternating."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="tiny sizes (seconds): checks the path, measures little")
    ap.add_argument("--threads", type=int, default=None, help="torch threads of the one-process run (default: cores)")
    args = ap.parse_args(argv)
    threads = args.threads or W.cores()
    torch.set_num_threads(threads)
    procs = W.plan(0, 99)
    print(f"machine: {W.cores()} cores; one process with {threads} torch thread(s) against {procs} worker processes "
          f"of one thread; load average at start {os.getloadavg()[0]:.1f}")
    if procs < 2:
        print("one core: nothing to compare")
        return
    for label, run in (appendix_job(args.quick), scaling_job(args.quick), pruning_job(args.quick),
                       scale_job(args.quick), premise_job(args.quick)):
        t_one, t_many, results = [], [], []
        for _ in range(2):
            s, v = run(1)
            t_one.append(s)
            results.append(v)
            s, v = run(0)
            t_many.append(s)
            results.append(v)
        agree = all(same(results[0], r) for r in results[1:])
        print(f"{label}: one process {min(t_one):.1f} s, {procs} workers {min(t_many):.1f} s -> "
              f"speed-up: {min(t_one) / min(t_many):.2f}x; same numbers: {agree}")


if __name__ == "__main__":
    main()
