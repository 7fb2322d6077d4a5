"""Where a GPU training loop spends its time: torch.profiler over a few steps of train() at notebook 04's paper size,
the top operators by device time and by host time, and the share of the wall time the device was busy.

Only meaningful on a GPU; elsewhere it says so in one line and exits 0.
Run: python benchmarks/gpu_profile.py [--steps N] [--notebook NAME]
"""
from __future__ import annotations

import argparse
import time

import torch

from imbalanced_cl.book.build.profiles import params


def main() -> int:
    """Profile train() at a notebook's paper size and print the top operators."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--notebook", default="04_pruning_gains")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("gpu_profile: no CUDA device here; skipped")
        return 0
    from torch.profiler import ProfilerActivity, profile

    import paper_projection as PP    # this folder's sibling: the notebooks' sizes
    from imbalanced_cl.sim.train import train
    cfg = PP.CONFIGS[args.notebook](**{k: tuple(v) if isinstance(v, list) else v
                                       for k, v in params("paper", args.notebook).items()})
    size = PP.largest(args.notebook, cfg).replace(t1_max=1, progress=False, device="cuda", steps=args.steps)
    train(size.replace(steps=2))
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        t = time.perf_counter()
        train(size)
        torch.cuda.synchronize()
        wall = time.perf_counter() - t
    events = prof.key_averages()
    busy = sum(e.self_device_time_total for e in events) / 1e6
    print(f"{args.notebook} at paper size (R {size.R}, K {size.n_pairs}, d1 {size.d1}, m {size.m}), {args.steps} "
          f"steps: wall {wall:.3f} s, device busy {busy:.3f} s ({busy / wall:.0%})")
    print(events.table(sort_by="self_cuda_time_total", row_limit=15, max_name_column_width=40))
    print(events.table(sort_by="self_cpu_time_total", row_limit=12, max_name_column_width=40))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
