"""Fresh pairs every step vs one fixed set: the cost of the theorems' regime, as a ratio taken in one run.

Target (issue 17): a fresh step costs at most 1.5x a fixed step at notebook 04's default sizes.
Run: .venv/bin/python benchmarks/sampling_speed.py [--quick]
"""
from __future__ import annotations

import argparse
import math
import time

import torch

from imbalanced_cl.claims.pruning import PruningConfig
from imbalanced_cl.sim import data as D
from imbalanced_cl.sim.train import train


def per_step(cfg, steps: int, repeats: int = 3) -> float:
    """Least wall time per training step over a few runs (single timings swing +-20% on a shared VM)."""
    cfg = cfg.replace(steps=steps, progress=False)
    train(cfg.replace(steps=2))   # warm-up
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        train(cfg)
        best = min(best, (time.perf_counter() - t) / steps)
    return best


def main() -> None:
    """Print the fresh/fixed step ratio at notebook 04's default sizes, and the sampler's share of a fresh step."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="fewer steps")
    steps = 10 if ap.parse_args().quick else 40
    cfg = PruningConfig().sim(steps=steps)          # notebook 04's default sizes (R, d, d1, m, K, L)
    print(f"notebook 04 default sizes: R={cfg.R}, d={cfg.d}, d1={cfg.d1}, m={cfg.m}, K={cfg.n_pairs}, L={cfg.L}, "
          f"threads={torch.get_num_threads()}")
    for phase, bias in (("Stage 1 (b = 0)", "none"), ("after T1 (BReLU)", "schedule")):
        c = cfg.replace(bias=bias, t1_max=1 if bias == "schedule" else 0)
        fixed = per_step(c.replace(sampling="fixed"), steps)
        fresh = per_step(c.replace(sampling="fresh"), steps)
        print(f"{phase:17s}: fixed {fixed * 1e3:6.1f} ms/step, fresh {fresh * 1e3:6.1f} ms/step, "
              f"fresh/fixed = {fresh / fixed:.2f} (target <= 1.5)")
    M = D.make_dictionaries(cfg, range(cfg.R))
    t = time.perf_counter()
    for k in range(steps):
        D.make_pairs(cfg, M, range(cfg.R), extra=k + 1)
    sampler = (time.perf_counter() - t) / steps
    print(f"sampler alone: {sampler * 1e3:.1f} ms per step of {cfg.R} x {cfg.n_pairs} pairs")
    # The floor: the random numbers alone, as the sampler draws them (one sequential stream per replicate).
    gens = [D.generator(cfg.seed, r, D.STREAM_TRAIN, 1) for r in range(cfg.R)]
    plan = D._draw_plan(cfg, cfg.n_pairs)
    t = time.perf_counter()
    for _ in range(steps):
        for g in gens:
            D._draws(cfg, cfg.n_pairs, g)
    draws = (time.perf_counter() - t) / steps
    n_normal = sum(math.prod(s) for k, s in plan if k == "n") * cfg.R
    print(f"random numbers alone: {draws * 1e3:.1f} ms per step ({n_normal / 1e6:.2f} M Gaussians for the token "
          f"noise, Assumption 3.3), {draws / fixed:.2f}x the fixed BReLU step: fresh/fixed cannot go below "
          f"{1 + draws / fixed:.2f} with exact draws on this CPU")


if __name__ == "__main__":
    main()
