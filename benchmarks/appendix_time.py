"""Notebook 05 (App. A.2) timing: the whole default-profile computation, and the paper profile projected on this
machine.

The projection multiplies the wall time per replicate-step measured here (training, data and the Figs. 3-4
evaluation included) by the paper profile's replicate-steps (60 grid points x 100 repeats x 2 arms x steps).
If a target is missed, the FLOPs of the work are compared with a float32 matmul rate measured in the same run.

Run: .venv/bin/python benchmarks/appendix_time.py [--quick] [--threads N] [--profile default]
"""
from __future__ import annotations

import argparse
import ast
import os
import time

import torch

from imbalanced_cl.claims import appendix as A
from imbalanced_cl.book.build.profiles import params, repo_root

NOTEBOOK = "05_appendix_figures"
TARGETS = {"default": 15 * 60, "paper": 3 * 3600}   # seconds, on 2 cores (issue 5)


def matmul_gflops(n: int = 2048, reps: int = 5) -> float:
    """Float32 GFLOP/s of a large square matmul on this machine, now."""
    a, b = torch.randn(n, n), torch.randn(n, n)
    a @ b
    t = time.perf_counter()
    for _ in range(reps):
        a @ b
    return 2 * n ** 3 * reps / (time.perf_counter() - t) / 1e9


def notebook_config(profile: str, **overrides) -> A.AppendixConfig:
    """The AppendixConfig the notebook builds under a profile: parameters-cell defaults, then the profile."""
    import papermill as pm
    nb = repo_root() / "notebooks" / f"{NOTEBOOK}.ipynb"
    ns = {k: ast.literal_eval(v["default"]) for k, v in pm.inspect_notebook(str(nb)).items()}
    ns.update(params(profile, NOTEBOOK))
    ns.update(overrides)
    return A.AppendixConfig.from_namespace(ns)


def hms(s: float) -> str:
    """Seconds as h:mm:ss."""
    s = int(round(s))
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"


def main(argv=None) -> None:
    """Time the measured profile, project the paper profile, and print both with the configuration."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="time the ci profile instead of the default one (seconds)")
    ap.add_argument("--profile", default=None, help="profile to time (default: 'default', or 'ci' with --quick)")
    ap.add_argument("--threads", type=int, default=None, help="torch threads (default: the profile's setting)")
    args = ap.parse_args(argv)
    profile = args.profile or ("ci" if args.quick else "default")
    over = {"progress": False} | ({"threads": args.threads} if args.threads is not None else {})
    cfg = notebook_config(profile, **over)
    paper = notebook_config("paper", **{k: v for k, v in over.items() if k == "threads"})
    n_pts = len(A.grid_points(cfg))
    print(f"configuration ({profile} profile): d={cfg.d} d1={cfg.d1} m={cfg.m} L={cfg.L} K={cfg.n_pairs} "
          f"steps={cfg.steps} repeats={cfg.repeats} arms={cfg.arms} points={n_pts} chunk={cfg.chunk} "
          f"n_test={cfg.n_test} n_probe_train={cfg.n_probe_train}")
    print(f"machine: {os.cpu_count()} cpus, torch threads {cfg.threads or torch.get_num_threads()}, "
          f"load average at start {os.getloadavg()[0]:.1f} (other processes share the cores: timings are inflated)")
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    rate0 = matmul_gflops()
    res = A.run_appendix(cfg)
    rate1 = matmul_gflops()
    rate = max(rate0, rate1)
    per = res.seconds / res.replicate_steps
    flops = A.flops_per_training(cfg, round(res.t1_mean)) * n_pts * cfg.repeats * len(cfg.arms)
    print(f"\n{profile} profile: {hms(res.seconds)} wall ({res.seconds:.1f} s) for "
          f"{sum(res.trained.values())} trainings in {res.train_calls} batched calls; "
          f"{1e3 * per:.2f} ms per replicate-step (all costs included); mean T1 {res.t1_mean:.0f}")
    print(f"matmul rate measured in this run: {rate0:.1f} / {rate1:.1f} GFLOP/s (before / after); training FLOPs "
          f"{flops / 1e12:.2f} TFLOP -> achieved {flops / res.seconds / 1e9:.2f} GFLOP/s "
          f"({flops / res.seconds / 1e9 / rate:.0%} of the matmul rate)")
    if profile in TARGETS:
        ok = res.seconds <= TARGETS[profile]
        print(f"target {profile} <= {hms(TARGETS[profile])}: {'met' if ok else 'NOT met'}")
    paper_steps = len(A.grid_points(paper)) * paper.repeats * len(paper.arms) * paper.steps
    sizes = ("d", "d1", "m", "L", "n_pairs", "n_test", "n_probe_train", "chunk")
    if any(getattr(cfg, k) != getattr(paper, k) for k in sizes):
        print(f"\npaper profile: {paper_steps:,} replicate-steps; projection skipped: the {profile} profile's model "
              f"or evaluation sizes differ from the paper profile's ({', '.join(sizes)}); run without --quick")
        return
    proj = per * paper_steps
    paper_flops = A.flops_per_training(paper, round(res.t1_mean)) * paper_steps / paper.steps
    print(f"\npaper profile: {len(A.grid_points(paper))} points x {paper.repeats} repeats x {len(paper.arms)} arms "
          f"x {paper.steps} steps = {paper_steps:,} replicate-steps; projected {hms(proj)} ({proj / 3600:.1f} h) "
          f"on this machine at the rate measured here; target <= 3:00:00 "
          f"{'met' if proj <= TARGETS['paper'] else 'NOT met'}")
    print(f"  paper training FLOPs {paper_flops / 1e12:.0f} TFLOP; at the full matmul rate ({rate:.1f} GFLOP/s) "
          f"the floor is {hms(paper_flops / rate / 1e9)}; to fit 3 h needs {paper_flops / TARGETS['paper'] / 1e9:.1f} "
          f"GFLOP/s sustained")


if __name__ == "__main__":
    main()
