"""Branches from one checkpoint trained one by one against one batch on shared pairs, as a ratio taken in one run.

Notebook 04 branches its vanilla run into a control and one run per pruning ratio; each used to draw the same fresh
pairs again (pruning.run_branches now trains them as one batch, drawing each step's pairs once: train_branches).
This prints the wall time of both at notebook 04's default sizes, cut to a few steps, and checks that they give the
same weights. Run: .venv/bin/python benchmarks/branch_batch.py [--quick]
"""
from __future__ import annotations

import argparse
import time

import torch

from imbalanced_cl.claims.pruning import PruningConfig, run_branches
from imbalanced_cl.sim.train import train


def one_by_one(cfg: PruningConfig, alphas: list, base) -> dict:
    """The loop run_branches replaced: every branch resumed from the checkpoint on its own."""
    out = {0.0: train(cfg.branch(0.0), resume=base)}
    out.update({a: train(cfg.branch(a), resume=base) for a in alphas})
    return out


def main() -> None:
    """Print seconds per branch step both ways, their ratio, and whether the weights agree bit for bit."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="fewer steps")
    steps = 10 if ap.parse_args().quick else 40
    cfg = PruningConfig(vanilla_steps=20, prune_steps=steps, rate_window=10, record_every=5)
    alphas = sorted(cfg.alpha_grid)
    print(f"notebook 04 default sizes: R={cfg.R}, d={cfg.d}, d1={cfg.d1}, m={cfg.m}, K={cfg.n_pairs}, "
          f"{1 + len(alphas)} branches (control and alpha in {alphas}), {steps} steps, "
          f"threads={torch.get_num_threads()}")
    base = train(cfg.vanilla(t1_max=10))
    times = {"one by one": [], "one batch": []}
    for _ in range(2):                      # alternate, so a load change on a shared machine hits both alike
        for name, fn in (("one by one", one_by_one), ("one batch", run_branches)):
            t = time.perf_counter()
            runs = fn(cfg, alphas, base)
            times[name].append(time.perf_counter() - t)
            if name == "one by one":
                alone = runs
            else:
                batch = runs
    same = all(torch.equal(alone[a].W, batch[a].W) for a in alone)
    best = {k: min(v) for k, v in times.items()}
    print(", ".join(f"{k}: {v:.2f} s" for k, v in best.items())
          + f"; one by one / one batch = {best['one by one'] / best['one batch']:.2f}x; same weights: {same}")


if __name__ == "__main__":
    main()
